"""Harness logs cut in half or with a flipped byte (issue 20): each reader raises an error that
names the file, or (a flip in bytes the reader never uses) returns exactly the undamaged
table; never a different table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import evaluq as eq
from evaluq.errors import CubeError

DATA = Path(__file__).resolve().parents[1] / "data" / "lm_eval" / "logs"
FRACTIONS = (0.1, 0.35, 0.5, 0.75, 0.95)


def _flip(path: Path, fraction: float) -> None:
    data = bytearray(path.read_bytes())
    data[min(len(data) - 1, int(len(data) * fraction))] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _damage(path: Path, damage: str | float) -> None:
    _truncate(path) if damage == "truncate" else _flip(path, float(damage))


def _read_or_error(read, path: Path, named: Path | None = None) -> pd.DataFrame | None:
    """The table, or None after checking that the error names ``named`` (default ``path``)."""
    error: Exception | None = None
    try:
        return read(path)
    except (CubeError, ValueError, OSError) as err:
        error = err
    assert (named or path).name in str(error), f"{type(error).__name__}: {error}"
    return None


@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_a_damaged_inspect_log_is_refused_naming_it(inspect_logs, tmp_path, fmt, damage):
    source = sorted(inspect_logs[fmt].glob(f"*.{fmt}"))[0]
    intact = eq.read_inspect_logs(source)
    path = tmp_path / source.name
    shutil.copy(source, path)
    _damage(path, damage)
    table = _read_or_error(eq.read_inspect_logs, path)
    if table is not None:
        assert damage != "truncate"
        pd.testing.assert_frame_equal(table, intact)


@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
@pytest.mark.parametrize("which", ["samples", "results"])
def test_a_damaged_lm_eval_log_is_refused_naming_it(tmp_path, which, damage):
    folder = tmp_path / "dummy-a"
    shutil.copytree(DATA / "dummy-a", folder)
    intact = eq.read_lm_eval_samples(DATA / "dummy-a")
    path = sorted(folder.glob(f"{which}_*"))[0]
    _damage(path, damage)
    table = _read_or_error(eq.read_lm_eval_samples, folder, named=path)
    if table is None:
        return
    assert damage != "truncate"
    pd.testing.assert_frame_equal(table, intact, check_like=True)

"""Table readers: every format, user column names, clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq import CubeError


def table() -> pd.DataFrame:
    return pd.DataFrame({
        "sys": ["a", "b", "a", "b"], "task": ["qa", "qa", "mt", "mt"], "run": [0, 0, 0, 0],
        "f1": [0.5, 0.6, 0.7, 0.65],
    })


WRITERS = {
    "csv": lambda df, p: df.to_csv(p, index=False),
    "tsv": lambda df, p: df.to_csv(p, sep="\t", index=False),
    "jsonl": lambda df, p: df.to_json(p, orient="records", lines=True),
    "parquet": lambda df, p: df.to_parquet(p, index=False),
}


@pytest.mark.parametrize("suffix", sorted(WRITERS))
def test_each_format_builds_the_same_cube(tmp_path, suffix):
    path = tmp_path / f"scores.{suffix}"
    WRITERS[suffix](table(), path)
    pd.testing.assert_frame_equal(eq.read_table(path), table(), check_dtype=False)
    from_file = eq.from_long(path, model="sys", language="task", seed="run", score="f1")
    from_frame = eq.from_long(table(), model="sys", language="task", seed="run", score="f1")
    assert from_file.attrs["source"] == str(path)
    xr.testing.assert_equal(from_file, from_frame)


def test_summary_from_file(tmp_path):
    path = tmp_path / "summary.csv"
    pd.DataFrame({"m": ["a"], "l": ["en"], "mu": [1.0], "ss": [0.1], "sb": [0.2]}).to_csv(
        path, index=False)
    cube = eq.from_summary(path, model="m", language="l", mean="mu", sd_seed="ss",
                           sd_boot="sb", n_seeds=3)
    assert cube.sd_boot.item() == 0.2


def test_reader_errors(tmp_path):
    with pytest.raises(CubeError, match="unknown suffix '.xlsx'"):
        eq.read_table(tmp_path / "scores.xlsx")
    with pytest.raises(FileNotFoundError, match="no such file"):
        eq.read_table(tmp_path / "missing.csv")


def test_read_table_reads_a_semicolon_csv_with_decimal_commas(tmp_path):
    """A spreadsheet export in a decimal-comma locale (';' between fields, '0,71' numbers)
    reads as the same table as its ',' / '.' twin; a ';' file with decimal points too."""
    from evaluq.io import read_table

    df = pd.DataFrame({"model": ["a", "a", "b"], "lang": ["en", "de", "en"],
                       "seed": [0, 1, 0], "acc": [0.71, 0.6543210987654321, np.nan]})
    plain, semi, points = tmp_path / "p.csv", tmp_path / "s.csv", tmp_path / "t.csv"
    df.to_csv(plain, index=False)
    df.to_csv(semi, sep=";", decimal=",", index=False)
    df.to_csv(points, sep=";", index=False)
    assert "0,71" in semi.read_text()
    want = read_table(plain)
    for path in (semi, points):
        got = read_table(path)
        pd.testing.assert_frame_equal(got, want)

"""Real Inspect logs for the harness tests, made once per session by inspect_ai offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from .inspect_task import run_inspect


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders of real Inspect logs of the three mock models, one per format."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed "
                        "(pip install 'evaluq[inspect]')")
    out = {}
    for fmt in ("eval", "json"):
        folder = tmp_path_factory.mktemp(f"inspect_{fmt}")
        run_inspect(folder, log_format=fmt)
        out[fmt] = folder
    return out

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


@pytest.fixture(scope="session")
def judged_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real Inspect logs of the judged task: a lenient LLM-judge scorer on every sample and a
    human scorer on every third (``inspect_task.make_judged_task``)."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is not installed "
                        "(pip install 'evaluq[inspect]')")
    from .inspect_task import make_judged_task

    folder = tmp_path_factory.mktemp("inspect_judged")
    run_inspect(folder, task=make_judged_task())
    return folder

"""Execute the notebooks in ``notebooks/`` in place (their outputs are committed).

Each notebook is a jupytext pair: ``notebooks/NN_name.py`` (percent format, the source to
edit and review) and ``notebooks/NN_name.ipynb`` (the same cells with their outputs). This
script copies the cells of the ``.py`` into the ``.ipynb`` (``jupytext --sync``), executes the
notebook and writes it with its outputs.

Usage::

    python scripts/run_notebooks.py [NOTEBOOK ...]   # .py or .ipynb paths; default: all

The test suite checks that every pair is in sync and executes the notebooks without writing
(``tests/test_notebooks.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def sync(path: Path) -> nbformat.NotebookNode:
    """The notebook with the cells of its ``.py`` source and the outputs of its ``.ipynb``."""
    source = jupytext.read(path.with_suffix(".py"))
    stored = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    return jupytext.combine.combine_inputs_with_outputs(source, stored, fmt="py:percent")


def execute(path: Path, *, write: bool = True, timeout: int = 600) -> nbformat.NotebookNode:
    nb = sync(path)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    if write:
        nbformat.write(nb, path.with_suffix(".ipynb"))
    return nb


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        start = time.perf_counter()
        execute(path)
        print(f"executed {path.with_suffix('.ipynb')} in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Execute the notebooks in ``notebooks/`` in place (their outputs are committed).

Usage::

    python scripts/run_notebooks.py [NOTEBOOK ...]

The test suite executes them too (``tests/test_notebooks.py``) without writing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def execute(path: Path, *, write: bool = True, timeout: int = 600) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    if write:
        nbformat.write(nb, path)
    return nb


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        print("executing", path)
        execute(path)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Shared by the notebook generators: write a notebook from (kind, source) cells."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def write_notebook(cells: list[tuple[str, str]], name: str) -> Path:
    """Write ``notebooks/<name>`` from ``("md" | "code", source)`` cells (unexecuted)."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src)
                for kind, src in cells]
    path = NOTEBOOKS / name
    nbformat.write(nb, path)
    print("wrote", path, "(now run scripts/run_notebooks.py on it)")
    return path

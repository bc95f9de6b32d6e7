"""The notebooks: each is a jupytext pair (``notebooks/NN.py`` in percent format, the source,
and ``notebooks/NN.ipynb`` with the outputs); the pairs are in sync and every notebook executes
without error (outputs are not compared). ``scripts/run_notebooks.py`` syncs and re-executes."""

from __future__ import annotations

import os
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
SOURCES = sorted(NOTEBOOK_DIR.glob("*.py"))


def _cells(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def test_every_notebook_has_its_percent_source_and_vice_versa():
    assert NOTEBOOKS
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in SOURCES]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_pair_is_in_sync(path):
    source = jupytext.read(path.with_suffix(".py"))
    stored = nbformat.read(path, as_version=4)
    assert stored.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert _cells(source) == _cells(stored), (
        f"{path.name} differs from {path.with_suffix('.py').name}: run "
        f"`python scripts/run_notebooks.py {path.with_suffix('.py')}`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, monkeypatch):
    src = str(Path(__file__).resolve().parents[1] / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("PYTHONWARNINGS", "ignore::DeprecationWarning")
    nb = jupytext.read(path.with_suffix(".py"))  # the source: what the pair will hold
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_figures_are_images(path):
    # a matplotlib Figure built without pyplot (eq.plots) shows as "<Figure size ...>" text
    # unless the inline backend is active (`%matplotlib inline`): the stored outputs must
    # hold the image
    stored = nbformat.read(path, as_version=4)
    bare = [i for i, c in enumerate(stored.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) if "data" in o
            and str(o["data"].get("text/plain", "")).startswith("<Figure size")
            and "image/png" not in o["data"]]
    assert not bare, f"{path.name}: cells {bare} show a figure as text, not as an image"

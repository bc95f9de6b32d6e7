"""Sphinx configuration of the evaluq documentation site."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from evaluq import __version__  # noqa: E402

project = "evaluq"
author = "evaluq developers"
release = version = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",
]
autosummary_generate = True
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True
nb_execution_mode = "off"          # notebooks are executed by the test suite and committed
myst_enable_extensions = ["dollarmath", "colon_fence"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "pydata_sphinx_theme"
html_title = f"evaluq {version}"
suppress_warnings = ["myst.header", "config.cache", "ref.footnote",
                     "ref.python"]  # a word such as "shape" in a type is a member of two classes


def _write_model_card_pages() -> None:
    """One page per card in models/ (generated at build time, so no card is ever left out)."""
    root = Path(__file__).resolve().parent
    out = root / "model_cards"
    out.mkdir(exist_ok=True)
    for card in sorted((root.parent / "models").glob("*.md")):
        if card.name != "README.md":
            (out / card.name).write_text(f"```{{include}} ../../models/{card.name}\n```\n")


_write_model_card_pages()


def _write_plot_gallery() -> None:
    """The plot gallery's figures, drawn by the current evaluq.plots (scripts/plot_gallery.py)."""
    root = Path(__file__).resolve().parent
    sys.path.insert(0, str(root.parent / "scripts"))
    from plot_gallery import write_gallery

    write_gallery(root / "guides" / "gallery")


_write_plot_gallery()

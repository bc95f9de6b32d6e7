"""evaluq: uncertainty quantification for model evaluation.

Which differences between ML/NLP models are real? evaluq keeps results in an xarray
*evaluation cube* (model x language x seed x bootstrap) and answers with variance components,
resampling, pairwise differences, rank distributions, significance tests and closed forms.

``import evaluq`` is cheap: the public names below are loaded on first use (PEP 562), so a
session pays only for the modules it touches and heavy dependencies (pymc, pytensor, arviz,
matplotlib, dask) are imported only by the functions that need them. ``from evaluq import x``,
``dir(evaluq)`` and ``__all__`` behave as if everything were imported eagerly.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from evaluq._moved import MOVED as _MOVED
from evaluq._moved import install as _install_moved
from evaluq._version import __version__ as __version__

_install_moved()  # old module paths (evaluq.demsar, ...) import with a DeprecationWarning

_HERE = Path(__file__).resolve().parent


def _public_names() -> tuple[dict[str, str], frozenset[str]]:
    """Name -> defining module, and the names not star-exported, read from ``__init__.pyi``
    (the one list of public names, which type checkers read too): ``from M import n as n``
    is public, a plain ``from M import n`` only reachable. A name equal to the last part of
    its module is that (sub)module itself (``from evaluq import dirichlet as dirichlet``)."""
    import ast

    lazy: dict[str, str] = {}
    hidden = set()
    stub = ast.parse((_HERE / "__init__.pyi").read_text(encoding="utf-8"))
    for node in stub.body:
        if not isinstance(node, ast.ImportFrom) or node.module == "evaluq._version":
            continue
        for alias in node.names:
            module = f"evaluq.{alias.name}" if node.module == "evaluq" else str(node.module)
            lazy[alias.name] = module
            if alias.asname is None:
                hidden.add(alias.name)
    return lazy, frozenset(hidden)


_LAZY, _NOT_IN_ALL = _public_names()
_DEPRECATED = frozenset({"ResamplePlan"})
"""Importable with a DeprecationWarning on every access (never cached), not in ``__all__``:
``ResamplePlan`` (``resample(lazy=True)`` returns a lazy Dataset)."""


def _available(name: str) -> bool:
    """Whether the module behind ``name`` exists (entries for modules added later), looked up
    on disk: importing a subpackage to ask would defeat the lazy loading. A moved module's old
    path (``experiment``) is available through ``_moved``."""
    if _LAZY[name] in _MOVED:
        return True
    parts = _LAZY[name].split(".")[1:]
    base = _HERE.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


__all__ = sorted(
    ["__version__", *(name for name in _LAZY if name not in _NOT_IN_ALL and _available(name))]
)


def _load(name: str) -> Any:
    module_name = _LAZY[name]
    module = importlib.import_module(module_name)
    if module_name.rpartition(".")[2] == name:
        return module
    return getattr(module, name)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'evaluq' has no attribute {name!r}")
    value = _load(name)
    if name not in _DEPRECATED:
        globals()[name] = value  # cache: later look-ups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | {name for name in _LAZY if _available(name)})

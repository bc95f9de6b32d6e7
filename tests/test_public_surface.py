"""The public surface is meant (issue 35 item 1): every public name is documented or private.

The public API is enumerated the way users meet it: every name in ``evaluq.__all__``; every
public module (the modules and sub-packages ``evaluq/__init__.pyi`` imports, and their
submodules without a leading underscore), its ``__all__`` and the module-level functions and
classes it defines without a leading underscore. Each must be documented in the API
reference, ``docs/api.rst``, as the Sphinx build documents it (``docs/conf.py``):

* an autosummary entry (resolved against the ``.. currentmodule::`` above it);
* a module listed in an autosummary block with ``:recursive:`` (the "Modules" section). Its
  generated page is autosummary's default module template: an ``.. automodule::`` with
  ``autodoc_default_options = {"members": True}``, which documents the module's ``__all__``
  (imported names too) or, without ``__all__``, its own public members; and autosummary
  tables of the functions and classes the module defines whose name has no leading
  underscore (``autosummary_ignore_module_all`` is left at its default, True: a function
  defined in the module is listed even when ``__all__`` leaves it out). A package recurses
  into its submodules whose name has no leading underscore.

A name is documented when it, or the same object under another documented name, is. A helper
that users should not call is private: a leading underscore, or a private module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import evaluq as eq
from evaluq._moved import MOVED

ROOT = Path(__file__).resolve().parents[1]
API_RST = ROOT / "docs" / "api.rst"
STUB = ROOT / "src" / "evaluq" / "__init__.pyi"

# Public names that are deliberately neither documented nor private, each with its reason.
# An entry whose name becomes documented fails test_allow_list_is_public_and_needed: remove it.
ALLOWED: dict[str, str] = {
    "evaluq.__version__": "the package version (a Python convention, not an API entry; the "
                          "docs show it in their title)",
}


def _resolve(dotted: str) -> Any:
    """The object at ``dotted`` (a module path, then attributes)."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(dotted)


def _autosummary_entries() -> tuple[list[str], list[str]]:
    """``docs/api.rst``'s autosummary entries as dotted names: (entries, recursive modules)."""
    entries: list[str] = []
    recursive: list[str] = []
    current = "evaluq"
    in_block = is_recursive = False
    for line in API_RST.read_text().splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            current, in_block = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_block, is_recursive = True, False
        elif in_block and re.match(r"\s+:recursive:", line):
            is_recursive = True
        elif in_block and re.match(r"\s+:\w+:", line):
            continue
        elif in_block and (m := re.match(r"\s+([\w.]+)\s*$", line)):
            name = f"{current}.{m.group(1)}"
            (recursive if is_recursive else entries).append(name)
        elif in_block and line.strip() and not line.startswith(" "):
            in_block = False
    return entries, recursive


def _defined_here(module: ModuleType) -> dict[str, Any]:
    """The functions and classes ``module`` defines whose name has no leading underscore."""
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and getattr(obj, "__module__", None) == module.__name__}


def _public_submodules(module: ModuleType) -> list[ModuleType]:
    """A package's submodules without a leading underscore (all the way down)."""
    if not hasattr(module, "__path__"):
        return []
    found = []
    for info in pkgutil.iter_modules(module.__path__):
        if not info.name.startswith("_"):
            sub = importlib.import_module(f"{module.__name__}.{info.name}")
            found += [sub, *_public_submodules(sub)]
    return found


def _module_documents(module: ModuleType) -> dict[str, Any]:
    """What the generated page of ``module`` documents (the module docstring above)."""
    names: dict[str, Any] = {module.__name__: module}
    members = getattr(module, "__all__", None)
    if members is None:
        members = list(_defined_here(module))
    names |= {f"{module.__name__}.{n}": getattr(module, n) for n in members}
    names |= {f"{module.__name__}.{n}": obj for n, obj in _defined_here(module).items()}
    return names


def documented() -> tuple[set[str], set[int]]:
    """The documented dotted names and the ids of the documented objects."""
    entries, recursive = _autosummary_entries()
    names = {name: _resolve(name) for name in entries}
    for name in recursive:
        module = _resolve(name)
        for mod in [module, *_public_submodules(module)]:
            names |= _module_documents(mod)
    return set(names), {id(obj) for obj in names.values()}


# Public modules the stub does not import: users import them by their path.
EXTRA_MODULES: dict[str, str] = {
    "evaluq.demo": "the quickstart and README import `from evaluq.demo import demo_cube`",
}


def public_modules() -> list[ModuleType]:
    """The modules and sub-packages the stub imports, and those it imports public names from
    (``evaluq.item_model``, ``evaluq.item_stats``, ...), without a leading underscore in their
    path, and ``EXTRA_MODULES`` (moved paths excluded), recursively."""
    tree = ast.parse(STUB.read_text())
    roots: list[ModuleType] = [importlib.import_module(name) for name in EXTRA_MODULES]
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        parts = node.module.split(".")
        if (parts[0] == "evaluq" and len(parts) > 1 and node.module not in MOVED
                and not any(part.startswith("_") for part in parts)):
            roots.append(importlib.import_module(node.module))
        for alias in node.names:
            dotted = f"{node.module}.{alias.name}"
            if dotted in MOVED or not dotted.startswith("evaluq."):
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    obj = _resolve(dotted)
                except DeprecationWarning:      # a deprecated name (ResamplePlan), no module
                    continue
            if isinstance(obj, ModuleType):
                roots.append(obj)
    seen: dict[str, ModuleType] = {}
    for root in roots:
        for mod in [root, *_public_submodules(root)]:
            seen.setdefault(mod.__name__, mod)
    return list(seen.values())


def public_surface() -> dict[str, Any]:
    """Every public dotted name (see the module docstring) and its object."""
    surface = {f"evaluq.{n}": getattr(eq, n) for n in eq.__all__}
    for module in public_modules():
        surface[module.__name__] = module
        surface |= {f"{module.__name__}.{n}": getattr(module, n)
                    for n in getattr(module, "__all__", [])}
        surface |= {f"{module.__name__}.{n}": obj for n, obj in _defined_here(module).items()}
    return surface


def undocumented() -> list[str]:
    """Public names neither documented nor allowed. A module is a namespace, not an entry of
    the reference: its names are checked one by one instead."""
    names, ids = documented()
    return sorted(name for name, obj in public_surface().items()
                  if name not in names and id(obj) not in ids and name not in ALLOWED
                  and not isinstance(obj, ModuleType))


def test_every_public_name_is_documented_or_private():
    missing = undocumented()
    assert not missing, ("public names neither in docs/api.rst nor private (add them to the "
                         f"API reference, or give them a leading underscore): {missing}")


def test_the_enumeration_sees_the_surface():
    surface = public_surface()
    names, _ = documented()
    assert "evaluq.field.rliable.interval_estimates" in surface
    assert "evaluq.reporting.sections" in surface
    assert "evaluq.report" in names
    assert "evaluq.power.mde_grid" in names
    assert "evaluq.plots.forest_plot" in names
    modules = {module.__name__ for module in public_modules()}
    assert {"evaluq.demo", "evaluq.item_model", "evaluq.item_stats", "evaluq.items"} <= modules
    assert "evaluq.item_model.simulate_ratings" in surface
    assert "evaluq.demo.demo_cube" in surface


def test_allow_list_is_public_and_needed():
    surface = public_surface()
    names, ids = documented()
    for name, reason in ALLOWED.items():
        assert name in surface, name
        assert reason, name
        assert name not in names, f"{name} is documented"
        assert id(surface[name]) not in ids, f"{name} is documented"


# the helpers issue 35 found public only because a module exported them
HELPERS = (
    "evaluq.field.rliable.run_counts", "evaluq.field.rliable.point_aggregates",
    "evaluq.field.rliable.improvement_matrix", "evaluq.field.rliable.stratified_distribution",
    "evaluq.field.rliable.field_aggregate", "evaluq.field.stochastic_order.bonferroni_level",
    "evaluq.field.bayescomp.signed_rank_samples",
    "evaluq.small_samples.paired_bayes.paired_probit_probability",
    "evaluq.small_samples.paired_probit_probability", "evaluq.resampling.block_size",
    "evaluq.resampling.default_seed_mode", "evaluq.hierarchical.PRIOR_KEYS",
    "evaluq.reporting.sections.data_summary", "evaluq.reporting.sections.tiers_section",
)


def test_the_helpers_are_not_public():
    surface = public_surface()
    assert not [name for name in HELPERS if name in surface]


def test_old_spellings_still_import():
    from evaluq.field.rliable import field_aggregate  # evaluq.aggregation's import
    from evaluq.reporting import sections

    assert callable(field_aggregate)
    with pytest.warns(DeprecationWarning, match="_data_summary"):
        assert sections.data_summary is sections._data_summary  # old spelling, one release
    assert "data_summary" not in dir(sections)
    with pytest.warns(DeprecationWarning, match="private helper"):
        from evaluq.resampling import block_size
    assert block_size(3, 4) == 1000
    with pytest.warns(DeprecationWarning, match="bayes_paired_comparison"):
        assert callable(eq.small_samples.paired_probit_probability)

"""Conventions of the public API checked on every public function and method.

**rng** (ARCHITECTURE.md, Conventions): analyses default ``rng=None`` (fresh entropy, scipy's
convention); functions that build a stored artefact (cube constructors with bootstrap
replicates, model fits, the report, the demo) default ``rng=0`` and record it. The public API
is walked (``evaluq.__all__``, every public submodule's ``__all__``, classes' public methods,
inherited ones included), so a new function is checked without being listed here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from collections.abc import Iterator
from typing import Any

import evaluq as eq

# functions that build a stored artefact: default rng=0 (the rule's second half)
ARTEFACTS = {
    "from_items", "from_predictions",          # cube constructors with bootstrap replicates
    "fit_hierarchical", "fit_items", "fit_ratings",  # model fits
    "fit_ratings_bayes", "fit_judge_model", "fit_judged_ratings",
    "report", "analyse",                        # the report (``analyse`` is its first step)
    "demo_cube", "run_demo",                    # the demo
}

# A fitted model is a stored artefact, and so is what it answers: the methods of every
# ``_fits.PosteriorFit`` subclass default rng=0 as the fit does (``compare_frequentist``,
# ``predictive_checks``), so a fit saved, loaded and asked again answers the same. Found by
# walking the classes, not listed.

# public modules without ``__all__`` whose functions the rule names (the demo)
EXTRA_MODULES = ("evaluq.demo",)


def _public_modules() -> Iterator[Any]:
    yield eq
    for info in pkgutil.walk_packages(eq.__path__, "evaluq."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        with warnings.catch_warnings():     # an old module path may warn on import
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(info.name)
        if hasattr(module, "__all__") or info.name in EXTRA_MODULES:
            yield module


def _names(module: Any) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [n for n, o in vars(module).items() if not n.startswith("_")
            and inspect.isfunction(o) and o.__module__ == module.__name__]


def public_callables() -> dict[str, Any]:
    """``Qualified.name`` -> function, for every public function and public method."""
    found: dict[str, Any] = {}
    for module in _public_modules():
        for name in _names(module):
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                found.setdefault(name, obj)
            elif inspect.isclass(obj) and not issubclass(obj, BaseException):
                for attr in dir(obj):
                    member = inspect.getattr_static(obj, attr)
                    func = getattr(member, "__func__", member)
                    if not attr.startswith("_") and inspect.isfunction(func):
                        found.setdefault(f"{name}.{attr}", func)
    return found


def _fit_methods() -> set[str]:
    """``Class.method`` names of the public methods of fitted models."""
    from evaluq._fits import PosteriorFit

    return {name for name, func in public_callables().items() if "." in name
            and issubclass(getattr(eq, name.split(".")[0], object), PosteriorFit)}


def _rng_defaults() -> dict[str, Any]:
    out = {}
    for name, func in public_callables().items():
        params = inspect.signature(func).parameters
        if "rng" in params:
            out[name] = params["rng"].default
    return out


def test_the_walk_finds_both_kinds():
    defaults = _rng_defaults()
    assert {"resample", "bootstrap_test", "aso", "fit_hierarchical", "from_items",
            "report", "run_demo"} <= set(defaults)


def test_rng_defaults_follow_the_rule():
    broken = []
    artefacts = ARTEFACTS | _fit_methods()
    for name, default in sorted(_rng_defaults().items()):
        if name in artefacts:
            ok = default == 0 and not isinstance(default, bool)
        else:
            ok = default is None
        if not ok:
            want = "0 (builds a stored artefact)" if name in artefacts else "None (an analysis)"
            broken.append(f"{name}: rng={default!r}, should default to {want}")
    assert not broken, "\n".join(broken)


def test_the_lists_name_public_functions():
    defaults = _rng_defaults()
    assert set(defaults) >= ARTEFACTS
    assert {"HierarchicalFit.compare_frequentist", "ItemFit.predictive_checks"} <= (
        _fit_methods() & set(defaults))

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
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluq._version import __version__ as __version__

_HERE = Path(__file__).resolve().parent

# Public name -> module that defines it. A name equal to the last part of its module is that
# (sub)module itself; any other name is an attribute of the module. One line per new export.
_LAZY: dict[str, str] = {
    # submodules and subpackages
    "agreement": "evaluq.agreement",
    "dirichlet": "evaluq.dirichlet",
    "experiment": "evaluq.experiment",
    "hierarchical": "evaluq.hierarchical",
    "intervals": "evaluq.intervals",
    "measurement_error": "evaluq.measurement_error",
    "metrics": "evaluq.metrics",
    "plots": "evaluq.plots",
    "power": "evaluq.power",
    "reporting": "evaluq.reporting",
    "significance": "evaluq.significance",
    "tables": "evaluq.tables",
    # submodules that were loaded (so reachable as attributes) before the lazy loading
    "cube": "evaluq.cube",
    "errors": "evaluq.errors",
    "io": "evaluq.io",
    "pairwise": "evaluq.pairwise",
    "predictions": "evaluq.predictions",
    "ranks": "evaluq.ranks",
    "resampling": "evaluq.resampling",
    "simulate": "evaluq.simulate",
    "variance": "evaluq.variance",
    # functions and classes
    "BootstrapTestResult": "evaluq.significance",
    "CubeError": "evaluq.errors",
    "EvaluqWarning": "evaluq.errors",
    "Experiment": "evaluq.significance.experiment",
    "ExperimentResult": "evaluq.significance.experiment",
    "HierarchicalFit": "evaluq.hierarchical",
    "NotFittedError": "evaluq.errors",
    "ResamplePlan": "evaluq.resampling",
    "ScaleWarning": "evaluq.errors",
    "aggregate": "evaluq.aggregate",
    "bootstrap_test": "evaluq.significance",
    "fit_hierarchical": "evaluq.hierarchical",
    "from_arrays": "evaluq.cube",
    "from_items": "evaluq.items",
    "item_scores": "evaluq.items",
    "item_means": "evaluq.item_stats",
    "fit_items": "evaluq.item_model",
    "ItemFit": "evaluq.item_model",
    "load_item_fit": "evaluq.item_model",
    "simulate_items": "evaluq.item_model",
    "compare_fits": "evaluq.item_model",
    "from_long": "evaluq.cube",
    "from_predictions": "evaluq.predictions",
    "from_summary": "evaluq.cube",
    "higher_is_better": "evaluq.cube",
    "is_summary": "evaluq.cube",
    "leaderboard": "evaluq.ranks",
    "load_fit": "evaluq.hierarchical",
    "open_cube": "evaluq.cube",
    "pairwise_by_language": "evaluq.pairwise",
    "pairwise_differences": "evaluq.pairwise",
    "pairwise_table": "evaluq.pairwise",
    "rank_distribution": "evaluq.ranks",
    "read_table": "evaluq.io",
    "report": "evaluq.reporting",
    "resample": "evaluq.resampling",
    "significance_groups": "evaluq.ranks",
    "simulate_cube": "evaluq.simulate",
    "validate": "evaluq.cube",
    "variance_components": "evaluq.variance",
    "variance_table": "evaluq.variance",
}

# Submodules reachable as attributes but not star-exported (as before the lazy loading).
_NOT_IN_ALL = frozenset({"cube", "errors", "experiment", "io", "pairwise", "predictions",
                         "ranks", "resampling", "significance", "simulate", "variance",
                         "ResamplePlan"})
_DEPRECATED = frozenset({"ResamplePlan"})
"""Importable with a DeprecationWarning on every access (never cached), not in ``__all__``:
``ResamplePlan`` (``resample(lazy=True)`` returns a lazy Dataset)."""


# Functions whose module has the same name: ``evaluq.aggregate`` is the function.
_SAME_NAME_FUNCTIONS = frozenset({"aggregate", "report"})


def _available(name: str) -> bool:
    """Whether the module behind ``name`` exists (entries for modules added later), looked up
    on disk: importing a subpackage to ask would defeat the lazy loading."""
    parts = _LAZY[name].split(".")[1:]
    base = _HERE.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


__all__ = sorted(
    ["__version__", *(name for name in _LAZY if name not in _NOT_IN_ALL and _available(name))]
)


def _load(name: str) -> Any:
    module_name = _LAZY[name]
    module = importlib.import_module(module_name)
    if module_name.rpartition(".")[2] == name and name not in _SAME_NAME_FUNCTIONS:
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


class _EvaluqModule(types.ModuleType):
    """Keeps ``evaluq.aggregate`` (and ``evaluq.report``) the function of that name.

    Importing a submodule makes the import system set it as an attribute of the package;
    for a submodule that shares its name with the function it exports, that would replace the
    function by the module, depending on which import ran first.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            name in _SAME_NAME_FUNCTIONS
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{__name__}.{name}"
        ):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _EvaluqModule

if TYPE_CHECKING:  # the static view of the lazy names (`as` marks them re-exported)
    from evaluq import agreement as agreement
    from evaluq import dirichlet as dirichlet
    from evaluq import experiment as experiment
    from evaluq import hierarchical as hierarchical
    from evaluq import intervals as intervals
    from evaluq import measurement_error as measurement_error
    from evaluq import metrics as metrics
    from evaluq import plots as plots
    from evaluq import power as power
    from evaluq import reporting as reporting
    from evaluq import significance as significance
    from evaluq import tables as tables
    from evaluq.aggregate import aggregate as aggregate
    from evaluq.cube import from_arrays as from_arrays
    from evaluq.cube import from_long as from_long
    from evaluq.cube import from_summary as from_summary
    from evaluq.cube import higher_is_better as higher_is_better
    from evaluq.cube import is_summary as is_summary
    from evaluq.cube import open_cube as open_cube
    from evaluq.cube import validate as validate
    from evaluq.errors import CubeError as CubeError
    from evaluq.errors import EvaluqWarning as EvaluqWarning
    from evaluq.errors import NotFittedError as NotFittedError
    from evaluq.errors import ScaleWarning as ScaleWarning
    from evaluq.hierarchical import HierarchicalFit as HierarchicalFit
    from evaluq.hierarchical import fit_hierarchical as fit_hierarchical
    from evaluq.hierarchical import load_fit as load_fit
    from evaluq.io import read_table as read_table
    from evaluq.item_model import ItemFit as ItemFit
    from evaluq.item_model import compare_fits as compare_fits
    from evaluq.item_model import fit_items as fit_items
    from evaluq.item_model import load_item_fit as load_item_fit
    from evaluq.item_model import simulate_items as simulate_items
    from evaluq.item_stats import item_means as item_means
    from evaluq.items import from_items as from_items
    from evaluq.items import item_scores as item_scores
    from evaluq.pairwise import pairwise_by_language as pairwise_by_language
    from evaluq.pairwise import pairwise_differences as pairwise_differences
    from evaluq.pairwise import pairwise_table as pairwise_table
    from evaluq.predictions import from_predictions as from_predictions
    from evaluq.ranks import leaderboard as leaderboard
    from evaluq.ranks import rank_distribution as rank_distribution
    from evaluq.ranks import significance_groups as significance_groups
    from evaluq.reporting import report as report
    from evaluq.resampling import resample as resample
    from evaluq.significance import BootstrapTestResult as BootstrapTestResult
    from evaluq.significance import bootstrap_test as bootstrap_test
    from evaluq.significance.experiment import Experiment as Experiment
    from evaluq.significance.experiment import ExperimentResult as ExperimentResult
    from evaluq.simulate import simulate_cube as simulate_cube
    from evaluq.variance import variance_components as variance_components
    from evaluq.variance import variance_table as variance_table

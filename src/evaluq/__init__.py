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
from typing import TYPE_CHECKING, Any

from evaluq._version import __version__ as __version__

_HERE = Path(__file__).resolve().parent

# Public name -> module that defines it. A name equal to the last part of its module is that
# (sub)module itself; any other name is an attribute of the module (so no module is named after
# a function it exports: ``aggregate`` lives in ``aggregation``). One line per new export.
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
    "MissingDataWarning": "evaluq.errors",
    "ImplicitEpochWarning": "evaluq.errors",
    "aggregate": "evaluq.aggregation",
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
    "proportions": "evaluq.proportions",
    "proportion_interval": "evaluq.proportions",
    "mcnemar_test": "evaluq.proportions",
    "bayes_paired_comparison": "evaluq.paired_bayes",
    "design_effect": "evaluq.clusters",
    "pass_at_k": "evaluq.pass_k",
    "pass_hat_k": "evaluq.pass_k",
    "demsar": "evaluq.demsar",
    "friedman_test": "evaluq.demsar",
    "critical_difference": "evaluq.demsar",
    "FriedmanResult": "evaluq.demsar",
    "bayescomp": "evaluq.bayescomp",
    "bayesian_signed_rank": "evaluq.bayescomp",
    "correlated_t_test": "evaluq.bayescomp",
    "hierarchical_t_test": "evaluq.bayescomp",
    "BayesianComparison": "evaluq.bayescomp",
    "interval_estimates": "evaluq.rliable_methods",
    "performance_profile": "evaluq.rliable_methods",
    "probability_of_improvement": "evaluq.rliable_methods",
    "aso": "evaluq.almost_stochastic_order",
    "multi_aso": "evaluq.almost_stochastic_order",
    "ASOResult": "evaluq.almost_stochastic_order",
    "HarnessLogWarning": "evaluq.errors",
    "read_inspect_logs": "evaluq.io",
    "read_lm_eval_samples": "evaluq.io",
}

# Submodules reachable as attributes but not star-exported (as before the lazy loading).
_NOT_IN_ALL = frozenset({"cube", "errors", "experiment", "io", "pairwise", "predictions",
                         "ranks", "resampling", "significance", "simulate", "variance",
                         "ResamplePlan"})
_DEPRECATED = frozenset({"ResamplePlan"})
"""Importable with a DeprecationWarning on every access (never cached), not in ``__all__``:
``ResamplePlan`` (``resample(lazy=True)`` returns a lazy Dataset)."""


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


if TYPE_CHECKING:  # the static view of the lazy names (`as` marks them re-exported)
    from evaluq import agreement as agreement
    from evaluq import bayescomp as bayescomp
    from evaluq import demsar as demsar
    from evaluq import dirichlet as dirichlet
    from evaluq import experiment as experiment
    from evaluq import hierarchical as hierarchical
    from evaluq import intervals as intervals
    from evaluq import measurement_error as measurement_error
    from evaluq import metrics as metrics
    from evaluq import plots as plots
    from evaluq import power as power
    from evaluq import proportions as proportions
    from evaluq import reporting as reporting
    from evaluq import significance as significance
    from evaluq import tables as tables
    from evaluq.aggregation import aggregate as aggregate
    from evaluq.almost_stochastic_order import ASOResult as ASOResult
    from evaluq.almost_stochastic_order import aso as aso
    from evaluq.almost_stochastic_order import multi_aso as multi_aso
    from evaluq.bayescomp import BayesianComparison as BayesianComparison
    from evaluq.bayescomp import bayesian_signed_rank as bayesian_signed_rank
    from evaluq.bayescomp import correlated_t_test as correlated_t_test
    from evaluq.bayescomp import hierarchical_t_test as hierarchical_t_test
    from evaluq.clusters import design_effect as design_effect
    from evaluq.cube import from_arrays as from_arrays
    from evaluq.cube import from_long as from_long
    from evaluq.cube import from_summary as from_summary
    from evaluq.cube import higher_is_better as higher_is_better
    from evaluq.cube import is_summary as is_summary
    from evaluq.cube import open_cube as open_cube
    from evaluq.cube import validate as validate
    from evaluq.demsar import FriedmanResult as FriedmanResult
    from evaluq.demsar import critical_difference as critical_difference
    from evaluq.demsar import friedman_test as friedman_test
    from evaluq.errors import CubeError as CubeError
    from evaluq.errors import EvaluqWarning as EvaluqWarning
    from evaluq.errors import HarnessLogWarning as HarnessLogWarning
    from evaluq.errors import ImplicitEpochWarning as ImplicitEpochWarning
    from evaluq.errors import MissingDataWarning as MissingDataWarning
    from evaluq.errors import NotFittedError as NotFittedError
    from evaluq.errors import ScaleWarning as ScaleWarning
    from evaluq.hierarchical import HierarchicalFit as HierarchicalFit
    from evaluq.hierarchical import fit_hierarchical as fit_hierarchical
    from evaluq.hierarchical import load_fit as load_fit
    from evaluq.io import read_inspect_logs as read_inspect_logs
    from evaluq.io import read_lm_eval_samples as read_lm_eval_samples
    from evaluq.io import read_table as read_table
    from evaluq.item_model import ItemFit as ItemFit
    from evaluq.item_model import compare_fits as compare_fits
    from evaluq.item_model import fit_items as fit_items
    from evaluq.item_model import load_item_fit as load_item_fit
    from evaluq.item_model import simulate_items as simulate_items
    from evaluq.item_stats import item_means as item_means
    from evaluq.items import from_items as from_items
    from evaluq.items import item_scores as item_scores
    from evaluq.paired_bayes import bayes_paired_comparison as bayes_paired_comparison
    from evaluq.pairwise import pairwise_by_language as pairwise_by_language
    from evaluq.pairwise import pairwise_differences as pairwise_differences
    from evaluq.pairwise import pairwise_table as pairwise_table
    from evaluq.pass_k import pass_at_k as pass_at_k
    from evaluq.pass_k import pass_hat_k as pass_hat_k
    from evaluq.predictions import from_predictions as from_predictions
    from evaluq.proportions import mcnemar_test as mcnemar_test
    from evaluq.proportions import proportion_interval as proportion_interval
    from evaluq.ranks import leaderboard as leaderboard
    from evaluq.ranks import rank_distribution as rank_distribution
    from evaluq.ranks import significance_groups as significance_groups
    from evaluq.reporting import report as report
    from evaluq.resampling import resample as resample
    from evaluq.rliable_methods import interval_estimates as interval_estimates
    from evaluq.rliable_methods import performance_profile as performance_profile
    from evaluq.rliable_methods import probability_of_improvement as probability_of_improvement
    from evaluq.significance import BootstrapTestResult as BootstrapTestResult
    from evaluq.significance import bootstrap_test as bootstrap_test
    from evaluq.significance.experiment import Experiment as Experiment
    from evaluq.significance.experiment import ExperimentResult as ExperimentResult
    from evaluq.simulate import simulate_cube as simulate_cube
    from evaluq.variance import variance_components as variance_components
    from evaluq.variance import variance_table as variance_table

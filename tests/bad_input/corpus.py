"""The bad-input corpus: malformed calls to every public function, and what each must do.

Each :class:`Case` names the public object it exercises (``module.name``), builds the call
lazily and says what must happen: raise a ``ValueError`` / ``TypeError`` subclass whose message
matches ``match`` (naming the argument), or return finite numbers (``FINITE``), where any NaN
must be explained by a ``nan_reason`` attribute. ``tests/bad_input/test_corpus.py`` runs them
and fails when a public name has no case.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

import evaluq as eq
from evaluq import agreement, dirichlet, intervals, metrics, significance
from evaluq import measurement_error as me

FINITE = "finite"


@dataclass(frozen=True)
class Case:
    name: str                       # the public object, e.g. "evaluq.resample"
    label: str                      # what is malformed
    call: Callable[[], Any]
    match: str = FINITE             # regex on the message, or FINITE
    xfail: str | None = None        # a known bug outside this work (strict xfail)
    errors: tuple[type[BaseException], ...] = (ValueError, TypeError)
    hangs: bool = False             # an xfail that would run for ever: not run by pytest (the
                                    # census runs it with a time limit)


def cube(**kw: Any) -> xr.Dataset:
    return eq.simulate_cube(**{"n_models": 3, "n_languages": 4, "n_seeds": 3, "n_boot": 20,
                               "rng": 0, **kw})


def resampled(n: int = 200) -> xr.Dataset:
    return eq.resample(cube(), n_resamples=n, rng=0)


def agg() -> xr.Dataset:
    return eq.aggregate(resampled())


def _aggregate_warned(resamples: xr.Dataset) -> xr.Dataset:
    """``aggregate(skipna=True)`` of a model short of a language, which warns that the models
    are compared over different languages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = eq.aggregate(resamples, skipna=True)
    assert any(issubclass(w.category, eq.errors.MissingDataWarning) for w in caught)
    return out


def summary_df() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"], "mean": [1.0, 2.0],
                         "sd_seed": [0.1, 0.2], "sd_boot": [0.1, 0.2]})


Y = np.array([0, 1, 1, 0, 1, 0, 1, 1])
P = np.array([0, 1, 0, 0, 1, 1, 1, 1])
SOFT_T = np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]])
SOFT_P = np.array([[0.3, 0.7], [0.4, 0.6], [0.8, 0.2]])
COUNTS = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1]])
Q3 = np.array([[0.6, 0.3, 0.1], [0.1, 0.5, 0.4], [0.3, 0.3, 0.4]])
RATINGS = np.array([[1, 2, 3], [2, 2, 3], [3, 3, 3], [1, 1, 2], [2, 3, 3]], dtype=float)
NAN = float("nan")


def _cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    # --- cube ----------------------------------------------------------------------------------
    add(Case("evaluq.from_arrays", "bool scores", lambda: eq.from_arrays(np.ones((1, 1, 2), bool)),
             "`score`"))
    add(Case("evaluq.from_arrays", "wrong ndim", lambda: eq.from_arrays(np.ones((2, 3))),
             "`score` must have 3 dims"))
    add(Case("evaluq.from_arrays", "inf score", lambda: eq.from_arrays(np.full((1, 1, 2), np.inf)),
             "infinite"))
    add(Case("evaluq.from_arrays", "duplicated labels",
             lambda: eq.from_arrays(np.ones((2, 1, 2)), models=["a", "a"]), "duplicated"))
    add(Case("evaluq.from_arrays", "higher_is_better='no'",
             lambda: eq.from_arrays(np.ones((1, 1, 2)), higher_is_better="no"),
             "`higher_is_better`"))
    add(Case("evaluq.from_arrays", "empty", lambda: eq.from_arrays(np.ones((0, 1, 2))),
             "empty"))
    add(Case("evaluq.from_arrays", "extreme but valid",
             lambda: eq.variance_components(eq.from_arrays(np.array([[[1e300, -1e300]]])))))
    add(Case("evaluq.from_long", "not a table", lambda: eq.from_long(42), "`data`"))
    add(Case("evaluq.from_long", "missing column",
             lambda: eq.from_long(pd.DataFrame({"model": ["a"]})), "`language`"))
    add(Case("evaluq.from_long", "duplicated keys",
             lambda: eq.from_long(pd.DataFrame({"model": ["a", "a"], "language": ["x", "x"],
                                                "score": [1.0, 2.0]})), "more than once"))
    add(Case("evaluq.from_long", "object scores",
             lambda: eq.from_long(pd.DataFrame({"model": ["a"], "language": ["x"],
                                                "score": ["high"]})), "`score`"))
    add(Case("evaluq.from_long", "empty table",
             lambda: eq.from_long(pd.DataFrame({"model": [], "language": [], "score": []})),
             "empty"))
    add(Case("evaluq.from_summary", "no n_seeds", lambda: eq.from_summary(summary_df()),
             "`n_seeds`"))
    add(Case("evaluq.from_summary", "negative n_seeds",
             lambda: eq.from_summary(summary_df(), n_seeds=-2), "`n_seeds`"))
    add(Case("evaluq.from_summary", "negative sd",
             lambda: eq.from_summary(summary_df().assign(sd_seed=[-1.0, 0.1]), n_seeds=2),
             "`sd_seed`"))
    add(Case("evaluq.from_summary", "bounds violated",
             lambda: eq.from_summary(summary_df(), n_seeds=2, bounds=(0, 1.5)), "`bounds`"))
    add(Case("evaluq.validate", "not a dataset", lambda: eq.validate([1, 2]), "xarray.Dataset"))
    add(Case("evaluq.validate", "unknown dim",
             lambda: eq.validate(xr.Dataset({"score": (("model", "task"), np.ones((1, 2)))})),
             "unknown dim"))
    add(Case("evaluq.open_cube", "no file", lambda: eq.open_cube("/nonexistent/x.nc"),
             "no such file", errors=(FileNotFoundError,)))
    add(Case("evaluq.open_cube", "wrong type", lambda: eq.open_cube(3.5), "path|str|`path`"))
    add(Case("evaluq.read_table", "unknown suffix", lambda: eq.read_table("x.xlsx"), "suffix"))
    add(Case("evaluq.read_table", "wrong type", lambda: eq.read_table(None), "`path`"))
    add(Case("evaluq.higher_is_better", "not a cube", lambda: eq.higher_is_better("cube"),
             "`cube`"))
    add(Case("evaluq.higher_is_better", "bad attribute",
             lambda: eq.higher_is_better(xr.Dataset(attrs={"higher_is_better": "no"})),
             "higher_is_better"))
    add(Case("evaluq.is_summary", "not a cube", lambda: eq.is_summary([1]), "`cube`"))
    add(Case("evaluq.simulate_cube", "negative size", lambda: eq.simulate_cube(n_models=-1),
             "`n_models`"))
    add(Case("evaluq.simulate_cube", "NaN sigma", lambda: eq.simulate_cube(sigma_seed=NAN),
             "`sigma_seed`"))
    add(Case("evaluq.simulate_cube", "bool size", lambda: eq.simulate_cube(n_seeds=True),
             "`n_seeds`"))
    add(Case("evaluq.from_arrays", "boot_score wrong shape",
             lambda: eq.from_arrays(np.ones((1, 2, 2)), np.ones((1, 2, 3, 4))), "`boot_score`"))
    add(Case("evaluq.from_arrays", "one bootstrap replicate",
             lambda: eq.from_arrays(np.ones((1, 2, 2)), np.ones((1, 2, 2, 1))), "replicates"))
    add(Case("evaluq.from_arrays", "labels of the wrong length",
             lambda: eq.from_arrays(np.ones((2, 1, 2)), models=["a"]), "labels|shape"))
    add(Case("evaluq.from_arrays", "all NaN", lambda: eq.from_arrays(np.full((1, 1, 2), np.nan)),
             "no values"))
    add(Case("evaluq.from_long", "bool scores",
             lambda: eq.from_long(pd.DataFrame({"model": ["a"], "language": ["x"],
                                                "score": [True]})), "`score`"))
    add(Case("evaluq.from_long", "inf score",
             lambda: eq.from_long(pd.DataFrame({"model": ["a"], "language": ["x"],
                                                "score": [np.inf]})), "infinite"))
    add(Case("evaluq.from_long", "NaN key",
             lambda: eq.from_long(pd.DataFrame({"model": ["a", None], "language": ["x", "x"],
                                                "score": [1.0, 2.0]})), "missing values"))
    add(Case("evaluq.from_long", "unknown option",
             lambda: eq.from_long(pd.DataFrame({"model": ["a"], "language": ["x"],
                                                "score": [1.0]}), outlier_threshold=-3),
             "`outlier_threshold`"))
    add(Case("evaluq.from_summary", "fractional n_seeds",
             lambda: eq.from_summary(summary_df(), n_seeds=2.5), "`n_seeds`"))
    add(Case("evaluq.from_summary", "duplicated keys",
             lambda: eq.from_summary(pd.concat([summary_df(), summary_df()]), n_seeds=2),
             "more than once"))
    # --- variance --------------------------------------------------------------------------------
    add(Case("evaluq.variance_components", "negative ddof",
             lambda: eq.variance_components(cube(), ddof=-1), "`ddof`"))
    add(Case("evaluq.variance_components", "not a cube",
             lambda: eq.variance_components(np.ones((2, 2, 2))), "xarray.Dataset"))
    add(Case("evaluq.variance_components", "seeds only: NaN explained",
             lambda: eq.variance_components(cube(n_boot=None))))
    add(Case("evaluq.variance_table", "not components", lambda: eq.variance_table("vc"),
             "`components`"))
    add(Case("evaluq.variance_table", "a cube instead", lambda: eq.variance_table(cube()),
             "`components`"))
    add(Case("evaluq.variance_table", "negative digits",
             lambda: eq.variance_table(eq.variance_components(cube()), digits=-1), "`digits`"))
    # --- resampling ------------------------------------------------------------------------------
    add(Case("evaluq.resample", "one resample", lambda: eq.resample(cube(), n_resamples=1),
             "`n_resamples`"))
    add(Case("evaluq.resample", "unknown replication",
             lambda: eq.resample(cube(), replication="magic"), "`replication`"))
    add(Case("evaluq.resample", "negative rng", lambda: eq.resample(cube(), rng=-1), "`rng`"))
    add(Case("evaluq.resample", "float n_resamples",
             lambda: eq.resample(cube(), n_resamples=10.5), "`n_resamples`"))
    add(Case("evaluq.resample", "subsample too many",
             lambda: eq.resample(cube(), languages="subsample", n_languages=9), "`n_languages`"))
    add(Case("evaluq.resample", "lazy resamples, aggregated chunk by chunk",
             lambda: eq.aggregate(eq.resample(cube(), n_resamples=50, lazy=True, rng=0))))
    add(Case("evaluq.resample", "lazy not a bool",
             lambda: eq.resample(cube(), lazy="yes"), "`lazy`"))
    add(Case("evaluq.aggregate", "a cube", lambda: eq.aggregate(cube()), "`resampled`"))
    add(Case("evaluq.aggregate", "unknown how", lambda: eq.aggregate(resampled(), how="max"),
             "`how`"))
    add(Case("evaluq.aggregate", "level 1.5",
             lambda: eq.aggregate(resampled(), confidence_level=1.5), "`confidence_level`"))
    add(Case("evaluq.aggregate", "NaN trim", lambda: eq.aggregate(resampled(), trim=NAN),
             "`trim`"))
    add(Case("evaluq.aggregate", "skipna not bool", lambda: eq.aggregate(resampled(), skipna=1),
             "`skipna`"))
    add(Case("evaluq.aggregate", "dim model", lambda: eq.aggregate(resampled(), dim="model"),
             "`dim`"))
    add(Case("evaluq.aggregate", "dim unknown", lambda: eq.aggregate(resampled(), dim="task"),
             "`dim`"))
    add(Case("evaluq.aggregate", "dim a list", lambda: eq.aggregate(resampled(), dim=["seed"]),
             "`dim`"))
    add(Case("evaluq.resample", "NaN cell, parametric",
             lambda: eq.resample(cube().assign(score=cube().score.where(
                 cube().seed != cube().seed[0])), n_resamples=10, rng=0)))
    add(Case("evaluq.resample", "seeds without nonparametric",
             lambda: eq.resample(cube(), seeds="one"), "`seeds`"))
    add(Case("evaluq.resample", "chunk_size 0", lambda: eq.resample(cube(), chunk_size=0),
             "`chunk_size`"))
    add(Case("evaluq.resample", "n_languages with fixed",
             lambda: eq.resample(cube(), n_languages=2), "`n_languages`"))
    add(Case("evaluq.resample", "extreme scores",
             lambda: eq.aggregate(eq.resample(eq.from_arrays(
                 np.array([[[1e150, 1.1e150]], [[1e150, 1.2e150]]]),
                 outlier_threshold=None), n_resamples=20, replication="nonparametric",
                 rng=0))))
    add(Case("evaluq.aggregate", "gmean of non-positive scores",
             lambda: eq.aggregate(eq.resample(eq.from_arrays(
                 np.array([[[-1.0, 1.0]], [[1.0, 2.0]]]), outlier_threshold=None),
                 n_resamples=20, replication="none", rng=0), how="gmean"), "`how='gmean'`"))
    add(Case("evaluq.aggregate", "callable of the wrong shape",
             lambda: eq.aggregate(resampled(), how=lambda x: x), "callable `how`"))
    # --- pairwise and ranks ----------------------------------------------------------------------
    add(Case("evaluq.pairwise_differences", "a list", lambda: eq.pairwise_differences([1, 2]),
             "`draws`"))
    add(Case("evaluq.pairwise_differences", "level 0",
             lambda: eq.pairwise_differences(agg(), confidence_level=0), "`confidence_level`"))
    add(Case("evaluq.pairwise_table", "not pairwise", lambda: eq.pairwise_table("x"),
             "`pairwise`"))
    add(Case("evaluq.pairwise_table", "unique not bool",
             lambda: eq.pairwise_table(eq.pairwise_differences(agg()), unique="yes"), "`unique`"))
    add(Case("evaluq.pairwise_by_language", "not resampled",
             lambda: eq.pairwise_by_language(cube()), "`resampled`"))
    add(Case("evaluq.rank_distribution", "a number", lambda: eq.rank_distribution(3.0),
             "`draws`"))
    add(Case("evaluq.rank_distribution", "one model",
             lambda: eq.rank_distribution(eq.aggregate(eq.resample(
                 eq.simulate_cube(n_models=1, n_languages=3, rng=0), n_resamples=50, rng=0)))))
    add(Case("evaluq.significance_groups", "alpha 2",
             lambda: eq.significance_groups(agg(), alpha=2.0), "`alpha`"))
    add(Case("evaluq.leaderboard", "unknown adjustment",
             lambda: eq.leaderboard(agg(), adjustment="bonferroni-ish"), "`adjustment`"))
    add(Case("evaluq.leaderboard", "one NaN cell, languages bootstrap",
             lambda: eq.leaderboard(_aggregate_warned(eq.resample(
                 cube().assign(score=cube().score.where(
                     ~((cube().model == "m0") & (cube().language == "l00")))),
                 n_resamples=100, replication="none", languages="bootstrap", rng=0)),
                 adjustment="bh")))     # Holm: no test can reject (a warning)
    # --- predictions, tests, experiment ----------------------------------------------------------
    add(Case("evaluq.from_predictions", "length mismatch",
             lambda: eq.from_predictions(Y, {"a": P[:-1]}), "predictions|length|shape"))
    add(Case("evaluq.from_predictions", "negative n_boot",
             lambda: eq.from_predictions(Y, {"a": P}, n_boot=-5), "`n_boot`"))
    add(Case("evaluq.from_predictions", "bounds reversed",
             lambda: eq.from_predictions(Y, {"a": P}, bounds=(1, 0)), "`bounds`"))
    add(Case("evaluq.from_predictions", "bounds exclude the scores",
             lambda: eq.from_predictions(Y, {"a": P}, bounds=(0.9, 1)), "`bounds`"))
    add(Case("evaluq.bootstrap_test", "unknown method",
             lambda: significance.bootstrap_test(Y, P, 1 - P, method="magic"), "`method`"))
    add(Case("evaluq.bootstrap_test", "one resample",
             lambda: significance.bootstrap_test(Y, P, 1 - P, n_resamples=0), "`n_resamples`"))
    add(Case("evaluq.significance.bootstrap_test", "NaN targets",
             lambda: significance.bootstrap_test(np.array([0.0, NAN, 1.0]), P[:3], P[:3]),
             "NaN|`targets`"))
    add(Case("evaluq.significance.significance_mark", "p = 2",
             lambda: significance.significance_mark(2.0), "`p`"))
    add(Case("evaluq.significance.significance_mark", "p NaN",
             lambda: significance.significance_mark(NAN), "`p`"))
    add(Case("evaluq.BootstrapTestResult", "a result's table",
             lambda: significance.bootstrap_test(Y, P, 1 - P, n_resamples=200, rng=0)
             .to_dataframe()))
    add(Case("evaluq.significance.BootstrapTestResult", "a result's table",
             lambda: significance.bootstrap_test(Y, P, 1 - P, n_resamples=200, rng=0)
             .to_dataframe()))
    add(Case("evaluq.Experiment", "path of a wrong type", lambda: eq.Experiment(path=3),
             "`path`"))
    add(Case("evaluq.ExperimentResult", "autosave not bool",
             lambda: eq.Experiment(autosave="yes"), "`autosave`"))
    # siblings of the cases above (issue 10): every p, path, n_resamples
    add(Case("evaluq.significance.significance_mark", "p negative",
             lambda: significance.significance_mark(-0.01), "`p`"))
    add(Case("evaluq.bootstrap_test", "exactly one resample",
             lambda: significance.bootstrap_test(Y, P, 1 - P, n_resamples=1), "`n_resamples`"))
    add(Case("evaluq.Experiment", "load from a path of a wrong type",
             lambda: eq.Experiment.load(3), "`path`"))
    add(Case("evaluq.Experiment", "save to a path of a wrong type",
             lambda: eq.Experiment().save(["dir"]), "`path`"))
    # --- intervals -------------------------------------------------------------------------------
    add(Case("evaluq.intervals.t_interval", "one value", lambda: intervals.t_interval([1.0]),
             "`x`|at least 2"))
    add(Case("evaluq.intervals.t_interval", "NaN", lambda: intervals.t_interval([1.0, NAN, 2]),
             "NaN|`x`"))
    add(Case("evaluq.intervals.t_interval", "bool", lambda: intervals.t_interval([True, False]),
             "`x`"))
    add(Case("evaluq.intervals.TIntervalResult", "level of a result",
             lambda: intervals.t_interval([1.0, 2.0, 4.0], confidence_level=1.0),
             "`confidence_level`"))
    add(Case("evaluq.intervals.arf_interval", "guess and alpha NaN",
             lambda: intervals.arf_interval([0.5], [0.5], arf_alpha=NAN), "`arf_alpha`"))
    add(Case("evaluq.intervals.ARFIntervalResult", "no alpha nor k",
             lambda: intervals.arf_interval([0.5], [0.5]), "`arf_alpha`|`k`"))
    add(Case("evaluq.intervals.arf_alpha", "negative k", lambda: intervals.arf_alpha(-1.0),
             "`k`"))
    add(Case("evaluq.intervals.arf_alpha", "unknown distribution",
             lambda: intervals.arf_alpha(1.0, distribution="cauchy"), "`distribution`"))
    add(Case("evaluq.intervals.arf_k", "alpha 1.5", lambda: intervals.arf_k(1.5), "`arf_alpha`"))
    add(Case("evaluq.intervals.prob_above", "NaN threshold",
             lambda: intervals.prob_above([1.0, 2.0], NAN), "`threshold`"))
    add(Case("evaluq.intervals.prob_above", "empty", lambda: intervals.prob_above([], 0.0),
             "`x`|empty"))
    add(Case("evaluq.intervals.prob_above", "bool x",
             lambda: intervals.prob_above([True, False, True], 0.5), "`x`"))
    add(Case("evaluq.intervals.arf_interval", "bool y",
             lambda: intervals.arf_interval(np.array([True]), 0.5, k=1.0), "`y`"))
    add(Case("evaluq.intervals.arf_k", "bool alpha", lambda: intervals.arf_k(True),
             "`arf_alpha`"))
    add(Case("evaluq.intervals.arf_interval", "string bounds",
             lambda: intervals.arf_interval(0.5, 0.4, k=1.0, bounds=("0", "1")), "`bounds`"))
    # --- measurement error -----------------------------------------------------------------------
    t, p = [1.0, 2.0, 3.0], [1.5, 2.0, 2.0]
    add(Case("evaluq.measurement_error.expected_mse", "negative sigma",
             lambda: me.expected_mse(t, p, -1.0), "`sigma`"))
    add(Case("evaluq.measurement_error.var_mse", "length mismatch",
             lambda: me.var_mse(t, p[:2], 0.5), "`predictions`|`targets`|item"))
    add(Case("evaluq.measurement_error.expected_mae", "NaN target",
             lambda: me.expected_mae([1.0, NAN], [1.0, 2.0], 0.5), "`targets`|NaN"))
    add(Case("evaluq.measurement_error.var_mae", "string sigma",
             lambda: me.var_mae(t, p, "big"), "`sigma`"))
    add(Case("evaluq.measurement_error.mse_distribution", "tiny unequal sigma",
             lambda: me.mse_distribution(t, p, [1e-160, 2e-160, 3e-160]).confidence_interval()))
    add(Case("evaluq.measurement_error.mse_distribution", "sigma/|d| 1e-5",
             lambda: me.mse_distribution(t, p, [1e-5, 2e-5, 3e-5]).confidence_interval()))
    add(Case("evaluq.measurement_error.mse_distribution", "ncx2 at sigma 1e-6",
             lambda: me.mse_distribution(t, p, 1e-6).confidence_interval()))
    add(Case("evaluq.measurement_error.mse_distribution", "unknown method",
             lambda: me.mse_distribution(t, p, 0.5, method="exact"), "`method`"))
    add(Case("evaluq.measurement_error.MSEDistribution", "quantile 1.5",
             lambda: me.mse_distribution(t, p, 0.5).quantile(1.5), "quantile"))
    add(Case("evaluq.measurement_error.MSEDistribution", "cdf at NaN",
             lambda: me.mse_distribution(t, p, 0.5).cdf(NAN), "`x`"))
    add(Case("evaluq.measurement_error.accuracy_distribution", "q = 1.5",
             lambda: me.accuracy_distribution(Y, P, q=1.5), "`q`"))
    add(Case("evaluq.measurement_error.AccuracyDistribution", "transition not stochastic",
             lambda: me.accuracy_distribution(Y, P, transition=np.array([[0.5, 0.6],
                                                                         [0.5, 0.5]])),
             "`transition`"))
    add(Case("evaluq.measurement_error.expected_accuracy", "q and transition",
             lambda: me.expected_accuracy(Y, P, q=0.1, transition=np.eye(2)),
             "`q`|`transition`"))
    add(Case("evaluq.measurement_error.var_accuracy", "negative q",
             lambda: me.var_accuracy(Y, P, q=-0.1), "`q`"))
    # --- metrics ---------------------------------------------------------------------------------
    for fn in ("accuracy", "f1", "precision", "recall"):
        add(Case(f"evaluq.metrics.{fn}", "length mismatch",
                 lambda fn=fn: getattr(metrics, fn)(Y, P[:-1]), "length|shape|`predictions`"))
    for fn in ("f1", "precision", "recall"):
        add(Case(f"evaluq.metrics.{fn}", "unknown average",
                 lambda fn=fn: getattr(metrics, fn)(Y, P, average="median"), "`average`"))
        add(Case(f"evaluq.metrics.{fn}_metric", "duplicated labels",
                 lambda fn=fn: getattr(metrics, f"{fn}_metric")(labels=[0, 0, 1]), "`labels`"))
    add(Case("evaluq.metrics.accuracy", "duplicated labels",
             lambda: metrics.accuracy(Y, P, labels=[0, 1, 1]), "`labels`"))
    for fn in ("cross_entropy", "kl"):
        add(Case(f"evaluq.metrics.{fn}", "negative eps",
                 lambda fn=fn: getattr(metrics, fn)(SOFT_T, SOFT_P, eps=-0.1), "`eps`"))
        add(Case(f"evaluq.metrics.{fn}", "NaN eps",
                 lambda fn=fn: getattr(metrics, fn)(SOFT_T, SOFT_P, eps=NAN), "`eps`"))
        add(Case(f"evaluq.metrics.{fn}_metric", "negative eps",
                 lambda fn=fn: getattr(metrics, f"{fn}_metric")(eps=-1.0), "`eps`"))
    for fn in ("emd", "js_distance", "js_divergence", "entropy_correlation",
               "entropy_similarity"):
        add(Case(f"evaluq.metrics.{fn}", "rows do not sum to 1",
                 lambda fn=fn: getattr(metrics, fn)(SOFT_T * 2, SOFT_P), "sum to 1|`targets`"))
    for fn in ("mae", "mse"):
        add(Case(f"evaluq.metrics.{fn}", "inf", lambda fn=fn: getattr(metrics, fn)(
            [1.0, np.inf], [1.0, 2.0]), "`targets`|infinite|finite"))
    add(Case("evaluq.metrics.get_metric", "unknown name", lambda: metrics.get_metric("bleuu"),
             "bleuu"))
    add(Case("evaluq.metrics.get_metric", "wrong type", lambda: metrics.get_metric(3),
             "`metric`"))
    add(Case("evaluq.metrics.available_metrics", "call", lambda: len(metrics.available_metrics())))
    add(Case("evaluq.metrics.register_metric", "not a Metric",
             lambda: metrics.register_metric("accuracy"), "`metric`"))
    add(Case("evaluq.metrics.Metric", "a registered metric on soft targets",
             lambda: metrics.get_metric("accuracy")(SOFT_T, SOFT_P), "accuracy|hard|soft|kind"))
    add(Case("evaluq.metrics.confusion_matrix", "label beyond n_classes",
             lambda: metrics.confusion_matrix(np.array([0, 5]), np.array([0, 1]), 2),
             "`targets`|n_classes"))
    add(Case("evaluq.metrics.confusion_matrix", "negative n_classes",
             lambda: metrics.confusion_matrix(np.array([0]), np.array([0]), -1), "`n_classes`"))
    add(Case("evaluq.metrics.confusion_matrix", "float codes",
             lambda: metrics.confusion_matrix(np.array([0.0, 1.0]), np.array([0, 1]), 2),
             "`targets`"))
    add(Case("evaluq.metrics.Metric", "weighted on soft targets",
             lambda: metrics.get_metric("f1").weighted(SOFT_T, SOFT_P, np.ones((2, 3))),
             "`targets`"))
    add(Case("evaluq.metrics.get_metric", "unhashable", lambda: metrics.get_metric(["f1"]),
             "`metric`"))
    for fn in ("mse", "mae"):
        add(Case(f"evaluq.metrics.{fn}", "bool targets", lambda fn=fn: getattr(metrics, fn)(
            np.array([True, False]), [1.0, 0.0]), "`targets`"))
    add(Case("evaluq.metrics.cross_entropy", "bool one-hot targets",
             lambda: metrics.cross_entropy(SOFT_T > 0.5, SOFT_P), "`targets`"))
    add(Case("evaluq.metrics.f1_metric", "labels a single string",
             lambda: metrics.f1_metric(labels="ab"), "`labels`"))
    add(Case("evaluq.metrics.prepare_inputs", "unknown kind",
             lambda: metrics.prepare_inputs(Y, P, kind="fuzzy"), "`kind`"))
    add(Case("evaluq.metrics.PreparedInputs", "object targets",
             lambda: metrics.prepare_inputs(np.array([None, 1], dtype=object), P[:2]),
             "`targets`"))
    add(Case("evaluq.metrics.load_predictions", "no file",
             lambda: metrics.load_predictions("/nonexistent/p.npy"), "does not exist",
             errors=(FileNotFoundError,)))
    # --- agreement -------------------------------------------------------------------------------
    add(Case("evaluq.agreement.cohen_kappa", "duplicated labels",
             lambda: agreement.cohen_kappa(Y, P, labels=[0, 0, 1], n_resamples=10),
             "`labels`"))
    add(Case("evaluq.agreement.cohen_kappa", "length mismatch",
             lambda: agreement.cohen_kappa(Y, P[:-1], n_resamples=10), "rater|length|shape"))
    add(Case("evaluq.agreement.icc", "one rater",
             lambda: agreement.icc(RATINGS[:, :1], n_resamples=10), "rater|`ratings`"))
    add(Case("evaluq.agreement.icc", "one resample",
             lambda: agreement.icc(RATINGS, n_resamples=1), "`n_resamples`"))
    add(Case("evaluq.agreement.krippendorff_alpha", "one resample",
             lambda: agreement.krippendorff_alpha(RATINGS, n_resamples=1), "`n_resamples`"))
    add(Case("evaluq.agreement.cohen_kappa", "one resample",
             lambda: agreement.cohen_kappa(Y, P, n_resamples=1), "`n_resamples`"))
    add(Case("evaluq.agreement.icc", "bool ratings",
             lambda: agreement.icc(RATINGS > 1.5, n_resamples=10), "`ratings`"))
    add(Case("evaluq.agreement.cohen_kappa", "2-D labels",
             lambda: agreement.cohen_kappa(Y, P, labels=[[0, 1]], n_resamples=10), "`labels`"))
    add(Case("evaluq.agreement.krippendorff_alpha", "unknown level",
             lambda: agreement.krippendorff_alpha(RATINGS, level_of_measurement="fuzzy",
                                                  n_resamples=10), "`level_of_measurement`"))
    add(Case("evaluq.agreement.AgreementResult", "a result",
             lambda: agreement.icc(RATINGS, n_resamples=200, rng=0).to_dataframe()))
    # --- dirichlet -------------------------------------------------------------------------------
    add(Case("evaluq.dirichlet.posterior", "negative counts",
             lambda: dirichlet.posterior(-COUNTS), "`counts`"))
    add(Case("evaluq.dirichlet.posterior", "prior 0", lambda: dirichlet.posterior(COUNTS,
                                                                                  prior=0.0),
             "`prior`"))
    add(Case("evaluq.dirichlet.posterior", "counts near the int64 range",
             lambda: dirichlet.expected_entropy(np.array([[2**62, 2**62]]))))
    add(Case("evaluq.dirichlet.DirichletPosterior", "expected probabilities",
             lambda: dirichlet.posterior(COUNTS).expected_probs()))
    for fn in ("expected_cross_entropy", "expected_emd", "expected_jsd", "expected_kl"):
        add(Case(f"evaluq.dirichlet.{fn}", "q rows do not sum to 1",
                 lambda fn=fn: getattr(dirichlet, fn)(COUNTS, Q3 * 2), "`q`"))
    for fn in ("expected_cross_entropy", "expected_kl"):
        add(Case(f"evaluq.dirichlet.{fn}", "NaN eps",
                 lambda fn=fn: getattr(dirichlet, fn)(COUNTS, Q3, eps=NAN), "`eps`"))
    add(Case("evaluq.dirichlet.expected_entropy", "bool counts",
             lambda: dirichlet.expected_entropy(COUNTS > 0), "`counts`"))
    for fn, eps in (("expected_cross_entropy", 0.0), ("expected_kl", np.inf)):
        add(Case(f"evaluq.dirichlet.{fn}", f"eps {eps}",
                 lambda fn=fn, eps=eps: getattr(dirichlet, fn)(COUNTS, Q3, eps=eps), "`eps`"))
    add(Case("evaluq.dirichlet.expected_kl", "bool q",
             lambda: dirichlet.expected_kl(COUNTS, Q3 > 0.35), "`q`"))
    add(Case("evaluq.dirichlet.posterior", "bool prior vector",
             lambda: dirichlet.posterior(COUNTS, prior=np.ones(3, bool)), "`prior`"))
    add(Case("evaluq.dirichlet.posterior", "bool DataArray counts",
             lambda: dirichlet.posterior(xr.DataArray(COUNTS > 0, dims=("item", "class"))),
             "`counts`"))
    add(Case("evaluq.dirichlet.expected_entropy", "negative 1-D DataArray counts",
             lambda: dirichlet.expected_entropy(xr.DataArray([-1.0, 2.0], dims="class")),
             "`counts`"))
    add(Case("evaluq.dirichlet.empirical_metric", "bool counts",
             lambda: dirichlet.empirical_metric(COUNTS > 0, Q3, metric="kl"), "`counts`"))
    add(Case("evaluq.dirichlet.model_ranking", "one resample",
             lambda: dirichlet.model_ranking(COUNTS, {"a": Q3}, n_resamples=1), "`n_resamples`"))
    add(Case("evaluq.dirichlet.model_ranking", "bool predictions",
             lambda: dirichlet.model_ranking(COUNTS, {"a": Q3 > 0.35}, n_resamples=0),
             "`predictions"))
    add(Case("evaluq.dirichlet.expected_probs", "negative alpha",
             lambda: dirichlet.expected_probs(COUNTS, prior=-1.0), "`prior`"))
    add(Case("evaluq.dirichlet.empirical_metric", "unknown metric",
             lambda: dirichlet.empirical_metric(COUNTS, Q3, metric="bleu"), "`metric`"))
    add(Case("evaluq.dirichlet.monte_carlo_expectation", "n_draws 0",
             lambda: dirichlet.monte_carlo_expectation(COUNTS, Q3, metric="kl", n_draws=0),
             "`n_draws`"))
    add(Case("evaluq.dirichlet.model_ranking", "one model",
             lambda: dirichlet.model_ranking(COUNTS, {"a": Q3}, n_resamples=0)))
    add(Case("evaluq.dirichlet.counts_from_annotations", "label >= n_classes",
             lambda: dirichlet.counts_from_annotations([[0, 5]], n_classes=3), "n_classes|label"))
    add(Case("evaluq.dirichlet.posterior_from_annotations", "n_classes 0",
             lambda: dirichlet.posterior_from_annotations([[0]], n_classes=0), "`n_classes`"))
    add(Case("evaluq.dirichlet.by_annotation_count", "unsorted bins",
             lambda: dirichlet.by_annotation_count(
                 dirichlet.expected_entropy(COUNTS), COUNTS.sum(1), bins=(5, 2, 9)), "`bins`"))
    c += _issue_20_cases()
    return c


def _not_a_cube_file() -> Any:
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), "notes.txt")
    with open(path, "w") as handle:
        handle.write("not a cube")
    return eq.open_cube(path)


def _malformed_outcomes(entry: Any) -> Any:
    import json
    import tempfile
    path = os.path.join(tempfile.mkdtemp(), "outcomes.json")
    with open(path, "w") as handle:
        json.dump({"base": entry}, handle)
    return eq.Experiment.load(path)


def _issue_20_cases() -> list[Case]:
    """Issue 20: extreme sizes, renamed dims, silently dropped values, messages naming the
    argument (one case per class; tests/bad_input/test_classes.py generates more)."""
    c: list[Case] = []
    add = c.append
    big = np.array([[2**62, 1, 1]], dtype=float)
    add(Case("evaluq.resample", "lazy 10^12 resamples",
             lambda: eq.resample(cube(), n_resamples=10**12, lazy=True), "MAX_LAZY_CHUNKS"))
    add(Case("evaluq.resample", "10^12 resamples in memory",
             lambda: eq.resample(cube(), n_resamples=10**12), "lazy=True"))
    add(Case("evaluq.dirichlet.expected_jsd", "counts of 2^62",
             lambda: dirichlet.expected_jsd(big, Q3[:1])))
    add(Case("evaluq.dirichlet.expected_kl", "counts of 2^62",
             lambda: dirichlet.expected_kl(big, Q3[:1])))
    add(Case("evaluq.variance_table", "model dim renamed",
             lambda: eq.variance_table(eq.variance_components(cube()).rename(model="system")),
             r"no 'model' dim.*rename\(system='model'\)"))
    add(Case("evaluq.pairwise_table", "model_b dim renamed",
             lambda: eq.pairwise_table(eq.pairwise_differences(agg()).rename(model_b="other")),
             r"no 'model_b' dim"))
    add(Case("evaluq.dirichlet.by_annotation_count", "NaN annotation count",
             lambda: dirichlet.by_annotation_count(
                 dirichlet.expected_entropy(COUNTS), np.array([4.0, NAN, 3.0]), bins=(0, 2)),
             r"`n_annotations`.*nan at item 1"))
    add(Case("evaluq.dirichlet.by_annotation_count", "NaN value",
             lambda: dirichlet.by_annotation_count(
                 xr.DataArray([0.1, NAN, 0.3], dims="item", name="v"), COUNTS.sum(1),
                 bins=(0, 2)), r"`values` 'v' is NaN at item 1"))
    add(Case("evaluq.open_cube", "neither NetCDF nor zarr", _not_a_cube_file,
             r"`path` .*notes\.txt.*not a NetCDF file or a zarr store"))
    add(Case("evaluq.pairwise_by_language", "languages attr 'fixed', dim renamed",
             lambda: eq.pairwise_by_language(resampled().rename(language="lang")),
             r"`resampled` has no 'language' dim"))
    add(Case("evaluq.Experiment", "malformed baseline entry",
             lambda: _malformed_outcomes(3), r"baseline 'base' in .*must be a mapping"))
    add(Case("evaluq.dirichlet.counts_from_annotations", "an item that is no sequence",
             lambda: dirichlet.counts_from_annotations([[0, 1], 5], n_classes=2),
             r"`annotations`.*item 1 is int"))
    add(Case("evaluq.dirichlet.model_ranking", "metrics=[]",
             lambda: dirichlet.model_ranking(COUNTS, {"a": Q3, "b": Q3}, metrics=[]),
             r"`metrics` must be a non-empty"))
    add(Case("evaluq.agreement.cohen_kappa", "mixed str / int labels",
             lambda: agreement.cohen_kappa(["a", 1, 2], [1, "b", 2], n_resamples=10),
             r"`rater1` mixes label types"))
    add(Case("evaluq.agreement.cohen_kappa", "str labels against int labels",
             lambda: agreement.cohen_kappa([1, 2, 1], ["a", "b", "a"], n_resamples=10),
             r"`rater1` and `rater2` must use labels of one kind"))
    add(Case("evaluq.agreement.cohen_kappa", "None label",
             lambda: agreement.cohen_kappa([None, 1, 2], [1, 2, 1], n_resamples=10),
             r"`rater1` contains None"))
    add(Case("evaluq.agreement.krippendorff_alpha", "all-NaN ratings",
             lambda: agreement.krippendorff_alpha(np.full((3, 4), NAN), n_resamples=10),
             r"`ratings` has no item rated by at least 2 raters"))
    return c


CASES = _cases()

"""Bad-input corpus entries over the whole public surface (issue 35, item 2): the modules the
corpus did not reach before (``power``, ``hierarchical``, ``small_samples``, ``item_model``,
``items``, ``demo``, ``io``, ``predictions``, ``ratings.fit_judged_ratings``,
``reporting.sections``) and more cases for the thinly covered field, ranking and small-sample
functions: wrong types, NaN, empty, one model, unknown names, huge sizes, out-of-range levels.

``ARG`` is the loosest expected message: a ValueError / TypeError naming some argument in
backticks (the issue's "vague" class is a message naming none). Sizes marked ``HUGE`` must be
refused at once with the memory they would need (``_validation.check_memory``), never
allocated: a case that is not refused would take minutes or be killed, so a regression shows.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

import evaluq as eq
from evaluq import hierarchical, item_model, items, power, predictions
from evaluq.field.demsar import nemenyi_q
from evaluq.io import as_table
from evaluq.reporting import sections
from evaluq.small_samples import interval_coverage, paired_counts
from evaluq.small_samples import proportions as props

from .corpus import FINITE, Case, cube

ARG = r"`[\w.]+`"
MEM = r"would need [\d.e+]+ [KMGTP]?i?B"
NAN = float("nan")
HUGE = 10**12


def one_model() -> xr.Dataset:
    return cube(n_models=1)


def nan_cube() -> xr.Dataset:
    c = cube().copy(deep=True)
    c["score"][0, 0, 0] = np.nan
    return c


def seeds_only() -> xr.Dataset:
    return cube(n_boot=None)


def resampled() -> xr.Dataset:
    return eq.resample(cube(), n_resamples=50, rng=0)


def design() -> xr.Dataset:
    return power.design_from_sds(sd_item=0.5, sd_seed=0.02, n_seeds=3, n_items=200)


def scores(n: int = 20, shift: float = 0.0) -> np.ndarray:
    return np.random.default_rng(1).normal(shift, 1.0, n)


A = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1])
B = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1, 0])
ATTEMPTS = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1]])


def item_table() -> pd.DataFrame:
    return eq.simulate_items(n_models=2, n_items=6, rng=0)


def votes() -> pd.DataFrame:
    """60 judged votes of three models, gold verdicts on every other one, ties among them
    (fit_judged_ratings)."""
    gen = np.random.default_rng(3)
    pairs = [("x", "y"), ("y", "z"), ("z", "x")] * 20
    verdicts = np.array(["model_a", "model_b", "tie"])
    judge = verdicts[gen.choice(3, 60, p=[0.45, 0.4, 0.15])]
    gold = np.where(gen.random(60) < 0.8, judge, verdicts[gen.choice(3, 60)]).astype(object)
    gold[1::2] = None
    return pd.DataFrame({"model_a": [a for a, _ in pairs], "model_b": [b for _, b in pairs],
                         "judge": judge, "gold": gold})


def judge_table() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "item": list(range(4)) * 2,
                         "judge": [1, 0, 1, 1, 0, 0, 1, 1.0],
                         "gold": [1, np.nan, 1, 0, 0, np.nan, 1, 1]})


def _field() -> list[Case]:
    F = "evaluq."
    return [
        Case(F + "friedman_test", "not a cube", lambda: eq.friedman_test("cube"), ARG),
        Case(F + "friedman_test", "one language",
             lambda: eq.friedman_test(cube(n_languages=1)), ARG),
        Case(F + "critical_difference", "unknown test",
             lambda: eq.critical_difference(cube(), test="tukey"), "`test`"),
        Case(F + "critical_difference", "alpha 1.5",
             lambda: eq.critical_difference(cube(), alpha=1.5), "`alpha`"),
        Case(F + "critical_difference", "alpha NaN",
             lambda: eq.critical_difference(cube(), alpha=NAN), "`alpha`"),
        Case(F + "critical_difference", "one model",
             lambda: eq.critical_difference(one_model()), ARG),
        Case(F + "bayesian_signed_rank", "unknown model",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "Z"), "`model_b`"),
        Case(F + "bayesian_signed_rank", "a model against itself",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m0"), ARG),
        Case(F + "bayesian_signed_rank", "negative rope",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m1", rope=-1), "`rope`"),
        Case(F + "bayesian_signed_rank", "rope NaN",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m1", rope=NAN), "`rope`"),
        Case(F + "bayesian_signed_rank", "negative prior",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m1", prior=-1), "`prior`"),
        Case(F + "bayesian_signed_rank", "n_samples 0",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m1", n_samples=0), "`n_samples`"),
        Case(F + "bayesian_signed_rank", "n_samples 10**12 (huge)",
             lambda: eq.bayesian_signed_rank(cube(), "m0", "m1", n_samples=HUGE, rng=0), MEM),
        Case(F + "correlated_t_test", "empty",
             lambda: eq.correlated_t_test([], []), ARG),
        Case(F + "correlated_t_test", "lengths differ",
             lambda: eq.correlated_t_test(scores(10), scores(12)), ARG),
        Case(F + "correlated_t_test", "a NaN score",
             lambda: eq.correlated_t_test(np.r_[scores(9), NAN], scores(10)), "`scores_a`"),
        Case(F + "correlated_t_test", "strings",
             lambda: eq.correlated_t_test(["a", "b"], ["c", "d"]), "`scores_a`"),
        Case(F + "correlated_t_test", "runs 0",
             lambda: eq.correlated_t_test(scores(10), scores(10, 1), runs=0), "`runs`"),
        Case(F + "correlated_t_test", "rope NaN",
             lambda: eq.correlated_t_test(scores(10), scores(10, 1), rope=NAN), "`rope`"),
        Case(F + "correlated_t_test", "n_samples 10**12 (huge)",
             lambda: eq.correlated_t_test(scores(10), scores(10, 1), n_samples=HUGE), MEM),
        Case(F + "hierarchical_t_test", "unknown model",
             lambda: eq.hierarchical_t_test(cube(), "m0", "Z"), "`model_b`"),
        Case(F + "hierarchical_t_test", "negative rope",
             lambda: eq.hierarchical_t_test(cube(), "m0", "m1", rope=-1, draws=20, tune=20,
                                            chains=1), "`rope`"),
        Case(F + "hierarchical_t_test", "draws 0",
             lambda: eq.hierarchical_t_test(cube(), "m0", "m1", draws=0), "`draws`"),
        Case(F + "hierarchical_t_test", "runs 0",
             lambda: eq.hierarchical_t_test(cube(), "m0", "m1", runs=0, draws=20, tune=20,
                                            chains=1), "`runs`"),
        Case(F + "aso", "empty", lambda: eq.aso([], [1.0, 2.0], rng=0), "`scores_a`"),
        Case(F + "aso", "a NaN score",
             lambda: eq.aso([1.0, NAN, 2.0], [1.0, 2.0, 3.0], rng=0), "`scores_a`"),
        Case(F + "aso", "strings", lambda: eq.aso(["a", "b"], ["c", "d"], rng=0), "`scores_a`"),
        Case(F + "aso", "confidence_level 1.5",
             lambda: eq.aso(scores(), scores(), confidence_level=1.5, rng=0),
             "`confidence_level`"),
        Case(F + "aso", "num_comparisons 0",
             lambda: eq.aso(scores(), scores(), num_comparisons=0, rng=0), "`num_comparisons`"),
        Case(F + "aso", "dt 0", lambda: eq.aso(scores(), scores(), dt=0, rng=0), "`dt`"),
        Case(F + "aso", "dt 2", lambda: eq.aso(scores(), scores(), dt=2, rng=0), "`dt`"),
        Case(F + "aso", "dt 1e-12 (a huge grid)",
             lambda: eq.aso(scores(), scores(), dt=1e-12, rng=0), r"`dt`|" + MEM),
        Case(F + "multi_aso", "one model", lambda: eq.multi_aso(one_model(), rng=0), ARG),
        Case(F + "multi_aso", "confidence_level 0",
             lambda: eq.multi_aso(cube(), confidence_level=0, rng=0), "`confidence_level`"),
        Case(F + "multi_aso", "unknown language",
             lambda: eq.multi_aso(cube(), language="zz", rng=0), "`language`"),
        Case(F + "multi_aso", "n_resamples 10**12 (huge)",
             lambda: eq.multi_aso(cube(), n_resamples=HUGE, rng=0), MEM),
        Case(F + "interval_estimates", "not a cube",
             lambda: eq.interval_estimates("cube", rng=0), "`cube`"),
        Case(F + "interval_estimates", "gamma NaN",
             lambda: eq.interval_estimates(cube(), gamma=NAN, n_resamples=50, rng=0), "`gamma`"),
        Case(F + "interval_estimates", "confidence_level 2",
             lambda: eq.interval_estimates(cube(), confidence_level=2, n_resamples=50, rng=0),
             "`confidence_level`"),
        Case(F + "interval_estimates", "n_resamples 10**12 (huge)",
             lambda: eq.interval_estimates(cube(), n_resamples=HUGE, rng=0), MEM),
        Case(F + "performance_profile", "unknown kind",
             lambda: eq.performance_profile(cube(), [0.5], kind="bogus", rng=0), "`kind`"),
        Case(F + "performance_profile", "no thresholds",
             lambda: eq.performance_profile(cube(), [], rng=0), "`thresholds`"),
        Case(F + "performance_profile", "a NaN threshold",
             lambda: eq.performance_profile(cube(), [NAN], rng=0), "`thresholds`"),
        Case(F + "performance_profile", "n_resamples 10**12 (huge)",
             lambda: eq.performance_profile(cube(), [0.5], n_resamples=HUGE, rng=0), MEM),
        Case(F + "probability_of_improvement", "one model",
             lambda: eq.probability_of_improvement(one_model(), n_resamples=50, rng=0), ARG),
        Case(F + "probability_of_improvement", "confidence_level -1",
             lambda: eq.probability_of_improvement(cube(), confidence_level=-1, rng=0),
             "`confidence_level`"),
        Case(F + "probability_of_improvement", "n_resamples 10**12 (huge)",
             lambda: eq.probability_of_improvement(cube(), n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.field.demsar.nemenyi_q", "k of 1", lambda: nemenyi_q(1), "`k`"),
        Case("evaluq.field.demsar.nemenyi_q", "k a string", lambda: nemenyi_q("3"), "`k`"),
        Case("evaluq.field.demsar.nemenyi_q", "alpha NaN", lambda: nemenyi_q(3, NAN), "`alpha`"),
        Case("evaluq.field.demsar.nemenyi_q", "alpha 1.5", lambda: nemenyi_q(3, 1.5), "`alpha`"),
        Case("evaluq.field.demsar.nemenyi_q", "k = 10**7 (huge)", lambda: nemenyi_q(10**7),
             r"`k`|" + MEM),
    ]


def _hierarchical() -> list[Case]:
    H = "evaluq.hierarchical."
    data = lambda: hierarchical.cube_statistics(cube())  # noqa: E731
    return [
        Case(H + "cube_statistics", "not a cube",
             lambda: hierarchical.cube_statistics("cube"), "`cube`"),
        Case(H + "cube_statistics", "unknown test_set_errors",
             lambda: hierarchical.cube_statistics(cube(), test_set_errors="bogus"),
             "`test_set_errors`"),
        Case(H + "cube_statistics", "error_correlation 2",
             lambda: hierarchical.cube_statistics(cube(), error_correlation=2.0),
             "`error_correlation`"),
        Case(H + "cube_statistics", "error_correlation NaN",
             lambda: hierarchical.cube_statistics(cube(), error_correlation=NAN),
             "`error_correlation`"),
        Case(H + "default_priors", "not HierarchicalData",
             lambda: hierarchical.default_priors(cube()), "`data`"),
        Case(H + "default_priors", "None", lambda: hierarchical.default_priors(None), "`data`"),
        Case(H + "build_model", "unknown model",
             lambda: hierarchical.build_model(data(), model="bogus"), "`model`"),
        Case(H + "build_model", "unknown prior",
             lambda: hierarchical.build_model(data(), priors={"bogus": 1.0}), "`priors`"),
        Case(H + "build_model", "negative prior scale",
             lambda: hierarchical.build_model(data(), priors={"sigma_seed": -1.0}), "`priors`"),
        Case(H + "build_model", "not HierarchicalData",
             lambda: hierarchical.build_model("data"), "`data`"),
        Case(H + "nutpie_available", "an argument",
             lambda: hierarchical.nutpie_available(1), "positional argument"),
        Case(H + "HierarchicalData", "no fields", lambda: hierarchical.HierarchicalData(),
             "required positional argument"),
        Case("evaluq.fit_hierarchical", "unknown model",
             lambda: eq.fit_hierarchical(cube(), model="bogus"), "`model`"),
        Case("evaluq.fit_hierarchical", "draws 0",
             lambda: eq.fit_hierarchical(cube(), draws=0), "`draws`"),
        Case("evaluq.fit_hierarchical", "chains 0",
             lambda: eq.fit_hierarchical(cube(), chains=0), "`chains`"),
        Case("evaluq.fit_hierarchical", "unknown sampler",
             lambda: eq.fit_hierarchical(cube(), sampler="gibbs"), "`sampler`"),
        Case("evaluq.fit_hierarchical", "unknown prior",
             lambda: eq.fit_hierarchical(cube(), priors={"bogus": 1.0}), "`priors`"),
        Case("evaluq.fit_hierarchical", "not a cube",
             lambda: eq.fit_hierarchical("cube"), "`cube`"),
        Case("evaluq.fit_hierarchical", "draws x chains huge",
             lambda: eq.fit_hierarchical(cube(), draws=10**9, chains=4), r"`draws`"),
        Case("evaluq.load_fit", "a folder",
             lambda: eq.load_fit(tempfile.gettempdir()), "`path`: no fit file at",
             errors=(FileNotFoundError, ValueError)),
        Case("evaluq.load_fit", "wrong type", lambda: eq.load_fit(3.5), "`path`"),
    ]


def _small_samples() -> list[Case]:
    S = "evaluq.small_samples."
    P = "evaluq.small_samples.proportions."
    return [
        Case(S + "interval_coverage", "p 1.5", lambda: interval_coverage([10], 1.5), "`p`"),
        Case(S + "interval_coverage", "p NaN", lambda: interval_coverage([10], NAN), "`p`"),
        Case(S + "interval_coverage", "0 trials", lambda: interval_coverage([0], 0.5),
             "`trials`"),
        Case(S + "interval_coverage", "fractional trials",
             lambda: interval_coverage([2.5], 0.5), "`trials`"),
        Case(S + "interval_coverage", "no trials", lambda: interval_coverage([], 0.5),
             "`trials`"),
        Case(S + "interval_coverage", "unknown method",
             lambda: interval_coverage([10], 0.5, method="bogus"), "`method`"),
        Case(S + "interval_coverage", "confidence_level 1",
             lambda: interval_coverage([10], 0.5, confidence_level=1), "`confidence_level`"),
        Case(S + "interval_coverage", "10**6 probabilities x 10**5 trials (huge)",
             lambda: interval_coverage([10**5], np.linspace(0.01, 0.99, 10**6)), MEM),
        Case(S + "paired_counts", "lengths differ", lambda: paired_counts(A, B[:5]),
             "`correct_b`"),
        Case(S + "paired_counts", "a NaN", lambda: paired_counts(np.r_[A[:-1], NAN], B),
             "`correct_a`"),
        Case(S + "paired_counts", "a score of 0.5", lambda: paired_counts(A * 0.5, B),
             "`correct_a`"),
        Case(S + "paired_counts", "empty", lambda: paired_counts([], []), ARG),
        Case(S + "paired_counts", "strings", lambda: paired_counts(["a"], ["b"]), "`correct_a`"),
        Case(P + "check_binary", "a score of 2",
             lambda: props.check_binary("x", np.array([0, 2])), "`x`"),
        Case(P + "check_binary", "NaN", lambda: props.check_binary("x", np.array([0, NAN])),
             "`x`"),
        Case(P + "as_correctness", "a scalar", lambda: props.as_correctness(1, "x", "item"),
             "`x`"),
        Case(P + "as_correctness", "no item",
             lambda: props.as_correctness(np.ones((2, 0)), "x", "item"), "`x` is empty"),
        Case(P + "as_correctness", "strings",
             lambda: props.as_correctness(["a", "b"], "x", "item"), "`x`"),
        Case(P + "align_items", "different items",
             lambda: props.align_items(xr.DataArray([1, 0], dims="item", coords={"item": [0, 1]}),
                                       xr.DataArray([1, 0], dims="item", coords={"item": [2, 3]}),
                                       "item", ("a", "b")), ARG),
        Case(P + "align_items", "not arrays",
             lambda: props.align_items([1, 0], [1, 0], "item", ("a", "b")), ARG),
        Case("evaluq.pass_at_k", "no k", lambda: eq.pass_at_k(ATTEMPTS, []), "`k`"),
        Case("evaluq.pass_at_k", "k -1", lambda: eq.pass_at_k(ATTEMPTS, -1), "`k`"),
        Case("evaluq.pass_at_k", "unknown interval",
             lambda: eq.pass_at_k(ATTEMPTS, 1, interval="bogus"), "`interval`"),
        Case("evaluq.pass_at_k", "confidence_level 2",
             lambda: eq.pass_at_k(ATTEMPTS, 1, confidence_level=2), "`confidence_level`"),
        Case("evaluq.pass_at_k", "empty", lambda: eq.pass_at_k(np.ones((0, 3)), 1), ARG),
        Case("evaluq.pass_at_k", "trials of the wrong shape",
             lambda: eq.pass_at_k(np.array([2, 1, 3]), 1, trials=[3, 3]), "`trials`"),
        Case("evaluq.pass_at_k", "successes above trials",
             lambda: eq.pass_at_k(np.array([4, 1, 3]), 1, trials=[3, 3, 3]), ARG),
        Case("evaluq.pass_hat_k", "k a float", lambda: eq.pass_hat_k(ATTEMPTS, 1.5), "`k`"),
        Case("evaluq.pass_hat_k", "strings", lambda: eq.pass_hat_k([["a", "b"]], 1), "`correct`"),
        Case("evaluq.design_effect", "unknown dim",
             lambda: eq.design_effect(xr.DataArray([1.0, 2.0, 3.0], dims="x"), [0, 0, 1]),
             "`scores` has no dim 'item'"),
        Case("evaluq.design_effect", "strings",
             lambda: eq.design_effect(["a", "b"], [0, 1]), "`scores`"),
        Case("evaluq.design_effect", "every item its own cluster",
             lambda: eq.design_effect([1.0, 2.0, 3.0], [0, 1, 2])),
        Case("evaluq.bayes_paired_comparison", "prior (0, 1)",
             lambda: eq.bayes_paired_comparison(A, B, prior=(0.0, 1.0), rng=0), "`prior`"),
        Case("evaluq.bayes_paired_comparison", "rho_prior (-1, 1)",
             lambda: eq.bayes_paired_comparison(A, B, rho_prior=(-1.0, 1.0), rng=0),
             "`rho_prior`"),
        Case("evaluq.bayes_paired_comparison", "empty",
             lambda: eq.bayes_paired_comparison([], [], rng=0), ARG),
        Case("evaluq.bayes_paired_comparison", "lengths differ",
             lambda: eq.bayes_paired_comparison(A, B[:4], rng=0), "`correct_b`"),
        Case("evaluq.mcnemar_test", "empty", lambda: eq.mcnemar_test([], []), ARG),
        Case("evaluq.mcnemar_test", "exact='maybe'",
             lambda: eq.mcnemar_test(A, B, exact="maybe"), "`exact`"),
        Case("evaluq.mcnemar_test", "strings", lambda: eq.mcnemar_test(["a"], ["b"]),
             "`correct_a`"),
        Case("evaluq.proportion_interval", "confidence_level 0",
             lambda: eq.proportion_interval([1], [3], confidence_level=0), "`confidence_level`"),
        Case("evaluq.proportion_interval", "prior (0, 0)",
             lambda: eq.proportion_interval([1], [3], method="jeffreys", prior=(0, 0)),
             r"`prior`|`method`"),
        Case("evaluq.proportion_interval", "NaN successes",
             lambda: eq.proportion_interval([NAN], [3]), "`successes`"),
        Case("evaluq.proportion_interval", "strings",
             lambda: eq.proportion_interval(["a"], [3]), "`successes`"),
        Case("evaluq.proportion_interval", "fractional trials",
             lambda: eq.proportion_interval([1], [2.5]), "`trials`"),
    ]


def _power() -> list[Case]:
    W = "evaluq.power."
    return [
        Case(W + "design", "not a cube", lambda: power.design("cube"), "`cube`"),
        Case(W + "design", "one model", lambda: power.design(one_model()), ARG),
        Case(W + "design", "a missing run (NaN score): left out, no unexplained NaN",
             lambda: power.design(nan_cube())),
        Case(W + "design_from_sds", "sd_item -1",
             lambda: power.design_from_sds(sd_item=-1, n_items=10), "`sd_item`"),
        Case(W + "design_from_sds", "sd_item NaN",
             lambda: power.design_from_sds(sd_item=NAN, n_items=10), "`sd_item`"),
        Case(W + "design_from_sds", "n_items 0",
             lambda: power.design_from_sds(sd_item=0.5, n_items=0), "`n_items`"),
        Case(W + "design_from_sds", "n_items 2.5",
             lambda: power.design_from_sds(sd_item=0.5, n_items=2.5), "`n_items`"),
        Case(W + "design_from_sds", "correlation 2",
             lambda: power.design_from_sds(sd_item=0.5, n_items=10, correlation=2),
             "`correlation`"),
        Case(W + "design_from_sds", "n_seeds 0",
             lambda: power.design_from_sds(sd_item=0.5, n_items=10, n_seeds=0), "`n_seeds`"),
        Case(W + "design_from_sds", "sd_item a string",
             lambda: power.design_from_sds(sd_item="big", n_items=10), "`sd_item`"),
        Case(W + "mde_grid", "no n_items",
             lambda: power.mde_grid(design(), n_items=[], n_seeds=[1]), "`n_items`"),
        Case(W + "mde_grid", "n_items 0",
             lambda: power.mde_grid(design(), n_items=[0], n_seeds=[1]), r"`n_items\[0\]`"),
        Case(W + "mde_grid", "n_seeds -1",
             lambda: power.mde_grid(design(), n_items=[10], n_seeds=[-1]), r"`n_seeds\[0\]`"),
        Case(W + "mde_grid", "alpha 2",
             lambda: power.mde_grid(design(), n_items=[10], n_seeds=[1], alpha=2), "`alpha`"),
        Case(W + "mde_grid", "power 0",
             lambda: power.mde_grid(design(), n_items=[10], n_seeds=[1], power=0), "`power`"),
        Case(W + "mde_grid", "unknown scope",
             lambda: power.mde_grid(design(), n_items=[10], n_seeds=[1], scope="bogus"),
             "`scope`"),
        Case(W + "minimum_detectable_effect", "alpha 0",
             lambda: power.minimum_detectable_effect(design(), alpha=0), "`alpha`"),
        Case(W + "minimum_detectable_effect", "power 1",
             lambda: power.minimum_detectable_effect(design(), power=1), "`power`"),
        Case(W + "minimum_detectable_effect", "n_items 0",
             lambda: power.minimum_detectable_effect(design(), n_items=0), "`n_items`"),
        Case(W + "minimum_detectable_effect", "n_seeds -1",
             lambda: power.minimum_detectable_effect(design(), n_seeds=-1), "`n_seeds`"),
        Case(W + "minimum_detectable_effect", "not a cube",
             lambda: power.minimum_detectable_effect([1, 2]), "`cube`"),
        Case(W + "sample_size", "effect 0", lambda: power.sample_size(design(), 0.0), "`effect`"),
        Case(W + "sample_size", "effect NaN", lambda: power.sample_size(design(), NAN),
             "`effect`"),
        Case(W + "sample_size", "effect a string", lambda: power.sample_size(design(), "big"),
             "`effect`"),
        Case(W + "sample_size", "unknown vary",
             lambda: power.sample_size(design(), 0.1, vary="bogus"), "`vary`"),
        Case(W + "sample_size", "power 1.5",
             lambda: power.sample_size(design(), 0.1, power=1.5), "`power`"),
        Case(W + "compute_allocation", "factor 0",
             lambda: power.compute_allocation(cube(), factor=0), "`factor`"),
        Case(W + "compute_allocation", "factor NaN",
             lambda: power.compute_allocation(cube(), factor=NAN), "`factor`"),
        Case(W + "compute_allocation", "alpha 2",
             lambda: power.compute_allocation(cube(), alpha=2), "`alpha`"),
        Case(W + "compute_allocation", "unknown scope",
             lambda: power.compute_allocation(cube(), scope="bogus"), "`scope`"),
    ]


def _cube_pipeline() -> list[Case]:
    return [
        Case("evaluq.resample", "n_resamples 10**12 (huge)",
             lambda: eq.resample(cube(), n_resamples=HUGE, rng=0),
             r"`n_resamples` would need [\d.e+]+ TiB .*lazy=True"),
        Case("evaluq.resample", "chunk_size 0",
             lambda: eq.resample(cube(), n_resamples=50, chunk_size=0, rng=0), "`chunk_size`"),
        Case("evaluq.aggregate", "trim 0.6",
             lambda: eq.aggregate(resampled(), how="trimmed", trim=0.6), "`trim`"),
        Case("evaluq.aggregate", "gamma NaN",
             lambda: eq.aggregate(resampled(), gamma=NAN), "`gamma`"),
        Case("evaluq.aggregate", "unknown dim", lambda: eq.aggregate(resampled(), dim="zz"),
             "`dim`"),
        Case("evaluq.variance_components", "ddof -1",
             lambda: eq.variance_components(cube(), ddof=-1), "`ddof`"),
        Case("evaluq.variance_components", "unknown language_dim",
             lambda: eq.variance_components(cube(), language_dim="zz"), "`language_dim`"),
        Case("evaluq.variance_table", "digits -1",
             lambda: eq.variance_table(eq.variance_components(cube()), digits=-1), "`digits`"),
        Case("evaluq.variance_table", "not components", lambda: eq.variance_table(cube()),
             "`components`"),
        Case("evaluq.rank_distribution", "unknown sample_dims",
             lambda: eq.rank_distribution(eq.aggregate(resampled()), sample_dims="zz"),
             "`sample_dims`"),
        Case("evaluq.rank_distribution", "observed of the wrong models",
             lambda: eq.rank_distribution(eq.aggregate(resampled()),
                                          observed=xr.DataArray([1.0], dims="model",
                                                                coords={"model": ["zz"]})),
             "`observed`"),
        Case("evaluq.leaderboard", "unknown adjustment",
             lambda: eq.leaderboard(eq.aggregate(resampled()), adjustment="tukey"),
             "`adjustment`"),
        Case("evaluq.leaderboard", "alpha 2",
             lambda: eq.leaderboard(eq.aggregate(resampled()), alpha=2), "`alpha`"),
        Case("evaluq.significance_groups", "alpha NaN",
             lambda: eq.significance_groups(eq.aggregate(resampled()), alpha=NAN), "`alpha`"),
        Case("evaluq.pairwise_differences", "confidence_level 1",
             lambda: eq.pairwise_differences(eq.aggregate(resampled()), confidence_level=1),
             "`confidence_level`"),
        Case("evaluq.pairwise_table", "not a result", lambda: eq.pairwise_table("x"),
             "`pairwise`"),
        Case("evaluq.pairwise_by_language", "confidence_level NaN",
             lambda: eq.pairwise_by_language(resampled(), confidence_level=NAN),
             "`confidence_level`"),
        Case("evaluq.bootstrap_test", "n_resamples 10**12 (huge)",
             lambda: eq.bootstrap_test(np.array([0, 1, 1, 0] * 10),
                                       np.array([0, 1, 0, 0] * 10),
                                       np.array([0, 1, 1, 1] * 10), metrics="accuracy",
                                       n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.simulate_cube", "n_boot 10**12 (huge)",
             lambda: eq.simulate_cube(n_boot=HUGE, rng=0), r"`n_boot`.*" + MEM),
    ]


def _items() -> list[Case]:
    cols = {"model": "model", "item": "item", "score": "score"}
    IM = "evaluq.item_model."
    return [
        Case(IM + "item_statistics", "missing column",
             lambda: item_model.item_statistics(item_table(), model="who", item="item",
                                                score="score"), "`model`"),
        Case(IM + "item_statistics", "not a table",
             lambda: item_model.item_statistics(42, **cols), "`table`"),
        Case(IM + "item_statistics", "a NaN score",
             lambda: item_model.item_statistics(item_table().assign(
                 score=lambda t: t.score.where(t.index != 0)), **cols), "`score`"),
        Case(IM + "item_statistics", "empty table",
             lambda: item_model.item_statistics(item_table().iloc[:0], **cols), ARG),
        Case(IM + "simulate_ratings", "n_levels 1",
             lambda: item_model.simulate_ratings(n_levels=1, rng=0), "`n_levels`"),
        Case(IM + "simulate_ratings", "n_graders 0",
             lambda: item_model.simulate_ratings(n_graders=0, rng=0), "`n_graders`"),
        Case(IM + "simulate_ratings", "n_items 0",
             lambda: item_model.simulate_ratings(n_items=0, rng=0), "`n_items`"),
        Case(IM + "simulate_ratings", "model_sd -1",
             lambda: item_model.simulate_ratings(model_sd=-1, rng=0), "`model_sd`"),
        Case(IM + "simulate_ratings", "n_items 10**12 (huge)",
             lambda: item_model.simulate_ratings(n_items=HUGE, rng=0), r"`n_items`"),
        Case(IM + "ItemData", "no fields", lambda: item_model.ItemData(),
             "required positional argument"),
        Case("evaluq.simulate_items", "n_items 10**12 (huge)",
             lambda: eq.simulate_items(n_items=HUGE, rng=0), r"`n_items`"),
        Case("evaluq.compare_fits", "empty", lambda: eq.compare_fits({}), "`fits`"),
        Case("evaluq.compare_fits", "not fits", lambda: eq.compare_fits({"a": 3}), "`fits`"),
        Case("evaluq.items.pivot_items", "missing column",
             lambda: items.pivot_items(item_table(), model="who", item="item", score="score"),
             "`model`"),
        Case("evaluq.items.pivot_items", "not a table",
             lambda: items.pivot_items(42, **cols), "`table`"),
        Case("evaluq.items.pivot_items", "unknown missing",
             lambda: items.pivot_items(item_table(), **cols, missing="bogus"), "`missing`"),
        Case("evaluq.items.pivot_items", "empty table",
             lambda: items.pivot_items(item_table().iloc[:0], **cols), ARG),
        Case("evaluq.items.ItemTable", "no fields", lambda: items.ItemTable(),
             "required positional argument"),
        Case("evaluq.items.LanguageBlock", "no fields", lambda: items.LanguageBlock(),
             "required positional argument"),
    ]


def _none_as_documented(value: Any) -> bool:
    """``metric_bounds`` of a name it does not know is None (a harness's own metric has no
    known range): the documented answer, not a silent acceptance."""
    assert value is None
    return True


def _demo_io() -> list[Case]:
    from evaluq import demo
    return [
        Case("evaluq.demo.demo_cube", "unknown metric",
             lambda: demo.demo_cube(metric="bogus", n_boot=10), "`metric`"),
        Case("evaluq.demo.demo_cube", "n_boot 0", lambda: demo.demo_cube(n_boot=0), "`n_boot`"),
        Case("evaluq.demo.demo_cube", "n_boot 10**12 (huge)",
             lambda: demo.demo_cube(n_boot=HUGE), r"`n_boot`.*" + MEM),
        Case("evaluq.demo.demo_cube", "rng a string",
             lambda: demo.demo_cube(n_boot=10, rng="seed"), "`rng`"),
        Case("evaluq.demo.load_demo", "an argument", lambda: demo.load_demo(1),
             "positional argument"),
        Case("evaluq.demo.run_demo", "n_boot 0", lambda: demo.run_demo(n_boot=0), "`n_boot`"),
        Case("evaluq.demo.run_demo", "n_resamples -1",
             lambda: demo.run_demo(n_boot=10, n_resamples=-1), "`n_resamples`"),
        Case("evaluq.demo.run_demo", "n_resamples 10**12 (huge)",
             lambda: demo.run_demo(n_boot=10, n_resamples=HUGE, bayes=False),
             r"`n_resamples` would need [\d.e+]+ TiB .*lazy=True"),
        Case("evaluq.io.as_table", "a number", lambda: as_table(42), "`data`"),
        Case("evaluq.io.as_table", "None", lambda: as_table(None), "`data`"),
        Case("evaluq.io.as_table", "a missing file",
             lambda: as_table("/nonexistent/x.csv"), r"x\.csv",
             errors=(FileNotFoundError, ValueError)),
        Case("evaluq.io.as_table", "name not a string",
             lambda: as_table(pd.DataFrame({"a": [1]}), name=5), "`name`"),
        Case("evaluq.predictions.metric_bounds", "unknown metric: None, as documented",
             lambda: _none_as_documented(predictions.metric_bounds("bogus"))),
        Case("evaluq.predictions.metric_bounds", "a number",
             lambda: predictions.metric_bounds(42), "`metric`"),
    ]


def _others() -> list[Case]:
    """Modules other helpers edit: failures are strict xfails (the census lists them)."""
    def write_text() -> Any:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "fit.nc")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("x\n")
            return eq.load_judge_fit(path)
    R = "evaluq.ratings.fit_judged_ratings"
    return [
        Case(R, "not a table", lambda: eq.ratings.fit_judged_ratings(42), "`votes`"),
        Case(R, "missing column",
             lambda: eq.ratings.fit_judged_ratings(votes(), judge="who"), "`judge`"),
        Case(R, "lam 2", lambda: eq.ratings.fit_judged_ratings(votes(), lam=2.0), "`lam`"),
        Case(R, "lam NaN", lambda: eq.ratings.fit_judged_ratings(votes(), lam=NAN), "`lam`"),
        Case(R, "confidence_level 1",
             lambda: eq.ratings.fit_judged_ratings(votes(), confidence_level=1),
             "`confidence_level`"),
        Case(R, "unknown scale",
             lambda: eq.ratings.fit_judged_ratings(votes(), scale="bogus"), "`scale`"),
        Case(R, "empty", lambda: eq.ratings.fit_judged_ratings(votes().iloc[:0]), ARG),
        Case(R, "n_resamples 10**12 (huge)",
             lambda: eq.ratings.fit_judged_ratings(votes(), n_resamples=HUGE), MEM),
        Case("evaluq.judged_means", "unknown method",
             lambda: eq.judged_means(judge_table(), method="bogus"), "`method`"),
        Case("evaluq.judged_means", "missing column",
             lambda: eq.judged_means(judge_table(), judge="who"), "`judge`"),
        Case("evaluq.judged_means", "lam NaN",
             lambda: eq.judged_means(judge_table(), lam=NAN), "`lam`"),
        Case("evaluq.judged_means", "empty",
             lambda: eq.judged_means(judge_table().iloc[:0]), ARG),
        Case("evaluq.ppi_mean", "n_draws 10**12 (huge)",
             lambda: eq.ppi_mean([1, 0, 1, 1], [1, 0, 1, 0], [1, 1, 0], n_draws=HUGE), MEM),
        Case("evaluq.label_budget", "power 1.5",
             lambda: eq.label_budget([1, 0, 1, 1], [1, 0, 1, 0], width=0.1, power=1.5),
             "`power`"),
        Case("evaluq.label_budget", "width -1",
             lambda: eq.label_budget([1, 0, 1, 1], [1, 0, 1, 0], width=-1.0), "`width`"),
        Case("evaluq.load_judge_fit", "a text file", write_text, "`path`"),
        Case("evaluq.fit_ratings", "n_resamples 10**12 (huge)",
             lambda: eq.fit_ratings(votes().assign(winner=lambda t: t.judge),
                                   n_resamples=HUGE),
             MEM),
        Case("evaluq.reporting.sections.Section", "no fields", lambda: sections.Section(),
             "required positional argument"),
        Case("evaluq.reporting.sections.render_page", "blocks a number",
             lambda: sections.render_page("t", 5), "`blocks`"),
        Case("evaluq.reporting.sections.render_page", "title None",
             lambda: sections.render_page(None, []), "`title`"),
        Case("evaluq.reporting.sections.item_tables", "not a dataset",
             lambda: sections.item_tables("x"), "`items`"),
    ]


def _memory() -> list[Case]:
    """Issue 35 item 5: every size argument that scales an allocation, at 10**12 (or a size
    past the budget): refused at once with the memory it needs, never allocated."""
    from evaluq import agreement, dirichlet, metrics
    from evaluq import measurement_error as me

    from .corpus import COUNTS, Q3, RATINGS, P, Y
    t, pr = np.array([0.1, 0.5, 0.9]), np.array([0.2, 0.4, 0.8])
    return [
        Case("evaluq.agreement.cohen_kappa", "n_resamples 10**12 (huge)",
             lambda: agreement.cohen_kappa(Y, P, n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.agreement.krippendorff_alpha", "n_resamples 10**12 (huge)",
             lambda: agreement.krippendorff_alpha(RATINGS, n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.agreement.icc", "n_resamples 10**12 (huge)",
             lambda: agreement.icc(RATINGS, n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.dirichlet.model_ranking", "n_resamples 10**12 (huge)",
             lambda: dirichlet.model_ranking(COUNTS, {"a": Q3, "b": Q3[::-1]},
                                             n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.dirichlet.monte_carlo_expectation", "n_draws 10**12 (huge)",
             lambda: dirichlet.monte_carlo_expectation(COUNTS, Q3, metric="emd",
                                                       n_draws=HUGE, rng=0), MEM),
        Case("evaluq.dirichlet.expected_jsd", "n_nodes 10**12 (huge)",
             lambda: dirichlet.expected_jsd(COUNTS, Q3, n_nodes=HUGE),
             r"`n_nodes` must be <= 8192"),
        Case("evaluq.measurement_error.mse_distribution", "n_draws 10**12 (huge)",
             lambda: me.mse_distribution(t, pr, 0.5, method="monte_carlo", n_draws=HUGE,
                                         rng=0), MEM),
        Case("evaluq.metrics.confusion_matrix", "n_classes 10**7 (huge)",
             lambda: metrics.confusion_matrix(np.array([0, 1]), np.array([0, 1]), 10**7),
             r"`n_classes`"),
        Case("evaluq.from_summary", "n_seeds 10**12 (no allocation)",
             lambda: eq.from_summary(pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"],
                                                   "mean": [1.0, 2.0], "sd_seed": [0.1, 0.2],
                                                   "sd_boot": [0.1, 0.2]}), n_seeds=HUGE),
             FINITE),    # a count in closed forms: nothing is allocated per seed
        Case("evaluq.Experiment", "run(n_resamples=10**12) (huge)",
             lambda: small_experiment().run(metrics=["accuracy"], n_resamples=HUGE, rng=0), MEM),
        Case("evaluq.pass_at_k", "k 10**9 on counts of 10**9 attempts (huge)",
             lambda: eq.pass_at_k(np.array([5, 7]), 10**9, trials=[10**9, 10**9]),
             r"`k`"),
    ]


def _battery() -> list[Case]:
    """The same malformed inputs for every array function of a family (issue 35 item 2: 5-15
    cases a function): text, NaN, empty, lengths that differ, None, out-of-range options."""
    from evaluq import dirichlet, intervals, metrics
    from evaluq import measurement_error as me

    from .corpus import COUNTS, Q3, SOFT_P, SOFT_T, P, Y
    c: list[Case] = []
    M = "evaluq.metrics."
    for name in ("accuracy", "f1", "precision", "recall"):
        fn = getattr(metrics, name)
        c += [Case(M + name, "text predictions", lambda fn=fn: fn(Y, ["a"] * len(Y)), ARG),
              Case(M + name, "NaN target", lambda fn=fn: fn(np.r_[Y[:-1], NAN], P), ARG),
              Case(M + name, "empty", lambda fn=fn: fn([], []), ARG),
              Case(M + name, "lengths differ", lambda fn=fn: fn(Y, P[:-2]), ARG),
              Case(M + name, "None", lambda fn=fn: fn(None, P), ARG)]
    for name in ("precision", "recall", "f1"):
        fn = getattr(metrics, name)
        c += [Case(M + name, "unknown average", lambda fn=fn: fn(Y, P, average="mean"),
                   "`average`"),
              Case(M + name, "target_class not a label",
                   lambda fn=fn: fn(Y, P, target_class=7), "`target_class` 7 is not one"),
              Case(M + name, "target_class with average=None",
                   lambda fn=fn: fn(Y, P, average=None, target_class=1), "`target_class`")]
    for name in ("cross_entropy", "kl", "emd", "js_distance", "js_divergence",
                 "entropy_correlation", "entropy_similarity"):
        fn = getattr(metrics, name)
        c += [Case(M + name, "rows not summing to 1", lambda fn=fn: fn(SOFT_T * 2, SOFT_P), ARG),
              Case(M + name, "a negative probability",
                   lambda fn=fn: fn(SOFT_T, SOFT_P - 0.5), ARG),
              Case(M + name, "NaN", lambda fn=fn: fn(SOFT_T, SOFT_P * NAN), ARG),
              Case(M + name, "shapes differ", lambda fn=fn: fn(SOFT_T, SOFT_P[:2]), ARG),
              Case(M + name, "text", lambda fn=fn: fn([["a", "b"]], SOFT_P[:1]), ARG),
              Case(M + name, "empty", lambda fn=fn: fn(np.zeros((0, 2)), np.zeros((0, 2))),
                   ARG)]
    for name in ("mae", "mse"):
        fn = getattr(metrics, name)
        c += [Case(M + name, "NaN", lambda fn=fn: fn([1.0, NAN], [1.0, 2.0]), ARG),
              Case(M + name, "inf", lambda fn=fn: fn([1.0, np.inf], [1.0, 2.0]), ARG),
              Case(M + name, "text", lambda fn=fn: fn(["a"], [1.0]), ARG),
              Case(M + name, "lengths differ", lambda fn=fn: fn([1.0, 2.0], [1.0]), ARG),
              Case(M + name, "empty", lambda fn=fn: fn([], []), ARG)]
    t, pr = [1.0, 2.0, 3.0], [1.5, 2.0, 2.0]
    E = "evaluq.measurement_error."
    for name in ("expected_mse", "var_mse", "expected_mae", "var_mae", "mse_distribution"):
        fn = getattr(me, name)
        c += [Case(E + name, "sigma NaN", lambda fn=fn: fn(t, pr, NAN), "`sigma`"),
              Case(E + name, "sigma negative", lambda fn=fn: fn(t, pr, -0.5), "`sigma`"),
              Case(E + name, "text targets", lambda fn=fn: fn(["a"] * 3, pr, 0.5), "`targets`"),
              Case(E + name, "lengths differ", lambda fn=fn: fn(t, pr[:2], 0.5), ARG),
              Case(E + name, "empty", lambda fn=fn: fn([], [], 0.5), ARG),
              Case(E + name, "inf prediction", lambda fn=fn: fn(t, [1.0, np.inf, 2.0], 0.5),
                   "`predictions`")]
    for name in ("expected_accuracy", "var_accuracy", "accuracy_distribution"):
        fn = getattr(me, name)
        c += [Case(E + name, "q NaN", lambda fn=fn: fn(Y, P, q=NAN), "`q`"),
              Case(E + name, "q text", lambda fn=fn: fn(Y, P, q="high"), "`q`"),
              Case(E + name, "lengths differ", lambda fn=fn: fn(Y, P[:3], q=0.1), ARG),
              Case(E + name, "empty", lambda fn=fn: fn([], [], q=0.1), ARG),
              Case(E + name, "transition not square",
                   lambda fn=fn: fn(Y, P, transition=np.full((2, 3), 1 / 3)), "`transition`"),
              Case(E + name, "transition smaller than the labels",
                   lambda fn=fn: fn(np.array([0, 2, 1]), np.array([0, 1, 2]),
                                    transition=np.eye(2)), ARG)]
    IV = "evaluq.intervals."
    c += [Case(IV + "t_interval", "text", lambda: intervals.t_interval(["a", "b"]), "`x`"),
          Case(IV + "t_interval", "empty", lambda: intervals.t_interval([]), "`x`"),
          Case(IV + "t_interval", "confidence_level NaN",
               lambda: intervals.t_interval([1.0, 2.0], confidence_level=NAN),
               "`confidence_level`"),
          Case(IV + "t_interval", "bounds reversed",
               lambda: intervals.t_interval([1.0, 2.0], bounds=(1, 0)), "`bounds`"),
          Case(IV + "t_interval", "unknown dim",
               lambda: intervals.t_interval(xr.DataArray([1.0, 2.0], dims="x"), dim="y"),
               "`dim`|'y'"),
          Case(IV + "prob_above", "text", lambda: intervals.prob_above(["a"], 0.5), "`x`"),
          Case(IV + "prob_above", "threshold text",
               lambda: intervals.prob_above([1.0, 2.0], "a"), "`threshold`"),
          Case(IV + "arf_interval", "lengths differ",
               lambda: intervals.arf_interval([0.5, 0.6], [0.5, 0.6, 0.7], k=1.0), ARG),
          Case(IV + "arf_interval", "unknown distribution",
               lambda: intervals.arf_interval([0.5], [0.5], k=1.0, distribution="cauchy"),
               "`distribution`"),
          Case(IV + "arf_alpha", "k text", lambda: intervals.arf_alpha("a"), "`k`"),
          Case(IV + "arf_alpha", "k NaN", lambda: intervals.arf_alpha(NAN), "`k`"),
          Case(IV + "arf_k", "alpha 0", lambda: intervals.arf_k(0.0), "`arf_alpha`"),
          Case(IV + "arf_k", "alpha NaN", lambda: intervals.arf_k(NAN), "`arf_alpha`")]
    D = "evaluq.dirichlet."
    for name in ("expected_cross_entropy", "expected_kl", "expected_emd", "expected_jsd"):
        fn = getattr(dirichlet, name)
        c += [Case(D + name, "q of another class count", lambda fn=fn: fn(COUNTS, Q3[:, :2]),
                   ARG),
              Case(D + name, "q NaN", lambda fn=fn: fn(COUNTS, Q3 * NAN), "`q`"),
              Case(D + name, "counts text", lambda fn=fn: fn([["a", "b", "c"]], Q3[:1]),
                   "`counts`"),
              Case(D + name, "prior negative", lambda fn=fn: fn(COUNTS, Q3, prior=-1.0),
                   "`prior`")]
    for name in ("expected_entropy", "expected_probs"):
        fn = getattr(dirichlet, name)
        c += [Case(D + name, "counts NaN", lambda fn=fn: fn(COUNTS * NAN), "`counts`"),
              Case(D + name, "counts text", lambda fn=fn: fn([["a", "b"]]), "`counts`"),
              Case(D + name, "empty", lambda fn=fn: fn(np.zeros((0, 3))), ARG),
              Case(D + name, "prior NaN", lambda fn=fn: fn(COUNTS, prior=NAN), "`prior`")]
    c += [Case(D + "empirical_metric", "unknown metric",
               lambda: dirichlet.empirical_metric(COUNTS, Q3, metric="bogus"), "`metric`"),
          Case(D + "empirical_metric", "q NaN",
               lambda: dirichlet.empirical_metric(COUNTS, Q3 * NAN, metric="emd"), "`q`"),
          Case(D + "counts_from_annotations", "n_classes 0",
               lambda: dirichlet.counts_from_annotations([[0, 1]], n_classes=0), "`n_classes`"),
          Case(D + "counts_from_annotations", "text labels",
               lambda: dirichlet.counts_from_annotations([["a"]], n_classes=2),
               "`annotations`"),
          Case(D + "by_annotation_count", "bins not increasing",
               lambda: dirichlet.by_annotation_count(
                   xr.DataArray([1.0, 2.0], dims="item"), [1, 2], bins=(5, 2)), "`bins`"),
          Case(D + "by_annotation_count", "n_annotations of another length",
               lambda: dirichlet.by_annotation_count(
                   xr.DataArray([1.0, 2.0], dims="item"), [1, 2, 3]), "`n_annotations`")]
    return c


def _cube_battery() -> list[Case]:
    """Every cube function of the analyses, given what is not a cube of scores: a table, None,
    a dataset without ``score``, a cube of NaN only, the resampled dataset, and (where the
    function needs replicates or seeds) a summary cube."""
    def frame() -> pd.DataFrame:
        return pd.DataFrame({"model": ["a"], "language": ["x"], "score": [1.0]})

    def all_nan() -> xr.Dataset:
        return cube().assign(score=lambda d: d.score * NAN)

    def no_score() -> xr.Dataset:
        return cube().drop_vars("score")

    def summary() -> xr.Dataset:
        from .corpus import summary_df
        return eq.from_summary(summary_df(), n_seeds=2)

    fns: dict[str, Any] = {
        "evaluq.variance_components": eq.variance_components,
        "evaluq.resample": lambda c: eq.resample(c, n_resamples=20, rng=0),
        "evaluq.friedman_test": eq.friedman_test,
        "evaluq.critical_difference": eq.critical_difference,
        "evaluq.interval_estimates": lambda c: eq.interval_estimates(c, n_resamples=20, rng=0),
        "evaluq.performance_profile": lambda c: eq.performance_profile(c, [0.5],
                                                                       n_resamples=20, rng=0),
        "evaluq.probability_of_improvement": lambda c: eq.probability_of_improvement(
            c, n_resamples=20, rng=0),
        "evaluq.multi_aso": lambda c: eq.multi_aso(c, n_resamples=20, rng=0),
        "evaluq.bayesian_signed_rank": lambda c: eq.bayesian_signed_rank(c, "m0", "m1",
                                                                         n_samples=100, rng=0),
        "evaluq.power.design": power.design,
        "evaluq.power.compute_allocation": power.compute_allocation,
        "evaluq.power.minimum_detectable_effect": power.minimum_detectable_effect,
        "evaluq.hierarchical.cube_statistics": hierarchical.cube_statistics,
        "evaluq.fit_hierarchical": lambda c: eq.fit_hierarchical(c, draws=10, tune=10,
                                                                 chains=1),
    }
    needs_replicates = {"evaluq.power.design", "evaluq.power.compute_allocation",
                        "evaluq.power.minimum_detectable_effect"}
    bad = {"a DataFrame": frame, "None": lambda: None, "no score variable": no_score,
           "scores all NaN": all_nan, "the resampled dataset": resampled}
    # eq.validate (evaluq._schema) names the variable or dim, not the argument: the census
    # counts those messages as "unnamed"
    named = ARG + r"|the cube has no 'score'|variable 'score'"
    c = [Case(name, f"cube battery: {label}", lambda fn=fn, make=make: fn(make()), named)
         for name, fn in fns.items() for label, make in bad.items()]
    c += [Case(name, "cube battery: a summary cube (no replicates)",
               lambda fn=fns[name]: fn(summary()), ARG) for name in sorted(needs_replicates)]
    return c


def _plots_battery() -> list[Case]:
    """Every plot of the modules this work owns (not plots/ratings.py), given None, a table,
    an empty dataset, and (where a valid result is cheap) ``title=5`` and ``ax="ax"``."""
    import matplotlib.pyplot as plt

    from evaluq import plots

    def closing(call: Any) -> Any:
        def run() -> Any:
            try:
                return call()
            finally:
                plt.close("all")
        return run

    first = {
        "annotation_bins": plots.annotation_bins,
        "bayesian_comparison": plots.bayesian_comparison,
        "critical_difference_diagram": plots.critical_difference_diagram,
        "forest_plot": plots.forest_plot,
        "interval_estimates_panel": plots.interval_estimates_panel,
        "mde_plot": plots.mde_plot,
        "performance_profile_plot": plots.performance_profile_plot,
        "posterior_differences": plots.posterior_differences,
        "probability_of_improvement_plot": plots.probability_of_improvement_plot,
        "rank_heatmap": plots.rank_heatmap,
        "resample_histogram": plots.resample_histogram,
        "scarce_intervals": plots.scarce_intervals,
        "tier_diagram": plots.tier_diagram,
        "variance_bars": plots.variance_bars,
    }
    bad = {"None": lambda: None, "a DataFrame": lambda: pd.DataFrame({"a": [1.0]}),
           "an empty dataset": xr.Dataset}
    c = [Case(f"evaluq.plots.{name}", f"plots battery: {label}",
              closing(lambda fn=fn, make=make: fn(make())), ARG)
         for name, fn in first.items() for label, make in bad.items()]
    valid = {"forest_plot": lambda: eq.pairwise_differences(eq.aggregate(resampled())),
             "rank_heatmap": lambda: eq.rank_distribution(eq.aggregate(resampled())),
             "critical_difference_diagram": lambda: eq.critical_difference(cube()),
             "performance_profile_plot": lambda: eq.performance_profile(
                 cube(), [0.5], n_resamples=20, rng=0)}
    for name, make in valid.items():
        fn = first[name]
        c += [Case(f"evaluq.plots.{name}", "plots battery: title=5",
                   closing(lambda fn=fn, make=make: fn(make(), title=5)), "`title`"),
              Case(f"evaluq.plots.{name}", "plots battery: ax='ax'",
                   closing(lambda fn=fn, make=make: fn(make(), ax="ax")), "`ax`")]
    return c


def _tables_tests_battery() -> list[Case]:
    """The tables, bootstrap_test and the agreement statistics: wrong types, empty, NaN,
    unknown options, out-of-range levels."""
    from evaluq import agreement, tables

    from .corpus import RATINGS
    T = "evaluq.tables."
    table = lambda: eq.variance_table(eq.variance_components(cube()))  # noqa: E731
    c = [Case(T + "to_latex", "None", lambda: tables.to_latex(None), "`table`"),
         Case(T + "to_latex", "digits -1", lambda: tables.to_latex(table(), digits=-1),
              "`digits`"),
         Case(T + "to_latex", "digits '3'", lambda: tables.to_latex(table(), digits="3"),
              "`digits`"),
         Case(T + "to_latex", "caption 5", lambda: tables.to_latex(table(), caption=5),
              "`caption`"),
         Case(T + "to_latex", "index 'yes'", lambda: tables.to_latex(table(), index="yes"),
              "`index`"),
         Case(T + "to_markdown", "None", lambda: tables.to_markdown(None), "`table`"),
         Case(T + "to_markdown", "digits -1", lambda: tables.to_markdown(table(), digits=-1),
              "`digits`"),
         Case(T + "to_markdown", "caption 5", lambda: tables.to_markdown(table(), caption=5),
              "`caption`"),
         Case(T + "caption", "a number", lambda: tables.caption(5), "`table`"),
         Case(T + "whole_ranks", "a number", lambda: tables.whole_ranks(5), "`table`"),
         Case(T + "write", "unknown format",
              lambda: tables.write(table(), os.path.join(tempfile.gettempdir(), "t"),
                                   formats=["pdf"]), "`formats`"),
         Case(T + "write", "stem a number", lambda: tables.write(table(), 5), "`stem`"),
         Case(T + "write", "a folder that does not exist",
              lambda: tables.write(table(), "/nonexistent/dir/t"), "`stem`",
              errors=(ValueError, TypeError, FileNotFoundError))]
    y0, y1 = np.array([0, 1, 1, 0] * 10), np.array([0, 1, 0, 0] * 10)
    y2 = np.array([0, 1, 1, 1] * 10)
    BT = "evaluq.bootstrap_test"
    c += [Case(BT, "text predictions against numeric targets",
               lambda: eq.bootstrap_test(y0, ["a"] * 40, y2, metrics="accuracy", rng=0), ARG),
          Case(BT, "lengths differ",
               lambda: eq.bootstrap_test(y0, y1[:-4], y2, metrics="accuracy", rng=0), ARG),
          Case(BT, "empty", lambda: eq.bootstrap_test([], [], [], metrics="accuracy", rng=0),
               ARG),
          Case(BT, "unknown method",
               lambda: eq.bootstrap_test(y0, y1, y2, metrics="accuracy", method="bogus", rng=0),
               "`method`"),
          Case(BT, "unknown metric",
               lambda: eq.bootstrap_test(y0, y1, y2, metrics="bleu", rng=0), "`metric"),
          Case(BT, "sample_size 0",
               lambda: eq.bootstrap_test(y0, y1, y2, metrics="accuracy", sample_size=0, rng=0),
               "`sample_size`"),
          Case(BT, "sample_size 2",
               lambda: eq.bootstrap_test(y0, y1, y2, metrics="accuracy", sample_size=2, rng=0),
               "`sample_size`"),
          Case(BT, "confidence_level 1",
               lambda: eq.bootstrap_test(y0, y1, y2, metrics="accuracy", confidence_level=1,
                                         rng=0), "`confidence_level`"),
          Case(BT, "unknown kind",
               lambda: eq.bootstrap_test(y0, y1, y2, kind="fuzzy", rng=0), "`kind`"),
          Case(BT, "NaN prediction",
               lambda: eq.bootstrap_test(y0, np.r_[y1[:-1], NAN], y2, metrics="accuracy",
                                         rng=0), ARG)]
    AG = "evaluq.agreement."
    c += [Case(AG + "cohen_kappa", "text and numbers",
               lambda: agreement.cohen_kappa(["a", "b"], [0, 1], n_resamples=10), ARG),
          Case(AG + "cohen_kappa", "empty",
               lambda: agreement.cohen_kappa([], [], n_resamples=10), ARG),
          Case(AG + "cohen_kappa", "unknown weights",
               lambda: agreement.cohen_kappa([0, 1, 1], [0, 1, 0], weights="cubic",
                                             n_resamples=10), "`weights`"),
          Case(AG + "icc", "text ratings", lambda: agreement.icc([["a", "b"], ["c", "d"]],
                                                                 n_resamples=10), "`ratings`"),
          Case(AG + "icc", "one item", lambda: agreement.icc(RATINGS[:1], n_resamples=10), ARG),
          Case(AG + "icc", "confidence_level 2",
               lambda: agreement.icc(RATINGS, confidence_level=2, n_resamples=10),
               "`confidence_level`"),
          Case(AG + "icc", "1-D ratings", lambda: agreement.icc(RATINGS[:, 0], n_resamples=10),
               "`ratings`"),
          Case(AG + "krippendorff_alpha", "unknown level",
               lambda: agreement.krippendorff_alpha(RATINGS, level_of_measurement="ratio",
                                                    n_resamples=10),
               "`level_of_measurement`"),
          Case(AG + "krippendorff_alpha", "text ratings",
               lambda: agreement.krippendorff_alpha([["a", "b"], ["c", "d"]], n_resamples=10),
               "`ratings`"),
          Case(AG + "krippendorff_alpha", "all NaN",
               lambda: agreement.krippendorff_alpha(RATINGS * NAN, n_resamples=10), ARG),
          Case(AG + "krippendorff_alpha", "value_domain missing a value",
               lambda: agreement.krippendorff_alpha(RATINGS, value_domain=[1, 2],
                                                    n_resamples=10), "`value_domain`|`ratings`")]
    return c


def small_experiment() -> Any:
    """A two-system experiment of 40 targets (one run each)."""
    exp = eq.Experiment()
    targets = np.array([0, 1, 1, 0] * 10)
    exp.feed("base", run=0, targets=targets, predictions=np.array([0, 1, 0, 0] * 10))
    exp.feed("base", h1="new", run=0, targets=targets,
             predictions=np.array([0, 1, 1, 1] * 10))
    return exp


# Known failures in modules this work did not edit (issue 35; other helpers edit item_model,
# ratings, judges, reporting; items, predictions, simulate and demo were left to their owners):
# "name:label" -> reason, from the census (tests/bad_input/census.py); each a strict xfail.
_MEM = "issue 35 item 5: allocates (n x data) at once, neither chunked nor refused"
XFAIL: dict[str, str] = {}
HANGS: set[str] = set()


def surface_cases() -> list[Case]:
    cases = [*_field(), *_hierarchical(), *_small_samples(), *_power(), *_cube_pipeline(),
             *_items(), *_demo_io(), *_others(), *_memory(), *_battery(), *_cube_battery(),
             *_plots_battery(), *_tables_tests_battery()]
    stale = set(XFAIL) - {f"{c.name}:{c.label}" for c in cases}
    assert not stale, f"XFAIL entries naming no case: {sorted(stale)}"
    return [Case(c.name, c.label, c.call, c.match, XFAIL.get(f"{c.name}:{c.label}", c.xfail),
                 c.errors, f"{c.name}:{c.label}" in HANGS) for c in cases]


__all__ = ["FINITE", "surface_cases"]

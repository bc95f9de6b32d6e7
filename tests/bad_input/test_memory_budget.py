"""Issue 35 item 5: every size argument that scales an allocation with the data is checked
against evaluq's memory budget (``EVALUQ_MEMORY_BUDGET``) before anything is drawn.

With the budget lowered to 16 KiB, ordinary sizes must be refused, naming the argument, the
memory needed and the budget: so the guard is computed from the sizes (not hard-wired to
absurd ones) and it runs before the allocation. The corpus (``corpus_surface._memory`` and
the other ``10**12`` cases) calls the same functions at sizes no machine holds, under the
default budget: an unguarded one would be killed or run for hours.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq import agreement, dirichlet, metrics
from evaluq import measurement_error as me
from evaluq._validation import MEMORY_BUDGET_ENV
from evaluq.small_samples import interval_coverage

from . import corpus
from .corpus import COUNTS, Q3, RATINGS, P, Y
from .corpus_surface import small_experiment

A = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1] * 3)
B = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1, 0] * 3)
FOLDS_A = np.random.default_rng(1).normal(0.0, 1.0, 10)
FOLDS_B = FOLDS_A + 0.5


@functools.cache
def cube() -> xr.Dataset:
    """The small simulated cube, built once, before a test lowers the budget (simulating it
    is checked against the budget too)."""
    return corpus.cube()


# (argument refused, call) at ordinary sizes
CALLS = {
    "resample": ("n_resamples", lambda: eq.resample(cube(), n_resamples=1000, rng=0)),
    "bayesian_signed_rank": ("n_samples", lambda: eq.bayesian_signed_rank(
        cube(), "m0", "m1", n_samples=1000, rng=0)),
    "correlated_t_test": ("n_samples", lambda: eq.correlated_t_test(
        FOLDS_A, FOLDS_B, n_samples=2000, rng=0)),
    "hierarchical_t_test": ("draws", lambda: eq.hierarchical_t_test(
        cube(), "m0", "m1", draws=200, chains=2, rng=0)),
    "aso n_resamples": ("n_resamples", lambda: eq.aso(FOLDS_A, FOLDS_B, n_resamples=100,
                                                       rng=0)),
    "aso dt": ("dt", lambda: eq.aso(FOLDS_A, FOLDS_B, dt=1e-4, rng=0)),
    "multi_aso": ("n_resamples", lambda: eq.multi_aso(cube(), n_resamples=100, rng=0)),
    "interval_estimates": ("n_resamples", lambda: eq.interval_estimates(
        cube(), n_resamples=1000, rng=0)),
    "performance_profile": ("n_resamples", lambda: eq.performance_profile(
        cube(), [0.5], n_resamples=1000, rng=0)),
    "probability_of_improvement": ("n_resamples", lambda: eq.probability_of_improvement(
        cube(), n_resamples=1000, rng=0)),
    "fit_hierarchical": ("draws", lambda: eq.fit_hierarchical(cube(), draws=100, chains=2)),
    "bootstrap_test": ("n_resamples", lambda: eq.bootstrap_test(
        np.array([0, 1, 1, 0] * 10), np.array([0, 1, 0, 0] * 10),
        np.array([0, 1, 1, 1] * 10), metrics="accuracy", n_resamples=1000, rng=0)),
    "Experiment.run": ("n_resamples", lambda: small_experiment().run(
        metrics=["accuracy"], n_resamples=1000, rng=0)),
    "cohen_kappa": ("n_resamples", lambda: agreement.cohen_kappa(Y, P, n_resamples=1000,
                                                                 rng=0)),
    "krippendorff_alpha": ("n_resamples", lambda: agreement.krippendorff_alpha(
        RATINGS, n_resamples=1000, rng=0)),
    "icc": ("n_resamples", lambda: agreement.icc(RATINGS, n_resamples=1000, rng=0)),
    "model_ranking": ("n_resamples", lambda: dirichlet.model_ranking(
        COUNTS, {"a": Q3, "b": Q3[::-1]}, n_resamples=1000, rng=0)),
    "monte_carlo_expectation": ("n_draws", lambda: dirichlet.monte_carlo_expectation(
        COUNTS, Q3, metric="emd", n_draws=1000, rng=0)),
    "mse_distribution": ("n_draws", lambda: me.mse_distribution(
        np.array([0.1, 0.5]), np.array([0.2, 0.4]), 0.5, method="monte_carlo",
        n_draws=10_000, rng=0)),
    "confusion_matrix": ("n_classes", lambda: metrics.confusion_matrix(
        np.array([0, 1]), np.array([0, 1]), 100)),
    "pass_at_k": ("k", lambda: eq.pass_at_k(np.array([5, 7]), 1000, trials=[2000, 2000])),
    "interval_coverage": ("trials", lambda: interval_coverage([10_000], 0.5)),
    "resample_histogram": ("bins", lambda: eq.plots.resample_histogram(
        eq.bootstrap_test(np.array([0, 1, 1, 0] * 10), np.array([0, 1, 0, 0] * 10),
                          np.array([0, 1, 1, 1] * 10), metrics="accuracy", n_resamples=50,
                          rng=0), bins=100)),
    "mde_grid": ("n_items", lambda: eq.power.mde_grid(
        eq.power.design_from_sds(sd_item=0.5, n_items=100), n_items=list(range(1, 200)),
        n_seeds=[1, 2, 3])),
    "bayes_paired_comparison": ("n_draws", lambda: eq.bayes_paired_comparison(
        A, B, n_draws=1000, rng=0)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_size_past_the_budget_is_refused_before_it_is_drawn(name, monkeypatch):
    argument, call = CALLS[name]
    cube()                                      # the input, built within the default budget
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "16K")
    with pytest.raises(ValueError, match=rf"`{argument}` would need [\d.]+ [KMGT]iB of memory "
                                         r"at once, above evaluq's memory budget of 16 KiB"):
        call()


def test_the_refusal_names_the_cure():
    with pytest.raises(ValueError, match=r"raise `dt` \(deepsig's default is 0.005\)"):
        eq.aso(FOLDS_A, FOLDS_B, dt=1e-12, rng=0)
    with pytest.raises(ValueError, match=r"lower `n_resamples`.*or pass lazy=True"):
        eq.resample(cube(), n_resamples=10**12, rng=0)
    with pytest.raises(ValueError, match=r"lower `draws` \(or `chains`\)"):
        eq.fit_hierarchical(cube(), draws=10**9)


def test_the_same_calls_run_within_the_default_budget():
    """The guard does not refuse what ran before it (the default budget, 2 GiB)."""
    for name in ("resample", "interval_estimates", "cohen_kappa", "monte_carlo_expectation",
                 "pass_at_k", "confusion_matrix", "bootstrap_test"):
        CALLS[name][1]()


def test_a_lazy_resample_is_not_held_to_the_budget(monkeypatch):
    cube()
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "16K")
    lazy = eq.resample(cube(), n_resamples=1000, rng=0, lazy=True)
    assert lazy.sizes["resample"] == 1000
    assert lazy.score.chunks is not None            # dask: drawn chunk by chunk on compute

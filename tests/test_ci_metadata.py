"""Every public result with a ``ci_bound`` dim carries the same interval metadata (issue 23):
the keys of ``_intervals.CI_METADATA_KEYS`` (``ci_kind``, a token of ``CI_KINDS``, and
``confidence_level``) on the interval and on its ``ci_bound`` coordinate, built in one place."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq import measurement_error as me
from evaluq._dims import CI_BOUND
from evaluq._intervals import CI_KIND, CI_KINDS, CI_METADATA_KEYS, CONFIDENCE_LEVEL


def _cube() -> xr.Dataset:
    return eq.simulate_cube(n_models=3, n_languages=3, n_seeds=2, n_boot=5, rng=0)


def _aggregate() -> xr.Dataset:
    return eq.aggregate(eq.resample(_cube(), n_resamples=30, rng=0), confidence_level=0.9)


RATINGS = np.array([[0, 1, 1, 2, 2, 0, 1, 2, 1, 0], [0, 1, 2, 2, 2, 0, 1, 2, 0, 0]]).T
Y = np.array([0, 1, 1, 0, 1, 0, 1, 1, 0, 1] * 4)

RESULTS: dict[str, Callable[[], xr.DataArray]] = {
    "aggregate": lambda: _aggregate()["ci"],
    "pairwise_differences": lambda: eq.pairwise_differences(_aggregate())["ci"],
    "pairwise_by_language": lambda: eq.pairwise_by_language(
        eq.resample(_cube(), n_resamples=30, rng=0))["ci"],
    "t_interval": lambda: eq.intervals.t_interval([76.85, 81.99, 80.1]).interval,
    "arf_interval": lambda: eq.intervals.arf_interval(85.2, 96.3, k=1.8).interval,
    "arf_interval(level)": lambda: eq.intervals.arf_interval(
        85.2, 96.3, k=1.8).confidence_interval(0.8),
    "cohen_kappa": lambda: eq.agreement.cohen_kappa(
        RATINGS[:, 0], RATINGS[:, 1], n_resamples=50, rng=0).interval,
    "krippendorff_alpha": lambda: eq.agreement.krippendorff_alpha(
        RATINGS.T, n_resamples=50, rng=0).interval,
    "icc": lambda: eq.agreement.icc(RATINGS, n_resamples=50, rng=0).interval,
    "bootstrap_test": lambda: eq.bootstrap_test(Y, Y, 1 - Y, n_resamples=50, rng=0).interval,
    "bootstrap_test(percentile)": lambda: eq.bootstrap_test(
        Y, Y, 1 - Y, n_resamples=50, rng=0).confidence_interval(0.9, kind="percentile"),
    "mse_distribution": lambda: me.mse_distribution(
        [1.0, 2.0, 3.0], [1.5, 2.0, 2.0], 0.3).confidence_interval(0.9),
    "accuracy_distribution": lambda: me.accuracy_distribution(
        Y, 1 - Y, q=0.1).confidence_interval(0.9),
    "proportion_interval": lambda: eq.proportion_interval([3, 28], [30, 30], method="wilson"),
    "proportion_interval(beta)": lambda: eq.proportion_interval(
        [3, 28], [30, 30], method="beta", confidence_level=0.9),
    "pass_at_k": lambda: eq.pass_at_k(np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 1]]),
                                      2).interval,
}


@pytest.mark.parametrize("name", list(RESULTS))
def test_every_interval_carries_the_same_metadata(name):
    ci = RESULTS[name]()
    assert ci.dims[-1] == CI_BOUND
    assert ci[CI_BOUND].values.tolist() == ["lower", "upper"]
    for where in (ci.attrs, ci[CI_BOUND].attrs):
        assert set(CI_METADATA_KEYS) <= set(where), (name, where)
        assert where[CI_KIND] in CI_KINDS
        assert 0 < where[CONFIDENCE_LEVEL] < 1
    assert "kind" not in ci.attrs  # the old spelling is gone


def test_the_datasets_say_the_same():
    for ds in (_aggregate(), eq.pairwise_differences(_aggregate())):
        assert ds.attrs[CI_KIND] == ds["ci"].attrs[CI_KIND] == "percentile"
        assert ds.attrs[CONFIDENCE_LEVEL] == ds["ci"].attrs[CONFIDENCE_LEVEL]

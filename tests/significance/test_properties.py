"""Property tests of bootstrap_test (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluq as eq

# small random label sets: a label only a system predicts is common, and its warning
# (tests/significance/test_stream.py checks it) is not what these properties test; nor is
# the warning about few items (8 to 60 here; test_bootstrap.py checks it)
pytestmark = [pytest.mark.filterwarnings("ignore::evaluq.metrics.UndefinedMetricWarning"),
              pytest.mark.filterwarnings("ignore::evaluq.SmallSampleWarning")]

labels = st.integers(min_value=2, max_value=4).flatmap(
    lambda k: st.tuples(st.integers(min_value=8, max_value=60), st.just(k),
                        st.integers(min_value=0, max_value=2**32 - 1)))


def _data(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    y = gen.integers(0, k, n)
    return y, gen.integers(0, k, n), np.where(gen.random(n) < 0.5, y, gen.integers(0, k, n))


@settings(max_examples=30, deadline=None)
@given(labels, st.sampled_from(["berg-kirkpatrick", "paired", "permutation"]))
def test_hard_results_do_not_depend_on_item_order(case, method):
    """Items are counted in cells, so reordering them changes nothing, to the last bit."""
    n, k, seed = case
    y, h0, h1 = _data(n, k, seed)
    order = np.random.default_rng(seed + 1).permutation(n)
    kw = {"metrics": ["accuracy", "f1"], "method": method, "n_resamples": 50, "rng": 3}
    if method == "berg-kirkpatrick":
        kw["sample_size"] = 0.5
    a = eq.bootstrap_test(y, h0, h1, **kw)
    b = eq.bootstrap_test(y[order], h0[order], h1[order], **kw)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)


@settings(max_examples=30, deadline=None)
@given(labels)
def test_swapping_systems_negates_delta(case):
    n, k, seed = case
    y, h0, h1 = _data(n, k, seed)
    a = eq.bootstrap_test(y, h0, h1, metrics=["accuracy", "recall"], method="permutation",
                          n_resamples=30, rng=0)
    b = eq.bootstrap_test(y, h1, h0, metrics=["accuracy", "recall"], method="permutation",
                          n_resamples=30, rng=0)
    np.testing.assert_allclose(a.delta, -b.delta, atol=1e-15)
    np.testing.assert_array_equal(a.h0_value, b.h1_value)
    assert np.all((a.pvalue > 0) & (a.pvalue <= 1))


@settings(max_examples=25, deadline=None)
@given(labels)
def test_pvalues_in_range_and_identical_systems(case):
    n, k, seed = case
    y, h0, _ = _data(n, k, seed)
    for method in ("paired", "permutation"):
        res = eq.bootstrap_test(y, h0, h0, metrics=["accuracy"], method=method,
                                n_resamples=20, rng=0)
        assert res.delta[0] == 0
        assert res.pvalue[0] == 1.0

"""Tests of eq.rank_distribution, eq.significance_groups and eq.leaderboard."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError


def _aggregated(values: np.ndarray, observed: np.ndarray | None = None,
                higher_is_better: int = 1) -> xr.Dataset:
    """A minimal eq.aggregate-like Dataset from a (resample, model) array."""
    n_r, n_m = values.shape
    obs = values.mean(axis=0) if observed is None else observed
    ds = xr.Dataset({"observed": ("model", obs), "resampled": (("resample", "model"), values),
                     "sd": ("model", values.std(axis=0, ddof=1) if n_r > 1 else np.zeros(n_m)),
                     "ci": (("model", "ci_bound"),
                            np.quantile(values, [0.025, 0.975], axis=0).T)},
                    coords={"model": [f"m{i}" for i in range(n_m)],
                            "ci_bound": ["lower", "upper"]})
    ds.attrs = {"higher_is_better": higher_is_better, "metric": "x"}
    return ds


def _brute_force(values: np.ndarray) -> np.ndarray:
    """P(rank = r) by a Python loop over resamples, ties sharing the spanned ranks evenly."""
    n_r, n_m = values.shape
    prob = np.zeros((n_m, n_m))
    for row in values:
        for m in range(n_m):
            lo = int((row > row[m]).sum())
            k = int((row == row[m]).sum())
            prob[m, lo:lo + k] += 1.0 / k
    return prob / n_r


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 30), st.integers(1, 6)),
                  elements=st.integers(0, 3)))
def test_rank_probabilities_sum_to_one(values):
    rd = eq.rank_distribution(_aggregated(values.astype(float)))
    prob = rd.probability.values
    np.testing.assert_allclose(prob.sum(axis=1), 1.0)        # over ranks, per model
    np.testing.assert_allclose(prob.sum(axis=0), 1.0)        # over models, per rank
    np.testing.assert_allclose(prob, _brute_force(values.astype(float)), atol=1e-12)
    # expected rank = mean over resamples of the average rank
    avg = np.mean([stats.rankdata(-row, method="average") for row in values], axis=0)
    np.testing.assert_allclose(rd.expected_rank, avg)
    np.testing.assert_allclose(rd.p_best, prob[:, 0])


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(4)))
def test_invariant_to_model_order(order):
    gen = np.random.default_rng(0)
    values = gen.normal(size=(200, 4)) + np.arange(4) * 0.3
    a = eq.rank_distribution(_aggregated(values))
    b = eq.rank_distribution(_aggregated(values).isel(model=list(order)))
    xr.testing.assert_allclose(a, b.sel(model=a.model))


def test_tie_rule_splits_evenly():
    values = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    rd = eq.rank_distribution(_aggregated(values))
    np.testing.assert_allclose(rd.probability, [[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1]])
    np.testing.assert_allclose(rd.observed_rank, [1.5, 1.5, 3])
    assert "share the ranks they span evenly" in rd.attrs["tie_rule"]


def test_orientation_from_attribute_and_argument():
    values = np.array([[3.0, 2.0, 1.0]] * 4)
    high = eq.rank_distribution(_aggregated(values))
    low = eq.rank_distribution(_aggregated(values, higher_is_better=0))
    np.testing.assert_allclose(high.expected_rank, [1, 2, 3])
    np.testing.assert_allclose(low.expected_rank, [3, 2, 1])
    override = eq.rank_distribution(_aggregated(values), higher_is_better=False)
    xr.testing.assert_allclose(override.probability, low.probability)
    assert low.attrs["higher_is_better"] == 0


def test_orientation_carried_from_cube():
    cube = eq.simulate_cube(n_models=3, model_means=[0.0, 2.0, 4.0], sigma_between=0.3,
                            rng=0)
    cube.attrs["higher_is_better"] = 0                 # e.g. an error rate
    agg = eq.aggregate(eq.resample(cube, n_resamples=500, rng=0))
    assert agg.attrs["higher_is_better"] == 0
    rd = eq.rank_distribution(agg)
    assert float(rd.p_best.sel(model="m0")) == 1.0


def test_matches_paper_style_example():
    cube = eq.simulate_cube(n_models=4, model_means=[0.0, 0.1, 2.0, 2.1], rng=3)
    rd = eq.rank_distribution(eq.aggregate(eq.resample(cube, n_resamples=2000, rng=3)))
    assert rd.probability.dims == ("model", "rank")
    assert list(rd["rank"].values) == [1, 2, 3, 4]
    np.testing.assert_allclose(rd.expected_rank, rd.probability.values @ np.arange(1, 5))


# --- significance groups and leaderboard ----------------------------------------------------------

def test_groups_rule():
    gen = np.random.default_rng(1)
    noise = gen.normal(0, 1, (4000, 4))
    # m0 and m1 inseparable; m2 is 10 SDs below m0; m3 inseparable from m2
    values = noise + np.array([10.0, 9.9, 0.0, -0.1])
    tiers = eq.significance_groups(_aggregated(values))
    assert tiers.to_series().to_dict() == {"m0": 1, "m1": 1, "m2": 2, "m3": 2}
    assert tiers.attrs["adjustment"] == "holm"
    one = eq.significance_groups(_aggregated(noise))
    assert set(one.values) == {1}
    low = eq.significance_groups(_aggregated(values, higher_is_better=0))
    assert low.to_series().to_dict() == {"m0": 2, "m1": 2, "m2": 1, "m3": 1}


def test_groups_chain_against_tier_top():
    # a chain: m1 is close to m0 and m2 is close to m1, but m2 is far from m0: m2 opens tier 2
    gen = np.random.default_rng(2)
    values = gen.normal(0, 1, (4000, 3)) + np.array([5.0, 3.0, 0.0])
    tiers = eq.significance_groups(_aggregated(values), adjustment="none")
    assert tiers.to_series().to_dict() == {"m0": 1, "m1": 1, "m2": 2}


def test_leaderboard():
    gen = np.random.default_rng(3)
    values = gen.normal(0, 1, (2000, 3)) + np.array([0.0, 10.0, 5.0])
    agg = _aggregated(values)
    board = eq.leaderboard(agg)
    assert list(board.index) == ["m1", "m2", "m0"]
    assert list(board["tier"]) == [1, 2, 3]
    assert list(board["observed_rank"]) == [1, 2, 3]
    np.testing.assert_allclose(board.loc["m1", "p_best"], 1.0)
    np.testing.assert_allclose(board.loc["m0", ["lower", "upper"]].to_numpy(dtype=float),
                               agg.ci.sel(model="m0").values)
    flipped = eq.leaderboard(agg, higher_is_better=False)
    assert list(flipped.index) == ["m0", "m2", "m1"]


@pytest.mark.parametrize(("func", "kwargs", "error", "match"), [
    (eq.significance_groups, {"alpha": 0.0}, ValueError, r"`alpha` must be in \(0, 1\)"),
    (eq.significance_groups, {"adjustment": "bonferroni"}, ValueError,
     "`adjustment` must be one of"),
    (eq.leaderboard, {"alpha": 1.5}, ValueError, r"`alpha` must be in \(0, 1\)"),
    (eq.leaderboard, {"adjustment": "x"}, ValueError, "`adjustment` must be one of"),
    (eq.rank_distribution, {"higher_is_better": 1}, TypeError,
     "`higher_is_better` must be True, False or None"),
])
def test_validation(func, kwargs, error, match):
    agg = _aggregated(np.random.default_rng(0).normal(size=(50, 3)))
    with pytest.raises(error, match=match):
        func(agg, **kwargs)


def test_nan_aggregates_rejected():
    values = np.random.default_rng(0).normal(size=(50, 3))
    values[3, 1] = np.nan
    with pytest.raises(CubeError, match="holds NaN aggregates.*`skipna=True` \\(if not done.*"
                                        "or resample with `languages='fixed'`"):
        eq.rank_distribution(_aggregated(values, observed=np.zeros(3)))
    with pytest.raises(CubeError, match=r"must be the result of eq\.aggregate"):
        eq.rank_distribution(xr.Dataset())


# --- the kernel: one sort per draw, counts by bincount (issue 13) ---------------------------------

@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 40), st.integers(1, 25)),
                  elements=st.integers(-3, 3)),
       st.integers(1, 64))
def test_rank_kernel_against_brute_force_with_ties_and_any_chunk(draws, chunk):
    """Many models, heavy ties, rows with and without ties in one chunk, any chunk size."""
    from evaluq import ranks

    values = draws.astype(float)
    values[::3] += np.arange(values.shape[1]) * 10.0    # every third draw has no tie
    expected = _brute_force(values)
    saved = ranks._RANK_CHUNK
    try:
        ranks._RANK_CHUNK = chunk * values.shape[1]        # ``chunk`` draws per pass
        prob = ranks._rank_probabilities(values.T)
    finally:
        ranks._RANK_CHUNK = saved
    np.testing.assert_allclose(prob, expected, atol=1e-12)
    np.testing.assert_array_equal(prob, ranks._rank_probabilities(values.T))  # chunk-invariant


def test_rank_kernel_signed_zeros_and_batches():
    from evaluq import ranks

    row = np.array([[0.0, -0.0, 1.0], [-0.0, 0.0, -1.0]])          # 0.0 == -0.0: a tie
    prob = ranks._rank_probabilities(np.stack([row.T, -row.T]))     # (batch 2, model, draw)
    np.testing.assert_allclose(prob[0], _brute_force(row), atol=1e-15)
    np.testing.assert_allclose(prob[1], _brute_force(-row), atol=1e-15)
    counts = ranks._rank_counts(np.stack([row.T, -row.T]))
    assert all(v.dtype == np.int64 for v in counts.values())


def test_the_leaderboard_caption_counts_the_resamples_it_was_given():
    """After ``.isel(resample=...)`` the caption said the resample's attribute (2,000), not
    the 200 draws it summarised."""
    cube = eq.simulate_cube(n_models=3, n_languages=4, rng=0)
    agg = eq.aggregate(eq.resample(cube, n_resamples=400, rng=0))
    board = eq.leaderboard(agg.isel(resample=slice(0, 200)))
    assert "over 200 resamples (" in board.attrs["caption"]
    assert "400" not in board.attrs["caption"]

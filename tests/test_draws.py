"""Pairwise differences and ranks on any draws: resamples, posterior (chain, draw), extra dims."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import evaluq as eq
from evaluq.errors import CubeError


@pytest.fixture(scope="module")
def aggregated() -> xr.Dataset:
    cube = eq.simulate_cube(n_models=4, model_means=[0.0, 0.3, 0.3, 2.0], n_languages=8,
                            sigma_between=0.5, rng=3)
    return eq.aggregate(eq.resample(cube, n_resamples=1200, rng=4))


def _as_posterior(agg: xr.Dataset, chains: int = 3) -> xr.DataArray:
    """The aggregate's resamples reshaped to (chain, draw, model), as a sampler returns them."""
    values = agg.resampled.transpose("resample", "model").values
    n_r, n_m = values.shape
    return xr.DataArray(values.reshape(chains, n_r // chains, n_m),
                        dims=("chain", "draw", "model"),
                        coords={"model": agg.model.values}, attrs=dict(agg.attrs))


def _equal(a: xr.Dataset, b: xr.Dataset) -> None:
    for name in a.data_vars:
        np.testing.assert_array_equal(a[name].values, b[name].values, err_msg=str(name))


def test_chain_draw_pairwise_equals_stacked(aggregated):
    post = _as_posterior(aggregated)
    stacked = eq.pairwise_differences(aggregated)
    chained = eq.pairwise_differences(post, sample_dims=("chain", "draw"),
                                      observed=aggregated.observed)
    _equal(stacked, chained)
    assert chained.attrs["sample_dims"] == "chain x draw"


def test_chain_draw_ranks_equal_stacked(aggregated):
    post = _as_posterior(aggregated)
    stacked = eq.rank_distribution(aggregated)
    chained = eq.rank_distribution(post, sample_dims=("chain", "draw"),
                                   observed=aggregated.observed)
    _equal(stacked, chained)


def test_dim_order_of_draws_does_not_matter(aggregated):
    post = _as_posterior(aggregated)
    a = eq.rank_distribution(post, sample_dims=("chain", "draw"))
    b = eq.rank_distribution(post.transpose("model", "draw", "chain"),
                             sample_dims=("chain", "draw"))
    np.testing.assert_allclose(a.probability, b.probability, atol=1e-15)
    np.testing.assert_allclose(a.expected_rank, b.expected_rank)


def test_observed_defaults_to_mean_of_draws(aggregated):
    post = _as_posterior(aggregated)
    pw = eq.pairwise_differences(post, sample_dims=("chain", "draw"))
    means = post.mean(("chain", "draw"))
    expected = means.values[:, None] - means.values[None, :]
    np.testing.assert_allclose(pw.observed.transpose("model", "model_b").values, expected)


def test_leaderboard_and_tiers_from_posterior_draws(aggregated):
    post = _as_posterior(aggregated)
    board = eq.leaderboard(aggregated)
    board_post = eq.leaderboard(post, sample_dims=("chain", "draw"),
                                observed=aggregated.observed)
    np.testing.assert_allclose(board.to_numpy(dtype=float), board_post.to_numpy(dtype=float))
    assert "95% percentile interval" in board.attrs["uncertainty"]
    tiers = eq.significance_groups(post, sample_dims=("chain", "draw"))
    assert tiers.sel(model="m3") == 1


def test_extra_dims_are_kept_and_ranked_within():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(2, 3, 500))                           # language, model, draw
    values[1] += np.array([3.0, 0.0, -3.0])[:, None]                 # a clear order on l1
    da = xr.DataArray(values, dims=("language", "model", "draw"),
                      coords={"language": ["l0", "l1"], "model": ["a", "b", "c"]})
    rd = eq.rank_distribution(da, sample_dims="draw")
    assert dict(rd.probability.sizes) == {"model": 3, "language": 2, "rank": 3}
    assert rd.p_best.sel(language="l1", model="a") > 0.95
    for lang in ("l0", "l1"):
        one = eq.rank_distribution(da.sel(language=lang), sample_dims="draw")
        np.testing.assert_allclose(rd.probability.sel(language=lang), one.probability)
    pw = eq.pairwise_differences(da, sample_dims="draw")
    assert dict(pw.p_holm.sizes) == {"model": 3, "model_b": 3, "language": 2}
    one = eq.pairwise_differences(da.sel(language="l1"), sample_dims="draw")
    np.testing.assert_allclose(pw.p_holm.sel(language="l1"), one.p_holm)


def test_single_model():
    da = xr.DataArray(np.random.default_rng(1).normal(size=(1, 100)), dims=("model", "draw"),
                      coords={"model": ["only"]})
    rd = eq.rank_distribution(da, sample_dims="draw")
    assert rd.probability.values.tolist() == [[1.0]]
    pw = eq.pairwise_differences(da, sample_dims="draw")
    assert pw.observed.values.tolist() == [[0.0]]
    assert eq.leaderboard(da, sample_dims="draw").tier.tolist() == [1]


def test_probabilities_exact_in_unit_interval():
    """Tied blocks make the difference array's cumulative sum round; the result never does."""
    rng = np.random.default_rng(5)
    values = rng.integers(0, 3, size=(7, 20_000)).astype(float)
    da = xr.DataArray(values, dims=("model", "resample"),
                      coords={"model": [f"m{i}" for i in range(7)]})
    prob = eq.rank_distribution(da).probability.values
    assert (prob >= 0).all()
    assert (prob <= 1).all()
    assert not np.signbit(prob).any()                                 # no -0.0
    ones = xr.DataArray(np.ones((5, 300)), dims=("model", "resample"),
                        coords={"model": list("abcde")})
    np.testing.assert_allclose(eq.rank_distribution(ones).probability.values,
                               np.full((5, 5), 0.2), rtol=1e-13)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 30), st.integers(1, 40)),
                  elements=st.integers(0, 4)))
def test_sort_ranks_match_pairwise_count(values):
    """The O(m log m) rank span equals counting every pair of models, ties included."""
    n_m = values.shape[0]
    da = xr.DataArray(values.astype(float), dims=("model", "resample"),
                      coords={"model": [f"m{i}" for i in range(n_m)]})
    prob = eq.rank_distribution(da).probability.values
    expected = np.zeros((n_m, n_m))
    for row in values.T:
        better = (row[None, :] > row[:, None]).sum(axis=1)
        ties = (row[None, :] == row[:, None]).sum(axis=1)
        for m in range(n_m):
            expected[m, better[m]:better[m] + ties[m]] += 1.0 / ties[m]
    np.testing.assert_allclose(prob, expected / values.shape[1], atol=1e-12)


def test_lower_is_better_from_attrs():
    da = xr.DataArray([[1.0, 1.1, 0.9], [5.0, 5.2, 4.9]], dims=("model", "resample"),
                      coords={"model": ["low", "high"]}, attrs={"higher_is_better": 0})
    assert float(eq.rank_distribution(da).p_best.sel(model="low")) == 1.0
    assert float(eq.rank_distribution(da, higher_is_better=True).p_best.sel(model="high")) == 1


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda da: eq.rank_distribution(da, sample_dims=("chain", "draw")), CubeError,
         r"no dim\(s\) \['chain', 'draw'\]"),
        (lambda da: eq.rank_distribution(da.rename(model="system")), CubeError,
         r"no dim\(s\) \['model'\]"),
        (lambda da: eq.rank_distribution(da > 0), TypeError, "must hold real numbers"),
        (lambda da: eq.rank_distribution(da, sample_dims=()), ValueError, "at least one dim"),
        (lambda da: eq.rank_distribution(da, sample_dims=("draw", "draw")), ValueError,
         "names a dim twice"),
        (lambda da: eq.pairwise_differences(da, observed=np.zeros(2)), TypeError,
         "`observed` must be a DataArray"),
        (lambda da: eq.pairwise_differences(da.where(da.model != "b")), CubeError,
         r"NaN aggregates: the observed values and draws of model\(s\) \[.b.\]"),
        (lambda da: eq.pairwise_differences(da, higher_is_better="no"), TypeError,
         "`higher_is_better` must be True, False or None"),
        (lambda da: eq.pairwise_differences([1, 2]), TypeError, "must be the result of"),
        (lambda da: eq.leaderboard(da.expand_dims(language=["x", "y"])), CubeError,
         "extra dim"),
    ],
)
def test_bad_draws(call, error, match):
    da = xr.DataArray(np.random.default_rng(0).normal(size=(2, 50)), dims=("model", "resample"),
                      coords={"model": ["a", "b"]})
    with pytest.raises(error, match=match):
        call(da)


# --- dask-backed draws: streamed chunk by chunk, identical for any chunking ----------------------

@pytest.mark.parametrize("chunks", [{"draw": 7}, {"draw": 100, "chain": 1}, {"chain": 2}])
def test_dask_ranks_identical_for_any_chunking(aggregated, chunks):
    pytest.importorskip("dask")
    post = _as_posterior(aggregated)
    in_memory = eq.rank_distribution(post, sample_dims=("chain", "draw"))
    lazy = post.chunk(chunks)
    streamed = eq.rank_distribution(lazy, sample_dims=("chain", "draw"))
    _equal(in_memory, streamed)


def test_dask_ranks_with_ties_and_extra_dims_identical():
    pytest.importorskip("dask")
    values = np.random.default_rng(2).integers(0, 4, size=(2, 12, 3000)).astype(float)
    da = xr.DataArray(values, dims=("language", "model", "draw"),
                      coords={"language": ["a", "b"], "model": [f"m{i}" for i in range(12)]})
    in_memory = eq.rank_distribution(da, sample_dims="draw")
    for size in (7, 999, 3000):
        _equal(in_memory, eq.rank_distribution(da.chunk({"draw": size, "model": 5}),
                                               sample_dims="draw"))


def test_dask_nan_draw_raises_naming_the_model():
    pytest.importorskip("dask")
    values = np.random.default_rng(0).normal(size=(3, 400))
    values[2, 350] = np.nan
    da = xr.DataArray(values, dims=("model", "resample"), coords={"model": ["a", "b", "c"]},
                      ).chunk({"resample": 100})
    with pytest.raises(CubeError, match=r"model\(s\) \['c'\]"):
        eq.rank_distribution(da, observed=xr.DataArray([0.0, 1.0, 2.0], dims="model",
                                                       coords={"model": ["a", "b", "c"]}))

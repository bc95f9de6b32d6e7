"""The streamed analyses on a dask.distributed LocalCluster give the in-memory numbers."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evaluq as eq

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as connected:
        yield connected


def test_rank_distribution_on_a_local_cluster(client):
    rng = np.random.default_rng(7)
    values = rng.normal(size=(2, 800, 15)) + np.linspace(0, 1, 15)
    draws = xr.DataArray(values, dims=("chain", "draw", "model"),
                         coords={"model": [f"m{i:02d}" for i in range(15)]})
    in_memory = eq.rank_distribution(draws, sample_dims=("chain", "draw"))
    on_cluster = eq.rank_distribution(draws.chunk({"draw": 100}), sample_dims=("chain", "draw"))
    assert client.run(lambda: 1)                      # the work ran with the workers up
    for name in in_memory.data_vars:
        np.testing.assert_array_equal(in_memory[name].values, on_cluster[name].values)


# --- streamed cubes (issue 13): the same numbers as in memory, computed on the workers ----------

@pytest.fixture(scope="module")
def cube():
    return eq.simulate_cube(n_models=4, n_languages=9, n_seeds=3, n_boot=80, rng=3)


@pytest.mark.parametrize("chunks", [{"model": 1, "language": 3}, {"bootstrap": 25}])
def test_variance_components_on_a_local_cluster(client, cube, chunks):
    in_memory = eq.variance_components(cube)
    on_cluster = eq.variance_components(cube.chunk(chunks))
    for name in in_memory.data_vars:
        if "bootstrap" in chunks:        # replicates split: shifted sums added over chunks
            np.testing.assert_allclose(on_cluster[name].values, in_memory[name].values,
                                       rtol=1e-12, atol=0)
        else:
            np.testing.assert_array_equal(on_cluster[name].values, in_memory[name].values)


def test_zarr_cube_resample_aggregate_leaderboard_on_a_local_cluster(client, cube, tmp_path):
    path = tmp_path / "cube.zarr"
    cube.chunk({"model": 1, "language": 3}).to_zarr(path, consolidated=False)
    lazy = eq.open_cube(path)
    xr.testing.assert_identical(
        eq.variance_components(lazy), eq.variance_components(cube))
    for languages in ("fixed", "bootstrap"):
        streamed = eq.aggregate(eq.resample(lazy, n_resamples=3000, languages=languages,
                                            chunk_size=1000, rng=9))
        eager = eq.aggregate(eq.resample(cube, n_resamples=3000, languages=languages, rng=9))
        xr.testing.assert_identical(streamed, eager)
        xr.testing.assert_identical(eq.rank_distribution(streamed),
                                    eq.rank_distribution(eager))
    assert len(client.scheduler_info()["workers"]) == 2


# --- the significance test, items chunked (issue 13) --------------------------------------------

def test_bootstrap_test_on_a_local_cluster(client):
    import dask.array as da

    rng = np.random.default_rng(11)
    n = 4000
    y = rng.integers(0, 3, n)
    h0 = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
    h1 = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
    kw = dict(method="paired", n_resamples=300, rng=4)
    eager = eq.bootstrap_test(y, h0, h1, **kw)
    lazy = eq.bootstrap_test(da.from_array(y, chunks=900), da.from_array(h0, chunks=900),
                             da.from_array(h1, chunks=900), **kw)
    np.testing.assert_array_equal(eager.distribution, lazy.distribution)
    np.testing.assert_array_equal(eager.pvalue, lazy.pvalue)
    z = np.exp(rng.normal(size=(3, n, 4)))
    p, q0, q1 = z / z.sum(-1, keepdims=True)
    eager = eq.bootstrap_test(p, q0, q1, **kw)      # BooStSa's four, entropy correlation too
    lazy = eq.bootstrap_test(*(da.from_array(x, chunks=(700, 4)) for x in (p, q0, q1)), **kw)
    assert "entropy_correlation" in lazy.metrics
    np.testing.assert_array_equal(eager.distribution, lazy.distribution)
    np.testing.assert_array_equal(eager.acceleration, lazy.acceleration)
    assert len(client.scheduler_info()["workers"]) == 2


def test_crossed_runs_on_a_local_cluster(client):
    """Three seeds per system on one test set (crossed), hard and soft, items chunked."""
    import dask.array as da

    from evaluq.significance._bootstrap import compare_runs

    rng = np.random.default_rng(12)
    n = 3000
    y = rng.integers(0, 3, n)
    h0 = [np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n)) for _ in range(3)]
    h1 = [np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n)) for _ in range(3)]
    kw = dict(method="paired", runs="crossed", n_resamples=200, rng=5)
    eager = compare_runs([y] * 3, h0, h1, **kw)
    lazy = compare_runs([da.from_array(y, chunks=800)] * 3,
                        [da.from_array(h, chunks=800) for h in h0], h1, **kw)
    np.testing.assert_array_equal(eager.distribution, lazy.distribution)
    np.testing.assert_array_equal(eager.acceleration, lazy.acceleration)
    z = np.exp(rng.normal(size=(7, n, 4)))
    p, *q = z / z.sum(-1, keepdims=True)
    eager = compare_runs([p] * 3, q[:3], q[3:6], **kw)
    lazy = compare_runs([da.from_array(p, chunks=(700, 4))] * 3,
                        [da.from_array(x, chunks=(700, 4)) for x in q[:3]], q[3:6], **kw)
    np.testing.assert_array_equal(eager.distribution, lazy.distribution)
    np.testing.assert_array_equal(eager.h1_value, lazy.h1_value)

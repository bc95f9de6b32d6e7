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

"""Shared fixtures: a seeded rng and simulated cubes with known truth."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import settings

import evaluq as eq

collect_ignore_glob = ["data/*"]
"""Test data (a peer harness's task definitions among them) is read, never collected."""

# property tests draw the same examples in every run (a CI run must not fail by chance; the
# examples a run found are kept as @example in the tests)
settings.register_profile("evaluq", derandomize=True)
settings.load_profile("evaluq")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


@pytest.fixture
def sim_cube(rng: np.random.Generator) -> xr.Dataset:
    """3 models x 8 languages x 5 seeds x 200 replicates; sigma_between 2, seed .5, boot 1."""
    return eq.simulate_cube(rng=rng)

"""simulate_cube: shapes, reproducibility and errors."""

from __future__ import annotations

import pytest
import xarray as xr

import evaluq as eq


def test_reproducible_and_shaped():
    a = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=4, n_boot=5, rng=11)
    b = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=4, n_boot=5, rng=11)
    xr.testing.assert_identical(a, b)
    assert dict(a.boot_score.sizes) == {"model": 2, "language": 3, "seed": 4, "bootstrap": 5}
    assert "boot_score" not in eq.simulate_cube(n_boot=None, rng=0)


def test_errors():
    with pytest.raises(ValueError, match="`sigma_seed` must be in \\[0, inf\\]; got -1"):
        eq.simulate_cube(sigma_seed=-1)
    with pytest.raises(ValueError, match="`model_means` must have 3 values"):
        eq.simulate_cube(model_means=[0.0, 1.0])
    with pytest.raises(ValueError, match="`n_models` must be >= 1; got 0"):
        eq.simulate_cube(n_models=0)

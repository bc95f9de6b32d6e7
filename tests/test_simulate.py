"""simulate_cube: shapes, reproducibility and errors."""

from __future__ import annotations

import numpy as np
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


def test_replicate_noise_sharing():
    cube = eq.simulate_cube(n_models=2, n_languages=50, n_seeds=3, n_boot=400,
                            sigma_boot=1.0, boot_correlation=0.6, seed_sharing=0.9, rng=3)
    noise = (cube.boot_score - cube.score).values            # (m, l, s, b)
    assert noise.std() == pytest.approx(1.0, rel=0.02)
    across_models = np.corrcoef(noise[0, :, 0].ravel(), noise[1, :, 0].ravel())[0, 1]
    assert across_models == pytest.approx(0.6, abs=0.03)
    across_seeds = np.corrcoef(noise[0, :, 0].ravel(), noise[0, :, 1].ravel())[0, 1]
    assert across_seeds == pytest.approx(0.6 + 0.4 * 0.9, abs=0.03)
    vc = eq.variance_components(cube)
    assert float((vc.sigma_boot**2).mean()) == pytest.approx(1.0, rel=0.05)
    with pytest.raises(ValueError, match="`seed_sharing` must be in \\[0, 1\\]; got 2"):
        eq.simulate_cube(seed_sharing=2)


def test_test_set_error_is_paired_like_the_replicates():
    """With boot_correlation rho, the observed difference of two equal models has the
    variance its paired replicates imply: 2 sigma_boot^2 (1 - rho) per language."""
    cube = eq.simulate_cube(n_models=2, n_languages=4000, n_seeds=1, n_boot=50,
                            sigma_between=0.0, sigma_seed=0.0, sigma_boot=1.0,
                            boot_correlation=0.8, seed_sharing=1.0, rng=4)
    diff = (cube.score.sel(model="m0") - cube.score.sel(model="m1")).values.ravel()
    assert diff.var() == pytest.approx(2 * 0.2, rel=0.08)
    boot_diff = (cube.boot_score.sel(model="m0") - cube.boot_score.sel(model="m1")
                 - (cube.score.sel(model="m0") - cube.score.sel(model="m1")))
    assert float(boot_diff.var()) == pytest.approx(2 * 0.2, rel=0.05)


def test_shared_language_difficulty():
    cube = eq.simulate_cube(n_models=3, n_languages=3000, n_seeds=1, n_boot=None,
                            sigma_between=0.0, sigma_seed=0.0, sigma_boot=0.0,
                            sigma_language=2.0, rng=5)
    per_lang = cube.score.isel(seed=0).values
    assert np.allclose(per_lang[0], per_lang[1])
    assert per_lang[0].std() == pytest.approx(2.0, rel=0.05)

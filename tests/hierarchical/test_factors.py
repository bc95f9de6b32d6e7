"""The k-factor model of the test-set error correlation and how ``test_set_errors="auto"``
and ``error_correlation=`` resolve the pairing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.hierarchical import cube_statistics
from evaluq.hierarchical._factors import PSI_FLOOR, fit_factors, fit_k


def _sample_corr(rng: np.random.Generator, corr: np.ndarray, n_lang: int,
                 n_boot: int) -> np.ndarray:
    chol = np.linalg.cholesky(corr)
    x = np.einsum("mk,lkb->lmb", chol, rng.standard_normal((n_lang, len(corr), n_boot)))
    return np.array([np.corrcoef(block) for block in x])


def _families(rho_within: float, rho_between: float, n: int = 8) -> np.ndarray:
    corr = np.full((n, n), rho_between)
    half = n // 2
    corr[:half, :half] = corr[half:, half:] = rho_within
    np.fill_diagonal(corr, 1.0)
    return corr


@pytest.mark.parametrize(("truth", "k"), [
    (np.eye(6), 0),
    (np.full((6, 6), 0.6) + 0.4 * np.eye(6), 1),
    (_families(0.9, 0.3), 2),
])
def test_the_number_of_factors_is_chosen_against_the_replicate_noise(
        rng: np.random.Generator, truth: np.ndarray, k: int) -> None:
    n_boot = 200
    corr = _sample_corr(rng, truth, 8, n_boot)
    fit = fit_factors(corr, np.ones(corr.shape[:2], dtype=bool), n_boot)
    assert fit.loadings.shape == (8, len(truth), k)
    implied = fit.loadings @ np.swapaxes(fit.loadings, 1, 2) + np.eye(len(truth)) * \
        fit.psi[:, :, None]
    np.testing.assert_allclose(np.einsum("lmm->lm", implied), 1.0, atol=1e-12)
    # within the sampling noise of a correlation from 200 replicates
    assert np.abs(implied - truth).max() < 6 / np.sqrt(n_boot)


def test_principal_axis_factoring_recovers_an_exact_two_factor_matrix() -> None:
    truth = _families(0.8, 0.2)
    loadings, psi = fit_k(truth[None], np.ones((1, 8), dtype=bool), 2)
    implied = loadings[0] @ loadings[0].T + np.diag(psi[0])
    np.testing.assert_allclose(implied, truth, atol=1e-5)


def test_identical_errors_get_the_floor_under_psi() -> None:
    truth = np.full((3, 3), 1.0)
    loadings, psi = fit_k(truth[None], np.ones((1, 3), dtype=bool), 1)
    np.testing.assert_allclose(psi, PSI_FLOOR, rtol=1e-6)
    np.testing.assert_allclose((loadings**2).sum(-1) + psi, 1.0)


def test_missing_cells_load_nothing(rng: np.random.Generator) -> None:
    corr = _sample_corr(rng, np.full((4, 4), 0.7) + 0.3 * np.eye(4), 3, 100)
    usable = np.ones((3, 4), dtype=bool)
    usable[1, 2] = False
    fit = fit_factors(corr, usable, 100)
    assert fit.loadings.shape[-1] == 1
    assert np.all(fit.loadings[1, 2] == 0.0)
    assert fit.psi[1, 2] == 1.0


def _predictions_cube(n_boot: int = 100) -> xr.Dataset:
    from evaluq.demo import demo_cube

    return demo_cube(n_boot=n_boot)


def test_auto_pairs_a_cube_from_predictions() -> None:
    data = cube_statistics(_predictions_cube())
    assert data.paired
    assert data.pairing == "paired: bootstrap replicates shared across models"
    assert data.n_factors >= 1
    assert data.pairing_note == ""


def test_auto_keeps_unshared_replicates_independent_and_says_so() -> None:
    """Replicates drawn separately for each model (simulate_cube's default): no correlation
    beyond the noise, so independent, and the note says the posterior may be conservative.
    An explicit attribute overrides: 1 pairs, 0 keeps independent and 'paired' raises."""
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_boot=20, rng=0)
    data = cube_statistics(cube)
    assert not data.paired
    assert data.pairing.startswith("independent: the cube does not say whether its bootstrap "
                                   "replicates are shared")
    assert data.sharing == {"source": "read from the replicates", "models": False,
                            "seeds": False}
    assert "conservative" in data.pairing_note
    cube.attrs["shared_bootstrap"] = "true"
    assert cube_statistics(cube).paired
    assert cube_statistics(cube).sharing["source"] == "cube attribute shared_bootstrap"
    cube.attrs["shared_bootstrap"] = 0
    marked = cube_statistics(cube)
    assert not marked.paired
    assert marked.pairing.startswith("independent: its bootstrap replicates are marked as not "
                                     "shared across models")
    assert "conservative" in marked.pairing_note
    with pytest.raises(CubeError, match="'paired' but `cube` its bootstrap replicates are "
                                        "marked as not shared"):
        cube_statistics(cube, "paired")
    cube.attrs["shared_bootstrap"] = "maybe"
    with pytest.raises(CubeError, match="attribute 'shared_bootstrap' must be 1 or 0"):
        cube_statistics(cube)


def _summary_cube() -> xr.Dataset:
    rng = np.random.default_rng(0)
    table = pd.DataFrame([{"model": f"m{m}", "language": f"l{lang}", "mean": rng.normal(),
                           "sd_seed": 0.2, "sd_boot": 0.5, "n": 5}
                          for m in range(3) for lang in range(4)])
    return eq.from_summary(table, n_seeds="n")


def test_a_summary_cube_pairs_with_a_given_correlation() -> None:
    cube = _summary_cube()
    alone = cube_statistics(cube)
    assert not alone.paired
    assert "summary-only cube without error_correlation" in alone.pairing_note
    scalar = cube_statistics(cube, error_correlation=0.8)
    assert scalar.pairing == "paired: error_correlation given"
    assert scalar.n_factors == 1
    np.testing.assert_allclose(scalar.psi, 0.2)
    np.testing.assert_allclose(scalar.model_cov()[0, 0, 1], 0.8 * 0.25)
    corr = xr.DataArray(np.broadcast_to(np.full((3, 3), 0.5) + 0.5 * np.eye(3), (4, 3, 3)),
                        dims=("language", "model", "model_b"),
                        coords={"language": cube.language.values, "model": cube.model.values,
                                "model_b": cube.model.values})
    given = cube_statistics(cube, "paired", corr.transpose("model", "model_b", "language"))
    np.testing.assert_allclose(given.model_cov(), given.boot_cov(), atol=0.02 * 0.25)
    assert cube_statistics(cube, error_correlation=0.0).n_factors == 0


@pytest.mark.parametrize(("value", "error", "match"), [
    (1.5, ValueError, r"`error_correlation` must be in \[0, 1\] as a scalar"),
    (-0.2, ValueError, r"`error_correlation` must be in \[0, 1\] as a scalar"),
    ("0.5", TypeError, "`error_correlation` must be a number in"),
    (xr.DataArray(np.eye(3), dims=("model", "model_b")), TypeError,
     r"with dims \('model', 'model_b'\)"),
])
def test_a_bad_error_correlation_is_named(value: object, error: type[Exception],
                                          match: str) -> None:
    with pytest.raises(error, match=match):
        cube_statistics(_summary_cube(), error_correlation=value)


def test_a_given_correlation_must_be_a_correlation_matrix() -> None:
    cube = _summary_cube()
    bad = xr.DataArray(np.full((4, 3, 3), 0.5), dims=("language", "model", "model_b"),
                       coords={"language": cube.language.values, "model": cube.model.values,
                               "model_b": cube.model.values})
    with pytest.raises(ValueError, match="must be a correlation matrix per language"):
        cube_statistics(cube, error_correlation=bad)
    with pytest.raises(ValueError, match="must have every language and model of `cube`"):
        cube_statistics(cube, error_correlation=bad.assign_coords(model=["a", "b", "c"]))
    with pytest.raises(ValueError, match="`error_correlation` is given but `test_set_errors`"):
        cube_statistics(cube, "independent", error_correlation=0.5)

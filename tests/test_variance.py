"""Variance components (formulas.md section 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluq as eq


def hand_cube():
    score = np.array([[[1.0, 3.0], [4.0, 6.0]]])                # 1 model, 2 languages, 2 seeds
    boot = np.array([[[[0, 1, 2], [0, 2, 4]], [[1, 1, 1], [0, 3, 6]]]], dtype=float)
    return eq.from_arrays(score, boot, models=["m"], languages=["x", "y"])


def test_hand_computed_case():
    vc = eq.variance_components(hand_cube())
    sel = vc.sel(model="m")
    np.testing.assert_allclose(sel.sigma_seed.values, [np.sqrt(2), np.sqrt(2)])
    np.testing.assert_allclose(sel.sigma_boot.values, [1.5, 1.5])        # mean of (1, 2), (0, 3)
    np.testing.assert_allclose(sel.se_sigma_boot.values, [0.5, 1.5])     # SD(1,2)/√2, SD(0,3)/√2
    np.testing.assert_allclose(sel.sigma_within.values, [np.sqrt(4.25)] * 2)
    # u[l, b] = SD over seeds of the replicate scores
    u_x = [np.std([0, 0], ddof=1), np.std([1, 2], ddof=1), np.std([2, 4], ddof=1)]
    u_y = [np.std([1, 0], ddof=1), np.std([1, 3], ddof=1), np.std([1, 6], ddof=1)]
    np.testing.assert_allclose(sel.se_sigma_seed.values, [np.std(u_x, ddof=1),
                                                          np.std(u_y, ddof=1)])
    assert sel.sigma_between.item() == pytest.approx(np.std([2.0, 5.0], ddof=1))
    assert sel.mean_score.item() == pytest.approx(3.5)
    assert sel.se_mean_fixed.item() == pytest.approx(np.sqrt(6.5) / 2)
    tau2 = max(0.0, 4.5 - 3.25)
    assert sel.tau_between.item() == pytest.approx(np.sqrt(tau2))
    assert sel.se_mean_population.item() == pytest.approx(np.sqrt(6.5 / 4 + tau2 / 2))
    summary = sel.sigma_boot_summary.to_series()
    assert summary["mean"] == pytest.approx(1.5)
    assert summary["sd"] == pytest.approx(0.0)
    assert summary["min"] == summary["max"] == pytest.approx(1.5)


def test_ddof_zero():
    vc = eq.variance_components(hand_cube(), ddof=0)
    assert vc.sigma_between.item() == pytest.approx(1.5)
    assert vc.sigma_seed.values[0, 0] == pytest.approx(1.0)
    assert vc.attrs["ddof"] == 0


def test_paper_ddof_conventions():
    """Table 8 of the multilingual paper (ddof=0) vs its code (ddof=1), 16 languages."""
    rng = np.random.default_rng(0)
    means = rng.normal(30, 7, size=(1, 16))
    cube = eq.from_arrays(means[..., None])
    ratio = (eq.variance_components(cube, ddof=1).sigma_between
             / eq.variance_components(cube, ddof=0).sigma_between).item()
    assert ratio == pytest.approx(np.sqrt(16 / 15))
    for table8, code in ((7.11, 7.34), (8.49, 8.77), (4.50, 4.65)):
        assert round(table8 * ratio, 2) == pytest.approx(code, abs=0.011)


def test_single_seed_gives_nan_seed_sd_not_an_error():
    cube = eq.from_arrays(np.arange(6.0).reshape(2, 3, 1))
    vc = eq.variance_components(cube)
    assert np.isnan(vc.sigma_seed).all()
    assert np.isnan(vc.sigma_boot).all()             # no replicates: unknown, not zero
    assert np.isfinite(vc.sigma_between).all()


def test_identical_seeds_give_exact_zero():
    score = np.full((1, 2, 5), 0.9731)
    assert (eq.variance_components(eq.from_arrays(score)).sigma_seed == 0).all()


def test_missing_cells_use_the_values_present():
    score = np.array([[[1.0, 3.0, np.nan], [4.0, 6.0, 8.0]]])
    vc = eq.variance_components(eq.from_arrays(score))
    np.testing.assert_allclose(vc.n_seeds.values, [[2, 3]])
    np.testing.assert_allclose(vc.sigma_seed.values, [[np.sqrt(2), 2.0]])
    score = np.array([[[np.nan, np.nan], [4.0, 6.0], [1.0, 1.0]]])
    vc = eq.variance_components(eq.from_arrays(score))
    assert vc.n_languages.item() == 2
    assert vc.sigma_between.item() == pytest.approx(np.std([5.0, 1.0], ddof=1))


def test_recovers_known_components(rng):
    truth = {"sigma_between": 2.0, "sigma_seed": 0.5, "sigma_boot": 1.0}
    n_lang, n_seeds = 300, 10
    cube = eq.simulate_cube(n_models=2, n_languages=n_lang, n_seeds=n_seeds, n_boot=100,
                            rng=rng, **truth)
    vc = eq.variance_components(cube)
    # mean of unbiased variance estimates, within 4 standard errors
    seed_var = (vc.sigma_seed**2).mean().item()
    se = 0.25 * np.sqrt(2 / (n_seeds - 1)) / np.sqrt(2 * n_lang)
    assert abs(seed_var - 0.25) < 4 * se
    boot_var = (vc.sigma_boot**2).mean().item()
    assert abs(boot_var - 1.0) < 0.02
    # the observed between-language SD holds the within-language noise of the means
    expected = np.sqrt(4.0 + 1.0 + 0.25 / n_seeds)
    assert vc.sigma_between.values == pytest.approx([expected] * 2, rel=0.15)
    assert vc.tau_between.values == pytest.approx([2.0, 2.0], rel=0.15)


@pytest.mark.slow
def test_standard_errors_of_the_mean_are_calibrated(rng):
    """se_mean_fixed given the languages, se_mean_population over sampled languages."""
    n_sims, n_lang, n_seeds = 400, 6, 3
    theta = rng.normal(0, 2.0, size=n_lang)                   # fixed languages
    fixed_means, fixed_se, pop_means, pop_se = [], [], [], []
    for _ in range(n_sims):
        cube = eq.simulate_cube(n_models=1, n_languages=n_lang, n_seeds=n_seeds, n_boot=40,
                                sigma_between=0.0, rng=rng)
        cube["score"] = cube.score + theta[None, :, None]
        cube["boot_score"] = cube.boot_score + theta[None, :, None, None]
        vc = eq.variance_components(cube)
        fixed_means.append(vc.mean_score.item())
        fixed_se.append(vc.se_mean_fixed.item())
        vc = eq.variance_components(eq.simulate_cube(
            n_models=1, n_languages=n_lang, n_seeds=n_seeds, n_boot=40, rng=rng))
        pop_means.append(vc.mean_score.item())
        pop_se.append(vc.se_mean_population.item())
    true_fixed = np.sqrt(0.25 / n_seeds + 1.0) / np.sqrt(n_lang)
    true_pop = np.sqrt(4.0 + 0.25 / n_seeds + 1.0) / np.sqrt(n_lang)
    for name, se, truth in (("se_mean_fixed", fixed_se, true_fixed),
                            ("se_mean_population", pop_se, true_pop)):
        print(f"\nCALIBRATION | variance_components {name}: RMS of the SE / true SD | ratio | "
              f"nominal 1.000 | measured {np.sqrt(np.mean(np.square(se))) / truth:.4f} | "
              f"n {n_sims}")
    assert np.std(fixed_means, ddof=1) == pytest.approx(true_fixed, rel=0.12)
    assert np.sqrt(np.mean(np.square(fixed_se))) == pytest.approx(true_fixed, rel=0.08)
    assert np.std(pop_means, ddof=1) == pytest.approx(true_pop, rel=0.12)
    assert np.sqrt(np.mean(np.square(pop_se))) == pytest.approx(true_pop, rel=0.12)


def test_summary_cube_matches_raw_cube(sim_cube):
    raw = eq.variance_components(sim_cube)
    table = raw[["sigma_seed", "sigma_boot"]].to_dataframe().reset_index()
    table["mean"] = sim_cube.score.mean("seed").to_dataframe().reset_index()["score"]
    summary = eq.from_summary(table, mean="mean", sd_seed="sigma_seed", sd_boot="sigma_boot",
                              n_seeds=sim_cube.sizes["seed"])
    vc = eq.variance_components(summary)
    for name in ("sigma_between", "tau_between", "sigma_within", "se_mean_fixed",
                 "se_mean_population", "mean_score"):
        np.testing.assert_allclose(vc[name].values, raw[name].values, rtol=1e-12)
    assert np.isnan(vc.se_sigma_boot).all()
    assert vc.attrs["summary_only"] == 1


@settings(max_examples=20, deadline=None)
@given(st.permutations(list(range(8))))
def test_language_order_does_not_matter(order):
    cube = eq.simulate_cube(n_models=2, n_languages=8, n_seeds=3, n_boot=10, rng=1)
    a = eq.variance_components(cube)
    b = eq.variance_components(cube.isel(language=list(order))).sortby("language")
    for name in a.data_vars:
        np.testing.assert_allclose(b[name].values, a[name].values, rtol=1e-12)


def test_table_and_errors(sim_cube):
    table = eq.variance_table(eq.variance_components(sim_cube), digits=3)
    assert isinstance(table, pd.DataFrame)
    assert list(table.index) == ["m0", "m1", "m2"]
    assert "sigma_within max" in table.columns
    with pytest.raises(ValueError, match="`ddof` must be >= 0; got -1"):
        eq.variance_components(sim_cube, ddof=-1)
    with pytest.raises(eq.CubeError, match="must be an xarray.Dataset"):
        eq.variance_components(sim_cube.score)

"""Every variance component and SE on every cube shape: right, or NaN with a reason (issue 10).

Shapes: seeds only; bootstrap only (one seed); both; summary with all SDs; summary with some
SDs missing; one language; missing cells. "Right" is checked against the formulas computed by
hand with numpy on the same numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evaluq as eq

RNG = np.random.default_rng(3)
SCORE = RNG.normal(30, 2, size=(2, 3, 5))
BOOT = SCORE[..., None] + RNG.normal(0, 1.5, size=(2, 3, 1, 40))


def reason(vc, name):
    return vc[name].attrs.get("nan_reason", "")


def test_seeds_only_se_is_not_zero():
    """Finding 1: the seeds-only SE used to be 0 (NaN boot variances summed as zeros)."""
    vc = eq.variance_components(eq.from_arrays(SCORE))
    assert np.isnan(vc.se_mean_fixed).all()
    assert "boot_score" in reason(vc, "se_mean_fixed")
    assert np.isnan(vc.tau_between).all()
    assert reason(vc, "tau_between")
    assert np.isnan(vc.sigma_boot).all()
    assert "test-set" in reason(vc, "sigma_boot")
    np.testing.assert_allclose(vc.sigma_seed, SCORE.std(axis=2, ddof=1))
    # the population SE needs no within-language noise: the SD of the observed means / sqrt(L)
    np.testing.assert_allclose(vc.se_mean_population,
                               SCORE.mean(2).std(axis=1, ddof=1) / np.sqrt(3))
    assert "se_mean_fixed" in vc.attrs["not_estimable"]
    assert "se_mean_population" in vc.attrs["estimable"]


def test_issue_command_seeds_only_long_table():
    r = np.random.default_rng(0)
    df = pd.DataFrame([dict(model=m, language=lang, seed=s, score=r.normal(30, 2))
                       for m in "ab" for lang in ["en", "de", "fr"] for s in range(5)])
    vc = eq.variance_components(eq.from_long(df, seed="seed"))
    assert not (vc.se_mean_fixed == 0).any()
    assert np.isnan(vc.se_mean_fixed).all()


def test_one_seed_with_bootstrap_se_is_nan():
    """One seed: the seed noise is unknown, so the SE is NaN (it used to be the boot part)."""
    vc = eq.variance_components(eq.from_arrays(SCORE[..., :1], BOOT[..., :1, :]))
    assert np.isnan(vc.sigma_seed).all()
    assert "seeds" in reason(vc, "sigma_seed")
    np.testing.assert_allclose(vc.sigma_boot, BOOT[..., 0, :].std(axis=-1, ddof=1))
    assert np.isnan(vc.se_mean_fixed).all()
    assert "sigma_seed" in reason(vc, "se_mean_fixed")
    assert np.isnan(vc.se_sigma_boot).all()
    assert reason(vc, "se_sigma_boot")


def test_one_seed_ddof_zero_is_nan_not_zero():
    vc = eq.variance_components(eq.from_arrays(SCORE[..., :1]), ddof=0)
    assert np.isnan(vc.sigma_seed).all()


def test_both_seeds_and_bootstrap_all_estimable():
    vc = eq.variance_components(eq.from_arrays(SCORE, np.broadcast_to(BOOT, (2, 3, 5, 40))))
    assert vc.attrs["not_estimable"] == ""
    w = SCORE.std(2, ddof=1) ** 2 / 5 + BOOT.std(-1, ddof=1)[..., 0] ** 2
    np.testing.assert_allclose(vc.se_mean_fixed, np.sqrt(w.sum(1)) / 3)
    sb = SCORE.mean(2).std(1, ddof=1)
    np.testing.assert_allclose(vc.se_mean_population,
                               np.sqrt(np.maximum(sb**2, w.mean(1)) / 3))
    assert all("nan_reason" not in vc[v].attrs for v in vc.data_vars)


def summary_frame(sd_boot=(1.0, 1.2, 0.9, 1.1)):
    return pd.DataFrame({"model": ["a", "a", "b", "b"], "language": ["x", "y"] * 2,
                         "mean": [30.0, 25.0, 28.0, 26.0], "sd_seed": [0.5, 0.4, 0.6, 0.3],
                         "sd_boot": list(sd_boot)})


def test_summary_with_all_sds():
    vc = eq.variance_components(eq.from_summary(summary_frame(), n_seeds=4))
    w = np.array([[0.25 / 4 + 1.0, 0.16 / 4 + 1.44], [0.36 / 4 + 0.81, 0.09 / 4 + 1.21]])
    np.testing.assert_allclose(vc.se_mean_fixed, np.sqrt(w.sum(1)) / 2)
    assert np.isnan(vc.se_sigma_seed).all()
    assert "summary" in reason(vc, "se_sigma_seed")


def test_summary_with_one_missing_sd_boot():
    """Finding 1: a summary with one NaN sd_boot gave an SE below its smallest possible value."""
    vc = eq.variance_components(eq.from_summary(summary_frame((1.0, np.nan, 0.9, 1.1)),
                                                n_seeds=4))
    assert np.isnan(vc.se_mean_fixed.sel(model="a"))
    assert "sd_boot" in reason(vc, "se_mean_fixed")
    w_b = np.array([0.36 / 4 + 0.81, 0.09 / 4 + 1.21])
    assert float(vc.se_mean_fixed.sel(model="b")) == pytest.approx(np.sqrt(w_b.sum()) / 2)


def test_summary_without_sd_boot_column():
    vc = eq.variance_components(eq.from_summary(summary_frame(), sd_boot=None, n_seeds=4))
    assert np.isnan(vc.se_mean_fixed).all()
    assert "no 'sd_boot'" in reason(vc, "se_mean_fixed")


def test_one_language():
    boot = np.broadcast_to(BOOT[:, :1], (2, 1, 5, 40))
    vc = eq.variance_components(eq.from_arrays(SCORE[:, :1], boot))
    assert np.isnan(vc.sigma_between).all()
    assert "languages" in reason(vc, "sigma_between")
    assert np.isnan(vc.se_mean_population).all()
    assert reason(vc, "se_mean_population")
    assert np.isfinite(vc.se_mean_fixed).all()          # the SE given this language is known


def test_missing_cells():
    score = SCORE.copy()
    score[0, 1, :] = np.nan                  # model 0 has no language 1: skipped, counted
    score[1, 2, 1:] = np.nan                 # model 1, language 2: a single seed
    vc = eq.variance_components(eq.from_arrays(score))
    assert int(vc.n_languages[0]) == 2
    assert np.isnan(vc.sigma_seed[1, 2])
    assert "1 observed" in reason(vc, "sigma_seed")
    np.testing.assert_allclose(vc.sigma_seed[0, [0, 2]], score[0, [0, 2]].std(1, ddof=1))


def test_variance_table_says_what_is_estimable():
    table = eq.variance_table(eq.variance_components(eq.from_arrays(SCORE)))
    assert "se_mean_fixed" in table.attrs["not_estimable"]
    assert "boot_score" in table.attrs["nan_reasons"]["se_mean_fixed"]
    assert table["se_mean_fixed"].isna().all()

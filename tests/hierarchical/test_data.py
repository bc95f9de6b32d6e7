"""Sufficient statistics, identifiability, the marginal log-density and the conditional draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.hierarchical import cube_statistics, default_priors
from evaluq.hierarchical._model import marginal_loglik, resolve_priors
from evaluq.hierarchical._posterior import draw_effects


def test_raw_cube_statistics_match_direct_computation() -> None:
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=4, n_boot=30, rng=1)
    data = cube_statistics(cube)
    score = cube.score.transpose("model", "language", "seed").values
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values
    np.testing.assert_allclose(data.ybar, score.mean(-1))
    ss = ((score - score.mean(-1, keepdims=True)) ** 2).sum(-1)
    np.testing.assert_allclose(data.seed_ss, ss.sum(-1))
    np.testing.assert_array_equal(data.seed_dof, [9.0, 9.0])
    np.testing.assert_allclose(data.vbar, boot.var(-1, ddof=1).mean(-1))
    np.testing.assert_array_equal(data.boot_dof, np.full((2, 3), 4 * 29.0))
    np.testing.assert_allclose(data.v_fixed, data.vbar)
    assert data.reasons == {}
    assert data.seed_identified.all()
    assert data.boot_identified


def test_seeds_only_cube_says_sigma_boot_is_not_identified() -> None:
    data = cube_statistics(eq.simulate_cube(n_models=2, n_languages=3, n_boot=None, rng=1))
    assert not data.boot_identified
    assert "sigma_boot is not identified" in data.reasons["sigma_boot"]
    assert np.isnan(data.vbar).all()
    np.testing.assert_array_equal(data.v_fixed, 0.0)


def test_one_seed_cube_says_sigma_seed_is_not_identified() -> None:
    data = cube_statistics(eq.simulate_cube(n_models=2, n_languages=3, n_seeds=1, n_boot=20,
                                            rng=1))
    assert not data.seed_identified.any()
    assert "m0, m1" in data.reasons["sigma_seed"]
    np.testing.assert_array_equal(data.arrays()["seed_weight"], 0.0)


def _summary(n_seeds: int) -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "a", "b", "b"], "language": ["x", "y", "x", "y"],
                         "mean": [1.0, 2.0, 3.0, 5.0], "sd_seed": [0.5, 0.4, 0.3, 0.2],
                         "sd_boot": [1.0, 1.1, 1.2, 1.3], "n": n_seeds})


def test_summary_cube_with_seed_counts() -> None:
    data = cube_statistics(eq.from_summary(_summary(5), n_seeds="n"))
    np.testing.assert_allclose(data.seed_ss, [4 * (0.25 + 0.16), 4 * (0.09 + 0.04)])
    np.testing.assert_array_equal(data.seed_dof, [8.0, 8.0])
    np.testing.assert_allclose(data.v_fixed, [[1.0, 1.21], [1.44, 1.69]])
    assert np.isinf(data.boot_dof).all()
    assert data.summary_only


def test_summary_cube_with_one_seed_plugs_the_sd_in() -> None:
    data = cube_statistics(eq.from_summary(_summary(1), n_seeds="n"))
    assert not data.seed_identified.any()
    assert "sigma_seed" in data.reasons
    np.testing.assert_allclose(data.v_fixed, [[1.25, 1.37], [1.53, 1.73]])


def test_missing_cell_has_weight_zero() -> None:
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_boot=10, rng=1)
    cube["score"][0, 1] = np.nan
    cube["boot_score"][0, 1] = np.nan
    data = cube_statistics(cube)
    assert not data.observed[0, 1]
    assert data.observed.sum() == 5
    arrays = data.arrays()
    assert arrays["weight"][0, 1] == 0
    assert arrays["ybar"][0, 1] == 0
    assert np.isfinite(arrays["v_fixed"]).all()


def test_partial_bootstrap_information_is_an_error() -> None:
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_boot=10, rng=1)
    cube["boot_score"][0, 1] = np.nan
    with pytest.raises(CubeError, match="bootstrap information for some observed cells"):
        cube_statistics(cube)


def test_digest_follows_the_values() -> None:
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_boot=10, rng=1)
    assert cube_statistics(cube).digest == cube_statistics(cube.copy(deep=True)).digest
    changed = cube.copy(deep=True)
    changed["score"][0, 0, 0] += 1e-9
    assert cube_statistics(changed).digest != cube_statistics(cube).digest


def test_priors_are_validated_and_overridable() -> None:
    data = cube_statistics(eq.simulate_cube(rng=0))
    assert resolve_priors(data, {"tau_m_sigma": 3.0})["tau_m_sigma"] == 3.0
    assert set(default_priors(data)) == set(resolve_priors(data, None))
    with pytest.raises(ValueError, match="`priors` has an unknown key 'tau'"):
        resolve_priors(data, {"tau": 1.0})
    with pytest.raises(ValueError, match=r"`priors\['tau_m_sigma'\]` must be finite and > 0"):
        resolve_priors(data, {"tau_m_sigma": -1.0})
    with pytest.raises(TypeError, match="`priors` must be a dict"):
        resolve_priors(data, [1.0])  # type: ignore[arg-type]


def test_marginal_loglik_equals_dense_multivariate_normal(rng: np.random.Generator) -> None:
    n_m, n_l = 4, 6
    ybar = rng.normal(size=(n_m, n_l))
    weight = np.ones((n_m, n_l))
    weight[1, 2] = weight[3, 2] = weight[0, 5] = 0.0
    mu = rng.normal(size=n_m)
    d = rng.uniform(0.2, 2.0, size=(n_m, n_l))
    t2 = 0.7
    expected = 0.0
    for lang in range(n_l):
        rows = weight[:, lang] > 0
        cov = t2 + np.diag(d[rows, lang])
        expected += stats.multivariate_normal(mu[rows], cov).logpdf(ybar[rows, lang])
    got = marginal_loglik(np.where(weight > 0, ybar, 0.0), weight, mu, d, t2)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_conditional_draws_match_dense_gaussian_conditioning(rng: np.random.Generator) -> None:
    """a and theta given ybar, against the joint Gaussian written out densely."""
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, n_boot=20, rng=2)
    cube["score"][2, 3] = np.nan
    cube["boot_score"][2, 3] = np.nan
    data = cube_statistics(cube)
    n_m, n_l = data.shape
    mu, tau_m, sigma_seed, tau_lang = (np.array([0.1, -0.3, 0.5]), np.array([0.8, 1.2, 0.6]),
                                       np.array([0.5, 0.4, 0.7]), np.array([1.1]))
    # latent z = (a (L), g (M L)); ybar = mu + a + g + e over observed cells
    s2 = data.v_fixed + sigma_seed[:, None] ** 2 / np.maximum(data.n_seeds, 1)
    prior = np.diag(np.r_[np.full(n_l, tau_lang[0] ** 2), np.repeat(tau_m**2, n_l)])
    obs = np.flatnonzero(data.observed.ravel())
    design = np.zeros((n_m * n_l, n_l + n_m * n_l))
    for m in range(n_m):
        for lang in range(n_l):
            design[m * n_l + lang, lang] = 1.0
            design[m * n_l + lang, n_l + m * n_l + lang] = 1.0
    h = design[obs]
    cov_y = h @ prior @ h.T + np.diag(s2.ravel()[obs])
    gain = prior @ h.T @ np.linalg.inv(cov_y)
    resid = data.ybar.ravel()[obs] - np.repeat(mu, n_l)[obs]
    mean_z = gain @ resid
    cov_z = prior - gain @ h @ prior
    # theta = mu + design z (all cells, missing ones too)
    mean_theta = np.repeat(mu, n_l) + design @ mean_z
    sd_theta = np.sqrt(np.diag(design @ cov_z @ design.T))
    n = 40_000
    a, theta = draw_effects(data, np.tile(mu, (n, 1)), np.tile(tau_m, (n, 1)),
                            np.tile(sigma_seed, (n, 1)), np.tile(tau_lang, n), rng)
    theta = theta.reshape(n, -1)
    se = sd_theta / np.sqrt(n)
    np.testing.assert_array_less(np.abs(theta.mean(0) - mean_theta), 5 * se)
    np.testing.assert_allclose(theta.std(0), sd_theta, rtol=0.03)
    np.testing.assert_array_less(np.abs(a.mean(0) - mean_z[:n_l]),
                                 5 * np.sqrt(np.diag(cov_z)[:n_l] / n))


def test_the_test_set_variance_plug_in_does_not_count_the_seeds_twice() -> None:
    """Replicates shared across seeds: a replicate deviation is a common part (variance v_c)
    plus the seed's own part (v_s, already in sigma_seed). The plug-in is v_c, not the pooled
    per-seed variance v_c + v_s; algebraically (S V - vbar) / (S - 1)."""
    gen = np.random.default_rng(3)
    n_m, n_l, n_s, n_b, v_c, v_s = 2, 400, 4, 60, 1.0, 0.5
    score = gen.normal(size=(n_m, n_l, n_s))
    common = np.sqrt(v_c) * gen.standard_normal((n_m, n_l, 1, n_b))
    own = np.sqrt(v_s) * gen.standard_normal((n_m, n_l, n_s, n_b))
    cube = eq.from_arrays(score, score[..., None] + common + own, outlier_threshold=None)
    cube.attrs["shared_bootstrap"] = 1
    data = cube_statistics(cube, "independent")
    assert data.vbar.mean() == pytest.approx(v_c + v_s, rel=0.03)
    assert data.v_fixed.mean() == pytest.approx(v_c, rel=0.04)
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values
    var_mean = boot.mean(axis=2).var(axis=-1, ddof=1)
    np.testing.assert_allclose(data.v_fixed, np.maximum(
        (n_s * var_mean - data.vbar) / (n_s - 1), 0.0), rtol=1e-10)
    # not marked: the seeds' sharing is read from the replicates, the same plug-in
    del cube.attrs["shared_bootstrap"]
    unmarked = cube_statistics(cube)
    assert unmarked.sharing == {"source": "read from the replicates", "models": False,
                                "seeds": True}
    np.testing.assert_allclose(unmarked.v_fixed, data.v_fixed)
    # replicates drawn separately for each seed: the per-seed variance, as before
    apart = eq.from_arrays(score, score[..., None] + np.sqrt(v_c + v_s) * gen.standard_normal(
        (n_m, n_l, n_s, n_b)), outlier_threshold=None)
    separate = cube_statistics(apart)
    assert not separate.sharing["seeds"]
    np.testing.assert_allclose(separate.v_fixed, separate.vbar)


def test_the_tau_m_prior_scale_is_the_interaction_sd() -> None:
    """Full table: the two-way residual SD; a missing cell: least squares on dummies."""
    from evaluq.hierarchical._model import interaction_sd

    gen = np.random.default_rng(4)
    y = gen.normal(size=(4, 6)) + 10 * gen.normal(size=6)           # big language effects
    resid = y - y.mean(1, keepdims=True) - y.mean(0) + y.mean()
    assert interaction_sd(y, np.ones_like(y, dtype=bool)) == pytest.approx(
        np.sqrt((resid**2).sum() / (3 * 5)), rel=1e-10)
    observed = np.ones_like(y, dtype=bool)
    observed[1, 2] = False
    rows, cols = np.nonzero(observed)
    design = np.column_stack([np.eye(4)[rows], np.eye(6)[cols]])
    fitted = design @ np.linalg.lstsq(design, y[rows, cols], rcond=None)[0]
    expected = np.sqrt(((y[rows, cols] - fitted) ** 2).sum() / (23 - 4 - 6 + 1))
    assert interaction_sd(y, observed) == pytest.approx(expected, rel=1e-6)
    assert np.isnan(interaction_sd(y[:1], observed[:1]))


def test_cell_statistics_without_nan_equal_the_masked_computation(
        rng: np.random.Generator) -> None:
    """The complete-cube fast path gives what the NaN-masked path gives on the same cells."""
    from evaluq.hierarchical._data import _cell_stats, _seed_means

    x = rng.normal(size=(3, 4, 5, 6))
    with_nan = x.copy()
    with_nan[0, 0, 0, 0] = np.nan
    for fast, masked in zip(_cell_stats(x), _cell_stats(with_nan), strict=True):
        np.testing.assert_allclose(fast.ravel()[1:], masked.ravel()[1:], rtol=1e-13)
    n, _, ss = _cell_stats(x)
    np.testing.assert_array_equal(n, 6.0)
    np.testing.assert_allclose(ss, x.var(axis=-1) * 6, rtol=1e-12)
    np.testing.assert_allclose(_seed_means(x)[1:], _seed_means(with_nan)[1:], rtol=1e-13)
    np.testing.assert_allclose(_seed_means(with_nan)[0, 0, 0], with_nan[0, 0, 1:, 0].mean())

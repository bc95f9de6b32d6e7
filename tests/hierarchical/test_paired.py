"""Paired test-set errors: the error correlation, the dense marginal density, the pathwise
conditional draws and, slow, fits whose posterior differences match the paired bootstrap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.hierarchical import HierarchicalData, cube_statistics
from evaluq.hierarchical._data import error_correlation
from evaluq.hierarchical._model import lowrank_marginal_loglik, marginal_loglik, model_inputs
from evaluq.hierarchical._posterior import draw_effects


def paired_cube(rng: np.random.Generator, *, n_models: int = 3, n_languages: int = 12,
                n_seeds: int = 3, n_boot: int = 200, rho: float = 0.9, sigma_boot: float = 1.0,
                sigma_seed: float = 0.3, tau_m: float = 0.2, tau_lang: float = 2.0,
                means: tuple[float, ...] = (0.0, 0.3, 0.6)) -> tuple[xr.Dataset, np.ndarray]:
    """A cube whose test-set errors are correlated (rho) across models, with replicates shared
    by all models and seeds, as ``from_predictions`` makes them; and the true theta."""
    corr = np.full((n_models, n_models), rho) + (1 - rho) * np.eye(n_models)
    chol = np.linalg.cholesky(corr) * sigma_boot
    theta = (np.asarray(means)[:n_models, None] + tau_lang * rng.standard_normal(n_languages)
             + tau_m * rng.standard_normal((n_models, n_languages)))
    err = np.einsum("mk,kl->ml", chol, rng.standard_normal((n_models, n_languages)))
    score = (theta + err)[..., None] + sigma_seed * rng.standard_normal(
        (n_models, n_languages, n_seeds))
    shift = np.einsum("mk,klb->mlb", chol, rng.standard_normal((n_models, n_languages, n_boot)))
    boot = score[..., None] + shift[:, :, None, :]
    cube = eq.from_arrays(score, boot, metric="score", outlier_threshold=None)
    return cube, theta


def test_error_correlation_is_the_correlation_of_the_seed_mean_replicates(
        rng: np.random.Generator) -> None:
    cube, _ = paired_cube(rng, n_languages=4, n_boot=60)
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values.copy()
    boot[1, 2, 0] = np.nan                          # a missing seed: the mean of the others
    observed = np.ones((3, 4), dtype=bool)
    observed[2, 3] = False                          # a missing cell: identity row
    boot[2, 3] = np.nan
    got = error_correlation(boot, observed)
    for lang in range(4):
        rows = observed[:, lang]
        expected = np.corrcoef(np.nanmean(boot[rows, lang], axis=1))
        np.testing.assert_allclose(got[lang][np.ix_(rows, rows)], expected, rtol=1e-12)
    np.testing.assert_array_equal(got[3, 2], [0.0, 0.0, 1.0])


@pytest.mark.parametrize("n_factors", [1, 3])
def test_lowrank_loglik_equals_dense_multivariate_normal(rng: np.random.Generator,
                                                        n_factors: int) -> None:
    n_m, n_l = 5, 6
    ybar = rng.normal(size=(n_m, n_l))
    weight = np.ones((n_m, n_l))
    weight[1, 2] = weight[3, 2] = weight[0, 4] = 0.0
    mu, t2 = rng.normal(size=n_m), 0.7
    d = rng.uniform(0.2, 2.0, size=(n_m, n_l))
    load = rng.normal(size=(n_l, n_m, n_factors)) * weight.T[:, :, None]
    expected = 0.0
    for lang in range(n_l):
        rows = weight[:, lang] > 0
        f = load[lang][rows]
        cov = t2 + np.diag(d[rows, lang]) + f @ f.T
        expected += stats.multivariate_normal(mu[rows], cov).logpdf(ybar[rows, lang])
    got = lowrank_marginal_loglik(np.where(weight > 0, ybar, 0.0), weight, mu, d, t2, load,
                                  n_factors)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    # no factor: the diagonal-plus-rank-one form
    np.testing.assert_allclose(
        lowrank_marginal_loglik(np.where(weight > 0, ybar, 0.0), weight, mu, d, t2, load, 0),
        marginal_loglik(np.where(weight > 0, ybar, 0.0), weight, mu, d, t2), rtol=1e-12)


def test_paired_statistics_and_model_inputs(rng: np.random.Generator) -> None:
    cube, _ = paired_cube(rng, n_languages=4, n_boot=80)
    independent, paired = cube_statistics(cube, "independent"), cube_statistics(cube, "paired")
    assert not independent.paired
    assert paired.paired
    assert paired.boot_corr is not None
    assert paired.boot_corr.shape == (4, 3, 3)
    assert paired.boot_corr[:, 0, 1].min() > 0.7      # rho = 0.9 with 80 replicates
    cov = paired.boot_cov()
    np.testing.assert_allclose(np.einsum("lmm->ml", cov), paired.v_fixed, rtol=1e-12)
    assert paired.n_factors == 1                        # one shared factor (equicorrelation)
    np.testing.assert_allclose(np.einsum("lmm->ml", paired.model_cov()), paired.v_fixed,
                               rtol=1e-10)
    np.testing.assert_allclose(paired.model_cov(), cov, atol=0.1 * paired.v_fixed.max())
    inputs = model_inputs(paired, {k: 1.0 for k in (
        "alpha_mu", "alpha_sigma", "dev_sigma", "tau_lang_sigma", "tau_m_sigma",
        "sigma_seed_sigma")})
    assert inputs["load"].shape == (3, 1, 4)           # (model, factor, language): the kernel's
    np.testing.assert_array_equal(inputs["load"], paired.arrays()["load"].transpose(1, 2, 0))
    np.testing.assert_allclose(inputs["v_fixed"], paired.v_fixed * paired.psi.T)
    assert paired.digest == independent.digest


@pytest.mark.parametrize(("make", "message"), [
    (lambda rng: eq.simulate_cube(n_models=2, n_boot=None, rng=0), "has no boot_score"),
    (lambda rng: paired_cube(rng, n_boot=9)[0], "has 9 bootstrap replicates; the error "
                                                "correlation needs at least 10"),
])
def test_paired_needs_shared_replicates(make, message: str, rng: np.random.Generator) -> None:
    with pytest.raises(CubeError, match=f"`test_set_errors` is 'paired' but `cube` {message}"):
        cube_statistics(make(rng), "paired")


def test_paired_refuses_unmarked_replicates_that_show_no_pairing(
        rng: np.random.Generator) -> None:
    """Replicates drawn separately for each model (simulate_cube's), unmarked: 'paired' has
    nothing to pair (issue 35); marked shared, the same replicates are taken as paired."""
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, n_boot=50, rng=0)
    with pytest.raises(CubeError, match=r"'paired' but the cube does not say .* \(0 factors\)"
                                        r": nothing shows the replicates shared"):
        cube_statistics(cube, "paired")
    cube.attrs["shared_bootstrap"] = 1
    assert cube_statistics(cube, "paired").paired


def test_unknown_test_set_errors_is_named() -> None:
    with pytest.raises(ValueError, match="`test_set_errors` must be one of"):
        cube_statistics(eq.simulate_cube(rng=0), "shared")
    with pytest.raises(ValueError, match="`test_set_errors` must be one of"):
        eq.fit_hierarchical(eq.simulate_cube(rng=0), test_set_errors="shared")


def _dense_conditional(data: HierarchicalData, mu: np.ndarray, tau_m: np.ndarray,
                       sigma_seed: np.ndarray, tau_lang: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean and SD of theta given ybar, the joint Gaussian written out densely."""
    n_m, n_l = data.shape
    prior = np.diag(np.r_[np.full(n_l, tau_lang**2), np.repeat(tau_m**2, n_l)])
    design = np.zeros((n_m * n_l, n_l + n_m * n_l))
    for m in range(n_m):
        for lang in range(n_l):
            design[m * n_l + lang, [lang, n_l + m * n_l + lang]] = 1.0
    noise = np.zeros((n_m * n_l, n_m * n_l))        # cell (m, l) at m * n_l + l
    cov = data.model_cov()
    for lang in range(n_l):
        idx = np.arange(n_m) * n_l + lang
        noise[np.ix_(idx, idx)] = cov[lang]
    noise += np.diag((sigma_seed[:, None] ** 2 / np.maximum(data.n_seeds, 1)).ravel())
    obs = np.flatnonzero(data.observed.ravel())
    h = design[obs]
    gain = prior @ h.T @ np.linalg.inv(h @ prior @ h.T + noise[np.ix_(obs, obs)])
    mean_z = gain @ (data.ybar.ravel()[obs] - np.repeat(mu, n_l)[obs])
    cov_z = prior - gain @ h @ prior
    return (np.repeat(mu, n_l) + design @ mean_z, np.sqrt(np.diag(design @ cov_z @ design.T)),
            mean_z[:n_l], np.sqrt(np.diag(cov_z)[:n_l]))


def test_pathwise_draws_match_dense_conditioning(rng: np.random.Generator) -> None:
    cube, _ = paired_cube(rng, n_languages=4, n_boot=50, rho=0.7)
    cube["score"][2, 3] = np.nan
    cube["boot_score"][2, 3] = np.nan
    data = cube_statistics(cube, "paired")
    mu, tau_m, sigma_seed = np.array([0.1, -0.3, 0.5]), np.array([0.8, 1.2, 0.6]), \
        np.array([0.5, 0.4, 0.7])
    mean_theta, sd_theta, mean_a, sd_a = _dense_conditional(data, mu, tau_m, sigma_seed, 1.1)
    n = 40_000
    a, theta = draw_effects(data, np.tile(mu, (n, 1)), np.tile(tau_m, (n, 1)),
                               np.tile(sigma_seed, (n, 1)), np.full(n, 1.1), rng)
    theta = theta.reshape(n, -1)
    np.testing.assert_array_less(np.abs(theta.mean(0) - mean_theta), 5 * sd_theta / np.sqrt(n))
    np.testing.assert_allclose(theta.std(0), sd_theta, rtol=0.03)
    np.testing.assert_array_less(np.abs(a.mean(0) - mean_a), 5 * sd_a / np.sqrt(n))
    np.testing.assert_allclose(a.std(0), sd_a, rtol=0.03)


def test_pathwise_kernel_is_matherons_rule_with_dense_algebra(rng: np.random.Generator) -> None:
    """Given the normals, the numba kernel's a and theta equal Matheron's update computed with
    the dense covariance and a dense solve (two factors, a missing cell, 7 draws)."""
    from evaluq.hierarchical._pathwise import pathwise_draws

    n, n_l, n_m, k = 7, 3, 4, 2
    w = np.ones((n_l, n_m))
    w[1, 2] = 0.0
    ybar, unique = rng.normal(size=(n_l, n_m)) * w, rng.uniform(0.2, 1.0, (n_l, n_m)) * w
    inv_s, seed_weight = rng.uniform(0.1, 0.5, (n_l, n_m)) * w, np.array([1.0, 1.0, 0.0, 1.0])
    load = rng.normal(size=(n_l, n_m, k)) * w[..., None]
    mu, tau2, sig2 = rng.normal(size=(n, n_m)), rng.uniform(0.1, 2, (n, n_m)), \
        rng.uniform(0.1, 1, (n, n_m))
    t2 = rng.uniform(0.5, 3, n)
    z_a, z_g, z_f, z_e = (rng.standard_normal(shape) for shape in
                          ((n, n_l), (n, n_l, n_m), (n, n_l, k), (n, n_l, n_m)))
    a, theta, bench = pathwise_draws(ybar, w, unique, inv_s, seed_weight, load, mu, tau2, sig2,
                                     t2, z_a, z_g, z_f, z_e)
    assert theta is not None
    np.testing.assert_allclose(bench, theta.mean(axis=1), rtol=1e-12)
    a_only, none, bench_only = pathwise_draws(ybar, w, unique, inv_s, seed_weight, load, mu,
                                              tau2, sig2, t2, z_a, z_g, z_f, z_e,
                                              keep_cells=False)
    assert none is None
    np.testing.assert_array_equal(a_only, a)
    np.testing.assert_array_equal(bench_only, bench)
    for i in range(n):
        for lang in range(n_l):
            obs = w[lang] > 0
            seed = seed_weight * sig2[i] * inv_s[lang]
            a0, g0 = np.sqrt(t2[i]) * z_a[i, lang], np.sqrt(tau2[i]) * z_g[i, lang]
            e0 = load[lang] @ z_f[i, lang] + np.sqrt(unique[lang] + seed) * z_e[i, lang]
            err = load[lang] @ load[lang].T + np.diag(unique[lang] + seed)
            cov = t2[i] + np.diag(tau2[i]) + err
            resid = np.linalg.solve(cov[np.ix_(obs, obs)],
                                    (ybar[lang] - mu[i] - a0 - g0 - e0)[obs])
            a_ref = a0 + t2[i] * resid.sum()
            g_ref = g0.copy()
            g_ref[obs] += tau2[i][obs] * resid
            np.testing.assert_allclose(a[i, lang], a_ref, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(theta[i, lang], mu[i] + a_ref + g_ref, rtol=1e-10,
                                       atol=1e-12)


def test_a_factor_that_loads_nothing_gives_the_independent_draws(
        rng: np.random.Generator) -> None:
    """Paired statistics whose one factor loads nothing (k = 1, zero loadings, psi 1) and the
    independent statistics of the same cube (k = 0) give the same conditional distribution."""
    cube, _ = paired_cube(rng, n_languages=5, n_boot=50, rho=0.0)
    cube.attrs["shared_bootstrap"] = 1      # shared replicates, uncorrelated errors
    data = cube_statistics(cube, "paired")
    v = np.einsum("lmm->lm", data.boot_cov())
    object.__setattr__(data, "loadings", np.zeros((5, 3, 1)))    # a factor that loads nothing
    object.__setattr__(data, "psi", np.ones((5, 3)))
    np.testing.assert_allclose(np.einsum("lmm->lm", data.model_cov()), v)
    independent = cube_statistics(cube, "independent")
    args = (np.tile([0.0, 0.2, 0.4], (30_000, 1)), np.tile([0.5, 0.3, 0.8], (30_000, 1)),
            np.tile([0.3, 0.3, 0.3], (30_000, 1)), np.full(30_000, 1.5))
    _, theta_p = draw_effects(data, *args, rng)
    _, theta_s = draw_effects(independent, *args, rng)
    np.testing.assert_allclose(theta_p.mean(0), theta_s.mean(0), atol=0.03)
    np.testing.assert_allclose(theta_p.std(0), theta_s.std(0), rtol=0.04)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::evaluq.hierarchical.ConvergenceWarning")
def test_paired_fit_is_as_sharp_as_the_paired_bootstrap(tmp_path: Path) -> None:
    """Strongly correlated test-set errors: the paired posterior SD of a benchmark difference
    matches the paired bootstrap's; the independent model's is several times wider."""
    cube, _ = paired_cube(np.random.default_rng(5), n_languages=20)
    paired = eq.fit_hierarchical(cube, test_set_errors="paired", rng=1, draws=1000)
    independent = eq.fit_hierarchical(cube, test_set_errors="independent", rng=1, draws=1000)
    boot = eq.aggregate(eq.resample(cube, n_resamples=4000, replication="nonparametric",
                                    seeds="rescaled", rng=2))
    sd_boot = eq.pairwise_differences(boot)["sd"].isel(model=0, model_b=2).item()
    sd_post = {name: (fit.posterior.benchmark_mean.isel(model=0)
                      - fit.posterior.benchmark_mean.isel(model=2)).std().item()
               for name, fit in (("paired", paired), ("independent", independent))}
    assert sd_post["paired"] == pytest.approx(sd_boot, rel=0.25)
    assert sd_post["independent"] > 2.0 * sd_post["paired"]
    assert "test_set_errors='paired'" in repr(paired)
    assert paired.diagnostics().attrs["problems"] == []      # no divergences, R-hat, ESS
    table = paired.compare_frequentist()
    diffs = table[table.quantity == "difference"]
    assert diffs["agree"].all(), diffs
    path = tmp_path / "fit.nc"
    paired.save(path)
    for loaded in (eq.load_fit(path, cube), eq.load_fit(path)):
        assert loaded.data.paired
        np.testing.assert_allclose(np.asarray(loaded.data.boot_corr),
                                   np.asarray(paired.data.boot_corr))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::evaluq.hierarchical.ConvergenceWarning")
def test_paired_benchmark_differences_are_calibrated() -> None:
    """90% credible intervals of benchmark-mean differences cover the truth at the nominal
    rate over simulated cubes with correlated errors (one compiled model, refitted)."""
    gen = np.random.default_rng(11)
    n_cubes, hits, total = 40, 0, 0
    for _ in range(n_cubes):
        cube, theta = paired_cube(gen, n_languages=10, n_boot=100)
        fit = eq.fit_hierarchical(cube, test_set_errors="paired", rng=gen, draws=400,
                                  tune=400, retry=False)
        bench = fit.posterior.benchmark_mean
        truth = theta.mean(axis=1)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            diff = (bench.isel(model=i) - bench.isel(model=j)).values.ravel()
            lo, hi = np.quantile(diff, [0.05, 0.95])
            hits += int(lo <= truth[i] - truth[j] <= hi)
            total += 1
    rate = hits / total
    print(f"90% interval coverage of benchmark differences: {rate:.3f} over {total}")
    band = 3 * np.sqrt(0.9 * 0.1 / n_cubes)   # the 3 pairs of a cube are dependent: per cube
    assert abs(rate - 0.9) <= band, rate


@pytest.mark.parametrize("chunk", [None, 3 * 4 * 3 * 2])
def test_conditional_draws_do_not_depend_on_the_number_of_threads(
        chunk: int | None, monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    """Each chain has its own stream: one thread or several give the same draws (also in
    chunks, which reuse the normals' buffers); without the cells, the same a and benchmark
    means, which are the cells' mean over languages."""
    from evaluq.hierarchical import _posterior

    if chunk is not None:
        monkeypatch.setattr(_posterior, "CHUNK_CELLS", chunk)  # chunks of 2, 2 and 1 draws
    data = cube_statistics(paired_cube(rng, n_languages=4, n_boot=40)[0], "paired")
    n_c, n_d, n_m = 3, 5, data.shape[0]
    post = {"mu": rng.normal(size=(n_c, n_d, n_m)),
            "tau_m": rng.uniform(0.1, 1, (n_c, n_d, n_m)),
            "sigma_seed": rng.uniform(0.1, 1, (n_c, n_d, n_m)),
            "tau_lang": rng.uniform(0.1, 1, (n_c, n_d))}
    many = _posterior.conditional_draws(data, post, np.random.default_rng(1), keep_cells=True)
    monkeypatch.setattr(_posterior.os, "cpu_count", lambda: 1)
    one = _posterior.conditional_draws(data, post, np.random.default_rng(1), keep_cells=True)
    lean = _posterior.conditional_draws(data, post, np.random.default_rng(1), keep_cells=False)
    assert set(many) == set(one) == {"a", "benchmark_mean", "theta"}
    for name in many:
        np.testing.assert_array_equal(many[name], one[name])
    assert set(lean) == {"a", "benchmark_mean"}
    np.testing.assert_array_equal(lean["a"], one["a"])
    np.testing.assert_allclose(lean["benchmark_mean"], one["theta"].mean(axis=-1), rtol=1e-12)
    assert np.isfinite(one["theta"]).all()

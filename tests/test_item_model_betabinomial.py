"""The beta-binomial family of the item model (issue 22): the marginal log-density against
numerical integration of scipy's beta-binomial, the pattern terms, the conditional draws and
the ICC, a fit's whole interface, predictive checks and LOO against the binomial family, bad
input, and (slow) recovery of known parameters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.item_model import ItemConvergenceWarning, item_statistics, simulate_items
from evaluq.item_model._betabinomial import (
    conditional_draws,
    icc_draws,
    replicate_counts,
    term_loglik,
)
from evaluq.item_model._model import term_loglik as binomial_term_loglik

COLS = {"model": "model", "item": "item", "score": "score", "task": "task", "epoch": "epoch"}
BB = "beta-binomial"
GRID = np.linspace(-30, 30, 60001)


def _table(**kw):
    kw = {"n_models": 3, "n_items": 48, "n_epochs": 3, "n_tasks": 2, "overdispersion": 0.6,
          "rng": 3} | kw
    table = simulate_items(**kw)
    table["score"] = table["score"].astype(np.float64)
    return table


def _bb_logpmf(y, n, x, rho):
    """scipy's beta-binomial at p = expit(x) (1 - p computed as expit(-x))."""
    phi = 1.0 / rho - 1.0
    return stats.betabinom.logpmf(y, n, expit(x) * phi, expit(-x) * phi)


def _fit(table, family=BB, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        return eq.fit_items(table, **COLS, family=family, **({"draws": 150, "tune": 150,
                                                               "chains": 2, "rng": 1} | kw))


# --- terms and the marginal log-density --------------------------------------------------------

def test_items_with_the_same_pattern_form_one_term():
    d = item_statistics(_table(), **COLS, family=BB)
    assert d.family == BB
    np.testing.assert_array_equal(d.term_counts[d.item_term], d.per_item.T)
    np.testing.assert_array_equal(d.term_task[d.item_term], d.item_task)
    assert d.term_weight.sum() == 48
    rows = {(int(k), *map(int, c)) for k, c in zip(d.item_task, d.per_item.T, strict=True)}
    assert len(rows) == len(d.term_weight)                       # distinct rows, no fewer
    np.testing.assert_array_equal(d.term_total, d.term_counts.sum(axis=1))


@pytest.mark.parametrize("sigma", [0.2, 1.0, 3.0])
@pytest.mark.parametrize("rho", [0.02, 0.3, 0.8])
def test_marginal_loglik_equals_quad_of_scipy_betabinom(sigma, rho):
    """sum_t w_t term_t + sum_i log C = sum_i log int prod_m BetaBinom(y_im) N(b) db (quad)."""
    d = item_statistics(_table(n_items=20, n_epochs=4, rng=5), **COLS, family=BB)
    eta = np.random.default_rng(0).normal(0.3, 0.8, d.shape)
    task = d.term_task
    terms = term_loglik(eta[:, task].T, d.epochs[:, task].T, d.term_counts, rho, sigma)
    ours = (d.term_weight * terms).sum() + d.log_binom.sum()
    ref = 0.0
    for i in range(d.per_item.shape[1]):          # brute force, one quad per item
        k, y = d.item_task[i], d.per_item[:, i]

        def density(b, k=k, y=y):
            return np.exp(_bb_logpmf(y, 4, eta[:, k] - b, rho).sum()
                          + stats.norm.logpdf(b, 0, sigma))

        value, _ = integrate.quad(density, -12 * sigma - 10, 12 * sigma + 10, points=[0.0],
                                  limit=200, epsabs=0.0, epsrel=1e-12)
        ref += np.log(value)
    assert ours == pytest.approx(ref, abs=2e-5)
    value, _ = _sampler_loglik(d, eta, sigma, rho)
    assert value == pytest.approx(ref - d.log_binom.sum(), abs=1e-7)


def _sampler_loglik(d, eta, sigma, rho):
    """The sampler's log-density of the items (the shared grid, ``build_model``'s graph)
    and its gradient in (eta, sigma, rho), through PyTensor."""
    import pytensor
    import pytensor.tensor as pt

    from evaluq.item_model._betabinomial import (
        grid_spacing,
        pair_rows,
        sampler_loglik,
    )

    e, s, r = pt.dmatrix("eta"), pt.dscalar("sigma"), pt.dscalar("rho")
    pairs, rows = pair_rows(d)
    out = sampler_loglik(e, d.epochs, r, s, grid_spacing(d), pairs, rows, np.ones(rows.shape),
                         d.term_weight)
    fn = pytensor.function([e, s, r], [out, *pt.grad(out, [e, s, r])], mode="FAST_COMPILE")
    value, *grads = fn(eta, sigma, rho)
    return float(value), grads


def test_sampler_gradient_equals_finite_differences_of_the_adaptive_rule():
    """The grid's gradient (no gradient through its nodes) is the derivative of the
    integral: finite differences of the independent adaptive Gauss-Hermite form."""
    d = item_statistics(_table(n_items=30, rng=6), **COLS, family=BB)
    eta = np.random.default_rng(1).normal(0.3, 0.8, d.shape)
    sigma, rho = 1.3, 0.25
    task = d.term_task

    def ref(eta, sigma, rho):
        return (d.term_weight * term_loglik(eta[:, task].T, d.epochs[:, task].T,
                                            d.term_counts, rho, sigma)).sum()

    value, (g_eta, g_sigma, g_rho) = _sampler_loglik(d, eta, sigma, rho)
    assert value == pytest.approx(ref(eta, sigma, rho), abs=1e-6)
    eps = 1e-5
    bump = np.zeros_like(eta)
    bump[1, 0] = eps
    assert g_eta[1, 0] == pytest.approx((ref(eta + bump, sigma, rho)
                                         - ref(eta - bump, sigma, rho)) / (2 * eps), rel=1e-5)
    assert g_sigma == pytest.approx((ref(eta, sigma + eps, rho) - ref(eta, sigma - eps, rho))
                                    / (2 * eps), rel=1e-5)
    assert g_rho == pytest.approx((ref(eta, sigma, rho + eps) - ref(eta, sigma, rho - eps))
                                  / (2 * eps), rel=1e-5)


@pytest.mark.parametrize("n_max", [3, 20])
def test_log_beta_binomial_kernel_equals_scipy(n_max):
    """Both forms of the kernel (rising factorials up to 16 epochs, gammaln above) equal
    scipy.stats.betabinom.logpmf - log C(n, y), from x = -30 to 30 and rho 1e-6 to 0.95."""
    from scipy.special import gammaln

    from evaluq.item_model._betabinomial import log_bb_kernel

    n = np.arange(n_max + 1.0)[:, None, None, None]
    y = np.arange(n_max + 1.0)[None, :, None, None]
    x = np.linspace(-30, 30, 61)[None, None, :, None]
    rho = np.array([1e-6, 0.01, 0.3, 0.95])
    phi = 1 / rho - 1
    ok = y <= n
    ours = log_bb_kernel(np, x, n, y, phi, n_max)
    with np.errstate(invalid="ignore", divide="ignore"):       # y > n: masked below
        ref = _bb_logpmf(y, n, x, rho) - (gammaln(n + 1) - gammaln(y + 1)
                                          - gammaln(n - y + 1))
    ours, ref = np.broadcast_arrays(ours, ref)
    mask = np.broadcast_to(ok, ours.shape) & np.isfinite(ref)
    np.testing.assert_allclose(ours[mask], ref[mask], rtol=1e-9, atol=1e-6)


def test_small_drift_is_the_binomial_limit():
    d = item_statistics(_table(overdispersion=0.0), **COLS, family=BB)
    eta = np.array([[0.5, -0.2], [1.0, 0.3], [0.0, 0.0]])
    task = d.term_task
    ours = term_loglik(eta[:, task].T, d.epochs[:, task].T, d.term_counts, 1e-7, 1.0)
    lin = (d.term_counts * eta[:, task].T).sum(axis=1)
    binom = lin + binomial_term_loglik(eta[:, task].T, d.epochs[:, task].T, d.term_total, 1.0)
    np.testing.assert_allclose(ours, binom, atol=1e-4)


# --- after sampling ----------------------------------------------------------------------------

def test_benchmark_draws_average_to_the_conditional_expectation():
    d = item_statistics(_table(), **COLS, family=BB)
    eta = np.broadcast_to(np.array([[0.5, -0.2], [1.0, 0.3], [0.0, 0.0]]), (3000, 3, 2)).copy()
    sigma, rho = np.full(3000, 1.2), np.full(3000, 0.4)
    out = conditional_draws(d, eta, sigma, rho, np.random.default_rng(1))
    x = eta[0][:, d.item_task][..., None] - GRID                        # (M, I, grid)
    logf = _bb_logpmf(d.per_item[..., None], 3, x, 0.4).sum(axis=0) + \
        stats.norm.logpdf(GRID, 0, 1.2)
    post = np.exp(logf - logf.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    expected = (post[None] * expit(x)).sum(axis=-1).mean(axis=1)          # (M,)
    mc_se = out["benchmark"].std(axis=0) / np.sqrt(3000)
    assert np.all(np.abs(out["benchmark"].mean(axis=0) - expected) < 4 * mc_se + 1e-4)
    np.testing.assert_allclose(out["item_mean"], (post * GRID).sum(axis=1), atol=2e-3)


def test_icc_and_replicates_against_monte_carlo():
    d = item_statistics(_table(n_tasks=1), **COLS, family=BB)
    eta, sigma, rho = np.array([[[0.4], [1.0], [-0.5]]]), np.array([1.2]), np.array([0.3])
    gen = np.random.default_rng(2)
    n_mc = 400_000
    b = gen.normal(0, 1.2, n_mc)
    p = expit(eta[0] - b)                                                   # (M, n)
    y = replicate_counts(np.full((3, n_mc), 2.0), p, 0.3, gen)            # two epochs
    both = (y == 2).mean(axis=1)                                          # P(y_e = y_e' = 1)
    mean = y.mean(axis=1) / 2
    mc_icc = (both - mean**2) / (mean * (1 - mean))
    np.testing.assert_allclose(icc_draws(d, eta, sigma, rho)["icc_epochs"][0], mc_icc,
                               atol=6e-3)
    q = np.full(n_mc, 0.3)
    counts = replicate_counts(np.full(n_mc, 5.0), q, 0.25, gen)
    ref = stats.betabinom(5, 0.3 * 3, 0.7 * 3)
    assert counts.mean() == pytest.approx(ref.mean(), abs=0.01)
    assert counts.var() == pytest.approx(ref.var(), rel=0.01)


# --- fits: the whole interface -----------------------------------------------------------------

@pytest.fixture(scope="module")
def drift():
    """Data with run drift (rho 0.6), fitted by both families."""
    table = _table(rng=4)
    return table, _fit(table), _fit(table, family="binomial")


@pytest.fixture(scope="module")
def no_drift():
    table = _table(overdispersion=0.0, rng=5)
    return table, _fit(table), _fit(table, family="binomial")


def test_fit_interface(drift, tmp_path):
    table, fit, _ = drift
    assert fit.config["family"] == BB
    assert fit.form == "marginal"
    assert fit.config["quadrature_nodes"] == 31
    for scope in ("benchmark", "new_items"):
        assert fit.scores(scope).dims == ("chain", "draw", "model")
        pw = fit.pairwise_differences(scope, rope=0.01)
        np.testing.assert_allclose((pw.p_below + pw.p_rope + pw.p_above).values, 1.0)
        assert fit.rank_probabilities(scope).p_best.sum().item() == pytest.approx(1.0)
    vc = fit.variance_components()
    assert {"sigma_item", "run_drift", "icc_epochs", "design_effect", "effective_n"} <= set(
        vc.data_vars)
    assert "rho = 1 / (1 + phi)" in vc.attrs["run_drift"]
    np.testing.assert_allclose(vc.design_effect, 1 + 2 * vc.icc_epochs)
    ci = fit.run_drift_interval(0.9)
    assert ci.attrs["ci_kind"] == "percentile"
    assert ci.attrs["confidence_level"] == 0.9
    assert ci.sel(ci_bound="lower") < ci.sel(ci_bound="upper")
    assert "run_drift" in fit.diagnostics().index.get_level_values(0)
    assert "ItemFit(family='beta-binomial', form='marginal'" in repr(fit)
    assert "run_drift (rho)" in repr(fit)
    freq = fit.compare_frequentist()
    np.testing.assert_allclose(freq[freq.quantity == "score"].frequentist,
                               table.groupby("model").score.mean().values)
    path = tmp_path / "bb.nc"
    fit.save(path)
    back = eq.load_item_fit(path)
    np.testing.assert_array_equal(back.data.term_counts, fit.data.term_counts)
    np.testing.assert_array_equal(back.posterior["run_drift"], fit.posterior["run_drift"])
    assert back.data.family == BB


def test_rho_and_scores_are_near_the_truth(drift):
    table, fit, _ = drift
    lo, hi = fit.posterior["run_drift"].quantile([0.005, 0.995]).values
    assert lo < 0.6 < hi
    truth = table.attrs["truth"]["benchmark"]
    err = np.abs(fit.scores().mean(("chain", "draw")).values - truth)
    assert err.max() < 0.1


def test_epoch_agreement_passes_under_beta_binomial_and_fails_under_binomial(drift):
    _, fit, binomial = drift

    def agreement(f):
        checks = f.predictive_checks(n_replicates=60, rng=0)
        return checks[(checks.check == "posterior") & (checks.statistic == "epoch_agreement")]

    assert agreement(fit).passed.item()
    assert not agreement(binomial).passed.item()
    checks = fit.predictive_checks(n_replicates=60, rng=0)
    assert checks[checks.check == "prior"].passed.all()


def test_compare_fits_prefers_beta_binomial_on_drift(drift):
    _, fit, binomial = drift
    table = eq.compare_fits({"beta-binomial": fit, "binomial": binomial})
    assert table.index[0] == "beta-binomial"
    print(table)
    assert abs(table.loc["binomial", "elpd_diff"]) > 2 * table.loc["binomial", "dse"]


def test_compare_fits_close_without_drift(no_drift):
    _, fit, binomial = no_drift
    table = eq.compare_fits({"beta-binomial": fit, "binomial": binomial})
    second = table.index[1]
    # without drift the extra parameter buys nothing: the two are within about 2 SE
    print(table)
    assert abs(table.loc[second, "elpd_diff"]) < max(2 * table.loc[second, "dse"], 2.0)
    assert float(fit.posterior["run_drift"].mean()) < 0.15


def test_pointwise_loglik_is_the_quad_of_one_item(drift):
    from evaluq.item_model._compare import pointwise_loglik

    _, fit, _ = drift
    ll = pointwise_loglik(fit, fit.data)
    post = fit.posterior.isel(chain=0, draw=0)
    eta, sigma, rho = post["eta"].values, float(post["sigma_item"]), float(post["run_drift"])
    d = fit.data
    for i in (0, 7):
        k, y = d.item_task[i], d.per_item[:, i]

        def density(b, k=k, y=y):
            return np.exp(_bb_logpmf(y, 3, eta[:, k] - b, rho).sum()
                          + stats.norm.logpdf(b, 0, sigma))

        value, _ = integrate.quad(density, -40, 40, points=[0.0], limit=200, epsrel=1e-12)
        assert ll[0, i] == pytest.approx(np.log(value), abs=1e-6)


# --- bad input ----------------------------------------------------------------------------------

def test_fractional_scores():
    t = _table()
    t.loc[0, "score"] = 0.5
    with pytest.raises(ValueError, match="family 'beta-binomial' needs scores 0 or 1"):
        eq.fit_items(t, **COLS, family=BB)


def test_single_epoch():
    with pytest.raises(ValueError, match="'beta-binomial' needs at least 2 epochs per item"):
        eq.fit_items(_table(n_epochs=1), **COLS, family=BB)


def test_unequal_epochs_per_item():
    t = _table()
    t = t[~((t["item"] == 3) & (t["epoch"] == 1))]
    with pytest.raises(CubeError, match="unequal epochs per item"):
        eq.fit_items(t, **COLS, family=BB)


def test_one_model_with_a_single_epoch():
    t = _table()
    t = t[~((t["model"] == "m1") & (t["epoch"] > 0))]
    with pytest.raises((ValueError, CubeError), match="epoch"):
        eq.fit_items(t, **COLS, family=BB)


def test_no_items():
    with pytest.raises(ValueError, match="'beta-binomial' needs items and epochs"):
        eq.fit_items(_table(), model="model", item=None, score="score", family=BB)


@pytest.mark.parametrize(("priors", "match"), [
    ({"run_drift_beta": -1.0}, r"`priors\['run_drift_beta'\]` must be finite and > 0"),
    ({"run_drift": 1.0}, "unknown key 'run_drift'"),
])
def test_bad_priors(priors, match):
    with pytest.raises(ValueError, match=match):
        eq.fit_items(_table(), **COLS, family=BB, priors=priors, draws=10, tune=0)


def test_run_drift_prior_under_binomial_and_interval_of_a_binomial_fit(drift):
    with pytest.raises(ValueError, match="unknown key 'run_drift_beta'"):
        eq.fit_items(_table(), **COLS, family="binomial", priors={"run_drift_beta": 3.0})
    with pytest.raises(ValueError, match="run_drift_interval needs family='beta-binomial'"):
        drift[2].run_drift_interval()
    with pytest.raises(ValueError, match="confidence_level"):
        drift[1].run_drift_interval(1.5)


# --- recovery (slow) -----------------------------------------------------------------------------

@pytest.mark.slow
def test_recovery_of_rho_sigma_item_and_scores():
    t = simulate_items(n_models=5, n_items=300, n_epochs=4, n_tasks=1, sigma_item=1.3,
                       overdispersion=0.3, rng=21)
    fit = _fit(t, draws=400, tune=600, rng=2)
    post = fit.posterior
    # the data speak to the SD of these 300 items' effects (1.16 here, 3 SE below 1.3):
    # re-drawn in simulate_items' order (model, task, model x task effects, then items)
    gen = np.random.default_rng(21)
    gen.normal(0, 0.5, 5), gen.normal(0, 0.5, 1), gen.normal(0, 0.2, (5, 1))
    realised = float(gen.normal(0, 1.3, 300).std())
    out = []
    for name, true in (("run_drift", 0.3), ("sigma_item", realised)):
        lo, hi = post[name].quantile([0.005, 0.995]).values
        out.append(f"{name}={float(post[name].mean()):.3f} [{lo:.3f}, {hi:.3f}] (true "
                   f"{true:.3f})")
        assert lo < true < hi, name
    lo, hi = fit.scores().quantile([0.001, 0.999], ("chain", "draw")).values
    truth = t.attrs["truth"]["benchmark"]
    inside = ((lo <= truth) & (truth <= hi)).mean()
    print(f"\nbeta-binomial recovery: {', '.join(out)}; benchmark truth inside 99.8%: "
          f"{inside:.2f}")
    assert inside >= 0.8


@pytest.mark.slow
def test_calibration_of_scores_and_run_drift():
    """Coverage of the 90% intervals of the per-model benchmark scores and of rho, over small
    data sets simulated with run drift rho ~ U(0.05, 0.5) (one compiled model, refitted)."""
    import time

    n_sim, level = 20, 0.9
    gen = np.random.default_rng(5)
    hits: dict[str, list[np.ndarray]] = {"benchmark per-model": [], "run_drift": []}
    start = time.perf_counter()
    for i in range(n_sim):
        rho = gen.uniform(0.05, 0.5)
        t = simulate_items(n_models=4, n_items=64, n_epochs=3, model_sd=0.5, sigma_item=1.0,
                           overdispersion=rho, rng=300 + i)
        fit = _fit(t, draws=150, tune=250, rng=i)
        q = [(1 - level) / 2, (1 + level) / 2]
        lo, hi = fit.scores().quantile(q, ("chain", "draw")).values
        truth = t.attrs["truth"]["benchmark"]
        hits["benchmark per-model"].append((lo <= truth) & (truth <= hi))
        lo, hi = fit.posterior["run_drift"].quantile(q).values
        hits["run_drift"].append(np.array([lo <= rho <= hi]))
    print(f"\nbeta-binomial calibration: {n_sim} data sets, {time.perf_counter() - start:.0f} s")
    for name, values in hits.items():
        flat = np.concatenate(values)
        print(f"\nCALIBRATION | item model beta-binomial (rho ~ U(0.05, 0.5); 4 models x 64 "
              f"items x 3 epochs) {name} | {level:.0%} credible interval coverage | nominal "
              f"{level:.3f} | measured {flat.mean():.4f} | n {flat.size}")
        low, high = stats.binom.ppf([0.0005, 0.9995], flat.size, level)
        assert low <= flat.sum() <= high, name



def _responses_bb(gen: np.random.Generator, eta: np.ndarray, n_i: int, n_e: int):
    """The beta-binomial's own draws for the SBC: sigma_item ~ HalfNormal(1), rho ~ Beta(1,
    5), b_i ~ N(0, sigma^2); each (model, item) draws q ~ Beta(p phi, (1 - p) phi), phi = 1
    / rho - 1, and its epochs are Bernoulli(q)."""
    s_b, rho = abs(gen.normal(0.0, 1.0)), gen.beta(1.0, 5.0)
    b = gen.normal(0.0, s_b, n_i)
    p = expit(eta[:, None] - b)
    phi = 1.0 / rho - 1.0
    q = gen.beta(p * phi, (1.0 - p) * phi)
    y = gen.random((len(eta), n_i, n_e)) < q[..., None]
    return y, {"sigma_item": np.array([s_b]), "run_drift": np.array([rho]),
               "benchmark_score": p.mean(axis=1)}


@pytest.mark.slow
def test_sbc_of_the_beta_binomial_model(simulation_based_calibration):
    """Simulation-based calibration of the marginal form (items integrated out on the shared
    grid, ``_bb_grid``): data drawn from the fitted model's own prior; each parameter's
    rank among thinned posterior draws is uniform (chi-square over 10 bins) and its central
    90% interval covers the truth at the nominal rate (binomial 99.9% band)."""
    simulation_based_calibration(_responses_bb, "item model beta-binomial SBC", seed=23,
                                 n_sim=60, n_epochs=3, tune=400,
                                 priors={"run_drift_beta": 5.0}, family=BB)

def _means_and_mcse(raw_post, names):
    """Posterior mean and MCSE of each scalar (or flattened) variable."""
    from evaluq._convergence import convergence_arrays

    out = {}
    for name in names:
        arr = np.asarray(raw_post[name].transpose("chain", "draw", ...).values)
        arr = arr.reshape(arr.shape[0], arr.shape[1], -1)
        out[name] = (arr.mean(axis=(0, 1)), convergence_arrays(arr)["mcse_mean"])
    return out


@pytest.mark.slow
def test_posterior_means_equal_the_explicit_items_model():
    """The marginal form (items integrated out on the shared grid) and the same model with
    one explicit non-centred effect per item sample the same posterior: their means of
    alpha, dev, sigma_item and run_drift agree within 4 combined MCSEs (3 models x 60
    items x 3 epochs, 2 tasks; both sampled by nutpie)."""
    import nutpie
    import pymc as pm
    import pytensor.tensor as pt

    from evaluq.item_model._betabinomial import log_bb_kernel, max_epochs, resolve_priors
    from evaluq.item_model._model import _effects

    table = _table(n_items=60, rng=8)
    d = item_statistics(table, **COLS, family=BB)
    fit = _fit(table, draws=1500, tune=1000, chains=2, rng=3)
    task = np.asarray(d.item_task)
    with pm.Model(coords={"model": list(map(str, d.models))}) as explicit:
        x = {f"prior_{k}": pm.Data(f"prior_{k}", np.asarray(v))
             for k, v in resolve_priors(d, None).items()}
        eta = _effects(x, d)
        sigma = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
        rho = pm.Beta("run_drift", 1.0, x["prior_run_drift_beta"])
        z = pm.Normal("item_z", 0.0, 1.0, shape=len(task))
        logit = eta[:, task] - sigma * z[None, :]
        pm.Potential("items", log_bb_kernel(pt, logit, d.epochs[:, task], d.per_item,
                                            1.0 / rho - 1.0, max_epochs(d)).sum())
    compiled = nutpie.compile_pymc_model(explicit, backend="numba")
    raw = nutpie.sample(compiled, draws=1500, tune=1000, chains=2, seed=4, progress_bar=False,
                        target_accept=0.9)
    names = ("alpha", "dev", "sigma_item", "run_drift")
    ours = _means_and_mcse(fit.posterior, names)
    ref = _means_and_mcse(raw["posterior"], names)
    for name in names:
        (m1, s1), (m2, s2) = ours[name], ref[name]
        print(f"\n{name}: marginal {np.round(m1, 3)} (MCSE {np.round(s1, 3)}), explicit "
              f"{np.round(m2, 3)} (MCSE {np.round(s2, 3)})")
        assert np.all(np.abs(m1 - m2) < 4 * np.sqrt(s1**2 + s2**2)), name


@pytest.mark.parametrize(("sigma", "rho"), [(0.69, 0.01), (0.3, 0.001)])
def test_sampler_grid_reaches_extreme_items_with_many_epochs(sigma, rho):
    """4 models x 40 epochs and a small sigma_item: an item no model ever answers (or every
    model always does) has its mass 7 prior SDs out; the grid is widened to reach it (the
    adaptive rule, equal to quad on those terms to 1e-12, is the reference)."""
    t = simulate_items(n_models=4, n_items=30, n_epochs=40, n_tasks=2, overdispersion=0.02,
                       sigma_item=0.7, rng=3)
    t.loc[t["item"] < 2, "score"] = 0
    t.loc[(t["item"] >= 2) & (t["item"] < 4), "score"] = 1
    d = item_statistics(t, **COLS, family=BB)
    eta = np.full(d.shape, 0.5)
    task = d.term_task
    ref = (d.term_weight * term_loglik(eta[:, task].T, d.epochs[:, task].T, d.term_counts,
                                       rho, sigma)).sum()
    assert _sampler_loglik(d, eta, sigma, rho)[0] == pytest.approx(ref, abs=1e-6)


@pytest.mark.slow
def test_shape_advice_of_a_beta_binomial_fit_points_to_the_learned_binomial():
    """On 2,000 bimodal items x 2 epochs the beta-binomial fit's item-shape checks fail, and
    the advice names the learned item distribution together with family='binomial' (the
    learned distribution is the binomial family's only)."""
    from evaluq.item_model._simulate import BIMODAL

    t = simulate_items(n_models=5, n_items=2000, n_epochs=2, rng=8, item_mixture=BIMODAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(t, **COLS, family="beta-binomial", draws=200, tune=300, chains=2,
                           rng=1)
    checks = fit.predictive_checks(n_replicates=100, rng=0)
    shape = checks[(checks.check == "posterior")
                   & checks.statistic.isin(["item_skewness", "item_kurtosis"])]
    assert not shape.passed.all()
    assert "item_distribution='learned'" in checks.attrs["advice"]
    assert "family='binomial'" in checks.attrs["advice"]


def test_effects_centred_when_the_data_pin_them_down():
    """The beta-binomial samples its task and model x task effects centred when the data pin
    them down, by the binomial family's rule on the same table (non-centred, it mixed
    sigma_task at ESS 129-184 of 2,000 draws at 20 models x 2,000 items x 5 epochs; centred
    1,907-2,095, measured), and non-centred on a small table."""
    from evaluq.item_model._betabinomial import build_model
    from evaluq.item_model._model import centred_effects

    def free(data):
        return {v.name for v in build_model(data).free_RVs}

    big = simulate_items(n_models=4, n_items=1200, n_epochs=3, n_tasks=3, sigma_task=0.6,
                         sigma_model_x_task=0.4, overdispersion=0.2, rng=2)
    data = item_statistics(big, **COLS, family="beta-binomial")
    assert centred_effects(data)
    assert centred_effects(data) == centred_effects(item_statistics(big, **COLS,
                                                                    family="binomial"))
    assert {"task_effect", "model_x_task"} <= free(data)
    small = big[big["item"].isin(big["item"].unique()[::20])]      # 60 items, 3 tasks
    data = item_statistics(small, **COLS, family="beta-binomial")
    assert not centred_effects(data)
    assert {"task_z", "model_x_task_z"} <= free(data)


def test_the_centring_fit_reads_the_binomial_terms_of_the_patterns():
    """The plug-in fit that decides the centring (``_model.cell_estimates``) reads the
    beta-binomial's response patterns as the binomial's (task, item total) terms: the same
    estimates as the binomial family's and as the fit over every pattern (which took 3.7 s,
    against 0.33 s, at 20 models x 10^4 items x 5 epochs: 9,589 patterns, 404 terms)."""
    from evaluq.item_model._drift import plug_in_fit
    from evaluq.item_model._model import cell_estimates

    table = simulate_items(n_models=5, n_items=400, n_epochs=4, n_tasks=2,
                           overdispersion=0.3, rng=4)
    data = item_statistics(table, **COLS, family="beta-binomial")
    binomial = item_statistics(table, **COLS, family="binomial")
    assert len(data.term_total) > 3 * len(binomial.term_total)
    eta, noise, sigma = cell_estimates(data)
    every = plug_in_fit(data.correct, data.epochs, data.term_total, data.term_task,
                        data.term_weight)
    np.testing.assert_allclose(eta, every[0], rtol=0, atol=1e-7)
    assert sigma == pytest.approx(every[1], abs=1e-7)
    for got, want in zip((eta, noise, sigma), cell_estimates(binomial), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(("n_models", "n_epochs", "paired"),
                         [(3, 3, True), (4, 3, True), (3, 12, False)])
def test_pair_rows_give_the_terms_sums_of_single_rows(n_models, n_epochs, paired):
    """The sampler's terms read rows of model pairs (an odd model paired with a zero row),
    or with many epochs (more possible pairs than terms) each model's row alone: value and
    gradient equal the same kernel on one row per model."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    from evaluq.item_model._betabinomial import (
        _paired,
        bb_table,
        centre,
        extreme_terms,
        grid_spacing,
        max_epochs,
        model_inputs,
        padded_pairs,
        pair_rows,
        term_rows,
    )
    from evaluq.item_model._gridquad import extreme_span, grid_loglik, grid_nodes, prior_base

    t = simulate_items(n_models=n_models, n_items=120, n_epochs=n_epochs, n_tasks=2,
                       overdispersion=0.3, rng=4)
    d = item_statistics(t, **COLS, family=BB)
    assert _paired(d) is paired
    pairs, term_pairs = pair_rows(d)
    assert term_pairs.shape[1] == (-(-n_models // 2) if paired else n_models)
    assert len(model_inputs(d, {})["pairs"]) == padded_pairs(d) >= len(pairs)
    eta = np.random.default_rng(2).normal(0.2, 0.7, d.shape)
    e, s, r = pt.dmatrix("eta"), pt.dscalar("sigma"), pt.dscalar("rho")
    span = extreme_span(pt, s, *centre(*extreme_terms(pt, e, d.epochs), r, s))
    b, h = (disconnected_grad(v) for v in grid_nodes(s, grid_spacing(d), span))  # as there
    table = bb_table(pt, e, d.epochs, 1.0 / r - 1.0, b, max_epochs(d)).reshape((-1, b.shape[0]))
    rows = term_rows(d)
    single = grid_loglik(table, prior_base(pt, b, s, h), rows, np.ones(rows.shape),
                         d.term_weight)
    fn = pytensor.function([e, s, r], [single, *pt.grad(single, [e, s, r])],
                           mode="FAST_COMPILE")
    want = fn(eta, 1.2, 0.3)
    value, grads = _sampler_loglik(d, eta, 1.2, 0.3)
    assert value == pytest.approx(float(want[0]), rel=1e-13)
    for got, ref in zip(grads, want[1:], strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-12)

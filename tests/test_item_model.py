"""The item model (issue 22): sufficient statistics, the marginal likelihood against numerical
integration of the binomial likelihood, the conditional draws, a small fit's structure, bad
input, and (slow) recovery of known parameters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.item_model import ItemConvergenceWarning, item_statistics, simulate_items
from evaluq.item_model._model import log_integrand, term_loglik
from evaluq.item_model._posterior import conditional_draws, icc_draws, new_items_scores

COLS = {"model": "model", "item": "item", "score": "score", "task": "task", "epoch": "epoch"}
GRID = np.linspace(-30, 30, 60001)


def _table(**kw):
    kw = {"n_models": 3, "n_items": 40, "n_epochs": 2, "n_tasks": 2, "rng": 3} | kw
    table = simulate_items(**kw)
    table["score"] = table["score"].astype(np.float64)
    return table


def _log_int(logf):
    top = logf.max(axis=-1, keepdims=True)
    return (top[..., 0] + np.log(np.trapezoid(np.exp(logf - top), GRID, axis=-1)))


# --- sufficient statistics ---------------------------------------------------------------------

def test_statistics_match_a_groupby():
    t = _table()
    d = item_statistics(t, **COLS)
    g = t.groupby(["model", "task"]).score.sum().unstack()
    np.testing.assert_array_equal(d.correct, g.values)
    assert d.family == "binomial"
    assert d.has_items
    np.testing.assert_array_equal(d.epochs, 2.0)
    totals = t.groupby(["task", "item"]).score.sum()
    np.testing.assert_array_equal(d.term_total[d.item_term], totals.values)
    assert d.term_weight.sum() == 40
    assert len(d.term_total) <= 2 * (3 * 2 + 1)


def test_auto_family_is_bernoulli_with_one_epoch():
    t = _table(n_epochs=1)
    d = item_statistics(t, **COLS)
    assert d.family == "bernoulli"
    assert d.notes["family"] == "family='auto' chose 'bernoulli' (0/1 scores, 1 epoch(s) per item)"


# --- the marginal likelihood -------------------------------------------------------------------

@pytest.mark.parametrize("sigma", [0.2, 1.0, 3.0])
def test_marginal_loglik_equals_numerical_integration_of_the_binomial(sigma):
    """sum_m eta S + sum_t w_t term + sum_i log C = sum_i log int prod_m Binom(y_im) N(b) db."""
    t = _table(n_epochs=3)
    d = item_statistics(t, **COLS)
    eta = np.random.default_rng(0).normal(0.3, 0.8, d.shape)
    task = d.term_task
    terms = term_loglik(eta[:, task].T, d.epochs[:, task].T, d.term_total, sigma)
    ours = (d.correct * eta).sum() + (d.term_weight * terms).sum() + d.log_binom.sum()
    p = expit(eta[:, d.item_task][..., None] - GRID)                    # (M, I, grid)
    logf = stats.binom.logpmf(d.per_item[..., None], 3, p).sum(axis=0) + \
        stats.norm.logpdf(GRID, 0, sigma)
    assert ours == pytest.approx(_log_int(logf).sum(), rel=1e-9, abs=1e-4)


def test_quadrature_holds_for_items_with_many_responses():
    eta = np.linspace(-2, 2, 50)[None, :]
    n = np.full((1, 50), 10.0)
    for total in (0.0, 250.0, 500.0):
        tot = np.array([total])
        ref = _log_int(log_integrand(eta, n, tot, 1.0, GRID[None, :]))
        assert term_loglik(eta, n, tot, 1.0)[0] == pytest.approx(ref[0], abs=1e-4)


# --- conditional draws and scopes --------------------------------------------------------------

def test_benchmark_draws_average_to_the_conditional_expectation():
    d = item_statistics(_table(), **COLS)
    eta = np.broadcast_to(np.array([[0.5, -0.2], [1.0, 0.3], [0.0, 0.0]]), (4000, 3, 2)).copy()
    sigma = np.full(4000, 1.2)
    out = conditional_draws(d, eta, sigma, np.random.default_rng(1))
    # exact: each item's posterior of b given its total, on a fine grid
    task = d.item_task
    p = expit(eta[0][:, task][..., None] - GRID)
    logf = stats.binom.logpmf(d.per_item[..., None], 2, p).sum(axis=0) + \
        stats.norm.logpdf(GRID, 0, 1.2)
    post = np.exp(logf - logf.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    expected = (post[None] * p).sum(axis=-1).mean(axis=1)              # (M,)
    mc_se = out["benchmark"].std(axis=0) / np.sqrt(4000)
    assert np.all(np.abs(out["benchmark"].mean(axis=0) - expected) < 4 * mc_se + 1e-4)
    np.testing.assert_allclose(out["item_mean"], (post * GRID).sum(axis=1), atol=2e-3)


@pytest.mark.parametrize("shift", [0.0, 400.0])
def test_posterior_kernels_equal_numpy(shift):
    """The conditional densities' kernel (products of exponentials and of (1 + e)^n, or the
    direct softplus beyond PRODUCT_RANGE: ``shift`` moves eta and b together) equals
    ``_model.log_integrand`` in numpy, with integer and fractional counts; the benchmark sums
    equal numpy's sigmoid sums."""
    from evaluq.item_model._posterior import PRODUCT_RANGE, _benchmark_sums, _log_densities

    gen = np.random.default_rng(8)
    eta = gen.normal(0.0, 2.0, (3, 5, 4)) + shift                   # (draw, term, model)
    n_t = gen.integers(0, 6, (5, 4)).astype(np.float64)
    n_t[1, 2] = 2.5                                                  # fractional: log1p
    n_t[2] = 40.0                                                    # products flushed
    eta[:, 2, 0] = 40.0 + shift                 # (1 + e^40)^40: flushed within the power
    eta[:, 4, 1] = 130.0 + shift                # e^130 > 1e50: its own logarithm
    total = gen.integers(0, 10, 5).astype(np.float64)
    sigma = np.array([0.8, 1.2, 2.0])
    b = gen.normal(0.0, 3.0, (3, 5, 7)) + shift
    assert (np.abs(eta).max() >= PRODUCT_RANGE) == (shift > 0)
    mine = _log_densities(eta, n_t, total, sigma, b)
    for d in range(3):
        ref = log_integrand(eta[d], n_t, total, sigma[d], b[d])
        np.testing.assert_allclose(mine[d], ref, rtol=1e-13, atol=1e-11)
    counts = gen.integers(0, 3, b.shape).astype(np.float64)
    ref = np.einsum("dtg,dtgm->dm", counts, expit(eta[:, :, None, :] - b[..., None]))
    np.testing.assert_allclose(_benchmark_sums(eta, b, counts), ref, rtol=1e-13)


def test_new_items_score_and_icc_against_monte_carlo():
    d = item_statistics(_table(), **COLS)
    eta = np.array([[[0.5, -0.2], [1.0, 0.3], [0.0, 0.0]]])
    sigma = np.array([1.2])
    b = np.random.default_rng(2).normal(0, 1.2, 400_000)
    p = expit(eta[0][..., None] - b)                                     # (M, K, n)
    w = d.n_items / d.n_items.sum()
    mc = p.mean(axis=-1) @ w
    np.testing.assert_allclose(new_items_scores(d, eta, sigma)[0], mc, atol=3e-3)
    var = (p**2).mean(axis=-1) @ w - mc**2
    np.testing.assert_allclose(icc_draws(d, eta, sigma)["icc_epochs"][0],
                               var / (mc * (1 - mc)), atol=5e-3)


# --- a small fit -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        return eq.fit_items(_table(), **COLS, draws=100, tune=100, chains=2, rng=1)


def test_fit_structure(fit):
    post = fit.posterior
    assert fit.form == "marginal"
    assert fit.config["family"] == "binomial"
    assert post["benchmark_score"].dims == ("chain", "draw", "model")
    assert post["eta"].sizes["task"] == 2
    assert fit.idata["item_effects"]["item_effect_mean"].sizes["item"] == 40
    for scope in ("benchmark", "new_items"):
        pw = fit.pairwise_differences(scope, rope=0.01)
        assert pw.attrs["scope"] == scope
        np.testing.assert_allclose((pw.p_below + pw.p_rope + pw.p_above).values, 1.0)
        ranks = fit.rank_probabilities(scope)
        assert ranks.p_best.sum().item() == pytest.approx(1.0)
    vc = fit.variance_components()
    assert {"sigma_item", "sigma_task", "sigma_model_x_task", "icc_epochs", "design_effect",
            "effective_n"} <= set(vc.data_vars)
    assert "run_drift" in vc.attrs
    assert "ItemFit(family='binomial', form='marginal'" in repr(fit)
    assert "note: family='auto' chose 'binomial'" in repr(fit)
    assert "r_hat" in fit.diagnostics().columns


def test_pairwise_equals_the_shared_kernel_on_the_draws(fit):
    draws = fit.scores("new_items")
    ref = eq.pairwise_differences(draws, sample_dims=("chain", "draw"))
    np.testing.assert_allclose(fit.pairwise_differences("new_items")["p_greater"],
                               ref["p_greater"])


def test_compare_frequentist(fit):
    table = fit.compare_frequentist()
    t = _table()
    per_model = t.groupby("model").score.mean().values
    scores = table[table.quantity == "score"]
    np.testing.assert_allclose(scores.frequentist, per_model)
    assert scores.agree.all()


def test_pairwise_differences_name_their_interval_from_the_vocabulary(fit):
    """The fit base labels the credible interval as its ``ci`` variable does (issue 31)."""
    from evaluq._intervals import CI_KINDS

    out = fit.pairwise_differences(rope=0.05)
    assert out.attrs["ci_kind"] == out["ci"].attrs["ci_kind"] == "percentile"
    assert out.attrs["ci_kind"] in CI_KINDS
    total = out["p_below"] + out["p_rope"] + out["p_above"]
    np.testing.assert_allclose(total.values, 1.0)


def test_one_convergence_warning_class_for_every_fit():
    """One filter silences both fits' convergence warnings (issue 31)."""
    from evaluq.errors import ConvergenceWarning
    from evaluq.hierarchical import ConvergenceWarning as HierarchicalConvergence

    assert ItemConvergenceWarning is ConvergenceWarning is HierarchicalConvergence


def test_agree_means_each_point_inside_the_other_interval():
    """Overlapping intervals are not enough: each side's point must lie in the other's
    interval (the one ``agree`` of every fit's comparison table, issue 31)."""
    import pandas as pd

    from evaluq._fits import agree

    table = pd.DataFrame({"frequentist": [0.5, 0.5], "freq_lower": [0.4, 0.4],
                          "freq_upper": [0.6, 0.6], "posterior_mean": [0.55, 0.65],
                          "post_lower": [0.45, 0.55], "post_upper": [0.65, 0.75]})
    assert agree(table).tolist() == [True, False]     # the second: intervals overlap only


def test_save_load_round_trip(fit, tmp_path):
    path = tmp_path / "fit.nc"
    fit.save(path)
    back = eq.load_item_fit(path)
    np.testing.assert_array_equal(back.posterior["benchmark_score"],
                                  fit.posterior["benchmark_score"])
    assert back.config == fit.config
    assert back.data.digest == fit.data.digest
    assert list(tmp_path.iterdir()) == [path]                     # no temporary file left
    with pytest.raises(FileNotFoundError, match="no item-model fit file"):
        eq.load_item_fit(tmp_path / "none.nc")


@pytest.fixture(scope="module")
def fit_no_items():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        return eq.fit_items(_table(), model="model", item=None, score="score", task="task",
                            draws=100, tune=100, chains=2)


def test_fit_without_items(fit_no_items):
    t = _table()
    fit = fit_no_items
    assert fit.form == "no items"
    assert "sigma_item" not in fit.posterior
    np.testing.assert_allclose(fit.scores("benchmark"), fit.scores("new_items"))
    assert fit.scores().mean(("chain", "draw")).values == pytest.approx(
        t.groupby("model").score.mean().values, abs=0.05)


# --- bad input ----------------------------------------------------------------------------------

def test_score_outside_the_family():
    t = _table()
    t.loc[0, "score"] = 0.5
    with pytest.raises(ValueError, match="needs scores 0 or 1 in column 'score'"):
        eq.fit_items(t, **COLS)


def test_bernoulli_with_epochs():
    with pytest.raises(ValueError, match="use family='binomial'"):
        eq.fit_items(_table(), **COLS, family="bernoulli")


def test_item_scored_by_one_model():
    t = _table()
    t = t[~((t["item"] == 0) & (t["model"] != "m0"))]
    with pytest.raises(CubeError, match="carries no pairing information"):
        eq.fit_items(t, **COLS)


def test_nan_scores_and_a_model_with_no_scored_items():
    t = _table()
    t.loc[t["model"] == "m2", "score"] = np.nan
    with pytest.raises(CubeError, match="NaN or infinite"):
        eq.fit_items(t, **COLS)


def test_unequal_epochs_per_item():
    t = _table()
    t = t[~((t["item"] == 3) & (t["epoch"] == 1))]
    with pytest.raises(CubeError, match="unequal epochs per item"):
        eq.fit_items(t, **COLS)


def test_model_absent_from_a_task_is_kept():
    t = _table()
    t = t[~((t["model"] == "m1") & (t["task"] == "t1"))]
    d = item_statistics(t, **COLS)
    assert d.epochs[1, 1] == 0
    assert d.correct[1, 1] == 0
    assert "m1 on t1" in d.notes["skipped_tasks"]


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"family": "ordinalish"}, ValueError, "family"),
    ({"discrimination": "yes"}, TypeError, "`discrimination` must be True or False"),
    ({"discrimination": 1}, TypeError, "`discrimination` must be True or False"),
    ({"grader": "judge"}, CubeError, "column 'judge' \\(given as `grader`\\)"),
    ({"draws": 0}, ValueError, "draws"),
    ({"priors": {"nope": 1.0}}, ValueError, "unknown key 'nope'"),
    ({"priors": {"sigma_item_sigma": -1.0}}, ValueError, "must be finite and > 0"),
])
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        eq.fit_items(_table(), **COLS, **({"draws": 10, "tune": 0} | kwargs))


def test_bad_scope_and_rope(fit):
    with pytest.raises(ValueError, match="scope"):
        fit.scores("population")
    with pytest.raises(ValueError, match="`rope` must be a finite number >= 0"):
        fit.pairwise_differences(rope=-1.0)


# --- recovery (slow) -----------------------------------------------------------------------------

@pytest.mark.slow
def test_recovery_of_known_parameters():
    t = simulate_items(n_models=6, n_items=600, n_epochs=3, n_tasks=3, sigma_item=1.3,
                       rng=11)
    with warnings.catch_warnings():         # alpha's ESS with three tasks is ~250
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(t, **COLS, draws=500, tune=1000, chains=2, rng=2)
    assert fit.diagnostics().attrs["divergences"] <= 10        # <= 1% of the draws (known)
    sigma = fit.posterior["sigma_item"]
    lo, hi = sigma.quantile([0.005, 0.995]).values
    assert lo < 1.3 < hi
    bench = fit.scores("benchmark")
    lo, hi = bench.quantile([0.001, 0.999], ("chain", "draw")).values
    truth = t.attrs["truth"]["benchmark"]
    inside = ((lo <= truth) & (truth <= hi)).mean()
    print(f"item_model recovery: sigma_item={float(sigma.mean()):.3f} (true 1.3) "
          f"benchmark truth inside 99.8% interval: {inside:.2f}")
    assert inside >= 5 / 6


# --- predictive checks ---------------------------------------------------------------------------

def test_predictive_checks_report_each_statistic(fit):
    checks = fit.predictive_checks(n_replicates=50, rng=0)
    assert set(checks.check) == {"prior", "posterior"}
    assert set(checks.statistic) == {"accuracy", "item_spread", "epoch_agreement"}
    acc = checks[(checks.check == "posterior") & (checks.statistic == "accuracy")]
    np.testing.assert_allclose(acc.observed, _table().groupby("model").score.mean().values)
    assert checks.passed.dtype == bool
    # data from the fitted model: the posterior checks pass
    assert checks[checks.check == "posterior"].passed.all()


def test_epoch_agreement_check_flags_run_to_run_drift():
    t = _table(overdispersion=0.6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(t, **COLS, draws=100, tune=100, chains=2, rng=1)
    checks = fit.predictive_checks(n_replicates=50, rng=0)
    row = checks[(checks.check == "posterior") & (checks.statistic == "epoch_agreement")]
    assert not row.passed.item()
    assert row.p_value.item() < 0.025


def test_predictive_checks_bad_arguments(fit):
    with pytest.raises(ValueError, match="n_replicates"):
        fit.predictive_checks(n_replicates=1)


# --- LOO ------------------------------------------------------------------------------------------

def test_compare_fits_prefers_item_effects(fit, fit_no_items):
    table = eq.compare_fits({"items": fit, "no items": fit_no_items})
    assert table.index[0] == "items"
    assert {"elpd", "pareto_k_above_0.7", "form"} <= set(table.columns)
    assert "whole response pattern" in table.attrs["unit"]


def test_pointwise_loglik_without_items_is_the_binomial(fit, fit_no_items):
    from evaluq.item_model._compare import pointwise_loglik

    ll = pointwise_loglik(fit_no_items, fit.data)
    eta = fit_no_items.posterior["eta"].isel(chain=0, draw=0).values      # (M, K)
    d = fit.data
    p = expit(eta[:, d.item_task])
    ref = stats.binom.logpmf(d.per_item, 2, p).sum(axis=0)
    np.testing.assert_allclose(ll[0], ref, rtol=1e-10)


def test_compare_fits_bad_input(fit, fit_no_items):
    with pytest.raises(ValueError, match="at least two named ItemFit"):
        eq.compare_fits({"items": fit})
    with pytest.raises(ValueError, match="at least one fit with items"):
        eq.compare_fits({"a": fit_no_items, "b": fit_no_items})


def test_compiled_models_are_keyed_by_the_module_switches(monkeypatch):
    """A process that changes ``_model.DEV_PRIOR`` (the pooling calibration does) gets a model
    built with the new prior, never the one compiled before: the switches are in every
    compiled model's key (compilation itself is replaced by the built PyMC model here)."""
    from evaluq.item_model import _marginal
    from evaluq.item_model import _model as model_module

    monkeypatch.setattr(_marginal, "_COMPILED", {})
    monkeypatch.setattr(_marginal, "compile_pymc_model", lambda model: (model, None))
    d = item_statistics(_table(n_models=3, n_items=20), **COLS)
    first, _ = _marginal.compiled_nutpie(d)
    assert type(first["tau_dev"].owner.op).__name__ == "HalfNormalRV"
    assert _marginal.compiled_nutpie(d)[0] is first                      # cached
    monkeypatch.setattr(model_module, "DEV_PRIOR", "gamma")
    second, _ = _marginal.compiled_nutpie(d)
    assert second is not first
    assert type(second["tau_dev"].owner.op).__name__ == "GammaRV"
    assert len(_marginal._COMPILED) == 2

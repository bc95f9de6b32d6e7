"""The marginal 2PL's fused kernel (``item_model/_twopl_grid.py``, issue 34): its value
against 2-D numerical integration over (log a, b) and against the former adaptive rule, its
gradient against finite differences and PyTensor's graph, its node counts bounded, bad
parameters giving NaN, and a small fit through ``fit_items``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from tests.test_item_model_twopl import (
    COLS,
    _numerical_item_loglik,
    _pattern_loglik,
    _table,
)

import evaluq as eq
from evaluq._convergence import convergence_arrays
from evaluq.item_model import ItemConvergenceWarning, item_statistics
from evaluq.item_model import _twopl as twopl
from evaluq.item_model._twopl import (
    build_marginal_twopl_model,
    marginal_twopl_inputs,
    resolve_priors_2pl,
    u_step,
)
from evaluq.item_model._twopl_grid import MAX_NODES, _grids, numpy_loglik_and_grad, u_rule


def _args(d, eta, s_b, s_a):
    x = marginal_twopl_inputs(d, resolve_priors_2pl(d, None))
    return (eta, s_b, s_a, x["epochs"], x["term_task"], x["term_total"], x["pattern_counts"],
            x["pattern_task"], x["pattern_term"], x["pattern_weight"], u_step(x["epochs"]))


@pytest.fixture(scope="module")
def small():
    d = item_statistics(_table(n_items=16, n_epochs=3), **COLS)
    return d, np.random.default_rng(1).normal(0.3, 1.0, d.shape)


@pytest.mark.parametrize(("s_b", "s_a", "tol"), [(1.0, 0.3, 1e-6), (2.0, 0.5, 1e-4),
                                                 (1.5, 0.8, 1e-4), (0.8, 1.2, 1e-3)])
def test_kernel_equals_2d_numerical_integration(small, s_b, s_a, tol):
    d, eta = small
    ours = numpy_loglik_and_grad(*_args(d, eta, s_b, s_a))[0]
    ref = (_numerical_item_loglik(d, eta, s_b, s_a) - d.log_binom).sum()
    former = (_pattern_loglik(d, eta, s_b, s_a) - d.log_binom).sum()
    print(f"\nfused 2PL kernel vs 2-D integration over 16 items (sigma_item {s_b}, "
          f"sigma_logdisc {s_a}): error {ours - ref:.1e} (former adaptive rule "
          f"{former - ref:.1e})")
    assert abs(ours - ref) < tol


@pytest.mark.parametrize("s_a", [1.0, 1.5, 2.0])
def test_u_rule_resolves_items_with_many_responses(s_a):
    """20 models x 5 epochs (100 responses per item) at large sigma_logdisc: an item's
    u-integrand is far narrower than its prior, and the rule's step on the u scale follows
    it. The value and its derivatives equal those of a rule 4x finer to a small fraction of
    the curvature (the former 10-node Gauss-Hermite rule in z was 450 off the value and 930
    off d/d sigma_logdisc at 1.5 over 2,000 such items, with the curvature ~1,100)."""
    t = _table(n_models=20, n_items=240, n_epochs=5, n_tasks=2, discrimination_sd=s_a,
               model_sd=1.2, rng=11)
    d = item_statistics(t, **COLS)
    eta = np.random.default_rng(2).normal(0.5, 1.2, d.shape)
    args = _args(d, eta, 1.5, s_a)
    fine = (*args[:10], args[10] / 4)
    v, d_eta, d_s, d_su = numpy_loglik_and_grad(*args)
    v4, d_eta4, d_s4, d_su4 = numpy_loglik_and_grad(*fine)
    n_nodes = len(u_rule(s_a, args[10])[0])
    print(f"\nsigma_logdisc {s_a}: {n_nodes} u-nodes (step {args[10]:.3f}); vs 4x finer: "
          f"value {v - v4:.1e}, d/d sigma_logdisc {d_su - d_su4:.1e} (of {d_su4:.1f}), "
          f"d/d sigma_item {d_s - d_s4:.1e}, d/d eta {np.abs(d_eta - d_eta4).max():.1e}")
    assert abs(v - v4) < 1e-3 * d.per_item.shape[1]
    assert abs(d_su - d_su4) < 2e-3 * d.per_item.shape[1]
    assert abs(d_s - d_s4) < 2e-3 * d.per_item.shape[1]
    np.testing.assert_allclose(d_eta, d_eta4, atol=1e-3 * np.abs(d_eta4).max())


def test_kernel_gradient_equals_finite_differences(small):
    d, eta = small
    args = _args(d, eta, 1.3, 0.6)
    _, d_eta, d_s, d_su = numpy_loglik_and_grad(*args)
    h = 1e-6

    def f(i, value):
        return numpy_loglik_and_grad(*args[:i], value, *args[i + 1:])[0]

    # the b-grids move with s and a = exp(s_u z) (their nodes carry no gradient, the rule's
    # value does not depend on them up to its error): 1.5e-6 to 5.2e-6 apart here
    assert d_s == pytest.approx((f(1, 1.3 + h) - f(1, 1.3 - h)) / (2 * h), rel=1e-5)
    assert d_su == pytest.approx((f(2, 0.6 + h) - f(2, 0.6 - h)) / (2 * h), rel=1e-5)
    fd = np.zeros_like(eta)
    for idx in np.ndindex(eta.shape):
        step = np.zeros_like(eta)
        step[idx] = h
        fd[idx] = (f(0, eta + step) - f(0, eta - step)) / (2 * h)
    np.testing.assert_allclose(d_eta, fd, atol=1e-6 * np.abs(fd).max())


def test_pymc_model_value_and_gradient_equal_the_kernel():
    """The PyMC model's log-density (its Potential plus the priors) and its gradient through
    PyTensor's graph (eta, the scales and their transforms) against the kernel."""
    d = item_statistics(_table(n_items=40), **COLS)
    model = build_marginal_twopl_model(d)
    assert "difficulty_z" not in model.named_vars          # no item parameter is sampled
    gen = np.random.default_rng(4)
    point = {k: v + gen.normal(0, 0.3, np.shape(v)) for k, v in model.initial_point().items()}
    names = ("alpha", "dev", "task_effect", "model_x_task", "sigma_item", "sigma_logdisc")
    outs = model.replace_rvs_by_values([model.potentials[0]] + [model[n] for n in names])
    pot, alpha, dev, t, g, s_b, s_a = model.compile_fn(outs, inputs=model.value_vars)(point)
    eta = alpha + dev[:, None] + t[None, :] + g
    np.testing.assert_allclose(pot, numpy_loglik_and_grad(*_args(d, eta, s_b, s_a))[0],
                               rtol=1e-12)
    num = (_numerical_item_loglik(d, eta, float(s_b), float(s_a)) - d.log_binom).sum()
    np.testing.assert_allclose(pot, num, atol=1e-2)
    # the gradient of the whole log-density against finite differences, in numba mode
    logp = model.compile_logp(mode="NUMBA")
    dlogp = model.compile_dlogp(mode="NUMBA")
    grad = dlogp(point)
    flat = np.concatenate([np.ravel(v) for v in point.values()])
    sizes = [np.size(v) for v in point.values()]

    def unflat(x):
        parts = np.split(x, np.cumsum(sizes)[:-1])
        return {k: p.reshape(np.shape(v)) for (k, v), p in zip(point.items(), parts,
                                                                 strict=True)}

    fd = np.array([(logp(unflat(flat + h)) - logp(unflat(flat - h))) / 2e-6
                   for h in np.eye(len(flat)) * 1e-6])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5)


def test_grid_is_bounded_and_bad_parameters_give_nan(small):
    d, eta = small
    args = _args(d, eta, 1.0, 0.5)
    _, _, count, _ = _grids(eta, 1e-3, np.exp(8.0 * u_rule(1.0, args[10])[0]), args[3])
    assert count.max() <= MAX_NODES
    for bad in ((np.nan, 0.5), (1.0, np.inf), (-1.0, 0.5)):
        assert np.isnan(numpy_loglik_and_grad(*_args(d, eta, *bad))[0])
    eta_bad = eta.copy()
    eta_bad[0, 0] = np.nan
    assert np.isnan(numpy_loglik_and_grad(*_args(d, eta_bad, 1.0, 0.5))[0])


@pytest.mark.slow
def test_marginal_form_equals_the_explicit_form_within_mcse(monkeypatch):
    """The same small 2PL table fitted with (a_i, b_i) integrated out and with explicit item
    parameters (the reference): posterior means of the scales, eta and the benchmark scores
    within 4 combined MCSEs; at most 2 divergences of 2,000 draws in the marginal form (the
    scales of 2 tasks x 60 items are weakly identified: their effects are non-centred)."""

    t = _table(n_models=6, n_items=120, n_epochs=2, n_tasks=2, discrimination_sd=0.5, rng=8)
    fits = {}
    for form in ("marginal", "explicit"):
        monkeypatch.setattr(twopl, "FORM", form)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemConvergenceWarning)
            fits[form] = eq.fit_items(t, **COLS, discrimination=True, draws=1000, tune=1000,
                                      chains=2, rng=3)
    div = {k: int(f.idata["sample_stats"]["diverging"].sum()) for k, f in fits.items()}
    worst = 0.0
    for name in ("sigma_item", "sigma_logdisc", "eta", "benchmark_score", "alpha"):
        stats_ = []
        for fit in fits.values():
            x = np.asarray(fit.posterior[name])
            x = x.reshape(*x.shape[:2], -1)
            c = convergence_arrays(x)
            stats_.append((x.mean(axis=(0, 1)), c["mcse_mean"]))
        (m1, e1), (m2, e2) = stats_
        z = np.abs(m1 - m2) / np.sqrt(e1**2 + e2**2)
        worst = max(worst, float(z.max()))
        print(f"\n{name}: marginal - explicit {np.abs(m1 - m2).max():.4f}, largest |z| "
              f"{z.max():.2f}")
        assert np.all(z < 4.0), name
    print(f"marginal 2PL vs explicit: largest |mean gap| / MCSE {worst:.2f}, "
          f"divergences {div}")
    assert div["marginal"] <= 2                            # of 2,000 draws


@pytest.mark.parametrize("a", [0.3, 4.0, 60.0])
def test_b_table_outside_the_middle_equals_the_direct_sum(a):
    """``_task_table`` skips the loop over the models where every |a (eta_m - b)| > LINEAR
    (R linear in b below the models, 0 above): its table equals the direct sum over the
    models at every node, and its probabilities on the middle."""
    from scipy.special import expit

    from evaluq.item_model._twopl_grid import _middle, _task_table

    eta = np.array([-0.8, 0.1, 0.4, 1.3])
    n = np.array([3.0, 3.0, 0.0, 2.5])              # a model without responses, a fraction
    s, lo, hk = 1.4, -15.0, 0.01 / a + 0.002
    nk = int(30.0 / hk)
    fixed, d_r, prob = np.empty(nk), np.empty(nk), np.full((4, nk), np.nan)
    _task_table(eta, n, s, a, lo, hk, fixed, d_r, prob)
    b = lo + hk * np.arange(nk)
    x = a * (eta[:, None] - b[None, :])
    direct = (-0.5 * (b / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi) + np.log(hk)
              - (n[:, None] * np.logaddexp(0.0, x)).sum(axis=0))
    np.testing.assert_allclose(fixed, direct, rtol=1e-13, atol=1e-11)
    np.testing.assert_allclose(d_r, -(n[:, None] * (eta[:, None] - b) * expit(x)).sum(0),
                               rtol=1e-12, atol=1e-12)
    j_lo, j_hi = _middle(eta, n, a, lo, hk, nk)
    if a > 1:
        assert 0 < j_lo < j_hi < nk                 # both tails skipped
    np.testing.assert_allclose(prob[[0, 1, 3], j_lo:j_hi], expit(x[[0, 1, 3], j_lo:j_hi]),
                               rtol=1e-11, atol=1e-300)

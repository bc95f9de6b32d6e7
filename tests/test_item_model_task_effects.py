"""The item model's task effects sampled summing to zero (issue 34): the same prior and
posterior as the iid form, and the explicit-item reference agrees."""

from __future__ import annotations

import numpy as np
import pytest

from evaluq.item_model import item_statistics, simulate_items
from evaluq.item_model._model import (
    CENTRED_MIN_ITEMS,
    build_explicit_model,
    build_model,
    centred_effects,
)
from evaluq.item_model._posterior import linear_predictor

COLS = {"model": "model", "item": "item", "score": "score", "task": "task", "epoch": "epoch"}


def _data(n_items: int = 60, rng: int = 5):
    t = simulate_items(n_models=3, n_items=n_items, n_epochs=2, n_tasks=3, sigma_task=0.6,
                       sigma_model_x_task=0.4, rng=rng)
    return item_statistics(t, **COLS)


def _prior_eta(model, n: int, seed: int) -> np.ndarray:
    """n prior draws of eta (draw, model x task), summed from the model's own effects."""
    import pymc as pm

    names = [v for v in ("alpha", "dev", "task_effect", "model_x_task")
             if v in model.named_vars]
    draws = pm.draw([model[v] for v in names], draws=n, random_seed=seed)
    post = {name: np.asarray(d) for name, d in zip(names, draws, strict=True)}
    return linear_predictor(_DATA, post).reshape(n, -1)


_DATA = _data()


@pytest.mark.parametrize("centred", [False, True])
def test_zero_sum_prior_of_eta_is_the_iid_prior(centred, monkeypatch):
    """Every mean, variance and covariance of eta (9 cells) under the zero-sum form equals
    the iid form's, within Monte Carlo error (the decomposition is exact)."""
    from evaluq.item_model import _model

    monkeypatch.setattr(_model, "centred_effects", lambda data: centred)
    n = 40_000
    small = {"alpha_sigma": 0.1, "dev_sigma": 0.1}   # the task and model x task parts show
    new = _prior_eta(build_model(_DATA, small), n, 1)
    old = _prior_eta(build_model(_DATA, small, effects="iid"), n, 2)
    se = np.sqrt((new.var(0) + old.var(0)) / n)
    assert np.all(np.abs(new.mean(0) - old.mean(0)) < 5 * se)
    # every covariance: the SE of each estimate from the SD of its products (heavy tails:
    # the scales are random)
    cov, cov_se = [], []
    for a in (new, old):
        c = a - a.mean(0)
        prod = c[:, :, None] * c[:, None, :]
        cov.append(prod.mean(0))
        cov_se.append(prod.std(0) / np.sqrt(n))
    z = (cov[0] - cov[1]) / np.hypot(*cov_se)
    assert np.all(np.abs(z) < 5), z.round(1)
    # the zero-sum effects do sum to zero in every draw
    import pymc as pm

    model = build_model(_DATA)
    t, g = pm.draw([model["task_effect"], model["model_x_task"]], draws=50, random_seed=3)
    np.testing.assert_allclose(t.sum(-1), 0, atol=1e-9)
    np.testing.assert_allclose(g.sum(-1), 0, atol=1e-9)
    np.testing.assert_allclose(g.sum(-2), 0, atol=1e-9)


def test_centred_when_every_task_has_many_items():
    assert not centred_effects(_DATA)
    big = _data(n_items=3 * CENTRED_MIN_ITEMS)
    assert centred_effects(big)
    one = item_statistics(simulate_items(n_models=3, n_items=400, n_epochs=2, rng=0),
                          **{k: v for k, v in COLS.items() if k != "task"})
    assert not centred_effects(one)                 # one task: nothing to centre


@pytest.mark.parametrize(("sigma_task", "sigma_mxt", "centred"),
                         [(0.5, 0.2, True), (0.5, 0.0, False), (0.0, 0.2, False)])
def test_centred_only_when_the_data_pin_both_effects_down(sigma_task, sigma_mxt, centred):
    """Many items per task, but an effect with no spread (tasks that are arbitrary splits,
    or models that rank the same in every task): non-centred, whose sampler mixes where the
    centred funnel did not (R-hat 1.08, ESS 49 of 2,000 draws, measured)."""
    from evaluq.item_model._model import CENTRED_RATIO, effects_identified

    t = simulate_items(n_models=10, n_items=1000, n_epochs=3, n_tasks=4, sigma_task=sigma_task,
                       sigma_model_x_task=sigma_mxt, rng=1)
    data = item_statistics(t, **COLS, family="binomial")
    assert data.n_items.min() >= CENTRED_MIN_ITEMS
    assert CENTRED_RATIO > 1
    assert effects_identified(data) is centred
    assert centred_effects(data) is centred


def test_unknown_effects_raise():
    with pytest.raises(ValueError, match="effects"):
        build_model(_DATA, effects="centred")


def _posterior(model, data, seed: int) -> dict[str, np.ndarray]:
    import nutpie

    compiled = nutpie.compile_pymc_model(model, backend="numba")
    raw = nutpie.sample(compiled, draws=1500, tune=1000, chains=2, cores=2, seed=seed,
                        progress_bar=False, target_accept=0.9)
    post = raw["posterior"]
    flat = {v: post[v].values.reshape(-1, *post[v].shape[2:]) for v in
            ("alpha", "dev", "task_effect", "model_x_task") if v in post}
    eta = linear_predictor(data, flat)                           # (draw, M, K)
    out = {f"eta{m}{k}": eta[:, m, k] for m in range(eta.shape[1]) for k in range(eta.shape[2])}
    for v in ("sigma_item", "sigma_task", "sigma_model_x_task"):
        out[v] = post[v].values.reshape(-1)
    return {k: v.reshape(2, -1) for k, v in out.items()}


@pytest.mark.slow   # three nutpie compiles (~30 s each on a loaded machine) and samples
def test_posterior_means_agree_across_forms_and_the_explicit_reference():
    """Posterior means of eta (every model x task cell) and of the three scales agree within
    MCSE: the zero-sum marginal model, the former iid marginal model and the explicit-item
    model (zero-sum effects, one sampled difficulty per item)."""
    from evaluq._convergence import convergence_arrays

    data = _DATA
    forms = {"zero-sum": _posterior(build_model(data), data, 1),
             "iid": _posterior(build_model(data, effects="iid"), data, 2),
             "explicit": _posterior(build_explicit_model(data, data.per_item), data, 3)}
    summary = {}
    for name, post in forms.items():
        stacked = np.stack(list(post.values()), axis=-1)                   # (chain, draw, q)
        conv = convergence_arrays(stacked)
        assert np.nanmax(conv["r_hat"]) < 1.02, name
        summary[name] = (stacked.mean(axis=(0, 1)), conv["mcse_mean"])
    mean0, se0 = summary["zero-sum"]
    for other in ("iid", "explicit"):
        mean1, se1 = summary[other]
        z = (mean0 - mean1) / np.sqrt(se0**2 + se1**2)
        assert np.all(np.abs(z) < 4), (other, dict(zip(forms["iid"], z.round(2),
                                                       strict=True)))


def _reference_loglik(data, eta: np.ndarray, sigma: float) -> float:
    """sum_mk S_mk eta_mk + sum_t w_t log int N(b; 0, s^2) exp(-b Y_t - sum_m n softplus)
    db by a 40,001-point trapezoid rule over +-12 s (numpy, no shared code)."""
    from scipy.special import logsumexp

    b = np.linspace(-12 * sigma, 12 * sigma, 40_001)
    h = b[1] - b[0]
    eta_t = eta[:, data.term_task].T                                     # (T, M)
    n_t = data.epochs[:, data.term_task].T
    soft = np.logaddexp(0.0, eta_t[:, :, None] - b[None, None, :])      # (T, M, G)
    logd = (-b * data.term_total[:, None] - np.einsum("tm,tmg->tg", n_t, soft)
            - 0.5 * (b / sigma) ** 2 - np.log(sigma * np.sqrt(2 * np.pi)))
    return float((data.correct * eta).sum()
                 + data.term_weight @ (logsumexp(logd, axis=1) + np.log(h)))


@pytest.mark.parametrize(("quadrature", "shape"), [
    ("grid", (10, 1000, 3, 4)), ("grid", (3, 60, 2, 3)), ("grid", (4, 300, 40, 1)),
    ("gauss-hermite", (10, 1000, 3, 4)), ("gauss-hermite", (4, 300, 40, 1))])
def test_item_loglik_equals_a_fine_trapezoid_reference(quadrature, shape):
    """The sampler's item log-likelihood at 12 points (SD-1 jitters of the initial point:
    sigma_item from 0.7 to 11) equals a 40,001-point trapezoid integral of each term: the
    shared grid to 1e-6 nats in all (it reaches beyond the extreme terms' modes: an item
    nobody answers in 160 responses sits 6 prior SDs out), the adaptive rule to
    5e-5 of the total (1.0 nats of 24,370 at one point of 10 x 1,000 x 3 since the pooled
    model deviations (tau_dev, dev_z) moved the random points; 0.23 nats before: the
    shared grid is the more accurate rule)."""
    n_m, n_i, n_e, n_k = shape
    t = simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, n_tasks=n_k, rng=1)
    data = item_statistics(t, **COLS)
    model = build_model(data, quadrature=quadrature)
    names = [v for v in ("alpha", "dev", "task_effect", "model_x_task") if v in model]
    outs = model.replace_rvs_by_values([model["item_loglik"], model["sigma_item"]]
                                       + [model[v] for v in names])
    fn = model.compile_fn(outs, inputs=model.value_vars, point_fn=True,
                          on_unused_input="ignore")
    rng = np.random.default_rng(0)
    start = model.initial_point()
    for _ in range(12):
        point = {k: v + rng.normal(0, 1.0, np.shape(v)) for k, v in start.items()}
        loglik, sigma, *effects = fn(point)
        eta = linear_predictor(data, {k: np.asarray(e)[None] for k, e in
                                      zip(names, effects, strict=True)})[0]
        ref = _reference_loglik(data, eta, float(sigma))
        if quadrature == "grid":
            assert loglik == pytest.approx(ref, rel=0, abs=1e-6)
        else:
            assert loglik == pytest.approx(ref, rel=5e-5)


def test_unknown_quadrature_raises():
    with pytest.raises(ValueError, match="quadrature"):
        build_model(_DATA, quadrature="laplace")


@pytest.mark.parametrize(("with_tasks", "learned", "named"),
                         [(True, False, "sigma_task_sigma"), (False, False, "sigma_item_sigma"),
                          (True, True, "item distribution's shape"),
                          (False, True, "item distribution's shape")])
def test_divergence_advice_names_only_priors_the_fit_has(with_tasks, learned, named):
    """A fit with one task has no task scales: its divergence advice names the item and
    model-deviation scales instead; a learned item distribution's names its shape."""
    import xarray as xr

    from evaluq.item_model._diagnostics import diagnostics

    gen = np.random.default_rng(0)
    draws = {"sigma_item": (("chain", "draw"), np.abs(gen.normal(1, 0.1, (2, 200))))}
    if with_tasks:
        draws["sigma_task"] = (("chain", "draw"), np.abs(gen.normal(1, 0.1, (2, 200))))
    if learned:
        draws["item_shape"] = (("chain", "draw", "knot"), gen.normal(0, 1, (2, 200, 17)))
    diverging = np.zeros((2, 200), dtype=bool)
    diverging[0, 3] = True
    table = diagnostics(xr.Dataset(draws),
                        xr.Dataset({"diverging": (("chain", "draw"), diverging)}))
    advice = [p for p in table.attrs["problems"] if "divergent" in p]
    assert len(advice) == 1
    assert named in advice[0]
    assert ("sigma_task_sigma" in advice[0]) is (with_tasks and not learned)

"""The item model's model deviations pool (issue 36 item 3): dev ~ ZeroSumNormal(tau_dev),
tau_dev ~ HalfNormal(``dev_sigma``), in both parametrisations of the effects."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaluq.item_model import item_statistics
from evaluq.item_model._model import (
    DEV_SIGMA,
    PRIOR_TEXT,
    build_model,
    default_priors,
)
from evaluq.item_model._simulate import simulate_items

pytest.importorskip("pymc")
pt = pytest.importorskip("pytensor.tensor")
graph_replace = pytest.importorskip("pytensor.graph.replace").graph_replace


def _data(n_models: int, n_tasks: int = 1):
    t = simulate_items(n_models=n_models, n_items=12 * n_tasks, n_epochs=2, n_tasks=n_tasks,
                       rng=3)
    return item_statistics(t, model="model", item="item", score="score", epoch="epoch",
                           task="task" if n_tasks > 1 else None, family="binomial")


def _zsn_logp(z: np.ndarray, sigma: float) -> float:
    """ZeroSumNormal(sigma) log-density of a zero-sum vector: n - 1 degrees of freedom."""
    n = len(z)
    return float(-0.5 * np.sum((z / sigma) ** 2)
                 - (n - 1) * (np.log(np.sqrt(2 * np.pi)) + np.log(sigma)))


def test_default_and_text():
    data = _data(3)
    assert default_priors(data)["dev_sigma"] == DEV_SIGMA == 1.0
    assert "tau_dev" in PRIOR_TEXT["dev_sigma"]
    assert "HalfNormal" in PRIOR_TEXT["dev_sigma"]


@pytest.mark.parametrize("effects", ["zero-sum", "iid"])
def test_pooled_prior_is_the_model_built(effects, monkeypatch):
    """tau_dev is a free variable, dev = tau_dev * dev_z (non-centred), and the prior's
    log-density at a point equals HalfNormal(tau; s) + ZSN(dev_z; 1), computed by hand."""
    import pymc as pm

    from evaluq.item_model import _model

    monkeypatch.setattr(_model, "DEV_CENTRED", False)

    data = _data(4)
    scale = 0.7
    model = build_model(data, priors={"dev_sigma": scale}, effects=effects)
    names = {rv.name for rv in model.free_RVs}
    assert {"tau_dev", "dev_z"} <= names
    assert "dev" not in names
    z = np.array([0.4, -1.1, 0.2, 0.5])
    tau = 0.37
    logp = (pm.logp(model["tau_dev"], tau) + pm.logp(model["dev_z"], z)).eval()
    hand = np.log(2) + stats.norm.logpdf(tau, 0, scale) + _zsn_logp(z, 1.0)
    assert float(logp) == pytest.approx(hand, rel=1e-10)
    dev = graph_replace(model["dev"], {model["tau_dev"]: pt.constant(np.float64(tau)),
                                       model["dev_z"]: pt.constant(z)}).eval()
    np.testing.assert_allclose(dev, tau * z, rtol=1e-12)


def test_zero_sum_folds_the_interaction_into_the_scale(monkeypatch):
    """With tasks, the zero-sum dev has scale sqrt(tau_dev^2 + sigma_mxt^2 / K) (the ANOVA
    split of g_mk's row means), the iid form tau_dev (non-centred here; centred:
    ``test_centred_dev_is_the_same_prior``)."""
    from evaluq.item_model import _model

    monkeypatch.setattr(_model, "DEV_CENTRED", False)
    data = _data(3, n_tasks=4)
    model = build_model(data, effects="zero-sum", quadrature="gauss-hermite")
    z = np.array([1.0, -0.3, -0.7])
    tau, s_g = 0.5, 0.8
    swap = {model["tau_dev"]: pt.constant(np.float64(tau)), model["dev_z"]: pt.constant(z),
            model["sigma_model_x_task"]: pt.constant(np.float64(s_g))}
    out = graph_replace(model["dev"], swap).eval()
    np.testing.assert_allclose(out, np.sqrt(tau**2 + s_g**2 / 4) * z, rtol=1e-12)


def test_prior_predictive_variance_of_dev():
    """Var(dev_m) = E[tau^2] (n - 1) / n = dev_sigma^2 (n - 1) / n under the pooled prior
    (a ZSN(tau) vector's marginal variance), a check of the prior's scale by simulation."""
    import pymc as pm

    data = _data(5)
    model = build_model(data, priors={"dev_sigma": 0.6}, effects="iid")
    draws = pm.draw(model["dev"], draws=20_000, random_seed=1)
    var = draws.var(axis=0).mean()
    expected = 0.6**2 * 4 / 5
    # SD of the estimate: tau^2 z^2 has a heavy tail; 20,000 draws x 5 (correlated) models
    assert var == pytest.approx(expected, rel=0.05)


def test_one_model_has_no_dev():
    data = _data(1)
    names = {rv.name for rv in build_model(data).free_RVs}
    assert not names & {"tau_dev", "dev_z", "dev"}


def _spread_data(n_models: int, n_items: int, model_sd: float, n_tasks: int = 1):
    t = simulate_items(n_models=n_models, n_items=n_items * n_tasks, n_epochs=3,
                       n_tasks=n_tasks, model_sd=model_sd,
                       sigma_model_x_task=0.2 if model_sd else 0.0, rng=4)
    return item_statistics(t, model="model", item="item", score="score", epoch="epoch",
                           task="task" if n_tasks > 1 else None, family="binomial")


@pytest.mark.parametrize(("n_models", "n_items", "model_sd", "n_tasks", "centred"), [
    (10, 2000, 0.5, 1, True),     # each deviation pinned to ~0.03, spread 0.5
    (10, 500, 0.5, 4, True),      # the same across 4 tasks
    (5, 20, 0.1, 1, False),       # noise ~0.3 against a spread of 0.1: the funnel side
    (10, 2000, 0.0, 1, False),    # models alike: tau_dev near 0, non-centred
    (1, 2000, 0.5, 1, False),     # one model: no deviations
])
def test_deviations_centred_when_the_data_pin_them_down(n_models, n_items, model_sd,
                                                        n_tasks, centred):
    """``centred_deviations``: centred when the models' plug-in means spread at least
    ``DEV_CENTRED_RATIO`` times their noise (measured at 20 x 10^4 x 5: 24.8 leapfrog steps per
    draw non-centred, 13.7 centred), non-centred otherwise; deterministic."""
    from evaluq.item_model._model import DEV_CENTRED_RATIO, centred_deviations, centring

    data = _spread_data(n_models, n_items, model_sd, n_tasks)
    assert DEV_CENTRED_RATIO > 1
    assert centred_deviations(data) is centred
    assert centring(data)[1] is centred
    assert centred_deviations(data) is centred                # the same decision again


def test_dev_centred_switch_overrides_the_data(monkeypatch):
    from evaluq.item_model import _model

    data = _spread_data(10, 2000, 0.5)
    assert _model.centred_deviations(data)
    monkeypatch.setattr(_model, "DEV_CENTRED", False)
    assert not _model.centred_deviations(data)
    assert "dev_z" in {rv.name for rv in build_model(data).free_RVs}
    monkeypatch.setattr(_model, "DEV_CENTRED", True)
    assert _model.centred_deviations(_data(4))
    assert _model.structure_flags()[1] is True


@pytest.mark.parametrize("n_tasks", [1, 4])
def test_centred_dev_is_the_same_prior(n_tasks, monkeypatch):
    """Centred, dev is the free variable: its prior log-density at a point equals
    HalfNormal(tau; s) + ZSN(dev; sqrt(tau^2 + sigma_mxt^2 / K)) by hand, the density of
    tau * dev_z's non-centred form transformed (the same model, sampled otherwise)."""
    import pymc as pm

    from evaluq.item_model import _model

    monkeypatch.setattr(_model, "DEV_CENTRED", True)

    data = _spread_data(10, 500, 0.5, n_tasks)
    model = build_model(data, priors={"dev_sigma": 0.7})
    names = {rv.name for rv in model.free_RVs}
    assert "dev" in names
    assert "dev_z" not in names
    dev = np.linspace(-1.0, 1.0, 10)
    tau, s_g = 0.37, 0.3
    scale = np.sqrt(tau**2 + (s_g**2 / n_tasks if n_tasks > 1 else 0.0))
    logp = pm.logp(model["dev"], dev)
    if n_tasks > 1:
        logp = graph_replace(logp, {model["sigma_model_x_task"]: pt.constant(s_g)})
    logp = graph_replace(logp, {model["tau_dev"]: pt.constant(tau)})
    assert float(logp.eval()) == pytest.approx(_zsn_logp(dev, scale), rel=1e-10)
    hand = np.log(2) + stats.norm.logpdf(tau, 0, 0.7)
    assert float(pm.logp(model["tau_dev"], tau).eval()) == pytest.approx(hand, rel=1e-10)


def test_deviations_centred_when_a_model_skips_a_task():
    """A model not scored on one task (allowed: its model x task cell comes from the prior)
    does not hide the others' spread: the decision averages each model's scored cells."""
    from evaluq.item_model._model import centred_deviations

    t = simulate_items(n_models=10, n_items=2000, n_epochs=3, n_tasks=4, model_sd=0.5, rng=4)
    t = t[~((t["model"] == t["model"].iloc[0]) & (t["task"] == t["task"].iloc[0]))]
    data = item_statistics(t, model="model", item="item", score="score", epoch="epoch",
                           task="task", family="binomial")
    assert (data.epochs == 0).sum() == 1
    assert centred_deviations(data)

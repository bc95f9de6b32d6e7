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
def test_pooled_prior_is_the_model_built(effects):
    """tau_dev is a free variable, dev = tau_dev * dev_z, and the prior's log-density at a
    point equals HalfNormal(tau; s) + ZSN(dev_z; 1), computed by hand."""
    import pymc as pm

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


def test_zero_sum_folds_the_interaction_into_the_scale():
    """With tasks, the zero-sum dev has scale sqrt(tau_dev^2 + sigma_mxt^2 / K) (the ANOVA
    split of g_mk's row means), the iid form tau_dev."""
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

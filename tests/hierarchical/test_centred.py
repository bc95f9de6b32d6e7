"""Slow: the marginal model's posterior equals that of the model with its effects sampled.

The reference samples a[l] and g[m,l] explicitly (non-centred), with the same priors and the
same sufficient-statistic likelihood, on a 6 x 61 x 10 cube (B = 1000). Posterior means of
the hyperparameters and of the benchmark means must agree within Monte Carlo error: at least
80% within 2 combined MCSE (95% expected) and all within 4.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning, HierarchicalData, cube_statistics

pytestmark = pytest.mark.slow
DIMS = ("chain", "draw")
QUANTITIES = ("mu", "tau_m", "tau_m_scale", "tau_lang", "sigma_seed", "benchmark_mean")


def _latent_model(data: HierarchicalData, priors: dict[str, float]) -> Any:
    import pymc as pm
    import pytensor.tensor as pt

    arr = data.arrays()
    with pm.Model(coords={"model": data.models, "language": data.languages}) as model:
        alpha = pm.Normal("alpha", priors["alpha_mu"], priors["alpha_sigma"])
        dev = pm.ZeroSumNormal("dev", sigma=priors["dev_sigma"], dims="model")
        mu = pm.Deterministic("mu", alpha + dev, dims="model")
        tau_m_scale = pm.HalfNormal("tau_m_scale", priors["tau_m_sigma"])
        tau_m = pm.HalfNormal("tau_m", tau_m_scale, dims="model")
        tau_lang = pm.HalfNormal("tau_lang", priors["tau_lang_sigma"])
        sigma_seed = pm.HalfNormal("sigma_seed", priors["sigma_seed_sigma"], dims="model")
        z_a = pm.Normal("z_a", 0.0, 1.0, dims="language")
        z_g = pm.Normal("z_g", 0.0, 1.0, dims=("model", "language"))
        theta = mu[:, None] + tau_lang * z_a[None, :] + tau_m[:, None] * z_g
        pm.Deterministic("benchmark_mean", theta.mean(axis=1), dims="model")
        sd = pt.sqrt(arr["v_fixed"] + (sigma_seed**2)[:, None] * arr["inv_s"])
        pm.Normal("ybar", theta, sd, observed=arr["ybar"])
        pm.Potential("seed_ss", pt.sum(-arr["seed_dof"] * pt.log(sigma_seed)
                                       - arr["seed_ss"] / (2 * sigma_seed**2)))
    return model


def test_marginal_posterior_matches_the_latent_effects_model() -> None:
    import arviz_stats as azs
    import nutpie

    cube = eq.simulate_cube(n_models=6, n_languages=61, n_seeds=10, n_boot=1000,
                            model_means=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0], sigma_language=1.0,
                            sigma_between=0.8, sigma_seed=0.5, sigma_boot=0.4, rng=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = eq.fit_hierarchical(cube, rng=0, draws=4000)
    data = cube_statistics(cube)
    compiled = nutpie.compile_pymc_model(_latent_model(data, fit.config["priors"]),
                                         backend="numba")
    ref = nutpie.sample(compiled, draws=4000, tune=1000, chains=2, seed=1, progress_bar=False)
    ref_post = ref["posterior"].to_dataset()
    assert int(ref["sample_stats"]["diverging"].sum()) == 0
    post = fit.posterior
    z_all = []
    for name in QUANTITIES:
        a, b = post[name], ref_post[name]
        se = np.sqrt(azs.mcse(a, sample_dims=DIMS) ** 2 + azs.mcse(b, sample_dims=DIMS) ** 2)
        z = np.atleast_1d(((a.mean(DIMS) - b.mean(DIMS)) / se).values)
        print(f"{name}: z = {np.round(z, 2)}")
        z_all.append(z)
    z = np.abs(np.concatenate(z_all))
    print(f"{np.mean(z < 2):.2f} of {z.size} within 2 MCSE; max |z| {z.max():.2f}")
    assert np.mean(z < 2) >= 0.8
    assert z.max() < 4

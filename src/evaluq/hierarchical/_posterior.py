"""Exact conditional Gaussian draws of the effects integrated out of the marginal model.

Given the hyperparameters of one posterior draw, the language effects and the cell means are
Gaussian:

    a_l | . ~ N(t2 b_l / (1 + t2 A_l), t2 / (1 + t2 A_l)),
        A_l = sum_m w_ml / d_ml,  b_l = sum_m w_ml r_ml / d_ml,  r_ml = ybar_ml - mu_m,
    g_ml | a_l, . ~ N(k_ml (r_ml - a_l), tau_m^2 (1 - k_ml)),
        k_ml = w_ml tau_m^2 / (tau_m^2 + s2_ml),  s2_ml = v_fixed_ml + sigma_seed_m^2 / S_ml,

with t2 = tau_lang^2 (0 in the independent model) and d_ml = tau_m^2 + s2_ml. Drawing a then
g given a is an exact joint draw; theta_ml = mu_m + a_l + g_ml. Everything is vectorised over
the sample axes (chain, draw), in chunks of draws to bound memory.

With paired test-set errors (correlated across models, the k-factor covariance
C_l = F_l F_l' + diag(psi v), F_l = sqrt(v) Lambda_l) the draws use pathwise conditioning
(Matheron's rule), exact for any Gaussian model: draw a0, g0 and the errors e0 from their
priors, then correct by the covariance with the data,

    x_l = S_l^{-1} (r_l - W (a0_l 1 + g0_l + e0_l)),
    S_l = Delta_l + U_l U_l',  Delta_l = diag(w (tau^2 + sigma_seed^2 / S + psi v) + 1 - w),
    U_l = [t w, F_l],
    a_l = a0_l + t2 w'x_l,   g_l = g0_l + tau^2 w x_l,

with e0_l = F_l z + N(0, diag(psi v + sigma_seed^2 / S)) on the observed cells; S_l^{-1} is
applied by the Woodbury identity, S^{-1} y = D^{-1} y - D^{-1} U (I + U' D^{-1} U)^{-1} U' D^{-1} y
(D = Delta_l), with a (k + 1) x (k + 1) solve, fused over a language's models in a numba
kernel (``_pathwise``).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from evaluq.hierarchical._data import HierarchicalData

CHUNK_CELLS: Final = 2**22        # (draws x models x languages) values held at once


def cell_noise(data: HierarchicalData, sigma_seed: np.ndarray) -> np.ndarray:
    """s2 = v_fixed + sigma_seed^2 / S on observed cells; sigma_seed (..., M) -> (..., M, L)."""
    arr = data.arrays()
    seed_var = arr["seed_weight"] * sigma_seed**2
    return arr["v_fixed"] + seed_var[..., None] * arr["inv_s"]


def draw_effects(data: HierarchicalData, mu: np.ndarray, tau_m: np.ndarray,
                 sigma_seed: np.ndarray, tau_lang: np.ndarray | None,
                 gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draws of a (n, L) and theta (n, M, L) for n hyperparameter draws (mu: (n, M), ...)."""
    arr = data.arrays()
    w = arr["weight"]
    tau2 = (tau_m**2)[..., None]
    s2 = cell_noise(data, sigma_seed)
    r = (arr["ybar"] - mu[..., None]) * w
    n, _, n_lang = s2.shape
    if tau_lang is None:
        a = np.zeros((n, n_lang))
    else:
        d = tau2 + s2
        t2 = (tau_lang**2)[:, None]
        big_a = (w / d).sum(axis=-2)
        b = (w * r / d).sum(axis=-2)
        denom = 1.0 + t2 * big_a
        a = t2 * b / denom + np.sqrt(t2 / denom) * gen.standard_normal((n, n_lang))
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(w > 0, tau2 / (tau2 + s2), 0.0)
    k = np.nan_to_num(k, nan=1.0)           # tau_m = s2 = 0 cannot happen under the prior
    g = k * (r - a[:, None, :]) + np.sqrt(tau2 * (1.0 - k)) * gen.standard_normal(s2.shape)
    return a, mu[..., None] + a[:, None, :] + g


def _paired_effects(data: HierarchicalData, mu: np.ndarray, tau_m: np.ndarray,
                    sigma_seed: np.ndarray, tau_lang: np.ndarray | None,
                    gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``draw_effects`` with test-set errors correlated across models (pathwise conditioning
    with the low-rank covariance: Woodbury with a (k + 1) x (k + 1) matrix per language)."""
    from evaluq.hierarchical._pathwise import pathwise_draws  # imports numba

    arr = data.arrays()
    w = arr["weight"].T                                              # (L, M)
    n, n_models = mu.shape
    n_lang = w.shape[0]
    load = arr.get("load", np.zeros((n_lang, n_models, 0)))          # (L, M, k), 0 if missing
    t2 = np.zeros(n) if tau_lang is None else tau_lang**2
    # the normals in the order of the NumPy form this kernel replaced: a0, g0, F z, unique
    z_a = gen.standard_normal((n, n_lang))
    z_g = gen.standard_normal((n, n_lang, n_models))
    z_f = gen.standard_normal((n, n_lang, load.shape[-1]))
    z_e = gen.standard_normal((n, n_lang, n_models))
    a, theta = pathwise_draws(arr["ybar"].T, w, np.where(w > 0, arr["v_fixed"].T, 0.0),
                              arr["inv_s"].T, arr["seed_weight"], load, mu, tau_m**2,
                              sigma_seed**2, t2, z_a, z_g, z_f, z_e)
    return a, np.swapaxes(theta, -1, -2)


def conditional_draws(data: HierarchicalData, post: dict[str, np.ndarray],
                      gen: np.random.Generator, *, keep_cells: bool) -> dict[str, np.ndarray]:
    """``a`` (C, D, L), ``benchmark_mean`` (C, D, M) and, if ``keep_cells``, ``theta``.

    ``post`` holds ``mu``, ``tau_m``, ``sigma_seed`` (C, D, M) and ``tau_lang`` (C, D) or
    None. The benchmark mean of a model is the mean of theta over all the cube's languages
    (missing cells drawn from their conditional), so every model is compared on the same
    benchmark.
    """
    n_chain, n_draw, n_models = post["mu"].shape
    n_lang = data.shape[1]
    flat = {k: (None if v is None else v.reshape(n_chain * n_draw, *v.shape[2:]))
            for k, v in post.items()}
    total = n_chain * n_draw
    width = data.model_factors + 2 if data.paired else 1
    step = max(1, CHUNK_CELLS // (n_models * n_lang * width))
    effects = _paired_effects if data.paired else draw_effects
    a_all = np.empty((total, n_lang))
    bench = np.empty((total, n_models))
    theta_all: np.ndarray | None = np.empty((total, n_models, n_lang)) if keep_cells else None
    for start in range(0, total, step):
        sl = slice(start, start + step)
        tl = flat["tau_lang"]
        a, theta = effects(data, flat["mu"][sl], flat["tau_m"][sl], flat["sigma_seed"][sl],
                                None if tl is None else tl[sl], gen)
        a_all[sl] = a
        bench[sl] = theta.mean(axis=-1)
        if theta_all is not None:
            theta_all[sl] = theta
    out: dict[str, np.ndarray] = {"a": a_all.reshape(n_chain, n_draw, n_lang),
           "benchmark_mean": bench.reshape(n_chain, n_draw, n_models)}
    if theta_all is not None:
        out["theta"] = theta_all.reshape(n_chain, n_draw, n_models, n_lang)
    return out


def sigma_boot_draws(data: HierarchicalData, shape: tuple[int, int],
                     gen: np.random.Generator) -> np.ndarray:
    """Posterior draws of sigma_boot (C, D, M, L) from the pooled bootstrap variance.

    With the Jeffreys prior 1/sigma^2 and nu * vbar / sigma^2 ~ chi2(nu) (nu = sum over seeds
    of B - 1), sigma^2 | vbar is scaled inverse chi-square: nu vbar / chi2(nu). A given
    ``sd_boot`` (nu infinite) is a constant. Cells without bootstrap information are NaN.
    """
    nu = data.boot_dof
    finite = np.isfinite(nu) & (nu > 0)
    chi = gen.chisquare(np.where(finite, nu, 1.0), size=(*shape, *nu.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(finite, nu * data.vbar / chi, data.vbar)
    return np.sqrt(np.where(data.observed, var, np.nan))

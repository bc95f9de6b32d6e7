"""Exact conditional Gaussian draws of the effects integrated out of the marginal model.

Given the hyperparameters of one posterior draw, the language effects a_l and the cell
effects g_ml are Gaussian. They are drawn by pathwise conditioning (Matheron's rule), exact
for any Gaussian model: draw a0, g0 and the test-set errors e0 from their priors, then
correct by the covariance with the data,

    x_l = S_l^{-1} (r_l - W (a0_l 1 + g0_l + e0_l)),   r_ml = ybar_ml - mu_m,
    S_l = Delta_l + U_l U_l',  Delta_l = diag(w (tau^2 + sigma_seed^2 / S + psi v) + 1 - w),
    U_l = [t w, F_l],
    a_l = a0_l + t2 w'x_l,   g_l = g0_l + tau^2 w x_l,   theta_ml = mu_m + a_l + g_ml,

with t2 = tau_lang^2 (0 in the independent model) and e0_l = F_l z + N(0, diag(psi v +
sigma_seed^2 / S)) on the observed cells. With paired test-set errors the error covariance
is the k-factor C_l = F_l F_l' + diag(psi v), F_l = sqrt(v) Lambda_l; with independent
errors F_l has no columns (k = 0) and psi v is the cell's whole test-set variance v. S_l^{-1}
is applied by the Woodbury identity, S^{-1} y = D^{-1} y - D^{-1} U (I + U' D^{-1} U)^{-1}
U' D^{-1} y (D = Delta_l), with a (k + 1) x (k + 1) solve, fused over a language's models in
a numba kernel (``_pathwise``). Everything is vectorised over the sample axes (chain, draw),
in chunks of draws to bound memory.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from evaluq.hierarchical._data import HierarchicalData

CHUNK_CELLS: Final = 2**22        # (draws x models x languages) values held at once


def draw_effects(data: HierarchicalData, mu: np.ndarray, tau_m: np.ndarray,
                 sigma_seed: np.ndarray, tau_lang: np.ndarray | None,
                 gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draws of a (n, L) and theta (n, M, L) for n hyperparameter draws (mu, tau_m,
    sigma_seed: (n, M); tau_lang: (n,) or None in the independent model), by pathwise
    conditioning (module docstring): paired test-set errors through their factors, independent
    ones with k = 0."""
    from evaluq.hierarchical._pathwise import pathwise_draws  # imports numba

    arr = data.arrays()
    w = arr["weight"].T                                              # (L, M)
    n, n_models = mu.shape
    n_lang = w.shape[0]
    load = arr.get("load", np.zeros((n_lang, n_models, 0)))          # (L, M, k), 0 if missing
    t2 = np.zeros(n) if tau_lang is None else tau_lang**2
    # the normals: a0, g0, the errors' factors z and their unique parts
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
    width = data.model_factors + 2 if data.paired else 2
    step = max(1, CHUNK_CELLS // (n_models * n_lang * width))
    a_all = np.empty((total, n_lang))
    bench = np.empty((total, n_models))
    theta_all: np.ndarray | None = np.empty((total, n_models, n_lang)) if keep_cells else None
    for start in range(0, total, step):
        sl = slice(start, start + step)
        tl = flat["tau_lang"]
        a, theta = draw_effects(data, flat["mu"][sl], flat["tau_m"][sl], flat["sigma_seed"][sl],
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

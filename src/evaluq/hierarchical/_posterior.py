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
a numba kernel (``_pathwise``). Everything is vectorised over the draws of a chain, in
chunks of draws to bound memory, and the chains run in threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
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
    a, theta, _ = _draw_chunk(_kernel_inputs(data), mu, tau_m, sigma_seed, tau_lang, gen,
                              keep_cells=True)
    assert theta is not None
    return a, np.swapaxes(theta, -1, -2)


def _kernel_inputs(data: HierarchicalData) -> dict[str, np.ndarray]:
    """The data arrays of ``_pathwise.pathwise_draws``, (language, model) first."""
    arr = data.arrays()
    w = arr["weight"].T                                              # (L, M)
    n_lang, n_models = w.shape
    return {"ybar": arr["ybar"].T, "w": w,
            "unique": np.where(w > 0, arr["v_fixed"].T, 0.0), "inv_s": arr["inv_s"].T,
            "seed_weight": arr["seed_weight"],
            "load": arr.get("load", np.zeros((n_lang, n_models, 0)))}   # (L, M, k)


def _draw_chunk(inputs: dict[str, np.ndarray], mu: np.ndarray, tau_m: np.ndarray,
                sigma_seed: np.ndarray, tau_lang: np.ndarray | None, gen: np.random.Generator,
                *, keep_cells: bool, buffers: dict[str, np.ndarray] | None = None
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """``a`` (n, L), theta (n, L, M) or None, and theta's mean over the languages (n, M);
    ``buffers`` holds the normals' arrays from one call to the next."""
    from evaluq.hierarchical._pathwise import pathwise_draws  # imports numba

    buffers = {} if buffers is None else buffers
    n, n_models = mu.shape
    n_lang = inputs["w"].shape[0]
    t2 = np.zeros(n) if tau_lang is None else tau_lang**2
    # the normals: a0, g0, the errors' factors z and their unique parts, into buffers kept
    # across a chain's chunks (a fresh array of this size costs its page faults: 3x the time
    # of the normals themselves)
    sizes = {"z_a": (n_lang,), "z_g": (n_lang, n_models),
             "z_f": (n_lang, inputs["load"].shape[-1]), "z_e": (n_lang, n_models)}
    for name, shape in sizes.items():
        if name not in buffers or buffers[name].shape[0] < n:
            buffers[name] = np.empty((n, *shape))
    z_a, z_g, z_f, z_e = (gen.standard_normal(out=buffers[name][:n]) for name in sizes)
    return pathwise_draws(inputs["ybar"], inputs["w"], inputs["unique"], inputs["inv_s"],
                          inputs["seed_weight"], inputs["load"], mu, tau_m**2, sigma_seed**2,
                          t2, z_a, z_g, z_f, z_e, keep_cells)


def conditional_draws(data: HierarchicalData, post: dict[str, np.ndarray],
                      gen: np.random.Generator, *, keep_cells: bool) -> dict[str, np.ndarray]:
    """``a`` (C, D, L), ``benchmark_mean`` (C, D, M) and, if ``keep_cells``, ``theta``.

    ``post`` holds ``mu``, ``tau_m``, ``sigma_seed`` (C, D, M) and ``tau_lang`` (C, D) or
    None. The benchmark mean of a model is the mean of theta over all the cube's languages
    (missing cells drawn from their conditional), so every model is compared on the same
    benchmark.

    Each chain draws from its own stream (``gen.spawn``), in chunks of draws, and the chains
    run in threads (NumPy's normals and the numba kernel release the GIL): the draws do not
    depend on how many threads ran them.
    """
    n_chain, n_draw, n_models = post["mu"].shape
    n_lang = data.shape[1]
    width = data.model_factors + 2 if data.paired else 2
    step = max(1, CHUNK_CELLS // (n_models * n_lang * width))
    a_all = np.empty((n_chain, n_draw, n_lang))
    bench = np.empty((n_chain, n_draw, n_models))
    theta_all = np.empty((n_chain, n_draw, n_models, n_lang)) if keep_cells else None
    streams = gen.spawn(n_chain)

    inputs = _kernel_inputs(data)

    def one_chain(chain: int) -> None:
        tl = post["tau_lang"]
        buffers: dict[str, np.ndarray] = {}
        for start in range(0, n_draw, step):
            sl = slice(start, start + step)
            a, theta, mean = _draw_chunk(inputs, post["mu"][chain, sl],
                                         post["tau_m"][chain, sl],
                                         post["sigma_seed"][chain, sl],
                                         None if tl is None else tl[chain, sl], streams[chain],
                                         keep_cells=keep_cells, buffers=buffers)
            a_all[chain, sl] = a
            bench[chain, sl] = mean
            if theta_all is not None and theta is not None:
                theta_all[chain, sl] = np.swapaxes(theta, -1, -2)

    workers = min(n_chain, os.cpu_count() or 1)
    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one_chain, range(n_chain)))
    else:
        for chain in range(n_chain):
            one_chain(chain)
    out: dict[str, np.ndarray] = {"a": a_all, "benchmark_mean": bench}
    if theta_all is not None:
        out["theta"] = theta_all
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

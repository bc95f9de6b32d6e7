"""The pathwise (Matheron) correction of the conditional draws, compiled with numba.

One kernel, fused over the models of a language, for ``_posterior.draw_effects`` (paired
test-set errors with k factors, independent ones with k = 0). The standard normals come from
the caller's NumPy generator; for draw i and language l the prior draws are
``a0 = sqrt(t2) z_a``, ``g0_m = tau_m z_g``, ``e0_m = F_m' z_f + sqrt(psi v_m + s_m) z_e``
(``s_m = sigma_seed_m^2 / S_ml`` where the seed SD is identified), and the correction is

    delta_m = w_m (tau_m^2 + s_m + psi v_m) + 1 - w_m,
    y_m = (r_m - w_m (a0 + g0_m + e0_m)) / delta_m,
    u_m = [sqrt(t2) w_m, F_m1 .. F_mk],      K = I + sum_m u_m u_m' / delta_m,
    x_m = y_m - u_m' K^{-1} (sum_m' u_m' y_m') / delta_m,
    a = a0 + t2 sum_m w_m x_m,               theta_m = mu_m + a + g0_m + tau_m^2 w_m x_m,

with K ((k + 1) x (k + 1)) solved by an unrolled Cholesky factorisation. The NumPy version of
the same steps allocated a dozen (draws x languages x models) temporaries; this one touches
each cell a few times (serially: numba's default threading layer aborts on concurrent
parallel calls, e.g. two fits in two threads). ``numba.njit(cache=True)``: compiled once
per machine. This module imports numba, so only ``_posterior.draw_effects`` imports it,
inside the function.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _solve_small(small: np.ndarray, rhs: np.ndarray) -> None:  # pragma: no cover
    """rhs <- (I + small)^-1 rhs, with ``small`` the lower triangle of a symmetric matrix:
    Cholesky factor in place, then forward and back substitution."""
    k1 = rhs.shape[0]
    for p in range(k1):
        small[p, p] += 1.0
    for j in range(k1):
        s = small[j, j]
        for p in range(j):
            s -= small[j, p] * small[j, p]
        small[j, j] = np.sqrt(s)
        for q in range(j + 1, k1):
            s = small[q, j]
            for p in range(j):
                s -= small[q, p] * small[j, p]
            small[q, j] = s / small[j, j]
    for j in range(k1):
        s = rhs[j]
        for p in range(j):
            s -= small[j, p] * rhs[p]
        rhs[j] = s / small[j, j]
    for j in range(k1 - 1, -1, -1):
        s = rhs[j]
        for p in range(j + 1, k1):
            s -= small[p, j] * rhs[p]
        rhs[j] = s / small[j, j]


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _kernel(ybar: np.ndarray, w: np.ndarray, unique: np.ndarray, inv_s: np.ndarray,
            seed_weight: np.ndarray, load: np.ndarray, mu: np.ndarray, tau2: np.ndarray,
            sig2: np.ndarray, t2: np.ndarray, z_a: np.ndarray, z_g: np.ndarray,
            z_f: np.ndarray, z_e: np.ndarray, a_out: np.ndarray, theta_out: np.ndarray,
            bench_out: np.ndarray) -> None:  # pragma: no cover - compiled
    n, n_lang, n_models = z_g.shape
    keep = theta_out.shape[1] > 0
    k1 = load.shape[2] + 1
    u = np.empty((n_models, k1))
    y = np.empty(n_models)
    g0 = np.empty(n_models)
    delta = np.empty(n_models)
    small = np.empty((k1, k1))
    rhs = np.empty(k1)
    for i in range(n):
        t = np.sqrt(t2[i])
        for lang in range(n_lang):
            a0 = t * z_a[i, lang]
            small[:, :] = 0.0
            rhs[:] = 0.0
            for m in range(n_models):           # prior draws, u, y, delta, U'D^-1U, U'y
                wm = w[lang, m]
                s = seed_weight[m] * sig2[i, m] * inv_s[lang, m]
                e0 = np.sqrt(unique[lang, m] + s) * z_e[i, lang, m]
                for j in range(k1 - 1):
                    e0 += load[lang, m, j] * z_f[i, lang, j]
                g0[m] = np.sqrt(tau2[i, m]) * z_g[i, lang, m]
                delta[m] = wm * (tau2[i, m] + s + unique[lang, m]) + 1.0 - wm
                y[m] = ((ybar[lang, m] - mu[i, m]) * wm - wm * (a0 + g0[m] + e0)) / delta[m]
                u[m, 0] = t * wm
                for j in range(k1 - 1):
                    u[m, j + 1] = load[lang, m, j]
                for p in range(k1):
                    rhs[p] += u[m, p] * y[m]
                    up = u[m, p] / delta[m]
                    for q in range(p + 1):
                        small[p, q] += up * u[m, q]
            _solve_small(small, rhs)
            total = 0.0
            for m in range(n_models):
                corr = 0.0
                for p in range(k1):
                    corr += u[m, p] * rhs[p]
                y[m] -= corr / delta[m]                       # x_m
                total += w[lang, m] * y[m]
            a = a0 + t2[i] * total
            a_out[i, lang] = a
            for m in range(n_models):
                theta = mu[i, m] + a + g0[m] + tau2[i, m] * w[lang, m] * y[m]
                bench_out[i, m] += theta
                if keep:
                    theta_out[i, lang, m] = theta
        for m in range(n_models):
            bench_out[i, m] /= n_lang


def pathwise_draws(ybar: np.ndarray, w: np.ndarray, unique: np.ndarray, inv_s: np.ndarray,
                   seed_weight: np.ndarray, load: np.ndarray, mu: np.ndarray, tau2: np.ndarray,
                   sig2: np.ndarray, t2: np.ndarray, z_a: np.ndarray, z_g: np.ndarray,
                   z_f: np.ndarray, z_e: np.ndarray, keep_cells: bool = True
                   ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """``a`` (n, L), ``theta`` (n, L, M) (None unless ``keep_cells``) and its mean over the
    languages (n, M) (see the module docstring).

    Shapes: ``ybar``, ``w``, ``unique``, ``inv_s`` (L, M); ``seed_weight`` (M,); ``load``
    (L, M, k); ``mu``, ``tau2``, ``sig2`` (n, M) (``sig2`` = sigma_seed^2); ``t2`` (n,);
    the standard normals ``z_a`` (n, L), ``z_g``, ``z_e`` (n, L, M), ``z_f`` (n, L, k).
    """
    n, n_lang, n_models = z_g.shape
    a_out = np.empty((n, n_lang))
    theta_out = np.empty((n, n_lang if keep_cells else 0, n_models))
    bench_out = np.zeros((n, n_models))
    args = [np.ascontiguousarray(v, dtype=np.float64)
            for v in (ybar, w, unique, inv_s, seed_weight, load, mu, tau2, sig2, t2, z_a, z_g,
                      z_f, z_e)]
    kernel: Any = _kernel            # numba's Dispatcher stub types no arguments
    kernel(*args, a_out, theta_out, bench_out)
    return a_out, theta_out if keep_cells else None, bench_out

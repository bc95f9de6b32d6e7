"""The marginal log-density of the hierarchical model and its gradient, in one fused kernel.

Per language l the observed seed means are MvN(mu, S_l), S_l = diag(d_l) + U_l U_l', with
U_l = [sqrt(t2) w_l, load_l] (model x (k + 1); k = 0 for independent test-set errors, t2 = 0
in the independent model), as in ``_model.lowrank_marginal_loglik``. With P = diag(w / d),
r = w (ybar - mu), K = I + U'PU = LL', c = U'Pr, h = K^{-1} c and g = U'Pw,

    log p  = -1/2 sum_l [n_l log 2 pi + sum_m w log d + log|K| + r'Pr - c'h],
    x_m    = P_m (r_m - U_m h)                          (x = S^{-1} r on the observed cells),
    d log p / d mu_m = sum_l w_m x_m,
    d log p / d d_ml = (x_m^2 - P_m + P_m^2 U_m' K^{-1} U_m) / 2,
    d log p / d t2   = sum_l ((w'x)^2 - (w'Pw - g'K^{-1}g)) / 2,

the last two from d log p / dS = (xx' - S^{-1}) / 2 with S^{-1} = P - PUK^{-1}U'P on the
observed cells (weights are 0 or 1). Every quadratic form in K^{-1} is ||L^{-1} v||^2, by
forward substitution with the (k + 1) x (k + 1) factor.

With d_ml = tsq_m + seed_var_m inv_s_ml + v_fixed_ml (tsq = tau_m^2, seed_var =
sigma_seed^2 where identified), the gradients in tsq and seed_var are sums over languages
of d log p / d d_ml (times inv_s_ml), formed in the same pass.

PyTensor builds the same quantities from a few dozen elementwise and reduction ops over
(model x language) arrays, each a pass over memory, and their reverse-mode gradient as many
again. This kernel makes two passes over the cells, model by model, with every inner loop
over the languages (one accumulator per language: contiguous and vectorised), and takes one
log per 8 cells. Value and gradient at 50 x 500 with k = 1: 0.14 ms against 0.32 ms for
PyTensor's graph of the same log-density (``benchmarks/bench_hierarchical.py`` prints
both). The Op returns the value and the gradient together (one call per
log-density-and-gradient evaluation); its ``pullback`` reads the gradient outputs. It
runs in PyTensor's numba backend (nutpie; the numba cache key carries a hash of this file)
and in Python mode (PyMC's sampler) through the same compiled kernel.
``tests/hierarchical/test_fused.py`` checks it against PyTensor's gradient of the reference
graph, the dense normal and finite differences.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch import basic as numba_basic
from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

LOG_2PI = math.log(2.0 * math.pi)
SOURCE_HASH = int(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12], 16)
"""Salts the numba cache key of the Op (any change of this file recompiles it)."""


FASTMATH = {"reassoc", "contract", "arcp", "nsz"}
"""LLVM flags that let the loops over languages vectorise (no "nnan"/"ninf": a log of 0
stays -inf); with ``error_model="numpy"`` (no zero-division check in each division)."""


LOG_GROUP = 8
"""Cells whose variances are multiplied before one log (a log costs more than the rest of a
cell's work); a product outside ``SAFE_PRODUCT`` takes the logs one by one."""
SAFE_PRODUCT = (1e-250, 1e250)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def loglik_and_grad(ybar: np.ndarray, weight: np.ndarray, inv_s: np.ndarray,
                    v_fixed: np.ndarray, load: np.ndarray, mu: np.ndarray, tsq: np.ndarray,
                    seed_var: np.ndarray, t2: float) -> Any:  # pragma: no cover - compiled
    """log p and its gradient in mu, tsq, seed_var (M,) and t2 (module docstring), with
    d_ml = tsq_m + seed_var_m inv_s_ml + v_fixed_ml.

    ``ybar``, ``weight`` (0 or 1), ``inv_s``, ``v_fixed``: (M, L); ``load``: (M, k, L), zero
    on missing cells. Returns (log p, d/d mu, d/d tsq, d/d seed_var, d/d t2).
    """
    s = math.sqrt(t2)
    kmat, c, g, logd, rpr, psum, n_obs = _accumulate(ybar, weight, inv_s, v_fixed, load, mu,
                                                     tsq, seed_var, s)
    inv_diag = _cholesky(kmat)
    h = _forward(kmat, inv_diag, c)               # L^{-1} c
    gl = _forward(kmat, inv_diag, g)              # L^{-1} g
    total = 0.0
    w_s_w = np.empty(logd.shape[0])               # w'S^{-1}w per language
    for lang in range(logd.shape[0]):
        chc = 0.0
        gkg = 0.0
        for i in range(h.shape[0]):
            chc += h[i, lang] * h[i, lang]
            gkg += gl[i, lang] * gl[i, lang]
            total += 2.0 * math.log(kmat[i, i, lang])
        total += logd[lang] + rpr[lang] - chc
        w_s_w[lang] = psum[lang] - gkg
    _backward(kmat, inv_diag, h)                  # h = K^{-1} c
    g_mu, g_tsq, g_seed, xw = _gradient(ybar, weight, inv_s, v_fixed, load, mu, tsq, seed_var,
                                        s, kmat, inv_diag, h)
    g_t2 = 0.0
    for lang in range(xw.shape[0]):
        g_t2 += 0.5 * (xw[lang] * xw[lang] - w_s_w[lang])
    return -0.5 * (n_obs * LOG_2PI + total), g_mu, g_tsq, g_seed, g_t2


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _accumulate(ybar: np.ndarray, weight: np.ndarray, inv_s: np.ndarray, v_fixed: np.ndarray,
                load: np.ndarray, mu: np.ndarray, tsq: np.ndarray, seed_var: np.ndarray,
                s: float) -> Any:  # pragma: no cover - compiled
    """The first pass, model by model: per language K - I = U'PU (lower triangle), c = U'Pr,
    g = U'Pw, sum log d, r'Pr and w'Pw; and the number of observed cells."""
    n_m, n_l = ybar.shape
    k = load.shape[1]
    lo, hi = SAFE_PRODUCT
    kmat = np.zeros((k + 1, k + 1, n_l))
    c = np.zeros((k + 1, n_l))
    g = np.zeros((k + 1, n_l))
    logd, rpr, psum = np.zeros(n_l), np.zeros(n_l), np.zeros(n_l)
    prod = np.ones(n_l)
    col = np.empty((k + 1, n_l))
    prec, res = np.empty(n_l), np.empty(n_l)
    n_obs = 0.0
    for m in range(n_m):
        tsq_m, seed_m, mu_m = tsq[m], seed_var[m], mu[m]
        wrow, yrow, srow, vrow = weight[m], ybar[m], inv_s[m], v_fixed[m]
        for lang in range(n_l):
            w = wrow[lang]
            dd = tsq_m + seed_m * srow[lang] + vrow[lang]
            p = w / dd
            r = (yrow[lang] - mu_m) * w
            prec[lang] = p
            res[lang] = r
            prod[lang] *= w * dd + (1.0 - w)      # the variance of an observed cell, else 1
            rpr[lang] += r * r * p
            psum[lang] += p * w
            col[0, lang] = s * w
            n_obs += w
        if (m + 1) % LOG_GROUP == 0 or m == n_m - 1:
            first = m - m % LOG_GROUP
            for lang in range(n_l):
                if lo < prod[lang] < hi:
                    logd[lang] += math.log(prod[lang])
                else:
                    for mm in range(first, m + 1):
                        if weight[mm, lang] != 0.0:
                            logd[lang] += math.log(tsq[mm] + seed_var[mm] * inv_s[mm, lang]
                                                   + v_fixed[mm, lang])
                prod[lang] = 1.0
        for j in range(k):
            for lang in range(n_l):
                col[j + 1, lang] = load[m, j, lang]
        for i in range(k + 1):
            for lang in range(n_l):
                pu = prec[lang] * col[i, lang]
                c[i, lang] += pu * res[lang]
                g[i, lang] += pu * wrow[lang]
            for j in range(i + 1):
                for lang in range(n_l):
                    kmat[i, j, lang] += prec[lang] * col[i, lang] * col[j, lang]
    return kmat, c, g, logd, rpr, psum, n_obs


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _cholesky(kmat: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """K = I + ``kmat`` = LL' per language, L in place of ``kmat``'s lower triangle; returns
    the inverses of L's diagonal (k1, L)."""
    k1, _, n_l = kmat.shape
    inv_diag = np.empty((k1, n_l))
    for j in range(k1):
        for lang in range(n_l):
            acc = kmat[j, j, lang] + 1.0
            for p in range(j):
                acc -= kmat[j, p, lang] * kmat[j, p, lang]
            kmat[j, j, lang] = math.sqrt(acc)
            inv_diag[j, lang] = 1.0 / kmat[j, j, lang]
        for i in range(j + 1, k1):
            for lang in range(n_l):
                acc = kmat[i, j, lang]
                for p in range(j):
                    acc -= kmat[i, p, lang] * kmat[j, p, lang]
                kmat[i, j, lang] = acc * inv_diag[j, lang]
    return inv_diag


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _backward(low: np.ndarray, inv_diag: np.ndarray,
              x: np.ndarray) -> None:  # pragma: no cover - compiled
    """x <- L^{-T} x per language (in place; see :func:`_forward_into`)."""
    k1, n_l = x.shape
    for j in range(k1 - 1, -1, -1):
        for lang in range(n_l):
            acc = x[j, lang]
            for p in range(j + 1, k1):
                acc -= low[p, j, lang] * x[p, lang]
            x[j, lang] = acc * inv_diag[j, lang]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _gradient(ybar: np.ndarray, weight: np.ndarray, inv_s: np.ndarray, v_fixed: np.ndarray,
              load: np.ndarray, mu: np.ndarray, tsq: np.ndarray, seed_var: np.ndarray,
              s: float, low: np.ndarray, inv_diag: np.ndarray,
              h: np.ndarray) -> Any:  # pragma: no cover - compiled
    """The second pass, model by model: d log p / d mu, tsq and seed_var (M,) and w'x per
    language, from x = P (r - U h) and U_m' K^{-1} U_m = ||L^{-1} U_m||^2."""
    n_m, n_l = ybar.shape
    k = load.shape[1]
    g_mu, g_tsq, g_seed = np.empty(n_m), np.empty(n_m), np.empty(n_m)
    xw = np.zeros(n_l)
    quad, err = np.empty(n_l), np.empty(n_l)
    col, tmp = np.empty((k + 1, n_l)), np.empty((k + 1, n_l))
    for m in range(n_m):
        tsq_m, seed_m, mu_m = tsq[m], seed_var[m], mu[m]
        wrow, yrow, srow, vrow = weight[m], ybar[m], inv_s[m], v_fixed[m]
        for lang in range(n_l):
            col[0, lang] = s * wrow[lang]
            err[lang] = (yrow[lang] - mu_m) * wrow[lang] - col[0, lang] * h[0, lang]
        for j in range(k):
            for lang in range(n_l):
                col[j + 1, lang] = load[m, j, lang]
                err[lang] -= col[j + 1, lang] * h[j + 1, lang]
        _forward_into(low, inv_diag, col, tmp)    # L^{-1} U_m
        quad[:] = 0.0
        for i in range(k + 1):
            for lang in range(n_l):
                quad[lang] += tmp[i, lang] * tmp[i, lang]
        acc_mu = acc_tsq = acc_seed = 0.0
        for lang in range(n_l):
            w = wrow[lang]
            p = w / (tsq_m + seed_m * srow[lang] + vrow[lang])
            x = p * err[lang]
            acc_mu += w * x
            xw[lang] += w * x
            g_d = 0.5 * (x * x - p + p * p * quad[lang])          # d log p / d d
            acc_tsq += g_d
            acc_seed += g_d * srow[lang]
        g_mu[m], g_tsq[m], g_seed[m] = acc_mu, acc_tsq, acc_seed
    return g_mu, g_tsq, g_seed, xw


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _forward_into(low: np.ndarray, inv_diag: np.ndarray, rhs: np.ndarray,
                  out: np.ndarray) -> None:  # pragma: no cover
    """out <- L^{-1} rhs per language: ``low`` (k1, k1, L) lower factors with ``inv_diag``
    (k1, L) the inverses of their diagonals, ``rhs`` and ``out`` (k1, L)."""
    k1, n_l = rhs.shape
    for i in range(k1):
        for lang in range(n_l):
            out[i, lang] = rhs[i, lang]
        for p in range(i):
            for lang in range(n_l):
                out[i, lang] -= low[i, p, lang] * out[p, lang]
        for lang in range(n_l):
            out[i, lang] *= inv_diag[i, lang]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _forward(low: np.ndarray, inv_diag: np.ndarray,
             rhs: np.ndarray) -> np.ndarray:  # pragma: no cover
    """L^{-1} rhs per language (a new array; see :func:`_forward_into`)."""
    out = np.empty(rhs.shape)
    _forward_into(low, inv_diag, rhs, out)
    return out


DATA = ("ybar", "weight", "inv_s", "v_fixed", "load")
PARAMETERS = ("mu", "tsq", "seed_var", "t2")
NDIM = {"ybar": 2, "weight": 2, "inv_s": 2, "v_fixed": 2, "load": 3, "mu": 1, "tsq": 1,
        "seed_var": 1, "t2": 0}


class FusedMarginalLoglik(Op):
    """Outputs log p and its gradient in mu, tsq, seed_var and t2 (module docstring), of the
    inputs named in ``DATA + PARAMETERS`` (shapes in :func:`loglik_and_grad`)."""

    __props__ = ()

    def make_node(self, *inputs: Any) -> Apply:
        tensors = [pt.as_tensor_variable(v).astype("float64") for v in inputs]
        for name, var in zip(DATA + PARAMETERS, tensors, strict=True):
            if var.ndim != NDIM[name]:
                raise ValueError(f"{name} must have {NDIM[name]} dimensions, got {var.ndim}")
        outputs = [pt.dscalar(), pt.dvector(), pt.dvector(), pt.dvector(), pt.dscalar()]
        return Apply(self, tensors, outputs)

    def perform(self, node: Apply, inputs: Any, output_storage: Any) -> None:
        arrays = [np.ascontiguousarray(v, dtype=np.float64) for v in inputs[:-1]]
        kernel: Any = loglik_and_grad     # numba's Dispatcher stub types no arguments
        values = kernel(*arrays, float(inputs[-1]))
        for store, value in zip(output_storage, values, strict=True):
            store[0] = np.asarray(value, dtype=np.float64)

    def infer_shape(self, node: Apply, shapes: Any) -> list[Any]:
        return [(), shapes[5], shapes[5], shapes[5], ()]

    def pullback(self, inputs: Any, outputs: Any, output_grads: Any) -> list[Any]:
        if any(not isinstance(og.type, DisconnectedType) for og in output_grads[1:]):
            raise NotImplementedError("the gradient outputs have no gradient of their own")
        g = output_grads[0]
        data = [grad_undefined(self, i, inputs[i], "data, not differentiated")
                for i in range(len(DATA))]
        return [*data, *(g * out for out in outputs[1:])]


fused_op = FusedMarginalLoglik()


def fused_marginal_loglik(ybar: Any, weight: Any, inv_s: Any, v_fixed: Any, mu: Any,
                          tsq: Any, seed_var: Any, tau_lang_sq: Any,
                          load: Any | None = None) -> Any:
    """The PyTensor log-density (scalar) of the marginal model, fused with its gradient:
    d_ml = tsq_m + seed_var_m inv_s_ml + v_fixed_ml (model x language arrays).

    ``load`` (M, k, L) holds the factors of paired test-set errors; None for independent
    ones (k = 0). The same value as ``_model.lowrank_marginal_loglik`` (and, with k = 0,
    ``_model.marginal_loglik``).
    """
    if load is None:
        ybar = pt.as_tensor_variable(ybar)
        load = pt.zeros((ybar.shape[0], 0, ybar.shape[1]))
    outputs: Any = fused_op(ybar, weight, inv_s, v_fixed, load, mu, tsq, seed_var, tau_lang_sq)
    return outputs[0]


@register_funcify_default_op_cache_key(FusedMarginalLoglik)
def _numba_funcify(op: FusedMarginalLoglik, node: Apply, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def fused(ybar: Any, weight: Any, inv_s: Any, v_fixed: Any, load: Any, mu: Any,
              tsq: Any, seed_var: Any, t2: Any) -> Any:  # pragma: no cover - compiled
        logp, g_mu, g_tsq, g_seed, g_t2 = loglik_and_grad(
            np.ascontiguousarray(ybar), np.ascontiguousarray(weight),
            np.ascontiguousarray(inv_s), np.ascontiguousarray(v_fixed),
            np.ascontiguousarray(load), np.ascontiguousarray(mu), np.ascontiguousarray(tsq),
            np.ascontiguousarray(seed_var), t2.item())
        return np.array(logp), g_mu, g_tsq, g_seed, np.array(g_t2)

    return fused, SOURCE_HASH

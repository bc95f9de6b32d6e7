"""The beta-binomial family's sampler log-density, its table fused into the grid kernel.

The beta-binomial terms sum rows of one table on the shared grid (``_betabinomial``,
``_gridquad``): with x = eta_mk - b_g, p = expit(x), a = p phi and c = (1 - p) phi,

    T[(m, k, y), g] = log BB(y | n_mk, a, c) - log C(n_mk, y)
                    = A_y + C_{n-y} - P_n + [y > 0] log a + [n - y > 0] log c - [n > 0] log phi,
    A_y = sum_{1 <= j < y} log(a + j),   C_z = sum_{1 <= j < z} log(c + j),
    P_n = sum_{1 <= j < n} log(phi + j),

with log a = log phi - softplus(-x) and log c = log phi - softplus(x) (finite for any x). A_y
and C_z are running sums over y = 0..n, so one (model, task, node) costs n logarithms for each
of a and c, whatever the number of epochs: the rising factorials are exact (no difference of
large ``gammaln`` values at large phi) for any n. Their derivatives are running sums too,

    dT/dx   = [y > 0] (1 - p) - [n - y > 0] p + p (1 - p) phi (SA_y - SC_{n-y}),
    dT/dphi = ([y > 0] + [n - y > 0] - [n > 0]) / phi + p SA_y + (1 - p) SC_{n-y} - SP_n,

SA_y = sum_{1 <= j < y} 1 / (a + j) (SC, SP alike). The kernel fills the table and both
slopes, sums the pair rows (``_betabinomial.pair_rows``), runs the shared grid kernel
(:func:`evaluq.item_model._gridquad.grid_loglik_and_grad`) and carries its gradient in the
rows back to eta, phi and the nodes b:

    dL/d eta_mk = sum_{y, g} D[(m, k, y), g] dT/dx,   dL/d b_g = -sum_{m, k, y} D dT/dx,
    dL/d phi = sum D dT/dphi,   D[r] = the sum of the gradient of every pair row holding r

(D summed first, then one pass over the table's rows: :func:`_carry_back`). When every count
is 1 the kernel works on likelihoods (:func:`bb_likelihoods_and_slopes`,
:func:`product_loglik_and_grad`: a term multiplies its pair rows over its window, one
logarithm per term); else, or when a term's largest node is below ``TINY``, on logarithms
(the shared kernel). Either way each term sums its window of blocks within ``WINDOW`` = 27
nats of its largest node, not the other families' 36 (``_gridquad.WINDOW``): each node left
out holds less than e^-27 = 1.9e-12 of the largest, at most 8.4e-13 of a term's integral as
measured, below the trapezoid rule's own error bound (5e-11). On the product path a term
multiplies four of its pair rows into its window per pass (then two, then one), and its
block bounds alike, over flat unsigned indices (as ``_ordinal_grid._evaluate``). At 20
models x 10^4 items x 5 epochs (9,589 terms of 10 pair rows) these took one log-density and
gradient from 4.0-4.2 to 3.1-3.2 ms (windows of 44 -> 38 nodes; ``models/item_model.md``).

Before, the table was a PyTensor graph (a dozen elementwise passes and their gradients, the
pair rows gathered and scattered): at 10 models x 1,000 items x 3 epochs it took 0.29 of the
0.66 ms of one log-density and gradient. :class:`BetaBinomialGridLoglik` wraps the kernel as a
PyTensor Op (numba backend for nutpie, its cache key salted by a hash of this file);
``tests/test_item_model_betabinomial.py`` checks it against the PyTensor table on single
rows, ``scipy.integrate.quad`` and finite differences of the adaptive rule.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Final

import numba
import numpy as np
from pytensor.graph.basic import Apply
from pytensor.link.numba.dispatch import basic as numba_basic
from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

from evaluq.item_model._fused_op import FusedLoglik
from evaluq.item_model._gridquad import (
    BLOCK,
    FASTMATH,
    grid_loglik_and_grad,
    window_moments,
)
from evaluq.item_model._gridquad import WINDOW as GRID_WINDOW

SOURCE_HASH: Final = int(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12], 16)
"""Salts the numba cache key of the Op (any change of this file recompiles it)."""
WINDOW: Final = 27.0
"""A term's blocks whose bound lies more than this below its largest node are left out, on
both paths (``_gridquad.WINDOW``, 36, stays the other families'): each node left out holds
less than e^-27 = 1.9e-12 of the largest and those beyond the window fall off (at most
~4e-12 relative in all, as ``_ordinal_grid.WINDOW``), below the trapezoid rule's own error
bound 2 exp(-2 pi^2 / ``_gridquad.SPACING``^2) = 5e-11 at the narrowest integrand. Measured
at 20 models x 10^4 items x 5 epochs (sigma_item 0.5 to 3, rho 0.02 to 0.6): at most
8.4e-13 of a term's integral left out (4e-16 at 36); a window held 44 nodes on average at
36, 38 at 27 (31 within 27 nats of the largest, the rest the blocks' rounding)."""
PRODUCT_RANGE: Final = 600.0
"""Below this bound on |eta| + |b| the likelihood table's exponentials are products of
per-cell and per-node ones (no overflow: e^600 < 1.8e308; as ``_ordinal_grid``)."""
TINY: Final = 1e-250
"""The product path needs every term's largest node above this (else the log path): far
above the smallest normal double (2e-308) even e^-``WINDOW`` below it."""


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _slopes(y: int, n: int, p: float, q: float, phi: float, run_sa: np.ndarray,
            run_sc: np.ndarray, big_sp: np.ndarray) -> tuple[float, float]:
    """(dT/dx, dT/dphi) of row y of a cell with n epochs at p = expit(x) (module
    docstring; ``run_sa`` / ``run_sc`` the running sums SA, SC, ``big_sp`` SP)."""
    z = n - y
    vx = p * q * phi * (run_sa[y] - run_sc[z])
    vphi = p * run_sa[y] + q * run_sc[z] - big_sp[n]
    inv_phi = 1.0 / phi
    if y > 0:
        vx += q
        vphi += inv_phi
    if z > 0:
        vx -= p
        vphi += inv_phi
    if n > 0:
        vphi -= inv_phi
    return vx, vphi  # pragma: no cover - compiled


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _reciprocal_sums(n: int, a: float, c: float, run_sa: np.ndarray,
                     run_sc: np.ndarray) -> None:  # pragma: no cover - compiled
    """SA_y and SC_y (y = 0..n) into ``run_sa`` / ``run_sc``: sums of 1 / (a + j) and
    1 / (c + j) over 1 <= j < y."""
    for j in range(1, n):
        run_sa[j + 1] = run_sa[j] + 1.0 / (a + j)
        run_sc[j + 1] = run_sc[j] + 1.0 / (c + j)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _phi_sums(phi: float, width: int) -> tuple[np.ndarray, np.ndarray]:
    """P_n and SP_n (n = 0..``width``): sums of log(phi + j) and 1 / (phi + j) over
    1 <= j < n."""
    big_p, big_sp = np.zeros(width + 1), np.zeros(width + 1)
    for j in range(1, width):
        big_p[j + 1] = big_p[j] + math.log(phi + j)
        big_sp[j + 1] = big_sp[j] + 1.0 / (phi + j)
    return big_p, big_sp  # pragma: no cover - compiled


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def bb_table_and_slopes(eta: np.ndarray, epochs: np.ndarray, phi: float, b: np.ndarray,
                        width: int, slopes: bool = True) -> Any:  # pragma: no cover - compiled
    """The table T (M K ``width`` + 1, G: rows (model, task, y), then a row of zeros) and
    its slopes dT/dx and dT/dphi (M K ``width``, G; not filled unless ``slopes``) (module
    docstring); rows with y above the cell's epochs are 0 (no term reads them)."""
    n_m, n_k = eta.shape
    n_g = b.shape[0]
    n_rows = n_m * n_k * width
    table = np.zeros((n_rows + 1, n_g))
    d_x = np.zeros((n_rows if slopes else 0, n_g))
    d_phi = np.zeros((n_rows if slopes else 0, n_g))
    log_phi = math.log(phi)
    big_p, big_sp = _phi_sums(phi, width)
    run_a, run_sa = np.zeros(width), np.zeros(width)
    run_c, run_sc = np.zeros(width), np.zeros(width)
    for m in range(n_m):
        for k in range(n_k):
            n = int(epochs[m, k])
            row0 = (m * n_k + k) * width
            for g in range(n_g):
                x = eta[m, k] - b[g]
                if x >= 0.0:
                    e = math.exp(-x)
                    p, q = 1.0 / (1.0 + e), e / (1.0 + e)
                    sp_neg, sp_pos = math.log1p(e), x + math.log1p(e)
                else:
                    e = math.exp(x)
                    p, q = e / (1.0 + e), 1.0 / (1.0 + e)
                    sp_neg, sp_pos = -x + math.log1p(e), math.log1p(e)
                a, c = p * phi, q * phi
                for j in range(1, n):                       # running sums to n - 1
                    run_a[j + 1] = run_a[j] + math.log(a + j)
                    run_c[j + 1] = run_c[j] + math.log(c + j)
                if slopes:
                    _reciprocal_sums(n, a, c, run_sa, run_sc)
                for y in range(n + 1):
                    z = n - y
                    v = run_a[y] + run_c[z] - big_p[n]
                    if y > 0:
                        v += log_phi - sp_neg
                    if z > 0:
                        v += log_phi - sp_pos
                    if n > 0:
                        v -= log_phi
                    table[row0 + y, g] = v
                    if slopes:
                        d_x[row0 + y, g], d_phi[row0 + y, g] = _slopes(
                            y, n, p, q, phi, run_sa, run_sc, big_sp)
    return table, d_x, d_phi


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def bb_tables(eta: np.ndarray, epochs: np.ndarray, phi: np.ndarray, b: np.ndarray,
              width: int) -> np.ndarray:  # pragma: no cover - compiled
    """:func:`bb_table_and_slopes`' table for each draw (draw, M K ``width`` + 1, G):
    ``eta`` (draw, M, K), ``phi`` (draw,), one set of nodes ``b`` (G,)."""
    n_draws = eta.shape[0]
    out = np.empty((n_draws, eta.shape[1] * eta.shape[2] * width + 1, b.shape[0]))
    for d in range(n_draws):
        out[d] = bb_table_and_slopes(eta[d], epochs, phi[d], b, width, False)[0]
    return out


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def bb_likelihoods_and_slopes(eta: np.ndarray, epochs: np.ndarray, phi: float,
                              b: np.ndarray, width: int) -> Any:  # pragma: no cover - compiled
    """exp(T) (as :func:`bb_table_and_slopes`' table, its last row ones) without a
    transcendental function per row and node, its slopes, and whether it applies: with
    r = e^-x = e^-eta e^b (per-cell and per-node exponentials; not when |eta| + |b| may
    reach ``PRODUCT_RANGE``), p = 1 / (1 + r), q = r p, and

        exp(T_y) = FA_y GC_{n-y},   FA_y = prod_{j < y} (a + j) / (phi + j),
        GC_z = prod_{j < z} (c + j) / prod_{y <= i < n} (phi + i)   (z = n - y),

    running products (FA_{y+1} = FA_y (a + y) / (phi + y), GC_{z+1} = GC_z (c + z) /
    (phi + n - z - 1)), every one a product of factors at most 1 and itself at most 1."""
    n_m, n_k = eta.shape
    n_g = b.shape[0]
    n_rows = n_m * n_k * width
    like = np.ones((n_rows + 1, n_g))
    d_x = np.zeros((n_rows, n_g))
    d_phi = np.zeros((n_rows, n_g))
    widest = (np.abs(eta).max() if eta.size else 0.0) + (np.abs(b).max() if n_g else 0.0)
    if not widest < PRODUCT_RANGE:
        return like, d_x, d_phi, False
    _, big_sp = _phi_sums(phi, width)
    inv = np.empty(width)
    for j in range(width):
        inv[j] = 1.0 / (phi + j)
    exp_b = np.empty(n_g)
    for g in range(n_g):
        exp_b[g] = math.exp(b[g])
    fa, gc = np.ones(width + 1), np.ones(width + 1)
    run_sa, run_sc = np.zeros(width), np.zeros(width)
    for m in range(n_m):
        for k in range(n_k):
            n = int(epochs[m, k])
            row0 = (m * n_k + k) * width
            scale = math.exp(-eta[m, k])
            for g in range(n_g):
                r = scale * exp_b[g]
                p = 1.0 / (1.0 + r)
                q = r * p
                a, c = p * phi, q * phi
                for j in range(n):
                    fa[j + 1] = fa[j] * (a + j) * inv[j]
                    gc[j + 1] = gc[j] * (c + j) * inv[n - j - 1]
                _reciprocal_sums(n, a, c, run_sa, run_sc)
                for y in range(n + 1):
                    like[row0 + y, g] = fa[y] * gc[n - y]
                    d_x[row0 + y, g], d_phi[row0 + y, g] = _slopes(y, n, p, q, phi, run_sa,
                                                                   run_sc, big_sp)
    return like, d_x, d_phi, True


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _block_top(values: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """The largest of ``values`` (G,) on each block of ``BLOCK`` nodes."""
    n_nodes = values.shape[0]
    out = np.empty((n_nodes + BLOCK - 1) // BLOCK)
    for k in range(out.shape[0]):
        m = values[k * BLOCK]
        for g in range(k * BLOCK + 1, min((k + 1) * BLOCK, n_nodes)):
            m = max(m, values[g])
        out[k] = m
    return out


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _products(t: int, g0: int, g1: int, flat: np.ndarray, width: int, start: np.ndarray,
              rows: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """out[g] = start[g] x the product of term t's rows of ``flat`` (the rows of ``width``
    values, flattened) for g in [g0, g1), four rows per pass (a quarter of the loads and
    stores of ``out``). The indices are unsigned: numba then adds no negative-index
    wraparound, and no view is sliced per row (as ``_ordinal_grid._evaluate``)."""
    n_entries, span = rows.shape[1], np.uint64(width)
    a, z = np.uint64(g0), np.uint64(g1)
    for g in range(a, z):
        out[g] = start[g]
    e = 0
    while e + 4 <= n_entries:
        o1, o2 = np.uint64(rows[t, e]) * span, np.uint64(rows[t, e + 1]) * span
        o3, o4 = np.uint64(rows[t, e + 2]) * span, np.uint64(rows[t, e + 3]) * span
        for g in range(a, z):
            out[g] *= (flat[o1 + g] * flat[o2 + g]) * (flat[o3 + g] * flat[o4 + g])
        e += 4
    if e + 2 <= n_entries:
        o1, o2 = np.uint64(rows[t, e]) * span, np.uint64(rows[t, e + 1]) * span
        for g in range(a, z):
            out[g] *= flat[o1 + g] * flat[o2 + g]
        e += 2
    for j in range(e, n_entries):
        o = np.uint64(rows[t, j]) * span
        for g in range(a, z):
            out[g] *= flat[o + g]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _product_window(t: int, flat: np.ndarray, scaled: np.ndarray, rows: np.ndarray,
                    hi: np.ndarray, base_top: np.ndarray, bound: np.ndarray, q: np.ndarray,
                    drop: float) -> tuple[int, int, float]:  # pragma: no cover - compiled
    """Term t's window [g0, g1) and its largest node value on the block of the largest
    bound (``_gridquad._term_window`` on likelihoods: bound_k = max scaled base x the
    product of its rows' block maxima ``hi`` (flattened); the blocks with bound_k at least
    ``drop`` (e^-window, computed once by the caller: an exponential per term cost 4% of the
    call) times that largest value); ``flat`` the likelihoods flattened, ``q`` scratch (G,)."""
    n_nodes, n_blocks = scaled.shape[0], bound.shape[0]
    _products(t, 0, n_blocks, hi, n_blocks, base_top, rows, bound)
    best = 0
    for k in range(1, n_blocks):
        if bound[k] > bound[best]:
            best = k
    b0, b1 = best * BLOCK, min((best + 1) * BLOCK, n_nodes)
    _products(t, b0, b1, flat, n_nodes, scaled, rows, q)
    top = 0.0
    for g in range(b0, b1):
        top = max(top, q[g])
    floor = top * drop
    first, last = best, best
    for k in range(n_blocks):
        if bound[k] >= floor:
            first, last = min(first, k), max(last, k)
    return first * BLOCK, min((last + 1) * BLOCK, n_nodes), top


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def product_loglik_and_grad(like: np.ndarray, base: np.ndarray, rows: np.ndarray,
                            weight: np.ndarray) -> Any:  # pragma: no cover - compiled
    """:func:`evaluq.item_model._gridquad.grid_loglik_and_grad` on likelihoods (every count
    1): a term multiplies its pair rows' likelihoods ``like`` (P, G), so it costs one
    logarithm, not one exponential per node of its window (module docstring). Returns
    (ok, total, d_paired, d_base), d_paired the gradient in the rows' logarithms; not ok
    (nothing else meaningful) when a term's largest node is below ``TINY`` or not finite:
    the caller then takes the log path."""
    n_pairs, n_nodes = like.shape
    n_terms, n_entries = rows.shape
    top_base = base.max()
    scaled = np.empty(n_nodes)
    for g in range(n_nodes):
        scaled[g] = math.exp(base[g] - top_base)
    base_top = _block_top(scaled)
    hi = np.empty((n_pairs, base_top.shape[0]))
    for i in range(n_pairs):
        hi[i] = _block_top(like[i])
    bound, q, hi_flat = np.empty(base_top.shape[0]), np.empty(n_nodes), hi.reshape(-1)
    d_paired, d_base = np.zeros((n_pairs, n_nodes)), np.zeros(n_nodes)
    flat, d_flat, span = like.reshape(-1), d_paired.reshape(-1), np.uint64(n_nodes)
    total, drop = 0.0, math.exp(-WINDOW)
    for t in range(n_terms):
        w = weight[t]
        if w == 0.0:
            continue
        g0, g1, top = _product_window(t, flat, scaled, rows, hi_flat, base_top, bound, q,
                                      drop)
        if not (top >= TINY and top < math.inf):
            return False, 0.0, d_paired, d_base
        _products(t, g0, g1, flat, n_nodes, scaled, rows, q)
        a, z = np.uint64(g0), np.uint64(g1)
        s = 0.0
        for g in range(a, z):
            s += q[g]
        total += w * (top_base + math.log(s))
        scale = w / s
        for g in range(a, z):
            q[g] *= scale
            d_base[g] += q[g]
        for e in range(n_entries):
            o = np.uint64(rows[t, e]) * span
            for g in range(a, z):
                d_flat[o + g] += q[g]
    return True, total, d_paired, d_base


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _unit_counts(counts: np.ndarray, weight: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether every count of every weighted term is 1 (the product path's layout: it
    multiplies every row of a term; padded terms, of weight 0, are skipped)."""
    for t in range(counts.shape[0]):
        if weight[t] != 0.0:
            for e in range(counts.shape[1]):
                if counts[t, e] != 1.0:
                    return False
    return True


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _carry_back(d_paired: np.ndarray, pairs: np.ndarray, d_x: np.ndarray, d_phi: np.ndarray,
                n_m: int, n_k: int, width: int) -> Any:  # pragma: no cover - compiled
    """(dL/d eta (M, K), dL/d phi, dL/d b (G,)) from the gradient in the pair rows
    ``d_paired`` (P, G) (module docstring): D[r] = the sum of ``d_paired`` over the pair
    rows holding table row r, then one pass over the table's rows with their slopes
    ``d_x`` / ``d_phi`` (M K ``width``, G), not one per pair row and side."""
    n_rows, n_g = d_x.shape
    big_d = np.zeros((n_rows + 1, n_g))              # the last: the zero row's (unused)
    for i in range(pairs.shape[0]):
        dp, one, two = d_paired[i], big_d[pairs[i, 0]], big_d[pairs[i, 1]]
        for g in range(n_g):
            one[g] += dp[g]
            two[g] += dp[g]
    d_eta, d_b = np.zeros((n_m, n_k)), np.zeros(n_g)
    grad_phi = 0.0
    for r in range(n_rows):
        dr, sx, sphi = big_d[r], d_x[r], d_phi[r]
        acc = 0.0
        for g in range(n_g):
            v = dr[g] * sx[g]
            acc += v
            d_b[g] -= v
            grad_phi += dr[g] * sphi[g]
        d_eta[(r // width) // n_k, (r // width) % n_k] += acc
    return d_eta, grad_phi, d_b


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def bb_grid_loglik_and_grad(eta: np.ndarray, epochs: np.ndarray, phi: np.ndarray,
                            b: np.ndarray, base: np.ndarray, pairs: np.ndarray,
                            rows: np.ndarray, counts: np.ndarray, weight: np.ndarray
                            ) -> Any:  # pragma: no cover - compiled
    """sum_t w_t L_t and its gradient in ``eta`` (M, K), ``phi`` (0-d), ``b`` and ``base``
    (G,); ``pairs`` (P, 2) rows of the table (its zero row is M K Y, Y the largest epoch
    count + 1), ``rows`` / ``counts`` / ``weight`` the terms' pair rows as in
    :func:`evaluq.item_model._gridquad.grid_loglik_and_grad`. The product path when every
    count of a weighted term is 1 and no term's largest node is below ``TINY``, else the
    log path."""
    n_m, n_k = eta.shape
    width = int(epochs.max()) + 1 if epochs.size else 1
    n_pairs, n_g = pairs.shape[0], b.shape[0]
    ok = False
    if _unit_counts(counts, weight):
        single, d_x, d_phi, ok = bb_likelihoods_and_slopes(eta, epochs, phi.item(), b, width)
    if ok:
        like = np.empty((n_pairs, n_g))
        for i in range(n_pairs):
            one, two, out = single[pairs[i, 0]], single[pairs[i, 1]], like[i]
            for g in range(n_g):
                out[g] = one[g] * two[g]
        ok, total, d_paired, d_base = product_loglik_and_grad(like, base, rows, weight)
    if not ok:
        table, d_x, d_phi = bb_table_and_slopes(eta, epochs, phi.item(), b, width)
        paired = np.empty((n_pairs, n_g))
        for i in range(n_pairs):
            one, two, out = table[pairs[i, 0]], table[pairs[i, 1]], paired[i]
            for g in range(n_g):
                out[g] = one[g] + two[g]
        total, d_paired, d_base = grid_loglik_and_grad(paired, base, rows, counts, weight,
                                                       WINDOW)
    d_eta, grad_phi, d_b = _carry_back(d_paired, pairs, d_x, d_phi, n_m, n_k, width)
    return total, d_eta, np.array(grad_phi), d_b, d_base


class BetaBinomialGridLoglik(FusedLoglik):
    """Outputs sum_t w_t L_t and its gradient in ``eta``, ``phi``, ``b`` and ``base``
    (module docstring); inputs ``eta`` (M, K), ``epochs`` (M, K), ``phi`` (), ``b`` (G,),
    ``base`` (G,), ``pairs`` (P, 2) int64, ``rows`` (T, E) int64, ``counts`` (T, E),
    ``weight`` (T,)."""

    NAMES = ("eta", "epochs", "phi", "b", "base", "pairs", "rows", "counts", "weight")
    NDIM = (2, 2, 0, 1, 1, 2, 2, 2, 1)
    INTS = ("pairs", "rows")
    DIFFERENTIABLE = (0, 2, 3, 4)

    def compute(self, *arrays: np.ndarray) -> tuple[Any, ...]:
        kernel: Any = bb_grid_loglik_and_grad     # numba's Dispatcher stub types nothing
        return tuple(kernel(*arrays))


bb_grid_op = BetaBinomialGridLoglik()


def bb_grid_loglik(eta: Any, epochs: Any, phi: Any, b: Any, base: Any, pairs: Any,
                   rows: Any, counts: Any, weight: Any) -> Any:
    """The PyTensor scalar sum_t w_t L_t (module docstring), fused with its gradient."""
    outputs: Any = bb_grid_op(eta, epochs, phi, b, base, pairs, rows, counts, weight)
    return outputs[0]


@register_funcify_default_op_cache_key(BetaBinomialGridLoglik)
def _numba_funcify(op: BetaBinomialGridLoglik, node: Apply, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def fused(eta: Any, epochs: Any, phi: Any, b: Any, base: Any, pairs: Any, rows: Any,
              counts: Any, weight: Any) -> Any:  # pragma: no cover - compiled
        total, d_eta, d_phi, d_b, d_base = bb_grid_loglik_and_grad(
            np.ascontiguousarray(eta), np.ascontiguousarray(epochs), np.asarray(phi),
            np.ascontiguousarray(b), np.ascontiguousarray(base),
            np.ascontiguousarray(pairs), np.ascontiguousarray(rows),
            np.ascontiguousarray(counts), np.ascontiguousarray(weight))
        return np.array(total), d_eta, d_phi, d_b, d_base

    return fused, SOURCE_HASH


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _product_cells(like: np.ndarray, scaled: np.ndarray, b: np.ndarray, rows: np.ndarray,
                   order: np.ndarray, start: np.ndarray, u: np.ndarray
                   ) -> Any:  # pragma: no cover - compiled
    """:func:`evaluq.item_model._gridquad.term_cells` on likelihoods (every count 1), as
    :func:`product_loglik_and_grad` is the grid kernel's: a term multiplies its rows over
    its window, no exponential per node, and draws its items' nodes (``order[start[t]:
    start[t + 1]]``) while its cumulative mass is at hand. Also returns, per draw, whether
    it applied (every term's largest node at least ``TINY``)."""
    n_draws, _, n_nodes = like.shape
    n_terms, n_entries = rows.shape
    cell = np.zeros((n_draws, order.shape[0]), dtype=np.int64)
    mean, var = np.zeros((n_draws, n_terms)), np.zeros((n_draws, n_terms))
    ok = np.ones(n_draws, dtype=np.bool_)
    f, q, drop = np.empty(n_nodes), np.empty(n_nodes), math.exp(-GRID_WINDOW)
    for d in range(n_draws):
        base_top = _block_top(scaled[d])
        hi = np.empty((like.shape[1], base_top.shape[0]))
        for i in range(like.shape[1]):
            hi[i] = _block_top(like[d, i])
        bound, flat, hi_flat = np.empty(base_top.shape[0]), like[d].reshape(-1), hi.reshape(-1)
        for t in range(n_terms):
            g0, g1, top = _product_window(t, flat, scaled[d], rows, hi_flat, base_top, bound, q,
                                          drop)   # term_cells' window (its fallback's)
            if not (top >= TINY and top < math.inf):
                ok[d] = False
                break
            n = g1 - g0
            for g in range(n):
                f[g] = scaled[d, g0 + g]
            for e in range(n_entries):
                row = like[d, rows[t, e], g0:g1]
                for g in range(n):
                    f[g] *= row[g]
            mean[d, t], var[d, t] = window_moments(f, n, b[g0:g1])
            for j in range(start[t], start[t + 1]):
                i = order[j]
                cell[d, i] = g0 + min(np.searchsorted(f[:n], u[d, i]), n - 1)
    return cell, mean, var, ok


def product_cells(table: np.ndarray, base: np.ndarray, b: np.ndarray, rows: np.ndarray,
                  item_term: np.ndarray, gen: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`evaluq.item_model._gridquad.term_cells` of the beta-binomial's terms (each
    count 1: ``rows`` (T, M) single rows of ``table`` (draw, R, G), the log table of
    :func:`bb_tables`) on likelihoods: one exponential per row and node of the table, not
    per node of every term's window (at 20 models x 10^4 items x 5 epochs, 9,589 terms
    of ~40 nodes against 481 rows of ~130). The same uniforms ``gen.random((draw,
    item))``, the draws split over two threads; a draw where a term's largest node falls
    below ``TINY`` takes the log path (``term_cells``) instead."""
    from evaluq.item_model._gridquad import items_by_term, over_threads, term_cells

    n_draws, n_items = table.shape[0], len(item_term)
    u = gen.random((n_draws, n_items))
    like = np.exp(np.ascontiguousarray(table, dtype=np.float64))
    shift = base.max(axis=1, keepdims=True)
    scaled = np.exp(base - shift)
    fixed = (np.ascontiguousarray(b, dtype=np.float64), np.ascontiguousarray(rows, np.int64),
             *items_by_term(item_term, len(rows)))
    cell = np.empty((n_draws, n_items), dtype=np.int64)
    mean, var = np.empty((n_draws, len(rows))), np.empty((n_draws, len(rows)))
    ok = np.empty(n_draws, dtype=bool)
    kernel: Any = _product_cells

    def run(part: slice) -> None:
        cell[part], mean[part], var[part], ok[part] = kernel(like[part], scaled[part], *fixed,
                                                             u[part])

    over_threads(run, n_draws)
    if not ok.all():
        cell[~ok], mean[~ok], var[~ok] = term_cells(table[~ok], base[~ok], b, rows,
                                                    np.ones(rows.shape), item_term, gen)
    return cell, mean, var

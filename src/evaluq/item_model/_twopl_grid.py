"""The marginal 2PL's log-density and gradient in one fused numba kernel (issue 34).

The 2PL with (u_i = log a_i, b_i) integrated out has, per distinct (task k, count vector y)
pattern p shared by w_p items,

    log p(y_p) = log int N(u; 0, s_u^2) exp(a S_p) T_k(a, Y_p) du,   a = e^u,
    S_p = sum_m y_pm eta_mk,   Y_p = sum_m y_pm,
    T_k(a, Y) = int N(b; 0, s^2) exp(-a b Y - sum_m n_mk softplus(a (eta_mk - b))) db,

(binomial constants excluded). The u-integral takes the trapezoid rule on the standardised
scale, u_g = s_u z_g over +-``U_HALF_WIDTH`` with weights w_g = h phi(z_g), its step at most
``u_step`` on the u scale (:func:`u_rule`: the nodes grow with s_u, since an item with many
responses has a u-integrand whose width does not grow with s_u; ``u_step`` is set from the
data's responses per item, ``_twopl.u_step``). Between changes of the node count the nodes
are fixed in z, so the gradient below is that of the rule's value; the b-integral
of every (task, total) term at a_g takes one grid per (u-node, task), b_j = lo + j h, with
the trapezoid rule (geometric convergence for these analytic, log-concave integrands, as
``_gridquad``'s shared grid):

    log T_k(a_g, Y) ~ log sum_j exp(log N(b_j; 0, s^2) + log h + R_gk[j] - a_g Y b_j),
    R_gk[j] = -sum_m n_mk softplus(a_g (eta_mk - b_j)).

The table R_gk depends on the task only, not on the term: the transcendental functions cost
(u-nodes x models x tasks x b-nodes of the block's middle, where some |a_g (eta_mk - b_j)|
<= ``LINEAR``; beyond it R_gk[j] is linear in b_j below the models and 0 above them, to
e^-37, and a node costs no loop over the models: at large a_g most of a grid that must reach
the prior's tails for the all-wrong and all-right terms), and a term costs additions and
the exponentials of its own window (the integrand is log-concave in b, so from its largest
node outwards it only falls; nodes below e^-``WINDOW`` of the largest are left out). The
spacing is
h = min(``SPACING`` / sqrt(``INFO_SAFETY`` I_gk), ``HZ`` s), with I_gk the largest Fisher
information about b the task's responses can carry at a_g (a_g^2 max_b' sum_m n_mk p(1 - p),
b' over the models' eta_mk), so the narrowest term integrand has at least 1 / ``SPACING``
nodes per SD (trapezoid error ~2 exp(-2 pi^2 / SPACING^2)); the grid spans +-``HALF_WIDTH``
s, widened to ``TAIL_SDS`` curvature SDs beyond the modes of the all-wrong and all-right
terms (Newton; every other term's mode lies between them). Nodes carry no gradient: the
rule's value does not depend on them (up to its error).

The gradient in eta (model, task), s and s_u is accumulated in the same call: with pi_pg the
pattern's share of node g and rho_tj a term's share of b-node j,

    d/d eta_mk = sum_p w_p y_pm sum_g pi_pg a_g - sum_g a_g n_mk sum_j Q_gk[j] p_mkgj,
    d/ds = sum_{g,t} W_gt sum_j rho_tj (b_j^2 / s^3 - 1 / s),
    d/ds_u = sum_g z_g a_g (sum_p w_p pi_pg S_p + sum_t W_gt sum_j rho_tj (-Y_t b_j)
             + sum_k sum_j Q_gk[j] dR_gk[j]/da),

W_gt = sum_{p in t} w_p pi_pg, Q_gk[j] = sum_{t in k} W_gt rho_tj, p_mkgj = expit(a_g (eta_mk
- b_j)). :class:`TwoPLGridLoglik` wraps it as a PyTensor Op (numba backend for nutpie, the
numba cache key salted by a hash of this file). ``tests/test_item_model_twopl_grid.py``
checks it against 2-D numerical integration, the former adaptive rule and finite differences.
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

from evaluq.item_model._fused_op import INT, FusedLoglik

SOURCE_HASH: Final = int(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12], 16)
"""Salts the numba cache key of the Op (any change of this file recompiles it)."""
FASTMATH: Final = {"reassoc", "contract", "arcp", "nsz"}
SPACING: Final = 1.0
"""Nodes per SD of the narrowest integrand: 1 / SPACING (as ``_gridquad.SPACING``)."""
INFO_SAFETY: Final = 1.2
"""The largest information is estimated at b = eta_mk; between two models it can be larger
(at most ~1.2x for two models close together): the estimate is scaled by this."""
HZ: Final = 0.5
"""Largest spacing in prior SDs."""
HALF_WIDTH: Final = 7.0
"""The b-grid spans at least +-HALF_WIDTH prior SDs."""
TAIL_SDS: Final = 8.0
"""... and this many curvature SDs beyond the modes of the extreme terms."""
MAX_NODES: Final = 2049
"""At most this many b-nodes per (u-node, task) (h widened beyond: only at implausibly large
a or small s, where the draw's log-density is far from the posterior)."""
WINDOW: Final = 36.0
"""A term's nodes more than this below its largest log-integrand are left out (e^-40)."""
NEWTON_STEPS: Final = 30
MAX_LOG_RATIO: Final = 600.0
"""Node-to-node steps of a term's log-integrand up to this many nats are walked by products
(:func:`_node_ratios`; exp(600) is far from a double's overflow)."""
LINEAR: Final = 37.0
"""Beyond |a (eta_m - b)| > LINEAR for every model, softplus is linear (or 0) and expit 1
(or 0) to e^-37 = 9e-17 (below a double's resolution of 1): the b-table's nodes there skip
the loop over the models (:func:`_middle`)."""
U_HALF_WIDTH: Final = 5.0
"""The u-rule spans +-U_HALF_WIDTH prior SDs of u = log a (prior mass 6e-7 beyond)."""
U_MAX_STEP: Final = 1.0
"""At most this many prior SDs between u-nodes (a wide integrand: trapezoid error ~e^-20)."""
MAX_U_NODES: Final = 257
"""At most this many u-nodes (the step widened beyond: only at implausibly large s_u)."""


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _extreme_mode(eta_k: np.ndarray, n_k: np.ndarray, a: float, s: float,
                  sign: float) -> tuple[float, float]:  # pragma: no cover - compiled
    """Mode and curvature SD in b of the all-wrong (``sign`` 1) or all-right (-1) term's
    log-integrand -b^2 / (2 s^2) - sum_m n_m softplus(sign a (eta_m - b)) (concave)."""
    b = 0.0
    d2 = -1.0 / (s * s)
    cap = s + 1.0 / a
    for _ in range(NEWTON_STEPS):
        d1 = -b / (s * s)
        d2 = -1.0 / (s * s)
        for m in range(eta_k.shape[0]):
            n = n_k[m]
            if n > 0.0:
                x = sign * a * (eta_k[m] - b)
                p = 1.0 / (1.0 + math.exp(-x)) if x >= 0.0 else (
                    math.exp(x) / (1.0 + math.exp(x)))
                d1 += sign * a * n * p
                d2 -= a * a * n * p * (1.0 - p)
        step = -d1 / d2
        step = min(max(step, -cap), cap)
        b += step
        if abs(step) < 1e-9 * cap:
            break
    return b, 1.0 / math.sqrt(-d2)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _grids(eta: np.ndarray, s: float, a: np.ndarray, epochs: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """lo, h, node count and flat offset of the b-grid of every (u-node, task)."""
    n_m, n_k = eta.shape
    n_g = a.shape[0]
    lo = np.empty((n_g, n_k))
    h = np.empty((n_g, n_k))
    count = np.empty((n_g, n_k), dtype=np.int64)
    off = np.empty((n_g, n_k), dtype=np.int64)
    total = 0
    for g in range(n_g):
        ag = a[g]
        for k in range(n_k):
            info = 0.0
            for mm in range(n_m):                   # the information at b = eta_mm,k
                if epochs[mm, k] <= 0.0:
                    continue
                acc = 0.0
                for m in range(n_m):
                    n = epochs[m, k]
                    if n > 0.0:
                        e = math.exp(-abs(ag * (eta[m, k] - eta[mm, k])))
                        acc += n * e / ((1.0 + e) * (1.0 + e))
                info = max(info, acc)
            info *= ag * ag * INFO_SAFETY
            hk = HZ * s
            if info > 0.0:
                hk = min(hk, SPACING / math.sqrt(info))
            lo_k, hi_k = -HALF_WIDTH * s, HALF_WIDTH * s
            mode, sd = _extreme_mode(eta[:, k], epochs[:, k], ag, s, 1.0)
            hi_k = max(hi_k, mode + TAIL_SDS * sd)
            mode, sd = _extreme_mode(eta[:, k], epochs[:, k], ag, s, -1.0)
            lo_k = min(lo_k, mode - TAIL_SDS * sd)
            span = hi_k - lo_k
            if not (math.isfinite(span) and math.isfinite(hk) and hk > 0.0):
                lo_k, hk, nodes = 0.0, 1.0, 1
            else:
                hk = max(hk, span / (MAX_NODES - 1))
                nodes = min(math.ceil(span / hk) + 1, MAX_NODES)
            lo[g, k], h[g, k], count[g, k], off[g, k] = lo_k, hk, nodes, total
            total += nodes
    return lo, h, count, off


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _tails(x0: float, step: float, nk: int, out: np.ndarray) -> int:  # pragma: no cover
    """``out[j]`` = exp(-|x0 - j step|) (``step`` > 0) by two geometric recurrences from the
    sign change outwards (one exponential each, no underflow on the way); returns the last j
    with x0 - j step >= 0 (-1: none)."""
    last = min(max(math.floor(x0 / step), -1), nk - 1) if math.isfinite(x0 / step) else (
        nk - 1 if x0 > 0 else -1)
    r = math.exp(-step)
    if last >= 0:
        e = math.exp(-(x0 - last * step))
        for j in range(last, -1, -1):
            out[j] = e
            e *= r
    if last + 1 < nk:
        e = math.exp(x0 - (last + 1) * step)
        for j in range(last + 1, nk):
            out[j] = e
            e *= r
    return int(last)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _middle(eta_k: np.ndarray, n_k: np.ndarray, ag: float, lo_k: float, hk: float,
            nk: int) -> tuple[int, int]:  # pragma: no cover - compiled
    """[j_lo, j_hi): the nodes of a (u-node, task) block where some model's logit x = a (eta_m
    - b_j) lies within +-``LINEAR`` (models with responses). Below j_lo every x > LINEAR, so
    softplus(x) = x and expit(x) = 1 to e^-LINEAR (R linear in b); from j_hi every x <
    -LINEAR, so both are 0: there a node costs no loop over the models."""
    emin, emax = math.inf, -math.inf
    for m in range(eta_k.shape[0]):
        if n_k[m] > 0.0:
            emin = min(emin, eta_k[m])
            emax = max(emax, eta_k[m])
    if not (emin <= emax and ag > 0.0 and hk > 0.0):
        return 0, nk
    j_lo = (emin - LINEAR / ag - lo_k) / hk
    j_hi = (emax + LINEAR / ag - lo_k) / hk
    lo_j = min(max(math.ceil(j_lo), 0), nk) if math.isfinite(j_lo) else 0
    hi_j = min(max(math.floor(j_hi) + 1, lo_j), nk) if math.isfinite(j_hi) else nk
    return int(lo_j), int(hi_j)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _task_table(eta_k: np.ndarray, n_k: np.ndarray, s: float, ag: float, lo_k: float,
                hk: float, fixed: np.ndarray, d_r: np.ndarray,
                prob: np.ndarray) -> None:  # pragma: no cover - compiled
    """One (u-node, task) block: ``fixed`` = log N(b_j; 0, s^2) + log h + R[j], ``d_r`` =
    dR[j] / da and ``prob`` (M, J) = expit(a (eta_m - b_j)), in place; ``prob`` is written
    only on the block's middle (:func:`_middle`; 1 below it, 0 above, where no reader looks).

    softplus(x) = max(x, 0) + log(1 + e^-|x|): the e^-|x| by :func:`_tails`, and the logs
    of one node summed as the log of a product (integer counts: (1 + e)^n by
    multiplication), so a node costs one logarithm, not one per model; outside the middle,
    R[j] = -a sum_m n_m (eta_m - b_j) (below) or 0 (above), with no loop over the models."""
    nk = fixed.shape[0]
    n_m = eta_k.shape[0]
    base = -math.log(s) - 0.5 * math.log(2.0 * math.pi) + math.log(hk)
    j_lo, j_hi = _middle(eta_k, n_k, ag, lo_k, hk, nk)
    sum_n, sum_ne = 0.0, 0.0
    for m in range(n_m):
        if n_k[m] > 0.0:
            sum_n += n_k[m]
            sum_ne += n_k[m] * eta_k[m]
    for j in range(j_lo):
        b = lo_k + j * hk
        dr = sum_ne - b * sum_n
        fixed[j] = -0.5 * (b / s) ** 2 + base - ag * dr
        d_r[j] = -dr
    for j in range(j_hi, nk):
        b = lo_k + j * hk
        fixed[j] = -0.5 * (b / s) ** 2 + base
        d_r[j] = 0.0
    if j_hi <= j_lo:
        return
    last = np.empty(n_m, dtype=np.int64)
    whole = np.empty(n_m, dtype=np.int64)
    lo_mid = lo_k + j_lo * hk
    for m in range(n_m):
        last[m] = j_lo + _tails(ag * (eta_k[m] - lo_mid), ag * hk, j_hi - j_lo,
                                prob[m, j_lo:j_hi])
        whole[m] = int(n_k[m]) if n_k[m] == math.floor(n_k[m]) and n_k[m] < 64 else -1
    for j in range(j_lo, j_hi):
        b = lo_k + j * hk
        lin, dr, prod, logs = 0.0, 0.0, 1.0, 0.0
        for m in range(n_m):
            n = n_k[m]
            e = prob[m, j]
            if n <= 0.0:
                prob[m, j] = 0.0
                continue
            diff = eta_k[m] - b
            one = 1.0 + e
            if j <= last[m]:
                pj = 1.0 / one
                lin += n * ag * diff
            else:
                pj = e / one
            prob[m, j] = pj
            dr += n * diff * pj
            if whole[m] >= 0:
                for _ in range(whole[m]):
                    prod *= one
                if prod > 1e250:
                    logs += math.log(prod)
                    prod = 1.0
            else:
                logs += n * math.log1p(e)
        fixed[j] = -0.5 * (b / s) ** 2 + base - lin - logs - math.log(prod)
        d_r[j] = -dr


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _node_ratios(fixed: np.ndarray, up: np.ndarray, down: np.ndarray
                 ) -> bool:  # pragma: no cover - compiled
    """``up[j]`` = exp(fixed[j] - fixed[j - 1]) and ``down[j]`` = 1 / up[j] (j >= 1), shared
    by every term of a block (:func:`_term_window` then walks its window by products, not
    one exponential per node and term); False (nothing usable) where a step exceeds
    ``MAX_LOG_RATIO`` nats or is not finite (only on grids widened to ``MAX_NODES``)."""
    for j in range(1, fixed.shape[0]):
        step = fixed[j] - fixed[j - 1]
        if not abs(step) <= MAX_LOG_RATIO:
            return False
        up[j] = math.exp(step)
        down[j] = 1.0 / up[j]
    return True


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _term_window(fixed: np.ndarray, slope: float, lo_k: float, hk: float, rho: np.ndarray,
                 up: np.ndarray, down: np.ndarray, ratios: bool
                 ) -> tuple[float, int, int]:  # pragma: no cover - compiled
    """log T of one term (its log-integrand f_j = ``fixed`` - ``slope`` b_j) and its window
    [j0, j1) of nodes within e^-``WINDOW`` of the largest, their shares in ``rho``. f is
    concave in j: its largest node by bisection, the window by walking outwards, each node's
    exp(f_j - f_max) the previous one's times exp(f_j - f_{j -+ 1}) (``up`` / ``down``
    times exp(-+ slope h): :func:`_node_ratios`), or with ``ratios`` False one exponential
    per node."""
    nk = fixed.shape[0]
    i0, i1 = 0, nk - 1
    while i0 < i1:
        mid = (i0 + i1) // 2
        if fixed[mid + 1] - fixed[mid] > slope * hk:
            i0 = mid + 1
        else:
            i1 = mid
    top = fixed[i0] - slope * (lo_k + i0 * hk)
    shift = slope * hk
    if ratios and abs(shift) <= MAX_LOG_RATIO:
        floor = math.exp(-WINDOW)
        r_up, r_down = math.exp(-shift), math.exp(shift)
        rho[i0] = 1.0
        acc, e, j1 = 1.0, 1.0, i0 + 1
        while j1 < nk:
            e *= up[j1] * r_up
            if not e > floor:
                break
            rho[j1] = e
            acc += e
            j1 += 1
        e, j0 = 1.0, i0
        while j0 > 0:
            e *= down[j0] * r_down
            if not e > floor:
                break
            j0 -= 1
            rho[j0] = e
            acc += e
    else:
        j0 = i0
        while j0 > 0 and fixed[j0 - 1] - slope * (lo_k + (j0 - 1) * hk) > top - WINDOW:
            j0 -= 1
        j1 = i0 + 1
        while j1 < nk and fixed[j1] - slope * (lo_k + j1 * hk) > top - WINDOW:
            j1 += 1
        acc = 0.0
        for j in range(j0, j1):
            e = math.exp(fixed[j] - slope * (lo_k + j * hk) - top)
            rho[j] = e
            acc += e
    inv = 1.0 / acc
    for j in range(j0, j1):
        rho[j] *= inv
    return top + math.log(acc), j0, j1


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _patterns(eta: np.ndarray, a: np.ndarray, log_t: np.ndarray, pat_counts: np.ndarray,
              pat_task: np.ndarray, pat_term: np.ndarray, pat_weight: np.ndarray,
              logw: np.ndarray, weight_gt: np.ndarray, d_a: np.ndarray,
              d_eta: np.ndarray) -> float:  # pragma: no cover - compiled
    """sum_p w_p log sum_g exp(log w_g + a_g S_p + log T[g, t_p]); accumulates W_gt
    (``weight_gt``), the pattern part of dL/da_g (``d_a``) and of dL/d eta (``d_eta``)."""
    n_m = eta.shape[0]
    n_g = a.shape[0]
    v = np.empty(n_g)
    total = 0.0
    for p in range(pat_weight.shape[0]):
        w = pat_weight[p]
        if w == 0.0:
            continue
        k, t = pat_task[p], pat_term[p]
        sp = 0.0
        for m in range(n_m):
            sp += pat_counts[p, m] * eta[m, k]
        top = -np.inf
        for g in range(n_g):
            v[g] = logw[g] + a[g] * sp + log_t[g, t]
            top = max(top, v[g])
        acc = 0.0
        for g in range(n_g):
            v[g] = math.exp(v[g] - top)
            acc += v[g]
        total += w * (top + math.log(acc))
        mean_a = 0.0
        for g in range(n_g):
            share = w * v[g] / acc
            weight_gt[g, t] += share
            d_a[g] += share * sp
            mean_a += share * a[g]
        for m in range(n_m):
            d_eta[m, k] += pat_counts[p, m] * mean_a
    return total


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _finite(eta: np.ndarray, s: float, su: float) -> bool:  # pragma: no cover - compiled
    ok = math.isfinite(s) and math.isfinite(su) and s > 0.0
    for value in eta.ravel():
        ok = ok and math.isfinite(value)
    return ok


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _term_layout(n_g: int, n_t: int) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Per (u-node, term): its window (j0, j1, and the offset o with its node weights at
    ``rho[o + j]``, j0 <= j < j1) and its log T (-inf until filled)."""
    return np.zeros((n_g, n_t, 3), dtype=np.int64), np.full((n_g, n_t), -np.inf)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _term_tables(eta: np.ndarray, s: float, a: np.ndarray, epochs: np.ndarray,
                 term_task: np.ndarray, term_total: np.ndarray, used: np.ndarray,
                 lo: np.ndarray, h: np.ndarray, count: np.ndarray, off: np.ndarray,
                 window: np.ndarray, log_t: np.ndarray, d_r: np.ndarray,
                 prob: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Every (u-node, task) block of the b-tables (``d_r``, ``prob`` at the block's offset)
    and, per used term, its log T and window (``log_t``, ``window``), in place; returns
    ``rho``, the terms' node shares, each window's stored alone (a buffer grown by doubling:
    the windows, not terms x grid nodes, which at large a_g ran to tens of megabytes per
    call). The sampler's kernel and the item draws share it."""
    n_k = eta.shape[1]
    rho = np.empty(max(16, 8 * count.sum()))
    size = 0
    for g in range(a.shape[0]):
        for k in range(n_k):
            o, nk = off[g, k], count[g, k]
            fixed, up, down, scratch = np.empty(nk), np.empty(nk), np.empty(nk), np.empty(nk)
            _task_table(eta[:, k], epochs[:, k], s, a[g], lo[g, k], h[g, k], fixed,
                        d_r[o:o + nk], prob[:, o:o + nk])
            ratios = _node_ratios(fixed, up, down)
            for t in range(term_task.shape[0]):
                if used[t] and term_task[t] == k:
                    log_t[g, t], j0, j1 = _term_window(
                        fixed, a[g] * term_total[t], lo[g, k], h[g, k], scratch, up, down,
                        ratios)
                    if size + j1 - j0 > rho.shape[0]:
                        grown = np.empty(2 * (size + j1 - j0))
                        grown[:size] = rho[:size]
                        rho = grown
                    rho[size:size + j1 - j0] = scratch[j0:j1]
                    window[g, t, 0], window[g, t, 1], window[g, t, 2] = j0, j1, size - j0
                    size += j1 - j0
    return rho


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def u_rule(su: float, u_step: float) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """The trapezoid rule over u = log a at ``su`` = sigma_logdisc: standardised nodes z_g
    (u_g = su z_g, an odd number spanning +-``U_HALF_WIDTH``) at most ``u_step`` apart on the
    u scale (and at most ``U_MAX_STEP`` on the z scale), and log weights log(h phi(z_g)).

    A fixed rule in z (as the former 10-node Gauss-Hermite rule) cannot resolve the narrow
    u-integrands of items with many responses when su is large (their width in z shrinks
    as 1 / su): the step is set on the u scale, so the number of nodes grows with su."""
    hz = U_MAX_STEP
    if su > 0.0 and u_step > 0.0 and math.isfinite(su) and math.isfinite(u_step):
        hz = min(hz, u_step / su)
    n = min(math.ceil(2.0 * U_HALF_WIDTH / hz) + 1, MAX_U_NODES)
    n += 1 - n % 2
    z = np.empty(n)
    logw = np.empty(n)
    h = 2.0 * U_HALF_WIDTH / (n - 1)
    for g in range(n):
        z[g] = -U_HALF_WIDTH + g * h
        logw[g] = -0.5 * z[g] * z[g] - 0.5 * math.log(2.0 * math.pi) + math.log(h)
    return z, logw


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def twopl_grid_loglik_and_grad(eta: np.ndarray, s: float, su: float, epochs: np.ndarray,
                               term_task: np.ndarray, term_total: np.ndarray,
                               pat_counts: np.ndarray, pat_task: np.ndarray,
                               pat_term: np.ndarray, pat_weight: np.ndarray,
                               u_step: float) -> Any:  # pragma: no cover - compiled
    """sum_p w_p log p(y_p) of the marginal 2PL (module docstring) and its gradient in
    ``eta`` (M, K), ``s`` and ``su``: returns (value, d_eta, d_s, d_su). ``term_task`` /
    ``term_total`` (T,): the (task, total) terms; ``pat_counts`` (P, M), ``pat_task``,
    ``pat_term``, ``pat_weight`` (P,) the patterns (weight 0: padding); ``u_step``: the
    largest step of the u-rule on the u scale (:func:`u_rule`)."""
    n_m, n_k = eta.shape
    n_t = term_task.shape[0]
    d_eta = np.zeros((n_m, n_k))
    if not _finite(eta, s, su):
        return math.nan, d_eta, 0.0, 0.0
    z, logw = u_rule(su, u_step)
    n_g = z.shape[0]
    a = np.exp(su * z)
    used = np.zeros(n_t, dtype=np.bool_)
    for p in range(pat_weight.shape[0]):
        if pat_weight[p] != 0.0:
            used[pat_term[p]] = True
    lo, h, count, off = _grids(eta, s, a, epochs)
    prob = np.empty((n_m, count.sum()))         # expit(a_g (eta_mk - b_j)), (g, k) blocks
    d_r = np.empty(count.sum())                  # dR_gk[j] / da
    window, log_t = _term_layout(n_g, n_t)
    rho = _term_tables(eta, s, a, epochs, term_task, term_total, used, lo, h, count, off,
                       window, log_t, d_r, prob)
    weight_gt, d_a = np.zeros((n_g, n_t)), np.zeros(n_g)
    total = _patterns(eta, a, log_t, pat_counts, pat_task, pat_term, pat_weight, logw,
                      weight_gt, d_a, d_eta)
    d_s = _back(eta, s, a, epochs, term_task, term_total, lo, h, count, off, window, rho, prob,
                d_r, weight_gt, d_a, d_eta)
    return total, d_eta, d_s, (z * a * d_a).sum()


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _back(eta: np.ndarray, s: float, a: np.ndarray, epochs: np.ndarray, term_task: np.ndarray,
          term_total: np.ndarray, lo: np.ndarray, h: np.ndarray, count: np.ndarray,
          off: np.ndarray, window: np.ndarray, rho: np.ndarray, prob: np.ndarray,
          d_r: np.ndarray, weight_gt: np.ndarray, d_a: np.ndarray,
          d_eta: np.ndarray) -> float:  # pragma: no cover - compiled
    """Back through the b-rule: accumulates dL/da_g (``d_a``) and dL/d eta (``d_eta``) and
    returns dL/ds."""
    n_m, n_k = epochs.shape
    d_s = 0.0
    q = np.zeros(prob.shape[1])
    for g in range(a.shape[0]):
        for t in range(term_task.shape[0]):
            wt = weight_gt[g, t]
            if wt == 0.0:
                continue
            k = term_task[t]
            o, ro = off[g, k], window[g, t, 2]
            acc_s, acc_a = 0.0, 0.0
            for j in range(window[g, t, 0], window[g, t, 1]):
                r = wt * rho[ro + j]
                b = lo[g, k] + j * h[g, k]
                q[o + j] += r
                acc_s += r * b * b
                acc_a -= r * b
            d_s += acc_s / (s * s * s) - wt / s
            d_a[g] += acc_a * term_total[t]
        for k in range(n_k):
            o = off[g, k]
            acc_a = 0.0
            for j in range(count[g, k]):
                acc_a += q[o + j] * d_r[o + j]
            d_a[g] += acc_a
            j_lo, j_hi = _middle(eta[:, k], epochs[:, k], a[g], lo[g, k], h[g, k],
                                 count[g, k])
            below = 0.0                          # expit = 1 below the middle, 0 above
            for j in range(j_lo):
                below += q[o + j]
            for m in range(n_m):
                if epochs[m, k] > 0.0:
                    acc = below
                    for j in range(j_lo, j_hi):
                        acc += q[o + j] * prob[m, o + j]
                    d_eta[m, k] -= epochs[m, k] * a[g] * acc
    return d_s


INPUTS: Final = ("eta", "sigma", "sigma_u", "epochs", "term_task", "term_total",
                 "pat_counts", "pat_task", "pat_term", "pat_weight", "u_step")
_NDIM: Final = (2, 0, 0, 2, 1, 1, 2, 1, 1, 1, 0)
_INT: Final = ("term_task", "pat_task", "pat_term")


def _call(*args: Any) -> tuple[float, np.ndarray, float, float]:
    arrays: list[Any] = [np.ascontiguousarray(x, dtype=INT if name in _INT else np.float64)
                         for name, x in zip(INPUTS, args, strict=True)]
    arrays[1], arrays[2] = float(np.asarray(args[1])), float(np.asarray(args[2]))
    arrays[10] = float(np.asarray(args[10]))
    kernel: Any = twopl_grid_loglik_and_grad   # numba's Dispatcher stub types no arguments
    return kernel(*arrays)


def numpy_loglik_and_grad(*args: Any) -> tuple[float, np.ndarray, float, float]:
    """The kernel on numpy inputs (in ``INPUTS`` order): (value, d_eta, d_s, d_su)."""
    return _call(*args)


class TwoPLGridLoglik(FusedLoglik):
    """Outputs the marginal 2PL's sum_p w_p log p(y_p) and its gradient in eta, s and s_u
    (module docstring); inputs in ``INPUTS`` order."""

    NAMES = INPUTS
    NDIM = _NDIM
    INTS = _INT
    DIFFERENTIABLE = (0, 1, 2)

    def compute(self, *arrays: np.ndarray) -> tuple[Any, ...]:
        return _call(*arrays)


twopl_grid_op = TwoPLGridLoglik()


def twopl_grid_loglik(*inputs: Any) -> Any:
    """The PyTensor scalar sum_p w_p log p(y_p), fused with its gradient (inputs in
    ``INPUTS`` order)."""
    outputs: Any = twopl_grid_op(*inputs)
    return outputs[0]


@register_funcify_default_op_cache_key(TwoPLGridLoglik)
def _numba_funcify(op: TwoPLGridLoglik, node: Apply, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def fused(eta: Any, s: Any, su: Any, epochs: Any, term_task: Any, term_total: Any,
              pat_counts: Any, pat_task: Any, pat_term: Any, pat_weight: Any,
              u_step: Any) -> Any:  # pragma: no cover - compiled
        total, d_eta, d_s, d_su = twopl_grid_loglik_and_grad(
            np.ascontiguousarray(eta), s.item(), su.item(), np.ascontiguousarray(epochs),
            np.ascontiguousarray(term_task), np.ascontiguousarray(term_total),
            np.ascontiguousarray(pat_counts), np.ascontiguousarray(pat_task),
            np.ascontiguousarray(pat_term), np.ascontiguousarray(pat_weight), u_step.item())
        return np.array(total), d_eta, np.array(d_s), np.array(d_su)

    return fused, SOURCE_HASH


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _pattern_cdf(eta: np.ndarray, a: np.ndarray, logw: np.ndarray, log_t: np.ndarray,
                 pat_counts: np.ndarray, pat_task: np.ndarray, pat_term: np.ndarray
                 ) -> np.ndarray:  # pragma: no cover - compiled
    """Each pattern's unnormalised cumulative weights over the u-nodes (pattern, node):
    w_g exp(a_g S_p + log T(a_g, Y_p)), scaled by the largest term."""
    n_m, n_p, n_g = eta.shape[0], pat_task.shape[0], a.shape[0]
    cdf = np.empty((n_p, n_g))
    for p in range(n_p):
        k, t = pat_task[p], pat_term[p]
        sp = 0.0
        for m in range(n_m):
            sp += pat_counts[p, m] * eta[m, k]
        top = -np.inf
        for g in range(n_g):
            cdf[p, g] = logw[g] + a[g] * sp + log_t[g, t]
            top = max(top, cdf[p, g])
        acc = 0.0
        for g in range(n_g):
            acc += math.exp(cdf[p, g] - top)
            cdf[p, g] = acc
    return cdf


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _draw_one(eta: np.ndarray, s: float, su: float, epochs: np.ndarray,
              term_task: np.ndarray, term_total: np.ndarray, pat_counts: np.ndarray,
              pat_task: np.ndarray, pat_term: np.ndarray, u_step: float,
              item_pattern: np.ndarray, uniform: np.ndarray, a_out: np.ndarray,
              b_out: np.ndarray) -> None:  # pragma: no cover - compiled
    """One draw's (a_i, b_i): u_i on the rule's nodes with probability prop. to w_g exp(a_g
    S_p + log T(a_g, Y_p)), then b_i on the b-grid of (that node, its task) with probability
    prop. to its term's integrand (b given a depends on the item only through its (task,
    total) term); ``uniform`` (I, 2)."""
    n_m = eta.shape[0]
    z, logw = u_rule(su, u_step)
    n_g, n_t, n_p = z.shape[0], term_task.shape[0], pat_task.shape[0]
    a = np.exp(su * z)
    used = np.zeros(n_t, dtype=np.bool_)
    for p in range(n_p):
        used[pat_term[p]] = True
    lo, h, count, off = _grids(eta, s, a, epochs)
    window, log_t = _term_layout(n_g, n_t)
    rho = _term_tables(eta, s, a, epochs, term_task, term_total, used, lo, h, count, off,
                       window, log_t, np.empty(count.sum()), np.empty((n_m, count.sum())))
    cdf = _pattern_cdf(eta, a, logw, log_t, pat_counts, pat_task, pat_term)
    for i in range(item_pattern.shape[0]):
        p = item_pattern[i]
        t, k = pat_term[p], pat_task[p]
        target = uniform[i, 0] * cdf[p, n_g - 1]
        g = 0
        while g < n_g - 1 and cdf[p, g] < target:
            g += 1
        j0, j1, ro = window[g, t, 0], window[g, t, 1], window[g, t, 2]
        target = uniform[i, 1]
        j = j0
        acc = rho[ro + j]
        while j < j1 - 1 and acc < target:
            j += 1
            acc += rho[ro + j]
        a_out[i] = a[g]
        b_out[i] = lo[g, k] + j * h[g, k]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def conditional_draws(eta: np.ndarray, s: np.ndarray, su: np.ndarray, epochs: np.ndarray,
                      term_task: np.ndarray, term_total: np.ndarray, pat_counts: np.ndarray,
                      pat_task: np.ndarray, pat_term: np.ndarray, u_step: float,
                      item_pattern: np.ndarray, uniform: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """(a_i, b_i) (draw, item) from their conditional given each draw's ``eta`` (D, M, K),
    ``s`` and ``su`` (D,), discretised on the sampler's u-rule at each draw's ``su``
    (:func:`u_rule`) and each (u-node, task)'s b-grid (:func:`_draw_one`); ``uniform``
    (D, I, 2)."""
    n_d, n_i = uniform.shape[0], uniform.shape[1]
    a_out, b_out = np.empty((n_d, n_i)), np.empty((n_d, n_i))
    for d in range(n_d):
        _draw_one(np.ascontiguousarray(eta[d]), s[d], su[d], epochs, term_task, term_total,
                  pat_counts, pat_task, pat_term, u_step, item_pattern, uniform[d],
                  a_out[d], b_out[d])
    return a_out, b_out


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def new_item_moments(eta: np.ndarray, sigma_item: np.ndarray, sigma_logdisc: np.ndarray,
                     ax: np.ndarray, aw: np.ndarray, bx: np.ndarray, bw: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """E[p] and E[p^2] (draw, cell) of p = expit(a (eta - b)) over a new item, u = log a =
    sqrt(2) sigma_logdisc x and b = sqrt(2) sigma_item y on the Gauss-Hermite nodes (x, y)
    with weights (``aw``, ``bw``, each summing to 1); ``eta`` (draw, cell)."""
    n_d, n_c = eta.shape
    m1, m2 = np.zeros((n_d, n_c)), np.zeros((n_d, n_c))
    root2 = math.sqrt(2.0)
    for d in range(n_d):
        for i in range(ax.shape[0]):
            a = math.exp(root2 * sigma_logdisc[d] * ax[i])
            for j in range(bx.shape[0]):
                b = root2 * sigma_item[d] * bx[j]
                w = aw[i] * bw[j]
                for c in range(n_c):
                    x = a * (eta[d, c] - b)
                    p = 1.0 / (1.0 + math.exp(-x)) if x >= 0.0 else (
                        math.exp(x) / (1.0 + math.exp(x)))
                    m1[d, c] += w * p
                    m2[d, c] += w * p * p
    return m1, m2

"""Item effects integrated out on one grid shared by every term, in a fused kernel.

A family whose item effect b enters every response of an item through x = eta_u - b (u a
unit: a (model, task) or (model, task, grader) cell) has, for each term t (a distinct
(task, response pattern) shared by w_t items),

    L_t = log int N(b; 0, s^2) exp(sum_e c_e log f(o_e | eta_{u_e} - b)) db,

with entries e = (unit u_e, outcome o_e, count c_e). On a grid b_g = g h (g = -H..H) the
trapezoid rule gives

    L_t ~ log sum_g exp(base_g + sum_e c_e table[r_e, g]),   base_g = log N(b_g; 0, s^2) + log h,

where table[r, g] = log f(o | eta_u - b_g) for the row r = (u, o). The table has one row per
(unit, outcome), not per term, so the transcendental functions are evaluated (units x
outcomes x nodes) times, not (terms x models x nodes); a term costs its entries' additions
and one exponential per node. For an integrand as smooth as this one (analytic in a strip,
nearly Gaussian) the trapezoid rule converges geometrically: for a Gaussian of SD w its
relative error is 2 exp(-2 pi^2 w^2 / h^2) (5e-9 at h = w, 2e-17 at h = w / 2). The
spacing is ``h = min(h_data, HZ s)`` with ``h_data`` the smallest SD an item's integrand can
have (:func:`data_spacing`, from the responses per item) times ``SPACING``, and the grid
spans +-``HALF_WIDTH`` s (the prior's mass beyond is below 3e-12; the integrand is at most the
prior times the likelihood's maximum, so no term has mass there either).

The nodes depend on s (their number, and h when s is small), but the rule's value does not
(up to its error). The families mark the nodes ``disconnected_grad``, as the adaptive rules
of ``_model`` and ``_betabinomial`` mark their centres, but PyMC and nutpie canonicalise the
log-density before differentiating, which removes the mark (``rewrite_pregrad``): the sampler's
gradient is the exact derivative of the rule's value, nodes moving, which is what keeps its
Hamiltonian consistent. :class:`GridLoglik` returns sum_t w_t L_t together with its
gradient in ``table`` (sum_t w_t c_e softmax_t(g) scattered onto the rows) and in ``base``
(sum_t w_t softmax_t(g)); PyTensor's own autodiff then carries them to eta, s and the
family's parameters through the small graphs that build ``table`` and ``base``.

Each term sums only its window of nodes. An integrand with many responses is narrow (at 100
responses per item its nodes within 36 nats of its largest are about 37 of 119), and the
beta-binomial integrand is not log-concave in b, so the window is not grown from a peak
until the edges fall: it comes from bounds. Per block of ``BLOCK`` nodes, bound_k = max base
+ sum_e c_e max(row r_e) (min where c_e < 0) over the block is at least the term's
log-integrand at every node of the block; with top the largest value on the block of the
largest bound, every block with bound_k >= top - ``WINDOW`` lies in the window (from the
first such block to the last), and each node left out holds less than e^-36 = 2e-16 of
the largest (at most 5e-13 relative over 2,049 nodes; :func:`grid_loglik_and_grad` takes
another window: the beta-binomial's is 27 nats, ``_bb_grid.WINDOW``). The value returned is
the windowed sum and the gradient is exactly its own (the windows are piecewise constant in
the parameters). On the beta-binomial's 9,663 terms at 20 models x 10^4 items x 5 epochs one
log-density and gradient went from 18.0 to 10.1 ms. It runs in
PyTensor's numba backend (nutpie; the numba cache key carries a hash of this file) and in
Python mode through the same compiled kernel. ``tests/test_item_model_gridquad.py`` checks
it against a numpy logsumexp, PyTensor's gradient of the same sum and a high-node reference.
"""

from __future__ import annotations

import hashlib
import math
import os
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.link.numba.dispatch import basic as numba_basic
from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

from evaluq.item_model._fused_op import FusedLoglik

SOURCE_HASH: Final = int(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12], 16)
"""Salts the numba cache key of the Op (any change of this file recompiles it)."""
FASTMATH: Final = {"reassoc", "contract", "arcp", "nsz"}
SPACING: Final = 0.9
"""h_data as a share of the narrowest integrand's SD (trapezoid error 2 exp(-2 pi^2 / 0.81)
= 5e-11 for a Gaussian of that SD; measured on ordinal integrands: 3e-9 per item)."""
HZ: Final = 0.5
"""Largest spacing in prior SDs (when s is small the prior is the narrowest factor)."""
HALF_WIDTH: Final = 7.0
"""The grid spans +-HALF_WIDTH prior SDs."""
MAX_NODES: Final = 2049
"""At most this many nodes (h is widened beyond: only at implausibly large s)."""
BLOCK: Final = 8
"""Nodes per block of a term's window (:func:`_term_window`)."""
WINDOW: Final = 36.0
"""A block whose bound lies more than this below a term's largest node is left out (each
of its nodes holds less than e^-36 = 2e-16 of the largest; as ``_ordinal_grid.WINDOW``)."""


def data_spacing(information: float) -> float:
    """h_data: ``SPACING`` / sqrt(``information``), with ``information`` the largest Fisher
    information about b one item's responses can carry (the sum over its responses of the
    largest information of one response: 1/4 for a binary one, 1/3 for an ordered
    logistic one)."""
    return SPACING / math.sqrt(max(information, 1e-12))


TAIL_SDS: Final = 8.0
"""With :func:`extreme_span`, the grid reaches this many curvature SDs beyond the modes of
the extreme terms."""


def grid_nodes(sigma: Any, h_data: Any, span: tuple[Any, Any] | None = None
               ) -> tuple[Any, Any]:
    """The nodes (PyTensor, a length that depends on s) and the spacing h: b_g = g h over
    +-``HALF_WIDTH`` s, or lo + g h over ``span`` = (lo, hi) (:func:`extreme_span`)."""
    if span is None:
        h = pt.maximum(pt.minimum(h_data, HZ * sigma),
                       2.0 * HALF_WIDTH * sigma / (MAX_NODES - 1))
        half = _node_count(HALF_WIDTH * sigma / h, (MAX_NODES - 1) // 2)
        return pt.arange(-half, half + 1).astype("float64") * h, h
    lo, hi = span
    h = pt.maximum(pt.minimum(h_data, HZ * sigma), (hi - lo) / (MAX_NODES - 1))
    n = _node_count((hi - lo) / h, MAX_NODES - 1) + 1
    return lo + h * pt.arange(n).astype("float64"), h


def _node_count(ratio: Any, most: int) -> Any:
    """ceil(ratio) as an int64 in [1, most]: a NaN or infinite ratio (a sampler trajectory
    through NaN or inf parameters, whose log-density is then NaN and rejected) gives 1, never
    the garbage integer of a NaN cast, which once asked for gigabytes of nodes."""
    ratio = pt.switch(pt.isfinite(ratio), ratio, 1.0)
    return pt.clip(pt.ceil(ratio), 1.0, float(most)).astype("int64")


def extreme_span(lib: Any, sigma: Any, mode: Any, sd: Any) -> tuple[Any, Any]:
    """(lo, hi): +-``HALF_WIDTH`` s, widened to ``TAIL_SDS`` curvature SDs beyond the
    ``mode``s (with their ``sd``s, over the last axis) of the extreme terms (an item every
    response of which is at the lowest, or the highest, outcome). With many responses per
    item and a small s such a term's mass sits in the prior's tail (at 4 models x 40 epochs
    and s = 0.69 the mode of the all-wrong item is 6.2 s out); every other term's mode lies
    between them. ``lib`` numpy: ``sigma`` (d,), ``mode`` / ``sd`` (d, term)."""
    lo = lib.minimum(-HALF_WIDTH * sigma, (mode - TAIL_SDS * sd).min(axis=-1))
    hi = lib.maximum(HALF_WIDTH * sigma, (mode + TAIL_SDS * sd).max(axis=-1))
    return lo, hi


def numpy_nodes(sigma: float, h_data: float) -> tuple[np.ndarray, float]:
    """:func:`grid_nodes` in numpy (one s, no span)."""
    h = max(min(h_data, HZ * sigma), 2.0 * HALF_WIDTH * sigma / (MAX_NODES - 1))
    half = int(np.ceil(HALF_WIDTH * sigma / h))
    return np.arange(-half, half + 1.0) * h, h


def prior_base(lib: Any, b: Any, sigma: Any, h: Any) -> Any:
    """base_g = log N(b_g; 0, s^2) + log h."""
    return -0.5 * (b / sigma) ** 2 - lib.log(sigma) - 0.5 * math.log(2 * math.pi) + lib.log(h)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _block_bounds(table: np.ndarray, base: np.ndarray
                  ) -> Any:  # pragma: no cover - compiled
    """The largest and smallest value of every row of ``table`` on each block of ``BLOCK``
    nodes (R, B), and the largest of ``base`` on each (B,)."""
    n_rows, n_nodes = table.shape
    n_blocks = (n_nodes + BLOCK - 1) // BLOCK
    hi = np.empty((n_rows, n_blocks))
    lo = np.empty((n_rows, n_blocks))
    top = np.empty(n_blocks)
    for k in range(n_blocks):
        g0, g1 = k * BLOCK, min((k + 1) * BLOCK, n_nodes)
        m = base[g0]
        for g in range(g0 + 1, g1):
            m = max(m, base[g])
        top[k] = m
        for r in range(n_rows):
            a = b = table[r, g0]
            for g in range(g0 + 1, g1):
                v = table[r, g]
                a, b = max(a, v), min(b, v)
            hi[r, k], lo[r, k] = a, b
    return hi, lo, top


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _term_window(t: int, table: np.ndarray, base: np.ndarray, rows: np.ndarray,
                 counts: np.ndarray, hi: np.ndarray, lo: np.ndarray, base_top: np.ndarray,
                 bound: np.ndarray, scratch: np.ndarray, window: float
                 ) -> tuple[int, int]:  # pragma: no cover - compiled
    """The nodes [g0, g1) of term t that can lie within ``window`` (``WINDOW`` but for
    the beta-binomial's) of its largest. ``bound`` [k] = max base + sum_e c_e (max, or min
    when c_e < 0, of row r_e) over block k is at least f_t at every node of the block; f_t's
    largest value on the block of the largest bound is top, and the window runs from the
    first to the last block with bound >= top - ``window`` (a block outside has every node
    below top - ``window``). A NaN bound is inside (the NaN reaches the value)."""
    n_nodes, n_blocks = base.shape[0], bound.shape[0]
    for k in range(n_blocks):
        bound[k] = base_top[k]
    for e in range(rows.shape[1]):
        c = counts[t, e]
        if c > 0.0:
            row = hi[rows[t, e]]
            for k in range(n_blocks):
                bound[k] += c * row[k]
        elif c < 0.0:
            row = lo[rows[t, e]]
            for k in range(n_blocks):
                bound[k] += c * row[k]
    best = 0
    for k in range(1, n_blocks):
        if bound[k] > bound[best]:
            best = k
    b0, b1 = best * BLOCK, min((best + 1) * BLOCK, n_nodes)
    v, start = scratch[:b1 - b0], base[b0:b1]
    for g in range(b1 - b0):
        v[g] = start[g]
    for e in range(rows.shape[1]):
        c = counts[t, e]
        if c != 0.0:
            row = table[rows[t, e], b0:b1]
            for g in range(b1 - b0):
                v[g] += c * row[g]
    top = v[0]
    for g in range(1, b1 - b0):
        top = max(top, v[g])
    first, last = best, best
    for k in range(n_blocks):
        if not bound[k] < top - window:
            first, last = min(first, k), max(last, k)
    return first * BLOCK, min((last + 1) * BLOCK, n_nodes)


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def grid_loglik_and_grad(table: np.ndarray, base: np.ndarray, rows: np.ndarray,
                         counts: np.ndarray, weight: np.ndarray, window: float = WINDOW
                         ) -> Any:  # pragma: no cover - compiled
    """sum_t w_t log sum_g exp(base_g + sum_e c_te table[r_te, g]) and its gradient in
    ``table`` (R, G) and ``base`` (G,); ``rows`` (T, E) int, ``counts`` (T, E) (0: padding),
    ``weight`` (T,) (0: a padded term). Each term sums its window only (:func:`_term_window`,
    the nodes within ``window`` nats of its largest; the module docstring); the gradient is
    that sum's. The loops run
    on views indexed from 0: a loop from a variable start does not vectorise (numba's
    negative-index wraparound is in the way), which made it 2.5x slower."""
    n_nodes = base.shape[0]
    n_terms, n_entries = rows.shape
    hi, lo, base_top = _block_bounds(table, base)
    bound, scratch = np.empty(base_top.shape[0]), np.empty(BLOCK)
    f = np.empty(n_nodes)
    d_table = np.zeros(table.shape)
    d_base = np.zeros(n_nodes)
    total = 0.0
    for t in range(n_terms):
        w = weight[t]
        if w == 0.0:
            continue
        g0, g1 = _term_window(t, table, base, rows, counts, hi, lo, base_top, bound, scratch,
                              window)
        q, start, d_q, n = f[g0:g1], base[g0:g1], d_base[g0:g1], g1 - g0
        for g in range(n):
            q[g] = start[g]
        for e in range(n_entries):
            c = counts[t, e]
            if c != 0.0:
                row = table[rows[t, e], g0:g1]
                for g in range(n):
                    q[g] += c * row[g]
        top = -np.inf
        for g in range(n):
            top = max(top, q[g])
        s = 0.0
        for g in range(n):
            q[g] = math.exp(q[g] - top)
            s += q[g]
        total += w * (top + math.log(s))
        scale = w / s
        for g in range(n):
            q[g] *= scale
            d_q[g] += q[g]
        for e in range(n_entries):
            c = counts[t, e]
            if c != 0.0:
                drow = d_table[rows[t, e], g0:g1]
                for g in range(n):
                    drow[g] += c * q[g]
    return total, d_table, d_base


def numpy_grid_loglik(table: np.ndarray, base: np.ndarray, rows: np.ndarray,
                      counts: np.ndarray) -> np.ndarray:
    """Each term's log sum_g exp(...) (T,) in plain numpy (the reference of the kernel)."""
    from scipy.special import logsumexp

    f = base + np.einsum("te,teg->tg", counts, table[rows])
    return logsumexp(f, axis=-1)


class GridLoglik(FusedLoglik):
    """Outputs sum_t w_t L_t and its gradient in ``table`` and ``base`` (module docstring);
    inputs ``table`` (R, G), ``base`` (G,), ``rows`` (T, E) int64, ``counts`` (T, E),
    ``weight`` (T,)."""

    NAMES = ("table", "base", "rows", "counts", "weight")
    NDIM = (2, 1, 2, 2, 1)
    INTS = ("rows",)
    DIFFERENTIABLE = (0, 1)

    def compute(self, *arrays: np.ndarray) -> tuple[Any, ...]:
        kernel: Any = grid_loglik_and_grad     # numba's Dispatcher stub types no arguments
        return tuple(kernel(*arrays))


grid_op = GridLoglik()


def grid_loglik(table: Any, base: Any, rows: Any, counts: Any, weight: Any) -> Any:
    """The PyTensor scalar sum_t w_t L_t (module docstring), fused with its gradient."""
    outputs: Any = grid_op(table, base, rows, counts, weight)
    return outputs[0]


@register_funcify_default_op_cache_key(GridLoglik)
def _numba_funcify(op: GridLoglik, node: Apply, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def fused(table: Any, base: Any, rows: Any, counts: Any,
              weight: Any) -> Any:  # pragma: no cover - compiled
        total, d_table, d_base = grid_loglik_and_grad(
            np.ascontiguousarray(table), np.ascontiguousarray(base),
            np.ascontiguousarray(rows), np.ascontiguousarray(counts),
            np.ascontiguousarray(weight))
        return np.array(total), d_table, d_base

    return fused, SOURCE_HASH


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def window_moments(f: np.ndarray, n: int, b: np.ndarray
                   ) -> tuple[float, float]:  # pragma: no cover - compiled
    """The mean and the variance (about the mean: no cancellation) of the nodes ``b[:n]``
    under a term's window of masses ``f[:n]``, which become their cumulative sums
    normalised to 1 (for the inverse CDF of its items' nodes)."""
    s = 0.0
    for g in range(n):
        s += f[g]
    m1 = 0.0
    for g in range(n):
        f[g] /= s
        m1 += f[g] * b[g]
    acc, m2 = 0.0, 0.0
    for g in range(n):
        m2 += f[g] * (b[g] - m1) ** 2
        acc += f[g]
        f[g] = acc
    return m1, m2


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _term_cells(table: np.ndarray, base: np.ndarray, b: np.ndarray, rows: np.ndarray,
                counts: np.ndarray, order: np.ndarray, start: np.ndarray, u: np.ndarray
                ) -> Any:  # pragma: no cover - compiled
    n_draws, _, n_nodes = table.shape
    n_terms, n_entries = rows.shape
    cell = np.empty((n_draws, order.shape[0]), dtype=np.int64)
    mean, var = np.zeros((n_draws, n_terms)), np.zeros((n_draws, n_terms))
    f = np.empty(n_nodes)
    for d in range(n_draws):
        hi, lo, base_top = _block_bounds(table[d], base[d])
        bound, scratch = np.empty(base_top.shape[0]), np.empty(BLOCK)
        for t in range(n_terms):
            g0, g1 = _term_window(t, table[d], base[d], rows, counts, hi, lo, base_top, bound,
                                  scratch, WINDOW)
            n = g1 - g0
            for g in range(n):
                f[g] = base[d, g0 + g]
            for e in range(n_entries):
                c = counts[t, e]
                if c != 0.0:
                    row = table[d, rows[t, e], g0:g1]
                    for g in range(n):
                        f[g] += c * row[g]
            top = -np.inf
            for g in range(n):
                top = max(top, f[g])
            for g in range(n):
                f[g] = math.exp(f[g] - top)
            mean[d, t], var[d, t] = window_moments(f, n, b[g0:g1])
            for j in range(start[t], start[t + 1]):         # its items, the masses at hand
                i = order[j]
                cell[d, i] = g0 + min(np.searchsorted(f[:n], u[d, i]), n - 1)
    return cell, mean, var


def items_by_term(item_term: np.ndarray, n_terms: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, start): the items sorted by term, term t's being ``order[start[t]:start[t +
    1]]`` (the cell kernels draw a term's items while its masses are at hand: at 20 models x
    10^4 items x 5 epochs, a (term, node) array of every cumulative mass was 10 MB, read
    back item by item)."""
    item_term = np.asarray(item_term, dtype=np.int64)
    order = np.argsort(item_term, kind="stable")
    return order, np.searchsorted(item_term[order], np.arange(n_terms + 1))


def term_cells(table: np.ndarray, base: np.ndarray, b: np.ndarray, rows: np.ndarray,
               counts: np.ndarray, item_term: np.ndarray, gen: np.random.Generator,
               workers: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each item's node drawn from its term's conditional mass, and each term's conditional
    mean and variance of b (about the mean: no cancellation), per draw: (cell (draw, item),
    mean (draw, term), var (draw, term)). A term's mass is exp(base_g + sum_e c_e
    table[r_e, g]) normalised over its window (:func:`_term_window`: each node outside holds
    less than e^-``WINDOW`` of the largest); an item's node is the first of its term's
    window whose cumulative mass reaches a uniform (inverse CDF by binary search; items of a
    term are independent given the draw). The uniforms ``gen.random((draw, item))`` are
    drawn first and the draws split over ``workers`` threads (default: two, or one on one
    core; the kernel releases the GIL), so the result does not depend on the threads.
    ``table`` (draw, R, G), ``base`` (draw, G), ``b`` (G,), ``rows`` / ``counts`` (T, E),
    ``item_term`` (I,)."""
    n_draws = table.shape[0]
    u = gen.random((n_draws, len(item_term)))
    kernel: Any = _term_cells
    table = np.ascontiguousarray(table, dtype=np.float64)
    base = np.ascontiguousarray(base, dtype=np.float64)
    fixed = (np.ascontiguousarray(b, dtype=np.float64),
             np.ascontiguousarray(rows, dtype=np.int64),
             np.ascontiguousarray(counts, dtype=np.float64),
             *items_by_term(item_term, len(rows)))
    cell = np.empty((n_draws, len(item_term)), dtype=np.int64)
    mean, var = np.empty((n_draws, len(rows))), np.empty((n_draws, len(rows)))

    def run(part: slice) -> None:
        cell[part], mean[part], var[part] = kernel(table[part], base[part], *fixed, u[part])

    over_threads(run, n_draws, workers)
    return cell, mean, var


def over_threads(run: Any, n_draws: int, workers: int | None = None) -> None:
    """``run(draws)`` on ``workers`` slices of ``n_draws`` draws, one thread each (default:
    two, or one on one core). For kernels that release the GIL, with every random number
    drawn before: the result then does not depend on the threads."""
    workers = workers or max(1, min(2, os.cpu_count() or 1))
    cuts = [slice(lo, hi) for lo, hi in pairwise(np.linspace(0, n_draws, workers + 1)
                                                  .astype(int)) if hi > lo]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(run, cuts))


def posterior_grid(sigma: np.ndarray, h_data: float,
                   span: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> tuple[np.ndarray, float]:
    """One grid for a chunk of draws (after sampling): spacing min(h_data, HZ min s), over
    +-HALF_WIDTH max s, or over the widest of the draws' ``span`` (:func:`extreme_span`)."""
    lo = -HALF_WIDTH * float(np.max(sigma)) if span is None else float(np.min(span[0]))
    hi = HALF_WIDTH * float(np.max(sigma)) if span is None else float(np.max(span[1]))
    h = max(min(h_data, HZ * float(np.min(sigma))), (hi - lo) / (MAX_NODES - 1))
    return lo + h * np.arange(np.ceil((hi - lo) / h) + 1.0), h

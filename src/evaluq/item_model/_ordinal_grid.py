"""The ordinal family's marginal log-density on the shared grid, each term on its own window
of nodes (issue 34).

With the item effect b integrated out, a (task, rating pattern) term t shared by w_t items has
(``_ordinal``, ``_gridquad``)

    L_t = log sum_g exp(f_t(g)),   f_t(g) = base_g + sum_e c_e C[r_e, g],
    C[(u, k), g] = sum_l n_kl T[u, l, g],   T[u, l, g] = log P(y = l | x = eta_u - b_g),

over the nodes b_g of ``_gridquad.grid_nodes`` (base_g = log N(b_g; 0, s^2) + log h), with u a
unit (model, task, grader), k a level-count vector (a row of ``combos``: how many of the
item's ratings from the unit fell on each level l) and the entries e = (u, k) of the term.
With a = kappa_l - x, b = kappa_{l-1} - x and s_c = softplus(x - kappa_c),

    T[u, l, g] = -s_l [l < K-1] - (kappa_{l-1} - x + s_{l-1}) [l > 0]
                 + log(1 - exp(kappa_{l-1} - kappa_l)) [0 < l < K-1]

(:func:`evaluq.item_model._ordinal.level_table`). Every f_t is concave in b (a Gaussian
log-density plus log-probabilities of a logistic latent variable falling in an interval, each
concave in b), so each term needs only the nodes within ``WINDOW`` nats of its largest: the
kernel evaluates f_t on a first guess (the previous term's window widened by ``GUESS_MARGIN``
nodes a side; ``_ordinal.ordinal_terms`` orders the terms by task and mean rating, so
neighbours have nearby integrands), extends the
range by ``EXTEND`` nodes on a side while its largest node is at that edge or the edge is
within ``WINDOW`` of it (a largest node inside the range is the largest of all; beyond an edge
more than ``WINDOW`` below it every node is lower still), and sums the window: each node left
out holds less than e^-``WINDOW`` of the largest, and they fall geometrically beyond (~4e-12
relative in all: below the trapezoid rule's own error at the narrowest integrand, 5e-11 at
``_gridquad.SPACING``). A term costs its entries' operations
over its window and guess (~20 and ~24 nodes at 10 x 1,000 x 3 with a 36-nat window; windows of
~16 nodes at 20 x 10^4 x 5 with 27), in ~1.05 passes over
its entries); the tables are filled for
every unit and every (unit, combo) row some term uses, each row once per call, not once per
term.

**Two paths, one value.** The *product path* works with likelihoods, not their logarithms:
the rows hold exp(C) = prod_l P(y = l | x)^n_kl, each P a product of factors free of
cancellation and of transcendental functions (:func:`_fill_products`), and a term's nodes are
exp(base_g - max base) times its rows' products, summed over the window with one logarithm
per term; every factor is at most 1. It applies when every count is 0 or 1 and every combo
count a whole number up to ``MAX_POWER`` (the ordinal terms' layout), |eta - b - kappa| stays
below ``PRODUCT_RANGE`` and every term's largest node is above ``TINY``; otherwise the whole
call takes the *log path* (T by softplus, f_t by sums, exp(f_t - top) over the window). At
10 x 1,000 x 3 the kernel went from 0.54 to 0.37 ms with it (and flat unsigned indexing, no
per-row views); the two agree to 1e-12 (``-k product_path``).

The value returned is that windowed sum, and the gradient is exact for it (the windows are
piecewise constant in the parameters): with q_t(g) = w_t softmax_t(g) on the window,
D[r, g] = sum_{t, e: r_e = r} c_e q_t(g) and G[u, l, g] = sum_k n_kl D[(u, k), g],

    dL/d base_g = sum_t q_t(g),
    dL/d eta_u = sum_{l, g} G[u, l, g] dT[u, l, g]/dx,
    dL/d b_g = -sum_{u, l} G[u, l, g] dT[u, l, g]/dx,
    dT/dx = -p_l [l < K-1] + (1 - p_{l-1}) [l > 0],   p_c = expit(x - kappa_c),
    dT/d kappa_l = p_l + 1 / expm1(kappa_l - kappa_{l-1}) [l > 0]     (l < K-1),
    dT/d kappa_{l-1} = -(1 - p_{l-1}) - 1 / expm1(kappa_l - kappa_{l-1}) [l < K-1]   (l > 0).

:class:`OrdinalGridLoglik` wraps it as a PyTensor Op (numba backend for nutpie, the numba cache
key salted by a hash of this file). ``tests/test_item_model_ordinal_grid.py`` checks it against
the full-grid sum (:func:`numpy_loglik`), ``scipy.integrate.quad``, PyTensor's autodiff of
the full-grid sum and finite differences.
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

SOURCE_HASH: Final = int(hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12], 16)
"""Salts the numba cache key of the Op (any change of this file recompiles it)."""
FASTMATH: Final = {"reassoc", "contract", "arcp", "nsz"}
WINDOW: Final = 27.0
"""A term's nodes more than this below its largest log-integrand are left out (e^-27 =
1.9e-12 each; beyond the window they fall at least geometrically, at spacings near a term's
SD by ~e^-7 per node, so ~4e-12 relative in all, below the trapezoid rule's own error bound
2 exp(-2 pi^2 / ``SPACING``^2) = 5e-11 at the narrowest integrand). At 36 (2e-16 each, as
``_twopl_grid.WINDOW``) a term's window held ~19 nodes at 20 x 10^4 x 5, at 27 ~16: the
log-density and gradient went from ~3.8 to ~3.3 ms there with the four-row passes of
:func:`_evaluate`."""
PRODUCT_RANGE: Final = 600.0
"""Below this bound on |eta - b - kappa| the level table's exponentials are products of
per-unit, per-cut and per-node ones (no overflow: e^600 < 1.8e308)."""
EXTEND: Final = 2
"""A term's evaluated range grows by this many nodes at a time (at 10 x 1,000 x 3, windows
of 22 nodes, terms ordered by mean rating: 25 nodes evaluated per term with 2, 28 with 4)."""
GUESS_MARGIN: Final = 2
"""A term's first guess is the previous term's window widened by this many nodes a side.
Each extension is another pass over the term's entries: at 10 x 1,000 x 3 (windows of ~20
nodes) the guess alone took 2.7 passes per term, 23.4 nodes evaluated; widened by 1, 1.4
passes and 22.7 nodes; by 2, 1.05 passes and 24.1 nodes (the terms' pass 0.22 -> 0.19 ms); by
3, 1.04 passes and 26.1 nodes."""
TINY: Final = 1e-250
"""The product path holds when every term's largest node (a likelihood times e^(base -
max base), so at most 1) is above this: a window's nodes are then above 1e-250 e^-27,
normal doubles, and so is every partial product (each factor is at most 1). Otherwise (a
term's log-likelihood below -575 nats: items with many hundreds of ratings) the call takes
the log path."""
MAX_POWER: Final = 64
"""The product path raises a level's probability to a combo's count by repeated products, up
to this count (a larger or fractional count takes the log path)."""


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _fill_unit(u: int, eta: np.ndarray, kappa: np.ndarray, b: np.ndarray, gap: np.ndarray,
               lt: np.ndarray, pp: np.ndarray, neg_exp_b: np.ndarray,
               soft: np.ndarray) -> None:  # pragma: no cover - compiled
    """T[u, :, g] (``lt``) and p_c = expit(x - kappa_c) (``pp``) on every node.

    With ``neg_exp_b`` = e^-b (its first entry NaN: arguments too wide for it), e^(x -
    kappa_c) = e^eta_u e^-kappa_c e^-b_g is a product, so a node and cut cost one logarithm
    (s_c = log1p of it) and no exponential; otherwise s_c = max(z, 0) + log1p(e^-|z|)."""
    n_cut, n_nodes = kappa.shape[0], b.shape[0]
    if math.isnan(neg_exp_b[0]):
        for c in range(n_cut):
            row, prob = soft[c], pp[u, c]
            for g in range(n_nodes):
                z = eta[u] - b[g] - kappa[c]
                e = math.exp(-abs(z))
                row[g] = max(z, 0.0) + math.log1p(e)
                prob[g] = 1.0 / (1.0 + e) if z >= 0.0 else e / (1.0 + e)
    else:
        for c in range(n_cut):
            scale, row, prob = math.exp(eta[u] - kappa[c]), soft[c], pp[u, c]
            for g in range(n_nodes):
                e = scale * neg_exp_b[g]
                row[g] = math.log1p(e)
                prob[g] = e / (1.0 + e)
    for c in range(n_cut + 1):         # T = -s_c [c < K-1] - (kappa_{c-1} - x + s_{c-1}) [c > 0]
        out = lt[u, c]
        for g in range(n_nodes):
            out[g] = 0.0
        if c < n_cut:
            row = soft[c]
            for g in range(n_nodes):
                out[g] -= row[g]
        if c > 0:
            row, shift = soft[c - 1], kappa[c - 1] - eta[u] - gap[c]
            for g in range(n_nodes):
                out[g] -= shift + b[g] + row[g]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _finite(v: np.ndarray) -> bool:  # pragma: no cover - compiled
    for i in range(v.shape[0]):  # noqa: SIM110 - a plain loop compiles in numba
        if not math.isfinite(v[i]):
            return False
    return True


def compact_rows(rows: np.ndarray, counts: np.ndarray, weight: np.ndarray,
                 n_pad: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(row_of, crows): the combined rows ``unit * C + combo`` some term uses (sorted,
    padded with -1 to ``n_pad``) and the terms' ``rows`` as indices into ``row_of`` (0 at
    entries with count 0 and at terms with weight 0). The kernels fill, zero and read only
    these rows; computed once with the data, not on every call (it was 7% of a call).

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.item_model._ordinal_grid import compact_rows
    >>> row_of, crows = compact_rows(np.array([[7, 3], [3, 9]]), np.array([[1.0, 1.0],
    ...                              [1.0, 0.0]]), np.ones(2), n_pad=4)
    >>> row_of.tolist(), crows.tolist()
    ([3, 7, -1, -1], [[1, 0], [0, 0]])
    """
    rows = np.asarray(rows, dtype=np.int64)
    used = (np.asarray(counts) != 0) & (np.asarray(weight)[:, None] != 0)
    row_of = np.unique(rows[used])
    crows = np.where(used, np.searchsorted(row_of, rows), 0).astype(np.int64)
    n_pad = len(row_of) if n_pad is None else n_pad
    if n_pad < len(row_of):
        raise ValueError(f"n_pad {n_pad} is below the {len(row_of)} rows the terms use")
    return np.r_[row_of, np.full(n_pad - len(row_of), -1, dtype=np.int64)], crows


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _layout(n_units: int, combos: np.ndarray, row_of: np.ndarray, counts: np.ndarray,
            weight: np.ndarray) -> Any:  # pragma: no cover - compiled
    """What the tables' rows are (``row_of``: :func:`compact_rows`): each combo's nonzero
    levels and their counts (``c_lev``, ``c_cnt``, ``c_nnz``), the units some row uses
    (``unit_used``), ``row_of`` without its padding (the tables hold no padding rows: a
    table padded to a power of two cost fresh pages on every call, 3x the kernel's time) and
    whether the product path applies (every count 0 or 1 and every combo count a whole
    number of at most ``MAX_POWER``)."""
    n_combos, n_levels = combos.shape
    c_lev = np.zeros((n_combos, n_levels), dtype=np.int64)
    c_cnt = np.zeros((n_combos, n_levels))
    c_nnz = np.zeros(n_combos, dtype=np.int64)
    whole = True
    for k in range(n_combos):
        for level in range(n_levels):
            n = combos[k, level]
            if n != 0.0:
                c_lev[k, c_nnz[k]], c_cnt[k, c_nnz[k]] = level, n
                c_nnz[k] += 1
                whole = whole and n == math.floor(n) and 0.0 < n <= MAX_POWER
    for t in range(counts.shape[0]):
        if weight[t] != 0.0:
            for e in range(counts.shape[1]):
                c = counts[t, e]
                whole = whole and (c == 0.0 or c == 1.0)
    unit_used = np.zeros(n_units, dtype=np.bool_)
    n_used = 0                           # the padding (-1) comes last: the tables omit it
    while n_used < row_of.shape[0] and row_of[n_used] >= 0:
        unit_used[row_of[n_used] // n_combos] = True
        n_used += 1
    return c_lev, c_cnt, c_nnz, row_of[:n_used], unit_used, whole


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _neg_exp_nodes(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray
                   ) -> np.ndarray:  # pragma: no cover - compiled
    """e^-b_g, or NaN first when |eta - b - kappa| may reach ``PRODUCT_RANGE`` (products of
    exponentials could overflow: the direct forms are used)."""
    n_nodes = b.shape[0]
    neg_exp_b = np.empty(n_nodes)
    widest = np.abs(eta).max() + np.abs(b).max() + np.abs(kappa).max() if n_nodes else 0.0
    for g in range(n_nodes):         # products of exponentials stay finite below e^600
        neg_exp_b[g] = math.exp(-b[g]) if widest < PRODUCT_RANGE else math.nan
    return neg_exp_b


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _fill_rows(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray, gap: np.ndarray,
               combos: np.ndarray, layout: Any) -> Any:  # pragma: no cover - compiled
    """The log tables the terms read: p of every unit some term uses (T is only read through
    C) and C of every (unit, combo) row some term uses, compacted (:func:`_layout`)."""
    c_lev, c_cnt, c_nnz, row_of, unit_used, _ = layout
    n_units, n_nodes = eta.shape[0], b.shape[0]
    n_combos, n_levels = combos.shape
    lt = np.empty((n_units, n_levels, n_nodes))
    pp = np.empty((n_units, n_levels, n_nodes))
    soft = np.empty((n_levels, n_nodes))
    neg_exp_b = _neg_exp_nodes(eta, kappa, b)
    for u in range(n_units):
        if unit_used[u]:
            _fill_unit(u, eta, kappa, b, gap, lt, pp, neg_exp_b, soft)
    comb = np.empty((row_of.shape[0], n_nodes))
    for i in range(row_of.shape[0]):
        u, k = row_of[i] // n_combos, row_of[i] % n_combos
        out = comb[i]
        for g in range(n_nodes):                   # a combo has at least one rating
            out[g] = 0.0
        for j in range(c_nnz[k]):                  # level by level: vectorised over nodes
            cnt, level = c_cnt[k, j], lt[u, c_lev[k, j]]
            for g in range(n_nodes):
                out[g] += cnt * level[g]
    return pp, comb


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _fill_products(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray, combos: np.ndarray,
                   layout: Any) -> Any:  # pragma: no cover - compiled
    """The product path's tables: p as :func:`_fill_rows`, each used combined row's
    likelihood exp(C) = prod_l P(y = l | x)^n_kl (``comb``, at most 1: a term's product
    underflows only where its log-likelihood is below log ``TINY``, and the call then takes
    the log path), and whether the path applies (``PRODUCT_RANGE``). P needs no
    transcendental function:
    with e_c = e^(x - kappa_c) = e^(eta_u - kappa_c) e^-b_g,

        P(0) = 1 / (1 + e_0),   P(K-1) = e_{K-2} / (1 + e_{K-2}),
        P(l) = 1 / (1 + e_l) * e_{l-1} / (1 + e_{l-1}) * (1 - e^(kappa_{l-1} - kappa_l)),

    each factor free of cancellation (the difference of two logistic CDFs is not)."""
    c_lev, c_cnt, c_nnz, row_of, unit_used, _ = layout
    n_units, n_cut, n_nodes = eta.shape[0], kappa.shape[0], b.shape[0]
    n_combos, n_levels = combos.shape
    pp = np.empty((n_units, n_levels, n_nodes))
    prob = np.empty((n_units, n_levels, n_nodes))
    comb = np.empty((row_of.shape[0], n_nodes))
    neg_exp_b = _neg_exp_nodes(eta, kappa, b)
    if n_nodes == 0 or math.isnan(neg_exp_b[0]):
        return pp, comb, False
    keep = np.ones(n_levels)
    for c in range(1, n_cut):
        keep[c] = -math.expm1(kappa[c - 1] - kappa[c])
    for u in range(n_units):
        if not unit_used[u]:
            continue
        for c in range(n_cut):
            scale, p_up, below = math.exp(eta[u] - kappa[c]), pp[u, c], prob[u, c]
            for g in range(n_nodes):
                e = scale * neg_exp_b[g]
                below[g] = 1.0 / (1.0 + e)
                p_up[g] = e * below[g]
        top_row, last = prob[u, n_cut], pp[u, n_cut - 1]
        for g in range(n_nodes):
            top_row[g] = last[g]
        for c in range(n_cut - 1, 0, -1):          # P(l) from P(y <= l) and p_{l-1}
            row, up, k = prob[u, c], pp[u, c - 1], keep[c]
            for g in range(n_nodes):
                row[g] *= up[g] * k
    for i in range(row_of.shape[0]):
        u, k = row_of[i] // n_combos, row_of[i] % n_combos
        out = comb[i]
        for g in range(n_nodes):
            out[g] = 1.0
        for j in range(c_nnz[k]):
            level = prob[u, c_lev[k, j]]
            for _ in range(int(c_cnt[k, j])):
                for g in range(n_nodes):
                    out[g] *= level[g]
    return pp, comb, True


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _term_rows(t: int, crows: np.ndarray, counts: np.ndarray, n_nodes: int, offs: np.ndarray,
               cs: np.ndarray) -> int:  # pragma: no cover - compiled
    """The number m of term t's entries with a nonzero count; their rows' offsets in the
    flattened table (``offs``, unsigned) and counts (``cs``) in the first m slots."""
    m = 0
    for e in range(crows.shape[1]):
        c = counts[t, e]
        if c != 0.0:
            offs[m], cs[m] = np.uint64(crows[t, e] * n_nodes), c
            m += 1
    return m


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _evaluate(g0: int, g1: int, f: np.ndarray, base: np.ndarray, flat: np.ndarray,
              offs: np.ndarray, cs: np.ndarray, m: int,
              product: bool) -> None:  # pragma: no cover - compiled
    """f_t(g) into ``f[g]`` for g in [g0, g1) (``product``: exp(f_t(g)) up to a constant,
    ``base`` and the table then likelihoods), row by row over the flattened table. The
    indices are unsigned: numba then adds no negative-index wraparound, which kept a loop
    from a variable start from vectorising (and slicing views per row cost reference
    counting: together 30% of the terms' time)."""
    a, z = np.uint64(g0), np.uint64(g1)
    for g in range(a, z):
        f[g] = base[g]
    i = 0
    while i + 4 <= m:              # four rows per pass: a quarter of the loads and stores of f
        o1, o2, o3, o4 = offs[i], offs[i + 1], offs[i + 2], offs[i + 3]
        if product:
            for g in range(a, z):
                f[g] *= (flat[o1 + g] * flat[o2 + g]) * (flat[o3 + g] * flat[o4 + g])
        else:
            c1, c2, c3, c4 = cs[i], cs[i + 1], cs[i + 2], cs[i + 3]
            for g in range(a, z):
                f[g] += (c1 * flat[o1 + g] + c2 * flat[o2 + g]) + (c3 * flat[o3 + g]
                                                                   + c4 * flat[o4 + g])
        i += 4
    for j in range(i, m):
        o = offs[j]
        if product:
            for g in range(a, z):
                f[g] *= flat[o + g]
        else:
            c = cs[j]
            for g in range(a, z):
                f[g] += c * flat[o + g]


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _largest(f: np.ndarray, g0: int, g1: int, p: int) -> int:  # pragma: no cover - compiled
    """The node of the largest f among p and [g0, g1) (p on a tie)."""
    for g in range(g0, g1):
        if f[g] > f[p]:
            p = g
    return p


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _window(g0: int, g1: int, f: np.ndarray, base: np.ndarray, flat: np.ndarray,
            offs: np.ndarray, cs: np.ndarray, m: int, product: bool
            ) -> tuple[int, int, int]:  # pragma: no cover - compiled
    """(peak, j0, j1): the term's (``offs``, ``cs``, ``m``: :func:`_term_rows`) largest
    node and its window [j0, j1] of nodes within ``WINDOW`` of it (``product``: within a
    factor e^-``WINDOW``), from a first guess [g0, g1) (the previous term's window widened by
    ``GUESS_MARGIN``):
    evaluated there, then extended by ``EXTEND`` nodes on a side while the largest evaluated
    node is at that edge, or the edge is within ``WINDOW`` of it (f_t is concave: a largest
    evaluated node inside the range is the largest of all, and beyond an edge more than
    ``WINDOW`` below it every node is lower still). A product guess that underflowed to 0
    everywhere is widened to every node."""
    n_nodes = base.shape[0]
    g0, g1 = max(min(g0, n_nodes - 1), 0), min(max(g1, g0 + 1), n_nodes)
    _evaluate(g0, g1, f, base, flat, offs, cs, m, product)
    p = _largest(f, g0, g1, g0)
    if product and not f[p] > 0.0:
        g0, g1 = 0, n_nodes
        _evaluate(g0, g1, f, base, flat, offs, cs, m, product)
        p = _largest(f, g0, g1, g0)
    drop = math.exp(-WINDOW)
    while True:
        low = f[p] * drop if product else f[p] - WINDOW
        left = g0 > 0 and (p == g0 or f[g0] > low)
        right = g1 < n_nodes and (p == g1 - 1 or f[g1 - 1] > low)
        if not (left or right):
            break
        if left:
            a = max(g0 - EXTEND, 0)
            _evaluate(a, g0, f, base, flat, offs, cs, m, product)
            p = _largest(f, a, g0, p)
            g0 = a
        if right:
            a = min(g1 + EXTEND, n_nodes)
            _evaluate(g1, a, f, base, flat, offs, cs, m, product)
            p = _largest(f, g1, a, p)
            g1 = a
    low = f[p] * drop if product else f[p] - WINDOW
    j0 = j1 = p
    while j0 > g0 and f[j0 - 1] > low:
        j0 -= 1
    while j1 < g1 - 1 and f[j1 + 1] > low:
        j1 += 1
    return p, j0, j1


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def ordinal_grid_loglik_and_grad(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray,
                                 base: np.ndarray, combos: np.ndarray, row_of: np.ndarray,
                                 rows: np.ndarray, counts: np.ndarray, weight: np.ndarray
                                 ) -> Any:  # pragma: no cover - compiled
    """sum_t w_t L_t on each term's window (module docstring) and its gradient: (value,
    d_eta (U,), d_kappa (K-1,), d_b (G,), d_base (G,)). ``eta`` (U,) the units' linear
    predictors without the item effect, ``kappa`` (K-1,) increasing, ``b`` / ``base`` (G,),
    ``combos`` (C, K) level counts, ``row_of`` (R,) and ``rows`` (T, E) (:func:`compact_rows`
    of the rows ``unit * C + combo``), ``counts`` (T, E) (0: padding), ``weight`` (T,) (0: a
    padded term). The product path runs when it can, else the log path (module docstring)."""
    n_units, n_cut, n_nodes = eta.shape[0], kappa.shape[0], b.shape[0]
    d_eta, d_kappa = np.zeros(n_units), np.zeros(n_cut)
    d_b, d_base = np.zeros(n_nodes), np.zeros(n_nodes)
    gap = np.zeros(n_cut + 1)
    ok = n_nodes > 0
    for c in range(1, n_cut):
        ok = ok and kappa[c] > kappa[c - 1]
        gap[c] = math.log(-math.expm1(kappa[c - 1] - kappa[c])) if ok else 0.0
    ok = ok and _finite(eta) and _finite(kappa) and _finite(b) and _finite(base)
    if not ok:
        return math.nan, d_eta, d_kappa, d_b, d_base
    layout = _layout(n_units, combos, row_of, counts, weight)
    done = False
    if layout[5]:                    # the product path, unless a likelihood is too small
        pp, comb, done = _fill_products(eta, kappa, b, combos, layout)
        if done:
            shift = base.max()
            scaled = np.empty(n_nodes)
            for g in range(n_nodes):
                scaled[g] = math.exp(base[g] - shift)
            total, d_comb, d_base, done = _terms(scaled, comb, rows, counts, weight, shift,
                                                 True)
    if not done:
        pp, comb = _fill_rows(eta, kappa, b, gap, combos, layout)
        total, d_comb, d_base, _ = _terms(base, comb, rows, counts, weight, 0.0, False)
    _back(kappa, layout, d_comb, pp, d_eta, d_kappa, d_b)
    return total, d_eta, d_kappa, d_b, d_base


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _terms(base: np.ndarray, comb: np.ndarray, crows: np.ndarray, counts: np.ndarray,
           weight: np.ndarray, shift: float, product: bool) -> Any:  # pragma: no cover - compiled
    """sum_t w_t L_t over each term's window and its gradient in C (compacted rows) and in
    base: (total, d_comb, d_base, done). The log path sums exp(f_t - top) over the window;
    the product path (``base`` e^(base - ``shift``), ``comb`` likelihoods) multiplies rows
    and needs one logarithm per term; it stops, not done, at a term whose largest node is not
    above ``TINY``. With q_t(g) = w_t softmax_t(g) on the window, d_base = sum_t q_t and
    d_comb[r] = sum of c_e q_t over the entries on row r."""
    n_terms, n_entries = crows.shape
    n_nodes = base.shape[0]
    flat = comb.ravel()
    d_flat, d_base = np.zeros(flat.shape[0]), np.zeros(n_nodes)
    f = np.empty(n_nodes)
    offs, cs = np.empty(n_entries, dtype=np.uint64), np.empty(n_entries)
    j0, j1 = n_nodes // 2 - EXTEND, n_nodes // 2 + EXTEND
    total = 0.0
    for t in range(n_terms):
        w = weight[t]
        if w == 0.0:
            continue
        m = _term_rows(t, crows, counts, n_nodes, offs, cs)
        g, j0, j1 = _window(j0 - GUESS_MARGIN, j1 + 1 + GUESS_MARGIN, f, base, flat, offs, cs,
                            m, product)
        top, a, z = f[g], np.uint64(j0), np.uint64(j1 + 1)
        s = 0.0
        if product:
            if not top > TINY:
                return math.nan, d_flat.reshape(comb.shape), d_base, False
            for j in range(a, z):
                s += f[j]
            total += w * (shift + math.log(s))
        else:
            for j in range(a, z):
                f[j] = math.exp(f[j] - top)
                s += f[j]
            total += w * (top + math.log(s))
        scale = w / s
        for j in range(a, z):
            f[j] *= scale
            d_base[j] += f[j]
        for i in range(m):
            o, c = offs[i], cs[i]
            for j in range(a, z):
                d_flat[o + j] += c * f[j]
    return total, d_flat.reshape(comb.shape), d_base, True


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _back(kappa: np.ndarray, layout: Any, d_comb: np.ndarray, pp: np.ndarray,
          d_eta: np.ndarray, d_kappa: np.ndarray,
          d_b: np.ndarray) -> None:  # pragma: no cover - compiled
    """From D[r, g] (``d_comb``, row k the combined row ``row_of[k]``) to G[u, l, g] to the
    gradients in eta, kappa and the nodes (module docstring).

    A sum over the nodes never shares its loop with a store to another array: LLVM then
    vectorises the loop behind a run-time check that the arrays do not overlap, and its
    scalar fallback adds in another order, so d_kappa and d_eta changed in the last bits
    with where the allocator had put ``dx`` and ``d_b`` (sampler draws then differed between
    runs with the same seed; ``tests/test_reproducibility.py -k ordinal_fit_same``)."""
    c_lev, c_cnt, c_nnz, row_of, unit_used, _ = layout
    n_units, n_cut, n_nodes = d_eta.shape[0], kappa.shape[0], d_b.shape[0]
    n_combos = c_nnz.shape[0]
    glt = np.zeros((n_units, n_cut + 1, n_nodes))
    for i in range(row_of.shape[0]):
        u, k = row_of[i] // n_combos, row_of[i] % n_combos
        source = d_comb[i]
        for j in range(c_nnz[k]):
            cnt, into = c_cnt[k, j], glt[u, c_lev[k, j]]
            for g in range(n_nodes):
                into[g] += cnt * source[g]
    inv = np.zeros(n_cut + 1)             # 1 / expm1(kappa_l - kappa_{l-1}), 0 < l < K-1
    for c in range(1, n_cut):
        inv[c] = 1.0 / math.expm1(kappa[c] - kappa[c - 1])
    dx = np.empty(n_nodes)
    for u in range(n_units):              # loops over the nodes (vectorised), level by level
        if not unit_used[u]:
            continue
        for g in range(n_nodes):
            dx[g] = 0.0
        for c in range(n_cut + 1):
            q = glt[u, c]
            if c < n_cut:              # each sum in a loop of its own (see the docstring)
                p, acc = pp[u, c], 0.0
                for g in range(n_nodes):
                    dx[g] -= q[g] * p[g]
                for g in range(n_nodes):
                    acc += q[g] * (p[g] + inv[c])
                d_kappa[c] += acc
            if c > 0:
                p, acc = pp[u, c - 1], 0.0
                for g in range(n_nodes):
                    dx[g] += q[g] * (1.0 - p[g])
                for g in range(n_nodes):
                    acc += q[g] * (1.0 - p[g] + inv[c])
                d_kappa[c - 1] -= acc
        acc = 0.0
        for g in range(n_nodes):
            d_b[g] -= dx[g]
        for g in range(n_nodes):
            acc += dx[g]
        d_eta[u] += acc


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _term_cells(base: np.ndarray, flat: np.ndarray, crows: np.ndarray, counts: np.ndarray,
                f: np.ndarray, mass: np.ndarray, order: np.ndarray, start: np.ndarray,
                u: np.ndarray, cell: np.ndarray, product: bool) -> bool:  # pragma: no cover
    """Each term's normalised cumulative mass on its window, by either path of
    :func:`_terms`, and at once the node of each of its items (``order[start[t]:start[t +
    1]]``: the first node whose cumulative mass reaches its uniform ``u``, into ``cell``);
    False (the product path then stops) at a term whose largest node is not above
    ``TINY``."""
    n_terms, n = crows.shape[0], base.shape[0]
    offs, cs = np.empty(crows.shape[1], dtype=np.uint64), np.empty(crows.shape[1])
    j0, j1 = n // 2 - EXTEND, n // 2 + EXTEND
    for t in range(n_terms):
        m = _term_rows(t, crows, counts, n, offs, cs)
        g, j0, j1 = _window(j0 - GUESS_MARGIN, j1 + 1 + GUESS_MARGIN, f, base, flat, offs, cs,
                            m, product)
        top, acc, width = f[g], 0.0, j1 + 1 - j0
        if product and not top > TINY:
            return False
        for j in range(width):
            acc += f[j0 + j] if product else math.exp(f[j0 + j] - top)
            mass[j] = acc
        for j in range(width):
            mass[j] /= acc
        for k in range(start[t], start[t + 1]):
            i = order[k]
            cell[i] = j0 + min(np.searchsorted(mass[:width], u[i]), width - 1)
    return True


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def conditional_cells(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray, n_nodes: np.ndarray,
                      base: np.ndarray, combos: np.ndarray, row_of: np.ndarray,
                      rows: np.ndarray, counts: np.ndarray, order: np.ndarray,
                      start: np.ndarray, u: np.ndarray) -> np.ndarray:  # pragma: no cover
    """The node of each item's effect drawn from its exact conditional on each draw's own
    grid (draw, item): per draw the tables and each term's window as in
    :func:`ordinal_grid_loglik_and_grad`, the term's normalised cumulative mass on its window
    (0 before it, 1 after it: each node outside holds less than e^-``WINDOW`` of the
    largest) and, per item of the term, the first node whose cumulative mass reaches its
    uniform ``u`` (a binary search, while the term's masses are at hand). ``eta`` (D, U),
    ``kappa`` (D, K-1), ``b`` / ``base`` (D, G) with the first ``n_nodes`` (D,) valid,
    ``order`` / ``start`` the items by term (``_gridquad.items_by_term``), ``u`` (D, I)."""
    n_draws, n_cut = kappa.shape
    n_terms, n_items = rows.shape[0], order.shape[0]
    out = np.empty((n_draws, n_items), dtype=np.int64)
    layout = _layout(eta.shape[1], combos, row_of, counts, np.ones(n_terms))
    for d in range(n_draws):
        n = n_nodes[d]
        gap = np.zeros(n_cut + 1)
        for c in range(1, n_cut):
            gap[c] = math.log(-math.expm1(kappa[d, c - 1] - kappa[d, c]))
        f, mass = np.empty(n), np.empty(n)
        done = False
        if layout[5]:                               # the product path, as the sampler's
            comb, done = _fill_products(eta[d], kappa[d], b[d, :n], combos, layout)[1:]
            if done:
                scaled = np.exp(base[d, :n] - base[d, :n].max())
                done = _term_cells(scaled, comb.ravel(), rows, counts, f, mass, order, start,
                                   u[d], out[d], True)
        if not done:
            flat = _fill_rows(eta[d], kappa[d], b[d, :n], gap, combos, layout)[1].ravel()
            _term_cells(base[d, :n], flat, rows, counts, f, mass, order, start, u[d], out[d],
                        False)
    return out


def numpy_loglik(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray, base: np.ndarray,
                 combos: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each term's full-grid log sum_g exp(f_t(g)) (T,) in plain numpy (the reference the
    windowed kernel is tested against; ``_ordinal.level_table``'s formula)."""
    from scipy.special import logsumexp

    return logsumexp(numpy_integrand(eta, kappa, b, base, combos, rows, counts), axis=-1)


def numpy_integrand(eta: np.ndarray, kappa: np.ndarray, b: np.ndarray, base: np.ndarray,
                    combos: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each term's log-integrand f_t(g) on every node (T, G) in plain numpy."""
    pad = np.full(1, 1e4)
    padded = np.concatenate([-pad, kappa, pad])
    x = eta[:, None, None] - b                                   # (U, 1, G)
    upper, lower = padded[1:, None], padded[:-1, None]           # (K, 1)
    table = (-np.logaddexp(0.0, x - upper) - np.logaddexp(0.0, lower - x)
             + np.log(-np.expm1(lower - upper)))                 # (U, K, G)
    comb = np.einsum("kl,ulg->ukg", combos, table).reshape(-1, len(b))
    return base + np.einsum("te,teg->tg", counts, comb[rows])


class OrdinalGridLoglik(FusedLoglik):
    """Outputs sum_t w_t L_t and its gradient in ``eta``, ``kappa``, ``b`` and ``base``
    (module docstring); inputs ``eta`` (U,), ``kappa`` (K-1,), ``b`` (G,), ``base`` (G,),
    ``combos`` (C, K), ``row_of`` (R,) int64, ``rows`` (T, E) int64 (:func:`compact_rows`),
    ``counts`` (T, E), ``weight`` (T,)."""

    NAMES = ("eta", "kappa", "b", "base", "combos", "row_of", "rows", "counts", "weight")
    NDIM = (1, 1, 1, 1, 2, 1, 2, 2, 1)
    INTS = ("row_of", "rows")
    DIFFERENTIABLE = (0, 1, 2, 3)

    def compute(self, *arrays: np.ndarray) -> tuple[Any, ...]:
        kernel: Any = ordinal_grid_loglik_and_grad   # numba's Dispatcher stub types nothing
        return tuple(kernel(*arrays))


ordinal_grid_op = OrdinalGridLoglik()


def ordinal_grid_loglik(eta: Any, kappa: Any, b: Any, base: Any, combos: Any, row_of: Any,
                        rows: Any, counts: Any, weight: Any) -> Any:
    """The PyTensor scalar sum_t w_t L_t (module docstring), fused with its gradient."""
    outputs: Any = ordinal_grid_op(eta, kappa, b, base, combos, row_of, rows, counts, weight)
    return outputs[0]


@register_funcify_default_op_cache_key(OrdinalGridLoglik)
def _numba_funcify(op: OrdinalGridLoglik, node: Apply, **kwargs: Any) -> Any:
    @numba_basic.numba_njit
    def fused(eta: Any, kappa: Any, b: Any, base: Any, combos: Any, row_of: Any, rows: Any,
              counts: Any, weight: Any) -> Any:  # pragma: no cover - compiled
        total, d_eta, d_kappa, d_b, d_base = ordinal_grid_loglik_and_grad(
            np.ascontiguousarray(eta), np.ascontiguousarray(kappa), np.ascontiguousarray(b),
            np.ascontiguousarray(base), np.ascontiguousarray(combos),
            np.ascontiguousarray(row_of), np.ascontiguousarray(rows),
            np.ascontiguousarray(counts),
            np.ascontiguousarray(weight))
        return np.array(total), d_eta, d_kappa, d_b, d_base

    return fused, SOURCE_HASH

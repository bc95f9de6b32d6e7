"""The one-dimensional quadrature behind ``expected_jsd``: ``E[m log m]`` over a Beta marginal,
by the trapezoidal rule in logit space sized per (item, class); and the lookup-table special
functions shared by the closed forms."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_CHUNK = 2**16  # node evaluations per block of the quadrature kernel (tuned by the benchmark)

_GRID_MAX = 2**21  # largest value served from a lookup table by _special


def _special(func: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``func(x)`` for a scipy special function, via a lookup table when ``x`` lies on the
    half-integer grid (integer counts with alpha = 1, 0.5, 2, ...; the common case): the table
    holds ``func`` itself evaluated at the grid points, so the values are identical."""
    x = np.asarray(x, dtype=np.float64)
    if x.size < 4096:
        return func(x)
    doubled = 2.0 * x
    top = float(doubled.max()) if x.size else 0.0
    if top > _GRID_MAX or not np.array_equal(doubled, np.floor(doubled)) or doubled.min() < 1:
        return func(x)
    table = func(np.arange(int(top) + 1, dtype=np.float64) / 2.0)
    return table[doubled.astype(np.intp)]


_TAIL_DROP = 34.0  # log-density drop at the ends of the quadrature range (e^-34 ~ 2e-15)
_MAX_STEP = 0.3  # largest trapezoid step in logit space (the strip-analyticity limit)
_SIGMA_STEP = 0.5  # largest step in units of the logit density's width 1/sqrt(kappa)
_MIN_NODES = 16
_MAX_NODES = 8192
_NEWTON_TOL = 1e-12


def _softplus_expit(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``log(1 + e^t)`` and ``expit(t)`` from one exponential, ``e = exp(-|t|)`` (no overflow
    for any ``t``; ``np.logaddexp`` and ``expit`` would take one each)."""
    e = np.exp(-np.abs(t))
    r = 1.0 + e
    softplus = np.log1p(e)
    softplus += np.maximum(t, 0.0)
    np.divide(1.0, r, out=r)
    x = e * r
    np.copyto(x, r, where=t >= 0.0)
    return softplus, x


def _logit_range(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ends of the logit range where the log-density of ``Beta(a, b)`` is within
    ``_TAIL_DROP`` of its mode (Newton's method on the convex drop, from below the root, so
    the iterates increase monotonically; a marginal stops once its step is below
    ``_NEWTON_TOL``, and only the marginals still moving are iterated)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a0 = a + b
    mode = np.log(a) - np.log(b)
    peak = _logit_logdens(mode, a, a0)
    kappa = a * b / a0
    ends = []
    for sign in (-1.0, 1.0):
        d = np.sqrt(2.0 * _TAIL_DROP / kappa)  # at or below the root: drop(d) <= kappa d^2 / 2
        active = np.arange(d.size)
        aa, bb, mm, pp, dd = a, a0, mode, peak, d.copy()
        for _ in range(60):
            t = mm + sign * dd
            softplus, x = _softplus_expit(t)
            drop = pp - (aa * t - bb * softplus)
            slope = sign * (bb * x - aa)  # d(drop)/dd > 0
            step = (drop - _TAIL_DROP) / slope
            dd = dd - step
            d[active] = dd
            moving = np.abs(step) > _NEWTON_TOL * (1.0 + dd)
            if not moving.any():
                break
            if moving.sum() < 0.5 * moving.size:  # iterate only the marginals still moving
                active = active[moving]
                aa, bb, mm, pp, dd = aa[moving], bb[moving], mm[moving], pp[moving], dd[moving]
        ends.append(mode + sign * d)
    return ends[0], ends[1]


def _logit_logdens(t: np.ndarray, a: np.ndarray, a0: np.ndarray) -> np.ndarray:
    """Log-density of ``logit(X)``, ``X ~ Beta(a, a0 - a)``, up to a constant."""
    return a * t - a0 * np.logaddexp(0.0, t)


def _n_nodes(a: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
             n_min: int = _MIN_NODES) -> np.ndarray:
    """Trapezoid nodes per marginal: step at most ``_MAX_STEP`` and ``_SIGMA_STEP / sqrt(kappa)``
    (``kappa = ab/(a+b)``, the curvature of the logit log-density at its mode), at least
    ``n_min``, at most ``_MAX_NODES``; rounded up to a ladder of sizes (steps of about 12 %) so
    that marginals group into few blocks of equal size."""
    kappa = a * b / (a + b)
    step = np.minimum(_MAX_STEP, _SIGMA_STEP / np.sqrt(kappa))
    n = np.ceil((hi - lo) / step) + 1.0
    n = np.clip(n, n_min, _MAX_NODES)
    ladder = np.unique(np.concatenate([
        np.arange(16, 64, 4), np.round(64 * 1.125 ** np.arange(40)), [_MAX_NODES]]))
    ladder = ladder[ladder <= _MAX_NODES]
    n = ladder[np.searchsorted(ladder, n)]
    return n.astype(np.intp)


def _logit_beta_nodes(a: np.ndarray, b: np.ndarray, n_nodes: int,
                      lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``x`` and normalised weights ``w`` (shape ``a.shape + (n_nodes,)``) for ``E f(X)``.

    ``X ~ Beta(a, b)``. In ``t = logit(x)`` the density ``exp(a t) / (1 + e^t)^(a+b)`` is
    smooth, unimodal, log-concave and decays exponentially on both sides for every ``a, b > 0``
    (no endpoint singularity, even for ``a < 1``), and analytic in the strip ``|Im t| < pi``.
    The trapezoidal rule on such integrands converges exponentially in ``1/h`` (step ``h``),
    so equally spaced nodes on ``[lo, hi]`` (where the log-density is within ``_TAIL_DROP`` of
    its mode) are accurate to ~1e-13 for bounded ``f`` analytic in that strip (``m log m``
    with ``m = (x + q)/2`` is) once the step resolves both the strip (``h <= 0.3``) and the
    density's width (``h <= 0.5 / sqrt(kappa)``, for concentrated marginals).
    """
    x, w = _unnormalised_nodes(a, b, n_nodes, lo, hi)
    w /= w.sum(axis=-1, keepdims=True)
    return x, w


def _unnormalised_nodes(a: np.ndarray, b: np.ndarray, n_nodes: int,
                        lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``x`` and trapezoid weights proportional to the density (largest 1), one
    exponential, one ``log1p`` and one ``exp`` per node."""
    grid = np.linspace(0.0, 1.0, n_nodes)
    t = (hi - lo)[..., None] * grid
    t += lo[..., None]
    softplus, x = _softplus_expit(t)
    softplus *= -(a + b)[..., None]
    t *= a[..., None]
    logw = np.add(t, softplus, out=t)  # a t - (a + b) log(1 + e^t)
    logw -= logw.max(axis=-1, keepdims=True)
    w = np.exp(logw, out=logw)
    w[..., 0] *= 0.5
    w[..., -1] *= 0.5
    return x, w


_DENSE_CODES = 2**24  # largest (a, b) grid counted densely by _unique_pairs


def _grid_codes(x: np.ndarray) -> np.ndarray | None:
    """``2x - min(2x)`` as integers when ``x`` lies on the half-integer grid, else None."""
    doubled = 2.0 * x
    if not x.size or not np.array_equal(doubled, np.floor(doubled)):
        return None
    low = doubled.min()
    if doubled.max() - low >= _DENSE_CODES:
        return None
    return (doubled - low).astype(np.int64)


def _unique_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``(a, b)`` marginals and, per cell, the index of its marginal (integer
    counts repeat a few hundred pairs over millions of cells: nodes are built once per pair).

    Integer or half-integer ``a`` and ``b`` (integer counts with a prior of 1, 0.5, 2, ...)
    are counted on their grid without sorting; other values are sorted (two float sorts and
    one integer sort, faster than sorting complex keys). Marginals come in increasing
    ``(a, b)`` order either way.
    """
    code_a, code_b = _grid_codes(a), _grid_codes(b)
    if code_a is not None and code_b is not None:
        width = int(code_b.max()) + 1
        if (int(code_a.max()) + 1) * width <= _DENSE_CODES:
            key = code_a * width + code_b
            present = np.bincount(key, minlength=(int(code_a.max()) + 1) * width) > 0
            ukey = np.flatnonzero(present)
            lookup = np.cumsum(present) - 1
            first_a, first_b = a[np.argmin(code_a)], b[np.argmin(code_b)]
            return (first_a + (ukey // width) / 2.0, first_b + (ukey % width) / 2.0,
                    lookup[key])
    ua, inv_a = np.unique(a, return_inverse=True)
    ub, inv_b = np.unique(b, return_inverse=True)
    key = inv_a.reshape(-1).astype(np.int64) * ub.size + inv_b.reshape(-1)
    ukey, inverse = np.unique(key, return_inverse=True)
    return ua[ukey // ub.size], ub[ukey % ub.size], inverse.reshape(-1)


def _m_log_m(m: np.ndarray) -> np.ndarray:
    """``m log m`` for ``m >= 0`` (0 at 0), in place of ``m``; ``np.log`` is several times
    faster than ``scipy.special.xlogy`` on large arrays."""
    logm = np.log(np.maximum(m, np.finfo(np.float64).tiny))
    m *= logm
    return m


def _mostly_distinct(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether most cells carry their own marginal (continuous concentrations: weighted or
    soft counts), judged on an evenly spaced sample of 4096 cells; then looking up the
    distinct marginals (a sort of every cell) would save no node construction."""
    if a.size < 8 * _SAMPLE:
        return False
    pick = np.linspace(0, a.size - 1, _SAMPLE).astype(np.intp)
    pairs = np.unique(np.stack([a[pick], b[pick]], axis=1), axis=0)
    return pairs.shape[0] > _SAMPLE // 2


_SAMPLE = 4096


def _expected_m_log_m(a: np.ndarray, b: np.ndarray, q: np.ndarray,
                      n_nodes: int | None = None) -> np.ndarray:
    """``E[m log m]`` with ``m = (X + q)/2``, ``X ~ Beta(a, b)``, elementwise.

    The rule is sized per marginal (:func:`_n_nodes`; ``n_nodes`` raises the minimum). When
    cells share marginals (integer counts: a few hundred marginals over millions of cells),
    nodes and weights are built once per distinct ``(a, b)`` and the cells of a marginal are
    evaluated as matrix-vector products; when most cells carry their own marginal, each
    cell's nodes are built in place, without the lookup. Either way cells are processed in
    blocks of about ``_CHUNK`` node evaluations, so every temporary stays in cache.
    """
    a, b, q = np.broadcast_arrays(np.asarray(a, dtype=np.float64),
                                  np.asarray(b, dtype=np.float64),
                                  np.asarray(q, dtype=np.float64))
    out = np.empty(a.shape)
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    half_q = 0.5 * np.ascontiguousarray(q).reshape(-1)
    n_min = _MIN_NODES if n_nodes is None else n_nodes
    sharp = _concentrated(flat_a, flat_b, half_q)
    flat_out = out.reshape(-1)
    if sharp.any():                      # huge counts: the Taylor series, exact to rounding
        flat_out[sharp] = _taylor_m_log_m(flat_a[sharp], flat_b[sharp], half_q[sharp])
        rest = ~sharp
        flat_a, flat_b, half_q = flat_a[rest], flat_b[rest], half_q[rest]
        flat_out = np.empty(flat_a.shape)
    if not flat_a.size:
        pass
    elif _mostly_distinct(flat_a, flat_b):
        _distinct_cells(flat_a, flat_b, half_q, n_min, flat_out)
    else:
        _shared_marginals(flat_a, flat_b, half_q, n_min, flat_out)
    if sharp.any():
        out.reshape(-1)[~sharp] = flat_out
    return out


_HUGE_A0 = 1e9    # a0 from which the logit-space rule loses digits (a t - a0 softplus(t))
_SHARP = 1e-4     # sd(X) / (mu + q) below which the fourth-order Taylor series is exact


def _concentrated(a: np.ndarray, b: np.ndarray, half_q: np.ndarray) -> np.ndarray:
    """The marginals too concentrated for the logit-space rule (``a + b >= 1e9``, where the
    log-density's terms ``a t`` and ``(a + b) softplus(t)`` cancel to fewer digits than the
    rule needs) whose spread is tiny against ``m``: ``sd(X) / (mu + q) <= 1e-4``. Every
    marginal with ``a + b >= 1e9`` either is one, or has ``a < 1e8`` and its mode on the
    left, where the rule's terms stay accurate."""
    a0 = a + b
    mu = a / a0
    sd = np.sqrt(mu * (b / a0) / (a0 + 1.0))
    return (a0 >= _HUGE_A0) & (sd <= _SHARP * (mu + 2.0 * half_q))


def _taylor_m_log_m(a: np.ndarray, b: np.ndarray, half_q: np.ndarray) -> np.ndarray:
    """``E[m log m]``, ``m = (X + q)/2``, ``X ~ Beta(a, b)``, by the Taylor series about
    the mean to the fourth central moment. With ``g(m) = m log m`` (``g2 = 1/m``,
    ``g3 = -1/m^2``, ``g4 = 2/m^3``) and ``m`` at ``X = mu = a / a0``:
    ``E = g(m) + g2 mu_2 / 8 + g3 mu_3 / 48 + g4 mu_4 / 384``, the Beta's central moments
    in the cancellation-free form ``p r = ab / a0^2``: ``mu_2 = p r / (a0 + 1)``,
    ``mu_3 = 2 p r (r - p) / ((a0 + 1)(a0 + 2))``,
    ``mu_4 = 3 p r (p r (a0 - 6) + 2) / ((a0 + 1)(a0 + 2)(a0 + 3))``. The remainder is of
    order ``(sd / m)^5`` relative, below 1e-19 where :func:`_concentrated` sends a marginal."""
    a0 = a + b
    p, r = a / a0, b / a0
    pr = p * r
    m = 0.5 * p + half_q
    mu2 = pr / (a0 + 1.0)
    mu3 = 2.0 * pr * (r - p) / ((a0 + 1.0) * (a0 + 2.0))
    mu4 = 3.0 * pr * (pr * (a0 - 6.0) + 2.0) / ((a0 + 1.0) * (a0 + 2.0) * (a0 + 3.0))
    return m * np.log(m) + mu2 / (8.0 * m) - mu3 / (48.0 * m**2) + mu4 / (192.0 * m**3)


def _distinct_cells(a: np.ndarray, b: np.ndarray, half_q: np.ndarray, n_min: int,
                    flat_out: np.ndarray) -> None:
    """Every cell with its own nodes, cells grouped by node count, in cache-sized blocks."""
    lo, hi = _logit_range(a, b)
    sizes = _n_nodes(a, b, lo, hi, n_min)
    order = np.argsort(sizes, kind="stable")
    sorted_sizes = sizes[order]
    values = np.unique(sorted_sizes)
    starts = np.searchsorted(sorted_sizes, values, side="left")
    stops = np.append(starts[1:], order.size)
    for n, first, last in zip(values, starts, stops, strict=True):
        n = int(n)
        step = max(1, _CHUNK // n)
        for s0 in range(first, last, step):
            idx = order[s0:min(s0 + step, last)]
            x, w = _unnormalised_nodes(a[idx], b[idx], n, lo[idx], hi[idx])
            x *= 0.5
            x += half_q[idx, None]  # m = (x + q) / 2
            flat_out[idx] = np.einsum("ij,ij->i", _m_log_m(x), w) / w.sum(axis=-1)


def _shared_marginals(a: np.ndarray, b: np.ndarray, half_q: np.ndarray, n_min: int,
                      flat_out: np.ndarray) -> None:
    """Nodes once per distinct marginal; cells of a marginal as matrix-vector products (or,
    where few cells share a marginal, gathered), in cache-sized blocks."""
    ua, ub, inverse = _unique_pairs(a, b)
    lo, hi = _logit_range(ua, ub)
    sizes = _n_nodes(ua, ub, lo, hi, n_min)
    by_size = np.argsort(sizes, kind="stable")  # renumber the marginals by node count
    ua, ub, lo, hi, sizes = ua[by_size], ub[by_size], lo[by_size], hi[by_size], sizes[by_size]
    rank = np.empty_like(by_size)
    rank[by_size] = np.arange(by_size.size)
    inverse = rank[inverse]
    # cells grouped by node count, then marginal (a radix sort when the codes fit in int16)
    codes = inverse.astype(np.int16) if ua.size < 2**15 else inverse
    order = np.argsort(codes, kind="stable")
    cell_pair = inverse[order]
    pair_start = np.searchsorted(sizes[cell_pair], np.unique(sizes), side="left")
    pair_stop = np.append(pair_start[1:], order.size)
    for n, first, last in zip(np.unique(sizes), pair_start, pair_stop, strict=True):
        n = int(n)
        pairs = np.flatnonzero(sizes == n)
        cells = order[first:last]
        bounds = np.append(np.searchsorted(cell_pair[first:last], pairs, side="left"),
                           cells.size)  # cells[bounds[j]:bounds[j + 1]] share marginal j
        step = max(1, _CHUNK // n)
        if cells.size >= 32 * pairs.size:  # one matrix-vector product per marginal
            x, w = _logit_beta_nodes(ua[pairs], ub[pairs], n, lo[pairs], hi[pairs])
            x *= 0.5
            for j in range(pairs.size):
                run = cells[bounds[j]:bounds[j + 1]]
                for start in range(0, run.size, step):
                    idx = run[start:start + step]
                    m = np.add.outer(half_q[idx], x[j])  # (q + x) / 2
                    flat_out[idx] = _m_log_m(m) @ w[j]
            continue
        # many distinct marginals: nodes built for a block of marginals at a time, gathered
        for p0 in range(0, pairs.size, step):
            block = pairs[p0:p0 + step]
            x, w = _logit_beta_nodes(ua[block], ub[block], n, lo[block], hi[block])
            x *= 0.5
            run = cells[bounds[p0]:bounds[min(p0 + step, pairs.size)]]
            for start in range(0, run.size, step):
                idx = run[start:start + step]
                row = inverse[idx] - block[0]  # marginals are numbered consecutively
                m = x[row]
                m += half_q[idx, None]  # (q + x) / 2
                flat_out[idx] = np.einsum("ij,ij->i", _m_log_m(m), w[row])

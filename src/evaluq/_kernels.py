"""Generic numpy kernels shared by the analysis modules (no xarray here).

Every function works on plain arrays, reduces the last axis unless told otherwise, and knows
nothing of the cube's dims: nan-aware statistics and counts, the percentile interval,
bootstrap count matrices and multiple-testing adjustments. Domain modules import these
instead of each other's private helpers.
"""

from __future__ import annotations

import numpy as np

# --- nan-aware statistics (axis=-1) -------------------------------------------------------------


def count_valid(x: np.ndarray) -> np.ndarray:
    """Number of non-NaN values over the last axis."""
    return np.sum(~np.isnan(x), axis=-1)


def nanmean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring NaN; NaN (no warning) where every value is NaN."""
    n = count_valid(x)
    total = np.where(np.isnan(x), 0.0, x).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / n, np.nan)


def nan_reduce(x: np.ndarray, how: str) -> np.ndarray:
    """``"min"`` or ``"max"`` over the last axis ignoring NaN; NaN where every value is NaN."""
    n = count_valid(x)
    if how == "min":
        filled = np.where(np.isnan(x), np.inf, x).min(axis=-1)
    else:
        filled = np.where(np.isnan(x), -np.inf, x).max(axis=-1)
    return np.where(n > 0, filled, np.nan)


def nanstd(x: np.ndarray, ddof: int, axis: int = -1) -> np.ndarray:
    """SD over ``axis`` ignoring NaN; NaN where fewer than ``ddof + 1`` values remain.

    The values are shifted by one of them first: identical values then give exactly 0, and
    the two-pass sum of squares does not lose digits to a large common offset.
    """
    nan = np.isnan(x)
    if not nan.any():  # fast path, no masks: the shifted-data algorithm
        n = x.shape[axis]
        dev = x - np.take(x, [0], axis=axis)
        total = dev.sum(axis=axis)
        subscripts = "...i,...i->..." if axis in (-1, x.ndim - 1) else None
        squares = (np.einsum(subscripts, dev, dev) if subscripts
                   else np.einsum(dev, [*range(x.ndim)], dev, [*range(x.ndim)],
                                  [d for d in range(x.ndim) if d != axis % x.ndim]))
        ss = np.maximum(squares - total * total / n, 0.0)
        if n <= ddof:
            return np.full(ss.shape, np.nan)
        return np.sqrt(ss / (n - ddof))
    x = np.moveaxis(x, axis, -1)
    nan = np.moveaxis(nan, axis, -1)
    n = np.sum(~nan, axis=-1)
    shifted = x - nan_reduce(x, "min")[..., None]
    mean = nanmean(shifted)
    dev = np.where(nan, 0.0, shifted - mean[..., None])
    ss = (dev * dev).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > ddof, np.sqrt(ss / (n - ddof)), np.nan)


# --- intervals ----------------------------------------------------------------------------------


def percentile_interval(samples: np.ndarray, level: float, axis: int = -1) -> np.ndarray:
    """Equal-tailed percentile interval over ``axis``; bounds on a new last axis (lower, upper).

    Fewer than two samples cannot say how wide the interval is: the bounds are NaN then,
    never an interval of width zero.
    """
    tail = (1.0 - level) / 2.0
    if samples.shape[axis] < 2:
        shape = np.delete(np.asarray(samples.shape), axis % samples.ndim)
        return np.full((*shape, 2), np.nan)
    q = np.quantile(samples, [tail, 1.0 - tail], axis=axis)
    return np.moveaxis(q, 0, -1)


# --- resampling ---------------------------------------------------------------------------------


def bootstrap_counts(rng: np.random.Generator, n_items: int, n_resamples: int) -> np.ndarray:
    """Bootstrap item counts: row b says how often each of ``n_items`` items is drawn.

    Equivalent to drawing ``n_items`` indices with replacement per row, but returned as a
    ``(n_resamples, n_items)`` count matrix so that any additive statistic of a replicate is
    one matrix product.
    """
    idx = rng.integers(0, n_items, size=(n_resamples, n_items))
    flat = idx + (np.arange(n_resamples) * n_items)[:, None]
    return np.bincount(flat.ravel(), minlength=n_resamples * n_items).reshape(
        n_resamples, n_items
    ).astype(np.float64)


# --- multiple testing (axis=-1) -----------------------------------------------------------------


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjustment over the last axis."""
    n = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1) * (n - np.arange(n))
    adj = np.minimum(1.0, np.maximum.accumulate(ranked, axis=-1))
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=-1)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up adjustment over the last axis."""
    n = p.shape[-1]
    order = np.argsort(p, axis=-1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=-1) * n / (np.arange(n) + 1)
    adj = np.minimum(1.0, np.minimum.accumulate(ranked[..., ::-1], axis=-1)[..., ::-1])
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=-1)
    return out

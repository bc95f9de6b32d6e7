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


def nanvar(x: np.ndarray, ddof: int = 1) -> np.ndarray:
    """Variance over the last axis ignoring NaN, ``sum((x - mean)**2) / (n - ddof)``; NaN
    (no warning) where ``n <= ddof`` (with ``ddof=1``: fewer than two values).

    The plain two-pass form about the :func:`nanmean` (no shift, no rescaling): the variance
    of a design's components, where :func:`nan_sd`'s guards for extreme magnitudes are not
    needed.

    >>> nanvar(np.array([[1.0, 3.0, np.nan], [2.0, np.nan, np.nan]])).tolist()
    [2.0, nan]
    """
    n = count_valid(x)
    dev = x - nanmean(x)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > ddof, np.nansum(dev**2, axis=-1) / np.maximum(n - ddof, 1), np.nan)


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


def nan_sd(x: np.ndarray, ddof: int, axis: int = -1) -> np.ndarray:
    """The SD of replicates: over ``axis`` ignoring NaN, NaN (never 0) where fewer than
    ``max(2, ddof + 1)`` values remain (one value says nothing about a spread, whatever
    ``ddof``), computed in units of a power of two for values beyond 1e+-100 (exact: squares
    of values near 1e300 or 1e-300 neither overflow nor underflow).

    >>> nan_sd(np.array([[1.0, 3.0, np.nan], [2.0, np.nan, np.nan]]), 1).tolist()
    [1.4142135623730951, nan]
    """
    # no copies where they change nothing: a unit of 1 leaves every value as it is, and
    # ddof >= 1 already gives NaN below 2 values
    top = _largest_magnitude(x)
    unit = 2.0 ** np.floor(np.log2(top)) if top > 0 and not 1e-100 < top < 1e100 else 1.0
    sd = nanstd(x / unit, ddof, axis=axis) * unit if unit != 1.0 else nanstd(x, ddof, axis=axis)
    if ddof >= 1:
        return sd
    return np.where(np.sum(~np.isnan(x), axis=axis) >= 2, sd, np.nan)


def _largest_magnitude(x: np.ndarray) -> float:
    """The largest finite ``|x|`` (0 for an array without finite values)."""
    if x.size == 0:
        return 0.0
    top = max(abs(float(np.fmax.reduce(x, axis=None))), abs(float(np.fmin.reduce(x, axis=None))))
    if np.isfinite(top):
        return top
    finite = np.abs(x[np.isfinite(x)])  # infinities present (or only NaN): the slow way
    return float(finite.max()) if finite.size else 0.0


# --- intervals ----------------------------------------------------------------------------------


def percentile_interval(samples: np.ndarray, level: float, axis: int = -1, *,
                        skipna: bool = False) -> np.ndarray:
    """Equal-tailed percentile interval over ``axis``; bounds on a new last axis (lower, upper).

    The ``(1 - level) / 2`` and ``1 - (1 - level) / 2`` quantiles (linear interpolation), the
    one percentile kernel of the package. Fewer than two samples cannot say how wide the
    interval is: the bounds are NaN then, never an interval of width zero. With ``skipna``,
    NaN samples are left out (bounds NaN where every sample is NaN, without a warning);
    without it a NaN sample makes the bounds NaN. Infinite samples may give NaN bounds
    (interpolating between two infinities), without a warning.

    >>> percentile_interval(np.array([[1.0, 2.0, 3.0, np.nan]]), 0.5, skipna=True).tolist()
    [[1.5, 2.5]]
    """
    tail = (1.0 - level) / 2.0
    if samples.shape[axis] < 2:
        shape = np.delete(np.asarray(samples.shape), axis % samples.ndim)
        return np.full((*shape, 2), np.nan)
    if skipna:
        values = np.moveaxis(samples, axis, -1)
        out = np.full((*values.shape[:-1], 2), np.nan)
        ok = ~np.all(np.isnan(values), axis=-1)
        if ok.any():
            out[ok] = np.moveaxis(np.nanquantile(values[ok], [tail, 1 - tail], axis=-1), 0, -1)
        return out
    with np.errstate(invalid="ignore"):  # inf - inf between two infinite samples
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


# --- intervals of a proportion (x successes in n trials; n may be real: an effective size) -----

def wilson_bounds(p: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson score interval ends of a proportion :math:`\hat p` from n trials (n may be an
    effective, non-integer size): :math:`\frac{\hat p + z^2/2n}{1 + z^2/n} \pm
    \frac{z}{1 + z^2/n}\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}`, clipped to [0, 1]."""
    z2 = z * z
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = 1.0 + z2 / n
        centre = (p + z2 / (2.0 * n)) / denom
        half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / denom
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def clopper_pearson_bounds(x: np.ndarray, n: np.ndarray,
                           tail: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Clopper-Pearson (exact) ends of x successes in n trials (both may be real: an
    effective size), each tail ``tail``: :math:`[B_{tail}(x, n - x + 1), B_{1-tail}(x + 1,
    n - x)]`, 0 at x = 0 and 1 at x = n (Beta quantiles; scipy imported inside)."""
    from scipy import stats

    with np.errstate(invalid="ignore", divide="ignore"):
        lower = stats.beta.ppf(tail, x, n - x + 1.0)
        upper = stats.beta.isf(tail, x + 1.0, n - x)
    return np.where(x <= 0, 0.0, lower), np.where(x >= n, 1.0, upper)


def samples_to_reject(n_models: int, alpha: float, adjustment: str) -> int:
    """The fewest draws whose smallest two-sided p-value, 2 / (n + 1), is at most ``alpha``
    after the adjustment (Holm multiplies it by the m (m - 1) / 2 pairs): 2 pairs / alpha.

    Examples
    --------
    >>> from evaluq._kernels import samples_to_reject
    >>> samples_to_reject(8, 0.05, "holm"), samples_to_reject(8, 0.05, "none")
    (1120, 40)
    """
    n_pairs = n_models * (n_models - 1) // 2
    return int(np.ceil(2.0 * (n_pairs if adjustment == "holm" else 1) / float(alpha)))


def p_value_floor(n_samples: int, n_models: int, alpha: float,
                  adjustment: str) -> str | None:
    """Why no pairwise test can reject at ``alpha``, or None when one can.

    The two-sided percentile-bootstrap p-value (:func:`evaluq.pairwise_differences`) is at
    least 2/(n+1) with n draws; Holm's adjustment multiplies the smallest by the m(m-1)/2
    pairs of m models. When that floor is above ``alpha`` every model stays in one tier
    whatever the data (11 models at 2,000 resamples, 100 at 10,000): the tiers say nothing,
    and this says why and how many draws would let a test reject.

    Examples
    --------
    >>> from evaluq._kernels import p_value_floor
    >>> p_value_floor(2000, 10, 0.05, "holm") is None
    True
    >>> print(p_value_floor(2000, 12, 0.05, "holm"))  # doctest: +NORMALIZE_WHITESPACE
    With 2000 resamples the smallest p-value is 2/(n+1) = 0.0009995, 0.066 after Holm's
    adjustment over 66 pairs: no test can reject at alpha = 0.05, so every model stays in one
    tier. Use at least 2640 resamples.
    """
    n_pairs = n_models * (n_models - 1) // 2
    floor = 2.0 / (int(n_samples) + 1)             # the smallest two-sided bootstrap p-value
    smallest = floor * n_pairs if adjustment == "holm" else floor
    if n_pairs == 0 or smallest <= float(alpha):
        return None
    needed = samples_to_reject(n_models, alpha, adjustment)
    return (f"With {n_samples} resamples the smallest p-value is 2/(n+1) = {floor:.4g}"
            + (f", {smallest:.3g} after Holm's adjustment over {n_pairs} pairs"
               if adjustment == "holm" else "")
            + f": no test can reject at alpha = {float(alpha):g}, so every model stays in "
            f"one tier. Use at least {needed} resamples.")


# --- covariances from few clusters -------------------------------------------------------------

FEW_CLUSTERS = 30
"""Below this many clusters a cluster-robust covariance is noisy and biased down (Angrist and
Pischke 2009, sec. 8.2): the analyses warn, and floor it at the independent-rows one."""
CLUSTERS_PER_PARAMETER = 4
"""Fewer clusters than this per free parameter count as few too (with G - 1 = c k the
smallest eigenvalue of a k-parameter cluster-robust meat is about (1 - 1/sqrt(c))^2 of its
expectation, Marchenko-Pastur: a quarter at c = 4)."""


def few_clusters(groups: int, n_free: int) -> bool:
    """Whether ``groups`` clusters are few for ``n_free`` free parameters.

    >>> few_clusters(40, 5), few_clusters(40, 12), few_clusters(12, 2)
    (False, True, True)
    """
    return groups < max(FEW_CLUSTERS, CLUSTERS_PER_PARAMETER * n_free)


def loewner_floor(cov: np.ndarray, floor: np.ndarray, basis: np.ndarray,
                  below: float, lowest: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``cov`` (K, K) with its variance raised to ``floor``'s (positive definite on
    ``basis``) in every direction where it is below ``below`` times ``floor``'s (with
    ``lowest``: only among the ``lowest`` directions of smallest ratio).

    In the free parameters (``basis``), with ``floor = R R'``, the generalised eigenvalues
    ``l`` of ``cov`` relative to ``floor`` (``R^-1 cov R^-T = U diag(l) U'``) are each
    direction's variance ratio; those below ``below`` become 1: ``R U diag(l') U' R'``.
    With ``below = 1`` this is the smallest covariance at least both (every contrast's variance
    is at least its variance under each). Equivariant under a change of parameters (the
    stated identifiability does not matter). Returns the covariance and the raised directions
    (K, r) in the parameters (``cov`` unchanged when r = 0).
    """
    a, b = basis.T @ cov @ basis, basis.T @ floor @ basis
    vals, vecs = np.linalg.eigh(0.5 * (b + b.T))
    vals = np.clip(vals, vals.max() * 1e-15, None)
    root = vecs * np.sqrt(vals)
    inv_root = (vecs / np.sqrt(vals)).T
    c = inv_root @ a @ inv_root.T
    ratio, u = np.linalg.eigh(0.5 * (c + c.T))
    low = ratio < below
    if lowest is not None:
        low &= np.arange(ratio.size) < lowest
    if not low.any():
        return cov, np.zeros((cov.shape[0], 0))
    half = root @ u
    inner = half @ np.diag(np.where(low, 1.0, ratio)) @ half.T
    return basis @ inner @ basis.T, basis @ half[:, low]

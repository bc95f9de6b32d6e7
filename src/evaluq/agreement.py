"""Inter-rater agreement with bootstrap intervals over items (formulas.md §5).

Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha (nominal, ordinal,
interval, with missing ratings) and the six Shrout & Fleiss intraclass correlations. Each
returns an :class:`AgreementResult` holding the estimate and the full bootstrap distribution
over items; intervals are computed from it on demand.

The bootstraps are vectorised: an item resample is a row of counts, so

- kappa is recomputed from resampled confusion counts (a multinomial draw over the K x K cells,
  which is exactly what resampling items does),
- alpha from the item-weighted sum of per-item coincidence contributions (one matrix product),
- ICC from item-weighted row sums, row sums of squares and column sums.

The numpy kernels (``_kappa_*``, ``_alpha_*``, ``_icc_*``) work on the last axes and never
import xarray.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._apply import check_values, compute_once, map_item_chunks
from evaluq._dims import ICC_FORM, ITEM, RATER, RESAMPLE
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import bootstrap_counts, percentile_interval
from evaluq._results import N_RESAMPLES_INTERVAL, ResultBase
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_rng,
)

__all__ = [
    "ICC_FORMS",
    "AgreementResult",
    "cohen_kappa",
    "icc",
    "krippendorff_alpha",
]

ICC_FORMS: Final = ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)")
"""Shrout & Fleiss (1979) forms; McGraw & Wong (1996): ICC(1) one-way random, ICC(2,.)
two-way random absolute agreement, ICC(3,.) two-way mixed consistency; ``,k`` averages k."""
LEVELS: Final = ("nominal", "ordinal", "interval")
WEIGHTS: Final = (None, "linear", "quadratic")
_CHUNK_ELEMENTS: Final = 1_000_000  # resample x item counts held at once

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval"]


# --- result -------------------------------------------------------------------------------------

@dataclass(frozen=True, repr=False)
class AgreementResult(ResultBase):
    """An agreement coefficient, its bootstrap distribution over items and intervals from it.

    Attributes
    ----------
    statistic : str
        ``"cohen_kappa"``, ``"krippendorff_alpha"`` or ``"icc"``.
    estimate : DataArray
        The coefficient (0-d, or over the ``form`` dim for ICC).
    bootstrap_distribution : DataArray
        The coefficient on each item resample (``resample`` dim first). A resample on which
        the coefficient is undefined (e.g. every resampled item in one category) holds NaN;
        :attr:`n_undefined` counts them and intervals use the others.
    confidence_level : float
        Level of :attr:`interval`.
    n_items : int
        Items (units) used.
    details : dict
        Options (weights, level of measurement, ...).
    """

    statistic: str
    estimate: xr.DataArray
    bootstrap_distribution: xr.DataArray
    confidence_level: float
    n_items: int
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def n_resamples(self) -> int:
        return int(self.bootstrap_distribution.sizes[RESAMPLE])

    @property
    def n_undefined(self) -> xr.DataArray:
        """Resamples on which the coefficient is undefined (NaN)."""
        return self.bootstrap_distribution.isnull().sum(RESAMPLE)

    @property
    def standard_error(self) -> xr.DataArray:
        """Bootstrap standard error (SD of the defined resamples, ddof=1)."""
        return self.bootstrap_distribution.std(RESAMPLE, ddof=1, skipna=True)

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """Percentile bootstrap interval at ``confidence_level`` (default: the stored level).

        Parameters
        ----------
        confidence_level : float, optional
            Level in (0, 1); default None: the level given to the agreement function.

        Returns
        -------
        xarray.DataArray
            The estimate's dims plus ``ci_bound`` (lower, upper); quantiles of
            :attr:`bootstrap_distribution` over ``resample`` (NaN resamples skipped).
        """
        level = self.confidence_level if confidence_level is None else check_confidence_level(
            confidence_level)
        boot = self.bootstrap_distribution
        q = percentile_interval(boot.values, level, axis=boot.get_axis_num(RESAMPLE), skipna=True)
        other = [d for d in boot.dims if d != RESAMPLE]
        return interval_from_bounds(
            q, dims=other, coords={d: boot.coords[d] for d in other if d in boot.coords},
            kind="percentile", confidence_level=level)

    @property
    def distribution(self) -> xr.DataArray:
        """:attr:`bootstrap_distribution` with the ``resample`` dim last (the common layout
        of every result's distribution)."""
        return self.bootstrap_distribution.transpose(..., RESAMPLE)

    def to_dataset(self) -> xr.Dataset:
        """estimate, standard_error, lower, upper (and the bootstrap distribution)."""
        ds = xr.Dataset({"estimate": self.estimate, "standard_error": self.standard_error,
                         "lower": self.lower, "upper": self.upper,
                         "bootstrap_distribution": self.bootstrap_distribution})
        ds.attrs = {"statistic": self.statistic, "confidence_level": self.confidence_level,
                    "n_items": self.n_items,
                    **{k: str(v) for k, v in self.details.items()}}
        return ds

    def to_dataframe(self) -> pd.DataFrame:
        """One row per coefficient: estimate, standard_error, lower, upper."""
        ds = self.to_dataset().drop_vars("bootstrap_distribution")
        if ds.sizes:
            return ds.to_dataframe()
        return pd.DataFrame({k: [v.item()] for k, v in ds.data_vars.items()},
                            index=pd.Index([self.statistic]))

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.details.items())
        head = (f"AgreementResult({self.statistic}{', ' + opts if opts else ''}; "
                f"n_items={self.n_items}, n_resamples={self.n_resamples}, "
                f"confidence_level={self.confidence_level:g})")
        table = self.to_dataframe().to_string(float_format=lambda v: f"{v:.4f}")
        return f"{head}\n{table}"

    def _repr_html_(self) -> str:
        table = self.to_dataframe().to_html(float_format=lambda v: f"{v:.4f}")
        return f"<div><b>AgreementResult: {self.statistic}</b>{table}</div>"


def _result(statistic: str, estimate: np.ndarray, boot: np.ndarray, level: float,
            n_items: int, details: dict[str, Any], form_dim: bool = False) -> AgreementResult:
    dims: list[Hashable] = [ICC_FORM] if form_dim else []
    coords = {ICC_FORM: list(ICC_FORMS)} if form_dim else {}
    est = xr.DataArray(estimate, dims=dims, coords=coords, name=statistic)
    bd = xr.DataArray(boot, dims=[RESAMPLE, *dims], coords=coords, name=statistic)
    return AgreementResult(statistic=statistic, estimate=est, bootstrap_distribution=bd,
                           confidence_level=level, n_items=n_items, details=details)


def _check_bootstrap(n_resamples: int, confidence_level: float,
                     rng: RNGLike) -> tuple[int, float, np.random.Generator]:
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if n_resamples < 2:
        raise ValueError(f"`n_resamples` must be >= 2 (one resample says nothing about a "
                         f"spread: its interval would have width zero); got {n_resamples}")
    return n_resamples, check_confidence_level(confidence_level), check_rng(rng)


def _weighted_item_sums(item_stats: np.ndarray, n_resamples: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``W @ item_stats`` for bootstrap item counts W (n_resamples x n_items), in chunks.

    Also returns the number of distinct items in each resample.
    """
    n_items = item_stats.shape[0]
    # the resamples' sums are kept (n_resamples x statistics) for the percentile interval,
    # with the statistic computed from them (a few copies): refused past the budget
    check_memory("n_resamples", 4 * 8 * n_resamples * (item_stats.shape[1] + 1))
    chunk = max(1, _CHUNK_ELEMENTS // max(n_items, 1))
    out = np.empty((n_resamples, item_stats.shape[1]))
    distinct = np.empty(n_resamples, dtype=np.int64)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        counts = bootstrap_counts(rng, n_items, stop - start)
        out[start:stop] = counts @ item_stats
        distinct[start:stop] = (counts > 0).sum(axis=1)
    return out, distinct


# --- Cohen's kappa ------------------------------------------------------------------------------

def _kappa_weights(n_labels: int, weights: Weights) -> np.ndarray:
    """Disagreement weights w_ij: 1 - [i == j], |i - j| or (i - j)^2 (label order)."""
    i = np.arange(n_labels)
    diff = np.abs(i[:, None] - i[None, :]).astype(np.float64)
    if weights is None:
        return (diff > 0).astype(np.float64)
    return diff if weights == "linear" else diff**2


def _kappa_from_confusion(confusion: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``1 - sum(w * p_obs) / sum(w * p_exp)`` over the last two axes (NaN if undefined)."""
    total = confusion.sum(axis=(-2, -1), keepdims=True)
    p = confusion / total
    expected = p.sum(axis=-1, keepdims=True) * p.sum(axis=-2, keepdims=True)
    num = (w * p).sum(axis=(-2, -1))
    den = (w * expected).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 1 - num / np.where(den > 0, den, 1), np.nan)


def _encode_labels(a: np.ndarray, b: np.ndarray,
                   labels: Sequence[Any] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if labels is None:
        try:
            domain = np.unique(np.concatenate([a, b]))
        except TypeError:
            kinds = {name: sorted({type(v).__name__ for v in x.tolist()})
                     for name, x in (("rater1", a), ("rater2", b))}
            raise TypeError(f"`rater1` and `rater2` must use labels of one kind (all strings "
                            f"or all numbers); got types {kinds}") from None
    else:
        domain = np.asarray(labels)
    if labels is not None:
        if isinstance(labels, str | bytes) or domain.ndim != 1 or domain.size == 0:
            raise ValueError(f"`labels` must be a non-empty 1-D sequence of labels; got "
                             f"{labels!r}")
        try:
            distinct = len(np.unique(domain))
        except TypeError:
            raise TypeError(f"`labels` must be all strings or all numbers; got "
                            f"{list(labels)}") from None
        if distinct != len(domain):
            raise ValueError(f"`labels` must not repeat a label; got {list(labels)}")
        for name, x in (("rater1", a), ("rater2", b)):
            unknown = ~np.isin(x, domain)
            if unknown.any():
                raise ValueError(f"`{name}` has labels not in `labels`: "
                                 f"{sorted(set(x[unknown].tolist()))[:5]}")
        order = np.argsort(domain, kind="stable")
        codes_a = order[np.searchsorted(domain, a, sorter=order)]
        codes_b = order[np.searchsorted(domain, b, sorter=order)]
        return codes_a, codes_b, domain
    return np.searchsorted(domain, a), np.searchsorted(domain, b), domain


def _check_label_kinds(x: Any, name: str) -> None:
    """Refuse a list mixing strings and numbers (numpy would turn 1 into '1' silently)."""
    if isinstance(x, list | tuple) or (isinstance(x, np.ndarray) and x.dtype.kind == "O"):
        missing = [i for i, v in enumerate(x) if v is None or (isinstance(v, float) and v != v)]
        if missing and any(isinstance(v, str | bytes) for v in x):
            raise ValueError(f"`{name}` has no label for {len(missing)} item(s) (None or NaN; "
                             f"item {missing[0]} first); Cohen's kappa needs both ratings of "
                             f"every item (drop those items, or use krippendorff_alpha for "
                             f"missing ratings)")
        kinds = {type(v).__name__ for v in x if v is not None}
        if any(k in ("str", "bytes") for k in kinds) and len(kinds) > 1:
            raise TypeError(f"`{name}` mixes label types {sorted(kinds)}: labels must be all "
                            f"strings or all numbers")


def _as_labels(x: Any, name: str) -> xr.DataArray:
    """One rater's labels as a 1-D DataArray over its items (any dim name; lazy stays lazy)."""
    if isinstance(x, xr.DataArray):
        if x.ndim != 1:
            raise ValueError(f"`{name}` must be 1-D (one label per item); got shape {x.shape}")
        da = x
    else:
        _check_label_kinds(x, name)
        arr = np.asarray(x)
        if arr.ndim != 1:
            raise ValueError(f"`{name}` must be 1-D (one label per item); got shape "
                             f"{arr.shape}")
        da = xr.DataArray(arr, dims=(ITEM,))
    if da.size == 0:
        raise ValueError(f"`{name}` is empty")
    return da


def _check_labels(arr: np.ndarray, name: str) -> None:
    """No missing labels (a block of one rater's labels)."""
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"`{name}` contains {int(np.isnan(arr).sum())} NaN value(s); Cohen's "
                         "kappa needs both ratings of every item (use krippendorff_alpha for "
                         "missing ratings)")
    if arr.dtype.kind == "O" and any(v is None for v in arr):
        raise ValueError(f"`{name}` contains None; Cohen's kappa needs both ratings of every "
                         "item (use krippendorff_alpha for missing ratings)")


def _label_pair_counts(a: np.ndarray, b: np.ndarray) -> pd.Series:
    """Validated block of both raters' labels -> count of each observed (label1, label2)."""
    _check_labels(a, "rater1")
    _check_labels(b, "rater2")
    return pd.DataFrame({"a": a, "b": b}).value_counts(sort=False, dropna=False)


def cohen_kappa(rater1: Any, rater2: Any, *, labels: Sequence[Any] | None = None,
                weights: Weights = None, confidence_level: float = 0.95,
                n_resamples: int = N_RESAMPLES_INTERVAL,
                rng: RNGLike = None) -> AgreementResult:
    r"""Cohen's kappa between two raters, optionally weighted, with a bootstrap interval.

    .. math::

        \kappa = 1 - \frac{\sum_{ij} w_{ij}\, p_{ij}}{\sum_{ij} w_{ij}\, p_{i\cdot}\, p_{\cdot j}}

    with observed cell proportions p_ij and disagreement weights ``w_ij = 1 - [i = j]``
    (unweighted), ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic) over the label order.
    The bootstrap resamples items, i.e. draws the confusion counts from a multinomial with the
    observed cell proportions.

    Parameters
    ----------
    rater1, rater2 : array_like or DataArray
        One label per item from each rater (numbers or strings; no missing values), paired
        by position. A dask-backed DataArray is read chunk by chunk of items: each chunk is
        validated and reduced to its counts of label pairs, which are summed (the confusion
        matrix is the sufficient statistic of the estimate and of the bootstrap, so nothing
        else is loaded).
    labels : sequence, optional
        The label set, in order (the order matters for weights). Default: the sorted labels
        present. Labels outside it raise.
    weights : {None, "linear", "quadratic"}
    confidence_level : float
    n_resamples : int
        Bootstrap resamples (default 9999, the default of every bootstrap interval in evaluq).
    rng : int, Generator, SeedSequence or None

    Returns
    -------
    AgreementResult

    References
    ----------
    Cohen, J. (1960, 1968). A coefficient of agreement for nominal scales; Weighted kappa.

    See Also
    --------
    krippendorff_alpha, sklearn.metrics.cohen_kappa_score

    Examples
    --------
    >>> import evaluq as eq
    >>> r1 = [0, 1, 1, 2, 2, 2, 0, 1, 2, 1]
    >>> r2 = [0, 1, 2, 2, 2, 1, 0, 1, 2, 0]
    >>> res = eq.agreement.cohen_kappa(r1, r2, n_resamples=2000, rng=0)
    >>> round(float(res.estimate), 4)
    0.5455
    >>> round(float(eq.agreement.cohen_kappa(r1, r2, weights="quadratic", rng=0).estimate), 4)
    0.7619
    """
    check_choice("weights", weights, WEIGHTS)
    n_resamples, level, gen = _check_bootstrap(n_resamples, confidence_level, rng)
    a, b = _as_labels(rater1, "rater1"), _as_labels(rater2, "rater2")
    if a.size != b.size:
        raise ValueError(f"`rater1` and `rater2` must rate the same items; got {a.size} and "
                         f"{b.size} labels")
    b = b.rename({b.dims[0]: a.dims[0]})  # paired by position, as the labels are given
    # the confusion counts, chunk by chunk of items (counts of label pairs, summed exactly)
    (parts,) = compute_once(map_item_chunks(_label_pair_counts, a, b, dim=a.dims[0]))
    pairs = parts[0] if len(parts) == 1 else pd.concat(parts).groupby(level=[0, 1]).sum()
    n_pairs = pairs.to_numpy(dtype=np.float64)
    codes_a, codes_b, domain = _encode_labels(pairs.index.get_level_values(0).to_numpy(),
                                              pairs.index.get_level_values(1).to_numpy(),
                                              labels)
    n_labels = len(domain)
    confusion = np.bincount(codes_a * n_labels + codes_b, weights=n_pairs,
                            minlength=n_labels * n_labels)
    w = _kappa_weights(n_labels, weights)
    estimate = _kappa_from_confusion(confusion.reshape(n_labels, n_labels), w)
    # the resampled confusion matrices (int64, then float64) and kappa's terms from them
    check_memory("n_resamples", 4 * 8 * n_resamples * n_labels * n_labels)
    boot_counts = gen.multinomial(a.size, confusion / a.size, size=n_resamples)
    boot = _kappa_from_confusion(
        boot_counts.reshape(n_resamples, n_labels, n_labels).astype(np.float64), w)
    return _result("cohen_kappa", estimate, boot, level, a.size,
                   {"weights": weights, "labels": domain.tolist()})


# --- Krippendorff's alpha -----------------------------------------------------------------------

def _value_counts(codes: np.ndarray, n_values: int) -> np.ndarray:
    """(items, raters) codes with -1 for missing -> (items, values) counts."""
    n_items = codes.shape[0]
    ok = codes >= 0
    flat = (np.arange(n_items)[:, None] * n_values + codes)[ok]
    return np.bincount(flat, minlength=n_items * n_values).reshape(n_items, n_values).astype(
        np.float64)


def _coincidence_contributions(counts: np.ndarray) -> np.ndarray:
    """Per-item coincidence matrices ``(n_u n_u^T - diag(n_u)) / (m_u - 1)``, flattened.

    Items with fewer than two ratings (not pairable) contribute zero. Shape (items, V * V).
    """
    m = counts.sum(axis=-1)
    scale = np.where(m >= 2, 1 / np.where(m >= 2, m - 1, 1), 0.0)
    outer = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(counts.shape[1])
    outer[:, idx, idx] -= counts
    return (outer * scale[:, None, None]).reshape(counts.shape[0], -1)


def _ordinal_distance(n_v: np.ndarray) -> np.ndarray:
    """``delta^2_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` for marginals n_v (..., V)."""
    cum = np.cumsum(n_v, axis=-1)
    lo_idx = np.arange(n_v.shape[-1])
    c, k = np.minimum.outer(lo_idx, lo_idx), np.maximum.outer(lo_idx, lo_idx)
    cum_prev = np.concatenate([np.zeros_like(cum[..., :1]), cum[..., :-1]], axis=-1)
    between = cum[..., k] - cum_prev[..., c]
    return (between - (n_v[..., :, None] + n_v[..., None, :]) / 2) ** 2


def _alpha_from_coincidence(o: np.ndarray, level: str,
                            values: np.ndarray) -> np.ndarray:
    """``1 - (n - 1) sum(o d) / sum(n_c n_k d)`` over the last two axes (NaN if undefined)."""
    n_v = o.sum(axis=-2)
    n = n_v.sum(axis=-1)
    if level == "ordinal":
        d = _ordinal_distance(n_v)
    elif level == "nominal":
        d = 1.0 - np.eye(o.shape[-1])
    else:
        d = (values[:, None] - values[None, :]) ** 2
    num = (o * d).sum(axis=(-2, -1))
    den = (n_v[..., :, None] * n_v[..., None, :] * d).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 1 - (n - 1) * num / np.where(den > 0, den, 1), np.nan)


def _interval_item_stats(x: np.ndarray) -> np.ndarray:
    """Per pairable item: m_u, sum x, sum x^2, and ``sum_{i != j} (x_i - x_j)^2 / (m_u - 1)``.

    Interval alpha needs only these additive sums (no value domain):
    ``sum(o d) = sum_u 2 (m_u s2_u - s1_u^2) / (m_u - 1)`` and
    ``sum(n_c n_k d) = 2 (n S2 - S1^2)`` over the pairable values.
    """
    ok = ~np.isnan(x)
    m = ok.sum(axis=-1).astype(np.float64)
    pair = m >= 2
    xc = np.where(ok, x, 0.0)
    s1 = xc.sum(axis=-1)
    mean = np.divide(s1, m, out=np.zeros_like(s1), where=m > 0)
    ss = (np.where(ok, x - mean[:, None], 0.0) ** 2).sum(axis=-1)
    within = np.where(pair, 2 * m * ss / np.where(pair, m - 1, 1), 0.0)
    s2 = (xc**2).sum(axis=-1)
    return np.stack([m, s1, s2, within], axis=-1) * pair[:, None]


def _alpha_interval_from_stats(sums: np.ndarray) -> np.ndarray:
    m, s1, s2, within = np.moveaxis(sums, -1, 0)
    den = 2 * (m * s2 - s1**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        # den = 2 m SS: zero (up to rounding) when all pairable values are equal
        ok = den > 1e-10 * m * s2
        return np.where(ok, 1 - (m - 1) * within / np.where(ok, den, 1), np.nan)


def _as_ratings(ratings: Any, rater_dim: Hashable, *, allow_nan: bool) -> xr.DataArray:
    """(items, raters) float DataArray from an array or a DataArray with ``rater_dim``; shape
    and dtype checked at once, values at once in memory and chunk by chunk on dask
    (:func:`evaluq._apply.check_values`: the input is read once, by the analysis)."""
    if isinstance(ratings, xr.DataArray):
        if ratings.ndim != 2 or rater_dim not in ratings.dims:
            raise ValueError(f"`ratings` must be a 2-D DataArray with a {rater_dim!r} dim "
                             f"(items x raters); got dims {list(ratings.dims)}")
        da = ratings.transpose(..., rater_dim)
    else:
        arr = np.asarray(ratings)
        if arr.ndim != 2:
            raise ValueError(f"`ratings` must be 2-D (items x raters); got shape {arr.shape}")
        da = xr.DataArray(arr, dims=(ITEM, rater_dim))
    if da.dtype.kind not in "iuf":  # bool refused: True/False are not ratings on a scale
        raise TypeError(f"`ratings` must be numeric (NaN for missing); got dtype {da.dtype}; "
                        "encode categories as integers first (e.g. .astype(int) for bool)")
    if da.shape[1] < 2:
        raise ValueError(f"`ratings` must have at least 2 raters (columns); got {da.shape[1]}")
    if da.shape[0] < 2:
        raise ValueError(f"`ratings` must have at least 2 items (rows); got {da.shape[0]}")

    def check(arr: np.ndarray) -> None:
        if np.isinf(arr).any():
            raise ValueError("`ratings` contains infinite values")
        if not allow_nan and np.isnan(arr).any():
            raise ValueError(f"`ratings` contains {int(np.isnan(arr).sum())} NaN value(s); the "
                             "ICC needs complete items x raters data (use krippendorff_alpha "
                             "for missing ratings, or drop the incomplete items explicitly)")

    return check_values(da.astype(np.float64), check)


def _coincidence_counts(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of items (items x raters): the values present, and per number of ratings m
    the summed integer coincidence counts ``sum_u (n_u n_u^T - diag(n_u))`` over the items
    with m ratings (shape (raters + 1, V, V)); exact, so summing chunks gives identical
    totals for any chunking."""
    ok = ~np.isnan(block)
    local = np.unique(block[ok])
    if not local.size:                 # a chunk without ratings adds nothing
        return local, np.zeros((block.shape[1] + 1, 0, 0))
    codes = np.where(ok, np.searchsorted(local, np.where(ok, block, 0.0)), -1)
    counts = _value_counts(codes, local.size)
    m = counts.sum(axis=-1).astype(np.intp)
    outer = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(local.size)
    outer[:, idx, idx] -= counts
    by_m = (m[:, None] == np.arange(block.shape[1] + 1)).astype(np.float64)
    sums = (by_m.T @ outer.reshape(block.shape[0], -1)).reshape(-1, local.size, local.size)
    return local, sums


def _coincidence_matrix(parts: Sequence[tuple[np.ndarray, np.ndarray]],
                        domain: np.ndarray) -> np.ndarray:
    """The coincidence matrix ``o`` over ``domain`` from the chunks' counts:
    ``sum_m S_m / (m - 1)`` over m >= 2 (the counts summed first, exactly)."""
    n_v = domain.size
    lookup = np.argsort(domain, kind="stable")
    total = np.zeros((parts[0][1].shape[0], n_v, n_v))
    for local, sums in parts:
        at = lookup[np.searchsorted(domain, local, sorter=lookup)]
        total[:, at[:, None], at[None, :]] += sums
    o = np.zeros((n_v, n_v))
    for m in range(2, total.shape[0]):
        o += total[m] / (m - 1)
    return o


def krippendorff_alpha(ratings: Any, *, level_of_measurement: Level = "nominal",
                       value_domain: Sequence[float] | None = None,
                       confidence_level: float = 0.95,
                       n_resamples: int = N_RESAMPLES_INTERVAL,
                       rng: RNGLike = None, rater_dim: Hashable = RATER) -> AgreementResult:
    r"""Krippendorff's alpha for any number of raters, with missing ratings, and a bootstrap.

    .. math::

        \alpha = 1 - \frac{D_o}{D_e}
               = 1 - (n - 1)\,\frac{\sum_{ck} o_{ck}\,\delta^2_{ck}}
                                  {\sum_{ck} n_c n_k\,\delta^2_{ck}},
        \qquad o_{ck} = \sum_u \frac{n_{uc} n_{uk} - [c = k]\,n_{uc}}{m_u - 1}

    over items u with ``m_u >= 2`` ratings (n_uc: ratings of value c on item u, n_c the
    coincidence marginals, n their total). ``delta^2`` is ``[c != k]`` (nominal),
    ``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2`` (ordinal) or ``(v_c - v_k)^2`` (interval).

    The bootstrap resamples items and sums their coincidence contributions (interval: their
    moment sums), so the ordinal distances are recomputed from each resample's marginals.

    Parameters
    ----------
    ratings : array_like or DataArray, shape (items, raters)
        Numeric ratings; NaN marks a missing rating. On a dask-backed DataArray the values
        are validated chunk by chunk of items and the coincidence counts of the estimate are
        summed chunk by chunk (integer counts: identical for any chunking); the bootstrap
        resamples items, so it loads the (items x raters) table, its sufficient statistic,
        once (one ``compute`` for both).
    level_of_measurement : {"nominal", "ordinal", "interval"}
    value_domain : sequence, optional
        The ordered values (nominal / ordinal). Default: the sorted values present. Values
        outside it raise. For interval data it is only the set of allowed values (without
        it an equivalent moment form is used, which needs no value grid).
    confidence_level, n_resamples, rng
        The percentile bootstrap over items.
    rater_dim : hashable
        For a DataArray: the raters' dim (the other dim is the items').

    Returns
    -------
    AgreementResult

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    Hayes, A. F., Krippendorff, K. (2007). Answering the call for a standard reliability
    measure for coding data. (Their bootstrap resamples pairable values; this one resamples
    items.)

    See Also
    --------
    cohen_kappa, icc

    Examples
    --------
    Krippendorff's (2011) example: 4 coders, 12 units, missing values (items x raters here):

    >>> import numpy as np
    >>> import evaluq as eq
    >>> nan = np.nan
    >>> data = np.array([
    ...     [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...     [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]).T
    >>> for level in ("nominal", "ordinal", "interval"):
    ...     res = eq.agreement.krippendorff_alpha(data, level_of_measurement=level,
    ...                                           n_resamples=500, rng=0)
    ...     print(level, round(float(res.estimate), 3))
    nominal 0.743
    ordinal 0.815
    interval 0.849
    """
    check_choice("level_of_measurement", level_of_measurement, LEVELS)
    n_resamples, level, gen = _check_bootstrap(n_resamples, confidence_level, rng)
    table = _as_ratings(ratings, rater_dim, allow_nan=True)
    moments = level_of_measurement == "interval" and value_domain is None
    parts = [] if moments else map_item_chunks(_coincidence_counts, table, dim=table.dims[0])
    # one pass over the input: the chunks' coincidence counts and the table for the bootstrap
    parts, x = compute_once(parts, table.data)
    x = np.asarray(x)
    m = (~np.isnan(x)).sum(axis=1)
    if not (m >= 2).any():
        raise ValueError("`ratings` has no item rated by at least 2 raters; alpha is undefined")
    present = np.unique(x[~np.isnan(x)])
    details: dict[str, Any] = {"level_of_measurement": level_of_measurement}
    if level_of_measurement == "interval" and value_domain is None:
        if present.size < 2:  # as for the other levels (their domain is the values present)
            raise ValueError(f"`ratings` must hold at least 2 distinct values for alpha; got "
                             f"{present.tolist()}")
        stats = _interval_item_stats(x - np.nanmean(x))  # shift invariant; keeps sums exact
        estimate = _alpha_interval_from_stats(stats.sum(axis=0))
        boot = _alpha_interval_from_stats(_weighted_item_sums(stats, n_resamples, gen)[0])
        return _result("krippendorff_alpha", estimate, boot, level, x.shape[0], details)
    domain = present if value_domain is None else np.asarray(value_domain, dtype=np.float64)
    if value_domain is not None:
        if len(np.unique(domain)) != len(domain) or np.isnan(domain).any():
            raise ValueError("`value_domain` must hold distinct, non-NaN values")
        unknown = ~np.isin(present, domain)
        if unknown.any():
            raise ValueError(f"`ratings` holds values not in `value_domain`: "
                             f"{present[unknown][:5].tolist()}")
    order = np.argsort(domain, kind="stable") if level_of_measurement == "interval" else None
    if order is not None:
        domain = domain[order]
    if len(domain) < 2:
        raise ValueError(f"`ratings` must hold at least 2 distinct values for alpha; got "
                         f"{domain.tolist()}")
    lookup = np.argsort(domain, kind="stable")
    safe = np.where(np.isnan(x), domain[0], x)
    codes = lookup[np.searchsorted(domain, safe, sorter=lookup)]
    codes = np.where(np.isnan(x), -1, codes)
    contrib = _coincidence_contributions(_value_counts(codes, len(domain)))
    n_v = len(domain)
    estimate = _alpha_from_coincidence(_coincidence_matrix(parts, domain),
                                       level_of_measurement, domain)
    boot_o = _weighted_item_sums(contrib, n_resamples, gen)[0].reshape(n_resamples, n_v, n_v)
    boot = _alpha_from_coincidence(boot_o, level_of_measurement, domain)
    return _result("krippendorff_alpha", estimate, boot, level, x.shape[0], details)


# --- ICC ----------------------------------------------------------------------------------------

def _icc_from_sums(n: int, k: int, sums: np.ndarray, col_sums: np.ndarray) -> np.ndarray:
    """The six ICCs from item-weighted sums over ``n`` (weighted) items.

    ``sums[..., :]`` = (sum r_u, sum r_u^2, sum q_u) with r_u the row sum and q_u the row sum
    of squares; ``col_sums[..., j]`` = sum_u x_uj. Mean squares of the two-way ANOVA:
    MSR (rows), MSC (columns), MSE (residual), MSW (within rows, one-way).
    """
    sr, sr2, sq = np.moveaxis(sums, -1, 0)
    corr = sr**2 / (n * k)
    sst = sq - corr
    ssr = sr2 / k - corr
    ssc = (col_sums**2).sum(axis=-1) / n - corr
    ssw = sst - ssr
    sse = ssw - ssc
    msr = ssr / (n - 1)
    msw = ssw / (n * (k - 1))
    msc = ssc / (k - 1)
    mse = sse / ((n - 1) * (k - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        forms = [
            (msr - msw) / (msr + (k - 1) * msw),
            (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
            (msr - mse) / (msr + (k - 1) * mse),
            (msr - msw) / msr,
            (msr - mse) / (msr + (msc - mse) / n),
            (msr - mse) / msr,
        ]
    out = np.stack(forms, axis=-1)
    degenerate = (msr <= 1e-12 * np.maximum(sq, 1e-300) / (n * k)) | ~np.isfinite(out).all(-1)
    out[degenerate] = np.nan  # no variance between items: every ICC is undefined
    return out


def _icc_item_stats(x: np.ndarray) -> np.ndarray:
    r = x.sum(axis=-1)
    return np.column_stack([r, r**2, (x**2).sum(axis=-1), x])


def icc(ratings: Any, *, confidence_level: float = 0.95,
        n_resamples: int = N_RESAMPLES_INTERVAL,
        rng: RNGLike = None, rater_dim: Hashable = RATER) -> AgreementResult:
    r"""The six intraclass correlations of Shrout & Fleiss (1979), with a bootstrap over items.

    From the two-way ANOVA of n items (targets) x k raters (judges), with mean squares MSR
    (items), MSC (raters), MSE (residual) and MSW (within items):

    .. math::

        \mathrm{ICC}(1,1) = \frac{MSR - MSW}{MSR + (k-1) MSW}, \quad
        \mathrm{ICC}(2,1) = \frac{MSR - MSE}{MSR + (k-1) MSE + k (MSC - MSE)/n}, \quad
        \mathrm{ICC}(3,1) = \frac{MSR - MSE}{MSR + (k-1) MSE},

        \mathrm{ICC}(1,k) = \frac{MSR - MSW}{MSR}, \quad
        \mathrm{ICC}(2,k) = \frac{MSR - MSE}{MSR + (MSC - MSE)/n}, \quad
        \mathrm{ICC}(3,k) = \frac{MSR - MSE}{MSR}.

    In McGraw & Wong's (1996) terms: ICC(1) one-way random, ICC(2) two-way random absolute
    agreement, ICC(3) two-way mixed consistency; ``,k`` is the reliability of the mean of k.

    Parameters
    ----------
    ratings : array_like or DataArray, shape (items, raters)
        Complete ratings (no NaN). A dask-backed DataArray is validated chunk by chunk and
        then loaded once: the bootstrap over items needs the whole (items x raters) table
        (its sufficient statistic).
    confidence_level, n_resamples, rng
        The percentile bootstrap over items (rows).
    rater_dim : hashable
        For a DataArray: the raters' dim.

    Returns
    -------
    AgreementResult
        ``estimate`` and the bootstrap distribution over a ``form`` dim (:data:`ICC_FORMS`).

    References
    ----------
    Shrout, P. E., Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
    reliability. Psychol. Bull. 86, 420-428.
    McGraw, K. O., Wong, S. P. (1996). Forming inferences about some intraclass correlation
    coefficients. Psychol. Methods 1, 30-46.

    See Also
    --------
    krippendorff_alpha

    Examples
    --------
    Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges.

    >>> import evaluq as eq
    >>> data = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8],
    ...         [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> res = eq.agreement.icc(data, n_resamples=1000, rng=0)
    >>> [round(float(v), 2) for v in res.estimate]
    [0.17, 0.29, 0.71, 0.44, 0.62, 0.91]
    """
    n_resamples, level, gen = _check_bootstrap(n_resamples, confidence_level, rng)
    (x,) = compute_once(_as_ratings(ratings, rater_dim, allow_nan=False).data)
    x = np.asarray(x)
    n, k = x.shape
    x = x - x.mean()  # the ANOVA is shift invariant; centring keeps the sums accurate
    stats = _icc_item_stats(x)
    total = stats.sum(axis=0)
    estimate = _icc_from_sums(n, k, total[:3], total[3:])
    boot_sums, distinct = _weighted_item_sums(stats, n_resamples, gen)
    boot = _icc_from_sums(n, k, boot_sums[:, :3], boot_sums[:, 3:])
    boot[distinct < 2] = np.nan  # one distinct item: no between-item variance
    return _result("icc", estimate, boot, level, n, {}, form_dim=True)


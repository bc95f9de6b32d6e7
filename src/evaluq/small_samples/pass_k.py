r"""pass@k and pass^k: the chance that k attempts at an item succeed at least once, or every time.

With :math:`n` recorded attempts at an item, :math:`c` of them correct, the unbiased
estimators (Chen et al. 2021 for pass@k, as Inspect's ``pass_at`` reducer computes it; Yao et
al. 2024, tau-bench, for pass^k) are

.. math::

    \widehat{\text{pass@}k} = 1 - \binom{n - c}{k} \Big/ \binom{n}{k}
    = 1 - \prod_{j=0}^{k-1} \frac{n - c - j}{n - j},\qquad
    \widehat{\text{pass}^k} = \binom{c}{k} \Big/ \binom{n}{k}
    = \prod_{j=0}^{k-1} \frac{c - j}{n - j},

computed as products of k factors in [0, 1] (no binomial coefficient is ever formed, so
n = 10^4 attempts are as accurate as n = 10), for every item and every k at once. A benchmark's
pass@k is the mean over items; its uncertainty comes from the items (the per-item estimates are
unbiased, so the SE over items, :math:`s / \sqrt{I}`, covers both the sampling of items and of
attempts), with a Student-t or normal interval.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._apply import as_dataarray
from evaluq._dims import EPOCH, ESTIMATE, INTERVAL, ITEM, PASS_K, PER_ITEM, SE
from evaluq._intervals import interval_array
from evaluq._validation import (
    as_float_array,
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
)
from evaluq.errors import CubeError
from evaluq.small_samples.proportions import check_binary

__all__ = ["pass_at_k", "pass_hat_k"]

ArrayLike = Any
IntervalKind = Literal["t", "normal"]


def _survival_ratio(m: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(m, k) / C(n, k) as the product of (m - j) / (n - j), j < k (0 once m < k)."""
    j = np.arange(k, dtype=np.float64)
    factors = np.clip((m[..., None] - j) / (n[..., None] - j), 0.0, 1.0)
    return np.prod(factors, axis=-1)


def _counts(correct: ArrayLike, trials: ArrayLike | None, item_dim: Hashable,
            epoch_dim: Hashable) -> tuple[xr.DataArray, xr.DataArray]:
    """Per-item (correct count, attempts) from 0/1 scores over ``epoch_dim`` or from counts."""
    if trials is None:
        if not isinstance(correct, xr.DataArray):
            arr = np.asarray(correct)
            if arr.ndim < 2:
                raise ValueError(f"`correct` must hold items x epochs of 0/1 scores (or counts "
                                 f"with `trials=`); got shape {arr.shape}")
            names = (*(f"dim_{i}" for i in range(arr.ndim - 2)), item_dim, epoch_dim)
            correct = xr.DataArray(arr, dims=names)
        da = as_dataarray(correct, "correct", allow_bool=True)
        for d in (item_dim, epoch_dim):
            if d not in da.dims:
                raise CubeError(f"`correct` has no dim {d!r}; its dims are {list(da.dims)}")
        check_binary("correct", da.values)
        return da.sum([epoch_dim]), xr.full_like(da.isel({epoch_dim: 0}, drop=True),
                                               float(da.sizes[epoch_dim]))
    c = as_dataarray(correct, "correct", dims=None if isinstance(correct, xr.DataArray)
                     else (*(f"dim_{i}" for i in range(np.ndim(correct) - 1)), item_dim))
    if isinstance(trials, xr.DataArray):
        n = trials
    else:
        t = as_float_array("trials", trials)
        try:
            t = np.broadcast_to(t, c.shape)
        except ValueError:
            raise ValueError(f"`trials` of shape {t.shape} does not broadcast to `correct`'s "
                             f"shape {c.shape} (one count of attempts per item, or one for "
                             f"all)") from None
        n = xr.DataArray(t, dims=c.dims)
    n = as_dataarray(n, "trials")
    c, n = xr.broadcast(c, n)
    for name, v in (("correct", c.values), ("trials", n.values)):
        if np.isnan(v).any() or (v < 0).any() or (v != np.round(v)).any():
            raise ValueError(f"`{name}` must be whole, non-negative counts with no NaN")
    if (c.values > n.values).any():
        raise ValueError("`correct` exceeds `trials` for "
                         f"{int((c.values > n.values).sum())} item(s)")
    if item_dim not in c.dims:
        raise CubeError(f"`correct` has no dim {item_dim!r}; its dims are {list(c.dims)}")
    return c, n


def _check_ks(k: int | Sequence[int], n: xr.DataArray) -> list[int]:
    ks = [k] if np.ndim(k) == 0 else list(k)  # type: ignore[arg-type]
    ks = [check_int("k", v, minimum=1) for v in ks]
    if not ks:
        raise ValueError("`k` must name at least one k; got an empty sequence")
    if n.size == 0:
        raise ValueError(f"`correct` holds no item (its shape is {n.shape})")
    n_min = float(n.min())
    if max(ks) > n_min:
        raise ValueError(f"`k` must be at most the number of attempts of every item; got "
                         f"k = {max(ks)} with an item of {n_min:g} attempt(s)")
    return ks


def _summarise(per_item: xr.DataArray, item_dim: Hashable, confidence_level: float,
               interval: str, name: str) -> xr.Dataset:
    n_items = per_item.sizes[item_dim]
    mean = per_item.mean([item_dim])
    se = per_item.std([item_dim], ddof=1) / np.sqrt(n_items) if n_items > 1 else mean * np.nan
    tail = (1.0 - confidence_level) / 2.0
    crit = (stats.t.isf(tail, max(n_items - 1, 1)) if interval == "t"
            else stats.norm.isf(tail))
    ci = interval_array((mean - crit * se).clip(0.0, 1.0), (mean + crit * se).clip(0.0, 1.0),
                        kind=interval, confidence_level=confidence_level)
    ds = xr.Dataset({PER_ITEM: per_item, ESTIMATE: mean, SE: se, INTERVAL: ci})
    ds.attrs.update(statistic=name, n_items=n_items)
    if n_items < 2:
        reason = "one item: no spread over items"
        ds[SE].attrs["nan_reason"] = ds[INTERVAL].attrs["nan_reason"] = reason
    return ds


def _pass_k(kind: str, correct: ArrayLike, k: int | Sequence[int], trials: ArrayLike | None,
            item_dim: Hashable, epoch_dim: Hashable, confidence_level: float,
            interval: str) -> xr.Dataset:
    level = check_confidence_level(confidence_level)
    check_choice("interval", interval, ("t", "normal"))
    c, n = _counts(correct, trials, item_dim, epoch_dim)
    ks = _check_ks(k, n)
    m = (n - c).values if kind == "pass@k" else c.values
    # the survival ratio's factors (cells x k) of the largest k, one k at a time
    check_memory("k", 2 * 8 * max(m.size, 1) * max(ks), hint=" (the ratio multiplies k "
                 "factors per item)")
    values = [_survival_ratio(m, n.values, kk) for kk in ks]
    per = np.stack([1.0 - v if kind == "pass@k" else v for v in values], axis=-1)
    per_item = xr.DataArray(per, dims=(*c.dims, PASS_K), coords={**c.coords, PASS_K: ks})
    return _summarise(per_item, item_dim, level, interval, kind)


def pass_at_k(correct: ArrayLike, k: int | Sequence[int], *, trials: ArrayLike | None = None,
              item_dim: Hashable = ITEM, epoch_dim: Hashable = EPOCH,
              confidence_level: float = 0.95, interval: IntervalKind = "t") -> xr.Dataset:
    r"""Unbiased pass@k per item, and its mean over items with an SE and an interval.

    :math:`\widehat{\text{pass@}k} = 1 - \prod_{j<k} (n - c - j) / (n - j)` for an item
    with :math:`c` correct of :math:`n` attempts (Chen et al. 2021, Inspect's ``pass_at``
    reducer), see :mod:`evaluq.small_samples.pass_k`.

    Parameters
    ----------
    correct : array-like or DataArray
        0/1 scores with ``item_dim`` and ``epoch_dim`` (a plain array: items and attempts on its
        last two axes); or, with ``trials``, the number of correct attempts per item.
    k : int or sequence of int
        1 <= k <= the attempts of every item; several k give a ``k`` dim.
    trials : array-like or DataArray, optional
        Attempts per item (for unequal attempts, with counts in ``correct``).
    item_dim, epoch_dim : hashable
    confidence_level : float
    interval : {"t", "normal"}
        Interval of the mean over items: Student-t with I - 1 degrees of freedom or normal;
        clipped to [0, 1].

    Returns
    -------
    xarray.Dataset
        ``per_item`` (..., item, k), ``estimate`` and ``se`` (..., k) over items, ``interval``
        (..., k, ci_bound).

    References
    ----------
    Chen et al. (2021), Evaluating large language models trained on code, arXiv:2107.03374.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> attempts = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 1]])   # 3 items x 4
    >>> res = eq.pass_at_k(attempts, [1, 2])
    >>> res.per_item.round(4).values.tolist()
    [[0.25, 0.5], [0.0, 0.0], [0.75, 1.0]]
    >>> res.estimate.round(4).values.tolist()
    [0.3333, 0.5]
    """
    return _pass_k("pass@k", correct, k, trials, item_dim, epoch_dim, confidence_level,
                   interval)


def pass_hat_k(correct: ArrayLike, k: int | Sequence[int], *, trials: ArrayLike | None = None,
               item_dim: Hashable = ITEM, epoch_dim: Hashable = EPOCH,
               confidence_level: float = 0.95, interval: IntervalKind = "t") -> xr.Dataset:
    r"""Unbiased pass^k (every one of k attempts succeeds) per item, and its mean over items.

    :math:`\widehat{\text{pass}^k} = \prod_{j<k} (c - j) / (n - j) = \binom{c}{k} /
    \binom{n}{k}` (Yao et al. 2024, tau-bench).

    Parameters
    ----------
    correct : array-like or DataArray
        0/1 scores with ``item_dim`` and ``epoch_dim``, or correct counts with ``trials``.
    k : int or sequence of int
        1 <= k <= the attempts of every item.
    trials : array-like or DataArray, optional
        Attempts per item (with counts in ``correct``).
    item_dim, epoch_dim : hashable
    confidence_level : float
    interval : {"t", "normal"}

    Returns
    -------
    xarray.Dataset
        As :func:`pass_at_k`: ``per_item``, ``estimate``, ``se``, ``interval``.

    References
    ----------
    Yao, Shinn, Razavi & Narasimhan (2024), tau-bench: a benchmark for tool-agent-user
    interaction in real-world domains, arXiv:2406.12045.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> attempts = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 1]])
    >>> eq.pass_hat_k(attempts, 2).per_item.round(4).values.ravel().tolist()
    [0.0, 0.0, 0.5]
    """
    return _pass_k("pass^k", correct, k, trials, item_dim, epoch_dim, confidence_level,
                   interval)

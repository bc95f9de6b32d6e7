"""The one interval builder: every result with a ``ci_bound`` dim is made here.

An interval is a DataArray with the estimate's dims plus a last dim ``ci_bound`` (coordinates
``lower``, ``upper``). Its metadata has one place and one vocabulary: the attributes
``ci_kind`` (a short token of :data:`CI_KINDS`) and ``confidence_level`` (a float in (0, 1), or
absent when the level varies over cells), set on the DataArray and on its ``ci_bound``
coordinate, as arviz-stats puts an interval's metadata on its bound coordinate.

>>> import numpy as np
>>> ci = interval_from_bounds(np.array([[0.1, 0.4], [0.2, 0.9]]), dims=("model",),
...                           coords={"model": ["a", "b"]}, kind="percentile",
...                           confidence_level=0.95)
>>> ci.dims, ci.attrs["ci_kind"], float(ci.sel(model="b", ci_bound="upper"))
(('model', 'ci_bound'), 'percentile', 0.9)
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import xarray as xr

from evaluq._dims import CI_BOUND, CI_BOUND_COORDS

CI_KIND: Final = "ci_kind"
"""Attribute naming how an interval was built (one of :data:`CI_KINDS`)."""
CONFIDENCE_LEVEL: Final = "confidence_level"
"""Attribute holding an interval's confidence (or credibility) level."""
CI_METADATA_KEYS: Final = (CI_KIND, CONFIDENCE_LEVEL)

CI_KINDS: Final = frozenset({
    "percentile",       # percentile interval of resamples or draws (equal-tailed)
    "bca",              # bias-corrected and accelerated bootstrap
    "basic",            # basic (reverse percentile) bootstrap
    "normal",           # estimate +- z * SE
    "t",                # Student-t interval
    "arf",              # single-observation interval (formulas.md, ARF)
    "equal-tailed",     # quantiles of an exact (closed-form) distribution
    "hdi",              # highest-density interval of posterior draws
    "wilson",           # Wilson score interval of a proportion
    "clopper-pearson",  # exact binomial interval
    "jeffreys",         # Jeffreys (Beta(1/2, 1/2) posterior) interval
    "beta",             # Beta posterior interval with a given prior
    "clt",              # CLT (Wald) interval of a proportion
    "newcombe",         # Newcombe's hybrid score interval of a difference of proportions (MOVER)
})
"""The interval kinds, one short token each."""


def check_kind(kind: str) -> str:
    """``kind`` if it is one of :data:`CI_KINDS`, else a ValueError naming it."""
    if kind not in CI_KINDS:
        raise ValueError(f"`ci_kind` must be one of {sorted(CI_KINDS)}; got {kind!r}")
    return kind


def _metadata(kind: str, confidence_level: float | None) -> dict[str, Any]:
    meta: dict[str, Any] = {CI_KIND: check_kind(kind)}
    if confidence_level is not None:
        meta[CONFIDENCE_LEVEL] = float(confidence_level)
    return meta


def label_interval(ci: xr.DataArray, *, kind: str,
                   confidence_level: float | None) -> xr.DataArray:
    """Give an interval with a ``ci_bound`` dim its metadata (on the array and its coordinate).

    ``ci_bound`` is moved last and given the coordinates ``lower``, ``upper``.
    """
    if CI_BOUND not in ci.dims:
        raise ValueError(f"an interval needs a {CI_BOUND!r} dim; got dims {ci.dims}")
    ci = ci.transpose(*[d for d in ci.dims if d != CI_BOUND], CI_BOUND)
    meta = _metadata(kind, confidence_level)
    ci = ci.assign_coords({CI_BOUND: xr.Variable(CI_BOUND, list(CI_BOUND_COORDS), attrs=meta)})
    ci.attrs = {**{k: v for k, v in ci.attrs.items() if k not in CI_METADATA_KEYS}, **meta}
    return ci


def interval_array(lower: xr.DataArray, upper: xr.DataArray, *, kind: str,
                   confidence_level: float | None, name: str | None = None) -> xr.DataArray:
    """An interval from its two ends (DataArrays with the same dims and coordinates).

    Returns the ends' dims plus a last ``ci_bound`` dim, with ``ci_kind`` and
    ``confidence_level`` attributes (omit the level with ``None`` where it varies by cell).
    """
    ci = xr.concat([lower, upper], dim=CI_BOUND, coords="minimal", compat="override",
                   join="exact")
    ci = label_interval(ci, kind=kind, confidence_level=confidence_level)
    return ci.rename(name) if name is not None else ci


def interval_from_bounds(bounds: np.ndarray, *, dims: Sequence[Hashable],
                         coords: Mapping[Hashable, Any] | None = None, kind: str,
                         confidence_level: float | None,
                         name: str | None = None) -> xr.DataArray:
    """An interval from a kernel's bounds array: last axis of length 2 (lower, upper).

    ``dims`` names the other axes; ``coords`` holds their coordinates (any subset).
    """
    bounds = np.asarray(bounds)
    if bounds.shape[-1:] != (2,) or bounds.ndim != len(dims) + 1:
        raise ValueError(f"bounds of shape {bounds.shape} do not fit dims {tuple(dims)} plus a "
                         f"last axis of 2 (lower, upper)")
    ci = xr.DataArray(bounds, dims=(*dims, CI_BOUND), coords=dict(coords or {}), name=name)
    return label_interval(ci, kind=kind, confidence_level=confidence_level)

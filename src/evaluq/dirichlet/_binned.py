"""The empirical metric against raw annotation frequencies and the per-bin tables by number of
annotations per item."""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._apply import apply_items, check_values
from evaluq._dims import CLASS, ITEM
from evaluq._validation import (
    check_choice,
)
from evaluq.dirichlet._monte_carlo import _empirical_kernel
from evaluq.dirichlet._posterior import (
    _SHORT,
    DirichletPosterior,
    Metric,
    _as_posterior,
    _as_q,
)

DEFAULT_BIN_EDGES: tuple[int, ...] = (0, 2, 4, 6, 11, 21, 51, 101)
"""Lower edges of the annotation-count bins: 0-1, 2-3, 4-5, 6-10, 11-20, 21-50, 51-100, 101+."""

def empirical_metric(counts: Any, q: Any, *, metric: Metric) -> xr.DataArray:
    """A soft metric against the raw annotation frequencies ``n_i / n_i0`` (no posterior).

    The "empirical" side of the label-uncertainty paper's tables, per item, with the same
    conventions as the ``expected_*`` functions (``item`` dim, ``.mean("item")``).

    Parameters
    ----------
    counts
        Counts ``(n_items, K)``, ``(K,)``, a DataArray ``(item, class)`` or a
        :class:`DirichletPosterior` (its counts are used); every item needs an annotation.
    q
        Predicted distributions (as in :func:`expected_cross_entropy`).
    metric
        ``"cross_entropy"``, ``"kl"``, ``"jsd"`` or ``"emd"``.

    Examples
    --------
    The label-uncertainty paper's Example 2 (scenario A): KL = 0.8318 and CE = 1.3322 nats
    (the paper prints 0.97 and 1.83), EMD = 0.15.

    >>> import evaluq as eq
    >>> p, q = [0, 8, 2, 0, 0], [0, 0.2, 0.8, 0, 0]
    >>> [round(float(eq.dirichlet.empirical_metric(p, q, metric=m)), 4)
    ...  for m in ("kl", "cross_entropy", "emd")]
    [0.8318, 1.3322, 0.15]
    """
    check_choice("metric", metric, ("cross_entropy", "kl", "jsd", "emd"))
    if isinstance(counts, DirichletPosterior):
        post, single = counts, counts.single
    else:
        post, single = _as_posterior(counts, None)
    qa = _as_q(q, post)
    n_ann = check_values(post.n_annotations, _check_annotated)  # by chunk on dask
    freq = post.counts / n_ann
    return apply_items(_empirical_kernel(metric), freq, qa, core_dims=(CLASS,),
                       item_dims=post.item_dims, squeeze=single, name=f"empirical_{metric}",
                       attrs={"metric": f"{_SHORT[metric]} empirical",
                              "method": "raw frequencies"})


def _check_annotated(n_annotations: np.ndarray) -> None:
    if np.any(n_annotations <= 0):
        raise ValueError("an item has no annotations: the empirical metrics are undefined")


def _bin_labels(edges: Sequence[int]) -> list[str]:
    labels = []
    for lo, hi in zip(edges, [*edges[1:], None], strict=True):
        if hi is None:
            labels.append(f"{lo}+")
        elif hi - 1 == lo:
            labels.append(f"{lo}")
        else:
            labels.append(f"{lo}-{hi - 1}")
    return labels


def _check_edges(edges: Sequence[int]) -> list[int]:
    if isinstance(edges, str | bytes) or not isinstance(edges, Sequence) or len(edges) == 0:
        raise ValueError(f"`bins` must be a non-empty sequence of lower edges; got {edges!r}")
    out: list[int] = []
    for e in edges:
        if isinstance(e, bool) or not isinstance(e, numbers.Integral) or e < 0:
            raise ValueError(f"`bins` must hold non-negative integers; got {edges!r}")
        out.append(int(e))
    if any(b <= a for a, b in itertools.pairwise(out)):
        raise ValueError(f"`bins` must be strictly increasing; got {edges!r}")
    return out


def _check_counts(n: np.ndarray) -> None:
    """Annotation counts: 1-D, non-empty, finite, >= 0 (a NaN count has no bin: refused)."""
    if n.ndim != 1:
        raise ValueError(f"`n_annotations` must be 1-D; got shape {n.shape}")
    if not n.size:
        raise ValueError("`n_annotations` is empty")
    bad = np.flatnonzero(~np.isfinite(n) | (n < 0))
    if bad.size:
        raise ValueError(f"`n_annotations` must be finite counts >= 0; got {float(n[bad[0]])} at "
                         f"item {bad[0]} ({bad.size} such items): an item without a count "
                         f"would fall in no bin, and no item is dropped")


def _no_nan(column: Any, row: np.ndarray) -> np.ndarray:
    """The values of one column; a NaN is refused (a bin's mean would silently leave it out)."""
    bad = np.flatnonzero(np.isnan(row)) if row.dtype.kind in "fc" else np.array([], int)
    if bad.size:
        raise ValueError(f"`values` {column!r} is NaN at item {bad[0]} ({bad.size} of "
                         f"{row.size} items): by_annotation_count averages every item of a "
                         f"bin and drops none; select the items with values (and their "
                         f"`n_annotations`) first")
    return row


def by_annotation_count(
    values: xr.DataArray | xr.Dataset | Mapping[Hashable, xr.DataArray],
    n_annotations: Any,
    *,
    bins: Sequence[int] = DEFAULT_BIN_EDGES,
) -> pd.DataFrame:
    """Mean per-item values in bins of the annotation count (the paper's per-bin table).

    Parameters
    ----------
    values
        Per-item values with an ``item`` dim: a DataArray (other dims, e.g. ``model``, become
        columns), a Dataset or a mapping of name -> DataArray (e.g. ``{"CE_emp": ...,
        "E[CE]": ...}``).
    n_annotations
        Annotations per item (``DirichletPosterior.n_annotations``), same length as ``item``.
    bins
        Lower edges of the bins: ``(0, 2, 4, 6, 11, ...)`` gives 0-1, 2-3, 4-5, 6-10, 11+.
        Every item must fall in a bin (nothing is dropped): the first edge must not exceed the
        smallest count. A NaN (or negative) annotation count, and a NaN value, are refused
        with the item they are at: no item silently leaves its bin's mean.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin (index ``n_bin``), a ``count`` column, then one column per
        value. When the values have another dim (``model``) the columns are a MultiIndex of
        ``(name, model)`` pairs and the count column is ``("count", "")``.

    Examples
    --------
    >>> import evaluq as eq
    >>> post = eq.dirichlet.posterior([[1, 1, 0], [2, 1, 0], [0, 5, 1]])
    >>> ece = eq.dirichlet.expected_cross_entropy(post, [.2, .6, .2])
    >>> eq.dirichlet.by_annotation_count({"E[CE]": ece}, post.n_annotations, bins=[2, 4]).round(4)
           count   E[CE]
    n_bin
    2-3        2  1.2066
    4+         1  0.8770
    """
    edges = _check_edges(bins)
    n = np.asarray(n_annotations.values if isinstance(n_annotations, xr.DataArray)
                   else n_annotations, dtype=np.float64)
    if isinstance(values, xr.DataArray):
        values = {values.name if values.name is not None else "value": values}
    items = dict(values.data_vars.items()) if isinstance(values, xr.Dataset) else dict(values)
    if not items:
        raise ValueError("`values` is empty")
    _check_counts(n)
    if n.min() < edges[0]:
        raise ValueError(
            f"an item has {n.min():g} annotations, below the first bin edge {edges[0]}; "
            "add a lower edge to `bins`"
        )
    which = np.searchsorted(np.asarray(edges), n, side="right") - 1
    labels = np.asarray(_bin_labels(edges))
    frame: dict[Any, Any] = {}
    for name, da in items.items():
        if ITEM not in da.dims or da.sizes[ITEM] != n.size:
            raise ValueError(
                f"`values` {name!r} need an {ITEM!r} dim of the length of `n_annotations`, "
                f"{n.size}; got {dict(da.sizes)}"
            )
        other = [d for d in da.dims if d != ITEM]
        if len(other) > 1:
            raise ValueError(f"values {name!r} may have one dim besides {ITEM!r}; got {da.dims}")
        arr = da.transpose(*other, ITEM).values.reshape(-1, n.size)
        cols = [name] if not other else [(name, c) for c in da[other[0]].values.tolist()]
        for col, row in zip(cols, arr, strict=True):
            frame[col] = _no_nan(col, row)
    count_col: Any = "count"
    if any(isinstance(col, tuple) for col in frame):
        frame = {(col if isinstance(col, tuple) else (col, "")): v for col, v in frame.items()}
        count_col = ("count", "")
    df = pd.DataFrame({count_col: np.ones(n.size, dtype=np.int64), **frame})
    bin_of_item = pd.Series(pd.Categorical(labels[which], categories=labels, ordered=True))
    grouped = df.groupby(bin_of_item, observed=True)
    out = grouped.mean()
    out[count_col] = grouped.size().astype(int)
    out.index.name = "n_bin"
    out.index = pd.Index(out.index.astype(str), name="n_bin")
    return out

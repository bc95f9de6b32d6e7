"""The two-system test on dask-backed inputs: items read chunk by chunk, never whole.

The test needs the items only through a small summary, which is built per chunk of items and
combined on the client:

* **hard labels**: the item count of every (target, h0, h1) cell. Each chunk is validated and
  encoded over its own label set and reduced to its cells and counts; the client maps the
  chunks' labels onto the global label set (the user's ``labels`` or the sorted union) and adds
  the counts. The cells and counts are those of the in-memory path, for any chunking.
* **soft labels, regression**: the per-item statistics of every metric, ``(2, N, S)``, computed
  per chunk (the ``(N, K)`` probability rows are never whole in memory; the statistics are).
  A metric's per-item statistics must depend on that item only (checked on a probe), so the
  rows are those of the in-memory path.

Then the unchanged engine runs on the summary: the same numbers as in memory for the same rng.
dask is imported inside the functions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from evaluq._dims import CLASS, ITEM
from evaluq.metrics._base import Metric
from evaluq.metrics._inputs import check_label_set, load_predictions, prepare_inputs
from evaluq.significance import _engine

NAMES = ("targets", "h0", "h1")


def is_lazy(obj: Any) -> bool:
    """Whether ``obj`` is a dask array or a dask-backed DataArray."""
    if isinstance(obj, xr.DataArray):
        return obj.chunks is not None
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "chunks")


def _as_array(name: str, obj: Any) -> tuple[Any, np.ndarray | None, np.ndarray | None, bool]:
    """``(array, item index, class index, has class dim)``; dask arrays stay lazy."""
    if isinstance(obj, str | os.PathLike):
        return load_predictions(obj), None, None, False
    if isinstance(obj, xr.Dataset):
        raise TypeError(f"`{name}` must be an array, a DataArray or a file path; got a Dataset "
                        "(select one variable)")
    if isinstance(obj, xr.DataArray):
        if ITEM not in obj.dims:
            raise ValueError(f"`{name}` must have an {ITEM!r} dim; got dims {list(obj.dims)}")
        tail = (ITEM, CLASS) if CLASS in obj.dims else (ITEM,)
        if set(obj.dims) != set(tail):
            raise ValueError(f"`{name}` must have dims {list(tail)} only; got {list(obj.dims)}")
        da = obj.transpose(*tail)
        return (da.data, da[ITEM].values if ITEM in da.coords else None,
                da[CLASS].values if CLASS in da.coords else None, CLASS in obj.dims)
    if is_lazy(obj):
        return obj, None, None, False
    try:
        return np.asarray(obj), None, None, False
    except ValueError as err:  # ragged lists
        raise ValueError(f"`{name}` could not be read as an array: {err}") from None


def _check_layout(arrays: Sequence[Any], kind: str) -> None:
    """Shapes only (nothing read): dims, equal item and class counts, coordinates."""
    core = 2 if kind == "soft" else 1
    shape_text = "(item, class)" if core == 2 else "(item,)"
    for name, a in zip(NAMES, arrays, strict=True):
        if a.ndim != core:
            raise ValueError(f"`{name}` must be {core}-D {shape_text} for {kind} inputs; got "
                             f"shape {a.shape}")
        if a.shape[0] == 0:
            raise ValueError(f"`{name}` is empty")
    n = arrays[0].shape[0]
    for name, a in zip(NAMES[1:], arrays[1:], strict=True):
        if a.shape[0] != n:
            raise ValueError(f"`{name}` has {a.shape[0]} items but `targets` has {n}")
        if core == 2 and a.shape[1] != arrays[0].shape[1]:
            raise ValueError(f"`{name}` has {a.shape[1]} classes but `targets` has "
                             f"{arrays[0].shape[1]}")
    if core == 2 and arrays[0].shape[1] < 2:
        raise ValueError(f"soft labels need at least 2 classes; `targets` has "
                         f"{arrays[0].shape[1]}")


def _check_index(indexes: Sequence[np.ndarray | None], dim: str) -> None:
    ref = indexes[0]
    for name, other in zip(NAMES[1:], indexes[1:], strict=True):
        if ref is not None and other is not None and not np.array_equal(ref, other):
            raise ValueError(f"the {dim!r} coordinates of `{name}` and `targets` differ; align "
                             "them first (nothing is reordered silently)")


def _detect_kind(arrays: Sequence[Any], has_class: bool) -> str:
    """In-memory rule: 2-D or a class dim is soft; a non-integer float anywhere makes 1-D
    inputs regression, else hard. Float inputs are scanned (one chunked reduction); pass
    ``kind`` to read them once."""
    if arrays[0].ndim >= 2 or has_class:
        return "soft"
    floats = [a for a in arrays if np.dtype(a.dtype).kind == "f"]
    if not floats:
        return "hard"
    import dask
    import dask.array as da

    flags = dask.compute(*[da.any(a != da.round(a)) if is_lazy(a)
                           else bool((a != np.round(a)).any()) for a in floats])
    return "regression" if any(bool(f) for f in flags) else "hard"


def _blocks(arrays: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The inputs as aligned chunks of items: ``[(targets_c, h0_c, h1_c), ...]`` (delayed)."""
    import dask.array as da

    lazy = [a for a in arrays if is_lazy(a)]
    item_chunks = lazy[0].chunks[0]  # the first lazy input sets the chunks of items
    aligned = []
    for a in arrays:
        chunks = (item_chunks, *((s,) for s in a.shape[1:]))
        aligned.append(a.rechunk(chunks) if is_lazy(a) else da.from_array(a, chunks=chunks))
    delayed = [a.to_delayed().ravel() for a in aligned]
    return list(zip(*delayed, strict=True))


def _hard_chunk(t: np.ndarray, a: np.ndarray, b: np.ndarray, labels: Any, start: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One chunk of hard labels: validated, encoded over its own label set (or ``labels``),
    reduced to ``(label set, cells (3, C) of codes, counts (C,))``."""
    try:
        p = prepare_inputs(t, a, b, kind="hard", labels=labels, names=("h0", "h1"))
    except (ValueError, TypeError) as err:
        raise type(err)(f"{err} (in the chunk of items {start}..{start + len(t) - 1})"
                        ) from None
    k = p.n_classes
    a_code, b_code = p.predictions
    cells, counts = np.unique(_engine.cell_codes(p.targets, a_code, b_code, k),
                              return_counts=True)
    y, rest = np.divmod(cells, k * k)
    return np.asarray(p.labels), np.stack([y, *np.divmod(rest, k)]), counts


def _item_chunk(t: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str,
                metrics: Sequence[Metric], start: int) -> np.ndarray:
    """One chunk of soft / regression items: validated, per-item statistics ``(2, n, S)``."""
    try:
        p = prepare_inputs(t, a, b, kind=kind, names=("h0", "h1"))  # type: ignore[arg-type]
    except (ValueError, TypeError) as err:
        raise type(err)(f"{err} (in the chunk of items {start}..{start + len(t) - 1})"
                        ) from None
    q0, q1 = p.predictions
    stats, _ = _engine.item_stats(metrics, p.targets, q0, q1, p.n_classes)
    return stats


def check_item_local(metric: Metric, kind: str, n_classes: int) -> None:
    """Raise unless ``metric``'s per-item statistics depend on that item alone.

    Probe: three items evaluated together and one at a time must give the same rows (a
    statistic centred on the items' mean, as entropy correlation's, does not)."""
    rng = np.random.default_rng(0)  # a fixed probe, not a random draw of the test
    if kind == "soft":
        t = rng.dirichlet(np.ones(n_classes), size=3)
        q = rng.dirichlet(np.ones(n_classes), size=3)
    else:
        t, q = rng.normal(size=3), rng.normal(size=3)
    with np.errstate(all="ignore"):
        together = np.asarray(metric.item_stats(t, q, n_classes), dtype=np.float64)
        alone = np.concatenate([np.asarray(metric.item_stats(t[i:i + 1], q[i:i + 1], n_classes),
                                           dtype=np.float64) for i in range(3)])
    if not np.array_equal(together, alone, equal_nan=True):
        raise ValueError(f"metric {metric.name!r} computes an item's statistics from all the "
                         "items (e.g. centred on their mean), so it cannot be evaluated on "
                         "dask inputs chunk by chunk; leave it out of `metrics` or pass "
                         "in-memory arrays")


def stream_unit(targets: Any, h0: Any, h1: Any, *, kind: str | None,
                labels: Sequence[Any] | None, resolve: Any
                ) -> tuple[_engine.Unit, list[int], list[Metric], str, int]:
    """The :class:`~evaluq.significance._engine.Unit` of dask-backed inputs, chunk by chunk.

    ``resolve(kind, label_set)`` returns the metric objects (bound to the label set for hard
    labels). Returns ``(unit, widths, metrics, kind, n_classes)``; the unit equals
    :func:`~evaluq.significance._engine.make_unit`'s on the same items in memory.
    """
    import dask

    raw = [_as_array(n, x) for n, x in zip(NAMES, (targets, h0, h1), strict=True)]
    arrays = [r[0] for r in raw]
    if kind is None:
        kind = _detect_kind(arrays, raw[0][3])
    if labels is not None and kind != "hard":
        raise ValueError(f"`labels` applies to hard labels only; these inputs are {kind}")
    _check_layout(arrays, kind)
    _check_index([r[1] for r in raw], ITEM)
    _check_index([r[2] for r in raw], CLASS)
    blocks = _blocks(arrays)
    sizes = next(a for a in arrays if is_lazy(a)).chunks[0]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    if kind != "hard":
        n_classes = int(arrays[0].shape[1]) if kind == "soft" else 0
        metrics = resolve(kind, None)
        for m in metrics:
            check_item_local(m, kind, max(n_classes, 2))
        parts = dask.compute(*[dask.delayed(_item_chunk)(*blk, kind, metrics, int(s))
                               for blk, s in zip(blocks, starts, strict=True)])
        stats = np.concatenate(parts, axis=1)
        t, q = _probe(kind, n_classes)
        _, widths = _engine.item_stats(metrics, t, q, q, n_classes)
        return _engine.item_unit(stats), widths, metrics, kind, n_classes
    user_set = check_label_set(labels) if labels is not None else None
    parts = dask.compute(*[dask.delayed(_hard_chunk)(*blk, user_set, int(s))
                           for blk, s in zip(blocks, starts, strict=True)])
    chunk_sets = [p[0] for p in parts]
    if user_set is not None:
        label_set = user_set
        maps = [np.arange(user_set.size)] * len(parts)
    else:
        text = {s.dtype.kind in "USO" for s in chunk_sets}
        if len(text) > 1:
            raise TypeError("labels must be all strings or all numbers across inputs; the "
                            "chunks of items mix strings and numbers")
        label_set = np.unique(np.concatenate(chunk_sets))
        maps = [np.searchsorted(label_set, s) for s in chunk_sets]
    n_classes = int(label_set.size)
    codes = np.concatenate([_engine.cell_codes(mp[c[0]], mp[c[1]], mp[c[2]], n_classes)
                            for mp, (_, c, _) in zip(maps, parts, strict=True)])
    counts = np.concatenate([p[2] for p in parts])
    cells, inverse = np.unique(codes, return_inverse=True)
    summed = np.zeros(cells.size, dtype=np.int64)
    np.add.at(summed, inverse.ravel(), counts)  # over the chunks' cells (a small table)
    metrics = resolve(kind, label_set)
    unit, widths = _engine.cell_unit(metrics, cells, summed, n_classes)
    return unit, widths, metrics, kind, n_classes


def _probe(kind: str, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """One item (target, prediction) of ``kind``: for the metrics' statistic widths."""
    if kind == "soft":
        row = np.full((1, n_classes), 1.0 / n_classes)
        return row, row
    return np.zeros(1), np.zeros(1)


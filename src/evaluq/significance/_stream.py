"""The two-system test on dask-backed inputs: items read chunk by chunk, never whole.

The test needs the items only through a small summary, which is built per chunk of items and
combined on the client, for one run or several (``compare_runs``: pooled, two-level, crossed):

* **hard labels**: the item count of every (target, h0, h1) cell. Each chunk is validated and
  encoded over its own label set and reduced to its cells and counts; the client maps the
  chunks' labels onto the global label set (the user's ``labels`` or the sorted union over
  every run) and adds the counts, over all runs (pooled) or per run (two-level). Crossed runs
  (one shared test set) are chunked together: each chunk gives its distinct rows of
  (target, h0 and h1 of every run), their counts and each item's row, which the client merges.
  The cells and counts are those of the in-memory path, for any chunking.
* **soft labels, regression**: per chunk, every metric's item-local statistics
  (:meth:`~evaluq.metrics.Metric.chunk_stats`); the ``(N, K)`` probability rows are never
  whole in memory, the ``(2, N, S)`` statistics are. A metric with a global step (entropy
  correlation centres on the mean of all items, of all runs) gets it once on the joined
  local statistics (:meth:`~evaluq.metrics.Metric.finish_stats`), exactly as in memory. A
  metric that does not declare a global step must be item-local (checked on a probe).

Then the unchanged engine runs on the summary: the same numbers as in memory for the same rng,
bit for bit. dask is imported inside the functions.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import CLASS, ITEM
from evaluq._warn import warn
from evaluq.metrics._base import Metric
from evaluq.metrics._inputs import (
    check_label_set,
    item_dims,
    mixed_kinds_message,
    pandas_names,
    prepare_inputs,
    read_input_files,
    stray_value_message,
)
from evaluq.significance import _engine

NAMES = ("targets", "h0", "h1")


def is_lazy(obj: Any) -> bool:
    """Whether ``obj`` is a dask array or a dask-backed DataArray."""
    if isinstance(obj, xr.DataArray):
        return obj.chunks is not None
    return type(obj).__module__.split(".")[0] == "dask" and hasattr(obj, "chunks")


def _as_array(name: str, obj: Any) -> tuple[Any, Any, Any, bool]:
    """``(array, item index, class index, has class dim)``; dask arrays stay lazy. File
    paths are read before (:func:`_read_run_files`)."""
    if isinstance(obj, xr.Dataset):
        raise TypeError(f"`{name}` must be an array, a DataArray or a file path; got a Dataset "
                        "(select one variable)")
    if isinstance(obj, xr.DataArray):
        tail = item_dims(name, obj)
        if set(obj.dims) != set(tail):
            raise ValueError(f"`{name}` must have dims {list(tail)} only; got {list(obj.dims)}")
        da = obj.transpose(*tail)
        return (da.data, da[ITEM].values if ITEM in da.coords else None,
                da[CLASS].values if CLASS in da.coords else None, CLASS in obj.dims)
    if is_lazy(obj):
        return obj, None, None, False
    if isinstance(obj, pd.Series | pd.DataFrame):    # names checked, never reordered here
        index, columns = pandas_names(obj)
        return obj.to_numpy(), index, columns, False
    try:
        return np.asarray(obj), None, None, False
    except ValueError as err:  # ragged lists
        raise ValueError(f"`{name}` could not be read as an array: {err}") from None


def _check_layout(arrays: Sequence[Any], kind: str) -> None:
    """Shapes only (nothing read): dims, equal item and class counts, coordinates."""
    core = 2 if kind == "soft" else 1
    shape_text = "(item, class)" if core == 2 else "(item,)"
    _check_one_kind(arrays, kind)
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


def _check_index(indexes: Sequence[Any], dim: str) -> None:
    """The inputs that name their items (classes) name the same, in one order: the first
    that names them is the reference (the two predictions when the targets name none)."""
    named = [(n, x) for n, x in zip(NAMES, indexes, strict=True) if x is not None]
    for name, other in named[1:]:
        if not np.array_equal(named[0][1], other):
            raise ValueError(f"the {dim!r} coordinates of `{name}` and `{named[0][0]}` differ "
                             "(a pandas input's index or columns, or a .csv file's header, "
                             "count as its coordinates); align them first (nothing is "
                             "reordered silently)")


def _check_one_kind(arrays: Sequence[Any], kind: str | None = None) -> None:
    """Refuse label (1-D) targets with probability-row (2-D) predictions, or the other way
    round (:func:`~evaluq.metrics._inputs.mixed_kinds_message`)."""
    mixed = next((i for i, a in enumerate(arrays[1:], 1)
                  if {arrays[0].ndim, a.ndim} == {1, 2}), None)
    if mixed is not None:
        raise ValueError(mixed_kinds_message(NAMES[0], arrays[0].shape, NAMES[mixed],
                                             arrays[mixed].shape, kind))


def _detect_kind(arrays: Sequence[Any], has_class: bool) -> str:
    """In-memory rule (:func:`~evaluq.metrics.prepare_inputs`): 2-D or a class dim is soft;
    1-D targets with probability rows are an error; non-integer float targets are regression;
    whole-number targets with a non-integer prediction are an error (labels or real
    values?); else hard. Float inputs are scanned (one chunked reduction); pass ``kind`` to
    read them once."""
    _check_one_kind(arrays)
    if arrays[0].ndim >= 2 or has_class:
        return "soft"
    floats = [i for i, a in enumerate(arrays) if np.dtype(a.dtype).kind == "f"]
    if not floats:
        return "hard"
    import dask
    import dask.array as da

    odd = [da.count_nonzero(a != da.round(a)) if is_lazy(a)
           else int(np.count_nonzero(a != np.round(a))) for a in (arrays[i] for i in floats)]
    counts = dict(zip(floats, (int(c) for c in dask.compute(*odd)), strict=True))
    if counts.get(0, 0):
        return "regression"
    stray = next((i for i in floats if counts[i]), None)
    if stray is None:
        return "hard"
    a = arrays[stray]                   # whole-number targets: labels, or real values?
    at = int(dask.compute(da.argmax(a != da.round(a)) if is_lazy(a)
                          else np.argmax(a != np.round(a)))[0])
    raise ValueError(stray_value_message(NAMES[stray], counts[stray], f"item {at}",
                                         float(dask.compute(a[at])[0])))


def _blocks(arrays: Sequence[Any], item_chunks: tuple[int, ...] | None = None
            ) -> tuple[list[tuple[Any, ...]], np.ndarray]:
    """The inputs as aligned chunks of items, ``[(a_c, b_c, ...), ...]`` (delayed), and the
    first item of every chunk. ``item_chunks`` default: those of the first lazy input (one
    chunk if none is lazy)."""
    import dask.array as da

    if item_chunks is None:
        lazy = [a for a in arrays if is_lazy(a)]
        item_chunks = lazy[0].chunks[0] if lazy else (int(arrays[0].shape[0]),)
    aligned = []
    for a in arrays:
        chunks = (item_chunks, *((s,) for s in a.shape[1:]))
        aligned.append(a.rechunk(chunks) if is_lazy(a) else da.from_array(a, chunks=chunks))
    delayed = [a.to_delayed().ravel() for a in aligned]
    starts = np.concatenate([[0], np.cumsum(item_chunks)[:-1]]).astype(int)
    return list(zip(*delayed, strict=True)), starts


def _where(run: int | None, start: int, n: int) -> tuple[str, str]:
    """Prefix and suffix of a chunk's error messages."""
    pre = "" if run is None else f"run {run}: "
    return pre, f" (in the chunk of items {start}..{start + n - 1})"


def _prepare(t: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str, labels: Any,
             run: int | None, start: int) -> Any:
    try:
        return prepare_inputs(t, a, b, kind=kind, labels=labels,  # type: ignore[arg-type]
                              names=("h0", "h1"))
    except (ValueError, TypeError) as err:
        pre, post = _where(run, start, len(t))
        raise type(err)(f"{pre}{err}{post}") from None


def _hard_chunk(t: np.ndarray, a: np.ndarray, b: np.ndarray, labels: Any, start: int,
                run: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One chunk of hard labels: validated, encoded over its own label set (or ``labels``),
    reduced to ``(label set, cells (3, C) of codes, counts (C,))``."""
    p = _prepare(t, a, b, "hard", labels, run, start)
    k = p.n_classes
    a_code, b_code = p.predictions
    cells, counts = np.unique(_engine.cell_codes(p.targets, a_code, b_code, k),
                              return_counts=True)
    y, rest = np.divmod(cells, k * k)
    return np.asarray(p.labels), np.stack([y, *np.divmod(rest, k)]), counts


def _union(sets: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The sorted union of label sets and each set's codes in it."""
    if len({s.dtype.kind in "USO" for s in sets}) > 1:
        raise TypeError("labels must be all strings or all numbers across inputs; the "
                        "chunks of items (or the runs) mix strings and numbers")
    label_set = np.unique(np.concatenate(sets))
    return label_set, [np.searchsorted(label_set, s) for s in sets]


def _shared_targets(targets: Sequence[np.ndarray], run_names: Sequence[Any], start: int
                    ) -> None:
    """Crossed runs: every run's targets of this chunk equal run 0's (the in-memory check)."""
    first = targets[0]
    for name, t in zip(run_names[1:], targets[1:], strict=True):
        if t.shape != first.shape or not np.array_equal(t, first):
            diff = np.flatnonzero(np.any((t != first).reshape(t.shape[0], -1), axis=1))
            where = f" (first at item {start + int(diff[0])})" if diff.size else ""
            raise ValueError(f"`runs` 'crossed' needs every run to score one shared test set: "
                             f"runs {run_names[0]!r} and {name!r} have different "
                             f"targets{where}; use 'two-level' for runs on different test "
                             "sets")


def _crossed_hard_chunk(block: Sequence[np.ndarray], labels: Any, start: int,
                        run_names: Sequence[Any]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One chunk of crossed runs of hard labels, ``block = (t_0, a_0, b_0, t_1, ...)``:
    ``(label set, distinct rows (D, 1 + 2R) of label codes [y, a_0, b_0, a_1, b_1, ...],
    their counts (D,), each item's row (n,))``, rows sorted as in memory."""
    n_runs = len(block) // 3
    prepared = [_prepare(block[3 * r], block[3 * r + 1], block[3 * r + 2], "hard", labels, r,
                         start)
                for r in range(n_runs)]
    if labels is not None:
        label_set = np.asarray(prepared[0].labels)
        maps = [np.arange(label_set.size)] * n_runs
    else:
        label_set, maps = _union([np.asarray(p.labels) for p in prepared])
    codes = [(mp[p.targets], mp[p.predictions[0]], mp[p.predictions[1]])
             for mp, p in zip(maps, prepared, strict=True)]
    _shared_targets([c[0] for c in codes], run_names, start)
    columns = [codes[0][0]] + [x for _, a, b in codes for x in (a, b)]
    rows, inverse, counts = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True,
                                      return_counts=True)
    return label_set, rows, counts, np.asarray(inverse).ravel()


def _local_stats(metrics: Sequence[Metric], p: Any) -> np.ndarray:
    """Item-local statistics ``(2, n, P)`` of h0 and h1 for every metric, side by side."""
    q = np.stack(list(p.predictions))
    return np.concatenate([m.chunk_stats(p.targets, q, p.n_classes) for m in metrics], axis=-1)


def _item_chunk(t: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str,
                metrics: Sequence[Metric], start: int, run: int | None = None) -> np.ndarray:
    """One chunk of soft / regression items: validated, local statistics ``(2, n, P)``."""
    return _local_stats(metrics, _prepare(t, a, b, kind, None, run, start))


def _crossed_item_chunk(block: Sequence[np.ndarray], kind: str, metrics: Sequence[Metric],
                        start: int, run_names: Sequence[Any]) -> list[np.ndarray]:
    """One chunk of crossed soft / regression runs: the targets checked shared, and per
    run the local statistics ``(2, n, P)``."""
    n_runs = len(block) // 3
    prepared = [_prepare(block[3 * r], block[3 * r + 1], block[3 * r + 2], kind, None, r, start)
                for r in range(n_runs)]
    _shared_targets([p.targets for p in prepared], run_names, start)
    return [_local_stats(metrics, p) for p in prepared]


def _finish(metrics: Sequence[Metric], local: np.ndarray, n_classes: int
            ) -> tuple[np.ndarray, list[int]]:
    """The statistics ``(2, N, S)`` from the joined local ones: each metric's global step
    once on all items (of every run), as :func:`_engine.item_stats` does in memory."""
    t, q = _probe_items(local, n_classes)
    edges = np.cumsum([0] + [m.chunk_stats(t, q, n_classes).shape[-1] for m in metrics])
    blocks = [m.finish_stats(local[..., a:b], n_classes)
              for m, a, b in zip(metrics, edges[:-1], edges[1:], strict=True)]
    return np.concatenate(blocks, axis=-1), [blk.shape[-1] for blk in blocks]


def _probe_items(local: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """One item of the kind (soft rows when ``n_classes``), for the local widths."""
    if n_classes:
        row = np.full((1, n_classes), 1.0 / n_classes)
        return row, row[None]
    return np.zeros(1), np.zeros((1, 1))


def check_item_local(metric: Metric, kind: str, n_classes: int) -> None:
    """Raise unless ``metric``'s item-local statistics depend on that item alone.

    Probe: three items evaluated together and one at a time must give the same rows of
    :meth:`~evaluq.metrics.Metric.chunk_stats` (a metric that centres its
    ``item_stats`` on the items' mean without declaring that global step does not)."""
    rng = np.random.default_rng(0)  # a fixed probe, not a random draw of the test
    if kind == "soft":
        t = rng.dirichlet(np.ones(n_classes), size=3)
        q = rng.dirichlet(np.ones(n_classes), size=3)
    else:
        t, q = rng.normal(size=3), rng.normal(size=3)
    with np.errstate(all="ignore"):
        together = metric.chunk_stats(t, q, n_classes)
        alone = np.concatenate([metric.chunk_stats(t[i:i + 1], q[i:i + 1], n_classes)
                                for i in range(3)])
    if not np.array_equal(together, alone, equal_nan=True):
        raise ValueError(f"metric {metric.name!r} computes an item's statistics from all the "
                         "items (e.g. centred on their mean) without declaring that step "
                         "(`Metric(local_stats=..., global_stats=...)`), so it cannot be "
                         "evaluated on dask inputs chunk by chunk; declare the two steps, "
                         "leave it out of `metrics` or pass in-memory arrays")


def _read_run_files(run: Sequence[Any], kind: str | None, labels: Any) -> tuple[list[Any], Any]:
    """One run's (targets, h0, h1) with its files read as in memory: the ``.txt`` files'
    lines typed together, with ``labels`` (:func:`~evaluq.metrics._inputs.read_input_files`,
    as :func:`~evaluq.metrics.prepare_inputs` reads them), never file by file."""
    if not any(isinstance(x, str | os.PathLike) for x in run):
        return list(run), labels
    return read_input_files(list(zip(NAMES, run, strict=True)), kind=kind, labels=labels)


def _run_arrays(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any],
                kind: str | None, labels: Any = None) -> tuple[list[list[Any]], str, Any]:
    """Every run's three arrays (lazy ones stay lazy; files read, :func:`_read_run_files`),
    layout-checked; the kind; and ``labels``, typed like the runs' label files."""
    many = len(targets) > 1
    arrays, has_class = [], []
    typed_labels = labels
    for r, run in enumerate(zip(targets, h0, h1, strict=True)):
        try:
            inputs, typed = _read_run_files(run, kind, labels)
            typed_labels = typed if typed is not labels else typed_labels
            raw = [_as_array(n, x) for n, x in zip(NAMES, inputs, strict=True)]
            _check_index([x[1] for x in raw], ITEM)
            _check_index([x[2] for x in raw], CLASS)
        except ValueError as err:
            raise ValueError(f"run {r}: {err}" if many else str(err)) from None
        arrays.append([x[0] for x in raw])
        has_class.append(raw[0][3])
    if kind is None:
        kinds = [_detect_kind(a, c) for a, c in zip(arrays, has_class, strict=True)]
        if len(set(kinds)) > 1:
            raise ValueError(f"the runs hold different kinds of labels: {sorted(set(kinds))}; "
                             "pass `kind`")
        kind = kinds[0]
    for r, a in enumerate(arrays):
        try:
            _check_layout(a, kind)
        except ValueError as err:
            raise ValueError(f"run {r}: {err}" if many else str(err)) from None
    if kind == "soft":
        classes = [int(a[0].shape[1]) for a in arrays]
        if len(set(classes)) > 1:
            raise ValueError(f"every run must have the same number of classes; got {classes}")
    return arrays, kind, typed_labels


@dataclass
class _Runs:
    """Runs with dask-backed inputs, laid out for chunk tasks: crossed runs chunked together
    (``blocks``, ``starts`` over every run's three arrays), other runs each on its own
    (``per_run``: each run's blocks and starts)."""

    names: list[Any]
    arrays: list[list[Any]]
    kind: str
    runs: str
    crossed: bool
    blocks: Any = None
    starts: Any = None
    per_run: list[Any] = field(default_factory=list)

    @property
    def many(self) -> bool:
        return len(self.arrays) > 1

    def tag(self, r: int) -> int | None:
        """The run index that labels a chunk's messages (none for a single run)."""
        return r if self.many else None

    @property
    def pooled(self) -> bool:
        """One unit of every run's items."""
        return self.runs == "pooled" or not self.many


def stream_runs(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any], *,
                kind: str | None, labels: Sequence[Any] | None, resolve: Any,
                runs: str = "pooled", run_names: Sequence[Any] | None = None
                ) -> tuple[list[_engine.Unit], list[int], list[Metric], str, int]:
    """The engine's units of runs with dask-backed inputs, chunk by chunk of items.

    ``runs``: ``"pooled"`` (one unit of every run's items), ``"two-level"`` (one unit per
    run) or ``"crossed"`` (one unit per run over the cells of the shared test set; the runs
    must have equal item counts, and equal targets, checked per chunk). ``resolve(kind,
    label_set)`` returns the metric objects (bound to the label set for hard labels).
    Returns ``(units, widths, metrics, kind, n_classes)``, equal to what
    :func:`~evaluq.significance._bootstrap.compare_runs` builds from the same items in memory.
    """
    names = list(range(len(targets))) if run_names is None else list(run_names)
    arrays, kind, labels = _run_arrays(targets, h0, h1, kind, labels)
    if labels is not None and kind != "hard":
        raise ValueError(f"`labels` applies to hard labels only; these inputs are {kind}")
    layout = _lay_out(names, arrays, kind, runs)
    if kind != "hard":
        return _item_units(layout, resolve)
    user_set = check_label_set(labels) if labels is not None else None
    if layout.crossed:
        return _crossed_hard_units(layout, user_set, resolve)
    return _hard_units(layout, user_set, resolve)


def _lay_out(names: list[Any], arrays: list[list[Any]], kind: str, runs: str) -> _Runs:
    """The runs' chunk blocks; crossed runs must have equal item counts."""
    layout = _Runs(names, arrays, kind, runs, crossed=runs == "crossed" and len(arrays) > 1)
    if not layout.crossed:
        layout.per_run = [_blocks(a) for a in arrays]
        return layout
    sizes = [int(a[0].shape[0]) for a in arrays]
    for name, n in zip(names[1:], sizes[1:], strict=True):
        if n != sizes[0]:
            raise ValueError(f"`runs` 'crossed' needs every run to score one shared test "
                             f"set: run {names[0]!r} has {sizes[0]} items but run "
                             f"{name!r} has {n}; use 'two-level' for runs on different "
                             "test sets")
    layout.blocks, layout.starts = _blocks([x for a in arrays for x in a])
    return layout


_Units = tuple[list[_engine.Unit], list[int], list[Metric], str, int]


def _item_units(layout: _Runs, resolve: Any) -> _Units:
    """Soft labels and regression: per-chunk item-local statistics, the global step once."""
    import dask

    kind, n_runs = layout.kind, len(layout.arrays)
    n_classes = int(layout.arrays[0][0].shape[1]) if kind == "soft" else 0
    metrics = resolve(kind, None)
    for m in metrics:
        if m.item_local:
            check_item_local(m, kind, max(n_classes, 2))
    if layout.crossed:
        parts = dask.compute(*[dask.delayed(_crossed_item_chunk)(blk, kind, metrics,
                                                                 int(s), layout.names)
                               for blk, s in zip(layout.blocks, layout.starts, strict=True)])
        by_run = [np.concatenate([p[r] for p in parts], axis=1) for r in range(n_runs)]
    else:
        tasks = [[dask.delayed(_item_chunk)(*blk, kind, metrics, int(s), layout.tag(r))
                  for blk, s in zip(*layout.per_run[r], strict=True)] for r in range(n_runs)]
        done = dask.compute(*[t for run in tasks for t in run])
        edges = np.cumsum([0] + [len(run) for run in tasks])
        by_run = [np.concatenate(done[a:b], axis=1) for a, b in itertools.pairwise(edges)]
    stats, widths = _finish(metrics, np.concatenate(by_run, axis=1), n_classes)
    if layout.pooled:
        return [_engine.item_unit(stats)], widths, metrics, kind, n_classes
    units = [_engine.item_unit(part) for part in
             np.split(stats, np.cumsum([b.shape[1] for b in by_run])[:-1], axis=1)]
    return units, widths, metrics, kind, n_classes


MACRO_AVERAGES = ("f1", "precision", "recall")
"""The built-in metrics that average over the label set (without ``target_class``)."""


def warn_labels_without_targets(true_counts: np.ndarray, label_set: np.ndarray,
                                metrics: Sequence[Metric]) -> None:
    """Say which labels of the test's label set no target holds, when a macro average uses
    it: each counts as a class with recall 0.0 for both systems (and precision and F1 0.0 for a
    system that never predicts it), scikit-learn's zero_division, which formulas.md section 2
    asks to state with a warning. ``true_counts`` (K,) are the targets per label."""
    empty = np.flatnonzero(np.asarray(true_counts) == 0)
    macro = [m.name for m in metrics if m.name in MACRO_AVERAGES and m.target_class is None]
    if empty.size == 0 or not macro:
        return

    from evaluq.metrics._common import UndefinedMetricWarning

    names = label_set.tolist()
    shown = [names[c] for c in empty[:5]]
    more = f" and {empty.size - 5} more" if empty.size > 5 else ""
    warn(
        f"label(s) {shown}{more} of the label set ({len(names)} labels) have no true item: "
        f"the macro {', '.join(macro)} count each as a class with recall 0.0 "
        "for both systems, and precision and F1 0.0 for a system that never predicts it "
        "(scikit-learn's zero_division), which lowers both systems' scores. If those "
        "predictions are malformed answers, map them to one of the targets' labels first",
        UndefinedMetricWarning)


def _crossed_hard_units(layout: _Runs, user_set: np.ndarray | None, resolve: Any) -> _Units:
    """Hard labels of crossed runs: each chunk's distinct rows, merged on the client."""
    import dask

    xparts = dask.compute(*[dask.delayed(_crossed_hard_chunk)(blk, user_set, int(s),
                                                              layout.names)
                            for blk, s in zip(layout.blocks, layout.starts, strict=True)])
    label_set, maps = _global_labels([p[0] for p in xparts], user_set)
    metrics = resolve(layout.kind, label_set)
    n_classes = int(label_set.size)
    rows_all = np.concatenate([mp[p[1]] for mp, p in zip(maps, xparts, strict=True)])
    rows, inv = np.unique(rows_all, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    counts = np.zeros(rows.shape[0], dtype=np.int64)
    np.add.at(counts, inv, np.concatenate([p[2] for p in xparts]))  # a small table
    warn_labels_without_targets(np.bincount(rows[:, 0], weights=counts, minlength=n_classes),
                                label_set, metrics)
    offsets = np.cumsum([0] + [p[1].shape[0] for p in xparts])
    inverse = np.concatenate([inv[o + p[3]] for o, p in zip(offsets, xparts, strict=False)])
    k = max(n_classes, 1)
    cells = np.stack([(rows[:, 0] * k + rows[:, 1 + 2 * r]) * k + rows[:, 2 + 2 * r]
                      for r in range(len(layout.arrays))], axis=1)
    units, widths = _engine.crossed_units(metrics, cells, inverse, counts, n_classes)
    return units, widths, metrics, layout.kind, n_classes


def _hard_units(layout: _Runs, user_set: np.ndarray | None, resolve: Any) -> _Units:
    """Hard labels, pooled or two-level: cell counts per chunk, added per unit."""
    import dask

    tasks = [[dask.delayed(_hard_chunk)(*blk, user_set, int(s), layout.tag(r))
              for blk, s in zip(*layout.per_run[r], strict=True)]
             for r in range(len(layout.arrays))]
    done = dask.compute(*[t for run in tasks for t in run])
    label_set, maps = _global_labels([p[0] for p in done], user_set)
    metrics = resolve(layout.kind, label_set)
    n_classes = int(label_set.size)
    codes = [_engine.cell_codes(mp[c[0]], mp[c[1]], mp[c[2]], n_classes)
             for mp, (_, c, _) in zip(maps, done, strict=True)]
    counts_all = [p[2] for p in done]
    warn_labels_without_targets(np.bincount(np.concatenate(codes) // max(n_classes, 1) ** 2,
                                            weights=np.concatenate(counts_all),
                                            minlength=n_classes), label_set, metrics)
    edges = np.cumsum([0] + [len(run) for run in tasks])
    groups = [(0, len(done))] if layout.pooled else list(itertools.pairwise(edges))
    units: list[_engine.Unit] = []
    widths: list[int] = []
    for a, b in groups:  # loop over runs (a handful)
        cells, inverse = np.unique(np.concatenate(codes[a:b]), return_inverse=True)
        summed = np.zeros(cells.size, dtype=np.int64)
        np.add.at(summed, inverse.ravel(), np.concatenate(counts_all[a:b]))  # a small table
        unit, widths = _engine.cell_unit(metrics, cells, summed, n_classes)
        units.append(unit)
    return units, widths, metrics, layout.kind, n_classes


def _global_labels(chunk_sets: Sequence[np.ndarray], user_set: np.ndarray | None
                   ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The label set of all chunks (the user's, or the union) and each chunk's code map."""
    if user_set is not None:
        return user_set, [np.arange(user_set.size)] * len(chunk_sets)
    return _union(chunk_sets)

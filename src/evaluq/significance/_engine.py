"""Numpy kernels of the two-system significance tests (no xarray here).

Every metric is a function of per-item sufficient statistics (see
:mod:`evaluq.metrics._base`), so a resample is described by how often each item (or each cell
of identical items) is drawn, and the metric sums of a resample are one matrix product
``counts @ stats``. Two representations of the items feed the same kernels:

* **cells** (hard labels): items with the same (target, h0 prediction, h1 prediction) triple
  have identical statistics, so they are merged into at most ``K**3`` cells with a count each.
  A resample of ``s`` items is one multinomial draw of ``s`` over the cells, and ``B``
  resamples cost ``O(B K^3)`` whatever the number of items;
* **items** (soft labels, regression): one "cell" per item with count 1; a resample is drawn
  as ``s`` item indices and turned into counts with ``bincount``.

Resamples are processed in chunks so that no array exceeds a fixed memory budget; no Python
loop runs over resamples or items.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from evaluq.metrics._base import Metric, weighted_sums

CHUNK_BYTES = 8 * 2**20
"""Memory budget of one chunk of resamples (the count matrix and its draws): small enough
that the scattered count updates of the per-item engine stay in cache (measured: 8 MiB is
about 1.7x faster than 32 MiB for 100,000 items)."""


@dataclass(frozen=True)
class Unit:
    """The items of one test set (one run), reduced to weighted cells.

    ``stats0`` / ``stats1`` hold the per-cell statistics of every metric side by side
    (columns ``slices[j]`` belong to metric ``j``), ``counts`` the number of items per cell.
    """

    counts: np.ndarray          # (C,) int64
    stats0: np.ndarray          # (C, S) float64
    stats1: np.ndarray          # (C, S) float64
    compressed: bool
    finite: bool = True         # every statistic finite (else sums use ``weighted_sums``)

    @cached_property
    def stats01(self) -> np.ndarray:
        """``[stats0 | stats1]`` side by side: one pass over the counts gives both sums."""
        return np.hstack([self.stats0, self.stats1])

    @cached_property
    def distinct01(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct columns of :attr:`stats01` and, per column, its index among them.

        Metrics share statistics: F1, precision and recall all carry the confusion matrix,
        so with 10 classes 602 columns hold only 202 distinct ones."""
        return distinct_columns(self.stats01)

    @cached_property
    def exact_sums(self) -> bool:
        """Cells with finite integer statistics: every sum of a resample is an exact integer,
        the same whatever the order of the additions (or BLAS's threads)."""
        return bool(self.compressed and self.finite
                    and np.array_equal(self.stats01, np.round(self.stats01)))

    def sums01(self, weights: np.ndarray) -> np.ndarray:
        """``weights (m, C) @ stats01`` with each distinct column multiplied once.

        Cells only (hard labels, finite statistics; per-item units keep the plain product).
        The result is the same array: a column of a matrix product depends only on that
        column, and with integer statistics (every hard-label metric: counts of confusion
        cells) every sum is an exact integer whatever the summation order."""
        if not (self.compressed and self.finite):
            return self.sums(weights, self.stats01)
        cols, inverse = self.distinct01
        if cols.shape[1] == inverse.size:
            return weights @ self.stats01
        return (weights @ cols)[:, inverse]

    @property
    def n_items(self) -> int:
        return int(self.counts.sum())

    @property
    def n_cells(self) -> int:
        return int(self.counts.size)

    def totals(self) -> tuple[np.ndarray, np.ndarray]:
        w = self.counts.astype(np.float64)[None]
        return self.sums(w, self.stats0)[0], self.sums(w, self.stats1)[0]

    def sums(self, weights: np.ndarray, stats: np.ndarray) -> np.ndarray:
        """``weights (m, C) @ stats (C, S)``; an infinite statistic (a cross-entropy of
        ``+inf``) with weight 0 contributes nothing instead of ``0 * inf = nan``."""
        return weights @ stats if self.finite else weighted_sums(weights, stats)


def distinct_columns(stats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cols, inverse)`` with ``cols[:, inverse] == stats``: the distinct columns once."""
    cols, inverse = np.unique(stats, axis=1, return_inverse=True)
    return cols, np.asarray(inverse).ravel()


def metric_slices(metrics: Sequence[Metric], widths: Sequence[int]) -> list[slice]:
    """Column ranges of each metric in the side-by-side statistics."""
    edges = np.concatenate([[0], np.cumsum(widths)]).astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def _stack_stats(metrics: Sequence[Metric], targets: np.ndarray, preds: np.ndarray,
                 n_classes: int) -> tuple[np.ndarray, list[int]]:
    """Statistics of h0 and h1 for all metrics: (2, C, S_total) and each metric's width."""
    blocks = [np.asarray(m.item_stats(targets, preds, n_classes), dtype=np.float64)
              for m in metrics]
    return np.concatenate(blocks, axis=-1), [b.shape[-1] for b in blocks]


def make_unit(metrics: Sequence[Metric], targets: np.ndarray, h0: np.ndarray, h1: np.ndarray,
              n_classes: int, hard: bool) -> tuple[Unit, list[int]]:
    """Build a :class:`Unit` from encoded items.

    Hard labels (integer codes ``0..K-1``) are merged into cells of identical
    (target, h0, h1) triples; other inputs keep one cell per item.
    """
    if hard:
        code = cell_codes(targets, h0, h1, n_classes)
        if max(int(n_classes), 1) ** 3 <= 4 * code.size:  # a count per possible cell: no sort
            per_cell = np.bincount(code, minlength=max(int(n_classes), 1) ** 3)
            cells = np.flatnonzero(per_cell)
            counts = per_cell[cells]
        else:
            cells, counts = np.unique(code, return_counts=True)
        return cell_unit(metrics, cells, counts, n_classes)
    stats, widths = item_stats(metrics, targets, h0, h1, n_classes)
    return item_unit(stats), widths


def cell_codes(targets: np.ndarray, h0: np.ndarray, h1: np.ndarray,
               n_classes: int) -> np.ndarray:
    """One int64 code per item for its (target, h0, h1) triple of class codes:
    ``(y K + a) K + b``, so that sorted codes order cells by target, then h0, then h1."""
    k = max(int(n_classes), 1)
    return (targets.astype(np.int64) * k + h0.astype(np.int64)) * k + h1.astype(np.int64)


def cell_unit(metrics: Sequence[Metric], cells: np.ndarray, counts: np.ndarray,
              n_classes: int) -> tuple[Unit, list[int]]:
    """The :class:`Unit` of hard labels from its distinct sorted cell codes
    (:func:`cell_codes`) and their item counts: the statistics of one item per cell."""
    k = max(int(n_classes), 1)
    y, rest = np.divmod(cells, k * k)
    a, b = np.divmod(rest, k)
    stats, widths = _stack_stats(metrics, y, np.stack([a, b]), n_classes)
    return Unit(counts.astype(np.int64), stats[0], stats[1], compressed=True,
                finite=bool(np.isfinite(stats).all())), widths


def item_unit(stats: np.ndarray) -> Unit:
    """The per-item :class:`Unit` (one cell per item) of statistics ``(2, N, S)``."""
    return Unit(np.ones(stats.shape[1], dtype=np.int64), stats[0], stats[1],
                compressed=False, finite=bool(np.isfinite(stats).all()))


def item_stats(metrics: Sequence[Metric], targets: np.ndarray, h0: np.ndarray,
               h1: np.ndarray, n_classes: int) -> tuple[np.ndarray, list[int]]:
    """Per-item statistics ``(2, N, S)`` of h0 and h1 for all metrics, and each width."""
    return _stack_stats(metrics, targets, np.stack([h0, h1]), n_classes)


def split_units(metrics: Sequence[Metric], targets: np.ndarray, h0: np.ndarray,
                h1: np.ndarray, sizes: Sequence[int], n_classes: int
                ) -> tuple[list[Unit], list[int]]:
    """One per-item :class:`Unit` per run from the concatenated runs (soft labels,
    regression). The statistics are computed in one call on all runs, so that statistics
    centred on the items' mean (entropy correlation) share one centre and add up across
    runs; per-run calls would centre each run on its own mean and the pooled sums would be
    wrong."""
    stats, widths = _stack_stats(metrics, targets, np.stack([h0, h1]), n_classes)
    units = []
    for part in np.split(stats, np.cumsum(sizes)[:-1], axis=1):  # loop over runs
        units.append(Unit(np.ones(part.shape[1], dtype=np.int64), part[0], part[1],
                          compressed=False, finite=bool(np.isfinite(part).all())))
    return units, widths


def make_crossed_units(metrics: Sequence[Metric], targets: np.ndarray,
                       h0: Sequence[np.ndarray], h1: Sequence[np.ndarray], n_classes: int,
                       hard: bool) -> tuple[list[Unit], list[int]]:
    """One :class:`Unit` per run for runs that score ONE shared test set, over shared cells.

    Every unit has the same cells with the same counts, so one draw of cell counts is a draw
    of test items for every run at once. Hard labels: items with the same target and the same
    (h0, h1) predictions in *every* run have identical statistics in every run, so they are
    merged into cells (the distinct rows of the ``(N, R)`` matrix of per-run cell codes; at
    most ``min(N, K^(2R+1))``). Other inputs keep one cell per item.
    """
    if not hard:
        n_runs = len(h0)
        reps = (n_runs,) + (1,) * (targets.ndim - 1)
        return split_units(metrics, np.tile(targets, reps), np.concatenate(list(h0)),
                           np.concatenate(list(h1)), [targets.shape[0]] * n_runs, n_classes)
    k = max(int(n_classes), 1)
    y = targets.astype(np.int64)
    codes = np.stack([(y * k + a.astype(np.int64)) * k + b.astype(np.int64)
                      for a, b in zip(h0, h1, strict=True)], axis=1)
    if (2 * codes.shape[1] + 1) * np.log2(k) < 62:  # one int64 key per item: a 1-D sort
        key = y.copy()
        for r in range(codes.shape[1]):  # loop over runs (a handful)
            key = key * (k * k) + codes[:, r] % (k * k)
        _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True,
                                              return_counts=True)
        rows = codes[first]
    else:
        rows, inverse, counts = np.unique(codes, axis=0, return_inverse=True,
                                          return_counts=True)
    return crossed_units(metrics, rows, np.asarray(inverse).ravel(), counts, n_classes)


def crossed_units(metrics: Sequence[Metric], rows: np.ndarray, inverse: np.ndarray,
                  counts: np.ndarray, n_classes: int) -> tuple[list[Unit], list[int]]:
    """The units of :func:`make_crossed_units` from the distinct rows ``(D, R)`` of per-run
    cell codes (:func:`cell_codes`, sorted), their item counts ``(D,)`` and each item's row
    ``inverse`` ``(N,)``."""
    k = max(int(n_classes), 1)
    # few distinct rows: one multinomial over the cells; many (more than N / 8, e.g. many
    # runs): drawing item indices is cheaper, so keep one cell per item
    compressed = 8 * rows.shape[0] <= inverse.size
    units: list[Unit] = []
    widths: list[int] = []
    for r in range(rows.shape[1]):  # loop over runs (a handful)
        yy, rest = np.divmod(rows[:, r], k * k)
        a, b = np.divmod(rest, k)
        stats, widths = _stack_stats(metrics, yy, np.stack([a, b]), n_classes)
        if not compressed:
            stats = stats[:, inverse]
        units.append(Unit(counts.astype(np.int64) if compressed
                          else np.ones(inverse.size, dtype=np.int64),
                          stats[0], stats[1], compressed=compressed,
                          finite=bool(np.isfinite(stats).all())))
    return units, widths


# --- values from sums ---------------------------------------------------------------------------

def values_from_sums(metrics: Sequence[Metric], slices: Sequence[slice], sums: np.ndarray,
                     total: np.ndarray, n_classes: int) -> np.ndarray:
    """Metric values ``(M, ...)`` from side-by-side sums ``(..., S_total)``."""
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        # zero-division warnings of resamples (a class never predicted in a sub-sample) are
        # expected and silenced here; the metric's own convention (0 or NaN) is kept
        warnings.simplefilter("ignore")
        return np.stack([np.asarray(m.from_sums(sums[..., sl], total, n_classes),
                                    dtype=np.float64)
                         for m, sl in zip(metrics, slices, strict=True)])


def oriented_delta(metrics: Sequence[Metric], v0: np.ndarray, v1: np.ndarray) -> np.ndarray:
    """``M(h1) - M(h0)`` for higher-is-better metrics, ``M(h0) - M(h1)`` otherwise."""
    sign = np.array([1.0 if m.higher_is_better else -1.0 for m in metrics])
    sign = sign.reshape((-1,) + (1,) * (np.ndim(v0) - 1))
    with np.errstate(invalid="ignore"):   # inf - inf (both systems infinite): NaN, said by
        return sign * (v1 - v0)           # BootstrapTestResult.nan_reason


# --- resample draws -----------------------------------------------------------------------------

def chunk_size(n_resamples: int, width: int) -> int:
    """Resamples per chunk so that a ``(chunk, width)`` float64 array fits the budget."""
    return int(max(1, min(n_resamples, CHUNK_BYTES // (8 * max(width, 1)))))


def draw_counts(rng: np.random.Generator, unit: Unit, size: int | np.ndarray,
                n_draws: int) -> np.ndarray:
    """Cell counts of ``n_draws`` resamples of ``size`` items drawn with replacement.

    ``size`` is an int (every resample the same size) or an int array ``(n_draws,)``.
    Cells: one multinomial draw over the cells, with probabilities proportional to the cell
    counts. Items (one cell each, scalar size): ``size`` uniform indices turned into counts,
    which has the same distribution and costs ``O(size + N)`` instead of ``N`` binomials.
    """
    if unit.compressed or not np.isscalar(size):
        p = unit.counts / unit.counts.sum()
        if np.isscalar(size):
            return rng.multinomial(int(size), p, size=n_draws).astype(np.float64)
        return rng.multinomial(np.asarray(size, dtype=np.int64), p).astype(np.float64)
    n = unit.n_cells
    idx = rng.integers(0, n, size=(n_draws, int(size)))
    idx += (np.arange(n_draws, dtype=np.int64) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=n_draws * n).reshape(n_draws, n).astype(
        np.float64)


def prefetched[T](chunks: Iterator[T], depth: int = 2) -> Iterator[T]:
    """``chunks`` produced in a background thread, up to ``depth`` chunks ahead.

    The random draws of a test (numpy's multinomial and binomial draws release the GIL) then
    overlap with the sums and metric values of the chunks already drawn. The draws still
    come from the one generator in the same order, so the numbers are those of a plain loop
    for the same rng. With a single chunk there is nothing to overlap: no thread.
    Exceptions of the producer are raised here; closing this iterator stops the producer
    (and waits for it, so the generator is free again when this returns).
    """
    items: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in chunks:
                while not stop.is_set():
                    try:
                        items.put(("item", item), timeout=0.05)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            items.put(("end", None))
        except BaseException as err:  # handed to the consumer, raised there
            items.put(("error", err))

    worker = threading.Thread(target=produce, name="evaluq-draws", daemon=True)
    worker.start()
    try:
        while True:
            tag, item = items.get()
            if tag == "end":
                return
            if tag == "error":
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                items.get(timeout=0.05)
        worker.join()


_BLAS = threading.Lock()
_blas_users: dict[str, Any] = {"count": 0, "limiter": None, "controller": None}


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """BLAS on one thread while the draws run in :func:`prefetched`'s thread.

    On two cores, OpenBLAS's second thread (and its spinning between calls) competes with
    the draws, the slowest part of a test: measured on the paired 10-class test (10^6 items x
    10^4 resamples), limiting it cut the CPU time from 1.59 s to 1.30 s. The limit is for
    the whole process while it lasts (threadpoolctl), shared by concurrent tests (counted
    under a lock, the first sets it and the last restores it). Used only for sums that are
    exact integers (:attr:`Unit.exact_sums`), so that the numbers cannot depend on it.
    """
    from threadpoolctl import ThreadpoolController

    with _BLAS:
        if _blas_users["controller"] is None:
            _blas_users["controller"] = ThreadpoolController()
        if _blas_users["count"] == 0:
            _blas_users["limiter"] = _blas_users["controller"].limit(limits=1, user_api="blas")
        _blas_users["count"] += 1
    try:
        yield
    finally:
        with _BLAS:
            _blas_users["count"] -= 1
            if _blas_users["count"] == 0:
                _blas_users["limiter"].restore_original_limits()
                _blas_users["limiter"] = None


def _chunk_bounds(n_resamples: int, chunk: int) -> list[tuple[int, int]]:
    return [(start, min(chunk, n_resamples - start)) for start in range(0, n_resamples, chunk)]


def iter_bootstrap_sums(rng: np.random.Generator, units: Sequence[Unit], n_resamples: int,
                        fraction: float | None, two_level: bool
                        ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Sums of h0 and h1 statistics over bootstrap resamples, one chunk at a time.

    One unit: each resample draws ``s = round(fraction * N)`` items with replacement
    (``fraction=None``: ``s = N``). Several units with ``two_level``: each resample first
    draws ``R`` runs with replacement, then, for every drawn run, its items (so a run drawn
    ``c`` times contributes ``c * s_r`` independently drawn items: one multinomial of that
    size). Without ``two_level`` the units must have been pooled into one beforehand.

    Yields ``(sums0, sums1, totals)`` of shapes ``(m, S)``, ``(m, S)``, ``(m,)`` for chunks
    of ``m`` resamples (so that the caller reduces them to metric values chunk by chunk and
    the memory stays bounded whatever ``n_resamples``). The draws of later chunks are made
    in a background thread while a chunk's sums are computed (:func:`prefetched`).
    """
    width = units[0].stats0.shape[1]
    sizes = [round((fraction or 1.0) * u.n_items) for u in units]
    n_units = len(units)
    widest = max(max(u.n_cells for u in units), max(sizes) if not units[0].compressed else 0)
    bounds = _chunk_bounds(n_resamples, chunk_size(n_resamples, widest + 2 * width))

    def draws() -> Iterator[list[np.ndarray]]:  # every use of rng, in the order of a loop
        for _, m in bounds:
            if two_level:
                run_counts = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=m)
            yield [draw_counts(rng, unit, sizes[r] if not two_level
                               else run_counts[:, r] * sizes[r], m)
                   for r, unit in enumerate(units)]  # loop over runs (a handful)

    threaded = len(bounds) > 1
    one_blas = threaded and all(u.exact_sums for u in units)
    for drawn in (prefetched(draws()) if threaded else draws()):
        m = drawn[0].shape[0]
        s0 = np.zeros((m, width))
        s1 = np.zeros((m, width))
        t = np.zeros(m)
        for unit, counts in zip(units, drawn, strict=True):  # runs (a handful)
            with single_blas_thread() if one_blas else contextlib.nullcontext():
                both = unit.sums01(counts)
            s0 += both[:, :width]
            s1 += both[:, width:]
            t += counts.sum(axis=1)
        yield s0, s1, t


def iter_crossed_sums(rng: np.random.Generator, units: Sequence[Unit], n_resamples: int,
                      fraction: float | None
                      ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Bootstrap sums for ``R`` runs crossed with one shared test set of ``N`` items.

    Each resample draws run counts ``c ~ Multinomial(R, 1/R)`` (the same for h0 and h1: runs
    are paired) and, once, item counts ``w ~ Multinomial(s, 1/N)`` with ``s = round(f N)``
    (``fraction=None``: ``s = N``) shared by every run of both systems. The sums are those of
    the pooled drawn (run, item) pairs: ``sum_r c_r (w @ stats_r)``, over ``R s`` items.
    The units must come from :func:`make_crossed_units` (same cells, same counts).

    Yields chunks ``(sums0, sums1, totals)`` like :func:`iter_bootstrap_sums`.
    """
    base = units[0]
    n_runs = len(units)
    width = base.stats0.shape[1]
    size = round((fraction or 1.0) * base.n_items)
    finite = all(u.finite for u in units)
    stacked = np.hstack([u.stats01 for u in units]) if finite else None  # (C, R * 2S)
    widest = max(base.n_cells, size if not base.compressed else 0)
    chunk = chunk_size(n_resamples, widest + 2 * width * (n_runs + 1))
    for start in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - start)
        run_counts = rng.multinomial(n_runs, np.full(n_runs, 1.0 / n_runs),
                                     size=m).astype(np.float64)
        counts = draw_counts(rng, base, size, m)
        if stacked is not None:
            per_run = (counts @ stacked).reshape(m, n_runs, 2 * width)
            both = np.einsum("mrs,mr->ms", per_run, run_counts)
        else:  # infinite statistics: weight 0 must contribute nothing (no 0 * inf)
            both = np.zeros((m, 2 * width))
            for r, unit in enumerate(units):  # loop over runs (a handful)
                both += unit.sums(counts * run_counts[:, r:r + 1], unit.stats01)
        yield both[:, :width], both[:, width:], counts.sum(axis=1) * n_runs


def iter_permutation_sums(rng: np.random.Generator, unit: Unit, n_resamples: int
                          ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Sums of h0 and h1 statistics after swapping each item's outputs with probability 1/2.

    Swapping ``k`` of the ``n_c`` items of a cell moves ``k * (s1_c - s0_c)`` from h1's sums
    to h0's, so a permutation is a vector of ``Binomial(n_c, 1/2)`` swap counts. Yields
    chunks like :func:`iter_bootstrap_sums` (draws prefetched in a thread likewise).
    """
    width = unit.stats0.shape[1]
    t0, t1 = unit.totals()
    diff = unit.stats1 - unit.stats0
    # cells: each distinct column of ``diff`` multiplied once (see Unit.sums01)
    cols, inverse = (distinct_columns(diff) if unit.compressed and unit.finite
                     else (diff, np.arange(width)))
    bounds = _chunk_bounds(n_resamples, chunk_size(n_resamples, unit.n_cells + 2 * width))

    def draws() -> Iterator[np.ndarray]:  # every use of rng, in the order of a loop
        for _, m in bounds:
            yield rng.binomial(unit.counts, 0.5, size=(m, unit.n_cells)).astype(np.float64)

    threaded = len(bounds) > 1
    one_blas = threaded and unit.exact_sums
    for swaps in (prefetched(draws()) if threaded else draws()):
        m = swaps.shape[0]
        total = np.full(m, float(unit.n_items))
        if unit.finite:
            with single_blas_thread() if one_blas else contextlib.nullcontext():
                moved = swaps @ diff if cols is diff else (swaps @ cols)[:, inverse]
            yield t0 + moved, t1 - moved, total
        else:
            kept = unit.counts - swaps
            yield (unit.sums(kept, unit.stats0) + unit.sums(swaps, unit.stats1),
                   unit.sums(kept, unit.stats1) + unit.sums(swaps, unit.stats0), total)


def collect(chunks: Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]],
            reduce: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Reduce every chunk of sums (e.g. to metric deltas ``(M, m)``); join on the last axis."""
    return np.concatenate([reduce(*c) for c in chunks], axis=-1)


def bootstrap_sums(rng: np.random.Generator, units: Sequence[Unit], n_resamples: int,
                   fraction: float | None, two_level: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All chunks of :func:`iter_bootstrap_sums` joined: ``(B, S)``, ``(B, S)``, ``(B,)``."""
    parts = list(iter_bootstrap_sums(rng, units, n_resamples, fraction, two_level))
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))  # type: ignore[return-value]


def permutation_sums(rng: np.random.Generator, unit: Unit, n_resamples: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All chunks of :func:`iter_permutation_sums` joined."""
    parts = list(iter_permutation_sums(rng, unit, n_resamples))
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))  # type: ignore[return-value]


def _leave_one_out(counts: np.ndarray, stats: np.ndarray, total: np.ndarray,
                   finite: bool) -> np.ndarray:
    """Sums without one item of each cell: ``total - stats``, kept exact when a statistic
    is infinite (``inf - inf`` would give NaN; counting the infinite items does not)."""
    if finite:
        return total - stats
    w = counts.astype(np.float64)

    def others(mask: np.ndarray) -> np.ndarray:  # how many other items have the property
        m = mask.astype(np.float64)
        return w @ m - m

    fin = np.where(np.isfinite(stats), stats, 0.0)
    out = w @ fin - fin
    pos, neg, nan = others(stats == np.inf), others(stats == -np.inf), others(np.isnan(stats))
    out = np.where(pos > 0, np.inf, out)
    out = np.where(neg > 0, -np.inf, out)
    return np.where((nan > 0) | ((pos > 0) & (neg > 0)), np.nan, out)


def jackknife_deltas(metrics: Sequence[Metric], slices: Sequence[slice], units: Sequence[Unit],
                     n_classes: int, by_unit: bool) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out deltas ``(M, J)`` and their weights ``(J,)``.

    Leaving item i out changes the sums by ``-s_i``: the leave-one-out sums are
    ``total - stats`` for every cell at once (identical items share one value, weighted by
    the cell count). With ``by_unit`` the runs are left out instead.
    """
    pairs = [u.totals() for u in units]
    t0 = np.sum([p[0] for p in pairs], axis=0)
    t1 = np.sum([p[1] for p in pairs], axis=0)
    n = float(sum(u.n_items for u in units))
    if by_unit:
        # sums over the other runs (a handful), exact with infinite statistics
        loo0 = np.stack([sum(p[0] for j, p in enumerate(pairs) if j != r)
                         for r in range(len(pairs))])
        loo1 = np.stack([sum(p[1] for j, p in enumerate(pairs) if j != r)
                         for r in range(len(pairs))])
        tot = n - np.array([u.n_items for u in units], dtype=np.float64)
        weights = np.ones(len(units))
    else:
        (unit,) = units
        loo0 = _leave_one_out(unit.counts, unit.stats0, t0, unit.finite)
        loo1 = _leave_one_out(unit.counts, unit.stats1, t1, unit.finite)
        tot = np.full(unit.n_cells, n - 1.0)
        weights = unit.counts.astype(np.float64)
    v0 = values_from_sums(metrics, slices, loo0, tot, n_classes)
    v1 = values_from_sums(metrics, slices, loo1, tot, n_classes)
    return oriented_delta(metrics, v0, v1), weights


def jackknife_crossed(metrics: Sequence[Metric], slices: Sequence[slice],
                      units: Sequence[Unit], n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out deltas ``(M, C)`` and weights ``(C,)`` for runs crossed with one test
    set: test item i is left out of every run at once (its statistics summed over the runs
    are removed from the pooled sums; ``R (N - 1)`` items remain)."""
    base = units[0]
    finite = all(u.finite for u in units)
    with np.errstate(invalid="ignore"):
        s0 = np.sum([u.stats0 for u in units], axis=0)
        s1 = np.sum([u.stats1 for u in units], axis=0)
    w = base.counts.astype(np.float64)[None]
    t0 = weighted_sums(w, s0)[0] if not finite else (w @ s0)[0]
    t1 = weighted_sums(w, s1)[0] if not finite else (w @ s1)[0]
    loo0 = _leave_one_out(base.counts, s0, t0, finite)
    loo1 = _leave_one_out(base.counts, s1, t1, finite)
    tot = np.full(base.n_cells, len(units) * (base.n_items - 1.0))
    v0 = values_from_sums(metrics, slices, loo0, tot, n_classes)
    v1 = values_from_sums(metrics, slices, loo1, tot, n_classes)
    return oriented_delta(metrics, v0, v1), base.counts.astype(np.float64)


def crossed_variance_scale(metrics: Sequence[Metric], slices: Sequence[slice],
                           units: Sequence[Unit], n_classes: int, delta: np.ndarray,
                           size: int) -> np.ndarray:
    """Per metric, the factor ``k`` that rescales crossed-bootstrap deviations
    ``delta* - delta`` to the variance of the two-way random-effects model (one per metric).

    The pseudo-values ``x_ri = n delta - (n - 1) delta_(-ri)`` (``n = R N``; leaving one
    (run, item) pair out; for means they are the per-pair differences themselves) are split
    as ``m + a_i + b_r + e_ri``. With ``SA = sum a_i^2``, ``SB = sum b_r^2``,
    ``SE = sum e_ri^2`` the crossed bootstrap of ``s`` items has variance exactly

        V_boot = SA / (N s) + SB / R^2 + SE / (N s R^2)

    (pigeonhole bootstrap, Owen 2007), while the two-way random-effects model
    ``x_ri = mu + a_i + b_r + e_ri`` gives the variance of the pooled mean of ``s`` items per
    run ``V = sigma_a^2 / s + sigma_b^2 / R + sigma_e^2 / (s R)``, estimated without bias by
    the ANOVA moments ``sigma_e^2 = SE / ((N-1)(R-1))``, ``sigma_a^2 = SA / (N-1) -
    sigma_e^2 / R``, ``sigma_b^2 = SB / (R-1) - sigma_e^2 / N`` (floored at the interaction
    term ``sigma_e^2 / (s R)``: the components are not negative). The bootstrap counts the
    run-by-item interaction about three times (McCullagh 2000). Returns ``sqrt(V / V_boot)``
    (1 where a pseudo-value is not finite or ``V_boot = 0``).
    """
    base = units[0]
    n_runs, n_items = len(units), base.n_items
    n = float(n_runs * n_items)
    t0 = np.sum([u.totals()[0] for u in units], axis=0)
    t1 = np.sum([u.totals()[1] for u in units], axis=0)
    with np.errstate(invalid="ignore"):
        loo0 = t0 - np.stack([u.stats0 for u in units])          # (R, C, S)
        loo1 = t1 - np.stack([u.stats1 for u in units])
    tot = np.full(loo0.shape[:2], n - 1.0)
    v0 = values_from_sums(metrics, slices, loo0, tot, n_classes)
    v1 = values_from_sums(metrics, slices, loo1, tot, n_classes)
    with np.errstate(invalid="ignore", over="ignore"):
        x = n * delta[:, None, None] - (n - 1.0) * oriented_delta(metrics, v0, v1)  # (M, R, C)
        w = base.counts.astype(np.float64)
        m = (x * w).sum(axis=-1).sum(axis=-1) / n
        a = x.mean(axis=1) - m[:, None]                             # (M, C) item effects
        b = (x * w).sum(axis=-1) / n_items - m[:, None]             # (M, R) run effects
        e = x - m[:, None, None] - a[:, None, :] - b[:, :, None]
        sa, sb = (a * a * w).sum(axis=-1), (b * b).sum(axis=-1)
        se = (e * e * w).sum(axis=-1).sum(axis=-1)
        s = float(size)
        v_boot = sa / (n_items * s) + sb / n_runs**2 + se / (n_items * s * n_runs**2)
        var_e = se / ((n_items - 1) * (n_runs - 1))
        # unbiased for the variance of the pooled mean; not below the interaction's share
        v = np.maximum(sa / ((n_items - 1) * s) + sb / (n_runs * (n_runs - 1))
                       - var_e / (n_items * n_runs), var_e / (s * n_runs))
        k = np.sqrt(v / v_boot)
    ok = np.isfinite(k) & (v_boot > 0) & np.isfinite(x).all(axis=(1, 2))
    return np.where(ok, k, 1.0)


def acceleration_from_jackknife(jack: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`acceleration` per metric over its finite jackknife values (leaving out an item
    with an infinite statistic is the only finite leave-one-out value; such metrics get the
    acceleration of the finite values, 0 if there are none)."""
    out = np.zeros(jack.shape[0])
    for i, row in enumerate(jack):  # loop over metrics (a handful)
        ok = np.isfinite(row)
        if ok.sum() > 1:
            out[i] = acceleration(row[ok][None], weights[ok])[0]
    return out


def acceleration(jack: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """BCa acceleration from (weighted) jackknife values, per row.

    ``a = sum_i (mean - d_i)^3 / (6 (sum_i (mean - d_i)^2)^{3/2})`` (Efron & Tibshirani
    1993, eq. 14.15).
    """
    w = weights / weights.sum()
    mean = (jack * w).sum(axis=-1, keepdims=True)
    dev = mean - jack
    num = (weights * dev**3).sum(axis=-1)
    den = 6.0 * (weights * dev**2).sum(axis=-1) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


# --- p-values and intervals ---------------------------------------------------------------------

def _tolerance(scale: np.ndarray) -> np.ndarray:
    """Ties within floating-point noise count as ties (as in scipy's permutation_test).

    ``scale`` is the magnitude of the metric VALUES behind each row (not of the difference):
    a resampled difference of two values near 0.7 carries rounding of about 1e-16 even when
    the difference itself is tiny, so a tolerance relative to the difference would miss ties.
    """
    return np.maximum(np.abs(scale), 1.0)[:, None] * np.finfo(np.float64).eps * 1024


def _undefined_where_infinite(p: np.ndarray, count: np.ndarray, delta: np.ndarray,
                              dist: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """No p-value where the observed delta is not finite (e.g. a cross-entropy of +inf on
    the full test set: clip the predictions with the metric's ``eps`` instead), nor where a
    resampled delta of ``dist`` is NaN (a metric undefined on some resamples, as entropy
    correlation on a sub-sample of constant entropies): counted as not extreme, those made
    the p-value too small by their share."""
    bad = ~np.isfinite(delta)
    if dist is not None:
        bad |= np.isnan(dist).any(axis=-1)
    return np.where(bad, np.nan, p), np.where(bad, 0, count)


def pvalue_berg_kirkpatrick(dist: np.ndarray, delta: np.ndarray, scale: np.ndarray
                            ) -> tuple[np.ndarray, np.ndarray]:
    """``p = (1 + #{delta*_b > 2 delta}) / (B + 1)`` per row; also returns the counts.

    Berg-Kirkpatrick et al. and BooStSa count ``#{...} / B``, which can be 0; formulas.md's
    errata rule that out, so the observed data count as one resample (as for the other
    methods): the smallest p is ``1 / (B + 1)``. No improvement at all (delta = 0 within
    rounding: two identical systems, or the same items right) is not evidence of one: every
    resample counts (p = 1). The strict count gave 0 there, p = 1/(B + 1), marked ``**``.
    """
    twice = 2.0 * delta[:, None]
    tol = _tolerance(scale)
    with np.errstate(invalid="ignore"):
        count = (dist > twice + tol).sum(axis=-1)
    zero = np.abs(delta) <= tol[:, 0]           # no improvement: p = 1, whatever the rest
    count = np.where(zero, dist.shape[-1], count)
    return _undefined_where_infinite((1 + count) / (dist.shape[-1] + 1), count, delta,
                                     np.where(zero[:, None], 0.0, dist))


def pvalue_paired(dist: np.ndarray, delta: np.ndarray, scale: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided ``p = (1 + #{|delta*_b - delta| >= |delta|}) / (B + 1)`` per row."""
    obs = np.abs(delta)[:, None]
    with np.errstate(invalid="ignore"):
        count = (np.abs(dist - delta[:, None]) >= obs - _tolerance(scale)).sum(axis=-1)
    return _undefined_where_infinite((1 + count) / (dist.shape[-1] + 1), count, delta, dist)


def pvalue_permutation(dist: np.ndarray, delta: np.ndarray, scale: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided ``p = (1 + #{|delta_perm| >= |delta|}) / (B + 1)`` per row."""
    obs = np.abs(delta)[:, None]
    with np.errstate(invalid="ignore"):
        count = (np.abs(dist) >= obs - _tolerance(scale)).sum(axis=-1)
    return _undefined_where_infinite((1 + count) / (dist.shape[-1] + 1), count, delta, dist)


def bca_interval(dist: np.ndarray, delta: np.ndarray, accel: np.ndarray,
                 level: float) -> np.ndarray:
    """Bias-corrected and accelerated interval ``(M, 2)`` (Efron & Tibshirani 1993, 14.3).

    ``z0 = Phi^-1(share of delta*_b below delta, ties counted half)``;
    ``alpha_j = Phi(z0 + (z0 + z_j) / (1 - a (z0 + z_j)))`` for ``z_j = Phi^-1(alpha),
    Phi^-1(1 - alpha)``; the interval is the ``alpha_1`` and ``alpha_2`` quantiles.
    Identical to ``scipy.stats.bootstrap(method="BCa")`` given the same distribution.
    """
    alpha = (1.0 - level) / 2.0
    obs = delta[:, None]
    share = ((dist < obs).sum(axis=-1) + (dist <= obs).sum(axis=-1)) / (2.0 * dist.shape[-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = ndtri(share)
        out = np.empty((dist.shape[0], 2))
        for j, z in enumerate((ndtri(alpha), -ndtri(alpha))):
            num = z0 + z
            q = ndtr(z0 + num / (1.0 - accel * num))
            for i in range(dist.shape[0]):  # loop over metrics (a handful)
                ok = np.isfinite(q[i]) and np.isfinite(delta[i])
                out[i, j] = np.quantile(dist[i], q[i]) if ok else np.nan
    return out

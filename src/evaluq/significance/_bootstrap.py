"""The two-system bootstrap significance test (BooStSa's job, done right and fast)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from evaluq._results import N_RESAMPLES_TEST
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_rng,
)
from evaluq._warn import warn
from evaluq.errors import SmallSampleWarning
from evaluq.metrics._base import Metric, get_metric
from evaluq.metrics._inputs import prepare_inputs
from evaluq.significance import _engine, _stream
from evaluq.significance._methods import BK_SAMPLE_SIZE_RANGE as BK_SAMPLE_SIZE_RANGE
from evaluq.significance._methods import METHODS as _METHOD_TABLE
from evaluq.significance._methods import TestMethod, get_method
from evaluq.significance._result import BootstrapTestResult

Method = Literal["berg-kirkpatrick", "paired", "permutation"]
Kind = Literal["hard", "soft", "regression"]
METHODS: tuple[str, ...] = tuple(_METHOD_TABLE)
RUNS: tuple[str, ...] = ("pooled", "two-level", "crossed")
KINDS: tuple[str, ...] = ("hard", "soft", "regression")

DEFAULT_METRICS: dict[str, tuple[str, ...]] = {
    "hard": ("f1", "accuracy", "precision", "recall"),
    "soft": ("cross_entropy", "js_divergence", "entropy_similarity", "entropy_correlation"),
    "regression": ("mse", "mae"),
}
"""Metrics tested when ``metrics=None``: BooStSa's four per kind of label."""


# --- inputs -------------------------------------------------------------------------------------

def encode_runs(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any], *,
                kind: str | None, labels: Sequence[Any] | None
                ) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], str, int,
                           np.ndarray | None]:
    """Validate and encode runs of (targets, h0, h1) with :func:`prepare_inputs`.

    Hard labels of all runs are coded over one label set (``labels``, or the sorted union of
    the labels of every run). Returns the encoded runs, the kind, ``K`` (0 for regression)
    and the label set.
    """
    if kind is not None:
        check_choice("kind", kind, KINDS)
    many = len(targets) > 1
    prepared = []
    for r, (t, a, b) in enumerate(zip(targets, h0, h1, strict=True)):
        try:
            prepared.append(prepare_inputs(t, a, b, kind=kind, labels=labels,  # type: ignore[arg-type]
                                           names=("h0", "h1")))
        except ValueError as err:
            if many:
                raise ValueError(f"run {r}: {err}") from None
            raise
    kinds = {p.kind for p in prepared}
    if len(kinds) > 1:
        raise ValueError(f"the runs hold different kinds of labels: {sorted(kinds)}; pass `kind`")
    kind = prepared[0].kind
    label_set = prepared[0].labels
    encoded: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    if kind == "hard" and labels is None and many:
        label_set = np.unique(np.concatenate([np.asarray(p.labels) for p in prepared]))
        for p in prepared:
            remap = np.searchsorted(label_set, np.asarray(p.labels))
            encoded.append((remap[p.targets], remap[p.predictions[0]],
                            remap[p.predictions[1]]))
    else:
        encoded = [(p.targets, p.predictions[0], p.predictions[1]) for p in prepared]
    n_classes = prepared[0].n_classes
    if kind == "hard" and label_set is not None:
        n_classes = int(label_set.size)
    if kind == "soft" and any(p.n_classes != n_classes for p in prepared):
        raise ValueError("every run must have the same number of classes; got "
                         f"{[p.n_classes for p in prepared]}")
    return encoded, kind, n_classes, label_set


def _resolve_metrics(metrics: Sequence[str | Metric] | str | Metric | None,
                     kind: str) -> list[Metric]:
    if metrics is None:
        metrics = DEFAULT_METRICS[kind]
    if isinstance(metrics, str | Metric):
        metrics = [metrics]
    resolved = [get_metric(m) for m in metrics]
    if not resolved:
        raise ValueError("`metrics` is empty")
    names = [m.name for m in resolved]
    if len(set(names)) != len(names):
        raise ValueError(f"`metrics` names a metric twice: {names}")
    for m in resolved:
        if m.kind != kind:
            raise ValueError(f"metric {m.name!r} is for {m.kind} labels but the inputs are "
                             f"{kind}; pass `kind` or choose metrics for {kind} inputs")
    return resolved


def _metric_labels(metrics: Sequence[str | Metric] | str | Metric | None,
                   labels: Sequence[Any] | None) -> Sequence[Any] | None:
    """The label set to encode hard inputs against: ``labels``, else the metrics' own."""
    if labels is not None or metrics is None:
        return labels
    objs = [get_metric(m) for m in ([metrics] if isinstance(metrics, str | Metric)
                                    else metrics)]
    fixed = {m.labels for m in objs if m.labels is not None}
    if len(fixed) > 1:
        raise ValueError(f"the metrics are defined on different label sets: "
                         f"{sorted(map(list, fixed), key=str)}; pass `labels`")
    return list(next(iter(fixed))) if fixed else None


def kind_of_metrics(metrics: Sequence[str | Metric] | str | Metric | None,
                     kind: str | None) -> str | None:
    """``kind``, or ``"regression"`` when not given and every metric is a regression metric:
    explicit metrics say what the test compares (whole-number targets with real-valued
    predictions are otherwise ambiguous)."""
    if kind is not None or metrics is None:
        return kind
    objs = [get_metric(m) for m in ([metrics] if isinstance(metrics, str | Metric)
                                    else metrics)]
    return "regression" if objs and all(m.kind == "regression" for m in objs) else None


def _check_shared_test_set(targets: Sequence[np.ndarray], names: Sequence[Any]) -> None:
    """Runs crossed with one test set must have the same targets in the same order."""
    first = targets[0]
    for name, t in zip(names[1:], targets[1:], strict=True):
        if t.shape[0] != first.shape[0]:
            raise ValueError(f"`runs` 'crossed' needs every run to score one shared test set: "
                             f"run {names[0]!r} has {first.shape[0]} items but run {name!r} "
                             f"has {t.shape[0]}; use 'two-level' for runs on different "
                             "test sets")
        if t.shape != first.shape or not np.array_equal(t, first):
            diff = np.flatnonzero(np.any((t != first).reshape(t.shape[0], -1), axis=1))
            where = f" (first at item {int(diff[0])})" if diff.size else ""
            raise ValueError(f"`runs` 'crossed' needs every run to score one shared test set: "
                             f"runs {names[0]!r} and {name!r} have different targets{where}; "
                             "use 'two-level' for runs on different test sets")


# --- the test -----------------------------------------------------------------------------------

def compare_runs(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any], *,
                 metrics: Sequence[str | Metric] | str | Metric | None = None,
                 method: str = "berg-kirkpatrick", runs: str = "pooled",
                 n_resamples: int = N_RESAMPLES_TEST, sample_size: float | None = None,
                 confidence_level: float = 0.95, rng: RNGLike = None,
                 kind: str | None = None, labels: Sequence[Any] | None = None,
                 h0_name: str = "h0", h1_name: str = "h1",
                 run_names: Sequence[Any] | None = None) -> BootstrapTestResult:
    """:func:`bootstrap_test` on several runs (run ``r`` of h0 and of h1 share targets ``r``).

    ``runs="pooled"`` concatenates the runs (BooStSa). ``"two-level"`` resamples runs, then
    items within each drawn run (``berg-kirkpatrick`` and ``paired`` only): a run drawn ``c``
    times contributes ``c`` independent item resamples. Items are resampled independently in
    each run even when the runs share one test set (a nested design), and the BCa acceleration
    comes from leaving one run out.

    ``"crossed"`` is for runs (seeds) that all score ONE test set (every run has the same
    targets in the same order; checked): each resample draws run counts
    ``c ~ Multinomial(R, 1/R)`` (the same draw for h0 and h1: run r of h0 is paired with run r
    of h1) and, once, item counts ``w ~ Multinomial(s, 1/N)`` shared by every run of both
    systems, since the test-set sampling error is common to all runs. The statistic is the
    metric of the pooled drawn (run, item) pairs, ``M(sum_r c_r w @ stats_r)``, which at
    ``c = 1, w = 1`` is the observed pooled value (for accuracy-like means it is the mean over
    the drawn runs of the per-run metric). The BCa acceleration leaves one test item out of
    every run. Like every bootstrap of a crossed design it is mildly conservative: the
    run-by-item interaction enters its variance up to three times (McCullagh 2000; Owen 2007).

    The observed values are those of the pooled items in every case. ``run_names`` (default
    the run indices) name the runs in error messages.

    dask arrays (or dask-backed DataArrays) in any run are streamed, items chunked, as in
    :func:`bootstrap_test`: hard labels become cell counts per chunk (per run, or for crossed
    runs the distinct rows of every run's cells per chunk of the shared test set, whose
    targets are compared chunk by chunk), soft labels and regression per-item statistics per
    chunk (a global step such as entropy correlation's centring runs once over the items of
    every run, as in memory). The numbers equal the in-memory ones for the same ``rng``, for
    any chunking; errors name the run, the argument and the chunk's items.

    Examples
    --------
    Three seeds of each system scored on one test set, the runs crossed; the same numbers
    with the items in dask chunks of 300:

    >>> import numpy as np, dask.array as da
    >>> from evaluq.significance._bootstrap import compare_runs
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 1000)
    >>> h0 = [np.where(rng.random(1000) < 0.70, y, 1 - y) for _ in range(3)]
    >>> h1 = [np.where(rng.random(1000) < 0.75, y, 1 - y) for _ in range(3)]
    >>> res = compare_runs([y] * 3, h0, h1, metrics="accuracy", method="paired",
    ...                    runs="crossed", rng=1)
    >>> lazy = compare_runs([da.from_array(y, chunks=300)] * 3, h0, h1, metrics="accuracy",
    ...                     method="paired", runs="crossed", rng=1)
    >>> bool((lazy.distribution == res.distribution).all()), res.n_runs
    (True, 3)
    """
    spec, n_resamples, level, fraction, gen, run_names = _check_options(
        targets, h0, h1, method, runs, n_resamples, confidence_level, sample_size, rng,
        run_names)
    two_level = runs == "two-level" and len(targets) > 1
    crossed = runs == "crossed" and len(targets) > 1
    kind = kind_of_metrics(metrics, kind)
    if any(_stream.is_lazy(x) for x in (*targets, *h0, *h1)):
        units, widths, metric_objs, n_classes = _streamed_units(
            targets, h0, h1, metrics, labels, kind, two_level, crossed, run_names)
    else:
        units, widths, metric_objs, n_classes = _in_memory_units(
            targets, h0, h1, metrics, labels, kind, two_level, crossed, run_names)
    result = _test_units(units, widths, metric_objs, n_classes, spec=spec, gen=gen,
                         n_resamples=n_resamples, fraction=fraction, level=level,
                         two_level=two_level, crossed=crossed, method=method,
                         runs=runs if len(targets) > 1 else "pooled", n_runs=len(targets),
                         h0_name=h0_name, h1_name=h1_name)
    _warn_few_items(spec, units[0].n_items if crossed else result.n_items,
                    result.n_resamples)
    return result


def _warn_few_items(spec: TestMethod, n_items: int, n_resamples: int) -> None:
    """A :class:`SmallSampleWarning` when the method's p-value is too small at ``n_items``
    items (:attr:`TestMethod.few_items`; the items of one test set for crossed runs). The
    permutation test is valid at any number of items."""
    if n_items >= spec.few_items:
        return
    items = f"{n_items} item{'s' if n_items > 1 else ''}"
    floor = (f"; with {items} its p-value cannot fall below 2 / 2^{n_items} = "
             f"{2 / 2 ** n_items:.3g}" if 2 / 2 ** n_items > 1 / (n_resamples + 1) else "")
    warn(f"only {items}, fewer than {spec.few_items}: the {spec.title} test's p-value is too "
         f"small at this size ({spec.few_items_note}). Use more items or method='permutation' "
         f"(valid at any number of items{floor})", SmallSampleWarning)


def _check_options(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any], method: str,
                   runs: str, n_resamples: Any, confidence_level: Any, sample_size: Any,
                   rng: RNGLike, run_names: Sequence[Any] | None
                   ) -> tuple[TestMethod, int, float, float, np.random.Generator, list[Any]]:
    """The validated options of :func:`compare_runs`, in the order it has always checked them."""
    spec = get_method(method)
    check_choice("runs", runs, RUNS)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    if n_resamples < 2:
        raise ValueError(f"`n_resamples` must be >= 2 (one resample gives a p-value of 0.5 or 1 "
                         f"and an interval of width zero); got {n_resamples}")
    level = check_confidence_level(confidence_level)
    fraction = spec.check_sample_size(sample_size)
    gen = check_rng(rng)
    if not (len(targets) == len(h0) == len(h1)) or len(targets) == 0:
        raise ValueError(f"`targets`, `h0` and `h1` must hold the same positive number of "
                         f"runs; got {len(targets)}, {len(h0)} and {len(h1)}")
    if run_names is None:
        run_names = list(range(len(targets)))
    elif len(run_names) != len(targets):
        raise ValueError(f"`run_names` must name the {len(targets)} runs; got "
                         f"{len(run_names)} names")
    if runs != "pooled" and not spec.resamples_runs:
        raise ValueError(f"`runs` {runs!r} is a bootstrap: use method 'paired' or "
                         "'berg-kirkpatrick' (or pool the runs for the permutation test)")
    return spec, n_resamples, level, fraction, gen, list(run_names)


def _streamed_units(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any],
                    metrics: Any, labels: Any, kind: Any, two_level: bool, crossed: bool,
                    run_names: list[Any]
                    ) -> tuple[list[_engine.Unit], list[int], list[Metric], int]:
    """Units of dask-backed runs, chunk by chunk (:func:`_stream.stream_runs`)."""
    if kind is not None:
        check_choice("kind", kind, KINDS)

    def resolve(kind: str, label_set: np.ndarray | None) -> list[Metric]:
        objs = _resolve_metrics(metrics, kind)
        return [m.for_labels(label_set) for m in objs] if kind == "hard" else objs

    mode = "two-level" if two_level else "crossed" if crossed else "pooled"
    streamed = _stream.stream_runs(targets, h0, h1, kind=kind,
                                   labels=_metric_labels(metrics, labels), resolve=resolve,
                                   runs=mode, run_names=run_names)
    return streamed[0], streamed[1], streamed[2], streamed[4]


def _in_memory_units(targets: Sequence[Any], h0: Sequence[Any], h1: Sequence[Any],
                     metrics: Any, labels: Any, kind: Any, two_level: bool, crossed: bool,
                     run_names: list[Any]
                     ) -> tuple[list[_engine.Unit], list[int], list[Metric], int]:
    """Units of in-memory runs: cells of identical (target, h0, h1) for hard labels, per-item
    statistics otherwise; one unit per run for two-level designs."""
    encoded, kind, n_classes, label_set = encode_runs(
        targets, h0, h1, kind=kind, labels=_metric_labels(metrics, labels))
    hard = kind == "hard"
    metric_objs = _resolve_metrics(metrics, kind)
    if hard and label_set is not None:  # bind target-class metrics to this label set's codes
        metric_objs = [m.for_labels(label_set) for m in metric_objs]
        _stream.warn_labels_without_targets(
            np.bincount(np.concatenate([e[0] for e in encoded]), minlength=n_classes),
            label_set, metric_objs)
    units: list[_engine.Unit] = []
    widths: list[int] = []
    if crossed:
        _check_shared_test_set([e[0] for e in encoded], run_names)
        units, widths = _engine.make_crossed_units(
            metric_objs, encoded[0][0], [e[1] for e in encoded], [e[2] for e in encoded],
            n_classes, hard)
        return units, widths, metric_objs, n_classes
    y_all, a_all, b_all = (np.concatenate(parts) for parts in zip(*encoded, strict=True))
    if not two_level:
        encoded = [(y_all, a_all, b_all)]
    if two_level and not hard:  # one call: statistics centred on one common mean
        units, widths = _engine.split_units(metric_objs, y_all, a_all, b_all,
                                            [e[0].shape[0] for e in encoded], n_classes)
    else:
        for y, a, b in encoded:
            unit, widths = _engine.make_unit(metric_objs, y, a, b, n_classes, hard)
            units.append(unit)
    return units, widths, metric_objs, n_classes


def _check_resample_memory(spec: TestMethod, n_resamples: int, n_metrics: int) -> None:
    """Refuse ``n_resamples`` above the memory budget: the resampled deltas are kept (metric,
    resample) for the p-value and the interval (the chunks, their concatenation and a sorted
    copy), twice for a permutation null (its distribution and the bootstrap's); the
    resamples themselves are drawn in chunks."""
    copies = 2 if spec.permutation_null else 1
    check_memory("n_resamples", 3 * 8 * copies * n_resamples * n_metrics)


def _sample_n(units: Sequence[_engine.Unit], fraction: float) -> int:
    """The items drawn per resample, ``sum round(f N_unit)``; an error when a unit draws none
    (a Berg-Kirkpatrick sub-sample of few items)."""
    sample_n = sum(round(fraction * u.n_items) for u in units)
    if sample_n < 1 or any(round(fraction * u.n_items) < 1 for u in units):
        n, top = min(u.n_items for u in units), BK_SAMPLE_SIZE_RANGE[1]
        larger = (f"Pass a larger `sample_size` (at most {top:g}), use" if round(top * n) >= 1
                  else "Use")
        raise ValueError(f"`sample_size` must draw at least one item: {fraction:g} of {n} "
                         f"item{'s' if n > 1 else ''} draws round({fraction:g} x {n}) = 0 "
                         f"({'of one run, ' if len(units) > 1 else ''}the Berg-Kirkpatrick "
                         f"sub-sample). {larger} more items, or method='permutation' (valid "
                         "at any number of items)")
    return sample_n


def _test_units(units: list[_engine.Unit], widths: list[int], metric_objs: list[Metric],
                n_classes: int, *, spec: TestMethod, gen: np.random.Generator, n_resamples: int,
                fraction: float, level: float, two_level: bool, crossed: bool, method: str,
                runs: str, n_runs: int, h0_name: str, h1_name: str) -> BootstrapTestResult:
    """The test on items already reduced to units (cells or per-item statistics)."""
    _check_resample_memory(spec, n_resamples, len(metric_objs))
    slices = _engine.metric_slices(metric_objs, widths)
    n_items = sum(u.n_items for u in units)
    sample_n = _sample_n(units, fraction)

    totals = [u.totals() for u in units]
    t0 = np.sum([t[0] for t in totals], axis=0)
    t1 = np.sum([t[1] for t in totals], axis=0)
    # observed values: let the metrics' own warnings (e.g. zero division) reach the user
    v0 = np.array([m.from_sums(t0[sl], np.asarray(float(n_items)), n_classes)
                   for m, sl in zip(metric_objs, slices, strict=True)], dtype=np.float64)
    v1 = np.array([m.from_sums(t1[sl], np.asarray(float(n_items)), n_classes)
                   for m, sl in zip(metric_objs, slices, strict=True)], dtype=np.float64)
    delta = _engine.oriented_delta(metric_objs, v0, v1)

    def deltas(s0: np.ndarray, s1: np.ndarray, tot: np.ndarray) -> np.ndarray:
        d0 = _engine.values_from_sums(metric_objs, slices, s0, tot, n_classes)
        d1 = _engine.values_from_sums(metric_objs, slices, s1, tot, n_classes)
        return _engine.oriented_delta(metric_objs, d0, d1)

    with np.errstate(invalid="ignore"):
        scale = np.nan_to_num(np.maximum(np.abs(v0), np.abs(v1)), nan=1.0, posinf=1.0)
    accel = np.full(len(metric_objs), np.nan)
    if spec.permutation_null:
        dist = _engine.collect(_engine.iter_permutation_sums(gen, units[0], n_resamples),
                               deltas)
        pvalue, count = _engine.pvalue_permutation(dist, delta, scale)
        boot = _engine.collect(
            _engine.iter_bootstrap_sums(gen, units, n_resamples, None, False), deltas)
    else:
        f_draw = fraction if spec.subsample else None
        chunks = (_engine.iter_crossed_sums(gen, units, n_resamples, f_draw) if crossed
                  else _engine.iter_bootstrap_sums(gen, units, n_resamples, f_draw, two_level))
        dist = _engine.collect(chunks, deltas)
        if crossed:  # moment-matched: the bootstrap counts the run x item interaction thrice
            k = _engine.crossed_variance_scale(metric_objs, slices, units, n_classes, delta,
                                               round((f_draw or 1.0) * units[0].n_items))
            scaled = k != 1.0
            dist[scaled] = delta[scaled, None] + k[scaled, None] * (dist[scaled]
                                                                  - delta[scaled, None])
        boot = dist
        pvalue, count = spec.pvalue(dist, delta, scale)
    if spec.needs_acceleration:
        jack, weights = (_engine.jackknife_crossed(metric_objs, slices, units, n_classes)
                         if crossed else
                         _engine.jackknife_deltas(metric_objs, slices, units, n_classes,
                                                  by_unit=two_level))
        accel = _engine.acceleration_from_jackknife(jack, weights)
    return BootstrapTestResult(
        metrics=tuple(m.name for m in metric_objs),
        higher_is_better=tuple(m.higher_is_better for m in metric_objs),
        h0_value=v0, h1_value=v1, delta=delta, pvalue=pvalue, count=count,
        distribution=dist, bootstrap_distribution=boot, acceleration=accel,
        method=method, n_resamples=n_resamples, sample_size=fraction, sample_n=sample_n,
        n_items=n_items, confidence_level=level, n_runs=n_runs,
        runs=runs, h0_name=h0_name, h1_name=h1_name,
    )


def bootstrap_test(targets: Any, h0: Any, h1: Any, *,
                   metrics: Sequence[str | Metric] | str | Metric | None = None,
                   method: Method = "berg-kirkpatrick", n_resamples: int = N_RESAMPLES_TEST,
                   sample_size: float | None = None, confidence_level: float = 0.95,
                   rng: RNGLike = None, kind: Kind | None = None,
                   labels: Sequence[Any] | None = None, h0_name: str = "h0",
                   h1_name: str = "h1") -> BootstrapTestResult:
    r"""Is system h1 better than system h0 on these items? A paired resampling test.

    Every metric is oriented so that a positive difference means *h1 is better*:

    .. math::

        \delta = M(h_1) - M(h_0) \text{ (higher is better)}, \qquad
        \delta = M(h_0) - M(h_1) \text{ (lower is better: CE, JSD, KL, EMD, MSE, MAE)}.

    Three methods:

    ``"berg-kirkpatrick"`` (BooStSa's test, Berg-Kirkpatrick et al. 2012)
        ``B`` times draw ``s = round(f N)`` items with replacement (``f = sample_size``; the
        same items for h0, h1 and the targets) and compute ``delta*_b``;
        ``p = (1 + #{delta*_b > 2 delta}) / (B + 1)``. The published method and BooStSa
        divide the count by ``B`` and so can report ``p = 0``; formulas.md's errata rule that
        out, so the observed data count as one resample, as in the other two methods (the
        smallest p is ``1 / (B + 1)``). As in BooStSa, ``f`` must lie in
        [0.05, 0.5] (default 0.1). **This test is conservative, the more so the smaller
        ``f``:** a sub-sample of ``s`` items spreads ``delta*`` about ``1/sqrt(f)`` times
        wider than the sampling distribution of ``delta`` on ``N`` items, so ``delta* > 2
        delta`` rarely happens under the null. In the normal approximation the test rejects
        when ``delta / SE(delta) >= z_{1-alpha} / sqrt(f)``, so its null rejection rate is
        about ``1 - Phi(1.645 / sqrt(f))``: 0.000 at f = 0.1, 0.0001 at 0.2, 0.010 at 0.5
        and 0.05 at f = 1 (where it is a one-sided test at level alpha). Measured at
        p < .05 with BooStSa's ``/ B`` on 100,000 simulated null data sets (accuracy, 500
        items, B = 1000; ``benchmarks/bench_bk_null_rates.py``): 0.000 at f = 0.1, 0.0001 at
        0.2, 0.0125 at 0.5 and 0.055 at 1.0. formulas.md §1 reports 0.000, 0.000, 0.007,
        0.025: those match testing at .025 per direction, not p < .05 (see
        ``models/bootstrap_significance_test.md``). So at BooStSa's default f = 0.1 the test
        has almost no false positives and little power: prefer ``"paired"`` or
        ``"permutation"`` for a test with nominal size. Its interval is the sub-sample
        percentile interval rescaled by ``sqrt(s / N)`` (m-out-of-n bootstrap).
    ``"paired"`` (the standard paired bootstrap)
        ``f = 1``; two-sided ``p = (1 + #{|delta*_b - delta| >= |delta|}) / (B + 1)``;
        percentile and BCa intervals for ``delta`` (BCa by default, its acceleration from the
        exact jackknife: leave-one-out sums are the totals minus each item's statistics).
    ``"permutation"`` (paired approximate randomisation)
        Swap the outputs of h0 and h1 on each item with probability 1/2;
        ``p = (1 + #{|delta_perm| >= |delta|}) / (B + 1)``. Its interval comes from an
        additional paired bootstrap of ``B`` resamples.

    Marks as BooStSa prints them: ``**`` for p <= .01, ``*`` for p <= .05. Ties within
    floating-point noise (100 ulp) count as ties.

    **Few items.** The bootstraps resample the observed differences as if they were the
    population, so on few items their p-values are too small: at a true null the paired test
    rejects at p <= .05 in 29% of data sets at 3 items, 9% at 10, 7% at 20 and about 6% at 40.
    Below 40 items (paired) or 6 items (Berg-Kirkpatrick, whatever ``sample_size``) a
    :class:`~evaluq.SmallSampleWarning` says so and names ``method="permutation"``, valid at
    any number of items (with ``n`` items its p-value cannot fall below ``2 / 2^n``).

    Hard labels are counted in cells of (target, h0 prediction, h1 prediction): ``B``
    resamples cost ``O(B K^3)`` (one multinomial draw each) whatever the number of items.
    Soft labels and regression values resample per-item statistics; entropy correlation
    needs only the five running sums of x, y, x^2, y^2, xy.

    **dask inputs are streamed, items chunked.** A dask array (or dask-backed DataArray) for
    any of ``targets``, ``h0``, ``h1`` is read chunk by chunk of items (the others are cut to
    the same chunks; on a ``dask.distributed`` client the chunks run on the workers), never
    loaded whole: each chunk is validated (errors name the argument and the chunk's items)
    and reduced to what the test needs. Hard labels: its (target, h0, h1) cell counts over
    its own labels, which the client maps onto the label set and adds up. Soft labels and
    regression: the per-item statistics of every metric (the ``(N, K)`` rows never sit in
    memory at once; the ``(N, S)`` statistics do). A metric whose statistics read all items
    declares that global step (``entropy_correlation`` centres on the items' mean; see
    :class:`~evaluq.metrics.Metric`): its item-local part (the two normalized entropies) is
    computed per chunk and the centring runs once on all of them. The engine then runs
    unchanged, so the numbers are identical to the in-memory ones for the same ``rng``, bit
    for bit, for any chunking. With ``kind=None``, float inputs are scanned once more to tell
    hard labels from real values; pass ``kind`` to read them once. Several runs of
    each system (``compare_runs``: pooled, two-level or crossed) are streamed the same way.

    Parameters
    ----------
    targets, h0, h1
        Per-item targets and the two systems' outputs: lists, arrays, DataArrays, or paths of
        ``.txt`` (one label per line), ``.csv`` / ``.tsv`` (rows of probabilities) or ``.npy``
        files; dask arrays and dask-backed DataArrays are streamed (see above). Hard labels
        ``(N,)``, soft labels ``(N, K)`` or real values ``(N,)``.
    metrics
        Registered metric names or :class:`~evaluq.metrics.Metric` objects; default
        BooStSa's four for the kind of input (hard: f1, accuracy, precision, recall; soft:
        cross_entropy, js_divergence, entropy_similarity, entropy_correlation; regression:
        mse, mae). All metrics are evaluated on the same resamples.
    method
        ``"berg-kirkpatrick"`` (default, BooStSa's), ``"paired"`` or ``"permutation"``.
    n_resamples
        ``B`` (>= 1; default 1000, the default of every significance test in evaluq).
    sample_size
        Sub-sample fraction ``f`` of the Berg-Kirkpatrick test (default 0.1, in [0.05, 0.5]);
        must be None (or 1) for the other methods.
    confidence_level
        Level of the interval stored in the result (others on demand with
        :meth:`BootstrapTestResult.confidence_interval`).
    rng
        Seed or Generator; the same rng gives the same numbers.
    kind
        ``"hard"``, ``"soft"`` or ``"regression"``; default detected from the targets'
        shape (2-D: soft) and values (non-integer floats: regression).
    labels
        Label set of hard labels (default: the union of labels in the inputs).
    h0_name, h1_name
        Names used in the printout.

    Returns
    -------
    BootstrapTestResult
        Per metric the h0 and h1 values, delta, p, interval, marks and the resample
        distribution; ``to_dataframe()``, ``to_dataset()`` and a BooStSa-like printout.

    References
    ----------
    .. [1] Berg-Kirkpatrick, Burkett, Klein (2012). An empirical investigation of
       statistical significance in NLP. EMNLP-CoNLL.
    .. [2] Fornaciari, Uma, Poesio, Hovy (2022). BooStSa: hard and soft evaluation of NLP
       models with bootstrap sampling.
    .. [3] Efron, Tibshirani (1993). An Introduction to the Bootstrap, ch. 14 (BCa).

    See Also
    --------
    evaluq.Experiment : many systems and runs, BooStSa's feed / run / save / load pipeline.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2000)
    >>> h0 = np.where(rng.random(2000) < 0.70, y, 1 - y)    # about 70% accurate
    >>> h1 = np.where(rng.random(2000) < 0.75, y, 1 - y)    # about 75% accurate
    >>> res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="paired", rng=1)
    >>> round(float(res.delta[0]), 3), round(float(res.pvalue[0]), 3), res.significance
    (0.032, 0.023, ('*',))
    >>> bk = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], rng=1)  # f = 0.1: conservative
    >>> round(float(bk.pvalue[0]), 3), bk.significance
    (0.248, ('',))
    >>> res.to_dataframe().columns.tolist()
    ['h0', 'h1', 'delta', 'pvalue', 'ci_lower', 'ci_upper', 'significance', 'higher_is_better']

    The same test on dask arrays (items in chunks of 500) gives the same numbers:

    >>> import dask.array as da
    >>> lazy = eq.bootstrap_test(da.from_array(y, chunks=500), da.from_array(h0, chunks=500),
    ...                          da.from_array(h1, chunks=500), metrics=["accuracy"],
    ...                          method="paired", rng=1)
    >>> bool((lazy.distribution == res.distribution).all()), round(float(lazy.pvalue[0]), 3)
    (True, 0.023)
    """
    return compare_runs([targets], [h0], [h1], metrics=metrics, method=method, runs="pooled",
                     n_resamples=n_resamples, sample_size=sample_size,
                     confidence_level=confidence_level, rng=rng, kind=kind, labels=labels,
                     h0_name=h0_name, h1_name=h1_name)

"""bootstrap_test on dask-backed inputs: items chunked, the in-memory numbers for any chunking."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq.significance import _engine
from evaluq.significance._bootstrap import compare_runs

da = pytest.importorskip("dask.array")

METHODS = ("berg-kirkpatrick", "paired", "permutation")
SOFT_METRICS = ("cross_entropy", "js_divergence", "entropy_similarity", "emd", "kl")


def _hard(rng, n=3000, k=4):
    y = rng.integers(0, k, n)
    h0 = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n))
    h1 = np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n))
    return y, h0, h1


def _soft(rng, n=1500, k=3):
    def rows():
        z = np.exp(rng.normal(size=(n, k)) * 2)
        return z / z.sum(1, keepdims=True)
    return rows(), rows(), rows()


def _same(a, b):
    assert a.metrics == b.metrics
    for name in ("h0_value", "h1_value", "delta", "pvalue", "count", "distribution",
                 "bootstrap_distribution", "acceleration", "interval"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.n_items == b.n_items
    assert a.sample_n == b.sample_n


@pytest.fixture(autouse=True)
def _never_whole(monkeypatch):
    """No dask array is turned into one numpy array (``np.asarray`` / ``.values``)."""
    def refuse(self, *args, **kwargs):
        raise AssertionError("a dask array was loaded whole")
    monkeypatch.setattr(da.Array, "__array__", refuse)


@pytest.mark.parametrize("method", METHODS)
def test_hard_labels_identical_for_any_chunking(rng, method):
    y, h0, h1 = _hard(rng)
    eager = eq.bootstrap_test(y, h0, h1, method=method, n_resamples=300, rng=5)
    for chunks in (700, (1000, 1, 1999)):
        lazy = eq.bootstrap_test(da.from_array(y, chunks=chunks), da.from_array(h0, chunks=chunks),
                                 da.from_array(h1, chunks=500), method=method, n_resamples=300,
                                 rng=5)
        _same(eager, lazy)


def test_hard_string_labels_seen_in_one_chunk_only(rng):
    y, h0, h1 = _hard(rng, n=2000, k=3)
    names = np.array(["neg", "neu", "pos", "zzz"])
    y, h0, h1 = names[y], names[h0], names[h1]
    h1[-3:] = "zzz"                                   # a label of the last chunk only
    said = r"label\(s\) \['zzz'\] of the label set \(4 labels\) have no true item"
    with pytest.warns(eq.metrics.UndefinedMetricWarning, match=said):  # in memory ...
        eager = eq.bootstrap_test(y, h0, h1, method="paired", n_resamples=200, rng=1)
    with pytest.warns(eq.metrics.UndefinedMetricWarning, match=said):  # ... and streamed
        lazy = eq.bootstrap_test(da.from_array(y, chunks=400), list(h0),
                                 xr.DataArray(da.from_array(h1, chunks=900), dims="item"),
                                 method="paired", n_resamples=200, rng=1)
    _same(eager, lazy)


def test_hard_labels_given_and_target_class_metric(rng):
    y, h0, h1 = _hard(rng, k=3)
    labels = [2, 0, 1, 3]                             # the user's order; 3 never occurs
    metric = eq.metrics.f1_metric(target_class=2)
    kw = dict(metrics=[metric, "accuracy"], labels=labels, method="paired", n_resamples=200,
              rng=2)
    _same(eq.bootstrap_test(y, h0, h1, **kw),
          eq.bootstrap_test(da.from_array(y, chunks=600), da.from_array(h0, chunks=600),
                            da.from_array(h1, chunks=600), **kw))


def test_cells_equal_the_in_memory_cells(rng):
    """The streamed cell table is the in-memory one: the same cells, counts, statistics."""
    from evaluq.significance import _stream

    y, h0, h1 = _hard(rng, k=5)
    metrics = [eq.metrics.get_metric("f1")]
    (unit,), *_ = _stream.stream_runs([da.from_array(y, chunks=333)],
                                      [da.from_array(h0, chunks=333)],
                                      [da.from_array(h1, chunks=333)], kind=None, labels=None,
                                      resolve=lambda kind, labels: metrics)
    ref, _ = _engine.make_unit(metrics, y, h0, h1, 5, hard=True)
    np.testing.assert_array_equal(unit.counts, ref.counts)
    np.testing.assert_array_equal(unit.stats0, ref.stats0)
    np.testing.assert_array_equal(unit.stats1, ref.stats1)
    assert unit.n_items == y.size


@pytest.mark.parametrize("method", METHODS)
def test_soft_labels_identical_for_any_chunking(rng, method):
    p, q0, q1 = _soft(rng)
    kw = dict(metrics=SOFT_METRICS, method=method, n_resamples=200, rng=4)
    eager = eq.bootstrap_test(p, q0, q1, **kw)
    for chunks in ((400, 3), (1499, 1)):              # items and classes chunked
        lazy = eq.bootstrap_test(da.from_array(p, chunks=chunks), da.from_array(q0, chunks=chunks),
                                 xr.DataArray(da.from_array(q1, chunks=chunks),
                                              dims=("item", "class")), **kw)
        _same(eager, lazy)


def test_regression_identical_and_kind_detected(rng):
    y = rng.normal(size=1200)
    a, b = y + rng.normal(size=1200), y + 0.8 * rng.normal(size=1200)
    eager = eq.bootstrap_test(y, a, b, method="paired", n_resamples=200, rng=3)
    lazy = eq.bootstrap_test(da.from_array(y, chunks=500), da.from_array(a, chunks=500),
                             da.from_array(b, chunks=500), method="paired", n_resamples=200,
                             rng=3)
    assert lazy.metrics == ("mse", "mae")
    _same(eager, lazy)


def test_whole_number_floats_are_hard_labels(rng):
    y, h0, h1 = (x.astype(float) for x in _hard(rng, n=900))
    eager = eq.bootstrap_test(y, h0, h1, method="paired", n_resamples=100, rng=0)
    lazy = eq.bootstrap_test(da.from_array(y, chunks=200), h0, h1, method="paired",
                             n_resamples=100, rng=0)
    assert lazy.metrics == ("f1", "accuracy", "precision", "recall")
    _same(eager, lazy)


# --- validation, per chunk ----------------------------------------------------------------------

def test_nan_in_a_chunk_names_the_argument_and_the_chunk(rng):
    y, h0, h1 = (x.astype(float) for x in _hard(rng, n=1000))
    h0[750] = np.nan
    with pytest.raises(ValueError, match=r"`h0` contains 1 NaN.*items 600\.\.799"):
        eq.bootstrap_test(y, da.from_array(h0, chunks=200), h1, kind="hard")


def test_label_outside_labels_names_the_argument(rng):
    y, h0, h1 = _hard(rng, n=600, k=2)
    h1[420] = 2
    match = r"`h1` holds labels \[2\].*not in `labels`.*items 400\.\.499"
    with pytest.raises(ValueError, match=match):
        eq.bootstrap_test(da.from_array(y, chunks=100), h0, h1, labels=[0, 1])


def test_mixed_strings_and_numbers_across_chunks():
    y = da.concatenate([da.from_array(np.array(["a", "b"] * 50)),
                        da.from_array(np.array(["a", "b"] * 50))])
    h = da.concatenate([da.from_array(np.array(["a", "b"] * 50)),
                        da.from_array(np.array(["a", "a"] * 50))])
    with pytest.raises(TypeError, match="strings"):
        eq.bootstrap_test(y, h, np.array([0, 1] * 100))


def test_shapes_checked_before_reading():
    y = da.zeros(100, dtype=int, chunks=10)
    with pytest.raises(ValueError, match="`h1` has 99 items but `targets` has 100"):
        eq.bootstrap_test(y, da.zeros(100, dtype=int, chunks=10), np.zeros(99, dtype=int))
    with pytest.raises(ValueError, match="`h0` has 4 classes but `targets` has 3"):
        eq.bootstrap_test(da.ones((5, 3)) / 3, np.ones((5, 4)) / 4, np.ones((5, 3)) / 3)
    coords = {"item": np.arange(100)}
    shifted = {"item": np.arange(1, 101)}
    with pytest.raises(ValueError, match="'item' coordinates of `h0` and `targets` differ"):
        eq.bootstrap_test(xr.DataArray(y, dims="item", coords=coords),
                          xr.DataArray(y, dims="item", coords=shifted), y)
    # a pandas input's index is its item coordinate (before: dropped, paired by position)
    import pandas as pd

    with pytest.raises(ValueError, match="'item' coordinates of `h1` and `targets` differ"):
        eq.bootstrap_test(pd.Series(np.zeros(100, int)), y,
                          pd.Series(np.zeros(100, int), index=np.arange(100)[::-1]))


def test_undeclared_global_metric_refused_on_dask(rng):
    """A metric centring its item statistics without declaring the global step is caught."""
    from evaluq.metrics import Metric

    def centred(t, q, k):
        return (q - q.mean(axis=-1, keepdims=True))[..., None]

    bad = Metric("centred", higher_is_better=False, kind="regression", item_stats=centred,
                 from_sums=lambda s, n, k: s[..., 0] / n)
    y = rng.normal(size=100)
    with pytest.raises(ValueError, match="'centred'.*without declaring.*chunk by chunk"):
        eq.bootstrap_test(da.from_array(y, chunks=50), y + 1, y - 1, metrics=[bad])


# --- entropy correlation: a metric with a global step -------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_entropy_correlation_identical_for_any_chunking(rng, method):
    """metrics=None on dask soft inputs (BooStSa's four, entropy correlation among them)."""
    p, q0, q1 = _soft(rng, n=1200, k=4)
    eager = eq.bootstrap_test(p, q0, q1, method=method, n_resamples=200, rng=6)
    assert "entropy_correlation" in eager.metrics
    for chunks in ((250, 4), (1, 2), (1199, 3)):
        lazy = eq.bootstrap_test(da.from_array(p, chunks=chunks), da.from_array(q0, chunks=chunks),
                                 q1, method=method, n_resamples=200, rng=6)
        _same(eager, lazy)


def test_entropy_correlation_value_is_pearson_r(rng):
    """The streamed observed value is numpy's Pearson r of the normalized entropies."""
    p, q0, q1 = _soft(rng, n=900, k=3)
    res = eq.bootstrap_test(da.from_array(p, chunks=(200, 3)), q0, q1,
                            metrics=["entropy_correlation"], method="paired", n_resamples=50,
                            rng=0)

    def h(r):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -np.nansum(r * np.log(r), axis=1) / np.log(3)

    ref0, ref1 = (np.corrcoef(h(p), h(q))[0, 1] for q in (q0, q1))
    np.testing.assert_allclose([res.h0_value[0], res.h1_value[0]], [ref0, ref1], rtol=1e-12)


# --- several runs -------------------------------------------------------------------------------

def _runs_hard(rng, n_runs=3, n=800, k=3):
    y = rng.integers(0, k, n)
    h0 = [np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n)) for _ in range(n_runs)]
    h1 = [np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n)) for _ in range(n_runs)]
    return y, h0, h1


def _lazy(xs, chunks):
    return [da.from_array(x, chunks=chunks) for x in xs]


@pytest.mark.parametrize("runs", ["pooled", "two-level", "crossed"])
@pytest.mark.parametrize("method", ["paired", "berg-kirkpatrick"])
def test_several_runs_hard_identical_for_any_chunking(rng, runs, method):
    y, h0, h1 = _runs_hard(rng)
    kw = dict(runs=runs, method=method, n_resamples=150, rng=7)
    eager = compare_runs([y] * 3, h0, h1, **kw)
    for chunks in (170, (400, 1, 399)):
        _same(eager, compare_runs(_lazy([y] * 3, chunks), _lazy(h0, 300), h1, **kw))


def test_crossed_many_runs_keep_one_cell_per_item(rng):
    """Many runs and classes: more distinct rows than N / 8, so the units are per item (the
    streamed per-item rows must come back in item order)."""
    from evaluq.significance import _stream

    y, h0, h1 = _runs_hard(rng, n_runs=5, n=400, k=6)
    metrics = [eq.metrics.get_metric("accuracy")]
    units, *_ = _stream.stream_runs(_lazy([y] * 5, 90), _lazy(h0, 90), h1, kind=None,
                                    labels=None, resolve=lambda kind, labels: metrics,
                                    runs="crossed")
    ref, _ = _engine.make_crossed_units(metrics, y, h0, h1, 6, hard=True)
    assert not ref[0].compressed
    for u, r in zip(units, ref, strict=True):
        assert not u.compressed
        np.testing.assert_array_equal(u.counts, r.counts)
        np.testing.assert_array_equal(u.stats0, r.stats0)
        np.testing.assert_array_equal(u.stats1, r.stats1)
    _same(compare_runs([y] * 5, h0, h1, runs="crossed", method="paired", n_resamples=100,
                       rng=2),
          compare_runs(_lazy([y] * 5, 90), _lazy(h0, 90), h1, runs="crossed",
                       method="paired", n_resamples=100, rng=2))


@pytest.mark.filterwarnings("ignore::evaluq.metrics.UndefinedMetricWarning")
def test_several_runs_string_labels_of_one_run_only(rng):
    y, h0, h1 = _runs_hard(rng, n_runs=2, n=600, k=3)
    names = np.array(["neg", "neu", "pos", "zzz"])
    y, h0, h1 = names[y], [names[h] for h in h0], [names[h] for h in h1]
    h1[1][-2:] = "zzz"                               # in the last chunk of run 1 only
    for runs in ("pooled", "two-level", "crossed"):
        kw = dict(runs=runs, method="paired", n_resamples=100, rng=3)
        _same(compare_runs([y, y], h0, h1, **kw),
              compare_runs(_lazy([y, y], 250), h0, _lazy(h1, 250), **kw))


@pytest.mark.parametrize("runs", ["pooled", "two-level", "crossed"])
def test_several_runs_soft_identical_for_any_chunking(rng, runs):
    """Entropy correlation centres on the mean of every run's items, in memory and here."""
    p, _, _ = _soft(rng, n=500, k=3)
    q0 = [_soft(rng, n=500, k=3)[1] for _ in range(3)]
    q1 = [_soft(rng, n=500, k=3)[2] for _ in range(3)]
    kw = dict(runs=runs, method="paired", n_resamples=150, rng=8)
    eager = compare_runs([p] * 3, q0, q1, **kw)
    for chunks in ((120, 3), (499, 2)):
        _same(eager, compare_runs(_lazy([p] * 3, chunks), q0, _lazy(q1, (200, 3)), **kw))


@pytest.mark.parametrize("runs", ["pooled", "two-level", "crossed"])
def test_several_runs_regression_identical(rng, runs):
    y = rng.normal(size=400)
    a = [y + rng.normal(size=400) for _ in range(2)]
    b = [y + 0.8 * rng.normal(size=400) for _ in range(2)]
    kw = dict(runs=runs, method="paired", n_resamples=100, rng=9)
    _same(compare_runs([y, y], a, b, **kw),
          compare_runs(_lazy([y, y], 150), a, _lazy(b, 150), **kw))


def test_runs_of_different_sizes_two_level(rng):
    """Pooled and two-level runs may hold different test sets (and one run in memory)."""
    y0, h00, h10 = _hard(rng, n=500)
    y1, h01, h11 = _hard(rng, n=700)
    for runs in ("pooled", "two-level"):
        kw = dict(runs=runs, method="paired", n_resamples=100, rng=4)
        _same(compare_runs([y0, y1], [h00, h01], [h10, h11], **kw),
              compare_runs([y0, da.from_array(y1, chunks=300)], [h00, h01], [h10, h11], **kw))


# --- several runs: validation, per chunk --------------------------------------------------------

def test_crossed_runs_with_different_targets_name_the_item(rng):
    y, h0, h1 = _runs_hard(rng, n_runs=2, n=600)
    y2 = y.copy()
    y2[437] = (y2[437] + 1) % 3
    with pytest.raises(ValueError, match=r"runs 0 and 1 have different targets \(first at "
                                         r"item 437\)"):
        compare_runs([da.from_array(y, chunks=200), y2], h0, h1, runs="crossed",
                     method="paired")
    with pytest.raises(ValueError, match="run 'a' has 600 items but run 'b' has 599"):
        compare_runs([da.from_array(y, chunks=200), y[:-1]], [h0[0], h0[1][:-1]],
                     [h1[0], h1[1][:-1]],
                     runs="crossed", method="paired", run_names=["a", "b"])


def test_bad_value_in_a_run_names_the_run_and_the_chunk(rng):
    y, h0, h1 = (x.astype(float) if isinstance(x, np.ndarray) else [v.astype(float) for v in x]
                 for x in _runs_hard(rng, n_runs=2, n=600))
    h1[1][512] = np.nan
    for runs in ("pooled", "crossed"):
        with pytest.raises(ValueError, match=r"run 1: `h1` contains 1 NaN.*items 500\.\.599"):
            compare_runs([y, y], h0, _lazy(h1, 100), runs=runs, method="paired", kind="hard")


def test_runs_of_different_kinds_refused(rng):
    y, h0, h1 = _hard(rng, n=100)
    p, q0, q1 = _soft(rng, n=100)
    with pytest.raises(ValueError, match="different kinds of labels"):
        compare_runs([da.from_array(y, chunks=50), p], [h0, q0], [h1, q1], method="paired")
    p4 = np.full((100, 4), 0.25)
    with pytest.raises(ValueError, match="same number of classes; got \\[3, 4\\]"):
        compare_runs([da.from_array(p, chunks=(50, 3)), p4], [q0, p4], [q1, p4],
                     method="paired")


def test_hard_targets_with_probability_rows_say_so_in_memory_and_on_dask(rng):
    """Before: 'non-integer values ... would compare real values (mse, mae)' in memory and
    '`h0` must be 1-D (item,) for regression inputs' on dask: neither says that the targets
    are labels and the predictions probability rows, nor what to do."""
    y = rng.integers(0, 3, 60)
    q0, q1 = rng.dirichlet(np.ones(3), 60), rng.dirichlet(np.ones(3), 60)
    match = (r"`targets` holds one label per item \(shape \(60,\): hard labels\) but `h0` "
             r"holds probability rows \(shape \(60, 3\): 3 classes\).*one-hot.*"
             r"`np\.eye\(3\)\[targets\]`.*kind='soft'.*`h0\.argmax\(axis=1\)`")
    for targets in (y, da.from_array(y, chunks=25)):
        for kw in ({}, {"metrics": "cross_entropy"}):
            with pytest.raises(ValueError, match=match):
                eq.bootstrap_test(targets, q0, q1, method="paired", n_resamples=10, **kw)
        for kind in ("hard", "soft"):
            with pytest.raises(ValueError, match=f"with kind='{kind}', " + match):
                eq.bootstrap_test(targets, q0, q1, kind=kind, n_resamples=10)
    # the remedy works: one-hot targets are soft labels, the cross-entropy the log loss
    res = eq.bootstrap_test(np.eye(3)[y], q0, q1, metrics="cross_entropy", method="paired",
                            n_resamples=10, rng=0)
    assert res.h0_value[0] == pytest.approx(-np.mean(np.log(q0[np.arange(60), y])))
    # and the other way round: probability-row targets with labels
    with pytest.raises(ValueError, match=r"`targets` holds probability rows .* but `h0` holds "
                                         r"one label or value per item .*give `h0` as "
                                         r"probability rows too.*kind='hard'"):
        eq.bootstrap_test(np.eye(3)[y], y, y, n_resamples=10)


def test_whole_number_targets_with_real_predictions_refused_on_dask_too(rng):
    """Before: on dask, one non-integer prediction anywhere made the test MSE / MAE silently
    (in memory it is refused as ambiguous, naming kind='regression')."""
    y = rng.integers(0, 2, 200)
    q0 = rng.random(200)
    q1 = y.astype(float)
    q1[130] = 0.25
    for h1 in (q1, da.from_array(q1, chunks=50)):
        with pytest.raises(ValueError, match=r"`targets` holds whole numbers \(class labels\?\) "
                                             r"but `h1` holds 1 non-integer value\(s\) \(item "
                                             r"130: 0\.25\).*Pass kind='regression'"):
            eq.bootstrap_test(da.from_array(y, chunks=50), np.round(q0), h1, n_resamples=10)
    lazy = eq.bootstrap_test(da.from_array(y, chunks=50), q0, q1, kind="regression",
                             method="paired", n_resamples=50, rng=0)
    _same(eq.bootstrap_test(y, q0, q1, kind="regression", method="paired", n_resamples=50,
                            rng=0), lazy)


def test_csv_headers_are_class_names_on_dask_too(tmp_path, rng):
    """Before: with a dask input, .csv files were read without their header, so two
    prediction files listing the classes in other orders were paired by position (a wrong
    cross-entropy, silently)."""
    import pandas as pd

    p, a, b = (rng.dirichlet(np.ones(2), 60) for _ in range(3))
    pd.DataFrame(a[:, ::-1], columns=["pos", "neg"]).to_csv(h0 := tmp_path / "a.csv",
                                                            index=False)
    pd.DataFrame(b, columns=["neg", "pos"]).to_csv(h1 := tmp_path / "b.csv", index=False)
    with pytest.raises(ValueError, match=r"the 'class' coordinates of `h1` and `h0` differ "
                                         r"\(.*a \.csv file's header"):
        eq.bootstrap_test(da.from_array(p, chunks=(20, 2)), h0, h1, method="paired",
                          n_resamples=10)
    pd.DataFrame(a, columns=["neg", "pos"]).to_csv(h0, index=False)   # one order: read
    lazy = eq.bootstrap_test(da.from_array(p, chunks=(20, 2)), h0, h1, metrics="cross_entropy",
                             method="paired", n_resamples=10, rng=0)
    assert lazy.h0_value[0] == pytest.approx(-np.mean(np.sum(p * np.log(a), axis=1)))

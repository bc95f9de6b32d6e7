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
    eager = eq.bootstrap_test(y, h0, h1, method="paired", n_resamples=200, rng=1)
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
    unit, *_ = _stream.stream_unit(da.from_array(y, chunks=333), da.from_array(h0, chunks=333),
                                   da.from_array(h1, chunks=333), kind=None, labels=None,
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


def test_centred_metric_refused_on_dask(rng):
    p, q0, q1 = _soft(rng, n=100)
    with pytest.raises(ValueError, match="'entropy_correlation'.*chunk by chunk"):
        eq.bootstrap_test(da.from_array(p, chunks=50), q0, q1,
                          metrics=["js_divergence", "entropy_correlation"])


def test_several_runs_refused_on_dask(rng):
    y, h0, h1 = _hard(rng, n=100)
    with pytest.raises(ValueError, match="one run"):
        compare_runs([da.from_array(y), y], [h0, h0], [h1, h1], runs="two-level",
                     method="paired")

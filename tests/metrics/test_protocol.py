"""The key invariant of the metric protocol: weighted sums equal explicitly repeated items."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluq as eq
from evaluq.metrics import Metric, get_metric
from evaluq.metrics._base import weighted_sums

N_ITEMS, N_CLASSES = 40, 4


def _inputs(rng: np.random.Generator, kind: str):
    """Targets and two systems' predictions (leading axis of 2) of each kind."""
    if kind == "hard":
        t = rng.integers(0, N_CLASSES, N_ITEMS)
        return t, rng.integers(0, N_CLASSES, (2, N_ITEMS))
    if kind == "soft":
        p = rng.dirichlet(np.ones(N_CLASSES), N_ITEMS)
        return p, rng.dirichlet(np.ones(N_CLASSES), (2, N_ITEMS))
    return rng.normal(size=N_ITEMS), rng.normal(size=(2, N_ITEMS))


def _bound(metric: Metric) -> Metric:
    return metric.for_labels(np.arange(N_CLASSES)) if metric.kind == "hard" else metric


ALL = [*eq.metrics.available_metrics(), "f1[2]", "precision[0]", "recall[3]",
       "cross_entropy[eps]", "kl[eps]"]


def _metric(name: str) -> Metric:
    factories = {"f1[2]": lambda: eq.metrics.f1_metric(target_class=2),
                 "precision[0]": lambda: eq.metrics.precision_metric(target_class=0),
                 "recall[3]": lambda: eq.metrics.recall_metric(target_class=3),
                 "cross_entropy[eps]": lambda: eq.metrics.cross_entropy_metric(eps=1e-9),
                 "kl[eps]": lambda: eq.metrics.kl_metric(eps=1e-9)}
    return _bound(factories[name]() if name in factories else get_metric(name))


@pytest.mark.parametrize("name", ALL)
def test_weighted_equals_repeated_items(rng, name):
    metric = _metric(name)
    targets, preds = _inputs(rng, metric.kind)
    weights = rng.integers(0, 4, (6, N_ITEMS)).astype(np.float64)
    weights[:, 0] = 0.0  # an item left out of every resample
    got = metric.weighted(targets, preds, weights, N_CLASSES)
    assert got.shape == (2, 6)
    for b, w in enumerate(weights.astype(int)):
        t_rep = np.repeat(targets, w, axis=0)
        for j in range(2):
            expected = metric(t_rep, np.repeat(preds[j], w, axis=0), N_CLASSES)
            assert got[j, b] == pytest.approx(float(expected), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("name", eq.metrics.available_metrics())
def test_call_matches_public_function(rng, name):
    metric = _metric(name)
    targets, preds = _inputs(rng, metric.kind)
    public = getattr(eq.metrics, name)
    assert float(metric(targets, preds[0], N_CLASSES)) == pytest.approx(
        public(targets, preds[0]), rel=1e-13)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(ALL))
def test_property_weighted_equals_repeated(seed, name):
    rng = np.random.default_rng(seed)
    metric = _metric(name)
    targets, preds = _inputs(rng, metric.kind)
    w = rng.integers(0, 3, N_ITEMS)
    w[rng.integers(N_ITEMS)] += 1  # at least one item
    got = metric.weighted(targets, preds[:1], w[None].astype(np.float64), N_CLASSES)[0, 0]
    expected = metric(np.repeat(targets, w, axis=0), np.repeat(preds[0], w, axis=0), N_CLASSES)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-13)


def test_infinite_item_with_zero_weight_is_left_out():
    p = np.array([[0.5, 0.5], [1.0, 0.0], [0.3, 0.7]])
    q = np.array([[0.5, 0.5], [0.0, 1.0], [0.6, 0.4]])  # item 1 has CE = +inf
    ce = get_metric("cross_entropy")
    weights = np.array([[1.0, 0.0, 2.0], [1.0, 1.0, 0.0]])
    got = ce.weighted(p, q, weights)
    keep = np.array([0, 2, 2])
    assert got[0] == pytest.approx(float(ce(p[keep], q[keep])))
    assert got[1] == np.inf


def test_weighted_sums_signs():
    stats = np.array([[1.0], [np.inf], [-np.inf], [np.nan]])
    w = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 1, 1, 0], [1, 0, 0, 1.0]])
    out = weighted_sums(w, stats)[:, 0]
    assert out[0] == 1.0
    assert out[1] == np.inf
    assert out[2] == -np.inf
    assert np.isnan(out[3])
    assert np.isnan(out[4])


def test_confusion_stats_layout():
    """Hard P/R/F1 statistics are one-hots of cell ``target * K + prediction``."""
    stats = get_metric("f1").item_stats(np.array([0, 1, 2]), np.array([1, 1, 0]), 3)
    assert stats.shape == (3, 9)
    assert np.flatnonzero(stats.sum(axis=0)).tolist() == [0 * 3 + 1, 1 * 3 + 1, 2 * 3 + 0]


@pytest.mark.parametrize("name", ["f1", "recall", "entropy_correlation", "js_distance", "mae"])
def test_registered_metrics_work_in_from_predictions(rng, name):
    metric = get_metric(name)
    targets, preds = _inputs(rng, metric.kind)
    dims = ("model", "item", "class") if metric.kind == "soft" else ("model", "item")
    da = xr.DataArray(preds, dims=dims, coords={"model": ["a", "b"]})
    cube = eq.from_predictions(targets, da, metric=name, n_boot=10, rng=0)
    public = getattr(eq.metrics, name)(targets, da)
    np.testing.assert_allclose(cube.score.isel(language=0, seed=0).values, public.values,
                               rtol=1e-13)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(eq.metrics.available_metrics()))
def test_property_item_order_does_not_matter(seed, name):
    rng = np.random.default_rng(seed)
    metric = get_metric(name)
    targets, preds = _inputs(rng, metric.kind)
    perm = rng.permutation(N_ITEMS)
    np.testing.assert_allclose(metric(targets[perm], preds[:, perm], N_CLASSES),
                               metric(targets, preds, N_CLASSES), rtol=1e-12, atol=1e-15)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["precision", "recall", "f1"]))
def test_property_macro_does_not_depend_on_label_order(seed, name):
    rng = np.random.default_rng(seed)
    y = rng.choice(["x", "y", "z"], 30)
    yhat = rng.choice(["x", "y", "z"], 30)
    func = getattr(eq.metrics, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", eq.metrics.UndefinedMetricWarning)
        a = func(y, yhat, labels=["z", "x", "y"])
        b = func(y, yhat)
    assert a == pytest.approx(b, abs=1e-15)


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

def test_register_metric_needs_a_metric():
    with pytest.raises(TypeError, match=r"`metric` must be a Metric instance.*'accuracy'"):
        eq.metrics.register_metric("accuracy")
    before = eq.metrics.available_metrics()
    with pytest.raises(TypeError, match=r"`metric` must be a Metric instance"):
        eq.metrics.register_metric(None)
    assert eq.metrics.available_metrics() == before


@pytest.mark.parametrize("name", [3, None, ["f1"]])
def test_get_metric_wrong_type(name):
    with pytest.raises(TypeError, match=r"`metric` must be a metric name or a Metric"):
        get_metric(name)


def test_metric_call_checks_the_inputs_against_its_kind():
    soft_t = np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]])
    soft_p = np.array([[0.3, 0.7], [0.4, 0.6], [0.8, 0.2]])
    with pytest.raises(TypeError, match=r"metric 'accuracy' is a hard metric: `targets` must "
                                        r"hold integer class codes"):
        get_metric("accuracy")(soft_t, soft_p)
    with pytest.raises(TypeError, match=r"metric 'kl' is a soft metric: `targets`"):
        get_metric("kl")(np.array([0, 1, 1]), np.array([0, 1, 0]))
    with pytest.raises(TypeError, match=r"metric 'mse' is a regression metric: `predictions`"):
        get_metric("mse")(np.array([1.0, 2.0]), np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"`predictions` of shape \(2,\) do not end in the "
                                         r"shape of `targets` \(3,\)"):
        get_metric("accuracy")(np.array([0, 1, 1]), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"`predictions` holds class code 2, outside "
                                         r"\[0, n_classes\) with n_classes=2"):
        get_metric("f1")(np.array([0, 1, 1]), np.array([0, 1, 2]), 2)
    with pytest.raises(ValueError, match=r"`targets` holds class code -1"):
        get_metric("accuracy")(np.array([0, -1]), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"`n_classes` must be a non-negative integer"):
        get_metric("f1")(np.array([0, 1]), np.array([0, 1]), -2)
    with pytest.raises(TypeError, match=r"metric 'accuracy' is a hard metric: `targets`"):
        get_metric("accuracy").weighted(soft_t, soft_p, np.ones((2, 3)))
    # well-formed encoded inputs still evaluate (against a hand count)
    assert float(get_metric("accuracy")(np.array([0, 1, 1]), np.array([0, 1, 0]))) == 2 / 3


# --- metrics with a global step (local_stats / global_stats) ------------------------------------

def _old_correlation_stats(t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Entropy correlation's statistics as written before the local / global split (the
    entropy kernel itself is unchanged)."""
    from evaluq.metrics import _soft

    x, y = _soft.normalized_entropy(t), _soft.normalized_entropy(q)
    x = np.broadcast_to(x, y.shape)
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    return np.stack([x, y, x * x, y * y, x * y], axis=-1)


@pytest.mark.parametrize("split", [[1], [7, 100], [250, 251, 499]])
def test_global_step_on_joined_chunks_equals_item_stats(rng, split):
    """Local statistics per chunk, joined, then the global step: the whole-array statistics,
    bit for bit, with leading axes."""
    m = get_metric("entropy_correlation")
    assert not m.item_local
    t = rng.dirichlet(np.ones(5), 500)
    q = rng.dirichlet(np.ones(5), (2, 500))
    parts = np.split(np.arange(500), split)
    local = np.concatenate([m.chunk_stats(t[i], q[:, i], 5) for i in parts], axis=-2)
    whole = m.item_stats(t, q, 5)
    np.testing.assert_array_equal(m.finish_stats(local, 5), whole)
    np.testing.assert_array_equal(whole, _old_correlation_stats(t, q))


def test_item_local_metrics_finish_unchanged(rng):
    m = get_metric("js_divergence")
    assert m.item_local
    t, q = _inputs(rng, "soft")
    local = m.chunk_stats(t, q, N_CLASSES)
    np.testing.assert_array_equal(m.finish_stats(local, N_CLASSES), m.item_stats(t, q, N_CLASSES))


def test_entropy_correlation_unchanged_on_nearly_constant_entropies(rng):
    """Adversarial data for sums of x, x^2: entropies all within 1e-7 of 0.97 (an offset
    1e7 times the spread). The centred statistics give Pearson's r to 1e-9 (reference: the
    same entropies in extended precision), as before the split."""
    n, k = 2000, 3
    base = np.array([0.5, 0.3, 0.2])
    t = base + 1e-7 * rng.normal(size=(n, k)) * np.array([1, -1, 0])
    q = base + 1e-7 * rng.normal(size=(n, k)) * np.array([1, 0, -1])
    m = get_metric("entropy_correlation")
    x, y = m.chunk_stats(t, q, k)[..., 0], m.chunk_stats(t, q, k)[..., 1]
    assert np.ptp(x) < 1e-6
    assert x.mean() > 0.9
    xl, yl = x.astype(np.longdouble), y.astype(np.longdouble)
    xl, yl = xl - xl.mean(), yl - yl.mean()
    ref = float((xl * yl).sum() / np.sqrt((xl * xl).sum() * (yl * yl).sum()))
    got = float(m(t, q, k))
    assert abs(got - ref) < 1e-9
    np.testing.assert_array_equal(m.item_stats(t, q, k), _old_correlation_stats(t, q))


def test_metric_global_step_arguments_checked():
    def local(t, p, k):
        return np.asarray(p)[..., None]

    kw = dict(higher_is_better=True, kind="regression", item_stats=local,
              from_sums=lambda s, n, k: s[..., 0] / n)
    with pytest.raises(ValueError, match="'m'.*`local_stats` and `global_stats` go together"):
        Metric("m", local_stats=local, **kw)
    with pytest.raises(TypeError, match="'m'.*`global_stats` must be callable"):
        Metric("m", local_stats=local, global_stats=3, **kw)

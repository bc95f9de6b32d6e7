"""Hard-label metrics against scikit-learn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning as SkUndefined
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

import evaluq as eq
from evaluq.metrics import UndefinedMetricWarning

FUNCS = {"precision": 0, "recall": 1, "f1": 2}


def _sklearn(y, yhat, labels=None, average="macro"):
    """scikit-learn's P, R, F1 with zero_division='warn', its warnings swallowed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkUndefined)
        return precision_recall_fscore_support(y, yhat, labels=labels, average=average,
                                               zero_division="warn")


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return func(*args, **kwargs)


@pytest.mark.parametrize("name", list(FUNCS))
def test_macro_and_per_class_match_sklearn(rng, name):
    y = rng.integers(0, 4, 200)
    yhat = np.where(rng.random(200) < 0.6, y, rng.integers(0, 4, 200))
    func = getattr(eq.metrics, name)
    assert func(y, yhat) == pytest.approx(_sklearn(y, yhat)[FUNCS[name]], abs=1e-15)
    per_class = func(y, yhat, average=None)
    np.testing.assert_allclose(per_class.values, _sklearn(y, yhat, average=None)[FUNCS[name]],
                               atol=1e-15)
    assert per_class.dims == ("class",)
    assert per_class["class"].values.tolist() == [0, 1, 2, 3]


def test_accuracy_matches_sklearn(rng):
    y = rng.integers(0, 3, 101)
    yhat = rng.integers(0, 3, 101)
    assert eq.metrics.accuracy(y, yhat) == pytest.approx(accuracy_score(y, yhat), abs=1e-15)
    assert isinstance(eq.metrics.accuracy(y, yhat), float)


@pytest.mark.parametrize("name", list(FUNCS))
def test_string_labels_and_target_class_by_value(name):
    y = ["neg", "pos", "pos", "neu", "neg", "pos", "neu", "neu"]
    yhat = ["neg", "pos", "neu", "neu", "pos", "pos", "neg", "neu"]
    func = getattr(eq.metrics, name)
    for label in ("neg", "neu", "pos"):
        expected = _sklearn(y, yhat, labels=[label], average=None)[FUNCS[name]][0]
        assert func(y, yhat, target_class=label) == pytest.approx(expected, abs=1e-15)
    assert func(y, yhat) == pytest.approx(_sklearn(y, yhat)[FUNCS[name]], abs=1e-15)


def test_target_class_is_a_value_not_a_position():
    # labels 10, 20, 30: target_class=1 is not a label (BooStSa would take position 1)
    y = [10, 20, 30, 20]
    yhat = [10, 20, 20, 20]
    assert eq.metrics.precision(y, yhat, target_class=20) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=r"`target_class` 1 is not one of the labels"):
        eq.metrics.precision(y, yhat, target_class=1)


def test_user_labels_order_and_unseen_class(rng):
    y = ["b", "a", "b", "a"]
    yhat = ["b", "b", "b", "a"]
    labels = ["c", "b", "a"]
    with pytest.warns(UndefinedMetricWarning, match=r"precision is ill-defined .*\['c'\]"):
        per_class = eq.metrics.precision(y, yhat, average=None, labels=labels)
    expected = _sklearn(y, yhat, labels=labels, average=None)[0]
    np.testing.assert_allclose(per_class.values, expected)
    assert per_class["class"].values.tolist() == labels
    with pytest.warns(UndefinedMetricWarning):
        macro = eq.metrics.f1(y, yhat, labels=labels)
    assert macro == pytest.approx(_sklearn(y, yhat, labels=labels)[2])


@pytest.mark.parametrize(("name", "reason"), [("precision", "no predicted items"),
                                              ("recall", "no true items")])
def test_zero_division_warns_like_sklearn(name, reason):
    y = [0, 0, 1, 1]
    yhat = [0, 0, 0, 0] if name == "precision" else [0, 2, 1, 1]
    with pytest.warns(UndefinedMetricWarning, match=reason):
        ours = getattr(eq.metrics, name)(y, yhat)
    with pytest.warns(SkUndefined):
        theirs = precision_recall_fscore_support(y, yhat, average="macro",
                                                 zero_division="warn")[FUNCS[name]]
    assert ours == pytest.approx(theirs)


def test_f1_warns_only_for_class_with_no_true_nor_predicted_items():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert eq.metrics.f1([0, 0, 1], [0, 0, 0]) == pytest.approx((0.8 + 0.0) / 2)
    with pytest.warns(UndefinedMetricWarning, match=r"no true nor predicted items"):
        assert eq.metrics.f1([0, 1], [0, 1], labels=[0, 1, 2]) == pytest.approx(2 / 3)


def test_dataarray_keeps_leading_dims(rng):
    y = rng.integers(0, 3, 50)
    preds = rng.integers(0, 3, (2, 3, 50))
    da = xr.DataArray(preds, dims=("model", "seed", "item"), coords={"model": ["a", "b"]})
    acc = eq.metrics.accuracy(xr.DataArray(y, dims="item"), da)
    assert acc.dims == ("model", "seed")
    assert acc["model"].values.tolist() == ["a", "b"]
    expected = [[accuracy_score(y, p) for p in m] for m in preds]
    np.testing.assert_allclose(acc.values, expected)
    f1 = _quiet(eq.metrics.f1, y, da.transpose("item", "seed", "model"), average=None)
    assert f1.dims == ("seed", "model", "class")  # leading dims keep their order
    np.testing.assert_allclose(f1.sel(model="b").isel(seed=2).values,
                               _sklearn(y, preds[1, 2], average=None)[2])


def test_average_and_target_class_errors():
    with pytest.raises(ValueError, match=r"`average` must be one of 'macro', None; got 'micro'"):
        eq.metrics.f1([0, 1], [0, 1], average="micro")
    with pytest.raises(ValueError, match=r"cannot be combined with `average=None`"):
        eq.metrics.f1([0, 1], [0, 1], average=None, target_class=1)


def test_confusion_matrix():
    c = eq.metrics.confusion_matrix(np.array([0, 1, 1, 2]), np.array([[0, 1, 2, 2]]), 3)
    assert c.tolist() == [[[1, 0, 0], [0, 1, 1], [0, 0, 1]]]


label_lists = st.integers(2, 40).flatmap(
    lambda n: st.tuples(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n),
                        st.lists(st.sampled_from("abcde"), min_size=n, max_size=n)))


@settings(max_examples=40, deadline=None)
@given(label_lists)
def test_property_agrees_with_sklearn(pair):
    y, yhat = pair
    assert eq.metrics.accuracy(y, yhat) == pytest.approx(accuracy_score(y, yhat), abs=1e-12)
    for name, pos in FUNCS.items():
        ours = _quiet(getattr(eq.metrics, name), y, yhat)
        assert ours == pytest.approx(_sklearn(y, yhat)[pos], abs=1e-12)
        per_class = _quiet(getattr(eq.metrics, name), y, yhat, average=None)
        np.testing.assert_allclose(per_class.values, _sklearn(y, yhat, average=None)[pos],
                                   atol=1e-12)
        label = yhat[0]
        one = _quiet(getattr(eq.metrics, name), y, yhat, target_class=label)
        assert one == pytest.approx(_sklearn(y, yhat, labels=[label], average=None)[pos][0],
                                    abs=1e-12)


def test_metric_factories():
    m = eq.metrics.f1_metric(target_class="pos")
    assert m.name == "f1[pos]"
    assert m.higher_is_better
    assert m.target_class == "pos"
    with pytest.raises(ValueError, match=r"call `metric.for_labels\(label_set\)`"):
        m(np.array([0, 1]), np.array([0, 1]), 2)
    x = eq.metrics.prepare_inputs(["neg", "pos", "pos"], ["pos", "pos", "neg"])
    bound = m.for_labels(x.labels)
    assert float(bound(x.targets, x.predictions[0], x.n_classes)) == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"`target_class` 'pos' is not one of the labels"):
        m.for_labels(np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"needs the label set"):
        m.for_labels(None)
    assert eq.metrics.precision_metric() is eq.metrics.get_metric("precision") or (
        eq.metrics.precision_metric().name == "precision")
    assert eq.metrics.recall_metric(target_class=3).name == "recall[3]"


def test_metric_with_fixed_labels_checks_encoding():
    m = eq.metrics.precision_metric(labels=["a", "b", "c"])
    assert m.for_labels(np.array(["a", "b", "c"])) is m
    with pytest.raises(ValueError, match=r"is defined on labels \['a', 'b', 'c'\]"):
        m.for_labels(np.array(["a", "b"]))
    with pytest.raises(ValueError, match=r"`target_class` 'z' is not in `labels`"):
        eq.metrics.f1_metric(target_class="z", labels=["a", "b"])


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

@pytest.mark.parametrize("factory", [eq.metrics.f1_metric, eq.metrics.precision_metric,
                                     eq.metrics.recall_metric])
def test_metric_constructors_refuse_bad_label_sets(factory):
    with pytest.raises(ValueError, match=r"`labels` holds duplicates: \[0\] in \[0, 0, 1\]"):
        factory(labels=[0, 0, 1])
    with pytest.raises(ValueError, match=r"`labels` holds duplicates: \['a'\]"):
        factory(labels=["a", "b", "a"], target_class="b")
    with pytest.raises(ValueError, match=r"`labels` must be a non-empty 1-D sequence"):
        factory(labels=[])
    with pytest.raises(TypeError, match=r"`labels` must be a sequence of labels, not a single "
                                        r"string"):
        factory(labels="abc")
    assert factory(labels=[2, 0, 1]).labels == (2, 0, 1)


def test_confusion_matrix_checks_codes_and_n_classes():
    cm = eq.metrics.confusion_matrix
    with pytest.raises(ValueError, match=r"`targets` holds class code 5, outside \[0, n_classes\)"
                                         r" with n_classes=2"):
        cm(np.array([0, 5]), np.array([0, 1]), 2)
    with pytest.raises(ValueError, match=r"`predictions` holds class code -1"):
        cm(np.array([0, 1]), np.array([0, -1]), 2)
    with pytest.raises(ValueError, match=r"`n_classes` must be >= 1; got -1"):
        cm(np.array([0]), np.array([0]), -1)
    with pytest.raises(TypeError, match=r"`n_classes` must be an integer; got 2.0"):
        cm(np.array([0]), np.array([0]), 2.0)
    with pytest.raises(TypeError, match=r"confusion_matrix: `targets` must hold integer class "
                                        r"codes"):
        cm(np.array([0.0, 1.0]), np.array([0, 1]), 2)
    with pytest.raises(ValueError, match=r"`predictions` of shape \(3,\) do not end in the "
                                         r"shape of `targets` \(2,\)"):
        cm(np.array([0, 1]), np.array([0, 1, 1]), 2)
    # a hand count, with leading axes
    out = cm(np.array([0, 1, 1]), np.array([[0, 0, 1], [1, 1, 1]]), 2)
    np.testing.assert_array_equal(out, [[[1, 0], [1, 1]], [[0, 1], [0, 2]]])

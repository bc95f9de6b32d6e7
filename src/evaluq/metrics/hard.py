"""Metrics on hard labels: accuracy; precision, recall and F1 per class and macro-averaged.

Precision, recall and F1 are functions of the ``K x K`` confusion matrix ``C[t, p]`` (target
``t``, prediction ``p``), whose per-item statistic is a one-hot over the ``K * K`` cells (cell
``t * K + p``): weighted sums of these are the confusion matrix of any resample. For class k,
with ``TP_k = C[k, k]``, ``n_pred_k = sum_t C[t, k]`` and ``n_true_k = sum_p C[k, p]``:

.. math::

    P_k = TP_k / n\\_pred_k, \\qquad R_k = TP_k / n\\_true_k, \\qquad
    F1_k = 2 TP_k / (n\\_pred_k + n\\_true_k)

and the macro average is the unweighted mean over the label set (the union of the labels in
targets and predictions, or the set given as ``labels``). A zero denominator makes the value 0
and, in the public functions, raises :class:`UndefinedMetricWarning`, exactly as scikit-learn
does with ``zero_division="warn"``.

``target_class`` selects a class by its label *value* (BooStSa's ``targetclass`` is a position
in its internal label order: a silent source of errors we do not repeat).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr

from evaluq._dims import CLASS
from evaluq._validation import check_choice, check_int, check_memory
from evaluq._warn import warn
from evaluq.metrics._base import ACCURACY, Metric, register_metric
from evaluq.metrics._common import UndefinedMetricWarning, wrap
from evaluq.metrics._inputs import PreparedInputs, check_label_set, prepare_inputs

Average = Literal["macro"] | None
_WHICH = ("precision", "recall", "f1")


# --- kernels ------------------------------------------------------------------------------------

def _confusion_stats(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-item one-hot over the ``K * K`` confusion cells, shape ``(..., N, K * K)``."""
    cell = np.asarray(targets) * n_classes + np.asarray(predictions)
    return (cell[..., None] == np.arange(n_classes * n_classes)).astype(np.float64)


def confusion_matrix(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    """Confusion counts ``(..., K, K)`` (rows targets, columns predictions) of class codes.

    Parameters
    ----------
    targets : numpy.ndarray
        Integer class codes in ``0..n_classes-1``, shape ``(N,)`` (or broadcastable to
        ``predictions``).
    predictions : numpy.ndarray
        Integer class codes, shape ``(..., N)``; the leading axes are kept.
    n_classes : int
        K, the number of classes (> every code).

    Returns
    -------
    numpy.ndarray
        Float counts of shape ``(..., K, K)``.

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.metrics import confusion_matrix
    >>> confusion_matrix(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]), 2)
    array([[2., 0.],
           [1., 1.]])
    """
    n_classes = check_int("n_classes", n_classes, minimum=1)
    check_memory("n_classes", 2 * 8 * n_classes * n_classes * max(
        1, int(np.prod(np.shape(targets)[:-1]))), hint=" (the matrix is n_classes x n_classes)")
    targets, predictions = ACCURACY.check_encoded(targets, predictions, n_classes,
                                                  caller="confusion_matrix")
    lead = predictions.shape[:-1]
    n_items = predictions.shape[-1]
    n_lead = int(np.prod(lead, dtype=np.int64))
    cell = (np.asarray(targets) * n_classes + predictions).reshape(n_lead, n_items)
    flat = cell + (np.arange(n_lead) * n_classes * n_classes)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_lead * n_classes * n_classes)
    return counts.reshape(*lead, n_classes, n_classes).astype(np.float64)


def _per_class(confusion: np.ndarray, which: str) -> np.ndarray:
    """Per-class precision / recall / F1 ``(..., K)`` from confusion counts (0 where undefined)."""
    tp = np.diagonal(confusion, axis1=-2, axis2=-1)
    n_pred = confusion.sum(axis=-2)
    n_true = confusion.sum(axis=-1)
    numerator, denominator = {
        "precision": (tp, n_pred),
        "recall": (tp, n_true),
        "f1": (2.0 * tp, n_pred + n_true),
    }[which]
    return numerator / np.where(denominator == 0, 1.0, denominator)


def _undefined(confusion: np.ndarray, which: str) -> np.ndarray:
    """Mask ``(..., K)`` of classes whose ``which`` has a zero denominator."""
    n_pred = confusion.sum(axis=-2)
    n_true = confusion.sum(axis=-1)
    return {"precision": n_pred == 0, "recall": n_true == 0,
            "f1": (n_pred + n_true) == 0}[which]


def _from_sums_factory(which: str, code: int | None) -> Callable[..., np.ndarray]:
    def from_sums(sums: np.ndarray, total: np.ndarray, n_classes: int) -> np.ndarray:
        confusion = sums.reshape(*sums.shape[:-1], n_classes, n_classes)
        values = _per_class(confusion, which)
        return values.mean(axis=-1) if code is None else values[..., code]
    return from_sums


def _unbound(name: str) -> Callable[..., np.ndarray]:
    def fail(*args: Any) -> np.ndarray:
        raise ValueError(f"metric {name!r} selects a class by label value: call "
                         "`metric.for_labels(label_set)` with the label set of the encoded "
                         "inputs (PreparedInputs.labels) before evaluating it")
    return fail


def _make(which: str, target_class: Any = None,
          labels: Sequence[Any] | None = None) -> Metric:
    name = which if target_class is None else f"{which}[{target_class}]"
    label_tuple = None if labels is None else tuple(check_label_set(labels).tolist())
    if target_class is None:
        return Metric(name, higher_is_better=True, kind="hard", item_stats=_confusion_stats,
                      from_sums=_from_sums_factory(which, None), labels=label_tuple)
    if label_tuple is not None and target_class not in label_tuple:
        raise ValueError(f"`target_class` {target_class!r} is not in `labels` "
                         f"{list(label_tuple)}")

    def bind(label_set: np.ndarray) -> Metric:
        code = _class_code(target_class, label_set)
        return Metric(name, higher_is_better=True, kind="hard", item_stats=_confusion_stats,
                      from_sums=_from_sums_factory(which, code), labels=label_tuple,
                      target_class=target_class)

    return Metric(name, higher_is_better=True, kind="hard", item_stats=_unbound(name),
                  from_sums=_unbound(name), labels=label_tuple, target_class=target_class,
                  bind=bind)


def _class_code(target_class: Any, label_set: np.ndarray) -> int:
    hits = np.flatnonzero(np.asarray(label_set, dtype=object) == target_class)
    if hits.size == 0:
        raise ValueError(f"`target_class` {target_class!r} is not one of the labels "
                         f"{np.asarray(label_set).tolist()}")
    return int(hits[0])


PRECISION = register_metric(_make("precision"))
RECALL = register_metric(_make("recall"))
F1 = register_metric(_make("f1"))


def precision_metric(*, target_class: Any = None,
                     labels: Sequence[Any] | None = None) -> Metric:
    """Precision as a :class:`Metric`: macro-averaged, or of one class selected by label value.

    Parameters
    ----------
    target_class
        Label value of the class (default: macro average over the label set).
    labels
        A fixed label set (default: the union of the labels in the inputs).

    Returns
    -------
    Metric
        Named ``"precision"`` or ``"precision[<target_class>]"``. With ``target_class``, call
        :meth:`Metric.for_labels` on the inputs' label set before evaluating it.

    Examples
    --------
    >>> from evaluq.metrics import precision_metric, prepare_inputs
    >>> x = prepare_inputs(["a", "b", "b", "a"], ["a", "b", "a", "a"])
    >>> m = precision_metric(target_class="a").for_labels(x.labels)
    >>> round(float(m(x.targets, x.predictions[0], x.n_classes)), 4)
    0.6667
    """
    return _make("precision", target_class, labels)


def recall_metric(*, target_class: Any = None, labels: Sequence[Any] | None = None) -> Metric:
    """Recall as a :class:`Metric`: macro-averaged, or of one class selected by label value.

    Parameters
    ----------
    target_class : optional
        Label value of the class (default None: macro average over the label set).
    labels : sequence, optional
        A fixed label set (default None: the union of the labels in the inputs).

    Returns
    -------
    Metric
        Named ``"recall"`` or ``"recall[<target_class>]"``. With ``target_class``, call
        :meth:`Metric.for_labels` on the inputs' label set before evaluating it.

    Examples
    --------
    >>> from evaluq.metrics import prepare_inputs, recall_metric
    >>> x = prepare_inputs(["a", "b", "b", "a"], ["a", "b", "a", "a"])
    >>> m = recall_metric(target_class="b").for_labels(x.labels)
    >>> float(m(x.targets, x.predictions[0], x.n_classes))
    0.5
    """
    return _make("recall", target_class, labels)


def f1_metric(*, target_class: Any = None, labels: Sequence[Any] | None = None) -> Metric:
    """F1 as a :class:`Metric`: macro-averaged, or of one class selected by label value.

    Parameters
    ----------
    target_class : optional
        Label value of the class (default None: macro average over the label set).
    labels : sequence, optional
        A fixed label set (default None: the union of the labels in the inputs).

    Returns
    -------
    Metric
        Named ``"f1"`` or ``"f1[<target_class>]"``. With ``target_class``, call
        :meth:`Metric.for_labels` on the inputs' label set before evaluating it.

    Examples
    --------
    >>> from evaluq.metrics import f1_metric, prepare_inputs
    >>> x = prepare_inputs(["a", "b", "b", "a"], ["a", "b", "a", "a"])
    >>> m = f1_metric(target_class="a").for_labels(x.labels)
    >>> round(float(m(x.targets, x.predictions[0], x.n_classes)), 4)
    0.8
    """
    return _make("f1", target_class, labels)


# --- public functions ---------------------------------------------------------------------------

def accuracy(targets: Any, predictions: Any, *,
             labels: Sequence[Any] | None = None) -> float | xr.DataArray:
    """Share of items whose predicted label equals the target label.

    .. math:: \\mathrm{acc} = \\frac{1}{N} \\sum_i [\\hat y_i = y_i]

    Parameters
    ----------
    targets, predictions
        Per-item labels (lists, arrays, DataArrays with an ``item`` dim, or file paths; see
        :func:`evaluq.metrics.prepare_inputs`). DataArray predictions may carry further dims
        (``model``, ``seed``, ...), which the result keeps.
    labels
        The label set; a label outside it is an error.

    Returns
    -------
    float or xarray.DataArray

    See Also
    --------
    precision, recall, f1

    Examples
    --------
    >>> import evaluq as eq
    >>> eq.metrics.accuracy(["a", "b", "b", "a"], ["a", "b", "a", "a"])
    0.75
    """
    x = prepare_inputs(targets, predictions, kind="hard", labels=labels, allow_leading=True)
    return wrap(ACCURACY(x.targets, x.predictions[0], x.n_classes), x)


def _prf(which: str, targets: Any, predictions: Any, average: Average, target_class: Any,
         labels: Sequence[Any] | None) -> float | xr.DataArray:
    check_choice("average", average, ("macro", None))
    if target_class is not None and average is None:
        raise ValueError("`target_class` selects one class; it cannot be combined with "
                         "`average=None` (every class)")
    x: PreparedInputs = prepare_inputs(targets, predictions, kind="hard", labels=labels,
                                       allow_leading=True)
    assert x.labels is not None
    confusion = confusion_matrix(x.targets, x.predictions[0], x.n_classes)
    values = _per_class(confusion, which)
    undefined = _undefined(confusion, which)
    if target_class is not None:
        code = _class_code(target_class, x.labels)
        values, undefined = values[..., code], undefined[..., code:code + 1]
    if undefined.any():
        bad = x.labels[np.flatnonzero(undefined.reshape(-1, undefined.shape[-1]).any(axis=0))]
        if target_class is not None:
            bad = np.asarray([target_class])
        reason = {"precision": "no predicted items", "recall": "no true items",
                  "f1": "no true nor predicted items"}[which]
        warn(f"{which} is ill-defined and set to 0.0 for label(s) {bad.tolist()} "
             f"with {reason}", UndefinedMetricWarning)
    if target_class is not None:
        return wrap(values, x)
    if average is None:
        return wrap(values, x, tail={CLASS: x.labels})
    return wrap(values.mean(axis=-1), x)


_PRF_DOC = """{title}

.. math:: {formula}

per class k, where ``TP_k`` counts items of class k predicted as k, ``n_pred_k`` the items
predicted as k and ``n_true_k`` the items of class k. A zero denominator gives 0 and an
:class:`UndefinedMetricWarning` (scikit-learn's ``zero_division="warn"``).

Parameters
----------
targets, predictions
    Per-item labels (lists, arrays, DataArrays with an ``item`` dim, or file paths; see
    :func:`evaluq.metrics.prepare_inputs`). DataArray predictions may carry further dims.
average
    ``"macro"`` (default): the unweighted mean over the label set. ``None``: every class, as a
    DataArray over ``class`` (coordinates: the labels).
target_class
    The label *value* of one class to report instead of the average.
labels
    The label set (and the order of the per-class output). Default: the sorted union of the
    labels in targets and predictions. A label outside a given set is an error.

Returns
-------
float or xarray.DataArray

See Also
--------
{see_also}

Examples
--------
>>> import evaluq as eq
>>> y, yhat = ["a", "b", "b", "a", "c"], ["a", "b", "a", "a", "c"]
>>> round(eq.metrics.{name}(y, yhat), 4)
{macro}
>>> round(eq.metrics.{name}(y, yhat, target_class="a"), 4)
{class_a}
>>> eq.metrics.{name}(y, yhat, average=None).round(4).values.tolist()
{per_class}
"""


def precision(targets: Any, predictions: Any, *, average: Average = "macro",
              target_class: Any = None,
              labels: Sequence[Any] | None = None) -> float | xr.DataArray:
    return _prf("precision", targets, predictions, average, target_class, labels)


def recall(targets: Any, predictions: Any, *, average: Average = "macro",
           target_class: Any = None,
           labels: Sequence[Any] | None = None) -> float | xr.DataArray:
    return _prf("recall", targets, predictions, average, target_class, labels)


def f1(targets: Any, predictions: Any, *, average: Average = "macro",
       target_class: Any = None,
       labels: Sequence[Any] | None = None) -> float | xr.DataArray:
    return _prf("f1", targets, predictions, average, target_class, labels)


precision.__doc__ = _PRF_DOC.format(
    title="Precision per class or macro-averaged.", name="precision",
    formula="P_k = TP_k / n\\_pred_k", see_also="recall, f1, precision_metric",
    macro="0.8889", class_a="0.6667", per_class="[0.6667, 1.0, 1.0]")
recall.__doc__ = _PRF_DOC.format(
    title="Recall per class or macro-averaged.", name="recall",
    formula="R_k = TP_k / n\\_true_k", see_also="precision, f1, recall_metric",
    macro="0.8333", class_a="1.0", per_class="[1.0, 0.5, 1.0]")
f1.__doc__ = _PRF_DOC.format(
    title="F1 (harmonic mean of precision and recall) per class or macro-averaged.", name="f1",
    formula="F1_k = 2 TP_k / (n\\_pred_k + n\\_true_k)", see_also="precision, recall, f1_metric",
    macro="0.8222", class_a="0.8", per_class="[0.8, 0.6667, 1.0]")

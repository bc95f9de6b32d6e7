"""Evaluation metrics (hard, soft and regression), written on one protocol.

Every metric is a plain function (``eq.metrics.f1(targets, predictions)``) and a registered
:class:`Metric` (``get_metric("f1")``) whose per-item statistics let the resampling engines
evaluate thousands of resamples as one matrix product; see :mod:`evaluq.metrics._base`.

- hard labels (:mod:`evaluq.metrics.hard`): accuracy, precision, recall, f1
- soft labels (:mod:`evaluq.metrics.soft`): cross_entropy, kl, js_divergence, js_distance,
  entropy_similarity, entropy_correlation, emd
- regression (:mod:`evaluq.metrics.regression`): mse, mae

Inputs are parsed by :func:`prepare_inputs` (lists, arrays, DataArrays, files).
"""

from evaluq.metrics._base import Metric, available_metrics, get_metric, register_metric
from evaluq.metrics._common import UndefinedMetricWarning
from evaluq.metrics._inputs import PreparedInputs, load_predictions, prepare_inputs
from evaluq.metrics.hard import (
    accuracy,
    confusion_matrix,
    f1,
    f1_metric,
    precision,
    precision_metric,
    recall,
    recall_metric,
)
from evaluq.metrics.regression import mae, mse
from evaluq.metrics.soft import (
    cross_entropy,
    cross_entropy_metric,
    emd,
    entropy_correlation,
    entropy_similarity,
    js_distance,
    js_divergence,
    kl,
    kl_metric,
)

__all__ = [
    "Metric",
    "PreparedInputs",
    "UndefinedMetricWarning",
    "accuracy",
    "available_metrics",
    "confusion_matrix",
    "cross_entropy",
    "cross_entropy_metric",
    "emd",
    "entropy_correlation",
    "entropy_similarity",
    "f1",
    "f1_metric",
    "get_metric",
    "js_distance",
    "js_divergence",
    "kl",
    "kl_metric",
    "load_predictions",
    "mae",
    "mse",
    "precision",
    "precision_metric",
    "prepare_inputs",
    "recall",
    "recall_metric",
    "register_metric",
]

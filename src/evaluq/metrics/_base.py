"""The metric protocol: per-item sufficient statistics and a finaliser.

Every metric in evaluq is written as

    value = from_sums(sum_i w_i * s_i,  sum_i w_i)

where ``s_i = item_stats(target_i, prediction_i)`` is a short vector of per-item statistics and
``w_i`` are item weights (1 for the full test set, bootstrap counts for a resample, 0/1 masks
for a sub-sample). Accuracy has one statistic (correct or not); precision / recall / F1 need the
confusion matrix (``K * K`` one-hot statistics); entropy correlation needs the five sums of
x, y, x^2, y^2, xy; the soft metrics are means of per-item values.

Written this way, any number of bootstrap replicates is one matrix product
``counts (B, N) @ stats (N, S)`` (or, for hard labels, a multinomial draw over the few cells of
(target, prediction) pairs), so no resampling loop ever runs over items in Python. The same
objects serve :func:`evaluq.from_predictions` and :func:`evaluq.bootstrap_test`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

MetricKind = Literal["hard", "soft", "regression"]

ItemStats = Callable[[np.ndarray, np.ndarray, int], np.ndarray]
FromSums = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class Metric:
    """A metric written as per-item statistics plus a finaliser.

    Parameters
    ----------
    name
        Registry name (``"accuracy"``, ``"f1"``, ``"cross_entropy"``, ...).
    higher_is_better
        Orientation: significance tests report ``M(h1) - M(h0)`` for higher-is-better metrics
        and ``M(h0) - M(h1)`` otherwise, so that positive always means "h1 is better".
    kind
        ``"hard"`` (integer class codes), ``"soft"`` (probability rows over classes) or
        ``"regression"`` (real values).
    item_stats
        ``item_stats(targets, predictions, n_classes) -> stats`` with targets of shape
        ``(N,)`` (hard, regression) or ``(N, K)`` (soft), predictions of shape ``(..., N)`` or
        ``(..., N, K)``, and stats of shape ``(..., N, S)``.
    from_sums
        ``from_sums(sums, total_weight, n_classes) -> value`` with sums of shape ``(..., S)``
        and total weights broadcastable to ``(...)``.
    """

    name: str
    higher_is_better: bool
    kind: MetricKind
    item_stats: ItemStats
    from_sums: FromSums

    def __call__(self, targets: np.ndarray, predictions: np.ndarray,
                 n_classes: int = 0) -> np.ndarray:
        """Value of the metric on the full set of items (every weight 1)."""
        stats = self.item_stats(targets, predictions, n_classes)
        n_items = stats.shape[-2]
        return self.from_sums(stats.sum(axis=-2), np.asarray(float(n_items)), n_classes)

    def weighted(self, targets: np.ndarray, predictions: np.ndarray, weights: np.ndarray,
                 n_classes: int = 0) -> np.ndarray:
        """Value of the metric under item weights.

        ``weights`` has shape ``(B, N)`` (for example bootstrap counts); the result has shape
        ``(..., B)`` where ``...`` are the leading axes of ``predictions``.
        """
        stats = self.item_stats(targets, predictions, n_classes)  # (..., N, S)
        sums = np.einsum("bn,...ns->...bs", weights, stats, optimize=True)
        return self.from_sums(sums, weights.sum(axis=-1), n_classes)


_REGISTRY: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add a metric to the registry used by ``metric="name"`` arguments."""
    _REGISTRY[metric.name] = metric
    return metric


def get_metric(metric: str | Metric) -> Metric:
    """Look a metric up by name (or return it unchanged)."""
    if isinstance(metric, Metric):
        return metric
    try:
        return _REGISTRY[metric]
    except KeyError:
        shown = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"`metric` must be one of {shown}; got {metric!r}") from None


def available_metrics() -> list[str]:
    """Names of the registered metrics."""
    return sorted(_REGISTRY)


# --- accuracy: the reference implementation of the protocol -------------------------------------

def _accuracy_stats(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    return (np.asarray(predictions) == np.asarray(targets)).astype(np.float64)[..., None]


def _accuracy_from_sums(sums: np.ndarray, total: np.ndarray, n_classes: int) -> np.ndarray:
    return sums[..., 0] / total


ACCURACY = register_metric(
    Metric("accuracy", higher_is_better=True, kind="hard",
           item_stats=_accuracy_stats, from_sums=_accuracy_from_sums)
)

"""Evaluation metrics (hard, soft and regression), written on one protocol.

See :mod:`evaluq.metrics._base` for the protocol shared with the resampling engines.
"""

from evaluq.metrics._base import Metric, available_metrics, get_metric, register_metric

__all__ = ["Metric", "available_metrics", "get_metric", "register_metric"]

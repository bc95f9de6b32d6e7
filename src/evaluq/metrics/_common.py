"""Plumbing shared by the public metric functions: inputs in, float or DataArray out."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from evaluq.errors import EvaluqWarning
from evaluq.metrics._inputs import PreparedInputs


class UndefinedMetricWarning(EvaluqWarning):
    """A metric is undefined on these inputs (a zero division) and was set to 0 or NaN.

    Raised like scikit-learn's ``UndefinedMetricWarning`` with ``zero_division="warn"``: the
    precision of a class that is never predicted, the recall of a class that never occurs, the
    F1 of a class that does neither, an entropy similarity / correlation with a zero-length or
    constant vector of entropies.
    """


def per_item_stats(values: np.ndarray) -> np.ndarray:
    """Per-item values ``(..., N)`` as a one-statistic stats array ``(..., N, 1)``."""
    return values[..., None]


def mean_from_sums(sums: np.ndarray, total: np.ndarray, n_classes: int) -> np.ndarray:
    """Finaliser of metrics that are means of per-item values."""
    return sums[..., 0] / total


def wrap(values: np.ndarray, inputs: PreparedInputs, tail: dict[str, Any] | None = None
         ) -> float | xr.DataArray:
    """A float for plain inputs, else a DataArray over the predictions' leading dims (+ tail)."""
    dims, coords = inputs.leading[0]
    tail = tail or {}
    if not dims and not tail:
        return float(values)
    return xr.DataArray(values, dims=(*dims, *tail), coords={**coords, **tail})

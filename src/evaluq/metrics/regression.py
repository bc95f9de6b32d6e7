"""Metrics on real-valued targets: mean squared error and mean absolute error."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from evaluq.metrics._base import Metric, register_metric
from evaluq.metrics._common import mean_from_sums, per_item_stats, wrap
from evaluq.metrics._inputs import prepare_inputs


def _squared_error(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    return per_item_stats((np.asarray(predictions) - np.asarray(targets)) ** 2)


def _absolute_error(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    return per_item_stats(np.abs(np.asarray(predictions) - np.asarray(targets)))


MSE = register_metric(Metric("mse", higher_is_better=False, kind="regression",
                             item_stats=_squared_error, from_sums=mean_from_sums))
MAE = register_metric(Metric("mae", higher_is_better=False, kind="regression",
                             item_stats=_absolute_error, from_sums=mean_from_sums))


def mse(targets: Any, predictions: Any) -> float | xr.DataArray:
    """Mean squared error.

    .. math:: \\mathrm{MSE} = \\frac{1}{N} \\sum_i (\\hat y_i - y_i)^2

    Parameters
    ----------
    targets, predictions
        Per-item real values (lists, arrays, DataArrays with an ``item`` dim, or ``.txt`` /
        ``.csv`` / ``.npy`` files). DataArray predictions may carry further dims.

    Returns
    -------
    float or xarray.DataArray

    See Also
    --------
    mae

    Examples
    --------
    >>> import evaluq as eq
    >>> eq.metrics.mse([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])
    0.41666666666666...
    """
    x = prepare_inputs(targets, predictions, kind="regression", allow_leading=True)
    return wrap(MSE(x.targets, x.predictions[0]), x)


def mae(targets: Any, predictions: Any) -> float | xr.DataArray:
    """Mean absolute error.

    .. math:: \\mathrm{MAE} = \\frac{1}{N} \\sum_i |\\hat y_i - y_i|

    Parameters
    ----------
    targets, predictions
        As for :func:`mse`.

    Returns
    -------
    float or xarray.DataArray

    See Also
    --------
    mse

    Examples
    --------
    >>> import evaluq as eq
    >>> eq.metrics.mae([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])
    0.5
    """
    x = prepare_inputs(targets, predictions, kind="regression", allow_leading=True)
    return wrap(MAE(x.targets, x.predictions[0]), x)

"""Regression metrics against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from sklearn.metrics import mean_absolute_error, mean_squared_error

import evaluq as eq


def test_mse_mae_match_sklearn(rng):
    y = rng.normal(size=300)
    yhat = y + rng.normal(0, 0.5, 300)
    assert eq.metrics.mse(y, yhat) == pytest.approx(mean_squared_error(y, yhat), rel=1e-13)
    assert eq.metrics.mae(y, yhat) == pytest.approx(mean_absolute_error(y, yhat), rel=1e-13)


def test_integer_inputs_are_values_not_labels():
    assert eq.metrics.mse([1, 2, 3], [1, 2, 5]) == pytest.approx(4 / 3)
    assert eq.metrics.mae([1, 2, 3], [1, 2, 5]) == pytest.approx(2 / 3)


def test_dataarray_with_seed_dim(rng):
    y = rng.normal(size=20)
    preds = xr.DataArray(rng.normal(size=(3, 20)), dims=("seed", "item"))
    out = eq.metrics.mae(y, preds)
    assert out.dims == ("seed",)
    np.testing.assert_allclose(out.values, [mean_absolute_error(y, p) for p in preds.values])

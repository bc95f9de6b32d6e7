"""_kernels.nanvar: numpy's nanvar where defined, NaN (no warning) below ddof + 1 values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from evaluq._kernels import nanvar


@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_nanvar_matches_numpy_and_is_nan_below_ddof_plus_one(ddof):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6))
    x[rng.random(x.shape) < 0.3] = np.nan
    x[0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = nanvar(x, ddof)
    n = (~np.isnan(x)).sum(axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.where(n > ddof, np.nanvar(x, axis=-1, ddof=ddof), np.nan)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    assert np.array_equal(np.isnan(got), n <= ddof)

"""_backend: one numpy-or-pytensor dispatch; both routes give the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from evaluq._backend import array_module, sigmoid, softplus


def test_numpy_values_pick_numpy():
    assert array_module(np.ones(3), 2, 0.5, np.float64(1.0), np.int64(3), True) is np
    assert array_module() is np


def test_a_pytensor_value_picks_pytensor():
    pt = pytest.importorskip("pytensor.tensor")
    assert array_module(np.ones(3), pt.dvector("x")) is pt


def test_numpy_and_pytensor_agree():
    pt = pytest.importorskip("pytensor.tensor")
    import pytensor

    x = np.array([-800.0, -30.0, -1.0, 0.0, 1e-8, 2.5, 40.0, 800.0])
    var = pt.dvector("x")
    f = pytensor.function([var], [softplus(array_module(var), var),
                                  sigmoid(array_module(var), var)])
    sp, sg = f(x)
    np.testing.assert_allclose(softplus(np, x), sp, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(sigmoid(np, x), sg, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(softplus(np, x), np.log1p(np.exp(np.clip(x, None, 700)))
                               + np.where(x > 700, x - 700, 0), rtol=1e-12)

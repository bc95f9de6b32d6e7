"""The one interval builder (`evaluq._intervals`)."""

import numpy as np
import pytest
import xarray as xr

from evaluq._intervals import (
    CI_KIND,
    CONFIDENCE_LEVEL,
    interval_array,
    interval_from_bounds,
    label_interval,
)


def test_from_bounds_dims_coords_and_metadata():
    ci = interval_from_bounds(np.arange(12.0).reshape(3, 2, 2), dims=("model", "language"),
                              coords={"model": ["a", "b", "c"]}, kind="bca",
                              confidence_level=0.9)
    assert ci.dims == ("model", "language", "ci_bound")
    assert list(ci.ci_bound.values) == ["lower", "upper"]
    assert ci.attrs == {CI_KIND: "bca", CONFIDENCE_LEVEL: 0.9}
    assert ci.ci_bound.attrs == {CI_KIND: "bca", CONFIDENCE_LEVEL: 0.9}
    assert float(ci.sel(model="c", language=1, ci_bound="upper")) == 11.0


def test_from_ends_matches_from_bounds_and_moves_bound_last():
    lo = xr.DataArray([[1.0, 2.0]], dims=("x", "y"))
    hi = lo + 1
    ci = interval_array(lo, hi, kind="t", confidence_level=None, name="ci")
    assert ci.dims == ("x", "y", "ci_bound")
    assert ci.name == "ci"
    assert CONFIDENCE_LEVEL not in ci.attrs
    same = interval_from_bounds(np.stack([lo.values, hi.values], -1), dims=("x", "y"),
                                kind="t", confidence_level=None)
    xr.testing.assert_identical(ci.rename(None), same)
    moved = label_interval(ci.transpose("ci_bound", "x", "y"), kind="t", confidence_level=0.5)
    assert moved.dims[-1] == "ci_bound"
    assert moved.attrs[CONFIDENCE_LEVEL] == 0.5


@pytest.mark.parametrize("bad", ["percentiles", "HDI", ""])
def test_unknown_kind_is_named(bad):
    with pytest.raises(ValueError, match="ci_kind"):
        interval_from_bounds(np.zeros((1, 2)), dims=("m",), kind=bad, confidence_level=0.9)


def test_bounds_shape_is_checked():
    with pytest.raises(ValueError, match="lower, upper"):
        interval_from_bounds(np.zeros((3, 3)), dims=("m",), kind="t", confidence_level=0.9)

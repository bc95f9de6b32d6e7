"""The plumbing helper: named dims onto last-axis kernels, stacking, dask chunk by chunk."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from evaluq._apply import apply_reduce, as_dataarray, as_dims, check_dims
from evaluq.errors import CubeError


@pytest.fixture
def cube_like() -> xr.DataArray:
    values = np.random.default_rng(0).normal(size=(3, 4, 5, 6))
    return xr.DataArray(values, dims=("model", "language", "seed", "bootstrap"),
                        coords={"model": ["a", "b", "c"], "language": list("wxyz")})


def test_stacked_dims_reduce_like_numpy(cube_like):
    out = apply_reduce(lambda x: x.std(axis=-1, ddof=1), cube_like, ("seed", "bootstrap"))
    expected = cube_like.values.reshape(3, 4, 30).std(axis=-1, ddof=1)
    np.testing.assert_allclose(out.transpose("model", "language").values, expected)
    assert list(out.model.values) == ["a", "b", "c"]


def test_unstacked_kernel_sees_every_reduced_axis(cube_like):
    out = apply_reduce(lambda x: x.mean(axis=(-2, -1)), cube_like, ("language", "seed"),
                       stack=False)
    np.testing.assert_allclose(out.transpose("model", "bootstrap").values,
                               cube_like.values.mean(axis=(1, 2)))


def test_output_core_dims(cube_like):
    out = apply_reduce(lambda x: np.quantile(x, [0.1, 0.9], axis=-1).transpose(
        *range(1, x.ndim), 0), cube_like, ("bootstrap",), output_core_dims=("q",),
        output_sizes={"q": 2})
    assert out.dims[-1] == "q"
    assert out.sizes["q"] == 2


@pytest.mark.parametrize("chunks", [{"model": 1}, {"language": 3, "bootstrap": 2},
                                    {"seed": 1}])
def test_dask_identical_for_any_chunking(cube_like, chunks):
    pytest.importorskip("dask")
    kernel = lambda x: x.std(axis=-1, ddof=1)  # noqa: E731
    eager = apply_reduce(kernel, cube_like, ("seed", "bootstrap"))
    lazy = apply_reduce(kernel, cube_like.chunk(chunks), ("seed", "bootstrap"))
    assert lazy.chunks is not None                       # nothing computed yet
    np.testing.assert_array_equal(eager.values, lazy.compute().values)


def test_errors(cube_like):
    with pytest.raises(CubeError, match=r"`dim` names \['task'\], which is not a dim"):
        check_dims(cube_like, ("task",), "cube")
    with pytest.raises(ValueError, match="names a dim twice"):
        as_dims(("seed", "seed"))
    with pytest.raises(ValueError, match="at least one dim"):
        as_dims(())
    assert as_dims("seed") == ("seed",)
    with pytest.raises(TypeError, match="must hold real numbers; got dtype bool"):
        as_dataarray(np.array([True, False]), "scores")
    with pytest.raises(TypeError, match="got a Dataset"):
        as_dataarray(cube_like.to_dataset(name="score"), "scores")
    with pytest.raises(ValueError, match=r"must have 2 dim\(s\)"):
        as_dataarray([1.0, 2.0], "scores", dims=("model", "language"))
    assert as_dataarray([True, False], "flags", allow_bool=True).dtype == np.float64

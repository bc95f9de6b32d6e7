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
    with pytest.raises(TypeError, match=r"`scores` must be numeric \(int or float\); got dtype "
                                        r"bool"):
        as_dataarray(np.array([True, False]), "scores")
    with pytest.raises(TypeError, match="got a Dataset"):
        as_dataarray(cube_like.to_dataset(name="score"), "scores")
    with pytest.raises(ValueError, match=r"must have 2 dim\(s\)"):
        as_dataarray([1.0, 2.0], "scores", dims=("model", "language"))
    assert as_dataarray([True, False], "flags", allow_bool=True).dtype == np.float64


# --- item-wise helpers ------------------------------------------------------------------------

from evaluq._apply import (  # noqa: E402
    apply_items,
    as_item_array,
    check_values,
    is_lazy,
    sum_items,
)


def _nonnegative(values: np.ndarray) -> None:
    if (values < 0).any():
        raise ValueError("`x` must be >= 0")


def test_check_values_eager_and_lazy():
    good = xr.DataArray(np.arange(6.0), dims="item")
    assert check_values(good, _nonnegative) is good
    with pytest.raises(ValueError, match="must be >= 0"):
        check_values(-good, _nonnegative)
    pytest.importorskip("dask")
    lazy = check_values((good - 3.0).chunk(item=2), _nonnegative)   # nothing read yet
    assert is_lazy(lazy)
    assert lazy.isel(item=slice(4, 6)).compute().values.tolist() == [1.0, 2.0]  # good chunk
    with pytest.raises(ValueError, match="must be >= 0"):
        lazy.compute()


def test_as_item_array_layouts_and_errors():
    da = as_item_array([1, 2, 3], "x", dims=("item",))
    assert da.dims == ("item",)
    assert da.dtype == np.float64
    assert as_item_array(0.5, "s", dims=("item",), allow_scalar=True).ndim == 0
    two = xr.DataArray(np.ones((2, 3)), dims=("doc", "sent"))
    assert as_item_array(two, "x", dims=("doc", "sent")).dims == ("doc", "sent")
    labels = as_item_array(np.array(["a", "b"], dtype=object), "y", dims=("item",),
                           numeric=False)
    assert labels.dtype == object
    with pytest.raises(ValueError, match="`x` must have an 'item' dim"):
        as_item_array(two, "x", dims=("item",))
    with pytest.raises(ValueError, match=r"`x` must have the item dims \['doc', 'page'\]"):
        as_item_array(two, "x", dims=("doc", "page"))
    with pytest.raises(ValueError, match="`x` must have a 'doc' dim"):
        as_item_array(xr.DataArray([1.0], dims="item"), "x", dims=("doc",))
    with pytest.raises(ValueError, match=r"`x` must be a DataArray with the item dims"):
        as_item_array([1.0, 2.0], "x", dims=("doc", "sent"))
    with pytest.raises(ValueError, match=r"1-D over items .*got shape \(2, 2\)"):
        as_item_array(np.ones((2, 2)), "x", dims=("item",))
    with pytest.raises(ValueError, match="`x` is empty"):
        as_item_array([], "x", dims=("item",))
    with pytest.raises(TypeError, match="`x` must be numeric"):
        as_item_array(["a", "b"], "x", dims=("item",))
    with pytest.raises(ValueError, match="`x` contains NaN or infinite"):
        as_item_array([1.0, np.inf], "x", dims=("item",))
    with pytest.raises(ValueError, match="`y` contains missing values"):
        as_item_array(np.array(["a", None], dtype=object), "y", dims=("item",), numeric=False)
    with pytest.raises(ValueError, match="must be >= 0"):
        as_item_array([1.0, -1.0], "x", dims=("item",), check=_nonnegative)


def test_apply_items_moves_items_last_and_streams():
    rng = np.random.default_rng(0)
    p = xr.DataArray(rng.dirichlet(np.ones(3), size=(10, 2)), dims=("item", "model", "class"))
    kernel = lambda a: -(a * np.log(a)).sum(axis=-1)  # noqa: E731
    out = apply_items(kernel, p, core_dims=("class",), item_dims=("item",), name="h",
                      attrs={"unit": "nats"})
    assert out.dims == ("model", "item")
    assert out.name == "h"
    assert out.attrs == {"unit": "nats"}
    np.testing.assert_array_equal(out.values, kernel(p.values).T)
    one = apply_items(kernel, p.isel(item=[0]), core_dims=("class",), item_dims=("item",),
                      squeeze=True)
    assert one.dims == ("model",)
    pytest.importorskip("dask")
    for chunks in ({"item": 3, "class": 1}, {"item": 7, "model": 1}):
        lazy = apply_items(kernel, p.chunk(chunks), core_dims=("class",), item_dims=("item",))
        assert is_lazy(lazy)
        np.testing.assert_array_equal(lazy.values, out.values)   # item-wise: to the last bit


def test_sum_items_against_numpy_and_on_dask():
    rng = np.random.default_rng(1)
    x = xr.DataArray(rng.normal(size=(2, 50)), dims=("model", "item"))
    s = xr.DataArray(rng.uniform(size=50), dims="item")
    total, squares = sum_items(lambda a, b: (a * b, a * a), x, s, dims=("item",), n_outputs=2)
    np.testing.assert_allclose(total.values, (x.values * s.values).sum(axis=1), rtol=1e-14)
    np.testing.assert_allclose(squares.values, (x.values ** 2).sum(axis=1), rtol=1e-14)
    pytest.importorskip("dask")
    lazy = sum_items(lambda a, b: a * b, x.chunk(item=7), s.chunk(item=11), dims=("item",))[0]
    assert is_lazy(lazy)
    np.testing.assert_allclose(lazy.values, total.values, rtol=1e-12)
    assert is_lazy(xr.Dataset({"a": x.chunk()}))
    assert not is_lazy(xr.Dataset({"a": x}))


def test_map_item_chunks_pairs_by_position_and_keeps_the_chunks():
    pytest.importorskip("dask")
    from evaluq._apply import compute_once, map_item_chunks

    x = xr.DataArray(np.arange(20.0).reshape(10, 2), dims=("item", "rater"))
    y = xr.DataArray(np.arange(10.0) * 10, dims=("item",))

    def kernel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        assert a.shape[1] == 2  # the other dims whole
        return np.array([a.shape[0], a.sum() + b.sum()])

    (eager,) = compute_once(map_item_chunks(kernel, x, y, dim="item"))
    assert len(eager) == 1
    np.testing.assert_array_equal(eager[0], [10, x.sum() + y.sum()])
    # dask: one result per chunk of items (the rater dim made whole), in item order; the
    # in-memory partner is split the same way
    lazy = map_item_chunks(kernel, x.chunk(item=4, rater=1), y, dim="item")
    (parts,) = compute_once(lazy)
    sizes = [int(p[0]) for p in parts]
    assert sizes == [4, 4, 2]
    expected = [x[s].sum() + y[s].sum()
                for s in (slice(0, 4), slice(4, 8), slice(8, 10))]
    np.testing.assert_array_equal([p[1] for p in parts], expected)
    # the item dim need not come first, and must exist
    (parts_t,) = compute_once(map_item_chunks(kernel, x.T.chunk(item=4), y, dim="item"))
    np.testing.assert_array_equal([p[1] for p in parts_t], expected)
    with pytest.raises(CubeError, match=r"`dim` names \['doc'\]"):
        map_item_chunks(kernel, x, y, dim="doc")


def test_compute_once_shares_the_input_tasks():
    dask = pytest.importorskip("dask")
    import dask.array as dsa

    from evaluq._apply import compute_once, map_item_chunks

    reads: list[int] = []

    def read(block: np.ndarray) -> np.ndarray:
        reads.append(block.shape[0])
        return block

    base = dsa.from_array(np.arange(12.0).reshape(6, 2), chunks=(2, 2))
    data = xr.DataArray(base.map_blocks(read, dtype=float), dims=("item", "rater"))
    reads.clear()  # dask's probe of the function on an empty block
    parts, table = compute_once(map_item_chunks(np.sum, data, dim="item"), data.data)
    assert sorted(reads) == [2, 2, 2]  # each chunk read once for both results
    np.testing.assert_array_equal(table, np.arange(12.0).reshape(6, 2))
    assert [float(p) for p in parts] == [0 + 1 + 2 + 3, 4 + 5 + 6 + 7, 8 + 9 + 10 + 11]
    assert compute_once(1, [2]) == (1, [2])  # in memory: unchanged
    assert dask is not None

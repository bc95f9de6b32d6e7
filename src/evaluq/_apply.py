"""The one place where named dims meet the numpy kernels (xarray-einstats' pattern).

Kernels work on plain arrays and reduce their **last** axis (or last few axes); the public
functions name the dims to reduce and call :func:`apply_reduce`, which moves those dims to the
end, stacks several of them into one where asked, keeps every other dim (and its
coordinates), and on dask-backed input runs the kernel chunk by chunk
(``dask="parallelized"``), rechunking only the reduced dims, which a kernel needs whole.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._validation import check_finite
from evaluq.errors import CubeError


def as_dims(dim: Hashable | Sequence[Hashable], name: str = "dim") -> tuple[Hashable, ...]:
    """``dim`` as a tuple of dim names; a string is one name."""
    dims = (dim,) if isinstance(dim, str) or not isinstance(dim, Sequence) else tuple(dim)
    if not dims:
        raise ValueError(f"`{name}` must name at least one dim; got an empty sequence")
    if len(set(dims)) != len(dims):
        raise ValueError(f"`{name}` names a dim twice: {dims!r}")
    return dims


def check_dims(data: xr.DataArray | xr.Dataset, dims: Sequence[Hashable], name: str,
               argument: str = "dim") -> None:
    """Every name in ``dims`` is a dim of ``data``; the error names the argument and lists the
    dims that exist."""
    missing = [d for d in dims if d not in data.dims]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise CubeError(f"`{argument}` names {missing}, which {verb} not a dim of `{name}`; "
                        f"its dims are {list(data.dims)}")


def reduce_dim(da: xr.DataArray, dim: Hashable | None, axis: int, name: str) -> Hashable:
    """The dim to reduce, given by name (``dim``) or, when ``dim`` is None, by position
    (``axis``, numpy style); the errors name the argument."""
    if da.ndim == 0:
        raise ValueError(f"`{name}` must hold at least one observation per item; got a scalar")
    if dim is None:
        if not -da.ndim <= axis < da.ndim:
            raise ValueError(f"`axis` {axis} is out of range for `{name}` with {da.ndim} dims")
        return da.dims[axis]
    if dim not in da.dims:
        raise ValueError(f"`dim` {dim!r} is not a dim of `{name}`; its dims are {list(da.dims)}")
    return dim


def check_real_dtype(name: str, dtype: np.dtype[Any], allow_bool: bool = False) -> None:
    """Integers and reals only (and booleans with ``allow_bool``): a bool array is a mask,
    not a score, and str, object and complex arrays are refused, naming the argument."""
    if dtype.kind not in ("biuf" if allow_bool else "iuf"):
        what = "bool" if dtype.kind == "b" else str(dtype)
        raise TypeError(f"`{name}` must be numeric (int or float); got dtype {what}"
                        + (" (cast explicitly, e.g. .astype(float), if 0/1 is meant)"
                           if dtype.kind == "b" else ""))


def pandas_as_dataarray(x: Any, name: str, dims: Sequence[Hashable] | None = None) -> Any:
    """A pandas Series or DataFrame as a DataArray whose coordinates are its index (and
    columns), so that its labels are kept and pair it with other labelled input by label, not
    by position; any other input is returned as it is. ``dims`` names the dims (the last one
    or two are used; default ``dim_0``, ``dim_1``). An index that repeats a label is refused:
    it cannot pair by label.

    >>> import pandas as pd
    >>> pandas_as_dataarray(pd.Series([1.0, 2.0], index=["b", "a"]), "x").dim_0.values.tolist()
    ['b', 'a']
    """
    if isinstance(x, pd.Series):
        axes: tuple[pd.Index, ...] = (x.index,)
    elif isinstance(x, pd.DataFrame):
        axes = (x.index, x.columns)
    else:
        return x
    names = tuple(dims)[-len(axes):] if dims is not None else tuple(
        f"dim_{i}" for i in range(len(axes)))
    if len(names) != len(axes):
        raise ValueError(f"`{name}` must have {len(names)} dim(s) {list(names)}; got a "
                         f"{type(x).__name__} of shape {x.shape}")
    coords = {}
    for dim, axis, what in zip(names, axes, ("index", "columns"), strict=False):
        if not axis.is_unique:
            repeated = axis[axis.duplicated()].unique()[:3].tolist()
            raise ValueError(f"`{name}`: its {what} repeats labels ({repeated}), so it cannot "
                             f"be paired by label; reset it (`.reset_index(drop=True)`) to pair "
                             f"by position, or make the labels unique")
        coords[dim] = axis.to_flat_index().to_numpy() if isinstance(axis, pd.MultiIndex) \
            else axis.to_numpy()
    return xr.DataArray(x.to_numpy(), dims=names, coords=coords)


def as_dataarray(x: Any, name: str, *, dims: Sequence[Hashable] | None = None,
                 allow_bool: bool = False, finite: bool = False) -> xr.DataArray:
    """A float64 DataArray from a DataArray or an array-like, with a clear error for
    non-numeric (and, unless allowed, boolean) values. ``dims`` names a plain array's dims;
    ``finite`` refuses NaN and infinities (at once in memory, chunk by chunk on dask)."""
    if isinstance(x, xr.Dataset):
        raise TypeError(f"`{name}` must be a DataArray or an array; got a Dataset (select a "
                        f"variable, e.g. `ds[{next(iter(x.data_vars), 'name')!r}]`)")
    x = pandas_as_dataarray(x, name, dims)
    da = x if isinstance(x, xr.DataArray) else None
    if da is None:
        arr = np.asarray(x)
        if dims is not None and arr.ndim != len(dims):
            raise ValueError(f"`{name}` must have {len(dims)} dim(s) {list(dims)}; got shape "
                             f"{arr.shape}")
        da = xr.DataArray(arr, dims=tuple(dims) if dims is not None else None)
    check_real_dtype(name, da.dtype, allow_bool)
    da = da.astype(np.float64)
    if finite:
        def check(values: np.ndarray) -> None:
            check_finite(name, values)

        da = check_values(da, check)
    return da


def apply_reduce(
    kernel: Callable[..., np.ndarray],
    data: xr.DataArray,
    dims: Sequence[Hashable],
    *,
    stack: bool = True,
    output_core_dims: Sequence[Hashable] = (),
    output_sizes: Mapping[Hashable, int] | None = None,
    kwargs: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> xr.DataArray:
    """Reduce the ``dims`` of ``data`` with a kernel that works on the last axis.

    Parameters
    ----------
    kernel
        ``kernel(array, **kwargs)``: reduces the last axis (``stack=True``: the ``dims``
        flattened into one axis, in the order given) or the last ``len(dims)`` axes
        (``stack=False``), and may add ``output_core_dims`` at the end.
    data
        The input; every dim not in ``dims`` is kept, with its coordinates.
    dims
        The dims to reduce, all present in ``data``.
    stack
        Flatten the reduced dims into one last axis before calling the kernel.
    output_core_dims, output_sizes
        New dims the kernel appends, and their sizes (needed on dask input).
    kwargs
        Keyword arguments for the kernel.
    name
        Name of the result.

    Returns
    -------
    xarray.DataArray
        The kept dims, then ``output_core_dims``; lazy (one task per chunk of the kept dims)
        on dask-backed input.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> da = xr.DataArray(np.arange(24.0).reshape(2, 3, 4), dims=("model", "seed", "boot"))
    >>> apply_reduce(lambda x: x.mean(axis=-1), da, ("seed", "boot")).values
    array([ 5.5, 17.5])
    """
    dims = tuple(dims)
    check_dims(data, dims, "data")
    n_core = len(dims)

    def wrapped(array: np.ndarray, **kw: Any) -> np.ndarray:
        if stack and n_core != 1:
            array = array.reshape(*array.shape[:array.ndim - n_core], -1)
        return np.asarray(kernel(array, **kw))

    if data.chunks is not None:
        data = data.chunk({d: -1 for d in dims})
    out = xr.apply_ufunc(
        wrapped, data, input_core_dims=[list(dims)],
        output_core_dims=[list(output_core_dims)], kwargs=dict(kwargs or {}),
        dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": dict(output_sizes or {})},
    )
    return out.rename(name) if name is not None else out


def is_lazy(data: xr.DataArray | xr.Dataset) -> bool:
    """True for a dask-backed DataArray (or a Dataset with a dask-backed variable)."""
    if isinstance(data, xr.Dataset):
        return any(var.chunks is not None for var in data.data_vars.values())
    return data.chunks is not None


def check_values(data: xr.DataArray, check: Callable[[np.ndarray], None],
                 whole: Sequence[Hashable] = ()) -> xr.DataArray:
    """Run ``check(values)`` (which raises on bad values) over ``data``.

    In memory the check runs at once. On dask it runs chunk by chunk inside the graph (the
    data pass through unchanged), so the input is read once, by the analysis itself; the error
    then surfaces when the result is computed. ``whole`` names dims that a check needs in one
    chunk (e.g. the ``class`` dim of probability rows that must sum to 1).
    """
    if data.chunks is None:
        check(data.values)
        return data

    def passthrough(block: np.ndarray) -> np.ndarray:
        check(block)
        return block

    if whole:
        data = data.chunk({d: -1 for d in whole})
    return data.copy(data=data.data.map_blocks(passthrough, dtype=data.dtype))


def as_item_array(x: Any, name: str, *, dims: Sequence[Hashable], allow_scalar: bool = False,
                  numeric: bool = True, check: Callable[[np.ndarray], None] | None = None
                  ) -> xr.DataArray:
    """Per-item data as a DataArray holding the item ``dims`` (others are kept).

    A plain array must be 1-D over the one item dim (or 0-d with ``allow_scalar``); a DataArray
    must hold every item dim (or none of them, with ``allow_scalar``: the same value for every
    item). ``numeric`` inputs become float64 and must be finite; otherwise (labels) only
    missing values are refused. ``check(values)`` adds a domain check (e.g. ``sigma >= 0``).
    Values are checked at once in memory and chunk by chunk on dask (:func:`check_values`).
    """
    dims = tuple(dims)
    if isinstance(x, xr.DataArray):
        da = x
        held = [d for d in dims if d in da.dims]
        if len(held) != len(dims) and (held or not allow_scalar):
            article = "an" if str(dims[0])[:1].lower() in "aeiou" else "a"
            what = (f"{article} {dims[0]!r} dim" if len(dims) == 1
                    else f"the item dims {list(dims)}")
            raise ValueError(f"`{name}` must have {what} (the items, named by `dim`); got "
                             f"dims {da.dims}")
    else:
        arr = np.asarray(x)
        if arr.ndim == 0 and allow_scalar:
            da = xr.DataArray(arr)
        elif arr.ndim == 1 and len(dims) == 1:
            da = xr.DataArray(arr, dims=dims)
        else:
            what = f"1-D over items (or a DataArray with the item dim(s) {list(dims)})" \
                if len(dims) == 1 else f"a DataArray with the item dims {list(dims)}"
            raise ValueError(f"`{name}` must be {what}; got shape {arr.shape}")
    empty = [d for d in dims if d in da.dims and da.sizes[d] == 0]
    if empty:
        raise ValueError(f"`{name}` is empty (no items along {empty[0]!r})")
    if not numeric and da.dtype.kind not in "biuf":  # labels of any type (binary flips)
        def no_missing(values: np.ndarray) -> None:
            if pd.isna(values).any():
                raise ValueError(f"`{name}` contains missing values")
        return check_values(da, no_missing)
    if da.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be numeric; got dtype {da.dtype}")
    da = da.astype(np.float64)

    def finite(values: np.ndarray) -> None:
        if not np.all(np.isfinite(values)):
            raise ValueError(f"`{name}` contains NaN or infinite values")
        if check is not None:
            check(values)

    return check_values(da, finite)


def apply_items(
    kernel: Callable[..., np.ndarray],
    *arrays: xr.DataArray,
    core_dims: Sequence[Hashable] = (),
    item_dims: Sequence[Hashable] = (),
    output_core_dims: Sequence[Hashable] = (),
    output_sizes: Mapping[Hashable, int] | None = None,
    squeeze: bool = False,
    name: str | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> xr.DataArray:
    """Apply an item-wise kernel: one value (or one row of ``output_core_dims``) per item.

    ``kernel(*arrays)`` consumes the ``core_dims`` (the last axes of every input, e.g.
    ``class``) and broadcasts over every other dim. On dask-backed input it runs chunk by chunk
    (``dask="parallelized"``) with only the ``core_dims`` rechunked whole, so items stay
    chunked and each item's value is the in-memory one to the last bit.

    Parameters
    ----------
    kernel
        ``kernel(*arrays)`` on numpy arrays whose last axes are the ``core_dims``.
    arrays
        The inputs, broadcast against each other by dim name.
    core_dims
        Dims the kernel consumes (every input holds them).
    item_dims
        The item dims; the result has them last (before ``output_core_dims``).
    output_core_dims, output_sizes
        New dims the kernel appends, and their sizes (needed on dask input).
    squeeze
        Drop the (size-1) ``item_dims`` from the result (input of one item).
    name, attrs
        Name and attributes of the result (the inputs' attributes are not kept).

    Returns
    -------
    xarray.DataArray

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> p = xr.DataArray([[0.5, 0.5], [0.9, 0.1]], dims=("item", "class"))
    >>> apply_items(lambda a: a.max(axis=-1), p, core_dims=("class",),
    ...             item_dims=("item",)).values
    array([0.5, 0.9])
    """
    core = list(core_dims)
    if core and any(a.chunks is not None for a in arrays):
        arrays = tuple(a.chunk({d: -1 for d in core}) if a.chunks is not None else a
                       for a in arrays)
    out = xr.apply_ufunc(
        kernel, *arrays, input_core_dims=[core] * len(arrays),
        output_core_dims=[list(output_core_dims)], keep_attrs=False,
        dask="parallelized", output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": dict(output_sizes or {})},
    )
    items = [d for d in item_dims if d in out.dims]
    if items:
        out = out.transpose(..., *items, *output_core_dims)
    if squeeze:
        out = out.squeeze(items, drop=True)
    if name is not None:
        out.name = name
    out.attrs = dict(attrs or {})
    return out


def sum_items(kernel: Callable[..., np.ndarray | tuple[np.ndarray, ...]],
              *arrays: xr.DataArray, dims: Sequence[Hashable], n_outputs: int = 1
              ) -> list[xr.DataArray]:
    """Sums over the item ``dims`` of an item-wise kernel's outputs (a streaming reduction).

    ``kernel(*arrays)`` works elementwise (broadcasting) and returns ``n_outputs`` arrays; each
    is summed over ``dims``. On dask-backed input both steps run chunk by chunk: the kernel
    per chunk, the sums as per-chunk partial sums combined by dask's tree reduction (nothing
    is loaded whole). The sums then differ from the in-memory ones only in the order of
    additions (relative differences of order 1e-16 x log2(items); the tests allow 1e-12).

    Examples
    --------
    >>> import xarray as xr
    >>> x = xr.DataArray([1.0, 2.0, 3.0], dims="item")
    >>> [float(s) for s in sum_items(lambda a: a * a, x, dims=("item",))]
    [14.0]
    """
    dims = tuple(dims)
    outs = xr.apply_ufunc(
        kernel, *arrays, output_core_dims=[[]] * n_outputs, keep_attrs=False,
        dask="parallelized", output_dtypes=[np.float64] * n_outputs,
    )
    outs = [outs] if n_outputs == 1 else list(outs)
    return [o.sum(dims) for o in outs]


def map_item_chunks(kernel: Callable[..., Any], *arrays: xr.DataArray,
                    dim: Hashable) -> list[Any]:
    """``kernel(*blocks)`` on each chunk of the item ``dim`` (every other dim whole), as a
    list in item order: the results in memory, ``dask.delayed`` objects on dask-backed input
    (pass them, with anything else the analysis needs, to :func:`compute_once`).

    The ``arrays`` are paired by position along ``dim`` (not aligned by coordinate), each
    block holds ``dim`` first; a kernel that validates its block validates the input chunk by
    chunk, and one that returns counts lets the caller sum them (integers: identical sums for
    any chunking). In memory there is one block, the whole input.

    Examples
    --------
    >>> import xarray as xr
    >>> x = xr.DataArray([1.0, 2.0, 3.0], dims="item")
    >>> parts = map_item_chunks(lambda a: a.sum(), x.chunk(item=2), dim="item")
    >>> [float(p) for p in compute_once(parts)[0]]
    [3.0, 3.0]
    """
    for a in arrays:
        check_dims(a, [dim], "data")
    ordered = [a.transpose(dim, ...) for a in arrays]
    if not any(a.chunks is not None for a in ordered):
        return [kernel(*(a.values for a in ordered))]
    import dask

    lead = next(a for a in ordered if a.chunks is not None)
    item_chunks = lead.chunks[0] if lead.chunks is not None else ()
    blocks = []
    for a in ordered:
        data = a.chunk({d: -1 for d in a.dims if d != dim}).data.rechunk(
            {0: item_chunks}) if a.chunks is not None else None
        if data is None:  # in memory beside a dask input: split the same way
            import dask.array as dsa
            data = dsa.from_array(a.values, chunks=(item_chunks, *a.shape[1:]))
        blocks.append(data.to_delayed(optimize_graph=False).reshape(-1))  # keys shared
    return [dask.delayed(kernel)(*parts) for parts in zip(*blocks, strict=True)]


def compute_once(*objs: Any) -> tuple[Any, ...]:
    """Evaluate lazy objects (dask arrays, DataArrays, delayed objects, lists of them) in one
    ``dask.compute`` call, so tasks they share (the reading and validation of the input) run
    once; in-memory objects pass through unchanged."""
    def lazy(o: Any) -> bool:
        if isinstance(o, list | tuple):
            return any(lazy(v) for v in o)
        return hasattr(o, "__dask_graph__") and o.__dask_graph__() is not None

    if not any(lazy(o) for o in objs):
        return objs
    import dask

    return tuple(dask.compute(*objs))

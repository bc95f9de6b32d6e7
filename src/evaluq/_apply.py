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
import xarray as xr

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


def as_dataarray(x: Any, name: str, *, dims: Sequence[Hashable] | None = None,
                 allow_bool: bool = False) -> xr.DataArray:
    """A float64 DataArray from a DataArray or an array-like, with a clear error for
    non-numeric (and, unless allowed, boolean) values. ``dims`` names a plain array's dims."""
    if isinstance(x, xr.Dataset):
        raise TypeError(f"`{name}` must be a DataArray or an array; got a Dataset (select a "
                        f"variable, e.g. `ds[{next(iter(x.data_vars), 'name')!r}]`)")
    da = x if isinstance(x, xr.DataArray) else None
    if da is None:
        arr = np.asarray(x)
        if dims is not None and arr.ndim != len(dims):
            raise ValueError(f"`{name}` must have {len(dims)} dim(s) {list(dims)}; got shape "
                             f"{arr.shape}")
        da = xr.DataArray(arr, dims=tuple(dims) if dims is not None else None)
    kinds = "biuf" if allow_bool else "iuf"
    if da.dtype.kind not in kinds:
        raise TypeError(f"`{name}` must hold real numbers; got dtype {da.dtype}")
    return da.astype(np.float64)


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

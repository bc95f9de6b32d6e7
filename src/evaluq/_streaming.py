"""Dask-backed cubes, chunk by chunk: lazy validation, per-cell spreads, lazy resamples.

A cube opened from zarr (``eq.open_cube("cube.zarr")``) or chunked by the user
(``cube.chunk(...)``) keeps its large variable, ``boot_score`` (model, language, seed,
bootstrap), as a dask array. The small ones (``score``, the summary SDs) are at most
models x languages x seeds and are loaded. This module holds what the public functions need
to work on such a cube without ever loading ``boot_score`` whole:

* :func:`prepare` validates the cube with ``boot_score`` read **zero** times: its structure
  is checked at once, its values (no infinities) chunk by chunk inside the graph of the
  analysis that reads it, so the input is read once.
* :func:`boot_spreads` computes the per-cell SDs over bootstrap replicates and over seeds.
  When ``seed`` and ``bootstrap`` are each one chunk, every chunk runs the in-memory kernel on
  its own cells (bit-identical to the in-memory result for a cube without missing values; see
  the function). Otherwise each chunk contributes shifted sufficient statistics (counts, sums
  and sums of squares about a fixed per-cell shift) that are added over chunks.
* :func:`from_chunks` / :func:`from_boot_blocks` build the dask arrays of lazy resamples: one
  task per chunk of resamples (and, for replicates streamed from ``boot_score``, per block of
  the cube); each block of ``evaluq.resampling._block_size`` resamples has its own random
  stream, so the numbers do not depend on the chunking.

dask is imported inside the functions: ``import evaluq`` never loads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from evaluq._atomic import check_generation
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    LANGUAGE,
    MODEL,
    N_SEEDS,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
)
from evaluq._kernels import nan_sd, nanmean
from evaluq._schema import validate
from evaluq.errors import CubeError

BOOT_DIMS = (MODEL, LANGUAGE, SEED, BOOTSTRAP)
SMALL_VARIABLES = (SCORE, SD_SEED, SD_BOOT, N_SEEDS)
"""Cube variables of at most models x languages x seeds values: loaded from a lazy cube."""


def is_dask(cube: Any) -> bool:
    """True for a Dataset with at least one dask-backed data variable."""
    return isinstance(cube, xr.Dataset) and any(
        var.chunks is not None for var in cube.data_vars.values())


def open_zarr(path: str | os.PathLike[str], generation: str | None = None) -> xr.Dataset:
    """A zarr store as a lazy Dataset chunked as stored (consolidated metadata or not).

    With ``generation`` (the store's, read on open by ``_atomic.check_manifest``), every
    chunk read checks that the store at ``path`` still holds it, before and after reading:
    a store replaced underneath raises ``CubeError``, it never gives a mixed cube."""
    import functools

    getitem = functools.partial(_read_chunk, path=os.fspath(path), generation=generation)
    try:
        return xr.open_zarr(path, chunks={}, consolidated=_has_consolidated(path),
                            from_array_kwargs={"getitem": getitem})
    except (ValueError, OSError, KeyError, TypeError, RuntimeError) as err:
        raise CubeError(f"cannot open {str(path)!r} as a zarr store (not one, or truncated "
                        f"or corrupted): {type(err).__name__}: {err}") from None


def _read_chunk(array: Any, key: Any, asarray: bool = True, lock: Any = None, *,
                path: str, generation: str | None = None) -> Any:
    """dask's ``getter`` for one chunk of a zarr store; a chunk that cannot be read or
    decoded (truncated, corrupted: a failed checksum) raises ``CubeError`` naming the store,
    so an analysis never returns a result from it; so does a store whose generation is no
    longer the one opened (replaced underneath), checked before and after the read."""
    from dask.array.core import getter

    check_generation(path, generation)
    try:
        chunk = getter(array, key, asarray=asarray, lock=lock)
    except Exception as err:                          # any decoding failure of the chunk
        check_generation(path, generation)            # a replaced store says so first
        raise CubeError(f"cannot read a chunk of the zarr store {path!r} (truncated or "
                        f"corrupted): {type(err).__name__}: {err}") from err
    check_generation(path, generation)
    return chunk


def _has_consolidated(path: str | os.PathLike[str]) -> bool:
    """Whether a store has consolidated metadata (zarr 2: ``.zmetadata``; zarr 3: a
    ``consolidated_metadata`` entry in ``zarr.json``), so that opening it never warns."""
    if os.path.exists(os.path.join(path, ".zmetadata")):
        return True
    meta = os.path.join(path, "zarr.json")
    if not os.path.exists(meta):
        return False
    with open(meta, encoding="utf-8") as handle:
        return json.load(handle).get("consolidated_metadata") is not None


def _finite_block(block: np.ndarray) -> np.ndarray:
    """One chunk of ``boot_score``, checked: an infinity raises (the cube's validation,
    chunk-wise)."""
    if np.isinf(block).any():
        raise CubeError(f"variable {BOOT_SCORE!r} has infinite values")
    return block


def prepare(cube: xr.Dataset) -> xr.Dataset:
    """Validate a dask-backed cube without reading ``boot_score``.

    The small variables (:data:`SMALL_VARIABLES`) are loaded and the cube without
    ``boot_score`` goes through :func:`evaluq.validate`.
    ``boot_score`` gets the same structural checks (dims, dtype, at least two replicates) at
    once and its value check (no infinity) inside its graph, chunk by chunk: it raises the
    same :class:`~evaluq.errors.CubeError` when the analysis reads the offending chunk.

    Returns
    -------
    xarray.Dataset
        The validated cube: small variables in memory, ``boot_score`` lazy (model, language,
        seed, bootstrap), float64.
    """
    boot = cube[BOOT_SCORE] if BOOT_SCORE in cube.data_vars else None
    small = cube.drop_vars([BOOT_SCORE]) if boot is not None else cube
    small = small.assign({name: small[name].compute() for name in SMALL_VARIABLES
                          if name in small.data_vars})
    checked = validate(small)
    if boot is None:
        return checked
    unknown = [d for d in boot.dims if d not in BOOT_DIMS]
    if unknown:
        raise CubeError(f"variable {BOOT_SCORE!r} has unknown dim(s) {unknown}; its dims must "
                        f"be {BOOT_DIMS}")
    if set(boot.dims) != set(BOOT_DIMS):
        raise CubeError(f"variable {BOOT_SCORE!r} has dims {boot.dims}; they must be "
                        f"{BOOT_DIMS}")
    if not np.issubdtype(boot.dtype, np.number) or boot.dtype == bool:
        raise CubeError(f"variable {BOOT_SCORE!r} must be numeric; it has dtype {boot.dtype}")
    if boot.sizes[BOOTSTRAP] < 2:
        raise CubeError(f"variable {BOOT_SCORE!r} needs at least 2 bootstrap replicates; got "
                        f"{boot.sizes[BOOTSTRAP]}")
    boot = boot.transpose(*BOOT_DIMS)
    if boot.chunks is None:
        boot = boot.chunk()
    data = boot.data.astype(np.float64).map_blocks(_finite_block, dtype=np.float64)
    checked[BOOT_SCORE] = boot.copy(data=data)
    return checked


# --- spreads over replicates and seeds ------------------------------------------------------------

def _sd_from_moments(n: np.ndarray, total: np.ndarray, squares: np.ndarray,
                     ddof: int) -> np.ndarray:
    """SD from the count, sum and sum of squares of shifted values (the shift cancels)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ss = np.maximum(squares - total * total / n, 0.0)
        sd = np.sqrt(ss / (n - ddof))
    return np.where((n >= 2) & (n > ddof), sd, np.nan)


def boot_spreads(boot: xr.DataArray, score: np.ndarray, ddof: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per-cell SDs of a dask-backed ``boot_score``, read once, chunk by chunk.

    Parameters
    ----------
    boot
        ``boot_score`` (model, language, seed, bootstrap), dask-backed (from :func:`prepare`).
    score
        ``score`` (model, language, seed) in memory: the shifts of the sufficient statistics.
    ddof
        Delta degrees of freedom.

    Returns
    -------
    v, se_seed
        ``v`` (model, language, seed): SD over the bootstrap replicates; ``se_seed`` (model,
        language): the SD over the bootstrap replicates of ``u`` (model, language,
        bootstrap), the SD over the seeds. NaN where fewer than ``max(2, ddof + 1)`` values
        remain. With ``bootstrap`` in one chunk ``u`` never leaves its chunk's task; when
        ``bootstrap`` is split, ``u`` is gathered whole (models x languages x replicates).

    Notes
    -----
    With ``seed`` and ``bootstrap`` each in one chunk (chunks over models and languages,
    what :func:`evaluq.open_cube` gets from a store written by evaluq), each chunk runs the
    in-memory kernel on its cells: the result is bit-identical to the in-memory one whenever
    the kernel takes the same branch, i.e. for a cube without missing values (the in-memory
    kernel switches the whole array to its NaN-aware two-pass branch when any value is
    missing; that branch differs in the last digit or so). Otherwise each chunk adds its
    count, sum and sum of squares of ``x - shift`` with a shift fixed per cell (the cell's
    full-test-set score for the SD over replicates, the cell's seed mean for the SD over
    seeds; 0 where that is missing), so that the partial sums of any chunking add up; the
    result agrees with the in-memory one to about 1e-15 relative (the sums are grouped
    differently, and the in-memory kernel shifts by the first value instead).
    """
    v, se_seed = _spreads(boot, score, ddof, across_seeds=True)
    assert se_seed is not None
    return v, se_seed


def boot_sd(boot: xr.DataArray, score: np.ndarray, ddof: int) -> np.ndarray:
    """The SD over bootstrap replicates (model, language, seed) of :func:`boot_spreads`."""
    return _spreads(boot, score, ddof, across_seeds=False)[0]


def _spreads(boot: xr.DataArray, score: np.ndarray, ddof: int, *,
             across_seeds: bool) -> tuple[np.ndarray, np.ndarray | None]:
    import dask

    x = boot.data
    whole = len(x.chunks[2]) == 1 and len(x.chunks[3]) == 1
    if whole:
        v = x.map_blocks(lambda b: nan_sd(b, ddof), drop_axis=3, dtype=np.float64)
        u = (x.map_blocks(lambda b: nan_sd(nan_sd(b, ddof, axis=2), ddof), drop_axis=(2, 3),
                          dtype=np.float64) if across_seeds else None)
        v_out, u_out = dask.compute(v, u)
        return np.asarray(v_out), None if u_out is None else np.asarray(u_out)
    import dask.array as da

    shift_v = np.where(np.isnan(score), 0.0, score)[..., None]
    with np.errstate(invalid="ignore"):
        ybar = nanmean(score)
    shift_u = np.where(np.isnan(ybar), 0.0, ybar)[:, :, None, None]
    parts: list[Any] = []
    for shift, axis in ((shift_v, 3), (shift_u, 2)):
        if axis == 2 and not across_seeds:
            continue
        d = x - da.from_array(shift, chunks=tuple(
            c if size > 1 else (1,) for c, size in zip(x.chunks, shift.shape, strict=True)))
        ok = ~da.isnan(d)
        z = da.where(ok, d, 0.0)
        parts += [ok.sum(axis=axis, dtype=np.float64), z.sum(axis=axis), (z * z).sum(axis=axis)]
    moments = dask.compute(*parts)
    v = _sd_from_moments(moments[0], moments[1], moments[2], ddof)
    u = _sd_from_moments(moments[3], moments[4], moments[5], ddof) if across_seeds else None
    return v, None if u is None else nan_sd(u, ddof)


# --- lazy resamples -------------------------------------------------------------------------------

def delayed_payload(payload: Any) -> Any:
    """``payload`` as one dask graph node, shared by every task that takes it (shipped once
    to each worker of a cluster; never hashed or traversed)."""
    import dask

    return dask.delayed(payload, pure=False, traverse=False)


def chunk_tasks(func: Callable[..., Any], payload: Any,
                spans: Sequence[tuple[int, int]]) -> list[Any]:
    """One task ``func(payload, start, stop)`` per span of resamples."""
    import dask

    return [dask.delayed(func, pure=True)(payload, start, stop) for start, stop in spans]


def from_chunks(func: Callable[..., np.ndarray], payload: Any,
                spans: Sequence[tuple[int, int]], tail: tuple[int, ...], dtype: Any) -> Any:
    """A dask array (resample, *tail): chunk i is ``func(payload, *spans[i])``."""
    import dask.array as da

    parts = [da.from_delayed(task, shape=(stop - start, *tail), dtype=dtype)
             for task, (start, stop) in zip(chunk_tasks(func, payload, spans), spans,
                                            strict=True)]
    return parts[0] if len(parts) == 1 else da.concatenate(parts, axis=0)


def concat_items(tasks: Sequence[Any], name: str, spans: Sequence[tuple[int, int]],
                 tail: tuple[int, ...], dtype: Any) -> Any:
    """A dask array (resample, *tail) of item ``name`` of every chunk task's dict."""
    import dask.array as da

    parts = [da.from_delayed(task[name], shape=(stop - start, *tail), dtype=dtype)
             for task, (start, stop) in zip(tasks, spans, strict=True)]
    return parts[0] if len(parts) == 1 else da.concatenate(parts, axis=0)


def from_boot_blocks(func: Callable[..., np.ndarray], payload: Any,
                     spans: Sequence[tuple[int, int]], boot: Any, n_slots: int | None) -> Any:
    """Scores (resample, model, language | slot) drawn block by block of ``boot``.

    ``boot`` is a dask array (model, language, seed, bootstrap) with seed and bootstrap in
    one chunk. Every (chunk of resamples, block of boot) is one task
    ``func(payload, start, stop, block, first_language)``: with ``n_slots`` None (fixed
    languages) it returns the scores (n, block's models, block's languages), which tile the
    result; otherwise (n, block's models, n_slots) with 0 in the slots of other blocks'
    languages, and the blocks of one model chunk are added (a tree of sums). No task holds
    more than a block of ``boot`` and a chunk of scores (or a few, while adding); each block
    is read once and shared by the tasks of every chunk of resamples.
    """
    import dask
    import dask.array as da

    blocks = boot.to_delayed()[:, :, 0, 0]
    lang_starts = np.cumsum((0, *boot.chunks[1]))
    call = dask.delayed(func, pure=True)
    rows = []
    for start, stop in spans:
        row = []
        for i, n_m in enumerate(boot.chunks[0]):
            parts = [da.from_delayed(call(payload, start, stop, blocks[i, j],
                                          int(lang_starts[j])),
                                     shape=(stop - start, n_m, n_l if n_slots is None
                                            else n_slots), dtype=np.float64)
                     for j, n_l in enumerate(boot.chunks[1])]
            if n_slots is None:
                row.append(parts)
            else:
                summed = parts[0] if len(parts) == 1 else da.stack(parts).sum(axis=0)
                row.append([summed])
        rows.append(row)
    return da.block(rows)

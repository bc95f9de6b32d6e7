"""``from_items(..., out=store)``: a per-item parquet log to a zarr cube, one language at a time.

The exact paired bootstrap needs all of a language's per-item scores at once (a replicate is a
sum over the language's items with counts shared by every model and seed), so the unit of
streaming is the language: one pass over the parquet file, batch by batch, writes each
language's rows to a scratch parquet file of its own (beside the store) and collects the
models and seeds; then each language's file is read, scored and bootstrapped exactly as in
memory (the same random streams, so the numbers are identical) and written into its slice of
the store, and the scratch files are removed. Memory is bounded by the largest
language, not by the file. Other inputs are built in memory and then written. The caller
(``items._to_zarr``) writes into a ``.partial`` directory renamed when complete, with the
store's manifest last (``_atomic``), and every chunk carries a checksum.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._atomic import zarr_checksums
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    CLUSTER,
    LANGUAGE,
    MODEL,
    N_CLUSTERS,
    N_ITEMS,
    SCORE,
    SEED,
)
from evaluq.errors import CubeError


def check_out(out: Any) -> None:
    """``out`` is a path that does not exist yet."""
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"`out` must be a str or a path (a zarr store); got {type(out).__name__}")
    if os.path.exists(out):
        raise FileExistsError(f"`out` already exists: {str(out)!r}; remove it or name a new "
                              "zarr store")


def is_parquet(table: Any) -> bool:
    return isinstance(table, str | os.PathLike) and Path(table).suffix.lower() in (".parquet",
                                                                                  ".pq")


def _check_no_nulls(batch: Any, column: str | None, path: str) -> None:
    if column is not None and batch.column(column).null_count:
        raise CubeError(f"column {column!r} has missing keys in {path!r}; every row needs a "
                        f"{column!r}")


def split_by_language(path: str, cols: dict[str, str | None], scratch: str
                      ) -> tuple[dict[Any, str], dict[str, list[Any]]]:
    """One pass over the file, batch by batch: each language's rows into a parquet file of
    its own under ``scratch`` (the file's schema kept), and the model and seed labels seen.
    Returns language -> file, and the labels (unsorted) of ``model`` and ``seed``."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    used = list(dict.fromkeys(c for c in cols.values() if c is not None))
    file = pq.ParquetFile(path)
    writers: dict[Any, Any] = {}
    files: dict[Any, str] = {}
    seen: dict[str, list[Any]] = {MODEL: [], SEED: []}
    try:
        for batch in file.iter_batches(columns=used, batch_size=2**20):
            for key in (MODEL, LANGUAGE, SEED):
                _check_no_nulls(batch, cols[key], path)
            for key in (MODEL, SEED):
                if cols[key] is not None:
                    seen[key].extend(pc.unique(batch.column(cols[key])).to_pylist())
            column = cols[LANGUAGE]
            values = ["all"] if column is None else pc.unique(batch.column(column)).to_pylist()
            for value in values:
                part = batch if column is None else batch.filter(
                    pc.equal(batch.column(column), value))
                if value not in writers:
                    files[value] = os.path.join(scratch, f"{len(files)}.parquet")
                    writers[value] = pq.ParquetWriter(files[value], part.schema)
                writers[value].write_batch(part)
    finally:
        for writer in writers.values():
            writer.close()
    return files, seen


def _template(out: str | os.PathLike[str], models: np.ndarray, languages: np.ndarray,
              seeds: np.ndarray, n_boot: int, clustered: bool) -> None:
    """The store's layout, NaN everywhere, chunked one language (and one model) at a time."""
    import dask.array as da

    m, n_l, s = len(models), len(languages), len(seeds)
    template = xr.Dataset(
        {SCORE: ((MODEL, LANGUAGE, SEED), da.full((m, n_l, s), np.nan, chunks=(m, 1, s))),
         BOOT_SCORE: ((MODEL, LANGUAGE, SEED, BOOTSTRAP),
                      da.full((m, n_l, s, n_boot), np.nan, chunks=(1, 1, s, n_boot))),
         N_ITEMS: ((LANGUAGE,), da.zeros(n_l, dtype=np.int64, chunks=1))},
        coords={MODEL: models, LANGUAGE: languages, SEED: seeds, BOOTSTRAP: np.arange(n_boot)})
    if clustered:
        template[N_CLUSTERS] = ((LANGUAGE,), da.zeros(n_l, dtype=np.int64, chunks=1))
    template.to_zarr(out, compute=False, consolidated=False, encoding=zarr_checksums(template))


def write_language(out: str | os.PathLike[str], k: int, models: np.ndarray, seeds: np.ndarray,
                   block_models: np.ndarray, block_seeds: np.ndarray,
                   scored: tuple[np.ndarray, np.ndarray], n_items: int,
                   n_clusters: int | None) -> None:
    """One language's score and replicates into its slice of the store."""
    score, boot = scored
    mi = pd.Index(models).get_indexer(pd.Index(block_models))
    si = pd.Index(seeds).get_indexer(pd.Index(block_seeds))
    full_score = np.full((len(models), len(seeds)), np.nan)
    full_boot = np.full((len(models), len(seeds), boot.shape[-1]), np.nan)
    full_score[np.ix_(mi, si)] = score
    full_boot[np.ix_(mi, si)] = boot
    piece = xr.Dataset({SCORE: ((MODEL, LANGUAGE, SEED), full_score[:, None]),
                        BOOT_SCORE: ((MODEL, LANGUAGE, SEED, BOOTSTRAP), full_boot[:, None]),
                        N_ITEMS: ((LANGUAGE,), np.array([n_items], dtype=np.int64))})
    if n_clusters is not None:
        piece[N_CLUSTERS] = ((LANGUAGE,), np.array([n_clusters], dtype=np.int64))
    piece.to_zarr(out, region={LANGUAGE: slice(k, k + 1)}, consolidated=False)


def stream(path: str, out: str | os.PathLike[str], cols: dict[str, str | None], n_boot: int,
           sort: Callable[[pd.Series, str], tuple[np.ndarray, np.ndarray]],
           score_language: Callable[[pd.DataFrame, int, int],
                                    tuple[Any, tuple[np.ndarray, np.ndarray]]],
           attrs: dict[str, Any]) -> None:
    """Both passes over a parquet file; ``score_language(rows, k, n_languages)`` pivots and
    bootstraps language k's rows and returns the pivot and (score, boot)."""
    import pyarrow.parquet as pq
    import zarr

    names = set(pq.read_schema(path).names)
    for key, column in cols.items():
        if column is not None and column not in names:
            arg = "score" if key == SCORE else key
            raise CubeError(f"column {column!r} (given as `{arg}`) is not in {path!r}; its "
                            f"columns are: {', '.join(sorted(names))}")
    scratch = tempfile.mkdtemp(prefix=".items-", dir=os.path.dirname(os.path.abspath(out)))
    try:
        files, seen = split_by_language(path, cols, scratch)
        models, languages, seeds = (
            np.array([default]) if cols[key] is None
            else sort(pd.Series(pd.unique(pd.Series(found, dtype=object))), str(cols[key]))[1]
            for key, found, default in ((MODEL, seen[MODEL], None),
                                        (LANGUAGE, list(files), "all"), (SEED, seen[SEED], 0)))
        _template(out, models, languages, seeds, n_boot, cols[CLUSTER] is not None)
        for k, lang in enumerate(languages):
            rows = pq.read_table(files[lang.item() if isinstance(lang, np.generic)
                                       else lang]).to_pandas()
            data, scored = score_language(rows, k, len(languages))
            block = data.blocks[0]
            write_language(out, k, models, seeds, data.models, data.seeds, scored,
                           len(block.items), None if block.cluster_labels is None
                           else len(block.cluster_labels))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    zarr.open_group(str(out), mode="r+").attrs.update(attrs)


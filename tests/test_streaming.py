"""Dask-backed cubes stream chunk by chunk and give the in-memory numbers (issue 13).

``variance_components``, ``resample`` (every replication) and ``aggregate`` on a chunked cube or
a zarr store; lazy validation (``boot_score`` read once); ``open_cube`` on zarr;
``from_long``'s integer-code pivot against its label-lookup reference, and its zarr output.
"""

from __future__ import annotations

import os
import threading
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq._streaming import boot_spreads, prepare
from evaluq.cube import _pivot_codes, _pivot_reference
from evaluq.errors import CubeError

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

WHOLE = [{"model": 1}, {"model": 2, "language": 3}, {"language": 1}]
"""Chunkings with seed and bootstrap whole: bit-identical to the in-memory result."""
SPLIT = [{"bootstrap": 7}, {"seed": 2, "bootstrap": 33, "language": 4}, {"seed": 1}]
"""Chunkings that split seeds or replicates: shifted sums added over chunks (1e-12)."""


@pytest.fixture(scope="module")
def cube() -> xr.Dataset:
    return eq.simulate_cube(n_models=3, n_languages=7, n_seeds=4, n_boot=60, rng=11)


@pytest.fixture(scope="module")
def holey(cube: xr.Dataset) -> xr.Dataset:
    """Missing cells and seeds, and an offset of 1e6 (cancellation would show)."""
    score = cube.score.values + 1e6
    boot = cube.boot_score.values + 1e6
    score[0, 2, :] = np.nan
    boot[0, 2] = np.nan
    score[1, 4, 1] = np.nan
    boot[1, 4, 1] = np.nan
    boot[2, 5, 0, :10] = np.nan
    return eq.from_arrays(score, boot, outlier_threshold=None)


def _same(a: xr.Dataset, b: xr.Dataset, rtol: float = 0.0) -> None:
    assert set(a.data_vars) == set(b.data_vars)
    for name in a.data_vars:
        x, y = a[name].values, b[name].values
        if rtol == 0.0 or x.dtype.kind not in "f":
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=0, err_msg=name)
        assert a[name].attrs == b[name].attrs, name
    assert a.attrs == b.attrs


# --- variance components ------------------------------------------------------------------------

@pytest.mark.parametrize("chunks", WHOLE)
def test_variance_bit_identical_with_seed_and_bootstrap_whole(cube, chunks):
    _same(eq.variance_components(cube), eq.variance_components(cube.chunk(chunks)))


@pytest.mark.parametrize("chunks", SPLIT)
@pytest.mark.parametrize("ddof", [0, 1])
def test_variance_split_chunks_agree_to_1e12(cube, holey, chunks, ddof):
    for c in (cube, holey):
        _same(eq.variance_components(c, ddof=ddof),
              eq.variance_components(c.chunk(chunks), ddof=ddof), rtol=1e-12)


def test_variance_with_missing_cells_and_whole_chunks(holey):
    # NaN anywhere switches the in-memory kernel to its two-pass branch for the whole array;
    # a chunk without NaN takes the fast branch: equal to a few ulps, NaN in the same places
    ref = eq.variance_components(holey)
    got = eq.variance_components(holey.chunk({"model": 1}))
    _same(ref, got, rtol=1e-12)
    assert np.isnan(got.sigma_boot.values[0, 2])
    assert np.isfinite(got.sigma_boot.values[2, 5])


def test_variance_seeds_only_and_summary_cubes_on_dask():
    seeds_only = eq.from_arrays(np.arange(24.0).reshape(2, 3, 4) ** 1.5)
    _same(eq.variance_components(seeds_only),
          eq.variance_components(seeds_only.chunk({"model": 1})))
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "language": ["x", "y"] * 2,
                       "mean": [1.0, 2.0, 3.0, 4.5], "sd_seed": [0.1, 0.2, 0.3, 0.4],
                       "sd_boot": [0.5, 0.6, 0.7, 0.8]})
    summary = eq.from_summary(df, n_seeds=3)
    _same(eq.variance_components(summary), eq.variance_components(summary.chunk()))


def test_spreads_from_moments_match_the_kernel(holey):
    boot = holey.boot_score.values
    score = holey.score.values
    lazy = prepare(holey.chunk({"bootstrap": 9, "seed": 3}))
    v, se_seed = boot_spreads(lazy.boot_score, score, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN cells: NaN is the answer
        v_ref = np.nanstd(boot, axis=-1, ddof=1)
        u_ref = np.nanstd(boot, axis=2, ddof=1)            # (model, language, bootstrap)
        se_ref = np.nanstd(u_ref, axis=-1, ddof=1)
    np.testing.assert_allclose(v, np.where(np.sum(~np.isnan(boot), -1) >= 2, v_ref, np.nan),
                               rtol=1e-12)
    np.testing.assert_allclose(se_seed, se_ref, rtol=1e-12)


# --- read once, validation chunk by chunk -------------------------------------------------------

def _counted(cube: xr.Dataset, chunks: dict[str, int]) -> tuple[xr.Dataset, dict[tuple, int]]:
    """The cube chunked, with every chunk of boot_score counting how often it is computed."""
    reads: dict[tuple, int] = {}
    lock = threading.Lock()

    def count(block, block_info=None):
        with lock:
            key = tuple(block_info[0]["chunk-location"])
            reads[key] = reads.get(key, 0) + 1
        return block

    chunked = cube.chunk(chunks)
    data = chunked.boot_score.data.map_blocks(count, dtype=np.float64)
    return chunked.assign(boot_score=chunked.boot_score.copy(data=data)), reads


@pytest.mark.parametrize("chunks", [{"model": 1, "language": 2}, {"bootstrap": 20}])
def test_boot_score_is_read_once(cube, chunks):
    counted, reads = _counted(cube, chunks)
    eq.variance_components(counted)
    n_chunks = int(np.prod([len(c) for c in counted.boot_score.chunks]))
    assert len(reads) == n_chunks
    assert set(reads.values()) == {1}


def test_parametric_resample_reads_boot_score_once(cube):
    counted, reads = _counted(cube, {"language": 3})
    eq.aggregate(eq.resample(counted, n_resamples=2000, chunk_size=1000, rng=0))
    assert set(reads.values()) == {1}


@pytest.mark.parametrize("languages", ["fixed", "bootstrap"])
def test_nonparametric_reads_each_block_once_per_chunk_of_resamples(cube, languages):
    counted, reads = _counted(cube, {"model": 1, "language": 3})
    lazy = eq.resample(counted, n_resamples=2500, chunk_size=1000, rng=0,
                       replication="nonparametric", languages=languages)
    assert not reads                                        # nothing read yet
    agg = eq.aggregate(lazy)
    n_blocks = int(np.prod([len(c) for c in counted.boot_score.chunks]))
    assert len(reads) == n_blocks
    assert set(reads.values()) == {1}       # once, shared by the 3 chunks of resamples
    xr.testing.assert_identical(agg, eq.aggregate(eq.resample(
        cube, n_resamples=2500, rng=0, replication="nonparametric", languages=languages)))


@pytest.mark.parametrize("languages", ["fixed", "bootstrap"])
def test_nonparametric_memory_stays_bounded_on_a_lazy_cube(languages):
    # 96 MB of replicates generated chunk by chunk: each task holds one 2.4 MB block and a
    # chunk of 1000 x 4 x 60 scores (1.9 MB); the traced peak stays far under the cube
    shape, chunks = (4, 60, 10, 5000), (1, 6, 10, 5000)
    boot = da.random.default_rng(0).normal(size=shape, chunks=chunks)
    score = np.random.default_rng(1).normal(size=shape[:3])
    cube = eq.from_arrays(score, np.zeros((*shape[:3], 2)))
    cube = cube.drop_vars("boot_score").drop_vars("bootstrap").assign(
        boot_score=(("model", "language", "seed", "bootstrap"), boot))
    tracemalloc.start()
    with dask.config.set(scheduler="synchronous"):
        agg = eq.aggregate(eq.resample(cube, n_resamples=2000, chunk_size=1000, rng=0,
                                       replication="nonparametric", languages=languages))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 24e6
    assert np.isfinite(agg.sd.values).all()


def test_infinite_replicate_raises_when_read(cube):
    boot = cube.boot_score.values.copy()
    boot[2, 3, 1, 5] = -np.inf
    bad = cube.assign(boot_score=(cube.boot_score.dims, boot)).chunk({"model": 1})
    lazy = prepare(bad)                                  # nothing read yet
    assert lazy.boot_score.chunks is not None
    for run in (lambda: eq.variance_components(bad),
                lambda: eq.aggregate(eq.resample(bad, n_resamples=2000, rng=0))):
        with pytest.raises(CubeError, match="variable 'boot_score' has infinite values"):
            run()


def test_structural_errors_of_a_lazy_cube_raise_at_once(cube):
    one = cube.isel(bootstrap=[0]).chunk()
    with pytest.raises(CubeError, match="needs at least 2 bootstrap replicates; got 1"):
        eq.variance_components(one)
    text = cube.assign(boot_score=cube.boot_score.astype(str)).chunk()
    with pytest.raises(CubeError, match="variable 'boot_score' must be numeric"):
        eq.variance_components(text)
    extra = cube.assign(boot_score=cube.boot_score.rename(bootstrap="replicate")).chunk()
    with pytest.raises(CubeError, match=r"unknown dim\(s\) \['replicate'\]"):
        eq.variance_components(extra)
    no_score = cube.chunk().drop_vars("score")
    with pytest.raises(CubeError, match="the cube has no 'score' variable"):
        eq.variance_components(no_score)


def test_memory_stays_bounded_on_a_lazy_cube():
    # 96 MB of replicates generated chunk by chunk (never in memory at once): the traced
    # peak is the (model, language, bootstrap) SDs over seeds (9.6 MB, gathered twice) plus a
    # few 2.4 MB chunks, under half the cube
    shape, chunks = (4, 60, 10, 5000), (1, 6, 10, 5000)
    boot = da.random.default_rng(0).normal(size=shape, chunks=chunks)
    score = np.random.default_rng(1).normal(size=shape[:3])
    cube = eq.from_arrays(score, np.zeros((*shape[:3], 2)))
    cube = cube.drop_vars("boot_score").drop_vars("bootstrap").assign(
        boot_score=(("model", "language", "seed", "bootstrap"), boot))
    assert cube.boot_score.nbytes == 96_000_000
    tracemalloc.start()
    with dask.config.set(scheduler="synchronous"):
        vc = eq.variance_components(cube)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 48e6
    assert np.isfinite(vc.sigma_boot.values).all()


# --- zarr -----------------------------------------------------------------------------------------

def test_open_cube_zarr_is_lazy_and_round_trips(cube, tmp_path):
    path = tmp_path / "cube.zarr"
    cube.chunk({"model": 1, "language": 4}).to_zarr(path, consolidated=False)
    lazy = eq.open_cube(path)
    assert lazy.boot_score.chunks is not None
    assert lazy.boot_score.data.chunksize == (1, 4, 4, 60)
    xr.testing.assert_identical(lazy.compute(), eq.validate(cube))
    _same(eq.variance_components(cube), eq.variance_components(lazy))
    consolidated = tmp_path / "consolidated.zarr"
    with pytest.warns(UserWarning, match="Consolidated metadata"):   # zarr 3's own warning
        cube.chunk({"model": 1}).to_zarr(consolidated)
    xr.testing.assert_identical(eq.open_cube(consolidated).compute(), eq.validate(cube))


def test_open_cube_on_a_directory_that_is_not_zarr(tmp_path):
    with pytest.raises(CubeError, match="cannot open .* as a zarr store"):
        eq.open_cube(tmp_path)


# --- resample and aggregate ---------------------------------------------------------------------

@pytest.mark.parametrize(("replication", "languages", "n_languages"), [
    ("parametric", "fixed", None), ("parametric", "bootstrap", None),
    ("parametric", "subsample", 4), ("none", "fixed", None), ("none", "bootstrap", 9)])
@pytest.mark.parametrize("chunk_size", [1000, 3000])
def test_resample_on_dask_is_lazy_and_identical(cube, replication, languages, n_languages,
                                                chunk_size):
    options = dict(n_resamples=2500, replication=replication, languages=languages,
                   n_languages=n_languages, rng=5)
    eager = eq.resample(cube, **options)
    lazy = eq.resample(cube.chunk({"model": 1, "language": 2}), chunk_size=chunk_size,
                       **options)
    assert lazy.score.chunks is not None
    assert lazy.score.data.chunksize[0] == min(chunk_size, 2500)
    xr.testing.assert_identical(lazy.compute(), eager)
    for how in ("mean", "median"):
        xr.testing.assert_identical(eq.aggregate(lazy, how=how), eq.aggregate(eager, how=how))


def test_resample_in_reversed_label_order_on_dask(cube):
    reordered = cube.isel(model=[2, 0, 1], language=list(range(6, -1, -1)))
    eager = eq.resample(reordered, n_resamples=2000, languages="bootstrap", rng=2)
    lazy = eq.resample(reordered.chunk({"language": 3}), n_resamples=2000,
                       languages="bootstrap", rng=2)
    xr.testing.assert_identical(lazy.compute(), eager)


def test_nonparametric_on_dask_streams_and_matches(cube):
    eager = eq.resample(cube, n_resamples=1500, replication="nonparametric", rng=4)
    lazy = eq.resample(cube.chunk({"model": 1}), n_resamples=1500,
                       replication="nonparametric", rng=4)
    assert lazy.score.chunks is not None
    xr.testing.assert_identical(lazy.compute(), eager)
    loaded = eq.resample(cube.chunk({"model": 1}), n_resamples=1500,
                         replication="nonparametric", rng=4, lazy=False)
    assert loaded.score.chunks is None
    xr.testing.assert_identical(loaded, eager)


def test_aggregate_takes_language_chunked_resamples(cube):
    eager = eq.resample(cube, n_resamples=2000, rng=1)
    chunked = eager.chunk({"resample": 500, "language": 2})
    _same(eq.aggregate(eager), eq.aggregate(chunked))


def test_lazy_resamples_in_a_leaderboard(cube):
    lazy_cube = cube.chunk({"language": 2})
    board = eq.leaderboard(eq.aggregate(eq.resample(lazy_cube, n_resamples=2000, rng=3)))
    ref = eq.leaderboard(eq.aggregate(eq.resample(cube, n_resamples=2000, rng=3)))
    pd.testing.assert_frame_equal(board, ref)


# --- from_long: integer codes against the label lookup -----------------------------------------

def _table(rng: np.random.Generator, labels: str, ragged: bool = True) -> pd.DataFrame:
    """Runs of 3 models x 4 languages x 3 seeds, each with 6 replicates; ``ragged``: a tenth
    of the rows dropped and every 7th score NaN (cells that lack replicates: the pivot's
    case), else one whole (model, language, seed) cell dropped (the loaders' case)."""
    models = (["b", "a", "c"] if labels == "str" else [3, 1, 2] if labels == "int"
              else [0.5, -1.0, 2.0])
    m, lang, s, b = np.meshgrid(np.arange(3), np.arange(4), np.arange(3), np.arange(6),
                                indexing="ij")
    full = pd.DataFrame({"model": np.asarray(models, dtype=object)[m[..., 0].ravel()],
                         "language": np.array(["x", "w", "z", "y"])[lang[..., 0].ravel()],
                         "seed": s[..., 0].ravel() * 10, "bootstrap": np.nan,
                         "score": rng.normal(size=36)})
    boot = pd.DataFrame({"model": np.asarray(models, dtype=object)[m.ravel()],
                         "language": np.array(["x", "w", "z", "y"])[lang.ravel()],
                         "seed": s.ravel() * 10, "bootstrap": b.ravel() * 2.0,
                         "score": rng.normal(size=m.size)})
    df = pd.concat([full, boot])
    if ragged:
        df = df.sample(frac=0.9, random_state=int(rng.integers(100)))
    else:
        df = df[~((df.model == df.model.iloc[0]) & (df.language == "w") & (df.seed == 10))]
        df = df.sample(frac=1.0, random_state=int(rng.integers(100)))
    if labels != "str":
        df["model"] = df["model"].astype(float if labels == "float" else np.int64)
    if ragged:
        df.loc[df.index[::7], "score"] = np.nan
    return df.reset_index(drop=True)


@pytest.mark.parametrize("labels", ["str", "int", "float"])
@pytest.mark.parametrize("dtype", ["str", "object"])
def test_codes_pivot_equals_the_reference(rng, labels, dtype):
    df = _table(rng, labels)
    if dtype == "object":
        df = df.astype({"language": object})
    keys = {"model": "model", "language": "language", "seed": "seed"}
    fast = _pivot_codes(df, keys, "bootstrap", "score", boot_rows=True)
    assert fast is not None
    slow = _pivot_reference(df, keys, "bootstrap", "score")
    for a, b in zip(fast[0].values(), slow[0].values(), strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    for a, b in zip(fast[1:], slow[1:], strict=True):
        np.testing.assert_array_equal(a, b)
    without = df[df.bootstrap.isna()].reset_index(drop=True)
    fast = _pivot_codes(without, keys, None, "score", boot_rows=False)
    assert fast is not None
    slow = _pivot_reference(without, keys, None, "score")
    for a, b in zip(fast[1:], slow[1:], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("problem", ["duplicate", "missing key", "mixed types", "text score",
                                     "inf score", "no full rows"])
def test_irregular_tables_go_the_reference_way(rng, problem):
    df = _table(rng, "str")
    if problem == "duplicate":
        df = pd.concat([df, df.iloc[[3]]], ignore_index=True)
    elif problem == "missing key":
        df.loc[5, "language"] = None
    elif problem == "mixed types":
        df = df.astype({"model": object})
        df.loc[2, "model"] = 7
    elif problem == "text score":
        df["score"] = df["score"].astype(str)
    elif problem == "inf score":
        df.loc[4, "score"] = np.inf
    else:
        df = df[df.bootstrap.notna()]
    keys = {"model": "model", "language": "language", "seed": "seed"}
    assert _pivot_codes(df, keys, "bootstrap", "score", boot_rows=False) is None
    with pytest.raises(CubeError):
        eq.from_long(df, seed="seed", bootstrap="bootstrap")


# --- from_long to zarr ----------------------------------------------------------------------------

def _parquet(df: pd.DataFrame, path, row_group_size: int) -> str:
    df.to_parquet(path, index=False, row_group_size=row_group_size)
    return str(path)


@pytest.mark.parametrize("row_group_size", [40, 1000])
def test_from_long_to_zarr_from_parquet_row_groups(rng, tmp_path, row_group_size):
    df = _table(rng, "str", ragged=False)
    path = _parquet(df, tmp_path / "t.parquet", row_group_size)
    ref = eq.from_long(df, seed="seed", bootstrap="bootstrap", bounds=(-10, 10))
    out = eq.from_long(path, seed="seed", bootstrap="bootstrap", bounds=(-10, 10),
                       out=tmp_path / "c.zarr")
    assert out.boot_score.chunks is not None
    got = out.compute()
    for name in ("score", "boot_score"):
        xr.testing.assert_identical(got[name], ref[name])
    assert got.attrs["source"] == path
    assert {k: v for k, v in got.attrs.items() if k not in ("source", "bounds")} == \
        {k: v for k, v in ref.attrs.items() if k not in ("source", "bounds")}
    np.testing.assert_array_equal(got.attrs["bounds"], ref.attrs["bounds"])
    assert sorted(os.listdir(tmp_path)) == ["c.zarr", "t.parquet"]       # no scratch left
    # a missing cell: the in-memory kernel takes its NaN-aware branch (the last digit differs)
    _same(eq.variance_components(ref), eq.variance_components(out), rtol=1e-12)


def test_from_long_to_zarr_without_bootstrap_or_seed(rng, tmp_path):
    df = _table(rng, "int")
    full = df[df.bootstrap.isna() & (df.seed == 0)].drop(columns=["bootstrap", "seed"])
    path = _parquet(full, tmp_path / "t.parquet", 5)
    out = eq.from_long(path, out=tmp_path / "c.zarr")
    xr.testing.assert_identical(out.compute().score, eq.from_long(full).score)


def test_from_long_to_zarr_from_a_dataframe(rng, tmp_path):
    df = _table(rng, "float", ragged=False)
    ref = eq.from_long(df, seed="seed", bootstrap="bootstrap")
    out = eq.from_long(df, seed="seed", bootstrap="bootstrap", out=tmp_path / "d.zarr")
    assert out.boot_score.chunks is not None
    xr.testing.assert_identical(out.compute(), ref)


@pytest.mark.parametrize("column", ["float", "object", "arrow"])
def test_replicate_ids_are_integers_in_memory_and_in_a_zarr_store(rng, tmp_path, column):
    """Integer replicate ids read as floats (the full-test-set rows leave the column empty:
    NaN) were kept as 0.0, 2.0, ... by the zarr store, and as Python floats in an object
    column by the in-memory path (the two paths disagreed): both give the integers now."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    df = _table(rng, "str", ragged=False)
    if column == "object":       # Python floats and None, as a list of row dicts gives them
        df["bootstrap"] = df["bootstrap"].astype(object).where(df["bootstrap"].notna(), None)
    path = str(tmp_path / "t.parquet")
    if column == "arrow":        # an int64 column with nulls, written without pandas' metadata
        table = pa.Table.from_pandas(df.astype({"bootstrap": "Int64"}), preserve_index=False)
        pq.write_table(table.replace_schema_metadata(None), path, row_group_size=40)
    else:
        df.to_parquet(path, index=False, row_group_size=40)
    kw = {"seed": "seed", "bootstrap": "bootstrap"}
    ref = eq.from_long(df, **kw)
    expected = np.arange(0, 12, 2)
    for got in (ref, eq.from_long(path, **kw), eq.from_long(path, out=tmp_path / "p.zarr", **kw),
                eq.from_long(df, out=tmp_path / "d.zarr", **kw)):
        assert got.bootstrap.dtype == np.int64
        np.testing.assert_array_equal(got.bootstrap.values, expected)
        for name in ("score", "boot_score"):
            xr.testing.assert_identical(got[name].compute(), ref[name])


@pytest.mark.parametrize("row_group_size", [7, 1000])
def test_from_long_to_zarr_errors(rng, tmp_path, row_group_size):
    df = _table(rng, "str", ragged=False)
    store = tmp_path / "c.zarr"
    dup = _parquet(pd.concat([df, df.iloc[[10]]], ignore_index=True), tmp_path / "d.parquet",
                   row_group_size)
    with pytest.raises(CubeError, match=rf"first duplicated key found \(row {len(df)}\)"):
        eq.from_long(dup, seed="seed", bootstrap="bootstrap", out=store)
    assert not store.exists()                                # removed on the error
    missing = df.copy()
    missing.loc[9, "language"] = None
    path = _parquet(missing, tmp_path / "m.parquet", row_group_size)
    with pytest.raises(CubeError, match=r"key column 'language' has missing values \(rows \[9\]"):
        eq.from_long(path, seed="seed", bootstrap="bootstrap", out=store)
    path = _parquet(df, tmp_path / "t.parquet", row_group_size)
    with pytest.raises(CubeError, match="value\\(s\\) of 'boot_score' are outside the declared"):
        eq.from_long(path, seed="seed", bootstrap="bootstrap", bounds=(-0.5, 0.5), out=store)
    with pytest.raises(CubeError, match="has no empty rows"):
        eq.from_long(_parquet(df[df.bootstrap.notna()], tmp_path / "b.parquet",
                              row_group_size), seed="seed", bootstrap="bootstrap", out=store)
    assert not store.exists()
    eq.from_long(path, seed="seed", bootstrap="bootstrap", out=store)
    with pytest.raises(FileExistsError, match="`out` already exists"):
        eq.from_long(path, seed="seed", bootstrap="bootstrap", out=store)
    with pytest.raises(TypeError, match="`out` must be a str or a path"):
        eq.from_long(path, seed="seed", bootstrap="bootstrap", out=3)


@pytest.mark.slow
def test_nonparametric_streams_on_a_local_cluster(cube):
    distributed = pytest.importorskip("distributed")
    chunked = cube.chunk({"model": 2, "language": 3})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        for languages in ("fixed", "bootstrap"):
            options = dict(n_resamples=2500, replication="nonparametric", languages=languages,
                           rng=6)
            lazy = eq.resample(chunked, chunk_size=1000, **options)
            xr.testing.assert_identical(eq.aggregate(lazy),
                                        eq.aggregate(eq.resample(cube, **options)))
        assert len(client.scheduler_info()["workers"]) == 2


def test_from_long_to_zarr_refuses_missing_replicates_as_in_memory(rng, tmp_path):
    """The streamed path checks the replicates chunk by chunk, with the in-memory message."""
    df = _table(rng, "str", ragged=False)
    df = df[~((df.model == "a") & (df.language == "x") & (df.seed == 0) & (df.bootstrap == 4))]
    path = _parquet(df, tmp_path / "t.parquet", 40)
    with pytest.raises(CubeError) as in_memory:
        eq.from_long(df, seed="seed", bootstrap="bootstrap")
    assert "model='a', language='x', seed=0 has 5 of 6 (missing: 4)" in str(in_memory.value)
    with pytest.raises(CubeError) as streamed:
        eq.from_long(path, seed="seed", bootstrap="bootstrap", out=tmp_path / "c.zarr")
    assert str(streamed.value) == str(in_memory.value)
    assert not (tmp_path / "c.zarr").exists()

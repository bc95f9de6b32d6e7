"""``resample`` and ``aggregate`` give identical numbers everywhere (issues 9 and 13).

One reference per mode (the eager, in-memory run with the default ``chunk_size``) against:
in-memory and dask-backed cubes (several chunkings, including chunkings that split seeds and
replicates), lazy and eager results, several ``chunk_size``; the aggregates likewise, and
``aggregate`` over a non-default ``dim`` against numpy. The cube's labels are out of order so
that the restoring of the cube's order is exercised too.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError

pytest.importorskip("dask.array")

MODES = [
    {"replication": "parametric"},
    {"replication": "parametric", "languages": "bootstrap"},
    {"replication": "none", "languages": "subsample", "n_languages": 4},
    {"replication": "nonparametric", "seeds": "bootstrap"},
    {"replication": "nonparametric", "seeds": "one", "languages": "subsample", "n_languages": 3},
    {"replication": "nonparametric", "seeds": "rescaled", "languages": "bootstrap"},
]
CHUNKINGS = [None, {"model": 1, "language": 2}, {"language": 3, "seed": 1, "bootstrap": 7},
             {"model": 2}]
SPLIT = [CHUNKINGS[2]]
"""Chunkings that split seeds or replicates."""
N = 2300


@pytest.fixture(scope="module")
def cube() -> xr.Dataset:
    c = eq.simulate_cube(n_models=3, n_languages=7, n_seeds=3, n_boot=20, rng=0)
    return c.isel(model=[2, 0, 1], language=[3, 1, 0, 6, 2, 5, 4])


@pytest.fixture(scope="module")
def references(cube: xr.Dataset) -> dict[int, tuple[xr.Dataset, xr.Dataset]]:
    out = {}
    for i, mode in enumerate(MODES):
        rs = eq.resample(cube, n_resamples=N, rng=7, **mode)
        assert rs.score.chunks is None
        out[i] = rs, eq.aggregate(rs, how="median")
    return out


def _mode_id(mode: dict) -> str:
    return "-".join(str(v) for v in mode.values())


@pytest.mark.parametrize("mode", range(len(MODES)), ids=[_mode_id(m) for m in MODES])
@pytest.mark.parametrize("chunks", CHUNKINGS, ids=lambda c: "memory" if c is None else str(c))
@pytest.mark.parametrize("lazy", [True, False, None])
@pytest.mark.parametrize("chunk_size", [1000, 3000])
def test_identical_everywhere(cube, references, mode, chunks, lazy, chunk_size):
    ref_rs, ref_agg = references[mode]
    source = cube if chunks is None else cube.chunk(chunks)
    rs = eq.resample(source, n_resamples=N, rng=7, lazy=lazy, chunk_size=chunk_size,
                     **MODES[mode])
    is_lazy = lazy is True or (lazy is None and chunks is not None)
    assert (rs.score.chunks is not None) == is_lazy
    if is_lazy:
        assert rs.score.chunks[0] == tuple(
            min(chunk_size, N - s) for s in range(0, N, chunk_size))
        assert all(rs[v].chunks is not None for v in rs.data_vars if "resample" in rs[v].dims)
    if MODES[mode]["replication"] == "parametric" and chunks in SPLIT:
        # the per-cell SDs of a cube whose seeds or replicates are split over chunks are
        # shifted sums added over chunks (variance_components' rule): equal to about 1e-15
        xr.testing.assert_allclose(rs.compute(), ref_rs, rtol=1e-12, atol=1e-12)
        xr.testing.assert_allclose(eq.aggregate(rs, how="median"), ref_agg, rtol=1e-12, atol=1e-12)
        return
    xr.testing.assert_identical(rs.compute(), ref_rs)
    xr.testing.assert_identical(eq.aggregate(rs, how="median"), ref_agg)


def test_bounded_truncated_draws_identical(cube):
    bounded = eq.from_arrays(np.clip(cube.score.transpose("model", "language", "seed").values,
                                     -1, 1),
                             np.clip(cube.boot_score.transpose(
                                 "model", "language", "seed", "bootstrap").values, -1, 1),
                             models=list(cube.model.values),
                             languages=list(cube.language.values), bounds=(-1.0, 1.0))
    ref = eq.resample(bounded, n_resamples=N, rng=3, languages="bootstrap")
    assert float(ref.score.min()) >= -1
    assert float(ref.score.max()) <= 1
    for source in (bounded, bounded.chunk({"model": 1})):
        lazy = eq.resample(source, n_resamples=N, rng=3, languages="bootstrap", lazy=True,
                           chunk_size=1000)
        xr.testing.assert_identical(lazy.compute(), ref)
        xr.testing.assert_identical(eq.aggregate(lazy), eq.aggregate(ref))


def test_order_of_the_cube_does_not_change_the_numbers(cube):
    sorted_cube = cube.sortby(["model", "language"])
    for mode in MODES:
        a = eq.resample(sorted_cube, n_resamples=1200, rng=2, **mode)
        b = eq.resample(cube.chunk({"model": 1}), n_resamples=1200, rng=2, **mode)
        assert list(b.model.values) == list(cube.model.values)
        xr.testing.assert_identical(a, b.compute().sel(model=a.model, language=a.language))


# --- aggregate over another dim ------------------------------------------------------------------

def _with_tasks(cube: xr.Dataset, lazy: bool) -> xr.Dataset:
    """Resamples of two tasks (two cubes) stacked on a ``task`` dim."""
    other = cube.assign(score=cube.score + 0.5, boot_score=cube.boot_score + 0.5)
    runs = [eq.resample(c, n_resamples=1500, rng=4, lazy=lazy, chunk_size=1000)
            for c in (cube, other)]
    return xr.concat(runs, dim="task", data_vars="all", coords="minimal",
                     compat="override").assign_coords(task=["t1", "t2"])


@pytest.mark.parametrize("how", ["mean", "median", "gmean"])
def test_aggregate_over_a_task_dim(cube, how):
    positive = cube.assign(score=cube.score + 10, boot_score=cube.boot_score + 10)
    eager = _with_tasks(positive, lazy=False)
    agg = eq.aggregate(eager, dim="task", how=how)
    assert dict(agg.resampled.sizes) == {"resample": 1500, "model": 3, "language": 7}
    assert agg.ci.dims == ("model", "language", "ci_bound")
    assert agg.attrs["dim"] == "task"
    reduce = {"mean": np.mean, "median": np.median,
              "gmean": lambda x, axis: np.exp(np.log(x).mean(axis=axis))}[how]
    expected = reduce(eager.score.transpose("resample", "model", "language", "task").values,
                      axis=-1)
    np.testing.assert_allclose(agg.resampled.transpose("resample", "model", "language"),
                               expected, rtol=1e-14)
    np.testing.assert_allclose(
        agg.observed.transpose("model", "language"),
        reduce(eager.observed.transpose("model", "language", "task").values, axis=-1),
        rtol=1e-14)
    np.testing.assert_allclose(agg.sd, expected.std(axis=0, ddof=1), rtol=1e-12)
    lazy = _with_tasks(positive, lazy=True)
    assert lazy.score.chunks is not None
    xr.testing.assert_identical(eq.aggregate(lazy, dim="task", how=how), agg)
    # the default dim keeps the task dim
    by_task = eq.aggregate(eager, how=how)
    assert dict(by_task.resampled.sizes) == {"resample": 1500, "model": 3, "task": 2}
    xr.testing.assert_identical(by_task.sel(task="t1", drop=True).drop_attrs(),
                                eq.aggregate(eager.sel(task="t1", drop=True),
                                             how=how).drop_attrs())


def test_aggregate_over_seeds_of_per_seed_resamples(cube):
    """Per-seed resamples (a seed dim in place of languages) aggregated over ``seed``."""
    rs = eq.resample(cube, n_resamples=1000, rng=1)
    per_seed = xr.Dataset(
        {"score": rs.score.rename(language="seed").assign_coords(seed=np.arange(7)),
         "observed": rs.observed.rename(language="seed").assign_coords(seed=np.arange(7))},
        attrs=rs.attrs)
    agg = eq.aggregate(per_seed, dim="seed", how="trimmed", trim=0.2)
    assert agg.attrs["dim"] == "seed"
    np.testing.assert_allclose(agg.observed, stats.trim_mean(
        rs.observed.transpose("model", "language").values, 0.2, axis=-1), rtol=1e-14)
    np.testing.assert_allclose(agg.resampled, stats.trim_mean(
        rs.score.transpose("resample", "model", "language").values, 0.2, axis=-1), rtol=1e-14)
    xr.testing.assert_identical(agg.drop_attrs(),
                                eq.aggregate(rs, how="trimmed", trim=0.2).drop_attrs())


@pytest.mark.parametrize(("dim", "error", "match"), [
    ("resample", ValueError, r"`dim` must be a dim to aggregate .* dim='resample'"),
    ("model", ValueError, r"`dim` must be a dim to aggregate .* dim='model'"),
    ("task", CubeError, r"`dim` names \['task'\], which is not a dim of `resampled.score`"),
    (("language",), TypeError, r"`dim` must be one dim name"),
])
def test_aggregate_dim_errors(cube, dim, error, match):
    rs = eq.resample(cube, n_resamples=100, rng=0)
    with pytest.raises(error, match=match):
        eq.aggregate(rs, dim=dim)


def test_aggregate_dim_must_leave_matching_dims(cube):
    rs = eq.resample(cube, n_resamples=100, rng=0)
    odd = rs.assign(observed=rs.observed.expand_dims(task=["t1"]))
    with pytest.raises(CubeError, match=r"aggregating over `dim`='language' leaves `score`"):
        eq.aggregate(odd)


def test_default_chunk_size_bounds_a_chunk_of_scores():
    wide = eq.simulate_cube(n_models=600, n_languages=61, n_seeds=2, n_boot=2, rng=0)
    lazy = eq.resample(wide, n_resamples=2500, lazy=True, rng=0)
    # 64 MiB / (600 x 61 x 8 B) = 229 resamples, rounded up to one random-number block, which
    # for 36 600 cells a resample is 2**24 // 36 600 = 458 resamples (_block_size)
    assert lazy.score.chunks[0] == (458, 458, 458, 458, 458, 210)
    small = eq.simulate_cube(n_models=3, n_languages=7, rng=0)
    assert eq.resample(small, n_resamples=25_000, lazy=True, rng=0).score.chunks[0] == (
        10_000, 10_000, 5_000)
    mid = eq.simulate_cube(n_models=60, n_languages=61, n_seeds=2, n_boot=2, rng=0)
    # 64 MiB / (60 x 61 x 8 B) = 2291 resamples, rounded up to 3000
    assert eq.resample(mid, n_resamples=7000, lazy=True, rng=0).score.chunks[0] == (
        3000, 3000, 1000)

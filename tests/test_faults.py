"""Faults (issue 20): interrupted writes lose nothing, corrupted inputs give a clear error
naming the file (never a result), concurrent readers get the same numbers, a killed dask
worker changes no number.

Every kill is deterministic: a child process (``subprocess``, bounded by a timeout) patches
one write step so that it kills itself with SIGKILL at that exact point (after half of the
bytes of a file, after the first row group of a parquet table, just before the rename).
Every corruption is deterministic too: a file cut in half, or bytes XOR 0xFF at fixed
fractions of the file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

SRC = str(Path(__file__).resolve().parents[1] / "src")
CHILD_TIMEOUT = 120                 # seconds; every child finishes in a few


def run_child(code: str, *args: str, expect_kill: bool = True) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (evaluq from this worktree), bounded in time."""
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    if expect_kill:
        assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr[-2000:])
    else:
        assert done.returncode == 0, done.stderr[-2000:]
    return done


KILL = "import os, signal\ndef die(*a, **k):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
HALF_THEN_DIE = KILL + textwrap.dedent("""
    import pathlib
    _write_text = pathlib.Path.write_text
    def half_then_die(self, text, *a, **k):
        _write_text(self, text[: len(text) // 2], *a, **k)   # half the bytes, then killed
        die()
    pathlib.Path.write_text = half_then_die
    """)


def cube(**kw) -> xr.Dataset:
    return eq.simulate_cube(**{"n_models": 3, "n_languages": 5, "n_seeds": 3, "n_boot": 20,
                               "rng": 0, **kw})


def long_table(c: xr.Dataset) -> pd.DataFrame:
    """The cube as a long table: full-test-set rows (empty bootstrap), then replicates."""
    boot = c.boot_score.to_dataframe().reset_index().rename(columns={"boot_score": "value"})
    full = c.score.to_dataframe().reset_index().rename(columns={"score": "value"})
    full["bootstrap"] = np.nan
    return pd.concat([full, boot], ignore_index=True)


LONG = dict(model="model", language="language", seed="seed", bootstrap="bootstrap",
            score="value")


def flip(path: Path, fraction: float) -> None:
    """XOR 0xFF one byte at ``fraction`` of the file (a text file becomes invalid UTF-8)."""
    data = bytearray(path.read_bytes())
    data[min(len(data) - 1, int(len(data) * fraction))] ^= 0xFF
    path.write_bytes(bytes(data))


def outcome(func, *args, exc=CubeError, **kwargs):
    """``(result, None)``, or ``(None, the error raised)``."""
    try:
        return func(*args, **kwargs), None
    except exc as err:
        return None, err


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


# --- interrupted writes -------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["mid-parquet", "before-rename"])
def test_killed_from_long_out_leaves_no_store_and_the_partial_one_is_refused(tmp_path, where):
    c = cube()
    src = tmp_path / "long.parquet"
    long_table(c).to_parquet(src, row_group_size=60)          # several row groups
    out = tmp_path / "cube.zarr"
    patch = ("import evaluq.cube as m\n_add = m._ParquetFill.add\nn = [0]\n"
             "def add(self, *a):\n    n[0] += 1\n    if n[0] == 2:\n        die()\n"
             "    return _add(self, *a)\nm._ParquetFill.add = add\n"
             if where == "mid-parquet" else
             "import evaluq._atomic as a\na.os.rename = die\n")
    run_child(KILL + patch + f"""
import evaluq as eq
eq.from_long({str(src)!r}, out={str(out)!r}, **{LONG!r})
""")
    assert not out.exists()                                    # never a half store at `out`
    partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert len(partial) == 1
    with pytest.raises(CubeError, match="interrupted.*Delete it and write 'cube.zarr' again"):
        eq.open_cube(partial[0])
    again = eq.from_long(src, out=out, **LONG)                 # resuming: write it again
    xr.testing.assert_equal(eq.variance_components(again), eq.variance_components(c))


def item_table(n_items: int = 40, shift: float = 0.0) -> pd.DataFrame:
    """Per-item 0/1 scores: 3 models x 3 tasks x 2 epochs x ``n_items`` items."""
    gen = np.random.default_rng(1)
    grid = pd.MultiIndex.from_product([["a", "b", "c"], ["t0", "t1", "t2"], [0, 1],
                                       range(n_items)],
                                      names=["model", "task", "epoch", "item"]).to_frame(
                                          index=False)
    p = 0.5 + shift + 0.1 * grid["model"].map({"a": 0, "b": 1, "c": 2})
    return grid.assign(score=(gen.random(len(grid)) < p).astype(float))


ITEMS = dict(model="model", item="item", score="score", language="task", seed="epoch",
             n_boot=30, rng=0)


@pytest.mark.parametrize("where", ["second-language", "before-rename", "exception"])
def test_killed_from_items_out_leaves_no_store_and_the_partial_one_is_refused(tmp_path, where):
    """from_items(parquet, out=) killed while writing its second language, or just before
    the rename, leaves no store at `out` and a .partial one that open_cube refuses; an
    exception (in process) leaves nothing at all. Written again, it is the in-memory cube."""
    table = item_table()
    src = tmp_path / "items.parquet"
    table.to_parquet(src)
    out = tmp_path / "cube.zarr"
    if where == "exception":
        import evaluq._items_zarr as z

        def fail(*a, **k):
            raise RuntimeError("disk full")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(z, "write_language", fail)
            with pytest.raises(RuntimeError, match="disk full"):
                eq.from_items(src, out=out, **ITEMS)
        assert not out.exists()
        assert not [p for p in tmp_path.iterdir() if p.name != "items.parquet"]
    else:
        patch = ("import evaluq._items_zarr as z\n_w = z.write_language\nn = [0]\n"
                 "def w(*a, **k):\n    n[0] += 1\n    if n[0] == 2:\n        die()\n"
                 "    return _w(*a, **k)\nz.write_language = w\n"
                 if where == "second-language" else "import evaluq._atomic as a\n"
                                                    "a.os.rename = die\n")
        run_child(KILL + patch + f"""
import evaluq as eq
eq.from_items({str(src)!r}, out={str(out)!r}, **{ITEMS!r})
""")
        assert not out.exists()                                # never a half store at `out`
        partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
        assert len(partial) == 1
        with pytest.raises(CubeError, match="interrupted.*Delete it and write 'cube.zarr' again"):
            eq.open_cube(partial[0])
    again = eq.from_items(src, out=out, **ITEMS)               # resuming: write it again
    xr.testing.assert_equal(again.boot_score.compute(), eq.from_items(table, **ITEMS).boot_score)


def test_from_items_out_of_a_dataframe_is_atomic_too(tmp_path):
    out = tmp_path / "cube.zarr"
    import evaluq.items as items

    def fail(*a):
        raise OSError("killed")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(items, "write_manifest", fail)      # the last step before the rename
        with pytest.raises(OSError, match="killed"):
            eq.from_items(item_table(), out=out, **ITEMS)
    assert not list(tmp_path.iterdir())
    cube_ = eq.from_items(item_table(), out=out, **ITEMS)
    assert (out / ".evaluq" / "manifest.json").is_file()
    xr.testing.assert_equal(cube_.score, eq.from_items(item_table(), **ITEMS).score)


def _experiment(path: Path, n_runs: int) -> eq.Experiment:
    rng = np.random.default_rng(0)
    exp = eq.Experiment(path)
    y = rng.integers(0, 2, 30)
    for run in range(n_runs):
        exp.feed("base", run=run, predictions=rng.integers(0, 2, 30), targets=y)
    return exp


@pytest.mark.parametrize("step", ["half-written", "before-rename"])
def test_killed_experiment_save_keeps_the_previous_registry(tmp_path, step):
    folder = tmp_path / "exp"
    _experiment(folder, 2)
    file = folder / "outcomes.json"
    before = file.read_bytes()
    patch = HALF_THEN_DIE if step == "half-written" else KILL + "import os\nos.replace = die\n"
    run_child(patch + f"""
import numpy as np, evaluq as eq
exp = eq.Experiment.load({str(folder)!r})
exp.feed("base", run=9, predictions=np.zeros(30, int), targets=np.zeros(30, int))
""")
    assert file.read_bytes() == before                         # the previous file, whole
    assert len(eq.Experiment.load(folder).data["base"]["exp_idxs"]) == 2


def test_killed_report_out_keeps_the_previous_report(tmp_path):
    table = tmp_path / "scores.csv"
    long_table(cube()).to_csv(table, index=False)
    out = tmp_path / "report"
    args = [str(table), "--model", "model", "--language", "language", "--seed", "seed",
            "--bootstrap", "bootstrap", "--score", "value", "--n-resamples", "200",
            "--out", str(out), "--quiet"]
    from evaluq.cli import main
    assert main(["report", *args]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    run_child(HALF_THEN_DIE + """
import sys, evaluq.cli
evaluq.cli.main(["report", *sys.argv[1:]])
""", *args[:-3], "--rng", "1", "--out", str(out), "--quiet")
    after = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
    assert after == before                                      # every file whole, unchanged
    assert (out / "report.html").read_text(encoding="utf-8").rstrip().endswith("</html>")


@pytest.mark.slow
def test_killed_fit_save_keeps_the_previous_fit_and_a_damaged_one_is_refused(tmp_path):
    pytest.importorskip("pymc")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                # few draws: convergence warnings
        fit = eq.fit_hierarchical(cube(n_languages=6), draws=30, tune=30, chains=2, rng=0,
                                  retry=False)
    path = tmp_path / "fit.nc"
    fit.save(path)
    before = path.read_bytes()
    run_child(KILL + f"""
import xarray as xr, evaluq as eq
fit = eq.load_fit({str(path)!r})
_to_netcdf = xr.DataTree.to_netcdf
def half_then_die(self, target, *a, **k):
    _to_netcdf(self, target, *a, **k)
    data = open(target, "rb").read()
    open(target, "wb").write(data[: len(data) // 2])        # half the file on disk, then killed
    die()
xr.DataTree.to_netcdf = half_then_die
fit.save({str(path)!r})
""")
    assert path.read_bytes() == before
    xr.testing.assert_identical(eq.load_fit(path).posterior, fit.posterior)
    for damage in ("truncate", *FRACTIONS):
        path.write_bytes(before)
        truncate(path) if damage == "truncate" else flip(path, damage)
        loaded, err = outcome(eq.load_fit, path, exc=ValueError)
        if err is not None:
            assert str(path) in str(err)
        else:                                          # a flip in unused bytes: unchanged
            xr.testing.assert_identical(loaded.posterior, fit.posterior)


# --- corrupted or truncated inputs --------------------------------------------------------------

FRACTIONS = (0.05, 0.25, 0.5, 0.75, 0.95)


def _netcdf_cube(tmp_path: Path) -> tuple[Path, xr.Dataset]:
    c = cube()
    path = tmp_path / "cube.nc"
    c.to_netcdf(path, encoding={v: {"fletcher32": True} for v in c.data_vars})
    return path, c


@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
def test_damaged_netcdf_cube_is_refused_naming_the_file(tmp_path, damage):
    """A flipped byte either raises CubeError naming the file or (in unused padding of
    the HDF5 file) changes nothing: never different numbers."""
    path, _ = _netcdf_cube(tmp_path)
    truncate(path) if damage == "truncate" else flip(path, damage)
    opened, err = outcome(eq.open_cube, path)
    if err is not None:
        assert str(path) in str(err)
        return
    assert damage != "truncate"
    (tmp_path / "ok").mkdir()
    xr.testing.assert_identical(opened, eq.open_cube(_netcdf_cube(tmp_path / "ok")[0]))


def test_a_file_that_is_no_cube_is_refused_naming_it(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a cube")
    with pytest.raises(CubeError, match=r"`path` .*notes\.txt.* not a NetCDF file"):
        eq.open_cube(path)


def _zarr_cube(tmp_path: Path) -> tuple[Path, xr.Dataset]:
    c = cube()
    out = tmp_path / "cube.zarr"
    eq.from_long(long_table(c), out=out, **LONG)
    return out, c


@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
@pytest.mark.parametrize("part", ["boot_score chunk", "score chunk", "label chunk", "metadata"])
def test_damaged_zarr_cube_is_refused_naming_the_store(tmp_path, part, damage):
    out, _ = _zarr_cube(tmp_path)
    files = {"boot_score chunk": out / "boot_score" / "c" / "1" / "0" / "0" / "0",
             "score chunk": out / "score" / "c" / "1" / "0" / "0",
             "label chunk": out / "model" / "c" / "0",
             "metadata": out / "boot_score" / "zarr.json"}
    target = files[part]
    truncate(target) if damage == "truncate" else flip(target, damage)
    with pytest.raises(CubeError, match=str(out)):
        eq.variance_components(eq.open_cube(out))


def _chunk_files(store: Path) -> list[Path]:
    return sorted(p for p in store.rglob("*") if p.is_file() and ".evaluq" not in p.parts
                  and p.name != "zarr.json")


@pytest.mark.parametrize("writer", ["from_long", "from_items"])
@pytest.mark.parametrize("which", ["boot_score", "score", "every boot_score chunk"])
def test_missing_chunk_files_are_refused_on_open_naming_the_path(tmp_path, writer, which):
    """A store written by evaluq lists its chunk files in a manifest written last; a deleted
    chunk (which zarr would read as NaN: missing cells) is refused on open, naming it."""
    out = tmp_path / "cube.zarr"
    if writer == "from_long":
        eq.from_long(long_table(cube()), out=out, **LONG)
    else:
        eq.from_items(item_table(), out=out, **ITEMS)
    variable = "score" if which == "score" else "boot_score"
    chunks = [p for p in _chunk_files(out) if p.relative_to(out).parts[0] == variable]
    assert chunks
    for path in chunks if which.startswith("every") else chunks[-1:]:
        path.unlink()
    with pytest.raises(CubeError, match=rf"{out}' is a damaged zarr cube store: \d+ of its "
                                        rf"\d+ chunk file\(s\) are missing, e\.g\. "
                                        rf"'{out}/{variable}/c"):
        eq.open_cube(out)


def test_a_resized_chunk_is_refused_and_a_damaged_manifest_named(tmp_path):
    out = tmp_path / "cube.zarr"
    eq.from_long(long_table(cube()), out=out, **LONG)
    target = _chunk_files(out)[0]
    target.write_bytes(target.read_bytes() + b"\0")
    with pytest.raises(CubeError, match="of another size than written"):
        eq.open_cube(out)
    (out / ".evaluq" / "manifest.json").write_text("{not json")
    with pytest.raises(CubeError, match=r"the manifest of this zarr cube store .* is damaged"):
        eq.open_cube(out)


@pytest.mark.parametrize("how", ["rename", "remove and rewrite"])
def test_a_store_replaced_under_a_lazy_cube_raises_and_never_mixes(tmp_path, how):
    """A lazily opened store replaced underneath (renamed over, or removed and written
    again) raises at compute time: the chunks check the store's generation."""
    import shutil

    out = tmp_path / "cube.zarr"
    first = eq.from_long(long_table(cube()), out=out, **LONG)
    other = long_table(cube(rng=1))
    if how == "rename":
        eq.from_long(other, out=tmp_path / "new.zarr", **LONG)
        os.rename(out, tmp_path / "old.zarr")
        os.rename(tmp_path / "new.zarr", out)
    else:
        shutil.rmtree(out)
        eq.from_long(other, out=out, **LONG)
    with pytest.raises(CubeError, match=rf"the zarr store '{out}' was replaced after it was "
                                        "opened"):
        eq.variance_components(first)
    xr.testing.assert_equal(eq.variance_components(eq.open_cube(out)),   # opened again: fine
                            eq.variance_components(cube(rng=1)))


@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
def test_damaged_outcomes_file_is_refused_naming_it(tmp_path, damage):
    _experiment(tmp_path / "exp", 2)
    file = tmp_path / "exp" / "outcomes.json"
    truncate(file) if damage == "truncate" else flip(file, damage)
    with pytest.raises(ValueError, match="outcomes.json"):
        eq.Experiment.load(tmp_path / "exp")


@pytest.mark.parametrize("entry", [3, {"h1": {}}, {"exp_idxs": 1, "preds": [], "targs": [],
                                                    "idxs": [], "epochs": [], "h1": {}}])
def test_malformed_outcomes_entry_names_the_baseline(tmp_path, entry):
    file = tmp_path / "outcomes.json"
    file.write_text(json.dumps({"base": entry}))
    with pytest.raises(ValueError, match=r"baseline 'base' in .*outcomes\.json"):
        eq.Experiment.load(file)


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
def test_damaged_table_is_refused_naming_it(tmp_path, suffix, damage):
    """parquet written with page checksums (verified on read); CSV / JSON lines are text,
    so a flipped byte (XOR 0xFF) is invalid UTF-8; a truncated one loses its footer or
    cuts a line (a CSV whose last line is cut is refused). A damage that leaves the table
    readable must leave it unchanged."""
    table = long_table(cube())
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        table.to_parquet(path, write_page_checksum=True)
    elif suffix == ".csv":
        table.to_csv(path, index=False)
    else:
        table.to_json(path, orient="records", lines=True, double_precision=15)
    original = eq.io.read_table(path)
    truncate(path) if damage == "truncate" else flip(path, damage)
    got, err = outcome(eq.io.read_table, path)
    if err is not None:
        assert str(path) in str(err)
        return
    pd.testing.assert_frame_equal(got, original)       # readable only if unchanged


@pytest.mark.parametrize("damage", ["truncate", *FRACTIONS])
def test_damaged_parquet_streamed_into_zarr_is_refused_naming_it(tmp_path, damage):
    """from_long(parquet, out=) reads row group by row group, page checksums verified; a
    flip in bytes it does not use (column statistics) changes nothing."""
    c = cube()
    path = tmp_path / "t.parquet"
    long_table(c).to_parquet(path, write_page_checksum=True, row_group_size=60)
    truncate(path) if damage == "truncate" else flip(path, damage)
    got, err = outcome(eq.from_long, path, out=tmp_path / "cube.zarr", **LONG)
    if err is not None:
        assert str(path) in str(err)
        assert not (tmp_path / "cube.zarr").exists()
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
        return
    xr.testing.assert_equal(eq.variance_components(got), eq.variance_components(c))


# --- concurrent readers -------------------------------------------------------------------------

READER = """
import sys, numpy as np, evaluq as eq
lazy = eq.open_cube(sys.argv[1])
vc = eq.variance_components(lazy)
agg = eq.aggregate(eq.resample(lazy, n_resamples=2000, chunk_size=1000, rng=5))
np.savez(sys.argv[2], sigma_seed=vc.sigma_seed.values, sigma_boot=vc.sigma_boot.values,
         sd=agg.sd.values, ci=agg.ci.values, mean=agg.observed.values)
"""


@pytest.mark.slow
def test_two_processes_reading_one_zarr_cube_get_the_same_numbers(tmp_path):
    out, c = _zarr_cube(tmp_path)
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONWARNINGS": "ignore"}
    procs = [subprocess.Popen([sys.executable, "-c", READER, str(out), str(tmp_path / f"{i}.npz")],
                              env=env, stderr=subprocess.PIPE, text=True) for i in range(2)]
    for proc in procs:                                  # both run at once
        _, err = proc.communicate(timeout=CHILD_TIMEOUT)
        assert proc.returncode == 0, err[-2000:]
    first, second = ({k: v for k, v in np.load(tmp_path / f"{i}.npz").items()}
                     for i in range(2))
    vc = eq.variance_components(c)
    agg = eq.aggregate(eq.resample(c, n_resamples=2000, rng=5))
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
    np.testing.assert_array_equal(first["sigma_seed"], vc.sigma_seed.values)
    np.testing.assert_array_equal(first["sd"], agg.sd.values)


# --- a dask worker killed mid-analysis ----------------------------------------------------------

WORKER_KILL = """
import os, sys, numpy as np, distributed, evaluq as eq

def arm(marker):
    # the first zarr chunk read after arming kills its worker process (SIGKILL), once
    import os, signal
    import dask.array.core as core
    real = getattr(core, "_unarmed_getter", core.getter)
    core._unarmed_getter = real
    def getter(*a, **k):
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return real(*a, **k)
        os.kill(os.getpid(), signal.SIGKILL)
    core.getter = getter

store, folder, out = sys.argv[1:4]
with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=":0", silence_logs=50) as cluster, \\
        distributed.Client(cluster) as client:
    lazy = eq.open_cube(store)
    def worker_pids():
        client.wait_for_workers(2, timeout=60)          # the killed one restarted
        return sorted(client.run(os.getpid).values())
    pids = [worker_pids()]
    client.run(arm, os.path.join(folder, "kill-1"))
    vc = eq.variance_components(lazy)
    pids.append(worker_pids())
    client.run(arm, os.path.join(folder, "kill-2"))
    board = eq.leaderboard(eq.aggregate(eq.resample(lazy, n_resamples=10_000,
                                                    chunk_size=1000, rng=9)))
    pids.append(worker_pids())
np.savez(out, pids=np.array(pids), models=board.index.to_numpy().astype(str),
         board=board[["observed", "sd", "lower", "upper", "expected_rank", "p_best",
                      "tier"]].to_numpy(dtype=float),
         **{name: vc[name].values for name in vc.data_vars})
"""


@pytest.mark.slow
def test_a_killed_worker_changes_no_number(tmp_path):
    """On a LocalCluster of two process workers, the first chunk read of each analysis kills
    its worker (SIGKILL); the nanny restarts it, dask reruns the lost tasks, and
    variance_components and a 10^4-resample leaderboard on a zarr cube give the in-memory
    numbers to the last bit."""
    pytest.importorskip("distributed")
    out, c = _zarr_cube(tmp_path)
    result = tmp_path / "result.npz"
    run_child(WORKER_KILL, str(out), str(tmp_path), str(result), expect_kill=False)
    assert (tmp_path / "kill-1").exists()
    assert (tmp_path / "kill-2").exists()
    with np.load(result) as got:
        pids = got["pids"]
        assert len(set(pids[0]) & set(pids[1])) == 1       # one worker died and was replaced
        assert len(set(pids[1]) & set(pids[2])) == 1       # and one more in the second run
        vc = eq.variance_components(c)
        for name in vc.data_vars:
            np.testing.assert_array_equal(got[name], vc[name].values)
        board = eq.leaderboard(eq.aggregate(eq.resample(c, n_resamples=10_000, rng=9)))
        assert got["models"].tolist() == board.index.tolist()
        np.testing.assert_array_equal(got["board"], board[[
            "observed", "sd", "lower", "upper", "expected_rank", "p_best", "tier"
        ]].to_numpy(dtype=float))

"""Larger-than-memory cubes: a zarr store streamed on a dask.distributed LocalCluster (issue 13).

Builds a ``boot_score`` cube of about ``--gb`` gigabytes as a zarr store (6 models x L
languages x 10 seeds x 3000 replicates, float64, L from the size; chunks of one model, all
seeds and replicates and about 32 MiB of languages), written chunk by chunk so it is never
in memory. Then, on a LocalCluster with 1 and with 2 process workers (one thread each):

* ``eq.variance_components(eq.open_cube(store))``;
* a leaderboard from 10^4 parametric resamples: ``eq.leaderboard(eq.aggregate(eq.resample(
  cube, n_resamples=10_000)))``;
* the baseline in the same run: dask's own ``boot_score.std("bootstrap").mean("seed")`` over
  the same store (the ``sigma_boot`` of the variance components), whose numbers evaluq's must
  match.

Each step prints its wall time, the client's peak RSS and the largest worker's peak RSS
(Linux: the peak is reset before each step through ``/proc/self/clear_refs``), then the
speedup from 1 to 2 workers. The default 0.3 GB is the CI smoke size; ``--gb 30`` is the
issue's run (check ``df -h`` first: the script refuses when the disk lacks the room).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_line

N_MODELS, N_SEEDS, N_BOOT = 6, 10, 3000
CHUNK_BYTES = 2**25
PEAK_TARGET_GB = 2.0


def _reset_peak() -> None:
    """Reset this process's peak RSS (VmHWM); a no-op where /proc has no clear_refs."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def _peak_mib() -> float:
    """This process's peak RSS since the last reset, in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(path: str, n_languages: int) -> float:
    """Write the cube to ``path`` chunk by chunk; return the seconds it took."""
    import dask.array as da
    import xarray as xr

    rng = np.random.default_rng(0)
    means = rng.normal(30.0, 2.0, size=(N_MODELS, 1, 1))
    score = means + rng.normal(0.0, 3.0, size=(1, n_languages, 1)) \
        + rng.normal(0.0, 0.5, size=(N_MODELS, n_languages, N_SEEDS))
    per_language = N_SEEDS * N_BOOT * 8
    lang_chunk = max(1, min(n_languages, CHUNK_BYTES // per_language))
    chunks = (1, lang_chunk, N_SEEDS, N_BOOT)

    def replicates(block_info: dict | None = None) -> np.ndarray:
        assert block_info is not None
        (m0, m1), (l0, l1), _, _ = block_info[None]["array-location"]
        gen = np.random.default_rng([1, m0, l0])
        return score[m0:m1, l0:l1, :, None] + gen.standard_normal(
            (m1 - m0, l1 - l0, N_SEEDS, N_BOOT))

    boot = da.map_blocks(replicates, chunks=tuple(
        tuple(min(c, n - i) for i in range(0, n, c))
        for c, n in zip(chunks, (N_MODELS, n_languages, N_SEEDS, N_BOOT), strict=True)),
        dtype=np.float64)
    cube = xr.Dataset(
        {"score": (("model", "language", "seed"), score),
         "boot_score": (("model", "language", "seed", "bootstrap"), boot)},
        coords={"model": [f"model_{i}" for i in range(N_MODELS)],
                "language": [f"lang_{j:05d}" for j in range(n_languages)],
                "seed": np.arange(N_SEEDS), "bootstrap": np.arange(N_BOOT)},
        attrs={"metric": "score", "higher_is_better": 1})
    start = time.perf_counter()
    cube.to_zarr(path, consolidated=False)
    return time.perf_counter() - start


def _import_evaluq() -> None:
    import evaluq._streaming
    import evaluq.aggregation
    import evaluq.variance  # noqa: F401


def _variance(path: str) -> object:
    import evaluq as eq
    return eq.variance_components(eq.open_cube(path))


def _leaderboard(path: str, n_resamples: int) -> object:
    import evaluq as eq
    # the default chunk_size: about 64 MiB of scores a task, rounded up to one random-number
    # block (1000 resamples, 134 for 20 833 languages: evaluq.resampling._block_size)
    rs = eq.resample(eq.open_cube(path), n_resamples=n_resamples, rng=0)
    return eq.leaderboard(eq.aggregate(rs))


def _dask_std(path: str) -> object:
    import xarray as xr
    ds = xr.open_zarr(path, chunks={}, consolidated=False)
    return ds.boot_score.std("bootstrap", ddof=1).mean("seed").compute()


def _row(name: str, n_workers: int, measured: tuple) -> None:
    seconds, client_peak, worker_peak, _ = measured
    print(f"{name:<42} {n_workers:>7} {seconds:>8.2f}s {client_peak:>9.0f} MiB "
          f"{worker_peak:>8.0f} MiB", flush=True)


def run_on_cluster(path: str, n_workers: int, n_resamples: int, repeat: int,
                   only: tuple[str, ...] = ()) -> dict[str, tuple]:
    from distributed import Client, LocalCluster

    out: dict[str, tuple] = {}
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=40) as cluster, \
            Client(cluster) as client:
        # the workers import evaluq once (a fixed start-up cost, printed apart from the steps)
        start = time.perf_counter()
        client.run(_import_evaluq)
        out["workers import evaluq (once)"] = (time.perf_counter() - start, _peak_mib(),
                                               max(client.run(_peak_mib).values()), None)
        _row("workers import evaluq (once)", n_workers, out["workers import evaluq (once)"])
        steps = {"evaluq variance_components": lambda: _variance(path),
                 f"evaluq leaderboard, {n_resamples:,} resamples":
                     lambda: _leaderboard(path, n_resamples),
                 "dask .std() baseline": lambda: _dask_std(path)}
        for name, step in steps.items():
            if only and name not in only:
                continue
            client.run(_reset_peak)
            _reset_peak()
            seconds = np.inf
            for _ in range(repeat):                    # best of `repeat` (first-call costs)
                start = time.perf_counter()
                result = step()
                seconds = min(seconds, time.perf_counter() - start)
            workers = max(client.run(_peak_mib).values())
            out[name] = (seconds, _peak_mib(), workers, result)
            _row(name, n_workers, out[name])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=0.3, help="size of boot_score (GB)")
    parser.add_argument("--quick", action="store_true", help="the CI smoke run (0.3 GB)")
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--dir", default=None, help="where to write the store (default: a "
                        "temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the store")
    parser.add_argument("--repeat", type=int, default=None, help="best of N runs per step "
                        "(default 2 below 2 GB, else 1)")
    parser.add_argument("--store", default=None, help="an existing store built by this "
                        "script (--keep) to run on instead of building one")
    parser.add_argument("--workers", default="1,2", help="worker counts, e.g. 1,2 or 2")
    parser.add_argument("--steps", default="variance,leaderboard,std", help="which steps to "
                        "run (comma-separated: variance, leaderboard, std)")
    args = parser.parse_args(argv)
    names = {"variance": "evaluq variance_components",
             "leaderboard": f"evaluq leaderboard, {args.resamples:,} resamples",
             "std": "dask .std() baseline"}
    try:
        only = tuple(names[s.strip()] for s in args.steps.split(","))
    except KeyError as err:
        parser.error(f"--steps: unknown step {err}; choose from {', '.join(names)}")
    gb = 0.3 if args.quick else args.gb
    n_languages = max(2, round(gb * 1e9 / (N_MODELS * N_SEEDS * N_BOOT * 8)))
    if args.store is not None:
        import zarr
        n_languages = zarr.open_array(os.path.join(args.store, "boot_score"), mode="r").shape[1]
    nbytes = N_MODELS * n_languages * N_SEEDS * N_BOOT * 8
    parent = args.dir or tempfile.gettempdir()
    free = shutil.disk_usage(parent).free
    print(machine_line())
    print(f"cube: {N_MODELS} models x {n_languages:,} languages x {N_SEEDS} seeds x {N_BOOT} "
          f"replicates = {nbytes / 1e9:.2f} GB of boot_score; {free / 1e9:.0f} GB free at "
          f"{parent}")
    if args.store is None and nbytes * 1.1 > free:
        print(f"refused: the store needs about {nbytes * 1.1 / 1e9:.1f} GB and {parent} has "
              f"{free / 1e9:.1f} GB free")
        return 1
    work = tempfile.mkdtemp(prefix="bench_zarr-", dir=parent) if args.store is None else ""
    path = args.store or os.path.join(work, "cube.zarr")
    counts = tuple(int(w) for w in args.workers.split(","))
    try:
        if args.store is None:
            seconds = build(path, n_languages)
            print(f"built {path} in {seconds:.1f} s (chunks of "
                  f"{min(n_languages, CHUNK_BYTES // (N_SEEDS * N_BOOT * 8))} languages)")
        else:
            print(f"running on the existing store {path}")
        print()
        repeat = args.repeat or (2 if nbytes < 2e9 else 1)
        print(f"times: best of {repeat} run(s) per step; peaks over all of them")
        print(f"{'step':<42} {'workers':>7} {'time':>9} {'client peak':>12} "
              f"{'worker peak':>12}", flush=True)
        runs = {w: run_on_cluster(path, w, args.resamples, repeat, only) for w in counts}
        if len(counts) == 2:
            a, b = counts
            for name in runs[a]:
                print(f"speedup {a} -> {b} workers, {name}: "
                      f"{runs[a][name][0] / runs[b][name][0]:.2f}x")
        last = runs[counts[-1]]
        rel = 0.0
        if names["variance"] in last and names["std"] in last:
            vc, std = last[names["variance"]][3], last[names["std"]][3]
            rel = float(np.max(np.abs(vc.sigma_boot.values - std.values) / std.values))
            print()
            print(f"sigma_boot: evaluq vs dask .std() max relative difference {rel:.1e}")
        worst = max(max(r[name][1], r[name][2]) for r in runs.values() for name in r)
        print(f"largest peak RSS of any process: {worst:.0f} MiB   target < "
              f"{PEAK_TARGET_GB:g} GB: {'met' if worst < PEAK_TARGET_GB * 1024 else 'NOT met'}")
        if rel > 1e-10:
            print("evaluq and dask disagree")
            return 1
    finally:
        if args.keep or args.store is not None:
            print(f"kept {path}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

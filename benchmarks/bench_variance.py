"""Benchmark: variance components, from a cube and from a 10^7-row long table.

Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_variance.py [--quick]

Part 1: ``eq.variance_components`` on a cube of 10 models x 100 languages x 10 seeds x 1000
replicates (target < 2 s), against two baselines timed in the same run: a per-(model,
language) Python loop over the arrays, and pandas groupby on the long table.

Part 2 (issue 13's target: <= 2 s and <= 1 GB): the same data as a long table of
10^7 + 10^4 rows (model and language as strings, seed, bootstrap index empty on the
full-test-set rows, score), turned into a cube by ``eq.from_long`` and reduced by
``eq.variance_components``. It runs in a fresh child process so that memory is measured
cleanly: the process's resident memory after the table is built, and its peak
(``ru_maxrss``) after each step, so the extra memory of each step is the growth of the peak.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import evaluq_env, machine_line, peak_mib

import evaluq as eq

SIZES = {"full": (10, 100, 10, 1000), "quick": (4, 10, 5, 100)}
TARGET_S, TARGET_GB = 2.0, 1.0


def baseline(cube) -> dict[tuple[str, str], tuple[float, float]]:
    """Per-(model, language) Python loop: seed SD and mean boot SD per cell."""
    out = {}
    score, boot = cube.score.values, cube.boot_score.values
    for i, m in enumerate(cube.model.values):
        for j, lang in enumerate(cube.language.values):
            seed_sd = float(np.std(score[i, j], ddof=1))
            boot_sd = float(np.mean([np.std(boot[i, j, s], ddof=1)
                                     for s in range(boot.shape[2])]))
            out[(m, lang)] = (seed_sd, boot_sd)
    return out


def pandas_baseline(cube) -> float:
    """Long-table route: groupby on a tidy table of every replicate, timed without building it."""
    df = cube.boot_score.to_dataframe().reset_index()
    start = time.perf_counter()
    per_seed = df.groupby(["model", "language", "seed"])["boot_score"].std()
    per_seed.groupby(["model", "language"]).mean()
    per_boot = df.groupby(["model", "language", "bootstrap"])["boot_score"].std()
    per_boot.groupby(["model", "language"]).std()
    return time.perf_counter() - start


def part1(sizes: tuple[int, int, int, int]) -> None:
    n_models, n_languages, n_seeds, n_boot = sizes
    cube = eq.simulate_cube(n_models=n_models, n_languages=n_languages, n_seeds=n_seeds,
                            n_boot=n_boot, rng=0)
    print(f"Part 1: cube {dict(cube.boot_score.sizes)}, boot_score "
          f"{cube.boot_score.nbytes / 2**20:.0f} MiB")
    eq.variance_components(cube)  # warm up
    times = []
    for _ in range(3):
        start = time.perf_counter()
        vc = eq.variance_components(cube)
        times.append(time.perf_counter() - start)
    best = min(times)
    print(f"  eq.variance_components: {best:.3f} s (best of 3), peak extra memory "
          f"{peak_mib(lambda: eq.variance_components(cube)):.0f} MiB   target < {TARGET_S} s: "
          f"{'met' if best < TARGET_S else 'NOT met'}")
    start = time.perf_counter()
    ref = baseline(cube)
    base_time = time.perf_counter() - start
    print(f"  baseline per-cell Python loop (seed and boot SDs only): {base_time:.3f} s, "
          f"ratio {base_time / best:.1f}x")
    pandas_time = pandas_baseline(cube)
    print(f"  baseline pandas groupby on the long table (boot SD and its SE only): "
          f"{pandas_time:.3f} s, ratio {pandas_time / best:.1f}x")
    m, lang = cube.model.values[-1], cube.language.values[-1]
    ok = (np.isclose(ref[(m, lang)][0], vc.sigma_seed.sel(model=m, language=lang).item())
          and np.isclose(ref[(m, lang)][1], vc.sigma_boot.sel(model=m, language=lang).item()))
    print(f"  baseline and evaluq {'agree' if ok else 'DISAGREE'}")
    print()


def rss_mib() -> float:
    """Current resident memory of this process (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10


def long_table(sizes: tuple[int, int, int, int]):
    """The simulated cube as a long table: full-test-set rows, then replicate rows."""
    import pandas as pd

    n_models, n_languages, n_seeds, n_boot = sizes
    cube = eq.simulate_cube(n_models=n_models, n_languages=n_languages, n_seeds=n_seeds,
                            n_boot=n_boot, rng=0)
    models = np.array([f"model_{i}" for i in range(n_models)])
    langs = np.array([f"lang_{j:03d}" for j in range(n_languages)])
    m, lang, s, b = np.meshgrid(np.arange(n_models), np.arange(n_languages),
                                np.arange(n_seeds), np.arange(n_boot), indexing="ij")
    mf, lf, sf = np.meshgrid(np.arange(n_models), np.arange(n_languages),
                             np.arange(n_seeds), indexing="ij")
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values
    full = cube.score.transpose("model", "language", "seed").values
    del cube
    df = pd.DataFrame({
        "model": np.concatenate([models[mf.ravel()], models[m.ravel()]]),
        "language": np.concatenate([langs[lf.ravel()], langs[lang.ravel()]]),
        "seed": np.concatenate([sf.ravel(), s.ravel()]),
        "bootstrap": np.concatenate([np.full(full.size, np.nan), b.ravel().astype(float)]),
        "score": np.concatenate([full.ravel(), boot.ravel()]),
    })
    return df


def child(sizes: tuple[int, int, int, int]) -> None:
    """Build the table, then time each step; print one JSON line."""
    df = long_table(sizes)
    out = {"rows": len(df), "table_mib": float(df.memory_usage(deep=True).sum() / 2**20),
           "rss_table": rss_mib(), "peak_table": peak_rss_mib()}
    start = time.perf_counter()
    cube = eq.from_long(df, seed="seed", bootstrap="bootstrap")
    out["from_long_s"] = time.perf_counter() - start
    out["peak_from_long"] = peak_rss_mib()
    del df
    start = time.perf_counter()
    eq.variance_components(cube)
    out["vc_s"] = time.perf_counter() - start
    out["peak_vc"] = peak_rss_mib()
    print(json.dumps(out))


def part2(sizes: tuple[int, int, int, int]) -> None:
    cmd = [sys.executable, __file__, "--child", ",".join(map(str, sizes))]
    done = subprocess.run(cmd, env=evaluq_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(f"Part 2 failed:\n{done.stderr[-2000:]}")
        return
    r = json.loads(done.stdout.strip().splitlines()[-1])
    total = r["from_long_s"] + r["vc_s"]
    extra = max(r["peak_from_long"], r["peak_vc"]) - r["rss_table"]
    print(f"Part 2: long table of {r['rows']:,} rows ({r['table_mib']:.0f} MiB in pandas; "
          f"process RSS {r['rss_table']:.0f} MiB after building it)")
    print(f"  eq.from_long ........... {r['from_long_s']:6.2f} s   peak RSS "
          f"{r['peak_from_long']:6.0f} MiB")
    print(f"  eq.variance_components . {r['vc_s']:6.2f} s   peak RSS {r['peak_vc']:6.0f} MiB")
    dominant = "from_long" if r["from_long_s"] > r["vc_s"] else "variance_components"
    print(f"  total {total:.2f} s (dominant: {dominant})   target <= {TARGET_S} s: "
          f"{'met' if total <= TARGET_S else 'NOT met'}")
    print(f"  memory beyond the table: {extra:.0f} MiB (peak RSS minus RSS with the table "
          f"built)   target <= {TARGET_GB} GB: "
          f"{'met' if extra <= TARGET_GB * 1024 else 'NOT met'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        a, b, c, d = (int(x) for x in args.child.split(","))
        child((a, b, c, d))
        return 0
    sizes = SIZES["quick" if args.quick else "full"]
    print(machine_line() + ("   (--quick: smoke sizes; the targets are for the default sizes)"
                            if args.quick else ""))
    print()
    part1(sizes)
    part2(sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())

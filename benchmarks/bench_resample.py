"""Benchmark: 100,000 resamples of 6 models x 61 languages, mean aggregate and ranks.

Parametric replication noise plus a language bootstrap (the multilingual paper's NER setting:
61 data sets). Target: <= 3 s and < 2 GiB peak on 2 cores.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_resample.py [--quick]

It times
  * the chunked path  ``aggregate(resample(..., lazy=True))`` (lazy, dask-backed resamples
    reduced chunk by chunk: only the aggregates are kept),
  * the materialised path ``aggregate(resample(...))`` (all 100,000 x 6 x 61 scores in memory),
  * a plain per-resample Python loop (the same model, numpy inside the loop), run on 2,000
    resamples in the same process and extrapolated linearly to 100,000,
and prints the wall time, the peak traced memory (tracemalloc, a separate run) and the speed
ratio against the loop. It then times the chunked path with nonparametric replication (the
cube's 5 seeds x 200 replicates) for each ``seeds`` mode, and prints the aggregate SDs of the
three modes next to their exact values given the cube (formulas in models/
leaderboard_resampling.md).
"""

from __future__ import annotations

import resource
import time
import tracemalloc

import numpy as np

import evaluq as eq
from evaluq.resampling import _N_THREADS

N_RESAMPLES = 100_000
N_MODELS, N_LANGUAGES = 6, 61
LOOP_RESAMPLES = 2_000
SD_RESAMPLES = 20_000


def chunked(cube):
    lazy = eq.resample(cube, n_resamples=N_RESAMPLES, replication="parametric",
                       languages="bootstrap", rng=0, lazy=True)
    agg = eq.aggregate(lazy, how="mean")
    return agg, eq.rank_distribution(agg)


def materialised(cube):
    rs = eq.resample(cube, n_resamples=N_RESAMPLES, replication="parametric",
                     languages="bootstrap", rng=0)
    agg = eq.aggregate(rs, how="mean")
    return agg, eq.rank_distribution(agg)


def nonparametric(cube, seeds: str):
    lazy = eq.resample(cube, n_resamples=N_RESAMPLES, replication="nonparametric", seeds=seeds,
                       languages="bootstrap", rng=0, lazy=True)
    agg = eq.aggregate(lazy, how="mean")
    return agg, eq.rank_distribution(agg)


def nonparametric_fixed_sd(cube, seeds: str) -> tuple[np.ndarray, np.ndarray]:
    """Aggregate SD with fixed languages: resampled, and exact given the cube."""
    lazy = eq.resample(cube, n_resamples=SD_RESAMPLES, replication="nonparametric", seeds=seeds,
                       rng=0, lazy=True)
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values
    n_s = boot.shape[2]
    between = boot.mean(axis=2).var(axis=-1)
    within = boot.var(axis=2, ddof=1).mean(axis=-1)
    c = {"one": (n_s - 1) / n_s, "bootstrap": (n_s - 1) / n_s**2, "rescaled": 1 / n_s}[seeds]
    exact = np.sqrt((between + c * within).sum(axis=-1)) / boot.shape[1]
    return eq.aggregate(lazy).sd.values, exact


def python_loop(cube, n_resamples: int) -> np.ndarray:
    """The same computation with one Python iteration per resample."""
    vc = eq.variance_components(cube)
    ybar = cube.score.mean("seed").values
    scale = np.sqrt(vc.sigma_seed**2 / vc.n_seeds + vc.sigma_boot**2).values
    gen = np.random.default_rng(0)
    counts = np.zeros((N_MODELS, N_MODELS))
    for _ in range(n_resamples):
        idx = gen.integers(0, N_LANGUAGES, size=N_LANGUAGES)
        y = ybar[:, idx] + gen.standard_normal((N_MODELS, N_LANGUAGES)) * scale[:, idx]
        agg = y.mean(axis=1)
        ranks = np.argsort(np.argsort(-agg))
        counts[np.arange(N_MODELS), ranks] += 1
    return counts / n_resamples


def timed(func, *args):
    start = time.perf_counter()
    out = func(*args)
    return time.perf_counter() - start, out


def peak(func, *args) -> float:
    tracemalloc.start()
    func(*args)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**30


def main() -> None:
    cube = eq.simulate_cube(n_models=N_MODELS, n_languages=N_LANGUAGES, n_seeds=5, n_boot=200,
                            model_means=np.linspace(0, 1, N_MODELS), rng=0)
    chunked(cube)                                     # warm up imports and caches
    t_chunked = min(timed(chunked, cube)[0] for _ in range(3))
    t_full, (agg, ranks) = timed(materialised, cube)
    t_loop = timed(python_loop, cube, LOOP_RESAMPLES)[0] * N_RESAMPLES / LOOP_RESAMPLES
    mem_chunked = peak(chunked, cube)
    mem_full = peak(materialised, cube)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    print(f"{N_RESAMPLES:,} resamples x {N_MODELS} models x {N_LANGUAGES} languages "
          f"(parametric + language bootstrap), mean aggregate + rank distribution; "
          f"{_N_THREADS} thread(s) for the draws")
    print(f"  chunked      (lazy=True):  {t_chunked:6.2f} s (best of 3)   "
          f"peak traced {mem_chunked:5.2f} GiB")
    print(f"  materialised (lazy=False): {t_full:6.2f} s               "
          f"peak traced {mem_full:5.2f} GiB")
    print(f"  Python loop per resample:  {t_loop:6.2f} s (timed on {LOOP_RESAMPLES:,} resamples, "
          f"extrapolated x{N_RESAMPLES // LOOP_RESAMPLES})")
    print(f"  speed ratio vs loop: chunked {t_loop / t_chunked:5.1f}x, "
          f"materialised {t_loop / t_full:5.1f}x")
    print(f"  process max RSS: {rss:.2f} GiB")
    target = "met" if t_chunked <= 3.0 and mem_chunked < 2.0 else "NOT met"
    print(f"  target (<= 3 s, < 2 GiB): {target}")
    p_best = {str(m): round(float(p), 3) for m, p in zip(ranks.model.values, ranks.p_best.values,
                                                         strict=True)}
    print(f"  P(best): {p_best}")
    print(f"  aggregate SD: {agg.sd.values.round(4)}")

    print(f"\nnonparametric replication (5 seeds x 200 replicates per cell) + language bootstrap, "
          f"{N_RESAMPLES:,} resamples, chunked:")
    for seeds in ("one", "bootstrap", "rescaled"):
        t_np = timed(nonparametric, cube, seeds)[0]
        mem_np = peak(nonparametric, cube, seeds)
        print(f"  seeds={seeds!r:<11} {t_np:6.2f} s   peak traced {mem_np:5.2f} GiB")
    print(f"fixed languages, aggregate SD of models 0..5 ({SD_RESAMPLES:,} resamples): resampled "
          f"/ exact given the cube (simulate_cube: replicates independent across seeds)")
    for seeds in ("one", "bootstrap", "rescaled"):
        sd, exact = nonparametric_fixed_sd(cube, seeds)
        print(f"  seeds={seeds!r:<11} {sd.round(4)}  /  {exact.round(4)}  "
              f"(max rel. diff {np.max(np.abs(sd / exact - 1)):.3%})")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 2,000 resamples")
    if parser.parse_args().quick:
        N_RESAMPLES, LOOP_RESAMPLES, SD_RESAMPLES = 2_000, 100, 1_000
    main()

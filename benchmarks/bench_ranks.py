"""Benchmark: rank distributions are linear in the number of models (issue 13).

Ranking every draw by one sort costs O(m log m) per draw; the former kernel compared every
pair of models, O(m^2). Both run here on the same draws (the pairwise one is kept in this
script only, as the baseline), for 6, 60 and 600 models x 10,000 draws, and the script prints
the wall times, the scaling exponent from 6 to 600 models (target <= 1.05), the speed ratio,
and the whole leaderboard pipeline at 600 models x 61 languages x 10,000 resamples (target
< 10 s): parametric resampling with a language bootstrap, the mean aggregate, ranks.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_ranks.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import xarray as xr

import evaluq as eq
from evaluq.ranks import _rank_probabilities


def pairwise_baseline(values: np.ndarray) -> np.ndarray:
    """The O(m^2) kernel: P(rank = r) by comparing every pair of models in every draw."""
    n_m, n_r = values.shape
    width = n_m + 1
    offset = np.arange(n_m) * width
    total = np.zeros(n_m * width)
    step = max(1, 2**24 // (n_m * n_m))
    for start in range(0, n_r, step):
        chunk = values[:, start:start + step].T
        lo = (chunk[..., None, :] > chunk[..., :, None]).sum(axis=-1) + 1
        ties = (chunk[..., None, :] == chunk[..., :, None]).sum(axis=-1)
        weight = 1.0 / ties
        total += np.bincount((offset + lo - 1).ravel(), weight.ravel(), minlength=total.size)
        total -= np.bincount((offset + lo - 1 + ties).ravel(), weight.ravel(),
                             minlength=total.size)
    return np.cumsum(total.reshape(n_m, width), axis=1)[:, :n_m] / n_r


def best_of(func, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    n_draws = 1_000 if args.quick else 10_000
    sizes = (6, 60) if args.quick else (6, 60, 600)
    rng = np.random.default_rng(0)
    print(f"rank_distribution, {n_draws} draws (best of 3)")
    print(f"{'models':>7} {'kernel (s)':>11} {'pairwise (s)':>13} {'ratio':>7} "
          f"{'public call (s)':>16}")
    timings = {}
    for n_m in sizes:
        values = rng.normal(size=(n_m, n_draws))
        da = xr.DataArray(values, dims=("model", "resample"),
                          coords={"model": [f"m{i}" for i in range(n_m)]})
        ours = best_of(lambda v=values: _rank_probabilities(v), 3)
        base = best_of(lambda v=values: pairwise_baseline(v), 1 if n_m > 100 else 3)
        public = best_of(lambda da=da: eq.rank_distribution(da), 3)
        np.testing.assert_allclose(eq.rank_distribution(da).probability.values,
                                   pairwise_baseline(values), atol=1e-12)
        timings[n_m] = (ours, base)
        print(f"{n_m:>7} {ours:>11.3f} {base:>13.3f} {base / ours:>6.1f}x {public:>16.3f}")
    lo, hi = sizes[0], sizes[-1]
    for name, column in (("evaluq kernel", 0), ("pairwise kernel", 1)):
        exponent = np.log(timings[hi][column] / timings[lo][column]) / np.log(hi / lo)
        print(f"scaling exponent {lo} -> {hi} models, {name}: {exponent:.2f}"
              + (" (target <= 1.05)" if column == 0 else ""))
    n_models = 60 if args.quick else 600
    cube = eq.simulate_cube(n_models=n_models, n_languages=61, n_seeds=3, rng=1)
    start = time.perf_counter()
    plan = eq.resample(cube, n_resamples=n_draws, replication="parametric",
                       languages="bootstrap", rng=2, lazy=True)
    agg = eq.aggregate(plan)
    eq.rank_distribution(agg)
    total = time.perf_counter() - start
    print(f"resample + aggregate + ranks, {n_models} models x 61 languages x {n_draws} "
          f"resamples: {total:.2f} s (target < 10 s at 600 x 61 x 10,000)")


if __name__ == "__main__":
    main()

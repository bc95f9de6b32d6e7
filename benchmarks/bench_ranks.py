"""Benchmark: rank distributions are linear in the number of models (issue 13).

Ranking every draw costs one sort (O(m log m) per draw), then linear counting; the former
kernel compared every pair of models, O(m^2). Run here on the same draws, alternately, for
6, 60 and 600 models x 10,000 draws: the kernel, its floor (numpy's argsort of the same draws
alone: no ranking without it), the public call, and the pairwise kernel (kept in this script
only, as the baseline). The script prints wall and CPU times, the scaling exponents from 6 to
600 models (target <= 1.05) step by step, and the whole leaderboard pipeline at 600 models
x 61 languages x 10,000 resamples (target < 10 s): parametric resampling with a language
bootstrap, the mean aggregate, ranks.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_ranks.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import os
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


def timings(funcs: dict[str, object], rounds: int) -> dict[str, tuple[float, float]]:
    """Best wall and best CPU time of each function over ``rounds``, run alternately (the
    machine is shared: CPU times are the steadier figures)."""
    wall: dict[str, list[float]] = {name: [] for name in funcs}
    cpu: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(rounds):
        for name, func in funcs.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            func()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: (min(wall[name]), min(cpu[name])) for name in funcs}


def exponent(t_lo: float, t_hi: float, lo: int, hi: int) -> float:
    return float(np.log(t_hi / t_lo) / np.log(hi / lo))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (best of)")
    args = parser.parse_args()
    n_draws = 1_000 if args.quick else 10_000
    sizes = (6, 60) if args.quick else (6, 60, 600)
    rounds = 2 if args.quick else args.rounds
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"rank_distribution, {n_draws} draws of standard normals (no separation: the "
          f"hardest case), best of {rounds} alternating rounds; seconds, wall / CPU")
    print(f"{'models':>7} {'kernel':>15} {'floor: argsort':>17} {'public call':>15} "
          f"{'pairwise kernel':>17}")
    found: dict[int, dict[str, tuple[float, float]]] = {}
    for n_m in sizes:
        values = rng.normal(size=(n_m, n_draws))
        rows = np.ascontiguousarray(values.T)
        da = xr.DataArray(values, dims=("model", "resample"),
                          coords={"model": [f"m{i}" for i in range(n_m)]})
        np.testing.assert_allclose(eq.rank_distribution(da).probability.values,
                                   pairwise_baseline(values), atol=1e-12)
        found[n_m] = timings({
            "kernel": lambda v=values: _rank_probabilities(v),
            "argsort": lambda r=rows: np.argsort(r, axis=-1),
            "public": lambda da=da: eq.rank_distribution(da),
        }, rounds)
        found[n_m]["pairwise"] = timings({"pairwise": lambda v=values: pairwise_baseline(v)},
                                         1 if n_m > 100 else 3)["pairwise"]
        row = found[n_m]
        print(f"{n_m:>7} " + " ".join(f"{row[k][0]:>7.4f}/{row[k][1]:<7.4f}"
                                       for k in ("kernel", "argsort", "public", "pairwise")))
    lo, hi = sizes[0], sizes[-1]
    for name, label in (("kernel", "evaluq kernel (target <= 1.05)"),
                        ("argsort", "floor: numpy argsort of the same draws"),
                        ("public", "public call rank_distribution"),
                        ("pairwise", "pairwise kernel (the former one)")):
        steps = ", ".join(f"{a} -> {b}: {exponent(found[a][name][1], found[b][name][1], a, b):.2f}"
                          for a, b in itertools.pairwise(sizes))
        print(f"scaling exponent (CPU) {lo} -> {hi} models, {label}: "
              f"{exponent(found[lo][name][1], found[hi][name][1], lo, hi):.2f}   ({steps}); "
              f"wall {exponent(found[lo][name][0], found[hi][name][0], lo, hi):.2f}")
    print(f"at {hi} models the kernel is {found[hi]['kernel'][1] / found[hi]['argsort'][1]:.2f}x "
          f"the bare argsort (CPU) and {found[hi]['pairwise'][1] / found[hi]['kernel'][1]:.1f}x "
          "faster than the pairwise kernel")
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

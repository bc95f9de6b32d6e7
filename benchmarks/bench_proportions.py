"""Benchmark: exact intervals and McNemar's test for every pair, 100 models x 10^5 items (issue 22).

Target: the exact (Clopper-Pearson) and Wilson intervals of every model plus McNemar's exact test
of every pair of models, from a (model, item) table of 0/1 correctness, in <= 1 s. evaluq
counts the discordant pairs of all pairs by popcounts of bit-packed rows (64 items a word);
the baseline, timed in the same run, is statsmodels: ``proportion_confint`` on the same counts and
``contingency_tables.mcnemar`` pair by pair on the 2x2 tables built with numpy (the loop a user
writes; on a subset of pairs, scaled to all pairs). Both answers are compared.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_proportions.py [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import xarray as xr
from _common import machine_line, timed

import evaluq as eq


def evaluq_all(table: xr.DataArray) -> tuple[xr.DataArray, xr.DataArray, xr.Dataset]:
    n_right = table.sum("item")
    n_items = table.sizes["item"]
    cp = eq.proportion_interval(n_right, n_items, method="clopper-pearson")
    wilson = eq.proportion_interval(n_right, n_items, method="wilson")
    return cp, wilson, eq.mcnemar_test(table, exact=True)


def statsmodels_pairs(values: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    from statsmodels.stats.contingency_tables import mcnemar

    out = np.empty(len(pairs))
    for k, (i, j) in enumerate(pairs):
        a, b = values[i], values[j]
        table = [[int(np.sum(a & b)), int(np.sum(a & ~b))],
                 [int(np.sum(~a & b)), int(np.sum(~a & ~b))]]
        out[k] = mcnemar(table, exact=True).pvalue
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 models x 10^4 items")
    args = parser.parse_args()
    n_models, n_items = (20, 10_000) if args.quick else (100, 100_000)
    rng = np.random.default_rng(0)
    acc = rng.uniform(0.3, 0.95, n_models)[:, None]
    values = rng.random((n_models, n_items)) < acc
    table = xr.DataArray(values.astype(np.int8), dims=("model", "item"),
                         coords={"model": [f"m{i}" for i in range(n_models)]})
    print(machine_line())
    print(f"{n_models} models x {n_items} items of 0/1 correctness; best of 3, seconds")
    seconds, (cp, _, res) = timed(lambda: evaluq_all(table))
    print(f"evaluq: Clopper-Pearson + Wilson intervals of every model and exact McNemar of all "
          f"{n_models * (n_models - 1)} ordered pairs: {seconds:.3f} s (target <= 1 s: "
          f"{'met' if seconds <= 1 else 'NOT met'})")
    from statsmodels.stats.proportion import proportion_confint

    counts = values.sum(axis=1)
    sm_ci_s, (lo, hi) = timed(lambda: proportion_confint(counts, n_items, method="beta"))
    pairs = [p for p in itertools.combinations(range(n_models), 2)][: 200 if args.quick else 300]
    start = time.perf_counter()
    sm_p = statsmodels_pairs(values, pairs)
    per_pair = (time.perf_counter() - start) / len(pairs)
    n_pairs = n_models * (n_models - 1) // 2
    print(f"statsmodels: proportion_confint {sm_ci_s:.4f} s; mcnemar pair by pair "
          f"{per_pair * 1e3:.2f} ms a pair, {per_pair * n_pairs:.1f} s for the {n_pairs} "
          f"unordered pairs (measured on {len(pairs)}); evaluq is "
          f"{per_pair * n_pairs / seconds:.0f}x faster")
    ours = np.array([res.pvalue.values[i, j] for i, j in pairs])
    diff_p = np.max(np.abs(ours - sm_p))
    diff_ci = max(np.max(np.abs(cp.sel(ci_bound="lower").values - lo)),
                  np.max(np.abs(cp.sel(ci_bound="upper").values - hi)))
    print(f"agreement with statsmodels: max |p| difference {diff_p:.1e}, max |CI| difference "
          f"{diff_ci:.1e}")


if __name__ == "__main__":
    main()

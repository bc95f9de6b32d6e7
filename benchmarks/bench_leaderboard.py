"""Benchmark: the leaderboard (aggregates, pairwise differences, ranks) against reuben.

Run from the repository root::

    bash benchmarks/anchors/setup_reuben.sh PATH/TO/reuben     # once: reuben's own venv
    PYTHONPATH=src python benchmarks/bench_leaderboard.py --reuben PATH/TO/reuben [--quick]

reuben (the multilingual paper's CLI) is not on the package index; ``--reuben`` names a local
checkout, run with the python of ``benchmarks/anchors/.venv-reuben`` (or
``--reuben-python``). Without them the benchmark says so and prints no figure for reuben.

Part 1 (issue 13's case): 6 models x 61 languages x 100,000 resamples, languages bootstrapped
and replication noise parametric; three aggregates (mean, geometric mean, median), their
pairwise differences and rank distributions. evaluq runs in this process; reuben's pipeline
(``anchors/run_reuben.py``: the calls its ``compare-models-aggregate`` command makes) runs in
its own process; the two alternate, and the ratios use the best time of each. reuben is fed
``SD (seed) = sigma_seed / sqrt(S)`` so that its replication SD equals evaluq's
``s_ml = sqrt(sigma_seed^2 / S + sigma_boot^2)``. Check: the SD of the mean aggregate of each
tool against its exact value given the cube (``v_m`` the population variance of the
language means over the L languages, ``w_m`` the mean of ``s_ml^2``):
``sqrt((v_m + w_m) / L)`` for evaluq (every drawn language gets its own noise) and
``sqrt((v_m + (2 - 1/L) w_m) / L)`` for reuben, which draws the noise once per (language,
resample), so a language drawn c times carries the same noise c times
(``E[c^2] = 2 - 1/L``): its replication share of the variance is about doubled.

Part 2: evaluq alone, cost against the number of models (6 to 600 models x 61 languages x
10,000 resamples, mean aggregate and ranks). Targets: exponent <= 1.05 and 600 models in
under 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import ANCHORS, anchor_python, machine_line, run_process, timed

import evaluq as eq

N_LANGUAGES, N_SEEDS, N_BOOT = 61, 5, 20
AGGREGATES = {"arithmetic_mean": "mean", "geometric_mean": "gmean", "median": "median"}


def make_cube(n_models: int, seed: int = 0):
    """Scores on a percent scale (positive, so the geometric mean is defined)."""
    return eq.simulate_cube(n_models=n_models, n_languages=N_LANGUAGES, n_seeds=N_SEEDS,
                            n_boot=N_BOOT, model_means=np.linspace(60, 66, n_models),
                            sigma_between=4.0, rng=seed)


def evaluq_board(cube, n_resamples: int):
    """One materialised board, three aggregates, their pairwise differences and ranks."""
    rs = eq.resample(cube, n_resamples=n_resamples, replication="parametric",
                     languages="bootstrap", rng=0)
    out = {}
    for name, how in AGGREGATES.items():
        agg = eq.aggregate(rs, how=how)
        out[name] = (agg, eq.pairwise_differences(agg), eq.rank_distribution(agg))
    return out


def write_table(cube, path: Path) -> None:
    """reuben's input: one JSON line per (model, language) with the mean and SDs."""
    vc = eq.variance_components(cube)
    mean = cube.score.mean("seed")
    with path.open("w") as f:
        for m in cube.model.values:
            for lang in cube.language.values:
                f.write(json.dumps({
                    "Model": str(m), "Task": str(lang),
                    "Mean": float(mean.sel(model=m, language=lang)),
                    "SD (seed)": float(vc.sigma_seed.sel(model=m, language=lang))
                    / np.sqrt(N_SEEDS),
                    "SD (boot)": float(vc.sigma_boot.sel(model=m, language=lang)),
                }) + "\n")


def part1(n_models: int, n_resamples: int, rounds: int, reuben: Path | None,
          reuben_python: Path | None, why_not: str) -> None:
    cube = make_cube(n_models)
    print(f"Part 1: {n_models} models x {N_LANGUAGES} languages x {n_resamples:,} resamples "
          "(languages bootstrapped, parametric noise), mean / geometric mean / median, "
          "pairwise differences, ranks")
    evaluq_board(cube, min(n_resamples, 1000))  # warm up
    t_eq: list[float] = []
    t_rs: list[float] = []
    reports: list[dict] = []
    whole: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "data.jsonl"
        write_table(cube, table)
        cmd = ([str(reuben_python), str(ANCHORS / "run_reuben.py"), str(table),
                str(n_resamples), "0"] if reuben_python is not None else None)
        env = dict(os.environ, PYTHONPATH=str(reuben)) if reuben is not None else None
        for _ in range(rounds):  # evaluq and reuben alternately
            t, board = timed(lambda: evaluq_board(cube, n_resamples), repeat=1)
            t_eq.append(t)
            t_rs.append(timed(lambda: eq.resample(
                cube, n_resamples=n_resamples, replication="parametric",
                languages="bootstrap", rng=0), repeat=1)[0])
            if cmd is not None:
                seconds, out = run_process(cmd, env)
                whole.append(seconds)
                reports.append(json.loads(out.strip().splitlines()[-1]))
    best_eq, best_rs = min(t_eq), min(t_rs)
    print(f"  evaluq in-process pipeline ... {best_eq:7.2f} s (best of {rounds}); of which "
          f"eq.resample {best_rs:5.2f} s")
    sd_eq = board["arithmetic_mean"][0].sd.values
    if not reports:
        print(f"  reuben: not run ({why_not})")
        v, w = exact_parts(cube)
        print(f"  evaluq SD of the mean aggregate: {np.round(sd_eq, 4).tolist()}, exact "
              f"{np.round(np.sqrt((v + w) / N_LANGUAGES), 4).tolist()}")
        print()
        return
    steps = {k: min(r["seconds"][k] for r in reports) for k in reports[0]["seconds"]}
    pipeline = sum(v for k, v in steps.items() if k != "read")
    print(f"  reuben pipeline (best of {rounds}) .. {pipeline:7.2f} s: "
          + ", ".join(f"{k} {v:.2f} s" for k, v in steps.items() if k != "read")
          + f"; whole process {min(whole):.2f} s (reading {steps['read']:.2f} s)")
    print(f"  ratio reuben / evaluq: pipeline {pipeline / best_eq:6.1f}x, resampling alone "
          f"{steps['resample'] / best_rs:6.1f}x")
    sd_ru = np.asarray(reports[-1]["aggregate_sd"]["arithmetic_mean"])
    order = [reports[-1]["models"].index(str(m)) for m in cube.model.values]
    sd_ru = sd_ru[order]
    v, w = exact_parts(cube)
    tol = 5 / np.sqrt(2 * n_resamples)  # 5 SE of an SD from B resamples (normal)
    for name, sd, c in (("evaluq", sd_eq, 1.0), ("reuben", sd_ru, 2 - 1 / N_LANGUAGES)):
        exact = np.sqrt((v + c * w) / N_LANGUAGES)
        rel = np.max(np.abs(sd / exact - 1))
        print(f"  SD of the mean aggregate, {name}: {np.round(sd, 4).tolist()}  exact "
              f"{np.round(exact, 4).tolist()}  max rel. diff {rel:.2%} "
              f"({'agrees' if rel < tol else 'DISAGREES'} within {tol:.1%})")
    print()


def exact_parts(cube) -> tuple[np.ndarray, np.ndarray]:
    """Per model: population variance of the language means, mean replication variance."""
    vc = eq.variance_components(cube)
    ybar = cube.score.mean("seed").transpose("model", "language").values
    s2 = (vc.sigma_seed**2 / N_SEEDS + vc.sigma_boot**2).transpose("model", "language").values
    return ybar.var(axis=1), s2.mean(axis=1)


def part2(sizes: list[int], n_resamples: int) -> None:
    print(f"Part 2: evaluq cost against models ({N_LANGUAGES} languages x {n_resamples:,} "
          "resamples, lazy resample -> mean aggregate -> rank distribution)")
    times = []
    for n in sizes:
        cube = make_cube(n, seed=1)
        pieces: dict[str, float] = {}

        def run(cube=cube, pieces=pieces):
            start = time.perf_counter()
            lazy = eq.resample(cube, n_resamples=n_resamples, replication="parametric",
                               languages="bootstrap", rng=0, lazy=True)
            agg = eq.aggregate(lazy, how="mean")
            middle = time.perf_counter()
            out = eq.rank_distribution(agg)
            pieces.update(draw=middle - start, ranks=time.perf_counter() - middle)
            return out

        if n == sizes[0]:
            run()  # warm up
        t, _ = timed(run, repeat=2 if n < 600 else 1)  # keep the run to a few minutes
        times.append(t)
        print(f"  {n:5d} models: {t:7.3f} s   (last run: resample + aggregate "
              f"{pieces['draw']:.3f} s, ranks {pieces['ranks']:.3f} s)")
    floor = normal_floor(sizes[-1] * N_LANGUAGES * n_resamples)
    print(f"  floor: rng.standard_normal for {sizes[-1] * N_LANGUAGES * n_resamples:,} values "
          f"(one thread, in blocks of {RNG_BLOCK_VALUES:,}): {floor:.2f} s")
    slope = np.polyfit(np.log(sizes), np.log(times), 1)[0]
    span = f"{sizes[0]} to {sizes[-1]} models"
    print(f"  exponent (log-log fit, {span}): {slope:.2f}   target <= 1.05: "
          f"{'met' if slope <= 1.05 else 'NOT met'}")
    if sizes[-1] == 600:
        print(f"  600 models: {times[-1]:.2f} s   target < 10 s: "
              f"{'met' if times[-1] < 10 else 'NOT met'}")


RNG_BLOCK_VALUES = 600 * N_LANGUAGES * 1000
"""Values per call of the floor: one block of 1000 resamples of 600 models."""


def normal_floor(n_values: int) -> float:
    """Wall time of drawing ``n_values`` standard normals with numpy (the draw's floor)."""
    gen = np.random.default_rng(0)
    out = np.empty(min(n_values, RNG_BLOCK_VALUES))
    start = time.perf_counter()
    for done in range(0, n_values, out.size):
        gen.standard_normal(out=out[:min(out.size, n_values - done)])
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    parser.add_argument("--reuben", default=None, help="a local checkout of reuben")
    parser.add_argument("--reuben-python", default=None,
                        help="python of reuben's venv (default: "
                             "benchmarks/anchors/.venv-reuben/bin/python)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating evaluq / reuben rounds (default 2)")
    args = parser.parse_args(argv)
    reuben = Path(args.reuben) if args.reuben else None
    py, why_not = anchor_python(".venv-reuben", args.reuben_python,
                                "benchmarks/anchors/setup_reuben.sh PATH/TO/reuben")
    if reuben is None:
        py, why_not = None, "no --reuben PATH/TO/checkout given (reuben is not on PyPI)"
    elif py is None:
        pass
    elif not (reuben / "reuben" / "analysis_pipeline.py").exists():
        py, why_not = None, f"--reuben {reuben} is not a reuben checkout"
    print(machine_line() + ("   (--quick: smoke sizes; the targets are for the default sizes)"
                            if args.quick else ""))
    print()
    if args.quick:
        part1(6, 2_000, 1, reuben, py, why_not)
        part2([6, 24], 500)
    else:
        part1(6, 100_000, args.rounds, reuben, py, why_not)
        part2([6, 60, 600], 10_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())

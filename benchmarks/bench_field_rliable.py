"""Speed of rliable's analyses and of multi-ASO: evaluq against rliable and deepsig (issue 19).

Usage::

    bash benchmarks/anchors/setup_rliable.sh     # once: rliable in /work/peers/rliable
    bash benchmarks/anchors/setup_deepsig.sh     # once: deepsig in /work/peers/deepsig
    python benchmarks/bench_field_rliable.py [--quick] [--skip-anchor]

At 10 models x 26 tasks x 10 runs (the same data for everyone), 50 000 bootstrap resamples:

* ``eq.interval_estimates`` (median, IQM, mean, optimality gap, every model) against
  rliable's ``get_interval_estimates`` with the four aggregates;
* ``eq.probability_of_improvement`` (every pair) against rliable's
  ``get_interval_estimates(..., metrics.probability_of_improvement)`` over the 45 unordered
  pairs (the other 45 are one minus these);
* ``eq.multi_aso`` (1000 bootstrap iterations, deepsig's default) against deepsig's ASO on
  the 45 pairs (deepsig's ``multi_aso`` runs one ``aso`` bootstrap per pair).

The peers run in their own envs as subprocesses, alternately with evaluq. A full peer run at
this size takes hours (rliable's PoI: one Mann-Whitney test per task, pair and resample), so
each peer is timed at a smaller count (resamples, pairs) and its time **extrapolated
linearly** to the full count (its work is a Python loop over resamples and pairs: linear);
the extrapolation is printed. The peers' import and data loading are excluded (their
in-process time). Numbers are compared: point estimates exactly, intervals within the Monte
Carlo error of the peer's smaller run.
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
from _common import machine_line, run_process

import evaluq as eq

TARGET = 20.0
RLIABLE = Path(os.environ.get("EVALUQ_RLIABLE_PYTHON", "/work/peers/rliable/bin/python"))
DEEPSIG = Path(os.environ.get("EVALUQ_DEEPSIG_PYTHON", "/work/peers/deepsig/bin/python"))
ANCHORS = Path(__file__).resolve().parent / "anchors"


def scores(n_models: int, n_tasks: int, n_runs: int) -> np.ndarray:
    rng = np.random.default_rng(19)
    skill = np.linspace(0.0, 0.3, n_models)[:, None, None]
    task = rng.normal(0.8, 0.3, size=(1, n_tasks, 1))
    return skill + task + rng.normal(0, 0.15, size=(n_models, n_tasks, n_runs))


def best(times: list[float]) -> float:
    return min(times) if times else float("nan")


def peer(python: Path, script: str, *args: object) -> dict | None:
    if not python.exists():
        return None
    _, out = run_process([str(python), str(ANCHORS / script), *map(str, args)])
    return json.loads(out.strip().splitlines()[-1])


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run")
    ap.add_argument("--skip-anchor", action="store_true", help="evaluq only")
    args = ap.parse_args(argv)
    shape = (3, 8, 5) if args.quick else (10, 26, 10)
    n_res = 2000 if args.quick else 50000
    peer_reps = {"interval": 100 if args.quick else 2000, "poi": 20 if args.quick else 200}
    peer_pairs = {"poi": 1 if args.quick else 2, "aso": 1 if args.quick else 2}
    aso_iter = 1000
    peer_aso_iter = 50 if args.quick else 200
    rounds = 1 if args.quick else 2
    x = scores(*shape)
    k = shape[0]
    n_pairs = k * (k - 1) // 2
    cube = eq.from_arrays(x, models=[f"m{i}" for i in range(k)], outlier_threshold=None)
    eq.interval_estimates(cube, n_resamples=10, rng=0)       # warm-up: imports
    eq.probability_of_improvement(cube, n_resamples=10, rng=0)
    eq.multi_aso(cube, n_resamples=10, rng=0)
    print(machine_line())
    print(f"data: {k} models x {shape[1]} tasks x {shape[2]} runs; {n_res} resamples; "
          f"multi-ASO {aso_iter} iterations; {rounds} round(s), evaluq and peers alternately")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.npy"
        np.save(path, x)
        path_runs = Path(tmp) / "runs.npy"
        np.save(path_runs, x.mean(axis=1))        # multi-ASO: seeds averaged over tasks
        t: dict = {key: [] for key in ("ie", "poi", "aso", "rl_ie", "rl_poi", "ds_aso")}
        out: dict = {"runs": x.mean(axis=1)}
        for _ in range(rounds):
            sec, out["ie"] = timed(lambda: eq.interval_estimates(cube, n_resamples=n_res, rng=0))
            t["ie"].append(sec)
            sec, out["poi"] = timed(lambda: eq.probability_of_improvement(
                cube, n_resamples=n_res, rng=0))
            t["poi"].append(sec)
            sec, out["aso"] = timed(lambda: eq.multi_aso(cube, n_resamples=aso_iter,
                                                         rng=0))
            t["aso"].append(sec)
            if args.skip_anchor:
                continue
            for key, res in (("rl_ie", peer(RLIABLE, "run_rliable.py", "time", path,
                                            peer_reps["interval"], "interval")),
                             ("rl_poi", peer(RLIABLE, "run_rliable.py", "time", path,
                                             peer_reps["poi"], "poi", peer_pairs["poi"])),
                             ("ds_aso", peer(DEEPSIG, "run_deepsig.py", "time", path_runs,
                                             peer_aso_iter, peer_pairs["aso"]))):
                if res is not None:
                    t[key].append(res["seconds"])
                    out[key] = res
    report(t, out, n_res, peer_reps, peer_pairs, aso_iter, peer_aso_iter, n_pairs, k)
    return 0


def report(t: dict, out: dict, n_res: int, peer_reps: dict, peer_pairs: dict, aso_iter: int,
           peer_aso_iter: int, n_pairs: int, k: int) -> None:
    print(f"evaluq interval_estimates        {best(t['ie']):8.2f} s")
    print(f"evaluq probability_of_improvement {best(t['poi']):7.2f} s   ({k * (k - 1)} "
          f"ordered pairs)")
    print(f"evaluq multi_aso                 {best(t['aso']):8.2f} s   ({n_pairs} pairs)")
    if "rl_ie" in out:
        full = best(t["rl_ie"]) * n_res / peer_reps["interval"]
        print(f"rliable {out['rl_ie']['rliable']} get_interval_estimates: "
              f"{best(t['rl_ie']):.2f} s at {peer_reps['interval']} resamples -> "
              f"{full:.0f} s at {n_res} (linear)   ratio {full / best(t['ie']):.0f}x   "
              f"target >= {TARGET:.0f}x")
        compare_intervals(out["ie"], out["rl_ie"]["result"], peer_reps["interval"], n_res)
    if "rl_poi" in out:
        full = best(t["rl_poi"]) * (n_res / peer_reps["poi"]) * (n_pairs / peer_pairs["poi"])
        print(f"rliable probability_of_improvement: {best(t['rl_poi']):.2f} s at "
              f"{peer_reps['poi']} resamples x {peer_pairs['poi']} pair(s) -> {full:.0f} s at "
              f"{n_res} x {n_pairs} pairs (linear)   ratio {full / best(t['poi']):.0f}x   "
              f"target >= {TARGET:.0f}x")
        compare_poi(out["poi"], out["rl_poi"]["result"], peer_reps["poi"], n_res)
    if "ds_aso" in out:
        full = best(t["ds_aso"]) * (aso_iter / peer_aso_iter) * (n_pairs / peer_pairs["aso"])
        print(f"deepsig {out['ds_aso']['deepsig']} aso: {best(t['ds_aso']):.2f} s at "
              f"{peer_aso_iter} iterations x {peer_pairs['aso']} pair(s) -> {full:.0f} s at "
              f"{aso_iter} x {n_pairs} pairs (linear)   ratio {full / best(t['aso']):.0f}x   "
              f"target >= {TARGET:.0f}x")
        for key, eps in out["ds_aso"]["eps_min"].items():
            i, j = map(int, key.split(","))
            runs = out["runs"]
            mine = eq.aso(runs[i], runs[j], n_resamples=aso_iter, rng=0)
            # eps_min = eps + z sigma / c; an SD from B draws of kurtosis kappa has SE
            # sigma sqrt((kappa - 1) / (4 B)) (bootstrap ratios near 0 are very skewed)
            boot = mine.distribution.values
            kappa = float(np.mean((boot - boot.mean()) ** 4) / max(boot.var() ** 2, 1e-300))
            mc_sd = (1.645 * mine.sigma_hat / np.sqrt(len(runs[i]) / 2)
                     * np.sqrt(max(kappa - 1, 0) / (4 * peer_aso_iter)))
            print(f"    eps_min m{i} over m{j}: evaluq aso {mine.eps_min:.4f} ({aso_iter} "
                  f"iterations), deepsig aso {eps:.4f} ({peer_aso_iter} iterations; its "
                  f"Monte Carlo SD about {mc_sd:.4f}); evaluq multi_aso (Bonferroni over "
                  f"{n_pairs} pairs) {float(out['aso'].values[i, j]):.4f}")


def compare_intervals(ours, theirs: dict, reps: int, n_res: int) -> None:
    est = ours.estimate.values
    ci = ours.ci.values
    point = max(abs(est[int(key)] - np.asarray(v[0])).max() for key, v in theirs.items())
    sigma = (ci[..., 1] - ci[..., 0]) / 3.92
    tol = 4 * 2.67 * sigma * np.sqrt(1 / reps + 1 / n_res)
    worst = max((np.abs(ci[int(key)] - np.asarray(v[1])) / tol[int(key)][:, None]).max()
                for key, v in theirs.items())
    print(f"    same numbers: point estimates max |diff| {point:.1e}; interval ends within "
          f"{worst:.2f} x their Monte Carlo tolerance (<= 1 expected)")


def compare_poi(ours, theirs: dict, reps: int, n_res: int) -> None:
    for key, (est, ci) in theirs.items():
        i, j = map(int, key.split(","))
        mine = ours.ci.values[i, j]
        print(f"    P(m{i} > m{j}): evaluq {ours.estimate.values[i, j]:.6f} "
              f"[{mine[0]:.3f}, {mine[1]:.3f}]   rliable {est:.6f} [{ci[0]:.3f}, {ci[1]:.3f}] "
              f"({reps} resamples)")


if __name__ == "__main__":
    sys.exit(main())

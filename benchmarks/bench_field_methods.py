"""Benchmark: baycomp's Bayesian signed-rank test and Demšar's procedures (issue 19).

baycomp's ``SignedRankTest`` computes each of its posterior samples in a Python loop (one
outer product of the Dirichlet weights per sample); evaluq's ``bayesian_signed_rank`` takes
blocks of 10,000 samples as two matrix products. Timed here on the same shape (26 tasks,
50,000 samples; every pair of 10 models), baycomp in its own env (``setup_baycomp.sh``) as a
subprocess that times its own calls, run alternately with evaluq's. Also times evaluq's
Friedman test and critical difference (Nemenyi, Wilcoxon-Holm) at 10 models x 26 tasks.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_field_methods.py [--quick]
The baycomp env is ``benchmarks/anchors/.venv-baycomp`` or ``$EVALUQ_BAYCOMP_PYTHON``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

import numpy as np

import evaluq as eq

ANCHORS = Path(__file__).resolve().parent / "anchors"

BAYCOMP_SCRIPT = """
import json, sys, time
import numpy as np
from baycomp import SignedRankTest
scores = np.asarray(json.loads(sys.stdin.read()))
n_samples = int(sys.argv[1])
k = scores.shape[0]
start = time.perf_counter()
probs = [SignedRankTest.probs(scores[i], scores[j], 0.01, nsamples=n_samples, random_state=0)
         for i in range(k) for j in range(i + 1, k)]
print(json.dumps({"seconds": time.perf_counter() - start, "probs": np.asarray(probs).tolist()}))
"""


def _baycomp_python() -> Path | None:
    py = Path(os.environ.get("EVALUQ_BAYCOMP_PYTHON", ANCHORS / ".venv-baycomp/bin/python"))
    return py if py.exists() else None


def _baycomp(py: Path, scores: np.ndarray, n_samples: int) -> dict:
    done = subprocess.run([str(py), "-c", BAYCOMP_SCRIPT, str(n_samples)],
                          input=json.dumps(scores.tolist()), capture_output=True, text=True,
                          check=True, timeout=3600)
    return json.loads(done.stdout)


def _evaluq_pairs(cube, n_samples: int) -> tuple[float, np.ndarray]:
    models = cube["model"].values.tolist()
    start = time.perf_counter()
    probs = [[r.p_left, r.p_rope, r.p_right] for r in (
        eq.bayesian_signed_rank(cube, a, b, rope=0.01, n_samples=n_samples, rng=0)
        for i, a in enumerate(models) for b in models[i + 1:])]
    return time.perf_counter() - start, np.asarray(probs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="3 models, 5,000 samples")
    parser.add_argument("--skip-anchor", action="store_true")
    args = parser.parse_args()
    n_models, n_samples = (3, 5_000) if args.quick else (10, 50_000)
    gen = np.random.default_rng(0)
    scores = gen.normal(0.7, 0.05, (n_models, 26)) + gen.normal(0, 0.01, (n_models, 1))
    cube = eq.from_arrays(scores[:, :, None], models=[f"m{i}" for i in range(n_models)])
    print(f"machine: {os.cpu_count()} cores; {n_models} models x 26 tasks, "
          f"{n_samples} posterior samples, {n_models * (n_models - 1) // 2} pairs")
    start = time.perf_counter()
    eq.friedman_test(cube)
    eq.critical_difference(cube)
    eq.critical_difference(cube, test="wilcoxon-holm")
    print(f"evaluq Friedman + Nemenyi + Wilcoxon-Holm: {time.perf_counter() - start:.3f} s")
    py = None if args.skip_anchor else _baycomp_python()
    rounds = 1 if args.quick else 2
    for _ in range(rounds):              # alternately
        seconds, ours = _evaluq_pairs(cube, n_samples)
        print(f"evaluq bayesian_signed_rank, all pairs: {seconds:.2f} s")
        if py is None:
            continue
        theirs = _baycomp(py, scores, n_samples)
        print(f"baycomp SignedRankTest, all pairs: {theirs['seconds']:.2f} s "
              f"(evaluq {theirs['seconds'] / seconds:.1f}x faster)")
        gap = np.max(np.abs(ours - np.asarray(theirs["probs"])))
        print(f"largest |p difference| (Monte Carlo, independent streams): {gap:.4f}")
    if py is None:
        print("baycomp: not installed (bash benchmarks/anchors/setup_baycomp.sh)")


if __name__ == "__main__":
    main()

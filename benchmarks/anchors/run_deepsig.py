"""deep-significance's (deepsig's) ASO numbers on fixed data, for evaluq's tests and benchmark.

Runs in deepsig's own virtual env (``benchmarks/anchors/setup_deepsig.sh``), never in evaluq's.

Usage::

    python run_deepsig.py reference OUT.json
        Violation ratios, eps_min of aso and multi_aso on the fixed score sets below (written
        into the JSON with the numbers); the versions used. ``multi_ragged`` gives the models
        different numbers of scores (runs), which deepsig's multi_aso takes as a dict of
        lists; its violation ratios of every ordered pair are recorded too.
    python run_deepsig.py time SCORES.npy ITERATIONS N_PAIRS
        Times deepsig's ASO on N_PAIRS pairs of neighbouring models of SCORES (model, run),
        model i + 1 against model i, with ITERATIONS bootstrap iterations each (multi_aso's
        inner work per pair) and prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from importlib.metadata import version

import numpy as np

ITERATIONS = 5000
DT = 0.005


def datasets() -> dict[str, list[list[float]]]:
    """Fixed score sets (one list per model; lengths may differ)."""
    rng = np.random.default_rng(20261124)
    return {
        "shifted": [rng.normal(1.0, 0.3, 10).tolist(), rng.normal(0.7, 0.3, 10).tolist()],
        "close": [rng.normal(0.5, 0.2, 12).tolist(), rng.normal(0.45, 0.3, 8).tolist()],
        "ties": [[1.0, 2.0, 2.0, 3.0, 3.0], [2.0, 2.0, 2.0, 1.0, 4.0, 3.0]],
        "multi": [rng.normal(m, 0.25, 8).tolist() for m in (0.9, 0.7, 0.65, 0.3)],
        "multi_ragged": [np.random.default_rng(20261125).normal(m, 0.25, n).tolist()
                         for m, n in ((0.9, 10), (0.7, 5), (0.65, 3), (0.3, 7))],
    }


def reference(path: str) -> int:
    from deepsig import aso, multi_aso
    from deepsig.aso import compute_violation_ratio

    data = datasets()
    out: dict = {"script": "benchmarks/anchors/run_deepsig.py",
                 "versions": {p: version(p) for p in ("deepsig", "numpy", "scipy")},
                 "num_bootstrap_iterations": ITERATIONS, "dt": DT, "data": data,
                 "results": {}}
    for name in ("shifted", "close", "ties"):
        a, b = map(np.asarray, data[name])
        res = {"violation_ratio_ab": float(compute_violation_ratio(a, b, dt=DT)),
               "violation_ratio_ba": float(compute_violation_ratio(b, a, dt=DT))}
        for level in (0.95, 0.99):
            res[f"eps_min_{level}"] = float(aso(a, b, confidence_level=level,
                                                num_bootstrap_iterations=ITERATIONS,
                                                show_progress=False, seed=7))
        res["eps_min_0.95_3comparisons"] = float(aso(
            a, b, num_comparisons=3, num_bootstrap_iterations=ITERATIONS,
            show_progress=False, seed=7))
        out["results"][name] = res
    scores = {f"m{i}": s for i, s in enumerate(data["multi"])}
    for bonf in (True, False):
        eps = multi_aso(scores, use_bonferroni=bonf, num_bootstrap_iterations=ITERATIONS,
                        show_progress=False, seed=7)
        out["results"][f"multi_bonferroni_{bonf}"] = np.asarray(eps).tolist()
    ragged = {f"m{i}": s for i, s in enumerate(data["multi_ragged"])}
    for bonf in (True, False):
        eps = multi_aso(ragged, use_bonferroni=bonf, num_bootstrap_iterations=ITERATIONS,
                        show_progress=False, seed=7)
        out["results"][f"multi_ragged_bonferroni_{bonf}"] = np.asarray(eps).tolist()
    out["results"]["multi_ragged_violation_ratio"] = [
        [float(compute_violation_ratio(np.asarray(a), np.asarray(b), dt=DT))
         for b in ragged.values()] for a in ragged.values()]
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


def timing(scores: str, iterations: str, n_pairs: str) -> int:
    from deepsig import aso

    x = np.load(scores)
    k = x.shape[0]
    pairs = [(i + 1, i) for i in range(k - 1)][:int(n_pairs)]   # neighbours, better first
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eps = {f"{i},{j}": float(aso(x[i], x[j], num_bootstrap_iterations=int(iterations),
                                     show_progress=False, seed=0)) for i, j in pairs}
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "iterations": int(iterations),
                      "n_pairs": len(pairs), "eps_min": eps, "deepsig": version("deepsig")}))
    return 0


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    sys.exit(reference(*args) if mode == "reference" else timing(*args))

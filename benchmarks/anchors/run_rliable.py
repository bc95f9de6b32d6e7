"""rliable's numbers on fixed data, for evaluq's tests and benchmark (issue 19).

Runs in rliable's own virtual env (``benchmarks/anchors/setup_rliable.sh``), never in evaluq's.

Usage::

    python run_rliable.py reference OUT.json
        Point estimates and bootstrap intervals on the fixed data sets below (written into the
        JSON with the numbers), plus the cases of rliable's own tests; the versions used. The
        ragged data sets (``ragged_data``, ``ragged_results``) give the models different
        numbers of runs, as rliable's score dicts allow (Atari-100k); for them the SD of
        rliable's own bootstrap distribution of each aggregate is recorded too.
    python run_rliable.py time SCORES.npy REPS WHAT [N_PAIRS]
        Times rliable on scores (model, task, run) and prints one JSON line: WHAT is
        ``interval`` (get_interval_estimates of the four aggregates, every model) or ``poi``
        (probability of improvement with intervals, the first N_PAIRS ordered pairs).

rliable draws its resamples from numpy's global random state (its ``random_state`` argument
is ignored by ``update_indices``), so the script seeds ``np.random`` before each call.
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version

import numpy as np

GAMMAS = (1.0, 0.9)
REPS_INTERVAL = 20000
REPS_POI = 10000
REPS_PROFILE = 20000
THRESHOLDS = [0.5, 0.7, 0.8, 0.9, 1.0]


def datasets() -> dict[str, np.ndarray]:
    """Fixed scores (model, task, run): continuous near gamma, and integers with ties."""
    rng = np.random.default_rng(20261124)
    normal = rng.normal(0.8, 0.15, size=(3, 6, 5)) + np.array([0.0, 0.05, -0.05])[:, None, None]
    ties = rng.integers(0, 4, size=(3, 4, 4)).astype(float) / 3.0
    ties[2, 0] = ties[1, 0]      # a task where two models' runs are equal
    return {"normal": normal, "ties": ties}


def ragged_datasets() -> dict[str, list[np.ndarray]]:
    """Fixed scores of models with different numbers of runs: one (task, run) array each.

    ``ragged``: 10, 5 and 3 runs over 4 tasks (continuous); ``ragged_ties``: 2 runs against
    7 over 3 tasks, integers / 3 (ties within and across the two models).
    """
    rng = np.random.default_rng(20261125)
    three = [rng.normal(0.8 + shift, 0.15, size=(4, n))
             for shift, n in ((0.0, 10), (0.05, 5), (-0.05, 3))]
    pair = [rng.integers(0, 4, size=(3, n)).astype(float) / 3.0 for n in (2, 7)]
    return {"ragged": three, "ragged_ties": pair}


def aggregates(gamma: float):
    from rliable import metrics

    def func(scores: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_median(scores), metrics.aggregate_iqm(scores),
                         metrics.aggregate_mean(scores),
                         metrics.aggregate_optimality_gap(scores, gamma)])
    return func


def interval_block(x: np.ndarray | list[np.ndarray], gamma: float, reps: int) -> dict:
    """``x`` (model, task, run), or one (task, run) array per model (ragged runs)."""
    from rliable import library as rly

    score_dict = {str(k): np.asarray(x[k]).T for k in range(len(x))}   # runs x tasks
    np.random.seed(1)  # noqa: NPY002
    point, ci = rly.get_interval_estimates(score_dict, aggregates(gamma), reps=reps)
    return {"estimate": [list(map(float, point[str(k)])) for k in range(len(x))],
            "ci": [np.asarray(ci[str(k)]).T.tolist() for k in range(len(x))]}


def boot_sd_block(x: list[np.ndarray], gamma: float, reps: int) -> list[list[float]]:
    """SD of each model's aggregates over rliable's own stratified-bootstrap resamples
    (``StratifiedBootstrap.apply``, the resamples behind its intervals)."""
    from rliable import library as rly

    np.random.seed(4)  # noqa: NPY002
    return [np.std(rly.StratifiedBootstrap(np.asarray(m).T).apply(aggregates(gamma), reps),
                   axis=0).tolist() for m in x]


def poi_block(x: np.ndarray | list[np.ndarray], reps: int) -> dict:
    from rliable import library as rly
    from rliable import metrics

    k = len(x)
    pairs = {f"{i},{j}": [np.asarray(x[i]).T, np.asarray(x[j]).T]
             for i in range(k) for j in range(k) if i != j}
    np.random.seed(2)  # noqa: NPY002
    point, ci = rly.get_interval_estimates(pairs, metrics.probability_of_improvement, reps=reps)
    return {"estimate": {key: float(v) for key, v in point.items()},
            "ci": {key: np.asarray(v).ravel().tolist() for key, v in ci.items()}}


def profile_block(x: np.ndarray | list[np.ndarray], reps: int) -> dict:
    from rliable import library as rly

    out = {}
    for kind, use_runs in (("run", True), ("average", False)):
        np.random.seed(3)  # noqa: NPY002
        prof, ci = rly.create_performance_profile(
            {str(k): np.asarray(x[k]).T for k in range(len(x))}, THRESHOLDS,
            use_score_distribution=use_runs, reps=reps)
        out[kind] = {"estimate": [prof[str(k)].tolist() for k in range(len(x))],
                     "ci": [np.asarray(ci[str(k)]).T.tolist() for k in range(len(x))]}
    return out


def own_tests() -> dict:
    """The cases of rliable's tests/rliable/metrics_test.py and library_test.py."""
    from rliable import metrics

    x = np.array([[1, 2], [2, 2], [1, 1], [2, 1]])
    y = np.array([[1, 1], [2, 2], [3, 3]])
    lx = np.arange(5 * 16).reshape(5, 16)
    out = {"x": x.tolist(), "y": y.tolist(), "library_x": lx.tolist()}
    for name, s in (("x", x), ("y", y), ("library_x", lx), ("library_y", np.flip(lx, 0))):
        out[f"{name}_aggregates"] = [float(metrics.aggregate_median(s)),
                                     float(metrics.aggregate_iqm(s)),
                                     float(metrics.aggregate_mean(s)),
                                     float(metrics.aggregate_optimality_gap(s))]
    out["poi_x_y"] = float(metrics.probability_of_improvement(x, y))
    out["poi_library_x_y"] = float(metrics.probability_of_improvement(lx, np.flip(lx, 0)))
    return out


def reference(path: str) -> int:
    data = datasets()
    out: dict = {"script": "benchmarks/anchors/run_rliable.py",
                 "versions": {p: version(p) for p in ("rliable", "arch", "numpy", "scipy")},
                 "reps": {"interval": REPS_INTERVAL, "poi": REPS_POI,
                          "profile": REPS_PROFILE},
                 "thresholds": THRESHOLDS, "gammas": list(GAMMAS),
                 "aggregates": ["median", "iqm", "mean", "optimality_gap"],
                 "data": {name: x.tolist() for name, x in data.items()}, "results": {}}
    for name, x in data.items():
        out["results"][name] = {
            "interval": {str(g): interval_block(x, g, REPS_INTERVAL) for g in GAMMAS},
            "poi": poi_block(x, REPS_POI),
            "profile": profile_block(x, REPS_PROFILE)}
    ragged = ragged_datasets()
    out["ragged_data"] = {name: [m.tolist() for m in x] for name, x in ragged.items()}
    out["ragged_results"] = {}
    for name, x in ragged.items():
        out["ragged_results"][name] = {
            "interval": {str(g): interval_block(x, g, REPS_INTERVAL) for g in GAMMAS},
            "boot_sd": {str(g): boot_sd_block(x, g, REPS_INTERVAL) for g in GAMMAS},
            "poi": poi_block(x, REPS_POI),
            "profile": profile_block(x, REPS_PROFILE)}
    out["own_tests"] = own_tests()
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


def timing(scores: str, reps: str, what: str, n_pairs: str = "0") -> int:
    from rliable import library as rly
    from rliable import metrics

    x = np.load(scores)
    np.random.seed(0)  # noqa: NPY002
    start = time.perf_counter()
    if what == "interval":
        point, ci = rly.get_interval_estimates({str(k): x[k].T for k in range(x.shape[0])},
                                               aggregates(1.0), reps=int(reps))
        result = {k: [list(map(float, point[k])), np.asarray(ci[k]).T.tolist()] for k in point}
    else:
        k = x.shape[0]
        pairs = [(i, j) for i in range(k) for j in range(k) if i != j][:int(n_pairs)]
        point, ci = rly.get_interval_estimates(
            {f"{i},{j}": [x[i].T, x[j].T] for i, j in pairs},
            metrics.probability_of_improvement, reps=int(reps))
        result = {k: [float(point[k]), np.asarray(ci[k]).ravel().tolist()] for k in point}
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "reps": int(reps), "what": what,
                      "result": result, "rliable": version("rliable")}))
    return 0


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    sys.exit(reference(*args) if mode == "reference" else timing(*args))

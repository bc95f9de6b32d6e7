"""Cost of the learned item distribution (issue 36): warm ``fit_items`` at 10 models x 1,000
items x 3 epochs, one task (normal and bimodal item populations) and four tasks,
``item_distribution="normal"`` against ``"learned"``, timed in the same run (each compiled
first, then a warm fit timed; the ratio is what counts on a shared machine).
Also the leapfrog steps per draw of each.

Run: ``.venv/bin/python benchmarks/bench_item_density.py``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import evaluq as eq
from evaluq.item_model._simulate import BIMODAL, simulate_items

COLS = {"model": "model", "item": "item", "score": "score", "epoch": "epoch"}


def fit(table, tasks: bool, dist: str, seed: int) -> tuple[float, float]:
    extra = {"task": "task"} if tasks else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        f = eq.fit_items(table, **COLS, **extra, family="binomial", item_distribution=dist,
                         draws=1000, tune=1000, chains=2, rng=seed)
        wall = time.perf_counter() - start
    steps = float(np.asarray(f.idata["sample_stats"]["n_steps"]).mean())
    return wall, steps


def main() -> None:
    for population, n_tasks in (("normal", 1), ("bimodal", 1), ("normal", 4)):
        table = simulate_items(n_models=10, n_items=1000, n_epochs=3, n_tasks=n_tasks, rng=0,
                               item_mixture=BIMODAL if population == "bimodal" else None)
        res = {}
        for dist in ("normal", "learned"):
            fit(table, n_tasks > 1, dist, 1)                         # compile (and warm)
            res[dist] = fit(table, n_tasks > 1, dist, 2)
        ratio = res["learned"][0] / res["normal"][0]
        print(f"{population} items, {n_tasks} task(s): warm fit normal {res['normal'][0]:.1f} s "
              f"({res['normal'][1]:.1f} steps/draw), learned {res['learned'][0]:.1f} s "
              f"({res['learned'][1]:.1f} steps/draw): ratio {ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()

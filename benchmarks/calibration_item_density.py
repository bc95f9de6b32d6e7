"""Calibration of the learned item distribution (issue 36): 90% coverage at 5,000 items x 2
epochs x 5 models, bimodal and normal item populations, ``item_distribution="learned"`` (and
``"normal"`` for the bimodal population as the baseline).

Prints per (population, distribution) the coverage of the new-items per-model, benchmark
per-model and new-items pairwise 90% intervals with their cluster SE (clusters: data sets),
and the mean bias of the new-items score. One compile per shape (``fit_items`` reuses the
compiled model: ``pm.Data``). Run: ``.venv/bin/python benchmarks/calibration_item_density.py
--n 100`` (about 10 s per learned fit on a quiet 2-core machine).
"""

from __future__ import annotations

import argparse
import itertools
import warnings

import numpy as np

import evaluq as eq
from evaluq.item_model._simulate import BIMODAL, simulate_items

LEVEL = 0.9
COLS = {"model": "model", "item": "item", "score": "score", "epoch": "epoch"}


def one(seed: int, population: str, dist: str, n_items: int) -> dict[str, np.ndarray]:
    t = simulate_items(n_models=5, n_items=n_items, n_epochs=2, rng=seed,
                       item_mixture=BIMODAL if population == "bimodal" else None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = eq.fit_items(t, **COLS, family="binomial", item_distribution=dist,
                           draws=500, tune=500, chains=2, rng=seed)
    truth = t.attrs["truth"]
    out = {}
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    for scope in ("new_items", "benchmark"):
        s = fit.scores(scope).stack(sample=("chain", "draw")).values        # (model, S)
        lo, hi = np.quantile(s, q, axis=1)
        out[scope] = (lo <= truth[scope]) & (truth[scope] <= hi)
        if scope == "new_items":
            out["bias"] = s.mean(axis=1) - truth[scope]
            pairs = list(itertools.combinations(range(s.shape[0]), 2))
            d = np.stack([s[a] - s[b] for a, b in pairs])
            td = np.array([truth[scope][a] - truth[scope][b] for a, b in pairs])
            lo, hi = np.quantile(d, q, axis=1)
            out["pairwise"] = (lo <= td) & (td <= hi)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100, help="data sets per population")
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    for population, dist in (("bimodal", "learned"), ("normal", "learned"),
                             ("bimodal", "normal")):
        rows = [one(1000 + i, population, dist, args.items) for i in range(args.n)]
        line = [f"{population:8s} {dist:8s} n={args.n}"]
        for key in ("new_items", "benchmark", "pairwise"):
            per_set = np.array([r[key].mean() for r in rows])                 # clusters
            se = per_set.std(ddof=1) / np.sqrt(len(rows))
            line.append(f"{key} {per_set.mean():.3f} ({se:.3f})")
        bias = np.array([r["bias"].mean() for r in rows])
        se = bias.std(ddof=1) / np.sqrt(len(rows))
        line.append(f"new-items bias {bias.mean():+.4f} ({se:.4f})")
        print(" | ".join(line), flush=True)


if __name__ == "__main__":
    main()

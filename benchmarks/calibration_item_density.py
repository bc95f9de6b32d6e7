"""Calibration of the learned item distribution (issue 36): 90% coverage at 5,000 items x 2
epochs x 5 models, bimodal and normal item populations, ``item_distribution="learned"`` (and
``"normal"`` for the bimodal population as the baseline).

Prints per (population, distribution) the coverage of the new-items per-model, benchmark
per-model and new-items pairwise 90% intervals, and the mean bias of the new-items score.

Two SEs of a coverage: the cluster SE (clusters: data sets; the empirical SD of the per-set
coverage over sqrt(n)) and the SE *under the nominal*, sqrt(0.9 0.1 deff / (n n_models)),
with the design effect deff = 1 + (n_models - 1) rho from the intra-set correlation rho of
the standardised errors z (an upper bound: the indicators correlate less than the z). The
5 models' new-items errors share the item sample, so a set tends to cover all five models
or none; near coverage 1 (all sets cover) the cluster SE collapses and understates the
coverage's error.

The efficient check is the z-scores, z = (posterior mean - truth) / posterior SD: their
RMS (1 when the intervals are calibrated; an over-covering interval has RMS z < 1, its SE
from a cluster bootstrap), and the mean posterior SD against the RMS error of the
posterior mean.

One compile per shape (``fit_items`` reuses the compiled model: ``pm.Data``). Run:
``PYTHONPATH=src .venv/bin/python benchmarks/calibration_item_density.py --n 100`` (about
12 s per learned fit on a quiet 2-core machine); ``--runs bimodal:learned`` for one row,
``--progress 10`` for a running summary; ``--items 100 --runs normal:normal,normal:learned``
for a small benchmark, the default fit beside the learned one.
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
RUNS = ("bimodal:learned", "normal:learned", "bimodal:normal")
CHOICES = (*RUNS, "normal:normal")


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
            out["sd"] = s.std(axis=1, ddof=1)
            out["z"] = out["bias"] / out["sd"]
            pairs = list(itertools.combinations(range(s.shape[0]), 2))
            d = np.stack([s[a] - s[b] for a, b in pairs])
            td = np.array([truth[scope][a] - truth[scope][b] for a, b in pairs])
            lo, hi = np.quantile(d, q, axis=1)
            out["pairwise"] = (lo <= td) & (td <= hi)
    return out


def summary(rows: list[dict[str, np.ndarray]], gen: np.random.Generator) -> str:
    """The coverage line of one (population, distribution) run."""
    n = len(rows)
    z = np.stack([r["z"] for r in rows])                                   # (set, model)
    n_m = z.shape[1]
    zc = z - z.mean()
    rho = (((zc.sum(axis=1) ** 2).sum() - (zc**2).sum()) / (n * n_m * (n_m - 1))
           / (zc**2).mean())
    deff = 1.0 + (n_m - 1) * max(rho, 0.0)
    line = []
    for key in ("new_items", "benchmark", "pairwise"):
        per_set = np.array([r[key].mean() for r in rows])                  # clusters
        se = per_set.std(ddof=1) / np.sqrt(n)
        text = f"{key} {per_set.mean():.3f} (cluster SE {se:.3f}"
        if key == "new_items":
            text += f", SE at nominal {np.sqrt(LEVEL * (1 - LEVEL) * deff / (n * n_m)):.3f}"
        line.append(text + ")")
    boot = [np.sqrt((z[gen.integers(0, n, n)] ** 2).mean()) for _ in range(2000)]
    rms_z = np.sqrt((z**2).mean())
    sd = np.stack([r["sd"] for r in rows])
    err = np.stack([r["bias"] for r in rows])
    line.append(f"RMS z {rms_z:.3f} (SE {np.std(boot):.3f}; rho {rho:.2f})")
    line.append(f"mean posterior SD {sd.mean():.4f} vs RMS error {np.sqrt((err**2).mean()):.4f}")
    bias = err.mean(axis=1)
    line.append(f"new-items bias {bias.mean():+.4f} ({bias.std(ddof=1) / np.sqrt(n):.4f})")
    return " | ".join(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100, help="data sets per population")
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--runs", default=",".join(RUNS),
                        help=f"comma-separated population:distribution, of {CHOICES}")
    parser.add_argument("--progress", type=int, default=0,
                        help="print the running summary every this many data sets")
    args = parser.parse_args()
    gen = np.random.default_rng(0)
    for run in args.runs.split(","):
        if run not in CHOICES:
            raise ValueError(f"`--runs`: {run!r} is not one of {CHOICES}")
        population, dist = run.split(":")
        rows = []
        for i in range(args.n):
            rows.append(one(1000 + i, population, dist, args.items))
            if args.progress and (i + 1) % args.progress == 0 and i + 1 < args.n:
                print(f"  ({population} {dist} after {i + 1}: {summary(rows, gen)})",
                      flush=True)
        print(f"{population:8s} {dist:8s} n={args.n} | {summary(rows, gen)}", flush=True)


if __name__ == "__main__":
    main()

"""Coverage of the ordinal item model's 90% benchmark-scope intervals (issue 34 item 5).

Simulated judge panels (``simulate_ratings``: 3 models x 15 items x 3 graders, 5 levels, the
settings of the slow test ``tests/test_item_model_ordinal.py::
test_calibration_of_benchmark_intervals``), each fitted by ``fit_items`` with the ordinal
family (the model is compiled once and refitted on every panel). The truth is the
simulator's expected rating per model over these items and graders. Printed: per-model and
pairwise coverage with the binomial SE and with a panel-clustered SE (the three pairs of a
panel share their fit), the coverage per pair, and the calibration of the standardised
errors z = (truth - posterior mean) / posterior SD (mean and SD, nominal 0 and 1).

Two designs besides the default (``--design``):
``prior`` draws every panel's generating parameters from the fit's own priors (so the 90%
intervals are calibrated by construction, up to the sampler; a check of the machinery), and
``default`` keeps the simulator's fixed effect sizes (a frequentist check at one design).

Run from the repository root: ``PYTHONPATH=src python benchmarks/calibration_item_ordinal.py
[--panels 300] [--design default|prior] [--draws 500] [--save out.npz]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning
from evaluq.item_model._simulate import simulate_ratings

COLS = {"model": "model", "item": "item", "score": "score", "grader": "grader"}
LEVEL = 0.9
PAIRS = ((0, 1), (0, 2), (1, 2))
SIZES = {"n_models": 3, "n_items": 15, "n_graders": 3, "n_levels": 5}


def prior_panel(gen: np.random.Generator) -> pd.DataFrame:
    """A panel whose generating parameters are drawn from the fit's default priors.

    The cutpoints and model, grader and item effects follow ``_ordinal``'s priors with the
    defaults that do not depend on the data (sigma_item ~ HalfNormal(2.5), sigma_grader ~
    HalfNormal(1), sigma_gxm ~ HalfNormal(0.5), the pooled model effects tau_dev ~
    HalfNormal(1) and d ~ ZeroSumNormal(tau_dev); until 2026-11-27 this drew d ~
    ZeroSumNormal(2.5), the fixed prior the fit had before its model effects were pooled,
    which left pairwise coverage at 0.874 against the pooled fit, and scaled every
    zero-sum effect by sqrt(n / (n - 1)), where PyMC's ZeroSumNormal(s) is N(0, s^2 (I - J /
    n)), an iid N(0, s^2) vector minus its mean); the cutpoints are
    drawn as kappa_0 ~ N(-2, 1) and increments LogNormal(log 1, 0.3) (the data-dependent
    default cutpoint prior is centred on the observed level shares, so a fixed law near it
    is used; the check is of the effects, which carry the pairwise differences).
    """
    n_m, n_i, n_g, n_k = (SIZES[k] for k in ("n_models", "n_items", "n_graders",
                                             "n_levels"))
    s_item = abs(gen.normal(0, 2.5))
    s_g, s_gxm = abs(gen.normal(0, 1.0)), abs(gen.normal(0, 0.5))
    tau_dev = abs(gen.normal(0, 1.0))
    d = gen.normal(0, tau_dev, n_m)
    d -= d.mean()                      # ZeroSumNormal(s) = N(0, s^2 (I - J / n)): iid, centred
    r = gen.normal(0, s_g, n_g)
    r = r - r.mean()
    q = gen.normal(0, s_gxm, (n_g, n_m))
    q = q - q.mean(0) - q.mean(1)[:, None] + q.mean()
    b = gen.normal(0, s_item, n_i)
    kappa = -2.0 + np.r_[0.0, np.cumsum(np.exp(gen.normal(0, 0.3, n_k - 2)))]
    eta = d[None, :, None] + r[:, None, None] + q[:, :, None] - b          # (G, M, I)
    cum = expit(kappa - eta[..., None])
    y = (gen.random(eta.shape)[..., None] > cum).sum(axis=-1)
    gg, mm, ii = np.meshgrid(np.arange(n_g), np.arange(n_m), np.arange(n_i), indexing="ij")
    df = pd.DataFrame({"model": np.char.add("m", mm.ravel().astype(str)), "item": ii.ravel(),
                       "grader": np.char.add("g", gg.ravel().astype(str)), "score": y.ravel()})
    df.attrs["truth"] = {"benchmark": expit(eta[..., None] - kappa).sum(-1).mean(axis=(0, 2))}
    return df


def study(n_panels: int, design: str, draws: int, seed: int = 0,
          interaction: bool = True) -> dict[str, np.ndarray]:
    """Fit every panel; per panel the truth, posterior means, SDs and 90% intervals of the
    three models' scores and the three pairwise differences, and the sampler's trouble."""
    gen = np.random.default_rng(seed)
    out: dict[str, list] = {k: [] for k in ("truth", "mean", "sd", "lo", "hi", "d_truth",
                                            "d_mean", "d_sd", "d_lo", "d_hi", "divergent",
                                            "rhat")}
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    for rep in range(n_panels):
        t = (simulate_ratings(**SIZES, rng=100 + rep + 1000 * seed) if design == "default"
             else prior_panel(gen))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemConvergenceWarning)
            f = eq.fit_items(t, **COLS, draws=draws, tune=draws, chains=2, rng=rep,
                             grader_interaction=interaction)
        truth = np.asarray(t.attrs["truth"]["benchmark"])
        s = f.scores().stack(s=("chain", "draw")).values                    # (model, sample)
        diff = np.stack([s[a] - s[b] for a, b in PAIRS])
        d_truth = np.array([truth[a] - truth[b] for a, b in PAIRS])
        for key, draws_, tr in (("", s, truth), ("d_", diff, d_truth)):
            out[key + "truth"].append(tr)
            out[key + "mean"].append(draws_.mean(1))
            out[key + "sd"].append(draws_.std(1))
            lo, hi = np.quantile(draws_, q, axis=1)
            out[key + "lo"].append(lo)
            out[key + "hi"].append(hi)
        out["divergent"].append(int(f.idata["sample_stats"]["diverging"].sum()))
        out["rhat"].append(float(f.diagnostics()["r_hat"].max()))
    return {k: np.asarray(v) for k, v in out.items()}


def clustered_se(hits: np.ndarray) -> float:
    """SE of the coverage with panels as clusters (hits: panel x interval)."""
    per = hits.mean(axis=1)
    return float(per.std(ddof=1) / np.sqrt(len(per)))


def report(res: dict[str, np.ndarray], label: str) -> None:
    n = len(res["truth"])
    for name, key in (("per-model", ""), ("pairwise", "d_")):
        hits = (res[key + "lo"] <= res[key + "truth"]) & (res[key + "truth"] <= res[key + "hi"])
        cov = hits.mean()
        se = np.sqrt(LEVEL * (1 - LEVEL) / hits.size)
        z = (res[key + "truth"] - res[key + "mean"]) / res[key + "sd"]
        print(f"{label}: {name} 90% coverage {cov:.4f} (binomial SE at nominal {se:.4f}, "
              f"panel-clustered SE {clustered_se(hits):.4f}; n {hits.size} intervals, "
              f"{n} panels); per column {np.round(hits.mean(0), 3).tolist()}; z mean "
              f"{z.mean():+.3f}, z SD {z.std():.3f} (nominal 0, 1)", flush=True)
    print(f"{label}: divergent panels {(res['divergent'] > 0).sum()}, max R-hat "
          f"{res['rhat'].max():.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panels", type=int, default=300)
    parser.add_argument("--design", choices=("default", "prior"), default="default")
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-interaction", action="store_true")
    parser.add_argument("--save", default=None)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    start = time.perf_counter()
    res = study(args.panels, args.design, args.draws, args.seed, not args.no_interaction)
    label = (f"ordinal item model ({args.design} design, 3 models x 15 items x 3 graders, 5 "
             f"levels, {args.draws} draws x 2 chains"
             f"{', no grader x model' if args.no_interaction else ''})")
    report(res, label)
    print(f"{time.perf_counter() - start:.0f} s", flush=True)
    if args.save:
        np.savez(args.save, **res)


if __name__ == "__main__":
    main()

"""Calibration of the item model's pooled model deviations (issue 36 item 3).

dev ~ ZeroSumNormal(tau_dev), tau_dev ~ HalfNormal(``dev_sigma`` = 1), against the former
fixed scale (tau_dev held at 2.5 by ``pm.do``: exactly the former ZeroSumNormal(2.5)). Data
sets: 5 models, 60 items x 1 epoch (bernoulli), true deviations dev_m ~ N(0, 0.3^2) drawn
per data set, item difficulties N(0, 1), mean logit logit(0.6).

Per prior, over ``--n`` data sets (one compile per prior; each data set refitted through
``pm.Data``, nutpie 2 chains x 500 draws after 500 tuning steps, as issue 36's study):

* **P(a > b)**: for each of the 10 pairs, the favoured model (P(a > b) of the new-items
  score >= 1/2) and whether it is truly ahead (true new-items score; the 1PL's scores of
  both scopes order models as their eta); binned stated probability against the share truly
  ahead, and the overall gap mean(stated) - mean(ahead) with its cluster SE (clusters: data
  sets) and z;
* **P(best)** and **rank probabilities**: the same binned comparison of P(model m is best) /
  P(model m has rank r) with the indicator of the truth (their overall gaps are 0 by
  construction: the bins carry the check), and the P(best) of the model most likely best
  against the share of data sets where it is the true best (overall gap and z);
* **coverage** of the 90% intervals of the per-model scores (benchmark and new-items scopes)
  and of the pairwise new-items differences, with cluster SEs.

``--truth prior``: the SD of the true deviations drawn per data set from tau_dev's own prior
(SBC-style: every figure above must then be nominal, or the model or the study is wrong);
``--prior gamma``: tau_dev ~ Gamma(2, rate 2 / ``dev_sigma``) (``_model.DEV_PRIOR``, the
boundary-avoiding alternative); ``--no-former``: skip the former prior. Each run also
prints the pairwise coverage by quartile of |true difference|, the slope of the true
difference on its posterior mean (1 when the shrinkage is right; > 1 too much shrinkage),
the divergences and tau_dev's posterior mean against the truth.

``--steps``: the sampler's leapfrog steps per draw and divergences of the centred and
non-centred dev at 2, 3, 5 and 10 models (60 x 1 and 1,000 x 2). ``--sensitivity``: the
scale of tau_dev's prior at 0.5x and 2x: how far P(a > b) and the 90% intervals of the
pairwise differences move, at 60 and 1,000 items.

Run: ``.venv/bin/python benchmarks/calibration_item_pooling.py --n 400`` (about 1 s per fit
on a quiet 2-core machine, two priors), ``--steps``, ``--sensitivity``.
"""

from __future__ import annotations

import argparse
import itertools
import time
from typing import Any

import numpy as np
from _common import refit_item_model

LEVEL = 0.9
MEAN_LOGIT = float(np.log(0.6 / 0.4))
PAIRS_5 = list(itertools.combinations(range(5), 2))


def simulate(seed: int, n_models: int = 5, n_items: int = 60, n_epochs: int = 1,
             model_sd: float = 0.3) -> tuple[Any, dict[str, np.ndarray]]:
    """One data set's sufficient statistics and its truth."""
    from evaluq.item_model import item_statistics
    from evaluq.item_model._simulate import simulate_items

    t = simulate_items(n_models=n_models, n_items=n_items, n_epochs=n_epochs, model_sd=model_sd,
                       sigma_item=1.0, mean_logit=MEAN_LOGIT, rng=seed)
    data = item_statistics(t, model="model", item="item", score="score",
                           epoch="epoch" if n_epochs > 1 else None,
                           family="bernoulli" if n_epochs == 1 else "binomial")
    return data, t.attrs["truth"]


def compiled(data: Any, fixed_tau: float | None = None) -> Any:
    """nutpie model of the data's shape; ``fixed_tau``: tau_dev held at that value (pm.do)."""
    import pymc as pm

    from evaluq._nutpie_cache import compile_pymc_model
    from evaluq.item_model._model import build_model

    model = build_model(data)
    if fixed_tau is not None:
        model = pm.do(model, {"tau_dev": np.float64(fixed_tau)})
    return compile_pymc_model(model)[0]


def refit(comp: Any, data: Any, seed: int, priors: dict[str, float] | None = None,
          draws: int = 500, tune: int = 500) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Posterior scores (draw, model) of both scopes, and sampler statistics."""
    from evaluq.item_model._posterior import (
        conditional_draws,
        flat_posterior,
        linear_predictor,
        new_items_scores,
    )

    raw = refit_item_model(comp, data, priors, seed, draws, tune)
    post = raw["posterior"].to_dataset()
    flat = flat_posterior(post, ("alpha", "dev", "sigma_item"))
    eta = linear_predictor(data, flat)
    sigma = flat["sigma_item"]
    scores = {"new_items": new_items_scores(data, eta, sigma),
              "benchmark": conditional_draws(data, eta, sigma,
                                             np.random.default_rng(seed))["benchmark"]}
    stats = raw["sample_stats"].to_dataset()
    return scores, {"steps": float(stats["n_steps"].mean()),
                    "divergences": int(stats["diverging"].sum()),
                    "tau_dev": flat_posterior(post, ("tau_dev",)).get("tau_dev")}


def pair_probs(s: np.ndarray) -> np.ndarray:
    """P(score_a > score_b) per pair (a < b) from draws (draw, model)."""
    a, b = np.array(list(itertools.combinations(range(s.shape[1]), 2))).T
    return (s[:, a] > s[:, b]).mean(axis=0)


def rank_probs(s: np.ndarray) -> np.ndarray:
    """P(model m has rank r) (model, rank), rank 0 the best."""
    ranks = (-s).argsort(axis=1).argsort(axis=1)                        # (draw, model)
    return (ranks[:, :, None] == np.arange(s.shape[1])).mean(axis=0)


FIXED_TAU = 0.3
"""The SD of the true deviations of a ``"fixed"`` truth (``--tau``)."""


def truth_tau(seed: int, truth: str, prior: str = "halfnormal") -> float:
    """The data set's SD of the true deviations: ``"fixed"`` 0.3 (issue 36's study), or
    ``"prior"`` drawn from tau_dev's prior (``prior``, ``dev_sigma`` 1: an SBC-style run,
    whose coverage must be nominal)."""
    if truth == "fixed":
        return FIXED_TAU
    gen = np.random.default_rng([seed, 7])
    return float(abs(gen.normal(0, 1.0)) if prior == "halfnormal" else gen.gamma(2.0, 0.5))


def one(comp: Any, seed: int, truth_kind: str = "fixed",
        prior: str = "halfnormal") -> dict[str, np.ndarray]:
    """The study's records of one data set."""
    tau = truth_tau(seed, truth_kind, prior)
    data, truth = simulate(seed, model_sd=tau)
    scores, stats = refit(comp, data, seed)
    s, t = scores["new_items"], truth["new_items"]
    p = pair_probs(s)
    a, b = np.array(PAIRS_5).T
    ahead = t[a] > t[b]
    stated = np.maximum(p, 1 - p)
    favoured_ahead = np.where(p >= 0.5, ahead, ~ahead)
    true_rank = (-t).argsort().argsort()
    rp = rank_probs(s)
    q = [(1 - LEVEL) / 2, (1 + LEVEL) / 2]
    out = {"stated": stated, "ahead": favoured_ahead.astype(float),
           "p_best": rp[:, 0], "is_best": (true_rank == 0).astype(float),
           "top_best": rp[:, 0].max(keepdims=True),
           "top_is_best": (true_rank[[rp[:, 0].argmax()]] == 0).astype(float),
           "p_rank": rp.ravel(), "is_rank": (true_rank[:, None] == np.arange(5)).ravel()
           .astype(float)}
    for scope in ("benchmark", "new_items"):
        lo, hi = np.quantile(scores[scope], q, axis=0)
        out[f"cover_{scope}"] = ((lo <= truth[scope]) & (truth[scope] <= hi)).astype(float)
    d = s[:, a] - s[:, b]
    lo, hi = np.quantile(d, q, axis=0)
    out["cover_pairwise"] = ((lo <= t[a] - t[b]) & (t[a] - t[b] <= hi)).astype(float)
    out["true_diff"] = t[a] - t[b]
    out["post_diff"] = d.mean(axis=0)
    out["abs_diff"] = np.abs(t[a] - t[b])
    out["divergences"] = np.array([stats["divergences"]], dtype=float)
    out["tau"] = np.array([tau, float(np.mean(stats["tau_dev"]))
                           if stats["tau_dev"] is not None else np.nan])
    return out


def cluster_gap(stated: np.ndarray, hit: np.ndarray) -> tuple[float, float]:
    """mean(hit - stated) over all entries and its cluster SE (rows: clusters)."""
    r = hit - stated
    n = r.size
    gap = r.sum() / n
    per = (r - gap).sum(axis=1)
    return float(gap), float(np.sqrt((per**2).sum() * len(r) / (len(r) - 1)) / n)


def binned(stated: np.ndarray, hit: np.ndarray, edges: np.ndarray) -> list[str]:
    """Per bin of the stated probability: n, mean stated, share of hits, cluster SE, z."""
    lines = []
    for lo, hi in itertools.pairwise(edges):
        mask = (stated >= lo) & (stated < hi)
        if mask.sum() < 5:
            continue
        n = mask.sum()
        r = np.where(mask, hit - stated, 0.0)
        gap = r.sum() / n
        per = np.where(mask, r - gap, 0.0).sum(axis=1)
        se = np.sqrt((per**2).sum() * len(r) / (len(r) - 1)) / n
        lines.append(f"  [{lo:.2f}, {hi:.2f}) n {n:5d}  stated {stated[mask].mean():.3f}  "
                     f"observed {hit[mask].mean():.3f}  (SE {se:.3f}, z {gap / se:+.2f})")
    return lines


def report(label: str, rows: list[dict[str, np.ndarray]], save: str | None = None) -> None:
    cat = {k: np.stack([r[k] for r in rows]) for k in rows[0]}
    if save:
        np.savez(save, **cat)
    print(f"== {label}: {len(rows)} data sets", flush=True)
    for stated, hit, name, edges in (
            ("stated", "ahead", "P(a > b) of the favoured model",
             np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001])),
            ("top_best", "top_is_best", "P(best) of the model most likely best",
             np.array([0.2, 0.4, 0.6, 0.8, 1.0001])),
            ("p_best", "is_best", "P(best)", np.array([0, 0.05, 0.2, 0.4, 0.6, 0.8, 1.0001])),
            ("p_rank", "is_rank", "rank probabilities",
             np.array([0, 0.05, 0.2, 0.4, 0.6, 0.8, 1.0001]))):
        gap, se = cluster_gap(cat[stated], cat[hit])
        print(f"{name}: observed - stated {gap:+.4f} (cluster SE {se:.4f}, z {gap / se:+.2f})")
        for line in binned(cat[stated], cat[hit], edges):
            print(line)
    for key in ("cover_benchmark", "cover_new_items", "cover_pairwise"):
        per = cat[key].mean(axis=1)
        print(f"{key[6:]} 90% coverage {per.mean():.3f} (cluster SE "
              f"{per.std(ddof=1) / np.sqrt(len(per)):.3f})")
    # pairwise coverage by |true difference| (quartiles over every pair): over-shrinkage of
    # large differences shows as low coverage in the top bins
    edges = np.quantile(cat["abs_diff"], [0, 0.25, 0.5, 0.75, 1.0])
    edges[-1] += 1e-12
    for lo, hi in itertools.pairwise(edges):
        mask = (cat["abs_diff"] >= lo) & (cat["abs_diff"] < hi)
        hit = np.where(mask, cat["cover_pairwise"], 0.0)
        n_row = mask.sum(axis=1)
        share = hit.sum() / mask.sum()
        per = hit.sum(axis=1) - share * n_row
        se = np.sqrt((per**2).sum() * len(per) / (len(per) - 1)) / mask.sum()
        print(f"  pairwise coverage at |true diff| in [{lo:.3f}, {hi:.3f}): {share:.3f} "
              f"(cluster SE {se:.3f})")
    # regression of the true difference on the posterior mean: slope 1 if the shrinkage is
    # right (E[true | data] = posterior mean), < 1 too little shrinkage, > 1 too much
    x, y = cat["post_diff"].ravel(), cat["true_diff"].ravel()
    slope = float((x * y).sum() / (x * x).sum())
    boot = np.random.default_rng(0).integers(0, len(cat["post_diff"]),
                                               (200, len(cat["post_diff"])))
    slopes = [(cat["post_diff"][i] * cat["true_diff"][i]).sum()
              / (cat["post_diff"][i] ** 2).sum() for i in boot]
    print(f"slope of true on posterior-mean difference {slope:.3f} (cluster bootstrap SE "
          f"{np.std(slopes):.3f}); divergences {int(cat['divergences'].sum())} in "
          f"{len(rows)} fits; tau true mean {cat['tau'][:, 0].mean():.3f}, posterior mean "
          f"of tau_dev, mean over data sets {np.nanmean(cat['tau'][:, 1]):.3f}")


def study(n: int, truth: str = "fixed", prior: str = "halfnormal", former: bool = True,
          save: str | None = None) -> None:
    """``truth`` ``"fixed"`` (tau 0.3) or ``"prior"`` (tau drawn from ``prior``: SBC-style);
    ``prior`` the family of tau_dev's prior (``_model.DEV_PRIOR``); ``former``: also the
    former fixed ZSN(2.5)."""
    from evaluq.item_model import _model

    data, _ = simulate(0)
    _model.DEV_PRIOR = prior
    name = "HalfNormal(1)" if prior == "halfnormal" else "Gamma(2, rate 2)"
    runs: list[tuple[str, float | None]] = [(f"pooled: tau_dev ~ {name}", None)]
    if former:
        runs.append(("former: dev ~ ZeroSumNormal(2.5)", 2.5))
    for label, fixed in runs:
        comp = compiled(data, fixed)
        start = time.perf_counter()
        rows = [one(comp, 10_000 + i, truth, prior) for i in range(n)]
        report(f"{label}, truth tau {FIXED_TAU if truth == 'fixed' else 'from the prior'}", rows,
               save if fixed is None else None)
        print(f"({time.perf_counter() - start:.0f} s)", flush=True)
    _model.DEV_PRIOR = "halfnormal"


def steps() -> None:
    from evaluq.item_model import _model

    for n_items, n_epochs in ((60, 1), (1000, 2)):
        for n_models in (2, 3, 5, 10):
            data, _ = simulate(1, n_models, n_items, n_epochs)
            line = [f"{n_models:2d} models x {n_items} items x {n_epochs}:"]
            for centred in (False, True):
                _model.DEV_CENTRED = centred
                comp = compiled(data)
                st = [refit(comp, simulate(s, n_models, n_items, n_epochs)[0], s)[1]
                      for s in range(20, 26)]
                line.append(f"{'centred' if centred else 'non-centred'} "
                            f"{np.mean([x['steps'] for x in st]):5.1f} steps/draw, "
                            f"{sum(x['divergences'] for x in st)} divergences")
            _model.DEV_CENTRED = False
            print("  ".join(line), flush=True)


def sensitivity(n: int, prior: str = "halfnormal") -> None:
    from evaluq.item_model import _model

    _model.DEV_PRIOR = prior
    print(f"== tau_dev prior {prior}")
    for n_items in (60, 1000):
        data, _ = simulate(0, n_items=n_items)
        comp = compiled(data)
        moves: dict[float, list[tuple[float, float]]] = {0.5: [], 2.0: []}
        for seed in range(100, 100 + n):
            data, _ = simulate(seed, n_items=n_items)
            base, _ = refit(comp, data, seed)
            p0 = pair_probs(base["new_items"])
            a, b = np.array(PAIRS_5).T
            w0 = np.diff(np.quantile(base["new_items"][:, a] - base["new_items"][:, b],
                                     [0.05, 0.95], axis=0), axis=0)[0]
            for factor in moves:
                alt, _ = refit(comp, data, seed, {"dev_sigma": factor})
                p1 = pair_probs(alt["new_items"])
                w1 = np.diff(np.quantile(alt["new_items"][:, a] - alt["new_items"][:, b],
                                         [0.05, 0.95], axis=0), axis=0)[0]
                moves[factor].append((float(np.abs(p1 - p0).max()),
                                      float(np.median(w1 / w0))))
        for factor, m in moves.items():
            arr = np.array(m)
            print(f"{n_items} items, dev_sigma {factor}: max |change of P(a > b)| median "
                  f"{np.median(arr[:, 0]):.3f} (max {arr[:, 0].max():.3f}); 90% interval "
                  f"width of the pairwise differences x{np.median(arr[:, 1]):.3f} "
                  f"(range {arr[:, 1].min():.3f}-{arr[:, 1].max():.3f}), {n} data sets",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=400, help="data sets per prior")
    parser.add_argument("--steps", action="store_true")
    parser.add_argument("--sensitivity", action="store_true")
    parser.add_argument("--truth", choices=("fixed", "prior"), default="fixed",
                        help="true tau 0.3, or drawn from tau_dev's prior (SBC-style)")
    parser.add_argument("--prior", choices=("halfnormal", "gamma"), default="halfnormal",
                        help="family of tau_dev's prior (_model.DEV_PRIOR)")
    parser.add_argument("--no-former", action="store_true",
                        help="skip the former fixed ZSN(2.5)")
    parser.add_argument("--tau", type=float, default=0.3,
                        help="SD of the true deviations with --truth fixed")
    parser.add_argument("--save", help="the pooled run's records to this .npz")
    args = parser.parse_args()
    globals()["FIXED_TAU"] = args.tau
    if args.steps:
        steps()
    elif args.sensitivity:
        sensitivity(min(args.n, 20), args.prior)
    else:
        study(args.n, args.truth, args.prior, not args.no_former, args.save)


if __name__ == "__main__":
    main()

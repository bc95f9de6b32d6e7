"""Benchmark: the ordinal family with item effects, both forms warm, beside the binomial (issue 34).

Ratings on 5 levels (one grader, ``simulate_ratings``, the items split over 4 tasks) at 10
models x 1,000 items x 3 epochs by default. In one run, each fit twice on the same table (warm =
the second fit: the compiled model reused, as a user refitting data of the same shape):

- the binomial 1PL (``family="binomial"``) on the same ratings binarised (score >= the middle
  level), the baseline;
- the ordinal family's marginal form (items integrated out on ``_gridquad``'s shared grid);
- the ordinal family's explicit form (one non-centred parameter per item; ``--no-explicit``
  skips it, it is the slow reference).

Printed per warm fit: wall, sampling and post-processing seconds, divergences, the largest
R-hat, the smallest bulk ESS, the mean leapfrog steps per draw and the seconds per gradient
(sampling seconds / (chains x (draws + tune) x mean steps): an estimate, warm-up steps differ);
then the warm ratios to the binomial's (target: the ordinal with item effects <= 3x) and the
two ordinal forms' benchmark-score means side by side. The machine is shared: read the ratios.

Measured on 2026-11-29 17:45 UTC (``--size 20 10000 5 --no-explicit --no-tasks``, AMD EPYC
2-core, load 1.2), after the fused Op took the term rows as int32 (no cast per call): the
binomial 4.38 s, the marginal form **56.5 s** (sampling 51.3 s, posterior 4.0 s; 7.0 steps per
draw, 0 divergences, R-hat 1.008, ESS 2,914): the issue's 60 s is met; the code before in
the same hour 62.1 and 61.7 s (sampling 56.9 and 56.7 s).

Measured on 2026-11-29 at 20 x 10^4 x 5 without a task column (``--size 20 10000 5
--no-explicit --no-tasks``, AMD EPYC 2-core, load 1.0): the binomial 4.55 s (7.0 steps per
draw), the marginal form 76.0 s (sampling 69.7 s, posterior 5.1 s; 7.0 steps per draw, 0
divergences), 16.7x; the issue's 60 s is not met. The same at 08:40, after four rows per
pass and the 27-nat window (``_ordinal_grid``), on a slower machine (the binomial 5.07 s):
83.2 s (sampling 76.0 s), 16.4x; in a same-hour A/B of one fit's warm sampling the former
code took 62.8 s and the new 56.3 s (the same 29,670 leapfrog steps).

Measured on 2026-11-28 at 10 x 1,000 x 3 (AMD EPYC 2-core, two rounds each with the former
code in the same run): the binomial 4.32-4.35 s and the marginal form 11.09-11.22 s (2.55-2.60x;
14.9 steps per draw, 0-1 divergences), after each term's first guess was widened by two nodes
a side (``_ordinal_grid.GUESS_MARGIN``); the former code 11.59-12.01 s (2.72-2.78x).

Measured on 2026-11-27 at 10 x 1,000 x 3 (this script, warm): on the afternoon's 2-core
machine the binomial 5.49 s and the marginal form 16.89 s (3.08x; 16.5 steps per draw, 1
divergence, R-hat 1.003; posterior step 0.84 s), after the kernel's product path, flat
indexing, the terms ordered by mean rating, rows compacted once and the benchmark-score
kernel; the code before them 29.8 s against 5.72 s (5.2x) on the same machine, 19.0 s
against 5.41 s (3.5x) on the morning's machine (ratios differ between machines, and the
binomial's warm fit alone varied 4.8-6.6 s between runs: compare within a run). Earlier that
morning 28.2 s (5.2x), on a loaded machine 101.9 s against 8.45 s (12.1x), and the explicit
form 391 s against 10.1 s (38.6x). At 20 x 10^4 x 5 (``--size 20 10000 5``): 582.8 s
against 36.85 s (15.8x; 31.0 steps per draw, 0 divergences). The gap is the cost of a
gradient: the binomial's items collapse on (task, total) (the total is sufficient for b under
the Rasch model: 100 terms here), the ordinal's do not (1,000 distinct patterns), and a term
costs its entries' products over its window (~25 nodes evaluated) whatever the kernel.

``--gradient`` times one log-density + gradient of the binomial and of the marginal form
(the fastest of 3 interleaved rounds, one process, the model's initial point): at sigma_item
1, 0.40 ms against 0.11 ms (3.7x) at 10 x 1,000 x 3 and 9.0 ms against 0.46 ms (19.6x) at
20 x 10^4 x 5 (10^4 ordinal terms against 356 binomial ones) on the afternoon's machine;
the code before the day's kernel changes 12.6 ms there (on the morning's machine 0.79 ->
0.51 ms and 14.9 -> 7.3 ms).

Run: ``python benchmarks/bench_item_ordinal.py [--size 10 1000 3] [--no-explicit]
[--gradient]``;
``--quick`` (4 x 60 x 3, few draws) is a smoke run.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from typing import Any

import numpy as np

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning
from evaluq.item_model._simulate import simulate_ratings

COLS = {"model": "model", "item": "item", "score": "score", "task": "task", "epoch": "epoch"}
N_TASKS = 4
N_LEVELS = 5
TARGET = 3.0


def rating_table(n_m: int, n_i: int, n_e: int, rng: int, tasks: bool = True) -> Any:
    """Ratings 0..4 (one grader) with the items split over 4 tasks (``tasks``) or none."""
    table = simulate_ratings(n_models=n_m, n_items=n_i, n_graders=1, n_levels=N_LEVELS,
                             n_epochs=n_e, sigma_item=1.0, rng=rng)
    if tasks:
        table["task"] = "t" + (table["item"] % N_TASKS).astype(str)
    return table.drop(columns="grader")


def binarised(table: Any) -> Any:
    """The same ratings as 0 / 1: score >= the middle level."""
    out = table.copy()
    out["score"] = (out["score"] >= N_LEVELS // 2).astype(float)
    return out


def _fit(table: Any, family: str, form: str | None, rng: int, settings: dict) -> Any:
    from evaluq.item_model import _ordinal

    old = _ordinal.FORM
    if form is not None:
        _ordinal.FORM = form                                    # type: ignore[misc]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemConvergenceWarning)
            start = time.perf_counter()
            cols = {k: v for k, v in COLS.items() if v in table.columns}
            fit = eq.fit_items(table, **cols, family=family, rng=rng, **settings)
            return fit, time.perf_counter() - start
    finally:
        _ordinal.FORM = old                                     # type: ignore[misc]


def warm(table: Any, family: str, form: str | None, settings: dict) -> tuple[Any, dict]:
    """Fit twice (cold, then warm); the warm fit and its figures."""
    _, cold = _fit(table, family, form, 1, settings)
    fit, wall = _fit(table, family, form, 2, settings)
    c, diag = fit.config, fit.diagnostics()
    steps = float(fit.idata["sample_stats"]["n_steps"].mean())
    evals = settings["chains"] * (settings["draws"] + settings["tune"]) * steps
    return fit, {"cold": cold, "wall": wall, "sampling": c["sampling_seconds"],
                 "posterior": c["posterior_seconds"], "form": c["form"],
                 "divergences": int(diag.attrs["divergences"]),
                 "rhat": float(diag["r_hat"].max()), "ess": float(diag["ess_bulk"].min()),
                 "steps": steps, "per_grad_ms": 1e3 * c["sampling_seconds"] / evals}


def gradient_times(size: tuple[int, int, int], sigmas: tuple[float, ...] = (1.0, 1.5)
                   ) -> None:
    """Milliseconds per log-density + gradient (PyTensor's numba backend, one thread, the
    model's initial point with sigma_item set) of the binomial on the binarised ratings and
    of the ordinal marginal form, interleaved in one process, with their term counts."""
    from evaluq.item_model import _model, _ordinal
    from evaluq.item_model._data import item_statistics

    table = rating_table(*size, rng=0)
    data = item_statistics(binarised(table), model="model", item="item", score="score",
                           task="task", epoch="epoch")
    stats = _ordinal.ordinal_statistics(table, model="model", item="item", score="score",
                                        task="task", epoch="epoch", grader=None)
    models = {"binomial": _model.build_model(data),
              "ordinal marginal": _ordinal.build_ordinal_model(
                  stats, _ordinal.resolve_ordinal_priors(stats, None), True, "marginal")}
    print(f"terms: binomial {len(data.term_weight)}, ordinal "
          f"{len(_ordinal.ordinal_terms(stats).weight)}", flush=True)
    funcs = {}
    for name, pm_model in models.items():
        f = pm_model.logp_dlogp_function(mode="NUMBA", ravel_inputs=True)
        f.set_extra_values({})
        funcs[name] = (pm_model, f)
    for sigma in sigmas:
        ms = dict.fromkeys(funcs, np.inf)
        for _ in range(3):                     # the fastest of 3 interleaved rounds
            for name, (pm_model, f) in funcs.items():
                point = pm_model.initial_point(0) | {"sigma_item_log__": np.log(sigma)}
                x = np.concatenate([np.ravel(point[v.name]) for v in f._grad_vars])
                f(x)
                n = 200 if name == "binomial" else 30
                start = time.perf_counter()
                for _ in range(n):
                    f(x)
                ms[name] = min(ms[name], 1e3 * (time.perf_counter() - start) / n)
        print(f"sigma_item {sigma}: log-density + gradient binomial {ms['binomial']:.3f} ms, "
              f"ordinal marginal {ms['ordinal marginal']:.3f} ms "
              f"({ms['ordinal marginal'] / ms['binomial']:.1f}x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--size", type=int, nargs=3, metavar=("M", "I", "E"))
    parser.add_argument("--no-explicit", action="store_true")
    parser.add_argument("--no-tasks", action="store_true",
                        help="no task column (as bench_item_model.py's 20 x 10^4 x 5 fit)")
    parser.add_argument("--gradient", action="store_true",
                        help="only time one log-density + gradient of each model")
    args = parser.parse_args()
    size = tuple(args.size or ((4, 60, 3) if args.quick else (10, 1000, 3)))
    if args.gradient:
        gradient_times(size)                                         # type: ignore[arg-type]
        return
    settings = ({"draws": 100, "tune": 100, "chains": 2} if args.quick
                else {"draws": 1000, "tune": 1000, "chains": 2})
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {settings}; "
          f"{size[0]} models x {size[1]} items x {size[2]} epochs, "
          f"{'no' if args.no_tasks else N_TASKS} tasks, {N_LEVELS} levels", flush=True)
    table = rating_table(*size, rng=0, tasks=not args.no_tasks)
    runs = [("binomial", "binomial", None), ("ordinal marginal", "ordinal", "marginal")]
    if not args.no_explicit:
        runs.append(("ordinal explicit", "ordinal", "explicit"))
    fits, figs = {}, {}
    for name, family, form in runs:
        data = binarised(table) if family == "binomial" else table
        fits[name], r = warm(data, family, form, settings)
        figs[name] = r
        print(f"{name:>17}: warm {r['wall']:7.2f} s (cold {r['cold']:7.2f}; sampling "
              f"{r['sampling']:7.2f}, posterior {r['posterior']:5.2f}), form {r['form']}, "
              f"divergences {r['divergences']}, max R-hat {r['rhat']:.3f}, min ESS "
              f"{r['ess']:.0f}, steps/draw {r['steps']:.1f}, ~{r['per_grad_ms']:.3f} ms per "
              "gradient", flush=True)
    base = figs["binomial"]["wall"]
    for name in figs:
        if name == "binomial":
            continue
        ratio = figs[name]["wall"] / base
        flag = "ok" if ratio <= TARGET else "OVER TARGET"
        print(f"{name} warm / binomial warm: {ratio:.2f}x [target <= {TARGET:.0f}x: {flag}]")
    if "ordinal explicit" in fits:
        marg, expl = (fits[k].scores("benchmark").mean(("chain", "draw")).values
                      for k in ("ordinal marginal", "ordinal explicit"))
        sd = fits["ordinal explicit"].scores("benchmark").std(("chain", "draw")).values
        print(f"benchmark score means (expected rating): marginal {np.round(marg, 3)}, "
              f"explicit {np.round(expl, 3)}; max |gap| / posterior SD "
              f"{float(np.max(np.abs(marg - expl) / sd)):.2f}")
    print(f"(the binomial's warm fit: {base:.2f} s; the machine is shared: read the ratios)")


if __name__ == "__main__":
    main()

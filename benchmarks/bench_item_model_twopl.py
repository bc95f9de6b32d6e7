"""Benchmark: the 2PL item model beside the marginal 1PL.

``fit_items(..., discrimination=True)`` integrates (log a_i, b_i) out (``_twopl.FORM =
"marginal"``: one term per (task, count vector) pattern, ``_twopl_grid``'s fused kernel);
the explicit form samples one (difficulty, log discrimination) pair per item. Printed per
size, on the same 2PL data and with the same draws: the 2PL's wall,
compile and sampling seconds, divergences, largest R-hat, smallest bulk ESS and the recovery
of sigma_logdisc and of the benchmark scores; the marginal 1PL's sampling seconds (the
baseline); and the seconds of ``compare_fits`` (the 2PL's pointwise likelihood integrates
(a_i, b_i) out at every draw). ``--quick``: one tiny 2PL fit (smoke).

``--warm``: issue 34's target, at each size (default 10 x 1,000 x 3, 4 tasks): the binomial
1PL, the marginal 2PL (``_twopl.FORM = "marginal"``: (log a_i, b_i) integrated out) and the
explicit 2PL, each fitted twice on the same data (warm = the second fit, compiled model
reused), the leapfrog steps per draw and step size, and the ratios of the warm fits to the
binomial's in the same run (target: the marginal 2PL <= 5x), with the benchmark scores'
agreement between the two 2PL forms (``--forms marginal``: the marginal 2PL only;
``--no-tasks``: one task and no task column, as ``bench_item_model.py``'s 20 x 10^4 x 5 fit,
the issue's 60 s figure). Every fit
is ``family="binomial"``: on this 2PL data at 20 x 10^4 x 5 ``auto`` would give the 1PL
baseline the beta-binomial (the epochs agree beyond the 1PL's binomial, z 3.4).

Measured on 2026-11-29 17:55 UTC (``--warm --sizes 20x10000x5 --forms marginal
--no-tasks``, AMD EPYC 2-core): the binomial warm 4.7 s, the marginal 2PL warm **50.2 s**
(sampling 41.1 s, posterior 8.9 s; 7.0 steps per draw, 0 divergences, R-hat 1.006,
sigma_logdisc 0.501 against 0.5); with 4 tasks 312 s on 2026-11-27 (14.1 steps per draw).

Run: ``python benchmarks/bench_item_model_twopl.py [--sizes 20x300x1 20x1000x3]`` or
``python benchmarks/bench_item_model_twopl.py --warm [--sizes 10x1000x3]``
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning, _twopl, simulate_items

COLS = {"model": "model", "item": "item", "score": "score", "epoch": "epoch"}


def _fit(table, disc: bool, draws: int, tune: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        start = time.perf_counter()
        fit = eq.fit_items(table, **COLS, discrimination=disc, family="binomial", draws=draws,
                           tune=tune, chains=2, rng=1)
        return fit, time.perf_counter() - start


def run(n_m: int, n_i: int, n_e: int, draws: int, tune: int, baseline: bool) -> None:
    table = simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, model_sd=0.8,
                           sigma_item=1.5, discrimination_sd=0.5, rng=7)
    fit2, wall = _fit(table, True, draws, tune)
    diag = fit2.diagnostics()
    c = fit2.config
    err = np.abs(fit2.scores("benchmark").mean(("chain", "draw")).values
                 - table.attrs["truth"]["benchmark"]).max()
    print(f"{n_m} models x {n_i} items x {n_e} epochs, {draws} draws + {tune} tune x 2 "
          f"chains: 2PL ({_twopl.FORM} form) wall {wall:.1f} s (compile "
          f"{c['compile_seconds']:.1f}, "
          f"sampling {c['sampling_seconds']:.1f}, posterior {c['posterior_seconds']:.1f}), "
          f"divergences {diag.attrs['divergences']}, max R-hat {diag['r_hat'].max():.3f}, "
          f"min ESS {diag['ess_bulk'].min():.0f}, sigma_logdisc "
          f"{float(fit2.posterior['sigma_logdisc'].mean()):.3f} (true 0.5), max |score - "
          f"truth| {err:.4f}", flush=True)
    if not baseline:
        return
    fit1, _ = _fit(table, False, draws, tune)
    start = time.perf_counter()
    table_loo = eq.compare_fits({"2PL": fit2, "1PL": fit1})
    loo_s = time.perf_counter() - start
    print(f"    marginal 1PL baseline: sampling {fit1.config['sampling_seconds']:.1f} s "
          f"(compile {fit1.config['compile_seconds']:.1f}); 2PL / 1PL sampling "
          f"{c['sampling_seconds'] / fit1.config['sampling_seconds']:.1f}x; compare_fits "
          f"{loo_s:.1f} s, elpd_diff of the 1PL {table_loo.loc['1PL', 'elpd_diff']:.1f} "
          f"(dse {table_loo.loc['1PL', 'dse']:.1f})", flush=True)


def _warm(table, disc: bool, form: str, tasks: bool = True) -> tuple[object, float]:
    old = _twopl.FORM
    _twopl.FORM = form                                     # type: ignore[misc]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemConvergenceWarning)
            cols = COLS | ({"task": "task"} if tasks else {})
            eq.fit_items(table, **cols, discrimination=disc, family="binomial", chains=2,
                          rng=1)   # cold
            start = time.perf_counter()
            fit = eq.fit_items(table, **cols, discrimination=disc, family="binomial",
                               chains=2, rng=2)
            return fit, time.perf_counter() - start
    finally:
        _twopl.FORM = old                                  # type: ignore[misc]


def _steps(fit) -> str:
    stats = fit.idata["sample_stats"].to_dataset()
    return (f"leapfrog steps per draw {float(stats['n_steps'].mean()):.1f}, step size "
            f"{float(stats['step_size'].mean()):.3f}")


def run_warm(n_m: int, n_i: int, n_e: int, forms: tuple[str, ...] = ("marginal", "explicit"),
             n_tasks: int = 4) -> None:
    """Warm fits of the binomial, the marginal 2PL and the explicit 2PL on the same data."""
    table = simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, n_tasks=n_tasks,
                           model_sd=0.8, sigma_item=1.5, discrimination_sd=0.5, rng=7)
    tasks = n_tasks > 1
    fit1, t1 = _warm(table, False, "marginal", tasks)
    print(f"{n_m} x {n_i} x {n_e}, {f'{n_tasks} tasks' if tasks else 'no task column'}: "
          f"binomial warm {t1:.1f} s ({_steps(fit1)})", flush=True)
    fits = {}
    for form in forms:
        fit, t = _warm(table, True, form, tasks)
        fits[form] = fit
        diag = fit.diagnostics()
        print(f"    2PL {form}: {_steps(fit)}", flush=True)
        print(f"    2PL {form}: warm {t:.1f} s = {t / t1:.1f}x the binomial (sampling "
              f"{fit.config['sampling_seconds']:.1f} s, posterior "
              f"{fit.config['posterior_seconds']:.1f} s), divergences "
              f"{diag.attrs['divergences']}, max R-hat {diag['r_hat'].max():.3f}, sigma_logdisc "
              f"{float(fit.posterior['sigma_logdisc'].mean()):.3f} (true 0.5)", flush=True)
    if len(fits) < 2:
        return
    b = {k: f.scores("benchmark") for k, f in fits.items()}
    gap = np.abs(b["marginal"].mean(("chain", "draw")) - b["explicit"].mean(("chain", "draw")))
    print(f"    benchmark score means, marginal - explicit: max |gap| {float(gap.max()):.4f} "
          f"(posterior SD {float(b['explicit'].std(('chain', 'draw')).mean()):.4f})",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", nargs="+", default=None)
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--forms", nargs="+", default=["marginal", "explicit"],
                        choices=["marginal", "explicit"], help="2PL forms of --warm")
    parser.add_argument("--no-tasks", action="store_true",
                        help="--warm on one task, no task column")
    args = parser.parse_args()
    if args.warm:
        for size in args.sizes or ["10x1000x3"]:
            n_m, n_i, n_e = (int(v) for v in size.split("x"))
            run_warm(n_m, n_i, n_e, tuple(args.forms), 1 if args.no_tasks else 4)
        return
    args.sizes = args.sizes or ["20x300x1", "20x1000x3"]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    if args.quick:
        run(3, 30, 1, 50, 50, baseline=False)
        return
    for size in args.sizes:
        n_m, n_i, n_e = (int(v) for v in size.split("x"))
        run(n_m, n_i, n_e, 1000, 1000, baseline=True)


if __name__ == "__main__":
    main()

"""Benchmark: the item model with the items integrated out against explicit item parameters.

Target on 2 cores (issue 22): 20 models x 10,000 items x 5 epochs, a warm fit (the nutpie
model already compiled, refitted on new data of the same shape) in <= 30 s, and >= 10x faster
than the same 1PL model with one explicit parameter per item, sampled in the same run with
the same draws. Printed per fit: wall, compile, sampling and post-processing seconds,
divergences, the largest R-hat and smallest bulk ESS, and the recovery of sigma_item and of
the models' benchmark-scope scores. ``--quick``: 5 x 300 x 3 with few draws (smoke).
``--size M I E`` chooses another size (when the machine is too loaded for the full one).
The beta-binomial family (run drift rho 0.2) is timed on 10 models x 2,000 items x 5 epochs
(draws=500, tune=500; ``--quick``: 4 x 60 x 3), cold and warm, with the recovery of rho and
of the benchmark scores; ``--skip-beta-binomial`` leaves it out, ``--only-beta-binomial``
runs it alone.

Task effects (issue 34): one table of 10 models x 1,000 items x 3 epochs in 4 tasks
(``--quick``: 5 x 300 x 3 in 2 tasks) fitted with the binomial family without and with its
``task=`` column, each cold and warm (warm: the second fit of the same shape, new data),
in the same run; printed per fit: sampling and wall seconds, the sampler's leapfrog steps
per draw and mean tree depth, divergences, and the warm ratios (target: with tasks <= 2x
without). ``--former-effects`` adds the same fits under the former iid parametrisation of
the effects (``effects="iid"``: the figures before issue 34); ``--only-tasks`` runs the
task fits alone, ``--skip-tasks`` leaves them out.

Run: ``python benchmarks/bench_item_model.py``
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning, item_statistics, simulate_items
from evaluq.item_model._model import build_explicit_model

COLS = {"model": "model", "item": "item", "score": "score", "epoch": "epoch"}


def _table(n_m: int, n_i: int, n_e: int, rng: int):
    return simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, sigma_item=1.5,
                          model_sd=0.5, rng=rng)


def quiet_fit(table, cols: dict[str, str] = COLS, **kwargs):
    """``eq.fit_items`` with convergence warnings silenced, and its wall seconds."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(table, **cols, rng=1, **kwargs)
    return fit, time.perf_counter() - start


def marginal_fit(table, draws: int, tune: int, chains: int) -> tuple[str, float]:
    fit, wall = quiet_fit(table, draws=draws, tune=tune, chains=chains)
    diag = fit.diagnostics()
    truth = table.attrs["truth"]["benchmark"]
    err = np.abs(fit.scores("benchmark").mean(("chain", "draw")).values - truth).max()
    c = fit.config
    return (f"wall {wall:6.2f} s (compile {c['compile_seconds']:5.2f}, sampling "
            f"{c['sampling_seconds']:5.2f}, posterior {c['posterior_seconds']:5.2f}), "
            f"{c['n_terms']} terms, divergences {diag.attrs['divergences']}, max R-hat "
            f"{diag['r_hat'].max():.3f}, min ESS {diag['ess_bulk'].min():.0f}, sigma_item "
            f"{float(fit.posterior['sigma_item'].mean()):.3f} (true 1.5), max |score - "
            f"truth| {err:.4f}"), c["sampling_seconds"]


def explicit_fit(table, draws: int, tune: int, chains: int) -> tuple[str, float]:
    import nutpie

    data = item_statistics(table, **COLS)
    start = time.perf_counter()
    compiled = nutpie.compile_pymc_model(build_explicit_model(data, data.per_item),
                                         backend="numba")
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    raw = nutpie.sample(compiled, draws=draws, tune=tune, chains=chains, cores=chains,
                        seed=1, progress_bar=False)
    sampling = time.perf_counter() - start
    sigma = float(raw["posterior"]["sigma_item"].mean())
    return (f"compile {compile_s:5.2f} s, sampling {sampling:6.2f} s, sigma_item "
            f"{sigma:.3f} (true 1.5)"), sampling


def betabinomial_fits(n_m: int, n_i: int, n_e: int, draws: int, tune: int,
                      chains: int) -> None:
    """Cold and warm beta-binomial fits (epochs with run drift rho = 0.2)."""
    label = (f"{n_m} models x {n_i} items x {n_e} epochs, beta-binomial (draws={draws}, "
             f"tune={tune}, chains={chains})")
    for kind, seed in (("cold", 0), ("warm", 1)):
        table = simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, sigma_item=1.5,
                               model_sd=0.5, overdispersion=0.2, rng=seed)
        fit, wall = quiet_fit(table, family="beta-binomial", draws=draws, tune=tune,
                              chains=chains)
        c, diag = fit.config, fit.diagnostics()
        err = np.abs(fit.scores().mean(("chain", "draw")).values
                     - table.attrs["truth"]["benchmark"]).max()
        print(f"{label} {kind}: wall {wall:6.2f} s (compile {c['compile_seconds']:5.2f}, "
              f"sampling {c['sampling_seconds']:6.2f}, posterior "
              f"{c['posterior_seconds']:5.2f}), {c['n_terms']} terms, divergences "
              f"{diag.attrs['divergences']}, max R-hat {diag['r_hat'].max():.3f}, min ESS "
              f"{diag['ess_bulk'].min():.0f}, rho {float(fit.posterior['run_drift'].mean()):.3f}"
              f" (true 0.2), sigma_item {float(fit.posterior['sigma_item'].mean()):.3f} "
              f"(true 1.5), max |score - truth| {err:.4f}")


def _task_fit(table, task: bool, draws: int, tune: int, chains: int) -> dict[str, float]:
    cols = COLS | ({"task": "task"} if task else {})
    fit, wall = quiet_fit(table, cols, family="binomial", draws=draws, tune=tune,
                          chains=chains)
    stats = fit.idata["sample_stats"]
    c = fit.config
    return {"wall": wall, "sampling": c["sampling_seconds"], "compile": c["compile_seconds"],
            "steps": float(stats["n_steps"].mean()), "depth": float(stats["depth"].mean()),
            "divergences": int(stats["diverging"].sum()), "terms": c["n_terms"],
            "min_ess": float(fit.diagnostics()["ess_bulk"].min())}


def task_fits(n_m: int, n_i: int, n_e: int, n_k: int, draws: int, tune: int, chains: int,
              former: bool = False) -> None:
    """The binomial fit of one table without and with its task column, cold and warm."""
    from functools import partial

    from evaluq.item_model import _marginal
    from evaluq.item_model._model import build_model

    forms = ["zero-sum"] + (["iid"] if former else [])
    for form in forms:
        if form != "zero-sum":     # the default form's models compiled above are reused
            _marginal.build_model = partial(build_model, effects=form)  # type: ignore
            _marginal._COMPILED.clear()
        warm = {}
        for task in (False, True):
            for kind, seed in (("cold", 0), ("warm", 1)):
                table = simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, n_tasks=n_k,
                                       sigma_item=1.5, model_sd=0.5, rng=seed)
                r = _task_fit(table, task, draws, tune, chains)
                print(f"{n_m} models x {n_i} items x {n_e} epochs, {n_k} tasks, effects "
                      f"{form}, {'with' if task else 'without'} task=, {kind}: wall "
                      f"{r['wall']:6.2f} s (compile {r['compile']:5.2f}, sampling "
                      f"{r['sampling']:6.2f}), {r['terms']} terms, {r['steps']:.1f} leapfrog "
                      f"steps per draw (mean tree depth {r['depth']:.2f}), divergences "
                      f"{r['divergences']}, min ESS {r['min_ess']:.0f}", flush=True)
                if kind == "warm":
                    warm[task] = r
        ratio = warm[True]["sampling"] / warm[False]["sampling"]
        print(f"effects {form}: warm with / without tasks: sampling {ratio:.2f}x, wall "
              f"{warm[True]['wall'] / warm[False]['wall']:.2f}x, steps per draw "
              f"{warm[True]['steps'] / warm[False]['steps']:.2f}x, terms "
              f"{warm[True]['terms'] / warm[False]['terms']:.2f}x "
              f"[target <= 2x: {'ok' if ratio <= 2 else 'OVER TARGET'}]", flush=True)
    if former:
        _marginal.build_model = build_model
        _marginal._COMPILED.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--size", type=int, nargs=3, metavar=("M", "I", "E"))
    parser.add_argument("--skip-explicit", action="store_true")
    parser.add_argument("--skip-beta-binomial", action="store_true")
    parser.add_argument("--only-beta-binomial", action="store_true")
    parser.add_argument("--skip-tasks", action="store_true")
    parser.add_argument("--only-tasks", action="store_true")
    parser.add_argument("--former-effects", action="store_true")
    args = parser.parse_args()
    n_m, n_i, n_e = args.size or ((5, 300, 3) if args.quick else (20, 10_000, 5))
    draws, tune, chains = (100, 100, 2) if args.quick else (1000, 1000, 2)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; sampler nutpie; "
          f"draws={draws}, tune={tune}, chains={chains}")
    task_args = (((5, 300, 3, 2) if args.quick else (10, 1000, 3, 4))
                 + (draws, tune, chains) + (args.former_effects,))
    if args.only_tasks:
        task_fits(*task_args)
        return
    if args.only_beta_binomial:
        betabinomial_fits(*((4, 60, 3) if args.quick else (10, 2000, 5)),
                          *((100, 100, 2) if args.quick else (500, 500, 2)))
        return
    label = f"{n_m} models x {n_i} items x {n_e} epochs"
    start = time.perf_counter()
    item_statistics(_table(n_m, n_i, n_e, 0), **COLS)
    print(f"{label}: table -> sufficient statistics {time.perf_counter() - start:.2f} s "
          f"({n_m * n_i * n_e} rows)")
    text, _ = marginal_fit(_table(n_m, n_i, n_e, 0), draws, tune, chains)
    print(f"{label} marginal cold: {text}")
    text, warm = marginal_fit(_table(n_m, n_i, n_e, 1), draws, tune, chains)
    flag = "ok" if warm <= 30 else "OVER TARGET"
    print(f"{label} marginal warm: {text}  [target sampling <= 30 s: {flag}]")
    if not args.skip_tasks:
        task_fits(*task_args)
    if not args.skip_beta_binomial:
        betabinomial_fits(*((4, 60, 3) if args.quick else (10, 2000, 5)),
                          *((100, 100, 2) if args.quick else (500, 500, 2)))
    if args.skip_explicit:
        return
    text, explicit = explicit_fit(_table(n_m, n_i, n_e, 1), draws, tune, chains)
    ratio = explicit / warm
    print(f"{label} explicit items: {text}; speed-up {ratio:.1f}x "
          f"[target >= 10x: {'ok' if ratio >= 10 else 'UNDER TARGET'}]")


if __name__ == "__main__":
    main()

"""Benchmark: the item model's families against the binomial family, in one run (issue 34).

At 10 models x 1,000 items x 3 epochs with 4 tasks (a 2PL simulation with run drift rho 0.2,
as in the issue), each family is fitted twice on data of the same shape: cold (the first fit,
compiling or loading the compiled model) and warm (the second fit, on new data of the same
shape: the compiled model reused, unless the new data centre the task effects differently,
which the compile seconds then show). Printed per fit: wall, compile, sampling and
post-processing seconds, divergences, the largest R-hat and smallest bulk ESS; then each
family's warm wall time without compiling over the binomial's, against the issue's targets
(beta-binomial <= 3x, ordinal with item effects <= 3x).

The ordinal fit is of ratings on 5 levels (one grader, 3 epochs, the same 4 tasks: 10 x 1,000
x 3 ratings), simulated by ``simulate_ratings`` with a task column added.

``--quick``: 4 x 60 x 3 with few draws (smoke). ``--size M I E`` another size;
``--families`` a subset (the binomial always runs: it is the baseline).

Run: ``python benchmarks/bench_item_families.py``
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning, simulate_items
from evaluq.item_model._simulate import simulate_ratings

COLS = {"model": "model", "item": "item", "score": "score", "task": "task", "epoch": "epoch"}
N_TASKS = 4
TARGETS = {"beta-binomial": 3.0, "ordinal": 3.0}


def binary_table(n_m: int, n_i: int, n_e: int, rng: int):
    """A 2PL simulation with run drift (rho 0.2) and 4 tasks."""
    return simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, n_tasks=N_TASKS,
                          sigma_item=1.5, model_sd=0.5, discrimination_sd=0.3,
                          overdispersion=0.2, rng=rng)


def rating_table(n_m: int, n_i: int, n_e: int, rng: int):
    """Ratings 0..4 (one grader) with the items split over 4 tasks."""
    table = simulate_ratings(n_models=n_m, n_items=n_i, n_graders=1, n_levels=5,
                             n_epochs=n_e, sigma_item=1.0, rng=rng)
    table["task"] = "t" + (table["item"] % N_TASKS).astype(str)
    return table


def one_fit(family: str, size: tuple[int, int, int], seed: int, settings: dict) -> dict:
    table = (rating_table if family == "ordinal" else binary_table)(*size, seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(table, **COLS, family=family, rng=1, **settings)
    wall = time.perf_counter() - start
    diag = fit.diagnostics()
    c = fit.config
    return {"wall": wall, "compile": c["compile_seconds"], "sampling": c["sampling_seconds"],
            "posterior": c["posterior_seconds"], "form": c.get("form", "?"),
            "divergences": diag.attrs["divergences"], "rhat": float(diag["r_hat"].max()),
            "ess": float(diag["ess_bulk"].min())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--size", type=int, nargs=3, metavar=("M", "I", "E"))
    parser.add_argument("--families", nargs="*", default=["beta-binomial", "ordinal"],
                        choices=["beta-binomial", "ordinal"])
    args = parser.parse_args()
    size = tuple(args.size or ((4, 60, 3) if args.quick else (10, 1000, 3)))
    settings = ({"draws": 100, "tune": 100, "chains": 2} if args.quick
                else {"draws": 1000, "tune": 1000, "chains": 2})
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; sampler nutpie; "
          f"{settings}; {size[0]} models x {size[1]} items x {size[2]} epochs, {N_TASKS} tasks")
    warm = {}
    for family in ("binomial", *args.families):
        for kind, seed in (("cold", 0), ("warm", 1)):
            r = one_fit(family, size, seed, settings)
            print(f"{family:>13} {kind}: wall {r['wall']:7.2f} s (compile {r['compile']:6.2f}, "
                  f"sampling {r['sampling']:7.2f}, posterior {r['posterior']:6.2f}), form "
                  f"{r['form']}, divergences {r['divergences']}, max R-hat {r['rhat']:.3f}, "
                  f"min ESS {r['ess']:.0f}", flush=True)
            # a second table of the same shape can still compile anew: the centring of the
            # task effects is the data's (``_model.centred_effects``), part of the key
            warm[family] = r["wall"] - r["compile"]
    for family in args.families:
        ratio = warm[family] / warm["binomial"]
        flag = "ok" if ratio <= TARGETS[family] else "OVER TARGET"
        print(f"{family} warm / binomial warm: {ratio:.2f}x [target <= "
              f"{TARGETS[family]:.0f}x: {flag}]")
    print(f"(the binomial's warm fit: {warm['binomial']:.2f} s without compiling; the machine "
          "is shared: read the ratios)")


if __name__ == "__main__":
    main()

"""How often a default hierarchical fit of a clean simulated cube warns (issue 17: <= 1%).

Nine cube types, each fitted ``n`` times with the defaults (``eq.fit_hierarchical(cube,
rng=r)``): the demo's cube (refitted with ``n`` sampler seeds), and cubes built from shared
per-item resamples (``tests/hierarchical/paired_sim.py``) of M models x L languages x 5
seeds x 100 replicates with error correlation rho and true tau_m:

    5 x 4 (rho 0.5, tau_m 1), 5 x 8 (rho 0, 0.5, 0.9 with tau_m 0.3; rho 0.5 with tau_m 1),
    6 x 61 (rho 0.5, tau_m 0.3), 20 x 8 (rho 0.9, tau_m 0.5), 8 x 30 (rho 0, tau_m 1).

Every fit comes from the model it is fitted with, so every warning is a false alarm. Printed
per type and in total: the fits that warned, those that were retried (``fit.config
["retried"]``: the first run failed a check), the divergences and the mean leapfrog steps.
``--no-retry`` fits with ``retry=False`` (the rate of one run).

Run: ``python scripts/hierarchical_warning_battery.py [n] [--seed S] [--no-retry]`` (default
n = 16, seed 1: 144 fits, about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

import evaluq as eq
from evaluq.demo import demo_cube
from evaluq.hierarchical import ConvergenceWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hierarchical"))
from paired_sim import Setting, shared_cube

TYPES = ("demo", (5, 4, 0.5, 1.0), (5, 8, 0.0, 0.3), (5, 8, 0.5, 0.3), (5, 8, 0.9, 0.3),
         (5, 8, 0.5, 1.0), (6, 61, 0.5, 0.3), (20, 8, 0.9, 0.5), (8, 30, 0.0, 1.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="?", default=16, help="fits per cube type")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulated cubes")
    parser.add_argument("--no-retry", action="store_true", help="fit with retry=False")
    args = parser.parse_args()
    totals = np.zeros(2, dtype=int)
    for kind in TYPES:
        gen = np.random.default_rng(args.seed)
        warned = retried = divergences = 0
        steps = []
        for r in range(args.n):
            if kind == "demo":
                cube = demo_cube(rng=0)
            else:
                n_m, n_l, rho, tau = kind
                cube = shared_cube(gen, Setting(n_models=n_m, n_languages=n_l, n_seeds=5,
                                                n_boot=100, rho=rho, tau_m=tau))[0]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                fit = eq.fit_hierarchical(cube, rng=r + 1000 * args.seed,
                                          retry=not args.no_retry)
            warned += any(issubclass(w.category, ConvergenceWarning) for w in caught)
            retried += "retried" in fit.config
            stats = fit.idata["sample_stats"]
            divergences += int(stats["diverging"].sum())
            steps.append(float(stats["n_steps"].mean()))
        totals += (warned, args.n)
        label = kind if kind == "demo" else "{} x {}, rho {}, tau_m {}".format(*kind)
        print(f"{label:28s} warned {warned:2d}/{args.n}  retried {retried:2d}  divergences "
              f"{divergences:3d}  leapfrog/draw {np.mean(steps):5.1f}", flush=True)
    print(f"{'TOTAL':28s} warned {totals[0]}/{totals[1]} ({totals[0] / totals[1]:.1%}), "
          f"retry {'off' if args.no_retry else 'on'}, cube seed {args.seed}")


if __name__ == "__main__":
    main()

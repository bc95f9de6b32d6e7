"""The hierarchical model's sensitivity to the scale of the tau_m prior (the model card's table).

Cubes of 5 models x 8 languages x 5 seeds built from shared per-item resamples
(``tests/hierarchical/paired_sim.py``), rho 0.5, true ``tau_m`` 1 for every model, a cell's
test-set SD 1; each is fitted with ``priors={"tau_m_sigma": f * default}`` for f in 0.2, 1
and 5 (4 chains x 250 draws, tune 400). Printed per f: the default scale, the posterior mean
of ``tau_m`` and of the pooled ``tau_m_scale`` (means over cubes and models), the 95% width
of mu[0] - mu[4] (population scope) and of the benchmark means' difference, and the
coverage of the true differences at 95% over the cubes' 10 pairs.

Run: ``python scripts/hierarchical_prior_sensitivity.py [n_cubes]`` (default 12).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning, cube_statistics, default_priors

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "hierarchical"))
from paired_sim import Setting, shared_cube

FACTORS = (0.2, 1.0, 5.0)


def _width_and_cover(draws: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """95% width of model 0 minus model 4 and the coverage of all pairs' true differences."""
    iu = np.triu_indices(draws.shape[0], k=1)
    diffs = draws[iu[0]] - draws[iu[1]]
    lo, hi = np.quantile(diffs, [0.025, 0.975], axis=-1)
    truth_diff = truth[iu[0]] - truth[iu[1]]
    first_last = (hi - lo)[(iu[0] == 0) & (iu[1] == draws.shape[0] - 1)][0]
    return float(first_last), float(np.mean((lo <= truth_diff) & (truth_diff <= hi)))


def main(n_cubes: int = 12) -> None:
    gen = np.random.default_rng(2026)
    setting = Setting(rho=0.5, tau_m=1.0)
    rows: dict[float, list[list[float]]] = {f: [] for f in FACTORS}
    defaults = []
    for _ in range(n_cubes):
        cube, theta, mu = shared_cube(gen, setting)
        default = default_priors(cube_statistics(cube))["tau_m_sigma"]
        defaults.append(default)
        for f in FACTORS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fit = eq.fit_hierarchical(cube, priors={"tau_m_sigma": f * default}, draws=250,
                                          tune=400, rng=gen, retry=False)
            post = fit.posterior.stack(s=("chain", "draw"))
            pop = _width_and_cover(post["mu"].transpose("model", "s").values, mu)
            bench = _width_and_cover(post["benchmark_mean"].transpose("model", "s").values,
                                     theta.mean(1))
            rows[f].append([float(post["tau_m"].mean()), float(post["tau_m_scale"].mean()),
                            *pop, *bench])
    print(f"{n_cubes} cubes 5 x 8 x 5, rho 0.5, true tau_m 1; default tau_m_sigma averaged "
          f"{np.mean(defaults):.2f}")
    print("| `tau_m_sigma` | posterior mean of `tau_m` | of `tau_m_scale` | 95% width of "
          "mu[0] - mu[4] (population) | population 95% coverage | 95% width, benchmark "
          "scope | benchmark 95% coverage |")
    print("|---|---|---|---|---|---|---|")
    for f in FACTORS:
        m = np.mean(rows[f], axis=0)
        label = "default" if f == 1.0 else f"{f:g} x default"
        print(f"| {label} | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.2f} | {m[3]:.3f} | {m[4]:.2f} | "
              f"{m[5]:.3f} |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)

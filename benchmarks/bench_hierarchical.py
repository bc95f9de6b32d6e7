"""Benchmark: fit_hierarchical on the three cube sizes of issue 11.

Targets on 2 cores: cold fit (with compilation) under 20 s and warm refit under 3 s
(50 x 500 x 5: under 30 s and 10 s); zero divergences; R-hat <= 1.01 and bulk ESS >= 400 for
every reported quantity. For each size the first fit in the process compiles the model
(cold; pytensor's cache under ~/.pytensor may shorten it), the second refits the compiled
model on a new cube of the same shape (warm). Printed per fit: wall time, compile time,
sampling time, divergences, the largest R-hat and the smallest bulk / tail ESS.

Run: ``python benchmarks/bench_hierarchical.py``
"""

from __future__ import annotations

import time
import warnings

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning

SIZES = ((4, 12, 5, 200, 20.0, 3.0), (6, 61, 10, 1000, 20.0, 3.0), (50, 500, 5, 100, 30.0, 10.0))


def one_fit(n_models: int, n_languages: int, n_seeds: int, n_boot: int,
            rng: int) -> tuple[str, float]:
    cube = eq.simulate_cube(n_models=n_models, n_languages=n_languages, n_seeds=n_seeds,
                            n_boot=n_boot, sigma_language=1.0, sigma_between=1.0,
                            model_means=[0.1 * i for i in range(n_models)], rng=rng)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = eq.fit_hierarchical(cube, rng=rng)
    wall = time.perf_counter() - start
    diag = fit.diagnostics()
    return (f"wall {wall:6.2f} s  compile {fit.config['compile_seconds']:6.2f} s  sampling "
            f"{fit.config['sampling_seconds']:5.2f} s  divergences {diag.attrs['divergences']}"
            f"  max R-hat {diag['r_hat'].max():.4f}  min ESS bulk {diag['ess_bulk'].min():.0f}"
            f" tail {diag['ess_tail'].min():.0f}"), wall


def main() -> None:
    print(f"sampler: {'nutpie' if eq.hierarchical.nutpie_available() else 'pymc'}; "
          "draws=1000, tune=1000, chains=2")
    for n_m, n_l, n_s, n_b, cold_target, warm_target in SIZES:
        label = f"{n_m} x {n_l} x {n_s} (B={n_b})"
        for kind, rng, target in (("cold", 0, cold_target), ("warm", 1, warm_target)):
            text, wall = one_fit(n_m, n_l, n_s, n_b, rng)
            flag = "ok" if wall < target else "OVER TARGET"
            print(f"{label:24s} {kind}: {text}  [target < {target:g} s: {flag}]")


if __name__ == "__main__":
    main()

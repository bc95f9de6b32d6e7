"""Benchmark of eq.agreement's vectorised bootstraps against the obvious loops.

Run from the repository root: ``PYTHONPATH=src python benchmarks/bench_agreement.py``
(``--quick``: a smoke run with 50 resamples).
Prints wall time and peak traced memory for each statistic, next to a baseline that
resamples items explicitly and calls the reference implementation once per resample
(scikit-learn for kappa, the ``krippendorff`` package for alpha, a numpy ANOVA for ICC);
the baseline runs fewer resamples and its time is scaled up.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score

import evaluq as eq

N_RESAMPLES = 2000
N_BASELINE = 40


def measure(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall time of one untraced run, then peak traced memory of a second run."""
    t0 = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t0
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak / 2**20, out


def icc_anova(x: np.ndarray) -> np.ndarray:
    n, k = x.shape
    g = x.mean()
    ssr = k * ((x.mean(1) - g) ** 2).sum()
    ssc = n * ((x.mean(0) - g) ** 2).sum()
    sst = ((x - g) ** 2).sum()
    msr, msc = ssr / (n - 1), ssc / (k - 1)
    mse, msw = (sst - ssr - ssc) / ((n - 1) * (k - 1)), (sst - ssr) / (n * (k - 1))
    return np.array([(msr - msw) / (msr + (k - 1) * msw),
                     (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n),
                     (msr - mse) / (msr + (k - 1) * mse), (msr - msw) / msr,
                     (msr - mse) / (msr + (msc - mse) / n), (msr - mse) / msr])


def report(name: str, ours: tuple[float, float, Any], base: tuple[float, float, Any],
           ours_se: float, base_se: float) -> None:
    per_base = base[0] / N_BASELINE * N_RESAMPLES
    print(f"{name:<28} evaluq {ours[0]:7.3f} s  peak {ours[1]:7.1f} MiB | loop baseline "
          f"{per_base:8.2f} s (scaled from {N_BASELINE})  peak {base[1]:6.1f} MiB | "
          f"speed-up x{per_base / ours[0]:6.0f} | boot SE {ours_se:.4f} vs {base_se:.4f}")


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{N_RESAMPLES} bootstrap resamples each (baseline SE from only {N_BASELINE})\n")
    eq.agreement.cohen_kappa([0, 1, 1], [0, 1, 0], n_resamples=10)  # warm-up (lazy imports)

    # Cohen's kappa, 20,000 items, 5 labels
    n = 20_000
    truth = rng.integers(0, 5, n)
    a = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 5, n))
    b = np.where(rng.random(n) < 0.7, truth, rng.integers(0, 5, n))
    ours = measure(lambda: eq.agreement.cohen_kappa(a, b, weights="quadratic",
                                                     n_resamples=N_RESAMPLES, rng=1))

    def kappa_loop() -> np.ndarray:
        idx = rng.integers(0, n, (N_BASELINE, n))
        return np.array([cohen_kappa_score(a[i], b[i], weights="quadratic") for i in idx])

    base = measure(kappa_loop)
    report("kappa (20k items, K=5)", ours, base, float(ours[2].standard_error),
           float(base[2].std(ddof=1)))

    # Krippendorff's alpha, 5,000 items x 4 raters, 15% missing
    n = 5_000
    truth = rng.integers(1, 8, n)
    ratings = np.where(rng.random((n, 4)) < 0.3, rng.integers(1, 8, (n, 4)),
                       truth[:, None]).astype(float)
    ratings[rng.random(ratings.shape) < 0.15] = np.nan
    for level in ("nominal", "ordinal", "interval"):
        ours = measure(lambda lv=level: eq.agreement.krippendorff_alpha(
            ratings, level_of_measurement=lv, n_resamples=N_RESAMPLES, rng=2))

        def alpha_loop(lv: str = level) -> np.ndarray:
            idx = rng.integers(0, n, (N_BASELINE, n))
            return np.array([krippendorff.alpha(reliability_data=ratings[i].T,
                                                level_of_measurement=lv) for i in idx])

        base = measure(alpha_loop)
        report(f"alpha {level} (5k x 4, V=7)", ours, base, float(ours[2].standard_error),
               float(base[2].std(ddof=1)))

    # ICC, 5,000 items x 6 raters
    n = 5_000
    x = rng.normal(0, 2, (n, 1)) + rng.normal(0, 1, (1, 6)) + rng.normal(0, 1, (n, 6))
    ours = measure(lambda: eq.agreement.icc(x, n_resamples=N_RESAMPLES, rng=3))

    def icc_loop() -> np.ndarray:
        idx = rng.integers(0, n, (N_BASELINE, n))
        return np.array([icc_anova(x[i]) for i in idx])

    base = measure(icc_loop)
    report("ICC (5k x 6), ICC(2,1)", ours, base,
           float(ours[2].standard_error.sel(form="ICC(2,1)")), float(base[2][:, 1].std(ddof=1)))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: few resamples")
    if parser.parse_args().quick:
        N_RESAMPLES, N_BASELINE = 50, 3
    main()

"""Coverage of eq.intervals' Student-t and ARF intervals (models/scarce_observation_intervals.md).

Run from the repository root: ``PYTHONPATH=src python benchmarks/calibration_intervals.py``
(about 20 s; ``--quick``: the Student-t part and Table 1 only). The simulations use the
settings and seeds of the slow tests in ``tests/test_intervals.py`` (which assert binomial
bounds on the same counts); this script prints the rates those tests only check.
Each rate is followed by its binomial standard error.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

import evaluq as eq
from evaluq.intervals import _arf_normal_noncoverage, _arf_normal_worst_d

TABLE1_ALPHA = [0.5, 1 / 3, 0.25, 0.2, 0.1, 0.05, 0.01]
TABLE1_NORMAL_PAPER = [0.05, 1.26, 1.8, 2.31, 4.79, 9.66, 48.39]
TABLE1_UNKNOWN_PAPER = [0.5, 1.87, 2.91, 3.94, 8.97, 18.99, 99]


def rate(covered: float, n: int) -> str:
    p = covered / n
    return f"{p:.4f} (se {np.sqrt(p * (1 - p) / n):.4f})"


def arf_coverage(errors: np.ndarray, mus: np.ndarray, sigmas: np.ndarray, guesses: np.ndarray,
                 alpha: float, distribution: str) -> np.ndarray:
    """Coverage count per (mu, sigma, guess) cell; ``errors`` standardised draws."""
    mu = mus[:, None, None, None]
    sigma = sigmas[None, :, None, None]
    g = guesses[None, None, :, None]
    y, g = np.broadcast_arrays(mu + sigma * errors, g)
    res = eq.intervals.arf_interval(y, g, arf_alpha=alpha, distribution=distribution)
    return ((res.lower.values <= mu) & (mu <= res.upper.values)).sum(axis=-1)


def student_t() -> None:
    print("Student-t interval, normal scores (mu = 70, sigma = 6), 40,000 data sets per n")
    print(f"{'n':>4} {'80% coverage':>22} {'95% coverage':>22}")
    for n in (2, 3, 5, 10):
        rng = np.random.default_rng(100 + n)
        n_sets, mu = 40_000, 70.0
        x = rng.normal(mu, 6.0, size=(n_sets, n))
        res = eq.intervals.t_interval(x, confidence_level=0.8)
        c80 = int(((res.lower <= mu) & (mu <= res.upper)).sum())
        ci = res.confidence_interval(0.95)
        c95 = int(((ci.sel(ci_bound="lower") <= mu) & (mu <= ci.sel(ci_bound="upper"))).sum())
        print(f"{n:>4} {rate(c80, n_sets):>22} {rate(c95, n_sets):>22}")


def table1() -> None:
    print("\nARF multiplier k: computed vs Table 1 of Gladkoff et al. (2022)")
    print(f"{'alpha':>7} {'k normal':>9} {'paper':>6} {'k unknown':>10} {'paper':>6}")
    k_n = eq.intervals.arf_k(np.array(TABLE1_ALPHA))
    k_u = eq.intervals.arf_k(np.array(TABLE1_ALPHA), distribution="unknown")
    for a, kn, pn, ku, pu in zip(TABLE1_ALPHA, k_n, TABLE1_NORMAL_PAPER, k_u,
                                 TABLE1_UNKNOWN_PAPER, strict=True):
        print(f"{a:7.4f} {kn:9.3f} {pn:6g} {ku:10.3f} {pu:6g}")
    z = np.random.default_rng(1).standard_normal(200_000)
    for k in (0.05, 0.5):
        cov = [(np.abs(z + d) <= 2 * k * np.abs(z - d)).mean() for d in (0.01, 0.1, 1.0, 3.0)]
        print(f"erratum, alpha = 0.5 (normal), k = {k}: coverage at d = 0.01, 0.1, 1, 3: "
              + ", ".join(f"{c:.3f}" for c in cov) + " (200,000 draws; nominal 0.5)")
    for k_paper, level in ((1.8, 0.75), (2.31, 0.8)):
        print(f"paper's k = {k_paper}: guaranteed level under normal errors "
              f"{1 - eq.intervals.arf_alpha(k_paper):.4f} (nominal {level})")


def arf_normal() -> None:
    print("\nARF 'normal' k under normal errors: grid mu {0, 50, 90} x sigma {0.5, 3, 20} x "
          "g {50, 90, 92, 100}, 20,000 draws")
    rng = np.random.default_rng(7)
    errors = rng.standard_normal(20_000)
    mus, sigmas = np.array([0.0, 50.0, 90.0]), np.array([0.5, 3.0, 20.0])
    guesses = np.array([50.0, 90.0, 92.0, 100.0])
    for alpha in (0.5, 0.25, 0.1):
        k = eq.intervals.arf_k(alpha)
        d_worst = float(_arf_normal_worst_d(k)) if alpha < 0.5 else 0.3
        counts = arf_coverage(errors, mus, sigmas, guesses, alpha, "normal")
        worst = arf_coverage(errors, mus[:1], sigmas[:1], mus[:1] + d_worst * sigmas[:1], alpha,
                             "normal").item()
        print(f"  alpha {alpha:<5} k {k:6.3f}: min coverage over the grid "
              f"{rate(counts.min(), errors.size)}, at the worst d = {d_worst:.3f}: "
              f"{rate(worst, errors.size)} (nominal {1 - alpha})")
    # exact worst case over a fine d grid, no simulation
    d = np.concatenate([np.geomspace(1e-6, 1e-2, 50), np.linspace(1e-2, 6, 60_000)])
    print("  exact worst-case non-coverage over 60,050 values of d: " + ", ".join(
        f"alpha {a:g} -> {_arf_normal_noncoverage(eq.intervals.arf_k(a), d).max():.6f}"
        for a in (1 / 3, 0.25, 0.2, 0.1, 0.05, 0.01)))


SYMMETRIC_UNIMODAL = {
    "uniform": lambda rng, n: rng.uniform(-1, 1, n),
    "normal": lambda rng, n: rng.standard_normal(n),
    "laplace": lambda rng, n: rng.laplace(size=n),
    "t3": lambda rng, n: rng.standard_t(3, n),
    "cauchy": lambda rng, n: rng.standard_cauchy(n),
}


def arf_unknown() -> None:
    print("\nARF 'unknown' k: min coverage over mu {0, 80} x sigma {1, 10} x 83 guesses in "
          "[-60, 140], 8,000 draws")
    print(f"{'errors':>10} " + " ".join(f"{'alpha ' + str(a):>22}" for a in (0.5, 0.2, 0.05)))
    mus, sigmas = np.array([0.0, 80.0]), np.array([1.0, 10.0])
    guesses = np.concatenate([np.linspace(-60, 140, 81), [80.5, 81.0]])
    for name, draw in SYMMETRIC_UNIMODAL.items():
        errors = draw(np.random.default_rng(11), 8_000)
        cells = [rate(arf_coverage(errors, mus, sigmas, guesses, a, "unknown").min(), 8_000)
                 for a in (0.5, 0.2, 0.05)]
        print(f"{name:>10} " + " ".join(f"{c:>22}" for c in cells))
    errors = (np.random.default_rng(13).gamma(20.0, size=8_000) - 20.0) / np.sqrt(20.0)
    guesses = np.linspace(-5, 5, 101)
    cells = [rate(arf_coverage(errors, np.array([0.0]), np.array([1.0]), guesses, a,
                               "unknown").min(), 8_000) for a in (0.25, 0.2, 0.1, 0.05)]
    print("gamma(20) errors (skewness 0.45), min over 101 guesses in [-5, 5] sigma, alpha "
          "0.25 / 0.2 / 0.1 / 0.05: " + ", ".join(cells))
    errors = np.random.default_rng(12).exponential(size=20_000) - 1.0
    counts = arf_coverage(errors, np.array([0.0]), np.array([1.0]), np.linspace(-3, 3, 61),
                          0.2, "unknown").ravel()
    g_at = np.linspace(-3, 3, 61)[counts.argmin()]
    print(f"exponential errors (centred at the mean), alpha 0.2: min coverage "
          f"{rate(counts.min(), 20_000)} at g - mu = {g_at:+.1f} sigma (nominal 0.8)")
    half = arf_coverage(errors, np.array([0.0]), np.array([1.0]), np.array([0.5]), 0.5,
                        "unknown").item()
    print(f"exponential errors, alpha 0.5 (k = 1/2), g - mu = +0.5 sigma: coverage "
          f"{rate(half, 20_000)} = P(y < mu) = {stats.expon.cdf(1.0):.4f}, not 1/2")


def main(quick: bool = False) -> None:
    student_t()
    table1()
    if not quick:
        arf_normal()
        arf_unknown()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: the Student-t rates and Table 1 only")
    main(quick=parser.parse_args().quick)

"""Coverage of eq.agreement's percentile bootstrap intervals, as figures (models/agreement.md).

Run from the repository root: ``PYTHONPATH=src python benchmarks/calibration_agreement.py``
(2-3 minutes; ``--only icc`` / ``--only kappa`` / ``--only alpha`` for one family,
``--seed S`` for other simulated data sets, ``--quick`` for a smoke run). For each
coefficient, 1000 simulated data sets with a known population value, at 30 and at 150
items; each fit draws 999 item resamples and reports its 90% percentile interval.
Printed per design: the coverage (with
its binomial SE), the mean bootstrap SE next to the SD of the estimate across data sets,
and the mean estimate next to the population value.

Designs (all ratings independent given the item):

- kappa (unweighted, quadratic): 2 raters copy a uniform true label (K = 3) with
  probability 0.7, else draw a uniform label; the population kappa follows from the cell
  probabilities (the design of the slow test in tests/test_agreement.py);
- alpha nominal: 3 raters from the same design, 10% of ratings missing at random;
- alpha interval: ``x = t + e``, t ~ N(0, 1), e ~ N(0, 0.7^2), 3 raters, 10% missing;
  population alpha ``1 / (1 + 0.49)``;
- ICC: ``x = t + r_j + e`` with fixed rater offsets r = (0, 0.5, -0.3), t ~ N(0, 1),
  e ~ N(0, 0.7^2), k = 3; population ICC(3,1) = 1 / 1.49, ICC(3,k) by Spearman-Brown,
  ICC(2,1) = 1 / (1 + 0.49 + var(r, ddof=1)).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

import evaluq as eq
from evaluq.agreement import _kappa_from_confusion, _kappa_weights

N_SETS = 1000
N_RESAMPLES = 999
LEVEL = 0.9
K_LABELS, KEEP = 3, 0.7
SIGMA_E = 0.7
OFFSETS = np.array([0.0, 0.5, -0.3])


def copy_labels(rng: np.random.Generator, n_items: int, n_raters: int) -> np.ndarray:
    truth = rng.integers(0, K_LABELS, (n_items, 1))
    noise = rng.integers(0, K_LABELS, (n_items, n_raters))
    return np.where(rng.random((n_items, n_raters)) < KEEP, truth, noise)


def kappa_population(weights: str | None) -> float:
    p_given_t = KEEP * np.eye(K_LABELS) + (1 - KEEP) / K_LABELS  # P(r = i | t), rows t
    cells = p_given_t.T @ p_given_t / K_LABELS  # P(r1 = i, r2 = j)
    return float(_kappa_from_confusion(cells, _kappa_weights(K_LABELS, weights)))


def with_missing(rng: np.random.Generator, x: np.ndarray, frac: float = 0.1) -> np.ndarray:
    x = x.astype(float)
    x[rng.random(x.shape) < frac] = np.nan
    return x


def continuous(rng: np.random.Generator, n_items: int, offsets: np.ndarray) -> np.ndarray:
    return (rng.normal(0, 1, (n_items, 1)) + offsets[None, :]
            + rng.normal(0, SIGMA_E, (n_items, offsets.size)))


def study(fit: Callable[[np.random.Generator, int, int], object],
          targets: dict[str, tuple[float, Callable[[object], tuple[float, ...]]]],
          seed: int) -> None:
    """Fit each simulated data set once; read each target (name: truth, selector) from it.

    Data set s of a design is drawn from ``default_rng(seed)`` (one stream per design and
    size) and bootstrapped with ``rng=s``.
    """
    for n_items in (30, 150):
        rng = np.random.default_rng(seed)
        fits = [fit(rng, n_items, s) for s in range(N_SETS)]
        for name, (truth, select) in targets.items():
            est, se, lo, hi = np.array([select(f) for f in fits]).T
            ok = ~np.isnan(lo)
            p = ((lo <= truth) & (truth <= hi))[ok].mean()
            print(f"{name:<18} n={n_items:<4} coverage {p:.3f} "
                  f"(se {np.sqrt(p * (1 - p) / ok.sum()):.3f})  boot SE {np.nanmean(se):.4f} "
                  f"vs SD of estimates {np.nanstd(est, ddof=1):.4f}  mean estimate "
                  f"{np.nanmean(est):+.4f} (truth {truth:+.4f})"
                  + ("" if ok.all() else f"  [{(~ok).sum()} undefined]"))


def scalar(res: object) -> tuple[float, float, float, float]:
    r = res  # an AgreementResult
    lo, hi = r.interval.values  # type: ignore[attr-defined]
    return float(r.estimate), float(r.standard_error), lo, hi  # type: ignore[attr-defined]


def form(name: str) -> Callable[[object], tuple[float, float, float, float]]:
    def pick(res: object) -> tuple[float, float, float, float]:
        ci = res.interval.sel(form=name).values  # type: ignore[attr-defined]
        return (float(res.estimate.sel(form=name)),  # type: ignore[attr-defined]
                float(res.standard_error.sel(form=name)), ci[0], ci[1])  # type: ignore[attr-defined]
    return pick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026, help="data seed (default 2026)")
    parser.add_argument("--only", choices=["kappa", "alpha", "icc"], default=None,
                        help="run one family of designs")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 20 data sets, 99 resamples (rates not meaningful)")
    args = parser.parse_args()
    global N_SETS, N_RESAMPLES
    if args.quick:
        N_SETS, N_RESAMPLES = 20, 99
    run = {"kappa", "alpha", "icc"} if args.only is None else {args.only}
    print(f"{N_SETS} data sets per row, {N_RESAMPLES} item resamples per fit, "
          f"{LEVEL:.0%} percentile intervals, data seed {args.seed}\n")
    if "kappa" in run:
        for weights in (None, "quadratic"):
            study(lambda rng, n, s, w=weights: eq.agreement.cohen_kappa(
                      *copy_labels(rng, n, 2).T, labels=range(K_LABELS), weights=w,
                      n_resamples=N_RESAMPLES, rng=s, confidence_level=LEVEL),
                  {f"kappa {weights or 'unweighted'}": (kappa_population(weights), scalar)},
                  args.seed)
    if "alpha" in run:
        study(lambda rng, n, s: eq.agreement.krippendorff_alpha(
                  with_missing(rng, copy_labels(rng, n, 3)), n_resamples=N_RESAMPLES, rng=s,
                  confidence_level=LEVEL),
              {"alpha nominal": (kappa_population(None), scalar)}, args.seed)
        study(lambda rng, n, s: eq.agreement.krippendorff_alpha(
                  with_missing(rng, continuous(rng, n, np.zeros(3))),
                  level_of_measurement="interval", n_resamples=N_RESAMPLES, rng=s,
                  confidence_level=LEVEL),
              {"alpha interval": (1 / (1 + SIGMA_E**2), scalar)}, args.seed)
    if "icc" in run:
        rho = 1 / (1 + SIGMA_E**2)
        study(lambda rng, n, s: eq.agreement.icc(continuous(rng, n, OFFSETS),
                                                 n_resamples=N_RESAMPLES, rng=s,
                                                 confidence_level=LEVEL),
              {"ICC(2,1)": (1 / (1 + SIGMA_E**2 + OFFSETS.var(ddof=1)), form("ICC(2,1)")),
               "ICC(3,1)": (rho, form("ICC(3,1)")),
               "ICC(3,k)": (3 * rho / (1 + 2 * rho), form("ICC(3,k)"))}, args.seed)


if __name__ == "__main__":
    main()

"""Calibration studies added by issue 10 (``pytest -m slow``; each prints a CALIBRATION line
that ``scripts/calibration_table.py`` collects into ``docs/calibration.md``).

- nonparametric resampling of a cube of seeds without bootstrap replicates: nominal coverage
  when the data carry no test-set noise, and (as its ``test_set_noise`` attribute warns) far
  too little when they do;
- the MSE distribution's probability intervals on the Imhof and normal-limit routes.
"""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq import measurement_error as me


def report(study: str, measured: float, nominal: float, n: int, kind: str = "coverage") -> None:
    """One line of the calibration table."""
    se = np.sqrt(nominal * (1 - nominal) / n)
    print(f"\nCALIBRATION | {study} | {kind} | nominal {nominal:.3f} | measured {measured:.4f} "
          f"| n {n} | binomial SE {se:.4f}")


def within(hits: int, n: int, p: float, k: float = 4.0) -> bool:
    return abs(hits - n * p) <= k * np.sqrt(n * p * (1 - p))


def _seeds_only_sets(gen, n, n_lang, n_seeds, sigma_seed, sigma_test):
    """n independent data sets as the models of one cube; the test-set error (shared by the
    seeds of a cell) has SD sigma_test and is invisible without replicates."""
    theta = gen.normal(0, 2.0, (n, n_lang))
    score = (theta + gen.normal(0, sigma_test, (n, n_lang)))[..., None] \
        + gen.normal(0, sigma_seed, (n, n_lang, n_seeds))
    return theta, eq.from_arrays(score)


@pytest.mark.slow
def test_seeds_only_nonparametric_coverage():
    gen = np.random.default_rng(808)
    n, level = 1000, 0.9
    theta, cube = _seeds_only_sets(gen, n, 6, 20, 1.0, 0.0)
    plan = eq.resample(cube, n_resamples=2000, replication="nonparametric", seeds="rescaled",
                       rng=9, lazy=True)
    agg = eq.aggregate(plan, confidence_level=level)
    assert "NOT included" in agg.attrs["test_set_noise"]
    target = theta.mean(axis=1)
    ci = agg.ci
    hits = int(((ci.sel(ci_bound="lower").values <= target)
                & (target <= ci.sel(ci_bound="upper").values)).sum())
    report("resample nonparametric, seeds only (S=20, rescaled), no test-set noise",
           hits / n, level, n)
    assert within(hits, n, level), hits
    # the same design with an unseen test-set error of the seed SD: the interval is too narrow
    theta, cube = _seeds_only_sets(gen, n, 6, 20, 1.0, 1.0)
    plan = eq.resample(cube, n_resamples=2000, replication="nonparametric", seeds="rescaled",
                       rng=9, lazy=True)
    ci = eq.aggregate(plan, confidence_level=level).ci
    target = theta.mean(axis=1)
    hits = int(((ci.sel(ci_bound="lower").values <= target)
                & (target <= ci.sel(ci_bound="upper").values)).sum())
    report("resample nonparametric, seeds only, unseen test-set noise (documented: too narrow)",
           hits / n, level, n)
    assert hits < 0.4 * n                      # about 2 Phi(1.645 sqrt(0.05 / 1.05)) - 1 = 0.28


@pytest.mark.slow
@pytest.mark.parametrize(("route", "sigma"), [("imhof", [0.5, 1.0, 2.0, 0.3, 0.8]),
                                              ("ncx2", [0.7] * 5),
                                              ("normal", [1e-4, 2e-4, 3e-4, 1e-4, 5e-5])])
def test_mse_distribution_interval_holds_its_probability(route, sigma):
    """The 90% interval of the MSE distribution holds 90% of simulated MSEs (exact routes)
    and of the normal-limit route."""
    targets = np.array([1.0, 2.0, 3.0, 0.5, -1.0])
    predictions = np.array([1.5, 2.0, 2.0, 0.0, -0.4])
    dist = me.mse_distribution(targets, predictions, sigma)
    assert dist.routes.item() == route
    lo, hi = dist.confidence_interval(0.9).values
    n = 200_000
    z = np.random.default_rng(11).standard_normal((n, 5))
    mse = ((targets - predictions + np.asarray(sigma) * z) ** 2).mean(axis=1)
    hits = int(((lo <= mse) & (mse <= hi)).sum())
    report(f"measurement_error.mse_distribution interval, {route} route", hits / n, 0.9, n,
           "probability content")
    assert within(hits, n, 0.9), hits


@pytest.mark.slow
def test_rank_probability_is_uniform_for_equal_models():
    """Two models with equal true scores: P(rank 1) of the first is (about) uniform over
    replications of the benchmark (like a p-value), so it falls outside [0.05, 0.95] 10% of
    the time. Parametric resampling, fixed languages, independent test sets."""
    n, outside = 400, 0
    for i in range(n):
        cube = eq.simulate_cube(n_models=2, n_languages=8, n_seeds=4, n_boot=30,
                                model_means=[0.0, 0.0], sigma_between=0.0, rng=1000 + i)
        rd = eq.rank_distribution(eq.aggregate(eq.resample(cube, n_resamples=1000, rng=i)))
        p = float(rd.probability.isel(model=0).sel(rank=1))
        outside += int(p < 0.05 or p > 0.95)
    report("rank_distribution P(rank 1), two equal models (parametric, fixed languages)",
           outside / n, 0.10, n, "share outside [0.05, 0.95]")
    assert within(outside, n, 0.10), outside

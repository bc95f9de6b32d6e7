"""Calibration of the proportion intervals, McNemar's test and the paired Bayesian comparison
(``pytest -m slow``; each prints CALIBRATION lines that ``scripts/calibration_table.py``
collects into ``docs/calibration.md``).

The intervals' coverage is exact: the binomial pmf summed over the outcomes each interval covers
(:func:`evaluq.small_samples.proportions.interval_coverage`), checked here against a simulation
at every cell.
"""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq.small_samples.proportions import interval_coverage

NS = (10, 30, 100, 300, 1000)
PS = (0.01, 0.05, 0.5, 0.95, 0.99)
METHODS = ("wilson", "clopper-pearson", "jeffreys", "clt")


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_exact_coverage_table(method):
    cov = interval_coverage(NS, PS, method=method)
    for n in NS:
        for p in PS:
            c = float(cov.sel(trials=n, p=p))
            print(f"\nCALIBRATION | proportion_interval {method}, n={n}, p={p} | coverage "
                  f"(exact, binomial sum) | nominal 0.950 | measured {c:.4f} | n exact")
    # the same coverage by simulation (100,000 binomial draws per cell, all cells at once)
    rng = np.random.default_rng(0)
    draws = 100_000
    x = rng.binomial(np.array(NS)[:, None, None], np.array(PS)[None, :, None],
                     size=(len(NS), len(PS), draws))
    ci = eq.proportion_interval(x, np.broadcast_to(np.array(NS)[:, None, None], x.shape),
                                method=method).values
    p = np.array(PS)[None, :, None]
    simulated = ((ci[..., 0] <= p) & (p <= ci[..., 1])).mean(-1)
    se = np.sqrt(cov.values * (1 - cov.values) / draws)
    assert (np.abs(simulated - cov.values) <= 4 * se + 1e-12).all()
    if method == "clopper-pearson":          # guaranteed conservative
        assert (cov.values >= 0.95).all()
    elif method in ("wilson", "jeffreys"):    # documented: lowest 0.904 at n = 10, p = 0.01
        assert cov.values.min() >= 0.90
    else:                                     # documented: the CLT collapses near 0 and 1
        assert float(cov.sel(trials=10, p=0.01)) < 0.1
        assert float(cov.sel(trials=1000, p=0.5)) > 0.94


@pytest.mark.slow
@pytest.mark.parametrize("exact", [True, False])
def test_mcnemar_null_rejection_rate(exact):
    """Two models of equal accuracy with correlated errors: 2,000 benchmarks of 200 items."""
    rng = np.random.default_rng(1)
    n_sets, n_items = 2_000, 200
    easy = rng.random((n_sets, 1, n_items)) < 0.5
    right = (rng.random((n_sets, 2, n_items)) < 0.6) | easy
    res = eq.mcnemar_test(right[:, 0], right[:, 1], exact=exact)
    rate = float((res.pvalue < 0.05).mean())
    kind = "exact binomial" if exact else "chi-square, continuity corrected"
    print(f"\nCALIBRATION | mcnemar_test {kind} (conservative), 200 items | null rejection rate "
          f"| nominal 0.050 | measured {rate:.4f} | n {n_sets}")
    assert rate <= 0.05 + 4 * np.sqrt(0.05 * 0.95 / n_sets)


@pytest.mark.slow
def test_paired_bayes_probability_is_calibrated():
    """P(A > B) from the prior-predictive: among data sets simulated from the model's own prior,
    the posterior probability matches the frequency of A > B (binned)."""
    rng = np.random.default_rng(2)
    n_sets, n_items = 400, 30
    ta, tb = rng.random(n_sets), rng.random(n_sets)
    rho = 2 * rng.beta(4, 2, n_sets) - 1
    from scipy import special
    cov = np.stack([np.stack([np.ones(n_sets), rho], -1), np.stack([rho, np.ones(n_sets)], -1)],
                   -2)
    z = np.einsum("sij,snj->sni", np.linalg.cholesky(cov),
                  rng.standard_normal((n_sets, n_items, 2)))
    mu = np.stack([special.ndtri(ta), special.ndtri(tb)], -1)[:, None, :]
    right = (z + mu > 0).astype(int)
    res = eq.bayes_paired_comparison(right[..., 0], right[..., 1], n_draws=2_000, rng=3)
    prob = res.prob_better.values
    truth = ta > tb
    # a proper posterior: E[1(A > B) - P(A > B)] = 0 over the prior predictive
    gap = float((truth - prob).mean())
    se = float((truth - prob).std(ddof=1) / np.sqrt(n_sets))
    print(f"\nCALIBRATION | bayes_paired_comparison, prior-predictive (30 items) | mean of "
          f"1(A>B) - P(A>B) | nominal 0.000 | measured {gap:.4f} | n {n_sets}")
    assert abs(gap) <= 4 * se
    confident = prob > 0.9
    hits, expected = float(truth[confident].mean()), float(prob[confident].mean())
    print(f"\nCALIBRATION | bayes_paired_comparison, data sets with P(A>B) > 0.9 (30 items) | "
          f"frequency of A > B against their mean P(A>B) | nominal {expected:.3f} | measured "
          f"{hits:.4f} | n {int(confident.sum())}")
    assert abs(hits - expected) <= 4 * np.sqrt(expected * (1 - expected) / confident.sum())

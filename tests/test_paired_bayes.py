"""Bayesian paired comparison (latent bivariate probit) against a brute-force Monte Carlo of the
same model and against bayes_evals' own numbers (benchmarks/anchors/bayes_evals_paired.json)."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats

import evaluq as eq
from evaluq.small_samples.paired_bayes import _paired_probit_probability, _phi2, _solve_rho

ANCHOR = Path(__file__).resolve().parents[1] / "benchmarks" / "anchors" / "bayes_evals_paired.json"


def brute_force(table, n=1_000_000, seed=1):
    """P(theta_A > theta_B) by importance sampling from the prior (bayes_evals' scheme) with the
    exact bivariate normal CDF: a slow, independent route to the same posterior."""
    rng = np.random.default_rng(seed)
    ta, tb, rho = rng.random(n), rng.random(n), 2 * rng.beta(4, 2, n) - 1
    s = _phi2(special.ndtri(ta), special.ndtri(tb), rho)
    cells = np.clip(np.stack([s, ta - s, tb - s, 1 - ta - tb + s], -1), 1e-300, None)
    ll = (np.asarray(table, float) * np.log(cells)).sum(-1)
    w = np.exp(ll - ll.max())
    w /= w.sum()
    p = (w * (ta > tb)).sum()
    return p, np.sqrt((w * w * ((ta > tb) - p) ** 2).sum())


def test_phi2_matches_scipy():
    rng = np.random.default_rng(3)
    h, k = rng.normal(0, 2, 50), rng.normal(0, 2, 50)
    rho = rng.uniform(-0.99, 0.99, 50)
    h[:3], k[:2] = 0.0, 0.0
    ref = [stats.multivariate_normal([0, 0], [[1, r], [r, 1]]).cdf([a, b])
           for a, b, r in zip(h, k, rho, strict=True)]
    np.testing.assert_allclose(_phi2(h, k, rho), ref, rtol=0, atol=1e-9)


def test_rho_solves_the_cell_probability():
    rng = np.random.default_rng(4)
    cells = rng.dirichlet([3, 2, 2, 3], size=200)
    mu_a, mu_b = special.ndtri(cells[:, 0] + cells[:, 1]), special.ndtri(cells[:, 0] + cells[:, 2])
    rho = _solve_rho(mu_a, mu_b, cells[:, 0])
    np.testing.assert_allclose(_phi2(mu_a, mu_b, rho), cells[:, 0], rtol=0, atol=1e-10)


@pytest.mark.parametrize("table", [[10, 5, 2, 3], [18, 3, 1, 8], [5, 2, 2, 1], [40, 9, 4, 7],
                                   [0, 0, 0, 0], [2, 6, 0, 22]])
def test_matches_brute_force_monte_carlo(table):
    p, se, ess = _paired_probit_probability(np.array([table]), 20_000, np.random.default_rng(0))
    ref, ref_se = brute_force(table)
    # tolerance: 4 combined Monte Carlo SEs (both estimators report theirs)
    assert abs(p[0] - ref) <= 4 * np.hypot(se[0], ref_se)
    assert ess[0] > 2_000


def test_all_pairs_symmetry_ties_and_pair_form():
    rng = np.random.default_rng(0)
    table = (rng.random((5, 40)) < 0.7).astype(int)
    table[4] = table[3]                               # a twin: no discordant pairs
    res = eq.bayes_paired_comparison(table, n_draws=2_000, rng=1)
    p = res.prob_better.values
    assert res.prob_better.dims == ("model", "model_b")
    assert np.isnan(np.diag(p)).all()
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_allclose((p + p.T)[off], 1.0, rtol=0, atol=1e-15)
    assert p[3, 4] == 0.5
    assert res.mc_se.values[3, 4] == 0.0
    one = eq.bayes_paired_comparison(table[0], table[1], n_draws=2_000, rng=1)
    assert one.prob_better.dims == ()
    assert abs(float(one.prob_better) - p[0, 1]) < 5 * float(one.mc_se) + 1e-12


def test_agrees_with_bayes_evals_within_monte_carlo_error():
    record = json.loads(ANCHOR.read_text())
    worst = 0.0
    for run in record["datasets"]:
        data = np.array(run["correct"])
        ours = eq.bayes_paired_comparison(data, n_draws=20_000, rng=0)
        ref = np.array(run["prob_better_mean"])
        ref_se = np.array(run["prob_better_sd"]) / np.sqrt(record["replicates"])
        off = ~np.eye(len(data), dtype=bool)
        z = np.abs(ours.prob_better.values - ref)[off] / np.hypot(ours.mc_se.values,
                                                                ref_se)[off]
        worst = max(worst, float(z.max()))
    # tolerance: 4 combined Monte Carlo SEs (ours from the weights; bayes_evals' from the SD
    # of its replicates over sqrt(replicates))
    assert worst <= 4.0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_draws": 10}, "`n_draws` must be >= 100"),
    ({"prior": (0, 1)}, "`prior` must be in"),
    ({"rho_prior": 3}, "`rho_prior` must be a pair"),
    ({"rng": -1}, "`rng` must be a non-negative"),
])
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        eq.bayes_paired_comparison([1, 0, 1], [1, 1, 0], **kwargs)


def test_bad_scores():
    with pytest.raises(ValueError, match="`correct_b` must hold 0/1 correctness scores"):
        eq.bayes_paired_comparison([1, 0, 1], [1, 0.5, 0])
    with pytest.raises(ValueError, match="`correct_a` contains 1 NaN"):
        eq.bayes_paired_comparison([1, np.nan, 1], [1, 0, 0])

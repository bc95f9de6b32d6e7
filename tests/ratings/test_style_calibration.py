"""Calibration of style control's intervals (``fit_ratings(..., covariates=...)``, issue 33
item 4) by simulation: arenas of Davidson votes whose log-odds include two per-vote
covariates (the relative length difference of the two answers, and an integer formatting
difference), with known coefficients and strengths.

The votes of every arena are drawn at once (arrays over arena x vote); each arena is fitted
by the public ``fit_ratings``. Counted over the arenas: whether the 95 % interval of each
style coefficient and of each rating difference covers its truth, for the sandwich (HC0, and
CR1 by prompt: the votes are independent, so both must be nominal) and for the vote bootstrap
(percentile) on a subset. Figures: ``CALIBRATION`` lines (``scripts/calibration_table.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluq.ratings import fit_ratings

THETA = np.array([0.6, 0.3, 0.0, -0.2, -0.7])
BETA = np.array([0.8, -0.25])
NU = 0.8
N_VOTES, N_PROMPTS = 800, 40
N_ARENAS, N_BOOTSTRAP = 300, 80
NAMES = np.array([f"m{k}" for k in range(THETA.size)])
PAIRS = [(i, j) for i in range(THETA.size) for j in range(i + 1, THETA.size)]


def simulate_arenas(rng, n_arenas):
    """(arena, vote) arrays: models, outcome labels, covariates, prompts. The strong models
    write longer answers (the covariate is correlated with who is compared)."""
    m, n = THETA.size, N_VOTES
    a = rng.integers(0, m, (n_arenas, n))
    b = (a + rng.integers(1, m, (n_arenas, n))) % m
    typical = np.exp(6.0 + 0.5 * THETA)
    len_a = np.round(typical[a] * rng.lognormal(0.0, 0.5, (n_arenas, n)))
    len_b = np.round(typical[b] * rng.lognormal(0.0, 0.5, (n_arenas, n)))
    rel = (len_a - len_b) / (len_a + len_b)
    fmt = (rng.integers(0, 4, (n_arenas, n)) - rng.integers(0, 4, (n_arenas, n))).astype(float)
    d = THETA[a] - THETA[b] + BETA[0] * rel + BETA[1] * fmt
    den = np.exp(d / 2) + np.exp(-d / 2) + NU
    u = rng.random((n_arenas, n))
    pa, pb = np.exp(d / 2) / den, np.exp(-d / 2) / den
    winner = np.where(u < pa, "model_a", np.where(u < pa + pb, "model_b", "tie"))
    prompt = rng.integers(0, N_PROMPTS, (n_arenas, n))
    return a, b, winner, len_a, len_b, fmt, prompt


def _covers(fit, truth_diff):
    """Per coefficient and per rating difference: the 95 % interval covers the truth."""
    ci = fit.covariate_ci.values
    coef = (ci[:, 0] <= BETA) & (ci[:, 1] >= BETA)
    if fit.details["interval"] == "bootstrap":
        draws = fit.draws.values
        diff = np.stack([draws[:, i] - draws[:, j] for i, j in PAIRS], axis=1)
        lo, hi = np.quantile(diff, [0.025, 0.975], axis=0)
    else:
        cov, r = fit.covariance.values, fit.rating.values
        est = np.array([r[i] - r[j] for i, j in PAIRS])
        sd = np.array([np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j]) for i, j in PAIRS])
        lo, hi = est - 1.959963984540054 * sd, est + 1.959963984540054 * sd
    return coef, (lo <= truth_diff) & (truth_diff <= hi)


def coverage(rng):
    a, b, winner, len_a, len_b, fmt, prompt = simulate_arenas(rng, N_ARENAS)
    truth = np.array([THETA[i] - THETA[j] for i, j in PAIRS])
    out: dict[str, list] = {k: [] for k in ("hc0", "cr1", "bootstrap")}
    covariates = {"length": ("len_a", "len_b"), "format": "fmt"}
    for k in range(N_ARENAS):
        votes = pd.DataFrame({"model_a": NAMES[a[k]], "model_b": NAMES[b[k]],
                              "winner": winner[k], "len_a": len_a[k], "len_b": len_b[k],
                              "fmt": fmt[k], "prompt": prompt[k]})
        kw = {"scale": "logit", "covariates": covariates, "standardize_covariates": False,
              "n_resamples": 200}
        out["hc0"].append(_covers(fit_ratings(votes, **kw), truth))
        out["cr1"].append(_covers(fit_ratings(votes, cluster="prompt", **kw), truth))
        if k < N_BOOTSTRAP:
            out["bootstrap"].append(_covers(fit_ratings(votes, interval="bootstrap", rng=k,
                                                        **kw), truth))
    return {kind: (float(np.mean([c for c, _ in v])), float(np.mean([d for _, d in v])))
            for kind, v in out.items()}


def _within_binomial(rate, n, level=0.95, k=3.0):
    """Within k binomial SEs of nominal, counting arenas (conservative: each arena has two
    coefficients and ten differences, correlated)."""
    return abs(rate - level) <= k * np.sqrt(level * (1 - level) / n)


@pytest.mark.slow
def test_style_control_intervals_cover():
    rates = coverage(np.random.default_rng(20261126))
    design = (f"Davidson, {N_VOTES} votes, {THETA.size} models, two covariates (relative "
              f"length difference, integer formatting difference)")
    rows = [("hc0", "sandwich (HC0)", N_ARENAS), ("cr1", "cluster='prompt' sandwich (CR1)",
                                                  N_ARENAS),
            ("bootstrap", "vote bootstrap (percentile, 200 resamples)", N_BOOTSTRAP)]
    for key, how, n in rows:
        coef, diff = rates[key]
        print(f"\nCALIBRATION | fit_ratings covariates=, {how} ({design}) | coverage of 95% "
              f"intervals of the style coefficients (arena x covariate) | nominal 0.950 | "
              f"measured {coef:.4f} | n {n} arenas")
        print(f"\nCALIBRATION | fit_ratings covariates=, {how} ({design}) | coverage of 95% "
              f"intervals of the style-controlled rating differences (arena x pair) | "
              f"nominal 0.950 | measured {diff:.4f} | n {n} arenas")
        assert _within_binomial(coef, n), (key, rates)
        assert _within_binomial(diff, n), (key, rates)

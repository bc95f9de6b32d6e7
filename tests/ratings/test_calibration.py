"""Calibration of fit_ratings' intervals by simulation (issue 33): arenas whose prompts shift
every model's strength (prompt-specific model effects), with Davidson ties.

The votes of all arenas are drawn at once (arrays over arena x vote); each arena is then fitted
by the public ``fit_ratings`` (one batched Newton fit each). The target is what the pooled model
estimates when prompts vary: the pseudo-true parameters maximising the expected
log-likelihood over the prompt distribution (their differences are attenuated against the
prompt-free strengths), computed from the outcome probabilities averaged over 200,000
simulated prompts. Coverage of the 95 % interval of every rating difference is counted over
the arenas; ``cluster="prompt"`` must cover within binomial error of nominal, the iid
sandwich (votes independent) covers less when the prompt effects are large.

Figures: ``CALIBRATION`` lines for ``scripts/calibration_table.py`` (docs/calibration.md).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

from evaluq.ratings import fit_ratings

from ._davidson import difference_sd, outcome_probabilities, pseudo_true

THETA = np.array([0.0, 0.3, -0.2, 0.5, -0.6])
NU = 1.0
N_PROMPTS = 60
VOTES_PER_PROMPT = 20
N_ARENAS = 400
N_BOOTSTRAP = 200
N_NULL = 250
Z = st.norm.ppf(0.975)
PAIRS = [(i, j) for i in range(THETA.size) for j in range(i + 1, THETA.size)]


def simulate_arenas(tau, rng, n_arenas=N_ARENAS):
    """Votes (arena, vote): model_a, model_b, outcome (0 a wins, 1 b wins, 2 tie), prompt."""
    m, n = THETA.size, N_PROMPTS * VOTES_PER_PROMPT
    effects = rng.normal(0.0, tau, size=(n_arenas, N_PROMPTS, m))
    prompt = np.broadcast_to(np.repeat(np.arange(N_PROMPTS), VOTES_PER_PROMPT), (n_arenas, n))
    a = rng.integers(0, m, size=(n_arenas, n))
    b = (a + rng.integers(1, m, size=(n_arenas, n))) % m
    arena = np.arange(n_arenas)[:, None]
    d = (THETA[a] + effects[arena, prompt, a]) - (THETA[b] + effects[arena, prompt, b])
    p_a, p_b = outcome_probabilities(d, NU)
    u = rng.random((n_arenas, n))
    outcome = np.where(u < p_a, 0, np.where(u < p_a + p_b, 1, 2))
    return a, b, outcome, prompt


def coverage(tau, rng, n_arenas=N_ARENAS, n_bootstrap=0):
    """Share of (arena, pair) 95 % intervals of rating differences covering the target: the
    prompt-clustered and the iid sandwich over every arena, the prompt-cluster bootstrap
    (percentile) over the first ``n_bootstrap`` arenas."""
    import pandas as pd

    truth = pseudo_true(THETA, NU, tau, rng)
    target = np.array([truth[i] - truth[j] for i, j in PAIRS])
    a, b, outcome, prompt = simulate_arenas(tau, rng, n_arenas)
    names = np.array([f"m{k}" for k in range(THETA.size)])
    labels = np.array(["model_a", "model_b", "tie"])
    covered: dict[str, list[np.ndarray]] = {"prompt": [], "iid": [], "bootstrap": []}
    for r in range(n_arenas):
        votes = pd.DataFrame({"model_a": names[a[r]], "model_b": names[b[r]],
                              "winner": labels[outcome[r]], "prompt": prompt[r]})
        for cluster, key in (("prompt", "prompt"), (None, "iid")):
            fit = fit_ratings(votes, cluster=cluster, scale="logit", n_resamples=2)
            est = np.array([fit.rating.values[i] - fit.rating.values[j] for i, j in PAIRS])
            sd = difference_sd(fit.covariance.values, PAIRS)
            covered[key].append(np.abs(est - target) <= Z * sd)
        if r < n_bootstrap:
            boot = fit_ratings(votes, cluster="prompt", scale="logit", interval="bootstrap",
                               n_resamples=300, rng=r)
            draws = boot.draws.values
            diff = np.stack([draws[:, i] - draws[:, j] for i, j in PAIRS], axis=1)
            lo, hi = np.quantile(diff, [0.025, 0.975], axis=0)
            covered["bootstrap"].append((lo <= target) & (target <= hi))
    return {k: float(np.mean(v)) for k, v in covered.items() if v}


def _within_binomial(rate, n, level=0.95, k=3.0):
    """Within k binomial SEs of nominal, counting arenas (the differences of one arena are
    correlated, so the arena count is the conservative n)."""
    return abs(rate - level) <= k * np.sqrt(level * (1 - level) / n)


@pytest.mark.slow
def test_prompt_clustered_intervals_cover_and_iid_ones_do_not():
    rng = np.random.default_rng(20261126)
    large = coverage(0.8, rng, n_bootstrap=N_BOOTSTRAP)
    none = coverage(0.0, rng, n_arenas=N_NULL)
    design = f"{N_PROMPTS} prompts x {VOTES_PER_PROMPT} votes, {len(PAIRS)} differences each"
    rows = [
        (f"fit_ratings, Davidson, cluster='prompt' sandwich (CR1), prompt effects tau=0.8 "
         f"({design})", large["prompt"], N_ARENAS),
        (f"fit_ratings, Davidson, cluster='prompt' bootstrap (percentile), prompt effects "
         f"tau=0.8 ({design})", large["bootstrap"], N_BOOTSTRAP),
        (f"fit_ratings, Davidson, iid sandwich (HC0), prompt effects tau=0.8, *documented* "
         f"under-coverage ({design})", large["iid"], N_ARENAS),
        (f"fit_ratings, Davidson, cluster='prompt' sandwich (CR1), no prompt effects "
         f"({design})", none["prompt"], N_NULL),
        (f"fit_ratings, Davidson, iid sandwich (HC0), no prompt effects ({design})",
         none["iid"], N_NULL),
    ]
    for study, rate, n in rows:
        print(f"\nCALIBRATION | {study} | coverage of 95% intervals of rating differences "
              f"(arena x pair) | nominal 0.950 | measured {rate:.4f} | n {n} arenas")
    assert _within_binomial(large["prompt"], N_ARENAS), large
    assert _within_binomial(large["bootstrap"], N_BOOTSTRAP), large
    assert _within_binomial(none["prompt"], N_NULL), none
    assert _within_binomial(none["iid"], N_NULL), none
    assert large["iid"] < large["prompt"] - 0.05, large

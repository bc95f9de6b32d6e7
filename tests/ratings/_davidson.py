"""Shared pieces of the ratings tests: Davidson's outcome probabilities, the pooled model's
pseudo-true parameters under prompt effects, and the check against arena-rank's recorded
maximum-likelihood fit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from evaluq.ratings._newton import Design, newton


def outcome_probabilities(d: np.ndarray, nu: float) -> tuple[np.ndarray, np.ndarray]:
    """P(a wins), P(b wins) under Davidson's model with tie parameter ``nu`` at rating
    difference ``d`` (logit scale); a tie takes the rest."""
    denom = np.exp(d / 2) + np.exp(-d / 2) + nu
    return np.exp(d / 2) / denom, np.exp(-d / 2) / denom


def pseudo_true(theta: np.ndarray, nu: float, tau: float, rng: np.random.Generator,
                n_prompts: int = 200_000) -> np.ndarray:
    """The pooled Davidson model's ratings (summing to zero) when every prompt shifts each
    model's strength by N(0, tau^2): fitted to each pair's outcome probabilities averaged over
    ``n_prompts`` simulated prompts (expected counts), the parameters maximising the expected
    log-likelihood (``theta`` centred when tau = 0, up to Newton's tolerance)."""
    pairs = [(i, j) for i in range(theta.size) for j in range(i + 1, theta.size)]
    effects = rng.normal(0.0, tau, size=(n_prompts, theta.size))
    counts = np.zeros((len(pairs), 3))
    for k, (i, j) in enumerate(pairs):
        p_i, p_j = outcome_probabilities(theta[i] + effects[:, i] - theta[j] - effects[:, j], nu)
        counts[k] = [p_i.mean(), p_j.mean(), 1.0 - p_i.mean() - p_j.mean()]
    design = Design(pair_i=np.array([p[0] for p in pairs]), pair_j=np.array([p[1] for p in pairs]),
                    n_models=theta.size, davidson=True, ridge=0.0)
    x, ok, _ = newton(design, 1e4 * counts[None])
    assert ok[0]
    return x[0, :theta.size]


def difference_sd(cov: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """SD of each pair's rating difference from the ratings' covariance."""
    i, j = np.array(pairs).T
    return np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j])


def assert_ratings_equal_arena_rank(fit: Any, reference: Mapping[str, Any],
                                    ridge_atol: float = 1e-6) -> None:
    """Ratings, SEs and 95 % bounds equal to arena-rank's (its sandwich with the exact
    pseudo-inverse, no ridge) to 1e-6 Elo, and its own ridge (1e-5 on the mean Hessian)
    moving its SEs by the recorded effect (to ``ridge_atol`` Elo)."""
    conv, models = reference["converged"], fit.rating["model"].values

    def ref(key: str) -> np.ndarray:
        return np.array([conv[key][m] for m in models])

    np.testing.assert_allclose(fit.rating.values, ref("rating"), rtol=0, atol=1e-6)
    np.testing.assert_allclose(fit.se.values, ref("se_pinv_no_ridge"), rtol=0, atol=1e-6)
    ci = fit.ci
    np.testing.assert_allclose(ci.sel(ci_bound="lower").values, ref("ci_lower_pinv_no_ridge"),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(ci.sel(ci_bound="upper").values, ref("ci_upper_pinv_no_ridge"),
                               rtol=0, atol=1e-6)
    np.testing.assert_allclose(ref("se") - fit.se.values,
                               [reference["ridge_effect"]["se_elo"][m] for m in models],
                               rtol=0, atol=ridge_atol)

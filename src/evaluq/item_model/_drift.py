"""Do the epochs of a (model, item) agree more often than the binomial family allows?

``family="auto"`` asks this before it fits (issue 34): the predictive check of
``_criticism`` (``epoch_agreement``: the share of (model, item) pairs whose epochs all
agree, high when the epochs are overdispersed by run-to-run drift) with the 1PL's
parameters at their penalised marginal maximum instead of posterior draws:

1. eta (model, task) and sigma_item maximise

       sum_mk eta_mk S_mk + sum_t w_t log I_t(eta, sigma) - sum eta^2 / (2 * 10^2)
       - sigma^2 / (2 * 2.5^2)

   (the binomial family's marginal log-likelihood, items integrated out by the adaptive
   Gauss-Hermite rule of ``_quadrature``, with weak priors that keep a perfect cell finite);
2. given them, each item's effect is drawn from its exact conditional (its term's
   integrand), ``N_DRAWS`` times, and the replicated share of agreeing pairs has, given b,
   the mean A(b) = mean over pairs of p^n + (1 - p)^n (p = sigmoid(eta - b), n epochs) and
   variance sum a (1 - a) / pairs^2; so under the binomial the share has mean E_b A and
   variance Var_b A + E_b[sum a (1 - a)] / pairs^2;
3. z = (observed - mean) / SD; the epochs disagree beyond the binomial when z > ``DRIFT_Z``
   (one-sided p < 0.0013: a posterior predictive check is conservative, and a plug-in one
   slightly less so).

The functions take arrays, not the data container, so ``_data`` calls them without an
import circle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import norm

from evaluq._validation import RNGLike, check_rng
from evaluq.item_model._quadrature import log_integrand, term_mode, term_posterior

DRIFT_Z: Final = 3.0
"""z of the observed epoch agreement above the binomial's replicates that picks
beta-binomial."""
N_DRAWS: Final = 100
"""Draws of the item effects from their conditional."""
ETA_SD: Final = 10.0
SIGMA_SCALE: Final = 2.5
_GRID: Final = 64
_HALF_WIDTH: Final = 7.0


@dataclass(frozen=True)
class DriftCheck:
    """The epoch-agreement test: observed share, its mean and SD under the binomial, z and
    the one-sided p-value P(Z >= z)."""

    observed: float
    expected: float
    sd: float
    z: float
    p_value: float

    @property
    def drift(self) -> bool:
        """Whether the epochs agree more often than the binomial allows (z > ``DRIFT_Z``)."""
        return bool(self.z > DRIFT_Z)

    def text(self) -> str:
        """One sentence for the fit's notes."""
        return (f"share of (model, item) pairs whose epochs all agree {self.observed:.4f}; "
                f"{self.expected:.4f} +- {self.sd:.4f} under the binomial fitted at its "
                f"marginal maximum; z = {self.z:.1f}, p = {self.p_value:.2g}")


def plug_in_fit(correct: np.ndarray, epochs: np.ndarray, term_total: np.ndarray,
                term_task: np.ndarray, term_weight: np.ndarray) -> tuple[np.ndarray, float]:
    """eta (model, task) and sigma_item at the penalised marginal maximum (see the module
    docstring); ``correct``, ``epochs`` (model, task); the terms' arrays (term,)."""
    n_m, n_k = correct.shape
    onehot = np.eye(n_k)[term_task]                                        # (T, K)
    n_t = epochs[:, term_task].T                                           # (T, M)
    trials = np.maximum(onehot.T @ (term_weight[:, None] * n_t), 1.0).T    # (M, K)

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        eta, s = theta[:-1].reshape(n_m, n_k), float(np.exp(theta[-1]))
        eta_t = eta[:, term_task].T
        log_i, b, w = term_posterior(eta_t, n_t, term_total, s)
        value = ((correct * eta).sum() + term_weight @ log_i - (eta**2).sum() / (2 * ETA_SD**2)
                 - s**2 / (2 * SIGMA_SCALE**2))
        mean_p = np.einsum("tmj,tj->tm", expit(eta_t[:, :, None] - b[:, None, :]), w)
        grad_eta = correct - eta / ETA_SD**2 - (onehot.T @ (term_weight[:, None] * n_t
                                                            * mean_p)).T
        e_b2 = np.einsum("tj,tj->t", w, b**2)
        grad_s = term_weight @ (e_b2 / s**3 - 1.0 / s) - s / SIGMA_SCALE**2
        return -value, -np.r_[grad_eta.ravel(), grad_s * s]

    start = np.log((correct + 0.5) / (trials - correct + 0.5)).ravel()
    res = minimize(objective, np.r_[start, 0.0], jac=True, method="L-BFGS-B")
    return res.x[:-1].reshape(n_m, n_k), float(np.exp(res.x[-1]))


def _draw_items(eta: np.ndarray, sigma: float, epochs: np.ndarray, term_total: np.ndarray,
                term_task: np.ndarray, item_term: np.ndarray, n_draws: int,
                gen: np.random.Generator) -> np.ndarray:
    """Item effects (draw, item) from their exact conditional given eta and sigma: each
    term's integrand on ``_GRID`` cells over +-``_HALF_WIDTH`` curvature SDs of its mode,
    inverse CDF and a uniform jitter inside the cell."""
    eta_t, n_t = eta[:, term_task].T, epochs[:, term_task].T
    s = np.asarray(sigma, dtype=np.float64)
    mode, sd = term_mode(eta_t, n_t, term_total, s)
    z = (np.arange(_GRID) + 0.5) / _GRID * 2 * _HALF_WIDTH - _HALF_WIDTH
    grid = mode[:, None] + sd[:, None] * z                                 # (T, G)
    logd = log_integrand(eta_t, n_t, term_total, s, grid)
    prob = np.exp(logd - logd.max(axis=-1, keepdims=True))
    cdf = np.cumsum(prob / prob.sum(axis=-1, keepdims=True), axis=-1)
    cdf[:, -1] = 1.0
    # one sorted array over the terms (term t's CDF shifted by t): one searchsorted
    flat = (cdf + np.arange(len(cdf))[:, None]).ravel()
    u = gen.random((n_draws, len(item_term)))
    index = np.searchsorted(flat, u + item_term, side="left").clip(0, flat.size - 1)
    cell = index - item_term * _GRID
    width = 2 * _HALF_WIDTH / _GRID * sd[item_term]
    return grid.ravel()[index] + (gen.random(cell.shape) - 0.5) * width


def epoch_agreement_test(per_item: np.ndarray, epochs: np.ndarray, item_task: np.ndarray,
                         correct: np.ndarray, term_total: np.ndarray, term_task: np.ndarray,
                         term_weight: np.ndarray, item_term: np.ndarray,
                         rng: RNGLike = 0, n_draws: int = N_DRAWS) -> DriftCheck:
    """The epoch-agreement test of the module docstring.

    ``per_item`` (model, item): correct answers over the epochs; ``epochs``, ``correct``
    (model, task); ``item_task``, ``item_term`` (item,); the terms' arrays (term,).

    Examples
    --------
    >>> from evaluq.item_model import item_statistics, simulate_items
    >>> from evaluq.item_model._drift import epoch_agreement_test
    >>> t = simulate_items(n_models=4, n_items=300, n_epochs=3, overdispersion=0.3, rng=0)
    >>> d = item_statistics(t, model="model", item="item", score="score", epoch="epoch",
    ...                     family="binomial")
    >>> epoch_agreement_test(d.per_item, d.epochs, d.item_task, d.correct, d.term_total,
    ...                      d.term_task, d.term_weight, d.item_term).drift
    True
    """
    gen = check_rng(rng)
    eta, sigma = plug_in_fit(correct, epochs, term_total, term_task, term_weight)
    n = epochs[:, item_task]                                               # (M, I)
    multi = n >= 2
    pairs = max(int(multi.sum()), 1)
    agree = ((per_item == 0) | (per_item == n)) & multi
    observed = agree.sum() / pairs
    means, variances = [], []
    chunk = max(1, 2_000_000 // max(n.size, 1))
    for start in range(0, n_draws, chunk):           # blocks of draws, vectorised inside
        b = _draw_items(eta, sigma, epochs, term_total, term_task, item_term,
                        min(chunk, n_draws - start), gen)                  # (d, I)
        p = expit(eta[:, item_task][None] - b[:, None, :])                 # (d, M, I)
        a = np.where(multi, p**n + (1.0 - p) ** n, 0.0)
        means.append(a.sum(axis=(1, 2)) / pairs)
        variances.append((a * (1.0 - a)).sum(axis=(1, 2)) / pairs**2)
    m, v = np.concatenate(means), np.concatenate(variances)
    sd = float(np.sqrt(m.var() + v.mean()))
    z = float((observed - m.mean()) / sd) if sd > 0 else 0.0
    return DriftCheck(float(observed), float(m.mean()), sd, z, float(norm.sf(z)))

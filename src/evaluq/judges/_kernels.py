r"""numpy kernels of the judge corrections (no xarray): PPI / PPI++ from moments, the chain
rule's Dirichlet-Beta posterior (moments and draws), Rogan-Gladen.

Every function works on arrays of any leading shape (one entry per data set, model or
simulated replicate), so one call serves :func:`~evaluq.judges.ppi_mean`, every model of
:func:`~evaluq.judges.judged_means` and a calibration study.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CHAIN_PRIOR = 1.0
"""The prior weight per cell of the chain rule's Dirichlet / Beta posteriors: the uniform
prior's 1, chosen by calibration against Jeffreys' 1/2 (binary and 5-level judges, accuracy
0.55-0.95, 20-300 labels, 2,000 data sets each: the uniform prior's 95% intervals covered
0.940-0.997, Jeffreys' 0.934-0.990, under-covering with 10 labels per judge level; see
``tests/test_judges_calibration.py``)."""


@dataclass(frozen=True)
class Moments:
    """Sufficient statistics of PPI for one or many data sets (arrays of one shape).

    ``n`` labelled items with gold mean ``ybar`` and judge mean ``fbar``, ``big_n`` unlabelled
    items with judge mean ``fubar``; ``vy``, ``vf``, ``cyf`` the labelled items' variances and
    covariance and ``vfu`` the unlabelled judge scores' variance, all with ddof = 0 (as
    ppi_py's ``std``).
    """

    n: np.ndarray
    big_n: np.ndarray
    ybar: np.ndarray
    fbar: np.ndarray
    fubar: np.ndarray
    vy: np.ndarray
    vf: np.ndarray
    cyf: np.ndarray
    vfu: np.ndarray


def moments_1d(y: np.ndarray, f: np.ndarray, fu: np.ndarray) -> Moments:
    """:class:`Moments` of one data set, centred two-pass (last axis: items)."""
    yc = y - y.mean(axis=-1, keepdims=True)
    fc = f - f.mean(axis=-1, keepdims=True)
    big_n = np.full(y.shape[:-1], float(fu.shape[-1]))
    if fu.shape[-1]:
        fubar, vfu = fu.mean(axis=-1), fu.var(axis=-1)
    else:
        fubar = vfu = np.full(y.shape[:-1], np.nan)
    return Moments(n=np.full(y.shape[:-1], float(y.shape[-1])), big_n=big_n,
                   ybar=y.mean(axis=-1), fbar=f.mean(axis=-1), fubar=fubar,
                   vy=np.mean(yc * yc, axis=-1), vf=np.mean(fc * fc, axis=-1),
                   cyf=np.mean(yc * fc, axis=-1), vfu=vfu)


def judge_variance(m: Moments) -> np.ndarray:
    """Variance (ddof = 1) of all n + N judge scores pooled, from the two groups' moments."""
    total = m.n + m.big_n
    with np.errstate(invalid="ignore", divide="ignore"):
        between = np.where(m.big_n > 0, m.n * m.big_n / total * (m.fbar - m.fubar) ** 2, 0.0)
        within = m.n * m.vf + np.where(m.big_n > 0, m.big_n * m.vfu, 0.0)
        return np.where(total > 1, (within + between) / (total - 1), np.nan)


def tuned_lambda(m: Moments) -> np.ndarray:
    r"""PPI++'s power-tuned :math:`\lambda` (Angelopoulos, Duchi and Zrnic 2023), as ppi_py:

    .. math:: \lambda = \mathrm{clip}\Big(\frac{\mathrm{cov}_0(Y, \hat Y)}
              {(1 + n/N)\,\mathrm{var}_1(\hat Y \cup \hat Y^u)}, 0, 1\Big)

    (covariance ddof 0 over the labelled items, variance ddof 1 over all judge scores). NaN
    where the judge is constant (any :math:`\lambda` gives the same estimate); 0 where there
    are no unlabelled items (PPI is then the gold-only mean).
    """
    var_all = judge_variance(m)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = m.cyf / ((1.0 + m.n / m.big_n) * var_all)
    lam = np.clip(raw, 0.0, 1.0)
    lam = np.where(var_all > 0, lam, np.nan)
    return np.where(m.big_n > 0, lam, 0.0)


def ppi_estimate(m: Moments, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The PPI estimate and its variance at :math:`\lambda` (ppi_py's, ddof 0):

    .. math:: \hat\theta = \lambda \bar{\hat Y^u} + \overline{Y - \lambda \hat Y}, \quad
              \widehat{\mathrm{var}} = \lambda^2 \mathrm{var}_0(\hat Y^u)/N
              + \mathrm{var}_0(Y - \lambda\hat Y)/n

    A NaN :math:`\lambda` (constant judge) counts as 0: every :math:`\lambda` gives the
    gold-only mean then. With no unlabelled items only :math:`\lambda = 0` is defined.
    """
    lam = np.where(np.isnan(lam), 0.0, lam)
    has_u = m.big_n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        imputed = np.where(lam == 0, 0.0, lam * m.fubar - lam * m.fbar)
        var_u = np.where(lam == 0, 0.0, lam**2 * m.vfu / m.big_n)
        var_r = (m.vy - 2.0 * lam * m.cyf + lam**2 * m.vf) / m.n
        estimate = m.ybar + imputed
        var = np.maximum(var_r, 0.0) + var_u
    bad = ~has_u & (lam != 0)
    return np.where(bad, np.nan, estimate), np.where(bad, np.nan, var)


# --- the chain rule (Hofer et al. 2024): theta = sum_j P(judge = j) E[gold | judge = j] -------


def dirichlet_linear_moments(alpha: np.ndarray, values: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``q @ values`` for q ~ Dirichlet(alpha) (last axis)."""
    a0 = alpha.sum(axis=-1)
    p = alpha / a0[..., None]
    mean = p @ values
    var = (p @ values**2 - mean**2) / (a0 + 1.0)
    return mean, np.maximum(var, 0.0)


def chain_rule_moments(level_counts: np.ndarray, gold_counts: np.ndarray,
                       gold_values: np.ndarray, gold_prior: float | np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    r"""Posterior mean and variance of :math:`\theta = \sum_j \pi_j \mu_j` in closed form.

    :math:`\pi \sim \mathrm{Dir}(m + 1)` from the judge-level counts ``level_counts``
    (..., K) of all judged items, :math:`q_j \sim \mathrm{Dir}(c_j + b)` from the gold-level
    counts ``gold_counts`` (..., K, L) of the labelled items at judge level j with the prior
    ``gold_prior`` b (default :data:`CHAIN_PRIOR`, uniform; an array broadcasts), and
    :math:`\mu_j = q_j \cdot v` (``gold_values`` v, length L), all independent:
    :math:`E\theta = \sum_j E\pi_j E\mu_j` and
    :math:`\mathrm{var}\,\theta = \sum_j E[\pi_j^2]\,\mathrm{var}\,\mu_j +
    \mathrm{var}(\sum_j \pi_j E\mu_j)`.
    """
    b = CHAIN_PRIOR if gold_prior is None else gold_prior
    mu_mean, mu_var = dirichlet_linear_moments(gold_counts + b, gold_values)
    alpha = level_counts + CHAIN_PRIOR
    a0 = alpha.sum(axis=-1)
    p = alpha / a0[..., None]
    e_pi2 = p * (1.0 - p) / (a0[..., None] + 1.0) + p**2
    mean = np.sum(p * mu_mean, axis=-1)
    var_e = (np.sum(p * mu_mean**2, axis=-1) - mean**2) / (a0 + 1.0)
    return mean, np.sum(e_pi2 * mu_var, axis=-1) + np.maximum(var_e, 0.0)


def _dirichlet_draws(alpha: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Dirichlet draws (..., n_draws, K) from ``alpha`` (..., K) by normalised gammas."""
    shape = (*alpha.shape[:-1], n_draws, alpha.shape[-1])
    g = rng.standard_gamma(np.broadcast_to(alpha[..., None, :], shape))
    return g / g.sum(axis=-1, keepdims=True)


def chain_rule_draws(level_counts: np.ndarray, gold_counts: np.ndarray,
                     gold_values: np.ndarray, n_draws: int, rng: np.random.Generator,
                     gold_prior: float | np.ndarray | None = None) -> np.ndarray:
    """Posterior draws (..., n_draws) of the chain rule's theta (see
    :func:`chain_rule_moments`)."""
    b = CHAIN_PRIOR if gold_prior is None else gold_prior
    pi = _dirichlet_draws(level_counts + CHAIN_PRIOR, n_draws, rng)        # (..., D, K)
    alpha = np.broadcast_to((gold_counts + b)[..., None, :, :],
                            (*pi.shape, gold_counts.shape[-1]))
    g = rng.standard_gamma(alpha)                                          # (..., D, K, L)
    mu = (g @ gold_values) / g.sum(axis=-1)
    return np.sum(pi * mu, axis=-1)


# --- Rogan-Gladen ----------------------------------------------------------------------------


def _binomial_spread(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``r (1 - r)`` of the rate ``r = k / n``; at ``r`` 0 or 1 (where it is 0) of Jeffreys'
    centre ``(k + 1/2) / (n + 1)`` instead."""
    r = k / n
    edge = (k + 0.5) / (n + 1.0)
    return np.where((r == 0) | (r == 1), edge * (1 - edge), r * (1 - r))


def rogan_gladen(p_judge: np.ndarray, n_judged: np.ndarray, tp: np.ndarray, n_pos: np.ndarray,
                 tn: np.ndarray, n_neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Rogan-Gladen's corrected prevalence and its delta-method variance when the labelled
    items are among the judged ones (as in :func:`ppi_mean` and :func:`judged_means`):

    .. math:: \hat\theta = \frac{\hat p + \widehat{sp} - 1}{J}, \quad
        J = \widehat{se} + \widehat{sp} - 1,

    .. math:: \mathrm{var} \approx \frac{1}{J^2}\Big[\frac{\hat p(1-\hat p)}{N_j}
        + \frac{\hat\theta^2\,\widehat{se}(1-\widehat{se})}{n_1}
        + \frac{(1-\hat\theta)^2\,\widehat{sp}(1-\widehat{sp})}{n_0}
        - \frac{2\hat\theta\,\widehat{se}(1-\widehat{se})
          + 2(1-\hat\theta)\,\widehat{sp}(1-\widehat{sp})}{N_j}\Big]

    (:math:`\hat p` the judge's positive rate over all :math:`N_j` judged items, sensitivity
    and specificity from the :math:`n_1` positive and :math:`n_0` negative labelled items).
    The last term is the covariance of :math:`\hat p` with :math:`\widehat{se}` and
    :math:`\widehat{sp}`, which share the labelled items' judge scores; the textbook formula
    (Rogan and Gladen 1978), for a validation sample apart from the judged one, omits it and
    is about 25% too wide here. The estimate is clipped to [0, 1]. NaN where
    :math:`se + sp \le 1` (the judge is no better than chance) or a gold class is absent.

    A sensitivity (specificity) estimated at 1 or 0 (the judge agreed with every labelled
    positive, or with none) has plug-in variance 0, as if the judge's accuracy were known:
    with 20 labels a 95%-accurate judge agrees with all of them a third of the time, and the
    interval then covered the truth in 83% of such data sets (48% for a 90%-accurate judge).
    There :math:`\widehat{se}(1-\widehat{se})` is taken at :math:`(k + 1/2)/(n + 1)` (k of
    n agreeing: Jeffreys' centre) in the variance only; the estimate is unchanged. Over all
    data sets the interval then covers at least its level (simulations in
    ``tests/test_judges_calibration.py``), conservatively with few labels.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        se, sp = tp / n_pos, tn / n_neg
        youden = se + sp - 1.0
        theta = np.clip((p_judge + sp - 1.0) / youden, 0.0, 1.0)
        v_se, v_sp = _binomial_spread(tp, n_pos), _binomial_spread(tn, n_neg)
        shared = 2.0 * (theta * v_se + (1 - theta) * v_sp) / n_judged
        var = (p_judge * (1 - p_judge) / n_judged + theta**2 * v_se / n_pos
               + (1 - theta) ** 2 * v_sp / n_neg - shared) / youden**2
    ok = (youden > 0) & (n_pos > 0) & (n_neg > 0)
    return np.where(ok, theta, np.nan), np.where(ok, np.maximum(var, 0.0), np.nan)

r"""Per-model judge corrections of a :class:`~evaluq.judges._data.JudgeTable`, every model at
once (bincounts over model codes, no loop over models or items), with each row's influence
function.

The influence function :math:`\phi_{mi}` of row (model m, item i) is the row's share of the
estimate's error, :math:`\hat\theta_m - \theta_m \approx \sum_i \phi_{mi}`; summed within
each sampling unit (item, or cluster) it gives the covariance of any two models' estimates
over the items they share, :math:`\sum_g (\sum_{i \in g}\phi_{ai})(\sum_{i \in g}\phi_{bi})`.

* PPI at :math:`\lambda_m`: :math:`\phi = (Y - \lambda\hat Y - \overline{Y - \lambda\hat
  Y})/n_m` on labelled rows, :math:`\lambda(\hat Y^u - \overline{\hat Y^u})/N_m` on
  unlabelled rows (its sum of squares is ppi_py's variance, ddof 0);
* the chain rule (post-stratification on the judge levels):
  :math:`\phi = (\hat\mu_{m,j(i)} - \hat\theta_m)/T_m` on every row (T_m judged items) plus
  :math:`\hat\pi_{mj}(Y - \hat\mu_{mj})/n_{mj}` on the labelled rows;
* Rogan-Gladen, :math:`\hat\theta = (\hat p + \widehat{sp} - 1)/J`,
  :math:`J = \widehat{se} + \widehat{sp} - 1`: :math:`(\hat Y - \hat p)/(J T_m)` on every
  row, plus :math:`-\hat\theta(\hat Y - \widehat{se})/(J n_{m1})` on the labelled
  positives and :math:`(1 - \hat\theta)(1 - \hat Y - \widehat{sp})/(J n_{m0})` on the
  labelled negatives (the delta method's derivatives).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluq._validation import check_memory
from evaluq.judges._data import JudgeTable
from evaluq.judges._kernels import (
    Moments,
    chain_rule_draws,
    chain_rule_moments,
    ppi_estimate,
    rogan_gladen,
    tuned_lambda,
)


@dataclass
class ModelFits:
    """Every model's estimate (M,), variance of the estimate (M,), gold-only variance (M,),
    lambda (M,), the rows' influence function (rows,) and posterior draws (M, D) or None."""

    estimate: np.ndarray
    var: np.ndarray
    var_classical: np.ndarray
    lam: np.ndarray
    phi: np.ndarray
    draws: np.ndarray | None = None


def _per_model(codes: np.ndarray, weights: np.ndarray | None, n_models: int) -> np.ndarray:
    return np.bincount(codes, weights=weights, minlength=n_models).astype(np.float64)


def ppi_fits(t: JudgeTable, method: str, lam: float | None) -> ModelFits:
    """classical / PPI / PPI++ for every model (``lam`` a given lambda for PPI++).

    One bincount per moment over the (model, labelled) cells: no row is copied out."""
    n_models = len(t.models)
    lab = t.labelled
    key = t.model * 2 + lab
    y0 = np.where(lab, t.gold, 0.0)
    size = 2 * n_models
    counts = _per_model(key, None, size)
    with np.errstate(invalid="ignore", divide="ignore"):
        f_mean = _per_model(key, t.judge, size) / counts
        y_mean = _per_model(key, y0, size) / counts
    fc = t.judge - f_mean[key]
    yc = np.where(lab, y0 - y_mean[key], 0.0)
    vf = _per_model(key, fc * fc, size)
    ss_y, s_yf = _per_model(key, yc * yc, size), _per_model(key, yc * fc, size)
    n, big_n = counts[1::2], counts[0::2]
    with np.errstate(invalid="ignore", divide="ignore"):
        m = Moments(n=n, big_n=big_n, ybar=y_mean[1::2], fbar=f_mean[1::2],
                    fubar=f_mean[0::2], vy=ss_y[1::2] / n, vf=vf[1::2] / n,
                    cyf=s_yf[1::2] / n, vfu=vf[0::2] / big_n)
    if method == "classical":
        lam_m = np.zeros(n_models)
    elif method == "ppi" or lam is not None:
        lam_m = np.full(n_models, 1.0 if method == "ppi" else float(lam))  # type: ignore[arg-type]
    else:
        lam_m = tuned_lambda(m)
    estimate, var = ppi_estimate(m, lam_m)
    lam_row = np.nan_to_num(lam_m)[t.model]
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(lab, (yc - lam_row * fc) / counts[key],
                       np.where(lam_row == 0, 0.0, lam_row * fc / counts[key]))
    return ModelFits(estimate=estimate, var=var, var_classical=m.vy / n, lam=lam_m,
                     phi=np.nan_to_num(phi))


def _chain_counts(t: JudgeTable, levels: np.ndarray, values: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Judge-level codes of the rows (``levels`` the judge's sorted distinct scores) and the
    counts (M, K), (M, K, L)."""
    level = np.searchsorted(levels, t.judge)
    n_models, k, n_values = len(t.models), levels.size, values.size
    m = _per_model(t.model * k + level, None, n_models * k).reshape(n_models, k)
    lab = t.labelled
    cell = (t.model[lab] * k + level[lab]) * n_values + np.searchsorted(values, t.gold[lab])
    c = _per_model(cell, None, n_models * k * n_values).reshape(n_models, k, n_values)
    return level, m, c


def chain_fits(t: JudgeTable, levels: np.ndarray, values: np.ndarray, n_draws: int,
               rng: np.random.Generator) -> ModelFits:
    """The chain rule for every model: posterior moments and draws, influence function."""
    check_memory("n_draws", 8.0 * n_draws * len(t.models) * levels.size * (values.size + 2))
    level, m, c = _chain_counts(t, levels, values)
    mean, var = chain_rule_moments(m, c, values)
    n_mk = c.sum(axis=-1)
    prior_mean = float(values.mean())
    with np.errstate(invalid="ignore", divide="ignore"):
        mu_hat = np.where(n_mk > 0, (c @ values) / n_mk, prior_mean)
        total = m.sum(axis=1)
        pi_hat = m / total[:, None]
        theta_hat = np.sum(pi_hat * mu_hat, axis=1)
        phi = (mu_hat[t.model, level] - theta_hat[t.model]) / total[t.model]
        lab = t.labelled
        ml, ll = t.model[lab], level[lab]
        phi[lab] += pi_hat[ml, ll] * (t.gold[lab] - mu_hat[ml, ll]) / n_mk[ml, ll]
    gold_only = chain_rule_moments(np.ones((len(t.models), 1)), c.sum(axis=1)[:, None, :],
                                   values)[1]
    return ModelFits(estimate=mean, var=var, var_classical=gold_only,
                     lam=np.full(len(t.models), np.nan), phi=np.nan_to_num(phi),
                     draws=chain_rule_draws(m, c, values, n_draws, rng))


def gold_only_fits(t: JudgeTable, bayes: np.ndarray | None, n_draws: int,
                   rng: np.random.Generator) -> ModelFits:
    """Gold-only for every model: the mean of the labels (``bayes`` None) or, for the chain
    rule's fallback, its posterior under the uniform Dirichlet over the gold values
    ``bayes`` (the chain rule with one judge level)."""
    fits = ppi_fits(t, "classical", None)
    if bayes is None:
        return fits
    n_models, n_values = len(t.models), bayes.size
    lab = t.labelled
    cell = t.model[lab] * n_values + np.searchsorted(bayes, t.gold[lab])
    c = _per_model(cell, None, n_models * n_values).reshape(n_models, 1, n_values)
    ones = np.ones((n_models, 1))
    mean, var = chain_rule_moments(ones, c, bayes)
    return ModelFits(estimate=mean, var=var, var_classical=var, lam=fits.lam, phi=fits.phi,
                     draws=chain_rule_draws(ones, c, bayes, n_draws, rng))


def rogan_gladen_fits(t: JudgeTable) -> ModelFits:
    """Rogan-Gladen for every model (0/1 judge and gold scores): the kernel's estimate and
    delta-method variance (:func:`~evaluq.judges._kernels.rogan_gladen`, as ``ppi_mean``),
    and the rows' influence function for the covariances and the clusters."""
    n_models = len(t.models)
    lab = t.labelled
    pos, neg = lab & (np.where(lab, t.gold, 0.0) == 1), lab & (np.where(lab, t.gold, 1.0) == 0)
    total = _per_model(t.model, None, n_models)
    n_pos, n_neg = _per_model(t.model[pos], None, n_models), _per_model(t.model[neg], None,
                                                                         n_models)
    tp = _per_model(t.model[pos], t.judge[pos], n_models)
    tn = _per_model(t.model[neg], 1.0 - t.judge[neg], n_models)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = _per_model(t.model, t.judge, n_models) / total
        theta, var = rogan_gladen(p, total, tp, n_pos, tn, n_neg)
        se, sp = tp / n_pos, tn / n_neg
        youden = se + sp - 1.0
        m = t.model
        phi = (t.judge - p[m]) / (youden[m] * total[m])
        phi = np.where(pos, phi - theta[m] * (t.judge - se[m]) / (youden[m] * n_pos[m]), phi)
        phi = np.where(neg, phi + (1.0 - theta[m]) * (1.0 - t.judge - sp[m])
                       / (youden[m] * n_neg[m]), phi)
    gold_only = ppi_fits(t, "classical", None)
    return ModelFits(estimate=theta, var=var, var_classical=gold_only.var_classical,
                     lam=np.full(n_models, np.nan),
                     phi=np.where(np.isfinite(theta)[t.model], phi, 0.0))

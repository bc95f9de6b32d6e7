r"""The transport check: does the judge relate to the gold labels differently for one model?

A judge is lenient (or harsh) for one model when it scores that model's answers higher (or
lower) than the other models' answers of the same gold quality: :math:`E[\text{judge} \mid
\text{gold}]` differs. This relation, the judge's own error structure, does not depend on how
good the model is (:math:`E[\text{gold} \mid \text{judge}]` does: with the same judge errors,
a stronger model has more true positives among the judge's positives). For each model m, its
judge scores against the relation learnt on the *other* models' labelled items
(leave-one-model-out):

* discrete gold scores (levels k, at most 10): :math:`\delta_m = \sum_k w_{mk}
  (\bar{\hat Y}_{mk} - \bar{\hat Y}_{-m,k})`, :math:`w_{mk} \propto n_{mk}` over the levels
  the others labelled too, :math:`\mathrm{var} = \sum_k w_{mk}^2 s_k^2 (1/n_{mk} +
  1/n_{-m,k})` with :math:`s_k^2` the variance (ddof 1) of every judge score at gold level k
  (the variance under the null); the p-value is the Wald test over the levels,
  :math:`\sum_k d_k^2 / (s_k^2 (1/n_{mk} + 1/n_{-m,k}))` (:math:`d_k` the level's
  difference) against :math:`\chi^2` with as many degrees of freedom as levels compared, so
  that a shift at one level is not diluted by the others;
* continuous gold scores: the others' least-squares line of the judge score on the gold
  score :math:`a + bY`, :math:`\delta_m = \bar{\hat Y}_m - a - b\bar Y_m`,
  :math:`\mathrm{var} = \sigma^2 (1/n_m + 1/n_{-m} + (\bar Y_m - \bar Y_{-m})^2 /
  S_{xx,-m})` (the others' residual variance :math:`\sigma^2`, ddof 2).

:math:`z = \delta_m / \mathrm{se}` (and, for continuous scores, its two-sided normal
p-value); the p-values are Holm-adjusted over the models, a model is flagged when its
adjusted p-value is below ``alpha`` (step-down: see :func:`transport_test`). With
``relation="gold-given-judge"`` (:func:`evaluq.judges.judged_means`) the roles of judge and
gold swap: the gold labels given the judge's scores, the calibration cje-eval audits. A
positive shift: the judge is lenient for the model (judge given gold), or the model's gold
labels are above what the judge's scores predict (gold given judge).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from evaluq._dims import FLAGGED, P_HOLM, P_VALUE, SE_SHIFT, SHIFT, Z
from evaluq._kernels import holm
from evaluq.errors import EvaluqWarning


class TransportWarning(EvaluqWarning):
    """The judge's relation to the gold labels differs for some model(s) (the judge is
    lenient, or harsh, for them): their judge-corrected estimate is replaced by the gold-only
    one (or NaN with a reason). The message names the models and the evidence."""


def _discrete_shift(model: np.ndarray, level: np.ndarray, y: np.ndarray, n_models: int,
                    n_levels: int, reference: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Shift, its SE, the Wald p-value over levels and its logarithm per model: responses
    ``y`` within discrete levels (labelled rows), against the ``reference`` models other than
    itself."""
    cell = model * n_levels + level
    size = n_models * n_levels
    n = np.bincount(cell, minlength=size).reshape(n_models, n_levels).astype(np.float64)
    s = np.bincount(cell, weights=y, minlength=size).reshape(n_models, n_levels)
    n_k, s_k = n.sum(axis=0), s.sum(axis=0)
    dev = y - (s_k / np.maximum(n_k, 1))[level]
    ref = reference[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        var_k = np.bincount(level, weights=dev**2, minlength=n_levels) / (n_k - 1)
        n_o = np.sum(n * ref, axis=0)[None, :] - n * ref
        s_o = np.sum(s * ref, axis=0)[None, :] - s * ref
        usable = (n > 0) & (n_o > 0)
        w = np.where(usable, n, 0.0)
        w = w / w.sum(axis=1, keepdims=True)
        diff = np.where(usable, s / n - s_o / n_o, 0.0)
        cell_var = np.where(usable, var_k[None, :] * (1 / n + 1 / n_o), 0.0)
        tested = cell_var > 0
        chi2 = np.sum(np.where(tested, diff**2 / cell_var, 0.0), axis=1)
        df = tested.sum(axis=1)
        p = np.where(df > 0, stats.chi2.sf(chi2, np.maximum(df, 1)), np.nan)
        log_p = np.where(df > 0, stats.chi2.logsf(chi2, np.maximum(df, 1)), np.nan)
    return np.sum(w * diff, axis=1), np.sqrt(np.sum(w**2 * cell_var, axis=1)), p, log_p


def _linear_shift(model: np.ndarray, f: np.ndarray, y: np.ndarray, n_models: int,
                  reference: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Shift and its SE per model: responses ``y`` against the least-squares line on ``f`` of
    the ``reference`` models other than itself (labelled rows)."""
    centre_f, centre_y = f.mean(), y.mean()              # shift once: sums of squares exact
    f, y = f - centre_f, y - centre_y
    sums = [np.bincount(model, weights=w, minlength=n_models)
            for w in (np.ones_like(f), f, y, f * f, f * y, y * y)]
    n, sf, sy = sums[:3]
    on, osf, osy, osff, osfy, osyy = (np.sum(t * reference) - t * reference for t in sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        fbar_o, ybar_o = osf / on, osy / on
        sxx = osff - on * fbar_o**2
        sxy = osfy - on * fbar_o * ybar_o
        slope = np.where(sxx > 0, sxy / sxx, 0.0)
        sse = osyy - on * ybar_o**2 - slope * sxy
        sigma2 = np.maximum(sse, 0.0) / (on - 2)
        fbar = sf / n
        shift = sy / n - (ybar_o + slope * (fbar - fbar_o))
        extra = np.where(sxx > 0, (fbar - fbar_o) ** 2 / sxx, 0.0)
        se = np.sqrt(sigma2 * (1 / n + 1 / on + extra))
    return shift, se


def _one_round(model: np.ndarray, f: np.ndarray, y: np.ndarray, n_models: int,
               level: np.ndarray | None, n_levels: int, reference: np.ndarray
               ) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Every model's shift, SE, z, p and Holm-adjusted p against ``reference``, and the log
    of p (the step-down's order, exact where p underflows to 0)."""
    n = np.bincount(model, minlength=n_models)
    if level is not None:
        shift, se, p, log_p = _discrete_shift(model, level, y, n_models, n_levels, reference)
    else:
        shift, se = _linear_shift(model, f, y, n_models, reference)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where((n >= 2) & (se > 0), shift / se, np.nan)
    if level is None:
        p = 2.0 * stats.norm.sf(np.abs(z))
        log_p = np.log(2.0) + stats.norm.logsf(np.abs(z))
    p = np.where((n >= 2) & ~np.isnan(z), p, np.nan)
    p_holm = np.full(n_models, np.nan)
    ok = ~np.isnan(p)
    if ok.sum() >= 2:
        p_holm[ok] = holm(p[ok])
    return ({SHIFT: np.where(n >= 2, shift, np.nan), SE_SHIFT: np.where(n >= 2, se, np.nan),
             Z: z, P_VALUE: p, P_HOLM: p_holm}, np.where(np.isnan(p), np.nan, log_p))


def transport_test(model: np.ndarray, f: np.ndarray, y: np.ndarray, n_models: int,
                   level: np.ndarray | None, n_levels: int,
                   alpha: float) -> dict[str, np.ndarray]:
    """Shift, SE, z, p, Holm-adjusted p and the flag of every model, from the labelled rows:
    the responses ``y`` (judge scores) given ``f`` (gold scores), with ``level`` the codes of
    discrete gold scores (None for continuous ones).

    Step-down: the most significant model below ``alpha`` (Holm), the one with the smallest
    p-value (the Wald test's over the gold levels for discrete gold, not the size of the
    level-averaged shift, which cancels for a judge that is lenient at one level and harsh at
    another, e.g. one that scores a model's answers all alike; ties by ``|z|``), is flagged and
    leaves the reference of the others, and the test is run again, until no further model is
    flagged (a lenient model would otherwise shift the others' reference and flag them too).
    The first round is Holm's test of every model, so with no shift at all the chance of any
    flag is at most ``alpha``.
    """
    flagged = np.zeros(n_models, dtype=bool)
    while True:
        out, log_p = _one_round(model, f, y, n_models, level, n_levels, ~flagged)
        new = (out[P_HOLM] < alpha) & ~flagged
        if not new.any():
            out[FLAGGED] = flagged
            return out
        idx = np.flatnonzero(new)
        flagged[idx[np.lexsort((-np.abs(out[Z][idx]), log_p[idx]))[0]]] = True

r"""Analytic standard errors of means over items: CLT, cluster-robust, paired differences.

For per-item scores (:func:`evaluq.from_items`' tables), the mean over a language's items
and its standard error in closed form, beside the bootstrap of the cube (Miller 2024):

* the CLT standard error of the mean of n items;
* the cluster-robust standard error when items come in clusters (CR1, as statsmodels' OLS
  with ``cov_type="cluster"``);
* the paired difference of two models on the same items, with
  :math:`\mathrm{SE} = \sqrt{\mathrm{var}_A + \mathrm{var}_B - 2\,\mathrm{cov}_{AB}}`, clustered
  in the same way;
* with several epochs (seeds), the within-item and the item-level variance apart.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._dims import (
    CI_DIFFERENCE,
    CI_MEAN,
    CORRELATION,
    DIFFERENCE,
    LANGUAGE,
    MEAN,
    MODEL,
    MODEL_B,
    N_CLUSTERS,
    N_ITEMS,
    N_SEEDS,
    NAN_REASON,
    SE,
    SE_DIFFERENCE,
    SE_DIFFERENCE_IID,
    SE_IID,
    VAR_ITEM,
    VAR_WITHIN,
)
from evaluq._intervals import interval_array
from evaluq._provenance import table_attrs
from evaluq._validation import check_confidence_level
from evaluq.io import TableLike
from evaluq.items import LanguageBlock, pivot_items

_PER_MODEL = (MEAN, SE, SE_IID, VAR_WITHIN, VAR_ITEM, N_SEEDS)
_PER_PAIR = (DIFFERENCE, SE_DIFFERENCE, SE_DIFFERENCE_IID, CORRELATION)


def _cluster_totals(r: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    """Sums of the centred item means over each cluster (model, G); items without clusters."""
    if clusters is None:
        return r
    order = np.argsort(clusters, kind="stable")
    sorted_cl = clusters[order]
    starts = np.flatnonzero(np.r_[True, sorted_cl[1:] != sorted_cl[:-1]])
    return np.add.reduceat(r[:, order], starts, axis=1)


def _robust_var(totals: np.ndarray, n: int) -> np.ndarray:
    r"""CR1 variance of a mean from cluster totals of residuals (last axis: G clusters):
    :math:`\frac{G}{G-1} \sum_g (\sum_{i \in g} r_i)^2 / n^2`; items as their own clusters
    give :math:`s^2 / n` with the ddof = 1 variance :math:`s^2`."""
    g = totals.shape[-1]
    if g < 2:
        return np.full(totals.shape[:-1], np.nan)
    return g / (g - 1) * np.sum(totals**2, axis=-1) / n**2


def _seed_parts(block: LanguageBlock) -> dict[str, np.ndarray]:
    """Item means over the seeds of each model and the seed-level variance decomposition."""
    values = block.values                                     # (model, seed, item)
    k = block.present.sum(axis=1).astype(np.float64)          # seeds per model
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar = np.where(k[:, None] > 0,
                        np.nansum(values, axis=1) / np.where(k > 0, k, 1)[:, None], np.nan)
        dev = np.where(block.present[:, :, None], values - xbar[:, None, :], 0.0)
        within = np.where(k >= 2, (dev**2).sum(axis=(1, 2)) / (values.shape[2] * (k - 1)),
                          np.nan)
        n = values.shape[2]
        centred = xbar - xbar.mean(axis=1, keepdims=True)
        var_means = (centred**2).sum(axis=1) / (n - 1) if n > 1 else np.full(len(k), np.nan)
        var_item = np.maximum(var_means - within / k, 0.0)
    return {"xbar": xbar, "k": k, VAR_WITHIN: within, VAR_ITEM: var_item}


def _language_stats(block: LanguageBlock) -> dict[str, np.ndarray]:
    """Means, SEs and paired differences of one language's models."""
    parts = _seed_parts(block)
    xbar, n = parts["xbar"], block.values.shape[2]
    ok = ~np.isnan(xbar).any(axis=1)
    mean = xbar.mean(axis=1)
    r = np.where(ok[:, None], xbar - mean[:, None], 0.0)
    totals = _cluster_totals(r, block.clusters)
    n_m = len(mean)
    diff = mean[:, None] - mean[None, :]
    se_d = np.empty((n_m, n_m))
    se_d_iid = np.empty((n_m, n_m))
    for a in range(n_m):                                      # one row of pairs at a time
        se_d[a] = np.sqrt(_robust_var(totals[a] - totals, n))
        se_d_iid[a] = np.sqrt(_robust_var(r[a] - r, n))
    gram = r @ r.T
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = gram / np.sqrt(np.outer(np.diag(gram), np.diag(gram)))
    pair_ok = ok[:, None] & ok[None, :]
    return {
        MEAN: np.where(ok, mean, np.nan),
        SE: np.where(ok, np.sqrt(_robust_var(totals, n)), np.nan),
        SE_IID: np.where(ok, np.sqrt(_robust_var(r, n)), np.nan),
        VAR_WITHIN: parts[VAR_WITHIN], VAR_ITEM: np.where(ok, parts[VAR_ITEM], np.nan),
        N_SEEDS: parts["k"],
        DIFFERENCE: np.where(pair_ok, diff, np.nan),
        SE_DIFFERENCE: np.where(pair_ok, se_d, np.nan),
        SE_DIFFERENCE_IID: np.where(pair_ok, se_d_iid, np.nan),
        CORRELATION: np.where(pair_ok, corr, np.nan),
    }


def item_means(
    table: TableLike,
    *,
    model: str,
    item: str,
    score: str,
    cluster: str | None = None,
    language: str | None = None,
    seed: str | None = None,
    confidence_level: float = 0.95,
    missing: Literal["raise", "drop"] = "raise",
) -> xr.Dataset:
    r"""Means over items with their CLT and cluster-robust standard errors, and the paired
    differences between models with theirs.

    Per model (and language), with :math:`\bar x_i` the score of item i averaged over the
    model's seeds (epochs), n items and the mean :math:`\bar x = \frac1n\sum_i \bar x_i`:

    .. math::

        \mathrm{se\_iid} = \sqrt{\frac{1}{n(n-1)} \sum_i (\bar x_i - \bar x)^2}, \qquad
        \mathrm{se} = \frac1n \sqrt{\frac{G}{G-1} \sum_{g=1}^{G}
            \Big(\sum_{i \in g} (\bar x_i - \bar x)\Big)^2}

    ``se`` is the cluster-robust (CR1) standard error over the G clusters of ``cluster``; it
    is exactly statsmodels' ``OLS(x, 1).fit(cov_type="cluster")`` with its default small-
    sample correction :math:`\frac{G}{G-1}\frac{n-1}{n-k}` (k = 1 regressor, so
    :math:`\frac{G}{G-1}`; Inspect AI applies the same factor, Miller 2024 does not). Without
    clusters ``se`` equals ``se_iid``, the CLT SE with the ddof = 1 variance (the formula
    above with every item its own cluster; statsmodels' non-robust OLS SE; Inspect's
    ``stderr``).

    For models A and B on the same items, the paired difference
    :math:`d_i = \bar x_{Ai} - \bar x_{Bi}` has the same two SEs computed on :math:`d_i`,
    which is :math:`\sqrt{\mathrm{var}_A + \mathrm{var}_B - 2\,\mathrm{cov}_{AB}}` with the
    (cluster-robust) variances and covariance of the two means. ``correlation`` is the
    correlation of the two models' item scores (how much pairing gains).

    With K > 1 seeds (epochs) per item, ``var_within`` is the mean over items of the
    ddof = 1 variance over seeds, and ``var_item`` the variance of the items' expected
    scores by moments, :math:`\max(0, s^2_{\bar x} - \mathrm{var\_within} / K)` (Miller
    2024, section 3: :math:`\mathrm{Var}(\bar x_i) = \sigma^2_{item} + \sigma^2_{within}/K`);
    more epochs shrink only the second part.

    Intervals are normal: estimate :math:`\pm z_{1-\alpha/2}` SE (``ci_kind="normal"``).
    With few clusters (G below about 30) the CR1 SE is itself noisy and the normal interval
    undercovers; the coverage simulations in the slow tests show by how much.

    Parameters
    ----------
    table, model, item, score, cluster, language, seed, missing
        As in :func:`evaluq.from_items`; the same checks (no duplicated key, no NaN score,
        missing items raise or are dropped with a warning).
    confidence_level
        Level of the normal intervals ``ci`` and ``ci_difference``.

    Returns
    -------
    xarray.Dataset
        ``mean``, ``se``, ``se_iid``, ``var_within``, ``var_item``, ``n_seeds``
        (model[, language]); ``difference`` (``model`` minus ``model_b``),
        ``se_difference``, ``se_difference_iid``, ``correlation`` (model, model_b[,
        language]); ``ci`` and ``ci_difference`` with a last ``ci_bound`` dim; ``n_items``
        and, with ``cluster``, ``n_clusters`` ([language]). The ``language`` dim is present
        when ``language`` is given. NaN cells carry a ``nan_reason``.

    See Also
    --------
    evaluq.from_items : the same table as a cube with (cluster) bootstrap replicates.
    evaluq.power.minimum_detectable_effect

    References
    ----------
    E. Miller (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640.
    A. C. Cameron and D. L. Miller (2015). A Practitioner's Guide to Cluster-Robust Inference.
    Journal of Human Resources 50(2), 317-372.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "q": [1, 2, 3, 4] * 2,
    ...                    "passage": ["p", "p", "r", "r"] * 2,
    ...                    "ok": [1, 1, 0, 1, 0, 1, 0, 1]})
    >>> res = eq.item_means(df, model="model", item="q", score="ok", cluster="passage")
    >>> res["mean"].values.tolist(), res.se_iid.values.round(4).tolist()
    ([0.75, 0.5], [0.25, 0.2887])
    >>> float(res.difference.sel(model="a", model_b="b"))
    0.25
    >>> round(float(res.se_difference.sel(model="a", model_b="b")), 4)
    0.25
    """
    level = check_confidence_level(confidence_level)
    data = pivot_items(table, model=model, item=item, score=score, language=language,
                       seed=seed, cluster=cluster, missing=missing)
    per_lang = [_language_stats(b) for b in data.blocks]
    languages = [b.label for b in data.blocks]
    out = _to_dataset(per_lang, data.models, languages, data.blocks, cluster is not None)
    out = _with_intervals(out, level)
    _explain_nan(out)
    if language is None:
        out = out.isel({LANGUAGE: 0}, drop=True)
    out.attrs = {"source": data.source, "score_column": score,
                 **({"cluster_column": cluster} if cluster else {}),
                 "se_kind": "cluster-robust (CR1)" if cluster else "iid (CLT, ddof=1)"}
    out.attrs.update(table_attrs(table, out.attrs))  # a harness log's provenance
    return out


def _to_dataset(per_lang: list[dict[str, np.ndarray]], models: np.ndarray, languages: list[Any],
                blocks: list[LanguageBlock], clustered: bool) -> xr.Dataset:
    """Stack every language's statistics on a ``language`` dim."""
    data_vars: dict[str, Any] = {}
    for name in _PER_MODEL:
        data_vars[name] = ((MODEL, LANGUAGE), np.stack([p[name] for p in per_lang], axis=-1))
    for name in _PER_PAIR:
        data_vars[name] = ((MODEL, MODEL_B, LANGUAGE),
                           np.stack([p[name] for p in per_lang], axis=-1))
    data_vars[N_ITEMS] = ((LANGUAGE,), np.array([b.values.shape[2] for b in blocks]))
    if clustered:
        data_vars[N_CLUSTERS] = ((LANGUAGE,), np.array(
            [len(b.cluster_labels) if b.cluster_labels is not None else 0 for b in blocks]))
    return xr.Dataset(data_vars, coords={MODEL: models, MODEL_B: models.copy(),
                                         LANGUAGE: languages})


def _with_intervals(out: xr.Dataset, level: float) -> xr.Dataset:
    """The normal intervals of the means and of the differences."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    for name, est, se in ((CI_MEAN, MEAN, SE), (CI_DIFFERENCE, DIFFERENCE, SE_DIFFERENCE)):
        out[name] = interval_array(out[est] - z * out[se], out[est] + z * out[se],
                                   kind="normal", confidence_level=level)
    return out


def _explain_nan(out: xr.Dataset) -> None:
    """A ``nan_reason`` on every variable with NaN."""
    reasons = {
        VAR_WITHIN: "fewer than 2 seeds (epochs) for the model: no within-item variance",
        SE: "the model has no scores in this language, or fewer than 2 clusters (items)",
        SE_DIFFERENCE: "a model of the pair has no scores in this language, or fewer than 2 "
                       "clusters (items)",
    }
    for name in out.data_vars:
        var = out[name]
        if np.issubdtype(var.dtype, np.floating) and bool(var.isnull().any()):
            var.attrs[NAN_REASON] = reasons.get(
                str(name), "the model (or a model of the pair) has no scores in this language, "
                           "or too few items")

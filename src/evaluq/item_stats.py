r"""Analytic standard errors of means over items: CLT, cluster-robust, paired differences.

For per-item scores (:func:`evaluq.from_items`' tables), the mean over a language's items
and its standard error in closed form, beside the bootstrap of the cube (Miller 2024):

* the CLT standard error of the mean of n items;
* the cluster-robust standard error when items come in clusters (CR1, as statsmodels' OLS
  with ``cov_type="cluster"``);
* the paired difference of two models on the same items, with
  :math:`\mathrm{SE} = \sqrt{\mathrm{var}_A + \mathrm{var}_B - 2\,\mathrm{cov}_{AB}}`, clustered
  in the same way;
* with several epochs (seeds), the within-item and the item-level variance apart;
* for 0/1 scores, intervals that stay in [0, 1] (means) and [-1, 1] (differences) at any
  sample size: Clopper-Pearson on the effective sample size (Korn and Graubard 1998) and
  Newcombe's hybrid score interval of a paired difference (Newcombe 1998), beside the
  effective number of items (n / design effect) of every model.
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
    N_EFFECTIVE,
    N_EFFECTIVE_TRIALS,
    N_ITEMS,
    N_SEEDS,
    NAN_REASON,
    SE,
    SE_DIFFERENCE,
    SE_DIFFERENCE_IID,
    SE_IID,
    SEED,
    VAR_ITEM,
    VAR_WITHIN,
)
from evaluq._intervals import interval_array, interval_from_bounds
from evaluq._kernels import clopper_pearson_bounds, wilson_bounds
from evaluq._provenance import table_attrs
from evaluq._validation import check_confidence_level
from evaluq.io import TableLike
from evaluq.items import LanguageBlock, pivot_items

_PER_MODEL = (MEAN, SE, SE_IID, VAR_WITHIN, VAR_ITEM, N_SEEDS, N_EFFECTIVE)
_PER_PAIR = (DIFFERENCE, SE_DIFFERENCE, SE_DIFFERENCE_IID, CORRELATION)
_BOUNDS = ("bounds", "bounds_difference")
"""The 0/1 route's interval ends per language: (model, 2) and (model, model_b, 2)."""
CI_METHODS = {
    "binary": ("Clopper-Pearson (exact binomial) interval at the effective sample size "
               "n_effective_trials = N / design effect (Korn-Graubard degrees-of-freedom "
               "factor with epochs or clusters); 0/1 scores",
               "Newcombe's hybrid score interval (MOVER: Wilson limits of both means at their "
               "effective sample sizes and the correlation of the two means); 0/1 scores"),
    "normal": ("normal: mean +- z se; scores not all 0/1, so no bounds are imposed (not "
               "clipped to the scores' range)",
               "normal: difference +- z se_difference; scores not all 0/1"),
}
"""What ``attrs["ci_method"]`` / ``attrs["ci_difference_method"]`` say for each route."""


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


def _language_stats(block: LanguageBlock) -> dict[str, Any]:
    """Means, SEs and paired differences of one language's models, the effective number of
    items, and what the 0/1 route needs (private keys, starting with ``_``)."""
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
    pair_ok = ok[:, None] & ok[None, :]
    se = np.where(ok, np.sqrt(_robust_var(totals, n)), np.nan)
    se_iid = np.where(ok, np.sqrt(_robust_var(r, n)), np.nan)
    sizes = (np.ones(n) if block.clusters is None
             else np.bincount(block.clusters).astype(np.float64))
    worst = n**2 / float(np.sum(sizes**2))
    return {
        MEAN: np.where(ok, mean, np.nan), SE: se, SE_IID: se_iid,
        VAR_WITHIN: parts[VAR_WITHIN], VAR_ITEM: np.where(ok, parts[VAR_ITEM], np.nan),
        N_SEEDS: parts["k"], N_EFFECTIVE: _effective_items(se, se_iid, n, worst),
        DIFFERENCE: np.where(pair_ok, diff, np.nan),
        SE_DIFFERENCE: np.where(pair_ok, se_d, np.nan),
        SE_DIFFERENCE_IID: np.where(pair_ok, se_d_iid, np.nan),
        CORRELATION: np.where(pair_ok, _correlation(r), np.nan),
        "_corr_means": _correlation(totals), "_trials": n * parts["k"],
        "_groups": len(sizes), "_worst": worst,
    }


def _correlation(x: np.ndarray) -> np.ndarray:
    """Correlations of the rows of centred sums (model, G): NaN where a row is all zero."""
    gram = x @ x.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return gram / np.sqrt(np.outer(np.diag(gram), np.diag(gram)))


def _effective_items(se: np.ndarray, se_iid: np.ndarray, n: int, worst: float) -> np.ndarray:
    r"""Effective number of items :math:`n / \mathrm{deff}`, with Kish's design effect of the
    clusters :math:`\mathrm{deff} = \mathrm{se}^2 / \mathrm{se\_iid}^2` taken as at least 1;
    where both SEs are 0 (every item alike) the least favourable
    :math:`n^2 / \sum_g c_g^2` (c_g items in cluster g; n without clusters)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.minimum(n * se_iid**2 / se**2, n)
    return np.where(np.isnan(se), np.nan, np.where(se > 0, ratio, worst))


def _effective_trials(mean: np.ndarray, se: np.ndarray, trials: np.ndarray, groups: int,
                      worst: float, q: float) -> np.ndarray:
    r"""Effective number of 0/1 responses of a mean (Korn and Graubard 1998):
    :math:`\min(N, \hat p(1-\hat p)/\widehat{\mathrm{var}}_{srs}\ /\ \mathrm{deff})`, i.e.
    :math:`N / \mathrm{deff}` with :math:`\mathrm{deff} = \mathrm{se}^2 (N - 1) /
    (\hat p(1-\hat p))` at least 1, times :math:`(t_{q, N-1} / t_{q, G-1})^2`; at
    :math:`\hat p \in \{0, 1\}` the least favourable :math:`n^2 / \sum_g c_g^2`."""
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = mean * (1.0 - mean) * trials / ((trials - 1.0) * se**2)
        factor = (stats.t.ppf(q, trials - 1.0) / stats.t.ppf(q, groups - 1.0)) ** 2
    raw = np.where(np.abs(raw - trials) <= 1e-12 * trials, trials, raw)   # deff 1 + rounding
    inner = (mean > 0.0) & (mean < 1.0)
    out = np.where(inner, np.minimum(raw, trials) * factor, worst)
    return np.where(np.isnan(se) | np.isnan(mean), np.nan, out)


def _newcombe(p: np.ndarray, n: np.ndarray, corr: np.ndarray, z: float) -> np.ndarray:
    r"""Newcombe's hybrid score interval of :math:`p_A - p_B` for every pair (model, model_b,
    2): with Wilson ends :math:`(l, u)` and the correlation :math:`r` of the two means,
    :math:`d - \sqrt{(p_A - l_A)^2 - 2r(p_A - l_A)(u_B - p_B) + (u_B - p_B)^2}` and
    :math:`d + \sqrt{(u_A - p_A)^2 - 2r(u_A - p_A)(p_B - l_B) + (p_B - l_B)^2}`; a model
    against itself is [0, 0]."""
    lo, hi = wilson_bounds(p, n, z)
    below, above = (p - lo)[:, None], (hi - p)[:, None]          # model A's side
    r = np.clip(np.nan_to_num(corr, nan=0.0), -1.0, 1.0)
    d = p[:, None] - p[None, :]
    lower = d - np.sqrt(np.maximum(below**2 - 2 * r * below * above.T + (above.T) ** 2, 0.0))
    upper = d + np.sqrt(np.maximum(above**2 - 2 * r * above * below.T + (below.T) ** 2, 0.0))
    same = np.eye(len(p), dtype=bool)
    return np.stack([np.where(same, d, lower), np.where(same, d, upper)], axis=-1)


def _binary_bounds(st: dict[str, Any], level: float) -> dict[str, np.ndarray]:
    """The 0/1 route of one language: effective responses, the means' Clopper-Pearson ends
    and the differences' Newcombe ends."""
    q = 0.5 + level / 2.0
    n_eff = _effective_trials(st[MEAN], st[SE], st["_trials"], st["_groups"], st["_worst"], q)
    z = float(stats.norm.ppf(q))
    return {N_EFFECTIVE_TRIALS: n_eff,
            "bounds": np.stack(clopper_pearson_bounds(st[MEAN] * n_eff, n_eff, 1.0 - q), -1),
            "bounds_difference": _newcombe(st[MEAN], n_eff, st["_corr_means"], z)}


def _is_binary(blocks: list[LanguageBlock]) -> bool:
    """Whether every score of the table is 0 or 1."""
    return all(bool(np.isin(b.values[~np.isnan(b.values)], (0.0, 1.0)).all()) for b in blocks)


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

    **Intervals.** When every score of the table is 0 or 1 (correctness; the item means are
    then proportions, or means of 0/1 epochs), the intervals are built for proportions and
    stay in [0, 1] and [-1, 1] at any sample size; otherwise they are normal, estimate
    :math:`\pm z_{1-\alpha/2}` SE (``ci_kind="normal"``), not clipped to the scores' range
    (for bounded graded scores near a bound read them with care: few items undercover).

    *Means of 0/1 scores* (``ci_kind="clopper-pearson"``): the Clopper-Pearson interval at
    the effective sample size (Korn and Graubard 1998). With N = n K responses (K epochs of
    n items) and the CR1 SE above, the design effect against N independent responses is
    :math:`\mathrm{deff} = \max\big(1, \mathrm{se}^2 (N-1) / \hat p(1-\hat p)\big)` and

    .. math::

        n^*_{\mathrm{eff}} = \frac{N}{\mathrm{deff}}
            \left(\frac{t_{1-\alpha/2,\,N-1}}{t_{1-\alpha/2,\,G-1}}\right)^2, \qquad
        \big[B_{\alpha/2}(x, n^* - x + 1),\ B_{1-\alpha/2}(x + 1, n^* - x)\big],\
        x = \hat p\, n^*

    (``n_effective_trials``; :math:`B_q(a, b)` the q-quantile of Beta(a, b); lower end 0 at
    x = 0, upper end 1 at x = n*). The t factor (G clusters, G = n without clusters) allows
    for the noise of the estimated design effect. One epoch without clusters gives deff = 1
    and N = G = n: the exact Clopper-Pearson interval of x correct in n
    (:func:`evaluq.proportion_interval` with ``method="clopper-pearson"``). At
    :math:`\hat p \in \{0, 1\}` the design effect cannot be estimated; the least favourable
    one is taken (every response of a cluster alike: :math:`n^* = n^2 / \sum_g c_g^2` with
    c_g items in cluster g, n items without clusters). Clopper-Pearson rather than Wilson:
    Wilson's coverage dips to 0.90 (n = 10, p = 0.99) and 0.86 (n = 5, p = 0.97) for the
    accuracies near 1 small benchmarks see, Clopper-Pearson's never falls below the level
    (Brown, Cai and DasGupta 2001); the price is a somewhat wider interval. The slow tests
    measure the coverage with epochs and clusters, where n* is estimated.

    *Paired differences of 0/1 scores* (``ci_kind="newcombe"``): Newcombe's (1998, method
    10) hybrid score interval, from the Wilson ends :math:`(l, u)` of the two means at their
    :math:`n^*` and the correlation r of the two means (cluster-robust; the phi coefficient
    of the paired 2x2 table with one epoch and no clusters),

    .. math::

        \Big[d - \sqrt{(\hat p_A - l_A)^2 - 2r(\hat p_A - l_A)(u_B - \hat p_B)
            + (u_B - \hat p_B)^2},\
        d + \sqrt{(u_A - \hat p_A)^2 - 2r(u_A - \hat p_A)(\hat p_B - l_B)
            + (\hat p_B - l_B)^2}\Big],

    which lies in :math:`[l_A - u_B, u_A - l_B] \subset [-1, 1]` (MOVER, Zou and Donner
    2008); a model against itself is [0, 0]. Its coverage is approximate: exactly (summed
    over every 2x2 table) 0.936 at worst and above the level on average over accuracies
    0.7-0.95 and correlations 0-0.6 at 10 and 30 items. The normal interval of a difference
    leaves [-1, 1] and undercovers badly at few items near 0 or 1.

    ``n_effective`` (every score kind) is the effective number of items,
    :math:`n / \mathrm{deff}` with Kish's design effect of the clusters
    :math:`\max(1, \mathrm{se}^2 / \mathrm{se\_iid}^2)` (n without clusters; the least
    favourable :math:`n^2 / \sum_g c_g^2` where both SEs are 0): rankings and tiers from a
    small ``n_effective`` deserve a caution. With few clusters (G below about 30) the CR1
    SE is itself noisy and the normal interval undercovers; the coverage simulations in the
    slow tests show by how much.

    Parameters
    ----------
    table, model, item, score, cluster, language, seed, missing
        As in :func:`evaluq.from_items`; the same checks (no duplicated key, no NaN score,
        missing items raise or are dropped with a warning). Without ``seed``, a table whose
        ``epoch`` column (a harness log's) tells repeated (model, item) rows apart is read
        as ``seed="epoch"`` (each item's epochs averaged) with an ``ImplicitEpochWarning``.
    confidence_level
        Level of the intervals ``ci`` and ``ci_difference``.

    Returns
    -------
    xarray.Dataset
        ``mean``, ``se``, ``se_iid``, ``var_within``, ``var_item``, ``n_seeds``,
        ``n_effective`` and, with 0/1 scores, ``n_effective_trials`` (model[, language]);
        ``difference`` (``model`` minus ``model_b``), ``se_difference``,
        ``se_difference_iid``, ``correlation`` (model, model_b[, language]); ``ci`` and
        ``ci_difference`` with a last ``ci_bound`` dim, their ``ci_kind`` attribute saying
        which interval was used (``clopper-pearson`` / ``newcombe`` for 0/1 scores,
        ``normal`` otherwise) and ``attrs["ci_method"]`` / ``attrs["ci_difference_method"]``
        in words; ``n_items`` and, with ``cluster``, ``n_clusters`` ([language]). The
        ``language`` dim is present when ``language`` is given. NaN cells carry a
        ``nan_reason``.

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
    E. L. Korn and B. I. Graubard (1998). Confidence intervals for proportions with small
    expected number of positive counts estimated from survey data. Survey Methodology 24,
    193-201.
    R. G. Newcombe (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. Statistics in Medicine 17, 2635-2650.
    G. Y. Zou and A. Donner (2008). Construction of confidence limits about effect measures:
    a general approach. Statistics in Medicine 27, 1693-1702.
    L. D. Brown, T. T. Cai and A. DasGupta (2001). Interval estimation for a binomial
    proportion. Statistical Science 16, 101-133.
    L. Kish (1965). Survey Sampling. Wiley.

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
    binary = _is_binary(data.blocks)
    per_lang = [_language_stats(b) for b in data.blocks]
    if binary:
        for st in per_lang:
            st.update(_binary_bounds(st, level))
    languages = [b.label for b in data.blocks]
    out = _to_dataset(per_lang, data.models, languages, data.blocks, cluster is not None)
    out = _with_intervals(out, level, per_lang if binary else None)
    _explain_nan(out)
    if language is None:
        out = out.isel({LANGUAGE: 0}, drop=True)
    route = CI_METHODS["binary" if binary else "normal"]
    out.attrs = {"source": data.source, "score_column": score,
                 **({"cluster_column": cluster} if cluster else {}),
                 **({"seed_column": data.columns[SEED]} if data.columns[SEED] else {}),
                 "se_kind": "cluster-robust (CR1)" if cluster else "iid (CLT, ddof=1)",
                 "ci_method": route[0], "ci_difference_method": route[1]}
    out.attrs.update(table_attrs(table, out.attrs))  # a harness log's provenance
    return out


def _to_dataset(per_lang: list[dict[str, Any]], models: np.ndarray, languages: list[Any],
                blocks: list[LanguageBlock], clustered: bool) -> xr.Dataset:
    """Stack every language's statistics on a ``language`` dim."""
    data_vars: dict[str, Any] = {}
    extra = (N_EFFECTIVE_TRIALS,) if N_EFFECTIVE_TRIALS in per_lang[0] else ()
    for name in (*_PER_MODEL, *extra):
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


def _with_intervals(out: xr.Dataset, level: float,
                    per_lang: list[dict[str, Any]] | None) -> xr.Dataset:
    """The intervals of the means and of the differences: the 0/1 route's ends (Clopper-
    Pearson, Newcombe) when ``per_lang`` holds them, else normal."""
    names = ((CI_MEAN, MEAN, SE), (CI_DIFFERENCE, DIFFERENCE, SE_DIFFERENCE))
    if per_lang is None:
        z = float(stats.norm.ppf(0.5 + level / 2))
        for name, est, se in names:
            out[name] = interval_array(out[est] - z * out[se], out[est] + z * out[se],
                                       kind="normal", confidence_level=level)
        return out
    for (name, est, _), key, kind in zip(names, _BOUNDS, ("clopper-pearson", "newcombe"),
                                         strict=True):
        bounds = np.stack([p[key] for p in per_lang], axis=-2)   # language before ci_bound
        out[name] = interval_from_bounds(bounds, dims=out[est].dims, coords=out[est].coords,
                                         kind=kind, confidence_level=level)
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

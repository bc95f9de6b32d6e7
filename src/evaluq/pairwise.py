"""Pairwise differences between models from resampled aggregates (formulas.md section 7)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import (
    CI_BOUND,
    CI_BOUND_COORDS,
    LANGUAGE,
    MODEL,
    MODEL_B,
    OBSERVED,
    RESAMPLE,
    SCORE,
)
from evaluq._draws import as_draws, orientation_of, sample_dims_label
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import benjamini_hochberg, holm, percentile_interval
from evaluq._validation import check_bool, check_confidence_level, check_result_dims
from evaluq.errors import CubeError

PAIR_STATS: Final = ("observed", "mean", "sd", "p_greater", "z", "p_value", "p_holm", "p_bh",
                     "verdict")


# --- numpy kernels (samples on the last axis) ---------------------------------------------------

def _difference_stats(d_obs: np.ndarray, d_res: np.ndarray, level: float) -> dict[str, np.ndarray]:
    """Statistics of differences; draws on the last axis of ``d_res``.

    p_value is the two-sided percentile-bootstrap p: 2 min(#(D* <= 0) + 1, #(D* >= 0) + 1)
    / (n + 1), capped at 1 (the smallest level at which the percentile interval excludes 0,
    with the usual +1 so that it is never 0).
    """
    n = d_res.shape[-1]
    sd = d_res.std(axis=-1, ddof=1) if n > 1 else np.full(d_obs.shape, np.nan)
    n_le = (d_res <= 0).sum(axis=-1)
    n_ge = (d_res >= 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(sd > 0, d_obs / sd, np.nan)
    p = np.minimum(1.0, 2.0 * (np.minimum(n_le, n_ge) + 1) / (n + 1))
    return {
        "observed": d_obs,
        "mean": d_res.mean(axis=-1),
        "sd": sd,
        "ci": percentile_interval(d_res, level),
        "p_greater": (d_res > 0).mean(axis=-1),
        "z": z,
        "p_value": p,
    }


def _adjust_pairs(p: np.ndarray, adjust: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Adjust p (..., m, m) over the m(m-1)/2 unordered pairs; symmetric, NaN diagonal."""
    n_m = p.shape[-1]
    iu = np.triu_indices(n_m, k=1)
    adj = np.full(p.shape, np.nan)
    if len(iu[0]):
        upper = adjust(p[..., iu[0], iu[1]])
        adj[..., iu[0], iu[1]] = upper
        adj[..., iu[1], iu[0]] = upper
    return adj


def _pair_matrix(values: np.ndarray, obs: np.ndarray, level: float,
                 orientation: int) -> dict[str, np.ndarray]:
    """All ordered pairs: values (*rest, model, sample), obs (*rest, model).

    Returns arrays (model, model_b, *rest[, ci_bound]); loops over rows (models), never over
    draws.
    """
    n_m = values.shape[-2]
    rows = [_difference_stats(obs[..., i:i + 1] - obs, values[..., i:i + 1, :] - values, level)
            for i in range(n_m)]
    out = {key: np.stack([r[key] for r in rows], axis=-2 if key != "ci" else -3)
           for key in rows[0]}                                         # (*rest, m, m_b[, 2])
    out["p_holm"] = _adjust_pairs(out["p_value"], holm)
    out["p_bh"] = _adjust_pairs(out["p_value"], benjamini_hochberg)
    diag = np.eye(n_m, dtype=bool)
    for key in ("z", "p_value", "p_greater"):
        out[key] = np.where(diag, np.nan, out[key])
    lower, upper = out["ci"][..., 0], out["ci"][..., 1]
    verdict = np.where(lower > 0, 1, np.where(upper < 0, -1, 0)) * orientation
    out["verdict"] = np.where(diag, 0, verdict)
    n_rest = obs.ndim - 1
    return {key: np.moveaxis(value, (n_rest, n_rest + 1), (0, 1)) for key, value in out.items()}


def _pair_dataset(stats: dict[str, np.ndarray], models: np.ndarray, extra_dims: tuple[Any, ...],
                  extra_coords: dict[Any, Any], level: float, attrs: dict[Any, Any],
                  sample_label: str) -> xr.Dataset:
    dims = (MODEL, MODEL_B, *extra_dims)
    data_vars: dict[str, Any] = {key: (dims, value) for key, value in stats.items()
                                 if key != "ci"}
    data_vars["ci"] = interval_from_bounds(stats["ci"], dims=dims, kind="percentile",
                                           confidence_level=level)
    out = xr.Dataset(data_vars, coords={MODEL: models, MODEL_B: models, **extra_coords})
    out.attrs = {**attrs, "confidence_level": level, "ci_kind": "percentile",
                 "sample_dims": sample_label,
                 "difference": "model minus model_b (row minus column)",
                 "p_value": "two-sided percentile p over the draws: 2 min(#(D*<=0)+1, "
                            "#(D*>=0)+1)/(n+1), capped at 1",
                 "adjustment": "Holm and Benjamini-Hochberg over the m(m-1)/2 unordered pairs"}
    descriptions = {
        "observed": "observed difference, model minus model_b",
        "mean": "mean over the draws of the difference",
        "sd": "SD over the draws of the difference (ddof=1)",
        "p_greater": "share of draws with difference > 0",
        "z": "observed / sd (the multilingual paper's 'effect size')",
        "p_value": "two-sided percentile p-value, unadjusted",
        "p_holm": "Holm-adjusted p-value over the unordered pairs",
        "p_bh": "Benjamini-Hochberg-adjusted p-value over the unordered pairs",
        "verdict": "+1: model better than model_b (interval excludes 0), -1: worse, 0: unclear",
    }
    for key, text in descriptions.items():
        out[key].attrs["description"] = text
    return out


# --- public functions -----------------------------------------------------------------------------

def pairwise_differences(
    draws: xr.Dataset | xr.DataArray,
    *,
    sample_dims: str | Sequence[Hashable] = (RESAMPLE,),
    observed: xr.DataArray | None = None,
    confidence_level: float | None = None,
    higher_is_better: bool | None = None,
) -> xr.Dataset:
    r"""Differences between every pair of models, within each draw (resample or posterior).

    :math:`D_{m,m'} = A_m - A_{m'}`: **row minus column** (``model`` minus ``model_b``),
    computed within each resample, so that everything the resample shares (the drawn
    languages; with ``replication="nonparametric"`` the drawn test sets) is paired.

    For each ordered pair: the observed difference, the mean and SD over resamples, the
    percentile interval, :math:`P(D > 0)` (share of resamples), the z statistic
    :math:`z = D_{obs} / \mathrm{SD}(D)` (the multilingual paper calls it the "effect size";
    it is a z statistic, not a standardised effect size), and a two-sided p-value from the
    resample distribution:

    .. math::

        p = \min\left(1, \frac{2\,(\min(\#\{D^{(r)} \le 0\}, \#\{D^{(r)} \ge 0\}) + 1)}
            {n + 1}\right)

    (the percentile-interval inversion: the smallest level whose percentile interval
    excludes 0). ``p_holm`` and ``p_bh`` adjust it (Holm; Benjamini-Hochberg) over the
    m(m-1)/2 unordered pairs; p is symmetric, so both orders of a pair carry the same value.
    ``verdict`` is +1 where the interval says ``model`` is better than ``model_b`` (given the
    orientation), -1 where worse, 0 where the interval contains 0 (unadjusted).

    The same kernel serves resamples and posterior draws: pass the result of
    :func:`evaluq.aggregate`, or any DataArray of draws with a ``model`` dim and the
    ``sample_dims`` (posterior draws: ``sample_dims=("chain", "draw")``). The numbers do not
    depend on how the draws are arranged over the sample dims: ``(chain, draw)`` draws give
    the same result as the same draws stacked into one ``resample`` dim. Any further dim of
    the draws (a language, a metric) is kept, and the tests are adjusted within each of its
    cells. For posterior draws, ``p_greater`` is the posterior probability that ``model`` is
    larger and ``ci`` the equal-tailed credible interval.

    Parameters
    ----------
    draws
        The result of :func:`evaluq.aggregate`, or a DataArray of draws with a ``model`` dim
        (with coordinates) and the ``sample_dims``.
    sample_dims
        The dims that index the draws: ``("resample",)`` (the default, and the only choice for
        an aggregate), or ``("chain", "draw")`` for posterior draws.
    observed
        For a DataArray of draws: the observed (or point) value of each model, a DataArray
        over ``model`` (and any extra dim of the draws); default the mean of the draws. An
        aggregate brings its own ``observed`` variable.
    confidence_level
        Level of the percentile intervals, in (0, 1); default the draws'
        ``confidence_level`` attribute (an aggregate's), or 0.95.
    higher_is_better
        Orientation for ``verdict``; default the ``higher_is_better`` attribute of ``draws``
        (True when absent).

    Returns
    -------
    xarray.Dataset
        Dims (model, model_b[, extra dims][, ci_bound]): ``observed``, ``mean``, ``sd``,
        ``ci``, ``p_greater``, ``z``, ``p_value``, ``p_holm``, ``p_bh``, ``verdict``. The
        diagonal has difference 0 and NaN tests. :func:`pairwise_table` gives a tidy
        DataFrame.

    Raises
    ------
    CubeError
        When a model's draws or observed value hold NaN or inf (naming the model), or the
        draws lack a ``model`` dim or a sample dim.

    References
    ----------
    Sälevä et al. (paper 002), section 6.2 and Table 5; Holm (1979); Benjamini & Hochberg
    (1995); formulas.md section 7.

    See Also
    --------
    pairwise_by_language, pairwise_table, evaluq.rank_distribution

    Examples
    --------
    >>> import numpy as np, xarray as xr, evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 0.0, 3.0], n_languages=6,
    ...                         sigma_between=0.5, rng=0)
    >>> agg = eq.aggregate(eq.resample(cube, n_resamples=2000, rng=1))
    >>> pw = eq.pairwise_differences(agg)
    >>> int(pw.verdict.sel(model="m2", model_b="m0")), pw.attrs["difference"]
    (1, 'model minus model_b (row minus column)')

    Posterior-style draws with (chain, draw) dims give the numbers of the same draws stacked:

    >>> posterior = agg.resampled.data.reshape(4, 500, 3)
    >>> da = xr.DataArray(posterior, dims=("chain", "draw", "model"),
    ...                   coords={"model": agg.model.values})
    >>> pw2 = eq.pairwise_differences(da, sample_dims=("chain", "draw"), observed=agg.observed)
    >>> bool((pw2.p_value.fillna(-1) == pw.p_value.fillna(-1)).all())
    True
    """
    laid_out = as_draws(draws, sample_dims=sample_dims, observed=observed,
                        higher_is_better=higher_is_better)
    level = check_confidence_level(
        laid_out.attrs.get("confidence_level", 0.95) if confidence_level is None
        else confidence_level)
    stats = _pair_matrix(laid_out.values, laid_out.observed, level, laid_out.orientation)
    return _pair_dataset(stats, laid_out.models, laid_out.extra_dims, laid_out.extra_coords,
                         level, {**laid_out.attrs,
                                 "higher_is_better": int(laid_out.orientation == 1)},
                         sample_dims_label(laid_out.sample_dims))


def pairwise_by_language(
    resampled: xr.Dataset,
    *,
    confidence_level: float | None = None,
    higher_is_better: bool | None = None,
) -> xr.Dataset:
    """Which model wins on which language: pairwise differences of scores per language.

    The per-language view of :func:`pairwise_differences`: for every language l and ordered
    pair, :math:`D_{m,m',l} = y_{ml} - y_{m'l}` (row minus column) over the resamples of
    :func:`evaluq.resample` with ``languages="fixed"`` and replication noise (parametric: the
    noise is independent across models; nonparametric: paired by the shared test-set draw).
    Holm / BH adjust over the unordered pairs **within each language**.

    Parameters
    ----------
    resampled
        The result of ``eq.resample(cube, languages="fixed", replication=...)`` with
        ``replication`` other than ``"none"``.
    confidence_level, higher_is_better
        As in :func:`pairwise_differences`.

    Returns
    -------
    xarray.Dataset
        As :func:`pairwise_differences`, with an extra ``language`` dim. ``verdict`` says who
        wins where (+1: ``model`` wins on that language, -1: ``model_b`` wins, 0: unclear).

    See Also
    --------
    pairwise_differences, pairwise_table

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=3, rng=0)
    >>> pl = eq.pairwise_by_language(eq.resample(cube, n_resamples=500, rng=0))
    >>> dict(pl.verdict.sizes)
    {'model': 2, 'model_b': 2, 'language': 3}
    """
    if not isinstance(resampled, xr.Dataset) or SCORE not in resampled \
            or RESAMPLE not in resampled.dims:
        raise CubeError("`resampled` must be the result of eq.resample (a Dataset with a "
                        "'resample' dim)")
    languages = resampled.attrs.get("languages")
    if languages not in (None, "fixed"):
        raise ValueError("the per-language view needs resamples with languages='fixed'; got "
                         f"`resampled` with languages={languages!r}")
    check_result_dims("resampled", resampled[SCORE], (RESAMPLE, MODEL, LANGUAGE),
                      "eq.resample(..., languages='fixed')")
    if resampled.attrs.get("replication") == "none":
        raise ValueError("the per-language view needs replication noise; got "
                         "replication='none' (every resample is the same)")
    if np.isnan(resampled[SCORE].values).any() or np.isnan(resampled[OBSERVED].values).any():
        raise CubeError("the resamples hold NaN scores (missing cells); the per-language "
                        "view needs every (model, language)")
    score = resampled[SCORE].assign_attrs(resampled.attrs)
    return pairwise_differences(score, observed=resampled[OBSERVED],
                                confidence_level=confidence_level,
                                higher_is_better=higher_is_better)


TABLE_COLUMNS = ("observed", "mean", "sd", "lower", "upper", "p_greater", "z", "p_value",
                 "p_holm", "p_bh", "verdict")
"""The columns of :func:`pairwise_table` (those of them a Dataset of draws' differences has)."""


def _pair_frame(pairwise: xr.Dataset) -> tuple[pd.DataFrame, str]:
    """The per-pair statistics as a DataFrame with ``lower`` / ``upper`` and ``verdict``, and
    the name of its point estimate (``observed``, or ``mean`` for posterior differences)."""
    if "ci" not in pairwise:
        raise CubeError("`pairwise` needs a 'ci' variable (model, model_b, ci_bound)")
    point = "observed" if "observed" in pairwise else "mean"
    if point not in pairwise:
        raise CubeError("`pairwise` needs an 'observed' or 'mean' variable besides 'ci'")
    per_pair = [v for v in TABLE_COLUMNS if v in pairwise and v not in ("lower", "upper")]
    frame = pairwise[per_pair].to_dataframe()[per_pair]
    for bound in CI_BOUND_COORDS:
        frame[bound] = pairwise["ci"].sel({CI_BOUND: bound}, drop=True).to_series()
    if "verdict" not in frame:  # draws' differences without one: does the interval exclude 0
        lower, upper = frame["lower"].to_numpy(float), frame["upper"].to_numpy(float)
        frame["verdict"] = np.where(lower > 0, 1, np.where(upper < 0, -1, 0)) * \
            orientation_of(pairwise.attrs, None)
    return frame, point


def pairwise_table(pairwise: xr.Dataset, *, unique: bool = False) -> pd.DataFrame:
    """Tidy DataFrame of :func:`pairwise_differences` / :func:`pairwise_by_language`.

    One row per ordered pair of distinct models (and language), columns ``observed``,
    ``mean``, ``sd``, ``lower``, ``upper``, ``p_greater``, ``z``, ``p_value``, ``p_holm``,
    ``p_bh``, ``verdict``. This is where the pairs' order and verdict are decided; the forest
    plot (:func:`evaluq.plots.forest_plot`) draws the rows of this table.

    Parameters
    ----------
    pairwise
        The result of :func:`pairwise_differences` or :func:`pairwise_by_language`, or any
        Dataset of differences with ``ci`` and ``observed`` or ``mean`` (the posterior
        differences of a hierarchical fit): the columns it lacks are left out, ``mean`` then
        orders the rows and ``verdict`` is +1 / -1 / 0 as the interval excludes 0 (oriented).
    unique
        Keep each unordered pair once (per language), oriented with the better model first:
        ``observed >= 0`` when higher is better, ``observed <= 0`` when lower is better (the
        orientation used for ``verdict``, stored in the ``higher_is_better`` attribute), so
        ``verdict`` is 1 or 0. Rows are sorted by the observed advantage of the first model,
        largest first (within each language). A tie (``observed == 0``) keeps the pair in the
        models' order. The kept rows are the same rows as in the full table (the statistics
        of ``(m', m)`` are those of ``(m, m')`` with the sign flipped).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(model, model_b[, language])``.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 2.0, 1.0], rng=0)
    >>> pw = eq.pairwise_differences(eq.aggregate(eq.resample(cube, n_resamples=200, rng=0)))
    >>> eq.pairwise_table(pw).shape
    (6, 11)
    >>> eq.pairwise_table(pw, unique=True).index.tolist()
    [('m2', 'm0'), ('m2', 'm1'), ('m1', 'm0')]
    """
    if not isinstance(pairwise, xr.Dataset) or "ci" not in pairwise or (
            MODEL_B not in pairwise["ci"].dims
            and {str(d) for d in pairwise["ci"].dims} <= {MODEL, LANGUAGE, CI_BOUND}):
        raise CubeError("`pairwise` must be the result of eq.pairwise_differences or "
                        "eq.pairwise_by_language")
    check_result_dims("pairwise", pairwise["ci"], (MODEL, MODEL_B, CI_BOUND),
                      "eq.pairwise_differences")
    check_bool("unique", unique)
    frame, point = _pair_frame(pairwise)
    first = frame.index.get_level_values(MODEL)
    second = frame.index.get_level_values(MODEL_B)
    keep = first != second
    columns = [c for c in TABLE_COLUMNS if c in frame]
    at = pairwise.attrs
    spread = (f"sd is the SD over {at.get('n_resamples', '?')} resamples; lower/upper the "
              f"{at.get('confidence_level', 0.95):.0%} {at.get('ci_kind', 'percentile')} interval")
    frame.attrs = {"uncertainty": spread, "caption": (
        f"Pairwise differences in {at.get('how', 'mean')} {at.get('metric', 'score')}, model "
        f"minus model_b: {spread}; p-values two-sided, Holm- and BH-adjusted over the pairs.")}
    if not unique:
        return frame.loc[keep, columns]
    position = {m: i for i, m in enumerate(pairwise[MODEL].values.tolist())}
    before = np.array([position[a] < position[b] for a, b in zip(first, second, strict=True)])
    advantage = orientation_of(pairwise.attrs, None) * frame[point].to_numpy(dtype=np.float64)
    # the better model first; a tie or an undefined difference keeps the models' order
    better_first = (advantage > 0) | (~(advantage < 0) & ~(advantage > 0) & before)
    out = frame.loc[keep & better_first, columns]
    key = pd.Series(advantage[keep & better_first], index=out.index)
    order = np.argsort(-key.to_numpy(), kind="stable")
    out = out.iloc[order]
    extra = [name for name in out.index.names if name not in (MODEL, MODEL_B)]
    if extra:  # group by language (stable: the advantage order holds within each group)
        codes = [out.index.get_level_values(n) for n in extra]
        group = np.lexsort([pd.factorize(c, sort=True)[0] for c in reversed(codes)])
        out = out.iloc[group]
    return out

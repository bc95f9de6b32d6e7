"""Model rankings by expected and empirical soft metrics, with bootstrap intervals over items."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._deprecation import renamed_argument
from evaluq._dims import CLASS, ITEM, MODEL
from evaluq._kernels import bootstrap_counts, percentile_interval
from evaluq._results import N_RESAMPLES_INTERVAL
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_rng,
)
from evaluq.dirichlet._binned import empirical_metric
from evaluq.dirichlet._expectations import (
    expected_cross_entropy,
    expected_emd,
    expected_jsd,
    expected_kl,
)
from evaluq.dirichlet._posterior import (
    _SHORT,
    DirichletPosterior,
    Metric,
    _as_posterior,
    _as_q,
    _check_numeric,
)


@renamed_argument("alpha", "prior", meaning="the Dirichlet prior concentration")
def model_ranking(
    counts: Any,
    predictions: xr.DataArray | Mapping[Hashable, Any],
    *,
    prior: Any = None,
    metrics: Sequence[Metric] = ("cross_entropy", "emd"),
    n_resamples: int = N_RESAMPLES_INTERVAL,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> pd.DataFrame:
    r"""Rank models under empirical and expected metrics (the paper's model-ranking table),
    with a bootstrap over items saying how firm each ranking is.

    For each metric, the empirical version compares the prediction with the raw annotation
    frequencies ``n_i / n_i0`` and the expected version averages it over the Dirichlet posterior.
    Both are means over items; lower is better for all of them.

    The items are then resampled with replacement ``n_resamples`` times (the same resamples
    for every metric and model, so differences between models are paired). With ``c_b`` the
    bootstrap counts of resample b and ``v_mi`` the per-item value of model m,

    .. math:: \bar v^{*}_{mb} = \frac1N \sum_i c_{bi}\, v_{mi}

    (one matrix product); ``se`` is the SD of the resample means, ``lower`` / ``upper`` their
    equal-tailed percentile interval at ``confidence_level``, and ``p_best`` the fraction of
    resamples in which the observed best model is still best (ties count as best). The
    per-item posterior expectations are held fixed: the bootstrap measures how much the
    ranking depends on which items were annotated, not the annotation noise within an item
    (that is what the expected metrics average over).

    Parameters
    ----------
    counts
        Counts or a :class:`DirichletPosterior` (every item needs at least one annotation for
        the empirical metrics).
    predictions
        A DataArray with ``model``, ``item`` and ``class`` dims, or a mapping of model name ->
        ``(n_items, K)`` array.
    prior
        Prior concentration (default 1).
    metrics
        Any of ``"cross_entropy"``, ``"kl"``, ``"jsd"``, ``"emd"``.
    n_resamples
        Bootstrap resamples of the items (default 9999, the default of every bootstrap interval
        in evaluq); 0 skips the bootstrap (only the first columns).
    confidence_level
        Level of the percentile intervals.
    rng
        Seed or Generator for the bootstrap.

    Returns
    -------
    pandas.DataFrame
        Rows ``"CE empirical"``, ``"E[CE]"``, ... ; one column per model (the mean over items),
        then ``best`` (the model with the lowest value); with a bootstrap also ``p_best`` and,
        per model ``m``, ``"m se"``, ``"m lower"`` and ``"m upper"``.

    See Also
    --------
    evaluq._kernels.bootstrap_counts

    Examples
    --------
    >>> import evaluq as eq
    >>> counts = [[0, 2, 1, 0, 0], [0, 0, 1, 1, 0], [3, 1, 0, 0, 0]]
    >>> preds = {"A": [[0, .7, .3, 0, 0], [0, 0, .5, .5, 0], [.7, .3, 0, 0, 0]],
    ...          "B": [[.1, .5, .2, .1, .1], [.1, .1, .3, .4, .1], [.5, .3, .1, .05, .05]]}
    >>> table = eq.dirichlet.model_ranking(counts, preds, metrics=["emd"], rng=0)
    >>> table["best"].tolist()
    ['A', 'B']
    >>> table.columns.tolist()
    ['A', 'B', 'best', 'p_best', 'A se', 'A lower', 'A upper', 'B se', 'B lower', 'B upper']
    """
    post, _ = _as_posterior(counts, prior)
    if post.item_dims != (ITEM,):
        raise ValueError(f"`counts` is a posterior with the item dims {list(post.item_dims)}; "
                         f"model_ranking resamples items under the one dim {ITEM!r} (rename "
                         "them, e.g. counts.rename(doc='item'), or stack several into one)")
    if post.single:  # keep the item dim: the ranking averages over items
        post = DirichletPosterior(concentration=post.concentration, alpha=post.alpha)
    n_boot = check_int("n_resamples", n_resamples, minimum=0)
    if n_boot == 1:
        raise ValueError("`n_resamples` must be 0 (no bootstrap) or >= 2 (one resample says "
                         "nothing about a spread: its interval would have width zero); got 1")
    level = check_confidence_level(confidence_level)
    gen = check_rng(rng)
    qa = _as_q(_model_predictions(predictions), post, name="predictions")
    if isinstance(metrics, str) or len(metrics) == 0:
        raise ValueError(f"`metrics` must be a non-empty sequence of 'cross_entropy', 'kl', "
                         f"'jsd', 'emd'; got {metrics!r}")
    for m in metrics:
        check_choice("metrics", m, ("cross_entropy", "kl", "jsd", "emd"))
    per_item = _per_item_metrics(post, qa, metrics)
    rows = {name: da.mean(ITEM) for name, da in per_item.items()}
    df = pd.DataFrame({name: da.to_series() for name, da in rows.items()}).T
    df.columns.name = MODEL
    df["best"] = df.idxmin(axis=1)
    if n_boot == 0:
        return df
    models = list(df.columns[:-1])
    # the resampled means (resample, row, model) are kept for the intervals, a few copies
    check_memory("n_resamples", 4 * 8 * n_boot * len(per_item) * len(models))
    means = _resampled_means(per_item, n_boot, gen)
    _add_uncertainty(df, means, models, level)
    df.attrs = {"n_resamples": n_boot, "confidence_level": level}
    return df


def _model_predictions(predictions: Any) -> xr.DataArray:
    """The predictions as a DataArray with a ``model`` dim (a mapping model -> array is
    stacked as (model, item, class))."""
    if isinstance(predictions, xr.DataArray):
        if MODEL not in predictions.dims:
            raise ValueError(f"`predictions` must have a {MODEL!r} dim; got {predictions.dims}")
        return predictions
    if not predictions:
        raise ValueError("`predictions` is empty")
    names = list(predictions)
    arrays = [np.asarray(predictions[m]) for m in names]
    for m, a in zip(names, arrays, strict=True):
        _check_numeric(f"predictions[{m!r}]", a.dtype)
    arrays = [a.astype(np.float64) for a in arrays]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"every model's predictions need the same shape; got {shapes}")
    return xr.DataArray(np.stack(arrays), dims=(MODEL, ITEM, CLASS), coords={MODEL: names})


def _per_item_metrics(post: DirichletPosterior, qa: xr.DataArray,
                      metrics: Sequence[Metric]) -> dict[str, xr.DataArray]:
    """Per item and model: the empirical metric and its exact expectation, by row name."""
    exact = {"cross_entropy": expected_cross_entropy, "kl": expected_kl,
             "jsd": expected_jsd, "emd": expected_emd}
    per_item = {}
    for m in metrics:
        per_item[f"{_SHORT[m]} empirical"] = empirical_metric(post, qa, metric=m)
        per_item[f"E[{_SHORT[m]}]"] = exact[m](post, qa)
    return per_item


def _resampled_means(per_item: dict[str, xr.DataArray], n_boot: int,
                     gen: np.random.Generator) -> np.ndarray:
    """Bootstrap means over items (n_boot, rows, models), chunked over resamples."""
    values = np.stack([da.transpose(MODEL, ITEM).values for da in per_item.values()])
    n_rows, n_models, n_items = values.shape
    flat = values.reshape(-1, n_items).T  # (items, rows * models)
    # a prediction of 0 where the truth has mass gives an infinite CE / KL for that item: a
    # resample mean is infinite iff it draws such an item (0 * inf would give NaN)
    infinite = np.isposinf(flat)
    finite = np.where(infinite, 0.0, flat)
    means = np.empty((n_boot, n_rows * n_models))
    step = max(1, 4_000_000 // n_items)
    for start in range(0, n_boot, step):
        k = min(step, n_boot - start)
        c = bootstrap_counts(gen, n_items, k)
        block = c @ finite / n_items
        if infinite.any():
            block[(c @ infinite) > 0] = np.inf
        means[start:start + k] = block
    return means.reshape(n_boot, n_rows, n_models)


def _add_uncertainty(df: pd.DataFrame, means: np.ndarray, models: list[Any],
                     level: float) -> None:
    """``p_best`` and each model's SE and percentile interval, as columns of ``df``."""
    n_boot, n_rows, n_models = means.shape
    with np.errstate(invalid="ignore"):  # inf - inf where resample means are infinite
        se = means.std(axis=0, ddof=1) if n_boot > 1 else np.full((n_rows, n_models), np.nan)
    bounds = percentile_interval(means, level, axis=0)
    lower, upper = bounds[..., 0], bounds[..., 1]
    se = np.where(np.isinf(means).any(axis=0), np.inf, se)
    # the only NaN a percentile can get is from interpolating between two infinite means
    lower, upper = np.nan_to_num(lower, nan=np.inf), np.nan_to_num(upper, nan=np.inf)
    best = np.asarray(df[models].to_numpy(dtype=np.float64).argmin(axis=1))
    best_means = np.take_along_axis(means, best[None, :, None], axis=2)[..., 0]
    df["p_best"] = (best_means <= means.min(axis=2)).mean(axis=0)
    for j, model in enumerate(models):
        df[f"{model} se"] = se[:, j]
        df[f"{model} lower"] = lower[:, j]
        df[f"{model} upper"] = upper[:, j]

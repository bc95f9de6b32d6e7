"""Rank distributions, significance tiers and the leaderboard table (formulas.md section 7)."""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import CI_BOUND, MODEL, MODEL_B, RANK, RESAMPLE
from evaluq._validation import check_choice, check_real
from evaluq.aggregate import RESAMPLED
from evaluq.pairwise import _check_aggregated, _orientation, pairwise_differences
from evaluq.resampling import OBSERVED

TIE_RULE: Final = ("models tied in a resample share the ranks they span evenly: k models tied "
                   "for ranks r..r+k-1 each get probability 1/k at each of those ranks")
ADJUSTMENTS: Final = ("holm", "bh", "none")
_RANK_CHUNK: Final = 2**24          # pairwise comparisons held at once


# --- numpy kernels (models on the last axis) ------------------------------------------------------

def _rank_span(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best rank and tie count of each model; values (..., m) oriented so larger is better."""
    better = (values[..., None, :] > values[..., :, None]).sum(axis=-1)    # (..., m)
    ties = (values[..., None, :] == values[..., :, None]).sum(axis=-1)     # includes itself
    return better + 1, ties


def _rank_probabilities(values: np.ndarray) -> np.ndarray:
    """P(rank = q) (model, rank) over the first axis (resamples); ties split evenly.

    A model whose best rank is ``lo`` with ``k`` tied models puts 1/k on ranks lo..lo+k-1:
    added as +1/k at lo and -1/k at lo+k on a difference array, then summed cumulatively.
    The pairwise comparisons take O(models^2) memory per resample, so the resamples are
    processed in chunks.
    """
    n_r, n_m = values.shape
    width = n_m + 1
    offset = np.arange(n_m) * width
    total = np.zeros(n_m * width)
    step = max(1, _RANK_CHUNK // (n_m * n_m))
    for start in range(0, n_r, step):
        lo, ties = _rank_span(values[start:start + step])
        weight = 1.0 / ties
        total += np.bincount((offset + lo - 1).ravel(), weight.ravel(), minlength=n_m * width)
        total -= np.bincount((offset + lo - 1 + ties).ravel(), weight.ravel(),
                             minlength=n_m * width)
    return np.cumsum(total.reshape(n_m, width), axis=1)[:, :n_m] / n_r


def _average_rank(values: np.ndarray) -> np.ndarray:
    lo, ties = _rank_span(values)
    return lo + (ties - 1) / 2.0


# --- public functions -----------------------------------------------------------------------------

def rank_distribution(aggregated: xr.Dataset, *,
                      higher_is_better: bool | None = None) -> xr.Dataset:
    """Distribution of each model's rank over the resamples; rank 1 is the best.

    In every resample the models are ranked by their aggregate (largest first when
    ``higher_is_better``). Tie rule: models tied in a resample share the ranks they span
    evenly (k models tied for ranks r..r+k-1 each get probability 1/k at each of those ranks),
    so the probabilities sum to 1 over ranks for each model and over models for each rank;
    the expected rank is then the mean of the average ranks.

    Parameters
    ----------
    aggregated
        The result of :func:`evaluq.aggregate`.
    higher_is_better
        Orientation; default the ``higher_is_better`` attribute carried from the cube.

    Returns
    -------
    xarray.Dataset
        ``probability`` (model, rank): P(rank = r); ``expected_rank`` (model); ``p_best``
        (model): P(rank = 1); ``observed_rank`` (model): rank of the observed aggregate
        (average rank on ties).

    References
    ----------
    Sälevä et al. (paper 002), Tables 3 and 6; formulas.md section 7.

    See Also
    --------
    significance_groups, leaderboard, evaluq.pairwise_differences

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 1.0, 5.0], rng=0)
    >>> rd = eq.rank_distribution(eq.aggregate(eq.resample(cube, n_resamples=1000, rng=0)))
    >>> rd.probability.sum("rank").values
    array([1., 1., 1.])
    >>> float(rd.p_best.sel(model="m2"))
    1.0
    """
    _check_aggregated(aggregated)
    orientation = _orientation(aggregated, higher_is_better)
    values = orientation * aggregated[RESAMPLED].transpose(RESAMPLE, MODEL).values
    observed = orientation * aggregated[OBSERVED].values
    n_m = values.shape[1]
    prob = _rank_probabilities(values)
    ranks = np.arange(1, n_m + 1)
    out = xr.Dataset(
        {
            "probability": ((MODEL, RANK), prob),
            "expected_rank": (MODEL, prob @ ranks),
            "p_best": (MODEL, prob[:, 0]),
            "observed_rank": (MODEL, _average_rank(observed)),
        },
        coords={MODEL: aggregated[MODEL].values, RANK: ranks},
    )
    out.attrs = {**aggregated.attrs, "higher_is_better": int(orientation > 0),
                 "tie_rule": TIE_RULE}
    out["probability"].attrs["description"] = "P(rank = r) over resamples; rank 1 is the best"
    return out


def significance_groups(
    aggregated: xr.Dataset,
    *,
    alpha: float = 0.05,
    adjustment: str = "holm",
    higher_is_better: bool | None = None,
) -> xr.DataArray:
    """Tiers of models that the data cannot separate, for a leaderboard.

    Rule: sort the models by their observed aggregate, best first (equal aggregates keep the
    cube's model order). The best model opens tier 1. Walk down the list: a model joins the
    current tier unless the adjusted pairwise test (:func:`evaluq.pairwise_differences`)
    between the **tier's top model** and it rejects at ``alpha``, in which case it opens the
    next tier. Tiers are therefore contiguous on the leaderboard; a model may be separable
    from the top of its tier's predecessor but not from its own tier's top.

    Parameters
    ----------
    aggregated
        The result of :func:`evaluq.aggregate`.
    alpha
        Level of the tests, in (0, 1).
    adjustment
        ``"holm"`` (family-wise error over the m(m-1)/2 pairs), ``"bh"`` (false discovery
        rate) or ``"none"``.
    higher_is_better
        Orientation; default the attribute.

    Returns
    -------
    xarray.DataArray
        ``tier`` (model): 1 for the top tier, 2 for the next, ...

    See Also
    --------
    leaderboard, rank_distribution, evaluq.pairwise_differences

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 0.05, 5.0], sigma_between=0.5,
    ...                         rng=0)
    >>> tiers = eq.significance_groups(eq.aggregate(eq.resample(cube, n_resamples=2000, rng=0)))
    >>> tiers.to_series().to_dict()
    {'m0': 2, 'm1': 2, 'm2': 1}
    """
    _check_aggregated(aggregated)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    adjustment = check_choice("adjustment", adjustment, ADJUSTMENTS)
    orientation = _orientation(aggregated, higher_is_better)
    pw = pairwise_differences(aggregated, higher_is_better=orientation > 0)
    return _tiers(aggregated, pw, alpha, adjustment, orientation)


def _tiers(aggregated: xr.Dataset, pw: xr.Dataset, alpha: float, adjustment: str,
           orientation: int) -> xr.DataArray:
    key = {"holm": "p_holm", "bh": "p_bh", "none": "p_value"}[adjustment]
    p = pw[key].transpose(MODEL, MODEL_B).values
    order = np.argsort(-orientation * aggregated[OBSERVED].values, kind="stable")
    tier = np.zeros(len(order), dtype=np.int64)
    current, top = 1, order[0]
    for m in order:
        if m != top and p[top, m] < alpha:
            current, top = current + 1, m
        tier[m] = current
    out = xr.DataArray(tier, dims=(MODEL,), coords={MODEL: aggregated[MODEL].values},
                       name="tier")
    out.attrs = {"alpha": alpha, "adjustment": adjustment,
                 "rule": "sorted by observed aggregate; a new tier starts when the adjusted "
                         "test against the current tier's top model rejects"}
    return out


def leaderboard(
    aggregated: xr.Dataset,
    *,
    alpha: float = 0.05,
    adjustment: str = "holm",
    higher_is_better: bool | None = None,
) -> pd.DataFrame:
    """The leaderboard as a tidy DataFrame, best model first.

    Columns: ``observed`` (the aggregate), ``sd``, ``lower``, ``upper`` (the percentile
    interval of :func:`evaluq.aggregate`), ``observed_rank``, ``expected_rank``, ``p_best``
    (:func:`rank_distribution`) and ``tier`` (:func:`significance_groups`).

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 3.0, 8.0], sigma_between=0.5,
    ...                         rng=0)
    >>> board = eq.leaderboard(eq.aggregate(eq.resample(cube, n_resamples=1000, rng=0)))
    >>> list(board.index)
    ['m2', 'm1', 'm0']
    >>> list(board.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['observed', 'sd', 'lower', 'upper', 'observed_rank', 'expected_rank', 'p_best',
     'tier']
    """
    _check_aggregated(aggregated)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    adjustment = check_choice("adjustment", adjustment, ADJUSTMENTS)
    orientation = _orientation(aggregated, higher_is_better)
    ranks = rank_distribution(aggregated, higher_is_better=orientation > 0)
    pw = pairwise_differences(aggregated, higher_is_better=orientation > 0)
    tiers = _tiers(aggregated, pw, alpha, adjustment, orientation)
    table = pd.DataFrame(
        {
            "observed": aggregated[OBSERVED].values,
            "sd": aggregated["sd"].values,
            "lower": aggregated["ci"].sel({CI_BOUND: "lower"}).values,
            "upper": aggregated["ci"].sel({CI_BOUND: "upper"}).values,
            "observed_rank": ranks["observed_rank"].values,
            "expected_rank": ranks["expected_rank"].values,
            "p_best": ranks["p_best"].values,
            "tier": tiers.values,
        },
        index=pd.Index(aggregated[MODEL].values, name=MODEL),
    )
    order = np.argsort(-orientation * table["observed"].to_numpy(), kind="stable")
    at, level = aggregated.attrs, aggregated.attrs.get("confidence_level", 0.95)
    spread = (f"sd is the SD over {at.get('n_resamples', '?')} resamples "
              f"({at.get('replication', '?')} replication, {at.get('languages', '?')} "
              f"languages); lower/upper the {level:.0%} percentile interval")
    table.attrs = {"uncertainty": spread, "caption": (
        f"Leaderboard of the {at.get('how', 'mean')} {at.get('metric', 'score')} over "
        f"{aggregated.attrs.get('n_languages', '?')} languages, best first: {spread}; tier from "
        f"{adjustment}-adjusted pairwise tests at alpha = {alpha:g}.")}
    return table.iloc[order]

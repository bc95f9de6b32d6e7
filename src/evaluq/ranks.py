"""Rank distributions, significance tiers and the leaderboard table (formulas.md section 7)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import MODEL, MODEL_B, RANK, RESAMPLE
from evaluq._draws import Draws, as_draws, check_block, sample_dims_label
from evaluq._kernels import p_value_floor, percentile_interval
from evaluq._validation import check_choice, check_confidence_level, check_real
from evaluq._warn import warn
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.pairwise import pairwise_differences

TIE_RULE: Final = ("models tied in a resample share the ranks they span evenly: k models tied "
                   "for ranks r..r+k-1 each get probability 1/k at each of those ranks")
ADJUSTMENTS: Final = ("holm", "bh", "none")
_RANK_CHUNK: Final = 2**18          # values ranked at once (bounds the memory; cache-sized)
_PAIRWISE_MODELS: Final = 10        # up to this many models, pairwise comparison beats a sort


# --- numpy kernels (models on the last axis) ------------------------------------------------------

def _rank_span(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best rank and tie count of each model; values (..., m) oriented so larger is better
    (the observed ranks; the draws go through :func:`_rank_codes`).

    Up to ``_PAIRWISE_MODELS`` models, every pair is compared (O(m^2) per row, but a few
    vectorised comparisons); beyond, one sort per row, O(m log m). Both are exact.
    """
    if values.shape[-1] <= _PAIRWISE_MODELS:
        better = (values[..., None, :] > values[..., :, None]).sum(axis=-1)
        ties = (values[..., None, :] == values[..., :, None]).sum(axis=-1)   # includes itself
        return better + 1, ties
    return _sorted_rank_span(values)


def _sorted_rank_span(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_rank_span` by one sort per row: in the row sorted from best to worst, a run of
    equal values is a tie group; its first position + 1 is the best rank of each member and
    its length the tie count."""
    n_m = values.shape[-1]
    order = np.argsort(-values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    position = np.broadcast_to(np.arange(n_m), ordered.shape)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    ends = np.ones(ordered.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, n_m), axis=-1),
                                         axis=-1), axis=-1)
    lo = np.empty(ordered.shape, dtype=np.int64)
    ties = np.empty(ordered.shape, dtype=np.int64)
    np.put_along_axis(lo, order, first + 1, axis=-1)
    np.put_along_axis(ties, order, last - first + 1, axis=-1)
    return lo, ties


RankCounts = dict[int, np.ndarray]
"""Per tie size k, an int64 difference array (batch, model, rank + 1) of tie-group spans."""


def _rank_codes(rows: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Flat (row-model, best rank) codes of ``rows`` (batch, r, m) and tie sizes (or None).

    One ascending sort per row (numpy's default sort: the models of a tie group are
    contiguous in any order, and only the groups matter). In the sorted row, a group of
    equal values at positions ``g0..g1`` holds the models whose best rank is ``m - g1``
    (the count of strictly larger values + 1) and whose tie count is ``g1 - g0 + 1``. The
    code of a model in batch cell b is ``(b m + model) (m + 1) + rank - 1``. Without ties
    (checked per chunk) the rank is ``m - position``: no group search. Linear in m after the
    sort, with no per-model pass.
    """
    batch, n_r, n_m = rows.shape
    order = np.argsort(rows, axis=-1)
    flat = np.arange(batch * n_r, dtype=np.int64).reshape(batch, n_r, 1) * n_m + order
    ordered = np.take(rows.ravel(), flat)                     # a flat gather: no index grids
    rank_code = n_m - 1 - np.arange(n_m)                      # rank - 1 without ties
    codes = order                                             # in place, no new array:
    codes *= width                                            # (b m + model) (m + 1)
    codes += (np.arange(batch, dtype=np.int64) * (n_m * width))[:, None, None] + rank_code
    equal = ordered[..., 1:] == ordered[..., :-1]
    if not equal.any():
        return codes.ravel(), None
    base = codes - rank_code
    # groups of equal values: a global group id along the flattened rows
    starts = np.ones(ordered.shape, dtype=bool)
    starts[..., 1:] = ~equal
    group = np.cumsum(starts.ravel()) - 1
    size = np.bincount(group)
    first = np.flatnonzero(starts.ravel())                        # flat start of each group
    position = first[group] % n_m + size[group] - 1               # g1 within the row
    ties = size[group]
    return base.ravel() + (n_m - 1 - position), ties


def _rank_counts(values: np.ndarray) -> RankCounts:
    """Integer rank counts of ``values`` (batch, model, n) over its last axis (draws).

    A model whose best rank is ``lo`` with ``k`` tied models (itself included) spans ranks
    lo..lo+k-1: +1 at lo and -1 at lo+k on the difference array of tie size k (one
    ``bincount`` per tie size present, over flattened (model, rank) codes). Counts are
    integers, so adding the counts of any split of the draws gives the same numbers: the
    result does not depend on chunking or summation order. The draws are ranked in chunks of
    ``_RANK_CHUNK`` values to bound memory.
    """
    batch, n_m, n_r = values.shape
    width = n_m + 1
    size = batch * n_m * width
    counts: RankCounts = {}
    step = max(1, _RANK_CHUNK // max(1, batch * n_m))

    def add(k: int, spans: np.ndarray) -> None:
        previous = counts.get(k)
        counts[k] = spans if previous is None else previous + spans

    for start in range(0, n_r, step):
        rows = np.ascontiguousarray(np.swapaxes(values[:, :, start:start + step], 1, 2))
        codes, ties = _rank_codes(rows, width)
        if ties is None:  # every span has length 1: +1 at the code, -1 right after it
            hits = np.bincount(codes, minlength=size)
            spans = hits.copy()
            spans[1:] -= hits[:-1]   # a code's rank is < m, so nothing crosses a row
            add(1, spans)
            continue
        for k in np.flatnonzero(np.bincount(ties)).tolist():  # tie sizes present
            where = codes[ties == k]
            add(k, np.bincount(where, minlength=size) - np.bincount(where + k, minlength=size))
    return {k: v.reshape(batch, n_m, width) for k, v in counts.items()}


def _add_counts(parts: Sequence[RankCounts]) -> RankCounts:
    """Add the rank counts of several splits of the draws (exact: integers)."""
    total: RankCounts = {}
    for part in parts:
        for k, spans in part.items():
            total[k] = spans if k not in total else total[k] + spans
    return total


def _probabilities_from_counts(counts: RankCounts, n_draws: int, n_models: int,
                               batch: int) -> np.ndarray:
    """P(rank = q) (batch, model, rank): each span's draws share 1/k per rank; exact in [0, 1]."""
    prob = np.zeros((batch, n_models, n_models))
    for k in sorted(counts):                     # a fixed order: the same float sums every time
        prob += np.cumsum(counts[k], axis=-1)[..., :n_models] / k
    return prob / n_draws


def _rank_probabilities(values: np.ndarray) -> np.ndarray:
    """P(rank = q) (..., model, rank) over the last axis (draws) of ``values`` (..., model, n).

    Tie rule: k models tied for ranks lo..lo+k-1 each get 1/k at each of those ranks. The
    probabilities come from integer counts (:func:`_rank_counts`), so they are exact in
    [0, 1] (never ``-0.0``) and identical for any split of the draws.
    """
    *rest, n_m, n_r = values.shape
    batch = int(np.prod(rest, dtype=np.int64))
    counts = _rank_counts(values.reshape(batch, n_m, n_r))
    return _probabilities_from_counts(counts, n_r, n_m, batch).reshape(*rest, n_m, n_m)


def _block_counts(block: np.ndarray, n_lead: int, orientation: int, models: np.ndarray,
                  name: str) -> RankCounts:
    """Rank counts of one chunk of draws ``(*extra, model, *samples)`` (the dask path)."""
    values = np.asarray(block, dtype=np.float64)
    batch = int(np.prod(values.shape[:n_lead - 1], dtype=np.int64))
    values = values.reshape(batch, values.shape[n_lead - 1], -1)
    check_block(values, models, name)
    return _rank_counts(orientation * values)


def _streamed_probabilities(laid_out: Draws) -> tuple[np.ndarray, np.ndarray]:
    """Rank probabilities and observed values of dask-backed draws, chunk by chunk.

    Each chunk of draws becomes integer rank counts in its own task (on a dask.distributed
    cluster, on the workers); only the counts, (batch, model, model + 1) per tie size, travel
    and are added. The draws are read once, with the observed values (by default their mean)
    in the same graph. The numbers equal the in-memory ones for any chunking.
    """
    import dask

    n_lead = len(laid_out.extra_dims) + 1
    parts = [dask.delayed(_block_counts)(block, n_lead, laid_out.orientation, laid_out.models,
                                         "draws")
             for block in laid_out.values.to_delayed().ravel()]
    counts, observed = dask.compute(dask.delayed(_add_counts)(parts), laid_out.observed)
    observed = np.asarray(observed, dtype=np.float64)
    check_block(observed[..., None], laid_out.models, "observed")
    *rest, n_m = observed.shape
    batch = int(np.prod(rest, dtype=np.int64))
    prob = _probabilities_from_counts(counts, laid_out.n_samples, n_m, batch)
    return prob.reshape(*rest, n_m, n_m), observed


def _average_rank(values: np.ndarray) -> np.ndarray:
    lo, ties = _rank_span(values)
    return lo + (ties - 1) / 2.0


# --- public functions -----------------------------------------------------------------------------

def rank_distribution(draws: xr.Dataset | xr.DataArray, *,
                      sample_dims: str | Sequence[Hashable] = (RESAMPLE,),
                      observed: xr.DataArray | None = None,
                      higher_is_better: bool | None = None) -> xr.Dataset:
    """Distribution of each model's rank over the draws; rank 1 is the best.

    In every draw (a resample, or a posterior draw) the models are ranked by their value
    (largest first when ``higher_is_better``). Tie rule: models tied in a draw share the
    ranks they span evenly (k models tied for ranks r..r+k-1 each get probability 1/k at each
    of those ranks), so the probabilities sum to 1 over ranks for each model and over models
    for each rank; the expected rank is then the mean of the average ranks. One sort per
    draw (numpy's default sort), then linear work: the models' (model, rank) codes are
    counted with one ``bincount`` per tie size present, with no pass per model. The sort
    makes the cost m log m in the number of models m; measured from 6 to 600 models it grows
    as m^1.1, below the bare sort's m^1.17 (``benchmarks/bench_ranks.py``).

    The same kernel serves resamples and posterior draws (``sample_dims=("chain",
    "draw")``): the result does not depend on how the draws are arranged over the sample
    dims. Any further dim of the draws (a language, a metric) is kept: the models are ranked
    within each of its cells.

    Parameters
    ----------
    draws
        The result of :func:`evaluq.aggregate`, or a DataArray of draws with a ``model`` dim
        (with coordinates) and the ``sample_dims``.
    sample_dims
        The dims that index the draws: ``("resample",)`` (the default, and the only choice for
        an aggregate), or ``("chain", "draw")`` for posterior draws.
    observed
        For a DataArray of draws: the observed (or point) value of each model, for
        ``observed_rank``; default the mean of the draws. An aggregate brings its own.
    higher_is_better
        Orientation; default the ``higher_is_better`` attribute of ``draws`` (True when
        absent).

    Returns
    -------
    xarray.Dataset
        ``probability`` (model, rank): P(rank = r), exact in [0, 1]; ``expected_rank``
        (model); ``p_best`` (model): P(rank = 1); ``observed_rank`` (model): rank of the
        observed value (average rank on ties); any extra dim of the draws is kept.

    Raises
    ------
    CubeError
        When a model's draws or observed value hold NaN or inf (naming the model), or the
        draws lack a ``model`` dim or a sample dim.

    References
    ----------
    Sälevä et al. (paper 002), Tables 3 and 6; formulas.md section 7.

    See Also
    --------
    significance_groups, leaderboard, evaluq.pairwise_differences

    Examples
    --------
    >>> import evaluq as eq, xarray as xr
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 1.0, 5.0], rng=0)
    >>> agg = eq.aggregate(eq.resample(cube, n_resamples=1000, rng=0))
    >>> rd = eq.rank_distribution(agg)
    >>> rd.probability.sum("rank").values
    array([1., 1., 1.])
    >>> float(rd.p_best.sel(model="m2"))
    1.0

    Posterior draws (chain, draw) give the numbers of the same draws stacked:

    >>> da = xr.DataArray(agg.resampled.data.reshape(2, 500, 3), dims=("chain", "draw", "model"),
    ...                   coords={"model": agg.model.values})
    >>> post = eq.rank_distribution(da, sample_dims=("chain", "draw"), observed=agg.observed)
    >>> bool((post.probability == rd.probability).all())
    True
    """
    laid_out = as_draws(draws, sample_dims=sample_dims, observed=observed,
                        higher_is_better=higher_is_better, lazy=True)
    orientation = laid_out.orientation
    if laid_out.is_lazy:
        prob, observed_values = _streamed_probabilities(laid_out)
    else:
        prob = _rank_probabilities(orientation * laid_out.values)     # (*rest, model, rank)
        observed_values = laid_out.observed
    n_m = prob.shape[-1]
    ranks = np.arange(1, n_m + 1)
    dims = (*laid_out.extra_dims, MODEL)
    out = xr.Dataset(
        {
            "probability": ((*dims, RANK), prob),
            "expected_rank": (dims, prob @ ranks),
            "p_best": (dims, prob[..., 0]),
            "observed_rank": (dims, _average_rank(orientation * observed_values)),
        },
        coords={MODEL: laid_out.models, RANK: ranks, **laid_out.extra_coords},
    )
    out = out.transpose(MODEL, ..., RANK)
    out.attrs = {**laid_out.attrs, "higher_is_better": int(orientation > 0),
                 "tie_rule": TIE_RULE, "sample_dims": sample_dims_label(laid_out.sample_dims)}
    out["probability"].attrs["description"] = "P(rank = r) over the draws; rank 1 is the best"
    return out


def _one_level(draws: Any, sample_dims: Any, observed: Any, higher_is_better: Any,
               alpha: Any, adjustment: Any) -> tuple[Draws, float, str]:
    laid_out = as_draws(draws, sample_dims=sample_dims, observed=observed,
                        higher_is_better=higher_is_better)
    if laid_out.extra_dims:
        raise CubeError(f"tiers and the leaderboard rank models over one set of draws; the "
                        f"draws have the extra dim(s) {list(laid_out.extra_dims)}: select one "
                        f"cell (e.g. `.sel(language=...)`) or aggregate them first")
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    adjustment = check_choice("adjustment", adjustment, ADJUSTMENTS)
    return laid_out, alpha, adjustment


def _draws_array(laid_out: Draws) -> xr.DataArray:
    """The validated draws as a DataArray (model, resample), for the pairwise kernel."""
    return xr.DataArray(laid_out.values, dims=(MODEL, RESAMPLE),
                        coords={MODEL: laid_out.models},
                        attrs={"higher_is_better": int(laid_out.orientation > 0)})


def _observed_array(laid_out: Draws) -> xr.DataArray:
    return xr.DataArray(laid_out.observed, dims=(MODEL,), coords={MODEL: laid_out.models})


def significance_groups(
    draws: xr.Dataset | xr.DataArray,
    *,
    alpha: float = 0.05,
    adjustment: str = "holm",
    sample_dims: str | Sequence[Hashable] = (RESAMPLE,),
    observed: xr.DataArray | None = None,
    higher_is_better: bool | None = None,
) -> xr.DataArray:
    """Tiers of models that the data cannot separate, for a leaderboard.

    Rule: sort the models by their observed value, best first (equal values keep the
    cube's model order). The best model opens tier 1. Walk down the list: a model joins the
    current tier unless the adjusted pairwise test (:func:`evaluq.pairwise_differences`)
    between the **tier's top model** and it rejects at ``alpha``, in which case it opens the
    next tier. Tiers are therefore contiguous on the leaderboard; a model may be separable
    from the top of its tier's predecessor but not from its own tier's top.

    Parameters
    ----------
    draws
        The result of :func:`evaluq.aggregate`, or a DataArray of draws with a ``model`` dim
        and the ``sample_dims`` (see :func:`rank_distribution`).
    alpha
        Significance level of the pairwise tests, in (0, 1).
    adjustment
        Multiple-testing adjustment of the pairwise p-values: ``"holm"`` (family-wise error
        over the m(m-1)/2 pairs), ``"bh"`` (Benjamini-Hochberg false discovery rate) or
        ``"none"``.
    sample_dims, observed
        As in :func:`rank_distribution`.
    higher_is_better
        Orientation; default the ``higher_is_better`` attribute (True when absent).

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
    laid_out, alpha, adjustment = _one_level(draws, sample_dims, observed, higher_is_better,
                                             alpha, adjustment)
    pw = pairwise_differences(_draws_array(laid_out), observed=_observed_array(laid_out))
    tiers = _tiers(laid_out, pw, alpha, adjustment)
    _say_cannot_reject(tiers)
    return tiers


def _tiers(laid_out: Draws, pw: xr.Dataset, alpha: float, adjustment: str) -> xr.DataArray:
    key = {"holm": "p_holm", "bh": "p_bh", "none": "p_value"}[adjustment]
    p = pw[key].transpose(MODEL, MODEL_B).values
    order = np.argsort(-laid_out.orientation * laid_out.observed, kind="stable")
    tier = np.zeros(len(order), dtype=np.int64)
    current, top = 1, order[0]
    for m in order:
        if m != top and p[top, m] < alpha:
            current, top = current + 1, m
        tier[m] = current
    out = xr.DataArray(tier, dims=(MODEL,), coords={MODEL: laid_out.models}, name="tier")
    out.attrs = {"alpha": alpha, "adjustment": adjustment,
                 "rule": "sorted by observed value; a new tier starts when the adjusted "
                         "test against the current tier's top model rejects"}
    floor = p_value_floor(laid_out.n_samples, len(order), alpha, adjustment)
    if floor is not None:
        out.attrs["cannot_reject"] = floor
    return out


def _say_cannot_reject(tiers: xr.DataArray) -> None:
    """Warn when no test could separate the models (``attrs["cannot_reject"]``): the
    caller's last step, after its own checks of the draws."""
    if "cannot_reject" in tiers.attrs:
        warn(f"significance tiers: {tiers.attrs['cannot_reject']}", EvaluqWarning)


def _noise_left_out(attrs: Mapping[Hashable, Any]) -> str:
    """The resampling's note on the noise its intervals leave out, where the languages are
    fixed (bootstrapped languages carry the spread of each language's noise)."""
    noise = str(attrs.get("test_set_noise", ""))
    if "NOT included" not in noise or attrs.get("languages") != "fixed":
        return ""
    return f" The replication noise in the intervals: {noise}."


def leaderboard(
    draws: xr.Dataset | xr.DataArray,
    *,
    alpha: float = 0.05,
    adjustment: str = "holm",
    confidence_level: float | None = None,
    sample_dims: str | Sequence[Hashable] = (RESAMPLE,),
    observed: xr.DataArray | None = None,
    higher_is_better: bool | None = None,
) -> pd.DataFrame:
    """The leaderboard as a tidy DataFrame, best model first.

    Columns: ``observed`` (the aggregate), ``sd`` (SD of the draws, ddof=1), ``lower``,
    ``upper`` (the equal-tailed percentile interval of the draws), ``observed_rank``,
    ``expected_rank``, ``p_best`` (:func:`rank_distribution`) and ``tier``
    (:func:`significance_groups`). This is a reporting function: it returns a DataFrame whose
    ``attrs`` say which uncertainty it shows.

    Parameters
    ----------
    draws
        The result of :func:`evaluq.aggregate`, or a DataArray of draws with a ``model`` dim
        and the ``sample_dims`` (posterior draws: ``("chain", "draw")``).
    alpha
        Significance level of the pairwise tests that separate the tiers, in (0, 1).
    adjustment
        Multiple-testing adjustment of those tests: ``"holm"`` (family-wise error),
        ``"bh"`` (false discovery rate) or ``"none"``.
    confidence_level
        Level of the ``lower`` / ``upper`` interval; default the aggregate's
        ``confidence_level`` attribute, or 0.95.
    sample_dims, observed
        As in :func:`rank_distribution`.
    higher_is_better
        Orientation; default the ``higher_is_better`` attribute (True when absent).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``model``, best first.

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
    laid_out, alpha, adjustment = _one_level(draws, sample_dims, observed, higher_is_better,
                                             alpha, adjustment)
    level = check_confidence_level(
        laid_out.attrs.get("confidence_level", 0.95) if confidence_level is None
        else confidence_level)
    as_array, obs = _draws_array(laid_out), _observed_array(laid_out)
    ranks = rank_distribution(as_array, observed=obs)
    tiers = _tiers(laid_out, pairwise_differences(as_array, observed=obs), alpha, adjustment)
    n = laid_out.n_samples
    interval = percentile_interval(laid_out.values, level)
    table = pd.DataFrame(
        {
            "observed": laid_out.observed,
            "sd": laid_out.values.std(axis=-1, ddof=1) if n > 1 else np.nan,
            "lower": interval[:, 0],
            "upper": interval[:, 1],
            "observed_rank": ranks["observed_rank"].values,
            "expected_rank": ranks["expected_rank"].values,
            "p_best": ranks["p_best"].values,
            "tier": tiers.values,
        },
        index=pd.Index(laid_out.models, name=MODEL),
    )
    at = laid_out.attrs
    source = (f"{n} resamples ({at.get('replication', '?')} replication, "
              f"{at.get('languages', '?')} languages)" if RESAMPLE in laid_out.sample_dims
              else f"{n} draws ({sample_dims_label(laid_out.sample_dims)})")
    spread = (f"sd is the SD over {source}; lower/upper the {level:.0%} percentile interval "
              f"(equal-tailed)")
    table.attrs = {
        "uncertainty": spread, "confidence_level": level, "alpha": alpha,
        "adjustment": adjustment, "higher_is_better": int(laid_out.orientation > 0),
        "caption": (f"Leaderboard of the {at.get('how', 'mean')} {at.get('metric', 'score')}"
                    + (f" over {at['n_languages']} language{'' if at['n_languages'] == 1 else 's'}"
                       if "n_languages" in at else "")
                    + f", best first: {spread}; tiers from {adjustment}-adjusted pairwise tests at "
                    f"alpha = {alpha:g}." + _noise_left_out(at)
                    + (f" Note: {at['unequal_coverage']}." if "unequal_coverage" in at else "")
                    + (f" {tiers.attrs['cannot_reject']}" if "cannot_reject" in tiers.attrs
                       else ""))}
    order = np.argsort(-laid_out.orientation * table["observed"].to_numpy(), kind="stable")
    _say_cannot_reject(tiers)
    return table.iloc[order]

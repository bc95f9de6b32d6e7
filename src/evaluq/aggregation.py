"""Aggregates over languages (or another dim) of resampled scores: the leaderboard number and
its uncertainty, in memory or chunk by chunk of resamples on dask-backed resamples."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable
from typing import Any, Final

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._apply import apply_reduce, check_dims
from evaluq._dims import (
    LANGUAGE,
    LANGUAGE_SLOT,
    MODEL,
    OBSERVED,
    RESAMPLE,
    RESAMPLED,
    SCORE,
)
from evaluq._draws import NO_NOISE_REASON, draws_no_noise
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import nanmean, percentile_interval
from evaluq._scale import ANALYSIS_REMEDY, warn_scale
from evaluq._schema import build_a_cube_hint, orientation
from evaluq._validation import check_bool, check_choice, check_confidence_level, check_real
from evaluq.errors import CubeError
from evaluq.field.rliable import check_gap, field_aggregate

AGGREGATES: Final = ("mean", "median", "gmean", "trimmed", "iqm", "optimality_gap")

Aggregator = Callable[[np.ndarray], np.ndarray]


# --- numpy kernels (the aggregated dim on axis=-1) ------------------------------------------------

def _trimmed(x: np.ndarray, trim: float) -> np.ndarray:
    return np.asarray(stats.trim_mean(x, trim, axis=-1))


def _aggregate_kernel(x: np.ndarray, how: str | Aggregator, trim: float,
                      skipna: bool) -> np.ndarray:
    """Reduce the last axis of ``x`` (already checked for NaN and, for gmean, positivity)."""
    if callable(how):
        out = np.asarray(how(x), dtype=np.float64)
        if out.shape != x.shape[:-1]:
            raise ValueError(
                f"the callable `how` must reduce the last (aggregated) axis: given an array of "
                f"shape {x.shape} it must return shape {x.shape[:-1]}; got {out.shape}")
        return out
    if how == "mean":
        return nanmean(x) if skipna else x.mean(axis=-1)
    if how == "gmean":
        return np.exp(nanmean(np.log(x)) if skipna else np.log(x).mean(axis=-1))
    if how == "median":
        if skipna:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN rows stay NaN
                return np.nanmedian(x, axis=-1)
        return np.median(x, axis=-1)
    return _trimmed(x, trim)


def _check_values(x: np.ndarray, how: str | Aggregator, skipna: bool, where: str,
                  labels: tuple[np.ndarray | None, ...], dims: tuple[Hashable, ...]) -> None:
    """NaN and (for gmean) non-positive values raise, naming a cell."""
    nan = np.isnan(x)
    if nan.any() and not skipna:
        example = _example(np.argwhere(nan)[0], labels, dims)
        raise CubeError(
            f"{int(nan.sum())} {where} value(s) are NaN (missing cells), for example {example}; "
            f"aggregates do not drop them silently: pass `skipna=True` to aggregate the "
            f"available languages of each model, or remove the cells from the cube")
    if how == "gmean":
        bad = ~nan & (x <= 0)
        if bad.any():
            example = _example(np.argwhere(bad)[0], labels, dims)
            raise ValueError(
                f"`how='gmean'` needs positive scores; {int(bad.sum())} {where} value(s) are "
                f"<= 0, for example {example} (parametric noise can push scores near 0 below "
                f"it: use another aggregate or a metric bounded away from 0)")


def _example(pos: np.ndarray, labels: tuple[np.ndarray | None, ...],
             dims: tuple[Hashable, ...]) -> str:
    def show(lab: np.ndarray | None, i: int) -> str:
        if lab is None:
            return str(i)
        value = lab[i]
        return repr(value.item() if isinstance(value, np.generic) else value)

    return ", ".join(f"{d}={show(lab, int(i))}" for d, lab, i in zip(dims, labels, pos,
                                                                         strict=True))


# --- validate -------------------------------------------------------------------------------------

def _aggregate_iv(resampled: Any, how: Any, confidence_level: Any, trim: Any,
                  skipna: Any) -> tuple[str | Aggregator, float, float]:
    if not isinstance(resampled, xr.Dataset):
        raise TypeError(f"`resampled` must be the result of eq.resample (an xarray Dataset, "
                        f"in memory or lazy); got {type(resampled).__name__}"
                        f"{build_a_cube_hint(resampled, 'eq.resample(cube)')}")
    if (RESAMPLE not in resampled.dims or OBSERVED not in resampled
            or SCORE not in resampled):
        raise CubeError("`resampled` has no 'resample' dim, or no 'score' or 'observed' "
                        "variable: pass the result of eq.resample(cube, ...), not the cube "
                        "itself")
    if not callable(how):
        check_choice("how", how, AGGREGATES)
    level = check_confidence_level(confidence_level)
    trim = check_real("trim", trim, low=0.0, high=0.5, high_inclusive=False)
    check_bool("skipna", skipna)
    if skipna and how == "trimmed":
        raise ValueError("`skipna=True` is not available for how='trimmed' (the trimmed "
                         "share would differ between models); remove the missing cells")
    return how, level, trim


def _reduced_dims(resampled: xr.Dataset, dim: Any) -> tuple[Hashable, Hashable]:
    """The dim of ``score`` and of ``observed`` that ``dim`` reduces (``language`` stands for
    the drawn ``language_slot`` of the scores), checked against what aggregating means."""
    if not isinstance(dim, Hashable) or isinstance(dim, tuple):
        raise TypeError(f"`dim` must be one dim name; got {dim!r}")
    score, observed = resampled[SCORE], resampled[OBSERVED]
    score_dim = dim
    if dim in (LANGUAGE, LANGUAGE_SLOT) and LANGUAGE_SLOT in score.dims:
        score_dim, dim = LANGUAGE_SLOT, LANGUAGE
    if score_dim in (RESAMPLE, MODEL):
        raise ValueError(f"`dim` must be a dim to aggregate each model's scores over (such as "
                         f"'language', a task dim or 'seed'); got dim={dim!r}, which "
                         f"{'indexes the resamples' if dim == RESAMPLE else 'is what is ranked'}")
    check_dims(score, (score_dim,), "resampled.score")
    check_dims(observed, (dim,), "resampled.observed")
    kept_score = set(score.dims) - {RESAMPLE, score_dim}
    kept_observed = set(observed.dims) - {dim}
    if kept_score != kept_observed or MODEL not in kept_score:
        raise CubeError(
            f"aggregating over `dim`={dim!r} leaves `score` with dims "
            f"{sorted(map(str, kept_score))} besides 'resample' and `observed` with "
            f"{sorted(map(str, kept_observed))}; they "
            f"must be the same and include 'model'")
    return score_dim, dim


# --- public function ------------------------------------------------------------------------------

def aggregate(
    resampled: xr.Dataset,
    *,
    how: str | Aggregator = "mean",
    confidence_level: float = 0.95,
    trim: float = 0.1,
    skipna: bool = False,
    dim: Hashable = LANGUAGE,
    gamma: float = 1.0,
) -> xr.Dataset:
    r"""Aggregate resampled scores over languages: observed value, resample SD and interval.

    For each resample r and model m, :math:`A^{(r)}_m = f(y^{(r)}_{m,1}, \dots,
    y^{(r)}_{m,k})` over the languages of that resample, and the observed aggregate
    :math:`A_m = f(\bar y_{m,1}, \dots, \bar y_{m,L})` over the seed means of all L
    languages. ``f`` is

    * ``"mean"``: arithmetic mean;
    * ``"median"``: median;
    * ``"gmean"``: geometric mean :math:`\exp(\mathrm{mean}\,\log y)`; scores <= 0 raise
      (no silent NaN);
    * ``"trimmed"``: mean after cutting ``floor(trim * k)`` values from each end
      (:func:`scipy.stats.trim_mean`);
    * ``"iqm"``: the interquartile mean, the 25 % trimmed mean over languages;
    * ``"optimality_gap"``: :math:`\gamma - \mathrm{mean}\,\min(y, \gamma)` (``gamma``), for
      a higher-is-better metric; the aggregate is lower-is-better (``higher_is_better`` 0:
      the smallest gap ranks first), and scores all at or above ``gamma`` warn.
      These two reduce the languages of each resample (seed means); rliable's IQM and
      optimality gap pool all runs x tasks (:func:`evaluq.interval_estimates`);
    * a callable: given an array with the aggregated dim on the **last** axis (shape
      ``(..., k)``) it returns the reduced array (shape ``(...)``). It is called on the
      observed means and on the resamples (for lazy resamples, chunk by chunk, possibly from
      several threads), so it must be a pure function of its input.

    The interval is the percentile interval of :math:`A^{(r)}_m` at ``confidence_level``.
    What it targets depends on the resampling: with ``languages="fixed"`` the aggregate of
    these L languages' true scores (replication noise only); with ``languages="bootstrap"``
    the population aggregate over languages (it then also contains the replication noise
    already present in the observed scores, a slightly conservative interval);
    ``"subsample"`` shows the spread of a smaller benchmark of ``n_languages`` languages.

    Parameters
    ----------
    resampled
        The result of :func:`evaluq.resample`, in memory or lazy (dask-backed, e.g.
        ``resample(..., lazy=True)``): a Dataset with ``score`` (resample, model, ...) and
        ``observed`` (model, ...). Lazy resamples are reduced chunk by chunk of resamples
        (one task per chunk; only the aggregates are computed into memory), with the same
        numbers as in memory.
    how
        ``"mean"``, ``"median"``, ``"gmean"``, ``"trimmed"`` or a callable.
    confidence_level
        Level of the percentile interval.
    trim
        Proportion cut from each end for ``how="trimmed"``, in [0, 0.5).
    skipna
        If False (default) a NaN (missing cell) raises, naming it. If True the built-in
        aggregates use each model's available values; a callable receives the NaN. Models
        then aggregated over fewer languages than the others warn (``MissingDataWarning``),
        naming them, and ``attrs["unequal_coverage"]`` (repeated in the leaderboard's
        caption) says so.
    dim
        The dim to aggregate over (default ``"language"``, which means the drawn
        ``language_slot`` of resamples with drawn languages). Any other dim of ``score``
        and ``observed`` works the same way, e.g. a task dim of resamples made per task, or
        ``"seed"`` of per-seed resamples: the result keeps every other dim. ``"resample"``
        and ``"model"`` cannot be aggregated over.
    gamma
        The target of ``how="optimality_gap"`` (unused otherwise).

    Returns
    -------
    xarray.Dataset
        ``observed`` (model, ...): the aggregate of the observed seed means; ``resampled``
        (resample, model, ...): the resample distribution; ``mean``, ``sd`` (ddof=1) (model,
        ...); ``ci`` (model, ..., ci_bound): the percentile interval; "..." are the dims kept
        besides ``model`` (none for the default ``dim``). Attributes: ``metric``,
        ``higher_is_better``, ``how``, ``confidence_level``, ``ci_kind``, the resampling
        options and, for another ``dim``, ``dim``.

    Raises
    ------
    CubeError
        On NaN scores with ``skipna=False``; when given a cube instead of resamples; when
        ``dim`` is not a dim of both ``score`` and ``observed``.
    ValueError
        On non-positive scores with ``how="gmean"``, an unknown ``how``, or ``dim`` naming
        ``resample`` or ``model``.

    Warns
    -----
    ScaleWarning
        A model or a set of languages of ``observed`` on another scale (the loaders' ratio
        rule, as :func:`evaluq.resample` checks it: resamples of two cubes combined by hand
        are seen here), once per call; ``attrs["scale_check"] = 0`` on the resamples (copied
        from the cube's) silences it.
    MissingDataWarning
        With ``skipna=True``, models aggregated over fewer values than the others.

    Notes
    -----
    On lazy resamples the NaN and positivity checks run inside each chunk's task (the error
    is raised when the chunk is computed and names how many values of that chunk fail);
    in memory they name the first offending cell.

    References
    ----------
    Sälevä et al. (paper 002), section 4.2; formulas.md section 7.

    See Also
    --------
    evaluq.resample, evaluq.pairwise_differences, evaluq.rank_distribution, evaluq.leaderboard

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> score = np.array([[[80.0, 82.0], [60.0, 61.0]], [[70.0, 71.0], [65.0, 66.0]]])
    >>> cube = eq.from_arrays(score, models=["a", "b"], languages=["en", "fi"])
    >>> rs = eq.resample(cube, n_resamples=1000, replication="none",
    ...                  languages="bootstrap", rng=0)
    >>> agg = eq.aggregate(rs, how="mean")
    >>> agg.observed.values.round(2)
    array([70.75, 68.  ])
    >>> agg.ci.sel(model="a").values.round(2)
    array([60.5, 81. ])

    Lazy resamples give the same numbers:

    >>> lazy = eq.resample(cube, n_resamples=1000, replication="none",
    ...                    languages="bootstrap", rng=0, lazy=True)
    >>> eq.aggregate(lazy, how="mean").identical(agg)
    True
    """
    how, level, trim = _aggregate_iv(resampled, how, confidence_level, trim, skipna)
    gamma = check_real("gamma", gamma)          # checked whatever `how` (NaN is no target)
    gap = how == "optimality_gap"
    how = field_aggregate(how, gamma, skipna)   # "iqm", "optimality_gap" (field.rliable)
    score_dim, obs_dim = _reduced_dims(resampled, dim)
    observed = resampled[OBSERVED].transpose(MODEL, ..., obs_dim).compute()
    if gap:
        check_gap(orientation(resampled.attrs), observed.values, gamma, "how")
    score = resampled[SCORE].transpose(RESAMPLE, MODEL, ..., score_dim)
    _check_values(observed.values, how, skipna, "observed", _labels(observed), observed.dims)
    warn_scale(observed, ANALYSIS_REMEDY, resampled.attrs)   # resamples combined by hand
    dist = _reduce_resamples(score, score_dim, how, trim, skipna)
    obs = apply_reduce(_aggregate_kernel, observed, (obs_dim,),
                       kwargs={"how": how, "trim": trim, "skipna": skipna})
    out = _aggregate_dataset(obs, dist, level, how, trim, dict(resampled.attrs), obs_dim)
    if skipna:
        _note_unequal_coverage(observed, obs_dim, out.attrs)
    if gap:              # a gap to the target: smaller is better (ranks, tiers, leaderboard)
        out.attrs["higher_is_better"] = 0
    return out


def _note_unequal_coverage(observed: xr.DataArray, dim: Hashable,
                           attrs: dict[Hashable, Any]) -> None:
    """With ``skipna=True``, models whose observed aggregate is over fewer values of ``dim``
    than the others are compared over different languages: warn, naming them, and keep the
    note in ``attrs["unequal_coverage"]`` (the leaderboard caption repeats it)."""
    from evaluq._warn import warn
    from evaluq.errors import MissingDataWarning

    present = observed.notnull().transpose(MODEL, ..., dim).values
    present = present.reshape(present.shape[0], -1, present.shape[-1])
    lacks = (~present & present.any(axis=0)).any(axis=(1, 2))   # what another model has
    if not lacks.any():
        return
    over = "languages" if dim == LANGUAGE else f"values of '{dim}'"
    full = observed.sizes[dim]
    counts = present.sum(axis=-1).min(axis=-1)    # the fewest a model has over the kept dims
    parts = [f"{str(m)!r} over {int(n)} of {full}"
             for m, n, short in zip(observed[MODEL].values, counts, lacks, strict=True) if short]
    shown = "; ".join(parts[:10]) + (f"; and {len(parts) - 10} more" if len(parts) > 10 else "")
    note = (f"models aggregated over fewer {over} than the others ({shown}): with "
            f"`skipna=True` each model uses the {over} it has, so they are not compared over "
            f"the same {over}")
    attrs["unequal_coverage"] = note
    warn(f"{note}; drop the models or the {over} for a like-for-like comparison",
         MissingDataWarning)


def _labels(data: xr.DataArray) -> tuple[np.ndarray | None, ...]:
    return tuple(data[d].values if d in data.coords else None for d in data.dims)


def _reduce_resamples(score: xr.DataArray, dim: Hashable, how: str | Aggregator, trim: float,
                      skipna: bool) -> np.ndarray:
    """The aggregates (resample, model, ...) in memory. Lazy scores are reduced chunk by
    chunk of resamples, the checks running inside each chunk's task."""
    if score.chunks is None:
        labels: tuple[np.ndarray | None, ...] = _labels(score)
        dims: tuple[Hashable, ...] = score.dims
    else:
        labels = (None,) * score.ndim
        dims = tuple(f"{d} position in its chunk" for d in score.dims)

    def kernel(x: np.ndarray) -> np.ndarray:
        return _checked_aggregate(x, how, trim, skipna, labels, dims)

    if score.chunks is None:
        return np.asarray(apply_reduce(kernel, score, (dim,)).values)
    # map_blocks keeping the reduced axis (length 1), not apply_ufunc / drop_axis: those
    # concatenate the blocks of the core dim, which copies every chunk even when it is
    # one block (a chunk's scores are a transposed view of the drawn block: a slow copy)
    data = score.data
    if len(data.chunks[-1]) > 1:
        data = data.rechunk({data.ndim - 1: -1})   # the aggregated dim whole, per chunk
    reduced = data.map_blocks(lambda x: kernel(x)[..., None], dtype=np.float64,
                              chunks=(*data.chunks[:-1], (1,)))
    return np.asarray(reduced.compute()[..., 0])


def _checked_aggregate(x: np.ndarray, how: str | Aggregator, trim: float, skipna: bool,
                       labels: tuple[np.ndarray | None, ...],
                       dims: tuple[Hashable, ...]) -> np.ndarray:
    """The aggregate of ``x``'s last axis, its values checked (:func:`_check_values`).

    The mean and the median are NaN exactly where a reduced row holds a NaN, so for them
    the (whole-array) NaN check runs only when the result has a NaN, to name the cell.
    """
    if how in ("mean", "median") and not skipna:
        out = _aggregate_kernel(x, how, trim, skipna)
        if np.isnan(out).any():
            _check_values(x, how, skipna, "resampled", labels, dims)
        return out
    _check_values(x, how, skipna, "resampled", labels, dims)
    return _aggregate_kernel(x, how, trim, skipna)


def _aggregate_dataset(obs: xr.DataArray, dist: np.ndarray, level: float,
                       how: str | Aggregator, trim: float, attrs: dict[str, Any],
                       dim: Hashable) -> xr.Dataset:
    n = dist.shape[0]
    kept = obs.dims
    # the statistics over resamples on a resample-major copy (pairwise sums, the same
    # numbers whatever layout the input had); the distribution is stored model-minor, one
    # resample's models contiguous, the layout the rank and pairwise kernels read
    by_resample = np.asfortranarray(dist)
    dist = np.ascontiguousarray(dist)
    sd = by_resample.std(axis=0, ddof=1) if n > 1 else np.full(dist.shape[1:], np.nan)
    coords: dict[Hashable, Any] = {d: obs[d].values for d in kept if d in obs.coords}
    out = xr.Dataset(
        {
            OBSERVED: (kept, obs.values),
            RESAMPLED: ((RESAMPLE, *kept), dist),
            "mean": (kept, by_resample.mean(axis=0)),
            "sd": (kept, sd),
            "ci": interval_from_bounds(percentile_interval(by_resample, level, axis=0),
                                       dims=kept, kind="percentile", confidence_level=level),
        },
        coords={**coords, RESAMPLE: np.arange(n)},
    )
    name = how if isinstance(how, str) else getattr(how, "__name__", "callable")
    over = "languages" if dim == LANGUAGE else f"'{dim}'"
    out.attrs = {**attrs, "how": name, "confidence_level": level, "ci_kind": "percentile"}
    if how == "trimmed":
        out.attrs["trim"] = trim
    if dim != LANGUAGE:
        out.attrs["dim"] = str(dim)
    out[OBSERVED].attrs["description"] = f"{name} over {over} of the observed seed means"
    out[RESAMPLED].attrs["description"] = f"{name} over the {over} of each resample"
    out["sd"].attrs["description"] = "SD over resamples (ddof=1)"
    if draws_no_noise(attrs):
        for var in ("sd", "ci"):
            out[var] = out[var].where(False)
            out[var].attrs["nan_reason"] = NO_NOISE_REASON
    return out

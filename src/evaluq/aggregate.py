"""Aggregates over languages of resampled scores: the leaderboard number and its uncertainty."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._dims import (
    CI_BOUND,
    CI_BOUND_COORDS,
    LANGUAGE,
    MODEL,
    OBSERVED,
    RESAMPLE,
    RESAMPLED,
    SCORE,
)
from evaluq._draws import NO_NOISE_REASON, draws_no_noise
from evaluq._kernels import nanmean, percentile_interval
from evaluq._validation import check_choice, check_confidence_level, check_real
from evaluq.errors import CubeError
from evaluq.resampling import LANGUAGE_SLOT, ResamplePlan

AGGREGATES: Final = ("mean", "median", "gmean", "trimmed")

Aggregator = Callable[[np.ndarray], np.ndarray]


# --- numpy kernels (languages on axis=-1) ---------------------------------------------------------

def _trimmed(x: np.ndarray, trim: float) -> np.ndarray:
    return np.asarray(stats.trim_mean(x, trim, axis=-1))


def _aggregate_kernel(x: np.ndarray, how: str | Aggregator, trim: float,
                      skipna: bool) -> np.ndarray:
    """Reduce the last axis of ``x`` (already checked for NaN and, for gmean, positivity)."""
    if callable(how):
        out = np.asarray(how(x), dtype=np.float64)
        if out.shape != x.shape[:-1]:
            raise ValueError(
                f"the callable `how` must reduce the last (language) axis: given an array of "
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
                  labels: tuple[np.ndarray | None, ...], dims: tuple[str, ...]) -> None:
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
             dims: tuple[str, ...]) -> str:
    def show(lab: np.ndarray | None, i: int) -> str:
        if lab is None:
            return str(i)
        value = lab[i]
        return repr(value.item() if isinstance(value, np.generic) else value)

    return ", ".join(f"{d}={show(lab, int(i))}" for d, lab, i in zip(dims, labels, pos,
                                                                         strict=True))


# --- public function ------------------------------------------------------------------------------

def _aggregate_iv(resampled: Any, how: Any, confidence_level: Any, trim: Any,
                  skipna: Any) -> tuple[str | Aggregator, float, float]:
    if not isinstance(resampled, xr.Dataset | ResamplePlan):
        raise TypeError(f"`resampled` must be the result of eq.resample (a Dataset or a "
                        f"ResamplePlan); got {type(resampled).__name__}")
    if isinstance(resampled, xr.Dataset) and (RESAMPLE not in resampled.dims
                                              or OBSERVED not in resampled):
        raise CubeError("`resampled` has no 'resample' dim or no 'observed' variable: pass "
                        "the result of eq.resample(cube, ...), not the cube itself")
    if not callable(how):
        check_choice("how", how, AGGREGATES)
    level = check_confidence_level(confidence_level)
    trim = check_real("trim", trim, low=0.0, high=0.5, high_inclusive=False)
    if not isinstance(skipna, bool):
        raise TypeError(f"`skipna` must be True or False; got {skipna!r}")
    if skipna and how == "trimmed":
        raise ValueError("`skipna=True` is not available for how='trimmed' (the trimmed "
                         "share would differ between models); remove the missing cells")
    return how, level, trim


def aggregate(
    resampled: xr.Dataset | ResamplePlan,
    *,
    how: str | Aggregator = "mean",
    confidence_level: float = 0.95,
    trim: float = 0.1,
    skipna: bool = False,
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
    * a callable: given an array with languages on the **last** axis (shape ``(..., k)``) it
      returns the reduced array (shape ``(...)``). It is called on the observed means and on
      the resamples (for a :class:`~evaluq.resampling.ResamplePlan`, block by block, possibly
      from several threads), so it must be a pure function of its input.

    The interval is the percentile interval of :math:`A^{(r)}_m` at ``confidence_level``.
    What it targets depends on the resampling: with ``languages="fixed"`` the aggregate of
    these L languages' true scores (replication noise only); with ``languages="bootstrap"``
    the population aggregate over languages (it then also contains the replication noise
    already present in the observed scores, a slightly conservative interval);
    ``"subsample"`` shows the spread of a smaller benchmark of ``n_languages`` languages.

    Parameters
    ----------
    resampled
        The result of :func:`evaluq.resample`: a Dataset, or a :class:`ResamplePlan`
        (``lazy=True``), which is consumed chunk by chunk so that only the
        ``n_resamples x models`` aggregates are kept.
    how
        ``"mean"``, ``"median"``, ``"gmean"``, ``"trimmed"`` or a callable.
    confidence_level
        Level of the percentile interval.
    trim
        Proportion cut from each end for ``how="trimmed"``, in [0, 0.5).
    skipna
        If False (default) a NaN (missing cell) raises, naming it. If True the built-in
        aggregates use each model's available languages (then models may be aggregated over
        different languages); a callable receives the NaN.

    Returns
    -------
    xarray.Dataset
        ``observed`` (model): the aggregate of the observed seed means; ``resampled``
        (resample, model): the resample distribution; ``mean``, ``sd`` (ddof=1) (model);
        ``ci`` (model, ci_bound): the percentile interval. Attributes: ``metric``,
        ``higher_is_better``, ``how``, ``confidence_level``, ``ci_kind`` and the resampling
        options.

    Raises
    ------
    CubeError
        On NaN scores with ``skipna=False``, or when given a cube instead of resamples.
    ValueError
        On non-positive scores with ``how="gmean"``, or an unknown ``how``.

    Notes
    -----
    A Dataset whose ``score`` is dask-backed is reduced chunk by chunk of resamples
    (``dask="parallelized"``; the language dim is gathered into one chunk); only the
    ``n_resamples x models`` aggregates are computed into memory.

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
    """
    how, level, trim = _aggregate_iv(resampled, how, confidence_level, trim, skipna)
    if isinstance(resampled, ResamplePlan):
        attrs = resampled.attrs
        models = resampled.cube[MODEL].values
        observed = resampled.observed
        languages = resampled.cube[LANGUAGE].values
        _check_values(observed, how, skipna, "observed", (models, languages), (MODEL, LANGUAGE))
        _check_plan_inputs(resampled, skipna)
        slot = LANGUAGE if resampled.languages == "fixed" else LANGUAGE_SLOT

        def reduce(values: np.ndarray) -> np.ndarray:
            if how == "gmean":
                _check_values(values, how, skipna, "resampled", (None, models, None),
                              (RESAMPLE, MODEL, slot))
            return _aggregate_kernel(values, how, trim, skipna)

        dist = resampled.map_blocks(reduce)
    else:
        attrs = dict(resampled.attrs)
        models = resampled[MODEL].values
        observed = resampled[OBSERVED].transpose(MODEL, LANGUAGE).values
        languages = resampled[LANGUAGE].values
        _check_values(observed, how, skipna, "observed", (models, languages), (MODEL, LANGUAGE))
        score = resampled[SCORE]
        lang_dim = LANGUAGE if LANGUAGE in score.dims else LANGUAGE_SLOT
        score = score.transpose(RESAMPLE, MODEL, lang_dim)
        if score.chunks is not None:
            dist = _aggregate_dask(score, lang_dim, how, trim, skipna, models)
        else:
            values = score.values
            _check_values(values, how, skipna, "resampled",
                          (None, models, languages if lang_dim == LANGUAGE else None),
                          (RESAMPLE, MODEL, lang_dim))
            dist = _aggregate_kernel(values, how, trim, skipna)
    obs = _aggregate_kernel(observed, how, trim, skipna)
    out = _aggregate_dataset(obs, dist, models, level, how, trim, attrs)
    if isinstance(resampled, ResamplePlan):
        out = resampled.restore_order(out)        # back to the cube's model order
    return out


def _check_plan_inputs(plan: ResamplePlan, skipna: bool) -> None:
    """NaN in the plan's inputs (checked once, not per resample) raise unless ``skipna``."""
    missing = plan.n_missing_replicates
    if not skipna and missing:
        raise CubeError(
            f"`boot_score` has {missing} NaN value(s) (missing cells or "
            f"seeds) that resamples can draw; aggregates do not drop them silently: pass "
            f"`skipna=True`, or remove the cells from the cube")


def _aggregate_dask(score: xr.DataArray, lang_dim: str, how: str | Aggregator, trim: float,
                    skipna: bool, models: np.ndarray) -> np.ndarray:
    def kernel(x: np.ndarray) -> np.ndarray:
        _check_values(x, how, skipna, "resampled", (None, models, None),
                      (RESAMPLE, MODEL, lang_dim))
        return _aggregate_kernel(x, how, trim, skipna)

    score = score.chunk({lang_dim: -1})       # the kernel reduces languages: one chunk each
    reduced = xr.apply_ufunc(kernel, score, input_core_dims=[[lang_dim]],
                             dask="parallelized", output_dtypes=[np.float64])
    # resample-major in memory, as the in-memory resamples give it: the same sums in mean / sd
    return np.asfortranarray(reduced.transpose(RESAMPLE, MODEL).values)


def _aggregate_dataset(obs: np.ndarray, dist: np.ndarray, models: np.ndarray, level: float,
                       how: str | Aggregator, trim: float, attrs: dict[str, Any]) -> xr.Dataset:
    n = dist.shape[0]
    sd = dist.std(axis=0, ddof=1) if n > 1 else np.full(dist.shape[1], np.nan)
    out = xr.Dataset(
        {
            OBSERVED: (MODEL, obs),
            RESAMPLED: ((RESAMPLE, MODEL), dist),
            "mean": (MODEL, dist.mean(axis=0)),
            "sd": (MODEL, sd),
            "ci": ((MODEL, CI_BOUND), percentile_interval(dist, level, axis=0)),
        },
        coords={MODEL: models, RESAMPLE: np.arange(n), CI_BOUND: list(CI_BOUND_COORDS)},
    )
    name = how if isinstance(how, str) else getattr(how, "__name__", "callable")
    out.attrs = {**attrs, "how": name, "confidence_level": level, "ci_kind": "percentile"}
    if how == "trimmed":
        out.attrs["trim"] = trim
    out[OBSERVED].attrs["description"] = f"{name} over languages of the observed seed means"
    out[RESAMPLED].attrs["description"] = f"{name} over the languages of each resample"
    out["sd"].attrs["description"] = "SD over resamples (ddof=1)"
    out["ci"].attrs.update(kind="percentile", confidence_level=level)
    if draws_no_noise(attrs):
        for name in ("sd", "ci"):
            out[name] = out[name].where(False)
            out[name].attrs["nan_reason"] = NO_NOISE_REASON
    return out

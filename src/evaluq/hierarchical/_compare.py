"""The posterior beside the frequentist estimates (``HierarchicalFit.compare_frequentist``).

Plain functions of the cube, its statistics and the posterior's results (no fit object), so
the fit module imports them at module level.
"""

from __future__ import annotations

import copy
from typing import Any, Final, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import (
    BOOT_SCORE,
    LANGUAGE,
    LANGUAGE_SLOT,
    MODEL,
    MODEL_B,
    N_SEEDS,
    POSTERIOR_SAMPLE_DIMS,
    SCALE_CHECK,
    SD_BOOT,
    SD_SEED,
)
from evaluq._fits import agree
from evaluq._kernels import percentile_interval
from evaluq._schema import is_summary, one_run_per_cell
from evaluq.aggregation import aggregate
from evaluq.errors import CubeError
from evaluq.hierarchical._data import HierarchicalData
from evaluq.pairwise import pairwise_differences
from evaluq.ranks import rank_distribution
from evaluq.resampling import resample
from evaluq.variance import variance_components

SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
P_BEST_TOLERANCE: Final = 0.1
NO_FREQUENTIST: Final = "no frequentist value: nothing in the cube can be resampled"
SCOPE_TEXT: Final = {"benchmark": "benchmark scope: these languages, fixed",
                     "population": "population scope: a new language, the languages "
                                   "bootstrapped"}
DRIVERS: Final = {
    "sigma_between": "the frequentist tau_between is a method-of-moments estimate truncated at "
                     "0 with no interval; the posterior pools the SD across models (crossed: "
                     "shared tau_lang plus model-specific tau_m) under a half-normal prior",
    "sigma_seed": "the posterior has one seed SD per model (pooled over languages, scaled "
                  "chi-square); the frequentist value is the RMS of per-language SDs",
    "sigma_boot": "the posterior reads the pooled bootstrap variance (chi-square with "
                  "S(B-1) dof); the frequentist sigma_boot averages per-seed SDs, which is "
                  "biased low for few replicates",
    "mean": "partial pooling: the posterior shrinks each cell mean toward mu_m + a_l by its "
            "noise, the resampling takes each cell mean as observed",
    "difference": "partial pooling and the shared language effect: the posterior shrinks "
                  "noisy cells and pairs the models through a_l; where the fit's test-set "
                  "errors are independent (test_set_errors resolved to 'independent': "
                  "replicates not shared, or a summary cube without error_correlation) it "
                  "counts the replication noise as independent across models, which is "
                  "conservative when the resampling pairs them",
    "p_best": "partial pooling shrinks the posterior means toward each other, spreading P(best) "
              "more evenly than the resampling",
}


class Frequentist(NamedTuple):
    """The frequentist side of the comparison: the resampled cube (None where nothing can be
    redrawn), what it redraws and leaves out (``how``), and the posterior scope it is
    compared with (``"benchmark"`` or ``"population"``)."""

    resampled: xr.Dataset | None
    how: str
    scope: str


HOW_PAIRED: Final = ("the shared bootstrap replicates and the seeds redrawn (nonparametric, "
                     "seeds rescaled), paired across models as the posterior's test-set errors; "
                     "languages fixed")
HOW_PARAMETRIC: Final = ("parametric replication noise (seed and test-set SDs), independent "
                         "across models as the posterior's test-set errors; languages fixed")
HOW_REPLICATES: Final = ("the bootstrap replicates redrawn (nonparametric, one seed per cell; "
                         "replicate b for every model at once); languages fixed")
HOW_SEEDS: Final = ("the seeds redrawn (nonparametric, seeds rescaled, paired across models; "
                    "languages fixed): the cube has no bootstrap replicates, so the test-set "
                    "sampling noise is in neither side (nothing in the cube measures it; the "
                    "posterior absorbs it into tau_m) and both intervals are too narrow by it")
HOW_SUMMARY_PART: Final = ("parametric replication noise from the cube's {have} ({missing} taken "
                           "as 0; languages fixed): the summary cube has no {missing}, so the "
                           "{noise} noise is in neither side and both intervals are too narrow "
                           "by it")
HOW_LANGUAGES: Final = ("the languages bootstrapped (replication 'none'): {why}, so only the "
                        "languages can be redrawn; compared with the posterior at population "
                        "scope (mu: a new language), not at benchmark scope")
HOW_NOTHING: Final = ("nothing to resample: {why} and one language, so no resampling redraws "
                      "anything; the frequentist intervals and P(best) are NaN")


def _summary_candidate(cube: xr.Dataset) -> tuple[xr.Dataset, str] | None:
    """A summary cube with one of ``sd_seed`` / ``sd_boot``: the cube with the other as 0
    (parametric noise of the one it has) and the description; None otherwise."""
    if not is_summary(cube) or (SD_SEED in cube) == (SD_BOOT in cube):
        return None
    have, missing, noise = ((SD_SEED, SD_BOOT, "test-set") if SD_SEED in cube
                            else (SD_BOOT, SD_SEED, "seed"))
    filled = cube.assign({missing: xr.zeros_like(cube[have])})
    return filled, HOW_SUMMARY_PART.format(have=have, missing=missing, noise=noise)


def _candidates(cube: xr.Dataset, data: HierarchicalData
                ) -> list[tuple[xr.Dataset, dict[str, Any], str, str]]:
    """The resamplings of the cube in order of preference: (cube, options, how, scope)."""
    nonparametric: dict[str, Any] = {"replication": "nonparametric", "seeds": "rescaled"}
    out: list[tuple[xr.Dataset, dict[str, Any], str, str]] = []
    if data.paired and BOOT_SCORE in cube:
        out.append((cube, nonparametric, HOW_PAIRED, "benchmark"))
    if not one_run_per_cell(cube):     # else the part below says which noise is left out
        out.append((cube, {"replication": "parametric"}, HOW_PARAMETRIC, "benchmark"))
    if BOOT_SCORE in cube:
        out.append((cube, nonparametric, HOW_REPLICATES, "benchmark"))
    elif not is_summary(cube):
        out.append((cube, nonparametric, HOW_SEEDS, "benchmark"))
    part = _summary_candidate(cube)
    if part is not None:
        out.append((part[0], {"replication": "parametric"}, part[1], "benchmark"))
    if cube.sizes[LANGUAGE] > 1:
        out.append((cube, {"replication": "none", "languages": "bootstrap"},
                    HOW_LANGUAGES.format(why=_why_fixed(cube)), "population"))
    return out


def _why_fixed(cube: xr.Dataset) -> str:
    """Why the cube's replication noise cannot be redrawn (for the descriptions)."""
    if N_SEEDS in cube and not is_summary(cube):
        return "a summary cube without sd_seed or sd_boot"
    return "one seed per cell and no bootstrap replicates"


def frequentist_side(cube: xr.Dataset, data: HierarchicalData, resampled: xr.Dataset | None,
                     gen: np.random.Generator) -> Frequentist:
    """The resampling the posterior is compared with, what it redraws and at which scope.

    ``resampled`` given: it, at population scope when it bootstraps the languages (a
    ``language_slot`` dim), else at benchmark scope. Otherwise the first resampling of the
    cube that redraws something: the shared replicates for a paired fit; parametric noise
    (both SDs); the replicates of a one-seed cube; the seeds alone (no replicates: the
    test-set noise is then in neither side); a summary cube's one SD; the languages (one
    seed and no replicates, or a summary cube without SDs: compared at population scope);
    with one language and nothing else, none (NaN frequentist intervals).
    """
    if resampled is not None:
        scope = "population" if LANGUAGE_SLOT in resampled.dims else "benchmark"
        given = (f"given (replication {resampled.attrs.get('replication', '?')!r}, languages "
                 f"{resampled.attrs.get('languages', '?')!r})")
        return Frequentist(resampled, given, scope)
    for source, options, how, scope in _candidates(cube, data):
        trial = copy.deepcopy(gen)         # a refused resampling leaves the stream untouched
        try:
            out = resample(source, **{"n_resamples": 4000, "languages": "fixed", "rng": trial,
                                      **options})
        except CubeError:
            continue
        gen.bit_generator.state = trial.bit_generator.state
        return Frequentist(_scale_checked(out), how, scope)
    return Frequentist(None, HOW_NOTHING.format(why=_why_fixed(cube)), "benchmark")


def _scale_checked(resampled: xr.Dataset) -> xr.Dataset:
    """Resamples this comparison drew: ``resample`` has checked the cube's scale (and warned),
    so their aggregate does not check (and warn) again."""
    return resampled.assign_attrs({SCALE_CHECK: 0})


def _eti(draws: xr.DataArray, level: float) -> tuple[np.ndarray, np.ndarray]:
    flat = draws.transpose(..., *SAMPLE_DIMS).values
    bounds = percentile_interval(flat.reshape(*flat.shape[:-2], -1), level)
    return bounds[..., 0], bounds[..., 1]


def _rows(quantity: str, models: Any, models_b: Any, freq: Any, flo: Any, fhi: Any,
          post: xr.DataArray | None, level: float, pmean: Any = None) -> pd.DataFrame:
    if post is not None:
        pmean = post.mean(SAMPLE_DIMS).values
        plo, phi = _eti(post, level)
    else:
        plo = phi = np.full(np.shape(pmean), np.nan)
    return pd.DataFrame({"quantity": quantity, "model": models, "model_b": models_b,
                         "frequentist": freq, "freq_lower": flo, "freq_upper": fhi,
                         "posterior_mean": pmean, "post_lower": plo, "post_upper": phi})


def _frequentist_aggregate(cube: xr.Dataset, side: Frequentist, level: float
                           ) -> tuple[xr.Dataset, bool]:
    """The aggregate of the frequentist side, and whether its intervals mean anything (with
    nothing to resample: the observed means with constant resamples, intervals to be NaN)."""
    if side.resampled is not None:
        return aggregate(side.resampled, confidence_level=level), True
    still = resample(cube, n_resamples=2, replication="none", languages="fixed", rng=0)
    return aggregate(_scale_checked(still), confidence_level=level), False


def _component_rows(cube: xr.Dataset, models: np.ndarray, post_vc: xr.Dataset,
                    level: float) -> list[pd.DataFrame]:
    """sigma_between, sigma_seed and sigma_boot: the method-of-moments values and the
    posterior's."""
    nan = np.full(models.size, np.nan)
    none = [""] * models.size
    vc = variance_components(cube)
    rms = lambda x: np.sqrt((x**2).mean(LANGUAGE))  # noqa: E731
    return [
        _rows("sigma_between", models, none, vc["tau_between"].values, nan, nan,
              post_vc["sigma_between"], level),
        _rows("sigma_seed", models, none, rms(vc["sigma_seed"]).values, nan, nan,
              post_vc["sigma_seed"], level),
        _rows("sigma_boot", models, none, rms(vc["sigma_boot"]).values, nan, nan,
              rms(post_vc["sigma_boot"]), level),
    ]


def _difference_rows(agg: xr.Dataset, models: np.ndarray, post_pairs: xr.Dataset,
                     level: float, has_ci: bool) -> pd.DataFrame:
    """Every pair once (model before model_b in the cube's order): both sides' differences
    (without resamples, the observed differences and NaN intervals)."""
    iu = np.triu_indices(models.size, k=1)
    pick = lambda da: np.asarray(da)[iu]  # noqa: E731
    if has_ci:
        pw = pairwise_differences(agg, confidence_level=level)
        observed, lower, upper = (pick(pw["observed"]), pick(pw["ci"].isel(ci_bound=0)),
                                  pick(pw["ci"].isel(ci_bound=1)))
    else:
        means = agg["observed"].values
        observed = means[iu[0]] - means[iu[1]]
        lower = upper = np.full(observed.shape, np.nan)
    return pd.DataFrame({
        "quantity": "difference", "model": models[iu[0]], "model_b": models[iu[1]],
        "frequentist": observed, "freq_lower": lower, "freq_upper": upper,
        "posterior_mean": pick(post_pairs["mean"]),
        "post_lower": pick(post_pairs["ci"].isel(ci_bound=0)),
        "post_upper": pick(post_pairs["ci"].isel(ci_bound=1))})


def compare(cube: xr.Dataset, data: HierarchicalData, post_vc: xr.Dataset,
            post_means: xr.DataArray, post_pairs: xr.Dataset, post_p_best: xr.DataArray,
            side: Frequentist, level: float) -> pd.DataFrame:
    """See :meth:`HierarchicalFit.compare_frequentist`: ``post_vc`` the posterior variance
    components; ``post_means``, ``post_pairs`` and ``post_p_best`` the posterior's means
    (draws), differences and P(best) at ``side.scope``; ``side`` the frequentist side
    (:func:`frequentist_side`)."""
    models = data.models
    nan = np.full(models.size, np.nan)
    none = [""] * models.size
    agg, has_ci = _frequentist_aggregate(cube, side, level)
    ci = agg["ci"] if has_ci else xr.full_like(agg["ci"], np.nan)
    parts = _component_rows(cube, models, post_vc, level)
    parts.append(_rows("mean", models, none, agg["observed"].values,
                       ci.isel(ci_bound=0).values, ci.isel(ci_bound=1).values,
                       post_means, level))
    parts.append(_difference_rows(agg, models, post_pairs, level, has_ci))
    p_best = rank_distribution(agg)["p_best"].values if has_ci else nan
    parts.append(_rows("p_best", models, none, p_best, nan, nan, None, level,
                       pmean=post_p_best.values))
    table = pd.concat([p for p in parts if len(p)], ignore_index=True)
    table = table[~(table["frequentist"].isna() & table["posterior_mean"].isna())]
    table["agree"] = agree(table, P_BEST_TOLERANCE)
    table["driver"] = np.where(table["agree"], "", table["quantity"].map(DRIVERS))
    if not has_ci:
        table.loc[table["quantity"] == "p_best", "driver"] = NO_FREQUENTIST
    scope = SCOPE_TEXT[side.scope]
    table.attrs = {"confidence_level": level, "scope": scope, "posterior_scope": side.scope,
                   "resampling": side.how, "test_set_errors": data.pairing,
                   "caption": (f"Posterior ({scope}) versus frequentist estimates; the "
                               f"frequentist side: {side.how}."),
                   "model_b": MODEL_B, "model": MODEL}
    return table.reset_index(drop=True)

"""The posterior beside the frequentist estimates (``HierarchicalFit.compare_frequentist``).

Plain functions of the cube, its statistics and the posterior's results (no fit object), so
the fit module imports them at module level.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import BOOT_SCORE, LANGUAGE, MODEL, MODEL_B, POSTERIOR_SAMPLE_DIMS
from evaluq._kernels import percentile_interval
from evaluq.aggregation import aggregate
from evaluq.errors import CubeError
from evaluq.hierarchical._data import HierarchicalData
from evaluq.pairwise import pairwise_differences
from evaluq.ranks import rank_distribution
from evaluq.resampling import resample
from evaluq.variance import variance_components

SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
P_BEST_TOLERANCE: Final = 0.1
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


def _resampled(cube: xr.Dataset, data: HierarchicalData, gen: np.random.Generator
               ) -> tuple[xr.Dataset, str]:
    """The default frequentist resampling of the cube and its description.

    Paired fit: the shared replicates (both sides pair the models). Otherwise parametric
    replication noise (independent across models, as the posterior's errors) where the cube
    has a seed SD and a boot SD for every cell; else the cube's own bootstrap replicates (a
    one-seed cube); a cube with neither (one seed, no replicates) has no resampling that
    redraws anything, and a ValueError says so.
    """
    common: dict[str, Any] = {"n_resamples": 4000, "languages": "fixed", "rng": gen}
    nonparametric: dict[str, Any] = {"replication": "nonparametric", "seeds": "rescaled"}
    if data.paired and BOOT_SCORE in cube:
        return resample(cube, **common, **nonparametric), "nonparametric, seeds rescaled"
    try:
        return resample(cube, **common, replication="parametric"), "parametric"
    except CubeError:
        if BOOT_SCORE not in cube:
            raise ValueError("compare_frequentist: no resampling of this cube redraws anything "
                             "(one seed per cell and no bootstrap replicates, so neither the "
                             "parametric nor the nonparametric replication noise exists); pass "
                             "`resampled=` (for example eq.resample(cube, languages="
                             "'bootstrap')), knowing it compares at another scope") from None
    return resample(cube, **common, **nonparametric), "nonparametric, seeds rescaled"


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


def _agree(table: pd.DataFrame) -> np.ndarray:
    has_freq_ci = table["freq_lower"].notna()
    has_post_ci = table["post_lower"].notna()
    post_in_freq = ((table["posterior_mean"] >= table["freq_lower"])
                    & (table["posterior_mean"] <= table["freq_upper"]))
    freq_in_post = ((table["frequentist"] >= table["post_lower"])
                    & (table["frequentist"] <= table["post_upper"]))
    close = (table["frequentist"] - table["posterior_mean"]).abs() <= P_BEST_TOLERANCE
    return np.where(has_freq_ci & has_post_ci, post_in_freq & freq_in_post,
                    np.where(has_post_ci, freq_in_post, close)).astype(bool)


def compare(cube: xr.Dataset, data: HierarchicalData, post_vc: xr.Dataset,
            benchmark: xr.DataArray, post_pairs: xr.Dataset, post_p_best: xr.DataArray,
            resampled: xr.Dataset | None, level: float, gen: np.random.Generator
            ) -> pd.DataFrame:
    """See :meth:`HierarchicalFit.compare_frequentist`: ``post_vc`` the posterior variance
    components, ``benchmark`` the benchmark-mean draws, ``post_pairs`` and ``post_p_best``
    the posterior's benchmark-scope differences and P(best)."""
    models = data.models
    nan = np.full(models.size, np.nan)
    none = [""] * models.size
    vc = variance_components(cube)
    rms = lambda x: np.sqrt((x**2).mean(LANGUAGE))  # noqa: E731
    parts = [
        _rows("sigma_between", models, none, vc["tau_between"].values, nan, nan,
              post_vc["sigma_between"], level),
        _rows("sigma_seed", models, none, rms(vc["sigma_seed"]).values, nan, nan,
              post_vc["sigma_seed"], level),
        _rows("sigma_boot", models, none, rms(vc["sigma_boot"]).values, nan, nan,
              rms(post_vc["sigma_boot"]), level),
    ]
    how = "given"
    if resampled is None:
        resampled, how = _resampled(cube, data, gen)
    agg = aggregate(resampled, confidence_level=level)
    parts.append(_rows("mean", models, none, agg["observed"].values,
                       agg["ci"].isel(ci_bound=0).values, agg["ci"].isel(ci_bound=1).values,
                       benchmark, level))
    pw = pairwise_differences(agg, confidence_level=level)
    iu = np.triu_indices(models.size, k=1)
    pick = lambda da: da.values[iu]  # noqa: E731
    parts.append(pd.DataFrame({
        "quantity": "difference", "model": models[iu[0]], "model_b": models[iu[1]],
        "frequentist": pick(pw["observed"]), "freq_lower": pick(pw["ci"].isel(ci_bound=0)),
        "freq_upper": pick(pw["ci"].isel(ci_bound=1)),
        "posterior_mean": pick(post_pairs["mean"]),
        "post_lower": pick(post_pairs["ci"].isel(ci_bound=0)),
        "post_upper": pick(post_pairs["ci"].isel(ci_bound=1))}))
    rd = rank_distribution(agg)
    parts.append(_rows("p_best", models, none, rd["p_best"].values, nan, nan, None, level,
                       pmean=post_p_best.values))
    table = pd.concat([p for p in parts if len(p)], ignore_index=True)
    table = table[~(table["frequentist"].isna() & table["posterior_mean"].isna())]
    table["agree"] = _agree(table)
    table["driver"] = np.where(table["agree"], "", table["quantity"].map(DRIVERS))
    table.attrs = {"confidence_level": level, "scope": "benchmark (languages fixed)",
                   "resampling": how, "test_set_errors": data.pairing,
                   "model_b": MODEL_B, "model": MODEL}
    return table.reset_index(drop=True)

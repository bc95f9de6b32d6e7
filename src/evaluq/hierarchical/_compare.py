"""The posterior beside the frequentist estimates (``HierarchicalFit.compare_frequentist``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import LANGUAGE, MODEL, MODEL_B, POSTERIOR_SAMPLE_DIMS

if TYPE_CHECKING:
    from evaluq.hierarchical._fit import HierarchicalFit

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
                  "noisy cells and pairs the models through a_l; unless both sides pair the "
                  "test-set errors (fit_hierarchical(test_set_errors='paired') resamples the "
                  "shared replicates), the replication noise counts as independent across "
                  "models",
    "p_best": "partial pooling shrinks the posterior means toward each other, spreading P(best) "
              "more evenly than the resampling",
}


def _resampled(fit: HierarchicalFit, gen: np.random.Generator) -> xr.Dataset:
    import evaluq as eq

    assert fit.cube is not None
    if fit.data.paired:     # the same pairing on both sides: the shared replicates
        return eq.resample(fit.cube, n_resamples=4000, replication="nonparametric",
                           seeds="rescaled", languages="fixed", rng=gen)
    try:
        return eq.resample(fit.cube, n_resamples=4000, replication="parametric",
                           languages="fixed", rng=gen)
    except ValueError:   # no replication noise to draw (a cube of single scores)
        return eq.resample(fit.cube, n_resamples=4000, replication="none", languages="fixed",
                           rng=gen)


def _eti(draws: xr.DataArray, level: float) -> tuple[np.ndarray, np.ndarray]:
    q = draws.quantile([(1 - level) / 2, (1 + level) / 2], SAMPLE_DIMS)
    return q.values[0], q.values[1]


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


def compare(fit: HierarchicalFit, resampled: xr.Dataset | None, level: float,
            gen: np.random.Generator) -> pd.DataFrame:
    """See :meth:`HierarchicalFit.compare_frequentist`."""
    import evaluq as eq

    assert fit.cube is not None
    models = fit.data.models
    nan = np.full(models.size, np.nan)
    none = [""] * models.size
    vc = eq.variance_components(fit.cube)
    post_vc = fit.variance_components()
    rms = lambda x: np.sqrt((x**2).mean(LANGUAGE))  # noqa: E731
    parts = [
        _rows("sigma_between", models, none, vc["tau_between"].values, nan, nan,
              post_vc["sigma_between"], level),
        _rows("sigma_seed", models, none, rms(vc["sigma_seed"]).values, nan, nan,
              post_vc["sigma_seed"], level),
        _rows("sigma_boot", models, none, rms(vc["sigma_boot"]).values, nan, nan,
              rms(post_vc["sigma_boot"]), level),
    ]
    res = _resampled(fit, gen) if resampled is None else resampled
    agg = eq.aggregate(res, confidence_level=level)
    parts.append(_rows("mean", models, none, agg["observed"].values,
                       agg["ci"].isel(ci_bound=0).values, agg["ci"].isel(ci_bound=1).values,
                       fit.posterior["benchmark_mean"], level))
    pw = eq.pairwise_differences(agg, confidence_level=level)
    ppw = fit.pairwise_differences("benchmark", confidence_level=level)
    iu = np.triu_indices(models.size, k=1)
    pick = lambda da: da.values[iu]  # noqa: E731
    parts.append(pd.DataFrame({
        "quantity": "difference", "model": models[iu[0]], "model_b": models[iu[1]],
        "frequentist": pick(pw["observed"]), "freq_lower": pick(pw["ci"].isel(ci_bound=0)),
        "freq_upper": pick(pw["ci"].isel(ci_bound=1)), "posterior_mean": pick(ppw["mean"]),
        "post_lower": pick(ppw["ci"].isel(ci_bound=0)),
        "post_upper": pick(ppw["ci"].isel(ci_bound=1))}))
    rd = eq.rank_distribution(agg)
    prd = fit.rank_probabilities("benchmark")
    parts.append(_rows("p_best", models, none, rd["p_best"].values, nan, nan, None, level,
                       pmean=prd["p_best"].values))
    table = pd.concat([p for p in parts if len(p)], ignore_index=True)
    table = table[~(table["frequentist"].isna() & table["posterior_mean"].isna())]
    table["agree"] = _agree(table)
    table["driver"] = np.where(table["agree"], "", table["quantity"].map(DRIVERS))
    table.attrs = {"confidence_level": level, "level": "benchmark (languages fixed)",
                   "model_b": MODEL_B, "model": MODEL}
    return table.reset_index(drop=True)

"""Variance components of an evaluation cube (formulas.md section 6; Sälevä et al.).

The numpy kernels (:mod:`evaluq._kernels`) work on the last axes and never import xarray;
:func:`variance_components` maps the cube's named dims onto them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    LANGUAGE,
    MODEL,
    N_SEEDS,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
    SUMMARY,
)
from evaluq._kernels import count_valid, nan_reduce, nanmean, nanstd
from evaluq._validation import check_int
from evaluq.cube import is_summary, validate

SUMMARY_STATS = ("mean", "sd", "min", "max")
WITHIN_COMPONENTS = ("sigma_seed", "sigma_boot", "sigma_within")


# --- public function ----------------------------------------------------------------------------

def variance_components(cube: xr.Dataset, *, ddof: int = 1) -> xr.Dataset:
    r"""Between-language, seed-to-seed and boot-to-boot standard deviations.

    For scores :math:`y_{mls}` on the full test sets and bootstrap replicates
    :math:`y^*_{mlsb}` (S seeds, B replicates, L languages):

    .. math::

        \sigma_{seed,ml} &= \mathrm{SD}_s\, y_{mls} \\
        v_{mls} &= \mathrm{SD}_b\, y^*_{mlsb}, \qquad
            \sigma_{boot,ml} = \mathrm{mean}_s\, v_{mls}, \qquad
            \mathrm{se}(\sigma_{boot,ml}) = \mathrm{SD}_s\, v_{mls} / \sqrt{S} \\
        u_{mlb} &= \mathrm{SD}_s\, y^*_{mlsb}, \qquad
            \mathrm{se}(\sigma_{seed,ml}) = \mathrm{SD}_b\, u_{mlb} \\
        \sigma_{within,ml} &= \sqrt{\sigma_{seed,ml}^2 + \sigma_{boot,ml}^2} \\
        \bar y_{ml} &= \mathrm{mean}_s\, y_{mls}, \qquad
            \sigma_{between,m} = \mathrm{SD}_l\, \bar y_{ml}

    and the standard error of the arithmetic-mean aggregate over languages,

    .. math::

        w_{ml} &= \sigma_{seed,ml}^2 / S + \sigma_{boot,ml}^2, \qquad
        \mathrm{se}_{fixed,m} = \frac{1}{L}\sqrt{\textstyle\sum_l w_{ml}} \\
        \tau_{between,m}^2 &= \max\left(0,\; \sigma_{between,m}^2 - \mathrm{mean}_l\, w_{ml}
            \right), \qquad
        \mathrm{se}_{population,m} = \sqrt{\mathrm{se}_{fixed,m}^2
            + \tau_{between,m}^2 / L}

    The test-set error is shared by all seeds of a language, so the boot-to-boot part does
    not shrink with S. ``se_mean_fixed`` is the error given these languages;
    ``se_mean_population`` treats the languages as a sample from a population.

    ``sigma_between`` is the paper's between-language SD: the SD of the *observed* means,
    which also carries each mean's within-language noise :math:`w_{ml}`. formulas.md adds
    :math:`\sigma_{between}^2 / L` for the population SE, reading it as the true
    between-language SD; using the observed SD there would count the within-language noise
    twice, so evaluq uses the method-of-moments estimate :math:`\tau_{between}` of the true
    SD (also reported). The simulation tests show ``se_mean_population`` is then calibrated.

    Summary-only cubes (from :func:`evaluq.from_summary`) use their ``sd_seed``, ``sd_boot`` and
    ``n_seeds``; the standard errors of the components are then unavailable (NaN).

    Parameters
    ----------
    cube
        An evaluation cube.
    ddof
        Delta degrees of freedom of every SD. The multilingual paper's code uses ``ddof=1``;
        its FLORES table (Table 8) uses ``ddof=0`` for the between-language SDs.

    Returns
    -------
    xarray.Dataset
        ``sigma_between``, ``tau_between``, ``mean_score``, ``se_mean_fixed``,
        ``se_mean_population``, ``n_languages`` (model); ``sigma_seed``, ``sigma_boot``,
        ``sigma_within``, ``se_sigma_seed``, ``se_sigma_boot``, ``n_seeds`` (model, language); and
        ``sigma_seed_summary``, ``sigma_boot_summary``, ``sigma_within_summary``
        (model, summary) with summary = mean, sd, min, max over languages (the paper's tables).
        Missing cells are skipped and the counts (``n_seeds``, ``n_languages``) say how many
        values each estimate uses. Use :func:`variance_table` for a DataFrame.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> score = np.array([[[1.0, 3.0], [4.0, 6.0]]])          # 1 model, 2 languages, 2 seeds
    >>> vc = eq.variance_components(eq.from_arrays(score))
    >>> round(float(vc.sigma_seed[0, 0]), 4), round(float(vc.sigma_between[0]), 4)
    (1.4142, 2.1213)
    """
    cube = validate(cube)
    ddof = check_int("ddof", ddof, minimum=0)
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values
    ybar = nanmean(score)                                       # (m, l)
    nan_ml = np.full(ybar.shape, np.nan)
    if is_summary(cube):
        sigma_seed = cube[SD_SEED].values if SD_SEED in cube else nan_ml
        sigma_boot = cube[SD_BOOT].values if SD_BOOT in cube else nan_ml
        n_seeds = cube[N_SEEDS].values if N_SEEDS in cube else np.ones_like(ybar)
        se_seed = se_boot = nan_ml
    else:
        n_seeds = count_valid(score).astype(np.float64)
        sigma_seed = nanstd(score, ddof)
        if BOOT_SCORE in cube:
            boot = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values
            v = nanstd(boot, ddof)                              # (m, l, s)
            sigma_boot = nanmean(v)
            with np.errstate(invalid="ignore", divide="ignore"):
                se_boot = nanstd(v, ddof) / np.sqrt(count_valid(v))
            u = nanstd(boot, ddof, axis=2)                      # (m, l, b)
            se_seed = nanstd(u, ddof)
        else:
            sigma_boot = se_boot = se_seed = nan_ml
    sigma_within = np.sqrt(sigma_seed**2 + sigma_boot**2)
    n_lang = count_valid(ybar)
    sigma_between = nanstd(ybar, ddof)
    per_lang_var = sigma_seed**2 / n_seeds + sigma_boot**2
    observed = np.where(np.isnan(ybar), np.nan, per_lang_var)
    with np.errstate(invalid="ignore", divide="ignore"):
        se_fixed = np.sqrt(np.where(np.isnan(observed), 0.0, observed).sum(-1)) / n_lang
        # the observed between-language variance also holds the within-language noise of the
        # means: subtract its average (method of moments) so that it is not counted twice
        tau_between = np.sqrt(np.maximum(sigma_between**2 - nanmean(observed), 0.0))
        se_population = np.sqrt(se_fixed**2 + tau_between**2 / n_lang)

    ml = (MODEL, LANGUAGE)
    out = xr.Dataset(
        {
            "sigma_between": (MODEL, sigma_between),
            "tau_between": (MODEL, tau_between),
            "mean_score": (MODEL, nanmean(ybar)),
            "se_mean_fixed": (MODEL, se_fixed),
            "se_mean_population": (MODEL, se_population),
            "n_languages": (MODEL, n_lang),
            "sigma_seed": (ml, sigma_seed),
            "sigma_boot": (ml, sigma_boot),
            "sigma_within": (ml, sigma_within),
            "se_sigma_seed": (ml, se_seed),
            "se_sigma_boot": (ml, se_boot),
            "n_seeds": (ml, n_seeds),
        },
        coords={MODEL: cube[MODEL].values, LANGUAGE: cube[LANGUAGE].values,
                SUMMARY: list(SUMMARY_STATS)},
    )
    for name in WITHIN_COMPONENTS:
        x = out[name].values
        out[f"{name}_summary"] = (
            (MODEL, SUMMARY),
            np.stack([nanmean(x), nanstd(x, ddof), nan_reduce(x, "min"),
                      nan_reduce(x, "max")], axis=-1),
        )
    out.attrs = {
        "metric": cube.attrs.get("metric", ""),
        "higher_is_better": cube.attrs.get("higher_is_better", 1),
        "ddof": ddof,
        "summary_only": int(is_summary(cube)),
    }
    descriptions = {
        "sigma_between": "SD over languages of the seed-mean score",
        "sigma_seed": "SD over seeds of the full-test-set score",
        "sigma_boot": "mean over seeds of the SD over bootstrap replicates",
        "sigma_within": "sqrt(sigma_seed^2 + sigma_boot^2)",
        "se_sigma_seed": "SD over bootstrap replicates of the seed SD",
        "se_sigma_boot": "SD over seeds of the bootstrap SD, over sqrt(n_seeds)",
        "se_mean_fixed": "SE of the mean over languages, given these languages",
        "tau_between": "between-language SD net of within-language noise (moments)",
        "se_mean_population": "SE of the mean over languages, languages sampled",
    }
    for name, text in descriptions.items():
        out[name].attrs["description"] = text
    return out


def variance_table(components: xr.Dataset, *, digits: int | None = None) -> pd.DataFrame:
    """The variance components as one row per model, in the multilingual paper's layout.

    Columns: ``mean_score``, ``sigma_between``, then mean / sd / min / max over languages of
    ``sigma_seed``, ``sigma_boot`` and ``sigma_within``, then the standard errors of the mean
    aggregate.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> rng = np.random.default_rng(0)
    >>> cube = eq.from_arrays(rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4, 50)))
    >>> list(eq.variance_table(eq.variance_components(cube)).columns[:4])
    ['mean_score', 'sigma_between', 'tau_between', 'sigma_seed mean']
    """
    table = pd.DataFrame(index=pd.Index(components[MODEL].values, name=MODEL))
    table["mean_score"] = components["mean_score"].values
    table["sigma_between"] = components["sigma_between"].values
    table["tau_between"] = components["tau_between"].values
    for name in WITHIN_COMPONENTS:
        summary = components[f"{name}_summary"]
        for stat in SUMMARY_STATS:
            table[f"{name} {stat}"] = summary.sel({SUMMARY: stat}).values
    table["se_mean_fixed"] = components["se_mean_fixed"].values
    table["se_mean_population"] = components["se_mean_population"].values
    return table.round(digits) if digits is not None else table

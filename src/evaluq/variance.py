"""Variance components of an evaluation cube (formulas.md section 6; Sälevä et al.).

The numpy kernels (:mod:`evaluq._kernels`) work on the last axes and never import xarray;
:func:`variance_components` maps the cube's named dims onto them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from evaluq import _streaming
from evaluq._apply import check_dims
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    ESTIMABLE,
    LANGUAGE,
    LANGUAGE_LABEL,
    MEAN_SCORE,
    MODEL,
    N_LANGUAGES,
    N_SEEDS,
    NAN_REASON,
    NAN_REASONS,
    NOT_ESTIMABLE,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SE_MEAN_FIXED,
    SE_MEAN_POPULATION,
    SE_SIGMA_BOOT,
    SE_SIGMA_SEED,
    SEED,
    SIGMA_BETWEEN,
    SIGMA_BOOT,
    SIGMA_SEED,
    SIGMA_WITHIN,
    SUMMARY,
    TAU_BETWEEN,
)
from evaluq._kernels import count_valid, nan_reduce, nan_sd, nanmean
from evaluq._schema import is_summary, one_run_per_cell, orientation, validate
from evaluq._validation import check_int, check_result_dims
from evaluq.errors import CubeError

SUMMARY_STATS = ("mean", "sd", "min", "max")
WITHIN_COMPONENTS = (SIGMA_SEED, SIGMA_BOOT, SIGMA_WITHIN)
ESTIMATES = (SIGMA_BETWEEN, TAU_BETWEEN, SIGMA_SEED, SIGMA_BOOT, SIGMA_WITHIN,
             SE_SIGMA_SEED, SE_SIGMA_BOOT, SE_MEAN_FIXED, SE_MEAN_POPULATION)
"""The estimates of :func:`variance_components` that can be NaN for want of data."""


# --- public function ----------------------------------------------------------------------------

def variance_components(cube: xr.Dataset, *, ddof: int = 1,
                        language_dim: str = LANGUAGE) -> xr.Dataset:
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
    language_dim
        The name of the cube's language axis (default ``"language"``): a cube whose tasks or
        data sets are under another name (``"task"``) is analysed as it is, and the result
        keeps that name. The other dims keep their roles (``model``, ``seed``,
        ``bootstrap``): the components are defined by the cube's design (seeds within a
        language, replicates within a seed), so only the between-language axis can be renamed,
        and it cannot be one of those dims.

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
    >>> tasks = eq.from_arrays(score).rename(language="task")
    >>> float(eq.variance_components(tasks, language_dim="task").sigma_between[0]) == float(
    ...     vc.sigma_between[0])
    True
    """
    if language_dim != LANGUAGE:
        return _renamed_language(cube, ddof, language_dim)
    # a dask-backed cube: validated without reading boot_score, which is then read once
    cube = _streaming.prepare(cube) if _streaming.is_dask(cube) else validate(cube)
    ddof = check_int("ddof", ddof, minimum=0)
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values
    ybar = nanmean(score)                                       # (m, l)
    reasons: dict[str, str] = {}
    cells = _cell_spreads(cube, score, ybar, ddof, reasons)
    out = _assemble(cube, ybar, cells, ddof, reasons)
    _explain_nan(out, reasons, ybar)
    return out


class _CellSpreads(NamedTuple):
    """The within-language components per (model, language) cell."""

    sigma_seed: np.ndarray
    sigma_boot: np.ndarray
    se_seed: np.ndarray
    se_boot: np.ndarray
    n_seeds: np.ndarray


def _cell_spreads(cube: xr.Dataset, score: np.ndarray, ybar: np.ndarray, ddof: int,
                  reasons: dict[str, str]) -> _CellSpreads:
    """The seed and bootstrap SDs of every cell (and their SEs), with the reasons for NaN."""
    nan_ml = np.full(ybar.shape, np.nan)
    if is_summary(cube):
        sigma_seed, sigma_boot, n_seeds = _summary_components(cube, nan_ml, reasons)
        reasons[SE_SIGMA_SEED] = reasons[SE_SIGMA_BOOT] = (
            "a summary-only cube has no replicates to estimate the SE of an SD from")
        return _CellSpreads(sigma_seed, sigma_boot, nan_ml, nan_ml, n_seeds)
    n_seeds = count_valid(score).astype(np.float64)
    sigma_seed = nan_sd(score, ddof)
    few = ~np.isnan(ybar) & np.isnan(sigma_seed)
    if few.any():
        reasons[SIGMA_SEED] = (
            f"{int(few.sum())} observed (model, language) cell(s) have fewer than "
            f"{max(2, ddof + 1)} seeds: the seed-to-seed noise is unknown (ddof={ddof})")
    if BOOT_SCORE not in cube:
        reasons[SIGMA_BOOT] = reasons[SE_SIGMA_BOOT] = reasons[SE_SIGMA_SEED] = (
            f"the cube has no {BOOT_SCORE!r} (no bootstrap replicates): the test-set "
            "sampling noise is unknown")
        return _CellSpreads(sigma_seed, nan_ml, nan_ml, nan_ml, n_seeds)
    sigma_boot, se_seed, se_boot = _boot_spreads(cube, score, ybar, ddof, reasons)
    return _CellSpreads(sigma_seed, sigma_boot, se_seed, se_boot, n_seeds)


def _boot_spreads(cube: xr.Dataset, score: np.ndarray, ybar: np.ndarray, ddof: int,
                  reasons: dict[str, str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sigma_boot, se_sigma_seed and se_sigma_boot per cell from ``boot_score``."""
    if cube[BOOT_SCORE].chunks is not None:
        v, se_seed = _streaming.boot_spreads(cube[BOOT_SCORE], score, ddof)   # by chunk
    else:
        boot = cube[BOOT_SCORE].transpose(MODEL, LANGUAGE, SEED, BOOTSTRAP).values
        v = nan_sd(boot, ddof)                              # (m, l, s)
        u = nan_sd(boot, ddof, axis=2)                      # (m, l, b)
        se_seed = nan_sd(u, ddof)
    sigma_boot = nanmean(v)
    with np.errstate(invalid="ignore", divide="ignore"):
        se_boot = nan_sd(v, ddof) / np.sqrt(count_valid(v))
    gap = ~np.isnan(ybar) & np.isnan(sigma_boot)
    if gap.any():
        reasons[SIGMA_BOOT] = (
            f"{int(gap.sum())} observed (model, language) cell(s) have too few "
            f"bootstrap replicates (boot_score missing)")
    if np.isnan(se_seed[~np.isnan(ybar)]).any():
        reasons[SE_SIGMA_SEED] = (
            f"needs at least {max(2, ddof + 1)} seeds with replicates in the cell")
    if np.isnan(se_boot[~np.isnan(ybar)]).any():
        reasons[SE_SIGMA_BOOT] = (
            f"needs at least {max(2, ddof + 1)} seeds with replicates in the cell")
    return sigma_boot, se_seed, se_boot


_DESCRIPTIONS = {
    SIGMA_BETWEEN: "SD over languages of the seed-mean score",
    SIGMA_SEED: "SD over seeds of the full-test-set score",
    SIGMA_BOOT: "mean over seeds of the SD over bootstrap replicates",
    SIGMA_WITHIN: "sqrt(sigma_seed^2 + sigma_boot^2)",
    SE_SIGMA_SEED: "SD over bootstrap replicates of the seed SD",
    SE_SIGMA_BOOT: "SD over seeds of the bootstrap SD, over sqrt(n_seeds)",
    SE_MEAN_FIXED: "SE of the mean over languages, given these languages",
    TAU_BETWEEN: "between-language SD net of within-language noise (moments)",
    SE_MEAN_POPULATION: "SE of the mean over languages, languages sampled",
}


def _assemble(cube: xr.Dataset, ybar: np.ndarray, cells: _CellSpreads, ddof: int,
              reasons: dict[str, str]) -> xr.Dataset:
    """The per-model components from the per-cell ones, as the result Dataset."""
    sigma_within = np.hypot(cells.sigma_seed, cells.sigma_boot)   # no overflow near 1e300
    n_lang = count_valid(ybar)
    sigma_between = nan_sd(ybar, ddof)
    se_fixed, tau_between, se_population = _mean_errors(
        ybar, cells.sigma_seed, cells.sigma_boot, cells.n_seeds, sigma_between, n_lang)
    _explain_model_level(reasons, ybar, cells.sigma_seed, cells.sigma_boot, cells.n_seeds,
                         n_lang, ddof)
    ml = (MODEL, LANGUAGE)
    out = xr.Dataset(
        {
            SIGMA_BETWEEN: (MODEL, sigma_between),
            TAU_BETWEEN: (MODEL, tau_between),
            MEAN_SCORE: (MODEL, nanmean(ybar)),
            SE_MEAN_FIXED: (MODEL, se_fixed),
            SE_MEAN_POPULATION: (MODEL, se_population),
            N_LANGUAGES: (MODEL, n_lang),
            SIGMA_SEED: (ml, cells.sigma_seed),
            SIGMA_BOOT: (ml, cells.sigma_boot),
            SIGMA_WITHIN: (ml, sigma_within),
            SE_SIGMA_SEED: (ml, cells.se_seed),
            SE_SIGMA_BOOT: (ml, cells.se_boot),
            N_SEEDS: (ml, cells.n_seeds),
        },
        coords={MODEL: cube[MODEL].values, LANGUAGE: cube[LANGUAGE].values,
                SUMMARY: list(SUMMARY_STATS)},
    )
    for name in WITHIN_COMPONENTS:
        out[f"{name}_summary"] = ((MODEL, SUMMARY), _over_languages(out[name].values, ddof))
    out.attrs = {
        "metric": cube.attrs.get("metric", ""),
        "higher_is_better": int(orientation(cube.attrs)),
        "ddof": ddof,
        "summary_only": int(is_summary(cube)),
    }
    if cube.attrs.get(LANGUAGE_LABEL):          # the input's name for the language axis
        out.attrs[LANGUAGE_LABEL] = str(cube.attrs[LANGUAGE_LABEL])
    for name, text in _DESCRIPTIONS.items():
        out[name].attrs["description"] = text
    return out


def _over_languages(x: np.ndarray, ddof: int) -> np.ndarray:
    """Mean, SD, min and max over languages (the last axis) of a per-cell SD."""
    return np.stack([nanmean(x), nan_sd(x, ddof), nan_reduce(x, "min"), nan_reduce(x, "max")],
                    axis=-1)


def _explain_nan(out: xr.Dataset, reasons: dict[str, str], ybar: np.ndarray) -> None:
    """Each variable with NaN gets its ``nan_reason``; the Dataset lists what is estimable."""
    if (n_missing := int(np.isnan(ybar).sum())) > 0:
        for name in (SIGMA_SEED, SIGMA_BOOT, SE_SIGMA_SEED, SE_SIGMA_BOOT):
            reasons[name] = "; ".join(r for r in (
                reasons.get(name), f"{n_missing} (model, language) cell(s) have no score "
                "(missing cells are NaN, never filled)") if r)
    reasons[SIGMA_WITHIN] = "; ".join(
        r for r in (reasons.get(SIGMA_SEED), reasons.get(SIGMA_BOOT)) if r)
    for name in WITHIN_COMPONENTS:
        reasons.setdefault(f"{name}_summary", "; ".join(
            r for r in (reasons.get(name), "the 'sd' over languages needs 2 languages with a "
                        "value") if r))
    for name, reason in reasons.items():
        if reason and bool(np.isnan(out[name].values).any()):
            out[name].attrs[NAN_REASON] = reason
    out.attrs[ESTIMABLE] = ", ".join(
        name for name in ESTIMATES if not bool(np.isnan(out[name].values).all()))
    out.attrs[NOT_ESTIMABLE] = ", ".join(
        name for name in ESTIMATES if bool(np.isnan(out[name].values).all()))


def _renamed_language(cube: xr.Dataset, ddof: int, language_dim: Any) -> xr.Dataset:
    """:func:`variance_components` of a cube whose language axis is named ``language_dim``."""
    if not isinstance(cube, xr.Dataset):
        raise TypeError(f"`cube` must be an xarray.Dataset; got {type(cube).__name__}")
    if not isinstance(language_dim, str):
        raise TypeError(f"`language_dim` must be a dim name (str); got {language_dim!r}")
    if language_dim in (MODEL, SEED, BOOTSTRAP):
        raise ValueError(f"`language_dim` must name the cube's language axis, not one of the "
                         f"other design dims {[MODEL, SEED, BOOTSTRAP]}; got {language_dim!r}")
    check_dims(cube, (language_dim,), "cube", argument="language_dim")
    if LANGUAGE in cube.dims:
        raise CubeError(f"`language_dim` is {language_dim!r} but the cube also has a "
                        f"{LANGUAGE!r} dim: rename or drop one of them")
    out = variance_components(cube.rename({language_dim: LANGUAGE}), ddof=ddof)
    return out.rename({LANGUAGE: language_dim})


def _summary_components(cube: xr.Dataset, nan_ml: np.ndarray, reasons: dict[str, str]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sigma_seed, sigma_boot and n_seeds of a summary-only cube, with the reasons for NaN."""
    observed = ~np.isnan(cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values[..., 0])
    out = []
    for name, var in ((SIGMA_SEED, SD_SEED), (SIGMA_BOOT, SD_BOOT), (N_SEEDS, N_SEEDS)):
        values = cube[var].transpose(MODEL, LANGUAGE).values if var in cube else nan_ml
        if var == SD_SEED and one_run_per_cell(cube):
            reasons[name] = ("each mean is one run (n_seeds 1) and the cube has no 'sd_seed': "
                             "one run measures no run-to-run spread")
        elif var not in cube:
            reasons[name] = f"the summary-only cube has no {var!r}"
        elif (gap := observed & np.isnan(values)).any():
            reasons[name] = (f"{var!r} is missing for {int(gap.sum())} observed "
                             "(model, language) cell(s)")
        out.append(values)
    return out[0], out[1], out[2]


def _mean_errors(ybar: np.ndarray, sigma_seed: np.ndarray, sigma_boot: np.ndarray,
                 n_seeds: np.ndarray, sigma_between: np.ndarray, n_lang: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """se_mean_fixed, tau_between and se_mean_population per model.

    A model whose observed languages lack a within-language noise component gets NaN for the
    first two (never a sum that treats the unknown part as 0). The population SE is then
    ``sigma_between / sqrt(L)``: the observed means already carry their within-language noise,
    and with known noise it equals ``sqrt(max(sigma_between^2, mean_l w) / L)``.
    """
    observed = ~np.isnan(ybar)
    # in units of a power of two near the largest SD (exact): no square overflows
    sds = np.concatenate([np.ravel(sigma_seed), np.ravel(sigma_boot), np.ravel(sigma_between)])
    sds = sds[np.isfinite(sds) & (sds > 0)]
    unit = 2.0 ** np.floor(np.log2(sds.max())) if sds.size else 1.0
    sigma_seed, sigma_boot, sigma_between = (sigma_seed / unit, sigma_boot / unit,
                                             sigma_between / unit)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = sigma_seed**2 / n_seeds + sigma_boot**2
        w_known = np.where(observed, ~np.isnan(w), True).all(axis=-1) & (n_lang > 0)
        w_obs = np.where(observed, w, 0.0)
        se_fixed = np.where(w_known, np.sqrt(w_obs.sum(-1)) / n_lang, np.nan)
        mean_w = np.where(w_known, w_obs.sum(-1) / n_lang, np.nan)
        # the observed between-language variance also holds the within-language noise of the
        # means: subtract its average (method of moments) so that it is not counted twice
        tau_between = np.sqrt(np.maximum(sigma_between**2 - mean_w, 0.0))
        tau_between = np.where(np.isnan(mean_w) | np.isnan(sigma_between), np.nan,
                               tau_between)
        se_population = np.where(
            w_known, np.sqrt(se_fixed**2 + tau_between**2 / n_lang),
            sigma_between / np.sqrt(n_lang))
    return se_fixed * unit, tau_between * unit, se_population * unit


def _explain_model_level(reasons: dict[str, str], ybar: np.ndarray, sigma_seed: np.ndarray,
                         sigma_boot: np.ndarray, n_seeds: np.ndarray, n_lang: np.ndarray,
                         ddof: int) -> None:
    """Reasons for NaN in the per-model estimates."""
    observed = ~np.isnan(ybar)
    unknown = [name for name, x in ((SIGMA_SEED, sigma_seed), (SIGMA_BOOT, sigma_boot),
                                    (N_SEEDS, n_seeds))
               if np.isnan(np.where(observed, x, 0.0)).any()]
    if unknown:
        parts = "; ".join(f"{u}: {reasons[u]}" if u in reasons else u for u in unknown)
        reasons[SE_MEAN_FIXED] = (
            "the within-language noise w = sigma_seed^2/n_seeds + sigma_boot^2 of an observed "
            f"language is unknown ({parts}); an unknown part is never counted as 0")
    few = f"sigma_between needs at least {max(2, ddof + 1)} languages with a score"
    reasons[SIGMA_BETWEEN] = few
    reasons[TAU_BETWEEN] = "; ".join(
        r for r in (reasons.get(SE_MEAN_FIXED), few if (n_lang < max(2, ddof + 1)).any()
                    else None) if r)
    reasons[SE_MEAN_POPULATION] = few + " (and at least 1 language)"
    if (n_lang == 0).any():
        empty = f"{int((n_lang == 0).sum())} model(s) have no score in any language"
        for name in (SIGMA_BETWEEN, TAU_BETWEEN, SE_MEAN_FIXED, SE_MEAN_POPULATION):
            reasons[name] = "; ".join(r for r in (reasons.get(name), empty) if r)
        reasons[MEAN_SCORE] = empty


def variance_table(components: xr.Dataset, *, digits: int | None = None) -> pd.DataFrame:
    """The variance components as one row per model, in the multilingual paper's layout.

    Columns: ``mean_score``, ``sigma_between``, then mean / sd / min / max over languages of
    ``sigma_seed``, ``sigma_boot`` and ``sigma_within``, then the standard errors of the mean
    aggregate.

    A NaN is never a 0: ``table.attrs["not_estimable"]`` lists the components the cube's shape
    cannot estimate and ``table.attrs["nan_reasons"]`` says why for each column with NaN
    (for example a cube without bootstrap replicates has no ``sigma_boot`` and hence no
    ``se_mean_fixed``; see ``models/variance_components.md`` for every shape).

    Parameters
    ----------
    components : xarray.Dataset
        The result of :func:`variance_components`; another Dataset raises ``TypeError``.
    digits : int, optional
        Round every column to this many decimals (>= 0). Default None: no rounding.

    Returns
    -------
    pandas.DataFrame
        One row per model (index ``model``).

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> seeds_only = eq.from_arrays(np.arange(12.0).reshape(1, 3, 4))
    >>> eq.variance_table(eq.variance_components(seeds_only)).attrs["not_estimable"]
    'tau_between, sigma_boot, sigma_within, se_sigma_seed, se_sigma_boot, se_mean_fixed'
    >>> rng = np.random.default_rng(0)
    >>> cube = eq.from_arrays(rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4, 50)))
    >>> list(eq.variance_table(eq.variance_components(cube)).columns[:4])
    ['mean_score', 'sigma_between', 'tau_between', 'sigma_seed mean']
    """
    if not isinstance(components, xr.Dataset) or MEAN_SCORE not in components \
            or f"{SIGMA_SEED}_summary" not in components:
        raise TypeError("`components` must be the result of eq.variance_components(cube); got "
                        + (f"a Dataset with variables {sorted(map(str, components.data_vars))}"
                           if isinstance(components, xr.Dataset)
                           else type(components).__name__))
    check_result_dims("components", components[f"{SIGMA_SEED}_summary"], (MODEL, SUMMARY),
                      "eq.variance_components")
    if digits is not None:
        digits = check_int("digits", digits, minimum=0)
    table = pd.DataFrame(index=pd.Index(components[MODEL].values, name=MODEL))
    table[MEAN_SCORE] = components[MEAN_SCORE].values
    table[SIGMA_BETWEEN] = components[SIGMA_BETWEEN].values
    table[TAU_BETWEEN] = components[TAU_BETWEEN].values
    for name in WITHIN_COMPONENTS:
        summary = components[f"{name}_summary"]
        for stat in SUMMARY_STATS:
            table[f"{name} {stat}"] = summary.sel({SUMMARY: stat}).values
    table[SE_MEAN_FIXED] = components[SE_MEAN_FIXED].values
    table[SE_MEAN_POPULATION] = components[SE_MEAN_POPULATION].values
    table = table.round(digits) if digits is not None else table
    table.attrs[ESTIMABLE] = components.attrs.get(ESTIMABLE, "")
    table.attrs[NOT_ESTIMABLE] = components.attrs.get(NOT_ESTIMABLE, "")
    reasons = {str(name): components[name].attrs[NAN_REASON]
               for name in components.data_vars if NAN_REASON in components[name].attrs}
    for name in WITHIN_COMPONENTS:
        # the 'sd' over languages has a reason of its own (one language with a value)
        known = bool(components[name].notnull().any())
        for stat in SUMMARY_STATS:
            reason = reasons.get(f"{name}_summary" if stat == "sd" and known else name,
                                 reasons.get(f"{name}_summary"))
            if reason:
                reasons[f"{name} {stat}"] = reason
    table.attrs[NAN_REASONS] = {col: reasons[col] for col in table.columns
                                if col in reasons and bool(table[col].isna().any())}
    table.attrs["uncertainty"] = ("se_* are standard errors of the mean over languages; SDs "
                                  "are summarised (mean, sd, min, max) over languages")
    table.attrs["caption"] = (
        f"Variance components of {components.attrs.get('metric', 'the score')} per model "
        f"(ddof = {components.attrs.get('ddof', 1)}): sigma_between is the SD over languages of "
        "the seed-mean score; the seed, bootstrap and within SDs are summarised (mean, sd, min, "
        "max) over languages; se_* are standard errors of the mean over languages.")
    return table

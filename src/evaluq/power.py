r"""Power and sample size for paired model comparisons: the smallest detectable difference.

The difference of two models' means over L languages, each scored on n items with S seeds,
has (formulas.md section 6, Miller 2024 section 5) the variance

.. math::

    V(n, S, L) = \frac{1}{L}\Big[\overline{v_{test} \tfrac{n_l}{n}}
        + \overline{\tfrac{\sigma^2_{seed,A}}{S_A} + \tfrac{\sigma^2_{seed,B}}{S_B}}\Big]
        \;\big[+\; \tau^2_d / L \text{ for } \texttt{scope="population"}\big],

where the bars average over the cube's languages, :math:`v_{test,l}` is the paired bootstrap
variance of the difference on language l's :math:`n_l` items (it shrinks as 1/n: the
bootstrap SD scales with :math:`1/\sqrt{n}`), :math:`\sigma_{seed}` the SD over seeds of a
model's score, and :math:`\tau^2_d` the between-language variance of the true difference (by
moments). Pairing enters through :math:`v_{test} = v_A + v_B - 2\rho\sqrt{v_A v_B}`, the
correlation :math:`\rho` of the two models' bootstrap replicates.

When the seeds are **epochs** (``attrs["seeds_are"] == "epochs"``, the default of
:func:`evaluq.from_items`), an epoch's deviation is per-item noise already inside the item
bootstrap of the epochs' mean. The design then splits that mean's replicate variance into an
item part and the within-item part :math:`w_m = \sigma^2_{W,m}/n = (\bar v_{single} -
v_{mean}) S/(S-1)`, which takes the seed term's place: :math:`v_{test}` is the item part,
:math:`\sigma^2_{seed,m} = w_m`, both scale with :math:`n_l / n`, and the within part,
estimated from all the items, adds no t correction (see :func:`design`).

A two-sided test at level :math:`\alpha` detects a true difference :math:`\delta` with
probability ``power`` when

.. math:: |\delta| \ge \mathrm{MDE} = (t_{1-\alpha/2,\nu} + t_{power,\nu}) \sqrt{V},

the normal approximation (:math:`\nu = \infty`: the factor is 2.8016 at 0.05 and 0.8) with a
t correction whose degrees of freedom :math:`\nu` combine, by Welch-Satterthwaite, the
components estimated from few units: the seed variance (:math:`L(S_A - 1 + S_B - 1)` df) and,
for the population scope, the between-language variance (:math:`L - 1` df); the test-set part
(many items) has infinite df. :func:`sample_size` inverts it exactly over the integers (the
smallest n, S or L whose MDE is at most the effect, by bisection: the df move with S and L).

The design is read from a cube (:func:`design`: ``boot_score`` and, for more or fewer items,
the ``n_items`` that :func:`evaluq.from_items` records) or given as SDs and a correlation
(:func:`design_from_sds`); every function takes either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    CORRELATION,
    LANGUAGE,
    MDE,
    MODEL,
    MODEL_B,
    N_ITEMS,
    N_LANGUAGES,
    N_SEEDS,
    NAN_REASON,
    SCORE,
    SEED,
    SEEDS_ARE,
)
from evaluq._kernels import nanmean, nanvar
from evaluq._schema import orientation
from evaluq._validation import (
    as_float_array,
    check_choice,
    check_int,
    check_int_sequence,
    check_memory,
    check_real,
)
from evaluq.cube import is_summary, validate
from evaluq.errors import CubeError

__all__ = ["compute_allocation", "design", "design_from_sds", "mde_grid",
           "minimum_detectable_effect", "sample_size"]

VAR_TEST = "var_test"
VAR_SEED = "var_seed"
TAU2 = "tau2"
SCOPES = ("benchmark", "population")
VARY = ("items", "seeds", "languages")
_CAP = {"items": 10**9, "seeds": 10**6, "languages": 10**6}


def design(cube: xr.Dataset) -> xr.Dataset:
    r"""The variance components of a cube that power calculations need, per pair of models.

    Parameters
    ----------
    cube
        A cube with ``boot_score`` (paired bootstrap replicates, as :func:`evaluq.from_items`
        and :func:`evaluq.from_predictions` make). Its ``n_items`` (language), when present,
        lets the calculations change the number of items.

    Returns
    -------
    xarray.Dataset
        ``var_test`` (model, model_b, language): the variance over bootstrap replicates of the
        paired difference, averaged over the seeds both models have; ``correlation``
        (model, model_b, language): the correlation of the two models' replicates;
        ``var_seed`` (model, language): the ddof = 1 variance over seeds of the score (NaN
        with one seed); ``n_seeds`` (model, language); ``tau2`` (model, model_b): the
        between-language variance of the true difference, by moments (NaN with one
        language); ``n_items`` (language, NaN when the cube does not record it); attributes
        ``n_languages`` and ``seeds_are``. For a cube whose seeds are epochs, ``var_test``
        is the item part of the variance of the epochs' mean and ``var_seed`` the
        within-item part of one epoch, :math:`\sigma^2_W/n` (module docstring).

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design(eq.simulate_cube(n_models=2, rng=0))
    >>> sorted(d.data_vars)
    ['correlation', 'n_items', 'n_seeds', 'tau2', 'var_seed', 'var_test']
    """
    cube = validate(cube)
    if is_summary(cube) or BOOT_SCORE not in cube.data_vars:
        raise CubeError("power needs a cube with `boot_score` (paired bootstrap replicates, "
                        "e.g. from eq.from_items or eq.from_predictions); use "
                        "design_from_sds for SDs given by hand")
    _check_replicates(cube)
    if cube.sizes[MODEL] < 2:
        raise CubeError(f"`cube` has {cube.sizes[MODEL]} model: power is about the difference "
                        "between two models, so a design needs at least two")
    boot = cube[BOOT_SCORE].transpose(LANGUAGE, SEED, MODEL, BOOTSTRAP).values
    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED).values
    k = (~np.isnan(score)).sum(axis=-1).astype(np.float64)
    epochs = cube.attrs.get(SEEDS_ARE) == "epochs"
    if epochs:
        v_diff, corr, var_seed = _epoch_parts(boot, k)
    else:
        v_diff, corr = _replicate_parts(boot)
        # the mean over seeds
        v_diff, corr = nanmean(np.moveaxis(v_diff, 1, -1)), nanmean(np.moveaxis(corr, 1, -1))
        var_seed = nanvar(score)
    ybar = nanmean(score)
    n_items = (cube[N_ITEMS].values.astype(np.float64) if N_ITEMS in cube.data_vars
               else np.full(cube.sizes[LANGUAGE], np.nan))
    models = cube[MODEL].values
    out = xr.Dataset(
        {VAR_TEST: ((MODEL, MODEL_B, LANGUAGE), v_diff if epochs else np.moveaxis(v_diff, 0, -1)),
         CORRELATION: ((MODEL, MODEL_B, LANGUAGE), corr if epochs else np.moveaxis(corr, 0, -1)),
         VAR_SEED: ((MODEL, LANGUAGE), var_seed), N_SEEDS: ((MODEL, LANGUAGE), k),
         N_ITEMS: ((LANGUAGE,), n_items)},
        coords={MODEL: models, MODEL_B: models.copy(), LANGUAGE: cube[LANGUAGE].values})
    out[TAU2] = ((MODEL, MODEL_B), _tau2(ybar, out))
    out.attrs = {N_LANGUAGES: int(cube.sizes[LANGUAGE]), "metric": cube.attrs.get("metric", ""),
                 SEEDS_ARE: "epochs" if epochs else "runs"}
    return _explain_design(out)


def _check_replicates(cube: xr.Dataset) -> None:
    """A scored cell needs all its replicates: a NaN replicate would silently drop its seed
    from the variances (a missing cell, NaN score and replicates, is allowed)."""
    bad = (cube[BOOT_SCORE].isnull().any(BOOTSTRAP) & cube[SCORE].notnull()).transpose(
        MODEL, LANGUAGE, SEED)
    if not bool(bad.any()):
        return
    k, lang, seed = np.argwhere(bad.values)[0]
    raise CubeError(
        f"`cube.boot_score` has NaN replicates in {int(bad.sum())} scored cell(s), e.g. "
        f"model {bad[MODEL].values.tolist()[k]!r}, language "
        f"{bad[LANGUAGE].values.tolist()[lang]!r}, seed {bad[SEED].values.tolist()[seed]!r}: "
        "power needs every replicate of a cell that has a score (or the whole cell missing, "
        "its score NaN too)")


_DESIGN_REASONS = {
    VAR_TEST: "a missing cell: one of the two models has no replicates in this language",
    CORRELATION: "a missing cell, or constant replicates (a correlation of 0 / 0)",
    VAR_SEED: "fewer than two seeds in this cell: no variance over seeds",
    TAU2: "one language (no between-language variance), or a pair without a complete "
          "language",
    N_ITEMS: "the cube does not record `n_items` (eq.from_items and eq.from_predictions do); "
             "calculations that change the number of items need it",
}


def _explain_design(out: xr.Dataset) -> xr.Dataset:
    """A ``nan_reason`` on every variable of a design that holds a NaN."""
    for name, reason in _DESIGN_REASONS.items():
        if bool(out[name].isnull().any()):
            out[name].attrs[NAN_REASON] = reason
    return out


def _replicate_parts(boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Variance of the paired difference and correlation of replicates (..., m, m), from
    replicates (..., m, bootstrap)."""
    centred = boot - boot.mean(axis=-1, keepdims=True)
    cov = centred @ np.swapaxes(centred, -1, -2) / (boot.shape[-1] - 1)
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        v_diff = var[..., :, None] + var[..., None, :] - 2 * cov
        corr = cov / np.sqrt(var[..., :, None] * var[..., None, :])
    return v_diff, corr


def _epoch_parts(boot: np.ndarray, k: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The item and within-item (epoch) parts of a cube whose seeds are epochs.

    ``boot`` (language, seed, model, bootstrap), ``k`` (model, language) epochs. With
    :math:`\sigma^2_I` the variance over items of an item's expected score and
    :math:`\sigma^2_W` the variance of an epoch's score around it, a model's single-epoch
    replicates have variance :math:`(\sigma^2_I + \sigma^2_W)/n` and the replicates of its
    mean over S epochs :math:`\sigma^2_I/n + \sigma^2_W/(nS)`, so
    :math:`w = \sigma^2_W/n = (\bar v_{single} - v_{mean}) S/(S-1)`. Returns the variance
    of the paired difference of the epoch means less the pair's :math:`w_A/S_A + w_B/S_B`
    (m, m, l), the correlation of the epoch means' replicates (m, m, l) and ``w``
    (model, language; NaN with one epoch): the within part enters :func:`_variance` as the
    seed term, and shrinks with the items too.
    """
    with np.errstate(invalid="ignore"):
        mean_boot = nanmean(np.moveaxis(boot, 1, -1))               # (l, m, b)
        v_mean, corr = _replicate_parts(mean_boot)                   # (l, m, m)
        single = nanmean(np.moveaxis(boot.var(axis=-1, ddof=1), 1, -1))   # (l, m)
        s = k.T
        w = np.where(s >= 2, np.maximum(single - mean_boot.var(axis=-1, ddof=1), 0.0)
                     * s / np.maximum(s - 1, 1), np.nan)
        per = np.where(np.isnan(w), 0.0, w / s)
        # clipped at 0 (replicate noise can make it slightly negative); 0 on the diagonal
        item_part = np.maximum(v_mean - per[..., :, None] - per[..., None, :], 0.0)
        item_part[..., np.arange(len(k)), np.arange(len(k))] = 0.0
    return np.moveaxis(item_part, 0, -1), np.moveaxis(corr, 0, -1), w.T


def _tau2(ybar: np.ndarray, d: xr.Dataset) -> np.ndarray:
    """Between-language variance of the difference net of its within-language noise."""
    diff = ybar[:, None, :] - ybar[None, :, :]                  # (m, m, l)
    seed = np.nan_to_num(d[VAR_SEED].values / d[N_SEEDS].values)
    w = d[VAR_TEST].values + seed[:, None, :] + seed[None, :, :]
    with np.errstate(invalid="ignore"):
        return np.maximum(nanvar(diff) - nanmean(w), 0.0)


def design_from_sds(*, sd_item: float | Sequence[float], n_items: int,
                    correlation: float = 0.0, sd_seed: float = 0.0, n_seeds: int = 1,
                    sd_language: float = 0.0, n_languages: int = 1) -> xr.Dataset:
    r"""A design for two models ``A`` and ``B`` given by SDs and their correlation.

    The second entry of the power functions, for planning before any cube exists (Miller
    2024, section 5): the per-item SD of each model's score (for a 0/1 score,
    :math:`\sqrt{p(1-p)}`), the correlation of the two models' per-item scores, the SD over
    seeds of a model's full-test-set score, and the SD over languages of the true
    difference.

    Parameters
    ----------
    sd_item
        Per-item SD of the score, one for both models or a pair (A, B).
    n_items
        Items per language of the design described.
    correlation
        Correlation of the two models' per-item scores, in [-1, 1].
    sd_seed, n_seeds
        SD over seeds of one model's score on the full test set, and the seeds run.
    sd_language, n_languages
        SD over languages of the true difference, and the languages run.

    Returns
    -------
    xarray.Dataset
        A design as :func:`design` returns, over ``model = model_b = ["A", "B"]`` and one
        language.

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design_from_sds(sd_item=0.5, n_items=500)
    >>> round(float(eq.power.minimum_detectable_effect(d).sel(model="A", model_b="B")), 4)
    0.0886
    """
    sds = as_float_array("sd_item", sd_item)
    if sds.shape not in ((), (1,), (2,)):
        raise ValueError(f"`sd_item` must be one SD, or one per model of the pair; got shape "
                         f"{sds.shape}")
    sds = np.broadcast_to(sds, (2,))
    for name, value in (("sd_item", sds[0]), ("sd_item", sds[1]), ("sd_seed", sd_seed),
                        ("sd_language", sd_language)):
        check_real(name, value, low=0.0)
    rho = check_real("correlation", correlation, low=-1.0, high=1.0)
    n = check_int("n_items", n_items, minimum=1)
    s = check_int("n_seeds", n_seeds, minimum=1)
    nl = check_int("n_languages", n_languages, minimum=1)
    cov = np.array([[sds[0] ** 2, rho * sds[0] * sds[1]], [rho * sds[0] * sds[1], sds[1] ** 2]])
    v = np.diag(cov)
    v_test = (v[:, None] + v[None, :] - 2 * cov) / n
    models = np.array(["A", "B"])
    out = xr.Dataset(
        {VAR_TEST: ((MODEL, MODEL_B, LANGUAGE), v_test[..., None]),
         CORRELATION: ((MODEL, MODEL_B, LANGUAGE), (cov / np.sqrt(np.outer(v, v)))[..., None]
                       if v.all() else np.full((2, 2, 1), rho)),
         VAR_SEED: ((MODEL, LANGUAGE), np.full((2, 1), float(sd_seed) ** 2)),
         N_SEEDS: ((MODEL, LANGUAGE), np.full((2, 1), float(s))),
         N_ITEMS: ((LANGUAGE,), np.array([float(n)])),
         TAU2: ((MODEL, MODEL_B), np.where(np.eye(2, dtype=bool), 0.0, sd_language**2))},
        coords={MODEL: models, MODEL_B: models.copy(), LANGUAGE: ["all"]})
    out.attrs = {N_LANGUAGES: nl, "metric": ""}
    return out


def _as_design(source: xr.Dataset) -> xr.Dataset:
    """A design from a design or a cube."""
    if isinstance(source, xr.Dataset) and VAR_TEST in source.data_vars:
        return source
    if isinstance(source, xr.Dataset):
        return design(source)
    raise TypeError(f"`cube` must be a cube or a design (eq.power.design / design_from_sds); "
                    f"got {type(source).__name__}")


# --- the closed form -----------------------------------------------------------------------------

def _broadcast(value: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    return None if value is None else np.broadcast_to(np.asarray(value, np.float64), shape)


def _variance(d: xr.Dataset, item_scale: Any, n_seeds: Any, n_languages: Any, scope: str
              ) -> tuple[np.ndarray, np.ndarray]:
    """Variance of the paired difference of means and its Satterthwaite df, (model, model_b).

    ``item_scale`` multiplies the test-set variance (n_l / n, over language or
    (model, model_b, language)); ``n_seeds`` / ``n_languages``
    replace the cube's (None: keep them). Each may be an array over (model, model_b).
    """
    vt = d[VAR_TEST].values
    shape = vt.shape[:2]
    s, nl = (_broadcast(x, shape) for x in (n_seeds, n_languages))
    test = vt if item_scale is None else vt * item_scale
    vs, ks = d[VAR_SEED].values, d[N_SEEDS].values
    epochs = d.attrs.get(SEEDS_ARE) == "epochs"
    with np.errstate(invalid="ignore", divide="ignore"):
        if s is None:   # the cube's seeds; one seed adds no separate seed variance (see docs)
            per = np.where(np.isnan(vs), 0.0, vs / ks)
            seed = per[:, None, :] + per[None, :, :]
            k = nanmean(np.where(ks >= 1, ks, np.nan))
            k_pair = np.broadcast_to(k[:, None] + k[None, :] - 2, shape)
        else:   # a one-seed cube at its own one seed adds none, as above
            known = np.where(np.isnan(vs) & (ks == 1), 0.0, vs)
            seed = (known[:, None, :] + known[None, :, :]) / s[..., None]
            seed = np.where(np.isnan(vs[:, None, :] + vs[None, :, :]) & (s[..., None] > 1),
                            np.nan, seed)
            k_pair = 2 * (s - 1)
        seed = np.where(np.isnan(vt), np.nan, seed)
        if epochs:      # per-item noise: shrinks with the items, estimated from all of them
            seed = seed if item_scale is None else seed * item_scale
            k_pair = np.zeros(shape)
        # the design's languages, less those where a model of the pair has no score
        listed = vt.shape[-1]
        n_lang = ((~np.isnan(vt)).sum(axis=-1) * (d.attrs[N_LANGUAGES] / listed)
                  if nl is None else nl)
        c_test = nanmean(test) / n_lang
        c_seed = nanmean(seed) / n_lang
        c_pop = (d[TAU2].values / n_lang if scope == "population"
                 else np.zeros(shape))
        df_seed = np.where(k_pair > 0, n_lang * k_pair, np.inf)
        df_pop = np.where(n_lang >= 2, n_lang - 1.0, np.nan)
        total = c_test + c_seed + c_pop
        denom = c_seed**2 / df_seed + (c_pop**2 / df_pop if scope == "population" else 0.0)
        df = np.where(denom > 0, total**2 / denom, np.inf)
    if scope == "population":
        total = np.where(n_lang >= 2, total, np.nan)
    return total, df


def _mde(var: np.ndarray, df: np.ndarray, alpha: float, power: float) -> np.ndarray:
    """(t_{1-alpha/2, df} + t_{power, df}) * sqrt(var)."""
    with np.errstate(invalid="ignore"):
        return (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * np.sqrt(var)


def _check_test(alpha: Any, power: Any, scope: Any) -> tuple[float, float]:
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    power = check_real("power", power, low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    check_choice("scope", scope, SCOPES)
    return alpha, power


def _item_scale(d: xr.Dataset, n_items: Any) -> np.ndarray | None:
    """n_l / n per language for a design of n items per language (None: the cube's items);
    ``n_items`` a number or an array over (model, model_b)."""
    if n_items is None:
        return None
    ni = d[N_ITEMS].values
    if np.isnan(ni).any():
        raise CubeError("`n_items` needs the cube's items per language (its `n_items`, which "
                        "eq.from_items records); add it with cube['n_items'] = "
                        "('language', counts), or build the design with design_from_sds")
    return ni / np.asarray(n_items, np.float64)[..., None]


def _label(out: xr.DataArray, d: xr.Dataset, reason: str) -> xr.DataArray:
    """NaN on the diagonal (a model against itself) and a nan_reason where NaN."""
    diag = out[MODEL].values[:, None] == out[MODEL_B].values[None, :]
    out = out.where(~xr.DataArray(diag, dims=(MODEL, MODEL_B)))
    out.attrs["metric"] = d.attrs.get("metric", "")
    out.attrs[NAN_REASON] = ("the diagonal pairs a model with itself" +
                             (f"; {reason}" if bool(out.isnull().sum() > len(diag)) else ""))
    return out


def minimum_detectable_effect(cube: xr.Dataset, *, alpha: float = 0.05, power: float = 0.8,
                              n_items: int | None = None, n_seeds: int | None = None,
                              n_languages: int | None = None,
                              scope: Literal["benchmark", "population"] = "benchmark"
                              ) -> xr.DataArray:
    r"""The smallest paired difference between two models that this design detects.

    :math:`\mathrm{MDE} = (t_{1-\alpha/2,\nu} + t_{power,\nu}) \sqrt{V(n, S, L)}` (module
    docstring), in the metric's units, for every pair of models: for the cube's own design,
    or for the design the overrides give (the other units stay as in the cube).

    Parameters
    ----------
    cube
        A cube with paired ``boot_score`` (:func:`design` reads it), or a design from
        :func:`design` / :func:`design_from_sds`.
    alpha, power
        The two-sided test's level and the power wanted.
    n_items, n_seeds, n_languages
        Items per language, seeds (epochs) per model and language, and languages of the
        design; None keeps the cube's. A cube with one seed has no separate seed variance
        (its bootstrap already holds the noise of its single run), so it counts none at its
        own design; changing ``n_seeds`` then needs a seed SD and gives NaN.
    scope
        ``"benchmark"``: the difference on these languages; ``"population"``: on languages
        sampled from a population (adds the between-language variance of the difference,
        with :math:`L - 1` df).

    Returns
    -------
    xarray.DataArray
        ``mde`` (model, model_b); NaN on the diagonal and where a component is unknown
        (``nan_reason``).

    References
    ----------
    E. Miller (2024). Adding Error Bars to Evals, section 5 (power analysis).
    J. Cohen (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed.

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design_from_sds(sd_item=0.5, correlation=0.5, n_items=1000)
    >>> mde = eq.power.minimum_detectable_effect(d)
    >>> round(float(mde.sel(model="A", model_b="B")), 4)        # 2.8016 * sqrt(0.25 / 1000)
    0.0443
    >>> round(float(eq.power.minimum_detectable_effect(d, n_items=4000)
    ...             .sel(model="A", model_b="B")), 4)
    0.0222
    """
    alpha, power = _check_test(alpha, power, scope)
    d = _as_design(cube)
    if n_seeds is not None:
        n_seeds = check_int("n_seeds", n_seeds, minimum=1)
    if n_languages is not None:
        n_languages = check_int("n_languages", n_languages,
                                minimum=2 if scope == "population" else 1)
    if n_items is not None:
        n_items = check_int("n_items", n_items, minimum=1)
    var, df = _variance(d, _item_scale(d, n_items), n_seeds, n_languages, scope)
    out = xr.DataArray(_mde(var, df, alpha, power), dims=(MODEL, MODEL_B),
                       coords={MODEL: d[MODEL].values, MODEL_B: d[MODEL_B].values}, name=MDE)
    out = _label(out, d, "a variance component is unknown (one seed with `n_seeds` changed, "
                         "one language in the population scope, or a missing cell)")
    out.attrs.update({"alpha": alpha, "power": power, "scope": scope})
    return out


def _check_effect(effect: Any, d: xr.Dataset) -> np.ndarray:
    """|effect| over (model, model_b): a positive number or a DataArray with those dims."""
    if isinstance(effect, xr.DataArray):
        values = effect.broadcast_like(d[TAU2]).transpose(MODEL, MODEL_B).values
    elif isinstance(effect, int | float | np.floating | np.integer) and not isinstance(
            effect, bool):
        values = np.full(d[TAU2].shape, float(effect))
    else:
        raise TypeError(f"`effect` must be a number or a DataArray (model, model_b); got "
                        f"{type(effect).__name__}")
    values = np.abs(values.astype(np.float64))
    off = ~np.eye(len(values), dtype=bool)
    if not (np.isfinite(values[off]) & (values[off] > 0)).all():
        raise ValueError(f"`effect` must be a finite nonzero difference; got {effect!r}")
    return values


def sample_size(cube: xr.Dataset, effect: float | xr.DataArray, *, alpha: float = 0.05,
                power: float = 0.8, vary: Literal["items", "seeds", "languages"] = "items",
                scope: Literal["benchmark", "population"] = "benchmark") -> xr.DataArray:
    r"""How many items, seeds or languages it takes to detect a difference.

    The smallest integer n (items per language), S (seeds per model and language) or L
    (languages) whose :func:`minimum_detectable_effect` is at most ``|effect|``, the other
    units as in the cube. Solved exactly over the integers by bisection, all pairs at once
    (the MDE falls monotonically in each unit; with the t correction its df move too).

    Parameters
    ----------
    cube
        A cube with paired ``boot_score``, or a design (:func:`design`,
        :func:`design_from_sds`).
    effect
        The true difference to detect, in the metric's units: one number for every pair, or
        a DataArray over (model, model_b).
    alpha, power, scope
        As in :func:`minimum_detectable_effect`.
    vary
        ``"items"``, ``"seeds"`` or ``"languages"``.

    Returns
    -------
    xarray.DataArray
        The units needed (model, model_b), whole numbers as floats; NaN on the diagonal and
        where no number of that unit reaches the effect (more items do not remove the seed
        and between-language variance; ``nan_reason`` says so).

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design_from_sds(sd_item=0.5, n_items=100)
    >>> int(eq.power.sample_size(d, 0.05).sel(model="A", model_b="B"))   # 2.8016^2 * 0.5 / 0.05^2
    1570
    """
    alpha, power = _check_test(alpha, power, scope)
    check_choice("vary", vary, VARY)
    d = _as_design(cube)
    target = _check_effect(effect, d)
    low = 2 if (vary == "languages" and scope == "population") else 1

    def mde_at(n: np.ndarray) -> np.ndarray:
        if vary == "items":
            return _mde(*_variance(d, _item_scale(d, n), None, None, scope), alpha, power)
        if vary == "seeds":
            return _mde(*_variance(d, None, n, None, scope), alpha, power)
        return _mde(*_variance(d, None, None, n, scope), alpha, power)

    lo = np.full(target.shape, float(low))
    hi = np.full(target.shape, float(_CAP[vary]))
    with np.errstate(invalid="ignore"):
        reachable = mde_at(hi) <= target
        done = mde_at(lo) <= target
    for _ in range(int(np.ceil(np.log2(_CAP[vary]))) + 1):     # bisection, all pairs at once
        mid = np.floor((lo + hi) / 2)
        with np.errstate(invalid="ignore"):
            ok = mde_at(mid) <= target
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    n = np.where(done, float(low), hi)
    n = np.where(reachable, n, np.nan)
    out = xr.DataArray(n, dims=(MODEL, MODEL_B), name={"items": N_ITEMS, "seeds": N_SEEDS,
                                                       "languages": N_LANGUAGES}[vary],
                       coords={MODEL: d[MODEL].values, MODEL_B: d[MODEL_B].values})
    out = _label(out, d, f"no number of {vary} reaches the effect: the other variance "
                         "components alone exceed it (or one is unknown)")
    out.attrs.update({"alpha": alpha, "power": power, "scope": scope, "vary": vary})
    return out


def mde_grid(cube: xr.Dataset, *, n_items: Sequence[int], n_seeds: Sequence[int],
             alpha: float = 0.05, power: float = 0.8,
             scope: Literal["benchmark", "population"] = "benchmark") -> xr.DataArray:
    """The MDE over a grid of items and seeds (the data of :func:`evaluq.plots.mde_plot`).

    Parameters
    ----------
    cube
        A cube or a design.
    n_items, n_seeds
        The items per language and the seeds of the grid.
    alpha, power, scope
        As in :func:`minimum_detectable_effect`.

    Returns
    -------
    xarray.DataArray
        ``mde`` (model, model_b, n_seeds, n_items).

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design_from_sds(sd_item=0.5, sd_seed=0.01, n_seeds=3, n_items=100)
    >>> eq.power.mde_grid(d, n_items=[100, 400], n_seeds=[1, 5]).sizes["n_items"]
    2
    """
    n_items = check_int_sequence("n_items", n_items, minimum=1)
    n_seeds = check_int_sequence("n_seeds", n_seeds, minimum=1)
    d = _as_design(cube)
    # the grid: every ordered pair of models at every point, joined twice (rows, then grid)
    check_memory("n_items", 3 * 8 * d.sizes[MODEL] ** 2 * len(n_items) * len(n_seeds),
                 hint=" (or `n_seeds`: the grid holds every pair of models at each point)")
    rows = [xr.concat([minimum_detectable_effect(d, alpha=alpha, power=power, n_items=n,
                                                 n_seeds=s, scope=scope)
                       for n in n_items], dim=N_ITEMS)
            for s in n_seeds]
    out = xr.concat(rows, dim=N_SEEDS).assign_coords({N_SEEDS: list(n_seeds),
                                                      N_ITEMS: list(n_items)})
    return out.transpose(MODEL, MODEL_B, N_SEEDS, N_ITEMS)


def _pair_summary(mde: xr.DataArray, top: tuple[Any, Any] | None) -> tuple[float, float]:
    """Median MDE over distinct pairs, and the MDE of the top pair."""
    values = mde.values
    off = ~np.eye(len(values), dtype=bool)
    median = float(np.nanmedian(values[off])) if np.isfinite(values[off]).any() else np.nan
    pair = float(mde.sel({MODEL: top[0], MODEL_B: top[1]})) if top else np.nan
    return median, pair


def compute_allocation(cube: xr.Dataset, *, alpha: float = 0.05, power: float = 0.8,
                       factor: float = 2.0,
                       scope: Literal["benchmark", "population"] = "benchmark"
                       ) -> pd.DataFrame:
    """Where the next unit of compute buys the most: more items, more seeds or more languages.

    The compute of an evaluation grows as items x seeds x languages, so multiplying any one
    of them by ``factor`` costs the same. For each, the table gives the MDE now and after
    (the median over all pairs of models, and for the two best models by mean score, the
    comparison a leaderboard hinges on) and the relative gain; the best is flagged and the
    table's ``attrs["summary"]`` says it in one sentence (for a report).

    In the benchmark scope (these languages), more languages would halve every part of the
    variance, but they make another benchmark: the choice flagged is between items and seeds,
    and the languages row is shown for reference. In the population scope the languages
    enter the choice (their between-language variance shrinks only with more of them).

    Parameters
    ----------
    cube
        A cube with paired ``boot_score`` (or a design; the top pair is then A vs B).
    alpha, power, scope
        As in :func:`minimum_detectable_effect`.
    factor
        How much more of one unit (> 1).

    Returns
    -------
    pandas.DataFrame
        Indexed by unit (items, seeds, languages): ``now``, ``next``, ``mde_now``,
        ``mde_next``, ``gain`` (1 - mde_next / mde_now, median over pairs),
        ``mde_top_now``, ``mde_top_next``, ``best``.

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design_from_sds(sd_item=0.5, sd_seed=0.05, n_seeds=2, n_items=200)
    >>> t = eq.power.compute_allocation(d)
    >>> t.index[t.best].tolist()
    ['seeds']
    """
    factor = check_real("factor", factor, low=1.0, low_inclusive=False)
    d = _as_design(cube)
    if d.sizes[MODEL] < 2:
        raise CubeError(f"`cube` has {d.sizes[MODEL]} model: a minimum detectable effect "
                        "is a difference between two models, so compute_allocation needs "
                        "at least two")
    top = _top_pair(cube, d)
    now = minimum_detectable_effect(d, alpha=alpha, power=power, scope=scope)
    n_items = float(np.nanmean(d[N_ITEMS].values)) if np.isfinite(d[N_ITEMS].values).all() \
        else np.nan
    seeds = float(np.max(d[N_SEEDS].values))          # the design's seeds per cell
    units = {"items": n_items, "seeds": seeds, "languages": float(d.attrs[N_LANGUAGES])}
    after = {
        "items": _mde(*_variance(d, 1 / factor, None, None, scope), alpha, power),
        "seeds": _mde(*_variance(d, None, seeds * factor, None, scope), alpha, power),
        "languages": _mde(*_variance(d, None, None, units["languages"] * factor, scope),
                          alpha, power),
    }
    rows = []
    for unit, values in after.items():
        nxt = now.copy(data=values)
        m_now, t_now = _pair_summary(now, top)
        m_next, t_next = _pair_summary(nxt, top)
        gain = 1 - m_next / m_now if m_now > 0 else float("nan")  # identical models: 0 / 0
        rows.append({"unit": unit, "now": units[unit], "next": units[unit] * factor,
                     "mde_now": m_now, "mde_next": m_next, "gain": gain,
                     "mde_top_now": t_now, "mde_top_next": t_next})
    table = pd.DataFrame(rows).set_index("unit")
    # in the benchmark scope the languages define the benchmark: more of them halve every
    # part of the variance but answer another question, so the choice is items or seeds
    choices = table.gain if scope == "population" else table.gain.drop("languages")
    table["best"] = (table.gain == choices.max()) & table.index.isin(choices.index)
    table.attrs["nan_reasons"] = _allocation_reasons(table)
    table.attrs["summary"] = _allocation_sentence(table, factor, scope)
    table.attrs["caption"] = (f"Minimum detectable effect (alpha {alpha:g}, power {power:g}, "
                              f"{scope} scope) now and with {factor:g}x one unit; median over "
                              "pairs of models, and for the two best models")
    return table


def _allocation_reasons(table: pd.DataFrame) -> dict[str, str]:
    """Why a column of the allocation table holds a NaN (the table's ``attrs["nan_reasons"]``,
    column -> reason)."""
    reasons = {
        "now": "the cube does not record `n_items` (eq.from_items and eq.from_predictions "
               "do), so the items row has no count",
        "next": "the cube does not record `n_items`, so the items row has no count",
        "gain": "the MDE is 0 (identical models) or unknown: no relative gain",
    }
    for column in ("mde_now", "mde_next", "mde_top_now", "mde_top_next"):
        reasons[column] = ("no pair of models has a known MDE (a variance component is "
                           "unknown: a missing cell or one seed)")
    return {c: r for c, r in reasons.items() if bool(table[c].isna().any())}


def _allocation_sentence(table: pd.DataFrame, factor: float, scope: str) -> str:
    names = {"languages": "languages (another benchmark)"} if scope == "benchmark" else {}
    parts = [f"{names.get(str(unit), unit)} by {100 * row.gain:.0f}%"
             for unit, row in table.iterrows() if np.isfinite(row.gain)]
    best = table.index[table.best].tolist()
    head = f"{factor:g}x more of one unit lowers the median MDE: " + ", ".join(parts)
    return head + (f". More {best[0]} buy the most." if best else ".")


def _top_pair(cube: xr.Dataset, d: xr.Dataset) -> tuple[Any, Any] | None:
    """The two best models by mean score (orientation from the cube), or None."""
    models = d[MODEL].values
    if len(models) < 2:
        return None
    if SCORE not in cube.data_vars:
        return (models[0], models[1])
    mean = cube[SCORE].mean((LANGUAGE, SEED)).values
    higher = orientation(cube.attrs)
    order = np.argsort(-mean if higher else mean, kind="stable")
    return (models[order[0]], models[order[1]])

"""What an ordinal fit reports beyond its scores: variance components, predictive checks, the
frequentist comparison and the pointwise log-likelihood of ``compare_fits``.

Pointwise log-likelihood (the LOO unit). With items, one observation is one item's whole
rating pattern (every model, grader and epoch on it) with its effect integrated out:

    log p(y_i) = log int N(b; 0, s^2) prod_c p(l_c | eta_c - b)^{n_c} db,

by Gauss-Hermite (``LOO_NODES`` nodes) centred at the item's posterior mean and scaled by
``LOO_WIDEN`` times its posterior SD (the conditional given one draw lies inside the
marginal, so the rule covers it; tests check it against adaptive quadrature). A fit without
items is scored on the same unit (the product over the item's ratings). When no fit has
items, one observation is one row of the table (one rating), as in HiBayES.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import norm

from evaluq._dims import BENCHMARK_SCORE, MODEL, POSTERIOR_SAMPLE_DIMS
from evaluq.item_model._data import FittedDraws
from evaluq.item_model._diagnostics import comparison_table
from evaluq.item_model._ordinal import (
    GRADER,
    OrdinalStats,
    flat_draws,
    grader_model_eta,
    level_probabilities,
    ordinal_logp,
)

LOO_NODES: Final = 24
LOO_WIDEN: Final = 1.5
CHUNK: Final = 50
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
_LX, _LW = np.polynomial.hermite.hermgauss(LOO_NODES)
_REASONS: Final = {
    "sigma_item": "no item effects (fitted with item=None)",
    "sigma_task": "one task: no task effects",
    "sigma_model_x_task": "one task or one model: no model x task effects",
    "sigma_grader": "no grader effects (grader=None or one grader)",
    "sigma_grader_x_model": "no grader x model effects (grader_interaction=False, grader=None, "
                            "one grader or one model)",
    "icc_epochs": "defined for binary scores (the binomial family's epochs); not computed "
                  "for ratings",
}


def _stats(fit: FittedDraws) -> OrdinalStats:
    return fit.data.ordinal


# --- variance components -----------------------------------------------------------------------

def ordinal_variance_components(fit: FittedDraws) -> xr.Dataset:
    """sigma_item, sigma_task, sigma_model_x_task, sigma_grader, sigma_grader_x_model
    (logit scale; NaN with ``nan_reason`` where the model has no such effect)."""
    post = fit.posterior
    nan = xr.full_like(post["cutpoints"].isel(cut=0, drop=True), np.nan)
    out = xr.Dataset()
    for name, reason in _REASONS.items():
        if name in post:
            out[name] = post[name]
            fixed = f"sigma_{'gxm' if 'x_model' in name else 'grader'}_fixed"
            if name.startswith("sigma_grader") and fixed in fit.config["priors"]:
                out[name].attrs["fixed"] = f"fixed at {fit.config['priors'][fixed]} (priors)"
        else:
            out[name] = nan.assign_attrs(nan_reason=reason)
    out.attrs = {"family": "ordinal", "scale": "logit (latent) scale of the ordered logistic"}
    return out


# --- the pointwise log-likelihood ---------------------------------------------------------------

def _cell_logp(fit: FittedDraws, ref: OrdinalStats, part: slice, flat: dict[str, np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray]:
    """eta (draw, cell) without the item effect and kappa (draw, cut) of ``ref``'s cells."""
    eta = grader_model_eta(_stats(fit), {k: v[part] for k, v in flat.items()})
    return eta[:, ref.cell_model, ref.cell_task, ref.cell_grader], flat["cutpoints"][part]


def _item_moments(fit: FittedDraws) -> tuple[np.ndarray, np.ndarray]:
    items = fit.idata["item_effects"].to_dataset()
    return items["item_effect_mean"].values, items["item_effect_sd"].values


def ordinal_pointwise_loglik(fit: FittedDraws, ref: OrdinalStats) -> np.ndarray:
    """(draw, observation) log-likelihood: one item's whole rating pattern when ``ref`` has
    items (the item effect integrated out), else one row (see the module docstring)."""
    from scipy import sparse

    flat = flat_draws(fit.posterior)
    if "item_effects" in fit.idata:
        flat["sigma_item"] = fit.posterior["sigma_item"].transpose(
            "chain", "draw").values.ravel()
    n_draws = len(flat["cutpoints"])
    n_obs = len(np.asarray(ref.item_labels)) if ref.has_items else len(ref.row_cell)
    out = np.empty((n_draws, n_obs))
    if ref.has_items:
        onehot = sparse.csr_matrix((ref.cell_count, (np.arange(len(ref.cell_count)),
                                                     ref.cell_item)),
                                   shape=(len(ref.cell_count), n_obs))
    for start in range(0, n_draws, CHUNK):                        # chunks of draws
        part = slice(start, start + CHUNK)
        eta, kappa = _cell_logp(fit, ref, part, flat)
        if not ref.has_items:
            out[part] = ordinal_logp(np, eta, kappa, ref.cell_level)[:, ref.row_cell]
        elif not _stats(fit).has_items:
            out[part] = (onehot.T @ ordinal_logp(np, eta, kappa, ref.cell_level).T).T
        else:
            out[part] = _integrated(fit, ref, eta, kappa, flat["sigma_item"][part], onehot)
    return out


def _integrated(fit: FittedDraws, ref: OrdinalStats, eta: np.ndarray, kappa: np.ndarray,
                sigma: np.ndarray, onehot: Any) -> np.ndarray:
    """log int N(b; 0, s^2) prod_c p(l_c | eta_c - b)^{n_c} db per (draw, item)."""
    mean, sd = _item_moments(fit)
    scale = LOO_WIDEN * np.sqrt(2.0) * np.maximum(sd, 1e-3)
    vals = np.empty((len(eta), len(mean), LOO_NODES))
    for j in range(LOO_NODES):                                     # nodes, not items
        b = mean + scale * _LX[j]                                   # (item,)
        logp = ordinal_logp(np, eta - b[ref.cell_item], kappa, ref.cell_level)
        vals[:, :, j] = (onehot.T @ logp.T).T + norm.logpdf(b, 0.0, sigma[:, None])
    vals += np.log(_LW) + _LX**2
    top = vals.max(axis=-1)
    return top + np.log(np.exp(vals - top[..., None]).sum(axis=-1)) + np.log(scale)


def ordinal_reference(fits: Mapping[str, FittedDraws]) -> OrdinalStats:
    """The cells every fit is scored on (the first fit with items, else the first fit);
    fits of other tables raise."""
    stats = {name: fit.data.ordinal for name, fit in fits.items()}
    if any(s is None for s in stats.values()):
        raise ValueError("`fits`: an ordinal fit is compared with ordinal fits of the same "
                         "ratings only")
    with_items = [s for s in stats.values() if s.has_items]
    ref = with_items[0] if with_items else next(iter(stats.values()))
    for name, s in stats.items():
        same = s.row_digest == ref.row_digest and all(
            np.array_equal(getattr(s, a), getattr(ref, a))
            for a in ("models", "tasks", "graders", "levels"))
        if not same:
            raise ValueError(f"`fits[{name!r}]` was fitted to other ratings than the first "
                             "fit; LOO compares fits of the same table only")
    return ref


# --- predictive checks --------------------------------------------------------------------------

def _slots(stats: OrdinalStats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (model, task, grader, item) of the cells: (4, slot) keys, each cell's
    slot, and (slot, level) counts."""
    keys, slot = np.unique(np.stack([stats.cell_model, stats.cell_task, stats.cell_grader,
                                     stats.cell_item]), axis=1, return_inverse=True)
    counts = np.zeros((keys.shape[1], stats.n_levels))
    np.add.at(counts, (slot.ravel(), stats.cell_level), stats.cell_count)
    return keys, slot.ravel(), counts


def _statistics(stats: OrdinalStats, keys: np.ndarray, counts: np.ndarray
                ) -> dict[str, np.ndarray]:
    n, value = counts.sum(axis=1), counts @ stats.levels
    out = {"mean_rating": np.bincount(keys[0], value, len(stats.models))
           / np.bincount(keys[0], n, len(stats.models))}
    if stats.has_graders:
        out["grader_mean_rating"] = (np.bincount(keys[2], value, len(stats.graders))
                                     / np.bincount(keys[2], n, len(stats.graders)))
    if stats.has_items:
        n_i = len(np.asarray(stats.item_labels))
        out["item_spread"] = np.array([(np.bincount(keys[3], value, n_i)
                                        / np.bincount(keys[3], n, n_i)).std()])
    return out


def _replicate(stats: OrdinalStats, keys: np.ndarray, n_slot: np.ndarray, eta: np.ndarray,
               kappa: np.ndarray, b: np.ndarray | None, gen: np.random.Generator
               ) -> dict[str, np.ndarray]:
    """Statistics of ratings replicated at eta (model, task, grader), kappa, b (item,)."""
    e = eta[keys[0], keys[1], keys[2]]
    if b is not None:
        e = e - b[keys[3]]
    prob = np.clip(level_probabilities(e, kappa), 0.0, None)
    prob /= prob.sum(axis=-1, keepdims=True)
    return _statistics(stats, keys, gen.multinomial(n_slot.astype(np.int64), prob)
                       .astype(np.float64))


def _centred(gen: np.random.Generator, sigma: float, shape: tuple[int, ...]) -> np.ndarray:
    z = gen.normal(0.0, sigma, shape)
    for axis in range(len(shape)):
        z = z - z.mean(axis=axis, keepdims=True)
    return z


def _prior_draw(stats: OrdinalStats, priors: dict[str, float], config: dict[str, Any],
                gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """eta (model, task, grader), kappa, b from the prior."""
    n_m, n_k, n_g = len(stats.models), len(stats.tasks), len(stats.graders)
    inc = gen.lognormal(priors["cut_diff_mu"], priors["cut_diff_sigma"], stats.n_levels - 2)
    kappa = gen.normal(priors["cut_first_mu"], priors["cut_first_sigma"]) + np.r_[
        0.0, np.cumsum(inc + priors["cut_min_spacing"])]
    tau_dev = priors.get("dev_sigma_fixed", abs(gen.normal(0, priors["dev_sigma"])))
    eta = np.zeros((n_m, n_k, n_g)) + _centred(gen, tau_dev, (n_m,))[:, None, None]
    if n_k > 1:
        eta += abs(gen.normal(0, priors["sigma_task_sigma"])) * gen.normal(0, 1, n_k)[:, None]
        eta += abs(gen.normal(0, priors["sigma_mxt_sigma"])) * gen.normal(0, 1, (n_m, n_k, 1))
    if n_g > 1:
        sg = priors.get("sigma_grader_fixed", abs(gen.normal(0, priors["sigma_grader_sigma"])))
        eta += _centred(gen, sg, (n_g,))
        if config.get("grader_interaction") and n_m > 1:
            sq = priors.get("sigma_gxm_fixed", abs(gen.normal(0, priors["sigma_gxm_sigma"])))
            eta += _centred(gen, sq, (n_g, n_m)).T[:, None, :]
    b = None
    if stats.has_items:
        b = gen.normal(0, abs(gen.normal(0, priors["sigma_item_sigma"])),
                       len(np.asarray(stats.item_labels)))
    return eta, kappa, b


def ordinal_predictive_checks(fit: FittedDraws, n_replicates: int, gen: np.random.Generator
                              ) -> pd.DataFrame:
    """See :meth:`ItemFit.predictive_checks` (statistics: each model's mean rating, each
    grader's mean rating, the SD over items of the items' mean rating)."""
    from evaluq.item_model._criticism import _rows

    stats = _stats(fit)
    keys, _, counts = _slots(stats)
    n_slot = counts.sum(axis=1)
    observed = _statistics(stats, keys, counts)
    flat = flat_draws(fit.posterior)
    eta = grader_model_eta(stats, flat)
    b = None
    if "item_effects" in fit.idata:
        b = fit.idata["item_effects"]["item_effect"].transpose("chain", "draw", ...).values
        b = b.reshape(-1, b.shape[-1])
    pick = gen.choice(len(eta), size=min(n_replicates, len(eta)), replace=False)
    post = [_replicate(stats, keys, n_slot, eta[d], flat["cutpoints"][d],
                       None if b is None else b[d], gen) for d in pick]
    prior = [_replicate(stats, keys, n_slot, *_prior_draw(stats, fit.config["priors"],
                                                          fit.config, gen), gen)
             for _ in range(n_replicates)]       # one replicate per draw, vectorised inside
    labels = {"mean_rating": [str(m) for m in stats.models],
              "grader_mean_rating": [str(g) for g in stats.graders]}
    rows = _rows("prior", observed, prior, labels["mean_rating"]) \
        + _rows("posterior", observed, post, labels["mean_rating"])
    out = pd.DataFrame(rows)
    is_model = out["statistic"] == "mean_rating"
    out.loc[is_model, MODEL] = np.tile(labels["mean_rating"], 2)[:is_model.sum()]
    is_grader = out["statistic"] == "grader_mean_rating"
    out[GRADER] = ""
    out.loc[is_grader, GRADER] = np.tile(labels["grader_mean_rating"], 2)[:is_grader.sum()]
    out.attrs = {"n_replicates": n_replicates,
                 "rule": "posterior: p-value P(T_rep >= T_obs) in [0.025, 0.975]; prior: "
                         "observed inside the central 99% of the prior predictive"}
    return out


# --- the frequentist comparison -----------------------------------------------------------------

def _frequentist_units(stats: OrdinalStats) -> tuple[np.ndarray, bool]:
    """(model, unit) mean ratings and whether the units pair across models (items), else
    (model, grader) cell means with their squared standard errors stacked on axis 0."""
    from evaluq.item_model._ordinal import per_item_means

    if stats.has_items:
        return np.asarray(per_item_means(stats)), True
    n_m, n_g = len(stats.models), len(stats.graders)
    total, sq, n = (np.zeros((n_m, n_g)) for _ in range(3))
    lv = stats.levels[stats.cell_level]
    np.add.at(total, (stats.cell_model, stats.cell_grader), lv * stats.cell_count)
    np.add.at(sq, (stats.cell_model, stats.cell_grader), lv**2 * stats.cell_count)
    np.add.at(n, (stats.cell_model, stats.cell_grader), stats.cell_count)
    mean = total / n
    var = (sq / n - mean**2) * n / np.maximum(n - 1, 1)
    return np.stack([mean, var / n]), False


def ordinal_compare_frequentist(stats: OrdinalStats, post: np.ndarray, level: float
                                ) -> pd.DataFrame:
    """See :meth:`ItemFit.compare_frequentist` (``post``: the (model, sample) benchmark
    draws): with items, the mean over items of each model's per-item mean rating (CLT over
    items, paired differences); without items, the mean over graders of each model's mean
    rating per grader (CLT, unpaired differences)."""
    units, paired = _frequentist_units(stats)
    freq = []
    n_m = len(stats.models)
    for a in range(n_m):
        for b in range(a, n_m):
            if paired:
                x = units[a] if a == b else units[a] - units[b]
                x = x[np.isfinite(x)]
                freq.append((float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x)))))
            else:
                mean, se2 = units
                freq.append((float(mean[a].mean() - (0 if a == b else mean[b].mean())),
                             float(np.sqrt(se2[a].sum() + (0 if a == b else se2[b].sum()))
                                   / mean.shape[1])))
    out = comparison_table(stats.models, freq, post, level)
    out.attrs = {"confidence_level": level, "scope": "benchmark", "scale": "rating",
                 "units": "items (paired)" if paired else "graders' mean ratings (unpaired)"}
    return out


def benchmark_draws(fit: FittedDraws) -> np.ndarray:
    """(sample, model) benchmark-scope draws (for tests)."""
    return fit.posterior[BENCHMARK_SCORE].stack(sample=SAMPLE_DIMS).values.T

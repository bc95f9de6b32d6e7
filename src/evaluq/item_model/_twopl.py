"""The 2PL item model (``fit_items(..., discrimination=True)``), with explicit item parameters.

    logit P(y_mie = 1) = a_i (eta_mk - b_i),   eta_mk = alpha + dev_m + t_k + g_mk,
    b_i ~ N(0, sigma_item^2),  log a_i ~ N(0, sigma_logdisc^2),
    sigma_logdisc ~ HalfNormal(sigma_logdisc_sigma)   (default 0.5).

An item no longer enters through its total alone (its discrimination weights each model's
answer by eta_mk), so the items do not collapse into terms and a 2-D quadrature per item
inside the sampler would cost items x nodes^2 x models per log-density. The sampler
therefore sees one non-centred (difficulty, log discrimination) pair per item
(``fit.config["form"] == "explicit"``). Everything downstream integrates where the 1PL does:

- ``new_items`` score, ICC and design effect: 2-D Gauss-Hermite over the joint prior of
  (log a, b) (``A_NODES`` x ``PRIOR_NODES`` nodes; checked against Monte Carlo);
- the pointwise log-likelihood of ``compare_fits``: at each draw (a_i, b_i) are integrated
  out, so one observation is one item's whole response pattern, as for the marginal 1PL.
  Given a, the substitution c = a b turns the b integral into the 1PL's term integral with
  eta -> a eta and sigma_item -> a sigma_item (adaptive Gauss-Hermite, ``_model.term_loglik``;
  it depends on the item only through its total), and the integral over u = log a is a
  trapezoid rule on ``U_GRID`` points over +-``U_HALF_WIDTH`` prior SDs:

      log p(y_i) = log sum_g w_g exp(a_g S_i + log T_k(a_g, Y_i)) + sum_m log C(n_km, y_im),
      S_i = sum_m y_im eta_mk,  a_g = exp(sigma_logdisc z_g),  w_g = phi(z_g) dz.

  Terms of items every model got all right (all wrong) take a piecewise Gauss-Legendre
  rule instead (``_extreme_log_t``): at a large a their integrand is the prior cut by a
  steep step, which the curvature-scaled adaptive rule gets wrong by up to 4e-3.
"""

from __future__ import annotations

import time
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit, logsumexp

from evaluq._dims import BENCHMARK_SCORE, ITEM, MODEL, NEW_ITEMS_SCORE, POSTERIOR_SAMPLE_DIMS, TASK
from evaluq._fits import merge_priors
from evaluq._nutpie_cache import compile_pymc_model
from evaluq.item_model._criticism import _observed, _prior_draw, _rows
from evaluq.item_model._data import FittedDraws, ItemData
from evaluq.item_model._model import PRIOR_KEYS, _effects, default_priors, term_loglik
from evaluq.item_model._posterior import (
    PRIOR_NODES,
    flat_posterior,
    linear_predictor,
    task_weights,
)

if TYPE_CHECKING:
    import pymc as pm

DISC_PRIOR_KEYS: Final = ("sigma_logdisc_sigma",)
DISC_PRIOR_TEXT: Final = {"sigma_logdisc_sigma": "scale of sigma_logdisc ~ HalfNormal, the SD "
                                                  "of log discrimination (default 0.5)"}
SIGMA_LOGDISC_SIGMA: Final = 0.5
A_NODES: Final = 24
U_GRID: Final = 64
U_HALF_WIDTH: Final = 6.0
CHUNK_CELLS: Final = 4_000_000
SAMPLED_2PL: Final = ("alpha", "dev", "sigma_item", "sigma_logdisc", "sigma_task",
                      "task_effect", "sigma_model_x_task", "model_x_task")
ITEM_VARS: Final = ("item_difficulty", "item_discrimination")
EDGE_NODES: Final = 64
_GL_X, _GL_W = np.polynomial.legendre.leggauss(EDGE_NODES)
_AX, _AW = np.polynomial.hermite.hermgauss(A_NODES)
_AW = _AW / np.sqrt(np.pi)
_BX, _BW = np.polynomial.hermite.hermgauss(PRIOR_NODES)
_BW = _BW / np.sqrt(np.pi)
_COMPILED_2PL: dict[tuple[int, int, int], Any] = {}
"""nutpie 2PL models compiled in this process, by (models, tasks, items)."""


def resolve_priors_2pl(data: ItemData, priors: dict[str, float] | None) -> dict[str, float]:
    """The 1PL's default priors plus ``sigma_logdisc_sigma``, updated with the user's."""
    defaults = default_priors(data) | {"sigma_logdisc_sigma": SIGMA_LOGDISC_SIGMA}
    return merge_priors(defaults, priors, PRIOR_KEYS + DISC_PRIOR_KEYS)


def twopl_inputs(data: ItemData, priors: dict[str, float]) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the explicit 2PL model, by name."""
    task = np.asarray(data.item_task, dtype=np.int64)
    return ({"per_item": np.asarray(data.per_item, dtype=np.float64),
             "n_item": data.epochs[:, task], "item_task": task}
            | {f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()})


def build_twopl_model(data: ItemData, priors: dict[str, float] | None = None) -> pm.Model:
    """The explicit 2PL model: eta as in the 1PL, one non-centred (difficulty, log
    discrimination) pair per item (``difficulty_z``, ``logdisc_z``), deterministics
    ``item_difficulty`` = sigma_item z_b and ``item_discrimination`` = exp(sigma_logdisc z_a).
    """
    import pymc as pm
    import pytensor.tensor as pt

    inputs = twopl_inputs(data, resolve_priors_2pl(data, priors))
    n_items = len(inputs["item_task"])
    with pm.Model(coords={MODEL: list(map(str, data.models)),
                          ITEM: np.arange(n_items)}) as pm_model:
        x = {name: pm.Data(name, value) for name, value in inputs.items()}
        eta = _effects(x, data)
        sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
        sigma_logdisc = pm.HalfNormal("sigma_logdisc", x["prior_sigma_logdisc_sigma"])
        z_b = pm.Normal("difficulty_z", 0.0, 1.0, dims=ITEM)
        z_a = pm.Normal("logdisc_z", 0.0, 1.0, dims=ITEM)
        b = pm.Deterministic("item_difficulty", sigma_item * z_b, dims=ITEM)
        a = pm.Deterministic("item_discrimination", pt.exp(sigma_logdisc * z_a), dims=ITEM)
        logit = a[None, :] * (eta[:, x["item_task"]] - b[None, :])
        pm.Potential("item_loglik",
                     (x["per_item"] * logit - x["n_item"] * pt.softplus(logit)).sum())
    return pm_model


def sample_twopl(data: ItemData, priors: dict[str, float], draws: int, tune: int,
                 chains: int, seed: int, target_accept: float
                 ) -> tuple[xr.DataTree, float, float]:
    """Sample the explicit 2PL model with nutpie (compiled once per shape, refitted with new
    data); returns the raw draws, compile seconds and sampling seconds."""
    import nutpie

    n_m, n_k = data.shape
    key = (n_m, n_k, len(np.asarray(data.item_task)))
    compile_s = 0.0
    if key not in _COMPILED_2PL:
        start = time.perf_counter()
        _COMPILED_2PL[key] = compile_pymc_model(build_twopl_model(data))[0]  # across processes
        compile_s = time.perf_counter() - start
    compiled = _COMPILED_2PL[key]
    known = {var.name for var in compiled.shared_var_keys}
    inputs = {k: v for k, v in twopl_inputs(data, priors).items() if k in known}
    start = time.perf_counter()
    raw = nutpie.sample(compiled.with_data(**inputs), draws=draws, tune=tune, chains=chains,
                        cores=chains, seed=seed, progress_bar=False, save_warmup=False,
                        target_accept=target_accept)
    return raw, compile_s, time.perf_counter() - start


# --- numpy: likelihood, scopes, moments -----------------------------------------------------------

def twopl_loglik(data: ItemData, eta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Log-likelihood (draw,) of the 2PL given eta (draw, model, task), a and b (draw, item),
    binomial constants included."""
    task = np.asarray(data.item_task)
    logit = a[:, None, :] * (eta[:, :, task] - b[:, None, :])
    y, n = np.asarray(data.per_item), data.epochs[:, task]
    return (y * logit - n * np.logaddexp(0.0, logit)).sum(axis=(1, 2)) \
        + np.asarray(data.log_binom).sum()


def benchmark_scores_2pl(data: ItemData, eta: np.ndarray, a: np.ndarray,
                         b: np.ndarray) -> np.ndarray:
    """(draw, model): the mean over these items of expit(a_i (eta_mk - b_i)) per draw."""
    task = np.asarray(data.item_task)
    n_d, n_m = eta.shape[:2]
    out = np.empty((n_d, n_m))
    step = max(1, CHUNK_CELLS // (n_m * len(task)))
    for start in range(0, n_d, step):                              # chunks, not draws
        part = slice(start, start + step)
        out[part] = expit(a[part, None, :] * (eta[part][:, :, task] - b[part, None, :])
                          ).mean(axis=-1)
    return out


def twopl_moments(eta: np.ndarray, sigma_item: np.ndarray, sigma_logdisc: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """E[p] and E[p^2] (draw, model, task) of p = expit(a (eta - b)) over a new item,
    log a ~ N(0, sigma_logdisc^2), b ~ N(0, sigma_item^2) (2-D Gauss-Hermite, A_NODES x
    PRIOR_NODES nodes)."""
    b = np.sqrt(2.0) * sigma_item[:, None] * _BX                      # (d, B)
    m1 = np.zeros(eta.shape)
    m2 = np.zeros(eta.shape)
    for x, w in zip(_AX, _AW, strict=True):                           # 24 nodes, vectorised
        a = np.exp(np.sqrt(2.0) * sigma_logdisc * x)[:, None, None, None]
        p = expit(a * (eta[..., None] - b[:, None, None, :]))         # (d, M, K, B)
        m1 += w * (p @ _BW)
        m2 += w * ((p**2) @ _BW)
    return m1, m2


def icc_from_moments(data: ItemData, m1: np.ndarray, m2: np.ndarray) -> dict[str, np.ndarray]:
    """ICC of two epochs of one new item, the design effect and the effective number of
    responses per model (as ``_posterior.icc_draws``, from the 2PL's moments)."""
    w = task_weights(data)
    mean, second = m1 @ w, m2 @ w
    icc = (second - mean**2) / (mean * (1.0 - mean))
    epochs = data.epochs.max(axis=1)
    deff = 1.0 + (epochs - 1.0) * icc
    return {"icc_epochs": icc, "design_effect": deff,
            "effective_n": data.n_items.sum() * epochs / deff}


def _dims_of(name: str, ndim: int) -> tuple[str, ...]:
    if ndim == 1:
        return ()
    return {"dev": (MODEL,), "task_effect": (TASK,), "model_x_task": (MODEL, TASK),
            "item_difficulty": (ITEM,), "item_discrimination": (ITEM,)}[name]


def twopl_posterior(data: ItemData, raw: xr.DataTree) -> tuple[xr.Dataset, xr.Dataset]:
    """The posterior group (sampled variables, item parameters, eta, both scores, ICC) and
    the item parameters' posterior summary."""
    post = raw["posterior"].to_dataset()
    n_chain = post.sizes["chain"]
    flat = flat_posterior(post, SAMPLED_2PL + ITEM_VARS)
    eta = linear_predictor(data, flat)
    a, b = flat["item_discrimination"], flat["item_difficulty"]
    m1, m2 = twopl_moments(eta, flat["sigma_item"], flat["sigma_logdisc"])

    def unflat(v: np.ndarray) -> np.ndarray:
        return v.reshape(n_chain, -1, *v.shape[1:])

    sd, cd = POSTERIOR_SAMPLE_DIMS, (*POSTERIOR_SAMPLE_DIMS, MODEL)
    out = xr.Dataset({name: (sd + _dims_of(name, v.ndim), unflat(v))
                      for name, v in flat.items()})
    out[NEW_ITEMS_SCORE] = (cd, unflat(m1 @ task_weights(data)))
    out[BENCHMARK_SCORE] = (cd, unflat(benchmark_scores_2pl(data, eta, a, b)))
    out["eta"] = ((*cd, TASK), unflat(eta))
    for name, values in icc_from_moments(data, m1, m2).items():
        out[name] = (cd, unflat(values))
    out = out.assign_coords({MODEL: data.models, TASK: data.tasks, ITEM: data.item_labels})
    items = xr.Dataset({"item_effect_mean": (ITEM, b.mean(0)),
                        "item_effect_sd": (ITEM, b.std(0)),
                        "discrimination_mean": (ITEM, a.mean(0)),
                        "discrimination_sd": (ITEM, a.std(0)),
                        TASK: (ITEM, np.asarray(data.tasks)[np.asarray(data.item_task)])},
                       coords={ITEM: data.item_labels})
    return out, items


# --- compare_fits: (a_i, b_i) integrated out ------------------------------------------------------

def _u_grid() -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal grid z_g and log weights log(phi(z_g) dz) of the trapezoid rule."""
    z = np.linspace(-U_HALF_WIDTH, U_HALF_WIDTH, U_GRID)
    dz = z[1] - z[0]
    return z, -0.5 * z**2 - 0.5 * np.log(2 * np.pi) + np.log(dz)




def _extreme_log_t(eta_k: np.ndarray, n_k: np.ndarray, a: np.ndarray, sigma: np.ndarray,
                   all_right: bool) -> np.ndarray:
    """log T(a, Y) (d, G) of a term whose items every model got all right (``all_right``)
    or all wrong, by a piecewise Gauss-Legendre rule in b.

    There the integrand in b is the prior N(0, sigma^2) times L(b) = prod_m
    expit(+-a (eta_m - b))^n_m, a step of width ~1/a at the best (worst) model's eta_m:
    skewed, which the adaptive rule (scaled by the curvature at the mode) gets wrong at
    large a. The rule here splits the prior's +-10 SD at b0 -+ 20 / a around the step
    (beyond, L is within e^-20 of 0 or 1), EDGE_NODES Gauss-Legendre nodes per piece.
    ``eta_k`` (d, M), ``n_k`` (M,), ``a`` (d, G), ``sigma`` (d,).
    """
    scored = n_k > 0
    b0 = (np.where(scored, eta_k, np.inf).min(axis=1) if all_right
          else np.where(scored, eta_k, -np.inf).max(axis=1))[:, None]      # (d, 1)
    w = 20.0 / a
    lo, hi = -10.0 * sigma[:, None], 10.0 * sigma[:, None]   # L <= 1: the prior bounds it
    edges = [lo, np.clip(b0 - w, lo, hi), np.clip(b0 + w, lo, hi), hi]
    nodes, logw = [], []
    for left, right in pairwise(edges):                                 # three pieces
        half = np.maximum(right - left, 0.0) / 2.0
        nodes.append((left + half)[..., None] + half[..., None] * _GL_X)
        logw.append(np.log(np.maximum(half, 1e-300))[..., None] + np.log(_GL_W))
    b, lw = np.concatenate(nodes, axis=-1), np.concatenate(logw, axis=-1)  # (d, G, P)
    x = a[..., None, None] * (eta_k[:, None, None, :] - b[..., None])      # (d, G, P, M)
    log_l = -(n_k * np.logaddexp(0.0, -x if all_right else x)).sum(axis=-1)
    s = sigma[:, None, None]
    log_prior = -0.5 * (b / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)
    out = logsumexp(lw + log_prior + log_l, axis=-1)
    if all_right:                      # T excludes exp(a S) with S = sum_m n_m eta_m
        out = out - a * (eta_k * n_k).sum(axis=1)[:, None]
    return out


def marginal_item_loglik(data: ItemData, items: ItemData, eta: np.ndarray,
                         sigma_item: np.ndarray, sigma_logdisc: np.ndarray) -> np.ndarray:
    """(draw, item) log p(y_i | eta, sigma_item, sigma_logdisc) with (a_i, b_i) integrated
    out (see the module docstring); ``items`` holds the per-item counts."""
    z, logw = _u_grid()
    task, t_task = np.asarray(items.item_task), items.term_task
    extreme = (items.term_total == 0) | (items.term_total
                                         == items.epochs[:, t_task].sum(axis=0))
    per = np.asarray(items.per_item)
    n_m = eta.shape[1]
    out = np.empty((len(eta), per.shape[1]))
    step = max(1, CHUNK_CELLS // (U_GRID * len(t_task) * n_m * 21))
    for start in range(0, len(eta), step):                            # chunks of draws
        e = eta[start:start + step]
        a = np.exp(sigma_logdisc[start:start + step, None] * z)       # (d, G)
        eta_t = np.moveaxis(e[:, :, t_task], 1, 2)[:, None] * a[..., None, None]
        n_t = np.broadcast_to(items.epochs[:, t_task].T, eta_t.shape)
        log_t = term_loglik(eta_t, n_t, items.term_total,
                            a * sigma_item[start:start + step, None])  # (d, G, T)
        for t in np.flatnonzero(extreme):                              # <= 2 terms per task
            n_k = items.epochs[:, t_task[t]]
            log_t[:, :, t] = _extreme_log_t(e[:, :, t_task[t]], n_k, a,
                                            sigma_item[start:start + step],
                                            bool(items.term_total[t] > 0))
        s = np.einsum("dmi,mi->di", e[:, :, task], per)                # (d, I)
        vals = (a[:, :, None] * s[:, None, :] + log_t[:, :, np.asarray(items.item_term)]
                + logw[None, :, None])
        out[start:start + step] = logsumexp(vals, axis=1)
    return out + np.asarray(items.log_binom)


def pointwise_loglik_2pl(fit: FittedDraws, items: ItemData) -> np.ndarray:
    """(draw, item) pointwise log-likelihood of a 2PL fit for ``compare_fits``."""
    flat = flat_posterior(fit.posterior, SAMPLED_2PL)
    eta = linear_predictor(fit.data, flat)
    return marginal_item_loglik(fit.data, items, eta, flat["sigma_item"],
                                flat["sigma_logdisc"])


# --- predictive checks ----------------------------------------------------------------------------

def _replicate_2pl(data: ItemData, eta: np.ndarray, a: np.ndarray, b: np.ndarray,
                   gen: np.random.Generator) -> dict[str, np.ndarray]:
    task = np.asarray(data.item_task)
    y = gen.binomial(data.epochs[:, task].astype(np.int64), expit(a * (eta[:, task] - b)))
    fake = ItemData(**{**data.__dict__, "per_item": y.astype(np.float64),
                       "correct": y @ np.eye(len(data.tasks))[task]})
    return _observed(fake)


def predictive_checks_2pl(fit: FittedDraws, n_replicates: int, gen: np.random.Generator
                          ) -> pd.DataFrame:
    """Prior and posterior predictive checks of a 2PL fit (the statistics and rules of
    ``_criticism``): posterior replicates use each draw's item parameters, prior
    replicates draw a_i and b_i from their prior."""
    data = fit.data
    flat = flat_posterior(fit.posterior, SAMPLED_2PL + ITEM_VARS)
    eta = linear_predictor(data, flat)
    pick = gen.choice(len(eta), size=min(n_replicates, len(eta)), replace=False)
    post = [_replicate_2pl(data, eta[d], flat["item_discrimination"][d],
                           flat["item_difficulty"][d], gen) for d in pick]
    priors, n_items = fit.config["priors"], len(np.asarray(data.item_task))
    prior = []
    for _ in range(n_replicates):          # one replicate per prior draw (vectorised inside)
        eta0, sigma0 = _prior_draw(data, priors, gen)
        s_a = abs(gen.normal(0, priors["sigma_logdisc_sigma"]))
        prior.append(_replicate_2pl(data, eta0, np.exp(gen.normal(0, s_a, n_items)),
                                    gen.normal(0, sigma0, n_items), gen))
    models = [str(m) for m in data.models]
    out = pd.DataFrame(_rows("prior", _observed(data), prior, models)
                       + _rows("posterior", _observed(data), post, models))
    out.attrs = {"n_replicates": n_replicates,
                 "rule": "posterior: p-value P(T_rep >= T_obs) in [0.025, 0.975]; prior: "
                         "observed inside the central 99% of the prior predictive"}
    return out

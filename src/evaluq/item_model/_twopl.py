"""The 2PL item model (``fit_items(..., discrimination=True)``): items integrated out.

    logit P(y_mie = 1) = a_i (eta_mk - b_i),   eta_mk = alpha + dev_m + t_k + g_mk,
    b_i ~ N(0, sigma_item^2),  log a_i ~ N(0, sigma_logdisc^2),
    sigma_logdisc ~ HalfNormal(sigma_logdisc_sigma)   (default 0.5).

An item no longer enters through its total alone (its discrimination weights each model's
answer by eta_mk): its sufficient statistic is its whole count vector over the models. Two
forms sample it (``FORM`` picks the one ``fit_items`` uses):

- ``"marginal"`` (the default, :func:`build_marginal_twopl_model`): (log a_i, b_i)
  integrated out. Items with the same (task, count vector) collapse into one weighted
  pattern; given a, the b-integral of a pattern depends on it only through its (task,
  total) term, T(a, Y) = int N(b; 0, sigma_item^2) exp(-a b Y - sum_m n_km softplus(a
  (eta_mk - b))) db, and

      log p(y_p) = log sum_g w_g exp(a_g S_p + log T(a_g, Y_p)),  S_p = sum_m y_pm eta_mk,

  with a_g = exp(sigma_logdisc z_g) on a trapezoid rule whose step on the u scale is set
  by the most responses an item has (:func:`u_step`; a rule fixed in z, as the former
  10-node Gauss-Hermite rule, misses the narrow u-integrands of items with many responses
  at large sigma_logdisc) and T on one trapezoid grid in b per (u-node, task) shared by
  every term of the task, value and gradient in one fused numba kernel (``_twopl_grid``):
  a log-density costs O(u-nodes x models x tasks x b-nodes + u-nodes x (terms x window +
  patterns)), not O(items x models) parameters. The item parameters are drawn afterwards
  from their conditional on the same rules (:func:`conditional_item_draws`);
- ``"explicit"`` (the tests' reference): one non-centred (difficulty, log discrimination)
  pair per item in the sampler.

The numpy rule of :func:`pattern_u_logdensity` (``FIT_U_NODES``-point trapezoid in u,
adaptive Gauss-Hermite in b with ``FIT_B_NODES`` nodes, the all-right / all-wrong terms by
a piecewise Gauss-Legendre rule, :func:`_extreme_slots_log_t`) is the former sampler form,
kept as an independent reference of the kernel in the tests.

Everything downstream integrates where the 1PL does:

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

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit, logsumexp

from evaluq._dims import BENCHMARK_SCORE, ITEM, MODEL, NEW_ITEMS_SCORE, POSTERIOR_SAMPLE_DIMS, TASK
from evaluq._fits import merge_priors
from evaluq._nutpie_cache import compile_pymc_model, with_data
from evaluq.item_model._criticism import _observed, _prior_draw, _rows
from evaluq.item_model._data import FittedDraws, ItemData
from evaluq.item_model._model import (
    PRIOR_KEYS,
    _effects,
    centring,
    default_priors,
    padded_terms,
    structure_flags,
    term_loglik,
)
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
SAMPLED_2PL: Final = ("alpha", "dev", "tau_dev", "sigma_item", "sigma_logdisc", "sigma_task",
                      "task_effect", "sigma_model_x_task", "model_x_task")
ITEM_VARS: Final = ("item_difficulty", "item_discrimination")
EDGE_NODES: Final = 64
_GL_X, _GL_W = np.polynomial.legendre.leggauss(EDGE_NODES)
_AX, _AW = np.polynomial.hermite.hermgauss(A_NODES)
_AW = _AW / np.sqrt(np.pi)
_BX, _BW = np.polynomial.hermite.hermgauss(PRIOR_NODES)
_BW = _BW / np.sqrt(np.pi)
FIT_U_NODES: Final = 32
"""Trapezoid nodes of the marginal 2PL's u = log a rule (over +-U_HALF_WIDTH prior SDs)."""
U_STEP: Final = 2.5
"""The marginal 2PL's u-rule step is U_STEP / sqrt(most responses per item) (:func:`u_step`)."""
FIT_B_NODES: Final = 15
"""Adaptive Gauss-Hermite nodes of the marginal 2PL's b-integral of a regular term."""
EXT_NODES: Final = 8
"""Gauss-Legendre nodes per piece of the marginal 2PL's all-right / all-wrong terms."""
NEWTON_2PL: Final = 6
FORM: Final = "marginal"
"""The form ``fit_items(discrimination=True)`` samples: ``"marginal"`` or ``"explicit"``."""
_FX, _FW = np.polynomial.hermite.hermgauss(FIT_B_NODES)
_EX, _EW = np.polynomial.legendre.leggauss(EXT_NODES)
_EXT_PRIOR_CUTS: Final = np.array([-10.0, -6.0, -3.0, -1.5, 0.0, 1.5, 3.0, 6.0, 10.0])
_EXT_STEP_CUTS: Final = np.array([-20.0, -6.0, -2.0, 0.0, 2.0, 6.0, 20.0])
_COMPILED_2PL: dict[tuple[Any, ...], Any] = {}
"""nutpie 2PL models compiled in this process, by form and shape."""


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
                 chains: int, seed: int, target_accept: float, form: str | None = None
                 ) -> tuple[xr.DataTree, float, float]:
    """Sample the 2PL model with nutpie (compiled once per shape, refitted with new data):
    the marginal form (:func:`build_marginal_twopl_model`) or the explicit one; returns the
    raw draws, compile seconds and sampling seconds (``form`` None: ``FORM``)."""
    import nutpie

    if (FORM if form is None else form) == "marginal":
        return sample_marginal_twopl(data, priors, draws, tune, chains, seed, target_accept)

    n_m, n_k = data.shape
    key = (n_m, n_k, len(np.asarray(data.item_task)), centring(data),
           *structure_flags())
    compile_s = 0.0
    if key not in _COMPILED_2PL:
        start = time.perf_counter()
        _COMPILED_2PL[key] = compile_pymc_model(build_twopl_model(data))[0]  # across processes
        compile_s = time.perf_counter() - start
    compiled = _COMPILED_2PL[key]
    known = {var.name for var in compiled.shared_var_keys}
    inputs = {k: v for k, v in twopl_inputs(data, priors).items() if k in known}
    start = time.perf_counter()
    raw = nutpie.sample(with_data(compiled, **inputs), draws=draws, tune=tune, chains=chains,
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
    PRIOR_NODES nodes; ``_twopl_grid.new_item_moments``, the draws split over two threads)."""
    from evaluq.item_model._twopl_grid import new_item_moments

    flat = np.ascontiguousarray(eta, dtype=np.float64).reshape(len(eta), -1)
    s_b = np.ascontiguousarray(sigma_item, dtype=np.float64)
    s_a = np.ascontiguousarray(sigma_logdisc, dtype=np.float64)
    m1, m2 = np.empty(flat.shape), np.empty(flat.shape)
    kernel: Any = new_item_moments

    def run(part: slice) -> None:                              # the kernel releases the GIL
        m1[part], m2[part] = kernel(flat[part], s_b[part], s_a[part], _AX, _AW, _BX, _BW)

    cuts = pairwise(np.linspace(0, len(flat), max(1, min(2, os.cpu_count() or 1)) + 1
                                ).astype(int))
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(run, [slice(lo, hi) for lo, hi in cuts]))
    return m1.reshape(eta.shape), m2.reshape(eta.shape)


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


def twopl_posterior(data: ItemData, raw: xr.DataTree, post_seed: int = 0
                    ) -> tuple[xr.Dataset, xr.Dataset]:
    """The posterior group (sampled variables, item parameters, eta, both scores, ICC) and
    the item parameters' posterior summary. Draws of the marginal form carry no item
    parameters: they are drawn from their exact conditional (:func:`conditional_item_draws`,
    seeded by ``post_seed``)."""
    post = raw["posterior"].to_dataset()
    n_chain = post.sizes["chain"]
    flat = flat_posterior(post, SAMPLED_2PL + ITEM_VARS)
    eta = linear_predictor(data, flat)
    if "item_difficulty" not in flat:
        flat["item_discrimination"], flat["item_difficulty"] = conditional_item_draws(
            data, eta, flat["sigma_item"], flat["sigma_logdisc"],
            np.random.default_rng(post_seed))
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


# --- the marginal 2PL: (log a_i, b_i) integrated out of the log-density ---------------------------

@dataclass(eq=False)
class TwoPLTerms:
    """The 2PL's collapsed data: one pattern per distinct (task, count vector over models).

    ``counts`` (pattern, model), ``task``, ``weight`` (how many items share it) and ``term``
    (pattern,): the pattern's (task, total) term, an index into the regular terms
    (``total``, ``term_task``: (term,)) followed by the 2 x tasks extreme slots (slot
    ``T + 2k``: every scored model got every epoch of the item wrong in task k, ``T + 2k +
    1``: all right); ``item_pattern`` (item,) each item's pattern.
    """

    counts: np.ndarray
    task: np.ndarray
    weight: np.ndarray
    term: np.ndarray
    total: np.ndarray
    term_task: np.ndarray
    item_pattern: np.ndarray
    epochs: np.ndarray

    @property
    def n_regular(self) -> int:
        """Number of regular (not all-right / all-wrong) terms."""
        return len(self.total)


def twopl_terms(data: ItemData) -> TwoPLTerms:
    """Collapse the items of ``data`` into (task, count-vector) patterns and (task, total)
    terms (see :class:`TwoPLTerms`); the 2PL's likelihood of an item depends on its data
    only through its pattern, and its b-integral given a only through its term."""
    task_of = np.asarray(data.item_task, dtype=np.int64)
    counts = np.asarray(data.per_item, dtype=np.float64)
    uniq, item_pattern, weight = np.unique(np.column_stack([task_of, counts.T]), axis=0,
                                           return_inverse=True, return_counts=True)
    p_task = uniq[:, 0].astype(np.int64)
    p_counts = uniq[:, 1:]
    total = p_counts.sum(axis=1)
    full = data.epochs[:, p_task].sum(axis=0)
    extreme = (total == 0) | (total == full)
    keys, inverse = np.unique(np.stack([p_task[~extreme], total[~extreme]]), axis=1,
                              return_inverse=True)
    term = np.empty(len(total), dtype=np.int64)
    term[~extreme] = inverse.ravel()
    term[extreme] = keys.shape[1] + 2 * p_task[extreme] + (total[extreme] > 0)
    return TwoPLTerms(counts=p_counts, task=p_task, weight=weight.astype(np.float64),
                      term=term, total=keys[1].astype(np.float64),
                      term_task=keys[0].astype(np.int64), item_pattern=item_pattern.ravel(),
                      epochs=np.asarray(data.epochs, dtype=np.float64))


def _fit_u_rule() -> tuple[np.ndarray, np.ndarray]:
    """Standard-normal trapezoid nodes z and log weights of the sampler's u = log a rule."""
    z = np.linspace(-U_HALF_WIDTH, U_HALF_WIDTH, FIT_U_NODES)
    return z, -0.5 * z**2 - 0.5 * np.log(2 * np.pi) + np.log(z[1] - z[0])


def _regular_log_t(eta_t: np.ndarray, n_t: np.ndarray, total: np.ndarray, a: np.ndarray,
                   sigma: np.ndarray) -> np.ndarray:
    """log T(a, Y) (..., G, T) of the regular terms by adaptive Gauss-Hermite in b.

    T(a, Y) = int N(b; 0, sigma^2) exp(-a b Y - sum_m n_m softplus(a (eta_m - b))) db; the
    rule is centred at the integrand's mode (Newton from the item's logit) and scaled by its
    curvature. ``eta_t`` (..., T, M), ``n_t`` (T, M), ``total`` (T,), ``a`` (..., G),
    ``sigma`` (...).
    """
    e = eta_t[..., None, :, :]                                         # (..., 1, T, M)
    av = a[..., :, None]                                               # (..., G, 1)
    s2 = (sigma**2)[..., None, None]
    n_sum = n_t.sum(axis=-1)
    rate = (total + 0.5) / (n_sum + 1.0)
    b = ((e * n_t).sum(axis=-1) / np.maximum(n_sum, 1.0)
         - np.log(rate / (1.0 - rate)) / av)                           # (..., G, T)
    for _ in range(NEWTON_2PL):
        p = expit(av[..., None] * (e - b[..., None]))
        d1 = av * ((n_t * p).sum(axis=-1) - total) - b / s2
        d2 = -(av**2) * (n_t * p * (1.0 - p)).sum(axis=-1) - 1.0 / s2
        b = b - np.clip(d1 / d2, -2.0, 2.0)
    p = expit(av[..., None] * (e - b[..., None]))
    sd = 1.0 / np.sqrt((av**2) * (n_t * p * (1.0 - p)).sum(axis=-1) + 1.0 / s2)
    nodes = b[..., None] + np.sqrt(2.0) * sd[..., None] * _FX           # (..., G, T, Q)
    x = av[..., None, None] * (e[..., None, :] - nodes[..., None])     # (..., G, T, Q, M)
    soft = (n_t[:, None, :] * np.logaddexp(0.0, x)).sum(axis=-1)
    s = sigma[..., None, None, None]
    vals = (-av[..., None] * nodes * total[:, None] - soft - 0.5 * (nodes / s) ** 2
            - np.log(s) + np.log(_FW) + _FX**2)
    return (logsumexp(vals, axis=-1) + np.log(np.sqrt(2.0) * sd) - 0.5 * np.log(2 * np.pi))


def _extreme_slots_log_t(eta: np.ndarray, epochs: np.ndarray, a: np.ndarray,
                         sigma: np.ndarray, n_k: int) -> np.ndarray:
    """log T (..., G, 2K) of the all-wrong (slot 2k) and all-right (2k + 1) terms of every
    task k by a piecewise Gauss-Legendre rule.

    An all-wrong term at eta is the all-right term at -eta (b -> -b), so both are
    T = int N(b; 0, sigma^2) L(b) db, L(b) = prod_m expit(a (e_m - b))^n_m (times exp(-a S),
    S = sum_m n_m eta_m, for an all-right term): the prior cut by a smooth step at b0 =
    min_m e_m of width ~1/a, which an adaptive rule scaled by the curvature gets wrong. The
    prior's +-10 SD are split at ``_EXT_PRIOR_CUTS`` prior SDs and at b0 + ``_EXT_STEP_CUTS``
    / a (beyond b0 + 20 / a, L < e^-20), sorted, and each piece takes ``EXT_NODES``
    Gauss-Legendre nodes, so every piece is short on both scales. The split points carry no
    gradient (the integral does not depend on them). ``eta`` (..., M, K), ``epochs``
    (M, K), ``a`` (..., G), ``sigma`` (...); K = ``n_k``.
    """
    right = np.tile([False, True], n_k)                                # (E,)
    slot_task = np.repeat(np.arange(n_k), 2)
    n_e = epochs[:, slot_task].T                                       # (E, M)
    sign = np.where(right, 1.0, -1.0)[:, None]
    e = sign * np.swapaxes(eta[..., :, slot_task], -1, -2)             # (..., E, M)
    b0 = np.where(n_e > 0, e, 1e6).min(axis=-1)[..., None, :, None]   # (..., 1, E, 1)
    av = a[..., :, None, None]                                         # (..., G, 1, 1)
    s = sigma[..., None, None, None]
    cuts = np.concatenate([0.0 * b0 * av + s * _EXT_PRIOR_CUTS,
                           np.clip(b0 + _EXT_STEP_CUTS / av, -10.0 * s, 10.0 * s)], axis=-1)
    cuts = np.sort(cuts, axis=-1)                                      # (..., G, E, C)
    half = (cuts[..., 1:] - cuts[..., :-1]) / 2.0                      # (..., G, E, C - 1)
    b = ((cuts[..., :-1] + half)[..., None] + half[..., None] * _EX)   # (..., G, E, C-1, Q)
    lw = np.log(np.maximum(half, 1e-300))[..., None] + np.log(_EW)
    x = av[..., None, None] * (e[..., None, :, None, None, :] - b[..., None])
    ss = s[..., None]                                                 # (..., 1, 1, 1, 1)
    vals = (lw - 0.5 * (b / ss) ** 2 - np.log(ss) - 0.5 * np.log(2 * np.pi)
            - (n_e[:, None, None, :] * np.logaddexp(0.0, -x)).sum(axis=-1))
    out = logsumexp(vals.reshape((*vals.shape[:-2], -1)), axis=-1)
    s_right = np.where(right, (e * n_e).sum(axis=-1), 0.0)[..., None, :]
    return out - a[..., :, None] * s_right


def twopl_log_t(terms: Any, eta: np.ndarray, a: np.ndarray, sigma: np.ndarray
                ) -> np.ndarray:
    """log T (..., G, T + 2K): every term's b-integral at the discriminations ``a`` (..., G);
    ``terms``: a mapping with ``term_task``, ``total``, ``epochs`` and ``n_tasks`` (``eta``
    (..., M, K))."""
    task = terms["term_task"]
    eta_t = np.swapaxes(eta[..., :, task], -1, -2)                     # (..., T, M)
    n_t = terms["epochs"][:, task].T
    regular = _regular_log_t(eta_t, n_t, terms["total"], a, sigma)
    extreme = _extreme_slots_log_t(eta, terms["epochs"], a, sigma, terms["n_tasks"])
    return np.concatenate([regular, extreme], axis=-1)


def pattern_u_logdensity(terms: Any, eta: np.ndarray, sigma: np.ndarray,
                         sigma_logdisc: np.ndarray, z: np.ndarray, logw: np.ndarray
                         ) -> np.ndarray:
    """(..., G, P): log of w_g p(y_p | a_g, eta, sigma) with a_g = exp(sigma_logdisc z_g),
    binomial constants excluded; its log-sum-exp over G is the pattern's log-likelihood."""
    a = np.exp(sigma_logdisc[..., None] * z)                           # (..., G)
    log_t = twopl_log_t(terms, eta, a, sigma)                          # (..., G, T + 2K)
    e_p = np.swapaxes(eta[..., :, terms["task"]], -1, -2)              # (..., P, M)
    s = (e_p * terms["counts"]).sum(axis=-1)                           # (..., P)
    return a[..., :, None] * s[..., None, :] + log_t[..., terms["term"]] + logw[:, None]


def marginal_twopl_inputs(data: ItemData, priors: dict[str, float]) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the marginal 2PL model, by name: the patterns and terms of
    :func:`twopl_terms`, each padded (weight 0) to a power of two so a compiled model serves
    data of similar size; ``term_total`` / ``term_task`` end with the 2 x tasks extreme
    slots (slot 2k: total 0 in task k, 2k + 1: every response right)."""
    tt = twopl_terms(data)
    n_t, n_p = padded_terms(tt.n_regular), padded_terms(len(tt.weight))
    pad_t, pad_p = n_t - tt.n_regular, n_p - len(tt.weight)
    term = np.where(tt.term >= tt.n_regular, tt.term + pad_t, tt.term)
    n_k = data.shape[1]
    ext_task = np.repeat(np.arange(n_k), 2)
    ext_total = np.where(np.arange(2 * n_k) % 2 == 1, tt.epochs.sum(axis=0)[ext_task], 0.0)
    return ({"pattern_counts": np.vstack([tt.counts, np.zeros((pad_p, tt.counts.shape[1]))]),
             "pattern_task": np.r_[tt.task, np.zeros(pad_p, dtype=np.int64)],
             "pattern_term": np.r_[term, np.zeros(pad_p, dtype=np.int64)],
             "pattern_weight": np.r_[tt.weight, np.zeros(pad_p)],
             "term_total": np.r_[tt.total, np.zeros(pad_t), ext_total],
             "term_task": np.r_[tt.term_task, np.zeros(pad_t, dtype=np.int64), ext_task],
             "epochs": tt.epochs, "u_step": np.asarray(u_step(tt.epochs))}
            | {f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()})


def u_step(epochs: np.ndarray) -> float:
    """The largest step of the marginal 2PL's u = log a rule on the u scale
    (``_twopl_grid.u_rule``), from the most responses an item has, N = max over tasks of
    sum_m epochs_mk: ``U_STEP`` / sqrt(N).

    An item's u-integrand has a width of order 1 / sqrt(its information about log a), which
    is at most ~0.44 per response. The constant was measured at 20 models x 5 epochs (N =
    100, step 0.25) over 2,000 items against a rule of step 0.05: at sigma_logdisc 1.0, 1.5
    and 2.0 the log-density is within 1e-4 and its derivative in sigma_logdisc within 7e-4
    (the curvature is ~10^3); step 0.35 was within 5e-4 and 2.4e-2, step 0.5 0.04-0.3 and
    0.4-1.5 off, and the former 10-node Gauss-Hermite rule in z 100-450 and 450-930 off
    (``tests/test_item_model_twopl_grid.py -k many_responses``).

    Examples
    --------
    >>> u_step(np.full((20, 1), 5.0))
    0.25
    """
    most = float(np.max(np.asarray(epochs, dtype=np.float64).sum(axis=0), initial=1.0))
    return U_STEP / float(np.sqrt(max(most, 1.0)))


def build_marginal_twopl_model(data: ItemData, priors: dict[str, float] | None = None
                               ) -> pm.Model:
    """The 2PL with (log a_i, b_i) integrated out: free variables as the marginal 1PL's plus
    ``sigma_logdisc`` (the effects and model deviations centred as the 1PL's,
    ``_model.centring``); the log-density sums, over the distinct (task, count
    vector) patterns weighted by their items,

        log sum_g w_g exp(a_g S_p + log T(a_g, Y_p)),  a_g = exp(sigma_logdisc z_g),

    with (z_g, w_g) the trapezoid rule of ``_twopl_grid.u_rule`` (its step on the u scale
    from the data, :func:`u_step`) and T the b-integral of the pattern's (task, total) term
    on one trapezoid grid per (u-node, task), value and gradient in one numba kernel
    (``_twopl_grid``)."""
    import pymc as pm

    from evaluq.item_model._twopl_grid import twopl_grid_loglik

    inputs = marginal_twopl_inputs(data, resolve_priors_2pl(data, priors))
    with pm.Model(coords={MODEL: list(map(str, data.models))}) as pm_model:
        x = {name: pm.Data(name, value) for name, value in inputs.items()}
        eta = _effects(x, data, centring=centring(data))
        sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
        sigma_logdisc = pm.HalfNormal("sigma_logdisc", x["prior_sigma_logdisc_sigma"])
        pm.Potential("item_loglik", twopl_grid_loglik(
            eta, sigma_item, sigma_logdisc, x["epochs"], x["term_task"], x["term_total"],
            x["pattern_counts"], x["pattern_task"], x["pattern_term"], x["pattern_weight"],
            x["u_step"]))
    return pm_model


def sample_marginal_twopl(data: ItemData, priors: dict[str, float], draws: int, tune: int,
                          chains: int, seed: int, target_accept: float
                          ) -> tuple[xr.DataTree, float, float]:
    """Sample the marginal 2PL with nutpie (compiled once per shape: models, tasks, padded
    patterns and terms); the raw draws, compile and sampling seconds."""
    import nutpie

    inputs = marginal_twopl_inputs(data, priors)
    key = ("marginal", *data.shape, len(inputs["pattern_weight"]), len(inputs["term_total"]),
           centring(data), *structure_flags())
    compile_s = 0.0
    if key not in _COMPILED_2PL:
        start = time.perf_counter()
        _COMPILED_2PL[key] = compile_pymc_model(build_marginal_twopl_model(data))[0]
        compile_s = time.perf_counter() - start
    compiled = _COMPILED_2PL[key]
    known = {var.name for var in compiled.shared_var_keys}
    start = time.perf_counter()
    raw = nutpie.sample(with_data(compiled, **{k: v for k, v in inputs.items() if k in known}),
                        draws=draws, tune=tune, chains=chains, cores=chains, seed=seed,
                        progress_bar=False, save_warmup=False, target_accept=target_accept)
    return raw, compile_s, time.perf_counter() - start


def _numpy_terms(data: ItemData) -> tuple[TwoPLTerms, dict[str, Any]]:
    tt = twopl_terms(data)
    return tt, {"term_task": tt.term_task, "total": tt.total, "epochs": tt.epochs,
                "task": tt.task, "counts": tt.counts, "term": tt.term,
                "n_tasks": data.shape[1]}


def conditional_item_draws(data: ItemData, eta: np.ndarray, sigma: np.ndarray,
                           sigma_logdisc: np.ndarray, gen: np.random.Generator
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(a_i, b_i) (draw, item) from their exact conditional given each draw's parameters,
    discretised on fine rules (``_twopl_grid.conditional_draws``, numba).

    u_i = log a_i first, on the sampler's trapezoid rule at the draw's sigma_logdisc
    (``_twopl_grid.u_rule``, step :func:`u_step`): node g with probability prop. to
    w_g exp(a_g S_p + log T(a_g, Y_p)); then b_i given a_g, on that node's b-grid of the
    item's task (spacing at most the narrowest term integrand's SD), with probability prop.
    to the integrand of the item's (task, total) term: given a, b depends on the item's
    responses only through its total. Both are grid values (the trapezoid rule's discrete
    distribution, whose moments are those of the continuous conditional up to the rules'
    error). Each chunk of draws is split over two threads (the kernel releases the GIL); its
    uniforms are drawn first, in draw order, so the draws do not depend on the threads."""
    from evaluq.item_model._twopl_grid import conditional_draws

    tt = twopl_terms(data)
    n_k = data.shape[1]
    ext_task = np.repeat(np.arange(n_k), 2)
    ext_total = np.where(np.arange(2 * n_k) % 2 == 1, tt.epochs.sum(axis=0)[ext_task], 0.0)
    step_u = u_step(tt.epochs)
    n_i = len(tt.item_pattern)
    kernel: Any = conditional_draws
    step = max(1, CHUNK_CELLS // (2 * n_i))
    a_out, b_out = np.empty((len(eta), n_i)), np.empty((len(eta), n_i))
    terms = (np.r_[tt.term_task, ext_task].astype(np.int64), np.r_[tt.total, ext_total],
             tt.counts, tt.task, tt.term, step_u, tt.item_pattern.astype(np.int64))

    def run(part: slice, uniform: np.ndarray) -> None:         # the kernel releases the GIL
        a_out[part], b_out[part] = kernel(
            np.ascontiguousarray(eta[part], dtype=np.float64),
            np.ascontiguousarray(sigma[part], dtype=np.float64),
            np.ascontiguousarray(sigma_logdisc[part], dtype=np.float64), tt.epochs,
            *terms, uniform)

    workers = max(1, min(2, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for start in range(0, len(eta), step):                         # chunks of draws
            stop = min(start + step, len(eta))
            uniform = gen.random((stop - start, n_i, 2))               # in draw order
            cuts = list(pairwise(np.linspace(start, stop, workers + 1).astype(int)))
            list(pool.map(run, [slice(lo, hi) for lo, hi in cuts],
                          [uniform[lo - start:hi - start] for lo, hi in cuts]))
    return a_out, b_out

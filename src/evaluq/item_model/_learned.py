"""The family entry of the binomial 1PL with a learned item distribution (issue 36;
``_item_density`` holds the density): the PyMC model compiled once per shape and sampled by
nutpie, the posterior group (both scopes under g, the shape's draws ``item_shape``
(knot)), the pointwise log-likelihood (trapezoid over g's support), and the
``_families.Family`` that ``ItemFit`` uses when ``config["item_distribution"] ==
"learned"``. Nothing but ``_fit`` imports it (so the density module stays import-free).
"""

from __future__ import annotations

import time
from typing import Any, Final

import numpy as np
import xarray as xr

from evaluq._dims import BENCHMARK_SCORE, ITEM, MODEL, NEW_ITEMS_SCORE, TASK
from evaluq._nutpie_cache import compile_pymc_model, with_data
from evaluq.item_model._families import MARGINAL, Family
from evaluq.item_model._item_density import (
    KNOT,
    KNOTS,
    Z_FINE,
    Z_STEP,
    fine_weights,
    log_density_draws,
    normal_log_density,
    split_priors,
)
from evaluq.item_model._marginal import LOGLIK_NAMES, SAMPLE_DIMS, SAMPLED
from evaluq.item_model._model import (
    build_model,
    centring,
    model_inputs,
    padded_terms,
    resolve_priors,
    structure_flags,
)
from evaluq.item_model._posterior import (
    conditional_draws,
    flat_posterior,
    icc_draws,
    linear_predictor,
    new_items_scores,
)
from evaluq.item_model._quadrature import log_integrand

SHAPE_SAMPLED: Final = ("item_shape",)
ADAPTATION: Final = "low_rank"
"""nutpie's mass-matrix adaptation for the learned distribution: a low-rank modified
diagonal. The shape's coefficients are correlated in the posterior (squashed by tanh and
coupled through the standardisation m, v, C), which a diagonal mass matrix cannot rescale:
with the shape's former learned scale, on 10 models x 1,000 bimodal items x 3 epochs the
leapfrog steps per draw were 48.5 (diag) against 17.5 (low rank; the normal fit 14.6), on a
normal population 23.7 against 15.5 (normal fit 13.8); ``benchmarks/bench_item_density.py``."""
TARGET_ACCEPT_LEARNED: Final = 0.95
"""nutpie's target acceptance for the learned distribution (the other binomial fits take
``_marginal.TARGET_ACCEPT``, 0.9). Over 6 default fits on 10 models x 1,000 items x 3
epochs, bimodal / normal items: 15 / 4 divergences at 0.9, 1 / 2 at 0.95. (With the
shape's former learned scale, whose ridge this fixed scale removed: 31 / 19 at 0.9, 5 / 2 at
0.95; more tuning did not help, 25 over 4 with ``tune=2000``.)"""
LOGLIK_CHUNK: Final = 16
"""Draws per block of the pointwise log-likelihood."""
_COMPILED: dict[tuple[Any, ...], Any] = {}
"""nutpie models of the learned distribution compiled in this process, by shape."""


def compiled_learned(data: Any) -> tuple[Any, float]:
    """The nutpie model (learned item distribution) for the data's shape; compile seconds."""


    key = (*data.shape, padded_terms(len(data.term_total)), centring(data),
           *structure_flags())
    if key in _COMPILED:
        return _COMPILED[key], 0.0
    start = time.perf_counter()
    _COMPILED[key] = compile_pymc_model(build_model(data, item_distribution="learned"))[0]
    return _COMPILED[key], time.perf_counter() - start


def sample_learned(data: Any, priors: dict[str, float], draws: int, tune: int, chains: int,
                   seed: int) -> tuple[Any, float, float]:
    """nutpie's draws of the binomial 1PL with the learned item distribution."""



    import nutpie

    compiled, compile_s = compiled_learned(data)
    start = time.perf_counter()
    known = {var.name for var in compiled.shared_var_keys}
    inputs = {k: v for k, v in model_inputs(data, priors).items() if k in known}
    raw = nutpie.sample(with_data(compiled, **inputs), draws=draws, tune=tune, chains=chains,
                        cores=chains, seed=seed, progress_bar=False, save_warmup=False,
                        target_accept=TARGET_ACCEPT_LEARNED, adaptation=ADAPTATION)
    return raw, compile_s, time.perf_counter() - start


def learned_posterior(data: Any, raw: Any, post_seed: int) -> tuple[Any, Any]:
    """The posterior group (as ``_marginal.marginal_posterior``'s, with ``item_shape``
    (knot)) and the item effects' summary, every draw under g."""


    post = raw["posterior"].to_dataset()
    n_chain = post.sizes["chain"]
    flat = flat_posterior(post, SAMPLED + SHAPE_SAMPLED)
    eta = linear_predictor(data, flat)
    sigma, shape = flat["sigma_item"], flat["item_shape"]
    cond = conditional_draws(data, eta, sigma, np.random.default_rng(post_seed), shape)
    icc = icc_draws(data, eta, sigma, shape)

    def unflat(values: np.ndarray) -> np.ndarray:
        return values.reshape(n_chain, -1, *values.shape[1:])

    dims = {"dev": (MODEL,), "task_effect": (TASK,), "item_shape": (KNOT,)}
    out = xr.Dataset({name: (SAMPLE_DIMS + (() if flat[name].ndim == 1 else dims.get(
        name, (MODEL, TASK))), unflat(flat[name])) for name in flat})
    cd = (*SAMPLE_DIMS, MODEL)
    out[NEW_ITEMS_SCORE] = (cd, unflat(new_items_scores(data, eta, sigma, shape)))
    out[BENCHMARK_SCORE] = (cd, unflat(cond["benchmark"]))
    out["eta"] = ((*cd, TASK), unflat(eta))
    for name, values in icc.items():
        out[name] = (cd, unflat(values))
    out = out.assign_coords({MODEL: data.models, TASK: data.tasks, KNOT: KNOTS})
    items = xr.Dataset({"item_effect_mean": (ITEM, cond["item_mean"]),
                        "item_effect_sd": (ITEM, cond["item_sd"]),
                        TASK: (ITEM, np.asarray(data.tasks)[np.asarray(data.item_task)])},
                       coords={ITEM: data.item_labels})
    return out, items


def term_loglik_learned(eta_t: np.ndarray, n_t: np.ndarray, total: np.ndarray,
                        sigma: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """log int g(b) exp(-b Y - sum_m n softplus(eta - b)) db per (draw, term): trapezoid on
    the nodes b = s (z - m) / v, z every other point of ``Z_FINE`` (the whole support of g;
    spacing 0.05 s / v); ``eta_t``, ``n_t`` (d, term, model)."""
    from scipy.special import logsumexp


    _, m, v = fine_weights(shape)
    z = Z_FINE[::2]
    b = sigma[:, None] * (z - m[:, None]) / v[:, None]                       # (d, Z)
    b = np.broadcast_to(b[:, None, :], (len(b), eta_t.shape[1], len(z)))
    logd = log_integrand(eta_t, n_t, total, sigma, b) + log_density_draws(b, sigma, shape) \
        - normal_log_density(b, sigma)
    return logsumexp(logd, axis=-1) + np.log(2 * Z_STEP * sigma / v)[:, None]


def learned_pointwise_loglik(fit: Any, items: Any) -> np.ndarray:
    """(draw, item) log-likelihood of each item's response pattern, b integrated over g."""

    flat = flat_posterior(fit.posterior, (*LOGLIK_NAMES, "item_shape"))
    eta = linear_predictor(fit.data, flat)                                    # (D, M, K)
    task = np.asarray(items.item_task)
    per = np.asarray(items.per_item)                                          # (M, I)
    t = items.term_task
    out = np.empty((len(eta), per.shape[1]))
    for start in range(0, len(eta), LOGLIK_CHUNK):                            # chunks of draws
        part = slice(start, start + LOGLIK_CHUNK)
        e = eta[part]
        lin = np.einsum("dmi,mi->di", e[:, :, task], per)
        eta_t = np.moveaxis(e[:, :, t], 1, 2)
        terms = term_loglik_learned(eta_t, np.broadcast_to(items.epochs[:, t].T, eta_t.shape),
                                    items.term_total, flat["sigma_item"][part],
                                    flat["item_shape"][part])
        out[part] = lin + terms[:, np.asarray(items.item_term)] + items.log_binom
    return out


def resolve_learned(data: Any, priors: Any) -> dict[str, float]:
    """The binomial family's priors with the shape's (``shape_sigma``)."""

    rest, shape = split_priors(priors, True)
    return resolve_priors(data, rest) | shape


def learned_family() -> Any:
    """The ``_families.Family`` of the binomial 1PL with the learned item distribution."""

    return Family("learned", resolve_learned, sample_learned, learned_posterior,
                  MARGINAL.predictive_checks, MARGINAL.compare_frequentist,
                  MARGINAL.variance_components, learned_pointwise_loglik)

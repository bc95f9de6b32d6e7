"""The marginal families' fit: sampling and posterior of the binomial (and Bernoulli) and the
beta-binomial families, whose items are integrated out of the log-density (``_model``,
``_betabinomial``); the 2PL (``_twopl``) and the ordinal family (``_ordinal``) have their own.

The pieces of :class:`evaluq.item_model._families.Family` for these families: the PyMC model
compiled once per shape (across processes through ``_nutpie_cache``), sampled by nutpie, then
the posterior group with both scopes' scores and the item effects from their exact
conditional, and the pointwise log-likelihood of one item's response pattern (PSIS-LOO).
"""

from __future__ import annotations

import time
from typing import Any, Final

import numpy as np
import xarray as xr

from evaluq._dims import BENCHMARK_SCORE, ITEM, MODEL, NEW_ITEMS_SCORE, POSTERIOR_SAMPLE_DIMS, TASK
from evaluq._nutpie_cache import compile_pymc_model, with_data
from evaluq.item_model._data import FittedDraws, ItemData
from evaluq.item_model._model import (
    build_model,
    centring,
    model_inputs,
    padded_terms,
    resolve_priors,
    structure_flags,
    term_loglik,
)
from evaluq.item_model._posterior import (
    conditional_draws,
    flat_posterior,
    icc_draws,
    linear_predictor,
    new_items_scores,
)

TARGET_ACCEPT: Final = 0.9
"""NUTS's target acceptance (nutpie's default 0.8 left a few divergences with three tasks)."""
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
SAMPLED: Final = ("alpha", "dev", "tau_dev", "sigma_item", "sigma_task", "task_effect",
                  "sigma_model_x_task", "model_x_task", "run_drift")
LOGLIK_NAMES: Final = ("alpha", "dev", "sigma_item", "task_effect", "model_x_task",
                       "sigma_task", "sigma_model_x_task", "run_drift")
CHUNK: Final = 100
"""Draws per block of the pointwise log-likelihood."""
_COMPILED: dict[tuple[Any, ...], Any] = {}
"""nutpie models compiled in this process, by (models, tasks, padded terms, items, family,
centred effects): refits of data of the same shape and family reuse them."""


def model_parts(data: ItemData) -> tuple[Any, Any, Any]:
    """The model builder, its inputs and its priors for the data's family."""
    if data.family == "beta-binomial":
        from evaluq.item_model import _betabinomial as bb

        return bb.build_model, bb.model_inputs, bb.resolve_priors
    return build_model, model_inputs, resolve_priors


def _padded_pairs(data: ItemData) -> int:
    """The beta-binomial's padded count of model-pair rows (0 for the other families)."""
    if data.family != "beta-binomial":
        return 0
    from evaluq.item_model._betabinomial import padded_pairs

    return padded_pairs(data)


def compiled_nutpie(data: ItemData) -> tuple[Any, float]:
    """The nutpie model for the data's shape, compiled on first use; compile seconds."""
    n_m, n_k = data.shape
    key = (n_m, n_k, padded_terms(len(data.term_total)) if data.has_items else 0,
           data.has_items, data.family == "beta-binomial",
           int(data.epochs.max()) if data.family == "beta-binomial" else 0,
           _padded_pairs(data),
           centring(data), *structure_flags())
    if key in _COMPILED:
        return _COMPILED[key], 0.0
    start = time.perf_counter()
    _COMPILED[key] = compile_pymc_model(model_parts(data)[0](data))[0]  # across processes
    return _COMPILED[key], time.perf_counter() - start


def sample_marginal(data: ItemData, priors: dict[str, float], draws: int, tune: int, chains: int,
            seed: int) -> tuple[xr.DataTree, float, float]:
    import nutpie

    compiled, compile_s = compiled_nutpie(data)
    start = time.perf_counter()
    known = {var.name for var in compiled.shared_var_keys}
    inputs = {k: v for k, v in model_parts(data)[1](data, priors).items() if k in known}
    raw = nutpie.sample(with_data(compiled, **inputs), draws=draws,
                        tune=tune, chains=chains, cores=chains, seed=seed, progress_bar=False,
                        save_warmup=False, target_accept=TARGET_ACCEPT)
    return raw, compile_s, time.perf_counter() - start


def _unflat(values: np.ndarray, n_chain: int) -> np.ndarray:
    return values.reshape(n_chain, -1, *values.shape[1:])


def marginal_posterior(data: ItemData, raw: xr.DataTree, post_seed: int
               ) -> tuple[xr.Dataset, xr.Dataset]:
    """The posterior group (sampled variables, eta, both scores, variance components) and
    the item effects' posterior summary."""
    post = raw["posterior"].to_dataset()
    n_chain = post.sizes["chain"]
    flat = flat_posterior(post, SAMPLED)
    eta = linear_predictor(data, flat)
    sigma = flat.get("sigma_item")
    if "run_drift" in flat:
        from evaluq.item_model import _betabinomial as bb

        gen = np.random.default_rng(post_seed)
        cond = bb.conditional_draws(data, eta, flat["sigma_item"], flat["run_drift"], gen)
        icc = bb.icc_draws(data, eta, flat["sigma_item"], flat["run_drift"])
    else:
        cond = conditional_draws(data, eta, sigma, np.random.default_rng(post_seed))
        icc = icc_draws(data, eta, sigma)
    cd = (*SAMPLE_DIMS, MODEL)
    out = xr.Dataset({name: (SAMPLE_DIMS + (() if flat[name].ndim == 1 else (
        MODEL,) if name == "dev" else (TASK,) if name == "task_effect" else (MODEL, TASK)),
        _unflat(flat[name], n_chain)) for name in flat})
    out[NEW_ITEMS_SCORE] = (cd, _unflat(new_items_scores(data, eta, sigma), n_chain))
    out[BENCHMARK_SCORE] = (cd, _unflat(cond["benchmark"], n_chain))
    out["eta"] = ((*cd, TASK), _unflat(eta, n_chain))
    for name, values in icc.items():
        out[name] = (cd, _unflat(values, n_chain))
    out = out.assign_coords({MODEL: data.models, TASK: data.tasks})
    items = xr.Dataset()
    if "item_mean" in cond:
        items = xr.Dataset({"item_effect_mean": (ITEM, cond["item_mean"]),
                            "item_effect_sd": (ITEM, cond["item_sd"]),
                            TASK: (ITEM, np.asarray(data.tasks)[np.asarray(data.item_task)])},
                           coords={ITEM: data.item_labels})
    return out, items


def marginal_pointwise_loglik(fit: FittedDraws, items: Any) -> np.ndarray:
    """(draw, item) log-likelihood of each item's response pattern (``items``: the ItemData
    holding the per-item counts), the item effect integrated out at each draw."""
    flat = flat_posterior(fit.posterior, LOGLIK_NAMES)
    eta = linear_predictor(fit.data, flat)                            # (D, M, K)
    if "run_drift" in flat:
        from evaluq.item_model._betabinomial import pointwise_loglik as bb_pointwise

        return bb_pointwise(flat, eta, items)
    task = np.asarray(items.item_task)
    per = np.asarray(items.per_item)                                  # (M, I)
    n = items.epochs[:, task]
    out = np.empty((len(eta), per.shape[1]))
    for start in range(0, len(eta), CHUNK):                           # chunks of draws
        e = eta[start:start + CHUNK]
        lin = np.einsum("dmi,mi->di", e[:, :, task], per)
        if fit.data.has_items:
            t = items.term_task
            terms = term_loglik(np.moveaxis(e[:, :, t], 1, 2),
                                np.broadcast_to(items.epochs[:, t].T, (len(e), len(t),
                                                                       e.shape[1])),
                                items.term_total, flat["sigma_item"][start:start + CHUNK])
            rest = terms[:, np.asarray(items.item_term)]
        else:
            rest = -np.einsum("dmi,mi->di", np.logaddexp(0.0, e[:, :, task]), n)
        out[start:start + CHUNK] = lin + rest + items.log_binom
    return out

"""The beta-binomial family: epochs overdispersed by run-to-run drift, items integrated out.

For model m and item i of task k with n_km epochs and y_mi correct answers,

    y_mi ~ BetaBinomial(n_km, p_mi phi, (1 - p_mi) phi),   p_mi = expit(eta_mk - b_i),
    b_i ~ N(0, sigma_item^2),   rho = 1 / (1 + phi) ~ Beta(1, run_drift_beta),

with eta_mk as in the binomial family. rho (``run_drift``) is the correlation of two epochs
of one (model, item) given the item: each (model, item) draws its own success probability
q ~ Beta(p phi, (1 - p) phi) that all its epochs share. rho -> 0 is the binomial family.

The item total is no longer sufficient, so the terms are the distinct (task, response-count
pattern over models) of the items, weighted by how many items share them. Each term's
integral over b is computed by adaptive Gauss-Hermite quadrature (``N_NODES`` nodes),
centred and scaled by the mode and curvature of the binomial quasi-likelihood with each
epoch count divided by its design effect 1 + (n - 1) rho (the beta-binomial's variance
inflation), a few Newton steps from the item's accuracy. The log beta functions are
differences of ``gammaln`` (scipy / pytensor): log BB(y | n, a, c) - log C(n, y) =
lgamma(y + a) - lgamma(a) + lgamma(n - y + c) - lgamma(c) + lgamma(phi) - lgamma(n + phi).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np
from scipy.special import expit, gammaln

from evaluq._backend import array_module, sigmoid, softplus
from evaluq._dims import MODEL
from evaluq._fits import merge_priors
from evaluq.item_model._model import PRIOR_KEYS as BINOMIAL_PRIOR_KEYS
from evaluq.item_model._model import PRIOR_TEXT as BINOMIAL_PRIOR_TEXT
from evaluq.item_model._model import _effects, default_priors, padded_terms, term_mode
from evaluq.item_model._posterior import (
    CHUNK_CELLS,
    GRID,
    GRID_HALF_WIDTH,
    prior_moments,
    task_weights,
)

if TYPE_CHECKING:
    import pymc as pm

    from evaluq.item_model._data import ItemData

N_NODES: Final = 31
RISING_MAX: Final = 16
"""Up to this many epochs the log beta functions are sums of logs (rising factorials)."""
FAMILY: Final = "beta-binomial"
PRIOR_KEYS: Final = (*BINOMIAL_PRIOR_KEYS, "run_drift_beta")
PRIOR_TEXT: Final = BINOMIAL_PRIOR_TEXT | {
    "run_drift_beta": "run drift rho = 1 / (1 + phi) ~ Beta(1, run_drift_beta) (default 5: "
                      "density largest at rho = 0, no drift; prior mean 1/6, 95% below 0.45)",
}
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(N_NODES)


def resolve_priors(data: ItemData, priors: dict[str, float] | None) -> dict[str, float]:
    """The binomial family's default priors plus ``run_drift_beta`` (see ``PRIOR_TEXT``),
    updated with the user's; unknown keys and bad values raise."""
    return merge_priors(default_priors(data) | {"run_drift_beta": 5.0}, priors, PRIOR_KEYS)


# --- the log-density ----------------------------------------------------------------------------

def _trail(lib: Any, value: Any, k: int) -> Any:
    """A per-draw numpy array (d,) with ``k`` trailing axes; pytensor scalars as they are."""
    if lib is np and np.ndim(value):
        return np.reshape(value, np.shape(value) + (1,) * k)
    return value


def log_bb_kernel(lib: Any, x: Any, n: Any, y: Any, phi: Any, n_max: int) -> Any:
    """log BetaBinomial(y | n, p phi, (1 - p) phi) - log C(n, y) with p = expit(x).

    With at most ``RISING_MAX`` epochs, as rising factorials (exact, no cancellation at large
    phi, a cheap gradient): lgamma(y + a) - lgamma(a) = sum_{j < y} log(a + j), the j = 0
    term as log(phi) + log expit(x) (finite for any x); with more epochs, as differences of
    ``gammaln``.
    """
    a, c = sigmoid(lib, x) * phi, sigmoid(lib, -x) * phi
    if n_max > RISING_MAX:
        lg = gammaln if lib is np else lib.gammaln
        return (lg(y + a) - lg(a) + lg(n - y + c) - lg(c)) + (lg(phi) - lg(n + phi))
    log_phi = lib.log(phi)
    out = (y > 0) * (log_phi - softplus(lib, -x)) + (n - y > 0) * (log_phi - softplus(lib, x))
    out = out - (n > 0) * log_phi
    for j in range(1, n_max):                   # a few epochs: a short static loop
        out = out + (y > j) * lib.log(a + j) + (n - y > j) * lib.log(c + j) \
            - (n > j) * lib.log(phi + j)
    return out


def log_integrand(eta_t: Any, n_t: Any, y_t: Any, rho: Any, sigma: Any, b: Any,
                  n_max: int | None = None) -> Any:
    """log N(b; 0, s^2) + sum_m [log BB(y | n, p phi, (1 - p) phi) - log C(n, y)] at points
    ``b`` (..., term, node); ``eta_t`` (..., term, model), ``n_t`` / ``y_t`` (term, model);
    ``n_max`` the largest epoch count (from ``n_t`` when numpy)."""
    lib = array_module(eta_t, n_t, y_t, rho, sigma, b)
    n_max = int(np.max(n_t)) if n_max is None else n_max
    phi = _trail(lib, 1.0 / rho - 1.0, 3)
    s = _trail(lib, sigma, 2)
    x = eta_t[..., None] - b[..., None, :]                               # (..., T, M, G)
    kern = log_bb_kernel(lib, x, n_t[..., None], y_t[..., None], phi, n_max).sum(axis=-2)
    return kern - 0.5 * (b / s) ** 2 - lib.log(s) - 0.5 * np.log(2 * np.pi)


def centre(eta_t: Any, n_t: Any, y_t: Any, rho: Any, sigma: Any) -> tuple[Any, Any]:
    """Mode and curvature SD of the binomial quasi-likelihood with the epoch counts divided
    by their design effect 1 + (n - 1) rho (the centre and scale of the quadrature)."""
    lib = array_module(eta_t, n_t, y_t, rho, sigma)
    shrink = 1.0 / (1.0 + (n_t - 1.0) * _trail(lib, rho, 2))
    n_eff = n_t * shrink
    if lib is np:
        n_eff = np.broadcast_to(n_eff, np.shape(eta_t))
    return term_mode(eta_t, n_eff, (y_t * shrink).sum(axis=-1), sigma)


def term_loglik(eta_t: Any, n_t: Any, y_t: Any, rho: Any, sigma: Any,
                n_max: int | None = None) -> Any:
    """log of each term's integral over b (adaptive Gauss-Hermite), without log C(n, y)."""
    lib = array_module(eta_t, n_t, y_t, rho, sigma)
    mode, sd = centre(eta_t, n_t, y_t, rho, sigma)
    if lib is not np:   # the rule's value does not depend on its centre: no gradient there
        from pytensor.gradient import disconnected_grad

        mode, sd = disconnected_grad(mode), disconnected_grad(sd)
    b = mode[..., None] + np.sqrt(2.0) * sd[..., None] * _NODES
    vals = log_integrand(eta_t, n_t, y_t, rho, sigma, b, n_max) + np.log(_WEIGHTS) + _NODES**2
    top = vals.max(axis=-1)
    lse = top + lib.log(lib.exp(vals - top[..., None]).sum(axis=-1))
    return lse + lib.log(np.sqrt(2.0) * sd)


# --- the PyMC model -----------------------------------------------------------------------------

def model_inputs(data: ItemData, priors: dict[str, float]) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the marginal beta-binomial model, by name (terms padded
    with weight 0 to a power of two)."""
    counts = np.asarray(data.term_counts)
    size = padded_terms(len(counts))
    pad = size - len(counts)
    task = np.r_[data.term_task, np.zeros(pad, dtype=np.int64)]
    return {"term_counts": np.r_[counts, np.zeros((pad, counts.shape[1]))],
            "term_epochs": data.epochs[:, task].T, "term_task": task,
            "term_weight": np.r_[data.term_weight, np.zeros(pad)]} | {
        f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()}


def max_epochs(data: ItemData) -> int:
    """The largest epoch count (the compiled model's rising-factorial length)."""
    return int(np.max(data.epochs))


def build_model(data: ItemData, priors: dict[str, float] | None = None) -> pm.Model:
    """The marginal beta-binomial item model: free variables those of the binomial family
    plus ``run_drift`` (rho); every array a ``pm.Data`` (refits reuse a compiled model)."""
    import pymc as pm

    inputs = model_inputs(data, resolve_priors(data, priors))
    with pm.Model(coords={MODEL: list(map(str, data.models))}) as pm_model:
        x = {name: pm.Data(name, value) for name, value in inputs.items()}
        eta = _effects(x, data)
        sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
        rho = pm.Beta("run_drift", 1.0, x["prior_run_drift_beta"])
        terms = term_loglik(eta[:, x["term_task"]].T, x["term_epochs"], x["term_counts"],
                            rho, sigma_item, n_max=max_epochs(data))
        pm.Potential("item_loglik", (x["term_weight"] * terms).sum())
    return pm_model


# --- after sampling -----------------------------------------------------------------------------

def _grid(data: ItemData, eta: np.ndarray, sigma: np.ndarray, rho: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """eta per term (d, T, M), the grid of b (d, T, G) and each cell's conditional mass."""
    task = data.term_task
    eta_t = np.moveaxis(eta[:, :, task], 1, 2)
    n_t, y_t = data.epochs[:, task].T, np.asarray(data.term_counts)
    mode, sd = centre(eta_t, n_t, y_t, rho, sigma)
    z = (np.arange(GRID) + 0.5) / GRID * 2 * GRID_HALF_WIDTH - GRID_HALF_WIDTH
    b = mode[..., None] + sd[..., None] * z
    logd = log_integrand(eta_t, n_t, y_t, rho, sigma, b)
    prob = np.exp(logd - logd.max(axis=-1, keepdims=True))
    return eta_t, b, prob / prob.sum(axis=-1, keepdims=True)


def conditional_draws(data: ItemData, eta: np.ndarray, sigma: np.ndarray, rho: np.ndarray,
                      gen: np.random.Generator) -> dict[str, np.ndarray]:
    """Benchmark-scope scores (draw, model): the items of each term spread over the cells of
    their exact conditional given the pattern by one multinomial draw per posterior draw;
    and the item effects' posterior mean and SD (item,)."""
    n_d, n_t, n_m = eta.shape[0], len(data.term_weight), data.shape[0]
    step = max(1, CHUNK_CELLS // (n_t * GRID * n_m))
    sums, cmean, cvar = np.empty((n_d, n_m)), np.empty((n_d, n_t)), np.empty((n_d, n_t))
    for start in range(0, n_d, step):                                 # chunks, not draws
        part = slice(start, start + step)
        eta_t, b, prob = _grid(data, eta[part], sigma[part], rho[part])
        counts = gen.multinomial(data.term_weight.astype(np.int64), prob)
        sums[part] = np.einsum("dtg,dtgm->dm", counts, expit(eta_t[:, :, None, :]
                                                               - b[..., None]))
        cmean[part] = (prob * b).sum(axis=-1)
        cvar[part] = (prob * b**2).sum(axis=-1) - cmean[part] ** 2
    term_sd = np.sqrt(cvar.mean(axis=0) + cmean.var(axis=0))
    item_term = np.asarray(data.item_term)
    return {"benchmark": sums / data.n_items.sum(), "item_mean": cmean.mean(0)[item_term],
            "item_sd": term_sd[item_term]}


def icc_draws(data: ItemData, eta: np.ndarray, sigma: np.ndarray, rho: np.ndarray
              ) -> dict[str, np.ndarray]:
    """ICC of two epochs of one item, design effect and effective number of responses.

    Over a new item of the benchmark's tasks, p = expit(eta - b): Cov(y_e, y_e') = Var(p) +
    rho E[p (1 - p)] and Var(y_e) = E p (1 - E p), so ICC = (Var p + rho (E p - E p^2)) /
    (E p (1 - E p)); deff = 1 + (E - 1) ICC; n_eff = I E / deff.
    """
    m1, m2 = prior_moments(eta, sigma)
    w = task_weights(data)
    mean, second = m1 @ w, m2 @ w
    icc = (second - mean**2 + rho[:, None] * (mean - second)) / (mean * (1.0 - mean))
    epochs = data.epochs.max(axis=1)
    deff = 1.0 + (epochs - 1.0) * icc
    return {"icc_epochs": icc, "design_effect": deff,
            "effective_n": data.n_items.sum() * epochs / deff}


def posterior_items(data: ItemData, eta: np.ndarray, sigma: float, rho: float,
                    gen: np.random.Generator) -> np.ndarray:
    """One draw of every item's effect from its exact conditional (eta: model x task)."""
    _, b, prob = _grid(data, eta[None], np.array([sigma]), np.array([rho]))
    cdf = np.cumsum(prob[0], axis=-1)
    item_term = np.asarray(data.item_term)
    cell = (cdf[item_term] < gen.random(len(item_term))[:, None]).sum(axis=1).clip(0, GRID - 1)
    width = b[0][:, 1] - b[0][:, 0]
    return b[0][item_term, cell] + (gen.random(len(item_term)) - 0.5) * width[item_term]


def replicate_counts(n: np.ndarray, p: np.ndarray, rho: float, gen: np.random.Generator
                     ) -> np.ndarray:
    """Beta-binomial counts: q ~ Beta(p phi, (1 - p) phi) per (model, item), y ~ Bin(n, q)."""
    phi = 1.0 / rho - 1.0
    q = gen.beta(np.clip(p * phi, 1e-12, None), np.clip((1.0 - p) * phi, 1e-12, None))
    return gen.binomial(n.astype(np.int64), q)


def pointwise_loglik(flat: dict[str, np.ndarray], eta: np.ndarray, items: ItemData,
                     chunk: int = 100) -> np.ndarray:
    """(draw, item) log-likelihood of each item's whole response pattern, b integrated out
    (the distinct (task, pattern) rows of ``items.per_item`` computed once each)."""
    task_of = np.asarray(items.item_task)
    per = np.asarray(items.per_item)
    rows = np.column_stack([task_of, per.T])
    uniq, inverse = np.unique(rows, axis=0, return_inverse=True)
    t_task, y_t = uniq[:, 0].astype(np.int64), uniq[:, 1:].astype(np.float64)
    n_t = items.epochs[:, t_task].T
    out = np.empty((len(eta), len(uniq)))
    for start in range(0, len(eta), chunk):                           # chunks of draws
        part = slice(start, start + chunk)
        e = np.moveaxis(eta[part][:, :, t_task], 1, 2)
        out[part] = term_loglik(e, n_t, y_t, flat["run_drift"][part], flat["sigma_item"][part])
    return out[:, inverse.ravel()] + np.asarray(items.log_binom)

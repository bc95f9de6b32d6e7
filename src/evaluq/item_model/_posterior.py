"""Draws after sampling: the linear predictor, both scopes, and the item effects from their
exact conditional.

Given the sampled parameters the item effects are independent, and b_i depends on the data
only through its term (task, item total); its conditional density is the term's integrand
N(b; 0, s^2) exp(-b Y - sum_m n_km softplus(eta_mk - b)) normalised. It is evaluated on
``GRID`` cells spanning +-``GRID_HALF_WIDTH`` curvature SDs around the mode (a log-concave
density: the mass outside is below 1e-8), and the w items of a term are spread over the cells
by one multinomial draw per posterior draw (items of a term are exchangeable given the
parameters). The benchmark-scope score is the mean over these items of
sigmoid(eta_mk - b_i); the new-items score integrates b over N(0, s^2) (Gauss-Hermite,
``PRIOR_NODES`` nodes). With a learned item distribution g (``_item_density``; ``shape``,
the coefficients per draw) the conditional density is the integrand times g(b) / N(b; 0,
s^2), and the new-items score integrates b over g (``_item_density.learned_moments``).
"""

from __future__ import annotations

import math
from typing import Any, Final

import numba
import numpy as np
from scipy.special import expit

from evaluq.item_model._data import ItemData
from evaluq.item_model._model import term_mode

GRID: Final = 48
GRID_HALF_WIDTH: Final = 7.0
PRIOR_NODES: Final = 32
CHUNK_CELLS: Final = 4_000_000
PRODUCT_RANGE: Final = 300.0
"""Below this bound on |eta| and on |b| the conditional densities take e^(eta - b) as a
product of e^eta and e^-b (finite: e^600 < 1.8e308)."""
FASTMATH: Final = {"reassoc", "contract", "arcp", "nsz"}
_PX, _PW = np.polynomial.hermite.hermgauss(PRIOR_NODES)
_PW = _PW / np.sqrt(np.pi)


def linear_predictor(data: ItemData, post: dict[str, np.ndarray]) -> np.ndarray:
    """eta (draw, model, task) from the flattened posterior draws of the sampled variables."""
    n_m, n_k = data.shape
    alpha = post["alpha"]
    eta = np.broadcast_to(alpha[:, None, None], (len(alpha), n_m, n_k)).copy()
    if "dev" in post:
        eta += post["dev"][:, :, None]
    if "task_effect" in post:
        eta += post["task_effect"][:, None, :]
    if "model_x_task" in post:
        eta += post["model_x_task"]
    return eta


def task_weights(data: ItemData) -> np.ndarray:
    """Each task's share of the items (both scopes weight items equally)."""
    return data.n_items / data.n_items.sum()


def prior_moments(eta: np.ndarray, sigma: np.ndarray | None, shape: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """E[p] and E[p^2] (draw, model, task) of p = sigmoid(eta - b), b ~ N(0, sigma^2) (or b
    ~ g, the learned distribution with coefficients ``shape`` (draw, knot))."""
    if sigma is None:
        p = expit(eta)
        return p, p**2
    if shape is not None:
        from evaluq.item_model._item_density import learned_moments

        return learned_moments(eta, sigma, shape)
    p = expit(eta[..., None] - np.sqrt(2.0) * sigma[:, None, None, None] * _PX)
    return p @ _PW, (p**2) @ _PW


def new_items_scores(data: ItemData, eta: np.ndarray, sigma: np.ndarray | None,
                     shape: np.ndarray | None = None) -> np.ndarray:
    """Expected score on a new item of the benchmark's tasks (draw, model)."""
    return prior_moments(eta, sigma, shape)[0] @ task_weights(data)


def _chunk_terms(data: ItemData, eta: np.ndarray, sigma: np.ndarray, gen: np.random.Generator,
                 shape: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One chunk of draws: the benchmark sums (draw, model) and the conditional mean and
    variance of b per (draw, term)."""
    task = data.term_task
    eta_t = np.moveaxis(eta[:, :, task], 1, 2)                   # (d, T, M)
    n_t = data.epochs[:, task].T                                  # (T, M)
    mode, sd = term_mode(eta_t, np.broadcast_to(n_t, eta_t.shape), data.term_total, sigma)
    z = (np.arange(GRID) + 0.5) / GRID * 2 * GRID_HALF_WIDTH - GRID_HALF_WIDTH
    b = mode[..., None] + sd[..., None] * z                       # (d, T, G)
    logd = _log_densities(np.ascontiguousarray(eta_t), n_t, data.term_total, sigma, b)
    if shape is not None:
        logd = logd + prior_ratio(b, sigma, shape)
    prob = np.exp(logd - logd.max(axis=-1, keepdims=True))
    prob /= prob.sum(axis=-1, keepdims=True)
    counts = gen.multinomial(data.term_weight.astype(np.int64), prob)
    sums = _benchmark_sums(np.ascontiguousarray(eta_t), b, counts.astype(np.float64))
    cmean = (prob * b).sum(axis=-1)
    cvar = (prob * b**2).sum(axis=-1) - cmean**2
    return sums, cmean, cvar


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _log_densities(eta_t: np.ndarray, n_t: np.ndarray, total: np.ndarray, sigma: np.ndarray,
                   b: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """log N(b; 0, s^2) - b Y - sum_m n softplus(eta - b) (draw, term, node) (the term's
    integrand, ``_model.log_integrand``) without temporaries over the models. When |eta| and
    |b| are below ``PRODUCT_RANGE``, e^(eta - b) is the product e^eta e^-b and the sum of
    n softplus = n log(1 + e^(eta - b)) over the models is the logarithm of a product (integer
    counts: (1 + e)^n by multiplication, flushed to a logarithm above 1e250; e above 1e50
    by its own logarithm), one logarithm per (draw, term, node); otherwise softplus(x) =
    max(x, 0) + log1p(e^-|x|)."""
    n_d, n_t_, n_g = b.shape
    n_m = eta_t.shape[2]
    out = np.empty((n_d, n_t_, n_g))
    odds = np.empty(n_m)
    whole = np.full(n_t.shape, -1, dtype=np.int64)     # integer counts below 64: by products
    for t in range(n_t.shape[0]):
        for m in range(n_m):
            if n_t[t, m] == math.floor(n_t[t, m]) and 0.0 <= n_t[t, m] < 64.0:
                whole[t, m] = int(n_t[t, m])
    half_log_2pi = 0.5 * math.log(2.0 * math.pi)
    for d in range(n_d):
        const = -math.log(sigma[d]) - half_log_2pi
        for t in range(n_t_):
            direct = False
            for m in range(n_m):
                odds[m] = math.exp(eta_t[d, t, m])
                direct = direct or abs(eta_t[d, t, m]) >= PRODUCT_RANGE
            for g in range(n_g):
                x = b[d, t, g]
                acc = 0.0
                if direct or abs(x) >= PRODUCT_RANGE:
                    for m in range(n_m):
                        v = eta_t[d, t, m] - x
                        acc += n_t[t, m] * (max(v, 0.0) + math.log1p(math.exp(-abs(v))))
                else:
                    scale, prod = math.exp(-x), 1.0
                    for m in range(n_m):
                        k, e = whole[t, m], odds[m] * scale
                        if k < 0 or e > 1e50:
                            acc += n_t[t, m] * math.log1p(e)
                            continue
                        for _ in range(k):        # below 1e250 x 1e50: never overflows
                            prod *= 1.0 + e
                            if prod > 1e250:
                                acc += math.log(prod)
                                prod = 1.0
                    acc += math.log(prod)
                out[d, t, g] = -x * total[t] - acc - 0.5 * (x / sigma[d]) ** 2 + const
    return out


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy")
def _benchmark_sums(eta_t: np.ndarray, b: np.ndarray,
                    counts: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """sum over (term, node) of counts x sigmoid(eta - b) per (draw, model): only the nodes
    some item fell on (a term's items cover a few of its nodes)."""
    n_d, n_t, n_g = b.shape
    n_m = eta_t.shape[2]
    out = np.zeros((n_d, n_m))
    for d in range(n_d):
        for t in range(n_t):
            for g in range(n_g):
                c = counts[d, t, g]
                if c == 0.0:
                    continue
                for m in range(n_m):
                    out[d, m] += c * _sigmoid(eta_t[d, t, m] - b[d, t, g])
    return out


@numba.njit(cache=True, nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")
def _sigmoid(x: float) -> float:  # pragma: no cover - compiled
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def prior_ratio(b: np.ndarray, sigma: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """log g(b) - log N(b; 0, s^2) per draw (``b`` (d, ...)): turns the normal-prior
    integrand into the learned one's."""
    from evaluq.item_model._item_density import log_density_draws, normal_log_density

    return log_density_draws(b, sigma, shape) - normal_log_density(b, sigma)


def conditional_draws(data: ItemData, eta: np.ndarray, sigma: np.ndarray | None,
                      gen: np.random.Generator, shape: np.ndarray | None = None
                      ) -> dict[str, np.ndarray]:
    """Benchmark-scope scores (draw, model) and the item effects' posterior mean and SD
    (item,), chunk by chunk of draws (vectorised inside)."""
    n_draws = eta.shape[0]
    if sigma is None:
        return {"benchmark": new_items_scores(data, eta, None)}
    n_t, n_m = len(data.term_total), data.shape[0]
    step = max(1, CHUNK_CELLS // (n_t * GRID * n_m))
    sums = np.empty((n_draws, n_m))
    cmean = np.empty((n_draws, n_t))
    cvar = np.empty((n_draws, n_t))
    for start in range(0, n_draws, step):                          # chunks, not draws
        part = slice(start, start + step)
        sums[part], cmean[part], cvar[part] = _chunk_terms(
            data, eta[part], sigma[part], gen, None if shape is None else shape[part])
    term_mean = cmean.mean(axis=0)
    term_sd = np.sqrt(cvar.mean(axis=0) + cmean.var(axis=0))
    item_term = np.asarray(data.item_term)
    return {"benchmark": sums / data.n_items.sum(), "item_mean": term_mean[item_term],
            "item_sd": term_sd[item_term], "term_mean_draws": cmean}


def icc_draws(data: ItemData, eta: np.ndarray, sigma: np.ndarray | None,
              shape: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """ICC of repeated epochs, design effect and effective number of responses per model.

    Over the items of the benchmark's tasks (a new item, task by item share): p_i =
    sigmoid(eta_mk - b_i), ICC_m = Var(p_i) / (E p (1 - E p)) (the correlation of two epochs
    of one item under the binomial model), deff = 1 + (E - 1) ICC with E epochs per item,
    and n_eff = I E / deff.
    """
    m1, m2 = prior_moments(eta, sigma, shape)
    w = task_weights(data)
    mean = m1 @ w
    second = m2 @ w
    icc = (second - mean**2) / (mean * (1.0 - mean))
    epochs = data.epochs.max(axis=1)                               # (model,)
    deff = 1.0 + (epochs - 1.0) * icc
    n_eff = data.n_items.sum() * epochs / deff
    return {"icc_epochs": icc, "design_effect": deff, "effective_n": n_eff}


def flat_posterior(post: Any, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The sampled variables as (draw, ...) arrays, chains stacked."""
    out = {}
    for name in names:
        if name in post:
            arr = np.asarray(post[name].transpose("chain", "draw", ...).values)
            out[name] = arr.reshape(-1, *arr.shape[2:])
    return out

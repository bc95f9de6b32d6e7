"""The beta-binomial family: epochs overdispersed by run-to-run drift, items integrated out.

For model m and item i of task k with n_km epochs and y_mi correct answers,

    y_mi ~ BetaBinomial(n_km, p_mi phi, (1 - p_mi) phi),   p_mi = expit(eta_mk - b_i),
    b_i ~ N(0, sigma_item^2),   rho = 1 / (1 + phi) ~ Beta(1, run_drift_beta),

with eta_mk as in the binomial family. rho (``run_drift``) is the correlation of two epochs
of one (model, item) given the item: each (model, item) draws its own success probability
q ~ Beta(p phi, (1 - p) phi) that all its epochs share. rho -> 0 is the binomial family.

The item total is no longer sufficient, so the terms are the distinct (task, response-count
pattern over models) of the items, weighted by how many items share them. In the sampler
each term's integral over b is a trapezoid sum on the grid shared by every term
(``_gridquad``: b_g = g h, h from the responses per item and sigma_item, +-8 sigma_item):
the beta-binomial log-probabilities form one (model, task, count, node) table, evaluated
once per log-density, and a term adds its models' rows (``_bb_grid``: one fused numba
kernel fills the table and returns the sum over terms with its gradient). At 10 models x
1,000 items x 3 epochs the warm fit is ~2-3x the binomial family's
(``benchmarks/bench_item_families.py``); the former rule (adaptive Gauss-Hermite per term,
``N_NODES`` nodes, centred by Newton steps on the binomial quasi-likelihood with each epoch
count divided by its design effect 1 + (n - 1) rho) evaluated the kernel per (term, model,
node), 40 times as often, and stays here as the numpy reference (:func:`term_loglik`: the
pointwise log-likelihood, the tests). In numpy the log beta functions are sums of logs of
rising factorials up to ``RISING_MAX`` epochs, above as differences of ``gammaln``: log BB(y
| n, a, c) - log C(n, y) = lgamma(y + a) - lgamma(a) + lgamma(n - y + c) - lgamma(c) +
lgamma(phi) - lgamma(n + phi).
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
from evaluq.item_model._model import (
    _effects,
    centring,
    default_priors,
    padded_terms,
    term_mode,
)
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

def grid_spacing(data: ItemData) -> float:
    """h_data of the shared grid (``_gridquad``): the largest information about b of one
    item, 1/4 per response (p = 1/2, no drift; drift only lowers it)."""
    from evaluq.item_model._gridquad import data_spacing

    return data_spacing(float(np.max(data.epochs.sum(axis=0))) / 4.0)


def term_rows(data: ItemData) -> np.ndarray:
    """(term, model) row of each term's response count in the table (model, task, count):
    (m K + k_t) Y + y_tm, with Y = the largest epoch count + 1."""
    n_k = data.shape[1]
    width = max_epochs(data) + 1
    counts = np.asarray(data.term_counts).astype(np.int64)
    m = np.arange(counts.shape[1])[None, :]
    return (m * n_k + np.asarray(data.term_task)[:, None]) * width + counts


def bb_table(lib: Any, eta: Any, epochs: Any, phi: Any, b: Any, n_max: int) -> Any:
    """log BB(y | n_mk, p phi, (1 - p) phi) - log C(n, y) at p = expit(eta_mk - b_g), as
    (model, task, y = 0..n_max, node) (``eta``, ``epochs`` (..., model, task); ``phi``
    a scalar, or (...) with numpy; ``b`` (node,) or (..., node)): the reference of the
    fused table of ``_bb_grid`` (its tests)."""
    if lib is np:
        phi = _trail(lib, phi, 4)
    x = eta[..., None, None] - b
    y = (lib.arange(n_max + 1) * 1.0)[:, None]
    return log_bb_kernel(lib, x, epochs[..., None, None], y, phi, n_max)


def pair_rows(data: ItemData) -> tuple[np.ndarray, np.ndarray]:
    """The terms' rows of model pairs: ``pairs`` (P, 2), each a pair of rows of the table
    (model, task, count) of two neighbouring models (models 2j and 2j + 1; with an odd
    number of models the last one is paired with the table's extra row of zeros, index
    rows of the table), and ``term_pairs`` (term, ceil(M / 2)), each term's pairs. A pair
    row is summed once per log-density and a term adds half as many rows (the kernel's cost
    per term is its rows' loads and additions). Pairs only when every possible pair row
    (ceil(M / 2) K Y^2, Y counts) fits in the padded terms (:func:`padded_pairs`); else each
    model's row is its own "pair" with the zero row (many epochs: the pair table would cost
    more than it saves)."""
    rows = term_rows(data)
    n_rows = _table_rows(data)
    if not _paired(data):
        return np.c_[np.arange(n_rows), np.full(n_rows, n_rows)], rows
    if rows.shape[1] % 2:
        rows = np.c_[rows, np.full(len(rows), n_rows)]
    both = np.stack([rows[:, 0::2], rows[:, 1::2]], axis=-1).reshape(-1, 2)
    pairs, index = np.unique(both, axis=0, return_inverse=True)
    return pairs, index.reshape(len(rows), -1)


def _table_rows(data: ItemData) -> int:
    """The table's rows (model, task, count): M K Y; the zero row is the next index."""
    return data.shape[0] * data.shape[1] * (max_epochs(data) + 1)


def _possible_pairs(data: ItemData) -> int:
    """ceil(M / 2) K Y^2: every pair row the data's shape allows."""
    n_m, n_k = data.shape
    return -(-n_m // 2) * n_k * (max_epochs(data) + 1) ** 2


def _paired(data: ItemData) -> bool:
    return _possible_pairs(data) <= padded_terms(len(data.term_weight))


def padded_pairs(data: ItemData) -> int:
    """The pair rows' padded count, from the data's shape and padded terms only (part of
    the compiled model's key: data of the same shape reuse it): every possible pair row, or
    with single rows the table's rows."""
    return _possible_pairs(data) if _paired(data) else _table_rows(data)


def model_inputs(data: ItemData, priors: dict[str, float]) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the marginal beta-binomial model, by name (terms padded
    with weight 0 to a power of two, pair rows with pairs of the zero row to
    :func:`padded_pairs`)."""
    pairs, term_pairs = pair_rows(data)
    zero_row = _table_rows(data)
    size = padded_terms(len(term_pairs))
    pad = size - len(term_pairs)
    extra = padded_pairs(data) - len(pairs)
    return {"epochs": np.asarray(data.epochs, dtype=np.float64),
            "pairs": np.r_[pairs, np.full((extra, 2), zero_row)],
            "term_pairs": np.r_[term_pairs, np.zeros((pad, term_pairs.shape[1]), np.int64)],
            "term_ones": np.r_[np.ones(term_pairs.shape),
                               np.zeros((pad, term_pairs.shape[1]))],
            "term_weight": np.r_[data.term_weight, np.zeros(pad)],
            "grid_spacing": np.asarray(grid_spacing(data))} | {
        f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()}


def max_epochs(data: ItemData) -> int:
    """The largest epoch count (the compiled model's rising-factorial length)."""
    return int(np.max(data.epochs))


def build_model(data: ItemData, priors: dict[str, float] | None = None) -> pm.Model:
    """The marginal beta-binomial item model: free variables those of the binomial family
    plus ``run_drift`` (rho); every array a ``pm.Data`` (refits reuse a compiled model). The
    task and model x task effects, and the model deviations, are centred when the data pin
    them down, as the binomial family's (``_model.centring``).

    The item effects are integrated out on the grid shared by every term (``_gridquad``):
    the beta-binomial log-probabilities form a (model, task, count, node) table and each
    (task, pattern) term sums its models' rows, the table and the sum in one fused kernel
    with its gradient (``_bb_grid``).
    """
    import pymc as pm

    inputs = model_inputs(data, resolve_priors(data, priors))
    with pm.Model(coords={MODEL: list(map(str, data.models))}) as pm_model:
        x = {name: pm.Data(name, value) for name, value in inputs.items()}
        eta = _effects(x, data, centring=centring(data))
        sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
        rho = pm.Beta("run_drift", 1.0, x["prior_run_drift_beta"])
        pm.Potential("item_loglik", sampler_loglik(
            eta, x["epochs"], rho, sigma_item, x["grid_spacing"], x["pairs"],
            x["term_pairs"], x["term_ones"], x["term_weight"]))
    return pm_model


def sampler_loglik(eta: Any, epochs: Any, rho: Any, sigma: Any, h_data: Any, pairs: Any,
                   rows: Any, ones: Any, weight: Any) -> Any:
    """The sampler's log-likelihood of the items (PyTensor): sum_t w_t log of each term's
    integral on the shared grid (``_gridquad``), the grid spanning the extreme patterns'
    mass (:func:`extreme_terms`); the terms read rows of model pairs (:func:`pair_rows`:
    ``pairs`` (P, 2) rows of the table, ``rows`` (term, pair) their indices)."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    from evaluq.item_model._bb_grid import bb_grid_loglik
    from evaluq.item_model._gridquad import extreme_span, grid_nodes, prior_base

    span = extreme_span(pt, sigma, *centre(*extreme_terms(pt, eta, epochs), rho, sigma))
    b, h = grid_nodes(sigma, h_data, span)
    b, h = disconnected_grad(b), disconnected_grad(h)       # the rule's value is its own
    return bb_grid_loglik(eta, epochs, 1.0 / rho - 1.0, b, prior_base(pt, b, sigma, h),
                          pairs, rows, ones, weight)


def extreme_terms(lib: Any, eta: Any, epochs: Any) -> tuple[Any, Any, Any]:
    """eta, epochs and counts (..., 2 K, model) of each task's extreme patterns: no correct
    answer, and every answer correct (``eta`` (..., model, task))."""
    e = lib.swapaxes(eta, -1, -2) if lib is np else eta.T
    n = epochs.T
    return (lib.concatenate([e, e], axis=-2), lib.concatenate([n, n], axis=0),
            lib.concatenate([0.0 * n, n], axis=0))


# --- after sampling -----------------------------------------------------------------------------

def _grid(data: ItemData, eta: np.ndarray, sigma: np.ndarray, rho: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """eta per term (d, T, M), a grid of b around each term's mode (d, T, G) and each
    cell's conditional mass (the adaptive grid of :func:`posterior_items`)."""
    task = data.term_task
    eta_t = np.moveaxis(eta[:, :, task], 1, 2)
    n_t, y_t = data.epochs[:, task].T, np.asarray(data.term_counts)
    mode, sd = centre(eta_t, n_t, y_t, rho, sigma)
    z = (np.arange(GRID) + 0.5) / GRID * 2 * GRID_HALF_WIDTH - GRID_HALF_WIDTH
    b = mode[..., None] + sd[..., None] * z
    logd = log_integrand(eta_t, n_t, y_t, rho, sigma, b)
    prob = np.exp(logd - logd.max(axis=-1, keepdims=True))
    return eta_t, b, prob / prob.sum(axis=-1, keepdims=True)


def posterior_nodes(data: ItemData, eta: np.ndarray, sigma: np.ndarray, rho: np.ndarray
                    ) -> tuple[np.ndarray, float]:
    """The nodes (G,) and spacing of one shared grid for these draws: the sampler's rule
    (``_gridquad``), spanning every draw's extreme patterns."""
    from evaluq.item_model._gridquad import extreme_span, posterior_grid

    span = extreme_span(np, sigma, *centre(*extreme_terms(np, eta, data.epochs), rho, sigma))
    return posterior_grid(sigma, grid_spacing(data), span)


def conditional_draws(data: ItemData, eta: np.ndarray, sigma: np.ndarray, rho: np.ndarray,
                      gen: np.random.Generator) -> dict[str, np.ndarray]:
    """Benchmark-scope scores (draw, model): each item's effect drawn from its exact
    conditional given the pattern (on one shared grid per chunk of draws, by the sampler's
    rule: the table of ``_bb_grid``, each term's window, one node per item and draw by
    inverse CDF, ``_bb_grid.product_cells``); and the item effects' posterior mean and SD
    (item,)."""
    from evaluq.item_model._bb_grid import bb_tables, product_cells
    from evaluq.item_model._gridquad import prior_base

    n_d, n_t, (n_m, n_k) = eta.shape[0], len(data.term_weight), data.shape
    n_nodes = len(posterior_nodes(data, eta[:1], sigma[:1], rho[:1])[0]) * 2
    item_term = np.asarray(data.item_term)
    item_task = np.asarray(data.item_task)
    rows = term_rows(data)
    width = max_epochs(data) + 1
    step = max(1, CHUNK_CELLS // (n_m * n_k * (width + 1) * n_nodes + len(item_term)))
    sums, cmean, cvar = np.empty((n_d, n_m)), np.empty((n_d, n_t)), np.empty((n_d, n_t))
    for start in range(0, n_d, step):                                 # chunks, not draws
        part = slice(start, start + step)
        b, h = posterior_nodes(data, eta[part], sigma[part], rho[part])
        table: Any = bb_tables(np.ascontiguousarray(eta[part]), data.epochs,
                               1.0 / rho[part] - 1.0, b, width)
        base = prior_base(np, b, sigma[part][:, None], h)
        cell, cmean[part], cvar[part] = product_cells(table, base, b, rows, item_term, gen)
        d = np.arange(len(cell))[:, None]
        counts = np.zeros((len(cell), n_k, len(b)))
        np.add.at(counts, (d, item_task[None, :], cell), 1.0)
        sums[part] = np.einsum("dkg,dmkg->dm", counts,
                               expit(eta[part][..., None] - b))
    term_sd = np.sqrt(cvar.mean(axis=0) + cmean.var(axis=0))
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

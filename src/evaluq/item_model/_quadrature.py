"""Adaptive Gauss-Hermite quadrature of the 1PL item effect (numpy or PyTensor arrays).

Each (task, item total) term's integrand in the item effect b,

    N(b; 0, s^2) exp(-b Y - sum_m n_km softplus(eta_mk - b)),

is centred at its mode (a few Newton steps from the logit of the item's accuracy) and scaled
by its curvature, so ``N_NODES`` nodes are accurate even when an item has hundreds of
responses. These functions know nothing of the data's containers (``_model`` builds the
PyMC model on them, ``_drift`` the plug-in fit of ``family="auto"``), so the data module
may use them without an import circle.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from evaluq._backend import array_module, sigmoid, softplus

N_NODES: Final = 21
NEWTON_STEPS: Final = 6
_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(N_NODES)


def term_mode(eta_t: Any, n_t: Any, total: Any, sigma: Any) -> tuple[Any, Any]:
    """Mode and curvature SD of each term's integrand in b (Newton from the item's logit).

    ``eta_t``, ``n_t`` (..., term, model); ``total`` (term,); ``sigma`` (...) or scalar.
    """
    lib = array_module(eta_t, n_t, total, sigma)
    s2 = (sigma**2)[..., None] if lib is np and np.ndim(sigma) else sigma**2
    n_sum = n_t.sum(axis=-1)
    rate = (total + 0.5) / (n_sum + 1.0)
    b = (eta_t * n_t).sum(axis=-1) / lib.maximum(n_sum, 1.0) - lib.log(rate / (1.0 - rate))
    for _ in range(NEWTON_STEPS):
        p = sigmoid(lib, eta_t - b[..., None])
        d1 = -total + (n_t * p).sum(axis=-1) - b / s2
        d2 = -(n_t * p * (1.0 - p)).sum(axis=-1) - 1.0 / s2
        b = b - lib.clip(d1 / d2, -2.0, 2.0)
    p = sigmoid(lib, eta_t - b[..., None])
    d2 = (n_t * p * (1.0 - p)).sum(axis=-1) + 1.0 / s2
    return b, 1.0 / lib.sqrt(d2)


def log_integrand(eta_t: Any, n_t: Any, total: Any, sigma: Any, b: Any) -> Any:
    """log N(b; 0, s^2) - b Y - sum_m n softplus(eta - b) at points ``b`` (..., term, node)."""
    lib = array_module(eta_t, n_t, total, sigma, b)
    s = sigma[..., None, None] if lib is np and np.ndim(sigma) else sigma
    soft = (n_t[..., None] * softplus(lib, eta_t[..., None] - b[..., None, :])).sum(axis=-2)
    return (-b * total[:, None] - soft - 0.5 * (b / s) ** 2 - lib.log(s)
            - 0.5 * np.log(2 * np.pi))


def term_loglik(eta_t: Any, n_t: Any, total: Any, sigma: Any) -> Any:
    """log of the integral over b of each term's integrand (adaptive Gauss-Hermite)."""
    lib = array_module(eta_t, n_t, total, sigma)
    mode, sd = term_mode(eta_t, n_t, total, sigma)
    if lib is not np:
        # the rule's value does not depend on where it is centred (up to its error): no
        # gradient through the Newton steps (half the cost of a gradient)
        from pytensor.gradient import disconnected_grad

        mode, sd = disconnected_grad(mode), disconnected_grad(sd)
    b = mode[..., None] + np.sqrt(2.0) * sd[..., None] * _NODES
    vals = log_integrand(eta_t, n_t, total, sigma, b) + np.log(_WEIGHTS) + _NODES**2
    top = vals.max(axis=-1)
    lse = top + lib.log(lib.exp(vals - top[..., None]).sum(axis=-1))
    return lse + lib.log(np.sqrt(2.0) * sd)


def term_posterior(eta_t: np.ndarray, n_t: np.ndarray, total: np.ndarray, sigma: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each term's log integral, nodes and normalised node weights (numpy).

    ``eta_t``, ``n_t`` (term, model); ``total`` (term,). Returns log I (term,), nodes b
    (term, node) and weights (term, node) summing to 1: E[f(b) | term] ~ sum_j w_j f(b_j).
    """
    s = np.asarray(sigma, dtype=np.float64)
    mode, sd = term_mode(eta_t, n_t, total, s)
    b = mode[:, None] + np.sqrt(2.0) * sd[:, None] * _NODES
    vals = log_integrand(eta_t, n_t, total, s, b) + np.log(_WEIGHTS) + _NODES**2
    top = vals.max(axis=-1)
    w = np.exp(vals - top[:, None])
    total_w = w.sum(axis=-1)
    return top + np.log(total_w) + np.log(np.sqrt(2.0) * sd), b, w / total_w[:, None]

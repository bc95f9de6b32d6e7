"""Numpy kernels for soft-label metrics: one value per item, classes on ``axis=-1``.

Every kernel takes probability rows ``p`` (targets) and ``q`` (predictions) of shape
``(..., K)`` (broadcasting against each other) and returns per-item values of shape ``(...)``.
Natural logarithms throughout (nats), with ``0 log 0 = 0``. The kernels do not validate their
inputs (rows are assumed non-negative and summing to 1); the public functions in
:mod:`evaluq.metrics.soft` and :func:`evaluq.metrics._inputs.prepare_inputs` do.

Zero probabilities in the prediction
------------------------------------
Cross-entropy and KL divergence are ``+inf`` for an item whose prediction gives probability 0
to a class the target gives positive probability (``-p log 0``). That is the exact value and
the default (``eps=None``). With ``eps`` set, the prediction row is first clipped from below at
``eps`` and then renormalised to sum to 1 (``q' = max(q, eps) / sum_k max(q_k, eps)``), so that
every value is finite; the result then depends on ``eps`` and the clipping is documented in the
metric's name (``cross_entropy[eps=1e-12]``). The Jensen-Shannon quantities and the EMD never
need clipping.
"""

from __future__ import annotations

import numpy as np
from scipy.special import entr, rel_entr, xlogy


def _clip(q: np.ndarray, eps: float | None) -> np.ndarray:
    """Clip ``q`` from below at ``eps`` and renormalise the rows (no-op for ``eps=None``)."""
    if eps is None:
        return q
    clipped = np.maximum(q, eps)
    return clipped / clipped.sum(axis=-1, keepdims=True)


def entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy ``H(p) = -sum_k p_k log p_k`` in nats, with ``0 log 0 = 0``."""
    return entr(np.asarray(p, dtype=np.float64)).sum(axis=-1)


def normalized_entropy(p: np.ndarray) -> np.ndarray:
    """Entropy divided by its maximum ``log K`` (in [0, 1]; needs ``K >= 2``)."""
    p = np.asarray(p, dtype=np.float64)
    return entropy(p) / np.log(p.shape[-1])


def cross_entropy_items(p: np.ndarray, q: np.ndarray, eps: float | None = None) -> np.ndarray:
    """Per-item cross-entropy ``-sum_k p_k log q_k`` (``+inf`` where q_k = 0 < p_k, see above)."""
    p = np.asarray(p, dtype=np.float64)
    q = _clip(np.asarray(q, dtype=np.float64), eps)
    with np.errstate(divide="ignore"):
        return -xlogy(p, q).sum(axis=-1)


def kl_items(p: np.ndarray, q: np.ndarray, eps: float | None = None) -> np.ndarray:
    """Per-item KL divergence ``sum_k p_k log(p_k / q_k)`` (``+inf`` where q_k = 0 < p_k)."""
    p = np.asarray(p, dtype=np.float64)
    q = _clip(np.asarray(q, dtype=np.float64), eps)
    return rel_entr(p, q).sum(axis=-1)


def js_divergence_items(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-item Jensen-Shannon divergence in nats, in ``[0, log 2]``.

    ``JSD(p, q) = H(m) - (H(p) + H(q)) / 2 = (KL(p || m) + KL(q || m)) / 2`` with
    ``m = (p + q) / 2``. Computed in the second form (as :func:`scipy.spatial.distance.
    jensenshannon` does), which keeps every term exact for near-equal rows; rounding below 0 is
    clipped to 0.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = (p + q) / 2.0
    js = (rel_entr(p, m).sum(axis=-1) + rel_entr(q, m).sum(axis=-1)) / 2.0
    return np.maximum(js, 0.0)


def js_distance_items(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-item Jensen-Shannon distance: the square root of the divergence in nats.

    Equals :func:`scipy.spatial.distance.jensenshannon` with its default base (e), in
    ``[0, sqrt(log 2)]``. This is what BooStSa (0.2.13) reports as "JSD".
    """
    return np.sqrt(js_divergence_items(p, q))


def emd_items(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-item ordinal Earth Mover's Distance with ground distance ``|i - j| / (K - 1)``.

    ``EMD(p, q) = (1 / (K - 1)) sum_{k=1}^{K-1} |F_p(k) - F_q(k)|`` with F the cumulative sums
    over the classes in their given order; in [0, 1]. O(K) per item.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    n_classes = np.broadcast_shapes(p.shape, q.shape)[-1]
    diff = np.cumsum(p - q, axis=-1)[..., :-1]
    return np.abs(diff).sum(axis=-1) / (n_classes - 1)

"""Metrics on soft labels: probability rows over K classes for targets and predictions.

Following Uma et al. (2021), as used by BooStSa: cross-entropy, Jensen-Shannon divergence,
entropy similarity and entropy correlation; plus KL divergence, the Jensen-Shannon *distance*
and the ordinal Earth Mover's Distance. Natural logarithms (nats) throughout.

Per item i with target row ``p_i`` and prediction ``q_i``:

- ``cross_entropy = mean_i -sum_k p_ik log q_ik``
- ``kl = mean_i sum_k p_ik log(p_ik / q_ik)``
- ``js_divergence = mean_i [H(m_i) - (H(p_i) + H(q_i)) / 2]``, ``m_i = (p_i + q_i) / 2``,
  in ``[0, log 2]``
- ``js_distance = mean_i sqrt(JSD(p_i, q_i))`` (scipy's ``jensenshannon``, base e)
- ``entropy_similarity = cos(h(p), h(q))`` and ``entropy_correlation = Pearson(h(p), h(q))``
  over items, with ``h(p) = H(p) / log K`` the normalized entropy
- ``emd = mean_i (1/(K-1)) sum_{k<K} |F_{p_i}(k) - F_{q_i}(k)|`` (cumulative sums F: the
  classes are ordered, with ground distance ``|i - j| / (K - 1)``)

A prediction giving probability 0 to a class the target gives positive probability makes the
cross-entropy and the KL divergence ``+inf`` (the exact value); pass ``eps`` to clip the
predictions at ``eps`` and renormalise them instead (see :mod:`evaluq.metrics._soft`).

Errata of BooStSa (0.2.13): the quantity it prints as "JSD" (Jensen-Shannon divergence) is
:func:`scipy.spatial.distance.jensenshannon`, the square root of the divergence, i.e. the
Jensen-Shannon *distance*. Both are offered here, named for what they are:
:func:`js_divergence` and :func:`js_distance`. Its significance test also counts the CE and
"JSD" resamples with the wrong sign; orienting each metric by ``higher_is_better`` (False for
every divergence here) fixes that in :func:`evaluq.bootstrap_test`.

References
----------
Uma, Fornaciari, Hovy, Paun, Plank, Poesio (2021). Learning from disagreement: a survey. JAIR.
Fornaciari, Uma, Poesio, Hovy (2022). BooStSa: a system for bootstrap statistical significance
testing of soft and hard label predictions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import xarray as xr

from evaluq._validation import check_real
from evaluq._warn import warn
from evaluq.metrics import _soft
from evaluq.metrics._base import CLIPPED_FAMILIES, Metric, register_metric
from evaluq.metrics._common import UndefinedMetricWarning, mean_from_sums, per_item_stats, wrap
from evaluq.metrics._inputs import prepare_inputs

# --- item statistics ----------------------------------------------------------------------------

def _item_metric(name: str, kernel: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Metric:
    def item_stats(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
        return per_item_stats(kernel(targets, predictions))
    return Metric(name, higher_is_better=False, kind="soft", item_stats=item_stats,
                  from_sums=mean_from_sums)


def _eps_name(name: str, eps: float | None) -> str:
    return name if eps is None else f"{name}[eps={eps:g}]"


def _check_eps(eps: float | None) -> float | None:
    if eps is None:
        return None
    return check_real("eps", eps, low=0.0, high=1.0, low_inclusive=False)


def _entropies(targets: np.ndarray, predictions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = _soft.normalized_entropy(targets)
    y = _soft.normalized_entropy(predictions)
    return np.broadcast_to(x, y.shape), y


def _similarity_stats(targets: np.ndarray, predictions: np.ndarray, n_classes: int
                      ) -> np.ndarray:
    x, y = _entropies(targets, predictions)
    return np.stack([x * y, x * x, y * y], axis=-1)


def _similarity_from_sums(sums: np.ndarray, total: np.ndarray, n_classes: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums[..., 0] / np.sqrt(sums[..., 1] * sums[..., 2])


def _correlation_local(targets: np.ndarray, predictions: np.ndarray, n_classes: int
                       ) -> np.ndarray:
    """Per item, the normalized entropies ``(x, y)`` of target and prediction: ``(..., N, 2)``."""
    x, y = _entropies(targets, predictions)
    return np.stack([x, y], axis=-1)


def _correlation_global(local: np.ndarray, n_classes: int) -> np.ndarray:
    """The five statistics ``(x, y, x^2, y^2, xy)`` centred on the items' means (axis -2)."""
    # Pearson's r is shift invariant: centring on these items' means keeps the running sums
    # small and the finaliser free of cancellation, while weighted sums stay exact. The
    # centre reads every item, so this is the metric's global step (see Metric.global_stats).
    x = np.ascontiguousarray(local[..., 0])
    y = np.ascontiguousarray(local[..., 1])
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    return np.stack([x, y, x * x, y * y, x * y], axis=-1)


def _correlation_stats(targets: np.ndarray, predictions: np.ndarray, n_classes: int
                       ) -> np.ndarray:
    return _correlation_global(_correlation_local(targets, predictions, n_classes), n_classes)


CONSTANT_SPREAD = 1e-13
"""The standard deviation of normalized entropies (in [0, 1]) below which they count as
constant, and entropy correlation as undefined: floating-point rounding leaves ~1e-16."""


def _correlation_from_sums(sums: np.ndarray, total: np.ndarray, n_classes: int) -> np.ndarray:
    sx, sy, sxx, syy, sxy = np.moveaxis(sums, -1, 0)
    cov = sxy - sx * sy / total
    vx = sxx - sx * sx / total
    vy = syy - sy * sy / total
    # normalized entropies lie in [0, 1]: a spread below CONSTANT_SPREAD is their rounding
    # (constant entropies, e.g. one prediction row for every item, centre to ~1e-16, whose
    # r = cov / sqrt(vx vy) of rounding noise came out as +-1), so r is undefined: NaN
    constant = np.minimum(vx, vy) <= CONSTANT_SPREAD ** 2 * total
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cov / np.sqrt(vx * vy)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


CROSS_ENTROPY = register_metric(_item_metric("cross_entropy", _soft.cross_entropy_items))
KL = register_metric(_item_metric("kl", _soft.kl_items))
JS_DIVERGENCE = register_metric(_item_metric("js_divergence", _soft.js_divergence_items))
JS_DISTANCE = register_metric(_item_metric("js_distance", _soft.js_distance_items))
EMD = register_metric(_item_metric("emd", _soft.emd_items))
ENTROPY_SIMILARITY = register_metric(Metric(
    "entropy_similarity", higher_is_better=True, kind="soft", item_stats=_similarity_stats,
    from_sums=_similarity_from_sums))
ENTROPY_CORRELATION = register_metric(Metric(
    "entropy_correlation", higher_is_better=True, kind="soft", item_stats=_correlation_stats,
    from_sums=_correlation_from_sums, local_stats=_correlation_local,
    global_stats=_correlation_global))


def cross_entropy_metric(*, eps: float | None = None) -> Metric:
    """Cross-entropy as a :class:`Metric`, optionally with predictions clipped at ``eps``.

    Parameters
    ----------
    eps : float, optional
        Clip every predicted probability from below at ``eps`` (in (0, 1]) and renormalise
        the rows, so that a zero prediction gives a finite value. Default None: no clipping
        (a zero prediction where the target is positive gives ``+inf``).

    Returns
    -------
    Metric
        The registered ``"cross_entropy"`` metric without ``eps``, else a new one named
        ``"cross_entropy[eps=<eps>]"``.

    Examples
    --------
    >>> from evaluq.metrics import cross_entropy_metric
    >>> cross_entropy_metric(eps=1e-12).name
    'cross_entropy[eps=1e-12]'
    """
    eps = _check_eps(eps)
    if eps is None:
        return CROSS_ENTROPY
    return _item_metric(_eps_name("cross_entropy", eps),
                        lambda p, q: _soft.cross_entropy_items(p, q, eps))


def kl_metric(*, eps: float | None = None) -> Metric:
    """KL divergence as a :class:`Metric`, optionally with predictions clipped at ``eps``.

    Parameters
    ----------
    eps : float, optional
        Clip every predicted probability from below at ``eps`` (in (0, 1]) and renormalise
        the rows, so that a zero prediction gives a finite value. Default None: no clipping
        (a zero prediction where the target is positive gives ``+inf``).

    Returns
    -------
    Metric
        The registered ``"kl"`` metric without ``eps``, else a new one named
        ``"kl[eps=<eps>]"``.

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.metrics import kl_metric
    >>> m = kl_metric(eps=1e-6)
    >>> targets, predictions = np.array([[0.5, 0.5]]), np.array([[1.0, 0.0]])
    >>> m.name, bool(np.isfinite(m(targets, predictions, 2)))
    ('kl[eps=1e-06]', True)
    """
    eps = _check_eps(eps)
    if eps is None:
        return KL
    return _item_metric(_eps_name("kl", eps), lambda p, q: _soft.kl_items(p, q, eps))


CLIPPED_FAMILIES["cross_entropy"] = lambda eps: cross_entropy_metric(eps=eps)
CLIPPED_FAMILIES["kl"] = lambda eps: kl_metric(eps=eps)


# --- public functions ---------------------------------------------------------------------------

_PARAMS = """Parameters
----------
targets, predictions
    Probability rows ``(item, class)``: lists, arrays, DataArrays with ``item`` and ``class``
    dims, or ``.csv`` / ``.tsv`` / ``.npy`` files (see :func:`evaluq.metrics.prepare_inputs`).
    DataArray predictions may carry further dims (``model``, ``seed``, ...), which the result
    keeps.
atol
    Tolerance for each row to sum to 1."""


def _evaluate(metric: Metric, targets: Any, predictions: Any, atol: float
              ) -> float | xr.DataArray:
    x = prepare_inputs(targets, predictions, kind="soft", atol=atol, allow_leading=True)
    return wrap(metric(x.targets, x.predictions[0], x.n_classes), x)


def cross_entropy(targets: Any, predictions: Any, *, eps: float | None = None,
                  atol: float = 1e-6) -> float | xr.DataArray:
    return _evaluate(cross_entropy_metric(eps=eps), targets, predictions, atol)


def kl(targets: Any, predictions: Any, *, eps: float | None = None,
       atol: float = 1e-6) -> float | xr.DataArray:
    return _evaluate(kl_metric(eps=eps), targets, predictions, atol)


def js_divergence(targets: Any, predictions: Any, *, atol: float = 1e-6
                  ) -> float | xr.DataArray:
    return _evaluate(JS_DIVERGENCE, targets, predictions, atol)


def js_distance(targets: Any, predictions: Any, *, atol: float = 1e-6
                ) -> float | xr.DataArray:
    return _evaluate(JS_DISTANCE, targets, predictions, atol)


def emd(targets: Any, predictions: Any, *, atol: float = 1e-6) -> float | xr.DataArray:
    return _evaluate(EMD, targets, predictions, atol)


def _entropy_agreement(metric: Metric, what: str, targets: Any, predictions: Any,
                       atol: float) -> float | xr.DataArray:
    value = _evaluate(metric, targets, predictions, atol)
    if np.isnan(np.asarray(value)).any():
        warn(f"{metric.name} is undefined (the vectors of normalized entropies are "
             f"{what}) and set to NaN", UndefinedMetricWarning)
    return value


def entropy_similarity(targets: Any, predictions: Any, *, atol: float = 1e-6
                       ) -> float | xr.DataArray:
    return _entropy_agreement(ENTROPY_SIMILARITY, "all zero for targets or predictions",
                              targets, predictions, atol)


def entropy_correlation(targets: Any, predictions: Any, *, atol: float = 1e-6
                        ) -> float | xr.DataArray:
    return _entropy_agreement(ENTROPY_CORRELATION, "constant for targets or predictions",
                              targets, predictions, atol)


_EPS = """
eps
    None (default): the exact value, ``+inf`` if a prediction gives probability 0 to a class
    the target gives positive probability. A number in (0, 1]: clip predictions from below at
    ``eps`` and renormalise the rows first."""

_EXAMPLE = """

Examples
--------
>>> import evaluq as eq
>>> p = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]
>>> q = [[0.8, 0.2, 0.0], [0.3, 0.3, 0.4], [0.1, 0.3, 0.6]]
>>> round(eq.metrics.{name}(p, q), 4)
{value}
"""


def _doc(title: str, formula: str, name: str, value: str, see_also: str,
         extra: str = "", notes: str = "") -> str:
    return (f"{title}\n\n.. math:: {formula}\n{notes}\n{_PARAMS}{extra}\n\nReturns\n-------\n"
            f"float or xarray.DataArray\n\nSee Also\n--------\n{see_also}"
            + _EXAMPLE.format(name=name, value=value))


cross_entropy.__doc__ = _doc(
    "Mean cross-entropy of the predictions under the targets (nats).",
    "\\mathrm{CE} = -\\frac{1}{N} \\sum_i \\sum_k p_{ik} \\log q_{ik}",
    "cross_entropy", "0.8347", "kl, cross_entropy_metric", _EPS,
    "\nLower is better. Equals ``kl + mean_i H(p_i)``.\n")
kl.__doc__ = _doc(
    "Mean Kullback-Leibler divergence KL(target || prediction) (nats).",
    "\\mathrm{KL} = \\frac{1}{N} \\sum_i \\sum_k p_{ik} \\log (p_{ik} / q_{ik})",
    "kl", "0.2605", "cross_entropy, js_divergence, kl_metric", _EPS,
    "\nLower is better.\n")
js_divergence.__doc__ = _doc(
    "Mean Jensen-Shannon divergence (nats), in [0, log 2].",
    "\\mathrm{JSD} = \\frac{1}{N} \\sum_i H(m_i) - \\tfrac{1}{2}(H(p_i) + H(q_i)), "
    "\\quad m_i = (p_i + q_i)/2",
    "js_divergence", "0.0832", "js_distance, kl",
    notes="\nLower is better. BooStSa's \"JSD\" is not this but :func:`js_distance`.\n")
js_distance.__doc__ = _doc(
    "Mean Jensen-Shannon distance: the square root of the per-item divergence (nats).",
    "\\frac{1}{N} \\sum_i \\sqrt{\\mathrm{JSD}(p_i, q_i)}",
    "js_distance", "0.2608", "js_divergence",
    notes=("\nLower is better. Per item, equals :func:`scipy.spatial.distance.jensenshannon` "
           "(base e). This is what BooStSa (0.2.13) reports as \"JSD\".\n"))
emd.__doc__ = _doc(
    "Mean ordinal Earth Mover's Distance, classes ordered as given, in [0, 1].",
    "\\mathrm{EMD} = \\frac{1}{N} \\sum_i \\frac{1}{K-1} \\sum_{k=1}^{K-1} "
    "|F_{p_i}(k) - F_{q_i}(k)|",
    "emd", "0.1667", "js_divergence",
    notes=("\nLower is better. The Wasserstein-1 distance between the class distributions on "
           "positions 0..K-1, divided by K - 1.\n"))
entropy_similarity.__doc__ = _doc(
    "Entropy similarity (Uma et al. 2021): cosine of the items' normalized entropies.",
    "\\cos(h(p), h(q)) = \\frac{\\sum_i h(p_i) h(q_i)}{\\sqrt{\\sum_i h(p_i)^2 "
    "\\sum_i h(q_i)^2}}, \\quad h(p) = H(p) / \\log K",
    "entropy_similarity", "0.9035", "entropy_correlation",
    notes=("\nHigher is better. NaN (with :class:`UndefinedMetricWarning`) if every target or "
           "every prediction has zero entropy.\n"))
entropy_correlation.__doc__ = _doc(
    "Entropy correlation (Uma et al. 2021): Pearson's r of the items' normalized entropies.",
    "r(h(p), h(q)), \\quad h(p) = H(p) / \\log K",
    "entropy_correlation", "0.7962", "entropy_similarity",
    notes=("\nHigher is better. NaN (with :class:`UndefinedMetricWarning`) if the targets' or "
           "the predictions' entropies are constant.\n"))

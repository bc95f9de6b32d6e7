"""The metric protocol: per-item sufficient statistics and a finaliser.

Every metric in evaluq is written as

    value = from_sums(sum_i w_i * s_i,  sum_i w_i)

where ``s_i = item_stats(target_i, prediction_i)`` is a short vector of per-item statistics and
``w_i`` are item weights (1 for the full test set, bootstrap counts for a resample, 0/1 masks
for a sub-sample). Accuracy has one statistic (correct or not); precision / recall / F1 need the
confusion matrix (``K * K`` one-hot statistics); entropy correlation needs the five sums of
x, y, x^2, y^2, xy; the soft metrics are means of per-item values.

Written this way, any number of bootstrap replicates is one matrix product
``counts (B, N) @ stats (N, S)`` (or, for hard labels, a multinomial draw over the few cells of
(target, prediction) pairs), so no resampling loop ever runs over items in Python. The same
objects serve :func:`evaluq.from_predictions` and :func:`evaluq.bootstrap_test`.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from evaluq._validation import check_orientation

MetricKind = Literal["hard", "soft", "regression"]

ItemStats = Callable[[np.ndarray, np.ndarray, int], np.ndarray]
FromSums = Callable[[np.ndarray, np.ndarray, int], np.ndarray]
GlobalStats = Callable[[np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class Metric:
    """A metric written as per-item statistics plus a finaliser.

    Parameters
    ----------
    name
        Registry name (``"accuracy"``, ``"f1"``, ``"cross_entropy"``, ...).
    higher_is_better
        Orientation: significance tests report ``M(h1) - M(h0)`` for higher-is-better metrics
        and ``M(h0) - M(h1)`` otherwise, so that positive always means "h1 is better".
    kind
        ``"hard"`` (integer class codes), ``"soft"`` (probability rows over classes) or
        ``"regression"`` (real values).
    item_stats
        ``item_stats(targets, predictions, n_classes) -> stats`` with targets of shape
        ``(N,)`` (hard, regression) or ``(N, K)`` (soft), predictions of shape ``(..., N)`` or
        ``(..., N, K)``, and stats of shape ``(..., N, S)``.
    from_sums
        ``from_sums(sums, total_weight, n_classes) -> value`` with sums of shape ``(..., S)``
        and total weights broadcastable to ``(...)``.
    labels
        Hard metrics defined on a fixed label set (``f1_metric(labels=...)``): that set.
        Callers encode the inputs against it (``prepare_inputs(..., labels=metric.labels)``).
    target_class
        Hard metrics restricted to one class: its label *value* (not its position).
    bind
        For metrics that need the label set to be evaluated (``target_class``), a function
        ``bind(label_set) -> Metric`` returning the metric for class codes of that label set.
        Call :meth:`for_labels` rather than this.
    local_stats, global_stats
        For a metric whose per-item statistics depend on all the items (entropy correlation
        centres them on the items' mean), the two steps of ``item_stats``:
        ``local_stats(targets, predictions, n_classes) -> (..., N, P)`` depends on each item
        alone, and ``global_stats(local, n_classes) -> (..., N, S)`` reads every item's
        local statistics (items on axis -2), with
        ``item_stats(t, p, k) == global_stats(local_stats(t, p, k), k)``. Data split in
        chunks of items (dask) are then evaluated exactly: the local statistics chunk by
        chunk, the global step once on all of them (:meth:`chunk_stats`,
        :meth:`finish_stats`). Both None (default): ``item_stats`` is per item already.

    Examples
    --------
    A metric with a global step: the per-item squared deviations from the items' mean, whose
    local statistic is the value itself.

    >>> import numpy as np
    >>> from evaluq.metrics import Metric
    >>> local = lambda t, p, k: (np.asarray(p) - np.asarray(t))[..., None]
    >>> centre = lambda s, k: (s - s.mean(axis=-2, keepdims=True)) ** 2
    >>> spread = Metric("spread", higher_is_better=False, kind="regression",
    ...                 item_stats=lambda t, p, k: centre(local(t, p, k), k),
    ...                 from_sums=lambda sums, total, k: sums[..., 0] / total,
    ...                 local_stats=local, global_stats=centre)
    >>> t, p = np.zeros(4), np.array([1.0, 2.0, 3.0, 4.0])
    >>> spread.item_local
    False
    >>> parts = [spread.chunk_stats(t[:1], p[:1], 0), spread.chunk_stats(t[1:], p[1:], 0)]
    >>> whole = spread.finish_stats(np.concatenate(parts, axis=-2), 0)
    >>> bool(np.array_equal(whole, spread.item_stats(t, p, 0))), float(spread(t, p))
    (True, 1.25)
    """

    name: str
    higher_is_better: bool
    kind: MetricKind
    item_stats: ItemStats
    from_sums: FromSums
    labels: tuple[Any, ...] | None = None
    target_class: Any = None
    bind: Callable[[np.ndarray], Metric] | None = field(default=None, repr=False, compare=False)
    local_stats: ItemStats | None = field(default=None, repr=False, compare=False)
    global_stats: GlobalStats | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_orientation(self.higher_is_better)
        if (self.local_stats is None) != (self.global_stats is None):
            raise ValueError(f"metric {self.name!r}: `local_stats` and `global_stats` go "
                             "together (both callables, or both None)")
        for name in ("item_stats", "from_sums", "local_stats", "global_stats"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"metric {self.name!r}: `{name}` must be callable; got "
                                f"{value!r}")

    @property
    def item_local(self) -> bool:
        """Whether :attr:`item_stats` of an item depends on that item alone (no global step)."""
        return self.global_stats is None

    def chunk_stats(self, targets: np.ndarray, predictions: np.ndarray,
                    n_classes: int = 0) -> np.ndarray:
        """The per-item statistics that depend on each item alone, for a chunk of items.

        :attr:`item_stats` for an item-local metric, else :attr:`local_stats`. Concatenate
        the chunks on axis -2 and pass them to :meth:`finish_stats`.

        Parameters
        ----------
        targets, predictions : numpy.ndarray
            Encoded items of one chunk, as for :attr:`item_stats`.
        n_classes : int, optional
            K (hard metrics).

        Returns
        -------
        numpy.ndarray
            ``(..., n, P)``.
        """
        fn = self.item_stats if self.local_stats is None else self.local_stats
        return np.asarray(fn(targets, predictions, n_classes), dtype=np.float64)

    def finish_stats(self, local: np.ndarray, n_classes: int = 0) -> np.ndarray:
        """The per-item statistics :attr:`from_sums` adds up, from every item's
        :meth:`chunk_stats` (items on axis -2, in item order): :attr:`global_stats` applied
        once, or ``local`` unchanged for an item-local metric.

        Parameters
        ----------
        local : numpy.ndarray
            ``(..., N, P)``: the chunks' local statistics joined.
        n_classes : int, optional
            K (hard metrics).

        Returns
        -------
        numpy.ndarray
            ``(..., N, S)``, equal to :attr:`item_stats` on the same items.
        """
        if self.global_stats is None:
            return local
        return np.asarray(self.global_stats(local, n_classes), dtype=np.float64)

    def for_labels(self, label_set: Sequence[Any] | np.ndarray | None) -> Metric:
        """The metric ready for class codes ``0..K-1`` of ``label_set`` (``labels[code]``).

        Every metric not tied to a label returns itself. A metric with ``target_class`` returns
        a copy whose statistics use that class's code, and raises if the label is not in
        ``label_set``; a metric with fixed ``labels`` checks that ``label_set`` is that set.
        Call it with ``PreparedInputs.labels`` before :meth:`weighted` on hard inputs.

        Parameters
        ----------
        label_set : sequence, numpy.ndarray or None
            The labels the inputs were encoded against, in code order (``labels[code]``);
            None when the inputs carry no label set (soft and regression inputs).

        Returns
        -------
        Metric
        """
        if self.labels is not None and (
            label_set is None or list(np.asarray(label_set).tolist()) != list(self.labels)
        ):
            shown = None if label_set is None else np.asarray(label_set).tolist()
            raise ValueError(f"metric {self.name!r} is defined on labels {list(self.labels)}; "
                             f"the inputs were encoded against {shown} (pass "
                             "`labels=metric.labels` when preparing them)")
        if self.bind is None:
            return self
        if label_set is None:
            raise ValueError(f"metric {self.name!r} needs the label set of the inputs")
        return self.bind(np.asarray(label_set))

    def check_encoded(self, targets: Any, predictions: Any, n_classes: int = 0, *,
                      caller: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Check encoded inputs against :attr:`kind` (what :func:`prepare_inputs` returns).

        Hard: integer class codes, targets ``(N,)``, predictions ``(..., N)``, codes in
        ``[0, n_classes)`` when ``n_classes > 0``. Soft: float probability rows, targets
        ``(N, K)``, predictions ``(..., N, K)``. Regression: real numbers, targets ``(N,)``,
        predictions ``(..., N)``. Raises ``TypeError`` / ``ValueError`` naming the argument
        (and ``caller``, default: the metric).

        Parameters
        ----------
        targets
            The encoded targets: codes ``(N,)`` (hard), probability rows ``(N, K)`` (soft) or
            values ``(N,)`` (regression).
        predictions
            The encoded predictions, with any leading axes: ``(..., N)`` or ``(..., N, K)``.
        n_classes
            K for hard metrics: every code must lie in ``[0, n_classes)``; 0 skips the range
            check.
        caller
            The name used in error messages (default: the metric).

        Returns
        -------
        tuple of numpy.ndarray
            ``(targets, predictions)`` as arrays.

        Examples
        --------
        >>> import numpy as np
        >>> from evaluq.metrics import get_metric
        >>> t, p = get_metric("accuracy").check_encoded([0, 1, 1], [0, 0, 1], 2)
        >>> t.tolist(), p.tolist()
        ([0, 1, 1], [0, 0, 1])
        """
        who = f"metric {self.name!r} is a {self.kind} metric" if caller is None else caller
        t, p = np.asarray(targets), np.asarray(predictions)
        if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) \
                or n_classes < 0:
            raise ValueError(f"`n_classes` must be a non-negative integer; got {n_classes!r}")
        core = 2 if self.kind == "soft" else 1
        allowed = {"hard": "iu", "soft": "iuf", "regression": "iuf"}[self.kind]
        what = {"hard": "integer class codes (see `prepare_inputs`)",
                "soft": "probability rows of shape (N, K) (see `prepare_inputs`)",
                "regression": "real numbers"}[self.kind]
        for name, arr, ndim_ok in (("targets", t, t.ndim == core),
                                   ("predictions", p, p.ndim >= core)):
            if arr.dtype.kind not in allowed or not ndim_ok:
                raise TypeError(f"{who}: `{name}` must "
                                f"hold {what}; got dtype {arr.dtype} with shape {arr.shape}")
        if p.shape[p.ndim - core:] != t.shape:
            raise ValueError(f"`predictions` of shape {p.shape} do not end in the shape of "
                             f"`targets` {t.shape} ({who})")
        if self.kind == "hard" and t.size:
            for name, arr in (("targets", t), ("predictions", p)):
                low, high = int(arr.min()), int(arr.max())
                if low < 0 or (n_classes > 0 and high >= n_classes):
                    raise ValueError(f"`{name}` holds class code {low if low < 0 else high}, "
                                     f"outside [0, n_classes) with n_classes={n_classes}")
        return t, p

    def __call__(self, targets: np.ndarray, predictions: np.ndarray,
                 n_classes: int = 0) -> np.ndarray:
        """Value of the metric on the full set of items (every weight 1).

        The inputs are encoded as :func:`prepare_inputs` returns them and are checked against
        the metric's :attr:`kind` (see :meth:`check_encoded`).
        """
        targets, predictions = self.check_encoded(targets, predictions, n_classes)
        stats = self.item_stats(targets, predictions, n_classes)
        n_items = stats.shape[-2]
        return self.from_sums(stats.sum(axis=-2), np.asarray(float(n_items)), n_classes)

    def weighted(self, targets: np.ndarray, predictions: np.ndarray, weights: np.ndarray,
                 n_classes: int = 0) -> np.ndarray:
        """Value of the metric under item weights.

        ``weights`` has shape ``(B, N)`` (for example bootstrap counts); the result has shape
        ``(..., B)`` where ``...`` are the leading axes of ``predictions``.

        Parameters
        ----------
        targets : numpy.ndarray
            ``(N,)`` class codes or real values, or ``(N, K)`` probability rows (soft).
        predictions : numpy.ndarray
            ``(..., N)`` or ``(..., N, K)``, as ``targets`` with leading axes.
        weights : numpy.ndarray
            ``(B, N)`` non-negative item weights (bootstrap counts, 0/1 masks).
        n_classes : int, optional
            K for hard metrics (the confusion statistics need it); default 0 (unused by
            soft and regression metrics).

        Returns
        -------
        numpy.ndarray
            Shape ``(..., B)``.

        Examples
        --------
        >>> import numpy as np
        >>> from evaluq.metrics import get_metric
        >>> acc = get_metric("accuracy")
        >>> y, yhat = np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0])
        >>> acc.weighted(y, yhat, np.array([[1.0, 1, 1, 1], [2, 0, 0, 2]]), 2)
        array([0.75, 1.  ])
        """
        targets, predictions = self.check_encoded(targets, predictions, n_classes)
        stats = self.item_stats(targets, predictions, n_classes)  # (..., N, S)
        return self.from_sums(weighted_sums(weights, stats), weights.sum(axis=-1), n_classes)


def weighted_sums(weights: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """``sums[..., b, s] = sum_n weights[b, n] * stats[..., n, s]``, exact for infinite stats.

    A plain matrix product gives ``0 * inf = nan`` for an item with an infinite statistic (a
    cross-entropy of ``+inf``) and weight 0; here such items are left out, as they would be
    from the explicitly resampled items, and a positive weight on them gives ``+-inf``.
    """
    finite = np.isfinite(stats)
    if finite.all():
        return np.einsum("bn,...ns->...bs", weights, stats, optimize=True)
    sums = np.einsum("bn,...ns->...bs", weights, np.where(finite, stats, 0.0), optimize=True)
    pos = np.einsum("bn,...ns->...bs", weights, (stats == np.inf).astype(np.float64))
    neg = np.einsum("bn,...ns->...bs", weights, (stats == -np.inf).astype(np.float64))
    nan = np.einsum("bn,...ns->...bs", weights, np.isnan(stats).astype(np.float64))
    sums = np.where(pos > 0, np.inf, sums)
    sums = np.where(neg > 0, -np.inf, sums)
    return np.where((nan > 0) | ((pos > 0) & (neg > 0)), np.nan, sums)


_REGISTRY: dict[str, Metric] = {}

CLIPPED_FAMILIES: dict[str, Callable[[float], Metric]] = {}
"""Metrics that also go by a name with ``eps``, ``"cross_entropy[eps=1e-12]"`` (the name of
the metric that factory makes): base name -> factory of ``eps`` (filled by
:mod:`evaluq.metrics.soft`)."""


def register_metric(metric: Metric) -> Metric:
    """Add a metric to the registry used by ``metric="name"`` arguments.

    Parameters
    ----------
    metric : Metric
        The metric; it is registered under ``metric.name`` and replaces a metric of that
        name.

    Returns
    -------
    Metric
        ``metric`` itself (so the call can wrap a definition).

    Examples
    --------
    A new metric is a :class:`Metric` (per-item statistics and a finaliser); registering it
    makes its name valid wherever a ``metric=`` name is accepted. The registry is global, so
    this example re-registers a built-in metric rather than adding one:

    >>> import numpy as np
    >>> from evaluq.metrics import Metric, get_metric, register_metric
    >>> error_rate = Metric(
    ...     "error_rate", higher_is_better=False, kind="hard",
    ...     item_stats=lambda t, p, k: (np.asarray(p) != np.asarray(t)).astype(float)[..., None],
    ...     from_sums=lambda sums, total, k: sums[..., 0] / total)
    >>> float(error_rate(np.array([0, 1, 1]), np.array([0, 0, 1])))
    0.3333333333333333
    >>> accuracy = get_metric("accuracy")
    >>> register_metric(accuracy) is accuracy
    True
    """
    if not isinstance(metric, Metric):
        raise TypeError(f"`metric` must be a Metric instance (see evaluq.metrics.Metric); got "
                        f"{metric!r} of type {type(metric).__name__}")
    _REGISTRY[metric.name] = metric
    return metric


def get_metric(metric: str | Metric) -> Metric:
    """Look a metric up by name (or return it unchanged).

    Parameters
    ----------
    metric : str or Metric
        A registered name (see :func:`available_metrics`; another name raises
        ``ValueError``), ``"cross_entropy[eps=1e-12]"`` or ``"kl[eps=1e-6]"`` (the metric
        with the predictions clipped at ``eps``:
        :func:`~evaluq.metrics.cross_entropy_metric`, :func:`~evaluq.metrics.kl_metric`),
        or a :class:`Metric`.

    Returns
    -------
    Metric

    Examples
    --------
    >>> from evaluq.metrics import get_metric
    >>> m = get_metric("accuracy")
    >>> m.name, m.kind, m.higher_is_better
    ('accuracy', 'hard', True)
    >>> get_metric("cross_entropy[eps=1e-12]").name
    'cross_entropy[eps=1e-12]'
    """
    if isinstance(metric, Metric):
        return metric
    if not isinstance(metric, str):
        raise TypeError(f"`metric` must be a metric name or a Metric; got {metric!r}")
    if metric in _REGISTRY:
        return _REGISTRY[metric]
    clipped = re.fullmatch(r"\s*(\w+)\[eps=([^\]]*)\]\s*", metric)
    if clipped and clipped.group(1) in CLIPPED_FAMILIES:
        try:
            eps = float(clipped.group(2))
        except ValueError:
            raise ValueError(f"`metric` {metric!r}: eps must be a number, as in "
                             f"'{clipped.group(1)}[eps=1e-12]'; got {clipped.group(2)!r}") from None
        return CLIPPED_FAMILIES[clipped.group(1)](eps)
    shown = ", ".join(sorted(_REGISTRY))
    families = " / ".join(sorted(CLIPPED_FAMILIES))
    raise ValueError(f"`metric` must be one of {shown}" + (
        f" (or {families} with predictions clipped at eps: "
        f"'{min(CLIPPED_FAMILIES)}[eps=1e-12]')" if CLIPPED_FAMILIES else "")
        + f"; got {metric!r}")


def available_metrics() -> list[str]:
    """Names of the registered metrics.

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> from evaluq.metrics import available_metrics
    >>> {"accuracy", "f1", "cross_entropy", "kl"} <= set(available_metrics())
    True
    """
    return sorted(_REGISTRY)


# --- accuracy: the reference implementation of the protocol -------------------------------------

def _accuracy_stats(targets: np.ndarray, predictions: np.ndarray, n_classes: int) -> np.ndarray:
    return (np.asarray(predictions) == np.asarray(targets)).astype(np.float64)[..., None]


def _accuracy_from_sums(sums: np.ndarray, total: np.ndarray, n_classes: int) -> np.ndarray:
    return sums[..., 0] / total


ACCURACY = register_metric(
    Metric("accuracy", higher_is_better=True, kind="hard",
           item_stats=_accuracy_stats, from_sums=_accuracy_from_sums)
)

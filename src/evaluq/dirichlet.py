r"""Soft metrics under label uncertainty: a Dirichlet posterior per item (formulas.md section 3).

Each item ``i`` has annotation counts ``n_i`` over ``K`` ordered classes. With a Dirichlet
prior ``alpha`` the posterior of the item's label distribution is ``p_i ~ Dir(a_i)``,
``a_i = alpha + n_i``, ``a_{i0} = sum_k a_{ik}``. The expected metrics average a soft metric
``M(p_i, q_i)`` between the (uncertain) target distribution and a model's prediction ``q_i``
over that posterior, so items with two annotations count as uncertain and items with two hundred
as nearly known (Magnani 2025).

Every expectation here is exact: closed forms with digamma functions (CE, KL, entropy), a closed
form with regularized incomplete beta functions (EMD) and, for the Jensen-Shannon divergence,
one-dimensional integrals over the Beta marginals evaluated by a fixed quadrature rule (exact to
about 1e-12). :func:`monte_carlo_expectation` is the paper's Monte Carlo route, kept as a
cross-check.

Conventions
-----------
- ``counts`` is an array of shape ``(n_items, K)`` (or ``(K,)`` for one item), a DataArray with
  ``item`` and ``class`` dims, or a :class:`DirichletPosterior` (then ``alpha`` is not given
  again). Raw annotations go through :func:`posterior_from_annotations`.
- ``q`` holds probability rows over the ``class`` axis: shape ``(K,)`` (one prediction for every
  item), ``(n_items, K)``, or a DataArray with a ``class`` dim and optional ``item`` and other
  dims (``model`` ...), which broadcast.
- Every ``expected_*`` function returns a DataArray of per-item values with an ``item`` dim
  (plus the prediction's other dims); ``result.mean("item")`` is the data-set metric. For a 1-D
  ``counts`` the ``item`` dim is dropped (a single value).

References
----------
Magnani, A. (2025). Soft Metrics for Ordinal Label Uncertainty with Variable Sample Sizes.
ASSE 2025. Formulas and errata: ``formulas.md`` section 3.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import betainc, digamma, expit, gammaln, xlogy

from evaluq._dims import CLASS, ITEM, MODEL
from evaluq._kernels import bootstrap_counts
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_confidence_level,
    check_int,
    check_rng,
)
from evaluq.metrics._soft import (
    _clip,
    cross_entropy_items,
    emd_items,
    entropy,
    js_divergence_items,
    kl_items,
)

__all__ = [
    "DEFAULT_BIN_EDGES",
    "DirichletPosterior",
    "by_annotation_count",
    "counts_from_annotations",
    "empirical_metric",
    "expected_cross_entropy",
    "expected_emd",
    "expected_entropy",
    "expected_jsd",
    "expected_kl",
    "expected_probs",
    "model_ranking",
    "monte_carlo_expectation",
    "posterior",
    "posterior_from_annotations",
]

Metric = Literal["cross_entropy", "kl", "entropy", "jsd", "emd"]
METRICS: tuple[str, ...] = ("cross_entropy", "kl", "entropy", "jsd", "emd")
_SHORT = {"cross_entropy": "CE", "kl": "KL", "entropy": "H", "jsd": "JSD", "emd": "EMD"}

DEFAULT_BIN_EDGES: tuple[int, ...] = (0, 2, 4, 6, 11, 21, 51, 101)
"""Lower edges of the annotation-count bins: 0-1, 2-3, 4-5, 6-10, 11-20, 21-50, 51-100, 101+."""

_PROB_ATOL = 1e-6
_CHUNK = 65_536  # (item x class) cells per chunk of the quadrature / Monte Carlo kernels


# --- the posterior ------------------------------------------------------------------------------

@dataclass(frozen=True)
class DirichletPosterior:
    """Dirichlet posteriors ``Dir(alpha + n_i)`` of the label distributions of many items.

    Attributes
    ----------
    concentration
        DataArray ``(item, class)`` of posterior parameters ``a_ik = alpha_k + n_ik``.
    alpha
        The prior concentration, shape ``(K,)``.
    single
        True when built from the counts of ONE item (a 1-D ``(K,)`` vector): results then drop
        the ``item`` dim (:meth:`expected_probs` and the ``expected_*`` functions alike), while
        :attr:`concentration` keeps it.
    """

    concentration: xr.DataArray
    alpha: np.ndarray
    single: bool = False

    @property
    def n_items(self) -> int:
        return int(self.concentration.sizes[ITEM])

    @property
    def n_classes(self) -> int:
        return int(self.concentration.sizes[CLASS])

    @property
    def counts(self) -> xr.DataArray:
        """The annotation counts ``n_ik`` (posterior minus prior)."""
        return (self.concentration - self.alpha).rename("counts")

    @property
    def n_annotations(self) -> xr.DataArray:
        """Annotations per item ``n_i = sum_k n_ik`` (``item`` dim)."""
        return self.counts.sum(CLASS).rename("n_annotations")

    def expected_probs(self) -> xr.DataArray:
        """Posterior mean ``E[p_ik] = a_ik / a_i0``: ``(item, class)``, or ``(class,)`` when the
        posterior was built from 1-D counts (as :func:`expected_probs`)."""
        a = self.concentration
        out = (a / a.sum(CLASS)).rename("expected_probs")
        return out.squeeze(ITEM, drop=True) if self.single else out

    def __repr__(self) -> str:
        n = self.n_annotations.values
        return (
            f"DirichletPosterior(n_items={self.n_items}, n_classes={self.n_classes}, "
            f"alpha={np.array2string(self.alpha, precision=3)}, "
            f"annotations per item {n.min():g}..{n.max():g})"
        )


def _check_alpha(alpha: Any, n_classes: int | None) -> np.ndarray:
    if isinstance(alpha, bool):
        raise TypeError(f"`alpha` must be a positive number or a vector of them; got {alpha!r}")
    arr = np.asarray(alpha, dtype=np.float64)
    if arr.ndim > 1:
        raise ValueError(f"`alpha` must be a scalar or a 1-D vector; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"`alpha` must be positive and finite (alpha > 0); got {alpha!r}")
    if arr.ndim == 1:
        if n_classes is not None and arr.shape[0] != n_classes:
            raise ValueError(
                f"`alpha` has {arr.shape[0]} entries but there are {n_classes} classes"
            )
        if arr.shape[0] < 2:
            raise ValueError(f"`alpha` needs at least 2 classes; got {arr.shape[0]}")
        return arr
    if n_classes is None:
        raise ValueError("`n_classes` is needed when `alpha` is a scalar")
    return np.full(n_classes, float(arr))


def _counts_array(counts: Any) -> tuple[xr.DataArray, bool]:
    """Counts as a DataArray (item, class); the flag says the input was one item (1-D)."""
    if isinstance(counts, xr.DataArray):
        missing = {ITEM, CLASS} - set(counts.dims)
        if counts.ndim == 1 and counts.dims == (CLASS,):
            return counts.expand_dims(ITEM).astype(np.float64), True
        if missing or counts.ndim != 2:
            raise ValueError(
                f"`counts` must have dims ({ITEM!r}, {CLASS!r}); got {counts.dims}"
            )
        da = counts.transpose(ITEM, CLASS).astype(np.float64)
        single = False
    else:
        arr = np.asarray(counts)
        if arr.dtype.kind not in "iuf" and arr.dtype != bool:
            raise TypeError(f"`counts` must be numeric; got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
        single = arr.ndim == 1
        if single:
            arr = arr[None, :]
        if arr.ndim != 2:
            raise ValueError(f"`counts` must be 2-D (items x classes); got shape {arr.shape}")
        da = xr.DataArray(arr, dims=(ITEM, CLASS))
    values = da.values
    if values.shape[0] == 0:
        raise ValueError("`counts` is empty (no items)")
    if values.shape[1] < 2:
        raise ValueError(f"`counts` needs at least 2 classes; got {values.shape[1]}")
    if not np.all(np.isfinite(values)):
        raise ValueError("`counts` contains NaN or infinite values")
    if np.any(values < 0):
        n_bad = int((values < 0).sum())
        raise ValueError(f"`counts` must be non-negative; got {n_bad} negative count(s)")
    return da, single


def posterior(counts: Any, *, alpha: float | Sequence[float] | np.ndarray = 1.0
              ) -> DirichletPosterior:
    r"""Dirichlet posterior of each item's label distribution from annotation counts.

    .. math:: p_i \mid n_i \sim \mathrm{Dir}(\alpha + n_i)

    Parameters
    ----------
    counts
        Annotation counts, shape ``(n_items, K)`` (or ``(K,)``), or a DataArray with ``item``
        and ``class`` dims. Non-negative; need not be integers (weighted annotations).
    alpha
        Prior concentration: a positive scalar (the same for every class; 1 is the uniform
        prior, 0.5 Jeffreys') or a vector of ``K`` positive values.

    Returns
    -------
    DirichletPosterior

    See Also
    --------
    posterior_from_annotations : the same from raw labels (a variable number per item).

    Examples
    --------
    >>> import evaluq as eq
    >>> post = eq.dirichlet.posterior([[1, 2, 4, 2, 1], [0, 0, 0, 0, 2]])
    >>> post.concentration.values.tolist()
    [[2.0, 3.0, 5.0, 3.0, 2.0], [1.0, 1.0, 1.0, 1.0, 3.0]]
    >>> post.n_annotations.values.tolist()
    [10.0, 2.0]
    """
    da, single = _counts_array(counts)
    return _posterior_from_counts(da, alpha, single)


def _posterior_from_counts(da: xr.DataArray, alpha: Any,
                           single: bool = False) -> DirichletPosterior:
    """The posterior from counts already validated by :func:`_counts_array`."""
    prior = _check_alpha(alpha, da.sizes[CLASS])
    conc = (da + xr.DataArray(prior, dims=(CLASS,))).rename("concentration")
    conc.attrs = {"kind": "dirichlet posterior concentration"}
    return DirichletPosterior(concentration=conc, alpha=prior, single=single)


def counts_from_annotations(
    annotations: Sequence[Sequence[int]] | pd.DataFrame,
    *,
    n_classes: int,
    item: str | None = None,
    label: str | None = None,
) -> xr.DataArray:
    """Annotation counts ``(item, class)`` from raw ordinal labels ``0..K-1``.

    Parameters
    ----------
    annotations
        Either a sequence with one sequence of labels per item (a variable number per item,
        possibly none), or a long table with one row per annotation (columns ``item`` and
        ``label``).
    n_classes
        ``K``; labels must be integers in ``[0, K)``. Always given explicitly, so that a class
        nobody chose is not silently left out.
    item, label
        Column names for a long table.

    Returns
    -------
    xarray.DataArray
        Counts with dims ``(item, class)``. For a table the ``item`` coordinate holds the sorted
        unique item ids (the result does not depend on the row order).

    Examples
    --------
    >>> import evaluq as eq
    >>> eq.dirichlet.counts_from_annotations([[2, 1, 2], [4, 4]], n_classes=5).values.tolist()
    [[0, 1, 2, 0, 0], [0, 0, 0, 0, 2]]
    """
    k = check_int("n_classes", n_classes, minimum=2)
    if isinstance(annotations, pd.DataFrame):
        if item is None or label is None:
            raise ValueError("a long table needs `item=` and `label=` column names")
        for arg, col in (("item", item), ("label", label)):
            if col not in annotations.columns:
                raise ValueError(f"column {col!r} (given as `{arg}`) is not in the table")
        if len(annotations) == 0:
            raise ValueError("`annotations` is empty")
        if annotations[item].isna().any():
            raise ValueError(f"column {item!r} contains missing item ids")
        codes, uniques = pd.factorize(annotations[item], sort=True)
        labels = _check_labels(annotations[label].to_numpy(), k)
        out = np.zeros((len(uniques), k), dtype=np.int64)
        np.add.at(out, (codes, labels), 1)
        return xr.DataArray(out, dims=(ITEM, CLASS), coords={ITEM: np.asarray(uniques)},
                            name="counts")
    if isinstance(annotations, str | bytes) or not isinstance(annotations, Sequence):
        raise TypeError(
            "`annotations` must be a sequence of label sequences or a DataFrame; "
            f"got {type(annotations).__name__}"
        )
    if len(annotations) == 0:
        raise ValueError("`annotations` is empty")
    lengths = np.array([len(row) for row in annotations])
    flat = (np.concatenate([np.asarray(row).ravel() for row in annotations])
            if lengths.sum() else np.zeros(0, dtype=np.int64))
    labels = _check_labels(flat, k)
    rows = np.repeat(np.arange(len(annotations)), lengths)
    out = np.zeros((len(annotations), k), dtype=np.int64)
    np.add.at(out, (rows, labels), 1)
    return xr.DataArray(out, dims=(ITEM, CLASS), name="counts")


def _check_labels(values: np.ndarray, n_classes: int) -> np.ndarray:
    values = np.asarray(values)
    if values.size == 0:
        return values.astype(np.int64)
    if values.dtype.kind == "f":
        if np.isnan(values).any():
            raise ValueError("annotation labels contain NaN")
        if np.any(values != np.round(values)):
            raise ValueError("annotation labels must be integers 0..K-1")
    elif values.dtype.kind not in "iu":
        raise TypeError(f"annotation labels must be integers 0..K-1; got dtype {values.dtype}")
    labels = values.astype(np.int64)
    bad = (labels < 0) | (labels >= n_classes)
    if bad.any():
        raise ValueError(
            f"annotation labels must be in [0, {n_classes - 1}] (n_classes={n_classes}); "
            f"got {labels[bad][0]}"
        )
    return labels


def posterior_from_annotations(
    annotations: Sequence[Sequence[int]] | pd.DataFrame,
    *,
    n_classes: int,
    alpha: float | Sequence[float] | np.ndarray = 1.0,
    item: str | None = None,
    label: str | None = None,
) -> DirichletPosterior:
    """Dirichlet posterior from raw ordinal labels (see :func:`counts_from_annotations`).

    Examples
    --------
    >>> import evaluq as eq
    >>> post = eq.dirichlet.posterior_from_annotations([[0, 1, 1, 2], [4, 4]], n_classes=5)
    >>> post.expected_probs().round(3).values.tolist()
    [[0.222, 0.333, 0.222, 0.111, 0.111], [0.143, 0.143, 0.143, 0.143, 0.429]]
    """
    counts = counts_from_annotations(annotations, n_classes=n_classes, item=item, label=label)
    return posterior(counts, alpha=alpha)


# --- input plumbing -----------------------------------------------------------------------------

def _as_posterior(counts: Any, alpha: Any) -> tuple[DirichletPosterior, bool]:
    if isinstance(counts, DirichletPosterior):
        if alpha is not None:
            raise ValueError("`alpha` is already part of the DirichletPosterior; do not pass it")
        return counts, counts.single
    da, single = _counts_array(counts)
    return _posterior_from_counts(da, 1.0 if alpha is None else alpha, single), single


def _as_q(q: Any, post: DirichletPosterior, name: str = "q") -> xr.DataArray:
    n_items, k = post.n_items, post.n_classes
    if isinstance(q, xr.DataArray):
        if CLASS not in q.dims:
            raise ValueError(f"`{name}` must have a {CLASS!r} dim; got {q.dims}")
        da = q.astype(np.float64)
        if ITEM in da.dims:
            if da.sizes[ITEM] != n_items:
                raise ValueError(
                    f"`{name}` has {da.sizes[ITEM]} items but the counts have {n_items}"
                )
            try:
                xr.align(da, post.concentration, join="exact")
            except ValueError as err:
                raise ValueError(
                    f"the {ITEM!r} coordinates of `{name}` and of the counts differ"
                ) from err
    else:
        arr = np.asarray(q, dtype=np.float64)
        if arr.ndim == 1:
            da = xr.DataArray(arr, dims=(CLASS,))
        elif arr.ndim == 2:
            if arr.shape[0] != n_items:
                raise ValueError(
                    f"`{name}` has shape {arr.shape} but the counts have {n_items} items"
                )
            da = xr.DataArray(arr, dims=(ITEM, CLASS),
                              coords={ITEM: post.concentration[ITEM]}
                              if ITEM in post.concentration.coords else None)
        else:
            raise ValueError(
                f"`{name}` must be 1-D (classes) or 2-D (items x classes) or a DataArray; "
                f"got shape {arr.shape}"
            )
    if da.sizes[CLASS] != k:
        raise ValueError(f"`{name}` has {da.sizes[CLASS]} classes but the counts have {k}")
    values = da.values
    if not np.all(np.isfinite(values)):
        raise ValueError(f"`{name}` contains NaN or infinite values")
    if np.any(values < 0):
        raise ValueError(f"`{name}` must be a probability distribution: it has negative entries")
    sums = values.sum(axis=da.get_axis_num(CLASS))
    if np.any(np.abs(sums - 1.0) > _PROB_ATOL):
        worst = float(sums.ravel()[np.argmax(np.abs(sums - 1.0).ravel())])
        raise ValueError(
            f"`{name}` must be a probability distribution over classes (rows summing to 1); "
            f"a row sums to {worst:g}"
        )
    return da


def _apply(kernel: Callable[..., np.ndarray], post: DirichletPosterior, q: xr.DataArray | None,
           single: bool, name: str, attrs: Mapping[str, Any]) -> xr.DataArray:
    args = [post.concentration] if q is None else [post.concentration, q]
    out = xr.apply_ufunc(kernel, *args, input_core_dims=[[CLASS]] * len(args),
                         keep_attrs=False)
    if ITEM in out.dims:
        out = out.transpose(..., ITEM)
    if single:
        out = out.squeeze(ITEM, drop=True)
    out.name = name
    out.attrs = dict(attrs)
    return out


# --- numpy kernels (classes on axis=-1) ---------------------------------------------------------

_GRID_MAX = 2**21  # largest value served from a lookup table by _special


def _special(func: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``func(x)`` for a scipy special function, via a lookup table when ``x`` lies on the
    half-integer grid (integer counts with alpha = 1, 0.5, 2, ...; the common case): the table
    holds ``func`` itself evaluated at the grid points, so the values are identical."""
    x = np.asarray(x, dtype=np.float64)
    if x.size < 4096:
        return func(x)
    doubled = 2.0 * x
    top = float(doubled.max()) if x.size else 0.0
    if top > _GRID_MAX or not np.array_equal(doubled, np.floor(doubled)) or doubled.min() < 1:
        return func(x)
    table = func(np.arange(int(top) + 1, dtype=np.float64) / 2.0)
    return table[doubled.astype(np.intp)]


def _posterior_mean(a: np.ndarray) -> np.ndarray:
    return a / a.sum(axis=-1, keepdims=True)


def _e_plogp(a: np.ndarray) -> np.ndarray:
    """``E[p_k log p_k]`` under ``Dir(a)``: ``(a_k/a0)(psi(a_k + 1) - psi(a0 + 1))``."""
    a0 = a.sum(axis=-1, keepdims=True)
    return a / a0 * (_special(digamma, a + 1.0) - _special(digamma, a0 + 1.0))


def _expected_entropy(a: np.ndarray) -> np.ndarray:
    return -_e_plogp(a).sum(axis=-1)


def _expected_cross_entropy(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    return cross_entropy_items(_posterior_mean(a), q)


def _expected_kl(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    return _expected_cross_entropy(a, q) - _expected_entropy(a)


def _expected_abs_dev(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``E|X - c|`` for ``X ~ Beta(a, b)``, elementwise.

    ``E|X - c| = mu (1 - 2 I_c(a+1, b)) - c (1 - 2 I_c(a, b))`` with ``mu = a/(a+b)``; using
    ``I_c(a+1, b) = I_c(a, b) - c^a (1-c)^b / (a B(a, b))`` this is
    ``(mu - c)(1 - 2 I_c(a, b)) + 2 c^a (1-c)^b / ((a+b) B(a, b))``: one incomplete beta.
    """
    a0 = a + b
    mu = a / a0
    cdf = betainc(a, b, c)
    with np.errstate(divide="ignore"):  # c = 0 or 1: log 0 = -inf times a, b > 0 -> exp(.) = 0
        log_term = (a * np.log(c) + b * np.log1p(-c) - _special(gammaln, a)
                    - _special(gammaln, b) + _special(gammaln, a0))
    return (mu - c) * (1.0 - 2.0 * cdf) + 2.0 * np.exp(log_term) / a0


def _cumsum_classes(x: np.ndarray) -> np.ndarray:
    """``np.cumsum(x, axis=-1)`` for 2-D ``x`` with few columns, one vector add per class
    (several times faster than numpy's strided cumsum over short rows; same values)."""
    out = np.empty_like(x)
    out[:, 0] = x[:, 0]
    for k in range(1, x.shape[1]):
        np.add(out[:, k - 1], x[:, k], out=out[:, k])
    return out


def _expected_emd(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``E[EMD]`` per row; rows are processed in cache-sized chunks (same values, less memory)."""
    a, q = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(q, dtype=np.float64))
    k = a.shape[-1]
    flat_a, flat_q = a.reshape(-1, k), q.reshape(-1, k)
    out = np.empty(flat_a.shape[0])
    step = 32_768
    for start in range(0, flat_a.shape[0], step):
        sl = slice(start, start + step)
        cum_a = _cumsum_classes(flat_a[sl])
        big_a = cum_a[:, :-1]
        big_b = cum_a[:, -1:] - big_a
        c = np.clip(_cumsum_classes(flat_q[sl])[:, :-1], 0.0, 1.0)
        out[sl] = _expected_abs_dev(big_a, big_b, c).sum(axis=-1) / (k - 1)
    return out.reshape(a.shape[:-1])


_TAIL_DROP = 34.0  # log-density drop at the ends of the quadrature range (e^-34 ~ 2e-15)
_MAX_STEP = 0.3  # largest trapezoid step in logit space (worst error 3e-14 on a grid of a, b, q)
_MAX_NODES = 8192


def _logit_range(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ends of the logit range where the log-density of ``Beta(a, b)`` is within
    ``_TAIL_DROP`` of its mode (Newton's method on the convex drop, from below the root)."""
    a0 = a + b
    mode = np.log(a) - np.log(b)
    peak = _logit_logdens(mode, a, a0)
    kappa = a * b / a0
    ends = []
    for sign in (-1.0, 1.0):
        d = np.sqrt(2.0 * _TAIL_DROP / kappa)  # at or below the root: drop(d) <= kappa d^2 / 2
        for _ in range(40):
            t = mode + sign * d
            drop = peak - _logit_logdens(t, a, a0)
            slope = sign * (a0 * expit(t) - a)  # d(drop)/dd > 0
            d = d - (drop - _TAIL_DROP) / slope
        ends.append(mode + sign * d)
    return ends[0], ends[1]


def _logit_logdens(t: np.ndarray, a: np.ndarray, a0: np.ndarray) -> np.ndarray:
    """Log-density of ``logit(X)``, ``X ~ Beta(a, a0 - a)``, up to a constant."""
    return a * t - a0 * np.logaddexp(0.0, t)


def _n_nodes(lo: np.ndarray, hi: np.ndarray, n_nodes: int) -> int:
    """Nodes needed so that the step is at most ``_MAX_STEP`` (at least ``n_nodes``)."""
    widest = float(np.max(hi - lo)) if lo.size else 0.0
    return int(min(_MAX_NODES, max(n_nodes, np.ceil(widest / _MAX_STEP) + 1)))


def _logit_beta_nodes(a: np.ndarray, b: np.ndarray, n_nodes: int,
                      ends: tuple[np.ndarray, np.ndarray] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``x`` and normalised weights ``w`` (shape ``a.shape + (N,)``) for ``E f(X)``.

    ``X ~ Beta(a, b)``. In ``t = logit(x)`` the density ``exp(a t) / (1 + e^t)^(a+b)`` is
    smooth, unimodal, log-concave and decays exponentially on both sides for every ``a, b > 0``
    (no endpoint singularity, even for ``a < 1``), and analytic in the strip ``|Im t| < pi``.
    The trapezoidal rule on such integrands converges exponentially in ``1/h`` (step ``h``;
    the rate is set by the strip width and the growth of ``(1 + e^t)^-(a+b)`` inside it), so
    equally spaced nodes spanning the range where the log-density is within ``_TAIL_DROP`` of
    its mode, with step at most ``_MAX_STEP``, are accurate to ~1e-13 for bounded ``f``
    analytic in that strip (``m log m`` with ``m = (x + q)/2`` is). Measured worst error on a
    grid of a in [0.1, 20], b in [0.2, 1000], q in [0, 0.9]: 7e-8 at h = 0.6, 2e-11 at h = 0.4,
    3e-14 at h = 0.3. ``N = max(n_nodes, range / _MAX_STEP)``: more nodes only for long
    tails (a or b well below 1).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a0 = a + b
    lo, hi = _logit_range(a, b) if ends is None else ends
    n = _n_nodes(lo, hi, n_nodes)
    grid = np.linspace(0.0, 1.0, n)
    t = lo[..., None] + (hi - lo)[..., None] * grid
    logw = _logit_logdens(t, a[..., None], a0[..., None])
    w = np.exp(logw - logw.max(axis=-1, keepdims=True))
    w[..., 0] *= 0.5
    w[..., -1] *= 0.5
    w /= w.sum(axis=-1, keepdims=True)
    return expit(t), w


def _expected_m_log_m(a: np.ndarray, b: np.ndarray, q: np.ndarray, n_nodes: int) -> np.ndarray:
    """``E[m log m]`` with ``m = (X + q)/2``, ``X ~ Beta(a, b)``, elementwise (chunked so that a
    chunk holds about 4 million node evaluations)."""
    a, b, q = np.broadcast_arrays(a, b, q)
    out = np.empty(a.shape)
    flat_a, flat_b, flat_q = (np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
                              for x in (a, b, q))
    flat_out = out.reshape(-1)
    lo, hi = _logit_range(flat_a, flat_b)
    step = max(1, _CHUNK * 64 // _n_nodes(lo, hi, n_nodes))
    for start in range(0, flat_a.size, step):
        sl = slice(start, start + step)
        x, w = _logit_beta_nodes(flat_a[sl], flat_b[sl], n_nodes, ends=(lo[sl], hi[sl]))
        m = (x + flat_q[sl, None]) / 2.0
        flat_out[sl] = (w * xlogy(m, m)).sum(axis=-1)
    return out


def _expected_jsd(a: np.ndarray, q: np.ndarray, n_nodes: int = 64) -> np.ndarray:
    a, q = np.broadcast_arrays(a, q)
    a0 = a.sum(axis=-1, keepdims=True)
    e_mlogm = _expected_m_log_m(a, a0 - a, q, n_nodes)
    e_h_m = -e_mlogm.sum(axis=-1)
    js = e_h_m - _expected_entropy(a) / 2.0 - entropy(q) / 2.0
    return np.maximum(js, 0.0)


# --- public expectations ------------------------------------------------------------------------

def expected_probs(counts: Any, *, alpha: Any = None) -> xr.DataArray:
    r"""Posterior mean of each item's label distribution.

    .. math:: E[p_{ik}] = \frac{\alpha_k + n_{ik}}{\alpha_0 + n_{i0}}

    Parameters
    ----------
    counts
        Counts ``(n_items, K)``, ``(K,)``, a DataArray ``(item, class)``, or a
        :class:`DirichletPosterior`.
    alpha
        Prior concentration (default 1, the uniform prior); not allowed with a posterior.

    Returns
    -------
    xarray.DataArray
        ``(item, class)`` (``(class,)`` for 1-D counts).

    Examples
    --------
    Two "excellent" ratings out of two, uniform prior: ``(1 + 2) / (5 + 2)``, not 1.

    >>> import evaluq as eq
    >>> eq.dirichlet.expected_probs([0, 0, 0, 0, 2]).round(4).values.tolist()
    [0.1429, 0.1429, 0.1429, 0.1429, 0.4286]
    >>> (eq.dirichlet.expected_probs([1, 2, 4, 2, 1]) * 15).round(6).values.tolist()
    [2.0, 3.0, 5.0, 3.0, 2.0]
    """
    post, _ = _as_posterior(counts, alpha)
    return post.expected_probs()  # drops ``item`` for a posterior of 1-D counts


def expected_cross_entropy(counts: Any, q: Any, *, alpha: Any = None,
                           eps: float | None = None) -> xr.DataArray:
    r"""Expected cross-entropy ``E[-sum_k p_k log q_k]`` under the Dirichlet posterior (nats).

    Exact, because the cross-entropy is linear in ``p``:

    .. math:: E[\mathrm{CE}(p, q)] = -\sum_k \frac{a_k}{a_0} \log q_k

    Parameters
    ----------
    counts
        Counts ``(n_items, K)``, ``(K,)``, a DataArray ``(item, class)``, or a
        :class:`DirichletPosterior`.
    q
        Predicted distributions: ``(K,)``, ``(n_items, K)`` or a DataArray with a ``class`` dim
        (and optional ``item``, ``model``, ... dims).
    alpha
        Prior concentration (default 1); not allowed with a posterior.
    eps
        ``None`` (default): ``q_k = 0`` gives ``+inf`` (the exact value, since ``a_k > 0``).
        A float clips ``q`` at ``eps`` and renormalises, as :mod:`evaluq.metrics` does.

    Returns
    -------
    xarray.DataArray
        Per-item values (dims: the prediction's other dims, then ``item``); ``.mean("item")``
        is the data-set value.

    Examples
    --------
    The label-uncertainty paper's Example 1 (counts [1, 2, 4, 2, 1], uniform prior):

    >>> import evaluq as eq
    >>> round(float(eq.dirichlet.expected_cross_entropy([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1])), 5)
    1.56323
    >>> round(float(eq.dirichlet.expected_cross_entropy([1, 2, 4, 2, 1], [.1, .3, .3, .2, .1])), 5)
    1.57803

    See Also
    --------
    expected_kl, monte_carlo_expectation
    """
    post, single = _as_posterior(counts, alpha)
    qa = _as_q(q, post)

    def kernel(a: np.ndarray, qq: np.ndarray) -> np.ndarray:
        return _expected_cross_entropy(a, _clip(qq, eps))

    return _apply(kernel, post, qa, single, "expected_cross_entropy",
                  {"metric": "E[CE]", "units": "nats", "method": "exact"})


def expected_entropy(counts: Any, *, alpha: Any = None) -> xr.DataArray:
    r"""Expected Shannon entropy of the label distribution under ``Dir(a)`` (nats).

    .. math::

        E[p_k \log p_k] = \frac{a_k}{a_0}\,(\psi(a_k + 1) - \psi(a_0 + 1)), \qquad
        E[H(p)] = -\sum_k \frac{a_k}{a_0}\,(\psi(a_k + 1) - \psi(a_0 + 1))

    (The paper's public code drops the ``+1`` inside both digammas, which is off by
    ``(K - 1)/a_0`` and can go negative; its appendix calls ``E[p_k log p_k]`` the derivative
    of ``log B(a)``, which is ``E[log p_k]`` instead. The final formula above is right.)

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.dirichlet.expected_entropy([1, 2, 4, 2, 1])), 5)
    1.42378
    >>> round(float(eq.dirichlet.expected_entropy([0, 0, 0, 0, 2])), 5)
    1.23571
    """
    post, single = _as_posterior(counts, alpha)
    return _apply(_expected_entropy, post, None, single, "expected_entropy",
                  {"metric": "E[H]", "units": "nats", "method": "exact"})


def expected_kl(counts: Any, q: Any, *, alpha: Any = None,
                eps: float | None = None) -> xr.DataArray:
    r"""Expected KL divergence ``E[KL(p || q)]`` under the Dirichlet posterior (nats).

    .. math::

        E[\mathrm{KL}(p \| q)] = \sum_k \frac{a_k}{a_0}
            \left(\psi(a_k + 1) - \psi(a_0 + 1) - \log q_k\right)
            = E[\mathrm{CE}(p, q)] - E[H(p)]

    Vectorised: one digamma per (item, class). Parameters as in
    :func:`expected_cross_entropy`.

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.dirichlet.expected_kl([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1])), 5)
    0.13944
    >>> round(float(eq.dirichlet.expected_kl([1, 2, 4, 2, 1], [.1, .3, .3, .2, .1])), 5)
    0.15424
    >>> round(float(eq.dirichlet.expected_kl([0, 0, 0, 0, 2], [.2, .2, .2, .2, .2])), 5)
    0.37372
    """
    post, single = _as_posterior(counts, alpha)
    qa = _as_q(q, post)

    def kernel(a: np.ndarray, qq: np.ndarray) -> np.ndarray:
        return _expected_kl(a, _clip(qq, eps))

    return _apply(kernel, post, qa, single, "expected_kl",
                  {"metric": "E[KL]", "units": "nats", "method": "exact"})


def expected_jsd(counts: Any, q: Any, *, alpha: Any = None, n_nodes: int = 64
                 ) -> xr.DataArray:
    r"""Expected Jensen-Shannon divergence ``E[JSD(p, q)]`` under the Dirichlet posterior (nats).

    .. math::

        E[\mathrm{JSD}] = E[H(m)] - \tfrac12 E[H(p)] - \tfrac12 H(q), \qquad
        E[H(m)] = -\sum_k E[m_k \log m_k], \quad m_k = (p_k + q_k)/2

    Each ``E[m_k log m_k]`` is a one-dimensional integral over the Beta marginal
    ``p_k ~ Beta(a_k, a_0 - a_k)``, evaluated by the trapezoidal rule in ``logit(p_k)``, where
    the Beta density is smooth and decays exponentially for every ``a, b > 0`` (so the rule
    converges exponentially; error below 1e-12, checked against :func:`scipy.integrate.quad`).
    No Monte Carlo needed.

    Parameters
    ----------
    counts, q, alpha
        As in :func:`expected_cross_entropy`.
    n_nodes
        Quadrature nodes per (item, class) (default 64; more are used automatically
        where a Beta marginal has a long tail, i.e. a concentration well below 1).

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.dirichlet.expected_jsd([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1])), 5)
    0.03427
    >>> round(float(eq.dirichlet.expected_jsd([1, 2, 4, 2, 1], [.1, .3, .3, .2, .1])), 5)
    0.03868
    >>> round(float(eq.dirichlet.expected_jsd([0, 0, 0, 0, 2], [.2, .2, .2, .2, .2])), 5)
    0.09746
    """
    n = check_int("n_nodes", n_nodes, minimum=16)
    post, single = _as_posterior(counts, alpha)
    qa = _as_q(q, post)

    def kernel(a: np.ndarray, qq: np.ndarray) -> np.ndarray:
        return _expected_jsd(a, qq, n)

    return _apply(kernel, post, qa, single, "expected_jsd",
                  {"metric": "E[JSD]", "units": "nats", "method": f"quadrature ({n} nodes)"})


def expected_emd(counts: Any, q: Any, *, alpha: Any = None) -> xr.DataArray:
    r"""Expected ordinal Earth Mover's Distance ``E[EMD(p, q)]``: exact, in closed form.

    With ground distance ``|i - j| / (K - 1)``,
    ``EMD(p, q) = (1/(K-1)) sum_{k<K} |F_p(k) - F_q(k)|``. By Dirichlet aggregation
    ``F_p(k) ~ Beta(A_k, a_0 - A_k)``, ``A_k = a_1 + ... + a_k``, and for ``X ~ Beta(a, b)``,
    ``mu = a/(a+b)``:

    .. math::

        E|X - c| = \mu\,(1 - 2 I_c(a+1, b)) - c\,(1 - 2 I_c(a, b))
                 = (\mu - c)(1 - 2 I_c(a, b)) + \frac{2\, c^a (1-c)^b}{(a+b)\, B(a, b)}

    so ``E[EMD]`` costs ``K - 1`` incomplete beta functions per item. The paper estimates it by
    Monte Carlo with 1000 draws (standard error about 0.007); see
    :func:`monte_carlo_expectation` for that route.

    Examples
    --------
    >>> import evaluq as eq
    >>> round(float(eq.dirichlet.expected_emd([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1])), 5)
    0.08228
    >>> round(float(eq.dirichlet.expected_emd([1, 2, 4, 2, 1], [.1, .3, .3, .2, .1])), 5)
    0.08599
    >>> round(float(eq.dirichlet.expected_emd([0, 0, 0, 0, 2], [.2, .2, .2, .2, .2])), 5)
    0.18225
    """
    post, single = _as_posterior(counts, alpha)
    qa = _as_q(q, post)
    return _apply(_expected_emd, post, qa, single, "expected_emd",
                  {"metric": "E[EMD]", "method": "exact"})


# --- Monte Carlo cross-check --------------------------------------------------------------------

def _empirical_kernel(metric: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return {
        "cross_entropy": cross_entropy_items,
        "kl": kl_items,
        "entropy": lambda p, q: entropy(p),
        "jsd": js_divergence_items,
        "emd": emd_items,
    }[metric]


def _mc_kernel(a: np.ndarray, q: np.ndarray, metric: str, n_draws: int,
               rng: np.random.Generator) -> np.ndarray:
    """Monte Carlo mean and standard error over the last axis of the output (2 values)."""
    a, q = np.broadcast_arrays(a, q)
    shape = a.shape[:-1]
    k = a.shape[-1]
    flat_a = a.reshape(-1, k)
    flat_q = q.reshape(-1, k)
    f = _empirical_kernel(metric)
    out = np.empty((flat_a.shape[0], 2))
    step = max(1, _CHUNK * 16 // n_draws)
    for start in range(0, flat_a.shape[0], step):
        sl = slice(start, start + step)
        g = rng.standard_gamma(flat_a[sl, None, :], size=(flat_a[sl].shape[0], n_draws, k))
        p = g / g.sum(axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = f(p, flat_q[sl, None, :])
        out[sl, 0] = vals.mean(axis=-1)
        out[sl, 1] = vals.std(axis=-1, ddof=1) / np.sqrt(n_draws)
    return out.reshape((*shape, 2))


def monte_carlo_expectation(
    counts: Any,
    q: Any = None,
    *,
    metric: Metric,
    alpha: Any = None,
    n_draws: int = 1000,
    rng: RNGLike = None,
) -> xr.Dataset:
    """Monte Carlo estimate of an expected soft metric (the paper's route; a cross-check).

    Draws ``n_draws`` label distributions ``p ~ Dir(a_i)`` per item (through Gamma variates)
    and averages the empirical metric from :mod:`evaluq.metrics`.

    Parameters
    ----------
    counts, q, alpha
        As in :func:`expected_cross_entropy` (``q`` is ignored for ``metric="entropy"``).
    metric
        ``"cross_entropy"``, ``"kl"``, ``"entropy"``, ``"jsd"`` or ``"emd"``.
    n_draws
        Posterior draws per item (the paper uses 1000).
    rng
        Seed or Generator; the same ``rng`` gives the same numbers.

    Returns
    -------
    xarray.Dataset
        ``estimate`` and ``standard_error`` (the SD of the draws over ``sqrt(n_draws)``), per
        item, with the same dims as the exact function's result.

    Examples
    --------
    >>> import evaluq as eq
    >>> mc = eq.dirichlet.monte_carlo_expectation([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1],
    ...                                           metric="emd", n_draws=100_000, rng=0)
    >>> exact = eq.dirichlet.expected_emd([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1])
    >>> bool(abs(mc.estimate - exact) < 4 * mc.standard_error)
    True
    """
    check_choice("metric", metric, METRICS)
    n = check_int("n_draws", n_draws, minimum=2)
    gen = check_rng(rng)
    post, single = _as_posterior(counts, alpha)
    if metric == "entropy":
        q = np.full(post.n_classes, 1.0 / post.n_classes) if q is None else q
    elif q is None:
        raise ValueError(f"`q` is needed for metric={metric!r}")
    qa = _as_q(q, post)
    out = xr.apply_ufunc(
        lambda a, qq: _mc_kernel(a, qq, metric, n, gen), post.concentration, qa,
        input_core_dims=[[CLASS], [CLASS]], output_core_dims=[["stat"]], keep_attrs=False,
    )
    if ITEM in out.dims:
        out = out.transpose(..., ITEM, "stat")
    if single:
        out = out.squeeze(ITEM, drop=True)
    ds = xr.Dataset({"estimate": out.isel(stat=0, drop=True),
                     "standard_error": out.isel(stat=1, drop=True)})
    ds.attrs = {"metric": f"E[{_SHORT[metric]}]", "method": "monte_carlo", "n_draws": n}
    return ds


# --- reporting: per-bin tables and model rankings ------------------------------------------------

def empirical_metric(counts: Any, q: Any, *, metric: Metric) -> xr.DataArray:
    """A soft metric against the raw annotation frequencies ``n_i / n_i0`` (no posterior).

    The "empirical" side of the label-uncertainty paper's tables, per item, with the same
    conventions as the ``expected_*`` functions (``item`` dim, ``.mean("item")``).

    Parameters
    ----------
    counts
        Counts ``(n_items, K)``, ``(K,)``, a DataArray ``(item, class)`` or a
        :class:`DirichletPosterior` (its counts are used); every item needs an annotation.
    q
        Predicted distributions (as in :func:`expected_cross_entropy`).
    metric
        ``"cross_entropy"``, ``"kl"``, ``"jsd"`` or ``"emd"``.

    Examples
    --------
    The label-uncertainty paper's Example 2 (scenario A): KL = 0.8318 and CE = 1.3322 nats
    (the paper prints 0.97 and 1.83), EMD = 0.15.

    >>> import evaluq as eq
    >>> p, q = [0, 8, 2, 0, 0], [0, 0.2, 0.8, 0, 0]
    >>> [round(float(eq.dirichlet.empirical_metric(p, q, metric=m)), 4)
    ...  for m in ("kl", "cross_entropy", "emd")]
    [0.8318, 1.3322, 0.15]
    """
    check_choice("metric", metric, ("cross_entropy", "kl", "jsd", "emd"))
    if isinstance(counts, DirichletPosterior):
        post, single = counts, counts.single
    else:
        post, single = _as_posterior(counts, None)
    qa = _as_q(q, post)
    n_ann = post.n_annotations
    if bool((n_ann <= 0).any()):
        raise ValueError("an item has no annotations: the empirical metrics are undefined")
    freq = post.counts / n_ann
    out = xr.apply_ufunc(_empirical_kernel(metric), freq, qa,
                         input_core_dims=[[CLASS], [CLASS]], keep_attrs=False)
    if ITEM in out.dims:
        out = out.transpose(..., ITEM)
    if single:
        out = out.squeeze(ITEM, drop=True)
    out.name = f"empirical_{metric}"
    out.attrs = {"metric": f"{_SHORT[metric]} empirical", "method": "raw frequencies"}
    return out


def _bin_labels(edges: Sequence[int]) -> list[str]:
    labels = []
    for lo, hi in zip(edges, [*edges[1:], None], strict=True):
        if hi is None:
            labels.append(f"{lo}+")
        elif hi - 1 == lo:
            labels.append(f"{lo}")
        else:
            labels.append(f"{lo}-{hi - 1}")
    return labels


def _check_edges(edges: Sequence[int]) -> list[int]:
    if isinstance(edges, str | bytes) or not isinstance(edges, Sequence) or len(edges) == 0:
        raise ValueError(f"`bins` must be a non-empty sequence of lower edges; got {edges!r}")
    out: list[int] = []
    for e in edges:
        if isinstance(e, bool) or not isinstance(e, numbers.Integral) or e < 0:
            raise ValueError(f"`bins` must hold non-negative integers; got {edges!r}")
        out.append(int(e))
    if any(b <= a for a, b in itertools.pairwise(out)):
        raise ValueError(f"`bins` must be strictly increasing; got {edges!r}")
    return out


def by_annotation_count(
    values: xr.DataArray | xr.Dataset | Mapping[Hashable, xr.DataArray],
    n_annotations: Any,
    *,
    bins: Sequence[int] = DEFAULT_BIN_EDGES,
) -> pd.DataFrame:
    """Mean per-item values in bins of the annotation count (the paper's per-bin table).

    Parameters
    ----------
    values
        Per-item values with an ``item`` dim: a DataArray (other dims, e.g. ``model``, become
        columns), a Dataset or a mapping of name -> DataArray (e.g. ``{"CE_emp": ...,
        "E[CE]": ...}``).
    n_annotations
        Annotations per item (``DirichletPosterior.n_annotations``), same length as ``item``.
    bins
        Lower edges of the bins: ``(0, 2, 4, 6, 11, ...)`` gives 0-1, 2-3, 4-5, 6-10, 11+.
        Every item must fall in a bin (nothing is dropped): the first edge must not exceed the
        smallest count.

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin (index ``n_bin``), a ``count`` column, then one column per
        value. When the values have another dim (``model``) the columns are a MultiIndex of
        ``(name, model)`` pairs and the count column is ``("count", "")``.

    Examples
    --------
    >>> import evaluq as eq
    >>> post = eq.dirichlet.posterior([[1, 1, 0], [2, 1, 0], [0, 5, 1]])
    >>> ece = eq.dirichlet.expected_cross_entropy(post, [.2, .6, .2])
    >>> eq.dirichlet.by_annotation_count({"E[CE]": ece}, post.n_annotations, bins=[2, 4]).round(4)
           count   E[CE]
    n_bin
    2-3        2  1.2066
    4+         1  0.8770
    """
    edges = _check_edges(bins)
    n = np.asarray(n_annotations.values if isinstance(n_annotations, xr.DataArray)
                   else n_annotations, dtype=np.float64)
    if isinstance(values, xr.DataArray):
        values = {values.name if values.name is not None else "value": values}
    items = dict(values.data_vars.items()) if isinstance(values, xr.Dataset) else dict(values)
    if not items:
        raise ValueError("`values` is empty")
    if n.ndim != 1:
        raise ValueError(f"`n_annotations` must be 1-D; got shape {n.shape}")
    if n.min() < edges[0]:
        raise ValueError(
            f"an item has {n.min():g} annotations, below the first bin edge {edges[0]}; "
            "add a lower edge to `bins`"
        )
    which = np.searchsorted(np.asarray(edges), n, side="right") - 1
    labels = np.asarray(_bin_labels(edges))
    frame: dict[Any, Any] = {}
    for name, da in items.items():
        if ITEM not in da.dims or da.sizes[ITEM] != n.size:
            raise ValueError(
                f"values {name!r} need an {ITEM!r} dim of length {n.size}; got {dict(da.sizes)}"
            )
        other = [d for d in da.dims if d != ITEM]
        if len(other) > 1:
            raise ValueError(f"values {name!r} may have one dim besides {ITEM!r}; got {da.dims}")
        arr = da.transpose(*other, ITEM).values.reshape(-1, n.size)
        cols = [name] if not other else [(name, c) for c in da[other[0]].values.tolist()]
        for col, row in zip(cols, arr, strict=True):
            frame[col] = row
    count_col: Any = "count"
    if any(isinstance(col, tuple) for col in frame):
        frame = {(col if isinstance(col, tuple) else (col, "")): v for col, v in frame.items()}
        count_col = ("count", "")
    df = pd.DataFrame({count_col: np.ones(n.size, dtype=np.int64), **frame})
    bin_of_item = pd.Series(pd.Categorical(labels[which], categories=labels, ordered=True))
    grouped = df.groupby(bin_of_item, observed=True)
    out = grouped.mean()
    out[count_col] = grouped.size().astype(int)
    out.index.name = "n_bin"
    out.index = pd.Index(out.index.astype(str), name="n_bin")
    return out


def model_ranking(
    counts: Any,
    predictions: xr.DataArray | Mapping[Hashable, Any],
    *,
    alpha: Any = None,
    metrics: Sequence[Metric] = ("cross_entropy", "emd"),
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> pd.DataFrame:
    r"""Rank models under empirical and expected metrics (the paper's model-ranking table),
    with a bootstrap over items saying how firm each ranking is.

    For each metric, the empirical version compares the prediction with the raw annotation
    frequencies ``n_i / n_i0`` and the expected version averages it over the Dirichlet posterior.
    Both are means over items; lower is better for all of them.

    The items are then resampled with replacement ``n_resamples`` times (the same resamples
    for every metric and model, so differences between models are paired). With ``c_b`` the
    bootstrap counts of resample b and ``v_mi`` the per-item value of model m,

    .. math:: \bar v^{*}_{mb} = \frac1N \sum_i c_{bi}\, v_{mi}

    (one matrix product); ``se`` is the SD of the resample means, ``lower`` / ``upper`` their
    equal-tailed percentile interval at ``confidence_level``, and ``p_best`` the fraction of
    resamples in which the observed best model is still best (ties count as best). The
    per-item posterior expectations are held fixed: the bootstrap measures how much the
    ranking depends on which items were annotated, not the annotation noise within an item
    (that is what the expected metrics average over).

    Parameters
    ----------
    counts
        Counts or a :class:`DirichletPosterior` (every item needs at least one annotation for
        the empirical metrics).
    predictions
        A DataArray with ``model``, ``item`` and ``class`` dims, or a mapping of model name ->
        ``(n_items, K)`` array.
    alpha
        Prior concentration (default 1).
    metrics
        Any of ``"cross_entropy"``, ``"kl"``, ``"jsd"``, ``"emd"``.
    n_resamples
        Bootstrap resamples of the items; 0 skips the bootstrap (only the first columns).
    confidence_level
        Level of the percentile intervals.
    rng
        Seed or Generator for the bootstrap.

    Returns
    -------
    pandas.DataFrame
        Rows ``"CE empirical"``, ``"E[CE]"``, ... ; one column per model (the mean over items),
        then ``best`` (the model with the lowest value); with a bootstrap also ``p_best`` and,
        per model ``m``, ``"m se"``, ``"m lower"`` and ``"m upper"``.

    See Also
    --------
    evaluq._kernels.bootstrap_counts

    Examples
    --------
    >>> import evaluq as eq
    >>> counts = [[0, 2, 1, 0, 0], [0, 0, 1, 1, 0], [3, 1, 0, 0, 0]]
    >>> preds = {"A": [[0, .7, .3, 0, 0], [0, 0, .5, .5, 0], [.7, .3, 0, 0, 0]],
    ...          "B": [[.1, .5, .2, .1, .1], [.1, .1, .3, .4, .1], [.5, .3, .1, .05, .05]]}
    >>> table = eq.dirichlet.model_ranking(counts, preds, metrics=["emd"], rng=0)
    >>> table["best"].tolist()
    ['A', 'B']
    >>> table.columns.tolist()
    ['A', 'B', 'best', 'p_best', 'A se', 'A lower', 'A upper', 'B se', 'B lower', 'B upper']
    """
    post, _ = _as_posterior(counts, alpha)
    if post.single:  # keep the item dim: the ranking averages over items
        post = DirichletPosterior(concentration=post.concentration, alpha=post.alpha)
    n_boot = check_int("n_resamples", n_resamples, minimum=0)
    level = check_confidence_level(confidence_level)
    gen = check_rng(rng)
    if isinstance(predictions, xr.DataArray):
        if MODEL not in predictions.dims:
            raise ValueError(f"`predictions` must have a {MODEL!r} dim; got {predictions.dims}")
        preds = predictions
    else:
        if not predictions:
            raise ValueError("`predictions` is empty")
        names = list(predictions)
        arrays = [np.asarray(predictions[m], dtype=np.float64) for m in names]
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            raise ValueError(f"every model's predictions need the same shape; got {shapes}")
        preds = xr.DataArray(np.stack(arrays), dims=(MODEL, ITEM, CLASS),
                             coords={MODEL: names})
    qa = _as_q(preds, post, name="predictions")
    for m in metrics:
        check_choice("metrics", m, ("cross_entropy", "kl", "jsd", "emd"))
    exact = {"cross_entropy": expected_cross_entropy, "kl": expected_kl,
             "jsd": expected_jsd, "emd": expected_emd}
    per_item = {}
    for m in metrics:
        per_item[f"{_SHORT[m]} empirical"] = empirical_metric(post, qa, metric=m)
        per_item[f"E[{_SHORT[m]}]"] = exact[m](post, qa)
    rows = {name: da.mean(ITEM) for name, da in per_item.items()}
    df = pd.DataFrame({name: da.to_series() for name, da in rows.items()}).T
    df.columns.name = MODEL
    df["best"] = df.idxmin(axis=1)
    if n_boot == 0:
        return df
    models = list(df.columns[:-1])
    # (rows, models, items) -> resample means (n_boot, rows, models), chunked over resamples
    values = np.stack([per_item[name].transpose(MODEL, ITEM).values for name in rows])
    n_rows, n_models, n_items = values.shape
    flat = values.reshape(-1, n_items).T  # (items, rows * models)
    # a prediction of 0 where the truth has mass gives an infinite CE / KL for that item: a
    # resample mean is infinite iff it draws such an item (0 * inf would give NaN)
    infinite = np.isposinf(flat)
    finite = np.where(infinite, 0.0, flat)
    means = np.empty((n_boot, n_rows * n_models))
    step = max(1, 4_000_000 // n_items)
    for start in range(0, n_boot, step):
        k = min(step, n_boot - start)
        c = bootstrap_counts(gen, n_items, k)
        block = c @ finite / n_items
        if infinite.any():
            block[(c @ infinite) > 0] = np.inf
        means[start:start + k] = block
    means = means.reshape(n_boot, n_rows, n_models)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):  # inf - inf where resample means are infinite
        se = means.std(axis=0, ddof=1) if n_boot > 1 else np.full((n_rows, n_models), np.nan)
        lower, upper = np.quantile(means, [tail, 1.0 - tail], axis=0)
    se = np.where(np.isinf(means).any(axis=0), np.inf, se)
    # the only NaN a percentile can get is from interpolating between two infinite means
    lower, upper = np.nan_to_num(lower, nan=np.inf), np.nan_to_num(upper, nan=np.inf)
    best = np.asarray(df[models].to_numpy(dtype=np.float64).argmin(axis=1))
    best_means = np.take_along_axis(means, best[None, :, None], axis=2)[..., 0]
    df["p_best"] = (best_means <= means.min(axis=2)).mean(axis=0)
    for j, model in enumerate(models):
        df[f"{model} se"] = se[:, j]
        df[f"{model} lower"] = lower[:, j]
        df[f"{model} upper"] = upper[:, j]
    df.attrs = {"n_resamples": n_boot, "confidence_level": level}
    return df

"""The Dirichlet posterior of each item's label distribution, and the input plumbing shared by
the expectations (counts, predictions ``q``, the xarray wrapper of the numpy kernels)."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._apply import apply_items, as_dims, check_values
from evaluq._deprecation import renamed_argument
from evaluq._dims import CLASS, ITEM
from evaluq._validation import check_int, check_real

Metric = Literal["cross_entropy", "kl", "entropy", "jsd", "emd"]
METRICS: tuple[str, ...] = ("cross_entropy", "kl", "entropy", "jsd", "emd")
_SHORT = {"cross_entropy": "CE", "kl": "KL", "entropy": "H", "jsd": "JSD", "emd": "EMD"}

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
    item_dims
        The dims that index the items (default ``("item",)``; see ``dim=`` of
        :func:`posterior`).
    """

    concentration: xr.DataArray
    alpha: np.ndarray
    single: bool = False
    item_dims: tuple[Hashable, ...] = (ITEM,)

    @property
    def prior(self) -> np.ndarray:
        """The prior concentration (the ``prior=`` argument), shape ``(K,)``; same as
        :attr:`alpha`."""
        return self.alpha

    @property
    def n_items(self) -> int:
        return math.prod(int(self.concentration.sizes[d]) for d in self.item_dims)

    @property
    def n_classes(self) -> int:
        return int(self.concentration.sizes[CLASS])

    @property
    def counts(self) -> xr.DataArray:
        """The annotation counts ``n_ik`` (posterior minus prior)."""
        return (self.concentration - self.alpha).rename("counts")

    @property
    def n_annotations(self) -> xr.DataArray:
        """Annotations per item ``n_i = sum_k n_ik`` (the item dims)."""
        return self.counts.sum(CLASS).rename("n_annotations")

    def expected_probs(self) -> xr.DataArray:
        """Posterior mean ``E[p_ik] = a_ik / a_i0``: ``(item, class)``, or ``(class,)`` when the
        posterior was built from 1-D counts (as :func:`expected_probs`)."""
        a = self.concentration
        out = (a / a.sum(CLASS)).rename("expected_probs")
        return out.squeeze(self.item_dims, drop=True) if self.single else out

    def __repr__(self) -> str:
        n = self.n_annotations.values
        return (
            f"DirichletPosterior(n_items={self.n_items}, n_classes={self.n_classes}, "
            f"alpha={np.array2string(self.alpha, precision=3)}, "
            f"annotations per item {n.min():g}..{n.max():g})"
        )


def _check_prior(alpha: Any, n_classes: int | None) -> np.ndarray:
    if isinstance(alpha, bool):
        raise TypeError(f"`prior` must be a positive number or a vector of them; got {alpha!r}")
    raw = np.asarray(alpha.values if isinstance(alpha, xr.DataArray) else alpha)
    _check_numeric("prior", raw.dtype)
    arr = raw.astype(np.float64)
    if arr.ndim > 1:
        raise ValueError(f"`prior` must be a scalar or a 1-D vector; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"`prior` must be positive and finite (prior > 0); got {alpha!r}")
    if arr.ndim == 1:
        if n_classes is not None and arr.shape[0] != n_classes:
            raise ValueError(
                f"`prior` has {arr.shape[0]} entries but there are {n_classes} classes"
            )
        if arr.shape[0] < 2:
            raise ValueError(f"`prior` needs at least 2 classes; got {arr.shape[0]}")
        return arr
    if n_classes is None:
        raise ValueError("`n_classes` is needed when `prior` is a scalar")
    return np.full(n_classes, float(arr))


def _check_numeric(name: str, dtype: np.dtype[Any]) -> None:
    """Integers and reals only: bool (a mask, not a count or a probability), str, object
    and complex arrays raise ``TypeError`` naming the argument."""
    if dtype.kind not in "iuf":
        what = "bool" if dtype.kind == "b" else str(dtype)
        raise TypeError(f"`{name}` must be numeric (int or float); got dtype {what}"
                        + (" (cast explicitly, e.g. .astype(int), if 0/1 is meant)"
                           if dtype.kind == "b" else ""))


def _check_counts(values: np.ndarray) -> None:
    if not np.all(np.isfinite(values)):
        raise ValueError("`counts` contains NaN or infinite values")
    if np.any(values < 0):
        n_bad = int((values < 0).sum())
        raise ValueError(f"`counts` must be non-negative; got {n_bad} negative count(s)")


def _counts_array(counts: Any, dims: tuple[Hashable, ...] = (ITEM,)
                  ) -> tuple[xr.DataArray, bool]:
    """Counts as a DataArray (*item dims, class); the flag says the input was one item (1-D).
    Values are checked at once, or chunk by chunk inside the graph on dask."""
    if isinstance(counts, xr.DataArray):
        if counts.ndim == 1 and counts.dims == (CLASS,) and len(dims) == 1:
            _check_numeric("counts", counts.dtype)
            return _counts_array(counts.expand_dims(dims[0]), dims)[0], True
        if set(counts.dims) != {*dims, CLASS} or counts.ndim != len(dims) + 1:
            raise ValueError(
                f"`counts` must have dims {(*dims, CLASS)!r} (the items named by `dim`); "
                f"got {counts.dims}"
            )
        _check_numeric("counts", counts.dtype)
        da = counts.transpose(*dims, CLASS).astype(np.float64)
        single = False
    else:
        arr = np.asarray(counts)
        _check_numeric("counts", arr.dtype)
        arr = arr.astype(np.float64)
        single = arr.ndim == 1
        if single:
            arr = arr[None, :]
        if arr.ndim != 2:
            raise ValueError(f"`counts` must be 2-D (items x classes); got shape {arr.shape}")
        if len(dims) != 1:
            raise ValueError(f"`counts` must be a DataArray to have several item dims "
                             f"(`dim`={list(dims)}); got an array of shape {arr.shape}")
        da = xr.DataArray(arr, dims=(dims[0], CLASS))
    if any(da.sizes[d] == 0 for d in dims):
        raise ValueError("`counts` is empty (no items)")
    if da.sizes[CLASS] < 2:
        raise ValueError(f"`counts` needs at least 2 classes; got {da.sizes[CLASS]}")
    return check_values(da, _check_counts), single


@renamed_argument("alpha", "prior", meaning="the Dirichlet prior concentration")
def posterior(counts: Any, *, prior: float | Sequence[float] | np.ndarray = 1.0,
              dim: Hashable | Sequence[Hashable] = ITEM) -> DirichletPosterior:
    r"""Dirichlet posterior of each item's label distribution from annotation counts.

    .. math:: p_i \mid n_i \sim \mathrm{Dir}(\alpha + n_i)

    Parameters
    ----------
    counts
        Annotation counts, shape ``(n_items, K)`` (or ``(K,)``), or a DataArray with ``item``
        and ``class`` dims. Non-negative; need not be integers (weighted annotations).
    prior
        Prior concentration: a positive scalar (the same for every class; 1 is the uniform
        prior, 0.5 Jeffreys') or a vector of ``K`` positive values.
    dim
        The dim(s) of a DataArray ``counts`` that index the items (default ``"item"``):
        items under another name, or several dims (e.g. ``("document", "sentence")``).
        Dask-backed counts stay lazy (checked chunk by chunk when computed).

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
    dims = as_dims(dim)
    da, single = _counts_array(counts, dims)
    return _posterior_from_counts(da, prior, single, dims)


def _posterior_from_counts(da: xr.DataArray, alpha: Any, single: bool = False,
                           dims: tuple[Hashable, ...] = (ITEM,)) -> DirichletPosterior:
    """The posterior from counts already validated by :func:`_counts_array`."""
    prior = _check_prior(alpha, da.sizes[CLASS])
    conc = (da + xr.DataArray(prior, dims=(CLASS,))).rename("concentration")
    conc.attrs = {"kind": "dirichlet posterior concentration"}
    return DirichletPosterior(concentration=conc, alpha=prior, single=single, item_dims=dims)


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
    for i, row in enumerate(annotations):
        if isinstance(row, str | bytes) or not hasattr(row, "__len__"):
            raise TypeError(f"`annotations` must hold one sequence of labels per item; item "
                            f"{i} is {type(row).__name__} {row!r}")
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
            raise ValueError("`annotations`: the labels contain NaN")
        if np.any(values != np.round(values)):
            raise ValueError("`annotations`: the labels must be integers 0..K-1")
    elif values.dtype.kind not in "iu":
        raise TypeError(f"`annotations`: the labels must be integers 0..K-1; got dtype "
                        f"{values.dtype}")
    labels = values.astype(np.int64)
    bad = (labels < 0) | (labels >= n_classes)
    if bad.any():
        raise ValueError(
            f"`annotations`: the labels must be in [0, {n_classes - 1}] "
            f"(`n_classes`={n_classes}); got {labels[bad][0]}"
        )
    return labels


@renamed_argument("alpha", "prior", meaning="the Dirichlet prior concentration")
def posterior_from_annotations(
    annotations: Sequence[Sequence[int]] | pd.DataFrame,
    *,
    n_classes: int,
    prior: float | Sequence[float] | np.ndarray = 1.0,
    item: str | None = None,
    label: str | None = None,
) -> DirichletPosterior:
    """Dirichlet posterior from raw ordinal labels (see :func:`counts_from_annotations`).

    Parameters
    ----------
    annotations : sequence of sequences of int, or pandas.DataFrame
        One sequence of labels per item (a variable number per item, possibly none), or a
        long table with one row per annotation.
    n_classes : int
        ``K`` (>= 2); labels must be integers in ``[0, K)``.
    prior : float or array_like, optional
        Prior concentration: a positive scalar (default 1, uniform; 0.5 Jeffreys') or ``K``
        positive values.
    item, label : str, optional
        Column names of the item ids and of the labels, required for a long table.

    Returns
    -------
    DirichletPosterior
        ``Dir(prior + counts)`` for every item.

    Examples
    --------
    >>> import evaluq as eq
    >>> post = eq.dirichlet.posterior_from_annotations([[0, 1, 1, 2], [4, 4]], n_classes=5)
    >>> post.expected_probs().round(3).values.tolist()
    [[0.222, 0.333, 0.222, 0.111, 0.111], [0.143, 0.143, 0.143, 0.143, 0.429]]
    """
    counts = counts_from_annotations(annotations, n_classes=n_classes, item=item, label=label)
    return posterior(counts, prior=prior)


# --- input plumbing -----------------------------------------------------------------------------

def _check_eps(eps: Any) -> float | None:
    """``None`` or a clipping floor in (0, 1] (as :mod:`evaluq.metrics` takes it)."""
    return None if eps is None else check_real("eps", eps, low=0.0, high=1.0,
                                                 low_inclusive=False)


def _as_posterior(counts: Any, prior: Any, dim: Hashable | Sequence[Hashable] | None = None
                  ) -> tuple[DirichletPosterior, bool]:
    if isinstance(counts, DirichletPosterior):
        if prior is not None:
            raise ValueError("`prior` is already part of the DirichletPosterior; do not pass it")
        if dim is not None and as_dims(dim) != counts.item_dims:
            raise ValueError(f"`dim` {dim!r} differs from the posterior's item dims "
                             f"{list(counts.item_dims)}; give `dim` to `posterior` instead")
        return counts, counts.single
    dims = (ITEM,) if dim is None else as_dims(dim)
    da, single = _counts_array(counts, dims)
    return _posterior_from_counts(da, 1.0 if prior is None else prior, single, dims), single


def _q_check(name: str, axis: int) -> Callable[[np.ndarray], None]:
    def check(values: np.ndarray) -> None:
        if not np.all(np.isfinite(values)):
            raise ValueError(f"`{name}` contains NaN or infinite values")
        if np.any(values < 0):
            raise ValueError(
                f"`{name}` must be a probability distribution: it has negative entries")
        sums = values.sum(axis=axis)
        if np.any(np.abs(sums - 1.0) > _PROB_ATOL):
            worst = float(sums.ravel()[np.argmax(np.abs(sums - 1.0).ravel())])
            raise ValueError(
                f"`{name}` must be a probability distribution over classes (rows summing to "
                f"1); a row sums to {worst:g}"
            )
    return check


def _as_q(q: Any, post: DirichletPosterior, name: str = "q") -> xr.DataArray:
    n_items, k, dims = post.n_items, post.n_classes, post.item_dims
    if isinstance(q, xr.DataArray):
        if CLASS not in q.dims:
            raise ValueError(f"`{name}` must have a {CLASS!r} dim; got {q.dims}")
        _check_numeric(name, q.dtype)
        da = q.astype(np.float64)
        for d in dims:
            if d in da.dims and da.sizes[d] != post.concentration.sizes[d]:
                what = "items" if dims == (ITEM,) else f"entries along {d!r}"
                raise ValueError(
                    f"`{name}` has {da.sizes[d]} {what} but the counts have "
                    f"{post.concentration.sizes[d]}"
                )
        if any(d in da.dims for d in dims):
            try:
                xr.align(da, post.concentration, join="exact")
            except ValueError as err:
                raise ValueError(
                    f"the {ITEM if dims == (ITEM,) else list(dims)!r} coordinates of "
                    f"`{name}` and of the counts differ"
                ) from err
    else:
        raw = np.asarray(q)
        _check_numeric(name, raw.dtype)
        arr = raw.astype(np.float64)
        if arr.ndim == 1:
            da = xr.DataArray(arr, dims=(CLASS,))
        elif arr.ndim == 2 and len(dims) == 1:
            if arr.shape[0] != n_items:
                raise ValueError(
                    f"`{name}` has shape {arr.shape} but the counts have {n_items} items"
                )
            item = dims[0]
            da = xr.DataArray(arr, dims=(item, CLASS),
                              coords={item: post.concentration[item]}
                              if item in post.concentration.coords else None)
        else:
            raise ValueError(
                f"`{name}` must be 1-D (classes) or 2-D (items x classes) or a DataArray; "
                f"got shape {arr.shape}"
            )
    if da.sizes[CLASS] != k:
        raise ValueError(f"`{name}` has {da.sizes[CLASS]} classes but the counts have {k}")
    return check_values(da, _q_check(name, da.get_axis_num(CLASS)), whole=(CLASS,))


def _apply(kernel: Callable[..., np.ndarray], post: DirichletPosterior, q: xr.DataArray | None,
           single: bool, name: str, attrs: Mapping[str, Any], **kw: Any) -> xr.DataArray:
    """A per-item kernel over ``class`` (:func:`evaluq._apply.apply_items`), items last."""
    args = [post.concentration] if q is None else [post.concentration, q]
    return apply_items(kernel, *args, core_dims=(CLASS,), item_dims=post.item_dims,
                       squeeze=single, name=name, attrs=attrs, **kw)

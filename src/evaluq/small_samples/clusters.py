"""Clustered scores: the intraclass correlation, the design effect and the effective N.

Scores are not independent when they come in clusters: several epochs (repeated scorings) of
the same item, or items that share a passage, a task or a template. The one-way ANOVA
intraclass correlation measures how alike scores of one cluster are; Kish's design effect
turns it into the factor by which the variance of a mean exceeds that of as many independent
scores, and the effective number of observations into the number of independent scores the
clustered ones are worth (Kish 1965; Miller 2024, "Adding error bars to evals", section 2.2).

The estimator is the one of the ``errorbars`` package (``intraclass_correlation``), which
``tests/test_clusters.py`` checks against its numbers (``benchmarks/anchors/
errorbars_clusters.json``); where a cluster structure leaves the ICC unidentifiable (a single
cluster, only singletons, no variance) evaluq returns NaN with a ``nan_reason`` where errorbars
returns 0.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import xarray as xr

from evaluq._apply import as_dataarray
from evaluq._dims import (
    DESIGN_EFFECT,
    DESIGN_EFFECT_UNEQUAL,
    ICC,
    ITEM,
    MEAN_CLUSTER_SIZE,
    N_CLUSTERS,
    N_EFFECTIVE,
    N_OBSERVATIONS,
    NAN_REASON,
)
from evaluq._validation import check_finite, check_nonempty
from evaluq.errors import CubeError

__all__ = ["design_effect"]

ArrayLike = Any
_OBS = "_observation"


# --- numpy kernel ---------------------------------------------------------------------------------

def _icc_kernel(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """One-way ANOVA ICC over the last axis of ``values`` (clusters ``codes``, 0..G-1), and
    the cluster sizes; NaN and the reason where it is not identifiable.

    ICC = (MSB - MSW) / (MSB + (k0 - 1) MSW), k0 = (N - sum n_g^2 / N) / (G - 1), clipped to
    [-1, 1] (as errorbars).
    """
    n = values.shape[-1]
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes).astype(np.float64)
    g = len(sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    centred = values[..., order] - values.mean(axis=-1, keepdims=True)
    sums = np.add.reduceat(centred, starts, axis=-1)
    ssb = (sums * sums / sizes).sum(axis=-1)
    ssw = (centred * centred).sum(axis=-1) - ssb
    shape = values.shape[:-1]
    if g <= 1:
        return np.full(shape, np.nan), sizes, "a single cluster: no between-cluster variance"
    if g == n:
        return np.full(shape, np.nan), sizes, "every cluster has one score: no within-cluster " \
                                              "variance"
    msb, msw = ssb / (g - 1), np.maximum(ssw, 0.0) / (n - g)
    k0 = (n - (sizes * sizes).sum() / n) / (g - 1)
    denom = msb + (k0 - 1.0) * msw
    with np.errstate(invalid="ignore", divide="ignore"):
        icc = np.where(denom > 0, (msb - msw) / denom, np.nan)
    reason = "constant scores: no variance to apportion" if np.isnan(icc).any() else ""
    return np.clip(icc, -1.0, 1.0), sizes, reason


# --- input ----------------------------------------------------------------------------------------

def _cluster_codes(clusters: ArrayLike, n: int, dim: Hashable) -> np.ndarray:
    labels = clusters.values if isinstance(clusters, xr.DataArray) else np.asarray(clusters)
    if labels.ndim != 1 or len(labels) != n:
        raise ValueError(f"`clusters` must give one label per entry of `scores` along {dim!r} "
                         f"({n}); got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("`clusters` contains NaN labels; every score needs a cluster")
    return np.unique(labels, return_inverse=True)[1].ravel()


def _stacked(scores: ArrayLike, clusters: ArrayLike | None, dim: Hashable,
             epoch_dim: Hashable | None) -> tuple[xr.DataArray, np.ndarray]:
    """Scores with the observations on a last dim, and each observation's cluster code."""
    if not isinstance(scores, xr.DataArray):
        arr = np.asarray(scores)
        names = [f"dim_{i}" for i in range(arr.ndim)]
        if arr.ndim:
            names[-1 if epoch_dim is None else -2] = str(dim)
        if epoch_dim is not None and arr.ndim >= 2:
            names[-1] = str(epoch_dim)
        scores = xr.DataArray(arr, dims=names)
    da = as_dataarray(scores, "scores", allow_bool=True)
    check_finite("scores", da.values)
    needed = [dim] if epoch_dim is None else [dim, epoch_dim]
    missing = [d for d in needed if d not in da.dims]
    if missing:
        raise CubeError(f"`scores` has no dim {missing[0]!r}; its dims are {list(da.dims)}")
    check_nonempty("scores", da.values)
    if epoch_dim is None:
        if clusters is None:
            raise ValueError("`clusters` is required unless `epoch_dim` names the repeated "
                             "scorings of each item")
        codes = _cluster_codes(clusters, da.sizes[dim], dim)
        return da.rename({dim: _OBS}).transpose(..., _OBS), codes
    if clusters is not None:
        raise ValueError("give either `clusters` or `epoch_dim`, not both")
    da = da.transpose(..., dim, epoch_dim)
    codes = np.repeat(np.arange(da.sizes[dim]), da.sizes[epoch_dim])
    return da.stack({_OBS: (dim, epoch_dim)}, create_index=False), codes


# --- public function ------------------------------------------------------------------------------

def design_effect(scores: ArrayLike, clusters: ArrayLike | None = None, *,
                  dim: Hashable = ITEM, epoch_dim: Hashable | None = None) -> xr.Dataset:
    r"""Intraclass correlation, design effect and effective N of clustered scores.

    With :math:`G` clusters of sizes :math:`n_g`, :math:`N = \sum n_g` scores, the one-way
    ANOVA mean squares :math:`MSB = \sum_g n_g (\bar y_g - \bar y)^2 / (G - 1)`,
    :math:`MSW = \sum_g \sum_i (y_{gi} - \bar y_g)^2 / (N - G)` and
    :math:`k_0 = (N - \sum n_g^2 / N) / (G - 1)`:

    .. math::

        \text{ICC} = \frac{MSB - MSW}{MSB + (k_0 - 1) MSW},\qquad
        \text{deff} = 1 + (\bar m - 1)\,\text{ICC},\qquad
        \text{deff}_u = 1 + \Big(\frac{\sum n_g^2}{N} - 1\Big)\text{ICC},\qquad
        N_\text{eff} = N / \text{deff}_u,

    with :math:`\bar m = N / G` (Kish's design effect, as errorbars computes it) and
    :math:`\text{deff}_u` its version for unequal cluster sizes, :math:`1 + ((1 + CV^2)\bar m
    - 1)\,\text{ICC}` with CV the coefficient of variation of the sizes (Eldridge, Ashby &
    Kerry 2006); the two agree when every cluster has the same size.

    Parameters
    ----------
    scores : array-like or DataArray
        Scores (0/1 or real). Either with an observation dim ``dim`` and one cluster label per
        observation in ``clusters`` (items in passages, tasks, templates; unequal sizes), or
        with ``epoch_dim``: repeated scorings of each item along ``epoch_dim``, the clusters
        being the items of ``dim`` (a plain array: items and epochs on its last two axes). Any
        other dims (e.g. ``model``) are kept: one answer per cell. NaN is refused: with
        unequal epochs per item give the scores in long form with ``clusters``.
    clusters : array-like, optional
        One label per entry of ``scores`` along ``dim``.
    dim : hashable
        The observation (or, with ``epoch_dim``, item) dim.
    epoch_dim : hashable, optional
        The dim of the repeated scorings.

    Returns
    -------
    xarray.Dataset
        ``icc``, ``design_effect``, ``design_effect_unequal``, ``n_effective`` (over the other
        dims of ``scores``), ``n_observations``, ``n_clusters``, ``mean_cluster_size``. The ICC
        is NaN, with a ``nan_reason``, for a single cluster, for clusters of one score each,
        and for constant scores; a design effect (and N_eff) is NaN with a reason where a
        negative ICC estimate would make it zero or negative. The ICC is not truncated at 0:
        a design effect below 1 (scores of a cluster less alike than chance) is reported.

    References
    ----------
    Kish (1965), Survey Sampling, Wiley, section 8.4. Eldridge, Ashby & Kerry (2006), Sample
    size for cluster randomized trials: effect of coefficient of variation of cluster size and
    analysis method, Int. J. Epidemiol. 35, 1292-1300. Miller (2024), Adding error bars to
    evals: a statistical approach to language model evaluations, arXiv:2411.00640.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> epochs = np.array([[1, 1, 1], [0, 0, 1], [1, 1, 1], [0, 0, 0]])   # 4 items x 3 epochs
    >>> res = eq.design_effect(epochs, epoch_dim="epoch")
    >>> [round(float(res[v]), 4) for v in ("icc", "design_effect", "n_effective")]
    [0.7273, 2.4545, 4.8889]
    """
    da, codes = _stacked(scores, clusters, dim, epoch_dim)
    icc, sizes, reason = _icc_kernel(da.values, codes)
    n = float(sizes.sum())
    deff = 1.0 + (n / len(sizes) - 1.0) * icc
    deff_u = 1.0 + ((sizes * sizes).sum() / n - 1.0) * icc
    if (deff <= 0).any() or (deff_u <= 0).any():
        reason = reason or ("ICC estimate below -1 / (m - 1): no positive design effect")
        deff, deff_u = np.where(deff > 0, deff, np.nan), np.where(deff_u > 0, deff_u, np.nan)
    other = [d for d in da.dims if d != _OBS]
    coords = {d: da.coords[d] for d in other if d in da.coords}

    def var(v: np.ndarray) -> xr.DataArray:
        out = xr.DataArray(v, dims=other, coords=coords)
        if reason and np.isnan(v).any():
            out.attrs[NAN_REASON] = reason
        return out

    return xr.Dataset({ICC: var(icc), DESIGN_EFFECT: var(deff), DESIGN_EFFECT_UNEQUAL:
                       var(deff_u), N_EFFECTIVE: var(n / deff_u),
                       N_OBSERVATIONS: n, N_CLUSTERS: len(sizes),
                       MEAN_CLUSTER_SIZE: n / len(sizes)},
                      attrs={"estimator": "one-way ANOVA ICC (errorbars / Kish)"})

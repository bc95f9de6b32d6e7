"""Distributions of draws: posterior differences with a ROPE band, and the resample / null
distribution of a significance test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from evaluq._dims import MODEL, MODEL_B
from evaluq._validation import check_pair
from evaluq.errors import CubeError
from evaluq.plots._common import (
    _ACCENT,
    _GOOD,
    _NEUTRAL,
    _WIDE,
    COLUMN_WIDTH,
    Bins,
    _check_bins,
    _metric,
    _outside,
    _panels,
    _styled,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from evaluq.significance import BootstrapTestResult

__all__ = ["posterior_differences", "resample_histogram"]


# --- posterior differences ------------------------------------------------------------------------

def _difference_series(draws: xr.DataArray, sample_dims: Sequence[str],
                       pairs: Sequence[tuple[Any, Any]] | None) -> list[tuple[str, np.ndarray]]:
    other = [d for d in draws.dims if d not in sample_dims]
    if MODEL in other and MODEL_B in other:
        models = draws[MODEL].values.tolist()
        if pairs is None:
            pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
        pairs = [check_pair(f"pairs[{k}]", pair, models) for k, pair in enumerate(pairs)]
        out = []
        for a, b in pairs:
            sel = draws.sel({MODEL: a, MODEL_B: b})
            rest = [d for d in sel.dims if d not in sample_dims]
            if rest:
                raise CubeError(f"`draws` has dims {rest} besides the pair and the sample dims")
            out.append((f"{a} − {b}", sel.values.ravel()))
        return out
    if pairs is not None:
        raise ValueError(f"`pairs` selects (model, model_b) pairs, but `draws` has no "
                         f"(model, model_b) dims (its dims: {tuple(draws.dims)}): drop "
                         "`pairs`, or pass the differences of every pair")
    if len(other) > 1:
        raise CubeError(f"`draws` must have (model, model_b) or at most one dim besides "
                        f"{tuple(sample_dims)}; got {draws.dims}")
    if not other:
        return [(str(draws.name or "difference"), draws.values.ravel())]
    dim = other[0]
    return [(str(c), draws.sel({dim: c}).values.ravel()) for c in draws[dim].values]


@_styled
def posterior_differences(draws: xr.DataArray, *, rope: float | tuple[float, float] | None = None,
                          pairs: Sequence[tuple[Any, Any]] | None = None,
                          sample_dims: Sequence[str] = ("chain", "draw"),
                          bins: Bins = 50,
                          axes: Sequence[Axes] | None = None) -> Figure:
    """Posterior densities of differences, one panel per pair, with a ROPE band.

    Parameters
    ----------
    draws
        Draws of the differences with the ``sample_dims`` and either ``(model, model_b)``
        (differences ``model`` minus ``model_b``) or at most one other dim (one panel per
        coordinate).
    rope
        Region of practical equivalence: a half-width ``r`` (the band ``[-r, r]``) or
        ``(low, high)``. Each panel states P(difference in the ROPE) and the probability above
        it.
    pairs
        ``(model, model_b)`` pairs to draw; default every pair once, in the models' order.
    sample_dims
        The dims holding the draws (pooled: chains are not told apart).
    bins
        Histogram bins of each density, as :func:`numpy.histogram` takes them: a number of
        bins, a rule name (``"auto"``, ``"fd"``, ``"doane"``, ``"scott"``, ``"stone"``,
        ``"rice"``, ``"sturges"``, ``"sqrt"``) or a sequence of edges (the same for every
        panel; draws outside them are not drawn, and the panel's title says how many).
    axes
        Axes to draw into, one per pair in order (their figure is returned; figures
        compose); default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per pair, sharing the x axis; each holds the density as a step line (the
        ``np.histogram(..., density=True)`` of the draws) and, with ``rope``, a shaded band.

    See Also
    --------
    forest_plot, evaluq.pairwise_differences

    Examples
    --------
    >>> import numpy as np, xarray as xr, evaluq as eq
    >>> d = xr.DataArray(np.random.default_rng(0).normal(0.3, 0.2, (2, 500)),
    ...                  dims=("chain", "draw"), name="A − B")
    >>> fig = eq.plots.posterior_differences(d, rope=0.1)
    >>> fig.axes[0].get_title(loc="left")
    'A − B: P(ROPE) = 0.15, P(> ROPE) = 0.83'
    """
    if not isinstance(draws, xr.DataArray):
        raise TypeError(f"`draws` must be an xarray DataArray; got {type(draws).__name__}")
    missing = [d for d in sample_dims if d not in draws.dims]
    if missing:
        raise CubeError(f"`draws` lacks the sample dims {missing}; its dims are {draws.dims}")
    band: tuple[float, float] | None
    if rope is None:
        band = None
    elif isinstance(rope, tuple):
        band = (float(rope[0]), float(rope[1]))
        if not band[0] < band[1]:
            raise ValueError(f"`rope` must be (low, high) with low < high; got {rope!r}")
    else:
        if not float(rope) > 0:
            raise ValueError(f"`rope` must be a positive half-width or (low, high); got {rope!r}")
        band = (-float(rope), float(rope))
    bins_ = _check_bins(bins)
    series = _difference_series(draws, sample_dims, pairs)
    n = len(series)
    fig, panels, _ = _panels(axes, n, COLUMN_WIDTH, 0.5 + 0.85 * n, sharex=True)
    for ax, (label, values) in zip(panels[:, 0], series, strict=True):
        values = values[np.isfinite(values)]
        dens, edges = np.histogram(values, bins=bins_, density=True)
        ax.stairs(dens, edges, color=_GOOD, fill=True, alpha=0.35, linewidth=0)
        ax.stairs(dens, edges, color=_GOOD, linewidth=1.0)
        ax.axvline(0.0, color="black", linewidth=0.6, linestyle="--")
        ax.set_yticks([])
        ax.spines["left"].set_visible(False)
        if band is not None:
            ax.axvspan(band[0], band[1], color=_NEUTRAL, alpha=0.25, linewidth=0, label="ROPE")
            inside = float(np.mean((values >= band[0]) & (values <= band[1])))
            above = float(np.mean(values > band[1]))
            title = f"{label}: P(ROPE) = {inside:.2f}, P(> ROPE) = {above:.2f}"
        else:
            title = f"{label}: P(> 0) = {float(np.mean(values > 0)):.2f}"
        if out := _outside(values, bins_):
            title += f" ({out} of {values.size} outside the bins)"
        ax.set_title(title, loc="left")
    metric = _metric(draws.attrs)
    panels[-1, 0].set_xlabel(f"posterior difference in {metric}")
    return fig


# --- significance tests ---------------------------------------------------------------------------

@_styled
def resample_histogram(result: BootstrapTestResult, *, metrics: Sequence[str] | None = None,
                       bins: Bins = 40, axes: Sequence[Axes] | None = None) -> Figure:
    """Histogram of the resample (or null) distribution of a two-system test, per metric.

    The observed difference ``delta`` is a solid line. For the Berg-Kirkpatrick test the
    p-value counts the sub-sample deltas above ``2 delta`` (dotted line); for the permutation
    test the histogram is the null distribution and the p-value counts ``|delta*| >= |delta|``
    (dotted lines at +-delta); for the paired bootstrap the interval is shaded.

    Parameters
    ----------
    result
        The result of :func:`evaluq.bootstrap_test`.
    metrics
        Metrics to draw (default: all).
    bins
        Histogram bins, as :func:`numpy.histogram` takes them: a number of bins, a rule name
        (``"auto"``, ``"fd"``, ``"doane"``, ``"scott"``, ``"stone"``, ``"rice"``,
        ``"sturges"``, ``"sqrt"``) or a sequence of edges (the same for every metric; values
        outside them are not drawn, and the panel's title says how many).
    axes
        Axes to draw into, one per metric in order (their figure is returned; figures
        compose); default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per metric; its bars are the ``np.histogram(distribution, bins)`` counts.

    See Also
    --------
    evaluq.bootstrap_test

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 200)
    >>> h0 = np.where(rng.random(200) < 0.7, y, 1 - y)
    >>> h1 = np.where(rng.random(200) < 0.8, y, 1 - y)
    >>> res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], n_resamples=300, rng=0)
    >>> fig = eq.plots.resample_histogram(res)
    >>> len(fig.axes[0].patches)
    40
    >>> edges = np.linspace(-0.2, 0.3, 11)
    >>> len(eq.plots.resample_histogram(res, bins=edges).axes[0].patches)
    10
    >>> fig = eq.plots.resample_histogram(res, bins="fd")     # numpy's Freedman-Diaconis rule
    """
    from evaluq.significance import BootstrapTestResult

    if not isinstance(result, BootstrapTestResult):
        raise TypeError(f"`result` must be the result of eq.bootstrap_test; "
                        f"got {type(result).__name__}")
    bins_ = _check_bins(bins)
    names = list(result.metrics)
    chosen = names if metrics is None else list(metrics)
    for m in chosen:
        if m not in names:
            raise ValueError(f"`metrics` names {m!r}, which the test did not compute; it has "
                             f"{names}")
    n = len(chosen)
    ncols = 1 if n == 1 else 2
    nrows = (n + ncols - 1) // ncols
    fig, panels, _ = _panels(axes, n, COLUMN_WIDTH if ncols == 1 else _WIDE, 0.4 + 1.7 * nrows,
                           ncols=ncols)
    what = {"berg-kirkpatrick": "sub-sample deltas", "paired": "bootstrap deltas",
            "permutation": "permutation (null) deltas"}[result.method]
    ci = result.interval
    for ax, m in zip(panels.ravel(), chosen, strict=False):
        i = names.index(m)
        dist = result.distribution[i]
        dist = dist[np.isfinite(dist)]
        ax.hist(dist, bins=bins_, color="#9ecae1", edgecolor="white", linewidth=0.3)
        delta = float(result.delta[i])
        ax.axvline(delta, color=_ACCENT, linewidth=1.2, label=f"δ = {delta:.4g}")
        if result.method == "berg-kirkpatrick":
            ax.axvline(2 * delta, color=_ACCENT, linewidth=1.0, linestyle=":", label="2δ")
        elif result.method == "permutation":
            ax.axvline(-delta, color=_ACCENT, linewidth=1.0, linestyle=":", label="−δ")
        else:
            lo, hi = ci.sel({"metric": m}).values
            ax.axvspan(lo, hi, color=_NEUTRAL, alpha=0.2, linewidth=0,
                       label=f"{result.confidence_level:.0%} CI")
        title = f"{m}: p = {float(result.pvalue[i]):.3g}"
        if out := _outside(dist, bins_):
            title += f" ({out} of {dist.size} outside the bins)"
        ax.set_title(title, loc="left")
        ax.set_xlabel(f"Δ {m} ({result.h1_name} − {result.h0_name}; > 0: "
                      f"{result.h1_name} better)")
        ax.set_ylabel(what)
        ax.legend(loc="upper left", handlelength=1.2)
    for ax in panels.ravel()[n:]:
        ax.set_visible(False)
    return fig

"""Figures of few observations and of design: a metric against bins of the annotation count,
t and ARF intervals of scarce observations, the minimum detectable effect against items and
seeds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import CI_BOUND, MODEL, MODEL_B
from evaluq._validation import check_pair
from evaluq.plots._common import (
    COLUMN_WIDTH,
    _axes,
    _metric,
    _styled,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from evaluq.intervals import ARFIntervalResult, TIntervalResult

__all__ = ["annotation_bins", "mde_plot", "scarce_intervals"]


# --- label uncertainty ----------------------------------------------------------------------

@_styled
def annotation_bins(table: pd.DataFrame, *, columns: Sequence[Any] | None = None,
                    ylabel: str = "mean per item", ax: Axes | None = None) -> Figure:
    """A metric against bins of the annotation count (from ``dirichlet.by_annotation_count``).

    Parameters
    ----------
    table
        The result of :func:`evaluq.dirichlet.by_annotation_count`: index ``n_bin``, a
        ``count`` column and one column per value (a MultiIndex ``(name, model)`` when the
        values had a model dim).
    columns
        Columns to draw (default: all but ``count``).
    ylabel
        Label of the value axis.
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes with a line per column (markers at the bins, y data equal to the column;
        with ``(name, model)`` columns a colour per model and a line style per name) and a
        grey bar per bin on a twin axis for the number of items. The legend sits above the
        axes, so it hides no data: one entry per line, labelled ``name (model)`` or the
        column name, and one for the bars, ``"items (right axis)"``.

    See Also
    --------
    evaluq.dirichlet.by_annotation_count

    Examples
    --------
    >>> import evaluq as eq
    >>> post = eq.dirichlet.posterior([[1, 1, 0], [2, 1, 0], [0, 5, 1], [3, 3, 3]])
    >>> ece = eq.dirichlet.expected_cross_entropy(post, [.2, .6, .2])
    >>> table = eq.dirichlet.by_annotation_count({"E[CE]": ece}, post.n_annotations, bins=[2, 4])
    >>> fig = eq.plots.annotation_bins(table)
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['E[CE]']
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"`table` must be a DataFrame; got {type(table).__name__}")
    count_col: Any = ("count", "") if isinstance(table.columns, pd.MultiIndex) else "count"
    if count_col not in table.columns:
        raise ValueError("`table` must be the result of eq.dirichlet.by_annotation_count "
                         f"(a {count_col!r} column); got columns {list(table.columns)}")
    if columns is None:
        columns = [c for c in table.columns if c != count_col]
    for c in columns:
        if c not in table.columns:
            raise ValueError(f"`columns` names {c!r}, which is not in the table; its columns "
                             f"are {list(table.columns)}")
    fig, ax = _axes(ax, COLUMN_WIDTH, 2.2)
    pos = np.arange(len(table), dtype=float)
    twin = ax.twinx()
    bars = twin.bar(pos, table[count_col].to_numpy(float), color="#d9d9d9", width=0.6,
                    zorder=0, label="items (right axis)")
    twin.set_ylabel("items")
    twin.spines["right"].set_visible(True)
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    # (name, model) columns: a colour per model, a line style and marker per name
    names = list(dict.fromkeys(c[0] if isinstance(c, tuple) else c for c in columns))
    models = list(dict.fromkeys(c[1] for c in columns if isinstance(c, tuple)))
    styles, markers = ["-", "--", ":", "-."], ["o", "s", "^", "D"]
    for k, c in enumerate(columns):
        if isinstance(c, tuple):
            label = f"{c[0]} ({c[1]})"
            j = names.index(c[0])
            color = f"C{models.index(c[1]) % 10}"
        else:
            label, j, color = str(c), 0, f"C{k % 10}"
        ax.plot(pos, table[c].to_numpy(float), marker=markers[j % 4], markersize=3.5,
                linewidth=1.2, linestyle=styles[j % 4], color=color, label=label)
    ax.set_xticks(pos, [str(i) for i in table.index])
    ax.set_xlabel("annotations per item")
    ax.set_ylabel(ylabel)
    handles: list[Any] = [*ax.lines, bars]
    ax.legend(handles, [str(h.get_label()) for h in handles], loc="lower left",
              bbox_to_anchor=(0.0, 1.0), ncols=2 if len(handles) > 2 else len(handles))
    return fig


# --- scarce observations ----------------------------------------------------------------------

@_styled
def scarce_intervals(results: TIntervalResult | ARFIntervalResult
                     | Mapping[str, TIntervalResult | ARFIntervalResult], *,
                     threshold: float | None = None, labels: Sequence[str] | None = None,
                     xlabel: str = "score", ax: Axes | None = None) -> Figure:
    """t and ARF intervals for scarce observations, one row per item, one colour per method.

    Parameters
    ----------
    results
        A result of :func:`evaluq.intervals.t_interval` or
        :func:`evaluq.intervals.arf_interval`, or a mapping of method name -> result (the
        same items in each, e.g. ``{"t, 2 raters": ..., "ARF": ...}``).
    threshold
        A pass mark drawn as a dashed vertical line.
    labels
        Item labels (default: the item coordinate, or 0, 1, ...).
    xlabel
        Label of the score axis.
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes; per method a ``LineCollection`` of the intervals (segments from lower to
        upper) and the estimates as points.

    See Also
    --------
    evaluq.intervals.t_interval, evaluq.intervals.arf_interval

    Examples
    --------
    >>> import evaluq as eq
    >>> res = {"t (2 scores)": eq.intervals.t_interval([[76.85, 81.99]], confidence_level=0.8),
    ...        "ARF": eq.intervals.arf_interval([85.2], 96.3, arf_alpha=0.2)}
    >>> fig = eq.plots.scarce_intervals(res, threshold=80)
    >>> len(fig.axes[0].collections)
    4
    """
    from evaluq.intervals import ARFIntervalResult, TIntervalResult

    kinds = (TIntervalResult, ARFIntervalResult)
    if not isinstance(results, (*kinds, Mapping)):
        raise TypeError(f"`results` must be a t_interval / arf_interval result or a mapping of "
                        f"them; got {type(results).__name__}")
    named = {"interval": results} if isinstance(results, kinds) else dict(results)
    if not named:
        raise ValueError("`results` is empty")
    rows: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    n_items = None
    for name, res in named.items():
        if not isinstance(res, kinds):
            raise TypeError(f"`results[{name!r}]` must be a t_interval or arf_interval result; "
                            f"got {type(res).__name__}")
        est = np.atleast_1d(np.asarray(res.estimate, dtype=float)).ravel()
        lo = np.atleast_1d(np.asarray(res.lower, dtype=float)).ravel()
        hi = np.atleast_1d(np.asarray(res.upper, dtype=float)).ravel()
        if n_items is not None and est.size != n_items:
            raise ValueError(f"every result needs the same number of items; {name!r} has "
                             f"{est.size}, the first had {n_items}")
        n_items = est.size
        rows[name] = (est, lo, hi)
    assert n_items is not None
    if labels is None:
        first = next(iter(named.values())).interval
        other = [d for d in first.dims if d != CI_BOUND]
        labels = ([str(v) for v in first[other[0]].values] if len(other) == 1
                  and other[0] in first.coords else [str(i) for i in range(n_items)])
    if len(labels) != n_items:
        raise ValueError(f"`labels` needs {n_items} entries; got {len(labels)}")
    n_methods = len(rows)
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.8 + 0.18 * n_items * n_methods + 0.1 * n_methods)
    base = np.arange(n_items)[::-1].astype(float)
    offsets = (np.arange(n_methods) - (n_methods - 1) / 2) * (0.7 / max(n_methods, 1))
    ax_any: Axes = ax
    for k, (name, (est, lo, hi)) in enumerate(rows.items()):
        color = f"C{k}"
        y = base - offsets[k]
        ax_any.hlines(y, lo, hi, colors=color, linewidth=1.4, label=name)
        ax_any.scatter(est, y, color=color, s=12, zorder=3)
    if threshold is not None:
        ax.axvline(float(threshold), color="black", linewidth=0.7, linestyle="--",
                   label=f"threshold {threshold:g}")
    ax.set_yticks(base, list(labels))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("item")
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=min(n_methods + 1, 3))
    return fig


# --- power: the minimum detectable effect ---------------------------------------------------------

@_styled
def mde_plot(grid: xr.DataArray, *, pair: tuple[Any, Any] | None = None,
             ax: Axes | None = None) -> Figure:
    """The minimum detectable effect against the number of items, one line per seed count.

    Parameters
    ----------
    grid
        The result of :func:`evaluq.power.mde_grid` (model, model_b, n_seeds, n_items).
    pair
        The pair of models ``(model, model_b)`` to draw; None draws the median over all pairs
        of distinct models.
    ax
        The axes to draw on; None makes a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes: log-scaled items on x, the MDE in the metric's units
        on y, one line per ``n_seeds``.

    See Also
    --------
    evaluq.power.mde_grid, evaluq.power.minimum_detectable_effect

    Examples
    --------
    >>> import evaluq as eq
    >>> d = eq.power.design_from_sds(sd_item=0.5, sd_seed=0.02, n_seeds=3, n_items=200)
    >>> grid = eq.power.mde_grid(d, n_items=[100, 200, 400, 800], n_seeds=[1, 3, 10])
    >>> fig = eq.plots.mde_plot(grid)
    >>> len(fig.axes[0].lines)
    3
    """
    from evaluq._dims import N_ITEMS, N_SEEDS

    if not isinstance(grid, xr.DataArray) or {N_ITEMS, N_SEEDS} - set(grid.dims):
        raise TypeError("`grid` must be the DataArray of eq.power.mde_grid (dims model, "
                        f"model_b, n_seeds, n_items); got {type(grid).__name__}")
    if pair is not None:
        pair = check_pair("pair", pair, grid[MODEL].values.tolist())
        curves = grid.sel({MODEL: pair[0], MODEL_B: pair[1]})
        what = f"{pair[0]} vs {pair[1]}"
    else:
        values = grid.transpose(MODEL, MODEL_B, N_SEEDS, N_ITEMS).values
        off = ~np.eye(values.shape[0], dtype=bool)
        curves = xr.DataArray(np.nanmedian(values[off], axis=0), dims=(N_SEEDS, N_ITEMS),
                              coords={N_SEEDS: grid[N_SEEDS], N_ITEMS: grid[N_ITEMS]})
        what = "median over pairs"
    fig, ax = _axes(ax, COLUMN_WIDTH, 2.4)
    for s in curves[N_SEEDS].values:
        ax.plot(curves[N_ITEMS].values, curves.sel({N_SEEDS: s}).values, marker="o",
                markersize=2.5, linewidth=1.0, label=f"{s} seed{'s' if s != 1 else ''}")
    ax.set_xscale("log")
    ax.set_xlabel("items per language")
    ax.set_ylabel(f"MDE ({_metric(grid.attrs)})")
    ax.set_title(f"minimum detectable effect, {what}")
    ax.legend(title=f"alpha {grid.attrs.get('alpha', 0.05):g}, "
                    f"power {grid.attrs.get('power', 0.8):g}")
    return fig

"""Figures of ratings from pairwise votes (:func:`evaluq.fit_ratings`): the ratings with their
intervals, and the matrix of win probabilities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from evaluq._dims import CI_BOUND, MODEL, MODEL_B
from evaluq._validation import check_bool
from evaluq.plots._common import (
    _GOOD,
    COLUMN_WIDTH,
    _axes,
    _row_height,
    _styled,
    _wrap_labels,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["ratings_plot", "win_probability_heatmap"]


def _check_ratings(result: Any, name: str = "result") -> None:
    needed = ("rating", "confidence_interval", "win_probability", "details")
    if not all(hasattr(result, attr) for attr in needed):
        raise TypeError(f"`{name}` must be the result of eq.fit_ratings (a RatingsResult); "
                        f"got {type(result).__name__}")


def _order(result: Any) -> np.ndarray:
    """Models from the highest rating down (ties broken by label, as the result sorts)."""
    rating = result.rating.values
    labels = result.rating[MODEL].values.astype(str)
    return np.lexsort((labels, -rating))


@_styled
def ratings_plot(result: Any, *, confidence_level: float | None = None,
                 title: str | None = None, ax: Axes | None = None) -> Figure:
    """Each model's rating with its interval, best at the top.

    Parameters
    ----------
    result
        The result of :func:`evaluq.fit_ratings`.
    confidence_level
        Level of the intervals; default the result's.
    title
        Axes title (default: the interval's kind and level).
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: a point per model at its rating (y data: the rating's row, best first) and
        a horizontal line over its interval; the x label names the scale and how the
        ratings are pinned (sum-zero or a reference model).

    Examples
    --------
    >>> import pandas as pd
    >>> import evaluq as eq
    >>> votes = pd.DataFrame({"model_a": ["x", "x", "y", "y", "z", "z"] * 5,
    ...                       "model_b": ["y", "z", "z", "x", "x", "y"] * 5,
    ...                       "winner": ["model_a", "model_a", "tie", "model_b", "model_a",
    ...                                  "model_a"] * 5})
    >>> fig = eq.plots.ratings_plot(eq.fit_ratings(votes, ties="half"))
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['x', 'z', 'y']
    """
    _check_ratings(result)
    order = _order(result)
    ci = result.confidence_interval(confidence_level)
    lower = ci.sel({CI_BOUND: "lower"}).values[order]
    upper = ci.sel({CI_BOUND: "upper"}).values[order]
    rating = result.rating.values[order]
    models = result.rating[MODEL].values[order]
    n_m = len(models)
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.8 + _row_height(models, 0.2) * n_m)
    y = np.arange(n_m)
    ax.hlines(y, lower, upper, color=_GOOD, linewidth=1.2)
    ax.plot(rating, y, "o", color=_GOOD, markersize=3)
    ax.set_yticks(y, [str(m) for m in models])
    ax.invert_yaxis()
    details = result.details
    ax.set_xlabel(f"rating ({details.get('scale', '')} scale)")
    level = ci.attrs.get("confidence_level", confidence_level)
    kind = details.get("interval", "")
    cluster = details.get("cluster")
    by = f", clustered by {cluster}" if cluster else ""
    ax.set_title(title if title is not None else f"{level:.0%} {kind} intervals{by}")
    ax.grid(axis="x", color="#eeeeee")
    return fig


@_styled
def win_probability_heatmap(result: Any, *, annotate: bool | None = None,
                            title: str | None = None, ax: Axes | None = None) -> Figure:
    """P(row model beats column model) for every pair, models ordered by rating.

    Under Davidson ties the probability is of a win outright (a tie is neither); under
    ``ties="half"`` or ``"drop"`` it is the Bradley-Terry probability.

    Parameters
    ----------
    result
        The result of :func:`evaluq.fit_ratings`.
    annotate
        Write the probability in each cell; default when there are at most 12 models.
    title
        Axes title (default ``"P(row beats column)"``).
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes with the matrix as an image (rows and columns best first; the diagonal, a
        model against itself, is blank) and a colour bar.

    Examples
    --------
    >>> import pandas as pd
    >>> import evaluq as eq
    >>> votes = pd.DataFrame({"model_a": ["x", "x", "y", "y", "z", "z"] * 5,
    ...                       "model_b": ["y", "z", "z", "x", "x", "y"] * 5,
    ...                       "winner": ["model_a", "model_a", "tie", "model_b", "model_a",
    ...                                  "model_a"] * 5})
    >>> fig = eq.plots.win_probability_heatmap(eq.fit_ratings(votes, ties="half"))
    >>> fig.axes[0].images[0].get_array().shape
    (3, 3)
    """
    _check_ratings(result)
    if annotate is not None:
        check_bool("annotate", annotate, or_none=True)
    order = _order(result)
    grid: xr.DataArray = result.win_probability
    models = result.rating[MODEL].values[order]
    prob = grid.sel({MODEL: models, MODEL_B: models}).values.astype(float)
    np.fill_diagonal(prob, np.nan)
    n_m = len(models)
    side = max(COLUMN_WIDTH, 1.2 + _row_height(models, 0.22) * n_m)
    longest = max(len(line) for m in _wrap_labels(list(models))[0] for line in m.split("\n"))
    names = max(0.0, 0.055 * longest - 1.0)     # long names take room on both axes
    fig, ax = _axes(ax, side + 0.6 + names, side + names)
    image = ax.imshow(prob, cmap="RdBu", vmin=0.0, vmax=1.0, interpolation="nearest")
    labels = [str(m) for m in models]
    ax.set_xticks(np.arange(n_m), labels, rotation=90)
    ax.set_yticks(np.arange(n_m), labels)
    ax.set_xlabel("column model")
    ax.set_ylabel("row model")
    ax.set_title(title if title is not None else "P(row beats column)")
    ax.spines[:].set_visible(False)
    if annotate if annotate is not None else n_m <= 12:
        for (i, j), p in np.ndenumerate(prob):
            if np.isfinite(p):
                ax.text(j, i, f"{p:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if abs(p - 0.5) > 0.3 else "black")
    fig.colorbar(image, ax=ax, label="probability", shrink=0.8)
    fig.draw_without_rendering()    # settle the layout (rotated labels): same size every render
    return fig

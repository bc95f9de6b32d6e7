"""What every figure shares: the paper style and sizes (``COLUMN_WIDTH``), the ``_styled``
decorator, the pyplot-free figure that shows itself in a notebook, the ``ax=`` / ``axes=``
checks and the small validators of the figure functions' arguments."""

from __future__ import annotations

import functools
import io
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from evaluq._schema import orientation
from evaluq._validation import check_memory
from evaluq.errors import CubeError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure



COLUMN_WIDTH = 3.4
"""Width in inches of one column of a two-column paper: the default figure width."""
_WIDE = 7.0
_STYLE: dict[str, Any] = {
    "font.size": 8, "axes.titlesize": 8.5, "axes.labelsize": 8, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 7, "legend.frameon": False,
    "axes.spines.top": False, "axes.spines.right": False, "savefig.dpi": 200,
}
_GOOD = "#1b6ca8"   # a verdict, a model better than another
_NEUTRAL = "#8c8c8c"
_ACCENT = "#c0392b"
_SD_LABELS = {"sigma_seed": "seed SD", "sigma_boot": "bootstrap SD", "sigma_within": "within SD"}


def _styled[**P](func: Callable[P, Figure]) -> Callable[P, Figure]:
    """Run a plotting function under evaluq's rc settings (font sizes for a paper column)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Figure:
        import matplotlib as mpl
        from cycler import cycler

        style: dict[Any, Any] = {**_STYLE, "axes.prop_cycle": cycler(color=[
            "#1b6ca8", "#e07b39", "#3a9d5d", "#c0392b", "#7d5ba6", "#8c564b", "#d4a017",
            "#17becf", "#7f7f7f", "#bcbd22"])}
        before, keep = _users_axes(kwargs.get("ax", kwargs.get("axes")))
        with mpl.rc_context(style):
            fig = func(*args, **kwargs)
            for ax in fig.axes:  # the axes drawn, never another axes of the user's figure
                if ax not in before or ax in keep:
                    ax.tick_params(labelsize=7)
        return fig

    return wrapper


def _users_axes(given: Any) -> tuple[set[Any], set[Any]]:
    """The axes already on the figure of the given ``ax`` / ``axes``, and the given ones."""
    if given is None:
        return set(), set()
    keep = set(np.ravel(np.asarray(given, dtype=object)))
    figures = {getattr(a, "figure", None) for a in keep} - {None}
    return {a for f in figures for a in getattr(f, "axes", [])}, keep


_INLINE_FIGURE = "_InlineFigure"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_RETINA = 2
"""Notebook images are rendered at this multiple of the figure's dpi and shown at 1x size."""


@functools.cache
def _inline_figure_class() -> type[Figure]:
    """The Figure subclass of every evaluq figure (built on first use: matplotlib is lazy)."""
    from matplotlib.figure import Figure

    class _InlineFigure(Figure):
        """A :class:`matplotlib.figure.Figure` that IPython displays as a PNG without pyplot."""

        def __repr__(self) -> str:
            """The plain Figure's text: ``<Figure size 340x202 with 1 Axes>``."""
            return super().__repr__().replace(type(self).__name__, "Figure", 1)

        def _repr_png_(self) -> tuple[bytes, dict[str, int]] | None:
            """PNG bytes at twice the figure's dpi, with the 1x width / height for display.

            None for a figure without axes (as IPython's own printer), so an empty figure
            leaves no blank image.
            """
            if not self.axes:
                return None
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=_RETINA * self.dpi, bbox_inches="tight",
                         facecolor=self.get_facecolor(), edgecolor=self.get_edgecolor())
            data = buf.getvalue()
            width = int.from_bytes(data[16:20], "big")     # the IHDR chunk
            height = int.from_bytes(data[20:24], "big")
            return data, {"width": max(1, width // _RETINA), "height": max(1, height // _RETINA)}

    _InlineFigure.__module__ = "evaluq.plots"    # pickled by reference: see its __getattr__
    _InlineFigure.__qualname__ = _INLINE_FIGURE
    return _InlineFigure


def _figure(width: float, height: float, nrows: int = 1, ncols: int = 1,
            **kwargs: Any) -> tuple[Figure, np.ndarray]:
    fig = _inline_figure_class()(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, **kwargs)
    return fig, axes


def _check_axes(ax: Any, name: str) -> Axes:
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        what = "a matplotlib Axes" if name == "ax" else "a sequence of matplotlib Axes"
        raise TypeError(f"`{name}` must be {what} or None; got {type(ax).__name__}")
    return ax


def _axes(ax: Axes | None, width: float, height: float) -> tuple[Figure, Axes]:
    """A new figure of ``width`` x ``height`` inches and its axes, or the given axes and the
    figure that holds it (a figure function with ``ax=`` draws there: figures compose)."""
    if ax is None:
        fig, axes = _figure(width, height)
        return fig, axes[0, 0]
    ax = _check_axes(ax, "ax")
    return ax.figure, ax  # type: ignore[return-value]


def _panels(axes: Sequence[Axes] | np.ndarray | None, n: int, width: float, height: float,
            ncols: int = 1, **kwargs: Any) -> tuple[Figure, np.ndarray, bool]:
    """``n`` panels: new ones (a grid of ``ncols`` columns, whether the figure is new) or the
    ``n`` given axes, in order, on their figure."""
    if axes is None:
        fig, grid = _figure(width, height, nrows=(n + ncols - 1) // ncols, ncols=ncols, **kwargs)
        return fig, grid, True
    given = [_check_axes(a, "axes") for a in np.ravel(np.asarray(axes, dtype=object))]
    if len(given) != n:
        raise ValueError(f"`axes` must hold {n} axes (one per panel); got {len(given)}")
    grid = np.empty((n, 1), dtype=object)
    grid[:, 0] = given
    return given[0].figure, grid, False  # type: ignore[return-value]


def _metric(attrs: Mapping[str, Any]) -> str:
    metric = str(attrs.get("metric", "") or "score")
    return metric


def _orientation_text(attrs: Mapping[str, Any]) -> str:
    return "higher is better" if orientation(attrs) else "lower is better"


def _require(obj: Any, name: str, what: str, variables: Sequence[str],
             dims: Sequence[str] = ()) -> None:
    """``obj`` must be the result of ``what``: a Dataset with ``variables`` and ``dims`` (the
    dims tell apart results with the same variables, such as interval estimates and a
    performance profile)."""
    if not isinstance(obj, xr.Dataset) or any(v not in obj for v in variables):
        shown = ", ".join(variables)
        raise CubeError(f"`{name}` must be the result of {what} (a Dataset with {shown}); "
                        f"got {type(obj).__name__}")
    missing = [d for d in dims if d not in obj.dims]
    if missing:
        raise CubeError(f"`{name}` must be the result of {what} (a Dataset with the dims "
                        f"{', '.join(dims)}); it has no {missing[0]!r} dim (its dims: "
                        f"{tuple(obj.dims)}): is it another analysis' result?")


_BIN_RULES = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")
"""The bin-width rules of :func:`numpy.histogram_bin_edges`."""

Bins = int | str | Sequence[float] | np.ndarray


def _outside(values: np.ndarray, bins: int | str | np.ndarray) -> int:
    """How many values fall outside explicit edges (np.histogram does not count them)."""
    if not isinstance(bins, np.ndarray):
        return 0
    return int(np.count_nonzero((values < bins[0]) | (values > bins[-1])))


def _check_bins(bins: Any) -> int | str | np.ndarray:
    """What ``np.histogram`` accepts as ``bins``: a count >= 1, a rule name, or edges.

    Edges must be a 1-D sequence of at least two finite, strictly increasing numbers.
    """
    what = (f"`bins` must be a number of bins (int), a rule name ({', '.join(_BIN_RULES)}) "
            f"or a sequence of edges; got {bins!r}")
    if isinstance(bins, bool | np.bool_):
        raise TypeError(what)
    if isinstance(bins, numbers.Integral):
        if bins < 1:
            raise ValueError(f"`bins` must be at least 1; got {bins!r}")
        # each bin is a count, an edge and a drawn bar (a matplotlib patch, about 2 KiB)
        check_memory("bins", 2048 * int(bins), hint=" (each bin is a drawn bar)")
        return int(bins)
    if isinstance(bins, str):
        if bins not in _BIN_RULES:
            raise ValueError(f"`bins` must be one of {list(_BIN_RULES)} when a string; "
                             f"got {bins!r}")
        return bins
    if isinstance(bins, numbers.Number) or not isinstance(bins, Sequence | np.ndarray):
        raise TypeError(what)
    try:
        edges = np.asarray(bins, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`bins` as edges must hold numbers; got {bins!r}") from None
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(f"`bins` as edges must be 1-D with at least 2 edges; got shape "
                         f"{edges.shape}")
    if not np.isfinite(edges).all() or not (np.diff(edges) > 0).all():
        raise ValueError(f"`bins` as edges must be finite and strictly increasing; got "
                         f"{edges.tolist()}")
    return edges

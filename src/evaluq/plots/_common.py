"""What every figure shares: the paper style and sizes (``COLUMN_WIDTH``), the ``_styled``
decorator, the pyplot-free figure that shows itself in a notebook, the ``ax=`` / ``axes=``
checks and the small validators of the figure functions' arguments."""

from __future__ import annotations

import functools
import io
import numbers
import re
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
                    _wrap_tick_labels(ax)
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


_LEGEND_CHAR = 0.052
"""Inches a character of a 7-point legend label takes (about 0.53 em, a Latin text's mean)."""
_LEGEND_ENTRY = 0.3
"""Inches a legend entry takes besides its text: the handle and the spaces either side."""
_LEGEND_ROW = 0.16
"""Inches a line of 7-point legend text takes, with the space between lines."""


_LABEL_CHARS = 34
"""Characters of a 7-point tick label per line beside a column-wide axes (about 1.7 in)."""


def _wrap_labels(labels: Sequence[Any], chars: int = _LABEL_CHARS) -> tuple[list[str], int]:
    r"""The labels wrapped (:func:`_wrap_one`, line by line) to ``chars`` characters a line,
    and how many lines the wrapping added: long model names (``org/checkpoint-name``) then
    keep a column-wide figure's axes from collapsing.

    Examples
    --------
    >>> from evaluq.plots._common import _wrap_labels
    >>> _wrap_labels(["m0 − m1", "meta-llama/Meta-Llama-3.1-70B − Qwen/Qwen2.5-72B"])
    (['m0 − m1', 'meta-llama/Meta-Llama-3.1-70B −\nQwen/Qwen2.5-72B'], 1)
    >>> _wrap_labels(["meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo"], 20)[0]
    ['meta-llama/Meta-\nLlama-3.1-70B-\nInstruct-Turbo']
    >>> _wrap_labels(["a" * 25], 10)[0]
    ['aaaaaaaaaa\naaaaaaaaaa\naaaaa']
    """
    wrapped = ["\n".join(_wrap_one(line, chars) for line in str(t).split("\n"))
               for t in labels]                  # lines already broken are kept
    return wrapped, sum(t.count("\n") for t in wrapped)


def _wrap_one(text: str, chars: int) -> str:
    """``text`` in lines of at most ``chars`` characters, broken after a space, ``/``, ``-``
    or ``_`` where it can (``meta-llama/Meta-`` | ``Llama-3.1-70B-`` | ``Instruct``), inside a
    longer run of other characters where it must."""
    if len(text) <= chars:
        return text
    lines, line = [], ""
    for piece in re.findall(r"[^/\-_ ]*[/\-_ ]?", text):
        if line and len(line) + len(piece.rstrip()) > chars:
            lines.append(line.rstrip())
            line = ""
        while len(line) + len(piece) > chars + (piece[-1:] == " "):
            cut = chars - len(line)
            lines.append(line + piece[:cut])
            line, piece = "", piece[cut:]
        line += piece
    return "\n".join([*lines, line.rstrip()] if line.strip() else lines)


def _wrap_tick_labels(ax: Axes) -> None:
    """Wrap the tick labels an axes was given (model names, pairs) to ``_LABEL_CHARS`` a line:
    a checkpoint's name of 50 characters beside a column-wide axes would squeeze it to
    nothing (matplotlib's layout then gives up, with a warning)."""
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    for axis in (ax.xaxis, ax.yaxis):     # labels given as text: set_ticks(ticks, labels)
        formatter = axis.get_major_formatter()
        if isinstance(formatter, FixedFormatter | FuncFormatter):   # (a partial pickles)
            axis.set_major_formatter(FuncFormatter(functools.partial(_wrapped, formatter)))


def _wrapped(formatter: Any, x: float, pos: int | None = None) -> str:
    """The label ``formatter`` gives, wrapped (:func:`_wrap_labels`)."""
    return _wrap_labels([formatter(x, pos)])[0][0]


def _row_height(labels: Sequence[Any], base: float) -> float:
    """Inches a row of a figure with these labels on its axis needs: ``base``, or more when
    a label wraps (:func:`_wrap_labels`) to lines that would overprint the next row's (0.115
    in a line of 7-point text, plus 0.06).

    Examples
    --------
    >>> from evaluq.plots._common import _row_height
    >>> _row_height(["m0", "m1"], 0.2), round(_row_height(["org/" + "x" * 60], 0.2), 3)
    (0.2, 0.405)
    """
    lines = max((t.count("\n") + 1 for t in _wrap_labels(list(labels))[0]), default=1)
    return max(base, 0.06 + 0.115 * lines)


def _pair_labels(pairs: Sequence[tuple[Any, Any]], sep: str) -> tuple[list[str], float]:
    """A label ``a <sep> b`` per pair, and the inches a row of them needs: one line (0.22 in)
    while the longest fits ``_LABEL_CHARS``, else ``a <sep>`` and ``b`` on lines of their
    own, each wrapped (0.1 in a row and 0.12 a line).

    Examples
    --------
    >>> from evaluq.plots._common import _pair_labels
    >>> _pair_labels([("m0", "m1")], "−")
    (['m0 − m1'], 0.22)
    >>> labels, row = _pair_labels([("org/a-long-model-name-7b", "org/b-long-model-name-7b")],
    ...                            "vs")
    >>> labels, round(row, 2)
    (['org/a-long-model-name-7b vs\\norg/b-long-model-name-7b'], 0.34)
    """
    labels = [f"{a} {sep} {b}" for a, b in pairs]
    if max(map(len, labels), default=0) > _LABEL_CHARS:
        labels = _wrap_labels([f"{a} {sep}\n{b}" for a, b in pairs])[0]
    lines = max((t.count("\n") + 1 for t in labels), default=1)
    return labels, max(0.22, 0.1 + 0.12 * lines)


def _legend_layout(labels: Sequence[str], width: float,
                   most: int) -> tuple[int, list[str], float]:
    """(ncols, labels, height) of a legend above a ``width``-inch axes: as many columns (up
    to ``most``) as the labels fit side by side, a label too long for a whole line wrapped
    (a model named ``org/a-very-long-checkpoint-name`` must not push the axes to nothing),
    and the inches its lines take, for the figure's height.

    Examples
    --------
    >>> from evaluq.plots._common import _legend_layout
    >>> _legend_layout(["a", "b", "c"], 3.4, 3)[0]
    3
    >>> ncols, labels, height = _legend_layout(["meta-llama/Meta-Llama-3.1-70B-Instruct"] * 4,
    ...                                        3.4, 3)
    >>> ncols, round(height, 2)
    (1, 0.64)
    """
    room = max(width - 0.6, 1.0)                 # the y label and tick labels take the rest
    chars = max(int((room - _LEGEND_ENTRY) / _LEGEND_CHAR), 8)
    wrapped, _ = _wrap_labels(labels, chars)
    longest = max((len(line) for t in wrapped for line in t.splitlines()), default=1)
    ncols = int(max(1, min(len(labels), most, room // (_LEGEND_ENTRY + _LEGEND_CHAR * longest))))
    lines = [t.count("\n") + 1 for t in wrapped]
    rows = [max(lines[i:i + ncols]) for i in range(0, len(lines), ncols)]
    return ncols, wrapped, _LEGEND_ROW * sum(rows)


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

"""Figures of the analysis results, ready for a paper.

Every function takes the result of one analysis and returns a :class:`matplotlib.figure.Figure`
built without pyplot (no global figure state, no backend needed: save it with
``fig.savefig(path)``). A pyplot-free figure has no image representation of its own
(IPython shows it as ``<Figure size ...>`` text unless ``%matplotlib inline`` registered a
printer for it), so evaluq's figures are of a thin subclass that adds ``_repr_png_``: the last
expression of a notebook cell, or ``IPython.display.display(fig)``, shows the image with no
magic and no pyplot; everything else is the plain :class:`~matplotlib.figure.Figure`.
matplotlib is imported inside the functions, so ``import evaluq`` does not need it. The
figures are sized for a column of a two-column paper (3.4 inches wide, 8 pt text) and grow
with the number of models, pairs or languages; every axis is labelled with the metric's name.

=============================  =======================================================
function                       draws
=============================  =======================================================
:func:`forest_plot`            pairwise differences with their intervals
:func:`rank_heatmap`           P(rank = r) per model
:func:`tier_diagram`           the significance groups, critical-difference style
:func:`variance_bars`          seed and bootstrap SDs per language and model
:func:`posterior_differences`  posterior densities of differences with a ROPE band
:func:`annotation_bins`        a metric against bins of the annotation count
:func:`resample_histogram`     the resample / null distribution of a significance test
:func:`scarce_intervals`       t and ARF intervals for scarce observations
:func:`mde_plot`               the minimum detectable effect against items and seeds
=============================  =======================================================
"""

from __future__ import annotations

import functools
import io
import numbers
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import CI_BOUND, LANGUAGE, LANGUAGE_LABEL, MODEL, MODEL_B, RANK
from evaluq._intervals import CI_KIND
from evaluq._schema import orientation
from evaluq.errors import CubeError
from evaluq.pairwise import pairwise_table

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from evaluq.intervals import ARFIntervalResult, TIntervalResult
    from evaluq.significance import BootstrapTestResult

__all__ = [
    "COLUMN_WIDTH",
    "annotation_bins",
    "forest_plot",
    "mde_plot",
    "posterior_differences",
    "rank_heatmap",
    "resample_histogram",
    "scarce_intervals",
    "tier_diagram",
    "variance_bars",
]

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

    _InlineFigure.__module__ = __name__          # pickled by reference: see __getattr__
    _InlineFigure.__qualname__ = _INLINE_FIGURE
    return _InlineFigure


if not TYPE_CHECKING:   # hidden from type checkers: `eq.plots.<typo>` stays an error for them
    def __getattr__(name: str) -> Any:
        """Resolve the lazily built figure class by name (unpickling a figure needs it)."""
        if name == _INLINE_FIGURE:
            return _inline_figure_class()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


def _require(obj: Any, name: str, what: str, variables: Sequence[str]) -> None:
    if not isinstance(obj, xr.Dataset) or any(v not in obj for v in variables):
        shown = ", ".join(variables)
        raise CubeError(f"`{name}` must be the result of {what} (a Dataset with {shown}); "
                        f"got {type(obj).__name__}")


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


# --- pairwise differences -------------------------------------------------------------------

@_styled
def forest_plot(pairwise: xr.Dataset, *, unique: bool = True,
                title: str | None = None, ax: Axes | None = None) -> Figure:
    """Forest plot of pairwise differences: one row per pair, its interval and estimate.

    Parameters
    ----------
    pairwise
        The result of :func:`evaluq.pairwise_differences` (or the posterior differences of a
        hierarchical fit, the same Dataset). A ``language`` dim is not drawn: select one
        language first.
    unique
        Draw each unordered pair once, better model first (as
        ``pairwise_table(unique=True)``); ``False`` draws every ordered pair.
    title
        Axes title; default names the interval level and kind.
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: a line segment per pair from ``lower`` to ``upper`` (a ``LineCollection``,
        first of ``ax.collections``) and the observed difference as a point (the second
        collection), filled blue when the interval excludes 0 and grey otherwise; a dashed
        line at 0. The top row is the pair with the largest advantage.

    See Also
    --------
    evaluq.pairwise_table, rank_heatmap

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 2.0, 1.0], rng=0)
    >>> pw = eq.pairwise_differences(eq.aggregate(eq.resample(cube, n_resamples=200, rng=0)))
    >>> fig = eq.plots.forest_plot(pw)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['m2 − m0', 'm2 − m1', 'm1 − m0']
    """
    _require(pairwise, "pairwise", "eq.pairwise_differences", ("ci",))
    if MODEL_B not in pairwise.dims:
        raise CubeError(f"`pairwise` must be the result of eq.pairwise_differences (a Dataset "
                        f"with a {MODEL_B!r} dim); its dims are {tuple(pairwise.dims)}")
    if LANGUAGE in pairwise.dims:
        raise CubeError("`pairwise` has a language dim (eq.pairwise_by_language): select one "
                        "language first, e.g. pairwise.sel(language='de')")
    table = pairwise_table(pairwise, unique=unique)
    n = len(table)
    if n == 0:
        raise CubeError("`pairwise` has fewer than two models: nothing to draw")
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.7 + 0.22 * n)
    y = np.arange(n)[::-1].astype(float)
    labels = [f"{a} − {b}" for a, b in table.index]
    lower, upper = table["lower"].to_numpy(float), table["upper"].to_numpy(float)
    observed = table["observed" if "observed" in table else "mean"].to_numpy(float)
    clear = table["verdict"].to_numpy() != 0
    colors = np.where(clear, _GOOD, _NEUTRAL)
    ax.hlines(y, lower, upper, colors=colors.tolist(), linewidth=1.4)
    ax.scatter(observed, y, c=colors, s=14, zorder=3, edgecolors="none")
    ax.axvline(0.0, color="black", linewidth=0.7, linestyle="--")
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, n - 0.3)
    attrs = pairwise.attrs
    how = attrs.get("how", "")
    ax.set_xlabel(f"difference in {how + ' ' if how else ''}{_metric(attrs)}")
    level = attrs.get("confidence_level", pairwise["ci"].attrs.get("confidence_level", 0.95))
    kind = pairwise["ci"].attrs.get(CI_KIND, attrs.get(CI_KIND, ""))
    ax.set_title(title if title is not None else
                 f"{float(level):.0%} {kind} intervals ({_orientation_text(attrs)})".strip())
    return fig


# --- ranks ----------------------------------------------------------------------------------------

@_styled
def rank_heatmap(ranks: xr.Dataset, *, title: str | None = None,
                 annotate: bool | None = None, ax: Axes | None = None) -> Figure:
    """Heatmap of P(rank = r): models (best expected rank on top) by rank.

    Parameters
    ----------
    ranks
        The result of :func:`evaluq.rank_distribution` (or a hierarchical fit's
        ``rank_probabilities()``): ``probability`` (model, rank) and ``expected_rank``.
    title
        Axes title (default "P(rank)").
    annotate
        Write each probability in its cell; default when there are at most 12 models.
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        The heatmap axes (an image whose array is the probability matrix, rows sorted by
        expected rank) and a colour bar.

    See Also
    --------
    evaluq.rank_distribution

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 2.0, 1.0], rng=0)
    >>> rd = eq.rank_distribution(eq.aggregate(eq.resample(cube, n_resamples=200, rng=0)))
    >>> fig = eq.plots.rank_heatmap(rd)
    >>> fig.axes[0].images[0].get_array().shape
    (3, 3)
    """
    _require(ranks, "ranks", "eq.rank_distribution", ("probability", "expected_rank"))
    order = np.argsort(ranks["expected_rank"].values, kind="stable")
    prob = ranks["probability"].transpose(MODEL, RANK).values[order]
    models = ranks[MODEL].values[order]
    n_m, n_r = prob.shape
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.9 + 0.24 * n_m)
    image = ax.imshow(prob, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto",
                      interpolation="nearest")
    ax.set_xticks(np.arange(n_r), [str(r) for r in ranks[RANK].values])
    ax.set_yticks(np.arange(n_m), [str(m) for m in models])
    ax.set_xlabel("rank (1 = best)")
    ax.set_ylabel("model")
    ax.set_title(title if title is not None else "P(rank)")
    ax.spines[:].set_visible(False)
    if annotate is None:
        annotate = n_m <= 12
    if annotate:
        for (i, j), p in np.ndenumerate(prob):
            if p >= 0.005:
                ax.text(j, i, f"{p:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if p > 0.55 else "black")
    fig.colorbar(image, ax=ax, label="probability", shrink=0.9)
    return fig


@_styled
def tier_diagram(aggregated: xr.Dataset, tiers: xr.DataArray | None = None, *,
                 alpha: float = 0.05, adjustment: str = "holm",
                 title: str | None = None, ax: Axes | None = None) -> Figure:
    """Critical-difference-style diagram of the significance groups.

    The models sit on an axis of their observed aggregate; each hangs from the axis by an elbow
    line to its label. A thick bar under the axis joins the models of one tier (models the
    adjusted tests cannot separate from the tier's top model, :func:`evaluq.significance_groups`).

    Parameters
    ----------
    aggregated
        The result of :func:`evaluq.aggregate`.
    tiers
        The result of :func:`evaluq.significance_groups`; computed from ``aggregated`` with
        ``alpha`` and ``adjustment`` when omitted.
    alpha, adjustment
        Level and p-value adjustment of the tests (used when ``tiers`` is omitted, and in the
        title).
    title
        Axes title (default: the test settings).
    ax
        A matplotlib Axes to draw into (its figure is returned, figures compose); default a
        new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes. The tier bars are the lines with label ``"tier k"`` (one per tier with two
        or more models), spanning the tier's smallest to largest aggregate.

    See Also
    --------
    evaluq.significance_groups, evaluq.leaderboard

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, model_means=[0.0, 0.05, 5.0], sigma_between=0.5,
    ...                         rng=0)
    >>> agg = eq.aggregate(eq.resample(cube, n_resamples=500, rng=0))
    >>> fig = eq.plots.tier_diagram(agg)
    >>> [line.get_label() for line in fig.axes[0].lines if line.get_label().startswith("tier")]
    ['tier 2']
    """
    from evaluq._dims import RESAMPLED
    from evaluq.ranks import significance_groups
    from evaluq.resampling import OBSERVED

    _require(aggregated, "aggregated", "eq.aggregate", (OBSERVED, RESAMPLED))
    if tiers is None:
        tiers = significance_groups(aggregated, alpha=alpha, adjustment=adjustment)
    if not isinstance(tiers, xr.DataArray) or MODEL not in tiers.dims:
        raise CubeError("`tiers` must be the result of eq.significance_groups")
    alpha = float(tiers.attrs.get("alpha", alpha))
    adjustment = str(tiers.attrs.get("adjustment", adjustment))
    tiers = tiers.sel({MODEL: aggregated[MODEL].values})
    x = aggregated[OBSERVED].values.astype(float)
    models = [str(m) for m in aggregated[MODEL].values]
    tier = tiers.values.astype(int)
    n = len(models)
    order = np.argsort(x, kind="stable")        # left to right on the axis
    fig, ax = _axes(ax, COLUMN_WIDTH, 1.0 + 0.2 * ((n + 1) // 2) + 0.12 * tier.max())
    span = float(np.nanmax(x) - np.nanmin(x)) or 1.0
    lo, hi = float(np.nanmin(x)) - 0.08 * span, float(np.nanmax(x)) + 0.08 * span
    ax.set_xlim(lo - 0.25 * span, hi + 0.25 * span)
    ax.hlines(0.0, lo, hi, color="black", linewidth=0.9)
    ax.plot(x, np.zeros(n), "|", color="black", markersize=6)
    n_left = (n + 1) // 2
    step = 1.0
    for k, i in enumerate(order):
        left = k < n_left
        depth = -(k + 1) * step if left else -(n - k) * step
        edge = lo - 0.02 * span if left else hi + 0.02 * span
        ax.plot([x[i], x[i], edge], [0.0, depth, depth], color=_NEUTRAL, linewidth=0.7)
        ax.text(edge, depth, f" {models[i]} " if not left else f"{models[i]} ",
                ha="right" if left else "left", va="center", fontsize=7)
    tier_ids = np.unique(tier)
    for j, t in enumerate(tier_ids):
        members = x[tier == t]
        if members.size < 2:
            continue
        y = -0.35 - 0.3 * (j % 3)
        ax.plot([members.min(), members.max()], [y, y], color=_ACCENT, linewidth=2.6,
                solid_capstyle="round", label=f"tier {t}")
    depth_max = (n_left + 0.5) * step
    ax.set_ylim(-depth_max, 0.6)
    ax.set_yticks([])
    ax.spines[["left", "bottom"]].set_visible(False)
    ax.tick_params(axis="x", bottom=False, labelbottom=False, top=True, labeltop=True)
    ax.xaxis.set_label_position("top")
    attrs = aggregated.attrs
    how = attrs.get("how", "")
    ax.set_xlabel(f"{how + ' ' if how else ''}{_metric(attrs)} ({_orientation_text(attrs)})")
    ax.set_title(title if title is not None else
                 f"tiers joined by a bar: {adjustment}-adjusted tests at α = {alpha:g}",
                 pad=2, y=-0.02 - 0.02 * n, loc="left", fontsize=7)
    return fig


# --- variance components ----------------------------------------------------------------------

@_styled
def variance_bars(components: xr.Dataset, *,
                  variables: Sequence[str] = ("sigma_seed", "sigma_boot"),
                  axes: Sequence[Axes] | None = None) -> Figure:
    """Bars of the within-language SDs per language, one bar per model, one panel per SD.

    Parameters
    ----------
    components
        The result of :func:`evaluq.variance_components`.
    variables
        Which (model, language) SDs to draw, each in its own panel; a panel whose values are
        all missing (``sigma_boot`` of a cube without bootstrap replicates) is left out. The
        standard errors ``se_<name>`` are drawn as error bars when present.
    axes
        Axes to draw into, one per drawn variable in order (their figure is returned; figures
        compose); default a new figure.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per drawn variable; bar ``k`` of model ``m`` has the height of
        ``components[name].sel(model=m)`` at language ``k``.

    See Also
    --------
    evaluq.variance_components, evaluq.variance_table

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=3, rng=0)
    >>> fig = eq.plots.variance_bars(eq.variance_components(cube))
    >>> [ax.get_ylabel() for ax in fig.axes]
    ['seed SD', 'bootstrap SD']
    """
    _require(components, "components", "eq.variance_components", ("sigma_between",))
    unknown = [v for v in variables if v not in components.data_vars]
    if unknown:
        raise ValueError(f"`variables` names {unknown}, which the components do not hold; "
                         f"they hold {sorted(map(str, components.data_vars))}")
    shown = [v for v in variables if np.isfinite(components[v].values).any()]
    if not shown:
        raise CubeError(f"every value of {', '.join(variables)} is missing: nothing to draw")
    models = components[MODEL].values
    languages = components[LANGUAGE].values
    n_m, n_l = len(models), len(languages)
    width = COLUMN_WIDTH if n_l * n_m <= 24 else _WIDE
    labels = [str(lang) for lang in languages]
    # long names (MMLU subjects, harness task names) would overprint: slant them and wrap
    # the longest, and give the figure the height they take
    slant = n_l > 6 or sum(map(len, labels)) > 8 * width
    longest = min(max(map(len, labels)), 24)
    height = 0.5 + 1.35 * len(shown) + (0.06 * longest if slant else 0.0)
    fig, panels, new = _panels(axes, len(shown), width, height, sharex=True)
    pos = np.arange(n_l, dtype=float)
    bar = 0.8 / n_m
    metric = _metric(components.attrs)
    for ax, name in zip(panels[:, 0], shown, strict=True):
        values = components[name].transpose(MODEL, LANGUAGE).values
        se_name = f"se_{name}"
        se = (components[se_name].transpose(MODEL, LANGUAGE).values
              if se_name in components else None)
        for k, model in enumerate(models):
            err = None if se is None else np.where(np.isfinite(se[k]), se[k], 0.0)
            ax.bar(pos - 0.4 + bar * (k + 0.5), values[k], width=bar, label=str(model),
                   yerr=err, error_kw={"elinewidth": 0.5, "capsize": 0, "ecolor": "#555555"})
        ax.set_ylabel(_SD_LABELS.get(name, name))
    last = panels[-1, 0]
    wrapped = [textwrap.fill(t.replace("_", "_ "), 24).replace("_ ", "_") for t in labels]
    last.set_xticks(pos, wrapped if slant else labels,
                    rotation=40 if slant else 0, ha="right" if slant else "center",
                    rotation_mode="anchor", fontsize=7 if slant else None)
    last.set_xlabel(str(components.attrs.get(LANGUAGE_LABEL) or "language"))
    heading = f"within-language SDs of {metric} (bars: ± standard error)"
    if new:  # on the user's figure the heading goes on the first panel, not the figure
        fig.suptitle(heading, fontsize=8)
    else:
        panels[0, 0].set_title(heading, fontsize=8)
    panels[0, 0].legend(ncols=min(n_m, 5 if width > COLUMN_WIDTH else 3), loc="lower left",
                        bbox_to_anchor=(0, 1.0), handlelength=1.0, columnspacing=0.8)
    return fig


# --- posterior differences ------------------------------------------------------------------------

def _difference_series(draws: xr.DataArray, sample_dims: Sequence[str],
                       pairs: Sequence[tuple[Any, Any]] | None) -> list[tuple[str, np.ndarray]]:
    other = [d for d in draws.dims if d not in sample_dims]
    if MODEL in other and MODEL_B in other:
        models = draws[MODEL].values.tolist()
        if pairs is None:
            pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
        out = []
        for a, b in pairs:
            sel = draws.sel({MODEL: a, MODEL_B: b})
            rest = [d for d in sel.dims if d not in sample_dims]
            if rest:
                raise CubeError(f"`draws` has dims {rest} besides the pair and the sample dims")
            out.append((f"{a} − {b}", sel.values.ravel()))
        return out
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


# --- the field's comparison methods: Demšar's CD diagram, baycomp's posteriors (issue 19) ------

__all__ += ["bayesian_comparison", "critical_difference_diagram"]

_CD_ROW = 0.3
"""Vertical distance between two model labels of a CD diagram (data units)."""
_CD_GROUP_ROW = 0.16
"""Vertical distance between two group bars of a CD diagram (data units)."""


def _cd_axis(ax: Axes, lo: int, hi: int) -> None:
    """The mean-rank axis of a CD diagram: a line, ticks at halves, labels at whole ranks."""
    ax.hlines(0.0, lo, hi, color="black", linewidth=0.8)
    for a in np.arange(lo, hi + 0.25, 0.5):
        ax.vlines(a, 0.0, 0.1 if float(a).is_integer() else 0.05, color="black", linewidth=0.8)
    for a in range(lo, hi + 1):
        ax.text(a, 0.13, str(a), ha="center", va="bottom", fontsize=7)


def _cd_bar(ax: Axes, lo: int, cd: float) -> None:
    """The critical-difference bar above the axis (nothing when the test has none)."""
    if not np.isfinite(cd):
        return
    y = 0.55
    ax.plot([lo, lo + cd], [y, y], color="black", linewidth=0.8, label="CD")
    ax.vlines([lo, lo + cd], y - 0.05, y + 0.05, color="black", linewidth=0.8)
    ax.text(lo + cd / 2, y + 0.07, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=7)


def _cd_labels(ax: Axes, ranks: np.ndarray, models: Sequence[str], top: float,
               lo: int, hi: int) -> None:
    """Elbow lines from each model's mean rank to its label, the better half on the left."""
    order = np.argsort(ranks, kind="stable")
    k = order.size
    n_left = (k + 1) // 2
    pad = 0.04 * (hi - lo)
    for pos, i in enumerate(order):
        left = pos < n_left
        depth = top - _CD_ROW * (pos if left else k - 1 - pos)
        edge = lo - pad if left else hi + pad
        ax.plot([ranks[i], ranks[i], edge], [0.0, depth, depth], color=_NEUTRAL, linewidth=0.7)
        text = f"{models[i]} ({ranks[i]:.2f})"
        ax.text(edge - pad / 2 if left else edge + pad / 2, depth, text,
                ha="right" if left else "left", va="center", fontsize=7)


@_styled
def critical_difference_diagram(result: xr.Dataset, *, ax: Axes | None = None,
                                title: str | None = None) -> Figure:
    """The critical-difference (CD) diagram of Demšar (2006), as autorank draws it.

    The models sit on an axis of mean ranks (1 = best, on the left), each joined by an elbow
    line to its label (the better half on the left, the worse on the right, with the mean
    rank); a thick bar joins every group of models the post-hoc test cannot separate; for the
    Nemenyi test a bar above the axis shows the critical difference.

    Parameters
    ----------
    result : xarray.Dataset
        The result of :func:`evaluq.critical_difference`.
    ax : matplotlib.axes.Axes, optional
        Draw into this axes (its figure is returned); default: a new evaluq figure.
    title : str, optional
        Default: the test, its level and the Friedman p-value.

    Returns
    -------
    matplotlib.figure.Figure
        The group bars are the lines labelled ``"group g"``; the CD bar is labelled ``"CD"``.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=4, n_languages=20, model_means=[0, 0, 2, 2],
    ...                         sigma_between=1.0, rng=0)
    >>> fig = eq.plots.critical_difference_diagram(eq.critical_difference(cube))
    >>> sorted(line.get_label() for line in fig.axes[0].lines if line.get_label()[0] in "Cg")
    ['CD', 'group 0', 'group 1']
    """
    from evaluq._dims import IN_GROUP, MEAN_RANK

    _require(result, "result", "eq.critical_difference", (MEAN_RANK, IN_GROUP))
    ranks = result[MEAN_RANK].values.astype(float)
    models = [str(m) for m in result[MODEL].values]
    member = result[IN_GROUP].values.astype(bool)
    k, n_groups = ranks.size, member.shape[0]
    lo, hi = min(1, int(np.floor(ranks.min()))), max(k, int(np.ceil(ranks.max())))
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.75 + 0.2 * ((k + 1) // 2) + 0.1 * n_groups)
    _cd_axis(ax, lo, hi)
    _cd_bar(ax, lo, float(result.attrs.get("cd", np.nan)))
    for g in range(n_groups):
        y = -0.18 - _CD_GROUP_ROW * g
        r = ranks[member[g]]
        ax.plot([r.min() - 0.05, r.max() + 0.05], [y, y], color=_ACCENT, linewidth=2.4,
                solid_capstyle="round", label=f"group {g}")
    top = -0.18 - _CD_GROUP_ROW * max(n_groups, 1) - 0.12
    _cd_labels(ax, ranks, models, top, lo, hi)
    ax.set_xlim(lo - 0.55 * (hi - lo), hi + 0.55 * (hi - lo))
    ax.set_ylim(top - _CD_ROW * ((k + 1) // 2) + 0.1, 0.85)
    ax.set_axis_off()
    at = result.attrs
    test, alpha, p = at.get("test", ""), at.get("alpha", np.nan), at.get("friedman_pvalue")
    ax.set_title(title if title is not None else
                 f"{test} at α = {float(alpha):g}; Friedman p = {float(p):.3g}" if p is not None
                 else f"{test} at α = {float(alpha):g}", fontsize=7, loc="left")
    return fig


def _simplex(ax: Axes, samples: np.ndarray, probs: Sequence[float],
             names: Sequence[str]) -> None:
    """baycomp's ``plot_simplex``: the samples (left, rope, right) in a triangle, left-bottom
    vertex ``model``, right-bottom ``model_b``, top the ROPE."""
    def project(points: np.ndarray) -> np.ndarray:
        p1, p2, p3 = points.T / np.sqrt(3)
        x = (p2 - p1) * np.cos(np.pi / 6) + 0.5
        y = p3 - (p1 + p2) * np.sin(np.pi / 6) + 1 / (2 * np.sqrt(3))
        return np.vstack((x, y)).T

    ax.plot([0, 0.5, 1.0, 0], [0, np.sqrt(3) / 2, 0, 0], color="#e07b39", linewidth=0.9)
    cx, cy = project(np.array([[1 / 3, 1 / 3, 1 / 3]]))[0]
    for x, y in project(np.array([[.5, .5, 0], [.5, 0, .5], [0, .5, .5]])):
        ax.plot([cx, x], [cy, y], color="#e07b39", linewidth=0.7)
    pts = project(samples[:, [0, 2, 1]])
    ax.hexbin(pts[:, 0], pts[:, 1], mincnt=1, cmap="Blues_r", gridsize=40, linewidths=0)
    ax.text(0, -0.04, f"p({names[0]}) = {probs[0]:.3f}", ha="center", va="top", fontsize=7)
    ax.text(0.5, np.sqrt(3) / 2 + 0.02, f"p(rope) = {probs[1]:.3f}", ha="center",
            va="bottom", fontsize=7)
    ax.text(1, -0.04, f"p({names[1]}) = {probs[2]:.3f}", ha="center", va="top", fontsize=7)
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.2, 1.0)
    ax.set_aspect("equal", "box")
    ax.set_axis_off()


def _t_density(ax: Axes, attrs: Mapping[str, Any], rope: float, names: Sequence[str]) -> None:
    """baycomp's single-data-set plot: the Student-t posterior of ``model_b - model`` with the
    ROPE's ends."""
    from scipy import stats

    df, mean, scale = attrs["df"], attrs["mean"], np.sqrt(attrs["var"])
    if scale > 0:
        xs = np.linspace(min(stats.t.ppf(0.005, df, mean, scale), -1.05 * rope),
                         max(stats.t.ppf(0.995, df, mean, scale), 1.05 * rope), 200)
        ys = stats.t.pdf(xs, df, mean, scale)
        ax.plot(xs, ys, color=_GOOD, linewidth=1.2, label="posterior density")
        ax.fill_between(xs, ys, 0, color=_GOOD, alpha=0.25, linewidth=0)
    else:
        ax.axvline(mean, color=_GOOD, linewidth=1.2, label="posterior (a point)")
    if rope > 0:
        ax.axvspan(-rope, rope, color=_NEUTRAL, alpha=0.2, linewidth=0, label="ROPE")
    ax.axvline(0.0, color="black", linewidth=0.6)
    ax.set_yticks([])
    ax.set_xlabel(f"difference {names[1]} − {names[0]}  (left: {names[0]} higher)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), ncols=2)


@_styled
def bayesian_comparison(result: Any, *, ax: Axes | None = None,
                        title: str | None = None) -> Figure:
    """The posterior of a Bayesian comparison of two models, as baycomp plots it.

    A signed-rank test (:func:`evaluq.bayesian_signed_rank`) is shown in the probability
    simplex (a hexbin of the posterior samples: bottom left ``model`` scores higher, bottom
    right ``model_b``, top the ROPE), or, when no sample gives the ROPE 0.1 or more (as
    without a ROPE), as baycomp does, a histogram of P(``model_b`` higher) with 0.5 marked. A
    correlated t-test (:func:`evaluq.correlated_t_test`) is shown as the Student-t density of
    the difference ``model_b - model`` with the ROPE shaded.

    Parameters
    ----------
    result : evaluq.field.bayescomp.BayesianComparison
    ax : matplotlib.axes.Axes, optional
    title : str, optional
        Default: ``p_above`` / ``p_rope`` / ``p_below`` (baycomp's left / rope / right).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, n_languages=12, rng=0)
    >>> res = eq.bayesian_signed_rank(cube, "m0", "m1", rope=0.5, n_samples=2000, rng=0)
    >>> fig = eq.plots.bayesian_comparison(res)
    >>> len(fig.axes)
    1
    """
    from evaluq.field.bayescomp import BayesianComparison

    if not isinstance(result, BayesianComparison):
        raise TypeError(f"`result` must be the result of eq.bayesian_signed_rank or "
                        f"eq.correlated_t_test; got {type(result).__name__}")
    fig, ax = _axes(ax, COLUMN_WIDTH, 2.6 if result.method == "signed-rank" else 1.9)
    names = (str(result.attrs.get(MODEL, "model")), str(result.attrs.get(MODEL_B, "model_b")))
    probs = [result.p_above, result.p_rope, result.p_below]   # baycomp's left, rope, right
    if result.method == "correlated-t":
        _t_density(ax, result.attrs, result.rope, names)
    elif float(result.distribution.sel(region="rope").max()) >= 0.1:
        _simplex(ax, result.distribution.values.T, probs, names)
    else:
        right = result.distribution.sel(region="right").values
        ax.hist(right, bins=50, color=_GOOD, alpha=0.7)
        ax.axvline(0.5, color=_ACCENT, linewidth=1.0)
        ax.set_xlim(0, 1)
        ax.set_yticks([])
        ax.set_xlabel(f"P({names[1]} scores higher)")
    ax.set_title(title if title is not None else
                 f"p({names[0]}) = {probs[0]:.3f}, p(rope) = {probs[1]:.3f}, "
                 f"p({names[1]}) = {probs[2]:.3f}", fontsize=7, loc="left")
    return fig


# --- rliable's figures (issue 19): interval estimates, performance profiles, P(X > Y) -----

_AGGREGATE_TITLES = {"median": "Median", "iqm": "IQM", "mean": "Mean",
                     "optimality_gap": "Optimality gap"}


@_styled
def interval_estimates_panel(estimates: xr.Dataset, *, axes: Any = None,
                             title: str | None = None) -> Figure:
    """rliable's interval-estimates figure: one panel per aggregate, a bar per model from
    the interval's lower to its upper end with a tick at the estimate.

    Parameters
    ----------
    estimates
        The result of :func:`evaluq.interval_estimates`.
    axes
        Axes to draw into, one per aggregate (default: a new figure).
    title
        Figure title (default none).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> cube = eq.from_arrays(np.random.default_rng(0).normal(0.8, 0.2, (3, 5, 4)))
    >>> fig = eq.plots.interval_estimates_panel(eq.interval_estimates(cube, n_resamples=200,
    ...                                                               rng=0))
    >>> [ax.get_title() for ax in fig.axes]
    ['Median', 'IQM', 'Mean', 'Optimality gap']
    """
    _require(estimates, "estimates", "eq.interval_estimates", ("estimate", "ci"))
    names = [str(a) for a in estimates["aggregate"].values]
    models = [str(m) for m in estimates[MODEL].values]
    fig, grid, _ = _panels(axes, len(names), max(COLUMN_WIDTH, 1.7 * len(names)),
                           0.6 + 0.25 * len(models), ncols=len(names))
    axes_list = list(np.ravel(grid))
    y = np.arange(len(models))[::-1].astype(float)
    for ax, name in zip(axes_list, names, strict=True):
        est = estimates["estimate"].sel(aggregate=name).values
        ci = estimates["ci"].sel(aggregate=name).values
        for k in range(len(models)):
            ax.barh(y[k], ci[k, 1] - ci[k, 0], left=ci[k, 0], height=0.6, color=f"C{k}",
                    alpha=0.75)
            ax.vlines(est[k], y[k] - 0.3, y[k] + 0.3, colors="black", linewidth=1.2)
        ax.set_title(_AGGREGATE_TITLES.get(name, name))
        ax.set_yticks(y, models if ax is axes_list[0] else [""] * len(models))
    level = float(estimates.attrs.get("confidence_level", 0.95))
    axes_list[0].figure.supxlabel(f"{_metric(estimates.attrs)} ({level:.0%} stratified "
                                  f"bootstrap intervals)", fontsize=8)
    if title is not None:
        fig.suptitle(title)
    return fig


@_styled
def performance_profile_plot(profile: xr.Dataset, *, ax: Any = None,
                             title: str | None = None) -> Figure:
    r"""rliable's performance profile: the fraction of scores above :math:`\tau` against
    :math:`\tau`, one line per model with its interval as a band.

    Parameters
    ----------
    profile
        The result of :func:`evaluq.performance_profile`.
    ax
        Axes to draw into (default: a new figure).
    title
        Axes title (default none).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> cube = eq.from_arrays(np.random.default_rng(0).normal(0.8, 0.2, (2, 5, 4)))
    >>> prof = eq.performance_profile(cube, np.linspace(0, 1.5, 16), n_resamples=200, rng=0)
    >>> fig = eq.plots.performance_profile_plot(prof)
    >>> len(fig.axes[0].get_lines())
    2
    """
    _require(profile, "profile", "eq.performance_profile", ("estimate", "ci"))
    fig, axis = _axes(ax, COLUMN_WIDTH, 2.3)
    tau = profile["threshold"].values
    for k, model in enumerate(profile[MODEL].values):
        est = profile["estimate"].sel({MODEL: model}).values
        ci = profile["ci"].sel({MODEL: model}).values
        axis.plot(tau, est, color=f"C{k}", linewidth=1.3, label=str(model))
        axis.fill_between(tau, ci[:, 0], ci[:, 1], color=f"C{k}", alpha=0.2, linewidth=0)
    kind = profile.attrs.get("kind", "run")
    what = "runs" if kind == "run" else "tasks (mean over runs)"
    axis.set_xlabel(rf"{_metric(profile.attrs)} threshold $\tau$")
    axis.set_ylabel(rf"fraction of {what} > $\tau$")
    axis.set_ylim(-0.02, 1.02)
    axis.legend(loc="upper right")
    if title is not None:
        axis.set_title(title)
    return fig


@_styled
def probability_of_improvement_plot(poi: xr.Dataset, *,
                                    pairs: Sequence[tuple[Any, Any]] | None = None,
                                    ax: Any = None, title: str | None = None) -> Figure:
    """rliable's probability-of-improvement figure: one row per pair "X vs Y", the
    interval of P(X > Y) as a bar with a tick at the estimate, and a dashed line at 1/2.

    Parameters
    ----------
    poi
        The result of :func:`evaluq.probability_of_improvement`.
    pairs
        The (model, model_b) pairs to draw, top first (default: every pair with the model
        listed first before the other).
    ax
        Axes to draw into (default: a new figure).
    title
        Axes title (default none).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> cube = eq.from_arrays(np.random.default_rng(0).normal(0.8, 0.2, (3, 5, 4)))
    >>> poi = eq.probability_of_improvement(cube, n_resamples=200, rng=0)
    >>> fig = eq.plots.probability_of_improvement_plot(poi)
    >>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
    ['0 vs 1', '0 vs 2', '1 vs 2']
    """
    _require(poi, "poi", "eq.probability_of_improvement", ("estimate", "ci"))
    models = list(poi[MODEL].values)
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
    if not pairs:
        raise CubeError("`poi` has fewer than two models: nothing to draw")
    fig, axis = _axes(ax, COLUMN_WIDTH, 0.7 + 0.25 * len(pairs))
    y = np.arange(len(pairs))[::-1].astype(float)
    for row, (a, b) in zip(y, pairs, strict=True):
        sel = {MODEL: a, MODEL_B: b}
        lo, hi = poi["ci"].sel(sel).values
        axis.barh(row, hi - lo, left=lo, height=0.6, color=_GOOD, alpha=0.6)
        axis.vlines(float(poi["estimate"].sel(sel)), row - 0.3, row + 0.3, colors="black",
                    linewidth=1.2)
    axis.axvline(0.5, color="black", linewidth=0.7, linestyle="--")
    axis.set_yticks(y, [f"{a} vs {b}" for a, b in pairs])
    axis.set_xlim(0, 1)
    level = float(poi.attrs.get("confidence_level", 0.95))
    axis.set_xlabel(f"P(X > Y) ({level:.0%} stratified bootstrap intervals)")
    if title is not None:
        axis.set_title(title)
    return fig


__all__ += ["interval_estimates_panel", "performance_profile_plot",
            "probability_of_improvement_plot"]


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

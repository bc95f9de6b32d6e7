"""The cube's figures: pairwise differences (forest plot), rank probabilities (heatmap),
significance tiers and variance components."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import xarray as xr

from evaluq._dims import LANGUAGE, LANGUAGE_LABEL, MODEL, MODEL_B, RANK
from evaluq._intervals import CI_KIND
from evaluq._validation import check_bool, check_pair, check_text
from evaluq.errors import CubeError
from evaluq.pairwise import pairwise_table
from evaluq.plots._common import (
    _ACCENT,
    _GOOD,
    _NEUTRAL,
    _SD_LABELS,
    _WIDE,
    COLUMN_WIDTH,
    _axes,
    _legend_layout,
    _metric,
    _orientation_text,
    _pair_labels,
    _panels,
    _require,
    _row_height,
    _styled,
    _wrap_labels,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


__all__ = ["forest_plot", "rank_heatmap", "tier_diagram", "variance_bars"]


# --- pairwise differences -------------------------------------------------------------------

MAX_FOREST_PAIRS: Final = 300
""":func:`forest_plot` draws at most this many pairs (25 models) unless ``pairs`` names them:
100 models' 4,950 rows made a figure 1,090 inches tall that took 96 s to show."""


@_styled
def forest_plot(pairwise: xr.Dataset, *, unique: bool = True,
                pairs: Sequence[tuple[Any, Any]] | None = None,
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
    pairs
        Draw only these (model, model_b) pairs, in either order (default every pair): with
        many models, e.g. each model against the next in the leaderboard.
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
    check_text("title", title, or_none=True)
    _require(pairwise, "pairwise", "eq.pairwise_differences", ("ci",))
    if MODEL_B not in pairwise.dims:
        raise CubeError(f"`pairwise` must be the result of eq.pairwise_differences (a Dataset "
                        f"with a {MODEL_B!r} dim); its dims are {tuple(pairwise.dims)}")
    if LANGUAGE in pairwise.dims:
        raise CubeError("`pairwise` has a language dim (eq.pairwise_by_language): select one "
                        "language first, e.g. pairwise.sel(language='de')")
    table = pairwise_table(pairwise, unique=unique)
    if pairs is not None:
        models = list(pairwise[MODEL].values)
        wanted = {frozenset(check_pair(f"pairs[{k}]", pair, models))
                  for k, pair in enumerate(pairs)}
        table = table[[frozenset(ab) in wanted for ab in table.index]]
    n = len(table)
    if n == 0:
        raise CubeError("`pairwise` has fewer than two models (or `pairs` is empty): "
                        "nothing to draw")
    if pairs is None and n > MAX_FOREST_PAIRS:
        raise CubeError(f"`pairwise` holds {n:,} pairs ({pairwise.sizes[MODEL]} models): one "
                        f"row each would make a figure {0.7 + 0.22 * n:,.0f} inches tall. "
                        f"Give `pairs=`, e.g. each model against the next in the leaderboard: "
                        f"board = eq.leaderboard(agg); pairs = list(zip(board.index[:-1], "
                        f"board.index[1:])) (eq.pairwise_table holds every pair)")
    labels, row = _pair_labels(list(table.index), "−")
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.7 + row * n)
    y = np.arange(n)[::-1].astype(float)
    lower, upper = table["lower"].to_numpy(float), table["upper"].to_numpy(float)
    observed = table["observed" if "observed" in table else "mean"].to_numpy(float)
    clear = table["verdict"].to_numpy() != 0
    colors = np.where(clear, _GOOD, _NEUTRAL)
    ax.hlines(y, lower, upper, colors=colors.tolist(), linewidth=1.4)
    ax.scatter(observed, y, c=colors, s=14, zorder=3, edgecolors="none")
    ax.axvline(0.0, color="black", linewidth=0.7, linestyle="--")
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.7, n - 0.3)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))  # 7 touched
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
    check_text("title", title, or_none=True)
    _require(ranks, "ranks", "eq.rank_distribution", ("probability", "expected_rank"))
    if annotate is not None:
        annotate = check_bool("annotate", annotate, or_none=True)
    order = np.argsort(ranks["expected_rank"].values, kind="stable")
    prob = ranks["probability"].transpose(MODEL, RANK).values[order]
    models = ranks[MODEL].values[order]
    n_m, n_r = prob.shape
    longest = max(len(line) for m in _wrap_labels(list(models))[0] for line in str(m).split("\n"))
    width = max(COLUMN_WIDTH, 1.8 + 0.14 * min(n_r, 36) + 0.06 * max(longest - 12, 0))
    fig, ax = _axes(ax, width, 0.9 + _row_height(list(models), 0.24) * n_m)
    image = ax.imshow(prob, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto",
                      interpolation="nearest")
    step = _rank_step(n_r)          # 200 labels on 200 columns overprinted, 20 touched
    shown = [i for i in range(n_r) if i == 0 or (i + 1) % step == 0]
    ax.set_xticks(shown, [str(ranks[RANK].values[i]) for i in shown])
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


def _rank_step(n: int) -> int:
    """Every how many ranks an axis of ``n`` ranks is labelled (rank 1 always): every rank up
    to 12, else every 2nd, 5th, 10th, 20th, 25th, 50th, ... rank (at most 12 more labels:
    two-digit labels on columns of 0.14 inches touched, three-digit ones overprinted)."""
    if n <= 12:
        return 1
    return next(s for s in (2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, n) if n / s <= 12)


_TIER_LABEL_CHARS: Final = 16
"""Characters a line of a tier diagram's model label (beside the axis)."""


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
    check_text("title", title, or_none=True)
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
    models, _ = _wrap_labels([str(m) for m in aggregated[MODEL].values], _TIER_LABEL_CHARS)
    lines = max(m.count("\n") + 1 for m in models)   # a label's lines: its row's height
    tier = tiers.values.astype(int)
    n = len(models)
    order = np.argsort(x, kind="stable")        # left to right on the axis
    fig, ax = _axes(ax, COLUMN_WIDTH, 1.0 + 0.2 * lines * ((n + 1) // 2) + 0.12 * tier.max())
    span = float(np.nanmax(x) - np.nanmin(x)) or 1.0
    lo, hi = float(np.nanmin(x)) - 0.08 * span, float(np.nanmax(x)) + 0.08 * span
    # a side's margin holds its labels: w inches of text beside 1.16 span of data in the
    # axes' ~3 inches needs a margin of 1.16 w / (3 - 2 w) spans
    text = 0.055 * max(len(line) for m in models for line in m.split("\n"))
    margin = max(0.25, 1.16 * text / (COLUMN_WIDTH - 0.4 - 2 * text))
    ax.set_xlim(lo - margin * span, hi + margin * span)
    ax.hlines(0.0, lo, hi, color="black", linewidth=0.9)
    ax.plot(x, np.zeros(n), "|", color="black", markersize=6)
    n_left = (n + 1) // 2
    step = float(lines)
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
                 pad=2, y=-0.02, va="top", loc="left", fontsize=7)   # under the labels
    return fig


# --- variance components ----------------------------------------------------------------------

def _variance_heatmaps(components: xr.Dataset, shown: Sequence[str],
                       axes: Sequence[Axes] | None) -> Figure:
    """``variance_bars`` as one heatmap per SD: models (rows) by languages (columns)."""
    models = [str(m) for m in components[MODEL].values]
    labels = [str(lang) for lang in components[LANGUAGE].values]
    n_m, n_l = len(models), len(labels)
    axis_label = str(components.attrs.get(LANGUAGE_LABEL) or "language")
    longest = min(max(map(len, labels)), 24)
    height = 0.6 + len(shown) * (0.5 + 0.11 * n_m) + 0.06 * longest
    fig, panels, new = _panels(axes, len(shown), _WIDE, height, sharex=True)
    for ax, name in zip(panels[:, 0], shown, strict=True):
        values = components[name].transpose(MODEL, LANGUAGE).values
        image = ax.imshow(values, cmap="viridis", aspect="auto", interpolation="nearest")
        ax.set_yticks(np.arange(n_m), models, fontsize=6 if n_m > 20 else 7)
        ax.set_ylabel("model")
        ax.spines[:].set_visible(False)
        fig.colorbar(image, ax=ax, label=_SD_LABELS.get(name, name), shrink=0.9, pad=0.01)
    last = panels[-1, 0]
    step = -(-n_l // 36)               # at most 36 tick labels: 60 slanted ones overprinted
    ticks = np.arange(0, n_l, step)
    last.set_xticks(ticks, [labels[i] for i in ticks], rotation=60, ha="right",
                    rotation_mode="anchor", fontsize=5 if n_l > 30 else 7)
    last.set_xlabel(axis_label)
    heading = (f"within-{axis_label} SDs of {_metric(components.attrs)} per model and "
               f"{axis_label} (blank: not estimable)")
    if new:
        fig.suptitle(heading, fontsize=8)
    else:
        panels[0, 0].set_title(heading, fontsize=8)
    return fig


MAX_BARS: Final = 120
"""``variance_bars`` draws bars up to this many (model, language) cells; beyond, a heatmap
per SD (at 30 models x 50 tasks, 1,500 bars were a grey comb)."""


@_styled
def variance_bars(components: xr.Dataset, *,
                  variables: Sequence[str] = ("sigma_seed", "sigma_boot"),
                  axes: Sequence[Axes] | None = None, kind: str = "auto") -> Figure:
    """Bars of the within-language SDs per language, one bar per model, one panel per SD
    (a heatmap of model x language per SD when there are many cells).

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
    kind
        ``"bars"``, ``"heatmap"`` or ``"auto"`` (bars up to ``MAX_BARS`` (model, language)
        cells, a heatmap beyond).

    Returns
    -------
    matplotlib.figure.Figure
        One axes per drawn variable; bar ``k`` of model ``m`` has the height of
        ``components[name].sel(model=m)`` at language ``k``. As a heatmap, the axes' image
        holds ``components[name]`` as (model, language), with a colour bar per panel.

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
    if kind not in ("auto", "bars", "heatmap"):
        raise ValueError(f"`kind` must be 'auto', 'bars' or 'heatmap'; got {kind!r}")
    shown = [v for v in variables if np.isfinite(components[v].values).any()]
    if not shown:
        raise CubeError(f"every value of {', '.join(variables)} is missing: nothing to draw")
    models = components[MODEL].values
    languages = components[LANGUAGE].values
    n_m, n_l = len(models), len(languages)
    if kind == "heatmap" or (kind == "auto" and n_m * n_l > MAX_BARS):
        return _variance_heatmaps(components, shown, axes)
    width = COLUMN_WIDTH if n_l * n_m <= 24 else _WIDE
    labels = [str(lang) for lang in languages]
    # long names (MMLU subjects, harness task names) would overprint: slant them and wrap
    # the longest, and give the figure the height they take
    slant = n_l > 6 or sum(map(len, labels)) > 8 * width
    longest = min(max(map(len, labels)), 24)
    ncols, names, legend = _legend_layout([str(m) for m in models], width,
                                          5 if width > COLUMN_WIDTH else 3)
    height = 0.34 + legend + 1.35 * len(shown) + (0.06 * longest if slant else 0.0)
    fig, panels, new = _panels(axes, len(shown), width, height, sharex=True)
    pos = np.arange(n_l, dtype=float)
    bar = 0.8 / n_m
    metric = _metric(components.attrs)
    for ax, name in zip(panels[:, 0], shown, strict=True):
        values = components[name].transpose(MODEL, LANGUAGE).values
        se_name = f"se_{name}"
        se = (components[se_name].transpose(MODEL, LANGUAGE).values
              if se_name in components else None)
        for k, name_k in enumerate(names):
            err = None if se is None else np.where(np.isfinite(se[k]), se[k], 0.0)
            ax.bar(pos - 0.4 + bar * (k + 0.5), values[k], width=bar, label=name_k,
                   yerr=err, error_kw={"elinewidth": 0.5, "capsize": 0, "ecolor": "#555555"})
        ax.set_ylabel(_SD_LABELS.get(name, name))
    last = panels[-1, 0]
    wrapped = [textwrap.fill(t.replace("_", "_ "), 24).replace("_ ", "_") for t in labels]
    step = -(-n_l // 30) if slant else 1        # 60 slanted labels on 7 inches overprinted
    last.set_xticks(pos[::step], (wrapped if slant else labels)[::step],
                    rotation=40 if slant else 0, ha="right" if slant else "center",
                    rotation_mode="anchor", fontsize=7 if slant else None)
    axis_label = str(components.attrs.get(LANGUAGE_LABEL) or "language")
    last.set_xlabel(axis_label)
    heading = f"within-{axis_label} SDs of {metric} (bars: ± standard error)"
    if new:  # on the user's figure the heading goes on the first panel, not the figure
        fig.suptitle(heading, fontsize=8)
    else:
        panels[0, 0].set_title(heading, fontsize=8)
    panels[0, 0].legend(ncols=ncols, loc="lower left",
                        bbox_to_anchor=(0, 1.0), handlelength=1.0, columnspacing=0.8)
    return fig

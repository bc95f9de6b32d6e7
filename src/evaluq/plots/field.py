"""The figures of the field's comparison methods (issue 19): Demšar's critical-difference
diagram, baycomp's posteriors, rliable's interval estimates, performance profiles and
probability of improvement."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from evaluq._dims import MODEL, MODEL_B
from evaluq._validation import check_pair, check_text
from evaluq.errors import CubeError
from evaluq.plots._common import (
    _ACCENT,
    _GOOD,
    _NEUTRAL,
    COLUMN_WIDTH,
    _axes,
    _legend_layout,
    _metric,
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


__all__ = ["bayesian_comparison", "critical_difference_diagram", "interval_estimates_panel",
           "performance_profile_plot", "probability_of_improvement_plot"]


# --- the field's comparison methods: Demšar's CD diagram, baycomp's posteriors (issue 19) ------


_CD_ROW = 0.3
"""Vertical distance between two model labels of a CD diagram (data units)."""
_CD_GROUP_ROW = 0.16
"""Vertical distance between two group bars of a CD diagram (data units)."""
_CD_LABEL_CHARS = 18
"""Characters a line of a CD diagram's model label (beside the axis, with its mean rank)."""
_LINE_CHARS = 62
"""Characters a line of a title or axis label of a column-wide figure."""
_INSIDE_LEGEND_CHARS = 16
"""Longer model names put a performance profile's legend above the axes, off the curves."""


def _cd_axis(ax: Axes, lo: int, hi: int) -> None:
    """The mean-rank axis of a CD diagram: a line, ticks at halves (at whole ranks beyond 30
    ranks, at the labels beyond 60), labels at whole ranks: every rank up to 15, else the
    ends and every 5th (10th, 20th, 50th, ... as the labels need room: 200 ranks' labels
    overprinted)."""
    ax.hlines(0.0, lo, hi, color="black", linewidth=0.8)
    digits = len(str(hi))                         # ~20 digits fit along the axis
    every = 1 if hi - lo < 15 else next(
        (s for s in (5, 10, 20, 25, 50, 100, 200, 250, 500) if (hi - lo) / s * digits <= 20),
        1000)
    minor = 0.5 if hi - lo <= 30 else 1.0 if hi - lo <= 60 else float(every)
    for a in np.arange(lo, hi + minor / 2, minor):
        ax.vlines(a, 0.0, 0.1 if float(a).is_integer() else 0.05, color="black", linewidth=0.8)
    labelled = [a for a in range(lo, hi + 1) if a % every == 0]
    for a in range(lo, hi + 1):      # the ends, unless a label next to them would touch them
        if a % every == 0 or (a in (lo, hi) and min((abs(a - b) for b in labelled),
                                                    default=every) >= every / 2):
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
               lo: int, hi: int, row: float) -> None:
    """Elbow lines from each model's mean rank to its label, the better half on the left,
    ``row`` apart."""
    order = np.argsort(ranks, kind="stable")
    k = order.size
    n_left = (k + 1) // 2
    pad = 0.04 * (hi - lo)
    for pos, i in enumerate(order):
        left = pos < n_left
        depth = top - row * (pos if left else k - 1 - pos)
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
    check_text("title", title, or_none=True)
    from evaluq._dims import IN_GROUP, MEAN_RANK

    _require(result, "result", "eq.critical_difference", (MEAN_RANK, IN_GROUP))
    ranks = result[MEAN_RANK].values.astype(float)
    models, _ = _wrap_labels([str(m) for m in result[MODEL].values], _CD_LABEL_CHARS)
    lines = max(m.count("\n") + 1 for m in models)     # a label's lines: its row's height
    member = result[IN_GROUP].values.astype(bool)
    k, n_groups = ranks.size, member.shape[0]
    lo, hi = min(1, int(np.floor(ranks.min()))), max(k, int(np.ceil(ranks.max())))
    fig, ax = _axes(ax, COLUMN_WIDTH, 0.75 + 0.2 * lines * ((k + 1) // 2) + 0.1 * n_groups)
    _cd_axis(ax, lo, hi)
    _cd_bar(ax, lo, float(result.attrs.get("cd", np.nan)))
    for g in range(n_groups):
        y = -0.18 - _CD_GROUP_ROW * g
        r = ranks[member[g]]
        ax.plot([r.min() - 0.05, r.max() + 0.05], [y, y], color=_ACCENT, linewidth=2.4,
                solid_capstyle="round", label=f"group {g}")
    top = -0.18 - _CD_GROUP_ROW * max(n_groups, 1) - 0.12
    _cd_labels(ax, ranks, models, top, lo, hi, _CD_ROW * lines)
    ax.set_xlim(lo - 0.55 * (hi - lo), hi + 0.55 * (hi - lo))
    ax.set_ylim(top - _CD_ROW * lines * ((k + 1) // 2) + 0.1, 0.85)
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
    names = _wrap_labels(names, _CD_LABEL_CHARS)[0]      # the vertices' labels
    ax.text(0, -0.04, f"p({names[0]}) = {probs[0]:.3f}", ha="center", va="top", fontsize=7)
    ax.text(0.5, np.sqrt(3) / 2 + 0.02, f"p(rope) = {probs[1]:.3f}", ha="center",
            va="bottom", fontsize=7)
    ax.text(1, -0.04, f"p({names[1]}) = {probs[2]:.3f}", ha="center", va="top", fontsize=7)
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.2, 1.0)
    ax.set_aspect("equal", "box")
    ax.set_axis_off()


def _t_density(ax: Axes, attrs: Mapping[str, Any], rope: float, names: Sequence[str],
               below: bool) -> None:
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
    ax.set_xlabel(_wrap_labels([f"difference {names[1]} − {names[0]}  (left: {names[0]} "
                                "higher)"], _LINE_CHARS)[0][0])
    if below:       # a new figure: the legend under the axis label, however many lines
        ax.figure.legend(loc="outside lower center", ncols=2)
    else:
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
    check_text("title", title, or_none=True)
    from evaluq.field.bayescomp import BayesianComparison

    if not isinstance(result, BayesianComparison):
        raise TypeError(f"`result` must be the result of eq.bayesian_signed_rank or "
                        f"eq.correlated_t_test; got {type(result).__name__}")
    new = ax is None
    names = (str(result.attrs.get(MODEL, "model")), str(result.attrs.get(MODEL_B, "model_b")))
    lines = 0.3 if sum(map(len, names)) > _LINE_CHARS - 36 else 0.0  # title, label wrapped
    fig, ax = _axes(ax, COLUMN_WIDTH, (2.6 if result.method == "signed-rank" else 1.9) + lines)
    probs = [result.p_above, result.p_rope, result.p_below]   # baycomp's left, rope, right
    if result.method == "correlated-t":
        _t_density(ax, result.attrs, result.rope, names, below=new)
    elif float(result.distribution.sel(region="rope").max()) >= 0.1:
        _simplex(ax, result.distribution.values.T, probs, names)
    else:
        right = result.distribution.sel(region="right").values
        # fixed bins over [0, 1] (50 bins over the samples' own range failed, numpy's "too
        # many bins", when every sample is 1/2 up to rounding: identical models, no ROPE),
        # an odd number of them so that 1/2 is the middle of a bin, not an edge
        ax.hist(np.clip(right, 0.0, 1.0), bins=np.linspace(0.0, 1.0, 52).tolist(), color=_GOOD,
                alpha=0.7)
        ax.axvline(0.5, color=_ACCENT, linewidth=1.0)
        ax.set_xlim(0, 1)
        ax.set_yticks([])
        ax.set_xlabel(_wrap_labels([f"P({names[1]} scores higher)"], _LINE_CHARS)[0][0])
    parts = [f"p({names[0]}) = {probs[0]:.3f}", f"p(rope) = {probs[1]:.3f}",
             f"p({names[1]}) = {probs[2]:.3f}"]
    joined = ", ".join(parts)                   # long names: a line each
    ax.set_title(title if title is not None else joined if len(joined) <= _LINE_CHARS else
                 "\n".join(_wrap_labels(parts, _LINE_CHARS)[0]), fontsize=7, loc="left")
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
    check_text("title", title, or_none=True)
    _require(estimates, "estimates", "eq.interval_estimates", ("estimate", "ci"),
             ("aggregate",))
    names = [str(a) for a in estimates["aggregate"].values]
    models = [str(m) for m in estimates[MODEL].values]
    fig, grid, _ = _panels(axes, len(names), max(COLUMN_WIDTH, 1.7 * len(names)),
                           0.6 + _row_height(models, 0.25) * len(models), ncols=len(names))
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
        ax.set_ylim(-0.7, len(models) - 0.3)    # no 5 % margins: 10 empty rows at 200 models
    level = float(estimates.attrs.get("confidence_level", 0.95))
    axes_list[0].figure.supxlabel(f"{_metric(estimates.attrs)} ({level:.0%} stratified "
                                  f"bootstrap intervals)", fontsize=8)
    if title is not None:
        fig.suptitle(title)
    return fig


@_styled
def performance_profile_plot(profile: xr.Dataset, *, ax: Any = None,
                             title: str | None = None) -> Figure:
    r"""rliable's performance profile: the fraction of scores above :math:`\tau` (below it
    for a lower-is-better metric) against :math:`\tau`, one line per model with its interval
    as a band.

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
    check_text("title", title, or_none=True)
    _require(profile, "profile", "eq.performance_profile", ("estimate", "ci"),
             ("threshold",))
    names = [str(m) for m in profile[MODEL].values]
    above = max(map(len, names)) > _INSIDE_LEGEND_CHARS    # long names: the legend on top
    ncols, names, legend = _legend_layout(names, COLUMN_WIDTH, 3) if above else (1, names, 0)
    fig, axis = _axes(ax, COLUMN_WIDTH, 2.3 + legend)
    tau = profile["threshold"].values
    for k, model in enumerate(profile[MODEL].values):
        est = profile["estimate"].sel({MODEL: model}).values
        ci = profile["ci"].sel({MODEL: model}).values
        axis.plot(tau, est, color=f"C{k}", linewidth=1.3, label=names[k])
        axis.fill_between(tau, ci[:, 0], ci[:, 1], color=f"C{k}", alpha=0.2, linewidth=0)
    kind = profile.attrs.get("kind", "run")
    what = "runs" if kind == "run" else "tasks (mean over runs)"
    higher = bool(profile.attrs.get("higher_is_better", 1))   # lower: fractions below tau
    axis.set_xlabel(rf"{_metric(profile.attrs)} threshold $\tau$")
    axis.set_ylabel(rf"fraction of {what} {'>' if higher else '<'} $\tau$")
    axis.set_ylim(-0.02, 1.02)
    if above:
        axis.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=ncols)
    else:           # the curves fall (higher is better) or rise: the legend off them
        axis.legend(loc="upper right" if higher else "upper left")
    if title is not None:                       # above the legend's lines (points)
        axis.set_title(title, pad=6 + 72 * legend)
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
    check_text("title", title, or_none=True)
    _require(poi, "poi", "eq.probability_of_improvement", ("estimate", "ci"), (MODEL_B,))
    models = list(poi[MODEL].values)
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
    pairs = [check_pair(f"pairs[{k}]", pair, models) for k, pair in enumerate(pairs)]
    if not pairs:
        raise CubeError("`poi` has fewer than two models: nothing to draw")
    labels, row = _pair_labels(pairs, "vs")
    fig, axis = _axes(ax, COLUMN_WIDTH, 0.7 + max(row, 0.25) * len(pairs))
    y = np.arange(len(pairs))[::-1].astype(float)
    for row, (a, b) in zip(y, pairs, strict=True):
        sel = {MODEL: a, MODEL_B: b}
        lo, hi = poi["ci"].sel(sel).values
        axis.barh(row, hi - lo, left=lo, height=0.6, color=_GOOD, alpha=0.6)
        axis.vlines(float(poi["estimate"].sel(sel)), row - 0.3, row + 0.3, colors="black",
                    linewidth=1.2)
    axis.axvline(0.5, color="black", linewidth=0.7, linestyle="--")
    axis.set_yticks(y, labels)
    axis.set_ylim(-0.7, len(pairs) - 0.3)       # no 5 % margins: 10 empty rows at 199 pairs
    axis.set_xlim(0, 1)
    level = float(poi.attrs.get("confidence_level", 0.95))
    axis.set_xlabel(f"P(X > Y) ({level:.0%} stratified bootstrap intervals)")
    if title is not None:
        axis.set_title(title)
    return fig

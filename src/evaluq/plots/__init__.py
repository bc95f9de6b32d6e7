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

=================================  =======================================================
function                           draws
=================================  =======================================================
:func:`forest_plot`                pairwise differences with their intervals
:func:`rank_heatmap`               P(rank = r) per model
:func:`tier_diagram`               the significance groups, critical-difference style
:func:`variance_bars`              seed and bootstrap SDs per language and model
:func:`posterior_differences`      posterior densities of differences with a ROPE band
:func:`annotation_bins`            a metric against bins of the annotation count
:func:`resample_histogram`         the resample / null distribution of a significance test
:func:`scarce_intervals`           t and ARF intervals for scarce observations
:func:`mde_plot`                   the minimum detectable effect against items and seeds
:func:`ratings_plot`               ratings from pairwise votes with their intervals
:func:`win_probability_heatmap`    P(row model beats column model) from the ratings
=================================  =======================================================

The figures are grouped by family, one module each: :mod:`evaluq.plots.cube` (forest plot, rank
heatmap, tier diagram, variance bars), :mod:`evaluq.plots.distributions` (posterior
differences, resample histogram), :mod:`evaluq.plots.items` (annotation bins, scarce
intervals, MDE), :mod:`evaluq.plots.field` (the field's methods: CD diagram, baycomp's
posteriors, rliable's three figures), :mod:`evaluq.plots.ratings` (ratings from pairwise
votes, the win-probability matrix); every figure is importable from ``evaluq.plots``.
"""

from typing import TYPE_CHECKING, Any

from evaluq.plots._common import _INLINE_FIGURE, COLUMN_WIDTH, _inline_figure_class
from evaluq.plots.cube import forest_plot, rank_heatmap, tier_diagram, variance_bars
from evaluq.plots.distributions import posterior_differences, resample_histogram
from evaluq.plots.field import (
    bayesian_comparison,
    critical_difference_diagram,
    interval_estimates_panel,
    performance_profile_plot,
    probability_of_improvement_plot,
)
from evaluq.plots.items import annotation_bins, mde_plot, scarce_intervals
from evaluq.plots.ratings import ratings_plot, win_probability_heatmap

__all__ = [
    "COLUMN_WIDTH",
    "annotation_bins",
    "bayesian_comparison",
    "critical_difference_diagram",
    "forest_plot",
    "interval_estimates_panel",
    "mde_plot",
    "performance_profile_plot",
    "posterior_differences",
    "probability_of_improvement_plot",
    "rank_heatmap",
    "ratings_plot",
    "resample_histogram",
    "scarce_intervals",
    "tier_diagram",
    "variance_bars",
    "win_probability_heatmap",
]


if not TYPE_CHECKING:   # hidden from type checkers: `eq.plots.<typo>` stays an error for them
    def __getattr__(name: str) -> Any:
        """Resolve the lazily built figure class by name (unpickling a figure needs it: its
        class says it lives here, where figures pickled before the split found it too)."""
        if name == _INLINE_FIGURE:
            return _inline_figure_class()
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

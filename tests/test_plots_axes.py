"""Figures compose (issue 23): every single-panel figure function draws into a given ``ax=``
and returns that axes' figure; the multi-panel ones take ``axes=``, one per panel."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from matplotlib.figure import Figure

import evaluq as eq

mpl.use("Agg")


@pytest.fixture(scope="module")
def inputs() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    cube = eq.simulate_cube(n_models=3, model_means=[0.0, 0.2, 1.5], sigma_between=0.5, rng=1)
    agg = eq.aggregate(eq.resample(cube, n_resamples=200, rng=1))
    post = eq.dirichlet.posterior([[1, 1, 0], [2, 1, 0], [0, 5, 1], [3, 3, 3]])
    ece = eq.dirichlet.expected_cross_entropy(post, [.2, .6, .2])
    y = rng.integers(0, 2, 100)
    return {
        "agg": agg,
        "pairwise": eq.pairwise_differences(agg),
        "ranks": eq.rank_distribution(agg),
        "components": eq.variance_components(eq.simulate_cube(n_models=2, n_languages=3,
                                                               rng=0)),
        "draws": xr.DataArray(rng.normal(0.3, 0.2, (2, 200)), dims=("chain", "draw"),
                              name="A − B"),
        "table": eq.dirichlet.by_annotation_count({"E[CE]": ece}, post.n_annotations,
                                                  bins=[2, 4]),
        "test": eq.bootstrap_test(y, np.where(rng.random(100) < 0.7, y, 1 - y),
                                  np.where(rng.random(100) < 0.8, y, 1 - y),
                                  metrics=["accuracy", "f1"], n_resamples=100, rng=0),
        "scarce": eq.intervals.t_interval([[76.85, 81.99]], confidence_level=0.8),
        "cd": eq.critical_difference(eq.simulate_cube(n_models=4, n_languages=8, rng=2)),
        "signed_rank": eq.bayesian_signed_rank(
            eq.simulate_cube(n_models=2, n_languages=8, rng=3), "m0", "m1", rope=0.1,
            n_samples=2000, rng=0),
        "mde": eq.power.mde_grid(eq.power.design_from_sds(sd_item=0.5, n_items=100),
                                 n_items=[50, 100, 200], n_seeds=[1, 3]),
        "field_cube": eq.from_arrays(rng.normal(0.8, 0.2, (3, 5, 4))),
        "ratings": eq.fit_ratings(
            pd.DataFrame({"model_a": ["x", "x", "y", "y", "z", "z"] * 5,
                          "model_b": ["y", "z", "z", "x", "x", "y"] * 5,
                          "winner": ["model_a", "model_a", "tie", "model_b", "model_a",
                                     "model_a"] * 5})),
    }


SINGLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "forest_plot": lambda d: (eq.plots.forest_plot, d["pairwise"]),
    "rank_heatmap": lambda d: (eq.plots.rank_heatmap, d["ranks"]),
    "tier_diagram": lambda d: (eq.plots.tier_diagram, d["agg"]),
    "annotation_bins": lambda d: (eq.plots.annotation_bins, d["table"]),
    "scarce_intervals": lambda d: (eq.plots.scarce_intervals, d["scarce"]),
    "critical_difference_diagram": lambda d: (eq.plots.critical_difference_diagram, d["cd"]),
    "bayesian_comparison": lambda d: (eq.plots.bayesian_comparison, d["signed_rank"]),
    "mde_plot": lambda d: (eq.plots.mde_plot, d["mde"]),
    "performance_profile_plot": lambda d: (eq.plots.performance_profile_plot,
                                           eq.performance_profile(d["field_cube"], [0.5, 1.0],
                                                                  n_resamples=100, rng=0)),
    "probability_of_improvement_plot": lambda d: (
        eq.plots.probability_of_improvement_plot,
        eq.probability_of_improvement(d["field_cube"], n_resamples=100, rng=0)),
    "ratings_plot": lambda d: (eq.plots.ratings_plot, d["ratings"]),
    "win_probability_heatmap": lambda d: (eq.plots.win_probability_heatmap, d["ratings"]),
}
MULTI: dict[str, Callable[[dict[str, Any]], Any]] = {
    "variance_bars": lambda d: (eq.plots.variance_bars, d["components"], 2),
    "posterior_differences": lambda d: (eq.plots.posterior_differences, d["draws"], 1),
    "resample_histogram": lambda d: (eq.plots.resample_histogram, d["test"], 2),
    "interval_estimates_panel": lambda d: (
        eq.plots.interval_estimates_panel,
        eq.interval_estimates(d["field_cube"], n_resamples=100, rng=0), 4),
}


def test_every_figure_function_is_covered():
    assert set(SINGLE) | set(MULTI) == {n for n in eq.plots.__all__ if n != "COLUMN_WIDTH"}


@pytest.mark.parametrize("name", list(SINGLE))
def test_single_panel_functions_draw_into_the_given_axes(inputs, name):
    func, data = SINGLE[name](inputs)
    fig = Figure()
    left, right = fig.subplots(1, 2)
    right.tick_params(labelsize=11)
    alone = func(data)
    out = func(data, ax=left)
    assert out is fig
    drawn = len(left.lines) + len(left.collections) + len(left.patches) + len(left.images)
    assert drawn == (len(alone.axes[0].lines) + len(alone.axes[0].collections)
                     + len(alone.axes[0].patches) + len(alone.axes[0].images)) > 0
    for artists in (right.lines, right.collections, right.patches, right.images):
        assert not artists
    assert right.xaxis.get_major_ticks()[0].label1.get_fontsize() == 11  # left alone
    with pytest.raises(TypeError, match="`ax` must be a matplotlib Axes or None; got str"):
        func(data, ax="left")


@pytest.mark.parametrize("name", list(MULTI))
def test_multi_panel_functions_draw_into_the_given_axes(inputs, name):
    func, data, n = MULTI[name](inputs)
    fig = Figure()
    axes = fig.subplots(n + 1, 1)
    out = func(data, axes=list(axes[:n]))
    assert out is fig
    for ax in axes[:n]:
        assert ax.lines or ax.collections or ax.patches
    for artists in (axes[n].lines, axes[n].collections, axes[n].patches):
        assert not artists
    with pytest.raises(ValueError, match=rf"`axes` must hold {n} axes \(one per panel\); got "
                                         rf"{n + 1}"):
        func(data, axes=list(axes))
    with pytest.raises(TypeError,
                       match="`axes` must be a sequence of matplotlib Axes or None; got int"):
        func(data, axes=[1] * n)

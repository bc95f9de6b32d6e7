"""The figures of a report on many models (200 models x 60 languages): no tick label prints
over its neighbour, and no panel keeps rows of empty margin. Found by reading the figures of
``evaluq report`` on 200 models: the critical-difference axis, the rank heatmap's ranks, the
variance heatmap's 60 slanted languages and the forest plot's 7 x labels overprinted."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

import evaluq as eq

N_MODELS, N_LANGUAGES = 200, 60


@pytest.fixture(scope="module")
def cube():
    x = np.random.default_rng(0).normal(0.6, 0.05, (N_MODELS, N_LANGUAGES, 2)).round(4)
    return eq.from_arrays(x, models=[f"model-{i}" for i in range(N_MODELS)],
                          languages=[f"lang{j}" for j in range(N_LANGUAGES)])


@pytest.fixture(scope="module")
def agg(cube):
    return eq.aggregate(eq.resample(cube, n_resamples=50, replication="nonparametric",
                                    languages="bootstrap", rng=0))


def _gaps(fig, texts):
    """Pixels (at 100 dpi) between neighbouring texts along x, left to right."""
    FigureCanvasAgg(fig)
    fig.set_dpi(100)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = sorted((t.get_window_extent(renderer) for t in texts if t.get_text()),
                   key=lambda b: b.x0)
    return [b.x0 - a.x1 for a, b in itertools.pairwise(boxes)]


HALF_EM = 5.0
"""Pixels at 100 dpi between two labels (half a 7-point label's height): less reads as one."""


def test_the_critical_difference_axis_labels_do_not_overprint(cube):
    """Before: every 5th of 200 ranks labelled on a 1.5-inch axis, 41 labels on each other."""
    fig = eq.plots.critical_difference_diagram(eq.critical_difference(cube))
    axis = [t for t in fig.axes[0].texts if t.get_text().isdigit()]
    assert [t.get_text() for t in axis] == ["1", "50", "100", "150", "200"]
    assert min(_gaps(fig, axis)) > HALF_EM


def test_the_rank_heatmap_labels_every_kth_rank_of_many(agg):
    """Before: 200 rank labels on 200 columns, and a figure 30 inches wide; 20 two-digit
    labels touched."""
    fig = eq.plots.rank_heatmap(eq.rank_distribution(agg))
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["1", *[str(r) for r in range(20, 201, 20)]]
    assert min(_gaps(fig, fig.axes[0].get_xticklabels())) > HALF_EM
    assert fig.get_size_inches()[0] < 8
    assert fig.axes[0].images[0].get_array().shape == (N_MODELS, N_MODELS)
    few = eq.plots.rank_heatmap(eq.rank_distribution(agg.isel(model=slice(0, 20))))
    assert [t.get_text() for t in few.axes[0].get_xticklabels()] == [
        "1", *[str(r) for r in range(2, 21, 2)]]
    assert min(_gaps(few, few.axes[0].get_xticklabels())) > HALF_EM
    twelve = eq.plots.rank_heatmap(eq.rank_distribution(agg.isel(model=slice(0, 12))))
    assert [t.get_text() for t in twelve.axes[0].get_xticklabels()] == [
        str(r) for r in range(1, 13)]


def _slanted_spacing(fig, ticks, degrees):
    """The smallest distance (pixels at 100 dpi) between neighbouring tick labels slanted
    at ``degrees``, measured across the slanted lines."""
    FigureCanvasAgg(fig)
    fig.set_dpi(100)
    fig.canvas.draw()
    xs = [t.get_window_extent(fig.canvas.get_renderer()).x1 for t in ticks]
    return np.diff(xs).min() * np.sin(np.radians(degrees))


def test_the_variance_heatmap_labels_languages_with_room(cube):
    """Before: 60 slanted language labels at 5 points on a 7-inch axis overprinted; now at
    most 36, every other one here, each more than a label's height from the next."""
    fig = eq.plots.variance_bars(eq.variance_components(cube))
    ticks = fig.axes[-2].get_xticklabels()   # the last panel (its colour bar is the last axes)
    assert [t.get_text() for t in ticks] == [f"lang{j}" for j in range(0, N_LANGUAGES, 2)]
    spacing = _slanted_spacing(fig, ticks, 60)   # across the slanted lines
    assert spacing > 1.2 * ticks[0].get_fontsize() * 100 / 72     # 0.7 before


def test_the_forest_plot_x_labels_do_not_touch():
    """Before: 7 labels (-0.015, -0.010, ...) 3.5 pixels apart on the column-wide axes (20
    models' neighbours on 60 languages x 5 seeds)."""
    x = np.random.default_rng(0).normal(0.6, 0.05, (20, N_LANGUAGES, 5)).round(4)
    cube = eq.from_arrays(x, models=[f"model-{i}" for i in range(20)])
    agg = eq.aggregate(eq.resample(cube, n_resamples=200, replication="nonparametric",
                                   languages="bootstrap", rng=0))
    order = agg["observed"].to_series().sort_values().index
    pairs = list(itertools.pairwise(order))
    fig = eq.plots.forest_plot(eq.pairwise_differences(agg), pairs=pairs)
    assert min(_gaps(fig, fig.axes[0].get_xticklabels())) > HALF_EM


def test_the_row_panels_keep_no_empty_margin(cube):
    """Before: matplotlib's 5 % margins left 10 empty rows above and below 200 models."""
    est = eq.interval_estimates(cube, n_resamples=20, rng=0, aggregates=["iqm"])
    fig = eq.plots.interval_estimates_panel(est)
    assert fig.axes[0].get_ylim() == pytest.approx((-0.7, N_MODELS - 0.3))
    small = cube.isel(model=slice(0, 12))
    poi = eq.probability_of_improvement(small, n_resamples=20, rng=0)
    pairs = [(f"model-{i}", f"model-{i + 1}") for i in range(11)]
    fig = eq.plots.probability_of_improvement_plot(poi, pairs=pairs)
    assert fig.axes[0].get_ylim() == pytest.approx((-0.7, 11 - 0.3))


def test_the_variance_bars_label_languages_with_room(cube):
    """Before: two models on 60 languages (bars: 120 cells) wrote 60 labels slanted at 40
    degrees on 7 inches, each over its neighbours; now at most 30, here every other one."""
    fig = eq.plots.variance_bars(eq.variance_components(cube.isel(model=slice(0, 2))))
    ticks = fig.axes[-1].get_xticklabels()
    assert [t.get_text() for t in ticks] == [f"lang{j}" for j in range(0, N_LANGUAGES, 2)]
    spacing = _slanted_spacing(fig, ticks, 40)    # across the slanted lines
    assert spacing > 1.2 * ticks[0].get_fontsize() * 100 / 72

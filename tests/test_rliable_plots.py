"""The figures of rliable's analyses (issue 19): drawn without pyplot, into given axes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq.errors import CubeError

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def cube():
    score = np.random.default_rng(0).normal(0.8, 0.2, size=(3, 5, 4))
    return eq.from_arrays(score, models=["a", "b", "c"])


def test_interval_estimates_panel(cube):
    est = eq.interval_estimates(cube, n_resamples=100, rng=0)
    fig = eq.plots.interval_estimates_panel(est, title="Atari")
    assert [ax.get_title() for ax in fig.axes] == ["Median", "IQM", "Mean", "Optimality gap"]
    assert len(fig.axes[0].patches) == 3                       # one bar per model
    bar = fig.axes[1].patches[0]
    lo, hi = est.ci.sel(model="a", aggregate="iqm").values
    assert bar.get_x() == pytest.approx(lo)
    assert bar.get_width() == pytest.approx(hi - lo)


def test_panels_draw_into_given_axes(cube):
    from matplotlib.figure import Figure

    est = eq.interval_estimates(cube, aggregates=("iqm", "mean"), n_resamples=50, rng=0)
    fig = Figure()
    axes = fig.subplots(1, 2)
    assert eq.plots.interval_estimates_panel(est, axes=axes) is fig
    with pytest.raises(ValueError, match="`axes` must hold 2 axes"):
        eq.plots.interval_estimates_panel(est, axes=axes[:1])
    prof = eq.performance_profile(cube, [0.5, 0.8], n_resamples=50, rng=0)
    other = Figure()
    ax = other.subplots()
    assert eq.plots.performance_profile_plot(prof, ax=ax) is other
    assert len(ax.get_lines()) == 3


def test_probability_of_improvement_plot(cube):
    poi = eq.probability_of_improvement(cube, n_resamples=50, rng=0)
    fig = eq.plots.probability_of_improvement_plot(poi, pairs=[("c", "a")])
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["c vs a"]
    assert fig.axes[0].get_xlim() == (0.0, 1.0)


def test_plots_refuse_other_results(cube):
    with pytest.raises(CubeError, match="`estimates` must be the result of "
                                        "eq.interval_estimates"):
        eq.plots.interval_estimates_panel(cube)
    with pytest.raises(CubeError, match="`profile` must be the result of"):
        eq.plots.performance_profile_plot(cube)
    one = eq.from_arrays(np.ones((1, 2, 3)))
    with pytest.raises(CubeError, match="`cube` has 1 model"):   # nothing to compare
        eq.probability_of_improvement(one, n_resamples=10, rng=0)
    two = eq.from_arrays(np.arange(12.0).reshape(2, 2, 3), models=["a", "b"])
    poi = eq.probability_of_improvement(two, n_resamples=10, rng=0).isel(model=[0],
                                                                          model_b=[0])
    with pytest.raises(CubeError, match="fewer than two models"):
        eq.plots.probability_of_improvement_plot(poi)


def test_performance_profile_plot_of_a_lower_is_better_cube():
    """The profile of an error rate is the fraction of runs below tau: the axis says so."""
    score = np.random.default_rng(1).random((2, 5, 4))
    lower = eq.from_arrays(score, models=["a", "b"], higher_is_better=False)
    fig = eq.plots.performance_profile_plot(
        eq.performance_profile(lower, [0.2, 0.5, 0.8], n_resamples=50, rng=0))
    assert fig.axes[0].get_ylabel() == r"fraction of runs < $\tau$"
    fig = eq.plots.performance_profile_plot(
        eq.performance_profile(eq.from_arrays(score), [0.5], n_resamples=50, rng=0))
    assert fig.axes[0].get_ylabel() == r"fraction of runs > $\tau$"

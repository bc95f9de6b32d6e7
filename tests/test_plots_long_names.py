"""Figures stay readable with the model names users have (``org/checkpoint-name``, 30 to 50
characters): every figure that shows model names lays out without matplotlib's "axes sizes
collapsed to zero" warning (an error under the test suite's filter), and no line of a tick
label or legend entry is longer than the figures' wrapping width."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from typing import Any

import matplotlib as mpl
import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.plots._common import _LABEL_CHARS

mpl.use("Agg")

NAMES = ["meta-llama/Meta-Llama-3.1-70B-Instruct-Turbo", "mistralai/Mixtral-8x22B-Instruct-v0.1",
         "Qwen/Qwen2.5-72B-Instruct", "google/gemma-2-27b-it",
         "deepseek-ai/DeepSeek-V2.5-1210-chat-preview-final",
         *(f"org{k}/a-fine-tuned-checkpoint-of-llama-v{k}" for k in range(7))]


def _named(cube: Any) -> Any:
    return cube.assign_coords(model=NAMES[:cube.sizes["model"]])


@pytest.fixture(scope="module")
def figures() -> dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(0)
    cube = _named(eq.simulate_cube(n_models=12, n_languages=8,
                                   model_means=np.linspace(0, 2.2, 12), rng=1))
    agg = eq.aggregate(eq.resample(cube, n_resamples=3000, rng=1))
    field = _named(eq.from_arrays(rng.normal(0.8, 0.2, (12, 5, 4))))
    pick = rng.integers(0, 12, (3000, 2))
    pick = pick[pick[:, 0] != pick[:, 1]]
    votes = pd.DataFrame({"model_a": np.array(NAMES)[pick[:, 0]],
                          "model_b": np.array(NAMES)[pick[:, 1]],
                          "winner": rng.choice(["model_a", "model_b", "tie"], len(pick))})
    ratings = eq.fit_ratings(votes)
    pairwise = eq.pairwise_differences(agg)
    return {
        "forest_plot": lambda: eq.plots.forest_plot(pairwise),
        "rank_heatmap": lambda: eq.plots.rank_heatmap(eq.rank_distribution(agg)),
        "tier_diagram": lambda: eq.plots.tier_diagram(agg),
        "variance_bars": lambda: eq.plots.variance_bars(eq.variance_components(cube)),
        "critical_difference_diagram": lambda: eq.plots.critical_difference_diagram(
            eq.critical_difference(cube)),
        "bayesian_comparison": lambda: eq.plots.bayesian_comparison(
            eq.bayesian_signed_rank(cube, NAMES[0], NAMES[4], rope=0.1, n_samples=2000,
                                    rng=0)),
        "bayesian_comparison (histogram)": lambda: eq.plots.bayesian_comparison(
            eq.bayesian_signed_rank(cube, NAMES[0], NAMES[4], n_samples=2000, rng=0)),
        "bayesian_comparison (t)": lambda: eq.plots.bayesian_comparison(
            eq.correlated_t_test(rng.normal(0.7, 0.1, 20), rng.normal(0.72, 0.1, 20), rope=0.01,
                                 names=(NAMES[0], NAMES[4]), rng=0)),
        "probability_of_improvement_plot": lambda: eq.plots.probability_of_improvement_plot(
            eq.probability_of_improvement(field, n_resamples=100, rng=0)),
        "interval_estimates_panel": lambda: eq.plots.interval_estimates_panel(
            eq.interval_estimates(field, n_resamples=100, rng=0)),
        "performance_profile_plot": lambda: eq.plots.performance_profile_plot(
            eq.performance_profile(field, [0.5, 1.0], n_resamples=100, rng=0)),
        "ratings_plot": lambda: eq.plots.ratings_plot(ratings),
        "win_probability_heatmap": lambda: eq.plots.win_probability_heatmap(ratings),
    }


@pytest.mark.parametrize("name", ["forest_plot", "rank_heatmap", "tier_diagram",
                                  "variance_bars", "critical_difference_diagram",
                                  "bayesian_comparison", "bayesian_comparison (histogram)",
                                  "bayesian_comparison (t)", "probability_of_improvement_plot",
                                  "interval_estimates_panel", "performance_profile_plot",
                                  "ratings_plot", "win_probability_heatmap"])
def test_long_model_names_keep_the_figure_laid_out(figures, name):
    fig = figures[name]()
    fig.savefig(io.BytesIO(), format="png")      # lays the figure out: no collapsed axes
    ticks = [t.get_text() for ax in fig.axes
             for t in [*ax.get_xticklabels(), *ax.get_yticklabels()]]
    legend = [t.get_text() for ax in fig.axes if ax.get_legend() is not None
              for t in ax.get_legend().get_texts()]
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    texts += [ax.get_title(loc="left") + ax.get_xlabel() for ax in fig.axes]
    assert any("Llama" in t for t in ticks + legend + texts)

    def widest(labels: list[str]) -> int:
        return max((len(line) for t in labels for line in t.split("\n")), default=0)

    assert widest(ticks) <= _LABEL_CHARS
    assert widest(legend) <= 50                  # a legend's column may take the figure's width
    fig.draw_without_rendering()                 # no two labels of an axis overprint
    for ax in fig.axes:
        for axis, k in ((ax.yaxis, 1), (ax.xaxis, 0)):
            boxes = sorted((t.get_window_extent() for t in axis.get_ticklabels()
                            if t.get_visible() and t.get_text()), key=lambda b: b.bounds[k])
            for a, b in itertools.pairwise(boxes):
                assert a.bounds[k] + a.bounds[k + 2] <= b.bounds[k] + 0.5, (name, axis)
    width, height = fig.get_size_inches()        # the names leave the data room
    box = fig.axes[0].get_position()
    assert box.width * width > 0.5
    assert box.height * height > 0.5


def test_the_report_of_long_model_names_draws_every_figure(tmp_path):
    """The report's figures (variance, forest, ranks, CD diagram, rliable panels) on a cube of
    checkpoints named as on the Hugging Face hub: no figure collapses (a warning, an error
    here), and the page names every model in full."""
    cube = _named(eq.simulate_cube(n_models=5, n_languages=6, model_means=[0, .2, .4, .6, .8],
                                   rng=2))
    rep = eq.report(cube, tmp_path / "report.html", n_resamples=200, progress=False)
    page = (tmp_path / "report.html").read_text()
    assert page.count("<img") >= 5
    assert all(name in page for name in NAMES[:5])
    assert rep is not None

"""Structure tests of eq.plots: axes, labels, number of artists, and values drawn equal the data."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError

mpl.use("Agg")


@pytest.fixture(scope="module")
def agg():
    cube = eq.simulate_cube(n_models=4, model_means=[0.0, 0.2, 1.5, 3.0], sigma_between=0.5,
                            rng=1)
    return eq.aggregate(eq.resample(cube, n_resamples=400, rng=1))


def _png_ok(fig) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_forest_plot_draws_every_pair_once_with_its_interval(agg):
    pw = eq.pairwise_differences(agg)
    table = eq.pairwise_table(pw, unique=True)
    fig = eq.plots.forest_plot(pw)
    (ax,) = fig.axes
    segments, points = ax.collections[0], ax.collections[1]
    assert len(segments.get_segments()) == len(table) == 6
    # from the top row down, the table's rows
    segs = sorted(segments.get_segments(), key=lambda s: -s[0, 1])
    np.testing.assert_allclose([s[0, 0] for s in segs], table["lower"])
    np.testing.assert_allclose([s[1, 0] for s in segs], table["upper"])
    offsets = points.get_offsets()
    np.testing.assert_allclose(offsets[np.argsort(-offsets[:, 1]), 0], table["observed"])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{a} − {b}" for a, b in table.index]
    assert ax.get_xlabel() == "difference in mean simulated"
    assert "95% percentile intervals" in ax.get_title()
    # the interval excluding 0 is coloured, the others grey
    colors = points.get_facecolors()
    clear = table["verdict"].to_numpy() != 0
    order = np.argsort(-offsets[:, 1])
    blue = mpl.colors.to_rgba("#1b6ca8")
    assert [tuple(c) == blue for c in colors[order]] == list(clear)
    _png_ok(fig)


def test_forest_plot_all_ordered_pairs_and_errors(agg):
    pw = eq.pairwise_differences(agg)
    fig = eq.plots.forest_plot(pw, unique=False, title="t")
    assert len(fig.axes[0].collections[0].get_segments()) == 12
    assert fig.axes[0].get_title() == "t"
    with pytest.raises(CubeError, match="must be the result of eq.pairwise_differences"):
        eq.plots.forest_plot(agg)
    by_lang = pw.expand_dims(language=["de", "en"])
    with pytest.raises(CubeError, match="select one language"):
        eq.plots.forest_plot(by_lang)


def test_rank_heatmap_image_is_the_probability_matrix(agg):
    rd = eq.rank_distribution(agg)
    fig = eq.plots.rank_heatmap(rd)
    ax, cbar = fig.axes
    order = np.argsort(rd["expected_rank"].values, kind="stable")
    np.testing.assert_allclose(ax.images[0].get_array(), rd["probability"].values[order])
    assert [t.get_text() for t in ax.get_yticklabels()] == list(rd.model.values[order])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4"]
    assert ax.get_xlabel() == "rank (1 = best)"
    assert cbar.get_ylabel() == "probability"
    shown = [float(t.get_text()) for t in ax.texts]
    assert len(shown) == int((rd["probability"].values >= 0.005).sum())
    fig = eq.plots.rank_heatmap(rd, annotate=False)
    assert len(fig.axes[0].texts) == 0
    with pytest.raises(CubeError, match="eq.rank_distribution"):
        eq.plots.rank_heatmap(agg)


def test_tier_diagram_bars_span_each_tier(agg):
    tiers = eq.significance_groups(agg)
    fig = eq.plots.tier_diagram(agg, tiers)
    (ax,) = fig.axes
    x = agg["observed"].values
    bars = {line.get_label(): line for line in ax.lines if line.get_label().startswith("tier")}
    expected = {f"tier {t}": x[tiers.values == t] for t in np.unique(tiers.values)
                if (tiers.values == t).sum() > 1}
    assert set(bars) == set(expected)
    for name, members in expected.items():
        np.testing.assert_allclose(sorted(bars[name].get_xdata()),
                                   [members.min(), members.max()])
    # one label per model
    assert sorted(t.get_text().strip() for t in ax.texts) == sorted(agg.model.values)
    assert ax.get_xlabel() == "mean simulated (higher is better)"
    # computed from the aggregate when omitted: the same bars
    fig2 = eq.plots.tier_diagram(agg)
    assert ([line.get_label() for line in fig2.axes[0].lines]
            == [line.get_label() for line in ax.lines])
    with pytest.raises(CubeError, match="eq.significance_groups"):
        eq.plots.tier_diagram(agg, tiers.values)


def test_variance_bars_heights_are_the_components():
    cube = eq.simulate_cube(n_models=2, n_languages=3, rng=0)
    vc = eq.variance_components(cube)
    fig = eq.plots.variance_bars(vc)
    assert len(fig.axes) == 2
    for ax, name in zip(fig.axes, ("sigma_seed", "sigma_boot"), strict=True):
        heights = np.array([p.get_height() for p in ax.patches])
        assert heights.size == 6
        np.testing.assert_allclose(heights, vc[name].transpose("model", "language").values.ravel())
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == list(vc.language.values)
    assert fig.axes[1].get_xlabel() == "language"
    # without bootstrap replicates the boot panel is left out
    vc2 = eq.variance_components(cube.drop_vars("boot_score"))
    assert [ax.get_ylabel() for ax in eq.plots.variance_bars(vc2).axes] == ["seed SD"]
    with pytest.raises(CubeError, match="eq.variance_components"):
        eq.plots.variance_bars(cube)


def test_variance_bars_become_heatmaps_of_the_components_with_many_cells():
    """30 models x 50 tasks: one heatmap per SD (rows models, columns tasks) holding the
    components, not 1,500 bars; ``kind`` chooses either way."""
    from evaluq.plots.cube import MAX_BARS

    cube = eq.simulate_cube(n_models=30, n_languages=50, n_seeds=3, rng=1)
    vc = eq.variance_components(cube)
    assert MAX_BARS < 30 * 50
    fig = eq.plots.variance_bars(vc)
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2
    for image, name in zip(images, ("sigma_seed", "sigma_boot"), strict=True):
        np.testing.assert_array_equal(np.asarray(image.get_array()),
                                      vc[name].transpose("model", "language").values)
    assert not fig.axes[0].patches
    small = eq.plots.variance_bars(eq.variance_components(cube.isel(model=[0, 1])),
                                   kind="heatmap")
    assert small.axes[0].images
    bars = eq.plots.variance_bars(vc.isel(model=[0, 1], language=[0, 1]), kind="bars")
    assert len(bars.axes[0].patches) == 4
    with pytest.raises(ValueError, match="`kind`"):
        eq.plots.variance_bars(vc, kind="pie")


def test_posterior_differences_density_and_rope(rng):
    draws = xr.DataArray(rng.normal(0.3, 0.2, (2, 300, 3, 3)),
                         dims=("chain", "draw", "model", "model_b"),
                         coords={"model": ["a", "b", "c"], "model_b": ["a", "b", "c"]})
    fig = eq.plots.posterior_differences(draws, rope=0.1, bins=30)
    assert len(fig.axes) == 3   # a-b, a-c, b-c
    ax = fig.axes[0]
    values = draws.sel(model="a", model_b="b").values.ravel()
    dens, edges = np.histogram(values, bins=30, density=True)
    stairs = ax.patches[1]
    np.testing.assert_allclose(stairs.get_data().values, dens)
    np.testing.assert_allclose(stairs.get_data().edges, edges)
    band = [p for p in ax.patches if p.get_label() == "ROPE"]
    assert len(band) == 1
    assert band[0].get_x() == pytest.approx(-0.1)
    assert band[0].get_x() + band[0].get_width() == pytest.approx(0.1)
    inside = np.mean(np.abs(values) <= 0.1)
    assert f"P(ROPE) = {inside:.2f}" in ax.get_title(loc="left")
    assert fig.axes[-1].get_xlabel() == "posterior difference in score"
    one = eq.plots.posterior_differences(draws.sel(model="a", model_b="c"), rope=(-0.2, 0.05))
    assert len(one.axes) == 1
    with pytest.raises(CubeError, match="lacks the sample dims"):
        eq.plots.posterior_differences(draws.rename(chain="c"))
    with pytest.raises(ValueError, match="`rope` must be"):
        eq.plots.posterior_differences(draws, rope=-1.0)
    with pytest.raises(TypeError, match="`draws` must be an xarray DataArray"):
        eq.plots.posterior_differences(values)


def test_annotation_bins_lines_equal_the_table():
    post = eq.dirichlet.posterior([[1, 1, 0], [2, 1, 0], [0, 5, 1], [3, 3, 3], [0, 2, 0]])
    q = xr.DataArray([[.2, .6, .2]] * 5, dims=("item", "class"))
    ece = eq.dirichlet.expected_cross_entropy(post, q)
    emp = eq.dirichlet.empirical_metric(post, q, metric="cross_entropy")
    table = eq.dirichlet.by_annotation_count({"E[CE]": ece, "CE": emp}, post.n_annotations,
                                             bins=[2, 4, 6])
    fig = eq.plots.annotation_bins(table)
    ax, twin = fig.axes
    assert [line.get_label() for line in ax.lines] == ["E[CE]", "CE"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), table["E[CE]"])
    np.testing.assert_allclose([p.get_height() for p in twin.patches], table["count"])
    assert [t.get_text() for t in ax.get_xticklabels()] == list(table.index)
    assert ax.get_xlabel() == "annotations per item"
    assert twin.get_ylabel() == "items"
    with pytest.raises(ValueError, match="`columns` names 'nope'"):
        eq.plots.annotation_bins(table, columns=["nope"])
    with pytest.raises(ValueError, match="by_annotation_count"):
        eq.plots.annotation_bins(table.drop(columns="count"))


@pytest.mark.parametrize("method", ["berg-kirkpatrick", "paired", "permutation"])
def test_resample_histogram_counts_the_distribution(rng, method):
    y = rng.integers(0, 2, 300)
    h0 = np.where(rng.random(300) < 0.7, y, 1 - y)
    h1 = np.where(rng.random(300) < 0.8, y, 1 - y)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy", "f1"], method=method,
                            n_resamples=200, rng=0)
    fig = eq.plots.resample_histogram(res, bins=25)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    ax = fig.axes[0]
    counts, _ = np.histogram(res.distribution[0], bins=25)
    np.testing.assert_allclose([p.get_height() for p in ax.patches[:25]], counts)
    assert ax.lines[0].get_xdata()[0] == pytest.approx(res.delta[0])
    assert ax.get_title(loc="left") == f"accuracy: p = {res.pvalue[0]:.3g}"
    assert ax.get_xlabel().startswith("Δ accuracy (h1 − h0")
    one = eq.plots.resample_histogram(res, metrics=["f1"])
    assert len(one.axes) == 1
    with pytest.raises(ValueError, match="`metrics` names 'bleu'"):
        eq.plots.resample_histogram(res, metrics=["bleu"])
    with pytest.raises(TypeError, match="eq.bootstrap_test"):
        eq.plots.resample_histogram(res.to_dataset())


def test_scarce_intervals_segments_are_the_intervals():
    scores = np.array([[76.85, 81.99], [90.0, 92.0], [60.0, 64.0]])
    t = eq.intervals.t_interval(scores, confidence_level=0.8)
    arf = eq.intervals.arf_interval(scores[:, 0], 80.0, arf_alpha=0.2)
    fig = eq.plots.scarce_intervals({"t": t, "ARF": arf}, threshold=80)
    (ax,) = fig.axes
    assert len(ax.collections) == 4
    for coll, res in ((ax.collections[0], t), (ax.collections[2], arf)):
        segs = coll.get_segments()
        np.testing.assert_allclose([s[0, 0] for s in segs], res.lower.values)
        np.testing.assert_allclose([s[1, 0] for s in segs], res.upper.values)
    np.testing.assert_allclose(ax.collections[1].get_offsets()[:, 0], t.estimate.values)
    assert [line.get_xdata()[0] for line in ax.lines] == [80]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "1", "2"]
    with pytest.raises(ValueError, match="same number of items"):
        eq.plots.scarce_intervals({"t": t, "one": eq.intervals.arf_interval(85.0, 80.0, k=2)})
    with pytest.raises(TypeError, match="must be a t_interval or arf_interval result"):
        eq.plots.scarce_intervals({"x": scores})
    with pytest.raises(ValueError, match="`labels` needs 3 entries"):
        eq.plots.scarce_intervals(t, labels=["a"])


def test_figures_fit_a_paper_column(agg):
    for fig in (eq.plots.forest_plot(eq.pairwise_differences(agg)),
                eq.plots.rank_heatmap(eq.rank_distribution(agg)),
                eq.plots.tier_diagram(agg)):
        assert fig.get_figwidth() == pytest.approx(eq.plots.COLUMN_WIDTH)
        for ax in fig.axes:
            for label in ax.get_xticklabels():
                assert label.get_fontsize() <= 8


def test_forest_plot_of_posterior_differences_without_frequentist_columns(agg):
    """A posterior Dataset may carry only mean and ci: the same rows, verdict from the ci."""
    pw = eq.pairwise_differences(agg)
    post = pw[["mean", "ci"]].assign_attrs(pw.attrs)
    fig = eq.plots.forest_plot(post)
    ax = fig.axes[0]
    table = eq.pairwise_table(pw, unique=True)
    segs = sorted(ax.collections[0].get_segments(), key=lambda s: -s[0, 1])
    lower = [s[0, 0] for s in segs]
    # the rows are ordered by the posterior mean, so compare as sets of intervals
    assert sorted(lower) == pytest.approx(sorted(table["lower"]))
    offsets = ax.collections[1].get_offsets()
    assert sorted(offsets[:, 0]) == pytest.approx(sorted(table["mean"]))
    with pytest.raises(CubeError, match="needs an 'observed' or 'mean'"):
        eq.plots.forest_plot(pw[["ci"]])


# --- notebook display -----------------------------------------------------------------------

def _one_figure_of_each(agg, rng):
    """One figure from each plotting function, on small inputs."""
    pw = eq.pairwise_differences(agg)
    comps = eq.variance_components(eq.simulate_cube(n_models=2, n_languages=3, rng=0))
    draws = xr.DataArray(rng.normal(0.3, 0.2, (2, 200)), dims=("chain", "draw"), name="A − B")
    post = eq.dirichlet.posterior([[1, 1, 0], [2, 1, 0], [0, 5, 1], [3, 3, 3]])
    ece = eq.dirichlet.expected_cross_entropy(post, [.2, .6, .2])
    table = eq.dirichlet.by_annotation_count({"E[CE]": ece}, post.n_annotations, bins=[2, 4])
    y = rng.integers(0, 2, 100)
    res = eq.bootstrap_test(y, np.where(rng.random(100) < 0.7, y, 1 - y),
                            np.where(rng.random(100) < 0.8, y, 1 - y), metrics=["accuracy"],
                            n_resamples=100, rng=0)
    scarce = eq.intervals.t_interval([[76.85, 81.99]], confidence_level=0.8)
    return {
        "forest_plot": eq.plots.forest_plot(pw),
        "rank_heatmap": eq.plots.rank_heatmap(eq.rank_distribution(agg)),
        "tier_diagram": eq.plots.tier_diagram(agg),
        "variance_bars": eq.plots.variance_bars(comps),
        "posterior_differences": eq.plots.posterior_differences(draws, rope=0.1),
        "annotation_bins": eq.plots.annotation_bins(table),
        "resample_histogram": eq.plots.resample_histogram(res),
        "scarce_intervals": eq.plots.scarce_intervals(scarce),
        "critical_difference_diagram": eq.plots.critical_difference_diagram(
            eq.critical_difference(eq.simulate_cube(n_models=4, n_languages=8, rng=0))),
        "bayesian_comparison": eq.plots.bayesian_comparison(eq.bayesian_signed_rank(
            eq.simulate_cube(n_models=2, n_languages=8, rng=0), "m0", "m1", rope=0.5,
            n_samples=1000, rng=0)),
        "mde_plot": eq.plots.mde_plot(eq.power.mde_grid(
            eq.power.design_from_sds(sd_item=0.5, n_items=100), n_items=[50, 100, 200],
            n_seeds=[1])),
        **_rliable_figures(),
    }


def _rliable_figures() -> dict[str, Any]:
    cube = eq.from_arrays(np.random.default_rng(0).normal(0.8, 0.2, (3, 5, 4)))
    return {
        "interval_estimates_panel": eq.plots.interval_estimates_panel(
            eq.interval_estimates(cube, n_resamples=200, rng=0)),
        "performance_profile_plot": eq.plots.performance_profile_plot(
            eq.performance_profile(cube, [0.5, 0.8, 1.0], n_resamples=200, rng=0)),
        "probability_of_improvement_plot": eq.plots.probability_of_improvement_plot(
            eq.probability_of_improvement(cube, n_resamples=200, rng=0)),
        **_ratings_figures(),
    }


def _ratings_figures() -> dict[str, Any]:
    import pandas as pd

    votes = pd.DataFrame({"model_a": ["x", "x", "y", "y", "z", "z"] * 5,
                          "model_b": ["y", "z", "z", "x", "x", "y"] * 5,
                          "winner": ["model_a", "model_a", "tie", "model_b", "model_a",
                                     "model_a"] * 5})
    result = eq.fit_ratings(votes)
    return {"ratings_plot": eq.plots.ratings_plot(result),
            "win_probability_heatmap": eq.plots.win_probability_heatmap(result)}


def test_every_figure_displays_as_png_in_ipython(agg, rng):
    from IPython.core.formatters import DisplayFormatter, PNGFormatter
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    figures = _one_figure_of_each(agg, rng)
    assert set(figures) == {n for n in eq.plots.__all__ if n != "COLUMN_WIDTH"}
    for name, fig in figures.items():
        assert isinstance(fig, Figure), name
        data, md = PNGFormatter()(fig)
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
        pixels = imread(io.BytesIO(data))
        # rendered at twice the figure's dpi, shown at the 1x size
        assert md == {"width": pixels.shape[1] // 2, "height": pixels.shape[0] // 2}, name
        assert 0.8 * fig.get_figwidth() * fig.dpi <= md["width"] <= 1.2 * fig.get_figwidth() \
            * fig.dpi, name
        assert pixels[..., :3].std() > 0.05, name            # not a blank image
        bundle, meta = DisplayFormatter().format(fig)
        assert "image/png" in bundle, name
        assert bundle["text/plain"].startswith("<Figure size"), name      # the text as before
        assert meta["image/png"] == md


def test_an_inline_backend_printer_still_wins_and_empty_figures_show_nothing(agg):
    """With `%matplotlib inline` IPython registers a printer for Figure: it is used instead
    (one image, not two); a figure without axes has no image, as IPython's own printer."""
    from IPython.core.formatters import PNGFormatter
    from matplotlib.figure import Figure

    fig = eq.plots.tier_diagram(agg)
    formatter = PNGFormatter()
    formatter.for_type(Figure, lambda f: b"registered")
    assert formatter(fig) == b"registered"
    empty = type(fig)()
    assert PNGFormatter()(empty) is None


def test_figures_pickle_and_stay_displayable(agg):
    import pickle

    from IPython.core.formatters import PNGFormatter

    fig = eq.plots.forest_plot(eq.pairwise_differences(agg))
    back = pickle.loads(pickle.dumps(fig))
    assert type(back) is type(fig)
    assert [t.get_text() for t in back.axes[0].get_yticklabels()] == \
        [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert PNGFormatter()(back)[0][:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        eq.plots.nope  # noqa: B018


def test_display_needs_no_pyplot():
    code = (
        "import sys, evaluq as eq\n"
        "from IPython.core.formatters import PNGFormatter\n"
        "cube = eq.simulate_cube(n_models=3, rng=0)\n"
        "rd = eq.rank_distribution(eq.aggregate(eq.resample(cube, n_resamples=50, rng=0)))\n"
        "data, md = PNGFormatter()(eq.plots.rank_heatmap(rd))\n"
        "assert data[:4] == b'\\x89PNG'\n"
        "print(sorted(m for m in sys.modules if m.startswith('matplotlib.pyplot')))\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")        # this checkout's evaluq
    env = {**os.environ, "MPLBACKEND": "",
           "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# --- histogram bins -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def test_result():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300)
    h0 = np.where(rng.random(300) < 0.7, y, 1 - y)
    h1 = np.where(rng.random(300) < 0.8, y, 1 - y)
    return eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="paired",
                             n_resamples=500, rng=0)


@pytest.mark.parametrize("bins", [7, np.int64(12), "auto", "fd", "sturges",
                                  [0.05, 0.08, 0.1, 0.12], (0.09, 0.1, 0.11)])
def test_resample_histogram_bins_as_numpy_takes_them(test_result, bins):
    dist = test_result.distribution[0]
    counts, edges = np.histogram(dist, bins=bins)
    ax = eq.plots.resample_histogram(test_result, bins=bins).axes[0]
    bars = ax.patches[:len(counts)]
    np.testing.assert_allclose([p.get_height() for p in bars], counts)
    np.testing.assert_allclose([p.get_x() for p in bars], edges[:-1])
    outside = int(np.sum((dist < edges[0]) | (dist > edges[-1])))
    title = ax.get_title(loc="left")
    if isinstance(bins, list | tuple):
        assert outside > 0
        assert title.endswith(f"({outside} of {dist.size} outside the bins)")
    else:
        assert outside == 0
        assert "outside" not in title


def test_posterior_differences_bins_as_numpy_takes_them(rng):
    d = xr.DataArray(rng.normal(0.3, 0.2, (2, 400)), dims=("chain", "draw"), name="A − B")
    edges = [0.0, 0.2, 0.4, 0.6]
    ax = eq.plots.posterior_differences(d, bins=edges).axes[0]
    values = d.values.ravel()
    dens, _ = np.histogram(values, bins=edges, density=True)
    np.testing.assert_allclose(ax.patches[0].get_data().values, dens)
    out = int(np.sum((values < 0) | (values > 0.6)))
    assert ax.get_title(loc="left").endswith(f"({out} of 800 outside the bins)")
    ax = eq.plots.posterior_differences(d, bins="scott").axes[0]
    dens, _ = np.histogram(values, bins="scott", density=True)
    np.testing.assert_allclose(ax.patches[0].get_data().values, dens)


@pytest.mark.parametrize(("bins", "error", "match"), [
    (0, ValueError, "`bins` must be at least 1; got 0"),
    ("fast", ValueError, r"`bins` must be one of \['auto', 'fd'.*got 'fast'"),
    (2.5, TypeError, r"`bins` must be a number of bins \(int\), a rule name .*got 2.5"),
    (True, TypeError, r"`bins` must be a number of bins .*got True"),
    ({"n": 3}, TypeError, r"`bins` must be a number of bins .*got \{'n': 3\}"),
    ([0.1], ValueError, r"`bins` as edges must be 1-D with at least 2 edges; got shape \(1,\)"),
    ([[0, 1], [1, 2]], ValueError, "`bins` as edges must be 1-D"),
    ([0.0, 0.2, 0.1], ValueError, "`bins` as edges must be finite and strictly increasing"),
    ([0.0, np.nan], ValueError, "`bins` as edges must be finite"),
    (["a", "b"], TypeError, "`bins` as edges must hold numbers; got \\['a', 'b'\\]"),
])
def test_bad_bins(test_result, bins, error, match):
    with pytest.raises(error, match=match):
        eq.plots.resample_histogram(test_result, bins=bins)
    d = xr.DataArray(np.zeros((1, 5)), dims=("chain", "draw"))
    with pytest.raises(error, match=match):
        eq.plots.posterior_differences(d, bins=bins)


# --- annotation_bins legend -----------------------------------------------------------------

def test_annotation_bins_legend_names_every_series_and_hides_no_data(rng):
    counts = np.stack([rng.multinomial(k, [.2, .5, .3]) for k in rng.integers(1, 9, 120)])
    post = eq.dirichlet.posterior(counts)
    q = xr.DataArray(rng.dirichlet(np.ones(3) * 3, size=(2, 120)), dims=("model", "item",
                     "class"), coords={"model": ["a", "b"]})
    table = eq.dirichlet.by_annotation_count(
        {"E[CE]": eq.dirichlet.expected_cross_entropy(post, q),
         "CE": eq.dirichlet.empirical_metric(post, q, metric="cross_entropy")},
        post.n_annotations, bins=[1, 3, 5, 7, 9])
    fig = eq.plots.annotation_bins(table)
    ax, twin = fig.axes
    legend = ax.get_legend()
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == ["E[CE] (a)", "E[CE] (b)", "CE (a)", "CE (b)", "items (right axis)"]
    # each handle is the series it names: line handles share colour and style with the line
    for line, handle in zip(ax.lines, legend.legend_handles[:4], strict=True):
        assert handle.get_color() == line.get_color()
        assert handle.get_linestyle() == line.get_linestyle()
    np.testing.assert_allclose(ax.lines[3].get_ydata(), table[("CE", "b")])
    assert [ln.get_color() for ln in ax.lines] == ["C0", "C1", "C0", "C1"]    # colour = model
    assert ax.lines[0].get_linestyle() != ax.lines[2].get_linestyle()        # style = name
    bar_handle = legend.legend_handles[4]
    assert tuple(bar_handle.get_facecolor()) == tuple(twin.patches[0].get_facecolor())
    # the legend sits above the axes: no overlap with the data area
    fig.draw_without_rendering()                           # lay out (constrained layout)
    box = legend.get_window_extent()
    assert box.y0 >= ax.get_window_extent().y1 - 1e-6
    assert fig.bbox.contains(*box.max)
    assert fig.bbox.contains(*box.min)


def test_forest_plot_of_many_pairs_is_refused_with_the_pairs_to_give():
    """100 models' 4,950 pairs made a figure 1,090 inches tall (96 s to show in a notebook):
    beyond MAX_FOREST_PAIRS the plot asks for `pairs=` and says how to get the adjacent ones;
    with them it draws."""
    from evaluq.plots.cube import MAX_FOREST_PAIRS

    cube = eq.simulate_cube(n_models=26, n_languages=3, rng=0)
    agg = eq.aggregate(eq.resample(cube, n_resamples=50, rng=0))
    pw = eq.pairwise_differences(agg)
    assert MAX_FOREST_PAIRS < 26 * 25 // 2
    with pytest.raises(eq.errors.CubeError, match="holds 325 pairs \\(26 models\\).*Give "
                                                  "`pairs=`, e.g. each model against the next"):
        eq.plots.forest_plot(pw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", eq.errors.EvaluqWarning)     # tiers' resample floor
        board = eq.leaderboard(agg)
    fig = eq.plots.forest_plot(pw, pairs=list(zip(board.index[:-1], board.index[1:],
                                                  strict=True)))
    assert len(fig.axes[0].get_yticklabels()) == 25
    from evaluq.reporting.sections import _adjacent_pairs  # the report's posterior figures

    assert _adjacent_pairs(pw) == list(zip(board.index[:-1], board.index[1:], strict=True))
    assert _adjacent_pairs(pw.sel(model=board.index[:8], model_b=board.index[:8])) is None

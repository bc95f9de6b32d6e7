"""Tests of the figures of the field's comparison methods (CD diagram, baycomp posteriors)."""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq.errors import CubeError

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def cube():
    return eq.simulate_cube(n_models=5, n_languages=20, model_means=[0, 0, 1, 2, 2],
                            sigma_between=1.0, rng=0)


def _labels(fig):
    return [line.get_label() for line in fig.axes[0].lines]


def test_cd_diagram_draws_groups_and_cd_bar(cube):
    cd = eq.critical_difference(cube)
    fig = eq.plots.critical_difference_diagram(cd)
    labels = _labels(fig)
    assert labels.count("CD") == 1
    assert sum(label.startswith("group") for label in labels) == cd.sizes["group"]
    bar = next(line for line in fig.axes[0].lines if line.get_label() == "CD")
    np.testing.assert_allclose(np.diff(bar.get_xdata()), cd.attrs["cd"])
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any(t.startswith("m0 (") for t in texts)


def test_cd_diagram_wilcoxon_has_no_cd_bar_and_draws_into_ax(cube):
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    fig = eq.plots.critical_difference_diagram(
        eq.critical_difference(cube, test="wilcoxon-holm"), ax=ax)
    assert fig is ax.figure
    assert "CD" not in _labels(fig)


def test_cd_diagram_rejects_other_input(cube):
    with pytest.raises(CubeError, match="`result` must be the result of eq.critical_difference"):
        eq.plots.critical_difference_diagram(cube)


def test_bayesian_plots(cube):
    sr = eq.bayesian_signed_rank(cube, "m3", "m2", rope=0.5, n_samples=3000, rng=0)
    fig = eq.plots.bayesian_comparison(sr)
    assert any("p(rope)" in t.get_text() for t in fig.axes[0].texts)   # the simplex
    no_rope = eq.bayesian_signed_rank(cube, "m3", "m2", n_samples=3000, rng=0)
    fig = eq.plots.bayesian_comparison(no_rope)                         # the histogram
    assert fig.axes[0].get_xlim() == (0.0, 1.0)
    a = np.linspace(0.8, 0.82, 10)
    tt = eq.correlated_t_test(a, a[::-1] - 0.01, rope=0.005, n_samples=1000, rng=0)
    fig = eq.plots.bayesian_comparison(tt)
    assert "difference b − a" in fig.axes[0].get_xlabel()
    with pytest.raises(TypeError, match="`result` must be the result of eq.bayesian_signed_rank"):
        eq.plots.bayesian_comparison(cube)


def test_bayesian_histogram_of_identical_models():
    """Identical models without a ROPE: every posterior sample is 1/2 up to rounding, and the
    histogram's 50 bins over the samples' own range raised numpy's "Too many bins"; the bins
    are now fixed over [0, 1] (51, 1/2 the middle of one): one bar at 1/2 holding every
    sample."""
    s = np.random.default_rng(0).random((1, 6, 3))
    same = eq.from_arrays(np.concatenate([s, s]), models=[0, 1])
    res = eq.bayesian_signed_rank(same, 0, 1, n_samples=2000, rng=0)
    fig = eq.plots.bayesian_comparison(res)
    heights = np.array([patch.get_height() for patch in fig.axes[0].patches])
    assert heights.size == 51
    assert heights[25] == 2000
    assert np.count_nonzero(heights) == 1
    assert fig.axes[0].get_xlim() == (0.0, 1.0)

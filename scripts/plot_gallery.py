"""The figures of the plot gallery (docs/guides/plots.md), one function per figure.

``docs/conf.py`` calls :func:`write_gallery` at every docs build, so the gallery always shows
what the current ``evaluq.plots`` draws; the page includes each function's source next to its
figure. Run ``python scripts/plot_gallery.py OUT_DIR`` to write the PNGs by hand.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.figure import Figure

import evaluq as eq


def _aggregated():
    cube = eq.simulate_cube(n_models=5, model_means=[0.0, 0.2, 1.0, 2.2, 2.4],
                            sigma_between=0.6, rng=0)
    return cube, eq.aggregate(eq.resample(cube, n_resamples=2000, rng=0))


def forest() -> Figure:
    _cube, agg = _aggregated()
    return eq.plots.forest_plot(eq.pairwise_differences(agg))


def rank_heatmap() -> Figure:
    _cube, agg = _aggregated()
    return eq.plots.rank_heatmap(eq.rank_distribution(agg))


def tier_diagram() -> Figure:
    _cube, agg = _aggregated()
    return eq.plots.tier_diagram(agg, eq.significance_groups(agg))


def variance_bars() -> Figure:
    cube = eq.simulate_cube(n_models=3, n_languages=5, rng=0)
    return eq.plots.variance_bars(eq.variance_components(cube))


def posterior_differences() -> Figure:
    # posterior draws of differences (chain, draw, model, model_b); here simulated
    rng = np.random.default_rng(0)
    mean = np.array([[0.0, 0.4, 1.5], [-0.4, 0.0, 1.1], [-1.5, -1.1, 0.0]])
    draws = xr.DataArray(mean + 0.3 * rng.standard_normal((2, 1000, 3, 3)),
                         dims=("chain", "draw", "model", "model_b"),
                         coords={"model": ["A", "B", "C"], "model_b": ["A", "B", "C"]},
                         attrs={"metric": "chrF"})
    return eq.plots.posterior_differences(draws, rope=0.5)


def annotation_bins() -> Figure:
    rng = np.random.default_rng(0)
    n_ann = rng.integers(1, 15, 400)
    counts = np.stack([rng.multinomial(n, [0.6, 0.3, 0.1]) for n in n_ann])
    post = eq.dirichlet.posterior(counts)
    q = xr.DataArray(np.tile([0.5, 0.35, 0.15], (400, 1)), dims=("item", "class"))
    values = {"E[CE]": eq.dirichlet.expected_cross_entropy(post, q),
              "CE empirical": eq.dirichlet.empirical_metric(post, q, metric="cross_entropy")}
    table = eq.dirichlet.by_annotation_count(values, post.n_annotations, bins=[1, 2, 4, 6, 11])
    return eq.plots.annotation_bins(table, ylabel="cross-entropy (nats)")


def resample_histogram() -> Figure:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 500)
    h0 = np.where(rng.random(500) < 0.70, y, rng.integers(0, 3, 500))
    h1 = np.where(rng.random(500) < 0.76, y, rng.integers(0, 3, 500))
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy", "f1"], method="paired",
                            n_resamples=2000, rng=0)
    return eq.plots.resample_histogram(res)


def scarce_intervals() -> Figure:
    scores = np.array([[76.85, 81.99], [90.0, 92.0], [60.0, 64.0], [79.0, 88.0]])
    results = {"t (2 raters)": eq.intervals.t_interval(scores, confidence_level=0.8,
                                                       bounds=(0, 100)),
               "ARF (1 rater, guess 85)": eq.intervals.arf_interval(scores[:, 0], 85.0,
                                                                    arf_alpha=0.2, bounds=(0, 100))}
    return eq.plots.scarce_intervals(results, threshold=80, xlabel="quality score (0-100)")


def mde_plot() -> Figure:
    # planning from SDs: 0/1 scores near 0.7, item scores of two models correlated 0.5
    design = eq.power.design_from_sds(sd_item=0.46, correlation=0.5, n_items=500,
                                      sd_seed=0.01, n_seeds=3)
    grid = eq.power.mde_grid(design, n_items=[100, 200, 500, 1000, 2000, 5000],
                             n_seeds=[1, 3, 10])
    return eq.plots.mde_plot(grid, pair=("A", "B"))


FIGURES: dict[str, Callable[[], Figure]] = {
    f.__name__: f for f in (forest, rank_heatmap, tier_diagram, variance_bars,
                            posterior_differences, annotation_bins, resample_histogram,
                            scarce_intervals, mde_plot)}


def write_gallery(out: Path) -> list[Path]:
    """Write every gallery figure as ``OUT/<name>.png``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in FIGURES.items():
        path = out / f"{name}.png"
        make().savefig(path, dpi=130, bbox_inches="tight", facecolor="white")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_gallery(Path(sys.argv[1] if len(sys.argv) > 1 else "gallery")):
        print(p)

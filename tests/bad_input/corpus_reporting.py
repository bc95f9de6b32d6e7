"""Bad-input cases for the reporting layer: plots, tables and the report."""

from __future__ import annotations

from pathlib import Path
from tempfile import mkdtemp

import numpy as np
import pandas as pd
import xarray as xr

import evaluq as eq

from .corpus import Case, agg, cube


def _pairwise() -> xr.Dataset:
    return eq.pairwise_differences(agg())


def _draws() -> xr.DataArray:
    return xr.DataArray(np.random.default_rng(0).normal(size=(2, 50, 3)),
                        dims=("chain", "draw", "model"), coords={"model": ["a", "b", "c"]})


def _test_result() -> eq.significance.BootstrapTestResult:
    y = np.tile([0, 1, 1, 0, 1], 8)
    return eq.bootstrap_test(y, np.roll(y, 1), y, metrics=["accuracy"], n_resamples=50, rng=0)


def _out() -> Path:
    return Path(mkdtemp()) / "report.html"


def reporting_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    plots = eq.plots
    add(Case("evaluq.plots.forest_plot", "a cube instead of differences",
             lambda: plots.forest_plot(cube()), "`pairwise`"))
    add(Case("evaluq.plots.forest_plot", "unique not bool",
             lambda: plots.forest_plot(_pairwise(), unique="yes"), "`unique`"))
    add(Case("evaluq.plots.rank_heatmap", "an aggregate instead of ranks",
             lambda: plots.rank_heatmap(agg()), "`ranks`"))
    add(Case("evaluq.plots.tier_diagram", "alpha out of range",
             lambda: plots.tier_diagram(agg(), alpha=1.5), "`alpha`"))
    add(Case("evaluq.plots.variance_bars", "unknown variable",
             lambda: plots.variance_bars(eq.variance_components(cube()), variables=("x",)),
             "`variables`"))
    add(Case("evaluq.plots.posterior_differences", "no sample dims",
             lambda: plots.posterior_differences(_draws().isel(chain=0)), "chain|sample"))
    add(Case("evaluq.plots.posterior_differences", "rope negative",
             lambda: plots.posterior_differences(_draws(), rope=-1.0), "`rope`"))
    add(Case("evaluq.plots.annotation_bins", "not a DataFrame",
             lambda: plots.annotation_bins(np.ones(3)), "`table`"))
    add(Case("evaluq.plots.resample_histogram", "not a test result",
             lambda: plots.resample_histogram(agg()), "`result`"))
    add(Case("evaluq.plots.resample_histogram", "bins an unknown rule",
             lambda: plots.resample_histogram(_test_result(), bins="many"), "`bins`"))
    add(Case("evaluq.plots.resample_histogram", "bins edges decreasing",
             lambda: plots.resample_histogram(_test_result(), bins=[0.2, 0.1, 0.0]), "`bins`"))
    add(Case("evaluq.plots.posterior_differences", "bins zero",
             lambda: plots.posterior_differences(_draws(), bins=0), "`bins`"))
    add(Case("evaluq.plots.posterior_differences", "bins 10**9 (huge)",
             lambda: plots.posterior_differences(_draws(), bins=10**9),
             r"`bins` would need [\d.]+ TiB"))
    add(Case("evaluq.plots.resample_histogram", "bins 10**9 (huge)",
             lambda: plots.resample_histogram(_test_result(), bins=10**9),
             r"`bins` would need [\d.]+ TiB"))
    add(Case("evaluq.plots.scarce_intervals", "not an interval result",
             lambda: plots.scarce_intervals(3.0), "`results`"))
    tables = eq.tables
    board = eq.leaderboard(agg())
    add(Case("evaluq.tables.caption", "not a DataFrame", lambda: tables.caption([1, 2]),
             "`table`"))
    add(Case("evaluq.tables.to_markdown", "negative digits",
             lambda: tables.to_markdown(board, digits=-1), "`digits`"))
    add(Case("evaluq.tables.to_latex", "a Dataset", lambda: tables.to_latex(agg()), "`table`"))
    add(Case("evaluq.tables.whole_ranks", "a Dataset", lambda: tables.whole_ranks(agg()),
             "`table`"))
    add(Case("evaluq.tables.write", "unknown format",
             lambda: tables.write(board, Path(mkdtemp()) / "t", formats=("docx",)),
             "`formats`"))
    reporting = eq.reporting
    add(Case("evaluq.reporting.analyse", "n_resamples 1",
             lambda: reporting.analyse(cube(), n_resamples=1), "`n_resamples`"))
    add(Case("evaluq.reporting.analyse", "unknown replication",
             lambda: reporting.analyse(cube(), replication="bayes"), "`replication`"))
    add(Case("evaluq.reporting.analyse", "a DataFrame, not a cube",
             lambda: reporting.analyse(pd.DataFrame({"a": [1]})), "`cube`"))
    add(Case("evaluq.reporting.Analysis", "analyse on a cube with NaN only",
             lambda: reporting.analyse(cube().assign(score=cube().score * np.nan)),
             "NaN|missing|no score"))
    add(Case("evaluq.report", "out is a directory",
             lambda: eq.report(cube(), out=mkdtemp()), "`out`"))
    add(Case("evaluq.report", "bounds reversed (from_long refuses them too)",
             lambda: eq.report(cube(), out=_out(), bounds=(1, 0)), "`bounds`.*lower < upper"))
    add(Case("evaluq.save_cube", "not a cube",
             lambda: eq.save_cube(eq.simulate_cube(rng=0)[["score"]].rename(score="x"),
                                  _out().with_suffix(".nc")), "score|cube"))
    add(Case("evaluq.save_cube", "overwrite='yes'",
             lambda: eq.save_cube(cube(), _out().with_suffix(".nc"), overwrite="yes"),
             "`overwrite`"))
    add(Case("evaluq.report", "bounds not a pair",
             lambda: eq.report(cube(), out=_out(), bounds="x"), "`bounds`"))
    add(Case("evaluq.reporting.Report", "bayes not bool",
             lambda: eq.report(cube(), out=_out(), bayes="yes"), "`bayes`"))
    add(Case("evaluq.fit_hierarchical", "unknown model",
             lambda: eq.fit_hierarchical(cube(), model="both"), "`model`"))
    add(Case("evaluq.fit_hierarchical", "draws 0",
             lambda: eq.fit_hierarchical(cube(), draws=0), "`draws`"))
    add(Case("evaluq.fit_hierarchical", "unknown sampler",
             lambda: eq.fit_hierarchical(cube(), sampler="stan"), "`sampler`"))
    add(Case("evaluq.fit_hierarchical", "a DataFrame, not a cube",
             lambda: eq.fit_hierarchical(pd.DataFrame({"a": [1]})), "`cube`"))
    add(Case("evaluq.HierarchicalFit", "unknown prior key",
             lambda: eq.fit_hierarchical(cube(), priors={"x": 1.0}), "`priors`"))
    add(Case("evaluq.load_fit", "path of a wrong type", lambda: eq.load_fit(3), "`path`"))
    add(Case("evaluq.load_fit", "no such file",
             lambda: eq.load_fit(Path(mkdtemp()) / "fit.nc"), "`path`",
             errors=(ValueError, TypeError, FileNotFoundError)))
    add(Case("evaluq.report", "item_scores not the DataArray of item_scores",
             lambda: eq.report(cube(), None, n_resamples=100, progress=False, item_scores=3),
             "`item_scores`"))
    add(Case("evaluq.report", "item_scores naming an unknown metric",
             lambda: eq.report(cube(), None, n_resamples=100, progress=False,
                               item_scores={"nope": _draws()}), "`item_scores`",
             errors=(ValueError, TypeError, eq.errors.CubeError)))
    return c

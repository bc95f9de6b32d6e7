"""Issue 35's user-facing bad-input failures, one entry per example the issue names, grouped
by class (crashes, silent NaN, wrongly accepted, huge sizes, vague messages).

``CLASSES`` maps a class to its cases; ``tests/bad_input/test_api_classes.py`` runs each class
as one test, and :func:`issue35_cases` adds the cases of public names to the corpus
(``test_corpus.py``), so every example is checked forever.
"""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pandas as pd
import xarray as xr

import evaluq as eq
from evaluq.item_model import item_statistics, simulate_ratings
from evaluq.small_samples.proportions import interval_coverage

from .corpus import FINITE, Case

NAN = float("nan")
ONE_ITEM = np.array([[1, 0, 1]])
HUGE = np.random.default_rng(0).normal(1e300, 1e299, (2, 30))
A = np.array([1] * 25 + [0] * 5)
B = np.array([1] * 20 + [0] * 10)


def cube(**kw):
    return eq.simulate_cube(**{"n_models": 3, "n_languages": 4, "n_seeds": 3, "n_boot": 20,
                               "rng": 0, **kw})


def identical_models():
    c = cube()
    same = c.score.sel(model="m0").expand_dims(model=c.model.values).transpose(*c.score.dims)
    return c.assign(score=same + (c.model == "m1") * 0.25)     # m1 = m0 + a constant


def one_nan_replicate():
    c = cube(n_seeds=1).copy(deep=True)
    c["boot_score"][0, 0, 0, 0] = np.nan
    return c


def grid():
    d = eq.power.design_from_sds(sd_item=0.5, sd_seed=0.02, n_seeds=3, n_items=200)
    return eq.power.mde_grid(d, n_items=[100, 200], n_seeds=[1, 3])


def ranks():
    return eq.rank_distribution(eq.aggregate(eq.resample(cube(), n_resamples=50, rng=0)))


def _crashes_of_plots() -> list[Case]:
    return [
        Case("evaluq.plots.interval_estimates_panel", "given a performance profile",
             lambda: eq.plots.interval_estimates_panel(
                 eq.performance_profile(cube(), [0.5], n_resamples=50, rng=0)),
             r"`estimates` must be the result of eq.interval_estimates.*no 'aggregate' dim"),
        Case("evaluq.plots.performance_profile_plot", "given interval estimates",
             lambda: eq.plots.performance_profile_plot(
                 eq.interval_estimates(cube(), n_resamples=50, rng=0)),
             r"`profile` must be the result of eq.performance_profile.*no 'threshold' dim"),
        Case("evaluq.plots.mde_plot", "an unknown model in the pair",
             lambda: eq.plots.mde_plot(grid(), pair=("A", "Z")),
             r"`pair` names 'Z', which is not one of the models \['A', 'B'\]"),
        Case("evaluq.tables.to_latex", "label=5",
             lambda: eq.tables.to_latex(eq.variance_table(eq.variance_components(cube())),
                                        label=5), r"`label` must be a string or None"),
    ]


def _crashes() -> list[Case]:
    return [*_crashes_of_plots(),
        Case("evaluq.hierarchical_t_test", "identical models, or a constant shift",
             lambda: eq.hierarchical_t_test(identical_models(), "m0", "m2"),
             r"`model` 'm0' and `model_b` 'm2' differ by the same amount"),
        Case("evaluq.hierarchical_t_test", "a constant shift",
             lambda: eq.hierarchical_t_test(identical_models(), "m0", "m1"),
             r"`model` 'm0' and `model_b` 'm1' differ by the same amount"),
        Case("evaluq.design_effect", "empty input", lambda: eq.design_effect([], []),
             "`scores` is empty"),
    ]


def _silent_nan() -> list[Case]:
    return [*_silent_nan_power(),
        Case("evaluq.pass_at_k", "one item: the interval's NaN explained",
             lambda: eq.pass_at_k(ONE_ITEM, 1), FINITE),
        Case("evaluq.pass_hat_k", "one item: the interval's NaN explained",
             lambda: eq.pass_hat_k(ONE_ITEM, 1), FINITE),
        Case("evaluq.aso", "scores near 1e300 (squared differences overflowed)",
             lambda: eq.aso(HUGE[0], HUGE[1], n_resamples=50, rng=0).to_dataset(), FINITE),
    ]


def _silent_nan_power() -> list[Case]:
    return [
        Case("evaluq.power.design", "one NaN replicate",
             lambda: eq.power.design(one_nan_replicate()),
             r"`cube.boot_score` has NaN replicates in 1 scored cell.*model 'm0'"),
        Case("evaluq.power.design", "one seed, no n_items: the NaNs explained",
             lambda: eq.power.design(cube(n_seeds=1)), FINITE),
        Case("evaluq.power.compute_allocation", "one model",
             lambda: eq.power.compute_allocation(cube(n_models=1)), r"`cube` has 1 model"),
        Case("evaluq.power.compute_allocation", "a cube without n_items: the NaNs explained",
             lambda: eq.power.compute_allocation(cube()), FINITE),
    ]


def _wrongly_accepted() -> list[Case]:
    items = eq.simulate_items(n_models=2, n_items=6, rng=0)
    cols = {"model": "model", "item": "item", "score": "score"}
    return [
        Case("evaluq.simulate_items", "sigma_item=nan (gave all-zero scores)",
             lambda: eq.simulate_items(sigma_item=NAN), r"`sigma_item` must be finite"),
        Case("evaluq.item_model.simulate_ratings", "sigma_grader=nan (gave all-zero ratings)",
             lambda: simulate_ratings(sigma_grader=NAN), r"`sigma_grader` must be finite"),
        Case("evaluq.item_model.simulate_ratings", "cut_span=-1",
             lambda: simulate_ratings(cut_span=-1), r"`cut_span` must be in \(0"),
        Case("evaluq.plots.rank_heatmap", "annotate='yes'",
             lambda: eq.plots.rank_heatmap(ranks(), annotate="yes"),
             r"`annotate` must be True, False or None"),
        Case("evaluq.plots.mde_plot", "a pair of three",
             lambda: eq.plots.mde_plot(grid(), pair=("A", "B", "C")),
             r"`pair` must be a pair \(model, model_b\)"),
        Case("evaluq.plots.posterior_differences", "pairs on draws without (model, model_b)",
             lambda: eq.plots.posterior_differences(
                 xr.DataArray(np.zeros((2, 50)), dims=("chain", "draw")), pairs=[("a", "b")]),
             r"`pairs` selects \(model, model_b\) pairs, but `draws` has no"),
        Case("evaluq.fit_hierarchical", "test_set_errors='paired' on replicates not shared",
             lambda: eq.fit_hierarchical(cube(n_boot=50), test_set_errors="paired"),
             r"`test_set_errors` is 'paired' but the cube does not say"),
        Case("evaluq.item_model.item_statistics", "family='poisson'",
             lambda: item_statistics(items, **cols, family="poisson"), r"`family` must be one"),
        Case("evaluq.item_model.item_statistics", "family='ordinal' (no ordinal statistics)",
             lambda: item_statistics(items, **cols, family="ordinal"),
             r"`family` 'ordinal'.*eq.fit_items"),
    ]


def _huge_sizes() -> list[Case]:
    return [
        Case("evaluq.small_samples.interval_coverage", "10**9 trials",
             lambda: interval_coverage([10**9], 0.5), r"`trials` would need [\d.]+ GiB"),
        Case("evaluq.bayes_paired_comparison", "n_draws=10**9",
             lambda: eq.bayes_paired_comparison(A, B, n_draws=10**9),
             r"`n_draws` would need [\d.]+ GiB"),
        Case("evaluq.aso", "n_resamples=10**8",
             lambda: eq.aso([1.0, 2.0, 3.0], [2.0, 1.0, 0.0], n_resamples=10**8),
             r"`n_resamples` would need [\d.]+ TiB"),
    ]


def load_text_file():
    """load_item_fit of a text file named ``text.nc`` (in a folder removed afterwards)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "text.nc")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("not a fit\n")
        return eq.load_item_fit(path)


def _vague() -> list[Case]:
    return [
        Case("evaluq.load_item_fit", "a text file (the file named)",
             load_text_file, r"`path` '.*text\.nc' cannot be read"),
        Case("evaluq.proportion_interval", "shapes that do not broadcast",
             lambda: eq.proportion_interval([1, 2], [3, 4, 5]),
             r"`successes` of shape \(2,\) and `trials` of shape \(3,\) do not broadcast"),
        Case("evaluq.power.mde_grid", "one number of items, not a sequence",
             lambda: eq.power.mde_grid(cube(), n_items=100, n_seeds=[1]),
             r"`n_items` must be a sequence of integers \(for one value: \[100\]\)"),
        Case("evaluq.from_items", "finite scores of 1e308 (an internal overflow was blamed on "
             "the input)", lambda: eq.from_items(
                 pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "item": [0, 1, 2, 3] * 2,
                               "score": [1e308, -1e308, 1e308, 5e307] * 2}),
                 model="model", item="item", score="score", n_boot=10, rng=0), FINITE),
        Case("evaluq.performance_profile", "thresholds that are no numbers",
             lambda: eq.performance_profile(cube(), ["a"]), r"`thresholds` must hold numbers"),
    ]


CLASSES = {"crashes": _crashes, "silent_nan": _silent_nan,
           "wrongly_accepted": _wrongly_accepted, "huge_sizes": _huge_sizes, "vague": _vague}

def issue35_cases() -> list[Case]:
    """Every case: the corpus covers the whole public surface (``test_corpus.public_names``)."""
    return [case for make in CLASSES.values() for case in make()]

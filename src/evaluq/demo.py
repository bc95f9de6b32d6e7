"""The demo: real predictions of five classifiers x five seeds on four data sets.

The predictions ship with the package (``evaluq/data/demo_predictions.npz``, made by
``scripts/make_demo_data.py`` from scikit-learn's bundled data sets, which play the role of
languages), so the demo needs no network and no extra install.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import CLASS, ITEM, MODEL, SEED
from evaluq._validation import RNGLike
from evaluq.aggregation import aggregate
from evaluq.metrics import cross_entropy_metric
from evaluq.pairwise import pairwise_differences, pairwise_table
from evaluq.predictions import from_predictions
from evaluq.ranks import leaderboard, rank_distribution
from evaluq.resampling import LanguageMode, resample
from evaluq.significance import bootstrap_test
from evaluq.variance import variance_components, variance_table


def load_demo() -> tuple[dict[str, np.ndarray], dict[str, xr.DataArray], dict[str, xr.DataArray]]:
    """The demo predictions.

    Returns
    -------
    targets
        Data set -> true labels ``(item,)``.
    labels
        Data set -> predicted labels, DataArray ``(model, seed, item)``.
    proba
        Data set -> predicted class probabilities, DataArray ``(model, seed, item, class)``.

    Examples
    --------
    >>> from evaluq.demo import load_demo
    >>> targets, labels, proba = load_demo()
    >>> sorted(targets)
    ['breast_cancer', 'digits', 'iris', 'wine']
    >>> dict(labels["iris"].sizes)
    {'model': 5, 'seed': 5, 'item': 60}
    """
    path = resources.files("evaluq") / "data" / "demo_predictions.npz"
    with resources.as_file(path) as file, np.load(file) as npz:
        models = npz["models"].tolist()
        names = sorted({key.split("/")[0] for key in npz.files if "/" in key})
        targets = {n: npz[f"{n}/targets"].astype(np.int64) for n in names}
        labels = {
            n: xr.DataArray(npz[f"{n}/labels"].astype(np.int64), dims=(MODEL, SEED, ITEM),
                            coords={MODEL: models})
            for n in names
        }
        proba = {
            n: xr.DataArray(npz[f"{n}/proba"].astype(np.float64), dims=(MODEL, SEED, ITEM, CLASS),
                            coords={MODEL: models})
            for n in names
        }
    return targets, labels, proba


def demo_cube(*, metric: str = "accuracy", n_boot: int = 1000, rng: RNGLike = 0) -> xr.Dataset:
    """The demo predictions scored into a cube (model x data set x seed x bootstrap).

    Examples
    --------
    >>> from evaluq.demo import demo_cube
    >>> cube = demo_cube(n_boot=100)
    >>> dict(cube.boot_score.sizes)
    {'model': 5, 'language': 4, 'seed': 5, 'bootstrap': 100}
    """
    targets, labels, _ = load_demo()
    return from_predictions(targets, labels, metric=metric, n_boot=n_boot, rng=rng)


def _section(title: str) -> None:
    print()
    print(title)
    print("-" * len(title))


def _print_frame(frame: pd.DataFrame) -> None:
    with pd.option_context("display.width", 160, "display.max_columns", 20,
                           "display.float_format", "{:.4f}".format):
        print(frame)


def _bayes_section(cube: xr.Dataset, results: dict[str, Any], rng: RNGLike) -> None:
    """The hierarchical model's posterior rank report beside the resampling's."""
    from evaluq.hierarchical import fit_hierarchical

    _section("Hierarchical Bayesian model (crossed, marginal form): posterior rank report")
    print("Sampling (the first fit on a machine compiles the model: 10-30 s; later fits reuse "
          "the compile cache) ...")
    # test_set_errors="auto": the models were scored on shared bootstrap replicates, so the
    # posterior pairs their test-set errors as the resampling does
    fit = fit_hierarchical(cube, model="crossed", rng=rng)
    print(fit)
    frequentist = {"benchmark": results["ranks_these"], "population": results["ranks_new"]}
    for level, title in (("benchmark", "on THESE data sets (mean over them of theta)"),
                         ("population", "on a NEW data set (mu)")):
        ranks = fit.rank_probabilities(scope=level)
        print(f"\nPosterior P(rank = r) {title}; rank 1 = best:")
        table = ranks.probability.to_pandas()
        table["expected_rank"] = ranks.expected_rank.to_pandas()
        table["P(best) posterior"] = ranks.p_best.to_pandas()
        table["P(best) resampling"] = frequentist[level].p_best.to_pandas()
        _print_frame(table)
        results[f"posterior_ranks_{level}"] = ranks
    _section("Posterior beside frequentist (95% intervals; 'driver' says which assumption "
             "explains a disagreement)")
    comparison = fit.compare_frequentist(results["resampled_these"], rng=rng)
    with pd.option_context("display.width", 200, "display.max_columns", 20,
                           "display.max_colwidth", 60, "display.float_format",
                           "{:.4f}".format):
        print(comparison.drop(columns=["driver"]).to_string(index=False))
    drivers = comparison.loc[comparison.driver != "", ["quantity", "driver"]].drop_duplicates(
        "quantity")
    for quantity, driver in drivers.itertuples(index=False):
        print(f"  {quantity}: {driver}")
    diagnostics = fit.diagnostics()
    print(f"\nSampler diagnostics ({fit.sampler}): max R-hat {diagnostics.r_hat.max():.3f}, "
          f"min bulk ESS {diagnostics.ess_bulk.min():.0f}, min tail ESS "
          f"{diagnostics.ess_tail.min():.0f}, divergences {diagnostics.attrs['divergences']}")
    results["fit"] = fit
    results["comparison"] = comparison


def run_demo(*, n_boot: int = 1000, n_resamples: int = 10_000,
             rng: RNGLike = 0, bayes: bool = True) -> dict[str, Any]:
    """Run the demo analysis and print it; returns the intermediate results.

    With ``bayes`` (the default) the hierarchical model is fitted too, and its posterior rank
    report and comparison table are printed beside the resampling's.
    """
    targets, labels, proba = load_demo()
    cube = _cube_section(targets, labels, n_boot, rng)
    results: dict[str, Any] = {"cube": cube, "variance_components": _variance_section(cube)}
    _leaderboard_sections(cube, n_resamples, rng, results)
    _pairwise_section(results)
    if bayes:
        _bayes_section(cube, results, rng)
    _test_sections(targets, labels, proba, rng, results)
    return results


def _cube_section(targets: dict[str, np.ndarray], labels: dict[str, xr.DataArray],
                  n_boot: int, rng: RNGLike) -> xr.Dataset:
    """The demo cube, printed with its mean accuracy per model and data set."""
    print("evaluq demo: 5 classifiers x 4 data sets (in the role of languages) x 5 seeds")
    print("data sets: " + ", ".join(f"{k} ({len(v)} test items)" for k, v in targets.items()))
    cube = from_predictions(targets, labels, metric="accuracy", n_boot=n_boot, rng=rng)
    _section(f"Evaluation cube (accuracy, {n_boot} paired bootstrap replicates per data set)")
    print(cube)

    _section("Mean accuracy per model and data set (over seeds)")
    means = cube.score.mean(SEED).to_pandas()
    with pd.option_context("display.width", 120, "display.precision", 4):
        print(means)

    return cube


def _variance_section(cube: xr.Dataset) -> xr.Dataset:
    """The variance components, printed with which noise source dominates."""
    _section("Variance components (ddof=1): between data sets, seed-to-seed, boot-to-boot")
    components = variance_components(cube)
    table = variance_table(components)
    with pd.option_context("display.width", 160, "display.max_columns", 20,
                           "display.float_format", "{:.4f}".format):
        print(table.T)
    seed_part = components.sigma_seed.mean().item()
    boot_part = components.sigma_boot.mean().item()
    larger, smaller = ("test-set sampling (boot)", "seed") if boot_part > seed_part else (
        "seed", "test-set sampling (boot)")
    print(f"\nAveraged over models and data sets, the {larger} SD ({max(seed_part, boot_part):.4f})"
          f" exceeds the {smaller} SD ({min(seed_part, boot_part):.4f}).")
    return components


def _leaderboard_sections(cube: xr.Dataset, n_resamples: int, rng: RNGLike,
                          results: dict[str, Any]) -> None:
    """Leaderboards on these data sets and on new ones (``results`` gets the resamples,
    aggregates and ranks)."""
    views: dict[str, tuple[str, LanguageMode]] = {
        "these": ("on THESE data sets (languages fixed; per data set one paired test-set "
                  "replicate and the seeds drawn with replacement)", "fixed"),
        "new": ("on NEW data sets (data sets bootstrapped as well: the population view)",
                "bootstrap"),
    }
    for key, (title, languages) in views.items():
        resampled = resample(cube, n_resamples=n_resamples, replication="nonparametric",
                             languages=languages, rng=rng)
        agg = aggregate(resampled)
        results[f"resampled_{key}"] = resampled
        _section(f"Leaderboard {title}")
        print(f"mean accuracy over data sets, 95% percentile intervals, {n_resamples} resamples; "
              "tier: models the data cannot separate (Holm-adjusted, alpha 0.05)")
        _print_frame(leaderboard(agg))
        ranks = rank_distribution(agg)
        print("\nP(rank = r), rank 1 = best:")
        _print_frame(ranks.probability.to_pandas())
        results[f"aggregate_{key}"] = agg
        results[f"ranks_{key}"] = ranks


def _pairwise_section(results: dict[str, Any]) -> None:
    """Pairwise differences on these data sets (``results["pairwise"]``)."""
    _section("Pairwise differences on these data sets (better model minus the other)")
    pairs = pairwise_table(pairwise_differences(results["aggregate_these"]), unique=True)
    _print_frame(pairs[["observed", "sd", "lower", "upper", "p_greater", "z", "p_holm"]])
    results["pairwise"] = pairs


def _test_sections(targets: dict[str, np.ndarray], labels: dict[str, xr.DataArray],
                   proba: dict[str, xr.DataArray], rng: RNGLike,
                   results: dict[str, Any]) -> None:
    """The two-system significance test on one data set, hard and soft labels."""
    h0, h1, data = "naive_bayes", "logreg", "digits"
    y = targets[data]
    hard = {name: labels[data].sel({MODEL: name}).isel({SEED: 0}).values for name in (h0, h1)}
    _section(f"Significance test on {data!r}, seed 0: h0 = {h0}, h1 = {h1}")
    print("BooStSa's Berg-Kirkpatrick test (sub-samples of 10%: conservative by design), then the "
          "standard paired bootstrap\n")
    for method in ("berg-kirkpatrick", "paired"):
        result = bootstrap_test(y, hard[h0], hard[h1], method=method, rng=rng,
                                h0_name=h0, h1_name=h1)
        print(result.summary())
        print()
        results[f"test_{method}"] = result
    soft_targets = np.eye(proba[data].sizes[CLASS])[y]
    soft = {name: proba[data].sel({MODEL: name}).isel({SEED: 0}).values for name in (h0, h1)}
    print("Soft metrics on the predicted probabilities (lower is better; delta is oriented so "
          "that positive means h1 is better).\nNaive Bayes gives probability 0 to some true "
          "classes, so its plain cross-entropy is infinite:\nit is clipped at eps = 1e-6 here "
          "(evaluq.metrics.cross_entropy_metric(eps=1e-6)).\n")
    result = bootstrap_test(soft_targets, soft[h0], soft[h1],
                            metrics=(cross_entropy_metric(eps=1e-6), "js_divergence",
                                     "js_distance"),
                            method="paired", rng=rng, h0_name=h0, h1_name=h1)
    print(result.summary())
    results["test_soft"] = result

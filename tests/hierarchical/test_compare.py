"""``compare_frequentist`` on the files users have: the resampling that exists for the cube,
the posterior scope it matches, and the description that says which (short fits)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.hierarchical import HierarchicalFit

pytestmark = pytest.mark.filterwarnings("ignore::evaluq.hierarchical.ConvergenceWarning")
FEW = {"draws": 100, "tune": 100, "chains": 2, "retry": False, "rng": 0}


def _long(n_seeds: int, n_languages: int = 5) -> pd.DataFrame:
    """A long table (model, language, seed, score) without a bootstrap column."""
    cube = eq.simulate_cube(n_models=3, n_languages=n_languages, n_seeds=n_seeds, n_boot=None,
                            model_means=[0.0, 0.5, 2.0], sigma_language=1.0, rng=0)
    return cube.score.to_dataframe().reset_index()


def _summary(**columns: float) -> pd.DataFrame:
    means = _long(1).rename(columns={"score": "mean"}).drop(columns="seed")
    return means.assign(**columns)


def _fit(cube: xr.Dataset) -> HierarchicalFit:
    return eq.fit_hierarchical(cube, **FEW)


def _rows(table: pd.DataFrame, quantity: str) -> pd.DataFrame:
    return table[table.quantity == quantity]


def _matches_the_posterior(table: pd.DataFrame, fit: HierarchicalFit, scope: str) -> None:
    """The posterior columns are the fit's own at ``scope``."""
    draws = fit.posterior["mu" if scope == "population" else "benchmark_mean"]
    np.testing.assert_allclose(_rows(table, "mean").posterior_mean,
                               draws.mean(("chain", "draw")).values)
    pairs = fit.pairwise_differences(scope)["mean"].values
    np.testing.assert_allclose(_rows(table, "difference").posterior_mean,
                               pairs[np.triu_indices(3, k=1)])
    np.testing.assert_allclose(_rows(table, "p_best").posterior_mean,
                               fit.rank_probabilities(scope)["p_best"].values)


def _attrs_say(table: pd.DataFrame, start: str, scope: str) -> None:
    assert table.attrs["resampling"].startswith(start), table.attrs["resampling"]
    assert table.attrs["posterior_scope"] == scope
    assert table.attrs["resampling"] in table.attrs["caption"]
    assert table.attrs["scope"].startswith(f"{scope} scope")


def test_several_seeds_without_replicates_redraw_the_seeds() -> None:
    """The commonest file: a long CSV with 3 seeds per cell and no bootstrap column."""
    cube = eq.from_long(_long(3), model="model", language="language", seed="seed",
                        score="score")
    fit = _fit(cube)
    table = fit.compare_frequentist(rng=0)
    _attrs_say(table, "the seeds redrawn (nonparametric, seeds rescaled", "benchmark")
    assert "test-set sampling noise is in neither side" in table.attrs["resampling"]
    expected = eq.aggregate(eq.resample(cube, n_resamples=4000, replication="nonparametric",
                                        seeds="rescaled", languages="fixed",
                                        rng=np.random.default_rng(0)))
    means = _rows(table, "mean")
    np.testing.assert_allclose(means.freq_lower, expected["ci"].isel(ci_bound=0).values)
    np.testing.assert_allclose(means.freq_upper, expected["ci"].isel(ci_bound=1).values)
    assert np.isfinite(_rows(table, "difference")[["freq_lower", "freq_upper"]].values).all()
    _matches_the_posterior(table, fit, "benchmark")


@pytest.mark.parametrize("kind", ["long, one seed", "summary without SDs"])
def test_one_seed_without_replicates_bootstraps_the_languages(kind: str) -> None:
    """Nothing but the languages can be redrawn: compared at population scope (mu)."""
    cube = (eq.from_long(_long(1), model="model", language="language", score="score")
            if kind == "long, one seed"
            else eq.from_summary(_summary(), sd_seed=None, sd_boot=None, n_seeds=1))
    fit = _fit(cube)
    table = fit.compare_frequentist(rng=0)
    _attrs_say(table, "the languages bootstrapped (replication 'none')", "population")
    why = ("one seed per cell and no bootstrap replicates" if kind == "long, one seed"
           else "a summary cube without sd_seed or sd_boot")
    assert why in table.attrs["resampling"]
    expected = eq.aggregate(eq.resample(cube, n_resamples=4000, replication="none",
                                        languages="bootstrap", rng=np.random.default_rng(0)))
    np.testing.assert_allclose(_rows(table, "mean").freq_upper,
                               expected["ci"].isel(ci_bound=1).values)
    _matches_the_posterior(table, fit, "population")


def test_a_summary_cube_with_both_sds_keeps_the_parametric_resampling() -> None:
    cube = eq.from_summary(_summary(sd_seed=0.3, sd_boot=0.5), n_seeds=3)
    table = _fit(cube).compare_frequentist(rng=0)
    _attrs_say(table, "parametric replication noise (seed and test-set SDs)", "benchmark")


@pytest.mark.parametrize(("given", "missing", "noise"),
                         [("sd_seed", "sd_boot", "test-set"), ("sd_boot", "sd_seed", "seed")])
def test_a_summary_cube_with_one_sd_draws_that_noise_alone(given: str, missing: str,
                                                           noise: str) -> None:
    cube = eq.from_summary(_summary(**{given: 0.3}), **{missing: None}, n_seeds=3)
    fit = _fit(cube)
    table = fit.compare_frequentist(rng=0)
    _attrs_say(table, f"parametric replication noise from the cube's {given} ({missing} taken "
               "as 0", "benchmark")
    assert f"the {noise} noise is in neither side" in table.attrs["resampling"]
    means = _rows(table, "mean")
    assert (means.freq_upper > means.freq_lower).all()
    _matches_the_posterior(table, fit, "benchmark")


def test_a_cube_with_shared_replicates_is_compared_as_before() -> None:
    """Shared replicates (auto pairs): the nonparametric resampling of the replicates with
    the seeds rescaled, exactly as ``eq.resample`` draws it."""
    cube = eq.simulate_cube(n_models=3, n_languages=5, n_seeds=3, n_boot=40,
                            boot_correlation=0.8, seed_sharing=0.9, sigma_language=1.0, rng=0)
    fit = _fit(cube)
    assert fit.data.paired
    table = fit.compare_frequentist(rng=0)
    _attrs_say(table, "the shared bootstrap replicates and the seeds redrawn", "benchmark")
    expected = eq.pairwise_differences(eq.aggregate(eq.resample(
        cube, n_resamples=4000, replication="nonparametric", seeds="rescaled",
        languages="fixed", rng=np.random.default_rng(0))))
    np.testing.assert_allclose(_rows(table, "difference").freq_lower,
                               expected["ci"].isel(ci_bound=0).values[np.triu_indices(3, k=1)])


def test_one_language_and_one_seed_give_nan_intervals_and_say_why() -> None:
    cube = eq.from_long(_long(1, n_languages=1), model="model", language="language",
                        score="score")
    table = _fit(cube).compare_frequentist()
    assert table.attrs["resampling"].startswith("nothing to resample: one seed per cell")
    assert "resampled=" not in table.attrs["resampling"]
    for quantity in ("mean", "difference"):
        rows = _rows(table, quantity)
        assert rows.freq_lower.isna().all()
        assert rows.freq_upper.isna().all()
        assert np.isfinite(rows.frequentist).all()
    p_best = _rows(table, "p_best")
    assert p_best.frequentist.isna().all()
    assert (p_best.driver == "no frequentist value: nothing in the cube can be resampled").all()


def test_a_given_resampling_of_the_languages_is_compared_at_population_scope() -> None:
    cube = eq.from_long(_long(3), model="model", language="language", seed="seed",
                        score="score")
    fit = _fit(cube)
    resampled = eq.resample(cube, n_resamples=500, replication="nonparametric",
                            languages="bootstrap", rng=1)
    table = fit.compare_frequentist(resampled)
    assert table.attrs["posterior_scope"] == "population"
    assert table.attrs["resampling"] == ("given (replication 'nonparametric', languages "
                                         "'bootstrap')")
    _matches_the_posterior(table, fit, "population")


@pytest.mark.parametrize(("n_seeds", "n_languages"), [(3, 6), (1, 1)])
def test_a_mixed_scale_cube_is_warned_about_once(n_seeds: int, n_languages: int) -> None:
    """Three models in fractions concatenated with one in percentages: the comparison's
    resampling (the seeds redrawn; with one seed and one language the two constant
    resamples) warned of m3's scale, and so did their aggregate: twice per call, with two
    different ratios. Now once."""
    from evaluq.errors import ScaleWarning

    cube = eq.simulate_cube(n_models=4, n_languages=n_languages, n_seeds=n_seeds, n_boot=None,
                            model_means=[70, 72, 75, 78], sigma_language=5.0, rng=0)
    fractions = cube.isel(model=[0, 1, 2]).assign(score=cube.score.isel(model=[0, 1, 2]) / 100)
    mixed = xr.concat([fractions, cube.isel(model=[3])], dim="model")
    fit = eq.fit_hierarchical(mixed, **FEW)
    with pytest.warns(ScaleWarning, match="model m3 looks like another scale") as caught:
        fit.compare_frequentist(rng=0)
    assert len([w for w in caught if issubclass(w.category, ScaleWarning)]) == 1

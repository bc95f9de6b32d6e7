"""Tests of eq.aggregate: the aggregates, the interval, NaN / gmean errors, calibration."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError, MissingDataWarning


@pytest.fixture
def cube() -> xr.Dataset:
    # scores around 50 so that gmean is defined even with noise
    c = eq.simulate_cube(n_models=3, n_languages=6, n_seeds=3, n_boot=20, rng=5)
    c["score"] = c.score + 50
    c["boot_score"] = c.boot_score + 50
    return c


@pytest.fixture
def resampled(cube) -> xr.Dataset:
    return eq.resample(cube, n_resamples=500, languages="bootstrap", rng=0)


REFERENCE = {
    "mean": lambda x: x.mean(axis=-1),
    "median": lambda x: np.median(x, axis=-1),
    "gmean": lambda x: stats.gmean(x, axis=-1),
    "trimmed": lambda x: stats.trim_mean(x, 0.2, axis=-1),
}


@pytest.mark.parametrize("how", list(REFERENCE))
def test_aggregates_match_reference(resampled, how):
    agg = eq.aggregate(resampled, how=how, trim=0.2)
    values = resampled.score.transpose("resample", "model", "language_slot").values
    np.testing.assert_allclose(agg.resampled.values, REFERENCE[how](values), rtol=1e-12)
    np.testing.assert_allclose(agg.observed.values, REFERENCE[how](resampled.observed.values),
                               rtol=1e-12)
    assert agg.attrs["how"] == how


def test_summary_statistics_and_interval(resampled):
    agg = eq.aggregate(resampled, confidence_level=0.9)
    dist = agg.resampled.values
    np.testing.assert_allclose(agg["mean"], dist.mean(axis=0))
    np.testing.assert_allclose(agg.sd, dist.std(axis=0, ddof=1))
    np.testing.assert_allclose(agg.ci.sel(ci_bound="lower"), np.quantile(dist, 0.05, axis=0))
    np.testing.assert_allclose(agg.ci.sel(ci_bound="upper"), np.quantile(dist, 0.95, axis=0))
    assert agg.ci.dims == ("model", "ci_bound")
    assert agg.ci.attrs == {"ci_kind": "percentile", "confidence_level": 0.9}
    for key in ("metric", "higher_is_better", "replication", "languages", "n_resamples"):
        assert agg.attrs[key] == resampled.attrs[key]


def test_callable_gets_languages_last(resampled):
    seen = []

    def spread(x: np.ndarray) -> np.ndarray:
        seen.append(x.shape)
        return x.max(axis=-1) - x.min(axis=-1)

    agg = eq.aggregate(resampled, how=spread)
    assert seen == [(500, 3, 6), (3, 6)]
    assert agg.attrs["how"] == "spread"
    np.testing.assert_allclose(agg.observed, np.ptp(resampled.observed.values, axis=-1))


def test_callable_on_a_plan(cube):
    kw = {"n_resamples": 2500, "languages": "bootstrap", "rng": 3}

    def top2(x: np.ndarray) -> np.ndarray:
        return np.sort(x, axis=-1)[..., -2:].mean(axis=-1)

    a = eq.aggregate(eq.resample(cube, lazy=True, **kw), how=top2)
    b = eq.aggregate(eq.resample(cube, **kw), how=top2)
    xr.testing.assert_identical(a, b)


def test_callable_wrong_shape(resampled):
    with pytest.raises(ValueError, match="the callable `how` must reduce the last"):
        eq.aggregate(resampled, how=lambda x: x)


def test_fixed_languages_sd_matches_closed_form(cube):
    # formulas.md s. 6: SE of the mean given these languages, sqrt(sum(s2/S + b2)) / L
    agg = eq.aggregate(eq.resample(cube, n_resamples=20_000, rng=1))
    expected = eq.variance_components(cube).se_mean_fixed.values
    np.testing.assert_allclose(agg.sd, expected, rtol=4 / np.sqrt(2 * 20_000))


def test_language_bootstrap_sd_matches_closed_form(cube):
    agg = eq.aggregate(eq.resample(cube, n_resamples=20_000, replication="none",
                                   languages="bootstrap", rng=1))
    ybar = cube.score.mean("seed")
    expected = (ybar.std("language", ddof=0) / np.sqrt(cube.sizes["language"])).values
    np.testing.assert_allclose(agg.sd, expected, rtol=4 / np.sqrt(2 * 20_000) + 0.01)


def test_plan_and_dataset_agree(cube):
    kw = {"n_resamples": 1500, "languages": "subsample", "n_languages": 4, "rng": 2}
    for how in ("mean", "gmean", "median"):
        a = eq.aggregate(eq.resample(cube, lazy=True, **kw), how=how)
        b = eq.aggregate(eq.resample(cube, **kw), how=how)
        xr.testing.assert_identical(a, b)


# --- errors ---------------------------------------------------------------------------------------

def test_gmean_rejects_non_positive(cube):
    low = cube.copy(deep=True)
    low["score"][0, 0, :] = [-1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match=r"`how='gmean'` needs positive scores; 1 observed"):
        eq.aggregate(eq.resample(low, n_resamples=10, replication="none"), how="gmean")
    near = eq.from_summary(pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"],
                                         "mean": [0.05, 0.07], "sd_seed": [1.0, 1.0],
                                         "sd_boot": [1.0, 1.0]}), n_seeds=3)
    with pytest.raises(ValueError, match=r"needs positive scores; \d+ resampled value.*"
                                         r"parametric noise can push"):
        eq.aggregate(eq.resample(near, n_resamples=10), how="gmean")
    with pytest.raises(ValueError, match=r"needs positive scores; \d+ resampled value"):
        eq.aggregate(eq.resample(near, n_resamples=10, lazy=True), how="gmean")


@pytest.fixture
def holey(cube) -> xr.Dataset:
    c = cube.copy(deep=True)
    c["score"][1, 2, :] = np.nan
    c["boot_score"][1, 2] = np.nan
    return c


def test_nan_raises_by_default(holey):
    rs = eq.resample(holey, n_resamples=20)
    with pytest.raises(CubeError, match=r"value\(s\) are NaN .*model='m1'.*`skipna=True`"):
        eq.aggregate(rs)
    seedless = holey.copy(deep=True)
    seedless["score"][1, 2, :] = 1.0                 # only some replicates are missing
    seedless["boot_score"][1, 2, 0, :] = 1.0
    with pytest.raises(CubeError, match=r"resampled value\(s\) are NaN.*position in its chunk"):
        eq.aggregate(eq.resample(seedless, n_resamples=20, replication="nonparametric",
                                 lazy=True))
    with pytest.raises(CubeError, match=r"resampled value\(s\) are NaN"):
        eq.aggregate(eq.resample(seedless, n_resamples=20, replication="nonparametric"))
    with pytest.raises(CubeError, match=r"observed value\(s\) are NaN"):
        eq.aggregate(eq.resample(holey, n_resamples=20, lazy=True))


@pytest.mark.parametrize("how", ["mean", "median", "gmean"])
def test_skipna_uses_available_languages(holey, how):
    rs = eq.resample(holey, n_resamples=20, rng=0)
    with pytest.warns(MissingDataWarning, match="'m1' over 5 of 6"):
        agg = eq.aggregate(rs, how=how, skipna=True)
    other = holey.drop_sel(language=holey.language.values[2]).isel(model=[1])
    expected = REFERENCE[how](other.score.mean("seed").values)
    np.testing.assert_allclose(agg.observed.sel(model="m1"), expected[0])
    assert not np.isnan(agg.resampled).any()


def test_skipna_over_unequal_languages_warns_and_the_caption_says_so():
    score = np.random.default_rng(0).normal(50.0, 3.0, (3, 4, 3))
    score[1, 2, :] = np.nan                             # 'gpt 4o' has no 'sw'
    cube = eq.from_arrays(score, models=["a", "gpt 4o", "c"],
                          languages=["de", "fr", "sw", "zh"])
    rs = eq.resample(cube, replication="nonparametric", languages="fixed", n_resamples=200,
                     rng=0)
    with pytest.warns(MissingDataWarning, match=r"fewer languages.*'gpt 4o' over 3 of 4\)"):
        agg = eq.aggregate(rs, skipna=True)
    assert "'gpt 4o' over 3 of 4" in agg.attrs["unequal_coverage"]
    assert "'a'" not in agg.attrs["unequal_coverage"]
    assert "'gpt 4o' over 3 of 4" in eq.leaderboard(agg).attrs["caption"]
    whole = cube.isel(language=[0, 1, 3])               # the same languages for all: silent
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agg = eq.aggregate(eq.resample(whole, replication="nonparametric", n_resamples=200,
                                         rng=0), skipna=True)
    assert "unequal_coverage" not in agg.attrs


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"how": "mode"}, ValueError, "`how` must be one of"),
    ({"confidence_level": 1.0}, ValueError, r"`confidence_level` must be in \(0, 1\)"),
    ({"trim": 0.5}, ValueError, r"`trim` must be in \[0, 0.5\)"),
    ({"skipna": "yes"}, TypeError, "`skipna` must be True or False"),
    ({"skipna": True, "how": "trimmed"}, ValueError, "`skipna=True` is not available"),
])
def test_validation(resampled, kwargs, error, match):
    with pytest.raises(error, match=match):
        eq.aggregate(resampled, **kwargs)


def test_cube_instead_of_resamples(cube):
    with pytest.raises(CubeError, match=r"pass the result of eq\.resample"):
        eq.aggregate(cube)
    with pytest.raises(TypeError, match=r"`resampled` must be the result of eq\.resample"):
        eq.aggregate(cube.score)


# --- calibration ----------------------------------------------------------------------------------

def _stacked_cube(gen: np.random.Generator, n_sets: int, n_lang: int, n_seeds: int,
                  n_boot: int, theta: np.ndarray, sigma_seed: float,
                  sigma_boot: float) -> xr.Dataset:
    """Many independent data sets as the 'models' of one cube (languages shared by name)."""
    shape = (n_sets, n_lang)
    score = (theta + gen.normal(0, sigma_boot, shape))[..., None] \
        + gen.normal(0, sigma_seed, (*shape, n_seeds))
    boot = score[..., None] + gen.normal(0, sigma_boot, (*shape, n_seeds, n_boot))
    return eq.from_arrays(score, boot)


def _coverage(agg: xr.Dataset, target: np.ndarray) -> int:
    lo, hi = agg.ci.sel(ci_bound="lower").values, agg.ci.sel(ci_bound="upper").values
    return int(((lo <= target) & (target <= hi)).sum())


@pytest.mark.slow
def test_coverage_fixed_languages_parametric():
    """Fixed languages: the interval targets the mean of these languages' true scores."""
    gen = np.random.default_rng(101)
    n, level = 1000, 0.9
    theta = gen.normal(0, 2.0, (n, 8))
    cube = _stacked_cube(gen, n, 8, 4, 30, theta, sigma_seed=1.0, sigma_boot=1.0)
    plan = eq.resample(cube, n_resamples=2000, rng=5, lazy=True)
    hits = _coverage(eq.aggregate(plan, confidence_level=level), theta.mean(axis=1))
    print(f"\nCALIBRATION | aggregate, resample parametric, languages fixed | coverage | "
          f"nominal {level:.3f} | measured {hits / n:.4f} | n {n}")
    assert abs(hits - n * level) <= 4 * np.sqrt(n * level * (1 - level))


@pytest.mark.slow
def test_coverage_language_bootstrap_population_mean():
    """Bootstrapped languages: the interval targets the population mean over languages."""
    gen = np.random.default_rng(102)
    n, level, n_lang = 1000, 0.9, 40
    theta = gen.normal(0, 2.0, (n, n_lang))          # population mean 0
    cube = _stacked_cube(gen, n, n_lang, 2, 10, theta, sigma_seed=0.5, sigma_boot=0.5)
    bound = 4 * np.sqrt(n * level * (1 - level))
    plan = eq.resample(cube, n_resamples=2000, replication="none", languages="bootstrap",
                       rng=6, lazy=True)
    hits = _coverage(eq.aggregate(plan, confidence_level=level), np.zeros(n))
    print(f"\nCALIBRATION | aggregate, resample none, languages bootstrap (population mean) | "
          f"coverage | nominal {level:.3f} | measured {hits / n:.4f} | n {n}")
    assert abs(hits - n * level) <= bound
    # with replication noise on top the interval is a little wider: at least nominal
    plan = eq.resample(cube, n_resamples=2000, languages="bootstrap", rng=6, lazy=True)
    hits = _coverage(eq.aggregate(plan, confidence_level=level), np.zeros(n))
    print(f"\nCALIBRATION | aggregate, resample parametric, languages bootstrap (conservative) "
          f"| coverage | nominal {level:.3f} | measured {hits / n:.4f} | n {n}")
    assert hits >= n * level - bound

"""Tests of eq.resample: shapes, pairing, noise, language draws, determinism, validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import evaluq as eq
from evaluq import resampling
from evaluq.errors import CubeError
from evaluq.resampling import RNG_BLOCK

MODES = [(rep, lang) for rep in ("parametric", "nonparametric", "none")
         for lang in ("fixed", "bootstrap", "subsample")]
# "nonparametric" alone is the default seeds="bootstrap"; "nonparametric/<seeds>" the others
ALL_MODES = MODES + [(f"nonparametric/{seeds}", lang) for seeds in ("one", "rescaled")
                     for lang in ("fixed", "bootstrap", "subsample")]


def _kw(rep: str, lang: str, n: int = 1200, rng: int = 3) -> dict:
    rep, _, seeds = rep.partition("/")
    kw = {"replication": rep, "languages": lang, "n_resamples": n, "rng": rng,
          "n_languages": 3 if lang == "subsample" else None}
    return {**kw, "seeds": seeds} if seeds else kw


@pytest.fixture
def small_cube() -> xr.Dataset:
    return eq.simulate_cube(n_models=3, n_languages=5, n_seeds=3, n_boot=7, rng=11)


# --- structure ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("rep", "lang"), ALL_MODES)
def test_dims_and_observed(small_cube, rep, lang):
    rs = eq.resample(small_cube, **_kw(rep, lang, n=10))
    slot = "language" if lang == "fixed" else "language_slot"
    k = 3 if lang == "subsample" else 5
    assert rs.score.dims == ("resample", "model", slot)
    assert rs.score.shape == (10, 3, k)
    np.testing.assert_allclose(rs.observed, small_cube.score.mean("seed").values)
    assert rs.attrs["replication"] == rep.partition("/")[0]
    assert rs.attrs.get("seeds") == ({"nonparametric": "bootstrap", "nonparametric/one": "one",
                                      "nonparametric/rescaled": "rescaled"}.get(rep))
    assert rs.attrs["languages"] == lang
    assert rs.attrs["higher_is_better"] == 1
    assert ("drawn_language" in rs) == (lang != "fixed")
    assert ("drawn_seed" in rs) == (rep == "nonparametric/one")
    assert ("drawn_seed_count" in rs) == (rep in ("nonparametric", "nonparametric/rescaled"))
    assert ("drawn_bootstrap" in rs) == rep.startswith("nonparametric")
    if "drawn_seed_count" in rs:
        assert rs.drawn_seed_count.dims == ("resample", slot, "seed")
        assert rs.drawn_seed_count.dtype == np.uint8
        assert (rs.drawn_seed_count.sum("seed") == 3).all()


def test_none_fixed_is_the_observed(small_cube):
    rs = eq.resample(small_cube, n_resamples=4, replication="none")
    for r in range(4):
        np.testing.assert_array_equal(rs.score[r], rs.observed)


@pytest.mark.parametrize("rep", ["parametric", "nonparametric", "none"])
def test_same_languages_for_every_model(small_cube, rep):
    rs = eq.resample(small_cube, **_kw(rep, "bootstrap", n=50))
    if rep == "none":
        # each slot holds the drawn language's observed score, for every model
        expected = rs.observed.sel(language=rs.drawn_language)
        np.testing.assert_array_equal(rs.score.transpose("resample", "model", "language_slot"),
                                      expected.transpose("resample", "model", "language_slot"))
    else:
        assert rs.drawn_language.dims == ("resample", "language_slot")   # no model dim


def test_nonparametric_draw_is_shared_by_all_models(small_cube):
    rs = eq.resample(small_cube, **_kw("nonparametric/one", "bootstrap", n=40))
    boot = small_cube.boot_score
    expected = boot.sel(language=rs.drawn_language, seed=rs.drawn_seed,
                        bootstrap=rs.drawn_bootstrap)
    np.testing.assert_array_equal(expected.transpose("resample", "model", "language_slot"),
                                  rs.score)


def test_nonparametric_spread_is_that_of_one_seed(rng):
    # documented behaviour (as in the paper): one (seed, replicate) per draw, so the spread per
    # language is sqrt(sigma_seed^2 + sigma_boot^2), not the seed-mean's sigma_seed^2 / S
    cube = eq.simulate_cube(n_models=1, n_languages=2, n_seeds=40, n_boot=400, sigma_seed=1.0,
                            sigma_boot=1.0, rng=rng)
    rs = eq.resample(cube, n_resamples=20_000, replication="nonparametric", seeds="one", rng=0)
    flat = cube.boot_score.stack(draw=("seed", "bootstrap"))
    np.testing.assert_allclose(rs.score.std("resample").values, flat.std("draw").values,
                               rtol=4 / np.sqrt(2 * 20_000))
    np.testing.assert_allclose(rs.score.std("resample").values, np.sqrt(2.0), rtol=0.15)


def test_subsample_draws_without_replacement(small_cube):
    rs = eq.resample(small_cube, n_resamples=300, replication="none", languages="subsample",
                     n_languages=4, rng=0)
    drawn = rs.drawn_language.values
    assert all(len(set(row)) == 4 for row in drawn)
    # every language is left out about equally often (1/5 of the resamples)
    counts = pd.Series(drawn.ravel()).value_counts()
    assert counts.min() > 300 * 4 / 5 - 4 * np.sqrt(300 * 0.8 * 0.2)


def test_bootstrap_draws_with_replacement_uniformly(small_cube):
    rs = eq.resample(small_cube, n_resamples=2000, replication="none", languages="bootstrap",
                     rng=0)
    drawn = rs.drawn_language.values
    assert np.mean([len(set(row)) < 5 for row in drawn[:200]]) > 0.5   # repeats happen
    counts = pd.Series(drawn.ravel()).value_counts()
    n = drawn.size
    assert (np.abs(counts - n / 5) < 4 * np.sqrt(n * 0.2 * 0.8)).all()


def test_bootstrap_n_languages(small_cube):
    rs = eq.resample(small_cube, n_resamples=5, languages="bootstrap", n_languages=9)
    assert rs.sizes["language_slot"] == 9


# --- parametric noise -----------------------------------------------------------------------------

def test_parametric_noise_sd_matches_formula(rng):
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=4, n_boot=50, rng=rng)
    rs = eq.resample(cube, n_resamples=20_000, rng=1)
    vc = eq.variance_components(cube)
    expected = np.sqrt(vc.sigma_seed**2 / vc.n_seeds + vc.sigma_boot**2).values
    sd = rs.score.std("resample", ddof=1).values
    # SD of a normal sample: relative SE about 1/sqrt(2n)
    np.testing.assert_allclose(sd, expected, rtol=4 / np.sqrt(2 * 20_000))
    mean = rs.score.mean("resample").values
    np.testing.assert_allclose(mean, rs.observed, atol=4 * expected.max() / np.sqrt(20_000))


def test_parametric_noise_is_fresh_in_every_resample(small_cube):
    # the multilingual paper's tool drew the noise once instead of B times (formulas.md s. 7)
    rs = eq.resample(small_cube, n_resamples=3000, rng=0)
    values = rs.score.values.reshape(3000, -1)
    assert len(np.unique(values[:, 0])) == 3000
    # consecutive resamples are uncorrelated
    dev = values - values.mean(axis=0)
    lag1 = (dev[1:] * dev[:-1]).mean(axis=0) / dev.var(axis=0)
    assert np.all(np.abs(lag1) < 4 / np.sqrt(3000))
    agg = eq.aggregate(rs)
    assert float(agg.sd.min()) > 0


def test_parametric_noise_is_independent_across_models(small_cube):
    rs = eq.resample(small_cube, n_resamples=5000, rng=0)
    noise = (rs.score - rs.observed).isel(language=0).values        # (resample, model)
    corr = np.corrcoef(noise.T)[0, 1]
    assert abs(corr) < 4 / np.sqrt(5000)


def test_parametric_summary_cube_uses_sd_columns():
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "language": ["x", "y", "x", "y"],
                       "mean": [1.0, 2.0, 3.0, 4.0], "sd_seed": [0.4, 0.2, 0.4, 0.2],
                       "sd_boot": [0.3, 0.1, 0.3, 0.1]})
    cube = eq.from_summary(df, n_seeds=4)
    rs = eq.resample(cube, n_resamples=20_000, rng=2)
    expected = np.sqrt(np.array([0.4, 0.2]) ** 2 / 4 + np.array([0.3, 0.1]) ** 2)
    np.testing.assert_allclose(rs.score.std("resample").values, np.tile(expected, (2, 1)),
                               rtol=4 / np.sqrt(2 * 20_000))


# --- determinism and invariance -------------------------------------------------------------------

@pytest.mark.parametrize(("rep", "lang"), ALL_MODES)
def test_same_rng_same_numbers_any_chunking(small_cube, rep, lang):
    a = eq.resample(small_cube, chunk_size=1000, **_kw(rep, lang, n=2500))
    b = eq.resample(small_cube, chunk_size=7000, **_kw(rep, lang, n=2500))
    c = eq.resample(small_cube, chunk_size=2000, **_kw(rep, lang, n=1500))
    xr.testing.assert_identical(a, b)
    xr.testing.assert_identical(a.isel(resample=slice(0, 1500)).drop_attrs(),
                                c.drop_attrs())
    d = eq.resample(small_cube, **_kw(rep, lang, n=2500, rng=4))
    if rep != "none" or lang != "fixed":
        assert not np.array_equal(a.score.values, d.score.values)


def test_generator_and_seedsequence_rng(small_cube):
    a = eq.resample(small_cube, n_resamples=20, rng=np.random.default_rng(5))
    b = eq.resample(small_cube, n_resamples=20, rng=np.random.default_rng(5))
    xr.testing.assert_identical(a, b)
    eq.resample(small_cube, n_resamples=20, rng=np.random.SeedSequence(5))


@pytest.mark.parametrize(("rep", "lang"), ALL_MODES)
def test_lazy_resamples_match(small_cube, rep, lang):
    lazy = eq.resample(small_cube, lazy=True, chunk_size=1000, **_kw(rep, lang, n=2100))
    assert isinstance(lazy, xr.Dataset)
    assert lazy.score.chunks[0] == (1000, 1000, 100)
    full = eq.resample(small_cube, **_kw(rep, lang, n=2100))
    assert set(lazy.data_vars) == set(full.data_vars)
    xr.testing.assert_identical(lazy.compute(), full)
    xr.testing.assert_identical(eq.aggregate(lazy), eq.aggregate(full))


def test_resample_plan_is_deprecated(small_cube):
    with pytest.warns(DeprecationWarning, match="ResamplePlan is deprecated"):
        assert eq.ResamplePlan is not None
    assert "ResamplePlan" not in eq.__all__


@pytest.mark.parametrize(("rep", "lang"), ALL_MODES)
def test_invariant_to_order_of_models_languages_seeds_replicates(small_cube, rep, lang):
    perm = small_cube.isel(model=[2, 0, 1], language=[4, 1, 3, 0, 2], seed=[2, 1, 0],
                           bootstrap=[3, 6, 0, 1, 5, 2, 4])
    a = eq.resample(small_cube, **_kw(rep, lang))
    b = eq.resample(perm, **_kw(rep, lang))
    assert list(b.model.values) == ["m2", "m0", "m1"]           # the cube's order is kept
    xr.testing.assert_identical(a, b.sel(model=a.model, language=a.language))
    agg_a = eq.aggregate(a)
    agg_b = eq.aggregate(eq.resample(perm, lazy=True, **_kw(rep, lang)))
    xr.testing.assert_allclose(agg_a, agg_b.sel(model=agg_a.model), rtol=1e-12)


@settings(max_examples=15, deadline=None)
@given(st.permutations(range(5)), st.permutations(range(3)), st.sampled_from(ALL_MODES))
def test_invariant_to_language_and_model_order(lang_order, model_order, mode):
    cube = eq.simulate_cube(n_models=3, n_languages=5, n_seeds=2, n_boot=4, rng=8)
    perm = cube.isel(language=list(lang_order), model=list(model_order))
    a = eq.aggregate(eq.resample(cube, **_kw(*mode, n=300)))
    b = eq.aggregate(eq.resample(perm, **_kw(*mode, n=300)))
    xr.testing.assert_allclose(a, b.sel(model=a.model), rtol=1e-12)
    lazy = eq.aggregate(eq.resample(perm, lazy=True, **_kw(*mode, n=300)))
    xr.testing.assert_identical(lazy, b)


def _long_table(cube: xr.Dataset) -> pd.DataFrame:
    full = cube.score.to_dataframe().reset_index()
    full["bootstrap"] = np.nan
    boot = cube.boot_score.to_dataframe().reset_index().rename(columns={"boot_score": "score"})
    return pd.concat([full, boot], ignore_index=True)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(ALL_MODES))
def test_invariant_to_row_order(seed, mode):
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=2, n_boot=5, rng=1)
    table = _long_table(cube)
    shuffled = table.sample(frac=1.0, random_state=np.random.default_rng(seed))
    kw = {"seed": "seed", "bootstrap": "bootstrap", "score": "score"}
    a = eq.resample(eq.from_long(table, **kw), **_kw(*mode, n=200))
    b = eq.resample(eq.from_long(shuffled, **kw), **_kw(*mode, n=200))
    xr.testing.assert_identical(a, b)


# --- missing cells --------------------------------------------------------------------------------

def test_missing_cell_stays_nan(small_cube):
    cube = small_cube.copy(deep=True)
    cube["score"][0, 1, :] = np.nan
    cube["boot_score"][0, 1, :, :] = np.nan
    rs = eq.resample(cube, n_resamples=5)
    assert np.isnan(rs.score[:, 0, 1]).all()
    assert not np.isnan(rs.score[:, 1:]).any()


# --- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"n_resamples": 0}, ValueError, "`n_resamples` must be >= 1"),
    ({"n_resamples": 1.5}, TypeError, "`n_resamples` must be an integer"),
    ({"replication": "gauss"}, ValueError, "`replication` must be one of"),
    ({"languages": "all"}, ValueError, "`languages` must be one of"),
    ({"n_languages": 3}, ValueError, "`n_languages` must be None with languages='fixed'"),
    ({"languages": "subsample"}, ValueError, "`n_languages` is required"),
    ({"languages": "subsample", "n_languages": 5}, ValueError, "`n_languages` must be <= 4"),
    ({"languages": "bootstrap", "n_languages": 0}, ValueError, "`n_languages` must be >= 1"),
    ({"chunk_size": 0}, ValueError, "`chunk_size` must be >= 1"),
    ({"rng": "seed"}, TypeError, "`rng` must be an int"),
    ({"rng": -1}, ValueError, "`rng` must be a non-negative"),
])
def test_validation(small_cube, kwargs, error, match):
    with pytest.raises(error, match=match):
        eq.resample(small_cube, **kwargs)


def test_subsample_needs_two_languages():
    cube = eq.simulate_cube(n_models=2, n_languages=1, rng=0)
    with pytest.raises(ValueError, match="needs at least 2 languages"):
        eq.resample(cube, languages="subsample", n_languages=1)


def test_not_a_cube():
    with pytest.raises(CubeError, match=r"must be an xarray\.Dataset"):
        eq.resample(np.zeros((2, 3, 4)))


def test_nonparametric_needs_boot_score_or_two_seeds():
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=1, n_boot=None, rng=0)
    with pytest.raises(CubeError, match=r"`replication='nonparametric'` needs 'boot_score' or "
                                        r"at least 2 seeds"):
        eq.resample(cube, replication="nonparametric")


def test_parametric_needs_boot_sd():
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_boot=None, rng=0)
    with pytest.raises(CubeError, match="needs the boot-to-boot SD"):
        eq.resample(cube)
    eq.resample(cube, replication="none", languages="bootstrap", n_resamples=5)


def test_parametric_needs_two_seeds():
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=1, n_boot=10, rng=0)
    with pytest.raises(CubeError, match="a seed SD needs at least 2 seeds"):
        eq.resample(cube)


def test_summary_cube_needs_both_sds():
    df = pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"], "mean": [1.0, 2.0],
                       "sd_seed": [0.1, 0.1]})
    cube = eq.from_summary(df, sd_boot=None, n_seeds=3)
    with pytest.raises(CubeError, match="needs 'sd_boot' in a summary-only cube"):
        eq.resample(cube)
    with pytest.raises(CubeError, match="a summary-only cube has neither"):
        eq.resample(cube, replication="nonparametric")



def test_one_run_summary_cube_redraws_the_test_set_noise_and_says_what_is_left_out():
    """A table of one run per cell with its standard error (lm-eval's results files, a
    leaderboard): before, the parametric replication needed an `sd_seed` column, so the
    CLI passed a column of zeros and the variance table showed sigma_seed 0. Now the
    standard error alone is redrawn, the attrs say the run-to-run noise is not included,
    and sigma_seed is NaN with its reason. With more than one run per mean, sd_seed is
    still required."""
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "language": ["x", "y", "x", "y"],
                       "mean": [1.0, 2.0, 3.0, 4.0], "sd_boot": [0.3, 0.1, 0.3, 0.1]})
    cube = eq.from_summary(df, sd_seed=None, n_seeds=1)
    rs = eq.resample(cube, n_resamples=20_000, rng=2)
    np.testing.assert_allclose(rs.score.std("resample").values,
                               np.tile([0.3, 0.1], (2, 1)), rtol=4 / np.sqrt(2 * 20_000))
    assert "run-to-run (seed) noise is NOT included" in rs.attrs["test_set_noise"]
    zeros = eq.from_summary(df.assign(sd_seed=0.0), n_seeds=1)
    np.testing.assert_array_equal(rs.score.values,
                                  eq.resample(zeros, n_resamples=20_000, rng=2).score.values)
    components = eq.variance_components(cube)
    assert components.sigma_seed.isnull().all()
    assert "one run measures no run-to-run spread" in components.sigma_seed.attrs["nan_reason"]
    assert components.se_mean_fixed.isnull().all()
    several = eq.from_summary(df, sd_seed=None, n_seeds=3)
    with pytest.raises(CubeError, match="needs 'sd_seed' in a summary-only cube"):
        eq.resample(several)


# --- dask -----------------------------------------------------------------------------------------

def test_dask_none_fixed_stays_lazy(small_cube):
    pytest.importorskip("dask")
    lazy = small_cube.chunk({"model": 1, "language": 2})
    rs = eq.resample(lazy, n_resamples=6, replication="none")
    assert rs.score.chunks is not None
    agg = eq.aggregate(rs)                                # no manual rechunk needed
    eager = eq.aggregate(eq.resample(small_cube, n_resamples=6, replication="none"))
    np.testing.assert_allclose(agg.resampled, eager.resampled)
    np.testing.assert_allclose(agg.observed, eager.observed)


def test_dask_cube_other_modes_are_loaded(small_cube):
    pytest.importorskip("dask")
    rs = eq.resample(small_cube.chunk({"model": 1}), n_resamples=30, rng=0)
    xr.testing.assert_identical(rs, eq.resample(small_cube, n_resamples=30, rng=0))


def test_block_size_constant():
    assert RNG_BLOCK == 1000
    assert resampling._block_size(6, 61) == 1000
    assert resampling._block_size(6, 20_833) * 6 * 20_833 <= resampling.BLOCK_VALUES
    assert resampling._block_size(10**6, 10**3) == 1


@pytest.mark.parametrize("kw", [
    {"replication": "parametric"},
    {"replication": "nonparametric", "languages": "bootstrap"},
    {"replication": "none", "languages": "subsample", "n_languages": 3},
])
def test_wide_cubes_draw_smaller_blocks_whatever_the_chunking(small_cube, monkeypatch, kw):
    """A cube with many cells per resample draws fewer resamples per block (memory stays
    bounded); the numbers still do not depend on chunk_size or laziness, and the first n
    resamples of a longer run are a run of n."""
    pytest.importorskip("dask")
    cells = small_cube.sizes["model"] * (kw.get("n_languages") or small_cube.sizes["language"])
    monkeypatch.setattr(resampling, "BLOCK_VALUES", 37 * cells)     # 37 resamples a block
    assert resampling._block_size(small_cube.sizes["model"], cells // small_cube.sizes["model"]) \
        == 37
    eager = eq.resample(small_cube, n_resamples=200, rng=3, **kw)
    for chunk in (37, 80, 1000):
        lazy = eq.resample(small_cube, n_resamples=200, rng=3, lazy=True, chunk_size=chunk, **kw)
        assert lazy.score.chunks[0][0] == min(-(-chunk // 37) * 37, 200)
        xr.testing.assert_identical(lazy.compute(), eager)
    short = eq.resample(small_cube, n_resamples=50, rng=3, **kw)
    xr.testing.assert_identical(short.score, eager.score.isel(resample=slice(50)))


def test_one_resample_is_refused(small_cube):
    """Issue 10: a 95% interval of width zero came back from one resample."""
    with pytest.raises(ValueError, match="`n_resamples` must be >= 2"):
        eq.resample(small_cube, n_resamples=1)
    agg = eq.aggregate(eq.resample(small_cube, n_resamples=2, rng=0))
    assert np.isfinite(agg.ci).all()


# --- bounded metrics (issue 10, finding 5) --------------------------------------------------------

def _near_zero_summary(bounds=(0.0, 100.0)):
    df = pd.DataFrame({"model": ["a", "b", "c"], "language": ["x"] * 3,
                       "mean": [0.6, 5.0, 40.0], "sd_seed": [0.5, 0.5, 0.5],
                       "sd_boot": [0.4, 0.8, 1.0]})
    return eq.from_summary(df, n_seeds=3, bounds=bounds, outlier_threshold=None)


def test_parametric_draws_respect_declared_bounds():
    cube = _near_zero_summary()
    rs = eq.resample(cube, n_resamples=100_000, rng=0)
    assert float(rs.score.min()) > 0.0
    assert float(rs.score.max()) <= 100.0
    assert "truncated to the metric's bounds 0..100" in rs.attrs["test_set_noise"]
    agg = eq.aggregate(rs, how="gmean")                     # used to raise on draws <= 0
    assert np.isfinite(agg.ci).all()
    # unbounded: the same cube meets scores <= 0 and gmean refuses them
    free = eq.resample(_near_zero_summary(None), n_resamples=100_000, rng=0)
    assert float(free.score.min()) < 0.0
    with pytest.raises(ValueError, match="needs positive scores"):
        eq.aggregate(free, how="gmean")


def test_truncated_draws_follow_the_truncated_normal():
    cube = _near_zero_summary()
    rs = eq.resample(cube, n_resamples=20_000, rng=3)
    scale = np.sqrt(0.5**2 / 3 + 0.4**2)
    a = (0.0 - 0.6) / scale
    draws = rs.score.sel(model="a", language="x").values
    ks = stats.kstest(draws, stats.truncnorm(a, (100 - 0.6) / scale, loc=0.6, scale=scale).cdf)
    assert ks.pvalue > 1e-3
    # far from a bound the draws are the plain normal ones in distribution
    far = rs.score.sel(model="c", language="x").values
    assert np.mean(far) == pytest.approx(40.0, abs=0.05)


def test_rescaled_draws_stay_within_declared_bounds():
    score = np.array([[[0.0, 0.02, 0.9]], [[0.5, 0.6, 0.7]]])          # 2 models, 3 seeds
    boot = score[..., None] + np.array([0.0, 0.01, 0.02])
    cube = eq.from_arrays(np.clip(score, 0, 1), np.clip(boot, 0, 1), bounds=(0, 1),
                          outlier_threshold=None)
    rs = eq.resample(cube, n_resamples=2000, replication="nonparametric", seeds="rescaled",
                     rng=0)
    assert float(rs.score.min()) >= 0.0
    assert float(rs.score.max()) <= 1.0
    free = eq.resample(eq.from_arrays(np.clip(score, 0, 1), np.clip(boot, 0, 1),
                                      outlier_threshold=None),
                       n_resamples=2000, replication="nonparametric", seeds="rescaled", rng=0)
    assert float(free.score.min()) < 0.0            # without bounds the stretch leaves [0, 1]


def test_a_run_with_rng_none_is_repeated_by_its_recorded_seed(small_cube):
    """``rng=None`` recorded ``rng_entropy`` 'so that any run can be repeated', but neither
    it nor a SeedSequence of it repeated the run (it is derived from the rng). The fresh seed
    is recorded as ``rng_seed``: passed back as ``rng`` it gives the same resamples."""
    first = eq.resample(small_cube, replication="nonparametric", n_resamples=64, rng=None)
    seed = int(first.attrs["rng_seed"])
    again = eq.resample(small_cube, replication="nonparametric", n_resamples=64, rng=seed)
    xr.testing.assert_identical(again.drop_attrs(), first.drop_attrs())
    assert again.attrs["rng_entropy"] == first.attrs["rng_entropy"]
    assert "rng_seed" not in again.attrs                     # the user's own seed is theirs
    other = eq.resample(small_cube, replication="nonparametric", n_resamples=64, rng=None)
    assert other.attrs["rng_seed"] != first.attrs["rng_seed"]


# --- a cube combined by hand after loading: the scale check (user sweep, finding 1) ------------

def _two_scales() -> tuple[xr.Dataset, xr.Dataset]:
    """Three models in fractions and one in percentages, each loaded on its own (no warning:
    each file is on one scale), with 2 seeds and 3 bootstrap replicates."""
    gen = np.random.default_rng(4)
    frac = gen.uniform(0.55, 0.85, (3, 4, 2))
    pct = 100 * gen.uniform(0.55, 0.85, (1, 4, 2))
    jitter = np.array([0.0, 0.01, -0.01])
    a = eq.from_arrays(frac, frac[..., None] + jitter, models=["a", "b", "c"],
                       languages=["w", "x", "y", "z"])
    b = eq.from_arrays(pct, pct[..., None] + 100 * jitter, models=["p"],
                       languages=["w", "x", "y", "z"])
    return a, b


def test_resample_and_aggregate_warn_on_a_cube_combined_across_scales():
    """``xr.concat`` of a cube in fractions and one in percentages was resampled and
    aggregated silently (only the loaders and the report checked the scale): both warn now,
    with the loaders' rule (``scale_findings``: model p), once per call, not per resample."""
    from evaluq._scale import scale_findings

    a, b = _two_scales()
    cube = xr.concat([a, b], dim="model")
    findings = scale_findings(cube.score)
    assert len(findings) == 1
    assert findings[0].startswith("model p looks like another scale")
    for replication in ("nonparametric", "parametric", "none"):
        with pytest.warns(eq.errors.ScaleWarning) as caught:
            rs = eq.resample(cube, n_resamples=3000, replication=replication, rng=0,
                             chunk_size=1000)
        assert [str(w.message) for w in caught] == [
            f"{findings[0]}. Set `attrs['scale_check'] = 0` on the cube (or on its resamples) "
            f"to silence this check once the scores are checked"]
        with pytest.warns(eq.errors.ScaleWarning, match="model p looks like another") as again:
            eq.aggregate(rs)
        assert len(again) == 1
    lazy = eq.resample(cube.assign_attrs(scale_check=0), n_resamples=2000, rng=0, lazy=True)
    assert lazy.attrs["scale_check"] == 0              # copied: aggregate stays silent too
    eq.aggregate(lazy)
    # resamples of each cube, combined by hand, are caught by aggregate
    parts = [eq.resample(c, n_resamples=50, rng=0) for c in (a, b)]
    with pytest.warns(eq.errors.ScaleWarning, match="model p looks like another"):
        eq.aggregate(xr.concat(parts, dim="model"))


def test_the_scale_check_switched_off_at_loading_stays_off():
    """A loader's ``outlier_threshold=None`` (the user checked the scores) is recorded as
    ``attrs['scale_check'] = 0``; resample and aggregate honour it, and the report (which
    checks the scale on its page, ``scale_check=``) does not warn twice through them."""
    a, b = _two_scales()
    mixed = np.concatenate([a.score.values, b.score.values])
    checked = eq.from_arrays(mixed, models=["a", "b", "c", "p"], outlier_threshold=None)
    assert checked.attrs["scale_check"] == 0
    assert "scale_check" not in a.attrs
    eq.aggregate(eq.resample(checked, n_resamples=100, replication="nonparametric", rng=0))
    summary = eq.from_summary(
        pd.DataFrame({"model": ["a", "b", "c"], "language": "x", "mean": [0.6, 0.7, 65.0]}),
        sd_seed=None, sd_boot=None, n_seeds=1, outlier_threshold=None)
    assert summary.attrs["scale_check"] == 0
    cube = xr.concat([a, b], dim="model")
    with pytest.warns(eq.errors.ScaleWarning) as caught:
        eq.report(cube, None, n_resamples=50, rng=0, progress=False)
    assert len(caught) == 1
    assert "(scale_check=False silences this check)" in str(caught[0].message)
    eq.report(cube, None, n_resamples=50, rng=0, progress=False, scale_check=False)


def test_a_cell_without_an_sd_is_named_by_its_plain_labels():
    """`replication='parametric'` named the cell lacking an SD as numpy printed it
    (np.int64(5)): now as written."""
    df = pd.DataFrame({"model": [5, 6], "language": [0, 0], "mean": [0.5, 0.6],
                       "sd_seed": [np.nan, 0.02], "sd_boot": [0.01, 0.01]})
    with pytest.raises(CubeError, match=r"for example model 5, language 0 \(a seed SD"):
        eq.resample(eq.from_summary(df, n_seeds=3), n_resamples=10)


def test_one_seed_with_replicates_is_pointed_to_the_nonparametric_resampling():
    """A cube of one seed with bootstrap replicates (eq.from_predictions makes them) cannot
    be resampled parametrically (no seed SD): the refusal named only replication='none',
    which drops the replicates' test-set noise, not 'nonparametric', which redraws them."""
    gen = np.random.default_rng(2)
    targets = gen.integers(0, 2, 60)
    cube = eq.from_predictions(targets, {"a": gen.integers(0, 2, 60),
                                         "b": gen.integers(0, 2, 60)},
                               metric="accuracy", n_boot=50, rng=0)
    assert cube.sizes["seed"] == 1
    with pytest.raises(CubeError, match=r"a seed SD needs at least 2 seeds\).*"
                                        r"replication='nonparametric' \(the cube's bootstrap "
                                        r"replicates.*or replication='none'"):
        eq.resample(cube, n_resamples=10)
    rs = eq.resample(cube, n_resamples=10, replication="nonparametric", rng=0)
    assert rs.attrs["test_set_noise"].startswith("included")
    no_boot = cube.drop_vars(["boot_score", "bootstrap"])
    with pytest.raises(CubeError, match="no 'boot_score'"):
        eq.resample(no_boot, n_resamples=10)

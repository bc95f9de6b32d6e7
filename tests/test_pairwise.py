"""Tests of eq.pairwise_differences / pairwise_by_language: definitions, adjustments, pairing,
null calibration."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from statsmodels.stats.multitest import multipletests

import evaluq as eq
from evaluq._kernels import benjamini_hochberg as _bh
from evaluq._kernels import holm as _holm
from evaluq.errors import CubeError
from evaluq.pairwise import _difference_stats


@pytest.fixture
def aggregated() -> xr.Dataset:
    cube = eq.simulate_cube(n_models=4, model_means=[0.0, 0.3, 1.0, 3.0], n_languages=6,
                            sigma_between=0.5, rng=7)
    return eq.aggregate(eq.resample(cube, n_resamples=999, languages="bootstrap", rng=1))


def test_row_minus_column(aggregated):
    pw = eq.pairwise_differences(aggregated, confidence_level=0.9)
    agg = aggregated.resampled.values
    obs = aggregated.observed.values
    assert pw.observed.dims == ("model", "model_b")
    for i in range(4):
        for j in range(4):
            d = agg[:, i] - agg[:, j]
            assert pw.observed[i, j] == obs[i] - obs[j]
            np.testing.assert_allclose(pw["mean"][i, j], d.mean())
            np.testing.assert_allclose(pw.ci[i, j], np.quantile(d, [0.05, 0.95]))
            if i == j:
                assert np.isnan(pw.p_value[i, j])
                assert pw.sd[i, j] == 0
                continue
            np.testing.assert_allclose(pw.sd[i, j], d.std(ddof=1))
            np.testing.assert_allclose(pw.p_greater[i, j], (d > 0).mean())
            np.testing.assert_allclose(pw.z[i, j], (obs[i] - obs[j]) / d.std(ddof=1))
            p = min(1.0, 2 * (min((d <= 0).sum(), (d >= 0).sum()) + 1) / (999 + 1))
            np.testing.assert_allclose(pw.p_value[i, j], p)
    np.testing.assert_allclose(pw.observed, -pw.observed.T)
    np.testing.assert_allclose(pw.p_value, pw.p_value.T)
    assert pw.attrs["difference"] == "model minus model_b (row minus column)"
    assert "effect size" in pw.z.attrs["description"]


def test_holm_and_bh_match_statsmodels(aggregated):
    pw = eq.pairwise_differences(aggregated)
    iu = np.triu_indices(4, k=1)
    p = pw.p_value.values[iu]
    for key, method in (("p_holm", "holm"), ("p_bh", "fdr_bh")):
        expected = multipletests(p, method=method)[1]
        np.testing.assert_allclose(pw[key].values[iu], expected)
        np.testing.assert_allclose(pw[key].values[iu[::-1]], expected)


@pytest.mark.parametrize("seed", range(5))
def test_adjustment_kernels_match_statsmodels(seed):
    gen = np.random.default_rng(seed)
    p = np.round(gen.uniform(0, 0.2, size=(3, 12)), 2)          # ties included
    for kernel, method in ((_holm, "holm"), (_bh, "fdr_bh")):
        got = kernel(p)
        for row in range(3):
            np.testing.assert_allclose(got[row], multipletests(p[row], method=method)[1])


def test_verdict_follows_orientation(aggregated):
    pw = eq.pairwise_differences(aggregated)
    assert int(pw.verdict.sel(model="m3", model_b="m0")) == 1
    assert int(pw.verdict.sel(model="m0", model_b="m3")) == -1
    flipped = eq.pairwise_differences(aggregated, higher_is_better=False)
    assert int(flipped.verdict.sel(model="m3", model_b="m0")) == -1
    np.testing.assert_array_equal(flipped.observed, pw.observed)


def test_pairwise_table(aggregated):
    table = eq.pairwise_table(eq.pairwise_differences(aggregated))
    assert len(table) == 12
    assert list(table.columns) == ["observed", "mean", "sd", "lower", "upper", "p_greater", "z",
                                   "p_value", "p_holm", "p_bh", "verdict"]
    assert table.index.names == ["model", "model_b"]


def _check_unique(full, table, sign):
    """Each unordered pair once, better model first, sorted by advantage; rows as in full."""
    pairs = [frozenset(ix[:2]) for ix in table.index]
    assert len(pairs) == len(set(pairs)) == len(full) // 2
    assert (sign * table["observed"] >= 0).all()
    assert set(table["verdict"]) <= {0, 1}
    assert np.all(np.diff(sign * table["observed"].to_numpy()) <= 0)
    pd.testing.assert_frame_equal(table, full.loc[table.index])


def test_pairwise_table_unique(aggregated):
    pw = eq.pairwise_differences(aggregated)
    full = eq.pairwise_table(pw)
    table = eq.pairwise_table(pw, unique=True)
    assert list(table.columns) == list(full.columns)
    _check_unique(full, table, 1)
    # model_means 0, 0.3, 1, 3: m3 is ahead of everyone, the largest gap first
    assert table.index[0] == ("m3", "m0")
    assert all(ix[0] == "m3" for ix in table.index[:3])
    assert pw.attrs["higher_is_better"] == 1
    # lower is better: the same pairs, the other way round (observed <= 0, verdict 0 or 1)
    pw_low = eq.pairwise_differences(aggregated, higher_is_better=False)
    assert pw_low.attrs["higher_is_better"] == 0
    low = eq.pairwise_table(pw_low, unique=True)
    _check_unique(eq.pairwise_table(pw_low), low, -1)
    assert low.index[0] == ("m0", "m3")
    assert {(b, a) for a, b in low.index} == set(table.index)


def test_pairwise_table_unique_ties_keep_model_order():
    cube = eq.simulate_cube(n_models=3, n_languages=4, rng=3)
    cube["score"][1] = cube["score"][0]  # m1 identical to m0 on every language
    cube["boot_score"][1] = cube["boot_score"][0]
    pw = eq.pairwise_differences(eq.aggregate(eq.resample(cube, n_resamples=100, rng=0)))
    table = eq.pairwise_table(pw, unique=True)
    assert len(table) == 3
    assert ("m0", "m1") in table.index
    assert ("m1", "m0") not in table.index
    assert table.loc[("m0", "m1"), "observed"] == 0


def test_pairwise_table_unique_by_language(rng):
    cube = eq.simulate_cube(n_models=3, n_languages=4, rng=rng)
    pl = eq.pairwise_by_language(eq.resample(cube, n_resamples=200, rng=2))
    full = eq.pairwise_table(pl)
    table = eq.pairwise_table(pl, unique=True)
    assert len(table) == 3 * 4
    languages = table.index.get_level_values("language")
    assert list(languages) == sorted(languages)
    for lang in cube.language.values:
        part = table[languages == lang]
        _check_unique(full[full.index.get_level_values("language") == lang], part, 1)


def test_pairwise_table_unique_validation(aggregated):
    with pytest.raises(TypeError, match=r"`unique` must be True or False; got 'yes'"):
        eq.pairwise_table(eq.pairwise_differences(aggregated), unique="yes")


def test_by_language(rng):
    cube = eq.simulate_cube(n_models=3, n_languages=4, rng=rng)
    rs = eq.resample(cube, n_resamples=800, rng=2)
    pl = eq.pairwise_by_language(rs)
    assert pl.verdict.dims == ("model", "model_b", "language")
    for lang in cube.language.values:
        d = rs.score.sel(model="m0", language=lang) - rs.score.sel(model="m2", language=lang)
        cell = pl.sel(model="m0", model_b="m2", language=lang)
        np.testing.assert_allclose(cell.sd, d.std(ddof=1))
        np.testing.assert_allclose(cell.observed, rs.observed.sel(model="m0", language=lang)
                                   - rs.observed.sel(model="m2", language=lang))
        iu = np.triu_indices(3, k=1)
        p = pl.p_value.sel(language=lang).values[iu]
        np.testing.assert_allclose(pl.p_holm.sel(language=lang).values[iu],
                                   multipletests(p, method="holm")[1])
    assert len(eq.pairwise_table(pl)) == 3 * 2 * 4


def test_by_language_errors(rng):
    cube = eq.simulate_cube(n_models=2, n_languages=3, rng=rng)
    with pytest.raises(ValueError, match="needs resamples with languages='fixed'"):
        eq.pairwise_by_language(eq.resample(cube, n_resamples=5, languages="bootstrap"))
    with pytest.raises(ValueError, match="needs replication noise"):
        eq.pairwise_by_language(eq.resample(cube, n_resamples=5, replication="none"))
    with pytest.raises(CubeError, match=r"must be the result of eq\.resample"):
        eq.pairwise_by_language(cube)
    holey = cube.copy(deep=True)
    holey["score"][0, 0] = np.nan
    holey["boot_score"][0, 0] = np.nan
    with pytest.raises(CubeError, match="hold NaN scores"):
        eq.pairwise_by_language(eq.resample(holey, n_resamples=5))


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"confidence_level": 0}, ValueError, r"`confidence_level` must be in \(0, 1\)"),
    ({"higher_is_better": "yes"}, TypeError, "`higher_is_better` must be True, False or None"),
])
def test_validation(aggregated, kwargs, error, match):
    with pytest.raises(error, match=match):
        eq.pairwise_differences(aggregated, **kwargs)


def test_not_aggregated(aggregated):
    with pytest.raises(CubeError, match=r"must be the result of eq\.aggregate"):
        eq.pairwise_differences(aggregated.drop_vars("resampled"))
    with pytest.raises(CubeError, match=r"must be the result of eq\.pairwise_differences"):
        eq.pairwise_table(aggregated)


# --- pairing --------------------------------------------------------------------------------------

def _correlated_cube(gen: np.random.Generator, n_lang: int, n_boot: int, rho: float,
                     sigma_boot: float) -> xr.Dataset:
    """Two deterministic models (2 identical seeds) whose test-set errors share a component.

    Observed: y[m, l] = c[l] + u[m, l], Var(c) = rho s^2, Var(u) = (1 - rho) s^2; replicate b
    of language l is the same resampled test set for both models: y*[m, l, b] = y[m, l]
    + c*[l, b] + u*[m, l, b].
    """
    s_c, s_u = np.sqrt(rho) * sigma_boot, np.sqrt(1 - rho) * sigma_boot
    y = gen.normal(0, s_c, (1, n_lang)) + gen.normal(0, s_u, (2, n_lang))
    boot = y[..., None] + gen.normal(0, s_c, (1, n_lang, n_boot)) \
        + gen.normal(0, s_u, (2, n_lang, n_boot))
    score = np.repeat(y[..., None], 2, axis=-1)
    return eq.from_arrays(score, np.repeat(boot[:, :, None, :], 2, axis=2))


def test_pairing_shrinks_the_sd_of_differences_correctly():
    gen = np.random.default_rng(77)
    n_lang, rho, sigma = 20, 0.8, 1.0
    cube = _correlated_cube(gen, n_lang, 2000, rho, sigma)
    true_sd = np.sqrt(2 * (1 - rho)) * sigma / np.sqrt(n_lang)
    # the true SD of the observed difference, checked by simulating the observation itself
    c = gen.normal(0, np.sqrt(rho) * sigma, (20_000, 1, n_lang))
    u = gen.normal(0, np.sqrt(1 - rho) * sigma, (20_000, 2, n_lang))
    d_obs = (c + u).mean(axis=-1) @ np.array([1.0, -1.0])
    np.testing.assert_allclose(d_obs.std(), true_sd, rtol=4 / np.sqrt(2 * 20_000))

    n = 20_000
    paired = eq.pairwise_differences(eq.aggregate(
        eq.resample(cube, n_resamples=n, replication="nonparametric", rng=1)))
    unpaired = eq.pairwise_differences(eq.aggregate(
        eq.resample(cube, n_resamples=n, replication="parametric", rng=1)))
    sd_paired = float(paired.sd[0, 1])
    sd_unpaired = float(unpaired.sd[0, 1])
    # paired: the replicate SDs are estimated from 2000 replicates per language (about 1.6 %
    # relative error on the variance of the 20-language mean) plus Monte Carlo error
    np.testing.assert_allclose(sd_paired, true_sd, rtol=0.05)
    # independent noise ignores the shared component: sqrt(2) s / sqrt(L), too wide
    np.testing.assert_allclose(sd_unpaired, np.sqrt(2) * sigma / np.sqrt(n_lang), rtol=0.05)
    assert sd_paired < 0.6 * sd_unpaired


# --- calibration ----------------------------------------------------------------------------------

def _null_pairs(gen: np.random.Generator, n_pairs: int, n_lang: int, shared_theta: bool
                ) -> xr.Dataset:
    """Model 2i and 2i+1 form one data set with equal true aggregates."""
    n_seeds, n_boot, s_seed, s_boot = 3, 30, 1.0, 1.0
    theta = gen.normal(0, 2.0, (n_pairs, 1 if shared_theta else 2, n_lang))
    theta = np.broadcast_to(theta, (n_pairs, 2, n_lang)).reshape(2 * n_pairs, n_lang)
    shape = (2 * n_pairs, n_lang)
    score = (theta + gen.normal(0, s_boot, shape))[..., None] \
        + gen.normal(0, s_seed, (*shape, n_seeds))
    boot = score[..., None] + gen.normal(0, s_boot, (*shape, n_seeds, n_boot))
    return eq.from_arrays(score, boot)


def _rejections(agg: xr.Dataset, alpha: float) -> int:
    values = agg.resampled.values
    d_res = (values[:, 0::2] - values[:, 1::2]).T                 # (pair, resample)
    d_obs = agg.observed.values[0::2] - agg.observed.values[1::2]
    p = _difference_stats(d_obs, d_res, 0.95)["p_value"]
    return int((p <= alpha).sum())


def test_public_p_value_is_the_kernel(rng):
    cube = _null_pairs(rng, 1, 5, shared_theta=True)
    agg = eq.aggregate(eq.resample(cube, n_resamples=300, rng=0))
    pw = eq.pairwise_differences(agg)
    assert _rejections(agg, 1.0) == 1
    values = agg.resampled.values
    p = _difference_stats(agg.observed.values[:1] - agg.observed.values[1:],
                          (values[:, :1] - values[:, 1:]).T, 0.95)["p_value"]
    np.testing.assert_allclose(pw.p_value[0, 1], p[0])


@pytest.mark.slow
@pytest.mark.parametrize(("replication", "languages", "n_lang", "shared"), [
    ("parametric", "fixed", 8, True),
    ("none", "bootstrap", 40, False),
])
def test_null_rejection_rate(replication, languages, n_lang, shared):
    """Equal models: the test rejects at its nominal rate (binomial bound)."""
    gen = np.random.default_rng(303)
    n, alpha = 1500, 0.1
    cube = _null_pairs(gen, n, n_lang, shared_theta=shared)
    plan = eq.resample(cube, n_resamples=1999, replication=replication, languages=languages,
                       rng=4, lazy=True)
    hits = _rejections(eq.aggregate(plan), alpha)
    print(f"\nCALIBRATION | pairwise_differences test, resample {replication}, languages "
          f"{languages} | null rejection rate | nominal {alpha:.3f} | measured {hits / n:.4f} "
          f"| n {n}")
    assert abs(hits - n * alpha) <= 4 * np.sqrt(n * alpha * (1 - alpha))


@pytest.mark.slow
def test_null_rejection_rate_paired_nonparametric():
    """Equal models with strongly correlated test-set errors (rho = 0.8): the paired
    (nonparametric) test rejects at its nominal rate; independent parametric noise ignores the
    shared error and is far too conservative."""
    gen = np.random.default_rng(404)
    n, n_lang, n_boot, rho, alpha = 1000, 8, 100, 0.8, 0.1
    s_c, s_u = np.sqrt(rho), np.sqrt(1 - rho)
    theta = np.repeat(gen.normal(0, 2.0, (n, 1, n_lang)), 2, axis=1)
    c = gen.normal(0, s_c, (n, 1, n_lang))
    y = theta + c + gen.normal(0, s_u, (n, 2, n_lang))
    boot = y[..., None] + gen.normal(0, s_c, (n, 1, n_lang, n_boot)) \
        + gen.normal(0, s_u, (n, 2, n_lang, n_boot))
    score = np.repeat(y.reshape(2 * n, n_lang)[..., None], 2, axis=-1)
    boot = np.repeat(boot.reshape(2 * n, n_lang, 1, n_boot), 2, axis=2)
    cube = eq.from_arrays(score, boot)
    bound = 4 * np.sqrt(n * alpha * (1 - alpha))
    paired = eq.resample(cube, n_resamples=1999, replication="nonparametric", rng=4, lazy=True)
    hits = _rejections(eq.aggregate(paired), alpha)
    print(f"\nCALIBRATION | pairwise_differences test, resample nonparametric, correlated test "
          f"sets | null rejection rate | nominal {alpha:.3f} | measured {hits / n:.4f} | n {n}")
    assert abs(hits - n * alpha) <= bound
    unpaired = eq.resample(cube, n_resamples=1999, replication="parametric", rng=4, lazy=True)
    assert _rejections(eq.aggregate(unpaired), alpha) < n * alpha - bound


def test_the_aggregate_confidence_level_is_inherited():
    cube = eq.simulate_cube(n_models=3, n_languages=5, rng=0)
    agg = eq.aggregate(eq.resample(cube, n_resamples=400, rng=0), confidence_level=0.8)
    inherited = eq.pairwise_differences(agg)
    assert inherited.attrs["confidence_level"] == 0.8
    xr.testing.assert_identical(inherited, eq.pairwise_differences(agg, confidence_level=0.8))
    assert eq.pairwise_differences(agg, confidence_level=0.95).attrs["confidence_level"] == 0.95
    assert "the 80% percentile interval" in eq.pairwise_table(inherited).attrs["caption"]

"""Tests of eq.resample's seed draws with replication="nonparametric" (``seeds=``).

``"one"`` (the multilingual paper's scheme: one seed per draw), ``"bootstrap"`` (S seeds with
replacement, all on one shared replicate) and ``"rescaled"`` (the same, seed deviations
stretched by sqrt(S / (S - 1))). With ``Ybar[b]`` the mean over seeds of replicate b and ``V``
the mean over b of the (ddof=1) variance over seeds, the variance of one draw given the cube is

    one:        Var_b Ybar + (S - 1) / S * V
    bootstrap:  Var_b Ybar + (S - 1) / S * V / S
    rescaled:   Var_b Ybar + V / S
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.pairwise import _difference_stats

SEED_MODES = ("one", "bootstrap", "rescaled")


# --- helpers --------------------------------------------------------------------------------------

def _paired_cube(gen: np.random.Generator, theta: np.ndarray, n_seeds: int, n_boot: int,
                 sigma_seed: float, sigma_boot: float, rho: float = 0.0) -> xr.Dataset:
    """A cube whose bootstrap replicates are paired the way eq.from_predictions pairs them.

    ``theta`` (model, language) are the true scores. The full-test-set score is
    y[m,l,s] = theta[m,l] + c[l] + u[m,l] + z[m,l,s]: the test-set error c + u is shared by all
    seeds (and c, with variance rho sigma_boot^2, by all models), z ~ N(0, sigma_seed^2) is the
    seed. Replicate b is one resampled test set: y*[m,l,s,b] = y[m,l,s] + c*[l,b] + u*[m,l,b],
    the same deviation for every seed (and c* for every model).
    """
    n_m, n_l = theta.shape
    s_c, s_u = np.sqrt(rho) * sigma_boot, np.sqrt(1 - rho) * sigma_boot
    y = theta + gen.normal(0, s_c, (1, n_l)) + gen.normal(0, s_u, (n_m, n_l))
    score = y[..., None] + gen.normal(0, sigma_seed, (n_m, n_l, n_seeds))
    dev = gen.normal(0, s_c, (1, n_l, n_boot)) + gen.normal(0, s_u, (n_m, n_l, n_boot))
    boot = score[..., None] + dev[:, :, None, :]
    return eq.from_arrays(score, boot)


def _exact_moments(boot: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(mean, variance) of one draw given the cube, per cell; boot (..., seed, bootstrap)."""
    n_s = boot.shape[-2]
    ybar_b = boot.mean(axis=-2)
    between = ybar_b.var(axis=-1)                        # over b, uniform: ddof=0
    within = boot.var(axis=-2, ddof=1).mean(axis=-1)     # V
    centre = ybar_b.mean(axis=-1)
    return {"one": (boot.mean(axis=(-2, -1)), between + (n_s - 1) / n_s * within),
            "bootstrap": (centre, between + (n_s - 1) / n_s**2 * within),
            "rescaled": (centre, between + within / n_s)}


def _assert_variance(samples: np.ndarray, expected: np.ndarray, n_se: float = 4.5) -> None:
    """Sample variance over axis 0 equals ``expected`` within n_se Monte Carlo SEs (the SE of
    a variance, from the fourth moment of the samples themselves)."""
    dev2 = (samples - samples.mean(axis=0)) ** 2
    se = dev2.std(axis=0) / np.sqrt(samples.shape[0])
    assert np.all(np.abs(dev2.mean(axis=0) - expected) <= n_se * se), (
        dev2.mean(axis=0), expected, se)


@pytest.fixture
def cube() -> xr.Dataset:
    return eq.simulate_cube(n_models=2, n_languages=3, n_seeds=4, n_boot=30, rng=21)


# --- the draws ------------------------------------------------------------------------------------

def test_default_is_bootstrap(cube):
    rs = eq.resample(cube, n_resamples=5, replication="nonparametric", rng=0)
    assert rs.attrs["seeds"] == "bootstrap"
    xr.testing.assert_identical(
        rs, eq.resample(cube, n_resamples=5, replication="nonparametric", seeds="bootstrap",
                        rng=0))
    assert "seeds" not in eq.resample(cube, n_resamples=5, rng=0).attrs


@pytest.mark.parametrize("languages", ["fixed", "bootstrap"])
def test_bootstrap_is_the_mean_of_the_drawn_seeds_on_one_replicate(cube, languages):
    rs = eq.resample(cube, n_resamples=60, replication="nonparametric", languages=languages,
                     rng=2)
    slot = "language" if languages == "fixed" else "language_slot"
    lang = rs.language if languages == "fixed" else rs.drawn_language
    boot = cube.boot_score.sel(language=lang, bootstrap=rs.drawn_bootstrap)   # (.., seed)
    expected = (boot * rs.drawn_seed_count).sum("seed") / cube.sizes["seed"]
    np.testing.assert_allclose(rs.score.values,
                               expected.transpose("resample", "model", slot).values,
                               rtol=1e-12)
    # the same seeds and replicate for every model (no model dim on the draws)
    assert "model" not in rs.drawn_seed_count.dims
    assert "model" not in rs.drawn_bootstrap.dims


def test_rescaled_uses_the_same_draws_stretched(cube):
    kw = {"n_resamples": 80, "replication": "nonparametric", "rng": 4}
    plain = eq.resample(cube, seeds="bootstrap", **kw)
    stretched = eq.resample(cube, seeds="rescaled", **kw)
    xr.testing.assert_identical(plain.drawn_seed_count, stretched.drawn_seed_count)
    xr.testing.assert_identical(plain.drawn_bootstrap, stretched.drawn_bootstrap)
    centre = cube.boot_score.mean("seed").sel(bootstrap=plain.drawn_bootstrap)
    centre = centre.transpose("resample", "model", "language")
    n_s = cube.sizes["seed"]
    expected = centre + np.sqrt(n_s / (n_s - 1)) * (plain.score - centre)
    np.testing.assert_allclose(stretched.score.values, expected.values, rtol=1e-12)


def test_one_seed_bootstrap_and_rescaled_agree():
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=1, n_boot=20, rng=3)
    kw = {"n_resamples": 50, "replication": "nonparametric", "rng": 1}
    a = eq.resample(cube, seeds="bootstrap", **kw)
    b = eq.resample(cube, seeds="rescaled", **kw)
    xr.testing.assert_identical(a.drop_attrs(), b.drop_attrs())


def test_counts_are_uniform_multinomial(cube):
    rs = eq.resample(cube, n_resamples=3000, replication="nonparametric", rng=6)
    counts = rs.drawn_seed_count.values.astype(np.int64)       # (resample, language, seed)
    n_s = cube.sizes["seed"]
    assert (counts.sum(axis=-1) == n_s).all()
    # each count is Binomial(S, 1/S): mean 1, variance (S - 1) / S
    n = counts.size
    assert abs(counts.mean() - 1) <= 4 * np.sqrt((n_s - 1) / n_s / n)
    np.testing.assert_allclose(counts.var(), (n_s - 1) / n_s, rtol=0.05)
    # drawn independently across languages
    corr = np.corrcoef(counts[:, 0, 0], counts[:, 1, 0])[0, 1]
    assert abs(corr) < 4 / np.sqrt(3000)


def test_attrs_name_the_seed_mode(cube):
    lazy = eq.resample(cube, replication="nonparametric", seeds="rescaled", lazy=True)
    assert lazy.attrs["seeds"] == "rescaled"
    assert "seeds" not in eq.resample(cube, lazy=True).attrs


def test_memory_of_the_draws_is_small():
    cube = eq.simulate_cube(n_models=2, n_languages=4, n_seeds=300, n_boot=3, rng=0)
    rs = eq.resample(cube, n_resamples=10, replication="nonparametric", rng=0)
    assert rs.drawn_seed_count.dtype == np.uint16            # counts up to 300
    assert int(rs.drawn_seed_count.sum("seed").min()) == 300


# --- spread: exact given the cube, and against the known components ------------------------------

@pytest.mark.parametrize("seeds", SEED_MODES)
def test_spread_of_one_draw_is_exact_given_the_cube(cube, seeds):
    n = 40_000
    rs = eq.resample(cube, n_resamples=n, replication="nonparametric", seeds=seeds, rng=9)
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values
    mean, var = _exact_moments(boot)[seeds]
    values = rs.score.values                                   # (resample, model, language)
    _assert_variance(values, var)
    se_mean = np.sqrt(var / n)
    assert np.all(np.abs(values.mean(axis=0) - mean) <= 4.5 * se_mean)
    # the aggregate over fixed languages: independent draws across languages
    agg = eq.aggregate(rs)
    n_l = cube.sizes["language"]
    np.testing.assert_allclose(agg.sd.values**2, var.sum(axis=-1) / n_l**2,
                               rtol=4.5 * np.sqrt(2 / n) * 1.5)
    # differences are paired: the same formula on the difference of the two models' replicates
    diff = values[:, 0] - values[:, 1]
    _assert_variance(diff, _exact_moments(boot[0] - boot[1])[seeds][1])


def test_one_is_wider_than_bootstrap_by_the_seed_shrinkage(cube):
    # exact: Var_one - Var_bootstrap = ((S - 1) / S)^2 V, per cell
    n = 40_000
    boot = cube.boot_score.transpose("model", "language", "seed", "bootstrap").values
    n_s = boot.shape[2]
    within = boot.var(axis=2, ddof=1).mean(axis=-1)
    kw = {"n_resamples": n, "replication": "nonparametric", "rng": 10}
    one = eq.resample(cube, seeds="one", **kw).score.values
    two = eq.resample(cube, seeds="bootstrap", **kw).score.values
    gap = one.var(axis=0) - two.var(axis=0)
    expected = ((n_s - 1) / n_s) ** 2 * within
    # independent draws: SE of the gap from both variances' SEs
    se = np.hypot(((one - one.mean(0)) ** 2).std(0), ((two - two.mean(0)) ** 2).std(0))
    assert np.all(np.abs(gap - expected) <= 4.5 * se / np.sqrt(n))


def test_spread_matches_the_components_on_a_paired_cube():
    """With replicates shared by the seeds, the per-language variance is
    sigma_boot^2 + c sigma_seed^2 with c = (S-1)/S (one), (S-1)/S^2 (bootstrap), 1/S (rescaled);
    the S-seed mean's own variance is sigma_boot^2 + sigma_seed^2 / S (rescaled)."""
    gen = np.random.default_rng(31)
    n_l, n_s, n_b, s_seed, s_boot, n = 1000, 4, 200, 2.0, 1.0, 10_000
    cube = _paired_cube(gen, np.zeros((1, n_l)), n_s, n_b, s_seed, s_boot)
    factor = {"one": (n_s - 1) / n_s, "bootstrap": (n_s - 1) / n_s**2, "rescaled": 1 / n_s}
    for seeds, c in factor.items():
        agg = eq.aggregate(eq.resample(cube, n_resamples=n, replication="nonparametric",
                                       seeds=seeds, rng=1, lazy=True))
        expected = np.sqrt((s_boot**2 + c * s_seed**2) / n_l)
        # errors: Monte Carlo (1/sqrt(2n) on the SD) and the cube's own seed variances
        # (1000 cells of 3 df) and replicate variances: about 1 % on the SD in all
        np.testing.assert_allclose(float(agg.sd[0]), expected, rtol=0.035)


# --- missing seeds --------------------------------------------------------------------------------

def test_missing_seed_draws_the_cells_own_runs(cube):
    """A run missing from one cell (ragged seeds) is neither filled nor made NaN: that cell
    redraws the seeds it has, every other cell is drawn as before (same numbers)."""
    holey = cube.copy(deep=True)
    holey["score"][0, 1, 2] = np.nan
    holey["boot_score"][0, 1, 2, :] = np.nan
    kw = {"n_resamples": 300, "replication": "nonparametric", "rng": 2}
    for seeds in ("bootstrap", "rescaled", "one"):
        rs = eq.resample(holey, seeds=seeds, **kw)
        assert not np.isnan(rs.score).any(), seeds
        # the cell's draws only ever use its own three seeds' replicates
        own = holey["boot_score"][0, 1, [0, 1, 3]].values
        lo, hi = np.nanmin(own), np.nanmax(own)
        cell = rs.score[:, 0, 1].values
        if seeds != "rescaled":
            assert ((cell >= lo - 1e-12) & (cell <= hi + 1e-12)).all()


def test_ragged_seed_bootstrap_variance_is_each_cells_own():
    """Independent check: with S_ml seeds in cell (m, l) and no replicates, the seed
    bootstrap's variance of the cell mean is the cell's plug-in variance / S_ml (and the
    rescaled one's the sample variance / S_ml), whatever the other cells hold."""
    gen = np.random.default_rng(5)
    scores = gen.normal(size=(3, 4, 6))
    scores[0, :, 3:] = np.nan                      # model 0 ran 3 seeds
    scores[1, 2, 5] = np.nan                       # one crashed run
    cube = eq.from_arrays(scores)
    counts = np.isfinite(scores).sum(-1)
    plug_in = np.nanvar(scores, axis=-1)
    for seeds, expected in (("bootstrap", plug_in / counts),
                            ("rescaled", plug_in / (counts - 1)),
                            ("one", plug_in)):
        rs = eq.resample(cube, n_resamples=40_000, replication="nonparametric",
                         seeds=seeds, rng=3)
        np.testing.assert_allclose(rs.score.mean("resample"), np.nanmean(scores, -1),
                                   atol=0.02)
        np.testing.assert_allclose(rs.score.var("resample"), expected, rtol=0.05)



# --- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "match"), [
    ({"replication": "nonparametric", "seeds": "all"},
     "`seeds` must be one of 'one', 'bootstrap', 'rescaled', 'mean'; got 'all'"),
    ({"replication": "parametric", "seeds": "one"},
     "`seeds` applies only to replication='nonparametric'.*got seeds='one' with "
     "replication='parametric'"),
    ({"replication": "none", "seeds": "bootstrap"},
     "`seeds` applies only to replication='nonparametric'"),
])
def test_validation(cube, kwargs, match):
    with pytest.raises(ValueError, match=match):
        eq.resample(cube, n_resamples=5, **kwargs)


# --- calibration (slow) ---------------------------------------------------------------------------

def _predicted_coverage(gen: np.random.Generator, level: float, n_l: int, n_s: int, n_b: int,
                        s_seed: float, s_boot: float, c: float) -> float:
    """Coverage of a normal-approximation interval with the resampled variance, on a paired
    cube with fixed languages (model of _paired_cube, one model).

    Per language, given the cube: the replicate part of the variance is the (ddof=0) variance
    of B replicate deviations, s_boot^2 chi2(B-1) / B; the seed part is c s^2 with s^2 ~
    s_seed^2 chi2(S-1) / (S-1). The resample distribution is centred on the observed mean plus
    the mean replicate deviation (N(0, s_boot^2 / B)); the observed mean misses the truth by
    N(0, s_boot^2 + s_seed^2 / S). Averaged over languages, and over draws of the chi2s.
    """
    draws = 200_000
    boot_part = s_boot**2 * gen.chisquare(n_b - 1, (draws, n_l)) / n_b
    seed_part = c * s_seed**2 * gen.chisquare(n_s - 1, (draws, n_l)) / (n_s - 1)
    v_hat = (boot_part + seed_part).sum(axis=1) / n_l**2
    miss = (s_boot**2 * (1 + 1 / n_b) + s_seed**2 / n_s) / n_l
    z = stats.norm.ppf(0.5 + level / 2)
    return float(np.mean(2 * stats.norm.cdf(z * np.sqrt(v_hat / miss)) - 1))


@pytest.mark.slow
def test_coverage_fixed_languages_matches_theory():
    """90 % intervals of the mean over 8 fixed languages, 3 seeds with a large seed SD: each
    scheme covers at the rate its variance predicts (within binomial error): "one" is
    conservative, "bootstrap" a little short (seed part shrunk by (S-1)/S), "rescaled" near
    nominal (short only by the noise of estimating the variance from 3 seeds)."""
    gen = np.random.default_rng(505)
    n, n_l, n_s, n_b, s_seed, s_boot, level = 1000, 8, 3, 40, 1.5, 0.5, 0.9
    theta = gen.normal(0, 2.0, (n, n_l))
    cube = _paired_cube(gen, theta, n_s, n_b, s_seed, s_boot)
    factor = {"one": (n_s - 1) / n_s, "bootstrap": (n_s - 1) / n_s**2, "rescaled": 1 / n_s}
    rates = {}
    for seeds, c in factor.items():
        plan = eq.resample(cube, n_resamples=2000, replication="nonparametric", seeds=seeds,
                           rng=7, lazy=True)
        ci = eq.aggregate(plan, confidence_level=level).ci
        target = theta.mean(axis=1)
        hits = int(((ci.sel(ci_bound="lower").values <= target)
                    & (target <= ci.sel(ci_bound="upper").values)).sum())
        p = _predicted_coverage(np.random.default_rng(1), level, n_l, n_s, n_b, s_seed,
                                s_boot, c)
        rates[seeds] = (hits / n, p)
        print(f"\nCALIBRATION | resample nonparametric seeds={seeds!r}, languages fixed "
              f"(theory {p:.3f}) | coverage | nominal {level:.3f} | measured {hits / n:.4f} "
              f"| n {n}")
        assert abs(hits - n * p) <= 4 * np.sqrt(n * p * (1 - p)), (seeds, hits, p)
    assert rates["one"][1] > 0.95 > level > rates["rescaled"][1] > rates["bootstrap"][1]
    assert rates["rescaled"][1] > level - 0.03           # estimation noise of the variance
    assert rates["bootstrap"][1] < level - 0.05          # the (S-1)/S shrinkage, S = 3


@pytest.mark.slow
def test_null_rejection_rate_paired_two_level():
    """Equal models whose test-set errors are strongly correlated (rho = 0.8), 5 seeds: the
    paired two-level schemes reject at the nominal rate; the paper's one-seed scheme is far
    too conservative (its variance counts sigma_seed^2 (S-1)/S instead of sigma_seed^2 / S)."""
    gen = np.random.default_rng(606)
    n, n_l, n_s, n_b, alpha = 1000, 8, 5, 100, 0.1
    theta = np.repeat(gen.normal(0, 2.0, (n, 1, n_l)), 2, axis=1).reshape(2 * n, n_l)
    # _paired_cube for 1000 pairs at once: the shared component c is per pair (2i, 2i+1)
    s_c, s_u = np.sqrt(0.8), np.sqrt(0.2)
    c = np.repeat(gen.normal(0, s_c, (n, 1, n_l)), 2, axis=1).reshape(2 * n, n_l)
    y = theta + c + gen.normal(0, s_u, (2 * n, n_l))
    score = y[..., None] + gen.normal(0, 0.7, (2 * n, n_l, n_s))
    c_b = np.repeat(gen.normal(0, s_c, (n, 1, n_l, n_b)), 2, axis=1).reshape(2 * n, n_l, n_b)
    dev = c_b + gen.normal(0, s_u, (2 * n, n_l, n_b))
    cube = eq.from_arrays(score, score[..., None] + dev[:, :, None, :])
    bound = 4 * np.sqrt(n * alpha * (1 - alpha))
    hits = {}
    for seeds in SEED_MODES:
        plan = eq.resample(cube, n_resamples=1999, replication="nonparametric", seeds=seeds,
                           rng=8, lazy=True)
        agg = eq.aggregate(plan)
        values = agg.resampled.values
        d_res = (values[:, 0::2] - values[:, 1::2]).T
        d_obs = agg.observed.values[0::2] - agg.observed.values[1::2]
        hits[seeds] = int((_difference_stats(d_obs, d_res, 0.95)["p_value"] <= alpha).sum())
    for seeds, h in hits.items():
        print(f"\nCALIBRATION | pairwise test, resample nonparametric seeds={seeds!r} | "
              f"null rejection rate | nominal {alpha:.3f} | measured {h / n:.4f} | n {n}")
    assert abs(hits["bootstrap"] - n * alpha) <= bound, hits
    assert abs(hits["rescaled"] - n * alpha) <= bound, hits
    assert hits["one"] < n * alpha - bound, hits


# --- a cube of seeds without bootstrap replicates (issue 10, finding 2) ------------------------

def _seeds_only(rng_seed=0, n_seeds=5):
    r = np.random.default_rng(rng_seed)
    base = r.normal(30, 2, size=(1, 3, n_seeds))
    # model b = model a + 1 on every seed, so a paired difference is exactly 1 in every resample
    return eq.from_arrays(np.concatenate([base, base + 1.0]), models=["a", "b"])


@pytest.mark.parametrize("seeds", ["one", "bootstrap", "rescaled"])
def test_seeds_only_cube_resamples_seeds_paired(seeds):
    cube = _seeds_only()
    rs = eq.resample(cube, n_resamples=200, replication="nonparametric", seeds=seeds, rng=0)
    assert "NOT included" in rs.attrs["test_set_noise"]
    assert "drawn_bootstrap" not in rs
    diff = rs.score.sel(model="b") - rs.score.sel(model="a")
    np.testing.assert_allclose(diff, 1.0, atol=1e-12)
    assert float(rs.score.sel(model="a").std("resample").min()) > 0
    agg = eq.aggregate(rs)
    assert agg.attrs["test_set_noise"] == rs.attrs["test_set_noise"]


def test_seeds_only_variance_is_that_of_the_seed_mean():
    """Exact variances given the cube: (S-1)/S * s^2/S (bootstrap), s^2/S (rescaled)."""
    cube = _seeds_only(3)
    s2 = cube.score.var("seed", ddof=1).values
    n = 20_000
    for seeds, factor in (("bootstrap", 4 / 5), ("rescaled", 1.0)):
        rs = eq.resample(cube, n_resamples=n, replication="nonparametric", seeds=seeds, rng=4)
        var = rs.score.var("resample", ddof=1).values
        expected = factor * s2 / 5
        # SE of a sample variance of n draws is about var * sqrt(2 / n) (3% here; kurtosis)
        np.testing.assert_allclose(var, expected, rtol=0.08)


def test_seeds_only_one_seed_raises():
    cube = eq.from_arrays(np.ones((2, 3, 1)))
    with pytest.raises(eq.CubeError, match="at least 2 seeds"):
        eq.resample(cube, replication="nonparametric")


def test_parametric_advice_is_not_circular():
    cube = _seeds_only()
    with pytest.raises(eq.CubeError, match="replication='nonparametric' redraws the seeds"):
        eq.resample(cube, replication="parametric")
    eq.resample(cube, n_resamples=10, replication="nonparametric", rng=0)   # and that one runs


def test_test_set_noise_attr_for_every_mode():
    cube = eq.simulate_cube(n_models=2, n_languages=3, n_seeds=3, n_boot=20, rng=0)
    for rep, word in (("parametric", "included"), ("nonparametric", "included: a bootstrap"),
                      ("none", "not included")):
        rs = eq.resample(cube, n_resamples=5, replication=rep, rng=0)
        assert rs.attrs["test_set_noise"].startswith(word)

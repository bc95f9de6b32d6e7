"""eq.power: MDE and sample size against closed forms, scipy and simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq import CubeError
from evaluq.power import design_from_sds, minimum_detectable_effect, sample_size

FACTOR = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)  # formulas.md: 2.8016


def ab(x):
    return float(x.sel(model="A", model_b="B"))


def test_normal_factor_and_pairing():
    assert round(FACTOR, 4) == 2.8016
    d = design_from_sds(sd_item=0.5, correlation=0.6, n_items=400)
    se = np.sqrt((0.25 + 0.25 - 2 * 0.6 * 0.25) / 400)
    assert ab(minimum_detectable_effect(d)) == pytest.approx(FACTOR * se, rel=1e-12)
    z = stats.norm.ppf(0.995) + stats.norm.ppf(0.9)
    assert ab(minimum_detectable_effect(d, alpha=0.01, power=0.9)) == pytest.approx(
        z * se, rel=1e-12)
    # unequal SDs: var_A + var_B - 2 rho sd_A sd_B
    d2 = design_from_sds(sd_item=(0.3, 0.5), correlation=0.2, n_items=100)
    se2 = np.sqrt((0.09 + 0.25 - 2 * 0.2 * 0.15) / 100)
    assert ab(minimum_detectable_effect(d2)) == pytest.approx(FACTOR * se2, rel=1e-12)


def test_items_override_scales_as_one_over_sqrt_n():
    d = design_from_sds(sd_item=0.5, n_items=250)
    assert ab(minimum_detectable_effect(d, n_items=1000)) == pytest.approx(
        ab(minimum_detectable_effect(d)) / 2, rel=1e-12)


def test_t_correction_for_few_seeds_and_languages():
    d = design_from_sds(sd_item=0.5, n_items=10**12, sd_seed=0.02, n_seeds=3)
    df = 1 * (3 - 1 + 3 - 1)                        # L (S_A - 1 + S_B - 1): seed part only
    se = np.sqrt(2 * 0.02**2 / 3 + 0.5 / 10**12)
    expected = (stats.t.ppf(0.975, df) + stats.t.ppf(0.8, df)) * se
    assert ab(minimum_detectable_effect(d)) == pytest.approx(expected, rel=1e-4)
    pop = design_from_sds(sd_item=0.5, n_items=10**12, sd_language=0.05, n_languages=5)
    se = np.sqrt(0.05**2 / 5 + 0.5 / 10**12 / 5)
    expected = (stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * se
    assert ab(minimum_detectable_effect(pop, scope="population")) == pytest.approx(
        expected, rel=1e-4)
    assert ab(minimum_detectable_effect(pop)) < 0.01   # benchmark scope: no language term


def test_sample_size_inverts_the_mde():
    d = design_from_sds(sd_item=0.45, correlation=0.3, n_items=300, sd_seed=0.01, n_seeds=2,
                        sd_language=0.02, n_languages=4)
    for vary, key in (("items", "n_items"), ("seeds", "n_seeds"), ("languages", "n_languages")):
        for scope in ("benchmark", "population"):
            effect = {("items", "benchmark"): 0.04, ("items", "population"): 0.06,
                      ("seeds", "benchmark"): 0.05, ("seeds", "population"): 0.07}.get(
                (vary, scope), 0.04)
            n = ab(sample_size(d, effect, vary=vary, scope=scope))
            assert n == int(n)
            at = ab(minimum_detectable_effect(d, scope=scope, **{key: int(n)}))
            assert at <= effect
            low = 2 if (vary == "languages" and scope == "population") else 1
            if n > low:
                before = ab(minimum_detectable_effect(d, scope=scope, **{key: int(n) - 1}))
                assert before > effect


def test_unreachable_effect_is_nan_with_reason():
    d = design_from_sds(sd_item=0.5, n_items=100, sd_seed=0.05, n_seeds=1)
    n = sample_size(d, 0.01, vary="items")      # the seed variance alone exceeds it
    assert np.isnan(ab(n))
    assert "no number of items reaches the effect" in n.attrs["nan_reason"]


def _item_cube(rng, n_items=400, n_boot=4000, n_seeds=1, seeds_are="epochs"):
    mu = rng.uniform(0.2, 0.9, n_items)
    rows = []
    for m, shift in (("a", 0.0), ("b", 0.05)):
        for s in range(n_seeds):
            x = (rng.random(n_items) < np.clip(mu + shift, 0, 1)).astype(float)
            rows.append(pd.DataFrame({"m": m, "s": s, "i": np.arange(n_items), "v": x}))
    df = pd.concat(rows)
    return df, eq.from_items(df, model="m", item="i", score="v", seed="s", n_boot=n_boot,
                             rng=1, seeds_are=seeds_are)


def test_cube_design_matches_the_analytic_se(rng):
    df, cube = _item_cube(rng)
    res = eq.item_means(df, model="m", item="i", score="v")
    mde = minimum_detectable_effect(cube)
    se = float(res.se_difference_iid.sel(model="a", model_b="b"))
    # bootstrap variance of a mean is (n-1)/n of the ddof=1 SE^2, within Monte Carlo error
    assert float(mde.sel(model="a", model_b="b")) == pytest.approx(FACTOR * se, rel=0.05)
    assert float(mde.sel(model="a", model_b="b")) == float(mde.sel(model="b", model_b="a"))
    d = eq.power.design(cube)
    assert float(d.correlation.sel(model="a", model_b="b", language="all")) == pytest.approx(
        float(res.correlation.sel(model="a", model_b="b")), abs=0.05)
    quarter = minimum_detectable_effect(cube, n_items=1600)
    assert float(quarter.sel(model="a", model_b="b")) == pytest.approx(
        float(mde.sel(model="a", model_b="b")) / 2, rel=1e-12)


def test_one_seed_cube_cannot_change_seeds(rng):
    _, cube = _item_cube(rng, n_boot=200)
    mde = minimum_detectable_effect(cube, n_seeds=4)
    assert np.isnan(float(mde.sel(model="a", model_b="b")))
    assert "one seed" in mde.attrs["nan_reason"]


def test_cube_with_seeds_and_allocation(rng):
    _, cube = _item_cube(rng, n_boot=300, n_seeds=3)
    table = eq.power.compute_allocation(cube)
    assert table.index.tolist() == ["items", "seeds", "languages"]
    assert table.loc["items", "now"] == 400
    assert table.loc["seeds", "next"] == 6
    assert table.best.sum() == 1
    assert not table.loc["languages", "best"]
    assert "buy the most" in table.attrs["summary"]
    # items: only the test-set part halves
    d = eq.power.design(cube)
    assert table.loc["items", "mde_next"] == pytest.approx(
        float(minimum_detectable_effect(d, n_items=800).sel(model="a", model_b="b")))


def test_grid_and_plot():
    d = design_from_sds(sd_item=0.5, sd_seed=0.03, n_seeds=3, n_items=200)
    grid = eq.power.mde_grid(d, n_items=[100, 1000], n_seeds=[2, 8])
    assert grid.dims == ("model", "model_b", "n_seeds", "n_items")
    assert ab(grid.sel(n_seeds=8, n_items=1000)) == pytest.approx(
        ab(minimum_detectable_effect(d, n_items=1000, n_seeds=8)))
    fig = eq.plots.mde_plot(grid, pair=("A", "B"))
    assert len(fig.axes[0].lines) == 2
    from matplotlib.figure import Figure
    ax = Figure().subplots()
    assert eq.plots.mde_plot(grid, ax=ax) is ax.figure
    with pytest.raises(TypeError, match="`grid` must be the DataArray of eq.power.mde_grid"):
        eq.plots.mde_plot(d)


def test_bad_input(rng):
    d = design_from_sds(sd_item=0.5, n_items=100)
    with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\); got 1.5"):
        minimum_detectable_effect(d, alpha=1.5)
    with pytest.raises(ValueError, match=r"`power` must be in \(0, 1\); got 0"):
        minimum_detectable_effect(d, power=0.0)
    with pytest.raises(ValueError, match="`scope` must be one of 'benchmark', 'population'"):
        minimum_detectable_effect(d, scope="world")
    with pytest.raises(ValueError, match="`vary` must be one of 'items', 'seeds', 'languages'"):
        sample_size(d, 0.1, vary="epochs")
    with pytest.raises(ValueError, match="`effect` must be a finite nonzero difference"):
        sample_size(d, 0.0)
    with pytest.raises(TypeError, match="`effect` must be a number or a DataArray"):
        sample_size(d, "big")
    with pytest.raises(ValueError, match="`n_items` must be >= 1; got 0"):
        minimum_detectable_effect(d, n_items=0)
    with pytest.raises(ValueError, match="`n_languages` must be >= 2; got 1"):
        minimum_detectable_effect(d, n_languages=1, scope="population")
    with pytest.raises(ValueError, match=r"`correlation` must be in \[-1, 1\]; got 2"):
        design_from_sds(sd_item=0.5, n_items=10, correlation=2.0)
    with pytest.raises(ValueError, match=r"`sd_item` must be in \[0, inf\]; got -1"):
        design_from_sds(sd_item=-1.0, n_items=10)
    with pytest.raises(ValueError, match=r"`factor` must be in \(1, inf\]; got 1"):
        eq.power.compute_allocation(d, factor=1.0)
    with pytest.raises(TypeError, match="`cube` must be a cube or a design"):
        minimum_detectable_effect(np.zeros(3))
    cube = eq.simulate_cube(rng=0)
    with pytest.raises(CubeError, match="`n_items` needs the cube's items per language"):
        minimum_detectable_effect(cube, n_items=100)
    no_boot = cube.drop_vars("boot_score")
    with pytest.raises(CubeError, match="power needs a cube with `boot_score`"):
        minimum_detectable_effect(no_boot)


def test_effect_as_dataarray():
    d = design_from_sds(sd_item=0.5, n_items=100)
    effect = xr.DataArray([[1.0, 0.05], [0.1, 1.0]], dims=("model", "model_b"),
                          coords={"model": ["A", "B"], "model_b": ["A", "B"]})
    n = sample_size(d, effect)
    assert float(n.sel(model="A", model_b="B")) > float(n.sel(model="B", model_b="A"))


# --- calibration (slow) --------------------------------------------------------------------------

@pytest.mark.slow
def test_power_at_the_mde_by_simulation():
    """Items: data sets simulated with the true difference equal to the MDE are detected by
    the paired z-test of item_means with probability ~0.8."""
    gen = np.random.default_rng(1801)
    n_rep, n_items, rho, sd = 1500, 300, 0.5, 1.0
    d = design_from_sds(sd_item=sd, correlation=rho, n_items=n_items)
    delta = ab(minimum_detectable_effect(d))
    z = gen.normal(size=(n_rep, 2, n_items))
    a = sd * z[:, 0]
    b = sd * (rho * z[:, 0] + np.sqrt(1 - rho**2) * z[:, 1]) - delta
    frames = [pd.DataFrame({"m": m, "l": np.repeat(np.arange(n_rep), n_items),
                            "i": np.tile(np.arange(n_items), n_rep), "v": x.ravel()})
              for m, x in (("a", a), ("b", b))]
    res = eq.item_means(pd.concat(frames), model="m", item="i", score="v", language="l")
    pair = res.sel(model="a", model_b="b")
    rejected = int((np.abs(pair.difference / pair.se_difference) > 1.959963984540054).sum())
    print(f"\nCALIBRATION | power.minimum_detectable_effect, items (paired z-test) | power | "
          f"nominal 0.800 | measured {rejected / n_rep:.4f} | n {n_rep} | binomial SE "
          f"{np.sqrt(0.16 / n_rep):.4f}")
    assert abs(rejected - 0.8 * n_rep) <= 4 * np.sqrt(n_rep * 0.8 * 0.2)


@pytest.mark.slow
def test_power_with_few_languages_t_correction():
    """Population scope, 5 languages: the one-sample t-test over languages (df 4) at the MDE.

    The closed form (t_{1-a/2} + t_{power}) approximates the noncentral-t power; the exact
    power at this design is printed beside the simulated one.
    """
    gen = np.random.default_rng(1802)
    n_rep, n_lang, tau = 20000, 5, 0.05
    d = design_from_sds(sd_item=0.5, n_items=10**12, sd_language=tau, n_languages=n_lang)
    delta = ab(minimum_detectable_effect(d, scope="population"))
    diffs = delta + tau * gen.normal(size=(n_rep, n_lang))
    t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / np.sqrt(n_lang))
    crit = stats.t.ppf(0.975, n_lang - 1)
    measured = float(np.mean(np.abs(t) > crit))
    ncp = delta / (tau / np.sqrt(n_lang))
    exact = float(stats.nct.sf(crit, n_lang - 1, ncp) + stats.nct.cdf(-crit, n_lang - 1, ncp))
    print(f"\nCALIBRATION | power.minimum_detectable_effect, 5 languages (t, df 4; exact "
          f"noncentral-t power {exact:.4f}) | power | nominal 0.800 | measured {measured:.4f} "
          f"| n {n_rep} | binomial SE {np.sqrt(0.16 / n_rep):.4f}")
    assert abs(measured - exact) <= 4 * np.sqrt(exact * (1 - exact) / n_rep)
    assert abs(measured - 0.8) < 0.05
    z_only = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * tau / np.sqrt(n_lang)
    assert z_only < delta      # without the t correction the MDE would be too small


def test_absent_cells_give_nan_without_warnings(rng):
    rows = [(m, lang, s, i, float(rng.random() < 0.6)) for m in "abc" for lang in "xy"
            for s in range(3) for i in range(30)]
    df = pd.DataFrame(rows, columns=["m", "l", "s", "i", "v"])
    KW = {"model": "m", "item": "i", "score": "v", "language": "l", "seed": "s"}
    df = df[~((df.m == "c") & (df.l == "y"))]
    df = df[~((df.m == "a") & (df.s == 2))]
    cube = eq.from_items(df, **KW, n_boot=100)
    mde = minimum_detectable_effect(cube, scope="population")
    assert np.isnan(float(mde.sel(model="a", model_b="c")))      # c has one language
    assert np.isfinite(float(mde.sel(model="a", model_b="b")))
    bench = minimum_detectable_effect(cube)
    assert np.isfinite(bench.sel(model="a", model_b="c"))
    table = eq.power.compute_allocation(cube)
    assert table.loc["seeds", "now"] == 3


def test_design_reads_the_cubes_variance_components(rng):
    _, cube = _item_cube(rng, n_boot=500, n_seeds=3, seeds_are="runs")
    d = eq.power.design(cube)
    vc = eq.variance_components(cube)
    np.testing.assert_allclose(d.var_seed.values, vc.sigma_seed.values**2, rtol=1e-12)
    boot = cube.boot_score.sel(language="all")
    direct = (boot.sel(model="a") - boot.sel(model="b")).var("bootstrap", ddof=1).mean("seed")
    assert float(d.var_test.sel(model="a", model_b="b", language="all")) == pytest.approx(
        float(direct), rel=1e-10)
    # the diagonal of the replicates' covariance is the squared bootstrap SD of each model
    va = boot.sel(model="a").var("bootstrap", ddof=1).mean("seed")
    vb = boot.sel(model="b").var("bootstrap", ddof=1).mean("seed")
    rho = float(d.correlation.sel(model="a", model_b="b", language="all"))
    assert float(direct) == pytest.approx(float(va + vb) - 2 * rho * np.sqrt(float(va * vb)),
                                          rel=0.02)


@pytest.mark.slow
def test_power_with_few_seeds_t_correction():
    """Seeds only (3 per model, one language): the two-sample t-test (df 4) at the MDE."""
    gen = np.random.default_rng(1803)
    n_rep, s, sd = 20000, 3, 0.02
    d = design_from_sds(sd_item=0.5, n_items=10**12, sd_seed=sd, n_seeds=s)
    delta = ab(minimum_detectable_effect(d))
    a = delta + sd * gen.normal(size=(n_rep, s))
    b = sd * gen.normal(size=(n_rep, s))
    t = stats.ttest_ind(a, b, axis=1).statistic
    crit = stats.t.ppf(0.975, 2 * s - 2)
    measured = float(np.mean(np.abs(t) > crit))
    ncp = delta / (sd * np.sqrt(2 / s))
    exact = float(stats.nct.sf(crit, 2 * s - 2, ncp) + stats.nct.cdf(-crit, 2 * s - 2, ncp))
    print(f"\nCALIBRATION | power.minimum_detectable_effect, 3 seeds per model (t, df 4; exact "
          f"noncentral-t power {exact:.4f}) | power | nominal 0.800 | measured {measured:.4f} "
          f"| n {n_rep} | binomial SE {np.sqrt(0.16 / n_rep):.4f}")
    assert abs(measured - exact) <= 4 * np.sqrt(exact * (1 - exact) / n_rep)
    assert abs(measured - 0.8) < 0.05


def _epoch_table(rng, n_items=400, n_epochs=5):
    """Two models sharing item difficulties, 0/1 scores, several epochs per item."""
    b = rng.normal(0.0, 1.2, n_items)
    rows = []
    for m, shift in (("a", 0.0), ("b", 0.3)):
        p = 1 / (1 + np.exp(-(shift - b)))
        y = rng.random((n_epochs, n_items)) < p
        rows += [pd.DataFrame({"m": m, "i": np.arange(n_items), "e": e, "v": y[e] * 1.0})
                 for e in range(n_epochs)]
    return pd.concat(rows, ignore_index=True)


def test_epoch_design_splits_item_and_within_item_variance(rng):
    """Epochs are not seeds: the within-item variance is counted once (it sits in the item
    bootstrap of the epochs' mean) and shrinks with the items; the SE matches the analytic
    paired SE of the item means, and the epoch-to-epoch part matches var_within / n."""
    df = _epoch_table(rng)
    cube = eq.from_items(df, model="m", item="i", score="v", seed="e", n_boot=4000, rng=2)
    assert cube.attrs["seeds_are"] == "epochs"
    res = eq.item_means(df, model="m", item="i", score="v", seed="e")
    d = eq.power.design(cube)
    assert d.attrs["seeds_are"] == "epochs"
    np.testing.assert_allclose(d.var_seed.sel(language="all").values,
                               res.var_within.values / 400, rtol=0.08)
    se = float(res.se_difference.sel(model="a", model_b="b"))
    mde = minimum_detectable_effect(cube)
    assert float(mde.sel(model="a", model_b="b")) == pytest.approx(FACTOR * se, rel=0.05)
    # one epoch instead of five: the within part counted once per epoch's mean
    one = float(minimum_detectable_effect(cube, n_seeds=1).sel(model="a", model_b="b"))
    singles = [float(eq.item_means(df[df.e == e], model="m", item="i", score="v")
                     .se_difference_iid.sel(model="a", model_b="b")) ** 2 for e in range(5)]
    assert one == pytest.approx(FACTOR * np.sqrt(np.mean(singles)), rel=0.08)
    # the within part shrinks with the items too: 4x the items halve the MDE exactly
    quarter = float(minimum_detectable_effect(cube, n_items=1600).sel(model="a", model_b="b"))
    assert quarter == pytest.approx(float(mde.sel(model="a", model_b="b")) / 2, rel=1e-12)
    # runs instead: the old decomposition, which adds the epochs' variance a second time
    runs = eq.from_items(df, model="m", item="i", score="v", seed="e", n_boot=4000, rng=2,
                         seeds_are="runs")
    wider = float(minimum_detectable_effect(runs).sel(model="a", model_b="b"))
    assert wider > 1.2 * float(mde.sel(model="a", model_b="b"))


def test_epoch_cube_resamples_the_epochs_mean(rng):
    """resample's default for an epoch cube is seeds="mean": the SD of a model's resampled
    score and of a paired difference match the analytic SEs; "bootstrap" counts the epochs'
    variance twice."""
    df = _epoch_table(rng)
    cube = eq.from_items(df, model="m", item="i", score="v", seed="e", n_boot=4000, rng=2)
    res = eq.item_means(df, model="m", item="i", score="v", seed="e")
    r = eq.resample(cube, n_resamples=4000, replication="nonparametric", rng=0)
    assert r.attrs["seeds"] == "mean"
    assert (r.drawn_seed_count == 1).all()
    diff = r.score.sel(model="b") - r.score.sel(model="a")
    se = float(res.se_difference.sel(model="a", model_b="b"))
    assert float(diff.std()) == pytest.approx(se, rel=0.06)
    assert float(r.score.sel(model="a").std()) == pytest.approx(
        float(res.se.sel(model="a")), rel=0.06)
    twice = eq.resample(cube, n_resamples=4000, replication="nonparametric", rng=0,
                        seeds="bootstrap")
    assert float((twice.score.sel(model="b") - twice.score.sel(model="a")).std()) > 1.3 * se
    par = eq.resample(cube, n_resamples=4000, replication="parametric", rng=0)
    assert float(par.score.sel(model="a").std()) == pytest.approx(
        float(res.se.sel(model="a")), rel=0.06)
    assert "mean over epochs" in par.attrs["test_set_noise"]


def test_seeds_are_is_validated():
    df = pd.DataFrame({"m": ["a", "b"], "i": [1, 1], "v": [1.0, 0.0]})
    with pytest.raises(ValueError, match="`seeds_are` must be one of 'epochs', 'runs'"):
        eq.from_items(df, model="m", item="i", score="v", seeds_are="folds")


@pytest.mark.slow
def test_epoch_cube_calibration():
    """Epoch cubes by simulation (fresh items each time: 2 models x 200 items x 4 epochs,
    logit item effects SD 1.2, true difference over the item population by quadrature): the
    95% interval of the resampled difference covers at the nominal rate with the default
    seeds="mean", the SE that power reads matches the SD of the observed differences, and
    redrawing the epochs as well over-covers."""
    gen = np.random.default_rng(20261124)
    n_sets, n_items, n_epochs, shift, sd = 300, 200, 4, 0.3, 1.2
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    truth = float(weights @ (1 / (1 + np.exp(-(shift - sd * nodes)))
                             - 1 / (1 + np.exp(sd * nodes))) / weights.sum())
    hits = {"mean": 0, "bootstrap": 0}
    observed, predicted = [], []
    for _ in range(n_sets):
        df = _epoch_table(gen, n_items=n_items, n_epochs=n_epochs)
        cube = eq.from_items(df, model="m", item="i", score="v", seed="e", n_boot=1000,
                             rng=gen)
        observed.append(float(cube.score.mean("seed").sel(model="b", language="all")
                              - cube.score.mean("seed").sel(model="a", language="all")))
        v = float(minimum_detectable_effect(cube).sel(model="a", model_b="b")) / FACTOR
        predicted.append(v)
        for mode in hits:
            r = eq.resample(cube, n_resamples=1000, replication="nonparametric", rng=gen,
                            seeds=mode)
            d = (r.score.sel(model="b") - r.score.sel(model="a")).values.ravel()
            lo, hi = np.percentile(d, [2.5, 97.5])
            hits[mode] += lo <= truth <= hi
    cover = {k: v / n_sets for k, v in hits.items()}
    ratio = float(np.mean(predicted) / np.std(observed, ddof=1))
    print(f"CALIBRATION epoch cube (2 models x {n_items} items x {n_epochs} epochs, "
          f"{n_sets} sets): 95% coverage seeds='mean' {cover['mean']:.3f}, "
          f"seeds='bootstrap' {cover['bootstrap']:.3f}; power SE / SD of the difference "
          f"{ratio:.3f}")
    se = np.sqrt(0.95 * 0.05 / n_sets)
    assert abs(cover["mean"] - 0.95) < 3 * se
    assert cover["bootstrap"] > cover["mean"]
    assert ratio == pytest.approx(1.0, abs=0.1)

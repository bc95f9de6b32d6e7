"""``runs="crossed"``: several runs (seeds) per system scored on ONE shared test set.

Data-generating process (``_simulate``): binary targets; system s, run r is correct on item i
with probability ``expit(theta_s + b_i + v_si + g_sr)``: an item difficulty ``b_i`` shared by
both systems and all runs, a system-by-item effect ``v_si`` shared by all runs of system s
(what makes the test-set error of delta common to every run), a run effect ``g_sr`` and the
Bernoulli noise of each (run, item) pair. The true SD of the pooled delta is the SD over many
simulated test sets (fresh items and fresh runs).

Measured (this module's simulation, N = 300, R = 5, 4000 MC test sets vs the mean bootstrap
variance over 40 data sets, B = 1000), bootstrap SD / true SD of delta accuracy:

================================  ======  =========  =======================  =========
sd of (b, v, g)                   pooled  two-level  crossed, raw pigeonhole  crossed
================================  ======  =========  =======================  =========
(3, 2, 0.05): shared items        0.64    0.81       1.20                     1.02
(2, 1.5, 0): no run effect        0.71    0.89       1.27                     1.02
(2.5, 1, 0.3): large run effect   0.49    0.98       1.12                     1.04
================================  ======  =========  =======================  =========

The raw pigeonhole bootstrap (items drawn once for all runs, runs drawn with replacement)
counts the run-by-item interaction about three times; ``"crossed"`` rescales its deviations
to the two-way random-effects variance (``_engine.crossed_variance_scale``).

Null rejection rates at p <= .05 (800 null data sets, N = 150, R = 4, B = 199): shared
items (3, 2, 0.05): pooled 0.173, two-level 0.111, crossed 0.0625; large run effect
(2.5, 1, 0.3): pooled 0.220, two-level 0.085, crossed 0.106 (with 4 runs the run component
of the resample distribution is estimated from 4 values: its tails are too light, as for a
normal interval where a t with 3 df is due; no run bootstrap fixes that).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

import evaluq as eq
from evaluq.metrics._base import get_metric
from evaluq.significance import _engine
from evaluq.significance._bootstrap import compare_runs

ALPHA = 0.05


def _simulate(rng, n_sets, n_items, n_runs, sd=(3.0, 2.0, 0.05), theta=(1.2, 1.2)):
    """Targets ``(n_sets, N)`` and predictions ``(n_sets, 2, R, N)`` (see module doc)."""
    sd_item, sd_sys, sd_run = sd
    y = rng.integers(0, 2, (n_sets, n_items))
    b = rng.normal(0, sd_item, (n_sets, 1, 1, n_items))
    v = rng.normal(0, sd_sys, (n_sets, 2, 1, n_items))
    g = rng.normal(0, sd_run, (n_sets, 2, n_runs, 1))
    p = expit(np.asarray(theta)[None, :, None, None] + b + v + g)
    correct = rng.random((n_sets, 2, n_runs, n_items)) < p
    return y, np.where(correct, y[:, None, None, :], 1 - y[:, None, None, :])


def _delta(y, preds):
    return ((preds[:, 1] == y[:, None]).mean(axis=(1, 2))
            - (preds[:, 0] == y[:, None]).mean(axis=(1, 2)))


def _test(y, preds, runs, **kw):
    n_runs = preds.shape[1]
    kw = {"metrics": ["accuracy"], "method": "paired", "n_resamples": 400} | kw
    return compare_runs([y] * n_runs, list(preds[0]), list(preds[1]), runs=runs, **kw)


def test_crossed_sd_matches_monte_carlo():
    """Mean crossed bootstrap variance of delta = variance over simulated test sets, within
    4 MC standard errors; the pooled bootstrap understates it (SD ratio about 0.64)."""
    rng = np.random.default_rng(11)
    n_items, n_runs = 200, 4
    y, preds = _simulate(rng, 4000, n_items, n_runs)
    d = _delta(y, preds)
    true_var = d.var(ddof=1)
    se_true = true_var * np.sqrt(2 / (d.size - 1))
    n_sets = 60
    crossed = np.array([_test(y[k], preds[k], "crossed", rng=k).distribution[0].var()
                        for k in range(n_sets)])
    pooled = np.array([_test(y[k], preds[k], "pooled", rng=k).distribution[0].var()
                       for k in range(n_sets)])
    se_boot = crossed.std(ddof=1) / np.sqrt(n_sets)
    assert abs(crossed.mean() - true_var) <= 4 * np.hypot(se_boot, se_true)
    assert np.sqrt(pooled.mean() / true_var) < 0.8


def test_raw_crossed_draw_matches_pigeonhole_variance():
    """The engine's raw draws (before rescaling) have the pigeonhole variance
    ``SA/(N s) + SB/R^2 + SE/(N s R^2)`` of the pooled per-(run, item) differences, for the
    full size and for a Berg-Kirkpatrick sub-sample; and the rescaling factor turns it into
    the ANOVA variance."""
    rng = np.random.default_rng(3)
    y, preds = _simulate(rng, 1, 120, 3, sd=(1.0, 1.0, 0.3))
    y, preds = y[0], preds[0]
    acc = get_metric("accuracy")
    units, widths = _engine.make_crossed_units([acc], y, list(preds[0]), list(preds[1]), 2,
                                               True)
    x = (preds[1] == y).astype(float) - (preds[0] == y)        # (R, N)
    n_runs, n = x.shape
    a = x.mean(axis=0) - x.mean()
    b = x.mean(axis=1) - x.mean()
    e = x - x.mean() - a[None] - b[:, None]
    sa, sb, se = (a**2).sum(), (b**2).sum(), (e**2).sum()
    for fraction in (None, 0.5):
        s = round((fraction or 1.0) * n)
        parts = list(_engine.iter_crossed_sums(rng, units, 40000, fraction))
        s0 = np.concatenate([p[0] for p in parts])
        s1 = np.concatenate([p[1] for p in parts])
        t = np.concatenate([p[2] for p in parts])
        assert np.all(t == s * n_runs)
        dist = (s1[:, 0] - s0[:, 0]) / t
        v_boot = sa / (n * s) + sb / n_runs**2 + se / (n * s * n_runs**2)
        # variance of a sample variance: SE about var * sqrt(2 / B) (normal-ish)
        assert abs(dist.var() / v_boot - 1) < 4 * np.sqrt(2 / dist.size) + 0.01
        k = _engine.crossed_variance_scale([acc], _engine.metric_slices([acc], widths), units,
                                           2, np.array([x.mean()]), s)
        var_e = se / ((n - 1) * (n_runs - 1))
        var_a = sa / (n - 1) - var_e / n_runs
        var_b = sb / (n_runs - 1) - var_e / n
        v = max(var_a / s + var_b / n_runs + var_e / (s * n_runs), var_e / (s * n_runs))
        np.testing.assert_allclose(k[0] ** 2, v / v_boot, rtol=1e-10)


def test_items_drawn_once_for_all_runs():
    """Runs with identical predictions: the crossed draw gives every run the same items, so
    the resampled delta equals that of one run (a nested draw would shrink it by sqrt(R))."""
    rng = np.random.default_rng(5)
    y, preds = _simulate(rng, 1, 300, 1)
    y, p = y[0], preds[0, :, 0]
    one = compare_runs([y], [p[0]], [p[1]], metrics=["accuracy"], method="paired",
                       n_resamples=3000, rng=1)
    many = compare_runs([y] * 4, [p[0]] * 4, [p[1]] * 4, metrics=["accuracy"],
                        method="paired", runs="crossed", n_resamples=3000, rng=1)
    nested = compare_runs([y] * 4, [p[0]] * 4, [p[1]] * 4, metrics=["accuracy"],
                          method="paired", runs="two-level", n_resamples=3000, rng=1)
    assert many.delta[0] == pytest.approx(one.delta[0])
    sd1, sdc, sdn = (r.distribution[0].std() for r in (one, many, nested))
    assert sdc == pytest.approx(sd1, rel=0.06)
    assert sdn == pytest.approx(sd1 / 2, rel=0.06)


@pytest.mark.parametrize("kind", ["hard", "soft", "regression"])
def test_observed_values_are_the_pooled_ones(kind):
    rng = np.random.default_rng(8)
    n, n_runs = 80, 3
    if kind == "hard":
        y = rng.integers(0, 3, n)
        a = [rng.integers(0, 3, n) for _ in range(n_runs)]
        b = [rng.integers(0, 3, n) for _ in range(n_runs)]
    elif kind == "soft":
        y = rng.dirichlet(np.ones(3), n)
        a = [rng.dirichlet(np.ones(3), n) for _ in range(n_runs)]
        b = [rng.dirichlet(np.ones(3), n) for _ in range(n_runs)]
    else:
        y = rng.normal(size=n)
        a = [y + rng.normal(size=n) for _ in range(n_runs)]
        b = [y + rng.normal(size=n) for _ in range(n_runs)]
    pooled = compare_runs([y] * n_runs, a, b, method="paired", n_resamples=50, rng=0)
    crossed = compare_runs([y] * n_runs, a, b, method="paired", runs="crossed",
                           n_resamples=50, rng=0)
    np.testing.assert_allclose(crossed.delta, pooled.delta, rtol=1e-12, atol=1e-15)
    # two-level too (its per-item statistics were once centred per run, which broke the
    # pooled sums of entropy correlation)
    two = compare_runs([y] * n_runs, a, b, method="paired", runs="two-level",
                       n_resamples=50, rng=0)
    np.testing.assert_allclose(two.delta, pooled.delta, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(crossed.h0_value, pooled.h0_value, rtol=1e-12)
    assert crossed.runs == "crossed"
    assert crossed.n_runs == n_runs
    assert crossed.n_items == n * n_runs
    assert crossed.sample_n == n * n_runs
    assert np.isfinite(crossed.distribution).all()
    assert np.isfinite(crossed.confidence_interval(0.9)).all()


def test_same_rng_same_numbers_and_one_run_is_pooled():
    rng = np.random.default_rng(2)
    y, preds = _simulate(rng, 1, 100, 3)
    a = _test(y[0], preds[0], "crossed", rng=7, metrics=["accuracy", "f1"])
    b = _test(y[0], preds[0], "crossed", rng=7, metrics=["accuracy", "f1"])
    c = _test(y[0], preds[0], "crossed", rng=8, metrics=["accuracy", "f1"])
    np.testing.assert_array_equal(a.distribution, b.distribution)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    assert not np.array_equal(a.distribution, c.distribution)
    bk = _test(y[0], preds[0], "crossed", rng=7, method="berg-kirkpatrick", sample_size=0.2)
    assert bk.sample_n == 3 * 20
    assert bk.runs == "crossed"
    one = _test(y[0], preds[0][:, :1], "crossed", rng=7)
    ref = _test(y[0], preds[0][:, :1], "pooled", rng=7)
    assert one.runs == "pooled"
    np.testing.assert_array_equal(one.distribution, ref.distribution)


def test_infinite_statistics_keep_the_raw_draw():
    """A cross-entropy of +inf (a zero probability on the target) leaves no NaN."""
    rng = np.random.default_rng(4)
    y = rng.dirichlet(np.ones(3), 40)
    y[0] = [1.0, 0.0, 0.0]
    a = [rng.dirichlet(np.ones(3), 40) for _ in range(2)]
    b = [rng.dirichlet(np.ones(3), 40) for _ in range(2)]
    a[0][0] = [0.0, 0.5, 0.5]
    res = compare_runs([y, y], a, b, metrics=["cross_entropy", "js_divergence"],
                       method="paired", runs="crossed", n_resamples=200, rng=0)
    assert not np.isnan(res.distribution).any()


def test_crossed_errors():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    p = [rng.integers(0, 2, 50) for _ in range(3)]
    with pytest.raises(ValueError, match="run 0 has 50 items but run 1 has 49"):
        compare_runs([y, y[:49]], [p[0], p[1][:49]], [p[0], p[1][:49]], runs="crossed",
                     method="paired")
    y2 = y.copy()
    y2[3] = 1 - y2[3]
    with pytest.raises(ValueError, match=r"runs 0 and 2 have different targets \(first at "
                                         r"item 3\)"):
        compare_runs([y, y, y2], p, p, runs="crossed", method="paired")
    with pytest.raises(ValueError, match=r"runs 'seed1' and 'seed3' have different targets"):
        compare_runs([y, y2], p[:2], p[:2], runs="crossed", method="paired",
                     run_names=["seed1", "seed3"])
    with pytest.raises(ValueError, match="`runs` 'crossed' is a bootstrap"):
        compare_runs([y, y], p[:2], p[:2], runs="crossed", method="permutation")
    with pytest.raises(ValueError, match="`run_names` must name the 2 runs; got 3 names"):
        compare_runs([y, y], p[:2], p[:2], runs="crossed", run_names=["a", "b", "c"])


def test_experiment_crossed():
    rng = np.random.default_rng(6)
    y, preds = _simulate(rng, 1, 200, 3)
    exp = eq.Experiment()
    for r in range(3):
        exp.feed("base", run=f"s{r}", targets=y[0], predictions=preds[0, 0, r])
        exp.feed("base", h1="new", run=f"s{r}", targets=y[0], predictions=preds[0, 1, r])
    out = exp.run(metrics="accuracy", method="paired", runs="crossed", n_resamples=200, rng=0)
    res = out[("base", "new")]
    assert res.runs == "crossed"
    assert res.n_runs == 3
    assert "crossed" in set(out.to_dataframe()["runs"])
    bad = eq.Experiment()
    for r in range(2):
        t = y[0] if r == 0 else np.roll(y[0], 1)
        bad.feed("base", run=f"s{r}", targets=t, predictions=preds[0, 0, r])
        bad.feed("base", h1="new", run=f"s{r}", targets=t, predictions=preds[0, 1, r])
    with pytest.raises(ValueError, match="'base' vs 'new': .* runs 's0' and 's1' have "
                                         "different targets"):
        bad.run(metrics="accuracy", method="paired", runs="crossed")


@pytest.mark.slow
def test_crossed_null_rejection_rate_is_nominal_and_pooled_is_not():
    """Null (exchangeable systems) on a shared test set: the crossed paired test rejects at
    p <= .05 within binomial error of 5%; the pooled test, which ignores that all runs share
    the test-set error, rejects far more often."""
    rng = np.random.default_rng(2024)
    n_sets, n_items, n_runs = 800, 150, 4
    y, preds = _simulate(rng, n_sets, n_items, n_runs)
    p_crossed = np.array([_test(y[k], preds[k], "crossed", rng=k, n_resamples=199).pvalue[0]
                          for k in range(n_sets)])
    p_pooled = np.array([_test(y[k], preds[k], "pooled", rng=k, n_resamples=199).pvalue[0]
                         for k in range(n_sets)])
    bound = 4 * np.sqrt(n_sets * ALPHA * (1 - ALPHA))
    rejections = int((p_crossed <= ALPHA).sum())
    print(f"\nCALIBRATION | compare_runs runs='crossed', paired, shared test set | null rejection "
          f"rate | nominal {ALPHA:.3f} | measured {rejections / n_sets:.4f} | n {n_sets}")
    assert abs(rejections - n_sets * ALPHA) <= bound, rejections
    assert (p_pooled <= ALPHA).sum() > n_sets * ALPHA + bound


def test_many_classes_and_runs_use_row_cells():
    """20 labels x 8 runs do not fit one int64 key per item: the cells are the distinct
    rows of the per-run codes; the observed values are still the pooled ones."""
    rng = np.random.default_rng(9)
    n, n_runs = 400, 8
    y = rng.integers(0, 20, n)
    a = [np.where(rng.random(n) < 0.9, y, rng.integers(0, 20, n)) for _ in range(n_runs)]
    b = [np.where(rng.random(n) < 0.9, y, rng.integers(0, 20, n)) for _ in range(n_runs)]
    pooled = compare_runs([y] * n_runs, a, b, metrics=["accuracy", "f1"], method="paired",
                          n_resamples=100, rng=0)
    crossed = compare_runs([y] * n_runs, a, b, metrics=["accuracy", "f1"], method="paired",
                           runs="crossed", n_resamples=100, rng=0)
    np.testing.assert_allclose(crossed.delta, pooled.delta, rtol=1e-12)
    assert np.isfinite(crossed.distribution).all()

"""Tests of evaluq.bootstrap_test: numbers, orientation, engines, intervals, validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats
import xarray as xr
from sklearn.metrics import accuracy_score, f1_score

import evaluq as eq
from evaluq.metrics import get_metric
from evaluq.significance import _engine
from evaluq.significance._bootstrap import compare_runs

METHODS = ("berg-kirkpatrick", "paired", "permutation")


def _hard(rng: np.random.Generator, n: int = 400, k: int = 3, acc0: float = 0.6,
          acc1: float = 0.7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = rng.integers(0, k, n)
    h0 = np.where(rng.random(n) < acc0, y, rng.integers(0, k, n))
    h1 = np.where(rng.random(n) < acc1, y, rng.integers(0, k, n))
    return y, h0, h1


def _soft(rng: np.random.Generator, n: int = 300, k: int = 3, noise0: float = 1.0,
          noise1: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    logits = rng.normal(size=(n, k)) * 2
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)

    def predict(noise: float) -> np.ndarray:
        z = logits + rng.normal(scale=noise, size=(n, k))
        return np.exp(z) / np.exp(z).sum(1, keepdims=True)

    return p, predict(noise0), predict(noise1)


# --- basic behaviour ----------------------------------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_same_rng_same_numbers(rng, method):
    y, h0, h1 = _hard(rng)
    a = eq.bootstrap_test(y, h0, h1, method=method, n_resamples=300, rng=7)
    b = eq.bootstrap_test(y, h0, h1, method=method, n_resamples=300,
                          rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a.distribution, b.distribution)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    c = eq.bootstrap_test(y, h0, h1, method=method, n_resamples=300, rng=8)
    assert not np.array_equal(a.distribution, c.distribution)


def test_observed_values_equal_metrics(rng):
    y, h0, h1 = _hard(rng, k=4)
    res = eq.bootstrap_test(y, h0, h1, n_resamples=50, rng=0)
    assert res.metrics == ("f1", "accuracy", "precision", "recall")
    f1 = list(res.metrics).index("f1")
    acc = list(res.metrics).index("accuracy")
    assert res.h0_value[acc] == pytest.approx(accuracy_score(y, h0), abs=1e-15)
    assert res.h1_value[acc] == pytest.approx(accuracy_score(y, h1), abs=1e-15)
    assert res.h1_value[f1] == pytest.approx(f1_score(y, h1, average="macro"), abs=1e-12)
    assert res.delta[acc] == pytest.approx(accuracy_score(y, h1) - accuracy_score(y, h0))


def test_soft_observed_values_and_orientation(rng):
    p, q0, q1 = _soft(rng, noise0=1.5, noise1=0.3)
    res = eq.bootstrap_test(p, q0, q1, method="paired", n_resamples=200, rng=0)
    assert res.metrics == ("cross_entropy", "js_divergence", "entropy_similarity",
                           "entropy_correlation")
    for i, name in enumerate(res.metrics):
        m = get_metric(name)
        v0, v1 = float(m(p, q0, 3)), float(m(p, q1, 3))
        assert res.h0_value[i] == pytest.approx(v0, rel=1e-12)
        assert res.h1_value[i] == pytest.approx(v1, rel=1e-12)
        sign = 1 if m.higher_is_better else -1
        assert res.delta[i] == pytest.approx(sign * (v1 - v0), rel=1e-12)
    # h1 is less noisy: better in CE and JSD, so delta > 0 in spite of CE going down
    assert res.delta[0] > 0
    assert res.h1_value[0] < res.h0_value[0]


def test_result_outputs(rng, tmp_path):
    y, h0, h1 = _hard(rng)
    res = eq.bootstrap_test(y, h0, h1, method="paired", n_resamples=200, rng=1,
                            h0_name="base", h1_name="new")
    df = res.to_dataframe()
    assert isinstance(df, pd.DataFrame)
    assert list(df.index) == list(res.metrics)
    ds = res.to_dataset()
    assert isinstance(ds, xr.Dataset)
    assert ds["distribution"].dims == ("metric", "resample")
    assert res.resamples.dims == ("metric", "resample")
    np.testing.assert_array_equal(res.resamples.sel(metric="accuracy"),
                                  res.distribution[list(res.metrics).index("accuracy")])
    assert ds["interval"].dims == ("metric", "ci_bound")
    assert ds.attrs["method"] == "paired"
    ds.to_netcdf(tmp_path / "result.nc")
    back = xr.open_dataset(tmp_path / "result.nc").load()
    np.testing.assert_array_equal(back["distribution"].values, res.distribution)
    assert list(back["significance"].values) == list(res.significance)
    text = repr(res)
    assert "'base'" in text
    assert "'new'" in text
    assert "accuracy" in text
    assert "<table>" in res._repr_html_()
    ci = res.confidence_interval(0.9, kind="percentile")
    expected = np.quantile(res.distribution, [0.05, 0.95], axis=-1).T
    np.testing.assert_allclose(ci.values, expected)
    assert ci.attrs["ci_kind"] == "percentile"
    assert res.interval.attrs["ci_kind"] == "bca"


def test_marks_and_zero_p_printout(rng):
    assert eq.significance.significance_mark(0.01) == "**"
    assert eq.significance.significance_mark(0.0100001) == "*"
    assert eq.significance.significance_mark(0.05) == "*"
    assert eq.significance.significance_mark(0.06) == ""
    y = rng.integers(0, 2, 2000)
    h1 = y.copy()
    h0 = np.where(rng.random(2000) < 0.6, y, 1 - y)
    res = eq.bootstrap_test(y, h0, h1, metrics="accuracy", sample_size=0.5,
                            n_resamples=200, rng=0)
    # formulas.md's errata: no p of 0, the observed data count as one resample
    assert res.count[0] == 0
    assert res.pvalue[0] == 1 / 201
    assert "p = 0.0050" in repr(res)
    assert res.significance == ("**",)


def test_berg_kirkpatrick_counts_definition(rng):
    y, h0, h1 = _hard(rng, acc0=0.65, acc1=0.68)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], sample_size=0.3,
                            n_resamples=500, rng=3)
    assert res.sample_n == round(0.3 * y.size)
    expected = np.sum(res.distribution[0] > 2 * res.delta[0])
    assert res.count[0] == expected
    assert res.pvalue[0] == (1 + expected) / 501


def test_paired_and_permutation_pvalue_definitions(rng):
    y, h0, h1 = _hard(rng, acc0=0.65, acc1=0.7)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="paired",
                            n_resamples=400, rng=3)
    d, dist = res.delta[0], res.distribution[0]
    assert res.pvalue[0] == (1 + np.sum(np.abs(dist - d) >= abs(d))) / 401
    perm = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="permutation",
                             n_resamples=400, rng=3)
    assert perm.pvalue[0] == (1 + np.sum(np.abs(perm.distribution[0]) >= abs(d))) / 401
    # the permutation distribution is centred on 0 (null), the bootstrap one on delta
    assert abs(perm.distribution.mean()) < 3 * perm.distribution.std() / 20
    assert abs(dist.mean() - d) < 3 * dist.std() / 20


def test_string_labels_and_files(tmp_path, rng):
    y, h0, h1 = _hard(rng, k=2)
    names = np.array(["neg", "pos"])
    paths = []
    for name, arr in (("t", y), ("a", h0), ("b", h1)):
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(names[arr]) + "\n")
        paths.append(f)
    res_files = eq.bootstrap_test(*paths, metrics="accuracy", n_resamples=100, rng=0)
    res_arrays = eq.bootstrap_test(y, h0, h1, metrics="accuracy", n_resamples=100, rng=0)
    np.testing.assert_array_equal(res_files.distribution, res_arrays.distribution)


# --- orientation (formulas.md §1 erratum) --------------------------------------------------------

def test_lower_is_better_orientation_cross_entropy(rng):
    p, q_bad, q_good = _soft(rng, n=400, noise0=2.0, noise1=0.2)
    better = eq.bootstrap_test(p, q_bad, q_good, metrics="cross_entropy", n_resamples=500,
                               rng=0)
    assert better.delta[0] > 0
    assert better.pvalue[0] <= 0.01
    worse = eq.bootstrap_test(p, q_good, q_bad, metrics="cross_entropy", n_resamples=500,
                              rng=0)
    assert worse.delta[0] < 0
    assert worse.pvalue[0] >= 0.5
    for method in ("paired", "permutation"):
        r = eq.bootstrap_test(p, q_bad, q_good, metrics="cross_entropy", method=method,
                              n_resamples=300, rng=0)
        assert r.pvalue[0] < 0.01


def test_boostsa_sign_rule_is_wrong_for_lower_is_better():
    """BooStSa 0.2.13 counts ``delta*_raw > -2 delta_raw`` for CE / JSD (raw = h1 - h0).

    On null data (h0 and h1 exchangeable) that rule rejects far more often than 5%
    (formulas.md: 22.5% at sample_size 0.5), the oriented rule almost never (the test is
    conservative). With f = 0.5 the wrong rule rejects when the chance advantage of h1
    exceeds about 0.78 standard errors: P(Z > 0.78) = 0.22.
    """
    gen = np.random.default_rng(11)
    n_sets, ours, theirs = 200, 0, 0
    for i in range(n_sets):
        p, q0, q1 = _soft(gen, n=200, noise0=1.0, noise1=1.0)
        r = eq.bootstrap_test(p, q0, q1, metrics="cross_entropy", n_resamples=200,
                              sample_size=0.5, rng=i)
        ours += r.pvalue[0] <= 0.05
        raw_delta, raw_dist = -r.delta[0], -r.distribution[0]   # CE(h1) - CE(h0)
        p_boostsa = np.mean(raw_dist > -2 * raw_delta)
        theirs += p_boostsa <= 0.05
    assert ours / n_sets <= 0.05
    assert theirs / n_sets >= 0.12


# --- engines ------------------------------------------------------------------------------------

def test_cell_engine_equals_index_engine_on_same_draws(rng):
    """Cell counts derived from drawn indices give exactly the metrics of the sub-sample."""
    y, h0, h1 = _hard(rng, n=300, k=3)
    metrics = [get_metric(m) for m in ("accuracy", "f1", "precision", "recall")]
    unit, widths = _engine.make_unit(metrics, y, h0, h1, 3, hard=True)
    slices = _engine.metric_slices(metrics, widths)
    assert unit.n_cells <= 27
    assert unit.n_items == 300
    code = (y * 3 + h0) * 3 + h1
    cells = np.unique(code)
    item_cell = np.searchsorted(cells, code)
    idx = rng.integers(0, 300, size=(20, 60))
    counts = np.stack([np.bincount(item_cell[row], minlength=unit.n_cells) for row in idx])
    s0, s1 = counts @ unit.stats0, counts @ unit.stats1
    v0 = _engine.values_from_sums(metrics, slices, s0, np.full(20, 60.0), 3)
    v1 = _engine.values_from_sums(metrics, slices, s1, np.full(20, 60.0), 3)
    for j, m in enumerate(metrics):
        for b in range(20):
            assert v0[j, b] == pytest.approx(float(m(y[idx[b]], h0[idx[b]], 3)), abs=1e-12)
            assert v1[j, b] == pytest.approx(float(m(y[idx[b]], h1[idx[b]], 3)), abs=1e-12)


def test_distinct_column_sums_equal_the_plain_product(rng):
    """Shared statistics (the confusion matrix behind F1, precision and recall) are
    multiplied once; the sums, the permutation sums and the whole test do not change."""
    y, h0, h1 = _hard(rng, n=3000, k=10)
    metrics = [get_metric(m) for m in ("f1", "accuracy", "precision", "recall")]
    unit, _ = _engine.make_unit(metrics, y, h0, h1, 10, hard=True)
    cols, inverse = unit.distinct01
    assert cols.shape[1] < unit.stats01.shape[1] / 2
    np.testing.assert_array_equal(cols[:, inverse], unit.stats01)
    counts = _engine.draw_counts(np.random.default_rng(3), unit, 1500, 50)
    np.testing.assert_array_equal(unit.sums01(counts), counts @ unit.stats01)
    # permutation sums against the plain product of the same swap draws
    swaps = np.random.default_rng(4).binomial(unit.counts, 0.5, size=(7, unit.n_cells))
    p0, p1, _ = _engine.permutation_sums(np.random.default_rng(4), unit, 7)
    moved = swaps.astype(float) @ (unit.stats1 - unit.stats0)
    t0, t1 = unit.totals()
    np.testing.assert_array_equal(p0, t0 + moved)
    np.testing.assert_array_equal(p1, t1 - moved)
    # chunked bootstrap sums: the plain products of one draw of all resamples' counts
    s0, s1, tot = _engine.bootstrap_sums(np.random.default_rng(6), [unit], 3000, None, False)
    counts = _engine.draw_counts(np.random.default_rng(6), unit, 3000, 3000)
    np.testing.assert_array_equal(s0, counts @ unit.stats0)
    np.testing.assert_array_equal(s1, counts @ unit.stats1)
    np.testing.assert_array_equal(tot, 3000)


def test_cell_and_item_engines_agree_in_distribution(rng):
    y, h0, h1 = _hard(rng, n=500, k=2, acc0=0.7, acc1=0.75)
    metrics = [get_metric("accuracy")]
    cell_unit, _ = _engine.make_unit(metrics, y, h0, h1, 2, hard=True)
    item_unit, _ = _engine.make_unit(metrics, y, h0, h1, 2, hard=False)
    assert item_unit.n_cells == 500
    assert cell_unit.n_cells <= 8
    b = 4000
    out = []
    for unit in (cell_unit, item_unit):
        s0, s1, tot = _engine.bootstrap_sums(np.random.default_rng(1), [unit], b, 0.2, False)
        np.testing.assert_array_equal(tot, 100)
        out.append((s1 - s0)[:, 0] / tot)
    # same mean and SD within Monte Carlo error
    se_mean = out[0].std() / np.sqrt(b)
    assert abs(out[0].mean() - out[1].mean()) < 5 * np.sqrt(2) * se_mean
    assert out[0].std() == pytest.approx(out[1].std(), rel=5 * np.sqrt(2 / b))
    # and the theoretical sub-sample SD of the difference of two 0/1 means
    d = (h1 == y).astype(float) - (h0 == y)
    assert out[0].std() == pytest.approx(d.std() / np.sqrt(100), rel=5 * np.sqrt(1 / b))


def test_soft_and_entropy_correlation_resamples(rng):
    """Per-item engine: resampled metric equals the metric of the drawn items."""
    p, q0, q1 = _soft(rng, n=80)
    metrics = [get_metric("entropy_correlation"), get_metric("js_divergence")]
    unit, widths = _engine.make_unit(metrics, p, q0, q1, 3, hard=False)
    slices = _engine.metric_slices(metrics, widths)
    idx = rng.integers(0, 80, size=(5, 80))
    counts = np.stack([np.bincount(row, minlength=80) for row in idx]).astype(float)
    v1 = _engine.values_from_sums(metrics, slices, counts @ unit.stats1, np.full(5, 80.0), 3)
    for j, m in enumerate(metrics):
        for b in range(5):
            assert v1[j, b] == pytest.approx(float(m(p[idx[b]], q1[idx[b]], 3)), rel=1e-9)


def test_permutation_cells_match_item_swaps(rng):
    """Swapping counts per cell is the same as swapping items."""
    y, h0, h1 = _hard(rng, n=200, k=3)
    metrics = [get_metric("f1")]
    cell_unit, _ = _engine.make_unit(metrics, y, h0, h1, 3, hard=True)
    item_unit, _ = _engine.make_unit(metrics, y, h0, h1, 3, hard=False)
    b = 3000
    dists = []
    for unit in (cell_unit, item_unit):
        s0, s1, tot = _engine.permutation_sums(np.random.default_rng(2), unit, b)
        dists.append((_engine.values_from_sums(metrics, [slice(0, 9)], s1, tot, 3)
                      - _engine.values_from_sums(metrics, [slice(0, 9)], s0, tot, 3))[0])
    assert abs(dists[0].mean()) < 5 * dists[0].std() / np.sqrt(b)
    assert dists[0].std() == pytest.approx(dists[1].std(), rel=5 * np.sqrt(2 / b))
    # one explicit swap: items of a cell swapped move exactly their statistics
    swap = rng.random(200) < 0.5
    a_sw, b_sw = np.where(swap, h1, h0), np.where(swap, h0, h1)
    code = (y * 3 + h0) * 3 + h1
    k = np.bincount(np.searchsorted(np.unique(code), code[swap]), minlength=cell_unit.n_cells)
    t0, _ = cell_unit.totals()
    moved = k @ (cell_unit.stats1 - cell_unit.stats0)
    f1 = get_metric("f1")
    assert float(f1.from_sums(t0 + moved, np.asarray(200.0), 3)) == pytest.approx(
        float(f1(y, a_sw, 3)), abs=1e-12)
    assert float(f1(y, b_sw, 3)) == pytest.approx(
        float(f1.from_sums(cell_unit.totals()[1] - moved, np.asarray(200.0), 3)), abs=1e-12)


# --- intervals ----------------------------------------------------------------------------------

def test_bca_matches_scipy(rng):
    n = 40
    y, h0, h1 = _hard(rng, n=n, k=2, acc0=0.6, acc1=0.75)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="paired",
                            n_resamples=2000, rng=5)

    def stat(t, a, b, axis=-1):
        return np.mean(b == t, axis=axis) - np.mean(a == t, axis=axis)

    class Previous:
        bootstrap_distribution = res.distribution[0]

    for level in (0.9, 0.95):
        ref = scipy.stats.bootstrap((y, h0, h1), stat, paired=True, method="BCa",
                                    n_resamples=0, bootstrap_result=Previous(),
                                    confidence_level=level, rng=0)
        ours = res.confidence_interval(level, kind="bca").values[0]
        np.testing.assert_allclose(ours, [ref.confidence_interval.low,
                                          ref.confidence_interval.high], rtol=1e-12)


def test_bca_matches_scipy_soft(rng):
    p, q0, q1 = _soft(rng, n=40, noise0=1.0, noise1=0.6)
    m = get_metric("cross_entropy")
    res = eq.bootstrap_test(p, q0, q1, metrics=[m], method="paired", n_resamples=1000, rng=2)
    ce0, ce1 = m.item_stats(p, q0, 3)[:, 0], m.item_stats(p, q1, 3)[:, 0]

    def stat(a, b, axis=-1):
        return np.mean(a, axis=axis) - np.mean(b, axis=axis)    # CE(h0) - CE(h1)

    class Previous:
        bootstrap_distribution = res.distribution[0]

    ref = scipy.stats.bootstrap((ce0, ce1), stat, paired=True, method="BCa", n_resamples=0,
                                bootstrap_result=Previous(), rng=0)
    np.testing.assert_allclose(res.interval.values[0], [ref.confidence_interval.low,
                                                        ref.confidence_interval.high],
                               rtol=1e-10)


def test_berg_kirkpatrick_interval_is_rescaled(rng):
    y, h0, h1 = _hard(rng, n=1000, k=2)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], sample_size=0.25,
                            n_resamples=2000, rng=0)
    ci = res.confidence_interval(0.95).values[0]
    raw = np.quantile(res.distribution[0], [0.025, 0.975])
    # sqrt(250 / 1000) = 1/2: the rescaled interval is half as wide
    assert ci[1] - ci[0] == pytest.approx((raw[1] - raw[0]) / 2, rel=1e-9)
    with pytest.raises(ValueError, match="'bca' is not available for the Berg-Kirkpatrick"):
        res.confidence_interval(0.95, kind="bca")


# --- runs ---------------------------------------------------------------------------------------

def test_pooled_runs_equal_concatenation(rng):
    runs = [_hard(rng, n=150) for _ in range(3)]
    ys, a, b = ([r[i] for r in runs] for i in range(3))
    pooled = compare_runs(ys, a, b, metrics=["accuracy", "f1"], runs="pooled",
                          n_resamples=200, rng=4)
    concat = eq.bootstrap_test(np.concatenate(ys), np.concatenate(a), np.concatenate(b),
                               metrics=["accuracy", "f1"], n_resamples=200, rng=4)
    np.testing.assert_array_equal(pooled.distribution, concat.distribution)
    assert pooled.n_runs == 3
    assert pooled.n_items == 450


def test_two_level_runs(rng):
    runs = [_hard(rng, n=200, acc0=0.6, acc1=0.62) for _ in range(4)]
    ys, a, b = ([r[i] for r in runs] for i in range(3))
    two = compare_runs(ys, a, b, metrics=["accuracy"], method="paired", runs="two-level",
                       n_resamples=3000, rng=4)
    pooled = compare_runs(ys, a, b, metrics=["accuracy"], method="paired", runs="pooled",
                          n_resamples=3000, rng=4)
    assert two.delta[0] == pooled.delta[0]
    assert two.runs == "two-level"
    assert two.n_items == 800
    # run-level resampling adds the between-run spread of the run deltas
    run_deltas = np.array([np.mean(bb == y) - np.mean(aa == y) for y, aa, bb in runs])
    expected_var = pooled.distribution.var() + run_deltas.var() / 4
    assert two.distribution.var() == pytest.approx(expected_var, rel=0.15)
    assert np.isfinite(two.acceleration).all()


# --- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"method": "bootstrap"}, ValueError, "`method` must be one of"),
        ({"sample_size": 0.7}, ValueError,
         r"`sample_size` must be in \[0.05, 0.5\] for the Berg-Kirkpatrick test; got 0.7"),
        ({"sample_size": 0.01}, ValueError, r"must be in \[0.05, 0.5\].*got 0.01"),
        ({"sample_size": "big"}, TypeError, "`sample_size` must be a real number"),
        ({"method": "paired", "sample_size": 0.3}, ValueError,
         "`sample_size` applies to the Berg-Kirkpatrick test only"),
        ({"n_resamples": 0}, ValueError, "`n_resamples` must be >= 1"),
        ({"n_resamples": 10.5}, TypeError, "`n_resamples` must be an integer"),
        ({"confidence_level": 1.5}, ValueError, "`confidence_level` must be in"),
        ({"rng": "seed"}, TypeError, "`rng` must be an int"),
        ({"kind": "ordinal"}, ValueError, "`kind` must be one of"),
        ({"metrics": "cross_entropy"}, ValueError,
         "metric 'cross_entropy' is for soft labels but the inputs are hard"),
        ({"metrics": ["accuracy", "accuracy"]}, ValueError, "names a metric twice"),
        ({"metrics": []}, ValueError, "`metrics` is empty"),
        ({"metrics": "nope"}, ValueError, "`metric` must be one of"),
        ({"labels": [0, 1]}, ValueError, "not in `labels`"),
    ],
)
def test_validation_errors(rng, kwargs, exc, match):
    y, h0, h1 = _hard(rng, n=100, k=3)
    with pytest.raises(exc, match=match):
        eq.bootstrap_test(y, h0, h1, **kwargs)


def test_input_errors(rng):
    y, h0, h1 = _hard(rng, n=100)
    with pytest.raises(ValueError, match="items"):
        eq.bootstrap_test(y, h0[:-1], h1)
    bad = h1.astype(float)
    bad[3] = np.nan
    with pytest.raises(ValueError, match="`h1` contains 1 NaN"):
        eq.bootstrap_test(y, h0, bad)
    with pytest.raises(ValueError, match="`sample_size` must draw at least one item"):
        eq.bootstrap_test(y[:5], h0[:5], h1[:5], sample_size=0.05)
    with pytest.raises(ValueError, match="`confidence_level` must be in"):
        eq.bootstrap_test(y, h0, h1, n_resamples=10, rng=0).confidence_interval(2.0)
    with pytest.raises(ValueError, match="`kind` must be one of"):
        eq.bootstrap_test(y, h0, h1, n_resamples=10, rng=0).confidence_interval(0.9, "x")


def test_runs_errors(rng):
    runs = [_hard(rng, n=50) for _ in range(2)]
    ys, a, b = ([r[i] for r in runs] for i in range(3))
    with pytest.raises(ValueError, match="`runs` must be one of"):
        compare_runs(ys, a, b, runs="nested")
    with pytest.raises(ValueError, match="'two-level' is a bootstrap"):
        compare_runs(ys, a, b, method="permutation", runs="two-level")
    with pytest.raises(ValueError, match="same positive number of runs"):
        compare_runs(ys, a[:1], b)
    with pytest.raises(ValueError, match="run 1: "):
        compare_runs(ys, [a[0], a[1][:-1]], b)


# --- metrics bound to labels, infinite statistics ------------------------------------------------

@pytest.mark.filterwarnings("ignore::evaluq.metrics.UndefinedMetricWarning")
def test_target_class_and_fixed_label_metrics(rng):
    names = np.array(["neg", "neu", "pos"])
    y, h0, h1 = (names[a] for a in _hard(rng, n=300, k=3))
    f1_pos = eq.metrics.f1_metric(target_class="pos")
    res = eq.bootstrap_test(y, h0, h1, metrics=[f1_pos, "accuracy"], method="paired",
                            n_resamples=100, rng=0)
    assert res.metrics == ("f1[pos]", "accuracy")
    assert res.h1_value[0] == pytest.approx(
        f1_score(y, h1, labels=["pos"], average="macro"), abs=1e-12)
    # a metric on a fixed label set: the inputs are encoded against it (here a 4th label)
    fixed = eq.metrics.f1_metric(labels=["neg", "neu", "pos", "other"])
    res4 = eq.bootstrap_test(y, h0, h1, metrics=[fixed], n_resamples=20, rng=0)
    assert res4.h0_value[0] == pytest.approx(
        f1_score(y, h0, labels=["neg", "neu", "pos", "other"], average="macro",
                 zero_division=0), abs=1e-12)
    with pytest.raises(ValueError, match="is not one of the labels"):
        eq.bootstrap_test(y, h0, h1, metrics=[eq.metrics.f1_metric(target_class="x")],
                          n_resamples=10)
    with pytest.raises(ValueError, match="different label sets"):
        eq.bootstrap_test(y, h0, h1, n_resamples=10, metrics=[
            fixed, eq.metrics.recall_metric(labels=["neg", "neu", "pos"])])


def test_infinite_cross_entropy_items_are_resampled_exactly(rng):
    p, q0, q1 = _soft(rng, n=60)
    p[0] = [1.0, 0.0, 0.0]
    q0[0] = [0.0, 0.5, 0.5]          # CE of item 0 for h0 is +inf
    res = eq.bootstrap_test(p, q0, q1, metrics="cross_entropy", method="paired",
                            n_resamples=400, rng=0)
    assert res.h0_value[0] == np.inf
    assert res.delta[0] == np.inf
    # resamples without item 0 have a finite delta, the others +inf; never NaN
    dist = res.distribution[0]
    assert not np.isnan(dist).any()
    assert np.isfinite(dist).any()
    share_inf = np.mean(np.isinf(dist))
    assert share_inf == pytest.approx(1 - (59 / 60) ** 60, abs=4 * np.sqrt(0.25 / 400))
    perm = eq.bootstrap_test(p, q0, q1, metrics="cross_entropy", method="permutation",
                             n_resamples=100, rng=0)
    assert not np.isnan(perm.distribution).any()


def test_regression_outputs(rng):
    y = rng.normal(size=400)
    h0 = y + rng.normal(scale=1.0, size=400)
    h1 = y + rng.normal(scale=0.5, size=400)
    res = eq.bootstrap_test(y, h0, h1, method="permutation", n_resamples=300, rng=0)
    assert res.metrics == ("mse", "mae")
    assert res.h0_value[0] == pytest.approx(np.mean((h0 - y) ** 2), rel=1e-12)
    assert res.delta[1] == pytest.approx(np.mean(np.abs(h0 - y)) - np.mean(np.abs(h1 - y)))
    assert (res.delta > 0).all()
    assert (res.pvalue < 0.01).all()
    # integer-valued regression values need `kind`, or regression metrics that say so
    yi, h0i, h1i = (np.round(a * 10) for a in (y, h0, h1))
    with pytest.raises(ValueError, match="is for hard labels but the inputs are regression"):
        eq.bootstrap_test(yi, h0i, h1i, metrics="accuracy", kind="regression", n_resamples=10)
    r = eq.bootstrap_test(yi, h0i, h1i, metrics="mse", kind="regression", n_resamples=10)
    assert r.h1_value[0] == pytest.approx(np.mean((h1i - yi) ** 2))
    r2 = eq.bootstrap_test(yi, h0i, h1i, metrics="mse", n_resamples=10)
    assert r2.h1_value[0] == r.h1_value[0]
    assert eq.bootstrap_test(yi, h0i, h1i, metrics="accuracy",
                             n_resamples=10).metrics == ("accuracy",)    # read as labels


def test_exact_ties_count_as_ties_for_tiny_differences():
    """A resampled difference equal to the observed one up to rounding is a tie.

    With 1001 items and one disagreement, delta = 1/1001, and every resample that keeps the
    item once reproduces delta only up to rounding of values near 0.7 (about 1e-16), far more
    than a tolerance relative to delta itself would allow.
    """
    n = 1001
    y = np.zeros(n, dtype=int)
    h0 = np.r_[np.ones(300, dtype=int), np.zeros(n - 300, dtype=int)]
    h1 = h0.copy()
    h1[0] = 0                                         # h1 fixes one error of h0
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="paired",
                            n_resamples=2000, rng=5)
    d = res.delta[0]
    # exact count from the integers: resample counts of item 0 (draws of the fixed item)
    boot_delta = res.distribution[0]
    k = np.rint(boot_delta * n).astype(int)           # how often item 0 was drawn
    assert np.allclose(boot_delta, k / n, atol=1e-12)
    exact = 1 + np.sum(np.abs(k - 1) >= 1)
    assert res.pvalue[0] == exact / 2001
    assert abs(d - 1 / n) < 1e-15


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

@pytest.mark.parametrize("p", [2.0, -0.1, float("nan"), float("inf")])
def test_significance_mark_refuses_p_outside_unit_interval(p):
    with pytest.raises(ValueError, match=r"`p` must be (finite|in \[0, 1\])"):
        eq.significance.significance_mark(p)


def test_significance_mark_values():
    mark = eq.significance.significance_mark
    assert [mark(p) for p in (0.0, 0.01, 0.010001, 0.05, 0.0500001, 1.0)] == \
        ["**", "**", "*", "*", "", ""]


def test_one_resample_is_refused(rng):
    y = rng.integers(0, 2, 100)
    for method in ("paired", "permutation", "berg-kirkpatrick"):
        with pytest.raises(ValueError, match=r"`n_resamples` must be >= 2.*got 1"):
            eq.bootstrap_test(y, y, 1 - y, n_resamples=1, method=method)


def test_no_improvement_at_all_is_not_significant(rng, tmp_path, capsys):
    """Two identical systems (or the same items right with other wrong labels) have delta 0:
    every resampled delta is 0 too, and the strict count #{delta* > 0} was 0, so the default
    method gave p = 1/(B + 1), marked '**'. No improvement is no evidence: p = 1, in Python
    and in `evaluq test`; a clear improvement keeps its small p."""
    from evaluq.cli import main

    y = rng.integers(0, 3, 400)
    h0 = np.where(rng.random(400) < 0.7, y, (y + 1) % 3)
    other_wrong = np.where(h0 == y, h0, (y + 2) % 3)             # same items wrong, other labels
    for h1 in (h0.copy(), other_wrong):
        res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], n_resamples=300, rng=0)
        assert res.delta[0] == 0.0
        assert res.pvalue[0] == 1.0
        assert res.significance == ("",)
    better = np.where(rng.random(400) < 0.9, y, (y + 1) % 3)
    assert eq.bootstrap_test(y, h0, better, metrics=["accuracy"], n_resamples=300,
                             sample_size=0.5, rng=0).pvalue[0] < 0.01
    for name, values in (("y.txt", y), ("h0.txt", h0), ("h1.txt", h0)):
        (tmp_path / name).write_text("\n".join(map(str, values)) + "\n")
    assert main(["test", str(tmp_path / "y.txt"), str(tmp_path / "h0.txt"),
                 str(tmp_path / "h1.txt"), "--metrics", "accuracy"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("count sample delta"))
    assert row.rstrip().endswith("1000 / 1000    p = 1.0000"), out              # no mark


# --- inputs that name their items or classes (pandas, .csv headers) ----------------------------

def test_pandas_series_are_paired_by_index_not_position(rng):
    """Before: a Series in another row order (after a merge / sample) was paired by position:
    h1's accuracy 0.34 instead of its true 0.85, 'significantly worse' at p = .005."""
    y, h0, h1 = _hard(rng, n=300)
    ids = [f"q{i}" for i in range(300)]
    ys, h0s = pd.Series(y, index=ids), pd.Series(h0, index=ids)
    h1s = pd.Series(h1, index=ids).sample(frac=1, random_state=0)
    res = eq.bootstrap_test(ys, h0s, h1s, metrics="accuracy", method="paired",
                            n_resamples=200, rng=0)
    assert res.h1_value[0] == pytest.approx(accuracy_score(y, h1))   # the true pairing
    ref = eq.bootstrap_test(y, h0, h1, metrics="accuracy", method="paired",
                            n_resamples=200, rng=0)
    np.testing.assert_array_equal(res.distribution, ref.distribution)
    assert res.pvalue[0] == ref.pvalue[0]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda s: s.reset_index(drop=True), r"`h1` names items \[0, 1, 2, 3, 4\] that "
                                             r"`targets` does not.*`h1\.loc\[targets\.index\]`"),
        (lambda s: s.rename({"q7": "q0"}), r"the index of `h1` repeats names \['q0'\]"),
    ],
)
def test_pandas_indexes_with_other_labels_are_refused(rng, change, match):
    y, h0, h1 = _hard(rng, n=50)
    ids = [f"q{i}" for i in range(50)]
    ys, h0s, h1s = (pd.Series(v, index=ids) for v in (y, h0, h1))
    with pytest.raises(ValueError, match=match):
        eq.bootstrap_test(ys, h0s, change(h1s), metrics="accuracy", method="paired", rng=0)
    # named predictions in different orders cannot be put in the unnamed targets' order
    with pytest.raises(ValueError, match=r"`targets` has no names of its items"):
        eq.bootstrap_test(y, h0s, h1s.iloc[::-1], metrics="accuracy", method="paired", rng=0)
    # one order everywhere: positional pairing, as with arrays
    res = eq.bootstrap_test(y, h0s, h1s, metrics="accuracy", method="paired", rng=0)
    assert res.h1_value[0] == pytest.approx(accuracy_score(y, h1))


def test_dataframe_class_columns_are_matched_by_name(rng):
    """Before: a DataFrame of probabilities with its columns in another order was read by
    position (cross-entropy 1.48 instead of 0.89 in the sweep)."""
    p, q0, q1 = _soft(rng)
    cols = ["neg", "neu", "pos"]
    t, a = pd.DataFrame(p, columns=cols), pd.DataFrame(q0, columns=cols)
    b = pd.DataFrame(q1, columns=cols)[["pos", "neg", "neu"]]
    res = eq.bootstrap_test(t, a, b, metrics="cross_entropy", method="paired", rng=0)
    expected = -np.mean(np.sum(p * np.log(q1), axis=1))      # the true pairing of classes
    assert res.h1_value[0] == pytest.approx(expected)
    with pytest.raises(ValueError, match=r"the columns of `h1` and the columns of `targets` "
                                         r"name different classes: `h1` names classes "
                                         r"\['other'\]"):
        eq.bootstrap_test(t, a, b.rename(columns={"neu": "other"}), metrics="cross_entropy",
                          method="paired", rng=0)
    # pd.DataFrame(array) names no classes: paired by position
    res = eq.bootstrap_test(t, a, pd.DataFrame(q1), metrics="cross_entropy", method="paired",
                            rng=0)
    assert res.h1_value[0] == pytest.approx(expected)


# --- few items ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3])
def test_paired_bootstrap_on_few_items_warns_and_names_the_permutation_test(n):
    """Before: 1 or 3 items all won by h1 gave p = 1/(B+1), '**', without a word; the
    permutation test gives the exact 2/2^n (0.25 at 3 items). Threshold: test_calibration.py."""
    y, h0, h1 = [1] * n, [0] * n, [1] * n
    with pytest.warns(eq.SmallSampleWarning,
                      match=rf"only {n} items?, fewer than 40: the paired bootstrap test's "
                            rf"p-value is too small.*Use more items or method='permutation' "
                            rf"\(valid at any number of items; with {n} items? its p-value "
                            rf"cannot fall below 2 / 2\^{n} = {2 / 2 ** n:g}\)"):
        res = eq.bootstrap_test(y, h0, h1, metrics="accuracy", method="paired", rng=0)
    assert res.pvalue[0] == pytest.approx(1 / 1001)          # what the warning is about
    perm = eq.bootstrap_test(y, h0, h1, metrics="accuracy", method="permutation",
                             n_resamples=20000, rng=0)
    assert perm.pvalue[0] == pytest.approx(min(1.0, 2 / 2 ** n), abs=0.015)


def test_few_items_thresholds(rng):
    from evaluq.significance._methods import FEW_ITEMS_BERG_KIRKPATRICK, FEW_ITEMS_PAIRED

    y, h0, h1 = _hard(rng, n=FEW_ITEMS_PAIRED)
    with pytest.warns(eq.SmallSampleWarning, match=r"only 39 items, fewer than 40"):
        eq.bootstrap_test(y[1:], h0[1:], h1[1:], metrics="accuracy", method="paired",
                          n_resamples=50, rng=0)
    eq.bootstrap_test(y, h0, h1, metrics="accuracy", method="paired", n_resamples=50, rng=0)
    # crossed runs: the items of the one shared test set count, not items x runs
    with pytest.warns(eq.SmallSampleWarning, match=r"only 39 items"):
        compare_runs([y[1:]] * 3, [h0[1:]] * 3, [h1[1:]] * 3, metrics="accuracy",
                     method="paired", runs="crossed", n_resamples=50, rng=0)
    n = FEW_ITEMS_BERG_KIRKPATRICK
    with pytest.warns(eq.SmallSampleWarning, match=rf"only {n - 1} items, fewer than {n}: the "
                                                   r"Berg-Kirkpatrick test's p-value"):
        eq.bootstrap_test(y[:n - 1], h0[:n - 1], h1[:n - 1], metrics="accuracy",
                          sample_size=0.5, n_resamples=50, rng=0)
    eq.bootstrap_test(y[:n], h0[:n], h1[:n], metrics="accuracy", sample_size=0.5,
                      n_resamples=50, rng=0)
    eq.bootstrap_test(y[:3], h0[:3], h1[:3], metrics="accuracy", method="permutation",
                      n_resamples=50, rng=0)                  # valid at any size: no warning


def test_nan_reason_says_why_values_are_not_finite(rng):
    """Before: an infinite cross-entropy left NaN p-values and intervals with no reason, and
    with both systems infinite numpy's RuntimeWarning 'invalid value encountered in
    subtract' reached the user."""
    p = rng.dirichlet(np.ones(3), 50)
    q0, q1 = rng.dirichlet(np.ones(3), 50), rng.dirichlet(np.ones(3), 50)
    q0[7] = [0.0, 0.3, 0.7]
    res = eq.bootstrap_test(p, q0, q1, metrics=["cross_entropy", "js_divergence"],
                            method="paired", n_resamples=100, rng=0)
    assert res.h0_value[0] == np.inf
    assert np.isnan(res.pvalue[0])
    reason, none = res.nan_reason
    assert none is None
    assert reason.startswith("cross_entropy of h0 is +inf: a prediction gives probability 0")
    bad = int(np.sum(~np.isfinite(res.bootstrap_distribution[0])))
    assert f"{bad} of 100 resampled deltas are not finite" in reason
    assert res.to_dataset().attrs["nan_reason"] == f"cross_entropy: {reason}"
    q1[9] = [0.0, 0.5, 0.5]
    both = eq.bootstrap_test(p, q0, q1, metrics="cross_entropy", method="paired",
                             n_resamples=100, rng=0)               # no RuntimeWarning
    assert np.isnan(both.delta[0])
    assert both.nan_reason[0].startswith("cross_entropy of h0 and h1 is +inf")
    assert "delta is undefined (NaN)" in both.nan_reason[0]
    assert eq.bootstrap_test(p, q1 * 0 + p, q1 * 0 + p, metrics="js_divergence",
                             method="paired", n_resamples=20, rng=0).nan_reason == (None,)


@pytest.mark.parametrize("n", [50, 97, 500, 1000])
def test_entropy_correlation_of_a_constant_system_is_nan_not_plus_minus_one(rng, n):
    """Before: a system giving one probability row for every item (a class-prior baseline)
    has constant entropies, so its entropy correlation is undefined (``entropy_correlation``
    says NaN); the test centred them to rounding noise ~1e-16 and reported r = +1 or -1
    (the sign of the noise), and a p-value comparing h1 with it."""
    p = rng.dirichlet(np.ones(3), n)
    prior = np.tile([0.2, 0.3, 0.5], (n, 1))
    q1 = rng.dirichlet(np.ones(3), n)
    with pytest.warns(eq.metrics.UndefinedMetricWarning):
        assert np.isnan(eq.metrics.entropy_correlation(p, prior))
    res = eq.bootstrap_test(p, prior, q1, metrics=["entropy_correlation", "js_divergence"],
                            method="paired", n_resamples=50, rng=0)
    assert np.isnan(res.h0_value[0])
    assert np.isnan(res.pvalue[0])
    assert res.h1_value[0] == pytest.approx(eq.metrics.entropy_correlation(p, q1))
    assert res.nan_reason[0].startswith("entropy_correlation of h0 is undefined (NaN) on these "
                                        "items (the normalized entropies of the targets or of "
                                        "the predictions are constant")
    assert res.nan_reason[1] is None


def test_p_value_is_nan_when_resamples_are_undefined(rng):
    """Before: resampled deltas that are NaN (entropy similarity of a sub-sample of one-hot
    targets, all entropies zero) counted as 'not extreme', so p was too small by their share
    (306 of 1000 here: 0.356 where the defined resamples give about 0.5) and got marks."""
    rng = np.random.default_rng(1)
    n = 200
    p = np.eye(3)[rng.integers(0, 3, n)]
    soft = rng.random(n) < 0.1
    p[soft] = rng.dirichlet(np.ones(3), soft.sum())
    q0 = 0.6 * p + 0.4 * rng.dirichlet(np.ones(3), n)
    q1 = 0.6 * p + 0.4 * rng.dirichlet(np.ones(3), n)
    res = eq.bootstrap_test(p, q0, q1, metrics=["entropy_similarity", "cross_entropy"],
                            sample_size=0.05, rng=0)
    undefined = int(np.isnan(res.distribution[0]).sum())
    assert 0 < undefined < res.n_resamples
    assert np.isfinite(res.delta[0])
    assert np.isnan(res.pvalue[0])
    assert res.significance[0] == ""
    assert res.nan_reason[0].startswith(f"the p-value and the interval are undefined (NaN): "
                                        f"{undefined} of 1000 resampled deltas are not finite")
    assert "method='paired'" in res.nan_reason[0]
    assert "p undefined (undefined resamples)" in res.summary()
    assert np.isfinite(res.pvalue[1])                   # cross-entropy: every resample defined
    # a metric with no improvement at all keeps p = 1 (Berg-Kirkpatrick's rule)
    same = eq.bootstrap_test(p, q0, q0, metrics="entropy_similarity", sample_size=0.05, rng=0)
    assert same.pvalue[0] == 1.0

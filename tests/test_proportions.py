"""Proportion intervals and McNemar's test against statsmodels and scipy (to 1e-12)."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.small_samples.proportions import PROPORTION_METHODS

sm_prop = pytest.importorskip("statsmodels.stats.proportion")
sm_ct = pytest.importorskip("statsmodels.stats.contingency_tables")

SM_METHOD = {"wilson": "wilson", "clopper-pearson": "beta", "jeffreys": "jeffreys",
             "clt": "normal"}


def _all_counts(max_n=40):
    """Every (x, n) with 1 <= n <= max_n, the edges x = 0 and x = n included."""
    n = np.concatenate([np.full(k + 1, k) for k in range(1, max_n + 1)])
    x = np.concatenate([np.arange(k + 1) for k in range(1, max_n + 1)])
    return x, n


@pytest.mark.parametrize("method", sorted(SM_METHOD))
@pytest.mark.parametrize("level", [0.95, 0.8, 0.999])
def test_matches_statsmodels_everywhere_including_edges(method, level):
    x, n = _all_counts()
    ci = eq.proportion_interval(x, n, method=method, confidence_level=level)
    lo, hi = sm_prop.proportion_confint(x, n, alpha=1 - level, method=SM_METHOD[method])
    np.testing.assert_allclose(ci.sel(ci_bound="lower").values, lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ci.sel(ci_bound="upper").values, hi, rtol=0, atol=1e-12)


def test_edge_conventions():
    ci = {m: eq.proportion_interval([0, 20], 20, method=m).values for m in SM_METHOD}
    assert ci["clopper-pearson"][0, 0] == 0.0
    assert ci["clopper-pearson"][1, 1] == 1.0
    # the other end keeps alpha/2: the upper end at x = 0 is 1 - (alpha/2)^(1/n)
    assert ci["clopper-pearson"][0, 1] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-12)
    # Jeffreys is not modified at the edges (as statsmodels): a positive lower end at x = 0
    assert 0 < ci["jeffreys"][0, 0] < 1e-4
    assert ci["jeffreys"][1, 1] < 1
    assert ci["clt"][0].tolist() == [0.0, 0.0]
    assert ci["clt"][1].tolist() == [1.0, 1.0]


def test_beta_is_the_posterior_interval_and_jeffreys_its_half_prior():
    x, n = _all_counts(15)
    ci = eq.proportion_interval(x, n, method="beta", prior=(2.0, 3.0), confidence_level=0.9)
    lo, hi = stats.beta(2.0 + x, 3.0 + n - x).interval(0.9)
    np.testing.assert_allclose(ci.values, np.stack([lo, hi], -1), rtol=0, atol=1e-12)
    jeff = eq.proportion_interval(x, n, method="jeffreys").values
    half = eq.proportion_interval(x, n, method="beta", prior=(0.5, 0.5)).values
    np.testing.assert_allclose(jeff, half, rtol=0, atol=1e-15)
    assert ci.attrs["prior"] == [2.0, 3.0]


def test_metadata_dims_and_broadcasting():
    x = xr.DataArray([[3, 4], [5, 6]], dims=("model", "task"),
                     coords={"model": ["a", "b"], "task": ["t1", "t2"]})
    n = xr.DataArray([10, 12], dims="task", coords={"task": ["t1", "t2"]})
    for method in PROPORTION_METHODS:
        ci = eq.proportion_interval(x, n, method=method, confidence_level=0.9)
        assert ci.dims == ("model", "task", "ci_bound")
        assert ci.attrs["ci_kind"] == method
        assert ci.attrs["confidence_level"] == 0.9
        assert ci.ci_bound.attrs["ci_kind"] == method
        assert float(ci.sel(model="b", task="t2", ci_bound="lower")) == pytest.approx(
            float(eq.proportion_interval(6, 12, method=method, confidence_level=0.9)[0]))
    plain = eq.proportion_interval(np.array([[1, 2], [3, 4]]), np.array([5, 6]))
    assert plain.shape == (2, 2, 2)
    mixed = eq.proportion_interval(x, 10)
    assert mixed.dims == ("model", "task", "ci_bound")
    assert eq.intervals.proportion_interval is eq.proportion_interval


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"successes": [1, np.nan], "trials": 5}, "`successes` contains 1 NaN"),
    ({"successes": 6, "trials": 5}, "`successes` exceeds `trials`"),
    ({"successes": -1, "trials": 5}, "`successes` must be non-negative"),
    ({"successes": 1, "trials": -5}, "`trials` must be non-negative"),
    ({"successes": 0, "trials": 0}, "`trials` must be positive"),
    ({"successes": 1.5, "trials": 5}, "`successes` must be whole numbers"),
    ({"successes": 1, "trials": [5, np.inf]}, "`trials` contains infinite"),
    ({"successes": 1, "trials": 5, "method": "wald"}, "`method` must be one of"),
    ({"successes": 1, "trials": 5, "confidence_level": 1.5}, "`confidence_level` must be in"),
    ({"successes": 1, "trials": 5, "prior": (0, 1)}, "`prior` must be in"),
    ({"successes": 1, "trials": 5, "prior": 1}, "`prior` must be a pair"),
])
def test_proportion_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        eq.proportion_interval(**kwargs)


def test_proportion_mismatched_shapes():
    x = xr.DataArray([1, 2, 3], dims="model")
    with pytest.raises(ValueError, match="`successes` of shape"):
        eq.proportion_interval(x, np.array([5, 6]))
    with pytest.raises(TypeError, match="`successes` must be numeric"):
        eq.proportion_interval(np.array([True, False]), 3)


# --- McNemar ------------------------------------------------------------------------------------

def _table(n_models=6, n_items=60, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.5, 0.95, size=(n_models, 1))
    shared = rng.random(n_items) < 0.3   # items every model gets right: correlated errors
    return ((rng.random((n_models, n_items)) < p) | shared).astype(np.int8)


@pytest.mark.parametrize("exact", [True, False])
@pytest.mark.parametrize("correction", [True, False])
def test_mcnemar_all_pairs_match_statsmodels(exact, correction):
    table = _table()
    res = eq.mcnemar_test(table, exact=exact, correction=correction)
    m = table.shape[0]
    for i in range(m):
        for j in range(m):
            b = int(((table[i] == 1) & (table[j] == 0)).sum())
            c = int(((table[i] == 0) & (table[j] == 1)).sum())
            assert res.only_a_correct.values[i, j] == b
            assert res.only_b_correct.values[i, j] == c
            assert (res.both_correct + res.both_wrong + res.only_a_correct
                    + res.only_b_correct).values[i, j] == table.shape[1]
            if i == j:
                continue
            ref = sm_ct.mcnemar([[0, b], [c, 0]], exact=exact, correction=correction)
            assert res.pvalue.values[i, j] == pytest.approx(ref.pvalue, abs=1e-12)
            assert res.statistic.values[i, j] == pytest.approx(ref.statistic, abs=1e-12)
            if exact:
                bt = stats.binomtest(b, b + c, 0.5) if b + c else None
                expected = bt.pvalue if bt else 1.0
                assert res.pvalue.values[i, j] == pytest.approx(expected, abs=1e-12)


def test_mcnemar_pair_form_dataarrays_and_auto():
    table = _table(n_models=3, n_items=200, seed=1)
    items = [f"q{i}" for i in range(200)]
    da = xr.DataArray(table, dims=("model", "item"),
                      coords={"model": ["a", "b", "c"], "item": items})
    every = eq.mcnemar_test(da, exact="auto")
    base = da.sel(model="c", drop=True).isel(item=slice(None, None, -1))  # other item order
    vs_c = eq.mcnemar_test(da, base, exact="auto")
    assert vs_c.pvalue.dims == ("model",)
    np.testing.assert_array_equal(vs_c.pvalue.values, every.pvalue.sel(model_b="c").values)
    total = (every.only_a_correct + every.only_b_correct).values
    np.testing.assert_array_equal(every.exact.values, total < 25)
    one = eq.mcnemar_test(table[0], table[1], exact=False)
    assert float(one.pvalue) == float(eq.mcnemar_test(table, exact=False).pvalue[0, 1])


def test_mcnemar_no_discordant_pairs():
    a = np.array([1, 0, 1, 1])
    assert float(eq.mcnemar_test(a, a).pvalue) == 1.0
    res = eq.mcnemar_test(a, a, exact=False)
    assert np.isnan(float(res.pvalue))
    assert "no discordant pairs" in res.pvalue.attrs["nan_reason"]


@pytest.mark.parametrize(("a", "b", "match"), [
    ([1, 0, 0.5], [1, 0, 1], "`correct_a` must hold 0/1 correctness scores; got 0.5"),
    ([1, 0, 1], [1, 2, 1], "`correct_b` must hold 0/1"),
    ([1, np.nan, 1], [1, 0, 1], "`correct_a` contains 1 NaN"),
    ([1, 0, 1], [1, 0], "`correct_a` has 3 items and `correct_b` 2"),
])
def test_mcnemar_bad_input(a, b, match):
    with pytest.raises(ValueError, match=match):
        eq.mcnemar_test(np.array(a), np.array(b))


def test_mcnemar_mismatched_item_sets_and_options():
    a = xr.DataArray([1, 0, 1], dims="item", coords={"item": ["x", "y", "z"]})
    b = xr.DataArray([1, 0, 1], dims="item", coords={"item": ["x", "y", "w"]})
    with pytest.raises(ValueError, match=r"1 item\(s\) only in `correct_a` \['z'\]"):
        eq.mcnemar_test(a, b)
    with pytest.raises(ValueError, match="`exact` must be True, False or 'auto'"):
        eq.mcnemar_test(a, a, exact="yes")
    with pytest.raises(ValueError, match="`correct_a` must be a \\(model, item\\) table"):
        eq.mcnemar_test(np.array([1, 0, 1]))
    with pytest.raises(eq.CubeError, match="`correct_a` has no item dim"):
        eq.mcnemar_test(a.rename(item="question"), a)


def test_mcnemar_dtypes_agree_and_items_not_multiple_of_64():
    table = _table(n_models=4, n_items=131, seed=5)
    ref = eq.mcnemar_test(table)
    for variant in (table.astype(bool), table.astype(float), table.astype(np.int64)):
        other = eq.mcnemar_test(variant)
        for name in ("only_a_correct", "only_b_correct", "both_correct", "pvalue"):
            np.testing.assert_array_equal(other[name].values, ref[name].values)
    direct = (table[:, None, :] & table[None, :, :]).sum(-1)
    np.testing.assert_array_equal(ref.both_correct.values, direct)


def test_pandas_labels_are_kept_and_pair_by_label():
    """A Series' or DataFrame's index is the result's coordinate, and two labelled inputs pair
    by label: a shuffled Series is the same data (it was paired by position, item 3's
    correctness against item 17's)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 40)
    b = np.where(rng.random(40) < 0.8, a, 1 - a)
    items = [f"q{i}" for i in range(40)]
    sa, sb = pd.Series(a, index=items), pd.Series(b, index=items)
    shuffled = sb.sample(frac=1, random_state=1)
    expected = eq.mcnemar_test(a, b)
    for got in (eq.mcnemar_test(sa, sb), eq.mcnemar_test(sa, shuffled)):
        assert float(got.pvalue) == float(expected.pvalue)
        assert int(got.only_a_correct) == int(expected.only_a_correct)
    table = pd.DataFrame({"gpt": a, "llama": b}, index=items).T      # models x items
    assert list(eq.mcnemar_test(table).pvalue.model.values) == ["gpt", "llama"]
    ci = eq.proportion_interval(pd.Series([28, 29], index=["gpt", "llama"]), 30)
    assert list(ci.dim_0.values) == ["gpt", "llama"]
    np.testing.assert_array_equal(ci.values, eq.proportion_interval([28, 29], 30).values)
    t = eq.intervals.t_interval(pd.DataFrame([[76.85, 81.99], [90.0, 92.0]], index=["a", "b"]))
    assert list(t.to_dataframe().index) == ["a", "b"]
    with pytest.raises(ValueError, match="`successes` and `trials` hold different labels"):
        eq.proportion_interval(pd.Series([28, 29], index=["gpt", "llama"]),
                               pd.Series([30, 30], index=["gpt", "mistral"]))
    with pytest.raises(ValueError, match=r"`correct_b`: its index repeats labels \(\['q0'\]"):
        eq.mcnemar_test(sa, pd.Series(b, index=["q0", *items[1:-1], "q0"]))

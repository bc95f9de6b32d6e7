"""pass@k and pass^k against the direct combinatorial formulas and Inspect's reducer."""

from math import comb

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq


def _attempts(n_items=30, n=10, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(0.7, 0.7, n_items)
    return (rng.random((n_items, n)) < p[:, None]).astype(int)


def test_matches_direct_combinatorics():
    data = _attempts()
    ks = [1, 2, 3, 5, 10]
    at, hat = eq.pass_at_k(data, ks), eq.pass_hat_k(data, ks)
    for i, row in enumerate(data):
        c, n = int(row.sum()), len(row)
        for j, k in enumerate(ks):
            assert at.per_item.values[i, j] == pytest.approx(1 - comb(n - c, k) / comb(n, k),
                                                             abs=1e-14)
            assert hat.per_item.values[i, j] == pytest.approx(comb(c, k) / comb(n, k),
                                                              abs=1e-14)
    np.testing.assert_allclose(at.per_item.sel(k=1).values, data.mean(1), rtol=0, atol=1e-15)


def test_large_n_is_stable():
    c, n = np.array([9_990, 5_000, 1]), np.array([10_000, 10_000, 10_000])
    res = eq.pass_hat_k(xr.DataArray(c, dims="item"), 50, trials=n)
    exact = [comb(int(ci), 50) / comb(10_000, 50) for ci in c]   # Python's exact integers
    np.testing.assert_allclose(res.per_item.values[:, 0], exact, rtol=1e-12, atol=0)
    res_at = eq.pass_at_k(xr.DataArray(c, dims="item"), 50, trials=n)
    exact_at = [1 - comb(int(n0 - ci), 50) / comb(10_000, 50) for ci, n0 in zip(c, n,
                                                                               strict=True)]
    np.testing.assert_allclose(res_at.per_item.values[:, 0], exact_at, rtol=1e-12, atol=0)


def test_counts_form_unequal_attempts_and_summary():
    c = xr.DataArray([[3, 0, 5], [1, 2, 4]], dims=("model", "item"),
                     coords={"model": ["a", "b"]})
    n = xr.DataArray([5, 4, 8], dims="item")
    res = eq.pass_at_k(c, [1, 3], trials=n, confidence_level=0.9)
    assert res.per_item.dims == ("model", "item", "k")
    per = res.per_item.sel(model="a", k=3).values
    assert per[0] == pytest.approx(1 - comb(2, 3) / comb(5, 3))
    mean, sd = per.mean(), per.std(ddof=1)
    assert float(res.estimate.sel(model="a", k=3)) == pytest.approx(mean)
    assert float(res.se.sel(model="a", k=3)) == pytest.approx(sd / np.sqrt(3))
    t = stats.t.isf(0.05, 2)
    lo, hi = res.interval.sel(model="a", k=3).values
    assert lo == pytest.approx(max(0.0, mean - t * sd / np.sqrt(3)))
    assert hi == pytest.approx(min(1.0, mean + t * sd / np.sqrt(3)))
    assert res.interval.attrs["ci_kind"] == "t"
    normal = eq.pass_at_k(c, 1, trials=n, interval="normal")
    assert normal.interval.attrs["ci_kind"] == "normal"


def test_against_inspect_reducer():
    scorer = pytest.importorskip("inspect_ai.scorer")
    data = _attempts(n_items=12, n=6, seed=4)
    ours = eq.pass_at_k(data, [1, 2, 4]).per_item.values
    for i, row in enumerate(data):
        for j, k in enumerate([1, 2, 4]):
            reduced = scorer.pass_at(k)([scorer.Score(value=float(v)) for v in row])
            assert ours[i, j] == pytest.approx(float(reduced.value), abs=1e-12)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (([[1, 0], [1, 1]], 3), {}, "`k` must be at most the number of attempts"),
    (([[1, 0], [1, 1]], 0), {}, "`k` must be >= 1"),
    (([[1, 0.5], [1, 1]], 1), {}, "`correct` must hold 0/1 correctness scores; got 0.5"),
    (([[1, np.nan], [1, 1]], 1), {}, "`correct` contains 1 NaN"),
    (([1, 0], 1), {}, "`correct` must hold items x epochs"),
    (([3, 1], 1), {"trials": [2, 2]}, "`correct` exceeds `trials`"),
    (([-1, 1], 1), {"trials": [2, 2]}, "`correct` must be whole, non-negative"),
    (([[1, 0], [1, 1]], 1), {"interval": "bca"}, "`interval` must be one of"),
    (([[1, 0], [1, 1]], 1), {"confidence_level": 0}, "`confidence_level` must be in"),
])
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        eq.pass_at_k(*args, **kwargs)

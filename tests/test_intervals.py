"""Tests of eq.intervals: Student-t and ARF intervals (formulas.md §5, Gladkoff et al.)."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import evaluq as eq
from evaluq._dims import CI_BOUND
from evaluq.intervals import (
    _arf_alpha_normal,
    _arf_normal_noncoverage,
    _arf_normal_worst_d,
)

SCORES = [76.85, 81.99]
TABLE1_ALPHA = [0.5, 1 / 3, 0.25, 0.2, 0.1, 0.05, 0.01]
NORMAL_K = [0.5, 1.258, 1.799, 2.312, 4.787, 9.653, 48.389]  # formulas.md §5
UNKNOWN_K_PAPER = [0.5, 1.87, 2.91, 3.94, 8.97, 18.99, 99]  # Table 1, unknown row


def _binomial_slack(n: int, p: float) -> float:
    return 4 * np.sqrt(n * p * (1 - p))


# --- Student-t: check values --------------------------------------------------------------------

def test_t_interval_check_values() -> None:
    res = eq.intervals.t_interval(SCORES, confidence_level=0.8)
    assert float(res.estimate) == pytest.approx(79.42, abs=5e-3)
    assert float(res.sd) == pytest.approx(3.6345, abs=5e-5)
    assert float(res.margin()) == pytest.approx(7.9096, abs=5e-5)
    assert float(res.lower) == pytest.approx(71.51, abs=5e-3)
    assert float(res.upper) == pytest.approx(87.33, abs=5e-3)
    assert res.n == 2
    assert res.df == 1


def test_prob_above_check_value() -> None:
    assert float(eq.intervals.prob_above(SCORES, 80)) == pytest.approx(0.4293, abs=5e-5)
    res = eq.intervals.t_interval(SCORES)
    assert float(res.prob_above(80)) == pytest.approx(0.4293, abs=5e-5)


def test_t_interval_matches_scipy(rng: np.random.Generator) -> None:
    x = rng.normal(70, 8, size=(40, 5))
    res = eq.intervals.t_interval(x, confidence_level=0.9)
    lo, hi = stats.t.interval(0.9, 4, loc=x.mean(1), scale=stats.sem(x, axis=1))
    np.testing.assert_allclose(res.lower, lo, rtol=1e-12)
    np.testing.assert_allclose(res.upper, hi, rtol=1e-12)
    assert res.interval.dims == ("dim_0", CI_BOUND)
    assert res.interval.attrs["confidence_level"] == 0.9


def test_prob_above_is_t_posterior(rng: np.random.Generator) -> None:
    x = rng.normal(0, 1, size=(10, 3))
    post = stats.t(2, loc=x.mean(1), scale=stats.sem(x, axis=1))
    np.testing.assert_allclose(eq.intervals.prob_above(x, 0.3), post.sf(0.3), rtol=1e-12)


def test_prob_above_monte_carlo(rng: np.random.Generator) -> None:
    """The flat-prior posterior of mu: mu = xbar - t * s/sqrt(n), t ~ t(n-1)."""
    draws = 400_000
    mu = np.mean(SCORES) - rng.standard_t(1, draws) * np.std(SCORES, ddof=1) / np.sqrt(2)
    p_mc = np.mean(mu > 80)
    se = np.sqrt(p_mc * (1 - p_mc) / draws)
    assert abs(float(eq.intervals.prob_above(SCORES, 80)) - p_mc) < 4 * se


def test_prob_above_zero_sd() -> None:
    x = [3.0, 3.0]
    assert float(eq.intervals.prob_above(x, 2.0)) == 1.0
    assert float(eq.intervals.prob_above(x, 4.0)) == 0.0


def test_prob_above_threshold_at_the_mean() -> None:
    """T == xbar gives exactly 1/2 (s > 0) or 0 (s = 0, point mass at T), with no warning
    (warnings are errors here: sign(0) * inf used to be NaN with a RuntimeWarning)."""
    assert float(eq.intervals.prob_above([79.0, 81.0], 80)) == 0.5
    assert float(eq.intervals.prob_above([80.0, 80.0], 80)) == 0.0
    x = np.array([[76.85, 81.99], [90.0, 92.0], [60.0, 60.0]])
    np.testing.assert_allclose(eq.intervals.prob_above(x, np.array([80.0, 91.0, 60.0])),
                               [0.4293, 0.5, 0.0], atol=5e-5)


def test_t_interval_dataarray_dim() -> None:
    x = xr.DataArray([[76.85, 81.99], [90.0, 92.0], [60.0, 64.0]], dims=("item", "rater"),
                     coords={"item": ["a", "b", "c"]})
    res = eq.intervals.t_interval(x.T, dim="rater", confidence_level=0.8)
    assert res.estimate.dims == ("item",)
    assert res.interval.dims == ("item", CI_BOUND)
    assert list(res.interval.coords[CI_BOUND].values) == ["lower", "upper"]
    assert res.verdict(80).sel(item="a").item() == "borderline fail"
    assert res.verdict(80).values.tolist() == ["borderline fail", "pass", "fail"]
    np.testing.assert_allclose(res.prob_above(80).sel(item="a"), 0.4293, atol=5e-5)


def test_t_interval_other_level() -> None:
    res = eq.intervals.t_interval(SCORES, confidence_level=0.8)
    ci95 = res.confidence_interval(0.95)
    assert ci95.attrs["confidence_level"] == 0.95
    expected = stats.t.ppf(0.975, 1) * np.std(SCORES, ddof=1) / np.sqrt(2)
    assert float(ci95.sel(ci_bound="upper") - res.estimate) == pytest.approx(expected)


def test_t_verdicts() -> None:
    res = eq.intervals.t_interval([[90, 91], [79, 80], [80, 81], [50, 51]],
                                  confidence_level=0.8)
    assert res.verdict(85).values.tolist() == ["pass", "fail", "fail", "fail"]
    assert res.verdict(80).values.tolist() == ["pass", "borderline fail", "borderline pass",
                                               "fail"]


def test_t_result_reporting() -> None:
    res = eq.intervals.t_interval(SCORES, confidence_level=0.8)
    text = repr(res)
    assert "TIntervalResult(" in text
    assert "estimate=79.42" in text
    assert "71.51" in text
    assert "<table" in res._repr_html_()
    ds = res.to_dataset()
    assert set(ds.data_vars) == {"estimate", "sd", "margin", "lower", "upper"}
    assert ds.attrs["n"] == 2
    df = res.to_dataframe()
    assert df.loc[0, "upper"] == pytest.approx(87.33, abs=5e-3)
    many = eq.intervals.t_interval(np.arange(12.0).reshape(4, 3))
    assert "dim_0: 4" in repr(many)
    assert len(many.to_dataframe()) == 4


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=8), st.floats(-50, 50),
       st.floats(0.1, 10), st.floats(0.5, 0.99))
def test_t_interval_affine_equivariance(x: list, shift: float, scale: float,
                                        level: float) -> None:
    base = eq.intervals.t_interval(x, confidence_level=level)
    moved = eq.intervals.t_interval(np.asarray(x) * scale + shift, confidence_level=level)
    tol = 1e-9 * (1 + np.abs(x).max()) * scale + 1e-9 * abs(shift)
    np.testing.assert_allclose(moved.interval, base.interval * scale + shift, atol=tol)
    assert float(base.lower) <= float(base.estimate) <= float(base.upper)


def test_public_namespace() -> None:
    assert {"agreement", "intervals"} <= set(eq.__all__)
    assert callable(eq.intervals.arf_k)
    assert callable(eq.agreement.icc)


# --- Student-t: errors --------------------------------------------------------------------------

def test_t_interval_one_observation_points_to_arf() -> None:
    with pytest.raises(ValueError, match=r"n >= 2.*arf_interval"):
        eq.intervals.t_interval([85.2])
    with pytest.raises(ValueError, match=r"arf_interval"):
        eq.intervals.prob_above(np.ones((5, 1)), 1.0)


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"x": [1.0, np.nan]}, ValueError, r"`x` contains 1 NaN"),
        ({"x": [1.0, np.inf]}, ValueError, r"`x` contains infinite"),
        ({"x": ["a", "b"]}, TypeError, r"`x` must be numeric"),
        ({"x": 3.0}, ValueError, r"got a scalar"),
        ({"x": [1.0, 2.0], "confidence_level": 1.2}, ValueError, r"`confidence_level` must be"),
        ({"x": [1.0, 2.0], "axis": 3}, ValueError, r"`axis` 3 is out of range"),
        ({"x": xr.DataArray([1.0, 2.0], dims="r"), "dim": "rater"}, ValueError,
         r"`dim` 'rater' is not a dim of `x`"),
    ],
)
def test_t_interval_bad_input(kwargs: dict, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        eq.intervals.t_interval(**kwargs)


def test_t_interval_bounds_clip_the_reported_interval() -> None:
    """Scores [78, 95] on 0-100: the 80% upper end 112.66 is clipped to 100."""
    res = eq.intervals.t_interval([78, 95], confidence_level=0.8, bounds=(0, 100))
    free = eq.intervals.t_interval([78, 95], confidence_level=0.8)
    assert float(free.upper) == pytest.approx(112.66031, abs=1e-4)
    np.testing.assert_allclose(res.interval.values, [float(free.lower), 100.0])
    # the margin and the unclipped interval stay available, and equal the free ones
    assert float(res.margin()) == float(free.margin())
    xr.testing.assert_identical(res.unclipped_interval(), free.interval)
    assert res.interval.attrs == free.interval.attrs
    assert res.bounds == (0.0, 100.0)
    # other levels are clipped too; the lower end is clipped at 0
    assert float(res.confidence_interval(0.99).sel({CI_BOUND: "upper"})) == 100.0
    low = eq.intervals.t_interval([1.0, 9.0], bounds=(0, 100))
    assert float(low.lower) == 0.0
    assert float(low.upper) < 100.0
    ds = res.to_dataset()
    assert ds.attrs["bounds"] == [0.0, 100.0]
    assert float(ds["upper"]) == 100.0
    assert float(ds["margin"]) == float(free.margin())
    assert "bounds=(0.0, 100.0)" in repr(res)
    assert "bounds" not in repr(free)
    assert free.to_dataset().attrs["bounds"] == "none"


@settings(max_examples=40, deadline=None)
@given(x=st.lists(st.floats(0, 100), min_size=2, max_size=5),
       mu=st.floats(0, 100), level=st.floats(0.5, 0.99))
def test_t_interval_bounds_keep_coverage_events(x: list, mu: float, level: float) -> None:
    """For mu in the bounds, the clipped interval holds mu iff the unclipped one does."""
    res = eq.intervals.t_interval(x, confidence_level=level, bounds=(0, 100))
    lo, hi = (float(v) for v in res.interval)
    ulo, uhi = (float(v) for v in res.unclipped_interval())
    assert 0.0 <= lo <= hi <= 100.0
    assert (lo <= mu <= hi) == (ulo <= mu <= uhi)


@pytest.mark.parametrize(
    ("bounds", "err", "match"),
    [((100, 0), ValueError, r"`bounds` must satisfy low < high"),
     (100, TypeError, r"`bounds` must be a \(low, high\) pair"),
     ((0, 50, 100), TypeError, r"`bounds` must be a \(low, high\) pair")],
)
def test_t_interval_bad_bounds(bounds: object, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        eq.intervals.t_interval([1.0, 2.0], bounds=bounds)  # type: ignore[arg-type]


def test_prob_above_bad_threshold() -> None:
    with pytest.raises(ValueError, match=r"`threshold` contains 1 NaN"):
        eq.intervals.prob_above(SCORES, np.nan)
    with pytest.raises(TypeError, match=r"`threshold` must be a real number"):
        eq.intervals.prob_above(SCORES, "80")


# --- ARF: k ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("alpha", "k"), list(zip(TABLE1_ALPHA, NORMAL_K, strict=True)))
def test_arf_k_normal_check_values(alpha: float, k: float) -> None:
    assert eq.intervals.arf_k(alpha) == pytest.approx(k, abs=5e-4)


def test_arf_k_unknown_matches_table1() -> None:
    ks = eq.intervals.arf_k(np.array(TABLE1_ALPHA), distribution="unknown")
    np.testing.assert_allclose(ks, UNKNOWN_K_PAPER, atol=6e-3)


def test_arf_k_vectorised_and_dataarray() -> None:
    alphas = np.array(TABLE1_ALPHA * 3).reshape(3, 7)
    ks = eq.intervals.arf_k(alphas)
    assert ks.shape == (3, 7)
    np.testing.assert_allclose(ks[1], NORMAL_K, atol=5e-4)
    da = eq.intervals.arf_k(xr.DataArray(TABLE1_ALPHA, dims="alpha"))
    assert isinstance(da, xr.DataArray)
    assert da.dims == ("alpha",)


def test_arf_k_normal_erratum_alpha_half() -> None:
    """Table 1 prints k = 0.05 for alpha = 0.5 under normality: a typo for 0.5.

    With k = 0.5 the interval covers mu iff z and d have opposite signs: coverage exactly 1/2
    for every d != 0. With k = 0.05 it misses mu most of the time for small d (its worst-case
    coverage is 0), so 0.05 cannot be the k for alpha = 0.5.
    """
    assert eq.intervals.arf_k(0.5) == 0.5
    rng = np.random.default_rng(1)
    z = rng.standard_normal(200_000)
    slack = 4 * np.sqrt(0.25 / z.size)
    for d in (0.01, 0.5, 2.0):
        covered = np.abs(z + d) <= 2 * 0.5 * np.abs(z - d)
        assert abs(covered.mean() - 0.5) < slack
    covered_typo = np.abs(z + 0.1) <= 2 * 0.05 * np.abs(z - 0.1)
    assert covered_typo.mean() < 0.1  # far below 1 - alpha = 0.5
    assert eq.intervals.arf_alpha(0.5) == 0.5


def test_arf_k_normal_is_worst_case_on_a_grid() -> None:
    """Brute force: the coverage minimised over a fine grid of d (both d -> 0 and far out)
    equals 1 - alpha at k, and a 1% smaller k misses the level somewhere."""
    d = np.concatenate([np.geomspace(1e-6, 1e-2, 50), np.linspace(1e-2, 6, 60_000)])
    for alpha in (1 / 3, 0.25, 0.2, 0.1, 0.05, 0.01):
        k = eq.intervals.arf_k(alpha)
        worst = _arf_normal_noncoverage(k, d).max()
        assert worst == pytest.approx(alpha, abs=1e-9)
        assert _arf_normal_noncoverage(0.99 * k, d).max() > alpha
        assert _arf_normal_noncoverage(k, np.array([1e-12])) < 1e-9  # d -> 0 is no worse
        assert d[np.argmax(_arf_normal_noncoverage(k, d))] == pytest.approx(
            _arf_normal_worst_d(k), abs=2e-4)


def test_arf_k_normal_monte_carlo_at_worst_d() -> None:
    """Coverage simulated at the worst d agrees with 1 - alpha within MC error."""
    rng = np.random.default_rng(2)
    z = rng.standard_normal(400_000)
    for alpha in (0.25, 0.1):
        k = eq.intervals.arf_k(alpha)
        d = _arf_normal_worst_d(k)
        miss = (np.abs(z + d) > 2 * k * np.abs(z - d)).mean()
        assert abs(miss - alpha) < 4 * np.sqrt(alpha * (1 - alpha) / z.size)


def test_arf_k_monotone_and_tiny_alpha() -> None:
    alphas = np.geomspace(1e-6, 0.5, 200)
    for dist in ("normal", "unknown"):
        ks = eq.intervals.arf_k(alphas, distribution=dist)
        assert np.all(np.diff(ks) < 0)
        assert np.all(np.isfinite(ks))
    # normal data need a smaller k than the distribution-free bound
    assert np.all(eq.intervals.arf_k(alphas[:-1]) < eq.intervals.arf_k(alphas[:-1], "unknown"))


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-4, 0.5), st.sampled_from(["normal", "unknown"]))
def test_arf_alpha_inverts_arf_k(alpha: float, dist: str) -> None:
    k = eq.intervals.arf_k(alpha, distribution=dist)
    assert eq.intervals.arf_alpha(k, distribution=dist) == pytest.approx(alpha, rel=1e-9)


def test_arf_alpha_normal_below_half() -> None:
    np.testing.assert_array_equal(_arf_alpha_normal(np.array([0.5, 0.3])), [0.5, 0.5])


@pytest.mark.parametrize("alpha", [0.0, -0.1, 0.51, 1.0, np.nan])
def test_arf_k_alpha_out_of_range(alpha: float) -> None:
    match = (r"`arf_alpha` contains 1 NaN" if np.isnan(alpha)
             else r"`arf_alpha` must be in \(0, 0.5\]")
    with pytest.raises(ValueError, match=match):
        eq.intervals.arf_k(alpha)


def test_arf_k_bad_distribution() -> None:
    with pytest.raises(ValueError, match=r"`distribution` must be one of 'normal', 'unknown'"):
        eq.intervals.arf_k(0.2, distribution="t")


# --- ARF: intervals -------------------------------------------------------------------------------

def test_arf_interval_check_values() -> None:
    res = eq.intervals.arf_interval(85.2, 96.3, k=1.8)
    assert float(res.estimate) == pytest.approx(90.75)
    assert float(res.half_width) == pytest.approx(19.98)
    res = eq.intervals.arf_interval(85.2, 96.3, k=2.31)
    assert float(res.half_width) == pytest.approx(25.641)
    assert float(res.lower) == pytest.approx(90.75 - 25.641)
    assert res.confidence_level == pytest.approx(0.8, abs=1e-3)


def test_arf_interval_bounds_clip_like_the_paper() -> None:
    res = eq.intervals.arf_interval(85.2, 96.3, k=1.8, bounds=(0, 100))
    assert float(res.lower) == pytest.approx(70.77)
    assert float(res.upper) == 100.0
    assert float(res.half_width) == pytest.approx(19.98)  # unclipped
    res = eq.intervals.arf_interval(85.2, 96.3, arf_alpha=0.25, bounds=(0, 100))
    assert float(res.k) == pytest.approx(1.799, abs=5e-4)
    assert res.confidence_level == 0.75
    assert res.interval.attrs == {"ci_kind": "arf", "confidence_level": 0.75,
                                  "distribution": "normal"}


def test_arf_interval_vectorised(rng: np.random.Generator) -> None:
    y = rng.normal(80, 5, size=(30, 4))
    g = rng.normal(80, 5, size=(4,))
    res = eq.intervals.arf_interval(y, g, arf_alpha=0.1, distribution="unknown")
    k = eq.intervals.arf_k(0.1, "unknown")
    np.testing.assert_allclose(res.lower, (y + g) / 2 - k * np.abs(y - g))
    np.testing.assert_allclose(res.upper, (y + g) / 2 + k * np.abs(y - g))
    assert res.interval.shape == (30, 4, 2)
    # one alpha per rater column (numpy broadcasting of trailing axes)
    alphas = np.array([0.5, 0.25, 0.1, 0.05])
    res = eq.intervals.arf_interval(y, g, arf_alpha=alphas)
    np.testing.assert_allclose(res.k.values[0], eq.intervals.arf_k(alphas))
    assert res.confidence_level.shape == (30, 4)
    np.testing.assert_allclose(res.confidence_level[0], 1 - alphas)
    assert "confidence_level" not in res.interval.attrs  # varies: kept on the result


def test_arf_interval_dataarrays() -> None:
    y = xr.DataArray([85.2, 70.0, 99.0], dims="item", coords={"item": ["a", "b", "c"]})
    g = xr.DataArray([96.3, 96.3, 90.0], dims="item", coords={"item": ["a", "b", "c"]})
    res = eq.intervals.arf_interval(y, g, arf_alpha=0.2, bounds=(0, 100))
    assert res.interval.dims == ("item", CI_BOUND)
    assert res.verdict(60).values.tolist() == ["pass", "borderline pass", "pass"]
    assert res.verdict(94).values.tolist() == ["borderline fail"] * 2 + ["borderline pass"]
    k_da = xr.DataArray([1.8, 2.31, 1.8], dims="item", coords={"item": ["a", "b", "c"]})
    res_k = eq.intervals.arf_interval(y, g, k=k_da)
    assert float(res_k.half_width.sel(item="a")) == pytest.approx(19.98)
    assert res_k.confidence_level.dims == ("item",)


def test_arf_interval_refuses_unlabelled_arrays_next_to_dataarrays() -> None:
    """An unlabelled array next to a DataArray would become a new dim (an outer product)."""
    y = xr.DataArray([85.2, 70.0, 99.0], dims="item")
    with pytest.raises(TypeError, match=r"`guess` must be a scalar or a DataArray when `y` is "
                                         r"a DataArray.*shape \(3,\)"):
        eq.intervals.arf_interval(y, [96.3, 96.3, 90.0], k=1.8)
    with pytest.raises(TypeError, match=r"`k` must be a scalar or a DataArray when `y`"):
        eq.intervals.arf_interval(y, 96.3, k=[1.8, 2.31, 1.8])
    with pytest.raises(TypeError, match=r"`y` must be a scalar or a DataArray when `arf_alpha`"):
        eq.intervals.arf_interval([85.2, 70.0], 96.3,
                                  arf_alpha=xr.DataArray([0.2, 0.1], dims="item"))
    # scalars next to DataArrays are fine
    res = eq.intervals.arf_interval(y, 96.3, arf_alpha=0.2)
    assert res.interval.dims == ("item", CI_BOUND)


def test_arf_result_reporting() -> None:
    res = eq.intervals.arf_interval(85.2, 96.3, k=1.8, bounds=(0, 100))
    text = repr(res)
    assert "ARFIntervalResult(" in text
    assert "estimate=90.75" in text
    assert "bounds=(0.0, 100.0)" in text
    ds = res.to_dataset()
    assert float(ds["upper"]) == 100.0
    assert (ds.attrs["ci_kind"], ds.attrs["distribution"]) == ("arf", "normal")
    assert res.to_dataframe().loc[0, "half_width"] == pytest.approx(19.98)
    assert "<table" in res._repr_html_()


@settings(max_examples=25, deadline=None)
@given(st.floats(0, 100), st.floats(0, 100), st.floats(0.001, 0.5))
def test_arf_interval_properties(y: float, g: float, alpha: float) -> None:
    res = eq.intervals.arf_interval(y, g, arf_alpha=alpha)
    lo, hi = float(res.lower), float(res.upper)
    assert lo <= (y + g) / 2 <= hi
    assert lo <= min(y, g) + 1e-9
    assert hi >= max(y, g) - 1e-9  # k >= 1/2: the interval always holds y and g
    wider = eq.intervals.arf_interval(y, g, arf_alpha=alpha / 2)
    assert float(wider.upper - wider.lower) >= hi - lo


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [
        ({"arf_alpha": 0.2, "k": 2.0}, ValueError, r"exactly one of `arf_alpha` and `k`"),
        ({}, ValueError, r"exactly one of `arf_alpha` and `k`"),
        ({"arf_alpha": 0.7}, ValueError, r"`arf_alpha` must be in \(0, 0.5\]"),
        ({"k": 0.3}, ValueError, r"`k` must be >= 0.5"),
        ({"k": 2.0, "bounds": (100, 0)}, ValueError, r"`bounds` must satisfy low < high"),
        ({"k": 2.0, "bounds": 100}, TypeError, r"`bounds` must be a \(low, high\) pair"),
        ({"k": 2.0, "distribution": "cauchy"}, ValueError, r"`distribution` must be one of"),
    ],
)
def test_arf_interval_bad_options(kwargs: dict, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        eq.intervals.arf_interval(85.2, 96.3, **kwargs)


def test_arf_interval_bad_data() -> None:
    with pytest.raises(ValueError, match=r"`y` contains 1 NaN"):
        eq.intervals.arf_interval([85.2, np.nan], 96.3, k=2.0)
    with pytest.raises(ValueError, match=r"`guess` contains 1 NaN"):
        eq.intervals.arf_interval(85.2, np.nan, k=2.0)
    with pytest.raises(ValueError, match=r"broadcast together: `y` \(3,\), `guess` \(2,\)"):
        eq.intervals.arf_interval([1.0, 2.0, 3.0], [1.0, 2.0], k=2.0)
    with pytest.raises(ValueError, match=r"cannot be broadcast together"):
        eq.intervals.arf_interval(xr.DataArray([1.0, 2.0, 3.0], dims="item"),
                                  xr.DataArray([1.0, 2.0], dims="item"), k=2.0)


# --- calibration (slow) ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_t_interval_coverage_is_nominal(n: int) -> None:
    rng = np.random.default_rng(100 + n)
    n_sets, level, mu = 40_000, 0.8, 70.0
    x = rng.normal(mu, 6.0, size=(n_sets, n))
    res = eq.intervals.t_interval(x, confidence_level=level)
    covered = int(((res.lower <= mu) & (mu <= res.upper)).sum())
    print(f"\nCALIBRATION | intervals.t_interval, {n} normal draws | coverage | nominal "
          f"{level:.3f} | measured {covered / n_sets:.4f} | n {n_sets}")
    assert abs(covered - n_sets * level) <= _binomial_slack(n_sets, level)
    # the 95% interval from the same result object
    ci = res.confidence_interval(0.95)
    covered95 = int(((ci.sel(ci_bound="lower") <= mu) & (mu <= ci.sel(ci_bound="upper"))).sum())
    print(f"\nCALIBRATION | intervals.t_interval, {n} normal draws | coverage | nominal 0.950 "
          f"| measured {covered95 / n_sets:.4f} | n {n_sets}")
    assert abs(covered95 - n_sets * 0.95) <= _binomial_slack(n_sets, 0.95)


def _arf_coverage(errors: np.ndarray, mus: np.ndarray, sigmas: np.ndarray, guesses: np.ndarray,
                  alpha: float, distribution: str) -> np.ndarray:
    """Coverage count per (mu, sigma, guess) cell; ``errors`` (draws,) standardised."""
    mu = mus[:, None, None, None]
    sigma = sigmas[None, :, None, None]
    g = guesses[None, None, :, None]
    y, g = np.broadcast_arrays(mu + sigma * errors, g)
    res = eq.intervals.arf_interval(y, g, arf_alpha=alpha, distribution=distribution)
    return ((res.lower.values <= mu) & (mu <= res.upper.values)).sum(axis=-1)


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [0.5, 0.25, 0.1])
def test_arf_normal_coverage_at_least_nominal(alpha: float) -> None:
    """Normal k under normal data, over a grid of mu and sigma (and guesses incl. the worst)."""
    rng = np.random.default_rng(7)
    draws = 20_000
    mus = np.array([0.0, 50.0, 90.0])
    sigmas = np.array([0.5, 3.0, 20.0])
    k = eq.intervals.arf_k(alpha)
    d_worst = float(_arf_normal_worst_d(k)) if alpha < 0.5 else 0.3
    guesses = np.array([50.0, 90.0, 92.0, 100.0])
    errors = rng.standard_normal(draws)
    counts = _arf_coverage(errors, mus, sigmas, guesses, alpha, "normal")
    floor = draws * (1 - alpha) - _binomial_slack(draws, alpha)
    print(f"\nCALIBRATION | intervals.arf_interval normal k, alpha={alpha}, lowest of 36 "
          f"(mu, sigma, guess) | coverage | nominal {1 - alpha:.3f} | measured "
          f"{counts.min() / draws:.4f} | n {draws}")
    assert (counts >= floor).all()
    # at the worst guess g = mu + d* sigma the coverage is nominal, not more
    worst = _arf_coverage(errors, mus, sigmas[:1], mus[:1] + d_worst * sigmas[:1], alpha,
                          "normal")
    print(f"\nCALIBRATION | intervals.arf_interval normal k, alpha={alpha}, worst guess | coverage "
          f"| nominal {1 - alpha:.3f} | measured {worst.ravel()[0] / draws:.4f} | n {draws}")
    assert abs(worst.ravel()[0] - draws * (1 - alpha)) <= _binomial_slack(draws, alpha)


SYMMETRIC_UNIMODAL = {
    "uniform": lambda rng, n: rng.uniform(-1, 1, n),
    "normal": lambda rng, n: rng.standard_normal(n),
    "laplace": lambda rng, n: rng.laplace(size=n),
    "t3": lambda rng, n: rng.standard_t(3, n),
    "cauchy": lambda rng, n: rng.standard_cauchy(n),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SYMMETRIC_UNIMODAL))
def test_arf_unknown_coverage_at_least_nominal(name: str) -> None:
    """The distribution-free k under symmetric unimodal (incl. heavy-tailed) errors, over a
    grid of mu, sigma and guesses (uniform is the worst case: nominal exactly)."""
    rng = np.random.default_rng(11)
    draws = 8_000
    errors = SYMMETRIC_UNIMODAL[name](rng, draws)
    mus = np.array([0.0, 80.0])
    sigmas = np.array([1.0, 10.0])
    guesses = np.concatenate([np.linspace(-60, 140, 81), [80.5, 81.0]])
    for alpha in (0.5, 0.2, 0.05):
        counts = _arf_coverage(errors, mus, sigmas, guesses, alpha, "unknown")
        floor = draws * (1 - alpha) - _binomial_slack(draws, alpha)
        print(f"\nCALIBRATION | intervals.arf_interval unknown k, {name} errors, alpha={alpha}, "
              f"lowest of {counts.size} | coverage | nominal {1 - alpha:.3f} | measured "
              f"{counts.min() / draws:.4f} | n {draws}")
        assert (counts >= floor).all(), (name, alpha, counts.min() / draws)


@pytest.mark.slow
def test_arf_unknown_mildly_skewed() -> None:
    """A mildly skewed error (gamma(20), skewness 0.45, mu its mean) is still covered at
    the usual levels, where k is well above 1/2."""
    rng = np.random.default_rng(13)
    draws = 8_000
    errors = (rng.gamma(20.0, size=draws) - 20.0) / np.sqrt(20.0)
    guesses = np.linspace(-5, 5, 101)
    for alpha in (0.25, 0.2, 0.1, 0.05):
        counts = _arf_coverage(errors, np.array([0.0]), np.array([1.0]), guesses, alpha,
                               "unknown")
        print(f"\nCALIBRATION | intervals.arf_interval unknown k, gamma(20) errors, alpha={alpha}, "
              f"lowest of 101 guesses | coverage | nominal {1 - alpha:.3f} | measured "
              f"{counts.min() / draws:.4f} | n {draws}")
        assert (counts >= draws * (1 - alpha) - _binomial_slack(draws, alpha)).all()


@pytest.mark.slow
def test_arf_unknown_assumes_symmetry() -> None:
    """Documents the assumption: under a strongly skewed error (exponential, centred at the
    mean) the 'unknown' k undercovers for some guesses. Not a bug: the bound is for
    symmetric unimodal errors."""
    rng = np.random.default_rng(12)
    draws = 20_000
    errors = rng.exponential(size=draws) - 1.0
    guesses = np.linspace(-3, 3, 61)
    counts = _arf_coverage(errors, np.array([0.0]), np.array([1.0]), guesses, 0.2, "unknown")
    print(f"\nCALIBRATION | intervals.arf_interval unknown k, exponential errors, lowest of 61 "
          f"guesses (documented: assumes symmetry) | coverage | nominal 0.800 | measured "
          f"{counts.min() / draws:.4f} | n {draws}")
    assert counts.min() < draws * 0.8 - _binomial_slack(draws, 0.2)
    # at alpha = 1/2 (k = 1/2) the interval covers iff y and g lie on opposite sides of mu:
    # the coverage for g > mu is P(y < mu), which is 1/2 only if mu is the median
    counts = _arf_coverage(errors, np.array([0.0]), np.array([1.0]), np.array([0.5]), 0.5,
                           "unknown")
    assert abs(counts.item() - draws * stats.expon.cdf(1.0)) <= _binomial_slack(draws, 0.37)


def test_alpha_is_a_deprecated_spelling_of_arf_alpha() -> None:
    with pytest.warns(DeprecationWarning, match="`alpha` is deprecated; use `arf_alpha`"):
        old = eq.intervals.arf_interval(85.2, 96.3, alpha=0.2, bounds=(0, 100))
    new = eq.intervals.arf_interval(85.2, 96.3, arf_alpha=0.2, bounds=(0, 100))
    assert float(old.k) == float(new.k)
    assert old.confidence_level == new.confidence_level
    with pytest.warns(DeprecationWarning, match="use `arf_alpha`"):
        assert eq.intervals.arf_k(alpha=0.2) == eq.intervals.arf_k(arf_alpha=0.2)
    with pytest.raises(TypeError, match="both `alpha` and `arf_alpha`"):
        eq.intervals.arf_interval(85.2, 96.3, alpha=0.2, arf_alpha=0.2)
    with pytest.raises(ValueError, match="`arf_alpha` must be in"):
        eq.intervals.arf_k(0.7)


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

def test_bool_arrays_are_refused():
    """True/False are not scores: each entry point names the argument."""
    b = np.array([True, False, True])
    with pytest.raises(TypeError, match=r"`x` must be numeric \(int or float\); got dtype bool"):
        eq.intervals.t_interval(b)
    with pytest.raises(TypeError, match=r"`x` must be numeric.*dtype bool"):
        eq.intervals.t_interval(xr.DataArray(b, dims="seed"))
    with pytest.raises(TypeError, match=r"`x` must be numeric.*dtype bool"):
        eq.intervals.prob_above(b, 0.5)
    with pytest.raises(TypeError, match=r"`y` must be numeric.*dtype bool"):
        eq.intervals.arf_interval(True, 0.5, k=1.0)
    with pytest.raises(TypeError, match=r"`guess` must be numeric.*dtype bool"):
        eq.intervals.arf_interval(0.5, np.array([True]), k=1.0)
    with pytest.raises(TypeError, match=r"`arf_alpha` must be numeric.*dtype bool"):
        eq.intervals.arf_k(True)
    with pytest.raises(TypeError, match=r"`k` must be numeric.*dtype bool"):
        eq.intervals.arf_alpha(np.array([True]))
    with pytest.raises(TypeError, match=r"`threshold` must be a real number"):
        eq.intervals.prob_above([1.0, 2.0], True)
    with pytest.raises(TypeError, match=r"`bounds` must be a real number"):
        eq.intervals.arf_interval(85.2, 96.3, k=1.8, bounds=("0", 100))
    # integers are numbers: same interval as the floats
    as_int = eq.intervals.t_interval(np.array([1, 2, 4]))
    as_float = eq.intervals.t_interval(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_array_equal(as_int.interval, as_float.interval)


def test_t_interval_refuses_scores_outside_its_bounds() -> None:
    """A score outside `bounds` was clipped into a confident-looking interval silently."""
    with pytest.raises(ValueError, match=r"`x` holds scores outside `bounds` \(0\.0, 100\.0\) "
                                         r"\(from 80 to 120\)"):
        eq.intervals.t_interval([80.0, 120.0], bounds=(0, 100))
    eq.intervals.t_interval([80.0, 100.0], bounds=(0, 100))      # on the bound: fine

"""Tests of eq.agreement: Cohen's kappa, Krippendorff's alpha, ICC, and their bootstraps."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

import evaluq as eq
from evaluq._dims import CI_BOUND, RESAMPLE
from evaluq.agreement import ICC_FORMS
from evaluq.predictions import bootstrap_counts

# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges, and their Table 4 values
SF_DATA = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8],
                    [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float)
SF_ICC = [0.17, 0.29, 0.71, 0.44, 0.62, 0.91]

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders x 12 units
NAN = np.nan
K2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
])


def _icc_anova(x: np.ndarray) -> list[float]:
    """Direct two-way ANOVA (textbook sums of squares, explicit means)."""
    n, k = x.shape
    grand = x.mean()
    row_means = x.mean(axis=1)
    col_means = x.mean(axis=0)
    ss_rows = k * sum((r - grand) ** 2 for r in row_means)
    ss_cols = n * sum((c - grand) ** 2 for c in col_means)
    ss_within = sum((x[i, j] - row_means[i]) ** 2 for i in range(n) for j in range(k))
    ss_total = sum((x[i, j] - grand) ** 2 for i in range(n) for j in range(k))
    ss_err = ss_total - ss_rows - ss_cols
    bms, jms = ss_rows / (n - 1), ss_cols / (k - 1)
    wms, ems = ss_within / (n * (k - 1)), ss_err / ((n - 1) * (k - 1))
    return [
        (bms - wms) / (bms + (k - 1) * wms),
        (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n),
        (bms - ems) / (bms + (k - 1) * ems),
        (bms - wms) / bms,
        (bms - ems) / (bms + (jms - ems) / n),
        (bms - ems) / bms,
    ]


def _missing(rng: np.random.Generator, x: np.ndarray, frac: float) -> np.ndarray:
    x = x.astype(float).copy()
    x[rng.random(x.shape) < frac] = np.nan
    return x


# --- Cohen's kappa --------------------------------------------------------------------------------

@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_matches_sklearn(weights: str | None) -> None:
    rng = np.random.default_rng(3)
    for case in range(8):
        n_labels = 2 + case % 4
        truth = rng.integers(0, n_labels, 60 + 20 * case)
        noisy = np.where(rng.random(truth.size) < 0.3, rng.integers(0, n_labels, truth.size),
                         truth)
        ours = eq.agreement.cohen_kappa(truth, noisy, weights=weights, n_resamples=10, rng=0)
        assert float(ours.estimate) == pytest.approx(
            cohen_kappa_score(truth, noisy, weights=weights), abs=1e-12)


def test_kappa_string_labels_and_label_order() -> None:
    a = ["low", "mid", "high", "mid", "low", "high", "mid", "mid"]
    b = ["low", "high", "high", "mid", "mid", "high", "low", "mid"]
    order = ["low", "mid", "high"]
    for weights in (None, "linear", "quadratic"):
        ours = eq.agreement.cohen_kappa(a, b, labels=order, weights=weights, n_resamples=10)
        assert float(ours.estimate) == pytest.approx(
            cohen_kappa_score(a, b, labels=order, weights=weights), abs=1e-12)
    # the default order is sorted ("high" < "low" < "mid"): linear weights differ
    default = eq.agreement.cohen_kappa(a, b, weights="linear", n_resamples=10)
    assert default.details["labels"] == ["high", "low", "mid"]
    assert float(default.estimate) == pytest.approx(
        cohen_kappa_score(a, b, weights="linear"), abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=40),
       st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_property_matches_sklearn(pairs: list, weights: str | None) -> None:
    a, b = np.array(pairs).T
    ours = float(eq.agreement.cohen_kappa(a, b, weights=weights, n_resamples=5, rng=0).estimate)
    if len(np.unique(np.concatenate([a, b]))) == 1:
        assert np.isnan(ours)  # p_e = 1: undefined (sklearn warns and returns nan)
        return
    theirs = cohen_kappa_score(a, b, weights=weights)
    assert ours == pytest.approx(theirs, abs=1e-12)
    # symmetric in the raters
    swapped = eq.agreement.cohen_kappa(b, a, weights=weights, n_resamples=5, rng=0)
    assert float(swapped.estimate) == pytest.approx(ours, abs=1e-12)


def test_kappa_bootstrap_equals_item_resampling() -> None:
    """Multinomial cell counts = resampling items: compare with an explicit index bootstrap."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 3, 80)
    b = np.where(rng.random(80) < 0.4, rng.integers(0, 3, 80), a)
    res = eq.agreement.cohen_kappa(a, b, n_resamples=4000, rng=5)
    idx = rng.integers(0, 80, size=(4000, 80))
    conf = np.zeros((4000, 3, 3))
    np.add.at(conf, (np.arange(4000)[:, None], a[idx], b[idx]), 1)
    from evaluq.agreement import _kappa_from_confusion, _kappa_weights
    direct = _kappa_from_confusion(conf, _kappa_weights(3, None))
    se_ours, se_direct = float(res.standard_error), direct.std(ddof=1)
    # SE of an SD estimate from 4000 resamples is about 1.1%; allow 4 of those each
    assert se_ours == pytest.approx(se_direct, rel=0.07)
    assert float(res.bootstrap_distribution.mean()) == pytest.approx(direct.mean(), abs=0.01)


def test_kappa_result_and_intervals() -> None:
    a = [0, 1, 1, 2, 2, 2, 0, 1, 2, 1] * 3
    b = [0, 1, 2, 2, 2, 1, 0, 1, 2, 0] * 3
    res = eq.agreement.cohen_kappa(a, b, n_resamples=500, rng=1, confidence_level=0.9)
    assert res.bootstrap_distribution.dims == (RESAMPLE,)
    assert res.n_resamples == 500
    assert res.interval.dims == (CI_BOUND,)
    assert res.interval.attrs == {"ci_kind": "percentile", "confidence_level": 0.9}
    lo, hi = res.interval.values
    assert lo < float(res.estimate) < hi
    wide = res.confidence_interval(0.99)
    assert wide[0] <= lo
    assert wide[1] >= hi
    again = eq.agreement.cohen_kappa(a, b, n_resamples=500, rng=1, confidence_level=0.9)
    xr.testing.assert_equal(res.bootstrap_distribution, again.bootstrap_distribution)
    text = repr(res)
    assert "AgreementResult(cohen_kappa" in text
    assert "n_items=30" in text
    assert "<table" in res._repr_html_()
    df = res.to_dataframe()
    assert list(df.columns) == ["estimate", "standard_error", "lower", "upper"]
    assert df.index.tolist() == ["cohen_kappa"]
    ds = res.to_dataset()
    assert ds.attrs["statistic"] == "cohen_kappa"
    assert "bootstrap_distribution" in ds


def test_kappa_degenerate_resamples_are_counted() -> None:
    a = [0] * 9 + [1]
    b = [0] * 9 + [1]
    res = eq.agreement.cohen_kappa(a, b, n_resamples=2000, rng=0)
    assert float(res.estimate) == 1.0
    n_undefined = int(res.n_undefined)
    assert 0 < n_undefined < 2000  # resamples without item 10 have p_e = 1
    assert int(res.bootstrap_distribution.isnull().sum()) == n_undefined
    assert np.isfinite(res.interval.values).all()


@pytest.mark.parametrize(
    ("args", "kwargs", "err", "match"),
    [
        (([0, 1, np.nan], [0, 1, 1]), {}, ValueError, r"`rater1` contains 1 NaN"),
        (([0, 1, 1], [0, None, 1]), {}, ValueError, r"`rater2` contains None"),
        (([0, 1, 1], [0, 1]), {}, ValueError, r"rate the same items; got 3 and 2"),
        (([[0, 1]], [[0, 1]]), {}, ValueError, r"`rater1` must be 1-D"),
        (([], []), {}, ValueError, r"`rater1` is empty"),
        (([0, 1, 2], [0, 1, 1]), {"labels": [0, 1]}, ValueError,
         r"`rater1` has labels not in `labels`: \[2\]"),
        (([0, 1], [0, 1]), {"labels": [0, 1, 1]}, ValueError, r"must not repeat a label"),
        (([0, 1], [0, 1]), {"weights": "cubic"}, ValueError, r"`weights` must be one of"),
        (([0, 1], [0, 1]), {"n_resamples": 0}, ValueError, r"`n_resamples` must be >= 1"),
        (([0, 1], [0, 1]), {"confidence_level": 95}, ValueError, r"`confidence_level` must be"),
        (([0, 1], [0, 1]), {"rng": "seed"}, TypeError, r"`rng` must be an int"),
    ],
)
def test_kappa_bad_input(args: tuple, kwargs: dict, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        eq.agreement.cohen_kappa(*args, **kwargs)


# --- Krippendorff's alpha -------------------------------------------------------------------------

@pytest.mark.parametrize(("level", "expected"),
                         [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_krippendorff_2011_example(level: str, expected: float) -> None:
    res = eq.agreement.krippendorff_alpha(K2011.T, level_of_measurement=level, n_resamples=10)
    assert float(res.estimate) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_krippendorff_package(level: str) -> None:
    rng = np.random.default_rng(6)
    for case in range(8):
        n_items, n_raters, n_values = 20 + 15 * case, 2 + case % 4, 2 + case % 5
        truth = rng.integers(1, n_values + 1, n_items)
        ratings = np.where(rng.random((n_items, n_raters)) < 0.35,
                           rng.integers(1, n_values + 1, (n_items, n_raters)), truth[:, None])
        ratings = _missing(rng, ratings, 0.1 + 0.05 * (case % 4))
        ours = eq.agreement.krippendorff_alpha(ratings, level_of_measurement=level,
                                               n_resamples=10, rng=0)
        theirs = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
        assert float(ours.estimate) == pytest.approx(theirs, abs=1e-10)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["nominal", "ordinal", "interval"]),
       st.integers(2, 30), st.integers(2, 5), st.integers(2, 6), st.floats(0, 0.5))
def test_alpha_property_matches_krippendorff(seed: int, level: str, n_items: int,
                                             n_raters: int, n_values: int,
                                             missing: float) -> None:
    rng = np.random.default_rng(seed)
    ratings = _missing(rng, rng.integers(0, n_values, (n_items, n_raters)), missing)
    counts = (~np.isnan(ratings)).sum(axis=1)
    pairable = ratings[counts >= 2]
    if pairable.size == 0 or np.unique(pairable[~np.isnan(pairable)]).size < 2:
        return  # alpha undefined (tested among the errors)
    ours = eq.agreement.krippendorff_alpha(ratings, level_of_measurement=level, n_resamples=5)
    theirs = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
    assert float(ours.estimate) == pytest.approx(theirs, abs=1e-9)


def test_alpha_interval_continuous_values() -> None:
    rng = np.random.default_rng(7)
    truth = rng.normal(size=50)
    ratings = _missing(rng, truth[:, None] + rng.normal(0, 0.7, (50, 3)), 0.2)
    ours = eq.agreement.krippendorff_alpha(ratings, level_of_measurement="interval",
                                           n_resamples=10)
    theirs = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement="interval")
    assert float(ours.estimate) == pytest.approx(theirs, abs=1e-10)
    # the coincidence-matrix route (value_domain given) agrees with the moment route
    domain = np.unique(ratings[~np.isnan(ratings)])
    via_o = eq.agreement.krippendorff_alpha(ratings, level_of_measurement="interval",
                                            value_domain=domain, n_resamples=10)
    assert float(via_o.estimate) == pytest.approx(float(ours.estimate), abs=1e-10)


def test_alpha_ordinal_value_domain() -> None:
    rng = np.random.default_rng(8)
    ratings = _missing(rng, rng.integers(1, 4, (30, 3)), 0.1)
    domain = [1, 2, 3, 4, 5]  # unused values do not change ordinal distances
    ours = eq.agreement.krippendorff_alpha(ratings, level_of_measurement="ordinal",
                                           value_domain=domain, n_resamples=10)
    theirs = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement="ordinal",
                                value_domain=domain)
    assert float(ours.estimate) == pytest.approx(theirs, abs=1e-10)
    # a reversed domain reverses the order: ordinal alpha is unchanged
    rev = eq.agreement.krippendorff_alpha(ratings, level_of_measurement="ordinal",
                                          value_domain=domain[::-1], n_resamples=10)
    assert float(rev.estimate) == pytest.approx(theirs, abs=1e-10)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_bootstrap_is_item_resampling(level: str) -> None:
    """Each bootstrap replicate equals alpha (by the krippendorff package) of the items drawn."""
    rng = np.random.default_rng(9)
    truth = rng.integers(1, 5, 40)
    ratings = _missing(rng, np.where(rng.random((40, 3)) < 0.3, 3, truth[:, None]), 0.15)
    res = eq.agreement.krippendorff_alpha(ratings, level_of_measurement=level, n_resamples=15,
                                          rng=10)
    counts = bootstrap_counts(np.random.default_rng(10), 40, 15).astype(int)
    for b in range(15):
        drawn = ratings[np.repeat(np.arange(40), counts[b])]
        theirs = krippendorff.alpha(reliability_data=drawn.T, level_of_measurement=level)
        assert float(res.bootstrap_distribution[b]) == pytest.approx(theirs, abs=1e-10)


def test_alpha_dataarray_and_invariance() -> None:
    rng = np.random.default_rng(11)
    ratings = _missing(rng, rng.integers(0, 3, (25, 4)), 0.2)
    da = xr.DataArray(ratings.T, dims=("coder", "unit"))
    res = eq.agreement.krippendorff_alpha(da, rater_dim="coder", n_resamples=10)
    base = eq.agreement.krippendorff_alpha(ratings, n_resamples=10)
    assert float(res.estimate) == pytest.approx(float(base.estimate), abs=1e-12)
    # reordering items or raters changes nothing
    perm = eq.agreement.krippendorff_alpha(ratings[rng.permutation(25)][:, ::-1],
                                           n_resamples=10)
    assert float(perm.estimate) == pytest.approx(float(base.estimate), abs=1e-12)


def test_alpha_perfect_agreement_and_single_ratings() -> None:
    ratings = np.array([[1, 1, np.nan], [2, 2, 2], [3, np.nan, np.nan], [1, 1, 1.0]])
    res = eq.agreement.krippendorff_alpha(ratings, n_resamples=200, rng=0)
    assert float(res.estimate) == 1.0
    assert int(res.n_undefined) > 0  # resamples with one distinct value
    assert res.n_items == 4


@pytest.mark.parametrize(
    ("ratings", "kwargs", "err", "match"),
    [
        (np.ones(5), {}, ValueError, r"`ratings` must be 2-D \(items x raters\)"),
        (np.ones((5, 1)), {}, ValueError, r"at least 2 raters"),
        (np.ones((1, 3)), {}, ValueError, r"at least 2 items"),
        (np.array([["a", "b"], ["a", "a"]]), {}, TypeError, r"`ratings` must be numeric"),
        (np.array([[1, np.inf], [1, 2]]), {}, ValueError, r"infinite"),
        (np.array([[1, np.nan], [np.nan, 2]]), {}, ValueError, r"no item rated by at least 2"),
        (np.ones((4, 3)), {}, ValueError, r"at least 2 distinct values"),
        (np.ones((4, 3)), {"level_of_measurement": "interval"}, ValueError,
         r"at least 2 distinct values"),
        (np.array([[1, 2], [2, 3.0]]), {"value_domain": [1, 2]}, ValueError,
         r"values not in `value_domain`: \[3.0\]"),
        (np.array([[1, 2], [2, 2.0]]), {"value_domain": [1, 2, 2]}, ValueError,
         r"`value_domain` must hold distinct"),
        (np.array([[1, 2], [2, 2.0]]), {"level_of_measurement": "ratio"}, ValueError,
         r"`level_of_measurement` must be one of 'nominal', 'ordinal', 'interval'"),
        (xr.DataArray(np.ones((3, 2)), dims=("a", "b")), {}, ValueError,
         r"2-D DataArray with a 'rater' dim"),
    ],
)
def test_alpha_bad_input(ratings: np.ndarray, kwargs: dict, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        eq.agreement.krippendorff_alpha(ratings, n_resamples=10, **kwargs)


# --- ICC ------------------------------------------------------------------------------------------

def test_icc_shrout_fleiss_table() -> None:
    res = eq.agreement.icc(SF_DATA, n_resamples=200, rng=0)
    assert res.estimate.dims == ("form",)
    assert list(res.estimate.coords["form"].values) == list(ICC_FORMS)
    np.testing.assert_allclose(res.estimate, SF_ICC, atol=5e-3)
    np.testing.assert_allclose(res.estimate, _icc_anova(SF_DATA), atol=1e-12)


def test_icc_matches_direct_anova() -> None:
    rng = np.random.default_rng(12)
    for case in range(6):
        n, k = 5 + 7 * case, 2 + case % 4
        x = (rng.normal(0, 2, (n, 1)) + rng.normal(0, 1, (1, k)) + rng.normal(0, 1, (n, k))
             + 1e4 * (case % 2))  # a large offset must not cost accuracy
        res = eq.agreement.icc(x, n_resamples=10, rng=0)
        np.testing.assert_allclose(res.estimate, _icc_anova(x), atol=1e-9)


def test_icc_bootstrap_is_row_resampling() -> None:
    rng = np.random.default_rng(13)
    x = rng.normal(0, 2, (15, 1)) + rng.normal(0, 1, (15, 3))
    res = eq.agreement.icc(x, n_resamples=12, rng=14)
    counts = bootstrap_counts(np.random.default_rng(14), 15, 12).astype(int)
    for b in range(12):
        drawn = x[np.repeat(np.arange(15), counts[b])]
        np.testing.assert_allclose(res.bootstrap_distribution[b], _icc_anova(drawn),
                                   atol=1e-9)


def test_icc_result_over_forms() -> None:
    res = eq.agreement.icc(SF_DATA, n_resamples=300, rng=0)
    assert res.bootstrap_distribution.dims == (RESAMPLE, "form")
    assert res.interval.dims == ("form", CI_BOUND)
    assert res.interval.sel(form="ICC(3,1)", ci_bound="lower") < 0.71
    df = res.to_dataframe()
    assert df.index.tolist() == list(ICC_FORMS)
    assert "ICC(2,k)" in repr(res)
    da = xr.DataArray(SF_DATA.T, dims=("judge", "target"))
    by_dim = eq.agreement.icc(da, rater_dim="judge", n_resamples=10)
    np.testing.assert_allclose(by_dim.estimate, SF_ICC, atol=5e-3)


def test_icc_no_between_item_variance_is_undefined() -> None:
    x = np.tile([1.0, 2.0, 3.0], (5, 1))  # every item identical
    res = eq.agreement.icc(x, n_resamples=10, rng=0)
    assert np.isnan(res.estimate).all()
    assert np.isnan(res.interval).all()


@pytest.mark.parametrize(
    ("ratings", "err", "match"),
    [
        (np.array([[1.0, np.nan], [2, 3], [3, 3]]), ValueError,
         r"`ratings` contains 1 NaN value\(s\); the ICC needs complete"),
        (np.ones(4), ValueError, r"must be 2-D"),
        (np.ones((4, 1)), ValueError, r"at least 2 raters"),
    ],
)
def test_icc_bad_input(ratings: np.ndarray, err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        eq.agreement.icc(ratings, n_resamples=10)


# --- calibration (slow) ---------------------------------------------------------------------------

@pytest.mark.slow
def test_kappa_bootstrap_roughly_calibrated() -> None:
    """Two raters copy a true label with prob. 0.7 (else uniform): population kappa is known.

    Coverage of the 90% percentile interval over 300 data sets of 150 items is within a loose
    binomial band (the percentile bootstrap is only asymptotically exact).
    """
    rng = np.random.default_rng(15)
    n_sets, n_items, n_labels, keep, level = 300, 150, 3, 0.7, 0.9
    # P(agree) = keep^2 + (1 - keep^2)/K ; P_e = 1/K (uniform marginals)
    p_o = keep**2 + (1 - keep**2) / n_labels
    kappa_true = (p_o - 1 / n_labels) / (1 - 1 / n_labels)
    truth = rng.integers(0, n_labels, (n_sets, n_items))
    r1 = np.where(rng.random(truth.shape) < keep, truth, rng.integers(0, n_labels, truth.shape))
    r2 = np.where(rng.random(truth.shape) < keep, truth, rng.integers(0, n_labels, truth.shape))
    covered = 0
    for s in range(n_sets):  # 300 small fits; each bootstrap is vectorised
        res = eq.agreement.cohen_kappa(r1[s], r2[s], n_resamples=999, rng=s,
                                       confidence_level=level)
        lo, hi = res.interval.values
        covered += lo <= kappa_true <= hi
    print(f"\nCALIBRATION | agreement.cohen_kappa percentile interval (150 items) | coverage | "
          f"nominal {level:.3f} | measured {covered / n_sets:.4f} | n {n_sets}")
    assert abs(covered - n_sets * level) <= 4 * np.sqrt(n_sets * level * (1 - level)) + 6


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

_RATINGS = np.array([[1, 2, 3], [2, 2, 3], [3, 3, 3], [1, 1, 2], [2, 3, 3]], dtype=float)


@pytest.mark.parametrize("call", [
    lambda n: eq.agreement.icc(_RATINGS, n_resamples=n),
    lambda n: eq.agreement.krippendorff_alpha(_RATINGS, n_resamples=n),
    lambda n: eq.agreement.krippendorff_alpha(_RATINGS, level_of_measurement="interval",
                                              n_resamples=n),
    lambda n: eq.agreement.cohen_kappa(_RATINGS[:, 0], _RATINGS[:, 1], n_resamples=n),
])
def test_one_resample_is_refused(call):
    with pytest.raises(ValueError, match=r"`n_resamples` must be >= 2 .*width zero.*got 1"):
        call(1)
    with pytest.raises(ValueError, match=r"`n_resamples` must be >= 1; got 0"):
        call(0)
    res = call(2)
    assert res.n_resamples == 2


def test_bool_ratings_are_refused():
    with pytest.raises(TypeError, match=r"`ratings` must be numeric .*got dtype bool"):
        eq.agreement.icc(_RATINGS > 1.5, n_resamples=10)
    with pytest.raises(TypeError, match=r"`ratings` must be numeric .*got dtype bool"):
        eq.agreement.krippendorff_alpha(_RATINGS > 1.5, n_resamples=10)


def test_kappa_label_set_checks():
    a, b = [0, 1, 1, 0], [0, 1, 0, 0]
    with pytest.raises(ValueError,
                       match=r"`labels` must be a non-empty 1-D sequence.*\[\[0, 1\]\]"):
        eq.agreement.cohen_kappa(a, b, labels=[[0, 1]], n_resamples=10)
    with pytest.raises(ValueError, match=r"`labels` must be a non-empty 1-D sequence"):
        eq.agreement.cohen_kappa(a, b, labels=[], n_resamples=10)
    with pytest.raises(ValueError, match=r"`labels` must be a non-empty 1-D sequence.*'01'"):
        eq.agreement.cohen_kappa(["0", "1"], ["0", "1"], labels="01", n_resamples=10)
    with pytest.raises(ValueError, match=r"`labels` must not repeat a label; got \[0, 0, 1\]"):
        eq.agreement.cohen_kappa(a, b, labels=[0, 0, 1], n_resamples=10)


@pytest.mark.parametrize("gap", [None, np.nan])
def test_a_missing_text_label_names_the_item_and_the_remedy(gap):
    """It said "labels of one kind ... got types {'float', 'str'}"."""
    with pytest.raises(ValueError, match=r"`rater1` has no label for 1 item\(s\) \(None or NaN; "
                                         r"item 2 first\).*krippendorff_alpha"):
        eq.agreement.cohen_kappa(["a", "b", gap, "a"], ["a", "b", "b", "a"])

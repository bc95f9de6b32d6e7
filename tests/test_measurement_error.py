"""Tests of evaluq.measurement_error: check values and errata of formulas.md section 4, Monte
Carlo and scipy (ncx2, foldnorm, binom) cross-checks, xarray dims, input validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.integrate import simpson
from scipy.special import erf, erfc

import evaluq as eq
from evaluq import _imhof as imhof
from evaluq import measurement_error as me
from evaluq._dims import CI_BOUND, ITEM, MODEL


@pytest.fixture
def regression_case(rng):
    m = 40
    ybar = rng.normal(0, 1, m)
    yhat = ybar + rng.normal(0, 0.6, m)
    sigma = rng.uniform(0.1, 0.9, m)
    return ybar, yhat, sigma


def _simulate_targets(rng, ybar, sigma, n):
    return ybar + sigma * rng.standard_normal((n, ybar.size))


# --- MSE ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("equal", [True, False])
def test_mse_moments_match_monte_carlo(regression_case, rng, equal) -> None:
    ybar, yhat, sigma = regression_case
    if equal:
        sigma = 0.5
    y = _simulate_targets(rng, ybar, np.broadcast_to(sigma, ybar.shape), 100_000)
    mse = ((y - yhat) ** 2).mean(1)
    n = mse.size
    exp_mse = float(me.expected_mse(ybar, yhat, sigma))
    var = float(me.var_mse(ybar, yhat, sigma))
    assert abs(mse.mean() - exp_mse) < 4 * np.sqrt(var / n)
    # SE of a sample variance ~ var * sqrt(2 / n) (plus kurtosis; 6 SE is generous)
    assert abs(mse.var(ddof=1) - var) < 6 * var * np.sqrt(2 / n) * 2


def test_mse_equal_sigma_formula_and_ncx2(regression_case) -> None:
    ybar, yhat, _ = regression_case
    s, m = 0.5, ybar.size
    d = ybar - yhat
    assert float(me.expected_mse(ybar, yhat, s)) == pytest.approx(np.mean(d**2) + s**2)
    assert float(me.var_mse(ybar, yhat, s)) == pytest.approx(
        2 * s**4 / m + 4 * s**2 * np.sum(d**2) / m**2)
    dist = me.mse_distribution(ybar, yhat, s)
    assert dist.method == "ncx2"
    nc = np.sum(d**2) / s**2
    scaled = stats.ncx2(df=m, nc=nc, scale=s**2 / m)
    assert float(dist.mean) == pytest.approx(scaled.mean(), rel=1e-12)
    assert float(dist.variance) == pytest.approx(scaled.var(), rel=1e-12)
    np.testing.assert_allclose(dist.quantile([0.05, 0.5, 0.95]).values,
                               scaled.ppf([0.05, 0.5, 0.95]), rtol=1e-10)
    iv = dist.confidence_interval(0.9)
    assert iv.dims == (CI_BOUND,)
    np.testing.assert_allclose(iv.values, scaled.ppf([0.05, 0.95]), rtol=1e-10)
    assert float(dist.cdf(scaled.ppf(0.3))) == pytest.approx(0.3, abs=1e-10)


def test_mse_ncx2_against_monte_carlo(regression_case, rng) -> None:
    ybar, yhat, _ = regression_case
    dist = me.mse_distribution(ybar, yhat, 0.4)
    y = _simulate_targets(rng, ybar, np.full(ybar.shape, 0.4), 100_000)
    mse = ((y - yhat) ** 2).mean(1)
    for p in (0.025, 0.5, 0.975):
        x = float(dist.quantile(p).item())
        assert abs(np.mean(mse <= x) - p) < 4 * np.sqrt(p * (1 - p) / mse.size)


def test_imhof_equals_ncx2_for_equal_sigma(regression_case) -> None:
    ybar, yhat, _ = regression_case
    exact = me.mse_distribution(ybar, yhat, 0.3)
    imhof = me.mse_distribution(ybar, yhat, 0.3, method="imhof")
    assert imhof.method == "imhof"
    for x in exact.quantile([0.01, 0.2, 0.5, 0.8, 0.99]).values:
        assert float(imhof.cdf(x)) == pytest.approx(float(exact.cdf(x)), abs=1e-8)
    np.testing.assert_allclose(imhof.confidence_interval(0.95).values,
                               exact.confidence_interval(0.95).values, rtol=1e-7)


@pytest.mark.parametrize("m", [1, 2, 5])
def test_imhof_equals_ncx2_few_items(rng, m) -> None:
    ybar = rng.normal(0, 1, m)
    yhat = ybar + rng.normal(0, 0.5, m)
    exact = me.mse_distribution(ybar, yhat, 0.3)
    imhof = me.mse_distribution(ybar, yhat, 0.3, method="imhof")
    for x in exact.quantile([0.001, 0.5, 0.999]).values:
        assert float(imhof.cdf(x)) == pytest.approx(float(exact.cdf(x)), abs=1e-10)


def test_imhof_unequal_sigma_against_monte_carlo(regression_case, rng) -> None:
    ybar, yhat, sigma = regression_case
    sigma = sigma.copy()
    sigma[:3] = 0.0  # exact targets contribute a constant
    dist = me.mse_distribution(ybar, yhat, sigma)
    assert dist.method == "imhof"
    y = _simulate_targets(rng, ybar, sigma, 100_000)
    mse = ((y - yhat) ** 2).mean(1)
    iv = dist.confidence_interval(0.95).values
    for p, x in ((0.025, iv[0]), (0.975, iv[1])):
        assert abs(np.mean(mse <= x) - p) < 4 * np.sqrt(p * (1 - p) / mse.size)
    mc = me.mse_distribution(ybar, yhat, sigma, method="monte_carlo", n_draws=20_000, rng=1)
    np.testing.assert_allclose(mc.confidence_interval(0.95).values, iv, rtol=0.03)
    assert "MSEDistribution(method='imhof'" in repr(dist)
    frame = dist.to_dataframe()
    assert list(frame.columns) == ["mean", "variance", "sd", "lower", "upper"]


@pytest.mark.parametrize("m", [2, 3])
def test_imhof_few_items_against_monte_carlo(rng, m) -> None:
    """Few terms: the oscillating integrand decays slowly (the Fourier-integral rule's case)."""
    ybar = rng.normal(0, 1, m)
    yhat = ybar + rng.normal(0, 0.5, m)
    sigma = rng.uniform(0.1, 1.0, m)
    dist = me.mse_distribution(ybar, yhat, sigma)
    mse = ((_simulate_targets(rng, ybar, sigma, 200_000) - yhat) ** 2).mean(1)
    for x in np.quantile(mse, [0.01, 0.3, 0.7, 0.99]):
        p = float(dist.cdf(x))
        assert abs(np.mean(mse <= x) - p) < 4 * np.sqrt(p * (1 - p) / mse.size)


def test_mse_distribution_sigma_zero_is_a_point_mass() -> None:
    dist = me.mse_distribution([1.0, 2.0], [0.0, 0.0], 0.0)
    assert float(dist.variance) == 0.0
    np.testing.assert_allclose(dist.confidence_interval(0.95).values, [2.5, 2.5])


def test_mse_distribution_over_models(regression_case) -> None:
    ybar, yhat, _ = regression_case
    sigma = 0.4  # the ncx2 path: the dims plumbing is the same for every method
    preds = xr.DataArray(np.stack([yhat, yhat + 0.3]), dims=(MODEL, ITEM),
                         coords={MODEL: ["a", "b"]})
    dist = me.mse_distribution(ybar, preds, sigma)
    iv = dist.confidence_interval(0.95)
    assert iv.dims == (MODEL, CI_BOUND)
    single = me.mse_distribution(ybar, yhat + 0.3, sigma).confidence_interval(0.95)
    np.testing.assert_allclose(iv.sel(model="b").values, single.values, rtol=1e-9)
    ds = dist.to_dataset()
    assert set(ds.data_vars) == {"mean", "variance", "sd", "interval"}
    assert "<table" in dist._repr_html_()


@pytest.mark.parametrize("method", ["ncx2", "imhof", "monte_carlo"])
def test_mse_cdf_is_vectorised_over_x(regression_case, method) -> None:
    ybar, yhat, sigma = regression_case
    sig = 0.4 if method == "ncx2" else sigma
    dist = me.mse_distribution(ybar, yhat, sig, method=method, n_draws=5000, rng=0)
    xs = np.asarray(dist.quantile([0.05, 0.5, 0.95]).values)
    xs = np.concatenate([[-1.0, 0.0], xs, xs[:1]])  # below the support, and a repeated x
    cdf = dist.cdf(xs)
    assert cdf.dims == ("x",)
    np.testing.assert_array_equal(cdf["x"].values, xs)
    np.testing.assert_allclose(cdf.values, [float(dist.cdf(float(x))) for x in xs],
                               rtol=0, atol=1e-15)
    assert cdf.values[0] == 0.0
    assert cdf.values[-1] == cdf.values[2]
    assert np.all(np.diff(cdf.values[1:-1]) >= 0)
    assert dist.cdf(1.0).dims == ()


def test_mse_cdf_and_pdf_broadcast_over_models(regression_case) -> None:
    ybar, yhat, _ = regression_case
    preds = xr.DataArray(np.stack([yhat, yhat + 0.3]), dims=(MODEL, ITEM),
                         coords={MODEL: ["a", "b"]})
    dist = me.mse_distribution(ybar, preds, 0.4)
    grid = dist.cdf([0.5, 1.0, 2.0])
    assert grid.dims == (MODEL, "x")
    single = me.mse_distribution(ybar, yhat + 0.3, 0.4)
    np.testing.assert_allclose(grid.sel(model="b").values, single.cdf([0.5, 1.0, 2.0]).values)
    # a DataArray x is matched by dim name: each model's own median
    med = dist.quantile(0.5).squeeze("quantile", drop=True)
    np.testing.assert_allclose(dist.cdf(med).values, [0.5, 0.5], atol=1e-10)
    assert dist.pdf(med).dims == (MODEL,)
    np.testing.assert_allclose(dist.pdf(med).sel(model="b"), single.pdf(float(med.sel(model="b"))))


@pytest.mark.parametrize("m", [2, 3, 10, 200])
def test_imhof_pdf_equals_ncx2_density(rng, m) -> None:
    """The Imhof density formula against scipy's ncx2 density (equal sigma), from 2 items."""
    ybar = rng.normal(0, 1, m)
    yhat = ybar + rng.normal(0, 0.5, m)
    exact = me.mse_distribution(ybar, yhat, 0.3)
    imhof = me.mse_distribution(ybar, yhat, 0.3, method="imhof")
    xs = np.concatenate([np.asarray(exact.quantile([0.001, 0.1, 0.5, 0.9, 0.999]).values),
                         [1e-4 * float(exact.mean)]])
    lam = 0.09 / m
    reference = stats.ncx2.pdf(xs / lam, df=m, nc=np.sum((ybar - yhat) ** 2) / 0.09) / lam
    np.testing.assert_allclose(exact.pdf(xs).values, reference, rtol=1e-12)
    scale = reference.max()
    got = imhof.pdf(xs).values
    np.testing.assert_allclose(got[:5], reference[:5], rtol=0, atol=1e-9 * scale)
    # the last x is tiny: for two items the density is interpolated from its value at 0
    if m == 2:
        np.testing.assert_allclose(got[5], reference[5], rtol=1e-7)
    else:
        np.testing.assert_allclose(got[5], reference[5], rtol=0, atol=1e-9 * scale)


@pytest.mark.parametrize("k", [2, 3, 4, 8])
def test_imhof_tiny_x_small_x_form(k) -> None:
    """Far below the mean (x < 1e-3 max(lam)) QAWF failed (CDF 0.14 instead of 4e-13 for
    three items at x = 1e-8, with a warning); the small-x form agrees with ncx2."""
    lam, d2 = np.full(k, 0.2), np.linspace(0.0, 1.0, k)
    for x in (1e-10, 1e-8, 1e-6, 1e-4, 1.9e-4, 2.1e-4, 1e-3):
        f_exact = stats.ncx2.pdf(x / 0.2, k, d2.sum()) / 0.2
        cdf_exact = stats.ncx2.cdf(x / 0.2, k, d2.sum())
        assert imhof.imhof_pdf(x, lam, d2) == pytest.approx(f_exact, rel=1e-7, abs=1e-14)
        assert imhof.imhof_cdf(x, lam, d2) == pytest.approx(cdf_exact, rel=1e-7, abs=1e-15)


@pytest.mark.parametrize("m", [2, 40])  # 3 items: see the ncx2 and tiny-x density tests
def test_imhof_pdf_unequal_sigma(rng, m) -> None:
    """Unequal sigma: the density against finite differences of the CDF, its integral against
    the CDF, and a histogram of simulated MSE values (binomial tolerance)."""
    ybar = rng.normal(0, 1, m)
    yhat = ybar + rng.normal(0, 0.5, m)
    sigma = rng.uniform(0.2, 1.0, m)
    dist = me.mse_distribution(ybar, yhat, sigma)
    assert dist.method == "imhof"
    mu, sd = float(dist.mean), float(np.sqrt(dist.variance))
    xs = np.linspace(max(0.3 * mu, mu - 1.5 * sd), mu + 3 * sd, 5)
    h = 1e-3 * sd
    big_f = [dist.cdf(xs[1:4] + k * h).values for k in (-2, -1, 1, 2)]
    fd = (big_f[0] - 8 * big_f[1] + 8 * big_f[2] - big_f[3]) / (12 * h)
    pdf = dist.pdf(xs).values
    np.testing.assert_allclose(pdf[1:4], fd, rtol=0, atol=1e-6 / sd)
    # Simpson's rule of the density between two points = the CDF difference
    grid = np.linspace(xs[1], xs[2], 11)
    area = simpson(dist.pdf(grid).values, x=grid)
    assert area == pytest.approx(float(dist.cdf(xs[2]) - dist.cdf(xs[1])), abs=1e-6)
    # histogram of Monte Carlo draws: bins of width 2w around each x
    n = 400_000
    mse = ((_simulate_targets(rng, ybar, sigma, n) - yhat) ** 2).mean(1)
    w = 0.05 * sd
    p_bin = dist.cdf(xs + w).values - dist.cdf(xs - w).values
    hits = np.array([np.sum((mse > x - w) & (mse <= x + w)) for x in xs])
    assert np.all(np.abs(hits - n * p_bin) <= 4 * np.sqrt(n * p_bin * (1 - p_bin)))
    # the density matches the bin probability to second order in w
    np.testing.assert_allclose(pdf * 2 * w, p_bin, rtol=0.01)


def test_mse_pdf_edges_and_monte_carlo() -> None:
    # two items with sigma > 0: density at the lower end exp(-sum delta^2/2) / (2 sqrt(l1 l2))
    d, s = np.array([0.3, -0.2]), np.array([0.5, 0.8])
    dist = me.mse_distribution(d, [0.0, 0.0], s)
    lam = s**2 / 2
    f0 = np.exp(-0.5 * np.sum((d / s) ** 2)) / (2 * np.sqrt(lam.prod()))
    assert float(dist.pdf(0.0)) == pytest.approx(f0, rel=1e-12)
    assert float(dist.pdf(1e-6)) == pytest.approx(f0, rel=1e-3)
    assert float(dist.pdf(-0.1)) == 0.0
    three = me.mse_distribution([0.3, -0.2, 0.1], [0.0, 0.0, 0.0], [0.5, 0.8, 0.6])
    assert float(three.pdf(0.0)) == 0.0
    one = me.mse_distribution([0.3], [0.0], [0.5], method="imhof")
    assert float(one.pdf(0.0)) == np.inf
    assert float(one.pdf(0.2)) == pytest.approx(stats.ncx2.pdf(0.2 / 0.25, 1, 0.36) / 0.25)
    # sigma = 0 everywhere: a point mass
    point = me.mse_distribution([1.0, 2.0], [0.0, 0.0], 0.0)
    assert point.pdf([2.0, 2.5, 3.0]).values.tolist() == [0.0, np.inf, 0.0]
    assert point.cdf([2.0, 2.5, 3.0]).values.tolist() == [0.0, 1.0, 1.0]
    # Monte Carlo: a kernel density estimate, close to the exact density in the bulk
    ybar = np.linspace(-1, 1, 30)
    exact = me.mse_distribution(ybar, ybar + 0.2, 0.5)
    mc = me.mse_distribution(ybar, ybar + 0.2, 0.5, method="monte_carlo", n_draws=50_000,
                             rng=3)
    xs = np.asarray(exact.quantile([0.25, 0.5, 0.75]).values)
    np.testing.assert_allclose(mc.pdf(xs).values, exact.pdf(xs).values, rtol=0.05)


@pytest.mark.parametrize(
    ("x", "err", "match"),
    [(np.ones((2, 2)), ValueError, r"`x` must be a scalar, a 1-D array or a DataArray"),
     ([0.5, np.nan], ValueError, r"`x` contains NaN"),
     (["a"], TypeError, r"`x` must be numeric"),
     (xr.DataArray([0.5, 1.0], dims=MODEL), ValueError, r"`x` cannot be broadcast")],
)
def test_mse_cdf_pdf_bad_x(regression_case, x, err, match) -> None:
    ybar, yhat, _ = regression_case
    preds = xr.DataArray(np.stack([yhat, yhat + 0.3, yhat]), dims=(MODEL, ITEM))
    dist = me.mse_distribution(ybar, preds, 0.4)
    for func in (dist.cdf, dist.pdf):
        with pytest.raises(err, match=match):
            func(x)


# --- MAE ----------------------------------------------------------------------------------------

def test_mae_matches_scipy_foldnorm(regression_case) -> None:
    ybar, yhat, sigma = regression_case
    d = ybar - yhat
    fold = stats.foldnorm(c=np.abs(d) / sigma, scale=sigma)
    assert float(me.expected_mae(ybar, yhat, sigma)) == pytest.approx(fold.mean().mean(),
                                                                      rel=1e-12)
    assert float(me.var_mae(ybar, yhat, sigma)) == pytest.approx(
        fold.var().sum() / d.size**2, rel=1e-10)


def test_mae_matches_monte_carlo(regression_case, rng) -> None:
    ybar, yhat, sigma = regression_case
    y = _simulate_targets(rng, ybar, sigma, 100_000)
    mae = np.abs(y - yhat).mean(1)
    var = float(me.var_mae(ybar, yhat, sigma))
    assert abs(mae.mean() - float(me.expected_mae(ybar, yhat, sigma))) < 4 * np.sqrt(
        var / mae.size)
    assert mae.var(ddof=1) == pytest.approx(var, rel=6 * np.sqrt(2 / mae.size) * 2)


def test_mae_sigma_zero_is_exact_and_silent() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d_mean = me.expected_mae([1.0, -2.0, 0.0], [0.0, 0.0, 0.0], 0.0)
        d_var = me.var_mae([1.0, -2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
        mixed = me.expected_mae([1.0, 0.0], [0.0, 0.0], [0.0, 1.0])
    assert float(d_mean) == 1.0
    assert float(d_var) == 0.0
    assert float(mixed) == pytest.approx((1.0 + np.sqrt(2 / np.pi)) / 2)
    # no cancellation for sigma << |d|
    assert float(me.var_mae([1e4], [0.0], [1e-3])) == pytest.approx(1e-6, rel=1e-9)


def _paper_var_mae(d: np.ndarray, s: np.ndarray) -> float:
    """The paper's eqs. 41-42 / Table 2 (wrong): subtracts d sqrt(2/pi) e^(.) + d erf(.)."""
    per_item = (d**2 + s**2 - d * np.sqrt(2 / np.pi) * np.exp(-(d**2) / (2 * s**2))
                - d * erf(d / (np.sqrt(2) * s)))
    return float(per_item.sum() / d.size**2)


def test_erratum_paper_var_mae_disagrees_with_monte_carlo(rng) -> None:
    m = 10
    d = np.full(m, 0.5)
    s = np.full(m, 1.5)
    y = d + s * rng.standard_normal((200_000, m))
    mc_var = np.abs(y).mean(1).var(ddof=1)
    se = mc_var * np.sqrt(2 / y.shape[0]) * 2
    ours = float(me.var_mae(d, np.zeros(m), s))
    paper = _paper_var_mae(d, s)
    assert abs(mc_var - ours) < 4 * se
    assert abs(mc_var - paper) > 50 * se
    assert ours == pytest.approx(0.0905568, abs=1e-7)
    assert paper == pytest.approx(0.1992058, abs=1e-7)  # 2.2 times the true variance
    # elsewhere the paper's formula is not even positive
    assert _paper_var_mae(np.full(m, 0.4), np.full(m, 0.5)) < 0


def test_erratum_erfc_denominator(rng) -> None:
    """Eq. 37 / Table 1 write erfc(|d| / (sqrt(2) d)); with sigma in the denominator it is right."""
    d, s = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.4, 3.0])
    paper = np.abs(d) + np.sqrt(2 / np.pi) * s * np.exp(-(d**2) / (2 * s**2)) - np.abs(d) * erfc(
        np.abs(d) / (np.sqrt(2) * np.abs(d)))
    fixed = np.abs(d) + np.sqrt(2 / np.pi) * s * np.exp(-(d**2) / (2 * s**2)) - np.abs(d) * erfc(
        np.abs(d) / (np.sqrt(2) * s))
    y = d + s * rng.standard_normal((200_000, 3))
    mc = np.abs(y).mean(0)
    se = np.abs(y).std(0) / np.sqrt(y.shape[0])
    ours = np.array([float(me.expected_mae([x], [0.0], [t])) for x, t in zip(d, s, strict=True)])
    np.testing.assert_allclose(ours, fixed, rtol=1e-12)
    assert np.all(np.abs(mc - ours) < 4 * se)
    assert np.all(np.abs(mc - paper) > 10 * se)


@settings(max_examples=40, deadline=None)
@given(d=st.floats(-5, 5), s=st.floats(0, 3))
def test_folded_normal_properties(d, s) -> None:
    mu = float(me.expected_mae([d], [0.0], [s]))
    var = float(me.var_mae([d], [0.0], [s]))
    assert mu >= abs(d) - 1e-12
    assert 0.0 <= var <= s**2 + 1e-12
    assert mu == pytest.approx(np.sqrt(d**2 + s**2 - var), rel=1e-9, abs=1e-12)


# --- accuracy under label flips -----------------------------------------------------------------

def test_accuracy_check_value_and_variance_erratum(rng) -> None:
    """a = 0.85, q = 0.05 -> E[a_r] = 0.815; Var = q(1-q)/M, not q(1-q) (MC, M = 200)."""
    m, q = 200, 0.05
    y = np.ones(m, dtype=int)
    yhat = np.r_[np.ones(170, dtype=int), np.zeros(30, dtype=int)]
    assert float(me.expected_accuracy(y, yhat, q=q)) == pytest.approx(0.815, abs=1e-12)
    ours = float(me.var_accuracy(y, yhat, q=q))
    assert ours == pytest.approx(q * (1 - q) / m)
    flips = rng.random((100_000, m)) < q
    noisy = np.where(flips, 1 - y, y)
    acc = (noisy == yhat).mean(1)
    assert acc.mean() == pytest.approx(0.815, abs=4 * np.sqrt(ours / acc.size))
    mc_var = acc.var(ddof=1)
    assert mc_var == pytest.approx(0.000238, abs=0.00001)
    assert mc_var == pytest.approx(ours, rel=4 * np.sqrt(2 / acc.size))
    assert q * (1 - q) == pytest.approx(0.0475)
    assert q * (1 - q) > 100 * mc_var


def test_accuracy_pmf_is_sum_of_two_binomials() -> None:
    """M a_r ~ Bin(M a, 1 - q) + Bin(M (1 - a), q)."""
    m, q = 200, 0.05
    y = np.ones(m, dtype=int)
    yhat = np.r_[np.ones(170, dtype=int), np.zeros(30, dtype=int)]
    dist = me.accuracy_distribution(y, yhat, q=q)
    ref = np.convolve(stats.binom.pmf(np.arange(171), 170, 1 - q),
                      stats.binom.pmf(np.arange(31), 30, q))
    np.testing.assert_allclose(dist.pmf.values, ref, atol=1e-14)
    assert float(dist.mean) == pytest.approx(0.815)
    lo, hi = dist.confidence_interval(0.95).values
    cdf = np.cumsum(ref)
    assert cdf[round(hi * m)] >= 0.975
    assert cdf[round(hi * m) - 1] < 0.975
    assert cdf[round(lo * m)] >= 0.025
    assert cdf[round(lo * m) - 1] < 0.025
    assert "AccuracyDistribution(M=200" in repr(dist)
    assert "<table" in dist._repr_html_()
    assert list(dist.to_dataframe().columns) == ["mean", "variance", "sd", "lower", "upper"]


@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_exact_accuracy_interval_coverage(rng, level) -> None:
    """The exact interval holds the noisy accuracy with probability >= level (exactly and by
    simulation, within binomial error)."""
    m = 80
    y = rng.integers(0, 2, m)
    yhat = np.where(rng.random(m) < 0.75, y, 1 - y)
    q = rng.uniform(0.0, 0.2, m)
    dist = me.accuracy_distribution(y, yhat, q=q)
    assert float(dist.coverage(level)) >= level
    lo, hi = dist.confidence_interval(level).values
    n = 20_000
    acc = (np.where(rng.random((n, m)) < q, 1 - y, y) == yhat).mean(1)
    hits = int(((acc >= lo - 1e-12) & (acc <= hi + 1e-12)).sum())
    exact_cov = float(dist.coverage(level))
    assert abs(hits - n * exact_cov) <= 4 * np.sqrt(n * exact_cov * (1 - exact_cov))


def test_per_item_q_and_poisson_binomial(rng) -> None:
    m = 60
    y = rng.integers(0, 2, m)
    yhat = np.where(rng.random(m) < 0.8, y, 1 - y)
    q = rng.uniform(0, 0.3, m)
    dist = me.accuracy_distribution(y, yhat, q=q)
    pi = np.where(y == yhat, 1 - q, q)
    # exact pmf by direct convolution of the Bernoulli pmfs
    ref = np.array([1.0])
    for p in pi:
        ref = np.convolve(ref, [1 - p, p])
    np.testing.assert_allclose(dist.pmf.values, ref, atol=1e-13)
    assert float(me.expected_accuracy(y, yhat, q=q)) == pytest.approx(pi.mean())
    assert float(me.var_accuracy(y, yhat, q=q)) == pytest.approx((pi * (1 - pi)).sum() / m**2)
    flips = rng.random((100_000, m)) < q
    acc = (np.where(flips, 1 - y, y) == yhat).mean(1)
    assert acc.mean() == pytest.approx(pi.mean(), abs=4 * acc.std() / np.sqrt(acc.size))


def test_transition_matrix_k_classes(rng) -> None:
    k, m = 3, 50
    t = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.0, 0.3, 0.7]])
    y = rng.integers(0, k, m)
    yhat = np.where(rng.random(m) < 0.7, y, rng.integers(0, k, m))
    pi = t[y, yhat]
    assert float(me.expected_accuracy(y, yhat, transition=t)) == pytest.approx(pi.mean())
    n = 100_000
    u = rng.random((n, m))
    noisy = (u[..., None] > np.cumsum(t[y], axis=1)[None]).sum(-1)
    acc = (noisy == yhat).mean(1)
    var = float(me.var_accuracy(y, yhat, transition=t))
    assert abs(acc.mean() - pi.mean()) < 4 * np.sqrt(var / n)
    assert acc.var(ddof=1) == pytest.approx(var, rel=4 * np.sqrt(2 / n))
    # binary transition matrix == flip probability q
    yb, pb = y % 2, yhat % 2
    tq = np.array([[0.9, 0.1], [0.1, 0.9]])
    assert float(me.expected_accuracy(yb, pb, transition=tq)) == pytest.approx(
        float(me.expected_accuracy(yb, pb, q=0.1)))


def test_binary_labels_of_any_type() -> None:
    y = ["pos", "neg", "pos", "pos"]
    yhat = ["pos", "neg", "neg", "pos"]
    assert float(me.expected_accuracy(y, yhat, q=0.1)) == pytest.approx((3 * 0.9 + 0.1) / 4)
    with pytest.raises(ValueError, match="missing values"):
        me.expected_accuracy(["pos", None], ["pos", "neg"], q=0.1)
    with pytest.raises(TypeError, match="must be numeric"):
        me.expected_accuracy(y, yhat, transition=np.eye(2))


def test_accuracy_over_models() -> None:
    y = xr.DataArray([1, 0, 1, 1], dims=(ITEM,))
    preds = xr.DataArray([[1, 0, 1, 1], [0, 0, 1, 0]], dims=(MODEL, ITEM),
                         coords={MODEL: ["good", "bad"]})
    e = me.expected_accuracy(y, preds, q=0.1)
    assert e.dims == (MODEL,)
    np.testing.assert_allclose(e.values, [0.9, (0.9 * 2 + 0.1 * 2) / 4])
    dist = me.accuracy_distribution(y, preds, q=0.1)
    assert dist.pmf.dims == (MODEL, "n_correct")
    assert dist.confidence_interval(0.9).dims == (MODEL, CI_BOUND)
    np.testing.assert_allclose(dist.pmf.sum("n_correct").values, 1.0)


# --- validation ---------------------------------------------------------------------------------

def test_regression_validation() -> None:
    with pytest.raises(ValueError, match=r"`sigma` must be >= 0"):
        me.expected_mse([1.0, 2.0], [1.0, 2.0], -0.1)
    with pytest.raises(ValueError, match="shape mismatch"):
        me.expected_mae([1.0, 2.0], [1.0, 2.0, 3.0], 0.1)
    with pytest.raises(ValueError, match="shape mismatch"):
        me.var_mse([1.0, 2.0], [1.0, 2.0], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="NaN"):
        me.var_mae([1.0, np.nan], [1.0, 2.0], 0.1)
    with pytest.raises(ValueError, match="1-D over items"):
        me.expected_mse(np.ones((2, 2)), np.ones((2, 2)), 0.1)
    with pytest.raises(ValueError, match="needs the same sigma"):
        me.mse_distribution([1.0, 2.0], [0.0, 0.0], [0.1, 0.2], method="ncx2")
    with pytest.raises(ValueError, match="`method` must be one of"):
        me.mse_distribution([1.0, 2.0], [0.0, 0.0], 0.1, method="davies")
    with pytest.raises(ValueError, match="quantile levels"):
        me.mse_distribution([1.0, 2.0], [0.0, 0.0], 0.1).quantile(1.5)
    with pytest.raises(ValueError, match="confidence_level"):
        me.mse_distribution([1.0, 2.0], [0.0, 0.0], 0.1).confidence_interval(95)
    with pytest.raises(ValueError, match="must have an 'item' dim"):
        me.expected_mse(xr.DataArray([1.0], dims=("x",)), [1.0], 0.1)
    with pytest.raises(ValueError, match="empty"):
        me.expected_mse([], [], 0.1)


def test_accuracy_validation() -> None:
    y, p = [0, 1, 1], [0, 1, 0]
    with pytest.raises(ValueError, match=r"`q` must be a probability in \[0, 1\]"):
        me.expected_accuracy(y, p, q=1.2)
    with pytest.raises(ValueError, match=r"`q` must be a probability"):
        me.var_accuracy(y, p, q=[0.1, -0.1, 0.2])
    with pytest.raises(ValueError, match="exactly one of"):
        me.expected_accuracy(y, p)
    with pytest.raises(ValueError, match="exactly one of"):
        me.expected_accuracy(y, p, q=0.1, transition=np.eye(2))
    with pytest.raises(ValueError, match="binary labels"):
        me.expected_accuracy([0, 1, 2], [0, 1, 1], q=0.1)
    with pytest.raises(ValueError, match="rows summing to 1"):
        me.expected_accuracy(y, p, transition=[[0.9, 0.2], [0.1, 0.9]])
    with pytest.raises(ValueError, match="rows summing to 1"):
        me.expected_accuracy(y, p, transition=[[1.1, -0.1], [0.1, 0.9]])
    with pytest.raises(ValueError, match="square"):
        me.expected_accuracy(y, p, transition=[[1.0, 0.0]])
    with pytest.raises(ValueError, match=r"integer labels in \[0, 1\]"):
        me.expected_accuracy([0, 1, 2], [0, 1, 1], transition=np.eye(2))
    with pytest.raises(ValueError, match="shape mismatch"):
        me.accuracy_distribution([0, 1], [0, 1, 1], q=0.1)


def test_top_level_access() -> None:
    assert eq.measurement_error.expected_mse is me.expected_mse
    assert "measurement_error" in eq.__all__


def test_poisson_binomial_product_tree_matches_direct_convolution():
    from evaluq.measurement_error import _poisson_binomial_pmf, _poisson_binomial_tree

    rng = np.random.default_rng(8)
    for m in (1, 2, 5, 300):
        pi = rng.random(m)
        direct = np.array([1.0])
        for p in pi:
            direct = np.convolve(direct, [1 - p, p])
        np.testing.assert_allclose(_poisson_binomial_tree(pi), direct, atol=1e-14)
        np.testing.assert_allclose(_poisson_binomial_pmf(pi), direct, atol=1e-13)
    # many distinct per-item q take the tree (O(M log^2 M)); moments stay exact
    pi = rng.random(6000) * 0.2
    pmf = _poisson_binomial_pmf(pi)
    k = np.arange(pi.size + 1)
    assert (k * pmf).sum() == pytest.approx(pi.sum(), rel=1e-12)
    assert ((k - pi.sum()) ** 2 * pmf).sum() == pytest.approx((pi * (1 - pi)).sum(), rel=1e-9)


def test_interval_is_a_deprecated_spelling_of_confidence_interval():
    """``.interval(level)`` -> ``.confidence_interval(confidence_level)`` (issue 23)."""
    mse = me.mse_distribution([1.0, 2.0, 3.0], [1.5, 2.0, 2.0], 0.3)
    acc = me.accuracy_distribution(np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0]), q=0.1)
    for dist in (mse, acc):
        with pytest.warns(DeprecationWarning, match=r"\.interval\(\) is deprecated; use "
                                                    r"\w+\.confidence_interval\(\)"):
            old = dist.interval(0.9)
        assert old.identical(dist.confidence_interval(0.9))
        assert old.attrs["ci_kind"] == "equal-tailed"
        assert old.attrs["confidence_level"] == 0.9

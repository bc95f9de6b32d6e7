"""Numerics of the generalized chi-square ``Q = sum_j lam_j (Z_j + delta_j)^2`` (the MSE under
Gaussian measurement error): Imhof's inversion of the characteristic function, its small-x
form, and the normal limit (an Edgeworth expansion) used where the inversion is ill-posed.

Kept apart from :mod:`evaluq.measurement_error` (issue 9): that module builds the
distribution from the data; this one evaluates it. Nothing here imports xarray.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate, stats
from scipy.special import ndtr, ndtri

from evaluq._warn import warn
from evaluq.errors import EvaluqWarning

NORMAL_LIMIT_SKEWNESS = 1e-2
"""Below this skewness of Q the normal limit (Edgeworth, to second order) replaces the
inversion. Its error is of the order of the next Edgeworth terms (``gamma_1^3``,
``gamma_1 gamma_2``); against the exact ncx2 at the switch (skewness 0.009) the CDF is off by
at most 5e-9, the density by 1.3e-8 / sd and the 2.5/50/97.5% quantiles by 7e-9 sd
(``tests/test_imhof.py`` checks these bounds)."""
SMALLEST_UNIT = 1e-290
"""Per-item variances ``sigma^2 / M`` below this are beyond float64's normal range (their MSE
values would be subnormal): such a cell's spread cannot be represented."""


def moments(d: np.ndarray, sigma: np.ndarray, m: int) -> tuple[float, float, float, float]:
    """Mean, SD, skewness and excess kurtosis of ``(1/m) sum_j (d_j + sigma_j Z_j)^2``.

    With ``s = max sigma``, ``t = sigma / s`` and everything measured in units of
    ``a = max(s, max |d|)`` (so nothing under- or overflows even for sigma ~ 1e-160 or
    |d| / sigma ~ 1e160), the cumulants ``kappa_r = 2^(r-1) (r-1)! sum lam^r (1 + r delta^2)``
    give ``sd = (s/m) a sqrt(B)``, ``gamma_1 = 8 (s/a) A / B^1.5``,
    ``gamma_2 = 48 (s/a)^2 C / B^2`` with ``A = sum((s/a)^2 t^6 + 3 t^4 (d/a)^2)``,
    ``B = sum(2 (s/a)^2 t^4 + 4 t^2 (d/a)^2)``, ``C = sum((s/a)^2 t^8 + 4 t^6 (d/a)^2)``.
    """
    mean = float(np.sum(d * d) + np.sum(sigma * sigma)) / m
    s = float(sigma.max()) if sigma.size else 0.0
    if s == 0.0:
        return mean, 0.0, 0.0, 0.0
    a = max(s, float(np.abs(d).max()))          # A, B, C scale as a^2: divide it out
    t2 = (sigma / s) ** 2
    d2 = (d / a) ** 2
    sa2 = (s / a) ** 2
    big_a = float(np.sum(sa2 * t2**3 + 3.0 * t2 * t2 * d2))
    big_b = float(np.sum(2.0 * sa2 * t2 * t2 + 4.0 * t2 * d2))
    big_c = float(np.sum(sa2 * t2**4 + 4.0 * t2**3 * d2))
    if big_b == 0.0:
        return mean, 0.0, 0.0, 0.0
    sd = s / m * a * math.sqrt(big_b)
    return mean, sd, 8.0 * (s / a) * big_a / big_b**1.5, 48.0 * sa2 * big_c / big_b**2


def route(d: np.ndarray, sigma: np.ndarray, m: int, equal: bool) -> str:
    """How to evaluate one cell: ``"point"``, ``"normal"``, ``"ncx2"`` or ``"imhof"``.

    ``"normal"`` when the skewness is below :data:`NORMAL_LIMIT_SKEWNESS` (there the
    inversion's integrand oscillates ~|d|/sigma times, QUADPACK loses its accuracy or hangs,
    and scipy's ncx2 returns NaN for huge noncentralities); ``"point"`` when the SD is 0, or
    when the distribution is skewed but every sigma^2 / M is below :data:`SMALLEST_UNIT`
    (its MSE values are then below float64's normal range); otherwise the exact route.
    """
    _, sd, g1, _ = moments(d, sigma, m)
    if sd == 0.0 or not math.isfinite(sd):
        return "point"
    if g1 < NORMAL_LIMIT_SKEWNESS:
        return "normal"
    if float((sigma[sigma > 0] ** 2).max()) / m < SMALLEST_UNIT:
        return "point"
    return "ncx2" if equal else "imhof"


def edgeworth_cdf(x: np.ndarray, mean: float, sd: float, g1: float, g2: float) -> np.ndarray:
    """``P(Q <= x)`` by the Edgeworth expansion to second order, clipped to [0, 1]."""
    z = (x - mean) / sd
    he2, he3 = z * z - 1.0, z**3 - 3.0 * z
    he5 = z**5 - 10.0 * z**3 + 15.0 * z
    corr = g1 / 6.0 * he2 + g2 / 24.0 * he3 + g1 * g1 / 72.0 * he5
    return np.clip(ndtr(z) - stats.norm.pdf(z) * corr, 0.0, 1.0)


def edgeworth_pdf(x: np.ndarray, mean: float, sd: float, g1: float, g2: float) -> np.ndarray:
    """Density by the Edgeworth expansion to second order (never negative)."""
    z = (x - mean) / sd
    he3, he4 = z**3 - 3.0 * z, z**4 - 6.0 * z * z + 3.0
    he6 = z**6 - 15.0 * z**4 + 45.0 * z * z - 15.0
    factor = 1.0 + g1 / 6.0 * he3 + g2 / 24.0 * he4 + g1 * g1 / 72.0 * he6
    return np.maximum(stats.norm.pdf(z) / sd * factor, 0.0)


def cornish_fisher(prob: float, mean: float, sd: float, g1: float, g2: float) -> float:
    """Quantile by the Cornish-Fisher expansion (the inverse of :func:`edgeworth_cdf`)."""
    z = float(ndtri(prob))
    w = (z + (z * z - 1.0) * g1 / 6.0 + (z**3 - 3.0 * z) * g2 / 24.0
         - (2.0 * z**3 - 5.0 * z) * g1 * g1 / 36.0)
    return mean + sd * w


def imhof_cdf(x: float, lam: np.ndarray, delta2: np.ndarray) -> float:
    """``P(sum_j lam_j (Z_j + delta_j)^2 <= x)`` for ``lam_j > 0`` (Imhof 1961).

    The value of :func:`imhof_cdf_with_bound`; :class:`ImhofAccuracyWarning` when its error
    bound exceeds :data:`IMHOF_CDF_TOLERANCE`.
    """
    value, bound = imhof_cdf_with_bound(x, lam, delta2)
    if not bound <= IMHOF_CDF_TOLERANCE:
        warn(f"the Imhof inversion of the MSE distribution's CDF at x={x:.6g} has an "
             f"error bound of {bound:.2g} (QUADPACK's estimate), above "
             f"{IMHOF_CDF_TOLERANCE:g}; method='monte_carlo' gives an independent "
             "check", ImhofAccuracyWarning)
    return value


def imhof_cdf_with_bound(x: float, lam: np.ndarray, delta2: np.ndarray) -> tuple[float, float]:
    """``P(sum_j lam_j (Z_j + delta_j)^2 <= x)`` for ``lam_j > 0`` (Imhof 1961), and a bound
    on its absolute error (QUADPACK's estimates of the three integrals, over pi; 0 for the
    small-x form, whose error is relative ~1e-7).

    ``P(Q > x) = 1/2 + (1/pi) int_0^inf sin(theta(u)) / (u rho(u)) du`` with
    ``theta(u) = g(u) - x u / 2``,
    ``g(u) = (1/2) sum_j [atan(lam_j u) + delta_j^2 lam_j u / (1 + lam_j^2 u^2)]`` and
    ``rho(u) = prod_j (1 + lam_j^2 u^2)^(1/4) exp((1/2) sum_j delta_j^2 lam_j^2 u^2 /
    (1 + lam_j^2 u^2))``, on the scaled variable ``v = u max(lam)``. The integrand decays only
    like ``u^-(1 + k/2)`` for k terms while oscillating, so the integral is split: adaptive
    quadrature (QUADPACK QAGS) on ``[0, v1]`` and, beyond ``v1``, the Fourier-integral rule
    QAWF on ``sin(g)/(u rho) cos(x u/2) - cos(g)/(u rho) sin(x u/2)``, which handles slow
    algebraic decay (CDF errors ~1e-15 against ``ncx2``, even for one or two items).
    """
    if x <= 0:
        return 0.0, 0.0
    scale = float(lam.max())
    if 2 <= lam.size <= _SMALL_X_MAX_K and x < _SMALL_X * scale:
        # tiny x: QAWF's cycles become too long (wrong by O(0.1) at x ~ 1e-8); integrate
        # the small-x form of the density (see small_x_density)
        h0, slope = small_x_density(lam, delta2)
        a = 0.5 * lam.size
        return float(x**a * (h0 / a + slope * x / (a + 1.0))), 0.0
    lam_s = lam / scale
    x_s = x / scale
    omega = 0.5 * x_s

    def g_and_rho(v: float) -> tuple[float, float]:
        lv = lam_s * v
        den = 1.0 + lv * lv
        g = 0.5 * float(np.sum(np.arctan(lv) + delta2 * lv / den))
        log_rho = 0.25 * float(np.sum(np.log1p(lv * lv))) + 0.5 * float(
            np.sum(delta2 * lv * lv / den))
        return g, math.exp(-log_rho) / v

    def integrand(v: float) -> float:
        if v == 0.0:
            return 0.5 * float(np.sum(lam_s * (1.0 + delta2))) - omega
        g, w = g_and_rho(v)
        return math.sin(g - omega * v) * w

    def f_cos(v: float) -> float:
        g, w = g_and_rho(v)
        return math.sin(g) * w

    def f_sin(v: float) -> float:
        g, w = g_and_rho(v)
        return math.cos(g) * w

    v1 = 1.0  # QAWF from here on: cycles of length pi / omega, Wynn-accelerated
    # QUADPACK's IntegrationWarnings are caught and replaced by its own error estimate: with
    # one sigma <= 1e-3 of the others the amplitude of the Fourier tail changes its decay rate
    # only at v ~ max(lam) / min(lam), QAWF's extrapolation over cycles reports
    # non-convergence, and yet the value is right (see IMHOF_CDF_TOLERANCE).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        head, err_h = integrate.quad(integrand, 0.0, v1, limit=500, epsabs=1e-12,
                                     epsrel=1e-11)
        tail_c, err_c = integrate.quad(f_cos, v1, np.inf, weight="cos", wvar=omega,
                                       limlst=200, epsabs=1e-12)
        tail_s, err_s = integrate.quad(f_sin, v1, np.inf, weight="sin", wvar=omega,
                                       limlst=200, epsabs=1e-12)
    bound = (err_h + err_c + err_s) / math.pi
    survival = 0.5 + (head + tail_c - tail_s) / math.pi
    return float(min(1.0, max(0.0, 1.0 - survival))), float(bound)


IMHOF_CDF_TOLERANCE = 1e-3
"""Largest error bound of :func:`imhof_cdf` (QUADPACK's own estimate, summed over the three
integrals, divided by pi) accepted without a warning; above it :class:`ImhofAccuracyWarning`
is emitted. Measured with one sigma 1e-3 to 1e-6 of the others (where QAWF reports
non-convergence, and scipy used to emit IntegrationWarnings): the bounds reach 5e-4 near the
lower end of the support, where the CDF is off by up to 7e-5 (within its bound; a 2.5%
quantile off by 1.2e-5 in probability), and are ~1e-12 to 1e-5 elsewhere, where the CDF is
within 2e-8; against an exact reference (the small item integrated out by 200-node
Gauss-Hermite quadrature over the other items' exact ncx2 CDF; ``tests/test_imhof.py``
checks, at ratios 1e-3 and 1e-4, that every error is within its bound and every bound within
this tolerance)."""


class ImhofAccuracyWarning(EvaluqWarning, RuntimeWarning):
    """The Imhof inversion's error bound exceeds :data:`IMHOF_CDF_TOLERANCE` (an
    :class:`~evaluq.errors.EvaluqWarning`, and a ``RuntimeWarning`` as before)."""


_SMALL_X = 1e-3  # below this multiple of max(lam), inversions use the small-x form
_SMALL_X_MAX_K = 40  # ... for up to this many items (beyond, F and f are ~0 there)
_SMALL_X_SLOPE_MAX_K = 4  # ... with a first-order correction for up to this many items


def small_x_density(lam: np.ndarray, delta2: np.ndarray) -> tuple[float, float]:
    """``h0`` and ``slope`` of ``f(x) ~ x^(k/2 - 1) (h0 + slope x)`` for small x.

    ``f(x) / x^(k/2-1)`` is smooth at 0 with the exact limit
    ``h0 = exp(-sum delta^2 / 2) / (2^(k/2) Gamma(k/2) sqrt(prod lam))`` (the normal density
    at ``Z = -delta`` times the volume of the ellipsoid ``sum lam_j w_j^2 <= x``); ``slope``
    joins it linearly to the density computed by inversion at ``x1 = 1e-3 max(lam)``, where
    QAWF is still accurate. Error ~ ``h'' x1^2 / 8``: relative ~1e-7.
    """
    k = lam.size
    a = 0.5 * k
    h0 = math.exp(-0.5 * float(delta2.sum()) - a * math.log(2.0) - math.lgamma(a)
                  - 0.5 * float(np.sum(np.log(lam))))
    if k > _SMALL_X_SLOPE_MAX_K:
        # f(x1) ~ x1^(k/2-1) is below the inversion's absolute accuracy: leading order only
        # (absolute error ~ h0 x^(k/2) x / max(lam), below 1e-13 for x < x1)
        return h0, 0.0
    x1 = _SMALL_X * float(lam.max())
    h1 = imhof_pdf_inversion(x1, lam, delta2) / x1 ** (a - 1.0)
    return h0, (h1 - h0) / x1


def imhof_pdf(x: float, lam: np.ndarray, delta2: np.ndarray) -> float:
    """Density of ``sum_j lam_j (Z_j + delta_j)^2`` at ``x`` for ``lam_j > 0``.

    Inverting the characteristic function ``phi(u / 2) = exp(i g(u)) / rho(u)`` (notation of
    :func:`imhof_cdf`): ``f(x) = (1 / 2 pi) int_0^inf cos(g(u) - x u / 2) / rho(u) du``; on
    the scaled variable ``v = u max(lam)`` the density of ``Q / max(lam)`` is computed and
    divided by ``max(lam)``. The integrand decays like ``u^(-k/2)`` (only conditionally
    integrable for two items), hence QAGS on ``[0, 1]`` and the Fourier rule QAWF on
    ``cos(g)/rho cos(x u/2) + sin(g)/rho sin(x u/2)`` beyond. One item is a scaled
    ``ncx2(1, delta^2)``, evaluated exactly (its integrand, ``u^(-1/2)``, defeats QAWF).
    """
    k = lam.size
    if x < 0:
        return 0.0
    if x == 0:
        if k == 1:
            return math.inf
        if k == 2:
            return math.exp(-0.5 * float(delta2.sum())) / (2.0 * math.sqrt(float(np.prod(lam))))
        return 0.0
    if k == 1:  # lam (Z + delta)^2: a scaled ncx2(1, delta^2), whose CF decays only as u^-1/2
        return float(stats.ncx2.pdf(x / lam[0], df=1, nc=delta2[0]) / lam[0])
    if k <= _SMALL_X_MAX_K and x < _SMALL_X * float(lam.max()):
        # the Fourier tail's cycles are too long for QAWF here: the small-x form
        h0, slope = small_x_density(lam, delta2)
        return float(x ** (0.5 * k - 1.0) * (h0 + slope * x))
    return imhof_pdf_inversion(x, lam, delta2)


def imhof_pdf_inversion(x: float, lam: np.ndarray, delta2: np.ndarray) -> float:
    """The inversion integral of :func:`imhof_pdf` for ``x > 0`` and two or more items."""
    scale = float(lam.max())
    lam_s = lam / scale
    omega = 0.5 * x / scale

    def g_and_w(v: float) -> tuple[float, float]:
        lv = lam_s * v
        den = 1.0 + lv * lv
        g = 0.5 * float(np.sum(np.arctan(lv) + delta2 * lv / den))
        log_rho = 0.25 * float(np.sum(np.log1p(lv * lv))) + 0.5 * float(
            np.sum(delta2 * lv * lv / den))
        return g, math.exp(-log_rho)

    def integrand(v: float) -> float:
        g, w = g_and_w(v)
        return math.cos(g - omega * v) * w

    def f_cos(v: float) -> float:
        g, w = g_and_w(v)
        return math.cos(g) * w

    def f_sin(v: float) -> float:
        g, w = g_and_w(v)
        return math.sin(g) * w

    v1 = 1.0
    head, _ = integrate.quad(integrand, 0.0, v1, limit=500, epsabs=1e-13, epsrel=1e-11)
    # For two items (integrand ~ 1/u) QAWF reports "bad integrand behaviour" in some cycles
    # although the result agrees with the exact ncx2 density to ~1e-15 (tests check this
    # over a grid of x and noncentralities), so that warning is not passed on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        tail_c, _ = integrate.quad(f_cos, v1, np.inf, weight="cos", wvar=omega, limlst=200,
                                   epsabs=1e-13)
        tail_s, _ = integrate.quad(f_sin, v1, np.inf, weight="sin", wvar=omega, limlst=200,
                                   epsabs=1e-13)
    return float(max(0.0, (head + tail_c + tail_s) / (2.0 * math.pi) / scale))

"""A learned item distribution for the binomial 1PL (issue 36), the normal its special case.

On the standardised scale z the item difficulty has the log-density (Ramsay-curve IRT,
Woods 2006, with a Gaussian-bump log-spline)

    log g0(z) = log phi(z) + f(z) - log C,   f(z) = sum_j c_j B_j(z),
    B_j(z) = exp(-(z - k_j)^2 / (2 w^2)) / (sqrt(2 pi) w / dk),

``N_KNOTS`` knots k_j equally spaced over [-4, 4] (spacing dk, bump width w = dk; the bumps
sum to ~1 on [-4, 4], so c_j is near f(k_j)), f -> 0 beyond (normal tails). The coefficients
are non-centred, c = tau_shape A zeta with zeta ~ N(0, I) and tau_shape ~
HalfNormal(``shape_sigma``): A is the Demmler-Reinsch basis of a second-difference
(RW2) penalty plus a small ridge, ``RIDGE`` (the ridge bounds the ratio of the smoothest
mode's prior SD to the roughest one's, so two sharp modes are reachable), on the
complement of span{1, k, k^2} (a constant, a linear and a quadratic f only move the
normaliser, the mean and the SD of g0, which the standardisation below removes exactly:
not identified, so not sampled), scaled so that the prior RMS of c over the knots is
tau_shape.

Standardisation: the normaliser C, mean m and SD v of g0 are computed on the fixed grid
``Z_STD`` (trapezoid rule; g0 is analytic, so the rule is exact to rounding), and the
density of b is

    g(b) = g0(m + v b / s) v / s,

so b has mean 0 and SD s = sigma_item for every shape, and tau_shape = 0 (c = 0) gives
g = N(0, s^2) exactly (m = 0, v = 1, C = 1 to rounding). ``log_density`` replaces log N(b;
0, s^2) in ``_gridquad``'s base (the fused kernel is unchanged).

Why bumps, not a mixture of normals: a mixture's components swap (label switching) and
collapse onto each other when the population is normal (a funnel for NUTS), and the normal
is a boundary point of it; the log-spline has the normal at its centre (tau_shape = 0),
no labels, a prior that shrinks towards it, and is analytic, so the shared grid's trapezoid
rule keeps its geometric convergence (piecewise-linear or cubic interpolation of f would
put kinks in the integrand).
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

N_KNOTS: Final = 17
KNOTS: Final = np.linspace(-4.0, 4.0, N_KNOTS)
WIDTH: Final = float(KNOTS[1] - KNOTS[0])
"""Bump width w (= the knot spacing)."""
_NORM: Final = math.sqrt(2.0 * math.pi)
"""sqrt(2 pi) w / dk with w = dk: the bumps' sum on [-4, 4]."""
RIDGE: Final = 0.05
"""Ridge added to the second-difference penalty's eigenvalues (see the module docstring)."""
Z_FINE: Final = np.linspace(-10.0, 10.0, 801)
"""The fixed grid of the standardisation and of the new-item moments (spacing 0.025)."""
Z_STEP: Final = float(Z_FINE[1] - Z_FINE[0])
Z_STD: Final = np.linspace(-10.0, 10.0, 201)
"""The grid of the standardisation (C, m, v) inside the sampled model (spacing 0.1): g0's
narrowest feature has an SD >= 0.17 (``C_MAX``), so the trapezoid rule's relative error is
below 2 exp(-2 pi^2 0.17^2 / 0.1^2) ~ 1e-24; the span is ``Z_FINE``'s (beyond |z| = 8 the
mass is 1e-14, which a normal's log-density at z = 40 would show as 1e-11); four times
fewer points than ``Z_FINE``: with one task this sum was a large part of a gradient's
cost."""
Z_STD_STEP: Final = float(Z_STD[1] - Z_STD[0])
Z_EDGE: Final = 6.5
"""The shared grid spans at least z in [-Z_EDGE, Z_EDGE] on the standardised scale (g0's
mass beyond is below 1e-9 for any shape the prior reaches: f is ~0 beyond |z| = 5.5)."""
ITEM_DISTRIBUTIONS: Final = ("normal", "learned")
SHAPE_PRIOR_KEYS: Final = ("shape_sigma",)
SHAPE_PRIOR_TEXT: Final = {
    "shape_sigma": "scale of tau_shape ~ HalfNormal, the prior RMS of the learned item "
                   "distribution's log-density deviation from the normal at the knots "
                   "(item_distribution='learned'; default 1)"}
SHAPE_DEFAULTS: Final = {"shape_sigma": 1.0}
C_MAX: Final = 8.0
"""The coefficients are bounded softly, c = C_MAX tanh(c' / C_MAX): the log-density's
curvature is then at most ~1 + C_MAX / w^2, so g0's narrowest feature has an SD of at least
~w / sqrt(1 + C_MAX) = 0.17 on z (issue 36's bimodal population needs |c| < 5). Unbounded,
the sampler found spikes narrower than the shared grid's spacing, whose trapezoid sum
then rewards them (aliasing: tau_shape went to 50)."""
H_Z: Final = 0.15
"""The shared grid's spacing is at most H_Z s / v under a learned g (0.9 times the
narrowest feature's SD on z, mapped to b: the trapezoid rule's relative error ~2 exp(-2 pi^2
/ 0.81))."""


def _basis() -> np.ndarray:
    """A (knot, N_KNOTS - 3): c = A zeta, zeta ~ N(0, I), has the RW2 + ridge prior on the
    complement of span{1, k, k^2}, its RMS over knots 1."""
    k = KNOTS / 4.0
    poly = np.stack([np.ones_like(k), k, k**2], axis=1)
    q_full, _ = np.linalg.qr(poly, mode="complete")
    q = q_full[:, 3:]                                               # complement (K, K-3)
    d2 = np.diff(np.eye(N_KNOTS), n=2, axis=0)
    lam, vec = np.linalg.eigh(q.T @ d2.T @ d2 @ q)
    a = q @ vec / np.sqrt(lam + RIDGE)
    return a / np.sqrt(np.trace(a @ a.T) / N_KNOTS)


BASIS: Final = _basis()
N_SHAPE: Final = BASIS.shape[1]


def bumps(lib: Any, z: Any) -> Any:
    """B_j(z) (..., knot)."""
    return lib.exp(-0.5 * ((z[..., None] - KNOTS) / WIDTH) ** 2) / _NORM


BUMPS_FINE: Final = bumps(np, Z_FINE)                               # (801, knot)
BUMPS_STD: Final = bumps(np, Z_STD)                                 # (201, knot)


def standardise(lib: Any, c: Any) -> tuple[Any, Any, Any]:
    """(m, v, log C) of g0 for coefficients ``c`` (..., knot): trapezoid on ``Z_STD``."""
    logu = -0.5 * Z_STD**2 + c @ BUMPS_STD.T - 0.5 * math.log(2 * math.pi)
    u = lib.exp(logu)
    mass = u.sum(axis=-1)
    m = (u * Z_STD).sum(axis=-1) / mass
    var = (u * Z_STD**2).sum(axis=-1) / mass - m**2
    return m, lib.sqrt(var), lib.log(mass * Z_STD_STEP)


def log_density(lib: Any, b: Any, sigma: Any, c: Any, m: Any, v: Any, log_c: Any) -> Any:
    """log g(b) for one parameter set (PyTensor or numpy scalars; ``c`` (knot,))."""
    z = m + v * b / sigma
    return (-0.5 * z**2 - 0.5 * math.log(2 * math.pi) + bumps(lib, z) @ c - log_c
            + lib.log(v) - lib.log(sigma))


def log_density_draws(b: np.ndarray, sigma: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log g(b) per draw (numpy): ``b`` (d, ...), ``sigma`` (d,), ``c`` (d, knot)."""
    m, v, log_c = standardise(np, c)
    ex = (slice(None),) + (None,) * (b.ndim - 1)
    z = m[ex] + v[ex] * b / sigma[ex]
    f = np.einsum("d...j,dj->d...", bumps(np, z), c)
    return (-0.5 * z**2 - 0.5 * math.log(2 * math.pi) + f - log_c[ex] + np.log(v[ex])
            - np.log(sigma[ex]))


def normal_log_density(b: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """log N(b; 0, s^2) per draw (``b`` (d, ...), ``sigma`` (d,))."""
    s = sigma.reshape((-1,) + (1,) * (b.ndim - 1))
    return -0.5 * (b / s) ** 2 - np.log(s) - 0.5 * math.log(2 * math.pi)


def fine_weights(c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """g0's mass on ``Z_FINE`` per draw (d, 801) summing to 1, with m and v (d,)."""
    logu = -0.5 * Z_FINE**2 + c @ BUMPS_FINE.T
    u = np.exp(logu - logu.max(axis=-1, keepdims=True))
    w = u / u.sum(axis=-1, keepdims=True)
    m = w @ Z_FINE
    v = np.sqrt(w @ Z_FINE**2 - m**2)
    return w, m, v


def learned_moments(eta: np.ndarray, sigma: np.ndarray, c: np.ndarray, chunk: int = 64
                    ) -> tuple[np.ndarray, np.ndarray]:
    """E[p] and E[p^2] (draw, model, task) of p = sigmoid(eta - b), b ~ g (the learned
    distribution): sum over ``Z_FINE`` of sigmoid(eta - s (z - m) / v) g0(z) dz."""
    from scipy.special import expit

    w, m, v = fine_weights(c)
    out1 = np.empty(eta.shape)
    out2 = np.empty(eta.shape)
    for start in range(0, len(eta), chunk):                       # chunks of draws
        part = slice(start, start + chunk)
        b = sigma[part, None] * (Z_FINE - m[part, None]) / v[part, None]        # (d, Z)
        p = expit(eta[part, ..., None] - b[:, None, None, :])
        out1[part] = np.einsum("dmkz,dz->dmk", p, w[part])
        out2[part] = np.einsum("dmkz,dz->dmk", p**2, w[part])
    return out1, out2


def sample_items(gen: np.random.Generator, sigma: float, c: np.ndarray, n: int) -> np.ndarray:
    """``n`` item effects from g (inverse CDF on ``Z_FINE``, uniform within a cell)."""
    w, m, v = fine_weights(c[None, :])
    cdf = np.cumsum(w[0])
    cell = np.minimum(np.searchsorted(cdf, gen.random(n)), len(Z_FINE) - 1)
    z = Z_FINE[cell] + (gen.random(n) - 0.5) * Z_STEP
    return sigma * (z - m[0]) / v[0]


def prior_shape(gen: np.random.Generator, shape_sigma: float) -> np.ndarray:
    """One draw of the coefficients c from their prior."""
    raw = abs(gen.normal(0.0, shape_sigma)) * (BASIS @ gen.normal(0.0, 1.0, N_SHAPE))
    return C_MAX * np.tanh(raw / C_MAX)


def shape_coefficients(x: dict[str, Any]) -> Any:
    """The PyMC variables of the shape: ``tau_shape``, ``item_shape_z`` and the
    deterministic coefficients ``item_shape`` (knot,)."""
    import pymc as pm
    import pytensor.tensor as pt

    tau = pm.HalfNormal("tau_shape", x["prior_shape_sigma"])
    zeta = pm.Normal("item_shape_z", 0.0, 1.0, shape=N_SHAPE)
    raw = tau * pt.dot(pt.as_tensor_variable(BASIS), zeta)
    return pm.Deterministic("item_shape", C_MAX * pt.tanh(raw / C_MAX))


def split_priors(priors: dict[str, float] | None, learned: bool
                 ) -> tuple[dict[str, float] | None, dict[str, float]]:
    """The user's priors without the shape's keys, and the shape's (defaults updated, only
    when ``learned``; a shape key without it raises, naming ``priors``)."""
    from evaluq._fits import merge_priors

    if priors is not None and not isinstance(priors, dict):
        raise TypeError(f"`priors` must be a dict or None; got {type(priors).__name__}")
    given = dict(priors or {})
    shape = {k: given.pop(k) for k in SHAPE_PRIOR_KEYS if k in given}
    if shape and not learned:
        raise ValueError(f"`priors`: {sorted(shape)} apply to item_distribution='learned' "
                         "only")
    return (given if priors is not None else None,
            merge_priors(dict(SHAPE_DEFAULTS), shape, SHAPE_PRIOR_KEYS) if learned else {})


KNOT: Final = "knot"
DIFFICULTY: Final = "difficulty"


def density_draws(sigma: np.ndarray, shape: np.ndarray | None, b: np.ndarray) -> np.ndarray:
    """g(b) (draw, point) at the points ``b``: the learned density, or N(0, s^2) when
    ``shape`` is None."""
    bb = np.broadcast_to(b, (len(sigma), len(b)))
    if shape is None:
        return np.exp(normal_log_density(bb, sigma))
    return np.exp(log_density_draws(bb, sigma, shape))

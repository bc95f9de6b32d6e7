"""A learned item distribution for the binomial 1PL (issue 36), the normal its special case.

On the standardised scale z the item difficulty has the log-density (Ramsay-curve IRT,
Woods 2006, with a Gaussian-bump log-spline)

    log g0(z) = log phi(z) + f(z) - log C,   f(z) = sum_j c_j B_j(z),
    B_j(z) = exp(-(z - k_j)^2 / (2 w^2)) / (sqrt(2 pi) w / dk),

``N_KNOTS`` knots k_j equally spaced over [-4, 4] (spacing dk, bump width w = dk; the bumps
sum to ~1 on [-4, 4], so c_j is near f(k_j)), f -> 0 beyond (normal tails). The coefficients
are c = s_shape A zeta with zeta ~ N(0, I) and s_shape = ``shape_sigma`` a fixed scale
(default 1): A is the Demmler-Reinsch basis of a second-difference
(RW2) penalty plus a small ridge, ``RIDGE`` (the ridge bounds the ratio of the smoothest
mode's prior SD to the roughest one's, so two sharp modes are reachable), on the
complement of span{1, k, k^2} (a constant, a linear and a quadratic f only move the
normaliser, the mean and the SD of g0, which the standardisation below removes exactly:
not identified, so not sampled), scaled so that the prior RMS of c over the knots is
s_shape.

Why a fixed scale: a learned one, tau_shape ~ HalfNormal(``shape_sigma``) with c = tau_shape A
zeta, made a curved ridge where the items pin c down (every tau_shape pairs with zeta = c /
tau_shape), at whose ends NUTS diverged (31 over 6 default fits on 10 models x 1,000 bimodal
items x 3 epochs at target_accept 0.9, 5 at 0.95; more tuning did not help) and whose
warm-up took 2.5x the normal fit's leapfrog steps. With the scale fixed the posterior of zeta
is nearly Gaussian once the items inform it: 15 and 1 divergences over the same fits, a warm
fit 1.84x the normal one's (was 2.61x; ``benchmarks/bench_item_density.py``), and the same
calibration over 100 data sets per population (new items 0.918 bimodal, 0.908 normal;
``benchmarks/calibration_item_density.py``). The cost is the hierarchical shrinkage towards
the normal: a normal population's c is not pulled to 0 beyond what the prior and the items
say.

Standardisation: the normaliser C, mean m and SD v of g0 are computed on the fixed grid
``Z_STD`` (trapezoid rule; g0 is analytic, so the rule is exact to rounding), and the
density of b is

    g(b) = g0(m + v b / s) v / s,

so b has mean 0 and SD s = sigma_item for every shape, and c = 0 gives
g = N(0, s^2) exactly (m = 0, v = 1, C = 1 to rounding). log g replaces log N(b; 0, s^2) in
``_gridquad``'s base (the fused kernel is unchanged), on nodes that lie on a lattice of z
(:func:`lattice_grid`: f there is a row of a constant table) at a spacing from the shape's
curvature (:func:`shape_spacing`).

Why bumps, not a mixture of normals: a mixture's components swap (label switching) and
collapse onto each other when the population is normal (a funnel for NUTS), and the normal
is a boundary point of it; the log-spline has the normal at its centre (c = 0),
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
    "shape_sigma": "the fixed prior RMS of the learned item distribution's log-density "
                   "deviation from the normal at the knots (item_distribution='learned'; "
                   "default 1)"}
SHAPE_DEFAULTS: Final = {"shape_sigma": 1.0}
C_MAX: Final = 8.0
"""The coefficients are bounded softly, c = C_MAX tanh(c' / C_MAX): the log-density's
curvature is then at most ~1 + C_MAX / w^2, so g0's narrowest feature has an SD of at least
~w / sqrt(1 + C_MAX) = 0.17 on z (issue 36's bimodal population needs |c| < 5). Unbounded,
the sampler found spikes narrower than the shared grid's spacing, whose trapezoid sum
then rewards them (aliasing: the shape's learned scale went to 50)."""
Z_LATTICE_STEP: Final = 0.025
"""The sampled model's nodes lie on the lattice z = i ``Z_LATTICE_STEP`` of the standardised
scale (the multiples of k, k from the spacing rule below), so the bumps at the nodes are rows
of a constant table (``BUMPS_LATTICE``, and their derivative ``DBUMPS_LATTICE``), not
nodes x knots exponentials per gradient."""
Z_LATTICE: Final = np.arange(-320, 321) * Z_LATTICE_STEP
"""The lattice's core, z in [-8, 8]: beyond, every bump is below 1e-13 (f = 0 to rounding),
and a node there takes the edge row."""
SHAPE_SPACING: Final = 0.65
"""The shape's share of the spacing rule: on z, 1 / d^2 = kappa / ``SHAPE_SPACING``^2 +
1 / d_data^2, with kappa the largest curvature of -log g0 over ``Z_STD`` (1 for the
normal) and d_data the likelihood's spacing (``_gridquad.data_spacing``) on z, at most
``SPACING_CAP``. Over 7,500 (shape, likelihood) pairs (shapes from the prior at scales
0.5-50, likelihoods of information 0-40 at random locations, random grid offsets) the
trapezoid rule's relative error was at most 7e-9 (``tests/test_item_density.py`` runs
1,500 of them and bounds it at 2e-8)."""
SPACING_CAP: Final = 0.25
"""The largest spacing on z (half the bumps' width): bounds the error of a shape whose
curvature is small but whose bumps still carry frequencies of the order of 1 / w."""


def _bump_derivatives(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """B_j'(z) and B_j''(z) (..., knot)."""
    b = bumps(np, z)
    u = (z[..., None] - KNOTS) / WIDTH
    return -b * u / WIDTH, b * (u**2 - 1.0) / WIDTH**2


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
CURVATURE_STD: Final = _bump_derivatives(Z_STD)[1]                  # B_j'' (201, knot)
BUMPS_LATTICE: Final = bumps(np, Z_LATTICE)                         # (641, knot)
DBUMPS_LATTICE: Final = _bump_derivatives(Z_LATTICE)[0]             # B_j' (641, knot)


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


def shape_spacing(lib: Any, c: Any, d_data: Any) -> Any:
    """The spacing on z of a learned g's nodes (``SHAPE_SPACING``): 1 / d^2 = kappa /
    ``SHAPE_SPACING``^2 + 1 / ``d_data``^2, at most ``SPACING_CAP``; kappa = max over
    ``Z_STD`` of 1 - f''(z), at least 1."""
    kappa = lib.maximum((1.0 - c @ CURVATURE_STD.T).max(axis=-1), 1.0)
    return lib.minimum(1.0 / lib.sqrt(kappa / SHAPE_SPACING**2 + 1.0 / d_data**2),
                       SPACING_CAP)


def lattice_grid(span: tuple[Any, Any], sigma: Any, c: Any, standard: tuple[Any, Any, Any],
                 h_data: Any, max_nodes: int) -> tuple[Any, Any, Any]:
    """Nodes b_g, spacing h and base_g = log g(b_g) + log h of a learned g (PyTensor).

    The nodes are the multiples of k on the lattice z = i ``Z_LATTICE_STEP`` that cover
    ``span`` = (lo, hi) on b (b = s (z - m) / v; k from :func:`shape_spacing`, at least
    what keeps them to ``max_nodes``). f at the nodes is a row gather of ``BUMPS_LATTICE``
    times c. The nodes are marked ``disconnected_grad`` as the other grids' are, but PyMC
    and nutpie canonicalise the graph before differentiating, which removes the mark: the
    gradient is then the exact derivative of the rule's value, nodes moving with (s, m, v)
    on b and fixed on z, where f needs no derivative. Differentiated with the mark kept (b
    held), the gradient in s, m and v needs f'(z): f(z) + (z - stop(z)) f'(z), f' a gather
    of ``DBUMPS_LATTICE``, has f's value and the right gradient both ways (the second term
    is 0 and vanishes in the canonical graph).
    """
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    m, v, log_c = standard
    ms, vs, ss = (disconnected_grad(x) for x in (m, v, sigma))
    z_lo = ms + vs * span[0] / ss
    z_hi = ms + vs * span[1] / ss
    step = shape_spacing(pt, disconnected_grad(c), h_data * vs / ss)
    k = pt.maximum(pt.floor(step / Z_LATTICE_STEP),
                   pt.ceil((z_hi - z_lo) / ((max_nodes - 1) * Z_LATTICE_STEP)))
    # a non-finite span or spacing (a sampler trajectory through NaN or inf parameters,
    # whose log-density is then NaN and rejected) gives one node, never a garbage integer
    ok = pt.isfinite(z_lo) & pt.isfinite(z_hi) & pt.isfinite(k)
    k = pt.switch(ok, pt.clip(k, 1.0, 1e6), 1.0)
    # the nodes are the multiples of k on the lattice (a node set that moves only when k
    # does: anchored at z_lo it would shift by one lattice step, and the rule's value by
    # its error, whenever z_lo crossed a lattice point)
    first = pt.switch(ok, pt.clip(pt.floor(z_lo / (k * Z_LATTICE_STEP)), -1e9, 1e9), 0.0)
    count = pt.switch(ok, pt.ceil(z_hi / (k * Z_LATTICE_STEP)) - first, 0.0)
    n = pt.clip(count + 1.0, 1.0, float(max_nodes)).astype("int64")
    index = k.astype("int64") * (first.astype("int64") + pt.arange(n))
    z_nodes = index.astype("float64") * Z_LATTICE_STEP
    b = disconnected_grad(ss * (z_nodes - ms) / vs)
    h = disconnected_grad(ss * k * Z_LATTICE_STEP / vs)
    rows = pt.clip(index + (len(Z_LATTICE) - 1) // 2, 0, len(Z_LATTICE) - 1)
    z = m + v * b / sigma
    f = (pt.as_tensor_variable(BUMPS_LATTICE)[rows] @ c
         + (z - disconnected_grad(z)) * (pt.as_tensor_variable(DBUMPS_LATTICE)[rows] @ c))
    base = (-0.5 * z**2 - 0.5 * math.log(2 * math.pi) + f - log_c + pt.log(v)
            - pt.log(sigma) + pt.log(h))
    return b, h, base


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


def fine_weights(c: np.ndarray, grid: np.ndarray = Z_FINE
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """g0's mass on ``grid`` (``Z_FINE``, or ``Z_STD``) per draw (d, points) summing to 1,
    with m and v (d,)."""
    table = BUMPS_FINE if grid is Z_FINE else BUMPS_STD if grid is Z_STD else bumps(np, grid)
    logu = -0.5 * grid**2 + c @ table.T
    u = np.exp(logu - logu.max(axis=-1, keepdims=True))
    w = u / u.sum(axis=-1, keepdims=True)
    m = w @ grid
    v = np.sqrt(w @ grid**2 - m**2)
    return w, m, v


def learned_moments(eta: np.ndarray, sigma: np.ndarray, c: np.ndarray, chunk: int = 64
                    ) -> tuple[np.ndarray, np.ndarray]:
    """E[p] and E[p^2] (draw, model, task) of p = sigmoid(eta - b), b ~ g (the learned
    distribution): sum over ``Z_STD`` of sigmoid(eta - s (z - m) / v) g0(z) dz (the
    trapezoid rule at the standardisation's spacing: g0's narrowest feature has an SD >=
    0.17 and the sigmoid's scale on z is v / s, so its error is far below rounding; equal
    to ``quad`` to 1e-10 in the tests)."""
    from scipy.special import expit

    w, m, v = fine_weights(c, Z_STD)
    out1 = np.empty(eta.shape)
    out2 = np.empty(eta.shape)
    for start in range(0, len(eta), chunk):                       # chunks of draws
        part = slice(start, start + chunk)
        b = sigma[part, None] * (Z_STD - m[part, None]) / v[part, None]         # (d, Z)
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
    raw = shape_sigma * (BASIS @ gen.normal(0.0, 1.0, N_SHAPE))
    return C_MAX * np.tanh(raw / C_MAX)


def shape_coefficients(x: dict[str, Any]) -> Any:
    """The PyMC variables of the shape: ``item_shape_z`` and the deterministic coefficients
    ``item_shape`` (knot,), c = C_MAX tanh(s_shape A zeta / C_MAX)."""
    import pymc as pm
    import pytensor.tensor as pt

    zeta = pm.Normal("item_shape_z", 0.0, 1.0, shape=N_SHAPE)
    raw = x["prior_shape_sigma"] * pt.dot(pt.as_tensor_variable(BASIS), zeta)
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

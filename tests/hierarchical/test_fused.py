"""The fused log-density-and-gradient kernel of the marginal model (``_fused``) against
PyTensor's own gradient of the reference graph (``_model.lowrank_marginal_loglik``), the
dense multivariate normal and finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.compile.mode import Mode
from scipy import stats

from evaluq.hierarchical._fused import fused_marginal_loglik, fused_op, loglik_and_grad
from evaluq.hierarchical._model import lowrank_marginal_loglik

PARAMS = ("mu", "tsq", "seed_var", "t2")


def _problem(rng: np.random.Generator, n_m: int, n_l: int, k: int,
             missing: float = 0.2) -> dict[str, np.ndarray]:
    w = (rng.random((n_m, n_l)) > missing).astype(float)
    w[:, 0] = 1.0
    return {"ybar": rng.normal(size=(n_m, n_l)) * w, "weight": w,
            "inv_s": np.where(w > 0, 1.0 / rng.integers(1, 6, (n_m, n_l)), 0.0),
            "v_fixed": np.where(w > 0, rng.uniform(0.05, 1.0, (n_m, n_l)), 1.0),
            "load": rng.normal(size=(n_m, k, n_l)) * 0.6 * w[:, None, :],
            "mu": rng.normal(size=n_m), "tsq": rng.uniform(0.05, 1.0, n_m),
            "seed_var": rng.uniform(0.05, 1.0, n_m), "t2": np.asarray(0.7)}


def _functions(prob: dict[str, np.ndarray], mode: Any = "NUMBA") -> tuple[Any, Any]:
    """(fused, reference) functions of the parameters returning value and gradients."""
    k = prob["load"].shape[1]
    mu, tsq, seed_var, t2 = pt.dvector("mu"), pt.dvector("tsq"), pt.dvector("sv"), pt.dscalar()
    d = tsq[:, None] + seed_var[:, None] * prob["inv_s"] + prob["v_fixed"]
    ref = lowrank_marginal_loglik(pt.as_tensor(prob["ybar"]), pt.as_tensor(prob["weight"]), mu,
                                  d, t2, pt.as_tensor(prob["load"].transpose(2, 0, 1)), k)
    new = fused_marginal_loglik(prob["ybar"], prob["weight"], prob["inv_s"], prob["v_fixed"],
                                mu, tsq, seed_var, t2, prob["load"] if k else None)
    wrt = [mu, tsq, seed_var, t2]
    return tuple(pytensor.function(wrt, [out, *pytensor.grad(out, wrt)], mode=mode)
                 for out in (new, ref))


@pytest.mark.parametrize(("n_m", "n_l", "k"), [(1, 4, 0), (4, 6, 0), (5, 7, 1), (6, 9, 3),
                                               (7, 40, 2)])
def test_value_and_gradient_equal_pytensor_on_the_reference_graph(
        n_m: int, n_l: int, k: int, rng: np.random.Generator) -> None:
    prob = _problem(rng, n_m, n_l, k)
    fused, ref = _functions(prob)
    point = [prob[name] for name in PARAMS]
    for got, want in zip(fused(*point), ref(*point), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_value_is_the_dense_multivariate_normal(rng: np.random.Generator) -> None:
    """Language by language, the observed rows of MvN(mu, D + t2 ww' + Lambda Lambda')."""
    prob = _problem(rng, 5, 6, 2)
    d = prob["tsq"][:, None] + prob["seed_var"][:, None] * prob["inv_s"] + prob["v_fixed"]
    want = 0.0
    for lang in range(6):
        obs = prob["weight"][:, lang] > 0
        load = prob["load"][obs, :, lang]
        cov = np.diag(d[obs, lang]) + prob["t2"] + load @ load.T
        want += stats.multivariate_normal(prob["mu"][obs], cov).logpdf(prob["ybar"][obs, lang])
    got = loglik_and_grad(*(prob[n] for n in ("ybar", "weight", "inv_s", "v_fixed", "load",
                                               "mu", "tsq", "seed_var")), float(prob["t2"]))
    assert got[0] == pytest.approx(want, rel=1e-12)


def test_gradient_equals_finite_differences_including_tau_lang_zero(
        rng: np.random.Generator) -> None:
    """Central differences, and at t2 = 0 a one-sided one (where the reference graph's
    sqrt(t2) has no derivative and PyTensor gives NaN)."""
    prob = _problem(rng, 4, 8, 1)
    data = [prob[n] for n in ("ybar", "weight", "inv_s", "v_fixed", "load")]

    def value(mu: np.ndarray, tsq: np.ndarray, sv: np.ndarray, t2: float) -> float:
        return float(loglik_and_grad(*data, mu, tsq, sv, t2)[0])

    for t2 in (0.7, 0.0):
        point = [prob["mu"], prob["tsq"], prob["seed_var"], t2]
        _, g_mu, g_tsq, g_sv, g_t2 = loglik_and_grad(*data, *point[:3], t2)
        h = 1e-6
        for which, grad in ((0, g_mu), (1, g_tsq), (2, g_sv)):
            for m in range(4):
                up = [p.copy() if isinstance(p, np.ndarray) else p for p in point]
                dn = [p.copy() if isinstance(p, np.ndarray) else p for p in point]
                up[which][m] += h
                dn[which][m] -= h
                assert grad[m] == pytest.approx((value(*up) - value(*dn)) / (2 * h), rel=1e-5,
                                                abs=1e-6)
        fd = ((value(*point[:3], t2 + h) - value(*point[:3], t2 - h)) / (2 * h) if t2 > 0
              else (value(*point[:3], h) - value(*point[:3], 0.0)) / h)
        assert g_t2 == pytest.approx(fd, rel=1e-4, abs=1e-5)


@pytest.mark.parametrize("scale", [1e-45, 1e45])
def test_extreme_variances_take_their_logs_one_by_one(scale: float,
                                                      rng: np.random.Generator) -> None:
    """Products of 8 variances outside the safe range fall back to one log per cell."""
    prob = _problem(rng, 9, 5, 1, missing=0.0)
    prob.update(v_fixed=prob["v_fixed"] * scale, tsq=prob["tsq"] * scale,
                seed_var=prob["seed_var"] * scale, load=prob["load"] * np.sqrt(scale),
                ybar=prob["ybar"] * np.sqrt(scale), mu=prob["mu"] * np.sqrt(scale),
                t2=prob["t2"] * scale)
    d = prob["tsq"][:, None] + prob["seed_var"][:, None] * prob["inv_s"] + prob["v_fixed"]
    want = lowrank_marginal_loglik(prob["ybar"], prob["weight"], prob["mu"], d,
                                   float(prob["t2"]), prob["load"].transpose(2, 0, 1), 1)
    got = loglik_and_grad(*(prob[n] for n in ("ybar", "weight", "inv_s", "v_fixed", "load",
                                               "mu", "tsq", "seed_var")), float(prob["t2"]))
    assert np.isfinite(got[0])
    assert got[0] == pytest.approx(want, rel=1e-12)


def test_python_mode_runs_the_same_kernel(rng: np.random.Generator) -> None:
    """PyMC's own sampler runs the Op's ``perform`` (Python linker): the same numbers."""
    prob = _problem(rng, 5, 7, 2)
    point = [prob[name] for name in PARAMS]
    numba_fn, _ = _functions(prob)
    py_fn, _ = _functions(prob, mode=Mode(linker="py", optimizer="fast_run"))
    for got, want in zip(py_fn(*point), numba_fn(*point), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_the_gradient_outputs_have_no_gradient_and_bad_ranks_raise() -> None:
    args = [pt.dmatrix(), pt.dmatrix(), pt.dmatrix(), pt.dmatrix(), pt.tensor3(),
            pt.dvector(), pt.dvector(), pt.dvector(), pt.dscalar()]
    out = fused_op(*args)
    with pytest.raises(NotImplementedError, match="no gradient of their own"):
        pytensor.grad(out[1].sum(), args[5])
    with pytest.raises(ValueError, match="mu must have 1 dimensions"):
        fused_op(*args[:5], pt.dmatrix(), *args[6:])

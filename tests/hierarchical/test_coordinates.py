"""The coordinates tau_m is sampled in: the same half-normal prior in both, and the switch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaluq.hierarchical import build_model, cube_statistics
from evaluq.hierarchical._model import (
    resolve_priors,
    tau_m_coordinates,
    tau_m_from_coordinates,
    tau_m_variant,
)

from .paired_sim import Setting, shared_cube


def _data(n_models: int, n_languages: int, rho: float):
    setting = Setting(n_models=n_models, n_languages=n_languages, n_boot=60, rho=rho)
    return cube_statistics(shared_cube(np.random.default_rng(0), setting)[0])


def test_the_switch_follows_how_well_the_data_pin_tau_m() -> None:
    assert tau_m_variant(tau_m_coordinates(_data(5, 8, 0.5))) == "abs"      # weakly identified
    assert tau_m_variant(tau_m_coordinates(_data(6, 300, 0.9))) == "linear"  # pinned
    assert tau_m_variant(np.array([0.0, 1.0, 1.0])) == "linear"              # the majority
    assert tau_m_variant(np.array([0.0, 0.0, 1.0])) == "abs"


@pytest.mark.parametrize(("shape", "variant"), [((5, 8, 0.5), "abs"), ((6, 300, 0.9), "linear")])
def test_both_coordinates_give_the_half_normal_prior(shape: tuple[int, int, float],
                                                     variant: str) -> None:
    """log p(z) - log |d tau / d z| - log HalfNormal(tau; sigma) is the same at every z: the
    model's prior potential and tau_m deterministic carry the half-normal prior and the
    Jacobian of the coordinates."""
    data = _data(*shape)
    model = build_model(data)
    assert tau_m_variant(tau_m_coordinates(data)) == variant
    sigma = resolve_priors(data, None)["tau_m_sigma"]
    prior = next(p for p in model.potentials if p.name == "tau_m_prior")
    fn = model.compile_fn([prior, model["tau_m"]], inputs=[model["tau_m_z"]],
                          on_unused_input="ignore", point_fn=False)
    n_m = data.shape[0]
    grid = np.linspace(-3.0, 8.0, 23) if variant == "linear" else np.linspace(0.05, 3.0, 23)
    rest = []
    for z in grid:
        lp, tau = fn(np.full(n_m, z))
        _, tau_h = fn(np.full(n_m, z + 1e-6))
        jac = (tau_h[0] - tau[0]) / 1e-6
        rest.append(lp / n_m - np.log(abs(jac)) - stats.halfnorm.logpdf(tau[0], scale=sigma))
        assert np.isclose(tau_m_from_coordinates(np.array([z]), sigma,
                                                 np.array([variant == "linear"]))[0], tau[0])
    np.testing.assert_allclose(rest, rest[0], atol=1e-5)

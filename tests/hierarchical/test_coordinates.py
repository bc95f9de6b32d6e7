"""The coordinates tau_m is sampled in: the same pooled half-normal prior in both, the switch
and the target acceptance rate that goes with them."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pytest
from scipy import stats

from evaluq.hierarchical import build_model, cube_statistics
from evaluq.hierarchical._model import (
    resolve_priors,
    target_accept,
    tau_m_evidence,
    tau_m_from_coordinates,
    tau_m_variant,
)

from .paired_sim import Setting, shared_cube


def _data(n_models: int, n_languages: int, rho: float):
    setting = Setting(n_models=n_models, n_languages=n_languages, n_boot=60, rho=rho)
    return cube_statistics(shared_cube(np.random.default_rng(0), setting)[0])


def test_the_switch_follows_how_well_the_data_pin_tau_m() -> None:
    assert tau_m_variant(tau_m_evidence(_data(5, 8, 0.5))) == "abs"      # weakly identified
    assert tau_m_variant(tau_m_evidence(_data(6, 300, 0.9))) == "linear"  # pinned
    assert tau_m_variant(np.array([0.0, 2.0, 2.0])) == "linear"           # the majority
    assert tau_m_variant(np.array([0.0, 1.0, 2.0])) == "abs"
    assert tau_m_variant(np.array([-np.inf])) == "abs"
    assert tau_m_variant(np.array([])) == "abs"


def test_smaller_steps_where_the_non_centred_ridge_is_thin() -> None:
    """The demo's 5 x 4 cube pins tau_m moderately (evidence 0.9-1.4 SEs, the most 4
    languages allow): its fits diverged in 8 of 16 at NUTS's default target acceptance."""
    from evaluq.demo import demo_cube

    evidence = tau_m_evidence(cube_statistics(demo_cube(rng=0), "paired"))
    assert tau_m_variant(evidence) == "abs"
    assert target_accept(evidence) == 0.9, evidence
    assert target_accept(tau_m_evidence(_data(5, 8, 0.5))) == 0.8       # weakly identified
    assert target_accept(tau_m_evidence(_data(6, 300, 0.9))) == 0.8     # linear coordinates
    assert target_accept(np.array([0.0, 1.0, 1.0])) == 0.9
    assert target_accept(np.array([0.0, 0.0, 1.0])) == 0.8


@pytest.mark.parametrize(("shape", "variant"), [((5, 8, 0.5), "abs"), ((6, 300, 0.9), "linear")])
def test_both_coordinates_give_the_pooled_half_normal_prior(shape: tuple[int, int, float],
                                                            variant: str) -> None:
    """log p(z | scale) - log |d tau / d z| - log HalfNormal(tau; scale) is the same at every z
    and every pooled scale: the model's prior potential and tau_m deterministic carry the
    half-normal prior given tau_m_scale (with its normaliser -log scale) and the Jacobian of
    the coordinates."""
    data = _data(*shape)
    with patch("evaluq.hierarchical._model.tau_m_variant", return_value=variant):
        model = build_model(data)
    sigma = resolve_priors(data, None)["tau_m_sigma"]
    prior = next(p for p in model.potentials if p.name == "tau_m_prior")
    scale_rv = model["tau_m_scale_raw" if variant == "abs" else "tau_m_scale"]
    fn = model.compile_fn([prior, model["tau_m"], model["tau_m_scale"]],
                          inputs=[model["tau_m_z"], scale_rv],
                          on_unused_input="ignore", point_fn=False)
    n_m = data.shape[0]
    grid = np.linspace(-3.0, 8.0, 23) if variant == "linear" else np.linspace(0.05, 3.0, 23)
    abs_raw = -0.4 if variant == "abs" else 0.4
    rest = []
    for scale_value in (abs_raw, 1.0, 2.5):           # non-centred: scale = |raw|
        for z in grid:
            lp, tau, scale = fn(np.full(n_m, z), np.asarray(scale_value))
            _, tau_h, _ = fn(np.full(n_m, z + 1e-6), np.asarray(scale_value))
            jac = (tau_h[0] - tau[0]) / 1e-6
            rest.append(lp / n_m - np.log(abs(jac))
                        - stats.halfnorm.logpdf(tau[0], scale=scale))
            assert np.isclose(tau_m_from_coordinates(np.array([z]), scale, sigma, variant)[0],
                              tau[0])
    np.testing.assert_allclose(rest, rest[0], atol=1e-5)

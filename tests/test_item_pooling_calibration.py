"""Slow: P(a > b) of close models is calibrated under the pooled model deviations (issue 36
item 3), a smaller version of ``benchmarks/calibration_item_pooling.py``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("nutpie")

N_SETS = 60


@pytest.fixture
def gamma_prior(monkeypatch):
    """tau_dev ~ Gamma(2, rate 2 / dev_sigma) while the test runs (``_model.DEV_PRIOR``)."""
    from evaluq.item_model import _model

    monkeypatch.setattr(_model, "DEV_PRIOR", "gamma")
    return _model


@pytest.mark.parametrize("effects", ["zero-sum", "iid"])
def test_gamma_prior_is_the_model_built(gamma_prior, effects):
    """With ``DEV_PRIOR = "gamma"`` the model's tau_dev has the log-density of scipy's
    Gamma(2, scale dev_sigma / 2) (mean dev_sigma, zero density at 0), and the public
    ``dev_sigma`` key still sets it."""
    import pymc as pm
    from scipy import stats

    from evaluq.item_model import item_statistics
    from evaluq.item_model._simulate import simulate_items

    t = simulate_items(n_models=4, n_items=12, n_epochs=2, rng=3)
    data = item_statistics(t, model="model", item="item", score="score", epoch="epoch",
                           family="binomial")
    for scale in (0.7, 1.0):
        model = gamma_prior.build_model(data, priors={"dev_sigma": scale}, effects=effects)
        for tau in (0.05, 0.37, 2.0):
            got = float(pm.logp(model["tau_dev"], tau).eval())
            np.testing.assert_allclose(got, stats.gamma(2.0, scale=scale / 2).logpdf(tau),
                                       rtol=1e-10)


def test_draw_tau_dev_matches_the_prior(gamma_prior):
    """``draw_tau_dev`` draws the prior of the model built: Gamma(2, scale s / 2) under
    ``"gamma"`` (KS against scipy), HalfNormal(s) otherwise."""
    from scipy import stats

    gen = np.random.default_rng(5)
    x = gamma_prior.draw_tau_dev(gen, 0.6, 4000)
    assert stats.kstest(x, stats.gamma(2.0, scale=0.3).cdf).pvalue > 1e-3
    gamma_prior.DEV_PRIOR = "halfnormal"
    y = gamma_prior.draw_tau_dev(gen, 0.6, 4000)
    assert stats.kstest(y, stats.halfnorm(scale=0.6).cdf).pvalue > 1e-3
    assert stats.kstest(y, stats.gamma(2.0, scale=0.3).cdf).pvalue < 1e-6


@pytest.mark.slow
def test_favoured_model_ahead_as_often_as_stated():
    """60 data sets of 5 models x 60 items x 1 epoch (dev_m ~ N(0, 0.3^2)): the favoured
    model of each pair is truly ahead as often as P(a > b) says, mean(ahead - stated) >
    -0.025. The benchmark's 400 sets measured +0.014 (cluster SE 0.0073) pooled and -0.047
    (SE 0.0073) with the former flat ZeroSumNormal(2.5); at 60 sets the SE is about 0.019,
    so a pooled fit fails with probability P(Z < -2.05) ~ 2% and the flat prior passes
    with probability P(Z > 1.16) ~ 12% (power 88%). The seed is fixed: the outcome is
    deterministic."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import calibration_item_pooling as cip

    data, _ = cip.simulate(0)
    comp = cip.compiled(data)
    rows = [cip.one(comp, 20_000 + i) for i in range(N_SETS)]
    stated = np.stack([r["stated"] for r in rows])
    ahead = np.stack([r["ahead"] for r in rows])
    gap, se = cip.cluster_gap(stated, ahead)
    assert gap > -0.025, (gap, se)
    assert gap < 0.05, (gap, se)                    # not grossly underconfident either
    pairwise = np.stack([r["cover_pairwise"] for r in rows]).mean()
    assert pairwise > 0.8


@pytest.mark.slow
def test_shrinkage_right_when_tau_from_the_prior():
    """SBC-style: 60 data sets whose deviations' SD is drawn from tau_dev's own prior
    HalfNormal(1). The true pairwise difference regressed on its posterior mean has slope 1
    (the posterior shrinks as much as the prior says: the benchmark's 200 sets measured
    1.012, bootstrap SE 0.010; at 60 sets the SE is about 0.02, so |slope - 1| < 0.08 is
    4 SEs), and the pairwise 90% coverage is above 0.84 (measured 0.881, SE 0.011 at 200
    sets; about 0.02 at 60). The pairwise coverage at a fixed tau 0.3 (0.866) is below 0.90
    because of where that truth sits in the prior, not because of the model or the study:
    this test is the check."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    import calibration_item_pooling as cip

    data, _ = cip.simulate(0)
    comp = cip.compiled(data)
    rows = [cip.one(comp, 50_000 + i, "prior") for i in range(N_SETS)]
    post = np.stack([r["post_diff"] for r in rows])
    true = np.stack([r["true_diff"] for r in rows])
    slope = (post * true).sum() / (post**2).sum()
    assert abs(slope - 1) < 0.08, slope
    assert np.stack([r["cover_pairwise"] for r in rows]).mean() > 0.84

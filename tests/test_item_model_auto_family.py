"""``family="auto"`` picks beta-binomial when the epochs of a (model, item) agree more often
than the binomial allows (issue 34), and says why in the notes."""

from __future__ import annotations

import numpy as np
import pytest

from evaluq.item_model import item_statistics, simulate_items
from evaluq.item_model._drift import DRIFT_Z, epoch_agreement_test, plug_in_fit

COLS = {"model": "model", "item": "item", "score": "score", "task": "task", "epoch": "epoch"}


def _table(over: float, rng: int, **kw):
    kw = {"n_models": 5, "n_items": 200, "n_epochs": 3, "n_tasks": 2} | kw
    return simulate_items(overdispersion=over, rng=rng, **kw)


@pytest.mark.parametrize("rng", [0, 1, 2])
def test_auto_keeps_the_binomial_without_run_drift(rng):
    d = item_statistics(_table(0.0, rng), **COLS)
    assert d.family == "binomial"
    assert "agree as the binomial predicts" in d.notes["family"]
    assert "z = " in d.notes["family"]


@pytest.mark.parametrize("rng", [0, 1, 2])
def test_auto_picks_beta_binomial_with_run_drift(rng):
    t = _table(0.2, rng)
    d = item_statistics(t, **COLS)
    assert d.family == "beta-binomial"
    assert d.term_counts is not None                     # the beta-binomial's pattern terms
    ref = item_statistics(t, **COLS, family="beta-binomial")
    np.testing.assert_array_equal(d.term_counts, ref.term_counts)
    note = d.notes["family"]
    assert note.startswith("family='auto' chose 'beta-binomial'")
    assert "agree more often than the binomial family allows" in note


def test_auto_is_the_same_for_the_same_table():
    t = _table(0.05, 3)
    notes = {item_statistics(t, **COLS).notes["family"] for _ in range(2)}
    assert len(notes) == 1


def test_explicit_family_and_one_epoch_skip_the_test():
    t = _table(0.2, 0)
    assert item_statistics(t, **COLS, family="binomial").family == "binomial"
    one = _table(0.0, 0, n_epochs=1)
    d = item_statistics(one, **COLS)
    assert d.family == "bernoulli"
    assert "z = " not in d.notes["family"]


def test_plug_in_fit_recovers_the_truth():
    """The marginal maximum recovers sigma_item and the models' gaps (10,000 responses per
    model: SEs ~0.03)."""
    t = simulate_items(n_models=4, n_items=2500, n_epochs=2, sigma_item=1.2, model_sd=0.5,
                       sigma_task=0.0, sigma_model_x_task=0.0, rng=4)
    d = item_statistics(t, **{k: v for k, v in COLS.items() if k != "task"}, family="binomial")
    eta, sigma = plug_in_fit(d.correct, d.epochs, d.term_total, d.term_task, d.term_weight)
    assert sigma == pytest.approx(1.2, abs=0.06)
    # the true eta of each model: the new-items score is E sigmoid(eta - b), b ~ N(0, 1.2^2)
    from scipy.optimize import brentq
    from scipy.special import expit

    x, w = np.polynomial.hermite.hermgauss(40)

    def score(e: float) -> float:
        return float(expit(e - np.sqrt(2) * 1.2 * x) @ w / np.sqrt(np.pi))

    truth = [brentq(lambda e, v=v: score(e) - v, -10, 10)
             for v in t.attrs["truth"]["new_items"]]
    np.testing.assert_allclose(eta[:, 0], truth, atol=0.12)    # item sampling: SE ~0.03


def test_the_z_of_the_test_is_calibrated_under_the_binomial():
    """Under the binomial, z is centred with SD at most ~1 over 40 tables (a posterior
    predictive check is conservative: the SD is ~0.5 here, the item effects being drawn
    given the same data), and never above DRIFT_Z."""
    zs = []
    for rng in range(40):
        d = item_statistics(_table(0.0, 100 + rng, n_items=120), **COLS, family="binomial")
        zs.append(epoch_agreement_test(d.per_item, d.epochs, d.item_task, d.correct,
                                       d.term_total, d.term_task, d.term_weight, d.item_term,
                                       rng=rng).z)
    zs = np.array(zs)
    assert abs(zs.mean()) < 3 * zs.std() / np.sqrt(len(zs))
    assert zs.std() < 1.2
    assert zs.max() < DRIFT_Z


@pytest.mark.parametrize("kw", [{"discrimination": True}, {"item_distribution": "learned"}])
def test_auto_with_the_2pl_or_a_learned_distribution_stays_binomial(kw):
    """Epochs that agree beyond the binomial make ``auto`` pick beta-binomial, which neither
    the 2PL nor the learned item distribution takes: with either ``auto`` resolves to the
    binomial (the extra agreement may come from the items they model) and says why, where
    it once raised."""
    import warnings

    import evaluq as eq
    from evaluq.item_model import ItemConvergenceWarning

    t = _table(0.2, 0)
    assert item_statistics(t, **COLS).family == "beta-binomial"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(t, **COLS, draws=30, tune=30, chains=2, rng=0, **kw)
    assert fit.data.family == "binomial"
    note = fit.data.notes["family"]
    assert note.startswith("family='auto' chose 'binomial' for the ")
    assert "z = " in note
    assert "family='beta-binomial'" in note
    assert note in repr(fit)

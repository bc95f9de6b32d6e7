"""``compare_fits`` with the cube's Gaussian model (``fit_hierarchical``): compared on
(model, task) cell counts with the fits without item effects, never on the item unit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit, logsumexp
from scipy.stats import binom, norm

import evaluq as eq
from evaluq.item_model._cells import (
    CELL_UNIT,
    ITEM_UNIT,
    binomial_cell_loglik,
    gaussian_cell_loglik,
    log_bin_probability,
)

pytestmark = pytest.mark.filterwarnings(
    "ignore::evaluq.hierarchical._fit.ConvergenceWarning",
    "ignore::evaluq.item_model._fit.ItemConvergenceWarning")
COLS = {"model": "model", "score": "score", "epoch": "epoch", "task": "task"}
QUICK = {"draws": 200, "tune": 200, "chains": 2}


def _table(seed: int = 0):
    return eq.simulate_items(n_models=3, n_items=30, n_epochs=2, n_tasks=2, mean_logit=1.5,
                             rng=seed)


def _cube(table):
    return eq.from_items(table, model="model", item="item", score="score", language="task",
                         seed="epoch", n_boot=200)


@pytest.fixture(scope="module")
def fits():
    table = _table()
    return {"gaussian": eq.fit_hierarchical(_cube(table), **QUICK, rng=1, retry=False),
            "items": eq.fit_items(table, item="item", **COLS, **QUICK, rng=1),
            "no items": eq.fit_items(table, item=None, **COLS, **QUICK, rng=1)}


@pytest.fixture(scope="module")
def table3(fits):
    return eq.compare_fits(fits)


def test_log_bin_probability_against_scipy():
    lo = np.array([-40.0, -3.0, -1.0, 0.5, 2.0, 8.0, 30.0, -0.2])
    hi = np.array([-39.0, -2.5, 1.0, 0.6, 9.0, 8.5, 31.0, -0.1])
    got = log_bin_probability(lo, hi)
    # scipy on the side where the difference does not cancel: sf above 0, cdf below
    direct = np.where(lo > 0, norm.sf(lo) - norm.sf(hi), norm.cdf(hi) - norm.cdf(lo))
    ok = direct > 1e-280
    np.testing.assert_allclose(got[ok], np.log(direct[ok]), rtol=1e-10)
    up = lo > 0                                                          # the upper tail
    far = norm.logsf(lo[up]) + np.log1p(-np.exp(norm.logsf(hi[up]) - norm.logsf(lo[up])))
    np.testing.assert_allclose(got[up], far, rtol=1e-10)
    assert np.all(np.isfinite(got))


def test_binomial_cells_by_hand(fits):
    fit = fits["no items"]
    ll = binomial_cell_loglik(fit)
    eta = fit.posterior["eta"].transpose("chain", "draw", "model", "task").values
    c, n = fit.data.correct, fit.data.trials
    first = binom.logpmf(c, n, expit(eta[0, 0])).ravel()
    np.testing.assert_allclose(ll[0], first, rtol=1e-12)
    assert ll.shape == (eta.shape[0] * eta.shape[1], c.size)


def test_gaussian_cells_by_hand(fits):
    g, ref = fits["gaussian"], fits["no items"]
    ll = gaussian_cell_loglik(g, ref, "gaussian")
    post = g.posterior
    d = 7                                                  # a draw, flat over chains
    theta = post["theta"].transpose("chain", "draw", "model", "language").values
    theta = theta.reshape(-1, *theta.shape[2:])[d]
    sigma = post["sigma_seed"].transpose("chain", "draw", "model").values.reshape(-1, 3)[d]
    m, k = 1, 0                                            # models and tasks sort alike here
    assert list(g.data.models) == list(ref.data.models)
    assert list(g.data.languages) == list(ref.data.tasks)
    var = g.data.v_fixed[m, k] + sigma[m] ** 2 / g.data.n_seeds[m, k]
    c, n = ref.data.correct[m, k], ref.data.trials[m, k]
    p = (norm.cdf((c + 0.5) / n, theta[m, k], np.sqrt(var))
         - norm.cdf((c - 0.5) / n, theta[m, k], np.sqrt(var)))
    np.testing.assert_allclose(ll[d, m * 2 + k], np.log(p), rtol=1e-9)


def test_blocks_by_unit_and_nothing_across(table3):
    assert list(table3.index.names) == ["unit", "fit"]
    assert set(table3.loc[ITEM_UNIT].index) == {"items", "no items"}
    assert set(table3.loc[CELL_UNIT].index) == {"gaussian", "no items"}
    for unit in (ITEM_UNIT, CELL_UNIT):          # differences within a block only
        block = table3.loc[unit]
        assert block["rank"].min() == 0
        assert block.loc[block["rank"] == 0, "elpd_diff"].item() == 0
        assert (block["elpd_diff"] <= 0).all()
    cells = table3.loc[CELL_UNIT]                # raw numbers (the item block is rounded)
    np.testing.assert_allclose(cells["elpd_diff"], cells["elpd"] - cells["elpd"].max())
    # the same fit has a different elpd on each unit: they are never subtracted
    assert table3.loc[(ITEM_UNIT, "no items"), "elpd"] != table3.loc[(CELL_UNIT, "no items"),
                                                                       "elpd"]
    assert "gaussian" in table3.attrs["not_compared"]
    assert "items" in table3.attrs["not_compared"]
    assert set(table3.attrs["units"]) == {ITEM_UNIT, CELL_UNIT}
    assert table3.loc[(CELL_UNIT, "gaussian"), "form"] == "gaussian (cube)"


def test_cell_elpd_plus_p_is_the_lppd(fits, table3):
    """elpd_loo + p_loo = lppd = sum over cells of log mean_draws p(c | draw)."""
    for name, ll in (("no items", binomial_cell_loglik(fits["no items"])),
                     ("gaussian", gaussian_cell_loglik(fits["gaussian"], fits["no items"],
                                                       "gaussian"))):
        lppd = float((logsumexp(ll, axis=0) - np.log(ll.shape[0])).sum())
        row = table3.loc[(CELL_UNIT, name)]
        np.testing.assert_allclose(row["elpd"] + row["p"], lppd, rtol=1e-8)


def test_paired_errors_are_noted(fits, table3):
    paired = fits["gaussian"].idata["observed_data"].attrs["test_set_errors"] == "paired"
    assert bool(table3.attrs["notes"]) == paired


def test_errors(fits):
    with pytest.raises(ValueError, match="with an item-model fit without item effects"):
        eq.compare_fits({"gaussian": fits["gaussian"], "items": fits["items"]})
    other = fits["no items"].__class__(idata=fits["no items"].idata,
                                       config=fits["no items"].config,
                                       data=fits["no items"].data)
    other.data = other.data.__class__(**{**other.data.__dict__,
                                         "correct": other.data.correct + 1})
    with pytest.raises(ValueError, match="fitted to other data"):
        eq.compare_fits({"gaussian": fits["gaussian"], "no items": other})
    renamed = other.data.__class__(**{**fits["no items"].data.__dict__,
                                      "tasks": np.array(["x", "y"], dtype=object)})
    other.data = renamed
    with pytest.raises(ValueError, match="the \\(model, task\\) cells differ"):
        eq.compare_fits({"gaussian": fits["gaussian"], "no items": other})


def test_without_an_item_fit_only_the_cell_block(fits):
    table = eq.compare_fits({"gaussian": fits["gaussian"], "no items": fits["no items"]})
    assert set(table.index.get_level_values("unit")) == {CELL_UNIT}
    assert set(table.attrs["units"]) == {CELL_UNIT}
    assert list(table.attrs["not_compared"]) == ["gaussian"]

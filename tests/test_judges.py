"""evaluq.judges: ppi_mean, judged_means, the transport check and label_budget (issue 32).

Checked against ppi_py 0.2.3's numbers (``benchmarks/anchors/ppi_reference.json``, written
by ``benchmarks/anchors/run_ppi.py`` in ppi_py's own env), closed forms and simulation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from evaluq.judges import ppi_mean
from evaluq.judges._kernels import chain_rule_draws, chain_rule_moments

ANCHORS = Path(__file__).resolve().parents[1] / "benchmarks" / "anchors"
PPI = json.loads((ANCHORS / "ppi_reference.json").read_text())
CASES = sorted(PPI["results"])


def _data(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = PPI["data"][name]
    return (np.asarray(d["Y"], dtype=float), np.asarray(d["Yhat"], dtype=float),
            np.asarray(d["Yhat_unlabeled"], dtype=float))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("lam", [None, 1.0, 0.0])
def test_ppi_mean_equals_ppi_py(name: str, lam: float | None) -> None:
    y, yhat, yhat_u = _data(name)
    ref = PPI["results"][name][f"lam_{lam}"]
    method = {None: "ppi++", 1.0: "ppi", 0.0: "classical"}[lam]
    for level, key in ((0.95, "ci_alpha0.05"), (0.9, "ci_alpha0.1")):
        res = ppi_mean(y, yhat, yhat_u, method=method, confidence_level=level)
        assert res.estimate == pytest.approx(ref["point"], abs=1e-10)
        np.testing.assert_allclose(res.confidence_interval().values, ref[key], atol=1e-10)
        given = ppi_mean(y, yhat, yhat_u, method="ppi++", lam=res.lam, confidence_level=level)
        np.testing.assert_allclose(given.confidence_interval().values, ref[key], atol=1e-10)
    if lam is None:
        assert res.lam == pytest.approx(PPI["results"][name]["lam_tuned_clipped"], abs=1e-12)
    if lam == 0.0:
        np.testing.assert_allclose(res.confidence_interval(0.95).values,
                                   PPI["results"][name]["classical_ci_alpha0.05"], atol=1e-10)


def test_ppi_formula_by_hand() -> None:
    """PPI++ by the written formula (numpy, ddof as documented) on fresh data."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=60)
    f, fu = y + rng.normal(size=60), rng.normal(size=500) * 1.4
    res = ppi_mean(y, f, fu, method="ppi++")
    lam = np.clip(np.mean((y - y.mean()) * (f - f.mean()))
                  / ((1 + 60 / 500) * np.var(np.r_[f, fu], ddof=1)), 0, 1)
    est = lam * fu.mean() + np.mean(y - lam * f)
    se = np.sqrt(lam**2 * fu.var() / 500 + np.var(y - lam * f) / 60)
    assert res.lam == pytest.approx(lam, abs=1e-14)
    assert res.estimate == pytest.approx(est, abs=1e-14)
    assert res.se == pytest.approx(se, abs=1e-14)
    assert res.n_effective == pytest.approx(60 * y.var() / 60 / se**2)


def test_chain_rule_moments_match_draws() -> None:
    """The closed-form posterior mean / variance against Monte Carlo draws."""
    m = np.array([30.0, 50.0, 20.0])
    c = np.array([[4.0, 1.0, 0.0], [2.0, 3.0, 2.0], [0.0, 0.0, 3.0]])
    values = np.array([0.0, 0.5, 1.0])
    mean, var = chain_rule_moments(m, c, values)
    draws = chain_rule_draws(m, c, values, 200_000, np.random.default_rng(1))
    assert draws.mean() == pytest.approx(float(mean), abs=4 * float(np.sqrt(var / 200_000)))
    assert draws.var() == pytest.approx(float(var), rel=0.02)


def test_chain_rule_one_level_is_beta_posterior() -> None:
    """A constant judge: the chain rule is the gold-only Beta(s + 1, n - s + 1) posterior."""
    gold = np.array([1.0] * 7 + [0.0] * 3)
    res = ppi_mean(gold, np.ones(10), np.ones(40), method="chain-rule", n_draws=200_000)
    beta = stats.beta(8, 4)
    assert res.estimate == pytest.approx(beta.mean(), abs=1e-12)
    assert res.se == pytest.approx(beta.std(), abs=1e-12)
    np.testing.assert_allclose(res.confidence_interval().values, beta.ppf([0.025, 0.975]),
                               atol=5e-3)


def test_rogan_gladen_closed_form() -> None:
    gold = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 1], float)
    judge = np.array([1, 1, 1, 0, 0, 0, 1, 0, 0, 1], float)
    unl = np.r_[np.ones(30), np.zeros(20)]
    res = ppi_mean(gold, judge, unl, method="rogan-gladen")
    p, se, sp = 35 / 60, 4 / 5, 4 / 5
    theta = (p + sp - 1) / (se + sp - 1)
    var = (p * (1 - p) / 60 + theta**2 * se * (1 - se) / 5
           + (1 - theta) ** 2 * sp * (1 - sp) / 5) / (se + sp - 1) ** 2
    assert res.estimate == pytest.approx(theta)
    assert res.se == pytest.approx(np.sqrt(var))


def test_rogan_gladen_chance_judge_is_nan() -> None:
    gold = np.array([1, 0, 1, 0], float)
    res = ppi_mean(gold, np.array([1, 1, 0, 0.0]), np.ones(5), method="rogan-gladen")
    assert np.isnan(res.estimate)
    assert "sensitivity + specificity" in str(res.nan_reason)
    assert "sensitivity" in res.confidence_interval().attrs["nan_reason"]


def test_default_method_and_reason() -> None:
    rng = np.random.default_rng(0)
    gold = (rng.random(300) < 0.5).astype(float)
    judge = np.where(rng.random(300) < 0.8, gold, 1 - gold)
    assert ppi_mean(gold[:40], judge[:40], judge[40:]).method == "chain-rule"
    cont = gold + rng.normal(0, 0.5, 300)
    res = ppi_mean(gold[:40], cont[:40], cont[40:])
    assert res.method == "ppi++"
    assert "continuous" in res.reason


def test_weak_judge_is_said() -> None:
    rng = np.random.default_rng(1)
    gold = (rng.random(400) < 0.5).astype(float)
    judge = np.where(rng.random(400) < 0.55, gold, 1 - gold)
    res = ppi_mean(gold[:50], judge[:50], judge[50:], method="ppi++")
    assert res.gain < 1.25
    assert any("weak judge" in n for n in res.notes)


def test_constant_judge_lambda_nan_with_reason() -> None:
    gold = np.array([1.0, 0.0, 1.0, 1.0])
    res = ppi_mean(gold, np.ones(4), np.ones(10), method="ppi++")
    assert np.isnan(res.lam)
    assert res.estimate == pytest.approx(0.75)
    assert any("not identified" in n for n in res.notes)


def test_unlabelled_level_said() -> None:
    gold = np.array([1.0, 0.0, 1.0, 1.0])
    res = ppi_mean(gold, np.array([1.0, 0, 1, 1]), np.array([2.0, 1, 0, 2]),
                   method="chain-rule")
    assert any("no gold label" in n for n in res.notes)
    assert ppi_mean(gold, np.array([1.0, 0, 1, 1]), np.array([2.0, 1, 0, 2])).method == "ppi++"


@pytest.mark.parametrize(("args", "kwargs", "error", "match"), [
    (([1.0, 0.0], [1.0], [0.0]), {}, ValueError, "lengths 2 and 1"),
    (([], [], [0.0]), {}, ValueError, "`gold` is empty"),
    (([1.0, 0.0], [1.0, np.nan], [0.0]), {}, ValueError, "`judge_gold` has 1 NaN"),
    (([1.0, 0.0], [1.0, 0.0], [0.0, np.inf]), {}, ValueError, "`judge_unlabelled` has 1"),
    (([1.0, 0.0], [1.0, 0.0], [0.0]), {"method": "bayes"}, ValueError, "`method` must be"),
    (([1.0, 0.0], [1.0, 0.0], [0.0]), {"method": "ppi", "lam": 0.5}, ValueError, "`lam`"),
    (([2.0, 0.0], [1.0, 0.0], [0.0]), {"method": "rogan-gladen"}, ValueError, "0/1 gold"),
    (([1.0, 0.0], [1.0, 0.0], [0.0]), {"confidence_level": 1.5}, ValueError,
     "confidence_level"),
    (([1.0, 0.0], [1.0, 0.0], [0.0]), {"rng": "a"}, TypeError, "`rng`"),
    (([[1.0, 0.0]], [1.0, 0.0], [0.0]), {}, ValueError, "`gold` must be 1-D"),
    (([1.0, 0.0], np.linspace(0, 1, 2), np.linspace(0, 1, 60)), {"method": "chain-rule"},
     ValueError, "discrete"),
])
def test_ppi_mean_bad_input(args: tuple, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ppi_mean(*args, **kwargs)


def test_ppi_without_unlabelled_is_nan_with_reason() -> None:
    res = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [], method="ppi")
    assert np.isnan(res.estimate)
    assert "unlabelled" in str(res.nan_reason)
    assert ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [], method="ppi++").lam == 0.0


def test_result_conversions() -> None:
    res = ppi_mean([1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 1.0])
    ds = res.to_dataset()
    assert ds["ci"].attrs["ci_kind"] == "percentile"
    assert ds.attrs["method"] == "chain-rule"
    assert list(res.to_dataframe().columns)[-2:] == ["lower", "upper"]
    assert "PPIMeanResult(" in repr(res)
    assert res.confidence_interval(0.5).attrs["confidence_level"] == 0.5

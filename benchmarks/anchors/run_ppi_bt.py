"""ppi-python's (ppi_py 0.2.3) PPI++ logistic regression on Bradley-Terry votes: the anchor of
evaluq's judge-assisted ratings (``evaluq.ratings.fit_judged_ratings``, issue 33 item 3).

Bradley-Terry without ties (or with a tie as half a win) is a logistic regression without
intercept on the signed design ``x = e_a - e_b`` (outcome 1 when ``model_a`` wins, 1/2 for a
tie). Its design is rank-deficient (the columns sum to 0), so ppi_py gets a full-rank one:

* ``sum-zero``: ``X = (e_a - e_b) @ C``, ``C`` (m, m-1) the orthonormal Helmert contrasts, so
  ``beta = C' theta`` for sum-zero strengths theta and ppi_py's trace of Cov(beta) (its lambda
  tuning) is the trace of Cov(theta);
* ``reference``: the reference model's column dropped, ``beta_k = theta_k - theta_ref``.

Runs in ppi_py's own virtual env (``benchmarks/anchors/setup_ppi.sh``). Every data set is
written into the JSON; evaluq's test (``tests/ratings/test_judged.py``) reads only the JSON.

Usage::

    python run_ppi_bt.py OUT.json

ppi_py's logistic functions start L-BFGS-B from scikit-learn's fit of the labelled rows, which
refuses a 1/2 outcome; for the cases with gold ties the start is fitted on the outcomes rounded
down (``_rounded_start``), which changes the start only, not the minimum (the objective is
strictly convex), and the JSON says so.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

import numpy as np
import ppi_py
import ppi_py.ppi as ppi_module
from ppi_py.ppi import _calc_lam_glm, _logistic_get_stats
from scipy.stats import norm

SEED = 20261126
LEVEL = 0.95


class _RoundedStart:
    """scikit-learn's LogisticRegression fitted on 0/1 outcomes (1/2 rounded down): the start
    of ppi_py's optimiser only."""

    def __init__(self, **kwargs: object) -> None:
        self._inner = ppi_module.__dict__["_SKLogisticRegression"](**kwargs)

    def fit(self, x: np.ndarray, y: np.ndarray) -> object:
        return self._inner.fit(x, np.floor(y))


def _rounded_start() -> None:
    if "_SKLogisticRegression" not in ppi_module.__dict__:
        ppi_module.__dict__["_SKLogisticRegression"] = ppi_module.LogisticRegression
        ppi_module.LogisticRegression = _RoundedStart


def helmert(m: int) -> np.ndarray:
    """Orthonormal contrasts (m, m-1): column k (0-based) is 1/sqrt((k+1)(k+2)) on the first
    k+1 entries and -(k+1)/sqrt((k+1)(k+2)) on entry k+1."""
    c = np.zeros((m, m - 1))
    for k in range(m - 1):
        s = np.sqrt((k + 1) * (k + 2))
        c[:k + 1, k] = 1.0 / s
        c[k + 1, k] = -(k + 1) / s
    return c


def simulate(rng: np.random.Generator, m: int, n_rows: int, n_gold: int, tie_share: float,
             judge_ties: bool) -> dict:
    """An arena: strengths theta, a judge that agrees with the human vote 70% of the time and
    otherwise favours the first half of the models (a model-dependent bias)."""
    theta = np.linspace(1.0, -1.0, m)
    a = rng.integers(0, m, n_rows)
    b = (a + rng.integers(1, m, n_rows)) % m
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    u = rng.random(n_rows)
    human = np.where(u < tie_share, "tie", np.where(rng.random(n_rows) < p, "a", "b"))
    favoured = np.where(a < m // 2, "a", np.where(b < m // 2, "b", "tie" if judge_ties else "a"))
    judge = np.where(rng.random(n_rows) < 0.7, human, favoured)
    if not judge_ties:
        judge = np.where(judge == "tie", np.where(rng.random(n_rows) < 0.5, "a", "b"), judge)
    gold = np.full(n_rows, None, dtype=object)
    labelled = rng.choice(n_rows, n_gold, replace=False)
    gold[labelled] = human[labelled]
    return {"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
            "judge": judge.tolist(), "gold": gold.tolist()}


def _design(rows: dict, m: int, parametrisation: str) -> tuple[np.ndarray, ...]:
    a = np.array([int(s[1:]) for s in rows["model_a"]])
    b = np.array([int(s[1:]) for s in rows["model_b"]])
    x = np.zeros((a.size, m))
    x[np.arange(a.size), a] += 1.0
    x[np.arange(a.size), b] -= 1.0
    x = x @ helmert(m) if parametrisation == "sum-zero" else x[:, 1:]   # reference: m0
    code = {"a": 1.0, "b": 0.0, "tie": 0.5}
    yhat = np.array([code[v] for v in rows["judge"]])
    gold = rows["gold"]
    lab = np.array([g is not None for g in gold])
    y = np.array([code[g] for g in gold if g is not None])
    return x[lab], y, yhat[lab], x[~lab], yhat[~lab]


def _se(ci: tuple[np.ndarray, np.ndarray]) -> list[float]:
    z = norm.ppf(0.5 + LEVEL / 2)
    return ((np.asarray(ci[1]) - np.asarray(ci[0])) / (2 * z)).tolist()


def _lam_at(x, y, yhat, xu, yhatu, point: np.ndarray) -> float:
    grads, grads_hat, grads_u, inv_h = _logistic_get_stats(point, x, y, yhat, xu, yhatu)
    return float(_calc_lam_glm(grads, grads_hat, grads_u, inv_h, clip=True))


def run_case(rows: dict, m: int, parametrisation: str) -> dict:
    x, y, yhat, xu, yhatu = _design(rows, m, parametrisation)
    alpha = 1.0 - LEVEL
    out: dict = {}
    for lam in (0.0, 0.4, 1.0):
        point = ppi_py.ppi_logistic_pointestimate(x, y, yhat, xu, yhatu, lam=lam)
        ci = ppi_py.ppi_logistic_ci(x, y, yhat, xu, yhatu, alpha=alpha, lam=lam)
        out[f"lam_{lam:g}"] = {"point": point.tolist(),
                               "ci_center": (0.5 * (ci[0] + ci[1])).tolist(), "se": _se(ci)}
    point1 = ppi_py.ppi_logistic_pointestimate(x, y, yhat, xu, yhatu, lam=1.0)
    lam1 = _lam_at(x, y, yhat, xu, yhatu, point1)
    point = ppi_py.ppi_logistic_pointestimate(x, y, yhat, xu, yhatu, lam=None)
    ci_lam1 = ppi_py.ppi_logistic_ci(x, y, yhat, xu, yhatu, alpha=alpha, lam=lam1)
    ci_none = ppi_py.ppi_logistic_ci(x, y, yhat, xu, yhatu, alpha=alpha, lam=None)
    lam2 = _lam_at(x, y, yhat, xu, yhatu, point)
    out["tuned"] = {
        "lam1": lam1, "point": point.tolist(), "se_at_lam1": _se(ci_lam1),
        "ci_center_at_lam1": (0.5 * (ci_lam1[0] + ci_lam1[1])).tolist(),
        "lam2": lam2, "ci_none_center": (0.5 * (ci_none[0] + ci_none[1])).tolist(),
        "ci_none_se": _se(ci_none),
    }
    return out


CASES = {
    # name: (models, rows, gold rows, human tie share, judge ties)
    "no_ties": (6, 1500, 200, 0.0, False),
    "half_ties": (5, 1200, 250, 0.2, True),
    "small": (4, 300, 40, 0.0, False),
}

NOTES = {
    "parametrisations": ("sum-zero: X = (e_a - e_b) @ C with C = helmert(m) (orthonormal "
                         "contrasts, written as 'contrasts'), beta = C' theta; reference: the "
                         "column of m0 dropped, beta_k = theta_k - theta_m0 (k = 1..m-1)."),
    "outcome": "Y = 1 if model_a won, 0 if model_b won, 1/2 for a tie (ties as half a win).",
    "tuned": ("ppi_logistic_pointestimate(lam=None) tunes lam1 at the lam = 1 estimate and "
              "returns the estimate at lam1 ('point', 'lam1'); ppi_logistic_ci(lam=None) tunes "
              "once more, lam2 at the lam1 estimate, and centres its interval at the lam2 "
              "estimate ('ci_none_*'). evaluq follows the point estimate (lam1); "
              "'se_at_lam1' is ppi_logistic_ci(lam=lam1)."),
    "se": "se = (upper - lower) / (2 z), z = norm.ppf(0.975) (statsmodels' _zconfint_generic).",
    "start": ("half_ties has gold ties (Y = 1/2), which scikit-learn's LogisticRegression "
              "(ppi_py's start) refuses: its start is fitted on floor(Y); the minimum does not "
              "depend on the start."),
}


def main(out_path: str) -> None:
    rng = np.random.default_rng(SEED)
    cases = {}
    for name, (m, n_rows, n_gold, tie_share, judge_ties) in CASES.items():
        rows = simulate(rng, m, n_rows, n_gold, tie_share, judge_ties)
        if tie_share > 0:
            _rounded_start()
        cases[name] = {"n_models": m, "rows": rows, "contrasts": helmert(m).tolist(),
                       "sum-zero": run_case(rows, m, "sum-zero"),
                       "reference": run_case(rows, m, "reference")}
    result = {"script": "benchmarks/anchors/run_ppi_bt.py",
              "versions": {"ppi-python": version("ppi-python"), "numpy": np.__version__,
                           "scikit-learn": version("scikit-learn"), "scipy": version("scipy")},
              "seed": SEED, "confidence_level": LEVEL, "notes": NOTES, "cases": cases}
    with open(out_path, "w") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])

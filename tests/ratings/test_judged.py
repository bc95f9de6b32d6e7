"""fit_judged_ratings (issue 33 item 3): PPI++ for Bradley-Terry / Davidson ratings.

Checked against ppi_py 0.2.3's PPI++ logistic regression (benchmarks/anchors/run_ppi_bt.py),
against an explicit per-row reference form (the objective written row by row, its scores and
Hessians by central differences, the sandwich and the tuned lambda by their formulas, clusters
by pandas' groupby), against fit_ratings on the gold votes (lambda = 0), and for invariances.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

import evaluq as eq
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.ratings import fit_judged_ratings, fit_ratings

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = ROOT / "benchmarks" / "anchors" / "ppi_bt_reference.json"
CODE = {"a": 0, "b": 1, "tie": 2}


def simulate(seed: int, m: int = 5, n: int = 1500, n_gold: int = 200, tie_share: float = 0.2,
             n_prompts: int = 0) -> pd.DataFrame:
    """Votes with a human (gold) verdict on ``n_gold`` random rows and a judge that agrees 70%
    of the time and otherwise favours the first half of the models."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(0.8, -0.8, m)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    human = np.where(rng.random(n) < tie_share, "tie", np.where(rng.random(n) < p, "a", "b"))
    favoured = np.where(a < m // 2, "a", np.where(b < m // 2, "b", "tie"))
    judge = np.where(rng.random(n) < 0.7, human, favoured)
    gold = np.full(n, None, dtype=object)
    labelled = rng.choice(n, n_gold, replace=False)
    gold[labelled] = human[labelled]
    votes = pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                          "judge": judge, "gold": gold})
    if n_prompts:
        votes["prompt"] = rng.integers(0, n_prompts, n)
    return votes


# --- ppi_py's numbers ---------------------------------------------------------------------------


def _anchor_cases():
    data = json.loads(ANCHOR.read_text())
    return [(name, par) for name in data["cases"] for par in ("sum-zero", "reference")]


@pytest.mark.parametrize(("name", "par"), _anchor_cases())
def test_equals_ppi_py_ppi_logistic(name, par):
    """Point estimates and standard errors equal ppi_py's ppi_logistic_pointestimate /
    ppi_logistic_ci for lambda 0, 0.4, 1 and tuned (ties as half a win), in both
    parametrisations. ppi_py's L-BFGS-B stops at a gradient of up to 2e-9 (its 'small' case,
    where evaluq's Newton fit reaches 1e-13): 1e-7 there, 1e-8 elsewhere."""
    data = json.loads(ANCHOR.read_text())
    case = data["cases"][name]
    votes = pd.DataFrame(case["rows"])
    contrasts = np.array(case["contrasts"])
    ref = None if par == "sum-zero" else "m0"
    tol = 1e-7 if name == "small" else 1e-8

    def beta(fit):
        theta, cov = fit.rating.values, fit.covariance.values
        if ref is None:
            return contrasts.T @ theta, np.sqrt(np.diag(contrasts.T @ cov @ contrasts))
        return theta[1:], np.sqrt(np.diag(cov)[1:])

    expected = case[par]
    n = sum(g is not None for g in case["rows"]["gold"])
    big_n = len(case["rows"]["gold"]) - n

    def check_se(se, ppi_se, lam):
        """evaluq's groups are divided by n and N (HC0, as fit_ratings), ppi_py's by n - 1 and
        N - 1: at lam = 0 the SEs differ by sqrt((n - 1) / n) exactly, otherwise by a factor
        between that of the smaller group and 1."""
        ppi_se = np.asarray(ppi_se)
        if lam == 0.0:
            np.testing.assert_allclose(se, ppi_se * np.sqrt((n - 1) / n), rtol=0, atol=tol)
            return
        low = np.sqrt((min(n, big_n) - 1) / min(n, big_n))
        assert np.all(se <= ppi_se + tol)
        assert np.all(se >= low * ppi_se - tol)

    for lam in (0.0, 0.4, 1.0):
        fit = fit_judged_ratings(votes, ties="half", lam=lam, scale="logit", reference=ref)
        point, se = beta(fit)
        np.testing.assert_allclose(point, expected[f"lam_{lam:g}"]["point"], rtol=0, atol=tol)
        check_se(se, expected[f"lam_{lam:g}"]["se"], lam)
    fit = fit_judged_ratings(votes, ties="half", scale="logit", reference=ref)
    tuned = expected["tuned"]
    point, se = beta(fit)
    assert fit.details["lam"] == pytest.approx(tuned["lam1"], abs=1e-9)
    np.testing.assert_allclose(point, tuned["point"], rtol=0, atol=tol)
    check_se(se, tuned["se_at_lam1"], tuned["lam1"])
    # ppi_logistic_ci(lam=None) tunes once more (lam2, at the lam1 estimate): close, not equal
    assert abs(tuned["lam2"] - tuned["lam1"]) < 0.05
    np.testing.assert_allclose(se, tuned["ci_none_se"], rtol=0.03)


# --- an explicit per-row reference form ----------------------------------------------------------


def _loglik(params, a, b, y, ties, m):
    """Per-row log-likelihood (rows,) with theta_0 = 0 (reference parametrisation)."""
    theta = np.concatenate([[0.0], params[:m - 1]])
    d = theta[a] - theta[b]
    if ties == "davidson":
        lam = params[m - 1]
        f = np.logaddexp(np.logaddexp(d / 2, -d / 2), lam)
        return np.where(y == 0, d / 2 - f, np.where(y == 1, -d / 2 - f, lam - f))
    yy = np.where(y == 0, 1.0, np.where(y == 1, 0.0, 0.5))
    ll = yy * d - np.logaddexp(0.0, d)
    return np.where(y == 2, 0.0, ll) if ties == "drop" else ll


def _scores(params, a, b, y, ties, m, h=1e-5):
    """Per-row gradients (rows, K) by central differences."""
    eye = np.eye(params.size) * h
    return np.stack([(_loglik(params + e, a, b, y, ties, m) - _loglik(params - e, a, b, y, ties, m))
                     / (2 * h) for e in eye], axis=1)


def _hessians(params, a, b, y, ties, m, h=1e-4):
    """Per-row Hessians of the negative log-likelihood (rows, K, K) by central differences."""
    eye = np.eye(params.size) * h
    return -np.stack([(_scores(params + e, a, b, y, ties, m)
                       - _scores(params - e, a, b, y, ties, m)) / (2 * h) for e in eye], axis=2)


class Reference:
    """The PPI++ estimator of a vote table written row by row (reference parametrisation)."""

    def __init__(self, votes, ties, cluster=None):
        models = np.array(sorted(set(votes.model_a) | set(votes.model_b)))
        self.m = models.size
        self.ties = ties
        self.a = np.searchsorted(models, votes.model_a.to_numpy())
        self.b = np.searchsorted(models, votes.model_b.to_numpy())
        self.lab = votes.gold.notna().to_numpy()
        self.judge = votes.judge.map(CODE).to_numpy()
        self.gold = votes.gold.map(CODE).fillna(-1).to_numpy().astype(int)
        self.groups = None if cluster is None else votes[cluster].to_numpy()
        self.n, self.big_n = int(self.lab.sum()), int((~self.lab).sum())

    def parts(self, params):
        """Labelled rows' gold and judge scores, unlabelled rows' judge scores."""
        lab, unl = self.lab, ~self.lab
        sy = _scores(params, self.a[lab], self.b[lab], self.gold[lab], self.ties, self.m)
        sh = _scores(params, self.a[lab], self.b[lab], self.judge[lab], self.ties, self.m)
        su = _scores(params, self.a[unl], self.b[unl], self.judge[unl], self.ties, self.m)
        return sy, sh, su

    def gradient(self, params, lam):
        sy, sh, su = self.parts(params)
        return lam * su.mean(axis=0) + (sy - lam * sh).mean(axis=0)

    def hessian(self, params):
        """Mean Hessian over all rows of the judge's votes plus the labelled gold-minus-judge
        difference."""
        h_all = _hessians(params, self.a, self.b, self.judge, self.ties, self.m).mean(axis=0)
        lab = self.lab
        h_gold = _hessians(params, self.a[lab], self.b[lab], self.gold[lab], self.ties, self.m)
        h_judge = _hessians(params, self.a[lab], self.b[lab], self.judge[lab], self.ties, self.m)
        h = h_all + (h_gold - h_judge).mean(axis=0)
        return 0.5 * (h + h.T)

    def influence(self, params, lam):
        """Per-row contributions to the objective's gradient, centred per group: a (labelled
        gold part) and b (the judge parts), rows in the table's order."""
        sy, sh, su = self.parts(params)
        a = np.zeros((self.lab.size, sy.shape[1]))
        b = np.zeros_like(a)
        a[self.lab] = (sy - sy.mean(axis=0)) / self.n
        b[self.lab] = (sh - sh.mean(axis=0)) / self.n
        b[~self.lab] = -(su - su.mean(axis=0)) / self.big_n
        return a, b

    def entering(self, lam):
        """The rows whose verdicts enter the objective (a tie's loss is 0 under "drop")."""
        if self.ties != "drop":
            return self.lab | (lam > 0)
        return (self.gold == 0) | (self.gold == 1) | ((lam > 0) & (self.judge != 2))

    def covariance(self, params, lam, factor=True):
        """H^-1 V H^-1: V of every group with ddof 0 (HC0); with clusters, statsmodels' CR1
        factor G / (G - 1) (N - 1) / (N - k) over the rows entering the objective."""
        hinv = np.linalg.inv(self.hessian(params))
        sy, sh, su = self.parts(params)
        if self.groups is None:
            meat = (np.cov((sy - lam * sh).T, ddof=0) / self.n
                    + lam ** 2 * np.cov(su.T, ddof=0) / self.big_n)
        else:
            a, b = self.influence(params, lam)
            per = pd.DataFrame(a - lam * b).groupby(self.groups).sum().to_numpy()
            used = self.entering(lam)
            g, rows, k = np.unique(self.groups[used]).size, used.sum(), params.size
            meat = (g / (g - 1) * (rows - 1) / (rows - k) if factor else 1.0) * per.T @ per
        return hinv @ meat @ hinv

    def tuned(self, params):
        """The lambda minimising the trace of the strengths' covariance (ppi_py's formula
        without clusters; the exact quadratic minimiser of the CR1 trace with clusters)."""
        hinv = np.linalg.inv(self.hessian(params))[:self.m - 1]
        sy, sh, su = self.parts(params)
        if self.groups is None:
            yc, hc = sy - sy.mean(axis=0), sh - sh.mean(axis=0)
            cyh = (yc.T @ hc + hc.T @ yc) / self.n
            pooled = np.cov(np.concatenate([sh, su]).T)
            lam = (np.trace(hinv @ cyh @ hinv.T)
                   / (2 * (1 + self.n / self.big_n) * np.trace(hinv @ pooled @ hinv.T)))
        else:
            a, b = self.influence(params, 0.0)
            a = pd.DataFrame(a).groupby(self.groups).sum().to_numpy()
            b = pd.DataFrame(b).groupby(self.groups).sum().to_numpy()
            lam = (np.trace(hinv @ (a.T @ b + b.T @ a) / 2 @ hinv.T)
                   / np.trace(hinv @ b.T @ b @ hinv.T))
        return float(np.clip(lam, 0.0, 1.0))


def _params(fit):
    """The reference-parametrisation parameters (theta_1.., [log nu]) of a logit fit."""
    theta = fit.rating.values
    extra = [np.log(float(fit.tie_parameter))] if fit.davidson else []
    return np.concatenate([theta[1:] - theta[0], extra])


def _param_cov(fit):
    k = fit._params.size
    return fit._param_cov[1:k, 1:k]


@pytest.mark.parametrize("ties", ["davidson", "half", "drop"])
@pytest.mark.parametrize("cluster", [None, "prompt"])
def test_equals_the_per_row_reference_form(ties, cluster):
    votes = simulate(3, n_prompts=80 if cluster else 0)
    ref = Reference(votes, ties, cluster)
    one = fit_judged_ratings(votes, ties=ties, lam=1.0, scale="logit", reference="m0",
                             cluster=cluster)
    fit = fit_judged_ratings(votes, ties=ties, scale="logit", reference="m0", cluster=cluster)
    lam = fit.details["lam"]
    assert 0.0 < lam < 1.0
    assert lam == pytest.approx(ref.tuned(_params(one)), abs=1e-7)
    params = _params(fit)
    assert np.abs(ref.gradient(params, lam)).max() < 1e-8       # a stationary point
    np.testing.assert_allclose(_param_cov(fit), ref.covariance(params, lam), rtol=1e-6,
                               atol=1e-8)
    gain = (np.trace(ref.covariance(params, 0.0, factor=False)[:4, :4])
            / np.trace(ref.covariance(params, lam, factor=False)[:4, :4]))
    assert fit.details["gain"] == pytest.approx(gain, rel=1e-6)
    assert fit.details["effective_labels"] == pytest.approx(200 * gain, rel=1e-6)


@pytest.mark.parametrize("ties", ["davidson", "half", "drop"])
@pytest.mark.parametrize("cluster", [None, "prompt"])
def test_lambda_zero_is_the_gold_only_fit(ties, cluster):
    """lam=0 is fit_ratings on the labelled rows' gold votes: the same estimate and the same
    covariance (HC0, or CR1 with statsmodels' factor over the gold votes' clusters; under
    "drop" over the decisive ones), checked against the sandwich written out with numpy."""
    votes = simulate(5, n_prompts=70 if cluster else 0)
    fit = fit_judged_ratings(votes, lam=0.0, ties=ties, cluster=cluster, scale="logit",
                             reference="m0")
    rows = votes[votes.gold.notna()]
    gold = fit_ratings(rows, winner="gold", ties=ties, cluster=cluster, scale="logit",
                       reference="m0")
    np.testing.assert_allclose(fit.rating.values, gold.rating.values, atol=1e-8)
    if ties == "davidson":
        np.testing.assert_allclose(float(fit.tie_parameter), float(gold.tie_parameter),
                                   atol=1e-10)
    np.testing.assert_allclose(fit.covariance.values, gold.covariance.values, rtol=1e-8,
                               atol=1e-14)
    assert fit.details["gain"] == pytest.approx(1.0)
    # independently: the per-row scores and Hessians, H^-1 (sum of cluster scores) H^-1
    if ties == "drop":
        rows = rows[rows.gold != "tie"]
    ref = Reference(rows.assign(judge=rows.gold), ties, cluster)
    params = _params(fit)
    sy = ref.parts(params)[0]
    h = _hessians(params, ref.a, ref.b, ref.gold, ties, ref.m).sum(axis=0)
    groups = np.arange(len(rows)) if cluster is None else rows[cluster].to_numpy()
    per = pd.DataFrame(sy).groupby(groups).sum().to_numpy()
    g, n, k = per.shape[0], len(rows), params.size
    factor = 1.0 if cluster is None else g / (g - 1) * (n - 1) / (n - k)
    hinv = np.linalg.inv(0.5 * (h + h.T))
    np.testing.assert_allclose(_param_cov(fit), factor * hinv @ per.T @ per @ hinv, rtol=2e-5)


def test_every_row_labelled_is_gold_only():
    votes = simulate(6, n=300, n_gold=300)
    fit = fit_judged_ratings(votes, ties="half")
    gold = fit_ratings(votes, winner="gold", ties="half")
    np.testing.assert_allclose(fit.rating.values, gold.rating.values, atol=1e-8)
    assert fit.details["lam"] == 0.0
    assert "gold only" in fit.details["notes"]


def test_judge_equal_to_gold_takes_lambda_one_and_gains():
    """A perfect judge: lambda near 1, the gain near (n + N) / n."""
    votes = simulate(7, n=2000, n_gold=200)
    human = simulate(7, n=2000, n_gold=2000)     # the same draws, every row labelled
    assert (human.gold[votes.gold.notna()] == votes.gold[votes.gold.notna()]).all()
    votes["judge"] = human["gold"].to_numpy()
    fit = fit_judged_ratings(votes, ties="half")
    assert fit.details["lam"] > 0.85
    assert fit.details["gain"] > 6.0


def test_row_order_and_sides_do_not_matter():
    votes = simulate(8, n_prompts=50)
    fit = fit_judged_ratings(votes, cluster="prompt")
    swapped = votes.sample(frac=1.0, random_state=1).reset_index(drop=True)
    flip = np.arange(len(swapped)) % 2 == 0
    swap = {"a": "b", "b": "a", "tie": "tie"}
    swapped.loc[flip, ["model_a", "model_b"]] = swapped.loc[flip, ["model_b", "model_a"]].to_numpy()
    swapped.loc[flip, "judge"] = swapped.loc[flip, "judge"].map(swap)
    swapped.loc[flip, "gold"] = swapped.loc[flip, "gold"].map(swap)
    other = fit_judged_ratings(swapped, cluster="prompt")
    np.testing.assert_allclose(other.rating.values, fit.rating.values, atol=1e-9)
    np.testing.assert_allclose(other.covariance.values, fit.covariance.values, atol=1e-9)
    assert other.details["lam"] == pytest.approx(fit.details["lam"], abs=1e-12)


def test_singleton_clusters_are_close_to_the_iid_sandwich():
    votes = simulate(9)
    votes["row"] = np.arange(len(votes))
    iid = fit_judged_ratings(votes, lam=0.5)
    single = fit_judged_ratings(votes, lam=0.5, cluster="row")
    np.testing.assert_allclose(single.se.values, iid.se.values, rtol=5e-3)


def test_result_works_with_ranks_and_tables():
    votes = simulate(10, n_prompts=40)
    fit = fit_judged_ratings(votes, cluster="prompt", n_resamples=300)
    ranks = eq.rank_distribution(fit.draws, sample_dims="resample")
    np.testing.assert_allclose(ranks.probability.sum("rank").values, 1.0)
    assert ranks.observed_rank.values.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    table = fit.to_dataframe()
    assert list(table.columns[-4:]) == ["n_votes", "n_labelled", "judge_wins", "gold_wins"]
    assert table["n_labelled"].sum() == 2 * 200
    ci = fit.win_probability_interval()
    assert ((ci >= 0) & (ci <= 1)).sum() == 5 * 4 * 2
    z = st.norm.ppf(0.975)
    np.testing.assert_allclose(fit.ci.sel(ci_bound="upper").values,
                               fit.rating.values + z * fit.se.values)
    assert "PPI++" in fit.details["covariance_kind"]
    assert fit.details["cluster"] == "prompt"
    assert fit.details["n_clusters"] == 40
    assert "RatingsResult" in repr(fit)


def test_weak_judge_is_noted():
    votes = simulate(11)
    rng = np.random.default_rng(0)
    votes["judge"] = rng.choice(["a", "b", "tie"], len(votes))
    fit = fit_judged_ratings(votes)
    assert fit.details["gain"] < 1.25
    assert "weak judge" in fit.details["notes"]


def test_few_labels_are_noted():
    few = fit_judged_ratings(simulate(21, n_gold=50))
    assert "few gold votes (10.0 per model)" in few.details["notes"]
    assert "few gold votes" not in fit_judged_ratings(simulate(21)).details["notes"]


def test_gold_that_misses_a_model_has_no_gain():
    votes = simulate(12)
    votes.loc[(votes.model_a == "m4") | (votes.model_b == "m4"), "gold"] = None
    fit = fit_judged_ratings(votes, lam=0.5)
    assert np.isnan(fit.details["gain"])
    assert "do not link every model" in fit.details["notes"]


@pytest.mark.parametrize("interval", ["sandwich", "bootstrap"])
def test_a_model_without_gold_votes_has_no_rating(interval):
    """A model added after the human labelling round: PPI++ cannot correct the judge's votes
    on it, so its rating, SE and interval are NaN with the reason (as judged_means does),
    where before it kept the judge's biased rating with the narrowest interval. The other
    models are the same estimator's, centred over the models with gold votes (checked
    against the fit anchored at m0, which is unchanged); no draws, rank or win probability
    for the model; it cannot be the reference."""
    votes = simulate(12)
    votes.loc[(votes.model_a == "m4") | (votes.model_b == "m4"), "gold"] = None
    kw = {"lam": 0.5, "scale": "logit", "interval": interval, "n_resamples": 300}
    fit = fit_judged_ratings(votes, **kw)
    ref = fit_judged_ratings(votes, reference="m0", **kw)
    assert np.isnan(fit.rating.sel(model="m4"))
    assert np.isnan(fit.se.sel(model="m4"))
    assert np.isnan(fit.ci.sel(model="m4")).all()
    for array in (fit.rating, fit.se, ref.rating):
        assert "m4'] have no gold vote: PPI++ cannot correct" in array.attrs["nan_reason"]
    assert "m4'] have no gold vote" in fit.details["notes"]
    assert fit.details["models_without_gold"] == ["m4"]
    assert fit.details["identifiability"].startswith("sum-zero over the models with gold votes")
    rated = ref.rating.drop_sel(model="m4").values
    np.testing.assert_allclose(fit.rating.drop_sel(model="m4").values, rated - rated.mean(),
                               atol=1e-9)
    assert list(fit.draws["model"].values) == ["m0", "m1", "m2", "m3"]
    np.testing.assert_allclose(fit.draws.sum("model").values, 0.0, atol=1e-9)
    assert np.isfinite(fit.se.drop_sel(model="m4").values).all()
    assert np.isnan(fit.win_probability.sel(model="m4")).all()
    assert np.isnan(fit.win_probability_interval().sel(model="m4")).all()
    assert np.isfinite(fit.win_probability_interval().sel(model="m0", model_b="m1")).all()
    table = fit.to_dataframe()
    assert table.index[-1] == "m4"
    assert pd.isna(table.loc["m4", "rank"])
    assert list(table["rank"].iloc[:4]) == [1, 2, 3, 4]
    assert "rank" in table.attrs["nan_reasons"]
    eq.leaderboard(fit.draws, observed=fit.rating.sel(model=fit.draws["model"]))
    with pytest.raises(ValueError, match="`reference` 'm4' has no gold vote"):
        fit_judged_ratings(votes, reference="m4", **kw)


# --- bad input ---------------------------------------------------------------------------------


def test_gold_without_a_judge_vote_is_refused():
    votes = simulate(13)
    row = votes.index[votes.gold.notna()][0]
    votes.loc[row, "judge"] = None
    with pytest.raises(ValueError, match="gold verdict but no judge vote"):
        fit_judged_ratings(votes)


def test_missing_judge_verdict_is_refused():
    votes = simulate(13)
    row = votes.index[votes.gold.isna()][0]
    votes.loc[row, "judge"] = np.nan
    with pytest.raises(ValueError, match="`judge` column 'judge' has 1 missing verdict"):
        fit_judged_ratings(votes)


@pytest.mark.parametrize(("n_gold", "match"), [(0, "no gold verdict"), (1, "single gold")])
def test_too_few_labels_are_refused(n_gold, match):
    votes = simulate(14, n_gold=max(n_gold, 1))
    if n_gold == 0:
        votes["gold"] = None
    with pytest.raises(ValueError, match=match):
        fit_judged_ratings(votes)


@pytest.mark.parametrize("column", ["judge", "gold"])
def test_unknown_labels_name_their_column(column):
    votes = simulate(15)
    row = votes.index[votes.gold.notna()][0]
    votes.loc[row, column] = "left"
    with pytest.raises(ValueError, match=f"`{column}` column '{column}' holds label"):
        fit_judged_ratings(votes)


def test_outcomes_map_both_columns():
    votes = simulate(16)
    names = {"a": "left", "b": "right", "tie": "draw"}
    mapped = votes.assign(judge=votes.judge.map(names), gold=votes.gold.map(names))
    outcomes = {"left": "model_a", "right": "model_b", "draw": "tie"}
    fit = fit_judged_ratings(mapped, outcomes=outcomes)
    np.testing.assert_allclose(fit.rating.values, fit_judged_ratings(votes).rating.values)


def test_other_refusals():
    votes = simulate(17)
    with pytest.raises(ValueError, match="same column"):
        fit_judged_ratings(votes, gold="judge")
    with pytest.raises(ValueError, match=r"`lam` \(PPI\+\+'s lambda\) must be in \[0, 1\]"):
        fit_judged_ratings(votes, lam=1.5)
    with pytest.raises(TypeError, match="`lam` must be a real number"):
        fit_judged_ratings(votes, lam="tuned")
    with pytest.raises(CubeError, match="given as `gold`"):
        fit_judged_ratings(votes, gold="human")
    with pytest.raises(ValueError, match="`reference` must be one of the models"):
        fit_judged_ratings(votes, reference="m9")
    with pytest.raises(ValueError, match="`ties` must be one of"):
        fit_judged_ratings(votes, ties="newman")
    no_ties = votes[(votes.judge != "tie") & (votes.gold != "tie")]
    with pytest.raises(ValueError, match="hold no tie"):
        fit_judged_ratings(no_ties, ties="davidson")
    self_vote = votes.copy()
    self_vote.loc[0, "model_b"] = self_vote.loc[0, "model_a"]
    with pytest.raises(ValueError, match="against itself"):
        fit_judged_ratings(self_vote)


def test_all_labelled_with_lambda_is_refused():
    votes = simulate(18, n=300, n_gold=300)
    with pytest.raises(ValueError, match="at least 2 needed"):
        fit_judged_ratings(votes, lam=0.5)


def test_gold_only_without_a_gold_link_is_refused():
    votes = simulate(19)
    votes.loc[(votes.model_a == "m4") | (votes.model_b == "m4"), "gold"] = None
    with pytest.raises(ValueError, match="`gold` votes do not link every model"):
        fit_judged_ratings(votes, lam=0.0)


def test_an_unbounded_objective_is_refused():
    """m3 never wins or ties: no finite rating."""
    votes = simulate(20, tie_share=0.0)
    loses = (votes.model_a == "m3")
    votes.loc[loses, ["judge"]] = "b"
    votes.loc[loses & votes.gold.notna(), "gold"] = "b"
    wins_b = votes.model_b == "m3"
    votes.loc[wins_b, "judge"] = "a"
    votes.loc[wins_b & votes.gold.notna(), "gold"] = "a"
    with pytest.raises(ValueError, match="no finite minimum"):
        fit_judged_ratings(votes, ties="half")


@pytest.mark.parametrize(("case", "what"), [
    ("all_a", "Davidson's tie parameter runs off .the gold votes hold 0 tie.s. of 200"),
    ("all_ties", "the logit strengths run off"),
    ("two", "with these 2 gold votes: the logit strengths run off"),
])
def test_degenerate_gold_votes_are_refused_with_remedies_not_a_linalg_error(case, what):
    """Every human vote for the left answer, every human vote a tie, or only two human votes:
    the PPI++ objective has no finite minimum (before: numpy's LinAlgError 'Singular matrix'
    from the Newton step for two of them, with no argument and no remedy). Refused, saying
    where (the lambda = 1 fit that tunes lambda), what runs off and what to do; the remedy
    offered for the one-sided panel (ties='half') gives a finite fit."""
    votes = simulate(3)
    lab = votes.gold.notna()
    if case == "all_a":
        votes.loc[lab, "gold"] = "a"
    elif case == "all_ties":
        votes.loc[lab, "gold"] = "tie"
    else:
        votes.loc[votes.index[lab][2:], "gold"] = None
    with pytest.raises(ValueError, match=r"`votes`: the judge-assisted \(PPI\+\+\) objective at "
                       r"lambda = 1, the fit that tunes lambda .* has no finite minimum") as info:
        fit_judged_ratings(votes)
    assert not isinstance(info.value, np.linalg.LinAlgError)
    message = str(info.value)
    assert re.search(what, message), message
    assert ("collect more gold votes, pass a `lam` below 1 (e.g. `lam=0.5`; `lam=0` is the gold "
            "votes alone)") in message
    if case == "all_a":
        assert message.endswith("or use ties='half' (or 'drop')")
        fit = fit_judged_ratings(votes, ties="half")
        assert np.isfinite(fit.se.values).all()


def test_gold_only_without_a_finite_minimum_offers_no_smaller_lambda():
    """At lam=0 (the gold votes alone) 'pass a smaller lam' is impossible: not offered."""
    votes = simulate(3, tie_share=0.0)
    votes["gold"] = None
    forward = votes[votes.model_a < votes.model_b]           # one vote of each pair, the
    first = forward.groupby(["model_a", "model_b"]).head(1).index   # lower model always wins
    votes.loc[first, "gold"] = "a"
    with pytest.raises(ValueError, match="no finite minimum") as info:
        fit_judged_ratings(votes, lam=0.0, ties="half")
    assert "`lam`=0 " in str(info.value)
    assert str(info.value).endswith("cause this: collect more gold votes, or use ties='half'")


# --- the bootstrap -----------------------------------------------------------------------------


@pytest.mark.parametrize("cluster", [None, "prompt"])
def test_bootstrap_agrees_with_the_sandwich(cluster):
    """The vote bootstrap (labelled and unlabelled rows resampled apart) and the cluster
    bootstrap estimate the sandwich's SEs (within 10% at 2,000 resamples), centred at the
    estimate, with percentile intervals."""
    votes = simulate(30, n=3000, n_gold=400, n_prompts=100)
    sandwich = fit_judged_ratings(votes, cluster=cluster)
    boot = fit_judged_ratings(votes, cluster=cluster, interval="bootstrap", n_resamples=2000,
                              rng=1)
    assert boot.details["lam"] == sandwich.details["lam"]
    np.testing.assert_allclose(boot.rating.values, sandwich.rating.values)
    np.testing.assert_allclose(boot.se.values, sandwich.se.values, rtol=0.1)
    assert float(boot.tie_se) == pytest.approx(float(sandwich.tie_se), rel=0.1)
    np.testing.assert_allclose(boot.draws.mean("resample").values, boot.rating.values,
                               atol=0.2 * sandwich.se.values.min())
    assert boot.ci.attrs["ci_kind"] == "percentile"
    assert "bootstrap" in boot.details["covariance_kind"]
    again = fit_judged_ratings(votes, cluster=cluster, interval="bootstrap", n_resamples=50,
                               rng=2)
    same = fit_judged_ratings(votes, cluster=cluster, interval="bootstrap", n_resamples=50,
                              rng=2)
    np.testing.assert_array_equal(again.draws.values, same.draws.values)


def test_vote_bootstrap_keeps_both_group_sizes():
    """Every vote-bootstrap resample has n labelled and N unlabelled rows: its objective
    counts sum to n + N per pair weight, and lambda = 0 leaves only the n gold votes."""
    from evaluq.ratings._judged import read_judged_votes, resampled_objective_counts

    data = read_judged_votes(simulate(31), model_a="model_a", model_b="model_b",
                             judge="judge", gold="gold", outcomes=None, cluster=None)
    rng = np.random.default_rng(0)
    counts = resampled_objective_counts(data, 0.6, "half", 20, rng)
    np.testing.assert_allclose(counts.sum(axis=(1, 2)), 1500.0)
    gold_only = resampled_objective_counts(data, 0.0, "half", 20, rng)
    np.testing.assert_allclose(gold_only.sum(axis=(1, 2)), 1500.0)
    assert (gold_only >= 0).all()


def test_a_cluster_bootstrap_without_labels_is_refused():
    votes = simulate(32, m=3, n=300, n_gold=12, n_prompts=4)
    votes["prompt"] = np.where(votes.gold.notna(), 0, 1 + np.arange(300) % 3)
    with pytest.warns(EvaluqWarning, match="`cluster` has 4 clusters for 2 free parameters"), \
            pytest.raises(ValueError, match="`interval`='bootstrap'"):
        fit_judged_ratings(votes, cluster="prompt", interval="bootstrap", ties="half",
                           n_resamples=200, lam=0.5)


@pytest.mark.parametrize("interval", ["sandwich", "bootstrap"])
def test_clusters_too_few_for_the_covariance_are_refused(interval):
    """4 prompts cannot identify the covariance of 5 models' ratings (4 free parameters): the
    CR1 meat has rank at most 3, so some rating difference would get variance 0 (before:
    silently near-zero SEs). Refused, naming `cluster`, the counts and the remedy."""
    votes = simulate(32, n=300, n_gold=60, n_prompts=4)
    with pytest.raises(ValueError, match=r"`cluster` has 4 clusters, too few for the "
                       r"covariance of the 4 free parameters of the judge-assisted ratings.*"
                       r"Cluster by a finer unit"):
        fit_judged_ratings(votes, cluster="prompt", interval=interval, ties="half")


def test_few_clusters_warn_and_every_direction_is_at_least_the_iid_one():
    """10 prompts for 4 free parameters are few: a warning, and the covariance is at least
    both the plain CR1 PPI++ sandwich and the independent-votes one in every direction (their
    generalised eigenvalues), equal to the larger along each."""
    votes = simulate(5, n=1500, n_gold=300, n_prompts=10)
    kw = {"ties": "half", "lam": 0.5, "scale": "logit", "reference": "m0"}
    iid = fit_judged_ratings(votes, **kw)
    with pytest.warns(EvaluqWarning, match="`cluster` has 10 clusters for 4 free parameters"):
        fit = fit_judged_ratings(votes, cluster="prompt", **kw)
    plain = Reference(votes, "half", "prompt").covariance(_params(fit), 0.5)
    floor, got = _param_cov(iid), _param_cov(fit)
    ratios = np.sort(np.linalg.eigvals(np.linalg.solve(floor, plain)).real)
    assert ratios.min() < 1.0 < ratios.max()                 # the floor binds somewhere
    np.testing.assert_allclose(np.sort(np.linalg.eigvals(np.linalg.solve(floor, got)).real),
                               np.maximum(ratios, 1.0), rtol=1e-6)
    assert "floored at the independent-votes one" in fit.details["covariance_kind"]


# --- gold votes that are all ties ------------------------------------------------------------


def _all_gold_ties(seed=0, n=400):
    rng = np.random.default_rng(seed)
    models = np.array(["m0", "m1", "m2", "m3"])
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    return pd.DataFrame({"model_a": models[a], "model_b": models[b],
                         "judge": rng.choice(["a", "b", "tie"], n),
                         "gold": np.where(rng.random(n) < 0.3, "tie", None),
                         "prompt": rng.integers(0, 80, n)})


@pytest.mark.parametrize("cluster", [None, "prompt"])
def test_gold_votes_all_ties_take_the_model_based_variance(cluster):
    """Every gold vote a tie, ties='half': every gold score is 0 at the gold-only estimate, so
    the PPI++ sandwich gave lam=0 a ZeroDivisionError and the tuned lambda (about 0.1) SEs of
    3 Elo from the judge's part alone. The gold part now takes its model-based variance (the
    inverse information, a binomial at p = 1/2 per gold vote): lam=0 is the Fisher-information
    covariance of the gold votes; at the tuned lambda the sandwich with V_yy = H_gold / n,
    written out from the per-row scores and Hessians."""
    votes = _all_gold_ties()
    with pytest.warns(EvaluqWarning, match=r"gold votes' scores are all 0 at the estimate in 3 "
                                           r"direction.*model-based variance"):
        zero = fit_judged_ratings(votes, ties="half", lam=0.0, scale="logit", cluster=cluster)
    gold = votes[votes.gold.notna()]
    x = np.zeros((len(gold), 4))
    x[np.arange(len(gold)), gold.model_a.map(lambda s: int(s[1])).to_numpy()] += 1.0
    x[np.arange(len(gold)), gold.model_b.map(lambda s: int(s[1])).to_numpy()] -= 1.0
    np.testing.assert_allclose(zero.covariance.values, np.linalg.pinv(0.25 * x.T @ x),
                               rtol=1e-8, atol=1e-14)
    with pytest.warns(EvaluqWarning, match="gold votes' scores are all 0"):
        fit = fit_judged_ratings(votes, ties="half", scale="logit", reference="m0",
                                 cluster=cluster)
    lam = fit.details["lam"]
    assert 0.0 < lam < 0.3
    np.testing.assert_allclose(_param_cov(fit), _gold_tie_covariance(votes, fit, cluster),
                               rtol=2e-5)
    # differences to m0 in logits (gold-only's about 0.3; before, about 0.025)
    assert fit.se.values[1:].min() > 0.25
    assert "model-based" in fit.details["covariance_kind"]


def _gold_tie_covariance(votes, fit, cluster):
    """The sandwich H^-1 (V_yy + factor (-lam (V_yh + V_hy) + lam^2 V_hh)) H^-1 with V_yy
    the gold votes' information H_gold / n (the model-based variance where every gold score
    is 0), written out from the per-row scores and Hessians of :class:`Reference`."""
    lam = fit.details["lam"]
    ref = Reference(votes, "half", cluster)
    params = _params(fit)
    hinv = np.linalg.inv(ref.hessian(params))
    lab = ref.lab
    info = _hessians(params, ref.a[lab], ref.b[lab], ref.gold[lab], "half",
                     ref.m).mean(axis=0) / ref.n
    if cluster is None:
        sy, sh, su = ref.parts(params)
        yc, hc, uc = sy - sy.mean(0), sh - sh.mean(0), su - su.mean(0)
        v_yh = yc.T @ hc / ref.n**2
        v_hh = hc.T @ hc / ref.n**2 + uc.T @ uc / ref.big_n**2
        factor = 1.0
    else:
        a, b = ref.influence(params, lam)
        a = pd.DataFrame(a).groupby(ref.groups).sum().to_numpy()
        b = pd.DataFrame(b).groupby(ref.groups).sum().to_numpy()
        v_yh, v_hh = a.T @ b, b.T @ b
        g, rows = np.unique(ref.groups).size, len(votes)
        factor = g / (g - 1) * (rows - 1) / (rows - 3)
    meat = info + factor * (-lam * (v_yh + v_yh.T) + lam**2 * v_hh)
    return hinv @ meat @ hinv


def _gold_on(votes, pairs):
    pair = {frozenset(p) for p in pairs}
    linked = [frozenset(p) in pair for p in zip(votes.model_a, votes.model_b, strict=True)]
    return votes.assign(gold=votes.gold.where(linked, None))


@pytest.mark.parametrize("cluster", [None, "prompt"])
def test_gold_votes_all_ties_in_unlinked_groups_take_the_model_based_variance(cluster):
    """Gold votes on m0-m1 and on m2-m3 only (two groups they do not link), every one a tie,
    ties='half': the correction was skipped whenever the gold votes did not link every model,
    so m1 - m0 had the judge's part alone (SE about 0.09 logits). It now applies within each
    group the gold votes link (at each group's gold-only estimate): V_yy is the gold votes'
    information H_gold / n (0 between the groups, where no gold vote informs), written out
    from the per-row scores and Hessians."""
    votes = _gold_on(_all_gold_ties(2), [("m0", "m1"), ("m2", "m3")])
    with pytest.warns(EvaluqWarning, match=r"gold votes' scores are all 0 at the estimate in 2 "
                                           r"direction.*model-based variance"):
        fit = fit_judged_ratings(votes, ties="half", scale="logit", reference="m0",
                                 cluster=cluster)
    lam = fit.details["lam"]
    assert 0.0 < lam < 1.0
    assert "do not link every model" in fit.details["notes"]
    np.testing.assert_allclose(_param_cov(fit), _gold_tie_covariance(votes, fit, cluster),
                               rtol=2e-5)
    assert fit.se.values[1] > 0.3
    assert "model-based" in fit.details["covariance_kind"]


def test_gold_votes_all_ties_beside_a_model_without_gold_take_the_model_based_variance():
    """m3 has no gold vote, the others' gold votes are all ties: the correction applies to
    the models the gold votes link (SEs of the differences to m0 about 0.09 logits before,
    the judge's part alone; gold-only's about 0.4)."""
    votes = _gold_on(_all_gold_ties(2), [("m0", "m1"), ("m0", "m2"), ("m1", "m2")])
    with pytest.warns(EvaluqWarning, match=r"gold votes' scores are all 0 at the estimate in 2 "
                                           r"direction"):
        fit = fit_judged_ratings(votes, ties="half", scale="logit", reference="m0")
    assert fit.se.values[1:3].min() > 0.3
    assert np.isnan(fit.se.values[3])


def test_gold_votes_all_ties_bootstrap_is_not_zero():
    votes = _all_gold_ties(1)
    with pytest.warns(EvaluqWarning, match="gold votes' scores are all 0"):
        sandwich = fit_judged_ratings(votes, ties="half", lam=0.0)
    with pytest.warns(EvaluqWarning, match="gold votes' scores are all 0"):
        boot = fit_judged_ratings(votes, ties="half", lam=0.0, interval="bootstrap",
                                  n_resamples=4000)
    np.testing.assert_allclose(boot.se.values, sandwich.se.values, rtol=0.05)

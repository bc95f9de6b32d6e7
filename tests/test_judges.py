"""evaluq.judges: ppi_mean, judged_means, the transport check and label_budget (issue 32).

Checked against ppi_py 0.2.3's numbers (``benchmarks/anchors/ppi_reference.json``, written
by ``benchmarks/anchors/run_ppi.py`` in ppi_py's own env), closed forms and simulation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluq.errors import CubeError, EvaluqWarning
from evaluq.judges import TransportWarning, judged_means, label_budget, ppi_mean
from evaluq.judges._kernels import chain_rule_draws, chain_rule_moments, rogan_gladen
from evaluq.ratings import fit_judged_ratings

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
    shared = 2 * (theta * se * (1 - se) + (1 - theta) * sp * (1 - sp)) / 60
    var = (p * (1 - p) / 60 + theta**2 * se * (1 - se) / 5
           + (1 - theta) ** 2 * sp * (1 - sp) / 5 - shared) / (se + sp - 1) ** 2
    assert res.estimate == pytest.approx(theta)
    assert res.se == pytest.approx(np.sqrt(var))


def test_rogan_gladen_with_a_judge_that_agreed_with_every_label() -> None:
    """Sensitivity and specificity both estimated at 1 from 12 positives and 8 negatives: the
    plug-in delta method gave them variance 0 (the interval of the judge's rate alone, as if
    the judge were known to be perfect). Their binomial spread is now taken at Jeffreys'
    centre (k + 1/2) / (n + 1), here by the written formula; the estimate is unchanged.
    Simulated (600 judged, 20 labelled, prevalence 0.7, a judge right 95% of the time): where
    the judge agreed with all 20 labels the 95% interval covered 0.83 before, now at least
    0.95; over all data sets at least 0.95 - 3 SE."""
    gold = np.r_[np.ones(12), np.zeros(8)]
    unl = np.r_[np.ones(400), np.zeros(180)]
    res = ppi_mean(gold, gold.copy(), unl, method="rogan-gladen")
    p, n_all = 412 / 600, 600
    a1, a0 = 12.5 / 13, 8.5 / 9
    v1, v0 = a1 * (1 - a1), a0 * (1 - a0)
    var = (p * (1 - p) / n_all + p**2 * v1 / 12 + (1 - p) ** 2 * v0 / 8
           - 2 * (p * v1 + (1 - p) * v0) / n_all)
    assert res.estimate == pytest.approx(p, abs=1e-15)
    assert res.se == pytest.approx(np.sqrt(var), rel=1e-12)
    assert res.se > 2 * np.sqrt(p * (1 - p) / n_all)
    rng = np.random.default_rng(20)
    sets, n_judged, n, prev = 6000, 600, 20, 0.7
    y = rng.random((sets, n_judged)) < prev
    f = np.where(rng.random((sets, n_judged)) < 0.95, y, ~y).astype(float)
    pos = y[:, :n]
    n_pos, n_neg = pos.sum(axis=1), (~pos).sum(axis=1)
    tp, tn = (f[:, :n] * pos).sum(axis=1), ((1 - f[:, :n]) * ~pos).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        est, v = rogan_gladen(f.mean(axis=1), np.full(sets, float(n_judged)), tp, n_pos, tn,
                              n_neg)
    hit = np.abs(est - prev) <= stats.norm.ppf(0.975) * np.sqrt(v)
    ok = ~np.isnan(est)
    agreed = ok & (tp == n_pos) & (tn == n_neg)
    assert agreed.sum() > 1500
    assert hit[agreed].mean() >= 0.95
    assert hit[ok].mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / ok.sum())


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
    assert ppi_mean(gold, np.array([1.0, 0, 1, 1]),
                    np.array([2.0, 1, 0, 2])).method == "chain-rule"


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


@pytest.mark.parametrize("lam", [-0.5, -1e-9, 1.0 + 1e-9, 1.5, 3.0])
def test_lam_outside_zero_one_is_refused(lam: float) -> None:
    """PPI++ tunes lambda within [0, 1] (ppi_py clips it there): ppi_mean, judged_means and
    fit_judged_ratings refuse a lambda outside, naming `lam` and the remedy (they returned an
    estimate at lambda 1.5 before); the bounds themselves are the gold-only mean and PPI."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=60)
    f, fu = y + rng.normal(size=60), rng.normal(size=400)
    with pytest.raises(ValueError, match=r"`lam` \(PPI\+\+'s lambda\) must be in \[0, 1\].*"
                                         r"`lam=None` to tune it"):
        ppi_mean(y, f, fu, lam=lam)
    with pytest.raises(ValueError, match=r"`lam` \(PPI\+\+'s lambda\) must be in \[0, 1\]"):
        judged_means(_table(np.random.default_rng(7), MODELS), lam=lam)
    votes = pd.DataFrame({"model_a": ["x", "y", "x", "y"], "model_b": ["y", "x", "y", "x"],
                          "judge": ["a", "a", "b", "a"], "gold": ["a", "b", None, None]})
    with pytest.raises(ValueError, match=r"`lam` \(PPI\+\+'s lambda\) must be in \[0, 1\]"):
        fit_judged_ratings(votes, lam=lam)


def test_lam_at_the_bounds_is_gold_only_and_ppi() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=60)
    f, fu = y + rng.normal(size=60), rng.normal(size=400)
    zero, one = ppi_mean(y, f, fu, lam=0), ppi_mean(y, f, fu, lam=1)
    assert zero.estimate == pytest.approx(y.mean(), abs=1e-14)
    assert zero.se == pytest.approx(np.std(y) / np.sqrt(60), rel=1e-12)
    assert one.estimate == pytest.approx(fu.mean() + np.mean(y - f), abs=1e-14)


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


# --- judged_means ------------------------------------------------------------------------------


def _table(rng: np.random.Generator, models: dict[str, tuple[float, float]], n_items: int = 300,
           n_labelled: int = 60, lenient: str | None = None) -> pd.DataFrame:
    """Models graded on the same items, the first ``n_labelled`` labelled; per model (gold
    rate, judge accuracy); ``lenient`` a model whose wrong answers the judge passes more."""
    rows = []
    latent = rng.normal(size=n_items)
    for name, (p, acc) in models.items():
        gold = (latent * 0.8 + rng.normal(size=n_items) < stats.norm.ppf(p) * 1.28
                ).astype(float)
        judge = np.where(rng.random(n_items) < acc, gold, 1 - gold)
        if name == lenient:
            judge = np.where((gold == 0) & (rng.random(n_items) < 0.6), 1.0, judge)
        rows.append(pd.DataFrame({"model": name, "item": np.arange(n_items), "judge": judge,
                                  "gold": np.where(np.arange(n_items) < n_labelled, gold,
                                                   np.nan)}))
    return pd.concat(rows, ignore_index=True)


MODELS = {"a": (0.5, 0.8), "b": (0.6, 0.85), "c": (0.7, 0.75)}


@pytest.mark.parametrize("method", ["classical", "ppi", "ppi++", "chain-rule", "rogan-gladen"])
def test_judged_means_per_model_equals_ppi_mean(method: str) -> None:
    df = _table(np.random.default_rng(0), MODELS)
    res = judged_means(df, method=method, transport_alpha=None)
    for name in MODELS:
        d = df[df["model"] == name]
        lab = d["gold"].notna().to_numpy()
        one = ppi_mean(d["gold"][lab], d["judge"][lab], d["judge"][~lab], method=method)
        assert float(res.estimate.sel(model=name)) == pytest.approx(one.estimate, abs=1e-12)
        assert float(res.se.sel(model=name)) == pytest.approx(one.se, abs=1e-12)
        assert float(res.per_model["gain"].sel(model=name)) == pytest.approx(one.gain, rel=1e-9)
        if method != "chain-rule":
            np.testing.assert_allclose(res.confidence_interval().sel(model=name).values,
                                       one.confidence_interval().values, atol=1e-12)


def test_paired_difference_se_closed_form() -> None:
    """Same items, same labelled subset: var(theta_a - theta_b) of PPI++ written out,
    var0(lam_a fa_u - lam_b fb_u)/N + var0(r_a - r_b)/n (stacked influence functions)."""
    df = _table(np.random.default_rng(1), MODELS)
    res = judged_means(df, method="ppi++", transport_alpha=None)
    lam = res.per_model["lam"]
    a, b = (df[df["model"] == m].sort_values("item") for m in ("a", "b"))
    lab = a["gold"].notna().to_numpy()
    la, lb = float(lam.sel(model="a")), float(lam.sel(model="b"))
    imputed = la * a["judge"].to_numpy()[~lab] - lb * b["judge"].to_numpy()[~lab]
    rect = ((a["gold"] - la * a["judge"]).to_numpy()[lab]
            - (b["gold"] - lb * b["judge"]).to_numpy()[lab])
    se = np.sqrt(imputed.var() / (~lab).sum() + rect.var() / lab.sum())
    assert float(res.differences["se_difference"].sel(model="a", model_b="b")) == (
        pytest.approx(se, rel=1e-12))
    assert int(res.differences["n_shared"].sel(model="a", model_b="b")) == 300


def test_cluster_robust_by_hand() -> None:
    """CR1: G/(G-1) sum over clusters of the summed influence function, written with pandas."""
    df = _table(np.random.default_rng(2), MODELS)
    df["topic"] = df["item"] % 31                # 31 clusters: not few for 3 models
    res = judged_means(df, method="ppi", cluster="topic", transport_alpha=None)
    d = df[df["model"] == "b"]
    lab = d["gold"].notna()
    r = d["gold"] - d["judge"]
    phi = np.where(lab, (r - r[lab].mean()) / lab.sum(),
                   (d["judge"] - d["judge"][~lab].mean()) / (~lab).sum())
    totals = pd.Series(phi, index=d.index).groupby(d["topic"]).sum()
    assert float(res.se.sel(model="b")) == pytest.approx(
        np.sqrt(31 / 30 * np.sum(totals**2)), rel=1e-12)


def test_clusters_too_few_for_the_models_are_refused_and_few_are_floored() -> None:
    """G clusters give a covariance of rank at most G - 1: with 2 topics for 5 models the
    paired differences' SEs were a median 7% (at least 1%) of the independent-items ones,
    although each model's own variance was floored. No more clusters than models: refused.
    Few clusters (8 for 5 models): a warning, and every paired difference's variance is at
    least its independent-items one (the generalised eigenvalues of the covariance relative to
    the independent one are the unfloored ones floored at 1)."""
    five = {"a": (0.5, 0.8), "b": (0.6, 0.8), "c": (0.7, 0.8), "d": (0.55, 0.8),
            "e": (0.65, 0.8)}
    df = _table(np.random.default_rng(1), five, n_items=600, n_labelled=200)
    kw = {"method": "ppi++", "transport_alpha": None, "rng": 0}
    for g in (2, 5):
        with pytest.raises(ValueError, match=rf"`cluster` has {g} cluster\(s\), too few for "
                           r"the covariance of 5 models' estimates.*finer unit"):
            judged_means(df.assign(topic=df["item"] % g), cluster="topic", **kw)
    iid = judged_means(df, **kw)
    with pytest.warns(EvaluqWarning, match=r"`cluster` has 8 clusters for 5 model\(s\)"):
        few = judged_means(df.assign(topic=df["item"] % 8), cluster="topic", **kw)
    assert any("at least the independent-rows one" in note for note in few.notes)
    ratio = few.differences["se_difference"] / iid.differences["se_difference"]
    assert float(ratio.min()) >= 1.0 - 1e-9
    # the plain CR1 covariance of the influence functions, by hand, for the comparison
    rows = []
    for name in five:
        d = df[df["model"] == name]
        lab = d["gold"].notna().to_numpy()
        lam = float(few.per_model["lam"].sel(model=name))
        y, f = d["gold"].to_numpy(), d["judge"].to_numpy()
        phi = np.where(lab, (np.nan_to_num(y) - lam * f
                             - (y[lab] - lam * f[lab]).mean()) / lab.sum(),
                       lam * (f - f[~lab].mean()) / (~lab).sum())
        rows.append(pd.Series(phi).groupby(d["item"].to_numpy() % 8).sum().to_numpy())
    totals = np.array(rows)
    plain = 8 / 7 * totals @ totals.T
    plain = plain * np.sqrt(np.outer(np.maximum(np.diag(plain), np.diag(iid.covariance)),
                                     np.maximum(np.diag(plain), np.diag(iid.covariance)))
                            / np.outer(np.diag(plain), np.diag(plain)))
    floor = iid.covariance.values
    got = np.sort(np.linalg.eigvals(np.linalg.solve(floor, few.covariance.values)).real)
    want = np.sort(np.maximum(np.linalg.eigvals(np.linalg.solve(floor, plain)).real, 1.0))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_cluster_variance_is_never_below_the_independent_rows_one() -> None:
    """Clusters that pair a right and a wrong answer cancel in the cluster sums (CR1 near 0);
    the independent-rows variance is used instead, and the result says so."""
    n = 40
    gold = np.tile([1.0, 0.0], n // 2)
    df = pd.DataFrame({"model": "a", "item": np.arange(n), "judge": gold,
                       "gold": np.where(np.arange(n) < 20, gold, np.nan),
                       "pair": np.arange(n) // 2})
    with pytest.warns(EvaluqWarning, match=r"`cluster` has 20 clusters for 1 model\(s\)"):
        res = judged_means(df, method="classical", cluster="pair", transport_alpha=None)
    lab = gold[:20]
    assert float(res.se.sel(model="a")) == pytest.approx(np.sqrt(lab.var() / 20), rel=1e-12)
    assert any("the larger is used" in note for note in res.notes)


def test_worth_in_labels_compares_like_with_like_under_clusters() -> None:
    """With clusters, ``gain`` is gold-only's clustered variance over the method's: the
    same as the ratio of the two fits' squared SEs (not the iid gold-only variance)."""
    df = _table(np.random.default_rng(4), MODELS)
    df["topic"] = df["item"] // 6
    ppi = judged_means(df, method="ppi++", cluster="topic", transport_alpha=None)
    gold_only = judged_means(df, method="classical", cluster="topic", transport_alpha=None)
    np.testing.assert_allclose(ppi.per_model["gain"].values,
                               (gold_only.se**2 / ppi.se**2).values, rtol=1e-12)
    assert (ppi.per_model["n_effective"] <= ppi.per_model["n_judged"]).all()


def test_draws_feed_ranks_and_pairwise() -> None:
    from evaluq.pairwise import pairwise_differences
    from evaluq.ranks import leaderboard, rank_distribution, significance_groups

    res = judged_means(_table(np.random.default_rng(3), MODELS), transport_alpha=None)
    assert res.draws.dims == ("resample", "model")
    ranks = rank_distribution(res.draws)
    np.testing.assert_allclose(ranks["probability"].sum("rank"), 1.0)
    board = leaderboard(res.draws)
    assert list(board.index) == ["c", "b", "a"]
    np.testing.assert_allclose(board["observed"], res.estimate.sel(model=["c", "b", "a"]))
    assert significance_groups(res.draws).sizes["model"] == 3
    pw = pairwise_differences(res.draws)
    sd = pw["sd"].sel(model="a", model_b="b")
    assert float(sd) == pytest.approx(
        float(res.differences["se_difference"].sel(model="a", model_b="b")), rel=0.05)


def test_judged_means_row_order_does_not_matter() -> None:
    df = _table(np.random.default_rng(4), MODELS)
    one = judged_means(df, rng=0)
    two = judged_means(df.sample(frac=1.0, random_state=1), rng=0)
    np.testing.assert_allclose(one.estimate, two.estimate, atol=1e-12)
    np.testing.assert_allclose(one.confidence_interval(), two.confidence_interval(),
                               atol=1e-12)
    np.testing.assert_allclose(one.differences["se_difference"],
                               two.differences["se_difference"], atol=1e-12)


def test_transport_flags_lenient_model() -> None:
    same_judge = {"a": (0.5, 0.8), "b": (0.6, 0.8), "c": (0.7, 0.8), "d": (0.55, 0.8)}
    df = _table(np.random.default_rng(5), same_judge, n_items=600, n_labelled=200,
                lenient="d")
    with pytest.warns(TransportWarning, match=r"method 'chain-rule gold-only': the chain "
                      r"rule's posterior from the gold labels alone.*\(k \+ 1\) / \(n \+ 2\)"):
        res = judged_means(df)
    assert res.transport is not None
    flagged = res.transport["flagged"].to_series()
    assert flagged.tolist() == [False, False, False, True]
    # the chain rule's fallback is its gold-only posterior, and says so (it was labelled
    # 'classical', the name of the plain mean of the labels, which it is not)
    assert res.per_model["method"].sel(model="d").item() == "chain-rule gold-only"
    assert float(res.transport["judge_shift"].sel(model="d")) > 0
    d = df[df["model"] == "d"]           # gold-only Beta(s + 1, n - s + 1) posterior mean
    assert float(res.estimate.sel(model="d")) == pytest.approx(
        (d["gold"].sum() + 1) / (d["gold"].count() + 2), abs=1e-12)
    # the PPI family's fallback is the classical mean of the labels, labelled so
    with pytest.warns(TransportWarning, match="method 'classical': the mean of the gold"):
        ppi = judged_means(df, method="ppi++")
    assert ppi.per_model["method"].sel(model="d").item() == "classical"
    assert float(ppi.estimate.sel(model="d")) == pytest.approx(d["gold"].mean(), abs=1e-12)


@pytest.mark.parametrize("method", ["ppi++", "chain-rule"])
def test_transport_flags_a_judge_constant_on_one_model_and_only_it(method: str) -> None:
    """The judge scored every answer of d 0.5 (it failed on d's outputs): lenient on d's wrong
    answers, harsh on its right ones, so the level-averaged shift cancels (|z| small) while
    the Wald test over the gold levels is tiny. The step-down flags d first (smallest p) and
    then nothing else; before, it flagged by |z|: the three healthy models, one after the
    other (each flag moved the reference towards d), and kept d's broken correction."""
    same = {"a": (0.5, 0.85), "b": (0.6, 0.85), "c": (0.7, 0.85), "d": (0.55, 0.85)}
    df = _table(np.random.default_rng(1), same, n_items=600, n_labelled=200)
    df.loc[df["model"] == "d", "judge"] = 0.5
    with pytest.warns(TransportWarning, match=r"differently for d \("):
        res = judged_means(df, method=method, rng=0)
    assert res.transport is not None
    assert res.transport["flagged"].values.tolist() == [False, False, False, True]
    first = res.transport.sel(model="d")
    assert abs(float(first["z"])) < 2.0 < -np.log10(float(first["p_value"]))


def test_model_without_labels_is_nan() -> None:
    df = _table(np.random.default_rng(6), MODELS)
    df.loc[df["model"] == "c", "gold"] = np.nan
    df.loc[(df["model"] == "c") & (df["item"] == 0), "gold"] = 1.0
    res = judged_means(df, method="ppi++")
    assert np.isnan(float(res.estimate.sel(model="c")))
    assert "fewer than two gold labels" in res.estimate.attrs["nan_reason"]
    assert list(res.draws["model"].values) == ["a", "b"]


@pytest.mark.parametrize(("change", "kwargs", "error", "match"), [
    ("drop_gold", {}, CubeError, "given as `gold`"),
    ("duplicate", {}, CubeError, "repeat the"),
    ("nan_judge", {}, CubeError, "NaN or infinite"),
    ("no_gold", {}, CubeError, "no labels"),
    ("half_judge", {"method": "rogan-gladen"}, ValueError, "0/1 judge"),
    ("none", {"method": "x"}, ValueError, "`method` must be"),
    ("none", {"method": "ppi", "lam": 0.3}, ValueError, "`lam`"),
    ("none", {"transport_alpha": 1.5}, ValueError, "transport_alpha"),
    ("two_clusters", {"cluster": "topic"}, CubeError, "one cluster per item"),
    ("text_gold", {}, CubeError, "must be numeric"),
])
def test_judged_means_bad_input(change: str, kwargs: dict, error: type, match: str) -> None:
    df = _table(np.random.default_rng(7), MODELS)
    df["topic"] = df["item"] % 5
    if change == "drop_gold":
        df = df.drop(columns="gold")
    elif change == "duplicate":
        df = pd.concat([df, df.iloc[:1]])
    elif change == "nan_judge":
        df.loc[3, "judge"] = np.nan
    elif change == "half_judge":
        df.loc[3, "judge"] = 0.5
    elif change == "no_gold":
        df["gold"] = np.nan
    elif change == "two_clusters":
        df.loc[0, "topic"] = 99
    elif change == "text_gold":
        df["gold"] = df["gold"].astype(object)
        df.loc[0, "gold"] = "yes"
    with pytest.raises(error, match=match):
        judged_means(df, **kwargs)


def test_judged_means_conversions() -> None:
    res = judged_means(_table(np.random.default_rng(8), MODELS))
    ds = res.to_dataset()
    assert {"estimate", "ci", "difference", "transport_p_value"} <= set(ds.data_vars)
    assert ds["ci"].attrs["ci_kind"] == "percentile"
    assert ds["ci_difference"].attrs["ci_kind"] == "normal"
    assert list(res.to_dataframe().index) == ["a", "b", "c"]
    assert "JudgedMeansResult(" in repr(res)


# --- label_budget -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_label_budget_equals_ppi_mean_power(name: str) -> None:
    y, yhat, _ = _data(name)
    for case in PPI["results"][name]["power"]:
        args, ref = case["args"], case["result"]
        kwargs = {k: args[k] for k in ("budget", "effective_n", "n_max") if k in args}
        plan = label_budget(y, yhat, cost_gold=args["cost_Y"], cost_judge=args["cost_Yhat"],
                            **kwargs)
        assert int(plan["n_gold"]) == ref["n"]
        assert int(plan["n_unlabelled"]) == ref["N"]
        assert int(plan["n_effective"]) == ref["effective_n"]
        assert float(plan["cost"]) == pytest.approx(ref["cost"], abs=1e-9)
        assert float(plan["ppi_corr"]) == pytest.approx(ref["ppi_corr"], abs=1e-12)


def test_label_budget_pool_reaches_width_by_simulation() -> None:
    """At the planned n, PPI++'s mean width over simulated studies is the target (a large
    pilot, so that its rho and sigma are the truth's)."""
    rng = np.random.default_rng(9)
    total = 3000
    y = (rng.random((400, total)) < 0.6).astype(float)
    f = np.where(rng.random((400, total)) < 0.85, y, 1 - y)
    plan = label_budget(y.ravel()[:200_000], f.ravel()[:200_000], width=0.06, n_judged=total)
    n = int(plan["n_gold"])
    assert n < int(plan["n_gold_only"])
    from evaluq.judges._kernels import moments_1d, ppi_estimate, tuned_lambda
    m = moments_1d(y[:, :n], f[:, :n], f[:, n:])
    width = 2 * 1.959964 * np.sqrt(ppi_estimate(m, tuned_lambda(m))[1])
    assert width.mean() == pytest.approx(0.06, rel=0.05)


def test_label_budget_difference_and_unreachable() -> None:
    rng = np.random.default_rng(10)
    y = (rng.random(100) < 0.5).astype(float)
    f = np.where(rng.random(100) < 0.9, y, 1 - y)
    plan = label_budget(y, f, difference=0.05, n_judged=100_000)
    sigma2, rho = y.var(), float(plan["ppi_corr"])
    target = (0.05 / (stats.norm.ppf(0.975) + stats.norm.ppf(0.8))) ** 2
    n = int(plan["n_gold"])
    assert sigma2 * (1 - rho**2) / n + sigma2 * rho**2 / 100_000 <= target
    assert sigma2 * (1 - rho**2) / (n - 1) + sigma2 * rho**2 / 100_000 > target
    far = label_budget(y, f, width=0.001, n_judged=200)
    assert np.isnan(float(far["n_gold"]))
    assert "judge more items" in far.attrs["nan_reason"]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({}, "exactly one of"),
    ({"width": 0.1, "difference": 0.1}, "exactly one of"),
    ({"width": -1.0}, "`width`"),
    ({"difference": 0.1, "power": 1.0}, "`power`"),
    ({"cost_gold": 1.0}, "both `cost_gold`"),
    ({"cost_gold": 1.0, "cost_judge": 0.1}, "needs `budget`"),
    ({"width": 0.1, "n_judged": 1}, "`n_judged`"),
])
def test_label_budget_bad_input(kwargs: dict, match: str) -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=match):
        label_budget(y, np.array([1.0, 0.0, 0.0, 1.0]), **kwargs)
    with pytest.raises(ValueError, match="constant"):
        label_budget(np.ones(4), np.array([1.0, 0.0, 0.0, 1.0]), width=0.1)


# --- real data: Chatbot Arena battles with human votes and LLM judges (ppi_real.json) -----------

REAL = json.loads((ANCHORS / "ppi_real.json").read_text())
BATTLES = pd.read_csv(Path(__file__).resolve().parent / "data" / "judges" / "arena_battles.csv")


def arena_file(name: str, judge: str, coding: str) -> tuple[np.ndarray, np.ndarray]:
    """Gold (the pair's first model won by human vote) and the judge's score of one pair's
    battles, in the file's order (ppi_real.json's design)."""
    first = name.split("__")[0]
    rows = BATTLES.set_index("battle").loc[REAL["files"][name]["battles"]]
    side = np.where(rows["model_a"] == first, "a", "b")
    gold = (rows["human"].to_numpy() == side).astype(float)
    verdict = rows[judge].to_numpy()
    score = np.where(verdict == side, 1.0, np.where((verdict == "tie") & (coding != "binary"),
                                                     0.5, 0.0))
    return gold, score


def arena_subsets(name: str, n_subsets: int) -> np.ndarray:
    """The labelled positions of the file's first ``n_subsets`` label subsets."""
    f = REAL["files"][name]
    draws = np.random.default_rng([20261127, f["index"]]).random((2000, f["n_items"]))
    return np.argsort(draws, axis=1, kind="stable")[:n_subsets, :f["n_labels"]]


@pytest.mark.parametrize("name", sorted(REAL["files"]))
def test_ppi_mean_equals_ppi_py_on_arena_battles(name: str) -> None:
    """ppi_py's first three intervals of every file, judge and coding (PPI++, PPI, gold-only);
    where ppi_py's interval has width 0 (every gold label of the subset alike, lambda 0: a
    variance estimate of 0) evaluq's is NaN with the reason, and the estimate is ppi_py's
    centre."""
    subsets = arena_subsets(name, 3)
    for setting, ref in REAL["files"][name]["settings"].items():
        gold, score = arena_file(name, *setting.split("/"))
        for r, lab in enumerate(subsets):
            unl = np.setdiff1d(np.arange(gold.size), lab)
            for method in ("ppi++", "ppi", "classical"):
                res = ppi_mean(gold[lab], score[lab], score[unl], method=method)
                expected = np.asarray(ref[method]["first3_ci"][r])
                if expected[1] - expected[0] < 1e-20:
                    assert np.isnan(res.confidence_interval().values).all()
                    assert "estimated variance is 0" in str(res.nan_reason)
                    assert res.estimate == pytest.approx(expected[0], abs=1e-10)
                    continue
                np.testing.assert_allclose(res.confidence_interval().values, expected,
                                           atol=1e-10)


# --- cje-eval's transport designs (cje_reference.json) ------------------------------------------

CJE = json.loads((ANCHORS / "cje_reference.json").read_text())


def _cje_table(data: dict) -> pd.DataFrame:
    return pd.concat([pd.DataFrame({"model": policy, "item": data["prompt_id"],
                                    "judge": v["judge_score"],
                                    "gold": np.where(v["labelled"], v["oracle_full"], np.nan)})
                      for policy, v in data["policies"].items()], ignore_index=True)


@pytest.mark.parametrize(("design", "relation"), [("data", "gold-given-judge"),
                                                  ("lenient_judge", "judge-given-gold")])
def test_transport_flags_what_cje_flags(design: str, relation: str) -> None:
    """cje-eval 0.9.3's analyze_dataset fails policy D, and only D, in both of its designs
    (E[gold | judge] 0.3 lower for D; E[judge | gold] 0.15 higher for D); evaluq's check of
    the matching relation flags D and only D."""
    data = CJE[design]["data"] if design == "lenient_judge" else CJE["data"]
    with pytest.warns(TransportWarning, match="for D "):
        res = judged_means(_cje_table(data), transport_relation=relation, rng=0)
    assert res.transport is not None
    assert res.transport["flagged"].to_series().to_dict() == {
        "A": False, "B": False, "C": False, "D": True}
    audits = CJE["analyze_dataset"] if design == "data" else CJE[design]["analyze_dataset"]
    assert "D" in json.dumps(audits)


def test_rogan_gladen_paired_difference_se_matches_its_spread() -> None:
    """The influence functions carry the covariance of two models' Rogan-Gladen estimates
    over shared items (models right on the same items 80% of the time): the stated SE of the
    difference equals the spread of the difference over 300 simulated tables (within Monte
    Carlo error), and is far below the SE that ignores the covariance."""
    rng = np.random.default_rng(11)
    n_items, n_labelled = 400, 120
    diffs, ses, unpaired = [], [], []
    for _ in range(300):
        gold_a = (rng.random(n_items) < 0.5).astype(float)
        gold_b = np.where(rng.random(n_items) < 0.8, gold_a, rng.random(n_items) < 0.6)
        rows = []
        for name, g in (("a", gold_a), ("b", gold_b.astype(float))):
            judge = np.where(rng.random(n_items) < 0.85, g, 1 - g)
            rows.append(pd.DataFrame({"model": name, "item": np.arange(n_items), "judge": judge,
                                      "gold": np.where(np.arange(n_items) < n_labelled, g,
                                                       np.nan)}))
        res = judged_means(pd.concat(rows), method="rogan-gladen", transport_alpha=None)
        diffs.append(float(res.differences["difference"].sel(model="a", model_b="b")))
        ses.append(float(res.differences["se_difference"].sel(model="a", model_b="b")))
        unpaired.append(float(np.hypot(*res.se.values)))
    spread = np.std(diffs, ddof=1)
    assert np.sqrt(np.mean(np.square(ses))) == pytest.approx(spread, rel=0.12)
    assert np.mean(unpaired) > 1.15 * spread


def _aced(rng: np.random.Generator) -> pd.DataFrame:
    """Three models under a continuous judge (so PPI++ by default); m1's gold labels are all
    1 (a strong model with 40-odd labels)."""
    rows = []
    for name, accuracy in (("m1", 1.0), ("m2", 0.62), ("m3", 0.55)):
        gold = (rng.random(400) < accuracy).astype(float)
        judge = np.clip(0.7 * gold + rng.normal(0.15, 0.2, 400), 0.0, 1.0)
        labelled = rng.random(400) < 0.1
        rows.append(pd.DataFrame({"model": name, "item": np.arange(400), "judge": judge,
                                  "gold": np.where(labelled, gold, np.nan)}))
    return pd.concat(rows, ignore_index=True)


@pytest.mark.parametrize("method", ["classical", "ppi++"])
def test_ppi_mean_with_every_gold_label_alike_has_no_se(method: str) -> None:
    """20 gold labels all 1 and a judge uncorrelated with them: lambda 0, the variance
    estimate 0, and the interval was [1, 1]. The estimate stays; SE and interval are NaN with
    the reason and the remedies."""
    rng = np.random.default_rng(0)
    judge, unl = (rng.random(20) < 0.9).astype(float), (rng.random(500) < 0.85).astype(float)
    res = ppi_mean(np.ones(20), judge, unl, method=method)
    assert res.estimate == 1.0
    assert np.isnan(res.se)
    assert np.isnan(res.confidence_interval().values).all()
    assert "every gold label is 1" in str(res.nan_reason)
    assert "proportion_interval" in str(res.nan_reason)
    # a spread of the labels: the usual SE (the gold-only one: sd / sqrt(n), ddof 0)
    gold = np.r_[np.ones(19), 0.0]
    assert ppi_mean(gold, judge, unl, method="classical").se == pytest.approx(
        np.std(gold) / np.sqrt(20), rel=1e-12)


def test_judged_means_model_with_every_gold_label_alike_has_no_se() -> None:
    """m1 aced its 40-odd gold labels: its SE was 0 and its interval [1, 1], and its paired
    differences had the other model's SE alone. Now NaN with the reason, left out of the
    draws; the other models' numbers are those of the table without m1."""
    table = _aced(np.random.default_rng(0))
    res = judged_means(table, rng=0, transport_alpha=None)
    assert res.method == "ppi++"
    assert float(res.estimate.sel(model="m1")) == 1.0
    assert np.isnan(float(res.se.sel(model="m1")))
    assert "model(s) ['m1']: the estimated variance is 0 (every gold label is 1" in \
        res.se.attrs["nan_reason"]
    assert np.isnan(res.differences["se_difference"].sel(model="m1", model_b="m2"))
    assert res.draws["model"].values.tolist() == ["m2", "m3"]
    rest = judged_means(table[table.model != "m1"], rng=0, transport_alpha=None)
    np.testing.assert_allclose(res.se.sel(model=["m2", "m3"]).values, rest.se.values,
                               rtol=1e-12)

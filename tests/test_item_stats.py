"""item_means: CLT and cluster-robust SEs, paired differences, against statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import evaluq as eq
from evaluq import CubeError


def clustered_table(rng, n_models=3, n_clusters=40, seeds=1, languages=("x",)):
    """Items in clusters of 1-6 items; a cluster effect shared by all models (correlated)."""
    rows = []
    for lang in languages:
        sizes = rng.integers(1, 7, n_clusters)
        cl = np.repeat(np.arange(n_clusters), sizes)
        effect = rng.normal(0, 1.0, n_clusters)[cl] + rng.normal(0, 0.5, len(cl))
        for m in range(n_models):
            for s in range(seeds):
                p = 1 / (1 + np.exp(-(effect + 0.3 * m)))
                score = (rng.random(len(cl)) < p).astype(float)
                rows += [(f"m{m}", lang, s, f"i{i}", f"c{c}", v)
                         for i, (c, v) in enumerate(zip(cl, score, strict=True))]
    return pd.DataFrame(rows, columns=["m", "l", "s", "i", "c", "v"])


def ols_se(y, groups=None):
    fit = sm.OLS(y, np.ones(len(y)))
    if groups is None:
        return fit.fit().bse[0]
    return fit.fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0]


def wide(df, lang="x"):
    sub = df[df.l == lang]
    xbar = sub.groupby(["m", "i"]).v.mean().unstack("i")
    clusters = sub.drop_duplicates("i").set_index("i").loc[xbar.columns, "c"]
    return xbar, pd.factorize(clusters)[0]


@pytest.mark.parametrize("seeds", [1, 3])
def test_se_match_statsmodels(rng, seeds):
    df = clustered_table(rng, seeds=seeds)
    res = eq.item_means(df, model="m", item="i", score="v", cluster="c", seed="s")
    xbar, groups = wide(df)
    for m in xbar.index:
        y = xbar.loc[m].to_numpy()
        assert float(res["mean"].sel(model=m)) == pytest.approx(y.mean(), rel=1e-14)
        np.testing.assert_allclose(float(res.se.sel(model=m)), ols_se(y, groups), rtol=1e-12)
        np.testing.assert_allclose(float(res.se_iid.sel(model=m)), ols_se(y), rtol=1e-12)
    for a in xbar.index:
        for b in xbar.index:
            if a == b:
                continue
            d = (xbar.loc[a] - xbar.loc[b]).to_numpy()
            pair = {"model": a, "model_b": b}
            assert float(res.difference.sel(pair)) == pytest.approx(d.mean(), abs=1e-15)
            np.testing.assert_allclose(float(res.se_difference.sel(pair)), ols_se(d, groups),
                                       rtol=1e-12)
            np.testing.assert_allclose(float(res.se_difference_iid.sel(pair)), ols_se(d),
                                       rtol=1e-12)


def test_difference_se_is_var_a_plus_var_b_minus_2cov(rng):
    df = clustered_table(rng)
    res = eq.item_means(df, model="m", item="i", score="v", cluster="c")
    xbar, groups = wide(df)
    y = xbar.to_numpy().T                                         # (items, models)
    fit = sm.OLS(y[:, 0], np.column_stack([np.ones(len(y))]))
    # the cluster-robust covariance of the three means, by statsmodels (a SUR-style stack)
    n, g = y.shape[0], len(np.unique(groups))
    r = y - y.mean(axis=0)
    totals = np.stack([np.bincount(groups, weights=r[:, k]) for k in range(3)], axis=1)
    cov = g / (g - 1) * totals.T @ totals / n**2
    assert np.sqrt(cov[0, 0]) == pytest.approx(ols_se(y[:, 0], groups), rel=1e-12)
    assert fit.nobs == n
    expected = np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    assert float(res.se_difference.sel(model="m0", model_b="m1")) == pytest.approx(
        expected, rel=1e-12)
    corr = np.corrcoef(y[:, 0], y[:, 1])[0, 1]
    assert float(res.correlation.sel(model="m0", model_b="m1")) == pytest.approx(corr,
                                                                                rel=1e-12)


def test_inspect_stderr_anchor():
    """formulas.md: Inspect's stderr, n = 285 at accuracy 0.78246, is 0.024482 (ddof = 1)."""
    k, n = 223, 285
    df = pd.DataFrame({"m": "a", "i": range(n), "v": [1.0] * k + [0.0] * (n - k)})
    res = eq.item_means(df, model="m", item="i", score="v")
    assert float(res["mean"][0]) == pytest.approx(0.78246, abs=5e-6)
    assert float(res.se[0]) == pytest.approx(0.024482, abs=5e-7)
    assert float(res.se_iid[0]) == float(res.se[0])


def test_within_and_item_variance(rng):
    n, k = 2000, 4
    mu = rng.uniform(0.1, 0.9, n)
    x = (rng.random((k, n)) < mu).astype(float)
    df = pd.DataFrame({"m": "a", "s": np.repeat(np.arange(k), n), "i": np.tile(np.arange(n), k),
                       "v": x.ravel()})
    res = eq.item_means(df, model="m", item="i", score="v", seed="s")
    within = x.var(axis=0, ddof=1).mean()
    assert float(res.var_within[0]) == pytest.approx(within, rel=1e-12)
    var_item = x.mean(axis=0).var(ddof=1) - within / k
    assert float(res.var_item[0]) == pytest.approx(var_item, rel=1e-12)
    # the truth: Var(mu) = (0.8)^2 / 12
    assert float(res.var_item[0]) == pytest.approx(0.8**2 / 12, rel=0.1)
    assert int(res.n_seeds[0]) == k


def test_languages_and_intervals(rng):
    df = clustered_table(rng, languages=("x", "y"))
    res = eq.item_means(df, model="m", item="i", score="v", cluster="c", language="l",
                        confidence_level=0.9)
    assert res["mean"].dims == ("model", "language")
    assert res.se_difference.dims == ("model", "model_b", "language")
    assert res.ci.dims == ("model", "language", "ci_bound")
    assert res.ci.attrs["ci_kind"] == "normal"
    assert res.ci.attrs["confidence_level"] == 0.9
    half = res.ci.sel(ci_bound="upper") - res["mean"]
    np.testing.assert_allclose(half, 1.6448536269514722 * res.se, rtol=1e-12)
    sub = df[df.l == "y"]
    assert float(res["mean"].sel(model="m1", language="y")) == pytest.approx(
        sub[sub.m == "m1"].v.mean())
    assert res.n_clusters.sel(language="x") == 40


def test_absent_model_is_nan_with_reason(rng):
    df = clustered_table(rng, languages=("x", "y"))
    df = df[~((df.m == "m2") & (df.l == "y"))]
    res = eq.item_means(df, model="m", item="i", score="v", language="l")
    assert np.isnan(float(res["mean"].sel(model="m2", language="y")))
    assert np.isnan(float(res.se_difference.sel(model="m0", model_b="m2", language="y")))
    assert "no scores in this language" in res.se.attrs["nan_reason"]
    assert "fewer than 2 seeds" in res.var_within.attrs["nan_reason"]


def test_bad_input(rng):
    df = clustered_table(rng)
    with pytest.raises(ValueError, match=r"`confidence_level` must be in \(0, 1\); got 1.5"):
        eq.item_means(df, model="m", item="i", score="v", confidence_level=1.5)
    with pytest.raises(CubeError, match=r"appear in more than one row"):
        eq.item_means(pd.concat([df, df.iloc[[1]]]), model="m", item="i", score="v")
    with pytest.raises(CubeError, match=r"model 'm1' seed 0 lacks 1 item\(s\)"):
        eq.item_means(df.drop(index=df.index[(df.m == "m1")][0]), model="m", item="i",
                      score="v")


# --- calibration (slow) ---------------------------------------------------------------------

def _simulated_replicates(gen, n_rep, n_clusters, cluster_sd, shift=0.2):
    """n_rep data sets (one 'language' each) of two models sharing cluster and item effects."""
    sizes = gen.integers(1, 7, (n_rep, n_clusters))
    frames = []
    for r in range(n_rep):                    # building the table; the estimates are one call
        cl = np.repeat(np.arange(n_clusters), sizes[r])
        shared = gen.normal(0, cluster_sd, n_clusters)[cl] + gen.normal(0, 0.5, len(cl))
        for m, mu in (("a", shift), ("b", 0.0)):
            own = gen.normal(0, cluster_sd, n_clusters)[cl] + gen.normal(0, 1.0, len(cl))
            frames.append(pd.DataFrame({"m": m, "l": r, "i": np.arange(len(cl)), "c": cl,
                                        "v": mu + shared + own}))
    return pd.concat(frames, ignore_index=True)


def _hits(res, ci, truth):
    lo, hi = res[ci].sel(ci_bound="lower").values, res[ci].sel(ci_bound="upper").values
    return int(((lo <= truth) & (truth <= hi)).sum())


@pytest.mark.slow
@pytest.mark.parametrize("clustered", [False, True])
def test_coverage_of_means_and_differences(clustered):
    gen = np.random.default_rng(181 + clustered)
    n_rep, level = 1500, 0.95
    df = _simulated_replicates(gen, n_rep, n_clusters=80, cluster_sd=1.0 if clustered else 0.0)
    res = eq.item_means(df, model="m", item="i", score="v", language="l",
                        cluster="c" if clustered else None, confidence_level=level)
    band = 4 * np.sqrt(n_rep * level * (1 - level))
    mean_hits = _hits(res.sel(model="a"), "ci", 0.2)
    diff_hits = _hits(res.sel(model="a", model_b="b"), "ci_difference", 0.2)
    kind = "cluster-robust (CR1), 80 clusters of 1-6 items" if clustered else "iid (CLT)"
    for what, hits in (("mean", mean_hits), ("paired difference", diff_hits)):
        print(f"\nCALIBRATION | item_means {what}, {kind}, normal interval | coverage | "
              f"nominal {level:.3f} | measured {hits / n_rep:.4f} | n {n_rep}")
        assert abs(hits - n_rep * level) <= band + 0.01 * n_rep
    if clustered:   # the iid SE ignores the clusters: it undercovers badly
        iid = res.sel(model="a")
        z = 1.959963984540054
        naive = int((np.abs(iid["mean"].values - 0.2) <= z * iid.se_iid.values).sum())
        print(f"\nCALIBRATION | item_means mean, iid SE on clustered items (for contrast) | "
              f"coverage | nominal {level:.3f} | measured {naive / n_rep:.4f} | n {n_rep}")
        assert naive < n_rep * (level - 0.1)

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
    df["v"] += 0.5 * rng.random(len(df))            # graded scores: the normal interval
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
        print(f"\nCALIBRATION | item_means mean, iid SE on clustered items (documented contrast: "
              f"undercovers) | "
              f"coverage | nominal {level:.3f} | measured {naive / n_rep:.4f} | n {n_rep}")
        assert naive < n_rep * (level - 0.1)


# --- 0/1 scores: intervals of proportions (issue 30, item 6) --------------------------------

Z95 = 1.959963984540054


def _counts_table(counts, n):
    """One model per entry of ``counts``: the first k of n items right."""
    return pd.DataFrame({"m": np.repeat([f"m{k:02d}" for k in range(len(counts))], n),
                         "i": np.tile(np.arange(n), len(counts)),
                         "v": np.concatenate([(np.arange(n) < k).astype(float)
                                              for k in counts])})


@pytest.mark.parametrize("n", [9, 30])
def test_binary_mean_interval_is_exact_clopper_pearson(n):
    """One epoch, no clusters: the exact Clopper-Pearson interval of k right of n, inside [0, 1]
    where the CLT interval leaves it (28 / 30, 9 / 9)."""
    counts = [0, 1, n // 2, n - 2, n - 1, n]
    res = eq.item_means(_counts_table(counts, n), model="m", item="i", score="v")
    expected = eq.proportion_interval(counts, n, method="clopper-pearson").values
    np.testing.assert_allclose(res.ci.values, expected, rtol=1e-12, atol=1e-15)
    assert res.ci.attrs["ci_kind"] == "clopper-pearson"
    assert res.ci.attrs["confidence_level"] == 0.95
    assert "Clopper-Pearson" in res.attrs["ci_method"]
    np.testing.assert_array_equal(res.n_effective.values, n)
    np.testing.assert_array_equal(res.n_effective_trials.values, n)
    assert ((res.ci >= 0) & (res.ci <= 1)).all()
    clt_upper = res["mean"] + Z95 * res.se                     # what the CLT would give
    assert float(clt_upper.sel(model="m04")) > 1.0            # n - 1 of n right
    assert float(res.ci.sel(model="m04", ci_bound="upper")) < 1.0


def _newcombe_from_counts(a, b, c, d, level=0.95):
    """Newcombe (1998) method 10 from the paired 2x2 table (a both right, b only A, c only B,
    d both wrong), by eq.proportion_interval's Wilson ends and the phi coefficient."""
    n = a + b + c + d
    pa, pb = (a + b) / n, (a + c) / n
    (la, ua), (lb, ub) = eq.proportion_interval([a + b, a + c], n, method="wilson",
                                                confidence_level=level).values
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / np.sqrt(denom) if denom > 0 else 0.0
    diff = pa - pb
    lower = diff - np.sqrt((pa - la) ** 2 - 2 * phi * (pa - la) * (ub - pb) + (ub - pb) ** 2)
    upper = diff + np.sqrt((ua - pa) ** 2 - 2 * phi * (ua - pa) * (pb - lb) + (pb - lb) ** 2)
    return lower, upper


@pytest.mark.parametrize("cells", [(5, 3, 1, 1), (12, 0, 0, 0), (20, 8, 0, 2), (1, 1, 7, 12),
                                   (0, 9, 0, 0), (3, 0, 6, 0)])
def test_binary_difference_is_newcombes_hybrid_score(cells):
    a, b, c, d = cells
    n = a + b + c + d
    va = np.r_[np.ones(a + b), np.zeros(c + d)]
    vb = np.r_[np.ones(a), np.zeros(b), np.ones(c), np.zeros(d)]
    df = pd.DataFrame({"m": ["A"] * n + ["B"] * n, "i": np.tile(np.arange(n), 2),
                       "v": np.r_[va, vb]})
    res = eq.item_means(df, model="m", item="i", score="v", confidence_level=0.9)
    got = res.ci_difference.sel(model="A", model_b="B").values
    np.testing.assert_allclose(got, _newcombe_from_counts(a, b, c, d, 0.9), atol=1e-12)
    back = res.ci_difference.sel(model="B", model_b="A").values
    np.testing.assert_allclose(back, -got[::-1], atol=1e-15)
    assert res.ci_difference.attrs["ci_kind"] == "newcombe"
    assert "Newcombe" in res.attrs["ci_difference_method"]
    assert (res.ci_difference.sel(model="A", model_b="A").values == 0).all()
    assert ((res.ci_difference >= -1) & (res.ci_difference <= 1)).all()


def test_binary_difference_stays_in_minus_one_one():
    """8 of 9 right against 0 of 9: the normal interval reaches past 1, Newcombe's does not."""
    df = pd.DataFrame({"m": ["A"] * 9 + ["B"] * 9, "i": np.tile(np.arange(9), 2),
                       "v": np.r_[np.ones(8), 0.0, np.zeros(9)]})
    res = eq.item_means(df, model="m", item="i", score="v")
    pair = res.sel(model="A", model_b="B")
    assert float(pair.difference + Z95 * pair.se_difference) > 1.0
    lower, upper = pair.ci_difference.values
    assert -1.0 <= lower < float(pair.difference) < upper <= 1.0


def test_effective_sizes_with_epochs_and_clusters(rng):
    """n_effective = n / (se^2 / se_iid^2); n_effective_trials by Korn and Graubard's formula
    and the interval the Clopper-Pearson one at that size (scipy's beta quantiles)."""
    from scipy import stats

    df = clustered_table(rng, n_models=3, n_clusters=12, seeds=3)
    res = eq.item_means(df, model="m", item="i", score="v", cluster="c", seed="s")
    n, g = int(res.n_items), int(res.n_clusters)
    for m in res.model.values:
        one = res.sel(model=m)
        p, se, se_iid = float(one["mean"]), float(one.se), float(one.se_iid)
        assert float(one.n_effective) == pytest.approx(min(n * se_iid**2 / se**2, n),
                                                       rel=1e-12)
        big_n = 3 * n
        factor = (stats.t.ppf(0.975, big_n - 1) / stats.t.ppf(0.975, g - 1)) ** 2
        n_eff = min(p * (1 - p) * big_n / ((big_n - 1) * se**2), big_n) * factor
        assert float(one.n_effective_trials) == pytest.approx(n_eff, rel=1e-12)
        x = p * n_eff
        expected = [stats.beta.ppf(0.025, x, n_eff - x + 1), stats.beta.isf(0.025, x + 1,
                                                                             n_eff - x)]
        np.testing.assert_allclose(one.ci.values, expected, rtol=1e-10)


def test_all_right_takes_the_least_favourable_design_effect():
    """Every response right: the design effect is not estimable, the interval takes every
    response of a cluster alike (n items with epochs; n^2 / sum c_g^2 with clusters)."""
    n, epochs = 12, 4
    df = pd.DataFrame({"m": "a", "i": np.repeat(np.arange(n), epochs),
                       "e": np.tile(np.arange(epochs), n), "c": np.repeat([0] * 6 + [1] * 3
                                                                          + [2] * 3, epochs),
                       "v": 1.0})
    res = eq.item_means(df, model="m", item="i", score="v", seed="e")
    assert float(res.n_effective_trials[0]) == n
    np.testing.assert_allclose(res.ci.values[0], [0.025 ** (1 / n), 1.0], rtol=1e-12)
    clustered = eq.item_means(df, model="m", item="i", score="v", seed="e", cluster="c")
    worst = n**2 / (6**2 + 3**2 + 3**2)
    assert float(clustered.n_effective_trials[0]) == pytest.approx(worst, rel=1e-12)
    assert float(clustered.n_effective[0]) == pytest.approx(worst, rel=1e-12)


def test_graded_scores_keep_the_normal_interval(rng):
    df = clustered_table(rng)
    df["v"] = df["v"] * 0.5 + 0.25 * rng.integers(0, 3, len(df))   # 0, .25, ..., 1
    res = eq.item_means(df, model="m", item="i", score="v", cluster="c")
    assert res.ci.attrs["ci_kind"] == "normal"
    assert res.ci_difference.attrs["ci_kind"] == "normal"
    assert res.attrs["ci_method"].startswith("normal")
    assert "n_effective_trials" not in res
    np.testing.assert_allclose(res.ci.sel(ci_bound="upper") - res["mean"], Z95 * res.se,
                               rtol=1e-12)
    expected = np.minimum(int(res.n_items) * res.se_iid**2 / res.se**2, int(res.n_items))
    np.testing.assert_allclose(res.n_effective, expected, rtol=1e-12)


# --- calibration of the 0/1 route (slow) --------------------------------------------------------

def _enumerated_means(n):
    """Every outcome k = 0..n of n items, one language each: the intervals item_means gives."""
    df = pd.DataFrame({"m": "a", "l": np.repeat(np.arange(n + 1), n),
                       "i": np.tile(np.arange(n), n + 1),
                       "v": (np.tile(np.arange(n), n + 1) < np.repeat(np.arange(n + 1), n))
                       .astype(float)})
    return eq.item_means(df, model="m", item="i", score="v", language="l").ci.values[0]


@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 10, 30])
def test_exact_coverage_of_binary_means(n):
    """One epoch, no clusters: the coverage is exact (binomial pmf summed over the outcomes the
    interval covers) and never below the level, for every p of a fine grid."""
    from scipy import stats

    ci = _enumerated_means(n)                                    # (k, ci_bound)
    ps = np.linspace(0.005, 0.995, 199)
    pmf = stats.binom.pmf(np.arange(n + 1)[:, None], n, ps[None, :])
    covers = (ci[:, :1] <= ps) & (ps <= ci[:, 1:])
    coverage = (pmf * covers).sum(axis=0)
    for p in (0.9, 0.95, 0.99):
        c = float(coverage[np.argmin(np.abs(ps - p))])
        print(f"\nCALIBRATION | item_means 0/1 mean, n={n} items, p={p}, clopper-pearson | "
              f"coverage (exact, binomial sum) | nominal 0.950 | measured {c:.4f} | n exact")
    print(f"\nCALIBRATION | item_means 0/1 mean, n={n} items, min over p in [0.005, 0.995] | "
          f"coverage (exact) | nominal 0.950 | measured {coverage.min():.4f} | n exact")
    assert coverage.min() >= 0.95 - 1e-12


def _paired_outcomes(n):
    """Every paired 2x2 table (a, b, c, d) of n items, one language each."""
    cells = np.array([(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a)
                      for c in range(n + 1 - a - b)])
    idx = np.arange(n)
    a, b, c = cells[:, :1], cells[:, 1:2], cells[:, 2:3]
    va = (idx < a + b).astype(float)
    vb = ((idx < a) | ((idx >= a + b) & (idx < a + b + c))).astype(float)
    t = len(cells)
    df = pd.DataFrame({"m": np.repeat(["a", "b"], t * n),
                       "l": np.tile(np.repeat(np.arange(t), n), 2),
                       "i": np.tile(idx, 2 * t), "v": np.concatenate([va.ravel(), vb.ravel()])})
    res = eq.item_means(df, model="m", item="i", score="v", language="l")
    return cells, res.ci_difference.sel(model="a", model_b="b").values


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 30])
def test_exact_coverage_of_binary_differences(n):
    """Newcombe's interval of a paired difference, exact coverage (multinomial pmf over every
    2x2 table) on a grid of accuracies and correlations: approximate, as Newcombe (1998)
    reports, a little under the level at worst (0.936 here), above it on average."""
    from scipy import stats

    cells, ci = _paired_outcomes(n)
    found = []
    for pa in (0.8, 0.9, 0.95):
        for pb in (0.7, 0.8, 0.9, 0.95):
            for rho in (0.0, 0.3, 0.6):
                p11 = pa * pb + rho * np.sqrt(pa * (1 - pa) * pb * (1 - pb))
                probs = np.array([p11, pa - p11, pb - p11, 1 - pa - pb + p11])
                if (probs < 0).any():
                    continue
                d = pa - pb
                hit = (ci[:, 0] <= d + 1e-12) & (d - 1e-12 <= ci[:, 1])
                found.append(float(stats.multinomial.pmf(cells, n, probs)[hit].sum()))
                print(f"\nCALIBRATION | item_means 0/1 paired difference, n={n}, p_a={pa}, "
                      f"p_b={pb}, rho={rho}, newcombe | coverage (exact) | nominal 0.950 | "
                      f"measured {found[-1]:.4f} | n exact")
    assert min(found) >= 0.93
    assert np.mean(found) >= 0.95


def _binary_replicates(gen, n_rep, n_items, p, epochs, phi, cluster_size=None):
    """n_rep data sets (one language each) of two models on the same items: model a's item
    (or cluster) probabilities Beta(p phi, (1 - p) phi), model b's 0.9 times a's (the same
    hard items: correlated), epochs Bernoulli. Truth: p and 0.9 p."""
    groups = n_items if cluster_size is None else -(-n_items // cluster_size)
    prob = gen.beta(p * phi, (1 - p) * phi, (n_rep, groups))
    if cluster_size is not None:
        prob = np.repeat(prob, cluster_size, axis=1)[:, :n_items]
    rep, item, epoch = np.meshgrid(np.arange(n_rep), np.arange(n_items), np.arange(epochs),
                                   indexing="ij")
    frames = []
    for m, scale in (("a", 1.0), ("b", 0.9)):
        v = gen.random((n_rep, n_items, epochs)) < scale * prob[..., None]
        frames.append(pd.DataFrame({"m": m, "l": rep.ravel(), "i": item.ravel(),
                                    "e": epoch.ravel(), "c": (item // (cluster_size or 1))
                                    .ravel(), "v": v.ravel().astype(float)}))
    return pd.concat(frames, ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize(("n_items", "p", "epochs", "cluster_size"), [
    (10, 0.9, 4, None), (10, 0.95, 4, None), (30, 0.9, 4, None), (30, 0.95, 4, None),
    (30, 0.9, 1, 3), (30, 0.95, 2, 3)])
def test_coverage_of_binary_means_with_epochs_and_clusters(n_items, p, epochs, cluster_size):
    """Epochs of heterogeneous items (Beta(p phi, (1 - p) phi), phi = 4: ICC 0.2) or clusters
    of 3 items: the effective sample size is estimated; the coverage stays at the level
    within binomial error (the normal interval undercovers: printed beside it)."""
    gen = np.random.default_rng(3000 + n_items + int(100 * p) + epochs)
    n_rep, level = 2000, 0.95
    df = _binary_replicates(gen, n_rep, n_items, p, epochs, 4.0, cluster_size)
    res = eq.item_means(df, model="m", item="i", score="v", language="l", seed="e",
                        cluster=None if cluster_size is None else "c")
    band = 3 * np.sqrt(n_rep * level * (1 - level))
    design = (f"{n_items} items x {epochs} epochs" + (f", clusters of {cluster_size}"
                                                      if cluster_size else ""))
    mean_hits = _hits(res.sel(model="a"), "ci", p)
    diff_hits = _hits(res.sel(model="a", model_b="b"), "ci_difference", 0.1 * p)
    for what, name, hits in (("mean", "ci", mean_hits),
                             ("paired difference", "ci_difference", diff_hits)):
        print(f"\nCALIBRATION | item_means 0/1 {what}, {design}, p={p}, "
              f"{res[name].attrs['ci_kind']} | coverage | nominal {level:.3f} | "
              f"measured {hits / n_rep:.4f} | n {n_rep}")
        assert hits >= n_rep * level - band
    one = res.sel(model="a")
    normal = int((np.abs(one["mean"].values - p) <= Z95 * one.se.values).sum())
    print(f"\nCALIBRATION | item_means 0/1 mean, {design}, p={p}, normal interval "
          f"(documented contrast: undercovers) | coverage | nominal {level:.3f} | "
          f"measured {normal / n_rep:.4f} | n {n_rep}")
    assert normal < mean_hits

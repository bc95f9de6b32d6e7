"""fit_ratings_bayes (issue 33 item 2): Bayesian Bradley-Terry / Davidson on the one fit surface.

Every number against an independent route: the cell log-likelihood against the per-vote
Davidson / Bradley-Terry probabilities (numpy and PyTensor); the posterior mean under a
flat-ish prior against fit_ratings' maximum-likelihood ratings and tie parameter; the
left-out cluster's integral against Gauss-Hermite quadrature; the iid fit's per-cluster
log-likelihood against a sum over the votes; the posterior ranks against evaluq.ranks;
a calibration study by simulation from the prior (slow).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from evaluq.errors import ConvergenceWarning
from evaluq.ranks import leaderboard, rank_distribution
from evaluq.ratings import fit_ratings
from evaluq.ratings._bayes import (
    Cells,
    cell_loglik,
    cells_of,
    compare_ratings_fits,
    fit_ratings_bayes,
    load_ratings_fit,
    pointwise_loglik,
)
from evaluq.ratings._votes import read_votes

THETA = np.array([0.0, 0.5, -0.3, 0.9, -0.8, 0.2])
NU = 0.8
SMALL: dict[str, Any] = {"draws": 500, "tune": 500, "chains": 2}


def simulate_votes(theta, nu, n, rng, n_prompts=40, sd_prompt=0.0):
    """Davidson votes between random pairs, with prompt-specific model effects N(0, sd^2)."""
    m = len(theta)
    a = rng.integers(0, m, n)
    b = (a + rng.integers(1, m, n)) % m
    g = rng.integers(0, n_prompts, n)
    u = rng.normal(0.0, sd_prompt, (n_prompts, m))
    d = theta[a] - theta[b] + u[g, a] - u[g, b]
    p_a, p_b, _ = davidson_probabilities(d, np.log(nu))
    r = rng.random(n)
    winner = np.where(r < p_a, "model_a", np.where(r < p_a + p_b, "model_b", "tie"))
    names = np.array([f"m{k}" for k in range(m)])
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                         "prompt": g})


def davidson_probabilities(d, lam):
    """P(i wins), P(j wins), P(tie) from pi = exp(theta) directly (Davidson 1970)."""
    pi_i, pi_j, nu = np.exp(d / 2), np.exp(-d / 2), np.exp(lam)
    den = pi_i + pi_j + nu * np.sqrt(pi_i * pi_j)
    return pi_i / den, pi_j / den, nu * np.sqrt(pi_i * pi_j) / den


@pytest.fixture(scope="module")
def votes():
    return simulate_votes(THETA, NU, 600, np.random.default_rng(1), sd_prompt=0.5)


@pytest.fixture(scope="module")
def flat_fit(votes):
    return fit_ratings_bayes(votes, prior_sd=100.0, scale="logit", **SMALL, rng=1)


@pytest.fixture(scope="module")
def pooled_fit(votes):
    return fit_ratings_bayes(votes, **SMALL, rng=2)


@pytest.fixture(scope="module")
def cluster_fit(votes):
    with warnings.catch_warnings():     # a small fit: its ESS need not reach 400
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit_ratings_bayes(votes, cluster="prompt", **SMALL, rng=3)


# --- the likelihood and the cells ----------------------------------------------------------------

def test_cell_loglik_is_the_sum_of_per_vote_log_probabilities():
    rng = np.random.default_rng(0)
    d, lam = rng.normal(0, 2, 50), 0.3
    counts = rng.integers(0, 5, (50, 3)).astype(float)
    p_i, p_j, p_t = davidson_probabilities(d, lam)
    direct = counts[:, 0] * np.log(p_i) + counts[:, 1] * np.log(p_j) + counts[:, 2] * np.log(p_t)
    np.testing.assert_allclose(cell_loglik(d, lam, counts, True), direct, rtol=1e-12)
    p = 1 / (1 + np.exp(-d))              # a tie: half a win and half a loss
    half = ((counts[:, 0] + counts[:, 2] / 2) * np.log(p)
            + (counts[:, 1] + counts[:, 2] / 2) * np.log1p(-p))
    np.testing.assert_allclose(cell_loglik(d, 0.0, counts, False), half, rtol=1e-12)


def test_cell_loglik_in_pytensor_equals_numpy():
    import pytensor.tensor as pt

    rng = np.random.default_rng(1)
    d, counts = rng.normal(0, 2, 20), rng.integers(0, 4, (20, 3)).astype(float)
    for davidson in (True, False):
        sym = cell_loglik(pt.as_tensor_variable(d), pt.as_tensor_variable(-0.2),
                          pt.as_tensor_variable(counts), davidson).eval()
        np.testing.assert_allclose(sym, cell_loglik(d, -0.2, counts, davidson), rtol=1e-12)


def _read(df, cluster=None):
    return read_votes(df, model_a="model_a", model_b="model_b", winner="winner",
                      outcomes=None, cluster=cluster, drop_ties=False)


def test_cells_count_every_vote_whatever_the_row_order(votes):
    cells = cells_of(_read(votes, "prompt"))
    assert cells.counts.sum() == len(votes)
    assert np.all(np.diff(cells.g) >= 0)            # sorted by cluster
    per_prompt = votes.groupby("prompt").size().to_numpy()
    np.testing.assert_array_equal(np.bincount(cells.g, cells.counts.sum(axis=1)), per_prompt)
    shuffled = cells_of(_read(votes.sample(frac=1.0, random_state=3), "prompt"))
    for name in ("g", "i", "j", "counts"):
        np.testing.assert_array_equal(getattr(shuffled, name), getattr(cells, name))
    plain = cells_of(_read(votes))
    assert plain.n_clusters == 1
    assert plain.counts.sum() == len(votes)


# --- the posterior against the maximum likelihood ------------------------------------------------

def test_flat_prior_posterior_mean_is_close_to_the_mle(votes, flat_fit):
    mle = fit_ratings(votes, scale="logit")
    post = flat_fit.ratings()
    mean = post.mean(("chain", "draw")).values
    # the posterior mean differs from the mode by O(1/n); here within 0.15 SE
    assert np.all(np.abs(mean - mle.rating.values) < 0.15 * mle.se.values)
    sd = post.std(("chain", "draw")).values
    np.testing.assert_allclose(sd, mle.se.values, rtol=0.25)
    log_nu = np.log(flat_fit.tie_parameter.values)
    se_log_nu = float(mle.tie_se) / float(mle.tie_parameter)
    assert abs(np.median(log_nu) - np.log(float(mle.tie_parameter))) < 0.2 * se_log_nu
    assert flat_fit.config["prior"].startswith("theta ~ ZeroSumNormal(100)")


@pytest.mark.parametrize("ties", ["half", "drop"])
def test_flat_prior_matches_the_mle_with_ties_half_or_dropped(votes, ties):
    mle = fit_ratings(votes, ties=ties, scale="logit")
    fit = fit_ratings_bayes(votes, ties=ties, prior_sd=100.0, scale="logit", **SMALL, rng=6)
    mean = fit.ratings().mean(("chain", "draw")).values
    assert np.all(np.abs(mean - mle.rating.values) < 0.15 * mle.se.values)
    assert np.isnan(fit.tie_parameter).all()
    assert "nan_reason" in fit.tie_parameter.attrs
    assert fit.data.n_ties_dropped == (int((votes["winner"] == "tie").sum())
                                       if ties == "drop" else 0)


def test_ratings_sum_to_zero_on_the_logit_scale(flat_fit, pooled_fit):
    np.testing.assert_allclose(flat_fit.ratings().sum("model"), 0.0, atol=1e-9)
    np.testing.assert_allclose(pooled_fit.posterior["theta"].sum("model"), 0.0, atol=1e-9)
    elo = pooled_fit.ratings().mean("model")
    np.testing.assert_allclose(elo, 1000.0, atol=1e-6)   # Elo: the mean rating is 1000


def test_partial_pooling_shrinks_towards_the_mean(flat_fit, pooled_fit):
    elo = 400 / np.log(10)
    flat = flat_fit.ratings().mean(("chain", "draw")).values
    pooled = (pooled_fit.ratings().mean(("chain", "draw")).values - 1000.0) / elo
    assert np.sum(pooled ** 2) < np.sum(flat ** 2)
    assert "partial pooling" in pooled_fit.config["prior"]


# --- the fit surface -----------------------------------------------------------------------------

def test_rank_probabilities_are_evaluq_ranks_of_the_draws(pooled_fit):
    ranks = pooled_fit.rank_probabilities()
    direct = rank_distribution(pooled_fit.ratings(), sample_dims=("chain", "draw"),
                               higher_is_better=True)
    np.testing.assert_allclose(ranks["p_best"], direct["p_best"])
    np.testing.assert_allclose(ranks["probability"], direct["probability"])
    assert float(ranks["p_best"].sum()) == pytest.approx(1.0)
    assert ranks["p_best"].idxmax().item() == "m3"           # the strongest model
    board = leaderboard(pooled_fit.ratings(), sample_dims=("chain", "draw"))
    assert board.index[0] == "m3"


def test_pairwise_differences_with_a_rope(pooled_fit):
    out = pooled_fit.pairwise_differences(rope=20.0)
    total = out["p_below"] + out["p_rope"] + out["p_above"]
    np.testing.assert_allclose(total, 1.0)
    draws = pooled_fit.ratings()
    diff = draws.sel(model="m3") - draws.sel(model="m4")
    assert float(out["p_above"].sel(model="m3", model_b="m4")) == pytest.approx(
        float((diff > 20.0).mean()))
    assert out.attrs["rope"] == 20.0


def test_diagnostics_and_repr(pooled_fit):
    table = pooled_fit.diagnostics()
    assert {"theta", "nu", "sigma_theta"} <= set(table.index.get_level_values("quantity"))
    assert table["r_hat"].max() < 1.01
    assert table.attrs["problems"] == []
    text = repr(pooled_fit)
    assert "RatingsFit(6 models, 600 votes; ties='davidson'" in text
    assert "nu " in text
    assert "sum-zero" in text


def test_save_and_load_round_trip(pooled_fit, cluster_fit, tmp_path):
    path = tmp_path / "ratings.nc"
    pooled_fit.save(path)
    back = load_ratings_fit(path)
    np.testing.assert_array_equal(back.ratings(), pooled_fit.ratings())
    np.testing.assert_array_equal(back.tie_parameter, pooled_fit.tie_parameter)
    assert back.config == pooled_fit.config
    for name in ("g", "i", "j", "counts"):
        np.testing.assert_array_equal(getattr(back.data.cells, name),
                                      getattr(pooled_fit.data.cells, name))
    assert list(back.data.models) == list(pooled_fit.data.models)
    np.testing.assert_allclose(back.rank_probabilities()["p_best"],
                               pooled_fit.rank_probabilities()["p_best"])
    clustered = tmp_path / "clustered.nc"
    cluster_fit.save(clustered)
    again = load_ratings_fit(clustered)
    np.testing.assert_array_equal(again.ratings("benchmark"), cluster_fit.ratings("benchmark"))
    assert again.data.clusters is not None
    assert cluster_fit.data.clusters is not None
    assert list(again.data.clusters) == [str(c) for c in cluster_fit.data.clusters]
    assert again.data.cells.n_clusters == 40
    other = tmp_path / "other.nc"
    pd.DataFrame({"x": [1]}).to_xarray().to_netcdf(other)
    with pytest.raises(ValueError, match="RatingsFit.save"):
        load_ratings_fit(other)


def test_same_rng_gives_the_same_draws(votes, flat_fit):
    again = fit_ratings_bayes(votes, prior_sd=100.0, scale="logit", **SMALL, rng=1)
    np.testing.assert_array_equal(again.ratings(), flat_fit.ratings())
    other = fit_ratings_bayes(votes, prior_sd=100.0, scale="logit", **SMALL, rng=7)
    assert not np.array_equal(other.ratings(), flat_fit.ratings())


def test_too_few_draws_warn_a_convergence_warning(votes):
    with pytest.warns(ConvergenceWarning, match="ESS"):
        fit_ratings_bayes(votes, prior_sd=100.0, scale="logit", draws=10, tune=10, rng=1)


# --- bad input as fit_ratings --------------------------------------------------------------------

@pytest.mark.parametrize(("change", "match", "ties"), [
    (lambda df: df.assign(model_b=df["model_a"]), "same model", "auto"),
    (lambda df: df.assign(winner="left"), "not a winner", "auto"),
    (lambda df: df.assign(winner=np.where(df["winner"] == "tie", "model_a", df["winner"])),
     "no tie", "davidson"),
    (lambda df: pd.DataFrame({"model_a": ["a", "c"], "model_b": ["b", "d"],
                              "winner": ["tie", "model_a"]}), "disconnected", "auto"),
])
def test_bad_votes_are_refused_as_by_fit_ratings(votes, change, match, ties):
    bad = change(votes.copy())
    with pytest.raises(ValueError, match=match):
        fit_ratings(bad, ties=ties)
    with pytest.raises(ValueError, match=match):
        fit_ratings_bayes(bad, ties=ties)


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"ties": "newman"}, ValueError), ({"scale": "glicko"}, ValueError),
    ({"prior_sd": 0.0}, ValueError), ({"draws": 0}, ValueError), ({"chains": 1.5}, TypeError),
])
def test_bad_arguments_name_the_argument(votes, kwargs, error):
    name = next(iter(kwargs))
    with pytest.raises(error, match=name):
        fit_ratings_bayes(votes, **kwargs)


def test_a_model_that_never_wins_gets_a_finite_rating_under_the_prior(votes):
    lost = votes.copy()
    beaten = (lost["model_a"] == "m4") | (lost["model_b"] == "m4")
    lost.loc[beaten, "winner"] = np.where(lost.loc[beaten, "model_a"] == "m4", "model_b",
                                          "model_a")
    with pytest.raises(ValueError, match="infinite"):
        fit_ratings(lost)
    with warnings.catch_warnings():     # its rating's long lower tail mixes slowly
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_ratings_bayes(lost, **SMALL, rng=4)
    draws = fit.ratings().sel(model="m4")
    assert np.all(np.isfinite(draws))
    assert float(fit.rank_probabilities()["expected_rank"].sel(model="m4")) > 5.9
    assert "HalfNormal" in fit.config["prior"]


# --- cluster effects and PSIS-LOO ----------------------------------------------------------------

def test_cluster_fit_scopes(cluster_fit, pooled_fit):
    assert cluster_fit.SCOPES == ("population", "benchmark")
    pop, bench = cluster_fit.ratings("population"), cluster_fit.ratings("benchmark")
    assert not np.allclose(pop, bench)
    # the benchmark scope leaves out the new prompt's deviation: narrower intervals
    assert float(bench.std(("chain", "draw")).mean()) < float(pop.std(("chain", "draw")).mean())
    np.testing.assert_array_equal(pooled_fit.ratings("benchmark"),
                                  pooled_fit.ratings("population"))
    sigma = cluster_fit.posterior["sigma_cluster"]
    assert 0.1 < float(sigma.mean()) < 1.0              # simulated at 0.5
    assert "sigma_cluster" in repr(cluster_fit)


def test_iid_loglik_per_cluster_is_a_sum_over_its_votes(votes, pooled_fit, cluster_fit):
    units = cluster_fit.data.cells
    ll = pointwise_loglik(pooled_fit, units)                    # (draw, cluster)
    theta = pooled_fit.posterior["theta"].values.reshape(-1, 6)[:5]
    lam = np.log(pooled_fit.posterior["nu"].values.ravel()[:5])
    a = votes["model_a"].str[1:].astype(int).to_numpy()
    b = votes["model_b"].str[1:].astype(int).to_numpy()
    p_a, p_b, p_t = davidson_probabilities(theta[:, a] - theta[:, b], lam[:, None])
    w = votes["winner"].to_numpy()
    per_vote = np.log(np.where(w == "model_a", p_a, np.where(w == "model_b", p_b, p_t)))
    g = votes["prompt"].to_numpy()
    direct = np.stack([per_vote[:, g == k].sum(axis=1) for k in np.unique(g)], axis=1)
    np.testing.assert_allclose(ll[:5], direct, rtol=1e-10)


def test_a_left_out_cluster_is_integrated_over_its_effects(cluster_fit):
    """Units of one pair: the integral over x = z_i - z_j ~ N(0, 2) by Gauss-Hermite."""
    units = Cells(g=np.arange(3), i=np.array([0, 1, 3]), j=np.array([4, 2, 5]),
                  counts=np.array([[5.0, 3.0, 2.0], [0.0, 1.0, 0.0], [2.0, 2.0, 6.0]]),
                  n_clusters=3)
    ll, mc_se = pointwise_loglik(cluster_fit, units, return_mc_se=True)
    theta = cluster_fit.posterior["theta"].values.reshape(-1, 6)
    lam = np.log(cluster_fit.posterior["nu"].values.ravel())
    sigma = cluster_fit.posterior["sigma_cluster"].values.ravel()
    x, wts = np.polynomial.hermite_e.hermegauss(80)            # weight exp(-x^2 / 2)
    d = (theta[:, units.i] - theta[:, units.j])[:, :, None] + sigma[:, None, None] * (
        np.sqrt(2.0) * x)
    p_i, p_j, p_t = davidson_probabilities(d, lam[:, None, None])
    c = units.counts[:, :, None]
    lik = np.exp(c[:, 0] * np.log(p_i) + c[:, 1] * np.log(p_j) + c[:, 2] * np.log(p_t))
    exact = np.log((lik * wts / wts.sum()).sum(axis=-1))
    assert np.all(np.abs(ll - exact) < 5 * mc_se + 1e-3)
    assert np.median(mc_se) < 0.01


def test_a_real_cluster_integral_equals_brute_force_monte_carlo(cluster_fit):
    """A prompt's 15-odd votes over six models: 200,000 draws of its effects from the prior."""
    units = cluster_fit.data.cells
    ll, mc_se = pointwise_loglik(cluster_fit, units, return_mc_se=True)
    theta = cluster_fit.posterior["theta"].values.reshape(-1, 6)
    lam = np.log(cluster_fit.posterior["nu"].values.ravel())
    sigma = cluster_fit.posterior["sigma_cluster"].values.ravel()
    rows = units.g == 0
    rng = np.random.default_rng(5)
    for k in (0, 500):
        z = rng.standard_normal((200_000, 6)) * sigma[k]
        d = theta[k, units.i[rows]] - theta[k, units.j[rows]] + z[:, units.i[rows]] \
            - z[:, units.j[rows]]
        log_lik = cell_loglik(d, lam[k], units.counts[rows], True).sum(axis=-1)
        w = np.exp(log_lik - log_lik.max())
        brute, brute_se = log_lik.max() + np.log(w.mean()), w.std() / w.mean() / np.sqrt(w.size)
        assert abs(ll[k, 0] - brute) < 5 * (mc_se[k, 0] + brute_se) + 1e-4


def test_compare_clustered_and_iid_by_whole_clusters(cluster_fit, pooled_fit):
    table = compare_ratings_fits({"clustered": cluster_fit, "iid": pooled_fit})
    assert set(table.index) == {"clustered", "iid"}
    assert "whole cluster of 'prompt'" in table.attrs["unit"]
    assert table.attrs["n_units"] == 40
    assert {"elpd", "elpd_diff", "se", "dse", "pareto_k_above_0.7",
            "mc_se_max"} <= set(table.columns)
    assert table["mc_se_max"]["clustered"] < 0.1
    assert table["mc_se_max"]["iid"] == 0.0
    assert np.all(np.isfinite(table["elpd"]))


def test_compare_refuses_other_votes_and_other_tie_rules(votes, flat_fit, pooled_fit):
    half = fit_ratings_bayes(votes, ties="half", **SMALL, rng=5)
    with pytest.raises(ValueError, match="ties"):
        compare_ratings_fits({"davidson": pooled_fit, "half": half})
    flipped = votes.copy()                     # one winner changed: the same cells' shape
    flipped.loc[0, "winner"] = "tie" if votes.loc[0, "winner"] != "tie" else "model_a"
    other = fit_ratings_bayes(flipped, **SMALL, rng=5)
    with pytest.raises(ValueError, match="other votes"):
        compare_ratings_fits({"all": pooled_fit, "flipped": other})
    with pytest.raises(TypeError, match="fit_ratings_bayes"):
        compare_ratings_fits({"a": pooled_fit, "b": "fit"})  # type: ignore[dict-item]
    table = compare_ratings_fits({"flat": flat_fit, "pooled": pooled_fit})
    assert table.attrs["unit"] == "one vote"
    assert table.attrs["n_units"] == len(votes)


# --- calibration ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_posterior_intervals_cover_the_truth_drawn_from_the_prior():
    """100 arenas (5 models, 300 votes, Davidson ties; CALIBRATION lines for
    scripts/calibration_table.py), every truth drawn from the default prior (an arena without
    a tie, which ties="davidson" refuses, is drawn again): 90% intervals of the 500
    strengths, 1,000 differences and 100 tie parameters cover 90% within binomial error; one
    compiled model, 100 fits of 300 draws x 2 chains (~15 s)."""
    rng = np.random.default_rng(2026)
    hits: dict[str, list[bool]] = {"strength": [], "difference": [], "log_nu": []}
    n_warned, upper = 0, np.triu_indices(5, 1)
    while len(hits["log_nu"]) < 100:
        sigma = abs(rng.normal(0.0, 1.0))
        e = rng.normal(0.0, 1.0, 5)
        theta, log_nu = sigma * (e - e.mean()), rng.normal(0.0, 1.5)
        df = simulate_votes(theta, np.exp(log_nu), 300, rng)
        if (df["winner"] == "tie").all() or not (df["winner"] == "tie").any():
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            fit = fit_ratings_bayes(df, scale="logit", draws=300, tune=300,
                                    rng=int(rng.integers(1 << 30)))
        n_warned += bool(caught)
        draws = fit.ratings().stack(s=("chain", "draw")).values       # (model m0..m4, sample)
        lo, hi = np.quantile(draws, [0.05, 0.95], axis=1)
        hits["strength"] += list((lo <= theta) & (theta <= hi))
        dlo, dhi = np.quantile(draws[:, None] - draws[None], [0.05, 0.95], axis=-1)
        true_d = theta[:, None] - theta[None, :]
        hits["difference"] += list(((dlo <= true_d) & (true_d <= dhi))[upper])
        nlo, nhi = np.quantile(np.log(fit.tie_parameter.values), [0.05, 0.95])
        hits["log_nu"].append(bool(nlo <= log_nu <= nhi))
    cover = {k: float(np.mean(v)) for k, v in hits.items()}
    for name, value in cover.items():
        n = len(hits[name])
        print(f"\nCALIBRATION | fit_ratings_bayes, Davidson, 5 models x 300 votes, truth from "
              f"the prior: {name} | coverage of 90% equal-tailed intervals | nominal 0.900 | "
              f"measured {value:.4f} | n {n} | binomial SE {np.sqrt(0.09 / n):.4f}")
    print(f"{n_warned} of 100 fits warned (ESS < 400 of 600 draws)")
    for name, inflate in (("strength", 1.5), ("difference", 2.0), ("log_nu", 1.0)):
        assert abs(cover[name] - 0.9) < 3.5 * inflate * np.sqrt(0.09 / len(hits[name]))


@pytest.mark.slow
def test_flat_prior_on_llmfao_is_close_to_evalica_newman():
    """LLMFAO (8,931 crowd votes, 59 models; tests/data/llmfao): the flat-prior posterior
    mean of the sum-zero log strengths against evalica 0.4.2's converged newman anchor
    (benchmarks/anchors/evalica_reference.json) and fit_ratings' SEs; nu against 2 v."""
    import json
    from pathlib import Path

    root = Path(__file__).parents[1]
    anchor = json.loads((root / "benchmarks" / "anchors" / "evalica_reference.json")
                        .read_text())["newman"]["converged"]
    df = pd.read_csv(root / "tests" / "data" / "llmfao" / "llmfao.csv")
    cols: dict[str, Any] = {"model_a": "left", "model_b": "right",
                            "outcomes": {"left": "model_a", "right": "model_b",
                                         "tie": "tie"}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_ratings_bayes(df, **cols, prior_sd=100.0, scale="logit", draws=500,
                                tune=500, rng=0)
    mle = fit_ratings(df, **cols, scale="logit")
    peer = pd.Series(anchor["log_scores_sum_zero"]).loc[mle.rating["model"].values].to_numpy()
    mean = fit.ratings().mean(("chain", "draw")).values
    gap = np.abs(mean - peer) / mle.se.values
    print(f"LLMFAO flat prior: max |posterior mean - evalica| = {gap.max():.3f} SE; nu "
          f"{float(fit.tie_parameter.mean()):.4f} vs evalica 2 v = {anchor['davidson_nu']:.4f}")
    assert gap.max() < 0.2
    log_nu = np.log(fit.tie_parameter.values)
    se_log_nu = float(mle.tie_se) / float(mle.tie_parameter)
    # the marginal posterior of nu integrates over 58 strengths (measured 0.24 SE from the
    # joint maximum, the likelihood's nuisance-parameter offset)
    assert abs(np.median(log_nu) - np.log(anchor["davidson_nu"])) < 0.35 * se_log_nu


@pytest.mark.slow
def test_cluster_effects_intervals_cover_the_truth_drawn_from_the_prior():
    """40 arenas of 5 models x 300 votes on 20 prompts, prompt x model effects and every
    other truth drawn from the default prior: 90% intervals of the population strengths and
    of sigma_cluster cover 90% within binomial error (one compiled model, ~25 s)."""
    rng = np.random.default_rng(3)
    hits: dict[str, list[bool]] = {"strength": [], "sigma_cluster": []}
    while len(hits["sigma_cluster"]) < 40:
        sigma = abs(rng.normal(0.0, 1.0))
        e = rng.normal(0.0, 1.0, 5)
        theta, sigma_c = sigma * (e - e.mean()), abs(rng.normal(0.0, 0.5))
        df = simulate_votes(theta, np.exp(rng.normal(0.0, 1.5)), 300, rng, n_prompts=20,
                            sd_prompt=sigma_c)   # iid effects: their mean over models is moot
        ties = df["winner"] == "tie"
        if ties.all() or not ties.any() or df["prompt"].nunique() < 20:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = fit_ratings_bayes(df, cluster="prompt", scale="logit", draws=300, tune=300,
                                    rng=int(rng.integers(1 << 30)))
        draws = fit.ratings().stack(s=("chain", "draw")).values
        lo, hi = np.quantile(draws, [0.05, 0.95], axis=1)
        hits["strength"] += list((lo <= theta) & (theta <= hi))
        slo, shi = np.quantile(fit.posterior["sigma_cluster"].values, [0.05, 0.95])
        hits["sigma_cluster"].append(bool(slo <= sigma_c <= shi))
    for name, values in hits.items():
        n, rate = len(values), float(np.mean(values))
        print(f"\nCALIBRATION | fit_ratings_bayes, cluster effects, 5 models x 300 votes on 20 "
              f"prompts, truth from the prior: {name} | coverage of 90% equal-tailed "
              f"intervals | nominal 0.900 | measured {rate:.4f} | n {n} | binomial SE "
              f"{np.sqrt(0.09 / n):.4f}")
        assert abs(rate - 0.9) < 3.5 * 1.5 * np.sqrt(0.09 / n)

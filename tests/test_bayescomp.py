"""Tests of eq.bayesian_signed_rank and eq.correlated_t_test against baycomp's numbers.

The reference numbers come from baycomp 1.0.3 run in its own env by
``benchmarks/anchors/run_baycomp.py``; evaluq never imports baycomp.

Tolerances. The correlated t-test's probabilities are closed form (Student-t CDF): 1e-12. The
signed-rank test's are Monte Carlo shares of posterior draws. (1) Given baycomp's own Dirichlet
weights (rebuilt exactly with ``np.random.RandomState(random_state).dirichlet``, as baycomp
draws them) evaluq's kernel gives baycomp's probabilities and samples to 1e-12. (2) With its own
generator, evaluq's share p_hat and baycomp's p_ref are two independent binomial estimates of
the same p from n = 50 000 draws each, so p_hat - p_ref has SD sqrt(2 p (1 - p) / n); the test
allows 5 such SDs, with p (1 - p) floored at 1/n so that a probability estimated as 0 still
leaves room for a few draws (the widest, at p = 1/2: 0.0158).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.field.bayescomp import (
    _correlated_t_statistics,
    _signed_rank_samples,
    _t_probabilities,
    _winner_probabilities,
)

ANCHORS = json.loads((Path(__file__).parents[1] / "benchmarks" / "anchors" / "baycomp.json")
                     .read_text())
SIGNED = ANCHORS["signed_rank"]
TTEST = ANCHORS["correlated_t"]


def _pair_cube(x, y) -> xr.Dataset:
    """Two models, one run per language: ``x`` is model "x", ``y`` model "y"."""
    score = np.stack([np.asarray(x, float), np.asarray(y, float)])[:, :, None]
    return eq.from_arrays(score, models=["x", "y"])


def _mc_tolerance(p: float, n: int) -> float:
    return 5 * np.sqrt(2 * max(p * (1 - p), 1 / n) / n)


@pytest.mark.parametrize("case", SIGNED, ids=lambda c: f"rope{c['rope']}-prior{c['prior']}")
def test_signed_rank_kernel_reproduces_baycomp_given_its_weights(case):
    x, y = np.asarray(case["x"], float), np.asarray(case["y"], float)
    alpha = np.ones(x.size + 1)
    alpha[0] = case["prior"]
    weights = np.random.RandomState(case["random_state"]).dirichlet(alpha, case["nsamples"])
    samples = _signed_rank_samples(y - x, weights, case["rope"])
    np.testing.assert_allclose(_winner_probabilities(samples), case["probs"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(samples.mean(axis=0), case["sample_mean"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(samples[:3], case["first_samples"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", SIGNED, ids=lambda c: f"rope{c['rope']}-prior{c['prior']}")
def test_signed_rank_matches_baycomp_within_monte_carlo_error(case):
    res = eq.bayesian_signed_rank(_pair_cube(case["x"], case["y"]), "x", "y", rope=case["rope"],
                                  prior=case["prior"], n_samples=case["nsamples"], rng=1)
    got = [res.p_left, res.p_rope, res.p_right]
    for g, ref in zip(got, case["probs"], strict=True):
        assert abs(g - ref) <= _mc_tolerance(ref, case["nsamples"])
    assert res.distribution.dims == ("region", "sample")
    assert res.distribution.sizes["sample"] == case["nsamples"]


def test_p_left_is_model_scoring_higher():
    """baycomp's order: differences y - x, p_left = P(first argument scores higher)."""
    gen = np.random.default_rng(2)
    a = gen.normal(0.8, 0.02, 20)
    cube = _pair_cube(a, a - 0.05)          # "x" scores higher on every language
    res = eq.bayesian_signed_rank(cube, "x", "y", rope=0.01, rng=0)
    assert res.p_left > 0.99
    swapped = eq.bayesian_signed_rank(cube, "y", "x", rope=0.01, rng=0)
    assert swapped.p_right > 0.99
    low = _pair_cube(a, a - 0.05)
    low.attrs["higher_is_better"] = 0       # an error rate: scoring higher is worse
    assert eq.bayesian_signed_rank(low, "x", "y", rope=0.01, rng=0).p_model_better < 0.01


def test_signed_rank_without_rope_is_symmetric_in_the_two_models():
    """Two identical models with rope=0 gave p_above ~0.75 whichever came first: baycomp's
    left = 1 - right of a right of 0.5 up to rounding, and its argmax gives ties to "left".
    Identical models now give 0.5 / 0.5 (baycomp's own tie rule of its histogram, P(right >
    1/2) + 1/2 P(right = 1/2)), and swapping the models mirrors the result exactly, tied tasks
    or not."""
    s = np.random.default_rng(0).normal(0.7, 0.05, (1, 12, 5))
    same = eq.from_arrays(np.concatenate([s, s]), models=["a", "b"])
    for pair in (("a", "b"), ("b", "a")):
        for seed in range(3):
            res = eq.bayesian_signed_rank(same, *pair, n_samples=5000, rng=seed)
            assert (res.p_above, res.p_rope, res.p_below) == (0.5, 0.0, 0.5)
    gen = np.random.default_rng(4)
    x = gen.normal(0.7, 0.05, 10)
    for y in (x + gen.normal(0, 0.01, 10),                          # no tie
              np.where(np.arange(10) < 6, x, x + 0.01)):            # 6 tied tasks of 10
        cube = _pair_cube(x, y)
        for rope in (0.0, 0.005):
            ab = eq.bayesian_signed_rank(cube, "x", "y", rope=rope, n_samples=4000, rng=7)
            ba = eq.bayesian_signed_rank(cube, "y", "x", rope=rope, n_samples=4000, rng=7)
            assert (ab.p_above, ab.p_rope, ab.p_below) == (ba.p_below, ba.p_rope, ba.p_above)


def test_winner_probabilities_share_ties():
    samples = np.array([[0.5, 0.0, 0.5], [0.2, 0.0, 0.8], [0.4, 0.4, 0.2], [0.1, 0.1, 0.8]])
    np.testing.assert_allclose(_winner_probabilities(samples),
                               [(0.5 + 0.5) / 4, 0.5 / 4, (0.5 + 1 + 1) / 4], rtol=0, atol=0)


@pytest.mark.parametrize("case", TTEST, ids=lambda c: f"n{len(c['x'])}-rope{c['rope']}"
                         f"-runs{c['runs']}")
def test_correlated_t_matches_baycomp_closed_form(case):
    x, y = np.asarray(case["x"], float), np.asarray(case["y"], float)
    mean, var, df = _correlated_t_statistics(x, y, case["runs"])
    np.testing.assert_allclose([mean, var], [case["mean"], case["var"]], rtol=1e-12, atol=1e-15)
    assert df == case["df"]
    res = eq.correlated_t_test(x, y, rope=case["rope"], runs=case["runs"], rng=0)
    probs = case["probs"]
    if len(probs) == 2:                     # baycomp without a rope: (p_left, p_right)
        probs = [probs[0], 0.0, probs[1]]
    np.testing.assert_allclose([res.p_left, res.p_rope, res.p_right], probs, rtol=1e-12,
                               atol=1e-15)


def test_correlated_t_baycomp_suite_statistics():
    """baycomp's tests/test_single.py::test_compute_statistics, re-derived."""
    x, y = np.array([4.0, 2, 6]), np.array([5.0, 7, 3])
    assert _correlated_t_statistics(x, y, 1) == (1, (4 ** 2 + 4 ** 2) / 2 * (1 / 3 + 1 / 2), 2)
    x, y = np.array([4.0, 2, 6, 4]), np.array([5.0, 7, 3, 5])
    assert _correlated_t_statistics(x, y, 2) == (1, (4 ** 2 + 4 ** 2) / 3 * (1 / 4 + 1), 3)
    assert _correlated_t_statistics(np.ones(10), np.zeros(10), 1) == (-1, 0, 9)
    # test_probs_var_0
    assert _t_probabilities(42, 0, 1, 2).tolist() == [0, 0, 1]
    assert _t_probabilities(-42, 0, 1, 2).tolist() == [1, 0, 0]
    assert _t_probabilities(0, 0, 1, 0).tolist() == [0.5, 0, 0.5]


def test_correlated_t_samples_and_interval():
    a = np.linspace(0.80, 0.82, 10)
    res = eq.correlated_t_test(a, a[::-1] - 0.01, rope=0.005, n_samples=20000, rng=3)
    from scipy import stats

    lo, hi = stats.t.interval(0.9, res.attrs["df"], res.attrs["mean"], np.sqrt(res.attrs["var"]))
    ci = res.confidence_interval(0.9).values
    np.testing.assert_allclose(ci, [lo, hi], atol=5 * np.sqrt(res.attrs["var"]) * 0.02)
    swapped = eq.correlated_t_test(a[::-1] - 0.01, a, rope=0.005, rng=3)
    np.testing.assert_allclose([swapped.p_left, swapped.p_right], [res.p_right, res.p_left],
                               rtol=1e-12)


# --- bad input ---------------------------------------------------------------------------------


def test_signed_rank_nan_runs_and_ties():
    score = np.array([[[0.8, np.nan], [0.7, 0.7], [0.6, 0.6]],
                      [[0.8, 0.8], [0.6, 0.6], [0.6, 0.6]]])
    with pytest.warns(EvaluqWarning, match="over 3 language"):
        res = eq.bayesian_signed_rank(eq.from_arrays(score, models=["x", "y"]), "x", "y",
                                      rope=0.0, n_samples=1000, rng=0)
    np.testing.assert_allclose(res.p_left + res.p_rope + res.p_right, 1.0)
    same = eq.bayesian_signed_rank(_pair_cube(np.ones(6), np.ones(6)), "x", "y", rope=0.01,
                                   n_samples=1000, rng=0)
    assert same.p_rope == 1.0


def test_signed_rank_bad_input():
    cube = _pair_cube(np.arange(4.0), np.arange(4.0) + 1)
    with pytest.raises(CubeError, match=r"`model_b` must be a model of the cube"):
        eq.bayesian_signed_rank(cube, "x", "z")
    with pytest.raises(ValueError, match="`model_b` must differ from `model`; got 'x'"):
        eq.bayesian_signed_rank(cube, "x", "x")
    with pytest.raises(ValueError, match=r"`rope` must be in \[0, inf\]; got -1"):
        eq.bayesian_signed_rank(cube, "x", "y", rope=-1.0)
    with pytest.raises(ValueError, match=r"`prior` must be in \(0, inf\]; got 0"):
        eq.bayesian_signed_rank(cube, "x", "y", prior=0.0)
    with pytest.raises(ValueError, match="`n_samples` must be >= 1; got 0"):
        eq.bayesian_signed_rank(cube, "x", "y", n_samples=0)
    score = np.ones((2, 3, 1))
    score[1, 2, 0] = np.nan
    with pytest.raises(CubeError, match="no score for 1"):
        eq.bayesian_signed_rank(eq.from_arrays(score, models=["x", "y"]), "x", "y")


def test_correlated_t_bad_input():
    a = np.linspace(0, 1, 10)
    with pytest.raises(ValueError, match="must hold the same folds; got 10 and 9"):
        eq.correlated_t_test(a, a[:9])
    with pytest.raises(ValueError, match="`runs` must divide the 10 fold scores"):
        eq.correlated_t_test(a, a, runs=3)
    with pytest.raises(ValueError, match="`runs` must divide the 10 fold scores"):
        eq.correlated_t_test(a, a, runs=10)
    with pytest.raises(ValueError, match=r"`scores_a` must be finite; got 1 NaN"):
        eq.correlated_t_test(np.r_[a[:9], np.nan], a)
    with pytest.raises(ValueError, match=r"`scores_b` must be one-dimensional"):
        eq.correlated_t_test(a, np.ones((2, 5)))


def test_result_conversions():
    res = eq.bayesian_signed_rank(_pair_cube(np.arange(6.0), np.arange(6.0) + 0.5), "x", "y",
                                  rope=0.1, n_samples=500, rng=0)
    assert "p_above=" in repr(res)
    assert "p_below=" in repr(res)
    assert list(res.to_dataframe().columns[:2]) == ["model", "model_b"]
    assert set(res.to_dataset().data_vars) == {"probability", "samples", "p_below", "p_rope",
                                               "p_above", "p_left", "p_right"}
    assert res.confidence_interval().dims == ("region", "ci_bound")


# --- the hierarchical test (baycomp's Stan model, here in PyMC) --------------------------------

HIER = json.loads((Path(__file__).parents[1] / "benchmarks" / "anchors"
                   / "baycomp_hierarchical.json").read_text())


def test_exchangeable_loglik_is_baycomps_stan_likelihood():
    """Term for term the Stan program's logLik, with M^-1 built from its adjugate formula."""
    pt = pytest.importorskip("pytensor.tensor")
    from evaluq.field.bayescomp import _exchangeable_loglik

    gen = np.random.default_rng(0)
    for n, rho in ((10, 0.1), (10, 0.2), (4, 0.25)):
        d, s = gen.normal(size=(3, n)), np.array([0.5, 1.0, 2.0])
        got = _exchangeable_loglik(pt.as_tensor_variable(d), pt.as_tensor_variable(s), rho,
                                  n).eval()
        det_m = (1 + (n - 1) * rho) * (1 - rho) ** (n - 1)
        inv_m = np.where(np.eye(n) == 1, (1 + (n - 2) * rho) * (1 - rho) ** (n - 2),
                         -rho * (1 - rho) ** (n - 2)) / det_m
        quad = np.einsum("ij,jk,ik->i", d, inv_m, d)
        ref = -0.5 * (2 * n * np.log(s) + np.log(det_m)) - 0.5 * n * np.log(6.283) \
            - 0.5 * quad / s ** 2
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_hierarchical_data_is_baycomps_scaling():
    from evaluq.field.bayescomp import _hierarchical_data

    case = HIER["cases"][2]
    diff = np.asarray(case["y"]) - np.asarray(case["x"])
    scaled, rope, const = _hierarchical_data(diff.copy(), case["rope"], case["runs"],
                                            np.random.default_rng(0))
    std_diff = np.mean(np.std(diff, axis=1))
    np.testing.assert_allclose(rope, case["rope"] / std_diff, rtol=1e-12)
    assert np.var(scaled[2]) > 0                  # the constant data set was filled
    np.testing.assert_allclose(scaled[2, :5], -scaled[2, 5:], rtol=1e-12)
    assert np.all(np.abs(scaled[2]) <= rope)
    np.testing.assert_allclose(scaled[[0, 1, 3, 4, 5]], diff[[0, 1, 3, 4, 5]] / std_diff,
                               rtol=1e-12)
    assert const["rho"] == 1 / 5


def _winner_ess(res) -> float:
    """The smallest effective sample size of the three winner indicators (chains x draws)."""
    az = pytest.importorskip("arviz")
    samples = res.distribution.values.T
    win = np.argmax(samples, axis=1)
    shape = (res.attrs["chains"], res.attrs["draws"])
    ess = [float(az.ess((win == k).astype(float).reshape(shape)))
           for k in range(3) if 0 < np.mean(win == k) < 1]
    return min(ess) if ess else float(win.size)


@pytest.mark.slow
@pytest.mark.parametrize("index", [0, 2], ids=["rope0.01-runs1", "rope0.005-runs2-constant-row"])
def test_hierarchical_matches_baycomp_within_mcmc_error(index, monkeypatch):
    """baycomp's probabilities (Stan, 4 x 10 000 draws) against evaluq's (PyMC, 4 x 2000).

    A data set of constant differences is filled with random draws (baycomp's device against a
    zero variance): the test fills it with baycomp's own ``RandomState(0)`` stream, so that
    both fit the same data.

    Tolerance: 5 SDs of the difference of two MCMC estimates of the same p, the SD taken as
    sqrt(p (1 - p) (1 / ESS + 1 / ESS)) with ESS the smallest effective sample size of evaluq's
    three winner indicators (baycomp's run, with 5 times the draws of the same model, has at
    least as many), p (1 - p) floored at 0.01."""
    pytest.importorskip("pymc")
    from evaluq.field import bayescomp

    fill = bayescomp._hierarchical_data
    monkeypatch.setattr(bayescomp, "_hierarchical_data", lambda d, r, runs, gen, upper=1000.0:
                        fill(d, r, runs, np.random.RandomState(0), upper))
    case = HIER["cases"][index]
    cube = eq.from_arrays(np.stack([np.asarray(case["x"]), np.asarray(case["y"])]),
                          models=["x", "y"])
    res = eq.hierarchical_t_test(cube, "x", "y", rope=case["rope"], runs=case["runs"],
                                 draws=2000, tune=1000, chains=4, rng=0)
    ess = _winner_ess(res)
    got = [res.p_left, res.p_rope, res.p_right]
    for g, ref in zip(got, case["probs"], strict=True):
        tol = 5 * np.sqrt(max(ref * (1 - ref), 0.01) * 2 / ess)
        print(f"hierarchical case {index}: evaluq {g:.4f} baycomp {ref:.4f} tol {tol:.4f} "
              f"(ESS {ess:.0f}, divergences {res.attrs['divergences']})")
        assert abs(g - ref) <= tol


def test_hierarchical_bad_input():
    score = np.random.default_rng(1).normal(size=(2, 4, 10))
    cube = eq.from_arrays(score, models=["x", "y"])
    with pytest.raises(ValueError, match="`runs` must divide the 10 folds"):
        eq.hierarchical_t_test(cube, "x", "y", runs=3)
    with pytest.raises(ValueError, match="`lower_alpha` < `upper_alpha`"):
        eq.hierarchical_t_test(cube, "x", "y", lower_alpha=3.0)
    with pytest.raises(CubeError, match="`model_b` must be a model of the cube"):
        eq.hierarchical_t_test(cube, "x", "q")
    with pytest.raises(ValueError, match="`model_b` must differ from `model`"):
        eq.hierarchical_t_test(cube, "x", "x")
    score[1, 0, 3] = np.nan
    with pytest.raises(CubeError, match="1 NaN fold score"):
        eq.hierarchical_t_test(eq.from_arrays(score, models=["x", "y"]), "x", "y")
    with pytest.raises(CubeError, match="at least 2 folds"):
        eq.hierarchical_t_test(eq.from_arrays(score[:, :, :1], models=["x", "y"]), "x", "y")


def test_signed_rank_ignores_other_models_missing_cells():
    gen = np.random.default_rng(4)
    score = gen.normal(size=(3, 6, 2))
    score[2, 1, :] = np.nan                   # a third model misses a language
    cube = eq.from_arrays(score, models=["x", "y", "z"])
    res = eq.bayesian_signed_rank(cube, "x", "y", n_samples=2000, rng=0)
    same = eq.bayesian_signed_rank(cube.sel(model=["x", "y"]), "x", "y", n_samples=2000, rng=0)
    assert res.p_left == same.p_left
    with pytest.raises(CubeError, match="no score for 1"):
        eq.bayesian_signed_rank(cube, "x", "z")


def test_one_rope_vocabulary_with_baycomps_names_as_aliases():
    """p_below / p_rope / p_above of model - model_b, as the fits' pairwise_differences(rope=);
    baycomp's p_left (model scores higher) is p_above and p_right is p_below, everywhere."""
    res = eq.bayesian_signed_rank(_pair_cube(np.arange(8.0) + 1.0, np.arange(8.0)), "x", "y",
                                  rope=0.1, n_samples=2000, rng=0)
    assert res.p_above > 0.9                     # x (model) scores higher by 1
    assert (res.p_left, res.p_right) == (res.p_above, res.p_below)
    assert res.p_below + res.p_rope + res.p_above == pytest.approx(1.0)
    assert res.p_above == float(res.probabilities.sel(region="left"))
    row = res.to_dataframe().iloc[0]
    assert (row["p_above"], row["p_below"]) == (row["p_left"], row["p_right"])
    ds = res.to_dataset()
    assert float(ds["p_above"]) == float(ds["p_left"]) == res.p_above
    assert float(ds["p_below"]) == float(ds["p_right"]) == res.p_below
    t = eq.correlated_t_test([0.9, 0.8, 0.85, 0.9], [0.7, 0.6, 0.65, 0.7], rope=0.01)
    assert t.p_above == t.p_left > 0.9
    assert t.p_below == t.p_right
    assert t.p_model_better == t.p_above
    worse = eq.correlated_t_test([0.9, 0.8, 0.85, 0.9], [0.7, 0.6, 0.65, 0.7], rope=0.01,
                                 higher_is_better=False)
    assert worse.p_model_better == worse.p_below


@pytest.mark.slow   # a fresh process: PyMC's import and the model's compilation
def test_the_hierarchical_test_leaves_nothing_in_tmp_and_prints_no_progress(tmp_path):
    """PyMC's own sampler (the baycomp hierarchical test does not go through nutpie): before,
    each run left PyTensor's generated source in the system temporary directory (44 files
    for one test, never removed) and printed "Sampling 4 chains ..." to the terminal."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"),
           "EVALUQ_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root / "src"),
                                                        os.environ.get("PYTHONPATH")]))}
    env.pop("PYTHONWARNINGS", None)
    (tmp_path / "tmp").mkdir()
    code = ("import evaluq as eq\n"
            "cube = eq.simulate_cube(n_models=2, n_languages=5, n_seeds=5, rng=1)\n"
            "res = eq.hierarchical_t_test(cube, 'm0', 'm1', rng=0, draws=200, tune=200)\n"
            "print(res.probabilities.sum())\n")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Sampling" not in done.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


def test_signed_rank_over_few_languages_warns():
    """One language gave p_below = 1.0 ("certain") without a word: with rope 0, differences
    all of one sign give that side probability 1 whatever their number. Below 6 languages it
    warns; from 6 on it does not."""
    s = np.random.default_rng(0).random((3, 2, 3))
    with pytest.warns(EvaluqWarning, match=r"over 1 language\(s\).*not certainty.*at least 6"):
        res = eq.bayesian_signed_rank(eq.from_arrays(s[:, :1]), 0, 1, n_samples=2000, rng=0)
    assert res.p_below == 1.0
    x = np.linspace(0.5, 0.8, 6)
    eq.bayesian_signed_rank(_pair_cube(x, x + 0.01), "x", "y", n_samples=500, rng=0)
    with pytest.warns(EvaluqWarning, match="over 5 language"):
        eq.bayesian_signed_rank(_pair_cube(x[:5], x[:5] + 0.01), "x", "y", rope=0.001,
                                n_samples=500, rng=0)


def test_the_pair_is_stored_with_the_cubes_own_labels():
    """attrs['model'] / attrs['model_b'] were str() of the labels: '0' for a cube whose
    models are 0, 1, 2 (eq.from_arrays' default), which cube.sel(model=...) cannot find,
    while the other pairwise results (critical_difference, multi_aso, pairwise_differences)
    keep the cube's labels in their model / model_b coordinates. Now the labels as the cube
    holds them (an integer stays an integer; a numpy integer given becomes the cube's)."""
    x = np.random.default_rng(3).normal(0.7, 0.05, (3, 12, 2))
    cube = eq.from_arrays(x)
    res = eq.bayesian_signed_rank(cube, 0, np.int64(2), n_samples=500, rng=0)
    neighbour = eq.critical_difference(cube).pvalue
    for key, want in (("model", 0), ("model_b", 2)):
        assert type(res.attrs[key]) is int
        assert res.attrs[key] == want
        assert res.attrs[key] in neighbour[key].values.tolist()
    cube.sel(model=[res.attrs["model"], res.attrs["model_b"]])
    assert res.to_dataframe()[["model", "model_b"]].values.tolist() == [[0, 2]]
    assert res.to_dataset().attrs["model"] == 0
    named = eq.bayesian_signed_rank(eq.from_arrays(x, models=["a b", "c", "d"]), "a b", "d",
                                    n_samples=500, rng=0)
    assert (named.attrs["model"], named.attrs["model_b"]) == ("a b", "d")

"""rliable's analyses (issue 19): rliable's numbers, its own test cases, independent loops, bad
input.

Reference numbers come from ``benchmarks/anchors/run_rliable.py`` run once in rliable's own
env (``rliable_reference.json``, versions inside); rliable is not imported here.

Tolerances. Point estimates: 1e-12 (the same formulas). Bootstrap interval ends: each is a
sample quantile of B resamples, whose Monte Carlo SE is ``sqrt(p (1 - p) / B) / f(q_p)``;
with the bootstrap distribution roughly normal of SD ``sigma`` (estimated as the interval's
width / 3.92), ``f(q_0.025) = phi(1.96) / sigma`` and the SE is ``2.67 sigma / sqrt(B)``.
evaluq's and rliable's ends are independent estimates, so they agree within
``4 sqrt(SE_evaluq^2 + SE_rliable^2)``, plus, for statistics on a lattice (profiles: steps of
1 / (tasks x runs); medians and PoI on data with ties), one lattice step, which linear
interpolation between neighbouring atoms can move a quantile by.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.rliable_methods import (
    AGGREGATES,
    improvement_matrix,
    improvement_resampled,
    resampled_aggregates,
    run_counts,
)

REF = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "anchors"
                  / "rliable_reference.json").read_text())
B_EVALUQ = 20000


def cube_of(x: np.ndarray) -> xr.Dataset:
    """A cube from scores (model, task, run)."""
    return eq.from_arrays(np.asarray(x, dtype=float),
                          models=[str(k) for k in range(x.shape[0])], outlier_threshold=None)


def mc_tolerance(ci_a: np.ndarray, b_a: int, b_b: int, step: float = 0.0) -> np.ndarray:
    """Allowed difference of two independent percentile-interval ends (module docstring)."""
    sigma = (ci_a[..., 1] - ci_a[..., 0]) / 3.92
    se = 2.67 * sigma * np.sqrt(1 / b_a + 1 / b_b)
    return (4 * se + step)[..., None]


# --- rliable's own tests (tests/rliable/metrics_test.py, library_test.py) -----------------------

def test_metrics_test_aggregates():
    own = REF["own_tests"]
    for name, runs_by_tasks in (("x", own["x"]), ("y", own["y"]),
                                ("library_x", own["library_x"])):
        est = eq.interval_estimates(cube_of(np.asarray(runs_by_tasks).T[None]), n_resamples=10,
                                    rng=0).estimate.values[0]
        np.testing.assert_allclose(est, own[f"{name}_aggregates"], rtol=0, atol=1e-12)
    # the literal values of metrics_test.py
    x_est = eq.interval_estimates(cube_of(np.asarray(own["x"]).T[None]), n_resamples=10, rng=0)
    assert x_est.estimate.sel(aggregate=["median", "mean", "iqm"]).values.tolist() == [
        [1.5, 1.5, 1.5]]


def test_metrics_test_probability_of_improvement():
    own = REF["own_tests"]
    x, y = np.asarray(own["x"]), np.asarray(own["y"])
    # 4 and 3 runs repeated to 12 each: the mean over pairs of runs is unchanged
    runs = np.stack([np.tile(x, (3, 1)).T, np.tile(y, (4, 1)).T])
    poi = eq.probability_of_improvement(cube_of(runs), n_resamples=10, rng=0)
    assert poi.estimate.values[0, 1] == pytest.approx(own["poi_x_y"], abs=1e-12)
    assert own["poi_x_y"] == pytest.approx(1 / 3)
    lx = np.asarray(own["library_x"])
    poi = eq.probability_of_improvement(cube_of(np.stack([lx.T, np.flip(lx, 0).T])),
                                        n_resamples=10, rng=0)
    assert poi.estimate.values[0, 1] == pytest.approx(own["poi_library_x_y"], abs=1e-12)


def test_library_test_intervals_bracket_the_estimates():
    lx = np.arange(5 * 16).reshape(5, 16)
    cube = cube_of(np.stack([lx.T, np.flip(lx, 0).T]))
    est = eq.interval_estimates(cube, n_resamples=100, rng=0)
    assert (est.ci.sel(ci_bound="lower") < est.estimate).all()
    assert (est.estimate < est.ci.sel(ci_bound="upper")).all()
    poi = eq.probability_of_improvement(cube, n_resamples=100, rng=0)
    lo, hi = poi.ci.values[0, 1]
    assert lo < poi.estimate.values[0, 1] < hi
    prof = eq.performance_profile(cube, [0.0, 0.25, 0.5, 1.0], n_resamples=100, rng=0)
    assert (np.diff(prof.estimate.values, axis=1) <= 0).all()     # non-increasing in tau
    assert prof.ci.shape == (2, 4, 2)


# --- rliable's numbers on the fixed data --------------------------------------------------------

@pytest.mark.parametrize("name", ["normal", "ties"])
@pytest.mark.parametrize("gamma", ["1.0", "0.9"])
def test_interval_estimates_match_rliable(name, gamma):
    x = np.asarray(REF["data"][name])
    ref = REF["results"][name]["interval"][gamma]
    est = eq.interval_estimates(cube_of(x), gamma=float(gamma), n_resamples=B_EVALUQ, rng=1)
    assert list(est.aggregate.values) == REF["aggregates"] == list(AGGREGATES)
    np.testing.assert_allclose(est.estimate.values, ref["estimate"], rtol=0, atol=1e-12)
    rl_ci = np.asarray(ref["ci"])
    step = 1 / (x.shape[1] * x.shape[2]) / 3 if name == "ties" else 0.0
    tol = mc_tolerance(rl_ci, B_EVALUQ, REF["reps"]["interval"], step)
    assert (np.abs(est.ci.values - rl_ci) <= tol).all(), (est.ci.values, rl_ci, tol)
    assert est.ci.attrs["ci_kind"] == "percentile"


@pytest.mark.parametrize("name", ["normal", "ties"])
def test_probability_of_improvement_matches_rliable(name):
    x = np.asarray(REF["data"][name])
    ref = REF["results"][name]["poi"]
    poi = eq.probability_of_improvement(cube_of(x), n_resamples=B_EVALUQ, rng=2)
    n_tasks, n_runs = x.shape[1:]
    for key, value in ref["estimate"].items():
        i, j = map(int, key.split(","))
        assert poi.estimate.values[i, j] == pytest.approx(value, abs=1e-12)
        rl_ci = np.asarray(ref["ci"][key])
        tol = mc_tolerance(rl_ci, B_EVALUQ, REF["reps"]["poi"], 0.5 / (n_tasks * n_runs ** 2))
        assert (np.abs(poi.ci.values[i, j] - rl_ci) <= tol).all(), (key, poi.ci.values[i, j],
                                                                     rl_ci, tol)
    assert np.isnan(poi.estimate.values.diagonal()).all()
    est = poi.estimate.values
    off = ~np.eye(est.shape[0], dtype=bool)
    np.testing.assert_allclose((est + est.T)[off], 1.0)


@pytest.mark.parametrize("name", ["normal", "ties"])
@pytest.mark.parametrize("kind", ["run", "average"])
def test_performance_profile_matches_rliable(name, kind):
    x = np.asarray(REF["data"][name])
    ref = REF["results"][name]["profile"][kind]
    prof = eq.performance_profile(cube_of(x), REF["thresholds"], kind=kind,
                                  n_resamples=B_EVALUQ, rng=3)
    np.testing.assert_allclose(prof.estimate.values, ref["estimate"], rtol=0, atol=1e-12)
    rl_ci = np.asarray(ref["ci"])
    step = 1 / (x.shape[1] * (x.shape[2] if kind == "run" else 1))
    tol = mc_tolerance(rl_ci, B_EVALUQ, REF["reps"]["profile"], step)
    assert (np.abs(prof.ci.values - rl_ci) <= tol).all(), (prof.ci.values, rl_ci, tol)


def test_rliable_versions_are_recorded():
    assert set(REF["versions"]) >= {"rliable", "arch", "numpy"}


# --- the vectorised resamples against explicit loops --------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.int16])
def test_resampled_aggregates_equal_the_resampled_matrices(dtype):
    x = np.random.default_rng(5).normal(0.8, 0.2, size=(2, 7, 5))
    counts = run_counts(np.random.default_rng(6), 4, x.shape, dtype)
    got = resampled_aggregates(x, counts, 0.9, AGGREGATES)
    for b in range(4):
        for k in range(2):
            runs = [np.repeat(x[k, m], counts[b, k, m].astype(int)) for m in range(7)]
            pooled = np.concatenate(runs)
            task_means = np.array([r.mean() for r in runs])
            want = [np.median(task_means), stats.trim_mean(pooled, 0.25), task_means.mean(),
                    0.9 - np.minimum(pooled, 0.9).mean()]
            np.testing.assert_allclose(got[b, k], want, rtol=1e-12)
    assert (counts.sum(axis=-1) == 5).all()


def test_resampled_improvement_equals_mann_whitney():
    x = np.round(np.random.default_rng(7).normal(size=(3, 4, 5)), 1)   # ties
    counts = run_counts(np.random.default_rng(8), 3, x.shape)
    got = improvement_resampled(improvement_matrix(x), counts)
    for b in range(3):
        for i, j in ((0, 1), (2, 0)):
            per_task = []
            for m in range(4):
                a = np.repeat(x[i, m], counts[b, i, m].astype(int))
                c = np.repeat(x[j, m], counts[b, j, m].astype(int))
                u = stats.mannwhitneyu(a, c, alternative="greater").statistic
                per_task.append(u / 25)
            assert got[b, i, j] == pytest.approx(np.mean(per_task), abs=1e-6)


def test_rng_reproducible():
    cube = cube_of(np.random.default_rng(0).normal(size=(2, 3, 4)))
    a = eq.interval_estimates(cube, n_resamples=300, rng=4)
    assert a.identical(eq.interval_estimates(cube, n_resamples=300, rng=4))


# --- eq.aggregate(how="iqm" / "optimality_gap") -------------------------------------------------

def test_aggregate_iqm_and_optimality_gap_are_over_languages():
    x = np.random.default_rng(9).normal(0.8, 0.2, size=(2, 8, 3))
    rs = eq.resample(cube_of(x), n_resamples=50, replication="none", languages="bootstrap",
                     rng=0)
    iqm = eq.aggregate(rs, how="iqm")
    og = eq.aggregate(rs, how="optimality_gap", gamma=0.9)
    seed_means = x.mean(axis=-1)
    np.testing.assert_allclose(iqm.observed, stats.trim_mean(seed_means, 0.25, axis=-1))
    np.testing.assert_allclose(og.observed, 0.9 - np.minimum(seed_means, 0.9).mean(axis=-1))
    assert iqm.attrs["how"] == "iqm"
    assert og.attrs["how"] == "optimality_gap"
    # rliable's pooled IQM is a different quantity
    pooled = eq.interval_estimates(cube_of(x), n_resamples=10, rng=0).estimate.sel(
        aggregate="iqm")
    assert not np.allclose(pooled, iqm.observed)


def test_aggregate_iqm_refuses_skipna():
    x = np.random.default_rng(9).normal(size=(2, 8, 3))
    rs = eq.resample(cube_of(x), n_resamples=5, replication="none", languages="bootstrap",
                     rng=0)
    with pytest.raises(ValueError, match="`skipna=True` is not available for how='iqm'"):
        eq.aggregate(rs, how="iqm", skipna=True)


# --- bad input ----------------------------------------------------------------------------------

def test_single_run_gives_estimates_and_nan_intervals():
    x = np.random.default_rng(0).normal(size=(2, 4, 1))
    est = eq.interval_estimates(cube_of(x), n_resamples=50, rng=0)
    assert np.isfinite(est.estimate).all()
    assert np.isnan(est.ci).all()
    assert "one run" in est.ci.attrs["nan_reason"]
    poi = eq.probability_of_improvement(cube_of(x), n_resamples=50, rng=0)
    assert np.isnan(poi.ci).all()
    assert np.isfinite(poi.estimate.values[0, 1])


def test_task_where_every_model_scores_the_same():
    x = np.random.default_rng(0).normal(size=(3, 2, 4))
    x[:, 1] = 0.7                                  # task 1: every run of every model equal
    poi = eq.probability_of_improvement(cube_of(x), n_resamples=50, rng=0)
    single = eq.probability_of_improvement(cube_of(x[:, :1]), n_resamples=50, rng=0)
    np.testing.assert_allclose(poi.estimate, (single.estimate + 0.5) / 2)


def test_ties_count_one_half():
    x = np.array([[[1.0, 2.0]], [[1.0, 2.0]]])
    poi = eq.probability_of_improvement(cube_of(x), n_resamples=50, rng=0)
    assert poi.estimate.values[0, 1] == 0.5


def test_nan_run_raises():
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    x[1, 2, 0] = np.nan
    with pytest.raises(CubeError, match=r"1 NaN run\(s\), for example model '1', language 2"):
        eq.interval_estimates(cube_of(x), n_resamples=10)


def test_model_missing_a_task_raises():
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    x[0, 1] = np.nan
    with pytest.raises(CubeError, match="model '0' has no score on language .task. 1"):
        eq.probability_of_improvement(cube_of(x), n_resamples=10)
    with pytest.raises(CubeError, match="has no score on language"):
        eq.performance_profile(cube_of(x), [0.0], n_resamples=10)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"aggregates": ("iqm", "max")}, ValueError, "`aggregates` must be one of"),
    ({"aggregates": ()}, ValueError, "`aggregates` must name at least one"),
    ({"aggregates": ("iqm", "iqm")}, ValueError, "`aggregates` must not repeat"),
    ({"gamma": float("nan")}, ValueError, "`gamma` must be finite"),
    ({"n_resamples": 0}, ValueError, "`n_resamples` must be >= 1; got 0"),
    ({"confidence_level": 1.5}, ValueError, r"`confidence_level` must be in \(0, 1\)"),
    ({"rng": "x"}, TypeError, "`rng` must be an int"),
])
def test_interval_estimates_validation(kwargs, error, match):
    cube = cube_of(np.random.default_rng(0).normal(size=(2, 3, 4)))
    with pytest.raises(error, match=match):
        eq.interval_estimates(cube, **kwargs)


def test_profile_and_cube_validation():
    cube = cube_of(np.random.default_rng(0).normal(size=(2, 3, 4)))
    with pytest.raises(ValueError, match="`thresholds` must be a non-empty 1-D"):
        eq.performance_profile(cube, [])
    with pytest.raises(ValueError, match="`kind` must be one of 'run', 'average'; got 'x'"):
        eq.performance_profile(cube, [0.1], kind="x")
    with pytest.raises(TypeError, match="`cube` must be an evaluation cube"):
        eq.probability_of_improvement(cube.score)
    with pytest.raises(CubeError, match=r"`cube.score` must have dims \(model, language, seed"):
        eq.interval_estimates(cube.mean("seed"))


def test_probability_of_improvement_follows_the_orientation():
    x = np.random.default_rng(1).normal(size=(2, 3, 4))
    up = eq.probability_of_improvement(cube_of(x), n_resamples=20, rng=0)
    down_cube = eq.from_arrays(x, models=["0", "1"], higher_is_better=False)
    down = eq.probability_of_improvement(down_cube, n_resamples=20, rng=0)
    assert down.estimate.values[0, 1] == pytest.approx(up.estimate.values[1, 0])
    assert down.attrs["higher_is_better"] == 0

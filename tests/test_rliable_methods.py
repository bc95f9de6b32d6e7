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
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.field.rliable import (
    AGGREGATES,
    _by_run_count,
    _improvement_matrix,
    _improvement_resampled,
    _model_runs,
    _resampled_aggregates,
    _run_counts,
    _stratified_distribution,
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
        scores = np.asarray(runs_by_tasks)
        with warnings.catch_warnings():     # x's scores are all >= gamma = 1: the gap check
            warnings.simplefilter("ignore", eq.errors.ScaleWarning)   # warns, rliable's 0 kept
            est = eq.interval_estimates(cube_of(scores.T[None]), n_resamples=10,
                                        rng=0).estimate.values[0]
        np.testing.assert_allclose(est, own[f"{name}_aggregates"], rtol=0, atol=1e-12)
    # the literal values of metrics_test.py
    with pytest.warns(eq.errors.ScaleWarning, match="every gap is 0"):
        x_est = eq.interval_estimates(cube_of(np.asarray(own["x"]).T[None]), n_resamples=10,
                                      rng=0)
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
    _assert_poi_matches(poi, ref, n_tasks, lambda i, j: n_runs ** 2)
    assert np.isnan(poi.estimate.values.diagonal()).all()


def _assert_poi_matches(poi, ref, n_tasks, run_pairs):
    """rliable's point estimates to 1e-12, its interval ends within Monte Carlo error plus a
    lattice step (1 / (tasks x run pairs of (i, j))), and P(i > j) + P(j > i) = 1."""
    for key, value in ref["estimate"].items():
        i, j = map(int, key.split(","))
        assert poi.estimate.values[i, j] == pytest.approx(value, abs=1e-12)
        rl_ci = np.asarray(ref["ci"][key])
        tol = mc_tolerance(rl_ci, B_EVALUQ, REF["reps"]["poi"],
                           0.5 / (n_tasks * run_pairs(i, j)))
        assert (np.abs(poi.ci.values[i, j] - rl_ci) <= tol).all(), (key, poi.ci.values[i, j],
                                                                     rl_ci, tol)
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
    counts = _run_counts(np.random.default_rng(6), 4, x.shape, dtype)
    got = _resampled_aggregates(x, counts, 0.9, AGGREGATES)
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
    counts = _run_counts(np.random.default_rng(8), 3, x.shape)
    got = _improvement_resampled(_improvement_matrix(x), counts)
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


# --- ragged runs: models with different numbers of runs (NaN at the missing seeds) --------------

def ragged_cube(models: list, labels: list[str] | None = None) -> xr.Dataset:
    """A cube from one (task, run) array per model: each model's runs first, NaN after."""
    n = max(np.shape(m)[1] for m in models)
    x = np.full((len(models), np.shape(models[0])[0], n), np.nan)
    for k, m in enumerate(models):
        x[k, :, :np.shape(m)[1]] = m
    return eq.from_arrays(x, models=labels or [str(k) for k in range(len(models))],
                          outlier_threshold=None)


def lattice_steps(models: list, n_tasks: int) -> np.ndarray:
    """For scores on a grid of 1/3: how far apart two neighbouring values of each model's
    (median, IQM, mean, optimality gap) can lie (module docstring), (model, aggregate)."""
    out = []
    for m in models:
        n = np.shape(m)[1] * n_tasks
        out.append([1 / (3 * np.shape(m)[1]), 1 / (3 * (n - 2 * (n // 4))), 1 / (3 * n),
                    1 / (3 * n)])
    return np.asarray(out)


@pytest.mark.parametrize("name", ["ragged", "ragged_ties"])
@pytest.mark.parametrize("gamma", ["1.0", "0.9"])
def test_ragged_interval_estimates_match_rliable(name, gamma):
    models = REF["ragged_data"][name]
    ref = REF["ragged_results"][name]["interval"][gamma]
    est = eq.interval_estimates(ragged_cube(models), gamma=float(gamma), n_resamples=B_EVALUQ,
                                rng=1)
    np.testing.assert_allclose(est.estimate.values, ref["estimate"], rtol=0, atol=1e-12)
    assert est.attrs["n_runs"] == [np.shape(m)[1] for m in models]
    rl_ci = np.asarray(ref["ci"])
    step = lattice_steps(models, np.shape(models[0])[0]) if name == "ragged_ties" else 0.0
    tol = mc_tolerance(rl_ci, B_EVALUQ, REF["reps"]["interval"], step)
    assert (np.abs(est.ci.values - rl_ci) <= tol).all(), (est.ci.values, rl_ci, tol)


@pytest.mark.parametrize("name", ["ragged", "ragged_ties"])
def test_ragged_bootstrap_sd_matches_rliable(name):
    """The SD of each model's resampled aggregates against rliable's own resamples
    (``StratifiedBootstrap.apply``): an SD from B draws has Monte Carlo SE
    ``s sqrt((kappa - 1) / (4 B))``. Resampling a model with another model's run count would
    move it by a factor sqrt(10 / 3) for the 3-run model."""
    models = REF["ragged_data"][name]
    _, x, n_runs = _model_runs(ragged_cube(models))
    for gamma in ("1.0", "0.9"):
        stat = _by_run_count(lambda xg, c, g=float(gamma): _resampled_aggregates(
            xg, c, g, AGGREGATES), x, n_runs)
        dist = _stratified_distribution(x, stat, B_EVALUQ, np.random.default_rng(4),
                                       n_runs=n_runs)
        sd, ref = dist.std(axis=-1), np.asarray(REF["ragged_results"][name]["boot_sd"][gamma])
        kappa = stats.kurtosis(dist, axis=-1, fisher=False)
        se = sd * np.sqrt((kappa - 1) / 4 * (1 / B_EVALUQ + 1 / REF["reps"]["interval"]))
        assert (np.abs(sd - ref) <= 4 * se).all(), (sd, ref, se)


@pytest.mark.parametrize("name", ["ragged", "ragged_ties"])
def test_ragged_probability_of_improvement_matches_rliable(name):
    models = REF["ragged_data"][name]
    ref = REF["ragged_results"][name]["poi"]
    poi = eq.probability_of_improvement(ragged_cube(models), n_resamples=B_EVALUQ, rng=2)
    n_tasks = np.shape(models[0])[0]
    _assert_poi_matches(poi, ref, n_tasks,
                        lambda i, j: np.shape(models[i])[1] * np.shape(models[j])[1])


@pytest.mark.parametrize("name", ["ragged", "ragged_ties"])
@pytest.mark.parametrize("kind", ["run", "average"])
def test_ragged_performance_profile_matches_rliable(name, kind):
    models = REF["ragged_data"][name]
    ref = REF["ragged_results"][name]["profile"][kind]
    prof = eq.performance_profile(ragged_cube(models), REF["thresholds"], kind=kind,
                                  n_resamples=B_EVALUQ, rng=3)
    np.testing.assert_allclose(prof.estimate.values, ref["estimate"], rtol=0, atol=1e-12)
    rl_ci = np.asarray(ref["ci"])
    n_tasks = np.shape(models[0])[0]
    runs = np.array([np.shape(m)[1] for m in models])[:, None]
    step = 1 / (n_tasks * (runs if kind == "run" else 1))
    tol = mc_tolerance(rl_ci, B_EVALUQ, REF["reps"]["profile"], step)
    assert (np.abs(prof.ci.values - rl_ci) <= tol).all(), (prof.ci.values, rl_ci, tol)


def _ragged_models() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [np.round(rng.normal(0.7 + 0.05 * k, 0.2, size=(4, n)), 2)
            for k, n in enumerate((6, 2, 6, 3))]


def test_ragged_equals_each_model_on_its_own_runs():
    """Estimates of a ragged cube are those of each model's own cube (its runs only); P(X > Y)
    is the Mann-Whitney U of the two models' own runs over N_X N_Y (scipy)."""
    models = _ragged_models()
    cube = ragged_cube(models)
    est = eq.interval_estimates(cube, gamma=0.8, n_resamples=50, rng=0)
    tau = [0.5, 0.7, 0.85]      # one inside each model's task means (0.63-0.74, ..., 0.81-0.91)
    prof = eq.performance_profile(cube, tau, kind="average", n_resamples=50, rng=0)
    for k, m in enumerate(models):
        alone = cube_of(m[None])
        np.testing.assert_array_equal(
            est.estimate.values[k],
            eq.interval_estimates(alone, gamma=0.8, n_resamples=10, rng=0).estimate.values[0])
        np.testing.assert_array_equal(
            prof.estimate.values[k],
            eq.performance_profile(alone, tau, kind="average", n_resamples=10,
                                   rng=0).estimate.values[0])
    poi = eq.probability_of_improvement(cube, n_resamples=50, rng=0)
    for i, j in ((0, 1), (1, 3), (3, 2)):
        u = [stats.mannwhitneyu(models[i][m], models[j][m]).statistic for m in range(4)]
        want = np.mean(u) / (models[i].shape[1] * models[j].shape[1])
        assert poi.estimate.values[i, j] == pytest.approx(want, abs=1e-12)


def test_ragged_intervals_agree_with_each_model_alone():
    """A model's interval in a ragged cube and in its own cube: the same bootstrap, other
    random numbers (within Monte Carlo error)."""
    models = _ragged_models()
    b = 20000
    est = eq.interval_estimates(ragged_cube(models), n_resamples=b, rng=5)
    for k, m in enumerate(models):
        alone = eq.interval_estimates(cube_of(m[None]), n_resamples=b, rng=6).ci.values[0]
        step = 0.01 / (m.shape[1])          # scores on a grid of 0.01, see lattice_steps
        assert (np.abs(est.ci.values[k] - alone) <= mc_tolerance(alone, b, b, step)).all()


def test_ragged_resamples_equal_the_resampled_matrices():
    """Run counts with a run count per model: zero beyond a model's runs, its own number of
    draws per task; the grouped aggregates and P(X > Y) equal explicit loops."""
    models = _ragged_models()
    _, x, n_runs = _model_runs(ragged_cube(models))
    counts = _run_counts(np.random.default_rng(6), 5, x.shape, n_runs=n_runs)
    for k, n in enumerate(n_runs):
        assert (counts[:, k, :, n:] == 0).all()
        assert (counts[:, k].sum(axis=-1) == n).all()
    got = _by_run_count(lambda xg, c: _resampled_aggregates(xg, c, 0.9, AGGREGATES), x,
                       n_runs)(counts)
    poi = _improvement_resampled(_improvement_matrix(x), counts, n_runs)
    for b in range(5):
        drawn = [[np.repeat(x[k, m, :n], counts[b, k, m, :n].astype(int)) for m in range(4)]
                 for k, n in enumerate(n_runs)]
        for k in range(len(models)):
            pooled = np.concatenate(drawn[k])
            task_means = np.array([r.mean() for r in drawn[k]])
            want = [np.median(task_means), stats.trim_mean(pooled, 0.25), task_means.mean(),
                    0.9 - np.minimum(pooled, 0.9).mean()]
            np.testing.assert_allclose(got[b, k], want, rtol=1e-12)
        for i, j in ((0, 1), (1, 3), (3, 0)):
            u = [stats.mannwhitneyu(drawn[i][m], drawn[j][m]).statistic for m in range(4)]
            want = np.mean(u) / (n_runs[i] * n_runs[j])
            assert poi[b, i, j] == pytest.approx(want, abs=1e-6)


def test_complete_cube_with_a_seed_missing_everywhere_is_unchanged():
    x = np.random.default_rng(12).normal(0.8, 0.2, size=(3, 4, 5))
    padded = np.concatenate([x[..., :2], np.full((3, 4, 1), np.nan), x[..., 2:]], axis=-1)
    for fn, kw in ((eq.interval_estimates, {}), (eq.probability_of_improvement, {}),
                   (eq.performance_profile, {"thresholds": [0.6, 0.8]})):
        a = fn(cube_of(x), n_resamples=300, rng=7, **kw)
        assert a.identical(fn(cube_of(padded), n_resamples=300, rng=7, **kw))


def test_ragged_results_do_not_depend_on_which_seeds_are_missing():
    """A model's runs are its non-NaN seeds wherever they sit: seeds (0, 2, 4) or (0, 1, 2)
    give the same numbers, resamples included."""
    models = _ragged_models()
    cube = ragged_cube(models)
    x = cube.score.values.copy()
    moved = np.full_like(x, np.nan)
    moved[..., ::2] = x[..., :3]                # model 1: seeds 0 and 2; model 3: 0, 2, 4
    moved[[0, 2]] = x[[0, 2]]
    moved_cube = eq.from_arrays(moved, models=list(cube.model.values), outlier_threshold=None)
    for fn, kw in ((eq.interval_estimates, {}), (eq.probability_of_improvement, {}),
                   (eq.performance_profile, {"thresholds": [0.6, 0.8]})):
        assert fn(cube, n_resamples=200, rng=8, **kw).identical(
            fn(moved_cube, n_resamples=200, rng=8, **kw))


def test_ragged_same_rng_same_result():
    cube = ragged_cube(_ragged_models())
    for fn, kw in ((eq.interval_estimates, {}), (eq.probability_of_improvement, {}),
                   (eq.performance_profile, {"thresholds": [0.6, 0.8]})):
        assert fn(cube, n_resamples=200, rng=9, **kw).identical(
            fn(cube, n_resamples=200, rng=9, **kw))
    a = eq.interval_estimates(cube, n_resamples=200, rng=9)
    assert not a.identical(eq.interval_estimates(cube, n_resamples=200, rng=10))


def test_ragged_results_do_not_depend_on_the_model_order():
    """Estimates are equal to the last digit; intervals within Monte Carlo error (a model's
    random numbers depend on its place among the models sharing its run count)."""
    models = _ragged_models()
    labels = ["a", "b", "c", "d"]
    order = [2, 3, 0, 1]
    cube = ragged_cube(models, labels)
    shuffled = ragged_cube([models[k] for k in order], [labels[k] for k in order])
    b = 20000
    for fn, kw in ((eq.interval_estimates, {}), (eq.probability_of_improvement, {}),
                   (eq.performance_profile, {"thresholds": [0.6, 0.8]})):
        one = fn(cube, n_resamples=b, rng=1, **kw)
        two = fn(shuffled, n_resamples=b, rng=1, **kw).sel(model=labels)
        if "model_b" in two.dims:
            two = two.sel(model_b=labels)
        np.testing.assert_array_equal(one.estimate.values, two.estimate.values)
        ci = np.nan_to_num(one.ci.values)
        tol = mc_tolerance(ci, b, b, 0.02)
        assert (np.abs(ci - np.nan_to_num(two.ci.values)) <= tol).all()


def test_ragged_one_run_model_has_nan_intervals():
    rng = np.random.default_rng(13)
    models = [rng.normal(size=(3, 4)), rng.normal(size=(3, 1)), rng.normal(size=(3, 1))]
    cube = ragged_cube(models, ["a", "b", "c"])
    est = eq.interval_estimates(cube, n_resamples=100, rng=0)
    assert np.isfinite(est.estimate).all()
    assert np.isfinite(est.ci.sel(model="a")).all()
    assert np.isnan(est.ci.sel(model=["b", "c"])).all()
    assert "model(s) ['b', 'c']" in est.ci.attrs["nan_reason"]
    poi = eq.probability_of_improvement(cube, n_resamples=100, rng=0)
    assert np.isfinite(poi.ci.sel(model="a", model_b="b")).all()   # a's runs still vary
    assert np.isnan(poi.ci.sel(model="b", model_b="c")).all()
    assert poi.ci.attrs["nan_reason"].startswith("a model against itself")
    assert "['b', 'c']" in poi.ci.attrs["nan_reason"]


def test_run_missing_on_some_tasks_raises():
    """rliable's score matrix needs each run on every task (a NaN propagates silently
    there): a run of a model present on some tasks and missing on others raises, naming
    the model, the seed and the tasks."""
    models = _ragged_models()
    cube = ragged_cube(models, ["a", "b", "c", "d"])
    cube.score.loc[{"model": "c", "seed": 4, "language": [1, 3]}] = np.nan
    for fn, kw in ((eq.interval_estimates, {}), (eq.probability_of_improvement, {}),
                   (eq.performance_profile, {"thresholds": [0.6]})):
        with pytest.raises(CubeError, match=r"1 NaN run\(s\), for example model 'c', language "
                                            r"1, seed 4: that run of 'c' is missing on "
                                            r"language\(s\) \(tasks\) \[1, 3\]"):
            fn(cube, n_resamples=10, **kw)
    cube.score.loc[{"model": "c", "seed": 4}] = np.nan          # the whole run: c has 5
    assert eq.interval_estimates(cube, n_resamples=10, rng=0).attrs["n_runs"] == [6, 2, 5, 3]


def test_the_optimality_gap_aggregate_is_lower_is_better_and_checks_its_target():
    """`aggregate(how="optimality_gap")` kept higher_is_better=1, so the leaderboard, ranks
    and tiers put the model with the largest gap (the worst) first. The gap is smaller for
    better models; percentages with the default gamma=1 (every gap 0) warn; a lower-is-better
    metric is refused."""
    x = np.random.default_rng(9).normal(0.6, 0.02, size=(3, 6, 3)) + np.array(
        [0.0, 0.1, 0.2])[:, None, None]                       # m2 best
    rs = eq.resample(cube_of(x), n_resamples=200, replication="nonparametric", rng=0)
    og = eq.aggregate(rs, how="optimality_gap")
    assert og.attrs["higher_is_better"] == 0
    board = eq.leaderboard(og)
    assert board.index[0] == cube_of(x).model.values[2]
    assert int(np.argmax(eq.rank_distribution(og)["p_best"].values)) == 2
    with pytest.warns(eq.errors.ScaleWarning, match="every gap is 0.*gamma=100"):
        eq.aggregate(eq.resample(cube_of(100 * x), n_resamples=20,
                                 replication="nonparametric", rng=0),
                     how="optimality_gap")
    lower = cube_of(x)
    lower.attrs["higher_is_better"] = 0
    with pytest.raises(ValueError, match="this metric is lower-is-better"):
        eq.aggregate(eq.resample(lower, n_resamples=20, replication="nonparametric", rng=0),
                     how="optimality_gap")


def test_interval_estimates_checks_the_optimality_gap_target():
    """`interval_estimates` on percentages with the default gamma=1 gave every model a gap of
    0 (estimate and interval), silently: it now warns with `eq.aggregate`'s own check (one
    check, `rliable._check_gap`), and a lower-is-better cube is refused while the gap is asked
    for; on the scores' scale (gamma=100) the gap is rliable's formula, no warning."""
    x = np.random.default_rng(5).normal(60, 10, size=(2, 5, 8))
    cube = eq.from_arrays(x, models=["a", "b"], bounds=(0, 100), outlier_threshold=None)
    with pytest.warns(eq.errors.ScaleWarning, match="every gap is 0.*gamma=100"):
        est = eq.interval_estimates(cube, n_resamples=50, rng=0)
    assert (est.estimate.sel(aggregate="optimality_gap").values == 0).all()
    est = eq.interval_estimates(cube, gamma=100, n_resamples=50, rng=0)
    want = [100 - np.mean(np.minimum(x[k], 100)) for k in range(2)]
    np.testing.assert_allclose(est.estimate.sel(aggregate="optimality_gap").values, want,
                               rtol=0, atol=1e-12)
    eq.interval_estimates(cube, aggregates=("iqm", "mean"), n_resamples=10, rng=0)  # no gap
    lower = eq.from_arrays(x / 100, models=["a", "b"], higher_is_better=False,
                           outlier_threshold=None)
    with pytest.raises(ValueError, match="`aggregates`.*this metric is lower-is-better.*"
                                         "aggregates=\\('median', 'iqm', 'mean'\\)"):
        eq.interval_estimates(lower, n_resamples=10, rng=0)
    kept = eq.interval_estimates(lower, aggregates=("median", "iqm", "mean"), n_resamples=10,
                                 rng=0)
    assert list(kept.aggregate.values) == ["median", "iqm", "mean"]


def test_performance_profile_follows_a_lower_is_better_cube():
    """`performance_profile` ignored `higher_is_better=False`: an error-rate cube got the share
    of runs *above* tau (its bad runs). It is now the share below tau, by hand, and rliable's
    profile of the negated scores at -tau (the same resamples: identical intervals)."""
    x = np.random.default_rng(8).random((2, 5, 6))
    tau = np.array([0.2, 0.5, 0.8])
    lower = eq.from_arrays(x, models=["a", "b"], higher_is_better=False,
                           outlier_threshold=None)
    negated = eq.from_arrays(-x, models=["a", "b"], outlier_threshold=None)
    for kind in ("run", "average"):
        prof = eq.performance_profile(lower, tau, kind=kind, n_resamples=300, rng=0)
        ref = eq.performance_profile(negated, -tau, kind=kind, n_resamples=300, rng=0)
        scores = x if kind == "run" else x.mean(axis=-1, keepdims=True)
        hand = [[np.mean(scores[k] < t) for t in tau] for k in range(2)]
        np.testing.assert_allclose(prof.estimate.values, hand, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(prof.ci.values, ref.ci.values)
        np.testing.assert_array_equal(prof.threshold.values, tau)
        assert prof.attrs["higher_is_better"] == 0
        assert (np.diff(prof.estimate.values, axis=1) >= 0).all()   # non-decreasing in tau
    higher = eq.performance_profile(cube_of(x), tau, n_resamples=10, rng=0)
    assert higher.attrs["higher_is_better"] == 1
    np.testing.assert_allclose(higher.estimate.values,
                               [[np.mean(x[k] > t) for t in tau] for k in range(2)], atol=1e-12)


def test_a_summary_only_cube_of_seed_means_is_refused():
    """A cube of seed means (eq.from_summary, 5 seeds each) gave IQMs over task means and
    probabilities of improvement of 0 / 1 read as run-level quantities, silently: rliable's
    functions (and multi_aso) now refuse it, saying what to use; a summary of single runs
    (n_seeds 1) holds the runs and is accepted."""
    import pandas as pd

    gen = np.random.default_rng(0)
    df = pd.DataFrame([(m, t, gen.random(), 0.02, 0.01) for m in "abc"
                       for t in ("t1", "t2", "t3", "t4")],
                      columns=["model", "language", "mean", "sd_seed", "sd_boot"])
    means = eq.from_summary(df, n_seeds=5)
    calls = [lambda c: eq.interval_estimates(c, n_resamples=10, rng=0),
             lambda c: eq.performance_profile(c, [0.5], n_resamples=10, rng=0),
             lambda c: eq.probability_of_improvement(c, n_resamples=10, rng=0),
             lambda c: eq.multi_aso(c, n_resamples=10, rng=0)]
    for call in calls:
        with pytest.raises(CubeError, match="summary-only.*would read each seed mean as a "
                                            "single run.*eq.from_long.*eq.friedman_test"):
            call(means)
    single = eq.from_summary(df, n_seeds=1)
    est = eq.interval_estimates(single, aggregates=("mean",), n_resamples=10, rng=0)
    want = df.groupby("model")["mean"].mean().to_numpy()
    np.testing.assert_allclose(est.estimate.values[:, 0], want, rtol=0, atol=1e-12)


def test_rliables_score_dict_is_refused_with_the_call_that_converts_it():
    """rliable's `{algorithm: (runs x tasks)}` dict was refused with no pointer (and the
    obvious `np.stack(list(d.values()))` swaps runs and tasks silently). The message gives the
    one call that converts it; that call, run as written, gives rliable's aggregates (scipy
    and numpy on the runs x tasks matrices)."""
    gen = np.random.default_rng(1)
    score_dict = {"dqn": gen.normal(0.5, 0.2, (10, 5)), "ppo": gen.normal(0.6, 0.2, (10, 5))}
    calls = [lambda c: eq.interval_estimates(c, n_resamples=10, rng=0),
             lambda c: eq.performance_profile(c, [0.5], n_resamples=10, rng=0),
             lambda c: eq.probability_of_improvement(c, n_resamples=10, rng=0),
             lambda c: eq.multi_aso(c, n_resamples=10, rng=0)]
    for call in calls:
        with pytest.raises(TypeError, match="got dict. rliable's score dict") as err:
            call(score_dict)
    call_text = str(err.value).split("becomes a cube with ")[1].split(" (a cube is")[0]
    cube = eval(call_text, {"eq": eq, "np": np, "score_dict": score_dict})   # as written
    est = eq.interval_estimates(cube, n_resamples=10, rng=0)
    assert list(est.model.values) == ["dqn", "ppo"]
    for k, m in enumerate(score_dict.values()):
        np.testing.assert_allclose(
            est.estimate.values[k],
            [np.median(m.mean(axis=0)), stats.trim_mean(m, 0.25, axis=None), m.mean(),
             1 - np.mean(np.minimum(m, 1))], rtol=0, atol=1e-12)


def test_performance_profile_warns_when_no_threshold_is_inside_the_scores():
    """Thresholds all outside the scores' range (0-1 thresholds for percentages, or above
    every score) gave profiles of all ones (or zeros) silently: a ScaleWarning names the
    range. One threshold inside it is enough; the fractions are rliable's either way."""
    x = np.random.default_rng(2).uniform(60.0, 90.0, size=(2, 5, 4))
    lo, hi = x.min(), x.max()
    cube = eq.from_arrays(x, models=["a", "b"])
    cases = (([0.2, 0.5, 0.8], 1.0), ([95.0, 99.0], 0.0), ([10.0, 200.0], None))
    for tau, fraction in cases:
        with pytest.warns(eq.errors.ScaleWarning,
                          match=rf"every threshold in `thresholds`.*outside the range of the "
                                rf"scores, \[{lo:.4g}, {hi:.4g}\].*0 or 1"):
            prof = eq.performance_profile(cube, tau, n_resamples=20, rng=0)
        want = np.stack([np.mean(x > t, axis=(1, 2)) for t in tau], axis=1)
        np.testing.assert_array_equal(prof.estimate.values, want)
        if fraction is not None:
            assert (want == fraction).all()
    # the largest score is not above itself: tau = max is outside, tau = min inside
    with pytest.warns(eq.errors.ScaleWarning):
        eq.performance_profile(cube, [hi], n_resamples=20, rng=0)
    eq.performance_profile(cube, [lo], n_resamples=20, rng=0)
    eq.performance_profile(cube, [0.5, 75.0], n_resamples=20, rng=0)
    means = x.mean(-1)                 # kind="average" reads the task means: a narrower range
    with pytest.warns(eq.errors.ScaleWarning, match=rf"task means over runs.*"
                                                    rf"\[{means.min():.4g}, {means.max():.4g}\]"):
        eq.performance_profile(cube, [lo], kind="average", n_resamples=20, rng=0)
    lower = eq.from_arrays(x, models=["a", "b"], higher_is_better=False)   # below tau
    with pytest.warns(eq.errors.ScaleWarning):
        eq.performance_profile(lower, [lo], n_resamples=20, rng=0)          # none below lo
    eq.performance_profile(lower, [hi], n_resamples=20, rng=0)

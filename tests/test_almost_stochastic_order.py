"""ASO and multi-ASO (issue 19) against deepsig's numbers, closed forms and bad input.

Reference numbers come from ``benchmarks/anchors/run_deepsig.py`` run once in deepsig's own
env (``deepsig_reference.json``, versions inside); deepsig is not imported here.

Tolerances. The violation ratio is deterministic: 1e-12. ``eps_min = clip(eps + z sigma /
c)`` with ``sigma`` the SD of B bootstrap values (times c): an SD estimated from B draws has
Monte Carlo SE ``s sqrt((kappa - 1) / (4 B))`` (``s`` the SD of the bootstrap violation
ratios, ``kappa`` their kurtosis, 3 for a normal), so evaluq's and deepsig's eps_min, from
independent bootstraps of B_e and B_d draws, agree within
``4 |z| sqrt((kappa - 1) / 4 (1 / B_e + 1 / B_d)) s`` (clipping to [0, 1] only narrows it).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.field.stochastic_order import (
    ASOWarning,
    _bonferroni_level,
    _grid,
    _quantile_index,
    _violation_ratio,
)

REF = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "anchors"
                  / "deepsig_reference.json").read_text())
B_EVALUQ = 20000


def eps_tolerance(result: eq.ASOResult, b_ref: int) -> float:
    boot = result.distribution.values
    s = boot.std()
    kappa = stats.kurtosis(boot, fisher=False) if s > 0 else 3.0
    z = abs(stats.norm.ppf(1 - result.confidence_level))
    return 4 * z * s * np.sqrt((kappa - 1) / 4 * (1 / boot.size + 1 / b_ref)) + 1e-12


@pytest.mark.parametrize("name", ["shifted", "close", "ties"])
def test_aso_matches_deepsig(name):
    a, b = map(np.asarray, REF["data"][name])
    ref = REF["results"][name]
    for level in (0.95, 0.99):
        res = eq.aso(a, b, confidence_level=level, n_resamples=B_EVALUQ, rng=0)
        assert float(res.estimate) == pytest.approx(ref["violation_ratio_ab"], abs=1e-12)
        tol = eps_tolerance(res, REF["num_bootstrap_iterations"])
        assert abs(res.eps_min - ref[f"eps_min_{level}"]) <= tol, (res.eps_min, ref, tol)
    res_ba = eq.aso(b, a, n_resamples=100, rng=0)
    assert float(res_ba.estimate) == pytest.approx(ref["violation_ratio_ba"], abs=1e-12)


@pytest.mark.parametrize("name", ["shifted", "close"])
def test_bonferroni_differs_from_deepsig_on_purpose(name):
    """deepsig's num_comparisons=3 raises the level to 0.95 + 0.05 / 3; Bonferroni's is
    1 - 0.05 / 3. evaluq reproduces deepsig's number at deepsig's level and is more
    conservative with the true correction."""
    a, b = map(np.asarray, REF["data"][name])
    ref = REF["results"][name]["eps_min_0.95_3comparisons"]
    at_deepsig = eq.aso(a, b, confidence_level=0.95 + 0.05 / 3,
                        n_resamples=B_EVALUQ, rng=0)
    assert abs(at_deepsig.eps_min - ref) <= eps_tolerance(at_deepsig, 5000)
    bonferroni = eq.aso(a, b, num_comparisons=3, n_resamples=B_EVALUQ, rng=0)
    assert bonferroni.confidence_level == pytest.approx(1 - 0.05 / 3)
    assert bonferroni.eps_min > at_deepsig.eps_min


def test_multi_aso_matches_deepsig():
    scores = np.asarray(REF["data"]["multi"])                  # (model, run)
    cube = eq.from_arrays(scores[:, None, :], models=[f"m{i}" for i in range(4)])
    n_pairs = 6
    deepsig_level = 0.95 + 0.05 / n_pairs
    ours = eq.multi_aso(cube, confidence_level=deepsig_level, use_bonferroni=False,
                        n_resamples=B_EVALUQ, rng=0)
    ref = np.asarray(REF["results"]["multi_bonferroni_True"])
    off = ~np.eye(4, dtype=bool)
    # one tolerance per pair from a two-model run with the same bootstrap size
    for i, j in zip(*np.nonzero(off), strict=True):
        res = eq.aso(scores[i], scores[j], confidence_level=deepsig_level,
                     n_resamples=B_EVALUQ, rng=1)
        tol = eps_tolerance(res, REF["num_bootstrap_iterations"])
        assert abs(ours.values[i, j] - ref[i, j]) <= tol + 0.01, (i, j, ours.values, ref)
    assert np.isnan(np.diag(ours.values)).all()
    assert (np.diag(ref) == 1).all()
    plain = eq.multi_aso(cube, use_bonferroni=False, n_resamples=B_EVALUQ, rng=0)
    ref_plain = np.asarray(REF["results"]["multi_bonferroni_False"])
    assert np.abs(plain.values[off] - ref_plain[off]).max() < 0.03
    bonf = eq.multi_aso(cube, n_resamples=B_EVALUQ, rng=0)
    assert bonf.attrs["corrected_level"] == pytest.approx(1 - 0.05 / 6)
    assert (bonf.values[off] >= ours.values[off] - 1e-9).all()


def test_deepsig_version_recorded():
    assert "deepsig" in REF["versions"]


# --- closed forms and properties ----------------------------------------------------------------

def test_violation_ratio_closed_forms():
    t = _grid(0.005)
    assert t.size == 199
    a, b = np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 2.0])   # a = b + 1 everywhere
    f, g = np.sort(a)[_quantile_index(3, t)], np.sort(b)[_quantile_index(3, t)]
    assert _violation_ratio(f, g, 0.005) == 0.0
    # b above a everywhere: every grid point but the first (deepsig's diff[1:]) is violated
    assert _violation_ratio(g, f, 0.005) == pytest.approx(198 / 199, abs=1e-12)


def test_quantile_index_is_deepsigs():
    for n in (1, 3, 7, 10):
        for p in _grid(0.005):
            assert _quantile_index(n, np.array([p]))[0] == np.clip(int(np.ceil(n * p)) - 1, 0,
                                                                   n - 1)


def test_eps_min_is_the_upper_bound_formula():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.8, 1, 15), rng.normal(0, 1, 12)
    res = eq.aso(a, b, n_resamples=500, rng=0)
    c = np.sqrt(15 * 12 / 27)
    sigma = np.std(c * (res.distribution.values - float(res.estimate)))
    want = np.clip(float(res.estimate) + stats.norm.ppf(0.95) * sigma / c, 0, 1)
    assert res.eps_min == pytest.approx(want, abs=1e-12)
    assert float(res) == res.eps_min
    ci = res.confidence_interval(0.99)
    assert ci.attrs["ci_kind"] == "normal"
    assert ci.values[1] >= res.eps_min
    assert 0 < res.eps_min < 1
    assert "eps_min" in repr(res)
    assert "eps_min" in res.to_dataframe()


def test_aso_symmetry_and_rng():
    rng = np.random.default_rng(4)
    a, b = rng.normal(1, 1, 10), rng.normal(0, 1, 10)
    r1 = eq.aso(a, b, rng=5)
    assert r1.eps_min == eq.aso(a, b, rng=5).eps_min
    assert r1.eps_min < 0.5 < eq.aso(b, a, rng=5).eps_min


def test_multi_aso_language_selection_and_symmetric_ratio():
    x = np.random.default_rng(0).normal(size=(3, 2, 6)) + np.array([1.0, 0, -1])[:, None, None]
    cube = eq.from_arrays(x, models=["a", "b", "c"], languages=["en", "fi"])
    eps = eq.multi_aso(cube, language="fi", rng=0)
    pair = eq.aso(x[0, 1], x[1, 1], confidence_level=1 - 0.05 / 3,
                  n_resamples=1000, rng=1)
    assert abs(eps.sel(model="a", model_b="b") - pair.eps_min) < 0.1
    mean_eps = eq.multi_aso(cube, rng=0)
    assert mean_eps.sel(model="a", model_b="c") < 0.5 < mean_eps.sel(model="c", model_b="a")


# --- bad input ----------------------------------------------------------------------------------

def test_identical_distributions_warn_and_give_one_half():
    with pytest.warns(ASOWarning, match="identical"):
        res = eq.aso([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], n_resamples=200, rng=0)
    assert float(res.estimate) == 0.5
    x = np.ones((2, 1, 4))
    with pytest.warns(ASOWarning, match="multi_aso"):
        eps = eq.multi_aso(eq.from_arrays(x, models=["a", "b"]), rng=0)
    assert eps.values[0, 1] == 0.5
    assert eps.values[1, 0] == 0.5


def test_ties_are_defined():
    res = eq.aso([1.0, 1.0, 2.0, 2.0], [1.0, 2.0, 2.0, 2.0], rng=0)   # A never above B
    assert float(res.estimate) == 1.0
    assert 0.0 <= res.eps_min <= 1.0
    res = eq.aso([1.0, 2.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0], rng=0)
    assert float(res.estimate) == 0.0


@pytest.mark.parametrize(("a", "match"), [
    ([1.0], "`scores_a` must hold at least 2 scores"),
    ([1.0, np.nan], "`scores_a` contains 1 NaN or infinite"),
    ([[1.0, 2.0]], "`scores_a` must be 1-D"),
])
def test_aso_validation(a, match):
    with pytest.raises(ValueError, match=match):
        eq.aso(a, [1.0, 2.0])


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"confidence_level": 1.0}, ValueError, "`confidence_level` must be in"),
    ({"n_resamples": 1}, ValueError, "`n_resamples` must be >= 2"),
    ({"dt": 0.0}, ValueError, r"`dt` must be in \(0, 0.5\]"),
    ({"num_comparisons": 0}, ValueError, "`num_comparisons` must be >= 1"),
])
def test_aso_argument_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        eq.aso([1.0, 2.0], [2.0, 3.0], **kwargs)


def test_multi_aso_bad_input():
    x = np.random.default_rng(0).normal(size=(2, 2, 4))
    cube = eq.from_arrays(x, models=["a", "b"], languages=["en", "fi"])
    with pytest.raises(ValueError, match="`language` must be one of the cube's languages"):
        eq.multi_aso(cube, language="de")
    with pytest.raises(TypeError, match="`use_bonferroni` must be True or False"):
        eq.multi_aso(cube, use_bonferroni=1)
    with pytest.raises(CubeError, match="at least 2 models and 2 seeds"):
        eq.multi_aso(eq.from_arrays(x[:, :, :1], models=["a", "b"]))
    x[0, 1, 2] = np.nan
    with pytest.raises(CubeError, match="1 NaN score"):
        eq.multi_aso(eq.from_arrays(x, models=["a", "b"]))
    assert eq.multi_aso(eq.from_arrays(x, models=["a", "b"]), language=0, rng=0).shape == (2, 2)
    with pytest.raises(TypeError, match="`cube` must be an evaluation cube"):
        eq.multi_aso(x)


def test_bonferroni_level():
    assert _bonferroni_level(0.95, 1) == 0.95
    assert _bonferroni_level(0.95, 10) == pytest.approx(0.995)


def test_multi_aso_follows_the_orientation():
    x = np.random.default_rng(0).normal(size=(2, 3, 8)) + np.array([1.0, 0.0])[:, None, None]
    up = eq.multi_aso(eq.from_arrays(x, models=["a", "b"]), rng=0)
    down = eq.multi_aso(eq.from_arrays(-x, models=["a", "b"], higher_is_better=False), rng=0)
    np.testing.assert_allclose(up.values, down.values)


# --- ragged runs: models with different numbers of runs (NaN at the missing seeds) --------------

def ragged_cube(runs: list, labels: list[str] | None = None, n_languages: int = 1):
    """A cube from one 1-D score array per model (the same scores on every language)."""
    n = max(len(r) for r in runs)
    x = np.full((len(runs), n_languages, n), np.nan)
    for k, r in enumerate(runs):
        x[k, :, :len(r)] = r
    return eq.from_arrays(x, models=labels or [f"m{k}" for k in range(len(runs))],
                          outlier_threshold=None)


def test_ragged_violation_ratios_are_deepsigs():
    runs = [np.asarray(r) for r in REF["data"]["multi_ragged"]]
    ref = np.asarray(REF["results"]["multi_ragged_violation_ratio"])
    for i, a in enumerate(runs):
        for j, b in enumerate(runs):
            if i != j:
                res = eq.aso(a, b, n_resamples=2, rng=0)
                assert float(res.estimate) == pytest.approx(ref[i, j], abs=1e-12)


def test_multi_aso_ragged_matches_deepsig():
    """10, 5, 3 and 7 runs: deepsig's multi_aso on a dict of lists of those lengths."""
    runs = [np.asarray(r) for r in REF["data"]["multi_ragged"]]
    cube = ragged_cube(runs)
    deepsig_level = 0.95 + 0.05 / 6
    ours = eq.multi_aso(cube, confidence_level=deepsig_level, use_bonferroni=False,
                        n_resamples=B_EVALUQ, rng=0)
    plain = eq.multi_aso(cube, use_bonferroni=False, n_resamples=B_EVALUQ, rng=0)
    assert ours.attrs["n_runs"] == [10, 5, 3, 7]
    for got, key, level in ((ours, "multi_ragged_bonferroni_True", deepsig_level),
                            (plain, "multi_ragged_bonferroni_False", 0.95)):
        ref = np.asarray(REF["results"][key])
        for i, j in zip(*np.nonzero(~np.eye(4, dtype=bool)), strict=True):
            res = eq.aso(runs[i], runs[j], confidence_level=level,
                         n_resamples=B_EVALUQ, rng=1)
            tol = eps_tolerance(res, REF["num_bootstrap_iterations"])
            assert abs(got.values[i, j] - ref[i, j]) <= tol + 0.01, (key, i, j, got.values, ref)


def test_multi_aso_ragged_equals_aso_on_each_models_own_runs():
    """Two models of 9 and 4 runs: multi_aso draws the first model's resamples, then the
    second's, as aso does, so its entries are aso's eps_min and the reverse bound from the
    same sigma_hat, to the last digits."""
    rng = np.random.default_rng(21)
    a, b = rng.normal(0.6, 0.2, 9), rng.normal(0.5, 0.3, 4)
    eps = eq.multi_aso(ragged_cube([a, b], n_languages=3), use_bonferroni=False, rng=5)
    res = eq.aso(a, b, rng=5)
    assert eps.values[0, 1] == pytest.approx(res.eps_min, abs=1e-12)
    c = np.sqrt(9 * 4 / 13)
    reverse = np.clip(1 - float(res.estimate) + res.sigma_hat / c * stats.norm.ppf(0.95), 0, 1)
    assert eps.values[1, 0] == pytest.approx(reverse, abs=1e-12)


def test_multi_aso_complete_cube_with_a_seed_missing_everywhere_is_unchanged():
    x = np.random.default_rng(22).normal(size=(3, 2, 6))
    padded = np.concatenate([x[..., :4], np.full((3, 2, 2), np.nan), x[..., 4:]], axis=-1)
    one = eq.multi_aso(eq.from_arrays(x, models=["a", "b", "c"]), rng=3)
    two = eq.multi_aso(eq.from_arrays(padded, models=["a", "b", "c"]), rng=3)
    assert one.identical(two)


def test_multi_aso_ragged_same_rng_and_model_order():
    rng = np.random.default_rng(23)
    runs = [rng.normal(m, 0.3, n) for m, n in ((0.8, 8), (0.6, 3), (0.5, 6))]
    cube = ragged_cube(runs, ["a", "b", "c"], n_languages=2)
    one = eq.multi_aso(cube, n_resamples=B_EVALUQ, rng=4)
    assert one.identical(eq.multi_aso(cube, n_resamples=B_EVALUQ, rng=4))
    order = [2, 0, 1]
    shuffled = ragged_cube([runs[k] for k in order], [["a", "b", "c"][k] for k in order],
                           n_languages=2)
    two = eq.multi_aso(shuffled, n_resamples=B_EVALUQ, rng=4).sel(
        model=["a", "b", "c"], model_b=["a", "b", "c"])
    level = one.attrs["corrected_level"]
    for i, j in zip(*np.nonzero(~np.eye(3, dtype=bool)), strict=True):
        res = eq.aso(runs[i], runs[j], confidence_level=level, n_resamples=B_EVALUQ,
                     rng=1)
        assert abs(one.values[i, j] - two.values[i, j]) <= eps_tolerance(res, B_EVALUQ)


def test_multi_aso_ragged_runs_and_languages():
    """Averaged over languages a run must be on every language or none; with one language
    selected, that language's NaN runs are left out."""
    x = np.random.default_rng(24).normal(size=(3, 2, 5))
    x[1, :, 3:] = np.nan                          # b: 3 runs
    cube = eq.from_arrays(x, models=["a", "b", "c"], languages=["en", "fi"])
    assert eq.multi_aso(cube, rng=0).attrs["n_runs"] == [5, 3, 5]
    x[2, 1, 0] = np.nan                           # c's seed 0 missing on fi only
    cube = eq.from_arrays(x, models=["a", "b", "c"], languages=["en", "fi"])
    with pytest.raises(CubeError, match=r"1 NaN score\(s\) in runs present on other "
                                        r"languages, for example model 'c', seed 0, on "
                                        r"language\(s\) \['fi'\]"):
        eq.multi_aso(cube)
    assert eq.multi_aso(cube, language="fi", rng=0).attrs["n_runs"] == [5, 3, 4]
    assert eq.multi_aso(cube, language="en", rng=0).attrs["n_runs"] == [5, 3, 5]
    x[1, :, 1:] = np.nan                          # b: one run
    with pytest.raises(CubeError, match=r"2 seeds \(runs\) per model; got 3 model\(s\) and "
                                        r"'a': 5 run\(s\), 'b': 1 run\(s\), 'c': 4 run\(s\)"):
        eq.multi_aso(eq.from_arrays(x, models=["a", "b", "c"], languages=["en", "fi"]),
                     language="fi")


def test_deepsig_num_bootstrap_iterations_is_a_deprecated_alias():
    """deepsig's `num_bootstrap_iterations` still works (same numbers, a DeprecationWarning
    naming `n_resamples`); giving both names is a TypeError."""
    a, b = np.linspace(0.0, 1.0, 8), np.linspace(-0.2, 0.9, 6)
    score = np.random.default_rng(3).normal(size=(3, 2, 5))
    cube = eq.from_arrays(score, models=["x", "y", "z"])
    for func, args in ((eq.aso, (a, b)), (eq.multi_aso, (cube,))):
        new = func(*args, n_resamples=300, rng=0)
        with pytest.warns(DeprecationWarning, match="`num_bootstrap_iterations` is deprecated; "
                                                    "use `n_resamples`"):
            old = func(*args, num_bootstrap_iterations=300, rng=0)
        np.testing.assert_array_equal(np.asarray(old.eps_min if func is eq.aso else old),
                                      np.asarray(new.eps_min if func is eq.aso else new))
        with pytest.raises(TypeError, match="got both `num_bootstrap_iterations` and"):
            func(*args, n_resamples=300, num_bootstrap_iterations=300)
    assert eq.multi_aso(cube, n_resamples=300, rng=0).attrs["n_resamples"] == 300


def test_multi_aso_of_scores_near_1e300_equals_that_of_the_same_scores_scaled_down():
    """The violation ratio is scale-free: scores near 1e300 (whose squared differences
    overflow) give the eps_min of the same scores divided by a power of two, with the
    rescaling decided once for all pairs."""
    x = np.random.default_rng(3).normal(1.0, 0.2, (3, 1, 12))
    big = eq.from_arrays(x * 2.0 ** 996)
    small = eq.from_arrays(x)
    a = eq.multi_aso(big, rng=0)
    b = eq.multi_aso(small, rng=0)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-12)
    assert np.isfinite(a.values[~np.eye(3, dtype=bool)]).all()


def test_the_fused_violation_ratios_equal_the_numpy_form():
    """multi_aso's one-pass kernel (field._aso_kernel) against the numpy form it replaced,
    identical quantile functions (ratio 1/2) and ties on the grid included."""
    from evaluq.field._aso_kernel import violation_ratios
    from evaluq.field.stochastic_order import _violation_ratio

    rng = np.random.default_rng(3)
    first = np.sort(rng.normal(size=(50, 201)), axis=1)
    others = np.sort(rng.normal(size=(7, 50, 201)), axis=1)
    others[2, 4] = first[4]                                   # identical: 1/2
    others[5, :, :100] = first[:, :100]                       # ties on half the grid
    got = violation_ratios(first, others, 0.005)
    want = _violation_ratio(first[None], others, 0.005, False)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    assert got[2, 4] == 0.5

"""Tests of eq.friedman_test and eq.critical_difference (Demšar 2006, as autorank).

The reference numbers come from autorank 1.3.0 (with scipy / statsmodels) run in its own env by
``benchmarks/anchors/run_autorank.py``; evaluq never imports autorank.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import evaluq as eq
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.field.demsar import _block_ranks, _friedman_kernel, nemenyi_q

ANCHORS = json.loads((Path(__file__).parents[1] / "benchmarks" / "anchors" / "autorank.json")
                     .read_text())
CASES = ANCHORS["cases"]


def _cube(scores: np.ndarray, models: list[str], higher_is_better: bool = True) -> object:
    """A cube with one run per cell from a (blocks, models) table."""
    table = np.asarray(scores, dtype=float)
    return eq.from_arrays(table.T[:, :, None], models=models,
                          languages=[f"t{i:02d}" for i in range(table.shape[0])],
                          higher_is_better=higher_is_better)


def _case_cube(case: dict) -> object:
    return _cube(np.asarray(case["scores"]), case["models"], case["order"] == "descending")


# --- agreement with autorank / scipy / statsmodels ---------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_friedman_matches_autorank_and_scipy(name):
    case = CASES[name]
    res = eq.friedman_test(_case_cube(case))
    assert case["omnibus"] == "friedman"
    np.testing.assert_allclose(res.statistic, case["scipy_friedman_statistic"], rtol=1e-12)
    np.testing.assert_allclose(res.pvalue, case["friedman_pvalue"], rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mean_ranks_match_autorank(name):
    case = CASES[name]
    cd = eq.critical_difference(_case_cube(case))
    got = cd["mean_rank"].to_series()
    for model, value in case["mean_rank"].items():
        np.testing.assert_allclose(got[model], value, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_critical_difference_beside_autorank(name):
    """evaluq's CD uses the exact studentized-range quantile; autorank's statsmodels ``qsturng``
    approximates it (Gleason 1999): the two agree to 1e-4 relative, and evaluq's equals the
    closed form with scipy's quantile to 1e-12."""
    case = CASES[name]
    cd = eq.critical_difference(_case_cube(case))
    k, n = len(case["models"]), len(case["scores"])
    exact = stats.studentized_range.ppf(0.95, k, np.inf) * np.sqrt(k * (k + 1) / (12 * n))
    np.testing.assert_allclose(cd.attrs["cd"], exact, rtol=1e-12)
    np.testing.assert_allclose(cd.attrs["cd"], case["cd"], rtol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_groups_match_autorank(name):
    case = CASES[name]
    cd = eq.critical_difference(_case_cube(case))
    ranks = cd["mean_rank"].to_series()
    groups = [sorted(cd["model"].values[row].tolist(), key=lambda m: (ranks[m],))
              for row in cd["in_group"].values]
    expected = [sorted(g, key=lambda m: (ranks[m],)) for g in case["groups"]]
    assert groups == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_wilcoxon_holm_matches_statsmodels(name):
    case = CASES[name]
    cd = eq.critical_difference(_case_cube(case), test="wilcoxon-holm")
    ref = case["wilcoxon_holm"]
    for (a, b), p in zip(ref["pairs"], ref["holm"], strict=True):
        np.testing.assert_allclose(float(cd["pvalue"].sel(model=a, model_b=b)), p, rtol=1e-12)
        np.testing.assert_allclose(float(cd["pvalue"].sel(model=b, model_b=a)), p, rtol=1e-12)
        assert bool(cd["significant"].sel(model=a, model_b=b)) == (p <= 0.05)
    assert np.isnan(cd.attrs["cd"])
    assert "no critical difference" in cd.attrs["nan_reason"]


def test_nemenyi_q_reproduces_demsar_table():
    """Demšar (2006) Table 5(a), q_0.05 and q_0.10 for k = 2..10. The table divides Tukey-table
    quantiles rounded to 3 decimals by sqrt(2) and rounds again: |exact - table| <= 0.001."""
    q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]
    for k, (a, b) in enumerate(zip(q05, q10, strict=True), start=2):
        assert abs(nemenyi_q(k, 0.05) - a) <= 1e-3
        assert abs(nemenyi_q(k, 0.10) - b) <= 1e-3


def test_friedman_and_iman_davenport_closed_forms():
    """Demšar's mean-rank formula of chi2_F (no ties) and F_F with scipy's F distribution."""
    gen = np.random.default_rng(3)
    table = gen.normal(size=(14, 4))
    res = eq.friedman_test(_cube(table, list("abcd")))
    n, k = table.shape
    r = res.mean_rank.values
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(r ** 2) - k * (k + 1) ** 2 / 4)
    np.testing.assert_allclose(res.statistic, chi2, rtol=1e-12)
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    np.testing.assert_allclose(res.f_statistic, f, rtol=1e-12)
    np.testing.assert_allclose(res.f_pvalue, stats.f.sf(f, k - 1, (k - 1) * (n - 1)), rtol=1e-12)
    assert res.f_df == (3, 39)


def test_nemenyi_pvalues_agree_with_cd():
    gen = np.random.default_rng(4)
    cd = eq.critical_difference(_cube(gen.normal([0, 0, 1, 2, 2], 1, (25, 5)), list("abcde")))
    diff = np.abs(cd["mean_rank"].values[:, None] - cd["mean_rank"].values[None, :])
    off = ~np.eye(5, dtype=bool)
    assert np.array_equal((cd["pvalue"].values < 0.05)[off], (diff > cd.attrs["cd"])[off])


def test_orientation_lower_is_better():
    gen = np.random.default_rng(5)
    table = gen.normal(size=(10, 4))
    up = eq.critical_difference(_cube(table, list("abcd")))
    down = eq.critical_difference(_cube(-table, list("abcd"), higher_is_better=False))
    np.testing.assert_array_equal(up["mean_rank"].values, down["mean_rank"].values)
    assert float(up["mean_rank"].sel(model="a")) == np.mean(
        stats.rankdata(-table, axis=1)[:, 0])


# --- bad input ---------------------------------------------------------------------------------


def test_ties_get_average_ranks_and_scipy_tie_correction():
    table = np.array([[1.0, 1.0, 1.0, 1.0], [0.9, 0.8, 0.8, 0.7], [0.5, 0.6, 0.6, 0.6],
                      [0.3, 0.2, 0.1, 0.0], [0.4, 0.4, 0.3, 0.3]])
    assert _block_ranks(table, True)[0].tolist() == [2.5] * 4
    with pytest.warns(EvaluqWarning, match="chi-square p-value .* is an approximation"):
        res = eq.friedman_test(_cube(table, list("abcd")))
    ref = stats.friedmanchisquare(*table.T)
    np.testing.assert_allclose([res.statistic, res.pvalue], [ref.statistic, ref.pvalue],
                               rtol=1e-12)


def test_every_language_tied_is_nan_with_reason():
    res = eq.friedman_test(_cube(np.ones((4, 3)), list("abc")))
    assert np.isnan(res.statistic)
    assert np.isnan(res.f_statistic)
    assert "tie" in res.attrs["nan_reason"]
    with pytest.warns(EvaluqWarning, match="no pair can be found different"):
        cd = eq.critical_difference(_cube(np.ones((4, 3)), list("abc")), test="wilcoxon-holm")
    assert np.all(cd["pvalue"].values[~np.eye(3, dtype=bool)] == 1.0)
    assert cd["in_group"].values.tolist() == [[True, True, True]]


def test_same_order_everywhere_gives_infinite_f():
    table = np.tile([3.0, 2.0, 1.0], (6, 1))
    with pytest.warns(EvaluqWarning, match="chi-square p-value .* is an approximation"):
        res = eq.friedman_test(_cube(table, list("abc")))
    assert res.statistic == pytest.approx(12.0)
    assert res.f_statistic == np.inf
    assert res.f_pvalue == 0.0


def test_single_run_and_nan_runs():
    gen = np.random.default_rng(6)
    score = gen.normal(size=(3, 8, 4))
    score[0, 2, 1] = np.nan                  # one NaN run: the cell's mean of the other three
    cube = eq.from_arrays(score, models=list("abc"))
    with pytest.warns(EvaluqWarning, match="chi-square p-value .* is an approximation"):
        res = eq.friedman_test(cube)
    table = np.nanmean(score, axis=2).T
    np.testing.assert_allclose(res.statistic, stats.friedmanchisquare(*table.T).statistic,
                               rtol=1e-12)
    assert res.attrs["n_missing_runs"] == 1
    with pytest.warns(EvaluqWarning, match="chi-square p-value .* is an approximation"):
        single = eq.friedman_test(eq.from_arrays(score[:, :, :1], models=list("abc")))
    assert np.isfinite(single.statistic)


def test_model_missing_a_language_raises():
    score = np.random.default_rng(7).normal(size=(3, 5, 2))
    score[1, 3, :] = np.nan
    with pytest.raises(CubeError, match=r"no score for 1 \(model, language\) cell"):
        eq.friedman_test(eq.from_arrays(score, models=list("abc")))
    with pytest.raises(CubeError, match="select complete languages"):
        eq.critical_difference(eq.from_arrays(score, models=list("abc")))


def test_too_few_models_or_languages():
    with pytest.raises(CubeError, match="at least 2 models; got 1"):
        eq.friedman_test(eq.from_arrays(np.ones((1, 4, 1))))
    with pytest.raises(CubeError, match=r"at least 2 languages \(blocks\); got 1"):
        eq.friedman_test(eq.from_arrays(np.ones((3, 1, 1))))


def test_argument_validation():
    cube = _cube(np.random.default_rng(8).normal(size=(5, 3)), list("abc"))
    with pytest.raises(ValueError, match="`test` must be one of 'nemenyi', 'wilcoxon-holm'"):
        eq.critical_difference(cube, test="bonferroni-dunn")
    with pytest.raises(ValueError, match=r"`alpha` must be in \(0, 1\); got 1.5"):
        eq.critical_difference(cube, alpha=1.5)


def test_result_object_conversions():
    with pytest.warns(EvaluqWarning, match="chi-square p-value .* is an approximation"):
        res = eq.friedman_test(_cube(np.random.default_rng(9).normal(size=(6, 3)),
                                     list("abc")))
    assert "statistic=" in repr(res)
    assert "<table" in res._repr_html_()
    assert set(res.to_dataset().data_vars) >= {"statistic", "pvalue", "mean_rank"}
    with pytest.raises(TypeError, match="no confidence interval"):
        res.confidence_interval()


# --- calibration (slow) ------------------------------------------------------------------------


def _null_ranks(gen: np.random.Generator, n_sim: int, n: int, k: int) -> np.ndarray:
    return np.argsort(np.argsort(gen.normal(size=(n_sim, n, k)), axis=-1), axis=-1) + 1.0


@pytest.mark.slow
def test_type_one_error_friedman_and_nemenyi():
    """Under the null (exchangeable models), Friedman's chi-square and Iman-Davenport's F reject
    at about alpha, and the Nemenyi test's family-wise error is at most alpha."""
    gen = np.random.default_rng(19)
    n_sim, n, k, alpha = 20000, 20, 5, 0.05
    ranks = _null_ranks(gen, n_sim, n, k)
    stat, p = _friedman_kernel(ranks)
    f = (n - 1) * stat / (n * (k - 1) - stat)
    p_f = stats.f.sf(f, k - 1, (k - 1) * (n - 1))
    mean = ranks.mean(axis=1)
    cd = nemenyi_q(k, alpha) * np.sqrt(k * (k + 1) / (6 * n))
    fwer = np.mean(mean.max(axis=1) - mean.min(axis=1) > cd)
    sd = np.sqrt(alpha * (1 - alpha) / n_sim)
    for label, rate in [("Friedman chi2", np.mean(p <= alpha)),
                        ("Friedman Iman-Davenport F", np.mean(p_f <= alpha)),
                        ("Nemenyi family-wise", fwer)]:
        print(f"\nCALIBRATION | demsar {label} (N=20 languages, k=5 models) | null rejection rate "
              f"| nominal {alpha:.3f} | measured {rate:.4f} | n {n_sim}")
    assert abs(np.mean(p_f <= alpha) - alpha) <= 4 * sd
    assert np.mean(p <= alpha) <= alpha + 4 * sd      # chi-square is conservative at small N
    assert fwer <= alpha + 4 * sd


# --- small samples -----------------------------------------------------------------------------


def _brute_force_friedman_p(table: np.ndarray) -> float:
    """The exact permutation p of Friedman's statistic by enumerating every combination of
    the distinct orderings of each block's ranks (independent of the kernel's dynamic
    programme)."""
    import itertools

    ranks = stats.rankdata(-table, axis=1)
    orderings = [sorted(set(itertools.permutations(row))) for row in ranks]
    observed = np.sum(ranks.sum(axis=0) ** 2)
    hits = total = 0
    for combo in itertools.product(*orderings):
        total += 1
        hits += np.sum(np.sum(combo, axis=0) ** 2) >= observed - 1e-9
    return hits / total


def test_friedman_over_few_languages_warns_with_the_exact_pvalue():
    """N = 2 languages, k = 3 models (the sweep's case): the chi-square p 0.607 is far from the
    exact 0.833 and nothing said so. With 10 languages or fewer it warns and gives the exact
    permutation p (brute force here, ties included); `pvalue` stays scipy's / autorank's."""
    s = np.random.default_rng(9).random((3, 2, 3))
    with pytest.warns(EvaluqWarning, match=r"over 2 languages.*\(0\.6065\).*exact "
                                           r"permutation p-value is 0\.8333"):
        res = eq.friedman_test(eq.from_arrays(s))
    assert res.pvalue == pytest.approx(0.6065306597126334, abs=1e-12)
    assert res.attrs["exact_pvalue"] == pytest.approx(5 / 6, abs=1e-12)
    assert res.attrs["exact_pvalue"] == pytest.approx(_brute_force_friedman_p(s.mean(-1).T))
    gen = np.random.default_rng(3)
    for n, k in ((3, 3), (4, 4), (5, 3)):
        table = np.round(gen.random((n, k)), 1)                 # ties within blocks
        with pytest.warns(EvaluqWarning, match="exact permutation p-value"):
            res = eq.friedman_test(_cube(table, list("abcd")[:k]))
        assert res.attrs["exact_pvalue"] == pytest.approx(_brute_force_friedman_p(table),
                                                          abs=1e-12)
        assert res.pvalue == pytest.approx(stats.friedmanchisquare(*table.T).pvalue)
    table = np.array([[0.9, 0.8, 0.7], [0.8, 0.7, 0.6], [0.7, 0.9, 0.5]]).T   # (lang, model)
    assert _brute_force_friedman_p(table) == pytest.approx(0.5278, abs=5e-5)   # the doctest
    many = eq.friedman_test(_cube(gen.random((11, 3)), list("abc")))          # no warning
    assert "exact_pvalue" not in many.attrs


def test_friedman_exact_pvalue_is_left_out_beyond_its_budget():
    table = np.random.default_rng(4).random((4, 9))                 # 9! orderings a block
    with pytest.warns(EvaluqWarning, match="too costly to compute.*read the p-value as rough"):
        res = eq.friedman_test(_cube(table, [f"m{j}" for j in range(9)]))
    assert "exact_pvalue" not in res.attrs


def test_wilcoxon_holm_warns_when_no_pair_can_be_significant():
    """5 languages: the smallest two-sided Wilcoxon p is 2/2^5 = 0.0625 (scipy, every
    difference of one sign), above alpha = 0.05 whatever the scores: it warns, naming the
    languages needed (6 for one pair; 7 for 3 pairs, 3 x 2/2^6 = 0.047)."""
    assert stats.wilcoxon(np.arange(1.0, 6.0)).pvalue == pytest.approx(2 / 2**5)
    gen = np.random.default_rng(5)
    with pytest.warns(EvaluqWarning, match=r"over 5 languages.*2/2\^5 = 0\.0625, above "
                                           r"`alpha` = 0\.05.*At least 6 languages"):
        cd = eq.critical_difference(_cube(gen.random((5, 2)), list("ab")), test="wilcoxon-holm")
    assert not cd["significant"].values.any()
    eq.critical_difference(_cube(gen.random((6, 2)), list("ab")), test="wilcoxon-holm")
    with pytest.warns(EvaluqWarning, match=r"0\.09375 after Holm's correction for 3 pairs.*"
                                           r"At least 7 languages are needed for 3 models"):
        eq.critical_difference(_cube(gen.random((6, 3)), list("abc")), test="wilcoxon-holm")
    eq.critical_difference(_cube(gen.random((7, 3)), list("abc")), test="wilcoxon-holm")
    eq.critical_difference(_cube(gen.random((6, 3)), list("abc")), test="wilcoxon-holm",
                           alpha=0.1)


def test_nemenyi_warns_when_no_pair_can_be_significant():
    """Few languages: two mean ranks differ by at most k - 1 (one model first and the other
    last everywhere), and with CD >= k - 1 Nemenyi can separate no pair whatever the scores;
    it said nothing. Demšar's q_0.05 (Table 5a: 1.960 for k = 2, 2.343 for k = 3):
    CD = 2.343 sqrt(12 / 12) = 2.34 >= 2 over 2 languages, 1.91 < 2 over 3 (3 needed);
    1.960 sqrt(6 / 18) = 1.13 >= 1 over 3 languages, 0.98 < 1 over 4 (4 needed)."""
    for k, q in ((2, 1.960), (3, 2.343)):
        assert nemenyi_q(k) == pytest.approx(q, abs=1e-3)     # the table rounds down
    best_to_worst = np.array([[3.0, 2.0, 1.0]])              # a first, c last: k - 1 = 2 apart
    with pytest.warns(EvaluqWarning, match=r"Nemenyi over 2 languages.*critical difference "
                                           r"2\.34\d is not below 2.*At least 3 languages are "
                                           r"needed for 3 models"):
        cd = eq.critical_difference(_cube(np.repeat(best_to_worst, 2, axis=0), list("abc")))
    assert cd.attrs["cd"] == pytest.approx(2.343 * np.sqrt(12 / 12), abs=1e-3)
    assert not cd["significant"].values.any()
    cd = eq.critical_difference(_cube(np.repeat(best_to_worst, 3, axis=0), list("abc")))
    assert cd.attrs["cd"] == pytest.approx(2.343 * np.sqrt(12 / 18), abs=1e-3)
    assert bool(cd["significant"].sel(model="a", model_b="c"))      # reachable, and reached
    with pytest.warns(EvaluqWarning, match=r"Nemenyi over 3 languages.*At least 4 languages "
                                           r"are needed for 2 models"):
        eq.critical_difference(_cube(np.tile([[1.0, 0.0]], (3, 1)), list("ab")))
    cd = eq.critical_difference(_cube(np.tile([[1.0, 0.0]], (4, 1)), list("ab")))
    assert bool(cd["significant"].sel(model="a", model_b="b"))
    # a looser alpha needs fewer languages: q_0.10 = 1.645 for k = 2, CD over 3 = 0.95 < 1
    eq.critical_difference(_cube(np.tile([[1.0, 0.0]], (3, 1)), list("ab")), alpha=0.1)


def test_a_missing_cell_is_named_by_its_plain_labels():
    """The message named the cell as numpy printed it, (np.str_('a'), np.int64(0)): the
    labels as written, ('a', 0), as the other messages name cells."""
    x = np.random.default_rng(1).uniform(0.5, 0.9, (3, 6, 2))
    x[0, 0, :] = np.nan
    for models, want in ((["a", "b", "c"], r"\('a', 0\)"), ([5, 6, 7], r"\(5, 0\)")):
        with pytest.raises(CubeError, match=rf"no score for 1 \(model, language\) cell\(s\): "
                                            rf"{want};"):
            eq.critical_difference(eq.from_arrays(x, models=models))

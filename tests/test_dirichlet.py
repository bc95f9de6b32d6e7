"""Tests of evaluq.dirichlet: check values and errata of formulas.md section 3, Monte Carlo and
scipy cross-checks, input validation, the per-bin table and the model ranking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import betaln, digamma, xlogy

import evaluq as eq
from evaluq import dirichlet as dr
from evaluq._dims import CLASS, ITEM, MODEL
from evaluq.dirichlet import _expectations as de
from evaluq.dirichlet import _quadrature as dq
from evaluq.metrics._soft import cross_entropy_items, emd_items, entropy, kl_items

COUNTS = [1, 2, 4, 2, 1]
Q_MATCH = [0.1, 0.2, 0.4, 0.2, 0.1]
Q_MISMATCH = [0.1, 0.3, 0.3, 0.2, 0.1]
ONLY_TOP = [0, 0, 0, 0, 2]
UNIFORM = [0.2] * 5


# --- check values (formulas.md section 3) -------------------------------------------------------

def test_expected_probs_check_value() -> None:
    np.testing.assert_allclose(dr.expected_probs(COUNTS).values, np.array([2, 3, 5, 3, 2]) / 15)
    # the paper's "two excellent ratings" example: (1 + 2) / (K + 2)
    assert dr.expected_probs(ONLY_TOP).values[-1] == pytest.approx(3 / 7)


@pytest.mark.parametrize(
    ("func", "counts", "q", "expected"),
    [
        (dr.expected_cross_entropy, COUNTS, Q_MATCH, 1.56323),
        (dr.expected_kl, COUNTS, Q_MATCH, 0.13944),
        (dr.expected_emd, COUNTS, Q_MATCH, 0.08228),
        (dr.expected_jsd, COUNTS, Q_MATCH, 0.03427),
        (dr.expected_cross_entropy, COUNTS, Q_MISMATCH, 1.57803),
        (dr.expected_kl, COUNTS, Q_MISMATCH, 0.15424),
        (dr.expected_emd, COUNTS, Q_MISMATCH, 0.08599),
        (dr.expected_jsd, COUNTS, Q_MISMATCH, 0.03868),
        (dr.expected_kl, ONLY_TOP, UNIFORM, 0.37372),
        (dr.expected_emd, ONLY_TOP, UNIFORM, 0.18225),
        (dr.expected_jsd, ONLY_TOP, UNIFORM, 0.09746),
    ],
)
def test_check_values(func, counts, q, expected) -> None:
    assert float(func(counts, q)) == pytest.approx(expected, abs=5e-6)


@pytest.mark.parametrize(("counts", "expected"), [(COUNTS, 1.42378), (ONLY_TOP, 1.23571)])
def test_expected_entropy_check_values(counts, expected) -> None:
    assert float(dr.expected_entropy(counts)) == pytest.approx(expected, abs=5e-6)


def test_kl_is_ce_minus_entropy() -> None:
    ce = float(dr.expected_cross_entropy(COUNTS, Q_MATCH))
    h = float(dr.expected_entropy(COUNTS))
    assert float(dr.expected_kl(COUNTS, Q_MATCH)) == pytest.approx(ce - h, abs=1e-14)


# --- errata -------------------------------------------------------------------------------------

def test_erratum_example2_kl_and_ce() -> None:
    """The paper's Example 2 gives KL ~ 0.97 and CE ~ 1.83; the true values are 0.8318, 1.3322."""
    p = np.array([[0.0, 0.8, 0.2, 0.0, 0.0], [0.0, 0.8, 0.0, 0.0, 0.2]])
    q = np.array([[0.0, 0.2, 0.8, 0.0, 0.0], [0.0, 0.2, 0.0, 0.0, 0.8]])
    kl = kl_items(p, q)
    ce = cross_entropy_items(p, q)
    np.testing.assert_allclose(kl, 0.6 * np.log(4), rtol=1e-12)
    np.testing.assert_allclose(kl, 0.8318, atol=5e-5)
    np.testing.assert_allclose(ce, 1.3322, atol=5e-5)
    assert np.all(np.abs(kl - 0.97) > 0.1)
    assert np.all(np.abs(ce - 1.83) > 0.4)
    # its EMD values 0.15 and 0.45 are right (with the 1/(K-1) normalization)
    np.testing.assert_allclose(emd_items(p, q), [0.15, 0.45], atol=1e-12)


def _paper_code_entropy(a: np.ndarray) -> np.ndarray:
    """The paper's public code: E[H] with the '+1' inside both digammas dropped."""
    a0 = a.sum(-1, keepdims=True)
    return -(a / a0 * (digamma(a) - digamma(a0))).sum(-1)


def test_erratum_code_drops_plus_one_in_digamma(rng) -> None:
    """Dropping the '+1' is off by exactly (K-1)/a0, and its E[KL] can go negative."""
    counts = np.array([COUNTS, ONLY_TOP, [5, 0, 0, 0, 0]], dtype=float)
    a = counts + 1.0
    a0 = a.sum(-1)
    ours = dr.expected_entropy(counts).values
    np.testing.assert_allclose(_paper_code_entropy(a) - ours, (5 - 1) / a0, rtol=1e-12)
    # Monte Carlo sides with ours
    mc = dr.monte_carlo_expectation(counts, metric="entropy", n_draws=40_000, rng=rng)
    assert np.all(np.abs(mc.estimate - ours) < 4 * mc.standard_error)
    assert np.all(np.abs(mc.estimate - _paper_code_entropy(a)) > 20 * mc.standard_error)
    # a prediction equal to the posterior mean: E[KL] > 0 but the code's value is negative
    q = a / a0[:, None]
    ours_kl = dr.expected_kl(counts, q).values
    code_kl = cross_entropy_items(q, q) - _paper_code_entropy(a)
    assert np.all(ours_kl > 0)
    assert np.all(code_kl < 0)


def test_erratum_appendix_derivative_is_expected_log(rng) -> None:
    """d log B(a) / d a_k = psi(a_k) - psi(a0) is E[log p_k], not E[p_k log p_k]."""
    a = np.array(COUNTS, dtype=float) + 1.0
    draws = rng.dirichlet(a, size=200_000)
    e_log = np.log(draws).mean(0)
    e_plogp = xlogy(draws, draws).mean(0)
    se = xlogy(draws, draws).std(0) / np.sqrt(draws.shape[0])
    derivative = digamma(a) - digamma(a.sum())
    np.testing.assert_allclose(e_log, derivative, atol=0.01)
    ours = a / a.sum() * (digamma(a + 1) - digamma(a.sum() + 1))
    assert np.all(np.abs(e_plogp - ours) < 4 * se)
    assert np.all(np.abs(derivative - ours) > 0.5)


def test_erratum_emd_without_normalization(rng) -> None:
    """The paper's code sums |F_p - F_q| without 1/(K-1): (K-1) times too large, beyond [0, 1]."""
    ours = float(dr.expected_emd(ONLY_TOP, UNIFORM))
    mc = dr.monte_carlo_expectation(ONLY_TOP, UNIFORM, metric="emd", n_draws=50_000, rng=rng)
    assert abs(float(mc.estimate) - ours) < 4 * float(mc.standard_error)
    unnormalized = 4 * ours
    assert unnormalized == pytest.approx(0.72899, abs=1e-5)
    assert abs(unnormalized - float(mc.estimate)) > 100 * float(mc.standard_error)
    worst = dr.expected_emd([0, 0, 0, 0, 50], [1, 0, 0, 0, 0])
    assert float(worst) <= 1.0 < 4 * float(worst)


# --- Monte Carlo cross-checks -------------------------------------------------------------------

@pytest.mark.parametrize("metric", ["cross_entropy", "kl", "entropy", "jsd", "emd"])
@pytest.mark.parametrize("alpha", [1.0, 0.5, [0.5, 1.0, 2.0, 1.0, 0.3]])
def test_closed_forms_match_monte_carlo(metric, alpha, rng) -> None:
    counts = np.array([COUNTS, ONLY_TOP, [0, 0, 0, 0, 0], [30, 2, 0, 1, 7]])
    q = np.array([Q_MATCH, UNIFORM, Q_MISMATCH, [0.6, 0.1, 0.05, 0.05, 0.2]])
    funcs = {"cross_entropy": dr.expected_cross_entropy, "kl": dr.expected_kl,
             "jsd": dr.expected_jsd, "emd": dr.expected_emd}
    exact = (dr.expected_entropy(counts, prior=alpha) if metric == "entropy"
             else funcs[metric](counts, q, prior=alpha))
    mc = dr.monte_carlo_expectation(counts, q, metric=metric, prior=alpha, n_draws=20_000,
                                    rng=rng)
    # (the floor covers items whose metric does not depend on p, e.g. CE against uniform q)
    z = np.abs(mc.estimate - exact) / (mc.standard_error + 1e-12)
    assert float(z.max()) < 4.5, (metric, alpha, z.values)


def test_monte_carlo_is_reproducible() -> None:
    a = dr.monte_carlo_expectation(COUNTS, Q_MATCH, metric="emd", n_draws=500, rng=3)
    b = dr.monte_carlo_expectation(COUNTS, Q_MATCH, metric="emd", n_draws=500, rng=3)
    xr.testing.assert_identical(a, b)
    assert a.attrs["n_draws"] == 500


# --- quadrature and closed form against scipy ---------------------------------------------------

@pytest.mark.parametrize(
    ("a", "b", "q"),
    [(1, 1, 0.1), (3, 7, 0.4), (0.5, 30, 0.01), (0.1, 5, 0.0), (200, 300, 0.3), (3, 0.2, 0.5),
     (1, 500, 0.001), (0.3, 0.3, 0.25), (60, 40, 0.2), (1, 4, 1.0)],
)
def test_jsd_quadrature_matches_scipy_quad(a, b, q) -> None:
    est = float(dq._expected_m_log_m(np.array([a], float), np.array([b], float),
                                     np.array([q], float), 128)[0])

    def f(x: float) -> float:
        m = (x + q) / 2
        return xlogy(m, m)

    if a + b < 20:
        # QUADPACK's algebraic-weight rule handles x^(a-1) (1-x)^(b-1) exactly at the ends
        val, _ = integrate.quad(f, 0, 1, weight="alg", wvar=(a - 1, b - 1), limit=200,
                                epsabs=1e-14, epsrel=1e-12)
        ref = val / np.exp(betaln(a, b))
    else:  # a peaked, smooth density: plain adaptive quadrature split at the mode
        ref, _ = integrate.quad(lambda x: f(x) * stats.beta.pdf(x, a, b), 0, 1, limit=200,
                                points=[(a - 1) / (a + b - 2)], epsabs=1e-14, epsrel=1e-12)
    assert est == pytest.approx(ref, abs=1e-11)


def test_jsd_quadrature_self_convergence(rng) -> None:
    """The default rule agrees with a 20x finer one on random (a, b, q) cells."""
    a = np.exp(rng.uniform(np.log(0.1), np.log(50), 400))
    b = np.exp(rng.uniform(np.log(0.2), np.log(1000), 400))
    q = rng.choice([0.0, 0.001, 0.05, 0.3, 0.9], 400)
    default = dq._expected_m_log_m(a, b, q)
    widest = int(dq._n_nodes(a, b, *dq._logit_range(a, b)).max())
    fine = dq._expected_m_log_m(a, b, q, 20 * widest)
    np.testing.assert_allclose(default, fine, rtol=0, atol=1e-12)


def test_jsd_q_zero_against_closed_form() -> None:
    """With q_k = 0, E[m log m] = (1/2)(E[p log p] - log 2 E[p]): closed form."""
    a, b = np.array([0.4, 2.0, 9.0]), np.array([3.0, 0.6, 40.0])
    est = dq._expected_m_log_m(a, b, np.zeros(3))
    mean = a / (a + b)
    exact = 0.5 * (mean * (digamma(a + 1) - digamma(a + b + 1)) - np.log(2) * mean)
    np.testing.assert_allclose(est, exact, atol=1e-12)


@pytest.mark.parametrize(("a", "b"), [(1, 1), (2, 9), (0.4, 3), (50, 70), (7, 0.5)])
@pytest.mark.parametrize("c", [0.0, 0.05, 0.37, 0.9, 1.0])
def test_expected_abs_dev_matches_scipy_beta(a, b, c) -> None:
    ours = float(de._expected_abs_dev(np.array(a, float), np.array(b, float), np.array(c, float)))
    ref = stats.beta(a, b).expect(lambda x: abs(x - c), epsabs=1e-12)
    assert ours == pytest.approx(ref, abs=1e-8)


def test_large_input_uses_lookup_tables_consistently(rng) -> None:
    counts = rng.integers(0, 30, size=(3000, 5))
    q = rng.dirichlet(np.ones(5), size=3000)
    a = counts + 1.0
    got = dr.expected_emd(counts, q).values
    a0 = a.sum(-1, keepdims=True)
    big = np.cumsum(a, -1)[:, :-1]
    c = np.clip(np.cumsum(q, -1)[:, :-1], 0, 1)
    ref = np.array([[stats.beta(x, y).expect(lambda t, cc=cc: abs(t - cc)) for x, y, cc in
                     zip(row_a, row_b, row_c, strict=True)]
                    for row_a, row_b, row_c in zip(big[:5], (a0 - big)[:5], c[:5],
                                                   strict=True)]).sum(-1) / 4
    np.testing.assert_allclose(got[:5], ref, atol=1e-8)
    # the table path (>= 4096 cells) and the direct path agree
    kl_small = np.concatenate([de._expected_kl(a[i:i + 100], q[i:i + 100])
                               for i in range(0, 3000, 100)])
    np.testing.assert_allclose(dr.expected_kl(counts, q).values, kl_small, rtol=1e-13)


# --- posterior and annotations ------------------------------------------------------------------

def test_posterior_from_ragged_annotations_and_table() -> None:
    ann = [[0, 1, 1, 2], [4, 4], [], [3]]
    counts = dr.counts_from_annotations(ann, n_classes=5)
    assert counts.values.tolist() == [[1, 2, 1, 0, 0], [0, 0, 0, 0, 2], [0] * 5, [0, 0, 0, 1, 0]]
    table = pd.DataFrame({"it": ["c", "a", "a", "c", "b", "a"],
                          "lab": [4, 0, 1, 4, 3, 1]})
    from_table = dr.counts_from_annotations(table, n_classes=5, item="it", label="lab")
    assert from_table[ITEM].values.tolist() == ["a", "b", "c"]
    assert from_table.values.tolist() == [[1, 2, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 2]]
    shuffled = dr.counts_from_annotations(table.iloc[::-1], n_classes=5, item="it", label="lab")
    xr.testing.assert_identical(from_table, shuffled)
    post = dr.posterior_from_annotations(table, n_classes=5, item="it", label="lab", prior=0.5)
    assert post.n_annotations.values.tolist() == [3.0, 1.0, 2.0]
    np.testing.assert_allclose(post.concentration.values, from_table.values + 0.5)
    assert "DirichletPosterior(n_items=3" in repr(post)


def test_posterior_object_and_counts_agree() -> None:
    post = dr.posterior([COUNTS, ONLY_TOP], prior=[1, 1, 2, 1, 1])
    direct = dr.expected_kl([COUNTS, ONLY_TOP], Q_MATCH, prior=[1, 1, 2, 1, 1])
    xr.testing.assert_identical(dr.expected_kl(post, Q_MATCH), direct)
    np.testing.assert_allclose(post.counts.values, [COUNTS, ONLY_TOP])


def test_dims_broadcast_over_models_and_keep_item_coords(rng) -> None:
    counts = xr.DataArray(rng.integers(0, 5, size=(6, 5)), dims=(ITEM, CLASS),
                          coords={ITEM: list("abcdef")})
    q = xr.DataArray(rng.dirichlet(np.ones(5), size=(3, 6)), dims=(MODEL, ITEM, CLASS),
                     coords={MODEL: ["x", "y", "z"], ITEM: list("abcdef")})
    out = dr.expected_emd(counts, q)
    assert out.dims == (MODEL, ITEM)
    assert out[ITEM].values.tolist() == list("abcdef")
    for m in range(3):
        np.testing.assert_allclose(out.values[m], dr.expected_emd(counts.values, q.values[m]))
    assert float(out.mean(ITEM).sel(model="y")) == pytest.approx(out.values[1].mean())


# --- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"counts": [[1, -2, 0]], "q": [0.2, 0.3, 0.5]}, "non-negative"),
        ({"counts": [[1, np.nan, 0]], "q": [0.2, 0.3, 0.5]}, "NaN"),
        ({"counts": [[1, 2, 0]], "q": [0.2, 0.3, 0.6]}, "probability distribution"),
        ({"counts": [[1, 2, 0]], "q": [-0.2, 0.7, 0.5]}, "negative entries"),
        ({"counts": [[1, 2, 0]], "q": [0.5, 0.5]}, "2 classes but the counts have 3"),
        ({"counts": [[1, 2, 0], [0, 1, 1]], "q": [[0.2, 0.3, 0.5]] * 3}, "shape"),
        ({"counts": [[1, 2, 0]], "q": [0.2, 0.3, 0.5], "prior": 0}, "prior"),
        ({"counts": [[1, 2, 0]], "q": [0.2, 0.3, 0.5], "prior": -1.0}, "prior"),
        ({"counts": [[1, 2, 0]], "q": [0.2, 0.3, 0.5], "prior": [1, 1]}, "`prior` has 2"),
        ({"counts": [[1, 2, 0]], "q": [0.2, 0.3, 0.5], "prior": np.inf}, "prior"),
        ({"counts": [1], "q": [1.0]}, "at least 2 classes"),
        ({"counts": np.ones((2, 2, 2)), "q": [0.5, 0.5]}, "2-D"),
        ({"counts": np.zeros((0, 3)), "q": [0.2, 0.3, 0.5]}, "empty"),
    ],
)
def test_bad_input_raises(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        dr.expected_kl(kwargs.pop("counts"), kwargs.pop("q"), **kwargs)


def test_bad_input_misc() -> None:
    post = dr.posterior([COUNTS])
    with pytest.raises(ValueError, match="already part of the DirichletPosterior"):
        dr.expected_kl(post, Q_MATCH, prior=1.0)
    with pytest.raises(ValueError, match=r"labels must be in \[0, 4\]"):
        dr.counts_from_annotations([[0, 5]], n_classes=5)
    with pytest.raises(ValueError, match="integers"):
        dr.counts_from_annotations([[0.5]], n_classes=5)
    with pytest.raises(ValueError, match="`item=` and `label=`"):
        dr.counts_from_annotations(pd.DataFrame({"i": [1], "l": [0]}), n_classes=2)
    with pytest.raises(ValueError, match="given as `label`"):
        dr.counts_from_annotations(pd.DataFrame({"i": [1], "l": [0]}), n_classes=2,
                                   item="i", label="x")
    with pytest.raises(TypeError, match="sequence of label sequences"):
        dr.counts_from_annotations("0123", n_classes=5)
    with pytest.raises(ValueError, match=">= 2"):
        dr.counts_from_annotations([[0]], n_classes=1)
    with pytest.raises(ValueError, match="`metric` must be one of"):
        dr.monte_carlo_expectation(COUNTS, Q_MATCH, metric="mse")
    with pytest.raises(ValueError, match="`q` is needed"):
        dr.monte_carlo_expectation(COUNTS, metric="kl")
    with pytest.raises(ValueError, match="n_nodes"):
        dr.expected_jsd(COUNTS, Q_MATCH, n_nodes=4)
    q_other = xr.DataArray([[0.5, 0.5]] * 2, dims=(ITEM, CLASS), coords={ITEM: [7, 8]})
    counts = xr.DataArray([[1, 1], [2, 0]], dims=(ITEM, CLASS), coords={ITEM: [1, 2]})
    with pytest.raises(ValueError, match="coordinates of `q` and of the counts differ"):
        dr.expected_emd(counts, q_other)
    with pytest.raises(ValueError, match="must have dims"):
        dr.expected_emd(xr.DataArray([[1, 1]], dims=("x", "y")), [0.5, 0.5])


def test_zero_prediction_gives_inf_or_eps() -> None:
    assert np.isinf(float(dr.expected_kl(COUNTS, [0, 0.25, 0.5, 0.25, 0])))
    finite = float(dr.expected_cross_entropy(COUNTS, [0, 0.25, 0.5, 0.25, 0], eps=1e-6))
    assert np.isfinite(finite)
    assert float(dr.expected_jsd(COUNTS, [0, 0.25, 0.5, 0.25, 0])) < np.log(2)


# --- properties ---------------------------------------------------------------------------------

rows = st.lists(st.integers(0, 40), min_size=3, max_size=6)


@settings(max_examples=30, deadline=None)
@given(counts=rows, seed=st.integers(0, 2**32 - 1), alpha=st.floats(0.2, 5.0))
def test_properties(counts, seed, alpha) -> None:
    k = len(counts)
    q = np.random.default_rng(seed).dirichlet(np.ones(k))
    post = dr.posterior(counts, prior=alpha)
    mean = post.expected_probs().values
    e_kl = float(dr.expected_kl(post, q).squeeze())
    e_jsd = float(dr.expected_jsd(post, q).squeeze())
    e_emd = float(dr.expected_emd(post, q).squeeze())
    e_h = float(dr.expected_entropy(post).squeeze())
    assert e_kl >= -1e-12
    assert -1e-12 <= e_jsd <= np.log(2)
    assert 0.0 <= e_emd <= 1.0 + 1e-12
    # Jensen: EMD and KL are convex in p, entropy is concave
    assert e_emd >= float(emd_items(mean, q)) - 1e-10
    assert e_kl >= float(kl_items(mean, q)) - 1e-10
    assert e_h <= float(entropy(mean)) + 1e-10


# --- per-bin table and model ranking ------------------------------------------------------------

def test_by_annotation_count_table(rng) -> None:
    n = rng.integers(2, 15, size=300)
    counts = np.stack([rng.multinomial(k, [0.1, 0.2, 0.4, 0.2, 0.1]) for k in n])
    preds = xr.DataArray(rng.dirichlet(np.ones(5) * 4, size=(2, 300)), dims=(MODEL, ITEM, CLASS),
                         coords={MODEL: ["A", "B"]})
    post = dr.posterior(counts)
    ece = dr.expected_cross_entropy(post, preds)
    table = dr.by_annotation_count({"E[CE]": ece}, post.n_annotations)
    assert table.index.tolist() == ["2-3", "4-5", "6-10", "11-20"]
    assert int(table[("count", "")].sum()) == 300
    sel = (n >= 6) & (n <= 10)
    assert table.loc["6-10", ("E[CE]", "B")] == pytest.approx(ece.sel(model="B").values[sel].mean())
    assert table.loc["6-10", ("count", "")] == sel.sum()
    with pytest.raises(ValueError, match="below the first bin edge"):
        dr.by_annotation_count(ece, post.n_annotations, bins=[3, 6])
    with pytest.raises(ValueError, match="strictly increasing"):
        dr.by_annotation_count(ece, post.n_annotations, bins=[0, 5, 5])
    with pytest.raises(ValueError, match="item"):
        dr.by_annotation_count({"x": ece.isel(item=slice(0, 10))}, post.n_annotations)


def test_empirical_metric_and_paper_style_bin_table(rng) -> None:
    n = rng.integers(2, 11, size=200)
    counts = np.stack([rng.multinomial(k, [0.1, 0.2, 0.4, 0.2, 0.1]) for k in n])
    q = rng.dirichlet(np.ones(5) * 3, size=200)
    emp = dr.empirical_metric(counts, q, metric="cross_entropy")
    np.testing.assert_allclose(emp.values, cross_entropy_items(counts / n[:, None], q))
    np.testing.assert_allclose(dr.empirical_metric(counts, q, metric="emd").values,
                               emd_items(counts / n[:, None], q))
    table = dr.by_annotation_count(
        {"CE_emp": emp, "E[CE]": dr.expected_cross_entropy(counts, q)}, n, bins=[2, 4, 6])
    assert table.index.tolist() == ["2-3", "4-5", "6+"]
    assert list(table.columns) == ["count", "CE_emp", "E[CE]"]
    # expected CE exceeds the empirical one most where annotations are few
    gap = table["E[CE]"] - table["CE_emp"]
    assert gap.iloc[0] > gap.iloc[-1] > 0
    with pytest.raises(ValueError, match="no annotations"):
        dr.empirical_metric([0, 0, 0], [0.2, 0.3, 0.5], metric="kl")
    with pytest.raises(ValueError, match="`metric` must be one of"):
        dr.empirical_metric(counts, q, metric="entropy")


def test_model_ranking_reversal() -> None:
    """A model that copies the raw frequencies wins the empirical metrics on items with few
    annotations; a smoother model wins the expected ones (the paper's ranking reversal)."""
    rng = np.random.default_rng(7)
    truth = rng.dirichlet(np.ones(5) * 2, size=400)
    n = rng.integers(2, 4, size=400)
    counts = np.stack([rng.multinomial(k, p) for k, p in zip(n, truth, strict=True)])
    freq = counts / n[:, None]
    copy = 0.97 * freq + 0.03 / 5
    smooth = (counts + 1.0) / (n[:, None] + 5.0)
    table = dr.model_ranking(counts, {"copy": copy, "smooth": smooth},
                             metrics=["cross_entropy", "kl", "emd", "jsd"])
    assert table.index.tolist() == ["CE empirical", "E[CE]", "KL empirical", "E[KL]",
                                    "EMD empirical", "E[EMD]", "JSD empirical", "E[JSD]"]
    assert table.loc["CE empirical", "best"] == "copy"
    assert table.loc["E[CE]", "best"] == "smooth"
    assert table.loc["E[EMD]", "best"] == "smooth"
    assert table.loc["E[CE]", "smooth"] == pytest.approx(
        float(dr.expected_cross_entropy(counts, smooth).mean()))
    with pytest.raises(ValueError, match="no annotations"):
        dr.model_ranking(np.vstack([counts, np.zeros((1, 5))]),
                         {"a": np.vstack([copy, np.full((1, 5), 0.2)])})
    with pytest.raises(ValueError, match="same shape"):
        dr.model_ranking(counts, {"a": copy, "b": copy[:10]})


def _ranking_data(n_items: int = 300, seed: int = 7) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.ones(5) * 2, size=n_items)
    n = rng.integers(2, 6, size=n_items)
    counts = np.stack([rng.multinomial(k, p) for k, p in zip(n, truth, strict=True)])
    smooth = (counts + 1.0) / (n[:, None] + 5.0)
    smoother = (counts + 2.0) / (n[:, None] + 10.0)
    return counts, {"smooth": smooth, "smoother": smoother}


def test_model_ranking_bootstrap_matches_an_index_bootstrap() -> None:
    """se / interval / p_best equal a plain bootstrap that draws item indices (same seed)."""
    counts, preds = _ranking_data()
    n_items, n_boot = counts.shape[0], 500
    table = dr.model_ranking(counts, preds, metrics=["cross_entropy", "emd"],
                             n_resamples=n_boot, confidence_level=0.9, rng=3)
    plain = dr.model_ranking(counts, preds, metrics=["cross_entropy", "emd"], n_resamples=0)
    # the existing columns are unchanged, the new ones follow
    pd.testing.assert_frame_equal(table[plain.columns], plain)
    assert table.columns.tolist()[3:] == [
        "p_best", "smooth se", "smooth lower", "smooth upper",
        "smoother se", "smoother lower", "smoother upper"]
    assert table.attrs == {"n_resamples": n_boot, "confidence_level": 0.9}
    idx = np.random.default_rng(3).integers(0, n_items, size=(n_boot, n_items))
    per_item = {"E[EMD]": {m: dr.expected_emd(counts, q).values for m, q in preds.items()},
                "CE empirical": {m: dr.empirical_metric(counts, q, metric="cross_entropy").values
                                 for m, q in preds.items()}}
    for row, values in per_item.items():
        means = {m: v[idx].mean(axis=1) for m, v in values.items()}
        for m, mb in means.items():
            assert table.loc[row, f"{m} se"] == pytest.approx(mb.std(ddof=1), rel=1e-10)
            assert table.loc[row, f"{m} lower"] == pytest.approx(np.quantile(mb, 0.05),
                                                                 rel=1e-10)
            assert table.loc[row, f"{m} upper"] == pytest.approx(np.quantile(mb, 0.95),
                                                                 rel=1e-10)
            # the SE is close to the textbook s / sqrt(N) (within bootstrap noise)
            textbook = values[m].std(ddof=1) / np.sqrt(n_items)
            assert table.loc[row, f"{m} se"] == pytest.approx(textbook, rel=0.15)
        best = table.loc[row, "best"]
        other = next(m for m in means if m != best)
        assert table.loc[row, "p_best"] == pytest.approx(np.mean(means[best] <= means[other]))


def test_model_ranking_p_best_separates_close_and_clear_gaps() -> None:
    counts, preds = _ranking_data()
    noise = np.random.default_rng(1).normal(0, 1e-4, size=preds["smooth"].shape)
    twin = preds["smooth"] + noise - noise.mean(axis=1, keepdims=True)
    table = dr.model_ranking(counts, {"smooth": preds["smooth"], "twin": twin,
                                      "uniform": np.full_like(twin, 0.2)},
                             metrics=["emd"], rng=0)
    # a near-tie between smooth and its twin: p_best far from 1; identical models tie (= best)
    assert 0.05 < table.loc["E[EMD]", "p_best"] < 0.95
    same = dr.model_ranking(counts, {"a": preds["smooth"], "b": preds["smooth"]},
                            metrics=["emd"], rng=0)
    assert same["p_best"].tolist() == [1.0, 1.0]
    clear = dr.model_ranking(counts, {"smooth": preds["smooth"],
                                      "uniform": np.full_like(twin, 0.2)}, rng=0)
    assert clear.loc["E[CE]", "best"] == "smooth"
    assert clear.loc["E[CE]", "p_best"] == 1.0
    lo, hi = clear.loc["E[CE]", "smooth lower"], clear.loc["E[CE]", "smooth upper"]
    assert lo < clear.loc["E[CE]", "smooth"] < hi
    # reproducible with a seed
    pd.testing.assert_frame_equal(clear, dr.model_ranking(
        counts, {"smooth": preds["smooth"], "uniform": np.full_like(twin, 0.2)}, rng=0))


def test_model_ranking_bootstrap_with_infinite_items() -> None:
    """A zero prediction where the posterior has mass gives an infinite E[CE] for that item:
    the resample means are infinite exactly when they draw it (no NaN, no warning)."""
    counts = np.array([[3, 1, 0], [0, 2, 2], [1, 1, 1], [2, 0, 2]] * 5)
    ok = (counts + 1.0) / (counts.sum(1, keepdims=True) + 3.0)
    bad = ok.copy()
    bad[0] = [0.5, 0.5, 0.0]  # one item of 20 with an infinite E[CE]
    table = dr.model_ranking(counts, {"ok": ok, "bad": bad}, metrics=["cross_entropy"],
                             n_resamples=400, rng=2)
    assert table.loc["E[CE]", "bad"] == np.inf
    assert table.loc["E[CE]", "best"] == "ok"
    assert table.loc["E[CE]", "p_best"] == 1.0
    assert table.loc["E[CE]", "bad se"] == np.inf
    assert table.loc["E[CE]", "bad upper"] == np.inf
    # P(item 0 never drawn) = (19/20)^20 = 0.358 > 2.5%: the lower end is finite
    assert np.isfinite(table.loc["E[CE]", "bad lower"])
    assert not table.isna().any().any()


@pytest.mark.parametrize(
    ("kwargs", "err", "match"),
    [({"n_resamples": -1}, ValueError, r"`n_resamples` must be >= 0"),
     ({"n_resamples": 10.5}, TypeError, r"`n_resamples` must be an integer"),
     ({"confidence_level": 1.5}, ValueError, r"`confidence_level` must be"),
     ({"rng": "seed"}, TypeError, r"`rng` must be an int")],
)
def test_model_ranking_bad_bootstrap_options(kwargs: dict, err: type, match: str) -> None:
    counts, preds = _ranking_data(20)
    with pytest.raises(err, match=match):
        dr.model_ranking(counts, preds, **kwargs)


def test_expected_probs_drops_item_for_one_item_like_the_expected_functions() -> None:
    post = dr.posterior(COUNTS)
    assert post.single
    assert post.expected_probs().dims == (CLASS,)
    xr.testing.assert_identical(post.expected_probs(), dr.expected_probs(COUNTS))
    xr.testing.assert_identical(dr.expected_probs(post), dr.expected_probs(COUNTS))
    assert dr.expected_kl(post, Q_MATCH).dims == dr.expected_kl(COUNTS, Q_MATCH).dims == ()
    assert dr.empirical_metric(post, Q_MATCH, metric="kl").dims == ()
    assert post.concentration.dims == (ITEM, CLASS)  # the parameters keep the item dim
    # 2-D counts (even a single row) keep the item dim everywhere
    two_d = dr.posterior([COUNTS])
    assert not two_d.single
    assert two_d.expected_probs().dims == (ITEM, CLASS)
    assert dr.expected_probs([COUNTS]).dims == (ITEM, CLASS)
    assert dr.expected_kl(two_d, Q_MATCH).dims == (ITEM,)
    # a ranking from one item's posterior still works (it averages over the item dim)
    table = dr.model_ranking(post, {"a": [Q_MATCH], "b": [Q_MISMATCH]}, n_resamples=0)
    assert table.loc["E[CE]", "best"] == "a"


def test_top_level_access() -> None:
    assert eq.dirichlet.expected_emd is dr.expected_emd
    assert "dirichlet" in eq.__all__


@pytest.mark.parametrize("func", ["posterior", "expected_probs", "expected_entropy"])
def test_alpha_is_a_deprecated_spelling_of_prior(func) -> None:
    f = getattr(dr, func)
    with pytest.warns(DeprecationWarning, match="`alpha` is deprecated; use `prior`"):
        old = f([COUNTS], alpha=0.5)
    new = f([COUNTS], prior=0.5)
    if func == "posterior":
        xr.testing.assert_identical(old.concentration, new.concentration)
        np.testing.assert_array_equal(new.prior, np.full(5, 0.5))
    else:
        xr.testing.assert_identical(old, new)
    with pytest.raises(TypeError, match="both `alpha` and `prior`"):
        f([COUNTS], alpha=0.5, prior=0.5)

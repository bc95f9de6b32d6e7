"""The shared-grid quadrature of the item model (``_gridquad``, issue 34): the fused kernel
against numpy's logsumexp, its gradient against PyTensor's autodiff of the same sum and
against finite differences, the numba backend against Python mode, and the grid's nodes."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.special import logsumexp

from evaluq.item_model._gridquad import (
    HALF_WIDTH,
    grid_loglik,
    grid_loglik_and_grad,
    grid_nodes,
    numpy_grid_loglik,
    numpy_nodes,
    posterior_grid,
    prior_base,
    term_cells,
)


def _case(seed=0, n_rows=12, n_nodes=9, n_terms=7, n_entries=4):
    gen = np.random.default_rng(seed)
    table = gen.normal(-1.0, 1.0, (n_rows, n_nodes))
    base = gen.normal(0.0, 1.0, n_nodes)
    rows = gen.integers(0, n_rows, (n_terms, n_entries))
    counts = gen.integers(0, 3, (n_terms, n_entries)).astype(np.float64)   # 0: padding
    weight = gen.integers(0, 4, n_terms).astype(np.float64)                # 0: padded term
    return table, base, rows, counts, weight


def _reference(table, base, rows, counts, weight):
    """The same sum written out term by term, entry by entry."""
    out = 0.0
    for t in range(len(weight)):
        f = base.copy()
        for e in range(rows.shape[1]):
            f = f + counts[t, e] * table[rows[t, e]]
        out += weight[t] * logsumexp(f)
    return out


def test_kernel_value_equals_a_loop_and_numpy():
    table, base, rows, counts, weight = _case()
    total, _, _ = grid_loglik_and_grad(table, base, rows, counts, weight)
    assert total == pytest.approx(_reference(table, base, rows, counts, weight), rel=1e-12)
    terms = numpy_grid_loglik(table, base, rows, counts)
    assert total == pytest.approx((weight * terms).sum(), rel=1e-12)


def test_kernel_gradient_equals_pytensor_autodiff_and_finite_differences():
    table, base, rows, counts, weight = _case(seed=1)
    _, d_table, d_base = grid_loglik_and_grad(table, base, rows, counts, weight)
    tt, bb = pt.dmatrix("table"), pt.dvector("base")
    f = bb[None, :] + (pt.as_tensor(counts)[:, :, None] * tt[rows]).sum(axis=1)
    ref = (weight * pt.logsumexp(f, axis=1)).sum()
    fn = pytensor.function([tt, bb], pt.grad(ref, [tt, bb]), mode="FAST_COMPILE")
    g_table, g_base = fn(table, base)
    np.testing.assert_allclose(d_table, g_table, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d_base, g_base, rtol=1e-10, atol=1e-12)
    eps = 1e-6
    bump = np.zeros_like(table)
    bump[rows[0, 0], 3] = eps
    fd = (_reference(table + bump, base, rows, counts, weight)
          - _reference(table - bump, base, rows, counts, weight)) / (2 * eps)
    assert d_table[rows[0, 0], 3] == pytest.approx(fd, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "NUMBA"])
def test_op_value_and_gradient_in_python_and_numba(mode):
    table, base, rows, counts, weight = _case(seed=2)
    tt, bb = pt.dmatrix("table"), pt.dvector("base")
    out = grid_loglik(tt, bb, rows, counts, weight)
    fn = pytensor.function([tt, bb], [out, *pt.grad(out, [tt, bb])], mode=mode)
    value, g_table, g_base = fn(table, base)
    total, d_table, d_base = grid_loglik_and_grad(table, base, rows, counts, weight)
    assert float(value) == pytest.approx(total, rel=1e-12)
    np.testing.assert_allclose(g_table, d_table, rtol=1e-12)
    np.testing.assert_allclose(g_base, d_base, rtol=1e-12)


def _dense(table, base, rows, counts):
    """Each term's normalised mass on every node (T, G): the dense softmax."""
    f = base + np.einsum("te,teg->tg", counts, table[rows])
    return np.exp(f - logsumexp(f, axis=1, keepdims=True))


def _check_cells(table, base, rows, counts, scales, n_items=60):
    """term_cells on draws of scaled tables: each term's mean and variance of b are the
    dense softmax's to 1e-12, and each item's node is the dense inverse CDF of its term
    (the count of nodes with cumulative mass below its uniform)."""
    b = np.linspace(-2.0, 2.0, table.shape[1])
    item_term = np.random.default_rng(9).integers(0, len(rows), n_items)
    tables = np.stack([s * table for s in scales])
    cell, mean, var = term_cells(tables, np.stack([base] * len(scales)), b, rows, counts,
                                 item_term, np.random.default_rng(4))
    u = np.random.default_rng(4).random((len(scales), n_items))
    for d, scale in enumerate(scales):
        prob = _dense(scale * table, base, rows, counts)
        np.testing.assert_allclose(mean[d], prob @ b, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(var[d], prob @ b**2 - (prob @ b) ** 2, rtol=1e-10,
                                   atol=1e-14)
        cdf = np.cumsum(prob, axis=1)[item_term]
        brute = np.minimum((cdf < u[d][:, None]).sum(axis=1), table.shape[1] - 1)
        np.testing.assert_array_equal(cell[d], brute)
    return prob


def test_term_cells_are_the_inverse_cdf_of_the_normalised_integrands():
    table, base, rows, counts, _ = _case(seed=3)
    _check_cells(table, base, rows, counts, (1.0, 2.0))


@pytest.mark.parametrize("sigma", [0.01, 0.4, 1.5, 6.0])
def test_nodes_span_the_prior_and_integrate_it(sigma):
    """numpy and PyTensor nodes agree; the grid spans +-HALF_WIDTH s with spacing at most
    h_data and s / 2; the trapezoid sum of the prior is 1 to 1e-11 (mass beyond 7 SDs 3e-12)."""
    h_data = 0.3
    b, h = numpy_nodes(sigma, h_data)
    s = pt.dscalar("s")
    nodes, spacing = grid_nodes(s, h_data)
    b_pt, h_pt = pytensor.function([s], [nodes, spacing], mode="FAST_COMPILE")(sigma)
    np.testing.assert_allclose(b_pt, b)
    assert float(h_pt) == pytest.approx(h)
    assert h <= min(h_data, sigma / 2) + 1e-15
    assert b[-1] >= HALF_WIDTH * sigma
    assert b[0] == -b[-1]
    assert np.exp(prior_base(np, b, sigma, h)).sum() == pytest.approx(1.0, abs=1e-11)
    grid, hh = posterior_grid(np.array([sigma, 2 * sigma]), h_data)
    assert hh <= min(h_data, sigma / 2) + 1e-15
    assert grid[-1] >= HALF_WIDTH * 2 * sigma


def _peaked_case(seed=0, n_nodes=301, n_terms=40, n_models=12):
    """Binomial item terms on a wide grid: each term's integrand is a narrow peak, so its
    window (``_term_window``) leaves most nodes out. Rows (model, y) of log C-free binomial
    log-probabilities with 20 trials; a few terms with two groups of models far apart make
    the integrand two-peaked (not log-concave in b once a convex row is added below)."""
    gen = np.random.default_rng(seed)
    b = np.linspace(-12.0, 12.0, n_nodes)
    eta = gen.normal(0.0, 3.0, n_models)
    n = 20
    y = np.arange(n + 1.0)[None, :, None]
    x = eta[:, None, None] - b
    table = (y * -np.logaddexp(0, -x) + (n - y) * -np.logaddexp(0, x)).reshape(-1, n_nodes)
    bump = np.log(1e-3 + np.exp(-0.5 * (b - 6.0) ** 2) + np.exp(-0.5 * (b + 6.0) ** 2))
    table = np.vstack([table, bump])                            # a row convex in places
    base = -0.5 * (b / 4.0) ** 2
    rows = np.empty((n_terms, n_models + 1), dtype=np.int64)
    counts = np.ones((n_terms, n_models + 1))
    for t in range(n_terms):
        ys = gen.integers(0, n + 1, n_models)
        rows[t, :n_models] = np.arange(n_models) * (n + 1) + ys
        rows[t, -1] = len(table) - 1
        counts[t, -1] = gen.choice([0.0, 1.0, 40.0, -3.0])    # the convex row, or its negative
    weight = gen.integers(1, 5, n_terms).astype(np.float64)
    return table, base, rows, counts, weight


@pytest.mark.parametrize("window", [36.0, 27.0])
def test_windows_leave_out_only_nodes_far_below_each_terms_largest(window):
    """Every node outside a term's window lies more than ``window`` below the term's largest
    (the block bound is a bound), the windows do cut (most nodes are left out), and the
    windowed sum equals the full one to 1e-13 with a gradient equal to autodiff's of the full
    sum, on integrands that are peaked, two-peaked and not log-concave; at ``WINDOW`` (the
    default) and at the beta-binomial's 27 nats (``_bb_grid.WINDOW``)."""
    from evaluq.item_model._gridquad import BLOCK, WINDOW, _block_bounds, _term_window

    table, base, rows, counts, weight = _peaked_case()
    hi, lo, top = _block_bounds(table, base)
    bound = np.empty(top.shape)
    f = base + np.einsum("te,teg->tg", counts, table[rows])
    kept = 0
    for t in range(len(weight)):
        g0, g1 = _term_window(t, table, base, rows, counts, hi, lo, top, bound,
                              np.empty(BLOCK), window)
        outside = np.r_[f[t, :g0], f[t, g1:]]
        assert np.all(outside < f[t].max() - window)
        assert f[t, g0:g1].max() == f[t].max()
        kept += g1 - g0
    assert kept < 0.5 * f.size
    args = (table, base, rows, counts, weight) + (() if window == WINDOW else (window,))
    total, d_table, d_base = grid_loglik_and_grad(*args)
    assert total == pytest.approx((weight * logsumexp(f, axis=1)).sum(), rel=1e-13)
    tt, bb = pt.dmatrix("table"), pt.dvector("base")
    full = bb[None, :] + (pt.as_tensor(counts)[:, :, None] * tt[rows]).sum(axis=1)
    ref = (weight * pt.logsumexp(full, axis=1)).sum()
    g_table, g_base = pytensor.function([tt, bb], pt.grad(ref, [tt, bb]),
                                        mode="FAST_COMPILE")(table, base)
    np.testing.assert_allclose(d_table, g_table, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d_base, g_base, rtol=1e-10, atol=1e-12)


def test_two_separate_peaks_are_both_kept():
    """A term whose integrand has two peaks 10 nats apart, separated by a valley 200 nats
    deep, sums both (a window grown from one peak while the edge is near it would stop in
    the valley)."""
    b = np.linspace(-10.0, 10.0, 401)
    row = np.maximum(-8.0 * (b + 5.0) ** 2, -8.0 * (b - 5.0) ** 2 - 10.0)
    table, base = row[None, :], np.zeros_like(b)
    rows, counts, weight = np.zeros((1, 1), dtype=np.int64), np.ones((1, 1)), np.ones(1)
    total, _, _ = grid_loglik_and_grad(table, base, rows, counts, weight)
    assert total == pytest.approx(logsumexp(row), rel=1e-14)
    assert np.exp(total - logsumexp(row[b < 0])) > 1.0 + 1e-5     # the lower peak counts


def test_a_nan_reaches_the_value():
    """A NaN in a row a term reads makes the value NaN (the sampler rejects the point), even
    where the window would otherwise leave the NaN's node out."""
    table, base, rows, counts, weight = _peaked_case(seed=4)
    table[rows[0, 0], 0] = np.nan
    assert np.isnan(grid_loglik_and_grad(table, base, rows, counts, weight)[0])


def test_term_cells_on_windows_equal_the_dense_softmax():
    """On peaked integrands the windows leave out most nodes (each below e^-36 of its
    term's largest), and the moments and cells are still the dense softmax's."""
    table, base, rows, counts, _ = _peaked_case(seed=5)
    prob = _check_cells(table, base, rows, counts, (1.0, 1.5))
    assert (prob < np.exp(-36.0)).mean() > 0.5


def test_term_cells_follow_the_terms_masses_with_ties():
    """A node of zero mass (a tie in the CDF) is never drawn, and the cells' frequencies
    follow the term's mass (one row per term: its mass is the row's softmax)."""
    gen = np.random.default_rng(0)
    prob = gen.random(7)
    prob[2] = 0.0
    prob /= prob.sum()
    with np.errstate(divide="ignore"):
        table = np.log(prob)[None, :]
    cell, mean, _ = term_cells(table[None], np.zeros((1, 7)), np.arange(7.0),
                               np.zeros((1, 1), dtype=np.int64), np.ones((1, 1)),
                               np.zeros(200_000, dtype=np.int64), np.random.default_rng(2))
    assert not np.any(cell == 2)
    np.testing.assert_allclose(np.bincount(cell[0], minlength=7) / 200_000, prob, atol=4e-3)
    assert mean[0, 0] == pytest.approx(prob @ np.arange(7.0), rel=1e-13)


def test_term_cells_do_not_depend_on_the_threads():
    """The uniforms are drawn first, in draw order: one thread and two give the same cells,
    means and variances, bit for bit."""
    table, base, rows, counts, _ = _peaked_case(seed=6)
    tables = np.stack([s * table for s in (1.0, 1.2, 1.4, 0.8, 0.9)])
    bases = np.stack([base] * 5)
    b = np.linspace(-2.0, 2.0, table.shape[1])
    item_term = np.random.default_rng(1).integers(0, len(rows), 300)
    one = term_cells(tables, bases, b, rows, counts, item_term, np.random.default_rng(3),
                     workers=1)
    two = term_cells(tables, bases, b, rows, counts, item_term, np.random.default_rng(3),
                     workers=2)
    for x, y in zip(one, two, strict=True):
        np.testing.assert_array_equal(x, y)

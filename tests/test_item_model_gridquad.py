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
    term_probabilities,
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


def test_term_probabilities_are_the_normalised_integrands():
    table, base, rows, counts, _ = _case(seed=3)
    prob = term_probabilities(np.stack([table, 2 * table]), np.stack([base, base]), rows,
                              counts)
    for d, scale in enumerate((1.0, 2.0)):
        f = base + np.einsum("te,teg->tg", counts, scale * table[rows])
        np.testing.assert_allclose(prob[d], np.exp(f - logsumexp(f, axis=1, keepdims=True)),
                                   rtol=1e-12)


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

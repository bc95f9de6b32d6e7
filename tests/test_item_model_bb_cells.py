"""The beta-binomial's item draws after sampling on likelihoods (``_bb_grid.product_cells``,
issue 34): the same cells, means and variances as the log path (``_gridquad.term_cells``)
from the same uniforms, and a draw whose term falls below TINY taken by the log path."""

from __future__ import annotations

import numpy as np
import pytest

from evaluq.item_model._bb_grid import bb_tables, product_cells
from evaluq.item_model._gridquad import prior_base, term_cells


def _draws(n_draws=6, n_m=5, n_k=2, n_max=4, n_items=300, seed=0):
    """Log tables of a few draws, their prior bases, and terms of single rows."""
    gen = np.random.default_rng(seed)
    eta = gen.normal(0.2, 1.2, (n_draws, n_m, n_k))
    epochs = np.full((n_m, n_k), float(n_max))
    b = np.linspace(-8.0, 8.0, 97)
    table = bb_tables(eta, epochs, gen.uniform(2.0, 20.0, n_draws), b, n_max + 1)
    base = prior_base(np, b, gen.uniform(1.0, 2.0, n_draws)[:, None], b[1] - b[0])
    task = gen.integers(0, n_k, n_items)
    counts = gen.integers(0, n_max + 1, (n_items, n_m))
    patterns, item_term = np.unique(np.c_[task, counts], axis=0, return_inverse=True)
    m = np.arange(n_m)[None, :]
    rows = (m * n_k + patterns[:, :1]) * (n_max + 1) + patterns[:, 1:]
    return table, base, b, rows, item_term.ravel()


def test_product_cells_equal_the_log_path():
    """From the same generator: the same node for every item and draw, and each term's
    conditional mean and variance of b to 1e-12."""
    table, base, b, rows, item_term = _draws()
    got = product_cells(table, base, b, rows, item_term, np.random.default_rng(3))
    want = term_cells(table, base, b, rows, np.ones(rows.shape), item_term,
                      np.random.default_rng(3))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-14)
    assert len(np.unique(got[0])) > 20                         # items spread over nodes


def test_a_draw_below_tiny_takes_the_log_path():
    """30 models x 60 epochs of half-right answers in one draw (a term's likelihood about
    2^-1800, below TINY): that draw's cells come from the log path (its own uniforms, drawn
    after the first ones), the other draw's from the products; no underflow to NaN."""
    n_m = 30
    eta = np.zeros((2, n_m, 1))
    b = np.linspace(-3.0, 3.0, 61)
    table = bb_tables(eta, np.full((n_m, 1), 60.0), np.array([1e6, 1e6]), b, 61)
    base = prior_base(np, b, np.array([[1.0], [1.0]]), b[1] - b[0])
    rows = np.stack([np.arange(n_m) * 61 + 30, np.arange(n_m) * 61 + 60])   # half, all right
    table[0] = np.maximum(table[0], -1.0)                    # draw 0: every term above TINY
    item_term = np.array([0, 1, 0, 1, 1])
    cell, mean, var = product_cells(table, base, b, rows, item_term, np.random.default_rng(7))
    assert np.isfinite(mean).all()
    assert np.isfinite(var).all()
    gen = np.random.default_rng(7)
    first = term_cells(table[:1], base[:1], b, rows, np.ones(rows.shape), item_term,
                       np.random.default_rng(7))
    gen.random((2, len(item_term)))
    second = term_cells(table[1:], base[1:], b, rows, np.ones(rows.shape), item_term, gen)
    np.testing.assert_array_equal(cell, np.r_[first[0], second[0]])
    np.testing.assert_allclose(mean, np.r_[first[1], second[1]], atol=1e-12)
    assert mean[1, 0] == pytest.approx(0.0, abs=1e-9)        # half right at eta 0: b near 0
    from evaluq.item_model._bb_grid import _product_cells
    from evaluq.item_model._gridquad import items_by_term

    scaled = np.exp(base - base.max(axis=1, keepdims=True))
    ok = _product_cells(np.exp(table), scaled, b, rows, *items_by_term(item_term, 2),
                        np.full((2, 5), 0.5))[3]
    assert ok.tolist() == [True, False]                    # draw 1 took the log path

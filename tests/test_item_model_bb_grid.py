"""The beta-binomial's fused table and grid kernel (``_bb_grid``, issue 34): the table against
the numpy reference (rising factorials and ``gammaln``), the likelihood table against its
exponential, the slopes against finite differences, the product path against the log path,
and both fallbacks (|eta| + |b| beyond the product range, a term below TINY)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluq.item_model._bb_grid import (
    PRODUCT_RANGE,
    WINDOW,
    bb_grid_loglik_and_grad,
    bb_likelihoods_and_slopes,
    bb_table_and_slopes,
    bb_tables,
)
from evaluq.item_model._betabinomial import bb_table
from evaluq.item_model._gridquad import grid_loglik_and_grad


def _cells(n_max, seed=0, n_m=3, n_k=2):
    gen = np.random.default_rng(seed)
    eta = gen.normal(0.3, 1.5, (n_m, n_k))
    epochs = gen.integers(0, n_max + 1, (n_m, n_k)).astype(np.float64)
    epochs[0, 0] = n_max
    epochs[-1, -1] = 0.0                                       # a cell never run
    return eta, epochs, np.linspace(-9.0, 9.0, 41)


def _valid(epochs, width, n_g):
    """The table's rows with y <= n (the rows a term can read), as a mask (rows, G)."""
    y = np.arange(width)
    return np.repeat((y[None, None, :] <= epochs[..., None]).reshape(-1), n_g).reshape(-1, n_g)


def _rising(eta, epochs, phi, b, n_max):
    """log BB - log C(n, y) as sums of logs of rising factorials, written out (every n):
    sum_{j<y} log(a + j) + sum_{j<n-y} log(c + j) - sum_{j<n} log(phi + j)."""
    from scipy.special import log_expit

    x = (eta[..., None] - b)[:, :, None, :]                          # (M, K, 1, G)
    y = np.arange(n_max + 1.0)[:, None]
    n = epochs[:, :, None, None]
    log_a, log_c = np.log(phi) + log_expit(x), np.log(phi) + log_expit(-x)
    a, c = np.exp(log_a), np.exp(log_c)
    out = (y > 0) * log_a + (n - y > 0) * log_c - (n > 0) * np.log(phi)
    for j in range(1, n_max):
        out = out + (y > j) * np.log(a + j) + (n - y > j) * np.log(c + j) \
            - (n > j) * np.log(phi + j)
    return out.reshape(-1, len(b))


@pytest.mark.parametrize("n_max", [1, 3, 20])
@pytest.mark.parametrize("rho", [1e-5, 0.2, 0.9])
def test_tables_equal_the_numpy_reference(n_max, rho):
    """The log table equals the rising factorials written out to 1e-12, and ``bb_table``
    (``gammaln`` above 16 epochs: its differences lose ~1e-10 at phi = 1e5); the
    likelihood table is its exponential."""
    eta, epochs, b = _cells(n_max)
    phi, width = 1.0 / rho - 1.0, n_max + 1
    ref = _rising(eta, epochs, phi, b, n_max)
    table, _, _ = bb_table_and_slopes(eta, epochs, phi, b, width)
    like, _, _, ok = bb_likelihoods_and_slopes(eta, epochs, phi, b, width)
    assert ok
    mask = _valid(epochs, width, len(b))
    np.testing.assert_allclose(table[:-1][mask], ref[mask], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(table[:-1][mask],
                               bb_table(np, eta, epochs, phi, b, n_max).reshape(ref.shape)[mask],
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(like[:-1][mask], np.exp(ref[mask]), rtol=1e-11, atol=1e-300)
    assert np.all(table[-1] == 0.0)                                     # the zero row
    assert np.all(like[-1] == 1.0)
    many = bb_tables(np.stack([eta, eta + 0.5]), epochs, np.array([phi, phi / 2]), b, width)
    np.testing.assert_allclose(many[0], table, rtol=1e-13, atol=1e-13)  # (slopes left out)
    np.testing.assert_allclose(many[1], bb_table_and_slopes(eta + 0.5, epochs, phi / 2, b,
                                                            width)[0], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("n_max", [3, 20])
def test_slopes_equal_finite_differences(n_max):
    """dT/dx and dT/dphi of both tables against central differences of the reference."""
    eta, epochs, b = _cells(n_max, seed=1)
    phi, width, eps = 2.5, n_max + 1, 1e-6
    mask = _valid(epochs, width, len(b))

    def ref(eta_, phi_):
        return bb_table(np, eta_, epochs, phi_, b, n_max).reshape(-1, len(b))

    fd_x = (ref(eta + eps, phi) - ref(eta - eps, phi)) / (2 * eps)
    fd_phi = (ref(eta, phi + eps) - ref(eta, phi - eps)) / (2 * eps)
    for d_x, d_phi in (bb_table_and_slopes(eta, epochs, phi, b, width)[1:],
                       bb_likelihoods_and_slopes(eta, epochs, phi, b, width)[1:3]):
        np.testing.assert_allclose(d_x[mask], fd_x[mask], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(d_phi[mask], fd_phi[mask], rtol=1e-6, atol=1e-7)


def _terms(eta, epochs, b, n_terms=30, seed=2):
    """Random terms of single rows (each model's count on one task), as the sampler's
    layout without pairs: ``pairs`` each row with the zero row."""
    gen = np.random.default_rng(seed)
    n_m, n_k = eta.shape
    width = int(epochs.max()) + 1
    n_rows = n_m * n_k * width
    task = gen.integers(0, n_k, n_terms)
    y = (gen.random((n_terms, n_m)) * (epochs[:, task].T + 1)).astype(np.int64)
    rows = (np.arange(n_m)[None, :] * n_k + task[:, None]) * width + y
    pairs = np.c_[np.arange(n_rows), np.full(n_rows, n_rows)]
    base = -0.5 * (b / 1.3) ** 2
    weight = gen.integers(1, 4, n_terms).astype(np.float64)
    return pairs, rows, np.ones(rows.shape), weight, base


def _log_path(eta, epochs, phi, b, base, pairs, rows, counts, weight):
    table = bb_table_and_slopes(eta, epochs, phi, b, int(epochs.max()) + 1)[0]
    return grid_loglik_and_grad(table[pairs[:, 0]] + table[pairs[:, 1]], base, rows, counts,
                                weight, WINDOW)[0]


def test_product_path_equals_the_log_path_and_its_gradient_finite_differences():
    eta, epochs, b = _cells(4, seed=3, n_m=4, n_k=2)
    epochs[-1, -1] = 4.0
    phi = 3.0
    pairs, rows, counts, weight, base = _terms(eta, epochs, b)
    total, d_eta, d_phi, d_b, d_base = bb_grid_loglik_and_grad(
        eta, epochs, np.array(phi), b, base, pairs, rows, counts, weight)
    assert total == pytest.approx(_log_path(eta, epochs, phi, b, base, pairs, rows, counts,
                                            weight), rel=1e-12)
    eps = 1e-6
    bump = np.zeros_like(eta)
    bump[1, 0] = eps

    def value(**kw):
        args = {"eta": eta, "phi": phi, "b": b, "base": base} | kw
        return bb_grid_loglik_and_grad(args["eta"], epochs, np.array(args["phi"]), args["b"],
                                       args["base"], pairs, rows, counts, weight)[0]

    assert d_eta[1, 0] == pytest.approx((value(eta=eta + bump) - value(eta=eta - bump))
                                        / (2 * eps), rel=1e-6)
    assert float(d_phi) == pytest.approx((value(phi=phi + eps) - value(phi=phi - eps))
                                         / (2 * eps), rel=1e-6)
    node = np.zeros_like(b)
    node[20] = eps
    assert d_b[20] == pytest.approx((value(b=b + node) - value(b=b - node)) / (2 * eps),
                                    rel=1e-5, abs=1e-8)
    assert d_base[20] == pytest.approx((value(base=base + node) - value(base=base - node))
                                       / (2 * eps), rel=1e-6, abs=1e-8)


def test_outside_the_product_range_the_log_path_gives_the_value():
    """|eta| + |b| beyond PRODUCT_RANGE: the likelihood table declines and the kernel takes
    the log path (the same value as the log path's own)."""
    eta, epochs, b = _cells(3, seed=4)
    b = b * (PRODUCT_RANGE / 8.0)                      # nodes out to 675
    assert not bb_likelihoods_and_slopes(eta, epochs, 2.0, b, 4)[3]
    pairs, rows, counts, weight, base = _terms(eta, epochs, b)
    base = -0.5 * (b / 200.0) ** 2
    total = bb_grid_loglik_and_grad(eta, epochs, np.array(2.0), b, base, pairs, rows, counts,
                                    weight)[0]
    assert np.isfinite(total)
    assert total == pytest.approx(_log_path(eta, epochs, 2.0, b, base, pairs, rows, counts,
                                            weight), rel=1e-13)


def test_a_term_below_tiny_takes_the_log_path():
    """30 models x 60 epochs of half-right answers: a term's likelihood is about 2^-1800,
    below TINY; the value is the log path's (finite), not a product's underflow."""
    n_m = 30
    eta = np.zeros((n_m, 1))
    epochs = np.full((n_m, 1), 60.0)
    b = np.linspace(-3.0, 3.0, 61)
    rows = (np.arange(n_m) * 61 + 30)[None, :]
    pairs = np.c_[np.arange(n_m * 61), np.full(n_m * 61, n_m * 61)]
    base = -0.5 * b**2
    args = (eta, epochs, np.array(1e6), b, base, pairs, rows, np.ones(rows.shape),
            np.ones(1))
    total = bb_grid_loglik_and_grad(*args)[0]
    assert total < -1000.0
    assert total == pytest.approx(_log_path(eta, epochs, 1e6, b, base, pairs, rows,
                                            np.ones(rows.shape), np.ones(1)), rel=1e-13)


@pytest.mark.parametrize("n_m", [1, 2, 3, 5, 6, 7, 10])
def test_product_path_equals_the_log_path_for_any_number_of_rows(n_m):
    """Terms of 1 to 10 rows (the passes of four rows, of two, and single rows): the
    product path's value, its gradient in the rows' logarithms and in base equal the log
    path's (the same windows)."""
    from evaluq.item_model._bb_grid import product_loglik_and_grad

    eta, epochs, b = _cells(4, seed=5, n_m=n_m, n_k=2)
    epochs[:] = 4.0
    pairs, rows, counts, weight, base = _terms(eta, epochs, b, n_terms=40, seed=n_m)
    table = bb_table_and_slopes(eta, epochs, 3.0, b, 5)[0]
    paired = table[pairs[:, 0]] + table[pairs[:, 1]]
    ok, total, d_paired, d_base = product_loglik_and_grad(np.exp(paired), base, rows, weight)
    want, d_want, d_base_want = grid_loglik_and_grad(paired, base, rows, counts, weight,
                                                     WINDOW)
    assert ok
    assert total == pytest.approx(want, rel=1e-13)
    np.testing.assert_allclose(d_paired, d_want, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(d_base, d_base_want, rtol=1e-11, atol=1e-13)


def test_window_leaves_out_only_negligible_nodes():
    """The beta-binomial's own window (27 nats, narrower than the other families' 36):
    each node left out holds at most e^-WINDOW of the largest, and the nodes left out stay
    below the trapezoid rule's own error bound at the narrowest integrand; on terms of 10
    rows each term's windowed sum leaves out less than 4e-12 of its full-grid integral,
    and the log path takes the same windows (the same value and gradient)."""
    from scipy.special import logsumexp

    from evaluq.item_model import _gridquad
    from evaluq.item_model._bb_grid import product_loglik_and_grad

    assert WINDOW < _gridquad.WINDOW
    assert 2 * np.exp(-WINDOW) < 4e-12 < 2 * np.exp(-2 * np.pi ** 2 / _gridquad.SPACING ** 2)
    eta, epochs, b = _cells(5, seed=6, n_m=10, n_k=2)
    epochs[:] = 5.0
    b = np.linspace(-9.0, 9.0, 121)
    pairs, rows, counts, weight, base = _terms(eta, epochs, b, n_terms=60, seed=7)
    table = bb_table_and_slopes(eta, epochs, 1.5, b, 6)[0]
    paired = table[pairs[:, 0]] + table[pairs[:, 1]]
    full = logsumexp(base + paired[rows].sum(axis=1), axis=-1)
    like = np.exp(paired)
    for t in range(len(weight)):                  # each term's share left out: 1 - e^-(gap)
        one = np.zeros_like(weight)
        one[t] = 1.0
        assert -1e-13 < full[t] - product_loglik_and_grad(like, base, rows, one)[1] < 4e-12
    ok, total, d_paired, d_base = product_loglik_and_grad(like, base, rows, weight)
    assert ok
    want, d_want, d_base_want = grid_loglik_and_grad(paired, base, rows, counts, weight,
                                                     WINDOW)
    assert total == pytest.approx(want, rel=1e-13)
    np.testing.assert_allclose(d_paired, d_want, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(d_base, d_base_want, rtol=1e-11, atol=1e-13)


def test_a_zero_count_in_a_weighted_term_takes_the_log_path():
    """The product path multiplies every row of a term: a weighted term with a count of 0
    (an entry to leave out) is the log path's, which skips it, not the product of every
    row; padded terms (weight 0, counts 0) keep the product path."""
    eta, epochs, b = _cells(4, seed=8, n_m=4, n_k=2)
    epochs[:] = 4.0
    pairs, rows, counts, weight, base = _terms(eta, epochs, b, n_terms=20, seed=9)
    counts[3, 1] = 0.0
    args = (eta, epochs, np.array(3.0), b, base, pairs)
    total = bb_grid_loglik_and_grad(*args, rows, counts, weight)[0]
    assert total == pytest.approx(_log_path(eta, epochs, 3.0, b, base, pairs, rows, counts,
                                            weight), rel=1e-13)
    padded = (np.r_[rows, np.zeros((4, rows.shape[1]), np.int64)],
              np.r_[np.ones(rows.shape), np.zeros((4, rows.shape[1]))], np.r_[weight, np.zeros(4)])
    assert bb_grid_loglik_and_grad(*args, *padded)[0] == pytest.approx(
        bb_grid_loglik_and_grad(*args, rows, np.ones(rows.shape), weight)[0], rel=1e-14)

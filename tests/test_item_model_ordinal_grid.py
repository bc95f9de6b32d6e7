"""The ordinal family's windowed shared-grid kernel (``_ordinal_grid``, issue 34): its value
against the full-grid sum (numpy) and ``scipy.integrate.quad``, its gradient against finite
differences and PyTensor's autodiff of the full-grid sum, the numba backend against Python
mode, and its guards."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import integrate
from scipy.special import expit

from evaluq.item_model._gridquad import items_by_term, numpy_nodes, prior_base
from evaluq.item_model._ordinal_grid import (
    PRODUCT_RANGE,
    TINY,
    WINDOW,
    _fill_products,
    _fill_rows,
    _layout,
    _terms,
    compact_rows,
    conditional_cells,
    numpy_integrand,
    numpy_loglik,
    ordinal_grid_loglik,
    ordinal_grid_loglik_and_grad,
)


def _case(seed=0, n_units=6, n_levels=4, n_combos=7, n_terms=40, n_entries=5, sigma=1.2,
          h_data=0.25, spread=1.0):
    gen = np.random.default_rng(seed)
    eta = gen.normal(0.0, spread, n_units)
    kappa = np.sort(gen.normal(0.0, 1.5, n_levels - 1))
    combos = gen.integers(0, 4, (n_combos, n_levels)).astype(np.float64)
    combos[0] = 0.0                                         # a padding combo
    combos[1] = 0.0
    combos[1, 0] = 6.0                                      # every rating at the lowest
    combos[2] = 0.0
    combos[2, -1] = 6.0                                     # ... and at the highest
    rows = gen.integers(0, n_units * n_combos, (n_terms, n_entries))
    counts = (gen.random((n_terms, n_entries)) < 0.8) * 1.0   # 0: padding
    weight = gen.integers(0, 4, n_terms).astype(np.float64)   # 0: a padded term
    b, h = numpy_nodes(sigma, h_data)
    return [eta, kappa, b, prior_base(np, b, sigma, h), combos, rows, counts, weight]


def _kernel(args):
    """The kernel on a case's arguments, the rows ``unit * C + combo`` compacted."""
    eta, kappa, b, base, combos, rows, counts, weight = args
    row_of, crows = compact_rows(rows, counts, weight, n_pad=len(np.unique(rows)) + 3)
    kernel: object = ordinal_grid_loglik_and_grad
    return kernel(eta, kappa, b, base, combos, row_of, crows,  # type: ignore[operator]
                  counts, weight)


@pytest.mark.parametrize("seed", range(4))
def test_value_equals_the_full_grid_sum(seed):
    """Each term's window leaves out nodes more than WINDOW nats below its top: the sum
    equals numpy's full-grid logsumexp to 1e-12 relative, with terms whose mass sits at the
    grid's edges (every rating at one extreme) and terms far apart (the window's guess is the
    previous term's)."""
    args = _case(seed=seed, spread=1.0 + seed)
    total = _kernel(args)[0]
    eta, kappa, b, base, combos, rows, counts, weight = args
    ref = (weight * numpy_loglik(eta, kappa, b, base, combos, rows, counts)).sum()
    assert total == pytest.approx(ref, rel=1e-12)
    order = np.random.default_rng(seed).permutation(len(weight))   # any term order
    shuffled = [*args[:5], rows[order], counts[order], weight[order]]
    assert _kernel(shuffled)[0] == pytest.approx(ref, rel=1e-12)


def test_wide_arguments_take_the_direct_exponentials():
    """With |eta| + |b| + |kappa| beyond PRODUCT_RANGE the level table's exponentials are
    not products (they would overflow): eta and kappa shifted by 400 together give the same
    value and gradient as unshifted, and both equal the full-grid sum."""
    args = _case(seed=1)
    total, d_eta, d_kappa = _kernel(args)[:3]
    wide = [args[0] + 400.0, args[1] + 400.0, *args[2:]]
    assert np.abs(wide[0]).max() + np.abs(wide[1]).max() > PRODUCT_RANGE
    total_w, d_eta_w, d_kappa_w = _kernel(wide)[:3]
    eta, kappa, b, base, combos, rows, counts, weight = wide
    ref = (weight * numpy_loglik(eta, kappa, b, base, combos, rows, counts)).sum()
    assert total_w == pytest.approx(ref, rel=1e-11)
    assert total_w == pytest.approx(total, rel=1e-11)
    np.testing.assert_allclose(d_eta_w, d_eta, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(d_kappa_w, d_kappa, rtol=1e-8, atol=1e-9)


def _both_paths(args):
    """(log path, product path) of the terms' value and gradients in the table and base,
    or None for the product path when it does not apply."""
    eta, kappa, b, base, combos, rows, counts, weight = args
    row_of, crows = compact_rows(rows, counts, weight)
    layout = _layout(len(eta), combos, row_of, counts, weight)
    gap = np.r_[0.0, np.log(-np.expm1(kappa[:-1] - kappa[1:])), 0.0]
    pp, comb = _fill_rows(eta, kappa, b, gap, combos, layout)
    log = _terms(base, comb, crows, counts, weight, 0.0, False)
    pp2, comb2, ok = _fill_products(eta, kappa, b, combos, layout)
    if not (layout[5] and ok):
        return log, None, (pp, pp2, layout[4])
    shift = base.max()
    return log, _terms(np.exp(base - shift), comb2, crows, counts, weight, shift, True), \
        (pp, pp2, layout[4])


@pytest.mark.parametrize("seed", range(3))
def test_product_path_equals_log_path(seed):
    """The product path (likelihoods multiplied, one logarithm per term) gives the log
    path's value, gradient in C and in base, and the same p table, to 1e-12."""
    log, product, (pp, pp2, used) = _both_paths(_case(seed=seed, spread=1.0 + seed))
    assert product is not None
    assert product[3]
    assert product[0] == pytest.approx(log[0], rel=1e-13)
    np.testing.assert_allclose(product[1], log[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(product[2], log[2], rtol=1e-12, atol=1e-12)
    n_cut = len(_case(seed=seed)[1])
    np.testing.assert_allclose(pp2[used, :n_cut], pp[used, :n_cut], rtol=1e-13, atol=1e-300)


def test_product_path_steps_aside_where_it_cannot_hold():
    """Where a term's likelihood underflows (its log-likelihood below log TINY: many
    ratings), or a count is not 0 / 1, or a combo count is fractional, the kernel takes the
    log path: its value still equals numpy's full-grid sum."""
    many = _case(seed=2, n_entries=12)
    many[4] = many[4] * 10.0                  # up to 60 ratings per (unit, combo)
    many[6] = np.ones_like(many[6])
    _, product, _ = _both_paths(many)
    assert product is not None
    assert not product[3]                                  # stopped at a tiny term
    eta, kappa, b, base, combos, rows, counts, weight = many
    per_term = numpy_loglik(eta, kappa, b, base, combos, rows, counts)
    assert per_term.min() < np.log(TINY)
    assert _kernel(many)[0] == pytest.approx((weight * per_term).sum(), rel=1e-12)
    for change in ("counts", "combos"):
        args = _case(seed=4)
        if change == "counts":
            args[6] = args[6] * 2.0
        else:
            args[4] = args[4] * 0.5
        eta, kappa, b, base, combos, rows, counts, weight = args
        assert not _layout(len(eta), combos, compact_rows(rows, counts, weight)[0], counts,
                           weight)[5]
        ref = (weight * numpy_loglik(eta, kappa, b, base, combos, rows, counts)).sum()
        assert _kernel(args)[0] == pytest.approx(ref, rel=1e-12)


def test_conditional_cells_equal_the_full_grid_inverse_cdf():
    """Each item's node drawn on its term's window equals numpy's inverse CDF of the term's
    full-grid mass with the same uniform (the mass outside a window is below 4e-12), on two
    draws whose grids differ in length (the shorter one padded)."""
    sigmas = (1.2, 0.7)
    cases = [_case(seed=5, sigma=s) for s in sigmas]
    n_max = max(len(c[2]) for c in cases)
    n_terms = len(cases[0][5])
    item_term = np.random.default_rng(6).integers(0, n_terms, 300)
    u = np.random.default_rng(7).random((2, 300))
    eta = np.stack([cases[0][0], cases[0][0] + 0.3])
    kappa = np.stack([cases[0][1], cases[0][1] - 0.2])
    b = np.zeros((2, n_max))
    base = np.zeros((2, n_max))
    for d, c in enumerate(cases):
        b[d, :len(c[2])], base[d, :len(c[2])] = c[2], c[3]
    combos, rows, counts = cases[0][4], cases[0][5], cases[0][6]
    row_of, crows = compact_rows(rows, counts, np.ones(n_terms))
    kernel: object = conditional_cells
    cells = kernel(eta, kappa, b, np.array([len(c[2]) for c in cases]), base,  # type: ignore[operator]
                   combos, row_of, crows, counts, *items_by_term(item_term, n_terms), u)
    for d, c in enumerate(cases):
        f = numpy_integrand(eta[d], kappa[d], c[2], c[3], combos, rows, counts)
        mass = np.exp(f - f.max(axis=1, keepdims=True))
        cdf = np.cumsum(mass / mass.sum(axis=1, keepdims=True), axis=1)
        ref = [min(np.searchsorted(cdf[t], x), len(c[2]) - 1)
               for t, x in zip(item_term, u[d], strict=True)]
        assert np.array_equal(cells[d], ref)


def test_one_term_equals_quad():
    """One item with ratings from three units, integrated over b by scipy's quad: the
    grid's trapezoid sum (windowed) matches to 1e-9 relative."""
    sigma, n_levels = 1.1, 5
    eta = np.array([0.4, -0.3, 1.0])
    kappa = np.array([-1.5, -0.4, 0.5, 1.7])
    ratings = [(0, 3, 2.0), (0, 4, 1.0), (1, 1, 3.0), (2, 2, 1.0), (2, 4, 2.0)]
    combos = np.zeros((len(ratings), n_levels))
    rows = np.zeros((1, len(ratings)), dtype=np.int64)
    for e, (unit, level, count) in enumerate(ratings):
        combos[e, level] = count
        rows[0, e] = unit * len(ratings) + e
    b, h = numpy_nodes(sigma, 0.2)
    total = _kernel([eta, kappa, b, prior_base(np, b, sigma, h), combos, rows,
                     np.ones((1, len(ratings))), np.ones(1)])[0]

    def integrand(x):
        out = np.exp(-0.5 * (x / sigma) ** 2) / np.sqrt(2 * np.pi) / sigma
        for unit, level, count in ratings:
            cum = np.r_[0.0, expit(kappa - (eta[unit] - x)), 1.0]
            out *= (cum[level + 1] - cum[level]) ** count
        return out

    ref, _ = integrate.quad(integrand, -12 * sigma, 12 * sigma, epsabs=0, epsrel=1e-13,
                            limit=200)
    assert total == pytest.approx(np.log(ref), rel=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_gradient_equals_finite_differences(seed):
    """The gradient in eta, kappa, the nodes and base is exact for the value computed:
    central differences (h = 1e-6) agree to 1e-6 of the largest component."""
    args = _case(seed=10 + seed, n_terms=25)
    _, *grads = _kernel(args)
    for i, grad in enumerate(grads):
        fd = np.zeros_like(args[i])
        for j in range(len(fd)):
            hi, lo = [a.copy() for a in args], [a.copy() for a in args]
            hi[i][j] += 1e-6
            lo[i][j] -= 1e-6
            fd[j] = (_kernel(hi)[0] - _kernel(lo)[0]) / 2e-6
        np.testing.assert_allclose(grad, fd, atol=1e-6 * max(1.0, np.abs(fd).max()))


def test_gradient_equals_autodiff_of_the_full_grid_sum():
    """PyTensor's gradient of the full-grid sum (the level table in PyTensor, logsumexp over
    every node) equals the kernel's to 1e-9: the nodes left out carry no mass."""
    from evaluq.item_model._ordinal import level_table

    eta, kappa, b, base, combos, rows, counts, weight = _case(seed=5)
    e, k, bb = pt.dvector("eta"), pt.dvector("kappa"), pt.dvector("base")
    table = level_table(pt, e[:, None] - b, k)                     # (U, K, G)
    comb = (pt.as_tensor(combos)[None, :, :, None] * table[:, None]).sum(axis=2)
    comb = comb.reshape((-1, len(b)))
    f = bb[None, :] + (pt.as_tensor(counts)[:, :, None] * comb[rows]).sum(axis=1)
    ref = (weight * pt.logsumexp(f, axis=1)).sum()
    fn = pytensor.function([e, k, bb], [ref, *pt.grad(ref, [e, k, bb])],
                           mode="FAST_COMPILE")
    value, g_eta, g_kappa, g_base = fn(eta, kappa, base)
    total, d_eta, d_kappa, _, d_base = _kernel([eta, kappa, b, base, combos, rows, counts,
                                                weight])
    assert total == pytest.approx(float(value), rel=1e-12)
    for mine, theirs in ((d_eta, g_eta), (d_kappa, g_kappa), (d_base, g_base)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "NUMBA"])
def test_op_value_and_gradient_in_python_and_numba(mode):
    eta, kappa, b, base, combos, rows, counts, weight = _case(seed=7)
    inputs = [pt.dvector(n) for n in ("eta", "kappa", "b", "base")]
    out = ordinal_grid_loglik(*inputs, combos, *compact_rows(rows, counts, weight), counts,
                              weight)
    fn = pytensor.function(inputs, [out, *pt.grad(out, inputs)], mode=mode)
    value, *grads = fn(eta, kappa, b, base)
    total, *ref = _kernel([eta, kappa, b, base, combos, rows, counts, weight])
    assert float(value) == pytest.approx(total, rel=1e-12)
    for mine, theirs in zip(grads, ref, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-300)


def test_window_leaves_out_only_negligible_nodes():
    """WINDOW nats below the top: each node left out holds at most e^-WINDOW of it, and the
    nodes left out on both sides (falling at least geometrically) stay below the trapezoid
    rule's own error bound at the narrowest integrand."""
    from evaluq.item_model._gridquad import SPACING

    assert 2 * np.exp(-WINDOW) < 4e-12 < 2 * np.exp(-2 * np.pi ** 2 / SPACING ** 2)


@pytest.mark.parametrize("bad", ["eta", "kappa", "order"])
def test_non_finite_or_unordered_inputs_give_nan(bad):
    args = _case(seed=3)
    if bad == "order":
        args[1] = args[1][::-1].copy()
    else:
        args[0 if bad == "eta" else 1][0] = np.nan
    total, *grads = _kernel(args)
    assert np.isnan(total)
    assert all(np.all(g == 0.0) for g in grads)


def test_op_rejects_wrong_dimensions():
    with pytest.raises(ValueError, match="eta must have 1 dimensions"):
        ordinal_grid_loglik(pt.dmatrix("eta"), pt.dvector("k"), pt.dvector("b"),
                            pt.dvector("base"), np.zeros((2, 3)), np.zeros(1, int),
                            np.zeros((1, 1), int), np.zeros((1, 1)), np.zeros(1))

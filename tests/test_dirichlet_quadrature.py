"""The per-marginal JSD rule against the previous rule (kept in the benchmark as the reference):
the same values to 1e-10 (measured: below 2e-13) on varied inputs, and the speed-up's
ingredients (nodes built once per distinct marginal; a concentrated marginal takes few nodes)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from evaluq import dirichlet as dr
from evaluq.dirichlet import _quadrature as dq

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_expected_jsd.py"
_spec = importlib.util.spec_from_file_location("bench_expected_jsd", _BENCH)
assert _spec is not None
assert _spec.loader is not None
reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference)


def test_grid_of_marginals_matches_the_previous_rule() -> None:
    """(a, b) from 0.05 to 1e6 (long tails to nearly point masses), q from 0 to 1."""
    g = np.exp(np.linspace(np.log(0.05), np.log(1e6), 18))
    a, b, q = (x.ravel() for x in np.meshgrid(
        g, g, np.array([0.0, 1e-9, 1e-3, 0.05, 0.3, 0.5, 0.9, 1.0]), indexing="ij"))
    new = dq._expected_m_log_m(a, b, q)
    old = reference.reference_m_log_m(a, b, q)
    np.testing.assert_allclose(new, old, rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    ("alpha", "max_count", "weighted"),
    [(1.0, 6, False), (0.5, 3, False), (0.05, 2, False), (1.0, 5000, False), (2.0, 40, True),
     (0.1, 100_000, True)],
)
def test_expected_jsd_matches_the_previous_rule(rng, alpha, max_count, weighted) -> None:
    """Small and large concentrations, integer and weighted counts, 2 to 10 classes, q with
    exact zeros."""
    for k in (2, 5, 10):
        counts = rng.integers(0, max_count + 1, size=(300, k)).astype(float)
        if weighted:
            counts *= rng.uniform(0.2, 1.7, size=counts.shape)
        q = rng.dirichlet(np.full(k, 0.7), size=300)
        q[::7, 0] = 0.0
        q /= q.sum(axis=1, keepdims=True)
        new = dr.expected_jsd(counts, q, prior=alpha).values
        old = reference.reference_expected_jsd(counts + alpha, q)
        np.testing.assert_allclose(new, old, rtol=0, atol=1e-10)


def test_nodes_are_sized_per_marginal() -> None:
    a = np.array([0.1, 1.0, 50.0, 5000.0])
    b = np.array([5.0, 10.0, 60.0, 7000.0])
    sizes = dq._n_nodes(a, b, *dq._logit_range(a, b))
    assert sizes[-1] <= 40  # a concentrated marginal: few nodes
    assert sizes[0] > 300  # a long tail (a = 0.1): many
    assert np.all(sizes >= dq._MIN_NODES)
    # the previous rule applied the widest marginal's count to every cell
    lo, hi = reference._ref_range(a, b)
    assert sizes.sum() < 0.5 * a.size * reference._ref_n_nodes(lo, hi, 64)


def test_distinct_marginals_are_found_once() -> None:
    a = np.array([1.0, 2.0, 1.0, 1.0, 2.0])
    b = np.array([3.0, 3.0, 3.0, 4.0, 3.0])
    ua, ub, inverse = dq._unique_pairs(a, b)
    assert sorted(zip(ua, ub, strict=True)) == [(1.0, 3.0), (1.0, 4.0), (2.0, 3.0)]
    np.testing.assert_array_equal(ua[inverse], a)
    np.testing.assert_array_equal(ub[inverse], b)


def test_both_evaluation_paths_agree(rng) -> None:
    """Many cells per marginal (matrix-vector path) and all-distinct marginals (gather path)."""
    a = np.repeat([1.0, 3.0, 8.0], 200)
    b = np.repeat([9.0, 4.0, 30.0], 200)
    q = rng.uniform(0, 1, a.size)
    shared = dq._expected_m_log_m(a, b, q)
    distinct_a = a + np.arange(a.size) * np.spacing(a)  # every marginal distinct (a few ulps)
    assert np.unique(distinct_a).size == a.size
    distinct = dq._expected_m_log_m(distinct_a, b, q)
    np.testing.assert_allclose(shared, distinct, rtol=0, atol=1e-12)


def test_grid_and_sorted_marginal_lookups_agree(rng) -> None:
    """Half-integer (a, b) are counted on their grid, other values sorted: same marginals."""
    a = rng.integers(1, 40, 5000) / 2.0
    b = rng.integers(1, 300, 5000) / 2.0
    grid = dq._unique_pairs(a, b)
    shifted = dq._unique_pairs(a + 1e-3, b)  # off the grid: the sorting route
    np.testing.assert_array_equal(grid[0] + 1e-3, shifted[0])
    np.testing.assert_array_equal(grid[1], shifted[1])
    np.testing.assert_array_equal(grid[2], shifted[2])
    np.testing.assert_array_equal(grid[0][grid[2]], a)
    np.testing.assert_array_equal(grid[1][grid[2]], b)


# --- the cache-blocked kernel against the kernel before blocking (kept in the benchmark) --------

def _adversarial_items(rng, n_items: int, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Concentrations from 1e-3 (long logit tails) to 1e6 (near point masses) per class,
    continuous (every cell its own marginal), q with exact zeros and ones."""
    a = np.exp(rng.uniform(np.log(1e-3), np.log(1e6), size=(n_items, k)))
    a[::5] = rng.integers(0, 40, size=a[::5].shape) + 1.0  # integer-count rows among them
    q = rng.dirichlet(np.full(k, 0.3), size=n_items)
    q[::7, 0] = 0.0
    q[::11] = np.eye(k)[rng.integers(0, k, size=q[::11].shape[0])]
    q /= q.sum(axis=1, keepdims=True)
    return a, q


@pytest.mark.parametrize("chunk", [dq._CHUNK, 1000])
def test_blocked_kernel_matches_the_kernel_before_blocking(rng, monkeypatch, chunk) -> None:
    """8000 items x 5 classes (the per-cell route) and their first 1000 (the shared-marginal
    route), at the default block size and with blocks of 1000 node evaluations."""
    monkeypatch.setattr(dq, "_CHUNK", chunk)
    a, q = _adversarial_items(rng, 8000)
    assert dq._mostly_distinct(a.ravel(), (a.sum(1, keepdims=True) - a).ravel())
    np.testing.assert_allclose(dr.expected_jsd(a, q, prior=1e-3).values,
                               reference.baseline_expected_jsd(a + 1e-3, q), rtol=0, atol=1e-10)
    small = a[:1000]  # fewer cells than the sample: always the shared-marginal route
    np.testing.assert_allclose(dr.expected_jsd(small, q[:1000], prior=1e-3).values,
                               reference.baseline_expected_jsd(small + 1e-3, q[:1000]),
                               rtol=0, atol=1e-10)


def test_integer_counts_match_the_kernel_before_blocking(rng) -> None:
    counts = rng.poisson(rng.uniform(0, 6, size=(8000, 1)), size=(8000, 5)).astype(float)
    q = rng.dirichlet(np.ones(5), size=8000)
    assert not dq._mostly_distinct((counts + 1).ravel(), (counts.sum(1, keepdims=True)
                                                          - counts + 4).ravel())
    np.testing.assert_allclose(dr.expected_jsd(counts, q).values,
                               reference.baseline_expected_jsd(counts + 1.0, q),
                               rtol=0, atol=1e-10)


def test_both_routes_agree_on_the_same_cells(rng, monkeypatch) -> None:
    """The per-cell route and the shared-marginal route give the same values."""
    a, q = _adversarial_items(rng, 7000)
    b = a.sum(1, keepdims=True) - a
    per_cell = dq._expected_m_log_m(a, b, q)
    monkeypatch.setattr(dq, "_mostly_distinct", lambda a, b: False)
    shared = dq._expected_m_log_m(a, b, q)
    np.testing.assert_allclose(per_cell, shared, rtol=0, atol=1e-13)


def test_softplus_expit_against_numpy_and_scipy() -> None:
    from scipy.special import expit
    t = np.concatenate([np.linspace(-800, 800, 4001), [0.0, -0.0, 1e-300, -1e-300, 36.0, -36.0]])
    softplus, x = dq._softplus_expit(t)
    np.testing.assert_allclose(softplus, np.logaddexp(0.0, t), rtol=1e-15, atol=0)
    np.testing.assert_allclose(x, expit(t), rtol=1e-15, atol=1e-300)  # subnormals differ

"""Calibration of the significance tests by simulation (slow; run in CI).

Null data: binary labels, h0 and h1 each correct with probability 0.7, independently, so
the two systems are exchangeable and every rejection is a false positive.

Measured rates (p <= .05), recorded in the docs of :func:`evaluq.bootstrap_test`:

- Berg-Kirkpatrick, 20,000 null data sets of 500 items, B = 1000 (this module's sampler with
  more data sets): 0.000 at f = 0.1, 0.00005 at f = 0.2, 0.014 at f = 0.5, 0.055 at f = 1.0.
  The normal approximation ``1 - Phi(1.645 / sqrt(f))`` gives 0.000, 0.0001, 0.010, 0.050:
  at f = 1 the rule ``#{delta* > 2 delta} / B <= alpha`` is a one-sided test at level alpha,
  and a sub-sample of fraction f widens ``delta*`` by ``1 / sqrt(f)``.
- paired and permutation (macro-F1, 2000 null data sets of 1000 items, B = 199): 0.0465 and
  0.0495; the permutation test on cross-entropy (soft labels) likewise.
- interval coverage at 95% (3000 data sets): BCa 0.940, percentile 0.941.
"""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq.significance import _engine

ALPHA = 0.05
P_CELLS = np.array([0.09, 0.21, 0.21, 0.49])   # (h0 correct, h1 correct): 00, 01, 10, 11


def _bound(n: int, alpha: float = ALPHA) -> float:
    return 4 * np.sqrt(n * alpha * (1 - alpha))


def _berg_kirkpatrick_null_rate(fraction: float, n_sets: int, n_items: int, n_resamples: int,
                                seed: int) -> float:
    """Null rejection rate, vectorised over data sets: a resample is a multinomial draw of
    the four accuracy cells, exactly as the cell engine draws it."""
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(n_items, P_CELLS, size=n_sets)
    delta = (cells[:, 1] - cells[:, 2]) / n_items
    s = round(fraction * n_items)
    rejections = 0
    for start in range(0, n_sets, 500):  # chunks of data sets bound the memory
        block = cells[start:start + 500] / n_items
        draws = rng.multinomial(s, block[:, None, :], size=(block.shape[0], n_resamples))
        dist = (draws[..., 1] - draws[..., 2]) / s
        p, _ = _engine.pvalue_berg_kirkpatrick(dist, delta[start:start + 500],
                                               np.ones(block.shape[0]))  # accuracies <= 1
        rejections += int(np.sum(p <= ALPHA))
    return rejections / n_sets


@pytest.mark.slow
def test_berg_kirkpatrick_null_rejection_is_at_most_nominal():
    n = 3000
    rates = {f: _berg_kirkpatrick_null_rate(f, n, 500, 1000, seed=i)
             for i, f in enumerate((0.1, 0.5, 1.0))}
    print("".join(f"\nCALIBRATION | bootstrap_test Berg-Kirkpatrick f={f} (conservative below f=1) "
                  f"| null rejection rate | nominal {ALPHA:.3f} | measured {r:.4f} | n {n}"
                  for f, r in rates.items()))
    # conservative below f = 1, about nominal (one-sided) at f = 1
    assert rates[0.1] * n <= 2
    assert rates[0.5] * n <= n * 0.010 + 4 * np.sqrt(n * 0.010)
    assert rates[0.5] < ALPHA
    assert rates[1.0] * n <= n * ALPHA + _bound(n)
    assert rates[0.1] <= rates[0.5] <= rates[1.0]


@pytest.mark.slow
def test_berg_kirkpatrick_public_function_null_rate():
    """The public function at BooStSa's default f = 0.1 almost never rejects null data."""
    rng = np.random.default_rng(5)
    n_sets, rejections = 500, 0
    for i in range(n_sets):
        y = rng.integers(0, 2, 300)
        h0 = np.where(rng.random(300) < 0.7, y, 1 - y)
        h1 = np.where(rng.random(300) < 0.7, y, 1 - y)
        res = eq.bootstrap_test(y, h0, h1, metrics="accuracy", n_resamples=200, rng=i)
        rejections += res.pvalue[0] <= ALPHA
    print(f"\nCALIBRATION | bootstrap_test Berg-Kirkpatrick f=0.1, public function (conservative) "
          f"| null rejection rate | nominal {ALPHA:.3f} | measured {rejections / n_sets:.4f} "
          f"| n {n_sets}")
    assert rejections <= 5


@pytest.mark.slow
@pytest.mark.parametrize("method", ["paired", "permutation"])
def test_null_rejection_rate_is_nominal(method):
    """Macro-F1 over 3 classes, 1000 items (cell engine). Measured: paired 0.0465,
    permutation 0.0495 on these 2000 data sets (with accuracy on 300 items the permutation
    test is conservative, 0.035, because the statistic is discrete)."""
    rng = np.random.default_rng(20261122 + (method == "paired"))
    n_sets, n_items, rejections = 2000, 1000, 0
    for i in range(n_sets):
        y = rng.integers(0, 3, n_items)
        h0 = np.where(rng.random(n_items) < 0.7, y, rng.integers(0, 3, n_items))
        h1 = np.where(rng.random(n_items) < 0.7, y, rng.integers(0, 3, n_items))
        res = eq.bootstrap_test(y, h0, h1, metrics="f1", method=method,
                                n_resamples=199, rng=i)
        rejections += res.pvalue[0] <= ALPHA
    print(f"\nCALIBRATION | bootstrap_test {method}, macro-F1 (3 classes, 1000 items) | null "
          f"rejection rate | nominal {ALPHA:.3f} | measured {rejections / n_sets:.4f} | n {n_sets}")
    assert abs(rejections - n_sets * ALPHA) <= _bound(n_sets)


@pytest.mark.slow
def test_permutation_null_rate_soft_labels():
    """Cross-entropy on soft labels (per-item engine): nominal within binomial error."""
    rng = np.random.default_rng(7)
    n_sets, n_items, rejections = 1000, 150, 0
    for i in range(n_sets):
        p = rng.dirichlet(np.ones(3), n_items)
        q0 = 0.6 * p + 0.4 * rng.dirichlet(np.ones(3), n_items)
        q1 = 0.6 * p + 0.4 * rng.dirichlet(np.ones(3), n_items)
        res = eq.bootstrap_test(p, q0, q1, metrics="cross_entropy", method="permutation",
                                n_resamples=199, rng=i)
        rejections += res.pvalue[0] <= ALPHA
    print(f"\nCALIBRATION | bootstrap_test permutation, cross-entropy on soft labels | null "
          f"rejection rate | nominal {ALPHA:.3f} | measured {rejections / n_sets:.4f} | n {n_sets}")
    assert abs(rejections - n_sets * ALPHA) <= _bound(n_sets)


@pytest.mark.slow
def test_interval_coverage():
    """95% intervals for delta cover the true difference at the nominal rate.

    True accuracies 0.70 and 0.75 (independent errors): delta = 0.05. Measured on 3000 data
    sets of 300 items (B = 1000): BCa 0.940, percentile 0.941 (bootstrap intervals
    under-cover slightly at this size); the test uses 1000 data sets.
    """
    rng = np.random.default_rng(8)
    n_sets, n_items = 1000, 300
    covered = {"bca": 0, "percentile": 0, "bk": 0}
    for i in range(n_sets):
        y = rng.integers(0, 2, n_items)
        h0 = np.where(rng.random(n_items) < 0.70, y, 1 - y)
        h1 = np.where(rng.random(n_items) < 0.75, y, 1 - y)
        res = eq.bootstrap_test(y, h0, h1, metrics="accuracy", method="paired",
                                n_resamples=400, rng=i)
        for kind in ("bca", "percentile"):
            lo, hi = res.confidence_interval(0.95, kind=kind).values[0]
            covered[kind] += lo <= 0.05 <= hi
        bk = eq.bootstrap_test(y, h0, h1, metrics="accuracy", sample_size=0.5,
                               n_resamples=400, rng=i)
        lo, hi = bk.confidence_interval(0.95).values[0]   # m-out-of-n rescaled percentile
        covered["bk"] += lo <= 0.05 <= hi
    print("".join(f"\nCALIBRATION | bootstrap_test interval of delta, {kind} (accuracy, 300 items) "
                  f"| coverage | nominal 0.950 | measured {c / n_sets:.4f} | n {n_sets}"
                  for kind, c in covered.items()))
    for kind, count in covered.items():
        assert abs(count - n_sets * 0.95) <= 4 * np.sqrt(n_sets * 0.95 * 0.05), kind

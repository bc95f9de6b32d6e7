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
- few items (continuous per-item differences, B = 499): the paired bootstrap rejects a true
  null in 29% of data sets at 3 items, 15-17% at 5, 9% at 10, 7% at 20, 6.3% at 30, 5.8-6.1%
  at 40 and 5.6% at 50 (16,000 data sets per size from 20 on): below
  ``FEW_ITEMS_PAIRED`` = 40 items ``bootstrap_test`` warns (``SmallSampleWarning``).
  Berg-Kirkpatrick: 25% at 2 items, 12% at 3, 6-7% at 4 and 5 for any f; at most 4.4% from
  6 items on (``FEW_ITEMS_BERG_KIRKPATRICK``).
"""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq.significance import _engine
from evaluq.significance._methods import FEW_ITEMS_BERG_KIRKPATRICK, FEW_ITEMS_PAIRED

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


def _few_items_null_rate(n_items: int, n_sets: int, seed: int, fraction: float | None = None,
                         n_resamples: int = 499, normal: bool = False) -> float:
    """Null rejection rate of the paired (``fraction=None``) or Berg-Kirkpatrick bootstrap on
    the mean of continuous, symmetric per-item differences (differences of two exponentials,
    as of two equally good systems' per-item losses, or normal ones; continuous statistics
    are the worst case: discrete ones reject less), vectorised over data sets; a resample is
    a multinomial draw of item counts, as the per-item engine draws."""
    rng = np.random.default_rng(seed)
    size = n_items if fraction is None else round(fraction * n_items)
    rejections = 0
    for start in range(0, n_sets, 200):
        m = min(200, n_sets - start)
        d = (rng.normal(size=(m, n_items)) if normal else
             rng.exponential(size=(m, n_items)) - rng.exponential(size=(m, n_items)))
        delta = d.mean(axis=1)
        counts = rng.multinomial(size, np.full(n_items, 1 / n_items), size=(m, n_resamples))
        dist = np.einsum("sbn,sn->sb", counts, d) / size
        rule = _engine.pvalue_paired if fraction is None else _engine.pvalue_berg_kirkpatrick
        p, _ = rule(dist, delta, np.ones(m))
        rejections += int(np.sum(p <= ALPHA))
    return rejections / n_sets


@pytest.mark.slow
def test_few_items_threshold_of_the_paired_bootstrap():
    """The threshold of the small-sample warning: below FEW_ITEMS_PAIRED items the paired
    bootstrap rejects a true null clearly more often than its level; from there on the
    excess is at most about a fifth of it (6% at 5%)."""
    n_sets = 8000
    rates = {n: _few_items_null_rate(n, n_sets, seed=n) for n in (10, 20, FEW_ITEMS_PAIRED)}
    print("".join(f"\nCALIBRATION | bootstrap_test paired, {n} items (continuous differences) "
                  f"| null rejection rate | nominal {ALPHA:.3f} | measured {r:.4f} | n {n_sets}"
                  for n, r in rates.items()))
    se = np.sqrt(0.06 * 0.94 / n_sets)
    assert rates[10] > 0.08
    assert rates[20] > ALPHA + _bound(n_sets) / n_sets
    assert rates[FEW_ITEMS_PAIRED] <= 0.06 + 2 * se
    assert rates[10] > rates[20] > rates[FEW_ITEMS_PAIRED]


@pytest.mark.slow
def test_few_items_threshold_of_berg_kirkpatrick():
    """Berg-Kirkpatrick rejects a true null too often only below FEW_ITEMS_BERG_KIRKPATRICK
    items, at any sample size; from there on it keeps (well) below its level. Normal
    differences (exponential ones give 4.9% at 5 items, 1.8-3.3% at 6)."""
    n_sets = 6000
    low = FEW_ITEMS_BERG_KIRKPATRICK - 1
    rates = {(n, f): _few_items_null_rate(n, n_sets, seed=n, fraction=f, normal=True)
             for n in (3, low, FEW_ITEMS_BERG_KIRKPATRICK) for f in (0.3, 0.5)}
    print("".join(f"\nCALIBRATION | bootstrap_test Berg-Kirkpatrick f={f}, {n} items | null "
                  f"rejection rate | nominal {ALPHA:.3f} | measured {r:.4f} | n {n_sets}"
                  for (n, f), r in rates.items()))
    bound = _bound(n_sets) / n_sets
    for f in (0.3, 0.5):
        assert rates[(3, f)] > 0.1
        assert rates[(low, f)] > ALPHA + bound / 2
        assert rates[(FEW_ITEMS_BERG_KIRKPATRICK, f)] <= ALPHA


@pytest.mark.slow
def test_public_paired_test_at_ten_items_rejects_too_often():
    """The public function agrees with the vectorised sampler above: mean squared errors of
    two equally good regressors on 10 items, about 9% rejections at p <= .05 (the warning's
    number)."""
    rng = np.random.default_rng(10)
    n_sets, n_items, rejections = 4000, 10, 0
    for i in range(n_sets):
        t = rng.normal(size=n_items)
        a, b = t + rng.normal(size=n_items), t + rng.normal(size=n_items)
        with pytest.warns(eq.SmallSampleWarning, match="only 10 items, fewer than 40"):
            res = eq.bootstrap_test(t, a, b, metrics="mse", method="paired",
                                    n_resamples=199, rng=i)
        rejections += res.pvalue[0] <= ALPHA
    rate = rejections / n_sets
    print(f"\nCALIBRATION | bootstrap_test paired, MSE on 10 items (public function) | null "
          f"rejection rate | nominal {ALPHA:.3f} | measured {rate:.4f} | n {n_sets}")
    assert rate > ALPHA + _bound(n_sets) / n_sets / 2
    assert abs(rate - 0.09) <= _bound(n_sets, 0.09) / n_sets

"""Null rejection rates of the Berg-Kirkpatrick shifted test (formulas.md §1 discrepancy).

Run from the repository root (about 40 s on one core)::

    PYTHONPATH=src python benchmarks/bench_bk_null_rates.py [--quick]

The test (BooStSa's, Berg-Kirkpatrick et al. 2012): ``B`` times draw ``s = round(f N)``
items with replacement, compute ``delta*_b`` (accuracy of h1 minus accuracy of h0 on them) and
report ``p = #{delta*_b > 2 delta} / B``. formulas.md §1 states null rejection rates at
p < .05 of 0.000 (f = .1), 0.000 (.2), 0.007 (.5) and 0.025 (1.0) from "100k accuracy
simulations"; evaluq measured 0.014 at .5 and 0.055 at 1.0. This script settles which figures
are right and which reading of the rule reproduces formulas.md's.

Null models (two systems with the same accuracy 0.7 on binary items, so that every rejection
is a false positive). An item is one of four cells (h0 correct?, h1 correct?):

* ``independent``: errors independent, cell probabilities (00, 01, 10, 11) =
  (0.09, 0.21, 0.21, 0.49);
* ``correlated``: correctness indicators correlated with phi = 0.5, cells
  (0.195, 0.105, 0.105, 0.595) (half as many items on which the systems disagree).

Method: exact conditional simulation. Only the counts ``n01`` (h1 right, h0 wrong) and
``n10`` of a data set matter: ``delta = (n01 - n10) / N``. A sub-sample of ``s`` items drawn
with replacement has ``(m01, m10, rest) ~ Multinomial(s; n01/N, n10/N, 1 - ...)`` and
``delta* = (m01 - m10) / s``. The distribution of ``D = m01 - m10`` is the ``s``-th power of
the trinomial step ``(n10/N) z^-1 + (1 - ...) + (n01/N) z``, computed exactly by FFT, so
``P(delta* > 2 delta)``, ``P(delta* < 2 delta)`` and ``P(delta* = 2 delta)`` are known exactly
(integer comparisons, no floating-point ties) for each data set. The ``B`` resamples of the test
are i.i.d. given the data, so the counts ``(#{>}, #{<}, #{=})`` are one
``Multinomial(B, those three probabilities)`` draw: this simulates the test with ``B = 1000``
exactly, for 100,000 data sets, at the cost of one FFT per distinct ``(n01, n10)``.

Cross-check with evaluq itself: on 300 item-level data sets per f, ``eq.bootstrap_test``
(f = .1, .2, .5; f = 1 is outside BooStSa's guard, so it uses the ``paired`` method's
resamples, which are the f = 1 sub-samples) is compared (a) with an independent numpy
re-implementation drawing the same multinomial cell counts from the same seed (the p-values
must be identical), and (b) with the exact probabilities above (the counts must be
Binomial(B, p_exact): standardized residuals with mean 0 and variance 1).

Findings (this script's output, 100,000 data sets of N = 500, independent errors; rates for
f = .1 / .2 / .5 / 1):

* the rule as stated, p < .05: 0.0000 / 0.0001 / 0.0125 / 0.0547 (p <= .05: 0.0000 / 0.0001 /
  0.0129 / 0.0559; correlated errors 0.0140 / 0.0577; N = 2000: 0.0127 / 0.0534). They
  approach the normal approximation ``1 - Phi(1.645 / sqrt(f))`` = 0 / 0.0001 / 0.0100 /
  0.0500 slowly as N grows; the excess at finite N comes from ties ``delta* = 2 delta`` of the
  discrete accuracy, which the strict ``>`` leaves out of p (counting ties in p gives
  0.0094 / 0.0484), and from the Monte Carlo error of p with B = 1000 (at f = 1, where p* is
  uniform, P(count <= 50) = 51/1001 = 0.051).
* formulas.md's 0.007 (f = .5) and 0.025 (f = 1) are about half of these. No single reading
  reproduces both: 0.007 is the rate of the two-sided reading p <= .025 or p >= .975
  (0.0066; normal approximation 0.0056), 0.025 that of the one-sided reading at alpha / 2,
  p <= .025 (0.0289 at N = 500, 0.0275 at N = 2000, 0.0250 in the normal limit), whose f = .5
  rate is 0.0042. Both are readings at level .025 per direction, not the stated p < .05.
"""

from __future__ import annotations

import resource
import time

import numpy as np
from scipy.stats import binom, norm

import evaluq as eq
from evaluq.significance import _engine

B = 1000
FRACTIONS = (0.1, 0.2, 0.5, 1.0)
FORMULAS_MD = {0.1: 0.000, 0.2: 0.000, 0.5: 0.007, 1.0: 0.025}
NULL_MODELS = {
    "independent": np.array([0.09, 0.21, 0.21, 0.49]),
    "correlated": np.array([0.195, 0.105, 0.105, 0.595]),
}
# (null model, number of items N, number of simulated data sets)
DESIGNS = (("independent", 500, 100_000), ("correlated", 500, 100_000),
           ("independent", 100, 100_000), ("independent", 2000, 20_000))
N_CHECK = 300  # data sets per fraction in the cross-check through evaluq


def _upper(alpha: float, f: float) -> float:
    return float(norm.sf(norm.isf(alpha) / np.sqrt(f)))


# name: (rule on counts gt = #{delta* > 2 delta}, lt = #{delta* < 2 delta}; normal approx.)
READINGS = {
    "BooStSa #{>}/B <= .05": (lambda gt, lt: gt <= 50, lambda f: _upper(0.05, f)),
    "BooStSa #{>}/B < .05": (lambda gt, lt: gt < 50, lambda f: _upper(0.05, f)),
    "evaluq (1+#{>})/(B+1) <= .05": (lambda gt, lt: gt <= 49, lambda f: _upper(0.05, f)),
    "ties count: #{>=}/B <= .05": (lambda gt, lt: B - lt <= 50, lambda f: _upper(0.05, f)),
    "one-sided .025: p <= .025": (lambda gt, lt: gt <= 25, lambda f: _upper(0.025, f)),
    "two-sided: p<=.025 or p>=.975": (lambda gt, lt: (gt <= 25) | (gt >= 975),
                                      lambda f: 2 * _upper(0.025, f)),
    "either direction at .05": (lambda gt, lt: (gt <= 50) | (lt <= 50),
                                lambda f: 2 * _upper(0.05, f)),
}


# --- exact conditional probabilities ------------------------------------------------------------

def difference_pmf(q01: np.ndarray, q10: np.ndarray, s: int) -> np.ndarray:
    """pmf of ``D = m01 - m10`` on ``-s..s`` (rows: data sets), by FFT of the trinomial."""
    size = 1 << int(np.ceil(np.log2(2 * s + 1)))
    step = np.zeros((q01.size, size))
    step[:, 0], step[:, 1], step[:, 2] = q10, 1.0 - q01 - q10, q01
    pmf = np.fft.irfft(np.fft.rfft(step, axis=1) ** s, n=size, axis=1)[:, :2 * s + 1]
    pmf = np.clip(pmf, 0.0, None)
    return pmf / pmf.sum(axis=1, keepdims=True)


def exact_probabilities(n01: np.ndarray, n10: np.ndarray, n_items: int, s: int
                        ) -> np.ndarray:
    """``(P(delta* > 2 delta), P(delta* < 2 delta), P(=))`` per data set, shape ``(n, 3)``.

    ``delta* > 2 delta`` is ``D N > 2 (n01 - n10) s`` in integers: ``D >= floor(c) + 1`` with
    ``c = 2 (n01 - n10) s / N``; ``delta* < 2 delta`` is ``D <= ceil(c) - 1``.
    """
    out = np.empty((n01.size, 3))
    for start in range(0, n01.size, 256):  # chunks of distinct data sets bound the memory
        a, b = n01[start:start + 256], n10[start:start + 256]
        pmf = difference_pmf(a / n_items, b / n_items, s)
        cum = np.concatenate([np.zeros((a.size, 1)), np.cumsum(pmf, axis=1)], axis=1)
        num = 2 * (a - b) * s
        first_above = np.clip(num // n_items + 1 + s, 0, 2 * s + 1)   # index of floor(c)+1
        last_below = np.clip(-((-num) // n_items) - 1 + s, -1, 2 * s)  # index of ceil(c)-1
        rows = np.arange(a.size)
        gt = 1.0 - cum[rows, first_above]
        lt = cum[rows, last_below + 1]
        out[start:start + a.size] = np.stack([gt, lt, np.clip(1.0 - gt - lt, 0.0, None)], 1)
    return np.clip(out, 0.0, 1.0)


def simulate(model: str, n_items: int, n_sets: int, f: float, seed: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts ``#{>}``, ``#{<}`` of B = 1000 resamples and the exact ``P(>)``, per data set."""
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(n_items, NULL_MODELS[model], size=n_sets)
    pairs, inverse = np.unique(cells[:, 1:3], axis=0, return_inverse=True)
    probs = exact_probabilities(pairs[:, 0], pairs[:, 1], n_items, round(f * n_items))
    probs = probs[inverse.ravel()]
    counts = rng.multinomial(B, probs / probs.sum(axis=1, keepdims=True))
    return counts[:, 0], counts[:, 1], probs[:, 0]


# --- cross-check through evaluq ------------------------------------------------------------------

def check_with_evaluq(f: float, n_sets: int, n_items: int, seed: int) -> dict[str, float]:
    """eq.bootstrap_test on item-level null data vs a re-implementation and the exact p."""
    rng = np.random.default_rng(seed)
    s = round(f * n_items)
    identical, within_ties, residuals, reject_eq, expected = 0, 0, [], 0, 0.0
    for i in range(n_sets):  # a few hundred data sets: a loop is fine for a check
        y = rng.integers(0, 2, n_items)
        h0 = np.where(rng.random(n_items) < 0.7, y, 1 - y)
        h1 = np.where(rng.random(n_items) < 0.7, y, 1 - y)
        if f < 1:
            res = eq.bootstrap_test(y, h0, h1, metrics="accuracy", sample_size=f,
                                    n_resamples=B, rng=1000 + i)
            p_eq, count_eq = float(res.pvalue[0]), int(res.count[0])
        else:  # the paired method's resamples are the f = 1 sub-samples
            res = eq.bootstrap_test(y, h0, h1, metrics="accuracy", method="paired",
                                    n_resamples=B, rng=1000 + i)
            p_arr, c_arr = _engine.pvalue_berg_kirkpatrick(res.distribution, res.delta,
                                                           np.ones(1))
            p_eq, count_eq = float(p_arr[0]), int(c_arr[0])
        # independent re-implementation: the same multinomial draws over the (y, h0, h1) cells
        code = (y * 2 + h0) * 2 + h1
        cells, counts = np.unique(code, return_counts=True)
        draws = np.random.default_rng(1000 + i).multinomial(s, counts / n_items, size=B)
        c0 = (cells // 2 % 2 == cells // 4)          # h0 correct in the cell
        c1 = (cells % 2 == cells // 4)               # h1 correct in the cell
        d_star = draws @ (c1.astype(np.int64) - c0.astype(np.int64))   # s * delta*
        d_obs = int(np.sum(counts * (c1.astype(np.int64) - c0.astype(np.int64))))
        above = np.count_nonzero(d_star * n_items > 2 * d_obs * s)
        ties = np.count_nonzero(d_star * n_items == 2 * d_obs * s)
        identical += above == count_eq
        within_ties += above <= count_eq <= above + ties
        n01 = np.count_nonzero((h1 == y) & (h0 != y))
        n10 = np.count_nonzero((h0 == y) & (h1 != y))
        pg = exact_probabilities(np.array([n01]), np.array([n10]), n_items, s)[0, 0]
        if 0 < pg < 1:
            residuals.append((count_eq - B * pg) / np.sqrt(B * pg * (1 - pg)))
        reject_eq += p_eq <= 0.05
        # evaluq's p = (1 + count) / (B + 1) <= .05 iff count <= 0.05 (B + 1) - 1
        expected += float(binom.cdf(int(np.floor(0.05 * (B + 1) - 1 + 1e-9)), B, pg))
    r = np.asarray(residuals)
    return {"identical": identical, "within_ties": within_ties, "n": n_sets,
            "mean_z": float(r.mean()), "var_z": float(r.var(ddof=1)),
            "reject_eq": reject_eq, "expected": expected}


def main() -> None:
    t_start = time.perf_counter()
    print(f"Berg-Kirkpatrick test, B = {B}, accuracy of two systems with equal accuracy 0.7")
    print("formulas.md §1 (p < .05): " + ", ".join(f"f={f:g}: {v:.3f}"
                                                  for f, v in FORMULAS_MD.items()))
    print()
    for d, (model, n_items, n_sets) in enumerate(DESIGNS):
        print(f"null model {model!r}, N = {n_items} items, {n_sets:,} data sets "
              f"(binomial s.e. of a rate r: sqrt(r(1-r)/{n_sets:,}))")
        print(f"  {'reading':<32}" + "".join(f"{'f=' + format(f, 'g'):>17}" for f in FRACTIONS))
        sims = {f: simulate(model, n_items, n_sets, f, seed=10 * d + j)
                for j, f in enumerate(FRACTIONS)}
        for name, (rule, approx) in READINGS.items():
            cells = []
            for f in FRACTIONS:
                gt, lt, _ = sims[f]
                cells.append(f"{np.mean(rule(gt, lt)):.4f} ({approx(f):.4f})")
            print(f"  {name:<32}" + "".join(f"{c:>17}" for c in cells))
        exact = "".join(f"{np.mean(sims[f][2] <= 0.05):>17.4f}" for f in FRACTIONS)
        print(f"  {'B -> inf: P(>) <= .05':<32}{exact}")
        print("  (in brackets: the normal approximation, e.g. 1 - Phi(1.645 / sqrt(f)))")
        print()

    print(f"Cross-check through evaluq: {N_CHECK} null data sets of 500 items per f, "
          f"B = {B}")
    for j, f in enumerate(FRACTIONS):
        c = check_with_evaluq(f, N_CHECK, 500, seed=100 + j)
        print(f"  f={f:g}: count identical to the re-implementation in "
              f"{c['identical']}/{c['n']} data sets, between #{{>}} and #{{>=}} in "
              f"{c['within_ties']}/{c['n']}")
        print(f"         (count - B p_exact) / sd: mean {c['mean_z']:+.3f}, "
              f"var {c['var_z']:.3f}; rejections at p <= .05: evaluq {c['reject_eq']}, "
              f"expected from the exact p {c['expected']:.1f}")
    print("  (the engine judges ties delta* = 2 delta on the scale of the metric values, so "
          "its count is\n   the exact integer count #{>}; see the model card)")
    print()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"time {time.perf_counter() - t_start:.1f} s, peak memory (max RSS) {peak:.0f} MiB")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: few data sets")
    if parser.parse_args().quick:
        DESIGNS = (("independent", 500, 2_000), ("correlated", 100, 2_000))
        N_CHECK = 20
    main()

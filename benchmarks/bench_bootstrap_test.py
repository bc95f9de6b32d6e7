"""Benchmark of evaluq.bootstrap_test against BooStSa's reference time and a naive loop.

Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_bootstrap_test.py

Case A (the issue's): 100,000 binary items, 1000 resamples, sample_size 0.5, BooStSa's four
metrics (F1, accuracy, precision, recall; macro). BooStSa 0.2.13 takes about 29 s for this on
these machines. Case B: 10,000 resamples on 1,000,000 items (target < 5 s).

BooStSa itself is not run here: it does not install plainly from PyPI (version 0.2.13 pins an
old pip and scipy and depends on the deprecated ``sklearn`` PyPI package, which refuses to
install) and it fails on pandas 3 (it uses ``DataFrame.append`` and positional ``Series[-1]``).
Running it needs an isolated environment (``pip install --no-deps boostsa`` beside
pandas < 3 and scikit-learn), which this script does not build; it uses the 29 s reference
figure instead. The naive baseline below (a Python loop over resamples, each one computing the
four metrics of both systems with numpy on the drawn items) is timed in the same run.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import evaluq as eq

BOOSTSA_SECONDS = 29.0
WHY_NOT_BOOSTSA = (
    "boostsa 0.2.13 does not install plainly from PyPI (it pins an old pip and scipy and "
    "depends on the deprecated `sklearn` package) and fails on pandas 3; running it needs an "
    "isolated environment (pip install --no-deps boostsa beside pandas < 3), which this "
    "script does not build. Its time for case A on these machines is taken as the reference "
    "figure of 29 s."
)
METRICS = ("f1", "accuracy", "precision", "recall")


def data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    h0 = np.where(rng.random(n) < 0.80, y, 1 - y)
    h1 = np.where(rng.random(n) < 0.81, y, 1 - y)
    return y, h0, h1


def naive(y: np.ndarray, h0: np.ndarray, h1: np.ndarray, n_resamples: int,
          sample_size: float, seed: int) -> np.ndarray:
    """The Berg-Kirkpatrick test as usually written: one numpy evaluation per resample."""
    rng = np.random.default_rng(seed)
    k = int(max(y.max(), h0.max(), h1.max())) + 1
    s = round(sample_size * y.size)

    def four(t: np.ndarray, p: np.ndarray) -> np.ndarray:
        cm = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
        tp = np.diag(cm).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.nan_to_num(tp / cm.sum(0))
            rec = np.nan_to_num(tp / cm.sum(1))
            f1 = np.nan_to_num(2 * prec * rec / (prec + rec))
        return np.array([f1.mean(), tp.sum() / t.size, prec.mean(), rec.mean()])

    delta = four(y, h1) - four(y, h0)
    count = np.zeros(4, dtype=int)
    for _ in range(n_resamples):
        idx = rng.integers(0, y.size, s)
        t = y[idx]
        count += (four(t, h1[idx]) - four(t, h0[idx])) > 2 * delta
    return count / n_resamples


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_mib(fn) -> float:
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    print("BooStSa is not run: " + WHY_NOT_BOOSTSA)
    print()
    y, h0, h1 = data(100_000)

    def case_a():
        return eq.bootstrap_test(y, h0, h1, metrics=METRICS, method="berg-kirkpatrick",
                                 n_resamples=1000, sample_size=0.5, rng=0)

    t_eq, res = timed(case_a)
    t_naive, p_naive = timed(lambda: naive(y, h0, h1, 1000, 0.5, 0), repeat=1)
    print("Case A: 100,000 binary items, 1000 resamples, sample_size 0.5, 4 metrics")
    print(f"  evaluq.bootstrap_test ........ {t_eq * 1e3:8.1f} ms   "
          f"peak memory {peak_mib(case_a):6.1f} MiB")
    print(f"  naive numpy loop ............. {t_naive * 1e3:8.1f} ms")
    print(f"  BooStSa 0.2.13 (reference) ... {BOOSTSA_SECONDS * 1e3:8.1f} ms   "
          "(not run, see above)")
    print(f"  speed-up vs BooStSa: {BOOSTSA_SECONDS / t_eq:8.0f}x   "
          f"vs naive loop: {t_naive / t_eq:6.0f}x   (target >= 100x vs BooStSa)")
    print(f"  p-values evaluq {np.round(res.pvalue, 3).tolist()}  "
          f"naive {np.round(p_naive, 3).tolist()} (different draws; should be close)")
    print()

    y, h0, h1 = data(1_000_000, seed=1)
    for method, f in (("paired", None), ("berg-kirkpatrick", 0.5)):
        def case_b(method=method, f=f):
            return eq.bootstrap_test(y, h0, h1, metrics=METRICS, method=method,
                                     n_resamples=10_000, sample_size=f, rng=0)

        t_b, res_b = timed(case_b, repeat=2)
        print(f"Case B: 1,000,000 items, 10,000 resamples, method {method!r}, 4 metrics")
        print(f"  evaluq.bootstrap_test ........ {t_b * 1e3:8.1f} ms   "
              f"peak memory {peak_mib(case_b):6.1f} MiB   (target < 5000 ms)")
        print(f"  p-values {np.round(res_b.pvalue, 4).tolist()}")
    print()

    rng = np.random.default_rng(2)
    logits = rng.normal(size=(100_000, 3))
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    q0 = np.roll(p, 1, axis=0) * 0.5 + p * 0.5
    q1 = np.roll(p, 1, axis=0) * 0.4 + p * 0.6

    def case_c(n_resamples: int = 1000):
        return eq.bootstrap_test(p, q0, q1, n_resamples=n_resamples, sample_size=0.5, rng=0)

    t_c, _ = timed(case_c, repeat=1)
    print("Case C: 100,000 soft items (3 classes), 1000 resamples, sample_size 0.5, "
          "BooStSa's 4 soft metrics (per-item engine: O(B N))")
    print(f"  evaluq.bootstrap_test ........ {t_c * 1e3:8.1f} ms   peak memory "
          f"{peak_mib(lambda: case_c(100)):6.1f} MiB (peak measured with 100 resamples: "
          "memory is bounded per chunk)")


if __name__ == "__main__":
    main()

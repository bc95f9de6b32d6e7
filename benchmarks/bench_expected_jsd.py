"""Benchmark: ``eq.dirichlet.expected_jsd`` on 10^6 items x 5 classes, new rule vs the old one.

Target (issue 13): at most 5 s for 10^6 items, agreeing with the previous implementation to
1e-10. The previous rule (trapezoid in logit space, step <= 0.3 and at least 64 nodes, the
node count of the WIDEST marginal applied to every (item, class): 145+ nodes everywhere) is
kept below as :func:`reference_expected_jsd` and timed in the same run on the same data; the
new rule sizes the trapezoid per marginal and builds nodes once per distinct ``(a, b)``.

Data: annotation counts per item ~ Poisson(lambda_i) per class with lambda_i ~ U(0, 6) (0 to
~40 annotations per item, as in crowd-sourced ratings), uniform prior, predictions ~ Dir(1).
The old rule is timed on ``--ref-items`` items (default 10^5) and scaled linearly (it is
linear in items at a fixed node count); pass ``--ref-items 1000000`` to time it in full.

Run: ``python benchmarks/bench_expected_jsd.py [--items 1000000] [--ref-items 100000]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import digamma, expit, xlogy

import evaluq as eq

# --- the previous implementation (reference only; not used by evaluq) ---------------------------

_TAIL_DROP = 34.0
_MAX_STEP = 0.3
_MAX_NODES = 8192
_CHUNK = 65_536


def _logdens(t: np.ndarray, a: np.ndarray, a0: np.ndarray) -> np.ndarray:
    return a * t - a0 * np.logaddexp(0.0, t)


def _ref_range(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a0 = a + b
    mode = np.log(a) - np.log(b)
    peak = _logdens(mode, a, a0)
    kappa = a * b / a0
    ends = []
    for sign in (-1.0, 1.0):
        d = np.sqrt(2.0 * _TAIL_DROP / kappa)
        for _ in range(40):
            t = mode + sign * d
            drop = peak - _logdens(t, a, a0)
            slope = sign * (a0 * expit(t) - a)
            d = d - (drop - _TAIL_DROP) / slope
        ends.append(mode + sign * d)
    return ends[0], ends[1]


def _ref_n_nodes(lo: np.ndarray, hi: np.ndarray, n_nodes: int) -> int:
    widest = float(np.max(hi - lo)) if lo.size else 0.0
    return int(min(_MAX_NODES, max(n_nodes, np.ceil(widest / _MAX_STEP) + 1)))


def reference_m_log_m(a: np.ndarray, b: np.ndarray, q: np.ndarray,
                      n_nodes: int = 64) -> np.ndarray:
    """``E[m log m]``, ``m = (X + q)/2``, ``X ~ Beta(a, b)``: the previous rule, verbatim."""
    a, b, q = np.broadcast_arrays(a, b, q)
    out = np.empty(a.shape)
    flat_a, flat_b, flat_q = (np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
                              for x in (a, b, q))
    flat_out = out.reshape(-1)
    lo, hi = _ref_range(flat_a, flat_b)
    n = _ref_n_nodes(lo, hi, n_nodes)
    step = max(1, _CHUNK * 64 // n)
    grid = np.linspace(0.0, 1.0, n)
    for start in range(0, flat_a.size, step):
        sl = slice(start, start + step)
        t = lo[sl, None] + (hi[sl] - lo[sl])[:, None] * grid
        logw = _logdens(t, flat_a[sl, None], (flat_a[sl] + flat_b[sl])[:, None])
        w = np.exp(logw - logw.max(axis=-1, keepdims=True))
        w[:, 0] *= 0.5
        w[:, -1] *= 0.5
        w /= w.sum(axis=-1, keepdims=True)
        m = (expit(t) + flat_q[sl, None]) / 2.0
        flat_out[sl] = (w * xlogy(m, m)).sum(axis=-1)
    return out


def reference_expected_jsd(a: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Per-item ``E[JSD]`` for posterior parameters ``a`` (items x K): the previous rule."""
    a, q = np.broadcast_arrays(np.asarray(a, float), np.asarray(q, float))
    a0 = a.sum(axis=-1, keepdims=True)
    e_h_m = -reference_m_log_m(a, a0 - a, q).sum(axis=-1)
    e_plogp = a / a0 * (digamma(a + 1.0) - digamma(a0 + 1.0))
    h_q = -xlogy(q, q).sum(axis=-1)
    return np.maximum(e_h_m + e_plogp.sum(axis=-1) / 2.0 - h_q / 2.0, 0.0)


# --- the benchmark -------------------------------------------------------------------------------

def make_data(n_items: int, n_classes: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lam = rng.uniform(0, 6, size=(n_items, 1))
    counts = rng.poisson(lam, size=(n_items, n_classes)).astype(np.float64)
    q = rng.dirichlet(np.ones(n_classes), size=n_items)
    return counts, q


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--ref-items", type=int, default=100_000)
    args = parser.parse_args()
    counts, q = make_data(args.items)
    start = time.perf_counter()
    new = eq.dirichlet.expected_jsd(counts, q).values
    t_new = time.perf_counter() - start

    n_ref = min(args.ref_items, args.items)
    start = time.perf_counter()
    ref = reference_expected_jsd(counts[:n_ref] + 1.0, q[:n_ref])
    t_ref = (time.perf_counter() - start) * args.items / n_ref
    diff = float(np.max(np.abs(new[:n_ref] - ref)))
    scaled = "" if n_ref == args.items else f" (timed on {n_ref:,} items, scaled)"
    print(f"expected_jsd, {args.items:,} items x {counts.shape[1]} classes")
    print(f"  new rule (per-marginal trapezoid): {t_new:7.2f} s   target <= 5 s")
    print(f"  old rule (widest node count):      {t_ref:7.2f} s{scaled}")
    print(f"  speed-up {t_ref / t_new:.1f}x; max |new - old| = {diff:.1e} (target 1e-10)")


if __name__ == "__main__":
    main()

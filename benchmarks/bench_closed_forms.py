"""Benchmark: exact expected EMD / KL under Dirichlet label uncertainty vs the Monte Carlo route.

1,000,000 items x K = 5 classes, 2-20 annotations per item, uniform prior. The closed forms run
on all items; the Monte Carlo route (1000 posterior draws per item, the label-uncertainty
paper's method) runs on a 10,000-item subset and its time is extrapolated linearly to 1,000,000
items (it is linear in the number of items: the same chunked kernel runs over every item).
Accuracy is the max abs error against an independent reference: scipy's adaptive quadrature of
the Beta marginals (``scipy.stats.beta.expect``) on 100 items for the closed forms, and the
closed forms themselves for Monte Carlo.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_closed_forms.py
(``--quick``: a smoke run on 10,000 items).
"""

from __future__ import annotations

import os
import time
import tracemalloc

import numpy as np
from scipy import stats

from evaluq import dirichlet as dr

N_ITEMS = 1_000_000
N_SUBSET = 10_000
N_DRAWS = 1000
K = 5
REPEATS = 3
N_REFERENCE = 100  # items checked against scipy's quadrature


def make_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    truth = rng.dirichlet(np.full(K, 2.0), size=N_ITEMS)
    n = rng.integers(2, 21, size=N_ITEMS)
    counts = rng.multinomial(n, truth)
    q = rng.dirichlet(np.full(K, 3.0), size=N_ITEMS)
    return counts, q


def timed(func, *args, repeats: int = REPEATS, **kwargs):
    """Best of ``repeats`` wall-clock and CPU times (the machine is shared: the CPU time of this
    process is the steadier figure), then one more run under tracemalloc for the peak memory."""
    best_wall = best_cpu = np.inf
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        out = func(*args, **kwargs)
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    tracemalloc.start()
    func(*args, **kwargs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, best_wall, best_cpu, peak


def reference_emd(counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    a = counts + 1.0
    cum = np.cumsum(a, -1)[:, :-1]
    rest = a.sum(-1, keepdims=True) - cum
    c = np.clip(np.cumsum(q, -1)[:, :-1], 0, 1)
    out = np.empty(len(a))
    for i in range(len(a)):
        out[i] = sum(stats.beta(x, y).expect(lambda t, cc=cc: abs(t - cc), points=[cc],
                                           epsabs=1e-13, epsrel=1e-12)
                     for x, y, cc in zip(cum[i], rest[i], c[i], strict=True)) / (K - 1)
    return out


def reference_kl(counts: np.ndarray, q: np.ndarray) -> np.ndarray:
    a = counts + 1.0
    a0 = a.sum(-1)
    out = np.empty(len(a))
    for i in range(len(a)):
        out[i] = sum(stats.beta(x, a0[i] - x).expect(lambda t, qq=qq: t * np.log(t / qq),
                                                     epsabs=1e-13, epsrel=1e-12)
                     for x, qq in zip(a[i], q[i], strict=True))
    return out


def main() -> None:
    rng = np.random.default_rng(20261122)
    counts, q = make_data(rng)
    print(f"items={N_ITEMS:,}  K={K}  annotations/item 2-20  cpu count={os.cpu_count()}  "
          f"load average={os.getloadavg()[0]:.2f}")
    for name, exact_func, ref_func in (("emd", dr.expected_emd, reference_emd),
                                       ("kl", dr.expected_kl, reference_kl)):
        exact, t_exact, cpu_exact, mem_exact = timed(exact_func, counts, q)
        exact = exact.values
        ref_idx = np.arange(N_REFERENCE)
        err_exact = np.max(np.abs(exact[ref_idx] - ref_func(counts[ref_idx], q[ref_idx])))
        mc, t_mc_sub, cpu_mc_sub, mem_mc = timed(
            dr.monte_carlo_expectation, counts[:N_SUBSET], q[:N_SUBSET], metric=name,
            n_draws=N_DRAWS, rng=0, repeats=1)
        t_mc = t_mc_sub * N_ITEMS / N_SUBSET
        err_mc = np.max(np.abs(mc.estimate.values - exact[:N_SUBSET]))
        mean_se = float(mc.standard_error.mean())
        mean_err_on_mean = abs(float(mc.estimate.mean()) - exact[:N_SUBSET].mean())
        print(f"\nE[{name.upper()}]")
        print(f"  exact closed form : {t_exact:8.3f} s wall, {cpu_exact:.3f} s CPU for "
              f"{N_ITEMS:,} items (best of {REPEATS}), peak traced memory "
              f"{mem_exact / 2**20:.1f} MiB")
        print(f"                      max abs error vs scipy quadrature ({N_REFERENCE} items) "
              f"{err_exact:.2e}")
        print(f"  Monte Carlo {N_DRAWS} : {t_mc_sub:8.3f} s for {N_SUBSET:,} items -> "
              f"{t_mc:8.1f} s extrapolated to {N_ITEMS:,}, peak {mem_mc / 2**20:7.1f} MiB")
        print(f"                      max abs error per item vs exact {err_mc:.4f} "
              f"(mean per-item s.e. {mean_se:.4f}); error of the data-set mean "
              f"{mean_err_on_mean:.2e}")
        print(f"  speed ratio (MC extrapolated / exact): {t_mc / t_exact:,.0f}x wall, "
              f"{cpu_mc_sub * N_ITEMS / N_SUBSET / cpu_exact:,.0f}x CPU")
    print(f"\nload average at the end={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    if parser.parse_args().quick:
        N_ITEMS, N_SUBSET, N_DRAWS, REPEATS, N_REFERENCE = 10_000, 500, 100, 1, 5
    main()

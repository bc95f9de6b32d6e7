"""Benchmark: the binomial item model's draws after sampling (``_posterior.conditional_draws``:
each term's conditional density of b on its grid, the items' multinomial spread over it and
the benchmark sums), the numba kernels against the former numpy evaluation in the same run.

The numpy baseline here is the former code: ``_model.log_integrand`` over (draw, term, node,
model) with a softplus per element, and the benchmark sums by ``einsum`` over a sigmoid per
element. The kernels (``_posterior._log_densities``, ``_benchmark_sums``) take e^(eta - b) as
the product e^eta e^-b and the sum of n softplus over the models as the logarithm of a product
of (1 + e)^n (one logarithm per draw, term and node), and evaluate sigmoids only on the nodes
some item fell on. Both runs use the same generator seed: the draws agree to 1e-12 (asserted).

Data: ``simulate_items`` (model SD 0.8, sigma_item 1.5, 4 tasks), 2,000 posterior draws of
eta and sigma_item around the truth. Printed: seconds of each, their ratio and the largest
difference.

Run: ``PYTHONPATH=src python benchmarks/bench_item_posterior.py [--size 20 10000 5]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from scipy.special import expit

from evaluq.item_model import _posterior, simulate_items
from evaluq.item_model._data import item_statistics
from evaluq.item_model._model import log_integrand, term_mode

DRAWS = 2000


def numpy_chunk_terms(data: Any, eta: np.ndarray, sigma: np.ndarray,
                      gen: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The former ``_posterior._chunk_terms`` (numpy over (draw, term, node, model))."""
    task = data.term_task
    eta_t = np.moveaxis(eta[:, :, task], 1, 2)
    n_t = data.epochs[:, task].T
    mode, sd = term_mode(eta_t, np.broadcast_to(n_t, eta_t.shape), data.term_total, sigma)
    grid, half = _posterior.GRID, _posterior.GRID_HALF_WIDTH
    z = (np.arange(grid) + 0.5) / grid * 2 * half - half
    b = mode[..., None] + sd[..., None] * z
    logd = log_integrand(eta_t, np.broadcast_to(n_t, eta_t.shape), data.term_total, sigma, b)
    prob = np.exp(logd - logd.max(axis=-1, keepdims=True))
    prob /= prob.sum(axis=-1, keepdims=True)
    counts = gen.multinomial(data.term_weight.astype(np.int64), prob)
    sums = np.einsum("dtg,dtgm->dm", counts, expit(eta_t[:, :, None, :] - b[..., None]))
    cmean = (prob * b).sum(axis=-1)
    return sums, cmean, (prob * b**2).sum(axis=-1) - cmean**2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, nargs=3, default=(10, 1000, 3),
                        metavar=("M", "I", "E"))
    args = parser.parse_args()
    n_m, n_i, n_e = args.size
    table = simulate_items(n_models=n_m, n_items=n_i, n_epochs=n_e, model_sd=0.8,
                           sigma_item=1.5, rng=0)
    table["task"] = "t" + (table["item"].astype("category").cat.codes % 4).astype(str)
    data = item_statistics(table, model="model", item="item", score="score", task="task",
                           epoch="epoch")
    gen = np.random.default_rng(1)
    eta = gen.normal(0.0, 0.8, (n_m, data.shape[1])) + gen.normal(0.0, 0.05,
                                                                   (DRAWS, *data.shape))
    sigma = 1.5 + gen.normal(0.0, 0.03, DRAWS)
    print(f"{n_m} models x {n_i} items x {n_e} epochs, 4 tasks: {len(data.term_total)} "
          f"terms, {DRAWS} draws", flush=True)
    former = _posterior._chunk_terms
    timings, results = {}, {}
    for name in ("numpy (former)", "kernels"):
        _posterior._chunk_terms = (                               # type: ignore[assignment]
            (lambda d, e, s, g, shape=None: numpy_chunk_terms(d, e, s, g))
            if name.startswith("numpy") else former)
        try:
            _posterior.conditional_draws(data, eta[:2], sigma[:2],      # warm-up: compiled
                                         np.random.default_rng(2))
            start = time.perf_counter()
            results[name] = _posterior.conditional_draws(data, eta, sigma,
                                                         np.random.default_rng(2))
            timings[name] = time.perf_counter() - start
        finally:
            _posterior._chunk_terms = former                      # type: ignore[assignment]
    diff = max(float(np.abs(results["kernels"][k] - results["numpy (former)"][k]).max())
               for k in results["kernels"])
    assert diff < 1e-12, diff
    for name, seconds in timings.items():
        print(f"{name:>15}: {seconds:6.2f} s", flush=True)
    print(f"speed-up {timings['numpy (former)'] / timings['kernels']:.1f}x; largest "
          f"difference {diff:.1e}")


if __name__ == "__main__":
    main()

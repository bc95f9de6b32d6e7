"""Slow: simulation-based calibration of the hierarchical model (Talts et al. 2018).

N_SIM cubes are simulated from the prior (fixed prior scales), the model is compiled once and
refitted on each (nutpie ``with_data``), and for every scalar parameter the rank of the truth
among thinned posterior draws must be uniform (chi-square, 0.01) and the central 90% interval
must cover the truth at a rate within binomial error of 0.9. The figures are printed.

The 15 rank tests are one family: each is held at 0.01 / 15 (Bonferroni), so that an exact
sampler fails the test in at most 1% of runs (at 0.01 each, in 14%: an 800-cube run gave
p = 0.003 for one of them, with every coverage near 0.9). The coverage bands are at 0.1%
each (1.5% for the family).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning

pytestmark = pytest.mark.slow
N_SIM, N_MODELS, N_LANG, N_SEEDS = 200, 3, 10, 5
DRAWS, THIN, BINS = 300, 6, 10
PRIORS = {"alpha_mu": 0.0, "alpha_sigma": 1.0, "dev_sigma": 1.0, "tau_lang_sigma": 1.0,
          "tau_m_sigma": 1.0, "sigma_seed_sigma": 1.0}


def _simulate(gen: np.random.Generator) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """One cube from the prior, as a summary table (sd_boot known, sd_seed from S seeds)."""
    alpha = gen.normal(0.0, 1.0)
    z = gen.normal(0.0, 1.0, N_MODELS)
    mu = alpha + z - z.mean()                      # ZeroSumNormal(1) deviations
    tau_lang = abs(gen.normal(0.0, 1.0))
    tau_m_scale = abs(gen.normal(0.0, 1.0))       # the models' tau_m are pooled
    tau_m = np.abs(gen.normal(0.0, tau_m_scale, N_MODELS))
    sigma_seed = np.abs(gen.normal(0.0, 1.0, N_MODELS))
    sd_boot = gen.uniform(0.2, 0.6, (N_MODELS, N_LANG))
    theta = (mu[:, None] + gen.normal(0.0, tau_lang, N_LANG)
             + gen.normal(0.0, 1.0, (N_MODELS, N_LANG)) * tau_m[:, None])
    seeds = gen.normal(0.0, 1.0, (N_MODELS, N_LANG, N_SEEDS)) * sigma_seed[:, None, None]
    ybar = theta + gen.normal(0.0, 1.0, theta.shape) * sd_boot + seeds.mean(-1)
    sd_seed = seeds.std(-1, ddof=1)
    table = pd.DataFrame({
        "model": np.repeat([f"m{i}" for i in range(N_MODELS)], N_LANG),
        "language": np.tile([f"l{j:02d}" for j in range(N_LANG)], N_MODELS),
        "mean": ybar.ravel(), "sd_seed": sd_seed.ravel(), "sd_boot": sd_boot.ravel()})
    truth = {"alpha": np.array([alpha]), "mu": mu, "tau_lang": np.array([tau_lang]),
             "tau_m": tau_m, "tau_m_scale": np.array([tau_m_scale]), "sigma_seed": sigma_seed,
             "benchmark_mean": theta.mean(-1)}
    return table, truth


def test_simulation_based_calibration() -> None:
    gen = np.random.default_rng(2026)
    ranks: dict[str, list[np.ndarray]] = {}
    covered: dict[str, list[np.ndarray]] = {}
    start = time.perf_counter()
    for i in range(N_SIM):
        table, truth = _simulate(gen)
        cube = eq.from_summary(table, n_seeds=N_SEEDS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)   # counted below instead
            fit = eq.fit_hierarchical(cube, priors=PRIORS, draws=DRAWS, tune=300, chains=2,
                                      rng=i, retry=False)
        post = fit.posterior
        for name, value in truth.items():
            draws = post[name].transpose("chain", "draw", ...).values.reshape(2 * DRAWS, -1)
            ranks.setdefault(name, []).append((draws[::THIN] < value).sum(0))
            lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
            covered.setdefault(name, []).append((lo <= value) & (value <= hi))
    elapsed = time.perf_counter() - start
    n_draws = 2 * DRAWS // THIN
    lo_ok, hi_ok = stats.binom.ppf([0.0005, 0.9995], N_SIM, 0.9)
    print(f"\nSBC: {N_SIM} cubes {N_MODELS} x {N_LANG} x {N_SEEDS}, {elapsed:.0f} s "
          f"({elapsed / N_SIM:.2f} s per fit); ranks among {n_draws} thinned draws; "
          f"90% coverage must lie in [{lo_ok / N_SIM:.3f}, {hi_ok / N_SIM:.3f}]")
    failures = []
    n_tests = sum(len(ranks[name][0]) for name in truth)
    for name in truth:
        rank = np.stack(ranks[name])               # (sim, k)
        cover = np.stack(covered[name])
        for k in range(rank.shape[1]):
            counts = np.bincount(rank[:, k] * BINS // (n_draws + 1), minlength=BINS)
            p = stats.chisquare(counts).pvalue
            rate = cover[:, k].mean()
            print(f"\nCALIBRATION | hierarchical SBC {name}[{k}] (rank chi-square p = {p:.3f}) | "
                  f"central 90% posterior interval coverage | nominal 0.900 | measured {rate:.4f} "
                  f"| n {N_SIM}")
            if p < 0.01 / n_tests or not lo_ok <= cover[:, k].sum() <= hi_ok:
                failures.append(f"{name}[{k}] (p={p:.3f}, coverage={rate:.3f})")
    assert not failures, failures

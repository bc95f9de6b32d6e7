"""Shared fixtures: a seeded rng and simulated cubes with known truth."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import settings

import evaluq as eq

collect_ignore_glob = ["data/*"]
"""Test data (a peer harness's task definitions among them) is read, never collected."""

# property tests draw the same examples in every run (a CI run must not fail by chance; the
# examples a run found are kept as @example in the tests)
settings.register_profile("evaluq", derandomize=True)
settings.load_profile("evaluq")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


@pytest.fixture
def sim_cube(rng: np.random.Generator) -> xr.Dataset:
    """3 models x 8 languages x 5 seeds x 200 replicates; sigma_between 2, seed .5, boot 1."""
    return eq.simulate_cube(rng=rng)



SBC_PRIORS = {"alpha_mu": 0.0, "alpha_sigma": 1.0, "dev_sigma": 0.5, "sigma_item_sigma": 1.0}
"""The priors the binary item-model families' SBC tests draw from (and fit with)."""


def _simulation_based_calibration(responses, label: str, *, seed: int, n_sim: int,
                                  n_epochs: int, tune: int, priors=None, draws: int = 300,
                                  thin: int = 6, bins: int = 10, **fit_kwargs) -> None:
    """Simulation-based calibration of a binary item-model family on 3 models x 30 items x
    ``n_epochs``: alpha ~ N(0, 1) and the model deviations a zero-sum normal of scale tau_dev
    ~ HalfNormal(0.5) (``SBC_PRIORS``), then ``responses(gen, eta, n_items, n_epochs)`` (eta
    = alpha + dev) draws the family's own parameters and the 0/1 responses: (y (model, item,
    epoch), truth of those parameters). Each data set is fitted with ``fit_items(...,
    priors=SBC_PRIORS | priors, **fit_kwargs)``, 2 chains of ``draws``; each truth's rank
    among the thinned draws must be uniform (chi-square over ``bins``, p >= 0.001) and its
    central 90% interval must cover it at the nominal rate (binomial 99.9% band). Prints one
    CALIBRATION line per scalar."""
    import warnings

    import pandas as pd

    from evaluq.item_model import ItemConvergenceWarning

    gen = np.random.default_rng(seed)
    n_m, n_i = 3, 30
    mm, ii, ee = np.meshgrid(np.arange(n_m), np.arange(n_i), np.arange(n_epochs),
                             indexing="ij")
    ranks: dict[str, list[np.ndarray]] = {}
    covered: dict[str, list[np.ndarray]] = {}
    for i in range(n_sim):
        alpha = gen.normal(0.0, 1.0)
        z = gen.normal(0.0, abs(gen.normal(0.0, 0.5)), n_m)      # tau_dev, then the models
        y, own = responses(gen, alpha + z - z.mean(), n_i, n_epochs)
        truth = {"alpha": np.array([alpha]), "dev": z - z.mean(), **own}
        table = pd.DataFrame({"model": mm.ravel(), "item": ii.ravel(), "epoch": ee.ravel(),
                              "score": y.ravel().astype(np.float64)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ItemConvergenceWarning)
            post = eq.fit_items(table, model="model", item="item", score="score",
                                epoch="epoch", priors=SBC_PRIORS | (priors or {}),
                                draws=draws, tune=tune, chains=2, rng=i,
                                **fit_kwargs).posterior
        for name, value in truth.items():
            d = post[name].transpose("chain", "draw", ...).values.reshape(2 * draws, -1)
            ranks.setdefault(name, []).append((d[::thin] < value).sum(0))
            lo, hi = np.quantile(d, [0.05, 0.95], axis=0)
            covered.setdefault(name, []).append((lo <= value) & (value <= hi))
    _sbc_verdict(ranks, covered, label, n_sim, 2 * draws // thin, bins)


def _sbc_verdict(ranks, covered, label: str, n_sim: int, n_draws: int, bins: int) -> None:
    """The rank-uniformity and coverage checks of :func:`_simulation_based_calibration`."""
    from scipy import stats

    lo_ok, hi_ok = stats.binom.ppf([0.0005, 0.9995], n_sim, 0.9)
    failures = []
    for name in ranks:
        rank, cover = np.stack(ranks[name]), np.stack(covered[name])
        for k in range(rank.shape[1]):
            counts = np.bincount(rank[:, k] * bins // (n_draws + 1), minlength=bins)
            p = stats.chisquare(counts).pvalue
            print(f"\nCALIBRATION | {label} {name}[{k}] (rank chi-square p = {p:.3f}) | "
                  f"central 90% posterior interval coverage | nominal 0.900 | measured "
                  f"{cover[:, k].mean():.4f} | n {n_sim}")
            if p < 0.001 or not lo_ok <= cover[:, k].sum() <= hi_ok:
                failures.append(f"{name}[{k}] (p={p:.3f}, coverage={cover[:, k].mean():.3f})")
    assert not failures, failures


@pytest.fixture
def simulation_based_calibration():
    """:func:`_simulation_based_calibration`, for the item model's SBC tests."""
    return _simulation_based_calibration

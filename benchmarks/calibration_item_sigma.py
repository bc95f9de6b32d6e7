"""Calibration of sigma_item, the SD of the item difficulties, in the binomial 1PL (issue 36
item 4: an independent study found its 90% interval covering 0.852, SE 0.014, and its
posterior SD about 10% too small).

Data sets: 5 models (dev_m ~ N(0, 0.5^2)), mean logit logit(0.6), items b_i ~ N(0,
sigma_item^2) at three sizes, cycled: 60 items x 1 epoch (bernoulli), 200 x 2 and 1,000 x 3
(binomial). The truth sigma_item is ``"fixed"`` (1.5, ``simulate_items``'s default) or
``"prior"``: drawn per data set from the fit's own prior HalfNormal(2.5) (SBC-style: the
posterior of sigma_item must then cover it at the nominal rate whatever the size).

Each data set is refitted through ``pm.Data`` on a model compiled once per size (default
priors, nutpie 2 chains, ``--draws`` after ``--tune`` tuning steps, 500 / 500 as the
issue's study), with the items integrated out by ``--quadrature`` (``grid``, the sampler's
default, or ``gauss-hermite``, the adaptive reference of ``N_NODES`` nodes per term).

Per size and overall it prints the 90% coverage of

* the population sigma_item (the parameter: what the posterior is about), and
* the realised SD of the data set's simulated items (sqrt(mean (b - mean b)^2)), which is
  not a parameter of the model,

with binomial SEs, and z = (posterior mean - population sigma) / posterior SD: its mean
(bias in posterior SDs) and its SD (about 1 when the posterior's width is right; > 1 when
the posterior is too narrow), and the SBC rank of the population value among the draws
(share in each fifth; 0.2 each when calibrated).

Measured (2026-11-27, 210 data sets per truth, 70 per size): the posterior is calibrated for
the population value, and its width right. Fixed sigma_item 1.5: coverage 0.910 (SE 0.020;
0.900 / 0.914 / 0.914 by size), z SD 0.992; the realised SD covered 0.962. Drawn from the
prior: 0.890 (SE 0.022; 0.857 (0.042) / 0.929 / 0.886), z SD 1.023; realised 0.924. On the
same 90 data sets (prior truths) the Gauss-Hermite reference gives the same posterior (mean
posterior SD 0.2216 vs the grid's 0.2215, z SD 1.047 vs 1.050, coverage 0.878 vs 0.889):
the quadrature is not a cause. A too-narrow reading (0.852) is not reproduced; scoring
against the realised SD would read too-wide intervals, not too-narrow ones.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/calibration_item_sigma.py --n 210
--truth fixed`` (and ``--truth prior``; ``--quadrature gauss-hermite``; ``--draws 2000``).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from _common import refit_item_model

LEVEL = 0.9
MEAN_LOGIT = float(np.log(0.6 / 0.4))
SIZES = ((60, 1), (200, 2), (1000, 3))
FIXED_SIGMA = 1.5
PRIOR_SCALE = 2.5          # the default sigma_item_sigma


def truth_sigma(seed: int, truth: str) -> float:
    """Population sigma_item of data set ``seed``: fixed, or drawn from HalfNormal(2.5)."""
    if truth == "fixed":
        return FIXED_SIGMA
    return float(abs(np.random.default_rng([seed, 11]).normal(0, PRIOR_SCALE)))


def simulate(seed: int, n_items: int, n_epochs: int, sigma: float
             ) -> tuple[Any, np.ndarray]:
    """Sufficient statistics of one data set and its simulated item difficulties."""
    from evaluq.item_model import item_statistics
    from evaluq.item_model._simulate import simulate_items

    t = simulate_items(n_models=5, n_items=n_items, n_epochs=n_epochs, model_sd=0.5,
                       sigma_item=sigma, mean_logit=MEAN_LOGIT, rng=seed)
    data = item_statistics(t, model="model", item="item", score="score",
                           epoch="epoch" if n_epochs > 1 else None,
                           family="bernoulli" if n_epochs == 1 else "binomial")
    return data, t.attrs["items"]["difficulty"]


def compiled(data: Any, quadrature: str) -> Any:
    """nutpie model of the data's shape (items integrated out by ``quadrature``)."""
    from evaluq._nutpie_cache import compile_pymc_model
    from evaluq.item_model._model import build_model

    return compile_pymc_model(build_model(data, quadrature=quadrature))[0]


def refit(comp: Any, data: Any, seed: int, draws: int, tune: int
          ) -> tuple[np.ndarray, int]:
    """Draws of sigma_item (all chains) and the divergences."""
    raw = refit_item_model(comp, data, None, seed, draws, tune)
    sigma = raw["posterior"]["sigma_item"].values.ravel()
    return sigma, int(raw["sample_stats"]["diverging"].values.sum())


def one(comp: Any, seed: int, size: tuple[int, int], truth: str, draws: int, tune: int
        ) -> dict[str, float]:
    """Records of one data set."""
    sigma_true = truth_sigma(seed, truth)
    data, b = simulate(seed, *size, sigma_true)
    draws_s, div = refit(comp, data, seed, draws, tune)
    lo, hi = np.quantile(draws_s, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    realised = float(b.std())
    return {"truth": sigma_true, "realised": realised, "lo": float(lo), "hi": float(hi),
            "mean": float(draws_s.mean()), "sd": float(draws_s.std(ddof=1)),
            "rank": float((draws_s < sigma_true).mean()), "divergences": float(div),
            "cover": float(lo <= sigma_true <= hi), "cover_realised": float(lo <= realised <= hi)}


def summary(label: str, rows: list[dict[str, float]]) -> None:
    """Coverage of both truths, z and SBC ranks over ``rows``."""
    r = {k: np.array([row[k] for row in rows]) for k in rows[0]}
    n = len(rows)

    def cov(x: np.ndarray) -> str:
        return f"{x.mean():.3f} (SE {np.sqrt(x.mean() * (1 - x.mean()) / n):.3f})"

    z = (r["mean"] - r["truth"]) / r["sd"]
    rms = np.sqrt(np.mean((r["realised"] - r["truth"]) ** 2))
    fifths = np.histogram(r["rank"], bins=np.linspace(0, 1, 6))[0] / n
    print(f"{label}: {n} data sets; 90% coverage of population sigma {cov(r['cover'])}, of "
          f"the realised SD {cov(r['cover_realised'])}; z mean {z.mean():+.3f}, z SD "
          f"{z.std(ddof=1):.3f}; mean posterior SD {r['sd'].mean():.4f} vs SD of the "
          f"posterior mean's error {np.std(r['mean'] - r['truth'], ddof=1):.4f} and RMS of the "
          f"realised SD about the population {rms:.4f}; "
          f"rank fifths {np.array2string(fifths, precision=3)}; divergences "
          f"{int(r['divergences'].sum())}", flush=True)


def study(n: int, truth: str, quadrature: str, draws: int, tune: int) -> None:
    comps = {size: compiled(simulate(0, *size, 1.0)[0], quadrature) for size in SIZES}
    start = time.perf_counter()
    rows: dict[tuple[int, int], list[dict[str, float]]] = {size: [] for size in SIZES}
    for i in range(n):
        size = SIZES[i % len(SIZES)]
        rows[size].append(one(comps[size], 30_000 + i, size, truth, draws, tune))
    print(f"== truth {truth}, quadrature {quadrature}, draws {draws}, tune {tune}")
    for size, part in rows.items():
        summary(f"{size[0]} items x {size[1]} epochs", part)
    summary("all sizes", [row for part in rows.values() for row in part])
    print(f"({time.perf_counter() - start:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=210, help="data sets (cycled over sizes)")
    parser.add_argument("--truth", choices=("fixed", "prior"), default="fixed")
    parser.add_argument("--quadrature", choices=("grid", "gauss-hermite"), default="grid")
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    args = parser.parse_args()
    study(args.n, args.truth, args.quadrature, args.draws, args.tune)


if __name__ == "__main__":
    main()

"""Cubes built from shared per-item resamples, and the calibration study of the paired posterior.

Each language has ``n_items`` test items. Model m's item score is
``theta_ml + z_mli + u_mls + eta_mlsi`` (seed s): ``z`` the item difficulty for the model,
equicorrelated across models with ``rho`` (variance ``n_items`` so a cell's test-set SD is 1),
``u`` the seed's shift and ``eta`` its own item-level noise. A cell's score is the mean over
items; bootstrap replicate b of a language is one resample of its items, shared by every model
and seed (as :func:`evaluq.from_predictions` makes them). ``theta_ml = mu_m + a_l + g_ml``.

Used by the slow calibration tests (``test_calibration.py``) and by
``benchmarks/bench_hierarchical.py``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning


@dataclass(frozen=True)
class Setting:
    """One simulation setting (sizes and the true spreads)."""

    n_models: int = 5
    n_languages: int = 8
    n_seeds: int = 5
    n_boot: int = 200
    rho: float = 0.5
    n_items: int = 60
    tau_lang: float = 2.0
    tau_m: float = 0.3
    sd_seed_shift: float = 0.3
    sd_seed_items: float = 0.3
    """SD of a seed's own part of a cell's test-set error (its item-level disagreement)."""
    spread: float = 1.5
    """True model means are evenly spaced over [0, spread]."""


def shared_cube(gen: np.random.Generator, s: Setting) -> tuple[xr.Dataset, np.ndarray,
                                                               np.ndarray]:
    """One cube, the true theta (model, language) and the true mu (model)."""
    m, n_l, n_s, n_i, n_b = s.n_models, s.n_languages, s.n_seeds, s.n_items, s.n_boot
    mu = np.linspace(0.0, s.spread, m)
    theta = (mu[:, None] + s.tau_lang * gen.standard_normal(n_l)
             + s.tau_m * gen.standard_normal((m, n_l)))
    root = np.sqrt(n_i)                       # item SD: a cell mean's test-set SD is 1
    shared = gen.standard_normal((1, n_l, n_i))
    z = root * (np.sqrt(s.rho) * shared + np.sqrt(1 - s.rho) * gen.standard_normal((m, n_l, n_i)))
    u = s.sd_seed_shift * gen.standard_normal((m, n_l, n_s))
    eta = s.sd_seed_items * root * gen.standard_normal((m, n_l, n_s, n_i))
    items = (theta[:, :, None, None] + z[:, :, None, :] + u[..., None] + eta)  # (M, L, S, I)
    score = items.mean(-1)
    # shared resamples: counts (L, B, I) of each item in replicate b of language l
    picks = gen.integers(0, n_i, size=(n_l, n_b, n_i))
    counts = np.zeros((n_l, n_b, n_i))
    np.add.at(counts, (np.arange(n_l)[:, None, None], np.arange(n_b)[None, :, None], picks), 1)
    boot = np.einsum("mlsi,lbi->mlsb", items, counts) / n_i
    cube = eq.from_arrays(score, boot, metric="score", outlier_threshold=None)
    cube.attrs["shared_bootstrap"] = 1
    return cube, theta, mu


@dataclass
class Tally:
    """Running tallies of one method's intervals and probabilities."""

    hits: dict[float, list[bool]] = field(default_factory=dict)
    widths: list[float] = field(default_factory=list)
    p_greater: list[float] = field(default_factory=list)
    greater: list[bool] = field(default_factory=list)
    p_best: list[float] = field(default_factory=list)
    best: list[bool] = field(default_factory=list)
    detect: list[bool] = field(default_factory=list)

    def add(self, diffs: np.ndarray, truth_diff: np.ndarray, truth_best: np.ndarray,
            powered: np.ndarray) -> None:
        """``diffs`` (pairs, draws) draws of the pair differences (model i minus model j)."""
        for level in (0.90, 0.95):
            lo, hi = np.quantile(diffs, [(1 - level) / 2, (1 + level) / 2], axis=-1)
            self.hits.setdefault(level, []).extend((lo <= truth_diff) & (truth_diff <= hi))
            if level == 0.95:
                self.widths.extend(hi - lo)
                self.detect.extend(((lo > 0) | (hi < 0))[powered])
        self.p_greater.extend((diffs > 0).mean(-1))
        self.greater.extend(truth_diff > 0)
        del truth_best

    def add_best(self, draws: np.ndarray, truth: np.ndarray) -> None:
        """``draws`` (model, draws) of the per-model statistic; ``truth`` (model,)."""
        best = np.argmax(draws, axis=0)
        self.p_best.extend(np.bincount(best, minlength=len(truth)) / draws.shape[1])
        self.best.extend(np.arange(len(truth)) == np.argmax(truth))


def calibration_error(p: list[float], outcome: list[bool], bins: int = 10) -> float:
    """Expected calibration error: |mean p - frequency| per bin of p, weighted by bin size."""
    prob, hit = np.asarray(p), np.asarray(outcome, dtype=float)
    idx = np.minimum((prob * bins).astype(int), bins - 1)
    err = 0.0
    for b in range(bins):
        sel = idx == b
        if sel.any():
            err += sel.mean() * abs(prob[sel].mean() - hit[sel].mean())
    return float(err)


def _pairs(draws: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    iu = np.triu_indices(draws.shape[0], k=1)
    return draws[iu[0]] - draws[iu[1]], iu


def study(setting: Setting, n_cubes: int, *, seed: int = 0, draws: int = 250,
          tune: int = 400, chains: int = 4, n_resamples: int = 1000,
          methods: tuple[str, ...] = ("paired", "independent")) -> dict[str, dict[str, float]]:
    """Calibration figures of the posterior (benchmark and population scope) for each
    ``test_set_errors`` in ``methods`` and of the paired resampling (benchmark scope)."""
    gen = np.random.default_rng(seed)
    tallies = {name: Tally() for name in
               [*(f"{m}_{s}" for m in methods for s in ("benchmark", "population")),
                "resampling_benchmark"]}
    seconds = dict.fromkeys(methods, 0.0)
    warned = dict.fromkeys(methods, 0)
    for _ in range(n_cubes):
        cube, theta, mu = shared_cube(gen, setting)
        truth = {"benchmark": theta.mean(1), "population": mu}
        for method in methods:
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                fit = eq.fit_hierarchical(cube, test_set_errors=method, draws=draws,
                                          tune=tune, chains=chains, rng=gen, retry=False)
            seconds[method] += time.perf_counter() - start
            warned[method] += any(issubclass(w.category, ConvergenceWarning) for w in caught)
            for scope, var in (("benchmark", "benchmark_mean"), ("population", "mu")):
                post = fit.posterior[var].stack(s=("chain", "draw")).values
                _add(tallies[f"{method}_{scope}"], post, truth[scope])
        res = eq.resample(cube, n_resamples=n_resamples, replication="nonparametric",
                          seeds="rescaled", languages="fixed", rng=gen)
        agg = eq.aggregate(res).resampled.transpose("model", "resample").values
        _add(tallies["resampling_benchmark"], agg, truth["benchmark"])
    out = {name: summarise(t) for name, t in tallies.items()}
    for method in methods:
        out[f"{method}_benchmark"]["seconds_per_fit"] = seconds[method] / n_cubes
        out[f"{method}_benchmark"]["warned"] = warned[method] / n_cubes
    return out


def _add(tally: Tally, draws: np.ndarray, truth: np.ndarray) -> None:
    diffs, iu = _pairs(draws)
    truth_diff = truth[iu[0]] - truth[iu[1]]
    powered = (np.abs(truth_diff) >= 0.5) & (np.abs(truth_diff) <= 1.0)
    tally.add(diffs, truth_diff, truth, powered)
    tally.add_best(draws, truth)


LOADERS = ("marked", "from_arrays", "from_long")
"""The cubes of one draw in :func:`sharing_study`: replicates marked as shared (attribute
``shared_bootstrap=1``, what ``from_predictions`` implies), and the same replicates unmarked
as a user builds them, with ``from_arrays`` or from a long table with a bootstrap column."""


def long_cube(cube: xr.Dataset) -> xr.Dataset:
    """The cube as a user's long table (one row per score, a ``bootstrap`` column empty on
    the full-test-set rows) read back by ``from_long``, which does not mark the replicates."""
    full = cube["score"].to_dataframe().reset_index().assign(bootstrap=np.nan)
    boot = cube["boot_score"].to_dataframe("score").reset_index()
    table = pd.concat([full, boot], ignore_index=True)
    return eq.from_long(table, model="model", language="language", seed="seed",
                        bootstrap="bootstrap", score="score", outlier_threshold=None)


def sharing_study(setting: Setting, n_cubes: int, *, seed: int = 0, draws: int = 250,
                  tune: int = 400, chains: int = 4, n_resamples: int = 1000,
                  loaders: tuple[str, ...] = LOADERS) -> dict[str, dict[str, float]]:
    """Calibration of ``test_set_errors="auto"`` (benchmark scope) on the cubes of
    ``loaders`` built from one draw of shared replicates, beside the paired resampling;
    every fit of a draw has the same seed, so equal statistics give equal posteriors.
    ``paired_share`` is the share of fits that paired the errors, ``mean_k`` their mean
    number of error factors (0 when independent)."""
    gen = np.random.default_rng(seed)
    tallies = {name: Tally() for name in (*loaders, "resampling")}
    paired: dict[str, list[int]] = {name: [] for name in loaders}
    factors: dict[str, list[int]] = {name: [] for name in loaders}
    for _ in range(n_cubes):
        marked, theta, _ = shared_cube(gen, setting)
        unmarked = marked.copy()
        del unmarked.attrs["shared_bootstrap"]
        cubes = {"marked": marked, "from_arrays": unmarked}
        if "from_long" in loaders:
            cubes["from_long"] = long_cube(marked)
        fit_seed = int(gen.integers(0, 2**31 - 1))
        for name in loaders:
            fit = eq.fit_hierarchical(cubes[name], draws=draws, tune=tune, chains=chains,
                                      rng=fit_seed, retry=False)
            paired[name].append(int(fit.data.paired))
            factors[name].append(fit.data.n_factors)
            post = fit.posterior["benchmark_mean"].stack(s=("chain", "draw")).values
            _add(tallies[name], post, theta.mean(1))
        res = eq.resample(marked, n_resamples=n_resamples, replication="nonparametric",
                          seeds="rescaled", languages="fixed", rng=gen)
        agg = eq.aggregate(res).resampled.transpose("model", "resample").values
        _add(tallies["resampling"], agg, theta.mean(1))
    out = {name: summarise(t) for name, t in tallies.items()}
    for name in loaders:
        out[name] |= {"paired_share": float(np.mean(paired[name])),
                      "mean_k": float(np.mean(factors[name])), "n_cubes": float(n_cubes)}
    return out


def sharing_lines(label: str, out: dict[str, dict[str, float]], rho: float) -> list[str]:
    """``CALIBRATION | ...`` lines of :func:`sharing_study`: per loader the 90% / 95%
    coverage and the 95% width against the paired resampling's; for the unmarked cubes how
    often 'auto' paired (nominal: always with correlated errors, never at ``rho`` 0)."""
    ref, lines = out["resampling"], []
    for name, row in out.items():
        study = (f"hierarchical paired resampling {label}, benchmark scope"
                 if name == "resampling" else
                 f"hierarchical auto, {name} cube {label}, benchmark scope")
        n = f"n {row['n_intervals']:.0f}"
        lines += [f"CALIBRATION | {study} | {level}% interval coverage of pair differences | "
                  f"nominal {level / 100:.3f} | measured {row[f'cover{level}']:.4f} | {n}"
                  for level in (90, 95)]
        if name == "resampling":
            continue
        lines.append(f"CALIBRATION | {study} | 95% width / the paired resampling's | nominal "
                     f"1.000 | measured {row['width95'] / ref['width95']:.4f} | {n}")
        if name != "marked":
            lines.append(f"CALIBRATION | {study} | share of fits paired by 'auto' (mean k "
                         f"{row['mean_k']:.2f}) | nominal {float(rho > 0):.3f} | measured "
                         f"{row['paired_share']:.4f} | n {row['n_cubes']:.0f}")
    return lines


def summarise(t: Tally) -> dict[str, float]:
    """Coverage at 90% / 95%, mean 95% width, calibration errors, power."""
    return {"cover90": float(np.mean(t.hits[0.90])), "cover95": float(np.mean(t.hits[0.95])),
            "n_intervals": float(len(t.hits[0.95])), "width95": float(np.mean(t.widths)),
            "ece_p_greater": calibration_error(t.p_greater, t.greater),
            "ece_p_best": calibration_error(t.p_best, t.best),
            "power": float(np.mean(t.detect)) if t.detect else float("nan"),
            "n_powered": float(len(t.detect))}


def calibration_lines(label: str, out: dict[str, dict[str, float]]) -> list[str]:
    """``CALIBRATION | study | kind | nominal x | measured y | n N`` lines (the format of
    ``scripts/calibration_table.py``): coverage at 90% and 95% for every method and scope;
    for the posterior at benchmark scope also the 95% width, the P(diff > 0) and P(best)
    calibration errors and the power, against the paired resampling's (as "nominal")."""
    ref = out["resampling_benchmark"]
    lines = []
    for name, row in out.items():
        method, scope = name.rsplit("_", 1)
        study = f"hierarchical {method} {label}, {scope} scope"
        n = f"n {row['n_intervals']:.0f}"
        for level in (90, 95):
            lines.append(f"CALIBRATION | {study} | {level}% interval coverage of pair "
                         f"differences | nominal {level / 100:.3f} | measured "
                         f"{row[f'cover{level}']:.4f} | {n}")
        if scope != "benchmark" or method == "resampling":
            continue
        lines += [
            f"CALIBRATION | {study} | 95% width / the paired resampling's | nominal 1.000 | "
            f"measured {row['width95'] / ref['width95']:.4f} | {n}",
            f"CALIBRATION | {study} | P(diff > 0) calibration error (resampling's as nominal) "
            f"| nominal {ref['ece_p_greater']:.3f} | measured {row['ece_p_greater']:.4f} | {n}",
            f"CALIBRATION | {study} | P(best) calibration error (resampling's as nominal) | "
            f"nominal {ref['ece_p_best']:.3f} | measured {row['ece_p_best']:.4f} | {n}",
            f"CALIBRATION | {study} | power, true difference 0.5-1 SD (resampling's as "
            f"nominal) | nominal {ref['power']:.3f} | measured {row['power']:.4f} | "
            f"n {row['n_powered']:.0f}",
            f"CALIBRATION | {study} | fits with a convergence warning (4 x 250 draws) | "
            f"nominal 0.000 | measured {row['warned']:.4f} | "
            f"s/fit {row['seconds_per_fit']:.2f}",
        ]
    return lines


if __name__ == "__main__":
    import json
    import sys

    # the full study of the model card: python tests/hierarchical/paired_sim.py [n_small n_big]
    # unmarked replicates: python tests/hierarchical/paired_sim.py sharing [n_small n_big]
    sharing = len(sys.argv) > 1 and sys.argv[1] == "sharing"
    args = sys.argv[2:4] if sharing else sys.argv[1:3]
    n_small, n_big = (int(a) for a in args) if len(args) > 1 else (40, 15)
    results = {}
    if sharing:
        warnings.simplefilter("ignore")
        for rho in (0.0, 0.9):
            for label, setting, n in (
                    (f"5x8x5 B=200 rho={rho}", Setting(rho=rho), n_small),
                    (f"20x8x5 B=40 rho={rho}", Setting(n_models=20, n_boot=40, rho=rho,
                                                       spread=2.0), n_big)):
                results[label] = sharing_study(setting, n, seed=int(10 * rho) + 300)
                print("\n".join(sharing_lines(f"{label} ({n} cubes)", results[label], rho)),
                      flush=True)
        print(json.dumps(results))
        sys.exit(0)
    for rho in (0.0, 0.5, 0.9):
        for label, setting, n in (
                (f"5x8x5 B=200 rho={rho}", Setting(rho=rho), n_small),
                (f"20x8x5 B=40 rho={rho}", Setting(n_models=20, n_boot=40, rho=rho, spread=2.0),
                 n_big)):
            warnings.simplefilter("ignore")
            results[label] = study(setting, n, seed=int(10 * rho))
            print("\n".join(calibration_lines(label, results[label])), flush=True)
    print(json.dumps(results))

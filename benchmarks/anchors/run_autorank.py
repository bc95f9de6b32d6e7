"""Reference numbers of autorank (Demšar's Friedman / Nemenyi / CD diagram) for evaluq's tests.

Runs in autorank's own virtual env (``benchmarks/anchors/setup_autorank.sh``), never in
evaluq's; writes ``autorank.json`` beside this file (or the path given), which
``tests/test_demsar.py`` reads. Each case stores its data (blocks x models), so the tests
rebuild it without numpy's legacy generator:

- ``autorank_test_suite``: the data of autorank's own ``test_autorank_nonnormal_homoscedactic``
  (``np.random.seed(42)``, 7 populations of 50, clipped to [0, 1]), descending and ascending;
- ``tasks_26``: 26 tasks x 5 models, normal scores with model effects (descending);
- ``ties``: scores rounded to one decimal, so that many blocks hold ties (descending);
- ``lower_better``: an error-rate-like table ranked ascending.

For each: autorank's ``force_mode="nonparametric"`` result (Friedman p-value, mean ranks, the
Nemenyi critical difference, the groups its CD diagram draws), scipy's Friedman statistic
(autorank's engine), and for the Wilcoxon-Holm test the raw two-sided Wilcoxon p-values
(``zero_method="pratt"``) with statsmodels' Holm adjustment (``multipletests``).

Usage::

    python run_autorank.py [OUT.json]
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd


def _autorank_suite(order: str) -> tuple[pd.DataFrame, str]:
    np.random.seed(42)  # noqa: NPY002 (autorank's own test draws from numpy's global generator)
    means = [0.2, 0.3, 0.5, 0.8, 0.85, 0.9, 0.1]
    data = pd.DataFrame()
    for i, mean in enumerate(means):
        data[f"pop_{i}"] = np.random.normal(mean, 0.3, 50).clip(0, 1)  # noqa: NPY002
    return data, order


def _cases() -> dict[str, tuple[pd.DataFrame, str]]:
    rng = np.random.default_rng(20261124)
    models = [f"m{i}" for i in range(5)]
    tasks26 = pd.DataFrame(rng.normal([0.0, 0.1, 0.3, 0.35, 0.8], 0.5, size=(26, 5)),
                           columns=models)
    ties = pd.DataFrame(np.round(rng.normal([0.5, 0.55, 0.6, 0.6], 0.1, size=(30, 4)), 1),
                        columns=models[:4])
    err = pd.DataFrame(rng.uniform(0.05, 0.3, size=(12, 6)) + np.linspace(0, 0.1, 6),
                       columns=[f"m{i}" for i in range(6)])
    return {"autorank_test_suite_descending": _autorank_suite("descending"),
            "autorank_test_suite_ascending": _autorank_suite("ascending"),
            "tasks_26": (tasks26, "descending"), "ties": (ties, "descending"),
            "lower_better": (err, "ascending")}


def _wilcoxon_holm(data: pd.DataFrame) -> dict[str, list]:
    from scipy.stats import wilcoxon
    from statsmodels.stats.multitest import multipletests

    cols = list(data.columns)
    pairs, raw = [], []
    for i in range(len(cols)):
        for j in range(i + 1, len(cols)):
            d = data[cols[i]].to_numpy() - data[cols[j]].to_numpy()
            raw.append(1.0 if not np.any(d != 0) else
                       float(wilcoxon(data[cols[i]], data[cols[j]], zero_method="pratt").pvalue))
            pairs.append([cols[i], cols[j]])
    adjusted = multipletests(raw, method="holm")[1]
    return {"pairs": pairs, "raw": raw, "holm": [float(v) for v in adjusted]}


def _one(data: pd.DataFrame, order: str) -> dict:
    from autorank import autorank
    from autorank._util import get_sorted_rank_groups
    from scipy.stats import friedmanchisquare

    res = autorank(data, alpha=0.05, verbose=False, order=order, force_mode="nonparametric")
    _ranks, names, groups = get_sorted_rank_groups(
        res._replace(rankdf=res.rankdf.sort_values(by="meanrank")), reverse=False)
    fried = friedmanchisquare(*data.transpose().values)
    return {
        "order": order, "models": list(data.columns), "scores": data.to_numpy().tolist(),
        "omnibus": res.omnibus, "posthoc": res.posthoc,
        "friedman_pvalue": float(res.pvalue),
        "scipy_friedman_statistic": float(fried.statistic),
        "scipy_friedman_pvalue": float(fried.pvalue),
        "mean_rank": {str(k): float(v) for k, v in res.rankdf["meanrank"].items()},
        "cd": float(res.cd),
        "groups": [[names[i] for i in range(lo, hi + 1)] for lo, hi in groups],
        "wilcoxon_holm": _wilcoxon_holm(data),
    }


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).with_name("autorank.json")
    result = {"script": "benchmarks/anchors/run_autorank.py",
              "versions": {p: version(p) for p in ("autorank", "scipy", "statsmodels",
                                                   "numpy", "pandas")},
              "cases": {name: _one(data, order) for name, (data, order) in _cases().items()}}
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

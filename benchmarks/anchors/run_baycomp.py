"""Reference numbers of baycomp (Bayesian signed-rank and correlated t-tests) for evaluq's tests.

Runs in baycomp's own virtual env (``benchmarks/anchors/setup_baycomp.sh``), never in
evaluq's; writes ``baycomp.json`` beside this file (or the path given), which
``tests/test_bayescomp.py`` reads.

- ``signed_rank``: ``SignedRankTest.probs`` / ``.sample`` on the data of baycomp's own test
  (``tests/test_multiple.py``: x = [15, 16, 17, 24, 11, 12, 13, 14], y = [10, 13, 15, 24, 15,
  82, 83, 84], with its ropes and priors) and on 26 tasks of two models; each with
  ``random_state`` and ``nsamples`` recorded, so a test can rebuild baycomp's Dirichlet weights
  exactly with ``np.random.RandomState(random_state).dirichlet``; also the posterior means of
  the three probabilities.
- ``correlated_t``: ``CorrelatedTTest.compute_statistics`` and ``probs`` (closed form), with the
  cases of baycomp's own ``tests/test_single.py`` and 10-fold x 1 / 5-fold x 2 cases.

Usage::

    python run_baycomp.py [OUT.json]
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

NSAMPLES = 50_000


def _signed_rank_cases() -> list[dict]:
    x = [15, 16, 17, 24, 11, 12, 13, 14]
    y = [10, 13, 15, 24, 15, 82, 83, 84]
    rng = np.random.default_rng(20261124)
    a = rng.normal(0.70, 0.05, 26)
    b = a + rng.normal(0.01, 0.02, 26)
    cases = [dict(x=x, y=y, rope=r, prior=p) for r, p in
             [(0, 0.5), (1, 0.5), (3, 0.5), (100, 0.5), (0, 5), (10, 5)]]
    cases += [dict(x=a.tolist(), y=b.tolist(), rope=r, prior=0.5) for r in (0.0, 0.01, 0.02)]
    return cases


def _signed_rank(case: dict, seed: int) -> dict:
    from baycomp import SignedRankTest

    x, y = np.asarray(case["x"], float), np.asarray(case["y"], float)
    sample = SignedRankTest.sample(x, y, case["rope"], prior=case["prior"], nsamples=NSAMPLES,
                                   random_state=seed)
    probs = SignedRankTest(x, y, case["rope"], prior=case["prior"], nsamples=NSAMPLES,
                           random_state=seed).probs(True)
    return {**case, "random_state": seed, "nsamples": NSAMPLES,
            "probs": [float(v) for v in probs],
            "sample_mean": sample.mean(axis=0).tolist(), "first_samples": sample[:3].tolist()}


def _correlated_t() -> list[dict]:
    from baycomp import CorrelatedTTest

    rng = np.random.default_rng(7)
    a10 = rng.normal(0.80, 0.02, 10)
    b10 = a10 + rng.normal(-0.01, 0.01, 10)
    cases = [dict(x=[4, 2, 6], y=[5, 7, 3], rope=0, runs=1),
             dict(x=[4, 2, 6, 4], y=[5, 7, 3, 5], rope=0, runs=2),
             dict(x=[1.0] * 10, y=[0.0] * 10, rope=0, runs=1),
             dict(x=[1.0] * 10, y=[0.0] * 10, rope=2, runs=1),
             dict(x=a10.tolist(), y=b10.tolist(), rope=0.0, runs=1),
             dict(x=a10.tolist(), y=b10.tolist(), rope=0.005, runs=1),
             dict(x=a10.tolist(), y=b10.tolist(), rope=0.01, runs=2)]
    out = []
    for case in cases:
        x, y = np.asarray(case["x"], float), np.asarray(case["y"], float)
        mean, var, df = CorrelatedTTest.compute_statistics(x, y, case["runs"])
        probs = CorrelatedTTest.probs(x, y, case["rope"], case["runs"])
        out.append({**case, "mean": float(mean), "var": float(var), "df": int(df),
                    "probs": [float(v) for v in probs]})
    return out


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).with_name("baycomp.json")
    result = {"script": "benchmarks/anchors/run_baycomp.py",
              "versions": {p: version(p) for p in ("baycomp", "numpy", "scipy")},
              "signed_rank": [_signed_rank(c, seed) for seed, c in
                              enumerate(_signed_rank_cases(), start=11)],
              "correlated_t": _correlated_t()}
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

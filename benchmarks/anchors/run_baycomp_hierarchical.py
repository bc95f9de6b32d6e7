"""Reference numbers of baycomp's ``HierarchicalTest`` (Stan) for evaluq's tests.

Runs in baycomp's own virtual env with PyStan 3 (``bash benchmarks/anchors/setup_baycomp.sh``,
then ``pip install pystan`` in that env; Stan compiles the model once, a few minutes), never in
evaluq's; writes ``baycomp_hierarchical.json`` beside this file (or the path given), which
``tests/test_bayescomp.py`` reads. Each case stores its data (data sets x folds for the two
models), the ROPE, ``runs`` and baycomp's probabilities from 4 chains x ``nsamples`` draws.
Stan's sampler is not seeded by baycomp (``random_state`` only seeds its fill of constant
rows), so the numbers carry MCMC error. baycomp caches the Stan draws by the data (not the
ROPE): the ROPE-0 case reuses the draws of the first case.

Usage::

    python run_baycomp_hierarchical.py [OUT.json]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import numpy as np

NSAMPLES = 10_000


def _cases() -> list[dict]:
    rng = np.random.default_rng(0)
    x = rng.normal(0.8, 0.02, (8, 10))
    y = x + rng.normal(0.01, 0.01, (8, 10)) + rng.normal(0, 0.01, (8, 1))
    gen = np.random.default_rng(20261124)
    a = gen.normal(0.7, 0.03, (6, 10))
    b = a + gen.normal(0.004, 0.006, (6, 10)) + gen.normal(0, 0.004, (6, 1))
    b[2] = a[2] + 0.003                     # a data set of constant differences: baycomp's fill
    return [dict(x=x.tolist(), y=y.tolist(), rope=0.01, runs=1),
            dict(x=x.tolist(), y=y.tolist(), rope=0.0, runs=1),
            dict(x=a.tolist(), y=b.tolist(), rope=0.005, runs=2)]


def _run(case: dict) -> dict:
    from baycomp import HierarchicalTest

    x, y = np.asarray(case["x"]), np.asarray(case["y"])
    sample = HierarchicalTest.sample(x, y, case["rope"], runs=case["runs"], nsamples=NSAMPLES,
                                     chains=4, random_state=0)
    winners = np.bincount(np.argmax(sample, axis=1), minlength=3) / len(sample)
    return {**case, "nsamples": NSAMPLES, "chains": 4, "probs": winners.tolist(),
            "sample_mean": sample.mean(axis=0).tolist()}


def main(argv: list[str]) -> int:
    out = Path(argv[0]).resolve() if argv else Path(__file__).with_name(
        "baycomp_hierarchical.json")
    os.chdir(tempfile.mkdtemp())           # baycomp pickles its last sample in the cwd
    result = {"script": "benchmarks/anchors/run_baycomp_hierarchical.py",
              "versions": {p: version(p) for p in ("baycomp", "pystan", "httpstan", "numpy",
                                                   "scipy")},
              "cases": [_run(c) for c in _cases()]}
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

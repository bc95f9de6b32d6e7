"""Run BooStSa's Berg-Kirkpatrick test on .npy files and print one JSON line of results.

Runs in BooStSa's own virtual env (``benchmarks/anchors/setup_boostsa.sh``), never in
evaluq's. ``benchmarks/bench_bootstrap_test.py`` starts it as a subprocess: the wall time of
that subprocess is BooStSa's whole-process time; ``seconds_test`` printed here is the time of
``Bootstrap.test`` alone (inside the process, data already loaded).

Usage::

    python run_boostsa.py TARGETS.npy H0.npy H1.npy N_LOOPS SAMPLE_SIZE SEED
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import time
import warnings

import numpy as np


def main(argv: list[str]) -> int:
    targets, h0, h1, n_loops, sample_size, seed = argv
    from boostsa import Bootstrap

    y, p0, p1 = np.load(targets), np.load(h0), np.load(h1)
    np.random.seed(int(seed))  # noqa: NPY002 (BooStSa draws from numpy's global generator)
    boot = Bootstrap(save_results=False, save_outcomes=False)
    out = io.StringIO()
    start = time.perf_counter()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")  # pandas FutureWarnings on Series[-1]
        boot.test(y, p0, p1, n_loops=int(n_loops), sample_size=float(sample_size))
    seconds = time.perf_counter() - start
    # BooStSa reports count / n_loops per metric in its printed text
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"count sample diff (\w+) .*?\.+ (\d+)\s*/", out.getvalue())}
    print(json.dumps({"seconds_test": seconds, "counts": counts, "n_loops": int(n_loops)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

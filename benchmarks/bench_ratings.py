"""Speed of bootstrap ratings from pairwise votes: evaluq against evalica on LLMFAO (issue 33).

Usage::

    bash benchmarks/anchors/setup_evalica.sh     # once: evalica 0.4.2 in /work/peers/evalica
    PYTHONPATH=src python benchmarks/bench_ratings.py [--quick] [--skip-anchor] [--rounds N]

On LLMFAO (``tests/data/llmfao/llmfao.csv``: 8,931 crowd votes, 59 models, 124 workers, 13
prompts, 39% ties), 1,000 resamples:

* evaluq ``fit_ratings(..., ties="half", cluster="worker", interval="bootstrap")``: the cluster
  bootstrap (whole workers resampled, multinomial counts over the (pair, outcome, worker)
  cells, one batched Newton fit of every resample; the 13 prompts are too few clusters for 59
  models and are refused). Target: <= 2 s on 2 cores, >= 20x
  evalica's default (BCa) bootstrap.
* evaluq with vote (iid) resampling, the same resampling unit as evalica's, and with Davidson
  ties, beside it;
* evalica 0.4.2 ``bootstrap(bradley_terry, ...)`` (ties half a win, iid votes resampled by
  scipy.stats.bootstrap, one evalica fit per resample), its default ``BCa`` (which adds a
  jackknife: one more fit per vote, 8,931) and ``percentile``, run in its own env as a
  subprocess in the same invocation (``anchors/run_evalica.py time``; its in-process time,
  import and data loading excluded).

evaluq is timed warm (one call first, then the best of ``--rounds``, wall and CPU), evalica
once per ``--peer-rounds`` process after its own warm-up fit; the ratios are of wall times
(CPU-time ratios beside them: the machine is shared). The iid bootstrap SEs of the two
(logit scale) are compared: their median ratio should be about 1 (Monte Carlo error only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from _common import machine_line, run_process

from evaluq.ratings import fit_ratings

TARGET_SECONDS = 2.0
TARGET_RATIO = 20.0
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "llmfao" / "llmfao.csv"
EVALICA = Path(os.environ.get("EVALUQ_EVALICA_PYTHON", "/work/peers/evalica/bin/python"))
RUN_EVALICA = Path(__file__).resolve().parent / "anchors" / "run_evalica.py"
OUTCOMES = {"left": "model_a", "right": "model_b", "tie": "tie"}


def cases(votes: pd.DataFrame, n_res: int) -> dict:
    """The evaluq calls timed, by label."""
    def call(ties: Literal["davidson", "half"], cluster: str | None):
        return lambda: fit_ratings(votes, model_a="left", model_b="right", winner="winner",
                                   outcomes=OUTCOMES, ties=ties, cluster=cluster,
                                   interval="bootstrap", n_resamples=n_res, scale="logit",
                                   rng=0)

    return {"half, cluster=worker": call("half", "worker"),
            "half, iid votes": call("half", None),
            "davidson, cluster=worker": call("davidson", "worker")}


def time_evaluq(funcs: dict, rounds: int) -> tuple[dict[str, float], dict[str, float], dict]:
    """Best wall and best CPU time of each call over ``rounds``, run alternately (after one
    warm-up call each; the machine is shared: the CPU times are the steadier figures)."""
    results = {name: func() for name, func in funcs.items()}     # warm: imports, first use
    best = {name: np.inf for name in funcs}
    best_cpu = {name: np.inf for name in funcs}
    for _ in range(rounds):
        for name, func in funcs.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            results[name] = func()
            best[name] = min(best[name], time.perf_counter() - start)
            best_cpu[name] = min(best_cpu[name], time.process_time() - start_cpu)
    return best, best_cpu, results


def time_evalica(n_res: int, methods: list[str], rounds: int) -> tuple[dict | None, str]:
    """evalica's bootstrap times (best of ``rounds`` processes) and the last run's output."""
    if not EVALICA.exists():
        return None, (f"{EVALICA} does not exist: evalica is not installed here, so no figure "
                      f"is printed for it (bash benchmarks/anchors/setup_evalica.sh)")
    best: dict[str, float] = {}
    best_cpu: dict[str, float] = {}
    out: dict = {}
    for _ in range(rounds):
        _, stdout = run_process([str(EVALICA), str(RUN_EVALICA), "time", str(n_res), *methods])
        out = json.loads(stdout.strip().splitlines()[-1])
        for method, sec in out["seconds"].items():
            best[method] = min(best.get(method, np.inf), sec)
            best_cpu[method] = min(best_cpu.get(method, np.inf), out["cpu_seconds"][method])
    out["best"], out["best_cpu"] = best, best_cpu
    return out, ""


def compare_se(fit, peer: dict) -> str:
    """Median and range of evaluq's iid bootstrap SE over evalica's (logit scale)."""
    se = fit.se.to_series()
    ratios = []
    for method, sd in peer["log_sd"].items():
        r = se.reindex(list(sd)) / pd.Series(sd)
        ratios.append(f"{method}: median {r.median():.3f} (range {r.min():.2f}-{r.max():.2f})")
    return "; ".join(ratios)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="50 resamples, evalica's percentile bootstrap only (a smoke run)")
    ap.add_argument("--skip-anchor", action="store_true", help="evaluq only")
    ap.add_argument("--rounds", type=int, default=3, help="evaluq: best of this many")
    ap.add_argument("--peer-rounds", type=int, default=1, help="evalica: best of this many")
    args = ap.parse_args()
    n_res = 50 if args.quick else 1000
    methods = ["percentile"] if args.quick else ["BCa", "percentile"]
    votes = pd.read_csv(DATA, dtype=str)
    print(machine_line())
    print(f"LLMFAO: {len(votes):,} votes, {pd.concat([votes.left, votes.right]).nunique()} "
          f"models, {votes.worker.nunique()} workers, {(votes.winner == 'tie').mean():.0%} "
          f"ties; {n_res} bootstrap resamples")
    seconds, cpu, fits = time_evaluq(cases(votes, n_res), 1 if args.quick else args.rounds)
    for name, sec in seconds.items():
        print(f"evaluq fit_ratings, {name:26s} {sec:7.3f} s wall, {cpu[name]:7.3f} s CPU "
              f"(warm, best of {1 if args.quick else args.rounds})")
    main_sec = seconds["half, cluster=worker"]
    if not args.quick:
        print(f"    target <= {TARGET_SECONDS:.0f} s for the cluster bootstrap: "
              f"{'met' if main_sec <= TARGET_SECONDS else 'NOT met'} ({main_sec:.3f} s)")
    cl, iid = fits["half, cluster=worker"].se, fits["half, iid votes"].se
    print(f"    cluster-bootstrap SE / iid-bootstrap SE (ties half): median "
          f"{float((cl / iid).median()):.2f}")
    if args.skip_anchor:
        print("evalica: --skip-anchor given")
        return 0
    peer, why_not = time_evalica(n_res, methods, args.peer_rounds)
    if peer is None:
        print(f"evalica: {why_not}")
        return 0
    for method in methods:
        sec = peer["best"][method]
        ratio = sec / main_sec
        line = (f"evalica {peer['evalica']} bootstrap(bradley_terry), {method:10s} "
                f"{sec:7.2f} s wall, {peer['best_cpu'][method]:7.2f} s CPU ({peer['solver']} "
                f"solver, iid votes)   evaluq cluster bootstrap {ratio:.0f}x faster (CPU "
                f"{peer['best_cpu'][method] / cpu['half, cluster=worker']:.0f}x), iid "
                f"{sec / seconds['half, iid votes']:.0f}x")
        if method == "BCa":
            line += (f"   target >= {TARGET_RATIO:.0f}x: "
                     f"{'met' if ratio >= TARGET_RATIO else 'NOT met'}")
        print(line)
    print(f"    evaluq iid bootstrap SE / evalica bootstrap SD of log scores: "
          f"{compare_se(fits['half, iid votes'], peer)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

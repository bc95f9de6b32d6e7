"""Run reuben's ``compare-models-aggregate`` pipeline on a JSONL table; print one JSON line.

Runs in reuben's own virtual env (``benchmarks/anchors/setup_reuben.sh CHECKOUT``), never in
evaluq's. ``benchmarks/bench_leaderboard.py`` starts it as a subprocess; the wall time of the
subprocess is reuben's whole-process time, and the seconds printed here time reuben's own
pipeline steps inside the process (the same calls its CLI makes, in the same order):
reading the table, the resampling (languages bootstrapped, replication noise parametric),
the aggregates (mean, geometric mean, median) with pairwise differences, ranks and
model-to-model correlations, and the per-pair summaries.

Usage::

    python run_reuben.py DATA.jsonl N_RESAMPLES SEED
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np


def main(argv: list[str]) -> int:
    data_path, n_resamples, seed = argv
    from reuben.analysis_pipeline import (
        apply_resampling,
        compute_all_statistics,
        compute_base_statistics,
        compute_pairwise_diff_statistics,
    )
    from reuben.config import Config
    from reuben.resampling import ReplicationResamplingMethod, TaskResamplingMethod
    from reuben.utils import grab_data_and_preprocess

    config = Config(score_col="Mean", model_col="Model", task_col="Task",
                    seed_sd_col="SD (seed)", boot_sd_col="SD (boot)",
                    task_resampling_method=TaskResamplingMethod.nonparametric,
                    task_resampling_with_replacement=True,
                    replication_resampling_method=ReplicationResamplingMethod.parametric,
                    num_bootstrap_resamples=int(n_resamples))
    np.random.seed(int(seed))  # noqa: NPY002 (reuben draws from numpy's global generator)
    seconds = {}
    start = time.perf_counter()
    data, seed_sd, boot_sd, repl_sd, raw = grab_data_and_preprocess(
        data_path, config.score_col, config.model_col, config.task_col,
        config.replication_sd_col, config.seed_sd_col, config.boot_sd_col,
        config.replication_idx_col, config.seed_idx_col, config.boot_idx_col,
        standardized=False, return_raw_data=True)
    config.seed_sd_col, config.boot_sd_col, config.replication_sd_col = seed_sd, boot_sd, repl_sd
    models = raw[config.model_col].unique()
    tasks = sorted(raw[config.task_col].unique())
    seconds["read"] = time.perf_counter() - start
    start = time.perf_counter()
    means, meta = compute_base_statistics(data, raw, config)
    board = apply_resampling(means, raw, config, meta)
    seconds["resample"] = time.perf_counter() - start
    start = time.perf_counter()
    stats = compute_all_statistics(board, means, models, config)
    seconds["aggregates_pairs_ranks"] = time.perf_counter() - start
    start = time.perf_counter()
    compute_pairwise_diff_statistics(means, board, models, tasks)
    seconds["pair_summaries"] = time.perf_counter() - start
    sd = {name: np.asarray(v).tolist() for name, v in stats["agg_over_task"]["sd"].items()}
    print(json.dumps({"seconds": seconds, "models": [str(m) for m in models],
                      "aggregate_sd": sd}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

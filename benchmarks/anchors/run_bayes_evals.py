"""Reference P(A > B) from bayes_evals' paired comparison (the latent bivariate probit).

Runs in bayes_evals' own virtual env (never in evaluq's), built by
``benchmarks/anchors/setup_bayes_evals.sh`` from a checkout of github.com/sambowyer/bayes_evals
(not on the package index; its dependencies are numpy, scipy, pandas, matplotlib).

bayes_evals samples (theta_A, theta_B, rho) from the prior and reweights by the likelihood
(importance sampling, then a weighted resample), so its answer carries Monte Carlo error: each
data set is run ``REPLICATES`` times with different seeds and the JSON keeps the mean and the
SD over the replicates, beside the data (0/1 correctness, models x items) so that
``tests/test_paired_bayes.py`` recomputes evaluq's answer on the very same items.

Usage::

    /work/peers/bayes_evals/bin/python benchmarks/anchors/run_bayes_evals.py [OUT.json]
"""

from __future__ import annotations

import json
import platform
import sys
from importlib import metadata
from pathlib import Path

import numpy as np

SOURCE_COMMIT = "b9711844e00e9664258de321966ecd258a7273d6"
"""The bayes_evals commit installed by setup_bayes_evals.sh for the JSON in the repository."""
NUM_SAMPLES = 400_000
REPLICATES = 5
# (name, items, accuracies of the three models, share of items every model gets right, seed)
DATASETS = [
    ("30 items, correlated errors", 30, (0.9, 0.8, 0.7), 0.5, 1),
    ("30 items, near 95%", 30, (0.97, 0.93, 0.9), 0.6, 2),
    ("60 items, independent errors", 60, (0.75, 0.7, 0.6), 0.0, 3),
]


def make_data(n_items: int, acc: tuple[float, ...], shared: float, seed: int) -> np.ndarray:
    """0/1 correctness (models x items): items 'everyone gets right' with prob. ``shared``,
    the rest independent with each model's accuracy rescaled to keep its overall rate."""
    rng = np.random.default_rng(seed)
    easy = rng.random(n_items) < shared
    p = (np.asarray(acc)[:, None] - shared) / (1 - shared)
    return ((rng.random((len(acc), n_items)) < np.clip(p, 0, 1)) | easy).astype(int)


def main(out: str) -> None:
    import pandas as pd
    from bayes_evals import paired_comparisons

    runs = []
    for name, n_items, acc, shared, seed in DATASETS:
        data = make_data(n_items, acc, shared, seed)
        df = pd.DataFrame(data.T, columns=[f"m{i}" for i in range(len(acc))])
        reps = []
        for r in range(REPLICATES):
            np.random.seed(1000 * seed + r)  # noqa: NPY002 (bayes_evals uses the global state)
            reps.append(paired_comparisons(df, num_samples=NUM_SAMPLES).to_numpy())
        reps_arr = np.array(reps)
        runs.append({"name": name, "correct": data.tolist(), "models": list(df.columns),
                     "prob_better_mean": np.nan_to_num(reps_arr.mean(0), nan=-1).tolist(),
                     "prob_better_sd": np.nan_to_num(reps_arr.std(0, ddof=1), nan=-1).tolist()})
        print(name, np.round(reps_arr.mean(0), 4).tolist(), file=sys.stderr)
    record = {"peer": "bayes_evals", "function": "bayes_evals.paired_comparisons",
              "version": metadata.version("bayes_evals"), "source_commit": SOURCE_COMMIT,
              "python": platform.python_version(), "numpy": np.__version__,
              "scipy": metadata.version("scipy"), "num_samples": NUM_SAMPLES,
              "replicates": REPLICATES, "diagonal": "-1 stands for NaN (a model with itself)",
              "datasets": runs}
    Path(out).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         str(Path(__file__).with_name("bayes_evals_paired.json")))

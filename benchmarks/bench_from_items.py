"""from_items at the issue's scale: 10^7 per-item rows from parquet (issue 18).

A table of 20 models x 10^5 items x 5 epochs (one row per model, item and epoch: model as a
string, item as an integer id, epoch, a 0/1 score; items in clusters of 4) is written to a
parquet file once. Each measurement runs in a fresh process, so the peak RSS (VmHWM) is that
of the step alone (the interpreter and imports included); the wall time and the process's CPU
time (user + system: on a shared machine the wall time also holds the waits for a core) are
printed, both including ``import evaluq`` / ``import pandas``:

* baseline: ``pd.read_parquet`` and a pandas ``groupby(["model", "epoch"]).mean()`` (the
  scores alone, no resampling and no checks);
* ``eq.from_items(path, ..., n_boot=1000)``: read, validate, pivot, 1000 paired bootstrap
  replicates (one count matrix shared by all models and epochs);
* the same with ``cluster=`` (1000 cluster-bootstrap replicates over 25 000 clusters);
* ``out=`` a zarr store with the items split into 5 tasks (a ``task`` column): the parquet
  file is split into a scratch file per task, then read one task at a time, so the peak is
  that of one task (the tasks have equal
  sizes, so the mean of the cube's scores is the same as the others').

The target: <= 10 s and <= 2 GB each. ``--quick`` runs the same steps on 20 x 1000 x 5 rows
(the CI smoke size); ``--items`` sets another size.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import evaluq_env, machine_line

N_MODELS, N_EPOCHS, N_BOOT, CLUSTER_SIZE, N_TASKS = 20, 5, 1000, 4, 5
TARGET_SECONDS, TARGET_GB = 10.0, 2.0

_STEP = r"""
import sys, time
from pathlib import Path
start = time.perf_counter()
path, step, n_boot = sys.argv[1], sys.argv[2], int(sys.argv[3])
if step == "baseline":
    import pandas as pd
    df = pd.read_parquet(path)
    out = df.groupby(["model", "epoch"]).correct.mean()
    summary = f"{float(out.mean()):.6f}"
elif step == "stream":
    import tempfile, os
    import evaluq as eq
    store = os.path.join(tempfile.mkdtemp(), "cube.zarr")
    cube = eq.from_items(path, model="model", item="item", score="correct", seed="epoch",
                         language="task", n_boot=n_boot, out=store)
    summary = f"{float(cube.score.mean()):.6f}"
else:
    import evaluq as eq
    cube = eq.from_items(path, model="model", item="item", score="correct", seed="epoch",
                         cluster="passage" if step == "clustered" else None, n_boot=n_boot)
    summary = f"{float(cube.score.mean()):.6f}"
seconds = time.perf_counter() - start
import os
cpu = sum(os.times()[:2])
peak = 0.0
for line in Path("/proc/self/status").read_text().splitlines():
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) / 1024
print(f"{seconds:.3f} {cpu:.3f} {peak:.1f} {summary}")
"""


def _write_table(path: Path, n_items: int, seed: int = 0) -> int:
    """The per-item table as parquet; returns its number of rows."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    ability = np.linspace(0.4, 0.8, N_MODELS)
    difficulty = rng.normal(0.0, 1.0, n_items)
    p = 1.0 / (1.0 + np.exp(-(np.log(ability / (1 - ability))[:, None, None]
                               - difficulty[None, None, :])))
    correct = (rng.random((N_MODELS, N_EPOCHS, n_items)) < p).astype(np.float64)
    model = np.repeat(np.array([f"model_{m:02d}" for m in range(N_MODELS)]), N_EPOCHS * n_items)
    epoch = np.tile(np.repeat(np.arange(N_EPOCHS), n_items), N_MODELS)
    item = np.tile(np.arange(n_items), N_MODELS * N_EPOCHS)
    df = pd.DataFrame({"model": model, "item": item, "epoch": epoch,
                       "passage": item // CLUSTER_SIZE, "task": item % N_TASKS,
                       "correct": correct.ravel()})
    df = df.sample(frac=1.0, random_state=seed)     # harness logs are not sorted
    df.to_parquet(path, index=False)
    return len(df)


def _run_step(path: Path, step: str, n_boot: int) -> tuple[float, float, float, str]:
    done = subprocess.run([sys.executable, "-c", _STEP, str(path), step, str(n_boot)],
                          env=evaluq_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"step {step} failed:\n{done.stderr[-3000:]}")
    seconds, cpu, peak, summary = done.stdout.split()
    return float(seconds), float(cpu), float(peak), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 x 1000 x 5 rows (smoke)")
    parser.add_argument("--items", type=int, default=100_000, help="items per model")
    args = parser.parse_args()
    n_items = 1000 if args.quick else args.items
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "items.parquet"
        rows = _write_table(path, n_items)
        print(f"table: {N_MODELS} models x {n_items} items x {N_EPOCHS} epochs = {rows:,} rows, "
              f"parquet {path.stat().st_size / 2**20:.1f} MiB; n_boot = {N_BOOT}")
        results = {}
        for step in ("baseline", "from_items", "clustered", "stream"):
            seconds, cpu, peak, summary = _run_step(path, step, N_BOOT)
            results[step] = (seconds, cpu, peak, summary)
            label = {"baseline": "baseline: pandas read_parquet + groupby mean",
                     "from_items": "eq.from_items (items bootstrap)",
                     "clustered": "eq.from_items (cluster bootstrap)",
                     "stream": "eq.from_items(out=zarr), 5 tasks, by task"}[step]
            print(f"{label:46s} wall {seconds:6.2f} s  CPU {cpu:6.2f} s  peak RSS "
                  f"{peak / 1024:5.2f} GiB  (mean score {summary})")
        if results["baseline"][3] != results["from_items"][3]:
            raise SystemExit("the mean scores of the baseline and from_items differ")
        for step in ("from_items", "clustered", "stream"):
            seconds, cpu, peak, _ = results[step]
            ok = seconds <= TARGET_SECONDS and peak / 1024 <= TARGET_GB
            print(f"{step}: {seconds / results['baseline'][0]:.1f}x the baseline's wall time, "
                  f"{cpu / results['baseline'][1]:.1f}x its CPU time; target "
                  f"<= {TARGET_SECONDS:g} s and <= {TARGET_GB:g} GB: "
                  f"{'met' if ok else 'NOT met'}{' (quick size)' if args.quick else ''}")


if __name__ == "__main__":
    main()

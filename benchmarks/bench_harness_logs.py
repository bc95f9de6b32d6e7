"""Benchmark: reading Inspect AI logs into a per-item table (evaluq.io.read_inspect_logs).

Inspect runs a task offline with its mock model (3 models x N questions x 2 epochs, one
``.eval`` log per model), then the script times, alternately on the same logs:

* ``read_inspect_logs(folder)``: the scores alone (Inspect's sample summaries);
* ``read_inspect_logs(folder, metadata=["passage"])``: with a sample metadata column (the
  samples themselves, without messages, events, store, attachments, output);
* baselines from Inspect itself: ``inspect_ai.analysis.samples_df`` (Inspect's own tidy
  sample table, one row per sample and epoch, its default columns) and ``read_eval_log`` of
  every log with its samples (the floor of any reader through Inspect's API).

It prints the best wall and CPU times and the CPU time per sample. The machine is shared:
the CPU times are the steadier figures.

Run from the repository root:  PYTHONPATH=src python benchmarks/bench_harness_logs.py [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import evaluq as eq


def make_logs(folder: Path, n_items: int, epochs: int) -> int:
    """Three mock models on ``n_items`` questions (four per passage); the samples written."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    samples = [Sample(input=f"question {i}", target="yes", id=i,
                      metadata={"passage": f"P{i // 4}"}) for i in range(n_items)]

    def mock(name: str, every: int):
        def answer(messages, tools, tool_choice, config):
            i = int(messages[-1].text.split()[-1])
            return ModelOutput.from_content(model=name, content="yes" if i % every else "no"
                                            ).model_copy(update={"usage": ModelUsage(
                                                input_tokens=3, output_tokens=1,
                                                total_tokens=4)})
        return get_model(f"mockllm/{name}", custom_outputs=answer)

    task = Task(dataset=MemoryDataset(samples), solver=generate(), scorer=match(),
                epochs=epochs, name="bench")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logs = inspect_eval(task, model=[mock("a", 5), mock("b", 3), mock("c", 2)],
                            log_dir=str(folder), display="none", log_realtime=False)
    return sum(len(log.samples or []) for log in logs)


def best(fn, rounds: int) -> tuple[float, float]:
    """Best wall and best CPU time over ``rounds`` calls."""
    wall, cpu = float("inf"), float("inf")
    for _ in range(rounds):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (smoke test)")
    args = parser.parse_args()
    n_items, rounds = (40, 1) if args.quick else (1000, 3)
    from inspect_ai import __version__ as inspect_version
    from inspect_ai.analysis import samples_df
    from inspect_ai.log import list_eval_logs, read_eval_log

    folder = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    n = make_logs(folder, n_items, epochs=2)
    print(f"inspect_ai {inspect_version}: {n} samples (3 models x {n_items} questions x 2 "
          f"epochs) written in {time.perf_counter() - start:.1f} s")
    files = [info.name for info in list_eval_logs(str(folder))]
    runs = {
        "read_inspect_logs (scores)": lambda: eq.read_inspect_logs(folder),
        "read_inspect_logs (+ metadata)": lambda: eq.read_inspect_logs(folder,
                                                                       metadata="passage"),
        "baseline: inspect samples_df": lambda: samples_df(files, quiet=True),
        "baseline: inspect read_eval_log": lambda: [read_eval_log(f) for f in files],
    }
    for fn in runs.values():      # warm up (imports, caches)
        fn()
    table = eq.read_inspect_logs(folder, metadata="passage")
    assert len(table) == n, (len(table), n)
    for name, fn in runs.items():
        wall, cpu = best(fn, rounds)
        print(f"{name:34s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  "
              f"{1e3 * cpu / n:6.3f} ms cpu per sample")


if __name__ == "__main__":
    main()

"""Benchmark: ``import evaluq`` and ``evaluq --help`` wall time, in fresh interpreters.

Targets (issue 9 item 9): ``import evaluq`` costs little more than importing numpy, pandas,
xarray and scipy.stats; ``evaluq --help`` answers in under 1 s. The baseline
(``import numpy, pandas, xarray, scipy.stats``) is measured in the same run, alternating with
the evaluq commands so that machine load hits both alike. Each figure is the median of
``--runs`` fresh processes (wall time of the whole process, interpreter start-up included).

Rows:
- ``python -c pass``: the interpreter alone;
- baseline: numpy + pandas + xarray + scipy.stats;
- ``import evaluq``: the package (its public names load on first use);
- ``import evaluq`` + every name in ``__all__``: the whole public API loaded;
- ``evaluq --help``: the console script's code path (``from evaluq.cli import main``).

Run: ``python benchmarks/bench_import.py [--runs 7]`` (uses this checkout's ``src``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")

COMMANDS: dict[str, list[str]] = {
    "python -c pass": ["-c", "pass"],
    "baseline: numpy, pandas, xarray, scipy.stats": [
        "-c", "import numpy, pandas, xarray, scipy.stats"],
    "import evaluq": ["-c", "import evaluq"],
    "import evaluq + whole __all__": [
        "-c", "import evaluq\nfor n in evaluq.__all__: getattr(evaluq, n)"],
    "evaluq --help": ["-c", "import sys; from evaluq.cli import main; sys.exit(main())", "--help"],
}


def _wall(args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": SRC}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(runs: int) -> dict[str, float]:
    """Median wall time per command; the commands alternate within each round."""
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for args in COMMANDS.values():  # warm the file-system cache once
        _wall(args)
    for _ in range(runs):
        for name, args in COMMANDS.items():
            times[name].append(_wall(args))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    medians = measure(runs)
    base = medians["baseline: numpy, pandas, xarray, scipy.stats"]
    print(f"median of {runs} fresh processes ({sys.executable}, evaluq from {SRC})")
    for name, t in medians.items():
        print(f"  {name:<46} {t:7.3f} s   {t / base:5.2f} x baseline")
    help_t = medians["evaluq --help"]
    full_extra = medians["import evaluq + whole __all__"] - base
    print(f"evaluq --help: {help_t:.3f} s (target < 1 s: {'met' if help_t < 1 else 'NOT met'})")
    print(f"whole public API beyond the baseline: {full_extra * 1000:+.0f} ms")


if __name__ == "__main__":
    main()

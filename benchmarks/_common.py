"""Helpers shared by the benchmarks: timing, peak memory, subprocess runs, anchors' envs.

Not a benchmark itself (the leading underscore keeps the smoke test from running it).
"""

from __future__ import annotations

import os
import subprocess
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ANCHORS = Path(__file__).resolve().parent / "anchors"


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def peak_mib(fn: Callable[[], Any]) -> float:
    """Peak memory traced by tracemalloc (numpy's buffers included) while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def evaluq_env() -> dict[str, str]:
    """The environment for a subprocess that imports this checkout's evaluq."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    return env


def run_process(cmd: Sequence[str], env: dict[str, str] | None = None
                ) -> tuple[float, str]:
    """Wall time of a whole process (start, imports, work, exit) and its stdout.

    Raises ``RuntimeError`` with the process's stderr if it fails.
    """
    start = time.perf_counter()
    done = subprocess.run(list(cmd), env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed ({done.returncode}):\n"
                           f"{done.stderr[-2000:]}")
    return seconds, done.stdout


def anchor_python(default_venv: str, given: str | None, setup: str) -> tuple[Path | None, str]:
    """The python of an anchor's virtual env, or ``None`` and why it is not there."""
    path = Path(given) if given else ANCHORS / default_venv / "bin" / "python"
    if path.exists():
        return path, ""
    return None, (f"{path} does not exist: the anchor is not installed here, so no figure is "
                  f"printed for it (install it with `bash {setup}`)")


def machine_line() -> str:
    """CPU model, core count and the load average now: figures from a shared machine are
    only comparable at a similar load."""
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"machine: {model}, {os.cpu_count()} cores, load average {load:.2f}"


def refit_item_model(comp: Any, data: Any, priors: dict[str, float] | None, seed: int,
                     draws: int, tune: int) -> Any:
    """nutpie draws (2 chains) of a compiled marginal 1PL item model refitted on ``data``
    (``_model.model_inputs`` of the same shape; the sampler's warnings silenced): the
    calibration studies compile once and refit per data set."""
    import warnings

    import nutpie

    from evaluq.item_model._marginal import TARGET_ACCEPT
    from evaluq.item_model._model import model_inputs, resolve_priors

    known = {var.name for var in comp.shared_var_keys}
    inputs = {k: v for k, v in model_inputs(data, resolve_priors(data, priors)).items()
              if k in known}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nutpie.sample(comp.with_data(**inputs), draws=draws, tune=tune, chains=2,
                             cores=2, seed=seed, progress_bar=False,
                             target_accept=TARGET_ACCEPT)

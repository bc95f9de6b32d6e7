"""Benchmark: the cold start of a new process fitting the hierarchical model (issue 17, item 7).

Every ``evaluq report --bayes`` is a new process. nutpie's compiled log-density is now cached
on disk (``evaluq._nutpie_cache``), so a process after the first loads it instead of compiling
it. Targets (2 cores): a second process fitting the same model shape, total fit <= 5 s;
``evaluq report --bayes`` on a 3 x 16 summary file, in a process after the first, <= 10 s.

Each figure is a fresh subprocess, run back to back in this run, printed beside its baseline:

- first ever: the evaluq cache and PyTensor's compile directory both emptied (temp dirs);
- baseline: a new process with PyTensor's kernels cached but an empty evaluq cache, which is
  what every new process paid before the cache (nutpie's cfuncs compiled again);
- second process: the same model shape again (the evaluq cache hit);
- the process after the first ever: draws as the first ever's. (PyTensor compiles with
  fastmath; its kernels, compiled fresh into nutpie's cfuncs, round differently from the
  same kernels loaded from PyTensor's cache, so the first process ever gave other draws than
  every later one before evaluq's cache; now the later ones load what the first compiled);
- the same for the independent model, and the whole ``evaluq report --bayes`` process.

Per fit: the whole process, imports, the fit's total wall time and its CPU seconds (every
thread: less sensitive than the wall time to the other jobs of a shared machine; nutpie's
chains run in parallel), compile (PyMC's and nutpie's imports included; of which cfuncs:
numba compiling or loading nutpie's two cfuncs), sampling, the cache's answer, and a hash of the
posterior draws (same rng, so the hashes must agree: the cache does not change a number).
The cubes are built from shared per-item resamples (``tests/hierarchical/paired_sim.py``), 6 x
61 x 10, B = 200, rho 0.5, the fit's defaults.

Run: ``python benchmarks/bench_cold_start.py`` (``--quick``: a 3 x 8 x 3 paired cube with few
draws, a miss and a hit only).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHAPES = {"full": (6, 61, 10, 200), "quick": (3, 8, 3, 50)}


def child(kind: str, size: str) -> None:
    """One fresh process: build the cube, fit, print the timings as JSON."""
    start = time.perf_counter()
    sys.path.insert(0, str(ROOT / "tests" / "hierarchical"))
    import numpy as np
    from paired_sim import Setting, shared_cube

    import evaluq as eq

    imported = time.perf_counter() - start
    n_m, n_l, n_s, n_b = SHAPES[size]
    cube = shared_cube(np.random.default_rng(5), Setting(n_models=n_m, n_languages=n_l,
                                                         n_seeds=n_s, n_boot=n_b, rho=0.5))[0]
    kwargs: dict[str, Any] = {} if size == "full" else {"draws": 200, "tune": 200, "chains": 2}
    warnings.simplefilter("ignore")
    begin, cpu = time.perf_counter(), _cpu()
    fit = eq.fit_hierarchical(cube, test_set_errors=kind, rng=0, **kwargs)
    total, cpu = time.perf_counter() - begin, _cpu() - cpu
    digest = hashlib.sha256(np.ascontiguousarray(fit.posterior["mu"].values).tobytes())
    print(json.dumps({"import": imported, "fit": total, "cpu": cpu,
                      "compile": fit.config["compile_seconds"],
                      "cfuncs": fit.config.get("compile_cfunc_seconds", float("nan")),
                      "sampling": fit.config["sampling_seconds"],
                      "cache": fit.config.get("compile_cache"),
                      "digest": digest.hexdigest()[:12]}))


def _cpu() -> float:
    """CPU seconds of this process so far (every thread; user + system)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _env(cache: Path, compiledir: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    env["EVALUQ_CACHE_DIR"] = str(cache)
    env.pop("PYTHONWARNINGS", None)
    if compiledir is not None:
        env["PYTENSOR_FLAGS"] = ",".join(filter(None, [env.get("PYTENSOR_FLAGS"),
                                                       f"base_compiledir={compiledir}"]))
    return env


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run_fit(kind: str, size: str, env: dict[str, str]) -> dict[str, Any]:
    """A fresh process fitting ``kind``; its timings plus the whole process's wall time."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--child", kind, "--size", size],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["process"] = wall
    return out


def show(label: str, res: dict[str, Any], baseline: dict[str, Any] | None = None,
         target: float | None = None) -> None:
    text = (f"{label:44s} process {res['process']:6.2f} s  import {res['import']:5.2f}  fit "
            f"{res['fit']:6.2f} [cpu {res['cpu']:6.2f}] (compile {res['compile']:6.2f}, "
            f"cfuncs {res['cfuncs']:6.2f}, "
            f"sampling {res['sampling']:5.2f})  cache {res['cache']:4s}  draws "
            f"{res['digest']}  load {_load()}")
    if baseline is not None:
        same = "identical" if baseline["digest"] == res["digest"] else "DIFFERENT"
        text += (f"\n{'':44s} baseline fit {baseline['fit']:6.2f} s (compile "
                 f"{baseline['compile']:6.2f}): {baseline['fit'] / res['fit']:.1f}x faster; "
                 f"draws {same}")
    if target is not None:
        text += (f"  [target fit <= {target:g} s: "
                 f"{'met' if res['fit'] <= target else 'MISSED'}]")
    print(text, flush=True)


def _summary_file(folder: Path) -> Path:
    import numpy as np

    rows = ["model,language,mean,sd_boot,sd_seed,n"]
    gen = np.random.default_rng(0)
    rows += [f"m{m},l{lang},{gen.normal(0.5 + 0.1 * m, 0.1):.4f},0.02,0.01,3"
             for m in range(3) for lang in range(16)]
    path = folder / "summary.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def run_report(folder: Path, env: dict[str, str], run: int) -> float:
    """Wall time of a whole ``evaluq report --bayes`` process on a 3 x 16 summary file."""
    path = _summary_file(folder)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "evaluq.cli", "report", str(path), "--mean",
                           "mean", "--sd-seed", "sd_seed", "--sd-boot", "sd_boot",
                           "--n-seeds", "n", "--bayes", "--quiet", "--out",
                           str(folder / f"out{run}")],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small cube, a miss and a hit")
    parser.add_argument("--child", choices=("paired", "independent"), help=argparse.SUPPRESS)
    parser.add_argument("--size", choices=tuple(SHAPES), default="full", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.size)
        return
    size = "quick" if args.quick else "full"
    print(f"cold start of a new process, {' x '.join(map(str, SHAPES[size][:3]))} (B="
          f"{SHAPES[size][3]}), fit defaults{' (quick: 200 + 200 draws, 2 chains)' * args.quick}"
          f"; load average {_load()} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if not args.quick:
            env = _env(base / "first", base / "pytensor")
            first = run_fit("paired", size, env)
            show("paired, first ever (both caches empty)", first)
            show("paired, the process after the first ever", run_fit("paired", size, env),
                 first)
        kinds = ("paired",) if args.quick else ("paired", "independent")
        for kind in kinds:
            env = _env(base / f"cache-{kind}")
            miss = run_fit(kind, size, env)
            show(f"{kind}, new process, evaluq cache empty", miss)
            hit = run_fit(kind, size, env)
            show(f"{kind}, second process (cached)", hit, miss,
                 5.0 if kind == "paired" and not args.quick else None)
        if args.quick:
            return
        env = _env(base / "cache-report")
        walls = [run_report(base, env, run) for run in range(2)]
        print(f"{'evaluq report --bayes, 3 x 16 summary':44s} first process {walls[0]:6.2f} s "
              f"(baseline), second {walls[1]:6.2f} s: {walls[0] / walls[1]:.1f}x faster  "
              f"[target <= 10 s: {'met' if walls[1] <= 10 else 'MISSED'}]  load {_load()}",
              flush=True)


if __name__ == "__main__":
    main()

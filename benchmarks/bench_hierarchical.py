"""Benchmark: fit_hierarchical with paired test-set errors beside the independent model.

Issue 17's targets (2 cores): the paired fit at 50 x 500 x 5 cold <= 30 s and warm <= 10 s;
at 6 x 61 x 10 warm <= 0.5 s and no more than 2x the independent model's; a second process
fitting the same shape <= 5 s in total; ``evaluq report --bayes`` on a 3 x 16 summary file in
a process after the first <= 10 s. Every paired figure is printed beside the independent
model's, measured in the same run. Also printed: the time of one log-density gradient (the
fused kernel the model samples with beside PyTensor's graph of the same log-density, at
k = 0, 1 and 3) and the mean leapfrog steps per draw (the sampler's geometry).

``--no-cache`` runs the whole benchmark in a fresh process whose compilation caches (numba's,
PyTensor's and evaluq's nutpie cache) are empty temporary directories: its cold fits are
the first fits ever on the machine.

The cubes are built from shared per-item resamples (``tests/hierarchical/paired_sim.py``),
rho = 0.5. The first fit of a shape in the process compiles the model (cold); the second
refits it on a new cube of the same shape (warm).

Run: ``python benchmarks/bench_hierarchical.py`` (``--quick``: the small shape only).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import evaluq as eq
from evaluq.hierarchical import ConvergenceWarning

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hierarchical"))
from paired_sim import Setting, shared_cube  # noqa: E402

CACHE_VARIABLES = ("NUMBA_CACHE_DIR", "EVALUQ_CACHE_DIR", "PYTENSOR_FLAGS")
SIZES = ((6, 61, 10, 200, None, 0.5), (50, 500, 5, 100, 30.0, 10.0))


def _fit(cube: Any, errors: str, rng: int) -> tuple[float, Any, str]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = eq.fit_hierarchical(cube, test_set_errors=errors, rng=rng)
    wall = time.perf_counter() - start
    diag = fit.diagnostics()
    steps = float(fit.idata["sample_stats"]["n_steps"].mean()) \
        if "n_steps" in fit.idata["sample_stats"] else float("nan")
    return wall, fit, (f"compile {fit.config['compile_seconds']:6.2f} s  sampling "
                       f"{fit.config['sampling_seconds']:6.2f} s  k={fit.data.n_factors}  "
                       f"leapfrog/draw {steps:5.1f}  divergences {diag.attrs['divergences']}  "
                       f"max R-hat {diag['r_hat'].max():.4f}  min ESS bulk "
                       f"{diag['ess_bulk'].min():.0f}")


def fits(sizes: tuple[tuple[Any, ...], ...], seed: int = 0) -> None:
    """Cold and warm fits, paired and independent, per shape."""
    for n_m, n_l, n_s, n_b, cold_target, warm_target in sizes:
        setting = Setting(n_models=n_m, n_languages=n_l, n_seeds=n_s, n_boot=n_b, rho=0.5)
        label = f"{n_m} x {n_l} x {n_s} (B={n_b})"
        gen = np.random.default_rng(seed)
        cubes = [shared_cube(gen, setting)[0] for _ in range(2)]
        walls = {}
        for errors in ("independent", "paired"):
            for kind, cube in zip(("cold", "warm"), cubes, strict=True):
                wall, _, text = _fit(cube, errors, rng=1)
                walls[errors, kind] = wall
                target = cold_target if kind == "cold" else warm_target
                flag = "" if target is None or errors != "paired" else \
                    f"  [target <= {target:g} s: {'ok' if wall <= target else 'OVER'}]"
                print(f"{label:24s} {errors:11s} {kind}: wall {wall:6.2f} s  {text}{flag}",
                      flush=True)
        ratio = walls["paired", "warm"] / walls["independent", "warm"]
        print(f"{label:24s} warm paired / independent = {ratio:.2f} (target <= 2)", flush=True)


def gradient_times(n_models: int = 50, n_languages: int = 500, repeat: int = 200) -> None:
    """Seconds per log-density + gradient evaluation (numba): the fused kernel the model
    samples with (``_fused``) beside PyTensor's own graph of the same log-density (the
    reference, ``_model.lowrank_marginal_loglik``), independent (k = 0) and paired."""
    import pytensor
    import pytensor.tensor as pt

    from evaluq.hierarchical import cube_statistics
    from evaluq.hierarchical._fused import fused_marginal_loglik
    from evaluq.hierarchical._model import lowrank_marginal_loglik

    setting = Setting(n_models=n_models, n_languages=n_languages, n_seeds=2, n_boot=60,
                      n_items=20, rho=0.5)
    data = cube_statistics(shared_cube(np.random.default_rng(0), setting)[0], "independent")
    arr = data.arrays()
    rng = np.random.default_rng(1)
    mu, tsq, sv, t2 = pt.dvector("mu"), pt.dvector("tsq"), pt.dvector("sv"), pt.dscalar("t2")
    point = [np.zeros(n_models), np.full(n_models, 0.5), np.full(n_models, 0.5),
             np.asarray(1.0)]
    d = tsq[:, None] + sv[:, None] * arr["inv_s"] + arr["v_fixed"]
    for k in (0, 1, 3):
        load = rng.normal(size=(n_models, k, n_languages)) * 0.3
        graphs = {"fused": fused_marginal_loglik(arr["ybar"], arr["weight"], arr["inv_s"],
                                                 arr["v_fixed"], mu, tsq, sv, t2,
                                                 load if k else None),
                  "pytensor": lowrank_marginal_loglik(arr["ybar"], arr["weight"], mu, d, t2,
                                                      pt.as_tensor(load.transpose(2, 0, 1)),
                                                      k)}
        ms = {}
        for name, logp in graphs.items():
            wrt = [mu, tsq, sv, t2]
            fn = pytensor.function(wrt, [logp, *pytensor.grad(logp, wrt)], mode="NUMBA")
            fn(*point)
            start = time.perf_counter()
            for _ in range(repeat):
                fn(*point)
            ms[name] = (time.perf_counter() - start) / repeat * 1e3
        label = "independent" if k == 0 else f"paired k={k}"
        print(f"log-density + gradient at {n_models} x {n_languages}, {label:12s}: fused "
              f"{ms['fused']:7.3f} ms, PyTensor's graph {ms['pytensor']:7.3f} ms "
              f"({ms['pytensor'] / ms['fused']:.1f}x)", flush=True)


def second_process(quick: bool) -> None:
    """A new process fitting the same shape (the cross-process cold start) and the report."""
    code = ("import time, warnings; t0 = time.perf_counter(); import sys; "
            f"sys.path.insert(0, {str(ROOT / 'tests' / 'hierarchical')!r}); "
            "import numpy as np, evaluq as eq; from paired_sim import Setting, shared_cube; "
            "cube = shared_cube(np.random.default_rng(5), Setting(n_models=6, n_languages=61, "
            "n_seeds=10, n_boot=200))[0]; warnings.simplefilter('ignore'); "
            "t1 = time.perf_counter(); fit = eq.fit_hierarchical(cube, rng=0); "
            "print(f'{time.perf_counter() - t1:.2f} {t1 - t0:.2f} "
            "{fit.config[\"compile_seconds\"]:.2f}')")
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin",
           **{k: os.environ[k] for k in CACHE_VARIABLES if k in os.environ}}
    for run in range(1 if quick else 2):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, check=True).stdout.split()
        print(f"new process {run + 1}, paired fit 6 x 61 x 10: fit {out[0]} s (compile "
              f"{out[2]} s), imports and cube {out[1]} s  [target <= 5 s]", flush=True)
    if quick:
        return
    rows = ["model,language,mean,sd_boot,sd_seed,n"]
    gen = np.random.default_rng(0)
    rows += [f"m{m},l{lang},{gen.normal(0.5 + 0.1 * m, 0.1):.4f},0.02,0.01,3"
             for m in range(3) for lang in range(16)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "summary.csv"
        path.write_text("\n".join(rows) + "\n")
        for run in range(2):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "evaluq.cli", "report", str(path),
                                   "--mean", "mean", "--sd-seed", "sd_seed", "--sd-boot",
                                   "sd_boot", "--n-seeds", "n", "--bayes", "--quiet", "--out",
                                   str(Path(tmp) / "o")],
                                  capture_output=True, text=True, env=env, check=False)
            if done.returncode:
                print(done.stderr[-2000:])
            print(f"evaluq report --bayes, 3 x 16 summary, process {run + 1}: "
                  f"{time.perf_counter() - start:6.2f} s  [target <= 10 s after the first]",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small shape only")
    parser.add_argument("--no-cache", action="store_true",
                        help="rerun in a process whose compilation caches are empty")
    args = parser.parse_args()
    if args.no_cache:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, **dict(zip(CACHE_VARIABLES, (
                f"{tmp}/numba", f"{tmp}/evaluq", f"base_compiledir={tmp}/pytensor"),
                strict=True))}
            argv = [sys.executable, __file__, *(["--quick"] if args.quick else [])]
            print(f"empty compilation caches under {tmp}", flush=True)
            sys.exit(subprocess.run(argv, env=env, check=False).returncode)
    print(f"sampler: {'nutpie' if eq.hierarchical.nutpie_available() else 'pymc'}; fit "
          "defaults (draws=1000, tune=1000, chains=4); load average "
          f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    fits(SIZES[:1] if args.quick else SIZES)
    if not args.quick:
        gradient_times()
    second_process(args.quick)


if __name__ == "__main__":
    main()

"""Benchmark of evaluq.bootstrap_test against BooStSa, run alternately in the same run.

Run from the repository root::

    bash benchmarks/anchors/setup_boostsa.sh          # once: BooStSa in its own venv
    PYTHONPATH=src python benchmarks/bench_bootstrap_test.py [--quick] [--boostsa-python PY]

Case A (issue 13's): 100,000 binary items, B = 1000 resamples, sample_size 0.5, BooStSa's four
metrics (F1, accuracy, precision, recall; macro).

* Whole process: ``evaluq test y.npy h0.npy h1.npy`` against BooStSa's
  ``Bootstrap().test`` started as a script in its own env (``anchors/run_boostsa.py``), each
  a fresh Python process reading the same ``.npy`` files, run alternately. Targets:
  evaluq <= 1.5 s and >= 20x BooStSa. The breakdown (interpreter start, ``import
  evaluq.cli``, the rest) shows what dominates.
* Inside the process: ``eq.bootstrap_test`` against ``Bootstrap.test`` (timed inside
  BooStSa's process) and a naive numpy loop over resamples (timed here).

Case B: the paired test on 10-class hard labels, 10^6 items x 10^4 resamples (target
<= 1.5 s), beside its floor: the ``10^4`` multinomial draws over the same cells alone.
Case B2: 10^6 binary items x 10^4 resamples (paired and Berg-Kirkpatrick, target < 5 s).
Case C: 100,000 soft items (3 classes), B = 1000 (the per-item engine).
Case D: case B's items as dask arrays in chunks of 10^5 (cells counted per chunk), B = 1000,
beside the same test in memory.
Case E: soft labels (3 classes) on dask, BooStSa's four soft metrics (entropy correlation's
centring is a global step run once on the chunks' entropies), one run and 3 crossed seeds,
beside the same tests in memory.

Where BooStSa is not installed the benchmark says so and prints no figure for it.
``--quick`` shrinks every case to a smoke run of a few seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import ANCHORS, anchor_python, evaluq_env, machine_line, peak_mib, run_process, timed

import evaluq as eq

METRICS = ("f1", "accuracy", "precision", "recall")
BOOSTSA_NAMES = {"f1": "f1", "accuracy": "acc", "precision": "prec", "recall": "rec"}
TARGET_WHOLE_S, TARGET_RATIO, TARGET_PAIRED_S = 1.5, 20.0, 1.5
EVALUQ_CLI = "import sys; from evaluq.cli import main; sys.exit(main())"


def data(n: int, seed: int = 0, k: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Targets and two systems (80% and 81% right; a wrong answer is another class)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    h0 = np.where(rng.random(n) < 0.80, y, (y + rng.integers(1, k, n)) % k)
    h1 = np.where(rng.random(n) < 0.81, y, (y + rng.integers(1, k, n)) % k)
    return y, h0, h1


def naive(y: np.ndarray, h0: np.ndarray, h1: np.ndarray, n_resamples: int,
          sample_size: float, seed: int) -> np.ndarray:
    """The Berg-Kirkpatrick test as usually written: one numpy evaluation per resample."""
    rng = np.random.default_rng(seed)
    k = int(max(y.max(), h0.max(), h1.max())) + 1
    s = round(sample_size * y.size)

    def four(t: np.ndarray, p: np.ndarray) -> np.ndarray:
        cm = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
        tp = np.diag(cm).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.nan_to_num(tp / cm.sum(0))
            rec = np.nan_to_num(tp / cm.sum(1))
            f1 = np.nan_to_num(2 * prec * rec / (prec + rec))
        return np.array([f1.mean(), tp.sum() / t.size, prec.mean(), rec.mean()])

    delta = four(y, h1) - four(y, h0)
    count = np.zeros(4, dtype=int)
    for _ in range(n_resamples):  # the baseline's loop over resamples, on purpose
        idx = rng.integers(0, y.size, s)
        t = y[idx]
        count += (four(t, h1[idx]) - four(t, h0[idx])) > 2 * delta
    return count / n_resamples


def case_a(n: int, n_resamples: int, rounds: int, boostsa: Path | None, why_not: str,
           quick: bool = False) -> None:
    y, h0, h1 = data(n)
    print(f"Case A: {n:,} binary items, B = {n_resamples}, sample_size 0.5, 4 metrics")
    with tempfile.TemporaryDirectory() as tmp:
        files = [str(Path(tmp) / f"{name}.npy") for name in ("y", "h0", "h1")]
        for f, arr in zip(files, (y, h0, h1), strict=True):
            np.save(f, arr)
        env = evaluq_env()
        cli = [sys.executable, "-c", EVALUQ_CLI, "test", *files, "--n-resamples",
               str(n_resamples), "--sample-size", "0.5", "--seed", "0"]
        anchor = ([str(boostsa), str(ANCHORS / "run_boostsa.py"), *files, str(n_resamples),
                   "0.5", "0"] if boostsa else None)
        whole: list[float] = []
        start_only: list[float] = []
        imports: list[float] = []
        anchor_whole: list[float] = []
        anchor_inside: list[float] = []
        anchor_counts: dict[str, int] = {}
        if not quick:
            run_process(cli, env)  # warm the file cache and the bytecode
        for _ in range(rounds):  # evaluq and the anchor alternately
            whole.append(run_process(cli, env)[0])
            start_only.append(run_process([sys.executable, "-c", "pass"], env)[0])
            imports.append(run_process([sys.executable, "-c", "import evaluq.cli"], env)[0])
            if anchor is not None:
                seconds, out = run_process(anchor)
                anchor_whole.append(seconds)
                report = json.loads(out.strip().splitlines()[-1])
                anchor_inside.append(report["seconds_test"])
                anchor_counts = report["counts"]
            if not quick:
                whole.append(run_process(cli, env)[0])
                imports.append(run_process([sys.executable, "-c", "import evaluq.cli"],
                                           env)[0])

    def in_process():
        return eq.bootstrap_test(y, h0, h1, metrics=METRICS, method="berg-kirkpatrick",
                                 n_resamples=n_resamples, sample_size=0.5, rng=0)

    t_eq, res = timed(in_process)
    t_naive, p_naive = timed(lambda: naive(y, h0, h1, n_resamples, 0.5, 0), repeat=1)
    t_whole = min(whole)
    t_start, t_import = min(start_only), min(imports)
    print("  whole process (best of "
          f"{len(whole)}): evaluq test {t_whole:6.2f} s   target <= {TARGET_WHOLE_S} s: "
          f"{'met' if t_whole <= TARGET_WHOLE_S else 'NOT met'}")
    print(f"    of which: interpreter start {t_start:5.2f} s, import evaluq.cli "
          f"{t_import - t_start:5.2f} s, reading files + test + report "
          f"{max(t_whole - t_import, 0.0):5.2f} s   (dominant: "
          f"{'import' if t_import - t_start > t_whole - t_import else 'the test'})")
    if anchor_whole:
        ratio = min(anchor_whole) / t_whole
        print(f"    BooStSa 0.2.13 whole process (best of {len(anchor_whole)}): "
              f"{min(anchor_whole):6.2f} s   ratio {ratio:6.1f}x   target >= {TARGET_RATIO:.0f}x: "
              f"{'met' if ratio >= TARGET_RATIO else 'NOT met'}")
    else:
        print(f"    BooStSa: not run ({why_not})")
    print(f"  inside the process: eq.bootstrap_test {t_eq * 1e3:8.1f} ms (best of 3), peak "
          f"memory {peak_mib(in_process):6.1f} MiB")
    print(f"    naive numpy loop {t_naive * 1e3:8.1f} ms   ratio {t_naive / t_eq:6.0f}x")
    if anchor_inside:
        print(f"    BooStSa Bootstrap.test {min(anchor_inside) * 1e3:8.1f} ms   ratio "
              f"{min(anchor_inside) / t_eq:6.0f}x")
        p_anchor = [anchor_counts[BOOSTSA_NAMES[m]] / n_resamples for m in METRICS]
        print(f"  p-values (count / B): evaluq "
              f"{np.round(res.count / n_resamples, 3).tolist()}  BooStSa "
              f"{np.round(p_anchor, 3).tolist()}  naive {np.round(p_naive, 3).tolist()} "
              "(different draws; should be close)")
    else:
        print(f"  p-values (count / B): evaluq "
              f"{np.round(res.count / n_resamples, 3).tolist()}  naive "
              f"{np.round(p_naive, 3).tolist()} (different draws; should be close)")
    print()


def case_b(n: int, n_resamples: int, k: int, rounds: int = 3) -> None:
    """The paired 10-class test beside its floor, alternately in the same run.

    The floor is what no implementation with numpy's generator avoids for the same numbers:
    the ``B`` multinomial draws over the cells (numpy draws one conditional binomial per cell
    and resample, each with a fresh BTPE set-up). evaluq draws them in a background thread,
    one chunk ahead of the sums (the draws release the GIL), so with a free core its wall
    time approaches the floor plus the work outside the resampling loop; on a loaded
    machine the CPU times are the steadier figures."""
    y, h0, h1 = data(n, seed=1, k=k)

    def paired():
        return eq.bootstrap_test(y, h0, h1, metrics=METRICS, method="paired",
                                 n_resamples=n_resamples, rng=0)

    code = (y * k + h0) * k + h1
    cells = np.unique(code, return_counts=True)[1]
    p = cells / cells.sum()

    def floor():
        return np.random.default_rng(0).multinomial(n, p, size=n_resamples)

    walls: dict[str, list[float]] = {"test": [], "floor": []}
    cpus: dict[str, list[float]] = {"test": [], "floor": []}
    res = paired()  # warm: imports and caches
    for _ in range(rounds):  # evaluq and its floor alternately
        for name, fn in (("test", paired), ("floor", floor)):
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            walls[name].append(time.perf_counter() - wall)
            cpus[name].append(time.process_time() - cpu)  # every thread of the process
    t_b, t_floor = min(walls["test"]), min(walls["floor"])
    c_b, c_floor = min(cpus["test"]), min(cpus["floor"])
    target = f"target <= {TARGET_PAIRED_S} s: {'met' if t_b <= TARGET_PAIRED_S else 'NOT met'}"
    print(f"Case B: paired test, {k} classes, {n:,} items ({cells.size} distinct (y, h0, h1) "
          f"cells), {n_resamples:,} resamples, 4 metrics; best of {rounds}, alternately")
    print(f"  eq.bootstrap_test ............ {t_b * 1e3:8.1f} ms wall, {c_b * 1e3:8.1f} ms CPU "
          f"  {target if k == 10 else ''}")
    print(f"  floor: {n_resamples:,} multinomial draws over the cells alone "
          f"{t_floor * 1e3:8.1f} ms wall, {c_floor * 1e3:8.1f} ms CPU")
    print(f"    the floor is {t_floor / t_b:.0%} of the test's wall time and "
          f"{c_floor / c_b:.0%} of its CPU time; beyond the floor: "
          f"{(t_b - t_floor) * 1e3:.0f} ms wall, {(c_b - c_floor) * 1e3:.0f} ms CPU   "
          f"(load average now {os.getloadavg()[0]:.2f})")
    print(f"  peak memory {peak_mib(paired):6.1f} MiB   p-values "
          f"{np.round(res.pvalue, 4).tolist()}")
    print()


def case_b2(n: int, n_resamples: int) -> None:
    y, h0, h1 = data(n, seed=1)
    for method, f in (("paired", None), ("berg-kirkpatrick", 0.5)):
        def run(method=method, f=f):
            return eq.bootstrap_test(y, h0, h1, metrics=METRICS, method=method,
                                     n_resamples=n_resamples, sample_size=f, rng=0)

        t_b, res_b = timed(run, repeat=2)
        print(f"Case B2: {n:,} binary items, {n_resamples:,} resamples, method {method!r}")
        print(f"  eq.bootstrap_test ............ {t_b * 1e3:8.1f} ms   peak memory "
              f"{peak_mib(run):6.1f} MiB   (target < 5000 ms)   p-values "
              f"{np.round(res_b.pvalue, 4).tolist()}")
    print()


def case_c(n: int, n_resamples: int) -> None:
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(n, 3))
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    q0 = np.roll(p, 1, axis=0) * 0.5 + p * 0.5
    q1 = np.roll(p, 1, axis=0) * 0.4 + p * 0.6

    def run(b: int = n_resamples):
        return eq.bootstrap_test(p, q0, q1, n_resamples=b, sample_size=0.5, rng=0)

    t_c, _ = timed(run, repeat=1)
    print(f"Case C: {n:,} soft items (3 classes), B = {n_resamples}, sample_size 0.5, "
          "BooStSa's 4 soft metrics (per-item engine: O(B N))")
    print(f"  eq.bootstrap_test ............ {t_c * 1e3:8.1f} ms   peak memory "
          f"{peak_mib(lambda: run(max(n_resamples // 10, 1))):6.1f} MiB (with B / 10: "
          "memory is bounded per chunk)")


def case_d(n: int, n_resamples: int, k: int, chunk: int) -> None:
    """dask inputs, items chunked: the cells counted chunk by chunk, then the same engine."""
    import dask
    import dask.array as da

    y, h0, h1 = data(n, seed=3, k=k)
    lazy = [da.from_array(x, chunks=chunk) for x in (y, h0, h1)]

    def eager():
        return eq.bootstrap_test(y, h0, h1, metrics=METRICS, method="paired",
                                 n_resamples=n_resamples, rng=0)

    def streamed():
        with dask.config.set(scheduler="threads"):
            return eq.bootstrap_test(*lazy, metrics=METRICS, method="paired",
                                     n_resamples=n_resamples, rng=0)

    t_eager, r_eager = timed(eager, repeat=2)
    t_lazy, r_lazy = timed(streamed, repeat=2)
    same = bool(np.array_equal(r_eager.distribution, r_lazy.distribution)
                and np.array_equal(r_eager.pvalue, r_lazy.pvalue))
    print(f"Case D: paired test on dask arrays, {k} classes, {n:,} items in chunks of "
          f"{chunk:,}, B = {n_resamples}")
    print(f"  in memory {t_eager * 1e3:8.1f} ms   dask (threads) {t_lazy * 1e3:8.1f} ms   "
          f"identical numbers: {same}")
    print()


def case_e(n: int, n_resamples: int, chunk: int, n_runs: int = 3) -> None:
    """dask soft inputs: per-chunk local statistics, the global step once; one run and
    crossed runs (seeds on one test set)."""
    import dask
    import dask.array as da

    from evaluq.significance._bootstrap import compare_runs

    gen = np.random.default_rng(5)
    z = np.exp(gen.normal(size=(1 + 2 * n_runs, n, 3)) * 2)
    p, *q = z / z.sum(-1, keepdims=True)
    h0, h1 = q[:n_runs], q[n_runs:]
    print(f"Case E: paired test on dask soft labels, {n:,} items in chunks of {chunk:,}, "
          f"B = {n_resamples}, metrics=None (entropy correlation included)")
    for runs, r in (("pooled", 1), ("crossed", n_runs)):
        def eager(runs: str = runs, r: int = r) -> Any:
            return compare_runs([p] * r, h0[:r], h1[:r], method="paired", runs=runs,
                                n_resamples=n_resamples, rng=0)

        def streamed(runs: str = runs, r: int = r) -> Any:
            lazy = [da.from_array(x, chunks=(chunk, 3)) for x in (p, *h0[:r], *h1[:r])]
            with dask.config.set(scheduler="threads"):
                return compare_runs([lazy[0]] * r, lazy[1:1 + r], lazy[1 + r:],
                                    method="paired", runs=runs, n_resamples=n_resamples,
                                    rng=0)

        t_eager, r_eager = timed(eager, repeat=2)
        t_lazy, r_lazy = timed(streamed, repeat=2)
        same = bool(np.array_equal(r_eager.distribution, r_lazy.distribution)
                    and np.array_equal(r_eager.pvalue, r_lazy.pvalue))
        print(f"  {r} run(s) {runs:8s} in memory {t_eager * 1e3:8.1f} ms   dask (threads) "
              f"{t_lazy * 1e3:8.1f} ms   identical numbers: {same}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes")
    parser.add_argument("--boostsa-python", default=None,
                        help="python of BooStSa's venv (default: "
                             "benchmarks/anchors/.venv-boostsa/bin/python)")
    parser.add_argument("--skip-anchor", action="store_true",
                        help="do not run BooStSa (e.g. in the smoke test)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="alternating evaluq / BooStSa rounds (default 1; quick 1)")
    args = parser.parse_args(argv)
    boostsa, why_not = anchor_python(".venv-boostsa", args.boostsa_python,
                                     "benchmarks/anchors/setup_boostsa.sh")
    if args.skip_anchor:
        boostsa, why_not = None, "--skip-anchor given"
    rounds = args.rounds or 1
    print(machine_line() + ("   (--quick: smoke sizes; the targets are for the default sizes)"
                            if args.quick else ""))
    print()
    if args.quick:
        case_a(2_000, 100, rounds, boostsa, why_not, quick=True)
        case_b(20_000, 200, 10)
        case_b2(20_000, 200)
        case_c(2_000, 100)
        case_d(20_000, 100, 10, 5_000)
        case_e(3_000, 100, 1_000)
    else:
        case_a(100_000, 1000, rounds, boostsa, why_not)
        case_b(1_000_000, 10_000, 10)
        case_b2(1_000_000, 10_000)
        case_c(100_000, 1000)
        case_d(1_000_000, 1000, 10, 100_000)
        case_e(100_000, 1000, 25_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())

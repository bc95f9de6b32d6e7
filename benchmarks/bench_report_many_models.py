"""Benchmark: the report on many models (200 models x 60 tasks x 5 seeds, 60,000 runs).

A leaderboard dump of 200 models made ``evaluq report`` take about two minutes, most of it in
the field methods' all-pairs analyses (19,900 pairs). Printed, in one run:

* ``probability_of_improvement`` (2,000 resamples, every ordered pair), and its resampled
  kernel against the former one (an ``einsum`` over the runs of model_b, copied here as the
  baseline) on the same counts, with their largest difference (they must be equal);
* ``multi_aso`` (deepsig's 1,000 bootstrap iterations), and its violation ratios of one
  model against the others by the fused pass against the numpy form it replaced (2026-11-29,
  a loaded 2-core machine: multi_aso 48.2 -> 3.0 s at 200 models);
* the whole ``eq.report`` (2,000 resamples), with each step's seconds.

``--models M`` another number of models; ``--quick``: 40 models.

Run: ``python benchmarks/bench_report_many_models.py``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine_line

import evaluq as eq
from evaluq.field._aso_kernel import violation_ratios
from evaluq.field.rliable import _improvement_matrix, _improvement_resampled, _pair_runs
from evaluq.field.stochastic_order import _violation_ratio
from evaluq.reporting import _build


def former_resampled(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The kernel before: G laid out (task, model, run, model_b x run_b), the second
    contraction an einsum."""
    xt = np.moveaxis(x, 1, 0)
    a, b = xt[:, :, :, None, None], xt[:, None, None, :, :]
    g = (a > b).astype(np.float32) + np.float32(0.5) * (a == b)
    n_tasks, n_models, n_runs = xt.shape
    g = g.reshape(n_tasks, n_models, n_runs, n_models * n_runs)
    n_b = counts.shape[0]
    c = np.ascontiguousarray(counts.transpose(2, 1, 0, 3), dtype=np.float32)
    total = np.zeros((n_models, n_b, n_models))
    for m in range(n_tasks):
        left = np.matmul(c[m], g[m]).reshape(n_models, n_b, n_models, n_runs)
        total += np.einsum("kbln,lbn->kbl", left, c[m])
    return total.transpose(1, 0, 2) / (n_tasks * _pair_runs(None, n_models, n_runs))


def kernels(x: np.ndarray, n_b: int) -> None:
    counts = np.random.default_rng(1).multinomial(
        x.shape[2], [1 / x.shape[2]] * x.shape[2], size=(n_b, x.shape[0], x.shape[1])
    ).astype(np.float64)
    g = _improvement_matrix(x)
    times = {}
    for name, f in (("now", lambda: _improvement_resampled(g, counts)),
                    ("former", lambda: former_resampled(x, counts))):
        f()
        start = time.perf_counter()
        for _ in range(3):
            out = f()
        times[name] = ((time.perf_counter() - start) / 3, out)
    diff = float(np.abs(times["now"][1] - times["former"][1]).max())
    print(f"PoI resampled kernel, {n_b} resamples: {times['now'][0]:.3f} s, former "
          f"{times['former'][0]:.3f} s ({times['former'][0] / times['now'][0]:.2f}x), largest "
          f"difference {diff:.1e}")


def aso_kernels(n_models: int, n_b: int = 1000, n_grid: int = 199) -> None:
    """multi_aso's violation ratios of one model against every later one: the fused pass
    (``field._aso_kernel``) against the numpy form it replaced, on the same quantiles."""
    rng = np.random.default_rng(2)
    boot = np.sort(rng.normal(size=(n_models, n_b, n_grid)), axis=-1)
    times = {}
    for name, f in (("now", lambda: violation_ratios(boot[0], boot[1:], 0.005)),
                    ("former", lambda: _violation_ratio(boot[0][None], boot[1:], 0.005,
                                                        False))):
        f()
        start = time.perf_counter()
        out = f()
        times[name] = (time.perf_counter() - start, out)
    diff = float(np.abs(times["now"][1] - times["former"][1]).max())
    print(f"multi_aso violation ratios, one model against {n_models - 1} ({n_b} resamples): "
          f"{times['now'][0]:.3f} s, former {times['former'][0]:.3f} s "
          f"({times['former'][0] / times['now'][0]:.1f}x), largest difference {diff:.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n_models = 40 if args.quick else args.models
    print(machine_line())
    rng = np.random.default_rng(0)
    x = rng.normal(0.6, 0.05, (n_models, 60, 5)).round(4)
    cube = eq.from_arrays(x, models=[f"model-{i}" for i in range(n_models)],
                          languages=[f"lang{j}" for j in range(60)], metric="score")
    print(f"{n_models} models x 60 tasks x 5 seeds")
    kernels(x, 8)
    aso_kernels(n_models)
    start = time.perf_counter()
    eq.probability_of_improvement(cube, n_resamples=2000, rng=0)
    print(f"probability_of_improvement (2,000 resamples): {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    eq.multi_aso(cube, rng=0)
    print(f"multi_aso (1,000 bootstrap iterations): {time.perf_counter() - start:.1f} s")
    steps: list[tuple[str, float]] = []
    clock = [time.perf_counter()]

    def step(self: object, what: str) -> None:
        now = time.perf_counter()
        steps.append((what, now - clock[0]))
        clock[0] = now

    _build._Progress.step = step  # type: ignore[method-assign]
    start = clock[0] = time.perf_counter()
    eq.report(cube, out=None, rng=0)
    print(f"eq.report (2,000 resamples): {time.perf_counter() - start:.1f} s: "
          + ", ".join(f"{what} {sec:.1f} s" for what, sec in steps))


if __name__ == "__main__":
    main()

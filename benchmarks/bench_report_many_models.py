"""Benchmark: the report on many models (200 models x 60 tasks x 5 seeds, 60,000 runs).

A leaderboard dump of 200 models made ``evaluq report`` take about two minutes, most of it in
the field methods' all-pairs analyses (19,900 pairs). Printed, in one run:

* ``probability_of_improvement`` (2,000 resamples, every ordered pair), and its resampled
  kernel against the former one (an ``einsum`` over the runs of model_b, copied here as the
  baseline) on the same counts, with their largest difference (they must be equal);
* ``multi_aso`` (deepsig's 1,000 bootstrap iterations), and its violation ratios of one
  model against the others by the fused pass against the numpy form it replaced (2026-11-29,
  a loaded 2-core machine: multi_aso 48.2 -> 3.0 s at 200 models);
* the whole ``eq.report`` (2,000 resamples), with each step's seconds;
* what ``evaluq report`` writes beside the page (``cli._write_report_files``, every table as
  CSV / Markdown / LaTeX and analysis.json) and the page's pairs, each against the code it
  replaced, copied here as the baseline: a long table's LaTeX by pandas' Styler for every row
  (the text must be equal), analysis.json by ``json.dumps(indent=2)`` (the JSON must be
  equal), the page's 19,900-row pairwise table and 200 x 200 multi-ASO matrix whole
  (2026-11-29, a loaded 2-core machine, 200 models: the pairwise LaTeX 5.4 -> 0.95 s,
  probability_of_improvement's 3.9 -> 0.65 s, analysis.json 0.73 -> 0.37 s and 21.0 ->
  12.5 MB, the page's pairwise table 1.7 -> 0.03 s and 6.15 -> 0.06 MB, report.html 11.3 ->
  3.7 MB; ``_write_report_files`` of the same analyses by the code before these changes
  13.6-14.6 s, after 3.7-4.7 s).

``--models M`` another number of models; ``--quick``: 40 models.

Run: ``python benchmarks/bench_report_many_models.py``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import machine_line

import evaluq as eq
from evaluq import cli, tables
from evaluq.field._aso_kernel import violation_ratios
from evaluq.field.rliable import _improvement_matrix, _improvement_resampled, _pair_runs
from evaluq.field.stochastic_order import _violation_ratio
from evaluq.reporting import _build, sections


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


def former_latex(table: pd.DataFrame) -> str:
    """``tables.to_latex`` of a long table before: pandas' Styler wrote every row."""
    frame = table.copy()
    frame.attrs = {}
    frame.columns = pd.Index([tables._label(c) for c in frame.columns])
    styler = frame.style.format(lambda v: tables._escape_latex(tables._cell(v, 4)))
    styler = styler.format_index(lambda v: tables._escape_latex(str(v)), axis=0)
    styler = styler.format_index(lambda v: tables._escape_latex(str(v)), axis=1)
    if frame.index.names != [None]:
        styler.index.names = [tables._escape_latex(str(n)) if n is not None else None
                              for n in frame.index.names]
    text = tables.caption(table)
    return styler.to_latex(caption=tables._escape_latex(text) if text else None, label=None,
                           hrules=True, environment="longtable", column_format=None)


def timed(f: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds ``f()`` takes, and what it returns."""
    start = time.perf_counter()
    out = f()
    return time.perf_counter() - start, out


def writing(rep: eq.Report) -> None:
    """What ``evaluq report`` writes besides the page, now and before, in this run."""
    (analysis,) = rep.analyses.values()
    board = list(analysis.leaderboard.index)
    for name, table in analysis.tables().items():
        table = tables.whole_ranks(table)
        if len(table) <= tables.LONG_LATEX:
            continue
        now, text = timed(lambda t=table: tables.to_latex(t))
        before, former = timed(lambda t=table: former_latex(t))
        assert text == former, name
        print(f"  {name} ({len(table):,} rows) LaTeX: {now:.2f} s, former (Styler) "
              f"{before:.2f} s; the same text")
    payload = {"command": "bench", "metrics": {n: a.to_dict() for n, a in rep.analyses.items()}}
    now, text = timed(lambda: cli._json_text(payload))
    before, former = timed(lambda: json.dumps(payload, indent=2, default=str))
    assert json.loads(text) == json.loads(former)
    print(f"  analysis.json: {now:.2f} s, {len(text) / 1e6:.1f} MB; former (indent=2) "
          f"{before:.2f} s, {len(former) / 1e6:.1f} MB; the same JSON")
    pairs = sections._pairwise_frame(analysis.pairwise)
    now, page = timed(lambda: sections._table_html(sections._neighbour_rows(pairs, board)))
    before, whole = timed(lambda: sections._table_html(pairs))
    print(f"  page's pairwise table: {now:.2f} s, {len(page) / 1e6:.2f} MB; former (every "
          f"pair) {before:.2f} s, {len(whole) / 1e6:.2f} MB")
    field = analysis.field_methods
    if field is not None and field.eps_min is not None:
        matrix = analysis.tables()["multi_aso"]
        order, _ = sections._improvement_pairs(field.estimates, field.improvement)
        if order is not None:
            page = sections._table_html(sections._aso_neighbours(matrix, order))
            whole = sections._table_html(matrix)
            print(f"  page's multi-ASO: {len(page) / 1e6:.2f} MB; former (the matrix) "
                  f"{len(whole) / 1e6:.2f} MB")
    with tempfile.TemporaryDirectory() as out:
        now, files = timed(lambda: cli._write_report_files(rep, Path(out), cli.REPORT_FORMATS,
                                                           "bench"))
        print(f"  cli._write_report_files (cube, {len(files) - 1} tables and json): {now:.1f} s")
    print(f"  report.html: {len(rep.html) / 1e6:.1f} MB")


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
    rep = eq.report(cube, out=None, rng=0)
    print(f"eq.report (2,000 resamples): {time.perf_counter() - start:.1f} s: "
          + ", ".join(f"{what} {sec:.1f} s" for what, sec in steps))
    print("writing:")
    writing(rep)


if __name__ == "__main__":
    main()

"""lm-evaluation-harness's aggregated results (``results_<date>.json``) as a summary table.

Most lm-eval runs keep only the results JSON (``--log_samples`` is off by default), and
shared leaderboards publish exactly these files. Each holds, per task, every metric's value
(``"acc,none": 0.458``) and its standard error over the documents (``"acc_stderr,none"``,
lm-eval's bootstrap or analytic SE; ``"N/A"`` when it was not computed). Read as one row per
model, task and metric, they are the summary format: a mean per (model, task) with the SD of
the test-set noise (``sd_boot``) and one seed. The pairing of the models' errors on shared
items is not in them: the per-item samples are (:func:`evaluq.io.read_lm_eval_samples`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluq._dims import MODEL, TASK
from evaluq._harness._common import PathsLike, log_files, warn
from evaluq._harness.lm_eval import _SAMPLES, _date, _json, _model_name, _samples_files
from evaluq.errors import CubeError

_RESULTS = re.compile(r"^results(_.+)?\.json$")
"""lm-eval's name of a results file: ``results_<date>.json`` (``results.json`` before 0.4)."""
COLUMNS = (MODEL, TASK, "metric", "score", "stderr", "n", "file", "date")
"""The columns of :func:`read_lm_eval_results`' table, in their order."""


def results_files(folder: Path) -> list[Path]:
    """The lm-eval results files in a folder, searched recursively, sorted."""
    return sorted(p for p in folder.rglob("results*.json") if _RESULTS.match(p.name))


def results_only(paths: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether ``paths`` (files or folders) hold lm-eval results files and no samples file:
    lm-eval's output without ``--log_samples``."""
    given = [Path(p) for p in paths]
    if not all(p.exists() for p in given):
        return False                        # the reader says which is missing
    samples = [s for p in given for s in (_samples_files(p) if p.is_dir() else [p])
               if _SAMPLES.match(s.name)]
    results = [r for p in given for r in (results_files(p) if p.is_dir() else [p])
               if _RESULTS.match(r.name)]
    return not samples and bool(results)


def _number(value: Any) -> float:
    """A metric's value as a float; NaN for lm-eval's ``"N/A"`` or anything not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return float("nan")
    return float(value)


def _task_rows(task: str, values: dict[str, Any], n: float) -> list[dict[str, Any]]:
    """One row per metric of a task: ``metric`` named as the samples reader names it (the bare
    metric, or ``metric,filter`` when the task has several filters)."""
    keys = [k for k in values if "," in k and not k.split(",", 1)[0].endswith("_stderr")]
    filters = {k.split(",", 1)[1] for k in keys}
    rows = []
    for key in keys:
        metric, filt = key.split(",", 1)
        score = _number(values[key])
        if np.isnan(score):
            continue                         # a corpus-level metric lm-eval left as text
        rows.append({TASK: task, "metric": metric if len(filters) == 1 else key,
                     "score": score, "stderr": _number(values.get(f"{metric}_stderr,{filt}")),
                     "n": n})
    return rows


def _read_one(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """One results file: its rows, and the groups it holds (aggregates of its tasks)."""
    results = _json(path)
    if not isinstance(results, dict) or not isinstance(results.get("results"), dict):
        raise CubeError(f"{str(path)!r} is not lm-eval's results JSON (no 'results' object)")
    groups = {str(g) for g, subs in (results.get("group_subtasks") or {}).items() if subs}
    counts = results.get("n-samples") or {}
    rows: list[dict[str, Any]] = []
    for task, values in results["results"].items():
        if str(task) in groups or not isinstance(values, dict):
            continue
        effective = (counts.get(task) or {}).get("effective")
        rows.extend(_task_rows(str(task), values,
                               float(effective) if isinstance(effective, int) else np.nan))
    match = re.match(r"^results_(.+)\.json$", path.name)
    table = pd.DataFrame(rows, columns=list(COLUMNS[1:6])).assign(
        model=_model_name(results, path), file=str(path),
        date=_date(results, match[1] if match else ""))
    return table[list(COLUMNS)], sorted(groups & set(map(str, results["results"])))


def _refuse_two_runs(table: pd.DataFrame) -> None:
    """The same (model, task, metric) in two results files: which run is meant is not known."""
    twice = table.duplicated([MODEL, TASK, "metric"], keep=False)
    if twice.any():
        first = table[twice].iloc[0]
        files = table.loc[twice & (table[MODEL] == first[MODEL]) & (table[TASK] == first[TASK])
                          & (table["metric"] == first["metric"]), "file"].tolist()
        raise CubeError(f"model {first[MODEL]!r}, task {first[TASK]!r}: in {len(files)} "
                        f"results files ({', '.join(map(repr, files))}); give one run of each "
                        f"model and task (the others in another folder)")


def read_lm_eval_results(path: PathsLike) -> pd.DataFrame:
    """Read lm-evaluation-harness's aggregated results files as a summary table.

    lm-eval (``lm_eval run ... --output_path OUT``) writes ``OUT/<model>/results_<date>.json``
    with, per task, each metric's value over the documents and its standard error. This
    reads them (lm-eval itself is not needed) as one row per model, task and metric:
    ``model`` (as :func:`read_lm_eval_samples` names it), ``task``, ``metric`` (``acc``,
    ``acc_norm``, ...; ``metric,filter`` when a task has several filters), ``score``,
    ``stderr`` (NaN where lm-eval wrote ``"N/A"``), ``n`` (documents evaluated), ``file`` and
    ``date``. Groups (an aggregate of their subtasks, such as ``mmlu``) are left out, with a
    warning naming them: their subtasks are in the table.

    The standard error is the SD of the test-set noise of the score, so a metric's rows are
    the summary format with ``sd_boot="stderr"``, one run and no ``sd_seed``
    (:func:`evaluq.from_summary`): one run measures no run-to-run spread, so the variance
    components say it is not identified and the parametric replication redraws the test-set
    noise alone, saying that the run-to-run noise is not in the intervals;
    ``evaluq report OUT --from lm-eval`` does this when the folder holds no samples files.
    The models' errors on shared documents are not paired (the samples hold that):
    intervals of differences are wider than the samples give.

    Parameters
    ----------
    path : path or sequence of paths
        Results files (``results_<date>.json``) or folders searched recursively for them.

    Returns
    -------
    pandas.DataFrame
        Sorted by model and task, each task's metrics in the file's order (lm-eval's: its
        primary metric first); ``attrs["harness"]`` is ``"lm_eval"`` and
        ``attrs["source"]`` the files.

    Raises
    ------
    CubeError
        A file that is not lm-eval's results JSON, a folder without any, or one model's task
        and metric in two files (two runs: which one is meant is not known).

    Warns
    -----
    HarnessLogWarning
        Groups left out (aggregates of their subtasks).

    See Also
    --------
    read_lm_eval_samples : the per-item table from the ``--log_samples`` output.

    Examples
    --------
    >>> from evaluq.io import read_lm_eval_results
    >>> import evaluq as eq
    >>> table = read_lm_eval_results("output/")                        # doctest: +SKIP
    >>> acc = table[table.metric == "acc"]                               # doctest: +SKIP
    >>> cube = eq.from_summary(acc, language="task", mean="score", sd_seed=None,
    ...                        sd_boot="stderr", n_seeds=1)              # doctest: +SKIP
    """
    files = log_files(path, _RESULTS, results_files,
                      ("an lm-eval results file", "lm-eval results files"), "lm-eval",
                      "results_<date>.json")
    return summary_table(files, _read_one, "lm_eval")


def summary_table(files: Sequence[Path],
                  read_one: Callable[[Path], tuple[pd.DataFrame, list[str]]],
                  harness: str) -> pd.DataFrame:
    """One summary table (:data:`COLUMNS`) from results files, each read by ``read_one``
    into its rows and the aggregates it left out (named in one warning): a task and metric of
    one model in two files refused, sorted by model and task with each task's metrics in the
    file's order (the harness's primary metric first)."""
    parts, groups = zip(*(read_one(f) for f in files), strict=True)
    table = pd.concat(parts, ignore_index=True)
    _refuse_two_runs(table)
    left_out = sorted({g for gs in groups for g in gs})
    if left_out:
        warn(f"groups {left_out} left out: each is an aggregate of subtasks that are in the "
             f"table")
    if table.empty:
        raise CubeError(f"`path`: the results files hold no numeric metric "
                        f"({', '.join(map(str, files))})")
    table = table.sort_values([MODEL, TASK], kind="stable", ignore_index=True)
    table.attrs = {"harness": harness, "source": "; ".join(map(str, files))}
    return table

"""Hugging Face lighteval's ``--save-details`` output as a tidy per-item table.

lighteval (``EvaluationTracker(output_dir=OUT, save_details=True)``, or ``--save-details`` on
its command line) writes, per model and run, ``OUT/details/<model>/<date>/
details_<task>_<date>.parquet``: one row per sample, with the sample (``doc``: its ``id``,
``task_name`` and the task's own fields under ``specific``) and its per-sample metric values
(``metric``, a struct such as ``{"acc": 1, "acc_norm": 0}``), beside ``OUT/results/<model>/
results_<date>.json`` (the aggregates and ``config_general.model_name``). Read with pandas'
parquet reader; lighteval itself is not needed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluq._dims import EPOCH, ITEM, MODEL, TASK
from evaluq._harness._common import (
    LogRecord,
    LogTable,
    PathsLike,
    combine,
    log_files,
    metadata_keys,
    missing_metadata,
    warn,
)
from evaluq._harness.lm_eval_results import COLUMNS, summary_table
from evaluq.errors import CubeError

_DETAILS = re.compile(r"^details_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[\d.\-]+)\.parquet$")
"""lighteval's name of a details file: ``details_<task>_<date>.parquet``."""
_RESULTS = re.compile(r"^results_(?P<date>\d{4}-\d\d-\d\dT[\d.\-]+)\.json$")
"""lighteval's name of a results file: ``results_<date>.json``."""
_AVERAGE = re.compile(r"^.+:_average\|\d+$")
"""lighteval's average over the subtasks of a task (``mmlu:_average|5``)."""


def details_files(folder: Path) -> list[Path]:
    """The lighteval details files in a folder, searched recursively, sorted."""
    return sorted(p for p in folder.rglob("details_*.parquet") if _DETAILS.match(p.name))


def _files(paths: PathsLike) -> list[Path]:
    return log_files(paths, _DETAILS, details_files,
                     ("a lighteval details file", "lighteval details files"), "lighteval",
                     "details_<task>_<date>.parquet", "; lighteval writes them with "
                     "--save-details")


def _model_and_results(details: Path, date: str) -> tuple[str, dict[str, Any]]:
    """The model's name and the run's results JSON (``{}`` when absent): lighteval writes the
    details under ``details/<model>/<date>/`` and the results as
    ``results/<model>/results_<date>.json`` (a model ``org/name`` is two folders)."""
    run = details.parent
    top = next((p for p in run.parents if p.name == "details"), None)
    if top is None or run.name != date:
        raise CubeError(f"{str(details)!r} is not in lighteval's layout "
                        f"(OUT/details/<model>/<date>/): its model is not known")
    model = "/".join(run.parent.relative_to(top).parts)
    path = top.parent / "results" / model / f"results_{date}.json"
    if not path.is_file():
        return model, {}
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CubeError(f"{str(path)!r} is not valid JSON (damaged or cut short?): "
                        f"{err}") from None
    name = (results.get("config_general") or {}).get("model_name") if isinstance(
        results, dict) else None
    return (str(name) if name else model), results if isinstance(results, dict) else {}


def _scores(record: LogRecord, metrics: pd.Series, items: list[str]) -> dict[str, np.ndarray]:
    """The per-sample metric values as float columns (missing: NaN); a metric whose values
    are not numbers (a corpus metric keeps its pieces per sample) is left out, warning."""
    names: list[str] = []
    for value in metrics:
        names.extend(k for k in (value or {}) if k not in names)
    out = {}
    for name in names:
        values = [(value or {}).get(name) for value in metrics]
        bad = next((i for i, v in enumerate(values)
                    if v is not None and not isinstance(v, bool | int | float | np.number)),
                   None)
        if bad is not None:
            warn(f"{record.where()}: metric {name!r} holds {type(values[bad]).__name__} values "
                 f"per sample (for sample {items[bad]!r}), not a per-item score (lighteval "
                 f"aggregates it over the corpus); it is left out of the table")
            continue
        out[name] = np.array([np.nan if v is None else float(v) for v in values])
    return out


def _metadata(record: LogRecord, docs: pd.Series, items: list[str], keys: list[str]
              ) -> dict[str, list[Any]]:
    """The requested fields of each sample: the task's own (``doc.specific``), else the
    sample's (``doc``)."""
    out: dict[str, list[Any]] = {k: [] for k in keys}
    for doc, item in zip(docs, items, strict=True):
        fields = {**{k: v for k, v in doc.items() if k != "specific"},
                  **(doc.get("specific") or {})}
        for key in keys:
            if key not in fields:
                raise missing_metadata(record, key, repr(item), fields)
            out[key].append(fields[key])
    return out


def _read_one(details: Path, keys: list[str]) -> LogTable:
    """One details file (one model, one task) as a :class:`LogTable`."""
    match = _DETAILS.match(details.name)
    assert match is not None  # the files were selected by this pattern
    task, date = match["task"], match["date"]
    model, results = _model_and_results(details, date)
    general = results.get("config_general") or {}
    sha = str(general.get("lighteval_sha") or "?")
    record = LogRecord(file=str(details), model=model, task=task, date=date, tool="lighteval",
                       tool_version="unknown" if sha == "?" else sha)
    try:
        frame = pd.read_parquet(details, columns=["doc", "metric"])
    except Exception as err:          # pyarrow's errors (a cut file, another layout)
        raise CubeError(f"{record.where()}: cannot read it as lighteval's details "
                        f"(damaged, or not lighteval's?): {type(err).__name__}: "
                        f"{str(err)[:200]}") from None
    docs = frame["doc"]
    items = [str(doc.get("id")) for doc in docs]
    named = {str(doc.get("task_name")) for doc in docs} - {"None"}
    if named and named != {task}:
        raise CubeError(f"{record.where()}: its samples are of task(s) {sorted(named)}, its "
                        f"name says {task!r}")
    scores = _scores(record, frame["metric"], items)
    table = pd.DataFrame({MODEL: model, TASK: task, ITEM: pd.Series(items, dtype=object),
                          EPOCH: np.zeros(len(items), dtype=np.int64)})
    meta = _metadata(record, docs, items, keys)
    return LogTable(record, table.assign(**scores, **meta), list(scores))


def read_lighteval_details(path: PathsLike, *, metadata: str | Sequence[str] | None = None
                           ) -> pd.DataFrame:
    """Read Hugging Face lighteval's per-sample details as a tidy per-item table.

    lighteval run with ``--save-details`` writes, per model and run,
    ``OUT/details/<model>/<date>/details_<task>_<date>.parquet`` (one row per sample, its
    metric values per sample) beside ``OUT/results/<model>/results_<date>.json``. This reads
    them with pandas (lighteval itself is not needed) as one row per model, task and sample:
    ``model`` (the results JSON's ``config_general.model_name``, else the folder),
    ``task`` (as lighteval names it: ``suite|task|few-shot`` or ``task|few-shot``), ``item``
    (the sample's ``doc.id``), ``epoch`` (0), one float column per metric (``acc``,
    ``acc_norm``, ``em``, ...) and the requested fields of the sample.

    Parameters
    ----------
    path : path or sequence of paths
        Details files or folders searched recursively for them (lighteval's output
        folder).
    metadata : str or sequence of str, optional
        Fields of each sample to add as columns: the task's own (``doc.specific``, for
        example ``"passage"``), else the sample's. A sample without one is an error.

    Returns
    -------
    pandas.DataFrame
        Sorted by model, task, item, epoch; ``attrs`` holds the provenance as strings
        (``harness`` ``"lighteval"``, the files, models, tasks and dates), as the other
        readers' tables.

    Raises
    ------
    CubeError
        A file not in lighteval's layout or not readable as its details; a sample twice; a
        requested field missing. Each message names the file, model and task.

    Warns
    -----
    HarnessLogWarning
        A metric missing for some samples (NaN), a metric with no per-sample number (left
        out), two runs of the same model and task.

    See Also
    --------
    read_lm_eval_samples, read_inspect_logs : the same table from the other harnesses.

    Examples
    --------
    >>> from evaluq.io import read_lighteval_details
    >>> table = read_lighteval_details("output/", metadata="passage")   # doctest: +SKIP
    >>> table.columns.tolist()  # doctest: +SKIP
    ['model', 'task', 'item', 'epoch', 'acc', 'acc_norm', 'passage']
    """
    keys = metadata_keys(metadata)
    return combine([_read_one(f, keys) for f in _files(path)], keys)


def results_files(folder: Path) -> list[Path]:
    """The lighteval results files in a folder, searched recursively, sorted."""
    return sorted(p for p in folder.rglob("results_*.json") if _RESULTS.match(p.name))


def lighteval_results_only(paths: Sequence[str | os.PathLike[str]]) -> bool:
    """Whether ``paths`` (files or folders) hold lighteval results files and no details
    file: lighteval's output without ``--save-details`` (its default)."""
    given = [Path(p) for p in paths]
    if not all(p.exists() for p in given):
        return False                        # the reader says which is missing
    details = [d for p in given for d in (details_files(p) if p.is_dir() else [p])
               if _DETAILS.match(d.name)]
    results = [r for p in given for r in (results_files(p) if p.is_dir() else [p])
               if _RESULTS.match(r.name)]
    return not details and bool(results)


def _results_rows(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """One results file: a row per task and metric (``all`` and the subtask averages left
    out, the averages returned), with the model and the run's date."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CubeError(f"{str(path)!r} is not valid JSON (damaged or cut short?): "
                        f"{err}") from None
    if not isinstance(results, dict) or not isinstance(results.get("results"), dict) or \
            "config_general" not in results:
        raise CubeError(f"{str(path)!r} is not lighteval's results JSON (no 'results' and "
                        f"'config_general')")
    model = str((results["config_general"] or {}).get("model_name") or path.parent.name)
    averages = sorted(t for t in results["results"] if _AVERAGE.match(str(t)))
    rows = []
    for task, values in results["results"].items():
        if task == "all" or task in averages or not isinstance(values, dict):
            continue
        rows += [{MODEL: model, TASK: str(task), "metric": str(k), "score": float(v),
                  "stderr": float(values.get(f"{k}_stderr", np.nan)), "n": np.nan,
                  "file": str(path), "date": path.stem.removeprefix("results_")}
                 for k, v in values.items()
                 if not str(k).endswith("_stderr") and isinstance(v, int | float)
                 and not isinstance(v, bool)]
    return pd.DataFrame(rows, columns=list(COLUMNS)), averages


def read_lighteval_results(path: PathsLike) -> pd.DataFrame:
    """Read Hugging Face lighteval's results files as a summary table.

    lighteval writes ``OUT/results/<model>/results_<date>.json`` with, per task, each
    metric's value (``"acc": 0.29``) and its standard error (``"acc_stderr"``); without
    ``--save-details`` (its default) these are all its output. This reads them as one row
    per model, task and metric, as :func:`read_lm_eval_results` reads lm-eval's: ``model``
    (``config_general.model_name``), ``task`` (``suite|task|few-shot`` or ``task|few-shot``),
    ``metric``, ``score``, ``stderr``, ``n`` (NaN: the files do not say), ``file`` and
    ``date``. The ``all`` entry and the averages over subtasks (``mmlu:_average|5``) are
    left out, the averages with a warning (their subtasks are in the table). The
    standard error is the test-set noise of the score: the summary format with
    ``sd_boot="stderr"``, one run and no ``sd_seed`` (:func:`evaluq.from_summary`);
    ``evaluq report OUT --from lighteval`` does this when the folder holds no details.

    Parameters
    ----------
    path : path or sequence of paths
        Results files or folders searched recursively for them.

    Returns
    -------
    pandas.DataFrame
        Sorted by model and task, each task's metrics in the file's order;
        ``attrs["harness"]`` is ``"lighteval"`` and ``attrs["source"]`` the files.

    Raises
    ------
    CubeError
        A file that is not lighteval's results JSON, a folder without any, or one model's
        task and metric in two files (two runs: which one is meant is not known).

    Warns
    -----
    HarnessLogWarning
        Averages over subtasks left out.

    See Also
    --------
    read_lighteval_details : the per-sample table from the ``--save-details`` output.

    Examples
    --------
    >>> from evaluq.io import read_lighteval_results
    >>> table = read_lighteval_results("out/")                          # doctest: +SKIP
    >>> table.columns.tolist()                                          # doctest: +SKIP
    ['model', 'task', 'metric', 'score', 'stderr', 'n', 'file', 'date']
    """
    files = log_files(path, _RESULTS, results_files,
                      ("a lighteval results file", "lighteval results files"), "lighteval",
                      "results_<date>.json")
    return summary_table(files, _results_rows, "lighteval")

"""lm-evaluation-harness's ``--log_samples`` output as a tidy per-item table, read with the
standard library (no dependency on lm-eval).

lm-eval writes, per model, ``results_<date>.json`` (aggregated results, the configuration,
the model name, lm-eval's version) and one ``samples_<task>_<date>.jsonl`` per task (one JSON
record per document and filter: ``doc_id``, ``doc``, ``filter``, ``metrics`` and each metric's
per-document value).
"""

from __future__ import annotations

import datetime as dt
import json
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
    as_paths,
    combine,
    log_files,
    metadata_keys,
    missing_metadata,
    warn,
)
from evaluq.errors import CubeError

_SAMPLES = re.compile(
    r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$")
"""lm-eval's name of a samples file: the task, then the run's date id."""
_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
"""The model-argument keys lm-eval takes the model name from, in its order."""
_NO_FILTER = "none"
_MISSING = object()


def _samples_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("samples_*.jsonl") if _SAMPLES.match(p.name))


def _files(paths: PathsLike) -> list[Path]:
    try:
        return log_files(paths, _SAMPLES, _samples_files,
                         ("an lm-eval samples file", "lm-eval samples files"), "lm-eval",
                         "samples_<task>_<date>.jsonl")
    except CubeError as err:
        given = as_paths(paths, "path")
        if any(p.is_dir() and any(p.rglob("results*.json")) for p in given):
            raise CubeError(f"{err}; it holds lm-eval results files (lm-eval ran without "
                            f"--log_samples): eq.read_lm_eval_results reads those") from None
        raise


def _results_file(samples: Path, date: str) -> Path:
    """The results JSON of the same run: ``results_<date>.json`` beside the samples (or, when
    lm-eval's ``--output_path`` named a .json file, ``<name>_<date>.json``)."""
    beside = samples.with_name(f"results_{date}.json")
    if beside.is_file():
        return beside
    others = sorted(p for p in samples.parent.glob(f"*_{date}.json")
                    if not p.name.startswith("samples_"))
    if len(others) == 1:
        return others[0]
    raise CubeError(f"{str(samples)!r}: no results JSON of the same run (results_{date}.json) "
                    "beside it; lm-eval writes it with the samples and evaluq takes the model "
                    "name and lm-eval's version from it")


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise CubeError(f"{str(path)!r} is not valid JSON (damaged or cut short?): "
                        f"{err}") from None


def _model_name(results: dict[str, Any], path: Path) -> str:
    """The model as lm-eval names it: ``model_name``, else the model arguments' ``pretrained=``
    (or ``peft=``, ``model=``, ...), else the model type."""
    if results.get("model_name"):
        return str(results["model_name"])
    config = results.get("config") or {}
    args = config.get("model_args")
    if isinstance(args, str):
        args = dict(a.split("=", 1) for a in args.split(",") if "=" in a)
    for key in _MODEL_KEYS:
        if isinstance(args, dict) and args.get(key):
            return str(args[key])
    if config.get("model"):
        return str(config["model"])
    raise CubeError(f"{str(path)!r}: no model name (neither model_name nor config.model_args "
                    "nor config.model)")


def _date(results: dict[str, Any], date_id: str) -> str:
    """The run's start (lm-eval's ``date``, a UNIX time) in ISO 8601, else the file's date."""
    stamp = results.get("date")
    if isinstance(stamp, int | float):
        return dt.datetime.fromtimestamp(stamp, dt.UTC).isoformat(timespec="seconds")
    return date_id


def _record(samples: Path) -> tuple[LogRecord, dict[str, Any]]:
    """The provenance of one samples file, from its name and its run's results JSON."""
    match = _SAMPLES.match(samples.name)
    assert match is not None  # the files were selected by this pattern
    task, date_id = match["task"], match["date"]
    path = _results_file(samples, date_id)
    results = _json(path)
    if not isinstance(results, dict):
        raise CubeError(f"{str(path)!r} is not lm-eval's results JSON (not an object)")
    known = set(results.get("results") or {}) | set(results.get("configs") or {})
    if known and task not in known:
        raise CubeError(f"{str(samples)!r}: its results JSON {str(path)!r} does not describe "
                        f"task {task!r} (it has {sorted(known)})")
    record = LogRecord(file=str(samples), model=_model_name(results, path), task=task,
                       date=_date(results, date_id), tool="lm_eval",
                       tool_version=str(results.get("lm_eval_version", "unknown")))
    return record, results


def _lines(record: LogRecord) -> list[dict[str, Any]]:
    """The samples file's JSON records."""
    try:
        with open(record.file, encoding="utf-8") as fh:
            lines = fh.readlines()
    except UnicodeDecodeError as err:
        raise CubeError(f"{record.where()}: not UTF-8 text (damaged?): {err}") from None
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            cut = number == len(lines) and not line.endswith("\n")  # lm-eval ends each
            keep = (f", or delete that last line to use its {len(out)} complete samples"
                    if out else "")                                   # record with one
            why = (": the file ends inside it, so its writing stopped (an interrupted run?). "
                   f"Rerun the task{keep}" if cut else "")
            raise CubeError(f"{record.where()}: line {number} is not JSON ({err}){why}"
                            ) from None
        if not isinstance(rec, dict) or "doc_id" not in rec:
            raise CubeError(f"{record.where()}: line {number} is not an lm-eval sample "
                            "(no doc_id)")
        out.append(rec)
    if not out:
        raise CubeError(f"{record.where()}: the samples file holds no samples")
    return out


def _metric_names(rec: dict[str, Any], results: dict[str, Any], task: str) -> list[str]:
    """The metrics of a record: its ``metrics`` list, else (older lm-eval) the task's metrics
    in the results' ``higher_is_better``."""
    names = rec.get("metrics")
    if names is None:
        names = list(((results.get("higher_is_better") or {}).get(task)) or {})
    return [str(n) for n in names]


def _doc_metadata(record: LogRecord, rec: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """The requested fields of the record's document (a document without one is an error)."""
    doc = rec.get("doc")
    if not isinstance(doc, dict):
        doc = {}
    out = {}
    for k in keys:
        if k not in doc:
            raise missing_metadata(record, k, f"doc_id {rec['doc_id']!r}", doc)
        out[k] = doc[k]
    return out


def _rows(record: LogRecord, recs: list[dict[str, Any]], results: dict[str, Any],
          keys: list[str]) -> dict[Any, dict[str, Any]]:
    """doc_id -> its row: the metadata and one raw value per metric (``metric,filter`` when
    the task has several filters, as lm-eval's results name them)."""
    filters = list(dict.fromkeys(str(r.get("filter", _NO_FILTER)) for r in recs))
    rows: dict[Any, dict[str, Any]] = {}
    seen: set[tuple[Any, str]] = set()
    for rec in recs:
        doc, filt = rec["doc_id"], str(rec.get("filter", _NO_FILTER))
        if (doc, filt) in seen:
            raise CubeError(f"duplicated sample ids: {record.where()} holds doc_id {doc!r} "
                            f"(filter {filt!r}) more than once; give one samples file per run")
        seen.add((doc, filt))
        row = rows.get(doc)
        if row is None:
            row = rows[doc] = {ITEM: doc, **_doc_metadata(record, rec, keys)}
        for metric in _metric_names(rec, results, record.task):
            name = metric if len(filters) == 1 else f"{metric},{filt}"
            row[name] = rec.get(metric, _MISSING)
    return rows


def _as_float(record: LogRecord, name: str, values: list[Any], docs: list[Any]
              ) -> np.ndarray | None:
    """A metric's per-document values as floats (missing: NaN), or None (with a warning) when
    they are not numbers: a metric lm-eval aggregates over the corpus (BLEU keeps the
    (reference, prediction) pair of each document) has no per-item score."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if v is _MISSING or v is None:
            continue
        if not isinstance(v, bool | int | float):
            warn(f"{record.where()}: metric {name!r} holds {type(v).__name__} values per "
                 f"sample ({v!r:.60} for doc_id {docs[i]!r}), not a per-item score (lm-eval "
                 "aggregates it over the corpus); it is left out of the table")
            return None
        out[i] = float(v)
    return out


def _read_one(samples: Path, keys: list[str]) -> LogTable:
    """One samples file (one model, one task) as a :class:`LogTable`."""
    record, results = _record(samples)
    rows = _rows(record, _lines(record), results, keys)
    names: list[str] = []
    for row in rows.values():
        names.extend(c for c in row if c != ITEM and c not in keys and c not in names)
    table = pd.DataFrame({MODEL: record.model, TASK: record.task,
                          ITEM: pd.Series(list(rows), dtype=object),
                          EPOCH: np.zeros(len(rows), dtype=np.int64)})
    scores = {}
    for name in names:
        values = _as_float(record, name, [row.get(name, _MISSING) for row in rows.values()],
                           list(rows))
        if values is not None:
            scores[name] = values
    meta = {k: [row[k] for row in rows.values()] for k in keys}
    expected = ((results.get("n-samples") or {}).get(record.task) or {}).get("effective")
    if isinstance(expected, int) and expected != len(rows):
        warn(f"{record.where()}: the samples file holds {len(rows)} documents, the results "
             f"JSON says {expected} were evaluated")
    return LogTable(record, table.assign(**scores, **meta), list(scores))


def read_lm_eval_samples(path: PathsLike, *, metadata: str | Sequence[str] | None = None
                         ) -> pd.DataFrame:
    """Read lm-evaluation-harness's ``--log_samples`` output as a tidy per-item table.

    lm-eval (``lm_eval run ... --log_samples --output_path OUT``) writes, per model, a folder
    ``OUT/<model>/`` with ``results_<date>.json`` and one ``samples_<task>_<date>.jsonl`` per
    task. Each samples file is read with the results JSON of the same run (same date) beside
    it; lm-eval itself is not needed. The table has one row per model, task and document:
    ``model`` (lm-eval's model name: the ``pretrained=`` of the model arguments), ``task``
    (from the file name), ``item`` (``doc_id``), ``epoch`` (0: lm-eval scores each document
    once, its ``repeats`` are reduced by the task's filter before scoring), one float column
    per metric as the samples name it (``acc``, ``acc_norm``, ``exact_match``, ...;
    ``metric,filter`` as in lm-eval's results when a task has several filters) and the
    requested fields of the document.

    Parameters
    ----------
    path : path or sequence of paths
        Samples files (``samples_<task>_<date>.jsonl``) or folders searched recursively for
        them (lm-eval's ``--output_path``).
    metadata : str or sequence of str, optional
        Fields of each sample's ``doc`` to add as columns (for example ``"passage"``, a
        cluster of questions). A document without one is an error.

    Returns
    -------
    pandas.DataFrame
        Sorted by model, task, item, epoch; ``attrs`` holds the provenance as strings:
        ``harness`` (``"lm_eval"``), ``harness_version`` (lm-eval's version in the results),
        ``harness_models``, ``harness_tasks``, ``source`` (the samples files) and
        ``harness_logs`` (JSON: file, model, task, date, version of each file).

    Raises
    ------
    CubeError
        No results JSON beside a samples file; a document twice in one file, or in the
        samples of two runs of the same model and task; a requested field missing; a file
        that is not JSON or not lm-eval's. Each message names the file, model, task and
        document.

    Warns
    -----
    HarnessLogWarning
        A metric missing for some documents (NaN), a metric with no per-item value (lm-eval
        aggregates it over the corpus: left out), two runs of the same model and task, fewer
        documents than the results say were evaluated.

    See Also
    --------
    read_inspect_logs : the same table from Inspect AI's logs.

    Examples
    --------
    >>> from evaluq.io import read_lm_eval_samples
    >>> table = read_lm_eval_samples("output/", metadata="passage")  # doctest: +SKIP
    >>> table.columns.tolist()  # doctest: +SKIP
    ['model', 'task', 'item', 'epoch', 'acc', 'acc_norm', 'passage']
    """
    keys = metadata_keys(metadata)
    return combine([_read_one(f, keys) for f in _files(path)], keys)

"""What every harness reader shares: paths, metadata keys, the checks of a set of logs (missing
scores, two logs of one model and task, duplicated samples), the tidy table and its provenance.

A reader turns each log into a :class:`LogTable` (the log's :class:`LogRecord` and its rows:
``model``, ``task``, ``item``, ``epoch``, one column per score, the requested metadata), then
:func:`combine` checks them together and returns one table with the provenance in ``attrs``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evaluq._dims import EPOCH, ITEM, MODEL, TASK
from evaluq._warn import warn as issue_warning
from evaluq.errors import CubeError, HarnessLogWarning

KEYS = (MODEL, TASK, ITEM, EPOCH)
"""The columns that identify a row of a harness table, in their order."""
_FILE = "__file__"
"""A column that carries each row's log file through the checks (dropped at the end)."""
SHOWN = 5
"""How many samples a message names before it says how many more there are."""

PathsLike = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]


@dataclass(frozen=True)
class LogRecord:
    """Provenance of one log: its file, the model and task it holds, when and by what."""

    file: str
    model: str
    task: str
    date: str
    tool: str
    tool_version: str
    status: str = "success"

    def where(self) -> str:
        """``'file' (model 'm', task 't')``: how every message names a log."""
        return f"{self.file!r} (model {self.model!r}, task {self.task!r})"


@dataclass
class LogTable:
    """One log's rows (``KEYS``, the score columns, the metadata) and its provenance."""

    record: LogRecord
    table: pd.DataFrame
    scores: list[str] = field(default_factory=list)


def as_paths(paths: PathsLike, name: str = "paths") -> list[Path]:
    """A path or a sequence of paths as a non-empty list of existing ``Path``."""
    if isinstance(paths, str | os.PathLike):
        items: list[Any] = [paths]
    elif isinstance(paths, Iterable) and not isinstance(paths, bytes | dict):
        items = list(paths)
    else:
        raise TypeError(f"`{name}` must be a path or a sequence of paths; "
                        f"got {type(paths).__name__}")
    if not items:
        raise ValueError(f"`{name}` must name at least one file or folder; got an empty list")
    out = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise TypeError(f"`{name}` must hold paths; got {type(item).__name__} ({item!r})")
        p = Path(item)
        if not p.exists():
            raise FileNotFoundError(f"`{name}`: no such file or folder: {str(p)!r}")
        out.append(p)
    return out


def expand(paths: list[Path], list_folder: Callable[[Path], list[Path]], what: str,
           name: str = "paths") -> list[Path]:
    """Files given plus the logs ``list_folder`` finds in each folder; a file named twice (the
    same file in two entries, or a file inside a folder also given) is an error."""
    files: list[Path] = []
    for p in paths:
        found = list_folder(p) if p.is_dir() else [p]
        if p.is_dir() and not found:
            raise CubeError(f"`{name}`: the folder {str(p)!r} holds no {what}")
        files.extend(found)
    seen: dict[Path, Path] = {}
    for f in files:
        key = f.resolve()
        if key in seen:
            raise CubeError(f"`{name}` names the log {str(f)!r} twice (directly or through a "
                            "folder); give each log once")
        seen[key] = f
    return files


def log_files(paths: PathsLike, pattern: re.Pattern[str], list_folder: Callable[[Path], list[Path]],
              what: tuple[str, str], tool: str, form: str, note: str = "") -> list[Path]:
    """The harness's files among ``paths``: each file given must be named as ``tool`` names
    them (``pattern``, shown as ``form``), each folder is searched (``list_folder``).
    ``what``: the kind of file with its article, and its plural (``("an lm-eval samples
    file", "lm-eval samples files")``); ``note`` ends the message of a folder without any."""
    given = as_paths(paths, "path")
    for p in given:
        if p.is_file() and not pattern.match(p.name):
            raise CubeError(f"`path`: {str(p)!r} is not {what[0]} ({tool} names them {form})")
    return expand(given, list_folder, f"{what[1]} ({form}{note})", name="path")


def metadata_keys(metadata: str | Sequence[str] | None) -> list[str]:
    """``metadata=`` as a list of distinct keys, none of them a reserved column."""
    if metadata is None:
        return []
    keys = [metadata] if isinstance(metadata, str) else metadata
    if not isinstance(keys, Sequence) or not all(isinstance(k, str) for k in keys):
        raise TypeError(f"`metadata` must be a key or a list of keys (str); got {metadata!r}")
    keys = list(keys)
    if len(set(keys)) != len(keys):
        raise ValueError(f"`metadata` names a key twice; got {keys}")
    clash = [k for k in keys if k in KEYS]
    if clash:
        raise ValueError(f"`metadata` keys {clash} clash with the table's columns {list(KEYS)}; "
                         "rename them")
    return keys


def missing_metadata(record: LogRecord, key: str, sample: str, available: Iterable[str]
                     ) -> CubeError:
    """The error for a sample without a requested metadata key."""
    return CubeError(f"{record.where()}: sample {sample} has no metadata {key!r} (`metadata`); "
                     f"its metadata keys are {sorted(available)}")


def name_samples(table: pd.DataFrame, mask: Any = None) -> str:
    """``'id' (epoch e), ...`` for the first rows of ``table[mask]``, and how many more."""
    rows = table if mask is None else table[mask]
    shown = [f"{item!r} (epoch {epoch})"
             for item, epoch in zip(rows[ITEM][:SHOWN], rows[EPOCH][:SHOWN], strict=True)]
    more = len(rows) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def warn(message: str) -> None:
    """Emit a :class:`HarnessLogWarning` pointing at the caller of the reader."""
    issue_warning(message, HarnessLogWarning)


def _check_columns(parts: list[LogTable], keys: list[str]) -> None:
    """A score column may not be named like a key column or a requested metadata key."""
    for part in parts:
        clash = [s for s in part.scores if s in KEYS or s in keys]
        if clash:
            raise CubeError(f"{part.record.where()}: the scores {clash} are named like the "
                            f"table's columns {[*KEYS, *keys]}; ask for other metadata keys")


def _warn_same_model_and_task(parts: list[LogTable]) -> None:
    """Two logs of one model and task are read as one run (their samples are combined); a
    sample that both hold is then a duplicate (an error in :func:`_check_duplicates`)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for part in parts:
        groups.setdefault((part.record.model, part.record.task), []).append(part.record.file)
    for (model, task), files in groups.items():
        if len(files) > 1:
            warn(f"{len(files)} logs hold model {model!r} on task {task!r}: {files}; their "
                 "samples are combined as one run (a sample in two of them is an error). "
                 "Give only one log per model and task if these are reruns")


def _check_duplicates(table: pd.DataFrame) -> None:
    """Every (model, task, item, epoch) once: otherwise name the files, model and sample."""
    dup = table.duplicated(list(KEYS), keep=False)
    if not dup.any():
        return
    rows = table[dup]
    first = rows.iloc[0]
    same = rows[(rows[MODEL] == first[MODEL]) & (rows[TASK] == first[TASK])
                & (rows[ITEM] == first[ITEM]) & (rows[EPOCH] == first[EPOCH])]
    files = sorted(set(same[_FILE]))
    n = int(rows.drop_duplicates(list(KEYS)).shape[0])
    raise CubeError(
        f"duplicated sample ids: model {first[MODEL]!r}, task {first[TASK]!r}, sample "
        f"{first[ITEM]!r} (epoch {first[EPOCH]}) appears {len(same)} times, in {files}; "
        f"{n} sample(s) in all are duplicated ({name_samples(rows.drop_duplicates(list(KEYS)))})"
        ". Each sample and epoch must appear once per model and task: give one log per run")


def _warn_missing_scores(table: pd.DataFrame, parts: list[LogTable]) -> None:
    """A score missing (NaN) for some samples of a log, among the scores of its task."""
    by_task: dict[str, list[str]] = {}
    for part in parts:
        cols = by_task.setdefault(part.record.task, [])
        cols.extend(s for s in part.scores if s not in cols)
    for part in parts:
        rows = table[table[_FILE] == part.record.file]
        for col in by_task[part.record.task]:
            missing = rows[col].isna()
            if missing.any():
                warn(f"{part.record.where()}: score {col!r} is missing for "
                     f"{int(missing.sum())} of {len(rows)} samples: "
                     f"{name_samples(rows, missing)}. They stay in the table as NaN")


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    """Rows by model, task, item, epoch (items of mixed types: numbers before strings)."""
    try:
        out = table.sort_values(list(KEYS), kind="stable")
    except TypeError:
        out = table.sort_values(
            list(KEYS), kind="stable",
            key=lambda c: c.map(lambda v: (isinstance(v, str), v)) if c.name == ITEM else c)
    return out.reset_index(drop=True)


def provenance_attrs(records: Sequence[LogRecord]) -> dict[str, str]:
    """The table's ``attrs`` (strings, so that a cube keeps them through NetCDF): the tool and
    its versions, the files, and one JSON record per log (file, model, task, date, ...)."""
    tools = sorted({r.tool for r in records})
    versions = sorted({r.tool_version for r in records})
    return {
        "harness": ", ".join(tools),
        "harness_version": ", ".join(versions),
        "harness_models": ", ".join(sorted({r.model for r in records})),
        "harness_tasks": ", ".join(sorted({r.task for r in records})),
        "source": "; ".join(r.file for r in records),
        "harness_logs": json.dumps([asdict(r) for r in records]),
    }


def combine(parts: list[LogTable], keys: list[str]) -> pd.DataFrame:
    """One tidy table from the logs' tables, checked together, provenance in ``attrs``."""
    _check_columns(parts, keys)
    _warn_same_model_and_task(parts)
    frames = [p.table.assign(**{_FILE: p.record.file}) for p in parts]
    table = pd.concat(frames, ignore_index=True, sort=False)
    _check_duplicates(table)
    _warn_missing_scores(table, parts)
    scores: list[str] = []
    for part in parts:
        scores.extend(s for s in part.scores if s not in scores)
    table = _sorted(table[[*KEYS, *scores, *keys]])
    table.attrs.update(provenance_attrs([p.record for p in parts]))
    return table

"""Inspect AI's logs (``.eval`` and ``.json``) as a tidy per-item table, read with inspect_ai."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd

from evaluq._dims import EPOCH, ITEM, MODEL, TASK
from evaluq._harness._common import (
    LogRecord,
    LogTable,
    PathsLike,
    as_paths,
    combine,
    expand,
    metadata_keys,
    missing_metadata,
    name_samples,
    warn,
)
from evaluq._validation import check_bool
from evaluq.errors import CubeError

SUFFIXES = (".eval", ".json")
"""The suffixes of Inspect's two log formats."""
_EXCLUDE = frozenset({"messages", "events", "store", "attachments", "output"})
"""Sample fields not needed for scores (skipped while reading ``.eval`` logs)."""
_CONVERSION_LOGGER = "inspect_ai.scorer._metric"
"""The logger through which Inspect's ``value_to_float`` says it could not convert a value."""
_MISSING = object()


class _InspectAPI:
    """The parts of inspect_ai the reader uses, imported once (inspect_ai is optional)."""

    def __init__(self) -> None:
        try:
            import inspect_ai
            from inspect_ai.log import (
                list_eval_logs,
                read_eval_log,
                read_eval_log_sample_summaries,
            )
            from inspect_ai.scorer import value_to_float
        except ImportError as err:
            raise ImportError(
                "evaluq.io.read_inspect_logs reads Inspect logs with Inspect's own API, and "
                "inspect_ai is not installed: `pip install 'evaluq[inspect]'` (or `pip install "
                f"inspect-ai`) ({err})") from err
        self.version = str(getattr(inspect_ai, "__version__", "unknown"))
        self.list_eval_logs = list_eval_logs
        self.read_eval_log = read_eval_log
        self.read_eval_log_sample_summaries = read_eval_log_sample_summaries
        self.to_float: Callable[[Any], float] = value_to_float()


def _local(name: str) -> Path:
    """A path from what ``list_eval_logs`` returns (``file://`` URIs)."""
    parsed = urlparse(name)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(name)


def _files(paths: PathsLike, api: _InspectAPI) -> list[Path]:
    """The log files: those given, and those Inspect lists in each folder (recursively)."""
    given = as_paths(paths)
    for p in given:
        if p.is_file() and p.suffix.lower() not in SUFFIXES:
            raise CubeError(f"`paths`: {str(p)!r} is not an Inspect log (suffix {p.suffix!r}; "
                            f"Inspect writes {' or '.join(SUFFIXES)})")

    def listed(folder: Path) -> list[Path]:
        return sorted(_local(info.name) for info in api.list_eval_logs(str(folder)))

    return expand(given, listed, "Inspect logs (.eval or .json)")


@contextmanager
def _conversion_log() -> Iterator[list[logging.LogRecord]]:
    """Collect the messages of Inspect's ``value_to_float`` (it logs a value it cannot
    convert and maps it to 0) instead of letting them reach the console."""
    logger = logging.getLogger(_CONVERSION_LOGGER)
    caught: list[logging.LogRecord] = []

    class _Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            caught.append(record)

    handler, level, propagate = _Catch(logging.WARNING), logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        yield caught
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def _floats(values: list[Any], to_float: Callable[[Any], float]) -> tuple[np.ndarray, list[Any]]:
    """Inspect's ``value_to_float`` of each value (each distinct value converted once); a
    missing score is NaN. Also the values Inspect could not convert (it maps them to 0)."""
    cache: dict[tuple[str, Any], tuple[float, bool]] = {}
    out = np.full(len(values), np.nan)
    failed: list[Any] = []
    with _conversion_log() as caught:
        for i, value in enumerate(values):
            if value is _MISSING or value is None:
                continue
            try:
                key = (type(value).__name__, value)
                hit = cache.get(key)
            except TypeError:  # a list or dict: not hashable
                key, hit = None, None
            if hit is None:
                before = len(caught)
                hit = (float(to_float(value)), len(caught) > before)
                if key is not None:
                    cache[key] = hit
            out[i] = hit[0]
            if hit[1] and value not in failed:
                failed.append(value)
    return out, failed


def _score_layout(samples: Sequence[Any]) -> dict[str, list[str] | None]:
    """Scorer -> None (one value per sample) or the keys of its dict values, in log order."""
    layout: dict[str, list[str] | None] = {}
    for sample in samples:
        for scorer, score in (sample.scores or {}).items():
            if isinstance(score.value, dict):
                keys = layout.get(scorer) or []
                keys.extend(k for k in score.value if k not in keys)
                layout[scorer] = keys
            else:
                layout.setdefault(scorer, None)
    return layout


def _column_names(layout: dict[str, list[str] | None]) -> dict[tuple[str, str | None], str]:
    """(scorer, key) -> column: a scorer's name, or the key of a dict value (as Inspect names
    that metric), ``scorer/key`` when the key alone would be ambiguous."""
    keys = [k for ks in layout.values() if ks is not None for k in ks]
    names: dict[tuple[str, str | None], str] = {}
    for scorer, ks in layout.items():
        if ks is None:
            names[(scorer, None)] = scorer
            continue
        for k in ks:
            ambiguous = keys.count(k) > 1 or (k in layout and layout[k] is None)
            names[(scorer, k)] = f"{scorer}/{k}" if ambiguous else k
    return names


def _raw(sample: Any, scorer: str, key: str | None) -> Any:
    """One sample's raw score value for a scorer (and a key of its dict value)."""
    score = (sample.scores or {}).get(scorer)
    if score is None:
        return _MISSING
    if key is None:
        return score.value
    return score.value.get(key, _MISSING) if isinstance(score.value, dict) else _MISSING


def _scores(record: LogRecord, samples: Sequence[Any], api: _InspectAPI
            ) -> dict[str, np.ndarray]:
    """One float column per scorer (or dict key), mapped by Inspect's ``value_to_float``."""
    columns: dict[str, np.ndarray] = {}
    for (scorer, key), name in _column_names(_score_layout(samples)).items():
        values, failed = _floats([_raw(s, scorer, key) for s in samples], api.to_float)
        if failed:
            warn(f"{record.where()}: Inspect's value_to_float cannot convert the values "
                 f"{failed[:5]} of score {name!r} to numbers and maps them to 0 (as Inspect's "
                 "own metrics do); check the scorer")
        columns[name] = values
    return columns


def _metadata(record: LogRecord, samples: Sequence[Any], keys: list[str]) -> dict[str, list]:
    """The requested metadata of every sample (a sample without one is an error)."""
    columns: dict[str, list] = {k: [] for k in keys}
    for sample in samples:
        for k in keys:
            if k not in sample.metadata:
                raise missing_metadata(record, k, f"{sample.id!r} (epoch {sample.epoch})",
                                       sample.metadata)
            columns[k].append(sample.metadata[k])
    return columns


def _record(log: Any, file: Path) -> LogRecord:
    """The provenance of one log: Inspect's version that wrote it, model, task, date."""
    spec = log.eval
    return LogRecord(file=str(file), model=str(spec.model), task=str(spec.task),
                     date=str(spec.created), tool="inspect_ai",
                     tool_version=str((spec.packages or {}).get("inspect_ai", "unknown")),
                     status=str(log.status))


def _check_status(log: Any, samples: Sequence[Any] | None, record: LogRecord,
                  allow_incomplete: bool) -> None:
    """A run that did not finish is an error, or (``allow_incomplete=True``) a warning."""
    if record.status == "success":
        if not samples:
            raise CubeError(f"{record.where()}: the log holds no samples (was it written with "
                            "log_samples=False?); evaluq needs the per-sample scores")
        return
    error = getattr(log.error, "message", None)
    n = len(samples or [])
    told = (f"the run did not finish (status {record.status!r}"
            f"{': ' + str(error) if error else ''}); it holds {n} samples")
    if not allow_incomplete:
        raise CubeError(f"{record.where()}: {told}. Rerun it (`inspect eval-retry`) or pass "
                        "allow_incomplete=True to read the samples it holds")
    warn(f"{record.where()}: {told}, read as they are (allow_incomplete=True)")


def _warn_samples(log: Any, samples: Sequence[Any], record: LogRecord, table: pd.DataFrame
                  ) -> None:
    """Samples that errored, were invalidated, or are absent from the log."""
    errored = np.array([s.error is not None for s in samples], dtype=bool)
    if errored.any():
        first = next(s.error for s in samples if s.error is not None)
        warn(f"{record.where()}: {int(errored.sum())} samples errored: "
             f"{name_samples(table, errored)} (first error: "
             f"{getattr(first, 'message', first)}); their scores are those the log holds "
             "(a missing one is NaN)")
    invalid = np.array([getattr(s, "invalidation", None) is not None for s in samples],
                       dtype=bool)
    if invalid.any():
        warn(f"{record.where()}: {int(invalid.sum())} samples were invalidated in the log: "
             f"{name_samples(table, invalid)}; they are kept as read (drop their rows to "
             "leave them out)")
    ids = log.eval.dataset.sample_ids
    expected = len(ids) * (log.eval.config.epochs or 1) if ids is not None else len(samples)
    if record.status == "success" and len(samples) < expected:
        warn(f"{record.where()}: the log holds {len(samples)} samples x epochs of the "
             f"{expected} its dataset and epochs call for")


def _read_log(file: Path, keys: list[str], api: _InspectAPI) -> tuple[Any, Sequence[Any] | None]:
    """The log and its samples. An ``.eval`` log read for its scores alone gives its sample
    summaries (id, epoch, scores, error: about ten times faster than the samples); the
    samples themselves are read (without messages, events, store, attachments, output) for
    metadata (the summaries hold it shortened) and for a log with invalidated samples."""
    try:
        if file.suffix.lower() == ".eval" and not keys:
            header = api.read_eval_log(str(file), header_only=True)
            if not header.invalidated:
                return header, api.read_eval_log_sample_summaries(str(file))
        log = api.read_eval_log(str(file), exclude_fields=set(_EXCLUDE))
    except Exception as err:
        raise CubeError(f"`paths`: cannot read the Inspect log {str(file)!r}: "
                        f"{type(err).__name__}: {err}") from err
    return log, log.samples


def _read_one(file: Path, keys: list[str], allow_incomplete: bool, api: _InspectAPI
              ) -> LogTable:
    """One log as a :class:`LogTable`."""
    log, read = _read_log(file, keys, api)
    record = _record(log, file)
    _check_status(log, read, record, allow_incomplete)
    samples = read or []
    table = pd.DataFrame({MODEL: record.model, TASK: record.task,
                          ITEM: pd.Series([s.id for s in samples], dtype=object),
                          EPOCH: np.array([s.epoch for s in samples], dtype=np.int64)})
    if samples:
        _warn_samples(log, samples, record, table)
    scores = _scores(record, samples, api)
    table = table.assign(**scores, **_metadata(record, samples, keys))
    return LogTable(record, table, list(scores))


def read_inspect_logs(paths: PathsLike, *, metadata: str | Sequence[str] | None = None,
                      allow_incomplete: bool = False) -> pd.DataFrame:
    """Read Inspect AI's evaluation logs as a tidy per-item table.

    Each log (one model on one task) is read with inspect_ai's own API
    (:func:`inspect_ai.log.read_eval_log`; folders listed with
    :func:`inspect_ai.log.list_eval_logs`), so every log format Inspect reads is read. The
    table has one row per model, task, sample and epoch: the columns ``model``, ``task``,
    ``item`` (the sample id), ``epoch`` (Inspect's, from 1), one float column per score and
    the requested sample metadata. Feed it to :func:`evaluq.from_items` (``item="item"``,
    ``seed="epoch"``, ``cluster=`` a metadata column) or :func:`evaluq.item_means`.

    Scores are named as Inspect names them: a scorer's name (``match``, ``includes``, ...)
    or, for a scorer whose value is a dict, the dict's keys (``scorer/key`` when a key alone
    is ambiguous). Values map to floats through Inspect's own ``value_to_float()``:
    ``"C"`` -> 1, ``"P"`` -> 0.5, ``"I"`` and ``"N"`` -> 0, ``"yes"`` / ``"true"`` -> 1,
    ``"no"`` / ``"false"`` -> 0, numeric strings and numbers as numbers; a value it cannot
    convert maps to 0, as in Inspect's metrics, with a :class:`~evaluq.errors.HarnessLogWarning`.
    A missing score (a sample that errored, Inspect's unscored NaN) is NaN.

    Parameters
    ----------
    paths : path or sequence of paths
        ``.eval`` / ``.json`` log files, or folders searched recursively for them.
    metadata : str or sequence of str, optional
        Sample metadata keys to add as columns (for example ``"passage"``, the cluster of
        questions asked about one passage). A sample without one is an error.
    allow_incomplete : bool, default False
        Read the samples of a run that did not finish (status other than ``"success"``)
        with a warning instead of raising.

    Returns
    -------
    pandas.DataFrame
        Sorted by model, task, item, epoch. ``attrs`` holds the provenance (strings):
        ``harness`` (``"inspect_ai"``), ``harness_version`` (Inspect's version that wrote the
        logs), ``harness_models``, ``harness_tasks``, ``source`` (the files) and
        ``harness_logs`` (JSON: file, model, task, date, version and status of each log).

    Raises
    ------
    ImportError
        inspect_ai is not installed (``pip install 'evaluq[inspect]'``).
    CubeError
        A run that did not finish; a sample (and epoch) twice for one model and task (in one
        log or two); a requested metadata key missing; a file given twice; a file Inspect
        cannot read. Each message names the file, the model, the task and the sample.

    Warns
    -----
    HarnessLogWarning
        A score missing for some samples, samples that errored or were invalidated, two logs
        of the same model and task (combined as one run), values Inspect cannot convert.

    See Also
    --------
    read_lm_eval_samples : the same table from lm-evaluation-harness's sample logs.

    Examples
    --------
    >>> from evaluq.io import read_inspect_logs
    >>> table = read_inspect_logs("logs/", metadata=["passage"])  # doctest: +SKIP
    >>> table.columns.tolist()  # doctest: +SKIP
    ['model', 'task', 'item', 'epoch', 'match', 'passage']
    """
    keys = metadata_keys(metadata)
    check_bool("allow_incomplete", allow_incomplete)
    api = _InspectAPI()
    parts = [_read_one(f, keys, allow_incomplete, api) for f in _files(paths, api)]
    return combine(parts, keys)

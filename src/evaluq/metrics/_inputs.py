"""Parsing and validating per-item targets and predictions (shared by metrics and tests).

:func:`prepare_inputs` turns what a user hands over (lists, numpy arrays, DataArrays with an
``item`` dim, or file paths) into the arrays that the :class:`~evaluq.metrics.Metric` protocol
works on: integer class codes for hard labels, probability rows for soft labels, floats for
regression. It is the one validation function behind every public metric and behind
:func:`evaluq.bootstrap_test`.
"""

from __future__ import annotations

import io
import os
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import CLASS, ITEM
from evaluq._validation import check_choice, check_real, text_encoding
from evaluq._warn import warn
from evaluq.errors import EvaluqWarning
from evaluq.metrics._base import MetricKind
from evaluq.metrics._text_labels import header_lines, type_label_texts

_KINDS = ("hard", "soft", "regression")
_SUFFIXES = (".txt", ".csv", ".tsv", ".npy")


@dataclass(frozen=True)
class PreparedInputs:
    """Validated, encoded targets and predictions.

    Attributes
    ----------
    kind
        ``"hard"``, ``"soft"`` or ``"regression"``.
    targets
        ``(N,)`` int64 class codes (hard), ``(N, K)`` float64 probability rows (soft) or
        ``(N,)`` float64 values (regression).
    predictions
        One array per prediction, encoded like ``targets``; DataArray predictions may carry
        extra leading axes (``(..., N)`` or ``(..., N, K)``) when ``allow_leading=True``.
    n_classes
        ``K``: the size of the label set (hard) or the number of columns (soft); 0 for
        regression.
    labels
        Hard labels: the label set, ``labels[code]`` is the label of a code (sorted union of
        the labels seen, or the user's ``labels`` in the user's order). Soft labels: the
        ``class`` coordinate of a DataArray input, else ``0..K-1``. Regression: None.
    leading
        Per prediction, the ``(dims, coords)`` of its leading axes (empty for plain arrays).
    """

    kind: MetricKind
    targets: np.ndarray
    predictions: tuple[np.ndarray, ...]
    n_classes: int
    labels: np.ndarray | None
    leading: tuple[tuple[tuple[Hashable, ...], dict[Hashable, Any]], ...] = field(repr=False)

    @property
    def n_items(self) -> int:
        """Number of items ``N``."""
        return int(self.targets.shape[0])


# --- files --------------------------------------------------------------------------------------

def load_predictions(path: str | os.PathLike[str]) -> np.ndarray:
    """Read per-item labels, values or probability rows from a file.

    Formats (chosen by the file suffix):

    - ``.txt``: one label or value per line. The values become integers if every line parses as
      an integer, else floats if every line parses as a number, else strings. Blank lines are
      an error (nothing is silently dropped), except at the end. (:func:`prepare_inputs`, and
      so every metric and :func:`evaluq.bootstrap_test`, reads ``.txt`` files as text and
      types them together instead: see there.)
    - ``.csv`` / ``.tsv``: rows of numbers separated by ``,`` / a tab, one row per item (for
      example probability rows over the classes). A first line with no number in it (the
      classes' names, ``neg,pos``) is a header and is skipped; every other line must be
      numeric. A single column gives a 1-D array. (:func:`prepare_inputs` matches the
      classes of files with such a header by name: see there.)

    Text is UTF-8, or the encoding its byte-order mark names.
    - ``.npy``: a numpy array saved with :func:`numpy.save` (no pickles).

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    numpy.ndarray
        1-D for labels and values, 2-D ``(item, class)`` for probability rows.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from evaluq.metrics import load_predictions
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = pathlib.Path(d) / "h0.txt"
    ...     _ = f.write_text("pos\\nneg\\npos\\n")
    ...     load_predictions(f).tolist()
    ['pos', 'neg', 'pos']
    """
    return _read_file(path)[0]


def _read_file(path: str | os.PathLike[str], as_text: bool = False
               ) -> tuple[np.ndarray, list[str] | None]:
    """:func:`load_predictions`'s array and, for a ``.csv`` / ``.tsv`` of rows with a header
    line, the header's names (else None). ``as_text``: a ``.txt`` file's lines as strings,
    untyped (:func:`prepare_inputs` types them with the other inputs)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"`path`: prediction file {str(p)!r} must end in one of "
                         f"{', '.join(_SUFFIXES)}; got {suffix or 'no suffix'!r}")
    if not p.is_file():
        raise FileNotFoundError(f"`path`: prediction file {str(p)!r} does not exist")
    if suffix == ".npy":
        return np.load(p, allow_pickle=False), None
    raw = p.read_bytes()
    try:
        text = raw.decode(text_encoding(raw[:4]))
    except UnicodeDecodeError:
        raise ValueError(f"`path`: prediction file {str(p)!r} is not UTF-8 text: save it as "
                         f"UTF-8") from None
    if not text.strip():
        raise ValueError(f"`path`: prediction file {str(p)!r} is empty")
    if suffix == ".txt":
        lines = [line.strip() for line in text.splitlines()]
        while not lines[-1]:           # blank lines at the end are no labels (lengths are
            lines.pop()                # checked against the targets')
        blank = [i + 1 for i, line in enumerate(lines) if not line]
        if blank:
            raise ValueError(f"`path`: prediction file {str(p)!r} has blank line(s) {blank[:5]}; "
                             "every line must hold one label")
        values = np.array(lines)
        if as_text:
            return values, None
        for dtype in (np.int64, np.float64):
            try:
                return values.astype(dtype), None
            except (ValueError, OverflowError):
                pass
        return values, None
    return _read_rows(p, text, suffix)


def _read_rows(p: Path, text: str, suffix: str) -> tuple[np.ndarray, list[str] | None]:
    """A ``.csv`` / ``.tsv`` file's rows of numbers and its header's names (or None)."""
    delimiter = "," if suffix == ".csv" else "\t"
    first, _, rest = text.lstrip("\r\n").partition("\n")
    header = None
    if not any(_is_number(field) for field in first.split(delimiter)):
        text = rest                     # a header: the classes' names, not a row
        header = [name.strip() for name in first.rstrip("\r").split(delimiter)]
    try:
        rows = np.loadtxt(io.StringIO(text), delimiter=delimiter, dtype=np.float64, ndmin=2)
    except ValueError as err:
        raise ValueError(_unreadable_rows(p, text, delimiter, header is not None, err)) from None
    if rows.shape[1] == 1:
        return rows[:, 0], None
    return rows, header if header is not None and len(header) == rows.shape[1] else None


def _unreadable_rows(p: Path, text: str, delimiter: str, header: bool, err: ValueError) -> str:
    """Why rows of a ``.csv`` / ``.tsv`` are no numbers: an empty cell (a missing value), text
    (labels, which go elsewhere) or rows of different lengths, named by the row."""
    after = " after the header" if header else ""
    widths: dict[int, int] = {}
    for i, line in enumerate(text.splitlines()):
        cells = [c.strip() for c in line.split(delimiter)] if line.strip() else []
        bad = next((c for c in cells if not _is_number(c)), None)
        if cells and widths.setdefault(len(cells), i + 1) == i + 1 and len(widths) > 1:
            first = min(widths.values())
            return (f"`path`: prediction file {str(p)!r} has rows of different lengths: row "
                    f"{first}{after} has {next(k for k, v in widths.items() if v == first)} "
                    f"values, row {i + 1} {len(cells)}: every row holds one value per class")
        if bad is None:
            continue
        where = f"row {i + 1}{after}"
        if bad == "":
            return (f"`path`: prediction file {str(p)!r} has an empty cell in {where} "
                    f"({line.strip()!r}): a missing value; every item needs every column's "
                    "value (remove that item from every file, or fill it)")
        return (f"`path`: prediction file {str(p)!r} holds {bad!r} in {where}, not a number: "
                f"{p.suffix} files hold probability rows, numbers only (one column per class; "
                f"a first line of names is a header). {_LABEL_FILES}")
    return (f"could not read prediction file {str(p)!r} as rows of numbers separated by "
            f"{delimiter!r} ({err})")


_LABEL_FILES = ("Labels go one per line in a .txt file; a table of labels (an item id "
                "column, one column per system) is read with pandas, "
                "pd.read_csv(path, index_col='id')['label'] (Series are paired by their index), "
                "or given whole to `evaluq test TABLE --columns TARGET H0 H1`")
"""Where labels go, for the errors of a .csv / .tsv read as probability rows."""


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --- arrays -------------------------------------------------------------------------------------

@dataclass
class _Raw:
    name: str
    values: np.ndarray
    leading_dims: tuple[Hashable, ...] = ()
    leading_coords: dict[Hashable, Any] = field(default_factory=dict)
    item_index: Any = None
    class_index: Any = None
    has_class_dim: bool = False
    source: str = "array"   # "array", "dataarray", "pandas", "file" (a header) or "text" (a
                            # .txt file's lines, typed with the others: _type_texts)


def item_dims(name: str, obj: xr.DataArray) -> tuple[str, ...]:
    """The ``(item[, class])`` dims of a DataArray of targets or predictions; an error naming
    ``name`` when it has no ``item`` dim."""
    if ITEM not in obj.dims:
        raise ValueError(f"`{name}` must have an {ITEM!r} dim; got dims {list(obj.dims)}")
    return (ITEM, CLASS) if CLASS in obj.dims else (ITEM,)


def pandas_names(obj: pd.Series | pd.DataFrame) -> tuple[pd.Index, pd.Index | None]:
    """The item names (the index) of a Series or DataFrame and, for a DataFrame, the class
    names (its columns; None for the default ``0..K-1`` of ``pd.DataFrame(array)``)."""
    if isinstance(obj, pd.Series):
        return obj.index, None
    cols = obj.columns
    default = isinstance(cols, pd.RangeIndex) and cols.start == 0 and cols.step == 1
    return obj.index, None if default else cols


def _to_raw(name: str, obj: Any, allow_leading: bool) -> _Raw:
    if isinstance(obj, str | os.PathLike):
        values, header = _read_file(obj, as_text=True)
        text = Path(obj).suffix.lower() == ".txt"
        return _Raw(name, values, class_index=header,
                    source="text" if text else "file" if header is not None else "array")
    if isinstance(obj, pd.Series | pd.DataFrame):
        index, columns = pandas_names(obj)
        return _Raw(name, obj.to_numpy(), item_index=index, class_index=columns,
                    source="pandas")
    if isinstance(obj, xr.Dataset):
        raise TypeError(f"`{name}` must be an array, a DataArray or a file path; got a Dataset "
                        "(select one variable)")
    if isinstance(obj, xr.DataArray):
        tail = item_dims(name, obj)
        lead = tuple(d for d in obj.dims if d not in tail)
        if lead and not allow_leading:
            raise ValueError(f"`{name}` must have dims {list(tail)} only; got {list(obj.dims)}")
        da = obj.transpose(*lead, *tail)
        coords = {d: da[d].values for d in lead if d in da.coords}
        return _Raw(
            name, np.asarray(da.values), lead, coords,
            item_index=da[ITEM].values if ITEM in da.coords else None,
            class_index=da[CLASS].values if CLASS in da.coords else None,
            has_class_dim=CLASS in obj.dims, source="dataarray",
        )
    try:
        values = np.asarray(obj)
    except ValueError as err:  # ragged lists
        raise ValueError(f"`{name}` could not be read as an array: {err}") from None
    return _Raw(name, values)


def _type_texts(raws: Sequence[_Raw], kind: str | None,
                labels: Sequence[Any] | np.ndarray | None) -> Any:
    """Type the ``.txt`` inputs' lines together (:func:`type_label_texts`), with ``labels``
    when given as text; returns ``labels``, typed like them."""
    texts = [r for r in raws if r.source == "text"]
    if not texts:
        return labels
    if (header := header_lines([r.name for r in texts], [r.values for r in texts])) is not None:
        warn(header, EvaluqWarning)
    names, arrays = [r.name for r in texts], [r.values for r in texts]
    with_labels = labels is not None and not isinstance(labels, str | bytes) and \
        np.asarray(labels).dtype.kind in "USi"
    if with_labels:
        names, arrays = [*names, "labels"], [*arrays, np.asarray(labels).astype(str)]
    typed = type_label_texts(names, arrays, kind=kind)
    for raw, values in zip(texts, typed, strict=False):
        raw.values = values
    return typed[-1] if with_labels else labels


def read_input_files(named: Sequence[tuple[str, Any]], *, kind: str | None = None,
                     labels: Sequence[Any] | np.ndarray | None = None
                     ) -> tuple[list[Any], Any]:
    """The inputs ``(name, obj)`` with every file path read as :func:`prepare_inputs` reads
    it: the ``.txt`` files' lines typed together (with ``labels`` when given as text; see
    :mod:`evaluq.metrics._text_labels`), other files by :func:`load_predictions`, a file
    whose header names its classes as a DataFrame with those columns (so that its classes
    are matched by name, never by position); inputs that are no path are returned
    unchanged. Returns the inputs and ``labels``, typed like the files. For the readers that
    take the files before :func:`prepare_inputs` does (dask inputs,
    :class:`evaluq.Experiment`), so that a file reads as in memory."""
    raws = {i: _to_raw(name, obj, allow_leading=False)
            for i, (name, obj) in enumerate(named) if isinstance(obj, str | os.PathLike)}
    labels = _type_texts(list(raws.values()), kind, labels)
    out = [obj if i not in raws else raws[i].values if raws[i].class_index is None
           else pd.DataFrame(raws[i].values, columns=pd.Index(raws[i].class_index))
           for i, (_, obj) in enumerate(named)]
    return out, labels


def _has_nan(values: np.ndarray) -> bool:
    if values.dtype.kind in "fc":
        return bool(np.isnan(values).any())
    if values.dtype.kind == "O":
        return bool(pd.isna(values).any())
    return False


def _non_integer(values: np.ndarray) -> bool:
    """True if ``values`` is a float array holding a value that is not a whole number."""
    return values.dtype.kind == "f" and bool((values != np.round(values)).any())


def _detect_kind(targets: _Raw, preds: Sequence[_Raw]) -> MetricKind:
    _check_one_kind(targets, preds)
    if targets.values.ndim >= 2 or targets.has_class_dim:
        return "soft"
    if _non_integer(targets.values):
        return "regression"
    stray = next((r for r in preds if _non_integer(r.values)), None)
    if stray is not None:               # whole-number targets: labels, or real values?
        values = stray.values
        odd = np.flatnonzero((values != np.round(values)).ravel())
        at = np.unravel_index(odd[0], values.shape)[-1]
        place = f"line {at + 1}" if stray.source == "text" else f"item {at}"
        raise ValueError(stray_value_message(stray.name, odd.size, place,
                                             float(values.ravel()[odd[0]])))
    return "hard"


def _check_one_kind(targets: _Raw, preds: Sequence[_Raw], kind: str | None = None) -> None:
    """Refuse label (1-D) targets with probability-row (2-D) predictions, or the other way
    round (:func:`mixed_kinds_message`)."""
    mixed = next((r for r in preds if {targets.values.ndim, r.values.ndim
                                       - len(r.leading_dims)} == {1, 2}), None)
    if mixed is not None:
        raise ValueError(mixed_kinds_message(targets.name, targets.values.shape, mixed.name,
                                             mixed.values.shape, kind))


def stray_value_message(name: str, count: int, place: str, value: float) -> str:
    """The error for whole-number targets with ``count`` non-integer values in prediction
    ``name`` (the first at ``place``): labels with a malformed value, or real values?"""
    return (f"`targets` holds whole numbers (class labels?) but `{name}` holds {count} "
            f"non-integer value(s) ({place}: {value:g}): the test would compare real values "
            "(mse, mae), not labels. Pass kind='regression' (or regression metrics) if they "
            "are real values; if they are class labels, that value is malformed: fix it (or, "
            "for label files, pass kind='hard' to read every label as written, that one a "
            "label of its own)")


def mixed_kinds_message(target_name: str, target_shape: tuple[int, ...], name: str,
                        shape: tuple[int, ...], kind: str | None = None) -> str:
    """The error for hard (1-D) targets with probability rows ``(item, class)`` as a
    prediction, or (``kind="soft"``, the other way round) probability-row targets with
    labels: what was detected and the two remedies (``kind`` given: the kind asked for)."""
    asked = f"with kind={kind!r}, " if kind is not None else ""
    if len(target_shape) >= 2:
        return (f"{asked}`{target_name}` holds probability rows (shape {target_shape}) but "
                f"`{name}` holds one label or value per item (shape {shape}): a test compares "
                "inputs of one kind. For the soft metrics (cross_entropy, js_divergence, ...) "
                f"give `{name}` as probability rows too; for the hard metrics (accuracy, f1, "
                f"...) give the targets' labels (e.g. each row's argmax) with kind='hard'")
    k = shape[-1]
    return (f"{asked}`{target_name}` holds one label per item (shape {target_shape}: hard "
            f"labels) but `{name}` holds probability rows (shape {shape}: {k} classes). A "
            "test compares inputs of one kind: for the soft metrics (cross_entropy, the log "
            "loss of the true class; js_divergence, ...) give the targets as one-hot "
            f"probability rows in the predictions' column order (`np.eye({k})[targets]` when "
            f"the labels are the column indices 0..{k - 1}; a .csv of rows) with "
            "kind='soft'; for the hard metrics (accuracy, f1, ...) give each system's "
            f"predicted labels (`{name}.argmax(axis=1)`, mapped to the label names)")


def _check_shapes(kind: MetricKind, targets: _Raw, preds: Sequence[_Raw]) -> None:
    core = 2 if kind == "soft" else 1
    shape_text = "(item, class)" if core == 2 else "(item,)"
    _check_one_kind(targets, preds, kind)
    for raw in (targets, *preds):
        ndim = raw.values.ndim - len(raw.leading_dims)
        if ndim != core:
            raise ValueError(f"`{raw.name}` must be {core}-D {shape_text} for {kind} inputs; "
                             f"got shape {raw.values.shape}")
    n_items = targets.values.shape[0]
    if n_items == 0:
        raise ValueError(f"`{targets.name}` is empty")
    item_axis = -2 if core == 2 else -1
    for raw in preds:
        if raw.values.shape[item_axis] != n_items:
            raise ValueError(f"`{raw.name}` has {raw.values.shape[item_axis]} items but "
                             f"`{targets.name}` has {n_items}")
        if core == 2 and raw.values.shape[-1] != targets.values.shape[-1]:
            raise ValueError(f"`{raw.name}` has {raw.values.shape[-1]} classes but "
                             f"`{targets.name}` has {targets.values.shape[-1]}")
    if core == 2 and targets.values.shape[-1] < 2:
        raise ValueError(f"soft labels need at least 2 classes; `{targets.name}` has "
                         f"{targets.values.shape[-1]}")
    _align(targets, preds, "item_index", ITEM, 0)
    if core == 2:
        _align(targets, preds, "class_index", CLASS, 1)


def align_by_name(targets: Any, prediction: Any, name: str = "predictions") -> Any:
    """``prediction`` put in the order of the targets' item (and class) names, as
    :func:`prepare_inputs` pairs them (numpy arrays when names were compared), or an error
    when their names differ. Inputs that name no items are returned unchanged."""
    raws = [_to_raw("targets", targets, False), _to_raw(name, prediction, False)]
    if any(r.item_index is None and r.class_index is None for r in raws):
        return prediction
    _align(raws[0], raws[1:], "item_index", ITEM, 0)
    if raws[0].values.ndim == raws[1].values.ndim == 2:
        _align(raws[0], raws[1:], "class_index", CLASS, 1)
    return raws[1].values


_NAMES_OF = {("pandas", ITEM): "index", ("pandas", CLASS): "columns",
             ("file", CLASS): "header"}


def _align(targets: _Raw, preds: Sequence[_Raw], attr: str, dim: str, axis: int) -> None:
    """Pair the inputs' items (or classes) by name where their names are known.

    Names: a DataArray's ``item`` / ``class`` coordinate, a pandas index / DataFrame's
    columns, a ``.csv`` header. Inputs that carry them must name the same items: a pandas
    input (or a file's columns) holding the targets' names in another order is reordered to
    the targets' order; any other difference is an error (a DataArray is never reordered).
    Inputs without names are paired by position.
    """
    named = [r for r in (targets, *preds) if getattr(r, attr) is not None]
    if len(named) < 2:
        return
    ref = named[0]
    ref_index = pd.Index(getattr(ref, attr))
    for raw in named[1:]:
        index = pd.Index(getattr(raw, attr))
        if index.equals(ref_index):
            continue
        reorderable = (raw.source in ("pandas", "file") and ref is targets
                       and ref_index.is_unique and index.is_unique)
        order = index.get_indexer(ref_index) if reorderable else None
        if order is not None and (order >= 0).all():
            raw.values = np.take(raw.values, order, axis=axis)
            setattr(raw, attr, ref_index)
            continue
        raise ValueError(_misaligned(ref, raw, ref_index, index, dim, targets))


def _misaligned(ref: _Raw, raw: _Raw, ref_index: pd.Index, index: pd.Index, dim: str,
                targets: _Raw) -> str:
    """The error for inputs whose item (class) names differ, with the remedy."""
    if ref.source == raw.source == "dataarray":
        return (f"the {dim!r} coordinates of `{raw.name}` and `{ref.name}` differ; align "
                "them first (nothing is reordered silently)")
    what = "items" if dim == ITEM else "classes"

    def names_of(r: _Raw) -> str:
        return _NAMES_OF.get((r.source, dim), f"{dim!r} coordinate")

    unique = ref_index.is_unique and index.is_unique
    extra = index.difference(ref_index)[:5].tolist() if unique else []
    if ref is not targets:
        why = (f"`{targets.name}` has no names of its {what} to align them to (it is paired "
               "by position)")
    elif not unique:
        who, rep = (ref, ref_index) if not ref_index.is_unique else (raw, index)
        why = (f"the {names_of(who)} of `{who.name}` repeats names "
               f"{rep[rep.duplicated()].unique()[:5].tolist()}, so they cannot be matched")
    elif extra:
        why = f"`{raw.name}` names {what} {extra} that `{ref.name}` does not"
    else:
        why = (f"they hold the same names in another order, and `{raw.name}` (a DataArray) "
               "is never reordered")
    how = {ITEM: f"put them in one order first (e.g. `{raw.name}.loc[{ref.name}.index]` for "
                 f"pandas), or pass `.to_numpy()` of each if their rows are already in the "
                 "same order",
           CLASS: "name the same classes in every input, the targets included (in any "
                  "order: pandas columns and .csv headers are matched by name)"}[dim]
    return (f"the {names_of(raw)} of `{raw.name}` and the {names_of(ref)} of `{ref.name}` "
            f"name different {what}: {why}; {how}. Nothing is paired by position when two "
            f"inputs name their {what}")


def _as_float(raw: _Raw) -> np.ndarray:
    # bool refused: True/False are neither real values nor probabilities (hard labels, where
    # two classes may well be spelled True/False, do not come through here)
    if raw.values.dtype.kind not in "iuf":
        what = "bool" if raw.values.dtype.kind == "b" else str(raw.values.dtype)
        raise TypeError(f"`{raw.name}` must hold numbers; got dtype {what}"
                        + (" (cast explicitly, e.g. .astype(float), if 0/1 is meant)"
                           if raw.values.dtype.kind == "b" else ""))
    return raw.values.astype(np.float64)


ROUNDING_CAP = 0.01
"""The largest deviation of a row sum from 1 read as rounding (see :func:`_rounding_slack`)."""


def _printed_decimals(values: np.ndarray) -> int | None:
    """The fewest decimals (1 to 6) that every value is printed with (within float32
    noise), or None: values at full precision."""
    for d in range(1, 7):
        if np.all(np.abs(values - np.round(values, d)) <= 1e-7):
            return d
    return None


def _rounding_slack(values: np.ndarray) -> tuple[float, int | None]:
    """How far a row of ``K`` probabilities printed to ``d`` decimals may sum from 1: each is
    off by at most half a unit of the last digit, so the row by ``K * 0.5 * 10^-d`` (0.0015
    for 3 classes at 3 decimals), capped at :data:`ROUNDING_CAP`. 0 for full-precision
    values, and when one unit of the last digit exceeds that (tenths, 0/1 rows: their sums
    are exact or off by a unit, which is no rounding)."""
    d = _printed_decimals(values)
    if d is None:
        return 0.0, None
    slack = min(values.shape[-1] * 0.5 * 10.0 ** -d, ROUNDING_CAP)
    return (slack, d) if 10.0 ** -d <= slack * (1 + 1e-9) else (0.0, d)


def _check_probabilities(raw: _Raw, atol: float) -> np.ndarray:
    values = _as_float(raw)
    negative = values < 0
    if negative.any():
        where = np.argwhere(negative)[0]
        raise ValueError(f"`{raw.name}` holds {int(negative.sum())} negative probabilities "
                         f"(first at index {tuple(where.tolist())}: {values[tuple(where)]:g})")
    sums = values.sum(axis=-1)
    off = np.abs(sums - 1.0)
    slack, decimals = _rounding_slack(values)
    bad = off > max(atol, slack) * (1 + 1e-9)
    if bad.any():
        where = tuple(np.argwhere(bad)[0].tolist())
        rounding = (f" (or ±{slack:.2g}, the rounding of values printed to {decimals} "
                    "decimals)" if slack > atol else "")
        remedy = ("they look like percentages: divide them by 100"
                  if np.allclose(sums[bad], 100.0, atol=1.0) else
                  "if they are scores or logits, normalise each row first (divide it by "
                  "its sum, or take a softmax)")
        if raw.source == "file":        # a .csv with a header: of labels and ids?
            remedy += (f". `{raw.name}` is a file whose header names the columns "
                       f"{list(raw.class_index)}: read as probability rows, one column per "
                       f"class. {_LABEL_FILES}")
        raise ValueError(f"rows of `{raw.name}` must sum to 1 within atol={atol:g}{rounding}; "
                         f"{int(bad.sum())} row(s) do not (row {where} sums to "
                         f"{sums[where]:.6g}): {remedy}")
    rounded = off > atol
    if rounded.any():
        where = tuple(np.argwhere(rounded)[0].tolist())
        warn(f"{int(rounded.sum())} row(s) of `{raw.name}` sum to 1 only within the rounding "
             f"of values printed to {decimals} decimals (row {where} sums to "
             f"{sums[where]:.6g}; at most ±{slack:.2g} for {values.shape[-1]} classes): they "
             "were divided by their sums (renormalised)", EvaluqWarning)
        values = values.copy()
        values[rounded] /= sums[rounded][..., None]
    return values


def _class_names(raws: Sequence[_Raw], n_classes: int) -> np.ndarray:
    """Soft labels' class names: the first input's that has them (all agree by now), else
    ``0..K-1``."""
    return np.asarray(next((r.class_index for r in raws if r.class_index is not None),
                           np.arange(n_classes)))


def _label_values(raw: _Raw) -> np.ndarray:
    values = raw.values
    if values.dtype.kind == "f":
        if _non_integer(values):
            raise ValueError(f"`{raw.name}` holds non-integer numbers, which cannot be class "
                             "labels; use kind='regression' for real values")
        values = values.astype(np.int64)
    return values


def check_label_set(labels: Any) -> np.ndarray:
    """``labels`` as a non-empty 1-D array of distinct labels; raises naming ``labels``."""
    if isinstance(labels, str | bytes):
        raise TypeError(f"`labels` must be a sequence of labels, not a single string; "
                        f"got {labels!r}")
    label_set = np.asarray(labels)
    if label_set.ndim != 1 or label_set.size == 0:
        raise ValueError(f"`labels` must be a non-empty 1-D sequence; got {labels!r}")
    try:
        uniq, counts = np.unique(label_set, return_counts=True)
    except TypeError:
        raise TypeError(f"`labels` must be all strings or all numbers; got {labels!r}") from None
    if (counts > 1).any():
        raise ValueError(f"`labels` holds duplicates: {uniq[counts > 1].tolist()} in "
                         f"{label_set.tolist()}")
    return label_set


def _encode(raws: Sequence[_Raw], values: Sequence[np.ndarray],
            labels: Sequence[Any] | np.ndarray | None) -> tuple[list[np.ndarray], np.ndarray]:
    text = {r.name: v.dtype.kind in "USO" for r, v in zip(raws, values, strict=True)}
    if labels is not None:
        text["labels"] = np.asarray(labels).dtype.kind in "USO"
    if len(set(text.values())) > 1:
        shown = " and ".join(f"`{k}` holds {'strings' if v else 'numbers'}"
                             for k, v in sorted(text.items()))
        raise TypeError(f"labels must be all strings or all numbers across inputs; {shown}")
    if labels is None:
        try:
            label_set = np.unique(np.concatenate([v.ravel() for v in values]))
        except (TypeError, ValueError):
            kinds = ", ".join(f"`{r.name}` of dtype {v.dtype}"
                              for r, v in zip(raws, values, strict=True))
            raise TypeError(f"labels must be all strings or all numbers across inputs; got "
                            f"{kinds}") from None
    else:
        label_set = check_label_set(labels)
    sorter = np.argsort(label_set, kind="stable")
    sorted_set = label_set[sorter]
    codes = []
    for raw, v in zip(raws, values, strict=True):
        try:
            pos = np.searchsorted(sorted_set, v)
        except (TypeError, ValueError, np.exceptions.DTypePromotionError):
            raise TypeError(f"labels of `{raw.name}` (dtype {v.dtype}) cannot be compared with "
                            f"the label set (dtype {label_set.dtype})") from None
        pos = np.minimum(pos, sorted_set.size - 1)
        found = sorted_set[pos] == v
        if not np.all(found):
            unknown = np.unique(v[~found]).tolist()
            raise ValueError(f"`{raw.name}` holds labels {unknown[:10]} that are not in "
                             f"`labels` {label_set.tolist()}")
        codes.append(sorter[pos].astype(np.int64))
    return codes, label_set


def prepare_inputs(
    targets: Any,
    *predictions: Any,
    kind: MetricKind | None = None,
    labels: Sequence[Any] | np.ndarray | None = None,
    atol: float = 1e-6,
    names: Sequence[str] | None = None,
    allow_leading: bool = False,
) -> PreparedInputs:
    """Validate and encode targets and any number of predictions of the same items.

    Parameters
    ----------
    targets
        Per-item targets: a list, numpy array, pandas Series (DataFrame for soft labels),
        DataArray with an ``item`` dim (and ``class`` for soft labels) or a file path (see
        :func:`load_predictions`).
    *predictions
        One or more predictions of the same items, in any of the same forms. Inputs that
        name their items are paired by name: pandas inputs on their index (one holding the
        targets' labels in another order is put in the targets' order; other labels are an
        error), DataArrays on an ``item`` coordinate (which must be equal: never reordered).
        The class columns of soft labels likewise, by DataFrame columns, a ``.csv`` header
        or a ``class`` coordinate. Inputs without names are paired by position.
    kind
        ``"hard"``, ``"soft"`` or ``"regression"``. Default: detected from the targets: 2-D (or
        a ``class`` dim) is soft; 1-D is regression if the targets hold a float that is not a
        whole number, else hard. Whole-number targets with a non-integer prediction are
        ambiguous (class ids with a malformed prediction, or real values?) and an error:
        pass ``kind``. Label targets (1-D) with probability-row predictions (2-D), or the
        other way round, are an error naming the remedies (one-hot targets, or each
        system's argmax labels). ``.txt`` files are read as text and typed together (integers when
        every line of every file is a plain integer; two spellings of one number, "01" and
        "1", are refused; see :mod:`evaluq.metrics._text_labels`); with ``kind="hard"``
        their labels are compared as written.
    labels
        Hard labels only: the label set (the order used for codes and per-class outputs).
        Default: the sorted union of the labels in the targets and predictions. A label outside
        a given set is an error.
    atol
        Tolerance for probability rows to sum to 1 (soft labels). Values printed to ``d``
        decimals (0.333, as a ``.csv`` written with ``%.3f`` holds them) may each be off by
        half a unit of their last digit, so a row of ``K`` of them may sum to
        ``1 +- K * 0.5 * 10^-d`` (at most +-0.01): such rows are accepted, divided by their
        sums, with an ``EvaluqWarning`` saying so. Rows off by more are an error.
    names
        Argument names used in error messages for the predictions (default ``"predictions"``
        for one, ``"predictions[i]"`` for several).
    allow_leading
        Accept DataArray predictions with extra dims besides ``item`` / ``class`` (moved to the
        front; see :attr:`PreparedInputs.leading`).

    Returns
    -------
    PreparedInputs
        ``kind``, ``targets``, ``predictions`` (tuple), ``n_classes``, ``labels``, ``leading``.

    Raises
    ------
    ValueError
        Empty inputs, wrong number of dims, different numbers of items or classes, items or
        classes named differently, NaN, labels outside ``labels``, negative probabilities,
        rows not summing to 1 within ``atol``.
    TypeError
        Mixed string / number labels, non-numeric soft or regression inputs.

    Examples
    --------
    >>> from evaluq.metrics import prepare_inputs
    >>> x = prepare_inputs(["b", "a", "c"], ["b", "b", "a"])
    >>> x.kind, x.targets.tolist(), x.predictions[0].tolist(), x.labels.tolist()
    ('hard', [1, 0, 2], [1, 1, 0], ['a', 'b', 'c'])
    >>> prepare_inputs([[0.5, 0.5], [1.0, 0.0]], [[0.2, 0.8], [0.9, 0.1]]).kind
    'soft'
    """
    if kind is not None:
        check_choice("kind", kind, _KINDS)
    atol = check_real("atol", atol, low=0.0)
    if not predictions:
        raise TypeError("prepare_inputs needs at least one prediction")
    if names is None:
        names = (["predictions"] if len(predictions) == 1
                 else [f"predictions[{i}]" for i in range(len(predictions))])
    elif len(names) != len(predictions):
        raise ValueError(f"`names` must name each of the {len(predictions)} predictions; "
                         f"got {list(names)}")
    target_raw = _to_raw("targets", targets, allow_leading=False)
    pred_raws = [_to_raw(n, p, allow_leading) for n, p in zip(names, predictions, strict=True)]
    labels = _type_texts([target_raw, *pred_raws], kind, labels)
    for raw in (target_raw, *pred_raws):
        if raw.values.ndim == 0:
            raise ValueError(f"`{raw.name}` must be an array of per-item values; got a scalar")
        if raw.values.size == 0:
            raise ValueError(f"`{raw.name}` is empty")
        if _has_nan(raw.values):
            raise ValueError(f"`{raw.name}` contains {int(pd.isna(raw.values).sum())} NaN "
                             "value(s); remove or impute them explicitly")
    if kind is None:
        kind = _detect_kind(target_raw, pred_raws)
    _check_shapes(kind, target_raw, pred_raws)
    if labels is not None and kind != "hard":
        raise ValueError(f"`labels` applies to hard labels only; these inputs are {kind}")

    raws = [target_raw, *pred_raws]
    label_set: np.ndarray | None
    if kind == "soft":
        arrays = [_check_probabilities(r, atol) for r in raws]
        n_classes = arrays[0].shape[-1]
        label_set = _class_names(raws, n_classes)
    elif kind == "regression":
        arrays = [_as_float(r) for r in raws]
        for r, a in zip(raws, arrays, strict=True):
            if not np.isfinite(a).all():
                raise ValueError(f"`{r.name}` contains infinite values")
        n_classes, label_set = 0, None
    else:
        arrays, label_set = _encode(raws, [_label_values(r) for r in raws], labels)
        n_classes = int(label_set.size)
    return PreparedInputs(
        kind=kind,
        targets=arrays[0],
        predictions=tuple(arrays[1:]),
        n_classes=n_classes,
        labels=label_set,
        leading=tuple((r.leading_dims, r.leading_coords) for r in pred_raws),
    )

"""Shared input validators.

Every public entry point has one validation function built from these (the pattern of scipy's
``_bootstrap_iv``). Messages name the argument and the offending value.
"""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NoReturn

import numpy as np
import pandas as pd

from evaluq._dims import EPOCH
from evaluq._warn import warn
from evaluq.errors import CubeError, EvaluqWarning, ImplicitEpochWarning

RNGLike = int | np.random.Generator | np.random.SeedSequence | None


BOMS: Final = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
               (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"), (b"\xef\xbb\xbf", "utf-8-sig"))
"""Byte-order marks and the encodings they name (a spreadsheet's "Unicode text" is UTF-16,
Windows Notepad's UTF-8 starts with one)."""


def text_encoding(head: bytes) -> str:
    """The encoding of a text file whose first bytes are ``head``: the one its byte-order
    mark names (never guessed otherwise), else UTF-8.

    Examples
    --------
    >>> text_encoding("model".encode("utf-16")), text_encoding(b"model")
    ('utf-16', 'utf-8')
    """
    return next((name for bom, name in BOMS if head.startswith(bom)), "utf-8")


def check_rng(rng: RNGLike, name: str = "rng") -> np.random.Generator:
    """Return a Generator from ``rng`` (int, SeedSequence, Generator or None)."""
    if isinstance(rng, bool) or not (
        rng is None
        or isinstance(rng, numbers.Integral | np.random.Generator | np.random.SeedSequence)
    ):
        raise TypeError(
            f"`{name}` must be an int, a numpy Generator, a SeedSequence or None; "
            f"got {type(rng).__name__}"
        )
    if isinstance(rng, numbers.Integral) and int(rng) < 0:
        raise ValueError(f"`{name}` must be a non-negative integer seed; got {rng}")
    return np.random.default_rng(rng)


def check_choice(name: str, value: Any, options: Sequence[Any]) -> Any:
    """Check that ``value`` is one of ``options``."""
    if value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise ValueError(f"`{name}` must be one of {shown}; got {value!r}")
    return value


def check_bounds(value: Any, name: str = "bounds", *, also: str = ""
                 ) -> tuple[float, float] | None:
    """A metric's range ``(lower, upper)`` with lower < upper (either may be infinite), or
    None; ``also`` names other accepted values in the message (``"'auto'"``)."""
    if value is None:
        return None
    if (not isinstance(value, tuple | list) or len(value) != 2
            or not all(isinstance(b, numbers.Real) and not isinstance(b, bool) for b in value)):
        other = f", {also}" if also else ""
        raise TypeError(f"`{name}` must be a pair of numbers (lower, upper){other} or None; "
                        f"got {value!r}")
    lo, hi = float(value[0]), float(value[1])
    if np.isnan(lo) or np.isnan(hi) or not lo < hi:
        raise ValueError(f"`{name}` must satisfy lower < upper (either may be infinite); "
                         f"got {value!r}")
    return lo, hi


def check_orientation(value: Any, name: str = "higher_is_better", *,
                      or_none: bool = False) -> bool:
    """The one validator of a ``higher_is_better`` *argument*: True or False (``np.bool_``
    too) as a bool.

    Anything else is a TypeError naming the argument, strings included: ``"False"`` is
    truthy in Python and must never mean True, and 1 / 0 or ``"true"`` / ``"false"`` are
    how a *stored attribute* may come back from a file (read those with
    ``_schema.orientation``, i.e. ``evaluq.higher_is_better(cube)``). ``or_none`` only adds
    "or None" to the message, for functions whose None means "the input's attribute" (they
    resolve None before calling this).

    >>> check_orientation(np.bool_(False))
    False
    >>> check_orientation("False")
    Traceback (most recent call last):
    ...
    TypeError: `higher_is_better` must be True or False; got 'False' (a string is never read...
    """
    if isinstance(value, bool | np.bool_):
        return bool(value)
    allowed = "True, False or None" if or_none else "True or False"
    hint = (" (a string is never read as a bool: pass the bool itself, or read a stored "
            "attribute with evaluq.higher_is_better(cube))" if isinstance(value, str) else "")
    raise TypeError(f"`{name}` must be {allowed}; got {value!r}{hint}")


def check_bool(name: str, value: Any, *, or_none: bool = False) -> bool:
    """Check that ``value`` is True or False (``np.bool_`` too); a string such as ``"yes"`` or
    a number is a TypeError naming the argument. ``or_none`` only adds "or None" to the
    message, for arguments whose None means a default (resolve None before calling this)."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    allowed = "True, False or None" if or_none else "True or False"
    raise TypeError(f"`{name}` must be {allowed}; got {value!r}")


def check_text(name: str, value: Any, *, or_none: bool = False) -> str | None:
    """Check that ``value`` is a string (or None with ``or_none``); anything else is a
    TypeError naming the argument."""
    if value is None and or_none:
        return None
    if isinstance(value, str):
        return value
    allowed = "a string or None" if or_none else "a string"
    raise TypeError(f"`{name}` must be {allowed}; got {value!r}")


def check_pair(name: str, pair: Any, models: Sequence[Any]) -> tuple[Any, Any]:
    """Check that ``pair`` is two labels ``(model, model_b)`` among ``models``; a pair of
    another length or an unknown label raises naming the argument and the models there are.

    >>> check_pair("pair", ("a", "b"), ["a", "b", "c"])
    ('a', 'b')
    >>> check_pair("pair", ("a", "z"), ["a", "b"])
    Traceback (most recent call last):
    ...
    ValueError: `pair` names 'z', which is not one of the models ['a', 'b']
    """
    if isinstance(pair, str | bytes) or not isinstance(pair, Sequence | np.ndarray) \
            or len(pair) != 2:
        raise TypeError(f"`{name}` must be a pair (model, model_b) of two model labels; "
                        f"got {pair!r}")
    known = list(models)
    for label in pair:
        if label not in known:
            raise ValueError(f"`{name}` names {label!r}, which is not one of the models "
                             f"{known}")
    return pair[0], pair[1]


def check_int(name: str, value: Any, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """Check that ``value`` is an integer within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer; got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be <= {maximum}; got {value}")
    return value


def check_int_sequence(name: str, values: Any, *, minimum: int | None = None,
                       maximum: int | None = None) -> list[int]:
    """Check that ``values`` is a non-empty sequence (list, tuple, range, 1-D array) of
    integers within [minimum, maximum]; a single number raises naming the argument and how to
    pass one value.

    >>> check_int_sequence("n_items", range(1, 3))
    [1, 2]
    >>> check_int_sequence("n_items", 100)
    Traceback (most recent call last):
    ...
    TypeError: `n_items` must be a sequence of integers (for one value: [100]); got 100
    """
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable) \
            or np.ndim(values) != 1:  # type: ignore[arg-type]
        raise TypeError(f"`{name}` must be a sequence of integers (for one value: "
                        f"[{values!r}]); got {values!r}")
    checked = [check_int(f"{name}[{i}]", v, minimum=minimum, maximum=maximum)
               for i, v in enumerate(values)]
    if not checked:
        raise ValueError(f"`{name}` is empty")
    return checked


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """Check that ``value`` is a finite real number in the given range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number; got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"`{name}` must be finite; got {value}")
    lo_ok = low is None or (value >= low if low_inclusive else value > low)
    hi_ok = high is None or (value <= high if high_inclusive else value < high)
    if not (lo_ok and hi_ok):
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(f"`{name}` must be in {left}{lo}, {hi}{right}; got {value:g}")
    return value


def check_confidence_level(value: Any, name: str = "confidence_level") -> float:
    """Check a confidence level in the open interval (0, 1)."""
    return check_real(name, value, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)


def check_no_nan(name: str, values: np.ndarray) -> np.ndarray:
    """Raise if a numeric array holds NaN (nothing is silently dropped)."""
    if values.dtype.kind in "fc" and np.isnan(values).any():
        n = int(np.isnan(values).sum())
        raise ValueError(f"`{name}` contains {n} NaN value(s); remove or impute them explicitly")
    return values


def check_finite(name: str, values: np.ndarray) -> np.ndarray:
    """Raise if a numeric array holds NaN or infinity."""
    check_no_nan(name, values)
    if values.dtype.kind in "fc" and not np.isfinite(values).all():
        raise ValueError(f"`{name}` contains infinite values")
    return values


def as_float_array(name: str, values: Any) -> np.ndarray:
    """``values`` as a float64 array; values that are no numbers (text, None, objects) raise a
    TypeError naming the argument and showing what it got (numpy's own message names none).

    >>> as_float_array("thresholds", ["a"])
    Traceback (most recent call last):
    ...
    TypeError: `thresholds` must hold numbers; got ['a']
    """
    try:
        if isinstance(values, str | bytes):
            raise TypeError
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        shown = repr(values)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise TypeError(f"`{name}` must hold numbers; got {shown}") from None


def broadcast_together(arrays: Mapping[str, Any]) -> list[np.ndarray]:
    """The named arguments (argument -> array-like) as numpy arrays broadcast to one shape;
    shapes that do not broadcast raise a ValueError naming every argument and its shape.

    >>> [a.shape for a in broadcast_together({"x": [1, 2], "n": 3})]
    [(2,), (2,)]
    >>> broadcast_together({"successes": [1, 2], "trials": [3, 4, 5]})
    Traceback (most recent call last):
    ...
    ValueError: `successes` of shape (2,) and `trials` of shape (3,) do not broadcast to one...
    """
    values = [np.asarray(v) for v in arrays.values()]
    try:
        return list(np.broadcast_arrays(*values))
    except ValueError:
        shown = " and ".join(f"`{n}` of shape {v.shape}" for n, v in zip(arrays, values,
                                                                         strict=True))
        raise ValueError(f"{shown} do not broadcast to one shape (numpy's rules: equal "
                         "lengths, or a length of 1, dim by dim from the last)") from None


MEMORY_BUDGET_ENV = "EVALUQ_MEMORY_BUDGET"
DEFAULT_MEMORY_BUDGET = 2 * 2**30
_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20,
          "MIB": 2**20, "G": 2**30, "GB": 2**30, "GIB": 2**30, "T": 2**40, "TB": 2**40,
          "TIB": 2**40}


def memory_budget() -> int:
    """The memory (bytes) one call may allocate at once: the environment variable
    ``EVALUQ_MEMORY_BUDGET`` (bytes, or a number with a unit K, M, G, T (powers of 1024):
    ``"512M"``, ``"8GiB"``), else 2 GiB."""
    raw = os.environ.get(MEMORY_BUDGET_ENV, "").strip()
    if not raw:
        return DEFAULT_MEMORY_BUDGET
    number = raw.rstrip("KMGTBikmgtb ")
    unit = raw[len(number):].strip().upper()
    try:
        value = float(number) * _UNITS[unit]
    except (KeyError, ValueError):
        raise ValueError(f"the environment variable {MEMORY_BUDGET_ENV} must be a number of "
                         f"bytes, optionally with a unit K, M, G or T; got {raw!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"the environment variable {MEMORY_BUDGET_ENV} must be positive; "
                         f"got {raw!r}")
    return int(value)


def _size(n_bytes: float) -> str:
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{int(n_bytes)} bytes"


def check_memory(name: str, n_bytes: float, budget: int | None = None, *,
                 hint: str = "", remedy: str | None = None) -> None:
    """Refuse a call that would allocate ``n_bytes`` at once, above ``budget`` (default
    :func:`memory_budget`: ``EVALUQ_MEMORY_BUDGET``, else 2 GiB), with a ValueError naming the
    argument ``name`` to lower, the memory needed and the budget (an out-of-memory kill is
    never the answer). ``hint`` ends the message (e.g. what else to pass); ``remedy``
    replaces "lower `name`" where lowering is not the cure (e.g. "raise `dt`").

    >>> check_memory("n_draws", 8 * 10**6)
    >>> check_memory("n_draws", 8 * 10**9, budget=2**30)
    Traceback (most recent call last):
    ...
    ValueError: `n_draws` would need 7.45 GiB of memory at once, above evaluq's memory budget...
    """
    limit = memory_budget() if budget is None else int(budget)
    if n_bytes > limit:
        raise ValueError(f"`{name}` would need {_size(n_bytes)} of memory at once, above "
                         f"evaluq's memory budget of {_size(limit)} (the environment variable "
                         f"{MEMORY_BUDGET_ENV}, in bytes or with a unit K, M, G, T, raises it): "
                         f"{remedy or f'lower `{name}`'}{hint}")


AGGREGATE_NAMES: Final = frozenset({"avg", "average", "mean", "overall", "total", "all",
                                    "macro", "micro", "macro-avg", "micro-avg", "avg."})
"""Names of an aggregate over the languages (tasks), as a paper's table prints one ('Average'
column or row), up to case: not a language."""


def aggregate_labels(labels: Iterable[Any]) -> list[str]:
    """The labels named as an aggregate of the others (:data:`AGGREGATE_NAMES`, up to case
    and surrounding spaces) when two or more other labels are there, else none.

    Examples
    --------
    >>> from evaluq._validation import aggregate_labels
    >>> aggregate_labels(["en", "de", "Average"]), aggregate_labels(["en", "all"])
    (['Average'], [])
    """
    seen = [str(x) for x in labels]
    named = [x for x in seen if x.strip().lower() in AGGREGATE_NAMES]
    return named if len(seen) - len(named) >= 2 else []


def warn_aggregate_labels(labels: Iterable[Any], column: str) -> None:
    """Warn when a language label names an aggregate of the others (:func:`aggregate_labels`):
    read as a language, it is counted again in every aggregate over the languages."""
    named = aggregate_labels(labels)
    if named:
        warn(f"`language` column {column!r} has the label {named[0]!r} beside other "
             "languages: read as a language, an aggregate of them (a paper's average) is "
             "counted again in every aggregate over the languages; drop its rows first "
             f"(table[table[{column!r}] != {named[0]!r}])", EvaluqWarning)


def named_rows(mask: np.ndarray, index: pd.Index, limit: int = 10) -> str:
    """The labels of the rows ``mask`` marks, at most ``limit`` of them, for a message.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evaluq._validation import named_rows
    >>> named_rows(np.array([True, False, True]), pd.RangeIndex(3))
    '0, 2'
    >>> named_rows(np.ones(4, dtype=bool), pd.RangeIndex(4), limit=2)
    '0, 1 and 2 more'
    """
    where = [str(r) for r in index[mask][:limit]]
    more = f" and {int(mask.sum()) - limit} more" if mask.sum() > limit else ""
    return ", ".join(where) + more


def check_nonempty(name: str, values: np.ndarray | Sequence[Any]) -> None:
    """Raise if ``values`` has no elements."""
    if len(values) == 0 if not isinstance(values, np.ndarray) else values.size == 0:
        raise ValueError(f"`{name}` is empty")


def closest_column(column: str, available: Iterable[Any]) -> str | None:
    """The column of ``available`` that ``column`` most likely meant: the one spelled the
    same but for case or spaces around it, else the closest by :mod:`difflib` (ratio 0.8 or
    more), else None.

    Examples
    --------
    >>> closest_column("model", ["Model", "language"]), closest_column("acc", ["accuracy"])
    ('Model', None)
    >>> closest_column("langauge", ["model", "language"])
    'language'
    """
    import difflib

    names = [str(c) for c in available]
    folded = [n for n in names if n.strip().lower() == str(column).strip().lower()]
    if folded:
        return folded[0]
    close = difflib.get_close_matches(str(column), names, n=1, cutoff=0.8)
    return close[0] if close else None


def check_columns(name: str, available: Iterable[str], required: dict[str, str | None]) -> None:
    """Check that every column named in ``required`` (argument -> column) exists in a table;
    the message suggests the column it most likely meant (:func:`closest_column`)."""
    cols = set(available)
    for arg, column in required.items():
        if isinstance(column, list | tuple | set | dict):
            several = (": one cube per metric, from_long(..., score=name) for each"
                       if arg == "score" else "")
            raise TypeError(f"`{arg}` must be one column name; got {column!r}{several}")
        if column is not None and column not in cols:
            shown = ", ".join(sorted(map(str, cols)))
            close = closest_column(column, cols)
            hint = f"; did you mean {close!r}?" if close is not None else ""
            if close is None and arg == "language" and required.get("score") not in cols:
                ids = [c for a, c in required.items() if a in ("model", "seed") and c in cols]
                hint = (f"; if each language is a column (a wide table), melt it first: "
                        f"table.melt(id_vars={ids!r}, var_name={column!r}, "
                        f"value_name={required.get('score') or 'score'!r})")
            raise CubeError(f"column {column!r} (given as `{arg}`) is not in {name}; its "
                            f"columns are: {shown}{hint}")


def check_result_dims(name: str, result: Any, required: Sequence[str], producer: str) -> None:
    """Check that ``result`` (a Dataset / DataArray made by ``producer``) still has the dims
    ``required``: a result whose dims were renamed is refused naming the missing dim, the
    dims it has, and the rename that restores it (when one unknown dim is left)."""
    dims = [str(d) for d in getattr(result, "dims", ())]
    missing = [d for d in required if d not in dims]
    if not missing:
        return
    unknown = [d for d in dims if d not in required]
    hint = (f"; rename it back: {name}.rename({unknown[0]}={missing[0]!r})"
            if len(missing) == 1 and len(unknown) == 1 else "")
    raise CubeError(f"`{name}` has no {missing[0]!r} dim (its dims: {dims}); the result of "
                    f"{producer} keeps the dims it was given ({list(required)}){hint}")


# --- per-item tables: the checks every per-item entry point shares --------------------------------
# (from_items, item_scores, item_means and fit_items: one message for one mistake)

_SHOWN = 5
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float", "decimal", "boolean",
                           "empty"})
"""What ``pandas.api.types.infer_dtype`` calls a column of numbers stored as objects."""


def check_column_args(available: Iterable[Any], columns: Mapping[str, str | None],
                      name: str = "the table") -> None:
    """Column arguments (argument -> column name, or None when not given): each a str naming a
    column of the table. A wrong one raises naming the argument and the column and listing the
    table's columns (a TypeError for a name that is not a str)."""
    for arg, column in columns.items():
        if column is not None and not isinstance(column, str):
            raise TypeError(f"`{arg}` must be a column name (str); got {column!r}")
    check_columns(name, available, dict(columns))


LABEL_SPACING = "labels that differ only in spaces around them"
"""What :func:`check_label_spacing`'s message says (callers that add context test for it)."""
LABEL_CASE = "labels that differ only in upper and lower case"
"""What :func:`check_label_spacing` says of ``"HI"`` and ``"hi"``."""


def _subject(column: str | Sequence[str]) -> str:
    """"column 'x' has" or, for labels pooled over several columns, "columns 'a' and 'b'
    have"."""
    if isinstance(column, str):
        return f"column {column!r} has"
    return f"columns {' and '.join(map(repr, column))} have"


def _fix(column: str | Sequence[str], call: str) -> str:
    """The pandas line that applies ``call`` (``"str.strip()"``) to the column(s)."""
    if isinstance(column, str):
        return f"table[{column!r}] = table[{column!r}].{call}"
    return f"for c in {list(column)!r}: table[c] = table[c].{call}"


def check_label_spacing(labels: np.ndarray | Sequence[Any],
                        column: str | Sequence[str]) -> None:
    """Raise when two labels of a key column differ only in spaces around them, or only in
    case.

    ``"gpt-4"`` and ``"gpt-4 "`` (or ``"hi"`` and ``"HI"``) would be read as two models
    (languages, items, ...), each with part of the other's rows: a typo in the file, or two
    sources' spellings of one name, never two systems. ``labels`` are the column's unique
    labels; labels that are no strings are not compared.

    Examples
    --------
    >>> check_label_spacing(["gpt-4", "llama"], "model")
    >>> check_label_spacing(["gpt-4", "gpt-4 "], "model")
    Traceback (most recent call last):
    ...
    evaluq.errors.CubeError: column 'model' has labels that differ only in spaces around
    them, ... 'gpt-4' and 'gpt-4 '. Remove the spaces in the file ...
    >>> check_label_spacing(["hi", "HI", "en"], "language")
    Traceback (most recent call last):
    ...
    evaluq.errors.CubeError: column 'language' has labels that differ only in upper and lower
    case, ... 'HI' and 'hi'. Spell each name one way in the file ...
    """
    values = np.asarray(labels) if not isinstance(labels, np.ndarray) else labels
    if values.dtype.kind in "biufcmM" or values.size == 0:
        return                                              # numbers: no spaces to differ by
    if pd.api.types.infer_dtype(values, skipna=True) != "string":
        values = np.asarray([v for v in values.tolist() if isinstance(v, str)], dtype=object)
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(values, type=pa.string(), from_pandas=True)
    trimmed = pc.utf8_trim_whitespace(text)               # in C: no Python string per label
    if not pc.any(pc.not_equal(pc.utf8_length(text), pc.utf8_length(trimmed))).as_py():
        _check_label_case(text, column)
        return
    stripped = pd.Series(trimmed.to_pylist(), dtype=object)
    text_ = pd.Series(text.to_pylist(), dtype=object)
    clash = stripped.duplicated(keep=False).to_numpy()
    if not clash.any():
        _check_label_case(text, column)
        return
    raise CubeError(
        f"{_subject(column)} {LABEL_SPACING}, which would be read as different labels: "
        f"{_clash_groups(text_, stripped, clash)}. Remove the "
        f"spaces in the file (in pandas: {_fix(column, 'str.strip()')})")


def _check_label_case(text: Any, column: str | Sequence[str]) -> None:
    """Raise when two of the unique labels ``text`` (a pyarrow string array) differ only in
    case (:func:`check_label_spacing`)."""
    import pyarrow.compute as pc

    unique = pc.unique(pc.drop_null(text))
    lower = pc.utf8_lower(unique)
    if pc.count_distinct(lower).as_py() == len(unique):
        _check_label_form(unique, column)
        return
    folded = pd.Series(lower.to_pylist(), dtype=object)
    clash = folded.duplicated(keep=False).to_numpy()
    raise CubeError(
        f"{_subject(column)} {LABEL_CASE}, which would be read as different labels: "
        f"{_clash_groups(pd.Series(unique.to_pylist(), dtype=object), folded, clash)}. Spell "
        f"each name one way in the file (in pandas, e.g. {_fix(column, 'str.lower()')})")


LABEL_FORM = ("labels that differ only in how they are encoded (Unicode composed / "
              "decomposed accents, non-breaking, zero-width or doubled spaces)")
"""What :func:`check_label_spacing` says of labels that print alike but differ in their
characters: ``'caf\\xe9'`` and ``'cafe\\u0301'``, ``'gpt 4'`` and ``'gpt\\xa04'``."""
_INVISIBLE: Final = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def _check_label_form(unique: Any, column: str | Sequence[str]) -> None:
    """Raise when two of the unique labels (a pyarrow string array) are one text in NFKC
    form with zero-width characters removed and runs of white space as one space: they
    print alike but would be read as two labels. Only labels that are not ASCII, or hold
    two spaces in a row, are looked at."""
    import re
    import unicodedata

    import pyarrow.compute as pc

    odd = pc.or_(pc.invert(pc.string_is_ascii(unique)), pc.match_substring(unique, "  "))
    if not pc.any(odd).as_py():
        return
    labels = pd.Series(unique.to_pylist(), dtype=object)
    key = labels.map(lambda v: re.sub(r"\s+", " ", unicodedata.normalize(
        "NFKC", v).translate(_INVISIBLE)))
    clash = key.duplicated(keep=False).to_numpy()
    if not clash.any():
        return
    first = key[clash].iloc[0]
    shown = " and ".join(map(ascii, sorted(labels[clash & (key == first).to_numpy()])))
    raise CubeError(
        f"{_subject(column)} {LABEL_FORM}, which would be read as different labels: "
        f"{shown} (written with escapes). Spell each name one way in the file (in pandas, "
        f"e.g. {_fix(column, 'str.normalize(' + repr('NFKC') + ')')})")


def _clash_groups(text: pd.Series, key: pd.Series, clash: np.ndarray) -> str:
    """The first group of labels with one ``key``, and how many more groups there are."""
    first = key[clash].iloc[0]
    group = sorted(text[clash & (key == first).to_numpy()].tolist())
    more = int(key[clash].nunique()) - 1
    others = f" (and {more} more such group(s))" if more else ""
    return f"{' and '.join(map(repr, group))}{others}"


def _row(series: pd.Series, position: int) -> str:
    """A row by position, with its index label when that differs (a filtered table)."""
    label = series.index[position]
    return f"row {position}" + ("" if label == position else f" (index {label!r})")


MISSING_MARK = r"\s*([-\u2013\u2014?x*/]+|missing|oom|timeout|failed|error|n\.a\.)\s*"
"""Text a table puts in a score's cell for a run that is missing (pandas reads "NA", "n/a",
"null" and "" as missing already)."""


def percent_hint(value: Any, column: str) -> str:
    """What to do with a score written as a percentage ("64.3%"), as a paper's "mean ± SD"
    ("85.3 ± 0.4", "85.3 (0.4)"), or as a mark for a missing run ("-", "OOM"), or "" for
    another value.

    Examples
    --------
    >>> percent_hint("85.3 ± 0.4", "acc").startswith(". A mean and its spread in one cell")
    True
    >>> percent_hint("64.3%", "acc").startswith(". Percentages written as text")
    True
    >>> percent_hint("62.5 (0.3)", "acc").startswith(". A mean and its spread in one cell")
    True
    >>> percent_hint("0,71", "acc").startswith(". A decimal comma")
    True
    >>> percent_hint("—", "acc").split(":")[0]
    ". '—' looks like a mark for a run that is missing"
    """
    if not isinstance(value, str):
        return ""
    if re.fullmatch(MISSING_MARK, value, flags=re.IGNORECASE):
        return (f". {value.strip()!r} looks like a mark for a run that is missing: leave "
                f"those cells empty, or read the file with "
                f"na_values=[{value.strip()!r}] (eq.read_table), and each is a run that "
                f"is missing")
    if re.fullmatch(r"\s*[-+]?[\d.]+\s*%?\s*((±|\+/-|\+-)\s*[\d.]+|\(\s*[\d.]+\s*%?\s*\))"
                    r"\s*%?\s*", value):
        return (". A mean and its spread in one cell, as a paper prints them: put them in two "
                "columns, the mean and the SD over seeds, and read them as a summary "
                "(eq.from_summary(mean=..., sd_seed=..., n_seeds=...); in the CLI --mean, "
                "--sd-seed and --n-seeds), after checking whether the spread is an SD, a "
                "standard error or an interval's half-width")
    if re.fullmatch(r"\s*[+-]?\d*,\d+\s*", value):
        return (". A decimal comma (or thousands separators): evaluq.read_table (and the CLI) "
                "reads a column of decimal-comma numbers as numbers in a ';' or tab-separated "
                f"file; save the file so, or in pandas, table[{column!r}] = "
                f"pandas.to_numeric(table[{column!r}].str.replace(',', '.'))")
    if not value.rstrip().endswith("%"):
        return ""
    return (f". Percentages written as text: evaluq.read_table (and the CLI) reads a column of "
            f"them as numbers when every value has its '%'; in pandas, "
            f"table[{column!r}] = table[{column!r}].str.rstrip('%').astype(float)")


def _not_numbers(series: pd.Series, column: str, argument: str) -> NoReturn:
    """Raise for a column that does not hold numbers: the first value that is no number, its
    row, and what to do."""
    text = series.astype(object)
    bad = text.notna().to_numpy() & pd.to_numeric(text, errors="coerce").isna().to_numpy()
    head = f"column {column!r} (given as `{argument}`) must be numeric (dtype {series.dtype})"
    if not bad.any():                      # numbers stored as text, such as "1" and "0"
        first = int(np.flatnonzero(text.notna().to_numpy())[0])
        raise CubeError(f"{head}; it holds numbers as text, e.g. {text.iloc[first]!r} at "
                        f"{_row(series, first)}: convert them first, "
                        f"table[{column!r}] = pandas.to_numeric(table[{column!r}])")
    first = int(np.flatnonzero(bad)[0])
    labels = pd.unique(text[bad])
    listed = (f"; its values that are no number: {[str(v) for v in labels]}"
              if len(labels) <= _SHOWN else f"; {len(labels)} distinct values are no number")
    hint = percent_hint(text.iloc[first], column)
    if hint:
        raise CubeError(f"{head}; it holds {text.iloc[first]!r} at {_row(series, first)}"
                        f"{listed}{hint}")
    raise CubeError(f"{head}; it holds {text.iloc[first]!r} at {_row(series, first)}{listed}"
                    f"{label_hint(labels, column)}")


def label_hint(labels: Any, column: str) -> str:
    """What to do with a score column of text labels: map each to its score (the usual
    scores of common labels shown, :data:`LABEL_SCORES`).

    Examples
    --------
    >>> label_hint(["C", "I"], "score").split(", e.g. ")[1].split(" (")[0]
    "table['score'].map({'C': 1, 'I': 0})"
    """
    return (f". A score is a number: map each label to its score first, e.g. "
            f"table[{column!r}].map({_label_map(labels)}) (Inspect's letters: C 1, "
            f"P 0.5, I and N 0), or score the answers against their targets")


LABEL_SCORES: Final = {"c": 1, "correct": 1, "p": 0.5, "partial": 0.5, "i": 0, "incorrect": 0,
                       "n": 0, "yes": 1, "no": 0, "true": 1, "false": 0, "pass": 1,
                       "passed": 1, "fail": 0, "failed": 0, "right": 1, "wrong": 0}
"""The score a common label stands for (Inspect's ``value_to_float`` letters and words), as
the example of a refused label column suggests it (never applied unasked)."""


def _label_map(labels: Any) -> str:
    """``{'C': 1, 'I': 0}``: the labels with the scores they usually stand for ('...' where
    none is usual), at most :data:`_SHOWN` of them."""
    shown = [str(v) for v in labels][:_SHOWN]
    pairs = [f"{label!r}: {LABEL_SCORES.get(label.strip().lower(), '...')}" for label in shown]
    return "{" + ", ".join(pairs) + "}"


def numeric_column(df: pd.DataFrame, column: str, argument: str) -> np.ndarray:
    """A table's column of scores as float64 (booleans as 0 / 1, numbers stored as objects
    converted). Text raises naming the column, the argument, the first value that is no number
    and its row; NaN or infinity raises naming the rows."""
    series = df[column]
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    elif (series.dtype == object
          and pd.api.types.infer_dtype(series, skipna=True) in _NUMBER_KINDS):
        values = series.astype(np.float64).to_numpy()
    else:
        _not_numbers(series, column, argument)
    bad = ~np.isfinite(values)
    if bad.any():
        rows = np.flatnonzero(bad)[:_SHOWN].tolist()
        raise CubeError(f"column {column!r} (given as `{argument}`) has {int(bad.sum())} NaN or "
                        f"infinite value(s), at rows {rows}; remove or score them explicitly")
    return values


def implicit_epoch(df: pd.DataFrame, keys: Sequence[str], used: Iterable[str | None],
                   argument: str) -> str | None:
    """``"epoch"`` when rows repeat a key (the columns ``keys``), the table's ``epoch`` column
    (a harness log's, :mod:`evaluq.io`) tells every repeat apart, and ``argument`` (the epoch
    argument: ``seed`` or ``epoch``) was not given; with an :class:`ImplicitEpochWarning`.

    None when the table has no ``epoch`` column (or uses it as another argument), repeats no
    key, or repeats keys ``epoch`` does not tell apart (the duplicate check then raises)."""
    if (EPOCH not in df.columns or EPOCH in set(used)
            or df[EPOCH].nunique(dropna=False) < 2):
        return None
    if not df.duplicated(subset=list(keys)).any() or df.duplicated(
            subset=[*keys, EPOCH]).any():
        return None
    warn(
        f"rows repeat the ({', '.join(keys)}) keys, told apart by the table's column 'epoch' "
        f"({df[EPOCH].nunique()} epochs), and `{argument}` was not given: the epochs are read "
        f"as repeated scorings of each item, as with {argument}='epoch' (an item's epochs are "
        f"pooled per item, as a harness pools them). Pass {argument}='epoch' to say so (and "
        "silence this warning), or keep one epoch per item",
        ImplicitEpochWarning)
    return EPOCH

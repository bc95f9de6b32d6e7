"""Labels and values read as text (a ``.txt`` file's lines, a text table's cells), typed jointly.

A file holds text. Whether ``"1"`` is the number one, or the label written ``1``, is decided
once for the targets and both predictions together, never file by file, so that two spellings
of one number ("01" and "1", "1.0" and "1") are not merged silently and one stray value
("1.5" in a file of class ids, "N/A" among integers) does not silently change the test:

- every value a plain integer (``0``, ``-3``, ``12``: no sign, leading zero or decimal point)
  in every input: integers (read as labels, or as values with ``kind="regression"``);
- ``kind="hard"``: otherwise the labels as written (strings);
- ``kind="regression"``: numbers (a value that is none is an error naming its line);
- no ``kind``: all numbers, every one a whole number, each written one way across the inputs:
  integers; all numbers, some not whole: floats (:func:`~evaluq.metrics.prepare_inputs` then
  decides, and refuses targets of whole numbers with non-integer predictions); some text among
  whole numbers: the labels as written. Anything else (one number spelled two ways, text among
  real values) is ambiguous and refused, naming the values, their lines and ``kind``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

_PLAIN_INT = r"-?(?:0|[1-9][0-9]*)"


def _where(names: Sequence[str], texts: Sequence[np.ndarray], pos: int, unit: str) -> str:
    """``"`h1` line 7"``: the input and the place of the ``pos``-th value of their
    concatenation (lines count from 1, table rows from 0 as the table readers count)."""
    sizes = np.cumsum([t.size for t in texts])
    k = int(np.searchsorted(sizes, pos, side="right"))
    i = pos - (int(sizes[k - 1]) if k else 0)
    return f"`{names[k]}` {unit} {i + 1 if unit == 'line' else i}"


def _plain_ints(texts: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Integers, when every value of every input is a plain integer that fits int64."""
    if not all(pd.Series(t, dtype=object).str.fullmatch(_PLAIN_INT).all() for t in texts):
        return None
    try:
        return [t.astype(np.int64) for t in texts]
    except OverflowError:
        return None


_MISSING = frozenset({"", "nan", "na", "n/a", "null", "none", "missing", "-"})
"""Spellings of a missing value (compared lower-case)."""


def _not_a_number(text: str) -> tuple[str, str]:
    """What a value that is no finite number is (missing, infinite or text) and, for a
    missing value, the remedy."""
    if text.strip().lower() in _MISSING:
        return "a missing value", "; remove that item from every file, or fill it"
    if np.isinf(pd.to_numeric(pd.Series([text]), errors="coerce").to_numpy(float)[0]):
        return "an infinite value", ""
    return "not a number", ""


def _regression(names: Sequence[str], texts: Sequence[np.ndarray], numbers: np.ndarray,
                unit: str) -> list[np.ndarray]:
    bad = np.flatnonzero(~np.isfinite(numbers))
    if bad.size:
        flat = np.concatenate(texts)
        what, remedy = _not_a_number(str(flat[bad[0]]))
        raise ValueError(f"{_where(names, texts, int(bad[0]), unit)} holds "
                         f"{str(flat[bad[0]])!r}, {what}: regression values must be finite "
                         f"numbers ({bad.size} value(s) are not){remedy}")
    return np.split(numbers, np.cumsum([t.size for t in texts])[:-1])


def _one_spelling(names: Sequence[str], texts: Sequence[np.ndarray], numbers: np.ndarray,
                  unit: str) -> None:
    """Refuse two spellings of one whole number ("01" and "1")."""
    flat = np.concatenate(texts)
    seen = pd.DataFrame({"number": numbers, "text": flat}).drop_duplicates()
    clash = seen[seen["number"].duplicated(keep=False)]
    if clash.empty:
        return
    number = clash["number"].iloc[0]
    a, b = map(str, clash.loc[clash["number"] == number, "text"].iloc[:2])
    where_a = _where(names, texts, int(np.flatnonzero(flat == a)[0]), unit)
    where_b = _where(names, texts, int(np.flatnonzero(flat == b)[0]), unit)
    raise ValueError(f"{where_a} holds {a!r} and {where_b} holds {b!r}: one number written two "
                     "ways, one label if read as numbers, two if read as text. Pass "
                     "kind='hard' to compare the labels as written, or kind='regression' to "
                     "compare numbers; or write them alike")


def header_lines(names: Sequence[str], texts: Sequence[np.ndarray]) -> str | None:
    """A message when line 1 of every input looks like a header (a column name written by
    ``Series.to_csv``): each first line is a name, no number, that no other line of any
    input holds. Else None (fewer than two inputs, or a first line that is a number or a
    label elsewhere)."""
    if len(texts) < 2 or any(t.size < 2 for t in texts):
        return None
    rest = set(np.concatenate([t[1:] for t in texts]).tolist())
    firsts = [str(t[0]) for t in texts]
    numbers = pd.to_numeric(pd.Series(firsts), errors="coerce").notna()
    if numbers.any() or any(f in rest for f in firsts):     # a header is a name
        return None
    shown = ", ".join(f"`{n}` {f!r}" for n, f in zip(names, firsts, strict=True))
    return (f"line 1 of every label file looks like a header, a name no other line holds "
            f"({shown}): it is read as one item, whose labels count as classes of their own "
            "(a shared one, right for both systems, raises the macro averages). Remove those "
            "lines (Series.to_csv(path, index=False, header=False) writes none)")


def type_label_texts(names: Sequence[str], texts: Sequence[np.ndarray], *,
                     kind: str | None = None, unit: str = "line") -> list[np.ndarray]:
    """The labels or values of ``texts`` (string arrays, one per input named by ``names``,
    the targets first), typed jointly: integers, floats or the strings as written (see the
    module's docstring). ``unit`` names a value's place in errors (``"line"`` or ``"row"``).

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.metrics._text_labels import type_label_texts
    >>> [a.tolist() for a in type_label_texts(["targets", "h1"],
    ...                                        [np.array(["1", "2"]), np.array(["2", "N/A"])])]
    [['1', '2'], ['2', 'N/A']]
    >>> [a.dtype.kind for a in type_label_texts(["targets", "h1"],
    ...                                          [np.array(["1", "2"]), np.array(["2", "1"])])]
    ['i', 'i']
    """
    texts = [np.asarray(t, dtype=str) for t in texts]
    ints = _plain_ints(texts)
    if ints is not None:
        return ints
    if kind == "hard":
        return texts
    numbers = pd.to_numeric(pd.Series(np.concatenate(texts)), errors="coerce").to_numpy(float)
    if kind == "regression":
        return _regression(names, texts, numbers, unit)
    finite = np.isfinite(numbers)
    whole = finite & (numbers == np.round(np.where(finite, numbers, 0.0)))
    if finite.all() and whole.all():
        _one_spelling(names, texts, numbers, unit)
        return [a.astype(np.int64) for a in _regression(names, texts, numbers, unit)]
    if finite.all():
        return _regression(names, texts, numbers, unit)       # prepare_inputs decides
    if (finite & ~whole).any():
        flat = np.concatenate(texts)
        text_at = int(np.flatnonzero(~finite)[0])
        real_at = int(np.flatnonzero(finite & ~whole)[0])
        what, remedy = _not_a_number(str(flat[text_at]))
        fix = (remedy[2:] + " if these are real values" if remedy else
               "fix the value if these are real values (kind='regression')")
        raise ValueError(f"{_where(names, texts, text_at, unit)} holds {str(flat[text_at])!r}, "
                         f"{what}, but {_where(names, texts, real_at, unit)} holds "
                         f"{str(flat[real_at])!r}, a real value: {fix}; or pass kind='hard' to "
                         "read every label as written (text)")
    return texts

"""Readers for tidy tables (CSV, TSV, JSON lines and parquet, chosen by file suffix) and for the
evaluation harnesses' own logs (Inspect AI, lm-evaluation-harness) as per-item tables."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final, Protocol, runtime_checkable

import pandas as pd

from evaluq._harness import read_inspect_logs as read_inspect_logs
from evaluq._harness import read_lighteval_details as read_lighteval_details
from evaluq._harness import read_lighteval_results as read_lighteval_results
from evaluq._harness import read_lm_eval_results as read_lm_eval_results
from evaluq._harness import read_lm_eval_samples as read_lm_eval_samples
from evaluq._validation import named_rows, text_encoding
from evaluq._warn import warn
from evaluq.errors import CubeError, EvaluqWarning, MissingDataWarning


def _with_encoding(p: Path, kw: dict[str, Any]) -> dict[str, Any]:
    """``kw`` with the text encoding: the caller's, else the one the file's byte-order mark
    names (UTF-16 or UTF-32: read as such, never guessed), else UTF-8."""
    if kw.get("encoding"):
        return kw
    with _open_bytes(p) as raw:
        head = raw.read(4)
    return {**kw, "encoding": text_encoding(head)}


def _not_utf8(p: Path) -> str:
    """What a file that is not UTF-8 says: its first such line, and the remedies."""
    line, text = 0, ""
    with _open_bytes(p) as raw:
        for number, data in enumerate(raw, start=1):
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                line, text = number, data.decode("latin-1").strip()[:80]
                break
    where = f" (line {line}: {text!r})" if line else ""
    return (f"`path`: {str(p)!r} is not UTF-8 text{where}: a spreadsheet or an older tool "
            f"wrote it in another encoding. Save it as UTF-8 (\"CSV UTF-8\"), or read it "
            f"with encoding='cp1252' (Windows' Western encoding; 'latin-1' reads any byte, "
            f"'shift_jis' or 'gbk' other scripts)")


def _first_lines(p: Path, encoding: str, n: int) -> list[str]:
    """The first ``n`` lines of a text table (fewer in a shorter file), undecodable bytes
    replaced (the reader itself says which line is not in the encoding)."""
    with _open_bytes(p) as raw, io.TextIOWrapper(raw, encoding=encoding,
                                                 errors="replace") as handle:
        return [line for _, line in zip(range(n), handle, strict=False)]


def _values(line: str, sep: str) -> list[str]:
    """A line's non-empty fields on ``sep`` (quotes respected), without surrounding spaces."""
    import csv

    fields = next(csv.reader([line.lstrip("\ufeff").rstrip("\r\n")], delimiter=sep), [])
    return [v for f in fields if (v := f.strip())]


def _one_value(line: str) -> bool:
    """Whether ``line`` holds one value on any separator (',', ';' or tab)."""
    return all(len(_values(line, sep)) == 1 for sep in ",;\t")


def _is_title(line: str, below: list[str]) -> bool:
    """Whether ``line`` reads as a title above a header: one value (then empty fields, or no
    separator at all, as a spreadsheet's first row "Results of our runs,,,"), and below it,
    after blank lines or further titles, a line of two or more values."""
    if not _one_value(line):
        return False
    header = next((h for h in below if any(len(_values(h, sep)) >= 2 for sep in ",;\t")), "")
    return bool(header) and not header.lstrip("\ufeff").startswith("#")


def _preamble(lines: list[str]) -> tuple[int, str | None, list[tuple[int, str]]]:
    """The lines above a text table's header: how many (a tool's '#' comments, a "sep=;"
    line naming the separator, as Excel reads it, title lines, and blank lines below any of
    these), the separator named, and the titles as (line number from 1, text)."""
    import re

    skip, sep, titles = 0, None, []
    while skip < len(lines):
        text = lines[skip].lstrip("\ufeff").strip()
        hint = re.fullmatch(r"sep=(.)", lines[skip].lstrip("\ufeff").rstrip("\r\n"))
        if text.startswith("#") or (skip and not text.strip(",;\t ")):
            skip += 1
        elif hint is not None and skip == 0:
            sep, skip = hint.group(1), 1
        elif text and _is_title(text, lines[skip + 1:]):
            titles.append((skip + 1, text.strip(",;\t ")))
            skip += 1
        else:
            break
    return skip, sep, titles


def _decimal_commas(table: pd.DataFrame, thousands: bool) -> pd.DataFrame:
    """Each text column whose every value is a number with a decimal comma ("0,71") as that
    number, in place. Unless ``thousands`` (a ';' table: the locale's decimal comma), a
    column whose every value could be a number with thousands separators ("1,234") stays
    text: which one it is cannot be told."""
    for col in table.columns:
        values = table[col].dropna()
        if not (len(values) and (values.dtype == object
                                 or pd.api.types.is_string_dtype(values))):
            continue
        text = values.astype(str)
        if (text.str.fullmatch(r"\s*[+-]?\d*,\d+([eE][+-]?\d+)?\s*").all()
                and (thousands or not text.str.fullmatch(r"\s*[+-]?\d{1,3}(,\d{3})+\s*").all())):
            table[col] = pd.to_numeric(table[col].astype(str).str.replace(",", ".",
                                                                          regex=False))
    return table


def _read_csv(p: Path, kw: dict[str, Any], sep: str | None = None) -> pd.DataFrame:
    """A ``.csv`` or ``.txt`` file (or with ``sep``, a ``.tsv``). One whose header splits on
    tabs but not on ',' (a spreadsheet's "tab-delimited text", or a TSV named ``.csv``) is
    read as tab-separated; one whose header splits on ';' but not on ',' (a spreadsheet's
    export where ',' is the decimal mark) with ';' as the separator; a first line "sep=;"
    names the separator. In a ';' or tab-separated table, each text column whose every value
    is a number with a decimal comma ("0,71") becomes that number (:func:`_decimal_commas`),
    unless ``sep`` / ``delimiter`` / ``decimal`` are given. Lines above the header are
    skipped (:func:`_preamble`): a tool's '#' comments, and title lines with an
    ``EvaluqWarning`` naming them. Spaces after a separator ("model, language") are not part
    of the value."""
    kw = {"skipinitialspace": True, **_with_encoding(p, kw)}
    lines = _first_lines(p, kw["encoding"], 100)
    skip, hint, titles = (0, None, []) if {"skiprows", "header"} & set(kw) else _preamble(lines)
    header = lines[skip] if skip < len(lines) else ""
    if skip and header.strip():
        kw["skiprows"] = skip
    if titles:
        numbers, texts = (", ".join(str(t[i]) if i == 0 else repr(t[i]) for t in titles)
                          for i in (0, 1))
        warn(f"{p.name}: line(s) {numbers} ({texts}) read as a title above the header, not "
             f"as the header: skipped (the header is line {skip + 1})", EvaluqWarning)
    if {"sep", "delimiter", "decimal"} & set(kw):
        return pd.read_csv(p, **kw)
    sep = sep or hint or ("\t" if header.count("\t") >= 1 and header.count(",") == 0 else
                          ";" if header.count(";") >= 1 and header.count(",") == 0 else ",")
    table = pd.read_csv(p, sep=sep, **kw)
    return table if sep == "," else _decimal_commas(table, thousands=sep == ";")


def _read_json(p: Path, kw: dict[str, Any]) -> pd.DataFrame:
    """A ``.json`` table in any of pandas' layouts: a list of records (one object per row),
    an object of columns (``DataFrame.to_json()``), ``split`` ({"columns", "data"}) or
    ``table`` ({"schema", "data"}). Another object (a harness's results file, a config) is
    refused, saying what a table looks like."""
    import json

    kw = _with_encoding(p, kw)
    with _open_bytes(p) as raw:
        text = raw.read().decode(kw.pop("encoding"))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data" and text.lstrip().startswith("{"):
            # one object per line: JSON lines named .json (as many tools name them)
            return pd.read_json(io.StringIO(text), lines=True, precise_float=True, **kw)
        raise
    harness = isinstance(data, dict) and ({"results", "versions"} <= set(data) or "eval" in data)
    columns = (isinstance(data, dict) and bool(data)
               and all(isinstance(v, dict) for v in data.values())
               and len({frozenset(v) for v in data.values()}) == 1)   # one index: a table
    orient: Any
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        orient = "records"
    elif isinstance(data, dict) and {"columns", "data"} <= set(data):
        orient = "split"
    elif isinstance(data, dict) and {"schema", "data"} <= set(data):
        orient = "table"
    elif columns and not harness:
        orient = "columns"
    else:
        hint = (": it looks like a harness's log; read it with eq.read_lm_eval_results (an "
                "lm-eval results file), eq.read_lm_eval_samples or eq.read_inspect_logs (in "
                "the CLI, --from lm-eval or --from inspect)"
                if harness else "")
        raise CubeError(f"`path`: {str(p)!r} holds a JSON {type(data).__name__}, not a table "
                        f"(a list of records, one object per row, or pandas' 'columns', "
                        f"'split' or 'table' layout){hint}")
    return pd.read_json(io.StringIO(text), orient=orient, precise_float=True, **kw)


_READERS: dict[str, Callable[[Path, dict[str, Any]], pd.DataFrame]] = {
    ".csv": _read_csv,
    ".txt": _read_csv,
    ".tsv": lambda p, kw: _read_csv(p, kw, "\t"),
    ".tab": lambda p, kw: _read_csv(p, kw, "\t"),
    ".json": _read_json,
    ".jsonl": lambda p, kw: pd.read_json(p, lines=True, precise_float=True,
                                         **_with_encoding(p, kw)),
    ".ndjson": lambda p, kw: pd.read_json(p, lines=True, precise_float=True,
                                          **_with_encoding(p, kw)),
    ".parquet": lambda p, kw: pd.read_parquet(p, **{"page_checksum_verification": True, **kw}),
    ".pq": lambda p, kw: pd.read_parquet(p, **{"page_checksum_verification": True, **kw}),
    ".feather": lambda p, kw: pd.read_feather(p, **kw),
    ".arrow": lambda p, kw: pd.read_feather(p, **kw),
}


@runtime_checkable
class _ToPandas(Protocol):
    """A table of another library that converts itself to pandas (a polars DataFrame, a
    pyarrow Table)."""

    def to_pandas(self) -> pd.DataFrame: ...


TableLike = (pd.DataFrame | str | os.PathLike[str] | _ToPandas | Mapping[str, Any]
             | Sequence[Mapping[str, Any]])
COMPRESSED: Final = (".gz", ".bz2", ".xz", ".zip")
"""A text table (CSV, TSV, JSON lines) may be compressed: ``runs.csv.gz``; the reader is
that of the suffix before this one, and pandas decompresses it."""
_SPREADSHEETS: Final = (".xlsx", ".xlsm", ".xls", ".ods", ".numbers")
TEXT_TABLES: Final = (".csv", ".txt", ".tsv", ".tab")
"""The suffixes of delimited text tables (a compressed one reads as its inner suffix)."""
_TEXT: Final = (*TEXT_TABLES, ".json", ".jsonl", ".ndjson")


def _zip_member(p: Path) -> IO[bytes]:
    archive = zipfile.ZipFile(p)
    names = [n for n in archive.namelist() if not n.endswith("/")]
    if len(names) != 1:
        archive.close()
        raise CubeError(f"`path`: {str(p)!r} holds {len(names)} files; a zipped table holds "
                        f"one (pandas reads only that)")
    member = archive.open(names[0])
    archive.close()                 # the file stays open until the member is closed
    return member


def _open_bytes(p: Path) -> IO[bytes]:
    """The file's bytes, decompressed when its suffix says so (:data:`COMPRESSED`)."""
    openers: dict[str, Callable[[Path], Any]] = {
        ".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open, ".zip": _zip_member}
    opener = openers.get(p.suffix.lower())
    return opener(p) if opener is not None else open(p, "rb")


def _suffix(p: Path) -> str:
    """The suffix that picks the reader: the last, or the one before a compression's."""
    suffix = p.suffix.lower()
    if suffix in COMPRESSED:
        inner = Path(p.stem).suffix.lower()
        if inner not in _TEXT:
            raise CubeError(f"`path`: cannot read {str(p)!r}: a compressed table must be "
                            f"{', '.join(_TEXT)} before {suffix!r} (a parquet file compresses "
                            f"itself); got {inner or 'no suffix'!r}")
        return inner
    return suffix


def read_table(path: str | os.PathLike[str], **kwargs: Any) -> pd.DataFrame:
    """Read a tidy table from CSV, TSV, JSON lines or parquet.

    The format follows the suffix: ``.csv`` / ``.txt``; ``.tsv`` / ``.tab``; ``.json`` (a list
    of records, or pandas' ``columns``, ``split`` or ``table`` layout); ``.jsonl`` /
    ``.ndjson``; ``.parquet`` / ``.pq``; ``.feather`` / ``.arrow`` (Arrow IPC, as
    ``DataFrame.to_feather`` writes it); a text table may be compressed (``runs.csv.gz``; also
    ``.bz2``, ``.xz`` and a ``.zip`` of one file). Extra keyword arguments go to the pandas
    reader. A ``.csv`` or ``.txt`` whose header has tabs and no ',' is read as tab-separated;
    one whose header has ';' and no ',' (a spreadsheet's export in a locale with the decimal
    comma) with ';' as the separator; a first line "sep=;" names the separator. In a ';' or
    tab-separated table, columns of numbers written with a decimal comma ("0,71") are read as
    numbers (in a tab-separated one, not a column whose every value could be thousands
    separators, "1,234"). Comment lines ('#') above a text table's header are skipped, and so
    are title lines (one value above a header of two or more columns: a spreadsheet's
    "Results,,,"), with an ``EvaluqWarning`` naming them; spaces after its separators are
    dropped. A text table's rows with no value in any column (",,,": a
    spreadsheet's blank rows) are skipped with a ``MissingDataWarning`` naming them; the other
    rows keep their numbers (the index counts the file's rows from 0). A column of percentages
    written as text ("64.3%") is read as their numbers (64.3). A mark for a missing run ("-",
    "OOM") is text: pass ``na_values=["-"]`` to read it as missing. A ``.json`` file of one
    object per line is read as JSON lines. Text is UTF-8, or the encoding its byte-order mark
    names (UTF-16: a spreadsheet's "Unicode text"); a file in another encoding is refused,
    naming its first line that is not UTF-8: pass ``encoding="cp1252"`` (a Windows spreadsheet's
    CSV).

    Parameters
    ----------
    path : str or os.PathLike
        The file. Its suffix (case-insensitive) picks the reader; another suffix raises
        ``CubeError``, a missing file ``FileNotFoundError``, an empty file ``CubeError``.
    **kwargs
        Passed to :func:`pandas.read_csv` (``sep`` is set for ``.tsv``),
        :func:`pandas.read_json` (``lines=True``) or :func:`pandas.read_parquet`.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> from evaluq.io import read_table
    >>> path = os.path.join(tempfile.mkdtemp(), "scores.tsv")
    >>> pd.DataFrame({"model": ["a"], "lang": ["en"], "bleu": [30.1]}).to_csv(
    ...     path, sep="\\t", index=False)
    >>> read_table(path)
      model lang  bleu
    0     a   en  30.1
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"`path` must be a str or a path; got {type(path).__name__}")
    p = Path(path)
    suffix = _suffix(p)
    if suffix not in _READERS:
        shown = ", ".join(sorted(_READERS))
        sheet = (". A spreadsheet: save it as CSV (File > Save as > CSV), or read it with "
                 "pandas.read_excel and pass the DataFrame" if suffix in _SPREADSHEETS else "")
        raise CubeError(f"`path`: cannot read {str(p)!r}: unknown suffix {suffix!r}; use one "
                        f"of {shown}, or a text table compressed as one of "
                        f"{', '.join(COMPRESSED)}{sheet}")
    if not p.exists():
        raise FileNotFoundError(f"`path`: no such file: {str(p)!r}")
    if p.is_file() and p.stat().st_size < 4096 and not p.read_bytes().strip():
        raise CubeError(f"`path`: {str(p)!r} is empty (no header and no rows)")
    try:
        table = _READERS[suffix](p, kwargs)
    except pd.errors.EmptyDataError:
        raise CubeError(f"{str(p)!r} is empty (no header and no rows)") from None
    except UnicodeError as err:             # UnicodeDecodeError, or UTF-16 without its mark
        if kwargs.get("encoding") or not isinstance(err, UnicodeDecodeError):
            raise CubeError(f"cannot read {str(p)!r} as {kwargs.get('encoding')!r} text: "
                            f"{err}") from err
        raise CubeError(_not_utf8(p)) from err
    except (ValueError, OSError, EOFError, zipfile.BadZipFile,
            lzma.LZMAError) as err:    # ArrowInvalid is a ValueError; EOFError: cut archive
        raise CubeError(f"cannot read {str(p)!r} as a {suffix} table (truncated or corrupted?"
                        f"): {type(err).__name__}: {str(err)[:300]}") from err
    if table.shape[1] == 0:
        raise CubeError(f"{str(p)!r} is empty (no header and no rows)")
    _read_percentages(table)
    if suffix in TEXT_TABLES and len(table) and table.iloc[-1].isna().any():
        _check_last_line(p)
    return _skip_empty_rows(table, p) if suffix in TEXT_TABLES else table


def _skip_empty_rows(table: pd.DataFrame, p: Path) -> pd.DataFrame:
    """A text table's rows with no value in any column (",,," lines: a spreadsheet's blank
    rows, often below the data) hold nothing to read: skipped with a warning naming them
    (pandas skips a line that is wholly empty already). The rows keep their numbers (the
    index), so later messages name the file's rows."""
    empty = table.isna().all(axis=1).to_numpy()
    if not empty.any():
        return table
    warn(f"{p.name}: {int(empty.sum())} row(s) have no value in any column (row(s) "
         f"{named_rows(empty, table.index)}, counted from 0, as a spreadsheet leaves blank "
         "rows): skipped", MissingDataWarning)
    return table[~empty]


_PERCENT: Final = r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*%\s*"


def _read_percentages(table: pd.DataFrame) -> None:
    """Each text column whose every value is a number with a percent sign ("64.3%", as a
    spreadsheet formats a score) becomes that number (64.3: the scale stays percent), in
    place. A column mixing "64.3%" with "0.643" is left as text (and refused where a score is
    needed, naming a value)."""
    for col in table.columns:
        values = table[col]
        if not (values.dtype == object or pd.api.types.is_string_dtype(values)):
            continue
        present = values.dropna()
        if not len(present) or not str(present.iloc[0]).rstrip().endswith("%"):
            continue                               # the first value decides most columns
        text = present.astype(str)
        if text.str.fullmatch(_PERCENT).all():
            table[col] = pd.to_numeric(values.str.strip().str.rstrip("%"))


def _check_last_line(p: Path) -> None:
    """A text table whose last row has missing fields and no final newline was cut in the
    middle of a line (a truncated file): refused, never read as a shorter table."""
    if p.suffix.lower() in COMPRESSED:
        last = b""
        with _open_bytes(p) as stream:
            while block := stream.read(1 << 20):
                last = block[-1:]
    else:
        with open(p, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            last = handle.read(1)
    if last not in (b"\n", b"\r"):
        raise CubeError(f"{str(p)!r} ends in the middle of a line (its last row has missing "
                        f"fields and no line end): the file looks truncated")


def as_table(data: TableLike, name: str = "data") -> tuple[pd.DataFrame, str]:
    """A table given as a DataFrame or a file path, as a DataFrame and a description of its
    source (for provenance): the one coercion every evaluq reader of tables uses.

    Parameters
    ----------
    data
        A pandas DataFrame (its named index levels become columns, as ``reset_index()``
        makes them), a table of another library that has ``to_pandas()`` (polars, pyarrow),
        a dict of columns, a list of row dicts, or the path of a CSV, TSV, JSON lines or
        parquet file (read by :func:`read_table`).
    name
        The argument's name in the caller, for the error message.

    Returns
    -------
    tuple of (pandas.DataFrame, str)
        The table and ``"DataFrame"``, the file's path, or the type it was given as
        (``"polars.DataFrame"``, ``"builtins.dict"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from evaluq.io import as_table
    >>> as_table(pd.DataFrame({"a": [1]}))[1]
    'DataFrame'
    >>> means = pd.DataFrame({"model": ["a", "a"], "acc": [0.5, 0.7]}).groupby("model").mean()
    >>> as_table(means)[0].columns.tolist(), as_table([{"model": "a", "acc": 0.5}])[1]
    (['model', 'acc'], 'builtins.list')
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be the argument's name, a string; got {name!r}")
    if isinstance(data, pd.DataFrame):
        return _index_as_columns(data), "DataFrame"
    if isinstance(data, str | os.PathLike):
        return read_table(data), str(Path(data))
    kind = f"{type(data).__module__.split('.')[0]}.{type(data).__qualname__}"
    frame = _other_table(data, name, kind)
    if frame is not None:
        return _index_as_columns(frame), kind
    hint = ""
    if isinstance(data, pd.Series):
        hint = ("; a Series indexed by its keys (a groupby result) becomes a table with "
                "`.reset_index()`" if isinstance(data.index, pd.MultiIndex)
                or data.index.name is not None
                else "; a Series is one column: pass the DataFrame it came from")
    raise TypeError(
        f"`{name}` must be a table: a pandas DataFrame (or a polars DataFrame, a pyarrow "
        f"Table, a dict of columns, a list of row dicts) or a path to a CSV, TSV, JSON or "
        f"parquet file; got {kind}{hint}"
    )


def _index_as_columns(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its named index levels as columns (as ``df.reset_index()`` gives them),
    so ``df.groupby(["model", "language"]).mean()`` or ``cube.score.to_dataframe()`` reads
    as the table it shows; a level named as a column stays in the index (the column is
    read)."""
    names = [n for n in df.index.names if n is not None and n not in df.columns]
    if not names or len(set(names)) < len(names):
        return df
    return df.reset_index(level=names)


def _other_table(data: Any, name: str, kind: str) -> pd.DataFrame | None:
    """A polars / pyarrow table, a dict of columns or a list of row dicts as a pandas
    DataFrame; None for anything else."""
    if type(data).__module__.startswith("xarray"):
        return None                      # a DataArray's to_pandas is no table of rows
    if isinstance(data, _ToPandas) and not isinstance(data, pd.Series | type):
        frame = data.to_pandas()
        if isinstance(frame, pd.DataFrame):
            return frame
        raise TypeError(f"`{name}`: {kind}.to_pandas() gave {type(frame).__name__}, "
                        f"not a DataFrame")
    rows = isinstance(data, list | tuple) and len(data) > 0 and all(
        isinstance(row, Mapping) for row in data)
    if not (rows or isinstance(data, Mapping)):
        return None
    try:
        return pd.DataFrame(list(data) if rows else dict(data))
    except ValueError as err:
        raise TypeError(f"`{name}`: the {kind} is not a table of columns ({err})") from err

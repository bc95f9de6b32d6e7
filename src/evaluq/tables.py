"""Paper tables: Markdown and LaTeX export of evaluq's DataFrames, with captions.

Every table evaluq returns (:func:`evaluq.leaderboard`, :func:`evaluq.pairwise_table`,
:func:`evaluq.variance_table`) carries in ``DataFrame.attrs`` a ``caption`` that says what it
shows and which uncertainty (SD over how many resamples, interval level and kind), and an
``uncertainty`` entry with just that part. :func:`to_markdown` and :func:`to_latex` put the
caption under / above the table, so a table pasted into a paper states its uncertainty.
Numbers are written with ``digits`` significant figures; missing values are left blank.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import pandas as pd

from evaluq._atomic import atomic_file, write_text
from evaluq._validation import check_bool, check_choice, check_int, check_text

__all__ = ["FORMATS", "caption", "to_latex", "to_markdown", "whole_ranks", "write"]

FORMATS = ("csv", "md", "tex")
"""File formats of :func:`write`: CSV, Markdown, LaTeX."""


def caption(table: pd.DataFrame) -> str:
    """The caption stored in ``table.attrs`` (empty when the table has none).

    Parameters
    ----------
    table
        A DataFrame, usually one of evaluq's ``*_table`` results or a leaderboard.

    Returns
    -------
    str
        ``table.attrs["caption"]``, or ``""``.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=2, rng=0)
    >>> board = eq.leaderboard(eq.aggregate(eq.resample(cube, n_resamples=100, rng=0)))
    >>> eq.tables.caption(board)[:50]
    'Leaderboard of the mean simulated over 8 languages'
    """
    _check_table(table)
    return str(table.attrs.get("caption", ""))


def _check_table(table: Any) -> None:
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"`table` must be a pandas DataFrame; got {type(table).__name__}")


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, float):               # first: the ABC checks below are slow
        return _real(value, digits)
    if type(value) is str:
        return value
    if value is None or value is pd.NA:        # pd.NA: a missing rank of an Int64 column
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return _real(float(value), digits)
    return str(value)


def _real(v: float, digits: int) -> str:
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 10 ** digits:
        return str(int(v))
    return f"{v:.{digits}g}"


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return " ".join(str(v) for v in value if str(v) != "")
    return str(value)


def to_markdown(table: pd.DataFrame, *, caption: str | None = None, digits: int = 4,
                index: bool = True) -> str:
    """A GitHub / pandoc pipe table with its caption.

    Parameters
    ----------
    table
        The DataFrame.
    caption
        Caption text; default the table's own (:func:`caption`). Written after the table as
        ``Table: ...`` (pandoc's caption syntax); an empty caption writes no line.
    digits
        Significant figures of floating-point cells (integers and whole numbers are written
        as they are).
    index
        Write the index levels as the first columns.

    Returns
    -------
    str
        The table, ending in a newline.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> t = pd.DataFrame({"mean": [0.81234, 0.7]}, index=pd.Index(["a", "b"], name="model"))
    >>> print(eq.tables.to_markdown(t, caption="Accuracy (SD over 5 seeds)."))
    | model | mean |
    |---|---:|
    | a | 0.8123 |
    | b | 0.7 |
    <BLANKLINE>
    Table: Accuracy (SD over 5 seeds).
    <BLANKLINE>
    """
    _check_table(table)
    digits = check_int("digits", digits, minimum=1, maximum=17)
    index = check_bool("index", index)
    text = _caption_text(table, caption)
    frame = table.reset_index() if index else table
    header = [_label(c) for c in frame.columns]
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(
        frame[c]) for c in frame.columns]
    lines = ["| " + " | ".join(_escape_md(h) for h in header) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for row in frame.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_escape_md(_cell(v, digits)) for v in row) + " |")
    out = "\n".join(lines) + "\n"
    if text:
        out += f"\nTable: {text}\n"
    return out


def _escape_md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}
_UNICODE = {"α": r"$\alpha$", "−": "-", "σ": r"$\sigma$", "τ": r"$\tau$", "±": r"$\pm$",
            "≤": r"$\leq$", "≥": r"$\geq$"}


_ESCAPES = {**_LATEX_SPECIAL, **_UNICODE}
_ESCAPE_RE = re.compile("|".join(re.escape(k) for k in _ESCAPES))


def _escape_latex(text: str) -> str:
    # one pass: a replacement is never escaped again (the unicode ones hold $ and \)
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


def to_latex(table: pd.DataFrame, *, caption: str | None = None, label: str | None = None,
             digits: int = 4, index: bool = True) -> str:
    """A booktabs LaTeX ``table`` with its caption (pandas' ``Styler.to_latex``, via jinja2);
    a table of more than ``LONG_LATEX`` (40) rows is a ``longtable``, which breaks across
    pages and repeats its header (needs ``\\usepackage{longtable}``), its rows written by
    evaluq as the Styler writes them (the same text, in a tenth of the time).

    Parameters
    ----------
    table
        The DataFrame.
    caption
        Caption text; default the table's own (:func:`caption`). LaTeX special characters in
        it, in the labels and in the cells are escaped.
    label
        ``\\label{...}`` of the table.
    digits
        Significant figures of floating-point cells.
    index
        Write the index.

    Returns
    -------
    str
        A ``table`` environment with ``\\toprule`` / ``\\midrule`` / ``\\bottomrule`` (needs
        ``\\usepackage{booktabs}``).

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> t = pd.DataFrame({"p_best": [0.91, 0.09]}, index=pd.Index(["m_1", "m_2"], name="model"))
    >>> print(eq.tables.to_latex(t, caption="P(best) over 1000 resamples", label="tab:best"))
    \\begin{table}
    \\centering
    \\caption{P(best) over 1000 resamples}
    \\label{tab:best}
    \\begin{tabular}{lr}
    \\toprule
     & p\\_best \\\\
    model &  \\\\
    \\midrule
    m\\_1 & 0.91 \\\\
    m\\_2 & 0.09 \\\\
    \\bottomrule
    \\end{tabular}
    \\end{table}
    <BLANKLINE>
    """
    _check_table(table)
    digits = check_int("digits", digits, minimum=1, maximum=17)
    label = check_text("label", label, or_none=True)
    index = check_bool("index", index)
    text = _caption_text(table, caption)
    frame = table.copy()
    frame.attrs = {}
    frame.columns = pd.Index([_label(c) for c in frame.columns])
    options: dict[str, Any] = {"caption": _escape_latex(text) if text else None,
                               "label": label, "hrules": True, "column_format": None}
    if len(frame) <= LONG_LATEX:
        return _styler(frame, digits, index).to_latex(position_float="centering", **options)
    # a float this long would run off the page: a longtable. Its frame (caption, header,
    # footers) is pandas' for the first row; the rows are written here (the Styler takes
    # ~20 s on the 19,900 pairs of 200 models), the first one checked against pandas'
    head = _styler(frame.iloc[:1], digits, index).to_latex(environment="longtable", **options)
    start = head.rfind("\\endlastfoot\n") + len("\\endlastfoot\n")
    end = head.rfind("\\end{longtable}")
    if _plain_levels(frame) and head[start:end] == _latex_rows(frame.iloc[:1], digits, index):
        return head[:start] + _latex_rows(frame, digits, index) + head[end:]
    return _styler(frame, digits, index).to_latex(environment="longtable", **options)


def _styler(frame: pd.DataFrame, digits: int, index: bool) -> Any:
    """The pandas Styler of :func:`to_latex`: cells as :func:`_cell` writes them, escaped."""
    styler = frame.style.format(lambda v: _escape_latex(_cell(v, digits)))
    styler = styler.format_index(lambda v: _escape_latex(str(v)), axis=0)
    styler = styler.format_index(lambda v: _escape_latex(str(v)), axis=1)
    if frame.index.names != [None]:
        styler.index.names = [_escape_latex(str(n)) if n is not None else None
                              for n in frame.index.names]
    if not index:
        styler = styler.hide(axis="index")
    return styler


def _plain_levels(frame: pd.DataFrame) -> bool:
    """Whether :func:`_latex_rows` writes ``frame``'s rows as pandas' Styler does: its index
    levels hold text or integers (pandas merges equal neighbours of a level by their printed
    form, which for these is the value), and pandas' LaTeX options are their defaults."""
    levels = [frame.index.get_level_values(i) for i in range(frame.index.nlevels)]
    return (all(lv.dtype.kind in "iuOSU" or pd.api.types.is_string_dtype(lv.dtype)
                for lv in levels)
            and pd.get_option("styler.sparse.index") is True
            and pd.get_option("styler.latex.multirow_align") == "c")


def _latex_rows(frame: pd.DataFrame, digits: int, index: bool) -> str:
    r"""The body rows of :func:`to_latex`'s table, as pandas' Styler writes them: cells
    ``" & "``-separated, each row ending ``" \"``; a MultiIndex level's run of equal
    labels (under equal outer labels) is one ``\multirow[c]{n}{*}{label}``, blank below."""
    n = len(frame)
    cells = [[_escape_latex(_cell(v, digits)) for v in row]
             for row in frame.itertuples(index=False, name=None)]
    if index:
        heads = _index_cells(frame.index)
        cells = [[*h, *c] for h, c in zip(heads, cells, strict=True)]
    return "".join(" & ".join(row) + " \\\\\n" for row in cells) if n else ""


def _index_cells(idx: pd.Index) -> list[list[str]]:
    """The index cells of each row (pandas' sparsified MultiIndex: see :func:`_latex_rows`)."""
    levels = [[str(v) for v in idx.get_level_values(i)] for i in range(idx.nlevels)]
    shown = [[_escape_latex(v) for v in level] for level in levels]
    rows = [[level[r] for level in shown] for r in range(len(idx))]
    for lv in range(idx.nlevels - 1):                   # the last level is never merged
        r = 0
        while r < len(idx):
            run = r + 1
            while run < len(idx) and all(levels[k][run] == levels[k][r] for k in range(lv + 1)):
                run += 1
            if run - r > 1:
                rows[r][lv] = f"\\multirow[c]{{{run - r}}}{{*}}{{{shown[lv][r]}}}"
                for k in range(r + 1, run):
                    rows[k][lv] = ""
            r = run
    return rows


LONG_LATEX: Final = 40
"""A table of more rows than this is written as a ``longtable`` (``\\usepackage{longtable}``),
which breaks across pages repeating its header, not as a ``table`` float, which cannot."""


def _caption_text(table: pd.DataFrame, given: str | None) -> str:
    if given is None:
        return str(table.attrs.get("caption", ""))
    if not isinstance(given, str):
        raise TypeError(f"`caption` must be a string or None; got {type(given).__name__}")
    return given


def whole_ranks(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its rank and tier columns shown as integers (1, not 1.0) when all
    their values are whole; average ranks of ties (1.5) stay as they are.

    Parameters
    ----------
    table
        A ``*_table`` DataFrame (a leaderboard, ranks, tiers).

    Returns
    -------
    pandas.DataFrame
        A copy, with its ``attrs``.

    Examples
    --------
    >>> import pandas as pd
    >>> whole_ranks(pd.DataFrame({"observed_rank": [1.0, 2.0]}))["observed_rank"].tolist()
    [1, 2]
    """
    _check_table(table)
    out = table.copy()
    for col in table.columns:
        values = table[col]
        name = " ".join(map(str, col)) if isinstance(col, tuple) else str(col)
        if ("rank" not in name and "tier" not in name) or values.dtype.kind != "f":
            continue
        finite = values.dropna()
        if len(finite) and (finite == finite.round()).all():
            out[col] = values.astype("Int64")
    out.attrs = dict(table.attrs)
    return out


def write(table: pd.DataFrame, stem: str | os.PathLike[str], *,
          formats: Iterable[str] = FORMATS, digits: int = 4) -> list[Path]:
    """Write a table as CSV (full precision), Markdown and / or LaTeX beside each other.

    Parameters
    ----------
    table
        The DataFrame.
    stem
        Path without suffix: ``out/leaderboard`` writes ``out/leaderboard.csv``, ``.md``,
        ``.tex``. The folder must exist.
    formats
        Any of ``"csv"``, ``"md"``, ``"tex"``.
    digits
        Significant figures in the Markdown and LaTeX files.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Examples
    --------
    >>> import pandas as pd, tempfile, os, evaluq as eq
    >>> stem = os.path.join(tempfile.mkdtemp(), "scores")
    >>> [p.name for p in eq.tables.write(pd.DataFrame({"a": [1.5]}), stem)]
    ['scores.csv', 'scores.md', 'scores.tex']
    """
    _check_table(table)
    table = whole_ranks(table)
    chosen = list(formats)
    for f in chosen:
        check_choice("formats", f, FORMATS)
    if not isinstance(stem, str | os.PathLike):
        raise TypeError(f"`stem` must be a path (str or os.PathLike) without suffix; got "
                        f"{type(stem).__name__}")
    base = Path(stem)
    if not base.parent.is_dir():
        raise FileNotFoundError(f"`stem`: the folder {str(base.parent)!r} does not exist "
                                f"(create it first)")
    written = []
    for f in chosen:
        path = base.with_name(base.name + "." + f)
        if f == "csv":
            with atomic_file(path) as tmp:             # atomic: temp file, then rename
                table.to_csv(tmp)
        elif f == "md":
            write_text(path, to_markdown(table, digits=digits))
        else:
            write_text(path, to_latex(table, digits=digits))
        written.append(path)
    return written

"""The sections of the HTML report: each is one function of the analysis results.

A section function takes results (a cube, :func:`evaluq.variance_components`,
:func:`evaluq.aggregate`, ... or a hierarchical fit) and returns a :class:`Section`: an id, a
title and a self-contained HTML body (tables as HTML, figures as base64 PNG).

The public names are :class:`Section`, :func:`render_page` (a page of sections, your own
included) and :func:`item_tables` (the tables of :func:`evaluq.item_means`). The section
builders are private (issue 35): users get them through :func:`evaluq.report`. Their old
spellings (``data_summary``, ``tiers_section``, ...) still import from this module, for
evaluq's own report modules, through the module ``__getattr__`` at the end; they are neither
in ``__all__`` nor documented.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._deprecation import renamed_argument
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    LANGUAGE,
    MODEL,
    MODEL_B,
    NAN_REASON,
    NAN_REASONS,
    RANK,
    SCORE,
    SEED,
)
from evaluq._kernels import p_value_floor
from evaluq._scale import scale_findings
from evaluq._schema import is_summary, orientation
from evaluq.tables import whole_ranks

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Section", "item_tables", "render_page"]


class _HierarchicalFitLike(Protocol):
    """What the report needs of a fitted hierarchical model (``evaluq.fit_hierarchical``)."""

    # the scope (population / benchmark) is passed by position: the report does not depend on
    # the name of the fit's argument
    def rank_probabilities(self, scope: str = ..., /) -> xr.Dataset:
        """P(rank = r) per model, the Dataset of :func:`evaluq.rank_distribution`."""

    def pairwise_differences(self, scope: str = ..., /, rope: Any = ...) -> xr.Dataset:
        """Posterior differences, the Dataset of :func:`evaluq.pairwise_differences`."""

    def compare_frequentist(self) -> Any:
        """The posterior next to the resampling results (a table)."""

    def diagnostics(self) -> Any:
        """Sampler diagnostics (a table)."""


@dataclass
class Section:
    """One section of the report.

    Attributes
    ----------
    id
        HTML id (the anchor of the table of contents).
    title
        Heading.
    body
        HTML of the section's content.
    figures
        Number of figures in ``body`` (each an ``<img class="figure">``).
    notes
        Warnings the section raised (the data summary's scale warnings), as plain text.
    """

    id: str
    title: str
    body: str
    figures: int = 0
    notes: list[str] = field(default_factory=list)

    def html(self) -> str:
        """The section as an HTML ``<section>`` element."""
        return (f'<section id="{html.escape(self.id)}" class="report-section">\n'
                f"<h2>{html.escape(self.title)}</h2>\n{self.body}\n</section>")


# --- HTML helpers -------------------------------------------------------------------------------

def _figure_html(fig: Figure, *, alt: str, caption: str | None = None, dpi: int = 150) -> str:
    """A figure as an ``<img>`` with the PNG inline (base64), the figure closed afterwards.

    Parameters
    ----------
    fig
        A matplotlib figure (e.g. from :mod:`evaluq.plots`).
    alt
        Alternative text.
    caption
        Text under the figure.
    dpi
        Resolution of the PNG.

    Returns
    -------
    str
        A ``<figure>`` element that needs no file and no network.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> from evaluq.reporting.sections import _figure_html
    >>> fig = Figure(figsize=(1, 1))
    >>> _ = fig.subplots().plot([0, 1])
    >>> _figure_html(fig, alt="a line").startswith('<figure><img class="figure" alt="a line" '
    ...                                           'src="data:image/png;base64,')
    True
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    png = buf.getvalue()
    data = base64.b64encode(png).decode("ascii")
    img = f'<img class="figure" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
    height = int.from_bytes(png[20:24], "big")        # the PNG header's IHDR height
    if height > TALL_FIGURE:
        told = (f"{height / dpi:.0f} inches tall: the figure scrolls in its box, as a long "
                "table does.")
        caption = f"{caption} ({told})" if caption else told.capitalize()
        img = f'<div class="figure-scroll">{img}</div>'
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f"<figure>{img}{cap}</figure>"


TALL_FIGURE: Final = 1800
"""A figure taller than this (pixels; 12 inches at the page's 150 dpi: one row per model or
pair of 50 and more) scrolls in a box of its own (``.figure-scroll``), as a long table does:
a report on 200 models held five figures 20 to 50 inches tall one after the other."""


def _fmt(v: Any) -> str:
    if isinstance(v, float | np.floating):
        if np.isnan(v):
            return ""
        return f"{v:.4g}"
    return str(v)


def _table_html(table: pd.DataFrame, *, caption: str | None = None) -> str:
    """A DataFrame as an HTML table, numbers to 4 significant figures, with its caption.

    Parameters
    ----------
    table
        The DataFrame.
    caption
        Caption; default ``table.attrs["caption"]`` when present.

    Returns
    -------
    str
        A ``<div class="table-wrap">`` holding the ``<table>`` and the caption.

    Examples
    --------
    >>> import pandas as pd
    >>> from evaluq.reporting.sections import _table_html
    >>> "<td>0.1235</td>" in _table_html(pd.DataFrame({"p": [0.123456]}))
    True
    """
    text = caption if caption is not None else str(table.attrs.get("caption", ""))
    table, unknown = _unknown_columns(table)
    table, notes = _footnoted(whole_ranks(table))
    plain_rows = isinstance(table.index, pd.RangeIndex)   # 0, 1, 2, ...: says nothing
    body = table.to_html(classes="data", border=0, float_format=_fmt, na_rep="",
                         escape=True, index=not plain_rows)
    cap = f'<p class="caption">{html.escape(text)}</p>' if text else ""
    if len(table) <= LONG_TABLE:
        return f'<div class="table-wrap">{body}{cap}{unknown}{notes}</div>'
    told = (f'<p class="caption">{len(table):,} rows: the table scrolls in its box, its '
            f'header stays in view.</p>')
    return (f'{told}<div class="table-wrap long">{body}</div>'
            f'<div class="table-wrap">{cap}{unknown}{notes}</div>')


LONG_TABLE: Final = 40
"""A table of more rows than this scrolls in a box of its own (``.table-wrap.long``), its
header in view, so a report on 200 models is not 200-row tables one after the other."""


def _unknown_columns(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``table`` without its columns that are NaN throughout for a stated reason
    (``attrs["nan_reasons"]``: what the data cannot identify), and the list (HTML) of those
    columns and of the blank cells elsewhere, each with its reason: a blank is never left
    unexplained, and a column of blanks does not widen the table.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evaluq.reporting.sections import _unknown_columns
    >>> t = pd.DataFrame({"a": [1.0, np.nan], "b": [np.nan, np.nan]})
    >>> t.attrs["nan_reasons"] = {"a": "one seed", "b": "no bootstrap"}
    >>> shown, notes = _unknown_columns(t)
    >>> list(shown.columns), "Not identifiable here" in notes, "Blank cells" in notes
    (['a'], True, True)
    """
    reasons = {str(k): str(v) for k, v in dict(table.attrs.get(NAN_REASONS) or {}).items()}
    gone: dict[str, list[str]] = {}
    blank: dict[str, list[str]] = {}
    for col in table.columns:
        reason = reasons.get(str(col))
        if reason is None or not bool(table[col].isna().any()):
            continue
        where = gone if bool(table[col].isna().all()) else blank
        where.setdefault(reason, []).append(str(col))
    if not gone and not blank:
        return table, ""
    items = [f"Not identifiable here (not shown): {', '.join(cols)}: {reason}."
             for reason, cols in gone.items()]
    items += [f"Blank cells in {_columns_text(cols, table)}: {reason}."
              for reason, cols in blank.items()]
    hidden = {c for cols in gone.values() for c in cols}
    shown = table.drop(columns=[c for c in table.columns if str(c) in hidden])
    shown.attrs = table.attrs
    lis = "".join(f"<li>{html.escape(t)}</li>" for t in items)
    return shown, f'<ul class="notes">{lis}</ul>'


def _columns_text(cols: list[str], table: pd.DataFrame) -> str:
    """The columns named in a note on blank cells: every column of a wide table (a model x
    model matrix) is not listed one by one."""
    if len(cols) == len(table.columns) and len(cols) > 6:
        return f"every column ({len(cols)})"
    return ", ".join(cols)


def _blank_reasons(table: pd.DataFrame, reasons: Mapping[str, str | None]) -> dict[str, str]:
    """``attrs["nan_reasons"]`` of ``table``: the reason of each column holding a NaN among
    ``reasons`` (column -> the ``nan_reason`` of the result it comes from, or None)."""
    keyed = {str(col): why for col, why in reasons.items()}
    return {str(col): str(keyed[str(col)]) for col in table.columns
            if keyed.get(str(col)) and _has_blank(table[col])}


def _has_blank(column: pd.Series) -> bool:
    """Whether a column holds a value written blank (NaN) or null in JSON (NaN, +-inf)."""
    if bool(column.isna().any()):
        return True
    kind = column.dtype.kind
    return kind in "fc" and not bool(np.isfinite(column.to_numpy()).all())


MAX_PAIRS: Final = 28
"""The pairwise figures (forest plot, probability of improvement) draw every pair up to this
many (8 models); with more models each model against the next in the leaderboard's (or
rliable's IQM) order, and the tables written beside the page hold every pair."""


LONG_TEXT: int = 40
"""A text longer than this that repeats down its column (the comparison's ``driver``) is shown
as a footnote mark, the text once below the table, so the table keeps readable columns and a
sane height; a long text that appears once stays in its cell."""


def _footnoted(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``table`` with its repeated long-text cells replaced by marks [1], [2], ... and the
    list of the texts (HTML), one per distinct text."""
    texts: dict[str, int] = {}
    out = table
    for col in table.columns:
        values = table[col]
        if not pd.api.types.is_string_dtype(values) and values.dtype != object:
            continue
        long = values[values.map(lambda v: isinstance(v, str) and len(v) > LONG_TEXT)]
        if not long.duplicated().any():
            continue
        for v in long:
            if v not in texts:
                texts[v] = len(texts) + 1
        out = out.assign(**{str(col): values.map(
            lambda v: f"[{texts[v]}]" if isinstance(v, str) and v in texts else v)})
    if not texts:
        return table, ""
    items = "".join(f"<li>{html.escape(t)}</li>" for t in texts)
    return out, f'<ol class="notes">{items}</ol>'


def _close(fig: Figure) -> None:
    fig.clear()


def _figure(fig: Figure, alt: str, caption: str | None = None) -> str:
    try:
        return _figure_html(fig, alt=alt, caption=caption)
    finally:
        _close(fig)


def _p(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


# --- sections -------------------------------------------------------------------------------

def _scale_warnings(cube: xr.Dataset, *, bounds: tuple[float, float] | None = None) -> list[str]:
    """Warnings about the scale of the scores: values out of bounds, languages or models on
    another scale.

    A model is on another scale when its median absolute score is at least ``SCALE_FACTOR`` (20)
    times the other models' median, or at most 1/20 of it, in at least ``SCALE_SHARE`` (75%)
    of its languages, or when its scores exceed 1.5 while every other model's stay within
    [-1, 1]. Measured (``python scripts/scale_check_false_alarms.py``): no warning on the
    real demo predictions (accuracy, F1); false alarms in 0.2% of 1000 Atari-like cubes
    (games on scales 1 to 1e5, algorithms about 2x apart) and 2.1% of 1000 cubes of
    accuracies 0.02-0.9 (a model at 0.02 among models at 0.5 is flagged: a broken run looks
    so); one model x100 among fractions is found in 500 of 500.

    Parameters
    ----------
    cube
        An evaluation cube.
    bounds
        The metric's range ``(low, high)``, e.g. ``(0, 100)`` for BLEU; scores outside it are
        reported.

    Returns
    -------
    list of str
        One sentence per problem found (empty when none).

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> from evaluq.reporting.sections import _scale_warnings
    >>> scores = np.array([[[0.31, 0.33], [35.0, 36.0]]])   # one language on a 0-100 scale
    >>> cube = eq.from_arrays(scores, outlier_threshold=None)   # the loader would warn too
    >>> print(_scale_warnings(cube)[0])  # doctest: +ELLIPSIS
    the languages look like different scales: ...
    """
    out: list[str] = []
    score = cube[SCORE]
    values = score.values[np.isfinite(score.values)]
    if values.size == 0:
        return ["every score is missing"]
    if bounds is not None:
        lo, hi = float(bounds[0]), float(bounds[1])
        outside = int(((values < lo) | (values > hi)).sum())
        if outside:
            out.append(f"{outside} of {values.size} scores lie outside the bounds [{lo:g}, "
                       f"{hi:g}] (min {values.min():.4g}, max {values.max():.4g})")
    return out + scale_findings(score)


def _identical_seeds(cube: xr.Dataset) -> str | None:
    """A remark on cells whose seeds all gave the same score (a seed SD of 0: greedy
    decoding, or a copied run), or None."""
    if cube.sizes.get(SEED, 1) < 2:
        return None
    flat = int((cube[SCORE].std(SEED) == 0).sum())
    return (f"{flat} (model, language) cells have identical scores for every seed: their "
            f"seed SD is 0 (deterministic runs, or a run copied?)." if flat else None)


def _source_text(source: str) -> str:
    """The cube's ``source`` for the data summary: with more than two files (a harness log
    directory holds one per model and task) their count and the folder they share, so the
    summary table stays readable; the full list stays in the cube's attributes.

    Examples
    --------
    >>> _source_text("/logs/a/x.jsonl; /logs/b/y.jsonl; /logs/b/z.jsonl")
    '3 files under /logs'
    >>> _source_text("runs.csv")
    'runs.csv'
    """
    parts = [p for p in source.split("; ") if p]
    if len(parts) <= 2:
        return source
    try:
        common = os.path.commonpath(parts)
    except ValueError:                      # absolute and relative paths mixed
        common = ""
    return f"{len(parts)} files under {common}" if common else f"{len(parts)} files"


LABELS_WIDTH: Final = 60
"""The data summary lists a dim's first labels up to about this many characters (long task
names would widen the table until its other values leave the view)."""


def _first_labels(values: Any, most: int = 8) -> str:
    """The first labels of a dim, at most ``most`` and about ``LABELS_WIDTH`` characters.

    Examples
    --------
    >>> _first_labels(["en", "de", "fr"])
    'en, de, fr'
    >>> _first_labels([f"mmlu_college_subject_{i}" for i in range(50)])
    'mmlu_college_subject_0, mmlu_college_subject_1, ...'
    """
    labels = [str(v) for v in list(values)[:most]]
    shown: list[str] = []
    for label in labels:
        if shown and len(", ".join([*shown, label])) > LABELS_WIDTH:
            break
        shown.append(label)
    return ", ".join(shown) + (", ..." if len(shown) < len(values) else "")


def _data_summary(cube: xr.Dataset, *, bounds: tuple[float, float] | None = None,
                 notes: Sequence[str] = (), scale_check: bool = True) -> Section:
    """Section: what the cube holds (sizes, variables), its missing cells and scale warnings.

    Parameters
    ----------
    cube
        The evaluation cube.
    bounds
        The metric's range, for ``_scale_warnings``.
    notes
        What the analysis did about missing data (cells left out, runs missing), shown in a
        box at the top of the section.
    scale_check
        Run ``_scale_warnings`` (False: the section says the check was switched off).

    Returns
    -------
    Section
        Id ``data``.

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.reporting.sections import _data_summary
    >>> s = _data_summary(eq.simulate_cube(n_models=2, rng=0))
    >>> s.id, "no warnings" in s.body
    ('data', True)
    """
    attrs = cube.attrs
    rows = {
        "metric": attrs.get("metric", ""),
        "orientation": "higher is better" if orientation(attrs) else "lower is better",
        "source": f"{_source_text(str(attrs.get('source', '')))} ({attrs.get('loader', '')})",
        "kind": "summary-only (means and SDs)" if is_summary(cube) else "scores per seed"
        + (" and bootstrap replicate" if BOOT_SCORE in cube else ""),
    }
    for dim in (MODEL, LANGUAGE, SEED, BOOTSTRAP):
        if dim in cube.sizes:
            rows[f"{dim}s"] = f"{cube.sizes[dim]} ({_first_labels(cube[dim].values)})"
    facts = pd.DataFrame({"value": pd.Series(rows)})
    missing = []
    for name, da in cube.data_vars.items():
        n_nan = int(np.isnan(da.values).sum()) if np.issubdtype(da.dtype, np.floating) else 0
        missing.append({"variable": name, "dims": " × ".join(map(str, da.dims)),
                        "cells": int(da.size), "missing": n_nan,
                        "share missing": n_nan / da.size if da.size else 0.0})
    miss = pd.DataFrame(missing).set_index("variable")
    body = [_note_box("Missing data", notes)] if notes else []
    body += [_table_html(facts, caption=""),
            _table_html(miss, caption="Missing cells are NaN: never filled, never dropped "
                                     "silently.")]
    empty = cube[SCORE].isnull().all(SEED) if SEED in cube[SCORE].dims else cube[SCORE].isnull()
    if bool(empty.any()):
        pairs = [f"{m}/{lang}" for m, lang in
                 zip(*[empty[d].values[idx] for d, idx in
                       zip(empty.dims, np.nonzero(empty.values), strict=True)], strict=True)]
        body.append(_p(f"No score at all for {len(pairs)} (model, language) cells: "
                       f"{', '.join(pairs[:10])}{', ...' if len(pairs) > 10 else ''}."))
    same = _identical_seeds(cube)
    body += [_p(same)] if same else []
    warnings = _scale_warnings(cube, bounds=bounds) if scale_check else []
    if warnings:
        body.append(_note_box("Scale warnings", warnings))
    elif not scale_check:
        body.append(_p("Scale checks: switched off (--no-scale-check / scale_check=False)."))
    else:
        body.append('<p class="ok">Scale checks: no warnings.</p>')
    return Section("data", "Data summary", "\n".join(body), notes=[*notes, *warnings])


def _note_box(title: str, lines: Sequence[str]) -> str:
    items = "".join(f"<li>{html.escape(w)}</li>" for w in lines)
    return f'<div class="warning"><strong>{html.escape(title)}</strong><ul>{items}</ul></div>'


def _variance_section(components: xr.Dataset) -> Section:
    """Section: the variance components as a table and as bars per language.

    Parameters
    ----------
    components
        The result of :func:`evaluq.variance_components`.

    Returns
    -------
    Section
        Id ``variance``; one figure (:func:`evaluq.plots.variance_bars`).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.reporting.sections import _variance_section
    >>> _variance_section(eq.variance_components(eq.simulate_cube(n_models=2, rng=0))).figures
    1
    """
    from evaluq.plots import variance_bars
    from evaluq.variance import variance_table

    table = variance_table(components)
    body = [_p("How much each score moves with the training seed (seed SD) and with the test "
               "set (bootstrap SD), per language; the table summarises them over languages."),
            _table_html(table)]
    if "tau_between" in table and bool(table["tau_between"].notna().any()):
        body.append(_p("sigma_between is the SD of a model's observed per-language means; "
                       "tau_between is the SD of its true per-language scores, sigma_between "
                       "with the seed and test-set noise taken out (method of moments, 0 when "
                       "the noise explains all of the spread)."))
    within = [v for v in ("sigma_seed", "sigma_boot") if v in components]
    if not any(bool(components[v].notnull().any()) for v in within):
        body.append(_p("No seed or bootstrap SD can be computed (one seed per cell and no "
                       "bootstrap replicates): the within-language noise is unknown, so the "
                       "intervals rest on the spread over languages alone."))
        return Section("variance", "Variance components", "\n".join(body))
    body.append(_figure(variance_bars(components), alt="variance components per language",
                        caption="Seed and bootstrap SDs per language and model."))
    return Section("variance", "Variance components", "\n".join(body), figures=1)


def _leaderboard_section(aggregated: xr.Dataset, pairwise: xr.Dataset,
                        board: pd.DataFrame) -> Section:
    """Section: the leaderboard with its intervals, the pairwise table and a forest plot.

    Parameters
    ----------
    aggregated
        The result of :func:`evaluq.aggregate`.
    pairwise
        The result of :func:`evaluq.pairwise_differences` on ``aggregated``.
    board
        The result of :func:`evaluq.leaderboard` on ``aggregated``.

    Returns
    -------
    Section
        Id ``leaderboard``; one figure (:func:`evaluq.plots.forest_plot`).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.reporting.sections import _leaderboard_section
    >>> agg = eq.aggregate(eq.resample(eq.simulate_cube(n_models=3, rng=0), n_resamples=200,
    ...                                rng=0))
    >>> s = _leaderboard_section(agg, eq.pairwise_differences(agg), eq.leaderboard(agg))
    >>> s.id, s.figures
    ('leaderboard', 1)
    """
    from evaluq.plots import forest_plot

    del aggregated  # the board and the differences carry what is shown
    if pairwise.sizes.get(MODEL, 0) < 2:
        body = [_table_html(board),
                _p("One model: its score and interval over the languages are shown; there is "
                   "no other model to compare it with, so the pairwise, rank and tier "
                   "sections are left out.")]
        return Section("leaderboard", "Leaderboard", "\n".join(body))
    order = list(board.index)                    # the leaderboard's order, best first
    n = len(order)
    pairs, which = None, "Each pair once"
    if n * (n - 1) // 2 > MAX_PAIRS:
        pairs = [(order[i], order[i + 1]) for i in range(n - 1)]
        which = (f"With {n} models, each model against the next on the leaderboard "
                 f"({n - 1} of {n * (n - 1) // 2} pairs; every pair is in the table below "
                 "and in the pairwise file)")
    table, summary = _pairwise_frame(pairwise), "All pairwise differences (table)"
    if len(table) > PAGE_ROWS:
        table = _neighbour_rows(table, order)
        summary = (f"Pairwise differences of neighbours on the leaderboard (table; {n - 1} of "
                   f"{n * (n - 1) // 2} pairs)")
        which = which.replace("every pair is in the table below and in", "every pair is in")
    body = [_table_html(board),
            _figure(forest_plot(pairwise, pairs=pairs),
                    alt="forest plot of pairwise differences",
                    caption=f"{which}, better model first; blue: the interval excludes 0."),
            f"<details><summary>{summary}</summary>", _table_html(table), "</details>"]
    return Section("leaderboard", "Leaderboard and pairwise differences", "\n".join(body),
                   figures=1)


PAGE_ROWS: Final = 500
"""The page shows a table of pairs whole up to this many rows (32 models); beyond, each
model against the next (the rows a reader compares), saying so: 19,900 rows (200 models)
were 6 MB of the page that no one reads; the tables written beside the page hold them all."""


def _pairwise_frame(pairwise: xr.Dataset) -> pd.DataFrame:
    """:func:`evaluq.pairwise_table` (each pair once) with ``attrs["nan_reasons"]``: z =
    observed / sd is NaN where the pair's difference is the same in every resample."""
    from evaluq.pairwise import pairwise_table

    table = pairwise_table(pairwise, unique=True)
    reasons = {}
    if "z" in table and "sd" in table:
        blank = table["z"].isna()
        if bool(blank.any()) and bool((table["sd"][blank] == 0).all()):
            reasons["z"] = ("z = observed / sd is undefined where sd is 0: the pair's "
                            "difference is the same in every resample (e.g. identical scores)")
    table.attrs[NAN_REASONS] = reasons
    return table


def _neighbour_rows(table: pd.DataFrame, order: Sequence[Any], *,
                    name: str = "pairwise") -> pd.DataFrame:
    """The rows of a table of pairs (index ``(model, model_b, ...)``) of each model and the
    next in ``order``, in that order, the caption saying where the others are."""
    rows = set(table.index)
    keep = []
    for a, b in itertools.pairwise(order):
        keep += [pair for pair in ((a, b), (b, a)) if pair in rows][:1]
    out = table.loc[keep]
    out.attrs = {**table.attrs, "caption": (
        f"{table.attrs.get('caption', '')} Shown: each model against the next ({len(keep)} "
        f"of {len(table):,} rows); every row is in the table {name} written beside this page "
        f"(evaluq report: <metric>_{name}.csv, .md, .tex; "
        f"report(...).analyses[metric].tables()[{name!r}] in Python).").strip()}
    return out


def _ranks_section(ranks: xr.Dataset, posterior: xr.Dataset | None = None) -> Section:
    """Section: rank-distribution heatmaps, frequentist and (when given) posterior side by side.

    Parameters
    ----------
    ranks
        The result of :func:`evaluq.rank_distribution`.
    posterior
        A hierarchical fit's ``rank_probabilities()`` (same Dataset layout), or None.

    Returns
    -------
    Section
        Id ``ranks``; one or two figures (:func:`evaluq.plots.rank_heatmap`).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.reporting.sections import _ranks_section
    >>> agg = eq.aggregate(eq.resample(eq.simulate_cube(n_models=3, rng=0), n_resamples=200,
    ...                                rng=0))
    >>> _ranks_section(eq.rank_distribution(agg)).figures
    1
    """
    n = ranks.attrs.get("n_resamples", "?")
    drawn = [(ranks, f"resampling ({n} resamples)", "rank heatmap, resampling")]
    if posterior is not None:
        drawn.append((posterior, "posterior", "rank heatmap, posterior"))
    figs, told = _rank_heatmaps(drawn)
    table = pd.DataFrame({"expected rank": ranks["expected_rank"].to_series(),
                          "P(best)": ranks["p_best"].to_series()})
    if posterior is not None:
        table["posterior expected rank"] = posterior["expected_rank"].to_series()
        table["posterior P(best)"] = posterior["p_best"].to_series()
    table = table.sort_values("expected rank")
    body = [_p("P(rank = r): the share of resamples (or posterior draws) in which each model "
               "takes rank r; rank 1 is the best." + told),
            f'<div class="figure-row">{"".join(figs)}</div>' if len(figs) > 1 else figs[0],
            _table_html(table, caption="Expected rank and P(best).")]
    return Section("ranks", "Rank distributions", "\n".join(body), figures=len(figs))


RANK_MODELS: Final = 30
"""The rank heatmaps draw every model up to this many; beyond, the models with the best
expected rank (200 rows of 200 ranks were a 49-inch figure, nearly white on a 0-1 scale)."""


def _rank_heatmaps(drawn: Sequence[tuple[xr.Dataset, str, str]]) -> tuple[list[str], str]:
    """The rank heatmaps of ``(ranks, title, alt)`` as figures, and a sentence saying what
    they show when not every model: beyond ``RANK_MODELS`` models, those with the best
    expected rank in the first (the same models in each), on a colour scale up to the
    largest probability shown."""
    from evaluq.plots import rank_heatmap

    first = drawn[0][0]
    n = first.sizes[MODEL]
    if n <= RANK_MODELS:
        return [_figure(rank_heatmap(r, title=t), alt=a) for r, t, a in drawn], ""
    best = first[MODEL].values[np.argsort(first["expected_rank"].values,
                                          kind="stable")[:RANK_MODELS]]
    subsets = [r.sel({MODEL: best}) for r, _, _ in drawn]
    top = max(float(r["probability"].max()) for r in subsets)
    figs = []
    for sub, (_, title, alt) in zip(subsets, drawn, strict=True):
        fig = rank_heatmap(sub, title=title)
        fig.axes[0].images[0].set_clim(0.0, top)
        figs.append(_figure(fig, alt=alt))
    return figs, (f" With {n} models the heatmaps show the {RANK_MODELS} with the best "
                  f"expected rank, over all {first.sizes[RANK]} ranks, on a colour scale from 0 "
                  f"to {top:.2g} (the largest probability shown); the table below lists "
                  "every model, and the table ranks written beside this page every P(rank = "
                  "r).")


def _tiers_section(aggregated: xr.Dataset, tiers: xr.DataArray,
                  cd: xr.Dataset | None = None) -> Section:
    """Section: the significance groups as a critical-difference-style diagram.

    Parameters
    ----------
    aggregated
        The result of :func:`evaluq.aggregate`.
    tiers
        The result of :func:`evaluq.significance_groups` on it.
    cd
        The result of :func:`evaluq.critical_difference` on the cube: when given, the figure
        is its critical-difference diagram (Demšar's, readable with few models) instead of
        the tier diagram; the table still lists the resampling tiers.

    Returns
    -------
    Section
        Id ``tiers``; one figure (:func:`evaluq.plots.critical_difference_diagram` when ``cd``
        is given, else :func:`evaluq.plots.tier_diagram`).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.reporting.sections import _tiers_section
    >>> agg = eq.aggregate(eq.resample(eq.simulate_cube(n_models=3, rng=0), n_resamples=200,
    ...                                rng=0))
    >>> _tiers_section(agg, eq.significance_groups(agg)).figures
    1
    """
    from evaluq.plots import tier_diagram

    groups = pd.DataFrame({"tier": tiers.to_series()}).sort_values("tier")
    body = [_p(str(tiers.attrs.get("rule", "")))]
    floor = _p_value_floor(aggregated, tiers)
    if floor is not None:
        body.append(f'<div class="warning">{html.escape(floor)}</div>')
    figure = (_figure(tier_diagram(aggregated, tiers), alt="tier diagram",
                      caption="Models joined by a bar cannot be told apart from their tier's "
                              "top model.") if cd is None else _cd_figure(cd))
    body += [figure, _table_html(groups, caption="")]
    return Section("tiers", "Significance groups", "\n".join(body), figures=1,
                   notes=[floor] if floor else [])


def _cd_figure(cd: xr.Dataset) -> str:
    """The critical-difference diagram of :func:`evaluq.critical_difference`, with its
    caption."""
    from evaluq.plots import critical_difference_diagram

    at = cd.attrs
    k, crit = int(at.get("n_models", 0)), float(at.get("cd", np.nan))
    powerless = (f" With {at.get('n_blocks')} languages the critical difference ({crit:.3g}) "
                 f"is not below {k - 1}, the largest difference of mean ranks {k} models can "
                 f"have: this test cannot separate any pair, whatever the scores."
                 if k > 1 and crit >= k - 1 else "")
    return _figure(critical_difference_diagram(cd), alt="critical-difference diagram",
                   caption=f"Critical-difference diagram (Demšar 2006): mean rank of each "
                           f"model over the {at.get('n_blocks')} languages (seed means, 1 = "
                           f"best); models joined by a bar are not separated by the "
                           f"{at.get('test')} test at α = {at.get('alpha')} (Friedman p = "
                           f"{float(at.get('friedman_pvalue', np.nan)):.3g}).{powerless} The "
                           "table lists the tiers of the resampling tests.")


def _adjacent_pairs(pairwise: xr.Dataset) -> list[tuple[Any, Any]] | None:
    """None (every pair) up to ``MAX_PAIRS`` pairs; beyond, each model against the next
    when the models are ordered by their mean difference to all others, best first (the
    figures' rule; the tables hold every pair)."""
    n = pairwise.sizes.get(MODEL, 0)
    if n * (n - 1) // 2 <= MAX_PAIRS:
        return None
    d = pairwise["observed" if "observed" in pairwise else "mean"].transpose(MODEL, MODEL_B)
    sign = 1.0 if orientation(pairwise.attrs) else -1.0
    score = sign * np.nanmean(np.where(np.eye(n, dtype=bool), np.nan, d.values), axis=1)
    order = pairwise[MODEL].values[np.argsort(-score, kind="stable")]
    return [(order[i], order[i + 1]) for i in range(n - 1)]


def _p_value_floor(aggregated: xr.Dataset, tiers: xr.DataArray) -> str | None:
    """A warning when too few resamples make every adjusted test unable to reject
    (``_kernels.p_value_floor``)."""
    n = aggregated.attrs.get("n_resamples")
    alpha = tiers.attrs.get("alpha")
    adjustment = tiers.attrs.get("adjustment")
    if n is None or alpha is None or adjustment is None:
        return None
    return p_value_floor(int(n), aggregated.sizes[MODEL], float(alpha), str(adjustment))


def _as_frame(value: Any, name: str) -> pd.DataFrame:
    if isinstance(value, pd.DataFrame):
        return value
    if isinstance(value, pd.Series):
        return value.to_frame()
    if isinstance(value, xr.Dataset | xr.DataArray):
        return value.to_dataframe() if isinstance(value, xr.Dataset) else value.to_series(
        ).to_frame()
    if isinstance(value, Mapping):
        return pd.DataFrame({"value": pd.Series({str(k): v for k, v in value.items()})})
    raise TypeError(f"the fit's {name}() must return a DataFrame, Series, xarray object or "
                    f"mapping; got {type(value).__name__}")


@renamed_argument("level", "scope", meaning="population or benchmark")
def _posterior_section(fit: _HierarchicalFitLike, *, scope: str = "benchmark") -> Section:
    """Section: the posterior next to the resampling results, and the sampler diagnostics.

    Parameters
    ----------
    fit
        A fitted hierarchical model (``evaluq.hierarchical.fit_hierarchical``): anything with
        ``pairwise_differences(scope)``, ``compare_frequentist()`` and ``diagnostics()``.
        How its test-set errors were paired (``fit.data.pairing``) is stated, and, when
        they were taken as independent, that the posterior is then conservative.
    scope
        ``"benchmark"`` (these languages) or ``"population"`` (languages sampled); ``level``
        is its deprecated name.

    Returns
    -------
    Section
        Id ``posterior``; one figure (a forest plot of the posterior differences).
    """
    from evaluq.plots import forest_plot

    compare = _as_frame(fit.compare_frequentist(), "compare_frequentist")
    diagnostics = _as_frame(fit.diagnostics(), "diagnostics")
    pw = fit.pairwise_differences(scope)
    data = getattr(fit, "data", None)
    pairing = [_p(text) for text in (f"Test-set errors {getattr(data, 'pairing', '')}."
                                     if getattr(data, "pairing", "") else "",
                                     str(getattr(data, "pairing_note", ""))) if text]
    weak = (fit.prior_contraction().attrs["note"] if hasattr(fit, "prior_contraction")
            else "")
    post = getattr(getattr(fit, "idata", None), "posterior", None)
    size = (f" ({post.sizes['chain']} chains x {post.sizes['draw']} draws)"
            if post is not None and {"chain", "draw"} <= set(post.sizes) else "")
    body = [_p(f"Posterior of the hierarchical model{size} beside the resampling results."),
            *pairing, *([_p(f"Note: {weak}.")] if weak else []),
            _table_html(compare, caption=str(compare.attrs.get(
                "caption", "Posterior versus frequentist (resampling) estimates."))),
            *([_figure(forest_plot(pw, pairs=_adjacent_pairs(pw),
                                   title=f"posterior differences ({scope} scope)"),
                       alt="forest plot of posterior differences")]
              if pw.sizes.get(MODEL, 0) > 1 else []),
            "<h3>Sampler diagnostics</h3>",
            _table_html(diagnostics, caption=str(diagnostics.attrs.get(
                "caption", "R-hat near 1 and large effective sample sizes mean the chains "
                           "agree.")))]
    return Section("posterior", "Posterior (hierarchical model)", "\n".join(body),
                   figures=int(pw.sizes.get(MODEL, 0) > 1))


def _item_frame(da: xr.Dataset, index: list[str]) -> pd.DataFrame:
    """A Dataset of per-model or per-pair statistics as a flat table indexed by ``index``."""
    frame = da.to_dataframe().reset_index()
    keep = [c for c in frame.columns if c not in da.coords or c in index]
    return frame[keep].set_index(index)


def _aligned(da: xr.DataArray, frame: pd.DataFrame) -> np.ndarray:
    """A DataArray's values in the order of ``frame``'s index (same level names)."""
    series = da.to_series()
    if isinstance(series.index, pd.MultiIndex):
        order: Any = list(frame.index.names)
        series = series.reorder_levels(order)
    return series.reindex(frame.index).to_numpy()


def item_tables(items: xr.Dataset, *, higher_is_better: bool = True
                ) -> dict[str, pd.DataFrame]:
    """The tables of :func:`evaluq.item_means`: means per model, paired differences per pair.

    Parameters
    ----------
    items
        The result of :func:`evaluq.item_means`.
    higher_is_better
        Orientation: each pair is shown once, the better model first (True or False).

    Returns
    -------
    dict of str to pandas.DataFrame
        ``item_means`` (model[, language]: mean, se, its interval, se_iid, the
        within-item and item-level variances) and ``item_differences`` (model, model_b[,
        language], each pair once: difference, se_difference, interval, se_difference_iid,
        correlation, z = difference / se_difference), each with a caption in ``attrs``.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> from evaluq.reporting.sections import item_tables
    >>> df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "q": [1, 2, 3, 4] * 2,
    ...                    "ok": [1, 1, 0, 1, 0, 1, 0, 1]})
    >>> t = item_tables(eq.item_means(df, model="model", item="q", score="ok"))
    >>> t["item_differences"][["difference", "se_difference"]].round(3).values.tolist()
    [[0.25, 0.25]]
    """
    from evaluq._dims import (
        CI_DIFFERENCE,
        CI_MEAN,
        DIFFERENCE,
        LOWER,
        MODEL_B,
        N_CLUSTERS,
        N_ITEMS,
        SE_DIFFERENCE,
        UPPER,
    )
    from evaluq._validation import check_orientation, check_result_dims

    if not isinstance(items, xr.Dataset) or CI_MEAN not in items or CI_DIFFERENCE not in items:
        raise TypeError("`items` must be the Dataset of evaluq.item_means (with "
                        f"{CI_MEAN!r} and {CI_DIFFERENCE!r}); got {type(items).__name__}")
    check_result_dims("items", items, [MODEL, MODEL_B], "evaluq.item_means")
    higher_is_better = check_orientation(higher_is_better)
    extra = [LANGUAGE] if LANGUAGE in items.dims else []
    per_model = [v for v in items.data_vars if set(items[v].dims) <= {MODEL, *extra}]
    per_pair = [v for v in items.data_vars
                if MODEL_B in items[v].dims and "ci_bound" not in items[v].dims]
    means = _item_frame(items[per_model], [MODEL, *extra])
    for bound in (LOWER, UPPER):
        means[bound] = _aligned(items[CI_MEAN].sel(ci_bound=bound), means)
    means = means[[*means.columns[:2], LOWER, UPPER, *means.columns[2:-2]]]
    diffs = _item_frame(items[per_pair], [MODEL, MODEL_B, *extra])
    for bound in (LOWER, UPPER):
        diffs[bound] = _aligned(items[CI_DIFFERENCE].sel(ci_bound=bound), diffs)
    diffs["z"] = diffs[DIFFERENCE] / diffs[SE_DIFFERENCE]
    sign = 1.0 if higher_is_better else -1.0
    first = diffs.index.get_level_values(MODEL) < diffs.index.get_level_values(MODEL_B)
    tied = (diffs[DIFFERENCE] == 0) | diffs[DIFFERENCE].isna()  # NaN pairs shown once too
    diffs = diffs[(sign * diffs[DIFFERENCE] > 0) | (tied & first)]
    diffs = diffs.sort_values(DIFFERENCE, ascending=not higher_is_better)
    level = items[CI_MEAN].attrs.get("confidence_level", 0.95)
    kind = items.attrs.get("se_kind", "")
    sizes = f"{items[N_ITEMS].values.tolist()} items" + (
        f" in {items[N_CLUSTERS].values.tolist()} clusters ({items.attrs.get('cluster_column')})"
        if N_CLUSTERS in items else "")
    mean_ci = items.attrs.get("ci_method", "normal interval")
    diff_ci = items.attrs.get("ci_difference_method", "normal interval")
    means.attrs = {"caption": (
        f"Mean over items per model, {sizes}; se: {kind} standard error; {level:.0%} "
        f"interval: {mean_ci}; se_iid: items treated as independent; n_effective: the items' "
        "worth once their clustering is counted; var_within: variance over epochs (seeds) "
        "within an item, var_item: variance of the items' expected scores."),
        "uncertainty": f"{kind} SE"}
    diffs.attrs = {"caption": (
        f"Paired differences (model minus model_b) on the same items, each pair once, "
        f"better model first; se_difference = sqrt(var_A + var_B - 2 cov_AB) ({kind}); "
        f"{level:.0%} interval: {diff_ci}; z = difference / se_difference; correlation: of "
        "the two models' item scores (what pairing gains)."), "uncertainty": f"{kind} SE"}
    means.attrs[NAN_REASONS] = _item_reasons(items, means, CI_MEAN)
    diffs.attrs[NAN_REASONS] = _item_reasons(items, diffs, CI_DIFFERENCE)
    return {"item_means": means, "item_differences": diffs}


def _item_reasons(items: xr.Dataset, table: pd.DataFrame, ci: str) -> dict[str, str]:
    """``attrs["nan_reasons"]`` of an :func:`item_tables` table: each variable's
    ``nan_reason``; ``var_item`` and ``z`` say which input they lack."""
    from evaluq._dims import SE_DIFFERENCE, VAR_ITEM, VAR_WITHIN

    why: dict[str, str | None] = {str(v): items[v].attrs.get(NAN_REASON)
                                  for v in items.data_vars}
    why["lower"] = why["upper"] = items[ci].attrs.get(NAN_REASON)
    if VAR_ITEM in table and VAR_WITHIN in table:
        within = table[VAR_WITHIN][table[VAR_ITEM].isna()]
        if len(within) and bool(within.isna().all()):
            why[VAR_ITEM] = (f"var_item = max(0, s^2 - var_within / K) needs var_within: "
                             f"{why.get(VAR_WITHIN)}")
    if "z" in table and SE_DIFFERENCE in table:
        se = table[SE_DIFFERENCE][~np.isfinite(table["z"].to_numpy(dtype=float))]
        parts = ([f"se_difference is undefined ({why.get(SE_DIFFERENCE)})"]
                 if bool(se.isna().any()) else [])
        if bool((se == 0).any()):
            parts.append("se_difference is 0 (the two models' item scores differ by the same "
                         "amount on every item)")
        why["z"] = "z = difference / se_difference is not a number where " + " or ".join(
            parts) if parts else None
    return _blank_reasons(table, why)


FEW_ITEMS: int = 30
"""Below this many effective items (n / design effect) a model's P(best) and tier carry a
caution: they would move a lot between benchmarks of the same kind."""


def _few_items_caution(items: xr.Dataset | None) -> str | None:
    """A caution for P(best) and the tiers when some model rests on fewer than
    :data:`FEW_ITEMS` effective items (:func:`evaluq.item_means`' ``n_effective``), or None.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a"] * 9 + ["b"] * 9, "q": list(range(9)) * 2,
    ...                    "ok": [1] * 9 + [1, 0] * 4 + [1]})
    >>> print(_few_items_caution(eq.item_means(df, model="model", item="q", score="ok")))
    ... # doctest: +ELLIPSIS
    Few items: P(best), the ranks and the tiers rest on 9 effective items...
    """
    if items is None or "n_effective" not in items:
        return None
    n_eff = items["n_effective"]
    if LANGUAGE in n_eff.dims:                  # effective items over the languages
        n_eff = n_eff.sum(LANGUAGE)
    least = float(n_eff.min())
    if not least < FEW_ITEMS:
        return None
    n_items = items["n_items"].sum() if "n_items" in items else None
    of = f" (of {int(n_items.max())} items)" if n_items is not None else ""
    return (f"Few items: P(best), the ranks and the tiers rest on {least:.3g} effective "
            f"items{of} for the model with fewest, once clustering and epochs are counted; "
            f"with fewer than {FEW_ITEMS} they would move a lot on another draw of items "
            f"from the same kind of benchmark. Read them with the intervals.")


def _caution_box(text: str) -> str:
    """A warning box of one sentence (HTML)."""
    return f'<div class="warning">{html.escape(text)}</div>'


def _harness_logs(attrs: Mapping[str, Any]) -> str:
    """The harness logs a table came from (``harness_logs`` of :mod:`evaluq.io`), as HTML."""
    import json

    if "harness_logs" not in attrs:
        return ""
    logs = pd.DataFrame(json.loads(attrs["harness_logs"]))
    logs.index = pd.RangeIndex(1, len(logs) + 1, name="log")
    return ("<details><summary>The harness logs read "
            f"({html.escape(str(attrs.get('harness', '')))} "
            f"{html.escape(str(attrs.get('harness_version', '')))})</summary>"
            f"{_table_html(logs, caption='')}</details>")


def _item_means_section(items: xr.Dataset, *, higher_is_better: bool = True) -> Section:
    """Section: per-item means and paired differences with their analytic (clustered) SEs.

    Parameters
    ----------
    items
        The result of :func:`evaluq.item_means`.
    higher_is_better
        Orientation of the differences table (better model first).

    Returns
    -------
    Section
        Id ``items``; the tables of :func:`item_tables` and, when the items came from a
        harness's logs (:mod:`evaluq.io`), the list of logs.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> from evaluq.reporting.sections import _item_means_section
    >>> df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "q": [1, 2, 3, 4] * 2,
    ...                    "ok": [1, 1, 0, 1, 0, 1, 0, 1]})
    >>> _item_means_section(eq.item_means(df, model="model", item="q", score="ok")).id
    'items'
    """
    tables = item_tables(items, higher_is_better=higher_is_better)
    body = [_p("The same comparison from the items themselves: the mean over items with its "
               "standard error by the central limit theorem (cluster-robust when items come "
               "in clusters, such as several questions on one passage), and the differences "
               "between models on the same items with the SE of the paired difference."),
            _table_html(tables["item_means"]), _table_html(tables["item_differences"]),
            _harness_logs(items.attrs)]
    return Section("items", "Per-item means and paired differences (analytic SEs)",
                   "\n".join(b for b in body if b))


def _reproducibility_section(settings: Mapping[str, Any], *, command: str | None = None,
                            ) -> Section:
    """Section: every setting needed to reproduce the report, versions and the command.

    Parameters
    ----------
    settings
        Option name -> value (``rng``, ``n_resamples``, ...), shown as given.
    command
        The exact command line (for ``evaluq report``) or call.

    Returns
    -------
    Section
        Id ``reproducibility``.

    Examples
    --------
    >>> from evaluq.reporting.sections import _reproducibility_section
    >>> "n_resamples" in _reproducibility_section({"n_resamples": 100, "rng": 0}).body
    True
    """
    import importlib.metadata as md
    import platform

    versions = {"python": platform.python_version()}
    for pkg in ("evaluq", "numpy", "scipy", "pandas", "xarray", "matplotlib", "pymc", "arviz"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = "not installed"
    opts = pd.DataFrame({"value": pd.Series({str(k): repr(v) for k, v in settings.items()})})
    opts.index.name = "option"
    vers = pd.DataFrame({"version": pd.Series(versions)})
    vers.index.name = "package"
    body = []
    if command:
        body.append(f"<p>Command:</p><pre><code>{html.escape(command)}</code></pre>")
    rng = settings.get("rng")
    if rng is None or not isinstance(rng, int | np.integer):
        body.append('<div class="warning">The random seed was not an integer '
                    f"({html.escape(repr(rng))}): rerun with an integer <code>rng</code> to "
                    "reproduce the resamples exactly.</div>")
    body += [_table_html(opts, caption=""), _table_html(vers, caption="")]
    return Section("reproducibility", "Reproducibility", "\n".join(body))


# --- the page -------------------------------------------------------------------------------------

_CSS = """
:root { --ink: #1f2933; --muted: #52606d; --line: #d9e2ec; --accent: #1b6ca8; }
* { box-sizing: border-box; }
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); margin: 0; background: #f5f7fa; line-height: 1.45; }
header { background: #102a43; color: white; padding: 1.4rem 2rem; }
header h1 { margin: 0 0 .3rem 0; font-size: 1.6rem; }
header p { margin: 0; color: #bcccdc; font-size: .9rem; }
nav { padding: .6rem 2rem; background: white; border-bottom: 1px solid var(--line);
      position: sticky; top: 0; z-index: 1; font-size: .9rem; }
nav a { margin-right: 1.1rem; color: var(--accent); text-decoration: none; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 2rem 3rem; }
.metric-block > h2.metric { font-size: 1.35rem; border-bottom: 2px solid var(--accent);
      padding-bottom: .2rem; margin-top: 2rem; }
.report-section { background: white; border: 1px solid var(--line); border-radius: 6px;
      padding: .6rem 1.4rem 1.2rem; margin: 1.2rem 0; }
.report-section h2 { font-size: 1.15rem; color: #102a43; }
.table-wrap { overflow-x: auto; margin: .8rem 0; }
.table-wrap.long { max-height: 32rem; overflow-y: auto; border: 1px solid var(--line);
      display: inline-block; max-width: 100%; }
.table-wrap.long thead tr:first-child th { position: sticky; top: 0; }
table.data { border-collapse: collapse; font-size: .82rem; font-variant-numeric: tabular-nums; }
table.data th, table.data td { padding: .25rem .6rem; border-bottom: 1px solid var(--line);
      text-align: right; }
table.data th { background: #f0f4f8; }
table.data tbody th { text-align: left; }
p.caption, figcaption { color: var(--muted); font-size: .8rem; max-width: 60rem; }
figure { margin: .6rem 0; display: inline-block; vertical-align: top; }
img.figure { max-width: 100%; height: auto; border: 1px solid #eef2f6; }
.figure-scroll { max-height: 56rem; overflow-y: auto; overflow-x: hidden; width: fit-content;
      max-width: 100%; border: 1px solid var(--line); }
.figure-row { display: flex; flex-wrap: wrap; gap: 1.2rem; align-items: flex-start; }
.figure-row figure { flex: 1 1 0; min-width: 280px; max-width: 520px; }
.figure-row figure img { width: 100%; }
.warning { background: #fff8e1; border-left: 4px solid #f0b429; padding: .5rem 1rem;
      margin: .8rem 0; font-size: .9rem; }
.ok { color: #27ab83; }
pre { background: #f0f4f8; padding: .6rem; overflow-x: auto; font-size: .85rem; }
details summary { cursor: pointer; color: var(--accent); font-size: .9rem; }
ol.notes, ul.notes { color: var(--muted); font-size: .8rem; max-width: 60rem; margin: .3rem 0; }
table.data td, table.data tbody th { white-space: nowrap; }
footer { color: var(--muted); font-size: .8rem; text-align: center; padding: 1rem; }
"""


def render_page(title: str, blocks: Sequence[tuple[str | None, Sequence[Section]]], *,
                subtitle: str = "", alerts: Sequence[str] = ()) -> str:
    """The whole report as one HTML document: inline CSS, no script, no external URL.

    Parameters
    ----------
    title
        Page title.
    blocks
        ``(heading, sections)`` pairs: one block per metric (``heading`` None for a single
        unnamed block); section ids are prefixed with the block number when there are several.
    subtitle
        Line under the title.
    alerts
        Sentences shown in a warning box above every section (the scale verdict: a model on
        another scale must be seen before its rank).

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> from evaluq.reporting.sections import Section, render_page
    >>> page = render_page("Report", [(None, [Section("a", "A", "<p>hi</p>")])])
    >>> page.startswith("<!DOCTYPE html>"), 'id="a"' in page
    (True, True)
    """
    _check_page(title, blocks, subtitle)
    nav, parts = [], []
    several = len(blocks) > 1
    for k, (heading, sections) in enumerate(blocks):
        inner = []
        for s in sections:
            sid = f"m{k}-{s.id}" if several else s.id
            label = f"{heading}: {s.title}" if several and heading else s.title
            nav.append(f'<a href="#{html.escape(sid)}">{html.escape(label)}</a>')
            inner.append(Section(sid, s.title, s.body, s.figures).html())
        head = f'<h2 class="metric">{html.escape(heading)}</h2>' if heading else ""
        parts.append(f'<div class="metric-block">{head}{"".join(inner)}</div>')
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p></header>\n"
            f"<nav>{''.join(nav)}</nav>\n<main>\n"
            f"{_note_box('Check before reading the ranks', alerts) if alerts else ''}"
            f"{''.join(parts)}\n</main>\n"
            "<footer>Made with evaluq.</footer>\n</body>\n</html>\n")


def _check_page(title: Any, blocks: Any, subtitle: Any) -> None:
    """``render_page``'s arguments: text, and ``(heading, sections)`` pairs of Sections."""
    for name, value in (("title", title), ("subtitle", subtitle)):
        if not isinstance(value, str):
            raise TypeError(f"`{name}` must be text; got {type(value).__name__}")
    if isinstance(blocks, str | bytes) or not isinstance(blocks, Sequence):
        raise TypeError(f"`blocks` must be a list of (heading, sections) pairs; got "
                        f"{type(blocks).__name__}")
    for block in blocks:
        if not (isinstance(block, tuple | list) and len(block) == 2
                and isinstance(block[1], Sequence)
                and all(isinstance(s, Section) for s in block[1])):
            raise TypeError(f"`blocks` must hold (heading, [Section, ...]) pairs; got "
                            f"{block!r:.80}")


# --- per-item data: power ---------------------------------------------------------------------

def _power_section(cube: xr.Dataset, *, alpha: float = 0.05, power: float = 0.8) -> Section:
    """Section: the smallest detectable difference, and where more compute buys the most.

    Parameters
    ----------
    cube
        A cube with paired ``boot_score`` (and ``n_items``, as :func:`evaluq.from_items`
        makes), or a design of :mod:`evaluq.power`.
    alpha, power
        The test's level and the power wanted.

    Returns
    -------
    Section
        Id ``power``; one figure (:func:`evaluq.plots.mde_plot`) when the cube records its
        items, none otherwise.

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.reporting.sections import _power_section
    >>> d = eq.power.design_from_sds(sd_item=0.5, n_items=400)
    >>> _power_section(d).figures
    1
    """
    from evaluq._dims import MODEL_B, N_ITEMS, N_SEEDS
    from evaluq.plots import mde_plot
    from evaluq.power import compute_allocation, mde_grid, minimum_detectable_effect
    from evaluq.power import design as power_design

    design = power_design(cube) if "var_test" not in cube.data_vars else cube
    table = compute_allocation(design, alpha=alpha, power=power)
    mde = minimum_detectable_effect(design, alpha=alpha, power=power)
    frame = mde.to_dataframe().reset_index()
    order = {m: k for k, m in enumerate(mde[MODEL].values)}
    frame = frame[frame[MODEL].map(order) < frame[MODEL_B].map(order)].set_index(
        [MODEL, MODEL_B])[["mde"]]
    frame.attrs["caption"] = (f"Minimum detectable difference per pair (two-sided alpha "
                              f"{alpha:g}, power {power:g}), in the metric's units.")
    body = [_p(f"The smallest true difference between two models this evaluation detects "
               f"with probability {power:g} at level {alpha:g}. {table.attrs['summary']}"),
            _table_html(table), _table_html(frame)]
    figures = 0
    n_items = design[N_ITEMS].values
    if np.isfinite(n_items).all():
        n = float(np.mean(n_items))
        s = int(np.nanmax(design[N_SEEDS].values))
        seeds = sorted({1, s, 2 * s, 4 * s}) if s >= 2 else [1]
        grid = mde_grid(design, n_items=[max(1, round(n * f)) for f in
                                            (0.25, 0.5, 1, 2, 4)],
                           n_seeds=seeds, alpha=alpha, power=power)
        body.append(_figure(mde_plot(grid), alt="minimum detectable effect against items",
                            caption="Median over pairs of the MDE against the items per "
                                    "language, one line per number of seeds."))
        figures = 1
    return Section("power", "Power: the smallest detectable difference", "\n".join(body),
                   figures=figures)


# --- the field's methods: rliable and Almost Stochastic Order (issue 19) ------------------------

def _field_tables(estimates: xr.Dataset | None, eps_min: xr.DataArray | None,
                 improvement: xr.Dataset | None = None) -> dict[str, pd.DataFrame]:
    """The tables of ``_field_methods_section``, by file stem, each with a caption.

    Parameters
    ----------
    estimates
        The result of :func:`evaluq.interval_estimates`, or None.
    eps_min
        The result of :func:`evaluq.multi_aso`, or None.
    improvement
        The result of :func:`evaluq.probability_of_improvement`, or None.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``interval_estimates`` (one row per model: each aggregate with its interval's
        ``lower`` and ``upper`` ends), ``multi_aso`` (the eps_min matrix, rows ``model``,
        columns ``model_b``) and ``probability_of_improvement`` (one row per ordered pair:
        the estimate of P(X > Y) and its interval), the ones whose input is given.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> from evaluq.reporting.sections import _field_tables
    >>> cube = eq.from_arrays(np.random.default_rng(0).normal(0.6, 0.1, (2, 4, 3)))
    >>> est = eq.interval_estimates(cube, n_resamples=200, rng=0)
    >>> list(_field_tables(est, None)["interval_estimates"].columns[:3])
    ['median', 'median lower', 'median upper']
    """
    from evaluq._dims import AGGREGATE, CI, CI_BOUND, ESTIMATE, MODEL_B

    out: dict[str, pd.DataFrame] = {}
    if estimates is not None:
        cols: dict[str, pd.Series] = {}
        for agg in estimates[AGGREGATE].values:
            cols[str(agg)] = estimates[ESTIMATE].sel({AGGREGATE: agg}).to_series()
            for bound in estimates[CI_BOUND].values:
                cols[f"{agg} {bound}"] = estimates[CI].sel({AGGREGATE: agg,
                                                            CI_BOUND: bound}).to_series()
        table = pd.DataFrame(cols)
        level = float(estimates[CI].attrs.get("confidence_level", np.nan))
        table.attrs = {"caption": (
            f"rliable's aggregates of each model's runs x languages scores, with "
            f"{level:.0%} stratified-bootstrap percentile intervals "
            f"({estimates.attrs.get('n_resamples', '?')} resamples; runs redrawn within each "
            "language, languages fixed). IQM and optimality gap pool runs x languages; "
            "median and mean aggregate the per-language means over runs."),
            "uncertainty": "percentile intervals over stratified-bootstrap resamples"}
        why = {str(agg): estimates[ESTIMATE].attrs.get(NAN_REASON)
               for agg in estimates[AGGREGATE].values}
        why |= {f"{agg} {bound}": estimates[CI].attrs.get(NAN_REASON)
                for agg in estimates[AGGREGATE].values for bound in estimates[CI_BOUND].values}
        table.attrs[NAN_REASONS] = _blank_reasons(table, why)
        out["interval_estimates"] = table
    if eps_min is not None:
        matrix = pd.DataFrame(eps_min.transpose(MODEL, MODEL_B).to_pandas())
        matrix.attrs = {"caption": (
            "Almost Stochastic Order (deep-significance's multi_aso): eps_min of the row model "
            "over the column model, on each model's seed scores averaged over languages"
            + (", Bonferroni-corrected over the pairs" if eps_min.attrs.get(
                "use_bonferroni", True) else "")
            + ". Below 0.5 the row model's distribution lies more above than below the "
            "column's; deepsig recommends reading eps_min < 0.2 as a difference (eps_min < "
            "0.5 rejects far above 5 % of the time under equality). Not a p-value."),
            "uncertainty": "upper confidence bound on the violation ratio"}
        matrix.attrs[NAN_REASONS] = _diagonal_reasons(matrix, eps_min.attrs.get(NAN_REASON))
        out["multi_aso"] = matrix
    if improvement is not None:
        frame = improvement["estimate"].to_series().rename("estimate").to_frame()
        for bound in improvement[CI_BOUND].values:
            frame[str(bound)] = improvement[CI].sel({CI_BOUND: bound}).to_series()
        frame = frame[frame.index.get_level_values(0) != frame.index.get_level_values(1)]
        level = float(improvement.attrs.get("confidence_level", 0.95))
        frame.attrs = {"caption": (
            f"rliable's probability of improvement P(X > Y) of the row's model (X) over "
            f"model_b (Y), with {level:.0%} stratified-bootstrap percentile intervals: how "
            "often a run of X beats a run of Y on a random language."),
            "uncertainty": "percentile intervals over stratified-bootstrap resamples"}
        why = {"estimate": improvement[ESTIMATE].attrs.get(NAN_REASON)}
        why |= {str(b): improvement[CI].attrs.get(NAN_REASON) for b in improvement[CI_BOUND].values}
        frame.attrs[NAN_REASONS] = _blank_reasons(frame, why)
        out["probability_of_improvement"] = frame
    return out


def _diagonal_reasons(matrix: pd.DataFrame, reason: str | None) -> dict[str, str]:
    """The ``nan_reasons`` of a model x model matrix whose blanks are ``reason``: "(the
    diagonal)" added when each column is blank only on its own model's row."""
    if not reason:
        return {}
    blank = matrix.isna().to_numpy()
    rows, cols = list(matrix.index), list(matrix.columns)
    mine = np.array([[r == c for c in cols] for r in rows], dtype=bool)
    where = " (the diagonal)" if not (blank & ~mine).any() and "diagonal" not in reason else ""
    return _blank_reasons(matrix, dict.fromkeys(map(str, cols), reason + where))




def _improvement_pairs(estimates: xr.Dataset, improvement: xr.Dataset
                       ) -> tuple[list[tuple[Any, Any]] | None, str]:
    """The pairs the probability-of-improvement figure draws (None: every pair) and a
    sentence saying which, when not every pair."""
    from evaluq._dims import AGGREGATE, ESTIMATE

    models = list(improvement[MODEL].values)
    n = len(models)
    if n * (n - 1) // 2 <= MAX_PAIRS:
        return None, ""
    aggs = [str(a) for a in estimates[AGGREGATE].values]
    agg = "iqm" if "iqm" in aggs else aggs[0]
    score = estimates[ESTIMATE].sel({AGGREGATE: agg}).to_series()
    lower_better = agg == "optimality_gap"
    order = sorted(models, key=lambda m: (score.get(m, np.nan) * (1 if lower_better else -1)
                                          if np.isfinite(score.get(m, np.nan)) else np.inf,
                                          str(m)))
    pairs = [(order[i], order[i + 1]) for i in range(n - 1)]
    return pairs, (f" With {n} models, each model against the next in the {agg} order "
                   f"({n - 1} of {n * (n - 1) // 2} pairs; every pair is in the table "
                   "probability_of_improvement written beside this page).")


def _field_methods_section(estimates: xr.Dataset | None, improvement: xr.Dataset | None,
                          eps_min: xr.DataArray | None, *, reason: str | None = None,
                          note: str | None = None) -> Section:
    """Section: the methods the field cites, rliable's interval estimates and probability of
    improvement and deep-significance's multi-ASO, on the cube's runs (seeds).

    Parameters
    ----------
    estimates
        The result of :func:`evaluq.interval_estimates`.
    improvement
        The result of :func:`evaluq.probability_of_improvement`.
    eps_min
        The result of :func:`evaluq.multi_aso`.
    reason
        Why the methods do not apply (e.g. fewer than 2 seeds): the section is this one line.
    note
        A line shown above the figures (e.g. why an aggregate was left out).

    Returns
    -------
    Section
        Id ``field``; the interval-estimates panel and the probability-of-improvement figure
        (:func:`evaluq.plots.interval_estimates_panel`,
        :func:`evaluq.plots.probability_of_improvement_plot`) and the tables of
        ``_field_tables``.

    Examples
    --------
    >>> from evaluq.reporting.sections import _field_methods_section
    >>> _field_methods_section(None, None, None, reason="The cube has one seed.").figures
    0
    """
    title = "The field's methods: rliable and Almost Stochastic Order"
    if reason is not None or estimates is None:
        return Section("field", title, _p(reason or "Not computed."))
    from evaluq.plots import interval_estimates_panel, probability_of_improvement_plot

    tables = _field_tables(estimates, eps_min, improvement)
    body = [_p("rliable (Agarwal et al. 2021) and deep-significance (Dror et al. 2019) on "
               "the cube's seeds as runs and its languages as tasks: how much each summary "
               "would move if the runs were repeated on these languages (not on other "
               "languages, unlike the resampling above when it redraws languages).")]
    if note:
        body.append(_p(note))
    pairs, shown = (None, "") if improvement is None else _improvement_pairs(estimates,
                                                                            improvement)
    panel, sorted_ = estimates, ""
    if pairs is not None:              # many models: in the figures' order, not the names'
        panel = estimates.sel({MODEL: [pairs[0][0], *(b for _, b in pairs)]})
        sorted_ = " Models in the order of the probability-of-improvement figure below."
    body += [_figure(interval_estimates_panel(panel), alt="interval estimates",
                     caption="Aggregate scores with stratified-bootstrap intervals "
                             f"(rliable's panel).{sorted_}"),
             _table_html(tables["interval_estimates"])]
    if improvement is None or eps_min is None:       # one model: nothing to compare it with
        return Section("field", title, "\n".join(body), figures=1)
    body += [_figure(probability_of_improvement_plot(improvement, pairs=pairs),
                     alt="probability of improvement",
                     caption="Probability of improvement P(X > Y): how often a run of X "
                             "beats a run of Y on a random language (rliable); the dashed "
                             f"line is 1/2.{shown}"),
             _table_html(tables["multi_aso"] if pairs is None or len(pairs) + 1 <= MATRIX_MODELS
                         else _aso_neighbours(tables["multi_aso"], pairs))]
    return Section("field", title, "\n".join(body), figures=2)


MATRIX_MODELS: Final = 12
"""The page shows the multi-ASO matrix up to this many models; beyond (a 200 x 200 matrix is
40,000 cells, 0.7 MB of the page), the eps_min of each model and the next in the order of
the probability-of-improvement figure, both ways; the matrix written beside the page."""


def _aso_neighbours(matrix: pd.DataFrame, pairs: Sequence[tuple[Any, Any]]) -> pd.DataFrame:
    """The multi-ASO matrix as one row per pair ``(model, model_b)`` of ``pairs``: eps_min
    of each over the other."""
    index = pd.MultiIndex.from_tuples(list(pairs), names=[MODEL, MODEL_B])
    out = pd.DataFrame({
        "eps_min (model over model_b)": [matrix.at[a, b] for a, b in pairs],
        "eps_min (model_b over model)": [matrix.at[b, a] for a, b in pairs]}, index=index)
    n = len(matrix)
    out.attrs = {"caption": (
        f"{matrix.attrs.get('caption', '')} Shown: each model against the next in the order "
        f"of the figure above ({len(pairs)} of {n * (n - 1) // 2} pairs), eps_min both ways; "
        "the whole matrix is the table multi_aso written beside this page (evaluq report: "
        "<metric>_multi_aso.csv, .md, .tex; report(...).analyses[metric].tables()"
        "['multi_aso'] in Python).").strip()}
    return out


_INTERNAL = ("HierarchicalFitLike", "caution_box", "data_summary", "few_items_caution",
             "field_methods_section", "field_tables", "figure_html", "item_means_section",
             "leaderboard_section", "posterior_section", "power_section", "ranks_section",
             "reproducibility_section", "scale_warnings", "table_html", "tiers_section",
             "variance_section")
"""The section builders' old public spellings (issue 35 made them private): importable for one
release (PEP 562) with a DeprecationWarning; not in ``__all__``, not in ``dir()``, not
documented. evaluq's own report modules import the private names."""


if TYPE_CHECKING:       # the old spellings, typed for the modules that import them
    HierarchicalFitLike = _HierarchicalFitLike
    caution_box = _caution_box
    data_summary = _data_summary
    few_items_caution = _few_items_caution
    field_methods_section = _field_methods_section
    field_tables = _field_tables
    figure_html = _figure_html
    item_means_section = _item_means_section
    leaderboard_section = _leaderboard_section
    posterior_section = _posterior_section
    power_section = _power_section
    ranks_section = _ranks_section
    reproducibility_section = _reproducibility_section
    scale_warnings = _scale_warnings
    table_html = _table_html
    tiers_section = _tiers_section
    variance_section = _variance_section


def __getattr__(name: str) -> Any:
    if name in _INTERNAL:
        import warnings

        warnings.warn(f"evaluq.reporting.sections.{name} is a private helper of the report "
                      f"now (_{name}); build pages with evaluq.report, or Section and "
                      "render_page", DeprecationWarning, stacklevel=2)
        return globals()[f"_{name}"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

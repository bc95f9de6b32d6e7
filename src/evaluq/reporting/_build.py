"""``eq.report``: run the analysis of a cube and write it as one self-contained HTML page."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import pandas as pd
import xarray as xr

from evaluq._atomic import write_text
from evaluq._dims import BOOT_SCORE, DATA_NOTE, MODEL, N_ITEMS, NAN_REASONS, RANK, SCALE_CHECK
from evaluq._schema import build_a_cube_hint, orientation
from evaluq._validation import RNGLike, check_bool, check_bounds, check_confidence_level, check_int
from evaluq._warn import warn
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.reporting._item_model import (
    ItemModelResults,
    fit_item_model,
    item_model_section,
    item_model_tables,
)
from evaluq.reporting._judges import JudgeAnalysis, judged_section, judged_tables
from evaluq.reporting._missing import complete_cube, language_word, missing_runs
from evaluq.reporting.sections import (
    Section,
    _caution_box,
    _data_summary,
    _few_items_caution,
    _field_methods_section,
    _HierarchicalFitLike,
    _item_means_section,
    _leaderboard_section,
    _posterior_section,
    _power_section,
    _ranks_section,
    _reproducibility_section,
    _scale_warnings,
    _tiers_section,
    _variance_section,
    render_page,
)

__all__ = ["Analysis", "FieldMethods", "Report", "analyse", "report"]


class _Progress:
    """A one-line progress display on stderr: ``[evaluq report] 3/8 leaderboard``."""

    def __init__(self, total: int, enabled: bool, stream: TextIO | None = None) -> None:
        self.total, self.done, self.enabled = total, 0, enabled
        self.stream = stream if stream is not None else sys.stderr

    def step(self, what: str) -> None:
        self.done += 1
        if self.enabled:
            end = "\n" if self.done >= self.total else ""
            self.stream.write(f"\r[evaluq report] {self.done}/{self.total} {what:<40}{end}")
            self.stream.flush()


@dataclass
class FieldMethods:
    """rliable's and deep-significance's results on the cube's seeds (runs), or why not.

    Attributes
    ----------
    estimates, improvement, eps_min
        The results of :func:`evaluq.interval_estimates`,
        :func:`evaluq.probability_of_improvement` and :func:`evaluq.multi_aso`, or None.
    reason
        Why they were not computed (fewer than 2 seeds, a NaN run, ...), or None.
    note
        A remark on what was computed (e.g. the optimality gap left out), or None.
    """

    estimates: xr.Dataset | None = None
    improvement: xr.Dataset | None = None
    eps_min: xr.DataArray | None = None
    reason: str | None = None
    note: str | None = None


@dataclass(repr=False)
class Analysis:
    """The results behind one metric's sections of the report.

    Attributes
    ----------
    cube, components, aggregated, pairwise, ranks, tiers, leaderboard
        The cube and the results of :func:`evaluq.variance_components`,
        :func:`evaluq.aggregate` (on :func:`evaluq.resample`), :func:`evaluq.pairwise_differences`,
        :func:`evaluq.rank_distribution`, :func:`evaluq.significance_groups` and
        :func:`evaluq.leaderboard`.
    fit
        The hierarchical fit, or None.
    settings
        The options used.
    items
        The result of :func:`evaluq.item_means` on the per-item table behind the cube (the
        analytic, cluster-robust SEs and paired differences), or None.
    field_methods
        rliable's interval estimates and probability of improvement and the multi-ASO
        matrix on the cube's seeds (:class:`FieldMethods`), or why they were skipped.
    item_model
        With per-item scores and ``bayes=True``: the item model (:func:`evaluq.fit_items`),
        its PSIS-LOO comparison and predictive checks
        (:class:`~evaluq.reporting._item_model.ItemModelResults`), or None.
    notes
        What was done about missing data (cells left out, runs missing), one sentence each;
        the data summary shows them.
    judged
        A judge-scored metric corrected by human labels
        (:class:`~evaluq.reporting._judges.JudgeAnalysis`), or None.
    """

    cube: xr.Dataset
    components: xr.Dataset
    aggregated: xr.Dataset
    pairwise: xr.Dataset
    ranks: xr.Dataset
    tiers: xr.DataArray
    leaderboard: pd.DataFrame
    settings: dict[str, Any]
    fit: _HierarchicalFitLike | None = None
    items: xr.Dataset | None = None
    field_methods: FieldMethods | None = None
    item_model: ItemModelResults | None = None
    notes: list[str] = field(default_factory=list)
    judged: JudgeAnalysis | None = None

    def __repr__(self) -> str:
        """One line of what the analysis holds (its cube and tables are the attributes)."""
        words = {str(d): "replicate" if d == "bootstrap" else str(d) for d in self.cube.sizes}
        sizes = " x ".join(f"{n} {words[str(d)]}{'' if n == 1 else 's'}"
                           for d, n in self.cube.sizes.items())
        extras = [name for name, value in (("fit", self.fit), ("items", self.items),
                                           ("item_model", self.item_model),
                                           ("judged", self.judged)) if value is not None]
        return (f"Analysis({self.cube.attrs.get('metric', 'score')!s}: {sizes}; "
                f"{self.settings.get('n_resamples')} resamples, "
                f"{self.settings.get('replication')} replication, "
                f"{self.settings.get('languages')} languages"
                + (f"; with {', '.join(extras)}" if extras else "") + ")")

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the analysis, by file stem, each with a caption in ``attrs`` and,
        where it has blanks (NaN), ``attrs["nan_reasons"]`` (column -> why).

        Returns
        -------
        dict of str to pandas.DataFrame
            ``leaderboard``, ``pairwise`` (each pair once), ``variance``, ``ranks``
            (P(rank = r), one column per rank), with a fit ``posterior_vs_frequentist``
            and ``diagnostics``, and with per-item results ``item_means`` and
            ``item_differences``.
        """
        from evaluq.reporting.sections import _as_frame, _pairwise_frame
        from evaluq.variance import variance_table

        ranks = pd.DataFrame(self.ranks["probability"].transpose(MODEL, RANK).to_pandas())
        ranks.columns = [f"P(rank={r})" for r in ranks.columns]
        ranks["expected_rank"] = self.ranks["expected_rank"].to_series()
        ranks = ranks.sort_values("expected_rank")
        ranks.attrs = {"caption": (
            f"Rank distribution: share of {self.aggregated.attrs.get('n_resamples', '?')} "
            "resamples in which each model takes each rank (rank 1 is the best); ties share "
            "the ranks they span."), "uncertainty": "probabilities over resamples"}
        out = {"leaderboard": self.leaderboard, "variance": variance_table(self.components)}
        if self.cube.sizes[MODEL] > 1:
            out |= {"pairwise": _pairwise_frame(self.pairwise), "ranks": ranks}
        if self.fit is not None:
            out["posterior_vs_frequentist"] = _as_frame(self.fit.compare_frequentist(),
                                                        "compare_frequentist")
            out["diagnostics"] = _as_frame(self.fit.diagnostics(), "diagnostics")
        if self.items is not None:
            from evaluq.reporting.sections import item_tables

            out |= item_tables(self.items, higher_is_better=_orientation(self.cube))
        if self.field_methods is not None:
            from evaluq.reporting.sections import _field_tables

            out |= _field_tables(self.field_methods.estimates, self.field_methods.eps_min,
                                 self.field_methods.improvement)
        if self.item_model is not None:
            out |= item_model_tables(self.item_model)
        if self.judged is not None:
            out |= judged_tables(self.judged)
        return out

    def to_dict(self, *, tables: Mapping[str, pd.DataFrame] | None = None) -> dict[str, Any]:
        """The tables and settings as plain JSON-ready data (records per table).

        Each table is ``{"caption", "nan_reasons", "rows"}``: ``rows`` one record per row,
        a value that is not a finite number (NaN, +-inf) written None (JSON's null), and
        ``nan_reasons`` saying for each column holding a None why (the table's
        ``attrs["nan_reasons"]``; empty when none is). ``notes`` says what the analysis
        left out and why (a table missing: e.g. rliable's and ASO's with one seed).

        Parameters
        ----------
        tables : mapping of str to pandas.DataFrame, optional
            This analysis' :meth:`tables`, when they are built already (writing a report's
            table files and its ``analysis.json`` builds them once); default None: built
            here.
        """
        records = {}
        for name, table in (self.tables() if tables is None else tables).items():
            flat = table.reset_index()
            flat.columns = [" ".join(map(str, c)).strip() if isinstance(c, tuple) else str(c)
                            for c in flat.columns]
            records[name] = {"caption": str(table.attrs.get("caption", "")),
                             "nan_reasons": _json_reasons(table, flat),
                             "rows": json.loads(flat.to_json(orient="records"))}
        field_notes = ([] if self.field_methods is None else
                       [t for t in (self.field_methods.reason, self.field_methods.note) if t])
        return {"metric": self.cube.attrs.get("metric", ""),
                "settings": {k: repr(v) if not isinstance(v, int | float | str | bool | None)
                             else v for k, v in self.settings.items()},
                "notes": [*self.notes, *field_notes],
                "tables": records}


def _json_reasons(table: pd.DataFrame, flat: pd.DataFrame) -> dict[str, str]:
    """Why each column of ``flat`` (``table`` with its index as columns) holding a value JSON
    writes as null (NaN, +-inf) holds it: the table's ``attrs["nan_reasons"]``, else what the
    values are."""
    import numpy as np

    given = {str(k): str(v) for k, v in dict(table.attrs.get(NAN_REASONS) or {}).items()}
    out = {}
    for col in flat.columns:
        values = flat[col]
        numeric = values.dtype.kind in "fc"
        infinite = numeric and bool(np.isinf(values.to_numpy()).any())
        if not (infinite or bool(values.isna().any())):
            continue
        if col in given:
            out[col] = given[col]
        elif infinite:
            out[col] = ("infinite (+inf or -inf: JSON has no infinity; the CSV file holds the "
                        "value)" + ("; or not a number (NaN)" if values.isna().any() else ""))
        else:
            out[col] = "missing (not a number): no reason recorded for this column"
    return out


NOTEBOOK_ROWS = 20
"""The leaderboard rows a report shows in a notebook (the page has them all)."""


@dataclass(repr=False)
class Report:
    """A written report.

    Attributes
    ----------
    path
        The HTML file (None when ``out=None``).
    html
        The HTML document.
    analyses
        Metric name -> :class:`Analysis`.
    sections
        Metric name -> the :class:`~evaluq.reporting.sections.Section` objects rendered.
    """

    path: Path | None
    html: str
    analyses: dict[str, Analysis]
    sections: dict[str, list[Section]] = field(default_factory=dict)

    def _repr_html_(self) -> str:
        """The notebook view: a link to the page and each metric's leaderboard (its first
        ``NOTEBOOK_ROWS`` rows), escaped.

        >>> import evaluq as eq
        >>> cube = eq.simulate_cube(n_models=3, n_languages=3, rng=0)
        >>> shown = eq.report(cube, out=None, n_resamples=200, rng=0)._repr_html_()
        >>> shown.count("<table"), "not written" in shown
        (1, True)
        """
        import html

        where = (f' written to <a href="{html.escape(self.path.resolve().as_uri())}" '
                 f'target="_blank"><code>{html.escape(str(self.path))}</code></a>'
                 if self.path else " (not written: out=None; its HTML is .html)")
        parts = [f"<p>evaluq report of "
                 f"{html.escape(', '.join(map(str, self.analyses)))}{where}.</p>"]
        for name, analysis in self.analyses.items():
            board = analysis.leaderboard
            more = (f" (the first {NOTEBOOK_ROWS} of {len(board)} models)"
                    if len(board) > NOTEBOOK_ROWS else "")
            parts.append(f"<p><b>{html.escape(str(name))}</b>: "
                         f"{html.escape(str(board.attrs.get('caption', '')))}{more}</p>"
                         + board.head(NOTEBOOK_ROWS).to_html(float_format="{:.4g}".format))
        return "\n".join(parts)

    def __repr__(self) -> str:
        """Where the page is and what it analyses, not the page itself (``html``)."""
        where = f"written to {str(self.path)!r}" if self.path else "not written (out=None)"
        lines = [f"Report({where}; {len(self.html) / 1024:.0f} kB of HTML)"]
        lines += [f"  {name!r}: {analysis!r}" for name, analysis in self.analyses.items()]
        return "\n".join(lines)


def _orientation(cube: xr.Dataset) -> bool:
    return orientation(cube.attrs)


def _fit(cube: xr.Dataset, rng: RNGLike, options: Mapping[str, Any]) -> _HierarchicalFitLike:
    try:
        from evaluq.hierarchical import fit_hierarchical
    except ImportError as err:
        raise ImportError("bayes=True needs evaluq.hierarchical.fit_hierarchical, which this "
                          f"installation lacks ({err}); use bayes=False") from err
    kwargs = {"model": "crossed", "rng": rng, **options}
    fewer = (None if "draws" in options
             else _affordable_draws(cube, int(options.get("chains", FIT_CHAINS))))
    if fewer is not None:
        kwargs["draws"] = fewer
    fit: Any = fit_hierarchical(cube, **kwargs)
    return fit


FIT_DRAWS = 1000
"""The report's posterior draws per chain (fit_hierarchical's default) when they fit the
memory budget."""
FIT_CHAINS = 4
"""fit_hierarchical's default chains."""
FEWEST_DRAWS = 250
"""Below this many draws per chain the report does not thin the posterior to fit the
memory budget: fit_hierarchical's own refusal (naming the budget) stands."""


def _affordable_draws(cube: xr.Dataset, chains: int) -> int | None:
    """None (the fit's own ``FIT_DRAWS``), or fewer draws when those would exceed the memory
    budget (at 200 models x 60 languages, 1,000 draws x 4 chains need 2.9 GiB at once): the
    most that fit, with a warning naming the budget, when at least ``FEWEST_DRAWS`` fit."""
    from evaluq._validation import memory_budget
    try:
        from evaluq.hierarchical._fit import trace_bytes
    except ImportError:                 # a stand-in fit_hierarchical: its own check stands
        return None

    shape = (cube.sizes.get(MODEL, 1), cube.sizes.get("language", 1))
    fits = memory_budget() // max(trace_bytes(*shape, 1, chains), 1)
    if fits >= FIT_DRAWS or fits < FEWEST_DRAWS:
        return None
    warn(f"the report's posterior keeps {fits} draws per chain, not {FIT_DRAWS}: "
         f"{FIT_DRAWS} x {chains} chains of {shape[0]} models x {shape[1]} languages would "
         f"need {trace_bytes(*shape, FIT_DRAWS, chains) / 2**30:.3g} GiB at once, above the "
         f"memory budget (EVALUQ_MEMORY_BUDGET raises it; `bayes_options={{'draws': ...}}` "
         "sets them)", EvaluqWarning)
    return int(fits)


def analyse(cube: xr.Dataset, *, n_resamples: int = 2000, replication: str = "auto",
            languages: str = "auto", how: str = "mean", confidence_level: float = 0.95,
            alpha: float = 0.05, adjustment: str = "holm", rng: RNGLike = 0,
            bayes: bool = False, bayes_options: Mapping[str, Any] | None = None,
            fit: _HierarchicalFitLike | None = None, items: xr.Dataset | None = None,
            item_scores: xr.DataArray | None = None, missing: str = "drop") -> Analysis:
    """Run the frequentist analysis of a cube (and the hierarchical model when asked).

    Parameters
    ----------
    cube
        An evaluation cube.
    n_resamples, replication, languages, rng
        Passed to :func:`evaluq.resample`. ``replication="auto"`` is ``"parametric"`` when
        the cube has bootstrap replicates and several seeds, or summary SDs;
        ``"nonparametric"`` when it has bootstrap replicates of one seed (the replicates
        redrawn, paired across models) or raw scores with several seeds (the seeds redrawn,
        each cell its own; the test-set noise is not seen); and ``"none"`` otherwise.
        ``languages="auto"`` is ``"fixed"`` when bootstrap replicates or SDs carry the
        test-set noise and ``"bootstrap"`` otherwise (the languages then carry the spread the
        replicates cannot show). The resolved values are in ``Analysis.settings``.
    how, confidence_level
        Passed to :func:`evaluq.aggregate`.
    alpha, adjustment
        Passed to :func:`evaluq.leaderboard` / :func:`evaluq.significance_groups`.
    bayes
        Fit the hierarchical model (``evaluq.hierarchical.fit_hierarchical``, imported only
        then) with ``bayes_options`` (default ``model="crossed"``, the fit's own draws,
        chains and ``test_set_errors="auto"``, and the same ``rng``).
    bayes_options
        Keyword arguments of ``fit_hierarchical``.
    fit
        An already fitted hierarchical model to report instead of fitting one.
    items
        The result of :func:`evaluq.item_means` on the per-item table the cube was built
        from (:func:`evaluq.from_items`), kept in ``Analysis.items``.
    item_scores
        The per-item scores the cube was built from (:func:`evaluq.item_scores` of the same
        table). With ``bayes=True`` the item model (:func:`evaluq.fit_items`, with
        ``bayes_options`` over draws=1000, tune=1000, chains=2) is fitted to them instead of
        the cube model, compared by PSIS-LOO with the fit without item effects and checked
        (``Analysis.item_model``); scores that suit no family of the item model (fractional
        scores) fall back to the cube model, saying why.
    missing
        (model, language) cells with no score: ``"drop"`` (default) leaves out the languages
        that hold them (or the models, when that keeps more cells) and says so in
        ``Analysis.notes`` and a :class:`~evaluq.errors.MissingDataWarning`; ``"raise"``
        stops with a :class:`~evaluq.errors.CubeError`. Runs missing from a cell are never
        dropped: each cell uses the runs it has (also stated).

    Returns
    -------
    Analysis

    Examples
    --------
    >>> import evaluq as eq
    >>> res = eq.reporting.analyse(eq.simulate_cube(n_models=3, rng=0), n_resamples=200)
    >>> sorted(res.tables())
    ['interval_estimates', 'leaderboard', 'multi_aso', 'pairwise', 'probability_of_improvement',
     'ranks', 'variance']
    """
    result = _analyse(cube, n_resamples=n_resamples, replication=replication,
                      languages=languages, how=how, confidence_level=confidence_level,
                      alpha=alpha, adjustment=adjustment, rng=rng, bayes=bayes,
                      bayes_options=bayes_options, fit=fit, progress=_Progress(0, False),
                      item_scores=_check_scores(item_scores, "item_scores"), missing=missing)
    result.items = _check_items(items, "items")
    return result


def _analyse(cube: xr.Dataset, *, n_resamples: int, replication: str, languages: str, how: str,
             confidence_level: float, alpha: float, adjustment: str, rng: RNGLike, bayes: bool,
             bayes_options: Mapping[str, Any] | None, fit: _HierarchicalFitLike | None,
             progress: _Progress, item_scores: xr.DataArray | None = None,
             missing: str = "drop") -> Analysis:
    from evaluq._schema import validate
    from evaluq.aggregation import aggregate
    from evaluq.pairwise import pairwise_differences
    from evaluq.ranks import leaderboard, rank_distribution, significance_groups
    from evaluq.resampling import resample
    from evaluq.variance import variance_components

    cube, notes = _complete(validate(cube), missing)
    n_resamples = check_int("n_resamples", n_resamples, minimum=10)
    confidence_level = check_confidence_level(confidence_level)
    check_bool("bayes", bayes)
    replication, languages = _resolve_modes(cube, replication, languages)
    _refuse_no_noise(cube, replication, languages)
    components = variance_components(cube)
    progress.step("variance components")
    options: dict[str, Any] = {"replication": replication, "languages": languages}
    # the page's data summary checks the scale itself (`scale_check=`): not twice
    resampled = resample(cube.assign_attrs({SCALE_CHECK: 0}), n_resamples=n_resamples, rng=rng,
                         **options)
    aggregated = aggregate(resampled, how=how, confidence_level=confidence_level)
    progress.step("resampling")
    pairwise = pairwise_differences(aggregated)
    ranks = rank_distribution(aggregated)
    with warnings.catch_warnings():     # the tiers section says it on the page
        warnings.filterwarnings("ignore", message="significance tiers: ")
        tiers = significance_groups(aggregated, alpha=alpha, adjustment=adjustment)
        board = leaderboard(aggregated, alpha=alpha, adjustment=adjustment)
    progress.step("pairwise differences and ranks")
    item_model = None
    if fit is None and bayes:
        fit, item_model = _bayes(cube, rng, bayes_options or {}, item_scores)
        progress.step("hierarchical model" if item_model is None else "item model")
    settings: dict[str, Any] = {
        "rng": rng, "n_resamples": n_resamples, "replication": replication,
        "languages": languages, "how": how, "confidence_level": confidence_level,
        "alpha": alpha, "adjustment": adjustment, "bayes": bayes or fit is not None}
    if bayes:
        settings["bayes_options"] = dict(bayes_options or {})
    field_methods = _field_methods(cube, n_resamples, confidence_level, rng)
    progress.step("rliable and ASO")
    return Analysis(cube=cube, components=components, aggregated=aggregated, pairwise=pairwise,
                    ranks=ranks, tiers=tiers, leaderboard=board, settings=settings, fit=fit,
                    field_methods=field_methods, item_model=item_model, notes=notes)


def _complete(cube: xr.Dataset, missing: str) -> tuple[xr.Dataset, list[str]]:
    """The cube with its empty cells left out (``missing``) and the notes on what the data
    lack, each also a :class:`~evaluq.errors.MissingDataWarning`."""

    from evaluq.errors import MissingDataWarning

    loader_note = cube.attrs.get(DATA_NOTE)
    cube, notes = complete_cube(cube, missing)
    runs = missing_runs(cube)
    notes = ([str(loader_note)] if loader_note else []) + notes + ([runs] if runs else [])
    for note in notes:
        warn(note, MissingDataWarning)
    return cube, notes


def _bayes(cube: xr.Dataset, rng: RNGLike, options: Mapping[str, Any],
           item_scores: xr.DataArray | None
           ) -> tuple[_HierarchicalFitLike | None, ItemModelResults | None]:
    """``bayes=True``: the item model when there are per-item scores (the cube model too when
    the scores suit none of its families), else the cube model."""
    if item_scores is None:
        return _fit(cube, rng, options), None
    res = fit_item_model(item_scores, options, rng)
    return (_fit(cube, rng, {}) if res.fit is None else None), res


def _field_methods(cube: xr.Dataset, n_resamples: int, confidence_level: float,
                   rng: RNGLike) -> FieldMethods:
    """rliable's interval estimates and probability of improvement and the multi-ASO matrix
    on the cube's runs (seeds), with the report's resamples and rng; the reason when they do
    not apply (a summary cube, fewer than 2 seeds or models, a model with fewer than 2 runs,
    a run missing on only some languages, a model missing a language). Models with different
    numbers of runs (NaN at a model's missing seeds) are each analysed on their own runs, as
    rliable and deep-significance do, and the note says so."""
    import numpy as np

    from evaluq._dims import SCORE, SEED
    from evaluq._schema import is_summary
    from evaluq.field.rliable import AGGREGATES, interval_estimates, probability_of_improvement
    from evaluq.field.stochastic_order import multi_aso

    n_seeds = 0 if is_summary(cube) else cube[SCORE].sizes.get(SEED, 0)
    if n_seeds < 2:
        return FieldMethods(reason=(
            f"rliable's interval estimates and Almost Stochastic Order need at least 2 seeds "
            f"(runs) per cell; this cube has {n_seeds} seed(s)"
            f"{' (summary statistics only)' if is_summary(cube) else ''}: skipped."))
    one = cube.sizes[MODEL] < 2
    aggregates = list(AGGREGATES)
    cube, dropped = _complete_runs(cube)
    note = dropped
    values = cube[SCORE].values
    if not np.isfinite(values).any():
        word = language_word(cube)
        return FieldMethods(reason=(
            f"{dropped} No run has a score on every {word}: rliable's interval estimates and "
            f"Almost Stochastic Order skipped (are the seeds numbered alike on every {word}?)."))
    if not (_orientation(cube) and np.nanmin(values) >= 0 and np.nanmax(values) <= 1):
        aggregates.remove("optimality_gap")
        gap = ("The optimality gap (to the target 1) is left out: it needs scores in [0, 1] "
               "where higher is better.")
        note = gap if note is None else f"{note} {gap}"
    try:
        kw: dict[str, Any] = {"n_resamples": n_resamples, "confidence_level": confidence_level,
                              "rng": rng}
        estimates = interval_estimates(cube, aggregates=aggregates, **kw)
        runs = dict(zip(estimates[MODEL].values.tolist(), estimates.attrs["n_runs"],
                        strict=True))
        if len(set(runs.values())) > 1:
            ragged = (f"The models have different numbers of runs "
                      f"({', '.join(f'{m}: {n}' for m, n in runs.items())}): each is "
                      f"summarised and resampled on its own runs, as rliable and "
                      f"deep-significance do.")
            note = ragged if note is None else f"{note} {ragged}"
        if one:
            alone = ("One model: its interval estimates are shown; the probability of "
                     "improvement and Almost Stochastic Order compare two models and are "
                     "left out.")
            return FieldMethods(estimates=estimates,
                                note=alone if note is None else f"{note} {alone}")
        return FieldMethods(
            estimates=estimates, improvement=probability_of_improvement(cube, **kw),
            eps_min=multi_aso(cube, confidence_level=confidence_level, rng=rng), note=note)
    except CubeError as err:
        return FieldMethods(reason=f"{dropped + ' ' if dropped else ''}rliable's interval "
                                   f"estimates and Almost Stochastic Order skipped: {err}")


def _complete_runs(cube: xr.Dataset) -> tuple[xr.Dataset, str | None]:
    """The cube for rliable's runs x tasks matrices: a run (model, seed) missing on some
    languages but not all is left out on all of them, and the note names each such run (its
    other languages' scores are not used by this section; every other section uses them).
    A model left with fewer than 2 runs still fails in the field methods, with its reason."""
    import numpy as np

    from evaluq._dims import LANGUAGE, SCORE, SEED

    score = cube[SCORE].transpose(MODEL, LANGUAGE, SEED)
    nan = np.isnan(score.values)
    partial = nan.any(axis=1) & ~nan.all(axis=1)                  # (model, seed)
    if not partial.any():
        return cube, None
    named = [f"{score[MODEL].values[k]} seed {score[SEED].values[s]} (missing on "
             f"{', '.join(map(str, score[LANGUAGE].values[nan[k, :, s]]))})"
             for k, s in np.argwhere(partial)]
    shown = "; ".join(named[:6]) + (f"; and {len(named) - 6} more" if len(named) > 6 else "")
    keep = xr.DataArray(~partial, dims=(MODEL, SEED),
                        coords={MODEL: score[MODEL].values, SEED: score[SEED].values})
    out = cube.copy()
    out[SCORE] = cube[SCORE].where(keep)
    word = language_word(cube)
    note = (f"rliable's matrices are runs x {word}s, so a run needs every {word}: "
            f"{len(named)} run(s) missing on some {word}s are left out of this section "
            f"(on all {word}s; every other section uses their scores): {shown}.")
    return out, note


def _resolve_modes(cube: xr.Dataset, replication: str, languages: str) -> tuple[str, str]:
    from evaluq._dims import BOOT_SCORE, SD_BOOT, SD_SEED, SEED
    from evaluq._schema import is_summary, one_run_per_cell

    if replication == "auto":
        has_sd = is_summary(cube) and SD_BOOT in cube and (SD_SEED in cube
                                                           or one_run_per_cell(cube))
        if BOOT_SCORE in cube and cube.sizes.get(SEED, 1) < 2:
            replication = "nonparametric"      # the replicates themselves: no seed SD exists
        elif BOOT_SCORE in cube or has_sd:
            replication = "parametric"
        elif not is_summary(cube) and cube.sizes.get(SEED, 1) > 1:
            replication = "nonparametric"      # the seeds, redrawn paired across models
        else:
            replication = "none"
    if languages == "auto":
        replicates = replication == "parametric" or (replication == "nonparametric"
                                                     and BOOT_SCORE in cube)
        languages = "fixed" if replicates else "bootstrap"
    return replication, languages


def _refuse_no_noise(cube: xr.Dataset, replication: str, languages: str) -> None:
    """Refuse resampling that redraws nothing (``_draws.draws_no_noise``): one score per
    model on one language, with no seeds, replicates or SDs, measures no uncertainty, and a
    report of zero-width intervals and certain ranks would claim it did."""
    from evaluq._dims import LANGUAGE
    from evaluq._draws import NO_NOISE_REASON, draws_no_noise

    n_languages = cube.sizes[LANGUAGE]
    if not draws_no_noise({"replication": replication, "languages": languages,
                           "n_languages": n_languages}):
        return
    if n_languages == 1 and languages != "fixed":
        word = language_word(cube)
        raise CubeError(f"the results hold one score per model on one {word}, with no "
                        f"seeds, bootstrap replicates or SDs: nothing measures how much a "
                        f"score could move, so there is no interval or test to report. Give "
                        f"several runs (`seed=`), bootstrap replicates (`bootstrap=`), the "
                        f"per-item scores (`item=`: the paired item bootstrap), or several "
                        f"{word}s")
    raise CubeError(f"`replication`: {NO_NOISE_REASON}")


def _critical_difference(analysis: Analysis) -> xr.Dataset | None:
    """Demšar's critical difference on the cube at the report's alpha (the tiers section's
    figure), or None where it does not apply (fewer than 2 models or languages, a model
    missing a language): the tier diagram is drawn then."""
    from evaluq.errors import CubeError
    from evaluq.field.demsar import critical_difference

    try:
        with warnings.catch_warnings():  # no pair separable: the figure's caption says it
            warnings.filterwarnings("ignore", message="Nemenyi over ")
            return critical_difference(analysis.cube, alpha=float(analysis.settings["alpha"]))
    except CubeError:
        return None


def _scale_verdict(cube: xr.Dataset, metric: str | None, bounds: tuple[float, float] | None,
                   check: bool) -> list[str]:
    """The scale warnings of the page's data summary (:func:`_scale_warnings`), each also a
    :class:`~evaluq.errors.ScaleWarning`, so that the terminal and the page say the same."""

    from evaluq.errors import ScaleWarning

    if not check:
        return []
    found = _scale_warnings(cube, bounds=bounds)
    for text in found:
        warn(text + " (scale_check=False silences this check)",
             ScaleWarning)
    return [f"{metric}: {t}" if metric else t for t in found]


def _sections(analysis: Analysis, bounds: tuple[float, float] | None, command: str | None,
              progress: _Progress, scale_check: bool = True) -> list[Section]:
    out = [_data_summary(analysis.cube, bounds=bounds, notes=analysis.notes,
                        scale_check=scale_check)]
    progress.step("data summary")
    out.append(_variance_section(analysis.components))
    progress.step("variance section")
    out.append(_leaderboard_section(analysis.aggregated, analysis.pairwise,
                                   analysis.leaderboard))
    progress.step("leaderboard section")
    if analysis.items is not None:
        out.append(_item_means_section(analysis.items,
                                      higher_is_better=_orientation(analysis.cube)))
    if analysis.judged is not None:
        out.append(judged_section(analysis.judged))
    out += _comparison_sections(analysis)
    progress.step("ranks and tiers")
    if analysis.field_methods is not None:
        fm = analysis.field_methods
        out.append(_field_methods_section(fm.estimates, fm.improvement, fm.eps_min,
                                         reason=fm.reason, note=fm.note))
    if analysis.item_model is not None:
        out.append(item_model_section(analysis.item_model))
    if analysis.fit is not None:
        out.append(_posterior_section(analysis.fit))
    if analysis.fit is not None or analysis.item_model is not None:
        progress.step("posterior section")
    if (N_ITEMS in analysis.cube.data_vars and BOOT_SCORE in analysis.cube.data_vars
            and analysis.cube.sizes[MODEL] > 1):          # power: of differences between models
        out.append(_power_section(analysis.cube, alpha=analysis.settings["alpha"]))
    out.append(_reproducibility_section(analysis.settings, command=command))
    caution = _few_items_caution(analysis.items)
    return [_in_users_words(_cautioned(section, caution), language_word(analysis.cube))
            for section in out]


def _in_users_words(section: Section, word: str) -> Section:
    """The section with "language(s)" in its text replaced by the input's own name for that
    axis (``task``, ``game``: ``cube.attrs["language_label"]``); inline images untouched."""
    import re

    if word == "language":
        return section
    plural = word if word.endswith("s") else word + "s"
    words = {"language": word, "languages": plural, "Language": word.capitalize(),
             "Languages": plural.capitalize()}

    def fix(text: str) -> str:
        parts = re.split(r'(src="data:[^"]*")', text)
        return "".join(part if part.startswith('src="data:') else
                       re.sub(r"\b([Ll]anguages?)\b", lambda m: words[m.group(1)], part)
                       for part in parts)
    return replace(section, title=fix(section.title), body=fix(section.body))


def _comparison_sections(analysis: Analysis) -> list[Section]:
    """The rank and tier sections (none for a one-model report: nothing is compared)."""
    if analysis.cube.sizes[MODEL] < 2:
        return []
    item_fit = analysis.item_model.fit if analysis.item_model is not None else None
    posterior = (analysis.fit.rank_probabilities("benchmark") if analysis.fit is not None
                 else item_fit.rank_probabilities("benchmark") if item_fit is not None
                 else None)
    return [_ranks_section(analysis.ranks, posterior),
            _tiers_section(analysis.aggregated, analysis.tiers,
                          cd=_critical_difference(analysis))]


def _cautioned(section: Section, caution: str | None) -> Section:
    """The leaderboard, rank and tier sections with the few-items caution on top."""
    if caution is None or section.id not in ("leaderboard", "ranks", "tiers"):
        return section
    return replace(section, body=_caution_box(caution) + section.body,
                   notes=[caution, *section.notes])


def report(cube: xr.Dataset | Mapping[str, xr.Dataset],
           out: str | os.PathLike[str] | None = "report.html", *,
           n_resamples: int = 2000, replication: str = "auto", languages: str = "auto",
           how: str = "mean", confidence_level: float = 0.95, alpha: float = 0.05,
           adjustment: str = "holm", rng: RNGLike = 0, bayes: bool = False,
           bayes_options: Mapping[str, Any] | None = None,
           fit: _HierarchicalFitLike | Mapping[str, _HierarchicalFitLike] | None = None,
           bounds: tuple[float, float] | None = None, title: str | None = None,
           command: str | None = None, progress: bool = True,
           items: xr.Dataset | Mapping[str, xr.Dataset] | None = None,
           item_scores: xr.DataArray | Mapping[str, xr.DataArray] | None = None,
           missing: str = "drop", scale_check: bool = True,
           judged: JudgeAnalysis | Mapping[str, JudgeAnalysis] | None = None) -> Report:
    """The whole analysis as ONE self-contained HTML page (figures inline, no network).

    Sections, each one function of :mod:`evaluq.reporting.sections`: data summary (sizes,
    missing cells, scale warnings), variance components (table and bars per language),
    leaderboard with intervals and a forest plot of the pairwise differences, rank heatmaps
    (frequentist, and posterior beside it), the significance groups (Demšar's
    critical-difference diagram, the tier diagram where it does not apply), with a
    hierarchical fit the posterior-versus-frequentist table and the sampler diagnostics, and
    the settings that reproduce it (rng, versions, options, command).

    Parameters
    ----------
    cube
        An evaluation cube, or a mapping metric name -> cube for one block of sections per
        metric (e.g. BLEU, chrF and COMET of the same systems).
    out
        Path of the HTML file; None writes nothing (the page is in ``Report.html``).
    n_resamples, replication, languages, rng
        Passed to :func:`evaluq.resample` (the same ``rng`` for every metric, so the
        resamples of the metrics are paired); ``"auto"`` as in :func:`analyse`.
    how, confidence_level
        Passed to :func:`evaluq.aggregate`.
    alpha, adjustment
        Level and p-value adjustment of the tiers (:func:`evaluq.significance_groups`).
    bayes
        Fit ``evaluq.hierarchical.fit_hierarchical`` per metric and add the posterior
        sections (its sampler shows its own progress bar).
    bayes_options
        Keyword arguments of ``fit_hierarchical`` (default ``model="crossed"`` and the
        fit's defaults, ``test_set_errors="auto"`` among them; ``error_correlation=`` pairs
        a summary cube).
    fit
        Already fitted hierarchical model(s) to report (one, or metric name -> fit).
    bounds
        The metric's range, for the scale warnings (e.g. ``(0, 100)``).
    title
        Page title (default "evaluq report: <metrics>").
    command
        The command line or call to show in the reproducibility section.
    progress
        Show a progress line over the steps on stderr.
    items
        The result(s) of :func:`evaluq.item_means` on the per-item table the cube was built
        from (one, or metric name -> result): adds the section of per-item means and paired
        differences with their analytic (cluster-robust) SEs and its two tables.
    item_scores
        The per-item scores the cube was built from (:func:`evaluq.item_scores` of the table
        given to :func:`evaluq.from_items`; one, or metric name -> scores). With
        ``bayes=True`` the item model (:func:`evaluq.fit_items`) is fitted to them instead
        of the cube model (``bayes_options`` then go to ``fit_items``, over draws=1000,
        tune=1000, chains=2): the page shows its posterior at both scopes, the PSIS-LOO
        comparison with the fit without item effects and the predictive checks. Scores that
        suit no family of the item model fall back to the cube model, saying why.
    missing
        ``"drop"`` (default) or ``"raise"``: what to do with (model, language) cells that
        have no score, as in :func:`analyse`; the page's data summary says what was done.
    scale_check
        Look for models or languages on another scale and values outside ``bounds``
        (``evaluq.reporting.sections._scale_warnings``): each finding is a
        :class:`~evaluq.errors.ScaleWarning` and stands in a box at the top of the page.
    judged
        For a metric scored by a judge with human labels on some items: the
        :class:`~evaluq.reporting._judges.JudgeAnalysis` of
        :func:`~evaluq.reporting._judges.judge_analysis` (one, or metric name -> analysis);
        the page adds the corrected means beside the raw judge means, the transport flags,
        the paired differences and the label budget.

    Returns
    -------
    Report
        The path, the HTML and the :class:`Analysis` of each metric.

    See Also
    --------
    evaluq.plots, evaluq.tables

    Examples
    --------
    >>> import os, tempfile, evaluq as eq
    >>> cube = eq.simulate_cube(n_models=3, rng=0)
    >>> path = os.path.join(tempfile.mkdtemp(), "report.html")
    >>> rep = eq.report(cube, path, n_resamples=200, progress=False)
    >>> rep.path.name, "Leaderboard" in rep.html
    ('report.html', True)
    """
    cubes = _cubes(cube)
    fits = _fits(fit, list(cubes))
    per_item = _items(items, list(cubes))
    scores = _per_metric(item_scores, list(cubes), "item_scores", _check_scores)
    judge_parts = _per_metric(judged, list(cubes), "judged", _check_judged)
    for flag, value in (("bayes", bayes), ("scale_check", scale_check)):
        check_bool(flag, value)
    bounds = check_bounds(bounds)
    _check_out(out)
    steps = sum(8 + int(bayes and name not in fits) + int(bayes or name in fits)
                for name in cubes) + 1
    bar = _Progress(steps, progress)
    analyses, blocks, sections, alerts = {}, [], {}, []
    for name, c in cubes.items():
        alerts += _scale_verdict(c, name if len(cubes) > 1 else None, bounds, scale_check)
        a = _analyse(c, n_resamples=n_resamples, replication=replication, languages=languages,
                     how=how, confidence_level=confidence_level, alpha=alpha,
                     adjustment=adjustment, rng=rng, bayes=bayes, bayes_options=bayes_options,
                     fit=fits.get(name), progress=bar, item_scores=scores.get(name),
                     missing=missing)
        a.items = per_item.get(name)
        a.judged = judge_parts.get(name)
        secs = _sections(a, bounds, command, bar, scale_check)
        analyses[name], sections[name] = a, secs
        blocks.append((name if len(cubes) > 1 else None, secs))
    names = ", ".join(cubes)
    first = next(iter(analyses.values()))
    subtitle = _in_users_words(Section("", "", _subtitle(first)), language_word(first.cube))
    words = language_word(first.cube)
    alerts = [_in_users_words(Section("", "", a), words).body for a in alerts]
    page = render_page(title or f"evaluq report: {names}", blocks, subtitle=subtitle.body,
                       alerts=alerts)
    path = None
    if out is not None:
        path = Path(out)
        write_text(path, page)                         # atomic: temp file, then rename
    bar.step("written" if path else "done")
    return Report(path=path, html=page, analyses=analyses, sections=sections)


def _check_out(out: Any) -> None:
    """The report's path, checked before any work: a file in an existing folder."""
    if out is None:
        return
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"`out` must be a path or None; got {type(out).__name__}")
    path = Path(out)
    if path.is_dir():
        raise ValueError(f"`out` must be the path of the HTML file to write; {str(path)!r} is a "
                         f"directory (e.g. pass {str(path / 'report.html')!r})")
    if not path.parent.is_dir():
        raise ValueError(f"`out`: the folder {str(path.parent)!r} does not exist")


def _subtitle(a: Analysis) -> str:
    c = a.cube

    def count(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    return (f"{count(c.sizes.get(MODEL, 0), 'model')} × "
            f"{count(c.sizes.get('language', 0), 'language')} × "
            f"{count(c.sizes.get('seed', 0), 'seed')}; {a.settings['n_resamples']} resamples "
            f"({a.settings['replication']} replication, {a.settings['languages']} languages), "
            f"{a.settings['how']} over languages")


def _cubes(cube: Any) -> dict[str, xr.Dataset]:
    if isinstance(cube, xr.Dataset):
        return {str(cube.attrs.get("metric", "score") or "score"): cube}
    if isinstance(cube, Mapping):
        if not cube:
            raise ValueError("`cube` is an empty mapping: give at least one metric's cube")
        for k, v in cube.items():
            if not isinstance(v, xr.Dataset):
                raise TypeError(f"`cube[{k!r}]` must be an xarray Dataset (a cube); "
                                f"got {type(v).__name__}")
        return {str(k): v for k, v in cube.items()}
    raise TypeError(f"`cube` must be a cube (xarray Dataset) or a mapping of metric name -> "
                    f"cube; got {type(cube).__name__}{build_a_cube_hint(cube)}")


def _fits(fit: Any, names: list[str]) -> dict[str, Any]:
    if fit is None:
        return {}
    if isinstance(fit, Mapping):
        unknown = [k for k in fit if k not in names]
        if unknown:
            raise CubeError(f"`fit` names metrics {unknown} that are not in the report "
                            f"({names})")
        return dict(fit)
    if len(names) != 1:
        raise ValueError(f"`fit` must map metric name -> fit when the report has several "
                         f"metrics ({names})")
    return {names[0]: fit}




def _check_items(items: Any, name: str) -> xr.Dataset | None:
    if items is not None and not isinstance(items, xr.Dataset):
        raise TypeError(f"`{name}` must be the Dataset of evaluq.item_means or None; got "
                        f"{type(items).__name__}")
    return items


def _items(items: Any, names: list[str]) -> dict[str, xr.Dataset]:
    """``items=`` of :func:`report` as metric name -> item_means Dataset."""
    if items is None:
        return {}
    if isinstance(items, Mapping) and not isinstance(items, xr.Dataset):
        unknown = [k for k in items if k not in names]
        if unknown:
            raise CubeError(f"`items` names metrics {unknown} that are not in the report "
                            f"({names})")
        return {str(k): v for k, v in items.items() if _check_items(v, f"items[{k!r}]")}
    if len(names) != 1:
        raise ValueError(f"`items` must map metric name -> item_means result when the report "
                         f"has several metrics ({names})")
    return {names[0]: _check_items(items, "items")}  # type: ignore[dict-item]


def _check_scores(scores: Any, name: str) -> xr.DataArray | None:
    if scores is not None and not isinstance(scores, xr.DataArray):
        raise TypeError(f"`{name}` must be the DataArray of evaluq.item_scores or None; got "
                        f"{type(scores).__name__}")
    return scores


def _check_judged(value: Any, name: str) -> JudgeAnalysis | None:
    if value is None or isinstance(value, JudgeAnalysis):
        return value
    raise TypeError(f"`{name}` must be a JudgeAnalysis (evaluq.reporting._judges."
                    f"judge_analysis) or None; got {type(value).__name__}")


def _per_metric(value: Any, names: list[str], what: str, check: Any) -> dict[str, Any]:
    """A per-metric argument of :func:`report` (one value, or metric name -> value)."""
    if value is None:
        return {}
    if isinstance(value, Mapping) and not isinstance(value, xr.Dataset | xr.DataArray):
        unknown = [k for k in value if k not in names]
        if unknown:
            raise CubeError(f"`{what}` names metrics {unknown} that are not in the report "
                            f"({names})")
        return {str(k): check(v, f"{what}[{k!r}]") for k, v in value.items()}
    if len(names) != 1:
        raise ValueError(f"`{what}` must map metric name -> value when the report has "
                         f"several metrics ({names})")
    return {names[0]: check(value, what)}

"""The report of ratings from pairwise votes (issue 33): ``evaluq ratings VOTES`` and
:func:`ratings_report`.

The ratings' draws (resample, model) are the same layout as an aggregate's resamples, so the
page reuses the cube report's rank and tier sections unchanged; its own sections are the
ratings with their intervals and the win-probability matrix.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._atomic import write_text
from evaluq._dims import CI_BOUND, MODEL, MODEL_B, OBSERVED, RESAMPLED
from evaluq.reporting._build import Report
from evaluq.reporting.sections import (
    Section,
    _figure,
    _p,
    _ranks_section,
    _reproducibility_section,
    _table_html,
    _tiers_section,
    render_page,
)


def ratings_draws(result: Any) -> xr.Dataset:
    """The ratings as an aggregate's Dataset: ``observed`` (the fitted ratings) and
    ``resampled`` (their draws), for :func:`evaluq.leaderboard`, :func:`evaluq.rank_distribution`
    and :func:`evaluq.significance_groups` (ranked by the fitted ratings, not the draws'
    mean)."""
    draws = result.draws           # a model without a rating (NaN) has no draws: left out
    out = xr.Dataset({OBSERVED: result.rating.sel({MODEL: draws[MODEL].values}),
                      RESAMPLED: draws})
    out.attrs = {**draws.attrs, "metric": f"rating ({result.details.get('scale', '')})"}
    return out


def _summary(result: Any) -> str:
    d = result.details
    n_models = result.rating.sizes[MODEL]
    cluster = d.get("cluster")
    clusters = (f", {d.get('n_clusters', '?')} clusters of {cluster} "
                "(cluster-robust)" if cluster else ", votes taken as independent")
    tie = ""
    if result.davidson:
        nu, se = float(result.tie_parameter), float(result.tie_se)
        tie = (f" Davidson's tie parameter nu = {nu:.4f} (SE {se:.4f}; Newman's v = nu/2 = "
               f"{nu / 2:.4f}).")
    return (f"{d.get('n_votes', '?')} votes between {n_models} models{clusters}; ties "
            f"{d.get('ties')}, {d.get('interval')} intervals, {d.get('scale')} scale; "
            f"{d.get('identifiability', '')}.{tie}{_judged_summary(d)}")


def _judged_summary(d: Mapping[str, Any]) -> str:
    """How the judge's votes were corrected by the gold ones (``fit_judged_ratings``)."""
    if "lam" not in d:
        return ""
    notes = f"Note: {d['notes']}." if d.get("notes") else ""
    worth = (f"are worth {d['effective_labels']:.0f} (gain {d['gain']:.2f} over the human "
             f"votes alone)" if np.isfinite(d["gain"]) else
             "have no gain over the human votes alone that can be stated (see the note)")
    return (f" Judge-assisted (PPI++): the judge voted on all {d.get('n_votes', '?')} "
            f"comparisons, people on {d.get('n_labelled', '?')}; lambda = {d['lam']:.3g} "
            f"(the judge's weight); the {d.get('n_labelled', '?')} human votes {worth}. "
            f"{notes}").rstrip()


def covariates_section(result: Any) -> Section:
    """Section: the style covariates' coefficients (style control), with how each was made."""
    table = result.covariate_table()
    unit = table.attrs.get("unit", "")
    level = result.confidence_level
    text = (f"The ratings above are net of these per-vote covariates, fitted jointly (a "
            f"contextual Bradley-Terry, as LMArena's style control). A coefficient is how "
            f"much the covariate moves the a-vs-b rating difference, in {unit}; the interval "
            f"is {level:.0%}.")
    return Section("covariates", "Style covariates",
                   "\n".join([_p(text), _table_html(table, caption=(
                       f"Style covariates: coefficient, SE and {level:.0%} interval; the "
                       "covariate's definition, mean and SD over the votes."))]))


def ratings_section(result: Any) -> Section:
    """Section: the ratings with their intervals (table and figure) and how they were fitted."""
    from evaluq.plots.ratings import ratings_plot

    table = result.to_dataframe()
    body = [_p(_summary(result)),
            _figure(ratings_plot(result), alt="ratings with their intervals"),
            _table_html(table, caption=str(getattr(result, "_caption", lambda: "")()))]
    return Section("ratings", "Ratings", "\n".join(body), figures=1)


def _neighbour_pairs(result: Any) -> pd.DataFrame:
    """Each model against the next one down: P(win) and its interval."""
    order = result.rating.dropna(MODEL).sortby(-result.rating)[MODEL].values
    prob = result.win_probability
    ci = result.win_probability_interval()
    rows = []
    for a, b in itertools.pairwise(order):
        cell = {MODEL: a, MODEL_B: b}
        rows.append({"model": a, "against": b, "P(win)": float(prob.sel(cell)),
                     "lower": float(ci.sel(cell).sel({CI_BOUND: "lower"})),
                     "upper": float(ci.sel(cell).sel({CI_BOUND: "upper"}))})
    return pd.DataFrame(rows).set_index(["model", "against"])


def win_probability_section(result: Any) -> Section:
    """Section: the matrix of win probabilities and each model against the next one down."""
    from evaluq.plots.ratings import win_probability_heatmap

    what = ("a win outright (a tie is neither)" if result.davidson
            else "a win, a tie counting half" if result.details.get("ties") == "half"
            else "a win among the decided votes")
    body = [_p(f"P(row model beats column model), {what}, from the fitted ratings."),
            _figure(win_probability_heatmap(result), alt="win-probability matrix")]
    if result.rating.sizes[MODEL] > 1:
        level = result.confidence_level
        body.append(_table_html(_neighbour_pairs(result),
                               caption=f"Each model against the next one down, with the "
                                       f"{level:.0%} interval of P(win)."))
    return Section("win-probability", "Win probabilities", "\n".join(body), figures=1)


def ratings_sections(result: Any, *, settings: Mapping[str, Any] | None = None,
                     command: str | None = None) -> list[Section]:
    """The page's sections: ratings, ranks, win probabilities, tiers, reproducibility."""
    from evaluq.ranks import rank_distribution, significance_groups

    agg = ratings_draws(result)
    sections = [ratings_section(result)]
    if result.covariate_coefficient is not None:
        sections.append(covariates_section(result))
    if result.rating.sizes[MODEL] > 1:
        sections += [_ranks_section(rank_distribution(agg)), win_probability_section(result),
                     _tiers_section(agg, significance_groups(agg))]
    sections.append(_reproducibility_section(dict(settings or {}), command=command))
    return sections


def ratings_report(result: Any, *, out: str | Path | None = None, title: str | None = None,
                   settings: Mapping[str, Any] | None = None, command: str | None = None
                   ) -> Report:
    """One self-contained HTML page of ratings from pairwise votes.

    Parameters
    ----------
    result
        The result of :func:`evaluq.fit_ratings` (with style covariates: a section of their
        coefficients) or :func:`evaluq.fit_judged_ratings` (how the judge was corrected).
    out
        The HTML file to write (atomically); None to only build the page.
    title
        Page title (default ``"Ratings from pairwise votes"``).
    settings
        The options used (shown in the reproducibility section).
    command
        The command line or call that made the result.

    Returns
    -------
    Report
        ``html``, ``path`` and ``sections`` (under the key ``"ratings"``).

    Examples
    --------
    >>> import pandas as pd
    >>> import evaluq as eq
    >>> from evaluq.reporting._ratings import ratings_report
    >>> votes = pd.DataFrame({"model_a": ["x", "x", "y", "y", "z", "z"] * 5,
    ...                       "model_b": ["y", "z", "z", "x", "x", "y"] * 5,
    ...                       "winner": ["model_a", "model_a", "tie", "model_b", "model_a",
    ...                                  "model_a"] * 5})
    >>> page = ratings_report(eq.fit_ratings(votes, rng=0), settings={"rng": 0})
    >>> [s.id for s in page.sections["ratings"]]
    ['ratings', 'ranks', 'win-probability', 'tiers', 'reproducibility']
    """
    if not hasattr(result, "win_probability"):
        raise TypeError(f"`result` must be the result of eq.fit_ratings (or "
                        f"eq.fit_judged_ratings); got "
                        f"{type(result).__name__}")
    sections = ratings_sections(result, settings=settings, command=command)
    n_models = result.rating.sizes[MODEL]
    subtitle = f"{n_models} models, {result.details.get('n_votes', '?')} votes"
    page = render_page(title or "Ratings from pairwise votes", [(None, sections)],
                       subtitle=subtitle)
    path = None
    if out is not None:
        path = Path(out)
        write_text(path, page)
    return Report(path=path, html=page, analyses={}, sections={"ratings": sections})


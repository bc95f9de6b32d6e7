"""The item model in the report: ``eq.report(..., bayes=True, item_scores=...)`` and
``evaluq report --from inspect|lm-eval --bayes`` fit :func:`evaluq.fit_items` to the per-item
scores instead of the cube model.

The page shows the item model's posterior (per-model scores at both scopes, pairwise
P(>) and P(best)), the PSIS-LOO comparison (:func:`evaluq.compare_fits`) with the fits of
:data:`COMPARED` and the predictive checks (:meth:`evaluq.ItemFit.predictive_checks`).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import ITEM, LANGUAGE, MODEL, MODEL_B, SEED
from evaluq._fits import posterior_interval
from evaluq._validation import RNGLike
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.reporting.sections import Section, _adjacent_pairs, _figure, _p, _table_html

if TYPE_CHECKING:
    from evaluq.item_model import ItemFit

__all__ = ["COMPARED", "FIT_DEFAULTS", "ItemModelResults", "fit_item_model",
           "item_model_section", "item_model_tables", "item_table"]

COMPARED: Final[tuple[tuple[str, dict[str, Any]], ...]] = (
    ("binomial, no item effects", {"item": None, "family": "binomial"}),
    ("beta-binomial (run drift)", {"family": "beta-binomial"}),
)
"""The fits compared with the item model by PSIS-LOO: (label, arguments of
:func:`evaluq.fit_items` that differ from the item model's). A family added to ``fit_items``
joins the comparison with one line here; an entry whose family does not apply to the data
(beta-binomial with one epoch per item) is not fitted and the page says why."""
FIT_DEFAULTS: Final = {"draws": 1000, "tune": 1000, "chains": 2}
"""The report's sampler settings (fewer chains than ``fit_items``'s default, to stay quick);
``bayes_options`` overrides them."""
MAIN: Final = "item effects"
"""The suffix of the item model's label in the LOO table (``"binomial, item effects"``)."""


@dataclass
class ItemModelResults:
    """The item model behind the report's item-model section.

    Attributes
    ----------
    fit
        The item model (:func:`evaluq.fit_items` with item effects), or None when the
        scores suit no family of the item model (``reason`` says why).
    comparison
        :func:`evaluq.compare_fits` of the item model and the fits of :data:`COMPARED`
        (None with fewer than two fits).
    checks
        :meth:`~evaluq.ItemFit.predictive_checks` of the item model.
    notes
        Remarks shown on the page (a compared fit that could not be made, the sampler's
        warnings).
    reason
        Why the item model was not fitted (the cube model is then fitted and shown).
    """

    fit: ItemFit | None = None
    comparison: pd.DataFrame | None = None
    checks: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    reason: str | None = None


def item_table(scores: xr.DataArray) -> pd.DataFrame:
    """The long per-item table (model, task, item, epoch, score) of :func:`evaluq.item_scores`.

    Absent (model, task, epoch) cells (NaN on all their task's items) are left out: they
    are absent, not missing scores. Items are numbered by their position (unique over tasks).

    Parameters
    ----------
    scores
        The DataArray of :func:`evaluq.item_scores` (model, seed, item).

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "q": ["x", "y"] * 2,
    ...                    "ok": [1, 0, 1, 1]})
    >>> from evaluq.reporting._item_model import item_table
    >>> item_table(eq.item_scores(df, model="model", item="q", score="ok")).shape
    (4, 5)
    """
    if not isinstance(scores, xr.DataArray) or set(scores.dims) != {MODEL, SEED, ITEM}:
        raise TypeError("`item_scores` must be the DataArray of evaluq.item_scores (dims "
                        f"model, seed, item); got {type(scores).__name__}")
    da = scores.transpose(MODEL, SEED, ITEM)
    m, s, i = np.meshgrid(np.arange(da.sizes[MODEL]), np.arange(da.sizes[SEED]),
                          np.arange(da.sizes[ITEM]), indexing="ij")
    values = da.values.ravel()
    keep = ~np.isnan(values)
    task = np.asarray(da[LANGUAGE].values if LANGUAGE in da.coords else
                      np.full(da.sizes[ITEM], "all"), dtype=object)
    return pd.DataFrame({"model": da[MODEL].values[m.ravel()[keep]],
                         "task": task[i.ravel()[keep]], "item": i.ravel()[keep],
                         "epoch": da[SEED].values[s.ravel()[keep]], "score": values[keep]})


def _fit(table: pd.DataFrame, kwargs: dict[str, Any]) -> tuple[Any, list[str]]:
    """One fit_items call; the evaluq warnings it raised (convergence advice), as text."""
    from evaluq.item_model import fit_items

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", EvaluqWarning)
        fit = fit_items(table, **kwargs)
    for w in caught:                       # other libraries' warnings pass through
        if not issubclass(w.category, EvaluqWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return fit, [str(w.message) for w in caught if issubclass(w.category, EvaluqWarning)]


def fit_item_model(scores: xr.DataArray, options: Mapping[str, Any] | None,
                   rng: RNGLike) -> ItemModelResults:
    """Fit the item model and the fits of :data:`COMPARED`, compare them, check the model.

    Parameters
    ----------
    scores
        Per-item scores (:func:`evaluq.item_scores`).
    options
        Arguments of :func:`evaluq.fit_items` (draws, tune, chains, family, priors) over
        :data:`FIT_DEFAULTS`.
    rng
        The seed of every fit (the same for all, as in the report's other sections).

    Returns
    -------
    ItemModelResults
        With ``reason`` set and no fit when the scores suit no family (e.g. fractional
        scores): the caller then fits the cube model.
    """
    from evaluq.item_model import compare_fits

    table = item_table(scores)
    base = {"model": "model", "item": "item", "score": "score", "task": "task",
            "epoch": "epoch", "rng": rng, **FIT_DEFAULTS, **dict(options or {})}
    learned = base.get("item_distribution") == "learned"
    if learned:                      # the learned distribution is the binomial family's
        base.setdefault("family", "binomial")
    try:
        fit, said = _fit(table, base)
    except (ValueError, CubeError) as err:
        return ItemModelResults(reason=str(err))
    res = ItemModelResults(fit=fit, notes=[f"item model: {t}" for t in said])
    if weak := fit.prior_contraction().attrs["note"]:
        res.notes.append(f"item model: {weak}")
    main = f"{fit.data.family}, {MAIN}" + (", learned item distribution" if learned else "")
    fits: dict[str, Any] = {main: fit}
    for label, overrides in COMPARED:
        try:
            fits[label], said = _fit(table, {**base, "item_distribution": "normal",
                                             **({"family": "auto"} if learned else {}),
                                             **overrides})
            res.notes += [f"{label}: {t}" for t in said]
        except (ValueError, CubeError) as err:
            res.notes.append(f"{label}: not fitted ({err})")
    if len(fits) >= 2:
        res.comparison = compare_fits(fits)
    res.checks = fit.predictive_checks(rng=rng)
    if "advice" in res.checks.attrs:
        res.notes.append(f"predictive checks: {res.checks.attrs['advice']} (evaluq report: "
                         "--item-distribution learned)")
    return res


def _scores_table(fit: ItemFit) -> pd.DataFrame:
    """Per-model posterior mean, 95% interval and P(best) at both scopes."""
    from evaluq.item_model._fit import SAMPLE_DIMS, SCOPES

    cols: dict[tuple[str, str], Any] = {}
    for scope in SCOPES:
        s = fit.scores(scope)
        lo, hi = posterior_interval(s, 0.95).T
        cols |= {(scope, "mean"): s.mean(SAMPLE_DIMS).values, (scope, "2.5%"): lo,
                 (scope, "97.5%"): hi,
                 (scope, "P(best)"): fit.rank_probabilities(scope)["p_best"].values}
    out = pd.DataFrame(cols, index=pd.Index(fit.data.models, name=MODEL))
    out = out.sort_values(("benchmark", "mean"), ascending=False)
    out.attrs = {"caption": (
        "Item model: posterior mean and 95% credible interval of each model's expected "
        "score, and P(best). benchmark: over these items (their effects drawn from their "
        "exact conditional); new_items: on a new item from the same population (the item "
        "effect integrated over its distribution)."), "uncertainty": "posterior"}
    return out


def _pairs_table(fit: ItemFit, order: list[Any]) -> pd.DataFrame:
    """Each pair once (better model by benchmark mean first): the posterior difference and
    P(>) at both scopes."""
    from evaluq.item_model._fit import SCOPES

    rows = [(a, b) for k, a in enumerate(order) for b in order[k + 1:]]
    cols: dict[tuple[str, str], Any] = {}
    for scope in SCOPES:
        pw = fit.pairwise_differences(scope)
        sel = {MODEL: xr.DataArray([a for a, _ in rows], dims="pair"),
               MODEL_B: xr.DataArray([b for _, b in rows], dims="pair")}
        ci = pw["ci"].sel(sel)
        cols |= {(scope, "difference"): pw["mean"].sel(sel).values,
                 (scope, "2.5%"): ci.isel(ci_bound=0).values,
                 (scope, "97.5%"): ci.isel(ci_bound=1).values,
                 (scope, "P(>)"): pw["p_greater"].sel(sel).values}
    out = pd.DataFrame(cols, index=pd.MultiIndex.from_tuples(rows, names=[MODEL, MODEL_B]))
    out.attrs = {"caption": (
        "Item model: posterior difference (model minus model_b) with its 95% credible "
        "interval and P(model > model_b), each pair once, at both scopes."),
        "uncertainty": "posterior"}
    return out


def item_model_tables(res: ItemModelResults) -> dict[str, pd.DataFrame]:
    """The item model's tables, by file stem: ``item_model_scores``, ``item_model_pairs``,
    ``item_model_loo`` (with a comparison), ``item_model_checks``, ``item_model_diagnostics``
    and ``item_model_vs_frequentist``."""
    if res.fit is None:
        return {}
    fit = res.fit
    scores = _scores_table(fit)
    out = {"item_model_scores": scores,
           "item_model_pairs": _pairs_table(fit, list(scores.index))}
    if res.comparison is not None:
        loo = res.comparison.copy()
        loo.index.name = "fit"
        loo.attrs = {**res.comparison.attrs, "caption": (
            "PSIS-LOO comparison (arviz-stats): expected log predictive density elpd, its "
            "difference to the best fit and the SE of that difference (dse); "
            f"{res.comparison.attrs.get('unit', 'one item is one observation')}; items whose "
            "Pareto k exceeds 0.7 (an unreliable estimate) are counted.")}
        out["item_model_loo"] = loo
    if res.checks is not None:
        checks = res.checks.copy()
        checks.attrs = {"caption": (
            "Predictive checks: a posterior check passes when P(T_rep >= T_obs) is in "
            "[0.025, 0.975]; a prior check when the observed statistic is inside the prior "
            "predictive's central 99%.")}
        out["item_model_checks"] = checks
    out["item_model_diagnostics"] = fit.diagnostics()
    out["item_model_vs_frequentist"] = fit.compare_frequentist()
    return out


def item_model_section(res: ItemModelResults) -> Section:
    """Section: the item model's posterior, the LOO comparison and the predictive checks.

    Parameters
    ----------
    res
        The results of :func:`fit_item_model`.

    Returns
    -------
    Section
        Id ``item-model``; one figure (a forest plot of the benchmark-scope posterior
        differences) when the model was fitted, else the reason it was not.
    """
    from evaluq.plots import forest_plot

    if res.fit is None:
        return Section("item-model", "Item model (Bayesian, per item)", _p(
            f"The item model was not fitted: {res.reason} The cube model is shown instead."))
    tables = item_model_tables(res)
    fit = res.fit
    shape = ("a learned distribution" if fit.config.get("item_distribution") == "learned"
             else "a normal distribution")
    body = [_p(f"Bayesian item model fitted to the per-item scores (evaluq.fit_items: "
               f"{fit.data.family} family, 1PL, item effects crossed with models and "
               f"integrated out over {shape}; form {fit.form!r}). It replaces the cube model "
               "here: the data are items, not cell means."),
            _table_html(tables["item_model_scores"])]
    pairs = fit.pairwise_differences("benchmark")
    several = pairs.sizes.get("model", 0) > 1                 # one model: nothing to compare
    if several:
        body += [_table_html(tables["item_model_pairs"]),
                 _figure(forest_plot(pairs, pairs=_adjacent_pairs(pairs),
                                     title="item model: posterior differences "
                                           "(benchmark scope)"),
                         alt="forest plot of the item model's posterior differences")]
    body += ["<h3>Model comparison (PSIS-LOO)</h3>",
            _table_html(tables["item_model_loo"]) if "item_model_loo" in tables else _p(
                "No comparison: no other fit could be made."),
            "<h3>Predictive checks</h3>", _table_html(tables["item_model_checks"]),
            "<h3>Sampler diagnostics</h3>", _table_html(tables["item_model_diagnostics"]),
            "<h3>Posterior beside the per-item CLT answer</h3>",
            _table_html(tables["item_model_vs_frequentist"])]
    if res.notes:
        body.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in res.notes)
                    + "</ul>")
    return Section("item-model", "Item model (Bayesian, per item)", "\n".join(body),
                   figures=int(several))

"""Judge scores corrected by human labels in the report (issue 32, item 6): ``evaluq report
LOGS --from inspect --judge SCORER --gold SCORER`` and ``report(..., judged=...)``.

:func:`judge_analysis` runs :func:`evaluq.judges.judged_means` on a per-item table (epochs of
one item averaged first: the judge's mean over epochs, the gold label's mean over the epochs
that have one) and, per model, :func:`evaluq.judges.label_budget` for an interval half as wide;
:func:`judged_section` shows the raw judge means beside the corrected ones, the transport
flags, the paired differences and the label budget.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluq._dims import CI_BOUND, MODEL
from evaluq.reporting.sections import Section, _caution_box, _p, _table_html

ITEM_KEY = "task/item"
"""The per-item table's item column when items are keyed by (task, item)."""


@dataclass
class JudgeAnalysis:
    """What the report shows of a judge-scored evaluation.

    Attributes
    ----------
    result
        :func:`evaluq.judges.judged_means`'s result.
    raw
        Each model's mean judge score over its judged items (``model`` index).
    budget
        Per model: the gold labels it has, the labels an interval half as wide needs with the
        judge, and without it (None when not computed).
    """

    result: Any
    raw: pd.Series
    budget: pd.DataFrame | None = None


def _numeric_scores(table: pd.DataFrame, judge: str, gold: str) -> pd.DataFrame:
    """The table with its judge and gold columns as numbers; a label (text) refused naming
    the column and the argument, with the mapping to give (empty gold cells are allowed)."""
    from evaluq._validation import numeric_column

    out = table
    for name, argument in ((judge, "judge"), (gold, "gold")):
        series = table[name]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        numbers = pd.to_numeric(series.astype(object), errors="coerce")
        if (numbers.isna() & series.notna()).any():
            numeric_column(table, name, argument)             # text: refused, named
        out = out.copy() if out is table else out
        out[name] = numbers.astype(np.float64)
    return out


def _items_every_model_has(rows: pd.DataFrame, judge: str) -> pd.DataFrame:
    """The rows of the (task, item)s every model of the task has a judge score for (as
    ``missing="drop"`` keeps them for the rest of the report)."""
    scored = rows[rows[judge].notna()]
    per_task = rows.groupby("task", observed=True)["model"].nunique()
    per_item = scored.groupby(["task", "item"], observed=True)["model"].nunique()
    full = per_item[per_item.to_numpy() == per_task.reindex(
        per_item.index.get_level_values("task")).to_numpy()].index
    keep = pd.MultiIndex.from_frame(scored[["task", "item"]]).isin(full)
    return scored[keep].reset_index(drop=True)


def per_item_table(table: pd.DataFrame, *, judge: str, gold: str, cluster: str | None,
                   missing: str | None = None) -> pd.DataFrame:
    """One row per (model, task, item): epochs averaged (gold over the epochs labelled).
    ``missing="drop"``: only the items every model of their task has a judge score for (the
    items the rest of the report keeps); otherwise every row, and a missing judge score is
    refused by :func:`evaluq.judges.judged_means`."""
    keys = ["model", "task", "item"]
    for name, flag in ((judge, "--judge"), (gold, "--gold")):
        if name not in table.columns:
            scores = [str(c) for c in table.columns[4:]]
            raise ValueError(f"{flag} {name!r} is not a score of the logs: {scores}")
    table = _numeric_scores(table, judge, gold)
    grouped = table.groupby(keys, sort=True, observed=True)
    out = grouped[[judge, gold]].mean().reset_index()      # NaN gold ignored, all-NaN stays NaN
    if cluster is not None:
        out[cluster] = grouped[cluster].first().to_numpy()
    if missing == "drop":
        out = _items_every_model_has(out, judge)
    out[ITEM_KEY] = out["task"].astype(str) + "/" + out["item"].astype(str)
    return out


def _budgets(rows: pd.DataFrame, result: Any, judge: str, gold: str) -> pd.DataFrame:
    """Per model: labels for an interval half as wide as now, with and without the judge."""
    from evaluq.judges import label_budget

    ci = result.confidence_interval()
    width = (ci.sel({CI_BOUND: "upper"}) - ci.sel({CI_BOUND: "lower"})).to_series()
    out = []
    for name, part in rows.groupby("model", sort=True):
        labelled = part[gold].notna().to_numpy()
        now = float(width.get(name, np.nan))
        entry: dict[str, Any] = {"model": name, "gold labels": int(labelled.sum()),
                                 "interval width": now, "labels for half the width": np.nan,
                                 "without the judge": np.nan}
        target = now / 2
        if labelled.sum() >= 2 and np.isfinite(target) and target > 0:
            try:
                plan = label_budget(part[gold].to_numpy()[labelled],
                                    part[judge].to_numpy()[labelled],
                                    part[judge].to_numpy()[~labelled], width=target)
                entry["labels for half the width"] = float(plan["n_gold"])
                entry["without the judge"] = float(plan["n_gold_only"])
            except ValueError:                    # a constant pilot: no budget to give
                pass
        out.append(entry)
    frame = pd.DataFrame(out).set_index("model")
    frame.attrs["nan_reasons"] = {
        "labels for half the width": "not reachable by labelling more of these judged items "
                                     "(more items are needed), or fewer than two gold labels "
                                     "or a constant pilot"}
    return frame


def judge_analysis(table: pd.DataFrame, *, judge: str, gold: str, cluster: str | None = None,
                   confidence_level: float = 0.95, rng: Any = 0,
                   missing: str | None = None) -> JudgeAnalysis:
    """``judged_means`` of a harness table's judge and gold scores, the raw judge means and
    the label budget (epochs of an item averaged first; ``missing="drop"``: on the items
    every model of their task has a judge score for, see :func:`per_item_table`)."""
    from evaluq.judges import judged_means

    rows = per_item_table(table, judge=judge, gold=gold, cluster=cluster, missing=missing)
    result = judged_means(rows, model="model", item=ITEM_KEY, judge=judge, gold=gold,
                          cluster=cluster, confidence_level=confidence_level, rng=rng)
    raw = rows.groupby("model", sort=True)[judge].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        budget = _budgets(rows, result, judge, gold)
    return JudgeAnalysis(result=result, raw=raw, budget=budget)


def _corrected_table(analysis: JudgeAnalysis) -> pd.DataFrame:
    result = analysis.result
    table = result.to_dataframe()
    frame = pd.DataFrame({"judge mean (raw)": analysis.raw.reindex(table.index),
                          "corrected": table["estimate"], "lower": table["lower"],
                          "upper": table["upper"], "method": table["method"],
                          "gold labels": table["n_gold"], "judged": table["n_judged"],
                          "worth in labels": table["n_effective"]})
    if "flagged" in table:
        frame["judge transports"] = np.where(table["flagged"], "no: gold only", "yes")
    frame.index.name = MODEL
    return frame.sort_values("corrected", ascending=False)


def _differences_table(result: Any) -> pd.DataFrame:
    names = [v for v in ("difference", "se_difference", "p_value", "p_holm", "n_shared")
             if v in result.differences]
    d = result.differences[names].to_dataframe().reset_index()
    keep = d[d[MODEL].astype(str) < d["model_b"].astype(str)]
    cols = [c for c in ("model", "model_b", "difference", "se_difference", "p_value",
                        "p_holm", "n_shared") if c in keep]
    return keep[cols].set_index(["model", "model_b"]).sort_values("p_holm")


def judged_section(analysis: JudgeAnalysis) -> Section:
    """Section: corrected against raw judge means, transport flags, differences, budget."""
    result = analysis.result
    level = result.confidence_level
    body = [_p(f"The judge's scores corrected by the gold (human) labels: {result.reason}. "
               f"Intervals at {level:.0%}. 'Worth in labels' is how many gold labels alone "
               "would give the same precision.")]
    flagged = []
    if result.transport is not None:
        flags = result.transport["flagged"].to_series()
        flagged = [str(m) for m in flags.index[flags.to_numpy(dtype=bool)]]
    if flagged:
        body.append(_caution_box(
            f"The judge does not score {', '.join(flagged)} as it scores the other models "
            "(the transport check: its relation to the gold labels differs); their means use "
            "the gold labels only."))
    body.append(_table_html(_corrected_table(analysis),
                           caption="Raw judge mean and the corrected mean per model."))
    body += [_p(note) for note in result.notes]
    if result.estimate.sizes[MODEL] > 1:
        body.append(_table_html(_differences_table(result),
                               caption="Paired differences of the corrected means over shared "
                                       "items (Holm-adjusted p-values over the pairs)."))
    if analysis.budget is not None:
        body.append(_table_html(analysis.budget,
                               caption="Gold labels per model for an interval half as wide "
                                       "as today's, with the judge (PPI++) and without it; "
                                       "blank: not reachable by labelling more of the items "
                                       "judged so far (more judged items are needed)."))
    return Section("judged", "Judge scores corrected by human labels", "\n".join(body))


def judged_tables(analysis: JudgeAnalysis) -> dict[str, pd.DataFrame]:
    """The section's tables by file stem, each with its caption in ``attrs``."""
    corrected = _corrected_table(analysis)
    corrected.attrs["caption"] = ("Judge scores corrected by human labels: raw judge mean, "
                                  f"corrected mean and its {analysis.result.confidence_level:.0%}"
                                  " interval per model.")
    out = {"corrected": corrected}
    if analysis.result.estimate.sizes[MODEL] > 1:
        diffs = _differences_table(analysis.result)
        diffs.attrs["caption"] = "Paired differences of the corrected means (Holm over pairs)."
        out["corrected_differences"] = diffs
    if analysis.budget is not None:
        budget = analysis.budget.copy()
        budget.attrs["caption"] = "Gold labels per model for an interval half as wide."
        out["label_budget"] = budget
    return out

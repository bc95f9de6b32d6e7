"""Bad-input corpus entries of the judge-score corrections (issue 32)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import evaluq as eq

from .corpus import Case

GOLD = np.array([1, 0, 1, 1, 0, 1, 0, 1.0])
JUDGE = np.array([1, 0, 1, 0, 0, 1, 1, 1.0])
UNLABELLED = np.array([1, 1, 0, 1, 0, 1, 1, 0, 1, 1.0])


def table() -> pd.DataFrame:
    """Two models on four shared items, two of them labelled for each model."""
    return pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "item": list(range(4)) * 2,
                         "judge": [1, 0, 1, 1, 0, 0, 1, 1.0],
                         "gold": [1, np.nan, 1, 0, 0, np.nan, 1, 1]})


def judges_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    add(Case("evaluq.ppi_mean", "gold and judge_gold of different lengths",
             lambda: eq.ppi_mean(GOLD, JUDGE[:5], UNLABELLED), "`judge_gold`"))
    add(Case("evaluq.ppi_mean", "no labelled item",
             lambda: eq.ppi_mean([], [], UNLABELLED), "`gold` is empty"))
    add(Case("evaluq.ppi_mean", "a NaN judge score",
             lambda: eq.ppi_mean(GOLD, np.r_[JUDGE[:-1], np.nan], UNLABELLED), "`judge_gold`"))
    add(Case("evaluq.ppi_mean", "unknown method",
             lambda: eq.ppi_mean(GOLD, JUDGE, UNLABELLED, method="bogus"), "`method`"))
    add(Case("evaluq.ppi_mean", "Rogan-Gladen on non-binary gold",
             lambda: eq.ppi_mean(GOLD * 2.5, JUDGE, UNLABELLED, method="rogan-gladen"),
             "0/1 gold"))
    add(Case("evaluq.ppi_mean", "confidence_level 1.5",
             lambda: eq.ppi_mean(GOLD, JUDGE, UNLABELLED, confidence_level=1.5),
             "`confidence_level`"))
    add(Case("evaluq.ppi_mean", "lam 1.5 (PPI++'s lambda is in [0, 1])",
             lambda: eq.ppi_mean(GOLD, JUDGE, UNLABELLED, lam=1.5), "`lam`"))
    add(Case("evaluq.PPIMeanResult", "a constant judge: lambda NaN with its reason, the "
             "gold-only mean reported",
             lambda: eq.ppi_mean(GOLD, np.ones(8), np.ones(10), method="ppi++").estimate))
    add(Case("evaluq.label_budget", "negative width",
             lambda: eq.label_budget(GOLD, JUDGE, UNLABELLED, width=-1), "`width`"))
    add(Case("evaluq.label_budget", "neither width nor difference",
             lambda: eq.label_budget(GOLD, JUDGE, UNLABELLED), "`width`"))
    add(Case("evaluq.judged_means", "an unknown gold column",
             lambda: eq.judged_means(table(), gold="human"), "`gold`"))
    add(Case("evaluq.judged_means", "lam -0.2 (PPI++'s lambda is in [0, 1])",
             lambda: eq.judged_means(table(), lam=-0.2), "`lam`"))
    add(Case("evaluq.judged_means", "a repeated (model, item) key",
             lambda: eq.judged_means(pd.concat([table(), table()])), "repeat"))
    add(Case("evaluq.judged_means", "Rogan-Gladen on a judge score of 0.5",
             lambda: eq.judged_means(table().replace({"judge": {0.0: 0.5}}),
                                     method="rogan-gladen"), "0/1 judge"))
    add(Case("evaluq.JudgedMeansResult", "Rogan-Gladen with a judge at chance: NaN, reason",
             lambda: eq.judged_means(table(), method="rogan-gladen",
                                     transport_alpha=None).to_dataframe()))
    add(Case("evaluq.JudgedMeansResult", "two labels per model: a finite table",
             lambda: eq.judged_means(table(), rng=0).to_dataframe()))
    add(Case("evaluq.fit_judge_model", "draws 0",
             lambda: eq.fit_judge_model(table(), draws=0), "`draws`"))
    add(Case("evaluq.fit_judge_model", "an unknown gold column",
             lambda: eq.fit_judge_model(table(), gold="human"), "`gold`"))
    add(Case("evaluq.JudgeFit", "unknown pooling",
             lambda: eq.fit_judge_model(table(), pooling="some"), "`pooling`"))
    add(Case("evaluq.load_judge_fit", "no such file",
             lambda: eq.load_judge_fit("/nonexistent/judge.nc"), "`path`",
             errors=(FileNotFoundError,)))
    return c

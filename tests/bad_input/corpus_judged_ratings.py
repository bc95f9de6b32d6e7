"""Bad-input corpus entries of the judge-assisted ratings (issue 33 item 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluq.ratings import fit_judged_ratings

from .corpus import Case

NAME = "evaluq.ratings.fit_judged_ratings"


def judged(n: int = 60, n_gold: int = 20, seed: int = 0) -> pd.DataFrame:
    """Three models, every one winning, losing and tying; gold on the first ``n_gold`` rows."""
    rng = np.random.default_rng(seed)
    base = [("x", "y", "a"), ("y", "z", "a"), ("z", "x", "a"), ("x", "y", "b"),
            ("y", "z", "tie"), ("x", "z", "b")]
    rows = [base[k % len(base)] for k in range(n)]
    votes = pd.DataFrame(rows, columns=["model_a", "model_b", "judge"])
    human = np.where(rng.random(n) < 0.8, votes.judge, rng.choice(["a", "b", "tie"], n))
    votes["gold"] = pd.Series(human, dtype=object).where(np.arange(n) < n_gold, None)
    votes["prompt"] = [f"p{k % 5}" for k in range(n)]
    return votes


def _with(column: str, row: int, value: object, votes: pd.DataFrame | None = None
          ) -> pd.DataFrame:
    votes = judged() if votes is None else votes
    votes.loc[row, column] = value
    return votes


def judged_ratings_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    add(Case(NAME, "a gold verdict without a judge vote",
             lambda: fit_judged_ratings(_with("judge", 0, None)), "`judge`"))
    add(Case(NAME, "a missing judge verdict on an unlabelled row",
             lambda: fit_judged_ratings(_with("judge", 40, np.nan)), "`judge`"))
    add(Case(NAME, "no labelled row",
             lambda: fit_judged_ratings(judged().assign(gold=None)), "`gold`"))
    add(Case(NAME, "a single labelled row",
             lambda: fit_judged_ratings(judged(n_gold=1)), "`gold`"))
    add(Case(NAME, "an unknown judge label",
             lambda: fit_judged_ratings(_with("judge", 30, "left")), "`judge`"))
    add(Case(NAME, "an unknown gold label",
             lambda: fit_judged_ratings(_with("gold", 3, "left")), "`gold`"))
    add(Case(NAME, "judge and gold the same column",
             lambda: fit_judged_ratings(judged(), gold="judge"), "`judge`"))
    add(Case(NAME, "a vote of a model against itself",
             lambda: fit_judged_ratings(_with("model_b", 1, "y")), "itself"))
    add(Case(NAME, "an unknown gold column",
             lambda: fit_judged_ratings(judged(), gold="human"), "`gold`"))
    add(Case(NAME, "lam 1.5",
             lambda: fit_judged_ratings(judged(), lam=1.5), "`lam`"))
    add(Case(NAME, "lam 'auto'",
             lambda: fit_judged_ratings(judged(), lam="auto"), "`lam`"))
    add(Case(NAME, "lam above 0 with every row labelled",
             lambda: fit_judged_ratings(judged(n_gold=60), lam=0.5), "`lam`"))
    add(Case(NAME, "a single cluster",
             lambda: fit_judged_ratings(judged().assign(prompt="p"), cluster="prompt"),
             "`cluster`"))
    add(Case(NAME, "davidson without any tie",
             lambda: fit_judged_ratings(judged().replace({"tie": "a"}), ties="davidson"),
             "`ties`"))
    add(Case(NAME, "unknown ties rule",
             lambda: fit_judged_ratings(judged(), ties="newman"), "`ties`"))
    add(Case(NAME, "an unknown reference model",
             lambda: fit_judged_ratings(judged(), reference="w"), "`reference`"))
    add(Case(NAME, "unknown interval",
             lambda: fit_judged_ratings(judged(), interval="jackknife"), "`interval`"))
    add(Case(NAME, "n_resamples 1",
             lambda: fit_judged_ratings(judged(), interval="bootstrap", n_resamples=1),
             "`n_resamples`"))
    add(Case(NAME, "valid bootstrap: a finite table",
             lambda: fit_judged_ratings(judged(), interval="bootstrap", n_resamples=50)
             .to_dataframe()))
    add(Case(NAME, "valid: a finite table", lambda: fit_judged_ratings(judged()).to_dataframe()))
    return c

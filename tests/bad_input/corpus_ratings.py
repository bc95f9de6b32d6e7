"""Bad-input corpus entries of the ratings from pairwise votes (issue 33, item 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import evaluq as eq
from evaluq import plots

from .corpus import Case


def votes(rows: list[tuple[str, str, str]] | None = None) -> pd.DataFrame:
    """Three models, every one winning and losing somewhere, one tie."""
    rows = rows or [("x", "y", "model_a"), ("y", "z", "model_a"), ("z", "x", "model_a"),
                    ("x", "y", "model_b"), ("y", "z", "tie"), ("x", "z", "model_b")] * 3
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def _prompts(n_prompts: int = 4, repeat: int = 1) -> pd.DataFrame:
    v = pd.concat([votes()] * repeat, ignore_index=True)
    v["prompt"] = [f"p{i % n_prompts}" for i in range(len(v))]
    v["vote_id"] = np.arange(len(v))    # repeated rows are separate votes, not copies
    return v


def ratings_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    add(Case("evaluq.fit_ratings", "a vote of a model against itself",
             lambda: eq.fit_ratings(votes([("x", "x", "tie"), ("x", "y", "model_a"),
                                           ("y", "x", "model_a")])), "itself"))
    add(Case("evaluq.fit_ratings", "an unknown winner label",
             lambda: eq.fit_ratings(votes([("x", "y", "left"), ("y", "x", "right")])),
             "`winner`"))
    add(Case("evaluq.fit_ratings", "a missing winner",
             lambda: eq.fit_ratings(votes([("x", "y", None), ("y", "x", "model_a"),
                                           ("x", "y", "model_a")])), "`winner`"))
    add(Case("evaluq.fit_ratings", "a model that never loses (infinite MLE)",
             lambda: eq.fit_ratings(votes([("x", "y", "model_a")] * 3 + [("y", "z", "tie"),
                                           ("z", "y", "model_a"), ("y", "z", "model_a")])),
             "never|infinite|prior_sd"))
    add(Case("evaluq.fit_ratings", "a disconnected comparison graph",
             lambda: eq.fit_ratings(votes([("a", "b", "model_a"), ("b", "a", "model_a"),
                                           ("c", "d", "model_a"), ("d", "c", "model_a")])),
             "connected|disconnected"))
    add(Case("evaluq.fit_ratings", "an unknown column",
             lambda: eq.fit_ratings(votes(), winner="outcome"), "`winner`"))
    add(Case("evaluq.fit_ratings", "unknown ties rule",
             lambda: eq.fit_ratings(votes(), ties="elo"), "`ties`"))
    add(Case("evaluq.fit_ratings", "confidence_level 1.5",
             lambda: eq.fit_ratings(votes(), confidence_level=1.5), "`confidence_level`"))
    add(Case("evaluq.fit_ratings", "n_resamples 0",
             lambda: eq.fit_ratings(votes(), interval="bootstrap", n_resamples=0),
             "`n_resamples`"))
    add(Case("evaluq.fit_ratings", "an unknown reference model",
             lambda: eq.fit_ratings(votes(), reference="w"), "`reference`"))
    add(Case("evaluq.fit_ratings", "an unknown cluster column",
             lambda: eq.fit_ratings(_prompts(), cluster="voter"), "`cluster`"))
    add(Case("evaluq.RatingsResult", "clustered fit: a finite table",
             lambda: eq.fit_ratings(_prompts(30, 5), cluster="prompt").to_dataframe()))
    add(Case("evaluq.fit_ratings", "clusters too few for the covariance (2 for 3 parameters)",
             lambda: eq.fit_ratings(_prompts(2), cluster="prompt"),
             r"`cluster` has 2 clusters, too few for the covariance of the 3 free parameters"))
    add(Case("evaluq.RatingsResult", "ties='half': no tie parameter (NaN with a reason)",
             lambda: eq.fit_ratings(votes(), ties="half").tie_parameter))
    add(Case("evaluq.plots.ratings_plot", "a cube instead of a result",
             lambda: plots.ratings_plot(eq.simulate_cube(n_models=2, rng=0)), "`result`"))
    add(Case("evaluq.plots.win_probability_heatmap", "annotate='yes'",
             lambda: plots.win_probability_heatmap(eq.fit_ratings(votes()), annotate="yes"),
             "`annotate`"))
    add(Case("evaluq.fit_ratings_bayes", "a vote of a model against itself",
             lambda: eq.fit_ratings_bayes(votes([("x", "x", "tie"), ("x", "y", "model_a"),
                                                 ("y", "x", "model_a")])), "itself"))
    add(Case("evaluq.fit_ratings_bayes", "draws 0",
             lambda: eq.fit_ratings_bayes(votes(), draws=0), "`draws`"))
    add(Case("evaluq.RatingsFit", "a negative prior_sd",
             lambda: eq.fit_ratings_bayes(votes(), prior_sd=-1), "`prior_sd`"))
    add(Case("evaluq.load_ratings_fit", "no such file",
             lambda: eq.load_ratings_fit("/nonexistent/ratings.nc"), "`path`",
             errors=(FileNotFoundError,)))
    add(Case("evaluq.compare_ratings_fits", "no fits",
             lambda: eq.compare_ratings_fits({}), "`fits`"))
    add(Case("evaluq.compare_ratings_fits", "not fits",
             lambda: eq.compare_ratings_fits({"a": 1, "b": 2}), "`fits`"))
    return c

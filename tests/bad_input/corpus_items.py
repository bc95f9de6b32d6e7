"""Bad-input corpus entries of the per-item tables (issue 18: the harness log readers,
``from_items``, ``item_scores``, ``item_means``, the power figure) and of the item model
fitted to them (issue 22)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import evaluq as eq

from .corpus import Case

TABLE = pd.DataFrame({"m": ["a", "a", "b", "b"], "i": [1, 2, 1, 2], "s": [1, 0, 1, 1]})
KEYS = {"model": "m", "item": "i", "score": "s"}


def item_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    nan = TABLE.assign(s=[1, np.nan, 1, 1])
    add(Case("evaluq.from_items", "unknown item column",
             lambda: eq.from_items(TABLE, **{**KEYS, "item": "x"}), "given as `item`"))
    add(Case("evaluq.from_items", "duplicated rows",
             lambda: eq.from_items(pd.concat([TABLE, TABLE]), **KEYS), "more than one row"))
    add(Case("evaluq.from_items", "a model missing an item",
             lambda: eq.from_items(TABLE.iloc[:3], **KEYS), "model 'b' seed 0 lacks 1 item"))
    add(Case("evaluq.from_items", "NaN score", lambda: eq.from_items(nan, **KEYS),
             "given as `score`"))
    add(Case("evaluq.from_items", "n_boot 0",
             lambda: eq.from_items(TABLE, **KEYS, n_boot=0), "`n_boot` must be >= 2"))
    add(Case("evaluq.item_scores", "duplicated rows",
             lambda: eq.item_scores(pd.concat([TABLE, TABLE]), **KEYS), "more than one row"))
    add(Case("evaluq.item_scores", "NaN score", lambda: eq.item_scores(nan, **KEYS),
             "given as `score`"))
    add(Case("evaluq.item_means", "unknown cluster column",
             lambda: eq.item_means(TABLE, **KEYS, cluster="zz"), "given as `cluster`"))
    add(Case("evaluq.item_means", "text scores ('correct' / 'incorrect')",
             lambda: eq.item_means(TABLE.assign(s=["correct", "incorrect"] * 2), **KEYS),
             r"given as `score`\) must be numeric"))
    add(Case("evaluq.item_means", "confidence level 2",
             lambda: eq.item_means(TABLE, **KEYS, confidence_level=2), "`confidence_level`"))
    add(Case("evaluq.plots.mde_plot", "a table instead of the grid",
             lambda: eq.plots.mde_plot(TABLE), "`grid` must be the DataArray"))
    add(Case("evaluq.read_inspect_logs", "no such file",
             lambda: eq.read_inspect_logs("no/such/log.eval"), "`paths`: no such file",
             errors=(FileNotFoundError,)))
    add(Case("evaluq.read_inspect_logs", "a folder without logs",
             lambda: eq.read_inspect_logs(tempfile.mkdtemp()), "holds no Inspect logs"))
    add(Case("evaluq.read_inspect_logs", "a file that is not a log",
             lambda: eq.read_inspect_logs(_not_a_log()), "cannot read the Inspect log"))
    add(Case("evaluq.read_lm_eval_samples", "no such folder",
             lambda: eq.read_lm_eval_samples("no/such/folder"), "`path`: no such file",
             errors=(FileNotFoundError,)))
    add(Case("evaluq.read_lm_eval_samples", "a folder without samples",
             lambda: eq.read_lm_eval_samples(tempfile.mkdtemp()), "holds no lm-eval samples"))
    add(Case("evaluq.read_lighteval_details", "a folder without details",
             lambda: eq.read_lighteval_details(tempfile.mkdtemp()),
             "holds no lighteval details files"))
    add(Case("evaluq.read_lighteval_details", "a file that is not a details file",
             lambda: eq.read_lighteval_details(_not_a_log()),
             "is not a lighteval details file"))
    add(Case("evaluq.read_lighteval_results", "a folder without results",
             lambda: eq.read_lighteval_results(tempfile.mkdtemp()),
             "holds no lighteval results files"))
    add(Case("evaluq.read_lighteval_results", "a file that is not a results file",
             lambda: eq.read_lighteval_results(_not_a_log()),
             "is not a lighteval results file"))
    add(Case("evaluq.read_lm_eval_results", "a folder without results",
             lambda: eq.read_lm_eval_results(tempfile.mkdtemp()), "holds no lm-eval results"))
    add(Case("evaluq.read_lm_eval_results", "a file that is not a results file",
             lambda: eq.read_lm_eval_results(_not_a_log()), "is not an lm-eval results file"))
    c += item_model_cases()
    return c


def item_model_cases() -> list[Case]:
    """The item model (issue 22): fit_items, its fit, compare_fits, load_item_fit,
    simulate_items."""
    c: list[Case] = []
    add = c.append
    one_model_item = pd.concat([TABLE, pd.DataFrame({"m": ["a"], "i": [3], "s": [1]})])
    add(Case("evaluq.fit_items", "a score of 0.5 under bernoulli",
             lambda: eq.fit_items(TABLE.assign(s=[1, 0.5, 1, 1]), **KEYS, family="bernoulli"),
             "family 'bernoulli' needs scores 0 or 1"))
    add(Case("evaluq.fit_items", "NaN score",
             lambda: eq.fit_items(TABLE.assign(s=[1, np.nan, 1, 1]), **KEYS),
             "given as `score`"))
    add(Case("evaluq.fit_items", "an item scored by one model",
             lambda: eq.fit_items(one_model_item, **KEYS), "no pairing information"))
    add(Case("evaluq.fit_items", "unknown item column",
             lambda: eq.fit_items(TABLE, **{**KEYS, "item": "question"}),
             r"column 'question' \(given as `item`\) is not in the table; its columns are"))
    add(Case("evaluq.fit_items", "text scores",
             lambda: eq.fit_items(TABLE.assign(s=["A", "B"] * 2), **KEYS),
             r"given as `score`\) must be numeric"))
    add(Case("evaluq.fit_items", "unknown family",
             lambda: eq.fit_items(TABLE, **KEYS, family="poisson"), "`family`"))
    add(Case("evaluq.fit_items", "draws 0",
             lambda: eq.fit_items(TABLE, **KEYS, draws=0), "`draws` must be >= 1"))
    add(Case("evaluq.ItemFit", "unknown prior key",
             lambda: eq.fit_items(TABLE, **KEYS, priors={"x": 1.0}), "`priors`"))
    add(Case("evaluq.compare_fits", "no fits", lambda: eq.compare_fits({}), "`fits`"))
    add(Case("evaluq.compare_fits", "not a fit", lambda: eq.compare_fits({"a": 3, "b": 4}),
             "`fits`"))
    add(Case("evaluq.load_item_fit", "path of a wrong type", lambda: eq.load_item_fit(3),
             "`path`"))
    add(Case("evaluq.load_item_fit", "no such file",
             lambda: eq.load_item_fit(Path(tempfile.mkdtemp()) / "fit.nc"), "`path`",
             errors=(FileNotFoundError,)))
    add(Case("evaluq.simulate_items", "no models",
             lambda: eq.simulate_items(n_models=0), "`n_models` must be >= 1"))
    add(Case("evaluq.fit_items", "discrimination not a bool",
             lambda: eq.fit_items(TABLE, **KEYS, discrimination="yes"),
             "`discrimination` must be True or False", errors=(TypeError,)))
    add(Case("evaluq.fit_items", "the 2PL without items",
             lambda: eq.fit_items(TABLE, **{**KEYS, "item": None}, discrimination=True),
             "needs item effects"))
    add(Case("evaluq.fit_items", "beta-binomial with one epoch per item",
             lambda: eq.fit_items(TABLE, **KEYS, family="beta-binomial"),
             "'beta-binomial' needs at least 2 epochs per item"))
    add(Case("evaluq.fit_items", "a score of 0.5 under beta-binomial",
             lambda: eq.fit_items(TABLE.assign(s=[1, 0.5, 1, 1]), **KEYS,
                                  family="beta-binomial"),
             "family 'beta-binomial' needs scores 0 or 1"))
    c += ordinal_cases()
    return c


def ordinal_cases() -> list[Case]:
    """The ordinal family of fit_items (judge ratings with graders)."""
    c: list[Case] = []
    add = c.append
    ratings = pd.DataFrame({"m": ["a", "b"] * 3, "g": ["x", "x", "y", "y", "x", "y"],
                            "s": [1, 2, 3, 2, 1, 3]})
    keys = {"model": "m", "item": None, "score": "s", "grader": "g"}
    add(Case("evaluq.fit_items", "non-integer ordinal levels",
             lambda: eq.fit_items(ratings.assign(s=[1, 2.5, 3, 2, 1, 3]), **keys,
                                  family="ordinal"), "needs integer rating levels"))
    add(Case("evaluq.fit_items", "a grader who rated one model",
             lambda: eq.fit_items(ratings.assign(g=["x", "x", "y", "y", "z", "y"]), **keys),
             "rated only one model"))
    add(Case("evaluq.fit_items", "NaN rating",
             lambda: eq.fit_items(ratings.assign(s=[1, np.nan, 3, 2, 1, 3]), **keys),
             "given as `score`"))
    add(Case("evaluq.fit_items", "a rating outside the declared levels",
             lambda: eq.fit_items(ratings, **keys, levels=[1, 2]), "outside `levels`"))
    add(Case("evaluq.fit_items", "grader with a binary family",
             lambda: eq.fit_items(ratings, **keys, family="binomial"),
             "`grader` needs family='ordinal'"))
    add(Case("evaluq.fit_items", "the 2PL on ratings",
             lambda: eq.fit_items(ratings.assign(i=[1, 1, 2, 2, 3, 3]),
                                  **{**keys, "item": "i"}, discrimination=True),
             "takes the bernoulli or binomial family"))
    return c


def _not_a_log() -> Path:
    path = Path(tempfile.mkdtemp()) / "log.json"
    path.write_text("not json")
    return path

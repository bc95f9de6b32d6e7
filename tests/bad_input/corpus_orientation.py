"""Bad-input corpus entries of the ``higher_is_better`` *argument* (issue 31, item 3).

Every public function taking ``higher_is_better`` validates it with the one validator,
``_validation.check_orientation``: True or False (``np.bool_`` too) and nothing else. The
string ``"False"`` is truthy in Python, so a function that took ``bool(value)`` read it as
True (``correlated_t_test`` stored 1); 1 / 0 and the strings are how a stored *attribute*
may come back from a file, read by ``_schema.orientation`` (``eq.higher_is_better(cube)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import evaluq as eq
from evaluq import metrics

from .corpus import Case, agg, resampled, summary_df

REFUSED = r"`higher_is_better` must be True(, False or None| or False); got "
FOLDS = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82]


def _long() -> pd.DataFrame:
    return pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"], "score": [0.5, 0.6]})


def _items() -> pd.DataFrame:
    return pd.DataFrame({"m": ["a"] * 4 + ["b"] * 4, "i": [0, 1, 2, 3] * 2,
                         "v": [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]})


def _metric(value: Any) -> Any:
    return metrics.Metric("x", higher_is_better=value, kind="regression",
                          item_stats=lambda t, p, k: np.stack([t - p], axis=-1),
                          from_sums=lambda s, n, k: s[..., 0] / n)


# each public function with a `higher_is_better` argument, called with `value` there
CALLS: dict[str, Any] = {
    "evaluq.correlated_t_test": lambda v: eq.correlated_t_test(FOLDS, FOLDS[::-1],
                                                               higher_is_better=v),
    "evaluq.from_arrays": lambda v: eq.from_arrays(np.ones((1, 1, 2)), higher_is_better=v),
    "evaluq.from_long": lambda v: eq.from_long(_long(), higher_is_better=v),
    "evaluq.from_summary": lambda v: eq.from_summary(summary_df(), n_seeds=2,
                                                     higher_is_better=v),
    "evaluq.from_items": lambda v: eq.from_items(_items(), model="m", item="i", score="v",
                                                 n_boot=10, higher_is_better=v),
    "evaluq.pairwise_differences": lambda v: eq.pairwise_differences(agg(),
                                                                     higher_is_better=v),
    "evaluq.pairwise_by_language": lambda v: eq.pairwise_by_language(resampled(),
                                                                     higher_is_better=v),
    "evaluq.rank_distribution": lambda v: eq.rank_distribution(agg(), higher_is_better=v),
    "evaluq.significance_groups": lambda v: eq.significance_groups(agg(), higher_is_better=v),
    "evaluq.leaderboard": lambda v: eq.leaderboard(agg(), higher_is_better=v),
    "evaluq.metrics.Metric": _metric,
    "evaluq.reporting.sections.item_tables": lambda v: _item_tables(v),
}


def _item_tables(value: Any) -> Any:
    from evaluq.reporting.sections import item_tables

    df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "q": [1, 2, 3, 4] * 2,
                       "ok": [1, 1, 0, 1, 0, 1, 0, 1]})
    return item_tables(eq.item_means(df, model="model", item="q", score="ok"),
                       higher_is_better=value)


def orientation_cases() -> list[Case]:
    """Each function with the string "False", the string "True" and the integer 0."""
    cases = []
    for name, call in CALLS.items():
        for value in ("False", "true", np.int64(0)):
            cases.append(Case(name, f"higher_is_better={value!r}",
                              lambda call=call, value=value: call(value), REFUSED,
                              errors=(TypeError,)))
    return cases

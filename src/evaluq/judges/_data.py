"""A per-item judge table (model, item, judge, gold[, cluster]) as integer codes and arrays.

One pass of vectorised numpy: the labels of ``model`` / ``item`` / ``cluster`` factorised
(sorted, so results do not depend on row order), the judge scores checked (numbers, no NaN),
the gold scores checked (numbers; NaN marks an unlabelled row, infinity is refused), one row
per (model, item), one cluster per item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluq._validation import check_column_args, check_label_spacing, numeric_column
from evaluq.errors import CubeError
from evaluq.io import as_table


@dataclass(frozen=True)
class JudgeTable:
    """The table's rows as codes: ``model`` (M models), ``group`` (the sampling unit of each
    row: its cluster, or its item without clusters; G of them), ``judge``, ``gold`` (NaN
    unlabelled), ``labelled``; plus the labels."""

    model: np.ndarray
    group: np.ndarray
    item: np.ndarray
    judge: np.ndarray
    gold: np.ndarray
    labelled: np.ndarray
    models: np.ndarray
    n_groups: int
    n_items: int
    clustered: bool


def _codes(df: pd.DataFrame, column: str, argument: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted factorisation of a label column; missing labels raise."""
    series = df[column]
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.cat.remove_unused_categories()
        if series.cat.ordered is False:
            series = series.cat.reorder_categories(sorted(series.cat.categories))
        codes, uniques = series.cat.codes.to_numpy(), series.cat.categories.to_numpy()
    else:
        codes, found = pd.factorize(series, sort=True)
        uniques = np.asarray(found)
    if (codes < 0).any():
        rows = np.flatnonzero(codes < 0)[:5].tolist()
        raise CubeError(f"column {column!r} (given as `{argument}`) has missing labels, at "
                        f"rows {rows}")
    check_label_spacing(uniques, column)
    return codes.astype(np.int64), np.asarray(uniques)


def _gold_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """The gold scores as float64 with NaN for unlabelled rows; infinity or text raises."""
    series = df[column]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        try:
            values = pd.to_numeric(series).to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as err:
            raise CubeError(f"column {column!r} (given as `gold`) must be numeric (NaN where "
                            f"unlabelled); got dtype {series.dtype}") from err
    else:
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isinf(values).any():
        raise CubeError(f"column {column!r} (given as `gold`) has infinite values, at rows "
                        f"{np.flatnonzero(np.isinf(values))[:5].tolist()}")
    return values


def _check_unique(model: np.ndarray, item: np.ndarray, n_items: int, df: pd.DataFrame,
                  names: tuple[str, str]) -> None:
    key = model * n_items + item
    counts = np.bincount(key) if key.size and key.max() < 50_000_000 else np.unique(
        key, return_counts=True)[1]
    if (counts > 1).any():
        dup = df.duplicated(subset=list(names), keep=False).to_numpy()
        raise CubeError(f"`table`: rows repeat the ({names[0]}, {names[1]}) key: one judge "
                        f"score and at most one gold label per model and item; repeated at rows "
                        f"{np.flatnonzero(dup)[:5].tolist()}")


def _cluster_codes(df: pd.DataFrame, cluster: str, item: np.ndarray,
                   n_items: int) -> tuple[np.ndarray, int]:
    codes, uniques = _codes(df, cluster, "cluster")
    per_item = np.empty(n_items, dtype=np.int64)
    per_item[item] = codes
    if not np.array_equal(per_item[item], codes):
        raise CubeError(f"column {cluster!r} (given as `cluster`) must be one cluster per "
                        "item; some item lies in two clusters")
    return codes, len(uniques)


def read_judge_table(table: Any, *, model: str, item: str, judge: str, gold: str,
                     cluster: str | None) -> JudgeTable:
    """Validate the table and return its :class:`JudgeTable`."""
    df, _ = as_table(table, "table")
    check_column_args(df.columns, {"model": model, "item": item, "judge": judge,
                                   "gold": gold, "cluster": cluster}, "the table")
    if len(df) == 0:
        raise CubeError("`table` has no rows")
    model_codes, models = _codes(df, model, "model")
    item_codes, items = _codes(df, item, "item")
    _check_unique(model_codes, item_codes, len(items), df, (model, item))
    judge_values = numeric_column(df, judge, "judge")
    gold_values = _gold_column(df, gold)
    if cluster is not None:
        group, n_groups = _cluster_codes(df, cluster, item_codes, len(items))
    else:
        group, n_groups = item_codes, len(items)
    labelled = ~np.isnan(gold_values)
    if not labelled.any():
        raise CubeError(f"column {gold!r} (given as `gold`) has no labels (all NaN): at least "
                        "a few gold labels per model are needed")
    return JudgeTable(model=model_codes, group=group, item=item_codes, judge=judge_values,
                      gold=gold_values, labelled=labelled, models=models, n_groups=n_groups,
                      n_items=len(items), clustered=cluster is not None)

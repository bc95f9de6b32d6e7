"""Long tables to the cube's arrays: sorted labels, numeric columns, unique keys, pivoting.

The helpers :mod:`evaluq.cube`'s loaders share to turn a tidy table (one row per model,
language, seed and, optionally, bootstrap replicate) into dense arrays in the cube's sorted
label order; a numpy / pandas layer that knows nothing of the cube's schema or storage.
"""

from __future__ import annotations

import numbers
from typing import Final

import numpy as np
import pandas as pd

from evaluq._dims import BOOTSTRAP
from evaluq._validation import check_label_spacing, label_hint, percent_hint
from evaluq.errors import CubeError


def _sorted_labels(values: pd.Series, column: str) -> np.ndarray:
    """Sorted unique labels of a key column; a column of mixed types is an error."""
    if values.isna().any():
        rows = values.index[values.isna()].tolist()[:5]
        raise CubeError(f"`data`: key column {column!r} has missing values (rows {rows}): "
                        f"empty cells, or text a table reader takes for missing ('NA', "
                        f"'None', 'nan', 'N/A', 'null', ...). If such a text is a label, read "
                        f"the file with eq.read_table(path, keep_default_na=False, "
                        f"na_values=['']) and pass the table; else drop the rows")
    unique = pd.unique(values.to_numpy())
    check_label_spacing(unique, column)
    try:
        return np.asarray(sorted(unique.tolist()), dtype=object if unique.dtype == object
                          else unique.dtype)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in unique})
        raise CubeError(
            f"key column {column!r} mixes value types ({', '.join(kinds)}); "
            "make them all strings or all numbers"
        ) from None


def _replicate_ids(labels: np.ndarray) -> np.ndarray:
    """Bootstrap replicate ids as integers when every id is a whole number: a column of
    integer ids reads as floats (0.0, 1.0, ...) because the full-test-set rows leave it empty
    (NaN), or as Python floats in an object column; the cube's ids are then 0, 1, ... whatever
    the path (in memory, a zarr store). Anything else unchanged."""
    if labels.dtype == object and len(labels) and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_) for v in labels):
        labels = labels.astype(np.float64)
    if (labels.dtype.kind == "f" and np.isfinite(labels).all()
            and (labels == np.round(labels)).all() and (np.abs(labels) < 2**53).all()):
        return labels.astype(np.int64)
    return labels


def _label_coord(labels: np.ndarray) -> np.ndarray:
    # strings as a plain object array of str (NetCDF stores them as variable-length strings)
    if labels.dtype == object and all(isinstance(v, str) for v in labels):
        return labels.astype(str).astype(object)
    return labels


def _numeric_column(df: pd.DataFrame, column: str, argument: str) -> np.ndarray:
    series = df[column]
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) in (
            "integer", "floating", "mixed-integer-float", "decimal"):
        series = series.astype(np.float64)      # numbers held as objects (a concat, Decimals)
    if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
        bad = series[pd.to_numeric(series, errors="coerce").isna() & series.notna()]
        example = f" (for example {bad.iloc[0]!r} in row {bad.index[0]})" if len(bad) else ""
        hint = percent_hint(bad.iloc[0], column) if len(bad) else ""
        if len(bad) == series.notna().sum() and not hint:     # labels only: no number
            hint = label_hint(pd.unique(bad.astype(str))[:8], column)
        if not len(bad) and series.notna().any():       # every value is a number, as text
            first = series[series.notna()]
            example = f" (for example {first.iloc[0]!r} in row {first.index[0]})"
            hint = (f": its values are numbers written as text; convert the column, e.g. "
                    f"`df[{column!r}] = pd.to_numeric(df[{column!r}])`")
        raise CubeError(
            f"column {column!r} (given as `{argument}`) must be numeric; "
            f"it has dtype {series.dtype}{example}{hint}"
        )
    values = series.to_numpy(dtype=np.float64)
    if np.isinf(values).any():
        row = series.index[np.isinf(values)][0]
        raise CubeError(f"column {column!r} (given as `{argument}`) has an infinite value "
                        f"in row {row}")
    return values


DUPLICATE_REMEDY = (" (rows that are repeated runs of one cell: name the column that "
                    "numbers them as `seed=`, or their bootstrap replicates as `bootstrap=`; "
                    "copies of one row: drop them)")
"""What a duplicated key's message suggests (the command line reads ``seed=`` as --seed)."""


RUN_WORDS: Final = ("seed", "run", "epoch", "rep", "trial", "fold", "boot", "sample", "iter")
"""Words in a column's name that say it numbers the repeats of a cell."""
ITEM_WORDS: Final = frozenset({"item", "id", "question", "prompt", "doc", "example", "instance",
                               "problem", "query", "uid", "qid"})
"""Words of a column's name that say it labels the items of a per-item table."""


def _check_unique_keys(df: pd.DataFrame, keys: dict[str, str]) -> None:
    cols = list(keys.values())
    dup = df.duplicated(subset=cols, keep=False)
    if dup.any():
        first = {k: v for k, v in df.loc[dup, cols].iloc[0].to_dict().items()
                 if k != "__seed__"}            # from_long's seed column when none is given
        n = int(df.loc[dup, cols].drop_duplicates().shape[0])
        numbering = _numbering_columns(df.loc[dup], cols)
        items = _item_columns(df.loc[dup], cols)
        hint = (f" (the table's column {numbering[0]!r} numbers the repeats: give it as "
                f"`{'bootstrap' if 'boot' in numbering[0].lower() else 'seed'}=`)"
                if numbering else
                f" (the table's column {items[0]!r} tells the repeated rows apart, one per "
                f"item: a table of per-item scores; give it as `item=` to evaluq.from_items)"
                if items else DUPLICATE_REMEDY)
        raise CubeError(
            f"`data`: {n} key(s) appear more than once in the table; first duplicated key: "
            f"{first}. Each combination of the key columns must occur once{hint}"
        )


def _item_columns(repeated: pd.DataFrame, keys: list[str]) -> list[str]:
    """The columns, other than ``keys``, whose name says they label items (``ITEM_WORDS``,
    as a word of the name: 'id', 'doc_id', 'question') and that tell the ``repeated`` rows
    apart."""
    import re

    return [str(c) for c in repeated.columns
            if c not in keys and set(re.split(r"[^a-z0-9]+", str(c).lower())) & ITEM_WORDS
            and not repeated.duplicated(subset=[*keys, c]).any()]


def _numbering_columns(repeated: pd.DataFrame, keys: list[str]) -> list[str]:
    """The columns, other than ``keys``, whose name says they number runs (``RUN_WORDS``)
    and that tell the ``repeated`` rows apart (integer or text labels, not scores)."""
    found = []
    for column in repeated.columns:
        name = str(column)
        if (column in keys or not any(w in name.lower() for w in RUN_WORDS)
                or repeated.duplicated(subset=[*keys, column]).any()):
            continue
        values = repeated[column]
        if pd.api.types.is_float_dtype(values) and not (values.dropna() % 1 == 0).all():
            continue
        found.append(name)
    return found


def _pivot(df: pd.DataFrame, keys: dict[str, str], values: np.ndarray,
           coords: dict[str, np.ndarray]) -> np.ndarray:
    """Place ``values`` in an array indexed by ``keys`` (dim -> column); absent cells are NaN."""
    shape = tuple(len(coords[d]) for d in keys)
    out = np.full(shape, np.nan)
    index = tuple(
        pd.Index(coords[d]).get_indexer(df[col].to_numpy()) for d, col in keys.items()
    )
    out[index] = values
    return out


_Pivoted = tuple[dict[str, np.ndarray], np.ndarray, np.ndarray | None, np.ndarray,
                 np.ndarray | None]
"""coords, score (model, language, seed), boot_score or None, and the table row of each
score / boot_score cell (NaN where absent; boot rows None when not needed)."""


def _pivot_reference(df: pd.DataFrame, keys: dict[str, str], bootstrap: str | None,
                     score: str) -> _Pivoted:
    """``from_long``'s pivot by label lookup: slow on large tables, but every check in order
    with its documented message (the fast :func:`_pivot_codes` defers to it on any problem)."""
    coords = {d: _sorted_labels(df[c], c) for d, c in keys.items()}   # missing keys first
    if bootstrap is not None:
        keys_all = {**keys, BOOTSTRAP: bootstrap}
        _check_unique_keys(df.fillna({bootstrap: -np.inf}), keys_all)
        is_boot = df[bootstrap].notna()
        full, boot = df[~is_boot], df[is_boot]
        if len(full) == 0:
            raise CubeError(
                f"column {bootstrap!r} (given as `bootstrap`) has no empty rows: give the score "
                "on the full test set of each (model, language, seed) in a row whose "
                "bootstrap value is empty"
            )
    else:
        _check_unique_keys(df, keys)
        full, boot = df, df.iloc[:0]
    values = _numeric_column(df, score, "score")
    score_arr = _pivot(full, keys, values[full.index.to_numpy()], coords)
    full_rows = _pivot(full, keys, full.index.to_numpy(dtype=np.float64), coords)
    if bootstrap is None:
        return coords, score_arr, None, full_rows, None
    coords[BOOTSTRAP] = _replicate_ids(_sorted_labels(boot[bootstrap], bootstrap))
    boot_keys = {**keys, BOOTSTRAP: bootstrap}
    boot_arr = _pivot(boot, boot_keys, values[boot.index.to_numpy()], coords)
    boot_rows = _pivot(boot, boot_keys, boot.index.to_numpy(dtype=np.float64), coords)
    return coords, score_arr, boot_arr, full_rows, boot_rows


def _codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Integer codes (positions in the sorted labels) and the sorted labels of a key column,
    as :func:`_sorted_labels` sorts them; None for missing values or mixed types."""
    if len(series) == 0 or series.isna().any():
        return None
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iuf":
        values = series.to_numpy()
        lo, hi = values.min(), values.max()
        if (hi - lo) <= 4 * len(values) + 1024 and (dtype.kind != "f"
                                                    or (values == np.round(values)).all()):
            offset = (values - lo).astype(np.intp)           # integral: a presence table
            present = np.bincount(offset, minlength=int(hi - lo) + 1) > 0
            rank = np.cumsum(present) - 1
            return rank[offset], (np.flatnonzero(present) + lo).astype(dtype)
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        import pyarrow as pa

        arrow = pa.array(series.array)
        if isinstance(arrow, pa.ChunkedArray):
            arrow = arrow.combine_chunks()
        arrow = arrow.dictionary_encode()                     # no Python string per row
        codes = arrow.indices.to_numpy(zero_copy_only=False).astype(np.intp)
        unique = np.asarray(arrow.dictionary.to_pylist(), dtype=object)
    else:
        codes, uniques = pd.factorize(series)
        unique = np.asarray(uniques.to_numpy())
    listed = unique.tolist()
    try:
        order = sorted(range(len(listed)), key=listed.__getitem__)
    except TypeError:
        return None
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    labels = np.asarray([listed[i] for i in order],
                        dtype=object if unique.dtype == object else unique.dtype)
    return rank[codes], labels


def _pivot_codes(df: pd.DataFrame, keys: dict[str, str], bootstrap: str | None, score: str,
                 *, boot_rows: bool) -> _Pivoted | None:
    """``from_long``'s pivot from integer codes of the key columns (each factorised once);
    None on anything irregular, for :func:`_pivot_reference` to report."""
    series = df[score]
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return None
    values = series.to_numpy(dtype=np.float64)
    if np.isinf(values).any():
        return None
    full_idx: np.ndarray | slice = slice(None)
    boot_idx = None
    if bootstrap is not None:
        is_boot = df[bootstrap].notna().to_numpy()
        if is_boot.all():
            return None
        full_idx, boot_idx = np.flatnonzero(~is_boot), np.flatnonzero(is_boot)
    coords, flat = {}, None
    for dim, col in keys.items():
        coded = _codes(df[col])
        if coded is None:
            return None
        codes, coords[dim] = coded
        check_label_spacing(coords[dim], col)
        flat = codes if flat is None else flat * len(coords[dim]) + codes
    assert flat is not None
    shape = tuple(len(coords[d]) for d in keys)
    score_arr, full_rows = _place(flat[full_idx], values[full_idx], shape,
                                  np.arange(len(df))[full_idx])
    if score_arr is None or full_rows is None:
        return None
    if boot_idx is None or bootstrap is None:
        return coords, score_arr, None, full_rows, None
    coded = _codes(df[bootstrap].iloc[boot_idx])
    if coded is None:
        return None
    codes, ids = coded
    coords[BOOTSTRAP] = _replicate_ids(ids)
    boot_flat = flat[boot_idx] * len(coords[BOOTSTRAP]) + codes
    boot_arr, rows = _place(boot_flat, values[boot_idx], (*shape, len(coords[BOOTSTRAP])),
                            boot_idx if boot_rows else None)
    if boot_arr is None:
        return None
    return coords, score_arr, boot_arr, full_rows, rows


def _place(flat: np.ndarray, values: np.ndarray, shape: tuple[int, ...],
           rows: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``values`` at the flat positions of an array of ``shape`` (NaN elsewhere), and the row
    of each cell; (None, None) when a position occurs twice (a duplicated key)."""
    size = int(np.prod(shape, dtype=np.int64))
    if flat.size and np.bincount(flat, minlength=size).max() > 1:
        return None, None
    out = np.full(size, np.nan)
    out[flat] = values
    where = None
    if rows is not None:
        where = np.full(size, np.nan)
        where[flat] = rows
        where = where.reshape(shape)
    return out.reshape(shape), where

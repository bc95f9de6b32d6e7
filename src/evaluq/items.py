"""Per-item scores (one row per model x item [x language] [x seed]) to a cube, and back.

A harness log holds one score per model, item and epoch. :func:`from_items` turns such a
table into an evaluation cube: ``score`` is the mean over a language's items and
``boot_score`` comes from bootstrap replicates of those items (whole clusters of items with
``cluster=``), one count matrix per language shared by every model and seed, so differences
between models stay paired. :func:`item_scores` returns the per-item data themselves as a
DataArray (model, seed, item), the input of :func:`evaluq.item_means` and of item-level
models. Both share one validated pivot of the table (:func:`pivot_items`), so the cube and
the item data always describe the same items.

Why the cube does not hold the items: a cube's dims are (model, language, seed, bootstrap)
and every analysis reads it so; languages have different item sets, so an ``item`` dim would
be the union of all of them padded with NaN, written into every saved cube. The item data
stay one call away instead, with the same validation, in a layout without padding (the
items of all languages one after the other along ``item``, labelled by the coordinates
``language`` and ``item_id``). The cube records how many items (``n_items``) and clusters
(``n_clusters``) each language has, which :mod:`evaluq.power` reads.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path
from typing import Any, Literal, NamedTuple, cast

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._atomic import atomic_dir, write_manifest, zarr_checksums
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    CLUSTER,
    EPOCH,
    ITEM,
    ITEM_LABEL,
    ITEM_SCORE,
    LANGUAGE,
    MODEL,
    N_CLUSTERS,
    N_ITEMS,
    SCORE,
    SEED,
    SEEDS_ARE,
    TASK,
)
from evaluq._kernels import bootstrap_counts
from evaluq._provenance import provenance, table_attrs
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_column_args,
    check_int,
    check_label_spacing,
    check_orientation,
    check_rng,
    implicit_epoch,
    numeric_column,
)
from evaluq._warn import warn
from evaluq.cube import validate
from evaluq.errors import CubeError, EvaluqWarning
from evaluq.io import TableLike, as_table, read_table

_CHUNK_BYTES = 64 * 2**20
"""Memory of one block of bootstrap counts (resamples x items or clusters)."""
_SHOWN = 5
"""How many offending keys an error message lists."""
MISSING_POLICIES = ("raise", "drop")
SEED_KINDS = ("epochs", "runs")
"""What a per-item table's seed column holds (``from_items(seeds_are=...)``)."""


class MissingItemsWarning(EvaluqWarning):
    """Items some model or seed of a language lacks were left out (``missing="drop"``)."""


class LanguageBlock(NamedTuple):
    """One language's per-item scores: ``values`` (model, seed, item), NaN where the
    (model, seed) cell is absent; ``present`` (model, seed); sorted item labels; the cluster
    code of each item (or None) and the cluster labels."""

    label: Any
    items: np.ndarray
    values: np.ndarray
    present: np.ndarray
    clusters: np.ndarray | None
    cluster_labels: np.ndarray | None


class ItemTable(NamedTuple):
    """A validated per-item table: sorted models, seeds and languages, one block each."""

    models: np.ndarray
    seeds: np.ndarray
    blocks: list[LanguageBlock]
    source: str
    columns: dict[str, str | None]


# --- the pivot -----------------------------------------------------------------------------------

def _sorted_codes(series: pd.Series, column: str, mixed_ok: bool = False
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a key column in the sorted order of its labels, and the labels.

    Labels of several types raise, except with ``mixed_ok`` (item and cluster ids, which
    become no coordinate of the cube)."""
    codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise CubeError(f"column {column!r} has {int((codes < 0).sum())} missing key(s), "
                        f"e.g. at row {row}; every row needs a {column!r}")
    labels = np.asarray(uniques.astype(object) if isinstance(uniques, pd.Index)
                        else np.asarray(uniques, dtype=object))
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:
        if not mixed_ok:
            kinds = sorted({type(v).__name__ for v in labels})
            raise CubeError(f"column {column!r} mixes label types {kinds}; use one "
                            "type") from None
        # item or cluster ids of several types (7 and "7" are two items): sorted by type
        # name, then value, so the order still does not depend on the rows
        order = np.array(sorted(range(len(labels)),
                                key=lambda k: (type(labels[k]).__name__, labels[k])),
                         dtype=np.int64)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    check_label_spacing(labels, column)
    return rank[codes], _plain_labels(labels[order])


def _py(value: Any) -> Any:
    """A numpy scalar as the Python value (for messages and labels)."""
    return value.item() if isinstance(value, np.generic) else value


def _plain_labels(labels: np.ndarray) -> np.ndarray:
    """Labels as a numpy array of their natural dtype (numbers stay numbers)."""
    values = labels.tolist()
    if len({type(v) for v in values}) > 1 and not all(
            isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in values):
        return labels                     # 7 and "7" stay two labels
    out = np.asarray(values)
    return out if out.dtype.kind in "iufbU" else labels


def _key_codes(df: pd.DataFrame, cols: dict[str, str | None]
               ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Codes and sorted labels of model, language, seed, item (and cluster) columns."""
    codes: dict[str, np.ndarray] = {}
    labels: dict[str, np.ndarray] = {}
    for key, column in cols.items():
        if key == SCORE:
            continue
        if column is None:
            if key in (LANGUAGE, SEED):
                codes[key] = np.zeros(len(df), dtype=np.int64)
                labels[key] = np.array(["all"] if key == LANGUAGE else [0])
            continue
        codes[key], labels[key] = _sorted_codes(df[column], column,
                                                mixed_ok=key in (ITEM, CLUSTER))
    return codes, labels


def _positions(lang: np.ndarray, item: np.ndarray, n_lang: int, n_item: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's position among all (language, item) pairs, sorted by language then item;
    the item code of every pair; the first position of each language (length L + 1)."""
    if n_lang == 1:
        present = np.zeros(n_item, dtype=bool)
        present[item] = True
        pair_items = np.flatnonzero(present)
        where = np.cumsum(present) - 1
        return where[item], pair_items, np.array([0, len(pair_items)])
    key = lang * n_item + item
    codes, uniques = pd.factorize(key, sort=True)
    uniques = np.asarray(uniques, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(np.bincount(uniques // n_item,
                                                         minlength=n_lang))])
    return codes.astype(np.int64), uniques % n_item, offsets


def _check_duplicates(flat: np.ndarray, size: int, df: pd.DataFrame,
                      cols: dict[str, str | None], names: dict[str, str]) -> None:
    """Two rows for one (model, language, seed, item) raise, naming the first few and the
    table's columns (a harness's ``epoch`` or ``task``) that tell them apart."""
    counts = np.bincount(flat, minlength=size)
    if (counts > 1).any():
        dup_rows = np.flatnonzero(counts[flat] > 1)
        keys = [c for c in (cols[MODEL], cols[LANGUAGE], cols[SEED], cols[ITEM]) if c]
        shown = df.iloc[dup_rows[: 2 * _SHOWN]][keys].drop_duplicates().head(_SHOWN)
        key_names = ", ".join(names[k] for k in (MODEL, LANGUAGE, SEED, ITEM))
        raise CubeError(
            f"`table`: {int((counts > 1).sum())} ({key_names}) key(s) appear in more "
            f"than one row ({len(dup_rows)} rows), e.g. "
            f"{shown.to_dict(orient='records')}; each key needs exactly one score"
            + _duplicate_hint(df.iloc[dup_rows], keys, cols, names))


def _duplicate_hint(rows: pd.DataFrame, keys: list[str], cols: dict[str, str | None],
                    names: dict[str, str]) -> str:
    """The harness columns not given (``epoch``, ``task``) that differ among repeated rows,
    and the argument each one goes to."""
    given = {c for c in cols.values() if c is not None}
    hints = []
    for column, dim, what in ((EPOCH, SEED, "repeated scorings of an item"),
                              (TASK, LANGUAGE, "items are numbered within each task")):
        if (column in rows.columns and column not in given and cols[dim] is None
                and (rows.groupby(keys, sort=False)[column].nunique() > 1).any()):
            hints.append(f"its column {column!r} differs among these rows: pass "
                         f"{names[dim]}={column!r} ({what})")
    return ("; " + "; ".join(hints)) if hints else ""


def _cluster_of_items(codes: np.ndarray, where: np.ndarray, n_pairs: int, labels: np.ndarray,
                      item_labels: np.ndarray, pair_items: np.ndarray, column: str
                      ) -> np.ndarray:
    """The cluster code of each (language, item) pair; an item in two clusters raises."""
    out = np.full(n_pairs, -1, dtype=np.int64)
    out[where] = codes
    clash = out[where] != codes
    if clash.any():
        row = int(np.flatnonzero(clash)[0])
        pair = where[row]
        raise CubeError(
            f"item {_py(item_labels[pair_items[pair]])!r} is in two clusters of column "
            f"{column!r} ({_py(labels[out[pair]])!r} and {_py(labels[codes[row]])!r}); an "
            "item's cluster must "
            f"be the same in every row")
    return out


def _read(table: TableLike, columns: list[str], optional: tuple[str, ...] = ()
          ) -> tuple[pd.DataFrame, str]:
    """The table; from a parquet file only the columns used (and those of ``optional`` it
    has) are read (a harness log's metadata columns can be most of the file)."""
    if isinstance(table, str | os.PathLike) and Path(table).suffix.lower() in (".parquet",
                                                                              ".pq"):
        try:
            import pyarrow.parquet as pq

            present = set(pq.read_schema(table).names)
        except (ImportError, OSError):
            return as_table(table, "table")
        if set(columns) <= present:
            wanted = [*columns, *(c for c in optional if c in present)]
            return read_table(table, columns=list(dict.fromkeys(wanted))), str(Path(table))
    return as_table(table, "table")


_ARGUMENTS = {MODEL: "model", LANGUAGE: "language", SEED: "seed", ITEM: "item",
              CLUSTER: "cluster", SCORE: "score"}
"""The argument of each key column in :func:`pivot_items`' messages."""


def _checked_table(table: TableLike, cols: dict[str, str | None], names: dict[str, str],
                   epoch_from_table: bool) -> tuple[pd.DataFrame, str, np.ndarray]:
    """The table read and checked (the columns named, numeric scores), the epoch column
    taken as the seed where it alone explains repeated keys; ``cols`` is updated."""
    optional = (EPOCH, TASK) if cols[SEED] is None else (TASK,)
    df, source = _read(table, [c for c in cols.values() if c is not None], optional)
    check_column_args(df.columns, {names[k]: v for k, v in cols.items()})
    if len(df) == 0:
        raise CubeError("`table` is empty (no rows)")
    values = numeric_column(df, str(cols[SCORE]), names[SCORE])
    if cols[SEED] is None and epoch_from_table:
        keys = [c for c in (cols[MODEL], cols[LANGUAGE], cols[ITEM]) if c is not None]
        cols[SEED] = implicit_epoch(df, keys, cols.values(), names[SEED])
    return df, source, values


def pivot_items(table: TableLike, *, model: str, item: str, score: str,
                language: str | None = None, seed: str | None = None,
                cluster: str | None = None, missing: str = "raise",
                names: dict[str, str] | None = None,
                epoch_from_table: bool = True) -> ItemTable:
    """Validate a per-item table and lay it out per language (model, seed, item).

    The shared first step of :func:`from_items`, :func:`item_scores` and
    :func:`evaluq.item_means`; see :func:`from_items` for the rules (sorted labels, no
    duplicated key, no NaN score, missing items raise or are dropped with a warning). Without
    ``seed``, a table whose column ``epoch`` (a harness log's) alone tells repeated keys apart
    is read with ``seed="epoch"`` and an :class:`~evaluq.errors.ImplicitEpochWarning`
    (``epoch_from_table=False``: the repeats raise instead). ``names`` maps the dims
    ``language`` / ``seed`` to the caller's argument names in messages (``task`` / ``epoch``
    for :func:`evaluq.fit_items`).
    """
    check_choice("missing", missing, MISSING_POLICIES)
    names = {**_ARGUMENTS, **(names or {})}
    cols: dict[str, str | None] = {MODEL: model, LANGUAGE: language, SEED: seed, ITEM: item,
                                   CLUSTER: cluster, SCORE: score}
    df, source, values = _checked_table(table, cols, names, epoch_from_table)
    codes, labels = _key_codes(df, cols)
    n_m, n_l, n_s = (len(labels[k]) for k in (MODEL, LANGUAGE, SEED))
    where, pair_items, offsets = _positions(codes[LANGUAGE], codes[ITEM], n_l,
                                            len(labels[ITEM]))
    n_pairs = len(pair_items)
    cell = codes[MODEL] * n_s + codes[SEED]
    flat = cell * n_pairs + where
    _check_duplicates(flat, n_m * n_s * n_pairs, df, cols, names)
    filled = np.full(n_m * n_s * n_pairs, np.nan)
    filled[flat] = values
    grid = filled.reshape(n_m, n_s, n_pairs)
    rows = np.bincount(cell * n_l + codes[LANGUAGE], minlength=n_m * n_s * n_l)
    present = rows.reshape(n_m, n_s, n_l) > 0
    clusters = None if cluster is None else _cluster_of_items(
        codes[CLUSTER], where, n_pairs, labels[CLUSTER], labels[ITEM], pair_items, cluster)
    blocks = [_block(labels, k, grid, present[:, :, k], pair_items, clusters,
                     slice(int(offsets[k]), int(offsets[k + 1])), missing, names)
              for k in range(n_l)]
    return ItemTable(labels[MODEL], labels[SEED], blocks, source, cols)


def _block(labels: dict[str, np.ndarray], k: int, values: np.ndarray, present: np.ndarray,
           pair_items: np.ndarray, clusters: np.ndarray | None, span: slice, missing: str,
           names: dict[str, str]) -> LanguageBlock:
    """One language's block, after the check for items some (model, seed) lacks."""
    lang = _py(labels[LANGUAGE][k])
    vals = values[:, :, span]
    items = labels[ITEM][pair_items[span]]
    absent = np.isnan(vals) & present[:, :, None]
    if absent.any():
        keep = ~absent.any(axis=(0, 1))
        _report_missing(lang, absent, items, labels, missing, keep, names)
        vals, items = vals[:, :, keep], items[keep]
        if clusters is not None:
            clusters = clusters[span][keep]
            span = slice(0, len(items))
    cl = None
    cl_labels = None
    if clusters is not None:
        used, cl = np.unique(clusters[span], return_inverse=True)
        cl_labels = labels[CLUSTER][used]
    return LanguageBlock(lang, items, vals, present.copy(), cl, cl_labels)


def _report_missing(lang: Any, absent: np.ndarray, items: np.ndarray,
                    labels: dict[str, np.ndarray], missing: str, keep: np.ndarray,
                    names: dict[str, str]) -> None:
    """Missing items raise (naming model, seed, language and items) or warn when dropped."""
    lacking = np.argwhere(absent.any(axis=2))
    seed, language = names[SEED], names[LANGUAGE]
    parts = []
    for m, s in lacking[:_SHOWN]:
        gone = items[absent[m, s]]
        parts.append(f"model {_py(labels[MODEL][m])!r} {seed} {_py(labels[SEED][s])!r} lacks "
                     f"{len(gone)} item(s), e.g. {gone[:_SHOWN].tolist()}")
    more = f" (and {len(lacking) - _SHOWN} more cells)" if len(lacking) > _SHOWN else ""
    where = f"`table`: {language} {lang!r}: " + "; ".join(parts) + more
    if missing == "raise":
        raise CubeError(
            f"{where}. Every model and {seed} of a {language} must be scored on the same items "
            "(paired); score the missing items, or pass missing='drop' to keep only the items "
            f"every model and {seed} has (with a warning)")
    if not keep.any():
        raise CubeError(f"{where}; no item of {language} {lang!r} is scored by every model "
                        f"and {seed}")
    warn(f"{where}; dropped these {int((~keep).sum())} item(s) of language {lang!r} "
         f"for every model (missing='drop'), {int(keep.sum())} remain",
         MissingItemsWarning)


# --- the cube ------------------------------------------------------------------------------------

def _cluster_sums(block: LanguageBlock, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums of the scores (cells, G) and the cluster sizes (G,); each item is
    its own cluster without clusters."""
    if block.clusters is None:
        return cells, np.ones(cells.shape[1])
    order = np.argsort(block.clusters, kind="stable")
    sorted_cl = block.clusters[order]
    starts = np.flatnonzero(np.r_[True, sorted_cl[1:] != sorted_cl[:-1]])
    sums = np.add.reduceat(cells[:, order], starts, axis=1)
    return sums, np.diff(np.r_[starts, len(order)]).astype(np.float64)


def _boot_language(block: LanguageBlock, n_boot: int, gen: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Score (model, seed) and paired bootstrap replicates (model, seed, bootstrap).

    Replicate b draws G clusters (items without clusters) with replacement, the same draw for
    every model and seed, and takes the mean over the drawn items: (cluster sums @ counts) /
    (cluster sizes @ counts), one matrix product per block of resamples.
    """
    n_m, n_s, n_items = block.values.shape
    score = np.full((n_m, n_s), np.nan)
    boot = np.full((n_m, n_s, n_boot), np.nan)
    cells = block.values[block.present]                       # (present cells, items)
    exponent = _overflow_exponent(cells)
    cells = np.ldexp(cells, -exponent) if exponent else cells
    sums, sizes = _cluster_sums(block, cells)
    score[block.present] = sums.sum(axis=1) / n_items
    n_groups = sums.shape[1]
    chunk = max(1, min(n_boot, _CHUNK_BYTES // (8 * n_groups)))
    out = np.empty((len(cells), n_boot))
    for start in range(0, n_boot, chunk):                     # blocks of resamples
        counts = bootstrap_counts(gen, n_groups, min(chunk, n_boot - start))   # (b, G)
        out[:, start:start + len(counts)] = (sums @ counts.T) / (sizes @ counts.T)
    boot[block.present] = np.ldexp(out, exponent) if exponent else out
    if exponent:
        score = np.ldexp(score, exponent)
    return score, boot


def _overflow_exponent(cells: np.ndarray) -> int:
    """0, or the power of two to divide the scores by when their sums over the items could
    overflow (finite scores near 1e308): a mean is scale-free and a power of two exact, so the
    means are those of the scores, never an overflow blamed on the input; other scores are
    used as they are (their numbers do not change)."""
    top = float(np.max(np.abs(cells), initial=0.0))
    if top == 0.0 or np.log2(top) + np.log2(max(cells.shape[1], 1)) < 1000:
        return 0
    return int(np.frexp(top)[1])


def from_items(
    table: TableLike,
    *,
    model: str,
    item: str,
    score: str,
    language: str | None = None,
    seed: str | None = None,
    cluster: str | None = None,
    n_boot: int = 1000,
    rng: RNGLike = 0,
    missing: Literal["raise", "drop"] = "raise",
    metric: str | None = None,
    higher_is_better: bool = True,
    out: str | os.PathLike[str] | None = None,
    seeds_are: Literal["epochs", "runs"] = "epochs",
) -> xr.Dataset:
    r"""Build a cube from per-item scores, with paired (cluster) bootstrap replicates.

    One row per model x item [x language] [x seed]: 0/1 correctness or any per-item number
    (a harness's per-sample score, one epoch per seed). For each (model, language, seed)
    cell, ``score`` is the mean over the language's items,

    .. math:: y_{mls} = \frac{1}{n_l} \sum_i x_{mlsi},

    and ``boot_score`` holds ``n_boot`` bootstrap replicates of it. Replicate b of language l
    draws the language's items with replacement (with ``cluster=``, its G clusters, each
    bringing all its items) and is the *same* draw for every model and seed, so differences
    between models stay paired (Miller 2024, section 2.2). With cluster counts
    :math:`c_{bg}`, cluster sums :math:`S_{mlsg}` and sizes :math:`n_g`,

    .. math:: y^*_{mlsb} = \frac{\sum_g c_{bg} S_{mlsg}}{\sum_g c_{bg} n_g},

    computed as two matrix products per block of resamples (no loop over items).

    Parameters
    ----------
    table
        A pandas DataFrame, or a path to a CSV, TSV, JSON lines or parquet file
        (:func:`evaluq.io.read_table`).
    model, item, score
        Column names: the model, the item (sample id), the numeric per-item score.
    language
        Column of the language, task or data set (items are identified within it). None: one
        language, labelled ``"all"``.
    seed
        Column of the seed or epoch. None: one seed, labelled 0; but a table whose column
        ``epoch`` (a harness log's, :mod:`evaluq.io`) alone tells apart rows that repeat a
        (model, language, item) is read as ``seed="epoch"`` (its epochs are repeated scorings
        of each item), with an :class:`~evaluq.errors.ImplicitEpochWarning`.
    cluster
        Column of the item's cluster (a passage, a prompt with several generations): the
        bootstrap resamples whole clusters. An item must have one cluster in all its rows.
    n_boot
        Bootstrap replicates per language (>= 2).
    rng
        Seed or Generator; each language gets its own stream, spawned in sorted language
        order, so the result does not depend on the row order. Recorded in the attributes.
    missing
        What to do when some (model, seed) of a language lacks items that others have:
        ``"raise"`` (default) names the model, seed, language and items; ``"drop"`` keeps only
        the items every model and seed of the language has and warns
        (:class:`MissingItemsWarning`) naming what was dropped. A (model, seed) with no row
        at all in a language is an absent cell (NaN), as in every cube.
    metric, higher_is_better
        The metric's name (default: the score column's name) and orientation.
    out
        A new zarr store (a directory, e.g. ``"cube.zarr"``) to write the cube to; the cube
        is then returned opened lazily from it (:func:`evaluq.open_cube`). A parquet file
        is split batch by batch into a scratch file per language (beside the store, removed
        afterwards), then each language is scored and written, so memory is bounded by the
        largest language, not the file; the numbers are those of the in-memory path. Other inputs
        are built in memory and then written. On an error the store is removed.
    seeds_are
        What the ``seed`` column holds, recorded as ``attrs["seeds_are"]``. ``"epochs"``
        (default; a harness's epochs, repeated samples of one prompt): repeated scorings of
        the same items by the same model. An epoch's deviation is per-item noise, which the
        item bootstrap of the epochs' mean already holds, so :func:`evaluq.resample`
        (``seeds="mean"``) and :mod:`evaluq.power` do not add a seed-to-seed variance on top
        (that would count it twice). ``"runs"``: independent training runs (or any seed with
        an effect common to all items), whose seed-to-seed variance is added as for
        :func:`evaluq.from_predictions` cubes.

    Returns
    -------
    xarray.Dataset
        A cube: ``score`` (model, language, seed), ``boot_score`` (model, language, seed,
        bootstrap), ``n_items`` and (with ``cluster``) ``n_clusters`` (language); sorted
        coordinates; provenance attributes (``loader="from_items"``, source, evaluq
        version, ``rng_seed``, ``n_boot``, and the ``item`` / ``cluster`` columns). The
        per-item scores are :func:`item_scores` of the same table.

    Raises
    ------
    CubeError
        On a missing column (naming the argument and listing the table's columns), an empty
        table, a non-numeric score (naming the column, the first value that is no number and
        its row), a NaN or infinite score, a key with missing values, a duplicated (model,
        language, seed, item) (naming the table's ``epoch`` / ``task`` columns that tell the
        rows apart, and the argument to pass them as), an item in two clusters, or missing
        items (``missing="raise"``).

    Notes
    -----
    Memory: the table, its integer codes and one dense (model, seed, item) array of scores
    per language are in memory at once; 10^7 rows (20 models x 10^5 items x 5 epochs) peak
    at about 1.5 GB, and the bootstrap works in blocks of resamples of about 64 MiB of
    counts (``benchmarks/bench_from_items.py``). From a parquet file only the columns used
    are read. Larger logs go through ``out=``: a paired replicate is a sum over all of a
    language's items with counts shared by every model and seed, so the language (its
    whole (model, seed, item) array) is the unit that must fit in memory, and ``out=``
    streams a parquet file one language at a time.

    See Also
    --------
    item_scores, evaluq.item_means, evaluq.from_predictions, evaluq.power

    References
    ----------
    E. Miller (2024). Adding Error Bars to Evals: A Statistical Approach to Language Model
    Evaluations. arXiv:2411.00640.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "q": [1, 2, 3, 4] * 2,
    ...                    "passage": ["p", "p", "r", "r"] * 2,
    ...                    "correct": [1, 1, 0, 1, 0, 1, 0, 1]})
    >>> cube = eq.from_items(df, model="model", item="q", score="correct",
    ...                      cluster="passage", n_boot=200)
    >>> cube.score.sel(language="all", seed=0).values.tolist()
    [0.75, 0.5]
    >>> int(cube.n_items.sel(language="all")), int(cube.n_clusters.sel(language="all"))
    (4, 2)
    >>> cube.boot_score.sizes["bootstrap"]
    200
    """
    n_boot = check_int("n_boot", n_boot, minimum=2)
    root = check_rng(rng)
    check_orientation(higher_is_better)
    check_choice("seeds_are", seeds_are, SEED_KINDS)
    if out is not None:
        return _to_zarr(table, out, dict(model=model, item=item, score=score,
                                         language=language, seed=seed, cluster=cluster,
                                         missing=missing),
                        n_boot, rng, metric, bool(higher_is_better), seeds_are)
    data = pivot_items(table, model=model, item=item, score=score, language=language,
                       seed=seed, cluster=cluster, missing=missing)
    streams = np.random.SeedSequence(
        root.integers(0, 2**63 - 1, dtype=np.int64)).spawn(len(data.blocks))
    scored = [_boot_language(block, n_boot, np.random.default_rng(stream))
              for block, stream in zip(data.blocks, streams, strict=True)]
    cube = _assemble(data, scored, n_boot)
    cube.attrs = _attrs(data.source, score, metric, bool(higher_is_better), rng, n_boot, item,
                        cluster, seeds_are)
    cube.attrs.update(table_attrs(table, cube.attrs))  # a harness log's provenance
    return validate(cube)


def _attrs(source: str, score: str, metric: str | None, higher_is_better: bool, rng: RNGLike,
           n_boot: int, item: str, cluster: str | None, seeds_are: str) -> dict[str, Any]:
    """The cube's provenance attributes."""
    attrs = provenance("from_items", source, metric=metric or score,
                       higher_is_better=higher_is_better,
                       rng_seed=int(rng) if isinstance(rng, int) else type(rng).__name__)
    attrs.update({"n_boot": n_boot, "item_column": item, SEEDS_ARE: seeds_are,
                  **({"cluster_column": cluster} if cluster else {})})
    return attrs


def _to_zarr(table: TableLike, out: str | os.PathLike[str], kw: dict[str, Any], n_boot: int,
             rng: RNGLike, metric: str | None, higher_is_better: bool,
             seeds_are: Literal["epochs", "runs"]) -> xr.Dataset:
    """``from_items(..., out=store)``: a parquet file language by language, else in memory;
    written beside ``out`` and renamed to it when complete, its manifest last (``_atomic``:
    a killed write leaves no store at ``out``)."""
    from evaluq import _items_zarr
    from evaluq.cube import open_cube

    _items_zarr.check_out(out)
    with atomic_dir(out) as tmp:
        if isinstance(table, pd.DataFrame) or not _items_zarr.is_parquet(table):
            cube = from_items(table, **kw, n_boot=n_boot, rng=rng, metric=metric,
                              higher_is_better=higher_is_better, seeds_are=seeds_are)
            cube.chunk({MODEL: 1, LANGUAGE: 1}).to_zarr(tmp, consolidated=False,
                                                        encoding=zarr_checksums(cube))
        else:
            _stream_parquet(cast("str | os.PathLike[str]", table), tmp, kw, n_boot, rng,
                            metric, higher_is_better, seeds_are)
        write_manifest(tmp)
    return open_cube(out)


def _stream_parquet(table: str | os.PathLike[str], tmp: str | os.PathLike[str],
                    kw: dict[str, Any], n_boot: int, rng: RNGLike, metric: str | None,
                    higher_is_better: bool, seeds_are: Literal["epochs", "runs"]) -> None:
    """A parquet log into the store ``tmp``, one language at a time, with the random streams
    of the in-memory path (so the numbers are identical)."""
    from evaluq import _items_zarr

    root = check_rng(rng)
    seeds: list[np.random.SeedSequence] = []

    def score_language(rows: pd.DataFrame, k: int, n_languages: int
                       ) -> tuple[ItemTable, tuple[np.ndarray, np.ndarray]]:
        if not seeds:      # the streams of the in-memory path: one per sorted language
            seeds.extend(np.random.SeedSequence(
                root.integers(0, 2**63 - 1, dtype=np.int64)).spawn(n_languages))
        data = pivot_items(rows, **kw, epoch_from_table=False)   # one language's rows
        return data, _boot_language(data.blocks[0], n_boot, np.random.default_rng(seeds[k]))

    cols = {MODEL: kw["model"], LANGUAGE: kw["language"], SEED: kw["seed"],
            ITEM: kw["item"], CLUSTER: kw["cluster"], SCORE: kw["score"]}
    attrs = _attrs(os.fspath(table), kw["score"], metric, higher_is_better, rng, n_boot,
                   kw["item"], kw["cluster"], seeds_are)
    _items_zarr.stream(os.fspath(table), tmp, cols, n_boot, _sorted_codes, score_language,
                       attrs)


def _assemble(data: ItemTable, scored: list[tuple[np.ndarray, np.ndarray]], n_boot: int
              ) -> xr.Dataset:
    """The cube's variables from each language's score and replicates."""
    languages = [b.label for b in data.blocks]
    score = np.stack([s for s, _ in scored], axis=1)           # (model, language, seed)
    boot = np.stack([b for _, b in scored], axis=1)            # (..., bootstrap)
    data_vars: dict[str, Any] = {
        SCORE: ((MODEL, LANGUAGE, SEED), score),
        BOOT_SCORE: ((MODEL, LANGUAGE, SEED, BOOTSTRAP), boot),
        N_ITEMS: ((LANGUAGE,), np.array([len(b.items) for b in data.blocks], dtype=np.int64)),
    }
    if data.columns[CLUSTER] is not None:
        data_vars[N_CLUSTERS] = ((LANGUAGE,), np.array(
            [len(b.cluster_labels) if b.cluster_labels is not None else 0
             for b in data.blocks], dtype=np.int64))
    return xr.Dataset(data_vars, coords={MODEL: data.models, LANGUAGE: languages,
                                         SEED: data.seeds, BOOTSTRAP: np.arange(n_boot)})


def item_scores(
    table: TableLike,
    *,
    model: str,
    item: str,
    score: str,
    language: str | None = None,
    seed: str | None = None,
    cluster: str | None = None,
    missing: Literal["raise", "drop"] = "raise",
) -> xr.DataArray:
    """The per-item scores of a table as a DataArray (model, seed, item), validated as
    :func:`from_items` validates them.

    The items of every language follow one another along ``item`` (sorted by language, then
    item), so languages with different item sets need no padding; the non-dim coordinates
    ``language``, ``item_id`` (the item's own label) and, with ``cluster``, ``cluster`` say
    which item each position is. An absent (model, language, seed) cell is NaN on its
    language's items.

    Parameters
    ----------
    table, model, item, score, language, seed, cluster, missing
        As in :func:`from_items`.

    Returns
    -------
    xarray.DataArray
        ``item_score`` with dims (model, seed, item).

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "q": ["x", "y"] * 2,
    ...                    "ok": [1, 0, 1, 1]})
    >>> da = eq.item_scores(df, model="model", item="q", score="ok")
    >>> da.dims, da.item_id.values.tolist()
    (('model', 'seed', 'item'), ['x', 'y'])
    >>> da.sel(model="b", seed=0).values.tolist()
    [1.0, 1.0]
    """
    data = pivot_items(table, model=model, item=item, score=score, language=language,
                       seed=seed, cluster=cluster, missing=missing)
    values = np.concatenate([b.values for b in data.blocks], axis=2)
    coords: dict[Hashable, Any] = {
        MODEL: data.models, SEED: data.seeds, ITEM: np.arange(values.shape[2]),
        LANGUAGE: (ITEM, np.concatenate([np.full(len(b.items), b.label, dtype=object)
                                         for b in data.blocks])),
        ITEM_LABEL: (ITEM, np.concatenate([b.items.astype(object) for b in data.blocks])),
    }
    if cluster is not None:
        coords[CLUSTER] = (ITEM, np.concatenate(
            [np.asarray(b.cluster_labels, dtype=object)[b.clusters] for b in data.blocks]))
    out = xr.DataArray(values, dims=(MODEL, SEED, ITEM), coords=coords, name=ITEM_SCORE)
    out.attrs = {"source": data.source, "score_column": score}
    return out

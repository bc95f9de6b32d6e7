"""The evaluation cube: build, validate, save and open.

An evaluation cube is an :class:`xarray.Dataset` with dims ``model``, ``language``, ``seed``
and ``bootstrap`` (names in :mod:`evaluq._dims`):

========== ================================ ===========================================
variable   dims                             meaning
========== ================================ ===========================================
score      model, language, seed            metric on the full test set
boot_score model, language, seed, bootstrap metric on bootstrap replicate b
sd_seed    model, language                  summary-only: seed-to-seed SD
sd_boot    model, language                  summary-only: boot-to-boot SD
n_seeds    model, language                  summary-only: how many seeds the mean is over
========== ================================ ===========================================

Attributes: ``metric``, ``higher_is_better`` (stored as the integer 1 or 0 so that the cube
round-trips through NetCDF, which has no boolean type) and provenance (``loader``,
``source``, ``rng_seed``, ``evaluq_version``). Missing cells are NaN and are never filled.
Coordinates are sorted, so a cube never depends on the order of the input rows.
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq import _atomic, _streaming
from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    LANGUAGE,
    MODEL,
    N_SEEDS,
    SCALE_CHECK,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
    SHARED_BOOTSTRAP,
    SUMMARY_SEED_LABEL,
)
from evaluq._pivot import (  # the pivot helpers (tests import two of them from here)
    DUPLICATE_REMEDY,
    _check_unique_keys,
    _codes,
    _label_coord,
    _numeric_column,
    _pivot,
    _pivot_codes,
    _pivot_reference,
    _replicate_ids,
    _sorted_labels,
)
from evaluq._provenance import provenance
from evaluq._scale import warn_scale
from evaluq._schema import bounds as bounds
from evaluq._schema import higher_is_better as higher_is_better
from evaluq._schema import is_summary as is_summary
from evaluq._schema import orientation as orientation
from evaluq._schema import validate as validate
from evaluq._validation import (
    check_bool,
    check_bounds,
    check_columns,
    check_label_spacing,
    check_orientation,
    warn_aggregate_labels,
)
from evaluq._warn import warn
from evaluq.errors import CubeError, ScaleWarning
from evaluq.io import TableLike, as_table

OUTLIER_THRESHOLD: float = 10.0
"""Default of the loaders' ``outlier_threshold``: robust SDs from the language median."""
MAD_TO_SD: float = 1.482602218505602
MIN_SCORES_FOR_SCALE_CHECK: int = 5
"""Fewer scores than this leave no robust scale to judge by. The check is a warning, and small
tables are where a wrong scale (chrF 4400 among 30s) is easiest to miss, so it starts early;
the price, measured on standard-normal scores at the default 10 robust SDs: 0.1-0.8% of cubes
of 6 scores warn spuriously, 0.07% of 12, none of 3000 cubes of 24 or 48."""
"""1 / Phi^-1(3/4): the median absolute deviation of a normal sample times this is its SD."""



"""Cube attribute: 1 when replicate b of a language is one resampled test set for every model
and seed, 0 when it is not (read by the hierarchical model, ``hierarchical._data``)."""


def _shared_attrs(shared_bootstrap: Any, has_boot: bool) -> dict[str, int]:
    """The ``shared_bootstrap`` attribute for the loaders' keyword (none when None)."""
    if shared_bootstrap is None:
        return {}
    if not isinstance(shared_bootstrap, bool | np.bool_):
        raise TypeError(f"`shared_bootstrap` must be True, False or None; got "
                        f"{shared_bootstrap!r}")
    if not has_boot:
        raise ValueError("`shared_bootstrap` is given but there are no bootstrap replicates "
                         "(no `boot_score` / `bootstrap` column) for it to describe")
    return {SHARED_BOOTSTRAP: int(bool(shared_bootstrap))}


def _check_options(metric: Any, higher_is_better: Any, bounds_: Any,
                   outlier_threshold: Any) -> tuple[tuple[float, float] | None, float | None]:
    """Validate the loaders' shared options; return the bounds and the threshold."""
    if metric is not None and not isinstance(metric, str):
        raise TypeError(f"`metric` must be a string; got {metric!r}")
    check_orientation(higher_is_better)
    out_bounds = check_bounds(bounds_)
    threshold = None
    if outlier_threshold is not None:
        if isinstance(outlier_threshold, bool) or not isinstance(outlier_threshold,
                                                                 numbers.Real):
            raise TypeError(f"`outlier_threshold` must be a positive number or None; got "
                            f"{outlier_threshold!r}")
        threshold = float(outlier_threshold)
        if not (np.isfinite(threshold) and threshold > 0):
            raise ValueError(f"`outlier_threshold` must be a positive finite number or None; "
                             f"got {outlier_threshold!r}")
    return out_bounds, threshold


def _describe(cells: np.ndarray, labels: dict[str, np.ndarray], rows: np.ndarray | None,
              values: np.ndarray) -> str:
    """Up to five offending cells, by table row when there is one."""
    shown = []
    for i, cell in enumerate(cells[:5]):
        where = ", ".join(f"{d}={_plain(labels[d][j])!r}"
                          for d, j in zip(labels, cell, strict=False))
        row = f"row {int(rows[i])}: " if rows is not None else ""
        shown.append(f"{row}{where}, score {values[i]:g}")
    more = f" (and {len(cells) - 5} more)" if len(cells) > 5 else ""
    return "; ".join(shown) + more


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _check_scores(values: np.ndarray, labels: dict[str, np.ndarray],
                  rows: np.ndarray | None, bounds_: tuple[float, float] | None,
                  threshold: float | None, name: str = SCORE) -> None:
    """Declared bounds (an error) and scores far from their language (a warning).

    ``values`` has dims (model, language, seed[, bootstrap]) named by ``labels``; ``rows`` (same
    shape, or None) holds the table row of each cell.
    """
    def rows_of(mask: np.ndarray) -> np.ndarray | None:
        return None if rows is None else rows[mask]

    if bounds_ is not None:
        lo, hi = bounds_
        bad = ~np.isnan(values) & ((values < lo) | (values > hi))
        if bad.any():
            cells = _describe(np.argwhere(bad), labels, rows_of(bad), values[bad])
            raise CubeError(
                f"{int(bad.sum())} value(s) of {name!r} are outside the declared `bounds` "
                f"({lo:g}, {hi:g}): {cells}. Check the metric's scale (0-1 or 0-100?)")
    if threshold is None or name != SCORE:
        return
    _warn_another_scale(values, labels)
    # deviations from each language's median (over models and seeds), judged on the robust
    # SD of all scores: a within-language MAD of 2-3 models is far too noisy to judge by (two
    # nearly tied models would make any third an "outlier")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # a language with no score: NaN
        lang_median = np.nanmedian(np.moveaxis(values, 1, 0).reshape(values.shape[1], -1),
                                   axis=1)
    dev = values - lang_median[None, :, None]
    finite = values[~np.isnan(values)]
    if finite.size < MIN_SCORES_FOR_SCALE_CHECK:
        return
    scale = MAD_TO_SD * float(np.median(np.abs(finite - np.median(finite))))
    if scale == 0.0:
        return
    far = ~np.isnan(dev) & (np.abs(dev) > threshold * scale)
    if far.any():
        warn(
            f"{int(far.sum())} score(s) are more than {threshold:g} robust SDs "
            f"({scale:.3g} = 1.4826 x the median absolute deviation of all scores) from "
            f"their language's median: "
            f"{_describe(np.argwhere(far), labels, rows_of(far), values[far])}. "
            f"A wrong scale or a broken run? Pass `bounds=` to check the range, or "
            f"`outlier_threshold=None` to silence this check",
            ScaleWarning)


def _warn_another_scale(values: np.ndarray, labels: dict[str, np.ndarray]) -> None:
    """A ScaleWarning per model or language set on another scale (:func:`scale_findings`):
    ratios between models, which the robust-SD check below misses when the languages differ
    widely (a whole model in fractions among percentages)."""
    score = xr.DataArray(values, dims=(MODEL, LANGUAGE, *(f"_{i}" for i in range(values.ndim - 2))),
                         coords={MODEL: labels[MODEL], LANGUAGE: labels[LANGUAGE]})
    warn_scale(score, "Pass `outlier_threshold=None` to silence this check")


# --- constructors -------------------------------------------------------------------------------

def from_arrays(
    score: Any,
    boot_score: Any | None = None,
    *,
    models: Sequence[Hashable] | None = None,
    languages: Sequence[Hashable] | None = None,
    seeds: Sequence[Hashable] | None = None,
    metric: str = "score",
    higher_is_better: bool = True,
    bounds: tuple[float, float] | None = None,
    outlier_threshold: float | None = OUTLIER_THRESHOLD,
    shared_bootstrap: bool | None = None,
) -> xr.Dataset:
    """Build a cube from arrays.

    Parameters
    ----------
    score
        Array of shape ``(model, language, seed)``: the metric on each full test set. A
        DataArray is read by its dims' names (in any order; they must be ``model``,
        ``language`` and ``seed``) and its coordinates are the labels.
    boot_score
        Optional array of shape ``(model, language, seed, bootstrap)`` (a DataArray by its
        dims' names). Replicate ``b`` of a language must be the same resampled test set for
        every model and seed.
    models, languages, seeds
        Coordinate labels (default ``0..n-1``); they must be unique. The cube keeps them in the
        order given (the table loaders sort them).
    metric, higher_is_better
        Stored as attributes.
    bounds
        The metric's range ``(lower, upper)``, for example ``(0, 100)`` for BLEU or chrF and
        ``(0, 1)`` for accuracy. A score outside raises :class:`~evaluq.errors.CubeError`; the
        bounds are stored (attribute ``bounds``) and parametric resampling keeps its draws
        inside them.
    outlier_threshold
        Warn (:class:`~evaluq.errors.ScaleWarning`, naming the cells) about scores more than
        this many robust SDs from their language's median, and about a model or a set of
        languages on another scale (fractions among percentages, judged by ratios). None
        switches both checks off and records ``attrs["scale_check"] = 0``, which
        :func:`evaluq.resample` and :func:`evaluq.aggregate` honour (they run the ratio check
        again, for cubes combined after loading). The
        robust SD is 1.4826 times the median absolute deviation of all scores (checked from
        5 scores on; per-language spreads of 2-3 models are too noisy to judge by). On tables
        of 6-12 scores up to 0.8% of well-behaved cubes warn spuriously (see
        ``MIN_SCORES_FOR_SCALE_CHECK``); ``bounds`` is the exact check.
    shared_bootstrap
        Whether replicate ``b`` of a language is one resampled test set for every model and
        seed (as :func:`evaluq.from_predictions` makes them), recorded as the attribute
        ``shared_bootstrap`` (1 / 0); only with ``boot_score``. Default None: not recorded,
        and :func:`evaluq.fit_hierarchical` reads it from the replicates (paired when their
        correlation across models is beyond their noise). False keeps the models' test-set
        errors independent in that model; True pairs them.

    Returns
    -------
    xarray.Dataset
        A validated cube.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> cube = eq.from_arrays(np.array([[[0.8, 0.82]], [[0.7, 0.71]]]),
    ...                       models=["a", "b"], languages=["en"], metric="accuracy")
    >>> cube.score.sizes
    Frozen({'model': 2, 'language': 1, 'seed': 2})
    """
    bounds_, threshold = _check_options(metric, higher_is_better, bounds, outlier_threshold)
    score, given = _by_dim_name("score", score, (MODEL, LANGUAGE, SEED))
    models, languages, seeds = (_labels_of(d, explicit, given) for d, explicit in
                                ((MODEL, models), (LANGUAGE, languages), (SEED, seeds)))
    if boot_score is not None:
        boot_score, _ = _by_dim_name("boot_score", boot_score, (MODEL, LANGUAGE, SEED, BOOTSTRAP))
    score_arr = _numeric_array("score", score)
    if score_arr.ndim != 3:
        raise CubeError(f"`score` must have 3 dims (model, language, seed); got shape "
                        f"{score_arr.shape}")
    n_m, n_l, n_s = score_arr.shape
    coords: dict[str, Any] = {
        MODEL: list(models) if models is not None else np.arange(n_m),
        LANGUAGE: list(languages) if languages is not None else np.arange(n_l),
        SEED: list(seeds) if seeds is not None else np.arange(n_s),
    }
    data_vars: dict[str, Any] = {SCORE: ((MODEL, LANGUAGE, SEED), score_arr)}
    if boot_score is not None:
        boot_arr = _numeric_array("boot_score", boot_score)
        if boot_arr.ndim != 4 or boot_arr.shape[:3] != score_arr.shape:
            raise CubeError(
                f"`boot_score` must have shape (model, language, seed, bootstrap) = "
                f"{(*score_arr.shape, 'B')}; got {boot_arr.shape}"
            )
        data_vars[BOOT_SCORE] = ((MODEL, LANGUAGE, SEED, BOOTSTRAP), boot_arr)
        coords[BOOTSTRAP] = np.arange(boot_arr.shape[3])
    try:
        cube = xr.Dataset(data_vars, coords=coords)
    except ValueError as err:  # wrong number of labels for a dim
        raise CubeError(f"the labels (`models`, `languages`, `seeds`) do not match the "
                        f"array shape: {err}") from None
    cube.attrs = provenance("from_arrays", "arrays", metric=metric,
                             higher_is_better=higher_is_better)
    cube.attrs.update(_shared_attrs(shared_bootstrap, boot_score is not None))
    cube = validate(cube)
    labels = {d: cube[d].values for d in (MODEL, LANGUAGE, SEED)}
    _check_scores(score_arr, labels, None, bounds_, threshold)
    if boot_score is not None:
        _check_scores(boot_arr, {**labels, BOOTSTRAP: cube[BOOTSTRAP].values}, None, bounds_,
                      None, BOOT_SCORE)
    return _with_bounds(cube, bounds_, threshold)


def _by_dim_name(name: str, values: Any, dims: tuple[str, ...]
                 ) -> tuple[Any, dict[str, np.ndarray]]:
    """A DataArray laid out by its dims' names (``dims``, transposed: never read by
    position), with its coordinate labels per dim; any other value unchanged. A DataArray
    whose dims are not the cube's is refused (its labels would be lost)."""
    if not isinstance(values, xr.DataArray):
        return values, {}
    if set(values.dims) != set(dims):
        raise CubeError(f"`{name}` is a DataArray with dims {tuple(map(str, values.dims))}: "
                        f"its dims must be named {dims} (rename them with "
                        f"`.rename(...)`), or pass `.values` with the labels as `models=`, "
                        f"`languages=`, `seeds=`")
    laid_out = values.transpose(*dims)
    return laid_out.values, {d: laid_out[d].values for d in dims if d in laid_out.coords}


def _labels_of(dim: str, explicit: Sequence[Hashable] | None,
               given: Mapping[str, np.ndarray]) -> Sequence[Hashable] | None:
    """The labels of ``dim``: the argument, or the DataArray's coordinate (the two must
    agree when both are given)."""
    if dim not in given:
        return explicit
    if explicit is not None and list(explicit) != given[dim].tolist():
        raise CubeError(f"`{dim}s` {list(explicit)!r} differ from the `score` DataArray's "
                        f"{dim} coordinate {given[dim].tolist()!r}: give one of them")
    return list(given[dim])


def _with_bounds(cube: xr.Dataset, bounds_: tuple[float, float] | None,
                 threshold: float | None) -> xr.Dataset:
    """The loader's last attributes: ``bounds``, and ``scale_check`` 0 when
    ``outlier_threshold=None`` switched the scale check off (:func:`evaluq.resample` and
    :func:`evaluq.aggregate` then skip it too)."""
    cube.attrs.update(_finish_attrs(bounds_, threshold))
    return cube


def _finish_attrs(bounds_: tuple[float, float] | None, threshold: float | None
                  ) -> dict[str, Any]:
    """``bounds`` (when declared) and ``scale_check`` 0 (when ``threshold`` is None)."""
    attrs: dict[str, Any] = {} if threshold is not None else {SCALE_CHECK: 0}
    if bounds_ is not None:
        attrs["bounds"] = np.asarray(bounds_, dtype=np.float64)
    return attrs


def _numeric_array(name: str, values: Any) -> np.ndarray:
    """A float64 copy of a real numeric array; bool, object, complex and strings raise."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be a real numeric array (int or float); got dtype "
                        f"{arr.dtype}" + (" (booleans are not scores)" if arr.dtype == bool
                                          else ""))
    return arr.astype(np.float64)


def from_long(
    data: TableLike,
    *,
    model: str = "model",
    language: str = "language",
    seed: str | None = None,
    bootstrap: str | None = None,
    score: str = "score",
    metric: str | None = None,
    higher_is_better: bool = True,
    bounds: tuple[float, float] | None = None,
    outlier_threshold: float | None = OUTLIER_THRESHOLD,
    out: str | os.PathLike[str] | None = None,
    shared_bootstrap: bool | None = None,
) -> xr.Dataset:
    """Build a cube from a tidy (long) table with one score per row.

    Parameters
    ----------
    data
        A DataFrame (its named index levels read as columns: a ``groupby`` result or
        ``cube.score.to_dataframe()`` as it is), a polars DataFrame or pyarrow Table, a dict
        of columns, a list of row dicts, or a path to a CSV, TSV, JSON lines or parquet file
        (see :func:`evaluq.io.as_table` and :func:`evaluq.io.read_table`). A wide table (one
        column per language) is refused with the ``melt`` that makes it long.
    model, language, seed
        Names of the key columns. The language column may hold languages, tasks or data
        sets. Without ``seed`` the cube has one seed (labelled 0).
    bootstrap
        Optional column with the bootstrap replicate index. Rows where it is empty (NaN)
        hold the score on the full test set (``score``); the other rows fill ``boot_score``.
        Replicate ``b`` of a language must be the same resampled test set for every model and
        seed, so every cell with a score must have every replicate (a cell without, replicate
        ids that differ between models, or replicates without a full-test-set score are
        refused). Whole-number ids read as floats (the empty cells make the column float)
        are stored as integers, in memory and with ``out=`` alike.
    score
        Name of the numeric score column.
    metric
        Metric name stored in the attributes (default: the score column's name).
    higher_is_better
        Orientation of the metric.
    bounds, outlier_threshold
        The metric's declared range (a score outside raises) and the robust-SD distance from
        a language's median beyond which a :class:`~evaluq.errors.ScaleWarning` names the rows
        (None: no check, recorded as ``attrs["scale_check"] = 0``); see :func:`from_arrays`.
    out
        A new zarr store (a directory, e.g. ``"cube.zarr"``) to write the cube to; the cube
        is then returned opened lazily from it (:func:`open_cube`). A parquet file is read
        **one row group at a time** (twice: the labels, then the values), so the table is
        never held whole: the store is filled piece by piece and ``boot_score`` is stored in
        chunks of one model, several languages and all seeds and replicates (about 64 MiB).
        Other inputs are built in memory and then written. On an error the store is removed.
        In the streamed case a duplicated key or an out-of-bounds replicate is reported for
        the first row group where it is found (the counts in the message are that row
        group's).
    shared_bootstrap
        Whether replicate ``b`` of a language is one resampled test set for every model and
        seed, recorded as the attribute ``shared_bootstrap`` (1 / 0); only with
        ``bootstrap``. Default None: not recorded, and :func:`evaluq.fit_hierarchical` reads
        it from the replicates (paired when their correlation across models is beyond their
        noise). See :func:`from_arrays`.

    Returns
    -------
    xarray.Dataset
        The cube, with sorted coordinates: the result does not depend on the row order.
        Absent (model, language, seed) combinations are NaN.

    Raises
    ------
    CubeError
        On a missing column, a duplicated key, a non-numeric score, a key with missing values,
        or (with ``bootstrap``) no full-test-set rows or cells that lack replicates others
        have.

    Warns
    -----
    EvaluqWarning
        When a language label names an aggregate of the others ('Average', 'overall',
        'all', ... beside two or more languages: a paper's average row): read as one more
        language, it would be counted again in every aggregate over the languages. The
        message gives the line that drops its rows.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"system": ["a", "a", "b", "b"], "lang": ["en", "de"] * 2,
    ...                    "bleu": [30.0, 25.0, 28.0, 26.0]})
    >>> cube = eq.from_long(df, model="system", language="lang", score="bleu")
    >>> cube.score.sel(seed=0).to_pandas()
    language    de    en
    model
    a         25.0  30.0
    b         26.0  28.0
    """
    bounds_, threshold = _check_options(metric, higher_is_better, bounds, outlier_threshold)
    shared = _shared_attrs(shared_bootstrap, bootstrap is not None)
    if out is not None:
        stored = _long_to_zarr(data, out, {MODEL: model, LANGUAGE: language, SEED: seed},
                               bootstrap, score, metric, higher_is_better, bounds_, threshold,
                               shared)
        warn_aggregate_labels(stored[LANGUAGE].values, language)
        return stored
    df, source = as_table(data)
    check_columns("the table", df.columns, {"model": model, "language": language,
                                           "seed": seed, "bootstrap": bootstrap, "score": score})
    if len(df) == 0:
        raise CubeError("`data`: the table is empty (no rows)")
    df = df.reset_index(drop=True)
    if seed is None:
        df = df.assign(__seed__=0)
        seed = "__seed__"
    df = _blank_replicates(df, bootstrap)
    keys = {MODEL: model, LANGUAGE: language, SEED: seed}
    # integer codes of the key columns, once; any irregular table (missing or mixed keys,
    # duplicates, a bad score) goes the reference way, which raises the documented error
    pivoted = _pivot_codes(df, keys, bootstrap, score, boot_rows=bounds_ is not None)
    if pivoted is None:
        pivoted = _pivot_reference(df, keys, bootstrap, score)
    coords, score_arr, boot_arr, full_rows, boot_rows = pivoted
    warn_aggregate_labels(coords[LANGUAGE], language)
    data_vars: dict[str, Any] = {SCORE: ((MODEL, LANGUAGE, SEED), score_arr)}
    if boot_arr is not None:
        data_vars[BOOT_SCORE] = ((MODEL, LANGUAGE, SEED, BOOTSTRAP), boot_arr)
    cube = xr.Dataset(data_vars, coords={d: _label_coord(v) for d, v in coords.items()})
    cube.attrs = provenance("from_long", source, metric=metric or score,
                             higher_is_better=higher_is_better) | shared
    cube = validate(cube)
    _check_scores(score_arr, coords, full_rows, bounds_, threshold)
    if boot_arr is not None and bootstrap is not None:
        _check_scores(boot_arr, coords, boot_rows, bounds_, None, BOOT_SCORE)
        _check_replicates(score_arr, boot_arr, coords, bootstrap)
    return _with_bounds(cube, bounds_, threshold)


def _blank_replicates(df: pd.DataFrame, bootstrap: str | None) -> pd.DataFrame:
    """``df`` with the blank text cells of the ``bootstrap`` column missing: ``''`` marks the
    full-test-set rows as an empty cell does (an object column, or pandas' string dtype, the
    default for text from pandas 3 on)."""
    if bootstrap is None or pd.api.types.is_numeric_dtype(df[bootstrap]):
        return df
    blank = df[bootstrap].map(lambda v: isinstance(v, str) and not v.strip()).astype(bool)
    return df.assign(**{bootstrap: df[bootstrap].mask(blank)}) if blank.any() else df


def _ids(values: np.ndarray) -> str:
    """Replicate ids for a message: whole numbers read as floats (the full-test-set rows leave
    the column empty) shown as 3, not 3.0."""
    shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v)
                      for v in map(_plain, values[:6]))
    return shown + (f", ... ({len(values)} in all)" if len(values) > 6 else "")


def _cell_name(cell: tuple[int, ...], coords: dict[str, np.ndarray]) -> str:
    return ", ".join(f"{d}={_plain(coords[d][i])!r}"
                     for d, i in zip((MODEL, LANGUAGE, SEED), cell, strict=True))


def _check_replicates(score: np.ndarray, boot: Any, coords: dict[str, np.ndarray],
                      column: str) -> None:
    """Every (model, language, seed) with a full-test-set score has every bootstrap replicate,
    and every cell with replicates has its full-test-set score: replicate j is drawn on the
    same resampled test set for every model, so a missing or differently numbered replicate
    breaks the pairing (it surfaced later as "NaN (missing cells)", with the wrong remedy).
    ``boot`` is in memory, or a dask array over a zarr store (reduced chunk by chunk)."""
    held = ~np.isnan(boot)
    n_held = np.asarray(held.sum(-1))
    scored = ~np.isnan(score)
    lacking = scored & (n_held < boot.shape[-1])
    where = f"column {column!r} (given as `bootstrap`)"
    if lacking.any():
        cell = tuple(np.argwhere(lacking)[0])
        ids, row = coords[BOOTSTRAP], np.asarray(held[cell])
        by_model = np.asarray(held.any((1, 2))).astype(np.int64)       # (model, replicate)
        shared = by_model @ by_model.T > 0
        apart = [str(_plain(coords[MODEL][m])) for m in range(len(by_model))
                 if by_model[m].any() and not np.delete(shared[m], m).any()]
        raise CubeError(
            f"{where}: {int(lacking.sum())} (model, language, seed) cell(s) lack "
            f"bootstrap replicates that other cells have (no row, or a row with no score), "
            f"for example {_cell_name(cell, coords)} has {int(row.sum())} of "
            f"{len(ids)} (missing: {_ids(ids[~row])}). "
            + (f"The replicate ids of {', '.join(map(repr, apart))} share none with the other "
               f"models': replicate j must be the same resampled test set for every model "
               f"(paired), so number them alike (0, 1, ...) in each cell. "
               if apart and len(by_model) > 1 else "")
            + "Give every cell the same replicates, or drop the replicates some cells lack")
    orphan = ~scored & (n_held > 0)
    if orphan.any():
        cell = tuple(np.argwhere(orphan)[0])
        raise CubeError(
            f"{where}: {int(orphan.sum())} cell(s) have bootstrap replicates but no score on "
            f"the full test set, for example {_cell_name(cell, coords)}: give it in a row "
            f"whose bootstrap value is empty")


def from_summary(
    data: TableLike,
    *,
    model: str = "model",
    language: str = "language",
    mean: str = "mean",
    sd_seed: str | None = "sd_seed",
    sd_boot: str | None = "sd_boot",
    n_seeds: int | str | None = None,
    metric: str | None = None,
    higher_is_better: bool = True,
    bounds: tuple[float, float] | None = None,
    outlier_threshold: float | None = OUTLIER_THRESHOLD,
) -> xr.Dataset:
    """Build a summary-only cube from per-(model, language) means and SDs.

    Use this when the raw replications are not available, only tables of the mean over seeds,
    the seed-to-seed SD and the boot-to-boot SD (as many papers report them).

    Parameters
    ----------
    data
        A table as :func:`from_long` takes it (a DataFrame, polars / pyarrow table, dict
        of columns, list of row dicts) or a path (CSV, TSV, JSON lines, parquet).
    model, language
        Key columns.
    mean
        Column with the mean score over seeds; stored as ``score`` with a single ``seed``
        labelled ``"mean"``.
    sd_seed, sd_boot
        Columns with the seed-to-seed and boot-to-boot standard deviations (``None`` when
        that component is unknown). With one run per mean (``n_seeds=1``) and no
        ``sd_seed``, the parametric replication redraws ``sd_boot`` alone and says that the
        run-to-run noise is not in its intervals; never pass a column of zeros for it.
    n_seeds
        Number of seeds behind each mean: a number, or the name of a column. **Required**: the
        seed part of the noise of a mean is ``sd_seed**2 / n_seeds``, and no default is safe
        (a silent 1 overstates it S-fold, a guess understates it). Give 1 when every mean is
        a single run.
    metric, higher_is_better
        Stored as attributes. ``metric`` defaults to the ``mean`` column's name, or to
        ``"score"`` when that is the default ``"mean"`` (a metric called "mean" would title
        the leaderboard "the mean mean").
    bounds, outlier_threshold
        The metric's declared range (a score outside raises) and the robust-SD distance from
        a language's median beyond which a :class:`~evaluq.errors.ScaleWarning` names the rows
        (None: no check, recorded as ``attrs["scale_check"] = 0``); see :func:`from_arrays`.

    Returns
    -------
    xarray.Dataset
        A cube with ``score`` (model, language, seed=["mean"]) and ``sd_seed``, ``sd_boot``,
        ``n_seeds`` (model, language).

    Warns
    -----
    EvaluqWarning
        When a language label names an aggregate of the others ('Average', 'overall', ...
        beside two or more languages), as :func:`from_long`.

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a", "b"], "language": ["en", "en"],
    ...                    "mean": [30.0, 28.0], "sd_seed": [0.5, 0.4], "sd_boot": [1.1, 1.0]})
    >>> cube = eq.from_summary(df, n_seeds=5, metric="bleu")
    >>> float(cube.sd_boot.sel(model="a", language="en"))
    1.1
    """
    bounds_, threshold = _check_options(metric, higher_is_better, bounds, outlier_threshold)
    if n_seeds is None:
        raise TypeError("`n_seeds` is required: the number of seeds behind each mean (an "
                        "integer, or the name of a column); give 1 if each mean is one run")
    df, source = as_table(data)
    n_seeds_col = n_seeds if isinstance(n_seeds, str) else None
    check_columns("the table", df.columns, {"model": model, "language": language, "mean": mean,
                                           "sd_seed": sd_seed, "sd_boot": sd_boot,
                                           "n_seeds": n_seeds_col})
    if len(df) == 0:
        raise CubeError("`data`: the table is empty (no rows)")
    df = df.reset_index(drop=True)
    keys = {MODEL: model, LANGUAGE: language}
    _check_unique_keys(df, keys)
    coords = {d: _sorted_labels(df[c], c) for d, c in keys.items()}
    warn_aggregate_labels(coords[LANGUAGE], language)
    means = _pivot(df, keys, _numeric_column(df, mean, "mean"), coords)
    data_vars: dict[str, Any] = {SCORE: ((MODEL, LANGUAGE, SEED), means[..., None])}
    for var, col in ((SD_SEED, sd_seed), (SD_BOOT, sd_boot)):
        if col is not None:
            data_vars[var] = ((MODEL, LANGUAGE),
                              _pivot(df, keys, _sd_column(df, col, var), coords))
    counts = _seed_counts(df, n_seeds, n_seeds_col)
    data_vars[N_SEEDS] = ((MODEL, LANGUAGE), _pivot(df, keys, counts, coords))
    cube = xr.Dataset(
        data_vars,
        coords={**{d: _label_coord(v) for d, v in coords.items()},
                SEED: np.asarray([SUMMARY_SEED_LABEL], dtype=object)},
    )
    cube.attrs = provenance("from_summary", source,
                            metric=metric or (SCORE if mean == "mean" else mean),
                            higher_is_better=higher_is_better)
    cube = validate(cube)
    rows = _pivot(df, keys, df.index.to_numpy(dtype=np.float64), coords)
    _check_scores(means[..., None], {**coords, SEED: np.asarray([SUMMARY_SEED_LABEL])},
                  rows[..., None], bounds_, threshold)
    return _with_bounds(cube, bounds_, threshold)


def _sd_column(df: pd.DataFrame, col: str, var: str) -> np.ndarray:
    """A column of standard deviations (``sd_seed`` / ``sd_boot``), checked >= 0."""
    values = _numeric_column(df, col, var)
    if (values < 0).any():
        row = int(np.flatnonzero(values < 0)[0])
        raise CubeError(f"column {col!r} (given as `{var}`) has a negative standard "
                        f"deviation {values[row]:g} in row {row}")
    return values


def _seed_counts(df: pd.DataFrame, n_seeds: Any, n_seeds_col: str | None) -> np.ndarray:
    """The number of seeds behind each row's mean (a column, or one integer for all rows),
    checked whole and >= 1."""
    if n_seeds_col is not None:
        counts = _numeric_column(df, n_seeds_col, "n_seeds")
    else:
        if isinstance(n_seeds, bool) or not isinstance(n_seeds, int | np.integer):
            raise TypeError(f"`n_seeds` must be an integer or a column name; got {n_seeds!r}")
        counts = np.full(len(df), float(n_seeds))
    wrong = (counts < 1) | (counts != np.round(counts))
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        where = (f"column {n_seeds_col!r} (given as `n_seeds`) has {counts[row]:g} in row "
                 f"{row}" if n_seeds_col is not None else f"got {counts[row]:g}")
        raise CubeError(f"`n_seeds` must be a whole number >= 1 (the seeds behind a mean); "
                        f"{where}")
    return counts


# --- storage ------------------------------------------------------------------------------------

def open_cube(path: str | os.PathLike[str]) -> xr.Dataset:
    """Open a cube saved with ``cube.to_netcdf(path)`` or ``cube.to_zarr(path)`` and validate it.

    A NetCDF file is loaded into memory and closed, so the file can be overwritten. A zarr
    store (a directory, e.g. ``cube.zarr``) is opened **lazily**: ``boot_score`` stays a dask
    array chunked as stored, its structure is checked now and its values (no infinities)
    chunk by chunk when an analysis reads them; the small variables (``score``, summary SDs)
    are loaded. :func:`evaluq.variance_components`, :func:`evaluq.resample` and
    :func:`evaluq.aggregate` then stream it (see the cluster guide). A store evaluq wrote
    (``from_long(..., out=)``, ``from_items(..., out=)``) is checked against its manifest
    (a missing or resized chunk file raises ``CubeError`` naming it), and every chunk read
    checks that the store was not replaced since it was opened (docs/reliability.md); an
    interrupted write (a ``.partial`` store) is refused.

    Parameters
    ----------
    path : str or os.PathLike
        A NetCDF file written by ``cube.to_netcdf``; a missing file raises
        ``FileNotFoundError``.

    Returns
    -------
    xarray.Dataset
        The cube, checked by :func:`validate`.

    Examples
    --------
    >>> import numpy as np, tempfile, os, evaluq as eq
    >>> cube = eq.from_arrays(np.ones((1, 2, 3)), metric="acc")
    >>> path = os.path.join(tempfile.mkdtemp(), "cube.nc")
    >>> cube.to_netcdf(path)
    >>> eq.open_cube(path).identical(cube)
    True
    >>> store = os.path.join(tempfile.mkdtemp(), "cube.zarr")
    >>> _ = eq.simulate_cube(n_boot=50, rng=0).chunk({"model": 1}).to_zarr(
    ...     store, consolidated=False)
    >>> lazy = eq.open_cube(store)
    >>> lazy.boot_score.chunks[0], type(lazy.score.data).__name__
    ((1, 1, 1), 'ndarray')
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"`path` must be a str or a path; got {type(path).__name__}")
    if not os.path.exists(path):
        raise FileNotFoundError(f"`path`: no such file: {str(path)!r}")
    if os.path.isdir(path):
        _atomic.check_complete(path, "zarr cube store")
        generation = _atomic.check_manifest(path, "zarr cube store")
        return _streaming.prepare(_streaming.open_zarr(path, generation))
    return validate(_open_file(path))


def _open_file(path: str | os.PathLike[str]) -> xr.Dataset:
    """A NetCDF file loaded into memory; a file that is not one (or is truncated or
    corrupted) raises ``CubeError`` naming it."""
    try:
        with xr.open_dataset(path) as ds:
            return ds.load()
    except (ValueError, OSError, RuntimeError, KeyError, IndexError, TypeError) as err:
        raise CubeError(f"`path` {str(path)!r} cannot be read as a cube: it is not a NetCDF "
                        f"file or a zarr store (a directory), or it is truncated or corrupted "
                        f"({type(err).__name__}: {str(err)[:200]})") from err


# --- long table to zarr, piece by piece -----------------------------------------------------------

_ZARR_CHUNK_BYTES = 2**26
"""Target size of one stored ``boot_score`` chunk (64 MiB)."""


def _zarr_chunks(sizes: tuple[int, ...]) -> dict[str, int]:
    """One model, as many languages as fit in about 64 MiB, all seeds and replicates."""
    n_l, n_s, n_b = sizes[1], sizes[2], sizes[3] if len(sizes) > 3 else 1
    per_language = max(1, n_s * n_b * 8)
    return {MODEL: 1, LANGUAGE: max(1, min(n_l, _ZARR_CHUNK_BYTES // per_language)),
            SEED: n_s, BOOTSTRAP: n_b}


def save_cube(cube: xr.Dataset, path: str | os.PathLike[str], *, overwrite: bool = False
              ) -> None:
    """Write a cube to a NetCDF file or a zarr store, atomically, with checksums.

    ``cube.to_netcdf(path)`` over the file a cube was opened from can destroy it half-way
    (xarray writes in place); :func:`save_cube` writes beside ``path`` and renames when
    complete, so a killed write leaves the old file whole (docs/reliability.md). A NetCDF
    file (any path not ending in ``.zarr``) gets an HDF5 Fletcher-32 checksum per variable; a
    zarr store (a path ending in ``.zarr``) a checksum per chunk and the manifest that
    :func:`open_cube` checks (a missing chunk is then refused, naming it). Read either back
    with :func:`open_cube`.

    Parameters
    ----------
    cube
        The cube, checked by :func:`validate` first (nothing is written for a bad one).
    path : str or os.PathLike
        The file (``.nc``) or the store (``.zarr``) to write.
    overwrite
        Replace an existing ``path``; default False (an existing file or store raises
        ``FileExistsError``). A NetCDF file is replaced atomically; an existing zarr store
        is moved aside, the new one renamed in, then the old one removed.

    Examples
    --------
    >>> import os, tempfile, evaluq as eq
    >>> path = os.path.join(tempfile.mkdtemp(), "cube.nc")
    >>> eq.save_cube(eq.simulate_cube(n_models=2, rng=0), path)
    >>> eq.open_cube(path).sizes["model"]
    2
    """
    cube = validate(cube)
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"`path` must be a str or a path; got {type(path).__name__}")
    check_bool("overwrite", overwrite)
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"`path` already exists: {str(path)!r}; pass overwrite=True to "
                              "replace it (atomically)")
    if str(path).rstrip("/").lower().endswith(".zarr"):
        _save_zarr(cube, path)
        return
    with _atomic.atomic_file(path) as tmp:
        cube.to_netcdf(tmp, encoding=_atomic.netcdf_checksums(cube))


def _save_zarr(cube: xr.Dataset, path: str | os.PathLike[str]) -> None:
    """A zarr store through ``_atomic.atomic_dir`` (an existing one moved aside first)."""
    import shutil

    target = os.fspath(path).rstrip("/")
    old = f"{target}.replaced.partial" if os.path.exists(target) else None
    staged = f"{target}.new.partial"
    with _atomic.atomic_dir(staged) as tmp:
        cube.to_zarr(tmp, consolidated=False, encoding=_checksummed(cube))
        _atomic.write_manifest(tmp)
    if old is not None:
        os.replace(target, old)
    os.replace(staged, target)
    if old is not None:
        shutil.rmtree(old)


def _long_to_zarr(data: TableLike, out: str | os.PathLike[str], keys: dict[str, str | None],
                  bootstrap: str | None, score: str, metric: str | None,
                  higher_is_better: bool, bounds_: tuple[float, float] | None,
                  threshold: float | None, shared: dict[str, int] | None = None
                  ) -> xr.Dataset:
    """``from_long(..., out=store)``: write the cube to a new zarr store and open it lazily.
    The store is written beside ``out`` and renamed to it when complete (``_atomic``)."""
    if not isinstance(out, str | os.PathLike):
        raise TypeError(f"`out` must be a str or a path (a zarr store); got {type(out).__name__}")
    if os.path.exists(out):
        raise FileExistsError(f"`out` already exists: {str(out)!r}; remove it or name a new "
                              "zarr store")
    with _atomic.atomic_dir(out) as tmp:     # a killed write leaves no store at `out`
        if isinstance(data, str | os.PathLike) and str(data).lower().endswith((".parquet",
                                                                               ".pq")):
            _parquet_to_zarr(str(data), str(tmp), keys, bootstrap, score, metric,
                             higher_is_better, bounds_, threshold, shared or {})
        else:
            cube = from_long(data, model=str(keys[MODEL]), language=str(keys[LANGUAGE]),
                             seed=keys[SEED], bootstrap=bootstrap, score=score, metric=metric,
                             higher_is_better=higher_is_better, bounds=bounds_,
                             outlier_threshold=threshold,
                             shared_bootstrap=(None if not shared else
                                               bool(shared[SHARED_BOOTSTRAP])))
            sizes = tuple(cube[BOOT_SCORE].shape) if BOOT_SCORE in cube else ()
            chunks = _zarr_chunks(sizes) if sizes else {}
            cube.chunk({d: c for d, c in chunks.items() if d in cube.dims}).to_zarr(
                tmp, consolidated=False, encoding=_checksummed(cube))
        _atomic.write_manifest(tmp)          # last: what the store holds, and its generation
    return open_cube(out)


def _checksummed(ds: xr.Dataset) -> dict[str, dict[str, Any]]:
    """zarr encoding with a checksum in every chunk (``_atomic.zarr_checksums``)."""
    return _atomic.zarr_checksums(ds)


def _damaged_parquet(path: str, err: Exception) -> CubeError:
    return CubeError(f"cannot read {path!r} as a parquet table (truncated or corrupted?): "
                     f"{type(err).__name__}: {str(err)[:300]}")


def _parquet_file(path: str) -> Any:
    """A parquet file opened with page-checksum verification; a damaged one names itself."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path, page_checksum_verification=True)
    except (ValueError, OSError) as err:                 # ArrowInvalid is a ValueError
        raise _damaged_parquet(path, err) from err


def _row_groups(path: str, columns: list[str], seed_column: str | None,
                bootstrap: str | None = None) -> Any:
    """The row groups of a parquet file as DataFrames indexed by their table rows (the blank
    text cells of ``bootstrap`` missing, as :func:`from_long` reads them)."""
    file = _parquet_file(path)
    start = 0
    for i in range(file.num_row_groups):
        try:
            piece = file.read_row_group(i, columns=columns).to_pandas()
        except (ValueError, OSError) as err:             # ArrowInvalid is a ValueError
            raise _damaged_parquet(path, err) from err
        piece.index = pd.RangeIndex(start, start + len(piece))
        start += len(piece)
        if seed_column is None:
            piece["__seed__"] = 0
        yield _blank_replicates(piece, bootstrap)


def _piece_codes(series: pd.Series, column: str, index: pd.Index | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Codes and sorted labels of a key column of one row group (positions in ``index``,
    the table's labels, when given); missing values and mixed types raise as in from_long."""
    coded = _codes(series)
    if coded is None:
        labels = _sorted_labels(series, column)  # raises the missing / mixed-type error
        assert len(series) == 0
        return np.zeros(0, dtype=np.intp), labels
    codes, labels = coded
    check_label_spacing(labels, column)
    if index is not None:
        codes = index.get_indexer(pd.Index(labels))[codes]
    return codes, labels


def _parquet_to_zarr(path: str, out: str | os.PathLike[str], keys: dict[str, str | None],
                     bootstrap: str | None, score: str, metric: str | None,
                     higher_is_better: bool, bounds_: tuple[float, float] | None,
                     threshold: float | None, shared: dict[str, int] | None = None) -> None:
    """``from_long`` of a parquet file into a zarr store, in two passes over its row groups
    (the labels, then the values), holding one row group and the ``score`` array at a time."""
    import shutil

    meta = _parquet_file(path)
    seed_column = keys[SEED]
    check_columns("the table", meta.schema_arrow.names,
                  {"model": keys[MODEL], "language": keys[LANGUAGE], "seed": seed_column,
                   "bootstrap": bootstrap, "score": score})
    if meta.metadata.num_rows == 0:
        raise CubeError("`data`: the table is empty (no rows)")
    cols = {dim: str(col) if col is not None else "__seed__" for dim, col in keys.items()}
    read = [c for c in (keys[MODEL], keys[LANGUAGE], seed_column, bootstrap) if c is not None]
    coords = _parquet_labels(path, read, seed_column, cols, bootstrap)    # pass 1
    attrs = provenance("from_long", path, metric=metric or score,
                       higher_is_better=higher_is_better) | (shared or {})
    attrs |= _finish_attrs(bounds_, threshold)
    fill = _ParquetFill.create(out, cols, bootstrap, coords, bounds_, attrs)
    try:
        for piece in _row_groups(path, [*read, score], seed_column, bootstrap):  # pass 2
            fill.add(piece, _numeric_column(piece, score, "score"))
    finally:
        if fill.scratch is not None:
            shutil.rmtree(fill.scratch, ignore_errors=True)
    if np.isnan(fill.full_rows).all():
        raise CubeError(
            f"column {bootstrap!r} (given as `bootstrap`) has no empty rows: give the score "
            "on the full test set of each (model, language, seed) in a row whose "
            "bootstrap value is empty")
    fill.write_score(out)
    _check_scores(fill.score, coords, fill.full_rows, bounds_, threshold)
    if bootstrap is not None and fill.boot_z is not None:
        import dask.array

        _check_replicates(fill.score, dask.array.from_zarr(fill.boot_z), coords, bootstrap)


def _parquet_labels(path: str, read: list[str], seed_column: str | None,
                    cols: dict[str, str], bootstrap: str | None) -> dict[str, np.ndarray]:
    """Pass 1 over a parquet file: the sorted labels of every key column (``bootstrap``'s
    from its non-empty rows)."""
    parts: dict[str, list[np.ndarray]] = {dim: [] for dim in (*cols, BOOTSTRAP)}
    for piece in _row_groups(path, read, seed_column, bootstrap):
        for dim, col in cols.items():
            parts[dim].append(_piece_codes(piece[col], col)[1])
        if bootstrap is not None:
            replicates = piece[bootstrap][piece[bootstrap].notna()]
            if len(replicates):
                parts[BOOTSTRAP].append(_piece_codes(replicates, bootstrap)[1])
    coords = {dim: _sorted_labels(pd.Series(np.concatenate(parts[dim])), col)
              for dim, col in cols.items()}
    if bootstrap is not None:
        coords[BOOTSTRAP] = (_replicate_ids(_sorted_labels(
            pd.Series(np.concatenate(parts[BOOTSTRAP])), bootstrap)) if parts[BOOTSTRAP]
                             else np.asarray([], dtype=np.float64))
    return coords


@dataclass
class _ParquetFill:
    """Pass 2 over a parquet file: ``score`` filled in memory (with the table row of each
    cell, for duplicates and messages), ``boot_score`` written to the zarr store chunk by
    chunk (with a scratch array ``seen`` marking the cells written)."""

    cols: dict[str, str]
    bootstrap: str | None
    coords: dict[str, np.ndarray]
    bounds: tuple[float, float] | None
    score: np.ndarray
    full_rows: np.ndarray
    index: dict[str, pd.Index]
    boot_z: Any = None
    seen: Any = None
    scratch: str | None = None

    @classmethod
    def create(cls, out: str | os.PathLike[str], cols: dict[str, str], bootstrap: str | None,
               coords: dict[str, np.ndarray], bounds_: tuple[float, float] | None,
               attrs: dict[str, Any]) -> _ParquetFill:
        """Write the store's layout (``score`` empty, ``boot_score`` all NaN) and open it."""
        import tempfile

        import dask.array as da
        import zarr

        shape = tuple(len(coords[d]) for d in cols)
        fill = cls(cols, bootstrap, coords, bounds_, np.full(shape, np.nan),
                   np.full(shape, np.nan),
                   {dim: pd.Index(labels) for dim, labels in coords.items()})
        template = xr.Dataset({SCORE: ((MODEL, LANGUAGE, SEED), fill.score)},
                              coords={d: _label_coord(v) for d, v in coords.items()},
                              attrs=attrs)
        if bootstrap is None:
            template.to_zarr(out, consolidated=False, encoding=_checksummed(template))
            return fill
        shape4 = (*shape, len(coords[BOOTSTRAP]))
        chunks = _zarr_chunks(shape4)
        chunk_tuple = tuple(chunks[d] for d in (MODEL, LANGUAGE, SEED, BOOTSTRAP))
        template[BOOT_SCORE] = ((MODEL, LANGUAGE, SEED, BOOTSTRAP),
                                da.full(shape4, np.nan, chunks=chunk_tuple))
        template.to_zarr(out, compute=False, consolidated=False,
                         encoding=_checksummed(template))
        fill.boot_z = zarr.open_array(os.path.join(out, BOOT_SCORE), mode="r+")
        fill.scratch = tempfile.mkdtemp(prefix=".seen-",
                                        dir=os.path.dirname(os.path.abspath(out)))
        fill.seen = zarr.create_array(fill.scratch, shape=shape4, chunks=chunk_tuple,
                                      dtype="u1", fill_value=0)
        return fill

    def add(self, piece: pd.DataFrame, values: np.ndarray) -> None:
        """One row group: its full-test-set scores, then its replicates."""
        codes = [_piece_codes(piece[col], col, self.index[dim])[0]
                 for dim, col in self.cols.items()]
        is_boot = (piece[self.bootstrap].notna().to_numpy() if self.bootstrap is not None
                   else np.zeros(len(piece), dtype=bool))
        full = ~is_boot
        flat = np.ravel_multi_index(tuple(c[full] for c in codes), self.score.shape)
        if _repeats(flat) or (~np.isnan(self.full_rows.flat[flat])).any():
            _duplicate(piece.loc[full], self.cols, self.bootstrap, flat,
                       self.full_rows.flat[flat])
        self.score.flat[flat] = values[full]
        self.full_rows.flat[flat] = piece.index.to_numpy()[full]
        if self.bootstrap is not None and is_boot.any():
            self._add_replicates(piece, values, codes, is_boot)

    def _add_replicates(self, piece: pd.DataFrame, values: np.ndarray,
                        codes: list[np.ndarray], is_boot: np.ndarray) -> None:
        """The replicates of one row group, scattered into ``boot_score`` chunk by chunk."""
        assert self.bootstrap is not None
        assert self.boot_z is not None
        assert self.seen is not None
        b_codes = _piece_codes(piece[self.bootstrap][is_boot], self.bootstrap,
                               self.index[BOOTSTRAP])[0]
        where = (*(c[is_boot] for c in codes), b_codes)
        vals = values[is_boot]
        rows = piece.index.to_numpy()[is_boot]
        _check_replicate_bounds(vals, where, rows, self.coords, self.bounds)
        flat4 = np.ravel_multi_index(where, self.boot_z.shape)
        before = _scatter(self.boot_z, self.seen, where, vals) if not _repeats(flat4) else None
        if before is None or before.any():
            _duplicate(piece.loc[is_boot], self.cols, self.bootstrap, flat4,
                       np.full(len(flat4), np.nan) if before is None
                       else np.where(before, 0.0, np.nan))

    def write_score(self, out: str | os.PathLike[str]) -> None:
        """The filled ``score`` into the store."""
        import zarr

        zarr.open_array(os.path.join(out, SCORE), mode="r+")[...] = self.score


def _scatter(store: Any, seen: Any, where: tuple[np.ndarray, ...], values: np.ndarray
             ) -> np.ndarray:
    """Write ``values`` at the cells ``where`` of a zarr array, one stored chunk at a time
    (read, fill, write back), marking them in ``seen``; return, per value, whether its cell
    was already written (a duplicated key: nothing of that chunk is written then)."""
    chunks = store.chunks
    chunk_of = np.ravel_multi_index(tuple(w // c for w, c in zip(where, chunks, strict=True)),
                                    tuple(-(-n // c) for n, c in zip(store.shape, chunks,
                                                                     strict=True)))
    order = np.argsort(chunk_of, kind="stable")
    bounds = np.flatnonzero(np.diff(chunk_of[order])) + 1
    before = np.zeros(len(values), dtype=bool)
    for group in np.split(order, bounds):
        corner = tuple(int(w[group[0]]) // c * c for w, c in zip(where, chunks, strict=True))
        region = tuple(slice(lo, min(lo + c, n))
                       for lo, c, n in zip(corner, chunks, store.shape, strict=True))
        local = tuple(w[group] - lo for w, lo in zip(where, corner, strict=True))
        marks = np.asarray(seen[region])
        before[group] = marks[local] > 0
        if before[group].any():
            return before
        block = np.asarray(store[region])
        block[local] = values[group]
        marks[local] = 1
        store[region] = block
        seen[region] = marks
    return before


def _repeats(flat: np.ndarray) -> bool:
    ordered = np.sort(flat)                  # (a sort: np.unique hashes, 10x slower here)
    return bool((ordered[1:] == ordered[:-1]).any())


def _duplicate(piece: pd.DataFrame, cols: dict[str, str], bootstrap: str | None,
               flat: np.ndarray, earlier: np.ndarray) -> None:
    """Raise for the first row of ``piece`` whose key occurred before (in this row group or
    an earlier one)."""
    _, first_seen = np.unique(flat, return_index=True)
    repeated = np.ones(len(flat), dtype=bool)
    repeated[first_seen] = False
    repeated |= ~np.isnan(earlier)
    row = int(np.flatnonzero(repeated)[0])
    names = [*cols.values(), *([bootstrap] if bootstrap is not None else [])]
    key = {k: v for k, v in piece.iloc[row][names].to_dict().items() if k != "__seed__"}
    if bootstrap is not None and pd.isna(key[bootstrap]):
        key[bootstrap] = -np.inf
    raise CubeError(f"a key appears more than once in the table; first duplicated key found "
                    f"(row {int(piece.index[row])}): {key}. Each combination of the key "
                    f"columns must occur once{DUPLICATE_REMEDY}")


def _check_replicate_bounds(values: np.ndarray, where: tuple[np.ndarray, ...], rows: np.ndarray,
                            coords: dict[str, np.ndarray],
                            bounds_: tuple[float, float] | None) -> None:
    if bounds_ is None:
        return
    lo, hi = bounds_
    bad = ~np.isnan(values) & ((values < lo) | (values > hi))
    if bad.any():
        cells = _describe(np.stack(where, axis=1)[bad], coords, rows[bad], values[bad])
        raise CubeError(
            f"{int(bad.sum())} value(s) of {BOOT_SCORE!r} are outside the declared `bounds` "
            f"({lo:g}, {hi:g}): {cells}. Check the metric's scale (0-1 or 0-100?)")

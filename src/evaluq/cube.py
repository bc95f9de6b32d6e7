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

import os
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import (
    BOOT_SCORE,
    BOOTSTRAP,
    LANGUAGE,
    MODEL,
    N_SEEDS,
    SCORE,
    SD_BOOT,
    SD_SEED,
    SEED,
    SUMMARY_SEED_LABEL,
)
from evaluq._provenance import provenance
from evaluq._validation import check_columns
from evaluq.errors import CubeError
from evaluq.io import TableLike, as_table

_ALLOWED_DIMS: dict[str, tuple[str, ...]] = {
    SCORE: (MODEL, LANGUAGE, SEED),
    BOOT_SCORE: (MODEL, LANGUAGE, SEED, BOOTSTRAP),
    SD_SEED: (MODEL, LANGUAGE),
    SD_BOOT: (MODEL, LANGUAGE),
    N_SEEDS: (MODEL, LANGUAGE),
}


def higher_is_better(cube: xr.Dataset | xr.DataArray) -> bool:
    """Read the cube's ``higher_is_better`` attribute (default True when absent)."""
    value = cube.attrs.get("higher_is_better", 1)
    return bool(int(value))


def is_summary(cube: xr.Dataset) -> bool:
    """True for a summary-only cube (``sd_seed`` / ``sd_boot`` instead of raw replicates)."""
    return SD_SEED in cube.data_vars or SD_BOOT in cube.data_vars


# --- labels and pivoting ------------------------------------------------------------------------

def _sorted_labels(values: pd.Series, column: str) -> np.ndarray:
    """Sorted unique labels of a key column; a column of mixed types is an error."""
    if values.isna().any():
        rows = values.index[values.isna()].tolist()[:5]
        raise CubeError(f"key column {column!r} has missing values (rows {rows})")
    unique = pd.unique(values.to_numpy())
    try:
        return np.asarray(sorted(unique.tolist()), dtype=object if unique.dtype == object
                          else unique.dtype)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in unique})
        raise CubeError(
            f"key column {column!r} mixes value types ({', '.join(kinds)}); "
            "make them all strings or all numbers"
        ) from None


def _label_coord(labels: np.ndarray) -> np.ndarray:
    # strings as a plain object array of str (NetCDF stores them as variable-length strings)
    if labels.dtype == object and all(isinstance(v, str) for v in labels):
        return labels.astype(str).astype(object)
    return labels


def _numeric_column(df: pd.DataFrame, column: str, argument: str) -> np.ndarray:
    series = df[column]
    if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
        bad = series[pd.to_numeric(series, errors="coerce").isna() & series.notna()]
        example = f" (for example {bad.iloc[0]!r} in row {bad.index[0]})" if len(bad) else ""
        raise CubeError(
            f"column {column!r} (given as `{argument}`) must be numeric; "
            f"it has dtype {series.dtype}{example}"
        )
    values = series.to_numpy(dtype=np.float64)
    if np.isinf(values).any():
        row = series.index[np.isinf(values)][0]
        raise CubeError(f"column {column!r} (given as `{argument}`) has an infinite value "
                        f"in row {row}")
    return values


def _check_unique_keys(df: pd.DataFrame, keys: dict[str, str]) -> None:
    cols = list(keys.values())
    dup = df.duplicated(subset=cols, keep=False)
    if dup.any():
        first = df.loc[dup, cols].iloc[0].to_dict()
        n = int(df.loc[dup, cols].drop_duplicates().shape[0])
        raise CubeError(
            f"{n} key(s) appear more than once in the table; first duplicated key: {first}. "
            "Each combination of the key columns must occur once"
        )


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
) -> xr.Dataset:
    """Build a cube from arrays.

    Parameters
    ----------
    score
        Array of shape ``(model, language, seed)``: the metric on each full test set.
    boot_score
        Optional array of shape ``(model, language, seed, bootstrap)``. Replicate ``b`` of a
        language must be the same resampled test set for every model and seed.
    models, languages, seeds
        Coordinate labels (default ``0..n-1``); they must be unique. The cube keeps them in the
        order given (the table loaders sort them).
    metric, higher_is_better
        Stored as attributes.

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
    score_arr = np.asarray(score, dtype=np.float64)
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
        boot_arr = np.asarray(boot_score, dtype=np.float64)
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
        raise CubeError(f"coordinate labels do not match the array shape: {err}") from None
    cube.attrs = provenance("from_arrays", "arrays", metric=metric,
                             higher_is_better=higher_is_better)
    return validate(cube)


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
) -> xr.Dataset:
    """Build a cube from a tidy (long) table with one score per row.

    Parameters
    ----------
    data
        A DataFrame, or a path to a CSV, TSV, JSON lines or parquet file
        (see :func:`evaluq.io.read_table`).
    model, language, seed
        Names of the key columns. The language column may hold languages, tasks or data
        sets. Without ``seed`` the cube has one seed (labelled 0).
    bootstrap
        Optional column with the bootstrap replicate index. Rows where it is empty (NaN)
        hold the score on the full test set (``score``); the other rows fill ``boot_score``.
        Replicate ``b`` of a language must be the same resampled test set for every model and
        seed.
    score
        Name of the numeric score column.
    metric
        Metric name stored in the attributes (default: the score column's name).
    higher_is_better
        Orientation of the metric.

    Returns
    -------
    xarray.Dataset
        The cube, with sorted coordinates: the result does not depend on the row order.
        Absent (model, language, seed) combinations are NaN.

    Raises
    ------
    CubeError
        On a missing column, a duplicated key, a non-numeric score, a key with missing values,
        or (with ``bootstrap``) no full-test-set rows.

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
    df, source = as_table(data)
    check_columns("the table", df.columns, {"model": model, "language": language,
                                           "seed": seed, "bootstrap": bootstrap, "score": score})
    if len(df) == 0:
        raise CubeError("the table is empty")
    df = df.reset_index(drop=True)
    if seed is None:
        df = df.assign(__seed__=0)
        seed = "__seed__"
    keys = {MODEL: model, LANGUAGE: language, SEED: seed}
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
    coords = {d: _sorted_labels(df[c], c) for d, c in keys.items()}
    data_vars: dict[str, Any] = {
        SCORE: ((MODEL, LANGUAGE, SEED),
                _pivot(full, keys, values[full.index.to_numpy()], coords)),
    }
    if bootstrap is not None:
        coords[BOOTSTRAP] = _sorted_labels(boot[bootstrap], bootstrap)
        data_vars[BOOT_SCORE] = (
            (MODEL, LANGUAGE, SEED, BOOTSTRAP),
            _pivot(boot, {**keys, BOOTSTRAP: bootstrap}, values[boot.index.to_numpy()], coords),
        )
    cube = xr.Dataset(data_vars, coords={d: _label_coord(v) for d, v in coords.items()})
    cube.attrs = provenance("from_long", source, metric=metric or score,
                             higher_is_better=higher_is_better)
    return validate(cube)


def from_summary(
    data: TableLike,
    *,
    model: str = "model",
    language: str = "language",
    mean: str = "mean",
    sd_seed: str | None = "sd_seed",
    sd_boot: str | None = "sd_boot",
    n_seeds: int | str = 1,
    metric: str | None = None,
    higher_is_better: bool = True,
) -> xr.Dataset:
    """Build a summary-only cube from per-(model, language) means and SDs.

    Use this when the raw replications are not available, only tables of the mean over seeds,
    the seed-to-seed SD and the boot-to-boot SD (as many papers report them).

    Parameters
    ----------
    data
        A DataFrame or a path (CSV, TSV, JSON lines, parquet).
    model, language
        Key columns.
    mean
        Column with the mean score over seeds; stored as ``score`` with a single ``seed``
        labelled ``"mean"``.
    sd_seed, sd_boot
        Columns with the seed-to-seed and boot-to-boot standard deviations (``None`` when
        that component is unknown).
    n_seeds
        Number of seeds behind each mean: a number, or the name of a column.
    metric, higher_is_better
        Stored as attributes.

    Returns
    -------
    xarray.Dataset
        A cube with ``score`` (model, language, seed=["mean"]) and ``sd_seed``, ``sd_boot``,
        ``n_seeds`` (model, language).

    Examples
    --------
    >>> import pandas as pd, evaluq as eq
    >>> df = pd.DataFrame({"model": ["a", "b"], "language": ["en", "en"],
    ...                    "mean": [30.0, 28.0], "sd_seed": [0.5, 0.4], "sd_boot": [1.1, 1.0]})
    >>> cube = eq.from_summary(df, n_seeds=5, metric="bleu")
    >>> float(cube.sd_boot.sel(model="a", language="en"))
    1.1
    """
    df, source = as_table(data)
    n_seeds_col = n_seeds if isinstance(n_seeds, str) else None
    check_columns("the table", df.columns, {"model": model, "language": language, "mean": mean,
                                           "sd_seed": sd_seed, "sd_boot": sd_boot,
                                           "n_seeds": n_seeds_col})
    if len(df) == 0:
        raise CubeError("the table is empty")
    df = df.reset_index(drop=True)
    keys = {MODEL: model, LANGUAGE: language}
    _check_unique_keys(df, keys)
    coords = {d: _sorted_labels(df[c], c) for d, c in keys.items()}
    means = _pivot(df, keys, _numeric_column(df, mean, "mean"), coords)
    data_vars: dict[str, Any] = {SCORE: ((MODEL, LANGUAGE, SEED), means[..., None])}
    for var, col in ((SD_SEED, sd_seed), (SD_BOOT, sd_boot)):
        if col is None:
            continue
        values = _numeric_column(df, col, var)
        if (values < 0).any():
            row = int(np.flatnonzero(values < 0)[0])
            raise CubeError(f"column {col!r} (given as `{var}`) has a negative standard "
                            f"deviation {values[row]:g} in row {row}")
        data_vars[var] = ((MODEL, LANGUAGE), _pivot(df, keys, values, coords))
    if n_seeds_col is not None:
        counts = _numeric_column(df, n_seeds_col, "n_seeds")
    else:
        if isinstance(n_seeds, bool) or not isinstance(n_seeds, int | np.integer):
            raise TypeError(f"`n_seeds` must be an integer or a column name; got {n_seeds!r}")
        counts = np.full(len(df), float(n_seeds))
    if (counts < 1).any() or (counts != np.round(counts)).any():
        bad = counts[(counts < 1) | (counts != np.round(counts))][0]
        raise CubeError(f"`n_seeds` must be a whole number >= 1; got {bad:g}")
    data_vars[N_SEEDS] = ((MODEL, LANGUAGE), _pivot(df, keys, counts, coords))
    cube = xr.Dataset(
        data_vars,
        coords={**{d: _label_coord(v) for d, v in coords.items()},
                SEED: np.asarray([SUMMARY_SEED_LABEL], dtype=object)},
    )
    cube.attrs = provenance("from_summary", source, metric=metric or mean,
                             higher_is_better=higher_is_better)
    return validate(cube)


# --- validation ---------------------------------------------------------------------------------

def validate(cube: Any) -> xr.Dataset:
    """Check that ``cube`` is a well-formed evaluation cube.

    Checks: it is a Dataset with a numeric ``score``; every variable has exactly its allowed
    dims (no unknown dim); coordinates are unique; scores are finite or NaN (no infinities);
    ``score`` has at least one value; ``boot_score`` has at least two replicates; summary SDs
    are non-negative and ``n_seeds`` are whole numbers >= 1; the attributes ``metric`` and
    ``higher_is_better`` are present.

    Returns
    -------
    xarray.Dataset
        The same cube, with each variable's dims in the canonical order.

    Raises
    ------
    CubeError
        Naming the variable, dim, coordinate or attribute that is wrong.

    Examples
    --------
    >>> import numpy as np, xarray as xr, evaluq as eq
    >>> bad = xr.Dataset({"score": (("model", "task"), np.zeros((2, 3)))})
    >>> eq.validate(bad)
    Traceback (most recent call last):
    ...
    evaluq.errors.CubeError: variable 'score' has unknown dim(s) ['task']; its dims ...
    """
    if not isinstance(cube, xr.Dataset):
        raise CubeError(f"a cube must be an xarray.Dataset; got {type(cube).__name__}")
    if SCORE not in cube.data_vars:
        raise CubeError(f"the cube has no {SCORE!r} variable; its variables are "
                        f"{sorted(map(str, cube.data_vars))}")
    for name, var in cube.data_vars.items():
        allowed = _ALLOWED_DIMS.get(str(name))
        if allowed is None:
            continue  # extra variables are the user's business
        unknown = [d for d in var.dims if d not in allowed]
        if unknown:
            raise CubeError(f"variable {name!r} has unknown dim(s) {unknown}; its dims must be "
                            f"{allowed}")
        if set(var.dims) != set(allowed):
            raise CubeError(f"variable {name!r} has dims {var.dims}; they must be {allowed}")
        if not np.issubdtype(var.dtype, np.number) or var.dtype == bool:
            raise CubeError(f"variable {name!r} must be numeric; it has dtype {var.dtype}")
        # ``.data`` keeps dask arrays lazy: the check is a chunked reduction, not a load
        if bool(np.isinf(var.data).any()):
            raise CubeError(f"variable {name!r} has infinite values")
    for dim in cube.dims:
        if dim in cube.coords:
            index = cube.indexes.get(dim)
            if index is not None and not index.is_unique:
                dup = index[index.duplicated()].tolist()[:5]
                raise CubeError(f"coordinate {dim!r} has duplicated labels {dup}")
    if cube[SCORE].size == 0:
        raise CubeError(f"variable {SCORE!r} is empty (a dim has length 0)")
    if bool(np.isnan(cube[SCORE].data).all()):
        raise CubeError(f"variable {SCORE!r} has no values (all NaN)")
    if BOOT_SCORE in cube.data_vars and cube.sizes[BOOTSTRAP] < 2:
        raise CubeError(f"variable {BOOT_SCORE!r} needs at least 2 bootstrap replicates; got "
                        f"{cube.sizes[BOOTSTRAP]}")
    for sd_name in (SD_SEED, SD_BOOT):
        if sd_name in cube.data_vars and bool((cube[sd_name].data < 0).any()):
            raise CubeError(f"variable {sd_name!r} has negative standard deviations")
    if N_SEEDS in cube.data_vars:
        n = cube[N_SEEDS].values
        n = n[~np.isnan(n)]
        if (n < 1).any() or (n != np.round(n)).any():
            raise CubeError(f"variable {N_SEEDS!r} must hold whole numbers >= 1")
    if is_summary(cube) and cube.sizes[SEED] != 1:
        raise CubeError(f"a summary-only cube (with {SD_SEED!r} / {SD_BOOT!r}) must have one "
                        f"seed holding the seed mean; got {cube.sizes[SEED]} seeds")
    for attr in ("metric", "higher_is_better"):
        if attr not in cube.attrs:
            raise CubeError(f"the cube has no {attr!r} attribute")
    if str(cube.attrs["higher_is_better"]) not in {"0", "1", "True", "False"}:
        raise CubeError(f"attribute 'higher_is_better' must be 1 or 0; got "
                        f"{cube.attrs['higher_is_better']!r}")
    out = cube.copy()
    for name in out.data_vars:
        if str(name) in _ALLOWED_DIMS:
            out[name] = out[name].transpose(*_ALLOWED_DIMS[str(name)])
    return out


# --- storage ------------------------------------------------------------------------------------

def open_cube(path: str | os.PathLike[str]) -> xr.Dataset:
    """Open a cube saved with ``cube.to_netcdf(path)`` and validate it.

    The data are loaded into memory and the file is closed, so the file can be overwritten.

    Examples
    --------
    >>> import numpy as np, tempfile, os, evaluq as eq
    >>> cube = eq.from_arrays(np.ones((1, 2, 3)), metric="acc")
    >>> path = os.path.join(tempfile.mkdtemp(), "cube.nc")
    >>> cube.to_netcdf(path)
    >>> eq.open_cube(path).identical(cube)
    True
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {str(path)!r}")
    with xr.open_dataset(path) as ds:
        cube = ds.load()
    return validate(cube)

"""The cube's schema: what a well-formed evaluation cube is, and how its attributes read.

A leaf module (it imports no other analysis module): :mod:`evaluq.cube` re-exports
:func:`validate`, :func:`is_summary`, :func:`higher_is_better` and :func:`bounds`, and
:mod:`evaluq._streaming` validates lazily opened cubes with the same :func:`validate`.

**Orientation.** The attribute ``higher_is_better`` is written as the integer 1 or 0 (NetCDF has
no boolean type) and read by :func:`orientation`, the one parser every consumer uses: it accepts
``True`` / ``False`` (Python or numpy booleans), the integers 1 / 0 and the strings ``"true"`` /
``"false"`` / ``"1"`` / ``"0"`` (any case, surrounding blanks ignored), and raises
:class:`~evaluq.errors.CubeError` naming the attribute and the value for anything else.

>>> orientation({"higher_is_better": "False"}), orientation({"higher_is_better": 1})
(False, True)
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any, Final

import numpy as np
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
)
from evaluq.errors import CubeError

HIGHER_IS_BETTER: Final = "higher_is_better"
"""The attribute holding a cube's (or a result's) orientation."""

_TRUE: Final = frozenset({"true", "1"})
_FALSE: Final = frozenset({"false", "0"})

_ALLOWED_DIMS: dict[str, tuple[str, ...]] = {
    SCORE: (MODEL, LANGUAGE, SEED),
    BOOT_SCORE: (MODEL, LANGUAGE, SEED, BOOTSTRAP),
    SD_SEED: (MODEL, LANGUAGE),
    SD_BOOT: (MODEL, LANGUAGE),
    N_SEEDS: (MODEL, LANGUAGE),
}

def parse_orientation(value: Any, *, name: str = HIGHER_IS_BETTER) -> bool:
    """One stored orientation value as a bool (see the module's rule); CubeError otherwise."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(int(value))
    if isinstance(value, str | np.str_):
        token = str(value).strip().lower()
        if token in _TRUE | _FALSE:
            return token in _TRUE
    raise CubeError(f"`cube`: attribute {name!r} must be 1 or 0 (or True / False, or the strings "
                    f"'true' / 'false' / '1' / '0' in any case); got {value!r}")


def orientation(attrs: Mapping[Any, Any]) -> bool:
    """Whether larger is better according to ``attrs`` (True when ``higher_is_better`` is
    absent); the one parser of the attribute, used by every consumer.

    Raises
    ------
    CubeError
        For a value other than True/False, 1/0 or ``"true"``/``"false"``/``"1"``/``"0"``
        (any case), naming the attribute and the value.

    Examples
    --------
    >>> orientation({"higher_is_better": np.int64(0)}), orientation({"higher_is_better": "TRUE"})
    (False, True)
    >>> orientation({"higher_is_better": "yes"})
    Traceback (most recent call last):
    ...
    evaluq.errors.CubeError: `cube`: attribute 'higher_is_better' must be 1 or 0 (or True ...
    """
    return parse_orientation(attrs.get(HIGHER_IS_BETTER, 1))


def higher_is_better(cube: xr.Dataset | xr.DataArray) -> bool:
    """Read the cube's ``higher_is_better`` attribute (default True when absent).

    Parameters
    ----------
    cube : xarray.Dataset or xarray.DataArray
        An evaluation cube, or any object whose ``attrs`` may hold ``higher_is_better``
        (1 / 0, True / False, or those as strings in any case). Another value raises
        ``CubeError``.

    Returns
    -------
    bool
        True when a larger score is better (also when the attribute is absent).

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> eq.higher_is_better(eq.from_arrays(np.ones((1, 2, 3))))
    True
    >>> eq.higher_is_better(eq.from_arrays(np.ones((1, 2, 3)), higher_is_better=False))
    False
    """
    if not isinstance(cube, xr.Dataset | xr.DataArray):
        raise TypeError(f"`cube` must be an xarray Dataset or DataArray; got "
                        f"{type(cube).__name__}")
    return orientation(cube.attrs)


def is_summary(cube: xr.Dataset) -> bool:
    """True for a summary-only cube (``sd_seed`` / ``sd_boot`` instead of raw replicates).

    Parameters
    ----------
    cube : xarray.Dataset
        An evaluation cube. It is summary-only when it holds an ``sd_seed`` or ``sd_boot``
        variable (as made by :func:`evaluq.from_summary`).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> eq.is_summary(eq.from_arrays(np.ones((1, 2, 3))))
    False
    """
    if not isinstance(cube, xr.Dataset):
        raise TypeError(f"`cube` must be an xarray.Dataset; got {type(cube).__name__}")
    return SD_SEED in cube.data_vars or SD_BOOT in cube.data_vars


def one_run_per_cell(cube: xr.Dataset) -> bool:
    """True for a summary-only cube without ``sd_seed`` whose every observed mean is one run
    (``n_seeds`` 1): its run-to-run noise is not measured, not zero."""
    if not is_summary(cube) or SD_SEED in cube or N_SEEDS not in cube:
        return False
    counts = cube[N_SEEDS].values
    observed = counts[~np.isnan(counts)]
    return bool(observed.size) and bool((observed == 1).all())


def bounds(cube: xr.Dataset) -> tuple[float, float] | None:
    """The declared range ``(lower, upper)`` of the cube's metric, or None when undeclared.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> bounds(eq.from_arrays(np.full((1, 1, 2), 0.5), bounds=(0, 1)))
    (0.0, 1.0)
    """
    value = cube.attrs.get("bounds")
    if value is None:
        return None
    lo, hi = np.asarray(value, dtype=np.float64).ravel()
    return float(lo), float(hi)


# --- validation ---------------------------------------------------------------------------------

def build_a_cube_hint(given: Any, step: str = "") -> str:
    """What to do when a table, a path or a cube is given where a cube (or a later result:
    ``step``, e.g. ``"eq.aggregate(eq.resample(cube))"``) is expected; "" for anything else.

    Examples
    --------
    >>> import pandas as pd
    >>> from evaluq._schema import build_a_cube_hint
    >>> build_a_cube_hint(pd.DataFrame()).startswith(": build the cube from the table first")
    True
    >>> build_a_cube_hint("runs.csv").startswith(": read the file into a cube first")
    True
    """
    import os

    import pandas as pd

    if isinstance(given, pd.DataFrame):
        return (": build the cube from the table first: eq.from_long(table, model=..., "
                "language=..., seed=..., score=...) (one row per run), or eq.from_items (one "
                "row per model and item)" + (f", then {step}" if step else ""))
    if isinstance(given, str | os.PathLike):
        return (": read the file into a cube first: eq.from_long(path, model=..., "
                "language=..., seed=..., score=...)" + (f", then {step}" if step else ""))
    if step and isinstance(given, xr.Dataset) and SCORE in given.data_vars:
        return f" (a cube): {step}"
    return ""


def _check_variables(cube: xr.Dataset) -> None:
    """Each known variable's dims (with the remedy for a dim a one-label selection dropped),
    numeric dtype and finiteness."""
    for name, var in cube.data_vars.items():
        allowed = _ALLOWED_DIMS.get(str(name))
        if allowed is None:
            continue  # extra variables are the user's business
        unknown = [d for d in var.dims if d not in allowed]
        if unknown:
            raise CubeError(f"`cube`: variable {name!r} has unknown dim(s) {unknown}; its "
                            f"dims must be {allowed}")
        if set(var.dims) != set(allowed):
            lost = [d for d in allowed if d not in var.dims]
            kept = (f" (a selection of one label drops its dim: select with a list to keep "
                    f"it, e.g. `cube.sel({lost[0]}=[...])` or `cube.isel({lost[0]}=[0])`)"
                    if lost and str(lost[0]) in cube.coords else "")
            raise CubeError(f"`cube`: variable {name!r} has dims {var.dims}; they must be "
                            f"{allowed}{kept}")
        if not np.issubdtype(var.dtype, np.number) or var.dtype == bool:
            raise CubeError(f"`cube`: variable {name!r} must be numeric; it has dtype {var.dtype}")
        # ``.data`` keeps dask arrays lazy: the check is a chunked reduction, not a load
        if bool(np.isinf(var.data).any()):
            raise CubeError(f"`cube`: variable {name!r} has infinite values")


def validate(cube: Any) -> xr.Dataset:
    """Check that ``cube`` is a well-formed evaluation cube.

    Checks: it is a Dataset with a numeric ``score``; every variable has exactly its allowed
    dims (no unknown dim); coordinates are unique; scores are finite or NaN (no infinities);
    ``score`` has at least one value; ``boot_score`` has at least two replicates; summary SDs
    are non-negative and ``n_seeds`` are whole numbers >= 1; the attributes ``metric`` and
    ``higher_is_better`` are present.

    Parameters
    ----------
    cube : xarray.Dataset
        The cube to check: ``score`` over (model, language, seed), optional ``boot_score``
        over (model, language, seed, bootstrap), or the summary variables ``sd_seed``,
        ``sd_boot``, ``n_seeds`` over (model, language). Variables with other names are left
        alone. Anything but a Dataset raises ``CubeError``.

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
    evaluq.errors.CubeError: `cube`: variable 'score' has unknown dim(s) ['task']; its dims ...
    """
    if not isinstance(cube, xr.Dataset):
        raise CubeError(f"`cube`: a cube must be an xarray.Dataset; got {type(cube).__name__}"
                        f"{build_a_cube_hint(cube)}")
    if SCORE not in cube.data_vars:
        raise CubeError(f"`cube`: the cube has no {SCORE!r} variable; its variables are "
                        f"{sorted(map(str, cube.data_vars))}")
    _check_variables(cube)
    for dim in cube.dims:
        if dim in cube.coords:
            index = cube.indexes.get(dim)
            if index is not None and not index.is_unique:
                dup = index[index.duplicated()].tolist()[:5]
                raise CubeError(f"`cube`: coordinate {dim!r} has duplicated labels {dup}")
    if cube[SCORE].size == 0:
        raise CubeError(f"`cube`: variable {SCORE!r} is empty (a dim has length 0)")
    if bool(np.isnan(cube[SCORE].data).all()):
        raise CubeError(f"`cube`: variable {SCORE!r} has no values (all NaN)")
    if BOOT_SCORE in cube.data_vars and cube.sizes[BOOTSTRAP] < 2:
        raise CubeError(f"`cube`: variable {BOOT_SCORE!r} needs at least 2 bootstrap "
                        f"replicates; got {cube.sizes[BOOTSTRAP]}")
    for sd_name in (SD_SEED, SD_BOOT):
        if sd_name in cube.data_vars and bool((cube[sd_name].data < 0).any()):
            raise CubeError(f"`cube`: variable {sd_name!r} has negative standard deviations")
    if N_SEEDS in cube.data_vars:
        n = cube[N_SEEDS].values
        n = n[~np.isnan(n)]
        if (n < 1).any() or (n != np.round(n)).any():
            raise CubeError(f"`cube`: variable {N_SEEDS!r} must hold whole numbers >= 1")
    if is_summary(cube) and cube.sizes[SEED] != 1:
        raise CubeError(f"`cube`: a summary-only cube (with {SD_SEED!r} / {SD_BOOT!r}) must "
                        f"have one seed holding the seed mean; got {cube.sizes[SEED]} seeds")
    for attr in ("metric", "higher_is_better"):
        if attr not in cube.attrs:
            example = "'accuracy'" if attr == "metric" else "True"
            raise CubeError(f"`cube`: the cube has no {attr!r} attribute: set it "
                            f"(`cube.attrs[{attr!r}] = {example}`), or build the cube with "
                            f"eq.from_arrays / eq.from_long, which record it")
    orientation(cube.attrs)  # the one rule: every consumer reads the value the same way
    out = cube.copy()
    for name in out.data_vars:
        if str(name) in _ALLOWED_DIMS:
            out[name] = out[name].transpose(*_ALLOWED_DIMS[str(name)])
    return out

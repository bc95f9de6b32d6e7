"""Shared input validators.

Every public entry point has one validation function built from these (the pattern of scipy's
``_bootstrap_iv``). Messages name the argument and the offending value.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from evaluq.errors import CubeError

RNGLike = int | np.random.Generator | np.random.SeedSequence | None


def check_rng(rng: RNGLike, name: str = "rng") -> np.random.Generator:
    """Return a Generator from ``rng`` (int, SeedSequence, Generator or None)."""
    if isinstance(rng, bool) or not (
        rng is None
        or isinstance(rng, numbers.Integral | np.random.Generator | np.random.SeedSequence)
    ):
        raise TypeError(
            f"`{name}` must be an int, a numpy Generator, a SeedSequence or None; "
            f"got {type(rng).__name__}"
        )
    if isinstance(rng, numbers.Integral) and int(rng) < 0:
        raise ValueError(f"`{name}` must be a non-negative integer seed; got {rng}")
    return np.random.default_rng(rng)


def check_choice(name: str, value: Any, options: Sequence[Any]) -> Any:
    """Check that ``value`` is one of ``options``."""
    if value not in options:
        shown = ", ".join(repr(o) for o in options)
        raise ValueError(f"`{name}` must be one of {shown}; got {value!r}")
    return value


def check_int(name: str, value: Any, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """Check that ``value`` is an integer within [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer; got {value!r}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}; got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"`{name}` must be <= {maximum}; got {value}")
    return value


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """Check that ``value`` is a finite real number in the given range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number; got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"`{name}` must be finite; got {value}")
    lo_ok = low is None or (value >= low if low_inclusive else value > low)
    hi_ok = high is None or (value <= high if high_inclusive else value < high)
    if not (lo_ok and hi_ok):
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ValueError(f"`{name}` must be in {left}{lo}, {hi}{right}; got {value:g}")
    return value


def check_confidence_level(value: Any, name: str = "confidence_level") -> float:
    """Check a confidence level in the open interval (0, 1)."""
    return check_real(name, value, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)


def check_no_nan(name: str, values: np.ndarray) -> np.ndarray:
    """Raise if a numeric array holds NaN (nothing is silently dropped)."""
    if values.dtype.kind in "fc" and np.isnan(values).any():
        n = int(np.isnan(values).sum())
        raise ValueError(f"`{name}` contains {n} NaN value(s); remove or impute them explicitly")
    return values


def check_finite(name: str, values: np.ndarray) -> np.ndarray:
    """Raise if a numeric array holds NaN or infinity."""
    check_no_nan(name, values)
    if values.dtype.kind in "fc" and not np.isfinite(values).all():
        raise ValueError(f"`{name}` contains infinite values")
    return values


def check_nonempty(name: str, values: np.ndarray | Sequence[Any]) -> None:
    """Raise if ``values`` has no elements."""
    if len(values) == 0 if not isinstance(values, np.ndarray) else values.size == 0:
        raise ValueError(f"`{name}` is empty")


def check_columns(name: str, available: Iterable[str], required: dict[str, str | None]) -> None:
    """Check that every column named in ``required`` (argument -> column) exists in a table."""
    cols = set(available)
    for arg, column in required.items():
        if column is not None and column not in cols:
            shown = ", ".join(sorted(map(str, cols)))
            raise CubeError(
                f"column {column!r} (given as `{arg}`) is not in {name}; its columns are: {shown}"
            )


def check_result_dims(name: str, result: Any, required: Sequence[str], producer: str) -> None:
    """Check that ``result`` (a Dataset / DataArray made by ``producer``) still has the dims
    ``required``: a result whose dims were renamed is refused naming the missing dim, the
    dims it has, and the rename that restores it (when one unknown dim is left)."""
    dims = [str(d) for d in getattr(result, "dims", ())]
    missing = [d for d in required if d not in dims]
    if not missing:
        return
    unknown = [d for d in dims if d not in required]
    hint = (f"; rename it back: {name}.rename({unknown[0]}={missing[0]!r})"
            if len(missing) == 1 and len(unknown) == 1 else "")
    raise CubeError(f"`{name}` has no {missing[0]!r} dim (its dims: {dims}); the result of "
                    f"{producer} keeps the dims it was given ({list(required)}){hint}")

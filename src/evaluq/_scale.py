"""Scores on another scale: languages or models whose scores are fractions among percentages (or
a sum among means, a broken run), judged by ratios, which a robust SD of all scores misses when
the languages differ widely (a whole model at 0.35-0.85 among models at 35-85).

The loaders warn with these sentences (:class:`~evaluq.errors.ScaleWarning`), so do
:func:`evaluq.resample` and :func:`evaluq.aggregate` (a cube combined by hand after loading,
``xr.concat`` of a cube in fractions and one in percentages, is seen there:
:func:`warn_scale`), and the report prints them in its data summary."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import xarray as xr

from evaluq._dims import LANGUAGE, MODEL, SCALE_CHECK
from evaluq._warn import warn
from evaluq.errors import ScaleWarning

SCALE_FACTOR: Final = 20.0
"""A model whose scores are this many times the other models' (or 1/this), language by
language, looks like another scale (a 0-100 metric among 0-1 ones gives about 100)."""
SCALE_SHARE: Final = 0.75
"""...in at least this share of its languages, all in the same direction."""
MIXED_FACTOR: Final = 10.0
"""A model above 1.5 where every other model stays within [-1, 1] is on another scale when its
scores are also at least this many times the others' (a percentage among fractions is about
100 times; 2 against 1 is two fractions' sum, or a model twice as good on an unbounded
metric)."""


def scale_findings(score: xr.DataArray) -> list[str]:
    """One sentence per language set or model that looks like another scale.

    Languages: max |score| <= 1 in some languages and above 1.5, and over 10 times as large,
    in others. Models: a model's |score| is >= ``SCALE_FACTOR`` times (or <= 1/``SCALE_FACTOR``
    times) the median of the other models' in at least ``SCALE_SHARE`` of its languages, or
    its scores exceed 1.5 where every other model's stay within [-1, 1] and are at least
    ``MIXED_FACTOR`` (10) times theirs. Medians over seeds
    (and replicates); a language where a median is 0 is not judged. Scores with a negative
    value (a signed metric: differences, log-ratios, centred scores) are not judged: their
    ratios near 0 mean nothing, and fractions and percentages are not negative.

    Parameters
    ----------
    score
        Scores with dims ``model`` and ``language`` (and any others, e.g. seed).

    Returns
    -------
    list of str
        One sentence per finding (empty when none).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> score = xr.DataArray([[70.0, 80.0], [0.7, 0.82], [75.0, 81.0]],
    ...                      dims=("model", "language"),
    ...                      coords={"model": ["a", "b", "c"], "language": ["x", "y"]})
    >>> print(scale_findings(score)[0])  # doctest: +ELLIPSIS
    model b looks like another scale: its scores are a median 0.00992 times the other ...
    """
    out: list[str] = []
    if bool((score < 0).any()):      # a signed metric (a difference, a log-ratio): no ratios
        return out
    top = abs(score).max([d for d in score.dims if d != LANGUAGE]).to_series().dropna()
    small = top[top <= 1.0]
    large = top[top > 1.5]
    if len(small) and len(large) and large.min() > 10 * max(float(small.max()), 1e-12):
        out.append(f"the languages look like different scales: max |score| <= 1 in "
                   f"{', '.join(map(str, small.index[:5]))} but > 1.5 in "
                   f"{', '.join(map(str, large.index[:5]))} (fractions and percentages mixed?)")
    return out + _models_on_another_scale(score)


ANALYSIS_REMEDY: Final = (f"Set `attrs[{SCALE_CHECK!r}] = 0` on the cube (or on its "
                           f"resamples) to silence this check once the scores are checked")
"""The remedy :func:`evaluq.resample` and :func:`evaluq.aggregate` name (one text, so that
Python's default filter shows the warning once per line of the user's)."""


def scale_check_off(attrs: Mapping[Any, Any]) -> bool:
    """Whether ``attrs`` switch the scale check off (``attrs["scale_check"]`` 0 / False /
    "0" / "false" / "off"; absent: on)."""
    value = attrs.get(SCALE_CHECK, 1)
    if isinstance(value, str):
        return value.strip().lower() in ("0", "false", "off", "no")
    return np.ndim(value) == 0 and not bool(value)


def warn_scale(score: xr.DataArray, remedy: str, attrs: Mapping[Any, Any] | None = None
               ) -> None:
    """A :class:`~evaluq.errors.ScaleWarning` per finding of :func:`scale_findings`, each
    followed by ``remedy``; nothing when ``attrs`` switch the check off
    (:func:`scale_check_off`) or ``score`` lacks a ``model`` or ``language`` dim. Run once
    per call of an analysis (it reads every score once), never per resample.

    Examples
    --------
    >>> import warnings, xarray as xr
    >>> score = xr.DataArray([[0.7, 0.8], [70.0, 82.0], [0.75, 0.81], [0.72, 0.79]],
    ...                      dims=("model", "language"),
    ...                      coords={"model": ["a", "b", "c", "d"], "language": ["x", "y"]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_scale(score, "Check it.")
    ...     warn_scale(score, "Check it.", {"scale_check": 0})     # switched off
    >>> [(w.category.__name__, str(w.message)[:33]) for w in caught]
    [('ScaleWarning', 'model b looks like another scale:')]
    """
    if (attrs is not None and scale_check_off(attrs)) or not {MODEL, LANGUAGE} <= set(
            score.dims):
        return
    for finding in scale_findings(score.compute()):
        warn(f"{finding}. {remedy}", ScaleWarning)


def _models_on_another_scale(score: xr.DataArray) -> list[str]:
    """The models' part of :func:`scale_findings`."""
    if score.sizes.get(MODEL, 1) < 2:
        return []
    cell = abs(score).median([d for d in score.dims if d not in (MODEL, LANGUAGE)]).transpose(
        MODEL, LANGUAGE).values
    top = abs(score).max([d for d in score.dims if d != MODEL]).values
    out = []
    for m, name in enumerate(score[MODEL].values):
        others = np.delete(cell, m, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            ref = np.nanmedian(np.where(np.isnan(others).all(0), 0.0, others), axis=0)
            ratio = cell[m] / ref
        judged = np.isfinite(ratio) & (ratio > 0)
        if not judged.any():
            continue
        high = (ratio[judged] >= SCALE_FACTOR).mean()
        low = (ratio[judged] <= 1 / SCALE_FACTOR).mean()
        other_top = np.nanmax(np.delete(top, m))
        factor = float(np.nanmedian(ratio[judged]))
        mixed = top[m] > 1.5 and other_top <= 1.0 and factor >= MIXED_FACTOR
        if max(high, low) >= SCALE_SHARE or mixed:
            out.append(f"model {name!s} looks like another scale: its scores are a median "
                       f"{factor:.3g} times the other models' in its languages (max |score| "
                       f"{top[m]:.4g} against {other_top:.4g}); fractions and percentages "
                       f"mixed, or a broken run? Check it before reading its rank")
    return out

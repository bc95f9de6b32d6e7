"""Run the bad-input corpus (issue 10): every public function, malformed inputs.

Each case raises a ValueError / TypeError subclass whose message names the argument, or
returns finite numbers (a NaN only where a ``nan_reason`` attribute explains it). A public
function without a case fails :func:`test_every_public_name_has_a_case`.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq

from .corpus import CASES as CUBE_CASES
from .corpus import FINITE
from .corpus_field import field_cases
from .corpus_issue35 import issue35_cases
from .corpus_items import item_cases
from .corpus_judged_ratings import judged_ratings_cases
from .corpus_judges import judges_cases
from .corpus_orientation import orientation_cases
from .corpus_ratings import ratings_cases
from .corpus_reporting import reporting_cases
from .corpus_rliable import field_cases as rliable_cases
from .corpus_small import small_sample_cases
from .corpus_surface import surface_cases

CASES = [*CUBE_CASES, *reporting_cases(), *field_cases(), *small_sample_cases(),
         *rliable_cases(), *item_cases(), *orientation_cases(), *issue35_cases(),
         *ratings_cases(), *judges_cases(), *judged_ratings_cases(), *surface_cases()]


def _surface_module() -> Any:
    """``tests/test_public_surface.py`` (not a package: loaded by its path), the one
    enumeration of the public API."""
    path = Path(__file__).resolve().parents[1] / "test_public_surface.py"
    spec = importlib.util.spec_from_file_location("_evaluq_public_surface", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SURFACE = _surface_module()
public_surface, resolve = _SURFACE.public_surface, _SURFACE._resolve
PENDING: set[str] = set()   # public names whose corpus entries are still to come: none


def public_names(*, once: bool = True) -> list[str]:
    """Every public function and class (exceptions and warnings are not called): the whole
    public surface ``tests/test_public_surface.py`` enumerates (``evaluq.__all__``, every public
    module and sub-package, their ``__all__`` and their module-level public functions and
    classes, ``evaluq.demo``, ``evaluq.item_model``, ``evaluq.item_stats``, ...). With ``once``,
    an object re-exported under several names is listed under its first name only."""
    names, seen = [], set()
    for name, obj in public_surface().items():
        if inspect.isclass(obj) and issubclass(obj, BaseException | Warning):
            continue
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and (id(obj) not in seen
                                                                   or not once):
            seen.add(id(obj))                # a re-export is the same object: one set of cases
            names.append(name)
    return names


def test_every_public_name_has_a_case():
    covered = {id(resolve(case.name)) for case in CASES}      # any of an object's names
    missing = sorted(name for name in public_names()
                     if id(resolve(name)) not in covered and name not in PENDING)
    assert not missing, f"public names without a bad-input corpus entry: {missing}"


def test_corpus_names_are_public():
    unknown = sorted({case.name for case in CASES} - set(public_names(once=False)))
    assert not unknown, f"corpus entries for names that are not public: {unknown}"


def unexplained_nan(result: Any) -> list[str]:
    """Names of the parts of ``result`` holding a NaN (or inf) that no attribute explains."""
    bad: list[str] = []
    if isinstance(result, xr.Dataset):
        for name, var in result.data_vars.items():
            if var.dtype.kind in "fc" and not np.isfinite(var.values).all() \
                    and "nan_reason" not in var.attrs:
                bad.append(str(name))
    elif isinstance(result, xr.DataArray):
        if result.dtype.kind in "fc" and not np.isfinite(result.values).all() \
                and "nan_reason" not in result.attrs:
            bad.append(str(result.name))
    elif isinstance(result, pd.DataFrame):
        numeric = result.select_dtypes("number")
        reasons = result.attrs.get("nan_reasons", {})
        bad += [str(c) for c in numeric if not np.isfinite(numeric[c]).all()
                and c not in reasons]
    elif isinstance(result, float | int | np.number | np.ndarray) \
            and not np.isfinite(np.asarray(result, dtype=np.float64)).all():
        bad.append("value")
    return bad


@pytest.mark.parametrize("case", [
    pytest.param(case, id=f"{case.name}:{case.label}",
                 marks=[pytest.mark.xfail(strict=True, reason=case.xfail, run=not case.hangs)]
                 if case.xfail else [])
    for case in CASES])
def test_case(case):
    if case.match == FINITE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", eq.metrics.UndefinedMetricWarning)
            result = case.call()
        assert not unexplained_nan(result), f"unexplained NaN in {unexplained_nan(result)}"
        return
    with pytest.raises(case.errors) as info:
        case.call()
    assert re.search(case.match, str(info.value)), (
        f"{type(info.value).__name__}: {info.value}  (expected a message matching "
        f"{case.match!r})")

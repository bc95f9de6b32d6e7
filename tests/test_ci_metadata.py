"""Every public result with a ``ci_bound`` dim carries the same interval metadata (issue 23):
the keys of ``_intervals.CI_METADATA_KEYS`` (``ci_kind``, a token of ``CI_KINDS``, and
``confidence_level``) on the interval and on its ``ci_bound`` coordinate, built in one place.

The results are discovered, not listed (issue 31, item 3): the example of every public name
(``tests/test_docstrings.py`` requires one) is run, and every interval among the objects it
leaves behind is checked: a DataArray with a ``ci_bound`` dim, such variables of a Dataset,
and a result object's ``confidence_interval()`` / ``interval`` / ``to_dataset()``. A new
public function returning an interval is checked through its example. ``VARIANTS`` adds
options the examples do not show (another kind or level).
"""

from __future__ import annotations

import doctest
import inspect
import os
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq import measurement_error as me
from evaluq._dims import CI_BOUND
from evaluq._intervals import CI_KIND, CI_KINDS, CI_METADATA_KEYS, CONFIDENCE_LEVEL
from evaluq._results import ResultBase

from .test_docstrings import _public_objects


def _cube() -> xr.Dataset:
    return eq.simulate_cube(n_models=3, n_languages=3, n_seeds=2, n_boot=5, rng=0)


def _aggregate() -> xr.Dataset:
    return eq.aggregate(eq.resample(_cube(), n_resamples=30, rng=0), confidence_level=0.9)


RATINGS = np.array([[0, 1, 1, 2, 2, 0, 1, 2, 1, 0], [0, 1, 2, 2, 2, 0, 1, 2, 0, 0]]).T
Y = np.array([0, 1, 1, 0, 1, 0, 1, 1, 0, 1] * 4)

VARIANTS: dict[str, Callable[[], xr.DataArray]] = {
    "aggregate": lambda: _aggregate()["ci"],
    "pairwise_differences": lambda: eq.pairwise_differences(_aggregate())["ci"],
    "pairwise_by_language": lambda: eq.pairwise_by_language(
        eq.resample(_cube(), n_resamples=30, rng=0))["ci"],
    "t_interval": lambda: eq.intervals.t_interval([76.85, 81.99, 80.1]).interval,
    "arf_interval": lambda: eq.intervals.arf_interval(85.2, 96.3, k=1.8).interval,
    "arf_interval(level)": lambda: eq.intervals.arf_interval(
        85.2, 96.3, k=1.8).confidence_interval(0.8),
    "cohen_kappa": lambda: eq.agreement.cohen_kappa(
        RATINGS[:, 0], RATINGS[:, 1], n_resamples=50, rng=0).interval,
    "krippendorff_alpha": lambda: eq.agreement.krippendorff_alpha(
        RATINGS.T, n_resamples=50, rng=0).interval,
    "icc": lambda: eq.agreement.icc(RATINGS, n_resamples=50, rng=0).interval,
    "bootstrap_test": lambda: eq.bootstrap_test(Y, Y, 1 - Y, n_resamples=50, rng=0).interval,
    "bootstrap_test(percentile)": lambda: eq.bootstrap_test(
        Y, Y, 1 - Y, n_resamples=50, rng=0).confidence_interval(0.9, kind="percentile"),
    "mse_distribution": lambda: me.mse_distribution(
        [1.0, 2.0, 3.0], [1.5, 2.0, 2.0], 0.3).confidence_interval(0.9),
    "accuracy_distribution": lambda: me.accuracy_distribution(
        Y, 1 - Y, q=0.1).confidence_interval(0.9),
    "proportion_interval": lambda: eq.proportion_interval([3, 28], [30, 30], method="wilson"),
    "proportion_interval(beta)": lambda: eq.proportion_interval(
        [3, 28], [30, 30], method="beta", confidence_level=0.9),
    "pass_at_k": lambda: eq.pass_at_k(np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 1]]),
                                      2).interval,
}


def metadata_problems(ci: xr.DataArray) -> list[str]:
    """What is wrong with an interval's layout or metadata (empty when nothing is)."""
    problems = []
    if ci.dims[-1] != CI_BOUND:
        problems.append(f"`ci_bound` is not the last dim: {ci.dims}")
    if ci[CI_BOUND].values.tolist() != ["lower", "upper"]:
        problems.append(f"`ci_bound` labels {ci[CI_BOUND].values.tolist()}")
    for label, where in (("array", ci.attrs), ("ci_bound coordinate", ci[CI_BOUND].attrs)):
        missing = set(CI_METADATA_KEYS) - set(where)
        if missing:
            problems.append(f"{label} lacks {sorted(missing)}")
            continue
        if where[CI_KIND] not in CI_KINDS:
            problems.append(f"{label}: ci_kind {where[CI_KIND]!r} is not in CI_KINDS")
        if not 0 < where[CONFIDENCE_LEVEL] < 1:
            problems.append(f"{label}: confidence_level {where[CONFIDENCE_LEVEL]!r}")
    if "kind" in ci.attrs:
        problems.append("the old attribute `kind`")
    return problems


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_interval_carries_the_same_metadata(name):
    assert metadata_problems(VARIANTS[name]()) == []


# --- discovery through the public examples --------------------------------------------------

def _documented() -> Iterator[tuple[str, Any]]:
    """Every public name and every public method or property of a public class."""
    for name, obj in _public_objects():
        yield name, obj
        if inspect.isclass(obj):
            for attr in dir(obj):
                member = inspect.getattr_static(obj, attr)
                func = member.fget if isinstance(member, property) else \
                    getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(func):
                    yield f"{name}.{attr}", func


def intervals_in(value: Any, where: str, depth: int = 0) -> Iterator[tuple[str, xr.DataArray]]:
    """Every interval (a DataArray with a ``ci_bound`` dim) reachable from ``value``."""
    if isinstance(value, xr.DataArray) and CI_BOUND in value.dims:
        yield where, value
    elif isinstance(value, xr.Dataset):
        for var, array in value.data_vars.items():
            if CI_BOUND in array.dims:
                yield f"{where}[{var!r}]", array
    elif isinstance(value, ResultBase):
        try:
            ci = value.confidence_interval()
        except TypeError:           # a test without an interval (Friedman) says so this way
            ci = None
        if ci is not None:
            yield f"{where}.confidence_interval()", ci
            yield f"{where}.interval", value.interval
        yield from intervals_in(value.to_dataset(), f"{where}.to_dataset()", depth + 1)
    elif isinstance(value, list | tuple | dict) and depth < 2:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from intervals_in(item, f"{where}[{key!r}]", depth + 1)


def _run_example(name: str, obj: Any) -> dict[str, Any]:
    """The objects an example of ``obj`` leaves in its namespace (new or rebound names)."""
    module = inspect.getmodule(obj) or eq
    left: dict[str, Any] = {}
    for test in doctest.DocTestFinder(recurse=False).find(obj, name, module=module):
        before = dict(test.globs)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test, out=lambda _: None, clear_globs=False)
        left |= {k: v for k, v in test.globs.items() if before.get(k) is not v}
    return left


@pytest.fixture(scope="module")
def discovered(tmp_path_factory) -> dict[str, xr.DataArray]:
    """``name: variable...`` -> interval, from running every public example once."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("examples"))      # examples that write files
    found: dict[str, xr.DataArray] = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")             # examples' own warnings: not checked here
            for name, obj in _documented():
                for var, value in _run_example(name, obj).items():
                    found |= dict(intervals_in(value, f"{name}: {var}"))
    finally:
        os.chdir(here)
    return found


def test_every_discovered_interval_carries_the_same_metadata(discovered):
    bad = {where: problems for where, ci in discovered.items()
           if (problems := metadata_problems(ci))}
    assert not bad, "\n".join(f"{where}: {p}" for where, p in bad.items())


def test_the_discovery_reaches_the_interval_producers(discovered):
    """The examples' intervals include those of every kind of producer (so the discovery
    cannot silently find nothing): aggregate, pairwise, the result objects, proportions."""
    sources = {where.split(":")[0].rsplit(".", 1)[-1] for where in discovered}
    assert {"aggregate", "pairwise_differences", "t_interval", "arf_interval", "cohen_kappa",
            "bootstrap_test", "proportion_interval", "pass_at_k"} <= sources, sorted(sources)


def test_the_datasets_say_the_same():
    for ds in (_aggregate(), eq.pairwise_differences(_aggregate())):
        assert ds.attrs[CI_KIND] == ds["ci"].attrs[CI_KIND] == "percentile"
        assert ds.attrs[CONFIDENCE_LEVEL] == ds["ci"].attrs[CONFIDENCE_LEVEL]

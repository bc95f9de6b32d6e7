"""The table of test methods: one object per ``method=`` string, read by the test and its
result (no method-name comparisons elsewhere)."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import numpy as np
import pytest

import evaluq as eq
from evaluq.significance import _bootstrap
from evaluq.significance._methods import METHODS, get_method

SIGNIFICANCE = Path(eq.significance.__file__).parent


def test_table_covers_the_public_methods() -> None:
    assert set(METHODS) == set(typing.get_args(_bootstrap.Method))
    assert tuple(METHODS) == _bootstrap.METHODS
    for name, method in METHODS.items():
        assert method.name == name
        assert method.intervals
        assert set(method.intervals) <= {"percentile", "bca"}
        assert method.needs_acceleration == ("bca" in method.intervals)


def test_unknown_method_names_the_choices() -> None:
    with pytest.raises(ValueError, match="method"):
        get_method("bootstrap")


def test_no_method_name_comparisons_outside_the_table() -> None:
    pattern = re.compile(r"method\s*[!=]=|==\s*\"(berg-kirkpatrick|paired|permutation)\"")
    for name in ("_bootstrap.py", "_result.py", "_engine.py"):
        assert not pattern.search((SIGNIFICANCE / name).read_text()), name


@pytest.mark.parametrize("name", list(METHODS))
def test_result_follows_its_method_row(name) -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 400)
    h0 = np.where(rng.random(400) < 0.7, y, 1 - y)
    h1 = np.where(rng.random(400) < 0.75, y, 1 - y)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method=name, n_resamples=200,
                            rng=0)
    method = METHODS[name]
    assert res.resamples.attrs["description"] == method.distribution
    assert res.interval.attrs["ci_kind"] == method.intervals[0]
    assert method.count_rule in res.summary()
    assert res.sample_size == (method.default_sample_size if method.subsample else 1.0)
    assert ("bootstrap_distribution" in res.to_dataset()) == method.permutation_null
    for kind in ("percentile", "bca"):
        if kind in method.intervals:
            assert res.confidence_interval(0.9, kind=kind).attrs["ci_kind"] == kind
        else:
            with pytest.raises(ValueError, match="not available"):
                res.confidence_interval(0.9, kind=kind)

"""The cube's schema has one orientation rule: ``validate`` and every consumer agree (issue 20,
issue 23): a ``higher_is_better`` of ``"False"`` is lower-is-better everywhere, never a crash."""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq._schema import orientation
from evaluq.errors import CubeError
from evaluq.reporting.sections import _data_summary

SPELLINGS = [
    (True, True), (False, False), (1, True), (0, False), (np.bool_(True), True),
    (np.bool_(False), False), (np.int64(0), False), ("true", True), ("False", False),
    ("FALSE", False), ("1", True), ("0", False), (" True ", True),
]


@pytest.mark.parametrize(("value", "expected"), SPELLINGS)
def test_every_spelling_reads_the_same_everywhere(value, expected):
    cube = eq.simulate_cube(n_models=3, n_languages=3, n_seeds=2, n_boot=5, rng=0)
    cube = cube.assign_attrs(higher_is_better=value)
    assert orientation(cube.attrs) is expected
    assert eq.higher_is_better(eq.validate(cube)) is expected
    assert eq.variance_components(cube).attrs["higher_is_better"] == int(expected)
    resampled = eq.resample(cube, n_resamples=20, rng=0)
    assert resampled.attrs["higher_is_better"] == int(expected)
    aggregated = eq.aggregate(resampled)
    ranks = eq.rank_distribution(aggregated)
    best = aggregated["observed"].idxmax() if expected else aggregated["observed"].idxmin()
    assert ranks["expected_rank"].idxmin().item() == best.item()
    shown = "higher is better" if expected else "lower is better"
    assert shown in _data_summary(cube).body


@pytest.mark.parametrize("value", ["yes", "no", 2, -1, 0.5, "", None, "10", [1]])
def test_anything_else_is_a_cube_error_naming_attribute_and_value(value):
    cube = eq.simulate_cube(n_models=2, n_boot=5, rng=0).assign_attrs(higher_is_better=value)
    with pytest.raises(CubeError, match=r"attribute 'higher_is_better' must be 1 or 0 .*got"):
        eq.validate(cube)
    with pytest.raises(CubeError, match=r"'higher_is_better'.*got " + repr(value).replace(
            "[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        orientation(cube.attrs)

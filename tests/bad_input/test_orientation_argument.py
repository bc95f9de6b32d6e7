"""The ``higher_is_better`` argument: every public function taking it is in the corpus of
``corpus_orientation.py`` (found by signature, not by a list), and a valid value is kept."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import evaluq as eq

from .corpus_orientation import CALLS, FOLDS
from .test_corpus import public_names, resolve

# constructors of results and data records filled by evaluq itself from a validated value,
# never called with a user's argument
FILLED_BY_EVALUQ = {"evaluq.BootstrapTestResult", "evaluq.significance.BootstrapTestResult",
                    "evaluq.hierarchical.HierarchicalData", "evaluq.item_model.ItemData"}


def test_every_public_function_with_the_argument_is_in_the_corpus():
    covered = {id(resolve(name)) for name in (*CALLS, *FILLED_BY_EVALUQ)}  # any alias
    takes = set()
    for name in public_names():
        try:
            params = inspect.signature(resolve(name)).parameters
        except (TypeError, ValueError):
            continue
        if "higher_is_better" in params and id(resolve(name)) not in covered:
            takes.add(name)
    missing = sorted(takes)
    assert not missing, f"functions taking `higher_is_better` without a corpus entry: {missing}"


@pytest.mark.parametrize("value", [False, np.bool_(False), True, np.bool_(True)])
def test_a_bool_is_kept_and_a_string_never_means_true(value):
    res = eq.correlated_t_test(FOLDS, FOLDS[::-1], higher_is_better=value)
    assert res.attrs["higher_is_better"] == int(bool(value))
    with pytest.raises(TypeError, match="a string is never read as a bool"):
        eq.correlated_t_test(FOLDS, FOLDS[::-1], higher_is_better="False")
    cube = eq.from_arrays(np.ones((1, 1, 2)), higher_is_better=value)
    assert eq.higher_is_better(cube) is bool(value)

"""Issue 35's classes of user-facing bad input, one test per class over the issue's examples
(``corpus_issue35.CLASSES``): no crash (only a ValueError / TypeError naming the argument), no
silent NaN (every NaN explained by a ``nan_reason``), nothing wrongly accepted, no allocation
above the memory budget (refused with the memory needed and the argument to lower), and no
vague message (each names the argument)."""

from __future__ import annotations

import re
import warnings

import pytest

from .corpus import FINITE
from .corpus_issue35 import CLASSES
from .test_corpus import unexplained_nan


def _check(case):
    if case.match == FINITE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            result = case.call()
        assert not unexplained_nan(result), f"{case.label}: unexplained NaN"
        return
    with pytest.raises(case.errors) as info:
        case.call()
    assert re.search(case.match, str(info.value)), (
        f"{case.name} ({case.label}): {type(info.value).__name__}: {info.value}")


@pytest.mark.parametrize("klass", sorted(CLASSES))
def test_issue35_class(klass):
    cases = CLASSES[klass]()
    for case in cases:
        _check(case)


def test_memory_budget_is_configurable(monkeypatch):
    from evaluq._validation import MEMORY_BUDGET_ENV, check_memory, memory_budget
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "1K")
    assert memory_budget() == 1024
    with pytest.raises(ValueError, match=r"`n` would need 2 KiB .* budget of 1 KiB"):
        check_memory("n", 2048)
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "lots")
    with pytest.raises(ValueError, match=MEMORY_BUDGET_ENV):
        memory_budget()

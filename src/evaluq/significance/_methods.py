"""The test methods of :func:`evaluq.bootstrap_test` as one table of method objects.

Everything that differs between Berg-Kirkpatrick, the paired bootstrap and the permutation
test is a field of :class:`TestMethod`: whether it sub-samples items, where its distribution
comes from, its p-value rule, the interval kinds it offers and the words its printout uses.
The test and its result read these fields; a new method is one new row of :data:`METHODS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluq._validation import check_choice, check_real
from evaluq.significance import _engine

BK_SAMPLE_SIZE_RANGE = (0.05, 0.5)

FEW_ITEMS_PAIRED = 40
"""Fewer items than this: the paired bootstrap's p-values are too small. At a true null
(continuous per-item differences, the case of soft labels and regression; hard labels are
discrete and reject less often) the paired test rejects at p <= .05 in 29% of data sets at 3
items, 15-17% at 5, 9% at 10, 7% at 20, 6.3% at 30, 5.8-6.1% at 40 and 5.6% at 50 (16,000
simulated data sets per size from 20 items on; ``tests/significance/test_calibration.py``):
from 40 items on the excess over the level is at most a fifth of it (6% at a 5% level), as
for a z-test with the plug-in variance. It resamples the observed differences as if they
were the population, and a few items all won by one system give ``p = 1 / (B + 1)``."""

FEW_ITEMS_BERG_KIRKPATRICK = 6
"""Fewer items than this: the Berg-Kirkpatrick test's p-values are too small, whatever the
sample size. At a true null (continuous per-item differences) it rejects at p <= .05 in 25%
of data sets at 2 items, 12% at 3 and 6-7% at 4 and 5; from 6 items on at most 4.4% (f = 0.5)
and far less at smaller f (6,000 simulated data sets per size;
``tests/significance/test_calibration.py``). A few items all won by one system give
``p = 1 / (B + 1)`` (no sub-sample delta exceeds twice the observed one)."""


PValueRule = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class TestMethod:
    """One significance-test method.

    Attributes
    ----------
    name
        The ``method=`` string.
    title
        The method's name in messages.
    pvalue
        ``(distribution, delta, scale) -> (p-value, count)`` from :mod:`._engine`.
    distribution
        What the stored distribution holds (the ``description`` of ``result.resamples``).
    count_rule
        What the p-value counts, for the printout.
    intervals
        Interval kinds available; the first is the default.
    subsample
        Draws a fraction (``sample_size``) of the items per resample; its percentile interval
        is rescaled to the full test set (m-out-of-n bootstrap).
    permutation_null
        The distribution is a permutation null: intervals come from a separate bootstrap.
    default_sample_size
        ``sample_size`` when none is given (1: every item).
    few_items
        With fewer items than this the p-values are too small: the test warns
        (``SmallSampleWarning``). 0: valid at any number of items.
    few_items_note
        Why, in numbers: the null rejection rates measured by simulation.
    """

    __test__ = False  # not a pytest test class despite the name

    name: str
    title: str
    pvalue: PValueRule
    distribution: str
    count_rule: str
    intervals: tuple[str, ...]
    subsample: bool = False
    permutation_null: bool = False
    default_sample_size: float = 1.0
    few_items: int = 0
    few_items_note: str = ""

    @property
    def resamples_runs(self) -> bool:
        """Whether the method is a bootstrap (so runs can be resampled: two-level, crossed)."""
        return not self.permutation_null

    @property
    def needs_acceleration(self) -> bool:
        """Whether the BCa interval (and so the jackknife acceleration) is offered."""
        return "bca" in self.intervals

    def check_sample_size(self, sample_size: float | None) -> float:
        """The fraction of items drawn per resample, validated for this method."""
        if self.subsample:
            if sample_size is None:
                return self.default_sample_size
            f = check_real("sample_size", sample_size)
            lo, hi = BK_SAMPLE_SIZE_RANGE
            if not lo <= f <= hi:
                raise ValueError(f"`sample_size` must be in [{lo}, {hi}] for the "
                                 f"{self.title} test; got {sample_size:g}")
            return f
        if sample_size is not None and sample_size != 1:
            raise ValueError(f"`sample_size` applies to the Berg-Kirkpatrick test only: the "
                             f"{self.name} test uses every item (leave it None or 1); "
                             f"got {sample_size:g}")
        return 1.0

    def check_interval_kind(self, kind: str) -> str:
        check_choice("kind", kind, ("percentile", "bca"))
        if kind not in self.intervals:
            alternatives = " or ".join(repr(k) for k in self.intervals)
            raise ValueError(f"`kind` {kind!r} is not available for the {self.title} test "
                             f"(sub-samples); use {alternatives} or method='paired'")
        return kind


METHODS: dict[str, TestMethod] = {
    method.name: method for method in (
        TestMethod(
            name="berg-kirkpatrick", title="Berg-Kirkpatrick",
            pvalue=_engine.pvalue_berg_kirkpatrick, distribution="sub-sample deltas",
            count_rule="count sample delta > 2 delta", intervals=("percentile",),
            subsample=True, default_sample_size=0.1, few_items=FEW_ITEMS_BERG_KIRKPATRICK,
            few_items_note="at a true null it rejects at p <= .05 in 12% of data sets at 3 "
                           "items and 6-7% at 4 and 5, whatever the sample size, and a few "
                           "items all won by one system give p = 1/(B+1)"),
        TestMethod(
            name="paired", title="paired bootstrap",
            pvalue=_engine.pvalue_paired, distribution="bootstrap deltas",
            count_rule="count |delta* - delta| >= |delta|", intervals=("bca", "percentile"),
            few_items=FEW_ITEMS_PAIRED,
            few_items_note="it resamples the observed differences as if they were the "
                           "population: at a true null it rejects at p <= .05 in about 9% of "
                           "data sets at 10 items and 7% at 20, and a few items all won by "
                           "one system give p = 1/(B+1)"),
        TestMethod(
            name="permutation", title="permutation",
            pvalue=_engine.pvalue_permutation, distribution="permutation (null) deltas",
            count_rule="count |delta perm| >= |delta|", intervals=("bca", "percentile"),
            permutation_null=True),
    )
}
"""Every test method by its ``method=`` name."""


def get_method(name: str) -> TestMethod:
    """The method object for ``method=name`` (ValueError naming the choices otherwise)."""
    check_choice("method", name, tuple(METHODS))
    return METHODS[name]

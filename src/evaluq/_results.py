"""Pieces shared by the small result objects (intervals, agreement coefficients, tests)."""

from __future__ import annotations

import xarray as xr

from evaluq._dims import CI_BOUND

# Default resample counts, one per kind of procedure (issue 9: one documented default each).
N_RESAMPLES_INTERVAL = 9999
"""Bootstrap confidence intervals (agreement coefficients, model rankings over items): as
:func:`scipy.stats.bootstrap`; the Monte Carlo error of a 95 % percentile bound is then small
against the interval's width."""

N_RESAMPLES_TEST = 1000
"""Two-system significance tests (``bootstrap_test``, ``Experiment.run``): as BooStSa, whose
p-values it reproduces; the smallest attainable p-value is then 1/1001."""


class IntervalBoundsMixin:
    """``lower`` / ``upper`` from an ``interval`` DataArray with a ``ci_bound`` dim."""

    @property
    def interval(self) -> xr.DataArray:  # pragma: no cover - every subclass defines it
        """The interval, with a ``ci_bound`` dim."""
        raise TypeError(f"{type(self).__name__} must define interval")

    @property
    def lower(self) -> xr.DataArray:
        """Lower end of :attr:`interval`."""
        return self.interval.sel({CI_BOUND: "lower"}, drop=True)

    @property
    def upper(self) -> xr.DataArray:
        """Upper end of :attr:`interval`."""
        return self.interval.sel({CI_BOUND: "upper"}, drop=True)

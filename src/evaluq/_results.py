"""Pieces shared by the small result objects (intervals, agreement coefficients, tests)."""

from __future__ import annotations

import xarray as xr

from evaluq._dims import CI_BOUND


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

"""The base of the result objects (intervals, agreement coefficients, significance tests).

Every result holds an ``estimate``, its ``distribution`` (the full resample or null
distribution, sample dim last as in scipy; None for closed-form intervals), gives intervals at
any level through the method ``confidence_interval(confidence_level)`` (``interval`` is that
at the stored level, kept for compatibility), and converts with ``to_dataset()`` /
``to_dataframe()``; it prints with ``__repr__`` and ``_repr_html_`` (notebooks).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
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


REPR_ROWS = 30
"""A result's repr shows its table when it has at most this many rows."""


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


def _shown(value: Any, digits: int = 4) -> str:
    """A value for a repr: scalars in full, arrays by their shape."""
    if isinstance(value, xr.DataArray):
        if value.ndim == 0:
            return f"{float(value):.{digits}g}"
        return f"<{' x '.join(f'{d}: {n}' for d, n in value.sizes.items())}>"
    return repr(value)


class ResultBase(IntervalBoundsMixin):
    """Base of every result object: estimate, distribution, intervals, conversions, printing.

    Subclasses define ``estimate``, :meth:`confidence_interval` and :meth:`to_dataset`; the
    rest has defaults built on them.

    Resampling results also hold ``distribution``: the full resample or null distribution,
    sample dim last (``AgreementResult.distribution``, ``BootstrapTestResult.distribution``);
    closed-form intervals (Student-t, ARF) have none.
    """

    estimate: Any

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """The interval at ``confidence_level`` (default: the level given at construction),
        with a ``ci_bound`` dim."""
        raise TypeError(f"{type(self).__name__} must define confidence_interval")

    @property
    def interval(self) -> xr.DataArray:
        """The interval at the stored level: ``confidence_interval()`` (kept for
        compatibility; the method is the documented way)."""
        return self.confidence_interval()

    def to_dataset(self) -> xr.Dataset:  # pragma: no cover - every subclass defines it
        raise TypeError(f"{type(self).__name__} must define to_dataset")

    def to_dataframe(self) -> pd.DataFrame:
        """The result as a table (no ``ci_bound`` dim: lower / upper columns)."""
        ds = self.to_dataset()
        if ds.sizes:
            return ds.to_dataframe()
        return pd.DataFrame({k: [v.item()] for k, v in ds.data_vars.items()})

    def _fields(self) -> dict[str, Any]:
        """What ``__repr__`` shows."""
        return {"estimate": self.estimate, "lower": self.lower, "upper": self.upper}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        lines += [f"    {name}={_shown(value)}," for name, value in self._fields().items()]
        lines.append(")")
        return "\n".join([*lines, *self._table_lines()])

    def _table_lines(self) -> list[str]:
        """The values behind the shapes the repr shows (``<model: 3>``): the table of
        :meth:`to_dataframe`, when the estimate has dims and the table at most
        ``REPR_ROWS`` rows (a notebook's ``print(result)`` then shows the numbers)."""
        estimate = self.estimate
        if not isinstance(estimate, xr.DataArray) or estimate.ndim == 0 \
                or estimate.size > REPR_ROWS:        # a big result: no table built to print
            return []
        table = self.to_dataframe()
        if not 0 < len(table) <= REPR_ROWS:
            return []
        shown = table.select_dtypes(include="number")
        return shown.to_string(float_format=lambda v: f"{v:.4g}").splitlines()

    def _repr_html_(self) -> str:
        table = self.to_dataframe().head(20).to_html(float_format=lambda v: f"{v:.4g}")
        return f"<div><b>{type(self).__name__}</b>{table}</div>"

"""One result base: every result object has the same interface (estimate, distribution with
the sample dim last, confidence_interval(level), interval, to_dataset, to_dataframe, repr)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq._dims import CI_BOUND, RESAMPLE
from evaluq._results import ResultBase


def _results() -> dict[str, ResultBase]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    h0 = np.where(rng.random(300) < 0.7, y, 1 - y)
    h1 = np.where(rng.random(300) < 0.8, y, 1 - y)
    r1 = rng.integers(0, 3, 200)
    r2 = np.where(rng.random(200) < 0.7, r1, rng.integers(0, 3, 200))
    return {
        "t": eq.intervals.t_interval(rng.normal(size=(4, 3)), confidence_level=0.9),
        "arf": eq.intervals.arf_interval(85.2, 96.3, arf_alpha=0.2, bounds=(0, 100)),
        "agreement": eq.agreement.cohen_kappa(r1, r2, n_resamples=300, rng=0),
        "test": eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], method="paired",
                                  n_resamples=300, rng=0),
    }


RESULTS = _results()


@pytest.mark.parametrize("name", list(RESULTS))
def test_common_interface(name) -> None:
    res = RESULTS[name]
    assert isinstance(res, ResultBase)
    ci = res.confidence_interval()
    assert CI_BOUND in ci.dims
    xr.testing.assert_identical(res.interval, ci)
    narrow, wide = res.confidence_interval(0.5), res.confidence_interval(0.99)
    assert bool(((wide.sel({CI_BOUND: "upper"}) - wide.sel({CI_BOUND: "lower"}))
                 >= (narrow.sel({CI_BOUND: "upper"}) - narrow.sel({CI_BOUND: "lower"}))).all())
    assert bool((res.lower <= res.upper).all())
    assert isinstance(res.estimate, xr.DataArray)
    assert isinstance(res.to_dataset(), xr.Dataset)
    assert isinstance(res.to_dataframe(), pd.DataFrame)
    text = repr(res)
    assert text.startswith(type(res).__name__) or text.startswith("Bootstrap significance test")
    assert "<table" in res._repr_html_()


@pytest.mark.parametrize("name", ["agreement", "test"])
def test_distribution_has_the_sample_dim_last(name) -> None:
    res = RESULTS[name]
    dist = res.distribution  # type: ignore[attr-defined]
    if isinstance(dist, xr.DataArray):
        assert dist.dims[-1] == RESAMPLE
        assert dist.sizes[RESAMPLE] == 300
    else:
        assert dist.shape[-1] == 300


def test_arf_interval_at_another_level_uses_that_levels_k() -> None:
    res = RESULTS["arf"]
    other = eq.intervals.arf_interval(85.2, 96.3, arf_alpha=0.1, bounds=(0, 100))
    xr.testing.assert_allclose(res.confidence_interval(0.9), other.interval)
    xr.testing.assert_identical(res.confidence_interval(), res.interval)


def test_test_result_estimate_is_delta() -> None:
    res = RESULTS["test"]
    np.testing.assert_array_equal(res.estimate.values, res.delta)  # type: ignore[attr-defined]


def test_a_small_result_prints_its_numbers() -> None:
    """``print(result)`` in a notebook: the fields' shapes, then the table of the values
    (before, ``estimate=<dim_0: 2>`` and no number); a scalar result prints as before."""
    res = eq.intervals.t_interval([[76.85, 81.99], [70.1, 72.3]], confidence_level=0.8)
    lines = repr(res).splitlines()
    assert lines[0] == "TIntervalResult("
    table = res.to_dataframe()
    assert lines[-2].split()[:2] == ["0", f"{table['estimate'].iloc[0]:.4g}"]
    assert lines[-1].split()[:2] == ["1", f"{table['estimate'].iloc[1]:.4g}"]
    scalar = eq.intervals.t_interval([76.85, 81.99], confidence_level=0.8)
    assert repr(scalar).splitlines()[-1] == ")"

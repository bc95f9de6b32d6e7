"""The vectorised convergence statistics equal arviz-stats' own, cell by cell."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import xarray as xr

from evaluq._convergence import convergence_arrays


def _arviz(x: np.ndarray) -> dict[str, np.ndarray]:
    import arviz_stats as azs

    da = xr.DataArray(x, dims=["chain", "draw", "cell"])
    dims = ["chain", "draw"]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # its constant and NaN cells
        return _stats(azs, da, dims)


def _stats(azs: Any, da: xr.DataArray, dims: list[str]) -> dict[str, np.ndarray]:
    return {"r_hat": azs.rhat(da, sample_dims=dims).values,
            "ess_bulk": azs.ess(da, sample_dims=dims, method="bulk").values,
            "ess_tail": azs.ess(da, sample_dims=dims, method="tail").values,
            "mcse_mean": azs.mcse(da, sample_dims=dims, method="mean").values}


def _chains(n_chain: int, n_draw: int, gen: np.random.Generator) -> np.ndarray:
    """Cells of every kind: white noise, AR(1) chains of several strengths (Geyer's sequences
    end at different lags), chains stuck at different levels, heavy tails, ties (a
    discrete parameter), a constant cell and a cell whose chains disagree in scale."""
    cells = [gen.normal(size=(n_chain, n_draw))]
    for phi in (0.3, 0.8, 0.97):
        eps = gen.normal(size=(n_chain, n_draw))
        ar = np.zeros_like(eps)
        for t in range(1, n_draw):
            ar[:, t] = phi * ar[:, t - 1] + eps[:, t]
        cells.append(ar)
    cells.append(gen.normal(size=(n_chain, n_draw)) + np.arange(n_chain)[:, None])
    cells.append(gen.standard_t(2, size=(n_chain, n_draw)))
    cells.append(gen.integers(0, 3, size=(n_chain, n_draw)).astype(float))
    cells.append(np.full((n_chain, n_draw), 2.5))
    cells.append(gen.normal(size=(n_chain, n_draw)) * np.linspace(1, 3, n_chain)[:, None])
    cells.append(np.abs(gen.normal(size=(n_chain, n_draw))) ** 3)
    return np.stack(cells, axis=-1)


@pytest.mark.parametrize(("n_chain", "n_draw"), [(4, 1000), (2, 301), (1, 200), (4, 5), (3, 3)])
def test_equals_arviz_stats_cell_by_cell(n_chain: int, n_draw: int) -> None:
    x = _chains(n_chain, n_draw, np.random.default_rng(n_chain * 1000 + n_draw))
    ours, theirs = convergence_arrays(x), _arviz(x)
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, atol=1e-12,
                                   equal_nan=True, err_msg=key)


def test_a_cell_with_a_nan_is_nan_and_leaves_the_others() -> None:
    x = _chains(4, 200, np.random.default_rng(1))
    x[0, 5, 2] = np.nan
    ours, theirs = convergence_arrays(x), _arviz(x)
    for key in ours:
        assert np.isnan(ours[key][2])
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-10, equal_nan=True)


def test_average_ranks_are_scipys() -> None:
    from scipy import stats

    from evaluq._convergence import _average_ranks

    gen = np.random.default_rng(3)
    flat = np.concatenate([gen.normal(size=(3, 50)), gen.integers(0, 4, size=(3, 50))])
    flat[0, :5] = flat[0, 5]                                   # a run of ties
    np.testing.assert_array_equal(_average_ranks(flat),
                                  stats.rankdata(flat, method="average", axis=1))


def test_the_advice_names_a_scalar_quantity_without_a_stray_space() -> None:
    """A scalar quantity has an empty model coordinate in the convergence table: the advice
    said "(sigma_item )"; a per-model one keeps its model ("(dev m1)")."""
    import pandas as pd

    from evaluq._fits import convergence_problems

    table = pd.DataFrame({"r_hat": [1.0, 1.05], "ess_bulk": [90.0, 900.0],
                          "ess_tail": [900.0, 900.0]},
                         index=pd.MultiIndex.from_tuples([("sigma_item", ""), ("dev", "m1")]))
    advice = {"r_hat": "refit", "ess": "more draws", "divergences": "tune"}
    said = convergence_problems(table, 0, rhat_max=1.01, ess_min=400, advice=advice)
    assert said == ["R-hat up to 1.050 (dev m1) > 1.01: the chains disagree; refit",
                    "ESS down to 90 (sigma_item) < 400: more draws"]

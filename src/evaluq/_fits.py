"""What the fitted Bayesian models share (:mod:`evaluq.hierarchical`, :mod:`evaluq.item_model`):
the convergence table of a posterior through arviz-stats, and the merge of a user's prior
scales into the model's defaults."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import MODEL


def convergence_table(ds: xr.Dataset, sample_dims: Sequence[Hashable]) -> pd.DataFrame:
    """R-hat, bulk and tail ESS and the MCSE of the mean of every variable of ``ds``.

    Rows are indexed by (quantity, model) (model ``""`` for a scalar; cells that are NaN in
    every draw, quantities the data cannot identify, are left out); columns ``r_hat``,
    ``ess_bulk``, ``ess_tail``, ``mcse_mean`` (arviz-stats' rank-normalised split R-hat and
    ESS; Vehtari et al. 2021).
    """
    import arviz_stats as azs

    dims = list(sample_dims)
    # every variable's cells side by side in one (sample dims..., cell) array: arviz-stats
    # then runs once per statistic instead of once per statistic and variable
    labels: list[tuple[str, str]] = []
    columns = []
    for name, var in ds.data_vars.items():
        var = var.transpose(*dims, ...)
        models = var[MODEL].values if MODEL in var.dims else [""]
        labels += [(str(name), str(model)) for model in models]
        columns.append(var.values.reshape(*var.shape[:len(dims)], -1))
    cells = xr.DataArray(np.concatenate(columns, axis=-1), dims=[*map(str, dims), "cell"])
    stats = {"r_hat": azs.rhat(cells, sample_dims=dims),
             "ess_bulk": azs.ess(cells, sample_dims=dims, method="bulk"),
             "ess_tail": azs.ess(cells, sample_dims=dims, method="tail"),
             "mcse_mean": azs.mcse(cells, sample_dims=dims, method="mean")}
    index = pd.MultiIndex.from_tuples(labels, names=["quantity", MODEL])
    table = pd.DataFrame({key: np.asarray(value, dtype=np.float64)
                          for key, value in stats.items()}, index=index)
    return table.dropna(how="all")          # a quantity the cube cannot identify (all NaN)


def merge_priors(defaults: Mapping[str, float], priors: Any, keys: Collection[str], *,
                 signed: Collection[str] = ("alpha_mu",)) -> dict[str, float]:
    """``defaults`` updated with the user's ``priors`` (a dict or None).

    Unknown keys raise naming them; every value must be finite, and every key but the
    ``signed`` ones (locations) positive (a scale).
    """
    out = dict(defaults)
    if priors is None:
        return out
    if not isinstance(priors, dict):
        raise TypeError(f"`priors` must be a dict or None; got {type(priors).__name__}")
    for key, value in priors.items():
        if key not in keys:
            raise ValueError(f"`priors` has an unknown key {key!r}; expected one of "
                             f"{list(keys)}")
        value = float(value)
        if not np.isfinite(value) or (key not in signed and value <= 0):
            raise ValueError(f"`priors[{key!r}]` must be finite"
                             + ("" if key in signed else " and > 0") + f"; got {value}")
        out[key] = value
    return out

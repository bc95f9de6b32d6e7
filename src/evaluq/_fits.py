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

    Rows are indexed by (quantity, model) (model ``""`` for a scalar); columns ``r_hat``,
    ``ess_bulk``, ``ess_tail``, ``mcse_mean`` (arviz-stats' rank-normalised split R-hat and
    ESS; Vehtari et al. 2021).
    """
    import arviz_stats as azs

    dims = list(sample_dims)
    stats = {"r_hat": azs.rhat(ds, sample_dims=dims),
             "ess_bulk": azs.ess(ds, sample_dims=dims, method="bulk"),
             "ess_tail": azs.ess(ds, sample_dims=dims, method="tail"),
             "mcse_mean": azs.mcse(ds, sample_dims=dims, method="mean")}
    rows = []
    for name in ds.data_vars:
        for key, result in stats.items():
            values = result[name]
            models = values[MODEL].values if MODEL in values.dims else [""]
            for model, value in zip(models, np.atleast_1d(values.values), strict=True):
                rows.append({"quantity": str(name), MODEL: str(model), "stat": key,
                             "value": float(value)})
    table = pd.DataFrame(rows).pivot_table(index=["quantity", MODEL], columns="stat",
                                           values="value", sort=False)
    table.columns.name = None
    return table[list(stats)]


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

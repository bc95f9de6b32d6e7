"""What the fitted Bayesian models share (:mod:`evaluq.hierarchical`, :mod:`evaluq.item_model`):
the convergence table of a posterior (arviz-stats' statistics), and the merge of a user's prior
scales into the model's defaults."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._convergence import convergence_arrays
from evaluq._dims import MODEL


def convergence_table(ds: xr.Dataset, sample_dims: Sequence[Hashable]) -> pd.DataFrame:
    """R-hat, bulk and tail ESS and the MCSE of the mean of every variable of ``ds``.

    Rows are indexed by (quantity, model) (model ``""`` for a scalar; cells that are NaN in
    every draw, quantities the data cannot identify, are left out); columns ``r_hat``,
    ``ess_bulk``, ``ess_tail``, ``mcse_mean``: arviz-stats' rank-normalised split R-hat and
    ESS (Vehtari et al. 2021, tail quantiles from ``rcParams["stats.ci_prob"]``), computed
    for every cell at once by :func:`evaluq._convergence.convergence_arrays`.
    """
    from arviz_base import rcParams

    dims = list(sample_dims)
    if len(dims) != 2:
        raise ValueError(f"`sample_dims` must be (chain, draw); got {dims}")
    # every variable's cells side by side in one (chain, draw, cell) array
    labels: list[tuple[str, str]] = []
    columns = []
    for name, var in ds.data_vars.items():
        var = var.transpose(*dims, ...)
        models = var[MODEL].values if MODEL in var.dims else [""]
        labels += [(str(name), str(model)) for model in models]
        columns.append(var.values.reshape(*var.shape[:2], -1))
    stats = convergence_arrays(np.concatenate(columns, axis=-1),
                               tail_prob=float(rcParams["stats.ci_prob"]))
    index = pd.MultiIndex.from_tuples(labels, names=["quantity", MODEL])
    table = pd.DataFrame(stats, index=index)
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

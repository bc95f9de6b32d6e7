"""The item model's families behind one small protocol (issue 31).

A family is what changes between the item model's likelihoods: the binomial (and Bernoulli)
family, the beta-binomial (run drift), the 2PL (``discrimination=True``) and the ordinal
family (ratings). Each provides the same pieces, as plain functions of the data and the
draws (typed by :class:`evaluq.item_model._data.FittedDraws`; no family module imports the
fit object):

* its **log-density** with the items integrated out, sampled: ``resolve_priors`` and
  ``sample`` (the PyMC model compiled once per shape, run by nutpie);
* its **conditional draws**: ``posterior``, the posterior group with both scopes' scores
  and the item effects given each draw;
* its **predictive replication**: ``predictive_checks``;
* its **frequentist side**, **variance components** and **pointwise log-likelihood** of one
  item's response pattern (``compare_frequentist``, ``variance_components``,
  ``pointwise_loglik`` for PSIS-LOO).

:class:`evaluq.item_model._fit.ItemFit` asks :func:`family_of` for its family and calls
these; a new family is one module and one entry here. The ordinal family fits through
``_ordinal.fit_ordinal`` (its own weighted cells), so its ``sample`` and ``posterior`` are
``None``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from evaluq.item_model._criticism import predictive_checks
from evaluq.item_model._data import FittedDraws, ItemData
from evaluq.item_model._diagnostics import compare_frequentist
from evaluq.item_model._marginal import (
    TARGET_ACCEPT,
    marginal_pointwise_loglik,
    marginal_posterior,
    model_parts,
    sample_marginal,
)
from evaluq.item_model._ordinal_checks import (
    ordinal_compare_frequentist,
    ordinal_pointwise_loglik,
    ordinal_predictive_checks,
    ordinal_variance_components,
)
from evaluq.item_model._twopl import (
    pointwise_loglik_2pl,
    predictive_checks_2pl,
    resolve_priors_2pl,
    sample_twopl,
    twopl_posterior,
)

VARIANCE_NAMES = ("sigma_item", "sigma_task", "sigma_model_x_task", "run_drift", "icc_epochs",
                  "design_effect", "effective_n", "sigma_logdisc")
"""The variance components a non-ordinal posterior may hold."""


@dataclass(frozen=True)
class Family:
    """The pieces one family of the item model provides (see the module docstring)."""

    name: str
    resolve_priors: Callable[[ItemData, Any], dict[str, float]] | None
    sample: Callable[..., tuple[xr.DataTree, float, float]] | None
    posterior: Callable[[ItemData, xr.DataTree, int], tuple[xr.Dataset, xr.Dataset]] | None
    predictive_checks: Callable[[FittedDraws, int, np.random.Generator], pd.DataFrame]
    compare_frequentist: Callable[[ItemData, np.ndarray, float], pd.DataFrame]
    variance_components: Callable[[FittedDraws], xr.Dataset]
    pointwise_loglik: Callable[[FittedDraws, Any], np.ndarray]


def _variance_components(fit: FittedDraws) -> xr.Dataset:
    """The variance components of a binomial, beta-binomial or 2PL posterior."""
    post = fit.posterior
    out = post[[n for n in VARIANCE_NAMES if n in post]]
    out.attrs = {"family": fit.data.family, "run_drift": (
        "0 by assumption: the binomial family takes epochs as independent given the item")}
    if "run_drift" in post:
        out.attrs["run_drift"] = ("rho = 1 / (1 + phi), the correlation of two epochs of "
                                  "one (model, item) given the item (beta-binomial)")
    return out


def _resolve_marginal(data: ItemData, priors: Any) -> dict[str, float]:
    return dict(model_parts(data)[2](data, priors))


def _sample_twopl(data: ItemData, priors: dict[str, float], draws: int, tune: int,
                  chains: int, seed: int) -> tuple[xr.DataTree, float, float]:
    return sample_twopl(data, priors, draws, tune, chains, seed, TARGET_ACCEPT)


def _twopl_posterior(data: ItemData, raw: xr.DataTree, post_seed: int
                     ) -> tuple[xr.Dataset, xr.Dataset]:
    return twopl_posterior(data, raw, post_seed)  # marginal form: (a_i, b_i) drawn after


def _ordinal_compare(data: ItemData, post: np.ndarray, level: float) -> pd.DataFrame:
    return ordinal_compare_frequentist(data.ordinal, post, level)


MARGINAL = Family("marginal", _resolve_marginal, sample_marginal, marginal_posterior,
                  predictive_checks, compare_frequentist, _variance_components,
                  marginal_pointwise_loglik)
"""Binomial, Bernoulli and beta-binomial: items integrated out of the log-density."""

TWO_PL = Family("2pl", resolve_priors_2pl, _sample_twopl, _twopl_posterior,
                predictive_checks_2pl, compare_frequentist, _variance_components,
                pointwise_loglik_2pl)
"""The 2PL (``discrimination=True``): (log a_i, b_i) integrated out of the log-density
(``_twopl.FORM``; explicit item parameters the tests' reference) and for LOO."""

ORDINAL = Family("ordinal", None, None, None, ordinal_predictive_checks, _ordinal_compare,
                 ordinal_variance_components, ordinal_pointwise_loglik)
"""Ratings on ordered levels (``_ordinal``, ``_ordinal_checks``); fitted by ``fit_ordinal``."""


def family_of(data: ItemData, discrimination: bool = False) -> Family:
    """The family of a fit's data (``discrimination``: the fit's 2PL flag)."""
    if data.family == "ordinal":
        return ORDINAL
    return TWO_PL if discrimination else MARGINAL

"""The cube's Gaussian model in ``compare_fits``: compared on (model, task) cell counts.

The cube model (:func:`evaluq.fit_hierarchical`) observes cell means, not items, so its
log predictive density is not on the item model's unit (one item's response pattern) and
the two elpds cannot be subtracted. What both a cube fit and an item-model fit *without* item
effects can evaluate is the count of right answers in each (model, task) cell,
c_mk out of n_mk = items x epochs:

- the binomial without item effects: c_mk ~ Binom(n_mk, expit(eta_mk)) given eta;
- the Gaussian, discretised to the count grid (bin width 1/n_mk on the mean's scale):

      P(c_mk) = Phi(((c + 1/2) / n - theta_mk) / s_mk) - Phi(((c - 1/2) / n - theta_mk) / s_mk),
      s_mk^2 = v_mk + sigma_seed_m^2 / S_mk,

  given the draw's cell mean theta_mk and the cell's noise variance (test-set variance plus
  seed variance over the S_mk seeds, epochs here). The mass the Gaussian puts outside
  [0, 1] is lost: it is a real deficit of that model on counts, not an artefact.

Both are pmfs of the same count, so their PSIS-LOO elpds are comparable; the block reports
them under its own unit. A fit *with* item effects is not on this unit: its items are shared
by the models of a task, so its cells are not conditionally independent given the cell-level
parameters and a per-cell pointwise log-likelihood would not sum to its likelihood. It stays
in the item-unit block. With test-set errors paired across models (the cube model's default
on a cube from :func:`evaluq.from_items`) the Gaussian's cells are not conditionally
independent either: its terms are each cell's marginal density and the table says so.
"""

from __future__ import annotations

import warnings
from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import expit, log_ndtr
from scipy.stats import binom

from evaluq._dims import LANGUAGE, MODEL, POSTERIOR_SAMPLE_DIMS, TASK

CELL_UNIT: Final = "(model, task) cell count"
ITEM_UNIT: Final = "item response pattern"
_CELL: Final = "cell"


def is_cube_fit(fit: Any) -> bool:
    """Whether ``fit`` is the cube's Gaussian model (a :class:`evaluq.HierarchicalFit`)."""
    from evaluq.hierarchical import HierarchicalFit

    return isinstance(fit, HierarchicalFit)


def log_bin_probability(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """log(Phi(upper) - Phi(lower)) for standardised bounds, accurate in both tails.

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.item_model._cells import log_bin_probability
    >>> float(np.exp(log_bin_probability(np.array(-1.0), np.array(1.0)))).__round__(4)
    0.6827
    """
    lower, upper = np.broadcast_arrays(np.asarray(lower, float), np.asarray(upper, float))
    flip = lower > 0                      # upper tail: use the mirror image
    lo = np.where(flip, -upper, lower)
    hi = np.where(flip, -lower, upper)
    log_hi, log_lo = log_ndtr(hi), log_ndtr(lo)
    with np.errstate(divide="ignore"):
        return log_hi + np.log1p(-np.exp(log_lo - log_hi))


def _cells(reference: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, trials and the observed mask of the (model, task) cells of an item fit."""
    correct = np.asarray(reference.data.correct, float)
    trials = np.asarray(reference.data.trials, float)
    return correct, trials, trials > 0


def binomial_cell_loglik(fit: Any) -> np.ndarray:
    """(draw, cell) log Binom(c_mk | n_mk, expit(eta_mk)) of an item fit, observed cells only
    (in model-major order)."""
    correct, trials, seen = _cells(fit)
    eta = fit.posterior["eta"].transpose(*POSTERIOR_SAMPLE_DIMS, MODEL, TASK).values
    eta = eta.reshape(-1, *eta.shape[2:])
    return binom.logpmf(correct[seen], trials[seen], expit(eta[:, seen]))


def _aligned(fit: Any, reference: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The cube fit's model / language positions of the item fit's models and tasks."""
    data = fit.data
    models, tasks = list(map(str, data.models)), list(map(str, data.languages))
    ref_models = list(map(str, reference.data.models))
    ref_tasks = list(map(str, reference.data.tasks))
    if sorted(models) != sorted(ref_models) or sorted(tasks) != sorted(ref_tasks):
        raise ValueError(
            f"`fits[{name!r}]`: the cube fit's models {models} and languages {tasks} are not "
            f"the item fits' models {ref_models} and tasks {ref_tasks}: the (model, task) "
            "cells differ")
    return (np.array([models.index(m) for m in ref_models]),
            np.array([tasks.index(t) for t in ref_tasks]))


def gaussian_cell_loglik(fit: Any, reference: Any, name: str) -> np.ndarray:
    """(draw, cell) log-probability of each observed cell's count under a cube fit, its
    Gaussian for the cell mean discretised to the count grid (bin width 1/n)."""
    m_idx, k_idx = _aligned(fit, reference, name)
    correct, trials, seen = _cells(reference)
    data = fit.data
    grid = np.ix_(m_idx, k_idx)
    observed = np.asarray(data.observed)[grid]
    ybar = np.asarray(data.ybar, float)[grid]
    if not np.array_equal(observed, seen) or not np.allclose(
            np.where(seen, ybar * trials, 0.0), np.where(seen, correct, 0.0), atol=1e-6):
        raise ValueError(f"`fits[{name!r}]`: the cube fit's cell means are not the item fits' "
                         "counts over trials: it was fitted to other data")
    post = fit.posterior
    if "theta" not in post:
        raise ValueError(f"`fits[{name!r}]`: the cube fit kept no cell means (theta): too "
                         "large a fit to compare on cells")
    theta = post["theta"].transpose(*POSTERIOR_SAMPLE_DIMS, MODEL, LANGUAGE).values
    theta = theta.reshape(-1, *theta.shape[2:])[:, m_idx][:, :, k_idx]
    sigma = post["sigma_seed"].transpose(*POSTERIOR_SAMPLE_DIMS, MODEL).values
    sigma = np.nan_to_num(sigma.reshape(-1, sigma.shape[-1])[:, m_idx])
    weight = np.asarray(data.seed_identified, float)[m_idx]
    n_seeds = np.maximum(np.asarray(data.n_seeds, float)[grid], 1.0)
    var = (np.nan_to_num(np.asarray(data.v_fixed, float)[grid])
           + (weight * sigma**2)[:, :, None] / n_seeds)
    sd = np.sqrt(var[:, seen])
    c, n = correct[seen], trials[seen]
    return log_bin_probability(((c - 0.5) / n - theta[:, seen]) / sd,
                               ((c + 0.5) / n - theta[:, seen]) / sd)


def loo_block(lls: dict[str, np.ndarray], n_chains: dict[str, int], dim: str,
               k_threshold: float) -> pd.DataFrame:
    """arviz-stats's comparison of pointwise log-likelihoods on one unit; Pareto k counted."""
    import arviz_stats as azs

    trees, flagged = {}, {}
    for name, ll in lls.items():
        da = xr.DataArray(ll.reshape(n_chains[name], -1, ll.shape[1]),
                          dims=("chain", "draw", dim))
        trees[name] = xr.DataTree.from_dict({
            "posterior": xr.Dataset({"mu": da.isel({dim: 0}) * 0.0}),
            "log_likelihood": xr.Dataset({"y": da})})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            k = azs.loo(trees[name], var_name="y", pointwise=True).pareto_k
        flagged[name] = int((np.asarray(k) > k_threshold).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        table = azs.compare(trees, var_name="y", round_to="none")   # raw numbers
    table["pareto_k_above_0.7"] = [flagged[n] for n in table.index]
    return table


def compare_cells(fits: dict[str, Any], k_threshold: float) -> pd.DataFrame:
    """The cube fits and the item fits without item effects, PSIS-LOO on cell counts."""
    cube = {n: f for n, f in fits.items() if is_cube_fit(f)}
    plain = {n: f for n, f in fits.items() if not is_cube_fit(f) and not f.data.has_items}
    if not plain:
        raise ValueError("`fits`: the cube's Gaussian model is compared on (model, task) cell "
                         "counts with an item-model fit without item effects (fit_items(..., "
                         "item=None)) of the same table; none was given")
    reference = next(iter(plain.values()))
    for name, fit in plain.items():
        if not (np.array_equal(fit.data.correct, reference.data.correct)
                and np.array_equal(fit.data.trials, reference.data.trials)):
            raise ValueError(f"`fits[{name!r}]` was fitted to other counts than the first fit "
                             "without item effects")
    lls = {name: binomial_cell_loglik(fit) for name, fit in plain.items()}
    lls |= {name: gaussian_cell_loglik(fit, reference, name) for name, fit in cube.items()}
    chains = {name: int(f.posterior.sizes["chain"]) for name, f in fits.items() if name in lls}
    table = loo_block(lls, chains, _CELL, k_threshold)
    paired = [n for n, f in cube.items()
              if str(f.idata["observed_data"].attrs.get("test_set_errors")) == "paired"]
    table["form"] = ["gaussian (cube)" if n in cube else fits[n].form for n in table.index]
    table.attrs = {"paired": paired}
    return table


def compare_across_units(fits: dict[str, Any], compare_items: Any, k_threshold: float
                         ) -> pd.DataFrame:
    """``compare_fits`` with a cube fit among ``fits``: one block per unit, never mixed.

    Returns a table indexed by (unit, fit): the item-unit block (``compare_items`` on the
    item fits, when at least two with one having item effects) and the cell-count block.
    ``elpd_diff``, ``dse``, ``weight`` and ``rank`` are within a block; ``attrs["units"]``
    says what one observation is in each block and ``attrs["not_compared"]`` which fit is
    not on which unit and why.
    """
    items = {n: f for n, f in fits.items() if not is_cube_fit(f)}
    blocks, units, absent = {}, {}, {}
    if len(items) >= 2 and any(f.data.has_items for f in items.values()):
        blocks[ITEM_UNIT] = compare_items(items)
        units[ITEM_UNIT] = str(blocks[ITEM_UNIT].attrs.get("unit", ""))
    for name, fit in fits.items():
        if is_cube_fit(fit):
            absent[name] = (f"not on the unit {ITEM_UNIT!r}: the cube model observes cell "
                            "means, not items")
        elif fit.data.has_items:
            absent[name] = (f"not on the unit {CELL_UNIT!r}: its item effects are shared by "
                            "the models of a task, so its cells are not conditionally "
                            "independent")
    cells = compare_cells(fits, k_threshold)
    blocks[CELL_UNIT] = cells
    units[CELL_UNIT] = ("the count of right answers in one (model, task) cell, out of "
                        "items x epochs; the Gaussian's density of the cell mean discretised "
                        "to the count grid (bin width 1/n), the binomial's pmf")
    notes = [f"{n}: test-set errors paired across models; its terms are each cell's marginal "
             "density given the cell means, whose sum is not its joint likelihood, so its "
             "PSIS-LOO is approximate" for n in cells.attrs["paired"]]
    table = pd.concat(blocks, names=["unit", "fit"])
    table.attrs = {"units": units, "not_compared": absent, "notes": notes,
                   "unit": "see attrs['units']: elpd is compared within a unit only"}
    return table

"""``compare_fits``: PSIS-LOO of item-model fits on the same items, with Pareto k flagged.

The unit left out is one item's whole response pattern (every model and epoch on it): in the
marginal model an item's effect is shared by all its responses, so its responses are not
conditionally independent and the pattern is the observation. Its pointwise log-likelihood is

    log p(y_i) = sum_m y_im eta_mk + log int N(b; 0, s^2) exp(-b Y_i - sum_m n_km
                 softplus(eta_mk - b)) db + sum_m log C(n_km, y_im),

and, for a fit without item effects on the same table, sum_m log Binom(y_im | n_km,
expit(eta_mk)) (the same unit, so the two are comparable). Under the beta-binomial family
the integrand is N(b; 0, s^2) prod_m BetaBinomial(y_im | n_km, p phi, (1 - p) phi) with p =
expit(eta_mk - b) (adaptive Gauss-Hermite per distinct (task, pattern); same unit again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd

from evaluq._dims import ITEM
from evaluq.item_model._families import family_of

if TYPE_CHECKING:
    from evaluq.item_model._fit import ItemFit

K_THRESHOLD: Final = 0.7


def _reference(fits: dict[str, ItemFit]) -> Any:
    with_items = [f for f in fits.values() if f.data.has_items]
    if not with_items:
        raise ValueError("`fits`: compare_fits needs at least one fit with items (its "
                         "per-item response patterns are the observations)")
    ref = with_items[0].data
    for name, fit in fits.items():
        d = fit.data
        same = (np.array_equal(d.correct, ref.correct) and np.array_equal(d.trials, ref.trials)
                and (not d.has_items or np.array_equal(np.asarray(d.per_item),
                                                       np.asarray(ref.per_item))))
        if not same:
            raise ValueError(f"`fits[{name!r}]` was fitted to other data than the first fit "
                             "with items; LOO compares fits of the same items only")
    return ref


def compare_fits(fits: dict[str, ItemFit]) -> pd.DataFrame:
    """Compare item-model fits of the same items by PSIS-LOO (arviz-stats), Pareto k flagged.

    The observation left out is one item's whole response pattern (every model and epoch on
    it): in the marginal model the item's effect ties its responses together. A fit without
    item effects (``item=None``) on the same table is scored on the same unit (the product
    of its binomials over the item's models), so the two are comparable. A 2PL fit
    (``discrimination=True``) is scored on the same unit, its (a_i, b_i) integrated out at
    each draw (``models/item_model.md``). Ordinal fits (``family="ordinal"``) are compared
    with ordinal fits of the same ratings: with items the unit is one item's whole rating
    pattern (all models, graders and epochs), without items one rating (one row), as
    ``attrs["unit"]`` says.

    Parameters
    ----------
    fits
        Named fits (at least two; at least one with items), all of the same table.

    Returns
    -------
    pandas.DataFrame
        :func:`arviz_stats.compare`'s table (``rank``, ``elpd``, ``p``, ``elpd_diff``,
        ``weight``, ``se``, ``dse``, ``warning``) plus ``pareto_k_above_0.7`` (items whose
        PSIS estimate is unreliable) and ``form``; ``attrs["unit"]`` says what one
        observation is.

        With a cube fit (:func:`evaluq.fit_hierarchical`, the cube's Gaussian model) among
        ``fits``: a table indexed by (``unit``, ``fit``), one block per unit and elpd
        compared within a block only. ``"item response pattern"``: the item fits, as above.
        ``"(model, task) cell count"``: the cube fits and the fits without item effects,
        on each cell's count of right answers (the Gaussian's density of the cell mean
        discretised to the count grid, bin width 1/n, against the binomial's pmf; see
        ``models/item_model.md``). ``attrs["units"]`` names each block's unit,
        ``attrs["not_compared"]`` which fit is not on which unit and why, ``attrs["notes"]``
        the approximations (paired test-set errors).

    Examples
    --------
    Fitting takes some seconds, so the example does not run here:

    >>> import evaluq as eq
    >>> t = eq.simulate_items(n_models=3, n_items=100, n_epochs=2, rng=0)
    >>> cols = dict(model="model", score="score", epoch="epoch")
    >>> with_items = eq.fit_items(t, item="item", **cols)                  # doctest: +SKIP
    >>> without = eq.fit_items(t, item=None, **cols)                       # doctest: +SKIP
    >>> eq.compare_fits({"items": with_items, "no items": without}).index[0]  # doctest: +SKIP
    'items'
    """

    if not isinstance(fits, dict) or len(fits) < 2:
        raise ValueError(f"`fits` must be a dict of at least two named ItemFit; got {fits!r}")
    not_fits = {name: type(fit).__name__ for name, fit in fits.items()
                if not (hasattr(fit, "data") and hasattr(fit, "idata"))}
    if not_fits:
        raise TypeError(f"`fits` must map names to fits of eq.fit_items; got {not_fits}")
    from evaluq.item_model._cells import compare_across_units, is_cube_fit, loo_block

    if any(is_cube_fit(fit) for fit in fits.values()):   # the cube's Gaussian model
        return compare_across_units(fits, compare_fits, K_THRESHOLD)
    ordinal = any(f.data.family == "ordinal" for f in fits.values())
    ref = _ordinal_reference(fits) if ordinal else _reference(fits)
    lls = {name: pointwise_loglik(fit, ref) for name, fit in fits.items()}
    table = loo_block(lls, {name: fit.posterior.sizes["chain"] for name, fit in fits.items()},
                      ITEM, K_THRESHOLD)
    table["form"] = [fits[n].form for n in table.index]
    if ordinal:
        table.attrs.clear()
        table.attrs.update(_ordinal_unit(ref))
        return table
    table.attrs = {"unit": "one item's whole response pattern (all models and epochs) is one "
                           "observation",
                   "n_items": int(np.asarray(ref.per_item).shape[1])}
    return table


def _ordinal_reference(fits: dict[str, ItemFit]) -> Any:
    from evaluq.item_model._ordinal_checks import ordinal_reference

    return ordinal_reference(fits)


def pointwise_loglik(fit: ItemFit, items: Any) -> np.ndarray:
    """(draw, unit) log-likelihood of each observation of ``items`` (the reference data) under
    ``fit``: its family's ``pointwise_loglik`` (``_families``)."""
    return family_of(fit.data, bool(fit.config.get("discrimination"))).pointwise_loglik(
        fit, items)


def _ordinal_unit(ref: Any) -> dict[str, Any]:
    """What one observation is for ordinal fits (``_ordinal_checks``)."""
    if ref.has_items:
        return {"unit": "one item's whole rating pattern (all models, graders and epochs; "
                        "its effect integrated out) is one observation",
                "n_items": len(ref.item_labels)}
    return {"unit": "one rating (one row of the table) is one observation: no item column",
            "n_ratings": len(ref.row_cell)}

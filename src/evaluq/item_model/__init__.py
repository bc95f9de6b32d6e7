"""The item model: per-item binary scores with crossed item effects (``models/item_model.md``).

``_data`` (table -> sufficient statistics: per (task, item total) terms), ``_model`` (the
marginal PyMC model, items integrated out by adaptive Gauss-Hermite quadrature; PyMC
imported lazily), ``_posterior`` (both scopes and the item effects from their exact
conditional), ``_fit`` (``fit_items`` / ``ItemFit`` / ``load_item_fit``), ``_diagnostics``,
``_criticism`` (predictive checks), ``_compare`` (PSIS-LOO), ``_simulate`` (tables with
known truth), ``_twopl`` (the 2PL, ``discrimination=True``: explicit item parameters);
``_ordinal`` / ``_ordinal_checks`` (the ordinal family: judge ratings with grader effects);
``_betabinomial`` (the beta-binomial family: run-to-run drift); ``_cells`` (the cube's
Gaussian model in ``compare_fits``, on cell counts).
"""

from evaluq.item_model._compare import compare_fits
from evaluq.item_model._data import ItemData, item_statistics
from evaluq.item_model._fit import ItemConvergenceWarning, ItemFit, fit_items, load_item_fit
from evaluq.item_model._simulate import simulate_items, simulate_ratings

__all__ = ["ItemConvergenceWarning", "ItemData", "ItemFit", "compare_fits", "fit_items",
           "item_statistics", "load_item_fit", "simulate_items", "simulate_ratings"]

r"""Soft metrics under label uncertainty: a Dirichlet posterior per item (formulas.md section 3).

Each item ``i`` has annotation counts ``n_i`` over ``K`` ordered classes. With a Dirichlet
prior ``alpha`` (the ``prior=`` argument) the posterior of the item's label distribution is
``p_i ~ Dir(a_i)``, ``a_i = alpha + n_i``, ``a_{i0} = sum_k a_{ik}``. The expected metrics
average a soft metric ``M(p_i, q_i)`` between the (uncertain) target distribution and a model's
prediction ``q_i`` over that posterior, so items with two annotations count as uncertain and
items with two hundred as nearly known (Magnani 2025).

Every expectation here is exact: closed forms with digamma functions (CE, KL, entropy), a closed
form with regularized incomplete beta functions (EMD) and, for the Jensen-Shannon divergence,
one-dimensional integrals over the Beta marginals evaluated by a fixed quadrature rule (exact to
about 1e-12). :func:`monte_carlo_expectation` is the paper's Monte Carlo route, kept as a
cross-check.

Conventions
-----------
- ``counts`` is an array of shape ``(n_items, K)`` (or ``(K,)`` for one item), a DataArray with
  ``item`` and ``class`` dims, or a :class:`DirichletPosterior` (then ``prior`` is not given
  again). Raw annotations go through :func:`posterior_from_annotations`.
- ``q`` holds probability rows over the ``class`` axis: shape ``(K,)`` (one prediction for every
  item), ``(n_items, K)``, or a DataArray with a ``class`` dim and optional ``item`` and other
  dims (``model`` ...), which broadcast.
- Every ``expected_*`` function returns a DataArray of per-item values with an ``item`` dim
  (plus the prediction's other dims); ``result.mean("item")`` is the data-set metric. For a 1-D
  ``counts`` the ``item`` dim is dropped (a single value).
- ``dim=`` names the item dim(s) of a DataArray ``counts`` when they are not ``item`` (for
  example ``dim="doc"`` or ``dim=("doc", "sentence")``); results keep those dims.
- Dask-backed ``counts`` / ``q`` give lazy results computed chunk by chunk over items (only
  ``class`` is made one chunk); the values are checked inside the graph, so a bad value raises
  when the result is computed. Each item's value equals the in-memory one to the last bit
  (``expected_jsd``: to about 1e-13 relative, its rule batching the marginals of a chunk).

References
----------
Magnani, A. (2025). Soft Metrics for Ordinal Label Uncertainty with Variable Sample Sizes.
ASSE 2025. Formulas and errata: ``formulas.md`` section 3.

Modules
-------
``_posterior`` (the posterior, input plumbing), ``_expectations`` (the exact expectations),
``_quadrature`` (the JSD rule), ``_monte_carlo`` (the cross-check), ``_binned`` (empirical
metric, per-bin tables), ``_ranking`` (model rankings). Every public name is exported here.
"""

from evaluq.dirichlet._binned import DEFAULT_BIN_EDGES, by_annotation_count, empirical_metric
from evaluq.dirichlet._expectations import (
    expected_cross_entropy,
    expected_emd,
    expected_entropy,
    expected_jsd,
    expected_kl,
    expected_probs,
)
from evaluq.dirichlet._monte_carlo import monte_carlo_expectation
from evaluq.dirichlet._posterior import (
    METRICS as METRICS,
)
from evaluq.dirichlet._posterior import (
    DirichletPosterior,
    counts_from_annotations,
    posterior,
    posterior_from_annotations,
)
from evaluq.dirichlet._posterior import (
    Metric as Metric,
)
from evaluq.dirichlet._ranking import model_ranking

__all__ = [
    "DEFAULT_BIN_EDGES",
    "DirichletPosterior",
    "by_annotation_count",
    "counts_from_annotations",
    "empirical_metric",
    "expected_cross_entropy",
    "expected_emd",
    "expected_entropy",
    "expected_jsd",
    "expected_kl",
    "expected_probs",
    "model_ranking",
    "monte_carlo_expectation",
    "posterior",
    "posterior_from_annotations",
]

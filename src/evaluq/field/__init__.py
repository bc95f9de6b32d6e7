"""The comparison methods the field cites, each as its source computes it (issue 19).

- :mod:`evaluq.field.rliable`: rliable's interval estimates (median, IQM, mean, optimality
  gap), performance profiles and probability of improvement, with its stratified bootstrap;
- :mod:`evaluq.field.stochastic_order`: deep-significance's Almost Stochastic Order (``aso``,
  ``multi_aso``; the module is not named after its function, so ``evaluq.field.aso`` is always
  the function);
- :mod:`evaluq.field.demsar`: Demšar's Friedman test and critical difference, as autorank;
- :mod:`evaluq.field.bayescomp`: baycomp's Bayesian tests of two models with a ROPE.

Every public name is also at the top level (``eq.aso``, ``eq.friedman_test``, ...); the old
module paths (``evaluq.rliable_methods``, ``evaluq.almost_stochastic_order``,
``evaluq.demsar``, ``evaluq.bayescomp``) import for one release with a DeprecationWarning.
The submodules import numpy, scipy, pandas and xarray only (PyMC inside
:func:`~evaluq.field.bayescomp.hierarchical_t_test`).
"""

from evaluq.field import bayescomp, demsar, rliable, stochastic_order
from evaluq.field.bayescomp import (
    BayesianComparison,
    bayesian_signed_rank,
    correlated_t_test,
    hierarchical_t_test,
)
from evaluq.field.demsar import FriedmanResult, critical_difference, friedman_test
from evaluq.field.rliable import (
    interval_estimates,
    performance_profile,
    probability_of_improvement,
)
from evaluq.field.stochastic_order import ASOResult, aso, multi_aso

__all__ = ["ASOResult", "BayesianComparison", "FriedmanResult", "aso", "bayescomp",
           "bayesian_signed_rank", "correlated_t_test", "critical_difference", "demsar",
           "friedman_test", "hierarchical_t_test", "interval_estimates", "multi_aso",
           "performance_profile", "probability_of_improvement", "rliable", "stochastic_order"]

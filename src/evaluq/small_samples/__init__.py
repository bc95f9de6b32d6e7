"""Statistics of small samples of 0/1 scores: what a few dozen items can and cannot show.

- :mod:`evaluq.small_samples.proportions`: exact intervals of a proportion (Wilson,
  Clopper-Pearson, Jeffreys, Beta posterior, CLT) with their exact coverage, McNemar's test;
- :mod:`evaluq.small_samples.paired_bayes`: the paired Bayesian comparison of two models from
  their 2x2 right/wrong table (bayes_evals' latent bivariate probit, without MCMC);
- :mod:`evaluq.small_samples.pass_k`: the unbiased pass@k and pass^k from repeated attempts;
- :mod:`evaluq.small_samples.clusters`: the intraclass correlation, design effect and
  effective N of clustered scores.

The guide "Small samples" walks through them. Every public name is also at the top level
(``eq.proportion_interval``, ``eq.mcnemar_test``, ``eq.pass_at_k``, ...; ``eq.proportions``
is the submodule); the old module paths (``evaluq.proportions``, ``evaluq.pass_k``,
``evaluq.clusters``, ``evaluq.paired_bayes``) import for one release with a
DeprecationWarning. The submodules import numpy, scipy and xarray only.
"""

from evaluq.small_samples import clusters, paired_bayes, pass_k, proportions
from evaluq.small_samples.clusters import design_effect
from evaluq.small_samples.paired_bayes import bayes_paired_comparison
from evaluq.small_samples.pass_k import pass_at_k, pass_hat_k
from evaluq.small_samples.proportions import (
    PROPORTION_METHODS,
    interval_coverage,
    mcnemar_test,
    paired_counts,
    proportion_interval,
)

__all__ = ["PROPORTION_METHODS", "bayes_paired_comparison", "clusters", "design_effect",
           "interval_coverage", "mcnemar_test", "paired_bayes", "paired_counts",
           "pass_at_k", "pass_hat_k", "pass_k", "proportion_interval",
           "proportions"]


def __getattr__(name: str) -> object:
    """``paired_probit_probability`` (in ``__all__`` until issue 35): the deprecated alias of
    :mod:`evaluq.small_samples.paired_bayes`, for one release."""
    if name == "paired_probit_probability":
        return getattr(paired_bayes, name)      # warns (DeprecationWarning)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

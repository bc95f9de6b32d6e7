"""Judge-scored evaluations corrected by a few gold (human) labels (issue 32).

:func:`ppi_mean` (one mean: gold-only, PPI, PPI++, the Bayesian chain rule, Rogan-Gladen),
:func:`judged_means` (every model of a per-item table, paired differences over shared items,
the transport check, draws for the rank and pairwise functions) and :func:`label_budget` (the
gold labels a target interval width, or power, needs). The guide "Judge scores and human
labels" (``docs/guides/judges.md``) walks through them.
"""

from evaluq.judges._budget import label_budget
from evaluq.judges._mean import PPIMeanResult, ppi_mean
from evaluq.judges._table import JudgedMeansResult, judged_means
from evaluq.judges._transport import TransportWarning

__all__ = ["JudgedMeansResult", "PPIMeanResult", "TransportWarning",
           "judged_means", "label_budget", "ppi_mean"]

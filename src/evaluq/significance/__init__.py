"""Significance tests between two systems on the same items.

:func:`bootstrap_test` runs BooStSa's Berg-Kirkpatrick test, the paired bootstrap or the
paired permutation test on hard labels, soft labels or regression outputs;
:class:`BootstrapTestResult` holds what it finds; :class:`Experiment` runs it over many
systems and runs (BooStSa's feed / run / save / load pipeline). The methods are the rows of
``_methods.METHODS``.
"""

from evaluq.significance._bootstrap import bootstrap_test
from evaluq.significance._result import BootstrapTestResult, significance_mark
from evaluq.significance.experiment import Experiment, ExperimentResult

__all__ = [
    "BootstrapTestResult",
    "Experiment",
    "ExperimentResult",
    "bootstrap_test",
    "significance_mark",
]

"""Significance tests between two systems on the same items.

:func:`bootstrap_test` runs BooStSa's Berg-Kirkpatrick test, the paired bootstrap or the
paired permutation test on hard labels, soft labels or regression outputs;
:class:`BootstrapTestResult` holds what it finds.
"""

from evaluq.significance._bootstrap import bootstrap_test
from evaluq.significance._result import BootstrapTestResult, significance_mark

__all__ = ["BootstrapTestResult", "bootstrap_test", "significance_mark"]

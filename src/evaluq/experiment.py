"""Compatibility module: :class:`Experiment` lives in :mod:`evaluq.significance.experiment`.

``evaluq.Experiment``, ``evaluq.experiment.Experiment`` and the names below keep working.
"""

from evaluq.significance.experiment import (
    OUTCOMES_FILE,
    RESULTS_FILE,
    Experiment,
    ExperimentResult,
)

__all__ = ["OUTCOMES_FILE", "RESULTS_FILE", "Experiment", "ExperimentResult"]

"""evaluq: uncertainty quantification for model evaluation.

Which differences between ML/NLP models are real? evaluq keeps results in an xarray
*evaluation cube* (model x language x seed x bootstrap) and answers with variance components,
resampling, pairwise differences, rank distributions, significance tests and closed forms.
"""

from evaluq import agreement, dirichlet, intervals, measurement_error, metrics
from evaluq._version import __version__
from evaluq.aggregate import aggregate
from evaluq.cube import (
    from_arrays,
    from_long,
    from_summary,
    higher_is_better,
    is_summary,
    open_cube,
    validate,
)
from evaluq.errors import CubeError, EvaluqWarning, NotFittedError, ScaleWarning
from evaluq.experiment import Experiment, ExperimentResult
from evaluq.io import read_table
from evaluq.pairwise import pairwise_by_language, pairwise_differences, pairwise_table
from evaluq.predictions import from_predictions
from evaluq.ranks import leaderboard, rank_distribution, significance_groups
from evaluq.resampling import ResamplePlan, resample
from evaluq.significance import BootstrapTestResult, bootstrap_test
from evaluq.simulate import simulate_cube
from evaluq.variance import variance_components, variance_table

__all__ = [
    "BootstrapTestResult",
    "CubeError",
    "EvaluqWarning",
    "Experiment",
    "ExperimentResult",
    "NotFittedError",
    "ResamplePlan",
    "ScaleWarning",
    "__version__",
    "aggregate",
    "agreement",
    "bootstrap_test",
    "dirichlet",
    "from_arrays",
    "from_long",
    "from_predictions",
    "from_summary",
    "higher_is_better",
    "intervals",
    "is_summary",
    "leaderboard",
    "measurement_error",
    "metrics",
    "open_cube",
    "pairwise_by_language",
    "pairwise_differences",
    "pairwise_table",
    "rank_distribution",
    "read_table",
    "resample",
    "significance_groups",
    "simulate_cube",
    "validate",
    "variance_components",
    "variance_table",
]

"""The hierarchical Bayesian model of an evaluation cube (design.md section 3).

PyMC, PyTensor, nutpie, numba and arviz-stats are imported lazily, inside the functions that use
them, so ``import evaluq`` does not pay for them.
"""

from evaluq.hierarchical._data import HierarchicalData, cube_statistics
from evaluq.hierarchical._fit import (
    ConvergenceWarning,
    HierarchicalFit,
    fit_hierarchical,
    load_fit,
    nutpie_available,
)
from evaluq.hierarchical._model import build_model, default_priors

__all__ = [
    "ConvergenceWarning",
    "HierarchicalData",
    "HierarchicalFit",
    "build_model",
    "cube_statistics",
    "default_priors",
    "fit_hierarchical",
    "load_fit",
    "nutpie_available",
]

"""One numpy-or-pytensor dispatch for the log-densities the Bayesian models share.

A model's log-density is written once and evaluated two ways: on PyTensor variables inside
the PyMC model (sampling), and on numpy arrays of posterior draws (the pointwise
log-likelihood, predictive checks, tests against scipy). :func:`array_module` picks the
library from the arguments, :func:`softplus` and :func:`sigmoid` are the two functions whose
spelling differs between the libraries. PyTensor is imported only when an argument is not a
numpy value (``import evaluq`` stays light).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from scipy.special import expit


def array_module(*values: Any) -> Any:
    """``numpy`` when every value is a numpy array or a Python / numpy number (int, float,
    bool included), else ``pytensor.tensor``.

    >>> array_module(np.ones(2), 1, 0.5, np.float32(2.0)) is np
    True
    """
    if all(isinstance(v, np.ndarray | np.generic | numbers.Number) for v in values):
        return np
    import pytensor.tensor as pt
    return pt


def softplus(lib: Any, x: Any) -> Any:
    """``log(1 + exp(x))`` without overflow: ``np.logaddexp(0, x)`` or ``pt.softplus``.

    >>> float(softplus(np, 0.0)) == float(np.log(2.0)), float(softplus(np, 800.0))
    (True, 800.0)
    """
    return np.logaddexp(0.0, x) if lib is np else lib.softplus(x)


def sigmoid(lib: Any, x: Any) -> Any:
    """``1 / (1 + exp(-x))``: scipy's ``expit`` or ``pt.sigmoid``.

    >>> float(sigmoid(np, 0.0))
    0.5
    """
    return expit(x) if lib is np else lib.sigmoid(x)

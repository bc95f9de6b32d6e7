"""The Monte Carlo route to the expected metrics (the label-uncertainty paper's), kept as a
cross-check of the exact ones."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import xarray as xr

from evaluq._deprecation import renamed_argument
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_int,
    check_memory,
    check_rng,
)
from evaluq.dirichlet._posterior import (
    _CHUNK,
    _SHORT,
    METRICS,
    Metric,
    _apply,
    _as_posterior,
    _as_q,
)
from evaluq.metrics._soft import (
    cross_entropy_items,
    emd_items,
    entropy,
    js_divergence_items,
    kl_items,
)


def _empirical_kernel(metric: str) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    return {
        "cross_entropy": cross_entropy_items,
        "kl": kl_items,
        "entropy": lambda p, q: entropy(p),
        "jsd": js_divergence_items,
        "emd": emd_items,
    }[metric]


def _mc_kernel(a: np.ndarray, q: np.ndarray, metric: str, n_draws: int,
               rng: np.random.Generator) -> np.ndarray:
    """Monte Carlo mean and standard error over the last axis of the output (2 values)."""
    a, q = np.broadcast_arrays(a, q)
    shape = a.shape[:-1]
    k = a.shape[-1]
    flat_a = a.reshape(-1, k)
    flat_q = q.reshape(-1, k)
    f = _empirical_kernel(metric)
    out = np.empty((flat_a.shape[0], 2))
    step = max(1, _CHUNK * 16 // n_draws)
    for start in range(0, flat_a.shape[0], step):
        sl = slice(start, start + step)
        g = rng.standard_gamma(flat_a[sl, None, :], size=(flat_a[sl].shape[0], n_draws, k))
        p = g / g.sum(axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = f(p, flat_q[sl, None, :])
        out[sl, 0] = vals.mean(axis=-1)
        out[sl, 1] = vals.std(axis=-1, ddof=1) / np.sqrt(n_draws)
    return out.reshape((*shape, 2))


@renamed_argument("alpha", "prior", meaning="the Dirichlet prior concentration")
def monte_carlo_expectation(
    counts: Any,
    q: Any = None,
    *,
    metric: Metric,
    prior: Any = None,
    n_draws: int = 1000,
    rng: RNGLike = None,
) -> xr.Dataset:
    """Monte Carlo estimate of an expected soft metric (the paper's route; a cross-check).

    Draws ``n_draws`` label distributions ``p ~ Dir(a_i)`` per item (through Gamma variates)
    and averages the empirical metric from :mod:`evaluq.metrics`.

    Parameters
    ----------
    counts, q, prior
        As in :func:`expected_cross_entropy` (``q`` is ignored for ``metric="entropy"``).
    metric
        ``"cross_entropy"``, ``"kl"``, ``"entropy"``, ``"jsd"`` or ``"emd"``.
    n_draws
        Posterior draws per item (the paper uses 1000).
    rng
        Seed or Generator; the same ``rng`` gives the same numbers.

    Returns
    -------
    xarray.Dataset
        ``estimate`` and ``standard_error`` (the SD of the draws over ``sqrt(n_draws)``), per
        item, with the same dims as the exact function's result.

    Examples
    --------
    >>> import evaluq as eq
    >>> mc = eq.dirichlet.monte_carlo_expectation([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1],
    ...                                           metric="emd", n_draws=100_000, rng=0)
    >>> exact = eq.dirichlet.expected_emd([1, 2, 4, 2, 1], [.1, .2, .4, .2, .1])
    >>> bool(abs(mc.estimate - exact) < 4 * mc.standard_error)
    True
    """
    check_choice("metric", metric, METRICS)
    n = check_int("n_draws", n_draws, minimum=2)
    gen = check_rng(rng)
    post, single = _as_posterior(counts, prior)
    if metric == "entropy":
        q = np.full(post.n_classes, 1.0 / post.n_classes) if q is None else q
    elif q is None:
        raise ValueError(f"`q` is needed for metric={metric!r}")
    # the draws are taken in one pass over the items: dask-backed input is loaded
    post = replace(post, concentration=post.concentration.compute())
    qa = _as_q(q, post).compute()
    # one item's draws (n_draws x classes) are held at once: the gammas, the probabilities
    # and the metric's temporaries
    check_memory("n_draws", 4 * 8 * n * post.n_classes, hint=" (the draws of one item are "
                 "held at once; its standard error falls as 1 / sqrt(n_draws))")
    out = _apply(lambda a, qq: _mc_kernel(a, qq, metric, n, gen), post, qa, single, "mc", {},
                 output_core_dims=("stat",), output_sizes={"stat": 2})
    ds = xr.Dataset({"estimate": out.isel(stat=0, drop=True),
                     "standard_error": out.isel(stat=1, drop=True)})
    ds.attrs = {"metric": f"E[{_SHORT[metric]}]", "method": "monte_carlo", "n_draws": n}
    return ds

"""Convergence diagnostics of an item-model fit and its frequentist comparison.

Plain functions of the posterior, the sampler statistics, the sufficient statistics and the
draws (no fit object), so the fit module imports them at module level.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import norm

from evaluq._dims import BENCHMARK_SCORE, MODEL, NEW_ITEMS_SCORE, POSTERIOR_SAMPLE_DIMS
from evaluq._fits import (
    agree,
    cells_as_models,
    convergence_problems,
    convergence_table,
    divergences,
)
from evaluq._kernels import percentile_interval
from evaluq.item_model._data import ItemData

REPORTED: Final = ("alpha", "dev", "sigma_item", "sigma_task", "sigma_model_x_task",
                   "run_drift",
                   BENCHMARK_SCORE, NEW_ITEMS_SCORE,
                   "cutpoints", "grader_effect", "grader_x_model", "sigma_grader",
                   "sigma_grader_x_model", "sigma_logdisc", "item_shape")
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
RHAT_MAX: Final = 1.01
ESS_MIN: Final = 400


ADVICE: Final = {
    "r_hat": "refit with more tuning and draws",
    "ess": "increase draws",
    "divergences": "refit with tune=2000, or tighter prior scales "
                   "(priors={'sigma_task_sigma': ..., 'sigma_mxt_sigma': ...})",
}
ONE_TASK_DIVERGENCES: Final = ("refit with tune=2000, or tighter prior scales "
                               "(priors={'sigma_item_sigma': ..., 'dev_sigma': ...})")
"""The divergence advice of a fit with one task: it has no task scales to tighten."""
LEARNED_DIVERGENCES: Final = (
    "the learned item distribution's shape is already sampled with target_accept 0.95 "
    "(about 0.2-0.3 divergences per default fit on 10 models x 1,000 bimodal or normal "
    "items); more tuning does not remove them. "
    "The scores' R-hat and ESS (the fit's diagnostics) say whether the scores are "
    "affected; when the items' shape check passes, item_distribution='normal' has no "
    "shape to diverge on")
"""The divergence advice of a fit with a learned item distribution (``item_shape`` in the
posterior): the scales the other advice names do not apply to its shape, and tuning does
not remove them (``_learned.TARGET_ACCEPT_LEARNED`` has the measurements)."""


def diagnostics(post: xr.Dataset, stats: xr.Dataset) -> pd.DataFrame:
    """The table of :meth:`ItemFit.diagnostics` from the posterior group and the sampler
    statistics."""
    learned = "item_shape" in post
    post = cells_as_models(post[[v for v in REPORTED if v in post]], skip_fixed=True)
    table = convergence_table(post, SAMPLE_DIMS)
    n_divergent = divergences(stats)
    advice = ADVICE if "sigma_task" in post else ADVICE | {
        "divergences": ONE_TASK_DIVERGENCES}
    if learned:
        advice = advice | {"divergences": LEARNED_DIVERGENCES}
    table.attrs = {"divergences": n_divergent,
                   "problems": convergence_problems(table, n_divergent, rhat_max=RHAT_MAX,
                                                    ess_min=ESS_MIN, advice=advice)}
    return table


def comparison_table(models: Any, frequentist: Sequence[tuple[float, float]],
                     post: np.ndarray, level: float) -> pd.DataFrame:
    """The frequentist comparison of an item-model fit, one row per model (``score``) and per
    pair a < b (``difference``, model a minus model b), in that order (a, then b >= a).

    ``frequentist`` holds each row's (estimate, SE), whose normal interval is set beside the
    posterior mean and equal-tailed interval (:func:`evaluq._kernels.percentile_interval`)
    of the (model, sample) ``post`` draws; ``agree`` is :func:`evaluq._fits.agree` (each
    point inside the other's interval).
    """
    z = norm.ppf(0.5 + level / 2)
    names = [str(m) for m in models]
    pairs = [(a, b) for a in range(len(names)) for b in range(a, len(names))]
    rows = []
    for (a, b), (est, se) in zip(pairs, frequentist, strict=True):   # M^2 small rows
        p = post[a] if a == b else post[a] - post[b]
        plo, phi = percentile_interval(p, level)
        rows.append({"quantity": "score" if a == b else "difference", MODEL: names[a],
                     "model_b": "" if a == b else names[b], "frequentist": est,
                     "freq_lower": est - z * se, "freq_upper": est + z * se,
                     "posterior_mean": float(p.mean()), "post_lower": float(plo),
                     "post_upper": float(phi)})
    out = pd.DataFrame(rows)
    out["agree"] = agree(out)
    return out


def compare_frequentist(data: ItemData, post: np.ndarray, level: float) -> pd.DataFrame:
    """See :meth:`ItemFit.compare_frequentist` (``post``: the (model, sample) benchmark
    draws)."""
    if data.per_item is None:
        raise ValueError("compare_frequentist needs per-item scores (a fit with item=...)")
    n_t = np.maximum(data.epochs[:, np.asarray(data.item_task)], 1.0)
    per = data.per_item / n_t                                  # (model, item) item scores
    n = per.shape[1]
    freq = []
    for a in range(per.shape[0]):
        for b in range(a, per.shape[0]):
            x = per[a] if a == b else per[a] - per[b]
            freq.append((float(x.mean()),
                         float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan))
    out = comparison_table(data.models, freq, post, level)
    out.attrs = {"confidence_level": level, "scope": "benchmark"}
    return out

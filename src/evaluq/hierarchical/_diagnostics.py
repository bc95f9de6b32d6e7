"""Convergence diagnostics of a hierarchical fit, through arviz-stats.

Plain functions of the posterior, the sampler statistics and which seed SDs are identified
(no fit object), so the fit module imports them at module level.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import MODEL, POSTERIOR_SAMPLE_DIMS
from evaluq._fits import convergence_problems, convergence_table, divergences

REPORTED: Final = ("mu", "benchmark_mean", "sigma_between", "sigma_seed", "tau_m", "tau_lang")
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
RHAT_MAX: Final = 1.01
"""R-hat above this warns (rank-normalised split R-hat; Vehtari et al. 2021, and
``arviz_stats.diagnose``'s default ``rhat_max``)."""
ESS_PER_CHAIN: Final = 100
"""Bulk or tail ESS below this times the number of chains warns (``arviz_stats.diagnose``'s
default ``ess_threshold``: 100 per chain, 400 with 4 chains)."""
BFMI_MIN: Final = 0.3
"""E-BFMI below this in a chain warns (``arviz_stats.diagnose``'s ``bfmi_threshold``)."""


def _reported(post: xr.Dataset, identified: np.ndarray) -> xr.Dataset:
    ds = post[[v for v in REPORTED if v in post]]
    if not identified.all():     # unidentified seed SDs are NaN: not reported, not diagnosed
        ds = ds.drop_vars(["sigma_seed"])
        if identified.any():
            ds["sigma_seed"] = post["sigma_seed"].isel({MODEL: np.flatnonzero(identified)})
    return ds


ADVICE: Final = {
    "r_hat": "refit with more tuning and draws (tune=2000, draws=2000)",
    "ess": "too few effective draws for stable intervals; increase draws (ESS grows with "
           "draws x chains)",
    "divergences": "the sampler could not follow the posterior (often a variance near 0 with "
                   "few languages or models); refit with tune=2000, or give tighter prior "
                   "scales (priors={'tau_m_sigma': ..., 'tau_lang_sigma': ...})",
}


def _problems(table: pd.DataFrame, n_divergent: int, bfmi: np.ndarray,
              n_chains: int) -> list[str]:
    out = convergence_problems(table, n_divergent, rhat_max=RHAT_MAX,
                               ess_min=ESS_PER_CHAIN * n_chains, advice=ADVICE)
    low = np.flatnonzero(bfmi < BFMI_MIN)
    if low.size:
        out.append(f"E-BFMI below {BFMI_MIN} in chains {low.tolist()}: the momentum "
                   "resampling explores the energy poorly; refit with more tuning (tune=2000)")
    return out


def diagnostics(post: xr.Dataset, stats: xr.Dataset, seed_identified: np.ndarray
                ) -> pd.DataFrame:
    """The table of :meth:`HierarchicalFit.diagnostics` from the posterior group, the sampler
    statistics and the (model,) mask of identified seed SDs."""
    import arviz_stats as azs

    table = convergence_table(_reported(post, seed_identified), SAMPLE_DIMS)
    n_divergent = divergences(stats)
    if "energy" in stats and stats.sizes.get("draw", 0) > 1:
        bfmi = np.atleast_1d(np.asarray(azs.bfmi(stats["energy"], sample_dims=list(SAMPLE_DIMS))))
    else:
        bfmi = np.full(stats.sizes.get("chain", 1), np.nan)
    table.attrs = {"divergences": n_divergent, "bfmi": bfmi.tolist(),
                   "problems": _problems(table, n_divergent, bfmi,
                                         int(post.sizes.get("chain", 1)))}
    return table

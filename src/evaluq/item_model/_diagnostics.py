"""Convergence diagnostics of an item-model fit and its frequentist comparison."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import norm

from evaluq._dims import BENCHMARK_SCORE, MODEL, NEW_ITEMS_SCORE, POSTERIOR_SAMPLE_DIMS
from evaluq._fits import convergence_table

if TYPE_CHECKING:
    from evaluq.item_model._fit import ItemFit

REPORTED: Final = ("alpha", "dev", "sigma_item", "sigma_task", "sigma_model_x_task",
                   "run_drift",
                   BENCHMARK_SCORE, NEW_ITEMS_SCORE,
                   "cutpoints", "grader_effect", "grader_x_model", "sigma_grader",
                   "sigma_grader_x_model", "sigma_logdisc")
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
RHAT_MAX: Final = 1.01
ESS_MIN: Final = 400


def _problems(table: pd.DataFrame, divergences: int) -> list[str]:
    out = []
    if table["r_hat"].max() > RHAT_MAX:
        where: Any = table["r_hat"].idxmax()
        out.append(f"R-hat up to {table['r_hat'].max():.3f} ({where[0]} {where[1]}) > "
                   f"{RHAT_MAX}: the chains disagree; refit with more tuning and draws")
    ess = table[["ess_bulk", "ess_tail"]].min(axis=1)
    if ess.min() < ESS_MIN:
        where = ess.idxmin()
        out.append(f"ESS down to {ess.min():.0f} ({where[0]} {where[1]}) < {ESS_MIN}: "
                   "increase draws")
    if divergences > 0:
        out.append(f"{divergences} divergent transitions: refit with tune=2000, or tighter "
                   "prior scales (priors={'sigma_task_sigma': ..., 'sigma_mxt_sigma': ...})")
    return out


def _one_label_dim(post: Any) -> Any:
    """Variables over other dims than (model,) (cutpoints, grader, grader x model) with
    their dims stacked into one ``model`` dim labelled ``dim=label,...``, as the
    convergence table takes."""
    out = {}
    for name, var in post.data_vars.items():
        if float(var.std()) == 0.0:      # a scale fixed by the priors: no R-hat / ESS
            continue
        extra = [d for d in var.dims if d not in SAMPLE_DIMS]
        if not extra or extra == [MODEL]:
            out[name] = var
            continue
        stacked = var.stack(_cell=extra)
        labels = [",".join(f"{d}={v}" for d, v in zip(extra, np.atleast_1d(key), strict=True))
                  for key in stacked["_cell"].values]
        out[name] = xr.DataArray(stacked.values, dims=(*SAMPLE_DIMS, MODEL),
                                 coords={MODEL: labels})
    return xr.Dataset(out)


def diagnostics(fit: ItemFit) -> pd.DataFrame:
    """See :meth:`ItemFit.diagnostics`."""
    post = _one_label_dim(fit.posterior[[v for v in REPORTED if v in fit.posterior]])
    table = convergence_table(post, SAMPLE_DIMS)
    stats = fit.idata["sample_stats"].to_dataset()
    divergences = int(stats["diverging"].sum()) if "diverging" in stats else 0
    table.attrs = {"divergences": divergences, "problems": _problems(table, divergences)}
    return table


def compare_frequentist(fit: ItemFit, level: float) -> pd.DataFrame:
    """See :meth:`ItemFit.compare_frequentist`."""
    data = fit.data
    if data.per_item is None:
        raise ValueError("compare_frequentist needs per-item scores (a fit with item=...)")
    n_t = np.maximum(data.epochs[:, np.asarray(data.item_task)], 1.0)
    per = data.per_item / n_t                                  # (model, item) item scores
    z = norm.ppf(0.5 + level / 2)
    draws = fit.scores("benchmark")
    post = draws.stack(sample=SAMPLE_DIMS).values              # (model, sample)
    lo_q, hi_q = (1 - level) / 2, (1 + level) / 2
    rows = []
    models = [str(m) for m in data.models]
    n = per.shape[1]
    for a in range(len(models)):                  # per model and pair: M^2 small rows
        for b in range(len(models)):
            if b < a:
                continue
            x = per[a] if a == b else per[a] - per[b]
            p = post[a] if a == b else post[a] - post[b]
            est, se = float(x.mean()), float(x.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
            plo, phi = np.quantile(p, [lo_q, hi_q])
            rows.append({"quantity": "score" if a == b else "difference",
                         MODEL: models[a], "model_b": "" if a == b else models[b],
                         "frequentist": est, "freq_lower": est - z * se,
                         "freq_upper": est + z * se, "posterior_mean": float(p.mean()),
                         "post_lower": float(plo), "post_upper": float(phi)})
    out = pd.DataFrame(rows)
    out["agree"] = (out["freq_lower"] <= out["post_upper"]) & (out["post_lower"]
                                                                <= out["freq_upper"])
    out.attrs = {"confidence_level": level, "scope": "benchmark"}
    return out

"""The item model without items (``item=None``, family binomial) against HiBayES's binomial
group model (``linear_group_binomial``: LLM, task and LLM x task effects) on the same seeded
counts (``tests/data/hibayes/binomial_counts.csv``; HiBayES's numbers in
``benchmarks/anchors/hibayes_binomial.json``, made by ``run_hibayes_binomial.py``).

The comparable quantities are the per-(LLM, task) success probabilities and the per-LLM
mean over the tasks (evaluq's benchmark-scope score: equal trials per cell), which do not
depend on how the effects are parameterised. Priors: HiBayES's are widened to N(0, 10^2)
(intercept, effect-coded main effects and interaction); evaluq's to alpha ~ N(0, 10^2),
dev ~ ZeroSumNormal(10), and HalfNormal(10) scales of the (hierarchical) task and
model x task effects. The seeded interaction is large against the cells' standard errors
(5,000 trials per cell), so the partial pooling of evaluq's hierarchical effects moves a
cell by ~0.05 posterior SD, below the Monte Carlo error compared (with 400 trials per cell
it did not: the extreme cells were pulled towards the additive fit by up to 5 MCSEs).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy.special import expit

import evaluq as eq
from evaluq.item_model import ItemConvergenceWarning

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "hibayes" / "binomial_counts.csv"
REF = ROOT / "benchmarks" / "anchors" / "hibayes_binomial.json"
PRIORS = {"alpha_mu": 0.0, "alpha_sigma": 10.0, "dev_sigma": 10.0,
          "sigma_task_sigma": 10.0, "sigma_mxt_sigma": 10.0}


def _rows(counts: pd.DataFrame) -> pd.DataFrame:
    """The counts as 0/1 rows (n_correct ones and n_total - n_correct zeros per cell)."""
    reps = counts["n_total"].to_numpy()
    out = counts.loc[counts.index.repeat(reps), ["LLM", "task"]].reset_index(drop=True)
    within = np.concatenate([np.arange(n) for n in reps])
    out["score"] = (within < np.repeat(counts["n_correct"].to_numpy(), reps)).astype(float)
    return out


def _mcse(da):
    return az.mcse(da.to_dataset(name="x"), method="mean")["x"].to_numpy()


def test_counts_file_is_the_anchors():
    ref = json.loads(REF.read_text())
    assert hashlib.sha256(DATA.read_bytes()).hexdigest() == ref["data_sha256"]
    rows = _rows(pd.read_csv(DATA))
    assert len(rows) == 60000
    assert rows.groupby(["LLM", "task"])["score"].sum().tolist() == \
        pd.read_csv(DATA)["n_correct"].tolist()


@pytest.mark.slow
def test_hibayes_binomial_group_model_agrees():
    ref = json.loads(REF.read_text())
    counts = pd.read_csv(DATA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ItemConvergenceWarning)
        fit = eq.fit_items(_rows(counts), model="LLM", item=None, score="score", task="task",
                           family="binomial", priors=PRIORS, draws=1000, tune=1000, chains=2)
    post = fit.posterior
    assert [str(m) for m in post["dev"]["model"].values] == ref["llms"]
    assert list(map(str, fit.data.tasks)) == ref["tasks"]
    eta = (post["alpha"].values[..., None, None] + post["dev"].values[..., None]
           + post["task_effect"].values[..., None, :] + post["model_x_task"].values)
    cell = xr.DataArray(expit(eta), dims=(*post["dev"].dims, "task"))
    scores = fit.scores("benchmark")
    np.testing.assert_allclose(scores.values, cell.mean("task").values, rtol=1e-10)
    worst = {}
    for name, mine in (("cell_probability", cell), ("llm_probability", scores)):
        h = ref[name]
        mean = mine.mean(("chain", "draw")).values
        se = np.sqrt(_mcse(mine) ** 2 + np.asarray(h["mcse"]) ** 2)
        z = np.abs(mean - np.asarray(h["mean"])) / se
        worst[name] = float(z.max())
        print(f"ANCHOR hibayes binomial {name}: evaluq {np.round(mean, 4).tolist()} "
              f"HiBayES {np.round(h['mean'], 4).tolist()}")
        print(f"ANCHOR hibayes binomial {name}: max |diff| {np.abs(mean - h['mean']).max():.5f}"
              f", max |diff| / combined MCSE {z.max():.2f}; posterior SD ratio "
              f"{np.round(mine.std(('chain', 'draw')).values / h['sd'], 3).ravel().tolist()}")
        assert (z < 4.5).all(), (name, mean, h["mean"])
    assert ref["divergences"] == 0

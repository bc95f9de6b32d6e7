"""HiBayES's binomial group model on seeded counts -> hibayes_binomial.json.

Run with the HiBayES venv (``benchmarks/anchors/setup_hibayes.sh``):

    /work/peers/hibayes/bin/python benchmarks/anchors/run_hibayes_binomial.py

Data: ``make_counts()`` below (numpy only, seed ``SEED``): 4 LLMs x 3 tasks, ``N_TRIALS``
(5,000) trials per cell, true logit = 0.2 + LLM effect (-0.6, -0.2, 0.3, 0.5) + task effect
(-0.4, 0, 0.4) + an LLM x task effect drawn N(0, 1), counts drawn binomial. It is written to
``tests/data/hibayes/binomial_counts.csv`` (columns LLM, task, n_correct, n_total) and its
sha256 recorded. The interaction is large against the cells' standard errors (~0.03-0.06 on
the logit) on purpose: evaluq's task and model x task effects are hierarchical (scales
learned), HiBayES's are fixed-scale, and partial pooling moves a cell by about
se^2 / (se^2 + sigma^2) of its interaction, i.e. ~se |g| / sigma^2 posterior SDs: ~0.05 SD
here, below the Monte Carlo error compared. (With 400 trials per cell and an N(0, 0.8^2)
interaction it was ~0.2 SD, and the extreme cells differed by up to 5.4 combined MCSEs,
pulled towards the additive fit: the hierarchy, not an error.)

Model: HiBayES's ``linear_group_binomial`` (its Python API, HiBayES's own model function, run
by numpyro's NUTS): logit p = intercept + LLM effect + task effect + LLM x task effect, all
effect-coded (sum to zero), with the priors widened to N(0, 10^2) for the intercept, the
main effects and the interaction (HiBayES's defaults, N(0, 1), N(0, 0.5^2), N(0, 0.3^2),
would pull the cells towards the grand mean; the ordinal anchor widens the same way).
2 chains x 1000 draws after 1000 warm-up, seed 0.

Recorded (means, SDs, MCSEs of the mean): the per-(LLM, task) success probabilities
sigmoid(logit p) and the per-LLM mean over the tasks (equal trials per cell, so this is
evaluq's benchmark-scope score of ``fit_items(..., item=None)``), both invariant to how the
effects are parameterised; HiBayES commit, numpyro/jax/arviz versions.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

SEED = 20261124
N_TRIALS = 5000
LLMS = ("llm_a", "llm_b", "llm_c", "llm_d")
TASKS = ("task_x", "task_y", "task_z")
LLM_EFFECT = (-0.6, -0.2, 0.3, 0.5)
TASK_EFFECT = (-0.4, 0.0, 0.4)
WIDE = {"prior_intercept_scale": 10.0, "prior_main_effects_scale": 10.0,
        "prior_interaction_scale": 10.0}
SRC = Path(os.environ.get("HIBAYES_SRC", "/work/peers/hibayes-src"))
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hibayes" / "binomial_counts.csv"
OUT = Path(__file__).with_name("hibayes_binomial.json")


def make_counts() -> tuple[list[tuple[str, str, int, int]], np.ndarray]:
    """The seeded counts (rows LLM, task, n_correct, n_total) and the true probabilities."""
    gen = np.random.default_rng(SEED)
    inter = gen.normal(0.0, 1.0, size=(len(LLMS), len(TASKS)))
    logit = 0.2 + np.add.outer(LLM_EFFECT, TASK_EFFECT) + inter
    p = 1.0 / (1.0 + np.exp(-logit))
    k = gen.binomial(N_TRIALS, p)
    rows = [(m, t, int(k[i, j]), N_TRIALS) for i, m in enumerate(LLMS)
            for j, t in enumerate(TASKS)]
    return rows, p


def _write_data(rows: list[tuple[str, str, int, int]]) -> str:
    text = "LLM,task,n_correct,n_total\n" + "".join(f"{m},{t},{k},{n}\n" for m, t, k, n in rows)
    DATA.write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


def _summ(da, mcse_fn) -> dict:
    return {"mean": np.asarray(da.mean(("chain", "draw"))).tolist(),
            "sd": np.asarray(da.std(("chain", "draw"))).tolist(),
            "mcse": np.asarray(mcse_fn(da)).tolist()}


def main() -> None:
    import arviz as az
    import jax
    import jax.numpy as jnp
    import numpyro
    from hibayes.model.models import linear_group_binomial
    from numpyro.infer import MCMC, NUTS

    rows, p_true = make_counts()
    sha = _write_data(rows)
    feats = {"obs": jnp.array([r[2] for r in rows]), "n_total": jnp.array([r[3] for r in rows]),
             "LLM_index": jnp.array([LLMS.index(r[0]) for r in rows]), "num_LLM": len(LLMS),
             "task_index": jnp.array([TASKS.index(r[1]) for r in rows]),
             "num_task": len(TASKS)}
    model = linear_group_binomial(main_effects=["LLM", "task"], interactions=[("LLM", "task")],
                                  **WIDE)
    mcmc = MCMC(NUTS(model), num_warmup=1000, num_samples=1000, num_chains=2,
                chain_method="sequential", progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), feats)
    idata = az.from_numpyro(mcmc)
    post = idata.posterior
    logit = (post["intercept"] + post["LLM_effects"].rename({"LLM_effects_dim_0": "LLM"})
             + post["task_effects"].rename({"task_effects_dim_0": "task"}))
    inter = post["LLM_task_effects"]
    logit = logit + inter.rename(dict(zip(inter.dims[2:], ("LLM", "task"), strict=True)))
    cell = (1.0 / (1.0 + np.exp(-logit))).transpose("chain", "draw", "LLM", "task")
    per_llm = cell.mean("task")

    def mcse(da):
        return az.mcse(da.to_dataset(name="x"), method="mean")["x"]

    result = {"peer": "HiBayES", "repository": "https://github.com/UKGovernmentBEIS/hibayes",
              "commit": (SRC / "COMMIT").read_text().strip(),
              "versions": {"numpyro": numpyro.__version__, "jax": jax.__version__,
                           "arviz": az.__version__},
              "data": "tests/data/hibayes/binomial_counts.csv (make_counts, seed "
                      f"{SEED})", "data_sha256": sha,
              "model": "linear_group_binomial(main_effects=[LLM, task], interactions="
                       "[(LLM, task)]), effect coding; 2 chains x 1000 draws (1000 warm-up), "
                       "NUTS seed 0", "priors": WIDE,
              "llms": list(LLMS), "tasks": list(TASKS), "p_true": p_true.tolist(),
              "divergences": int(idata.sample_stats["diverging"].sum()),
              "max_r_hat": float(az.rhat(cell.to_dataset(name="x"))["x"].max()),
              "cell_probability": _summ(cell, mcse), "llm_probability": _summ(per_llm, mcse)}
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print("per-LLM", np.round(result["llm_probability"]["mean"], 4),
          "mcse", np.round(result["llm_probability"]["mcse"], 5))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

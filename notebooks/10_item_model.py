# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The item model: a Bayesian model where the data are
#
# A harness log holds per-item scores: for each model, item and epoch a 0/1 answer. The cube
# model (`eq.fit_hierarchical`) sees only each model's mean per task, with a Gaussian around
# it. With few items near 95% accuracy that Gaussian is a poor description: a proportion
# near 1 is skewed and bounded, and the items themselves (some hard for every model) are
# a large source of variance shared by the models.
#
# This notebook runs Inspect-made logs through the item model (`eq.fit_items`: a binomial
# likelihood with crossed item effects, integrated out), its model criticism (PSIS-LOO with
# `eq.compare_fits`, prior and posterior predictive checks), beside the cube model on the
# same data and the frequentist answers (exact proportion intervals, McNemar, clustered
# means). Everything is small (30 questions, three epochs, three models) and quick.

# %% [markdown]
# ## Inspect logs
#
# As in notebook 08, Inspect runs in a child process (it refuses to run inside Jupyter without
# `ipywidgets`): three mock models (Inspect's `mockllm` provider, offline) answer 30
# questions, three on each of 10 passages, three epochs each. Each is right with probability
# `logistic(skill - difficulty)`, the difficulty shared by all models; the skills put the
# accuracies near 90-95%.

# %%
# %matplotlib inline
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import xarray as xr

import evaluq as eq

INSPECT_SCRIPT = """
import sys, warnings, zlib
import numpy as np
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate, solver

N_PASSAGES, N_QUESTIONS, EPOCHS = 10, 3, 3
SKILL = {"alpha": 3.6, "beta": 3.0, "gamma": 2.6}
rng = np.random.default_rng(7)
difficulty = rng.normal(0, 2.0, (N_PASSAGES, N_QUESTIONS))
colours = ["red", "green", "blue", "white"]
samples = [Sample(input=f"{p}-{q}| Passage {p}, question {q}: which colour?",
                  target=colours[(p + q) % 4], id=f"p{p:02d}-q{q}",
                  metadata={"passage": f"P{p:02d}"})
           for p in range(N_PASSAGES) for q in range(N_QUESTIONS)]

@solver
def tag_epoch():
    async def solve(state, generate_):
        state.user_prompt.text = f"{state.epoch}-{state.user_prompt.text}"
        return state
    return solve

def mock(name):
    def answer(messages, tools, tool_choice, config):
        epoch, p, q = (int(x) for x in messages[-1].text.split("|")[0].split("-"))
        u = np.random.default_rng([zlib.crc32(name.encode()), p, q, epoch]).random()
        logit = SKILL[name] - difficulty[p, q]
        content = colours[(p + q) % 4] if u < 1 / (1 + np.exp(-logit)) else "purple"
        return ModelOutput.from_content(model=name, content=content).model_copy(
            update={"usage": ModelUsage(input_tokens=12, output_tokens=1, total_tokens=13)})
    return get_model(f"mockllm/{name}", custom_outputs=answer)

task = Task(dataset=MemoryDataset(samples, name="colours"), solver=[tag_epoch(), generate()],
            scorer=match(), epochs=EPOCHS, name="colours")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    logs = inspect_eval(task, model=[mock(m) for m in SKILL], log_dir=sys.argv[1],
                        display="none", log_realtime=False)
for log in logs:
    print(log.eval.model, log.status)
"""

work = Path(tempfile.mkdtemp())
log_dir = work / "logs"
(work / "make_logs.py").write_text(INSPECT_SCRIPT)
run = subprocess.run([sys.executable, str(work / "make_logs.py"), str(log_dir)],
                     capture_output=True, text=True, check=True)
print(run.stdout)
table = eq.read_inspect_logs(log_dir, metadata=["passage"])
table.groupby("model")["match"].agg(["mean", "size"])

# %% [markdown]
# ## The frequentist answers
#
# Each model's accuracy on the first epoch (30 items) with three intervals. The CLT (Wald)
# interval is symmetric and can pass 1; Wilson and Clopper-Pearson stay inside [0, 1] and
# cover as they claim (see the guide "Which model for your data").

# %%
first = table[table["epoch"] == table["epoch"].min()]
right = first.pivot(index="item", columns="model", values="match")
x, n = right.sum().to_numpy(), len(right)
pd.DataFrame({method: [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in
                       eq.proportion_interval(x, n, method=method).values]
              for method in ("clt", "wilson", "clopper-pearson")},
             index=pd.Index(right.columns, name="model")).assign(accuracy=x / n)

# %% [markdown]
# McNemar's exact test of every pair on the same items (first epoch), and the means over all
# epochs with standard errors clustered by passage (`eq.item_means`):

# %%
correct = xr.DataArray(right.T.to_numpy(), dims=("model", "item"),
                       coords={"model": right.columns.to_numpy()})
eq.mcnemar_test(correct)[["only_a_correct", "only_b_correct", "pvalue"]].to_dataframe()

# %%
cols = {"model": "model", "item": "item", "score": "match", "seed": "epoch"}
means = eq.item_means(table, cluster="passage", **cols)
means[["mean", "se", "se_iid"]].to_dataframe()

# %% [markdown]
# ## The item model
#
# `eq.fit_items` fits logit P(right) = alpha + d_model - b_item with b_item ~ N(0,
# sigma_item^2), crossed with the models; the item effects are integrated out by
# Gauss-Hermite quadrature, so the sampler sees four parameters. Two scopes:
# `benchmark` (these 30 items) and `new_items` (a new question from the same population).

# %%
item_cols = {"model": "model", "item": "item", "score": "match", "epoch": "epoch"}
quick = {"draws": 500, "tune": 500, "chains": 2, "rng": 0}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", eq.errors.EvaluqWarning)  # the advice is in the fit
    fit = eq.fit_items(table, **item_cols, **quick)
fit

# %% [markdown]
# With one task both scopes order the models alike (by d_model), so P(best) is the same;
# the new-items intervals above are wider, as they carry the draw of the items.

# %%
pd.DataFrame({scope: fit.rank_probabilities(scope)["p_best"].to_series()
              for scope in ("benchmark", "new_items")}).rename_axis("P(best)")

# %%
pw = fit.pairwise_differences("benchmark")
pw["p_greater"].to_pandas().round(3)

# %% [markdown]
# The variance components: sigma_item on the logit scale, and per model the correlation of
# two epochs of one item (ICC), the design effect and the effective number of responses.

# %%
vc = fit.variance_components()
vc[["icc_epochs", "design_effect", "effective_n"]].mean(("chain", "draw")).to_dataframe()

# %% [markdown]
# ## Model criticism
#
# Predictive checks, each pass/fail with its statistic: per-model accuracy, the spread of
# the items' mean score, and the agreement between epochs.

# %%
fit.predictive_checks()[["check", "statistic", "model", "observed", "lower", "upper",
                         "p_value", "passed"]]

# %% [markdown]
# PSIS-LOO: the item model against the same binomial without item effects, and the cube's
# Gaussian model (`eq.fit_hierarchical` on the cube `eq.from_items` builds from the same
# logs). The Gaussian observes cell means, not items, so it cannot be scored on the item
# unit; `compare_fits` puts it in its own block, on the unit both it and the binomial without
# item effects can evaluate: the count of right answers in each (model, task) cell (the
# Gaussian's density discretised to the count grid). elpd is compared within a block only.

# %%
cube = eq.from_items(table, model="model", item="item", score="match", seed="epoch",
                     cluster="passage", n_boot=500)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", eq.errors.EvaluqWarning)
    no_items = eq.fit_items(table, **{**item_cols, "item": None}, **quick)
    gaussian = eq.fit_hierarchical(cube, draws=500, tune=500, chains=2, rng=0)
loo = eq.compare_fits({"binomial, item effects": fit, "binomial, no item effects": no_items,
                       "cube model (Gaussian)": gaussian})
loo[["rank", "elpd", "elpd_diff", "dse", "pareto_k_above_0.7", "form"]]

# %%
loo.attrs["units"]

# %% [markdown]
# Read each block on its own. On the item unit the two binomials differ by a couple of elpd
# with a standard error as large: 30 items near 95% say little about the item effects. On the
# cell unit this one-task benchmark has three observations (one cell per model), too few to
# choose between the Gaussian and the binomial: the Pareto k count says the leave-one-out
# estimates are unreliable. With several tasks the cell block has more to go on.

# %% [markdown]
# ## The cube model beside the item model
#
# The same comparison from the cube model: its posterior of each model's benchmark mean
# and the probability of being best, next to the item model's.

# %%
pd.DataFrame({
    "cube model mean": gaussian.posterior["benchmark_mean"].mean(("chain", "draw")).values,
    "item model mean": fit.scores("benchmark").mean(("chain", "draw")).values,
    "cube P(best)": gaussian.rank_probabilities("benchmark")["p_best"].values,
    "item P(best)": fit.rank_probabilities("benchmark")["p_best"].values},
    index=pd.Index(fit.data.models, name="model")).round(3)

# %% [markdown]
# ## The report
#
# `eq.report(..., bayes=True, item_scores=...)` (and `evaluq report LOGS --from inspect
# --bayes`) fits the item model instead of the cube model when it has the items, and shows
# the posterior, the LOO comparison and the predictive checks.

# %%
scores = eq.item_scores(table, model="model", item="item", score="match", seed="epoch")
rep = eq.report(cube, None, n_resamples=500, bayes=True, item_scores=scores,
                progress=False)
[s.title for s in rep.sections["match"]]

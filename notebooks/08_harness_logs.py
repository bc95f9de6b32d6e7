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
# # From your harness's logs to a paper table
#
# Most comparisons of language models today run an evaluation harness, such as
# [Inspect AI](https://inspect.aisi.org.uk/) or
# [lm-evaluation-harness](https://github.com/EleutherAI/lm-evaluation-harness), and what they
# leave behind is a **log of per-item scores**: for each model, task and epoch one score per
# sample, the samples often grouped (several questions on one passage). This notebook goes
# from such logs to the error bars the recent literature asks for (Miller 2024, *Adding Error
# Bars to Evals*): means with standard errors that respect the clusters, paired differences
# between models, ranks, and a table for the paper.
#
# The logs are made here, by Inspect itself: three mock models (Inspect's `mockllm`
# provider, offline, no API key) answer 64 questions, four on each of 16 passages, three times
# each (epochs). Each mock answers right with a probability set by its skill, the question's
# difficulty and the passage's difficulty, so questions on one passage are correlated: the
# situation where item-level standard errors that assume independent items are too small.
# The last sections ask how small a difference this design can detect, and read the sample
# logs of lm-evaluation-harness the same way.

# %% [markdown]
# Inspect refuses to run inside Jupyter unless `ipywidgets` is installed, so the evaluation runs
# in a child Python process: the script below is the whole Inspect side (in your own
# notebook, with `ipywidgets`, the same code runs in a cell). It writes one `.eval` log per
# model into `log_dir`.

# %%
# %matplotlib inline
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import evaluq as eq

INSPECT_SCRIPT = """
import sys, warnings, zlib
import numpy as np
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate, solver

N_PASSAGES, N_QUESTIONS, EPOCHS = 16, 4, 3
SKILL = {"alpha": 1.2, "beta": 0.7, "gamma": 0.5}
rng = np.random.default_rng(1)
passage_difficulty = rng.normal(0, 1.0, N_PASSAGES)
question_difficulty = rng.normal(0, 0.7, (N_PASSAGES, N_QUESTIONS))
colours = ["red", "green", "blue", "white"]
samples = [Sample(input=f"{p}-{q}| Passage {p}, question {q}: which colour?",
                  target=colours[(p + q) % 4], id=f"p{p:02d}-q{q}",
                  metadata={"passage": f"P{p:02d}"})
           for p in range(N_PASSAGES) for q in range(N_QUESTIONS)]

@solver
def tag_epoch():
    # the epoch goes into the prompt, so that the mock answers depend on it
    async def solve(state, generate_):
        state.user_prompt.text = f"{state.epoch}-{state.user_prompt.text}"
        return state
    return solve

def mock(name):
    # right with probability logistic(skill - difficulty), one draw per question and epoch
    # (seeded by them: the same on every run); a usage, so that no tokenizer is downloaded
    def answer(messages, tools, tool_choice, config):
        epoch, p, q = (int(x) for x in messages[-1].text.split("|")[0].split("-"))
        u = np.random.default_rng([zlib.crc32(name.encode()), p, q, epoch]).random()
        logit = SKILL[name] - passage_difficulty[p] - question_difficulty[p, q]
        content = colours[(p + q) % 4] if u < 1 / (1 + np.exp(-logit)) else "purple"
        return ModelOutput.from_content(model=name, content=content).model_copy(
            update={"usage": ModelUsage(input_tokens=12, output_tokens=1, total_tokens=13)})
    return get_model(f"mockllm/{name}", custom_outputs=answer)

task = Task(dataset=MemoryDataset(samples, name="colours"), solver=[tag_epoch(), generate()],
            scorer=match(), epochs=EPOCHS, name="colours")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # inspect_ai's retry setup
    logs = inspect_eval(task, model=[mock(m) for m in SKILL], log_dir=sys.argv[1],
                        display="none", log_realtime=False)
for log in logs:
    print(log.eval.model, log.status, log.location.rsplit("/", 1)[-1])
"""

work = Path(tempfile.mkdtemp())
log_dir = work / "logs"
(work / "make_logs.py").write_text(INSPECT_SCRIPT)
run = subprocess.run([sys.executable, str(work / "make_logs.py"), str(log_dir)],
                     capture_output=True, text=True, check=True)
print(run.stdout)

# %% [markdown]
# ## Read the logs
#
# `eq.read_inspect_logs` reads a folder (or files) of `.eval` / `.json` logs with Inspect's
# own log reader and returns one row per model, task, sample and epoch, with one column per
# scorer (`match` here; Inspect's `C` / `I` letters become 1 / 0 through Inspect's own
# `value_to_float`) and the sample metadata asked for. Anything odd (a run that did not
# finish, a score missing for some samples, a sample twice, two logs of one model and task)
# is an error or a warning that names the file, the model and the sample.

# %%
table = eq.read_inspect_logs(log_dir, metadata=["passage"])
table.head()

# %% [markdown]
# Where the numbers came from travels with the table (and into every cube built from it):

# %%
{k: v for k, v in table.attrs.items() if k != "harness_logs"}

# %% [markdown]
# ## Means and paired differences, with clustered standard errors
#
# `eq.item_means` gives each model's mean over items with two standard errors: `se_iid`
# treats the 64 questions as independent (the central limit theorem); `se` is cluster-robust
# over the 16 passages (CR1, what statsmodels' OLS with clustered covariance gives). The
# epochs are averaged within each question first; `var_within` (variance over epochs) and
# `var_item` (variance of the questions' expected scores) say which of the two more epochs
# or more questions would shrink.

# %%
columns = dict(model="model", item="item", score="match", seed="epoch", cluster="passage")
items = eq.item_means(table, **columns)
items[["mean", "se", "se_iid", "var_within", "var_item"]].to_dataframe().round(4)

# %% [markdown]
# The clustered SEs are larger than the iid ones: questions on one passage succeed and fail
# together. For a difference between two models, the SE of the *paired* difference,
# $\sqrt{\mathrm{var}_A + \mathrm{var}_B - 2\,\mathrm{cov}_{AB}}$, is smaller than the two
# models' SEs combined as if independent, because the same questions are hard for both:

# %%
tables = eq.reporting.sections.item_tables(items)
diffs = tables["item_differences"]
se = items["se"].to_series()
unpaired = [np.hypot(se[a], se[b]) for a, b in diffs.index]
diffs.assign(se_unpaired=unpaired)[["difference", "se_difference", "se_unpaired",
                                    "correlation", "lower", "upper", "z"]].round(4)

# %% [markdown]
# ## The cube, and the whole report
#
# `eq.from_items` turns the same table into an evaluation cube: `score` is each model's mean
# per epoch, `boot_score` its replicates on resampled sets of passages (whole clusters, the
# same draw for every model and epoch, so the differences stay paired). Every analysis of
# evaluq takes it; `eq.report` runs them all, with the per-item section from `items`.

# %%
cube = eq.from_items(table, **columns, n_boot=1000, rng=0)
cube

# %%
out = Path(tempfile.mkdtemp()) / "report.html"
rep = eq.report(cube, out, items=items, replication="nonparametric", languages="fixed",
                n_resamples=2000, rng=0, progress=False)
analysis = rep.analyses["match"]
analysis.leaderboard.round(3)

# %% [markdown]
# The leaderboard's `sd` comes from the paired cluster bootstrap, with the epochs also
# redrawn as seeds; it is somewhat wider than the analytic `se` above, which averages the
# epochs within each question before taking the SE. The rank distribution over the same
# resamples:

# %%
analysis.ranks["probability"].to_pandas().round(3)

# %% [markdown]
# ## Power: what this design can detect, and what more compute buys
#
# The report's power section reads the cube's variance: the smallest true difference between
# two models that this evaluation (64 questions, 3 epochs) detects with probability 0.8 at
# level 0.05, and whether doubling the questions or the epochs shrinks it more:

# %%
eq.power.minimum_detectable_effect(cube).to_pandas().round(3)

# %%
allocation = eq.power.compute_allocation(cube)
print(allocation.attrs["summary"])
allocation.round(3)

# %% [markdown]
# The same from the command line, on the folder of logs (add `--bayes` for the hierarchical
# model's posterior beside it):
#
# ```
# evaluq report logs/ --from inspect --cluster passage --out report/
# ```

# %%
from evaluq.cli import main

report_dir = Path(tempfile.mkdtemp()) / "report"
main(["report", str(log_dir), "--from", "inspect", "--cluster", "passage",
      "--out", str(report_dir), "--quiet", "--format", "html,md,tex"])

# %% [markdown]
# ## The paper table
#
# Every table carries its caption (what the uncertainty is); `eq.tables` writes it as
# Markdown, LaTeX or CSV:

# %%
print(eq.tables.to_latex(diffs[["difference", "se_difference", "lower", "upper"]],
                         label="tab:differences", digits=3))

# %% [markdown]
# ## lm-evaluation-harness
#
# `eq.read_lm_eval_samples` reads lm-eval's `--log_samples` output (the
# `samples_<task>_<date>.jsonl` files with the `results_<date>.json` beside them) into the
# same table, without lm-eval installed. The logs below were made by lm-eval 0.4.13 itself
# (its `dummy` model on two local tasks; `tests/data/lm_eval/README.md` has the command). The
# mean of each column is lm-eval's own aggregate in its results file.

# %%
lm_logs = Path("..") / "tests" / "data" / "lm_eval" / "logs"
lm = eq.read_lm_eval_samples(lm_logs, metadata="passage")
lm.groupby(["model", "task"])[["acc", "acc_norm", "exact_match,strict"]].mean().round(3)

# %%
eq.item_means(lm[lm["task"] == "toy_mc"], model="model", item="item", score="acc",
              cluster="passage")[["mean", "se", "se_iid"]].to_dataframe().round(3)

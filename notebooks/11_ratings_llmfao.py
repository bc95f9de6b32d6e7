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
# # Ratings from pairwise votes on LLMFAO
#
# Arena-style evaluation shows a judge two answers to the same prompt and asks which is
# better. The votes become ratings through the Bradley-Terry model; the question this
# notebook asks is how sure those ratings are.
#
# The data: LLMFAO (Dmitry Ustalov, 2023; CC BY 4.0, built on llmonitor.com's Crowdsourced LLM
# Benchmark, CC BY 4.0): 8,931 crowd votes on the answers of 59 models to 13 prompts, five
# annotators per pair, 124 annotators in all. evaluq ships the copy that evalica tests
# against, with the columns `prompt`, `worker`, `left`, `right` and `winner`
# (`tests/data/llmfao/README.md` has the source and the attribution).

# %%
# %matplotlib inline
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

import evaluq as eq
from evaluq.plots import rank_heatmap
from evaluq.ratings import fit_ratings

votes = pd.read_csv(Path("..") / "tests" / "data" / "llmfao" / "llmfao.csv", dtype=str)
print(f"{len(votes):,} votes, {pd.concat([votes.left, votes.right]).nunique()} models, "
      f"{votes.prompt.nunique()} prompts, {votes.worker.nunique()} annotators")
votes.winner.value_counts(normalize=True).round(3)

# %% [markdown]
# The winner is `left`, `right` or `tie`: `outcomes=` maps these labels to evaluq's
# (`model_a`, `model_b`, `tie`). 39% of the votes are ties, so how ties enter the model
# matters.

# %%
columns = {"model_a": "left", "model_b": "right", "winner": "winner",
           "outcomes": {"left": "model_a", "right": "model_b", "tie": "tie"}}

# %% [markdown]
# ## Two tie rules
#
# `ties="davidson"` (what the default `"auto"` picks when the votes hold ties, as LLMFAO's do)
# fits Davidson's (1970) tie model: a tie is likelier between
# models of similar strength, with one fitted tie parameter $\nu$:
# $P(i \text{ beats } j) = \pi_i / D$, $P(\text{tie}) = \nu\sqrt{\pi_i\pi_j} / D$,
# $D = \pi_i + \pi_j + \nu\sqrt{\pi_i\pi_j}$. evalica fits the same model as `newman` and
# reports $v = \nu / 2$ (0.7399 on LLMFAO). `ties="half"` counts a tie as half a win for
# each side, as evalica's `bradley_terry` and LMArena's arena-rank do.
#
# First without clustering: every vote independent, as evalica and arena-rank assume.

# %%
davidson_iid = fit_ratings(votes, ties="davidson", **columns)
half_iid = fit_ratings(votes, ties="half", **columns)
print(f"Davidson nu = {float(davidson_iid.tie_parameter):.4f} "
      f"(evalica's v = nu / 2 = {float(davidson_iid.tie_parameter_newman):.4f})")
davidson_iid

# %% [markdown]
# Both rules give ratings on arena-rank's Elo scale (400 points = odds of 10 to 1; the
# ratings average 1000). They order the models alike, but not on the same scale:

# %%
both = pd.DataFrame({"davidson": davidson_iid.rating.to_series(),
                     "half": half_iid.rating.to_series()})
slope = np.polyfit(both.half - 1000, both.davidson - 1000, 1)[0]
print(f"Spearman correlation {both.corr(method='spearman').iloc[0, 1]:.3f}; "
      f"Davidson ratings = {slope:.2f} x half-rule ratings (least squares through 1000)")

# %% [markdown]
# ## Votes are not independent
#
# Every pair was judged on one of only 13 prompts, by one of 124 annotators. Treating the
# votes as independent pretends there were 8,931 separate trials. `cluster=` makes the
# sandwich covariance cluster-robust (CR1): the scores of each cluster's votes are summed
# before their outer products. But a cluster-robust covariance from G clusters has rank at
# most G - 1, and the Davidson fit of 59 models has 59 free parameters (58 rating
# differences and the tie parameter): 13 prompts cannot carry it, and evaluq refuses rather
# than give some differences a variance of 0:

# %%
try:
    fit_ratings(votes, ties="davidson", cluster="prompt", **columns)
except ValueError as err:
    print(err)

# %% [markdown]
# The annotators are enough clusters to estimate the covariance (124 for 59 free
# parameters), though still few: evaluq warns, and keeps every direction of the covariance
# at least as wide as the independent-votes one.

# %%
davidson_worker = fit_ratings(votes, ties="davidson", cluster="worker", **columns)
half_worker = fit_ratings(votes, ties="half", cluster="worker", **columns)
print("SE with cluster='worker' / SE with independent votes:")
for rule, clustered, iid in (("davidson", davidson_worker, davidson_iid),
                             ("half", half_worker, half_iid)):
    ratio = (clustered.se / iid.se).to_series()
    print(f"  ties={rule!r:11} median {ratio.median():.2f}, "
          f"range {ratio.min():.2f}-{ratio.max():.2f}")

# %%
order = davidson_worker.rating.to_series().sort_values().index
fig = Figure(figsize=(7.0, 10.0), layout="constrained")
ax = fig.subplots()
y = np.arange(len(order))
for offset, fit, label in ((-0.18, davidson_iid, "independent votes"),
                           (0.18, davidson_worker, "cluster = worker")):
    ci = fit.ci.sel(model=list(order)).values
    rating = fit.rating.sel(model=list(order)).values
    ax.errorbar(rating, y + offset, xerr=[rating - ci[:, 0], ci[:, 1] - rating], fmt="o",
                ms=3, lw=1, label=label)
ax.set_yticks(y, order, fontsize=7)
ax.set_xlabel("rating (Elo scale), 95% interval")
ax.set_title("LLMFAO, Davidson ties")
ax.legend(loc="lower right")
fig

# %% [markdown]
# ## Ranks and tiers
#
# For ranks we need the joint uncertainty of all the ratings: a cluster bootstrap resamples
# whole annotators (1,000 resamples, all refitted in one batched fit) and gives draws
# (resample, model) that evaluq's rank functions take unchanged.

# %%
boot = fit_ratings(votes, ties="davidson", cluster="worker", interval="bootstrap",
                   n_resamples=1000, **columns)
n_pairs = 59 * 58 // 2
print(f"{n_pairs} pairs; smallest bootstrap p-value 2 / 1001 = {2 / 1001:.4f}; "
      f"times Holm's {n_pairs}: {2 / 1001 * n_pairs:.1f}")

# %% [markdown]
# The tiers come from pairwise tests on the draws. With 59 models there are 1,711 pairs, and
# a bootstrap p-value cannot fall below 2 / (B + 1): after Holm's family-wise adjustment no
# pair of models could be separated with 1,000 resamples (every model would share tier 1).
# The false discovery rate (Benjamini-Hochberg, `adjustment="bh"`) is the workable error
# rate for a board this size:

# %%
board = eq.leaderboard(boot.draws, observed=boot.rating, adjustment="bh")
print("models per tier:", board.tier.value_counts().sort_index().to_dict())
board.head(15)

# %% [markdown]
# The ranks are wide. The rank heatmap of the 20 best-rated models
# (P(rank = r) over the cluster bootstrap):

# %%
ranks = eq.rank_distribution(boot.draws, observed=boot.rating)
top = list(board.index[:20])
top_ranks = ranks.sel(model=top).isel(rank=slice(0, 30))
fig = Figure(figsize=(9.0, 6.0), layout="constrained")
rank_heatmap(top_ranks, ax=fig.subplots(), annotate=False,
             title="P(rank) of the 20 best-rated models (cluster bootstrap over annotators)")
fig

# %% [markdown]
# ## Win probabilities
#
# The fitted model also says how often one model should beat another (a Davidson tie counts
# as neither): here the five best-rated models, row against column.

# %%
best5 = list(board.index[:5])
davidson_worker.win_probability.sel(model=best5, model_b=best5).round(2).to_pandas()

# %% [markdown]
# The upshot: on LLMFAO the two tie rules order the models alike (the Davidson ratings are
# a stretched copy of the half-win ones), but the uncertainty is not what the
# independent-vote intervals say. Clustered by annotator, the standard errors are wider
# (the ratios printed above): 124 annotators carry less information than 8,931 independent
# votes would. The 13 prompts are too few clusters to estimate the covariance of 59 models
# at all. The ranks and tiers should be read from the clustered draws.

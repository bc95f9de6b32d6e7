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
# # The comparison methods the field cites, on one cube
#
# Papers that compare models over tasks and seeds cite a few tools: rliable's aggregates and
# probability of improvement, deep-significance's Almost Stochastic Order, Demšar's
# Friedman / Nemenyi critical-difference diagram (as autorank draws it) and baycomp's Bayesian
# signed-rank test. evaluq computes them from its cube, with the peers' definitions (the tests
# hold the peers' own numbers), and this notebook sets them beside evaluq's own answers:
# the rank distributions of the resampled aggregates and the hierarchical posterior.
#
# The data has the shape of the issue that asked for these methods: 3 models x 26 tasks x 10
# runs.

# %%
# %matplotlib inline
import numpy as np

import evaluq as eq

cube = eq.simulate_cube(n_models=3, n_languages=26, n_seeds=10, model_means=[0.0, 0.3, 0.35],
                        sigma_between=1.0, rng=19)
cube.score.sizes

# %% [markdown]
# ## Demšar: the Friedman test and the critical-difference diagram
#
# The blocks are the 26 tasks, the scores the seed means; each task ranks the models (1 =
# best, ties averaged). Friedman's test asks whether the mean ranks differ at all; Demšar
# recommends its Iman-Davenport F form, which is less conservative.

# %%
friedman = eq.friedman_test(cube)
friedman

# %% [markdown]
# The Nemenyi post-hoc test separates two models when their mean ranks differ by more than
# the critical difference $CD = q_\alpha\sqrt{k(k+1)/(6N)}$; the Wilcoxon-Holm variant tests
# each pair with a Wilcoxon signed-rank test on the tasks and adjusts by Holm. A bar joins the
# models the test cannot separate.

# %%
from matplotlib.figure import Figure

fig = Figure(figsize=(7.0, 1.6), layout="constrained")
left, right = fig.subplots(1, 2)
nemenyi = eq.critical_difference(cube, test="nemenyi")
wilcoxon = eq.critical_difference(cube, test="wilcoxon-holm")
eq.plots.critical_difference_diagram(nemenyi, ax=left)
eq.plots.critical_difference_diagram(wilcoxon, ax=right)
fig

# %%
import pandas as pd

pairs = [("m0", "m1"), ("m0", "m2"), ("m1", "m2")]
pd.DataFrame({"Nemenyi p": [float(nemenyi.pvalue.sel(model=a, model_b=b)) for a, b in pairs],
              "Wilcoxon-Holm p": [float(wilcoxon.pvalue.sel(model=a, model_b=b))
                                  for a, b in pairs]},
             index=[f"{a} vs {b}" for a, b in pairs])

# %% [markdown]
# ## evaluq's own answer: the rank distribution of the resampled mean
#
# The CD diagram ranks within each task and ignores how large the differences are and how
# noisy each cell is. evaluq resamples the cube (the seeds within each task, and the tasks)
# and ranks the models' mean scores in every resample: P(rank = r).

# %%
agg = eq.aggregate(eq.resample(cube, n_resamples=2000, replication="nonparametric",
                               languages="bootstrap", rng=0))
ranks = eq.rank_distribution(agg)
eq.plots.rank_heatmap(ranks)

# %% [markdown]
# ## rliable: aggregates with stratified-bootstrap intervals
#
# rliable reads the cube's seeds as runs and its languages as tasks. The median and the mean
# aggregate the per-task means over runs; the IQM (the mean of the middle half) and the
# optimality gap (how far the scores fall short of the target $\gamma = 1$, lower is better)
# pool all runs x tasks. The stratified bootstrap redraws the runs within each task and keeps
# the tasks fixed: the intervals say how much each aggregate would move if the seeds were
# rerun on *these* 26 tasks, which is why they separate the three models while evaluq's
# resampling above, which also redraws the tasks, leaves m0 and m1 unordered.

# %%
estimates = eq.interval_estimates(cube, n_resamples=2000, rng=0)
estimates.estimate.round(3).to_pandas()

# %%
eq.plots.interval_estimates_panel(estimates)

# %% [markdown]
# ## rliable: performance profiles
#
# The share of each model's runs (every run on every task) that clears each threshold
# $\tau$, with stratified-bootstrap bands: whole score distributions rather than one summary.
# A profile above another at every threshold reads as stochastic dominance; here m2's curve is
# the highest at most thresholds and m0's lies above m1's at almost all, with overlapping
# bands in the tails.

# %%
profile = eq.performance_profile(cube, np.linspace(-2.5, 3.0, 56), n_resamples=2000, rng=0)
eq.plots.performance_profile_plot(profile)

# %% [markdown]
# ## rliable: the probability of improvement
#
# $P(X > Y)$ is how often a run of X beats a run of Y on a randomly chosen task (the
# Mann-Whitney statistic per task, averaged over tasks): *how often*, not *by how much*.
# rliable reads an interval above 1/2 as a meaningful improvement. Here every interval
# excludes 1/2, m0 over m1 included, whose order the rank distribution above leaves open (m0
# and m1 share ranks 2 and 3): with the tasks held fixed, the seed noise alone cannot blur it.

# %%
poi = eq.probability_of_improvement(cube, n_resamples=2000, rng=0)
eq.plots.probability_of_improvement_plot(poi)

# %% [markdown]
# ## deep-significance: Almost Stochastic Order
#
# ASO compares two models' score distributions over seeds (each seed's score averaged over
# the tasks): $\varepsilon_{\min}$ is an upper confidence bound on the share of the distance
# between their quantile functions where the first model is below the second. Below 0.5 the
# first model's distribution lies more above than below; deepsig recommends reading
# $\varepsilon_{\min} < 0.2$ as a difference (0.5 rejects too often under equality). It is
# not a p-value and not a size of the difference.

# %%
seed_scores = cube.score.mean("language")
result = eq.aso(seed_scores.sel(model="m2").values, seed_scores.sel(model="m0").values, rng=0)
result.eps_min

# %% [markdown]
# $\varepsilon_{\min} = 0$: m2's ten seed scores lie above m0's at every quantile.
# `multi_aso` gives every ordered pair at once, with a Bonferroni correction over the three
# pairs (entry = $\varepsilon_{\min}$ of the row model over the column model). It orders all
# three (m2 over m0 and m1, m0 over m1, $\varepsilon_{\min}$ near 0), like rliable's intervals
# and unlike evaluq's rank distribution, for the same reason: averaging over the 26 tasks
# treats them as fixed, so only the seeds are random. The rank distribution also redraws the
# tasks, and asks whether the order would hold on other tasks.

# %%
eq.multi_aso(cube, rng=0).round(3).to_pandas()

# %% [markdown]
# ## baycomp: the Bayesian signed-rank test
#
# For one pair, the differences of the seed means over the tasks get a Dirichlet-process
# posterior (a pseudo-observation at 0 of weight 0.5). With a region of practical equivalence
# (ROPE) of ±0.1, `p_left` is the probability that the first model scores higher by more than
# the ROPE, `p_right` that the second does, `p_rope` that they are practically equivalent, in
# baycomp's order and with its rule (the share of posterior draws in which each is the
# largest).

# %%
signed = eq.bayesian_signed_rank(cube, "m2", "m1", rope=0.1, rng=0)
signed

# %%
eq.plots.bayesian_comparison(signed)

# %% [markdown]
# For cross-validated scores on one data set, baycomp's correlated t-test corrects the
# variance for the overlap of training sets (Nadeau and Bengio, $\rho = 1/k$). Here the ten
# runs of one task stand in for ten folds:

# %%
a = cube.score.sel(model="m2", language=cube.language[0]).values
b = cube.score.sel(model="m1", language=cube.language[0]).values
ttest = eq.correlated_t_test(a, b, rope=0.1, rng=0, names=("m2", "m1"))
eq.plots.bayesian_comparison(ttest)

# %% [markdown]
# ## The hierarchical posterior on the same question
#
# evaluq's hierarchical model answers "is m2 better than m1 on the population of tasks, by
# more than the ROPE" with the posterior of the mean difference $\mu_{m2} - \mu_{m1}$. It
# assumes normal task effects and models the seed noise of every cell; the signed-rank test
# assumes neither, takes the seed means as exact, and its probabilities are about the Walsh
# averages of two task differences (a pseudo-median), not the mean.

# %%
fit = eq.fit_hierarchical(cube, draws=1000, tune=500, chains=2, rng=0)
pw = fit.pairwise_differences(level="population", rope=0.1)
rows = {}
for a, b in [("m1", "m0"), ("m2", "m1")]:
    sr = eq.bayesian_signed_rank(cube, a, b, rope=0.1, rng=0)
    rows[f"{a} vs {b}"] = {
        "signed-rank p_left": sr.p_left, "p_rope": sr.p_rope, "p_right": sr.p_right,
        "hierarchical p_above": float(pw.p_above.sel(model=a, model_b=b)),
        "p_rope ": float(pw.p_rope.sel(model=a, model_b=b)),
        "p_below": float(pw.p_below.sel(model=a, model_b=b))}
pd.DataFrame(rows).T.round(3)

# %% [markdown]
# Which comparison answers which question, with its assumptions and the evaluq call, is in the
# guide "Which comparison to use" (`docs/guides/which_comparison.md`).

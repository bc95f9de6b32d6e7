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
# # evaluq quickstart
#
# The whole workflow on one cube: load the scores, split their uncertainty into components,
# resample, aggregate, rank, compare pairs, draw the figures, export the paper tables, write
# the HTML report, and fit the hierarchical Bayesian model to the same cube.
#
# ## Load
#
# An **evaluation cube** is an xarray Dataset with dims `model x language x seed x bootstrap`.
# `score` holds the score of each training seed on the full test set of a language;
# `boot_score`, when present, holds the same score on paired bootstrap resamples of the test
# set (replicate *b* is the same resampled test set for every model and seed, so differences
# between models stay paired). A long table (one row per score) becomes a cube with
# `eq.from_long`:

# %%
# %matplotlib inline
import numpy as np
import pandas as pd

import evaluq as eq

table = pd.DataFrame({
    "system": ["a", "a", "a", "a", "b", "b", "b", "b"],
    "lang":   ["de", "de", "fr", "fr", "de", "de", "fr", "fr"],
    "run":    [0, 1, 0, 1, 0, 1, 0, 1],
    "bleu":   [25.1, 24.7, 31.0, 30.2, 26.3, 25.9, 30.8, 31.4],
})
small = eq.from_long(table, model="system", language="lang", seed="run", score="bleu",
                     metric="bleu", bounds=(0, 100))
small

# %% [markdown]
# The rest of this notebook uses a simulated cube, so every estimate can be checked against
# the truth it was drawn from: 4 models x 8 languages x 5 seeds x 200 bootstrap replicates.
# The true model means are 0, 0.5, 1.5 and 1.6 score points; a language difficulty (SD 1.5)
# is shared by all models, each model deviates from it per language with SD 0.5, seeds add SD
# 0.5 and the finite test set SD 0.8 (its error is half shared between models, who are scored
# on the same test set).

# %%
truth = dict(model_means=[0.0, 0.5, 1.5, 1.6], sigma_language=1.5, sigma_between=0.5,
             sigma_seed=0.5, sigma_boot=0.8)
cube = eq.simulate_cube(n_models=4, n_languages=8, n_seeds=5, n_boot=200,
                        boot_correlation=0.5, seed_sharing=0.9, rng=0, **truth)
cube.score.mean("seed").to_pandas().round(2)

# %% [markdown]
# ## Variance components
#
# Per model: `sigma_between` is the SD of the language means (how much the score depends on
# the language), `sigma_seed` the SD between training seeds within a language, `sigma_boot`
# the SD of the bootstrap replicates (the test-set sampling error of one seed's score). The
# standard errors of the mean over languages follow from them: `se_fixed` treats the eight
# languages as the benchmark (only seed and test-set noise count), `se_random` treats them as
# a sample from a population of languages (the between-language SD counts too). The true
# between-language SD is 1.58 (= sqrt(1.5² + 0.5²): the shared difficulty plus the model's
# own spread); `sigma_between`, the SD of the seed means, also carries their seed and
# test-set noise (expected about 1.79), which `tau_between` subtracts. With only eight
# languages both are uncertain: the eight difficulties drawn in this cube spread widely
# (a `sigma_between` above 2.5 happens in about 6% of cubes simulated with these settings).
# The true seed and bootstrap SDs are 0.5 and 0.8.

# %%
components = eq.variance_components(cube)
eq.variance_table(components).T.round(3)

# %% [markdown]
# `sigma_seed` and `sigma_boot` are estimated per language; the bars show them with their
# standard errors (a seed SD from 5 seeds has about 4 degrees of freedom, hence the wide
# error bars):

# %%
eq.plots.variance_bars(components)

# %% [markdown]
# ## Resample and aggregate
#
# `eq.resample` draws replicates of the whole benchmark. Here the languages stay fixed (the
# leaderboard is about *these* eight languages) and `replication="nonparametric"` redraws,
# per language, the seeds with replacement and one bootstrap replicate of the test set, both
# shared by every model: the models are compared on the same resampled test set, so the part
# of the test-set error they share cancels in their differences. (The default,
# `"parametric"`, adds independent normal noise per cell from the estimated SDs; it also
# works on summary-only cubes, but cannot know that models share a test set.)
# `eq.aggregate` reduces every replicate to one number per model (the mean over languages);
# `sd` is the SD over replicates (the standard error) and `ci` the 95% percentile interval.

# %%
resampled = eq.resample(cube, replication="nonparametric", n_resamples=4000, rng=0)
aggregated = eq.aggregate(resampled)
pd.DataFrame({"observed": aggregated.observed.to_pandas(), "sd": aggregated.sd.to_pandas(),
              "lower": aggregated.ci.sel(ci_bound="lower").to_pandas(),
              "upper": aggregated.ci.sel(ci_bound="upper").to_pandas()}).round(3)

# %% [markdown]
# ## Leaderboard
#
# One row per model, ordered by the observed aggregate: the interval, the expected rank and
# P(best) from the replicates, and the significance tier (models that Holm-adjusted paired
# tests at alpha = 0.05 cannot separate from the tier's top model share a tier).

# %%
board = eq.leaderboard(aggregated)
board.round(3)

# %% [markdown]
# ## Pairwise differences
#
# Each difference `model - model_b` is computed inside every replicate, so the correlation
# between models (same languages, same test sets) cancels; its interval is the percentile
# interval of the replicated differences and `p_holm` the Holm-adjusted two-sided p-value.

# %%
pairwise = eq.pairwise_differences(aggregated)
eq.pairwise_table(pairwise, unique=True).round(3)

# %%
eq.plots.forest_plot(pairwise)

# %% [markdown]
# ## Rank distribution
#
# P(rank = r) is the share of replicates in which a model lands at rank r. m2 and m3 are 0.1
# apart in truth, so their ranks 1 and 2 should be shared; m0 and m1 (0.5 apart) trail.

# %%
ranks = eq.rank_distribution(aggregated)
eq.plots.rank_heatmap(ranks)

# %% [markdown]
# The tier diagram places each model on the axis of its observed mean; a bar joins the models
# of one significance tier.

# %%
eq.plots.tier_diagram(aggregated)

# %% [markdown]
# ## Paper tables
#
# Every table exports to Markdown and LaTeX with one call; the caption states the
# uncertainty it shows.

# %%
print(eq.tables.to_markdown(board, digits=3))

# %%
print(eq.tables.to_latex(eq.variance_table(components), label="tab:variance", digits=3))

# %% [markdown]
# ## The report
#
# `eq.report` runs the analysis above (resampling, leaderboard, pairs, ranks, tiers, variance
# components) and writes one self-contained HTML page with the figures embedded and every
# setting needed to reproduce it. `bayes=True` adds the posterior sections.

# %%
import tempfile
from pathlib import Path

out = Path(tempfile.mkdtemp()) / "report.html"
rep = eq.report(cube, out=out, n_resamples=2000, rng=0, progress=False)
print(rep.path, f"{rep.path.stat().st_size / 1e3:.0f} kB")
for metric, sections in rep.sections.items():
    print(metric, [(s.title, s.figures) for s in sections])

# %% [markdown]
# ## The hierarchical model
#
# `eq.fit_hierarchical` fits the crossed model: each model's score on language l is its
# population mean plus a language difficulty shared by all models plus its own deviation,
# observed with seed and test-set noise (notebook 06 and the model card give the details).
# The first fit compiles the model (tens of seconds); later fits of a cube with the same
# number of models reuse it.

# %%
fit = eq.fit_hierarchical(cube, rng=0)
fit

# %% [markdown]
# P(rank) at the **benchmark** level ranks the models by their mean over these eight
# languages, the same question as the resampling's leaderboard above:

# %%
post_ranks = fit.rank_probabilities(scope="benchmark")
post_ranks[["expected_rank", "p_best"]].to_dataframe().round(3)

# %% [markdown]
# Posterior differences at the population level (a new language drawn from the same
# population) with a region of practical equivalence of ±0.25 points: `p_rope` is the
# posterior probability that the difference is smaller than that in absolute value, `p_above`
# and `p_below` that it exceeds it either way. The population intervals are much wider than
# the benchmark ones: with eight languages, a model's mean on a *new* language is uncertain
# by its between-language spread over sqrt(8).

# %%
post_pw = fit.pairwise_differences(rope=0.25)
rows = post_pw[["mean", "p_below", "p_rope", "p_above"]].to_dataframe()
rows[rows["mean"] > 0].sort_values("mean", ascending=False).round(3)   # each pair once

# %%
mu = fit.posterior["mu"]
eq.plots.posterior_differences(mu - mu.rename(model="model_b"), rope=0.25,
                               pairs=[("m3", "m2"), ("m2", "m1"), ("m1", "m0")])

# %% [markdown]
# The posterior beside the frequentist estimates, one row per quantity, both at the
# benchmark level (these eight languages): the variance components, the means, the
# differences and P(best). The frequentist side here is the resampling above. `agree` says
# whether each estimate lies in the other's interval; `driver` names the assumption that
# explains a disagreement (empty where they agree).

# %%
comparison = fit.compare_frequentist(resampled)
comparison.round(3)

# %% [markdown]
# Agreement in that sense is not agreement in width too. The ratio of the posterior's
# difference intervals to the paired resampling's:

# %%
d = comparison[comparison["quantity"] == "difference"]
ratio = (d["post_upper"] - d["post_lower"]) / (d["freq_upper"] - d["freq_lower"])
print(f"posterior / resampling width of the difference intervals: "
      f"{ratio.min():.2f} to {ratio.max():.2f}")

# %% [markdown]
# This cube's models share a test set (half of the test-set error is common to them,
# `boot_correlation=0.5`). `test_set_errors="auto"` reads that from the replicates themselves
# (their correlation across models is well beyond their noise, whichever loader built the
# cube) and pairs the models' test-set errors, as the nonparametric resampling does by drawing
# the same resampled test set for every model: the shared part cancels in both sides'
# differences, and the widths agree. The fit says what it chose and why:

# %%
print(fit.data.pairing)

# %% [markdown]
# Sampler diagnostics of every reported quantity: R-hat should be at most 1.01 and the bulk
# and tail effective sample sizes at least 400; divergences should be 0.

# %%
diag = fit.diagnostics()
print("divergences:", diag.attrs["divergences"], " E-BFMI per chain:",
      np.round(diag.attrs["bfmi"], 2))
diag.round(3)

# %% [markdown]
# ## Keep the cube
#
# A cube round-trips through NetCDF losslessly, attributes included:

# %%
path = Path(tempfile.mkdtemp()) / "cube.nc"
cube.to_netcdf(path)
eq.open_cube(path).identical(cube)

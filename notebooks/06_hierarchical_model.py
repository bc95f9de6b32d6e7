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
# # The hierarchical Bayesian model of an evaluation cube
#
# `eq.fit_hierarchical` fits one model to the whole cube and answers the leaderboard's
# questions (which model is better, by how much, how sure are we) with posterior
# probabilities. This notebook states the model, checks that it recovers known variance
# components from a simulated cube, sets its answers beside the frequentist ones, and shows
# what a cube without seeds or without bootstrap replicates can and cannot identify.
#
# ## The model
#
# For model *m* on language *l*, with $S_{ml}$ seeds:
#
# $$\theta_{ml} = \mu_m + a_l + g_{ml},\qquad a_l \sim N(0, \tau_{lang}^2),\qquad
# g_{ml} \sim N(0, \tau_m^2)$$
#
# $$\bar y_{ml} \sim N\!\left(\theta_{ml},\; \sigma_{boot,ml}^2 + \sigma_{seed,m}^2 / S_{ml}\right)$$
#
# $\mu_m$ is the model's mean on the *population* of languages, $a_l$ a language difficulty
# shared by every model, $g_{ml}$ the model's own deviation on that language. The seed mean
# $\bar y_{ml}$ carries the test-set error once (all seeds are scored on the same test set,
# so it does not average out over seeds) and the seed noise divided by $S$. The within-cell
# sum of squares over seeds is $\sigma_{seed,m}^2\,\chi^2(S-1)$, and the mean bootstrap
# variance of a cell a scaled $\chi^2$ with $S(B-1)$ degrees of freedom: these identify the
# two noise SDs separately from the between-language spread.
#
# **Crossed** (the default) has the shared $a_l$: languages are crossed with models, so a hard
# language is hard for everyone and differences between models are paired through it.
# **Independent** drops $a_l$: each model has its own distribution over languages (the
# multilingual paper's model). Use crossed when the models were run on the same languages;
# independent when the language sets differ or you want each model's spread on its own.
#
# **Marginal form.** The sampler never sees $a$, $g$, the seeds or the bootstrap replicates.
# Integrating $a_l$ and $g_{ml}$ out, the vector $\bar y_{\cdot l}$ of language *l* is
# multivariate normal with mean $\mu$ and covariance
# $\tau_{lang}^2\,\mathbf{1}\mathbf{1}^\top + \mathrm{diag}(\tau_m^2 + \sigma_{boot,ml}^2 +
# \sigma_{seed,m}^2/S_{ml})$, a diagonal plus rank one, whose log-density is closed form in
# $O(ML)$. NUTS samples only the hyperparameters ($\mu$, $\tau$'s, $\sigma_{seed}$); $a$,
# $\theta$ and the benchmark means are then exact conditional Gaussian draws. So the cost does
# not depend on the number of seeds or replicates, and the geometry has no funnel. The
# equations, priors and validation are in the model card.

# %%
# %matplotlib inline
import time

import numpy as np
import pandas as pd
from IPython.display import display

import evaluq as eq

# %% [markdown]
# ## A cube with known components
#
# Four models with population means 0, 0.3, 0.6 and 1.0; 30 languages with a shared
# difficulty of SD $\tau_{lang} = 1$ and per-model deviations of SD $\tau_m = 0.6$; 5 seeds
# with SD $\sigma_{seed} = 0.4$; 100 bootstrap replicates of a test set with SD
# $\sigma_{boot} = 0.7$.

# %%
truth = {"mu": np.array([0.0, 0.3, 0.6, 1.0]), "tau_lang": 1.0, "tau_m": 0.6,
         "sigma_seed": 0.4, "sigma_boot": 0.7}
cube = eq.simulate_cube(n_models=4, n_languages=30, n_seeds=5, n_boot=100,
                        model_means=truth["mu"], sigma_language=truth["tau_lang"],
                        sigma_between=truth["tau_m"], sigma_seed=truth["sigma_seed"],
                        sigma_boot=truth["sigma_boot"], rng=3)
dict(cube.boot_score.sizes)

# %% [markdown]
# The first fit compiles the model with numba (tens of seconds; nutpie's compiled model is
# kept for the rest of the session and reused for any cube with the same number of models).
# 1000 draws per chain, 4 chains, nutpie's NUTS. This simulated cube's replicates are drawn
# independently for each model, so `test_set_errors="auto"` finds no correlation across models
# beyond the replicates' noise, takes the errors as independent and the repr says so.

# %%
start = time.perf_counter()
fit = eq.fit_hierarchical(cube, rng=0)
print(f"{time.perf_counter() - start:.1f} s wall; compile {fit.config['compile_seconds']:.1f} s,"
      f" sampling {fit.config['sampling_seconds']:.1f} s, sampler {fit.sampler}")
fit

# %% [markdown]
# ### Recovery
#
# Posterior mean and 90% equal-tailed credible interval of each component beside its true
# value. `sigma_seed` is one SD per model (pooled over languages); `sigma_boot` is per cell,
# shown here as its average over languages.

# %%
def summary(draws, true, name):
    """Posterior mean, 90% interval, truth and coverage of each element of `draws`."""
    draws = draws.stack(sample=("chain", "draw"))
    lo, hi = draws.quantile([0.05, 0.95], "sample").values
    mean = draws.mean("sample").values
    index = ([f"{name}[{m}]" for m in draws["model"].values] if "model" in draws.dims
             else [name])
    true = np.broadcast_to(true, np.shape(mean))
    return pd.DataFrame({"posterior mean": np.atleast_1d(mean), "5%": np.atleast_1d(lo),
                         "95%": np.atleast_1d(hi), "truth": np.atleast_1d(true),
                         "covered": np.atleast_1d((lo <= true) & (true <= hi))}, index=index)


def recovery(fit, **targets):
    """The recovery table of a fit: every identified component beside its truth (or beside
    the `targets` given, for a component that absorbs another)."""
    post, vc = fit.posterior, fit.variance_components()
    draws = {"mu": post["mu"], "tau_lang": post.get("tau_lang"), "tau_m": post["tau_m"],
             "sigma_seed": post["sigma_seed"], "sigma_boot": vc["sigma_boot"].mean("language")}
    target = {**truth, **targets}
    parts = [summary(d, target[name], name) for name, d in draws.items()
             if d is not None and np.isfinite(d.values).any()]   # skip the unidentified
    return pd.concat(parts).round(3)


table = recovery(fit)
print(f"{int(table['covered'].sum())} of {len(table)} 90% intervals cover the truth")
table

# %% [markdown]
# A 90% interval should miss its truth about one time in ten, and the misses of one cube are
# not independent (they share its 30 languages). This cube's 30 drawn language difficulties
# spread less than their SD of 1: the SD over languages of the mean over models and seeds
# should be about $\sqrt{\tau_{lang}^2 + (\tau_m^2 + \sigma_{boot}^2 + \sigma_{seed}^2/S)/4}$:

# %%
spread = float(cube.score.mean(("model", "seed")).std("language", ddof=1))
expected = np.sqrt(truth["tau_lang"] ** 2 + (truth["tau_m"] ** 2 + truth["sigma_boot"] ** 2
                                             + truth["sigma_seed"] ** 2 / 5) / 4)
print(f"SD over languages: {spread:.2f} in this cube, {expected:.2f} expected")

# %% [markdown]
# That is what pulls `tau_lang` down: the posterior can only learn the spread of the
# languages it sees. `mu` is known only to about
# $\sqrt{\tau_{lang}^2 + \tau_m^2 + \text{noise}}/\sqrt{30}$, since a model's population mean
# is learned from 30 languages. The seed and bootstrap SDs are pinned tightly (4 x 30 and
# 5 x 99 x 30 degrees of freedom), the between-language SDs less so (30 languages). The
# simulation-based calibration study in the test suite checks the coverage over many cubes.
#
# ## Posterior versus frequentist
#
# `compare_frequentist` puts each quantity's frequentist estimate and 95% interval (from
# `eq.variance_components` and from resampling the cube with the languages fixed) beside the
# posterior mean and 95% credible interval at the benchmark level (the same question: these 30
# languages). `agree` says whether the frequentist estimate lies in the credible interval and
# vice versa; `driver` names the assumption behind a disagreement.

# %%
comparison = fit.compare_frequentist()
comparison.round(3)

# %%
print("disagreements:", int((~comparison["agree"]).sum()), "of", len(comparison))
for quantity, driver in comparison.loc[~comparison["agree"], ["quantity", "driver"]] \
        .drop_duplicates("quantity").itertuples(index=False):
    print(f"- {quantity}: {driver}")

# %% [markdown]
# The possible drivers of a disagreement: the frequentist `tau_between` is a
# method-of-moments estimate without an interval, while the posterior pools across models;
# the posterior pools the seed SD over languages; and the posterior shrinks noisy cells toward
# $\mu_m + a_l$ (partial pooling) where the resampling takes every cell mean as observed,
# which also spreads P(best) more evenly. With 5 seeds and 100 replicates per cell the cells
# are precise relative to $\tau_m$, so the shrinkage is small and the means, differences and
# P(best) agree. Fewer seeds, noisier test sets or fewer languages make the two part.
#
# ## Population and benchmark level
#
# Two different questions:
#
# * **benchmark**: is model A better than B *on these 30 languages*? The difference of the
#   means of $\theta_{ml}$ over the observed languages; only seed and test-set noise (and
#   the shrinkage) make it uncertain.
# * **population**: is A better than B *on a new language* from the same population? The
#   difference of $\mu$; the finite sample of languages adds the uncertainty of $g_{ml}$.
#
# The benchmark intervals are therefore narrower (`observed` is the posterior mean of the
# difference, `p_greater` the posterior probability that it is positive):

# %%
levels = {}
for level in ("benchmark", "population"):
    pw = fit.pairwise_differences(scope=level)
    table = eq.pairwise_table(pw, unique=True)
    levels[level] = table[["observed", "lower", "upper", "p_greater"]]
pd.concat(levels, axis=1).round(3)

# %%
for level in ("benchmark", "population"):
    rp = fit.rank_probabilities(scope=level)
    display(eq.plots.rank_heatmap(rp, title=f"P(rank), {level} level"))

# %% [markdown]
# The crossed structure matters for the population level. The **independent** model fits the
# same cube without the shared $a_l$: the language difficulty then sits in each model's own
# $\tau_m$ (its `sigma_between` absorbs $\tau_{lang}$), and the differences between models
# are no longer paired through it. (A second model type compiles once more.)

# %%
fit_ind = eq.fit_hierarchical(cube, model="independent", rng=0)
absorbed_lang = np.hypot(truth["tau_lang"], truth["tau_m"])      # what tau_m now estimates
width = {}
for name, f in {"crossed": fit, "independent": fit_ind}.items():
    ci = f.pairwise_differences(scope="population")["ci"]
    width[name] = (ci.sel(ci_bound="upper") - ci.sel(ci_bound="lower")).to_pandas()
print("mean width of the 95% population-level difference intervals:")
print({k: round(float(v.where(v > 0).stack().mean()), 3) for k, v in width.items()})
recovery(fit_ind, tau_m=absorbed_lang).loc[lambda t: t.index.str.startswith("tau_m")]

# %% [markdown]
# ## Paired test-set errors
#
# When every model is scored on the same bootstrap replicates of each test set
# (`eq.from_predictions`), a hard test set is hard for all of them: the models' test-set
# errors on one language are correlated. `test_set_errors="auto"` (the default) then reads
# the correlation from the shared replicates, fits a k-factor model to it (k chosen against
# the replicates' noise) and puts it in the per-language covariance as a low-rank term (model
# card, "Paired test-set errors"). On the demo's real predictions (five classifiers, four data
# sets as languages), three answers side by side: the posterior with independent errors, the
# paired posterior (the default) and the paired resampling (`replication="nonparametric"`,
# which resamples the same shared replicates).

# %%
from evaluq.demo import demo_cube

real = demo_cube(n_boot=1000)
fits = {"independent": eq.fit_hierarchical(real, test_set_errors="independent", rng=0),
        "paired (auto)": eq.fit_hierarchical(real, rng=0)}
print(fits["paired (auto)"].data.pairing, "| factors:", fits["paired (auto)"].data.n_factors)
boot = eq.aggregate(eq.resample(real, n_resamples=4000, replication="nonparametric",
                                seeds="rescaled", rng=0))
sd = {"paired resampling": eq.pairwise_differences(boot)["sd"]}
for name, f in fits.items():
    draws = f.posterior["benchmark_mean"]
    sd[f"posterior, {name}"] = (draws - draws.rename(model="model_b")).std(("chain", "draw"))
pairs = [(a, b) for i, a in enumerate(real.model.values) for b in real.model.values[i + 1:]]
pd.DataFrame({name: [float(v.sel(model=a, model_b=b)) for a, b in pairs]
              for name, v in sd.items()},
             index=pd.Index([f"{a} - {b}" for a, b in pairs], name="SD of the difference")
             ).round(4)

# %% [markdown]
# And P(best) on these four data sets (benchmark scope):

# %%
p_best = {"paired resampling": eq.rank_distribution(boot)["p_best"].to_pandas()}
for name, f in fits.items():
    p_best[f"posterior, {name}"] = f.rank_probabilities(scope="benchmark")["p_best"].to_pandas()
pd.DataFrame(p_best).round(3)

# %% [markdown]
# The paired posterior follows the paired resampling: its SDs are 5-25% below the
# resampling's (partial pooling over four data sets shrinks each cell toward its model's mean
# plus the data set's effect) and logreg's P(best) is within a few points of the
# resampling's. The independent posterior is wider wherever two classifiers
# err on the same items and spreads P(best) more evenly: that is the conservative answer
# that `repr(fit)` and the report warn about when the pairing cannot be read (a summary cube
# without `error_correlation=`). `compare_frequentist` of a paired fit resamples the shared
# replicates too, so both sides of its table are paired.

# %% [markdown]
# Independent `tau_m` estimates $\sqrt{\tau_{lang}^2 + \tau_m^2} \approx 1.17$ (the truth
# column above) rather than 0.6. m3 is the exception in this cube: its own deviations happen to
# offset the shared difficulty, so its scores spread over languages with SD 0.60 against about
# 1.05 for the others (the frequentist `sigma_between` of the comparison table), and both
# models give it a small `tau_m`. The independent model's population-level difference
# intervals are wider: without a shared language effect the model cannot tell that a hard
# language is hard for everyone, so the language spread enters each model's mean
# separately instead of cancelling in the difference. The noise part
# ($\sigma_{boot}^2 + \sigma_{seed}^2/S$ per cell) is the same in both models, so the gain
# of the crossed model grows with $\tau_{lang}$ relative to the noise.
#
# ## Region of practical equivalence
#
# A difference smaller than 0.2 points is taken as no difference. The posterior then splits
# into three probabilities, as baycomp reports them: `p_below` (B is practically better),
# `p_rope` (practically equivalent) and `p_above` (A is practically better). A large
# `p_rope` is positive evidence of equivalence, which a p-value cannot give.

# %%
rope = 0.2
pw = fit.pairwise_differences(scope="population", rope=rope)
pairs = [("m1", "m0"), ("m2", "m1"), ("m3", "m2")]
pd.DataFrame({f"{a} − {b}": {k: float(pw[k].sel(model=a, model_b=b))
                             for k in ("mean", "p_below", "p_rope", "p_above")}
              for a, b in pairs}).T.round(3)

# %%
mu = fit.posterior["mu"]
eq.plots.posterior_differences(mu - mu.rename(model="model_b"), rope=rope, pairs=pairs)

# %% [markdown]
# ## Diagnostics
#
# R-hat (at most 1.01), bulk and tail effective sample sizes (at least 100 per chain, as
# ArviZ advises) and the Monte
# Carlo standard error of every reported quantity, the number of divergent transitions and
# E-BFMI per chain (below 0.3 signals poor exploration of the energy). `fit_hierarchical`
# warns with advice when any threshold is missed.

# %%
diag = fit.diagnostics()
print("divergences:", diag.attrs["divergences"], "| E-BFMI:", np.round(diag.attrs["bfmi"], 2),
      "| problems:", diag.attrs["problems"] or "none")
diag.round(3)

# %% [markdown]
# ## Cubes with less information
#
# ### Summary only
#
# Papers often report only the mean over seeds, the seed SD and the bootstrap SD per
# (model, language). `eq.from_summary` builds a summary-only cube; the seed SD with its
# `n_seeds` still carries $S - 1$ degrees of freedom, and the bootstrap SD is plugged in as
# known (its $S(B-1)$ degrees of freedom are large).

# %%
cell = cube.score.mean("seed")
rows = pd.DataFrame({
    "mean": cell.to_series(),
    "sd_seed": cube.score.std("seed", ddof=1).to_series(),
    "sd_boot": cube.boot_score.std("bootstrap", ddof=1).mean("seed").to_series(),
}).reset_index()
summary_cube = eq.from_summary(rows, n_seeds=5, metric="simulated")
fit_summary = eq.fit_hierarchical(summary_cube, rng=0)
recovery(fit_summary).loc[lambda t: ~t.index.str.startswith("sigma_boot")]

# %% [markdown]
# The summary recovers the same components as the full cube: the sufficient statistics of
# the model are what a summary table holds, except that the bootstrap SD is taken as known
# (its posterior is the given value, so it is left out of the table).
# With only the means (no SDs, one value per cell), the noise cannot be told apart from the
# model's own language deviations:

# %%
means_cube = eq.from_summary(rows[["model", "language", "mean"]], sd_seed=None, sd_boot=None,
                             n_seeds=1, metric="simulated")
fit_means = eq.fit_hierarchical(means_cube, rng=0)
print(fit_means.data.reasons)
absorbed_all = np.sqrt(truth["tau_m"] ** 2 + truth["sigma_boot"] ** 2
                       + truth["sigma_seed"] ** 2 / 5)
recovery(fit_means, tau_m=absorbed_all)

# %% [markdown]
# `sigma_seed` and `sigma_boot` are reported as not identified (NaN, left out of the table),
# and `tau_m` now estimates $\sqrt{\tau_m^2 + \sigma_{boot}^2 + \sigma_{seed}^2/S} \approx
# 0.94$ (its truth column): everything
# that varies per cell is one component. The population-level answers about `mu` stay valid,
# since the total per-cell variance is still estimated; the benchmark-level answers treat the
# noise as part of the languages' true scores.
#
# ### Seeds only
#
# A cube with seeds but no bootstrap replicates identifies the seed SD but not the test-set
# error: that error is shared by the seeds of a cell, so from the seeds' point of view it is
# part of the cell's true score and lands in `tau_m`.

# %%
seeds_cube = cube.drop_vars("boot_score")
fit_seeds = eq.fit_hierarchical(seeds_cube, rng=0)
print(fit_seeds.data.reasons)
recovery(fit_seeds, tau_m=np.hypot(truth["tau_m"], truth["sigma_boot"]))

# %% [markdown]
# `sigma_seed` is recovered; `tau_m` now estimates $\sqrt{\tau_m^2 + \sigma_{boot}^2} \approx
# 0.92$ (its truth column) instead of 0.6. To separate the test-set error from the models' language deviations,
# keep the bootstrap replicates (or their SD) in the cube.
#
# | cube | identified | absorbed |
# |---|---|---|
# | seeds + bootstrap replicates | $\mu$, $\tau_{lang}$, $\tau_m$, $\sigma_{seed}$, $\sigma_{boot}$ | nothing |
# | summary: mean, seed SD, bootstrap SD, $n$ | the same ($\sigma_{boot}$ plugged in) | nothing |
# | seeds only | $\mu$, $\tau_{lang}$, $\sigma_{seed}$ | $\sigma_{boot}$ into $\tau_m$ |
# | means only | $\mu$, $\tau_{lang}$ | $\sigma_{boot}$, $\sigma_{seed}/\sqrt{S}$ into $\tau_m$ |

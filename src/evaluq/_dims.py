"""Names of the evaluation cube's dimensions and variables.

Every function in evaluq refers to these constants rather than to string literals, so that a
dimension is named in exactly one place.
"""

from __future__ import annotations

from typing import Final

# --- dimensions of the cube -------------------------------------------------------------------
MODEL: Final = "model"
"""The systems compared."""
LANGUAGE: Final = "language"
"""Language, task or data set: one axis of the benchmark."""
SEED: Final = "seed"
"""Model-side replications on the original test set (training seeds, sampled decodings)."""
BOOTSTRAP: Final = "bootstrap"
"""Test-set resamples; replicate b of a language is the same resampled test set for every model."""

CUBE_DIMS: Final = (MODEL, LANGUAGE, SEED, BOOTSTRAP)

# --- dimensions that analyses add ---------------------------------------------------------------
MODEL_B: Final = "model_b"
"""The second model of a pair (pairwise differences are ``model`` minus ``model_b``)."""
RANK: Final = "rank"
RESAMPLE: Final = "resample"
COMPONENT: Final = "component"
CI_BOUND: Final = "ci_bound"
LOWER: Final = "lower"
"""The lower end of an interval (a ``ci_bound`` coordinate or a table column)."""
UPPER: Final = "upper"
"""The upper end of an interval (a ``ci_bound`` coordinate or a table column)."""
CI_BOUND_COORDS: Final = (LOWER, UPPER)
SUMMARY: Final = "summary"
"""Summary statistics over languages (mean, sd, min, max), as in the multilingual paper's tables."""

# --- per-item data ------------------------------------------------------------------------------
ITEM: Final = "item"
CLASS: Final = "class"
RUN: Final = "run"
METRIC: Final = "metric"
"""Metrics of a significance test result."""
RATER: Final = "rater"
"""Raters of a DataArray of ratings (items x raters), for the agreement measures."""
ICC_FORM: Final = "form"
"""The intraclass correlation forms (ICC(1,1), ..., ICC(3,k))."""
N_CORRECT: Final = "n_correct"
"""Number of correct items (0..M): the support of an accuracy distribution's pmf."""
ACCURACY: Final = "accuracy"
"""Coordinate of ``n_correct``: the accuracy ``n_correct / M``."""
QUANTILE: Final = "quantile"
"""Probability levels of quantiles (the MSE distribution's ``quantile(q)``)."""
EVAL_POINT: Final = "x"
"""Points where a distribution's CDF or density is evaluated (a 1-D ``x``)."""

# --- what a resample records about its draws (:func:`evaluq.resample`) -------------------------
LANGUAGE_SLOT: Final = "language_slot"
"""Dim of the languages drawn in one resample (``languages="bootstrap"`` / ``"subsample"``):
slot j holds the j-th drawn language, named by ``drawn_language``; a language can fill several
slots of a bootstrap resample."""
DRAWN_LANGUAGE: Final = "drawn_language"
DRAWN_SEED: Final = "drawn_seed"
DRAWN_BOOTSTRAP: Final = "drawn_bootstrap"
DRAWN_SEED_COUNT: Final = "drawn_seed_count"
"""How often each seed was drawn for a (resample, language slot) with ``seeds="bootstrap"`` /
``"rescaled"`` (dims resample, language | language_slot, seed; sums to S)."""

# --- cube variables -----------------------------------------------------------------------------
SCORE: Final = "score"
BOOT_SCORE: Final = "boot_score"
SD_SEED: Final = "sd_seed"
SD_BOOT: Final = "sd_boot"
N_SEEDS: Final = "n_seeds"

# --- variables that analyses add -----------------------------------------------------------------
OBSERVED: Final = "observed"
"""The statistic on the data as observed (no resampling)."""
RESAMPLED: Final = "resampled"
"""The statistic in every resample (an aggregate's resample distribution)."""
CHAIN: Final = "chain"
DRAW: Final = "draw"
POSTERIOR_SAMPLE_DIMS: Final = (CHAIN, DRAW)
"""The sample dims of posterior draws (ArviZ's convention)."""

SUMMARY_SEED_LABEL: Final = "mean"
"""The single ``seed`` coordinate of a summary-only cube, whose ``score`` holds the seed mean."""

# --- results of :func:`evaluq.variance_components` ----------------------------------------------
SIGMA_BETWEEN: Final = "sigma_between"
"""SD over languages of the seed-mean score (per model)."""
TAU_BETWEEN: Final = "tau_between"
"""Between-language SD net of within-language noise, by moments (per model)."""
MEAN_SCORE: Final = "mean_score"
"""Mean over languages of the seed-mean score (per model)."""
SE_MEAN_FIXED: Final = "se_mean_fixed"
"""SE of the mean over languages, given these languages (per model)."""
SE_MEAN_POPULATION: Final = "se_mean_population"
"""SE of the mean over languages, the languages sampled from a population (per model)."""
N_LANGUAGES: Final = "n_languages"
"""Number of languages with a score (per model)."""
SIGMA_SEED: Final = "sigma_seed"
"""SD over seeds of the full-test-set score (per model and language)."""
SIGMA_BOOT: Final = "sigma_boot"
"""Mean over seeds of the SD over bootstrap replicates (per model and language)."""
SIGMA_WITHIN: Final = "sigma_within"
"""``sqrt(sigma_seed**2 + sigma_boot**2)`` (per model and language)."""
SE_SIGMA_SEED: Final = "se_sigma_seed"
"""SD over bootstrap replicates of the seed SD (per model and language)."""
SE_SIGMA_BOOT: Final = "se_sigma_boot"
"""SD over seeds of the bootstrap SD, over ``sqrt(n_seeds)`` (per model and language)."""
NAN_REASON: Final = "nan_reason"
"""Attribute of a result variable with NaN: why it is NaN."""
NAN_REASONS: Final = "nan_reasons"
"""Attribute of a result table: the ``nan_reason`` of each column with NaN."""
ESTIMABLE: Final = "estimable"
"""Attribute listing the estimates the cube's shape can estimate."""
NOT_ESTIMABLE: Final = "not_estimable"
"""Attribute listing the estimates the cube's shape cannot estimate (all NaN)."""

# --- results of the measurement-error closed forms (:mod:`evaluq.measurement_error`) ----------
EXPECTED_MSE: Final = "expected_mse"
"""E[MSE] over the measurement error of the targets."""
VAR_MSE: Final = "var_mse"
"""Var[MSE] over the measurement error of the targets."""
EXPECTED_MAE: Final = "expected_mae"
"""E[MAE] over the measurement error of the targets."""
VAR_MAE: Final = "var_mae"
"""Var[MAE] over the measurement error of the targets."""
EXPECTED_ACCURACY: Final = "expected_accuracy"
"""E[accuracy] over label noise."""
VAR_ACCURACY: Final = "var_accuracy"
"""Var[accuracy] over label noise."""
DIST_MEAN: Final = "mean"
"""The mean of a distribution (MSE or accuracy)."""
DIST_VARIANCE: Final = "variance"
"""The variance of a distribution (MSE or accuracy)."""
DIST_SD: Final = "sd"
"""The standard deviation of a distribution (MSE or accuracy)."""
DIST_INTERVAL: Final = "interval"
"""The equal-tailed interval of a distribution's summary Dataset."""
PMF: Final = "pmf"
"""Probability mass function of the accuracy distribution (over ``n_correct``)."""
CDF: Final = "cdf"
"""Cumulative distribution function of a distribution."""
PDF: Final = "pdf"
"""Density of the MSE distribution."""
ROUTE: Final = "route"
"""How each cell of the MSE distribution is evaluated (``"ncx2"``, ``"imhof"``, ...)."""
MSE_QUANTILE: Final = "mse_quantile"
"""Quantiles of the MSE distribution."""
MSE_INTERVAL: Final = "mse_interval"
"""Equal-tailed interval of the MSE distribution."""
ACCURACY_INTERVAL: Final = "accuracy_interval"
"""Exact equal-tailed interval of the accuracy distribution."""
COVERAGE: Final = "coverage"
"""Exact probability that an accuracy interval covers the accuracy."""
FACTOR: Final = "factor"
"""Factors of the hierarchical model's low-rank test-set error correlation."""

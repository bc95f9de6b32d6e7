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
CI_BOUND_COORDS: Final = ("lower", "upper")
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

r"""``fit_judge_model``: the Bayesian judge model, the chain rule generalised (issue 32 item 5).

Per model m the judge puts each item at one of K levels and a few items carry a gold (human)
score, one of L values :math:`v_1 < \dots < v_L` (0 and 1 for binary gold). Every item's
(judge level, gold value) pair follows one joint distribution per model; the models differ in
how often each gold value occurs, and the judge's behaviour given the truth is shared:

.. math::

    P(\text{gold}_{mi} = v_l) = p_{ml}, \quad
    P(\text{judge}_{mi} = j \mid \text{gold}_{mi} = v_l) = r_{mlj}, \quad
    \theta_m = \sum_l v_l\, p_{ml}.

``pooling="none"`` leaves the joint distribution free per model under the chain rule's prior
(Hofer et al. 2024: :math:`\pi_m \sim \mathrm{Dirichlet}(1)` over judge levels, each row
:math:`P(\text{gold} \mid \text{judge} = j) \sim \mathrm{Dirichlet}(1)`), drawn exactly:
:func:`evaluq.judges.ppi_mean`'s ``method="chain-rule"`` for every model.
``pooling="partial"`` pools the judge's confusion **given the truth** across models on the
multinomial-logit scale,

.. math::

    \log r_{mlj} = \eta_{mlj} - \log\textstyle\sum_{j'} e^{\eta_{mlj'}}, \quad
    \eta_{ml1} = 0, \quad \eta_{mlj} = a_{lj} + \tau_l z_{mlj}\ (j \ge 2),

    p_m \sim \mathrm{Dirichlet}(1), \quad a_{lj} \sim N(0, \sigma_a^2), \quad
    \tau_l \sim \mathrm{HalfNormal}(\sigma_\tau), \quad z_{mlj} \sim N(0, 1)

(non-centred): for binary scores the judge's sensitivity and specificity, shared up to a
model-specific deviation of spread :math:`\tau_l`. Why this direction: P(gold | judge) mixes the
judge's behaviour with the model's own prevalence (Bayes' rule), so it differs between a
strong and a weak model even for a judge that treats them alike; pooling it shrinks every
model's estimate toward the others' (on the Chatbot Arena battles, GPT-4 as judge, its 95%
intervals covered the human win rates 0.894 of the time). P(judge | gold) is the judge's
own behaviour, which is what may be shared.

The likelihood is on counts (a few hundred cells whatever the number of items): labelled
items :math:`c_{mjl}` contribute :math:`\log p_{ml} + \log r_{mlj}`, unlabelled items
:math:`u_{mj}` the mixture :math:`\log \sum_l p_{ml} r_{mlj}`. nutpie samples it (compiled
once per (M, K, L) and cached across processes by :mod:`evaluq._nutpie_cache`). Gold labels
are assumed missing at random given the judge's level (labelled items a random subset, or
random within judge levels).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import (
    BENCHMARK_MEAN,
    CONFUSION_SD,
    CORRECTED_MEAN,
    GOLD_GIVEN_JUDGE,
    GOLD_LEVEL,
    GOLD_SHARE,
    JUDGE_CONTRAST,
    JUDGE_GIVEN_GOLD,
    JUDGE_LEVEL,
    JUDGE_SHARE,
    MODEL,
    N_GOLD,
    N_JUDGED,
    POSTERIOR_SAMPLE_DIMS,
)
from evaluq._fits import (
    PosteriorFit,
    cells_as_models,
    convergence_problems,
    convergence_table,
    divergences,
    merge_priors,
    read_fit_tree,
    sampler_stats,
    summary_columns,
)
from evaluq._nutpie_cache import compile_pymc_model, with_data
from evaluq._validation import RNGLike, check_choice, check_int, check_rng
from evaluq.judges._data import read_judge_table
from evaluq.judges._kernels import CHAIN_PRIOR
from evaluq.judges._mean import MAX_CHAIN_LEVELS, MAX_LEVELS, gold_levels

SCOPES: Final = ("population", "benchmark")
"""``population``: the mean gold score on the items' population (the chain rule's theta);
``benchmark``: the mean gold score over the model's own judged items."""
POOLINGS: Final = ("partial", "none")
DEFAULT_PRIORS: Final = {"intercept_sigma": 2.0, "confusion_sd_sigma": 1.0}
"""sigma_a (the SD of the pooled confusion logits a_lj, log P(judge = j | gold = l) against
the first level) and sigma_tau (the HalfNormal scale of tau_l, the SD across models of those
logits)."""
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
TARGET_ACCEPT: Final = 0.9
RHAT_MAX: Final = 1.01
ESS_MIN: Final = 400
ADVICE: Final = {
    "r_hat": "refit with more tuning and draws (tune=2000)",
    "ess": "increase draws",
    "divergences": "refit with tune=2000, or a smaller priors['confusion_sd_sigma']",
}
REPORTED: Final = (CORRECTED_MEAN, BENCHMARK_MEAN, CONFUSION_SD, "confusion_intercept")
_COMPILED: dict[tuple[int, int, int], Any] = {}
"""nutpie models compiled in this process, by (models, judge levels, gold values)."""


# --- the data: counts per (model, judge level[, gold value]) --------------------------------------

@dataclass(frozen=True)
class JudgeCounts:
    """The sufficient statistics of the judge model.

    ``level_counts`` (M, K): items per model at each judge level (labelled or not);
    ``gold_counts`` (M, K, L): labelled items per model, judge level and gold value;
    ``gold_sum`` (M,): the sum of each model's gold labels; ``models``, ``judge_levels``
    (K), ``gold_values`` (L); ``notes``.
    """

    models: np.ndarray
    judge_levels: np.ndarray
    gold_values: np.ndarray
    level_counts: np.ndarray
    gold_counts: np.ndarray
    gold_sum: np.ndarray
    notes: tuple[str, ...] = ()
    higher_is_better: bool = True

    @property
    def shape(self) -> tuple[int, int, int]:
        n_m, n_k, n_l = self.gold_counts.shape
        return int(n_m), int(n_k), int(n_l)

    @property
    def n_gold(self) -> np.ndarray:
        return self.gold_counts.sum(axis=(1, 2))

    @property
    def n_judged(self) -> np.ndarray:
        return self.level_counts.sum(axis=1)


def _judge_levels(judge: np.ndarray, levels: Any) -> np.ndarray:
    """The judge's levels: ``levels`` (increasing, holding every judge score) or the distinct
    judge scores."""
    if levels is None:
        out = np.unique(judge)
    else:
        try:
            out = np.asarray(list(levels), dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"`levels` must be a sequence of numbers (the judge's score "
                            f"levels) or None; got {levels!r}") from err
        if out.ndim != 1 or out.size < 1 or not np.isfinite(out).all() \
                or (np.diff(out) <= 0).any():
            raise ValueError(f"`levels` must be finite, strictly increasing numbers; got "
                             f"{out.tolist()}")
        missing = np.setdiff1d(np.unique(judge), out)
        if missing.size:
            raise ValueError(f"`levels` must hold every judge score; missing "
                             f"{missing[:5].tolist()}")
    if out.size > MAX_CHAIN_LEVELS:
        raise ValueError(f"the judge takes {out.size} levels (more than {MAX_CHAIN_LEVELS}): "
                         "the judge model needs a discrete judge; use "
                         "evaluq.judges.judged_means(method='ppi++')")
    return out


def judge_counts(table: Any, *, model: str, item: str, judge: str, gold: str,
                 levels: Any = None) -> JudgeCounts:
    """Read the per-item table as :func:`evaluq.judges.judged_means` does
    (:func:`evaluq.judges._data.read_judge_table`) and count it."""
    t = read_judge_table(table, model=model, item=item, judge=judge, gold=gold, cluster=None)
    values = gold_levels(t.gold[t.labelled])
    if values.size > MAX_LEVELS:
        raise ValueError(f"the gold labels take {values.size} distinct values (more than "
                         f"{MAX_LEVELS}): the judge model needs discrete gold scores; use "
                         "evaluq.judges.judged_means(method='ppi++')")
    if values.size < 2:
        raise ValueError(f"every gold label is {values[0]:g}: the gold values cannot be told "
                         "from one value; use 0/1 gold or label more items")
    lv = _judge_levels(t.judge, levels)
    n_m, n_k, n_l = len(t.models), lv.size, values.size
    level = np.searchsorted(lv, t.judge)
    counts = np.bincount(t.model * n_k + level, minlength=n_m * n_k).reshape(n_m, n_k)
    lab = t.labelled
    cell = (t.model[lab] * n_k + level[lab]) * n_l + np.searchsorted(values, t.gold[lab])
    gold_counts = np.bincount(cell, minlength=n_m * n_k * n_l).reshape(n_m, n_k, n_l)
    gold_sum = np.bincount(t.model[lab], weights=t.gold[lab], minlength=n_m)
    return JudgeCounts(models=t.models, judge_levels=lv, gold_values=values,
                       level_counts=counts.astype(np.float64),
                       gold_counts=gold_counts.astype(np.float64), gold_sum=gold_sum,
                       notes=_data_notes(t.models, gold_counts, counts))


def _data_notes(models: np.ndarray, gold_counts: np.ndarray, counts: np.ndarray
                ) -> tuple[str, ...]:
    notes = []
    few = gold_counts.sum(axis=(1, 2)) < 2
    if few.any():
        notes.append(f"model(s) {models[few][:10].tolist()} have fewer than two gold labels: "
                     "with pooling='partial' the judge's behaviour on them is learnt from "
                     "the other models' labels (pooled), with pooling='none' their P(gold | "
                     "judge) is the prior's (uniform)")
    empty = counts.sum(axis=0) == 0
    if empty.any():
        notes.append(f"{int(empty.sum())} judge level(s) of `levels` hold no item: they get "
                     "the Dirichlet prior's share only")
    return tuple(notes)


# --- the pooled confusion: PyMC model, compiled once per shape, sampled by nutpie -----------------

def build_model(shape: tuple[int, int, int]) -> Any:
    """The partially pooled judge model (module docstring) on the labelled counts
    ``gold_counts`` (M, L, K), the unlabelled counts ``unlabelled_counts`` (M, K) and the prior
    scales, all ``pm.Data`` (a compiled model is refitted on new data of the same shape); the
    free variables are ``gold_share`` (p, model x gold value) and the standardised
    ``intercept_raw``, ``confusion_sd_raw``, ``deviation_z`` (the prior scales multiply them)."""
    import pymc as pm
    import pytensor.tensor as pt

    n_m, n_k, n_l = shape
    with pm.Model() as pm_model:
        counts = pm.Data("gold_counts", np.zeros((n_m, n_l, n_k)))
        unlabelled = pm.Data("unlabelled_counts", np.zeros((n_m, n_k)))
        a_sigma = pm.Data("prior_intercept_sigma", DEFAULT_PRIORS["intercept_sigma"])
        tau_sigma = pm.Data("prior_confusion_sd_sigma", DEFAULT_PRIORS["confusion_sd_sigma"])
        share = pm.Dirichlet("gold_share", a=np.full((n_m, n_l), CHAIN_PRIOR))
        a_raw = pm.Normal("intercept_raw", 0.0, 1.0, shape=(n_l, n_k - 1))
        tau_raw = pm.HalfNormal("confusion_sd_raw", 1.0, shape=(n_l,))
        z = pm.Normal("deviation_z", 0.0, 1.0, shape=(n_m, n_l, n_k - 1))
        eta = a_sigma * a_raw[None] + (tau_sigma * tau_raw)[None, :, None] * z
        eta = pt.concatenate([pt.zeros((n_m, n_l, 1)), eta], axis=-1)
        log_joint = pt.log(share)[:, :, None] + pt.special.log_softmax(eta, axis=-1)
        pm.Potential("judge_loglik", (counts * log_joint).sum()
                     + (unlabelled * pt.logsumexp(log_joint, axis=1)).sum())
    return pm_model


def _compiled(shape: tuple[int, int, int]) -> tuple[Any, float]:
    """The nutpie model of this shape (compiled on first use in the process, its machine code
    cached across processes); compile seconds."""
    if shape in _COMPILED:
        return _COMPILED[shape], 0.0
    start = time.perf_counter()
    pm_model = build_model(shape)
    _COMPILED[shape] = compile_pymc_model(
        pm_model, var_names=[v.name for v in pm_model.free_RVs],
        structure={"model": "judges", "key": [int(s) for s in shape]},
        sources=[__file__])[0]
    return _COMPILED[shape], time.perf_counter() - start


def _softmax_padded(eta: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``eta`` with a 0 logit put first."""
    eta = np.concatenate([np.zeros((*eta.shape[:-1], 1)), eta], axis=-1)
    eta -= eta.max(axis=-1, keepdims=True)
    out = np.exp(eta)
    return out / out.sum(axis=-1, keepdims=True)


def _sample_partial(data: JudgeCounts, priors: dict[str, float], sizes: tuple[int, int, int],
                    seed: int) -> tuple[dict[str, np.ndarray], xr.Dataset, dict[str, float]]:
    """nutpie's draws of the pooled model: p (chain, draw, M, L), r = P(judge | gold)
    (chain, draw, M, L, K), the pooled parameters; the sampler statistics; the timings."""
    import nutpie

    draws, tune, chains = sizes
    compiled, compile_s = _compiled(data.shape)
    start = time.perf_counter()
    unlabelled = data.level_counts - data.gold_counts.sum(axis=-1)
    raw = nutpie.sample(with_data(compiled,
        gold_counts=np.swapaxes(data.gold_counts, 1, 2), unlabelled_counts=unlabelled,
        prior_intercept_sigma=priors["intercept_sigma"],
        prior_confusion_sd_sigma=priors["confusion_sd_sigma"]),
        draws=draws, tune=tune, chains=chains, cores=chains, seed=seed, progress_bar=False,
        save_warmup=False, target_accept=TARGET_ACCEPT)
    sample_s = time.perf_counter() - start
    post = raw["posterior"].to_dataset()
    a = priors["intercept_sigma"] * post["intercept_raw"].values            # (C, D, L, K-1)
    tau = priors["confusion_sd_sigma"] * post["confusion_sd_raw"].values    # (C, D, L)
    r = _softmax_padded(a[:, :, None] + tau[:, :, None, :, None] * post["deviation_z"].values)
    return {GOLD_SHARE: post["gold_share"].values, JUDGE_GIVEN_GOLD: r,
            "confusion_intercept": a, CONFUSION_SD: tau}, sampler_stats(raw), {
        "compile_seconds": compile_s, "sampling_seconds": sample_s}


def _dirichlet(alpha: np.ndarray, lead: tuple[int, int], gen: np.random.Generator
               ) -> np.ndarray:
    """Dirichlet draws (*lead, ..., K) from ``alpha`` (..., K) by normalised gammas."""
    g = gen.standard_gamma(np.broadcast_to(alpha, (*lead, *alpha.shape)))
    return g / g.sum(axis=-1, keepdims=True)


def _chain_rule(data: JudgeCounts, lead: tuple[int, int], gen: np.random.Generator
                ) -> dict[str, np.ndarray]:
    """Exact posterior draws of the chain rule (``pooling="none"``): pi (chain, draw, M, K)
    and q = P(gold | judge) (chain, draw, M, K, L)."""
    return {JUDGE_SHARE: _dirichlet(data.level_counts + CHAIN_PRIOR, lead, gen),
            GOLD_GIVEN_JUDGE: _dirichlet(data.gold_counts + CHAIN_PRIOR, lead, gen)}


def _by_judge(parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The pooled model's draws turned around by Bayes' rule: pi_mj = sum_l p_ml r_mlj and
    q_mjl = p_ml r_mlj / pi_mj."""
    joint = parts[GOLD_SHARE][..., :, None] * parts[JUDGE_GIVEN_GOLD]       # (C, D, M, L, K)
    pi = joint.sum(axis=-2)
    return {**parts, JUDGE_SHARE: pi, GOLD_GIVEN_JUDGE: np.swapaxes(joint / pi[..., None, :],
                                                                    -1, -2)}


def _benchmark(data: JudgeCounts, q: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """The mean gold score over each model's judged items: its gold labels plus the
    unlabelled items' gold drawn given the judge level, q (chain, draw, M, K, L) ->
    (chain, draw, M)."""
    unlabelled = (data.level_counts - data.gold_counts.sum(axis=-1)).astype(np.int64)
    drawn = gen.multinomial(np.broadcast_to(unlabelled, q.shape[:-1]), q)
    total = data.gold_sum + (drawn @ data.gold_values).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / data.n_judged


def _posterior(data: JudgeCounts, parts: dict[str, np.ndarray], gen: np.random.Generator
               ) -> xr.Dataset:
    """The posterior group: judge shares, P(gold | judge), both scopes' means and, pooled,
    the gold shares, P(judge | gold) and the pooled parameters."""
    pi, q = parts[JUDGE_SHARE], parts[GOLD_GIVEN_JUDGE]
    theta = (parts[GOLD_SHARE] @ data.gold_values if GOLD_SHARE in parts
             else np.sum(pi * (q @ data.gold_values), axis=-1))
    cd = (*SAMPLE_DIMS, MODEL)
    dims = {JUDGE_SHARE: (*cd, JUDGE_LEVEL), GOLD_GIVEN_JUDGE: (*cd, JUDGE_LEVEL, GOLD_LEVEL),
            GOLD_SHARE: (*cd, GOLD_LEVEL), JUDGE_GIVEN_GOLD: (*cd, GOLD_LEVEL, JUDGE_LEVEL),
            CONFUSION_SD: (*SAMPLE_DIMS, GOLD_LEVEL),
            "confusion_intercept": (*SAMPLE_DIMS, GOLD_LEVEL, JUDGE_CONTRAST)}
    out = xr.Dataset(
        {CORRECTED_MEAN: (cd, theta), BENCHMARK_MEAN: (cd, _benchmark(data, q, gen)),
         **{name: (dims[name], values) for name, values in parts.items()}},
        coords={MODEL: data.models, JUDGE_LEVEL: data.judge_levels,
                GOLD_LEVEL: data.gold_values})
    if "confusion_intercept" in parts:
        out = out.assign_coords({JUDGE_CONTRAST: data.judge_levels[1:]})
    out[CORRECTED_MEAN].attrs["description"] = (
        "each model's mean gold score on the items' population: sum_l v_l P(gold = v_l) = "
        "sum_j P(judge = j) E[gold | judge = j]")
    out[BENCHMARK_MEAN].attrs["description"] = (
        "each model's mean gold score over its judged items (gold labels, and the unlabelled "
        "items' gold drawn given the judge level)")
    return out


# --- the fit object -------------------------------------------------------------------------------

@dataclass(eq=False, repr=False)
class JudgeFit(PosteriorFit):
    """A fitted judge model (see :func:`evaluq.judges.fit_judge_model`).

    Attributes
    ----------
    idata
        ArviZ data (``xarray.DataTree``): ``posterior`` (chain, draw, ...) with
        ``corrected_mean`` and ``benchmark_mean`` (model), ``judge_share`` (model,
        judge_level), ``gold_given_judge`` (model, judge_level, gold_level) and, with
        partial pooling, ``gold_share`` (model, gold_level), ``judge_given_gold`` (model,
        gold_level, judge_level), ``confusion_sd`` (gold_level) and
        ``confusion_intercept`` (gold_level, judge_contrast); ``sample_stats``;
        ``observed_data`` (the counts); ``constant_data`` (the priors).
    config
        The arguments, priors, seeds, timings and ``sampler`` (``"nutpie"``, or
        ``"exact"``: conjugate draws with ``pooling="none"``).
    data
        The counts (:class:`JudgeCounts`).
    """

    idata: xr.DataTree
    config: dict[str, Any]
    data: JudgeCounts = field(repr=False)
    SCOPES: ClassVar[tuple[str, ...]] = SCOPES
    pairwise_differences = PosteriorFit.pairwise_differences
    rank_probabilities = PosteriorFit.rank_probabilities
    diagnostics = PosteriorFit.diagnostics
    save = PosteriorFit.save

    @property
    def pooling(self) -> str:
        """``"partial"`` or ``"none"``."""
        return str(self.config["pooling"])

    def means(self, scope: str = "population") -> xr.DataArray:
        """Posterior draws (chain, draw, model) of each model's mean gold score.

        Parameters
        ----------
        scope
            ``"population"``: on the items' population,
            :math:`\\sum_j \\pi_{mj} E[\\text{gold} \\mid j, m]` (the chain rule's theta);
            ``"benchmark"``: over the model's own judged items (its gold labels, and the
            unlabelled items' gold drawn given their judge level).
        """
        scope = check_choice("scope", scope, SCOPES)
        return self.posterior[CORRECTED_MEAN if scope == "population" else BENCHMARK_MEAN]

    def _scope_draws(self, scope: str) -> xr.DataArray:
        return self.means(scope)

    def confusion(self) -> xr.DataArray:
        """Posterior mean of P(gold = l | judge = j) per model (model, judge_level,
        gold_level)."""
        return self.posterior[GOLD_GIVEN_JUDGE].mean(SAMPLE_DIMS)

    def _diagnose(self, post: xr.Dataset, stats: xr.Dataset) -> pd.DataFrame:
        post = cells_as_models(post[[v for v in REPORTED if v in post]])
        table = convergence_table(post, SAMPLE_DIMS)
        n_divergent = divergences(stats)
        exact = self.config["sampler"] == "exact"      # independent draws: nothing to converge
        table.attrs = {"divergences": n_divergent, "problems": [] if exact else
                       convergence_problems(table, n_divergent, rhat_max=RHAT_MAX,
                                            ess_min=ESS_MIN, advice=ADVICE)}
        return table

    def _summary_columns(self) -> dict[str, Any]:
        cols: dict[str, Any] = {N_GOLD: self.data.n_gold.astype(int),
                                N_JUDGED: self.data.n_judged.astype(int)}
        for scope in SCOPES:
            cols |= summary_columns(self.means(scope), scope)
        return cols

    def _header(self) -> str:
        post = self.posterior
        n_m, n_k, n_l = self.data.shape
        div = divergences(self.idata["sample_stats"].to_dataset())
        return (f"JudgeFit(pooling={self.pooling!r}, {n_m} models, {n_k} judge levels, "
                f"{n_l} gold values, {post.sizes['chain']} chains x {post.sizes['draw']} "
                f"draws, sampler={self.config['sampler']!r}, divergences={div})")

    def _notes(self) -> list[str]:
        return list(self.data.notes)


# --- public functions -----------------------------------------------------------------------------

def _observed(data: JudgeCounts) -> xr.Dataset:
    return xr.Dataset(
        {"level_counts": ((MODEL, JUDGE_LEVEL), data.level_counts),
         "gold_counts": ((MODEL, JUDGE_LEVEL, GOLD_LEVEL), data.gold_counts),
         "gold_sum": (MODEL, data.gold_sum)},
        coords={MODEL: data.models, JUDGE_LEVEL: data.judge_levels,
                GOLD_LEVEL: data.gold_values})


def _exact_stats(chains: int, draws: int) -> xr.Dataset:
    """Sampler statistics of exact independent draws: no divergence."""
    return xr.Dataset({"diverging": (SAMPLE_DIMS, np.zeros((chains, draws), dtype=bool))})


def _draw(data: JudgeCounts, pooling: str, priors: dict[str, float],
          sizes: tuple[int, int, int], gen: np.random.Generator
          ) -> tuple[xr.Dataset, xr.Dataset, dict[str, Any]]:
    """The posterior group, the sampler statistics and the run's settings."""
    seed, post_seed = (int(s) for s in gen.integers(0, 2**31 - 1, size=2))
    draws, _, chains = sizes
    post_gen = np.random.default_rng(post_seed)
    if pooling == "none":
        parts = _chain_rule(data, (chains, draws), post_gen)
        stats = _exact_stats(chains, draws)
        run: dict[str, Any] = {"sampler": "exact"}
    else:
        if data.shape[1] < 2:
            raise ValueError("the judge gives every item one level: it carries no information "
                             "to pool; use pooling='none' (the gold labels alone)")
        pooled, stats, timings = _sample_partial(data, priors, sizes, seed)
        parts = _by_judge(pooled)
        run = {"sampler": "nutpie", **timings}
    return _posterior(data, parts, post_gen), stats, {
        "seed": seed, "post_seed": post_seed, **run}


def fit_judge_model(table: Any, *, model: str = "model", item: str = "item",
                    judge: str = "judge", gold: str = "gold", levels: Any = None,
                    pooling: str = "partial", priors: dict[str, float] | None = None,
                    draws: int = 1000, tune: int = 1000, chains: int = 2,
                    rng: RNGLike = 0) -> JudgeFit:
    r"""Fit the Bayesian judge model: every model's mean gold score from a judge's discrete
    scores and a few gold labels, the judge's behaviour partially pooled across models.

    .. math::

        \theta_m = \sum_l v_l\, p_{ml}, \quad p_m \sim \mathrm{Dir}(1), \quad
        \log \frac{P(\text{judge} = j \mid \text{gold} = v_l, m)}
        {P(\text{judge} = 1 \mid \text{gold} = v_l, m)} = a_{lj} + \tau_l z_{mlj}

    (the model, its priors and its assumptions in ``models/judges.md`` and
    :mod:`evaluq.judges._bayes`). ``pooling="partial"`` pools the judge's behaviour given the
    truth (its sensitivity and specificity) across models, nutpie on the counts per (model,
    judge level, gold value); ``pooling="none"`` is the chain rule of
    :func:`evaluq.judges.ppi_mean` per model (independent Dirichlet / Beta rows of P(gold |
    judge), drawn exactly).

    Parameters
    ----------
    table
        One row per (model, item): the judge's score and the gold score (NaN where the item is
        unlabelled); a DataFrame or a file, read as :func:`evaluq.judges.judged_means` reads
        it.
    model, item, judge, gold
        Column names. The judge's scores are discrete (at most 50 levels), the gold scores
        too (at most 10 values; 0/1 for binary gold).
    levels
        The judge's levels (increasing numbers holding every judge score, e.g. ``range(1,
        6)``); a level no item has gets the Dirichlet prior's share. Default: the distinct
        judge scores.
    pooling
        ``"partial"`` (default) or ``"none"``.
    priors
        Prior scales: ``intercept_sigma`` (sigma_a, default 1.5) and ``confusion_sd_sigma``
        (sigma_tau, default 1.0); partial pooling only.
    draws, tune, chains
        Posterior draws per chain, tuning steps per chain (nutpie; unused by the exact draws
        of ``pooling="none"``), chains.
    rng
        Seed or Generator of the sampler and of the exact draws; default 0 (same seed, same
        draws).

    Returns
    -------
    JudgeFit
        ``means(scope)``, ``pairwise_differences(scope, rope=)``,
        ``rank_probabilities(scope)``, ``diagnostics()``, ``confusion()``, ``save(path)``
        (:func:`load_judge_fit`). Scopes: ``"population"`` (default) and ``"benchmark"``.
        Warns :class:`~evaluq.errors.ConvergenceWarning` when R-hat > 1.01, an ESS < 400 or
        there are divergences.

    Raises
    ------
    CubeError
        As :func:`evaluq.judges.judged_means`: a missing column, a repeated (model, item), a
        judge score that is NaN or no number, no gold label.
    ValueError
        Continuous judge or gold scores, ``levels`` not holding every judge score, an
        unknown ``pooling``, a bad prior scale.

    See Also
    --------
    evaluq.judges.judged_means : the frequentist corrections and paired differences.
    evaluq.fit_items : the item model's grader effects (``family="ordinal"``, ``grader=``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evaluq.judges._bayes import fit_judge_model
    >>> rng = np.random.default_rng(0)
    >>> rows = []
    >>> for m, p in (("a", 0.6), ("b", 0.7)):
    ...     gold = (rng.random(400) < p).astype(float)
    ...     judge = np.where(rng.random(400) < 0.85, gold, 1 - gold)
    ...     rows.append(pd.DataFrame({"model": m, "item": range(400), "judge": judge,
    ...                               "gold": np.where(np.arange(400) < 60, gold, np.nan)}))
    >>> fit = fit_judge_model(pd.concat(rows), pooling="none")
    >>> fit.means().mean(("chain", "draw")).round(2).values.tolist()
    [0.55, 0.69]
    >>> fit.rank_probabilities().p_best.round(2).values.tolist()
    [0.02, 0.98]
    """
    pooling = check_choice("pooling", pooling, POOLINGS)
    sizes = (check_int("draws", draws, minimum=1), check_int("tune", tune, minimum=0),
             check_int("chains", chains, minimum=1))
    resolved = merge_priors(DEFAULT_PRIORS, priors, DEFAULT_PRIORS.keys(), signed=())
    gen = check_rng(rng)
    data = judge_counts(table, model=model, item=item, judge=judge, gold=gold, levels=levels)
    post, stats, run = _draw(data, pooling, resolved, sizes, gen)
    config: dict[str, Any] = {
        "pooling": pooling, "columns": {"model": model, "item": item, "judge": judge,
                                        "gold": gold},
        "draws": sizes[0], "tune": sizes[1], "chains": sizes[2], "priors": resolved,
        "chain_prior": CHAIN_PRIOR, **run}
    tree = xr.DataTree.from_dict({
        "posterior": post, "sample_stats": stats, "observed_data": _observed(data),
        "constant_data": xr.Dataset({f"prior_{k}": v for k, v in resolved.items()})})
    tree.attrs = {"evaluq_config": json.dumps(config), "notes": json.dumps(list(data.notes))}
    fit = JudgeFit(idata=tree, config=config, data=data)
    fit._warn_unconverged()
    return fit


def load_judge_fit(path: str | os.PathLike[str]) -> JudgeFit:
    """Load a fit written by :meth:`JudgeFit.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The NetCDF file.

    Returns
    -------
    JudgeFit
        The same posterior, configuration and counts.

    Examples
    --------
    >>> import os, shutil, tempfile, pandas as pd
    >>> from evaluq.judges._bayes import fit_judge_model, load_judge_fit
    >>> table = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "item": list(range(4)) * 2,
    ...                       "judge": [1, 0, 1, 1, 0, 0, 1, 0],
    ...                       "gold": [1, 0, None, None, 0, 1, None, None]})
    >>> fit = fit_judge_model(table, pooling="none", draws=500)
    >>> path = os.path.join(tempfile.mkdtemp(), "judge.nc")
    >>> fit.save(path)
    >>> load_judge_fit(path).means().equals(fit.means())
    True
    >>> shutil.rmtree(os.path.dirname(path))
    """
    tree, config = read_fit_tree(path, writer="JudgeFit.save", what="judge-model fit")
    if "observed_data" not in tree or "level_counts" not in tree["observed_data"]:
        raise ValueError(f"`path`: {str(path)!r} is not a file written by JudgeFit.save")
    obs = tree["observed_data"].to_dataset()
    data = JudgeCounts(models=obs[MODEL].values, judge_levels=obs[JUDGE_LEVEL].values,
                       gold_values=obs[GOLD_LEVEL].values,
                       level_counts=obs["level_counts"].values,
                       gold_counts=obs["gold_counts"].values, gold_sum=obs["gold_sum"].values,
                       notes=tuple(json.loads(tree.attrs.get("notes", "[]"))))
    return JudgeFit(idata=tree, config=config, data=data)

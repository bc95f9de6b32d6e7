"""Prior and posterior predictive checks of an item-model fit, each reported pass / fail.

Statistics (replicated data drawn exactly given each draw's parameters: item effects from
their conditional grid after the fit, from N(0, sigma_item^2) under the prior):

- ``accuracy`` per model: the mean score;
- ``item_spread``: the SD over items of the items' mean score (over models and epochs), which
  the item difficulties' spread drives;
- ``epoch_agreement`` (two or more epochs): the share of (model, item) pairs whose epochs all
  agree, which is too high in the data when epochs are overdispersed (run-to-run drift the
  binomial family leaves out);
- ``item_skewness`` and ``item_kurtosis`` (``SHAPE_MIN_ITEMS`` items or more): the
  standardised third and fourth moments over items of the items' mean score, the shape of
  the item population beyond its spread (issue 36): a bimodal population of difficulties
  (many easy items and a hard cluster) gives a flatter, more skewed spread of item scores
  than any normal population with the same SD, which the normal model's replicates cannot
  reproduce; when either fails under
  ``item_distribution="normal"`` the table's ``attrs["advice"]`` recommends
  ``item_distribution="learned"`` (whose replicates draw the items from the learned
  density).

A posterior check passes when the posterior predictive p-value P(T_rep >= T_obs) lies in
[0.025, 0.975]; a prior check when the observed statistic lies inside the central 99% of the
prior predictive distribution (the prior does not rule the data out).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pandas as pd
from scipy.special import expit

from evaluq._dims import MODEL
from evaluq._kernels import percentile_interval
from evaluq.item_model._data import FittedDraws, ItemData
from evaluq.item_model._model import log_integrand, term_mode
from evaluq.item_model._posterior import (
    GRID,
    GRID_HALF_WIDTH,
    flat_posterior,
    linear_predictor,
    prior_ratio,
)

N_REPLICATES: Final = 200
SHAPE_MIN_ITEMS: Final = 300
"""``item_skewness`` and ``item_kurtosis`` are checked with at least this many items (with
fewer, the third and fourth moments of a few dozen item scores are too noisy to tell a
population's shape)."""
POSTERIOR_BAND: Final = (0.025, 0.975)
"""A posterior check passes when its p-value lies in this band (its replicates' band too)."""
PRIOR_BAND: Final = (0.005, 0.995)
"""A prior check passes when the observed statistic lies between these quantiles of the prior
predictive replicates (its central 99%). These are the check's rule, spelled as quantiles,
not an interval of draws: ``_kernels.percentile_interval`` forms its tails as
(1 - level) / 2, which differs from 0.005 / 0.025 in the last bit and would move the bands."""


def _observed(data: ItemData) -> dict[str, np.ndarray]:
    per = np.asarray(data.per_item)
    n = data.epochs[:, np.asarray(data.item_task)]                      # (M, I)
    score = per.sum(0) / n.sum(0)
    out = {"accuracy": data.correct.sum(axis=1) / data.trials.sum(axis=1),
           "item_spread": np.array([score.std()])}
    if len(score) >= SHAPE_MIN_ITEMS:
        centred = score - score.mean()
        sd = max(float(centred.std()), 1e-12)
        out["item_skewness"] = np.array([(centred**3).mean() / sd**3])
        out["item_kurtosis"] = np.array([(centred**4).mean() / sd**4])
    if n.max() >= 2:
        multi = n >= 2
        agree = ((per == 0) | (per == n)) & multi
        out["epoch_agreement"] = np.array([agree.sum() / multi.sum()])
    return out


def _replicate(data: ItemData, eta: np.ndarray, b: np.ndarray,
               gen: np.random.Generator, rho: float | None = None) -> dict[str, np.ndarray]:
    """Statistics of data replicated from eta (model, task) and item effects b (item,);
    beta-binomial counts when the run drift ``rho`` is given."""
    task = np.asarray(data.item_task)
    n = data.epochs[:, task]
    p = expit(eta[:, task] - b)
    if rho is not None:
        from evaluq.item_model._betabinomial import replicate_counts

        y = replicate_counts(n, p, rho, gen)
    else:
        y = gen.binomial(n.astype(np.int64), p)
    onehot = np.eye(len(data.tasks))[task]                               # (I, K)
    fake = ItemData(**{**data.__dict__, "per_item": y.astype(np.float64),
                       "correct": y @ onehot})
    return _observed(fake)


def _posterior_items(data: ItemData, eta: np.ndarray, sigma: float,
                     gen: np.random.Generator, shape: np.ndarray | None = None) -> np.ndarray:
    """One draw of every item's effect from its exact conditional (grid of the posterior;
    ``shape``: the coefficients of a learned item distribution, the prior g)."""
    t_task = data.term_task
    eta_t = eta[:, t_task].T[None]                                       # (1, T, M)
    n_t = data.epochs[:, t_task].T[None]
    s = np.array([sigma])
    mode, sd = term_mode(eta_t, n_t, data.term_total, s)
    z = (np.arange(GRID) + 0.5) / GRID * 2 * GRID_HALF_WIDTH - GRID_HALF_WIDTH
    grid = mode[..., None] + sd[..., None] * z
    logd = log_integrand(eta_t, n_t, data.term_total, s, grid)[0]
    if shape is not None:
        logd = logd + prior_ratio(grid, s, shape[None])[0]
    prob = np.exp(logd - logd.max(axis=-1, keepdims=True))
    cdf = np.cumsum(prob / prob.sum(axis=-1, keepdims=True), axis=-1)
    item_term = np.asarray(data.item_term)
    u = gen.random(len(item_term))
    cell = (cdf[item_term] < u[:, None]).sum(axis=1).clip(0, GRID - 1)
    width = 2 * GRID_HALF_WIDTH / GRID * sd[0][item_term]
    return grid[0][item_term, cell] + (gen.random(len(item_term)) - 0.5) * width


def _prior_draw(data: ItemData, priors: dict[str, float], gen: np.random.Generator
                ) -> tuple[np.ndarray, float]:
    n_m, n_k = data.shape
    z = gen.normal(0, abs(gen.normal(0, priors["dev_sigma"])), n_m)     # tau_dev, then dev
    eta = gen.normal(priors["alpha_mu"], priors["alpha_sigma"]) + (z - z.mean())[:, None] \
        + np.zeros((n_m, n_k))
    if n_k > 1:
        eta = eta + abs(gen.normal(0, priors["sigma_task_sigma"])) * gen.normal(0, 1, n_k)
        eta = eta + abs(gen.normal(0, priors["sigma_mxt_sigma"])) * gen.normal(0, 1, (n_m, n_k))
    return eta, abs(gen.normal(0, priors["sigma_item_sigma"]))


def _rows(kind: str, observed: dict[str, np.ndarray], reps: list[dict[str, np.ndarray]],
          models: list[str]) -> list[dict]:
    rows = []
    for name, obs in observed.items():
        rep = np.stack([r[name] for r in reps])                          # (rep, k)
        for k, value in enumerate(obs):
            draws = rep[:, k]
            p = float((draws >= value).mean())
            band = PRIOR_BAND if kind == "prior" else POSTERIOR_BAND
            lo, hi = percentile_interval(draws, band[1] - band[0])
            passed = (lo <= value <= hi) if kind == "prior" else (
                POSTERIOR_BAND[0] <= p <= POSTERIOR_BAND[1])
            rows.append({"check": kind, "statistic": name,
                         MODEL: models[k] if name == "accuracy" else "",
                         "observed": float(value), "replicated_mean": float(draws.mean()),
                         "lower": float(lo), "upper": float(hi), "p_value": p,
                         "passed": bool(passed)})
    return rows


def _beta_binomial_replicates(fit: FittedDraws, eta: np.ndarray, pick: np.ndarray,
                              n_replicates: int, gen: np.random.Generator
                              ) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    """Posterior and prior replicates under the beta-binomial family (run drift rho: item
    effects from their exact conditional given the pattern; rho ~ Beta(1, run_drift_beta)
    under the prior)."""
    from evaluq.item_model._betabinomial import posterior_items

    data = fit.data
    sigma = flat_posterior(fit.posterior, ("sigma_item", "run_drift"))
    post = []
    for d in pick:                        # one replicate per posterior draw
        rho = float(sigma["run_drift"][d])
        b = posterior_items(data, eta[d], float(sigma["sigma_item"][d]), rho, gen)
        post.append(_replicate(data, eta[d], b, gen, rho))
    prior = []
    n_items = len(np.asarray(data.item_term))
    priors = fit.config["priors"]
    for _ in range(n_replicates):          # one replicate per prior draw (vectorised inside)
        eta0, sigma0 = _prior_draw(data, priors, gen)
        rho0 = float(np.clip(gen.beta(1.0, priors["run_drift_beta"]), 1e-9, 1 - 1e-9))
        prior.append(_replicate(data, eta0, gen.normal(0, sigma0, n_items), gen, rho0))
    return post, prior


def predictive_checks(fit: FittedDraws, n_replicates: int, gen: np.random.Generator
                      ) -> pd.DataFrame:
    """See :meth:`ItemFit.predictive_checks`."""
    data = fit.data
    if not data.has_items:
        raise ValueError("predictive_checks needs a fit with items (item=...)")
    observed = _observed(data)
    flat = flat_posterior(fit.posterior, ("alpha", "dev", "sigma_item", "task_effect",
                                          "model_x_task", "sigma_task",
                                          "sigma_model_x_task", "item_shape"))
    eta = linear_predictor(data, flat)
    shape = flat.get("item_shape")
    pick = gen.choice(len(eta), size=min(n_replicates, len(eta)), replace=False)
    if "run_drift" in fit.posterior:
        post, prior = _beta_binomial_replicates(fit, eta, pick, n_replicates, gen)
    else:
        post = [_replicate(data, eta[d], _posterior_items(
            data, eta[d], flat["sigma_item"][d], gen, None if shape is None else shape[d]),
            gen) for d in pick]
        prior = []
        n_items = len(np.asarray(data.item_term))
        for _ in range(n_replicates):      # one replicate per prior draw (vectorised inside)
            eta0, sigma0 = _prior_draw(data, fit.config["priors"], gen)
            if shape is None:
                b0 = gen.normal(0, sigma0, n_items)
            else:
                from evaluq.item_model._item_density import prior_shape, sample_items

                c0 = prior_shape(gen, fit.config["priors"]["shape_sigma"])
                b0 = sample_items(gen, sigma0, c0, n_items)
            prior.append(_replicate(data, eta0, b0, gen))
    models = [str(m) for m in data.models]
    out = pd.DataFrame(_rows("prior", observed, prior, models)
                       + _rows("posterior", observed, post, models))
    out.attrs = {"n_replicates": n_replicates,
                 "rule": "posterior: p-value P(T_rep >= T_obs) in [0.025, 0.975]; prior: "
                         "observed inside the central 99% of the prior predictive"}
    shape_rows = out[(out.check == "posterior")
                     & out.statistic.isin(["item_skewness", "item_kurtosis"])]
    if shape is None and not shape_rows.passed.all():
        out.attrs["advice"] = (
            "the items' mean scores have a shape (skewness / kurtosis) the normal item "
            "distribution does not reproduce: its new-items score averages over the wrong "
            "population; refit with fit_items(..., item_distribution='learned')")
        if "run_drift" in fit.posterior:            # the learned distribution is the 1PL's
            out.attrs["advice"] += (
                " and family='binomial' (the learned distribution is the binomial "
                "family's): epochs that agree beyond the binomial, which make 'auto' pick "
                "'beta-binomial', can come from this item shape rather than run drift; "
                "compare the two fits with compare_fits")
    return out

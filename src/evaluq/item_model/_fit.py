"""``fit_items``: sample the marginal item model and wrap the posterior in a fit object."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import (
    BENCHMARK_SCORE,
    ITEM,
    MODEL,
    NEW_ITEMS_SCORE,
    TASK,
    TERM,
)
from evaluq._fits import (
    PosteriorFit,
    divergences,
    posterior_interval,
    read_fit_tree,
    sampler_stats,
    summary_columns,
)
from evaluq._validation import (
    RNGLike,
    check_bool,
    check_choice,
    check_column_args,
    check_confidence_level,
    check_int,
    check_rng,
    implicit_epoch,
    numeric_column,
)
from evaluq.errors import ConvergenceWarning
from evaluq.item_model._data import FAMILIES, ItemData, item_statistics
from evaluq.item_model._diagnostics import diagnostics
from evaluq.item_model._families import Family, family_of
from evaluq.item_model._marginal import SAMPLE_DIMS, TARGET_ACCEPT
from evaluq.item_model._model import N_NODES
from evaluq.item_model._twopl import FORM as TWOPL_FORM

SCOPES: Final = ("benchmark", "new_items")


ItemConvergenceWarning = ConvergenceWarning
"""The item model's former convergence warning: another name of the one
:class:`~evaluq.errors.ConvergenceWarning` of every fit (filters on either catch both)."""


def _observed(data: ItemData) -> xr.Dataset:
    """The sufficient statistics, saved with the fit (``load_item_fit`` rebuilds the data)."""
    obs = xr.Dataset(
        {"correct": ((MODEL, TASK), data.correct), "trials": ((MODEL, TASK), data.trials),
         "epochs": ((MODEL, TASK), data.epochs), "n_items": (TASK, data.n_items),
         "term_total": (TERM, data.term_total), "term_task": (TERM, data.term_task),
         "term_weight": (TERM, data.term_weight)},
        coords={MODEL: data.models, TASK: data.tasks},
        attrs={"family": data.family, "has_items": int(data.has_items),
               "higher_is_better": int(data.higher_is_better)})
    if data.has_items:
        obs = obs.assign({"item_term": (ITEM, data.item_term),
                          "item_task": (ITEM, data.item_task),
                          "log_binom": (ITEM, data.log_binom),
                          "per_item": ((MODEL, ITEM), data.per_item)})
        obs = obs.assign_coords({ITEM: data.item_labels})
    if data.term_counts is not None:
        obs = obs.assign({"term_counts": ((TERM, MODEL), data.term_counts)})
    return obs


def _build_tree(data: ItemData, raw: xr.DataTree, config: dict[str, Any],
                priors: dict[str, float], family: Family) -> xr.DataTree:
    assert family.posterior is not None                  # the ordinal family fits elsewhere
    post, items = family.posterior(data, raw, config["post_seed"])
    stats = sampler_stats(raw)
    groups = {"posterior": post, "sample_stats": stats, "observed_data": _observed(data),
              "constant_data": xr.Dataset({f"prior_{k}": v for k, v in priors.items()})}
    if items.data_vars:
        groups["item_effects"] = items
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = {"evaluq_config": json.dumps(config), "data_digest": data.digest,
                  "notes": json.dumps(data.notes)}
    return tree


# --- the fit object -------------------------------------------------------------------------------

@dataclass(eq=False, repr=False)
class ItemFit(PosteriorFit):
    """A fitted item model (see :func:`evaluq.fit_items`).

    Attributes
    ----------
    idata
        ArviZ data (``xarray.DataTree``): ``posterior`` (chain, draw, ...) with the sampled
        parameters, ``eta`` (model, task; logit scale), ``benchmark_score`` and
        ``new_items_score`` (model; probability scale), ``icc_epochs``, ``design_effect``
        and ``effective_n`` (model); ``item_effects`` (item: posterior mean and SD of each
        item's difficulty, from its exact conditional); ``sample_stats``; ``observed_data``
        (the sufficient statistics); ``constant_data`` (the priors).
    config
        The arguments, priors, seeds, timings and ``form`` (``"marginal"``, every family's
        default with items: item effects integrated out on a shared grid and drawn afterwards
        from their exact conditional; ``"no items"`` with ``item=None``; ``"explicit"``: one
        sampled parameter per item, the tests' reference).
    data
        The sufficient statistics (:class:`ItemData`).
    """

    idata: xr.DataTree
    config: dict[str, Any]
    data: ItemData = field(repr=False)
    SCOPES: ClassVar[tuple[str, ...]] = SCOPES
    LOADER: ClassVar[str] = "evaluq.load_item_fit"
    # the fit base's questions, named on the class too (``vars(cls)``: the docstring checks
    # and the API docs list them per fit); each is defined once, in ``_fits.PosteriorFit``
    pairwise_differences = PosteriorFit.pairwise_differences
    rank_probabilities = PosteriorFit.rank_probabilities
    diagnostics = PosteriorFit.diagnostics
    save = PosteriorFit.save
    prior_contraction = PosteriorFit.prior_contraction
    PRIOR_SCOPE: ClassVar[tuple[str, str]] = ("new_items", "items")

    @property
    def _higher_is_better(self) -> bool:
        return True            # scores on the probability / rating scale, higher is better

    def _scale_priors(self) -> dict[str, tuple[str, float]]:
        """sigma_item ~ HalfNormal(sigma_item_sigma) in every family: the new-items scope's
        spread of a new item rests on it."""
        priors = self.config.get("priors", {})
        return ({"sigma_item": ("sigma_item_sigma", float(priors["sigma_item_sigma"]))}
                if "sigma_item_sigma" in priors else {})

    @property
    def form(self) -> str:
        """``"marginal"`` (item effects integrated out), ``"no items"`` or ``"explicit"``
        (sampled item parameters)."""
        return str(self.config["form"])

    def scores(self, scope: str = "benchmark") -> xr.DataArray:
        """Posterior draws (chain, draw, model) of each model's expected score at ``scope``.

        Parameters
        ----------
        scope
            ``"benchmark"``: the expected score over this benchmark's items (their effects
            drawn from their exact conditional); ``"new_items"``: the expected score on a new
            item from the same population (the item effect integrated over N(0, sigma_item^2),
            tasks weighted by their share of the items).
        """
        scope = check_choice("scope", scope, SCOPES)
        return self.posterior[BENCHMARK_SCORE if scope == "benchmark" else NEW_ITEMS_SCORE]

    def _scope_draws(self, scope: str) -> xr.DataArray:
        return self.scores(scope)

    @property
    def _family(self) -> Family:
        """The family's pieces (``_families``): checks, comparisons, variance components."""
        if self.config.get("item_distribution") == "learned":
            from evaluq.item_model._learned import learned_family

            return learned_family()
        return family_of(self.data, bool(self.config.get("discrimination")))

    def item_distribution(self, n_points: int = 201) -> xr.DataArray:
        """Posterior draws of the item-difficulty density g(b) on a grid of b.

        With ``item_distribution="learned"`` the learned density (``_item_density``:
        log g0(z) = log phi(z) + f(z) on the standardised scale z, its mean 0 and SD
        sigma_item exactly); with ``"normal"`` the N(0, sigma_item^2) density of each draw.
        Compare it with the items' own estimates (``idata["item_effects"]``).

        Parameters
        ----------
        n_points
            Points of b, equally spaced over +-5 posterior-mean sigma_item; default 201.

        Returns
        -------
        xarray.DataArray
            (chain, draw, difficulty), ``difficulty`` the points b (logit scale).

        Examples
        --------
        >>> import evaluq as eq
        >>> table = eq.simulate_items(n_models=3, n_items=50, n_epochs=2, rng=0)
        >>> fit = eq.fit_items(table, model="model", item="item", score="score",
        ...                    epoch="epoch", item_distribution="learned")  # doctest: +SKIP
        >>> fit.item_distribution().mean(("chain", "draw")).sizes     # doctest: +SKIP
        Frozen({'difficulty': 201})
        """
        from evaluq.item_model._item_density import DIFFICULTY, density_draws
        from evaluq.item_model._posterior import flat_posterior

        n = check_int("n_points", n_points, minimum=2)
        post = self.posterior
        if "sigma_item" not in post or "item_difficulty" in post:
            raise ValueError("item_distribution needs a marginal 1PL fit with items "
                             f"(item=...); this fit's form is {self.form!r}")
        flat = flat_posterior(post, ("sigma_item", "item_shape"))
        sigma = flat["sigma_item"]
        b = np.linspace(-5.0, 5.0, n) * float(sigma.mean())
        dens = density_draws(sigma, flat.get("item_shape"), b)
        return xr.DataArray(dens.reshape(post.sizes["chain"], post.sizes["draw"], n),
                            dims=("chain", "draw", DIFFICULTY), coords={DIFFICULTY: b},
                            name="item_density")

    def variance_components(self) -> xr.Dataset:
        """Posterior draws of the variance components.

        Returns
        -------
        xarray.Dataset
            On the logit scale: ``sigma_item`` (SD of the item difficulties), ``sigma_task``
            and ``sigma_model_x_task`` (when the data have several tasks / models); per model
            on the probability scale: ``icc_epochs`` (correlation of two epochs of one item),
            ``design_effect`` (1 + (E - 1) ICC) and ``effective_n`` (items x epochs /
            design effect). ``run_drift`` (``beta-binomial`` only): rho = 1 / (1 + phi), the
            correlation of two epochs of one (model, item) given the item; the ICC then adds
            it (Var p + rho E[p (1 - p)]) / (E p (1 - E p)). Under the binomial family the
            run drift is 0 by assumption, which the attrs say. The 2PL adds
            ``sigma_logdisc`` (SD of log discrimination); its ICC and design effect are
            over the joint (a, b) population of a new item.
        """
        return self._family.variance_components(self)

    def run_drift_interval(self, confidence_level: float = 0.95) -> xr.DataArray:
        """Equal-tailed credible interval of the run drift rho (``beta-binomial`` only).

        Parameters
        ----------
        confidence_level
            Level of the interval, in (0, 1); default 0.95.
        """
        from evaluq._intervals import interval_from_bounds

        level = check_confidence_level(confidence_level)
        if "run_drift" not in self.posterior:
            raise ValueError(f"run_drift_interval needs family='beta-binomial'; this fit's "
                             f"family is {self.data.family!r} (no run drift by assumption)")
        bounds = posterior_interval(self.posterior["run_drift"], level)
        return interval_from_bounds(bounds, dims=(), kind="percentile",
                                    confidence_level=level, name="run_drift")

    def predictive_checks(self, *, n_replicates: int = 200, rng: RNGLike = 0) -> pd.DataFrame:
        """Prior and posterior predictive checks, each reported pass / fail with its statistic.

        Statistics: per-model accuracy, the spread (SD over items) of the items' mean score,
        (with epochs) the share of (model, item) pairs whose epochs all agree, which
        flags run-to-run drift the binomial family leaves out, and (300 items or more) the
        skewness and kurtosis over items of the items' mean score, which flag an item
        population the normal does not fit (a bimodal one biases the new-items score; the
        table's ``attrs["advice"]`` then recommends ``item_distribution="learned"``).
        Replicated data are drawn exactly given each draw (item effects from their
        conditional after the fit, from the item distribution under the prior).

        Parameters
        ----------
        n_replicates
            Replicated data sets per check (posterior draws are subsampled); default 200.
        rng
            Seed or Generator of the replicates; default 0.

        Returns
        -------
        pandas.DataFrame
            ``check`` (prior / posterior), ``statistic``, ``model``, ``observed``,
            ``replicated_mean``, ``lower``, ``upper``, ``p_value`` (P(T_rep >= T_obs)),
            ``passed``: the posterior check passes when the p-value is in [0.025, 0.975],
            the prior check when the observed value is inside the prior predictive's central
            99%.
        """
        n, gen = check_int("n_replicates", n_replicates, minimum=2), check_rng(rng)
        return self._family.predictive_checks(self, n, gen)

    def compare_frequentist(self, *, confidence_level: float = 0.95) -> pd.DataFrame:
        """The benchmark-scope posterior beside the per-item CLT answer, one row per quantity.

        Frequentist side: the mean over items of each model's per-item score (correct over
        epochs) with the CLT interval over items, and each pair's paired difference with
        its CLT interval (the SD of the per-item differences / sqrt(I)).

        Parameters
        ----------
        confidence_level
            Level of both sides' intervals, in (0, 1); default 0.95.

        Returns
        -------
        pandas.DataFrame
            ``quantity`` (score / difference), ``model``, ``model_b``, ``frequentist``,
            ``freq_lower``, ``freq_upper``, ``posterior_mean``, ``post_lower``,
            ``post_upper``, ``agree`` (each point inside the other's interval,
            :func:`evaluq._fits.agree`).
        """
        level = check_confidence_level(confidence_level)
        post = self.scores("benchmark").stack(sample=SAMPLE_DIMS).values  # (model, sample)
        return self._family.compare_frequentist(self.data, post, level)

    def _diagnose(self, post: xr.Dataset, stats: xr.Dataset) -> pd.DataFrame:
        return diagnostics(post, stats)

    def _summary_columns(self) -> dict[str, Any]:
        cols: dict[str, Any] = {}
        for scope in SCOPES:
            cols |= summary_columns(self.scores(scope), scope)
        return cols

    def _header(self) -> str:
        post = self.posterior
        n_m, n_k = self.data.shape
        div = divergences(self.idata["sample_stats"].to_dataset())
        units = "ratings" if self.data.family == "ordinal" and not self.data.has_items \
            else "items"
        kind = ", 2PL" if self.config.get("discrimination") else ""
        if self.config.get("item_distribution") == "learned":
            kind += ", learned item distribution"
        return (f"ItemFit(family={self.data.family!r}{kind}, form={self.form!r}, {n_m} models x "
                f"{int(self.data.n_items.sum())} {units} in {n_k} task(s), "
                f"{post.sizes['chain']} chains x {post.sizes['draw']} draws, "
                f"divergences={div})")

    def _trailer(self) -> list[str]:
        if "run_drift" not in self.posterior:
            return []
        rho = self.posterior["run_drift"]
        lo, hi = posterior_interval(rho, 0.95)
        return [f"run_drift (rho) {float(rho.mean()):.4f} [{lo:.4f}, {hi:.4f}]"]

    def _notes(self) -> list[str]:
        return list(self.data.notes.values())


# --- public functions -----------------------------------------------------------------------------

def _binomial_for_auto(table: Any, columns: dict[str, Any], data: ItemData,
                       discrimination: bool) -> ItemData:
    """``family="auto"`` with the 2PL or the learned item distribution (both the binomial
    family's): the binomial statistics, with a note on why not the beta-binomial the
    epoch-agreement test would pick (its extra agreement can come from the items' unequal
    discriminations or their shape, which these fits model)."""
    binomial = item_statistics(table, model=columns["model"], item=columns["item"],
                               score=columns["score"], task=columns["task"],
                               epoch=columns["epoch"], family="binomial")
    why = "the 2PL (discrimination=True)" if discrimination else (
        "the learned item distribution")
    found = re.search(r"share of \(model, item\).*?p = [0-9.e+-]+", data.notes["family"])
    test = found.group(0) if found else "the epoch-agreement test"
    binomial.notes = binomial.notes | {"family": (
        f"family='auto' chose 'binomial' for {why}, which is the binomial family's: the "
        f"epochs of a (model, item) agree more often than the 1PL allows ({test}), which "
        "would make 'auto' pick 'beta-binomial' (run drift); items of unequal "
        "discrimination or of a non-normal spread do this too, and this fit models them. "
        "Compare with fit_items(..., family='beta-binomial') by compare_fits")}
    return binomial


def _check_args(family: Any, discrimination: Any, draws: Any, tune: Any, chains: Any
                ) -> tuple[str, int, int, int]:
    family = check_choice("family", family, FAMILIES)
    check_bool("discrimination", discrimination)
    return (family, check_int("draws", draws, minimum=1), check_int("tune", tune, minimum=0),
            check_int("chains", chains, minimum=1))


def _checked_table(table: Any, columns: dict[str, str | None]) -> tuple[pd.DataFrame, str | None]:
    """The table read once, its column arguments and its scores checked by the validators every
    per-item entry point shares (a wrong column names the argument and lists the table's
    columns; text scores name the column, a value and its row), and the epoch column: the
    table's ``epoch`` when it alone tells repeated keys apart and ``epoch=`` was not given."""
    from evaluq.io import as_table

    df, _ = as_table(table, "table")
    check_column_args(df.columns, columns)
    numeric_column(df, str(columns["score"]), "score")
    epoch = columns["epoch"]
    if epoch is None and columns["item"] is not None:
        keys = [c for c in (columns["model"], columns["task"], columns["item"],
                            columns["grader"]) if c is not None]
        epoch = implicit_epoch(df, keys, columns.values(), "epoch")
    return df, epoch


def fit_items(table: Any, *, model: str, item: str | None, score: str,
              task: str | None = None, epoch: str | None = None, grader: str | None = None,
              family: str = "auto", discrimination: bool = False,
              priors: dict[str, float] | None = None, draws: int = 1000, tune: int = 1000,
              chains: int = 4, rng: RNGLike = 0, grader_interaction: bool = True,
              levels: Any = None, item_distribution: str = "normal") -> ItemFit:
    """Fit the Bayesian item model (1PL, items crossed with models) to per-item scores.

    .. math::

        \\operatorname{logit} P(y_{mie} = 1) = \\alpha + d_m + t_k + g_{mk} - b_i, \\quad
        b_i \\sim N(0, \\sigma_{item}^2),\\ t_k \\sim N(0, \\sigma_{task}^2),\\
        g_{mk} \\sim N(0, \\sigma_{m \\times t}^2)

    for model m, item i of task k and epoch e (``models/item_model.md``). The item effects
    are integrated out on one grid shared by every term (the sampler's rule; adaptive
    Gauss-Hermite, ``N_NODES`` nodes, for pointwise likelihood and checks); items with the same
    total in a task (the 1PL's sufficient statistic; identical response patterns a fortiori)
    form one weighted term, so the sampler (nutpie) sees only the model, task and scale
    parameters, whatever the number of items. The item effects are drawn afterwards from
    their exact conditional. Two scopes on the probability scale: ``"benchmark"`` (expected
    score over these items) and ``"new_items"`` (a new item of the same population).

    Parameters
    ----------
    table
        Per-item scores, one row per model x item [x task] [x epoch] (a DataFrame or a
        file; the tables of :func:`evaluq.from_items`).
    model, item, score, task, epoch
        Column names. ``item=None`` fits without item effects (rows exchangeable). A wrong
        column raises a :class:`~evaluq.errors.CubeError` naming the argument and listing the
        table's columns; text scores raise naming the column, a value and its row. Without
        ``epoch``, a table whose column ``epoch`` (a harness log's) alone tells apart rows
        that repeat a (model, task, item) is read with ``epoch="epoch"`` and an
        :class:`~evaluq.errors.ImplicitEpochWarning`.
    grader
        Column of the grader (judge) of each rating: grader effects and grader x model
        effects (self-preference); needs the ordinal family (``models/item_model.md``).
    family
        ``"auto"`` (0/1 scores: ``"bernoulli"`` with one epoch, else ``"binomial"``;
        integer scores with more than two levels, or a ``grader`` column: ``"ordinal"``;
        the choice is recorded in ``fit.config["family"]`` and the fit's notes),
        ``"bernoulli"``, ``"binomial"``, ``"beta-binomial"`` (two or more epochs per item;
        epochs overdispersed by run-to-run drift rho = 1 / (1 + phi),
        ``y ~ BetaBinomial(n, p phi, (1 - p) phi)``; items with the same (task,
        response-count pattern) form one term; ``auto`` picks it when the epochs of a
        (model, item) agree more often than the binomial allows: the epoch-agreement z > 3,
        figures in the notes; not with ``discrimination=True`` or a learned item
        distribution, which are the binomial family's and model what else makes epochs
        agree: ``auto`` is then ``binomial``, and the notes say why) or ``"ordinal"``
        (ordered logistic on the rating levels; scores are the expected rating on the
        levels' own scale, averaged over graders).
    discrimination
        False (1PL). True: the 2PL, logit P = a_i (eta_mk - b_i) with log a_i ~ N(0,
        sigma_logdisc^2), sigma_logdisc ~ HalfNormal(``sigma_logdisc_sigma``, default 0.5),
        with (log a_i, b_i) integrated out per (task, count vector) pattern
        (``config["form"] == "marginal"``, ``_twopl_grid``) and drawn afterwards from their
        exact conditional; see ``models/item_model.md``. Needs ``item=``.
    priors
        Overrides of the prior scales (``alpha_mu``, ``alpha_sigma``, ``dev_sigma``,
        ``sigma_item_sigma``, ``sigma_task_sigma``, ``sigma_mxt_sigma``: ``_model.PRIOR_TEXT``).
        The model deviations pool: d ~ ZeroSumNormal(tau_dev), tau_dev ~
        HalfNormal(``dev_sigma``, default 1 logit), learned from the data as the cube model's
        tau_m (the former fixed ZeroSumNormal(2.5) was flat for models ~0.3 logits apart: at
        60 items x 1 epoch the favoured of two close models was ahead 4.7 points less often
        than P(a > b) said, z -6.5; pooled +1.4 points, z +1.9;
        ``benchmarks/calibration_item_pooling.py``). With
        ``discrimination=True`` also ``sigma_logdisc_sigma``; ``beta-binomial`` also
        ``run_drift_beta``: rho ~ Beta(1, run_drift_beta), default 5; with
        ``item_distribution="learned"`` also ``shape_sigma``: the shape's fixed prior
        scale, default 1).
    draws, tune, chains
        Posterior draws and tuning steps per chain; chains.
    rng
        Seed or Generator of the sampler and of the conditional draws; default 0.
    grader_interaction
        Ordinal family with a grader: include the grader x model interaction (default
        True); False fits the model without it (compare the two with
        :func:`evaluq.compare_fits`).
    levels
        Ordinal family: the rating scale's levels (increasing integers holding every
        score, e.g. ``range(11)`` for 0-10); default every integer from the lowest to the
        highest observed score.
    item_distribution
        ``"normal"`` (b_i ~ N(0, sigma_item^2)) or ``"learned"`` (bernoulli / binomial 1PL
        with items): a smooth density with the normal as its special case, log g0(z) =
        log phi(z) + f(z) on z = b / sigma_item, f a Gaussian-bump log-spline on 17 knots
        over [-4, 4] with a second-difference prior of fixed scale ``shape_sigma``
        (default 1), standardised so sigma_item stays the SD of
        the item difficulties (``_item_density``). The new-items scope then averages over
        the learned density (a bimodal item population biases the normal's new-items
        score); :meth:`ItemFit.item_distribution` returns it. Other families raise.

    Returns
    -------
    ItemFit
        Warns :class:`~evaluq.errors.ConvergenceWarning` (also named
        ``ItemConvergenceWarning``) with advice when R-hat > 1.01, an ESS < 400 or
        there are divergences.

    Examples
    --------
    >>> import evaluq as eq
    >>> table = eq.simulate_items(n_models=3, n_items=50, n_epochs=2, rng=0)
    >>> fit = eq.fit_items(table, model="model", item="item", score="score",
    ...                    epoch="epoch", draws=200, tune=200, chains=2)  # doctest: +SKIP
    >>> fit.rank_probabilities("new_items").p_best.sum().item()           # doctest: +SKIP
    1.0

    Judge ratings 0-10 by three graders (the ordinal family, chosen by ``"auto"``), with and
    without the grader x model interaction:

    >>> from evaluq.item_model import simulate_ratings
    >>> ratings = simulate_ratings(n_models=3, n_items=30, n_graders=3, rng=0)
    >>> cols = dict(model="model", item="item", score="score", grader="grader")
    >>> judged = eq.fit_items(ratings, **cols, levels=range(11))          # doctest: +SKIP
    >>> plain = eq.fit_items(ratings, **cols, grader_interaction=False)   # doctest: +SKIP
    >>> eq.compare_fits({"with": judged, "without": plain})               # doctest: +SKIP

    The 2PL (``discrimination=True``):

    >>> fit2 = eq.fit_items(table, model="model", item="item", score="score",
    ...                     epoch="epoch", discrimination=True)               # doctest: +SKIP
    >>> fit2.form                                                          # doctest: +SKIP
    'explicit'
    """
    family, draws, tune, chains = _check_args(family, discrimination, draws, tune, chains)
    from evaluq.item_model._learned import learned_family

    learned = _check_learned(item_distribution, family, discrimination, item, grader)
    if discrimination and item is None:
        raise ValueError("`discrimination=True` (2PL) needs item effects: pass `item=` (the "
                         "column naming the items); with item=None there is no item to "
                         "discriminate")
    gen = check_rng(rng)
    columns = {"model": model, "item": item, "score": score, "task": task, "epoch": epoch,
               "grader": grader}
    table, epoch = _checked_table(table, columns)
    columns["epoch"] = epoch
    if _ordinal_family(table, family, score, grader):
        _check_learned_family(learned, "ordinal")
        if discrimination:
            raise ValueError("`discrimination=True` (2PL) takes the bernoulli or binomial "
                             "family; got family 'ordinal' (ratings or a `grader` column)")
        return _fit_ordinal_items(table, columns, family, levels, grader_interaction, priors,
                                  (draws, tune, chains), gen)
    data = item_statistics(table, model=model, item=item, score=score, task=task,
                           epoch=epoch, family=family)
    if family == "auto" and data.family == "beta-binomial" and (discrimination or learned):
        data = _binomial_for_auto(table, columns, data, discrimination)
    if discrimination and data.family not in ("bernoulli", "binomial"):
        raise ValueError(f"`discrimination=True` (2PL) takes the bernoulli or binomial "
                         f"family; got family {data.family!r}")
    _check_learned_family(learned, data.family)
    family_parts = learned_family() if learned else family_of(data, discrimination)
    assert family_parts.resolve_priors is not None
    assert family_parts.sample is not None
    resolved = family_parts.resolve_priors(data, priors)
    seed, post_seed = (int(s) for s in gen.integers(0, 2**31 - 1, size=2))
    config: dict[str, Any] = {
        "family": data.family, "family_requested": family, "discrimination": discrimination,
        "form": TWOPL_FORM if discrimination else "marginal" if data.has_items else "no items",
        "quadrature_nodes": (N_NODES if data.family != "beta-binomial" else 31)
        if data.has_items else 0,
        "columns": {"model": model, "item": item, "score": score, "task": task,
                    "epoch": epoch}, "draws": draws, "tune": tune, "chains": chains,
        "priors": resolved, "seed": seed, "post_seed": post_seed, "sampler": "nutpie",
        "n_terms": len(data.term_total), "item_distribution": item_distribution}
    raw, config["compile_seconds"], config["sampling_seconds"] = family_parts.sample(
        data, resolved, draws, tune, chains, seed)
    start = time.perf_counter()
    tree = _build_tree(data, raw, config, resolved, family_parts)
    config["posterior_seconds"] = time.perf_counter() - start
    tree.attrs["evaluq_config"] = json.dumps(config)
    fit = ItemFit(idata=tree, config=config, data=data)
    fit._warn_unconverged()
    return fit


def _check_learned(item_distribution: Any, family: str, discrimination: bool,
                   item: str | None, grader: str | None) -> bool:
    """Whether ``item_distribution`` is ``"learned"`` (checked; the learned distribution
    takes the bernoulli or binomial 1PL with items)."""
    from evaluq.item_model._item_density import ITEM_DISTRIBUTIONS

    learned = check_choice("item_distribution", item_distribution,
                           ITEM_DISTRIBUTIONS) == "learned"
    if learned and (discrimination or item is None or family in ("beta-binomial", "ordinal")
                    or grader is not None):
        raise ValueError("`item_distribution='learned'` takes the bernoulli or binomial 1PL "
                         "with items (item=..., discrimination=False, no grader); got "
                         f"family={family!r}, discrimination={discrimination}, item={item!r}")
    return learned


def _check_learned_family(learned: bool, family: str) -> None:
    """The family ``auto`` chose takes the learned distribution (or it was not asked)."""
    if learned and family not in ("bernoulli", "binomial"):
        raise ValueError("`item_distribution='learned'` takes the bernoulli or binomial 1PL; "
                         f"got family {family!r} (pass family='binomial')")


def _ordinal_family(table: Any, family: str, score: str, grader: str | None) -> bool:
    """Whether the fit is ordinal: asked for, or ``auto`` on ratings (``looks_ordinal``);
    ``grader=`` with a binary family raises."""
    from evaluq.io import as_table
    from evaluq.item_model._ordinal import looks_ordinal

    if family == "ordinal":
        return True
    if family != "auto":
        if grader is not None:
            raise ValueError(f"`grader` needs family='ordinal' (or 'auto'); got family="
                             f"{family!r}")
        return False
    df, _ = as_table(table, "table")
    return looks_ordinal(df[score].to_numpy(dtype=np.float64, na_value=np.nan), grader)


def _fit_ordinal_items(table: Any, columns: dict[str, str | None], family: str, levels: Any,
                       interaction: Any, priors: Any, sizes: tuple[int, int, int],
                       gen: np.random.Generator) -> ItemFit:
    """``fit_items`` for the ordinal family (``_ordinal``)."""
    from evaluq.io import as_table
    from evaluq.item_model._ordinal import fit_ordinal

    df, _ = as_table(table, "table")
    seed, post_seed = (int(s) for s in gen.integers(0, 2**31 - 1, size=2))
    settings = {"draws": sizes[0], "tune": sizes[1], "chains": sizes[2], "seed": seed,
                "post_seed": post_seed, "target_accept": TARGET_ACCEPT}
    tree, config, data = fit_ordinal(df, columns, levels=levels, interaction=interaction,
                                     requested=family, priors=priors, settings=settings)
    fit = ItemFit(idata=tree, config=config, data=data)
    fit._warn_unconverged()
    return fit


def _stored_data(tree: xr.DataTree) -> ItemData:
    obs = tree["observed_data"].to_dataset()
    if obs.attrs["family"] == "ordinal":
        from evaluq.item_model._ordinal import ordinal_item_data, stats_from_dataset

        return ordinal_item_data(stats_from_dataset(obs), json.loads(tree.attrs["notes"]),
                                 tree.attrs["data_digest"])
    has_items = bool(obs.attrs["has_items"])
    get = (lambda name: obs[name].values) if has_items else (lambda name: None)
    return ItemData(
        models=obs[MODEL].values, tasks=obs[TASK].values, family=str(obs.attrs["family"]),
        correct=obs["correct"].values, trials=obs["trials"].values,
        epochs=obs["epochs"].values, n_items=obs["n_items"].values, has_items=has_items,
        term_total=obs["term_total"].values, term_task=obs["term_task"].values,
        term_weight=obs["term_weight"].values, item_term=get("item_term"),
        item_labels=obs[ITEM].values if has_items else None, item_task=get("item_task"),
        log_binom=get("log_binom"), per_item=get("per_item"),
        term_counts=obs["term_counts"].values if "term_counts" in obs else None,
        higher_is_better=bool(obs.attrs["higher_is_better"]),
        notes=json.loads(tree.attrs.get("notes", "{}")), digest=tree.attrs["data_digest"])


def load_item_fit(path: str | os.PathLike[str]) -> ItemFit:
    """Load a fit written by :meth:`ItemFit.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The NetCDF file.

    Returns
    -------
    ItemFit
        The same posterior, configuration and sufficient statistics.

    Examples
    --------
    Fitting takes some seconds, so the example does not run here:

    >>> import evaluq as eq
    >>> table = eq.simulate_items(n_models=3, n_items=50, rng=0)
    >>> fit = eq.fit_items(table, model="model", item="item", score="score")  # doctest: +SKIP
    >>> fit.save("items.nc")                                                  # doctest: +SKIP
    >>> eq.load_item_fit("items.nc").form                                     # doctest: +SKIP
    'marginal'
    """
    tree, config = read_fit_tree(path, writer="ItemFit.save", what="item-model fit")
    if "observed_data" not in tree or "family" not in tree["observed_data"].attrs:
        raise ValueError(f"`path`: {str(path)!r} is not a file written by ItemFit.save (a "
                         "HierarchicalFit's file is read by evaluq.load_fit)")
    return ItemFit(idata=tree, config=config, data=_stored_data(tree))

"""``fit_ratings_bayes``: Bayesian Bradley-Terry / Davidson ratings on the one fit surface.

The votes are read by :func:`evaluq.ratings._votes.read_votes` (the same labels, outcomes and
refusals as :func:`evaluq.fit_ratings`) and counted over unique cells: (pair, outcome) without
clusters, (cluster, pair, outcome) with them. The likelihood of a cell row with counts
``(w, l, t)`` (``i`` won, ``j`` won, tied) and logit difference ``d`` is written once
(:func:`cell_loglik`, numpy or PyTensor through :mod:`evaluq._backend`):

* Davidson (1970): ``(w - l) d / 2 + t log(nu) - n log(e^{d/2} + e^{-d/2} + nu)``;
* ties as half a win (``"half"``; ``"drop"`` has none left): ``(w + t/2) d - n softplus(d)``.

Strengths ``theta ~ ZeroSumNormal(sigma_theta)`` (sum zero, as the frequentist fit) with
``sigma_theta ~ HalfNormal`` (partial pooling) or fixed at ``prior_sd``; with ``cluster``,
a non-centred deviation of every model's strength in every cluster, ``sigma_cluster z_gm``
with ``z_g ~ ZeroSumNormal(1)`` (sampled as the benchmark strengths plus the clusters'
deviations from their mean: :func:`_cluster_strengths`). The PyMC model is compiled once per
shape of its parameters (in the process, and across processes by
:mod:`evaluq._nutpie_cache`; any number of cells) and sampled by nutpie.
:class:`RatingsFit` is a :class:`evaluq._fits.PosteriorFit`; :func:`compare_ratings_fits`
compares fits by PSIS-LOO (arviz-stats) with a whole cluster left out.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final, Literal

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._backend import array_module, softplus
from evaluq._dims import MODEL, POSTERIOR_SAMPLE_DIMS
from evaluq._fits import (
    PosteriorFit,
    convergence_problems,
    convergence_table,
    divergences,
    posterior_interval,
    read_fit_tree,
    sampler_stats,
    summary_columns,
)
from evaluq._nutpie_cache import compile_pymc_model, with_data
from evaluq._validation import RNGLike, check_choice, check_int, check_real, check_rng
from evaluq.io import TableLike
from evaluq.ratings import _checks
from evaluq.ratings._result import Scale, scale_of
from evaluq.ratings._votes import Votes, read_votes

SCOPES: Final = ("population", "benchmark")
TIES: Final = _checks.TIES
SCALES: Final = ("elo", "logit")
SAMPLE_DIMS: Final = POSTERIOR_SAMPLE_DIMS
CLUSTER_DIM: Final = "cluster"
PRIORS: Final = {"sigma_theta_scale": 1.0, "sigma_cluster_scale": 0.5, "log_nu_mu": 0.0,
                 "log_nu_sd": 1.5}
"""Default priors (logit scale): ``sigma_theta ~ HalfNormal(1)`` (a spread of strengths up to
about 2 logits, 350 Elo, per SD), ``sigma_cluster ~ HalfNormal(0.5)``,
``log(nu) ~ N(0, 1.5^2)`` (nu = 1: a tie in a third of the votes between equal models)."""
TARGET_ACCEPT: Final = 0.9
RHAT_MAX: Final = 1.01
ESS_MIN: Final = 400
ADVICE: Final = {"r_hat": "refit with more tune and draws",
                 "ess": "increase draws (or chains)",
                 "divergences": "refit with more tune; with cluster effects, check that the "
                                "clusters hold enough votes"}
LOO_DRAWS: Final = 64
"""Importance draws of a left-out cluster's effects per posterior draw (PSIS-LOO of a new
cluster: its effects integrated over their prior given sigma_cluster)."""
LAPLACE_STEPS: Final = 8
"""Newton steps to the mode of a cluster's effects (the proposal's centre: the importance
weights correct whatever error is left)."""
PROPOSAL_SCALE: Final = 1.0
"""The Laplace proposal's SDs over its own (1: the directions the votes leave to the prior,
such as the mean over models, then cancel exactly in the weights)."""
K_THRESHOLD: Final = 0.7
_COMPILED: dict[tuple[Any, ...], Any] = {}
"""nutpie models compiled in this process, by (Davidson, pooling, cluster effects, models,
clusters): the shapes of the sampled parameters."""


# --- the data ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cells:
    """Cell rows sorted by cluster: cluster ``g``, pair models ``i < j`` (indices of the
    sorted models), counts (K, 3) of ``i`` won, ``j`` won, tied. Without clusters ``g`` is 0
    and a row is a pair."""

    g: np.ndarray
    i: np.ndarray
    j: np.ndarray
    counts: np.ndarray
    n_clusters: int


@dataclass(frozen=True)
class RatingsData:
    """What a Bayesian rating fit was fitted to (saved with it)."""

    models: np.ndarray
    cells: Cells
    clusters: np.ndarray | None
    n_votes: int
    n_ties_dropped: int
    higher_is_better: bool = True

    @property
    def n_models(self) -> int:
        return int(self.models.size)

    def pair_counts(self) -> pd.DataFrame:
        """Counts summed over clusters, per pair (the votes whatever the clusters)."""
        c = self.cells
        frame = pd.DataFrame({"i": c.i, "j": c.j, "w": c.counts[:, 0], "l": c.counts[:, 1],
                              "t": c.counts[:, 2]})
        return frame.groupby(["i", "j"]).sum().sort_index()


def cells_of(votes: Votes) -> Cells:
    """The cell rows of the votes: one per pair, or one per (cluster, pair) seen."""
    if votes.cluster_counts is None:
        return Cells(g=np.zeros(votes.n_pairs, dtype=np.int64), i=votes.pair_i,
                     j=votes.pair_j, counts=votes.counts, n_clusters=1)
    coo = votes.cluster_counts.tocoo()
    pair, outcome = coo.col // 3, coo.col % 3
    keys, row = np.unique(coo.row.astype(np.int64) * votes.n_pairs + pair, return_inverse=True)
    counts = np.zeros((keys.size, 3))
    np.add.at(counts, (row.ravel(), outcome), coo.data)
    p = keys % votes.n_pairs
    return Cells(g=keys // votes.n_pairs, i=votes.pair_i[p], j=votes.pair_j[p], counts=counts,
                 n_clusters=int(votes.cluster_counts.shape[0]))


# --- the log-likelihood (numpy and PyTensor) -----------------------------------------------------

def cell_loglik(d: Any, lam: Any, counts: Any, davidson: bool) -> Any:
    """Log-likelihood of each cell row: logit differences ``d``, ``lam = log(nu)``
    (broadcast against ``d``; ignored unless ``davidson``), counts (..., 3) of ``i`` won,
    ``j`` won, tied (module docstring)."""
    lib = array_module(d, lam, counts)
    w, lost, t = counts[..., 0], counts[..., 1], counts[..., 2]
    n = w + lost + t
    if davidson:
        big_f = lib.logaddexp(lib.logaddexp(0.5 * d, -0.5 * d), lam)
        return 0.5 * (w - lost) * d + t * lam - n * big_f
    return (w + 0.5 * t) * d - n * softplus(lib, d)


# --- the PyMC model ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Options:
    ties: str
    scale: Scale
    prior_sd: float | None
    clustered: bool
    draws: int
    tune: int
    chains: int

    @property
    def davidson(self) -> bool:
        return self.ties == "davidson"

    @property
    def pooled(self) -> bool:
        return self.prior_sd is None


def model_inputs(data: RatingsData, opts: _Options) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the model, by name."""
    c = data.cells
    inputs = {"cell_g": c.g.astype(np.int64), "cell_i": c.i.astype(np.int64),
              "cell_j": c.j.astype(np.int64), "cell_counts": c.counts.astype(np.float64)}
    priors = {f"prior_{k}": np.asarray(float(v)) for k, v in PRIORS.items()}
    if not opts.pooled:
        priors["prior_sd"] = np.asarray(float(opts.prior_sd))  # type: ignore[arg-type]
    return inputs | priors


def _cluster_strengths(x: dict[str, Any], sigma: Any, n_g: int, n_m: int) -> Any:
    """The cells' logit differences with cluster effects, sampled in the coordinates the votes
    identify: the benchmark strengths ``b = theta + sigma_c mean_g z_g`` and the clusters'
    deviations from their mean. The same model as ``theta ~ ZeroSumNormal(sigma)``,
    ``u_g = sigma_c z_g`` (unit Jacobian; the Potential turns b's ZeroSumNormal density into
    theta's), without the ridge between ``theta`` and the mean deviation that data-rich
    clusters leave in the plain non-centred form."""
    import pymc as pm

    sigma_c = pm.HalfNormal("sigma_cluster", x["prior_sigma_cluster_scale"])
    z = pm.ZeroSumNormal("cluster_z", sigma=1.0, shape=(n_g, n_m))   # non-centred
    bench = pm.ZeroSumNormal("benchmark_theta", sigma=sigma, dims=MODEL)
    z_bar = z.mean(axis=0)
    theta = pm.Deterministic("theta", bench - sigma_c * z_bar, dims=MODEL)
    pm.Potential("theta_prior", ((bench ** 2).sum() - (theta ** 2).sum()) / (2 * sigma ** 2))
    u = sigma_c * (z - z_bar[None, :])
    g, i, j = x["cell_g"], x["cell_i"], x["cell_j"]
    return bench[i] - bench[j] + u[g, i] - u[g, j]


def build_model(data: RatingsData, opts: _Options) -> Any:
    """The PyMC model on the cell rows (module docstring); every array a ``pm.Data``."""
    import pymc as pm

    n_g, n_m = data.cells.n_clusters, data.n_models
    with pm.Model(coords={MODEL: list(map(str, data.models))}) as pm_model:
        x = {name: pm.Data(name, value) for name, value in model_inputs(data, opts).items()}
        sigma = (pm.HalfNormal("sigma_theta", x["prior_sigma_theta_scale"]) if opts.pooled
                 else x["prior_sd"])
        if opts.clustered:
            d = _cluster_strengths(x, sigma, n_g, n_m)
        else:
            theta = pm.ZeroSumNormal("theta", sigma=sigma, dims=MODEL)
            d = theta[x["cell_i"]] - theta[x["cell_j"]]
        lam = (pm.Normal("log_nu", x["prior_log_nu_mu"], x["prior_log_nu_sd"])
               if opts.davidson else 0.0)
        pm.Potential("loglik", cell_loglik(d, lam, x["cell_counts"], opts.davidson).sum())
    return pm_model


def _stored(opts: _Options) -> list[str]:
    names = ["theta"] + (["sigma_theta"] if opts.pooled else [])
    names += ["log_nu"] if opts.davidson else []
    return names + (["sigma_cluster", "benchmark_theta"] if opts.clustered else [])


def compiled_nutpie(data: RatingsData, opts: _Options) -> tuple[Any, float]:
    """The nutpie model for the parameters' shapes, compiled on first use; compile seconds."""
    # the cells' number is not in the graph (pm.Data of any length): one compiled model
    # serves every vote table with these parameters' shapes
    key = (opts.davidson, opts.pooled, opts.clustered, data.n_models, data.cells.n_clusters)
    if key in _COMPILED:
        return _COMPILED[key], 0.0
    start = time.perf_counter()
    _COMPILED[key] = compile_pymc_model(
        build_model(data, opts), var_names=_stored(opts),
        structure={"model": "ratings_bayes", "key": [bool(k) if isinstance(k, bool | np.bool_)
                                                     else int(k) for k in key]},
        sources=[__file__])[0]
    return _COMPILED[key], time.perf_counter() - start


def _sample(data: RatingsData, opts: _Options, seed: int) -> tuple[xr.DataTree, float, float]:
    import nutpie

    compiled, compile_s = compiled_nutpie(data, opts)
    known = {var.name for var in compiled.shared_var_keys}
    inputs = {k: v for k, v in model_inputs(data, opts).items() if k in known}
    start = time.perf_counter()
    raw = nutpie.sample(with_data(compiled, **inputs), draws=opts.draws, tune=opts.tune,
                        chains=opts.chains, cores=opts.chains, seed=seed, progress_bar=False,
                        save_warmup=False, target_accept=TARGET_ACCEPT)
    return raw, compile_s, time.perf_counter() - start


# --- the posterior and the fit object ----------------------------------------------------------

def _posterior(raw: xr.DataTree, data: RatingsData, opts: _Options) -> xr.Dataset:
    """Ratings at both scopes on the fit's scale, theta, nu and the scales."""
    post = raw["posterior"].to_dataset()
    theta = post["theta"].transpose(*SAMPLE_DIMS, ...)
    theta = xr.DataArray(theta.values, dims=(*SAMPLE_DIMS, MODEL),
                         coords={MODEL: data.models})
    sc = opts.scale
    attrs = {"scale": sc.name, "identifiability": _identifiability(sc)}
    out = xr.Dataset({"theta": theta,
                      "rating": (sc.factor * theta + sc.offset).assign_attrs(attrs)})
    bench = theta
    if opts.clustered:
        bench = theta.copy(data=post["benchmark_theta"].transpose(*SAMPLE_DIMS, ...).values)
        out["benchmark_theta"] = bench
        out["sigma_cluster"] = post["sigma_cluster"]
    out["benchmark_rating"] = (sc.factor * bench + sc.offset).assign_attrs(attrs)
    if opts.pooled:
        out["sigma_theta"] = post["sigma_theta"]
    if opts.davidson:
        out["nu"] = np.exp(post["log_nu"])
    return out


def _identifiability(sc: Scale) -> str:
    return f"sum-zero: the models' logit strengths sum to 0 (the mean rating is {sc.offset:g})"


def _observed(data: RatingsData) -> xr.Dataset:
    c = data.cells
    obs = xr.Dataset({"cell_g": ("cell", c.g), "cell_i": ("cell", c.i), "cell_j": ("cell", c.j),
                      "cell_counts": (("cell", "outcome"), c.counts)},
                     coords={MODEL: np.asarray(data.models).astype(str),
                             "outcome": ["i_won", "j_won", "tie"]},
                     attrs={"n_clusters": c.n_clusters, "n_votes": data.n_votes,
                            "n_ties_dropped": data.n_ties_dropped})
    if data.clusters is not None:
        obs = obs.assign_coords({CLUSTER_DIM: np.asarray(data.clusters).astype(str)})
    return obs


@dataclass(eq=False, repr=False)
class RatingsFit(PosteriorFit):
    """A Bayesian Bradley-Terry / Davidson fit of pairwise votes
    (:func:`evaluq.fit_ratings_bayes`).

    Scopes (both ratings on the fit's scale, sum-zero logit strengths):

    * ``"population"`` (default): ``theta``, each model's strength on a new vote from the
      population of clusters (with cluster effects: on a typical new prompt, its deviation
      at its mean 0); without clusters, the strengths of the Bradley-Terry model;
    * ``"benchmark"``: ``theta`` plus each model's mean deviation over the clusters seen,
      the strengths on these prompts (the same as ``"population"`` without clusters).

    Attributes
    ----------
    idata
        ArviZ data (``xarray.DataTree``): ``posterior`` (chain, draw, ...) with ``rating``
        and ``benchmark_rating`` (model; the fit's scale), ``theta`` (model; logit), ``nu``
        (Davidson), ``sigma_theta`` (partial pooling), ``sigma_cluster`` (cluster effects);
        ``sample_stats``; ``observed_data`` (the cell rows); ``constant_data`` (priors).
    config
        The arguments, priors, seeds and timings.
    data
        The cell rows and labels (:class:`RatingsData`).
    """

    idata: xr.DataTree
    config: dict[str, Any]
    data: RatingsData = field(repr=False)
    SCOPES: ClassVar[tuple[str, ...]] = SCOPES
    pairwise_differences = PosteriorFit.pairwise_differences
    rank_probabilities = PosteriorFit.rank_probabilities
    diagnostics = PosteriorFit.diagnostics
    save = PosteriorFit.save

    def ratings(self, scope: str = "population") -> xr.DataArray:
        """Posterior draws (chain, draw, model) of the ratings at ``scope``.

        Parameters
        ----------
        scope
            ``"population"`` or ``"benchmark"`` (see the class docstring).
        """
        scope = check_choice("scope", scope, SCOPES)
        return self.posterior["rating" if scope == "population" else "benchmark_rating"]

    def _scope_draws(self, scope: str) -> xr.DataArray:
        return self.ratings(scope)

    @property
    def tie_parameter(self) -> xr.DataArray:
        """Davidson's ``nu`` draws (chain, draw); NaN unless ``ties="davidson"``."""
        if "nu" in self.posterior:
            return self.posterior["nu"]
        nan = xr.full_like(self.posterior["theta"].isel({MODEL: 0}, drop=True), np.nan)
        return nan.assign_attrs(nan_reason=f"ties={self.config['ties']!r} has no tie "
                                           f"parameter (only ties='davidson' models ties)")

    def _diagnose(self, post: xr.Dataset, stats: xr.Dataset) -> pd.DataFrame:
        names = [v for v in ("theta", "benchmark_theta", "nu", "sigma_theta", "sigma_cluster")
                 if v in post]
        table = convergence_table(post[names], SAMPLE_DIMS)
        n_div = divergences(stats)
        table.attrs = {"divergences": n_div,
                       "problems": convergence_problems(table, n_div, rhat_max=RHAT_MAX,
                                                        ess_min=ESS_MIN, advice=ADVICE)}
        return table

    def _summary_columns(self) -> dict[str, Any]:
        cols = summary_columns(self.ratings("population"), "population")
        if self.config["cluster"] is not None:
            cols |= summary_columns(self.ratings("benchmark"), "benchmark")
        return cols

    def _header(self) -> str:
        post, c = self.posterior, self.config
        div = divergences(self.idata["sample_stats"].to_dataset())
        where = f", {self.data.cells.n_clusters} clusters of {c['cluster']!r}" \
            if c["cluster"] else ""
        return (f"RatingsFit({self.data.n_models} models, {self.data.n_votes} votes{where}; "
                f"ties={c['ties']!r}, scale={c['scale']!r}, {post.sizes['chain']} chains x "
                f"{post.sizes['draw']} draws, divergences={div})")

    def _trailer(self) -> list[str]:
        out = []
        for name in ("nu", "sigma_theta", "sigma_cluster"):
            if name in self.posterior:
                draws = self.posterior[name]
                lo, hi = posterior_interval(draws, 0.95)
                out.append(f"{name} {float(draws.mean()):.4f} [{lo:.4f}, {hi:.4f}]")
        return out

    def _notes(self) -> list[str]:
        return [self.config["identifiability"], f"prior: {self.config['prior']}"]


# --- public functions ----------------------------------------------------------------------------

def _options(ties: Any, scale: Any, prior_sd: Any, cluster: Any, draws: Any, tune: Any,
             chains: Any) -> _Options:
    check_choice("ties", ties, TIES)
    check_choice("scale", scale, SCALES)
    prior = None if prior_sd is None else check_real("prior_sd", prior_sd, low=0.0,
                                                     low_inclusive=False)
    return _Options(ties=ties, scale=scale_of(scale), prior_sd=prior,
                    clustered=cluster is not None,
                    draws=check_int("draws", draws, minimum=1),
                    tune=check_int("tune", tune, minimum=0),
                    chains=check_int("chains", chains, minimum=1))


def _read(votes: TableLike, columns: dict[str, Any], outcomes: Any,
          opts: _Options) -> tuple[RatingsData, _Options]:
    """The votes read and checked as :func:`evaluq.fit_ratings` reads them (a model that
    never wins is kept: the prior keeps its rating finite), and the options with ``"auto"``
    ties resolved (:func:`evaluq.ratings._checks.resolve_ties`)."""
    v = read_votes(votes, **columns, outcomes=outcomes, drop_ties=opts.ties == "drop")
    opts = replace(opts, ties=_checks.resolve_ties(opts.ties, v.counts[:, 2].sum()))
    _checks.check_connected(v)
    if opts.davidson:
        _checks.check_ties(v)
    return RatingsData(models=v.models, cells=cells_of(v), clusters=v.clusters,
                       n_votes=v.n_votes, n_ties_dropped=v.n_ties_dropped), opts


def _prior_text(opts: _Options) -> str:
    theta = ("theta ~ ZeroSumNormal(sigma_theta), sigma_theta ~ HalfNormal("
             f"{PRIORS['sigma_theta_scale']:g}) (partial pooling)" if opts.pooled else
             f"theta ~ ZeroSumNormal({opts.prior_sd:g}) (no pooling; the ridge of "
             f"fit_ratings(prior_sd={opts.prior_sd:g}))")
    if opts.davidson:
        theta += f"; log(nu) ~ N({PRIORS['log_nu_mu']:g}, {PRIORS['log_nu_sd']:g}^2)"
    if opts.clustered:
        theta += (f"; cluster deviations sigma_cluster z, z ~ ZeroSumNormal(1) per cluster, "
                  f"sigma_cluster ~ HalfNormal({PRIORS['sigma_cluster_scale']:g})")
    return theta


def _build_tree(data: RatingsData, raw: xr.DataTree, opts: _Options,
                config: dict[str, Any]) -> xr.DataTree:
    groups = {"posterior": _posterior(raw, data, opts), "sample_stats": sampler_stats(raw),
              "observed_data": _observed(data),
              "constant_data": xr.Dataset({f"prior_{k}": v for k, v in PRIORS.items()})}
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = {"evaluq_config": json.dumps(config)}
    return tree


def fit_ratings_bayes(
    votes: TableLike,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    outcomes: Mapping[Any, str] | None = None,
    ties: Literal["auto", "davidson", "half", "drop"] = "auto",
    cluster: str | None = None,
    prior_sd: float | None = None,
    scale: Literal["elo", "logit"] = "elo",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    rng: RNGLike = 0,
) -> RatingsFit:
    r"""Bayesian ratings of models from pairwise votes (Bradley-Terry, Davidson ties).

    The likelihood is :func:`evaluq.fit_ratings`'s: model i has a logit strength
    :math:`\theta_i`; ``ties="davidson"``: :math:`P(i \text{ beats } j) = \pi_i / D`,
    :math:`P(\text{tie}) = \nu \sqrt{\pi_i \pi_j} / D`,
    :math:`D = \pi_i + \pi_j + \nu \sqrt{\pi_i \pi_j}`, :math:`\pi = e^\theta`;
    ``"half"``: a tie is half a win each; ``"drop"``: ties left out. It is evaluated on the
    counts of unique (pair, outcome) cells (with ``cluster``: (cluster, pair, outcome)).

    Priors (``models/ratings.md``): :math:`\theta \sim \text{ZeroSumNormal}(\sigma_\theta)`
    (the strengths sum to zero, the frequentist fit's identifiability) with
    :math:`\sigma_\theta \sim \text{HalfNormal}(1)`: partial pooling, so models the votes
    cannot tell apart are shrunk together (calibrated ranks and P(best) with few votes, the
    fix the item model needed). ``prior_sd`` fixes :math:`\sigma_\theta` instead (no pooling:
    the strengths' penalty of ``fit_ratings(prior_sd=...)``, its ridge; a large value is a
    flat-ish prior whose posterior mean is close to the maximum-likelihood ratings).
    :math:`\log \nu \sim N(0, 1.5^2)`. With ``cluster`` (prompt, voter): each model's strength
    in cluster g is :math:`\theta_i + \sigma_c z_{gi}`, :math:`z_g \sim
    \text{ZeroSumNormal}(1)` (non-centred), :math:`\sigma_c \sim \text{HalfNormal}(0.5)`.
    A model that never wins keeps a finite rating (the prior, named in ``config["prior"]``);
    a disconnected comparison graph and, for Davidson, votes without ties are refused as by
    :func:`evaluq.fit_ratings`.

    Parameters
    ----------
    votes : pandas.DataFrame or path
        One row per vote (:func:`evaluq.fit_ratings`).
    model_a, model_b, winner : str
        Columns of the two models and the winner (labels as :func:`evaluq.fit_ratings`).
    outcomes : mapping, optional
        Winner labels to ``"model_a"`` / ``"model_b"`` / ``"tie"``.
    ties : {"auto", "davidson", "half", "drop"}
        The tie rule (as :func:`evaluq.fit_ratings`; ``"auto"``: Davidson's when the votes
        hold a tie, else plain Bradley-Terry).
    cluster : str, optional
        Column of the votes' clusters: per-cluster deviations of every model's strength.
    prior_sd : float, optional
        Fix the SD of the strengths' prior (logit scale) instead of pooling.
    scale : {"elo", "logit"}
        Ratings in Elo points (``400 / ln(10) theta + 1000``) or logits.
    draws, tune, chains : int
        Posterior draws and tuning steps per chain; chains (nutpie, one core each).
    rng : int, Generator, SeedSequence or None
        Seed of the sampler (default 0: the same seed gives the same draws).

    Returns
    -------
    RatingsFit
        :meth:`~RatingsFit.pairwise_differences` (with a ROPE in rating units),
        :meth:`~RatingsFit.rank_probabilities` (P(best)), :meth:`~RatingsFit.diagnostics`,
        :meth:`~RatingsFit.save`. Warns :class:`~evaluq.errors.ConvergenceWarning` when
        R-hat > 1.01, an ESS < 400 or there are divergences.

    Examples
    --------
    Sampling compiles a model (some seconds), so the example does not run here:

    >>> import pandas as pd
    >>> votes = pd.DataFrame({"model_a": ["x", "y", "z", "x"] * 10,
    ...                       "model_b": ["y", "z", "x", "z"] * 10,
    ...                       "winner": ["model_a", "tie", "model_b", "model_a"] * 10})
    >>> fit = fit_ratings_bayes(votes, draws=300, tune=300)              # doctest: +SKIP
    >>> fit.rank_probabilities().p_best.sum().item()                     # doctest: +SKIP
    1.0
    """
    opts = _options(ties, scale, prior_sd, cluster, draws, tune, chains)
    columns = {"model_a": model_a, "model_b": model_b, "winner": winner, "cluster": cluster}
    data, opts = _read(votes, columns, outcomes, opts)
    seed, post_seed = (int(s) for s in check_rng(rng).integers(0, 2**31 - 1, size=2))
    config: dict[str, Any] = {
        "ties": opts.ties, "ties_requested": ties, "scale": scale, "cluster": cluster,
        "prior_sd": opts.prior_sd,
        "prior": _prior_text(opts), "identifiability": _identifiability(opts.scale),
        "priors": dict(PRIORS), "draws": opts.draws, "tune": opts.tune, "chains": opts.chains,
        "seed": seed, "post_seed": post_seed, "sampler": "nutpie",
        "columns": {k: v for k, v in columns.items()}}
    raw, config["compile_seconds"], config["sampling_seconds"] = _sample(data, opts, seed)
    fit = RatingsFit(idata=_build_tree(data, raw, opts, config), config=config, data=data)
    fit._warn_unconverged()
    return fit


def _stored_data(tree: xr.DataTree) -> RatingsData:
    obs = tree["observed_data"].to_dataset()
    clusters = obs[CLUSTER_DIM].values if CLUSTER_DIM in obs.coords else None
    cells = Cells(g=obs["cell_g"].values, i=obs["cell_i"].values, j=obs["cell_j"].values,
                  counts=obs["cell_counts"].values, n_clusters=int(obs.attrs["n_clusters"]))
    return RatingsData(models=obs[MODEL].values.astype(object), cells=cells, clusters=clusters,
                       n_votes=int(obs.attrs["n_votes"]),
                       n_ties_dropped=int(obs.attrs["n_ties_dropped"]))


def load_ratings_fit(path: str | os.PathLike[str]) -> RatingsFit:
    """Load a fit written by :meth:`RatingsFit.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The NetCDF file.

    Returns
    -------
    RatingsFit
        The same posterior, configuration and cell counts.

    Examples
    --------
    >>> fit.save("ratings.nc")                                   # doctest: +SKIP
    >>> load_ratings_fit("ratings.nc").config["ties"]            # doctest: +SKIP
    'davidson'
    """
    tree, config = read_fit_tree(path, writer="RatingsFit.save", what="ratings fit")
    if "observed_data" not in tree or "cell_counts" not in tree["observed_data"]:
        raise ValueError(f"`path`: {str(path)!r} is not a file written by RatingsFit.save")
    return RatingsFit(idata=tree, config=config, data=_stored_data(tree))


# --- PSIS-LOO ----------------------------------------------------------------------------------

def _flat(fit: RatingsFit, name: str) -> np.ndarray:
    var = fit.posterior[name]
    values = var.transpose(*SAMPLE_DIMS, ...).values
    return values.reshape(-1, *values.shape[2:])


def _unit_sums(values: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Sums of the last axis over consecutive rows of the same (sorted) unit."""
    starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])
    return np.add.reduceat(values, starts, axis=-1)


def _vote_cells(cells: Cells) -> Cells:
    """One row per vote (each vote its own unit), outcome one-hot."""
    reps = cells.counts.astype(np.int64)
    row = np.repeat(np.repeat(np.arange(reps.shape[0]), 3), reps.ravel())
    outcome = np.repeat(np.tile(np.arange(3), reps.shape[0]), reps.ravel())
    counts = np.zeros((row.size, 3))
    counts[np.arange(row.size), outcome] = 1.0
    return Cells(g=np.arange(row.size), i=cells.i[row], j=cells.j[row], counts=counts,
                 n_clusters=row.size)


def cell_derivatives(d: np.ndarray, lam: np.ndarray, counts: np.ndarray,
                     davidson: bool) -> tuple[np.ndarray, np.ndarray]:
    """First derivative and minus the second derivative of :func:`cell_loglik` in ``d``."""
    w, lost, t = counts[..., 0], counts[..., 1], counts[..., 2]
    n = w + lost + t
    if davidson:
        big_f = np.logaddexp(np.logaddexp(0.5 * d, -0.5 * d), lam)
        pw, pl = np.exp(0.5 * d - big_f), np.exp(-0.5 * d - big_f)
        half = 0.5 * (pw - pl)
        return 0.5 * (w - lost) - n * half, n * (0.25 * (pw + pl) - half ** 2)
    p = 0.5 * (1.0 + np.tanh(0.5 * d))
    return w + 0.5 * t - n * p, n * p * (1.0 - p)


@dataclass(frozen=True)
class _Local:
    """Each unit's models as local slots 0..width-1 (units sorted), and the sparse maps of
    the rows' derivatives onto the (unit, slot) gradient and (unit, slot, slot) Hessian."""

    li: np.ndarray
    lj: np.ndarray
    width: int
    n_units: int
    grad_map: Any
    hess_map: Any


def _local(units: Cells, n_models: int) -> _Local:
    import scipy.sparse as sp

    unit = np.unique(units.g, return_inverse=True)[1].ravel()
    n_units, k = int(unit.max()) + 1, unit.size
    keys, idx = np.unique(np.r_[unit * n_models + units.i, unit * n_models + units.j],
                          return_inverse=True)
    first = np.searchsorted(keys // n_models, np.arange(n_units))
    slot = np.arange(keys.size) - first[keys // n_models]
    li, lj = slot[idx[:k]], slot[idx[k:]]
    width = int(slot.max()) + 1
    rows = np.arange(k)
    gi, gj = unit * width + li, unit * width + lj
    grad_map = sp.csr_matrix((np.r_[np.ones(k), -np.ones(k)], (np.r_[rows, rows], np.r_[gi, gj])),
                             shape=(k, n_units * width))
    base = unit * width * width
    cols = np.r_[base + li * width + li, base + lj * width + lj, base + li * width + lj,
                 base + lj * width + li]
    hess_map = sp.csr_matrix((np.r_[np.ones(2 * k), -np.ones(2 * k)], (np.tile(rows, 4), cols)),
                             shape=(k, n_units * width * width))
    return _Local(li=li, lj=lj, width=width, n_units=n_units, grad_map=grad_map,
                  hess_map=hess_map)


def _laplace(d0: np.ndarray, lam: np.ndarray, sigma: np.ndarray, units: Cells, loc: _Local,
             davidson: bool) -> tuple[np.ndarray, np.ndarray]:
    """Mode (D, G, W) and Hessian (D, G, W, W) of each unit's effects' conditional density
    (Newton's method: the log-likelihood is concave, the N(0, sigma^2) prior strictly)."""
    n_d, n_g, w = d0.shape[0], loc.n_units, loc.width
    unit = np.unique(units.g, return_inverse=True)[1].ravel()
    prec = np.eye(w) / sigma[:, None, None, None] ** 2
    v = np.zeros((n_d, n_g, w))
    for _ in range(LAPLACE_STEPS):
        d = d0 + v[:, unit, loc.li] - v[:, unit, loc.lj]
        g_d, h_d = cell_derivatives(d, lam, units.counts, davidson)
        grad = (loc.grad_map.T @ g_d.T).T.reshape(n_d, n_g, w) - v / sigma[:, None, None] ** 2
        hess = (loc.hess_map.T @ h_d.T).T.reshape(n_d, n_g, w, w) + prec
        v = v + np.linalg.solve(hess, grad[..., None])[..., 0]
    d = d0 + v[:, unit, loc.li] - v[:, unit, loc.lj]
    hess = (loc.hess_map.T @ cell_derivatives(d, lam, units.counts, davidson)[1].T).T
    return v, hess.reshape(n_d, n_g, w, w) + prec


def _integrated(d0: np.ndarray, lam: np.ndarray, sigma: np.ndarray, units: Cells,
                loc: _Local, e: np.ndarray, davidson: bool) -> tuple[np.ndarray, np.ndarray]:
    """log of each unit's likelihood with its effects integrated over N(0, sigma^2 I) (the
    mean over models does not enter the likelihood, so the ZeroSumNormal prior gives the
    same integral), by importance sampling from the Laplace approximation widened by
    :data:`PROPOSAL_SCALE`; and the Monte Carlo SE of that log (delta method)."""
    mode, hess = _laplace(d0, lam, sigma, units, loc, davidson)
    chol = np.linalg.cholesky(hess) / PROPOSAL_SCALE          # proposal precision L L'
    inv_t = np.linalg.inv(np.swapaxes(chol, -1, -2))          # proposal draw: mode + L'^-1 e
    v = mode[:, :, None, :] + np.einsum("dgkl,sl->dgsk", inv_t, e)          # (D, G, S, W)
    unit = np.unique(units.g, return_inverse=True)[1].ravel()
    vt = np.swapaxes(v, 2, 3)                                                # (D, G, W, S)
    d = d0[:, :, None] + vt[:, unit, loc.li] - vt[:, unit, loc.lj]          # (D, K, S)
    ll = cell_loglik(d, lam[..., None], units.counts[:, None, :], davidson)
    per = _unit_sums(np.swapaxes(ll, 1, 2), units.g)                         # (D, S, G)
    log_prior = -0.5 * (v ** 2).sum(-1) / sigma[:, None, None] ** 2 \
        - loc.width * np.log(sigma)[:, None, None]                          # (D, G, S)
    log_det = np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(-1)          # (D, G)
    log_q = -0.5 * (e ** 2).sum(-1)[None, None, :] + log_det[:, :, None]
    log_w = np.swapaxes(per, 1, 2) + log_prior - log_q                       # (D, G, S)
    top = log_w.max(axis=-1, keepdims=True)
    weights = np.exp(log_w - top)
    mean = weights.mean(axis=-1)
    se = weights.std(axis=-1) / mean / np.sqrt(e.shape[0])
    return top[..., 0] + np.log(mean), se


def pointwise_loglik(fit: RatingsFit, units: Cells, *, return_mc_se: bool = False,
                     budget: int = 4_000_000) -> Any:
    """(draw, unit) log-likelihood of each unit's votes (``units``: cell rows sorted by unit).

    A fit with cluster effects integrates a left-out unit's effects over their prior given
    ``sigma_cluster`` at each draw (:func:`_integrated`: importance sampling from the Laplace
    approximation, :data:`LOO_DRAWS` draws, the same standard normals at every draw); a fit
    without them scores the unit's votes directly. ``return_mc_se``: also the Monte Carlo
    SE of each value (zeros for a fit without cluster effects)."""
    theta = _flat(fit, "theta")
    davidson = "nu" in fit.posterior
    lam = np.log(_flat(fit, "nu"))[:, None] if davidson else np.zeros((theta.shape[0], 1))
    d0 = theta[:, units.i] - theta[:, units.j]                                 # (D, K)
    if "sigma_cluster" not in fit.posterior:
        ll = _unit_sums(cell_loglik(d0, lam, units.counts, davidson), units.g)
        return (ll, np.zeros_like(ll)) if return_mc_se else ll
    loc = _local(units, fit.data.n_models)
    e = np.random.default_rng(fit.config["post_seed"]).standard_normal((LOO_DRAWS, loc.width))
    sigma = _flat(fit, "sigma_cluster")
    per_draw = loc.n_units * loc.width * (LOO_DRAWS + 2 * loc.width) + units.g.size * LOO_DRAWS
    step = max(1, budget // per_draw)
    parts = [_integrated(d0[k:k + step], lam[k:k + step], sigma[k:k + step], units, loc, e,
                         davidson) for k in range(0, d0.shape[0], step)]   # chunks of draws
    ll, se = (np.concatenate([p[n] for p in parts]) for n in (0, 1))
    return (ll, se) if return_mc_se else ll


def _check_fits(fits: Any) -> None:
    if not isinstance(fits, dict) or len(fits) < 2:
        raise ValueError(f"`fits` must be a dict of at least two named RatingsFit; got {fits!r}")
    bad = {n: type(f).__name__ for n, f in fits.items() if not isinstance(f, RatingsFit)}
    if bad:
        raise TypeError(f"`fits` must map names to fits of fit_ratings_bayes; got {bad}")
    first_name, first = next(iter(fits.items()))
    for name, fit in fits.items():
        if fit.config["ties"] != first.config["ties"]:
            raise ValueError(f"`fits[{name!r}]` has ties={fit.config['ties']!r} but "
                             f"`fits[{first_name!r}]` ties={first.config['ties']!r}: their "
                             f"likelihoods are of different data and cannot be compared")
        same = (np.array_equal(fit.data.models.astype(str), first.data.models.astype(str))
                and fit.data.pair_counts().equals(first.data.pair_counts()))
        if not same:
            raise ValueError(f"`fits[{name!r}]` was fitted to other votes than "
                             f"`fits[{first_name!r}]`; compare fits of the same votes")


def _units(fits: dict[str, RatingsFit]) -> tuple[Cells, str]:
    """The unit left out: a whole cluster when a fit has clusters, else one vote."""
    clustered = [f for f in fits.values() if f.config["cluster"] is not None]
    if not clustered:
        return _vote_cells(next(iter(fits.values())).data.cells), "one vote"
    ref = clustered[0]
    for fit in clustered[1:]:
        if not np.array_equal(fit.data.clusters.astype(str),           # type: ignore[union-attr]
                              ref.data.clusters.astype(str)):          # type: ignore[union-attr]
            raise ValueError("`fits` with clusters must share the same cluster column")
    return ref.data.cells, f"one whole cluster of {ref.config['cluster']!r} (all its votes)"


def compare_ratings_fits(fits: dict[str, RatingsFit]) -> pd.DataFrame:
    """Compare Bayesian rating fits of the same votes by PSIS-LOO (arviz-stats).

    The unit left out is a whole cluster (every vote of one prompt or voter) when any fit has
    cluster effects: a fit without them is scored on the same clusters (the product of its
    votes' probabilities), so the question is which model predicts the votes of a new
    prompt better. A fit with cluster effects integrates the new cluster's effects over
    their prior given ``sigma_cluster`` (importance sampling from the Laplace approximation
    of their conditional, :data:`LOO_DRAWS` draws per posterior draw). With no cluster
    effects in any fit the unit is one vote. With few clusters (tens) each holds many
    votes, leaving one out moves the posterior far and PSIS flags it (Pareto k > 0.7): read
    ``pareto_k_above_0.7`` before the ranking. Fits must share the tie rule (``"half"``'s
    tie term is not a probability: compare such fits only with each other).

    Parameters
    ----------
    fits : dict of str to RatingsFit
        At least two fits of the same votes (checked on the counts per pair).

    Returns
    -------
    pandas.DataFrame
        :func:`arviz_stats.compare`'s table (``rank``, ``elpd``, ``p``, ``elpd_diff``,
        ``weight``, ``se``, ``dse``, ``warning``) plus ``pareto_k_above_0.7`` and
        ``mc_se_max`` (the largest Monte Carlo SE of a unit's integrated log-likelihood);
        ``attrs["unit"]`` says what one observation is, ``attrs["n_units"]`` how many.

    Examples
    --------
    >>> clustered = fit_ratings_bayes(votes, cluster="prompt")           # doctest: +SKIP
    >>> iid = fit_ratings_bayes(votes)                                   # doctest: +SKIP
    >>> compare_ratings_fits({"clustered": clustered, "iid": iid})       # doctest: +SKIP
    """
    import arviz_stats as azs

    _check_fits(fits)
    units, unit = _units(fits)
    trees, flagged, mc = {}, {}, {}
    for name, fit in fits.items():
        ll, mc_se = pointwise_loglik(fit, units, return_mc_se=True)
        mc[name] = float(mc_se.max())
        da = xr.DataArray(ll.reshape(fit.posterior.sizes["chain"], -1, ll.shape[1]),
                          dims=(*SAMPLE_DIMS, "unit"))
        trees[name] = xr.DataTree.from_dict({"posterior": xr.Dataset({"mu": da.isel(unit=0)}),
                                             "log_likelihood": xr.Dataset({"y": da})})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            k = azs.loo(trees[name], var_name="y", pointwise=True).pareto_k
        flagged[name] = int((np.asarray(k) > K_THRESHOLD).sum())
    with warnings.catch_warnings():       # stacking's optimiser on fits far apart divides
        warnings.simplefilter("ignore", UserWarning)   # by zero: its weights are then even
        warnings.simplefilter("ignore", RuntimeWarning)
        table = azs.compare(trees, var_name="y", round_to="none")
    table["pareto_k_above_0.7"] = [flagged[n] for n in table.index]
    table["mc_se_max"] = [mc[n] for n in table.index]
    table.attrs = {"unit": unit, "n_units": int(np.unique(units.g).size)}
    return table

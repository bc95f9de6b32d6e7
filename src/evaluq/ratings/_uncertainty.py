"""The ratings' uncertainty: the (cluster-)robust sandwich covariance and the batched bootstrap.

Sandwich: ``V = B^+ M B^+`` with the bread ``B`` minus the Hessian of the log-likelihood at the
estimate (plus the ridge, if any) and the meat ``M = sum_g U_g U_g'``, ``U_g`` the summed
score of cluster g. Without clusters every vote is its own cluster and there is no
small-sample factor (HC0, as arena-rank); with clusters ``M`` is multiplied by
``G / (G - 1) * (N - 1) / (N - k)`` (CR1, statsmodels' ``cov_type="cluster"``), N votes,
k free parameters. Both score and bread vanish along ``sum(theta)``, so ``V`` is the covariance
of the sum-zero estimate (``B^+`` is the pseudo-inverse on that subspace).

Bootstrap: multinomial counts over the unique (pair, outcome) cells (iid votes), or whole
clusters drawn with replacement (the cells' counts then a sparse matrix product), and one
batched Newton fit over every resample of a block at once (no loop over resamples).

With covariates the cells are the unique (pair, covariate row, outcome) combinations (about
one per vote with continuous covariates); the scores gain the covariates' block
``s_d * z_r`` and everything else is unchanged.

Where the sandwich cannot be trusted it is refused or floored, never left at 0:

* G clusters give a meat of rank at most G - 1 (the clusters' scores sum to 0 at the
  estimate): with no more clusters than the k free parameters some directions of the ratings
  would get variance 0, and the fit is refused (:func:`check_clusters`). With few clusters
  (:func:`evaluq._kernels.few_clusters`: fewer than 30, or fewer than 4 per free
  parameter) the cluster-robust covariance is noisy and biased down: a warning, and the
  rule ``judged_means`` uses too, the larger of the cluster-robust and the
  independent-votes variance, is applied to every direction
  (:func:`evaluq._kernels.loewner_floor`: each generalised eigenvalue of the CR1 covariance
  relative to the HC0 one is floored at 1, so every contrast's variance is at least both).
* A direction in which the votes' scores are all 0 at the estimate (a model whose only votes
  are ties with an opponent of equal estimated strength: the estimate fits them exactly)
  gets variance 0 from any sandwich; there the model-based variance (the inverse of the
  information) is used, with a warning naming the models.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from evaluq._kernels import (
    CLUSTERS_PER_PARAMETER,
    FEW_CLUSTERS,
    few_clusters,
    loewner_floor,
    samples_to_reject,
)
from evaluq._validation import check_memory
from evaluq._warn import warn
from evaluq.errors import EvaluqWarning
from evaluq.ratings import _newton
from evaluq.ratings._checks import strongly_connected, took_from
from evaluq.ratings._newton import Design
from evaluq.ratings._votes import Votes, pair_counts

BLOCK_ELEMENTS = 4_000_000
"""Resamples are fitted in blocks holding at most this many (resample x pair-cell or
resample x parameter^2) numbers."""
RUNAWAY_LOGIT = 15.0
"""A resample whose logit strengths span more than this is checked for an infinite MLE."""
RUNAWAY_COVARIATE_LOGIT = 30.0
"""A fit in which the covariates move some row's log-odds by more than this has no finite
MLE (the covariates separate the outcomes: ``beta`` runs off)."""
NO_INFORMATION = 1e-9
"""A direction whose sandwich variance is below this fraction of its model-based variance has
no information in the votes' scores (they are all 0 there at the estimate)."""


MODEL_BASED = "; model-based (inverse information) where every vote's score is 0"
"""Said in ``details["covariance_kind"]`` when some direction takes the model-based variance."""


def covariate_logits(design: Design, x: np.ndarray) -> np.ndarray:
    """The covariates' part of every row's log-odds, ``z_r' beta`` (B, R), for ``x`` (B, K)."""
    if design.features is None:
        return np.zeros((x.shape[0], design.n_rows))
    return np.asarray(x[:, design.beta] @ design.features.T)


def cell_scores(design: Design, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Score of one vote in each cell (R, 3): in ``d`` and in ``lam``, at parameters ``x`` (K,)."""
    d = x[design.row_i] - x[design.row_j] + covariate_logits(design, x[None])[0]
    if not design.davidson:
        p, _, _ = _newton.pair_probabilities(d, None)
        s_d = np.stack([1.0 - p, -p, 0.5 - p], axis=1)
        return s_d, np.zeros_like(s_d)
    pw, pl, pt = _newton.pair_probabilities(d, x[design.n_models])
    f_d = 0.5 * (pw - pl)
    s_d = np.stack([0.5 - f_d, -0.5 - f_d, -f_d], axis=1)
    s_l = np.stack([-pt, -pt, 1.0 - pt], axis=1)
    return s_d, s_l


def _cell_scores(design: Design, votes: Votes, s_d: np.ndarray,
                 s_l: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray | None]:
    """One vote's score in each cell (3 R, K): the ``theta`` block as a sparse matrix (two
    entries a row) and the ``lam`` / ``beta`` columns dense (None without them)."""
    r = votes.n_rows
    to_row = sp.csr_matrix((np.ones(3 * r), (np.arange(3 * r), np.repeat(np.arange(r), 3))),
                           shape=(3 * r, r))
    u_theta = sp.diags(s_d.ravel()) @ (to_row @ design.incidence)
    dense = []
    if design.davidson:
        dense.append(s_l.reshape(-1, 1))
    if design.features is not None:
        dense.append(s_d.reshape(-1, 1) * np.repeat(design.features, 3, axis=0))
    return sp.csr_matrix(u_theta), (np.concatenate(dense, axis=1) if dense else None)


def _meat(design: Design, votes: Votes, s_d: np.ndarray, s_l: np.ndarray) -> np.ndarray:
    """``M = sum_g U_g U_g'``: the summed scores of every cluster (G, K) multiplied out; without
    clusters ``sum_c n_c u_c u_c'`` over the cells, computed blockwise from the sparse
    ``theta`` block (never a dense (cells, K) matrix: with covariates there is about one cell
    per vote)."""
    u_theta, dense = _cell_scores(design, votes, s_d, s_l)
    if votes.cluster_counts is not None:
        rows = votes.cluster_counts
        parts = [np.asarray((rows @ u_theta).todense())]
        if dense is not None:
            parts.append(np.asarray(rows @ dense))
        scores = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        return np.asarray(scores.T @ scores)
    n = votes.counts.ravel()
    weighted = sp.diags(n) @ u_theta
    theta = np.asarray((u_theta.T @ weighted).todense())
    if dense is None:
        return theta
    m = design.n_models
    meat = np.empty((design.n_params, design.n_params))
    meat[:m, :m] = theta
    cross = np.asarray(weighted.T @ dense)
    meat[:m, m:], meat[m:, :m] = cross, cross.T
    meat[m:, m:] = dense.T @ (n[:, None] * dense)
    return meat


@dataclass(frozen=True)
class Sandwich:
    covariance: np.ndarray
    kind: str
    n_clusters: int
    factor: float
    blind: np.ndarray | None = None
    """The model-based covariance (K, K) added in the directions where every vote's score is 0
    (None without such directions): a bootstrap, whose resamples all fit them alike, adds it
    to its draws."""


def free_basis(n_params: int, n_models: int) -> np.ndarray:
    """An orthonormal basis (K, K - 1) of the parameters orthogonal to the likelihood's null
    direction (every ``theta`` up by the same amount)."""
    null = np.zeros((1, n_params))
    null[0, :n_models] = 1.0
    return np.asarray(sla.null_space(null))


def check_clusters(groups: int, n_free: int, what: str = "ratings",
                   bootstrap: bool = False) -> bool:
    """Refuse clusters too few to identify the covariance of ``n_free`` free parameters (the
    cluster-robust meat has rank at most G - 1), warn for few; returns whether they are few.

    Examples
    --------
    >>> from evaluq.ratings._uncertainty import check_clusters
    >>> check_clusters(200, 4)
    False
    >>> try:
    ...     check_clusters(3, 4)
    ... except ValueError as err:
    ...     print(str(err)[:61])
    `cluster` has 3 clusters, too few for the covariance of the 4
    """
    if groups < 2:
        raise ValueError("`cluster` has a single cluster: a cluster-robust covariance needs "
                         "at least two")
    if groups <= n_free:
        raise ValueError(
            f"`cluster` has {groups} clusters, too few for the covariance of the {n_free} free "
            f"parameters of the {what}: a cluster-robust covariance (or a bootstrap of whole "
            f"clusters) from G clusters has rank at most G - 1 = {groups - 1}, so "
            f"{n_free - groups + 1} direction(s) of the rating differences would get variance "
            f"0. Cluster by a finer unit (prompt, voter) with more than {n_free} clusters, or "
            f"leave out `cluster` (independent votes)")
    few = few_clusters(groups, n_free)
    if few:
        done = ("the bootstrap of so few whole clusters is as noisy, and its intervals may be "
                "too narrow (interval='sandwich' uses the larger of the cluster-robust and the "
                "independent-votes variance in every direction)" if bootstrap else
                "every direction's variance is at least the independent-votes one (the larger "
                "of the two is used, as judged_means does)")
        warn(f"`cluster` has {groups} clusters for {n_free} free parameters of the {what} "
             f"(fewer than {max(FEW_CLUSTERS, CLUSTERS_PER_PARAMETER * n_free)}): a "
             f"cluster-robust covariance from few clusters is noisy and biased down; {done}. "
             f"Cluster by a finer unit if the data have one", EvaluqWarning)
    return few


def _blind_models(design: Design, meat: np.ndarray, hess: np.ndarray) -> np.ndarray:
    """The models whose votes' scores are all 0 at the estimate (indices)."""
    m = design.n_models
    scale = np.maximum(np.abs(np.diag(hess)[:m]), np.finfo(float).tiny)
    return np.flatnonzero(np.diag(meat)[:m] <= NO_INFORMATION * scale)


def sandwich(design: Design, votes: Votes, x: np.ndarray,
             floor_clusters: bool = False) -> Sandwich:
    """The robust covariance (K, K) of the estimate ``x`` (K,) on the logit scale; directions
    without information in the scores take the model-based variance (with a warning), and
    with ``floor_clusters`` every direction's variance is at least the HC0 one."""
    _, hess = _newton.gradient_hessian(design, x[None, :], votes.counts[None])
    bread = np.linalg.inv(hess[0])
    basis = free_basis(design.n_params, design.n_models)
    scores = cell_scores(design, x)
    meat0 = _meat(design, replace(votes, cluster_counts=None), *scores)
    raw = bread @ meat0 @ bread
    hc0, blind = loewner_floor(raw, bread, basis, NO_INFORMATION)
    added = None
    if blind.shape[1]:
        named = [str(votes.models[k]) for k in _blind_models(design, meat0, hess[0])]
        warn(f"the votes' scores are all 0 at the estimate in {blind.shape[1]} direction(s) of "
             f"the ratings" + (f" (model(s) {named[:10]}: their only votes are ties with "
                               "models of the same estimated strength)" if named else "")
             + ": the sandwich (and a bootstrap, whose resamples all fit them alike) would "
             "give them variance 0; there the model-based variance (the inverse of the "
             "information) is used", EvaluqWarning)
        added = blind @ blind.T
    n, k = votes.n_votes, design.n_params - 1
    model_based = "" if added is None else MODEL_BASED
    if votes.cluster_counts is None:
        return Sandwich(covariance=0.5 * (hc0 + hc0.T), kind="HC0" + model_based, n_clusters=n,
                        factor=1.0, blind=added)
    groups = votes.cluster_counts.shape[0]
    factor = groups / (groups - 1) * (n - 1) / max(n - k, 1)
    cov, _ = loewner_floor(factor * bread @ _meat(design, votes, *scores) @ bread, bread, basis,
                         NO_INFORMATION)
    kind = "CR1"
    if floor_clusters:
        cov, raised = loewner_floor(cov, hc0, basis, 1.0)
        kind = "CR1, floored at HC0 (few clusters)" if raised.shape[1] else kind
    return Sandwich(covariance=0.5 * (cov + cov.T), kind=kind + model_based, n_clusters=groups,
                    factor=factor, blind=added)


def normal_draws(x: np.ndarray, cov: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws (n, K) from the normal approximation N(x, cov) (cov may be singular)."""
    vals, vecs = np.linalg.eigh(cov)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    return x + rng.standard_normal((n, x.size)) @ root.T


def resample_counts(votes: Votes, n: int, rng: np.random.Generator) -> np.ndarray:
    """Counts (n, R, 3) of ``n`` bootstrap resamples: N votes drawn with replacement (their
    cells counted: multinomial counts over the cells), or G whole clusters drawn with
    replacement (a sparse product of the clusters' draw counts and cell counts)."""
    p = votes.n_rows
    if votes.cluster_counts is None:
        flat = votes.counts.ravel()
        cell_of_vote = np.repeat(np.arange(flat.size), flat.astype(np.int64))
        drawn_votes = rng.integers(0, votes.n_votes, size=(n, votes.n_votes))
        cells = cell_of_vote[drawn_votes] + (np.arange(n) * flat.size)[:, None]
        drawn = np.bincount(cells.ravel(), minlength=n * flat.size).reshape(n, flat.size)
    else:
        groups = votes.cluster_counts.shape[0]
        weights = rng.integers(0, groups, size=(n, groups))
        weights = np.bincount((weights + (np.arange(n) * groups)[:, None]).ravel(),
                              minlength=n * groups).reshape(n, groups)
        drawn = np.asarray((votes.cluster_counts.T @ weights.T.astype(np.float64)).T)
    return np.asarray(drawn, dtype=np.float64).reshape(n, p, 3)


@dataclass(frozen=True)
class Bootstrap:
    params: np.ndarray
    n_failed: int
    failed_reason: str


def _one_sided(counts: np.ndarray, design: Design, ties_count: bool) -> np.ndarray:
    """Resamples in which some model took nothing from anyone, or lost to no one (a cheap
    sufficient sign of an infinite MLE)."""
    forward, backward = took_from(counts, ties_count)
    m = design.n_models
    took = np.zeros((counts.shape[0], m), dtype=bool)
    gave = np.zeros((counts.shape[0], m), dtype=bool)
    np.logical_or.at(took.T, design.pair_i, forward.T)
    np.logical_or.at(took.T, design.pair_j, backward.T)
    np.logical_or.at(gave.T, design.pair_i, backward.T)
    np.logical_or.at(gave.T, design.pair_j, forward.T)
    return np.asarray(~(took & gave).all(axis=1))


def _failed(design: Design, x: np.ndarray, ok: np.ndarray, counts: np.ndarray,
            ties_count: bool) -> tuple[np.ndarray, str]:
    """Resamples without a finite MLE: not converged; for Davidson no tie or no decisive vote;
    without a prior, those whose graph is not strongly connected (checked exactly on the
    suspects: a model that took nothing or never lost, or strengths spanning more than
    :data:`RUNAWAY_LOGIT`)."""
    bad = ~ok | ~np.isfinite(x).all(axis=1)
    reasons = ["the fit did not converge"] if bad.any() else []
    if design.features is not None:
        with np.errstate(invalid="ignore"):
            runaway = ~(np.abs(covariate_logits(design, x)).max(axis=1)
                        <= RUNAWAY_COVARIATE_LOGIT)
        bad |= runaway
        reasons += (["the covariates separate the outcomes (their coefficients run off)"]
                    if runaway.any() else [])
    counts = pair_counts(counts, design.row_pair, design.pair_i.size)
    if design.ridge == 0.0:
        per_pair = counts.sum(axis=-1)
        seen = np.zeros((counts.shape[0], design.n_models))
        np.add.at(seen.T, design.pair_i, per_pair.T)
        np.add.at(seen.T, design.pair_j, per_pair.T)
        absent = (seen == 0).any(axis=1)
        bad |= absent
        reasons += ["a model without any vote in the resample"] if absent.any() else []
    if design.davidson:
        one_kind = (counts[..., 2].sum(axis=-1) == 0) | (counts[..., :2].sum(axis=(-2, -1)) == 0)
        bad |= one_kind
        reasons += ["no tie or no decisive vote"] if one_kind.any() else []
    if design.ridge == 0.0:
        theta = x[:, :design.n_models]
        suspect = (np.ptp(theta, axis=1) > RUNAWAY_LOGIT) | _one_sided(counts, design, ties_count)
        idx = np.flatnonzero(suspect & ~bad)
        infinite = ~strongly_connected(counts[idx], design.pair_i, design.pair_j,
                                       design.n_models, ties_count)
        bad[idx[infinite]] = True
        reasons += (["a group of models that never wins or never loses within the resample"]
                    if infinite.any() else [])
    return bad, "; ".join(reasons)


def bootstrap(design: Design, votes: Votes, x_hat: np.ndarray, n: int,
              rng: np.random.Generator, ties_count: bool) -> Bootstrap:
    """Fit ``n`` resamples in blocks, each block one batched Newton fit warm-started at the
    estimate."""
    width = max(3 * votes.n_rows * (1 + design.n_covariates), design.n_params ** 2,
                votes.n_votes // 4)
    block = max(1, min(n, BLOCK_ELEMENTS // width))
    out = np.empty((n, design.n_params))
    n_bad, reason = 0, ""
    for begin in range(0, n, block):
        size = min(block, n - begin)
        counts = resample_counts(votes, size, rng)
        x0 = np.broadcast_to(x_hat, (size, x_hat.size))
        if design.davidson:
            x0 = _newton.start(design, counts)
            x0[:, :design.n_models] = x_hat[:design.n_models]
            x0[:, design.beta] = x_hat[design.beta]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            x, ok, _ = _newton.newton(design, counts, x0)
        bad, why = _failed(design, x, ok, counts, ties_count)
        n_bad += int(bad.sum())
        reason = reason or why
        out[begin:begin + size] = np.where(bad[:, None], np.nan, x)
    return Bootstrap(params=out, n_failed=n_bad, failed_reason=reason)


DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples when ``n_resamples`` is not given (each one a refit)."""
MAX_DEFAULT_DRAWS = 20_000
"""The most normal draws of a sandwich fit chosen by default (:func:`default_resamples`)."""


def default_resamples(n_resamples: int | None, interval: str, n_models: int) -> int:
    """``n_resamples``, or when it is None: ``DEFAULT_RESAMPLES`` bootstrap resamples, or for
    the sandwich (draws from its normal approximation, cheap) enough draws for the tiers'
    tests to reject: the smallest two-sided p-value of n draws is 2 / (n + 1), times the
    m (m - 1) / 2 pairs after Holm's adjustment, so at alpha 0.05 n >= 40 per pair, rounded
    up to a thousand, at least ``DEFAULT_RESAMPLES`` and at most ``MAX_DEFAULT_DRAWS`` (32
    models; beyond, the tiers say they cannot separate the models and how many draws they
    need).

    Examples
    --------
    >>> from evaluq.ratings._uncertainty import default_resamples
    >>> default_resamples(None, "sandwich", 5), default_resamples(None, "sandwich", 8)
    (1000, 2000)
    >>> default_resamples(None, "bootstrap", 8), default_resamples(500, "sandwich", 8)
    (1000, 500)
    """
    if n_resamples is not None:
        return n_resamples
    if interval != "sandwich":
        return DEFAULT_RESAMPLES
    needed = samples_to_reject(n_models, 0.05, "holm")
    return min(max(DEFAULT_RESAMPLES, -(-needed // 1000) * 1000), MAX_DEFAULT_DRAWS)


def check_draws_memory(n_resamples: int, n_models: int, n_params: int) -> None:
    """Refuse ``n_resamples`` whose draws and their pairwise grids (win and tie probabilities
    and logit differences, resample x model x model, float64) would pass evaluq's memory
    budget, before anything is fitted."""
    check_memory("n_resamples", 8.0 * n_resamples * (3 * n_models**2 + n_params))

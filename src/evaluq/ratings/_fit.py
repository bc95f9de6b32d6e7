"""``fit_ratings``: Bradley-Terry / Davidson ratings from pairwise votes with honest intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import xarray as xr

from evaluq._dims import MODEL, MODEL_B, NAN_REASON, RESAMPLE
from evaluq._validation import (
    RNGLike,
    check_bool,
    check_choice,
    check_confidence_level,
    check_int,
    check_real,
    check_rng,
)
from evaluq._warn import warn
from evaluq.errors import ConvergenceWarning
from evaluq.io import TableLike
from evaluq.ratings import _checks, _newton, _uncertainty
from evaluq.ratings._newton import Design
from evaluq.ratings._result import COVARIATE, NO_TIE_MODEL, RatingsResult, Scale, scale_of
from evaluq.ratings._votes import Votes, read_votes

TIES = _checks.TIES
INTERVALS = ("sandwich", "bootstrap")
SCALES = ("elo", "logit")


@dataclass(frozen=True)
class _Options:
    ties: str
    interval: str
    scale: Scale
    level: float
    n_resamples: int
    prior_sd: float | None
    rng: np.random.Generator

    @property
    def ridge(self) -> float:
        return 0.0 if self.prior_sd is None else 1.0 / self.prior_sd ** 2


def _options(ties: Any, interval: Any, scale: Any, confidence_level: Any, n_resamples: Any,
             prior_sd: Any, rng: RNGLike) -> _Options:
    check_choice("ties", ties, TIES)
    check_choice("interval", interval, INTERVALS)
    check_choice("scale", scale, SCALES)
    n = _uncertainty.DEFAULT_RESAMPLES if n_resamples is None else check_int(
        "n_resamples", n_resamples, minimum=2)
    prior = None if prior_sd is None else check_real("prior_sd", prior_sd, low=0.0,
                                                     low_inclusive=False)
    return _Options(ties=ties, interval=interval, scale=scale_of(scale),
                    level=check_confidence_level(confidence_level), n_resamples=n,
                    prior_sd=prior, rng=check_rng(rng))


def _check_estimable(votes: Votes, opts: _Options) -> None:
    _checks.check_connected(votes)
    if opts.ties == "davidson":
        _checks.check_ties(votes)
    if opts.prior_sd is None:
        _checks.check_finite_mle(votes, ties_count=opts.ties != "drop")
        return
    problem = _checks.infinite_mle(votes, ties_count=opts.ties != "drop")
    if problem is not None:

        from evaluq.errors import EvaluqWarning

        warn(
            f"only the prior keeps these ratings finite: {problem}. Their intervals are the "
            "spread of the shrunk estimate over repeated votes, narrow because the prior, not "
            f"the votes, stops them; fit_ratings_bayes(..., prior_sd={opts.prior_sd:g}) gives "
            "the posterior, which says how far the votes leave them free", EvaluqWarning)


def _reference_index(votes: Votes, reference: Any) -> int | None:
    if reference is None:
        return None
    hits = np.flatnonzero(votes.models == reference)
    if hits.size == 0:
        raise ValueError(f"`reference` must be one of the models; got {reference!r} (models: "
                         f"{[str(m) for m in votes.models[:10]]}"
                         f"{' ...' if votes.n_models > 10 else ''})")
    return int(hits[0])


def _anchor(design: Design, ref: int | None) -> np.ndarray:
    """The linear map (K, K) from sum-zero parameters to the stated identifiability."""
    anchor = np.eye(design.n_params)
    if ref is not None:
        anchor[:design.n_models, ref] -= 1.0
    return anchor


def _identifiability(scale: Scale, ref: Any) -> str:
    at = scale.offset
    if ref is None:
        return (f"sum-zero: the models' logit strengths sum to 0 (the mean rating is {at:g})")
    return f"reference: model {ref!r} is fixed at logit strength 0 (rating {at:g})"


def _estimate(design: Design, votes: Votes) -> tuple[np.ndarray, int]:
    with np.errstate(over="ignore"):
        x, ok, iterations = _newton.newton(design, votes.counts[None])
    if design.features is not None and votes.covariates is not None:
        style = np.abs(_uncertainty.covariate_logits(design, x)).max()
        if not style <= _uncertainty.RUNAWAY_COVARIATE_LOGIT:
            raise ValueError(
                f"`covariates` {votes.covariates.names} separate the outcomes: their "
                f"maximum-likelihood coefficients are infinite (the covariates alone move some "
                f"vote's log-odds by {style:.3g}); remove the covariate that decides the votes")
    if not ok[0]:
        warn(f"the rating fit did not reach a gradient of {_newton.GRADIENT_TOL:g} "
             f"per vote in {iterations} Newton iterations", ConvergenceWarning)
    return x[0], iterations


def _bootstrap(design: Design, votes: Votes, x_hat: np.ndarray,
               opts: _Options) -> np.ndarray:
    boot = _uncertainty.bootstrap(design, votes, x_hat, opts.n_resamples, opts.rng,
                                  ties_count=opts.ties != "drop")
    if boot.n_failed:
        remedies = ["use interval='sandwich'", "collect more votes"]
        if "no tie" in boot.failed_reason:
            remedies.append("use ties='half' (a tie as half a win: no tie parameter to "
                            "estimate from resamples without a tie)")
        if opts.prior_sd is None and ("never wins" in boot.failed_reason
                                      or "without any vote" in boot.failed_reason):
            remedies.append("pass `prior_sd` (a Gaussian prior on the strengths that keeps "
                            "every resample's ratings finite)")
        raise ValueError(
            f"{boot.n_failed} of {opts.n_resamples} bootstrap resamples have no finite "
            f"maximum-likelihood ratings ({boot.failed_reason}); "
            + ", ".join(remedies[:-1]) + f", or {remedies[-1]}")
    return boot.params


@dataclass(frozen=True)
class _Fit:
    x_hat: np.ndarray
    cov: np.ndarray
    draws: np.ndarray
    covariance_kind: str
    n_clusters: int
    iterations: int


def _fit(votes: Votes, design: Design, opts: _Options, ref: int | None) -> _Fit:
    few = (votes.cluster_counts is not None
           and _uncertainty.check_clusters(votes.cluster_counts.shape[0], design.n_params - 1,
                                           bootstrap=opts.interval == "bootstrap"))
    x_hat, iterations = _estimate(design, votes)
    robust = _uncertainty.sandwich(design, votes, x_hat, floor_clusters=few)
    if opts.interval == "bootstrap":
        draws = _bootstrap(design, votes, x_hat, opts)
        kind = "bootstrap (" + ("clusters" if votes.clusters is not None else "votes") + ")"
        if robust.blind is not None:      # directions every resample fits alike (all ties)
            draws += _uncertainty.normal_draws(np.zeros_like(x_hat), robust.blind,
                                               opts.n_resamples, opts.rng)
            kind += _uncertainty.MODEL_BASED
        cov = np.cov(draws, rowvar=False)
    else:
        draws = _uncertainty.normal_draws(x_hat, robust.covariance, opts.n_resamples, opts.rng)
        m = design.n_models      # exactly sum-zero (the covariance's null direction is 1)
        draws[:, :m] -= draws[:, :m].mean(axis=1, keepdims=True)
        cov, kind = robust.covariance, robust.kind
    anchor = _anchor(design, ref)
    return _Fit(x_hat=anchor @ x_hat, cov=anchor @ cov @ anchor.T, draws=draws @ anchor.T,
                covariance_kind=kind, n_clusters=robust.n_clusters, iterations=iterations)


def _tie_arrays(fit: _Fit, design: Design, opts: _Options) -> tuple[xr.DataArray, ...]:
    m = design.n_models
    if not design.davidson:
        reason = {NAN_REASON: NO_TIE_MODEL.format(ties=opts.ties)}
        nan = xr.DataArray(np.nan, name="tie_parameter", attrs=reason)
        draws = xr.DataArray(np.full(fit.draws.shape[0], np.nan), dims=(RESAMPLE,), attrs=reason)
        return nan, nan.rename("tie_se"), draws.rename("tie_parameter")
    nu = float(np.exp(fit.x_hat[m]))
    nu_draws = np.exp(fit.draws[:, m])
    se = (float(np.std(nu_draws, ddof=1)) if opts.interval == "bootstrap"
          else nu * float(np.sqrt(fit.cov[m, m])))
    formula = ("Davidson (1970): P(i beats j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D, "
               "D = pi_i + pi_j + nu sqrt(pi_i pi_j)"
               + (" (with covariates, pi_i / pi_j times exp(z' beta))"
                  if design.features is not None else ""))
    return (xr.DataArray(nu, name="tie_parameter", attrs={"model": formula}),
            xr.DataArray(se, name="tie_se"),
            xr.DataArray(nu_draws, dims=(RESAMPLE,), name="tie_parameter"))


def _covariate_arrays(votes: Votes, design: Design, fit: _Fit,
                      opts: _Options) -> dict[str, xr.DataArray]:
    """The covariates' coefficients on the ratings' scale (no offset), SEs and draws."""
    if votes.covariates is None:
        return {}
    sc, b = opts.scale, design.beta
    names = votes.covariates.names
    info = votes.covariates.describe()
    attrs = {"scale": opts.scale.name, "unit": f"{opts.scale.name} {info['coefficient_unit']}",
             "meaning": "added to the log-odds (times the scale) that model_a wins, per unit "
                        "of the covariate's a-vs-b value"}
    coords = {COVARIATE: names}
    draws = sc.factor * fit.draws[:, b]
    se = (np.std(draws, axis=0, ddof=1) if opts.interval == "bootstrap"
          else sc.factor * np.sqrt(np.clip(np.diag(fit.cov)[b], 0.0, None)))
    return {
        "covariate_coefficient": xr.DataArray(sc.factor * fit.x_hat[b], dims=(COVARIATE,),
                                              coords=coords, name="covariate_coefficient",
                                              attrs=attrs),
        "covariate_se": xr.DataArray(se, dims=(COVARIATE,), coords=coords, name="covariate_se",
                                     attrs=attrs),
        "covariate_draws": xr.DataArray(draws, dims=(RESAMPLE, COVARIATE),
                                        coords={RESAMPLE: np.arange(opts.n_resamples),
                                                **coords},
                                        name="covariate_coefficient", attrs=attrs),
    }


def _result(votes: Votes, design: Design, fit: _Fit, opts: _Options,
            details: dict[str, Any]) -> RatingsResult:
    m, sc = design.n_models, opts.scale
    coords = {MODEL: votes.models}
    cov = sc.factor ** 2 * fit.cov[:m, :m]
    se = (np.std(sc.to_rating(fit.draws[:, :m]), axis=0, ddof=1)
          if opts.interval == "bootstrap" else np.sqrt(np.clip(np.diag(cov), 0.0, None)))
    attrs = {"scale": details["scale"], "identifiability": details["identifiability"]}
    draws = xr.DataArray(sc.to_rating(fit.draws[:, :m]), dims=(RESAMPLE, MODEL),
                         coords={RESAMPLE: np.arange(opts.n_resamples), **coords}, name="rating",
                         attrs={**attrs, "higher_is_better": 1, "n_resamples": opts.n_resamples,
                                "replication": details["draws"], "how": "Bradley-Terry",
                                "metric": "rating", "confidence_level": opts.level})
    tie, tie_se, tie_draws = _tie_arrays(fit, design, opts)
    counts = xr.Dataset({k: (MODEL, v) for k, v in votes.per_model().items()}, coords=coords)
    return RatingsResult(
        rating=xr.DataArray(sc.to_rating(fit.x_hat[:m]), dims=(MODEL,), coords=coords,
                            name="rating", attrs=attrs),
        se=xr.DataArray(se, dims=(MODEL,), coords=coords, name="se", attrs=attrs),
        covariance=xr.DataArray(cov, dims=(MODEL, MODEL_B),
                                coords={**coords, MODEL_B: votes.models}, name="covariance",
                                attrs=attrs),
        draws=draws, tie_parameter=tie, tie_se=tie_se, tie_draws=tie_draws, counts=counts,
        confidence_level=opts.level, details=details, _params=fit.x_hat, _param_cov=fit.cov,
        **_covariate_arrays(votes, design, fit, opts))


def _details(votes: Votes, fit: _Fit, opts: _Options, cluster: str | None,
             ref: Any) -> dict[str, Any]:
    draws = (f"{'cluster' if cluster else 'vote'} bootstrap" if opts.interval == "bootstrap"
             else "normal approximation of the sandwich")
    prior = ("none" if opts.prior_sd is None else
             f"Gaussian N(0, {opts.prior_sd:g}^2) on each logit strength (a ridge)")
    return {"ties": opts.ties, "interval": opts.interval, "scale": opts.scale.name,
            "cluster": cluster, "covariance_kind": fit.covariance_kind,
            "identifiability": _identifiability(opts.scale, ref), "prior": prior,
            "n_votes": votes.n_votes, "n_ties_dropped": votes.n_ties_dropped,
            "n_models": votes.n_models, "n_pairs": votes.n_pairs,
            "n_clusters": fit.n_clusters, "n_resamples": opts.n_resamples, "draws": draws,
            "iterations": fit.iterations, "source": votes.source,
            "reference": "" if ref is None else str(ref),
            "covariates": None if votes.covariates is None else votes.covariates.describe(),
            "n_rows": votes.n_rows}


def fit_ratings(
    votes: TableLike,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    winner: str = "winner",
    outcomes: Mapping[Any, str] | None = None,
    ties: Literal["auto", "davidson", "half", "drop"] = "auto",
    cluster: str | None = None,
    interval: Literal["sandwich", "bootstrap"] = "sandwich",
    confidence_level: float = 0.95,
    n_resamples: int | None = None,
    scale: Literal["elo", "logit"] = "elo",
    reference: Any = None,
    prior_sd: float | None = None,
    covariates: Sequence[str] | Mapping[str, str | tuple[str, str]] | None = None,
    standardize_covariates: bool = True,
    rng: RNGLike = 0,
) -> RatingsResult:
    r"""Ratings of models from pairwise votes (Bradley-Terry, Davidson ties), with intervals.

    Each vote compares ``model_a`` with ``model_b``. Model i has a logit strength
    :math:`\theta_i` (:math:`\pi_i = e^{\theta_i}`). Bradley-Terry:
    :math:`P(i \text{ beats } j) = \pi_i / (\pi_i + \pi_j)`. Ties:

    * ``"davidson"`` (Davidson 1970; evalica's ``newman``):
      :math:`P(i \text{ beats } j) = \pi_i / D`,
      :math:`P(\text{tie}) = \nu \sqrt{\pi_i \pi_j} / D`,
      :math:`D = \pi_i + \pi_j + \nu \sqrt{\pi_i \pi_j}`, with the tie parameter
      :math:`\nu` fitted (Newman's and evalica's ``v`` is :math:`\nu / 2`);
    * ``"half"``: a tie counts as half a win for each side (evalica's ``bradley_terry``,
      arena-rank);
    * ``"drop"``: ties are left out (their number is in ``details["n_ties_dropped"]``);
    * ``"auto"`` (the default): ``"davidson"`` when the votes hold a tie, else ``"drop"``
      (Davidson's tie parameter needs ties).

    The maximum-likelihood estimate is found by Newton's method on the counts of the unique
    (pair, outcome) cells, to a gradient of 1e-12 per vote. The likelihood fixes only
    differences of strengths: by default they sum to zero (as arena-rank), or ``reference``
    is fixed at 0; the result states which in ``details["identifiability"]`` and in every
    output's attributes. On the Elo scale ``rating = 400 / ln(10) * theta + 1000``
    (arena-rank's), so 400 points are odds of 10 to 1 between two models.

    Uncertainty: ``interval="sandwich"`` is the robust covariance
    :math:`V = B^{+} M B^{+}` (bread ``B`` minus the Hessian, meat ``M`` the summed outer
    products of the scores: of every vote, HC0 as arena-rank; or of every ``cluster``, CR1 as
    statsmodels' ``cov_type="cluster"``), with normal intervals ``rating +- z se``;
    ``interval="bootstrap"`` resamples votes (or whole clusters) as multinomial counts over
    the cells and refits every resample in one batched Newton fit, with percentile
    intervals. Votes on the same prompt (or by the same voter) are not independent: give
    ``cluster`` to widen the intervals by what they share. G clusters identify a covariance of
    rank at most G - 1: with no more clusters than free parameters (models - 1, plus the tie
    parameter and the covariates) the fit is refused; with few (fewer than 30, or fewer than
    4 per free parameter) an ``EvaluqWarning``, and the sandwich is at least the
    independent-votes (HC0) one in every direction (each generalised eigenvalue of CR1
    relative to HC0 floored at 1: the larger of the two variances, as
    :func:`evaluq.judged_means` uses). A direction in which every vote's score is 0 at the
    estimate (a model whose only votes are ties with an equally rated opponent; every model
    when every vote is a tie under ``ties="half"``) takes the model-based variance (the
    inverse information: a binomial at p = 1/2 per vote) there, with an ``EvaluqWarning``,
    rather than variance 0; the bootstrap, whose resamples all fit such a direction alike,
    adds that variance to its draws (``details["covariance_kind"]`` says so).

    Style control (``covariates``; a contextual Bradley-Terry model, arena-rank's
    ``ContextualBradleyTerry``, LMArena's style-controlled leaderboard): each vote k has
    covariates :math:`z_k` (q,) saying how its two answers differ in something other than
    quality (length, markdown), oriented from ``model_a``'s side, and the log-odds become
    :math:`d_k = \theta_a - \theta_b + z_k' \beta` (with Davidson ties the same
    :math:`d_k` replaces :math:`\theta_a - \theta_b`). :math:`\beta` is fitted jointly with
    the ratings by maximum likelihood; the ratings are then the strengths at :math:`z = 0`
    (standardised: at the votes' average difference), and ``covariate_coefficient`` holds
    :math:`\beta` on the ratings' scale (Elo points per SD). A covariate given as a pair of
    columns ``(col_a, col_b)`` of counts or sizes is LMArena's relative difference
    :math:`(x_a - x_b) / (x_a + x_b)` (0 when both are 0); a single column is used as it is.
    ``standardize_covariates`` (default, as arena-rank) centres each one and divides it by its
    SD over the votes (ddof 0). The cells are then the unique (pair, covariate row, outcome)
    combinations (one per vote with continuous covariates); the sandwich (HC0 / CR1) and the
    bootstrap cover :math:`\beta` as well. arena-rank's defaults differ: a ridge ``reg=1`` on
    :math:`\beta` on its mean loss and inverse pair-frequency weights (``reweighted=True``);
    with ``reg=0``, ``reweighted=False`` the two fits agree (to 1e-9 Elo on the simulated
    arena of ``benchmarks/anchors/run_arena_rank_style.py``).

    Parameters
    ----------
    votes : pandas.DataFrame or path
        One row per vote (a CSV / TSV / JSON lines / parquet path is read by
        :func:`evaluq.io.read_table`).
    model_a, model_b : str
        Columns naming the two models of each vote (no vote of a model against itself).
    winner : str
        Column saying who won: ``"model_a"`` / ``"a"``, ``"model_b"`` / ``"b"``, or ``"tie"``
        (Chatbot Arena's ``"tie (bothbad)"`` and ``"bothbad"``, arena-rank's ``"both_bad"``
        and ``"draw"`` are ties too), in any case; without ``outcomes``, also the name of the
        winning model, or the name of its column (``"left"`` for ``model_a="left"``). Another
        label is refused, naming it, unless ``outcomes`` maps it.
    outcomes : mapping, optional
        More labels of ``winner``, to ``"model_a"`` / ``"model_b"`` / ``"tie"``, e.g.
        ``{"left": "model_a", "right": "model_b"}``: read first (exactly as given, so they
        may also redefine a default label), the default labels above still understood; the
        winning model's name and its column's name are then not read.
    ties : {"auto", "davidson", "half", "drop"}
        The tie rule (above). ``"auto"`` (default): ``"davidson"`` when the votes hold a
        tie, else plain Bradley-Terry (``"drop"``, with nothing to drop); the rule used is
        ``details["ties"]``, the one asked for ``details["ties_requested"]``.
    cluster : str, optional
        Column of the votes' clusters (prompt, voter): cluster-robust sandwich (CR1) or a
        bootstrap of whole clusters; more clusters than free parameters are needed (above).
    interval : {"sandwich", "bootstrap"}
        How the uncertainty is estimated (above).
    confidence_level : float
        Level of the intervals, in (0, 1).
    n_resamples : int, optional
        Bootstrap resamples, or draws from the sandwich's normal approximation (the
        ``draws`` for ranks and tiers); at least 2. Default: 1,000 resamples, or for the
        sandwich as many draws as the tiers' Holm-adjusted tests need to be able to reject
        at 0.05 (40 per pair of models, rounded up to a thousand; 1,000 to 20,000).
    scale : {"elo", "logit"}
        Ratings in Elo points or in logits (``theta``).
    reference : model label, optional
        Fix this model's logit strength at 0 (Elo 1000) instead of the sum-zero constraint.
    prior_sd : float, optional
        A Gaussian prior N(0, prior_sd^2) on each logit strength (a ridge), for data whose
        maximum-likelihood ratings are infinite (a model that never wins or never loses);
        stated in ``details["prior"]``. Default None: plain maximum likelihood, and such data
        are refused naming the models.
    covariates : list of str or mapping, optional
        Per-vote covariates for style control (above): a list of columns each holding an
        a-vs-b value (positive: ``model_a``'s answer has more of it), or a mapping from a
        covariate's name to such a column or to a pair ``(col_a, col_b)`` of non-negative
        counts or sizes (their relative difference), e.g.
        ``{"length": ("tokens_a", "tokens_b"), "bold": ("bold_a", "bold_b")}``. A missing
        column, a non-numeric or NaN value, a constant covariate or one that is a function of
        which models are compared is refused, naming ``covariates``.
    standardize_covariates : bool
        Centre each covariate and divide it by its SD over the votes (default True, as
        arena-rank's ``normalize_features``); False uses the values as they are (then
        :math:`z = 0` is "no difference", and a constant column fits a side advantage).
    rng : int, Generator, SeedSequence or None
        Seed of the bootstrap or of the normal draws (default 0: a fit is reproducible).

    Returns
    -------
    RatingsResult
        ``rating``, ``se``, ``ci`` / :meth:`~RatingsResult.confidence_interval`,
        ``covariance``, ``tie_parameter`` (``tie_se``), ``win_probability`` with
        :meth:`~RatingsResult.win_probability_interval`, ``tie_probability``, ``draws``
        (``resample``, ``model``) for :func:`evaluq.rank_distribution`,
        :func:`evaluq.leaderboard` and :func:`evaluq.significance_groups`, and
        ``to_dataframe()`` (the ratings table, best first); with covariates also
        ``covariate_coefficient``, ``covariate_se``, ``covariate_draws``,
        :meth:`~RatingsResult.covariate_interval` and
        :meth:`~RatingsResult.covariate_table`.

    Raises
    ------
    ValueError
        A vote of a model against itself, an unknown ``winner`` label, a missing value (with
        its rows), a disconnected comparison graph, infinite maximum-likelihood ratings
        (without ``prior_sd``), ``ties="davidson"`` without ties, a bootstrap resample
        without finite ratings (or without a vote of some model), no more clusters than free
        parameters; covariates that are missing, NaN, constant, collinear with the models,
        or that separate the outcomes.
    TypeError
        ``covariates`` of the wrong form or a non-numeric covariate column.

    References
    ----------
    Bradley & Terry (1952), Biometrika 39; Davidson (1970), JASA 65; Newman (2023), JMLR 24;
    Ford (1957), Amer. Math. Monthly 64 (when the estimate exists).

    Examples
    --------
    >>> import pandas as pd
    >>> from evaluq.ratings import fit_ratings
    >>> votes = pd.DataFrame({
    ...     "model_a": ["x", "x", "y", "y", "z", "x", "z", "y"],
    ...     "model_b": ["y", "z", "z", "x", "x", "y", "y", "z"],
    ...     "winner": ["model_a", "model_a", "tie", "model_a", "model_b", "tie", "model_a",
    ...                "model_b"]})
    >>> fit = fit_ratings(votes, ties="half", scale="logit")
    >>> fit.rating.round(3).values.tolist()
    [0.543, -0.473, -0.071]
    >>> print(fit.details["identifiability"])
    sum-zero: the models' logit strengths sum to 0 (the mean rating is 0)
    >>> fit.win_probability.sel(model="x", model_b="y").round(3).item()
    0.734

    Style control: the longer answer wins more often, whoever wrote it.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> n = 3000
    >>> a = rng.choice(["x", "y", "z"], n)
    >>> b = np.where(a == "x", "y", np.where(a == "y", "z", "x"))
    >>> len_a, len_b = rng.integers(50, 800, n), rng.integers(50, 800, n)
    >>> strength = {"x": 0.5, "y": 0.0, "z": -0.5}
    >>> rel = (len_a - len_b) / (len_a + len_b)
    >>> d = np.array([strength[i] - strength[j] for i, j in zip(a, b)]) + 1.5 * rel
    >>> won = rng.random(n) < 1 / (1 + np.exp(-d))
    >>> style = pd.DataFrame({"model_a": a, "model_b": b, "len_a": len_a, "len_b": len_b,
    ...                       "winner": np.where(won, "model_a", "model_b")})
    >>> fit = fit_ratings(style, ties="drop", scale="logit", standardize_covariates=False,
    ...                   covariates={"length": ("len_a", "len_b")})
    >>> fit.covariate_coefficient.round(1).values.tolist()
    [1.4]
    >>> fit.rating.round(1).values.tolist()
    [0.5, -0.0, -0.5]
    """
    opts = _options(ties, interval, scale, confidence_level, n_resamples, prior_sd, rng)
    standardize = check_bool("standardize_covariates", standardize_covariates)
    data = read_votes(votes, model_a=model_a, model_b=model_b, winner=winner,
                      outcomes=outcomes, cluster=cluster, drop_ties=ties == "drop",
                      covariates=covariates, standardize_covariates=standardize)
    opts = replace(opts, ties=_checks.resolve_ties(opts.ties, data.counts[:, 2].sum()))
    opts = replace(opts, n_resamples=_uncertainty.default_resamples(
        n_resamples, opts.interval, data.n_models))
    ref = _reference_index(data, reference)
    n_features = 0 if data.features is None else data.features.shape[1]
    _uncertainty.check_draws_memory(opts.n_resamples, data.n_models,
                                    data.n_models + 1 + n_features)
    _check_estimable(data, opts)
    design = Design(pair_i=data.pair_i, pair_j=data.pair_j, n_models=data.n_models,
                    davidson=opts.ties == "davidson", ridge=opts.ridge, row_pair=data.row_pair,
                    features=data.features)
    fit = _fit(data, design, opts, ref)
    details = _details(data, fit, opts, cluster, None if ref is None else data.models[ref])
    details["ties_requested"] = ties
    return _result(data, design, fit, opts, details)

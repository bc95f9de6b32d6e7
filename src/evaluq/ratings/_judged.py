r"""``fit_judged_ratings``: ratings from a judge's votes on every pair corrected by gold (human)
votes on some, by prediction-powered inference (PPI++) for Bradley-Terry / Davidson.

Every row is one comparison of ``model_a`` with ``model_b``; the ``judge`` column holds an LLM
judge's verdict on every row and the ``gold`` column a human verdict on the labelled rows (NaN /
None elsewhere). With :math:`\ell(\theta; x, y)` the negative log-likelihood of one vote (the
model of ``ties``), n labelled rows :math:`(x_i, y_i, \hat y_i)` and N unlabelled rows
:math:`(x^u_k, \hat y^u_k)`, the PPI++ M-estimator (Angelopoulos, Duchi and Zrnic 2023; for
Bradley-Terry Boyeau et al. 2024) is

.. math:: \hat\theta_\lambda = \arg\min_\theta\; \frac{\lambda}{N}\sum_k \ell(\theta; x^u_k,
   \hat y^u_k) + \frac{1}{n}\sum_i \big[\ell(\theta; x_i, y_i)
   - \lambda\,\ell(\theta; x_i, \hat y_i)\big].

The objective is linear in the counts of votes, so it is a Bradley-Terry / Davidson
log-likelihood on *weighted* counts per (pair, outcome) cell and ``_newton`` maximises it
unchanged. Its covariance is the sandwich :math:`H^{-1} V_\lambda H^{-1}`: ``H`` the mean
per-vote Hessian (Fisher information; outcome-free for ``"half"`` and ``"davidson"``), ``V``
the variance of the objective's gradient, from the labelled rows' rectified gradients and the
unlabelled rows' judge gradients (ppi_py's ``ppi_logistic_ci``, with ddof 0 as the HC0 sandwich of
``fit_ratings``), or summed per cluster (CR1 with ``fit_ratings``' factor): at lambda = 0 it is
``fit_ratings``' covariance on the gold votes exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sp
import xarray as xr
from scipy.sparse.csgraph import connected_components

from evaluq._dims import MODEL, MODEL_B, NAN_REASON, RESAMPLE
from evaluq._kernels import loewner_floor
from evaluq._validation import (
    RNGLike,
    check_choice,
    check_columns,
    check_confidence_level,
    check_int,
    check_rng,
    named_rows,
)
from evaluq._warn import warn
from evaluq.errors import EvaluqWarning
from evaluq.io import TableLike, as_table
from evaluq.judges._mean import WEAK_GAIN, check_lam
from evaluq.ratings import _checks, _newton, _uncertainty
from evaluq.ratings._newton import Design
from evaluq.ratings._result import NO_TIE_MODEL, RatingsResult, Scale, scale_of
from evaluq.ratings._votes import (
    TIE,
    Votes,
    _cells,
    _check_missing,
    _factorize,
    _model_codes,
    check_repeated_rows,
    outcome_codes,
    understood_labels,
)

TIES = _checks.TIES
SCALES = ("elo", "logit")
FEW_LABELS_PER_MODEL = 15
"""Below this many gold votes per model the result notes that the PPI++ interval may
under-cover (simulated arenas of 6 models: 95% intervals covered 0.93 with 50 gold votes,
0.942 with 100, 0.948 with 200; ``tests/ratings/test_judged_calibration.py``)."""
METHOD = ("PPI++ for Bradley-Terry (Angelopoulos, Duchi and Zrnic 2023; Boyeau et al. 2024): "
          "the judge's votes on every row, rectified by gold votes on the labelled rows")


# --- the votes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgedVotes:
    """Rows counted over cells. Pairs (P) as in :class:`~evaluq.ratings._votes.Votes`
    (``pair_i < pair_j``, outcomes relative to ``pair_i``); labelled cells (pair, gold
    outcome, judge outcome) with ``lab_count``; unlabelled cells (pair, judge outcome) with
    ``unl_count``; with clusters, sparse (G, cells) counts of each."""

    models: np.ndarray
    pair_i: np.ndarray
    pair_j: np.ndarray
    lab_pair: np.ndarray
    lab_gold: np.ndarray
    lab_judge: np.ndarray
    lab_count: np.ndarray
    unl_pair: np.ndarray
    unl_judge: np.ndarray
    unl_count: np.ndarray
    clusters: np.ndarray | None
    lab_clusters: sp.csr_matrix | None
    unl_clusters: sp.csr_matrix | None
    source: str

    @property
    def n_labelled(self) -> int:
        return int(self.lab_count.sum())

    @property
    def n_unlabelled(self) -> int:
        return int(self.unl_count.sum())

    def pair_counts(self, which: str) -> np.ndarray:
        """(P, 3) counts of ``"gold"`` (labelled), ``"judge_labelled"``,
        ``"judge_unlabelled"`` or ``"judge"`` (every row) outcomes."""
        p = self.pair_i.size
        if which == "judge":
            return self.pair_counts("judge_labelled") + self.pair_counts("judge_unlabelled")
        pair, out, count = {"gold": (self.lab_pair, self.lab_gold, self.lab_count),
                            "judge_labelled": (self.lab_pair, self.lab_judge, self.lab_count),
                            "judge_unlabelled": (self.unl_pair, self.unl_judge,
                                                 self.unl_count)}[which]
        return np.bincount(pair * 3 + out, count, 3 * p).reshape(p, 3)

    def as_votes(self, counts: np.ndarray) -> Votes:
        """``counts`` (P, 3) as :class:`Votes` (for ``_checks`` and per-model counts)."""
        return Votes(models=self.models, pair_i=self.pair_i, pair_j=self.pair_j, counts=counts,
                     clusters=None, cluster_counts=None, n_votes=int(counts.sum()),
                     n_ties_dropped=0, source=self.source)


def _verdicts(series: pd.Series, outcomes: Mapping[Any, str] | None, arg: str) -> np.ndarray:
    """Outcome codes of a verdict column (its missing values must be dropped first)."""
    # the labels of `outcomes`, then the default labels in any case, as fit_ratings reads them
    codes = outcome_codes(series, outcomes)
    unknown = np.isnan(codes)
    if unknown.any():
        bad = sorted(map(str, series[unknown].unique()))
        how = ("map them with `outcomes=`" if outcomes is None else "add them to `outcomes`")
        raise ValueError(
            f"`{arg}` column {series.name!r} holds label(s) {bad[:10]} that are not a verdict "
            f"(row(s) {named_rows(unknown, series.index)}); understood: "
            f"{understood_labels(outcomes)}; {how}")
    return codes.astype(np.int64)


def _check_verdict_columns(df: pd.DataFrame, judge: str, gold: str) -> np.ndarray:
    """Every row needs a judge verdict; returns the labelled rows (gold given)."""
    if judge == gold:
        raise ValueError(f"`judge` and `gold` name the same column {judge!r}: the judge's and "
                         f"the gold verdicts must be two columns of the same rows")
    labelled = df[gold].notna().to_numpy()
    no_judge = df[judge].isna().to_numpy()
    if (no_judge & labelled).any():
        raise ValueError(
            f"{int((no_judge & labelled).sum())} row(s) have a gold verdict but no judge vote "
            f"in `judge` column {judge!r} (row(s) {named_rows(no_judge & labelled, df.index)}): "
            f"PPI pairs every gold verdict with the judge's on the same row; judge them or "
            f"remove them")
    if no_judge.any():
        raise ValueError(
            f"`judge` column {judge!r} has {int(no_judge.sum())} missing verdict(s) at row(s) "
            f"{named_rows(no_judge, df.index)}: the judge must vote on every row; remove these "
            f"rows")
    if not labelled.any():
        raise ValueError(f"`gold` column {gold!r} has no gold verdict (every value is missing): "
                         f"at least two labelled rows are needed")
    if labelled.sum() < 2:
        raise ValueError(f"`gold` column {gold!r} has a single gold verdict: at least two "
                         f"labelled rows are needed for a variance")
    return labelled


def _cell_table(keys: np.ndarray, groups: np.ndarray | None,
                n_groups: int) -> tuple[np.ndarray, np.ndarray, sp.csr_matrix | None]:
    """Unique cell keys, their counts and (with clusters) the sparse (G, cells) counts."""
    cells, inverse, count = np.unique(keys, return_inverse=True, return_counts=True)
    by_cluster = None
    if groups is not None:
        by_cluster = sp.csr_matrix((np.ones(keys.size), (groups, inverse.ravel())),
                                   shape=(n_groups, cells.size))
        by_cluster.sum_duplicates()
    return cells, count.astype(np.float64), by_cluster


def read_judged_votes(votes: TableLike, *, model_a: str, model_b: str, judge: str, gold: str,
                      outcomes: Mapping[Any, str] | None, cluster: str | None) -> JudgedVotes:
    """Validate the vote table and count it over labelled and unlabelled cells."""
    df, source = as_table(votes, "votes")
    columns = {"model_a": model_a, "model_b": model_b, "judge": judge, "gold": gold,
               "cluster": cluster}
    for arg, col in columns.items():
        if col is not None and not isinstance(col, str):
            raise TypeError(f"`{arg}` must be a column name (str); got {col!r}")
    check_columns("`votes`", df.columns, columns)
    if len(df) == 0:
        raise ValueError("`votes` has no rows")
    _check_missing(df, {"model_a": model_a, "model_b": model_b, "cluster": cluster})
    labelled = _check_verdict_columns(df, judge, gold)
    code_j = _verdicts(df[judge], outcomes, "judge")
    code_g = np.zeros(len(df), dtype=np.int64)
    code_g[labelled] = _verdicts(df[gold][labelled], outcomes, "gold")
    a, b, models = _model_codes(df, model_a, model_b)
    check_repeated_rows(df, [judge, gold], (model_a, model_b), models, outcomes)
    m = models.size
    i, j, pair, out_j = _cells(a, b, code_j, m)
    _, _, _, out_g = _cells(a, b, code_g, m)
    g, labels, n_groups = None, None, 0
    if cluster is not None:
        codes, labels = _factorize(df[cluster], "cluster", cluster)
        g, n_groups = codes, labels.size
    lab_keys = (pair * 3 + out_g) * 3 + out_j
    lab, lab_n, lab_g = _cell_table(lab_keys[labelled], None if g is None else g[labelled],
                                    n_groups)
    unl, unl_n, unl_g = _cell_table((pair * 3 + out_j)[~labelled],
                                    None if g is None else g[~labelled], n_groups)
    return JudgedVotes(models=models, pair_i=i, pair_j=j, lab_pair=lab // 9,
                       lab_gold=(lab // 3) % 3, lab_judge=lab % 3, lab_count=lab_n,
                       unl_pair=unl // 3, unl_judge=unl % 3, unl_count=unl_n, clusters=labels,
                       lab_clusters=lab_g, unl_clusters=unl_g, source=source)


# --- the estimator -----------------------------------------------------------------------------


def objective_counts(data: JudgedVotes, lam: float, ties: str) -> np.ndarray:
    r"""The PPI++ objective as weighted counts (P, 3) per vote of all rows:
    :math:`(n + N)\,[\frac{\lambda}{N} C^u_{judge} + \frac{1}{n}(C_{gold} - \lambda C_{judge})]`
    (ties' cells zero under ``"drop"``: a tie's loss is 0)."""
    n, big_n = data.n_labelled, data.n_unlabelled
    c = (data.pair_counts("gold") - lam * data.pair_counts("judge_labelled")) / n
    if big_n:
        c = c + lam / big_n * data.pair_counts("judge_unlabelled")
    if ties == "drop":
        c[:, TIE] = 0.0
    return c * (n + big_n)


def hessian_counts(data: JudgedVotes, lam: float, ties: str) -> np.ndarray:
    r"""Counts (P, 3) whose Bradley-Terry / Davidson Hessian is the mean per-vote Hessian of
    the estimator: the judge's over every row plus the labelled rows' gold-minus-judge
    difference (the difference is 0 for ``"half"`` and ``"davidson"``, whose Hessian does not
    depend on the outcome: ppi_py's pooled Hessian); with :math:`\lambda = 0` the gold votes'
    alone (ppi_py's classical sandwich)."""
    gold, n = data.pair_counts("gold"), data.n_labelled
    if lam == 0.0:
        c = gold / n
    else:
        c = (data.pair_counts("judge") / (n + data.n_unlabelled)
             + (gold - data.pair_counts("judge_labelled")) / n)
    if ties == "drop":
        c = c.copy()
        c[:, TIE] = 0.0
    return c


def _solve(data: JudgedVotes, design: Design, lam: float, ties: str,
           x0: np.ndarray, tuning: bool = False) -> np.ndarray:
    """The PPI++ estimate at ``lam`` (one Newton fit on the weighted counts), or a ValueError
    saying that it has no finite minimum (``tuning``: the lambda = 1 fit that tunes lambda)."""
    counts = objective_counts(data, lam, ties)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x, ok, _ = _newton.newton(design, counts[None], x0[None])
    x = x[0]
    m = design.n_models
    spread = float(np.ptp(x[:m])) if np.isfinite(x[:m]).all() else np.inf
    tie_ok = not design.davidson or abs(float(x[m])) <= _uncertainty.RUNAWAY_LOGIT
    if ok[0] and spread <= _uncertainty.RUNAWAY_LOGIT and tie_ok:
        return x
    raise _no_minimum(data, x[:m], spread, tie_ok, lam, tuning)


def _no_minimum(data: JudgedVotes, theta: np.ndarray, spread: float, tie_ok: bool,
                lam: float, tuning: bool) -> ValueError:
    """The refusal of an objective without a finite minimum: what runs off, and the remedies
    that exist at this ``lam``."""
    what = []
    if spread > _uncertainty.RUNAWAY_LOGIT:
        order = np.argsort(theta) if np.isfinite(theta).all() else np.arange(theta.size)
        what.append(f"the logit strengths run off (spread {spread:.3g}; lowest and highest "
                    f"{[str(data.models[k]) for k in (order[0], order[-1])]})")
    if not tie_ok:
        gold_ties = int(data.pair_counts("gold")[:, TIE].sum())
        judge_ties = int(data.pair_counts("judge")[:, TIE].sum())
        what.append(f"Davidson's tie parameter runs off (the gold votes hold {gold_ties} tie(s) "
                    f"of {data.n_labelled}, the judge's {judge_ties} of "
                    f"{data.n_labelled + data.n_unlabelled})")
    if not what:
        what.append("the fit does not converge")
    where = ("lambda = 1, the fit that tunes lambda (ppi_py's)" if tuning
             else f"`lam`={lam:.4g}")
    remedies = ["collect more gold votes"]
    if lam > 0:
        remedies.append(f"pass a `lam` below {lam:.4g} (e.g. `lam=0.5`; `lam=0` is the gold "
                        f"votes alone)" if tuning or lam > 0.5 else
                        "pass `lam=0` (the gold votes alone)")
    tie_fix = ("use ties='half' (or 'drop')" if not tie_ok else "use ties='half'")
    return ValueError(
        f"`votes`: the judge-assisted (PPI++) objective at {where} has no finite minimum with "
        f"these {data.n_labelled} gold votes: {'; '.join(what)}. A model that (after the gold "
        f"correction) never wins or never loses, gold votes all of one kind (all for one side, "
        f"or all ties), or pairs whose gold votes contradict the judge's with few other votes, "
        f"cause this: {', '.join(remedies)}, or {tie_fix}")


@dataclass(frozen=True)
class Gradients:
    """Per-vote gradients of the log-likelihood (K,) per cell at the estimate: gold ``gy`` and
    judge ``gh`` on the labelled cells, judge ``gu`` on the unlabelled ones; the bread
    (inverse mean Hessian, plus ``J`` on the sum-zero null direction)."""

    gy: np.ndarray
    gh: np.ndarray
    gu: np.ndarray
    bread: np.ndarray


def _cell_gradients(design: Design, scores: tuple[np.ndarray, np.ndarray], pair: np.ndarray,
                    outcome: np.ndarray) -> np.ndarray:
    s_d, s_l = scores
    rows = sp.diags(s_d[pair, outcome]) @ design.incidence[pair]
    g = np.asarray(rows.todense()).reshape(pair.size, design.n_models)
    return np.concatenate([g, s_l[pair, outcome][:, None]], axis=1) if design.davidson else g


def gradients(data: JudgedVotes, design: Design, x: np.ndarray, lam: float,
              ties: str) -> Gradients:
    """The :class:`Gradients` at ``x`` (for the tuning of ``lam`` and the covariance)."""
    s_d, s_l = _uncertainty.cell_scores(design, x)
    if ties == "drop":
        s_d, s_l = s_d.copy(), s_l.copy()
        s_d[:, TIE] = s_l[:, TIE] = 0.0
    scores = (s_d, s_l)
    _, hess = _newton.gradient_hessian(design, x[None], hessian_counts(data, lam, ties)[None])
    if np.linalg.eigvalsh(hess[0]).min() <= 0.0:
        raise ValueError("`ties`='drop': the estimator's Hessian is not positive definite (the "
                         "gold votes' decisive share differs too much from the judge's on a "
                         "sparse pair); use ties='half' or 'davidson'")
    return Gradients(gy=_cell_gradients(design, scores, data.lab_pair, data.lab_gold),
                     gh=_cell_gradients(design, scores, data.lab_pair, data.lab_judge),
                     gu=_cell_gradients(design, scores, data.unl_pair, data.unl_judge),
                     bread=np.linalg.inv(hess[0]))


def _centred(g: np.ndarray, w: np.ndarray) -> np.ndarray:
    return g - (w @ g) / w.sum()


def _wcov(a: np.ndarray, b: np.ndarray, w: np.ndarray, ddof: int) -> np.ndarray:
    """Weighted (co)variance of rows ``a`` and ``b`` (already centred), ``w`` the counts."""
    return (a * w[:, None]).T @ b / (w.sum() - ddof)


@dataclass(frozen=True)
class Meat:
    r"""The variance of the objective's gradient is the quadratic
    :math:`V(\lambda) = V_{yy} - \lambda (V_{yh} + V_{hy}) + \lambda^2 V_{hh}`."""

    v_yy: np.ndarray
    v_yh: np.ndarray
    v_hh: np.ndarray
    kind: str

    def at(self, lam: float) -> np.ndarray:
        return self.v_yy - lam * (self.v_yh + self.v_yh.T) + lam ** 2 * self.v_hh


def iid_meat(data: JudgedVotes, grads: Gradients) -> Meat:
    r"""Independent rows: :math:`V(\lambda) = \mathrm{cov}_0(g_y - \lambda g_h)/n +
    \lambda^2 \mathrm{cov}_0(g^u_h)/N` (each group centred at its mean, ddof 0: the HC0
    sandwich of :func:`evaluq.fit_ratings`, which it equals at :math:`\lambda = 0`, where the
    gold scores sum to 0; ppi_py's ``ppi_logistic_ci`` divides by n - 1 and N - 1)."""
    w, wu, n, big_n = data.lab_count, data.unl_count, data.n_labelled, data.n_unlabelled
    gy, gh = _centred(grads.gy, w), _centred(grads.gh, w)
    v_hh = _wcov(gh, gh, w, 0) / n
    if big_n > 1:
        gu = _centred(grads.gu, wu)
        v_hh = v_hh + _wcov(gu, gu, wu, 0) / big_n
    return Meat(v_yy=_wcov(gy, gy, w, 0) / n, v_yh=_wcov(gy, gh, w, 0) / n, v_hh=v_hh,
                kind="PPI++ sandwich (independent votes, HC0: ddof 0 per group)")


def cluster_meat(data: JudgedVotes, grads: Gradients) -> Meat:
    r"""Clusters: each cluster's summed influence
    :math:`a_g - \lambda b_g`, :math:`a_g = \frac1n \sum_{i \in g} (g_{y,i} - \bar g_y)`,
    :math:`b_g = \frac1n \sum_{i \in g} (g_{h,i} - \bar g_h) - \frac1N \sum_{k \in g}
    (g^u_{h,k} - \bar g^u_h)`; :math:`V(\lambda) = \sum_g (a_g - \lambda b_g)
    (a_g - \lambda b_g)'`, without the small-sample factor (:func:`cr1_factor`)."""
    assert data.lab_clusters is not None
    assert data.unl_clusters is not None
    w, wu, n, big_n = data.lab_count, data.unl_count, data.n_labelled, data.n_unlabelled
    a = np.asarray(data.lab_clusters @ _centred(grads.gy, w)) / n
    b = np.asarray(data.lab_clusters @ _centred(grads.gh, w)) / n
    if big_n:
        b = b - np.asarray(data.unl_clusters @ _centred(grads.gu, wu)) / big_n
    if a.shape[0] < 2:
        raise ValueError("`cluster` has a single cluster: a cluster-robust covariance needs at "
                         "least two")
    return Meat(v_yy=a.T @ a, v_yh=a.T @ b, v_hh=b.T @ b,
                kind="PPI++ sandwich, CR1 over clusters")


def cr1_factor(data: JudgedVotes, lam: float, ties: str, n_free: int) -> float:
    r"""The CR1 small-sample factor :math:`\frac{G}{G-1}\,\frac{N-1}{N-k}` of
    :func:`evaluq.fit_ratings` (statsmodels' ``cov_type="cluster"``), k free parameters, G and
    N the clusters and rows that enter the objective: at :math:`\lambda = 0` the labelled rows
    (under ``"drop"`` those with a decisive gold verdict), else every row (under ``"drop"``
    those with a decisive verdict), so that :math:`\lambda = 0` is exactly
    :func:`evaluq.fit_ratings`' CR1 on the gold votes."""
    assert data.lab_clusters is not None
    assert data.unl_clusters is not None
    keep = ties != "drop"
    lab = keep | (data.lab_gold != TIE) | ((lam > 0) & (data.lab_judge != TIE))
    unl = (lam > 0) & (keep | (data.unl_judge != TIE))
    rows = float(data.lab_count[lab].sum() + data.unl_count[unl].sum())
    per_cluster = (np.asarray(data.lab_clusters[:, np.flatnonzero(lab)].sum(axis=1)).ravel()
                   + np.asarray(data.unl_clusters[:, np.flatnonzero(unl)].sum(axis=1)).ravel())
    groups = int((per_cluster > 0).sum())
    return groups / max(groups - 1, 1) * (rows - 1) / max(rows - n_free, 1)


def _trace(grads: Gradients, anchor: np.ndarray, matrix: np.ndarray) -> float:
    half = anchor @ grads.bread
    return float(np.trace(half @ matrix @ half.T))


def tune_lambda(data: JudgedVotes, grads: Gradients, anchor: np.ndarray, clustered: bool,
                ) -> float:
    r"""The power-tuned :math:`\lambda`, minimising the trace of the strengths' covariance
    (in the stated identifiability; the tie parameter left out), clipped to [0, 1].

    Independent votes, ppi_py's ``_calc_lam_glm``: :math:`\lambda =
    \mathrm{tr}(A H^{-1} \mathrm{cov}_0(g_y, g_h)^{sym} H^{-1} A') / [(1 + n/N)\,
    \mathrm{tr}(A H^{-1} \mathrm{var}_1(g_h \cup g^u_h) H^{-1} A')]` (the judge's gradient
    variance pooled over all rows); clusters: the exact minimiser
    :math:`\mathrm{tr}(A H^{-1} V_{yh}^{sym} H^{-1} A') / \mathrm{tr}(A H^{-1} V_{hh} H^{-1}
    A')` of the CR1 covariance.
    """
    if clustered:
        meat = cluster_meat(data, grads)
        num, den = _trace(grads, anchor, 0.5 * (meat.v_yh + meat.v_yh.T)), _trace(
            grads, anchor, meat.v_hh)
    else:
        w, wu, n, big_n = data.lab_count, data.unl_count, data.n_labelled, data.n_unlabelled
        gy, gh = _centred(grads.gy, w), _centred(grads.gh, w)
        cyh = _wcov(gy, gh, w, 0)
        pooled = np.concatenate([grads.gh, grads.gu])
        pw = np.concatenate([w, wu])
        pc = _centred(pooled, pw)
        num = _trace(grads, anchor, 0.5 * (cyh + cyh.T))
        den = (1.0 + n / big_n) * _trace(grads, anchor, _wcov(pc, pc, pw, 1))
    if not den > 0:
        return 0.0
    return float(np.clip(num / den, 0.0, 1.0))


# --- the bootstrap -----------------------------------------------------------------------------


def _onehot(pair: np.ndarray, outcome: np.ndarray, n_pairs: int) -> sp.csr_matrix:
    """(cells, 3 P): each cell's (pair, outcome) column."""
    return sp.csr_matrix((np.ones(pair.size), (np.arange(pair.size), pair * 3 + outcome)),
                         shape=(pair.size, 3 * n_pairs))


def _resampled_cells(data: JudgedVotes, n: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Counts of the labelled (n, C_l) and unlabelled (n, C_u) cells in ``n`` resamples: the
    labelled and the unlabelled rows resampled apart (multinomial over their cells), or
    whole clusters drawn with replacement."""
    if data.lab_clusters is None or data.unl_clusters is None:
        lab = rng.multinomial(data.n_labelled, data.lab_count / data.n_labelled, size=n)
        unl = (rng.multinomial(data.n_unlabelled, data.unl_count / data.n_unlabelled, size=n)
               if data.n_unlabelled else np.zeros((n, 0)))
        return lab.astype(np.float64), unl.astype(np.float64)
    groups = data.lab_clusters.shape[0]
    drawn = rng.integers(0, groups, size=(n, groups))
    weights = np.bincount((drawn + (np.arange(n) * groups)[:, None]).ravel(),
                          minlength=n * groups).reshape(n, groups).astype(np.float64)
    return (np.asarray((data.lab_clusters.T @ weights.T).T),
            np.asarray((data.unl_clusters.T @ weights.T).T))


def resampled_objective_counts(data: JudgedVotes, lam: float, ties: str, n: int,
                               rng: np.random.Generator) -> np.ndarray:
    """:func:`objective_counts` of ``n`` bootstrap resamples (n, P, 3); a resample without
    two labelled rows (possible when whole clusters are drawn) is NaN."""
    p = data.pair_i.size
    lab, unl = _resampled_cells(data, n, rng)
    n_lab, n_unl = lab.sum(axis=1), unl.sum(axis=1)
    gold = np.asarray((_onehot(data.lab_pair, data.lab_gold, p).T @ lab.T).T)
    judge = np.asarray((_onehot(data.lab_pair, data.lab_judge, p).T @ lab.T).T)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = (gold - lam * judge) / n_lab[:, None]
        if lam > 0.0:
            judge_u = np.asarray((_onehot(data.unl_pair, data.unl_judge, p).T @ unl.T).T)
            c = c + lam * judge_u / n_unl[:, None]
    c = (c * (n_lab + n_unl)[:, None]).reshape(n, p, 3)
    if ties == "drop":
        c[..., TIE] = 0.0
    c[n_lab < 2] = np.nan
    return c


def bootstrap(data: JudgedVotes, design: Design, x_hat: np.ndarray, lam: float, ties: str,
              n: int, rng: np.random.Generator) -> np.ndarray:
    """Parameters (n, K) of ``n`` resamples at the data's ``lam``, fitted in blocks (one
    batched Newton fit per block, warm-started at the estimate); a ValueError when some
    resample has no finite estimate."""
    width = max(3 * data.pair_i.size, design.n_params ** 2, data.lab_count.size,
                data.unl_count.size)
    block = max(1, min(n, _uncertainty.BLOCK_ELEMENTS // width))
    out = np.empty((n, design.n_params))
    for begin in range(0, n, block):
        size = min(block, n - begin)
        counts = resampled_objective_counts(data, lam, ties, size, rng)
        empty = ~np.isfinite(counts).all(axis=(1, 2))
        counts[empty] = 0.0
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            x, ok, _ = _newton.newton(design, counts, np.broadcast_to(x_hat, (size, x_hat.size)))
        m = design.n_models
        bad = empty | ~ok | ~np.isfinite(x).all(axis=1)
        bad |= np.ptp(np.nan_to_num(x[:, :m]), axis=1) > _uncertainty.RUNAWAY_LOGIT
        if design.davidson:
            bad |= np.abs(np.nan_to_num(x[:, m])) > _uncertainty.RUNAWAY_LOGIT
        if bad.any():
            raise ValueError(
                f"`interval`='bootstrap': {int(bad.sum())} of the first {begin + size} "
                f"resamples have no finite judge-assisted estimate (too few labelled rows or "
                f"clusters drawn, or a model that never wins or never loses in them); use "
                f"interval='sandwich' or label more rows")
        out[begin:begin + size] = x
    return out


# --- the public function -----------------------------------------------------------------------


INTERVALS = ("sandwich", "bootstrap")


@dataclass(frozen=True)
class _Options:
    ties: str
    interval: str
    lam: float | None
    scale: Scale
    level: float
    n_resamples: int
    rng: np.random.Generator


def _options(ties: Any, interval: Any, lam: Any, scale: Any, confidence_level: Any,
             n_resamples: Any, rng: RNGLike) -> _Options:
    check_choice("ties", ties, TIES)
    check_choice("interval", interval, INTERVALS)
    check_choice("scale", scale, SCALES)
    lam_value = None if lam is None else check_lam(lam)
    return _Options(ties=ties, interval=interval, lam=lam_value, scale=scale_of(scale),
                    level=check_confidence_level(confidence_level),
                    n_resamples=_uncertainty.DEFAULT_RESAMPLES if n_resamples is None
                    else check_int("n_resamples", n_resamples, minimum=2),
                    rng=check_rng(rng))


def _gold_connects(data: JudgedVotes, ties: str) -> bool:
    """Whether the gold votes alone link every model (the gold-only fit exists as a scale)."""
    return bool(gold_components(data, ties).max() == 0)


def gold_components(data: JudgedVotes, ties: str) -> np.ndarray:
    """The group (m,) of every model in the graph of the gold votes (under ``"drop"``: of
    the decisive ones); a model without a gold vote is a group of its own."""
    counts = data.pair_counts("gold")
    if ties == "drop":
        counts[:, TIE] = 0.0
    present = counts.sum(axis=1) > 0
    m = data.models.size
    graph = sp.csr_matrix((np.ones(int(present.sum())),
                           (data.pair_i[present], data.pair_j[present])), shape=(m, m))
    return np.asarray(connected_components(graph, directed=False)[1])


def gold_basis(design: Design, components: np.ndarray) -> np.ndarray:
    """An orthonormal basis (K, r) of the parameters the gold votes inform: the strengths'
    differences within each group of :func:`gold_components` (with one group the free
    parameters, :func:`evaluq.ratings._uncertainty.free_basis`), and the other parameters."""
    groups = np.zeros((int(components.max()) + 1, design.n_params))
    groups[components, np.arange(design.n_models)] = 1.0
    return np.asarray(sla.null_space(groups))


def _check_estimable(data: JudgedVotes, opts: _Options) -> None:
    judge = data.pair_counts("judge")
    if opts.ties == "drop":
        judge[:, TIE] = 0.0
    _checks.check_connected(data.as_votes(judge))
    if opts.ties == "davidson":
        _checks.check_ties(data.as_votes(judge + data.pair_counts("gold")))
    if opts.lam is not None and opts.lam > 0 and data.n_unlabelled < 2:
        raise ValueError(f"`lam`={opts.lam:g} weighs the judge's unlabelled votes, but there "
                         f"are {data.n_unlabelled} unlabelled row(s) (at least 2 needed); "
                         f"use lam=0 (gold only)")


def _reference_index(models: np.ndarray, reference: Any) -> int | None:
    if reference is None:
        return None
    hits = np.flatnonzero(models == reference)
    if hits.size == 0:
        raise ValueError(f"`reference` must be one of the models; got {reference!r} (models: "
                         f"{[str(m) for m in models[:10]]}{' ...' if models.size > 10 else ''})")
    return int(hits[0])


def _anchor(design: Design, ref: int | None, no_gold: np.ndarray) -> np.ndarray:
    """The linear map (K, K) from sum-zero parameters to the stated identifiability: sum-zero
    over the models with gold votes, or the reference at 0; the rows of the models without a
    gold vote are 0 (they get no rating, and no weight where lambda is tuned)."""
    m = design.n_models
    anchor = np.eye(design.n_params)
    if ref is not None:
        anchor[:m, ref] -= 1.0
    elif no_gold.any():
        anchor[:m, :m] -= np.outer(np.ones(m), ~no_gold) / (~no_gold).sum()
    anchor[np.flatnonzero(no_gold)] = 0.0
    return anchor


NO_GOLD = ("model(s) {models} have no gold vote: PPI++ cannot correct the judge's votes on "
           "them, so they have no rating (NaN; the judge's alone would be biased, with an "
           "interval that ignores the bias); label some of their votes")


def models_without_gold(data: JudgedVotes, ties: str) -> np.ndarray:
    """The models (mask) without a gold vote (under ``"drop"``: without a decisive one)."""
    gold = data.pair_counts("gold")
    if ties == "drop":
        gold[:, TIE] = 0.0
    n = gold.sum(axis=1)
    per_model = (np.bincount(data.pair_i, n, data.models.size)
                 + np.bincount(data.pair_j, n, data.models.size))
    return np.asarray(per_model == 0)


@dataclass(frozen=True)
class _Fit:
    x: np.ndarray
    cov: np.ndarray
    lam: float
    tuned: bool
    gain: float
    gain_reason: str
    kind: str
    n_clusters: int
    draws: np.ndarray | None = None


def _meat(data: JudgedVotes, grads: Gradients) -> Meat:
    return cluster_meat(data, grads) if data.clusters is not None else iid_meat(data, grads)


def _lambda(data: JudgedVotes, design: Design, opts: _Options, anchor: np.ndarray,
            x0: np.ndarray) -> tuple[float, np.ndarray]:
    """The lambda to use and a start for its fit: given, 0 without unlabelled rows, or tuned
    at the lambda = 1 estimate (ppi_py's ``ppi_logistic_pointestimate``)."""
    if opts.lam is not None:
        return opts.lam, x0
    if data.n_unlabelled < 2:
        return 0.0, x0
    x1 = _solve(data, design, 1.0, opts.ties, x0, tuning=True)
    grads = gradients(data, design, x1, 1.0, opts.ties)
    return tune_lambda(data, grads, anchor[:design.n_models], data.clusters is not None), x1


GOLD_MODEL_BASED = ("; the gold part model-based (inverse information) where every gold "
                    "vote's score is 0")


def _gold_information(data: JudgedVotes, design: Design, x: np.ndarray,
                      ties: str) -> np.ndarray:
    """The model-based variance (K, K) of the gold votes' mean gradient at ``x``,
    :math:`H_{gold} / n` (the mean per-vote Hessian of the gold votes over n)."""
    _, hess = _newton.gradient_hessian(design, x[None], hessian_counts(data, 0.0, ties)[None])
    return np.asarray(hess[0]) / data.n_labelled


def gold_blind(data: JudgedVotes, design: Design, x: np.ndarray, lam: float, ties: str,
               components: np.ndarray) -> int:
    """The number of directions in which every gold vote's score is 0 at the gold-only
    estimate (gold votes that are all ties between models of equal strength under ``"half"``:
    no sandwich or bootstrap sees them vary); where the gold votes do not link every model,
    within each group they link (``components``), at the gold-only estimate of each (the
    offsets between the groups kept from ``x``); 0 when there is no finite gold-only
    estimate."""
    gold = replace(design, components=components)
    try:
        x_gold = x if lam == 0.0 else _solve(data, gold, 0.0, ties, x)
        grads = gradients(data, gold, x_gold, 0.0, ties)
    except ValueError:
        return 0
    info = _gold_information(data, gold, x_gold, ties)
    _, blind = loewner_floor(iid_meat(data, grads).v_yy, info, gold_basis(design, components),
                             _uncertainty.NO_INFORMATION)
    return int(blind.shape[1])


def _floored(meat: Meat, factor: float, info: np.ndarray, n_blind: int,
             basis: np.ndarray) -> tuple[Meat, np.ndarray]:
    r"""``meat`` times the small-sample ``factor``, its gold part :math:`V_{yy}` raised to the
    model-based ``info`` in the ``n_blind`` directions where it is smallest relative to it
    (:func:`gold_blind`; at :math:`\lambda = 0` exactly those where every gold score is 0, as
    :func:`evaluq.fit_ratings` does); returns the directions raised (K, r)."""
    scaled = Meat(v_yy=factor * meat.v_yy, v_yh=factor * meat.v_yh, v_hh=factor * meat.v_hh,
                  kind=meat.kind)
    if not n_blind:
        return scaled, np.zeros((meat.v_yy.shape[0], 0))
    v_yy, blind = loewner_floor(scaled.v_yy, info, basis, 1.0, lowest=n_blind)
    return replace(scaled, v_yy=0.5 * (v_yy + v_yy.T)), blind


def _covariance(data: JudgedVotes, design: Design, grads: Gradients, x: np.ndarray,
                lam: float, ties: str, few: bool, n_blind: int, anchor: np.ndarray,
                components: np.ndarray) -> tuple[np.ndarray, str, float, np.ndarray | None]:
    """The PPI++ sandwich (K, K) at ``lam``, its kind, the gain over gold-only and the
    model-based covariance added where the gold scores are all 0 (None if nowhere)."""
    basis = _uncertainty.free_basis(design.n_params, design.n_models)
    informed = gold_basis(design, components)
    factor = 1.0 if data.clusters is None else cr1_factor(data, lam, ties, design.n_params - 1)
    info = _gold_information(data, design, x, ties)
    meat, blind = _floored(_meat(data, grads), factor, info, n_blind, informed)
    cov = grads.bread @ meat.at(lam) @ grads.bread
    kind, added = meat.kind, None
    if blind.shape[1]:
        warn(f"the gold votes' scores are all 0 at the estimate in {blind.shape[1]} "
             f"direction(s) of the ratings (gold votes that are all ties between models of "
             f"the same estimated strength): the PPI++ sandwich (and a bootstrap) would give "
             f"their gold part variance 0; there the gold votes' model-based variance (the "
             f"inverse of their information) is used", EvaluqWarning)
        kind += GOLD_MODEL_BASED
        added = grads.bread @ blind @ blind.T @ grads.bread
    if few:
        iid = grads.bread @ _floored(iid_meat(data, grads), 1.0, info, n_blind,
                                     informed)[0].at(lam) @ grads.bread
        cov, raised = loewner_floor(cov, iid, basis, 1.0)
        kind += ", floored at the independent-votes one (few clusters)" if raised.size else ""
    a = anchor[:design.n_models]
    gain = (_trace(grads, a, meat.at(0.0)) / _trace(grads, a, meat.at(lam))
            if _gold_connects(data, ties) else np.nan)
    return 0.5 * (cov + cov.T), kind, float(gain), added


def _fit(data: JudgedVotes, design: Design, opts: _Options, anchor: np.ndarray) -> _Fit:
    few = (data.lab_clusters is not None and _uncertainty.check_clusters(
        data.lab_clusters.shape[0], design.n_params - 1, "judge-assisted ratings",
        bootstrap=opts.interval == "bootstrap"))
    start = np.maximum(data.pair_counts("judge") + data.pair_counts("gold"), 0.0)
    x0 = _newton.start(design, start[None])[0]
    lam, x0 = _lambda(data, design, opts, anchor, x0)
    gold_ok = _gold_connects(data, opts.ties)
    if lam == 0.0 and not gold_ok:
        raise ValueError("`lam` is 0 (gold votes only: "
                         + ("as given" if opts.lam is not None else "the tuned value")
                         + "), but the `gold` votes do not link every model (some model has no "
                         "gold vote, or the gold votes fall into disconnected groups); label "
                         "more rows, or pass a `lam` above 0")
    x = _solve(data, design, lam, opts.ties, x0)
    grads = gradients(data, design, x, lam, opts.ties)
    components = gold_components(data, opts.ties)
    n_blind = gold_blind(data, design, x, lam, opts.ties, components)
    cov, kind, gain, added = _covariance(data, design, grads, x, lam, opts.ties, few, n_blind,
                                         anchor, components)
    reason = "" if gold_ok else "the gold votes alone do not link every model"
    groups = 0 if data.lab_clusters is None else data.lab_clusters.shape[0]
    draws = None
    if opts.interval == "bootstrap":
        draws = bootstrap(data, design, x, lam, opts.ties, opts.n_resamples, opts.rng)
        kind = ("PPI++ bootstrap (" + ("whole clusters" if groups else "labelled and "
                "unlabelled votes resampled apart") + f", lambda fixed at {lam:.4g})")
        if added is not None:     # directions every resample's gold votes fit alike
            draws += _uncertainty.normal_draws(np.zeros_like(x), added, opts.n_resamples,
                                               opts.rng)
            kind += GOLD_MODEL_BASED
        cov = np.cov(draws, rowvar=False)
    return _Fit(x=x, cov=cov, lam=lam, tuned=opts.lam is None, gain=float(gain),
                gain_reason=reason, kind=kind, n_clusters=groups, draws=draws)


def _identifiability(scale: Scale, ref: Any, no_gold: bool = False) -> str:
    if ref is None and no_gold:
        return (f"sum-zero over the models with gold votes: their logit strengths sum to 0 "
                f"(their mean rating is {scale.offset:g})")
    if ref is None:
        return (f"sum-zero: the models' logit strengths sum to 0 (the mean rating is "
                f"{scale.offset:g})")
    return f"reference: model {ref!r} is fixed at logit strength 0 (rating {scale.offset:g})"


def _details(data: JudgedVotes, fit: _Fit, opts: _Options, names: dict[str, Any],
             ref: Any, no_gold: np.ndarray) -> dict[str, Any]:
    n, big_n = data.n_labelled, data.n_unlabelled
    notes = ([NO_GOLD.format(models=[str(k) for k in data.models[no_gold][:10]])]
             if no_gold.any() else [])
    if fit.gain_reason:
        notes.append(f"no gain over gold-only: {fit.gain_reason}")
    elif fit.gain < WEAK_GAIN:
        notes.append(f"weak judge: the interval is about as wide as gold-only's (gain "
                     f"{fit.gain:.2f} < {WEAK_GAIN:g})")
    if opts.lam is None and big_n < 2:
        notes.append("fewer than 2 unlabelled rows: lambda = 0 (gold only)")
    if fit.lam > 0 and n < FEW_LABELS_PER_MODEL * data.models.size:
        notes.append(f"few gold votes ({n / data.models.size:.1f} per model): the PPI++ "
                     f"interval may cover less than its level (0.93 for 95% with 8 per model "
                     f"in simulations)")
    draws = ("normal approximation of the PPI++ sandwich" if opts.interval == "sandwich"
             else ("cluster" if names["cluster"] else "vote") + " bootstrap of the PPI++ fit")
    return {"ties": opts.ties, "interval": opts.interval, "scale": opts.scale.name,
            "cluster": names["cluster"], "covariance_kind": fit.kind,
            "identifiability": _identifiability(opts.scale, ref, bool(no_gold.any())),
            "prior": "none", "models_without_gold": [str(k) for k in data.models[no_gold]],
            "method": METHOD, "judge": names["judge"], "gold": names["gold"],
            "lam": fit.lam, "lam_tuned": fit.tuned, "n_labelled": n, "n_unlabelled": big_n,
            "n_votes": n + big_n, "n_ties_dropped": 0, "n_models": int(data.models.size),
            "n_pairs": int(data.pair_i.size), "n_clusters": fit.n_clusters,
            "effective_labels": n * fit.gain, "gain": fit.gain, "notes": "; ".join(notes),
            "n_resamples": opts.n_resamples, "iterations": 0,
            "draws": draws, "source": data.source,
            "reference": "" if ref is None else str(ref)}


def _tie_arrays(x: np.ndarray, cov: np.ndarray, draws: np.ndarray, m: int,
                opts: _Options, davidson: bool) -> tuple[xr.DataArray, ...]:
    if not davidson:
        reason = {NAN_REASON: NO_TIE_MODEL.format(ties=opts.ties)}
        nan = xr.DataArray(np.nan, name="tie_parameter", attrs=reason)
        nan_draws = xr.DataArray(np.full(draws.shape[0], np.nan), dims=(RESAMPLE,),
                                 attrs=reason, name="tie_parameter")
        return nan, nan.rename("tie_se"), nan_draws
    nu = float(np.exp(x[m]))
    formula = ("Davidson (1970): P(i beats j) = pi_i / D, P(tie) = nu sqrt(pi_i pi_j) / D, "
               "D = pi_i + pi_j + nu sqrt(pi_i pi_j); nu estimated by PPI++")
    se = (float(np.std(np.exp(draws[:, m]), ddof=1)) if opts.interval == "bootstrap"
          else nu * float(np.sqrt(cov[m, m])))
    return (xr.DataArray(nu, name="tie_parameter", attrs={"model": formula}),
            xr.DataArray(se, name="tie_se"),
            xr.DataArray(np.exp(draws[:, m]), dims=(RESAMPLE,), name="tie_parameter"))


def _counts(data: JudgedVotes) -> dict[str, np.ndarray]:
    judge = data.as_votes(data.pair_counts("judge")).per_model()
    gold = data.as_votes(data.pair_counts("gold")).per_model()
    return {"n_votes": judge["n_votes"], "n_labelled": gold["n_votes"],
            "judge_wins": judge["wins"], "gold_wins": gold["wins"]}


def _without_gold(arrays: dict[str, xr.DataArray], x: np.ndarray, cov: np.ndarray,
                  no_gold: np.ndarray, reason: str) -> None:
    """NaN, with the reason, for the models without a gold vote (in place; ``no_gold`` (m,),
    ``x`` (K,) and ``cov`` (K, K) the anchored parameters)."""
    idx = np.flatnonzero(no_gold)
    x[idx] = np.nan
    cov[idx] = np.nan
    cov[:, idx] = np.nan
    for name, array in arrays.items():
        if name == "covariance":
            array[{MODEL: no_gold}] = np.nan
            array[{MODEL_B: no_gold}] = np.nan
        else:
            array[{MODEL: no_gold}] = np.nan
        array.attrs[NAN_REASON] = reason


def _result(data: JudgedVotes, design: Design, fit: _Fit, anchor: np.ndarray, opts: _Options,
            details: dict[str, Any], no_gold: np.ndarray) -> RatingsResult:
    m, sc = design.n_models, opts.scale
    if fit.draws is None:
        draws = _uncertainty.normal_draws(fit.x, fit.cov, opts.n_resamples, opts.rng)
        draws[:, :m] -= draws[:, :m].mean(axis=1, keepdims=True)
    else:
        draws = fit.draws
    x, cov, draws = anchor @ fit.x, anchor @ fit.cov @ anchor.T, draws @ anchor.T
    coords = {MODEL: data.models}
    attrs = {"scale": details["scale"], "identifiability": details["identifiability"]}
    cov_r = sc.factor ** 2 * cov[:m, :m]
    draw_attrs = {**attrs, "higher_is_better": 1, "n_resamples": opts.n_resamples,
                  "replication": details["draws"], "how": "Bradley-Terry (PPI++)",
                  "metric": "rating", "confidence_level": opts.level}
    tie, tie_se, tie_draws = _tie_arrays(x, cov, draws, m, opts, design.davidson)
    arrays = {
        "rating": xr.DataArray(sc.to_rating(x[:m]), dims=(MODEL,), coords=coords,
                               name="rating", attrs=dict(attrs)),
        "se": xr.DataArray(np.sqrt(np.clip(np.diag(cov_r), 0.0, None)), dims=(MODEL,),
                           coords=coords, name="se", attrs=dict(attrs)),
        "covariance": xr.DataArray(cov_r, dims=(MODEL, MODEL_B),
                                   coords={**coords, MODEL_B: data.models}, name="covariance",
                                   attrs=dict(attrs))}
    if no_gold.any():
        _without_gold(arrays, x, cov, no_gold,
                      NO_GOLD.format(models=[str(k) for k in data.models[no_gold][:10]]))
    return RatingsResult(
        **arrays,
        draws=xr.DataArray(sc.to_rating(draws[:, :m][:, ~no_gold]), dims=(RESAMPLE, MODEL),
                           coords={RESAMPLE: np.arange(opts.n_resamples),
                                   MODEL: data.models[~no_gold]},
                           name="rating", attrs=draw_attrs),
        tie_parameter=tie, tie_se=tie_se, tie_draws=tie_draws,
        counts=xr.Dataset({k: (MODEL, v) for k, v in _counts(data).items()}, coords=coords),
        confidence_level=opts.level, details=details, _params=x, _param_cov=cov)


def fit_judged_ratings(
    votes: TableLike,
    *,
    model_a: str = "model_a",
    model_b: str = "model_b",
    judge: str = "judge",
    gold: str = "gold",
    outcomes: Mapping[Any, str] | None = None,
    ties: Literal["auto", "davidson", "half", "drop"] = "auto",
    lam: float | None = None,
    cluster: str | None = None,
    interval: Literal["sandwich", "bootstrap"] = "sandwich",
    confidence_level: float = 0.95,
    n_resamples: int | None = None,
    scale: Literal["elo", "logit"] = "elo",
    reference: Any = None,
    rng: RNGLike = 0,
) -> RatingsResult:
    r"""Ratings from a judge's votes on every comparison, corrected by gold (human) votes on
    some of them: prediction-powered inference (PPI++) for Bradley-Terry / Davidson.

    An LLM judge picks the better answer in every row; people (the gold) did so in a random
    subset. The judge alone is biased (it may favour some models); the gold votes alone are
    few. PPI++ (Angelopoulos, Duchi and Zrnic 2023; for Bradley-Terry, Boyeau et al. 2024)
    fits the ratings to the judge's votes and removes the judge's bias with the gold votes:

    .. math:: \hat\theta_\lambda = \arg\min_\theta\; \frac{\lambda}{N}\sum_{k=1}^{N}
       \ell(\theta; \hat y^u_k) + \frac{1}{n}\sum_{i=1}^{n} \big[\ell(\theta; y_i)
       - \lambda\,\ell(\theta; \hat y_i)\big]

    with :math:`\ell` the negative log-likelihood of one vote under the ``ties`` model of
    :func:`evaluq.fit_ratings`, :math:`y_i` / :math:`\hat y_i` the gold and the judge's
    verdicts on the n labelled rows and :math:`\hat y^u_k` the judge's on the N unlabelled
    rows (``"drop"``: a tie's loss is 0). For every :math:`\lambda` the estimate is consistent
    for the ratings the *gold* votes define, whatever the judge's bias, if the labelled rows
    are a random subset of the rows. :math:`\lambda = 0` is the gold-only fit; the default
    tunes :math:`\lambda` at the :math:`\lambda = 1` estimate to minimise the trace of the
    strengths' covariance (ppi_py's ``_calc_lam_glm``, clipped to [0, 1]).

    The covariance is the sandwich :math:`\Sigma = H^{-1} V(\lambda) H^{-1}`, ``H`` the mean
    per-vote Hessian of the log-likelihood over all rows (with :math:`\lambda = 0` over the
    gold votes), :math:`V(\lambda) = \mathrm{cov}_0(g_y - \lambda g_h)/n + \lambda^2
    \mathrm{cov}_0(g^u_h)/N` (``g`` per-vote gradients: gold ``y``, judge ``h``, unlabelled
    ``u``; each group centred at its mean, ddof 0): at :math:`\lambda = 0` exactly
    :func:`evaluq.fit_ratings`' HC0 sandwich on the gold votes (same estimate, same
    covariance); ppi_py's ``ppi_logistic_ci`` (Bradley-Terry without ties is a logistic
    regression on the +1 / -1 design) divides each group by n - 1 and N - 1 instead, SEs at
    most :math:`\sqrt{n / (n - 1)}` wider. With ``cluster``, :math:`V(\lambda)` is the sum
    over clusters of each cluster's summed influence (labelled and unlabelled rows of a prompt
    together) times :func:`evaluq.fit_ratings`' CR1 factor
    :math:`\frac{G}{G-1}\frac{N_r-1}{N_r-k}` (k free parameters; G clusters and
    :math:`N_r` rows entering the objective: at :math:`\lambda = 0` the gold votes, decisive
    ones under ``"drop"``, as :func:`evaluq.fit_ratings` counts them; else every row), so
    :math:`\lambda = 0` is its CR1 exactly; :math:`\lambda` minimises that covariance's trace
    exactly.
    Directions in which every gold vote's score is 0 at the gold-only estimate (gold votes
    that are all ties between equally rated models under ``"half"``: no sandwich or bootstrap
    sees them vary) give :math:`V_{yy}` its model-based value there, :math:`H_{gold} / n` (the
    inverse information; at :math:`\lambda = 0` exactly :func:`evaluq.fit_ratings`' rule),
    with an ``EvaluqWarning``; the bootstrap adds that variance to its draws. Where the gold
    votes do not link every model, so it is within each group of models they link.
    Intervals are normal: ``rating +- z se``. The gain over gold-only is
    :math:`\mathrm{tr}\,\Sigma(0) / \mathrm{tr}\,\Sigma(\lambda)` (same ``H``), the effective
    number of labels n times the gain.

    A model without a gold vote (under ``ties="drop"``: without a decisive one) cannot be
    corrected: its rating, SE and interval are NaN with a ``nan_reason`` (its rating would be
    the judge's, biased, with an interval that ignores the bias), it has no draws, and the
    sum-zero constraint is over the models with gold votes (``details["identifiability"]``,
    ``details["models_without_gold"]`` and ``details["notes"]`` say so); as
    :func:`evaluq.judged_means` does for a model with too few gold labels.

    Parameters
    ----------
    votes : pandas.DataFrame or path
        One row per comparison (a CSV / TSV / JSON lines / parquet path is read by
        :func:`evaluq.io.read_table`).
    model_a, model_b : str
        Columns naming the two models compared.
    judge : str
        Column of the judge's verdict on every row (``"model_a"`` / ``"a"``, ``"model_b"`` /
        ``"b"``, ``"tie"``, or labels mapped by ``outcomes``); a missing verdict is refused.
    gold : str
        Column of the gold (human) verdict, missing (NaN / None) on the unlabelled rows; the
        same labels as ``judge``. At least two labelled rows.
    outcomes : mapping, optional
        More verdict labels, to ``"model_a"`` / ``"model_b"`` / ``"tie"``, for both columns
        (added to the default labels, as :func:`evaluq.fit_ratings`).
    ties : {"auto", "davidson", "half", "drop"}
        The tie model (as :func:`evaluq.fit_ratings`; ``"auto"``: Davidson's when the judge's
        or the gold votes hold a tie, else plain Bradley-Terry); Davidson's tie parameter is
        estimated by PPI++ too.
    lam : float, optional
        :math:`\lambda` in [0, 1] (0: gold only; 1: PPI); default None: tuned.
    cluster : str, optional
        Column of the rows' clusters (prompt, voter): CR1 cluster-robust covariance, or a
        bootstrap of whole clusters. As in :func:`evaluq.fit_ratings`, no more clusters than
        free parameters are refused, and with few the covariance is at least the
        independent-votes PPI++ sandwich in every direction (with an ``EvaluqWarning``).
    interval : {"sandwich", "bootstrap"}
        ``"sandwich"``: normal intervals from the PPI++ sandwich; ``"bootstrap"``: the
        labelled and the unlabelled rows resampled apart (or whole clusters drawn), every
        resample refitted at the data's :math:`\lambda` (one batched Newton fit per block),
        percentile intervals.
    confidence_level : float
        Level of the intervals, in (0, 1).
    n_resamples : int, optional
        Bootstrap resamples, or draws from the sandwich's normal approximation (the
        ``draws`` for ranks and tiers). Default: as :func:`evaluq.fit_ratings` (1,000
        resamples, or for the sandwich enough draws for the tiers' tests, 1,000 to 20,000).
    scale : {"elo", "logit"}
        Ratings in Elo points (``400 / ln(10) * theta + 1000``) or logits.
    reference : model label, optional
        Fix this model's logit strength at 0 instead of the sum-zero constraint (``lam`` is
        tuned in the stated identifiability).
    rng : int, Generator, SeedSequence or None
        Seed of the bootstrap or of the normal draws (default 0: a fit is reproducible).

    Returns
    -------
    RatingsResult
        As :func:`evaluq.fit_ratings` (``rating``, ``se``, ``ci``, ``covariance``,
        ``win_probability`` and its interval, ``tie_parameter``, ``draws`` for
        :func:`evaluq.rank_distribution`, :func:`evaluq.leaderboard` and
        :func:`evaluq.significance_groups`); ``details`` adds ``lam``, ``lam_tuned``,
        ``n_labelled``, ``n_unlabelled``, ``gain`` (NaN when the gold votes alone do not link
        every model), ``effective_labels``, ``method``, ``models_without_gold`` and
        ``notes`` (a weak judge: gain below 1.25; models without a gold vote); ``counts``
        holds each model's ``n_votes``, ``n_labelled``, ``judge_wins`` and ``gold_wins``.

    Raises
    ------
    ValueError
        A gold verdict without a judge vote, a missing judge verdict, fewer than two labelled
        rows, an unknown verdict label (naming ``judge`` or ``gold``), a model against itself,
        a disconnected comparison graph, ``ties="davidson"`` without any tie, ``lam`` above 0
        with fewer than two unlabelled rows, a zero ``lam`` whose gold votes do not link every
        model, an objective without a finite minimum (or, with ``interval="bootstrap"``, a
        resample without one), no more clusters than free parameters.
    CubeError
        A named column is missing.

    See Also
    --------
    fit_ratings : the ratings from one column of votes.
    ppi_mean : PPI++ for one mean.

    References
    ----------
    A. N. Angelopoulos, J. C. Duchi and T. Zrnic (2023), PPI++: Efficient prediction-powered
    inference, arXiv:2311.01453. P. Boyeau, A. N. Angelopoulos, N. Yosef, J. Malik and
    M. I. Jordan (2024), AutoEval done right: using synthetic data for model evaluation,
    arXiv:2403.07008.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import evaluq as eq
    >>> rng = np.random.default_rng(1)
    >>> theta = {"x": 0.6, "y": 0.0, "z": -0.6}
    >>> pairs = rng.choice([("x", "y"), ("x", "z"), ("y", "z")], size=3000)
    >>> d = np.array([theta[a] - theta[b] for a, b in pairs])
    >>> human = np.where(rng.random(3000) < 1 / (1 + np.exp(-d)), "a", "b")
    >>> judge = np.where(rng.random(3000) < 0.8, human, np.where(pairs[:, 0] == "z", "a", "b"))
    >>> votes = pd.DataFrame({"model_a": pairs[:, 0], "model_b": pairs[:, 1], "judge": judge,
    ...                       "gold": np.where(rng.random(3000) < 0.1, human, None)})
    >>> fit = eq.ratings.fit_judged_ratings(votes, ties="drop", scale="logit")
    >>> fit.rating.round(2).values.tolist()
    [0.61, 0.07, -0.68]
    >>> round(fit.details["lam"], 2), round(fit.details["gain"], 2), fit.details["n_labelled"]
    (0.58, 1.76, 300)
    >>> round(fit.details["effective_labels"])
    529

    The judge alone (it favours ``z``) compresses the ratings:

    >>> judge_only = eq.fit_ratings(votes, winner="judge", ties="drop", scale="logit")
    >>> judge_only.rating.round(2).values.tolist()
    [0.2, -0.02, -0.17]
    """
    opts = _options(ties, interval, lam, scale, confidence_level, n_resamples, rng)
    data = read_judged_votes(votes, model_a=model_a, model_b=model_b, judge=judge, gold=gold,
                             outcomes=outcomes, cluster=cluster)
    n_ties = (data.pair_counts("judge") + data.pair_counts("gold"))[:, TIE].sum()
    opts = replace(opts, ties=_checks.resolve_ties(opts.ties, n_ties))
    opts = replace(opts, n_resamples=_uncertainty.default_resamples(
        n_resamples, opts.interval, int(data.models.size)))
    ref = _reference_index(data.models, reference)
    _uncertainty.check_draws_memory(opts.n_resamples, data.models.size, data.models.size + 1)
    _check_estimable(data, opts)
    design = Design(pair_i=data.pair_i, pair_j=data.pair_j, n_models=int(data.models.size),
                    davidson=opts.ties == "davidson", ridge=0.0)
    no_gold = models_without_gold(data, opts.ties)
    if ref is not None and no_gold[ref]:
        raise ValueError(f"`reference` {data.models[ref]!r} has no gold vote: its rating is not "
                         f"estimable (PPI++ cannot correct the judge's votes on it); pick a "
                         f"model with gold votes")
    anchor = _anchor(design, ref, no_gold)
    fit = _fit(data, design, opts, anchor)
    names = {"judge": judge, "gold": gold, "cluster": cluster}
    details = _details(data, fit, opts, names, None if ref is None else data.models[ref],
                       no_gold)
    details["ties_requested"] = ties
    return _result(data, design, fit, anchor, opts, details, no_gold)

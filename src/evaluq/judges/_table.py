r"""``judged_means``: every model of a per-item judge table, corrected by its gold labels, with
paired differences over shared items, the transport check and draws for ranks."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._dims import (
    CI,
    CI_DIFFERENCE,
    DIFFERENCE,
    ESTIMATE,
    FLAGGED,
    GAIN,
    LAMBDA,
    METHOD,
    MODEL,
    MODEL_B,
    N_EFFECTIVE,
    N_GOLD,
    N_JUDGED,
    N_SHARED,
    NAN_REASON,
    P_HOLM,
    P_VALUE,
    RESAMPLE,
    SE,
    SE_DIFFERENCE,
    SE_SHIFT,
    SHIFT,
    Z,
)
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import few_clusters, holm, loewner_floor, percentile_interval
from evaluq._results import ResultBase
from evaluq._validation import (
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_real,
    check_rng,
)
from evaluq._warn import warn
from evaluq.errors import EvaluqWarning
from evaluq.judges._data import JudgeTable, read_judge_table
from evaluq.judges._estimates import (
    ModelFits,
    chain_fits,
    gold_only_fits,
    ppi_fits,
    rogan_gladen_fits,
)
from evaluq.judges._mean import (
    MAX_CHAIN_LEVELS,
    MAX_LEVELS,
    N_DRAWS,
    NO_SPREAD,
    WEAK_GAIN,
    check_lam,
    choose_method,
    gold_levels,
    is_binary,
    levels_of,
    zero_variance_reason,
)
from evaluq.judges._transport import TransportWarning, transport_test

TABLE_METHODS = ("classical", "ppi", "ppi++", "chain-rule", "rogan-gladen")
"""The methods of :func:`judged_means`."""
CLASSICAL = "classical"
CHAIN_GOLD_ONLY = "chain-rule gold-only"
"""``per_model["method"]`` of a model the transport check flagged: the fallback to its gold
labels alone, their mean (the PPI family) or, for the chain rule, its posterior with one
judge level (the uniform Dirichlet prior: not the plain mean)."""


@dataclass(repr=False)
class JudgedMeansResult(ResultBase):
    """The result of :func:`judged_means`.

    Attributes
    ----------
    estimate, se
        Per model (``model``): the corrected mean and its SE (posterior mean and SD for the
        chain rule; cluster-robust with ``cluster``).
    per_model
        Dataset over ``model``: ``lam``, ``n_gold``, ``n_judged``, ``n_effective``, ``gain``,
        ``method`` (the estimator used; for a model the transport check flagged its gold
        labels alone: ``"classical"``, their mean, or with the chain rule
        ``"chain-rule gold-only"``, the chain rule's posterior from the gold labels with its
        uniform prior, (k + 1) / (n + 2) for k ones in n 0/1 labels).
    differences
        Dataset over (``model``, ``model_b``): ``difference`` (model minus model_b), its
        ``se_difference``, ``z``, two-sided ``p_value``, ``p_holm`` (Holm over the pairs),
        ``ci_difference`` and ``n_shared`` (items both models have).
    transport
        Dataset over ``model``: ``shift``, ``se_shift``, ``z``, ``p_value``, ``p_holm``,
        ``flagged`` (None when not run).
    covariance
        Covariance of the models' estimates (``model``, ``model_b``).
    draws
        Draws (``resample``, ``model``) from the normal approximation with that covariance
        (their mean is the estimate), for :func:`evaluq.rank_distribution`,
        :func:`evaluq.leaderboard`, :func:`evaluq.significance_groups`,
        :func:`evaluq.pairwise_differences`.
    method, reason, notes
        The method asked or chosen and why; what the user must know.
    confidence_level
        The level of :attr:`interval`.
    posterior
        The chain rule's posterior draws of each model's mean (model, draw); None for the PPI
        family.
    distribution
        None: the draws for ranks are :attr:`draws`.
    """

    estimate: xr.DataArray
    se: xr.DataArray
    per_model: xr.Dataset
    differences: xr.Dataset
    transport: xr.Dataset | None
    covariance: xr.DataArray
    draws: xr.DataArray
    method: str
    reason: str
    notes: tuple[str, ...]
    confidence_level: float
    posterior: np.ndarray | None = None
    distribution: np.ndarray | None = field(default=None)

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """Per-model intervals (``model``, ``ci_bound``): normal (estimate +- z se) for the
        PPI family, the equal-tailed interval of the posterior draws for the chain rule.

        Parameters
        ----------
        confidence_level
            Level in (0, 1); default the level the result was made with.
        """
        level = check_confidence_level(self.confidence_level if confidence_level is None
                                       else confidence_level)
        est, se = self.estimate.values, self.se.values
        if self.posterior is not None:
            ends, kind = percentile_interval(self.posterior, level, skipna=True), "percentile"
            ends = np.where(np.isnan(est)[:, None], np.nan, ends)
        else:
            half = stats.norm.ppf(0.5 + level / 2.0) * se
            ends, kind = np.stack([est - half, est + half], axis=-1), "normal"
        ci = interval_from_bounds(ends, dims=(MODEL,), coords={MODEL: self.estimate[MODEL]},
                                  kind=kind, confidence_level=level, name=CI)
        if NAN_REASON in self.estimate.attrs:
            ci.attrs[NAN_REASON] = self.estimate.attrs[NAN_REASON]
        return ci

    def to_dataset(self) -> xr.Dataset:
        """Everything over ``model`` / ``model_b``: estimate, se, ci, the per-model columns,
        the differences and the transport check (its variables prefixed ``transport_``)."""
        ds = xr.Dataset({ESTIMATE: self.estimate, SE: self.se,
                         CI: self.confidence_interval()})
        ds = ds.merge(self.per_model).merge(self.differences)
        if self.transport is not None:
            ds = ds.merge(self.transport.rename({k: f"transport_{k}"
                                                 for k in self.transport.data_vars}))
        ds.attrs = {"method": self.method, "reason": self.reason, "notes": list(self.notes)}
        return ds

    def to_dataframe(self) -> Any:
        """One row per model: estimate, se, lower, upper and the per-model columns."""
        ci = self.confidence_interval()
        df = xr.Dataset({ESTIMATE: self.estimate, SE: self.se,
                         "lower": ci.isel(ci_bound=0, drop=True),
                         "upper": ci.isel(ci_bound=1, drop=True)}).merge(
            self.per_model).to_dataframe()
        if self.transport is not None:
            df[FLAGGED] = self.transport[FLAGGED].to_series()
        parts = {ESTIMATE: self.estimate, SE: self.se, "lower": ci, "upper": ci,
                 **dict(self.per_model.data_vars)}
        df.attrs["nan_reasons"] = {str(name): var.attrs["nan_reason"]
                                   for name, var in parts.items() if "nan_reason" in var.attrs}
        return df

    def _fields(self) -> dict[str, Any]:
        return {"method": self.method, "estimate": self.estimate, "lower": self.lower,
                "upper": self.upper, "differences": self.differences[DIFFERENCE],
                "draws": self.draws, "notes": self.notes}


def _fit(t: JudgeTable, method: str, lam: float | None, n_draws: int,
         rng: np.random.Generator) -> tuple[ModelFits, np.ndarray | None]:
    """The method's fits of every model, and the gold values (the chain rule's) or None."""
    if method == "rogan-gladen":
        for name, values in (("judge", t.judge), ("gold", t.gold[t.labelled])):
            if not is_binary(values):
                raise ValueError(f"`{name}`: method='rogan-gladen' needs 0/1 {name} "
                                 f"scores; got the values {np.unique(values)[:6].tolist()}")
        return rogan_gladen_fits(t), None
    if method != "chain-rule":
        return ppi_fits(t, method, lam), None
    values = gold_levels(t.gold[t.labelled])
    levels = levels_of(t.judge, MAX_CHAIN_LEVELS)
    if levels is None or values.size > MAX_CHAIN_LEVELS:
        raise ValueError(f"method='chain-rule' needs discrete scores (at most "
                         f"{MAX_CHAIN_LEVELS} distinct values each); the judge has "
                         f"{'more' if levels is None else levels.size} and the gold labels "
                         f"{values.size}: use method='ppi++'")
    return chain_fits(t, levels, values, n_draws, rng), values


RELATIONS = ("judge-given-gold", "gold-given-judge")
"""What the transport check compares between models: the judge's scores given the gold
labels (a lenient judge; the default), or the gold labels given the judge's scores (a
calibration that carries over, as cje-eval's transport audit)."""


def _transport(t: JudgeTable, method: str, alpha: float | None,
               relation: str) -> dict[str, np.ndarray] | None:
    """The transport check on the labelled rows (None for gold-only or when switched off)."""
    if method == "classical" or alpha is None:
        return None
    lab = t.labelled
    given, response = (t.gold[lab], t.judge[lab]) if relation == RELATIONS[0] else (
        t.judge[lab], t.gold[lab])
    levels = levels_of(given, MAX_LEVELS)
    codes = None if levels is None else np.searchsorted(levels, given)
    return transport_test(t.model[lab], given, response, len(t.models), codes,
                          0 if levels is None else levels.size, alpha)


def _fall_back(t: JudgeTable, fits: ModelFits, fallback: ModelFits,
               flagged: np.ndarray) -> ModelFits:
    """Flagged models take the gold-only fit (estimate, variance, rows' influence, draws)."""
    rows = flagged[t.model]
    draws = None
    if fits.draws is not None and fallback.draws is not None:
        draws = np.where(flagged[:, None], fallback.draws, fits.draws)
    return ModelFits(estimate=np.where(flagged, fallback.estimate, fits.estimate),
                     var=np.where(flagged, fallback.var, fits.var),
                     var_classical=fits.var_classical,
                     lam=np.where(flagged, 0.0, fits.lam),
                     phi=np.where(rows, fallback.phi, fits.phi), draws=draws)


DENSE_CELLS = 20_000_000
"""Above this many (model, unit) cells the influence functions are summed as a sparse matrix
(models with items of their own); below, as a dense one (BLAS)."""


def _gram(rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n_rows: int,
          n_cols: int) -> np.ndarray:
    """:math:`AA^T` of the (n_rows, n_cols) matrix summing ``weights`` at (rows, cols): dense
    for up to :data:`DENSE_CELLS` cells, sparse (scipy) beyond."""
    if n_rows * n_cols <= DENSE_CELLS:
        a = np.bincount(rows * n_cols + cols, weights=weights,
                        minlength=n_rows * n_cols).reshape(n_rows, n_cols)
        return a @ a.T
    from scipy import sparse

    sp = sparse.csr_matrix((weights, (rows, cols)), shape=(n_rows, n_cols))
    return np.asarray((sp @ sp.T).toarray())


def _clustered_gram(t: JudgeTable, phi: np.ndarray) -> np.ndarray:
    r""":math:`\frac{G}{G-1}\Phi\Phi^T` (the factor only with clusters), :math:`\Phi` the
    influence functions ``phi`` of the rows summed per model and unit (M, G)."""
    n_models, n_groups = len(t.models), t.n_groups
    cov = _gram(t.model, t.group, phi, n_models, n_groups)
    if t.clustered:
        cov *= n_groups / max(n_groups - 1, 1)
    return cov


def design_effect(t: JudgeTable, phi: np.ndarray) -> np.ndarray:
    """Each model's design effect: the clustered variance of its estimate (influence
    functions ``phi``, CR1) over the independent-rows one, floored at 1 (the larger of the
    two variances is used: with few clusters the cluster-robust variance is itself noisy and
    biased down, Angrist and Pischke 2009, sec. 8.2); 1 without clusters."""
    return np.maximum(_raw_design_effect(t, phi), 1.0)


def _raw_design_effect(t: JudgeTable, phi: np.ndarray) -> np.ndarray:
    if not t.clustered:
        return np.ones(len(t.models))
    n_models, n_groups = len(t.models), t.n_groups
    iid = np.bincount(t.model, weights=phi**2, minlength=n_models)
    sums = np.bincount(t.model * n_groups + t.group, weights=phi, minlength=n_models * n_groups)
    clustered = np.sum(sums.reshape(n_models, n_groups) ** 2, axis=1)
    clustered *= n_groups / max(n_groups - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(iid > 0, clustered / iid, 1.0)


def _covariance(t: JudgeTable, fits: ModelFits, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    r"""Covariance of the models' estimates and each model's design effect.

    :math:`C = \frac{G}{G-1}\Phi\Phi^T` (the factor only with clusters), :math:`\Phi` the
    influence functions summed per model and unit (M, G), gives the correlations. The
    variances are the independent-rows ones (the influence functions' for the PPI family
    (``exact``), the posterior's for the chain rule) times the design effect
    (:func:`design_effect`, at least 1): without clusters, :math:`C`'s diagonal itself.
    """
    cov = _clustered_gram(t, fits.phi)
    diag = np.diag(cov).copy()
    deff = design_effect(t, fits.phi)
    iid = np.bincount(t.model, weights=fits.phi**2, minlength=len(t.models))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (iid if exact else fits.var) * deff
        sd = np.sqrt(diag)
        rho = np.where(np.outer(sd, sd) > 0, cov / np.outer(sd, sd), 0.0)
    np.fill_diagonal(rho, 1.0)
    scale = np.sqrt(np.where(np.isnan(fits.var), np.nan, var))
    return rho * np.outer(scale, scale), deff


def check_clusters(t: JudgeTable) -> None:
    """Refuse clusters too few to identify the covariance of the models' estimates: the
    influence functions summed over G clusters give a covariance of rank at most G - 1 (each
    model's sums add up to 0), so with no more clusters than models some paired differences
    would get variance 0."""
    n_models = len(t.models)
    if t.clustered and t.n_groups <= n_models:
        raise ValueError(
            f"`cluster` has {t.n_groups} cluster(s), too few for the covariance of "
            f"{n_models} models' estimates: a cluster-robust covariance from G clusters has "
            f"rank at most G - 1 = {t.n_groups - 1}, so some paired differences would get "
            f"variance 0. Cluster by a finer unit with more than {n_models} clusters, or leave "
            f"out `cluster` (independent items)")


def _floor_few_clusters(t: JudgeTable, fits: ModelFits, cov: np.ndarray, deff: np.ndarray,
                        exact: bool) -> tuple[np.ndarray, np.ndarray, str | None]:
    """With few clusters (:func:`evaluq._kernels.few_clusters`) every direction's variance
    (each paired difference's too, not only each model's) is at least the independent-rows
    one (:func:`evaluq._kernels.loewner_floor`); the design effects follow the variances.
    Returns the covariance, the design effects and a note (None when not few)."""
    if not t.clustered or not few_clusters(t.n_groups, len(t.models)):
        return cov, deff, None
    iid, _ = _covariance(replace(t, group=t.item, n_groups=t.n_items, clustered=False), fits,
                         exact)
    var, var_iid = np.diag(cov), np.diag(iid)
    ok = np.isfinite(var) & np.isfinite(var_iid) & (var_iid > 0)
    out = cov.copy()
    if ok.sum() >= 2:
        out[np.ix_(ok, ok)], _ = loewner_floor(cov[np.ix_(ok, ok)], iid[np.ix_(ok, ok)],
                                               np.eye(int(ok.sum())), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = np.where(ok, deff * np.diag(out) / var, deff)
    return out, deff, (
        f"`cluster` has {t.n_groups} clusters for {len(t.models)} model(s) (fewer than "
        f"{max(30, 4 * len(t.models))}): a cluster-robust covariance from few clusters is noisy "
        "and biased down; every paired difference's variance, as each model's, is at least "
        "the independent-rows one")


def _shared_items(t: JudgeTable) -> np.ndarray:
    """Items each pair of models shares (M, M)."""
    n_models = len(t.models)
    if t.model.size == n_models * t.n_items:       # every model has every item (no repeats)
        return np.full((n_models, n_models), t.n_items, dtype=np.int64)
    shared = _gram(t.model, t.item, np.ones(t.model.size), n_models, t.n_items)
    return np.rint(shared).astype(np.int64)


def _differences(models: np.ndarray, est: np.ndarray, cov: np.ndarray, shared: np.ndarray,
                 level: float) -> xr.Dataset:
    """Paired differences (model minus model_b), their SEs, z, p-values (Holm over the
    unordered pairs) and normal intervals."""
    diff = est[:, None] - est[None, :]
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2.0 * cov
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt(np.maximum(var, 0.0))
        z = np.where(se > 0, diff / se, np.nan)
    np.fill_diagonal(z, np.nan)
    p = 2.0 * stats.norm.sf(np.abs(z))
    upper = np.triu_indices(len(models), k=1)
    p_holm = np.full_like(p, np.nan)
    ok = ~np.isnan(p[upper])
    if ok.any():
        adjusted = np.full(ok.size, np.nan)
        adjusted[ok] = holm(p[upper][ok])
        p_holm[upper] = adjusted
        p_holm.T[upper] = adjusted
    half = stats.norm.ppf(0.5 + level / 2.0) * se
    coords: dict[Hashable, Any] = {MODEL: models, MODEL_B: models}
    dims = (MODEL, MODEL_B)
    ci = interval_from_bounds(np.stack([diff - half, diff + half], axis=-1), dims=dims,
                              coords=coords, kind="normal", confidence_level=level,
                              name=CI_DIFFERENCE)
    return xr.Dataset({DIFFERENCE: (dims, diff), SE_DIFFERENCE: (dims, se), Z: (dims, z),
                       P_VALUE: (dims, p), P_HOLM: (dims, p_holm), CI_DIFFERENCE: ci,
                       N_SHARED: (dims, shared)}, coords=coords)


def _normal_draws(models: np.ndarray, est: np.ndarray, cov: np.ndarray, n_draws: int,
                  rng: np.random.Generator) -> xr.DataArray:
    """Draws (resample, model) from N(est, cov), models with a NaN estimate or variance left
    out; the standard normal noise is centred over the draws, so their mean is the estimate
    (the ``observed`` value of the rank and pairwise functions)."""
    ok = ~np.isnan(est) & ~np.isnan(np.diag(cov))
    sub = np.nan_to_num(cov[np.ix_(ok, ok)])
    eigval, eigvec = np.linalg.eigh((sub + sub.T) / 2.0)
    root = eigvec * np.sqrt(np.clip(eigval, 0.0, None))
    noise = rng.standard_normal((n_draws, int(ok.sum())))
    noise -= noise.mean(axis=0)              # centred: the draws' mean is the estimate
    values = est[ok] + noise @ root.T
    return xr.DataArray(values, dims=(RESAMPLE, MODEL), coords={MODEL: models[ok]},
                        name="judged_mean", attrs={
                            "description": "draws of each model's judge-corrected mean from "
                                           "the normal approximation N(estimate, covariance) "
                                           "(covariance over shared items)",
                            "higher_is_better": 1})


def _validate(method: str | None, lam: Any, transport_alpha: Any, confidence_level: Any,
              n_draws: Any) -> tuple[float, int]:
    if method is not None:
        check_choice("method", method, TABLE_METHODS)
    if lam is not None:
        check_lam(lam)
        if method not in (None, "ppi++"):
            raise ValueError(f"`lam` is PPI++'s lambda: give it with method='ppi++' (or "
                             f"None); got method={method!r}")
    if transport_alpha is not None:
        check_real("transport_alpha", transport_alpha, low=0.0, high=1.0, low_inclusive=False,
                   high_inclusive=False)
    return check_confidence_level(confidence_level), check_int("n_draws", n_draws, minimum=2)


def _check_transport(t: JudgeTable, fits: ModelFits, method: str, alpha: float | None,
                     relation: str, values: np.ndarray | None, n_draws: int,
                     rng: np.random.Generator
                     ) -> tuple[ModelFits, xr.Dataset | None, list[str]]:
    """Run the transport check; flagged models fall back to gold-only, with a warning."""
    check = _transport(t, method, alpha, relation)
    if check is None:
        return fits, None, []
    flagged = check[FLAGGED]
    ds = xr.Dataset({k: (MODEL, v) for k, v in check.items()}, coords={MODEL: t.models})
    ds.attrs["description"] = (
        f"transport check ({relation}): each model's "
        f"{'judge scores' if relation == RELATIONS[0] else 'gold labels'} against their "
        "relation to the other models' on the labelled items (the shift, its SE, z, p, Holm "
        f"over the models; flagged at alpha={alpha}, step-down)")
    ds.attrs["relation"] = relation
    if not flagged.any():
        return fits, ds, []
    fallback = gold_only_fits(t, values, n_draws, rng)
    which = [f"{m} (shift {s:+.3g}, se {e:.3g}, Holm p {p:.2g})" for m, s, e, p in zip(
        t.models[flagged], check[SHIFT][flagged], check[SE_SHIFT][flagged],
        check[P_HOLM][flagged], strict=True)]
    how = (f"method {CLASSICAL!r}: the mean of the gold labels" if values is None else
           f"method {CHAIN_GOLD_ONLY!r}: the chain rule's posterior from the gold labels "
           "alone, with its uniform prior ((k + 1) / (n + 2) for k ones in n 0/1 labels)")
    note = (f"the judge relates to the gold labels differently for {', '.join(which)} than for "
            f"the other models: their estimates use their gold labels only ({how})")
    warn(note, TransportWarning)
    return _fall_back(t, fits, fallback, flagged), ds, [note]


def _per_model(t: JudgeTable, fits: ModelFits, var: np.ndarray, methods: np.ndarray
               ) -> xr.Dataset:
    n_gold = np.bincount(t.model[t.labelled], minlength=len(t.models))
    n_judged = np.bincount(t.model, minlength=len(t.models))
    gold_deff = design_effect(t, ppi_fits(t, "classical", None).phi)  # like with like
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = np.where(var > 0, fits.var_classical * gold_deff / var, np.nan)
    out = xr.Dataset({LAMBDA: (MODEL, fits.lam), N_GOLD: (MODEL, n_gold),
                      N_JUDGED: (MODEL, n_judged), N_EFFECTIVE: (MODEL, n_gold * gain),
                      GAIN: (MODEL, gain), METHOD: (MODEL, methods)},
                     coords={MODEL: t.models})
    reasons = {LAMBDA: "lambda is PPI's weight on the judge: none for the chain rule or "
                       "gold-only, and not identified for a judge whose scores are all equal",
               GAIN: "no gain over gold-only where the model has too few gold labels or its "
                     "estimate has no variance",
               N_EFFECTIVE: "no effective number of labels where the gain is NaN"}
    for name, reason in reasons.items():
        if np.isnan(out[name].values).any():
            out[name].attrs["nan_reason"] = reason
    return out


def _estimable(t: JudgeTable, fits: ModelFits) -> tuple[ModelFits, str | None]:
    """Models with fewer than two gold labels get NaN, models whose variance estimate is 0 a
    NaN variance (:func:`_without_spread`), with the reasons."""
    n_gold = np.bincount(t.model[t.labelled], minlength=len(t.models))
    few = n_gold < 2
    if not few.any():
        return _without_spread(t, fits)
    fits.estimate = np.where(few, np.nan, fits.estimate)
    fits.var = np.where(few, np.nan, fits.var)
    if fits.draws is not None:
        fits.draws = np.where(few[:, None], np.nan, fits.draws)
    fits, no_spread = _without_spread(t, fits)
    return fits, "; ".join(filter(None, [
        f"model(s) {t.models[few].tolist()} have fewer than two gold labels: the judge's "
        "correction (and any spread) cannot be estimated for them", no_spread]))


def _without_spread(t: JudgeTable, fits: ModelFits) -> tuple[ModelFits, str | None]:
    """Models whose variance estimate is 0 (every gold label alike, lambda 0) keep their
    estimate and get a NaN variance, with the reason (no draws, no paired test)."""
    with np.errstate(invalid="ignore"):
        zero = np.isfinite(fits.estimate) & (
            fits.var <= (NO_SPREAD * np.maximum(1.0, np.abs(fits.estimate))) ** 2)
    if not zero.any():
        return fits, None
    fits.var = np.where(zero, np.nan, fits.var)
    gold = t.gold[t.labelled & zero[t.model]]
    return fits, f"model(s) {t.models[zero].tolist()}: " + zero_variance_reason(gold)


def _widened(draws: np.ndarray | None, est: np.ndarray, deff: np.ndarray) -> np.ndarray | None:
    """Posterior draws widened about the mean by the square root of the design effect."""
    if draws is None:
        return None
    return est[:, None] + np.sqrt(deff)[:, None] * (draws - est[:, None])


def _notes(t: JudgeTable, per_model: xr.Dataset, extra: list[str]) -> tuple[str, ...]:
    weak = per_model[GAIN].values < WEAK_GAIN
    notes = list(extra)
    if weak.any():
        notes.append(f"weak judge for {int(weak.sum())} model(s) {t.models[weak][:10].tolist()}: "
                     f"the correction is worth fewer than {WEAK_GAIN} gold labels per label "
                     "(see `gain`), so their intervals are barely narrower than gold-only")
    return tuple(notes)


def judged_means(table: Any, *, model: str = "model", item: str = "item",
                 judge: str = "judge", gold: str = "gold", method: str | None = None,
                 lam: float | None = None, cluster: str | None = None,
                 transport_alpha: float | None = 0.05,
                 transport_relation: str = "judge-given-gold", confidence_level: float = 0.95,
                 n_draws: int = N_DRAWS, rng: Any = None) -> JudgedMeansResult:
    r"""Every model's mean gold score from a judge's scores and a few gold labels, with the
    paired differences between models over shared items.

    One row per (model, item): the judge's score, and the gold (human) score where the item
    was labelled (NaN elsewhere). Per model, the estimators of :func:`ppi_mean` (gold-only,
    PPI, PPI++ with a lambda tuned per model, the chain rule; default chosen from the data as
    there), every model at once.

    **Paired differences.** Each estimate is linear in its rows to first order,
    :math:`\hat\theta_m - \theta_m \approx \sum_i \phi_{mi}` (the influence function: see
    :mod:`evaluq.judges._estimates`); two models graded on the same items have correlated
    estimates, with covariance :math:`C_{ab} = \sum_g \Phi_{ag}\Phi_{bg}` where
    :math:`\Phi_{mg}` sums :math:`\phi_{mi}` over the items of unit g (an item, or with
    ``cluster`` a cluster, then times :math:`G/(G-1)`, CR1). The difference
    :math:`\hat\theta_a - \hat\theta_b` has :math:`\mathrm{se}^2 = C_{aa} + C_{bb} - 2C_{ab}`,
    a two-sided normal p-value (Holm over the pairs in ``p_holm``) and a normal interval. For
    the PPI family :math:`C_{mm}` is ppi_py's variance (ddof 0) without clusters; for the
    chain rule the variances are the posterior's (times the design effect
    :math:`C_{mm}/\sum_i\phi_{mi}^2` with clusters) and :math:`C` gives the correlations.

    **Transport check** (``transport_alpha``, ``transport_relation``): whether the judge
    relates to a model's gold labels as it does to the other models'
    (:mod:`evaluq.judges._transport`); a flagged model (Holm-adjusted p below
    ``transport_alpha``, step-down) gets its gold-only estimate, with a
    :class:`TransportWarning`. Each model's correction uses its own labels, so the
    estimates are valid either way; the fallback says that the judge's scores of that model
    cannot be trusted like the others'.

    **Draws** (``resample``, ``model``) from :math:`N(\hat\theta, C)` for
    :func:`evaluq.rank_distribution`, :func:`evaluq.leaderboard`,
    :func:`evaluq.significance_groups` and :func:`evaluq.pairwise_differences`, unchanged.

    Parameters
    ----------
    table
        A DataFrame (or a path :func:`evaluq.io.read_table` reads), one row per model and
        item.
    model, item, judge, gold
        Column names: the model, the item, the judge's score (numbers, no NaN), the gold
        score (numbers, NaN where the item is unlabelled).
    method
        ``"classical"``, ``"ppi"``, ``"ppi++"``, ``"chain-rule"``, ``"rogan-gladen"`` (0/1
        judge and gold scores: the judge's positive rate corrected by its sensitivity and
        specificity, per model, with the delta method's variance), or None to choose from
        the data (the chain rule for discrete judge and gold scores, PPI++ otherwise).
    lam
        PPI++'s lambda in [0, 1] for every model instead of the tuned ones (a value outside
        [0, 1] is refused).
    cluster
        Column of the items' clusters (one per item): cluster-robust covariances, each
        model's variance at least its independent-rows one; more clusters than models are
        needed, and with few (fewer than 30, or 4 per model) every paired difference's
        variance is at least its independent-rows one too (an ``EvaluqWarning``).
    transport_alpha
        Family-wise level of the transport check; None skips it.
    transport_relation
        ``"judge-given-gold"`` (default: is the judge lenient, or harsh, with one model's
        answers of the same gold quality? This relation does not depend on how good a model
        is) or ``"gold-given-judge"`` (does the judge's calibration, E[gold | judge], carry
        over between models, as cje-eval's transport audit asks; it also differs between
        models of different accuracy under the same judge errors).
    confidence_level
        Level of the intervals, in (0, 1).
    n_draws
        Number of draws (and of the chain rule's posterior draws).
    rng
        Seed, Generator or None (fresh entropy: an analysis, the package's rule) of the draws
        and of the chain rule's posterior draws.

    Returns
    -------
    JudgedMeansResult
        ``estimate``, ``se``, ``confidence_interval(level)``, ``per_model``,
        ``differences``, ``transport``, ``covariance``, ``draws``, ``notes``.

    Raises
    ------
    CubeError
        A missing column, a repeated (model, item), a judge score that is NaN or no number,
        no gold label at all, an item in two clusters.
    ValueError
        An unknown method, ``lam`` outside [0, 1] or with another method than PPI++, a
        continuous judge for the chain rule, a judge or gold not 0/1 for Rogan-Gladen, a bad
        level, no more clusters than models.

    See Also
    --------
    ppi_mean : one mean.
    evaluq.item_means : means of scores without a judge.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from evaluq.judges import judged_means
    >>> rng = np.random.default_rng(0)
    >>> rows = []
    >>> for m, p in (("a", 0.6), ("b", 0.7)):
    ...     gold = (rng.random(400) < p).astype(float)
    ...     judge = np.where(rng.random(400) < 0.85, gold, 1 - gold)
    ...     rows.append(pd.DataFrame({"model": m, "item": range(400), "judge": judge,
    ...                               "gold": np.where(np.arange(400) < 60, gold, np.nan)}))
    >>> res = judged_means(pd.concat(rows))
    >>> res.method, res.estimate.round(3).values.tolist()
    ('chain-rule', [0.551, 0.685])
    >>> round(float(res.differences["p_value"].sel(model="a", model_b="b")), 3)
    0.017
    """
    level, n_draws = _validate(method, lam, transport_alpha, confidence_level, n_draws)
    check_choice("transport_relation", transport_relation, RELATIONS)
    generator = check_rng(rng)
    t = read_judge_table(table, model=model, item=item, judge=judge, gold=gold,
                         cluster=cluster)
    check_clusters(t)
    check_memory("n_draws", 16.0 * n_draws * len(t.models))
    reason = "as requested"
    if method is None:
        method, reason = choose_method(t.gold[t.labelled], t.judge)
        if lam is not None:
            method, reason = "ppi++", f"PPI++ at the given lambda {float(lam):g}"
    fits, values = _fit(t, method, lam, n_draws, generator)
    fits, transport, notes = _check_transport(t, fits, method, transport_alpha,
                                              transport_relation, values, n_draws, generator)
    fits, nan_reason = _estimable(t, fits)
    unidentified = np.isnan(fits.estimate) & (np.bincount(t.model[t.labelled],
                                                          minlength=len(t.models)) >= 2)
    if method == "rogan-gladen" and unidentified.any():
        nan_reason = "; ".join(filter(None, [nan_reason, (
            f"Rogan-Gladen is not identified for model(s) {t.models[unidentified].tolist()}: "
            "it needs gold labels of both classes and a judge better than chance on them "
            "(sensitivity + specificity > 1)")]))
    cov, deff = _covariance(t, fits, exact=method not in ("chain-rule", "rogan-gladen"))
    cov, deff, few = _floor_few_clusters(t, fits, cov, deff,
                                         exact=method not in ("chain-rule", "rogan-gladen"))
    if few is not None:
        warn(few, EvaluqWarning)
        notes.append(few)
    floored = _raw_design_effect(t, fits.phi) < 1.0
    if floored.any():
        notes.append(f"for {int(floored.sum())} model(s) {t.models[floored][:10].tolist()} "
                     "the cluster-robust variance is below the independent-rows one; the "
                     f"larger is used (with {t.n_groups} clusters the robust one is noisy)")
    flagged = (transport[FLAGGED].values if transport is not None
               else np.zeros(len(t.models), dtype=bool))
    fallback = CLASSICAL if method != "chain-rule" else CHAIN_GOLD_ONLY
    per_model = _per_model(t, fits, np.diag(cov), np.where(flagged, fallback, method))
    estimate = xr.DataArray(fits.estimate, dims=MODEL, coords={MODEL: t.models},
                            name=ESTIMATE)
    se = xr.DataArray(np.sqrt(np.diag(cov)), dims=MODEL, coords={MODEL: t.models}, name=SE)
    if nan_reason is not None:
        estimate.attrs[NAN_REASON] = se.attrs[NAN_REASON] = nan_reason
        notes.append(nan_reason)
    return JudgedMeansResult(
        estimate=estimate, se=se,
        per_model=per_model,
        differences=_differences(t.models, fits.estimate, cov, _shared_items(t), level),
        transport=transport,
        covariance=xr.DataArray(cov, dims=(MODEL, MODEL_B),
                                coords={MODEL: t.models, MODEL_B: t.models}),
        draws=_normal_draws(t.models, fits.estimate, cov, n_draws, generator),
        method=method, reason=reason, notes=_notes(t, per_model, notes),
        confidence_level=level, posterior=_widened(fits.draws, fits.estimate, deff))

r"""One mean from an LLM judge's scores corrected by a few gold (human) labels: ``ppi_mean``.

Five estimators of the mean gold score :math:`\theta` of a population of items, from gold
labels :math:`Y` on n labelled items, the judge's scores :math:`\hat Y` on the same items and
:math:`\hat Y^u` on N unlabelled ones:

* ``"classical"``: the gold labels alone, :math:`\bar Y \pm z\,\mathrm{sd}_0(Y)/\sqrt n`;
* ``"ppi"``: prediction-powered inference (Angelopoulos et al. 2023), :math:`\lambda = 1`;
* ``"ppi++"``: PPI with the power-tuned :math:`\lambda` (Angelopoulos, Duchi and Zrnic 2023),
  or a given ``lam``; numbers equal to ppi_py's ``ppi_mean_ci`` / ``ppi_mean_pointestimate``;
* ``"chain-rule"``: the Bayesian chain rule of Hofer et al. (2024) for discrete judge scores,
  :math:`\theta = \sum_j P(\hat Y = j)\,E[Y \mid \hat Y = j]`;
* ``"rogan-gladen"``: the prevalence corrected by the judge's sensitivity and specificity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from evaluq._dims import CI_BOUND, NAN_REASON
from evaluq._intervals import interval_from_bounds
from evaluq._kernels import percentile_interval
from evaluq._results import ResultBase
from evaluq._validation import (
    check_choice,
    check_confidence_level,
    check_int,
    check_memory,
    check_real,
    check_rng,
)
from evaluq.judges._kernels import (
    CHAIN_PRIOR,
    chain_rule_draws,
    chain_rule_moments,
    dirichlet_linear_moments,
    moments_1d,
    ppi_estimate,
    rogan_gladen,
    tuned_lambda,
)

METHODS = ("classical", "ppi", "ppi++", "chain-rule", "rogan-gladen")
"""The estimators of :func:`ppi_mean` (and :func:`judged_means`)."""
MAX_LEVELS = 10
"""A judge (or gold) score with at most this many distinct values counts as discrete: the
default method is then the chain rule."""
MAX_CHAIN_LEVELS = 50
"""The most distinct judge (or gold) values the chain rule accepts."""
WEAK_GAIN = 1.25
"""Below this gain over gold-only (effective labels / gold labels) the result says the judge
is weak."""
N_DRAWS = 4000
"""Posterior draws of the chain rule (the Monte Carlo error of a 95% bound is then about 1% of
the interval's width)."""


def as_scores(name: str, values: Any, *, allow_empty: bool = False) -> np.ndarray:
    """A 1-D float array without NaN or infinity, the argument named in every message."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a 1-D array of numbers; got {type(values).__name__}"
                        ) from err
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"`{name}` is empty: at least one labelled item is needed")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"`{name}` has {int(bad.sum())} NaN or infinite value(s), at positions "
                         f"{np.flatnonzero(bad)[:5].tolist()}; remove or score them explicitly")
    return arr


def is_binary(values: np.ndarray) -> bool:
    """Whether every value is 0 or 1."""
    return bool(np.all((values == 0) | (values == 1)))


def gold_levels(gold: np.ndarray) -> np.ndarray:
    """The gold values of the chain rule: 0 and 1 for 0/1 labels, else the distinct values."""
    if is_binary(gold):
        return np.array([0.0, 1.0])
    found = levels_of(gold, MAX_CHAIN_LEVELS)
    return np.unique(gold) if found is None else found


def levels_of(values: np.ndarray, cap: int) -> np.ndarray | None:
    """The sorted distinct values, or None when there are more than ``cap`` (hashing, not
    sorting, the values; a continuous score is told from its first 100,000 values)."""
    if values.size > 100_000 and pd.unique(values[:100_000]).size > cap:
        return None
    found = pd.unique(values)
    return None if found.size > cap else np.sort(found)


def choose_method(gold: np.ndarray, judge_all: np.ndarray) -> tuple[str, str]:
    """The default method and why: the chain rule for discrete judge and gold scores (at most
    :data:`MAX_LEVELS` values each), PPI++ otherwise."""
    levels = levels_of(judge_all, MAX_LEVELS)
    n_gold = gold_levels(gold).size
    if levels is None:
        return "ppi++", (f"the judge's scores take more than {MAX_LEVELS} distinct values "
                         "(continuous), so PPI++ (power-tuned lambda)")
    if n_gold > MAX_LEVELS:
        return "ppi++", (f"the gold labels take {n_gold} distinct values (more than "
                         f"{MAX_LEVELS}), so PPI++ (power-tuned lambda)")
    return "chain-rule", (f"the judge's scores are discrete ({levels.size} levels) and so are "
                          "the gold labels: the Bayesian chain rule")


def level_counts(judge_gold: np.ndarray, judge_all: np.ndarray, gold: np.ndarray,
                 values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chain rule's counts: judge levels over all items (K,) and gold values among the
    labelled items per judge level (K, L)."""
    levels, all_codes = np.unique(judge_all, return_inverse=True)
    k, n_values = levels.size, values.size
    lab_codes = np.searchsorted(levels, judge_gold)
    gold_codes = np.searchsorted(values, gold)
    m = np.bincount(all_codes, minlength=k).astype(np.float64)
    c = np.bincount(lab_codes * n_values + gold_codes, minlength=k * n_values)
    return m, c.reshape(k, n_values).astype(np.float64)


@dataclass
class Fit:
    """One method's numbers before they become a result."""

    estimate: float
    se: float
    lam: float = np.nan
    var_classical: float = np.nan
    draws: np.ndarray | None = None
    kind: str = "normal"
    bounds: tuple[float, float] = (-np.inf, np.inf)
    notes: list[str] = field(default_factory=list)
    nan_reason: str | None = None


def _ppi_fit(gold: np.ndarray, judge_gold: np.ndarray, judge_unlabelled: np.ndarray,
             method: str, lam: float | None) -> Fit:
    """classical (lambda 0), PPI (lambda 1) and PPI++ (tuned or given lambda)."""
    m = moments_1d(gold, judge_gold, judge_unlabelled)
    notes: list[str] = []
    if method == "classical":
        lam_used = np.array(0.0)
    elif method == "ppi" or lam is not None:
        lam_used = np.array(1.0 if method == "ppi" else lam)
    else:
        lam_used = tuned_lambda(m)
        if np.isnan(lam_used):
            notes.append("the judge's scores are all equal: lambda is not identified (NaN; "
                         "every lambda gives the gold-only mean, which is reported)")
        elif judge_unlabelled.size == 0:
            notes.append("no unlabelled items: lambda = 0, the gold-only mean")
    estimate, var = ppi_estimate(m, lam_used)
    fit = Fit(estimate=float(estimate), se=float(np.sqrt(var)), lam=float(lam_used),
              var_classical=float(m.vy / m.n), notes=notes)
    if np.isnan(fit.estimate):
        fit.nan_reason = (f"lambda = {float(lam_used):g} needs unlabelled items "
                          "(`judge_unlabelled` is empty)")
    elif gold.size < 2:
        fit.se, fit.nan_reason = np.nan, "one gold label says nothing about a spread"
    elif not fit.se > NO_SPREAD * max(1.0, abs(fit.estimate)):
        fit.se, fit.nan_reason = np.nan, zero_variance_reason(gold)
    return fit


NO_SPREAD = 1e-12
"""An SE below this (relative to the estimate, or absolute below 1) is a variance estimate of 0
up to rounding: every gold label alike and no judge part."""


def zero_variance_reason(gold: np.ndarray) -> str:
    """Why an estimate whose variance estimate is 0 gets no SE (the gold labels all alike:
    their spread of 0 says nothing about the estimate's precision)."""
    values = np.unique(gold)
    what = (f"every gold label is {values[0]:g}" if values.size == 1
            else "the rectified gold labels do not vary")
    binary = ("; for 0/1 labels a binomial interval of the gold labels "
              "(eq.intervals.proportion_interval(k, n, method='wilson')) or method='chain-rule' "
              "(a discrete judge) has one" if set(values.tolist()) <= {0.0, 1.0} else "")
    return (f"the estimated variance is 0 ({what}, and the judge's part adds none): a normal "
            f"interval of width 0 says nothing about the estimate's precision, so its SE and "
            f"interval are NaN; label more items{binary}")


def _chain_fit(gold: np.ndarray, judge_gold: np.ndarray, judge_all: np.ndarray,
               n_draws: int, rng: np.random.Generator) -> Fit:
    """The Bayesian chain rule: Dirichlet on the judge levels, Dirichlet (Beta for 0/1 gold)
    on the gold values given each level, uniform priors."""
    values = gold_levels(gold)
    levels = np.unique(judge_all)
    if levels.size > MAX_CHAIN_LEVELS or values.size > MAX_CHAIN_LEVELS:
        raise ValueError(f"method='chain-rule' needs discrete scores (at most "
                         f"{MAX_CHAIN_LEVELS} distinct values); the judge has {levels.size} "
                         f"and the gold labels {values.size}: use method='ppi++'")
    check_memory("n_draws", 8.0 * n_draws * levels.size * (values.size + 2))
    m, c = level_counts(judge_gold, judge_all, gold, values)
    mean, var = chain_rule_moments(m, c, values)
    _, var_gold_only = dirichlet_linear_moments(c.sum(axis=0) + CHAIN_PRIOR, values)
    fit = Fit(estimate=float(mean), se=float(np.sqrt(var)), var_classical=float(var_gold_only),
              draws=chain_rule_draws(m, c, values, n_draws, rng), kind="percentile",
              bounds=(float(values.min()), float(values.max())))
    empty = c.sum(axis=1) == 0
    if empty.any():
        share = float(m[empty].sum() / m.sum())
        fit.notes.append(f"judge level(s) {levels[empty].tolist()} ({share:.1%} of the items) "
                         "have no gold label: E[gold | judge] there is the uniform prior over "
                         "the gold values, which widens the interval")
    if values.size < 2:
        fit.notes.append(f"every gold label is {values[0]:g}: a Dirichlet over one value "
                         "cannot vary, so the interval has width 0")
    return fit


def _rogan_gladen_fit(gold: np.ndarray, judge_gold: np.ndarray,
                      judge_all: np.ndarray) -> Fit:
    """Rogan-Gladen with the delta-method normal interval, clipped to [0, 1]."""
    for name, arr in (("gold", gold), ("judge", judge_all)):
        if not is_binary(arr):
            raise ValueError(f"`{name}`: method='rogan-gladen' needs 0/1 {name} scores; got "
                             f"the values {np.unique(arr)[:6].tolist()}")
    pos = gold == 1
    est, var = rogan_gladen(np.array(judge_all.mean()), np.array(judge_all.size),
                            np.array(np.sum(judge_gold[pos] == 1)), np.array(pos.sum()),
                            np.array(np.sum(judge_gold[~pos] == 0)), np.array((~pos).sum()))
    fit = Fit(estimate=float(est), se=float(np.sqrt(var)), var_classical=float(gold.var()
                                                                               / gold.size),
              bounds=(0.0, 1.0))
    if np.isnan(fit.estimate):
        fit.nan_reason = ("Rogan-Gladen needs gold labels of both classes and a judge better "
                          "than chance (sensitivity + specificity > 1)")
    return fit


@dataclass(repr=False)
class PPIMeanResult(ResultBase):
    """The result of :func:`ppi_mean`.

    Attributes
    ----------
    estimate
        The corrected mean (the posterior mean for the chain rule).
    se
        Its standard error (posterior SD for the chain rule).
    method, reason
        The method used and why (the default is chosen from the data).
    lam
        PPI's lambda (0 for gold-only, 1 for PPI, tuned for PPI++; NaN where not defined).
    n_gold, n_unlabelled
        Labelled and unlabelled items.
    n_effective
        Effective number of gold labels, ``n_gold * var_gold_only / var_method``.
    gain
        ``n_effective / n_gold``: how many gold labels one gold label is worth with the judge.
    agreement
        The judge's agreement with the gold labels on the labelled items (share equal for 0/1
        scores, else their Pearson correlation).
    notes
        What the user must know: a weak judge, judge levels without labels, a NaN's reason.
    confidence_level
        The level of :attr:`interval`.
    ci_kind
        The interval's kind (``"normal"`` or ``"percentile"``, evaluq's interval vocabulary).
    bounds
        The range the interval is clipped to (Rogan-Gladen: [0, 1]).
    distribution
        Posterior draws of the chain rule (None for the closed-form intervals).
    nan_reason
        Why the estimate is NaN (None when it is not).
    """

    estimate: float
    se: float
    method: str
    reason: str
    lam: float
    n_gold: int
    n_unlabelled: int
    n_effective: float
    gain: float
    agreement: float
    notes: tuple[str, ...]
    confidence_level: float
    ci_kind: str
    bounds: tuple[float, float]
    distribution: np.ndarray | None = None
    nan_reason: str | None = None

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """The interval at ``confidence_level`` (default the level given): normal for the
        PPI family and Rogan-Gladen (clipped to [0, 1] for Rogan-Gladen), the equal-tailed
        interval of the posterior draws for the chain rule.

        Parameters
        ----------
        confidence_level
            Level in (0, 1); default the level the result was made with.
        """
        level = check_confidence_level(self.confidence_level if confidence_level is None
                                       else confidence_level)
        if self.distribution is not None:
            ends = percentile_interval(self.distribution, level)
        else:
            half = stats.norm.ppf(0.5 + level / 2.0) * self.se
            ends = np.clip([self.estimate - half, self.estimate + half], *self.bounds)
        ci = interval_from_bounds(np.asarray(ends, dtype=np.float64), dims=(),
                                  kind=self.ci_kind, confidence_level=level, name="ci")
        if self.nan_reason is not None:
            ci.attrs[NAN_REASON] = self.nan_reason
        return ci

    def to_dataset(self) -> xr.Dataset:
        """Scalars (estimate, se, lam, n_gold, n_unlabelled, n_effective, gain, agreement)
        and the interval ``ci`` (``ci_bound``); method, reason and notes in ``attrs``."""
        names = ("estimate", "se", "lam", "n_gold", "n_unlabelled", "n_effective", "gain",
                 "agreement")
        ds = xr.Dataset({k: xr.DataArray(getattr(self, k)) for k in names})
        ds["ci"] = self.confidence_interval()
        ds.attrs = {"method": self.method, "reason": self.reason, "notes": list(self.notes)}
        if self.nan_reason is not None:
            ds.attrs[NAN_REASON] = self.nan_reason
        return ds

    def to_dataframe(self) -> Any:
        """One row: the scalars and the interval's lower / upper."""
        ds = self.to_dataset()
        row = {k: [float(ds[k])] for k in ds.data_vars if k != "ci"}
        row.update(lower=[float(ds["ci"].sel({CI_BOUND: "lower"}))],
                   upper=[float(ds["ci"].sel({CI_BOUND: "upper"}))])
        import pandas as pd

        return pd.DataFrame(row)

    def _fields(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"method": self.method, "estimate": round(self.estimate, 6),
                                 "lower": self.lower, "upper": self.upper,
                                 "lam": self.lam, "n_gold": self.n_gold,
                                 "n_effective": round(self.n_effective, 1),
                                 "gain": round(self.gain, 3)}
        if self.notes:
            shown["notes"] = self.notes
        return shown


def agreement(gold: np.ndarray, judge_gold: np.ndarray) -> float:
    """Share of equal scores for 0/1 gold and judge, else their correlation (NaN when either
    is constant)."""
    if is_binary(gold) and is_binary(judge_gold):
        return float(np.mean(gold == judge_gold))
    if gold.size < 2 or np.ptp(gold) == 0 or np.ptp(judge_gold) == 0:
        return np.nan
    return float(np.corrcoef(gold, judge_gold)[0, 1])


def weak_judge_note(n_gold: int, n_effective: float, gain: float, agree: float) -> str | None:
    """The note of a weak judge (gain below :data:`WEAK_GAIN`), else None."""
    if not gain < WEAK_GAIN:
        return None
    return (f"weak judge (agreement {agree:.2f}): the corrected estimate is worth "
            f"{n_effective:.1f} gold labels against the {n_gold} gold labels alone (gain "
            f"x{gain:.2f}), so its interval is barely narrower than gold-only, or wider; more "
            "gold labels, or a better judge, are needed")


def check_lam(lam: Any) -> float:
    """``lam``, PPI++'s lambda, checked to be a real number in [0, 1].

    PPI++ (Angelopoulos, Duchi and Zrnic 2023) tunes lambda within [0, 1] (ppi_py clips its
    tuned value there): 0 is the gold-only estimate, 1 is PPI. A lambda outside moves the
    estimate away from both and weighs the judge's scores against the gold labels (below 0)
    or beyond them (above 1); the estimate stays unbiased but is never more precise than the
    clipped one, so evaluq refuses it rather than reporting it.

    Examples
    --------
    >>> from evaluq.judges._mean import check_lam
    >>> check_lam(0.4)
    0.4
    >>> try:
    ...     check_lam(1.5)
    ... except ValueError as err:
    ...     print(str(err)[:40])
    `lam` (PPI++'s lambda) must be in [0, 1]
    """
    value = check_real("lam", lam)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"`lam` (PPI++'s lambda) must be in [0, 1]: 0 is the gold-only "
                         f"estimate, 1 is PPI, and PPI++ tunes it within [0, 1] (ppi_py clips "
                         f"it there); got {value:g}; pass `lam=None` to tune it")
    return value


def _validate(gold: Any, judge_gold: Any, judge_unlabelled: Any, method: str | None,
              lam: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gold_arr = as_scores("gold", gold)
    judge_arr = as_scores("judge_gold", judge_gold)
    unl_arr = as_scores("judge_unlabelled", judge_unlabelled, allow_empty=True)
    if gold_arr.size != judge_arr.size:
        raise ValueError(f"`gold` and `judge_gold` must have one value per labelled item; got "
                         f"lengths {gold_arr.size} and {judge_arr.size}")
    if method is not None:
        check_choice("method", method, METHODS)
    if lam is not None:
        check_lam(lam)
        if method not in (None, "ppi++"):
            raise ValueError(f"`lam` is PPI++'s lambda: give it with method='ppi++' (or "
                             f"None); got method={method!r}")
    return gold_arr, judge_arr, unl_arr


def fit_method(method: str, gold: np.ndarray, judge_gold: np.ndarray,
               judge_unlabelled: np.ndarray, lam: float | None, n_draws: int,
               rng: np.random.Generator) -> Fit:
    """Run one method on validated arrays."""
    judge_all = np.concatenate([judge_gold, judge_unlabelled])
    if method == "chain-rule":
        return _chain_fit(gold, judge_gold, judge_all, n_draws, rng)
    if method == "rogan-gladen":
        return _rogan_gladen_fit(gold, judge_gold, judge_all)
    return _ppi_fit(gold, judge_gold, judge_unlabelled, method, lam)


def ppi_mean(gold: Any, judge_gold: Any, judge_unlabelled: Any, *, method: str | None = None,
             lam: float | None = None, confidence_level: float = 0.95,
             n_draws: int = N_DRAWS, rng: Any = None) -> PPIMeanResult:
    r"""The mean gold score of a population from a judge's scores and a few gold labels.

    With gold labels :math:`Y_1..Y_n` on the labelled items, the judge's scores
    :math:`\hat Y_1..\hat Y_n` on them and :math:`\hat Y^u_1..\hat Y^u_N` on the unlabelled
    items:

    * ``"classical"``: :math:`\bar Y \pm z\,\mathrm{sd}_0(Y)/\sqrt n` (the gold labels alone);
    * ``"ppi"`` / ``"ppi++"``: :math:`\hat\theta = \lambda\,\overline{\hat Y^u} +
      \overline{Y - \lambda\hat Y}` with
      :math:`\widehat{\mathrm{var}} = \lambda^2\mathrm{var}_0(\hat Y^u)/N +
      \mathrm{var}_0(Y - \lambda\hat Y)/n` and the normal interval; :math:`\lambda = 1` for
      PPI, and for PPI++ the power-tuned
      :math:`\lambda = \mathrm{clip}(\mathrm{cov}_0(Y, \hat Y) / ((1 + n/N)\,
      \mathrm{var}_1(\hat Y, \hat Y^u)), 0, 1)` (or ``lam``), as ppi_py's ``ppi_mean_ci``
      (equal to it to 1e-10, ``tests/test_judges.py``);
    * ``"chain-rule"`` (discrete judge scores): :math:`\theta = \sum_j \pi_j \mu_j`,
      :math:`\pi_j = P(\hat Y = j)` with a Dirichlet posterior from the judge levels of all
      n + N items, :math:`\mu_j = E[Y \mid \hat Y = j]` with a Beta (0/1 gold) or Dirichlet
      (discrete gold) posterior from the labelled items at level j, uniform priors (chosen
      by calibration over Jeffreys'); the estimate is the posterior mean, the interval the
      equal-tailed interval of ``n_draws`` posterior draws. A judge level without gold labels
      keeps the prior there (the result says so);
    * ``"rogan-gladen"`` (0/1 scores): :math:`(\hat p + sp - 1)/(se + sp - 1)` with the
      judge's positive rate :math:`\hat p` over all items and its sensitivity / specificity
      on the labelled items, the delta-method normal interval clipped to [0, 1]; NaN with a
      reason when :math:`se + sp \le 1`.

    The default (``method=None``) is the chain rule when the judge and gold scores are
    discrete (at most 10 values), PPI++ otherwise; the result says which and why. It also
    gives the effective number of gold labels
    :math:`n\,\mathrm{var}_{gold\ only}/\mathrm{var}_{method}` and the gain over gold-only,
    and says so when the judge is weak (gain below 1.25).

    Parameters
    ----------
    gold
        Gold (human) scores of the labelled items, 1-D, no NaN.
    judge_gold
        The judge's scores of the same items, in the same order.
    judge_unlabelled
        The judge's scores of the unlabelled items (may be empty).
    method
        One of ``"classical"``, ``"ppi"``, ``"ppi++"``, ``"chain-rule"``,
        ``"rogan-gladen"``, or None to choose from the data.
    lam
        PPI++'s lambda in [0, 1], instead of the tuned one (``lam=1`` is PPI, ``lam=0``
        gold-only); a value outside [0, 1] is refused.
    confidence_level
        Level of the interval, in (0, 1).
    n_draws
        Posterior draws of the chain rule.
    rng
        Seed, Generator or None (fresh entropy: an analysis, the package's rule) of the chain
        rule's posterior draws; only the interval's Monte Carlo error depends on it.

    Returns
    -------
    PPIMeanResult
        ``estimate``, ``se``, ``confidence_interval(level)``, ``lam``, ``n_effective``,
        ``gain``, ``agreement``, ``method``, ``reason``, ``notes``.

    Raises
    ------
    ValueError
        Lengths of ``gold`` and ``judge_gold`` differ, no labels, NaN or infinite scores, an
        unknown method, ``lam`` outside [0, 1] or with another method than PPI++, non-0/1
        scores for Rogan-Gladen, a continuous judge for the chain rule.

    See Also
    --------
    judged_means : every model of a per-item table, with paired differences.
    label_budget : how many gold labels a target width needs.

    References
    ----------
    Angelopoulos, Bates, Fannjiang, Jordan and Zrnic (2023), Prediction-powered inference,
    Science 382. Angelopoulos, Duchi and Zrnic (2023), PPI++: efficient prediction-powered
    inference, arXiv:2311.01453. Hofer, Kao, Jain and Rao (2024), Bayesian prediction-powered
    inference, arXiv:2405.06034. Rogan and Gladen (1978), Am. J. Epidemiol. 107.

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.judges import ppi_mean
    >>> rng = np.random.default_rng(0)
    >>> gold = (rng.random(1000) < 0.7).astype(float)
    >>> judge = np.where(rng.random(1000) < 0.85, gold, 1 - gold)
    >>> res = ppi_mean(gold[:100], judge[:100], judge[100:])
    >>> res.method, round(res.estimate, 3), round(res.gain, 2)
    ('chain-rule', 0.644, 1.79)
    >>> round(ppi_mean(gold[:100], judge[:100], judge[100:], method="ppi++").lam, 3)
    0.643
    """
    gold_arr, judge_arr, unl_arr = _validate(gold, judge_gold, judge_unlabelled, method, lam)
    level = check_confidence_level(confidence_level)
    n_draws = check_int("n_draws", n_draws, minimum=2)
    generator = check_rng(rng)
    if method is None:
        chosen, reason = choose_method(gold_arr, np.concatenate([judge_arr, unl_arr]))
        if lam is not None:
            chosen, reason = "ppi++", f"PPI++ at the given lambda {float(lam):g}"
    else:
        chosen, reason = method, "as requested"
    fit = fit_method(chosen, gold_arr, judge_arr, unl_arr, lam, n_draws, generator)
    return build_result(fit, chosen, reason, gold_arr, judge_arr, unl_arr.size, level)


def build_result(fit: Fit, method: str, reason: str, gold: np.ndarray, judge_gold: np.ndarray,
                 n_unlabelled: int, level: float) -> PPIMeanResult:
    """A :class:`PPIMeanResult` from a method's numbers: effective labels, gain, notes."""
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = float(fit.var_classical / fit.se**2) if fit.se > 0 else np.nan
    n_eff = gold.size * gain
    agree = agreement(gold, judge_gold)
    notes = list(fit.notes)
    weak = weak_judge_note(gold.size, n_eff, gain, agree) if method != "classical" else None
    if weak is not None:
        notes.append(weak)
    if fit.nan_reason is not None:
        notes.append(fit.nan_reason)
    return PPIMeanResult(estimate=fit.estimate, se=fit.se, method=method, reason=reason,
                         lam=fit.lam, n_gold=int(gold.size), n_unlabelled=int(n_unlabelled),
                         n_effective=n_eff, gain=gain, agreement=agree, notes=tuple(notes),
                         confidence_level=level, ci_kind=fit.kind, bounds=fit.bounds,
                         distribution=fit.draws, nan_reason=fit.nan_reason)

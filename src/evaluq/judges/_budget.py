r"""``label_budget``: how many gold labels a judge-corrected mean needs, from a pilot.

From a pilot's gold labels :math:`Y` and the judge's scores :math:`\hat Y` on the same items,
the PPI correlation :math:`\rho = \mathrm{cov}_0(Y, \hat Y)/\sqrt{\mathrm{var}_0(Y)
\mathrm{var}_0(\hat Y)}` (capped at :math:`1 - 1/n`, as ppi_py) and :math:`\sigma^2 =
\mathrm{var}_0(Y)`. With n gold labels among T judged items and PPI++'s optimal lambda the
variance of the mean is (Angelopoulos, Duchi and Zrnic 2023; Broska et al. 2024)

.. math:: V(n) = \frac{\sigma^2}{n}\Big(1 - \rho^2 \frac{T - n}{T}\Big)
    = \frac{\sigma^2 (1 - \rho^2)}{n} + \frac{\sigma^2\rho^2}{T},

so the effective number of labels is :math:`n T / (n + (1 - \rho^2)(T - n))`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._validation import check_confidence_level, check_int, check_real
from evaluq.judges._mean import as_scores

N_GOLD_ONLY = "n_gold_only"


def pilot_correlation(gold: np.ndarray, judge: np.ndarray) -> tuple[float, float]:
    r"""The pilot's :math:`\rho` (ddof 0, capped at :math:`1 - 1/n`, ppi_py's
    ``_get_ppi_corr``) and :math:`\sigma^2 = \mathrm{var}_0(Y)`."""
    yc, fc = gold - gold.mean(), judge - judge.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.mean(yc * fc) / np.sqrt(np.mean(yc * yc) * np.mean(fc * fc))
    return float(min(rho, 1.0 - 1.0 / gold.size)), float(np.mean(yc * yc))


def _optimal_pair(n0: float, rho: float, gamma: float, cost_gold: float,
                  cost_judge: float) -> dict[str, Any]:
    """ppi_py's ``_optimal_pair`` (cost of an unlabelled item's features 0)."""
    r2 = rho**2
    n = n0 * (1 - r2 + math.sqrt(gamma * r2 * (1 - r2)))
    big_n = n * (n0 - n) / (n - (1 - r2) * n0) if rho != 0 else 0.0
    n, big_n = round(n), round(big_n)
    return {"n": n, "N": big_n, "cost": n * cost_gold + (n + big_n) * cost_judge,
            "effective_n": round(n * (n + big_n) / (n + (1 - r2) * big_n))}


def _capped(result: dict[str, Any], rho: float, cost_gold: float, cost_judge: float,
            n_max: int | None, budget: float | None, effective_n: float | None
            ) -> tuple[dict[str, Any], str | None]:
    """ppi_py's ``n_max`` branches of ``_get_powerful_pair`` / ``_get_cheap_pair``."""
    if n_max is None or result["n"] + result["N"] <= n_max:
        return result, None
    r2, gamma = rho**2, cost_judge / cost_gold
    if budget is not None:
        if n_max * cost_gold <= budget:
            return {"n": n_max, "N": 0, "cost": n_max * cost_gold, "effective_n": n_max}, None
        n = round(budget / cost_gold - n_max * gamma)
    else:
        assert effective_n is not None
        if effective_n > n_max:
            return ({"n": n_max, "N": 0, "cost": n_max * cost_gold, "effective_n": n_max},
                    f"effective_n={effective_n:g} is more than n_max={n_max} items can give: "
                    "every item labelled (n = n_max, N = 0)")
        n = round(effective_n * n_max * (1 - r2) / (n_max - r2 * effective_n))
    big_n = n_max - n
    return {"n": n, "N": big_n, "cost": n * (cost_gold + cost_judge) + big_n * cost_judge,
            "effective_n": round(n * (n + big_n) / (n + (1 - r2) * big_n))}, None


def cost_design(rho: float, cost_gold: float, cost_judge: float, budget: float | None,
                effective_n: float | None, n_max: int | None
                ) -> tuple[dict[str, Any], str | None]:
    """The cheapest (labels, unlabelled items) for ``effective_n``, or the most powerful for
    ``budget``: ppi_py's ``ppi_power`` with the features' cost 0, its rounding included."""
    gamma = cost_judge / cost_gold
    r2 = rho**2
    ppi_cost = cost_gold * (1 - r2 + gamma * r2 + 2 * math.sqrt(gamma * r2 * (1 - r2)))
    n0 = budget / ppi_cost if budget is not None else float(effective_n)  # type: ignore[arg-type]
    result = _optimal_pair(n0, rho, gamma, cost_gold, cost_judge)
    if cost_gold < ppi_cost or result["N"] < 0:
        n = round(budget / cost_gold) if budget is not None else round(n0)
        result = {"n": n, "N": 0, "cost": n * cost_gold, "effective_n": n}
    return _capped(result, rho, cost_gold, cost_judge, n_max, budget, effective_n)


def pool_design(rho: float, sigma2: float, target_var: float, n_judged: int
                ) -> tuple[float, float, str | None]:
    r"""Gold labels n (of ``n_judged`` items) for :math:`V(n) \le` ``target_var``, and the
    gold-only count; NaN with a reason when no n up to ``n_judged`` reaches it."""
    n_gold_only = math.ceil(sigma2 / target_var - 1e-9) if sigma2 > 0 else 1
    floor = sigma2 * rho**2 / n_judged
    if target_var <= floor:
        return np.nan, n_gold_only, (
            f"the target needs a variance below {floor:.3g}, the floor of {n_judged} judged "
            "items with this judge (sigma^2 rho^2 / T): judge more items")
    n = math.ceil(sigma2 * (1 - rho**2) / (target_var - floor) - 1e-9)
    if n > n_judged:
        return np.nan, n_gold_only, (f"the target needs {n} gold labels, more than the "
                                     f"{n_judged} judged items")
    return float(max(n, 2)), n_gold_only, None


def _target_variance(width: Any, difference: Any, power: Any, level: float) -> float:
    """The variance the design must reach: from the interval's full width, or from the
    difference to detect at ``power`` (two-sided test at 1 - level)."""
    if (width is None) == (difference is None):
        raise ValueError("give exactly one of `width` (the interval's full width) and "
                         "`difference` (the difference to detect)")
    z = stats.norm.ppf(0.5 + level / 2.0)
    if width is not None:
        return (check_real("width", width, low=0.0, low_inclusive=False) / (2.0 * z)) ** 2
    delta = abs(check_real("difference", difference))
    if delta == 0:
        raise ValueError("`difference` must be non-zero")
    beta = check_real("power", power, low=0.0, high=1.0, low_inclusive=False,
                      high_inclusive=False)
    return (delta / (z + stats.norm.ppf(beta))) ** 2


def label_budget(gold: Any, judge_gold: Any, judge_unlabelled: Any = (), *,
                 width: float | None = None, difference: float | None = None,
                 power: float = 0.8, n_judged: int | None = None,
                 confidence_level: float = 0.95, cost_gold: float | None = None,
                 cost_judge: float | None = None, budget: float | None = None,
                 effective_n: float | None = None, n_max: int | None = None) -> xr.Dataset:
    r"""The number of gold labels a judge-corrected mean needs, from a pilot.

    **A pool of judged items** (``width`` or ``difference``): the judge scores ``n_judged``
    items (default: the pilot's labelled plus unlabelled ones); n of them get gold labels.
    The smallest n with :math:`V(n) = \sigma^2(1-\rho^2)/n + \sigma^2\rho^2/T` at most the
    target (module docstring), the target being :math:`(w / 2z)^2` for an interval of full
    width w, or :math:`(\delta / (z_{1-\alpha/2} + z_{power}))^2` to detect a difference
    :math:`\delta` with the given power (pass the per-item *differences* of two models' gold
    and judge scores on shared items as the pilot, so that :math:`\sigma` and :math:`\rho`
    are the difference's). Also the gold-only count :math:`\lceil\sigma^2/V\rceil`.

    **Costs** (``cost_gold``, ``cost_judge`` with ``effective_n`` or ``budget``, optional
    ``n_max``): ppi_py's ``ppi_mean_power`` (Broska, Howes and van Loon 2024), equal to it
    (``tests/test_judges.py``): the cheapest pair (n labelled, N further judged items) whose
    PPI variance equals gold-only's with ``effective_n`` labels, or the most powerful pair
    for ``budget``. ``width`` (or ``difference``) with costs sets
    ``effective_n`` to the gold-only count.

    Parameters
    ----------
    gold, judge_gold
        The pilot's gold labels and the judge's scores on the same items.
    judge_unlabelled
        The judge's scores on the pilot's unlabelled items (their number is the default
        ``n_judged``).
    width
        Target full width of the interval.
    difference
        Target difference to detect (instead of ``width``).
    power
        Power to detect ``difference``, in (0, 1).
    n_judged
        Items the judge scores in the study (labelled ones included).
    confidence_level
        Level of the interval (the test is at 1 - level).
    cost_gold, cost_judge
        Cost of one gold label and of one judge score.
    budget, effective_n
        The cost design's target (``budget`` wins when both are given, as in ppi_py).
    n_max
        At most this many items in the cost design.

    Returns
    -------
    xarray.Dataset
        Scalars ``n_gold`` (labels needed), ``n_unlabelled`` (further judged items),
        ``n_gold_only`` (labels without the judge), ``n_effective``, ``ppi_corr`` (rho),
        ``cost`` (cost design); ``attrs``: ``design``, ``nan_reason`` / ``note``.

    Raises
    ------
    ValueError
        Pilot lengths differ, fewer than two labels, a constant pilot, no target or two
        targets, a bad level, power, cost or ``n_judged``.

    Examples
    --------
    >>> import numpy as np
    >>> from evaluq.judges import label_budget
    >>> rng = np.random.default_rng(0)
    >>> gold = (rng.random(100) < 0.6).astype(float)
    >>> judge = np.where(rng.random(100) < 0.85, gold, 1 - gold)
    >>> plan = label_budget(gold, judge, width=0.1, n_judged=2000)
    >>> int(plan["n_gold"]), int(plan["n_gold_only"])
    (262, 384)
    """
    check_real("power", power, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    pilot_y = as_scores("gold", gold)
    pilot_f = as_scores("judge_gold", judge_gold)
    unl = as_scores("judge_unlabelled", judge_unlabelled, allow_empty=True)
    if pilot_y.size != pilot_f.size or pilot_y.size < 2:
        raise ValueError(f"`gold` and `judge_gold` must hold the same (at least two) pilot "
                         f"items; got lengths {pilot_y.size} and {pilot_f.size}")
    rho, sigma2 = pilot_correlation(pilot_y, pilot_f)
    if not np.isfinite(rho):
        raise ValueError("the pilot's gold or judge scores are constant: their correlation "
                         "(and so the judge's worth) is not defined")
    level = check_confidence_level(confidence_level)
    if cost_gold is not None or cost_judge is not None:
        return _cost_result(rho, sigma2, cost_gold, cost_judge, budget, effective_n, n_max,
                            width, difference, power, level)
    total = pilot_y.size + unl.size if n_judged is None else check_int(
        "n_judged", n_judged, minimum=2)
    target = _target_variance(width, difference, power, level)
    n, n_gold_only, reason = pool_design(rho, sigma2, target, total)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_eff = n * total / (n + (1 - rho**2) * (total - n))
    ds = xr.Dataset({"n_gold": n, "n_unlabelled": total - n, N_GOLD_ONLY: n_gold_only,
                     "n_effective": n_eff, "ppi_corr": rho, "cost": np.nan})
    ds.attrs = {"design": f"pool of {total} judged items, PPI++ at its optimal lambda",
                "target_variance": target}
    if reason is not None:
        ds.attrs["nan_reason"] = reason
    return ds


def _cost_result(rho: float, sigma2: float, cost_gold: Any, cost_judge: Any, budget: Any,
                 effective_n: Any, n_max: Any, width: Any, difference: Any, power: Any,
                 level: float) -> xr.Dataset:
    """The cost design (ppi_py's ``ppi_mean_power``) as a Dataset."""
    if cost_gold is None or cost_judge is None:
        raise ValueError("give both `cost_gold` and `cost_judge` for a cost design")
    c_gold = check_real("cost_gold", cost_gold, low=0.0, low_inclusive=False)
    c_judge = check_real("cost_judge", cost_judge, low=0.0)
    if budget is not None:
        budget = check_real("budget", budget, low=0.0, low_inclusive=False)
    elif effective_n is not None:
        effective_n = check_real("effective_n", effective_n, low=0.0, low_inclusive=False)
    elif width is not None or difference is not None:
        effective_n = math.ceil(sigma2 / _target_variance(width, difference, power, level))
    else:
        raise ValueError("a cost design needs `budget`, `effective_n`, `width` or "
                         "`difference`")
    if n_max is not None:
        n_max = check_int("n_max", n_max, minimum=1)
    result, note = cost_design(rho, c_gold, c_judge, budget, effective_n, n_max)
    ds = xr.Dataset({"n_gold": result["n"], "n_unlabelled": result["N"],
                     N_GOLD_ONLY: result["effective_n"], "n_effective": result["effective_n"],
                     "ppi_corr": rho, "cost": result["cost"]})
    ds.attrs = {"design": "cost (ppi_py's ppi_mean_power)"}
    if note is not None:
        ds.attrs["note"] = note
    return ds

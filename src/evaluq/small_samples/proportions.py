"""Exact answers for small binary samples: proportion intervals and McNemar's test.

Bowyer et al. (2025) show that the CLT (Wald) interval of an accuracy under-covers badly on
the small benchmarks language models are compared on (a few dozen items, accuracies near 0 or
1). :func:`proportion_interval` gives the Wilson, Clopper-Pearson, Jeffreys, Beta-posterior and
CLT intervals of any array of counts at once; :func:`mcnemar_test` compares two models'
per-item correctness on the same items (exact binomial or chi-square), for one pair or for
every pair of a ``(model, item)`` table by bit-packed popcounts (64 items a machine word).

Everything is vectorised: no Python loop over items or cells. The numbers agree with
``statsmodels.stats.proportion.proportion_confint`` and
``statsmodels.stats.contingency_tables.mcnemar`` to 1e-12 (``tests/test_proportions.py``),
edge cases included (see :func:`proportion_interval` for the conventions at ``x = 0`` and
``x = n``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np
import xarray as xr
from scipy import stats

from evaluq._apply import as_dataarray, pandas_as_dataarray
from evaluq._dims import (
    BOTH_CORRECT,
    BOTH_WRONG,
    COVERAGE,
    EXACT,
    ITEM,
    MODEL,
    MODEL_B,
    NAN_REASON,
    ONLY_A_CORRECT,
    ONLY_B_CORRECT,
    PVALUE,
    STATISTIC,
)
from evaluq._intervals import interval_array
from evaluq._kernels import clopper_pearson_bounds, wilson_bounds
from evaluq._validation import (
    as_float_array,
    broadcast_together,
    check_choice,
    check_confidence_level,
    check_memory,
    check_nonempty,
    check_real,
)
from evaluq.errors import CubeError

__all__ = ["PROPORTION_METHODS", "interval_coverage", "mcnemar_test", "paired_counts",
           "proportion_interval"]

ArrayLike = Any
Method = Literal["wilson", "clopper-pearson", "jeffreys", "beta", "clt"]
PROPORTION_METHODS: tuple[str, ...] = ("wilson", "clopper-pearson", "jeffreys", "beta", "clt")
"""The methods of :func:`proportion_interval` (each is also its interval's ``ci_kind``)."""
MCNEMAR_AUTO_EXACT_BELOW = 25
"""``exact="auto"`` uses the exact test when fewer discordant pairs than this (the usual
rule: the chi-square approximation needs b + c >= 25)."""


# --- numpy kernels ------------------------------------------------------------------------------

def _wald_bounds(x: np.ndarray, n: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray]:
    p = x / n
    half = z * np.sqrt(p * (1.0 - p) / n)
    return np.clip(p - half, 0.0, 1.0), np.clip(p + half, 0.0, 1.0)


def _beta_bounds(a: np.ndarray, b: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed quantiles of Beta(a, b): the ``tail`` and ``1 - tail`` quantiles."""
    return np.asarray(stats.beta.ppf(tail, a, b)), np.asarray(stats.beta.isf(tail, a, b))


def _proportion_bounds(x: np.ndarray, n: np.ndarray, method: str, confidence_level: float,
                       prior: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of the two-sided interval of ``x`` successes in ``n`` trials."""
    tail = (1.0 - confidence_level) / 2.0
    z = float(stats.norm.isf(tail))
    if method == "wilson":
        return wilson_bounds(x / n, n, z)
    if method == "clt":
        return _wald_bounds(x, n, z)
    if method == "clopper-pearson":
        return clopper_pearson_bounds(x, n, tail)
    a, b = (0.5, 0.5) if method == "jeffreys" else prior
    return _beta_bounds(a + x, b + n - x, tail)


def _discordant_pairs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both-correct counts S = A A^T and per-model totals of a (models x items) 0/1 matrix.

    The items are packed 64 to a machine word, so S_ij is a popcount of ``A_i & A_j`` summed
    over N / 64 words: exact integer arithmetic, 2x ``M^2 N / 64`` word operations (one
    vectorised row of pairs per model; a loop over models, never over items).
    """
    bits = np.packbits(np.asarray(a, dtype=bool), axis=-1)
    pad = (-bits.shape[-1]) % 8
    words = np.ascontiguousarray(np.pad(bits, ((0, 0), (0, pad)))).view(np.uint64)
    m = words.shape[0]
    both = np.empty((m, m), dtype=np.float64)
    for i in range(m):
        row = np.bitwise_count(words[i] & words[i:]).sum(axis=-1, dtype=np.int64)
        both[i, i:] = row
        both[i:, i] = row
    return both, np.diagonal(both).copy()


def _mcnemar_kernel(b: np.ndarray, c: np.ndarray, exact: np.ndarray,
                    correction: bool) -> tuple[np.ndarray, np.ndarray]:
    """Statistic and two-sided p-value from the discordant counts ``b``, ``c`` (arrays).

    Exact: statistic min(b, c), p = min(1, 2 P(Bin(b + c, 1/2) <= min(b, c))). Asymptotic:
    statistic (|b - c| - correction)^2 / (b + c) on chi-square(1); NaN without discordant pairs.
    """
    total = b + c
    small = np.minimum(b, c)
    p_exact = np.minimum(2.0 * stats.binom.cdf(small, total, 0.5), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        chi2 = (np.abs(b - c) - float(correction)) ** 2 / total
    chi2 = np.where(total > 0, chi2, np.nan)
    p_chi2 = stats.chi2.sf(chi2, 1)
    return np.where(exact, small, chi2), np.where(exact, p_exact, p_chi2)


# --- validation -----------------------------------------------------------------------------------

def _check_counts(name: str, values: np.ndarray) -> None:
    """Counts: no NaN or infinity, whole numbers, not negative; the error names the argument."""
    if np.isnan(values).any():
        raise ValueError(f"`{name}` contains {int(np.isnan(values).sum())} NaN value(s); "
                         f"counts must be given for every cell")
    if not np.isfinite(values).all():
        raise ValueError(f"`{name}` contains infinite values")
    if (values < 0).any():
        raise ValueError(f"`{name}` must be non-negative counts; got {values[values < 0][0]:g}")
    fractional = values != np.round(values)
    if fractional.any():
        raise ValueError(f"`{name}` must be whole numbers (counts); got {values[fractional][0]:g}")


def _as_count_arrays(successes: ArrayLike,
                     trials: ArrayLike) -> tuple[xr.DataArray, xr.DataArray]:
    """``successes`` and ``trials`` as two float DataArrays of one shape, validated."""
    successes = pandas_as_dataarray(successes, "successes")
    trials = pandas_as_dataarray(trials, "trials")
    x_in, n_in = successes, trials
    if not isinstance(x_in, xr.DataArray) and not isinstance(n_in, xr.DataArray):
        x_in, n_in = broadcast_together({"successes": x_in, "trials": n_in})
    x = as_dataarray(x_in, "successes", allow_bool=False)
    n = as_dataarray(n_in, "trials", allow_bool=False)
    if isinstance(successes, xr.DataArray) != isinstance(trials, xr.DataArray):
        known, other = (x, n) if isinstance(successes, xr.DataArray) else (n, x)
        if other.ndim and other.shape != known.shape:
            raise ValueError(f"`successes` of shape {x.shape} and `trials` of shape {n.shape} "
                             f"do not match (pass DataArrays to broadcast by dim name)")
        other = xr.DataArray(other.values, dims=known.dims if other.ndim else ())
        x, n = (known, other) if isinstance(successes, xr.DataArray) else (other, known)
    try:
        xr.align(x, n, join="exact")
    except ValueError:
        raise ValueError("`successes` and `trials` hold different labels on a dim they share, "
                         "so their counts cannot be paired: give both the same labels (or "
                         "plain arrays, paired by position)") from None
    x, n = xr.broadcast(x, n, exclude=())
    _check_counts("successes", x.values)
    _check_counts("trials", n.values)
    if (n.values <= 0).any():
        raise ValueError(f"`trials` must be positive; got {n.values[n.values <= 0][0]:g}")
    over = x.values > n.values
    if over.any():
        raise ValueError(f"`successes` exceeds `trials` in {int(over.sum())} cell(s) (first: "
                         f"{x.values[over][0]:g} > {n.values[over][0]:g})")
    return x, n


def _check_prior(prior: Any) -> tuple[float, float]:
    if not isinstance(prior, Sequence) or len(prior) != 2:
        raise ValueError(f"`prior` must be a pair (a, b) of Beta parameters; got {prior!r}")
    a = check_real("prior", prior[0], low=0.0, low_inclusive=False)
    b = check_real("prior", prior[1], low=0.0, low_inclusive=False)
    return a, b


def check_binary(name: str, values: np.ndarray) -> None:
    """Per-item correctness: 0 or 1 only, no NaN; the error names the argument and the value."""
    if np.isnan(values).any():
        raise ValueError(f"`{name}` contains {int(np.isnan(values).sum())} NaN score(s); every "
                         f"item needs a 0/1 score (nothing is dropped silently)")
    bad = (values != 0.0) & (values != 1.0)
    if bad.any():
        raise ValueError(f"`{name}` must hold 0/1 correctness scores; got {values[bad][0]:g} "
                         f"({int(bad.sum())} value(s) outside {{0, 1}})")


def as_correctness(x: ArrayLike, name: str, item_dim: Hashable) -> xr.DataArray:
    """A 0/1 DataArray with an ``item_dim`` (a plain array's last axis is the items)."""
    x = pandas_as_dataarray(x, name, (*(f"dim_{i}" for i in range(np.ndim(x) - 1)), item_dim))
    if isinstance(x, xr.DataArray):
        if item_dim not in x.dims:
            raise CubeError(f"`{name}` has no item dim {item_dim!r}; its dims are "
                            f"{list(x.dims)} (pass `item_dim=`)")
        da = x
    else:
        arr = np.asarray(x)
        if arr.ndim == 0:
            raise ValueError(f"`{name}` must hold one score per item; got a scalar")
        da = xr.DataArray(arr, dims=(*(f"dim_{i}" for i in range(arr.ndim - 1)), item_dim))
    if da.sizes[item_dim] == 0:
        raise ValueError(f"`{name}` is empty: it holds no item (dim {item_dim!r} of length 0)")
    if da.dtype.kind in "biu":      # integers and booleans stay as they are (no float copy)
        if da.dtype.kind != "b" and ((da.values < 0) | (da.values > 1)).any():
            bad = da.values[(da.values < 0) | (da.values > 1)]
            raise ValueError(f"`{name}` must hold 0/1 correctness scores; got {bad[0]} "
                             f"({len(bad)} value(s) outside {{0, 1}})")
        return da
    da = as_dataarray(da, name, allow_bool=True)
    check_binary(name, da.values)
    return da


def align_items(a: xr.DataArray, b: xr.DataArray, item_dim: Hashable,
                names: tuple[str, str]) -> tuple[xr.DataArray, xr.DataArray]:
    """Pair two correctness arrays item by item (by label when both have item labels).

    Different item sets are an error naming both arguments: an item scored for one model
    only carries no pairing information, and dropping it silently would change the test.
    """
    for name, x in zip(names, (a, b), strict=True):
        if not isinstance(x, xr.DataArray) or item_dim not in x.dims:
            raise TypeError(f"`{name}` must be an xarray.DataArray with an item dim "
                            f"{item_dim!r} (as_correctness makes one); got "
                            f"{type(x).__name__}")
    if a.sizes[item_dim] != b.sizes[item_dim] and not (item_dim in a.coords
                                                      and item_dim in b.coords):
        raise ValueError(f"`{names[0]}` has {a.sizes[item_dim]} items and `{names[1]}` "
                         f"{b.sizes[item_dim]}: the two must score the same items")
    if item_dim in a.coords and item_dim in b.coords:
        ia, ib = a.indexes[item_dim], b.indexes[item_dim]
        only_a, only_b = ia.difference(ib), ib.difference(ia)
        if len(only_a) or len(only_b) or ia.has_duplicates or ib.has_duplicates:
            raise ValueError(
                f"`{names[0]}` and `{names[1]}` must score the same items, each once: "
                f"{len(only_a)} item(s) only in `{names[0]}` {list(only_a[:3])}, "
                f"{len(only_b)} only in `{names[1]}` {list(only_b[:3])} (an item scored for "
                f"one model carries no pairing information; select the common items "
                f"explicitly)")
        b = b.sel({item_dim: ia})
    return a, b


# --- public functions -----------------------------------------------------------------------------

def proportion_interval(successes: ArrayLike, trials: ArrayLike, *, method: Method = "wilson",
                        confidence_level: float = 0.95,
                        prior: tuple[float, float] = (1.0, 1.0)) -> xr.DataArray:
    r"""Two-sided interval of a binomial proportion, for any array of counts at once.

    With :math:`x` successes in :math:`n` trials, :math:`\hat p = x / n`,
    :math:`\alpha = 1 - \text{confidence\_level}` and :math:`z = \Phi^{-1}(1 - \alpha/2)`:

    - ``"wilson"`` (score interval): :math:`\frac{\hat p + z^2/2n}{1 + z^2/n} \pm
      \frac{z}{1 + z^2/n}\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}`;
    - ``"clopper-pearson"`` (exact): :math:`[B_{\alpha/2}(x, n-x+1),
      B_{1-\alpha/2}(x+1, n-x)]` with :math:`B_q(a, b)` the q-quantile of Beta(a, b); the lower
      end is 0 at :math:`x = 0` and the upper end 1 at :math:`x = n` (statsmodels' ``"beta"``:
      the other end keeps :math:`\alpha/2`, it is not widened to a one-sided :math:`\alpha`);
    - ``"jeffreys"``: the equal-tailed interval of the Beta(x + 1/2, n - x + 1/2) posterior,
      without Brown, Cai & DasGupta's modification at the edges (so, as in statsmodels, the
      lower end at :math:`x = 0` is a small positive quantile, not 0);
    - ``"beta"``: the equal-tailed interval of the Beta(a + x, b + n - x) posterior with
      ``prior=(a, b)`` (bayes_evals' interval with its default uniform prior (1, 1));
    - ``"clt"``: the Wald interval :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}` (statsmodels'
      ``"normal"``), which collapses to [0, 0] at :math:`x = 0` and [1, 1] at :math:`x = n`.

    Wilson and CLT ends are clipped to [0, 1], as statsmodels does.

    Parameters
    ----------
    successes, trials : array-like or DataArray
        Counts, broadcast against each other (by dim name when DataArrays; numpy rules
        otherwise). Whole numbers, ``0 <= successes <= trials``, ``trials >= 1``.
    method : {"wilson", "clopper-pearson", "jeffreys", "beta", "clt"}
    confidence_level : float
        In (0, 1).
    prior : (float, float)
        Beta prior of ``method="beta"`` (ignored by the other methods).

    Returns
    -------
    xarray.DataArray
        The counts' dims (``dim_0``, ... for plain arrays) plus a last ``ci_bound`` dim
        (``lower``, ``upper``); attrs ``ci_kind`` (= ``method``) and ``confidence_level``.

    References
    ----------
    Brown, Cai & DasGupta (2001), Interval estimation for a binomial proportion, Statistical
    Science 16, 101-133. Bowyer, Aitchison & Ivanova (2025), Don't use the CLT in LLM evals with
    fewer than a few hundred datapoints, ICML.

    Examples
    --------
    >>> import evaluq as eq
    >>> ci = eq.proportion_interval([28, 30], 30, method="clopper-pearson")
    >>> ci.round(4).values.tolist()
    [[0.7793, 0.9918], [0.8843, 1.0]]
    >>> eq.proportion_interval(28, 30, method="clt").round(4).values.tolist()
    [0.8441, 1.0]
    """
    check_choice("method", method, PROPORTION_METHODS)
    level = check_confidence_level(confidence_level)
    a_b = _check_prior(prior)
    x, n = _as_count_arrays(successes, trials)
    lower, upper = _proportion_bounds(x.values, n.values, method, level, a_b)
    ci = interval_array(x.copy(data=lower), x.copy(data=upper), kind=method,
                        confidence_level=level, name="proportion_interval")
    ci.attrs["method"] = method
    if method == "beta":
        ci.attrs["prior"] = list(a_b)
    return ci


def interval_coverage(trials: Sequence[int] | int, p: Sequence[float] | float, *,
                      method: Method = "wilson", confidence_level: float = 0.95,
                      prior: tuple[float, float] = (1.0, 1.0)) -> xr.DataArray:
    r"""Exact coverage of :func:`proportion_interval`: no simulation, a sum over the outcomes.

    .. math::

        C(n, p) = \sum_{x=0}^{n} \binom{n}{x} p^x (1-p)^{n-x}\,
        \mathbb 1[L(x, n) \le p \le U(x, n)].

    Parameters
    ----------
    trials : int or sequence of int
        Numbers of trials n (each >= 1).
    p : float or sequence of float
        True proportions, in [0, 1].
    method, confidence_level, prior
        As :func:`proportion_interval`.

    Returns
    -------
    xarray.DataArray
        ``coverage`` over dims ``trials`` and ``p`` (with those coordinates).

    Examples
    --------
    >>> import evaluq as eq
    >>> from evaluq.small_samples.proportions import interval_coverage
    >>> interval_coverage([30], [0.95], method="clt").round(4).values.tolist()
    [[0.7821]]
    """
    ns = np.atleast_1d(as_float_array("trials", trials))
    ps = np.atleast_1d(as_float_array("p", p))
    if ns.ndim != 1 or ps.ndim != 1:
        raise ValueError("`trials` and `p` must be scalars or 1-D sequences")
    check_nonempty("trials", ns)
    check_nonempty("p", ps)
    _check_counts("trials", ns.astype(np.float64))
    if (ns < 1).any():
        raise ValueError(f"`trials` must be positive; got {ns[ns < 1][0]:g}")
    ns = ns.astype(np.int64)
    if np.isnan(ps).any() or (ps < 0).any() or (ps > 1).any():
        raise ValueError(f"`p` must hold proportions in [0, 1]; got {ps.tolist()}")
    # per outcome: x, n, both ends, and a pmf and a mask per p
    check_memory("trials", (int(ns.max()) + 1) * (8 * 6 + 9 * len(ps)),
                 hint=" (the coverage sums over all n + 1 outcomes of the largest n)")
    out = np.empty((len(ns), len(ps)))
    for i, n in enumerate(ns.astype(int)):   # a loop over the few n, never over outcomes
        x = np.arange(n + 1, dtype=np.float64)
        ci = proportion_interval(x, np.full_like(x, n), method=method,
                                 confidence_level=confidence_level, prior=prior).values
        covered = (ci[:, :1] <= ps) & (ps <= ci[:, 1:])
        out[i] = (stats.binom.pmf(x[:, None], n, ps) * covered).sum(axis=0)
    return xr.DataArray(out, dims=("trials", "p"), coords={"trials": ns, "p": ps},
                        name=COVERAGE, attrs={"method": method,
                                              "confidence_level": float(confidence_level)})


def _exact_mask(exact: bool | str, total: np.ndarray) -> np.ndarray:
    if exact == "auto":
        return np.asarray(total < MCNEMAR_AUTO_EXACT_BELOW)
    return np.full(np.shape(total), bool(exact))


def _mcnemar_dataset(b: xr.DataArray, c: xr.DataArray, both: xr.DataArray | None,
                     neither: xr.DataArray | None, exact: bool | str,
                     correction: bool) -> xr.Dataset:
    mask = _exact_mask(exact, (b + c).values)
    stat, p = _mcnemar_kernel(b.values, c.values, mask, correction)
    ds = xr.Dataset({ONLY_A_CORRECT: b, ONLY_B_CORRECT: c,
                     STATISTIC: b.copy(data=stat), PVALUE: b.copy(data=p),
                     EXACT: b.copy(data=mask)})
    if both is not None and neither is not None:
        ds[BOTH_CORRECT], ds[BOTH_WRONG] = both, neither
    if np.isnan(p).any():
        reason = "no discordant pairs: the asymptotic statistic 0/0 is undefined"
        ds[STATISTIC].attrs[NAN_REASON] = ds[PVALUE].attrs[NAN_REASON] = reason
    ds.attrs.update(test="McNemar", correction=bool(correction), exact=str(exact),
                    alternative="two-sided")
    return ds


def _all_pairs(table: xr.DataArray, model_dim: Hashable,
               item_dim: Hashable) -> tuple[xr.DataArray, ...]:
    """The 2x2 counts of every (model, model_b) pair of a (model, item) table."""
    if set(table.dims) != {model_dim, item_dim}:
        raise CubeError(f"`correct_a` must have exactly the dims {model_dim!r} and {item_dim!r} "
                        f"for the all-pairs form; got {list(table.dims)}")
    values = table.transpose(model_dim, item_dim).values
    both, n_right = _discordant_pairs(values == 1)
    n_items = values.shape[-1]
    coords: dict[Hashable, Any] = {}
    if model_dim in table.coords:
        labels = table[model_dim].values
        coords = {model_dim: labels, MODEL_B: labels}

    def pair(v: np.ndarray) -> xr.DataArray:
        return xr.DataArray(v, dims=(model_dim, MODEL_B), coords=coords)

    only_a = n_right[:, None] - both
    only_b = n_right[None, :] - both
    return (pair(only_a), pair(only_b), pair(both),
            pair(n_items - both - only_a - only_b))


def mcnemar_test(correct_a: ArrayLike, correct_b: ArrayLike | None = None, *,
                 exact: bool | Literal["auto"] = True, correction: bool = True,
                 item_dim: Hashable = ITEM, model_dim: Hashable = MODEL) -> xr.Dataset:
    r"""McNemar's test of two models' per-item correctness on the same items.

    With :math:`b` the items only the first model gets right and :math:`c` those only the
    second gets right, under the null of equal accuracy :math:`b \mid b + c \sim
    \text{Bin}(b + c, 1/2)`.

    - ``exact=True``: statistic :math:`\min(b, c)`, two-sided p-value
      :math:`\min(1, 2 P(\text{Bin}(b+c, 1/2) \le \min(b, c)))` (statsmodels' ``mcnemar(
      exact=True)``, scipy's ``binomtest(b, b + c)``); p = 1 without discordant pairs.
    - ``exact=False``: statistic :math:`(|b - c| - k)^2 / (b + c)` on chi-square(1), with
      :math:`k = 1` (``correction=True``, Edwards) or 0; NaN with a ``nan_reason`` when
      :math:`b + c = 0` (statsmodels returns inf and p = 0 there with the correction).
    - ``exact="auto"``: exact where :math:`b + c < 25`, asymptotic elsewhere (the ``exact``
      variable says which, per cell).

    Parameters
    ----------
    correct_a : array-like or DataArray
        0/1 correctness, items on ``item_dim`` (a plain array's last axis). Without
        ``correct_b``: a ``(model, item)`` table, and every pair of models is tested at once
        (bit-packed counts: 100 models x 10^5 items in a fraction of a second).
    correct_b : array-like or DataArray, optional
        The second model's 0/1 correctness on the same items; other dims broadcast against
        ``correct_a`` (e.g. every model against one baseline). Items are paired by label
        when both have item coordinates.
    exact : bool or "auto"
    correction : bool
        Continuity correction of the asymptotic statistic.
    item_dim, model_dim : hashable
        Names of the item and model dims.

    Returns
    -------
    xarray.Dataset
        ``only_a_correct`` (b), ``only_b_correct`` (c), ``statistic``, ``pvalue``, ``exact``,
        and, for the all-pairs form, ``both_correct`` and ``both_wrong``; dims
        ``(model, model_b)`` for the all-pairs form, else the broadcast non-item dims.

    References
    ----------
    McNemar (1947), Psychometrika 12, 153-157. Edwards (1948), Psychometrika 13, 185-187.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> a = np.array([1, 1, 1, 1, 1, 1, 1, 0, 1, 1])
    >>> b = np.array([0, 0, 1, 0, 1, 1, 0, 0, 1, 1])
    >>> res = eq.mcnemar_test(a, b)
    >>> int(res.only_a_correct), int(res.only_b_correct), round(float(res.pvalue), 4)
    (4, 0, 0.125)
    """
    if exact not in (True, False, "auto"):
        raise ValueError(f"`exact` must be True, False or 'auto'; got {exact!r}")
    counts = paired_counts(correct_a, correct_b, item_dim=item_dim, model_dim=model_dim)
    keep = correct_b is None
    return _mcnemar_dataset(counts[ONLY_A_CORRECT], counts[ONLY_B_CORRECT],
                            counts[BOTH_CORRECT] if keep else None,
                            counts[BOTH_WRONG] if keep else None, exact, bool(correction))


def paired_counts(correct_a: ArrayLike, correct_b: ArrayLike | None = None, *,
                  item_dim: Hashable = ITEM, model_dim: Hashable = MODEL) -> xr.Dataset:
    """The 2x2 right/wrong table of two models on the same items (or of every pair).

    Parameters are those of :func:`mcnemar_test`: one ``(model, item)`` table gives every
    ``(model, model_b)`` pair at once (bit-packed counts); two arrays give one table per cell
    of their broadcast non-item dims. Inputs are validated (0/1, no NaN, the same items).

    Returns
    -------
    xarray.Dataset
        ``both_correct``, ``only_a_correct``, ``only_b_correct``, ``both_wrong``.

    Examples
    --------
    >>> from evaluq.small_samples.proportions import paired_counts
    >>> t = paired_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 0])
    >>> [int(t[v]) for v in ("both_correct", "only_a_correct", "only_b_correct", "both_wrong")]
    [1, 2, 1, 1]
    """
    if correct_b is None:
        correct_a = pandas_as_dataarray(correct_a, "correct_a", (model_dim, item_dim))
    if correct_b is None and not isinstance(correct_a, xr.DataArray):
        arr = np.asarray(correct_a)
        if arr.ndim != 2:
            raise ValueError(f"`correct_a` must be a (model, item) table when `correct_b` is "
                             f"not given; got shape {arr.shape}")
        correct_a = xr.DataArray(arr, dims=(model_dim, item_dim))
    a = as_correctness(correct_a, "correct_a", item_dim)
    if correct_b is None:
        only_a, only_b, both, neither = _all_pairs(a, model_dim, item_dim)
    else:
        b = as_correctness(correct_b, "correct_b", item_dim)
        a, b = align_items(a, b, item_dim, ("correct_a", "correct_b"))
        b = b.drop_vars([item_dim], errors="ignore").assign_coords(
            {item_dim: a[item_dim]} if item_dim in a.coords else {})
        only_a = (a * (1.0 - b)).sum([item_dim])
        only_b = ((1.0 - a) * b).sum([item_dim])
        both = (a * b).sum([item_dim])
        neither = ((1.0 - a) * (1.0 - b)).sum([item_dim])
    return xr.Dataset({BOTH_CORRECT: both, ONLY_A_CORRECT: only_a, ONLY_B_CORRECT: only_b,
                       BOTH_WRONG: neither})

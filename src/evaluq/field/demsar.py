r"""Demšar's (2006) comparison of several models over several data sets, as autorank does it.

The blocks are the cube's languages (tasks, data sets), the scores the seed means; in each block
the models are ranked, rank 1 = best (from the cube's ``higher_is_better``), ties getting the
average of the ranks they span.

- :func:`friedman_test`: the Friedman test that all models have the same mean rank, with its
  Iman-Davenport F form;
- :func:`critical_difference`: the mean ranks, the post-hoc test of every pair (Nemenyi's
  critical difference, or pairwise Wilcoxon signed-rank tests with Holm's correction), and the
  groups of models the test cannot separate, which :func:`evaluq.plots.critical_difference_diagram`
  draws as bars.

The ranks ignore how large the differences are and the seed noise within a cell: they answer
"does one model rank ahead across data sets", with the data sets as the only replication.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd
import xarray as xr

from evaluq._dims import GROUP, IN_GROUP, MEAN_RANK, MODEL, MODEL_B, NAN_REASON, PVALUE, SIGNIFICANT
from evaluq._kernels import holm
from evaluq._results import ResultBase
from evaluq._validation import check_choice, check_int, check_real
from evaluq._warn import warn
from evaluq.errors import EvaluqWarning
from evaluq.field._blocks import Blocks, block_scores

__all__ = ["FriedmanResult", "critical_difference", "friedman_test", "nemenyi_q"]

TESTS = ("nemenyi", "wilcoxon-holm")
CHI2_MIN_BLOCKS: Final = 10
"""Demšar's (2006) rule of thumb: Friedman's chi-square approximation needs more than 10 blocks
(data sets); with this many or fewer :func:`friedman_test` warns and gives the exact p."""
EXACT_BUDGET: Final = 200_000
"""Rank-sum vectors (states times orderings of a block) the exact Friedman p-value may hold at
once: well under a second; beyond it the exact p is not computed."""


# --- kernels (numpy) ---------------------------------------------------------------------------


def _block_ranks(scores: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Ranks of the models within each block (rows), 1 = best, ties averaged."""
    from scipy.stats import rankdata

    return rankdata(-scores if higher_is_better else scores, axis=1)


def _friedman_kernel(ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Friedman's chi-square with the tie correction (as scipy.stats.friedmanchisquare) and its
    p-value, over the last two axes (block, model) of ``ranks``; NaN where every block is one
    tie (no ordering anywhere)."""
    from scipy.stats import chi2

    n, k = ranks.shape[-2:]
    # sum over tie groups of t (t^2 - 1) = sum over models of (size of its tie group)^2 - 1
    group = (ranks[..., :, None] == ranks[..., None, :]).sum(axis=-1)
    ties = (group.astype(float) ** 2 - 1).sum(axis=(-2, -1))
    c = 1 - ties / (k * (k * k - 1) * n)
    ssbn = np.sum(ranks.sum(axis=-2) ** 2, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(c > 0, (12.0 / (k * n * (k + 1)) * ssbn - 3 * n * (k + 1)) / c, np.nan)
    return stat, chi2.sf(stat, k - 1)


def _orderings(row: np.ndarray) -> int:
    """The number of distinct orderings of one block's ranks: k! over the ties' t!."""
    _, counts = np.unique(row, return_counts=True)
    return math.factorial(row.size) // math.prod(math.factorial(int(t)) for t in counts)


def _friedman_exact(ranks: np.ndarray) -> float | None:
    r"""The exact permutation p-value of Friedman's statistic, or None beyond
    :data:`EXACT_BUDGET`.

    Under the null every ordering of a block's ranks (its ties kept) is equally likely,
    independently across blocks; the statistic grows with :math:`\sum_j R_j^2` (rank sums
    :math:`R_j`; the tie correction is the same for every ordering), so the p-value is
    :math:`P(\sum_j R_j^2 \ge` observed). The distribution of the rank-sum vector is built
    block by block (integers: the ranks doubled), each vector kept sorted (the models are
    exchangeable under the null), with its probability.
    """
    k = ranks.shape[1]
    doubled = np.rint(2 * ranks).astype(np.int64)
    observed = int(np.sum(doubled.sum(axis=0) ** 2))
    states, prob = np.zeros((1, k), dtype=np.int64), np.ones(1)
    for row in doubled:
        if k > 8 or states.shape[0] * _orderings(row) > EXACT_BUDGET:
            return None
        orders = np.unique(np.array(list(itertools.permutations(row))), axis=0)
        sums = (states[:, None, :] + orders[None, :, :]).reshape(-1, k)
        sums.sort(axis=1)
        states, inverse = np.unique(sums, axis=0, return_inverse=True)
        prob = np.bincount(inverse.ravel(), minlength=states.shape[0],
                           weights=np.repeat(prob / orders.shape[0], orders.shape[0]))
    return float(min(1.0, prob[np.sum(states ** 2, axis=1) >= observed].sum()))


def _warn_few_blocks(pvalue: float, exact: float | None, n: int) -> None:
    """Friedman's chi-square over few blocks: say how far to trust it, with the exact p."""
    exact_text = (f"the exact permutation p-value is {exact:.4g} (attrs['exact_pvalue'])"
                  if exact is not None else "the exact p-value is too costly to compute for "
                  "this many models: read the p-value as rough")
    warn(f"Friedman test over {n} languages (blocks): the chi-square p-value ({pvalue:.4g}) is "
         f"an approximation that is poor with {CHI2_MIN_BLOCKS} blocks or fewer (Demšar 2006); "
         f"{exact_text}", EvaluqWarning)


def _iman_davenport(stat: float, n: int, k: int) -> tuple[float, float, tuple[int, int]]:
    """Iman and Davenport's F = (N - 1) chi2 / (N (k - 1) - chi2) on (k-1, (k-1)(N-1)) df."""
    from scipy.stats import f

    dfs = (k - 1, (k - 1) * (n - 1))
    if np.isnan(stat):
        return np.nan, np.nan, dfs
    denom = n * (k - 1) - stat
    if denom <= 0:       # every block ranks the models the same way: F is infinite
        return np.inf, 0.0, dfs
    fstat = (n - 1) * stat / denom
    return float(fstat), float(f.sf(fstat, *dfs)), dfs


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    r"""Demšar's critical value :math:`q_\alpha` of the Nemenyi test for ``k`` models.

    :math:`q_\alpha = q_{1-\alpha}(k, \infty) / \sqrt 2`, with :math:`q_{1-\alpha}(k, \infty)`
    the quantile of the studentized range of ``k`` means with infinite degrees of freedom
    (:data:`scipy.stats.studentized_range`, computed by numerical integration).

    Parameters
    ----------
    k
        The number of models compared, an integer from 2 to 1000.
    alpha
        The significance level, in (0, 1).

    Returns
    -------
    float
        :math:`q_\alpha`; the critical difference of mean ranks over ``n`` blocks is
        :math:`q_\alpha \sqrt{k (k + 1) / (6 n)}`.

    Examples
    --------
    >>> from evaluq.field.demsar import nemenyi_q
    >>> round(nemenyi_q(4), 3)     # Demšar (2006), Table 5(a): 2.569
    2.569
    """
    k = check_int("k", k, minimum=2, maximum=1000)
    alpha = check_real("alpha", alpha, low=0.0, high=1.0, low_inclusive=False,
                       high_inclusive=False)
    return _nemenyi_q(k, alpha)


def _nemenyi_q(k: int, alpha: float) -> float:
    """:func:`nemenyi_q` without the checks (its callers pass checked values)."""
    from scipy.stats import studentized_range

    return float(studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2))


def _nemenyi(mean_ranks: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, float]:
    """Nemenyi's p-values of every pair and the critical difference."""
    from scipy.stats import studentized_range

    k = mean_ranks.size
    se = np.sqrt(k * (k + 1) / (12.0 * n))            # SE of a rank difference / sqrt(2)
    diff = np.abs(mean_ranks[:, None] - mean_ranks[None, :])
    p = studentized_range.sf(diff / se, k, np.inf)
    np.fill_diagonal(p, np.nan)
    return p, _nemenyi_q(k, alpha) * np.sqrt(k * (k + 1) / (6.0 * n))


def _wilcoxon_holm(scores: np.ndarray) -> np.ndarray:
    """Holm-adjusted two-sided Wilcoxon signed-rank p-values of every pair (Pratt's zeros)."""
    from scipy.stats import wilcoxon

    k = scores.shape[1]
    i, j = np.triu_indices(k, 1)
    d = scores[:, i] - scores[:, j]
    p = np.ones(i.size)                  # a pair with identical scores everywhere: no evidence
    # one call per pair (k (k - 1) / 2 of them): scipy's `axis=` form picks the exact or the
    # normal method once for all slices, so a slice without zeros would not get the exact p
    for q in np.flatnonzero(np.any(d != 0, axis=0)):
        p[q] = wilcoxon(d[:, q], zero_method="pratt").pvalue
    out = np.full((k, k), np.nan)
    out[i, j] = out[j, i] = holm(p)
    return out


def _warn_wilcoxon_unattainable(n: int, k: int, alpha: float) -> None:
    """Warn when no pair can pass Wilcoxon-Holm: the smallest two-sided p of the exact
    signed-rank test over ``n`` blocks, :math:`2 / 2^n` (every difference of one sign), times
    Holm's ``m = k (k - 1) / 2`` for the smallest p, is above ``alpha``."""
    pairs = k * (k - 1) // 2
    smallest = pairs * 2.0 ** (1 - n)
    if smallest <= alpha:
        return
    needed = 1 + math.ceil(math.log2(pairs / alpha))
    holm_text = f", {smallest:.4g} after Holm's correction for {pairs} pairs" if pairs > 1 else ""
    warn(f"Wilcoxon-Holm over {n} languages (blocks): the smallest p-value a two-sided "
         f"Wilcoxon signed-rank test can give is 2/2^{n} = {2.0 ** (1 - n):.4g}{holm_text}, "
         f"above `alpha` = {alpha:g}: no pair can be found different, whatever the scores. "
         f"At least {needed} languages are needed for {k} models at this `alpha`",
         EvaluqWarning)


def _nemenyi_blocks_needed(k: int, alpha: float) -> int:
    """The fewest blocks N over which Nemenyi's critical difference q sqrt(k (k+1) / (6 N))
    is below k - 1, the largest difference of mean ranks (one model first and the other last
    in every block): N > q^2 k (k+1) / (6 (k-1)^2), checked on the CD itself (a pair
    differs when its difference exceeds the CD)."""
    q = _nemenyi_q(k, alpha)
    needed = max(1, math.floor(q * q * k * (k + 1) / (6.0 * (k - 1) ** 2)))
    while q * math.sqrt(k * (k + 1) / (6.0 * needed)) >= k - 1:
        needed += 1
    while needed > 1 and q * math.sqrt(k * (k + 1) / (6.0 * (needed - 1))) < k - 1:
        needed -= 1
    return needed


def _warn_nemenyi_unattainable(cd: float, n: int, k: int, alpha: float) -> None:
    """Warn when no pair can pass Nemenyi's test: the critical difference is at least
    :math:`k - 1`, the largest difference of mean ranks ``k`` models can have over any number
    of blocks, so no difference of mean ranks exceeds it."""
    if cd < k - 1:
        return
    warn(f"Nemenyi over {n} languages (blocks): the critical difference {cd:.4g} is not below "
         f"{k - 1}, the largest difference of mean ranks {k} models can have (one first and "
         f"the other last in every language): no pair can be found different, whatever the "
         f"scores. At least {_nemenyi_blocks_needed(k, alpha)} languages are needed for {k} "
         f"models at this `alpha`", EvaluqWarning)


def _rank_groups(mean_ranks: np.ndarray, significant: np.ndarray) -> list[tuple[int, ...]]:
    """Maximal runs of models, in mean-rank order, with no significant pair inside.

    For the Nemenyi test this is autorank's ``get_sorted_rank_groups`` (for each model the
    farthest model within the critical difference; a run kept when it reaches farther than
    every earlier one); the same rule serves any pairwise test. Returns model indices.
    """
    order = np.argsort(mean_ranks, kind="stable")
    sig = significant[np.ix_(order, order)]
    groups: list[tuple[int, ...]] = []
    reach = -1
    for a in range(order.size):
        b = a
        while b + 1 < order.size and not sig[a:b + 2, a:b + 2].any():
            b += 1
        if b > a and b > reach:
            reach = b
            groups.append(tuple(int(m) for m in order[a:b + 1]))
    return groups


# --- the Friedman test -------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class FriedmanResult(ResultBase):
    """The Friedman test over blocks, with the Iman-Davenport F form.

    Attributes
    ----------
    statistic, pvalue : float
        Friedman's chi-square (tie-corrected) on k - 1 degrees of freedom, and its p-value.
    f_statistic, f_pvalue : float
        Iman and Davenport's F and its p-value on ``f_df`` degrees of freedom (less
        conservative than the chi-square; Demšar recommends it).
    f_df : tuple of int
        The F's degrees of freedom, (k - 1, (k - 1)(N - 1)).
    mean_rank : xarray.DataArray
        The models' mean ranks (1 = best).
    n_blocks, n_models : int
    attrs : dict
        ``metric``, ``higher_is_better``, ``n_missing_runs`` and, for a NaN statistic,
        ``nan_reason``.
    """

    statistic: float
    pvalue: float
    f_statistic: float
    f_pvalue: float
    f_df: tuple[int, int]
    mean_rank: xr.DataArray
    n_blocks: int
    n_models: int
    attrs: dict[str, Any]

    @property
    def estimate(self) -> float:
        """The Friedman statistic."""
        return self.statistic

    def confidence_interval(self, confidence_level: float | None = None) -> xr.DataArray:
        """A test of equal mean ranks has no interval: raises TypeError.

        Parameters
        ----------
        confidence_level : float, optional
            Ignored.
        """
        raise TypeError("a Friedman test has no confidence interval; see `pvalue`")

    def to_dataset(self) -> xr.Dataset:
        """The statistics as scalars plus ``mean_rank`` (model); a NaN statistic carries the
        ``nan_reason``."""
        ds = xr.Dataset({"statistic": self.statistic, "pvalue": self.pvalue,
                         "f_statistic": self.f_statistic, "f_pvalue": self.f_pvalue,
                         MEAN_RANK: self.mean_rank}, attrs=dict(self.attrs))
        for name in ("statistic", "pvalue", "f_statistic", "f_pvalue"):
            if np.isnan(ds[name].values) and NAN_REASON in self.attrs:
                ds[name].attrs[NAN_REASON] = self.attrs[NAN_REASON]
        return ds

    def to_dataframe(self) -> pd.DataFrame:
        """One row of the test's statistics."""
        return pd.DataFrame([{"statistic": self.statistic, "pvalue": self.pvalue,
                              "f_statistic": self.f_statistic, "f_pvalue": self.f_pvalue,
                              "n_blocks": self.n_blocks, "n_models": self.n_models}])

    def _fields(self) -> dict[str, Any]:
        return {"statistic": self.statistic, "pvalue": self.pvalue,
                "f_statistic": self.f_statistic, "f_pvalue": self.f_pvalue,
                "n_blocks": self.n_blocks, "n_models": self.n_models}


def _mean_rank_array(blocks: Blocks, ranks: np.ndarray) -> xr.DataArray:
    return xr.DataArray(ranks.mean(axis=0), dims=(MODEL,), coords={MODEL: blocks.models},
                        name=MEAN_RANK)


def _attrs(blocks: Blocks) -> dict[str, Any]:
    return {"metric": blocks.metric, "higher_is_better": int(blocks.higher_is_better),
            "n_blocks": len(blocks.blocks), "n_models": len(blocks.models),
            "n_missing_runs": blocks.n_missing_runs}


def friedman_test(cube: xr.Dataset) -> FriedmanResult:
    r"""Friedman's test that every model has the same mean rank over the languages.

    With :math:`R_{ij}` the rank of model j in block (language) i of N, 1 = best, ties
    averaged, and :math:`\bar R_j` the mean ranks of the k models,

    .. math::
        \chi^2_F = \frac{12 N}{k (k+1)} \Big[\sum_j \bar R_j^2 - \frac{k (k+1)^2}{4}\Big]
        \Big/ \Big(1 - \frac{\sum_i \sum_t (t^3 - t)}{N (k^3 - k)}\Big)

    on k - 1 degrees of freedom (the denominator corrects for ties of t models; it is
    :func:`scipy.stats.friedmanchisquare`), and Iman and Davenport's
    :math:`F_F = (N - 1)\chi^2_F / (N (k - 1) - \chi^2_F)` on (k - 1, (k - 1)(N - 1)).

    Parameters
    ----------
    cube : xarray.Dataset
        An evaluation cube with at least 2 models and 2 languages; a language's score is the
        seed mean (NaN runs left out; a model missing a language raises).

    Returns
    -------
    FriedmanResult
        ``statistic`` / ``pvalue`` (chi-square), ``f_statistic`` / ``f_pvalue``
        (Iman-Davenport), ``mean_rank``. Every language a single tie of all models: statistic
        NaN (``attrs["nan_reason"]``); the same strict order in every language: F infinite,
        ``f_pvalue`` 0. With 10 languages or fewer, ``attrs["exact_pvalue"]``: the exact
        permutation p-value of the statistic (every ordering of each language's ranks, ties
        kept, equally likely), where it takes under a second (up to 8 models).

    Warns
    -----
    EvaluqWarning
        10 languages or fewer (Demšar's rule of thumb for the chi-square approximation),
        with the exact p-value (N = 2, k = 3: chi-square p 0.61 where the exact p is 0.83).

    References
    ----------
    Friedman, M. (1937). JASA 32, 675-701. Iman, R. L. & Davenport, J. M. (1980).
    Communications in Statistics A 9, 571-595. Demšar, J. (2006). Statistical comparisons of
    classifiers over multiple data sets. JMLR 7, 1-30.

    Examples
    --------
    >>> import warnings, numpy as np, evaluq as eq
    >>> score = np.array([[[0.9], [0.8], [0.7]], [[0.8], [0.7], [0.6]], [[0.7], [0.9], [0.5]]])
    >>> with warnings.catch_warnings(record=True) as caught:     # 3 languages: it warns
    ...     warnings.simplefilter("always")
    ...     res = eq.friedman_test(eq.from_arrays(score, models=["a", "b", "c"]))
    >>> round(res.statistic, 4), res.mean_rank.values.tolist()
    (2.0, [1.3333333333333333, 2.3333333333333335, 2.3333333333333335])
    >>> round(res.pvalue, 4), round(res.attrs["exact_pvalue"], 4)   # chi-square, exact
    (0.3679, 0.5278)
    """
    blocks = block_scores(cube)
    ranks = _block_ranks(blocks.scores, blocks.higher_is_better)
    n, k = ranks.shape
    stat, p = (float(v) for v in _friedman_kernel(ranks))
    fstat, fp, dfs = _iman_davenport(stat, n, k)
    attrs = _attrs(blocks)
    if np.isnan(stat):
        attrs[NAN_REASON] = "every language is a tie of all models: no ranking to test"
    elif n <= CHI2_MIN_BLOCKS:
        exact = _friedman_exact(ranks)
        if exact is not None:
            attrs["exact_pvalue"] = exact
        _warn_few_blocks(p, exact, n)
    return FriedmanResult(statistic=stat, pvalue=p, f_statistic=fstat, f_pvalue=fp, f_df=dfs,
                          mean_rank=_mean_rank_array(blocks, ranks), n_blocks=n, n_models=k,
                          attrs=attrs)


# --- the critical difference -------------------------------------------------------------------


def _pair_array(values: np.ndarray, models: np.ndarray, name: str) -> xr.DataArray:
    out = xr.DataArray(values, dims=(MODEL, MODEL_B),
                       coords={MODEL: models, MODEL_B: models}, name=name)
    if values.dtype.kind == "f":
        out.attrs[NAN_REASON] = "a model against itself (the diagonal) is not tested"
    return out


def _group_array(groups: list[tuple[int, ...]], models: np.ndarray) -> xr.DataArray:
    member = np.zeros((len(groups), models.size), dtype=bool)
    for g, idx in enumerate(groups):
        member[g, list(idx)] = True
    return xr.DataArray(member, dims=(GROUP, MODEL),
                        coords={GROUP: np.arange(len(groups)), MODEL: models}, name=IN_GROUP)


def critical_difference(cube: xr.Dataset, *, test: str = "nemenyi",
                        alpha: float = 0.05) -> xr.Dataset:
    r"""Mean ranks, the post-hoc test of every pair and the groups of a CD diagram.

    **Nemenyi** (Demšar 2006, as autorank): two models differ when their mean ranks differ by
    more than the critical difference

    .. math:: CD = q_\alpha \sqrt{k (k+1) / (6 N)}, \qquad
              q_\alpha = q_{1-\alpha}(k, \infty) / \sqrt 2

    (:func:`nemenyi_q`, the studentized range quantile computed exactly by scipy; autorank
    takes statsmodels' ``qsturng``, an approximation that differs in the 5th digit), and the
    pair's p-value is :math:`P(Q_{k,\infty} > |\bar R_j - \bar R_l| / \sqrt{k(k+1)/(12N)})`.

    **Wilcoxon-Holm** (Benavoli et al. 2016; Ismail Fawaz et al.'s CD diagrams): a two-sided
    Wilcoxon signed-rank test of every pair on its N paired seed means
    (:func:`scipy.stats.wilcoxon`, ``zero_method="pratt"``, exact for N <= 50 without ties
    or zeros), the k(k-1)/2 p-values adjusted by Holm's step-down; a pair differs when its
    adjusted p-value is <= ``alpha``. A pair with the same score on every language gets p = 1.
    This test has no single critical difference: ``attrs["cd"]`` is NaN (``nan_reason``).
    Over N languages the smallest two-sided p-value it can give is :math:`2/2^N` (every
    difference of one sign), :math:`m \cdot 2/2^N` after Holm's correction of the
    :math:`m = k(k-1)/2` pairs: when that is above ``alpha`` no pair can be significant, and
    it warns, naming the number of languages needed.

    The groups are the maximal runs of models, in mean-rank order, with no significant pair
    inside (autorank's rule: the bars of the CD diagram).

    Over N languages two mean ranks differ by at most :math:`k - 1` (one model first and
    the other last everywhere): when :math:`CD \ge k - 1` (e.g. N <= 2 for 3 models, N <= 3
    for 2 models at ``alpha=0.05``) no pair can be significant, and the Nemenyi test warns,
    naming the number of languages needed (the smallest N with
    :math:`N > q_\alpha^2 k (k+1) / (6 (k-1)^2)`).

    Parameters
    ----------
    cube : xarray.Dataset
        An evaluation cube with at least 2 models and 2 languages (seed means, as
        :func:`friedman_test`).
    test : {"nemenyi", "wilcoxon-holm"}
        The post-hoc test.
    alpha : float
        Family-wise level, in (0, 1).

    Returns
    -------
    xarray.Dataset
        ``mean_rank`` (model; 1 = best), ``pvalue`` (model, model_b; Nemenyi's, or the
        Holm-adjusted Wilcoxon p), ``significant`` (model, model_b), ``in_group`` (group,
        model). ``attrs``: ``cd``, ``test``, ``alpha``, the Friedman ``friedman_statistic`` /
        ``friedman_pvalue`` (Demšar: read the post-hoc test only when the Friedman test
        rejects), ``n_blocks``, ``n_models``, ``metric``, ``higher_is_better``.

    Warns
    -----
    EvaluqWarning
        When no pair can be found different whatever the scores: Nemenyi's CD at least
        :math:`k - 1`, or the Wilcoxon-Holm's smallest attainable p above ``alpha``.

    References
    ----------
    Demšar, J. (2006). JMLR 7, 1-30. Nemenyi, P. (1963). Distribution-free multiple
    comparisons. PhD thesis, Princeton. Benavoli, A., Corani, G. & Mangili, F. (2016). Should
    we really use post-hoc tests based on mean-ranks? JMLR 17, 1-10. Holm, S. (1979). Scand.
    J. Statist. 6, 65-70. Herbold, S. (2020). Autorank. JOSS 5(48), 2173.

    Examples
    --------
    >>> import evaluq as eq
    >>> cube = eq.simulate_cube(n_models=4, n_languages=20, model_means=[0, 0, 2, 2],
    ...                         sigma_between=1.0, rng=0)
    >>> cd = eq.critical_difference(cube)
    >>> round(cd.attrs["cd"], 4), cd["in_group"].sizes["group"]
    (1.0488, 2)
    """
    check_choice("test", test, TESTS)
    alpha = check_real("alpha", alpha, low=0, high=1, low_inclusive=False, high_inclusive=False)
    blocks = block_scores(cube)
    ranks = _block_ranks(blocks.scores, blocks.higher_is_better)
    mean_ranks = ranks.mean(axis=0)
    n = ranks.shape[0]
    attrs = {**_attrs(blocks), "test": test, "alpha": alpha}
    if test == "nemenyi":
        p, cd = _nemenyi(mean_ranks, n, alpha)
        _warn_nemenyi_unattainable(cd, n, len(blocks.models), alpha)
        significant = np.abs(mean_ranks[:, None] - mean_ranks[None, :]) > cd
    else:
        _warn_wilcoxon_unattainable(n, len(blocks.models), alpha)
        p, cd = _wilcoxon_holm(blocks.scores), np.nan
        significant = np.nan_to_num(p, nan=1.0) <= alpha
        attrs[NAN_REASON] = ("cd: the Wilcoxon-Holm test has no critical difference of mean "
                             "ranks; its groups come from the adjusted p-values")
    np.fill_diagonal(significant, False)
    stat, fp = (float(v) for v in _friedman_kernel(ranks))
    attrs.update(cd=float(cd), friedman_statistic=stat, friedman_pvalue=fp)
    groups = _rank_groups(mean_ranks, significant)
    return xr.Dataset({MEAN_RANK: _mean_rank_array(blocks, ranks),
                       PVALUE: _pair_array(p, blocks.models, PVALUE),
                       SIGNIFICANT: _pair_array(significant, blocks.models, SIGNIFICANT),
                       IN_GROUP: _group_array(groups, blocks.models)}, attrs=attrs)

"""The ordinal family: judge ratings on ordered levels, with grader effects (issue 22).

A rating y on K ordered levels l_0 < ... < l_{K-1} (integers, e.g. 0..10) is modelled by an
ordered logistic (proportional odds) model

    P(y <= l_c) = expit(kappa_c - eta),   c = 0..K-2,   kappa_0 < ... < kappa_{K-2},
    eta = d_m + t_k + g_mk + r_j + q_jm - b_i,

model m (d ~ ZeroSumNormal), task k and model x task (zero-sum, as in the binary family:
``_model.zero_sum_parts``; each centred where the data pin it down,
``_ordinal_centring``; the mean of iid task and model x task effects,
which only shifts eta against the cutpoints, is folded into kappa_0's prior, so the prior of
eta - kappa is the iid one), grader j (r_j = sigma_grader * z_j, z ~ ZeroSumNormal(1)) and
grader x model (q_jm = sigma_gxm * z_jm, z ~ ZeroSumNormal(1) over both axes:
self-preference), item i (b_i ~ N(0, sigma_item^2)). There is no intercept: the cutpoints
carry the level. Cutpoints: kappa_0 ~ N(cut_first_mu, cut_first_sigma^2 + v) (v =
sigma_task^2 / K + sigma_model_x_task^2 / (M K), the variance of the iid effects' mean; 0
with one task) and kappa_c - kappa_{c-1} = cut_min_spacing + LogNormal(cut_diff_mu,
cut_diff_sigma) (ordered by construction; HiBayES's parameterisation).

With items, the ``"marginal"`` form (issue 34; the default, ``FORM``): an item enters
through its whole rating pattern (its cells' (model, grader, level, count)), not a scalar
total, so items with the same (task, pattern) form one term (:func:`ordinal_terms`), and each
term's integral over b is a trapezoid sum on the grid shared by every term
(``_gridquad.grid_nodes``), each term over its own window of nodes (``_ordinal_grid``: the
integrand is log-concave, so the kernel finds its largest node and sums outwards until 27
nats below; the level table, the terms' rows and the exact gradient in one fused kernel).
The item effects are drawn afterwards from their exact conditional on each draw's own grid
(:func:`conditional_items`). ``"explicit"`` (``fit_ordinal(..., form="explicit")``: one
non-centred parameter per item on the weighted cells) is the reference of the tests;
``"no items"`` without items. ``benchmarks/bench_item_ordinal.py`` times the marginal form
against the binomial's fit of the same ratings binarised (target 3x; 3.5x measured at 10 x
1,000 x 3).

Identical (model, task, grader, item, level) rows (epochs, repeated ratings) collapse into one
weighted cell; without items the cells are (model, task, grader, level), so a fit costs
O(cells), not O(rows).
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import pandas as pd
from scipy.special import expit

from evaluq._dims import MODEL
from evaluq._fits import merge_priors, sampler_stats
from evaluq._nutpie_cache import compile_pymc_model, with_data
from evaluq._validation import check_bool, check_columns
from evaluq.errors import CubeError
from evaluq.item_model._model import structure_flags, zero_sum_parts
from evaluq.item_model._ordinal_centring import ordinal_centring
from evaluq.item_model._posterior import flat_posterior

if TYPE_CHECKING:
    import pymc as pm

GRADER: Final = "grader"
LEVEL: Final = "level"
CUT: Final = "cut"
CELL: Final = "cell"
RATING: Final = "rating"
PRIOR_KEYS: Final = ("cut_first_mu", "cut_first_sigma", "cut_diff_mu", "cut_diff_sigma",
                     "cut_min_spacing", "dev_sigma", "sigma_item_sigma", "sigma_task_sigma",
                     "sigma_mxt_sigma", "sigma_grader_sigma", "sigma_gxm_sigma",
                     "sigma_grader_fixed", "sigma_gxm_fixed", "dev_sigma_fixed")
SIGNED: Final = ("cut_first_mu", "cut_diff_mu")
PRIOR_TEXT: Final = {
    "cut_first_mu": "mean of the first cutpoint kappa_0 ~ Normal (default: logit of the "
                    "share of ratings at the lowest level, smoothed)",
    "cut_first_sigma": "SD of kappa_0 (default 2.5; with tasks its variance also holds the "
                       "task effects' mean, sigma_task^2 / K + sigma_model_x_task^2 / (M K))",
    "cut_diff_mu": "log-scale location of the cutpoint increments ~ LogNormal (default: log "
                   "of the empirical logit span / (K - 2), so the prior median spreads the "
                   "cutpoints over the observed range)",
    "cut_diff_sigma": "log-scale SD of the increments (default 1)",
    "cut_min_spacing": "a constant added to every increment (default 1e-6; HiBayES: 0.3)",
    "dev_sigma": "scale of tau_dev ~ HalfNormal, the learned SD of the model effects d ~ "
                 "ZeroSumNormal(tau_dev) (partially pooled; default 1)",
    "sigma_item_sigma": "scale of sigma_item ~ HalfNormal (default 2.5)",
    "sigma_task_sigma": "scale of sigma_task ~ HalfNormal (default 1)",
    "sigma_mxt_sigma": "scale of sigma_model_x_task ~ HalfNormal (default 1)",
    "sigma_grader_sigma": "scale of sigma_grader ~ HalfNormal (default 1)",
    "sigma_gxm_sigma": "scale of sigma_grader_x_model ~ HalfNormal (default 0.5)",
    "sigma_grader_fixed": "if given, sigma_grader is fixed at this value (no hyperprior)",
    "sigma_gxm_fixed": "if given, sigma_grader_x_model is fixed at this value",
    "dev_sigma_fixed": "if given, d ~ ZeroSumNormal(dev_sigma_fixed) with no learned scale "
                       "(HiBayES: 10 sqrt 2)",
}
_SHOWN: Final = 5
_BIG: Final = 1e4
"""Stand-in for the infinite outer cutpoints (exp(-1e4) underflows to exactly 0)."""


@dataclass(eq=False)
class OrdinalStats:
    """The ratings reduced to weighted cells (see the module docstring).

    ``levels`` (K,): the rating values in order (the mapping level index -> value);
    ``cell_*`` (cell,): model, task, grader, item (-1 without items) and level index of each
    distinct combination, ``cell_count`` how many rows share it; ``row_cell`` (row,): each
    row's cell (in the table's row order); ``n_items`` (task,): items per task (rows per
    task without items); ``item_labels`` / ``item_task`` (item,); ``row_digest``: a digest of
    the rows' (model, task, grader, level) multiset (fits of one table share it).
    """

    levels: np.ndarray
    models: np.ndarray
    tasks: np.ndarray
    graders: np.ndarray
    has_items: bool
    has_graders: bool
    cell_model: np.ndarray
    cell_task: np.ndarray
    cell_grader: np.ndarray
    cell_item: np.ndarray
    cell_level: np.ndarray
    cell_count: np.ndarray
    row_cell: np.ndarray
    n_items: np.ndarray
    item_labels: np.ndarray | None
    item_task: np.ndarray | None
    row_digest: str

    @property
    def n_levels(self) -> int:
        """K, the number of levels."""
        return len(self.levels)


# --- the data -----------------------------------------------------------------------------------

def integer_levels(values: np.ndarray, score: str) -> np.ndarray:
    """The scores as integers; NaN and non-integer values raise naming the column."""
    if not np.isfinite(values).all():
        raise CubeError(f"column {score!r} (given as `score`) has "
                        f"{int((~np.isfinite(values)).sum())} NaN or infinite value(s); "
                        "nothing is dropped: remove or score those rows")
    bad = values != np.round(values)
    if bad.any():
        shown = np.unique(values[bad])[:_SHOWN].tolist()
        raise ValueError(f"`score`: family 'ordinal' needs integer rating levels in column "
                         f"{score!r}; got {int(bad.sum())} non-integer value(s), e.g. {shown}")
    return values.astype(np.int64)


def looks_ordinal(values: np.ndarray, grader: str | None) -> bool:
    """What ``family="auto"`` takes for ratings: a grader column, or integer scores with
    more than two levels. Non-integer scores are not ratings: the binary families then
    raise naming the column ("needs scores 0 or 1 in column ...")."""
    finite = values[np.isfinite(values)]
    if grader is not None:
        return True
    return not (bool(np.isin(finite, (0.0, 1.0)).all())
                or bool((finite != np.round(finite)).any()))


def _resolve_levels(observed: np.ndarray, levels: Any, score: str) -> np.ndarray:
    """The declared levels (sorted distinct integers holding every observed score), or by
    default every integer from the lowest to the highest observed score."""
    if levels is None:
        return np.arange(observed.min(), observed.max() + 1)
    arr = np.asarray(levels)
    if arr.ndim != 1 or arr.size < 2 or not np.issubdtype(arr.dtype, np.number) \
            or (arr != np.round(arr)).any() or (np.diff(arr) <= 0).any():
        raise ValueError(f"`levels` must be at least two increasing integers; got {levels!r}")
    missing = np.setdiff1d(observed, arr)
    if missing.size:
        raise ValueError(f"column {score!r} has scores outside `levels`: "
                         f"{missing[:_SHOWN].tolist()}")
    return arr.astype(np.int64)


def _check_graders(df: pd.DataFrame, model: str, grader: str) -> None:
    """A grader who rated one model only: its effect and its grader x model effect are
    confounded with that model's (with more than one model)."""
    n_models = df.groupby(grader, sort=False)[model].nunique()
    if df[model].nunique() > 1 and (n_models == 1).any():
        lone = n_models[n_models == 1].index[:_SHOWN].tolist()
        raise CubeError(f"`grader`: grader(s) {lone} rated only one model: a grader's effect "
                        "(and its self-preference) is measured against the other models it rated; "
                        "remove those graders or give them ratings of other models")


def _check_keys(df: pd.DataFrame, keys: list[str], item: str | None) -> None:
    dup = df.duplicated(keys)
    if item is not None and dup.any():
        raise CubeError(f"{int(dup.sum())} duplicated row(s) for the same {keys}: give each "
                        "repeated rating its own `epoch` value")


def _codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    codes, labels = pd.factorize(col, sort=True)
    return codes.astype(np.int64), np.asarray(labels)


def ordinal_statistics(df: pd.DataFrame, *, model: str, item: str | None, score: str,
                       task: str | None, epoch: str | None, grader: str | None,
                       levels: Any = None) -> OrdinalStats:
    """Validate a table of ratings and reduce it to weighted cells (``OrdinalStats``)."""
    from evaluq.item_model._data import _check_single_model_items

    check_columns("the table", df.columns, {"model": model, "item": item, "score": score,
                                            "task": task, "epoch": epoch, "grader": grader})
    if df.empty:
        raise CubeError("the table has no rows")
    values = integer_levels(df[score].to_numpy(dtype=np.float64, na_value=np.nan), score)
    lv = _resolve_levels(np.unique(values), levels, score)
    if grader is not None:
        _check_graders(df, model, grader)
    if item is not None:
        _check_single_model_items(df, model, item, task)
    _check_keys(df, [c for c in (model, task, grader, item, epoch) if c is not None], item)
    m, models = _codes(df[model])
    k, tasks = _codes(df[task]) if task else (np.zeros(len(df), np.int64), np.array(["all"]))
    g, graders = _codes(df[grader]) if grader else (np.zeros(len(df), np.int64),
                                                   np.array(["all"]))
    level = np.searchsorted(lv, values)
    item_labels = item_task = None
    if item is not None:
        keys = pd.MultiIndex.from_arrays([k, df[item].to_numpy()])
        i, uniq = pd.factorize(keys, sort=True)
        item_task = np.asarray(uniq.get_level_values(0), dtype=np.int64)
        item_labels = np.asarray(uniq.get_level_values(1))
        n_items = np.bincount(item_task, minlength=len(tasks)).astype(np.float64)
    else:
        i = np.full(len(df), -1, dtype=np.int64)
        n_items = np.bincount(k, minlength=len(tasks)).astype(np.float64)
    stacked = np.stack([m, k, g, np.asarray(i, dtype=np.int64), level])
    cells, row_cell, count = _distinct_columns(stacked)
    return OrdinalStats(
        levels=lv.astype(np.float64), models=models, tasks=tasks, graders=graders,
        has_items=item is not None, has_graders=grader is not None,
        cell_model=cells[0], cell_task=cells[1], cell_grader=cells[2], cell_item=cells[3],
        cell_level=cells[4], cell_count=count.astype(np.float64),
        row_cell=row_cell.ravel(), n_items=n_items, item_labels=item_labels,
        item_task=item_task, row_digest=_row_digest(stacked[[0, 1, 2, 4]]))


def _distinct_columns(stacked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(stacked, axis=1, return_inverse=True, return_counts=True)`` of
    non-negative integer rows (the item row may hold -1), by one mixed-radix int64 key per
    column: the same lexicographic order (10^6 random columns of 20 models x 4 tasks x
    10^4 items x 5 levels: 0.32 s, where numpy's unique of columns, which sorts them as
    bytes, took 6.7 s in the same run)."""
    low = stacked.min(axis=1, keepdims=True)
    radix = stacked.max(axis=1) - low[:, 0] + 1
    if float(np.prod(radix.astype(np.float64))) >= 2.0**62:        # keys would overflow
        return np.unique(stacked, axis=1, return_inverse=True, return_counts=True)
    key = np.zeros(stacked.shape[1], dtype=np.int64)
    for row, size in zip(stacked - low, radix, strict=True):
        key = key * size + row
    uniq, inverse, count = np.unique(key, return_inverse=True, return_counts=True)
    cells = np.empty((len(stacked), len(uniq)), dtype=stacked.dtype)
    for r in range(len(stacked) - 1, -1, -1):
        uniq, cells[r] = np.divmod(uniq, radix[r])
    return cells + low, inverse.ravel(), count


def _row_digest(rows: np.ndarray) -> str:
    order = np.lexsort(rows[::-1])
    return hashlib.sha256(np.ascontiguousarray(rows[:, order]).tobytes()).hexdigest()


# --- priors and the likelihood ------------------------------------------------------------------

def default_priors(stats: OrdinalStats) -> dict[str, float]:
    """Weakly informative defaults, centred on the observed rating distribution."""
    n_k = stats.n_levels
    counts = np.bincount(stats.cell_level, weights=stats.cell_count, minlength=n_k) + 0.5
    cum = np.cumsum(counts)[:-1] / counts.sum()
    logits = np.log(cum / (1 - cum))
    span = (logits[-1] - logits[0]) / (n_k - 2) if n_k > 2 else 1.0
    return {"cut_first_mu": float(logits[0]), "cut_first_sigma": 2.5,
            "cut_diff_mu": float(np.log(max(span, 0.05))), "cut_diff_sigma": 1.0,
            "cut_min_spacing": 1e-6, "dev_sigma": 1.0, "sigma_item_sigma": 2.5,
            "sigma_task_sigma": 1.0, "sigma_mxt_sigma": 1.0, "sigma_grader_sigma": 1.0,
            "sigma_gxm_sigma": 0.5}


def resolve_ordinal_priors(stats: OrdinalStats, priors: Any) -> dict[str, float]:
    """Defaults updated with the user's; unknown keys and bad values raise."""
    return merge_priors(default_priors(stats), priors, PRIOR_KEYS, signed=SIGNED)


def ordinal_logp(lib: Any, eta: Any, kappa: Any, level: Any) -> Any:
    """log P(y = level | eta, kappa) of the ordered logistic model, stably.

    With a = kappa_level - eta and b = kappa_{level-1} - eta (kappa_{-1} = -inf,
    kappa_{K-1} = +inf): log(expit(a) - expit(b)) = -softplus(-a) - softplus(b) +
    log(-expm1(b - a)). ``kappa`` (..., K-1) broadcasts against ``eta`` (..., cell) through
    the index ``level`` (cell,).
    """
    pad_lo = lib.full_like(kappa[..., :1], -_BIG) if lib is not np else \
        np.full(kappa[..., :1].shape, -_BIG)
    padded = lib.concatenate([pad_lo, kappa, -pad_lo], axis=-1)
    a = padded[..., level + 1] - eta
    b = padded[..., level] - eta
    soft = (lambda x: np.logaddexp(0.0, x)) if lib is np else lib.softplus
    return -soft(-a) - soft(b) + lib.log(-lib.expm1(b - a))


def expected_rating(eta: np.ndarray, kappa: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """E[y | eta] = l_0 + sum_c (l_{c+1} - l_c) expit(eta - kappa_c); ``kappa`` (..., K-1)
    broadcasts against ``eta`` (...) as ``eta[..., None]``."""
    return levels[0] + expit(eta[..., None] - kappa) @ np.diff(levels)


def level_probabilities(eta: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """P(y = level c) (..., K) from eta (...) and kappa (..., K-1)."""
    cum = expit(kappa - eta[..., None])
    ones = np.ones((*cum.shape[:-1], 1))
    return np.diff(np.concatenate([0 * ones, cum, ones], axis=-1), axis=-1)


def level_table(lib: Any, x: Any, kappa: Any) -> Any:
    """log P(y = c | x) for every level c: (..., level, node) from ``x`` (..., node).

    ``kappa`` (K-1,) (PyTensor), or (draw, K-1) with ``x`` (draw, ..., node) (numpy). With
    a = kappa_c - x, b = kappa_{c-1} - x (kappa_{-1} = -inf, kappa_{K-1} = +inf), as in
    :func:`ordinal_logp`: -softplus(-a) - softplus(b) + log(1 - exp(kappa_{c-1} - kappa_c)).
    """
    if lib is np:
        pad = np.full((*kappa.shape[:-1], 1), _BIG)
        padded = np.concatenate([-pad, kappa, pad], axis=-1)                 # (D, K + 1)
        shape = (len(padded),) + (1,) * (x.ndim - 2) + (padded.shape[-1] - 1, 1)
        upper, lower = padded[:, 1:].reshape(shape), padded[:, :-1].reshape(shape)
        soft: Any = _np_softplus
    else:
        return _level_table_pt(lib, x, kappa)
    xs = x[..., None, :]
    return -soft(xs - upper) - soft(lower - xs) + lib.log(-lib.expm1(lower - upper))


def _level_table_pt(pt: Any, x: Any, kappa: Any) -> Any:
    """:func:`level_table` in PyTensor with one softplus per (cut, node), not two per (level,
    node): with s_c = softplus(x - kappa_c) and softplus(kappa_c - x) = kappa_c - x + s_c,
    log P(y = c) = -s_c [c < K-1] - (kappa_{c-1} - x + s_{c-1}) [c > 0] + log(1 -
    exp(kappa_{c-1} - kappa_c)) [0 < c < K-1] (the cut-only term on the K levels, not on
    every node; the sum kappa - x + s loses at most |kappa - x| x 1e-16 in the log)."""
    xs = x[..., None, :]                                       # (..., 1, node)
    cut = kappa[:, None]
    s = pt.softplus(xs - cut)                                  # (..., K-1, node)
    zeros = pt.zeros_like(s[..., :1, :])
    gap = pt.log(-pt.expm1(kappa[:-1] - kappa[1:]))
    pad = pt.zeros((1,))
    return (pt.concatenate([-s, zeros], axis=-2) - pt.concatenate([zeros, cut - xs + s],
                                                                   axis=-2)
            + pt.concatenate([pad, gap, pad])[:, None])


def _np_softplus(v: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, v)


@dataclass(eq=False)
class OrdinalTerms:
    """Items with the same (task, rating pattern) form one term (the marginal form).

    An item's pattern is, per unit (a (model, task, grader)), how many of its ratings fell
    on each level (a row of ``combos``: the distinct level-count vectors, zero rows padding
    them to a multiple of 16); ``rows`` (term, entry) index the rows (unit, combo) of the
    combined table (``unit * len(combos) + combo``), ``counts`` (term, entry) are 1 (0:
    padding), ``weight`` (term,) how many items share the term, ``item_term`` (item,);
    ``row_of`` the combined rows some term uses and ``crows`` the terms' rows as indices into
    it (``_ordinal_grid.compact_rows``: what the kernel reads);
    ``h_data`` the shared grid's spacing (``_gridquad.data_spacing`` of 1/3 per rating: the
    information about b of a logistic latent variable bounds that of its ordered levels).
    """

    rows: np.ndarray
    counts: np.ndarray
    weight: np.ndarray
    item_term: np.ndarray
    combos: np.ndarray
    h_data: float
    row_of: np.ndarray
    crows: np.ndarray
    unit_ratings: np.ndarray
    """(model, task, grader): the most ratings one item has from the unit (the extreme
    patterns of :func:`extreme_units`)."""


_TERMS: weakref.WeakKeyDictionary[OrdinalStats, OrdinalTerms] = weakref.WeakKeyDictionary()
""":func:`ordinal_terms` of each live ``OrdinalStats`` (a fit asks for them five times: the
model's key, its inputs, the item draws, the config; 1.4 s each at 20 x 10^4 x 5)."""


def ordinal_terms(stats: OrdinalStats) -> OrdinalTerms:
    """The distinct (task, rating pattern) terms of the items (see :class:`OrdinalTerms`),
    computed once per ``stats``."""
    terms = _TERMS.get(stats)
    if terms is None:
        terms = _TERMS[stats] = _distinct_terms(stats)
    return terms


def _distinct_terms(stats: OrdinalStats) -> OrdinalTerms:
    """:func:`ordinal_terms`, computed."""
    from evaluq.item_model._gridquad import data_spacing
    from evaluq.item_model._ordinal_grid import compact_rows

    n_k, n_j, n_l = len(stats.tasks), len(stats.graders), stats.n_levels
    n_units = len(stats.models) * n_k * n_j
    n_items = len(np.asarray(stats.item_labels))
    unit = (stats.cell_model * n_k + stats.cell_task) * n_j + stats.cell_grader
    pairs, pair_of_cell = np.unique(stats.cell_item * n_units + unit, return_inverse=True)
    vectors = np.zeros((len(pairs), n_l), dtype=np.int64)
    np.add.at(vectors, (pair_of_cell.ravel(), stats.cell_level),
              np.rint(stats.cell_count).astype(np.int64))
    combos, combo = np.unique(vectors, axis=0, return_inverse=True)
    n_combos = -(-len(combos) // 16) * 16     # zero rows to a multiple of 16
    item = pairs // n_units                                   # pairs sorted by item, unit
    per = np.bincount(item, minlength=n_items)
    pos = np.arange(len(item)) - np.r_[0, np.cumsum(per)[:-1]][item]
    rows = np.zeros((n_items, int(per.max())), dtype=np.int64)
    ones = np.zeros((n_items, int(per.max())), dtype=np.int64)
    rows[item, pos], ones[item, pos] = (pairs % n_units) * n_combos + combo.ravel(), 1
    uniq, item_term, weight = np.unique(np.concatenate([rows, ones], axis=1), axis=0,
                                        return_inverse=True, return_counts=True)
    uniq, item_term, weight = _by_mean_rating(uniq, item_term.ravel(), weight, combos,
                                              n_combos, n_k * n_j, rows.shape[1])
    ratings = np.bincount(stats.cell_item, weights=stats.cell_count, minlength=n_items)
    unit_ratings = np.zeros(n_units)
    np.maximum.at(unit_ratings, pairs % n_units, vectors.sum(axis=1) * 1.0)
    row_of, crows = compact_rows(uniq[:, :rows.shape[1]], uniq[:, rows.shape[1]:], weight)
    return OrdinalTerms(unit_ratings=unit_ratings.reshape(len(stats.models), n_k, n_j),
                        rows=uniq[:, :rows.shape[1]], counts=uniq[:, rows.shape[1]:] * 1.0,
                        weight=weight.astype(np.float64), item_term=item_term,
                        combos=np.r_[combos, np.zeros((n_combos - len(combos), n_l),
                                                      dtype=np.int64)] * 1.0,
                        h_data=data_spacing(float(ratings.max()) / 3.0),
                        row_of=row_of, crows=crows)


def _by_mean_rating(uniq: np.ndarray, item_term: np.ndarray, weight: np.ndarray,
                    combos: np.ndarray, n_combos: int, per_model: int, width: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The terms ordered by task, then by their mean rating (then as ``np.unique`` gave
    them): neighbouring terms then have nearby integrands, and the kernel starts each term's
    window search from the previous term's window (``_ordinal_grid._window``; at 10 x 1,000
    x 3 this evaluates 25 nodes per term, not 28, with a window of 22)."""
    rows, ones = uniq[:, :width], uniq[:, width:]
    combo = rows % n_combos
    levels = np.arange(combos.shape[1])
    total = np.where(ones > 0, (combos @ levels)[np.minimum(combo, len(combos) - 1)], 0)
    count = np.where(ones > 0, combos.sum(axis=1)[np.minimum(combo, len(combos) - 1)], 0)
    mean = total.sum(axis=1) / np.maximum(count.sum(axis=1), 1)
    task = (rows[:, 0] // n_combos) % per_model            # the first entry's unit's task
    order = np.lexsort((np.arange(len(uniq)), mean, task))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return uniq[order], rank[item_term], weight[order]


# --- the PyMC model -----------------------------------------------------------------------------

def _scale(name: str, x: dict[str, Any], fixed: dict[str, float], sigma_key: str) -> Any:
    import pymc as pm

    if name in fixed:
        return pm.Deterministic(name, x[f"fixed_{name}"])
    return pm.HalfNormal(name, x[f"prior_{sigma_key}"])


def _cutpoints(x: dict[str, Any], n_levels: int, mean_var: Any = 0.0) -> Any:
    """kappa (K-1,); the first cutpoint's prior variance widened by ``mean_var`` (the
    variance of the iid task effects' mean, :func:`_model.zero_sum_parts`)."""
    import pymc as pm
    import pytensor.tensor as pt

    first = pm.Normal("cut_first", x["prior_cut_first_mu"],
                      pt.sqrt(x["prior_cut_first_sigma"] ** 2 + mean_var))
    if n_levels == 2:
        return pm.Deterministic("cutpoints", first[None], dims=CUT)
    inc = pm.LogNormal("cut_increments", x["prior_cut_diff_mu"], x["prior_cut_diff_sigma"],
                       shape=n_levels - 2)
    steps = pt.cumsum(inc + x["prior_cut_min_spacing"])
    return pm.Deterministic("cutpoints", pt.concatenate([first[None], first + steps]),
                            dims=CUT)


def _grader_effects(x: dict[str, Any], stats: OrdinalStats, interaction: bool,
                    fixed: dict[str, float]) -> Any:
    """(grader, model) = r_j + q_jm (non-centred, sum-to-zero)."""
    import pymc as pm
    import pytensor.tensor as pt

    n_g, n_m = len(stats.graders), len(stats.models)
    out = pt.zeros((n_g, n_m))
    if n_g < 2:
        return out
    sigma_g = _scale("sigma_grader", x, fixed, "sigma_grader_sigma")
    z = pm.ZeroSumNormal("grader_z", sigma=1.0, dims=GRADER)
    out = out + pm.Deterministic("grader_effect", sigma_g * z, dims=GRADER)[:, None]
    if interaction and n_m > 1:
        sigma_q = _scale("sigma_grader_x_model", x, fixed, "sigma_gxm_sigma")
        zq = pm.ZeroSumNormal("grader_x_model_z", sigma=1.0, dims=(GRADER, MODEL),
                              n_zerosum_axes=2)
        out = out + pm.Deterministic("grader_x_model", sigma_q * zq, dims=(GRADER, MODEL))
    return out


def padded_cells(n_cells: int) -> int:
    """Cells are padded (count 0) to a power of two so a compiled model serves data of
    similar size."""
    return max(16, 1 << int(np.ceil(np.log2(max(n_cells, 1)))))


def marginal_inputs(terms: OrdinalTerms, priors: dict[str, float]) -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the marginal form, by name (terms padded with weight 0 to
    a power of two)."""
    pad = padded_cells(len(terms.weight)) - len(terms.weight)
    width = terms.rows.shape[1]
    n_rows = len(terms.row_of)
    return {"term_rows": np.r_[terms.crows, np.zeros((pad, width), dtype=np.int64)],
            "row_of": np.r_[terms.row_of, np.full(padded_cells(n_rows) - n_rows, -1)],
            "term_counts": np.r_[terms.counts, np.zeros((pad, width))],
            "term_weight": np.r_[terms.weight, np.zeros(pad)], "combos": terms.combos,
            "unit_ratings": terms.unit_ratings,
            "grid_spacing": np.asarray(terms.h_data)} | {
        f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()}


def ordinal_inputs(stats: OrdinalStats, priors: dict[str, float],
                   form: str = "explicit") -> dict[str, np.ndarray]:
    """Every ``pm.Data`` array of the model, by name (cells padded with count 0; the
    marginal form: :func:`marginal_inputs`)."""
    if form == "marginal":
        return marginal_inputs(ordinal_terms(stats), priors)
    n = len(stats.cell_count)
    pad = padded_cells(n) - n
    out: dict[str, np.ndarray] = {
        name: np.r_[getattr(stats, name), np.zeros(pad, dtype=np.int64)]
        for name in ("cell_model", "cell_task", "cell_grader", "cell_level")}
    out["cell_item"] = np.r_[np.maximum(stats.cell_item, 0), np.zeros(pad, dtype=np.int64)]
    out["cell_count"] = np.r_[stats.cell_count, np.zeros(pad)]
    return out | {f"prior_{k}": np.asarray(v, dtype=np.float64) for k, v in priors.items()}


def model_key(stats: OrdinalStats, priors: dict[str, float], interaction: bool,
              form: str = "explicit") -> tuple:
    """What the compiled model's structure depends on."""
    n_items: Any = len(stats.item_labels) if stats.item_labels is not None else 0
    size = padded_cells(len(stats.cell_count))
    if form == "marginal":
        terms = ordinal_terms(stats)
        n_items = (padded_cells(len(terms.weight)), terms.rows.shape[1],
                   padded_cells(len(terms.row_of)))
        size = len(terms.combos)
    return ("ordinal", form, len(stats.models), len(stats.tasks), len(stats.graders),
            n_items, stats.n_levels, size, bool(interaction),
            tuple(sorted(k for k in priors if k.endswith("_fixed"))), ordinal_centring(stats),
            *structure_flags())


FORM: Final = "marginal"
"""The form ``fit_items(family="ordinal")`` samples with items: ``"marginal"`` (faster than
the explicit form at 3 models x 200 items x 3 graders, 5.1 against 6.3 s warm; at 10 x 1,000
x 3 it is 3.1x the binomial's warm fit, the explicit form 38.6x in an earlier run) or
``"explicit"``."""


def default_form(stats: OrdinalStats) -> str:
    """``FORM`` with items, ``"no items"`` without."""
    return FORM if stats.has_items else "no items"


def build_ordinal_model(stats: OrdinalStats, priors: dict[str, float],
                        interaction: bool, form: str = "explicit") -> pm.Model:
    """The ordinal model; every array is a ``pm.Data`` so a compiled model is refitted on
    data of the same shape.

    ``form``: ``"marginal"`` (with items: each item's effect integrated out on the shared
    grid of ``_gridquad``, one term per distinct (task, rating pattern), each summed over
    its own window of nodes: the level log-probabilities, the terms' rows and the gradient
    in one fused kernel, ``_ordinal_grid``) or ``"explicit"`` (the
    weighted cells, one explicit non-centred effect per item; also the form without items).
    """
    import pymc as pm
    import pytensor.tensor as pt

    fixed = [k.removesuffix("_fixed").replace("gxm", "grader_x_model")
             for k in priors if k.endswith("_fixed")]
    coords = {MODEL: list(map(str, stats.models)), GRADER: list(map(str, stats.graders)),
              CUT: list(range(stats.n_levels - 1))}
    marginal = form == "marginal" and stats.has_items
    with pm.Model(coords=coords) as pm_model:
        x = {k: pm.Data(k, v) for k, v in ordinal_inputs(
            stats, priors, "marginal" if marginal else "explicit").items()}
        x |= {f"fixed_{name}": x[f"prior_{name.replace('grader_x_model', 'gxm')}_fixed"]
              for name in fixed}
        base, mean_var = zero_sum_parts(x, len(stats.models), len(stats.tasks),
                                        *ordinal_centring(stats))
        kappa = _cutpoints(x, stats.n_levels, mean_var)
        gm = _grader_effects(x, stats, interaction, dict.fromkeys(fixed, 0.0))
        if marginal:
            _marginal_potential(x, base[:, :, None] + gm.T[:, None, :], kappa,
                                (len(stats.models), len(stats.tasks), len(stats.graders)))
            return pm_model
        eta = base[x["cell_model"], x["cell_task"]] + gm[x["cell_grader"], x["cell_model"]]
        if stats.has_items:
            sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
            z = pm.Normal("item_z", 0.0, 1.0, shape=len(np.asarray(stats.item_labels)))
            eta = eta - sigma_item * z[x["cell_item"]]
        logp = ordinal_logp(pt, eta, kappa, x["cell_level"])
        pm.Potential("rating_loglik", (x["cell_count"] * logp).sum())
    return pm_model


def _marginal_potential(x: dict[str, Any], eta: Any, kappa: Any,
                        shape: tuple[int, int, int]) -> None:
    """sigma_item and the ratings' log-likelihood with the item effects integrated out
    (``eta`` (model, task, grader) without the item effect)."""
    import pymc as pm

    sigma_item = pm.HalfNormal("sigma_item", x["prior_sigma_item_sigma"])
    pm.Potential("rating_loglik", marginal_loglik(
        eta, kappa, sigma_item, x["grid_spacing"], x["unit_ratings"], x["combos"],
        x["row_of"], x["term_rows"], x["term_counts"], x["term_weight"], shape))


def extreme_units(lib: Any, eta: Any, kappa: Any, unit_ratings: Any,
                  shape: tuple[int, int, int]) -> tuple[Any, Any, Any]:
    """eta', ratings and totals (..., 2 K, model x grader) of each task's extreme patterns
    as binomial terms: every rating at the lowest level (P = 1 - expit(eta - b - kappa_0):
    total 0 at eta' = eta - kappa_0) or at the highest (total all at eta - kappa_{K-2});
    ``eta`` (..., model, task, grader), ``kappa`` (..., K-1), ``unit_ratings`` (model, task,
    grader), of the sizes ``shape``."""
    n_m, n_k, n_j = shape
    if lib is np:
        e = np.moveaxis(eta, -2, -3).reshape(*eta.shape[:-3], n_k, n_m * n_j)
        first, last = kappa[..., :1, None], kappa[..., -1:, None]
    else:
        e = eta.transpose(1, 0, 2).reshape((n_k, n_m * n_j))
        first, last = kappa[0], kappa[-1]
    n = unit_ratings.transpose(1, 0, 2).reshape((n_k, n_m * n_j))
    return (lib.concatenate([e - first, e - last], axis=-2), lib.concatenate([n, n], axis=0),
            lib.concatenate([0.0 * n.sum(axis=1), n.sum(axis=1)]))


def marginal_loglik(eta: Any, kappa: Any, sigma: Any, h_data: Any, unit_ratings: Any,
                    combos: Any, row_of: Any, rows: Any, counts: Any, weight: Any,
                    shape: tuple[int, int, int]) -> Any:
    """The marginal form's log-likelihood of the ratings (PyTensor): sum_t w_t log of each
    term's integral on the shared grid (``_gridquad.grid_nodes``), spanning the extreme
    patterns' mass, each term summed over its own window of nodes (``_ordinal_grid``: the
    level table, the terms' rows, their windows and the gradient in one fused kernel); no
    gradient through the nodes. ``eta`` (model, task, grader)."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    from evaluq.item_model._gridquad import extreme_span, grid_nodes, prior_base
    from evaluq.item_model._model import term_mode
    from evaluq.item_model._ordinal_grid import ordinal_grid_loglik

    eta_x, n_x, total = extreme_units(pt, eta, kappa, unit_ratings, shape)
    span = extreme_span(pt, sigma, *term_mode(eta_x, n_x, total, sigma))
    b, h = grid_nodes(sigma, h_data, span)
    b, h = disconnected_grad(b), disconnected_grad(h)       # the rule's value is its own
    return ordinal_grid_loglik(eta.reshape((-1,)), kappa, b, prior_base(pt, b, sigma, h),
                               combos, row_of, rows, counts, weight)


# --- sampling and the posterior ------------------------------------------------------------------

SAMPLED: Final = ("cutpoints", "dev", "tau_dev", "task_effect", "model_x_task", "sigma_task",
                  "sigma_model_x_task", "grader_effect", "sigma_grader", "grader_x_model",
                  "sigma_grader_x_model", "sigma_item", "item_z")
PRIOR_NODES: Final = 32
CHUNK_CELLS: Final = 4_000_000
_PX, _PW = np.polynomial.hermite.hermgauss(PRIOR_NODES)
_PW = _PW / np.sqrt(np.pi)
_COMPILED: dict[tuple, Any] = {}
"""nutpie models of the ordinal family compiled in this process, by ``model_key``."""


def sample_ordinal(stats: OrdinalStats, priors: dict[str, float], interaction: bool,
                   settings: dict[str, Any], form: str = "explicit"
                   ) -> tuple[Any, float, float]:
    """nutpie draws (the compiled model reused for data of the same shape); compile and
    sampling seconds. ``settings``: draws, tune, chains, seed, target_accept."""
    import time

    import nutpie

    form = form if stats.has_items else "explicit"
    key = model_key(stats, priors, interaction, form)
    start = time.perf_counter()
    if key not in _COMPILED:
        _COMPILED[key] = compile_pymc_model(  # cached across processes
            build_ordinal_model(stats, priors, interaction, form))[0]
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    known = {var.name for var in _COMPILED[key].shared_var_keys}
    compiled = with_data(_COMPILED[key], **{
        k: v for k, v in ordinal_inputs(stats, priors, form).items() if k in known})
    raw = nutpie.sample(compiled, draws=settings["draws"], tune=settings["tune"],
                        chains=settings["chains"], cores=settings["chains"],
                        seed=settings["seed"], progress_bar=False, save_warmup=False,
                        target_accept=settings["target_accept"])
    return raw, compile_s, time.perf_counter() - start


def grader_model_eta(stats: OrdinalStats, flat: dict[str, np.ndarray]) -> np.ndarray:
    """eta (draw, model, task, grader) without the item effect."""
    n_d = len(flat["cutpoints"])
    n_m, n_k, n_g = len(stats.models), len(stats.tasks), len(stats.graders)
    eta = np.zeros((n_d, n_m, n_k, n_g))
    if "dev" in flat:
        eta += flat["dev"][:, :, None, None]
    if "task_effect" in flat:
        eta += flat["task_effect"][:, None, :, None]
    if "model_x_task" in flat:
        eta += flat["model_x_task"][..., None]
    if "grader_effect" in flat:
        eta += flat["grader_effect"][:, None, None, :]
    if "grader_x_model" in flat:
        eta += np.moveaxis(flat["grader_x_model"], 1, 2)[:, :, None, :]
    return eta


def _chunks(n_draws: int, per_draw: int) -> list[slice]:
    step = max(1, CHUNK_CELLS // max(per_draw, 1))
    return [slice(s, s + step) for s in range(0, n_draws, step)]


def new_items_ratings(stats: OrdinalStats, eta: np.ndarray, kappa: np.ndarray,
                      sigma: np.ndarray | None) -> np.ndarray:
    """Expected rating on a new item (draw, model): b ~ N(0, sigma^2) integrated out by
    Gauss-Hermite, graders weighted equally, tasks by their share of the items."""
    w_task = stats.n_items / stats.n_items.sum()
    out = np.empty(eta.shape[:2])
    for part in _chunks(len(eta), eta[0].size * PRIOR_NODES * kappa.shape[-1]):
        e, k = eta[part], kappa[part][:, None, None, None, :]
        if sigma is None:
            r = expected_rating(e, k, stats.levels)
        else:
            b = np.sqrt(2.0) * sigma[part][:, None, None, None, None] * _PX
            r = expected_rating(e[..., None] - b, k[..., None, :], stats.levels) @ _PW
        out[part] = r.mean(axis=-1) @ w_task
    return out


def benchmark_ratings(stats: OrdinalStats, eta: np.ndarray, kappa: np.ndarray,
                      b: np.ndarray | None) -> np.ndarray:
    """Expected rating over these items (draw, model): the mean over items of the mean over
    graders of E[y | eta - b_i] at each draw's item effects ``b`` (draw, item), in one
    kernel (``_ordinal_ratings``)."""
    if b is None:
        return new_items_ratings(stats, eta, kappa, None)
    from evaluq.item_model._ordinal_ratings import mean_expected_ratings

    return mean_expected_ratings(eta, kappa, b, np.asarray(stats.item_task), stats.levels)


def conditional_items(stats: OrdinalStats, eta: np.ndarray, kappa: np.ndarray,
                      sigma: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Item effects (draw, item) of the marginal form, each from its exact conditional
    given the draw's parameters and its term's rating pattern, on the grid the sampler's
    rule used at that draw (:func:`marginal_loglik`: ``_gridquad.grid_nodes`` over the
    extreme patterns' span), one node per item and draw by inverse CDF over the term's
    window (``_ordinal_grid.conditional_cells``). The draws sit on the nodes: their moments
    are the rule's (exact to its error), where a uniform spread within a cell would add
    h^2 / 12 to each item's variance."""
    from evaluq.item_model._gridquad import (
        HZ,
        MAX_NODES,
        extreme_span,
        items_by_term,
        over_threads,
        prior_base,
    )
    from evaluq.item_model._model import term_mode
    from evaluq.item_model._ordinal_grid import conditional_cells

    terms = ordinal_terms(stats)
    item_term = terms.item_term.astype(np.int64)
    by_term = items_by_term(item_term, len(terms.crows))
    out = np.empty((len(eta), len(item_term)))
    kernel: Any = conditional_cells             # numba's Dispatcher stub types nothing
    for part in _chunks(len(eta), 2 * len(item_term)):   # the uniforms and the cells
        eta_x, n_x, total = extreme_units(np, eta[part], kappa[part], terms.unit_ratings,
                                          terms.unit_ratings.shape)
        lo, hi = extreme_span(np, sigma[part], *term_mode(eta_x, n_x, total, sigma[part]))
        h = np.maximum(np.minimum(terms.h_data, HZ * sigma[part]), (hi - lo) / (MAX_NODES - 1))
        n_nodes = np.clip(np.ceil((hi - lo) / h), 1, MAX_NODES - 1).astype(np.int64) + 1
        b = lo[:, None] + h[:, None] * np.arange(n_nodes.max())
        u = gen.random((len(b), len(item_term)))
        args = (np.ascontiguousarray(eta[part].reshape(len(b), -1)),
                np.ascontiguousarray(kappa[part], dtype=np.float64), b, n_nodes,
                prior_base(np, b, sigma[part][:, None], h[:, None]))
        cell = np.empty(u.shape, dtype=np.int64)

        def run(draws: slice, args: tuple = args, u: np.ndarray = u,
                cell: np.ndarray = cell) -> None:
            cell[draws] = kernel(*(a[draws] for a in args), terms.combos, terms.row_of,
                                 terms.crows, terms.counts, *by_term, u[draws])

        over_threads(run, len(b))
        out[part] = np.take_along_axis(b, cell, axis=1)
    return out


def flat_draws(post: Any) -> dict[str, np.ndarray]:
    """The sampled variables of the ordinal model as (draw, ...) arrays, chains stacked."""
    return flat_posterior(post, SAMPLED)


# --- the fit's tree, its data and their round trip ----------------------------------------------

_CELL_FIELDS: Final = ("cell_model", "cell_task", "cell_grader", "cell_item", "cell_level",
                       "cell_count")


def per_item_means(stats: OrdinalStats) -> np.ndarray | None:
    """Mean rating (model, item) over graders and epochs (NaN: not rated); None without
    items."""
    if not stats.has_items:
        return None
    shape = (len(stats.models), len(np.asarray(stats.item_labels)))
    value = stats.levels[stats.cell_level] * stats.cell_count
    total, count = np.zeros(shape), np.zeros(shape)
    np.add.at(total, (stats.cell_model, stats.cell_item), value)
    np.add.at(count, (stats.cell_model, stats.cell_item), stats.cell_count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def observed_dataset(stats: OrdinalStats, higher_is_better: bool = True) -> Any:
    """The cells and labels, saved with the fit (``stats_from_dataset`` rebuilds them)."""
    import xarray as xr

    from evaluq._dims import ITEM, TASK

    data = {name: (CELL, getattr(stats, name)) for name in _CELL_FIELDS}
    data |= {"row_cell": ("row", stats.row_cell), "n_items": (TASK, stats.n_items),
             "levels": (LEVEL, stats.levels)}
    coords: dict[str, Any] = {MODEL: stats.models, TASK: stats.tasks, GRADER: stats.graders}
    if stats.has_items:
        data["item_task"] = (ITEM, np.asarray(stats.item_task))
        coords[ITEM] = stats.item_labels
    return xr.Dataset(data, coords=coords, attrs={
        "family": "ordinal", "has_items": int(stats.has_items),
        "has_graders": int(stats.has_graders), "higher_is_better": int(higher_is_better),
        "row_digest": stats.row_digest})


def stats_from_dataset(obs: Any) -> OrdinalStats:
    """Inverse of :func:`observed_dataset`."""
    from evaluq._dims import ITEM, TASK

    has_items = bool(obs.attrs["has_items"])
    return OrdinalStats(
        levels=obs["levels"].values, models=obs[MODEL].values, tasks=obs[TASK].values,
        graders=obs[GRADER].values, has_items=has_items,
        has_graders=bool(obs.attrs["has_graders"]),
        **{name: obs[name].values for name in _CELL_FIELDS},
        row_cell=obs["row_cell"].values, n_items=obs["n_items"].values,
        item_labels=obs[ITEM].values if has_items else None,
        item_task=obs["item_task"].values if has_items else None,
        row_digest=str(obs.attrs["row_digest"]))


def ordinal_item_data(stats: OrdinalStats, notes: dict[str, str], digest: str) -> Any:
    """The shared :class:`ItemData` view of an ordinal fit (``ordinal`` holds the cells;
    ``trials`` counts the ratings per model and task; ``per_item`` the mean ratings)."""
    from evaluq.item_model._data import ItemData

    n_m, n_k = len(stats.models), len(stats.tasks)
    trials = np.zeros((n_m, n_k))
    np.add.at(trials, (stats.cell_model, stats.cell_task), stats.cell_count)
    empty = np.zeros(0)
    return ItemData(models=stats.models, tasks=stats.tasks, family="ordinal",
                    correct=np.zeros((n_m, n_k)), trials=trials, epochs=np.ones((n_m, n_k)),
                    n_items=stats.n_items, has_items=stats.has_items, term_total=empty,
                    term_task=empty.astype(np.int64), term_weight=empty, item_term=None,
                    item_labels=stats.item_labels, item_task=stats.item_task,
                    log_binom=None, per_item=per_item_means(stats), notes=notes,
                    digest=digest, ordinal=stats)


def _notes(stats: OrdinalStats, requested: str, interaction: bool) -> dict[str, str]:
    lv = stats.levels.astype(np.int64)
    out = {"levels": f"{len(lv)} ordered levels {lv.tolist()} mapped in order to indices "
                     f"0..{len(lv) - 1}"}
    if requested == "auto":
        out["family"] = ("family='auto' chose 'ordinal' (integer ratings with "
                         f"{len(lv)} levels" + (", a grader column" if stats.has_graders
                                                 else "") + ")")
    if stats.has_graders and not interaction:
        out["interaction"] = "grader x model interaction switched off (grader_interaction=False)"
    return out


def _posterior_group(stats: OrdinalStats, raw: Any, form: str = "explicit",
                     post_seed: int = 0) -> tuple[Any, Any]:
    """The posterior (sampled variables and both scopes' expected ratings) and the item
    effects' draws and summary (the marginal form: drawn from their exact conditional)."""
    import xarray as xr

    from evaluq._dims import BENCHMARK_SCORE, ITEM, NEW_ITEMS_SCORE

    post = raw["posterior"].to_dataset()
    n_chain = post.sizes["chain"]
    out = post[[v for v in post.data_vars if not str(v).endswith("_z")]]
    flat = flat_draws(post)
    eta = grader_model_eta(stats, flat)
    kappa = flat["cutpoints"]
    sigma = flat.get("sigma_item")
    if sigma is None:
        b = None
    elif form == "marginal":
        b = conditional_items(stats, eta, kappa, sigma, np.random.default_rng(post_seed))
    else:
        b = sigma[:, None] * flat["item_z"]
    dims = ("chain", "draw", MODEL)
    for name, values in ((NEW_ITEMS_SCORE, new_items_ratings(stats, eta, kappa, sigma)),
                         (BENCHMARK_SCORE, benchmark_ratings(stats, eta, kappa, b))):
        out[name] = (dims, values.reshape(n_chain, -1, values.shape[-1]))
    out = out.assign_coords({MODEL: stats.models, GRADER: stats.graders})
    items = xr.Dataset()
    if b is not None:
        items = xr.Dataset({"item_effect_mean": (ITEM, b.mean(axis=0)),
                            "item_effect_sd": (ITEM, b.std(axis=0)),
                            "item_effect": (("chain", "draw", ITEM),
                                            b.reshape(n_chain, -1, b.shape[-1]))},
                           coords={ITEM: stats.item_labels})
    return out, items


def fit_ordinal(df: pd.DataFrame, columns: dict[str, str | None], *, levels: Any,
                interaction: bool, requested: str, priors: Any,
                settings: dict[str, Any], form: str | None = None
                ) -> tuple[Any, dict[str, Any], Any]:
    """Sample the ordinal model; (tree, config, ItemData) for :class:`ItemFit`.

    ``settings``: draws, tune, chains, seed, post_seed, target_accept. ``form``: with items,
    ``"marginal"`` (the default, ``FORM``: item effects integrated out on the shared grid;
    see :func:`build_ordinal_model`) or ``"explicit"`` (one parameter per item, the tests'
    reference).
    """
    import json
    import time

    import xarray as xr

    stats = ordinal_statistics(df, levels=levels, **columns)  # type: ignore[arg-type]
    check_bool("grader_interaction", interaction)
    resolved = resolve_ordinal_priors(stats, priors)
    notes = _notes(stats, requested, interaction)
    if not stats.has_items:
        form = "no items"
    elif form is None:
        form = default_form(stats)
    elif form not in ("marginal", "explicit"):
        raise ValueError(f"`form` must be 'marginal' or 'explicit'; got {form!r}")
    config: dict[str, Any] = {
        "family": "ordinal", "family_requested": requested, "discrimination": False,
        "form": form, "quadrature_nodes": 0,
        "columns": columns, "levels": stats.levels.tolist(),
        "grader_interaction": bool(interaction and stats.has_graders),
        "priors": resolved, "sampler": "nutpie", "n_cells": len(stats.cell_count),
        "score_scale": "expected rating on the levels' own scale, graders weighted equally"}
    if form == "marginal":
        config["n_terms"] = len(ordinal_terms(stats).weight)
        config["quadrature"] = "shared grid (trapezoid rule, _gridquad)"
    config |= {k: settings[k] for k in ("draws", "tune", "chains", "seed", "post_seed")}
    raw, config["compile_seconds"], config["sampling_seconds"] = sample_ordinal(
        stats, resolved, interaction, settings, form)
    start = time.perf_counter()
    post, items = _posterior_group(stats, raw, form, settings["post_seed"])
    config["posterior_seconds"] = time.perf_counter() - start
    groups = {"posterior": post, "sample_stats": sampler_stats(raw),
              "observed_data": observed_dataset(stats),
              "constant_data": xr.Dataset({f"prior_{k}": v for k, v in resolved.items()})}
    if items.data_vars:
        groups["item_effects"] = items
    tree = xr.DataTree.from_dict(groups)
    tree.attrs = {"evaluq_config": json.dumps(config), "data_digest": stats.row_digest,
                  "notes": json.dumps(notes)}
    return tree, config, ordinal_item_data(stats, notes, stats.row_digest)

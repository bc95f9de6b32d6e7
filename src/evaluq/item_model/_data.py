"""Per-item table -> the item model's sufficient statistics.

Binary scores (one per model, item and epoch) of the 1PL model

    logit P(y_mie = 1) = eta_mk - b_i,   eta_mk = alpha + dev_m + t_k + g_mk,  b_i ~ N(0, s^2)

(item i in task k) have the log-likelihood

    sum_mk eta_mk S_mk + sum_i [ -b_i Y_i - sum_m n_km softplus(eta_mk - b_i) ] + const,

with S_mk the correct answers of model m in task k, n_km the epochs of model m in task k and
Y_i the item's total over models and epochs. Given the other parameters an item enters only
through its total Y_i (the Rasch model's sufficient statistic), so items with identical
response patterns -- and more generally identical totals in one task -- collapse into one
term weighted by how many items share it: at most (sum_m n_km + 1) terms per task, whatever
the number of items.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
import pandas as pd

from evaluq._dims import LANGUAGE, MODEL, SEED
from evaluq._validation import (
    LABEL_CASE,
    LABEL_SPACING,
    check_choice,
    check_column_args,
    numeric_column,
)
from evaluq.errors import CubeError
from evaluq.io import TableLike, as_table
from evaluq.items import pivot_items

if TYPE_CHECKING:
    import xarray as xr

FAMILIES: Final = ("auto", "bernoulli", "binomial", "beta-binomial", "ordinal")
BINARY_FAMILIES: Final = ("auto", "bernoulli", "binomial", "beta-binomial")
"""The families :func:`item_statistics` reduces (0/1 scores)."""
_SHOWN: Final = 5


@dataclass(eq=False)
class ItemData:
    """Sufficient statistics of the binary item model (see the module docstring).

    ``correct`` / ``trials`` (model, task): S_mk and the number of scored responses;
    ``epochs`` (model, task): n_km, epochs per item (0: the model was not scored on the task);
    ``n_items`` (task,); ``term_total``, ``term_task``, ``term_weight`` (term,): the distinct
    (task, item total) pairs and how many items share each; ``item_term`` (item,): each item's
    term (None without items); ``item_labels`` / ``item_task`` (item,); ``log_binom``
    (item,): sum over models of log C(n_km, y_im), the constant of each item's likelihood;
    ``per_item`` (model, item): correct answers over the epochs of each item;
    ``term_counts`` (term, model): under ``beta-binomial`` the terms are the distinct (task,
    response-count pattern over models) and this holds each term's pattern (None otherwise).
    """

    models: np.ndarray
    tasks: np.ndarray
    family: str
    correct: np.ndarray
    trials: np.ndarray
    epochs: np.ndarray
    n_items: np.ndarray
    has_items: bool
    term_total: np.ndarray
    term_task: np.ndarray
    term_weight: np.ndarray
    item_term: np.ndarray | None
    item_labels: np.ndarray | None
    item_task: np.ndarray | None
    log_binom: np.ndarray | None
    per_item: np.ndarray | None = None
    term_counts: np.ndarray | None = None
    higher_is_better: bool = True
    notes: dict[str, str] = field(default_factory=dict)
    digest: str = ""
    ordinal: Any = None
    """The ordinal family's cells (``_ordinal.OrdinalStats``); None for binary families."""

    @property
    def shape(self) -> tuple[int, int]:
        """(number of models, number of tasks)."""
        return len(self.models), len(self.tasks)


def _check_binary(values: np.ndarray, score: str, family: str) -> None:
    bad = (values != 0) & (values != 1)
    if bad.any():
        shown = np.unique(values[bad])[:_SHOWN].tolist()
        raise ValueError(
            f"`score`: family {family!r} needs scores 0 or 1 in column {score!r}; got "
            f"{int(bad.sum())} other value(s), e.g. {shown}. Fractional or graded scores "
            "need another family (ordinal ratings are integers 0..K)")


def resolve_family(values: np.ndarray, family: str, n_epochs: int, score: str) -> str:
    """The family ``"auto"`` stands for (binary scores: bernoulli with one epoch, else
    binomial; :func:`item_statistics` then picks beta-binomial when the epochs agree more
    often than the binomial allows, ``_drift``); an explicit family is checked against the
    scores."""
    if family == "auto":
        family = "bernoulli" if n_epochs == 1 else "binomial"
    _check_binary(values, score, family)
    if family == "beta-binomial" and n_epochs < 2:
        raise ValueError(f"`family`: 'beta-binomial' needs at least 2 epochs per item (run-to-run "
                         f"drift is measured from repeated epochs of an item); the table has "
                         f"{n_epochs} epoch(s): use family='bernoulli' or 'binomial'")
    if family == "bernoulli" and n_epochs > 1:
        raise ValueError(f"family 'bernoulli' takes one score per model and item; the table has "
                         f"{n_epochs} epochs: use family='binomial' (epochs pooled per item)")
    return family


def _check_single_model_items(df: pd.DataFrame, model: str, item: str,
                              task: str | None) -> None:
    """An item scored by one model only carries no pairing information: it raises."""
    keys = [task, item] if task is not None else [item]
    n_models = df.groupby(keys, sort=False)[model].nunique()
    if df[model].nunique() > 1 and (n_models == 1).any():
        lone = n_models[n_models == 1]
        raise CubeError(
            f"`table`: {len(lone)} item(s) are scored by only one model, e.g. "
            f"{lone.index[:_SHOWN].tolist()}: such an item carries no pairing information "
            "(its difficulty cannot be told from that model's ability). Score them with every "
            "model, or remove them from the table")


def _pivot(df: pd.DataFrame, model: str, item: str, score: str, task: str | None,
           epoch: str | None) -> Any:
    try:
        return pivot_items(df, model=model, item=item, score=score, language=task, seed=epoch,
                           names={LANGUAGE: "task", SEED: "epoch"})
    except CubeError as exc:
        if LABEL_SPACING in str(exc) or LABEL_CASE in str(exc):   # a typo, not a missing item
            raise
        raise CubeError(f"{exc} (fit_items needs every model scored on every item of a task "
                        "in each of its epochs: unequal epochs per item or missing items are "
                        "not filled)") from None


def _task_terms(values: np.ndarray, present: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per task block (model, epoch, item): correct (M,), epochs (M,), item totals (I,),
    log binomial constants (I,), correct per item (M, I)."""
    from scipy.special import gammaln

    filled = np.where(present[:, :, None], values, 0.0)
    per_item = filled.sum(axis=1)                       # (M, I) correct over epochs
    epochs = present.sum(axis=1).astype(np.float64)     # (M,)
    log_binom = (gammaln(epochs + 1)[:, None] - gammaln(per_item + 1)
                 - gammaln(epochs[:, None] - per_item + 1)).sum(axis=0)
    return per_item.sum(axis=1), epochs, per_item.sum(axis=0), log_binom, per_item


def item_statistics(table: TableLike, *, model: str, item: str | None, score: str,
                    task: str | None = None, epoch: str | None = None,
                    family: str = "auto") -> ItemData:
    """Validate a per-item table and reduce it to the item model's sufficient statistics.

    Scores must be 0 or 1 (``bernoulli``: one epoch; ``binomial``: several epochs pooled per
    item; ``auto``: bernoulli with one epoch, else binomial unless the epochs of a (model,
    item) agree more often than the binomial allows -- the epoch-agreement test of
    ``_drift``, z > 3 -- then beta-binomial; the notes say which and why). Every model is
    scored on every item of a task in each of its epochs; NaN scores,
    duplicated keys, missing items, unequal epochs per item and items scored by one model
    only raise. A model may skip a whole task (its model x task deviation then comes from the
    prior). ``item=None``: the rows are exchangeable responses (no item effect).
    """
    if family == "ordinal":
        raise ValueError("`family` 'ordinal' (ratings on ordered levels) has its own "
                         "statistics: fit it with eq.fit_items(..., family='ordinal'); "
                         "item_statistics reduces 0/1 scores")
    check_choice("family", family, BINARY_FAMILIES)
    df, _ = as_table(table, "table")
    check_column_args(df.columns, {"model": model, "item": item, "score": score, "task": task,
                                   "epoch": epoch})
    if item is not None:
        _check_single_model_items(df, model, item, task)
    if item is None:
        return _no_item_statistics(df, model, score, task, family)
    pivot = _pivot(df, model, item, score, task, epoch)
    values = np.concatenate([b.values[~np.isnan(b.values)] for b in pivot.blocks])
    fam = resolve_family(values, family, len(pivot.seeds), score)
    n_m, n_k = len(pivot.models), len(pivot.blocks)
    correct, epochs = np.zeros((n_m, n_k)), np.zeros((n_m, n_k))
    totals, tasks_of, labels, binoms, per_item = [], [], [], [], []
    for k, block in enumerate(pivot.blocks):          # one pass per task, vectorised inside
        correct[:, k], epochs[:, k], tot, lb, pi = _task_terms(block.values, block.present)
        per_item.append(pi)
        totals.append(tot)
        tasks_of.append(np.full(len(tot), k))
        labels.append(block.items)
        binoms.append(lb)
    n_items = np.array([len(t) for t in totals], dtype=np.float64)
    _check_models_scored(pivot.models, epochs)
    total, task_of = np.concatenate(totals), np.concatenate(tasks_of)
    counts = np.concatenate(per_item, axis=1)
    keys, item_term, weight = np.unique(np.stack([task_of, total]), axis=1,
                                        return_inverse=True, return_counts=True)
    term_counts, drift = None, None
    if family == "auto" and fam == "binomial" and epochs[epochs > 0].min() >= 2:
        drift = _auto_drift(counts, epochs, task_of, correct, keys, weight, item_term.ravel())
        fam = "beta-binomial" if drift.drift else fam
    if fam == "beta-binomial":
        keys, item_term, weight, term_counts = pattern_terms(task_of, total, counts, epochs)
    notes = _notes(family, fam, len(pivot.seeds), pivot.models,
                   np.array([b.label for b in pivot.blocks]), epochs, drift)
    return ItemData(
        notes=notes,
        models=pivot.models, tasks=np.array([b.label for b in pivot.blocks]), family=fam,
        correct=correct, trials=epochs * n_items, epochs=epochs, n_items=n_items,
        has_items=True, term_total=keys[1].astype(np.float64),
        term_task=keys[0].astype(np.int64), term_weight=weight.astype(np.float64),
        item_term=item_term.ravel(), item_labels=np.concatenate(labels),
        item_task=task_of, log_binom=np.concatenate(binoms),
        per_item=counts, term_counts=term_counts,
        digest=_digest(correct, epochs, total, task_of))


def pattern_terms(task_of: np.ndarray, total: np.ndarray, counts: np.ndarray,
                  epochs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Items with the same (task, response-count pattern over models) form one term.

    ``counts`` (model, item): correct answers over the epochs; ``epochs`` (model, task).
    Returns (task, total) keys (2, term), each item's term (item,), the terms' multiplicity
    (term,) and patterns (term, model).
    """
    scored = epochs[epochs > 0]
    if scored.size and scored.min() < 2:
        raise ValueError(f"`family`: 'beta-binomial' needs at least 2 epochs per item for every "
                         f"model; some model x task cells have {int(scored.min())}: run-to-run "
                         "drift is measured from repeated epochs of an item")
    rows = np.column_stack([task_of, counts.T])
    uniq, item_term, weight = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    patterns = uniq[:, 1:].astype(np.float64)
    keys = np.stack([uniq[:, 0], patterns.sum(axis=1)])
    return keys, item_term.ravel(), weight, patterns


def _auto_drift(counts: np.ndarray, epochs: np.ndarray, task_of: np.ndarray,
                correct: np.ndarray, keys: np.ndarray, weight: np.ndarray,
                item_term: np.ndarray) -> Any:
    """``family="auto"`` with epochs: the epoch-agreement test of ``_drift`` (seeded by the
    data, so the same table always gets the same family)."""
    from evaluq.item_model._drift import epoch_agreement_test

    seed = int(_digest(correct, epochs, counts.sum(axis=0))[:8], 16)
    return epoch_agreement_test(counts, epochs, task_of, correct, keys[1].astype(np.float64),
                                keys[0].astype(np.int64), weight.astype(np.float64),
                                item_term, rng=seed)


def _notes(requested: str, family: str, n_epochs: int, models: np.ndarray, tasks: np.ndarray,
           epochs: np.ndarray, drift: Any = None) -> dict[str, str]:
    """What the fit decided for the user: the family ``auto`` chose (and, with epochs, the
    epoch-agreement test that chose between binomial and beta-binomial), skipped tasks."""
    out = {}
    if requested == "auto":
        out["family"] = (f"family='auto' chose {family!r} (0/1 scores, {n_epochs} epoch(s) "
                         "per item)")
        if drift is not None and drift.drift:
            out["family"] = (f"family='auto' chose 'beta-binomial' (0/1 scores, {n_epochs} "
                             "epochs per item): the epochs of a (model, item) agree more "
                             "often than the binomial family allows (run-to-run drift, or "
                             f"items the 1PL does not fit): {drift.text()}; 'auto' picks "
                             "'beta-binomial' when z > 3. Items of unequal discrimination "
                             "do this too: compare with fit_items(..., discrimination=True) "
                             "by compare_fits")
        elif drift is not None:
            out["family"] += (f"; the epochs agree as the binomial predicts ({drift.text()}; "
                              "'auto' picks 'beta-binomial' when z > 3)")
    skipped = np.argwhere(epochs == 0)
    if skipped.size:
        pairs = [f"{models[m]!s} on {tasks[k]!s}" for m, k in skipped[:_SHOWN]]
        out["skipped_tasks"] = (f"{len(skipped)} model x task cell(s) not scored (e.g. "
                                f"{', '.join(pairs)}): their model x task deviation comes "
                                "from the prior")
    return out


def _check_models_scored(models: np.ndarray, epochs: np.ndarray) -> None:
    none = np.flatnonzero(epochs.sum(axis=1) == 0)
    if none.size:
        raise CubeError(f"model(s) {models[none][:_SHOWN].tolist()} have no scored items; "
                        "remove them from the table")


def _no_item_statistics(df: pd.DataFrame, model: str, score: str, task: str | None,
                        family: str) -> ItemData:
    """``item=None``: counts of correct answers per (model, task); no item effect."""
    values = numeric_column(df, score, "score")
    if family == "beta-binomial":
        raise ValueError("family 'beta-binomial' needs items and epochs (item=..., epoch=...): "
                         "run-to-run drift is the correlation of an item's repeated epochs")
    fam = resolve_family(values, "bernoulli" if family == "auto" else family, 1, score)
    keys = pd.DataFrame({MODEL: df[model].to_numpy(),
                         LANGUAGE: df[task].to_numpy() if task else "all", "y": values})
    grouped = keys.groupby([MODEL, LANGUAGE])["y"].agg(["sum", "count"])
    table = grouped.unstack(LANGUAGE)
    models, tasks = table.index.to_numpy(), table["sum"].columns.to_numpy()
    correct = table["sum"].fillna(0.0).to_numpy(dtype=np.float64)
    trials = table["count"].fillna(0.0).to_numpy(dtype=np.float64)
    _check_models_scored(models, trials)
    empty = np.zeros(0)
    return ItemData(models=models, tasks=tasks, family=fam, correct=correct, trials=trials,
                    epochs=np.ones_like(trials), n_items=trials.max(axis=0),
                    has_items=False, term_total=empty, term_task=empty.astype(np.int64),
                    term_weight=empty, item_term=None, item_labels=None, item_task=None,
                    log_binom=None, digest=_digest(correct, trials))


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


class FittedDraws(Protocol):
    """What the family and check modules (``_criticism``, ``_ordinal_checks``, ``_twopl``)
    read of a fitted item model: its sufficient statistics, configuration (priors, form) and
    posterior draws. :class:`evaluq.ItemFit` satisfies it; the modules never import the fit,
    so the fit module imports them without an import circle."""

    data: ItemData
    config: dict[str, Any]
    idata: xr.DataTree

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior group (chain, draw, ...)."""
        ...

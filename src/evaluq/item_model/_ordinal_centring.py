"""How the ordinal family samples its effects: centred where the data pin them down.

The binary families decide from plug-in estimates of each (model, task) cell
(``_model.centring``): the task and model x task effects are centred when their spread is
at least ``_model.CENTRED_RATIO`` times the noise of the cells, the model deviations at
``_model.DEV_CENTRED_RATIO``. The ordinal family takes the same decision on its ratings split
at the median level (:func:`binarised`): a binomial view of the data whose plug-in
estimates sit on the same latent logistic scale (a split of an ordered logistic model is a
binary logistic model with the same eta) and carry less information than the ratings (a
split keeps p(1 - p) of the proportional-odds information (1 - sum_l p_l^3) / 3 per
rating), so the noise it sees is, if anything, too large: the decision errs on the
non-centred side, whose cost is leapfrog steps, not a funnel.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from evaluq.item_model._data import ItemData
from evaluq.item_model._model import centring


class OrdinalStats(Protocol):
    """What this module reads of ``_ordinal.OrdinalStats`` (typed here, so the two modules do
    not import each other)."""

    models: np.ndarray
    tasks: np.ndarray
    has_items: bool
    cell_model: np.ndarray
    cell_task: np.ndarray
    cell_item: np.ndarray
    cell_level: np.ndarray
    cell_count: np.ndarray
    n_items: np.ndarray
    item_labels: np.ndarray | None
    item_task: np.ndarray | None

    @property
    def n_levels(self) -> int:
        """K, the number of levels."""


def median_split(stats: OrdinalStats) -> int:
    """The level index c whose split (levels <= c against above) is nearest to halving the
    pooled ratings."""
    pooled = np.bincount(stats.cell_level, weights=stats.cell_count,
                         minlength=stats.n_levels)
    below = np.cumsum(pooled)[:-1] / pooled.sum()
    return int(np.argmin(np.abs(below - 0.5)))


def binarised(stats: OrdinalStats) -> ItemData:
    """The ratings as binomial sufficient statistics: a rating above :func:`median_split`
    counts 1, each (model, item)'s ratings (graders x epochs) its trials; n_km the most
    ratings any item of task k has from model m.

    Examples
    --------
    >>> import pandas as pd
    >>> from evaluq.item_model._ordinal import ordinal_statistics
    >>> df = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": [0, 1, 0, 1],
    ...                    "score": [1, 3, 2, 3]})
    >>> stats = ordinal_statistics(df, model="model", item="item", score="score", task=None,
    ...                            epoch=None, grader=None)
    >>> data = binarised(stats)
    >>> data.correct.ravel().tolist(), data.epochs.ravel().tolist()
    ([1.0, 1.0], [1.0, 1.0])
    """
    above = stats.cell_count * (stats.cell_level > median_split(stats))
    n_m, n_k = len(stats.models), len(stats.tasks)
    empty = np.zeros(0)
    if not stats.has_items:
        correct, trials = np.zeros((n_m, n_k)), np.zeros((n_m, n_k))
        np.add.at(correct, (stats.cell_model, stats.cell_task), above)
        np.add.at(trials, (stats.cell_model, stats.cell_task), stats.cell_count)
        return ItemData(models=stats.models, tasks=stats.tasks, family="binomial",
                        correct=correct, trials=trials, epochs=np.ones_like(trials),
                        n_items=trials.max(axis=0), has_items=False, term_total=empty,
                        term_task=empty.astype(np.int64), term_weight=empty,
                        item_term=None, item_labels=None, item_task=None, log_binom=None)
    assert stats.item_task is not None
    item_task = np.asarray(stats.item_task)
    per_item, ratings = np.zeros((n_m, len(item_task))), np.zeros((n_m, len(item_task)))
    np.add.at(per_item, (stats.cell_model, stats.cell_item), above)
    np.add.at(ratings, (stats.cell_model, stats.cell_item), stats.cell_count)
    epochs, correct = np.zeros((n_m, n_k)), np.zeros((n_m, n_k))
    for k in range(n_k):                      # per task (a handful), vectorised over items
        in_k = item_task == k
        epochs[:, k] = ratings[:, in_k].max(axis=1, initial=0.0)
        correct[:, k] = per_item[:, in_k].sum(axis=1)
    keys, item_term, weight = np.unique(np.stack([item_task, per_item.sum(axis=0)]), axis=1,
                                        return_inverse=True, return_counts=True)
    return ItemData(models=stats.models, tasks=stats.tasks, family="binomial",
                    correct=correct, trials=epochs * stats.n_items, epochs=epochs,
                    n_items=stats.n_items, has_items=True,
                    term_total=keys[1].astype(np.float64), term_task=keys[0].astype(np.int64),
                    term_weight=weight.astype(np.float64), item_term=item_term.ravel(),
                    item_labels=stats.item_labels, item_task=item_task, log_binom=None,
                    per_item=per_item)


def ordinal_centring(stats: OrdinalStats) -> tuple[bool, bool]:
    """(task and model x task effects centred, model deviations centred): ``_model.centring``
    of :func:`binarised`; part of the compiled model's key."""
    return centring(binarised(stats))

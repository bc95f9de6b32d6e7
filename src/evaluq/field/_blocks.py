"""The cube as a blocks x models table of seed means, for the field's rank and Bayesian tests.

Demšar's Friedman / Nemenyi / Wilcoxon-Holm procedures and baycomp's signed-rank test read one
score per (block, model): the blocks are the cube's languages (tasks, data sets) and the score
is the mean over the seeds (runs) of the full-test-set score. A run that is NaN is left out of
its cell's mean (the count is reported); a cell with no run at all is a model missing a block,
which these complete-block procedures cannot use: that raises, naming the cells, rather than
dropping the block silently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from evaluq._dims import LANGUAGE, MODEL, SCORE, SEED
from evaluq._kernels import count_valid, nanmean
from evaluq.errors import CubeError


@dataclass(frozen=True)
class Blocks:
    """Seed means laid out as ``scores[block, model]`` with the cube's labels."""

    scores: np.ndarray
    models: np.ndarray
    blocks: np.ndarray
    higher_is_better: bool
    metric: str
    n_missing_runs: int


def block_scores(cube: xr.Dataset, *, min_models: int = 2, min_blocks: int = 2) -> Blocks:
    """Seed means per (language, model); raise on a model missing a language.

    Parameters
    ----------
    cube
        An evaluation cube (raw or summary-only).
    min_models, min_blocks
        The fewest models and languages the calling procedure accepts.
    """
    from evaluq.cube import higher_is_better, validate

    cube = validate(cube)
    score = cube[SCORE].transpose(LANGUAGE, MODEL, SEED)
    values = np.asarray(score.values, dtype=float)
    means = nanmean(values)
    missing = np.argwhere(count_valid(values) == 0)
    if missing.size:
        names, places = score[MODEL].values.tolist(), score[LANGUAGE].values.tolist()
        cells = ", ".join(f"({names[m]!r}, {places[b]!r})" for b, m in missing[:5])
        raise CubeError(
            f"`cube` has no score for {len(missing)} (model, language) cell(s): {cells}; "
            "the Friedman, Nemenyi, Wilcoxon-Holm and signed-rank tests need every model on "
            "every language: select complete languages first (cube.sel(language=[...]))")
    models, blocks = score[MODEL].values, score[LANGUAGE].values
    if len(models) < min_models:
        raise CubeError(f"`cube` must hold at least {min_models} models; got {len(models)}")
    if len(blocks) < min_blocks:
        raise CubeError(f"`cube` must hold at least {min_blocks} languages (blocks); got "
                        f"{len(blocks)}")
    return Blocks(scores=means, models=models, blocks=blocks,
                  higher_is_better=higher_is_better(cube),
                  metric=str(cube.attrs.get("metric", "") or "score"),
                  n_missing_runs=int(np.isnan(values).sum()))

"""What the report does with what a results file lacks, and how it says so.

Two kinds of gap, told apart:

* **a cell with no score at all** (a model never run on a language): the analyses compare
  models on the same languages, so with ``missing="drop"`` the report leaves out the
  languages that hold such cells (or, when that keeps fewer cells, the models that do) and
  names them; ``missing="raise"`` stops instead;
* **runs missing from a cell** (a crashed seed, or models run with different numbers of
  seeds): nothing is left out; each cell's mean, SDs and resampling use the runs it has
  (:func:`evaluq.resample` redraws each cell's own seeds).

Both are stated on the page (the data summary) and as a
:class:`~evaluq.errors.MissingDataWarning`.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import xarray as xr

from evaluq._dims import LANGUAGE, LANGUAGE_LABEL, MODEL, SCORE, SEED
from evaluq._schema import is_summary
from evaluq._validation import check_choice
from evaluq.errors import CubeError

MISSING_MODES: Final = ("drop", "raise")


def language_word(cube: xr.Dataset | xr.DataArray) -> str:
    """The input's own name for the language dim (``cube.attrs["language_label"]``), else
    ``"language"``."""
    label = cube.attrs.get(LANGUAGE_LABEL)
    return str(label) if label else LANGUAGE


def _plural(word: str) -> str:
    return word if word.endswith("s") else word + "s"


def _cells(empty: xr.DataArray, limit: int = 6) -> str:
    where = np.argwhere(empty.transpose(MODEL, LANGUAGE).values)
    models, langs = empty[MODEL].values, empty[LANGUAGE].values
    shown = [f"{models[m]}/{langs[lang]}" for m, lang in where[:limit]]
    return ", ".join(shown) + (f" and {len(where) - limit} more" if len(where) > limit else "")


def _no_score(cube: xr.Dataset) -> xr.DataArray:
    score = cube[SCORE]
    return score.isnull().all(SEED) if SEED in score.dims else score.isnull()


def complete_cube(cube: xr.Dataset, missing: str = "drop") -> tuple[xr.Dataset, list[str]]:
    """The cube without its (model, language) cells that have no score, and what was done.

    Parameters
    ----------
    cube
        A validated evaluation cube.
    missing
        ``"drop"``: leave out the languages that hold an empty cell, or the models that do
        when that keeps more cells (ties keep every model); ``"raise"``: a
        :class:`~evaluq.errors.CubeError` naming the cells.

    Returns
    -------
    cube, notes
        The cube with every remaining cell observed, and one sentence per thing done (empty
        when nothing was missing).

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> scores = np.array([[[0.5], [0.6], [0.7]], [[0.4], [np.nan], [0.8]]])
    >>> cube, notes = complete_cube(eq.from_arrays(scores))
    >>> cube.sizes["language"], notes[0][:44]
    (2, '1 (model, language) cell has no score: 1/1. ')
    """
    missing = check_choice("missing", missing, MISSING_MODES)
    empty = _no_score(cube)
    n_empty = int(empty.sum())
    if n_empty == 0:
        return cube, []
    word = language_word(cube)
    head = (f"{n_empty} (model, {word}) cell{'s have' if n_empty > 1 else ' has'} no score: "
            f"{_cells(empty)}")
    if missing == "raise":
        raise CubeError(f"{head}. Models are compared on the same {_plural(word)}: pass "
                        f"missing='drop' to leave out the {_plural(word)} (or models) that "
                        f"hold them, or remove them from the input")
    bad_lang, bad_model = empty.any(MODEL).values, empty.any(LANGUAGE).values
    n_m, n_l = empty.sizes[MODEL], empty.sizes[LANGUAGE]
    keep_lang = (n_l - bad_lang.sum()) * n_m
    keep_model = (n_m - bad_model.sum()) * n_l
    if max(keep_lang, keep_model) == 0:
        raise CubeError(f"{head}: every {word} and every model has an empty cell, so no "
                        f"complete comparison is left; remove the models or {_plural(word)} "
                        f"that were not run everywhere")
    if keep_lang >= keep_model:
        gone = [str(v) for v in cube[LANGUAGE].values[bad_lang]]
        cube = cube.isel({LANGUAGE: np.flatnonzero(~bad_lang)})
        what = f"the {_plural(word) if len(gone) > 1 else word} {', '.join(gone)}"
    else:
        gone = [str(v) for v in cube[MODEL].values[bad_model]]
        cube = cube.isel({MODEL: np.flatnonzero(~bad_model)})
        what = f"the model{'s' if len(gone) > 1 else ''} {', '.join(gone)}"
    return cube, [f"{head}. Left out of every analysis: {what}, so that the models are "
                  f"compared on the same {_plural(word)} (missing='raise' stops instead)."]


def missing_runs(cube: xr.Dataset) -> str | None:
    """A sentence on the runs (seeds) some observed cells lack, or None.

    Examples
    --------
    >>> import numpy as np, evaluq as eq
    >>> scores = np.array([[[0.5, 0.52], [0.6, np.nan]], [[0.4, 0.41], [0.7, 0.72]]])
    >>> print(missing_runs(eq.from_arrays(scores)))  # doctest: +ELLIPSIS
    1 run missing: 1 of 4 (model, language) cells has fewer than 2 seeds (0/1: 1); ...
    """
    score = cube[SCORE]
    if is_summary(cube) or SEED not in score.dims or score.sizes[SEED] < 2:
        return None
    counts = score.count(SEED).transpose(MODEL, LANGUAGE)
    observed = counts.values > 0
    most = int(counts.values.max())
    short = observed & (counts.values < most)
    if not short.any():
        return None
    per_model = _seeds_per_model(counts.values, observed)
    if per_model is not None:           # each model ran its own number of seeds everywhere
        runs = ", ".join(f"{m} {k}" for m, k in zip(counts[MODEL].values, per_model,
                                                  strict=True))
        return (f"The models ran different numbers of seeds ({runs}); each model's cells use "
                f"its own runs (means, seed SDs, resampling).")
    n_runs = int((most - counts.values)[short].sum())
    models, langs = counts[MODEL].values, counts[LANGUAGE].values
    shown = ", ".join(f"{models[m]}/{langs[lang]}: {counts.values[m, lang]}"
                      for m, lang in np.argwhere(short)[:4])
    n_short = int(short.sum())
    return (f"{n_runs} run{'s' if n_runs > 1 else ''} missing: {n_short} of "
            f"{int(observed.sum())} (model, {language_word(cube)}) cells "
            f"{'have' if n_short > 1 else 'has'} fewer than {most} seeds ({shown}"
            f"{', ...' if n_short > 4 else ''}); each cell's mean, seed SD and resampling "
            f"use the runs it has.")


def _seeds_per_model(counts: np.ndarray, observed: np.ndarray) -> np.ndarray | None:
    """Each model's number of seeds when it is the same in all of its observed cells and the
    models differ (a design, not crashed runs), else None."""
    masked = np.where(observed, counts, -1)
    first = masked.max(axis=1)
    same = ((masked == first[:, None]) | ~observed).all(axis=1)
    if not same.all() or np.unique(first).size < 2:
        return None
    return first

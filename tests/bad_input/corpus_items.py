"""Bad-input corpus entries of the per-item tables (issue 18): the harness log readers,
``from_items``, ``item_scores``, ``item_means`` and the power figure."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import evaluq as eq

from .corpus import Case

TABLE = pd.DataFrame({"m": ["a", "a", "b", "b"], "i": [1, 2, 1, 2], "s": [1, 0, 1, 1]})
KEYS = {"model": "m", "item": "i", "score": "s"}


def item_cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    nan = TABLE.assign(s=[1, np.nan, 1, 1])
    add(Case("evaluq.from_items", "unknown item column",
             lambda: eq.from_items(TABLE, **{**KEYS, "item": "x"}), "given as `item`"))
    add(Case("evaluq.from_items", "duplicated rows",
             lambda: eq.from_items(pd.concat([TABLE, TABLE]), **KEYS), "more than one row"))
    add(Case("evaluq.from_items", "a model missing an item",
             lambda: eq.from_items(TABLE.iloc[:3], **KEYS), "model 'b' seed 0 lacks 1 item"))
    add(Case("evaluq.from_items", "NaN score", lambda: eq.from_items(nan, **KEYS),
             "given as `score`"))
    add(Case("evaluq.from_items", "n_boot 0",
             lambda: eq.from_items(TABLE, **KEYS, n_boot=0), "`n_boot` must be >= 2"))
    add(Case("evaluq.item_scores", "duplicated rows",
             lambda: eq.item_scores(pd.concat([TABLE, TABLE]), **KEYS), "more than one row"))
    add(Case("evaluq.item_scores", "NaN score", lambda: eq.item_scores(nan, **KEYS),
             "given as `score`"))
    add(Case("evaluq.item_means", "unknown cluster column",
             lambda: eq.item_means(TABLE, **KEYS, cluster="zz"), "given as `cluster`"))
    add(Case("evaluq.item_means", "confidence level 2",
             lambda: eq.item_means(TABLE, **KEYS, confidence_level=2), "`confidence_level`"))
    add(Case("evaluq.plots.mde_plot", "a table instead of the grid",
             lambda: eq.plots.mde_plot(TABLE), "`grid` must be the DataArray"))
    add(Case("evaluq.read_inspect_logs", "no such file",
             lambda: eq.read_inspect_logs("no/such/log.eval"), "`paths`: no such file",
             errors=(FileNotFoundError,)))
    add(Case("evaluq.read_inspect_logs", "a folder without logs",
             lambda: eq.read_inspect_logs(tempfile.mkdtemp()), "holds no Inspect logs"))
    add(Case("evaluq.read_inspect_logs", "a file that is not a log",
             lambda: eq.read_inspect_logs(_not_a_log()), "cannot read the Inspect log"))
    add(Case("evaluq.read_lm_eval_samples", "no such folder",
             lambda: eq.read_lm_eval_samples("no/such/folder"), "`path`: no such file",
             errors=(FileNotFoundError,)))
    add(Case("evaluq.read_lm_eval_samples", "a folder without samples",
             lambda: eq.read_lm_eval_samples(tempfile.mkdtemp()), "holds no lm-eval samples"))
    return c


def _not_a_log() -> Path:
    path = Path(tempfile.mkdtemp()) / "log.json"
    path.write_text("not json")
    return path

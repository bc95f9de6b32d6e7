"""Clear errors on the per-item path (issue 30, item 7): every per-item entry point
(``from_items``, ``item_scores``, ``item_means``, ``fit_items``) checks its column arguments
and its scores with the same shared validators, and reads a harness log's ``epoch`` column
when the epoch argument is left out."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.errors import CubeError, ImplicitEpochWarning
from evaluq.item_model import item_statistics
from evaluq.items import pivot_items

COLUMNS = "epoch, item, model, score, task"


def harness_table(n_items=6, epochs=(0, 1), tasks=("t1",)):
    """A harness log's per-item table: model, task, item, epoch, score (0/1)."""
    rng = np.random.default_rng(30)
    rows = [{"model": m, "task": t, "item": i, "epoch": e, "score": float(rng.random() < 0.7)}
            for m in ("a", "b") for t in tasks for i in range(n_items) for e in epochs]
    return pd.DataFrame(rows)


def _cheap_fit(table, **cols):
    """fit_items with the sampler's sizes small (every check runs before sampling)."""
    return eq.fit_items(table, draws=10, tune=10, chains=1, **cols)


ENTRY_POINTS = {
    "from_items": lambda t, **kw: eq.from_items(t, n_boot=10, **kw),
    "item_scores": eq.item_scores,
    "item_means": eq.item_means,
}
BASE = {"model": "model", "item": "item", "score": "score"}


# --- (a) a wrong column names the argument, the column and the table's columns -------------------

@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("arg", ["model", "item", "score", "language", "seed", "cluster"])
def test_wrong_column_names_argument_and_columns(entry, arg):
    kw = {**BASE, "seed": "epoch", arg: "question"}
    with pytest.raises(CubeError, match=rf"column 'question' \(given as `{arg}`\) is not in "
                                        rf"the table; its columns are: {COLUMNS}"):
        ENTRY_POINTS[entry](harness_table(), **kw)


@pytest.mark.parametrize("arg", ["model", "item", "score", "task", "epoch", "grader"])
def test_fit_items_wrong_column_names_argument_and_columns(arg):
    """Was a bare ``KeyError: 'question'`` for ``item=`` and ``task=``."""
    kw = {**BASE, "epoch": "epoch", arg: "question"}
    with pytest.raises(CubeError, match=rf"column 'question' \(given as `{arg}`\) is not in "
                                        rf"the table; its columns are: {COLUMNS}"):
        _cheap_fit(harness_table(), **kw)


def test_fit_items_without_items_names_a_wrong_column():
    with pytest.raises(CubeError, match=r"column 'mdl' \(given as `model`\) is not in the "
                                        r"table; its columns are: epoch, item"):
        _cheap_fit(harness_table(), model="mdl", item=None, score="score")


@pytest.mark.parametrize("entry", [*sorted(ENTRY_POINTS), "fit_items"])
def test_a_column_argument_that_is_no_name(entry):
    call = ENTRY_POINTS.get(entry, _cheap_fit)
    with pytest.raises(TypeError, match=r"`item` must be a column name \(str\); got 3"):
        call(harness_table(), **{**BASE, "item": 3})


# --- (b) text scores name the column, a bad value and its row ------------------------------------

def _text_scores(table, labels=("correct", "incorrect")):
    return table.assign(score=np.where(table["score"] == 1, labels[0], labels[1]))


@pytest.mark.parametrize("entry", [*sorted(ENTRY_POINTS), "fit_items", "fit_items_no_items",
                                   "item_statistics"])
def test_text_scores_name_column_value_and_row(entry):
    table = _text_scores(harness_table(epochs=(0,)))
    first = table["score"].iloc[0]
    calls = {**ENTRY_POINTS, "fit_items": _cheap_fit, "item_statistics": item_statistics,
             "fit_items_no_items": lambda t, **kw: _cheap_fit(t, **{**kw, "item": None})}
    with pytest.raises(CubeError, match=rf"column 'score' \(given as `score`\) must be numeric "
                                        rf"\(dtype [a-z]+\); it holds '{first}' at row 0; its "
                                        r"values that are no number: \['(in)?correct', "
                                        r"'(in)?correct'\]\. A score is a number: map each "
                                        r"label to its score first"):
        calls[entry](table, **BASE)


def test_text_scores_of_a_filtered_table_name_the_position_and_the_index():
    table = _text_scores(harness_table(epochs=(0,)), ("A", "B")).iloc[3:]
    bad = table["score"].iloc[0]
    with pytest.raises(CubeError, match=rf"it holds '{bad}' at row 0 \(index 3\)"):
        eq.item_means(table, **BASE)


def test_grader_path_names_text_scores():
    """The ordinal family (a grader column) read the scores as floats before any check."""
    table = _text_scores(harness_table(epochs=(0,))).assign(judge="j1")
    with pytest.raises(CubeError, match=r"column 'score' \(given as `score`\) must be numeric"):
        _cheap_fit(table, **BASE, grader="judge")


def test_many_labels_and_numbers_stored_as_text():
    table = harness_table(epochs=(0,))
    many = table.assign(score=[f"answer {k}" for k in range(len(table))])
    with pytest.raises(CubeError, match=r"it holds 'answer 0' at row 0; 12 distinct values "
                                        r"are no number"):
        eq.from_items(many, **BASE)
    as_text = table.assign(score=table["score"].astype(int).astype(str))
    with pytest.raises(CubeError, match=r"it holds numbers as text, e.g. '\d' at row 0: convert "
                                        r"them first, table\['score'\] = pandas\.to_numeric"):
        eq.item_scores(as_text, **BASE)


def test_numbers_stored_as_objects_are_numbers():
    table = harness_table(epochs=(0,))
    objects = table.assign(score=table["score"].astype(object))
    np.testing.assert_array_equal(eq.item_scores(objects, **BASE).values,
                                  eq.item_scores(table, **BASE).values)


# --- (c) a harness log's epochs without seed= ----------------------------------------------------

def test_item_means_reads_the_epoch_column_with_a_warning():
    """The README's call on a multi-epoch log (no seed=): the epochs are averaged per item, as
    with seed='epoch', and a warning says so."""
    table = harness_table(epochs=(0, 1, 2))
    with pytest.warns(ImplicitEpochWarning, match=r"rows repeat the \(model, item\) keys, "
                                                  r"told apart by the table's column 'epoch' "
                                                  r"\(3 epochs\), and `seed` was not given"):
        implicit = eq.item_means(table, **BASE)
    explicit = eq.item_means(table, **BASE, seed="epoch")
    for name in ("mean", "se", "ci", "ci_difference", "n_seeds", "var_within"):
        np.testing.assert_array_equal(implicit[name].values, explicit[name].values)
    assert implicit.attrs["seed_column"] == "epoch"


@pytest.mark.parametrize("entry", ["from_items", "item_scores"])
def test_from_items_and_item_scores_read_the_epoch_column_alike(entry):
    table = harness_table(epochs=(0, 1))
    with pytest.warns(ImplicitEpochWarning, match=r"Pass seed='epoch' to say so"):
        implicit = ENTRY_POINTS[entry](table, **BASE)
    explicit = ENTRY_POINTS[entry](table, **BASE, seed="epoch")
    assert implicit.identical(explicit) if entry == "item_scores" else (
        implicit.score.identical(explicit.score))


def test_fit_items_reads_the_epoch_column_with_a_warning():
    """fit_items names its argument ``epoch``; with the epochs read, 'bernoulli' (one score per
    item) is refused for the epochs, which proves they were."""
    with (pytest.warns(ImplicitEpochWarning, match=r"`epoch` was not given.*Pass epoch='epoch'"),
          pytest.raises(ValueError, match=r"family 'bernoulli' takes one score per model and "
                                          r"item; the table has 2 epochs")):
        _cheap_fit(harness_table(), **BASE, family="bernoulli")
    with pytest.warns(ImplicitEpochWarning):
        implicit = item_statistics(harness_table(), **BASE)
    explicit = item_statistics(harness_table(), **BASE, epoch="epoch")
    assert implicit.digest == explicit.digest
    assert implicit.family == "binomial"


def test_no_warning_when_seed_is_given_or_epochs_do_not_repeat_keys():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eq.item_means(harness_table(), **BASE, seed="epoch")
        eq.item_means(harness_table(epochs=(0,)), **BASE)
        # lm-eval's logs: an epoch column of zeros and one row per item
        eq.item_means(harness_table(epochs=(0,), tasks=("t1", "t2")), **BASE, language="task")


def test_repeats_the_epoch_column_cannot_explain_name_the_columns_to_pass():
    """Two tasks numbering their items alike and two epochs, neither given: the message names
    both columns and the argument each goes to."""
    table = harness_table(tasks=("t1", "t2"))
    with pytest.raises(CubeError, match=r"\(model, language, seed, item\) key\(s\) appear in "
                                        r"more than one row .*its column 'epoch' differs among "
                                        r"these rows: pass seed='epoch' \(repeated scorings of "
                                        r"an item\); its column 'task' differs among these "
                                        r"rows: pass language='task'"):
        eq.item_means(table, **BASE)


def test_fit_items_messages_use_its_argument_names():
    table = harness_table(tasks=("t1", "t2"))
    doubled = pd.concat([table, table])
    with pytest.raises(CubeError, match=r"\(model, task, epoch, item\) key\(s\) appear in more "
                                        r"than one row"):
        _cheap_fit(doubled, **BASE, task="task", epoch="epoch")
    lacking = table.drop(index=table.index[(table["model"] == "b") & (table["item"] == 2)
                                           & (table["epoch"] == 1) & (table["task"] == "t1")])
    with pytest.raises(CubeError, match=r"task 't1': model 'b' epoch 1 lacks 1 item\(s\).*"
                                        r"Every model and epoch of a task"):
        _cheap_fit(lacking, **BASE, task="task", epoch="epoch")


def test_pivot_without_reading_epochs_names_the_column():
    """``epoch_from_table=False`` (the streamed zarr path) raises, naming what to pass."""
    with pytest.raises(CubeError, match=r"pass seed='epoch'"):
        pivot_items(harness_table(), **BASE, epoch_from_table=False)


def test_readme_per_item_example_runs_without_warnings():
    """README.md's per-item block on a harness-like table (tasks, epochs, passages)."""
    table = harness_table(n_items=8, epochs=(0, 1), tasks=("t1", "t2")).rename(
        columns={"score": "match"}).assign(passage=lambda t: t["item"] // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cube = eq.from_items(table, model="model", item="item", score="match",
                             language="task", seed="epoch", cluster="passage", n_boot=20)
        res = eq.item_means(table, model="model", item="item", score="match",
                            language="task", seed="epoch", cluster="passage")
    assert set(res["mean"].dims) == {"model", "language"}
    np.testing.assert_allclose(res["mean"].values,
                               cube.score.mean("seed").transpose("model", "language").values)

"""``evaluq report TABLE --item COL``: a per-item table of the user's own (one row per model
and item, as scripts and spreadsheets export evaluations) gets the report of harness logs.
The equivalence is checked on real Inspect logs: their table written as a CSV gives the same
cube, item means and judge correction as the logs themselves."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.cli import main

FAST = ["--n-resamples", "200", "--n-boot", "200", "--quiet"]


def _run(args, capsys):
    code = main(["report", *(str(a) for a in args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_csv_of_the_logs_items_gives_the_logs_report(inspect_logs, tmp_path, capsys):
    """The Inspect logs' per-item table as a CSV with the user's own column names: the same
    cube (scores and bootstrap replicates) and item means as --from inspect."""
    table = eq.read_inspect_logs([inspect_logs["eval"]], metadata=["passage"])
    renamed = table.rename(columns={"model": "system", "task": "benchmark", "item": "id",
                                    "epoch": "sample"})
    path = tmp_path / "items.csv"
    renamed.sample(frac=1.0, random_state=0).to_csv(path, index=False)     # any row order
    logs, csv = tmp_path / "logs", tmp_path / "csv"
    assert _run([inspect_logs["eval"], "--from", "inspect", "--score", "match", "--cluster",
                 "passage", "--out", logs, "--format", "csv", *FAST], capsys)[0] == 0
    code, _, err = _run([path, "--item", "id", "--model", "system", "--language", "benchmark",
                         "--seed", "sample", "--score", "match", "--cluster", "passage",
                         "--out", csv, "--format", "csv", *FAST], capsys)
    assert code == 0, err
    got, want = (eq.open_cube(folder / "match_cube.nc") for folder in (csv, logs))
    np.testing.assert_array_equal(got["score"].values, want["score"].values)
    np.testing.assert_array_equal(got["boot_score"].values, want["boot_score"].values)
    assert got.attrs["language_label"] == "benchmark"
    for name in ("match_item_means.csv", "match_leaderboard.csv"):
        a = pd.read_csv(csv / name).rename(columns={"benchmark": "task"})
        pd.testing.assert_frame_equal(a, pd.read_csv(logs / name))


def test_a_table_of_judge_and_human_scores_is_corrected(judged_logs, tmp_path, capsys):
    """--item with --judge and --gold: the corrected means of the logs, from a CSV holding the
    human label on a third of the rows (empty elsewhere: not warned about)."""
    with pytest.warns(eq.HarnessLogWarning, match="score 'human' is missing"):
        table = eq.read_inspect_logs([judged_logs], metadata=["passage"])
    path = tmp_path / "judged.csv"
    table.to_csv(path, index=False)
    logs, csv = tmp_path / "logs", tmp_path / "csv"
    assert _run([judged_logs, "--from", "inspect", "--judge", "judge", "--gold", "human",
                 "--cluster", "passage", "--out", logs, "--format", "csv", *FAST],
                capsys)[0] == 0
    code, _, err = _run([path, "--item", "item", "--language", "task", "--seed", "epoch",
                         "--judge", "judge", "--gold", "human", "--cluster", "passage",
                         "--out", csv, "--format", "csv", *FAST], capsys)
    assert code == 0, err
    assert "human" not in err
    pd.testing.assert_frame_equal(pd.read_csv(csv / "judge_corrected.csv"),
                                  pd.read_csv(logs / "judge_corrected.csv"))


@pytest.fixture
def items(tmp_path):
    rng = np.random.default_rng(0)
    rows = [(m, t, f"{t}-{i}", int(rng.random() < p)) for m, p in [("a", .8), ("b", .7)]
            for t in ("arc", "mmlu") for i in range(40)]
    df = pd.DataFrame(rows, columns=["model", "task", "item", "correct"])
    path = tmp_path / "items.csv"
    df.to_csv(path, index=False)
    return df, path


def test_without_a_task_column_the_items_are_one_task(items, tmp_path, capsys):
    df, _ = items
    path = tmp_path / "no_task.csv"
    df.drop(columns="task").to_csv(path, index=False)
    code, _, err = _run([path, "--item", "item", "--score", "correct", "--out", tmp_path / "o",
                         "--format", "csv", *FAST], capsys)
    assert code == 0, err
    cube = eq.open_cube(tmp_path / "o" / "correct_cube.nc")
    assert cube["language"].values.tolist() == ["all"]
    want = df.groupby("model")["correct"].mean()
    np.testing.assert_allclose(cube["score"].sel(language="all", seed=0).values, want.values)


@pytest.mark.parametrize(("change", "extra", "message"), [
    (lambda df: df, ["--score", "correct", "--from", "inspect"],
     "--from reads harness logs and --item per-item tables: give one"),
    (lambda df: df.assign(tokens=7), [],
     r"--item needs the per-item score column\(s\): --score COL .*numeric columns: "
     r"correct, tokens"),
    (lambda df: df, ["--score", "correct", "--mean", "correct"],
     "--item reads per-item scores: --mean / --bootstrap do not apply"),
    (lambda df: df.rename(columns={"item": "Item"}), ["--score", "correct"],
     r"column 'item' \(given as --item\) is not in .*\(did you mean --item Item\?\)"),
    (lambda df: pd.concat([df.assign(epoch=0), df.assign(epoch=1)]),
     ["--language", "task", "--score", "correct"],
     r"320 rows repeat a \(model, task, item\).*as --seed \(--seed epoch\?\)"),
    (lambda df: pd.concat([df, df]), ["--language", "task", "--score", "correct"],
     r"rows repeat a \(model, task, item\).*name the column that numbers them as --seed; "
     r"copies of one row: drop them"),
])
def test_per_item_table_errors_say_what_to_do(items, tmp_path, capsys, change, extra, message):
    df, _ = items
    path = tmp_path / "bad.csv"
    change(df).to_csv(path, index=False)
    code, _, err = _run([path, "--item", "item", "--out", tmp_path / "o", *extra, *FAST],
                        capsys)
    assert code == 2
    assert re.search(message, err), err


def test_items_missing_for_a_model_are_said_once(items, tmp_path, capsys):
    df, _ = items
    path = tmp_path / "holes.csv"
    df.drop(index=[3]).to_csv(path, index=False)
    code, _, err = _run([path, "--item", "item", "--language", "task", "--score", "correct",
                         "--out", tmp_path / "o", "--format", "csv", *FAST], capsys)
    assert code == 0, err
    assert err.count("MissingItemsWarning") == 1
    cube = eq.open_cube(tmp_path / "o" / "correct_cube.nc")
    assert int(cube["n_items"].sel(language="arc")) == 39
    xr.testing.assert_equal(cube["n_items"].sel(language="mmlu", drop=True),
                            xr.DataArray(40))


def test_a_task_column_and_the_score_are_read_as_without_item(tmp_path, capsys):
    """A per-item table (model, task, id, correct) whose item ids repeat across tasks, read
    with --item alone: its 'task' column is the task and its one numeric column the score,
    as the long format reads them, and the terminal says so. Before, the task column was
    left out unless given, the ids then repeated, and the error suggested --seed task; and
    --item without --score stopped where the long format reads the one numeric column."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame([(m, t, f"q{i}", int(rng.random() < p))
                       for m, p in [("a", .8), ("b", .6)] for t in ("arc", "mmlu")
                       for i in range(30)], columns=["model", "task", "id", "correct"])
    path = tmp_path / "items.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "o"
    code, _, err = _run([path, "--item", "id", "--out", out, "--format", "csv",
                         "--n-resamples", "200", "--n-boot", "200"], capsys)
    assert code == 0, err
    assert "column 'task' as --language task" in err
    assert "column 'correct' as --score correct (its one numeric column besides the keys)" in err
    cube = eq.open_cube(out / "correct_cube.nc")
    assert sorted(cube["language"].values.tolist()) == ["arc", "mmlu"]
    want = df.groupby(["model", "task"])["correct"].mean()
    np.testing.assert_allclose(cube["score"].sel(seed=0).transpose("model", "language").values,
                               want.unstack().values)


def test_a_per_item_table_without_item_names_its_item_column(tmp_path, capsys):
    """The same table without --item: the long format finds several rows per (model, task)
    and the error says which column tells them apart and the flag to give it with."""
    df = pd.DataFrame([(m, t, f"q{i}", i % 2) for m in "ab" for t in ("arc", "mmlu")
                       for i in range(5)], columns=["model", "task", "id", "correct"])
    path = tmp_path / "items.csv"
    df.to_csv(path, index=False)
    code, _, err = _run([path, "--out", tmp_path / "o", "--quiet"], capsys)
    assert code == 2
    assert ("(the table's column 'id' tells the repeated rows apart, one per item: a table of "
            "per-item scores; give it as --item)") in err, err


def test_a_column_named_language_is_the_task_column(items, tmp_path, capsys):
    """As the long format reads it: a 'language' column is the tasks without --language,
    and the page calls them languages."""
    df, _ = items
    path = tmp_path / "lang.csv"
    df.rename(columns={"task": "language"}).to_csv(path, index=False)
    code, _, err = _run([path, "--item", "item", "--score", "correct", "--out", tmp_path / "o",
                         "--format", "csv", *FAST], capsys)
    assert code == 0, err
    cube = eq.open_cube(tmp_path / "o" / "correct_cube.nc")
    assert sorted(cube["language"].values.tolist()) == ["arc", "mmlu"]
    assert cube.attrs["language_label"] == "language"


def test_scores_written_as_labels_are_read_with_label_score(inspect_logs, tmp_path, capsys):
    """A per-item CSV whose scores are Inspect's letters (C / I), as exported from a log
    viewer: before, the CLI's message told to call pandas' .map (no remedy the CLI has).
    Now it names --label-score with the usual scores of the labels, and with the flags the
    report equals that of the 1 / 0 file; a label left unmapped is named; a malformed flag
    is refused."""
    table = eq.read_inspect_logs([inspect_logs["eval"]])
    numbers = table.assign(correct=(table["match"] > 0.5).astype(float))
    numbers.to_csv(tmp_path / "numbers.csv", index=False)
    numbers.assign(correct=numbers["correct"].map({1.0: "C", 0.0: "I"})).to_csv(
        tmp_path / "letters.csv", index=False)
    args = ["--item", "item", "--language", "task", "--seed", "epoch", "--score", "correct",
            "--format", "csv", *FAST]
    code, _, err = _run([tmp_path / "letters.csv", *args, "--out", tmp_path / "a"], capsys)
    assert code == 2
    assert "read each label as its score: --label-score C=1 --label-score I=0" in err
    code, _, err = _run([tmp_path / "letters.csv", *args, "--label-score", "C=1", "--out",
                         tmp_path / "b"], capsys)
    assert code == 2
    assert "its values that are no number: ['I']" in err
    for name, extra in (("letters", ["--label-score", "C=1", "--label-score", "I=0"]),
                        ("numbers", [])):
        assert _run([tmp_path / f"{name}.csv", *args, *extra, "--out", tmp_path / name],
                    capsys)[0] == 0
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "letters" / "correct_leaderboard.csv"),
        pd.read_csv(tmp_path / "numbers" / "correct_leaderboard.csv"))
    code, _, err = _run([tmp_path / "letters.csv", *args, "--label-score", "C", "--out",
                         tmp_path / "c"], capsys)
    assert code == 2
    assert "--label-score takes LABEL=NUMBER (e.g. C=1); got 'C'" in err
    with pytest.raises(eq.CubeError, match=re.escape(
            "table['correct'].map({'C': 1, 'I': 0})")):
        eq.item_means(pd.read_csv(tmp_path / "letters.csv"), model="model", item="item",
                      score="correct", language="task", seed="epoch")


def test_an_item_in_two_files_is_named_with_its_files(inspect_logs, tmp_path, capsys):
    """Per-item files of one model each, one overlapping another's model: the item, model and
    epoch, and the two files (the epochs of one item in two files are fine)."""
    table = eq.read_inspect_logs([inspect_logs["eval"]])
    first, second = (table[table["epoch"] <= 2], table[table["epoch"] >= 2])
    first.to_csv(tmp_path / "a.csv", index=False)
    second.to_csv(tmp_path / "b.csv", index=False)
    args = ["--item", "item", "--language", "task", "--seed", "epoch", "--score", "match",
            "--format", "csv", *FAST]
    code, _, err = _run([tmp_path / "a.csv", tmp_path / "b.csv", *args, "--out",
                         tmp_path / "x"], capsys)
    assert code == 2
    assert "run(s) are in more than one file, e.g. model " in err
    assert "epoch 2 in" in err
    second[second["epoch"] > 2].to_csv(tmp_path / "b.csv", index=False)
    assert _run([tmp_path / "a.csv", tmp_path / "b.csv", *args, "--out", tmp_path / "y"],
                capsys)[0] == 0


def _judged_items(tmp_path, name="judged.csv", **change):
    """3 models x 60 items of one task: a 0/1 judge right 85% of the time, the human label
    on the first 20 items (empty elsewhere)."""
    rng = np.random.default_rng(3)
    frames = []
    for model, p in (("a", 0.8), ("b", 0.65), ("c", 0.5)):
        gold = (rng.random(60) < p).astype(float)
        judge = np.where(rng.random(60) < 0.85, gold, 1 - gold)
        frames.append(pd.DataFrame({"model": model, "task": "qa", "item": np.arange(60),
                                    "judge": judge,
                                    "human": np.where(np.arange(60) < 20, gold, np.nan)}))
    df = pd.concat(frames, ignore_index=True)
    for column, fix in change.items():
        df[column] = fix(df)
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


JUDGED = ["--item", "item", "--language", "task", "--judge", "judge", "--gold", "human"]


def test_text_gold_labels_are_refused_with_the_label_score_flags(tmp_path, capsys):
    """Human labels written yes / no (a common export): before, pandas' "dtype 'str' does not
    support operation 'mean'"; now the column, the flag and the --label-score mapping, which
    then runs and gives the numbers of the 0/1 file."""
    yes_no = _judged_items(tmp_path, "yes_no.csv", human=lambda d: d["human"].map(
        {1.0: "yes", 0.0: "no"}))
    code, _, err = _run([yes_no, *JUDGED, "--out", tmp_path / "x", *FAST], capsys)
    assert code == 2
    assert "column 'human' (given as --gold) must be numeric" in err
    assert "--label-score yes=1 --label-score no=0" in err
    assert "does not support operation" not in err
    mapped, plain = tmp_path / "mapped", tmp_path / "plain"
    assert _run([yes_no, *JUDGED, "--label-score", "yes=1", "--label-score", "no=0",
                 "--out", mapped, "--format", "csv", *FAST], capsys)[0] == 0
    assert _run([_judged_items(tmp_path), *JUDGED, "--out", plain, "--format", "csv", *FAST],
                capsys)[0] == 0
    pd.testing.assert_frame_equal(pd.read_csv(mapped / "judge_corrected.csv"),
                                  pd.read_csv(plain / "judge_corrected.csv"))


def test_a_missing_judge_score_is_dropped_with_its_item_as_the_warning_says(tmp_path, capsys):
    """One empty judge score: the warnings say the item is left out (--missing drop, for
    every model); the judge section then runs on the 59 items every model has (before: it
    was refused after those warnings), as it does for an item a model lacks altogether."""
    path = _judged_items(tmp_path, judge=lambda d: d["judge"].where(d.index != 70))
    out = tmp_path / "o"
    code, _, err = _run([path, *JUDGED, "--out", out, "--format", "csv", *FAST], capsys)
    assert code == 0, err
    assert "dropped these 1 item(s)" in err
    table = pd.read_csv(out / "judge_corrected.csv", index_col=0)
    assert (table["judged"] == 59).all()
    assert table.loc["b", "gold labels"] == 19                 # item 10 of b was labelled
    lacking = _judged_items(tmp_path, "lacking.csv")
    rows = pd.read_csv(lacking)
    rows[~((rows["model"] == "a") & (rows["item"] >= 50))].to_csv(lacking, index=False)
    out2 = tmp_path / "o2"
    assert _run([lacking, *JUDGED, "--out", out2, "--format", "csv", *FAST], capsys)[0] == 0
    assert (pd.read_csv(out2 / "judge_corrected.csv")["judged"] == 50).all()


def test_a_judge_that_is_not_an_analysed_score_names_the_flag_to_add(tmp_path, capsys):
    path = _judged_items(tmp_path, other=lambda d: d["judge"])
    code, _, err = _run([path, *JUDGED, "--score", "other", "--out", tmp_path / "o", *FAST],
                        capsys)
    assert code == 2
    assert "--judge 'judge' must be one of the --score columns" in err
    assert "add --score judge" in err
    assert "`judged`" not in err

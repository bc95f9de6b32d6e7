"""evaluq.io.read_inspect_logs on real Inspect logs, made offline by inspect_ai in the test."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.errors import CubeError, HarnessLogWarning

from .inspect_task import EPOCHS, N_PASSAGES, N_QUESTIONS, SKILL, make_task, run_inspect

pytest.importorskip("inspect_ai", reason="inspect_ai is not installed "
                    "(pip install 'evaluq[inspect]')")

N_ITEMS = N_PASSAGES * N_QUESTIONS
LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0}
"""Inspect's documented mapping of its score letters (correct, partial, incorrect)."""


@pytest.fixture(scope="module")
def tables(inspect_logs):
    return {fmt: eq.read_inspect_logs(folder, metadata=["passage"])
            for fmt, folder in inspect_logs.items()}


def _logs(folder):
    from inspect_ai.log import list_eval_logs, read_eval_log

    return [read_eval_log(info.name) for info in list_eval_logs(str(folder))]


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_table_shape_and_columns(tables, fmt):
    table = tables[fmt]
    assert list(table.columns) == ["model", "task", "item", "epoch", "match", "includes",
                                   "grade", "length", "passage"]
    assert len(table) == len(SKILL) * N_ITEMS * EPOCHS
    assert sorted(table["model"].unique()) == [f"mockllm/{m}" for m in sorted(SKILL)]
    assert set(table["task"]) == {"passages"}
    assert sorted(table["epoch"].unique()) == list(range(1, EPOCHS + 1))
    assert table.groupby("model")["item"].nunique().eq(N_ITEMS).all()
    assert table.groupby("passage")["item"].nunique().eq(N_QUESTIONS).all()
    assert not table.duplicated(["model", "task", "item", "epoch"]).any()
    assert table[["match", "includes", "grade", "length"]].notna().all().all()


def test_both_formats_give_the_same_table(tables):
    pd.testing.assert_frame_equal(tables["eval"], tables["json"])


def test_sorted_by_model_task_item_epoch(tables):
    table = tables["eval"]
    order = table.sort_values(["model", "task", "item", "epoch"]).index
    assert (order == table.index).all()


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_scores_map_as_inspect_letters(inspect_logs, tables, fmt):
    """Independent of value_to_float: the raw letters of the log through Inspect's documented
    C / P / I mapping, sample by sample."""
    table = tables[fmt].set_index(["model", "item", "epoch"])
    n = 0
    for log in _logs(inspect_logs[fmt]):
        for s in log.samples:
            row = table.loc[(log.eval.model, s.id, s.epoch)]
            assert row["match"] == LETTERS[s.scores["match"].value]
            assert row["includes"] == LETTERS[s.scores["includes"].value]
            assert row["grade"] == LETTERS[s.scores["graded"].value["grade"]]
            assert row["length"] == s.scores["graded"].value["length"]
            assert row["passage"] == s.metadata["passage"]
            n += 1
    assert n == len(table)
    assert set(tables[fmt]["grade"]) == {0.0, 0.5, 1.0}  # the three letters all occur


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_means_equal_inspects_own_metrics(inspect_logs, tables, fmt):
    """Inspect's accuracy / mean (epochs reduced by the mean, then over samples) equals the
    mean of the per-item column when every sample has every epoch."""
    table = tables[fmt]
    for log in _logs(inspect_logs[fmt]):
        mine = table[table["model"] == log.eval.model]
        for score in log.results.scores:
            metric = next(iter(score.metrics.values()))
            np.testing.assert_allclose(mine[score.name].mean(), metric.value, rtol=1e-12)


def test_models_differ(tables):
    means = tables["eval"].groupby("model")["match"].mean()
    assert means["mockllm/alpha"] > means["mockllm/gamma"]


def test_provenance_in_attrs(inspect_logs, tables):
    import inspect_ai

    attrs = tables["eval"].attrs
    assert attrs["harness"] == "inspect_ai"
    assert attrs["harness_version"] == inspect_ai.__version__
    assert attrs["harness_tasks"] == "passages"
    assert attrs["harness_models"] == "mockllm/alpha, mockllm/beta, mockllm/gamma"
    import json

    logs = json.loads(attrs["harness_logs"])
    assert len(logs) == len(SKILL)
    assert {entry["model"] for entry in logs} == {f"mockllm/{m}" for m in SKILL}
    assert all(entry["status"] == "success" and entry["date"] for entry in logs)
    assert all(entry["file"].startswith(str(inspect_logs["eval"])) for entry in logs)
    assert all(isinstance(v, str) for v in attrs.values())


def test_one_file_and_a_list_of_files(inspect_logs, tables):
    files = sorted(inspect_logs["eval"].glob("*.eval"))
    one = eq.read_inspect_logs(files[0])
    assert one["model"].nunique() == 1
    both = eq.read_inspect_logs([str(files[0]), files[1]], metadata="passage")
    assert both["model"].nunique() == 2


def test_no_metadata_by_default(tables, inspect_logs):
    table = eq.read_inspect_logs(inspect_logs["json"])
    assert "passage" not in table.columns


# --- bad input: each a clear error or warning naming the file, the model and the sample ---


def test_an_errored_run_is_an_error(tmp_path):
    run_inspect(tmp_path, models=["alpha"], task=make_task(fail="p2-q1", epochs=1),
                fail_on_error=True)
    (log,) = tmp_path.glob("*.eval")
    with pytest.raises(CubeError, match=r"did not finish \(status 'error'.*fails on p2-q1") as e:
        eq.read_inspect_logs(tmp_path)
    assert str(log) in str(e.value)
    assert "mockllm/alpha" in str(e.value)
    with pytest.warns(HarnessLogWarning) as record:
        table = eq.read_inspect_logs(tmp_path, allow_incomplete=True)
    messages = [str(w.message) for w in record]
    assert any("did not finish" in m and "allow_incomplete=True" in m for m in messages)
    assert any("samples errored: 'p2-q1' (epoch 1)" in m for m in messages)
    assert len(table) > 0


def test_a_scorer_missing_for_some_samples_warns(tmp_path):
    """The graded scorer raises on one sample (fail_on_error=False): the run succeeds, that
    sample's graded scores are missing, the other scorers' are there."""
    run_inspect(tmp_path, models=["beta"], task=make_task(flaky="p1-q2"), fail_on_error=False)
    with pytest.warns(HarnessLogWarning) as record:
        table = eq.read_inspect_logs(tmp_path)
    messages = [str(w.message) for w in record]
    assert any(f"score 'grade' is missing for 3 of {N_ITEMS * EPOCHS} samples: 'p1-q2' "
               "(epoch 1)" in m
               and "mockllm/beta" in m and ".eval" in m for m in messages)
    assert any("3 samples errored" in m and "cannot score p1-q2" in m for m in messages)
    missing = table[table["grade"].isna()]
    assert set(missing["item"]) == {"p1-q2"}
    assert len(missing) == EPOCHS
    assert table.loc[table["item"] == "p1-q2", "match"].notna().all()
    assert len(table) == N_ITEMS * EPOCHS  # nothing dropped


def test_duplicated_sample_ids_are_an_error(tmp_path):
    """Inspect refuses a dataset with duplicate ids, so the duplicate is made with Inspect's
    own API: a log read, one sample appended again, written back."""
    from inspect_ai.log import read_eval_log, write_eval_log

    (log,) = run_inspect(tmp_path / "run", models=["gamma"], task=make_task(epochs=1))
    log = read_eval_log(log.location)
    dup = log.samples[4]
    log.samples.append(dup)
    write_eval_log(log, str(tmp_path / "dup.json"))  # .eval files key samples by id and epoch
    with pytest.raises(CubeError, match=rf"duplicated sample ids: model 'mockllm/gamma', task "
                       rf"'passages', sample '{dup.id}' \(epoch {dup.epoch}\) appears 2 times"
                       r".*dup\.json"):
        eq.read_inspect_logs(tmp_path / "dup.json")


def test_two_logs_of_one_model_and_task(tmp_path):
    """Two runs of the same model on the same task: a warning that they are combined, and
    the samples both hold are duplicates (an error naming both files)."""
    for _ in range(2):
        run_inspect(tmp_path, models=["alpha"], task=make_task(epochs=1))
    files = sorted(str(p) for p in tmp_path.glob("*.eval"))
    with (pytest.warns(HarnessLogWarning, match="2 logs hold model 'mockllm/alpha' on task "
                       "'passages'"),
          pytest.raises(CubeError, match="duplicated sample ids") as e):
        eq.read_inspect_logs(tmp_path)
    assert all(f in str(e.value) for f in files)


def test_two_logs_of_disjoint_samples_are_combined(tmp_path):
    """A run split in two (``sample_id=``): warned, then read as one run."""
    ids = [f"p{p}-q{q}" for p in range(N_PASSAGES) for q in range(N_QUESTIONS)]
    run_inspect(tmp_path, models=["beta"], sample_id=ids[:7], task=make_task(epochs=1))
    run_inspect(tmp_path, models=["beta"], sample_id=ids[7:], task=make_task(epochs=1))
    with pytest.warns(HarnessLogWarning, match="combined as one run"):
        table = eq.read_inspect_logs(tmp_path)
    assert len(table) == N_ITEMS
    assert table["item"].nunique() == N_ITEMS


def test_missing_metadata_key_is_an_error(inspect_logs):
    with pytest.raises(CubeError, match=r"\.eval' \(model 'mockllm/\w+', task 'passages'\): "
                       r"sample 'p0-q0' \(epoch 1\) has no metadata 'doc'.*\['passage'\]"):
        eq.read_inspect_logs(inspect_logs["eval"], metadata=["doc"])


def test_a_file_twice_is_an_error(inspect_logs):
    first = sorted(inspect_logs["eval"].glob("*.eval"))[0]
    with pytest.raises(CubeError, match="names the log .* twice"):
        eq.read_inspect_logs([inspect_logs["eval"], first])


def test_argument_errors(tmp_path, inspect_logs):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        eq.read_inspect_logs(tmp_path / "nope")
    with pytest.raises(CubeError, match="holds no Inspect logs"):
        eq.read_inspect_logs(tmp_path)
    other = tmp_path / "scores.csv"
    other.write_text("a\n1\n")
    with pytest.raises(CubeError, match=r"is not an Inspect log \(suffix '.csv'"):
        eq.read_inspect_logs(other)
    with pytest.raises(TypeError, match="`paths` must be a path or a sequence of paths"):
        eq.read_inspect_logs(3)
    with pytest.raises(ValueError, match="`paths` must name at least one"):
        eq.read_inspect_logs([])
    with pytest.raises(TypeError, match="`metadata` must be a key or a list of keys"):
        eq.read_inspect_logs(inspect_logs["eval"], metadata=[1])
    with pytest.raises(ValueError, match="`metadata` keys \\['item'\\] clash"):
        eq.read_inspect_logs(inspect_logs["eval"], metadata=["item"])
    with pytest.raises(ValueError, match="`metadata` names a key twice"):
        eq.read_inspect_logs(inspect_logs["eval"], metadata=["passage", "passage"])
    with pytest.raises(TypeError, match="`allow_incomplete` must be True or False"):
        eq.read_inspect_logs(inspect_logs["eval"], allow_incomplete="yes")


def test_an_unreadable_log_is_an_error(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{not json")
    with pytest.raises(CubeError, match="cannot read the Inspect log .*broken.json"):
        eq.read_inspect_logs(bad)


def test_inspect_missing_says_what_to_install(monkeypatch, inspect_logs):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    with pytest.raises(ImportError, match=r"pip install 'evaluq\[inspect\]'"):
        eq.read_inspect_logs(inspect_logs["eval"])


def test_logs_copied_elsewhere_read_the_same(tmp_path, inspect_logs, tables):
    copy = shutil.copytree(inspect_logs["eval"], tmp_path / "copy with space")
    table = eq.read_inspect_logs(copy, metadata="passage")
    pd.testing.assert_frame_equal(table, tables["eval"])


def test_sample_summaries_give_the_same_scores(inspect_logs):
    """Without metadata an ``.eval`` log is read from its sample summaries (fast); the scores
    are those of the samples themselves."""
    fast = eq.read_inspect_logs(inspect_logs["eval"])
    full = eq.read_inspect_logs(inspect_logs["eval"], metadata="passage")
    pd.testing.assert_frame_equal(fast, full.drop(columns="passage"))


def test_invalidated_samples_are_kept_with_a_warning(tmp_path):
    """Samples invalidated with Inspect's own API (``invalidate_samples``)."""
    from inspect_ai.log import ProvenanceData, invalidate_samples, read_eval_log, write_eval_log

    (log,) = run_inspect(tmp_path / "run", models=["beta"], task=make_task(epochs=1))
    log = read_eval_log(log.location)
    target = log.samples[2]
    log = invalidate_samples(log, [target.uuid], ProvenanceData(author="test", reason="leak"))
    write_eval_log(log, str(tmp_path / "invalidated.eval"))
    with pytest.warns(HarnessLogWarning, match=rf"1 samples were invalidated in the log: "
                      rf"'{target.id}' \(epoch 1\); they are kept as read"):
        table = eq.read_inspect_logs(tmp_path / "invalidated.eval")
    assert len(table) == N_ITEMS

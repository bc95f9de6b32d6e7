"""evaluq.io.read_lm_eval_samples on real lm-evaluation-harness logs (tests/data/lm_eval/,
made by lm-eval 0.4.13 itself; see its README). Bad input is made from those files: copied,
concatenated, or with one field taken out by the test, never written from scratch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.errors import CubeError, HarnessLogWarning

DATA = Path(__file__).resolve().parents[1] / "data" / "lm_eval"
LOGS = DATA / "logs"
MODELS = ["dummy-a", "dummy-b", "dummy-c"]
N_DOCS = 24


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return eq.read_lm_eval_samples(LOGS, metadata=["passage", "question"])


def _results(model: str) -> dict:
    (path,) = (LOGS / model).glob("results_*.json")
    return json.loads(path.read_text())


def _samples(model: str, task: str) -> list[dict]:
    (path,) = (LOGS / model).glob(f"samples_{task}_*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_columns_and_shape(table):
    assert list(table.columns) == ["model", "task", "item", "epoch", "exact_match,strict",
                                   "exact_match,loose", "acc", "acc_norm", "passage", "question"]
    assert len(table) == len(MODELS) * 2 * N_DOCS
    assert sorted(table["model"].unique()) == MODELS
    assert sorted(table["task"].unique()) == ["toy_gen", "toy_mc"]
    assert (table["epoch"] == 0).all()
    assert table.groupby(["model", "task"])["item"].nunique().eq(N_DOCS).all()
    assert table.groupby(["model", "task", "passage"])["item"].nunique().eq(4).all()


def test_each_task_has_its_own_metrics(table):
    mc, gen = table[table["task"] == "toy_mc"], table[table["task"] == "toy_gen"]
    assert mc[["acc", "acc_norm"]].notna().all().all()
    assert mc[["exact_match,strict", "exact_match,loose"]].isna().all().all()
    assert gen[["exact_match,strict", "exact_match,loose"]].notna().all().all()
    assert set(np.unique(mc[["acc", "acc_norm"]])) == {0.0, 1.0}


def test_means_equal_lm_evals_own_results(table):
    """The mean of each per-item column is lm-eval's aggregated metric in its results JSON."""
    for model in MODELS:
        results = _results(model)["results"]
        for task, metrics in (("toy_mc", ["acc,none", "acc_norm,none"]),
                              ("toy_gen", ["exact_match,strict", "exact_match,loose"])):
            rows = table[(table["model"] == model) & (table["task"] == task)]
            for key in metrics:
                column = key.removesuffix(",none")
                np.testing.assert_allclose(rows[column].mean(), results[task][key], rtol=1e-12)


def test_values_are_the_samples_values(table):
    """Row by row against the samples file: doc_id, metric values, document fields."""
    indexed = table.set_index(["model", "task", "item"])
    for rec in _samples("dummy-b", "toy_mc"):
        row = indexed.loc[("dummy-b", "toy_mc", rec["doc_id"])]
        assert row["acc"] == rec["acc"]
        assert row["acc_norm"] == rec["acc_norm"]
        assert row["passage"] == rec["doc"]["passage"]
        assert row["question"] == rec["doc"]["question"]
    for rec in _samples("dummy-c", "toy_gen"):
        row = indexed.loc[("dummy-c", "toy_gen", rec["doc_id"])]
        assert row[f"exact_match,{rec['filter']}"] == rec["exact_match"]


def test_models_differ_on_the_random_task(table):
    acc = table[table["task"] == "toy_mc"].groupby("model")["acc"].mean()
    assert acc.nunique() > 1


def test_provenance(table):
    attrs = table.attrs
    assert attrs["harness"] == "lm_eval"
    assert attrs["harness_version"] == "0.4.13"
    assert attrs["harness_models"] == "dummy-a, dummy-b, dummy-c"
    assert attrs["harness_tasks"] == "toy_gen, toy_mc"
    logs = json.loads(attrs["harness_logs"])
    assert len(logs) == 6
    assert {(e["model"], e["task"]) for e in logs} == {(m, t) for m in MODELS
                                                       for t in ("toy_gen", "toy_mc")}
    stamp = _results("dummy-a")["date"]
    first = next(e for e in logs if e["model"] == "dummy-a")
    assert first["date"].startswith(pd.Timestamp(stamp, unit="s").strftime("%Y-%m-%dT%H:%M"))


def test_one_file_one_task(table):
    (path,) = (LOGS / "dummy-a").glob("samples_toy_mc_*.jsonl")
    one = eq.read_lm_eval_samples(path)
    assert list(one.columns) == ["model", "task", "item", "epoch", "acc", "acc_norm"]
    assert len(one) == N_DOCS
    expected = table[(table["model"] == "dummy-a") & (table["task"] == "toy_mc")]
    np.testing.assert_array_equal(one["acc"], expected["acc"])


def test_model_name_from_model_args(tmp_path):
    """Older results JSONs have no ``model_name``: the name is the model arguments'
    ``pretrained=`` (a string in older versions)."""
    folder = shutil.copytree(LOGS / "dummy-a", tmp_path / "a")
    (path,) = folder.glob("results_*.json")
    results = json.loads(path.read_text())
    del results["model_name"]
    results["config"]["model_args"] = "pretrained=org/tiny-model,dtype=float32"
    path.write_text(json.dumps(results))
    assert set(eq.read_lm_eval_samples(folder)["model"]) == {"org/tiny-model"}


# --- bad input ---------------------------------------------------------------------------


def test_two_runs_of_one_model_and_task(tmp_path):
    """The same model's output twice (two runs in one output folder): a warning that they
    are combined, then the documents both hold are duplicates (an error naming the files)."""
    shutil.copytree(LOGS / "dummy-a", tmp_path / "run1" / "dummy-a")
    shutil.copytree(LOGS / "dummy-a", tmp_path / "run2" / "dummy-a")
    with (pytest.warns(HarnessLogWarning, match="2 logs hold model 'dummy-a' on task"),
          pytest.raises(CubeError, match=r"duplicated sample ids: model 'dummy-a', task "
                        r"'toy_gen', sample 0 \(epoch 0\) appears 2 times.*run1.*run2")):
        eq.read_lm_eval_samples(tmp_path)


def test_a_document_twice_in_one_file(tmp_path):
    folder = shutil.copytree(LOGS / "dummy-b", tmp_path / "b")
    (path,) = folder.glob("samples_toy_mc_*.jsonl")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[3]]) + "\n")
    with pytest.raises(CubeError, match=r"duplicated sample ids: '.*samples_toy_mc_.*' \(model "
                       r"'dummy-b', task 'toy_mc'\) holds doc_id 3 \(filter 'none'\) more"):
        eq.read_lm_eval_samples(path)


def test_a_metric_missing_for_some_documents(tmp_path):
    folder = shutil.copytree(LOGS / "dummy-c", tmp_path / "c")
    (path,) = folder.glob("samples_toy_mc_*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for rec in records[5:7]:
        del rec["acc_norm"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.warns(HarnessLogWarning, match=r"\(model 'dummy-c', task 'toy_mc'\): score "
                      r"'acc_norm' is missing for 2 of 24 samples: 5 \(epoch 0\), 6 \(epoch 0\)"):
        table = eq.read_lm_eval_samples(path)
    assert len(table) == N_DOCS
    assert table["acc_norm"].isna().sum() == 2


def test_a_metric_without_per_item_values_is_left_out_with_a_warning(tmp_path):
    """A corpus-level metric (BLEU keeps a (reference, prediction) pair per document)."""
    folder = shutil.copytree(LOGS / "dummy-a", tmp_path / "a")
    (path,) = folder.glob("samples_toy_mc_*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for rec in records:
        rec["acc_norm"] = [rec["target"], "lol"]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.warns(HarnessLogWarning, match=r"metric 'acc_norm' holds list values per sample "
                      r"\(\['0', 'lol'\] for doc_id 0\)"):
        table = eq.read_lm_eval_samples(path)
    assert "acc_norm" not in table.columns
    assert "acc" in table.columns


def test_no_results_json_is_an_error(tmp_path):
    (path,) = (LOGS / "dummy-a").glob("samples_toy_mc_*.jsonl")
    copy = shutil.copy(path, tmp_path)
    with pytest.raises(CubeError, match=r"samples_toy_mc_.*no results JSON of the same run"):
        eq.read_lm_eval_samples(copy)


def test_missing_document_field_is_an_error():
    with pytest.raises(CubeError, match=r"\(model 'dummy-a', task 'toy_gen'\): sample doc_id 0 "
                       r"has no metadata 'topic'.*\['answer', 'choices'"):
        eq.read_lm_eval_samples(LOGS, metadata="topic")


def test_argument_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="`path`: no such file or folder"):
        eq.read_lm_eval_samples(tmp_path / "nope")
    with pytest.raises(CubeError, match="holds no lm-eval samples files"):
        eq.read_lm_eval_samples(tmp_path)
    with pytest.raises(CubeError, match="is not an lm-eval samples file"):
        eq.read_lm_eval_samples(next((LOGS / "dummy-a").glob("results_*.json")))
    with pytest.raises(TypeError, match="`path` must be a path or a sequence of paths"):
        eq.read_lm_eval_samples(None)
    with pytest.raises(CubeError, match="names the log .* twice"):
        eq.read_lm_eval_samples([LOGS, LOGS / "dummy-a"])


def test_not_json_is_an_error(tmp_path):
    folder = shutil.copytree(LOGS / "dummy-a", tmp_path / "a")
    (path,) = folder.glob("samples_toy_mc_*.jsonl")
    path.write_text(path.read_text()[:-40] + "\n")
    with pytest.raises(CubeError, match=r"line 24 is not JSON") as info:
        eq.read_lm_eval_samples(path)
    assert "interrupted" not in str(info.value)       # a damaged line, ending as lines do


def test_a_file_cut_inside_its_last_line_says_the_run_stopped(tmp_path):
    """A run killed while writing leaves its last record without its newline: the message
    says so and how many complete samples precede it."""
    folder = shutil.copytree(LOGS / "dummy-a", tmp_path / "a")
    (path,) = folder.glob("samples_toy_mc_*.jsonl")
    path.write_text(path.read_text()[:-300])
    with pytest.raises(CubeError, match=r"line 24 is not JSON .*writing stopped .*Rerun the "
                                        r"task, or delete that last line to use its 23 "
                                        r"complete samples"):
        eq.read_lm_eval_samples(path)

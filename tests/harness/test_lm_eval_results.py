"""lm-evaluation-harness's aggregated results files (``results_<date>.json``) on their own:
``evaluq.io.read_lm_eval_results`` and ``evaluq report OUT --from lm-eval`` when lm-eval ran
without ``--log_samples`` (its default). Real files made by lm-eval 0.4.13
(``tests/data/lm_eval/``); bad input is made from copies of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.cli import main
from evaluq.errors import CubeError, HarnessLogWarning

LOGS = Path(__file__).resolve().parents[1] / "data" / "lm_eval" / "logs"
MODELS = ["dummy-a", "dummy-b", "dummy-c"]


def _results_only(tmp_path: Path) -> Path:
    """lm-eval's output folder as it is without --log_samples: the results files alone."""
    out = tmp_path / "out"
    for model in MODELS:
        (out / model).mkdir(parents=True)
        for path in (LOGS / model).glob("results_*.json"):
            shutil.copy(path, out / model / path.name)
    return out


def test_the_results_equal_the_samples_mean_and_standard_error():
    """Each score is the mean of its samples, and its standard error lm-eval's
    ``sample SD / sqrt(n)`` of them (an independent check: the per-item samples of the same
    runs, read by the other reader)."""
    results = eq.read_lm_eval_results(LOGS)
    samples = eq.read_lm_eval_samples(LOGS)
    assert list(results.columns[:6]) == ["model", "task", "metric", "score", "stderr", "n"]
    assert sorted(results["model"].unique()) == MODELS
    checked = 0
    for row in results.itertuples():
        values = samples.loc[(samples["model"] == row.model) & (samples["task"] == row.task),
                             row.metric].dropna()
        assert len(values) == row.n == 24
        np.testing.assert_allclose(row.score, values.mean(), rtol=1e-12)
        np.testing.assert_allclose(row.stderr, values.std(ddof=1) / np.sqrt(len(values)),
                                   rtol=1e-9)
        checked += 1
    assert checked == 12                 # 3 models x (acc, acc_norm, 2 exact_match filters)
    assert set(results["metric"]) == {"acc", "acc_norm", "exact_match,strict",
                                      "exact_match,loose"}   # named as the samples name them


def _edited(tmp_path: Path, change) -> Path:
    out = _results_only(tmp_path)
    (path,) = (out / "dummy-a").glob("results_*.json")
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return out


def test_groups_are_left_out_saying_so_and_na_is_nan(tmp_path):
    def group(data):
        data["results"]["toy"] = {"acc,none": 0.4, "acc_stderr,none": 0.1}
        data["group_subtasks"] = {"toy": ["toy_mc", "toy_gen"]}
        data["results"]["toy_mc"]["acc_stderr,none"] = "N/A"
    out = _edited(tmp_path, group)
    with pytest.warns(HarnessLogWarning, match=r"groups \['toy'\] left out: each is an "
                                               r"aggregate of subtasks"):
        table = eq.read_lm_eval_results(out)
    assert "toy" not in set(table["task"])
    row = table[(table.model == "dummy-a") & (table.task == "toy_mc") & (table.metric == "acc")]
    assert np.isnan(row["stderr"].item())
    assert row["score"].item() > 0


def test_two_runs_of_a_model_and_task_are_refused_naming_the_files(tmp_path):
    out = _results_only(tmp_path)
    (path,) = (out / "dummy-a").glob("results_*.json")
    shutil.copy(path, out / "dummy-a" / "results_2026-11-25T10-00-00.000000.json")
    with pytest.raises(CubeError, match=r"model 'dummy-a', task 'toy_mc': in 2 results "
                                        r"files .*give one run of each model and task"):
        eq.read_lm_eval_results(out)


def _run(args, capsys):
    code = main(["report", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_report_on_the_results_files_alone(tmp_path, capsys):
    """The command a user runs on lm-eval's output without --log_samples (before: "holds no
    lm-eval samples files"): a summary report whose scores are lm-eval's, whose per-model
    SDs are its standard errors, and which says what it lacks (on the page and the
    terminal); per-item options are refused."""
    out = _results_only(tmp_path)
    code, _, err = _run([out, "--from", "lm-eval", "--score", "acc", "--out", tmp_path / "r",
                         "--format", "csv,html", "--n-resamples", "400", "--quiet"], capsys)
    assert code == 0, err
    assert "built from lm-eval's results files" in err
    page = (tmp_path / "r" / "report.html").read_text()
    assert "rerun lm-eval with --log_samples" in page
    board = pd.read_csv(tmp_path / "r" / "acc_leaderboard.csv", index_col=0)
    table = eq.read_lm_eval_results(out).query("metric == 'acc'").set_index("model")
    np.testing.assert_allclose(board["observed"], table.loc[board.index, "score"], rtol=1e-12)
    # one task: each model's SD is its standard error (the test-set noise, redrawn)
    np.testing.assert_allclose(board["sd"], table.loc[board.index, "stderr"], rtol=0.1)
    # one run measures no run-to-run spread: not identified (before: a column of zeros made
    # the variance table show sigma_seed 0), and the leaderboard says it is not in the sd
    variance = pd.read_csv(tmp_path / "r" / "acc_variance.csv", index_col=0)
    assert variance["sigma_seed mean"].isna().all()
    np.testing.assert_allclose(variance["sigma_boot mean"], table.loc[variance.index, "stderr"])
    assert "one run measures no run-to-run spread" in page
    assert "run-to-run (seed) noise is NOT included" in page
    code, _, err = _run([out, "--from", "lm-eval", "--score", "acc", "--cluster", "passage",
                         "--out", tmp_path / "c", "--quiet"], capsys)
    assert code == 2
    assert "--cluster needs lm-eval's per-item samples" in err
    code, _, err = _run([out, "--from", "lm-eval", "--score", "bleu", "--out", tmp_path / "d",
                         "--quiet"], capsys)
    assert code == 2
    assert "--score ['bleu'] not among the metrics of the results" in err


@pytest.mark.parametrize("source", ["samples", "results"])
def test_without_score_every_task_is_reported_under_its_first_metric(source, tmp_path,
                                                                     capsys):
    """Logs of two tasks whose metrics differ (toy_mc: acc, acc_norm; toy_gen: exact_match
    under two filters). Before, no --score meant the first score column alone, and the
    other task was left out of the report without a word. Now each task's first metric (its
    primary one) has a section, each saying where the other task is; with --score acc the
    note names toy_gen's scores and the flag."""
    logs = LOGS if source == "samples" else _results_only(tmp_path)
    code, _, err = _run([logs, "--from", "lm-eval", "--out", tmp_path / "r", "--format",
                         "csv", "--n-resamples", "200", "--quiet"], capsys)
    assert code == 0, err
    written = {p.name.split("_")[0] for p in (tmp_path / "r").glob("*_leaderboard.csv")}
    assert written == {"acc", "exact"}
    assert ("task(s) without score 'acc', not in its section: toy_gen (reported under "
            "'exact_match,strict')") in err
    assert ("task(s) without score 'exact_match,strict', not in its section: toy_mc "
            "(reported under 'acc')") in err
    code, _, err = _run([logs, "--from", "lm-eval", "--score", "acc", "--out", tmp_path / "s",
                         "--format", "csv", "--n-resamples", "200", "--quiet"], capsys)
    assert code == 0, err
    assert ("toy_gen (its scores: 'exact_match,strict', 'exact_match,loose'; give --score "
            "NAME for them)") in err

"""``evaluq report LOGS --from inspect --judge SCORER --gold SCORER`` (issue 32, item 6) on real
Inspect logs with an LLM-judge scorer and a human scorer on a third of the samples."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.cli import main

FAST = ["--n-resamples", "200", "--n-boot", "200", "--quiet"]


@pytest.fixture(scope="module")
def judged_report(judged_logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("judged_report")
    code = main(["report", str(judged_logs), "--from", "inspect", "--judge", "judge",
                 "--gold", "human", "--cluster", "passage", "--out", str(out), *FAST])
    assert code == 0
    return out


def test_the_page_shows_corrected_beside_raw_judge_means(judged_report):
    page = (judged_report / "report.html").read_text()
    assert 'id="judged"' in page
    assert "Judge scores corrected by human labels" in page
    corrected = pd.read_csv(judged_report / "judge_corrected.csv", index_col=0)
    assert list(corrected.columns[:3]) == ["judge mean (raw)", "corrected", "lower"]
    assert len(corrected) == 3
    assert (corrected["lower"] <= corrected["corrected"]).all()
    assert (corrected["corrected"] <= corrected["upper"]).all()
    assert (corrected["gold labels"] == 12).all()               # 36 items, every third labelled
    budget = pd.read_csv(judged_report / "judge_label_budget.csv", index_col=0)
    assert (budget["without the judge"] > budget["gold labels"]).all()


def test_the_numbers_are_judged_means_of_the_epoch_means(judged_report, judged_logs):
    """The page's corrected means are eq.judged_means on one row per (model, item): the
    judge's mean over epochs, the human label's mean over the epochs that have one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", eq.EvaluqWarning)       # the unlabelled samples
        table = eq.read_inspect_logs(judged_logs, metadata=["passage"])
    rows = table.groupby(["model", "item"], sort=True).agg(
        judge=("judge", "mean"), human=("human", "mean"),
        passage=("passage", "first")).reset_index()
    with pytest.warns(eq.EvaluqWarning, match="`cluster` has 12 clusters"):   # few: floored
        direct = eq.judged_means(rows, judge="judge", gold="human", cluster="passage", rng=0)
    shown = pd.read_csv(judged_report / "judge_corrected.csv", index_col=0)
    expected = direct.estimate.to_series()
    np.testing.assert_allclose(shown.loc[expected.index, "corrected"], expected, rtol=1e-9)
    raw = rows.groupby("model")["judge"].mean()
    np.testing.assert_allclose(shown.loc[raw.index, "judge mean (raw)"], raw, rtol=1e-12)


def test_judge_and_gold_go_together_and_need_logs(judged_logs, tmp_path, capsys):
    assert main(["report", str(judged_logs), "--from", "inspect", "--judge", "judge",
                 "--out", str(tmp_path / "a"), *FAST]) == 2
    assert "--judge and --gold go together" in capsys.readouterr().err
    assert main(["report", str(judged_logs), "--from", "inspect", "--judge", "judge",
                 "--gold", "humans", "--out", str(tmp_path / "b"), *FAST]) == 2
    assert "--gold 'humans' is not a score of the logs" in capsys.readouterr().err
    csv = tmp_path / "runs.csv"
    pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"], "score": [1.0, 2.0]}).to_csv(
        csv, index=False)
    assert main(["report", str(csv), "--score", "score", "--judge", "j", "--gold", "g",
                 "--out", str(tmp_path / "c"), *FAST[:2]]) == 2
    assert "add --item COL (a table of one row per model and item) or --from" in \
        capsys.readouterr().err

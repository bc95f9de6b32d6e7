"""Hugging Face lighteval's ``--save-details`` output: ``evaluq.io.read_lighteval_details``
and ``evaluq report OUT --from lighteval``, on real files made by lighteval 0.13.0 itself
(``tests/data/lighteval/``, ``benchmarks/anchors/make_lighteval_logs.py``); bad input is
made from copies of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.cli import main
from evaluq.errors import CubeError

DATA = Path(__file__).resolve().parents[1] / "data" / "lighteval"


def _results() -> pd.DataFrame:
    """lighteval's own aggregates: one row per model, task and metric (score, stderr)."""
    rows = []
    for path in sorted((DATA / "results").rglob("results_*.json")):
        results = json.loads(path.read_text())
        model = results["config_general"]["model_name"]
        for task, values in results["results"].items():
            if task == "all":
                continue
            rows += [{"model": model, "task": task, "metric": k, "score": v,
                      "stderr": values[f"{k}_stderr"]}
                     for k, v in values.items() if not k.endswith("_stderr")]
    return pd.DataFrame(rows)


def test_the_details_equal_lighteval_s_own_aggregates():
    """Each model's per-sample mean is lighteval's score to 1e-12 and SD(ddof=1)/sqrt(n) its
    standard error to 1e-12; the three models are paired on the same samples, each with its
    passage."""
    table = eq.read_lighteval_details(DATA, metadata="passage")
    assert table.columns.tolist() == ["model", "task", "item", "epoch", "em", "acc",
                                      "acc_norm", "passage"]
    assert table.attrs["harness"] == "lighteval"
    expected = _results()
    assert len(expected) == 9
    for row in expected.itertuples():
        values = table.loc[(table.model == row.model) & (table.task == row.task), row.metric]
        assert len(values) == 24
        assert values.mean() == pytest.approx(row.score, abs=1e-12)
        assert values.std(ddof=1) / np.sqrt(len(values)) == pytest.approx(row.stderr,
                                                                          abs=1e-12)
    per_model = table.groupby(["task", "item"])["model"].nunique()
    assert (per_model == 3).all()
    assert table.groupby(["task", "item"])["passage"].nunique().max() == 1
    assert table["passage"].nunique() == 6


def test_the_report_from_lighteval(tmp_path, capsys):
    """``evaluq report OUT --from lighteval --cluster passage``: without --score each task's
    metric has a section (acc for toy_mc, em for toy_gen), the observed scores lighteval's;
    the folder given without --from is read as lighteval's, and the terminal says so."""
    code = main(["report", str(DATA), "--from", "lighteval", "--cluster", "passage",
                 "--out", str(tmp_path / "r"), "--format", "csv", "--n-resamples", "200",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "task(s) without score 'acc', not in its section: toy_gen|0 (reported under 'em')" \
        in err
    board = pd.read_csv(tmp_path / "r" / "acc_leaderboard.csv", index_col=0)
    own = _results().query("metric == 'acc'").set_index("model")["score"]
    np.testing.assert_allclose(board["observed"], own[board.index], atol=1e-12)
    assert (tmp_path / "r" / "em_leaderboard.csv").is_file()
    code = main(["report", str(DATA), "--score", "acc", "--out", str(tmp_path / "s"),
                 "--format", "csv", "--n-resamples", "200"])
    assert code == 0                                     # without --from: read, and said
    assert "as lighteval logs (--from lighteval)" in capsys.readouterr().err
    np.testing.assert_allclose(pd.read_csv(tmp_path / "s" / "acc_leaderboard.csv",
                                           index_col=0)["observed"], own[board.index],
                               atol=1e-12)


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(DATA / "results", out / "results")
    shutil.copytree(DATA / "details", out / "details")
    return out


def test_bad_details_are_refused_naming_the_file(tmp_path):
    out = _copy(tmp_path)
    with pytest.raises(CubeError, match="has no metadata 'chapter'.*'passage'"):
        eq.read_lighteval_details(out, metadata="chapter")
    first = sorted((out / "details").rglob("details_toy_mc*.parquet"))[0]
    first.write_bytes(first.read_bytes()[:300])
    with pytest.raises(CubeError, match=r"toy_mc\|0'\): cannot read it as lighteval's "
                                        "details"):
        eq.read_lighteval_details(out)
    with pytest.raises(CubeError, match="is not a lighteval details file"):
        eq.read_lighteval_details(DATA / "README.md")
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(sorted((DATA / "details").rglob("*.parquet"))[0], loose)
    with pytest.raises(CubeError, match="is not in lighteval's layout"):
        eq.read_lighteval_details(loose)


def test_the_results_files_alone(tmp_path, capsys):
    """lighteval's default output (no --save-details): eq.read_lighteval_results gives its
    scores and standard errors; ``--from lighteval`` reports them in the summary format,
    saying what the details would add; per-item options are refused naming
    --save-details."""
    out = tmp_path / "out"
    shutil.copytree(DATA / "results", out / "results")
    table = eq.read_lighteval_results(out)
    assert table.attrs["harness"] == "lighteval"
    own = _results().set_index(["model", "task", "metric"]).sort_index()
    got = table.set_index(["model", "task", "metric"]).sort_index()
    np.testing.assert_array_equal(got["score"], own["score"])
    np.testing.assert_array_equal(got["stderr"], own["stderr"])
    code = main(["report", str(out), "--from", "lighteval", "--out", str(tmp_path / "r"),
                 "--format", "csv", "--n-resamples", "400", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "built from lighteval's results files (no details files" in err
    assert "rerun lighteval with --save-details" in err
    board = pd.read_csv(tmp_path / "r" / "acc_leaderboard.csv", index_col=0)
    acc = table.query("metric == 'acc'").set_index("model")
    np.testing.assert_allclose(board["observed"], acc.loc[board.index, "score"], atol=1e-12)
    np.testing.assert_allclose(board["sd"], acc.loc[board.index, "stderr"], rtol=0.12)
    code = main(["report", str(out), "--from", "lighteval", "--cluster", "passage",
                 "--out", str(tmp_path / "c")])
    assert code == 2
    assert ("--cluster needs lighteval's per-item details (lighteval run with "
            "--save-details)") in capsys.readouterr().err
    lm_eval = Path(__file__).resolve().parents[1] / "data" / "lm_eval" / "logs"
    with pytest.raises(CubeError, match="is not lighteval's results JSON"):
        eq.read_lighteval_results(sorted(lm_eval.rglob("results_*.json"))[0])

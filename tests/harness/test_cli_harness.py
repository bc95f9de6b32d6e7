"""``evaluq report LOGS --from inspect|lm-eval`` on real harness logs (Inspect run offline in
the test session; lm-eval's committed sample logs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from evaluq.cli import main

from .inspect_task import EPOCHS, N_PASSAGES, N_QUESTIONS, make_task, run_inspect

LM_EVAL = Path(__file__).resolve().parents[1] / "data" / "lm_eval" / "logs"
LIGHTEVAL = Path(__file__).resolve().parents[1] / "data" / "lighteval"
FAST = ["--n-resamples", "200", "--n-boot", "200", "--quiet"]


def _run(args, capsys):
    code = main(["report", *(str(a) for a in args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page)


@pytest.fixture(scope="module")
def inspect_report(inspect_logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    code = main(["report", str(inspect_logs["eval"]), "--from", "inspect", "--cluster", "passage",
                 "--out", str(out), *FAST])
    assert code == 0
    return out


def test_report_on_a_folder_of_inspect_logs(inspect_report):
    page = (inspect_report / "report.html").read_text()
    assert _ids(page) == ["data", "variance", "leaderboard", "items", "ranks", "tiers",
                          "field", "power", "reproducibility"]
    assert "smallest detectable difference" in page
    assert "mockllm/alpha" in page
    assert "The harness logs read (inspect_ai" in page
    for stem in ("leaderboard", "pairwise", "ranks", "variance", "item_means",
                 "item_differences"):
        assert (inspect_report / f"match_{stem}.csv").is_file()
    board = pd.read_csv(inspect_report / "match_leaderboard.csv")
    assert board["model"].iloc[0] == "mockllm/alpha"


def test_the_cube_records_the_logs(inspect_report, inspect_logs):
    import inspect_ai

    cube = xr.open_dataset(inspect_report / "match_cube.nc")
    assert cube.attrs["loader"] == "from_items"
    assert cube.attrs["harness"] == "inspect_ai"
    assert cube.attrs["harness_version"] == inspect_ai.__version__
    assert cube.attrs["cluster_column"] == "passage"
    logs = json.loads(cube.attrs["harness_logs"])
    assert sorted(e["model"] for e in logs) == ["mockllm/alpha", "mockllm/beta",
                                                "mockllm/gamma"]
    assert all(Path(e["file"]).parent == inspect_logs["eval"] for e in logs)
    assert cube.sizes == {"model": 3, "language": 1, "seed": EPOCHS, "bootstrap": 200}
    assert int(cube["n_clusters"].item()) == N_PASSAGES


def test_clustered_differences_by_hand(inspect_report, inspect_logs):
    """The paired differences' cluster-robust SEs, recomputed from the logs with pandas: per
    item the epoch mean of A - B, then CR1 over passages."""
    import evaluq as eq

    table = eq.read_inspect_logs(inspect_logs["eval"], metadata="passage")
    wide = table.pivot_table(index=["item", "passage"], columns="model", values="match",
                             aggfunc="mean").reset_index()
    diffs = pd.read_csv(inspect_report / "match_item_differences.csv")
    assert len(diffs) == 3  # each pair once
    for row in diffs.itertuples():
        d = wide[row.model] - wide[row.model_b]
        resid = (d - d.mean()).groupby(wide["passage"]).sum()
        g, n = len(resid), len(d)
        se = np.sqrt(g / (g - 1) * (resid**2).sum()) / n
        np.testing.assert_allclose(row.difference, d.mean(), rtol=1e-12)
        np.testing.assert_allclose(row.se_difference, se, rtol=1e-10)
        assert row.difference >= 0  # the better model first
    assert len(wide) == N_PASSAGES * N_QUESTIONS


def test_several_scores_and_json_logs(inspect_logs, tmp_path, capsys):
    code, out, _ = _run([inspect_logs["json"], "--from", "inspect", "--score", "match",
                         "--score", "grade", "--out", tmp_path, "--format", "csv,json",
                         *FAST], capsys)
    assert code == 0, out
    payload = json.loads((tmp_path / "analysis.json").read_text())
    assert sorted(payload["metrics"]) == ["grade", "match"]
    assert "item_differences" in payload["metrics"]["grade"]["tables"]


def test_report_on_lm_eval_samples(tmp_path, capsys):
    code, _, err = _run([LM_EVAL, "--from", "lm-eval", "--score", "acc", "--cluster",
                           "passage", "--out", tmp_path, "--format", "csv", *FAST], capsys)
    assert code == 0, err
    means = pd.read_csv(tmp_path / "acc_item_means.csv")
    assert sorted(means["model"]) == ["dummy-a", "dummy-b", "dummy-c"]
    assert set(means["language"]) == {"toy_mc"}
    results = {}
    for model in ("dummy-a", "dummy-b", "dummy-c"):
        (path,) = (LM_EVAL / model).glob("results_*.json")
        results[model] = json.loads(path.read_text())["results"]["toy_mc"]["acc,none"]
    np.testing.assert_allclose(means.set_index("model")["mean"].to_dict()["dummy-b"],
                               results["dummy-b"], rtol=1e-12)
    cube = xr.open_dataset(tmp_path / "acc_cube.nc")
    assert cube.attrs["harness"] == "lm_eval"
    assert cube.attrs["harness_version"] == "0.4.13"


def test_a_model_without_the_log_of_a_score_is_named_not_dropped_silently(tmp_path, capsys):
    """dummy-c's toy_gen log is absent: its exact-match score has no row, so that score's
    analysis has two models. The terminal and the page say so; --missing raise stops."""
    import shutil

    logs = tmp_path / "logs"
    shutil.copytree(LM_EVAL, logs)
    for path in (logs / "dummy-c").glob("samples_toy_gen_*.jsonl"):
        path.unlink()
    out = tmp_path / "out"
    code, _, err = _run([logs, "--from", "lm-eval", "--score", "exact_match,strict",
                         "--score", "acc", "--out", out, *FAST], capsys)
    assert code == 0, err
    said = ("model(s) ['dummy-c'] have no score 'exact_match,strict' in the logs (no log of "
            "its task(s) ['toy_gen']")
    assert said in err
    assert "have no score 'acc'" not in err
    board = (out / "exact_match_strict_leaderboard.md").read_text()
    assert "dummy-c" not in board
    assert "dummy-c" in (out / "acc_leaderboard.md").read_text()
    assert said in (out / "report.html").read_text().replace("&#x27;", "'")
    cube = xr.open_dataset(out / "exact_match_strict_cube.nc")
    assert said in cube.attrs["data_note"]
    code, _, err = _run([logs, "--from", "lm-eval", "--score", "exact_match,strict",
                         "--missing", "raise", "--out", tmp_path / "out2", *FAST], capsys)
    assert code == 2
    assert "give their logs, or --missing drop" in err


def test_errors_are_clear(inspect_logs, tmp_path, capsys):
    code, _, err = _run([inspect_logs["eval"], "--from", "inspect", "--score", "nope",
                         "--out", tmp_path, *FAST], capsys)
    assert code == 2
    assert "--score ['nope'] not among the scores of the logs: ['match', 'includes', " in err
    code, _, err = _run([inspect_logs["eval"], "--from", "inspect", "--mean", "x",
                         "--out", tmp_path, *FAST], capsys)
    assert code == 2
    assert "--mean / --bootstrap do not apply" in err
    code, _, err = _run([inspect_logs["eval"], "--from", "inspect", "--cluster", "topic",
                         "--out", tmp_path, *FAST], capsys)
    assert code == 2
    assert "has no metadata 'topic'" in err


def test_a_log_given_without_from_is_read_as_its_harness_and_said(inspect_logs, tmp_path,
                                                                      capsys):
    """A harness's log (file or folder) given without --from said 'give either --score or
    --mean' (a folder with no --score) or 'looks like a log, run with --from' (a file): a
    log evaluq recognises is now read as its harness's, and stderr says so. A renamed samples
    file (not recognisable by its name) still names the flag."""
    (results,) = (LM_EVAL / "dummy-b").glob("results_*.json")
    (samples,) = (LM_EVAL / "dummy-b").glob("samples_toy_mc_*.jsonl")
    cases = {"lm-eval": [LM_EVAL, LM_EVAL.parent, results, samples],
             "lighteval": [LIGHTEVAL],
             "inspect": [inspect_logs["eval"], next(inspect_logs["eval"].glob("*.eval")),
                         inspect_logs["json"], next(inspect_logs["json"].glob("*.json"))]}
    for source, paths in cases.items():
        for path in paths:
            code, _, err = _run([path, "--out", tmp_path / "out", "--format", "csv",
                                 "--n-resamples", "200", "--n-boot", "200"], capsys)
            assert code == 0, (path, err)
            assert f"as {source} logs (--from {source})" in err, err
    renamed = tmp_path / "toy_mc.jsonl"                     # lm-eval samples, renamed
    renamed.write_bytes(samples.read_bytes())
    code, _, err = _run([renamed, "--score", "acc", "--out", tmp_path, *FAST], capsys)
    assert code == 2
    assert "looks like an lm-evaluation-harness log" in err, err
    assert "run with --from lm-eval" in err, err


def test_a_folder_of_no_harness_logs_is_refused_naming_from(tmp_path, capsys):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "notes.txt").write_text("hello")
    code, _, err = _run([tmp_path / "runs", "-o", tmp_path / "out"], capsys)
    assert code == 2
    assert "is a folder: give the table's file(s)" in err
    assert "--from inspect|lm-eval|lighteval" in err


def test_an_errored_run_stops_the_report(tmp_path, capsys):
    run_inspect(tmp_path / "logs", models=["alpha"], task=make_task(fail="p0-q1", epochs=1),
                fail_on_error=True)
    code, _, err = _run([tmp_path / "logs", "--from", "inspect", "--out", tmp_path / "out",
                         *FAST], capsys)
    assert code == 2
    assert "did not finish (status 'error'" in err
    assert "mockllm/alpha" in err


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::evaluq.hierarchical._fit.ConvergenceWarning")
def test_bayes_adds_the_posterior(inspect_logs, tmp_path, capsys, monkeypatch):
    """The real item-model fit (fewer draws than the default, to stay quick): with per-item
    scores --bayes fits the item model, not the cube model."""
    from evaluq.reporting import _item_model

    monkeypatch.setattr(_item_model, "FIT_DEFAULTS", {"draws": 300, "tune": 300, "chains": 2})
    code, _, err = _run([inspect_logs["eval"], "--from", "inspect", "--cluster", "passage",
                         "--bayes", "--out", tmp_path, "--format", "html", *FAST], capsys)
    assert code == 0, err
    page = (tmp_path / "report.html").read_text()
    assert "item-model" in _ids(page)
    assert "posterior" not in _ids(page)
    assert "items" in _ids(page)


def test_identical_models_default_score(tmp_path, capsys):
    """lm-eval's dummy model answers every generation alike: three identical models on
    toy_gen (the first score, the default), differences and MDE of 0, no error."""
    code, out, err = _run([LM_EVAL, "--from", "lm-eval", "--out", tmp_path, "--format", "csv",
                           *FAST], capsys)
    assert code == 0, err
    assert "exact_match_strict_item_differences.csv" in out
    diffs = pd.read_csv(tmp_path / "exact_match_strict_item_differences.csv")
    assert (diffs["difference"] == 0).all()
    assert len(diffs) == 3


@pytest.mark.parametrize("bayes", [[], ["--bayes", "--draws", "200", "--tune", "200"]])
def test_a_real_inspect_log_of_one_model_gives_a_one_model_report(tmp_path, capsys, bayes):
    """Issue 30: one model's log stopped after 6 of 9 steps ("`pairwise` has fewer than two
    models"); now a one-model report: score, intervals, per-item means, no comparisons."""
    pytest.importorskip("inspect_ai")
    logs = tmp_path / "logs"
    run_inspect(logs, models=["mockllm/strong"])
    code, _, err = _run([logs, "--from", "inspect", "--cluster", "passage",
                           "--out", tmp_path / "out", *FAST, *bayes], capsys)
    assert code == 0, err
    page = (tmp_path / "out" / "report.html").read_text()
    ids = _ids(page)
    assert {"data", "variance", "leaderboard", "items"} <= set(ids)
    assert not {"ranks", "tiers"} & set(ids)
    assert "One model" in page

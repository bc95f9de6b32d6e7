"""The real ``evaluq report`` on the results files users have (issue 30): a long CSV of runs,
ragged, single or missing seeds, missing cells, a summary file, two metrics one of them lower
is better, one model, two models, mixed scales, two tasks, TSV / Parquet / JSON lines, a
bootstrap column, a wide table (one column per task). Nothing is stubbed: the real command
line, the real resampling and (slow) the real hierarchical fit. Each shape must give a
complete report: exit 0, the HTML page with its sections and figures, the cube and the
tables."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluq.cli import build_parser, main

MODELS = ["gpt-small", "llama-7b", "mistral-7b", "qwen-7b"]
TASKS = ["arc_challenge", "hellaswag", "mmlu_high_school_mathematics", "truthfulqa_mc2",
         "winogrande", "gsm8k"]
BASE = {"gpt-small": 0.55, "llama-7b": 0.62, "mistral-7b": 0.66, "qwen-7b": 0.64}
COLS = ["--language", "task", "--seed", "seed", "--score", "accuracy"]


def _runs(seed: int = 1) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    rows = []
    for m in MODELS:
        for t in TASKS:
            shift = gen.normal(0, 0.05)
            for s in range(3):
                acc = BASE[m] + shift + gen.normal(0, 0.01)
                rows.append({"model": m, "task": t, "seed": s, "accuracy": acc,
                             "loss": 2.5 - 2 * (BASE[m] + shift) + gen.normal(0, 0.03)})
    return pd.DataFrame(rows)


def _with_bootstrap(runs: pd.DataFrame, seed: int = 2) -> pd.DataFrame:
    """One seed and 40 bootstrap replicates shared by the models (a shared test-set draw)."""
    gen = np.random.default_rng(seed)
    full = runs[runs.seed == 0].drop(columns="loss").assign(boot=np.nan)
    reps = [{"model": m, "task": t, "seed": 0, "boot": b,
             "accuracy": BASE[m] + shared + gen.normal(0, 0.006)}
            for t in TASKS for b in range(40) for shared in [gen.normal(0, 0.02)]
            for m in MODELS]
    return pd.concat([full, pd.DataFrame(reps)], ignore_index=True)


def _write(path: Path, frame: pd.DataFrame) -> Path:
    if path.suffix == ".tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, index=False)
    return path


def _shapes() -> dict[str, tuple[str, pd.DataFrame, list[str]]]:
    """name -> (file name, table, extra options)."""
    runs = _runs()
    acc = runs.drop(columns="loss")
    extra = acc[acc.model == "qwen-7b"].assign(seed=lambda d: d.seed + 3)
    summary = acc.groupby(["model", "task"]).accuracy.agg(["mean", "std"]).reset_index()
    summary.columns = ["model", "task", "mean", "sd_seed"]
    mixed = acc.copy()
    mixed.loc[mixed.model == "qwen-7b", "accuracy"] *= 100
    summary_opts = ["--language", "task", "--mean", "mean", "--sd-seed", "sd_seed",
                    "--n-seeds", "3"]
    return {
        "long runs": ("runs.csv", acc, COLS),
        "two metrics, loss lower": ("two.csv", runs, [*COLS, "--score", "loss",
                                                      "--lower-is-better", "loss"]),
        "one seed, no seed column": ("one_seed.csv", acc[acc.seed == 0].drop(columns="seed"),
                                     ["--language", "task", "--score", "accuracy"]),
        "a missing run": ("missing_run.csv", acc.drop(index=5), COLS),
        "ragged seeds": ("ragged.csv", pd.concat([acc, extra]), COLS),
        "a missing cell": ("missing_cell.csv",
                           acc[~((acc.model == "llama-7b") & (acc.task == "gsm8k"))], COLS),
        "summary file": ("summary.csv", summary, summary_opts),
        "one model": ("one_model.csv", acc[acc.model == "qwen-7b"], COLS),
        "two models": ("two_models.csv", acc[acc.model.isin(MODELS[:2])], COLS),
        "mixed scales": ("mixed.csv", mixed, COLS),
        "two tasks": ("two_tasks.csv", acc[acc.task.isin(TASKS[:2])], COLS),
        "TSV": ("runs.tsv", acc, COLS),
        "Parquet": ("runs.parquet", acc, COLS),
        "JSON lines": ("runs.jsonl", acc, COLS),
        "bootstrap column": ("boot.csv", _with_bootstrap(runs),
                             [*COLS, "--bootstrap", "boot"]),
        "wide table, one column per task": (
            "wide.csv", acc.pivot(index=["model", "seed"], columns="task",
                                  values="accuracy").reset_index().assign(Average=0.6),
            ["--language", "task", "--seed", "seed", "--score", "accuracy", "--wide", *TASKS]),
    }


SHAPES = _shapes()
FAST = ["--n-resamples", "200", "--quiet"]
BAYES = ["--bayes", "--draws", "300", "--tune", "300"]


def _report(tmp_path: Path, name: str, options: list[str]) -> tuple[int, str, Path]:
    file, frame, cols = SHAPES[name]
    path = _write(tmp_path / file, frame)
    out = tmp_path / "out"
    code = main(["report", str(path), *cols, *FAST, *options, "--out", str(out)])
    return code, (out / "report.html").read_text() if code == 0 else "", out


def _check_page(page: str, name: str, bayes: bool) -> None:
    sections = set(re.findall(r'<section id="(?:m\d-)?([a-z_]+)"', page))
    expected = {"data", "variance", "leaderboard", "reproducibility"}
    if name != "one model":
        expected |= {"ranks", "tiers"}
    if bayes:
        expected.add("posterior")
    assert expected <= sections, (name, expected - sections)
    assert page.count('<img class="figure"') >= (1 if name == "one model" else 3)
    assert "Traceback" not in page


@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_reports(tmp_path, name, capsys):
    code, page, out = _report(tmp_path, name, [])
    err = capsys.readouterr().err
    assert code == 0, err
    _check_page(page, name, bayes=False)
    assert (out / "analysis.json").exists()
    assert list(out.glob("*_cube.nc"))
    if name == "a missing cell":
        assert "gsm8k" in page
        assert "Left out of every analysis" in page
        assert "MissingDataWarning" in err
        assert "--missing raise" in err
    if name == "a missing run":
        assert "1 run missing" in page
        assert "each cell" in page
    if name == "ragged seeds":
        assert "The models ran different numbers of seeds" in page
        assert "qwen-7b 6" in page
        assert 'id="field"' in page                     # rliable and ASO on ragged runs
        assert "skipped" not in page.split('id="field"')[1].split("</section>")[0]
    if name == "mixed scales":
        assert "Check before reading the ranks" in page
        assert "model qwen-7b looks like another scale" in err
    if name == "two metrics, loss lower":
        assert "lower is better" in page
        assert "higher is better" in page
    if name != "mixed scales":
        assert "ScaleWarning" not in err


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SHAPES))
def test_every_shape_reports_with_bayes(tmp_path, name, capsys):
    code, page, _ = _report(tmp_path, name, BAYES)
    err = capsys.readouterr().err
    assert code == 0, err
    _check_page(page, name, bayes=True)


def test_mixed_scales_with_bounds_is_refused_naming_the_rows(tmp_path, capsys):
    code, _, _ = _report(tmp_path, "mixed scales", ["--bounds", "0", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "outside the --bounds (0, 1)" in err
    assert "model='qwen-7b', task=" in err


def test_loss_is_ranked_lowest_first(tmp_path, capsys):
    code, _, out = _report(tmp_path, "two metrics, loss lower", [])
    assert code == 0
    board = pd.read_csv(out / "loss_leaderboard.csv", index_col=0)
    assert board.index[0] == board["observed"].idxmin()
    board = pd.read_csv(out / "accuracy_leaderboard.csv", index_col=0)
    assert board.index[0] == board["observed"].idxmax()


def test_out_naming_an_existing_file_is_an_error_not_a_traceback(tmp_path, capsys):
    """Issue 35: ``evaluq report --out EXISTING_FILE`` ended in FileExistsError's traceback;
    the file is left as it was."""
    kept = tmp_path / "notes.html"
    kept.write_text("mine")
    file, frame, cols = SHAPES["one model"]
    path = _write(tmp_path / file, frame)
    code = main(["report", str(path), *cols, *FAST, "--out", str(kept)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--out" in err
    assert "is a file" in err
    assert "Traceback" not in err
    assert kept.read_text() == "mine"


def test_missing_raise_stops_with_the_cells(tmp_path, capsys):
    code, _, _ = _report(tmp_path, "a missing cell", ["--missing", "raise"])
    err = capsys.readouterr().err
    assert code == 2
    assert "llama-7b/gsm8k" in err
    assert "--missing drop" in err


# --- every message names a remedy the command line has ------------------------------------------

KEYWORDS = ("skipna", "resampled", "outlier_threshold", "scale_check", "missing", "bounds",
            "priors", "tune", "draws", "error_correlation", "replication", "languages",
            "n_resamples", "seeds", "rng", "higher_is_better", "test_set_errors")
"""The keywords of the functions behind ``evaluq report`` that a message might suggest."""
PYTHON_KEYWORD = re.compile(r"`[a-z_]+=|(?<![-\w])(" + "|".join(KEYWORDS) + r")=")


def _flags() -> set[str]:
    parser = build_parser()
    report = parser._subparsers._group_actions[0].choices["report"]  # type: ignore[union-attr]
    return {s for a in report._actions for s in a.option_strings} | {
        "--no-scale-check", "--no-bayes"}


ERROR_PATHS = [
    ("a missing cell", ["--missing", "raise"]),
    ("mixed scales", ["--bounds", "0", "1"]),
    ("long runs", ["--lower-is-better", "nonsense"]),
    ("long runs", ["--lower-is-better", "--higher-is-better"]),
    ("long runs", ["--replication", "parametric"]),
    ("long runs", ["--replication", "sideways"]),
    ("long runs", ["--resample-languages", "subsample"]),
    ("long runs", ["--how", "harmonic"]),
    ("long runs", ["--format", "docx"]),
    ("long runs", ["--prior", "tau_m_sigma"]),
    ("long runs", ["--draws", "300"]),
    ("long runs", ["--n-resamples", "3"]),
    ("summary file", ["--replication", "nonparametric"]),
    ("one seed, no seed column", ["--replication", "nonparametric"]),
    ("one seed, no seed column", ["--replication", "parametric"]),
]


@pytest.mark.parametrize(("name", "options"), ERROR_PATHS)
def test_every_error_names_a_flag_the_cli_has(tmp_path, name, options, capsys):
    code, _, _ = _report(tmp_path, name, options)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("evaluq report: error: ")
    assert not PYTHON_KEYWORD.search(err), err
    named = set(re.findall(r"--[a-z][a-z-]+", err))
    assert named <= _flags(), named - _flags()


def test_warnings_name_flags_not_keywords(tmp_path, capsys):
    for name in ("a missing cell", "mixed scales", "ragged seeds"):
        (folder := tmp_path / name.replace(" ", "_")).mkdir()
        code, _, _ = _report(folder, name, [])
        assert code == 0
    err = capsys.readouterr().err
    assert "Warning: " in err
    assert not PYTHON_KEYWORD.search(err), err
    assert set(re.findall(r"--[a-z][a-z-]+", err)) <= _flags()


SAMPLER_ADVICE = [
    "R-hat up to 1.020 (mu m0) > 1.01: the chains disagree; refit with more tuning and draws "
    "(tune=2000, draws=2000)",
    "ESS down to 364 (tau_m m0) < 400: too few effective draws for stable intervals; increase "
    "draws (ESS grows with draws x chains)",
    "2 divergent transitions: the sampler could not follow the posterior; refit with "
    "tune=2000, or give tighter prior scales (priors={'tau_m_sigma': ..., "
    "'tau_lang_sigma': ...})",
    "E-BFMI below 0.3 in chains [1]: the momentum resampling explores the energy poorly; "
    "refit with more tuning (tune=2000)",
    "3 divergent transitions: refit with tune=2000, or tighter prior scales "
    "(priors={'sigma_task_sigma': ..., 'sigma_mxt_sigma': ...})",
    "1 divergent transitions: refit with tune=2000, or tighter prior scales "
    "(priors={'sigma_item_sigma': ..., 'dev_sigma': ...})",
]
"""The sampler's advice as the fits word it (hierarchical and item model diagnostics)."""


@pytest.mark.parametrize("advice", SAMPLER_ADVICE)
def test_sampler_advice_reaches_the_terminal_as_flags(advice):
    from evaluq.cli import cli_message

    text = cli_message(advice)
    assert not PYTHON_KEYWORD.search(text), text
    assert set(re.findall(r"--[a-z][a-z-]+", text)) <= _flags()
    assert "--tune 2000" in text or "--draws" in text


@pytest.mark.parametrize("message", [
    "`draws` would need 2.9 GiB of memory at once, above evaluq's memory budget of 2 GiB (the "
    "environment variable EVALUQ_MEMORY_BUDGET, in bytes or with a unit K, M, G, T, raises "
    "it): lower `draws` (or `chains`)",
    "the report's posterior keeps 700 draws per chain, not 1000: 1000 x 4 chains of 200 models "
    "x 60 languages would need 2.9 GiB at once, above the memory budget (EVALUQ_MEMORY_BUDGET "
    "raises it; `bayes_options={'draws': ...}` sets them)"])
def test_the_posterior_memory_messages_name_the_draws_flag(message):
    from evaluq.cli import cli_message

    text = cli_message(message)
    assert "--draws" in text, text
    assert "`" not in text, text

"""``evaluq report`` on results files it has never seen, and ``evaluq test --json/--out``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.cli import main


@pytest.fixture(scope="module")
def long_table():
    """Three systems x four languages x three seeds, BLEU and chrF, with odd column names."""
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, model_means=[20, 22, 27],
                            sigma_between=3.0, rng=4)
    df = cube.score.to_dataframe().reset_index()
    df = df.rename(columns={"model": "system", "language": "lp", "seed": "run",
                            "score": "BLEU"})
    df["chrF"] = 2 * df["BLEU"] + 10
    return df


def _run(args, capsys):
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_long_table_several_metrics(tmp_path, long_table, capsys):
    path = tmp_path / "results.tsv"
    long_table.to_csv(path, sep="\t", index=False)
    out = tmp_path / "out"
    code, stdout, _ = _run(["report", str(path), "--model", "system", "--language", "lp",
                            "--score", "BLEU", "--score", "chrF", "--seed", "run",
                            "--n-resamples", "200", "--rng", "7", "--out", str(out),
                            "--quiet"], capsys)
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert "report.html" in names
    assert "analysis.json" in names
    for metric in ("BLEU", "chrF"):
        assert f"{metric}_cube.nc" in names
        for table in ("leaderboard", "pairwise", "variance", "ranks", "interval_estimates",
                      "multi_aso"):
            for ext in ("csv", "md", "tex"):
                assert f"{metric}_{table}.{ext}" in names
    assert f"wrote {len(names)} files" in stdout
    page = (out / "report.html").read_text()
    assert page.count('alt="probability of improvement"') == 2    # the field's methods
    eps = pd.read_csv(out / "BLEU_multi_aso.csv", index_col=0)
    assert eps.shape == (3, 3)
    assert eps.isna().values.diagonal().all()
    assert '<h2 class="metric">BLEU</h2>' in page
    assert '<h2 class="metric">chrF</h2>' in page
    assert "evaluq report " in page
    assert "--score BLEU --score chrF" in page
    # the written cube and tables are the library's results on the same data
    cube = eq.from_long(long_table, model="system", language="lp", seed="run", score="BLEU")
    back = eq.open_cube(out / "BLEU_cube.nc")
    xr.testing.assert_allclose(back.score, cube.score)
    agg = eq.aggregate(eq.resample(cube, n_resamples=200, replication="nonparametric",
                                   languages="bootstrap", rng=7))
    board = pd.read_csv(out / "BLEU_leaderboard.csv", index_col=0)
    pd.testing.assert_frame_equal(board, eq.leaderboard(agg), check_names=False,
                                  check_dtype=False)
    md = (out / "BLEU_leaderboard.md").read_text()
    assert "Table: Leaderboard of the mean BLEU over 4 languages" in md
    assert "\\caption{Leaderboard" in (out / "chrF_leaderboard.tex").read_text()
    payload = json.loads((out / "analysis.json").read_text())
    assert set(payload["metrics"]) == {"BLEU", "chrF"}
    rows = payload["metrics"]["BLEU"]["tables"]["leaderboard"]["rows"]
    assert [r["model"] for r in rows] == list(board.index)
    assert payload["metrics"]["BLEU"]["settings"]["replication"] == "nonparametric"


def test_each_analysis_tables_are_built_once_per_write(tmp_path, long_table, capsys,
                                                        monkeypatch):
    """The table files and analysis.json come from the same tables: built once per metric
    (they were built again for analysis.json, about 0.5 s at 200 models), and the JSON holds
    the tables the files do."""
    from evaluq.reporting._build import Analysis

    built = []
    tables = Analysis.tables

    def counted(self):
        built.append(self.cube.attrs.get("metric"))
        return tables(self)

    monkeypatch.setattr(Analysis, "tables", counted)
    path = tmp_path / "results.csv"
    long_table.to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--score", "BLEU", "--score", "chrF", "--seed", "run",
                         "--n-resamples", "50", "--out", str(out), "--quiet"], capsys)
    assert code == 0, err
    assert sorted(built) == ["BLEU", "chrF"]
    payload = json.loads((out / "analysis.json").read_text())
    board = pd.read_csv(out / "chrF_leaderboard.csv", index_col=0)
    rows = payload["metrics"]["chrF"]["tables"]["leaderboard"]["rows"]
    np.testing.assert_allclose([r["observed"] for r in rows], board["observed"])


def test_summary_table_with_n_seeds_column_and_formats(tmp_path, capsys):
    df = pd.DataFrame({"sys": ["a", "a", "b", "b", "c", "c"], "task": ["x", "y"] * 3,
                       "acc": [0.71, 0.64, 0.75, 0.66, 0.60, 0.58],
                       "sd_s": [0.01, 0.02, 0.015, 0.01, 0.02, 0.01],
                       "sd_b": [0.012] * 6, "n": [5] * 6})
    path = tmp_path / "summary.jsonl"
    df.to_json(path, orient="records", lines=True)
    out = tmp_path / "o"
    code, _, _ = _run(["report", str(path), "--model", "sys", "--language", "task",
                       "--mean", "acc", "--sd-seed", "sd_s", "--sd-boot", "sd_b",
                       "--n-seeds", "n", "--n-resamples", "100", "--out", str(out),
                       "--format", "html,csv", "--bounds", "0", "1", "--quiet"], capsys)
    assert code == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["acc_cube.nc", "acc_leaderboard.csv", "acc_pairwise.csv", "acc_ranks.csv",
                     "acc_variance.csv", "report.html"]
    cube = eq.open_cube(out / "acc_cube.nc")
    assert eq.is_summary(cube)
    assert "parametric" in (out / "report.html").read_text()


def test_lower_is_better_and_parquet(tmp_path, long_table, capsys):
    path = tmp_path / "r.parquet"
    long_table.rename(columns={"BLEU": "ter"}).to_parquet(path)
    out = tmp_path / "p"
    code, _, _ = _run(["report", str(path), "--model", "system", "--language", "lp",
                       "--score", "ter", "--seed", "run", "--lower-is-better",
                       "--n-resamples", "100", "--out", str(out), "--format", "csv",
                       "--quiet"], capsys)
    assert code == 0
    board = pd.read_csv(out / "ter_leaderboard.csv", index_col=0)
    assert board["observed"].is_monotonic_increasing   # lower is better: smallest first
    assert eq.open_cube(out / "ter_cube.nc").attrs["higher_is_better"] == 0


def test_several_files_are_concatenated(tmp_path, long_table, capsys):
    half = len(long_table) // 2
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    long_table.iloc[:half].to_csv(a, index=False)
    long_table.iloc[half:].to_csv(b, index=False)
    out = tmp_path / "c"
    assert _run(["report", str(a), str(b), "--model", "system", "--language", "lp",
                 "--score", "BLEU", "--seed", "run", "--n-resamples", "50", "--out", str(out),
                 "--format", "csv", "--quiet"], capsys)[0] == 0
    assert eq.open_cube(out / "BLEU_cube.nc").score.notnull().all()


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--score", "bleu"], "column 'bleu' \\(given as --score \\(1\\)\\) is not in .*a.csv; "
                              "its columns are: system, lp, run, BLEU, chrF \\(did you mean "
                              "--score BLEU\\?\\)"),
        (["--score", "BLEU", "--language", "lang"], "column 'lang' \\(given as --language\\)"
                                                    "[^?]*$"),
        (["--score", "BLEU", "--seed", "runs"], "its columns are: .* \\(did you mean --seed "
                                                "run\\?\\)"),
        (["--score", "BLEU", "--seed", "s"], "column 's' \\(given as --seed\\)"),
        ([], "give either --score COL .* or --mean COL .*; .*a.csv's numeric columns: run, "
             "BLEU, chrF \\(e.g. --score chrF\\)"),
        (["--score", "BLEU", "--mean", "BLEU"], "give either --score"),
        (["--score", "BLEU", "--sd-seed", "x"], "--sd-seed / --sd-boot belong to the summary"),
        (["--score", "BLEU", "--format", "html,docx"], "--format must list some of"),
        (["--score", "empty"], "column 'empty' \\(given as --score\\) has no values"),
    ],
)
def test_report_errors_name_the_problem(tmp_path, long_table, capsys, extra, match):
    path = tmp_path / "a.csv"
    table = long_table.assign(empty=np.nan) if "empty" in extra else long_table
    table.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--out", str(tmp_path / "o"), "--quiet", *extra], capsys)
    assert code == 2
    assert re.search(match, err), err
    if "empty" not in extra:
        assert not (tmp_path / "o" / "report.html").exists()


def test_a_column_named_score_is_read_without_the_flag(tmp_path, long_table, capsys):
    """from_long reads a column named 'score' by default; the command refused the same file
    until given --score score."""
    path = tmp_path / "runs.csv"
    long_table.rename(columns={"BLEU": "score"}).to_csv(path, index=False)
    out = tmp_path / "o"
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--seed", "run", "--n-resamples", "50", "-o", str(out),
                         "--format", "csv", "--quiet"], capsys)           # -o: --out
    assert code == 0, err
    cube = eq.open_cube(out / "score_cube.nc")
    np.testing.assert_allclose(
        cube.score.sel(model="m0").mean().item(),
        long_table.loc[long_table.system == "m0", "BLEU"].mean())


def test_a_column_named_seed_is_read_without_the_flag_and_said(tmp_path, long_table, capsys):
    """A long CSV of runs with the cube's own column names (model, language, seed, score) was
    refused as repeated keys until given --seed seed; split by seed over two files, as
    'runs split over several files', it was refused as the same runs in both files."""
    df = long_table.rename(columns={"system": "model", "lp": "language", "run": "seed",
                                    "BLEU": "score"})
    paths = []
    for seed, part in df.groupby("seed"):
        paths.append(tmp_path / f"seed{seed}.csv")
        part.drop(columns="chrF").to_csv(paths[-1], index=False)
    out = tmp_path / "o"
    code, _, err = _run(["report", *map(str, paths), "-o", str(out), "--n-resamples", "50",
                         "--format", "csv"], capsys)
    assert code == 0, err
    assert "column 'seed' as --seed seed" in err
    cube = eq.open_cube(out / "score_cube.nc")
    assert cube.sizes["seed"] == 3
    np.testing.assert_allclose(cube.score.mean("seed").sel(model="m0").values,
                               df[df.model == "m0"].groupby("language").score.mean().values)


def test_one_numeric_column_is_the_score_and_an_unreadable_file_says_why(tmp_path, long_table,
                                                                         capsys):
    """Without --score, a table whose one numeric column besides the keys is 'accuracy' said
    'give either --score or --mean'; so did a spreadsheet (whose own message, 'save it as
    CSV', only came with --score). The column is read and said; the file's error is given.
    A message listing the file's columns kept the user's --language name in place of the
    column 'language' the file has."""
    df = long_table.drop(columns="chrF").rename(columns={"system": "model", "run": "seed"})
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "o"
    code, _, err = _run(["report", str(path), "--language", "lp", "-o", str(out),
                         "--n-resamples", "50", "--format", "csv"], capsys)
    assert code == 0, err
    assert "column 'BLEU' as --score BLEU (its one numeric column besides the keys)" in err
    cube = eq.open_cube(out / "BLEU_cube.nc")
    assert cube.sizes["seed"] == 3
    sheet = tmp_path / "runs.xlsx"
    sheet.write_bytes(b"PK")
    code, _, err = _run(["report", str(sheet), "--language", "lp", "--quiet"], capsys)
    assert code == 2
    assert "save it as CSV" in err
    df.rename(columns={"lp": "language"}).to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--language", "task", "--quiet"], capsys)
    assert code == 2
    assert "its columns are: model, language, seed, BLEU" in err
    board = df[df.seed == 0].drop(columns="seed").rename(columns={"BLEU": "score"})
    board.assign(stderr=0.5).to_csv(path, index=False)            # a leaderboard with SEs
    code, _, err = _run(["report", str(path), "--language", "lp", "-o", str(out),
                         "--n-resamples", "50", "--format", "csv"], capsys)
    assert code == 0, err
    assert "give --mean score --sd-boot stderr --n-seeds 1" in err
    df.rename(columns={"lp": "Task"}).to_csv(path, index=False)    # tasks, not languages
    code, _, err = _run(["report", str(path), "-o", str(out), "--n-resamples", "50",
                         "--format", "csv"], capsys)
    assert code == 0, err
    assert "column 'seed' as --seed seed and column 'Task' as --language Task" in err
    assert eq.open_cube(out / "BLEU_cube.nc").sizes["language"] == 4
    code, _, err = _run(["report", str(tmp_path / "nonexistent.csv"), "--quiet"], capsys)
    assert code == 2                       # was 'give either --score or --mean'
    assert "no such file: " in err
    assert "nonexistent.csv" in err


def test_an_empty_unnamed_column_is_not_offered_as_a_score(tmp_path, long_table, capsys):
    """A spreadsheet's export ending in an empty unnamed column: the terminal listed it as
    one of the 'other numeric columns' (an all-blank column reads as numbers), and beside
    one score column of another name it made two, so --score had to be given. Now the
    empty column is not offered."""
    df = long_table.drop(columns="chrF").rename(columns={"system": "model", "run": "seed",
                                                         "lp": "language"})
    path = tmp_path / "runs.csv"
    df.assign(**{"": ""}).to_csv(path, index=False)
    out = tmp_path / "o"
    code, _, err = _run(["report", str(path), "-o", str(out), "--n-resamples", "50",
                         "--format", "csv"], capsys)
    assert code == 0, err
    assert "column 'BLEU' as --score BLEU (its one numeric column besides the keys)" in err
    assert "Unnamed" not in err
    df.rename(columns={"BLEU": "score"}).assign(**{"": ""}).to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "-o", str(out), "--n-resamples", "50",
                         "--format", "csv"], capsys)
    assert code == 0, err
    assert "Unnamed" not in err
    assert "other numeric columns" not in err


def test_empty_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("model,language,score\n")
    code, _, err = _run(["report", str(path), "--score", "score", "--quiet"], capsys)
    assert code == 2
    assert f"{path} has no rows" in err


def test_rows_with_an_empty_score_are_named(tmp_path, long_table, capsys):
    """An empty (or NA) score is read as a missing run, like an absent row; the terminal
    names the file and the rows, and the page counts the runs as missing."""
    df = long_table.copy()
    df.loc[[1, 5], "BLEU"] = np.nan
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--seed", "run", "--score", "BLEU", "--out", str(tmp_path / "out")],
                        capsys)
    assert code == 0
    assert ("runs.csv: column 'BLEU' (given as --score) has no value (empty or NA) in 2 of 36 "
            "rows (rows 1, 5, counted from 0)") in err
    assert "2 runs missing" in err


def test_a_folder_of_tables_or_a_compressed_file(tmp_path, long_table, capsys):
    """A folder given as FILE said "unknown suffix ''": it now says what to give; the same
    runs gzipped give the same tables as the plain file."""
    folder = tmp_path / "runs"
    folder.mkdir()
    long_table.to_csv(folder / "runs.csv", index=False)
    flags = ["--model", "system", "--language", "lp", "--seed", "run", "--score", "BLEU",
             "--format", "csv"]
    code, _, err = _run(["report", str(folder), *flags, "--out", str(tmp_path / "o")], capsys)
    assert code == 2
    assert f"{folder} is a folder: give the table's file(s), or --from inspect" in err
    long_table.to_csv(packed := tmp_path / "runs.csv.gz", index=False)
    for path, out in ((folder / "runs.csv", "plain"), (packed, "gz")):
        assert _run(["report", str(path), *flags, "--out", str(tmp_path / out)], capsys)[0] == 0
    for table in sorted(p.name for p in (tmp_path / "plain").glob("*.csv")):
        assert (tmp_path / "plain" / table).read_bytes() == (tmp_path / "gz" / table).read_bytes()


def test_cli_test_json_and_out(tmp_path, rng, capsys):
    y = rng.integers(0, 2, 300)
    h0 = np.where(rng.random(300) < 0.65, y, 1 - y)
    h1 = np.where(rng.random(300) < 0.80, y, 1 - y)
    paths = []
    for name, arr in (("t", y), ("h0", h0), ("h1", h1)):
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(map(str, arr)) + "\n")
        paths.append(str(f))
    code, stdout, _ = _run(["test", *paths, "--metrics", "accuracy", "--n-resamples", "200",
                            "--json"], capsys)
    assert code == 0
    data = json.loads(stdout)
    res = eq.bootstrap_test(y, h0, h1, metrics=["accuracy"], n_resamples=200, rng=0)
    assert data["settings"]["method"] == "berg-kirkpatrick"
    assert data["results"][0]["metric"] == "accuracy"
    assert data["results"][0]["pvalue"] == pytest.approx(float(res.pvalue[0]))
    assert data["results"][0]["ci_lower"] == pytest.approx(float(res.interval.values[0, 0]))
    target = tmp_path / "res.txt"
    code, stdout, _ = _run(["test", *paths, "--metrics", "accuracy", "--n-resamples", "200",
                            "--out", str(target)], capsys)
    assert code == 0
    assert stdout == ""
    assert target.read_text() == res.summary() + "\n"


def test_help_is_fast_and_lists_report():
    # the evaluq under test (this checkout's src), not whichever one is installed
    env = {**os.environ, "PYTHONPATH": str(Path(eq.__file__).parents[1])}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "evaluq.cli", "report", "--help"],
                          capture_output=True, text=True, check=True, env=env)
    elapsed = time.perf_counter() - start
    assert "--higher-is-better" in proc.stdout
    assert "--sd-boot" in proc.stdout
    assert "--bayes, --no-bayes" in proc.stdout
    # the subcommands import matplotlib and the report only when they run
    probe = subprocess.run([sys.executable, "-c", "import sys, evaluq.cli as c; "
                            "c.build_parser(); print('matplotlib' in sys.modules)"],
                           capture_output=True, text=True, check=True, env=env)
    assert probe.stdout.strip() == "False"
    assert elapsed < 30


def test_bayes_without_the_hierarchical_model_is_a_clear_error(tmp_path, long_table, capsys,
                                                               monkeypatch):
    monkeypatch.setitem(sys.modules, "evaluq.hierarchical", None)
    path = tmp_path / "a.csv"
    long_table.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--score", "BLEU", "--seed", "run", "--n-resamples", "50", "--bayes",
                         "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert code == 2
    assert "bayes=True needs evaluq.hierarchical.fit_hierarchical" in err


def test_error_correlation_reaches_the_hierarchical_fit(tmp_path, long_table, capsys,
                                                        monkeypatch):
    import types

    calls = []

    def fit_hierarchical(cube, **kwargs):
        calls.append(kwargs)
        raise RuntimeError("stop after the call")

    fake = types.ModuleType("evaluq.hierarchical")
    fake.fit_hierarchical = fit_hierarchical
    monkeypatch.setitem(sys.modules, "evaluq.hierarchical", fake)
    path = tmp_path / "a.csv"
    long_table.to_csv(path, index=False)
    with pytest.raises(RuntimeError, match="stop after the call"):
        _run(["report", str(path), "--model", "system", "--language", "lp", "--score", "BLEU",
              "--seed", "run", "--n-resamples", "50", "--bayes", "--error-correlation", "0.7",
              "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert calls[0]["error_correlation"] == 0.7


def test_report_names_the_files_and_explains_what_seeds_alone_cannot_identify(
        tmp_path, long_table, capsys):
    """A CSV of seeds without bootstrap replicates: the data summary names the file (not the
    merged DataFrame); the variance table leaves out the components the cube cannot identify
    (test-set noise, so also tau_between) and says why, rather than showing blank columns; the
    SD figure's heading uses the file's own name for the language column."""
    path = tmp_path / "runs.csv"
    long_table.to_csv(path, index=False)
    out = tmp_path / "out"
    code, _, _ = _run(["report", str(path), "--model", "system", "--language", "lp",
                       "--score", "BLEU", "--seed", "run", "--n-resamples", "100",
                       "--out", str(out), "--quiet"], capsys)
    assert code == 0
    page = (out / "report.html").read_text()
    assert f"{path} (from_long)" in page
    assert "DataFrame (from_long)" not in page
    variance = page[page.index('id="variance"'):page.index('id="leaderboard"')]
    assert "<th>sigma_seed mean</th>" in variance
    assert "<th>sigma_boot mean</th>" not in variance
    assert "<th>tau_between</th>" not in variance
    assert re.search(r"Not identifiable here \(not shown\): sigma_boot mean, sigma_boot sd, "
                     r"sigma_boot min, sigma_boot max.*no &#x27;boot_score&#x27;", variance)
    assert "Not identifiable here (not shown): tau_between, se_mean_fixed" in variance
    # the written table keeps every column, NaN where unknown
    table = pd.read_csv(out / "BLEU_variance.csv", index_col=0)
    assert table["sigma_boot mean"].isna().all()
    assert table["sigma_seed mean"].notna().all()
    fig = eq.plots.variance_bars(eq.variance_components(
        eq.open_cube(out / "BLEU_cube.nc")))
    assert fig._suptitle.get_text().startswith("within-lp SDs of BLEU")


def test_report_on_duplicated_rows_names_the_remedy_in_flags(tmp_path, long_table, capsys):
    """Repeated rows of one (model, language) and no --seed: the error names the key in the
    user's columns (not evaluq's internal seed column) and the flags that fix it."""
    path = tmp_path / "runs.csv"
    long_table.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--score", "BLEU", "--out", str(tmp_path / "o")], capsys)
    assert code != 0
    assert "__seed__" not in err
    assert "appear more than once" in err
    assert "the table's column 'run' numbers the repeats: give it as --seed" in err
    unnamed = long_table.drop(columns="run")
    unnamed.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--score", "BLEU", "--out", str(tmp_path / "o")], capsys)
    assert "name the column that numbers them as --seed" in err


def test_scores_written_as_percentages_give_the_report_of_their_numbers(tmp_path, long_table,
                                                                         capsys):
    """A spreadsheet export with scores formatted "64.3%": the same cube as the numbers."""
    plain, percent = tmp_path / "plain.csv", tmp_path / "percent.csv"
    long_table.to_csv(plain, index=False)
    long_table.assign(BLEU=long_table["BLEU"].map(lambda v: f"{v!r}%")).to_csv(percent,
                                                                                index=False)
    for path, out in ((plain, "a"), (percent, "b")):
        assert _run(["report", str(path), "--model", "system", "--language", "lp", "--seed",
                     "run", "--score", "BLEU", "--n-resamples", "50", "--format", "csv",
                     "--out", str(tmp_path / out), "--quiet"], capsys)[0] == 0
    xr.testing.assert_identical(eq.open_cube(tmp_path / "a" / "BLEU_cube.nc").drop_attrs(),
                                eq.open_cube(tmp_path / "b" / "BLEU_cube.nc").drop_attrs())


def test_a_fault_while_writing_or_an_interrupt_is_a_short_message(tmp_path, long_table,
                                                                   capsys, monkeypatch):
    """An --out that cannot be made, a full disk, Ctrl-C: one line naming what happened and
    an exit code (1; 130 for an interrupt), never a traceback; the files written before the
    fault are whole (written to a temporary file, then renamed) and no temporary is left."""
    import errno

    from evaluq import _atomic, reporting

    path = tmp_path / "runs.csv"
    long_table.to_csv(path, index=False)
    args = ["report", str(path), "--model", "system", "--language", "lp", "--seed", "run",
            "--score", "BLEU", "--n-resamples", "50", "--quiet"]
    (tmp_path / "a-file").write_text("")
    code, _, err = _run([*args, "--out", str(tmp_path / "a-file" / "out")], capsys)
    assert code == 1
    assert err.startswith("evaluq report: error: Not a directory: ")
    assert "Traceback" not in err

    real, calls = _atomic.os.replace, []

    def full_disk(src, dst):
        calls.append(dst)
        if len(calls) > 3:
            raise OSError(errno.ENOSPC, "No space left on device", str(dst))
        return real(src, dst)

    monkeypatch.setattr(_atomic.os, "replace", full_disk)
    out = tmp_path / "full"
    code, _, err = _run([*args, "--out", str(out)], capsys)
    assert code == 1
    assert err.startswith("evaluq report: error: No space left on device: ")
    written = sorted(p.name for p in out.iterdir())
    assert len(written) == 3
    assert not [p for p in written if p.startswith(".") or "tmp" in p]
    monkeypatch.undo()

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(reporting, "report", interrupted)
    code, _, err = _run([*args, "--out", str(tmp_path / "i")], capsys)
    assert code == 130
    assert "evaluq report: interrupted; any output written before it is whole" in err


def _wide(long_table: pd.DataFrame) -> pd.DataFrame:
    """``long_table``'s BLEU with one column per language (a paper's table), an average
    column and a text column as such tables have, and one empty cell."""
    wide = long_table.pivot(index=["system", "run"], columns="lp", values="BLEU")
    wide.columns.name = None
    wide["Average"] = wide.mean(axis=1)
    wide = wide.reset_index().assign(notes="fine-tuned")
    wide.iloc[4, 2] = np.nan
    return wide


def test_a_wide_table_gives_the_report_of_its_long_table(tmp_path, long_table, capsys):
    """One column per language (--wide): the same cube as the long file with the run of the
    empty cell left out, the empty cell said once by model and language."""
    wide = _wide(long_table)
    languages = [c for c in wide.columns if c not in ("system", "run", "Average", "notes")]
    empty = (wide.loc[4, "system"], wide.columns[2], wide.loc[4, "run"])
    long_path, wide_path = tmp_path / "long.csv", tmp_path / "wide.csv"
    keep = ~((long_table["system"] == empty[0]) & (long_table["lp"] == empty[1])
             & (long_table["run"] == empty[2]))
    long_table[keep].to_csv(long_path, index=False)
    wide.to_csv(wide_path, index=False)
    common = ["--model", "system", "--language", "lp", "--seed", "run", "--score", "BLEU",
              "--n-resamples", "50", "--format", "csv", "--quiet"]
    assert _run(["report", str(long_path), *common, "--out", str(tmp_path / "a")],
                capsys)[0] == 0
    code, _, err = _run(["report", str(wide_path), *common, "--wide", *languages,
                         "--out", str(tmp_path / "b")], capsys)
    assert code == 0
    assert err.count("1 of 36 cells of the --wide columns is empty") == 1
    assert f"{empty[0]} / {empty[1]}" in err
    xr.testing.assert_identical(eq.open_cube(tmp_path / "a" / "BLEU_cube.nc").drop_attrs(),
                                eq.open_cube(tmp_path / "b" / "BLEU_cube.nc").drop_attrs())


def test_wide_alone_reads_the_numeric_columns_and_refuses_an_average(tmp_path, long_table,
                                                                      capsys):
    wide = _wide(long_table)
    path, plain = tmp_path / "wide.csv", tmp_path / "plain.csv"
    wide.to_csv(path, index=False)
    wide.drop(columns="Average").to_csv(plain, index=False)
    common = ["--model", "system", "--seed", "run", "--n-resamples", "50", "--format", "csv",
              "--quiet"]
    code, _, err = _run(["report", str(path), *common, "--wide", "--out", str(tmp_path / "a")],
                        capsys)
    assert code == 2
    assert "'Average' looks like an aggregate of the languages" in err
    assert "--wide l00 l01 l02 l03" in err                   # the command that works
    code, _, _ = _run(["report", str(plain), *common, "--wide", "--out", str(tmp_path / "b")],
                      capsys)
    assert code == 0
    cube = eq.open_cube(tmp_path / "b" / "score_cube.nc")   # --score defaults to 'score'
    assert cube.sizes == {"model": 3, "language": 4, "seed": 3}
    assert int(cube.score.isnull().sum()) == 1


@pytest.mark.parametrize(("extra", "message"), [
    ([], "is it a wide table, one column per language? --wide l00 l01 l02 l03 Average "
         "--score NAME"),
    (["--wide", "l09"], "column 'l09' (given as --wide) is not in"),
    (["--wide", "l00", "--score", "BLEU", "--score", "chrF"], "a wide table holds one metric"),
    (["--wide", "l00", "--mean", "BLEU"], "give --score NAME (the metric's name), not --mean"),
    (["--wide", "l00", "--score", "notes"], "already has a column 'notes'"),
    (["--wide", "l00", "--item", "system"], "--wide reads a table of one score per model"),
])
def test_wide_table_errors_name_the_flag_that_works(tmp_path, long_table, capsys, extra,
                                                    message):
    path = tmp_path / "wide.csv"
    _wide(long_table).to_csv(path, index=False)
    args = ["report", str(path), "--model", "system", "--seed", "run", "--quiet",
            "--out", str(tmp_path / "out")]
    if not extra:
        args += ["--score", "BLEU"]
    code, _, err = _run([*args, *extra], capsys)
    assert code == 2
    assert message in err, err


def test_na_value_reads_a_mark_for_a_missing_run_as_an_empty_cell(tmp_path, long_table,
                                                                  capsys):
    """A file marking a run that did not finish with '-': refused naming --na-value '-', and
    with it the cube of the file whose cell is empty; a parquet file is refused (its cells
    are typed)."""
    marked, empty = tmp_path / "marked.csv", tmp_path / "empty.csv"
    table = long_table.drop(columns="chrF").astype({"BLEU": object})
    table.loc[5, "BLEU"] = "-"
    table.to_csv(marked, index=False)
    table.replace("-", np.nan).to_csv(empty, index=False)
    args = ["--model", "system", "--language", "lp", "--seed", "run", "--score", "BLEU",
            "--n-resamples", "50", "--format", "csv", "--quiet"]
    code, _, err = _run(["report", str(marked), *args, "--out", str(tmp_path / "a")], capsys)
    assert code == 2
    assert "'-' looks like a mark for a run that is missing" in err
    assert "pass --na-value '-'" in err
    for path, out, extra in ((marked, "b", ["--na-value", "-"]), (empty, "c", [])):
        assert _run(["report", str(path), *args, *extra, "--out", str(tmp_path / out)],
                    capsys)[0] == 0
    xr.testing.assert_identical(eq.open_cube(tmp_path / "b" / "BLEU_cube.nc").drop_attrs(),
                                eq.open_cube(tmp_path / "c" / "BLEU_cube.nc").drop_attrs())
    long_table.to_parquet(tmp_path / "runs.parquet")
    code, _, err = _run(["report", str(tmp_path / "runs.parquet"), *args, "--na-value", "-",
                         "--out", str(tmp_path / "d")], capsys)
    assert code == 2
    assert "--na-value reads CSV / TSV files" in err


def test_encoding_reads_a_windows_spreadsheets_csv(tmp_path, long_table, capsys):
    """A CSV saved by a Windows spreadsheet (cp1252, a model named 'modèle'): refused naming
    its line and --encoding cp1252 (a flag the CLI has), and with it the cube of the UTF-8
    file; a parquet file with --encoding is refused."""
    table = long_table.drop(columns="chrF")
    table["system"] = table["system"].str.replace(table["system"].iloc[0], "modèle")
    legacy, utf8 = tmp_path / "legacy.csv", tmp_path / "utf8.csv"
    table.to_csv(legacy, index=False, encoding="cp1252")
    table.to_csv(utf8, index=False)
    args = ["--model", "system", "--language", "lp", "--seed", "run", "--score", "BLEU",
            "--n-resamples", "50", "--format", "csv", "--quiet"]
    code, _, err = _run(["report", str(legacy), *args, "--out", str(tmp_path / "a")], capsys)
    assert code == 2
    assert "is not UTF-8 text (line " in err
    assert "`path`" not in err                       # the file is named; no keyword
    assert "pass --encoding cp1252" in err
    for path, out, extra in ((legacy, "b", ["--encoding", "cp1252"]), (utf8, "c", [])):
        assert _run(["report", str(path), *args, *extra, "--out", str(tmp_path / out)],
                    capsys)[0] == 0
    cube = eq.open_cube(tmp_path / "b" / "BLEU_cube.nc")
    assert "modèle" in cube.model.values
    xr.testing.assert_identical(cube.drop_attrs(),
                                eq.open_cube(tmp_path / "c" / "BLEU_cube.nc").drop_attrs())
    table.to_parquet(tmp_path / "runs.parquet")
    code, _, err = _run(["report", str(tmp_path / "runs.parquet"), *args, "--encoding",
                         "cp1252", "--out", str(tmp_path / "d")], capsys)
    assert code == 2
    assert "--encoding reads text files" in err


def test_a_leaderboard_of_one_run_with_standard_errors(tmp_path, capsys):
    """Scores with their standard errors, one run each (a published leaderboard): before,
    the report fell back to no replication (the SDs unused, the tasks bootstrapped); now
    the standard errors are redrawn, sigma_seed is not identified and the caption says the
    run-to-run noise is not in the intervals."""
    board = pd.DataFrame({"model": list("abcabc"), "task": ["arc"] * 3 + ["gsm8k"] * 3,
                          "score": [0.61, 0.58, 0.64, 0.41, 0.45, 0.44],
                          "stderr": [0.014, 0.014, 0.013, 0.013, 0.014, 0.014]})
    board.to_csv(tmp_path / "board.csv", index=False)
    code, _, err = _run(["report", str(tmp_path / "board.csv"), "--language", "task",
                         "--mean", "score", "--sd-boot", "stderr", "--n-seeds", "1",
                         "--n-resamples", "4000", "--format", "csv,html", "--quiet",
                         "--out", str(tmp_path / "r")], capsys)
    assert code == 0, err
    leaders = pd.read_csv(tmp_path / "r" / "score_leaderboard.csv", index_col=0)
    expected = np.sqrt(board.groupby("model")["stderr"].apply(lambda s: (s**2).sum())) / 2
    np.testing.assert_allclose(leaders["sd"], expected[leaders.index], rtol=0.06)
    variance = pd.read_csv(tmp_path / "r" / "score_variance.csv", index_col=0)
    assert variance["sigma_seed mean"].isna().all()
    page = (tmp_path / "r" / "report.html").read_text()
    assert "parametric replication, fixed tasks" in page
    assert "run-to-run (seed) noise is NOT included" in page


def test_a_run_in_two_files_is_named_with_its_files(tmp_path, long_table, capsys):
    """Runs split over files, two of them in both (an experiment's files that overlap):
    before, "5 key(s) appear more than once in the table" without saying where. Now the run
    and the two files; the split without the overlap gives the one file's cube."""
    table = long_table.drop(columns="chrF")
    table.iloc[:20].to_csv(tmp_path / "a.csv", index=False)
    table.iloc[18:].to_csv(tmp_path / "b.csv", index=False)
    table.iloc[20:].to_csv(tmp_path / "c.csv", index=False)
    table.to_csv(tmp_path / "all.csv", index=False)
    args = ["--model", "system", "--language", "lp", "--seed", "run", "--score", "BLEU",
            "--n-resamples", "50", "--format", "csv", "--quiet"]
    code, _, err = _run(["report", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), *args,
                         "--out", str(tmp_path / "x")], capsys)
    assert code == 2
    assert not err.startswith("evaluq report: error: `")    # no library keyword in front
    row = table.iloc[18]
    assert (f"2 run(s) are in more than one file, e.g. system {row.system!r}, lp {row.lp!r}, "
            f"run {int(row.run)} in {tmp_path / 'a.csv'} and {tmp_path / 'b.csv'}") in err
    code, _, err = _run(["report", str(tmp_path / "a.csv"), str(tmp_path / "." / "a.csv"),
                         *args, "--out", str(tmp_path / "w")], capsys)
    assert code == 2
    assert "a.csv is given twice (a shell pattern and its name?): give each file once" in err
    for files, out in (([tmp_path / "a.csv", tmp_path / "c.csv"], "y"),
                       ([tmp_path / "all.csv"], "z")):
        assert _run(["report", *map(str, files), *args, "--out", str(tmp_path / out)],
                    capsys)[0] == 0
    xr.testing.assert_identical(eq.open_cube(tmp_path / "y" / "BLEU_cube.nc").drop_attrs(),
                                eq.open_cube(tmp_path / "z" / "BLEU_cube.nc").drop_attrs())


def test_a_run_in_two_files_with_an_empty_key_cell_names_both_files():
    """The full-test-set rows of a bootstrap column have an empty replicate cell: a run
    whose key holds one is still named with its two files."""
    from evaluq.cli import _runs_in_two_files

    a = pd.DataFrame({"model": ["m", "m"], "boot": [np.nan, 0.0], "score": [1.0, 2.0]})
    b = pd.DataFrame({"model": ["m"], "boot": [np.nan], "score": [1.0]})
    with pytest.raises(ValueError, match=r"1 run\(s\) are in more than one file, e.g. model "
                                         r"'m', boot nan in a.csv and b.csv"):
        _runs_in_two_files([a, b], ["a.csv", "b.csv"], ["model", "boot"])
    _runs_in_two_files([a, b.assign(model="n")], ["a.csv", "b.csv"], ["model", "boot"])


@pytest.mark.parametrize("flag", [["--na-value", "-"], ["--encoding", "cp1252"],
                                  ["--label-score", "C=1"]])
def test_reading_flags_with_harness_logs_are_refused_not_ignored(tmp_path, capsys, flag):
    """--na-value / --encoding / --label-score read table files: with --from they were
    silently ignored."""
    logs = Path(__file__).parent / "data" / "lm_eval" / "logs"
    code, _, err = _run(["report", str(logs), "--from", "lm-eval", *flag, "--quiet",
                         "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert f"{flag[0]} reads table files; harness logs (--from) are read in their" in err


@pytest.mark.parametrize(("extra", "message"), [
    (["--bounds", "1", "0"], "--bounds must satisfy lower < upper"),
    (["--rng", "-1"], "--rng must be a non-negative integer seed; got -1"),
    (["--replication", "param"], "--replication must be one of 'parametric',"),
])
def test_an_option_out_of_range_is_named_as_its_flag(tmp_path, long_table, capsys, extra,
                                                     message):
    """Before: "`bounds` must satisfy ...", the library's keyword, in the terminal."""
    path = tmp_path / "runs.csv"
    long_table.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "--model", "system", "--language", "lp",
                         "--seed", "run", "--score", "BLEU", "--quiet", *extra,
                         "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert message in err, err


def test_one_score_per_model_on_one_task_names_what_would_measure_it(tmp_path, capsys):
    path = tmp_path / "single.csv"
    path.write_text("model,task,acc\nA,mmlu,0.71\nB,mmlu,0.69\nC,mmlu,0.75\n")
    code, _, err = _run(["report", str(path), "--language", "task", "--score", "acc",
                         "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert code == 2
    assert ("one score per model on one task, with no seeds, bootstrap replicates or SDs"
            in err)
    assert ("several runs (--seed), bootstrap replicates (--bootstrap), the per-item scores "
            "(--item" in err)
    assert not (tmp_path / "o" / "report.html").exists()


def test_a_label_read_as_missing_is_named_with_a_remedy_of_the_command_line(tmp_path, capsys):
    """A task 'NA' is read as missing: the error names the texts read so and, on the command
    line, a remedy it can act on (no eq.read_table)."""
    path = tmp_path / "na.csv"
    path.write_text("model,task,acc\nA,NA,0.71\nB,NA,0.69\nA,en,0.7\nB,en,0.6\n")
    code, _, err = _run(["report", str(path), "--language", "task", "--score", "acc",
                         "--out", str(tmp_path / "o"), "--quiet"], capsys)
    assert code == 2
    assert "key column 'task' has missing values (rows [0, 1]): empty cells, or text" in err
    assert "If such a text is a label, rename it in the file (e.g. 'NA' to 'N.A.')" in err
    assert "eq.read_table" not in err


def test_the_saved_cube_records_the_users_scale_check_not_the_loaders(tmp_path, capsys):
    """The command builds its cubes with the loaders' scale check off (the report's verdict
    is the one it prints), which a loader records as attrs['scale_check'] = 0: the saved
    cube then silenced eq.resample's check though the user never asked. It records 0 only
    with --no-scale-check."""
    path = tmp_path / "runs.csv"
    rows = [f"{m},{t},{s},{0.5 + 0.1 * i + 0.01 * s}" for i, m in enumerate("abc")
            for t in ("x", "y", "z") for s in range(3)]
    path.write_text("model,task,seed,acc\n" + "\n".join(rows) + "\n")
    for flags, want in (([], None), (["--no-scale-check"], 0)):
        out = tmp_path / f"o{len(flags)}"
        code, _, _ = _run(["report", str(path), "--language", "task", "--seed", "seed",
                           "--score", "acc", "--out", str(out), "--quiet", "--n-resamples",
                           "50", "--format", "csv", *flags], capsys)
        assert code == 0
        assert eq.open_cube(out / "acc_cube.nc").attrs.get("scale_check") == want


def _nulls(payload):
    """{(metric, table): {column with a null in some row}} of an analysis.json."""
    return {(metric, name): {k for row in table["rows"] for k, v in row.items() if v is None}
            for metric, analysis in payload["metrics"].items()
            for name, table in analysis["tables"].items()}


@pytest.mark.parametrize("shape", ["one_model", "one_seed", "summary", "three", "items"])
def test_every_null_in_analysis_json_has_its_reason(tmp_path, capsys, shape):
    """Before: analysis.json wrote null for every NaN with no reason (the variance table's
    unidentified components, multi_aso's diagonal, z where sd = 0, the item table's
    within-item variance with one epoch), and did not say why a table was missing (rliable
    and ASO with one seed). Now each table has ``nan_reasons`` (column -> reason, the table's
    ``attrs["nan_reasons"]``, as ``evaluq test --json``'s ``nan_reason``) and each metric
    ``notes``."""
    rng = np.random.default_rng(3)
    rows = [(m, lang, s, rng.normal(0.6, 0.05)) for m in ("a", "b", "c")
            for lang in ("x", "y", "z", "w") for s in range(3)]
    df = pd.DataFrame(rows, columns=["model", "language", "seed", "score"])
    df.loc[df.model == "c", "score"] = df.loc[df.model == "b", "score"].to_numpy()  # b == c
    flags = ["--n-resamples", "100", "--format", "json", "--quiet", "--out", str(tmp_path)]
    path = tmp_path / "runs.csv"
    if shape == "one_model":
        df[df.model == "a"].to_csv(path, index=False)
    elif shape == "one_seed":
        df[df.seed == 0].drop(columns="seed").to_csv(path, index=False)
    elif shape == "summary":
        g = df.groupby(["model", "language"])["score"].agg(["mean", "std"]).reset_index()
        g.to_csv(path, index=False)
        flags += ["--mean", "mean", "--sd-seed", "std", "--n-seeds", "3"]
    elif shape == "items":
        items = pd.DataFrame([(m, f"q{i}", float(rng.random() < p)) for m, p in
                              (("a", 0.6), ("b", 0.7)) for i in range(40)],
                             columns=["model", "item", "correct"])
        items.to_csv(path, index=False)
        flags += ["--item", "item", "--score", "correct"]
    else:
        df.to_csv(path, index=False)
    assert main(["report", str(path), *flags]) == 0
    capsys.readouterr()
    payload = json.loads((tmp_path / "analysis.json").read_text())
    (analysis,) = payload["metrics"].values()
    nulls = _nulls(payload)
    assert any(nulls.values())
    for (_, name), columns in nulls.items():
        reasons = analysis["tables"][name]["nan_reasons"]
        assert set(reasons) == columns, name
        for column in columns:
            assert "no reason recorded" not in reasons[column], (name, column)
    variance = analysis["tables"]["variance"]["nan_reasons"]
    assert "within-language noise" in variance["tau_between"]
    if shape in ("one_model", "one_seed", "three"):
        assert "no 'boot_score' (no bootstrap replicates)" in variance["sigma_boot mean"]
    if shape == "summary":
        assert variance["sigma_boot mean"] == "the summary-only cube has no 'sd_boot'"
    if shape == "three":
        assert set(analysis["tables"]["multi_aso"]["nan_reasons"].values()) == {
            "a model against itself (the diagonal)"}
        assert analysis["tables"]["pairwise"]["nan_reasons"]["z"].startswith(
            "z = observed / sd is undefined where sd is 0")
        (same,) = [r for r in analysis["tables"]["pairwise"]["rows"] if r["z"] is None]
        assert {same["model"], same["model_b"]} == {"b", "c"}
        assert same["sd"] == 0
        assert analysis["notes"] == []
    if shape in ("one_seed", "summary"):
        assert "interval_estimates" not in analysis["tables"]
        (note,) = analysis["notes"]
        assert "need at least 2 seeds" in note
    if shape == "one_model":
        assert "pairwise" not in analysis["tables"]
        assert "One model" in analysis["notes"][-1]
    if shape == "items":
        means = analysis["tables"]["item_means"]["nan_reasons"]
        assert means["var_within"].startswith("fewer than 2 seeds (epochs)")
        assert means["var_item"].startswith("var_item = max(0, s^2 - var_within / K) needs "
                                            "var_within: fewer than 2 seeds")


def test_analysis_json_writes_each_table_row_on_one_line(tmp_path, long_table, capsys):
    """Before: json.dumps(indent=2) put every value of every row on a line of its own: 21 MB
    for 200 models. Each record of a table is one line now (12 MB); the JSON is the same."""
    path = tmp_path / "runs.csv"
    long_table.to_csv(path, index=False)
    assert main(["report", str(path), "--model", "system", "--language", "lp", "--score",
                 "BLEU", "--seed", "run", "--n-resamples", "100", "--format", "json",
                 "--quiet", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    text = (tmp_path / "analysis.json").read_text()
    payload = json.loads(text)
    tables = payload["metrics"]["BLEU"]["tables"]
    lines = text.splitlines()
    for table in tables.values():
        for row in table["rows"]:
            line = json.dumps(row)
            assert sum(ln.strip().rstrip(",") == line for ln in lines) == 1
    assert lines[1].startswith('  "command": "evaluq report ')  # the rest indented as before
    assert payload["metrics"]["BLEU"]["settings"]["n_resamples"] == 100


def test_capitalised_cube_columns_are_read_without_their_flags(tmp_path, capsys):
    """A spreadsheet's header 'Model, Language, Seed, Score' reads as the cube's columns
    without a flag (the terminal says so), as 'model, language, seed, score' does: it used to
    refuse one column at a time ('give --score', then 'did you mean --model Model?')."""
    rng = np.random.default_rng(0)
    rows = [(m, lang, s, 0.6 + 0.05 * i + rng.normal(0, 0.02))
            for i, m in enumerate(["a", "b", "c"]) for lang in ["en", "de"] for s in range(3)]
    path, out = tmp_path / "Runs.csv", tmp_path / "out"
    df = pd.DataFrame(rows, columns=["Model", "Language", "Seed", "Score"])
    df.to_csv(path, index=False)
    code, _, err = _run(["report", str(path), "-o", str(out), "--n-resamples", "50",
                         "--format", "csv"], capsys)
    assert code == 0, err
    assert ("column 'Model' as --model Model and column 'Seed' as --seed Seed and column "
            "'Language' as --language Language") in err
    assert "column 'Score' as --score Score" in err
    cube = eq.open_cube(out / "Score_cube.nc")
    assert cube.sizes["seed"] == 3
    assert cube.sizes["language"] == 2
    assert sorted(cube["model"].values.tolist()) == ["a", "b", "c"]
    df.assign(model=df.Model).to_csv(path, index=False)     # 'model' itself: it is the one
    code, _, err = _run(["report", str(path), "-o", str(out), "--n-resamples", "50",
                         "--format", "csv", "--score", "Score"], capsys)
    assert code == 0, err
    assert "as --model" not in err
    df.assign(MODEL=df.Model).to_csv(path, index=False)     # two of that name: not guessed
    code, _, err = _run(["report", str(path), "-o", str(out), "--score", "Score"], capsys)
    assert code == 2
    assert "column 'model' (given as --model) is not in" in err


def test_a_spreadsheets_blank_rows_are_skipped_and_said_once(tmp_path, capsys):
    """',,,' rows below and between the runs (a spreadsheet's blank rows): the report runs,
    saying once which rows were skipped; a run's missing score is named by the file's row."""
    rng = np.random.default_rng(1)
    rows = [f"{m},{lang},{s},{0.6 + 0.05 * i + rng.normal(0, 0.02):.4f}"
            for i, m in enumerate(["a", "b", "c"]) for lang in ["en", "de"] for s in range(3)]
    rows[12] = "c,en,0,"                                   # a run without a score
    path = tmp_path / "runs.csv"
    path.write_text("model,language,seed,score\n" + "\n".join(rows[:9]) + "\n,,,\n"
                    + "\n".join(rows[9:]) + "\n,,,\n,,,\n")
    code, _, err = _run(["report", str(path), "-o", str(tmp_path / "out"), "--n-resamples",
                         "50", "--format", "csv", "--quiet"], capsys)
    assert code == 0, err
    assert err.count("row(s) have no value in any column") == 1
    assert "3 row(s) have no value in any column (row(s) 9, 19, 20, counted from 0" in err
    assert "has no value (empty or NA) in 1 of 18 rows (rows 13, counted from 0)" in err


def test_an_average_language_is_refused_and_left_out_by_the_flag(tmp_path, capsys):
    """A long file with a paper's 'Average' rows beside the tasks' was read as one more task
    (counted again in every aggregate): refused, naming --exclude-language, which leaves its
    rows out and gives the report of the tasks alone."""
    rng = np.random.default_rng(2)
    rows = [(m, lang, s, 0.6 + 0.05 * i + rng.normal(0, 0.02))
            for i, m in enumerate(["a", "b", "c"]) for lang in ["en", "de", "fr"]
            for s in range(3)]
    df = pd.DataFrame(rows, columns=["model", "language", "seed", "score"])
    average = df.groupby(["model", "seed"], as_index=False).score.mean()
    path, out = tmp_path / "runs.csv", tmp_path / "out"
    pd.concat([df, average.assign(language="Average")]).to_csv(path, index=False)
    flags = ["-o", str(out), "--n-resamples", "50", "--format", "csv"]
    code, _, err = _run(["report", str(path), *flags], capsys)
    assert code == 2
    assert "has the label 'Average' beside 3 other languages" in err
    assert "--exclude-language Average" in err
    code, _, err = _run(["report", str(path), *flags, "--exclude-language", "Average"], capsys)
    assert code == 0, err
    assert "leaving out 9 row(s) of 'Average' (--exclude-language)" in err
    assert sorted(eq.open_cube(out / "score_cube.nc")["language"].values) == ["de", "en", "fr"]
    code, _, err = _run(["report", str(path), *flags, "--exclude-language", "avg"], capsys)
    assert code == 2
    assert "--exclude-language 'avg' is not a label of column 'language'" in err
    df.to_csv(path, index=False)                        # no aggregate: nothing said
    code, _, err = _run(["report", str(path), *flags], capsys)
    assert code == 0, err
    assert "exclude-language" not in err


def test_a_spreadsheets_title_row_is_skipped_and_said_once(tmp_path, capsys):
    """'Results of our runs,,,' above the header (a spreadsheet's title row): the report of
    the runs below it, saying once which line was skipped. Before: "give either --score COL
    ... not both and not neither" (the title was read as the header)."""
    rng = np.random.default_rng(3)
    rows = [f"{m},{lang},{s},{0.6 + 0.05 * i + rng.normal(0, 0.02):.4f}"
            for i, m in enumerate(["a", "b", "c"]) for lang in ["en", "de"] for s in range(3)]
    path = tmp_path / "runs.csv"
    path.write_text("Results of our runs,,,\nmodel,language,seed,score\n" + "\n".join(rows)
                    + "\n")
    code, _, err = _run(["report", str(path), "-o", str(tmp_path / "out"), "--n-resamples",
                         "50", "--format", "csv", "--quiet"], capsys)
    assert code == 0, err
    assert err.count("read as a title above the header") == 1
    assert "line(s) 1 ('Results of our runs') read as a title above the header" in err


@pytest.mark.parametrize(("values", "said"), [
    (['"0,61"', '"0,72"'], r"A decimal comma \(or thousands separators\).*';' or "
                           r"tab-separated file"),
    (["C", "I"], r"read each label as its score: --label-score C=1 --label-score I=0"),
])
def test_a_score_column_of_text_is_read_and_its_values_named(tmp_path, capsys, values, said):
    """A column 'score' holding text (quoted decimal commas in a ',' file, or Inspect's
    letters): the report reads it as --score and the error names its values and the remedy.
    Before: "give either --score COL ... not both and not neither" (no numeric column)."""
    import re

    path = tmp_path / "runs.csv"
    path.write_text("model,language,seed,score\n" + "".join(
        f"{m},{lang},0,{values[i % 2]}\n" for i, (m, lang) in enumerate(
            [("a", "en"), ("b", "en"), ("a", "de"), ("b", "de")])))
    code, _, err = _run(["report", str(path), "-o", str(tmp_path / "out"), "--quiet"], capsys)
    assert code == 2
    assert "column 'score' (given as --score) must be numeric" in err
    assert re.search(said, err), err

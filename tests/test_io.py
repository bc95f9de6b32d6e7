"""Table readers: every format, user column names, clear errors."""

from __future__ import annotations

import bz2
import gzip
import lzma
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq import CubeError


def table() -> pd.DataFrame:
    return pd.DataFrame({
        "sys": ["a", "b", "a", "b"], "task": ["qa", "qa", "mt", "mt"], "run": [0, 0, 0, 0],
        "f1": [0.5, 0.6, 0.7, 0.65],
    })


WRITERS = {
    "csv": lambda df, p: df.to_csv(p, index=False),
    "tsv": lambda df, p: df.to_csv(p, sep="\t", index=False),
    "jsonl": lambda df, p: df.to_json(p, orient="records", lines=True),
    "parquet": lambda df, p: df.to_parquet(p, index=False),
    "feather": lambda df, p: df.to_feather(p),
    "arrow": lambda df, p: df.to_feather(p),
}


@pytest.mark.parametrize("suffix", sorted(WRITERS))
def test_each_format_builds_the_same_cube(tmp_path, suffix):
    path = tmp_path / f"scores.{suffix}"
    WRITERS[suffix](table(), path)
    pd.testing.assert_frame_equal(eq.read_table(path), table(), check_dtype=False)
    from_file = eq.from_long(path, model="sys", language="task", seed="run", score="f1")
    from_frame = eq.from_long(table(), model="sys", language="task", seed="run", score="f1")
    assert from_file.attrs["source"] == str(path)
    xr.testing.assert_equal(from_file, from_frame)


def test_summary_from_file(tmp_path):
    path = tmp_path / "summary.csv"
    pd.DataFrame({"m": ["a"], "l": ["en"], "mu": [1.0], "ss": [0.1], "sb": [0.2]}).to_csv(
        path, index=False)
    cube = eq.from_summary(path, model="m", language="l", mean="mu", sd_seed="ss",
                           sd_boot="sb", n_seeds=3)
    assert cube.sd_boot.item() == 0.2


def test_reader_errors(tmp_path):
    with pytest.raises(CubeError, match="unknown suffix '.xlsx'"):
        eq.read_table(tmp_path / "scores.xlsx")
    with pytest.raises(FileNotFoundError, match="no such file"):
        eq.read_table(tmp_path / "missing.csv")


def test_read_table_reads_a_semicolon_csv_with_decimal_commas(tmp_path):
    """A spreadsheet export in a decimal-comma locale (';' between fields, '0,71' numbers)
    reads as the same table as its ',' / '.' twin; a ';' file with decimal points too."""
    from evaluq.io import read_table

    df = pd.DataFrame({"model": ["a", "a", "b"], "lang": ["en", "de", "en"],
                       "seed": [0, 1, 0], "acc": [0.71, 0.6543210987654321, np.nan]})
    plain, semi, points = tmp_path / "p.csv", tmp_path / "s.csv", tmp_path / "t.csv"
    df.to_csv(plain, index=False)
    df.to_csv(semi, sep=";", decimal=",", index=False)
    df.to_csv(points, sep=";", index=False)
    assert "0,71" in semi.read_text()
    want = read_table(plain)
    for path in (semi, points):
        got = read_table(path)
        pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("name", ["tabs.csv", "tabs.txt", "tabs.csv.gz", "semi.txt",
                                  "commas.txt"])
def test_a_csv_or_txt_file_reads_by_the_separator_of_its_header(tmp_path, name):
    """A spreadsheet's "tab-delimited text" (.txt) or a TSV saved as .csv reads as the same
    table as the CSV; so does a .txt of commas or semicolons. Before, a tab-separated .csv
    was one column named 'sys\\ttask\\trun\\tf1' ('--model sys' was "not in the file")."""
    sep = "\t" if name.startswith("tabs") else ";" if name.startswith("semi") else ","
    path = tmp_path / name
    text = table().to_csv(sep=sep, index=False).encode()
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    pd.testing.assert_frame_equal(eq.read_table(path), table())
    cube = eq.from_long(path, model="sys", language="task", seed="run", score="f1")
    assert cube.sizes["model"] == 2


@pytest.mark.parametrize("orient", ["records", "columns", "split", "table"])
def test_a_json_table_in_any_of_pandas_layouts_reads_as_the_csv(tmp_path, orient):
    """A .json file of records (``[{"sys": ...}, ...]``, as scripts dump results) or in
    pandas' other layouts reads as the CSV of the same table; so does its .json.gz. Before,
    '.json' was an unknown suffix."""
    want = table()
    path = tmp_path / "scores.json"
    want.to_json(path, orient=orient, indent=1)
    pd.testing.assert_frame_equal(eq.read_table(path), want, check_dtype=False)
    packed = tmp_path / "scores.json.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    pd.testing.assert_frame_equal(eq.read_table(packed), want, check_dtype=False)


def test_a_json_file_that_is_no_table_says_what_a_table_looks_like(tmp_path):
    results = tmp_path / "results.json"
    results.write_text('{"results": {"arc": {"acc,none": 0.5}}, "versions": {"arc": 1}}')
    with pytest.raises(CubeError, match=r"holds a JSON dict, not a table .*harness's log; "
                                        r"read it with eq\.read_lm_eval_results"):
        eq.read_table(results)
    numbers = tmp_path / "numbers.json"
    numbers.write_text("[0.5, 0.6]")
    with pytest.raises(CubeError, match=r"holds a JSON list, not a table \(a list of records"):
        eq.read_table(numbers)
    cut = tmp_path / "cut.json"
    cut.write_text('[{"sys": "a", "f1": 0.5}, {"sys": "b", "f1"')
    with pytest.raises(CubeError, match="truncated or corrupted"):
        eq.read_table(cut)


def test_a_spreadsheet_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "scores.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(CubeError, match=r"unknown suffix '\.xlsx'.*save it as CSV"):
        eq.read_table(path)


COMPRESSORS = {
    ".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip",
}


@pytest.mark.parametrize("inner", ["csv", "tsv", "jsonl"])
@pytest.mark.parametrize("outer", sorted(COMPRESSORS))
def test_a_compressed_text_table_reads_as_the_plain_one(tmp_path, inner, outer):
    """``runs.csv.gz`` (a long file of runs, as users keep it) reads as ``runs.csv``: the
    reader is the inner suffix's, pandas decompresses it."""
    plain, packed = tmp_path / f"scores.{inner}", tmp_path / f"scores.{inner}{outer}"
    WRITERS[inner](table(), plain)
    data = plain.read_bytes()
    if outer == ".zip":
        with zipfile.ZipFile(packed, "w") as archive:
            archive.writestr(plain.name, data)
    else:
        packed.write_bytes({".gz": gzip, ".bz2": bz2, ".xz": lzma}[outer].compress(data))
    pd.testing.assert_frame_equal(eq.read_table(packed), eq.read_table(plain))


def test_compressed_tables_keep_the_plain_ones_checks(tmp_path):
    df = pd.DataFrame({"model": ["a", "b"], "acc": [0.71, 0.65]})
    semi = tmp_path / "semi.csv.gz"                   # a decimal-comma export, compressed
    semi.write_bytes(gzip.compress(df.to_csv(sep=";", decimal=",", index=False).encode()))
    pd.testing.assert_frame_equal(eq.read_table(semi), df)
    whole = gzip.compress(b"model,lang,acc\na,en,0.7\nb,en,0.6\nc,en")
    cut_line = tmp_path / "cut_line.csv.gz"           # complete archive, text cut mid-line
    cut_line.write_bytes(whole)
    with pytest.raises(CubeError, match="ends in the middle of a line"):
        eq.read_table(cut_line)
    cut_archive = tmp_path / "cut_archive.csv.gz"     # the archive itself cut short
    rows = "".join(f"m{i},{v:.6f}\n" for i, v in enumerate(np.random.default_rng(0).random(2000)))
    packed = gzip.compress(("model,acc\n" + rows).encode())
    cut_archive.write_bytes(packed[:len(packed) // 2])
    with pytest.raises(CubeError, match="truncated or corrupted"):
        eq.read_table(cut_archive)
    with zipfile.ZipFile(two := tmp_path / "two.csv.zip", "w") as archive:
        archive.writestr("a.csv", "model,acc\na,1\n")
        archive.writestr("b.csv", "model,acc\nb,1\n")
    with pytest.raises(CubeError, match="holds 2 files; a zipped table holds one"):
        eq.read_table(two)
    with pytest.raises(CubeError, match=r"must be .*\.csv.* before '\.gz' \(a parquet file "
                                        r"compresses itself\); got '\.parquet'"):
        eq.read_table(tmp_path / "scores.parquet.gz")
    empty = tmp_path / "empty.csv.gz"
    empty.write_bytes(gzip.compress(b""))
    with pytest.raises(CubeError, match="is empty"):
        eq.read_table(empty)


def test_a_column_of_percentages_reads_as_their_numbers(tmp_path):
    """A spreadsheet's scores formatted as percentages ("64.3%") read as 64.3, in every text
    format; a column mixing "64.3%" with "0.5" stays text, and building a cube from it names a
    value and the remedy (before: 'must be numeric; it has dtype str', with no way out)."""
    df = pd.DataFrame({"sys": ["a", "b", "a", "b"], "task": ["qa", "qa", "mt", "mt"],
                       "f1": ["50%", "60.5%", None, " 1e1 % "], "note": ["x%", "y", "z", "w"]})
    for name, write in (("p.csv", lambda d, p: d.to_csv(p, index=False)),
                        ("p.tsv", lambda d, p: d.to_csv(p, sep="\t", index=False)),
                        ("p.jsonl", lambda d, p: d.to_json(p, orient="records", lines=True))):
        write(df, tmp_path / name)
        got = eq.read_table(tmp_path / name)
        np.testing.assert_array_equal(got["f1"].to_numpy(float), [50.0, 60.5, np.nan, 10.0])
        assert got["note"].tolist() == ["x%", "y", "z", "w"]
    mixed = df.assign(f1=["50%", "0.605", "0.7", "0.1"])
    mixed.to_csv(tmp_path / "m.csv", index=False)
    assert eq.read_table(tmp_path / "m.csv")["f1"].tolist() == ["50%", "0.605", "0.7", "0.1"]
    with pytest.raises(CubeError, match=r"'50%' in row 0\)\. Percentages written as text: .*"
                                        r"str\.rstrip\('%'\)\.astype\(float\)"):
        eq.from_long(tmp_path / "m.csv", model="sys", language="task", score="f1")


@pytest.mark.parametrize("head", ["# exported by run_eval.py\n# metric: f1\n",
                                  "\ufeff# exported by run_eval.py\n", "#\n"])
def test_comment_lines_above_a_csv_header_are_skipped(tmp_path, head):
    """A tool's '#' lines above the header: the table below them. Before: "cannot read ...
    (truncated or corrupted?): ParserError: Expected 1 fields in line 3, saw 4"."""
    path = tmp_path / "runs.csv"
    path.write_text(head + table().to_csv(index=False), encoding="utf-8")
    pd.testing.assert_frame_equal(eq.read_table(path), table())


def test_spaces_after_the_separators_are_not_part_of_the_values(tmp_path):
    """'model, language, ...' as people type CSVs: the columns are 'task', not ' task', and the
    labels 'qa', not ' qa' (a quoted value keeps its spaces)."""
    path = tmp_path / "runs.csv"
    path.write_text(table().to_csv(index=False).replace(",", ", "))
    pd.testing.assert_frame_equal(eq.read_table(path), table())
    path.write_text('sys, task, run, f1\n"  a", qa, 0, 0.5\n')
    assert eq.read_table(path)["sys"].tolist() == ["  a"]


@pytest.mark.parametrize(("cell", "message"), [
    ("-", r"'-' looks like a mark for a run that is missing: leave those cells empty, or "
          r"read the file with na_values=\['-'\]"),
    ("OOM", r"'OOM' looks like a mark for a run that is missing"),
    ("62.5 (0.3)", r"A mean and its spread in one cell.*whether the spread is an SD"),
])
def test_a_mark_or_a_spread_in_a_score_cell_says_what_to_do(tmp_path, cell, message):
    path = tmp_path / "runs.csv"
    table().astype({"f1": object}).assign(f1=[0.5, cell, 0.7, 0.65]).to_csv(path, index=False)
    with pytest.raises(CubeError, match=message):
        eq.from_long(path, model="sys", language="task", seed="run", score="f1")
    if cell in ("-", "OOM"):          # the remedy it names works: the run is missing
        cube = eq.from_long(eq.read_table(path, na_values=[cell]), model="sys",
                            language="task", seed="run", score="f1")
        assert int(cube.score.isnull().sum()) == 1


@pytest.mark.parametrize(("name", "sep", "encoding"), [
    ("export.txt", "\t", "utf-16"),        # a spreadsheet's "Unicode text"
    ("export.csv", ",", "utf-16"),
    ("export.tsv", "\t", "utf-16-be"),
    ("export.csv", ",", "utf-8-sig"),
    ("export.csv.gz", ",", "utf-16"),
    ("export.jsonl", None, "utf-8-sig"),
    ("export.jsonl", None, "utf-16"),
])
def test_a_file_whose_byte_order_mark_names_its_encoding_is_read_in_it(tmp_path, name, sep,
                                                                       encoding):
    """Before: "cannot read 'export.txt' as a .txt table (truncated or corrupted?):
    UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff". The mark is unambiguous."""
    path = tmp_path / name
    labelled = table().assign(sys=["ä", "b", "ä", "b"])
    if encoding == "utf-16-be":     # Python writes no mark for an explicit byte order
        path.write_bytes(b"\xfe\xff" + labelled.to_csv(sep=sep, index=False)
                         .encode("utf-16-be"))
    elif sep is None:
        path.write_bytes(labelled.to_json(orient="records", lines=True).encode(encoding))
    else:
        labelled.to_csv(path, sep=sep, index=False, encoding=encoding)
    pd.testing.assert_frame_equal(eq.read_table(path), labelled)


def test_a_file_that_is_not_utf8_names_its_line_and_the_encoding_to_pass(tmp_path):
    """A Windows spreadsheet's CSV (cp1252): before, "cannot read ... (truncated or
    corrupted?): UnicodeDecodeError ..."; now the line and the remedy, and with
    ``encoding='cp1252'`` the labels as written."""
    path = tmp_path / "runs.csv"
    labelled = table().assign(sys=["b", "a", "Modèle", "a"])
    labelled.to_csv(path, index=False, encoding="cp1252")
    with pytest.raises(CubeError, match=r"is not UTF-8 text \(line 4: 'Modèle,mt,0,0.7'\).*"
                                        r"encoding='cp1252'"):
        eq.read_table(path)
    pd.testing.assert_frame_equal(eq.read_table(path, encoding="cp1252"), labelled)
    with pytest.raises(CubeError, match="cannot read .* as 'utf-16' text"):
        eq.read_table(path, encoding="utf-16")


def test_json_lines_named_json_are_read_as_json_lines(tmp_path):
    """One object per line in a ``.json`` file (as many tools name JSON lines): before,
    "cannot read ... JSONDecodeError: Extra data"."""
    path = tmp_path / "runs.json"
    table().to_json(path, orient="records", lines=True)
    pd.testing.assert_frame_equal(eq.read_table(path), table())


@pytest.mark.parametrize("sep", [",", ";", "\t"])
def test_rows_with_no_value_are_skipped_and_named(tmp_path, sep):
    """',,,' rows (a spreadsheet's blank rows: below the data, or between blocks) hold
    nothing: skipped with a warning naming them by the file's row numbers, which the other
    rows keep (a later message about row 4 names the file's row 4)."""
    from evaluq.errors import MissingDataWarning

    blank = sep * 2
    path = tmp_path / ("runs.tsv" if sep == "\t" else "runs.csv")
    path.write_text(sep.join(["model", "language", "score"]) + "\n"
                    + f"a{sep}en{sep}1\n{blank}\nb{sep}en{sep}2\nc{sep}en{sep}\n"
                    + f"d{sep}en{sep}4\n{blank}\n{blank}\n")
    with pytest.warns(MissingDataWarning, match=r"runs\.\w+: 3 row\(s\) have no value in any "
                                                r"column \(row\(s\) 1, 5, 6, counted from 0"):
        table = eq.read_table(path)
    assert table.index.tolist() == [0, 2, 3, 4]
    assert table.model.tolist() == ["a", "b", "c", "d"]
    assert table.score.isna().tolist() == [False, False, True, False]   # c's is kept: missing
    path.write_text("model,language,score\na,en,1\nb,en,2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert eq.read_table(path).index.tolist() == [0, 1]               # nothing to say


def test_an_aggregate_language_label_is_warned_about_by_the_loaders(tmp_path):
    """A long table with a paper's 'Average' rows beside its languages: from_long and
    from_summary read it as one more language (the user's table, kept as given) and say
    that it would be counted again in every aggregate, with the line that drops it (from_long
    with out=, a zarr store, too: it said nothing before); one
    language beside it ('all' alone, or beside one other) says nothing."""
    rows = [(m, lang, 0.5 + 0.1 * i + 0.01 * j) for i, m in enumerate("ab")
            for j, lang in enumerate(["en", "de", "fr"])]
    df = pd.DataFrame(rows, columns=["model", "language", "score"])
    average = df.groupby("model", as_index=False).score.mean().assign(language=" Average")
    with pytest.warns(eq.EvaluqWarning, match=r"has the label ' Average' beside other "
                                              r"languages: .* counted again in every aggregate"
                                              r".*table\[table\['language'\] != ' Average'\]"):
        cube = eq.from_long(pd.concat([df, average]))
    assert cube.sizes["language"] == 4
    with pytest.warns(eq.EvaluqWarning, match="has the label ' Average' beside"):
        stored = eq.from_long(pd.concat([df, average]), out=tmp_path / "cube.zarr")
    assert stored.sizes["language"] == 4                 # the zarr path, as in memory
    summary = pd.concat([df, average]).rename(columns={"score": "mean"})
    with pytest.warns(eq.EvaluqWarning, match="has the label ' Average' beside"):
        eq.from_summary(summary, sd_seed=None, sd_boot=None, n_seeds=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eq.from_long(df)
        eq.from_long(df[df.language == "en"].assign(language="all"))
        eq.from_long(pd.concat([df[df.language == "en"], average.assign(language="all")]))


@pytest.mark.parametrize(("sep", "decimal"), [(",", "."), (";", ","), ("\t", ".")])
def test_a_first_line_naming_the_separator_is_read_as_excel_reads_it(tmp_path, sep, decimal):
    """'sep=;' above the header (a line some tools write for Excel, which reads it as the
    separator): the table below it. Before: the line was the header, and one column 'sep=,'
    ("give either --score COL ... not neither" in the CLI)."""
    path = tmp_path / "runs.csv"
    path.write_text(f"sep={sep}\n" + table().to_csv(sep=sep, decimal=decimal, index=False))
    pd.testing.assert_frame_equal(eq.read_table(path), table())


@pytest.mark.parametrize("head", ["Results of our runs,,,,\n", "Results of our runs\n\n",
                                  '"Table 3: accuracy, by run",,,,\n,,,,\n',
                                  "Results\nAccuracy (%),,,,\n"])
def test_title_lines_above_a_header_are_skipped_and_named(tmp_path, head):
    """A spreadsheet's title row above the header ('Results of our runs,,,'), with or
    without blank rows below it: the table below, with a warning naming the lines. Before,
    the title was the header: columns 'Results of our runs', 'Unnamed: 1', ... (the CLI then
    asked for --score)."""
    from evaluq.errors import EvaluqWarning

    path = tmp_path / "runs.csv"
    path.write_text(head + table().to_csv(index=False))
    titles = ", ".join(str(i + 1) for i, line in enumerate(head.splitlines())
                       if line.strip(", "))
    header = len(head.splitlines()) + 1
    with pytest.warns(EvaluqWarning, match=rf"runs\.csv: line\(s\) {titles} \(.*\) read as a "
                                           rf"title above the header, not as the header: "
                                           rf"skipped \(the header is line {header}\)"):
        got = eq.read_table(path)
    pd.testing.assert_frame_equal(got, table())


@pytest.mark.parametrize("text", ["score\n0.5\n0.7\n", "model;acc\na;0,71\nb;0,5\n",
                                  'model\n"gpt, v2"\n"llama, v3"\n'])
def test_a_header_of_one_column_is_not_a_title(tmp_path, text):
    """A table of one column, or a ';' header above a row whose decimal comma looks like a
    ',' separator: read as it is, without a warning."""
    path = tmp_path / "one.csv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = eq.read_table(path)
    assert got.shape == (2, text.splitlines()[0].count(";") + 1)


@pytest.mark.parametrize("name", ["runs.tsv", "runs.tab", "runs.csv", "runs.txt"])
def test_a_tab_separated_table_reads_decimal_commas(tmp_path, name):
    """A spreadsheet's tab-delimited export in a decimal-comma locale ('0,71'): numbers, as
    in a ';' table. Before, the column stayed text ("must be numeric; it has dtype str (for
    example '0,71' ...)"). A column whose every value could be thousands separators
    ('1,234') stays text: which it is cannot be told."""
    df = table().assign(big=["1,234", "2,000", "3,500", "4,000"][:len(table())])
    path = tmp_path / name
    df.to_csv(path, sep="\t", decimal=",", index=False)
    got = eq.read_table(path)
    pd.testing.assert_frame_equal(got.drop(columns="big"), table())
    assert got["big"].tolist() == df["big"].tolist()
    df.assign(big=["1,234", "0,5", "3,500", "4,000"][:len(table())]).to_csv(
        path, sep="\t", index=False)
    assert eq.read_table(path)["big"].tolist() == [1.234, 0.5, 3.5, 4.0][:len(table())]

"""Tests of ``evaluq test`` (the two-system significance test on prediction files)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from evaluq.cli import main
from evaluq.metrics import UndefinedMetricWarning


@pytest.fixture
def files(tmp_path, rng):
    y = rng.integers(0, 2, 500)
    h0 = np.where(rng.random(500) < 0.65, y, 1 - y)
    h1 = np.where(rng.random(500) < 0.80, y, 1 - y)
    paths = []
    for name, arr in (("targs", y), ("h0", h0), ("h1", h1)):
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(map(str, arr)) + "\n")
        paths.append(str(f))
    return paths


def test_cli_test_prints_boostsa_like_output(files, capsys):
    code = main(["test", *files, "--metrics", "accuracy", "f1", "--sample-size", "0.2",
                 "--n-resamples", "200", "--seed", "3", "--h0-name", "base"])
    out = capsys.readouterr().out
    assert code == 0
    assert "method 'berg-kirkpatrick'" in out
    assert "h0 = 'base'" in out
    assert "sample size........... 100 (20%)" in out
    assert "count sample delta > 2 delta (accuracy)" in out
    assert "/ 200" in out
    # same seed, same printout
    main(["test", *files, "--metrics", "accuracy", "f1", "--sample-size", "0.2",
          "--n-resamples", "200", "--seed", "3", "--h0-name", "base"])
    assert capsys.readouterr().out == out


def test_cli_test_soft_csv_paired(tmp_path, rng, capsys):
    p = rng.dirichlet(np.ones(3), 200)
    q0 = 0.5 * p + 0.5 * rng.dirichlet(np.ones(3), 200)
    q1 = 0.9 * p + 0.1 * rng.dirichlet(np.ones(3), 200)
    paths = []
    for name, arr in (("t", p), ("a", q0), ("b", q1)):
        f = tmp_path / f"{name}.csv"
        np.savetxt(f, arr, delimiter=",")
        paths.append(str(f))
    assert main(["test", *paths, "--method", "paired", "--n-resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert "cross_entropy" in out
    assert "entropy_correlation" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--sample-size", "0.7"], "--sample-size must be in \\[0.05, 0.5\\]"),
        (["--method", "t-test"], "--method must be one of"),
        (["--metrics", "cross_entropy"], "is for soft labels"),
        (["--kind", "ordinal"], "--kind must be one of"),
        (["--n-resamples", "0"], "--n-resamples must be >= 1"),
    ],
)
def test_cli_test_errors_exit_2(files, capsys, extra, match):
    assert main(["test", *files, *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("evaluq test: error: ")
    assert re.search(match, err)


def test_cli_test_missing_file(files, capsys, tmp_path):
    assert main(["test", files[0], str(tmp_path / "nope.txt"), files[2]]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_test_bad_argument_type(files):
    with pytest.raises(SystemExit) as exc:
        main(["test", *files, "--n-resamples", "many"])
    assert exc.value.code == 2


def test_cli_test_labels_option(files, capsys):
    assert main(["test", *files, "--metrics", "f1", "--method", "paired", "--n-resamples",
                 "100", "--labels", "0", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "f1 " in out
    # a label outside the given set is an error naming it
    assert main(["test", *files, "--metrics", "f1", "--labels", "1"]) == 2
    assert "not in --labels" in capsys.readouterr().err


def test_one_table_with_columns_equals_three_files(files, tmp_path, capsys):
    """A single predictions table (one row per item: the gold label and each system's) is
    what many users have; --columns reads it, with the same result as three files."""
    import pandas as pd

    names = ["gold", "bert_base", "bert_large"]
    words = np.array(["neg", "pos"])
    values = [np.loadtxt(f, dtype=np.int64) for f in files]
    table = pd.DataFrame({"id": range(500), **{n: words[v] for n, v in zip(names, values,
                                                                          strict=True)}})
    table.to_csv(path := tmp_path / "predictions.csv", index=False)
    for f, v in zip(files, values, strict=True):            # the same labels as words
        (tmp_path / f"{f.rsplit('/', 1)[-1]}.words.txt").write_text("\n".join(words[v]) + "\n")
    word_files = [str(tmp_path / f"{f.rsplit('/', 1)[-1]}.words.txt") for f in files]
    flags = ["--method", "paired", "--n-resamples", "200", "--seed", "3", "--json"]
    assert main(["test", *word_files, *flags, "--h0-name", "bert_base", "--h1-name",
                 "bert_large"]) == 0
    from_files = capsys.readouterr().out
    assert main(["test", str(path), "--columns", *names, *flags]) == 0
    assert capsys.readouterr().out == from_files
    assert '"h0_name": "bert_base"' in from_files


@pytest.mark.parametrize(("rows", "extra", "message"), [
    (None, ["--columns", "gold", "a", "nope"], r"column\(s\) \['nope'\] \(given as --columns\) "
                                              r"not in .*; its columns are: gold, a, b"),
    (None, [], r"give three files, TARGETS H0 H1, or one table with --columns"),
    ([1, 4], ["--columns", "gold", "a", "b"], r"2 row\(s\) have no value in column\(s\) \['a'\] "
                                              r"\(rows 1, 4, counted from 0\)"),
])
def test_table_input_errors_name_the_columns_and_rows(tmp_path, capsys, rows, extra, message):
    import pandas as pd

    df = pd.DataFrame({"gold": ["x", "y"] * 5, "a": ["x"] * 10, "b": ["y"] * 10})
    if rows:
        df.loc[rows, "a"] = None
    df.to_csv(path := tmp_path / "t.csv", index=False)
    assert main(["test", str(path), *extra]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_files_of_different_lengths_are_named_by_file(files, tmp_path, capsys):
    """A predictions file one line short: the error names the file and its role, not the
    library's argument (before: '`h1` has 499 items but `targets` has 500')."""
    targets, h0, h1 = files
    short = tmp_path / "short.txt"
    short.write_text("".join(Path(h1).read_text().splitlines(keepends=True)[:-1]))
    assert main(["test", targets, h0, str(short)]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"H1 \({re.escape(str(short))}\) has \d+ items but TARGETS "
                     rf"\({re.escape(targets)}\) has \d+", err), err


def test_csv_headers_match_the_classes_by_name(tmp_path, rng, capsys):
    """Before: the header line of class names was skipped and never compared: a file with its
    columns in another order was read by position."""
    p = rng.dirichlet(np.ones(3), 100)
    q0 = 0.5 * p + 0.5 * rng.dirichlet(np.ones(3), 100)
    q1 = 0.9 * p + 0.1 * rng.dirichlet(np.ones(3), 100)
    order = [2, 0, 1]
    names = np.array(["neg", "neu", "pos"])
    paths = {}
    for name, arr, cols in (("t", p, [0, 1, 2]), ("a", q0, [0, 1, 2]), ("b", q1, order),
                            ("bad", q1, [0, 1, 2])):
        f = tmp_path / f"{name}.csv"
        header = ",".join(names[cols]) if name != "bad" else "neg,neu,other"
        np.savetxt(f, arr[:, cols], delimiter=",", header=header, comments="")
        paths[name] = str(f)
    args = ["--method", "paired", "--metrics", "cross_entropy", "--n-resamples", "50"]
    assert main(["test", paths["t"], paths["a"], paths["b"], *args]) == 0
    out = capsys.readouterr().out
    h1 = float(re.search(r"h1: (\S+)", out).group(1))
    assert h1 == pytest.approx(-np.mean(np.sum(p * np.log(q1), axis=1)), abs=5e-5)
    assert main(["test", paths["t"], paths["a"], paths["bad"], *args]) == 2
    err = capsys.readouterr().err
    assert f"the header of H1 ({paths['bad']}) and the header of TARGETS ({paths['t']}) name " \
           f"different classes: H1 ({paths['bad']}) names classes ['other']" in err


def test_few_items_warning_names_the_method_flag(tmp_path, capsys):
    """Before: `evaluq test` on 3 items printed p = 0.0010 ** with no word of caution."""
    paths = []
    for name, labels in (("y", [1, 1, 1]), ("a", [0, 0, 0]), ("b", [1, 1, 1])):
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(map(str, labels)) + "\n")
        paths.append(str(f))
    assert main(["test", *paths, "--method", "paired", "--metrics", "accuracy"]) == 0
    err = capsys.readouterr().err
    assert "evaluq test: SmallSampleWarning: only 3 items, fewer than 40" in err
    assert "Use more items or --method permutation (valid at any number of items; with 3 " \
           "items its p-value cannot fall below 2 / 2^3 = 0.25)" in err


def test_probability_files_printed_to_three_decimals(tmp_path, rng, capsys):
    """Before: refused ('must sum to 1 within atol=1e-06'), the files unusable as written."""
    p = rng.dirichlet(np.full(3, 4.0), 150)
    q0 = 0.5 * p + 0.5 * rng.dirichlet(np.full(3, 4.0), 150)
    q1 = 0.9 * p + 0.1 * rng.dirichlet(np.full(3, 4.0), 150)
    paths = []
    for name, arr in (("t", p), ("a", q0), ("b", q1)):
        f = tmp_path / f"{name}.csv"
        np.savetxt(f, arr, delimiter=",", fmt="%.3f")
        paths.append(str(f))
    args = ["--method", "paired", "--metrics", "cross_entropy", "--n-resamples", "50"]
    assert main(["test", *paths, *args]) == 0
    captured = capsys.readouterr()
    assert re.search(r"evaluq test: EvaluqWarning: \d+ row\(s\) of H1 \(.*b\.csv\) sum to 1 "
                     r"only within the rounding of values printed to 3 decimals", captured.err)
    t, b = (np.loadtxt(f, delimiter=",") for f in (paths[0], paths[2]))
    t, b = (x / x.sum(axis=1, keepdims=True) for x in (t, b))
    h1 = float(re.search(r"h1: (\S+)", captured.out).group(1))
    assert h1 == pytest.approx(-np.mean(np.sum(t * np.log(b), axis=1)), abs=5e-5)


def test_table_labels_are_read_as_written(tmp_path, capsys):
    """Before: the cells 'NA', 'None', 'nan' (a region, an intent, a language) were read as
    missing and the table refused; '01' and '1' were one number; one '1.5' among class ids
    made the test MSE / MAE. Labels are text, typed with the other columns."""
    import pandas as pd

    rng = np.random.default_rng(4)
    words = np.array(["NA", "None", "nan", "EU"])
    y = rng.integers(0, 4, 80)
    a = np.where(rng.random(80) < 0.6, y, rng.integers(0, 4, 80))
    b = np.where(rng.random(80) < 0.8, y, rng.integers(0, 4, 80))
    pd.DataFrame({"gold": words[y], "a": words[a], "b": words[b]}).to_csv(
        path := tmp_path / "t.csv", index=False)
    flags = ["--columns", "gold", "a", "b", "--method", "paired", "--metrics", "accuracy",
             "--n-resamples", "50", "--json"]
    assert main(["test", str(path), *flags]) == 0
    import json

    out = json.loads(capsys.readouterr().out)["results"][0]
    assert out["h0"] == pytest.approx(np.mean(a == y))
    assert out["h1"] == pytest.approx(np.mean(b == y))
    # an empty cell is still missing
    (tmp_path / "e.csv").write_text("gold,a,b\nNA,NA,\nEU,EU,EU\n")
    assert main(["test", str(tmp_path / "e.csv"), *flags]) == 2
    assert "1 row(s) have no value in column(s) ['b'] (rows 0" in capsys.readouterr().err
    # one number written two ways: refused, naming the rows and the flag
    (tmp_path / "z.csv").write_text("gold,a,b\n1,1,01\n2,2,2\n1,2,1\n")
    assert main(["test", str(tmp_path / "z.csv"), *flags]) == 2
    assert "`gold` row 0 holds '1' and `b` row 0 holds '01': one number written two ways" \
           in (err := capsys.readouterr().err)
    assert "Pass --kind hard to compare the labels as written, or --kind regression" in err
    assert main(["test", str(tmp_path / "z.csv"), *flags, "--kind", "hard"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["h1"] == pytest.approx(2 / 3)


def test_one_non_integer_prediction_names_the_kind_flag(tmp_path, capsys):
    lines = {"y": ["0", "1", "2", "1"], "a": ["0", "1", "1", "1"], "b": ["0", "1.5", "2", "1"]}
    paths = []
    for name, values in lines.items():
        (f := tmp_path / f"{name}.txt").write_text("\n".join(values) + "\n")
        paths.append(str(f))
    assert main(["test", *paths, "--method", "permutation", "--n-resamples", "50"]) == 2
    err = capsys.readouterr().err
    assert f"TARGETS ({paths[0]}) holds whole numbers (class labels?) but H1 ({paths[2]}) " \
           f"holds 1 non-integer value(s) (line 2: 1.5)" in err
    assert "Pass --kind regression (or regression metrics (--metrics mse mae))" in err
    assert main(["test", *paths, "--method", "permutation", "--n-resamples", "50",
                 "--metrics", "mse"]) == 0
    capsys.readouterr()


def test_cli_test_json_says_why_an_infinite_cross_entropy_is_null(tmp_path, rng, capsys):
    """Before: ``--json`` wrote ``null`` for h0, delta, p and the interval with no reason (a
    probability 0 on a class the target supports makes the cross-entropy +inf), and the
    named remedy, a clipped cross-entropy, could not be asked for on the command line."""
    import json

    p = rng.dirichlet(np.ones(3), 60)
    q0, q1 = rng.dirichlet(np.ones(3), 60), rng.dirichlet(np.ones(3), 60)
    q0[3], p[3] = [0.0, 0.5, 0.5], [0.2, 0.4, 0.4]
    paths = []
    for name, arr in (("t", p), ("a", q0), ("b", q1)):
        np.savetxt(tmp_path / f"{name}.csv", arr, delimiter=",", fmt="%.12f")
        paths.append(str(tmp_path / f"{name}.csv"))
    flags = ["--method", "paired", "--n-resamples", "100", "--json"]
    assert main(["test", *paths, "--metrics", "cross_entropy", "js_divergence", *flags]) == 0
    out = json.loads(capsys.readouterr().out)
    ce, jsd = out["results"]
    assert [ce[k] for k in ("h0", "delta", "pvalue", "ci_lower", "ci_upper")] == [None] * 5
    assert re.search(r"cross_entropy of h0 is \+inf: a prediction gives probability 0 to a "
                     r"class the target supports.*'cross_entropy\[eps=1e-12\]'.*delta is \+inf "
                     r"\(h1 better by an infinite margin\); the p-value and the interval are "
                     r"undefined", ce["nan_reason"])
    assert jsd["nan_reason"] is None
    assert jsd["pvalue"] is not None
    assert "nan_reason" not in out["settings"]
    # the text summary says it too
    assert main(["test", *paths, "--metrics", "cross_entropy", "--method", "paired",
                 "--n-resamples", "100"]) == 0
    assert "cross_entropy: cross_entropy of h0 is +inf" in capsys.readouterr().out
    # the remedy it names works: clipped at eps, finite, the value of cross_entropy(eps=)
    assert main(["test", *paths, "--metrics", "cross_entropy[eps=1e-12]", *flags]) == 0
    (clipped,) = json.loads(capsys.readouterr().out)["results"]
    assert clipped["metric"] == "cross_entropy[eps=1e-12]"
    assert clipped["nan_reason"] is None
    from evaluq.metrics import cross_entropy

    assert clipped["h0"] == pytest.approx(cross_entropy(p, q0, eps=1e-12))
    assert np.isfinite(clipped["h0"])
    assert clipped["pvalue"] is not None


def test_cli_test_messages_name_the_flags_and_a_remedy_for_few_items(tmp_path, capsys):
    """Before: '`sample_size` 0.1 of 2 items draws no item; use a larger sample size' (a
    Python keyword, and no word of --method permutation, the test valid at 2 items), and
    '... not in `labels`' for --labels."""
    paths = []
    for name, lines in (("y", "pos\nneg\n"), ("a", "pos\npos\n"), ("b", "pos\nneg\n")):
        (tmp_path / f"{name}.txt").write_text(lines)
        paths.append(str(tmp_path / f"{name}.txt"))
    assert main(["test", *paths]) == 2
    err = capsys.readouterr().err
    assert ("--sample-size must draw at least one item: 0.1 of 2 items draws round(0.1 x 2) "
            "= 0 (the Berg-Kirkpatrick sub-sample). Pass a larger --sample-size (at most "
            "0.5), use more items, or --method permutation") in err
    assert main(["test", *paths, "--labels", "pos"]) == 2
    assert "that are not in --labels ['pos']" in capsys.readouterr().err
    from evaluq import bootstrap_test

    with pytest.raises(ValueError, match=r"round\(0\.5 x 1\) = 0 \(the Berg-Kirkpatrick "
                                         r"sub-sample\)\. Use more items, or "
                                         r"method='permutation'"), \
            pytest.warns(UndefinedMetricWarning, match=r"\['b'\]"):   # no target is 'b'
        bootstrap_test(["a"], ["a"], ["b"], sample_size=0.5)

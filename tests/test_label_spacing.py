"""Labels that differ only in spaces around them ("gpt-4" and "gpt-4 "), or only in case ("hi"
and "HI"), are refused wherever a table's key column becomes labels: read as two models they
would split one model's rows (found by running ``evaluq report`` on a CSV with a trailing
space in some model names: it went on with eight half-models and dropped three of them as
incomplete)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.cli import main
from evaluq.errors import CubeError


def _runs(spaced: bool) -> pd.DataFrame:
    rows = [{"model": m, "language": lang, "seed": s, "score": 0.5 + 0.1 * i + 0.01 * s}
            for i, m in enumerate(["gpt-4", "llama"]) for lang in ["de", "en"]
            for s in range(3)]
    df = pd.DataFrame(rows)
    if spaced:
        df.loc[df.index % 2 == 1, "model"] = df["model"] + " "
    return df


COLS = {"model": "model", "language": "language", "seed": "seed", "score": "score"}


def test_from_long_refuses_labels_that_differ_only_in_spaces():
    with pytest.raises(CubeError, match=r"column 'model' .*'gpt-4' and 'gpt-4 '.*str\.strip"):
        eq.from_long(_runs(spaced=True), **COLS)


def test_from_summary_refuses_them():
    df = pd.DataFrame({"model": ["gpt-4", "gpt-4 ", "llama", "llama"],
                       "language": ["de", "en", "de", "en"], "mean": [0.6, 0.7, 0.5, 0.6],
                       "sd_seed": 0.01, "sd_boot": 0.02})
    with pytest.raises(CubeError, match=r"column 'model' .*'gpt-4' and 'gpt-4 '"):
        eq.from_summary(df, n_seeds=3)


def test_a_parquet_file_streamed_to_zarr_refuses_them(tmp_path):
    path = tmp_path / "runs.parquet"
    _runs(spaced=True).to_parquet(path)
    with pytest.raises(CubeError, match="differ only in spaces"):
        eq.from_long(str(path), **COLS, out=str(tmp_path / "cube.zarr"))
    assert not (tmp_path / "cube.zarr").exists()


def test_names_with_inner_spaces_or_without_clash_are_kept():
    df = _runs(spaced=False)
    df["model"] = df["model"].map({"gpt-4": "gpt 4", "llama": " llama"})
    cube = eq.from_long(df, **COLS)
    assert sorted(cube["model"].values.tolist()) == [" llama", "gpt 4"]


def _items(first_q1: str) -> pd.DataFrame:
    """Two models' per-item scores over two epochs, the first epoch's q1 spelled ``first_q1``."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"model": np.repeat(["a", "b"], 6), "item": ["q1", "q2", "q3"] * 4,
                       "score": rng.integers(0, 2, 12).astype(float)})
    df.loc[[0, 6], "item"] = first_q1
    return df


def test_from_items_refuses_item_ids_that_differ_only_in_spaces():
    df = _items("q1 ")                      # the first epoch's q1 written with a space
    with pytest.raises(CubeError, match=r"column 'item' .*'q1' and 'q1 '"):
        eq.from_items(df, model="model", item="item", score="score", n_boot=10)


def _votes(third: str) -> pd.DataFrame:
    """Three votes, the third's model A spelled ``third`` (gpt-4 in the first two)."""
    return pd.DataFrame({"model_a": ["gpt-4", "llama", third],
                         "model_b": ["llama", "gpt-4", "llama"],
                         "winner": ["model_a", "model_b", "tie"]})


def _report_error(runs: pd.DataFrame, tmp_path, capsys) -> str:
    """``evaluq report`` on these runs: exit 2 and nothing written; the message."""
    path = tmp_path / "runs.csv"
    runs.to_csv(path, index=False)
    code = main(["report", str(path), "--model", "model", "--language", "language",
                 "--seed", "seed", "--score", "score", "--out", str(tmp_path / "out")])
    assert code == 2
    assert not (tmp_path / "out" / "report.html").exists()
    return capsys.readouterr().err


def test_ratings_refuse_model_names_that_differ_only_in_spaces():
    with pytest.raises(CubeError, match=r"'gpt-4' and 'gpt-4 '"):
        eq.fit_ratings(_votes("gpt-4 "))


def test_cli_report_exits_2_and_names_the_labels(tmp_path, capsys):
    err = _report_error(_runs(spaced=True), tmp_path, capsys)
    assert "'gpt-4' and 'gpt-4 '" in err
    assert "Remove the spaces in the file" in err
    assert not (tmp_path / "out" / "report.html").exists()


def test_judged_means_refuse_model_names_that_differ_only_in_spaces():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"model": np.repeat(["gpt-4", "llama"], 40),
                       "item": np.tile(np.arange(40), 2),
                       "judge": rng.integers(0, 2, 80).astype(float)})
    df["gold"] = np.where(np.arange(80) % 4 == 0, df["judge"], np.nan)
    df.loc[3, "model"] = "gpt-4 "
    with pytest.raises(CubeError, match=r"'gpt-4' and 'gpt-4 '"):
        eq.judged_means(df, transport_alpha=None)


def test_fit_items_says_only_what_is_wrong():
    """The item model's pivot adds a note on missing items to its errors; not to this one."""
    from evaluq.item_model import simulate_items

    table = simulate_items(n_models=3, n_items=20, n_epochs=1, rng=0)
    table["model"] = table["model"].astype(str)
    table.loc[0, "model"] = table.loc[0, "model"] + " "
    with pytest.raises(CubeError, match=r"'m0' and 'm0 '") as info:
        eq.fit_items(table, model="model", item="item", score="score", draws=10, tune=10,
                     chains=1)
    assert "fit_items needs" not in str(info.value)


# --- labels that differ only in case ("HI" and "hi") --------------------------------------
# Found by running ``evaluq report`` on a CSV whose language column mixed "hi" and "HI" (rows
# from two exports): it went on with 12 half-languages, dropped four as incomplete and
# printed numpy's "All-NaN slice" warning.


def _cased(column: str) -> pd.DataFrame:
    df = _runs(spaced=False)
    df.loc[df.index % 2 == 1, column] = df[column].str.upper()
    return df


@pytest.mark.parametrize("column", ["model", "language"])
def test_from_long_refuses_labels_that_differ_only_in_case(column):
    with pytest.raises(CubeError, match=rf"column '{column}' has labels that differ only in "
                                        rf"upper and lower case.*str\.lower"):
        eq.from_long(_cased(column), **COLS)


def test_names_that_differ_in_more_than_case_are_kept():
    df = _runs(spaced=False)
    df["model"] = df["model"].map({"gpt-4": "GPT-4o", "llama": "gpt-4"})
    cube = eq.from_long(df, **COLS)
    assert sorted(cube["model"].values.tolist()) == ["GPT-4o", "gpt-4"]


def test_from_items_and_ratings_refuse_labels_that_differ_only_in_case():
    df = _items("Q1")
    with pytest.raises(CubeError, match=r"column 'item' .*'Q1' and 'q1'"):
        eq.from_items(df, model="model", item="item", score="score", n_boot=10)
    with pytest.raises(CubeError, match=r"'GPT-4' and 'gpt-4'"):
        eq.fit_ratings(_votes("GPT-4"))


def test_cli_report_exits_2_on_labels_that_differ_only_in_case(tmp_path, capsys):
    err = _report_error(_cased("language"), tmp_path, capsys)
    assert "'DE' and 'de' (and 1 more such group(s))" in err
    assert "Spell each name one way in the file" in err


@pytest.mark.parametrize(("other", "shown"), [
    ("gpt-4\u00e9", "'gpt-4e\\u0301' and 'gpt-4\\xe9'"),         # composed / decomposed accent
    ("gpt\u00a04", "'gpt 4' and 'gpt\\xa04'"),                     # a non-breaking space
    ("gpt 4\u200b", "'gpt 4' and 'gpt 4\\u200b'"),                 # a zero-width space
    ("gpt  4", "'gpt  4' and 'gpt 4'"),                             # two spaces in a row
])
def test_labels_that_print_alike_but_differ_in_their_characters_are_refused(other, shown):
    """Labels that look the same on screen but are spelled with other characters (copied from
    a web page, a PDF or two tools' exports) were read as two models, each with part of the
    rows, silently. They are refused, shown with escapes so the difference can be seen."""
    base = "gpt-4e\u0301" if "\u00e9" in other else "gpt 4"
    df = _runs(spaced=False)
    df.loc[df.index % 2 == 1, "model"] = other
    df.loc[df.index % 2 == 0, "model"] = base
    with pytest.raises(CubeError, match="differ only in how they are encoded") as info:
        eq.from_long(df, **COLS)
    assert shown in str(info.value)
    assert "(written with escapes)" in str(info.value)
    fine = _runs(spaced=False).replace({"gpt-4": "modèle 模型"})
    assert "modèle 模型" in eq.from_long(fine, **COLS).model.values

"""Paper tables: Markdown / LaTeX export with captions stating the uncertainty."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evaluq as eq


@pytest.fixture(scope="module")
def agg():
    cube = eq.simulate_cube(n_models=3, model_means=[0.0, 1.0, 3.0], rng=2)
    return eq.aggregate(eq.resample(cube, n_resamples=300, rng=2), confidence_level=0.9)


def _tables(agg):
    cube = eq.simulate_cube(n_models=3, rng=2)
    return {"leaderboard": eq.leaderboard(agg, alpha=0.1, adjustment="bh"),
            "pairwise": eq.pairwise_table(
                eq.pairwise_differences(agg, confidence_level=0.8), unique=True),
            "pairwise_all": eq.pairwise_table(eq.pairwise_differences(agg,
                                                                      confidence_level=0.8)),
            "variance": eq.variance_table(eq.variance_components(cube), digits=3)}


def test_every_table_states_its_uncertainty(agg):
    t = _tables(agg)
    board = t["leaderboard"].attrs
    assert "SD over 300 resamples" in board["uncertainty"]
    assert "90% percentile interval" in board["uncertainty"]
    assert "bh-adjusted pairwise tests at alpha = 0.1" in board["caption"]
    assert "over 8 languages" in board["caption"]
    for name in ("pairwise", "pairwise_all"):
        assert "SD over 300 resamples" in t[name].attrs["caption"]
        assert "80% percentile interval" in t[name].attrs["caption"]
    assert "standard errors" in t["variance"].attrs["caption"]
    for table in t.values():
        assert table.attrs["uncertainty"] in table.attrs["caption"] or (
            "standard errors" in table.attrs["caption"])


def test_markdown_round_trips_the_numbers(agg):
    board = eq.leaderboard(agg)
    text = eq.tables.to_markdown(board, digits=6)
    lines = text.splitlines()
    assert lines[0] == "| model | " + " | ".join(board.columns) + " |"
    assert lines[1].count("---:") == board.shape[1]
    rows = [line.strip("| ").split(" | ") for line in lines[2:2 + len(board)]]
    assert [r[0] for r in rows] == list(board.index)
    values = np.array([[float(v) for v in r[1:]] for r in rows])
    np.testing.assert_allclose(values, board.to_numpy(float), rtol=1e-5)
    assert lines[-1] == f"Table: {board.attrs['caption']}"
    no_caption = eq.tables.to_markdown(board, caption="")
    assert "Table:" not in no_caption


def test_markdown_blank_nan_escaped_pipes_and_multiindex_columns():
    cols = pd.MultiIndex.from_tuples([("count", ""), ("E[CE]", "a|b")])
    t = pd.DataFrame([[3, np.nan], [4, 0.5]], columns=cols)
    text = eq.tables.to_markdown(t, index=False)
    assert text.splitlines()[0] == "| count | E[CE] a\\|b |"
    assert text.splitlines()[2] == "| 3 |  |"


def test_latex_has_caption_label_and_escapes(agg):
    board = eq.leaderboard(agg)
    tex = eq.tables.to_latex(board, label="tab:board")
    assert tex.startswith("\\begin{table}\n\\centering\n\\caption{Leaderboard")
    assert "90\\% percentile interval" in tex
    assert "\\label{tab:board}" in tex
    assert "observed\\_rank" in tex
    assert "\\toprule" in tex
    assert "\\bottomrule" in tex
    # one data row per model, the values to 4 significant figures
    first = board.index[0]
    row = next(line for line in tex.splitlines() if line.startswith(f"{first} &"))
    assert row.split(" & ")[1] == f"{board['observed'].iloc[0]:.4g}"
    # pandas' own to_latex works too (jinja2 is a declared dependency)
    assert "\\begin{tabular}" in board.to_latex()
    plain = eq.tables.to_latex(board, caption="α = 5%, σ_seed", index=False)
    assert "\\caption{$\\alpha$ = 5\\%, $\\sigma$\\_seed}" in plain
    assert "model" not in plain.split("\\midrule")[0]


def test_write_and_caption(tmp_path, agg):
    board = eq.leaderboard(agg)
    paths = eq.tables.write(board, tmp_path / "board", formats=["csv", "md"])
    assert [p.name for p in paths] == ["board.csv", "board.md"]
    back = pd.read_csv(paths[0], index_col=0)
    pd.testing.assert_frame_equal(back, board, check_names=False, check_dtype=False)
    assert paths[1].read_text() == eq.tables.to_markdown(board)
    assert eq.tables.caption(board) == board.attrs["caption"]
    assert eq.tables.caption(pd.DataFrame({"a": [1]})) == ""


def test_validation_messages(agg):
    board = eq.leaderboard(agg)
    with pytest.raises(TypeError, match="`table` must be a pandas DataFrame"):
        eq.tables.to_markdown(board.to_numpy())
    with pytest.raises(ValueError, match="`formats` must be one of"):
        eq.tables.write(board, "x", formats=["docx"])
    with pytest.raises(ValueError, match="`digits` must be >= 1"):
        eq.tables.to_latex(board, digits=0)
    with pytest.raises(TypeError, match="`caption` must be a string"):
        eq.tables.to_markdown(board, caption=3)


def test_a_long_table_is_a_longtable_that_breaks_across_pages():
    """A 200-model table in a ``table`` float runs off the page (a float cannot break): more
    than ``LONG_LATEX`` rows are written as a ``longtable``, whose header repeats on every
    page, with the caption and label; up to that many rows stay a centred float."""
    index = pd.Index([f"m_{i}" for i in range(eq.tables.LONG_LATEX + 1)], name="model")
    table = pd.DataFrame({"mean": np.arange(len(index)) / 7.0}, index=index)
    table.attrs["caption"] = "Means, 5% trimmed"
    tex = eq.tables.to_latex(table, label="tab:means")
    assert tex.startswith("\\begin{longtable}{lr}\n\\caption{Means, 5\\% trimmed} "
                          "\\label{tab:means} \\\\")
    assert "\\endhead" in tex
    assert tex.rstrip().endswith("\\end{longtable}")
    rows = [line for line in tex.splitlines() if line.startswith("m\\_")]
    assert len(rows) == len(index)
    assert rows[1] == "m\\_1 & 0.1429 \\\\"
    short = eq.tables.to_latex(table.iloc[:eq.tables.LONG_LATEX])
    assert short.startswith("\\begin{table}\n\\centering")


def _styler_latex(table, *, caption=None, label=None, digits=4, index=True):
    """What ``to_latex`` wrote before for a long table: all of it by pandas' Styler."""
    from evaluq.tables import _caption_text, _escape_latex, _label, _styler

    text = _caption_text(table, caption)
    frame = table.copy()
    frame.attrs = {}
    frame.columns = pd.Index([_label(c) for c in frame.columns])
    return _styler(frame, digits, index).to_latex(
        caption=_escape_latex(text) if text else None, label=label, hrules=True,
        environment="longtable", column_format=None)


def _long_tables(agg):
    rng = np.random.default_rng(0)
    n = 90
    idx = pd.MultiIndex.from_arrays([rng.choice(["a_1", "b&c", "α%"], n),
                                     rng.choice(["x", "y"], n), np.arange(n) % 7],
                                    names=["model", None, "k"])
    mixed = pd.DataFrame({"f": rng.normal(size=n), "b": rng.random(n) < 0.5,
                          "i": np.arange(n), "o": [None if i % 3 else f"t_{i}$" for i in range(n)],
                          "nan": np.where(np.arange(n) % 4 == 0, np.nan, 1.5), "inf": np.inf},
                         index=idx)
    cube = eq.simulate_cube(n_models=12, rng=1)
    pw = eq.pairwise_differences(eq.aggregate(eq.resample(cube, n_resamples=100, rng=1)))
    return {"mixed": mixed, "sorted": mixed.sort_index(), "plain": mixed.reset_index(drop=True),
            "named": mixed.reset_index(drop=True).rename_axis("row"),
            "columns": mixed.set_axis(pd.MultiIndex.from_tuples(
                [("p", str(c)) for c in mixed.columns]), axis=1),
            "pairwise": eq.pairwise_table(pw, unique=True), "pairwise_all": eq.pairwise_table(pw)}


def test_a_long_latex_table_is_pandas_styler_text_written_fast(agg, monkeypatch):
    """Before: every cell of a long table went through pandas' Styler (jinja2), ~20 s for
    the 19,900 pairs of a 200-model report. Now the Styler writes only the frame (caption,
    header, footers) for the first row and evaluq writes the rows; the text is byte for byte
    what the Styler writes for the whole table (MultiIndex runs as \\multirow, hidden index,
    escapes, NaN, inf, bools, captions and labels)."""
    from pandas.io.formats.style import Styler

    rendered = []
    original = Styler.to_latex

    def counting(self, *args, **kwargs):
        rendered.append(len(self.data))
        return original(self, *args, **kwargs)

    for name, table in _long_tables(agg).items():
        assert len(table) > eq.tables.LONG_LATEX
        for kw in ({}, {"index": False}, {"caption": "Cap & 5%", "label": "tab:x"},
                   {"caption": ""}, {"digits": 2}):
            expected = _styler_latex(table, **kw)
            monkeypatch.setattr(Styler, "to_latex", counting)
            rendered.clear()
            assert eq.tables.to_latex(table, **kw) == expected, (name, kw)
            monkeypatch.setattr(Styler, "to_latex", original)
            assert rendered == [1], (name, kw)        # the Styler saw one row
    assert "\\multirow[c]{" in eq.tables.to_latex(_long_tables(agg)["sorted"])


def test_a_missing_integer_is_blank_not_na_text():
    """Before: a missing rank of an Int64 column (whole_ranks) was written '<NA>'."""
    table = pd.DataFrame({"rank": pd.array([1, None], dtype="Int64")},
                         index=pd.Index(["a", "b"], name="model"))
    assert "| b |  |" in eq.tables.to_markdown(table)
    assert "b &  \\\\" in eq.tables.to_latex(table)
    assert "NA" not in eq.tables.to_latex(table) + eq.tables.to_markdown(table)

"""The loaders' checks of scale and options (issue 10, findings 3, 4 and 8)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq
from evaluq.cube import bounds
from evaluq.errors import CubeError, EvaluqWarning, ScaleWarning


def long_table(bad=None):
    r = np.random.default_rng(0)
    df = pd.DataFrame([dict(model=m, language=lang, seed=s, score=r.normal(50, 2))
                       for m in "abcd" for lang in ["en", "de", "fr"] for s in range(3)])
    if bad is not None:
        df.loc[5, "score"] = bad
    return df


def test_far_score_warns_naming_the_row():
    with pytest.warns(ScaleWarning, match=r"row 5: model='a', language='de', seed=2, "
                                          r"score 4800"):
        eq.from_long(long_table(4800.0), seed="seed")
    assert issubclass(ScaleWarning, EvaluqWarning)


def test_ordinary_scores_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eq.from_long(long_table(), seed="seed")
        eq.from_long(long_table(4800.0), seed="seed", outlier_threshold=None)
        # three models, two nearly tied: a per-language MAD would call the third an outlier
        eq.from_arrays(np.array([[[30.0]], [[30.01]], [[35.0]]]))


def test_a_whole_model_in_fractions_among_percentages_warns():
    """The robust SD of all scores holds the spread between languages (35 to 90 here), so ten
    of them pass a model 60 points low; the ratio to the other models does not."""
    r = np.random.default_rng(1)
    level = {"en": 85.0, "de": 76.0, "sw": 50.0, "yo": 37.0, "zh": 72.0}
    rows = [dict(model=m, language=lang, seed=s,
                 accuracy=(mu + 2 * k + r.normal(0, 1)) / (100 if m == "C" else 1))
            for k, m in enumerate("ABCDEF") for lang, mu in level.items() for s in range(3)]
    with pytest.warns(ScaleWarning, match=r"model C looks like another scale: .* 0\.00\d+ times"):
        eq.from_long(pd.DataFrame(rows), seed="seed", score="accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eq.from_long(pd.DataFrame(rows), seed="seed", score="accuracy", outlier_threshold=None)
        healthy = [row for row in rows if row["model"] != "C"]
        eq.from_long(pd.DataFrame(healthy), seed="seed", score="accuracy")
        eq.from_arrays(np.array([[[1.0]], [[2.0]]]))     # 2 against 1: not another scale
        eq.from_arrays(np.array([[[0.5]], [[1.9]]]))     # 3.8 times: not either


def test_declared_bounds_are_checked():
    with pytest.raises(CubeError, match=r"outside the declared `bounds` \(0, 100\): row 5"):
        eq.from_long(long_table(4800.0), seed="seed", bounds=(0, 100),
                     outlier_threshold=None)
    cube = eq.from_long(long_table(), seed="seed", bounds=(0, 100))
    assert bounds(cube) == (0.0, 100.0)
    with pytest.raises(CubeError, match="outside the declared `bounds`"):
        eq.from_arrays(np.full((1, 1, 2), 1.5), bounds=(0, 1))
    with pytest.raises(CubeError, match="'boot_score' are outside"):
        eq.from_arrays(np.full((1, 1, 2), 0.5), np.full((1, 1, 2, 3), -0.1), bounds=(0, 1))


def test_summary_bounds_and_warning():
    df = pd.DataFrame({"model": list("abcdef"), "language": ["x"] * 6,
                       "mean": [30.0, 31, 29, 30.5, 29.5, 4400], "sd_seed": [0.5] * 6,
                       "sd_boot": [1.0] * 6})
    with pytest.warns(ScaleWarning, match="row 5: model='f', language='x', seed='mean'"), \
            pytest.warns(ScaleWarning, match="model f looks like another scale"):
        eq.from_summary(df, n_seeds=3)
    with pytest.raises(CubeError, match="outside the declared"):
        eq.from_summary(df, n_seeds=3, bounds=(0, 100))


def test_bounds_round_trip_netcdf(tmp_path):
    cube = eq.from_arrays(np.full((1, 2, 2), 0.5), bounds=(0, 1))
    cube.to_netcdf(tmp_path / "c.nc")
    back = eq.open_cube(tmp_path / "c.nc")
    assert bounds(back) == (0.0, 1.0)
    xr.testing.assert_identical(back, cube)


def test_from_summary_requires_n_seeds():
    """Finding 3: n_seeds=1 was used silently."""
    df = pd.DataFrame({"model": ["a"], "language": ["x"], "mean": [1.0], "sd_seed": [0.1],
                       "sd_boot": [0.2]})
    with pytest.raises(TypeError, match="`n_seeds` is required"):
        eq.from_summary(df)
    assert eq.from_summary(df, n_seeds=1).n_seeds.item() == 1


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"higher_is_better": "no"}, TypeError, "`higher_is_better` must be True or False"),
    ({"higher_is_better": 1}, TypeError, "`higher_is_better`"),
    ({"metric": 3}, TypeError, "`metric` must be a string"),
    ({"bounds": (1, 0)}, ValueError, "`bounds` must satisfy lower < upper"),
    ({"bounds": (0, float("nan"))}, ValueError, "`bounds`"),
    ({"bounds": 5}, TypeError, "`bounds` must be a pair"),
    ({"bounds": ("a", "b")}, TypeError, "`bounds` must be a pair"),
    ({"outlier_threshold": -1.0}, ValueError, "`outlier_threshold`"),
    ({"outlier_threshold": float("nan")}, ValueError, "`outlier_threshold`"),
    ({"outlier_threshold": True}, TypeError, "`outlier_threshold`"),
])
def test_nonsense_options_raise(kwargs, error, match):
    with pytest.raises(error, match=match):
        eq.from_arrays(np.ones((1, 1, 2)), **kwargs)
    with pytest.raises(error, match=match):
        eq.from_long(long_table(), seed="seed", **kwargs)


@pytest.mark.parametrize("score", [np.ones((1, 1, 2), dtype=bool),
                                   np.array([[["a", "b"]]], dtype=object),
                                   np.ones((1, 1, 2), dtype=complex)])
def test_non_numeric_score_arrays_raise(score):
    with pytest.raises(TypeError, match="`score` must be a real numeric array"):
        eq.from_arrays(score)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".tsv"])
def test_empty_files_have_clear_errors(tmp_path, suffix):
    """Finding 7: pandas' EmptyDataError, and 'its columns are: ' with a blank list."""
    path = tmp_path / f"empty{suffix}"
    path.write_text("")
    with pytest.raises(CubeError, match=r"is empty \(no header and no rows\)"):
        eq.from_long(path)
    with pytest.raises(CubeError, match="is empty"):
        eq.read_table(path)


def test_header_only_csv_says_no_rows(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("model,language,score\n")
    with pytest.raises(CubeError, match="the table is empty"):
        eq.from_long(path)


def test_two_models_few_languages_do_not_warn():
    """Per-language MADs of two models made ordinary spreads look like outliers."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(50):
            eq.simulate_cube(n_models=2, n_languages=3, n_seeds=1, n_boot=None, rng=seed)


def test_a_column_named_in_another_case_is_suggested():
    """A table exported with 'Model' / 'Accuracy' headers: the error names the column the
    argument most likely meant (case, spaces around it, or a near spelling), and nothing
    when no column is close."""
    df = pd.DataFrame({"Model": ["a", "b"], "language": ["en", "en"], "Accuracy ": [0.5, 0.6]})
    with pytest.raises(CubeError, match=r"given as `model`.*did you mean 'Model'\?"):
        eq.from_long(df, model="model", language="language", score="Accuracy ")
    with pytest.raises(CubeError, match=r"given as `score`.*did you mean 'Accuracy '\?"):
        eq.from_long(df, model="Model", language="language", score="accuracy")
    with pytest.raises(CubeError, match=r"given as `language`.*did you mean 'language'\?"):
        eq.from_long(df, model="Model", language="langauge", score="Accuracy ")
    with pytest.raises(CubeError, match=r"given as `score`\).*: Accuracy , Model, language$"):
        eq.from_long(df, model="Model", language="language", score="f1")


def test_scores_held_as_objects_are_read_as_numbers():
    """A score column of numbers with dtype object (after concatenating frames of mixed
    dtypes, or of Decimals from a database) builds the same cube as the floats; before, it
    was refused as 'must be numeric; it has dtype object'. Text is still refused."""
    import decimal

    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "language": ["en", "de"] * 2,
                       "score": [0.5, 0.25, 0.75, 1.0]})
    want = eq.from_long(df, model="model", language="language", score="score")
    for held in (df["score"].astype(object),
                 df["score"].map(lambda v: decimal.Decimal(repr(v)))):
        got = eq.from_long(df.assign(score=held), model="model", language="language",
                           score="score")
        xr.testing.assert_identical(got.drop_attrs(), want.drop_attrs())
    with pytest.raises(CubeError, match="must be numeric"):
        eq.from_long(df.assign(score=["0.5", "x", 1.0, 2.0]), model="model",
                     language="language", score="score")


def test_a_papers_mean_and_spread_in_one_cell_is_refused_with_what_to_do():
    df = pd.DataFrame({"model": ["a", "b"], "language": ["en", "en"],
                       "acc": ["85.3 ± 0.4", "84.1 +/- 0.6"]})
    with pytest.raises(CubeError, match=r"'85\.3 ± 0\.4' in row 0\)\. A mean and its spread in "
                                        r"one cell.*--mean, --sd-seed and --n-seeds"):
        eq.from_long(df, score="acc")


def test_a_table_path_or_cube_given_for_a_later_step_says_the_steps_before():
    """A first session's usual slips: the DataFrame (or the CSV path) passed where a cube is
    expected, the cube where the aggregated draws are: each message names the call to make
    first."""
    df = pd.DataFrame({"model": ["a", "b"] * 2, "language": ["en", "en", "de", "de"],
                       "score": [0.5, 0.6, 0.4, 0.7]})
    cube = eq.from_long(df, model="model", language="language", score="score")
    table_hint = r"build the cube from the table first: eq\.from_long\(table, model=\.\.\."
    with pytest.raises(TypeError, match=table_hint):
        eq.report(df, None, progress=False)
    with pytest.raises(TypeError, match=r"got str: read the file into a cube first"):
        eq.report("runs.csv", None, progress=False)
    with pytest.raises(CubeError, match=table_hint):
        eq.resample(df)
    with pytest.raises(TypeError, match=table_hint + r".*, then eq\.resample\(cube\)"):
        eq.aggregate(df)
    with pytest.raises(CubeError, match=r"\(a cube\): eq\.aggregate\(eq\.resample\(cube\)\)"):
        eq.leaderboard(cube)


def _runs() -> pd.DataFrame:
    cube = eq.simulate_cube(n_models=3, n_languages=4, n_seeds=2, rng=2)
    return cube.score.to_dataframe().reset_index()


def test_tables_in_the_shapes_a_notebook_has_build_the_same_cube():
    """The keys in a groupby's index, ``cube.score.to_dataframe()``, a dict of columns, a
    list of row dicts and a pyarrow Table build the cube the plain DataFrame builds (before,
    each was refused: "column 'model' is not in the table; its columns are: score" or
    "must be a pandas DataFrame ...; got list")."""
    import pyarrow as pa

    df = _runs()
    keys = {"model": "model", "language": "language", "seed": "seed", "score": "score"}
    plain = eq.from_long(df, **keys)
    for shaped in (df.set_index(["model", "language", "seed"]),
                   df.groupby(["model", "language", "seed"]).mean(),
                   plain.score.to_dataframe(),
                   df.set_index("model"),                        # one level; others columns
                   df.to_dict("list"), df.to_dict("records"),
                   pa.Table.from_pandas(df, preserve_index=False)):
        xr.testing.assert_identical(eq.from_long(shaped, **keys).drop_attrs(),
                                    plain.drop_attrs())
    # a level named as a column stays in the index: the column is read
    both = df.set_index(df["model"].str.upper().rename("model"))
    assert list(eq.from_long(both, **keys).model.values) == sorted(df["model"].unique())


@pytest.mark.parametrize(("data", "message"), [
    (pd.Series([0.5, 0.6], name="score"),
     r"got pandas\.Series; a Series is one column: pass the DataFrame it came from"),
    (pd.DataFrame({"model": ["a", "b"], "seed": [0, 0], "acc": [0.5, 0.6]})
     .groupby(["model", "seed"])["acc"].mean(),
     r"got pandas\.Series; a Series indexed by its keys \(a groupby result\) becomes a table "
     r"with `\.reset_index\(\)`"),
    (xr.DataArray(np.zeros((2, 2, 2))), r"must be a table: .*got xarray\.DataArray"),
    ([0.5, 0.6], r"got builtins\.list"),
    ({"model": "a", "score": 0.5}, r"the builtins\.dict is not a table of columns"),
])
def test_what_is_no_table_is_refused_naming_its_type(data, message):
    with pytest.raises(TypeError, match=message):
        eq.from_long(data)


def test_a_wide_table_and_a_list_of_scores_say_what_to_do():
    """A paper's table (one column per language) is refused with the melt that makes it
    long, which then builds the cube; several score columns at once get a TypeError naming
    the argument (it was "unhashable type: 'list'")."""
    df = _runs()
    wide = df.pivot(index=["model", "seed"], columns="language", values="score")
    wide.columns.name = None
    wide = wide.reset_index()
    melt = r"table\.melt\(id_vars=\['model', 'seed'\], var_name='lang', value_name='acc'\)"
    with pytest.raises(CubeError, match=r"given as `language`.*wide table.*" + melt):
        eq.from_long(wide, model="model", language="lang", seed="seed", score="acc")
    long = wide.melt(id_vars=["model", "seed"], var_name="lang", value_name="acc")
    cube = eq.from_long(long, model="model", language="lang", seed="seed", score="acc")
    np.testing.assert_array_equal(cube.score.values,
                                  eq.from_long(df, seed="seed").score.values)
    with pytest.raises(TypeError, match=r"`score` must be one column name; got \['score'\]: "
                                        r"one cube per metric"):
        eq.from_long(df, seed="seed", score=["score"])


def test_a_key_column_with_missing_values_is_said_before_duplicates():
    """An empty language column made every row a duplicate key; the error now names the
    empty key column, as for the model column."""
    df = _runs().assign(language=np.nan)
    with pytest.raises(CubeError, match=r"key column 'language' has missing values"):
        eq.from_long(df, seed="seed")


def test_the_usual_slips_get_the_line_that_mends_them():
    """A scalar selection drops a dim, a hand-built Dataset has no metric, a score column of
    numbers as text: each error gives the call that mends it."""
    cube = eq.simulate_cube(n_models=3, n_languages=4, rng=0)
    with pytest.raises(CubeError, match=r"select with a list to keep it, e\.g\. "
                                        r"`cube\.sel\(model=\[\.\.\.\]\)`"):
        eq.resample(cube.sel(model="m0"), rng=0)
    with pytest.raises(CubeError, match=r"`cube\.isel\(seed=\[0\]\)`"):
        eq.resample(cube.isel(seed=0), rng=0)
    bare = cube[["score"]].drop_attrs()
    with pytest.raises(CubeError, match=r"no 'metric' attribute: set it "
                                        r"\(`cube\.attrs\['metric'\] = 'accuracy'`\)"):
        eq.resample(bare, rng=0)
    text = long_table().assign(score=lambda d: d.score.round(2).astype(str))
    with pytest.raises(CubeError, match=r"for example '\d+\.\d+' in row 0\): its values are "
                                        r"numbers written as text.*pd\.to_numeric"):
        eq.from_long(text, seed="seed")
    summary = pd.DataFrame({"model": ["a", "b"], "language": ["x", "x"], "mean": [0.5, 0.6],
                            "sd_seed": [0.01, 0.01], "sd_boot": [0.02, 0.02]})
    assert eq.from_summary(summary, n_seeds=3).attrs["metric"] == "score"
    assert eq.from_summary(summary.rename(columns={"mean": "bleu"}), mean="bleu",
                           n_seeds=3).attrs["metric"] == "bleu"

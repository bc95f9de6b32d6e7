"""The evaluation cube: constructors, validation, round trip, order invariance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluq as eq
from evaluq import CubeError


def long_table() -> pd.DataFrame:
    return pd.DataFrame({
        "system": ["a", "a", "a", "a", "b", "b", "b", "b"],
        "lang": ["en", "en", "de", "de"] * 2,
        "seed": [1, 2, 1, 2] * 2,
        "bleu": [30.0, 31.0, 25.0, 24.0, 28.0, 28.5, 26.0, 27.0],
    })


def test_from_long_pivots_and_sorts():
    cube = eq.from_long(long_table(), model="system", language="lang", seed="seed",
                        score="bleu")
    assert list(cube.model.values) == ["a", "b"]
    assert list(cube.language.values) == ["de", "en"]          # sorted, not input order
    assert list(cube.seed.values) == [1, 2]
    assert cube.score.sel(model="a", language="en", seed=2).item() == 31.0
    assert cube.attrs["metric"] == "bleu"
    assert cube.attrs["higher_is_better"] == 1
    assert cube.attrs["loader"] == "from_long"
    assert cube.score.dims == ("model", "language", "seed")


def test_from_long_without_seed_has_one_seed():
    df = long_table().query("seed == 1").drop(columns="seed")
    cube = eq.from_long(df, model="system", language="lang", score="bleu",
                        higher_is_better=False, metric="ter")
    assert cube.sizes["seed"] == 1
    assert cube.attrs["metric"] == "ter"
    assert not eq.higher_is_better(cube)


def test_missing_cells_stay_nan():
    df = long_table().iloc[1:]                                  # drop (a, en, seed 1)
    cube = eq.from_long(df, model="system", language="lang", seed="seed", score="bleu")
    assert np.isnan(cube.score.sel(model="a", language="en", seed=1).item())
    assert int(cube.score.isnull().sum()) == 1


def test_explicit_nan_score_is_kept_as_nan():
    df = long_table()
    df.loc[0, "bleu"] = np.nan
    cube = eq.from_long(df, model="system", language="lang", seed="seed", score="bleu")
    assert int(cube.score.isnull().sum()) == 1


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(range(8))))
def test_row_order_does_not_matter(order):
    df = long_table()
    base = eq.from_long(df, model="system", language="lang", seed="seed", score="bleu")
    shuffled = eq.from_long(df.iloc[list(order)], model="system", language="lang",
                            seed="seed", score="bleu")
    xr.testing.assert_identical(base, shuffled)


def test_from_long_bootstrap_rows():
    rows = []
    for m in ("a", "b"):
        rows.append({"m": m, "l": "en", "b": np.nan, "acc": 0.8 if m == "a" else 0.7})
        for b in range(3):
            rows.append({"m": m, "l": "en", "b": b, "acc": 0.8 + 0.01 * b})
    cube = eq.from_long(pd.DataFrame(rows), model="m", language="l", bootstrap="b", score="acc")
    assert cube.boot_score.dims == ("model", "language", "seed", "bootstrap")
    assert cube.sizes["bootstrap"] == 3
    assert cube.score.sel(model="b").item() == 0.7
    np.testing.assert_allclose(cube.boot_score.sel(model="a").values.ravel(), [0.8, 0.81, 0.82])


def test_from_long_and_from_arrays_record_whether_the_replicates_are_shared(tmp_path):
    """``shared_bootstrap=True / False`` is stored as the attribute 1 / 0 (also in a zarr
    store written by ``out=``); None (the default) records nothing: the cube does not say."""
    rows = [{"m": m, "l": "en", "b": b, "acc": 0.8 + 0.01 * (b if b == b else 5)}
            for m in ("a", "b") for b in (np.nan, 0, 1, 2)]
    df = pd.DataFrame(rows)
    plain = eq.from_long(df, model="m", language="l", bootstrap="b", score="acc")
    assert "shared_bootstrap" not in plain.attrs
    for flag in (True, False):
        cube = eq.from_long(df, model="m", language="l", bootstrap="b", score="acc",
                            shared_bootstrap=flag)
        assert cube.attrs["shared_bootstrap"] == int(flag)
        arrays = eq.from_arrays(cube.score.values, cube.boot_score.values, shared_bootstrap=flag)
        assert arrays.attrs["shared_bootstrap"] == int(flag)
    df.to_parquet(tmp_path / "t.parquet")
    for source, name in ((df, "frame.zarr"), (str(tmp_path / "t.parquet"), "pq.zarr")):
        stored = eq.from_long(source, model="m", language="l", bootstrap="b", score="acc",
                              shared_bootstrap=True, out=tmp_path / name)
        assert int(stored.attrs["shared_bootstrap"]) == 1
        assert int(eq.open_cube(tmp_path / name).attrs["shared_bootstrap"]) == 1
    with pytest.raises(ValueError, match="`shared_bootstrap` is given but there are no "
                                         "bootstrap replicates"):
        eq.from_long(df[df.b.isna()], model="m", language="l", score="acc",
                     shared_bootstrap=True)
    with pytest.raises(ValueError, match="no bootstrap replicates"):
        eq.from_arrays(np.zeros((2, 1, 1)), shared_bootstrap=False)
    with pytest.raises(TypeError, match="`shared_bootstrap` must be True, False or None"):
        eq.from_arrays(cube.score.values, cube.boot_score.values,
                       shared_bootstrap=1)  # type: ignore[arg-type]


def test_from_long_bootstrap_needs_full_test_rows():
    df = pd.DataFrame({"m": ["a", "a"], "l": ["en", "en"], "b": [0, 1], "acc": [0.1, 0.2]})
    with pytest.raises(CubeError, match="has no empty rows"):
        eq.from_long(df, model="m", language="l", bootstrap="b", score="acc")


def test_from_long_errors():
    df = long_table()
    with pytest.raises(CubeError, match="column 'score' \\(given as `score`\\) is not in"):
        eq.from_long(df, model="system", language="lang", seed="seed")
    dup = pd.concat([df, df.iloc[[0]]])
    with pytest.raises(CubeError, match="appear more than once.*'system': 'a'"):
        eq.from_long(dup, model="system", language="lang", seed="seed", score="bleu")
    with pytest.raises(CubeError, match="column 'seed' numbers the repeats: give it as `seed=`"):
        eq.from_long(df, model="system", language="lang", score="bleu")
    boots = df.rename(columns={"seed": "boot_id"})
    with pytest.raises(CubeError, match="'boot_id' numbers the repeats: give it as `bootstrap=`"):
        eq.from_long(boots, model="system", language="lang", score="bleu")
    items = df.rename(columns={"seed": "question_id"})                  # one row per item
    with pytest.raises(CubeError, match="column 'question_id' tells the repeated rows apart, "
                       "one per item: .* give it as `item=` to evaluq.from_items"):
        eq.from_long(items, model="system", language="lang", score="bleu")
    for other in (df.rename(columns={"seed": "k"}),                      # a name that says nothing
                  df.rename(columns={"seed": "valid"}),                 # 'id' inside a word
                  df.assign(seed=df.bleu)):                             # scores, not labels
        with pytest.raises(CubeError, match="name the column that numbers them as `seed=`"):
            eq.from_long(other, model="system", language="lang", score="bleu")
    bad = df.assign(bleu=df.bleu.astype(object))
    bad.loc[3, "bleu"] = "n/a"
    with pytest.raises(CubeError, match="column 'bleu' .* must be numeric.*'n/a'"):
        eq.from_long(bad, model="system", language="lang", seed="seed", score="bleu")
    nokey = df.assign(lang=df.lang.where(df.index != 2, None))
    with pytest.raises(CubeError, match="key column 'lang' has missing values"):
        eq.from_long(nokey, model="system", language="lang", seed="seed", score="bleu")
    mixed = df.assign(seed=[1, "x", 1, "x", 1, "x", 1, "x"])
    with pytest.raises(CubeError, match="key column 'seed' mixes value types"):
        eq.from_long(mixed, model="system", language="lang", seed="seed", score="bleu")
    with pytest.raises(CubeError, match="the table is empty"):
        eq.from_long(df.iloc[:0], model="system", language="lang", seed="seed", score="bleu")
    inf = df.assign(bleu=df.bleu.replace(30.0, np.inf))
    with pytest.raises(CubeError, match="infinite value"):
        eq.from_long(inf, model="system", language="lang", seed="seed", score="bleu")
    with pytest.raises(TypeError, match="`data` must be a table: a pandas DataFrame"):
        eq.from_long(42, model="system", language="lang", score="bleu")  # type: ignore[arg-type]


def summary_table() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["b", "a", "a", "b"], "language": ["en", "en", "de", "de"],
        "mean": [28.0, 30.0, 25.0, 26.0], "sd_seed": [0.5, 0.4, 0.3, 0.2],
        "sd_boot": [1.0, 1.1, 1.2, 1.3], "n": [3, 5, 5, 3],
    })


def test_from_summary():
    cube = eq.from_summary(summary_table(), n_seeds="n", metric="bleu")
    assert eq.is_summary(cube)
    assert list(cube.seed.values) == ["mean"]
    assert cube.score.sel(model="a", language="de").item() == 25.0
    assert cube.sd_boot.sel(model="b", language="de").item() == 1.3
    assert cube.n_seeds.sel(model="b", language="en").item() == 3
    constant = eq.from_summary(summary_table(), n_seeds=4)
    assert (constant.n_seeds == 4).all()


def test_from_summary_errors():
    df = summary_table()
    with pytest.raises(CubeError, match="negative standard deviation -0.1"):
        eq.from_summary(df.assign(sd_seed=[0.5, -0.1, 0.3, 0.2]), n_seeds=3)
    with pytest.raises(CubeError, match="`n_seeds` must be a whole number >= 1 .*; got 0"):
        eq.from_summary(df, n_seeds=0)
    with pytest.raises(CubeError, match=r"`n_seeds` must be a whole number >= 1 .*; column "
                                        r"'n' \(given as `n_seeds`\) has 2.5 in row 1"):
        eq.from_summary(df.assign(n=[3, 2.5, 3, 3]), n_seeds="n")
    with pytest.raises(CubeError, match="column 'sd' \\(given as `sd_boot`\\)"):
        eq.from_summary(df, sd_boot="sd", n_seeds=3)
    with pytest.raises(TypeError, match="`n_seeds` must be an integer or a column name"):
        eq.from_summary(df, n_seeds=2.0)  # type: ignore[arg-type]


def test_from_arrays_errors():
    with pytest.raises(CubeError, match="`score` must have 3 dims"):
        eq.from_arrays(np.zeros((2, 3)))
    with pytest.raises(CubeError, match="`boot_score` must have shape"):
        eq.from_arrays(np.zeros((2, 3, 4)), np.zeros((2, 3, 5, 10)))
    with pytest.raises(CubeError, match="labels .*do not match the array shape"):
        eq.from_arrays(np.zeros((2, 3, 4)), models=["a"])
    with pytest.raises(CubeError, match="coordinate 'model' has duplicated labels \\['a'\\]"):
        eq.from_arrays(np.zeros((2, 3, 4)), models=["a", "a"])


def test_validate_errors():
    cube = eq.from_arrays(np.ones((2, 3, 4)), np.ones((2, 3, 4, 5)))
    with pytest.raises(CubeError, match="must be an xarray.Dataset; got DataArray"):
        eq.validate(cube.score)
    with pytest.raises(CubeError, match="has no 'score' variable"):
        eq.validate(cube.drop_vars("score"))
    with pytest.raises(CubeError, match="unknown dim\\(s\\) \\['task'\\]"):
        eq.validate(cube.rename({"language": "task"}))
    with pytest.raises(CubeError, match="variable 'score' has dims \\('model', 'language'\\)"):
        eq.validate(cube.isel(seed=0, drop=True))
    with pytest.raises(CubeError, match="variable 'score' must be numeric"):
        eq.validate(cube.assign(score=cube.score.astype(str)))
    with pytest.raises(CubeError, match="variable 'score' has infinite values"):
        eq.validate(cube.assign(score=cube.score * np.inf))
    with pytest.raises(CubeError, match="has no values \\(all NaN\\)"):
        eq.validate(cube.assign(score=cube.score * np.nan))
    with pytest.raises(CubeError, match="is empty"):
        eq.validate(cube.isel(model=[]))
    with pytest.raises(CubeError, match="needs at least 2 bootstrap replicates; got 1"):
        eq.validate(cube.isel(bootstrap=[0]))
    with pytest.raises(CubeError, match="has no 'metric' attribute"):
        eq.validate(cube.assign_attrs(metric=None).drop_attrs())
    with pytest.raises(CubeError, match="'higher_is_better' must be 1 or 0"):
        eq.validate(cube.assign_attrs(higher_is_better="yes"))
    summary = eq.from_summary(summary_table(), n_seeds="n")
    with pytest.raises(CubeError, match="variable 'sd_seed' has negative"):
        eq.validate(summary.assign(sd_seed=-summary.sd_seed))
    with pytest.raises(CubeError, match="'n_seeds' must hold whole numbers >= 1"):
        eq.validate(summary.assign(n_seeds=summary.n_seeds * 0.5))
    with pytest.raises(CubeError, match="must have one seed holding the seed mean"):
        eq.validate(xr.Dataset({"score": (("model", "language", "seed"), np.ones((2, 2, 2))),
                                "sd_seed": (("model", "language"), np.ones((2, 2)))},
                               attrs=summary.attrs))


def test_validate_transposes_to_canonical_order():
    cube = eq.from_arrays(np.arange(24.0).reshape(2, 3, 4))
    flipped = cube.assign(score=cube.score.transpose("seed", "model", "language"))
    assert eq.validate(flipped).score.dims == ("model", "language", "seed")


labels = st.lists(st.text(alphabet="abcxyz_é", min_size=1, max_size=5), min_size=1,
                  max_size=4, unique=True)


@settings(max_examples=25, deadline=None)
@given(models=labels, languages=labels, n_seeds=st.integers(1, 3), n_boot=st.integers(2, 4),
       seed=st.integers(0, 2**16), with_nan=st.booleans())
def test_netcdf_round_trip(tmp_path_factory, models, languages, n_seeds, n_boot, seed,
                           with_nan):
    rng = np.random.default_rng(seed)
    score = rng.normal(size=(len(models), len(languages), n_seeds))
    if with_nan and score.size > 1:
        score.flat[0] = np.nan
    boot = rng.normal(size=(*score.shape, n_boot))
    cube = eq.from_arrays(score, boot, models=models, languages=languages, metric="m é",
                          higher_is_better=False, outlier_threshold=None)
    path = tmp_path_factory.mktemp("nc") / "cube.nc"
    cube.to_netcdf(path)
    back = eq.open_cube(path)
    xr.testing.assert_identical(back, cube)
    assert not eq.higher_is_better(back)


def test_summary_round_trip(tmp_path):
    cube = eq.from_summary(summary_table(), n_seeds="n")
    cube.to_netcdf(tmp_path / "s.nc")
    xr.testing.assert_identical(eq.open_cube(tmp_path / "s.nc"), cube)


def test_open_cube_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        eq.open_cube(tmp_path / "nope.nc")


def test_from_arrays_reads_a_dataarray_by_its_dim_names_and_labels():
    """A labelled DataArray lost its labels (models 0, 1, 2) and was read by position: a
    transposed one swapped models and languages silently. Its dims are read by name and its
    coordinates become the cube's labels; labels given twice must agree; dims that are not
    the cube's are refused."""
    s = np.random.default_rng(0).normal(50, 5, (3, 4, 2))
    da = xr.DataArray(s, dims=("model", "language", "seed"),
                      coords={"model": ["c", "a", "b"], "language": list("wxyz")})
    cube = eq.from_arrays(da)
    assert cube.model.values.tolist() == ["c", "a", "b"]
    assert cube.language.values.tolist() == list("wxyz")
    flipped = eq.from_arrays(da.transpose("language", "seed", "model"))
    xr.testing.assert_equal(flipped.score, cube.score)
    assert float(cube.score.sel(model="a", language="z", seed=1)) == s[1, 3, 1]
    boots = xr.DataArray(np.repeat(s[..., None], 3, axis=-1),
                         dims=("model", "language", "seed", "bootstrap")).transpose(
        "bootstrap", "seed", "language", "model")
    with_boots = eq.from_arrays(da, boots)
    np.testing.assert_array_equal(with_boots.boot_score.isel(bootstrap=2), s)
    assert eq.from_arrays(da, models=["c", "a", "b"]).model.values.tolist() == ["c", "a", "b"]
    with pytest.raises(CubeError, match="`models` \\['a', 'b', 'c'\\] differ from the `score` "
                                        "DataArray's model coordinate"):
        eq.from_arrays(da, models=["a", "b", "c"])
    with pytest.raises(CubeError, match="dims \\('dim_0', 'dim_1', 'dim_2'\\): its dims must "
                                        "be named \\('model', 'language', 'seed'\\)"):
        eq.from_arrays(xr.DataArray(s))


def _boot_rows(n_boot=4, models="ab"):
    return pd.DataFrame([{"model": m, "language": lang, "boot": b,
                          "score": 0.5 + 0.1 * k + (0.0 if b is None else 0.01 * b)}
                         for k, m in enumerate(models) for lang in ("en", "de")
                         for b in [None, *range(n_boot)]])


def test_replicates_missing_or_numbered_apart_are_refused_at_load():
    """A cell with fewer replicates, replicate ids that differ between models, a NaN replicate
    score or replicates without a full-test-set score went through the loader and failed later
    as "NaN (missing cells)", advising `skipna=True`, which made it worse."""
    rows = _boot_rows()
    assert eq.from_long(rows, bootstrap="boot").sizes["bootstrap"] == 4
    fewer = rows[~((rows.model == "b") & (rows.boot >= 2))]
    with pytest.raises(CubeError, match=r"2 \(model, language, seed\) cell\(s\) lack bootstrap "
                                        r".*model='b', language='de', seed=0 has 2 of 4 "
                                        r"\(missing: 2, 3\)"):
        eq.from_long(fewer, bootstrap="boot")
    apart = rows.assign(boot=np.where(rows.model == "b", rows.boot + 1000, rows.boot))
    with pytest.raises(CubeError, match=r"has 4 of 8 .*The replicate ids of 'a', 'b' share none"):
        eq.from_long(apart, bootstrap="boot")
    with pytest.raises(CubeError, match=r"1 \(model, language, seed\) cell\(s\) lack .*"
                                        r"a row with no score.*\(missing: 1\)"):
        eq.from_long(rows.assign(score=rows.score.mask(rows.index == 2)), bootstrap="boot")
    orphan = rows[~((rows.model == "a") & (rows.language == "en") & rows.boot.isna())]
    with pytest.raises(CubeError, match=r"1 cell\(s\) have bootstrap replicates but no score "
                                        r"on the full test set, for example model='a', "
                                        r"language='en'"):
        eq.from_long(orphan, bootstrap="boot")
    missing_cell = rows[~((rows.model == "a") & (rows.language == "en"))]     # still allowed
    assert np.isnan(eq.from_long(missing_cell, bootstrap="boot").score.sel(
        model="a", language="en")).all()


def test_an_empty_string_marks_the_full_test_set_rows_as_an_empty_cell_does():
    """A bootstrap column built in pandas with '' on the full-test-set rows was refused:
    "has no empty rows", though 2 of its rows are empty. '' (or blanks) reads as empty."""
    rows = [{"model": m, "language": "en", "boot": b, "score": 0.5 + (0.0 if b == "" else
                                                                     0.01 * b)}
            for m in "ab" for b in ["", 0, 1, 2]]
    blank = eq.from_long(pd.DataFrame(rows), bootstrap="boot", score="score")
    empty = eq.from_long(pd.DataFrame(rows).replace({"boot": {"": None}}), bootstrap="boot",
                         score="score")
    xr.testing.assert_equal(blank.boot_score, empty.boot_score)
    np.testing.assert_array_equal(blank.score.values.ravel(), [0.5, 0.5])


def test_an_empty_string_marks_the_full_test_set_rows_in_a_text_column(tmp_path):
    """A bootstrap column of text ('' on the full-test-set rows, '0', '1', ... on the
    replicates) has pandas' string dtype from pandas 3 on, not object: the '' were not read
    as empty ("has no empty rows"), in memory nor from a parquet file (read in memory or
    row group by row group into a zarr store). All three read them as empty now."""
    rows = pd.DataFrame([{"model": m, "language": lang, "boot": b,
                          "score": 0.5 + (0.0 if b == "" else 0.01 * int(b))}
                         for m in "ab" for lang in ("en", "fi") for b in ["", "0", "1", "2"]])
    rows["boot"] = rows["boot"].astype("string")
    path = tmp_path / "t.parquet"
    rows.to_parquet(path, row_group_size=5)
    numbers = rows.assign(boot=pd.to_numeric(rows["boot"].replace("", None)))
    want = eq.from_long(numbers, bootstrap="boot")
    for got in (eq.from_long(rows, bootstrap="boot"),
                eq.from_long(rows.astype({"boot": str}), bootstrap="boot"),
                eq.from_long(path, bootstrap="boot"),
                eq.from_long(path, bootstrap="boot", out=tmp_path / "c.zarr")):
        assert got.bootstrap.values.tolist() == ["0", "1", "2"]    # text ids stay text
        np.testing.assert_array_equal(got.score.values, want.score.values)
        np.testing.assert_array_equal(got.boot_score.values, want.boot_score.values)


def test_a_label_read_as_missing_says_how_to_keep_it(tmp_path):
    """A model called 'None' (an ablation without retrieval) or a task 'NA' is read as a
    missing key by pandas: the refusal said only "has missing values (rows [0])" of a row
    that shows a label. It names the texts read so and the reading that keeps them."""
    path = tmp_path / "runs.csv"
    path.write_text("model,language,score\nNone,x,0.5\nrag,x,0.6\nNone,y,0.4\nrag,y,0.7\n")
    with pytest.raises(CubeError, match=r"key column 'model' has missing values \(rows \[0, 2\]"
                                        r"\): empty cells, or text .*'None'.*keep_default_na="
                                        r"False, na_values=\[''\]"):
        eq.from_long(path)
    cube = eq.from_long(eq.read_table(path, keep_default_na=False, na_values=[""]))
    assert cube.model.values.tolist() == ["None", "rag"]

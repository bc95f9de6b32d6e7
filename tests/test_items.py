"""from_items / item_scores: per-item tables to a cube with paired (cluster) bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq import CubeError
from evaluq.items import MissingItemsWarning


def item_table(rng, models=("b", "a", "c"), languages=("x", "y"), seeds=3,
               n_items=(40, 25), cluster_size=5, p=(0.5, 0.6, 0.7)):
    rows = []
    for mi, m in enumerate(models):
        for li, lang in enumerate(languages):
            for s in range(seeds):
                for i in range(n_items[li]):
                    rows.append((m, lang, s, f"q{i}", f"c{i // cluster_size}",
                                 float(rng.random() < p[mi])))
    return pd.DataFrame(rows, columns=["m", "l", "s", "i", "c", "v"])


KW = {"model": "m", "item": "i", "score": "v", "language": "l", "seed": "s"}


def reference_boot(df, lang, n_boot, rng_seed, n_langs, lang_index, cluster):
    """Replicates by explicit index resampling (a loop), from the same rng streams."""
    root = np.random.default_rng(rng_seed)
    streams = np.random.SeedSequence(root.integers(0, 2**63 - 1, dtype=np.int64)).spawn(n_langs)
    gen = np.random.default_rng(streams[lang_index])
    sub = df[df.l == lang]
    wide = sub.pivot_table(index=["m", "s"], columns="i", values="v")
    items = wide.columns.to_numpy()
    groups = (sub.drop_duplicates("i").set_index("i").loc[items, "c"].to_numpy()
              if cluster else items)
    labels = np.unique(groups)
    draws = gen.integers(0, len(labels), size=(n_boot, len(labels)))
    out = np.empty((len(wide), n_boot))
    for b in range(n_boot):
        cols = np.concatenate([np.flatnonzero(groups == labels[g]) for g in draws[b]])
        out[:, b] = wide.to_numpy()[:, cols].mean(axis=1)
    return wide.index, out


def test_score_is_the_mean_over_items(rng):
    df = item_table(rng)
    cube = eq.from_items(df, **KW, n_boot=20)
    expected = df.groupby(["m", "l", "s"]).v.mean()
    got = cube.score.to_series().reorder_levels(["model", "language", "seed"])
    np.testing.assert_allclose(got.sort_index().to_numpy(), expected.sort_index().to_numpy(),
                               rtol=1e-15)
    assert cube.n_items.sel(language="x") == 40
    assert cube.n_items.sel(language="y") == 25
    assert cube.attrs["loader"] == "from_items"
    assert cube.attrs["rng_seed"] == 0
    assert cube.attrs["metric"] == "v"
    assert cube.model.values.tolist() == ["a", "b", "c"]


@pytest.mark.parametrize("cluster", [False, True])
def test_replicates_match_index_resampling(rng, cluster):
    df = item_table(rng)
    cube = eq.from_items(df, **KW, cluster="c" if cluster else None, n_boot=30, rng=7)
    for li, lang in enumerate(["x", "y"]):
        index, ref = reference_boot(df, lang, 30, 7, 2, li, cluster)
        for (m, s), row in zip(index, ref, strict=True):
            np.testing.assert_allclose(
                cube.boot_score.sel(model=m, language=lang, seed=s).values, row, rtol=1e-13)


def test_unequal_clusters_are_resampled_whole(rng):
    df = item_table(rng, languages=("x",), n_items=(23,), cluster_size=4)
    cube = eq.from_items(df, **KW, cluster="c", n_boot=25, rng=2)
    index, ref = reference_boot(df, "x", 25, 2, 1, 0, True)
    for (m, s), row in zip(index, ref, strict=True):
        np.testing.assert_allclose(cube.boot_score.sel(model=m, language="x", seed=s), row,
                                   rtol=1e-13)
    assert int(cube.n_clusters.sel(language="x")) == 6


def test_replicates_are_paired_across_models(rng):
    df = item_table(rng, languages=("x",), n_items=(60,))
    twin = df[df.m == "a"].assign(m="twin")
    cube = eq.from_items(pd.concat([df, twin]), **KW, n_boot=50)
    np.testing.assert_array_equal(cube.boot_score.sel(model="a").values,
                                  cube.boot_score.sel(model="twin").values)


def test_row_order_and_rng_do_not_change_the_result(rng):
    df = item_table(rng)
    a = eq.from_items(df, **KW, cluster="c", n_boot=40, rng=3)
    b = eq.from_items(df.sample(frac=1.0, random_state=1), **KW, cluster="c", n_boot=40,
                      rng=3)
    assert a.identical(b)
    c = eq.from_items(df, **KW, cluster="c", n_boot=40, rng=4)
    assert not np.array_equal(a.boot_score.values, c.boot_score.values)


def test_defaults_without_language_and_seed(rng):
    df = item_table(rng, languages=("x",), seeds=1, n_items=(30,))
    cube = eq.from_items(df, model="m", item="i", score="v", n_boot=10)
    assert cube.language.values.tolist() == ["all"]
    assert cube.seed.values.tolist() == [0]
    eq.validate(cube)


def test_boot_sd_matches_the_clt(rng):
    df = item_table(rng, languages=("x",), seeds=1, n_items=(400,))
    cube = eq.from_items(df, **KW, n_boot=4000, rng=1)
    sd = cube.boot_score.std("bootstrap").sel(language="x", seed=0)
    clt = df.groupby("m").v.std(ddof=0) / np.sqrt(400)
    np.testing.assert_allclose(sd.values, clt.sort_index().values, rtol=0.05)


def test_absent_cell_is_nan(rng):
    df = item_table(rng)
    df = df[~((df.m == "c") & (df.s == 2))]
    cube = eq.from_items(df, **KW, n_boot=10)
    assert cube.score.sel(model="c", seed=2).isnull().all()
    assert cube.boot_score.sel(model="c", seed=2).isnull().all()
    assert cube.score.sel(model="c", seed=1).notnull().all()


def test_reads_files(rng, tmp_path):
    df = item_table(rng)
    ref = eq.from_items(df, **KW, n_boot=10)
    for name in ("t.csv", "t.parquet", "t.jsonl"):
        path = tmp_path / name
        if name.endswith("csv"):
            df.to_csv(path, index=False)
        elif name.endswith("parquet"):
            df.to_parquet(path)
        else:
            df.to_json(path, orient="records", lines=True)
        cube = eq.from_items(path, **KW, n_boot=10)
        np.testing.assert_array_equal(cube.boot_score.values, ref.boot_score.values)
        assert cube.attrs["source"] == str(path)


def test_item_scores_layout(rng):
    df = item_table(rng)
    da = eq.item_scores(df, **KW, cluster="c")
    assert da.dims == ("model", "seed", "item")
    assert da.sizes["item"] == 65
    assert (da.language.values == "x").sum() == 40
    row = df[(df.m == "b") & (df.l == "y") & (df.s == 1) & (df.i == "q7")].v.item()
    pos = np.flatnonzero((da.language.values == "y") & (da.item_id.values == "q7"))[0]
    assert float(da.sel(model="b", seed=1).values[pos]) == row
    assert da.cluster.values[pos] == "c1"


# --- bad input -----------------------------------------------------------------------------------

def test_missing_items_raise_naming_model_and_items(rng):
    df = item_table(rng)
    bad = df[~((df.m == "b") & (df.l == "x") & (df.i.isin(["q3", "q5"])))]
    with pytest.raises(CubeError, match=r"language 'x': model 'b' seed 0 lacks 2 item\(s\), "
                                        r"e.g. \['q3', 'q5'\]"):
        eq.from_items(bad, **KW)


def test_missing_items_dropped_with_a_warning(rng):
    df = item_table(rng)
    bad = df[~((df.m == "b") & (df.l == "x") & (df.i == "q3") & (df.s == 1))]
    with pytest.warns(MissingItemsWarning, match=r"dropped these 1 item\(s\) of language 'x'"):
        cube = eq.from_items(bad, **KW, n_boot=10, missing="drop")
    assert int(cube.n_items.sel(language="x")) == 39
    expected = df[(df.l == "x") & (df.i != "q3")].groupby(["m", "s"]).v.mean()
    np.testing.assert_allclose(cube.score.sel(language="x").values.ravel(), expected.values)


def test_bad_missing_policy(rng):
    with pytest.raises(ValueError, match="`missing` must be one of 'raise', 'drop'; got 'skip'"):
        eq.from_items(item_table(rng), **KW, missing="skip")


def test_duplicated_rows_raise(rng):
    df = item_table(rng)
    with pytest.raises(CubeError, match=r"1 \(model, language, seed, item\) key\(s\) appear in "
                                        r"more than one row \(2 rows\), e.g. \[\{'m': 'b'"):
        eq.from_items(pd.concat([df, df.iloc[[0]]]), **KW)


def test_nan_score_raises(rng):
    df = item_table(rng)
    df.loc[5, "v"] = np.nan
    with pytest.raises(CubeError, match=r"column 'v' \(given as `score`\) has 1 NaN or "
                                        r"infinite value\(s\), at rows \[5\]"):
        eq.from_items(df, **KW)


def test_non_numeric_score_raises(rng):
    df = item_table(rng).assign(v="C")
    with pytest.raises(CubeError, match=r"column 'v' \(given as `score`\) must be numeric"):
        eq.from_items(df, **KW)


def test_boolean_scores_are_0_1(rng):
    df = item_table(rng)
    cube = eq.from_items(df.assign(v=df.v > 0.5), **KW, n_boot=5)
    np.testing.assert_array_equal(cube.score, eq.from_items(df, **KW, n_boot=5).score)


def test_missing_column_and_empty_table(rng):
    df = item_table(rng)
    with pytest.raises(CubeError, match=r"column 'task' \(given as `language`\) is not in"):
        eq.from_items(df, **{**KW, "language": "task"})
    with pytest.raises(CubeError, match="`table` is empty"):
        eq.from_items(df.iloc[:0], **KW)
    with pytest.raises(TypeError, match="`cluster` must be a column name"):
        eq.from_items(df, **KW, cluster=3)
    with pytest.raises(TypeError, match="`table` must be a table: a pandas DataFrame"):
        eq.from_items(df.to_numpy(), **KW)


def test_item_in_two_clusters_raises(rng):
    df = item_table(rng)
    df.loc[(df.m == "a") & (df.i == "q2"), "c"] = "other"
    with pytest.raises(CubeError, match=r"item 'q2' is in two clusters of column 'c'"):
        eq.from_items(df, **KW, cluster="c")


def test_missing_key_and_mixed_labels(rng):
    df = item_table(rng)
    df.loc[3, "m"] = None
    with pytest.raises(CubeError, match=r"column 'm' has 1 missing key\(s\), e.g. at row 3"):
        eq.from_items(df, **KW)
    df = item_table(rng).astype({"m": object})
    df.loc[df.m == "c", "m"] = 7
    with pytest.raises(CubeError, match=r"column 'm' mixes label types \['int', 'str'\]"):
        eq.from_items(df, **KW)


def test_item_ids_of_several_types(rng):
    df = item_table(rng).astype({"i": object})
    df.loc[df.i == "q3", "i"] = 3           # the same item, an int id in every row
    a = eq.from_items(df, **KW, n_boot=20)
    b = eq.from_items(df.sample(frac=1.0, random_state=2), **KW, n_boot=20)
    assert a.identical(b)
    ids = eq.item_scores(df, **KW).item_id.values
    assert ids[0] == 3


def test_bad_options(rng):
    df = item_table(rng)
    with pytest.raises(ValueError, match="`n_boot` must be >= 2; got 1"):
        eq.from_items(df, **KW, n_boot=1)
    with pytest.raises(TypeError, match="`rng` must be an int"):
        eq.from_items(df, **KW, rng="x")
    with pytest.raises(TypeError, match="`higher_is_better` must be True or False"):
        eq.from_items(df, **KW, higher_is_better="yes")


# --- calibration (slow) ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("clustered", [False, True])
def test_bootstrap_interval_coverage(clustered):
    """Percentile intervals of boot_score cover the true mean; on clustered items only the
    cluster bootstrap does (the item bootstrap is shown undercovering for contrast)."""
    gen = np.random.default_rng(1811 + clustered)
    n_rep, n_clusters, level = 800, 60, 0.9
    sizes = gen.integers(1, 7, (n_rep, n_clusters))
    frames = []
    for r in range(n_rep):                     # building the table; the cube is one call
        cl = np.repeat(np.arange(n_clusters), sizes[r])
        x = (gen.normal(0, 1.0, n_clusters)[cl] if clustered else 0.0) + gen.normal(
            0, 1.0, len(cl))
        frames.append(pd.DataFrame({"m": "a", "l": r, "i": np.arange(len(cl)), "c": cl,
                                    "v": x}))
    df = pd.concat(frames, ignore_index=True)
    rows = []
    for use_clusters in ([False, True] if clustered else [False]):
        cube = eq.from_items(df, model="m", item="i", score="v", language="l",
                             cluster="c" if use_clusters else None, n_boot=1000, rng=3)
        boot = cube.boot_score.sel(model="a", seed=0).values
        lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2], axis=-1)
        hits = int(((lo <= 0) & (hi >= 0)).sum())
        kind = ("cluster bootstrap" if use_clusters else "item bootstrap") + (
            ", clustered items" if clustered else ", independent items") + (
            " (documented contrast: ignores the clusters, undercovers)"
            if clustered and not use_clusters else "")
        print(f"\nCALIBRATION | from_items percentile interval, {kind} | coverage | "
              f"nominal {level:.3f} | measured {hits / n_rep:.4f} | n {n_rep}")
        rows.append((use_clusters, hits))
    band = 4 * np.sqrt(n_rep * level * (1 - level)) + 0.015 * n_rep   # percentile: small-n bias
    right = [h for c, h in rows if c == clustered]
    assert abs(right[0] - n_rep * level) <= band
    if clustered:
        wrong = next(h for c, h in rows if not c)
        assert wrong < n_rep * (level - 0.15)


def test_report_of_an_item_cube_has_the_power_section(rng, tmp_path):
    from evaluq.reporting.sections import _item_means_section

    df = item_table(rng)
    cube = eq.from_items(df, **KW, cluster="c", n_boot=200)
    rep = eq.report(cube, tmp_path / "r.html", n_resamples=200, progress=False)
    ids = [s.id for s in rep.sections[cube.attrs["metric"]]]
    assert "power" in ids
    assert "smallest detectable difference" in rep.html
    section = _item_means_section(eq.item_means(df, **KW, cluster="c"))
    assert "cluster-robust (CR1)" in section.body


def test_drop_with_clusters_equals_the_table_without_those_items(rng):
    df = item_table(rng)
    bad = df[~((df.m == "b") & (df.l == "y") & (df.i == "q7"))]
    with pytest.warns(MissingItemsWarning, match=r"model 'b' seed 0 lacks 1 item\(s\)"):
        cube = eq.from_items(bad, **KW, cluster="c", missing="drop", n_boot=50)
    ref = eq.from_items(df[(df.i != "q7") | (df.l != "y")], **KW, cluster="c", n_boot=50)
    assert cube.identical(ref)
    assert int(cube.n_clusters.sel(language="y")) == 5


# --- out=: a zarr store ------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["l", None])
def test_out_streams_a_parquet_file_language_by_language(rng, tmp_path, language):
    df = item_table(rng)
    df = df[~((df.m == "c") & (df.l == "y"))]                  # an absent (model, language)
    if language is None:
        df = df[df.l == "x"]
    path = tmp_path / "log.parquet"
    df.sample(frac=1.0, random_state=0).to_parquet(path, row_group_size=200)
    kw = {**KW, "language": language, "cluster": "c", "n_boot": 60, "rng": 5}
    mem = eq.from_items(path, **kw)
    lazy = eq.from_items(path, **kw, out=tmp_path / "cube.zarr")
    assert lazy.boot_score.chunks is not None
    assert lazy.load().identical(mem)
    assert not list(tmp_path.glob(".items-*"))          # the scratch files are gone


def test_out_from_a_dataframe_and_errors(rng, tmp_path):
    df = item_table(rng)
    store = tmp_path / "c.zarr"
    lazy = eq.from_items(df, **KW, n_boot=20, out=store)
    assert lazy.load().identical(eq.from_items(df, **KW, n_boot=20))
    with pytest.raises(FileExistsError, match="`out` already exists"):
        eq.from_items(df, **KW, n_boot=20, out=store)
    with pytest.raises(TypeError, match="`out` must be a str or a path"):
        eq.from_items(df, **KW, out=3)
    path = tmp_path / "bad.parquet"
    df[~((df.m == "a") & (df.l == "y") & (df.i == "q1"))].to_parquet(path)
    with pytest.raises(CubeError, match=r"language 'y': model 'a' seed 0 lacks 1 item"):
        eq.from_items(path, **KW, out=tmp_path / "bad.zarr")
    assert not (tmp_path / "bad.zarr").exists()
    nan_key = df.astype({"l": object})
    nan_key.loc[4, "l"] = None
    nan_key.to_parquet(tmp_path / "nan.parquet")
    with pytest.raises(CubeError, match="column 'l' has missing keys"):
        eq.from_items(tmp_path / "nan.parquet", **KW, out=tmp_path / "nan.zarr")
    with pytest.raises(CubeError, match=r"column 'nope' \(given as `score`\) is not in"):
        eq.from_items(tmp_path / "bad.parquet", **{**KW, "score": "nope"},
                      out=tmp_path / "x.zarr")

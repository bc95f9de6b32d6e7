"""Tests of the experiment registry (BooStSa's feed / run / save / load pipeline)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evaluq as eq


def _runs(rng, n_runs=2, n=300, accs=(0.7, 0.8, 0.72)):
    out = []
    for _ in range(n_runs):
        y = rng.integers(0, 3, n)
        preds = [np.where(rng.random(n) < a, y, rng.integers(0, 3, n)) for a in accs]
        out.append((y, preds))
    return out


def _fill(exp, runs):
    for r, (y, (p0, p1, p2)) in enumerate(runs):
        exp.feed("base", run=r, targets=y, predictions=p0, epochs=10 + r)
        exp.feed("base", h1="big", run=r, targets=y, predictions=p1, epochs=20)
        exp.feed("base", h1="small", run=r, targets=y, predictions=p2)


def test_run_pooled_equals_bootstrap_test_on_concatenation(rng):
    runs = _runs(rng)
    exp = eq.Experiment()
    _fill(exp, runs)
    assert exp.comparisons == [("base", "big"), ("base", "small")]
    res = exp.run(metrics=["accuracy", "f1"], n_resamples=300, sample_size=0.2, rng=1)
    y = np.concatenate([r[0] for r in runs])
    p0 = np.concatenate([r[1][0] for r in runs])
    p1 = np.concatenate([r[1][1] for r in runs])
    single = eq.bootstrap_test(y, p0, p1, metrics=["accuracy", "f1"], n_resamples=300,
                               sample_size=0.2, rng=0)
    got = res[("base", "big")]
    np.testing.assert_array_equal(got.h0_value, single.h0_value)
    np.testing.assert_array_equal(got.delta, single.delta)
    assert got.n_runs == 2
    assert got.delta[0] > 0
    # same rng, same numbers; feeding order does not matter
    again = exp.run(metrics=["accuracy", "f1"], n_resamples=300, sample_size=0.2, rng=1)
    np.testing.assert_array_equal(again[("base", "big")].distribution, got.distribution)
    other = eq.Experiment()
    for r, (y, (p0, p1, p2)) in enumerate(runs):
        other.feed("base", h1="small", run=r, targets=y, predictions=p2)
        other.feed("base", h1="big", run=r, targets=y, predictions=p1)
        other.feed("base", run=r, targets=y, predictions=p0)
    res2 = other.run(metrics=["accuracy", "f1"], n_resamples=300, sample_size=0.2, rng=1)
    np.testing.assert_array_equal(res2[("base", "big")].distribution, got.distribution)


def test_save_load_resume_and_outputs(tmp_path, rng):
    runs = _runs(rng, n_runs=3)
    exp = eq.Experiment(tmp_path / "study")
    y, (p0, p1, _) = runs[0]
    exp.feed("base", run=0, targets=y, predictions=p0, epochs=10)
    exp.feed("base", h1="big", run=0, targets=y, predictions=p1, epochs=20)
    assert (tmp_path / "study" / "outcomes.json").exists()
    # resume in a new session
    resumed = eq.Experiment.load(tmp_path / "study")
    for r in (1, 2):
        y, (p0, p1, _) = runs[r]
        resumed.feed("base", run=r, targets=y, predictions=p0, epochs=12)
        resumed.feed("base", h1="big", run=r, targets=y, predictions=p1, epochs=20)
    out = tmp_path / "out"
    res = resumed.run(metrics=["accuracy"], method="paired", n_resamples=200, rng=0,
                      out_dir=out)
    table = pd.read_csv(out / "results.tsv", sep="\t", index_col=0)
    assert list(table.index) == ["base", "big"]
    assert table.loc["big", "diff_accuracy"] == pytest.approx(res[("base", "big")].delta[0])
    assert table.loc["big", "sign_accuracy"] == "**"
    assert table.loc["base", "mean_epochs"] == pytest.approx(34 / 3)
    outcomes = json.loads((out / "outcomes.json").read_text())
    assert outcomes["base"]["exp_idxs"] == [0, 1, 2]
    assert outcomes["base"]["h1"]["big"]["preds"][2] == runs[2][1][1].tolist()
    long = res.to_dataframe()
    assert {"h0_name", "h1_name", "metric", "pvalue", "ci_lower"} <= set(long.columns)
    assert "base" in repr(res)
    # a single .json file works as well, and loads back identically
    single = tmp_path / "registry.json"
    resumed.save(single)
    back = eq.Experiment.load(single)
    assert back.data == resumed.data


def test_loads_boostsa_outcomes(tmp_path, rng):
    """A file in BooStSa's layout (as written by BooStSa 0.2.13) loads and runs."""
    y = rng.integers(0, 2, 200).tolist()
    p0 = rng.integers(0, 2, 200).tolist()
    boostsa = {"h0": {"exp_idxs": ["h0.0"], "preds": [p0], "targs": [y],
                      "idxs": [list(range(200))], "epochs": [None],
                      "h1": {"h1": {"exp_idxs": ["h1.0"], "preds": [y], "targs": [y],
                                    "idxs": [list(range(200))], "epochs": [None]}}}}
    (tmp_path / "outcomes.json").write_text(json.dumps(boostsa))
    exp = eq.Experiment.load(tmp_path)
    res = exp.run(metrics=["accuracy"], n_resamples=100, rng=0)
    assert res[("h0", "h1")].h1_value[0] == 1.0
    assert np.isnan(res.results_table().loc["h0", "mean_epochs"])


def test_two_level_runs(rng):
    exp = eq.Experiment()
    _fill(exp, _runs(rng, n_runs=4))
    pooled = exp.run(metrics=["accuracy"], method="paired", n_resamples=500, rng=0)
    two = exp.run(metrics=["accuracy"], method="paired", runs="two-level", n_resamples=500,
                  rng=0)
    a, b = pooled[("base", "big")], two[("base", "big")]
    assert a.delta[0] == b.delta[0]
    assert b.runs == "two-level"
    assert b.distribution.std() > 0


def test_experiment_errors(tmp_path, rng):
    y = rng.integers(0, 2, 50)
    exp = eq.Experiment()
    with pytest.raises(ValueError, match="no treatment to compare"):
        exp.run()
    with pytest.raises(TypeError, match="`h0` must be a non-empty string"):
        exp.feed("", targets=y, predictions=y)
    with pytest.raises(TypeError, match="`h1` must be a non-empty string"):
        exp.feed("a", h1=3, targets=y, predictions=y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`h1` must differ from `h0`"):
        exp.feed("a", h1="a", targets=y, predictions=y)
    with pytest.raises(ValueError, match="`predictions` has 49 items but `targets` has 50"):
        exp.feed("a", targets=y, predictions=y[:-1])
    with pytest.raises(ValueError, match="`idxs` has 3 items"):
        exp.feed("a", targets=y, predictions=y, idxs=[0, 1, 2])
    with pytest.raises(ValueError, match="non-empty array"):
        exp.feed("a", targets=[], predictions=[])
    exp.feed("a", run=0, targets=y, predictions=y)
    with pytest.raises(ValueError, match="run 0 of 'a' was already fed"):
        exp.feed("a", run=0, targets=y, predictions=y)
    exp.feed("a", h1="b", run="x", targets=y, predictions=y)
    exp.feed("a", h1="b", run="y", targets=y, predictions=y)
    with pytest.raises(ValueError, match="has 1 run\\(s\\) but treatment 'b' has 2"):
        exp.run(n_resamples=10)
    exp2 = eq.Experiment()
    exp2.feed("a", targets=y, predictions=y)
    exp2.feed("a", h1="b", targets=1 - y, predictions=y)
    with pytest.raises(ValueError, match="different targets"):
        exp2.run(n_resamples=10)
    exp3 = eq.Experiment()
    exp3.feed("a", h1="b", targets=y, predictions=y)
    with pytest.raises(ValueError, match="baseline 'a' has no runs"):
        exp3.run(n_resamples=10)
    with pytest.raises(ValueError, match="`method` must be one of"):
        exp2.run(method="t-test")
    with pytest.raises(ValueError, match="`runs` must be one of"):
        exp2.run(runs="nested")
    with pytest.raises(ValueError, match="'a' vs 'b': `sample_size` must be in"):
        eq.Experiment.run(_ok(y), sample_size=0.9, n_resamples=10)
    with pytest.raises(ValueError, match="`path` is required"):
        exp2.save()
    with pytest.raises(FileNotFoundError, match="no outcomes file"):
        eq.Experiment.load(tmp_path / "missing")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a valid outcomes JSON"):
        eq.Experiment.load(tmp_path / "bad.json")
    (tmp_path / "partial.json").write_text(json.dumps({"a": {"preds": []}}))
    with pytest.raises(ValueError, match="lacks"):
        eq.Experiment.load(tmp_path / "partial.json")


def _ok(y):
    exp = eq.Experiment()
    exp.feed("a", targets=y, predictions=y)
    exp.feed("a", h1="b", targets=y, predictions=1 - y)
    return exp


def test_same_treatment_under_two_baselines_keeps_both_epochs(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    exp = eq.Experiment()
    for base in ("a", "b"):
        exp.feed(base, predictions=np.where(rng.random(200) < 0.7, y, 1 - y), targets=y, run=0)
    exp.feed("a", h1="t", predictions=np.where(rng.random(200) < 0.8, y, 1 - y), targets=y,
             run=0, epochs=3)
    exp.feed("b", h1="t", predictions=np.where(rng.random(200) < 0.8, y, 1 - y), targets=y,
             run=0, epochs=7)
    table = exp.run(metrics=["accuracy"], n_resamples=50, rng=0).results_table()
    assert table.loc["t (vs a)", "mean_epochs"] == 3
    assert table.loc["t (vs b)", "mean_epochs"] == 7


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

@pytest.mark.parametrize("path", [3, 2.5, ["a"], b"dir"])
def test_experiment_path_of_a_wrong_type(path):
    with pytest.raises(TypeError, match=r"`path` must be a str or os.PathLike.*got"):
        eq.Experiment(path=path)
    with pytest.raises(TypeError, match=r"`path` must be a str or os.PathLike"):
        eq.Experiment.load(path)
    with pytest.raises(TypeError, match=r"`path` must be a str or os.PathLike"):
        eq.Experiment().save(path)


@pytest.mark.parametrize("autosave", ["yes", 1, None])
def test_experiment_autosave_must_be_bool(autosave, tmp_path):
    with pytest.raises(TypeError, match=r"`autosave` must be True or False"):
        eq.Experiment(tmp_path, autosave=autosave)
    assert eq.Experiment(tmp_path, autosave=np.bool_(False)).autosave is False


def test_experiment_run_checks_out_dir_first(rng):
    exp = eq.Experiment()
    y = rng.integers(0, 2, 50)
    exp.feed("a", targets=y, predictions=y)
    exp.feed("a", h1="b", targets=y, predictions=1 - y)
    with pytest.raises(TypeError, match=r"`out_dir` must be a str or os.PathLike"):
        exp.run(metrics="accuracy", n_resamples=10, out_dir=5)


def test_feed_pairs_pandas_predictions_by_the_targets_index():
    """Before: a Series of predictions in another row order was stored by position."""
    exp = eq.Experiment()
    targets = pd.Series(["a", "b", "c", "a"], index=list("wxyz"))
    preds = pd.Series(["c", "a", "b", "b"], index=list("yzwx"))
    exp.feed("base", predictions=preds, targets=targets)
    assert exp.data["base"]["preds"] == [preds.loc[targets.index].tolist()]
    with pytest.raises(ValueError, match=r"`predictions` names items \[0, 1, 2, 3\] that "
                                         r"`targets` does not"):
        exp.feed("base", predictions=preds.reset_index(drop=True), targets=targets)


def test_feed_matches_csv_classes_by_their_header(tmp_path):
    """Before: ``feed`` read a .csv of probability rows without its header, so a prediction
    file whose header lists the classes in another order ('pos,neg' against the targets'
    'neg,pos') was paired by position: cross-entropy 0.91 where bootstrap_test, matching the
    columns by name, gives 1.08."""
    rng = np.random.default_rng(0)
    p, a, b = (rng.dirichlet(np.ones(2), 100) for _ in range(3))
    pd.DataFrame(p, columns=["neg", "pos"]).to_csv(t := tmp_path / "t.csv", index=False)
    pd.DataFrame(a[:, ::-1], columns=["pos", "neg"]).to_csv(h0 := tmp_path / "a.csv",
                                                            index=False)
    pd.DataFrame(b, columns=["neg", "pos"]).to_csv(h1 := tmp_path / "b.csv", index=False)
    exp = eq.Experiment()
    exp.feed("base", targets=t, predictions=h0)
    exp.feed("base", h1="new", targets=t, predictions=h1)
    res = exp.run(metrics="cross_entropy", method="paired", n_resamples=50, rng=0)
    expected = -np.mean(np.sum(p * np.log(a), axis=1))
    assert res[("base", "new")].h0_value[0] == pytest.approx(expected)
    direct = eq.bootstrap_test(t, h0, h1, metrics="cross_entropy", method="paired",
                               n_resamples=50, rng=0)
    assert direct.h0_value[0] == pytest.approx(expected)

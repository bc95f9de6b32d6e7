"""Labels read from text (``.txt`` files, text tables) are typed together, never file by file,
and the kind of test never changes silently on one value (sweep s27, findings 18-21)."""

from __future__ import annotations

import numpy as np
import pytest

import evaluq as eq
from evaluq.metrics import prepare_inputs
from evaluq.metrics._text_labels import type_label_texts


def _files(tmp_path, **columns):
    paths = []
    for name, lines in columns.items():
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(lines) + "\n")
        paths.append(str(f))
    return paths


def test_one_number_written_two_ways_is_refused_or_compared_as_written(tmp_path):
    """Before: each file became numbers on its own, so '01' and '1' (or '1.0' and '1') were
    one label: h1 scored 1.0 where, as written, it is right on 2 of 3."""
    y, h0, h1 = ["1", "2", "1"], ["1", "2", "2"], ["1.0", "2", "1.0"]
    paths = _files(tmp_path, y=y, h0=h0, h1=h1)
    with pytest.raises(ValueError, match=r"`targets` line 1 holds '1' and `h1` line 1 holds "
                                         r"'1\.0': one number written two ways.*Pass "
                                         r"kind='hard' to compare the labels as written, or "
                                         r"kind='regression'"):
        eq.bootstrap_test(*paths, method="paired", n_resamples=20, rng=0)
    # a metric of labels (accuracy) reads them as labels: as written
    assert eq.metrics.accuracy(paths[0], paths[2]) == pytest.approx(1 / 3)
    x = prepare_inputs(*paths, kind="hard")
    assert x.labels.tolist() == ["1", "1.0", "2"]
    assert np.mean(x.predictions[1] == x.targets) == np.mean(np.array(h1) == np.array(y))
    with pytest.raises(ValueError, match=r"'1' and .* '01'"):
        prepare_inputs(*_files(tmp_path, a=["1", "01"], b=["1", "1"]))


def test_plain_integer_files_are_integers_and_text_stays_text(tmp_path):
    x = prepare_inputs(*_files(tmp_path, y=["0", "2", "10"], p=["0", "10", "2"]))
    assert x.targets.dtype == np.int64
    assert x.labels.tolist() == [0, 2, 10]
    # before: refused ('labels must be all strings or all numbers'); a malformed answer is
    # a label of its own, as the guide says
    y, p = ["0", "1", "2", "1"], ["0", "N/A", "2", "2"]
    x = prepare_inputs(*_files(tmp_path, y=y, p=p))
    assert x.labels.tolist() == ["0", "1", "2", "N/A"]
    assert eq.metrics.accuracy(*_files(tmp_path, y=y, p=p)) == 0.5
    # --labels given as integers are typed with the files
    x = prepare_inputs(*_files(tmp_path, y=y, p=p), labels=[0, 1, 2, "N/A"])
    assert x.labels.tolist() == ["0", "1", "2", "N/A"]


def test_one_non_integer_prediction_does_not_turn_labels_into_regression(tmp_path):
    """Before: one '1.5' among class ids 0/1/2 silently made the test MSE / MAE."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 60)
    h0 = np.where(rng.random(60) < 0.7, y, (y + 1) % 3)
    h1 = h0.astype(float)
    h1[6] = 1.5
    paths = _files(tmp_path, y=map(str, y), h0=map(str, h0),
                   h1=[str(int(v)) if v.is_integer() else str(v) for v in h1])
    with pytest.raises(ValueError, match=r"`targets` holds whole numbers \(class labels\?\) but "
                                         r"`h1` holds 1 non-integer value\(s\) \(line 7: 1\.5\)"
                                         r".*Pass kind='regression'"):
        eq.bootstrap_test(*paths, method="paired", n_resamples=20, rng=0)
    with pytest.raises(ValueError, match=r"\(item 6: 1\.5\)"):           # arrays likewise
        eq.bootstrap_test(y, h0, h1, method="paired", n_resamples=20, rng=0)
    # the explicit task: kind, or regression metrics
    res = eq.bootstrap_test(*paths, metrics="mse", method="paired", n_resamples=20, rng=0)
    assert res.h1_value[0] == pytest.approx(np.mean((h1 - y) ** 2))
    res = eq.bootstrap_test(*paths, kind="hard", metrics="accuracy", method="paired",
                            n_resamples=20, rng=0)
    assert res.h1_value[0] == pytest.approx(np.mean(h1 == y))            # '1.5' a label


def test_real_values_stay_regression_and_text_among_them_is_refused(tmp_path):
    x = prepare_inputs(*_files(tmp_path, y=["0.5", "1.25"], p=["1", "2"]))
    assert x.kind == "regression"
    assert x.predictions[0].tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match=r"`p` line 2 holds 'maybe', not a number, but `y` "
                                         r"line 1 holds '0\.5', a real value: fix the value"):
        type_label_texts(["y", "p"], [np.array(["0.5", "1.25"]), np.array(["1", "maybe"])])
    with pytest.raises(ValueError, match=r"`p` line 2 holds 'n/a', a missing value, but `y` "
                                         r"line 1 holds '0\.5', a real value: remove that item"):
        type_label_texts(["y", "p"], [np.array(["0.5", "1.25"]), np.array(["1", "n/a"])])
    with pytest.raises(ValueError, match=r"`p` line 2 holds 'n/a', a missing value: regression "
                                         r"values must be finite numbers"):
        type_label_texts(["y", "p"], [np.array(["0.5", "1.25"]), np.array(["1", "n/a"])],
                         kind="regression")


def test_dask_inputs_type_the_label_files_together(tmp_path):
    """Before: with a dask input the ``.txt`` files were typed file by file, so '01' in one
    file and '1' in another were one label (h0 scored 1.0, right on 2 of 3 as written), and
    plain-integer targets with a prediction file holding 'N/A' were refused as mixed
    strings and numbers; in memory, the same files are typed together."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 40)
    h0 = [str(v) for v in y]
    h0[5] = "0" + h0[5]                                   # '01' where the target is '1'
    paths = _files(tmp_path, y=map(str, y), h0=h0)
    h1 = da.from_array(y, chunks=15)
    with pytest.raises(ValueError, match=r"`targets` line \d+ holds '\d' and `h0` line 6 holds "
                                         r"'0\d': one number written two ways"):
        eq.bootstrap_test(*paths, h1, metrics="accuracy", method="paired", n_resamples=20)
    p0 = [str(v) for v in y]
    p0[7] = "N/A"
    paths = _files(tmp_path, y=map(str, y), p0=p0)
    h1 = np.array([str(v) for v in np.where(rng.random(40) < 0.8, y, (y + 1) % 3)])
    lazy = eq.bootstrap_test(*paths, da.from_array(h1, chunks=15), metrics="accuracy",
                             method="paired", n_resamples=50, rng=0)
    eager = eq.bootstrap_test(*paths, h1, metrics="accuracy", method="paired",
                              n_resamples=50, rng=0)
    assert lazy.h0_value[0] == eager.h0_value[0] == pytest.approx(39 / 40)
    np.testing.assert_array_equal(lazy.distribution, eager.distribution)


def test_experiment_feed_types_the_label_files_together(tmp_path):
    """Before: ``feed`` typed each file on its own: '01' among the predictions merged with
    the targets' '1' (accuracy 1.0); and a treatment whose file held 'N/A' was typed as text
    against a baseline typed as integers, so ``run`` refused them as mixed labels."""
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 40)
    p0 = [str(v) for v in y]
    p0[2] = "0" + p0[2]
    t, h0 = _files(tmp_path, y=map(str, y), h0=p0)
    exp = eq.Experiment()
    with pytest.raises(ValueError, match=r"`targets` line \d+ holds '\d' and `predictions` "
                                         r"line 3 holds '0\d'.*kind='hard'"):
        exp.feed("base", targets=t, predictions=h0)
    exp.feed("base", targets=t, predictions=h0, kind="hard")   # '01' a label of its own
    assert exp.data["base"]["preds"][0][2] == p0[2]
    p1 = [str(v) for v in np.where(rng.random(40) < 0.8, y, (y + 1) % 3)]
    p1[4] = "N/A"
    p2 = [str(v) for v in np.where(rng.random(40) < 0.7, y, (y + 1) % 3)]
    t, h1, h2 = _files(tmp_path, y=map(str, y), h1=p1, h2=p2)
    exp = eq.Experiment()
    exp.feed("base", targets=t, predictions=h2)
    exp.feed("base", h1="new", targets=t, predictions=h1)
    with pytest.warns(eq.metrics.UndefinedMetricWarning, match=r"\['N/A'\].*no true item"):
        out = exp.run(metrics=["accuracy", "f1"], method="paired", n_resamples=50, rng=0)
    with pytest.warns(eq.metrics.UndefinedMetricWarning, match=r"\['N/A'\]"):
        direct = eq.bootstrap_test(t, h2, h1, metrics=["accuracy", "f1"], method="paired",
                                   n_resamples=50, rng=0)
    res = out[("base", "new")]
    np.testing.assert_allclose(res.h1_value, direct.h1_value)
    np.testing.assert_allclose(res.h0_value, direct.h0_value)
    assert res.h1_value[0] == pytest.approx(np.mean(np.array(p1) == y.astype(str)))


def test_a_header_line_in_every_label_file_is_warned(tmp_path):
    """Before: label files written by ``Series.to_csv(path, index=False)`` start with the
    column's name; that line was read silently as one item, right for both systems under a
    class of its own, which raised the macro F1 (here 0.57 -> 0.71) and the accuracy."""
    rng = np.random.default_rng(5)
    y = rng.choice(["neg", "pos"], 60)
    h0 = np.where(rng.random(60) < 0.6, y, np.where(y == "neg", "pos", "neg"))
    plain = _files(tmp_path, y=y, h0=h0)
    headed = _files(tmp_path, hy=["label", *y], hh0=["label", *h0])
    with pytest.warns(eq.EvaluqWarning, match=r"line 1 of every label file looks like a header"
                                               r", a name no other line holds \(`targets` "
                                               r"'label', `predictions` 'label'\).*Remove"):
        with_header = eq.metrics.f1(*headed)
    assert with_header == pytest.approx((2 * eq.metrics.f1(*plain) + 1) / 3)
    # a first line that is a label elsewhere, or a number, is no header
    eq.metrics.accuracy(*_files(tmp_path, a=["neg", "pos", "neg"], b=["pos", "neg", "neg"]))
    eq.metrics.accuracy(*_files(tmp_path, c=["7", "1", "2"], d=["8", "1", "2"]))


def test_a_missing_or_infinite_value_among_real_values_is_named_so(tmp_path):
    """Before: 'nan' in a file of real values was 'not a number ... pass kind='hard' to read
    every label as written', 'inf' was 'not a number', and a 'nan' on line 1 was called 'a
    real value' itself (the first value that is no whole number)."""
    with pytest.raises(ValueError, match=r"`y` line 1 holds 'nan', a missing value, but `y` "
                                         r"line 2 holds '0\.5', a real value: remove that item "
                                         r"from every file, or fill it if these are real "
                                         r"values; or pass kind='hard'"):
        type_label_texts(["y", "p"], [np.array(["nan", "0.5"]), np.array(["1.5", "2.5"])])
    with pytest.raises(ValueError, match=r"`p` line 2 holds 'inf', an infinite value: "
                                         r"regression values must be finite numbers"):
        type_label_texts(["y", "p"], [np.array(["0.5", "1.25"]), np.array(["1", "inf"])],
                         kind="regression")

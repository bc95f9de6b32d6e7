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
    with pytest.raises(ValueError, match=r"`p` line 2 holds 'n/a', not a number, but `y` "
                                         r"line 1 holds '0\.5', a real value"):
        type_label_texts(["y", "p"], [np.array(["0.5", "1.25"]), np.array(["1", "n/a"])])
    with pytest.raises(ValueError, match=r"`p` line 2 holds 'n/a', not a number: regression "
                                         r"values must be numbers"):
        type_label_texts(["y", "p"], [np.array(["0.5", "1.25"]), np.array(["1", "n/a"])],
                         kind="regression")

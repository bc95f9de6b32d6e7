"""prepare_inputs and load_predictions: detection, encoding, files and every error."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq.metrics import load_predictions, prepare_inputs

# --- detection and encoding --------------------------------------------------------------------


def test_hard_labels_encoded_against_sorted_union():
    x = prepare_inputs(["b", "a", "c"], ["b", "b", "a"], ["d", "a", "a"], names=["h0", "h1"])
    assert x.kind == "hard"
    assert x.labels.tolist() == ["a", "b", "c", "d"]
    assert x.n_classes == 4
    assert x.targets.tolist() == [1, 0, 2]
    assert [p.tolist() for p in x.predictions] == [[1, 1, 0], [3, 0, 0]]
    assert x.n_items == 3
    assert x.targets.dtype == np.int64


def test_user_labels_keep_their_order():
    x = prepare_inputs([3, 1, 2], [1, 1, 2], labels=[3, 2, 1, 0])
    assert x.labels.tolist() == [3, 2, 1, 0]
    assert x.targets.tolist() == [0, 2, 1]
    assert x.predictions[0].tolist() == [2, 2, 1]
    assert x.n_classes == 4


def test_kind_detection():
    assert prepare_inputs([0, 1, 1], [1, 1, 0]).kind == "hard"
    assert prepare_inputs([0.0, 1.0], [1.0, 1.0]).kind == "hard"  # whole floats are labels
    assert prepare_inputs([0.0, 1.0], [1.0, 1.0]).targets.dtype == np.int64
    assert prepare_inputs([0.5, 1.0], [1.0, 1.0]).kind == "regression"
    assert prepare_inputs([0, 1], [0.2, 1.0], kind="regression").kind == "regression"
    assert prepare_inputs([[0.5, 0.5]], [[0.1, 0.9]]).kind == "soft"
    x = prepare_inputs([0, 1, 2], [1, 1, 2], kind="regression")
    assert x.kind == "regression"
    assert x.targets.dtype == np.float64
    assert x.n_classes == 0
    assert x.labels is None


def test_soft_labels_from_dataarray_class_coord():
    t = xr.DataArray([[0.2, 0.8], [1.0, 0.0]], dims=("item", "class"),
                     coords={"class": ["no", "yes"]})
    x = prepare_inputs(t, t.transpose("class", "item"))
    assert x.kind == "soft"
    assert x.labels.tolist() == ["no", "yes"]
    np.testing.assert_array_equal(x.predictions[0], t.values)


def test_leading_dims_of_dataarray_predictions():
    preds = xr.DataArray(np.zeros((2, 3), int), dims=("model", "item"),
                         coords={"model": ["a", "b"]})
    x = prepare_inputs([0, 1, 0], preds, allow_leading=True)
    dims, coords = x.leading[0]
    assert dims == ("model",)
    assert coords["model"].tolist() == ["a", "b"]
    assert x.predictions[0].shape == (2, 3)


# --- files -------------------------------------------------------------------------------------


def test_txt_labels(tmp_path):
    f = tmp_path / "h0.txt"
    f.write_text("1\n0\n2\n")
    out = load_predictions(f)
    assert out.dtype == np.int64
    assert out.tolist() == [1, 0, 2]
    f.write_text("pos\nneg\n")
    assert load_predictions(str(f)).tolist() == ["pos", "neg"]
    f.write_text("0.5\n1\n")
    assert load_predictions(f).dtype == np.float64


@pytest.mark.parametrize(("suffix", "sep"), [(".csv", ","), (".tsv", "\t")])
def test_csv_tsv_probability_rows(tmp_path, suffix, sep):
    rows = np.array([[0.2, 0.8], [0.5, 0.5], [1.0, 0.0]])
    f = tmp_path / f"h1{suffix}"
    f.write_text("\n".join(sep.join(str(v) for v in r) for r in rows) + "\n")
    np.testing.assert_array_equal(load_predictions(f), rows)
    one_column = tmp_path / f"labels{suffix}"
    one_column.write_text("1\n0\n")
    assert load_predictions(one_column).shape == (2,)


def test_npy_and_metrics_on_files(tmp_path):
    targets = np.array([[0.2, 0.8], [0.5, 0.5]])
    preds = np.array([[0.3, 0.7], [0.5, 0.5]])
    np.save(tmp_path / "t.npy", targets)
    np.save(tmp_path / "p.npy", preds)
    assert eq.metrics.js_divergence(tmp_path / "t.npy", tmp_path / "p.npy") == pytest.approx(
        eq.metrics.js_divergence(targets, preds))
    (tmp_path / "y.txt").write_text("a\nb\nb\n")
    (tmp_path / "yhat.txt").write_text("a\nb\na\n")
    assert eq.metrics.accuracy(tmp_path / "y.txt", str(tmp_path / "yhat.txt")) == pytest.approx(
        2 / 3)


def test_file_errors(tmp_path):
    with pytest.raises(ValueError, match=r"must end in one of \.txt, \.csv, \.tsv, \.npy; "
                                         r"got '\.json'"):
        load_predictions(tmp_path / "x.json")
    with pytest.raises(FileNotFoundError, match=r"does not exist"):
        load_predictions(tmp_path / "missing.txt")
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    with pytest.raises(ValueError, match=r"is empty"):
        load_predictions(empty)
    blank = tmp_path / "blank.txt"
    blank.write_text("a\n\nb\n")
    with pytest.raises(ValueError, match=r"blank line\(s\) \[2\]"):
        load_predictions(blank)
    text = tmp_path / "text.csv"
    text.write_text("neg,pos\n0.2,0.8\nnone,0.1\n")
    with pytest.raises(ValueError, match=r"holds 'none' in row 2 after the header, not a "
                                         r"number: \.csv files hold probability rows, numbers "
                                         r"only \(one column per class; a first line of names "
                                         r"is a header\)"):
        load_predictions(text)


@pytest.mark.parametrize(("head", "encoding"), [("neg,pos\n", "utf-8"),
                                                ("neg,pos\r\n", "utf-8-sig"), ("", "utf-8")])
def test_probability_rows_with_a_header_of_class_names(tmp_path, head, encoding):
    """Before: "could not read ... with no header line" for the header a spreadsheet or
    pandas writes; a first line with no number is the classes' names."""
    path = tmp_path / "h0.csv"
    path.write_bytes((head + "0.2,0.8\r\n0.6,0.4\r\n").encode(encoding))
    np.testing.assert_array_equal(load_predictions(path), [[0.2, 0.8], [0.6, 0.4]])


@pytest.mark.parametrize("write", [
    lambda p: p.write_text("pos\r\nneg\r\npos\r\n\r\n"),       # Windows lines, a blank end
    lambda p: p.write_text("pos\nneg\npos\n\n\n"),
    lambda p: p.write_bytes("pos\nneg\npos\n".encode("utf-8-sig")),   # Notepad's UTF-8
    lambda p: p.write_bytes("pos\nneg\npos\n".encode("utf-16")),
])
def test_a_label_file_as_editors_save_it_reads_its_labels(tmp_path, write):
    """Before: blank lines at the end were refused ("has blank line(s) [4]") and a UTF-8
    byte-order mark became part of the first label ('\\ufeffpos'). Blank lines at the end
    are no labels (the lengths are checked against the targets'); a mark names the
    encoding."""
    path = tmp_path / "h0.txt"
    write(path)
    assert load_predictions(path).tolist() == ["pos", "neg", "pos"]


def test_probability_rows_with_a_byte_order_mark_read_as_numbers(tmp_path):
    path = tmp_path / "h0.csv"
    path.write_bytes("0.2,0.8\r\n0.6,0.4\r\n".encode("utf-8-sig"))
    np.testing.assert_array_equal(load_predictions(path), [[0.2, 0.8], [0.6, 0.4]])


def test_a_label_file_that_is_not_utf8_says_so(tmp_path):
    path = tmp_path / "h0.txt"
    path.write_bytes("positivo\nnégatif\n".encode("cp1252"))
    with pytest.raises(ValueError, match="is not UTF-8 text: save it as UTF-8"):
        load_predictions(path)


# --- validation errors -------------------------------------------------------------------------


@pytest.mark.parametrize(("targets", "preds", "kwargs", "error", "match"), [
    ([0, 1], [0, 1, 1], {}, ValueError, r"`predictions` has 3 items but `targets` has 2"),
    ([[0.5, 0.5]], [[0.5, 0.5, 0.0]], {}, ValueError,
     r"`predictions` has 3 classes but `targets` has 2"),
    ([[0.5, 0.4]], [[0.5, 0.5]], {}, ValueError,
     r"rows of `targets` must sum to 1 within atol=1e-06; 1 row\(s\) do not \(row \(0,\) "
     r"sums to 0\.9\)"),
    ([[0.5, 0.5]], [[0.5, 0.5003]], {"atol": 1e-5}, ValueError,
     r"rows of `predictions` must sum to 1 within atol=1e-05 \(or ±0\.0001, the rounding of "
     r"values printed to 4 decimals\)"),
    ([[0.5, 0.5]], [[1.5, -0.5]], {}, ValueError,
     r"`predictions` holds 1 negative probabilities \(first at index \(0, 1\): -0\.5\)"),
    ([0, np.nan], [0, 1], {}, ValueError, r"`targets` contains 1 NaN value"),
    ([0, 1], np.array([0, None], dtype=object), {}, ValueError,
     r"`predictions` contains 1 NaN value"),
    ([], [], {}, ValueError, r"`targets` is empty"),
    (0, [0], {}, ValueError, r"`targets` must be an array of per-item values; got a scalar"),
    ([[0, 1], [1, 0]], [0, 1], {"kind": "hard"}, ValueError,
     r"with kind='hard', `targets` holds probability rows \(shape \(2, 2\)\) but "
     r"`predictions` holds one label or value per item \(shape \(2,\)\).*give the targets' "
     r"labels \(e\.g\. each row's argmax\)"),
    ([[0, 1], [1, 0]], [[0, 1], [1, 0]], {"kind": "hard"}, ValueError,
     r"`targets` must be 1-D \(item,\) for hard inputs; got shape \(2, 2\)"),
    ([0, 1], [0, 1], {"kind": "soft"}, ValueError,
     r"`targets` must be 2-D \(item, class\) for soft inputs"),
    (np.zeros((2, 2, 2)), np.zeros((2, 2, 2)), {}, ValueError, r"must be 2-D"),
    ([[1.0], [1.0]], [[1.0], [1.0]], {}, ValueError, r"soft labels need at least 2 classes"),
    (["a", "b"], ["a", "c"], {"labels": ["a", "b"]}, ValueError,
     r"`predictions` holds labels \['c'\] that are not in `labels` \['a', 'b'\]"),
    ([0, 1, 5], [0, 1, 1], {"labels": [0, 1]}, ValueError,
     r"`targets` holds labels \[5\] that are not in `labels`"),
    (["a", "b"], [1, 2], {}, TypeError,
     r"labels must be all strings or all numbers across inputs; `predictions` holds numbers "
     r"and `targets` holds strings"),
    ([0, 1], [0, 1], {"labels": ["a", "b"]}, TypeError, r"`labels` holds strings"),
    ([0, 1], [0, 1], {"labels": [0, 0, 1]}, ValueError, r"`labels` holds duplicates: \[0\]"),
    ([0, 1], [0, 1], {"labels": []}, ValueError, r"`labels` must be a non-empty 1-D"),
    ([0.5, 1.0], [0.5, 1.0], {"labels": [0, 1]}, ValueError,
     r"`labels` applies to hard labels only; these inputs are regression"),
    ([0.5, 1.0], [0.5, 1.0], {"kind": "hard"}, ValueError,
     r"`targets` holds non-integer numbers, which cannot be class labels"),
    ([0.5, np.inf], [0.5, 1.0], {}, ValueError, r"`targets` contains infinite values"),
    (["a", "b"], ["a", "b"], {"kind": "regression"}, TypeError,
     r"`targets` must hold numbers; got dtype <U1"),
    ([0, 1], [0, 1], {"kind": "ordinal"}, ValueError,
     r"`kind` must be one of 'hard', 'soft', 'regression'; got 'ordinal'"),
    ([[0.5, 0.5]], [[0.5, 0.5]], {"atol": -1.0}, ValueError, r"`atol` must be in \[0, inf\]"),
])
def test_validation_errors(targets, preds, kwargs, error, match):
    with pytest.raises(error, match=match):
        prepare_inputs(targets, preds, **kwargs)


def test_errors_name_the_predictions():
    with pytest.raises(ValueError, match=r"`h1` has 2 items but `targets` has 3"):
        prepare_inputs([0, 1, 1], [0, 1, 1], [0, 1], names=["h0", "h1"])
    with pytest.raises(ValueError, match=r"`predictions\[1\]` contains 1 NaN"):
        prepare_inputs([0.0, 1.0], [0.0, 1.0], [0.0, np.nan])
    with pytest.raises(ValueError, match=r"`names` must name each of the 2 predictions"):
        prepare_inputs([0, 1], [0, 1], [0, 1], names=["h0"])
    with pytest.raises(TypeError, match=r"needs at least one prediction"):
        prepare_inputs([0, 1])


def test_dataarray_errors():
    with pytest.raises(ValueError, match=r"`targets` must have an 'item' dim; got dims \['x'\]"):
        prepare_inputs(xr.DataArray([0, 1], dims="x"), [0, 1])
    preds = xr.DataArray(np.zeros((2, 2), int), dims=("model", "item"))
    with pytest.raises(ValueError, match=r"`predictions` must have dims \['item'\] only"):
        prepare_inputs([0, 1], preds)
    with pytest.raises(TypeError, match=r"got a Dataset"):
        prepare_inputs(xr.Dataset({"a": ("item", [0, 1])}), [0, 1])
    t = xr.DataArray([0, 1], dims="item", coords={"item": [10, 11]})
    p = xr.DataArray([0, 1], dims="item", coords={"item": [11, 10]})
    with pytest.raises(ValueError, match=r"the 'item' coordinates of `predictions` and "
                                         r"`targets` differ"):
        prepare_inputs(t, p)
    with pytest.raises(ValueError, match=r"`predictions` could not be read as an array"):
        prepare_inputs([0, 1], [[0, 1], [1]])


def test_public_functions_validate_too():
    with pytest.raises(ValueError, match=r"rows of `predictions` must sum to 1"):
        eq.metrics.cross_entropy([[0.5, 0.5]], [[0.5, 0.6]])
    with pytest.raises(ValueError, match=r"must be 2-D \(item, class\)"):
        eq.metrics.emd([0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"`predictions` has 1 items but `targets` has 2"):
        eq.metrics.mse([0.5, 1.0], [0.5])


# --- bad input found by the corpus (issue 10) ---------------------------------------------------

def test_bool_arrays_are_not_values_or_probabilities():
    b = np.array([True, False, True])
    with pytest.raises(TypeError, match=r"`targets` must hold numbers; got dtype bool \(cast"):
        eq.metrics.mse(b, [1.0, 0.0, 1.0])
    with pytest.raises(TypeError, match=r"`predictions` must hold numbers; got dtype bool"):
        eq.metrics.mae([1.0, 0.5, 1.0], b)
    onehot = np.array([[True, False], [False, True]])
    with pytest.raises(TypeError, match=r"`targets` must hold numbers; got dtype bool"):
        eq.metrics.cross_entropy(onehot, np.array([[0.5, 0.5], [0.5, 0.5]]))
    # hard labels may be spelled True / False (two classes)
    assert eq.metrics.accuracy(b, np.array([True, True, True])) == pytest.approx(2 / 3)


def test_pandas_inputs_are_paired_by_name():
    """Before: a Series' index and a DataFrame's columns were dropped (paired by position)."""
    import pandas as pd

    t = pd.Series(["a", "b", "c"], index=["x", "y", "z"])
    p = pd.Series(["c", "a", "b"], index=["z", "x", "y"])
    assert eq.metrics.accuracy(t, p) == 1.0
    x = prepare_inputs(pd.DataFrame([[0.2, 0.8], [1.0, 0.0]], columns=["no", "yes"]),
                       pd.DataFrame([[0.9, 0.1], [0.3, 0.7]], columns=["yes", "no"]))
    assert x.labels.tolist() == ["no", "yes"]
    np.testing.assert_array_equal(x.predictions[0], [[0.1, 0.9], [0.7, 0.3]])
    with pytest.raises(ValueError, match=r"the index of `predictions` and the index of "
                                         r"`targets` name different items"):
        prepare_inputs(t, p.reset_index(drop=True))
    # a DataArray is never reordered, also against a pandas input
    with pytest.raises(ValueError, match=r"same names in another order, and `predictions` "
                                         r"\(a DataArray\) is never reordered"):
        prepare_inputs(t, xr.DataArray(p.to_numpy(), dims="item", coords={"item": p.index}))


def test_probabilities_printed_to_three_decimals_are_renormalised():
    """Before: rows of a .csv written with %.3f (sums 0.999 to 1.001) were refused at
    atol=1e-6, with no remedy. Rounding each of K values to d decimals moves a row sum by at
    most K * 0.5 * 10^-d: those rows are divided by their sums, with a warning."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), 200)
    q = np.round(rng.dirichlet(np.full(3, 5.0), 200), 3)
    off = np.abs(q.sum(axis=1) - 1) > 1e-6
    assert off.any()
    assert np.abs(q.sum(axis=1) - 1).max() <= 0.0015 + 1e-12
    with pytest.warns(eq.EvaluqWarning, match=rf"{off.sum()} row\(s\) of `predictions` sum to "
                                              r"1 only within the rounding of values printed "
                                              r"to 3 decimals .*at most ±0\.0015 for 3 "
                                              r"classes\): they were divided by their sums"):
        x = prepare_inputs(p, q)
    np.testing.assert_allclose(x.predictions[0], q / q.sum(axis=1, keepdims=True), rtol=1e-15)
    np.testing.assert_array_equal(x.predictions[0][~off], q[~off])   # the others untouched
    with pytest.warns(eq.EvaluqWarning, match="renormalised"):
        ce = eq.metrics.cross_entropy(p, q)
    assert ce == pytest.approx(-np.mean(np.sum(p * np.log(q / q.sum(1, keepdims=True)), 1)))


@pytest.mark.parametrize(("rows", "match"), [
    ([[0.334, 0.334, 0.334]], r"within atol=1e-06 \(or ±0\.0015, the rounding of values "
                              r"printed to 3 decimals\); 1 row\(s\) do not \(row \(0,\) sums "
                              r"to 1\.002\): if they are scores or logits, normalise each row"),
    ([[0.34, 0.34, 0.34]], r"\(or ±0\.01, the rounding of values printed to 2 decimals\)"),
    ([[0.4, 0.4, 0.1]], r"within atol=1e-06; 1 row\(s\) do not"),     # tenths: no rounding
    ([[50.0, 30.0, 20.0]], r"sums to 100\): they look like percentages: divide them by 100"),
])
def test_probabilities_off_by_more_than_rounding_are_refused(rows, match):
    with pytest.raises(ValueError, match=match):
        prepare_inputs([[0.2, 0.3, 0.5]], rows)


def test_csv_of_ids_and_labels_says_what_a_csv_holds(tmp_path):
    """Before: a .csv of an id column and a label column was read as 2-class probability
    rows and refused as 'rows must sum to 1 ... normalise each row (softmax)', and one of
    text labels as 'could not convert string': neither said where labels go."""
    import pandas as pd

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 20)
    pd.DataFrame({"id": range(20), "label": y}).to_csv(ids := tmp_path / "y.csv", index=False)
    where = r"Labels go one per line in a \.txt file.*pd\.read_csv\(path, index_col='id'\)"
    with pytest.raises(ValueError, match=r"whose header names the columns \['id', 'label'\]: "
                                         r"read as probability rows, one column per class\. "
                                         + where):
        prepare_inputs(ids, ids)
    pd.DataFrame({"id": range(20), "label": np.array(["neg", "pos"])[y]}).to_csv(
        words := tmp_path / "w.csv", index=False)
    with pytest.raises(ValueError, match=r"holds '(neg|pos)' in row 1 after the header, not a "
                                         r"number.*one column per class.*" + where):
        prepare_inputs(words, words)
    # the remedy it names: Series paired by their index (shuffled rows too)
    t = pd.read_csv(ids, index_col="id")["label"]
    p = t.sample(frac=1, random_state=1)
    assert eq.metrics.accuracy(t, p) == 1.0


def test_csv_with_an_empty_cell_or_ragged_rows_says_so(tmp_path):
    """Before: numpy's words, 'could not convert string '' to float64' and, for rows of
    different lengths, '... use `usecols` to select a subset' (no such argument here)."""
    empty = tmp_path / "empty.csv"
    empty.write_text("neg,pos\n0.2,0.8\n0.5,0.5\n,0.9\n")
    with pytest.raises(ValueError, match=r"'.*empty\.csv' has an empty cell in row 3 after the "
                                         r"header \(',0\.9'\): a missing value; every item "
                                         r"needs every column's value"):
        load_predictions(empty)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("0.5,0.5\n0.2,0.8\n0.2,0.7,0.1\n")
    with pytest.raises(ValueError, match=r"has rows of different lengths: row 1 has 2 values, "
                                         r"row 3 3: every row holds one value per class"):
        load_predictions(ragged)

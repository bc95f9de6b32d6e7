"""evaluq's warnings point at the user's line, not at the library's (brief: notebook-friendly).

A warning is shown with the file and line it is attributed to, and Python's default filter
shows it once per that location: attributed inside evaluq, a notebook shows a path into the
installed package, and a second call from another cell with the same problem is silent.
Every warning of evaluq is issued by ``evaluq._warn.warn``, which attributes it to the
first frame outside the package, whatever the depth of the call. Each case here is a public
call one level below this file, reaching the warning through another path of the library.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.ratings import fit_ratings


def _hard_labels() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = np.random.default_rng(0)
    names = np.array(["neg", "neu", "pos", "zzz"])
    y, h0, h1 = (names[gen.integers(0, 3, 300)] for _ in range(3))
    h1[-3:] = "zzz"
    return y, h0, h1


def _items(drop: bool) -> pd.DataFrame:
    gen = np.random.default_rng(1)
    df = pd.DataFrame([dict(m=m, l=lang, i=f"q{i}", s=s, v=float(gen.random() < 0.6))
                       for m in "abc" for lang in "xy" for i in range(40) for s in range(3)])
    if drop:
        df = df[~((df.m == "b") & (df.l == "x") & (df.i == "q3") & (df.s == 1))]
    return df


def _far_score() -> pd.DataFrame:
    gen = np.random.default_rng(0)
    df = pd.DataFrame([dict(model=m, language=lang, seed=s, score=gen.normal(50, 2))
                       for m in "abcd" for lang in ["en", "de", "fr"] for s in range(3)])
    df.loc[5, "score"] = 4800.0
    return df


def _epochs() -> pd.DataFrame:
    return pd.DataFrame([dict(model=m, item=f"q{i}", epoch=e, score=float((i + e) % 2))
                         for m in "ab" for i in range(6) for e in range(3)])


def _unbeaten() -> pd.DataFrame:
    return pd.DataFrame({"model_a": ["x", "x", "y", "y", "z"],
                         "model_b": ["y", "z", "z", "z", "x"],
                         "winner": ["model_a", "model_a", "model_a", "model_b", "model_b"]})


ITEM_COLUMNS = {"model": "m", "item": "i", "score": "v", "language": "l", "seed": "s"}
CASES: dict[str, Callable[[], object]] = {
    "bootstrap_test, a label no target holds": lambda: eq.bootstrap_test(
        *_hard_labels(), method="paired", n_resamples=50, rng=1),
    "metrics.f1, a label nothing holds": lambda: eq.metrics.f1(
        ["b", "a", "b", "a"], ["b", "b", "b", "a"], labels=["c", "b", "a"]),
    "from_items, missing='drop'": lambda: eq.from_items(
        _items(drop=True), **ITEM_COLUMNS, n_boot=10, missing="drop"),
    "from_long, a score far from the rest": lambda: eq.from_long(_far_score(), seed="seed"),
    "item_means, epochs without seed=": lambda: eq.item_means(
        _epochs(), model="model", item="item", score="score"),
    "aso, identical distributions": lambda: eq.aso(
        [1.0, 2.0, 3.0], [3.0, 2.0, 1.0], n_resamples=50, rng=0),
    "fit_ratings, only the prior keeps a rating finite": lambda: fit_ratings(
        _unbeaten(), ties="drop", prior_sd=2.0),
}


@pytest.mark.parametrize("case", CASES)
def test_a_warning_points_at_the_callers_line(case):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CASES[case]()
    ours = [w for w in caught if issubclass(w.category, eq.EvaluqWarning)]
    assert ours, f"{case}: no evaluq warning"
    for w in ours:
        assert Path(w.filename) == Path(__file__), (case, w.filename, w.lineno, str(w.message))


def test_every_warning_of_the_package_goes_through_one_function():
    """A ``warnings.warn`` of its own (other than a deprecation, whose ``stacklevel=2``
    points at the caller by construction) would be attributed by a hand-counted stack level,
    which a new call path breaks."""
    import ast

    package = Path(eq.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "_warn.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn" and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "warnings"):
                continue
            category = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "category"), None)
            if not (isinstance(category, ast.Name) and category.id == "DeprecationWarning"):
                offenders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not offenders, f"use evaluq._warn.warn: {offenders}"

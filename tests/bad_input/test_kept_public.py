"""The helpers issue 35 kept public (the API reference or a notebook uses them) validate like
every public function: a ValueError / TypeError naming the argument (``nemenyi_q``,
``hierarchical.default_priors``, ``hierarchical.build_model``,
``reporting.sections.item_tables``)."""

from __future__ import annotations

import pandas as pd
import pytest

import evaluq as eq
from evaluq.field.demsar import nemenyi_q
from evaluq.hierarchical import build_model, default_priors
from evaluq.reporting.sections import item_tables


@pytest.mark.parametrize(("args", "error", "argument"), [
    ((1,), ValueError, "`k`"),
    ((2.5,), TypeError, "`k`"),
    ((True,), TypeError, "`k`"),
    ((10**6,), ValueError, "`k`"),
    ((3, 0.0), ValueError, "`alpha`"),
    ((3, 1.5), ValueError, "`alpha`"),
    ((3, float("nan")), ValueError, "`alpha`"),
    ((3, "0.05"), TypeError, "`alpha`"),
])
def test_nemenyi_q_names_the_argument(args, error, argument):
    with pytest.raises(error, match=argument):
        nemenyi_q(*args)


def test_nemenyi_q_unchanged_on_good_input():
    assert round(nemenyi_q(4), 3) == 2.569           # Demšar (2006), Table 5(a)


@pytest.mark.parametrize("data", [None, {"ybar": [1.0]}, "cube"])
def test_hierarchical_building_blocks_want_cube_statistics(data):
    with pytest.raises(TypeError, match="`data` must be the HierarchicalData"):
        default_priors(data)
    with pytest.raises(TypeError, match="`data` must be the HierarchicalData"):
        build_model(data)


def test_build_model_names_model_and_priors():
    from evaluq.hierarchical import cube_statistics

    data = cube_statistics(eq.simulate_cube(n_models=3, n_languages=5, n_boot=20, rng=0))
    with pytest.raises(ValueError, match="`model`"):
        build_model(data, model="nested")
    with pytest.raises(ValueError, match="`priors` has an unknown key"):
        build_model(data, priors={"sigma": 1.0})


def _items():
    df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "q": [1, 2, 3, 4] * 2,
                       "ok": [1, 1, 0, 1, 0, 1, 0, 1]})
    return eq.item_means(df, model="model", item="q", score="ok")


@pytest.mark.parametrize(("items", "kwargs", "error", "argument"), [
    (None, {}, TypeError, "`items`"),
    (pd.DataFrame({"a": [1]}), {}, TypeError, "`items`"),
    ("items", {"higher_is_better": "False"}, TypeError, "`higher_is_better`"),
    ("renamed", {}, ValueError, "`items`"),
])
def test_item_tables_names_the_argument(items, kwargs, error, argument):
    if isinstance(items, str) and items == "items":
        items = _items()
    elif isinstance(items, str):
        items = _items().rename(model_b="other")
    with pytest.raises(error, match=argument):
        item_tables(items, **kwargs)

"""``eq.report(..., items=eq.item_means(...))``: the per-item section and its two tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evaluq as eq
from evaluq.errors import CubeError
from evaluq.reporting import sections


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """Three models, 40 items in 10 clusters, two epochs; c is missing on task t2."""
    rng = np.random.default_rng(3)
    rows = []
    for task in ("t1", "t2"):
        for model, p in (("a", 0.8), ("b", 0.6), ("c", 0.5)):
            if model == "c" and task == "t2":
                continue
            for i in range(40):
                for epoch in (1, 2):
                    rows.append({"model": model, "task": task, "item": i, "epoch": epoch,
                                 "passage": i // 4, "ok": float(rng.random() < p)})
    return pd.DataFrame(rows)


def _cube_and_items(table, **kw):
    cols = {"model": "model", "item": "item", "score": "ok", "language": "task",
            "seed": "epoch", "cluster": "passage", **kw}
    return eq.from_items(table, n_boot=100, **cols), eq.item_means(table, **cols)


def test_report_adds_the_items_section_and_tables(table):
    sub = table[table["task"] == "t1"]
    cube, items = _cube_and_items(sub)
    rep = eq.report(cube, None, n_resamples=100, replication="nonparametric",
                    progress=False, items=items)
    assert 'id="items"' in rep.html
    tables = rep.analyses["ok"].tables()
    means, diffs = tables["item_means"], tables["item_differences"]
    assert list(means.index.names) == ["model", "language"]
    np.testing.assert_allclose(means["mean"].to_numpy(),
                               sub.groupby("model")["ok"].mean().to_numpy())
    assert len(diffs) == 3
    assert (diffs["difference"] >= 0).all()
    np.testing.assert_allclose(diffs["z"], diffs["difference"] / diffs["se_difference"])
    assert "cluster-robust (CR1)" in diffs.attrs["caption"]
    lower, upper = means["lower"].to_numpy(), means["upper"].to_numpy()
    mean = means["mean"].to_numpy()       # 0/1 scores: Clopper-Pearson, in [0, 1], asymmetric
    assert items.ci.attrs["ci_kind"] == "clopper-pearson"
    assert ((lower >= 0) & (lower < mean) & (mean < upper) & (upper <= 1)).all()


def test_item_tables_orientation_and_missing_pairs(table):
    _, items = _cube_and_items(table)
    diffs = sections.item_tables(items, higher_is_better=False)["item_differences"]
    t1 = diffs.xs("t1", level="language")
    assert (t1["difference"] <= 0).all()
    assert len(t1) == 3
    t2 = diffs.xs("t2", level="language")          # c has no t2: its pairs are NaN, shown once
    assert len(t2) == 3
    assert int(t2["difference"].isna().sum()) == 2


def test_analyse_keeps_items(table):
    cube, items = _cube_and_items(table[table["task"] == "t1"])
    res = eq.reporting.analyse(cube, n_resamples=100, replication="nonparametric",
                               items=items)
    assert res.items is items
    assert "item_differences" in res.tables()


def test_items_argument_errors(table):
    cube, items = _cube_and_items(table[table["task"] == "t1"])
    with pytest.raises(TypeError, match="`items` must be the Dataset of evaluq.item_means"):
        eq.report(cube, None, n_resamples=100, progress=False, items=[items])
    with pytest.raises(CubeError, match=r"`items` names metrics \['nope'\]"):
        eq.report(cube, None, n_resamples=100, progress=False, items={"nope": items})
    with pytest.raises(ValueError, match="`items` must map metric name"):
        eq.report({"x": cube, "y": cube}, None, n_resamples=100, progress=False, items=items)
    with pytest.raises(TypeError, match=r"`items\['ok'\]` must be the Dataset"):
        eq.report(cube, None, n_resamples=100, progress=False, items={"ok": 3})
    with pytest.raises(TypeError, match="`items` must be the Dataset"):
        eq.reporting.analyse(cube, n_resamples=100, items="x")


def test_few_items_put_a_caution_on_p_best_and_the_tiers(table):
    """Issue 30: P(best) from 9 items must not stand without a caution naming the effective
    number of items."""
    sub = table[(table["task"] == "t1") & (table["item"] < 9)]
    cube, items = _cube_and_items(sub)
    rep = eq.report(cube, None, n_resamples=100, replication="nonparametric",
                    progress=False, items=items)
    by_id = {s.id: s for s in rep.sections["ok"]}
    for sid in ("leaderboard", "ranks", "tiers"):
        assert "Few items: P(best), the ranks and the tiers rest on" in by_id[sid].body
    assert "Few items" not in by_id["variance"].body
    n_eff = float(items["n_effective"].min())
    assert f"{n_eff:.3g} effective items" in by_id["ranks"].body
    interval = items["ci"].attrs["ci_kind"]
    assert interval == "clopper-pearson"
    assert "Clopper-Pearson" in by_id["items"].body

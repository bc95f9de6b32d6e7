"""ICC, design effect and effective N against errorbars' numbers and a direct ANOVA."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import evaluq as eq

ANCHOR = Path(__file__).resolve().parents[1] / "benchmarks" / "anchors" / "errorbars_clusters.json"


def anova_icc(scores, clusters):
    """The one-way ANOVA ICC from a pandas groupby (an independent route)."""
    df = pd.DataFrame({"y": scores, "g": clusters})
    grp = df.groupby("g")["y"]
    n, g = len(df), grp.ngroups
    msb = (grp.size() * (grp.mean() - df.y.mean()) ** 2).sum() / (g - 1)
    msw = ((df.y - grp.transform("mean")) ** 2).sum() / (n - g)
    k0 = (n - (grp.size() ** 2).sum() / n) / (g - 1)
    return (msb - msw) / (msb + (k0 - 1) * msw), grp.size().to_numpy()


def test_matches_errorbars_anchor():
    record = json.loads(ANCHOR.read_text())
    for data in record["datasets"]:
        res = eq.design_effect(np.array(data["scores"]), clusters=data["clusters"])
        assert float(res.icc) == pytest.approx(data["icc"], abs=1e-12)
        assert float(res.design_effect) == pytest.approx(data["design_effect"], abs=1e-12)
        if "epochs_shape" in data:
            epochs = np.array(data["scores"]).reshape(data["epochs_shape"])
            by_epoch = eq.design_effect(epochs, epoch_dim="epoch")
            assert float(by_epoch.icc) == pytest.approx(data["icc"], abs=1e-12)


def test_unequal_sizes_direct_anova_and_cv_form():
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, 9, 30)
    clusters = np.repeat(np.arange(30), sizes)
    scores = rng.normal(0, 1, 30)[clusters] * 0.7 + rng.normal(0, 1, len(clusters))
    res = eq.design_effect(scores, clusters=clusters)
    icc, n_g = anova_icc(scores, clusters)
    assert float(res.icc) == pytest.approx(icc, abs=1e-12)
    m, cv = n_g.mean(), n_g.std() / n_g.mean()
    assert float(res.design_effect_unequal) == pytest.approx(1 + ((1 + cv**2) * m - 1) * icc,
                                                             abs=1e-12)
    assert float(res.design_effect) == pytest.approx(1 + (m - 1) * icc, abs=1e-12)
    assert float(res.n_effective) == pytest.approx(len(scores) / float(
        res.design_effect_unequal), abs=1e-9)
    assert int(res.n_clusters) == 30


def test_vectorised_over_models_and_labels_kept():
    rng = np.random.default_rng(3)
    cube = xr.DataArray((rng.random((3, 20, 4)) < 0.6).astype(float),
                        dims=("model", "item", "epoch"), coords={"model": ["a", "b", "c"]})
    res = eq.design_effect(cube, epoch_dim="epoch")
    assert res.icc.dims == ("model",)
    for name in ("a", "b", "c"):
        one = cube.sel(model=name).values
        icc, _ = anova_icc(one.ravel(), np.repeat(np.arange(20), 4))
        assert float(res.icc.sel(model=name)) == pytest.approx(icc, abs=1e-12)
    by_label = eq.design_effect(cube.transpose("model", "epoch", "item").stack(
        obs=("item", "epoch")).reset_index("obs", drop=True), dim="obs",
        clusters=np.repeat(np.arange(20), 4))
    np.testing.assert_allclose(by_label.icc.values, res.icc.values, rtol=0, atol=1e-12)


def test_unidentifiable_is_nan_with_reason():
    one = eq.design_effect([1.0, 0.0, 1.0], clusters=["a", "a", "a"])
    assert np.isnan(float(one.icc))
    assert "single cluster" in one.icc.attrs["nan_reason"]
    singletons = eq.design_effect([1.0, 0.0, 1.0], clusters=[1, 2, 3])
    assert "one score" in singletons.icc.attrs["nan_reason"]
    constant = eq.design_effect(np.ones((4, 3)), epoch_dim="epoch")
    assert "constant" in constant.icc.attrs["nan_reason"]
    negative = eq.design_effect([1, 0, 1, 1, 0, 1, 0], clusters=list("aabbbcc"))
    assert float(negative.icc) < 0
    assert np.isnan(float(negative.n_effective))
    assert "no positive design effect" in negative.n_effective.attrs["nan_reason"]


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    (([1.0, np.nan, 0.0],), {"clusters": [1, 1, 2]}, "`scores` contains 1 NaN"),
    (([1.0, 0.0, 1.0],), {}, "`clusters` is required"),
    (([1.0, 0.0, 1.0],), {"clusters": [1, 2]}, "`clusters` must give one label"),
    (([1.0, 0.0, 1.0],), {"clusters": [1.0, np.nan, 2.0]}, "`clusters` contains NaN"),
    ((np.ones((2, 3)),), {"clusters": [1, 2], "epoch_dim": "epoch"}, "either `clusters`"),
])
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        eq.design_effect(*args, **kwargs)


def test_missing_dim():
    with pytest.raises(eq.CubeError, match="`scores` has no dim 'epoch'"):
        eq.design_effect(xr.DataArray(np.ones((2, 3)), dims=("item", "run")),
                         epoch_dim="epoch")

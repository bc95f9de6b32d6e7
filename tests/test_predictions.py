"""from_predictions: scores, paired bootstrap replicates, reproducibility, errors."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq import CubeError
from evaluq.predictions import bootstrap_counts, metric_bounds


def make_predictions(rng, n_items=300, n_models=3, n_seeds=2, accuracy=(0.6, 0.7, 0.8)):
    y = rng.integers(0, 3, n_items)
    correct = rng.random((n_models, n_seeds, n_items)) < np.asarray(accuracy)[:, None, None]
    wrong = (y + rng.integers(1, 3, (n_models, n_seeds, n_items))) % 3
    preds = np.where(correct, y, wrong)
    return y, xr.DataArray(preds, dims=("model", "seed", "item"),
                           coords={"model": [f"m{i}" for i in range(n_models)]})


def test_scores_are_the_metric_on_the_full_test_set(rng):
    y, preds = make_predictions(rng)
    cube = eq.from_predictions({"en": y}, {"en": preds}, n_boot=50, rng=0)
    expected = (preds.values == y).mean(axis=-1)
    np.testing.assert_allclose(cube.score.sel(language="en").values, expected)
    assert cube.attrs["metric"] == "accuracy"
    assert cube.attrs["rng_seed"] == 0


def test_replicates_are_paired_across_models_and_seeds(rng):
    y, preds = make_predictions(rng)
    twin = xr.concat([preds.isel(model=[0]), preds.isel(model=[0]).assign_coords(model=["twin"])],
                     dim="model")
    cube = eq.from_predictions(y, twin, n_boot=200, rng=3)
    np.testing.assert_array_equal(cube.boot_score.sel(model="m0").values,
                                  cube.boot_score.sel(model="twin").values)
    # a model against itself with another seed: the replicate sets are the same test sets
    counts = bootstrap_counts(np.random.default_rng(0), 10, 4)
    assert counts.shape == (4, 10)
    np.testing.assert_array_equal(counts.sum(axis=1), [10] * 4)


def test_bootstrap_spread_matches_binomial(rng):
    n = 400
    y = np.zeros(n, dtype=int)
    preds = xr.DataArray((rng.random((1, 1, n)) > 0.75).astype(int) * 0 +
                         (np.arange(n) % 4 == 0)[None, None].astype(int),
                         dims=("model", "seed", "item"), coords={"model": ["m"]})
    cube = eq.from_predictions(y, preds, n_boot=4000, rng=1)
    acc = cube.score.item()
    assert acc == pytest.approx(0.75)
    sd = cube.boot_score.std("bootstrap").item()
    expected = np.sqrt(acc * (1 - acc) / n)
    assert sd == pytest.approx(expected, rel=4 / np.sqrt(2 * 4000))
    assert cube.boot_score.mean().item() == pytest.approx(acc, abs=4 * expected / np.sqrt(4000))


def test_same_rng_same_numbers_and_language_order_invariance(rng):
    y1, p1 = make_predictions(rng, n_items=50)
    y2, p2 = make_predictions(rng, n_items=80)
    a = eq.from_predictions({"fr": y1, "de": y2}, {"fr": p1, "de": p2}, n_boot=30, rng=7)
    b = eq.from_predictions({"de": y2, "fr": y1}, {"de": p2, "fr": p1}, n_boot=30, rng=7)
    xr.testing.assert_identical(a, b)
    assert list(a.language.values) == ["de", "fr"]
    c = eq.from_predictions({"fr": y1, "de": y2}, {"fr": p1, "de": p2}, n_boot=30, rng=8)
    assert not np.array_equal(a.boot_score.values, c.boot_score.values)


def test_nested_mapping_and_string_labels(rng):
    y = np.array(["pos", "neg", "pos", "neu"])
    preds = {"en": {"a": [["pos", "neg", "neg", "neu"], ["pos", "pos", "pos", "neu"]],
                    "b": [["neg", "neg", "pos", "neu"], ["pos", "neg", "pos", "neu"]]}}
    cube = eq.from_predictions({"en": y}, preds, n_boot=20, rng=0)
    np.testing.assert_allclose(cube.score.sel(language="en").values, [[0.75, 0.75], [0.75, 1.0]])


def test_models_missing_from_a_language_are_nan(rng):
    y, preds = make_predictions(rng, n_items=40)
    cube = eq.from_predictions({"a": y, "b": y}, {"a": preds, "b": preds.isel(model=[0, 1])},
                               n_boot=10, rng=0)
    assert np.isnan(cube.score.sel(model="m2", language="b")).all()
    assert np.isfinite(cube.score.sel(model="m2", language="a")).all()


def test_errors(rng):
    y, preds = make_predictions(rng, n_items=20)
    with pytest.raises(CubeError, match="must name the same languages.*'de'"):
        eq.from_predictions({"en": y}, {"en": preds, "de": preds})
    with pytest.raises(CubeError, match="`targets` of language 'all' have shape \\(19,\\)"):
        eq.from_predictions(y[:-1], preds)
    with pytest.raises(ValueError, match="`n_boot` must be >= 2; got 1"):
        eq.from_predictions(y, preds, n_boot=1)
    with pytest.raises(ValueError, match="`metric` must be one of"):
        eq.from_predictions(y, preds, metric="bogus")
    with pytest.raises(CubeError, match="language 'all': `targets` holds labels \\[2\\] that are "
                                        "not in `labels`"):
        eq.from_predictions(y, preds, labels=[0, 1])
    soft = xr.DataArray(np.full((1, 1, 20, 3), 0.4), dims=("model", "seed", "item", "class"))
    with pytest.raises(CubeError, match="must sum to 1 within atol"):
        eq.from_predictions(np.eye(3)[y], soft, metric="cross_entropy")
    with pytest.raises(CubeError, match="must have dims"):
        eq.from_predictions(y, preds.rename(item="token"))
    with pytest.raises(TypeError, match="must be a DataArray"):
        eq.from_predictions(y, 3)
    with pytest.raises(CubeError, match="`targets` is empty"):
        eq.from_predictions({}, {})
    with pytest.raises(TypeError, match="`rng` must be an int"):
        eq.from_predictions(y, preds, rng="seed")


def test_other_metrics_and_target_class(rng):
    y, preds = make_predictions(rng, n_items=120)
    f1_two = eq.metrics.f1_metric(target_class=2)
    cube = eq.from_predictions({"en": y}, {"en": preds}, metric=f1_two, n_boot=20, rng=0)
    for m, model in enumerate(preds.model.values):
        for s in range(preds.sizes["seed"]):
            expected = eq.metrics.f1(y, preds.values[m, s], target_class=2)
            assert cube.score.sel(model=model, language="en", seed=s).item() == pytest.approx(
                expected)
    # soft predictions and a lower-is-better metric
    proba = rng.dirichlet(np.ones(3), size=(2, 1, 50))
    targets = rng.dirichlet(np.ones(3), size=50)
    soft = xr.DataArray(proba, dims=("model", "seed", "item", "class"),
                        coords={"model": ["p", "q"]})
    cube = eq.from_predictions(targets, soft, metric="js_divergence", n_boot=20, rng=0)
    assert not eq.higher_is_better(cube)
    assert cube.score.sel(model="q").item() == pytest.approx(
        eq.metrics.js_divergence(targets, proba[1, 0]))


# --- bounds ------------------------------------------------------------------------------------

LN2 = np.log(2.0)
EXPECTED_BOUNDS = {
    "accuracy": (0.0, 1.0), "precision": (0.0, 1.0), "recall": (0.0, 1.0), "f1": (0.0, 1.0),
    "cross_entropy": (0.0, np.inf), "kl": (0.0, np.inf), "js_divergence": (0.0, LN2),
    "js_distance": (0.0, np.sqrt(LN2)), "emd": (0.0, 1.0), "entropy_similarity": (0.0, 1.0),
    "entropy_correlation": (-1.0, 1.0), "mse": (0.0, np.inf), "mae": (0.0, np.inf),
}


def _inputs_for(metric, rng, n_items=12, n_models=2, n_seeds=3):
    """Small random targets / predictions of the metric's kind (few items: wide replicates)."""
    kind = eq.metrics.get_metric(metric).kind
    if kind == "hard":
        y = rng.integers(0, 2, n_items)
        p = np.where(rng.random((n_models, n_seeds, n_items)) < 0.9, y, 1 - y)
        return y, xr.DataArray(p, dims=("model", "seed", "item"))
    if kind == "soft":
        y = rng.dirichlet(np.ones(3), size=n_items)
        p = rng.dirichlet(np.ones(3), size=(n_models, n_seeds, n_items))
        return y, xr.DataArray(p, dims=("model", "seed", "item", "class"))
    y = rng.normal(size=n_items)
    p = y + rng.normal(scale=0.3, size=(n_models, n_seeds, n_items))
    return y, xr.DataArray(p, dims=("model", "seed", "item"))


def test_every_builtin_metric_has_its_bounds_in_the_table():
    assert set(EXPECTED_BOUNDS) == set(eq.metrics.available_metrics())
    for name, expected in EXPECTED_BOUNDS.items():
        assert metric_bounds(name) == expected
        assert metric_bounds(eq.metrics.get_metric(name)) == expected
    assert metric_bounds(eq.metrics.precision_metric(target_class=1)) == (0.0, 1.0)
    assert metric_bounds(eq.metrics.cross_entropy_metric(eps=1e-12)) == (0.0, np.inf)
    assert metric_bounds("my_bleu") is None
    with pytest.raises(TypeError, match="`metric` must be a metric name or a Metric; got int"):
        metric_bounds(3)


def test_the_finite_bounds_are_attained_by_the_metrics():
    """The table's finite ends are the metrics' own extremes, computed by the metrics."""
    one_hot = np.eye(3)
    worst = one_hot[[2, 2, 0]]                  # all mass at the opposite end of the classes
    assert eq.metrics.js_divergence(one_hot[[0, 0, 2]], worst) == pytest.approx(LN2)
    assert eq.metrics.js_distance(one_hot[[0, 0, 2]], worst) == pytest.approx(np.sqrt(LN2))
    assert eq.metrics.emd(one_hot[[0, 0, 2]], worst) == pytest.approx(1.0)
    assert eq.metrics.emd(worst, worst) == pytest.approx(0.0)
    flat = np.full((3, 3), 1 / 3)
    assert eq.metrics.entropy_similarity(flat, flat) == pytest.approx(1.0)
    # a target as uncertain as possible where the prediction is certain, and vice versa
    ramp = np.array([[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]])
    assert eq.metrics.entropy_similarity(ramp[:2], ramp[1::-1]) == pytest.approx(0.0)
    assert eq.metrics.entropy_correlation(ramp[:2], ramp[1::-1]) == pytest.approx(-1.0)
    assert eq.metrics.entropy_correlation(ramp, ramp) == pytest.approx(1.0)


@pytest.mark.parametrize("metric", sorted(EXPECTED_BOUNDS))
def test_from_predictions_records_the_bounds_and_parametric_draws_stay_inside(metric, rng):
    y, preds = _inputs_for(metric, rng)
    cube = eq.from_predictions(y, preds, metric=metric, n_boot=50, rng=0)
    lo, hi = EXPECTED_BOUNDS[metric]
    assert eq.cube.bounds(cube) == (lo, hi)
    for values in (cube.score.values, cube.boot_score.values):
        finite = values[np.isfinite(values)]
        assert ((finite >= lo - 1e-12) & (finite <= hi + 1e-12)).all()
    draws = eq.resample(cube, n_resamples=2000, replication="parametric", rng=0)
    assert draws.attrs["replication"] == "parametric"
    values = draws["score"].values
    values = values[np.isfinite(values)]
    assert values.size > 0
    assert ((values >= lo) & (values <= hi)).all()


def test_without_bounds_parametric_draws_leave_the_range(rng):
    """The check above can fail: near a bound, untruncated draws cross it."""
    y = np.zeros(10, dtype=int)
    p = np.zeros((1, 3, 10), dtype=int)
    p[0, 0, :1] = 1                                       # accuracies 0.9, 1, 1
    preds = xr.DataArray(p, dims=("model", "seed", "item"))
    free = eq.from_predictions(y, preds, n_boot=200, rng=0, bounds=None)
    assert eq.cube.bounds(free) is None
    above = eq.resample(free, n_resamples=2000, rng=0)
    assert (above["score"].values > 1).mean() > 0.1
    kept = eq.resample(eq.from_predictions(y, preds, n_boot=200, rng=0), n_resamples=2000, rng=0)
    assert (kept["score"].values <= 1).all()
    assert kept["score"].values.max() > 0.99


def test_unknown_metric_records_no_bounds_and_explicit_bounds_are_checked(rng):
    y, preds = _inputs_for("mae", rng)
    spread = eq.metrics.Metric("spread", higher_is_better=False, kind="regression",
                               item_stats=lambda t, p, k: np.abs(p - t)[..., None],
                               from_sums=lambda s, n, k: s[..., 0] / n)
    assert "bounds" not in eq.from_predictions(y, preds, metric=spread, n_boot=5).attrs
    cube = eq.from_predictions(y, preds, metric=spread, n_boot=5, bounds=(0, 10))
    assert eq.cube.bounds(cube) == (0.0, 10.0)
    assert "bounds" not in eq.from_predictions(y, preds, metric="mae", n_boot=5,
                                               bounds=None).attrs
    with pytest.raises(ValueError, match=r"value\(s\) of 'score' are outside the declared "
                                         r"`bounds` \(0, 0.01\)"):
        eq.from_predictions(y, preds, metric="mae", n_boot=5, bounds=(0, 0.01))
    with pytest.raises(ValueError, match="`bounds` must satisfy lower < upper.*got \\(1, 0\\)"):
        eq.from_predictions(y, preds, metric="mae", n_boot=5, bounds=(1, 0))
    with pytest.raises(TypeError, match="`bounds` must be a pair of numbers .*got 'fd'"):
        eq.from_predictions(y, preds, metric="mae", n_boot=5, bounds="fd")
    with pytest.raises(TypeError, match="`bounds` must be a pair of numbers .*got \\(0,\\)"):
        eq.from_predictions(y, preds, metric="mae", n_boot=5, bounds=(0,))

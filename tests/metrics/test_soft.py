"""Soft-label metrics against direct formulas and scipy; the BooStSa JSD erratum."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy as sp_entropy
from scipy.stats import wasserstein_distance

import evaluq as eq
from evaluq.metrics import UndefinedMetricWarning, _soft


def _rows(rng, n, k, zeros=False):
    p = rng.dirichlet(np.full(k, 0.7), n)
    if zeros:
        p[rng.random((n, k)) < 0.2] = 0.0
        p[:, 0] += 1e-3
        p /= p.sum(axis=1, keepdims=True)
    return p


@pytest.fixture
def pq(rng):
    return _rows(rng, 80, 4, zeros=True), _rows(rng, 80, 4)


def test_entropy_kernels_match_scipy(pq):
    p, q = pq
    np.testing.assert_allclose(_soft.entropy(p), sp_entropy(p, axis=1), rtol=1e-13)
    np.testing.assert_allclose(_soft.normalized_entropy(p), sp_entropy(p, axis=1) / np.log(4),
                               rtol=1e-13)
    np.testing.assert_allclose(_soft.kl_items(p, q), sp_entropy(p, q, axis=1), rtol=1e-12)
    assert _soft.entropy(np.array([1.0, 0.0])) == 0.0  # 0 log 0 = 0


def test_cross_entropy_and_kl(pq):
    p, q = pq
    direct = np.mean([-sum(pk * np.log(qk) for pk, qk in zip(pi, qi, strict=True) if pk > 0)
                      for pi, qi in zip(p, q, strict=True)])
    assert eq.metrics.cross_entropy(p, q) == pytest.approx(direct, rel=1e-13)
    assert eq.metrics.kl(p, q) == pytest.approx(np.mean(sp_entropy(p, q, axis=1)), rel=1e-12)
    # CE = KL + H(p)
    assert eq.metrics.cross_entropy(p, q) == pytest.approx(
        eq.metrics.kl(p, q) + np.mean(sp_entropy(p, axis=1)), rel=1e-12)


def test_zero_prediction_gives_inf_unless_eps():
    p = [[0.5, 0.5], [1.0, 0.0]]
    q = [[1.0, 0.0], [0.5, 0.5]]
    assert eq.metrics.cross_entropy(p, q) == np.inf
    assert eq.metrics.kl(p, q) == np.inf
    eps = 1e-6
    clipped = np.array([[1.0, eps], [0.5, 0.5]]) / np.array([[1.0 + eps], [1.0]])
    expected = np.mean(-(np.array(p) * np.log(clipped)).sum(axis=1))
    assert eq.metrics.cross_entropy(p, q, eps=eps) == pytest.approx(expected, rel=1e-13)
    assert eq.metrics.kl(p, q, eps=eps) == pytest.approx(
        np.mean(sp_entropy(p, clipped, axis=1)), rel=1e-12)
    assert eq.metrics.cross_entropy_metric(eps=eps).name == "cross_entropy[eps=1e-06]"
    assert eq.metrics.kl_metric(eps=eps).name == "kl[eps=1e-06]"
    assert eq.metrics.kl_metric() is eq.metrics.get_metric("kl")
    with pytest.raises(ValueError, match=r"`eps` must be in \(0, 1\]; got 0"):
        eq.metrics.cross_entropy(p, q, eps=0.0)


def test_js_divergence_and_distance_match_scipy(pq):
    p, q = pq
    per_item = jensenshannon(p, q, axis=1)  # base e: sqrt of the divergence in nats
    assert eq.metrics.js_distance(p, q) == pytest.approx(per_item.mean(), rel=1e-12)
    assert eq.metrics.js_divergence(p, q) == pytest.approx((per_item**2).mean(), rel=1e-12)
    m = (p + q) / 2
    direct = sp_entropy(m, axis=1) - (sp_entropy(p, axis=1) + sp_entropy(q, axis=1)) / 2
    np.testing.assert_allclose(_soft.js_divergence_items(p, q), direct, atol=1e-15)
    assert eq.metrics.js_divergence([[1.0, 0.0]], [[0.0, 1.0]]) == pytest.approx(np.log(2))


def test_boostsa_jsd_is_the_distance_not_the_divergence(pq):
    """Erratum: BooStSa's "JSD" is scipy's jensenshannon, i.e. our js_distance."""
    p, q = pq
    boostsa_jsd = np.mean(jensenshannon(p, q, axis=1))
    assert eq.metrics.js_distance(p, q) == pytest.approx(boostsa_jsd, rel=1e-12)
    assert abs(eq.metrics.js_divergence(p, q) - boostsa_jsd) > 0.05


def test_emd_matches_wasserstein(pq):
    p, q = pq
    pos = np.arange(4)
    expected = [wasserstein_distance(pos, pos, pi, qi) / 3 for pi, qi in zip(p, q, strict=True)]
    np.testing.assert_allclose(_soft.emd_items(p, q), expected, atol=1e-14)
    assert eq.metrics.emd(p, q) == pytest.approx(np.mean(expected), rel=1e-12)
    assert eq.metrics.emd([[1, 0, 0]], [[0, 0, 1]]) == 1.0


def test_entropy_similarity_and_correlation(pq):
    p, q = pq
    x = sp_entropy(p, axis=1) / np.log(4)
    y = sp_entropy(q, axis=1) / np.log(4)
    cos = x @ y / np.sqrt((x @ x) * (y @ y))
    assert eq.metrics.entropy_similarity(p, q) == pytest.approx(cos, rel=1e-13)
    assert eq.metrics.entropy_correlation(p, q) == pytest.approx(np.corrcoef(x, y)[0, 1],
                                                                 rel=1e-12)


def test_entropy_correlation_is_stable_for_nearly_constant_entropies(rng):
    # entropies near 1 with tiny spread: uncentred running sums would lose every digit
    p = np.full((500, 2), 0.5) + rng.normal(0, 1e-5, (500, 1)) * np.array([1, -1])
    q = np.full((500, 2), 0.5) + rng.normal(0, 1e-5, (500, 1)) * np.array([1, -1])
    x = _soft.normalized_entropy(p)
    y = _soft.normalized_entropy(q)
    assert eq.metrics.entropy_correlation(p, q) == pytest.approx(np.corrcoef(x, y)[0, 1],
                                                                 abs=1e-6)


def test_undefined_entropy_agreement_warns():
    onehot = [[1.0, 0.0], [0.0, 1.0]]
    with pytest.warns(UndefinedMetricWarning, match=r"entropy_similarity is undefined"):
        assert np.isnan(eq.metrics.entropy_similarity(onehot, [[0.5, 0.5], [0.2, 0.8]]))
    with pytest.warns(UndefinedMetricWarning, match=r"entropy_correlation is undefined"):
        assert np.isnan(eq.metrics.entropy_correlation(onehot, [[0.5, 0.5], [0.2, 0.8]]))


def test_dataarray_with_model_dim(rng):
    p = _rows(rng, 30, 3)
    q = np.stack([_rows(rng, 30, 3), _rows(rng, 30, 3)])
    da = xr.DataArray(q, dims=("model", "item", "class"), coords={"model": ["x", "y"]})
    target = xr.DataArray(p, dims=("item", "class"))
    out = eq.metrics.js_distance(target, da.transpose("class", "model", "item"))
    assert out.dims == ("model",)
    assert out.sel(model="y").item() == pytest.approx(jensenshannon(p, q[1], axis=1).mean())


def test_orientation_flags():
    lower = ["cross_entropy", "kl", "js_divergence", "js_distance", "emd", "mse", "mae"]
    higher = ["accuracy", "precision", "recall", "f1", "entropy_similarity",
              "entropy_correlation"]
    assert sorted(lower + higher) == eq.metrics.available_metrics()
    for name in lower:
        assert not eq.metrics.get_metric(name).higher_is_better
    for name in higher:
        assert eq.metrics.get_metric(name).higher_is_better


prob_rows = arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(2, 5)),
                   elements=st.floats(0.0, 1.0)).filter(lambda a: (a.sum(axis=1) > 0.1).all())


@settings(max_examples=40, deadline=None)
@given(prob_rows, st.data())
def test_property_bounds_and_symmetry(raw, data):
    p = raw / raw.sum(axis=1, keepdims=True)
    raw_q = data.draw(arrays(np.float64, raw.shape, elements=st.floats(0.0, 1.0)).filter(
        lambda a: (a.sum(axis=1) > 0.1).all()))
    q = raw_q / raw_q.sum(axis=1, keepdims=True)
    jsd = _soft.js_divergence_items(p, q)
    assert ((jsd >= 0) & (jsd <= np.log(2) + 1e-12)).all()
    np.testing.assert_allclose(jsd, _soft.js_divergence_items(q, p), atol=1e-15)
    with np.errstate(invalid="ignore"):  # scipy gives NaN where rounding makes JSD < 0
        scipy_distance = np.nan_to_num(jensenshannon(p, q, axis=1), nan=0.0)
    np.testing.assert_allclose(_soft.js_distance_items(p, q), scipy_distance, atol=1e-7)
    emd = _soft.emd_items(p, q)
    assert ((emd >= 0) & (emd <= 1 + 1e-12)).all()
    assert (_soft.js_divergence_items(p, p) <= 1e-15).all()
    assert (np.abs(_soft.emd_items(p, p)) <= 1e-15).all()
    assert (_soft.kl_items(p, q) >= -1e-12).all()


def test_clipped_metrics_go_by_their_names():
    """Before: 'cross_entropy[eps=1e-12]', the name of cross_entropy_metric(eps=1e-12), was
    refused by ``metrics=`` (and so ``evaluq test --metrics``), the only way on the command
    line to test a cross-entropy that a zero probability makes infinite."""
    from evaluq.metrics import get_metric

    p, q = np.array([[0.5, 0.5], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.9, 0.1]])
    m = get_metric("cross_entropy[eps=1e-12]")
    assert m.name == eq.metrics.cross_entropy_metric(eps=1e-12).name
    assert float(m(p, q, 2)) == pytest.approx(eq.metrics.cross_entropy(p, q, eps=1e-12))
    assert get_metric("kl[eps=1e-6]").name == "kl[eps=1e-06]"
    with pytest.raises(ValueError, match=r"`eps` must be in \(0, 1\]; got 0"):
        get_metric("kl[eps=0]")
    with pytest.raises(ValueError, match=r"eps must be a number, as in 'kl\[eps=1e-12\]'; "
                                         r"got 'tiny'"):
        get_metric("kl[eps=tiny]")
    with pytest.raises(ValueError, match=r"\(or cross_entropy / kl with predictions clipped "
                                         r"at eps: 'cross_entropy\[eps=1e-12\]'\); got "
                                         r"'mse\[eps=1\]'"):
        get_metric("mse[eps=1]")

"""The API matrix: every public analysis on a DataArray, a Dataset (where the API takes one),
a dask-backed input (two chunkings) and a non-default ``dim=``, against the default in-memory
call.

"Identical" means equal to the last bit, except where a reduction over a chunked dim adds in
another order: there the tolerance is 1e-12 relative (``SUM_RTOL``), and the test says so.
The ``resample`` / ``aggregate`` rows live in ``tests/test_streaming.py`` and
``tests/test_resampling.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import xarray as xr

import evaluq as eq
from evaluq.errors import CubeError

pytest.importorskip("dask")

SUM_RTOL = 1e-12
"""Reductions over chunked items: per-chunk partial sums combined by dask (another order of
additions than numpy's pairwise sum)."""


def same(a: Any, b: Any, rtol: float = 0.0) -> None:
    """Equal values (NaN where NaN), to the last bit when ``rtol`` is 0; dims compared by name."""
    if isinstance(a, xr.Dataset):
        assert set(a.data_vars) == set(b.data_vars)
        for name in a.data_vars:
            same(a[name], b[name], rtol)
        return
    if isinstance(a, xr.DataArray):
        assert set(a.dims) == set(b.dims), (a.dims, b.dims)
        b = b.transpose(*a.dims)
        for d in a.dims:
            if d in a.coords and d in b.coords:
                assert np.array_equal(a[d].values, b[d].values)
        a, b = a.values, b.values
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "fc" and rtol:
        np.testing.assert_allclose(b, a, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(b, a)


def is_lazy(x: Any) -> bool:
    if isinstance(x, xr.Dataset):
        return any(v.chunks is not None for v in x.data_vars.values())
    return isinstance(x, xr.DataArray) and x.chunks is not None


# --- variance components --------------------------------------------------------------------

def _cube() -> xr.Dataset:
    rng = np.random.default_rng(1)
    score = rng.normal(size=(3, 5, 4))
    boot = score[..., None] + rng.normal(scale=0.1, size=(3, 5, 4, 30))
    return eq.from_arrays(score, boot)


@pytest.mark.parametrize("chunks", [{"language": 2}, {"model": 1, "bootstrap": 7}])
def test_variance_components_dask_and_language_dim(chunks):
    cube = _cube()
    ref = eq.variance_components(cube)
    lazy = cube.chunk(chunks)
    out = eq.variance_components(lazy)
    # bootstrap chunked: per-chunk shifted sums of squares, equal to 1e-12 (the streaming
    # module's documented rule); seed and bootstrap whole: the in-memory kernel, bit for bit
    same(ref, out, 0.0 if "bootstrap" not in chunks else SUM_RTOL)
    renamed = eq.variance_components(cube.rename(language="task"), language_dim="task")
    same(ref.rename(language="task"), renamed)
    renamed_lazy = eq.variance_components(lazy.rename(language="task"), language_dim="task")
    same(ref.rename(language="task"), renamed_lazy,
         0.0 if "bootstrap" not in chunks else SUM_RTOL)


def test_variance_components_language_dim_errors():
    cube = _cube()
    with pytest.raises(CubeError, match="`language_dim` names \\['task'\\]"):
        eq.variance_components(cube, language_dim="task")
    with pytest.raises(ValueError, match="`language_dim` must name the cube's language axis"):
        eq.variance_components(cube, language_dim="seed")
    with pytest.raises(TypeError, match="`language_dim` must be a dim name"):
        eq.variance_components(cube, language_dim=3)  # type: ignore[arg-type]
    both = cube.expand_dims(task=[1])
    with pytest.raises(CubeError, match="also has a 'language' dim"):
        eq.variance_components(both, language_dim="task")


# --- intervals ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scores() -> xr.DataArray:
    values = np.random.default_rng(2).normal(70, 5, size=(4, 6))
    return xr.DataArray(values, dims=("model", "seed"), coords={"model": list("abcd")})


@pytest.mark.parametrize("chunks", [{"model": 1}, {"model": 3, "seed": 2}])
def test_t_interval_and_prob_above(scores, chunks):
    ref = eq.intervals.t_interval(scores, dim="seed")
    ref_ds = ref.to_dataset()
    # a plain array along the last axis
    same(ref.interval.values, eq.intervals.t_interval(scores.values).interval.values)
    # dask-backed, and the dim under another name (first axis)
    lazy = eq.intervals.t_interval(scores.chunk(chunks), dim="seed")
    same(ref_ds, lazy.to_dataset())
    other = scores.rename(seed="run").transpose("run", "model")
    same(ref_ds, eq.intervals.t_interval(other, dim="run").to_dataset())
    p_ref = eq.intervals.prob_above(scores, 70.0, dim="seed")
    same(p_ref, eq.intervals.prob_above(scores.chunk(chunks), 70.0, dim="seed"))
    same(p_ref, eq.intervals.prob_above(other, 70.0, dim="run"))


@pytest.mark.parametrize("chunks", [{"model": 1}, {"model": 3}])
def test_arf_interval(scores, chunks):
    y = scores.isel(seed=0, drop=True)
    guess = scores.isel(seed=1, drop=True)
    ref = eq.intervals.arf_interval(y, guess, arf_alpha=0.1).to_dataset()
    plain = eq.intervals.arf_interval(y.values, guess.values, arf_alpha=0.1).to_dataset()
    for name in ("estimate", "lower", "upper"):
        same(ref[name].values, plain[name].values)
    same(ref, eq.intervals.arf_interval(y.chunk(chunks), guess.chunk(chunks),
                                        arf_alpha=0.1).to_dataset())
    # elementwise: another dim name is carried through
    renamed = eq.intervals.arf_interval(y.rename(model="system"), guess.rename(model="system"),
                                        arf_alpha=0.1).to_dataset()
    same(ref.rename(model="system"), renamed)


# --- agreement ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ratings() -> xr.DataArray:
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, size=40)
    noisy = truth[:, None] + rng.integers(-1, 2, size=(40, 3))
    return xr.DataArray(noisy.astype(float), dims=("item", "rater"))


@pytest.mark.parametrize("measure", ["krippendorff_alpha", "icc"])
@pytest.mark.parametrize("chunks", [{"item": 7}, {"item": 20, "rater": 1}])
def test_agreement(ratings, measure, chunks):
    fn: Callable[..., Any] = getattr(eq.agreement, measure)
    kw = {"n_resamples": 200, "rng": 0}
    ref = fn(ratings, **kw).to_dataset()
    same(ref, fn(ratings.values, **kw).to_dataset())
    same(ref, fn(ratings.chunk(chunks), **kw).to_dataset())
    renamed = fn(ratings.rename(rater="judge"), rater_dim="judge", **kw).to_dataset()
    same(ref, renamed)


@pytest.mark.parametrize("chunks", [7, 20])
def test_cohen_kappa(ratings, chunks):
    r1, r2 = ratings.isel(rater=0, drop=True), ratings.isel(rater=1, drop=True)
    ref = eq.agreement.cohen_kappa(r1.values, r2.values, n_resamples=200, rng=0).to_dataset()
    same(ref, eq.agreement.cohen_kappa(r1, r2, n_resamples=200, rng=0).to_dataset())
    same(ref, eq.agreement.cohen_kappa(r1.chunk(item=chunks), r2.chunk(item=chunks),
                                       n_resamples=200, rng=0).to_dataset())
    same(ref, eq.agreement.cohen_kappa(r1.rename(item="doc"), r2.rename(item="doc"),
                                       n_resamples=200, rng=0).to_dataset())


@pytest.mark.parametrize(("level", "domain"), [("nominal", None), ("ordinal", None),
                                             ("interval", None), ("interval", range(-1, 6))])
@pytest.mark.parametrize("chunks", [{"item": 7}, {"item": 13, "rater": 1}])
def test_krippendorff_alpha_levels_on_dask(ratings, level, domain, chunks):
    """Every level, missing ratings included: the streamed coincidence counts (or the loaded
    table for the interval moments) give identical numbers for any chunking."""
    x = ratings.copy()
    x[::5, 0] = np.nan
    kw = {"level_of_measurement": level, "value_domain": domain, "n_resamples": 200, "rng": 0}
    ref = eq.agreement.krippendorff_alpha(x.values, **kw).to_dataset()
    same(ref, eq.agreement.krippendorff_alpha(x.chunk(chunks), **kw).to_dataset())
    same(ref, eq.agreement.krippendorff_alpha(x.rename(item="doc").chunk(doc=11),
                                              **kw).to_dataset())


@pytest.mark.parametrize("chunks", [6, 25])
def test_cohen_kappa_string_labels_on_dask(ratings, chunks):
    names = np.array(["neg", "neu", "pos", "x", "y", "z", "w"])
    r1 = xr.DataArray(names[ratings.values[:, 0].astype(int) + 1], dims="item")
    r2 = xr.DataArray(names[ratings.values[:, 1].astype(int) + 1], dims="item")
    for weights in (None, "linear"):
        kw = {"weights": weights, "n_resamples": 200, "rng": 0}
        ref = eq.agreement.cohen_kappa(r1.values, r2.values, **kw)
        lazy = eq.agreement.cohen_kappa(r1.chunk(item=chunks), r2.chunk(item=chunks // 2 + 1),
                                        **kw)
        same(ref.to_dataset(), lazy.to_dataset())
        assert lazy.details == ref.details


@pytest.mark.parametrize("measure", ["krippendorff_alpha", "icc", "cohen_kappa"])
def test_agreement_validates_dask_chunk_by_chunk(ratings, measure):
    """A bad value in the last chunk is found when the graph runs, with the specific message."""
    x = ratings.copy()
    x[-1, 1] = np.inf if measure == "krippendorff_alpha" else np.nan
    lazy = x.chunk(item=7)
    match = {"krippendorff_alpha": "`ratings` contains infinite values",
             "icc": r"`ratings` contains 1 NaN value\(s\); the ICC needs complete",
             "cohen_kappa": r"`rater2` contains 1 NaN value\(s\)"}[measure]
    args = (lazy.isel(rater=0), lazy.isel(rater=1)) if measure == "cohen_kappa" else (lazy,)
    with pytest.raises(ValueError, match=match):
        getattr(eq.agreement, measure)(*args, n_resamples=10)


def test_agreement_reads_dask_input_once(ratings):
    """The validation, the streamed counts and the bootstrap's table share one read of each
    chunk (one compute)."""
    import dask.array as dsa

    reads: list[int] = []

    def read(block: np.ndarray) -> np.ndarray:
        reads.append(block.shape[0])
        return block

    data = dsa.from_array(ratings.values, chunks=(7, 3)).map_blocks(read, dtype=float)
    lazy = xr.DataArray(data, dims=("item", "rater"))
    for measure in ("krippendorff_alpha", "icc"):
        reads.clear()
        lazy_res = getattr(eq.agreement, measure)(lazy, n_resamples=50, rng=0)
        assert sorted(reads) == sorted([7] * 5 + [5]), measure
        same(getattr(eq.agreement, measure)(ratings, n_resamples=50, rng=0).to_dataset(),
             lazy_res.to_dataset())
    reads.clear()
    eq.agreement.cohen_kappa(lazy.isel(rater=0), lazy.isel(rater=1), n_resamples=50, rng=0)
    assert sorted(reads) == sorted([7] * 5 + [5])


# --- Dirichlet expectations -----------------------------------------------------------------

@pytest.fixture(scope="module")
def annotations() -> tuple[xr.DataArray, xr.DataArray]:
    rng = np.random.default_rng(4)
    counts = xr.DataArray(rng.integers(0, 5, size=(60, 4)), dims=("item", "class"),
                          coords={"item": np.arange(60) * 10})
    q = xr.DataArray(rng.dirichlet(np.ones(4), size=(2, 60)), dims=("model", "item", "class"),
                     coords={"model": ["a", "b"], "item": np.arange(60) * 10})
    return counts, q


DIRICHLET = ["expected_cross_entropy", "expected_kl", "expected_jsd", "expected_emd",
             "expected_entropy", "expected_probs"]


def _dirichlet(name: str, counts: Any, q: Any, **kw: Any) -> xr.DataArray:
    fn = getattr(eq.dirichlet, name)
    return fn(counts, **kw) if name in ("expected_entropy", "expected_probs") else \
        fn(counts, q, **kw)


@pytest.mark.parametrize("name", DIRICHLET)
@pytest.mark.parametrize("chunks", [7, 25])
def test_dirichlet_expectations(annotations, name, chunks):
    counts, q = annotations
    ref = _dirichlet(name, counts, q)
    # a plain array (items under the default name, no coordinate: compare values)
    plain = _dirichlet(name, counts.values, q.values[0])
    same(ref.isel(model=0, drop=True).values if "model" in ref.dims else ref.values,
         plain.values)
    # a posterior object
    same(ref, _dirichlet(name, eq.dirichlet.posterior(counts), q))
    # dask-backed (counts and q chunked differently): lazy, then the same numbers; JSD's
    # quadrature batches the marginals of a chunk, hence 1e-12 there
    lazy = _dirichlet(name, counts.chunk(item=chunks), q.chunk(item=chunks + 3))
    assert is_lazy(lazy)
    same(ref, lazy.compute(), SUM_RTOL if name == "expected_jsd" else 0.0)
    # items under another name, and items indexed by two dims
    renamed = _dirichlet(name, counts.rename(item="doc"), q.rename(item="doc"), dim="doc")
    same(ref.rename(item="doc"), renamed, SUM_RTOL if name == "expected_jsd" else 0.0)
    stacked_counts = counts.assign_coords(doc=("item", np.repeat(np.arange(6), 10)),
                                          sent=("item", np.tile(np.arange(10), 6)))
    two = stacked_counts.drop_vars("item").set_index(item=["doc", "sent"]).unstack("item")
    q_two = q.assign_coords(doc=("item", np.repeat(np.arange(6), 10)),
                            sent=("item", np.tile(np.arange(10), 6))).drop_vars(
        "item").set_index(item=["doc", "sent"]).unstack("item")
    out = _dirichlet(name, two, q_two, dim=("doc", "sent"))
    back = out.stack(item=("doc", "sent")).drop_vars(["item", "doc", "sent"])
    same(ref.drop_vars("item"), back, SUM_RTOL if name == "expected_jsd" else 0.0)


@pytest.mark.parametrize("chunks", [7, 25])
def test_dirichlet_empirical_and_monte_carlo(annotations, chunks):
    counts, q = annotations
    counts = counts.where(counts.sum("class") > 0, 1)   # every item annotated
    ref = eq.dirichlet.empirical_metric(counts, q, metric="kl")
    lazy = eq.dirichlet.empirical_metric(counts.chunk(item=chunks), q, metric="kl")
    assert is_lazy(lazy)
    same(ref, lazy.compute())
    same(ref.rename(item="doc"), eq.dirichlet.empirical_metric(
        eq.dirichlet.posterior(counts.rename(item="doc"), dim="doc"), q.rename(item="doc"),
        metric="kl"))
    # the Monte Carlo cross-check draws over all items at once: dask input is loaded
    kw = {"metric": "emd", "n_draws": 200, "rng": 0}
    mc = eq.dirichlet.monte_carlo_expectation(counts, q, **kw)
    same(mc, eq.dirichlet.monte_carlo_expectation(counts.chunk(item=chunks), q, **kw))


def test_dirichlet_dim_errors(annotations):
    counts, _ = annotations
    with pytest.raises(ValueError, match=r"`counts` must have dims \('doc', 'class'\)"):
        eq.dirichlet.expected_entropy(counts, dim="doc")
    with pytest.raises(ValueError, match="`dim` 'doc' differs from the posterior's item dims"):
        eq.dirichlet.expected_entropy(eq.dirichlet.posterior(counts), dim="doc")
    with pytest.raises(ValueError, match="model_ranking resamples items under the one dim"):
        eq.dirichlet.model_ranking(eq.dirichlet.posterior(counts.rename(item="doc"), dim="doc"),
                                   {"a": np.full((60, 4), 0.25)})
    with pytest.raises(ValueError, match="several item dims"):
        eq.dirichlet.expected_entropy(counts.values, dim=("doc", "sent"))


def test_dirichlet_bad_values_on_dask_surface_when_computed(annotations):
    counts, q = annotations
    bad = counts.astype(float).copy()
    bad[5, 1] = -1.0
    lazy = eq.dirichlet.expected_kl(bad.chunk(item=10), q)
    with pytest.raises(ValueError, match="`counts` must be non-negative"):
        lazy.compute()
    q_bad = q.copy()
    q_bad[0, 3, 0] += 0.5
    with pytest.raises(ValueError, match="rows summing to 1"):
        eq.dirichlet.expected_kl(counts, q_bad.chunk(item=10)).compute()


# --- measurement error ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def regression() -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    rng = np.random.default_rng(5)
    targets = xr.DataArray(rng.normal(size=48), dims="item")
    predictions = xr.DataArray(targets.values + rng.normal(scale=0.5, size=(2, 48)),
                               dims=("model", "item"), coords={"model": ["a", "b"]})
    sigma = xr.DataArray(rng.uniform(0.1, 0.6, size=48), dims="item")
    return targets, predictions, sigma


REGRESSION = ["expected_mse", "var_mse", "expected_mae", "var_mae"]


def _two_dims(x: xr.DataArray) -> xr.DataArray:
    """The 48 items as 6 documents x 8 sentences."""
    return x.assign_coords(item=np.arange(48)).coarsen(item=8).construct(
        item=("doc", "sent")).drop_vars("item", errors="ignore")


@pytest.mark.parametrize("name", REGRESSION)
@pytest.mark.parametrize("chunks", [(5, 7, 48), (16, 16, 3)])
def test_measurement_error_regression(regression, name, chunks):
    t, p, s = regression
    fn = getattr(eq.measurement_error, name)
    ref = fn(t, p, s)
    # 1-D arrays: numpy sums one row alone, in another order than within the 2-D array
    same(ref.isel(model=0, drop=True), fn(t.values, p.values[0], s.values), SUM_RTOL)
    lazy = fn(t.chunk(item=chunks[0]), p.chunk(item=chunks[1]), s.chunk(item=chunks[2]))
    assert is_lazy(lazy)
    same(ref, lazy.compute(), SUM_RTOL)
    same(ref, fn(t.rename(item="doc"), p.rename(item="doc"), s.rename(item="doc"), dim="doc"))
    same(fn(t, p, 0.3), fn(t.rename(item="doc"), p.rename(item="doc"), 0.3, dim="doc"))
    two = fn(_two_dims(t), _two_dims(p), _two_dims(s), dim=("doc", "sent"))
    same(ref, two, SUM_RTOL)


def test_mse_distribution_dims_and_dask(regression):
    t, p, s = regression
    ref = eq.measurement_error.mse_distribution(t, p, s)
    lazy = eq.measurement_error.mse_distribution(t.chunk(item=10), p.chunk(item=10), s)
    same(ref.mean, lazy.mean, SUM_RTOL)
    same(ref.confidence_interval(), lazy.confidence_interval(), 1e-9)
    two = eq.measurement_error.mse_distribution(_two_dims(t), _two_dims(p), _two_dims(s),
                                                dim=("doc", "sent"))
    same(ref.variance, two.variance, SUM_RTOL)
    same(ref.confidence_interval(), two.confidence_interval(), 1e-9)


@pytest.fixture(scope="module")
def labels() -> tuple[xr.DataArray, xr.DataArray, xr.DataArray]:
    rng = np.random.default_rng(6)
    y = xr.DataArray(rng.integers(0, 3, size=48), dims="item")
    yhat = xr.DataArray(np.where(rng.random((2, 48)) < 0.8, y.values, rng.integers(0, 3, 48)),
                        dims=("model", "item"), coords={"model": ["a", "b"]})
    q = xr.DataArray(rng.uniform(0, 0.2, size=48), dims="item")
    return y, yhat, q


TRANSITION = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.05, 0.05, 0.9]])


@pytest.mark.parametrize("name", ["expected_accuracy", "var_accuracy", "accuracy_distribution"])
@pytest.mark.parametrize("chunks", [5, 16])
def test_measurement_error_accuracy(labels, name, chunks):
    y, yhat, q = labels
    fn = getattr(eq.measurement_error, name)

    def values(out: Any) -> Any:
        return out.to_dataset() if name == "accuracy_distribution" else out

    binary_y, binary_yhat = y % 2, yhat % 2
    for args, kw in (((y, yhat), {"transition": TRANSITION}),
                     ((binary_y, binary_yhat), {"q": q})):
        ref = values(fn(*args, **kw))
        kw_lazy = {k: (v.chunk(item=chunks) if isinstance(v, xr.DataArray) else v)
                   for k, v in kw.items()}
        lazy = fn(*(a.chunk(item=chunks) for a in args), **kw_lazy)
        if name != "accuracy_distribution":
            assert is_lazy(lazy)
        same(ref, values(lazy), SUM_RTOL)
        renamed_kw = {k: (v.rename(item="doc") if isinstance(v, xr.DataArray) else v)
                      for k, v in kw.items()}
        renamed = fn(*(a.rename(item="doc") for a in args), dim="doc", **renamed_kw)
        same(ref, values(renamed))
        two_kw = {k: (_two_dims(v) if isinstance(v, xr.DataArray) else v) for k, v in kw.items()}
        two = fn(*(_two_dims(a) for a in args), dim=("doc", "sent"), **two_kw)
        same(ref, values(two), SUM_RTOL)


def test_measurement_error_dim_errors(regression):
    t, p, s = regression
    with pytest.raises(ValueError, match="`targets` must have a 'doc' dim"):
        eq.measurement_error.expected_mse(t, p, s, dim="doc")
    with pytest.raises(ValueError, match=r"the item dims \['doc', 'sent'\]"):
        eq.measurement_error.var_mae(t, p, s, dim=("doc", "sent"))
    with pytest.raises(ValueError, match="names a dim twice"):
        eq.measurement_error.expected_mae(t, p, s, dim=("item", "item"))
    bad = s.copy()
    bad[3] = -1.0
    lazy = eq.measurement_error.expected_mse(t, p, bad.chunk(item=10))
    with pytest.raises(ValueError, match="`sigma` must be >= 0"):
        lazy.compute()


# --- draws: pairwise differences, ranks, groups, leaderboard --------------------------------

@pytest.fixture(scope="module")
def draws() -> xr.DataArray:
    rng = np.random.default_rng(7)
    values = rng.normal(loc=[[0.0], [0.2], [0.25], [1.0]], scale=0.3, size=(4, 400))
    return xr.DataArray(values, dims=("model", "resample"), coords={"model": list("abcd")})


DRAWS = {
    "pairwise_differences": lambda d, **kw: eq.pairwise_differences(d, **kw),
    "rank_distribution": lambda d, **kw: eq.rank_distribution(d, **kw),
    "significance_groups": lambda d, **kw: eq.significance_groups(d, **kw),
    "leaderboard": lambda d, **kw: eq.leaderboard(d, **kw),
}


@pytest.mark.parametrize("name", list(DRAWS))
@pytest.mark.parametrize("chunks", [{"resample": 64}, {"resample": 150, "model": 2}])
def test_draws_analyses(draws, name, chunks):
    fn = DRAWS[name]
    observed = draws.mean("resample")
    ref = fn(draws, observed=observed)
    # draws under another name, and as posterior (chain, draw) draws
    same(ref, fn(draws.rename(resample="boot"), sample_dims=("boot",), observed=observed))
    posterior = draws.coarsen(resample=100).construct(resample=("chain", "draw"))
    same(ref, fn(posterior, sample_dims=("chain", "draw"), observed=observed))
    # dask-backed draws, two chunkings
    same(ref, fn(draws.chunk(chunks), observed=observed))
    # an aggregate's Dataset (observed + resampled)
    ds = xr.Dataset({"observed": observed, "resampled": draws})
    same(ref, fn(ds))


# --- the two-system test --------------------------------------------------------------------

@pytest.mark.parametrize("method", ["paired", "permutation"])
def test_bootstrap_test_inputs(method):
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, size=300)
    h0 = np.where(rng.random(300) < 0.7, y, 1 - y)
    h1 = np.where(rng.random(300) < 0.8, y, 1 - y)
    kw = {"metrics": "accuracy", "method": method, "n_resamples": 200, "rng": 0}
    ref = eq.bootstrap_test(y, h0, h1, **kw).to_dataset()
    das = [xr.DataArray(a, dims="item") for a in (y, h0, h1)]
    same(ref, eq.bootstrap_test(*das, **kw).to_dataset())
    same(ref, eq.bootstrap_test(*(a.chunk(item=70) for a in das), **kw).to_dataset())

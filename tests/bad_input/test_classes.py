"""The classes of issue 20, each with generated cases (hypothesis): extreme sizes (a lazy
graph that would grow without bound, counts near the float limit), results whose dims were
renamed, values that would silently drop out, messages that must name the argument.

Each class is fixed at its root; ``corpus.py`` holds one case of each, these tests many.
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy.special import digamma, rel_entr

import evaluq as eq
from evaluq import agreement, dirichlet
from evaluq.dirichlet._quadrature import _expected_m_log_m, _taylor_m_log_m
from evaluq.errors import CubeError
from evaluq.resampling import MAX_LAZY_CHUNKS, _block_size

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def small_cube():
    return eq.simulate_cube(n_models=3, n_languages=4, n_seeds=3, n_boot=20, rng=0)


# --- extreme sizes: refused by name, or exact ------------------------------------------------

@SETTINGS
@given(exponent=st.integers(9, 18), chunk=st.sampled_from([None, 1, 1000, 10_000]))
def test_a_lazy_graph_beyond_the_limit_is_refused_before_it_is_built(small_cube, exponent,
                                                                      chunk):
    n = 10**exponent
    size = 10_000 if chunk is None else -(-chunk // 1000) * 1000     # rounded to a block
    if -(-n // size) <= MAX_LAZY_CHUNKS:
        return
    with pytest.raises(ValueError, match=r"`n_resamples`=\d+ in chunks of `chunk_size`=\d+ "
                                         r"would make \d+ dask tasks.*MAX_LAZY_CHUNKS"):
        eq.resample(small_cube, n_resamples=n, chunk_size=chunk, lazy=True)


@pytest.mark.slow
def test_the_suggested_chunk_size_fits_and_the_numbers_do_not_change(small_cube):
    n = (MAX_LAZY_CHUNKS + 1) * 1000
    with pytest.raises(ValueError, match=r"pass chunk_size >= (\d+)") as info:
        eq.resample(small_cube, n_resamples=n, chunk_size=1000, lazy=True)
    suggested = int(info.value.args[0].split("chunk_size >= ")[1].split()[0])
    lazy = eq.resample(small_cube, n_resamples=n, chunk_size=suggested, lazy=True)
    assert len(lazy.score.chunks[0]) <= MAX_LAZY_CHUNKS
    assert _block_size(3, 4) == 1000
    first = eq.resample(small_cube, n_resamples=3000, rng=0)   # the first n of a longer run
    longer = eq.resample(small_cube, n_resamples=n, chunk_size=suggested, lazy=True, rng=0)
    xr.testing.assert_identical(longer.score[:3000].compute(), first.score)


def test_an_in_memory_result_larger_than_memory_is_refused(small_cube):
    with pytest.raises(ValueError, match=r"`n_resamples` would need [\d.]+ [GTP]iB of memory "
                                         r"at once.*pass lazy=True"):
        eq.resample(small_cube, n_resamples=10**13)


def _kl(m, q):
    return rel_entr(m, q).sum(-1)


@SETTINGS
@given(shift=st.integers(0, 62), k=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
@example(shift=51, k=2, seed=8552)    # found by a CI run: the plug-in KL 6.7e-5, equal to rounding
def test_expectations_at_huge_counts_are_finite_and_keep_their_bounds(shift, k, seed):
    """Jensen's bounds (KL convex, entropy concave) hold at every scale up to 2^62, and the
    excess over the plug-in value is (K - 1) / (2 a0) to first order."""
    rng = np.random.default_rng(seed)
    counts = np.floor(rng.random((3, k)) * 4 + 1) * 2.0**shift
    q = rng.dirichlet(np.ones(k), size=3)
    a = counts + 1.0
    m = a / a.sum(-1, keepdims=True)
    kl = dirichlet.expected_kl(counts, q).values
    h = dirichlet.expected_entropy(counts).values
    jsd = dirichlet.expected_jsd(counts, q).values
    assert np.isfinite(kl).all()
    assert np.isfinite(h).all()
    assert np.isfinite(jsd).all()
    # Jensen's bound up to rounding: at 2^51 and beyond the excess (K - 1) / (2 a0) is below
    # the rounding of a sum of O(1) terms, so an absolute 1e-14 (~50 eps) is allowed
    assert (kl >= _kl(m, q) * (1 - 1e-12) - 1e-14).all()
    entropy_m = -(m * np.log(m)).sum(-1)
    assert (h <= entropy_m * (1 + 1e-12) + 1e-300).all()
    assert (jsd >= 0).all()
    a0 = a.sum(-1)
    if a0.min() > 1e6:       # the first-order excess (the plug-in KL here cancels to ~1e-16)
        np.testing.assert_allclose(kl - _kl(m, q), (k - 1) / (2 * a0), rtol=1e-4,
                                   atol=1e-15 * max(1.0, float(_kl(m, q).max())))


def test_expected_kl_at_2_62_against_its_closed_form():
    """At counts of 2^62 the digamma form cancels to rounding: the stable form matches the
    plug-in KL plus (K - 1) / (2 a0) (relative 1e-12), and E[KL] at counts / 2^40 the
    digamma closed form (no cancellation at that size, relative 1e-10)."""
    q = np.array([[0.5, 0.3, 0.2]])
    counts = np.array([[3 * 2.0**62, 2.0**62, 2.0**61]])
    a = counts + 1
    m = a / a.sum()
    got = dirichlet.expected_kl(counts, q).values
    np.testing.assert_allclose(got, _kl(m, q) + 2 / (2 * a.sum()), rtol=1e-12)
    small = counts / 2.0**40 + 1
    a0 = small.sum()
    closed = (-(small / a0 * np.log(q)).sum() +
              (small / a0 * (digamma(small + 1) - digamma(a0 + 1))).sum())
    np.testing.assert_allclose(dirichlet.expected_kl(counts / 2.0**40, q).values, closed,
                               rtol=1e-10)


@pytest.mark.parametrize("a0", [1e5, 1e6, 1e7])
def test_the_taylor_rule_matches_the_quadrature_where_both_hold(a0):
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 50)
    a, b = p * a0, (1 - p) * a0
    q = rng.uniform(0.0, 1.0, 50)
    np.testing.assert_allclose(_taylor_m_log_m(a, b, q / 2), _expected_m_log_m(a, b, q),
                               rtol=1e-12, atol=1e-15)


# --- renamed dims: the missing dim named, with the rename that restores it --------------------

NEW_NAMES = st.text(alphabet="abcdefghij", min_size=1, max_size=6).filter(
    lambda s: s not in ("model", "language", "summary"))


@pytest.fixture(scope="module")
def results(small_cube):
    agg = eq.aggregate(eq.resample(small_cube, n_resamples=200, rng=0))
    return {"variance": eq.variance_components(small_cube),
            "pairwise": eq.pairwise_differences(agg),
            "by_language": eq.pairwise_by_language(eq.resample(small_cube, n_resamples=200,
                                                               rng=0))}


@SETTINGS
@given(which=st.sampled_from([("variance", "model"), ("variance", "summary"),
                              ("pairwise", "model"), ("pairwise", "model_b"),
                              ("by_language", "model_b")]),
       new=NEW_NAMES)
def test_a_table_of_a_result_with_a_renamed_dim_names_it(results, which, new):
    kind, dim = which
    assume(new not in results[kind].variables)   # a name the result uses already ("ci", "sd")
    table = eq.variance_table if kind == "variance" else eq.pairwise_table
    renamed = results[kind].rename({dim: new})
    with pytest.raises(CubeError, match=rf"no '{dim}' dim \(its dims: .*'{new}'"):
        table(renamed)


# --- silently dropped values: refused with the item ---------------------------------------------

@SETTINGS
@given(n=st.integers(2, 30), where=st.data(), in_counts=st.booleans())
def test_a_nan_never_drops_out_of_its_bin(n, where, in_counts):
    rng = np.random.default_rng(n)
    counts = rng.integers(1, 12, n).astype(float)
    values = xr.DataArray(rng.random(n), dims="item", name="v")
    item = where.draw(st.integers(0, n - 1))
    if in_counts:
        counts[item] = np.nan
        match = rf"`n_annotations` .* at item {item} "
    else:
        values[item] = np.nan
        match = rf"`values` 'v' is NaN at item {item} "
    with pytest.raises(ValueError, match=match):
        dirichlet.by_annotation_count(values, counts, bins=(0, 2, 4))


# --- messages naming the argument ---------------------------------------------------------------

@SETTINGS
@given(labels=st.lists(st.one_of(st.integers(0, 3), st.sampled_from("abc")), min_size=2,
                       max_size=12))
def test_cohen_kappa_refuses_mixed_label_kinds(labels):
    kinds = {type(v) for v in labels}
    other = list(reversed(labels))
    if len(kinds) == 1:
        return
    with pytest.raises(TypeError, match=r"`rater1` mixes label types"):
        agreement.cohen_kappa(labels, other, n_resamples=10)


@SETTINGS
@given(n_items=st.integers(2, 20), n_raters=st.integers(2, 5), chunk=st.integers(1, 6))
def test_krippendorff_alpha_without_pairs_names_ratings(n_items, n_raters, chunk):
    """All NaN, or one rating per item: alpha is undefined; on dask a chunk of all-NaN
    items among rated ones adds nothing (no reshape error)."""
    ratings = np.full((n_items, n_raters), np.nan)
    ratings[::2, 0] = 1.0                                   # at most one rating per item
    lazy = xr.DataArray(ratings, dims=("item", "rater")).chunk({"item": chunk})
    for table in (ratings, lazy):
        with pytest.raises(ValueError, match=r"`ratings` has no item rated by at least 2"):
            agreement.krippendorff_alpha(table, n_resamples=10)


@SETTINGS
@given(bad=st.sampled_from([5, 2.5, None, "ab", b"xy"]), at=st.integers(0, 3))
def test_counts_from_annotations_names_the_item_that_is_no_sequence(bad, at):
    rows = [[0, 1], [1], [1, 1, 0]]
    rows.insert(at, bad)
    with pytest.raises(TypeError, match=rf"`annotations` must hold .*item {at} is"):
        dirichlet.counts_from_annotations(rows, n_classes=2)


@pytest.mark.parametrize("entry", [3, "x", [1, 2], {"h1": {}},
                                   {"exp_idxs": 1, "preds": [], "targs": [], "idxs": [],
                                    "epochs": [], "h1": {}},
                                   {"exp_idxs": [], "preds": [], "targs": [], "idxs": [],
                                    "epochs": [], "h1": 5}])
def test_experiment_load_names_the_malformed_entry(tmp_path, entry):
    import json
    file = tmp_path / "outcomes.json"
    file.write_text(json.dumps({"base": entry}))
    with pytest.raises(ValueError, match=r"baseline 'base' in .*outcomes\.json"):
        eq.Experiment.load(file)


@SETTINGS
@given(data=st.binary(min_size=0, max_size=2000), suffix=st.sampled_from([".nc", ".txt", ""]))
def test_open_cube_on_any_bytes_names_the_file(tmp_path_factory, data, suffix):
    """Random bytes (an empty file, text, a truncated header) are never read as a cube."""
    path = tmp_path_factory.mktemp("bytes") / f"file{suffix}"
    path.write_bytes(data)
    with pytest.raises(CubeError, match=rf"`path` '{path}' cannot be read as a cube"):
        eq.open_cube(path)

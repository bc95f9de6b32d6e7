"""The draws of a test run one chunk ahead in a thread: the numbers of a plain loop."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import evaluq as eq
from evaluq.significance import _engine


def _serial(chunks, depth=2):
    return chunks


@pytest.mark.parametrize(("method", "k", "n"), [("paired", 6, 5_000),
                                                ("berg-kirkpatrick", 3, 5_000),
                                                ("permutation", 4, 3_000)])
def test_prefetched_draws_give_the_numbers_of_a_plain_loop(rng, monkeypatch, method, k, n):
    y = rng.integers(0, k, n)
    h0 = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n))
    h1 = np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n))
    kw = dict(method=method, n_resamples=1500, rng=3)
    monkeypatch.setattr(_engine, "CHUNK_BYTES", 2**19)       # several chunks
    threaded = eq.bootstrap_test(y, h0, h1, **kw)
    monkeypatch.setattr(_engine, "prefetched", _serial)
    plain = eq.bootstrap_test(y, h0, h1, **kw)
    np.testing.assert_array_equal(threaded.distribution, plain.distribution)
    np.testing.assert_array_equal(threaded.bootstrap_distribution, plain.bootstrap_distribution)


def test_prefetched_keeps_order_and_raises_the_producers_error():
    assert list(_engine.prefetched(iter(range(50)), depth=3)) == list(range(50))

    def failing():
        yield 1
        raise ValueError("draw failed")

    with pytest.raises(ValueError, match="draw failed"):
        list(_engine.prefetched(failing()))


def test_closing_stops_the_producer():
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    before = threading.active_count()
    it = _engine.prefetched(endless(), depth=2)
    assert next(it) == 0
    it.close()
    assert threading.active_count() == before
    assert len(produced) <= 5                     # the producer stopped a few chunks ahead


def test_one_blas_thread_while_drawing_and_restored_after(rng, monkeypatch):
    from threadpoolctl import threadpool_info

    before = {i["filepath"]: i["num_threads"] for i in threadpool_info()}
    seen = []
    real = _engine.Unit.sums01

    def spy(self, weights):
        seen.append({i["filepath"]: i["num_threads"] for i in threadpool_info()
                     if i["user_api"] == "blas"})
        return real(self, weights)

    monkeypatch.setattr(_engine.Unit, "sums01", spy)
    monkeypatch.setattr(_engine, "CHUNK_BYTES", 2**16)
    y = rng.integers(0, 3, 2000)
    eq.bootstrap_test(y, rng.integers(0, 3, 2000), y, method="paired", n_resamples=500, rng=0)
    assert len(seen) > 1
    assert all(n == 1 for chunk in seen for n in chunk.values())
    assert {i["filepath"]: i["num_threads"] for i in threadpool_info()} == before
    # nested users (concurrent tests): the last one restores
    with _engine.single_blas_thread(), _engine.single_blas_thread():
        pass
    assert {i["filepath"]: i["num_threads"] for i in threadpool_info()} == before

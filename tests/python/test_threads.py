# SPDX-License-Identifier: BSD-3-Clause
"""Threads hammering one object: one-key adds and lookups, batched updates and lookups (which release the GIL),
encodings, copies and saves, all at once. Nothing may crash, every key added must be found, and the filter
must end as the same adds made one thread at a time would leave it (the calls are serialised per object)."""
import threading

import pytest

import nidus


def run_threads(targets):
    errors = []

    def wrap(fn):
        def go():
            try:
                fn()
            except BaseException as e:  # noqa: B902 - reported below
                errors.append(e)
        return go

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("make", [
    lambda: nidus.CuckooFilter(400000, 0.001),
    lambda: nidus.CuckooFilter(4000, 0.01, expansion=2),  # grows while the threads run
    lambda: nidus.BloomFilter(400000, 0.01),
    lambda: nidus.BloomFilter(1000, 0.01, layout="compact"),
    lambda: nidus.CountingBloomFilter(400000),
])
def test_threads_hammer_one_filter(make, tmp_path):
    f = make()
    per = 20000
    groups = [["t%d-%d" % (t, i) for i in range(per)] for t in range(6)]

    def one_at_a_time(ks):
        def go():
            for k in ks:
                f.add(k)
                assert k in f
        return go

    def batched(ks):
        def go():
            for i in range(0, len(ks), 2500):
                f.update(ks[i:i + 2500])
                assert all(f.contains_many(ks[:i + 2500]))
        return go

    def readers():
        for _ in range(20):
            f.contains_many(groups[0])
            f.to_bytes()
            f.copy()
            len(f)
            f.stats()

    def saver():
        for i in range(5):
            f.save(tmp_path / ("s%d.nidus" % i))

    run_threads([one_at_a_time(groups[0]), one_at_a_time(groups[1]), batched(groups[2]), batched(groups[3]),
                 batched(groups[4]), one_at_a_time(groups[5]), readers, readers, saver])
    for g in groups:
        assert all(f.contains_many(g))
    assert len(f) >= per * 6 * (0.95 if isinstance(f, nidus.BloomFilter) else 1)
    for i in range(5):
        assert len(nidus.open(tmp_path / ("s%d.nidus" % i))) <= len(f)


def test_threads_on_a_mapped_file(tmp_path):
    f = nidus.CuckooFilter(3000000)
    ks = ["k%d" % i for i in range(200000)]
    f.update(ks)
    path = tmp_path / "f.nidus"
    f.save(path)
    m = nidus.open(path, writable=True)  # blocks checked lazily as threads touch them

    def look():
        assert all(m.contains_many(ks))
        assert all(k in m for k in ks[::7])

    def write():
        m.update(["new%d" % i for i in range(20000)])

    run_threads([look, look, write, look])
    assert all(m.contains_many(["new%d" % i for i in range(20000)]))
    m.save()
    assert len(nidus.open(path)) == 220000


def test_update_iterable_that_uses_the_same_filter():
    f = nidus.CuckooFilter(100000)

    def gen():
        for i in range(20000):
            if i % 1000 == 0:
                f.add("inner%d" % i)  # runs while update() is between chunks: allowed
            yield "k%d" % i

    f.update(gen())
    assert all(f.contains_many(["k%d" % i for i in range(20000)]))
    assert len(f) == 20020

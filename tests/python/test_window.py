# SPDX-License-Identifier: BSD-3-Clause
"""nidus.WindowedCuckooFilter: keys that expire. Every call at an explicit `now` (or the current time), the
window's guarantee (present through [t, t + window], gone from t + 6 epochs), batched calls against one-key ones,
files, encodings, pickling and copies, and the errors for bad input."""
import copy
import inspect
import os
import pickle
import time

import pytest

import nidus

W = 1000  # ticks; an epoch is ceil(W / 5) = 200


def keys(n, prefix="k"):
    return ["%s%d" % (prefix, i) for i in range(n)]


def make(n=10000, **kw):
    return nidus.WindowedCuckooFilter(n, W, 0.001, **kw)


def test_keys_live_through_their_window_and_expire_after():
    f = make()
    added = keys(5000)
    for k in added:
        f.add(k, now=10_000)
    for now in (10_000, 10_500, 10_000 + W):
        assert all(f.contains(k, now) for k in added)
        assert all(f.contains_many(added, now=now))
    gone = 10_000 + 6 * (W // 5)
    assert sum(f.contains(k, now=gone) for k in added) < 50  # as absent keys: at the error rate
    assert f.stats(now=gone)["live"] == 0


def test_in_and_len_are_at_the_current_time():
    f = nidus.WindowedCuckooFilter(1000, 60_000)  # a minute of milliseconds
    for k in keys(100):
        f.add(k)
    assert all(k in f for k in keys(100))
    assert len(f) == 100
    assert f.stats()["items"] == 100
    now_ms = int(time.time() * 1000)
    assert abs(f.stats()["now"] - now_ms) < 60_000
    # far in the future every key has expired
    assert not any(f.contains(k, now=now_ms + 10 * 60_000) for k in keys(100))


def test_count_remove_and_discard_at_a_time():
    f = make()
    f.add("a", now=1000)
    f.add("a", now=1100)
    assert f.count("a", now=1100) == 2
    f.remove("a", now=1100)
    assert f.count("a", now=1100) == 1
    assert f.discard("a", now=1100) is True
    assert f.discard("a", now=1100) is False
    with pytest.raises(KeyError):
        f.remove("a", now=1100)
    f.add("b", now=1000)
    with pytest.raises(KeyError):  # expired: not removable
        f.remove("b", now=1000 + 10 * W)


def test_batched_calls_equal_one_key_calls():
    a, b = make(), make()
    ks = keys(3000) + [b"raw", bytearray(b"buf"), memoryview(b"mv")]
    for k in ks:
        a.add(k, now=5000)
    b.update(iter(ks), now=5000)  # any iterable
    assert a.to_bytes() == b.to_bytes()
    probe = ks + keys(3000, "absent")
    for now in (5000, 5000 + W, 5000 + 3 * W):
        assert b.contains_many(probe, now=now) == [a.contains(k, now=now) for k in probe]


def test_files_encodings_pickles_and_copies(tmp_path):
    f = make()
    added = keys(2000)
    f.update(added, now=7000)
    path = str(tmp_path / "w.nidus")
    f.save(path)
    for g in (nidus.open(path), nidus.open(path, writable=True), nidus.open(path, lazy=False),
              nidus.from_bytes(f.to_bytes()), nidus.from_bytes(f.to_bytes(), writable=True),
              pickle.loads(pickle.dumps(f)), copy.copy(f), copy.deepcopy(f), f.copy()):
        assert type(g) is nidus.WindowedCuckooFilter
        assert g.kind == "window"
        assert all(g.contains_many(added, now=7000))
        assert g.stats(now=7000)["live"] == 2000
        assert g.stats()["window"] == W
        assert g.to_bytes() == f.to_bytes()
    ro = nidus.open(path)
    assert ro.read_only
    with pytest.raises(nidus.ReadOnlyError):
        ro.add("x", now=7000)
    rw = nidus.open(path, writable=True)
    rw.add("new", now=7100)
    rw.save()
    again = nidus.open(path)
    assert again.contains("new", now=7100) and all(again.contains_many(added, now=7100))


def test_stats():
    f = make(bucket_size=4, fingerprint_bits=12, seed=7)
    f.add("k", now=2000)
    s = f.stats(now=2000)
    assert s["kind"] == "window" and s["window"] == W and s["epoch_ticks"] == W // 5
    assert s["bucket_size"] == 4 and s["fingerprint_bits"] == 12
    assert s["entries"] == 1 and s["live"] == 1 and s["items"] == 1 and s["now"] == 2000
    assert s["capacity"] >= 10000
    assert s["expansion"] == 0 and s["max_memory"] == 0 and s["sub_filters"] == 1


def test_full_filter_raises():
    f = nidus.WindowedCuckooFilter(100, W, 0.01)
    with pytest.raises(nidus.FilterFull):
        for k in keys(100_000):
            f.add(k, now=1000)


def test_growth_within_a_memory_bound(tmp_path):
    f = nidus.WindowedCuckooFilter(100, W, 0.01, expansion=2, max_memory=5000)
    s = f.stats(now=1000)
    assert s["expansion"] == 2 and s["max_memory"] == 5000 and s["sub_filters"] == 1
    added = keys(500)
    f.update(added, now=1000)  # five times the capacity: grown, within the bound
    assert f.stats(now=1000)["sub_filters"] == 3
    # one key at a time until the next table would pass the bound: FilterFull, that add changing nothing
    for k in keys(5000, "m"):
        before = f.to_bytes()
        try:
            f.add(k, now=1000)
        except nidus.FilterFull:
            assert f.to_bytes() == before
            break
        added.append(k)
    else:
        pytest.fail("5,500 keys went into a filter bounded to 5,000 bytes")
    assert all(f.contains_many(added, now=1000 + W))  # nothing added before is lost
    s = f.stats(now=1000)
    assert s["sub_filters"] == 3 and s["max_memory"] == 5000
    # update: the keys before the failing one stay added, then FilterFull
    with pytest.raises(nidus.FilterFull):
        f.update(keys(5000, "u"), now=1000)
    assert all(f.contains_many(added, now=1000)) and f.stats(now=1000)["sub_filters"] == 3
    # unbounded, the same keys grow a fourth table
    u = nidus.WindowedCuckooFilter(100, W, 0.01, expansion=2)
    u.update(added + keys(1000, "m2"), now=1000)
    assert u.stats(now=1000)["sub_filters"] > 3 and u.stats()["max_memory"] == 0
    # saved and loaded, copied and pickled, the bound holds: the next key raises FilterFull there too
    path = str(tmp_path / "bounded.nidus")
    f.save(path)
    full = f.to_bytes()
    for g in (nidus.open(path), nidus.open(path, writable=True), nidus.open(path, lazy=False),
              nidus.from_bytes(full, writable=True), pickle.loads(pickle.dumps(f)), copy.deepcopy(f), f.copy()):
        s = g.stats(now=1000)
        assert s["expansion"] == 2 and s["max_memory"] == 5000 and s["sub_filters"] == 3
        assert g.to_bytes() == full
        assert all(g.contains_many(added, now=1000))
        if not g.read_only:
            with pytest.raises(nidus.FilterFull):
                g.update(keys(5000, "m"), now=1000)
            assert g.stats(now=1000)["sub_filters"] == 3
    # once the burst has expired, the grown tables go and the filter takes keys again under the same bound
    later = 1000 + 2 * W
    f.update(keys(500, "late"), now=later)
    s = f.stats(now=later)
    assert s["live"] == 500 and s["max_memory"] == 5000 and s["sub_filters"] <= 3


def test_bad_memory_bounds():
    least = nidus.WindowedCuckooFilter(100, W, 0.01, expansion=2).stats()["memory_bytes"]
    assert nidus.WindowedCuckooFilter(100, W, 0.01, expansion=2, max_memory=least).stats()["max_memory"] == least
    with pytest.raises(ValueError, match="max_memory=%d is below the %d bytes" % (least - 1, least)):
        nidus.WindowedCuckooFilter(100, W, 0.01, expansion=2, max_memory=least - 1)
    with pytest.raises(ValueError, match="needs expansion > 0"):
        nidus.WindowedCuckooFilter(100, W, max_memory=5000)
    with pytest.raises(ValueError, match="needs expansion > 0"):
        nidus.WindowedCuckooFilter(100, W, expansion=0, max_memory=5000)
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match="max_memory"):
            nidus.WindowedCuckooFilter(100, W, expansion=2, max_memory=bad)
    for bad in ("5000", 5000.0, True):
        with pytest.raises(TypeError, match="max_memory"):
            nidus.WindowedCuckooFilter(100, W, expansion=2, max_memory=bad)
    for bad in (-1, 32769):
        with pytest.raises(ValueError, match="expansion"):
            nidus.WindowedCuckooFilter(100, W, expansion=bad)
    assert nidus.WindowedCuckooFilter(100, W, max_memory=0).stats()["max_memory"] == 0


def test_bad_parameters_and_keys():
    with pytest.raises(ValueError):
        nidus.WindowedCuckooFilter(100, 0)
    with pytest.raises(ValueError):
        nidus.WindowedCuckooFilter(0, W)
    with pytest.raises(ValueError):
        nidus.WindowedCuckooFilter(100, W, 1.5)
    with pytest.raises(ValueError):
        nidus.WindowedCuckooFilter(100, W, bucket_size=3)
    with pytest.raises(ValueError):
        nidus.WindowedCuckooFilter(100, W, fingerprint_bits=30)
    with pytest.raises(TypeError):
        nidus.WindowedCuckooFilter(100)
    f = make()
    with pytest.raises(ValueError):
        f.add("k", now=-1)
    with pytest.raises(TypeError):
        f.add("k", now="soon")
    with pytest.raises(TypeError):
        f.add(3, now=1000)
    with pytest.raises(TypeError):
        f.contains_many([b"a", 3], now=1000)
    with pytest.raises(TypeError):
        f.add("k", 1000, 2000)


def test_signatures():
    sig = str(inspect.signature(nidus.WindowedCuckooFilter))
    assert sig.startswith("(capacity, window, error_rate=0.01")
    assert sig.endswith("*, max_kicks=0, expansion=0, max_memory=0)")
    f = make()
    assert str(inspect.signature(f.add)) == "(key, now=None)"
    assert str(inspect.signature(f.stats)) == "(now=None)"
    assert "WindowedCuckooFilter" in nidus.__all__

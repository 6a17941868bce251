# SPDX-License-Identifier: BSD-3-Clause
"""The one-key fast path (an ASCII str hashed and probed inline) and deferred cuckoo and Bloom adds (queued, applied
in a batch, or by the next call of any other kind): the same answers, counts and bytes as the same calls made with
bytes keys, which take the portable path and are applied at once; every reader sees a deferred add; errors reach
the call that made them."""
import copy
import pickle

import pytest

import nidus
from nidus import _nidus
from cli_util import run

# The cuckoo filters' inline views hold from 2^16 buckets (about 250,000 items at b=4): the shapes that test them
# are made at least this large.
VIEW_CAPACITY = 300000

SHAPES = {
    "cuckoo": lambda n: nidus.CuckooFilter(max(n, VIEW_CAPACITY), 0.001),  # the default: b=2 f=12
    "cuckoo-b4f13": lambda n: nidus.CuckooFilter(max(n, VIEW_CAPACITY), 0.001, bucket_size=4),  # at a bit offset
    "cuckoo-b2": lambda n: nidus.CuckooFilter(max(n, VIEW_CAPACITY), 0.001, bucket_size=2, fingerprint_bits=12),
    "cuckoo-b2f13": lambda n: nidus.CuckooFilter(max(n, VIEW_CAPACITY), bucket_size=2, fingerprint_bits=13),
    "cuckoo-b4f8": lambda n: nidus.CuckooFilter(max(n, VIEW_CAPACITY), 0.03, bucket_size=4, fingerprint_bits=8),
    "cuckoo-semi": lambda n: nidus.CuckooFilter(max(n, VIEW_CAPACITY), 0.001, bucket_size=4, semi_sort=True),
    "cuckoo-small": lambda n: nidus.CuckooFilter(n, 0.001),  # under 2^16 buckets: the library's calls
    "cuckoo-grows": lambda n: nidus.CuckooFilter(n // 4, 0.01, expansion=2),
    "cuckoo-no-growth": lambda n: nidus.CuckooFilter(2 * n, 0.01, expansion=0),
    "bloom": lambda n: nidus.BloomFilter(n, 0.01),
    "bloom-grows": lambda n: nidus.BloomFilter(n // 4, 0.01),
    "bloom-compact": lambda n: nidus.BloomFilter(n, 0.01, layout="compact"),
}
# The inline view each cuckoo shape's one-key calls read when empty (None: the library's calls), on a CPU with the
# fast path (AVX2 and BMI2; elsewhere every shape reads none).
VIEWS = {"cuckoo": "plain", "cuckoo-b4f13": "bits", "cuckoo-b2": "plain", "cuckoo-b2f13": "bits", "cuckoo-b4f8": "plain",
         "cuckoo-semi": "semi", "cuckoo-small": None}
FAST_PATH = _nidus._inline_view(nidus.CuckooFilter(VIEW_CAPACITY)) is not None


def random_keys(rng, n):
    """ASCII str keys of 0 to 44 characters (every path of the inline hash), some repeated, some not ASCII."""
    ks = ["".join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(45))) for _ in range(n)]
    ks += [ks[rng.randrange(n)] for _ in range(n // 10)]
    ks += ["\u00e9t\u00e9 %d" % i for i in range(n // 20)]
    rng.shuffle(ks)
    return ks


def outcome(call, *args):
    """A call's value, or the name of the nidus error it raised (a filter that may not grow fills up)."""
    try:
        return call(*args)
    except nidus.Error as e:
        return type(e).__name__


@pytest.mark.parametrize("shape", SHAPES)
def test_str_keys_act_as_their_bytes(shape, rng):
    n = 70000
    fast, slow = SHAPES[shape](n), SHAPES[shape](n)
    if shape in VIEWS:
        assert _nidus._inline_view(fast) == (VIEWS[shape] if FAST_PATH else None)
    ks = random_keys(rng, n)
    added = []
    for i, k in enumerate(ks):
        got = outcome(fast.add, k)
        assert got == outcome(slow.add, k.encode()), k
        if got != "FilterFull":
            added.append(k)
        if i % 7919 == 0:
            assert len(fast) == len(slow)
            assert (k in fast) and (k.encode() in slow)
    assert len(fast) == len(slow)
    assert fast.to_bytes() == slow.to_bytes()
    assert all(k in fast for k in added)
    absent = ["absent %d %s" % (i, "x" * (i % 40)) for i in range(20000)]
    assert [a in fast for a in absent] == [a.encode() in slow for a in absent]
    assert fast.contains_many(added) == [True] * len(added)
    assert fast.contains_many(ks) == slow.contains_many([k.encode() for k in ks])


def cli_check(path, keys):
    """`nidus check` of the file: 1 or 0 for each key."""
    out = run("check", path, input=b"\n".join(keys) + b"\n", check_rc=0).stdout.split()
    return [int(x) for x in out]


def numeric_keys(rng, n, prefix=""):
    """Distinct ASCII str keys of 1 to 26 characters (every inline hash path up to 32 bytes but one)."""
    return ["%s%d:%s" % (prefix, i, str(rng.getrandbits(64))[:rng.randrange(20)]) for i in range(n)]


def assert_answers_as_the_library(f, keys, present=()):
    """The one-key fast path (str keys) answers as the library's call (the same keys as bytes, which take the
    portable path) and its batched lookup; every key of `present` is found. The fast path's answers."""
    fast = [k in f for k in keys]
    assert fast == [k.encode() in f for k in keys]
    assert fast == f.contains_many(keys)
    missing = [k for k in present if k not in f]
    assert not missing, missing[:5]
    return fast


BITS_SHAPES = {
    "b4f13": lambda cap, **kw: nidus.CuckooFilter(cap, 0.001, bucket_size=4, **kw),  # 52-bit buckets
    "b2f13": lambda cap, **kw: nidus.CuckooFilter(cap, bucket_size=2, fingerprint_bits=13, **kw),  # 26 bits
}


@pytest.mark.parametrize("shape", BITS_SHAPES)
def test_bit_offset_view_answers_as_the_library_and_the_cli(shape, rng, tmp_path):
    """Buckets at a bit offset: str keys added through the fast path leave the bytes the library's adds leave,
    and their lookups answer as the library, its batched call and `nidus check` on the saved file."""
    f, twin = BITS_SHAPES[shape](VIEW_CAPACITY), BITS_SHAPES[shape](VIEW_CAPACITY)
    assert _nidus._inline_view(f) == ("bits" if FAST_PATH else None)
    added = numeric_keys(rng, 200000)
    for k in added:
        f.add(k)
        twin.add(k.encode())
    assert _nidus._inline_view(f) == ("bits" if FAST_PATH else None)
    assert f.to_bytes() == twin.to_bytes()
    probes = added[::5] + numeric_keys(rng, 40000, "absent-")
    fast = assert_answers_as_the_library(f, probes, added)
    path = str(tmp_path / "bits.nidus")
    f.save(path)
    assert cli_check(path, [k.encode() for k in probes]) == [int(x) for x in fast]


def test_bit_offset_view_falls_back_and_returns(rng, tmp_path):
    """Every state the view does not describe takes the library's calls with the same answers: stash entries of
    a filter that may not grow (back to the view once removes took them), growth, removes, a read-only mapping,
    and after `nidus del` compacted the grown filter back to one table, the view again."""
    view = "bits" if FAST_PATH else None
    f = BITS_SHAPES["b4f13"](VIEW_CAPACITY, expansion=0)
    added, pool = [], numeric_keys(rng, 2 * VIEW_CAPACITY)
    for k in pool:  # until the first stash entry (a full pair, no room found), then on to the first refusal
        try:
            f.add(k)
        except nidus.FilterFull:
            break
        added.append(k)
    assert f.stats()["load"] > 0.9
    assert _nidus._inline_view(f) is None  # stash entries: the library's calls
    absent = numeric_keys(rng, 20000, "absent-")
    assert_answers_as_the_library(f, added[::3] + absent, added)
    removed = 0  # removes: a stash entry moves into a slot freed in its pair; the view holds once none is left
    while removed < len(added) * 9 // 10 and (removed % 1000 or _nidus._inline_view(f) is None):
        f.remove(added[removed])
        removed += 1
    assert _nidus._inline_view(f) == view, removed
    assert_answers_as_the_library(f, added[::3] + absent, added[removed:])

    g = BITS_SHAPES["b4f13"](VIEW_CAPACITY, expansion=2)
    ks = numeric_keys(rng, 2 * VIEW_CAPACITY, "g")
    for k in ks:
        g.add(k)
    assert g.stats()["sub_filters"] > 1 and _nidus._inline_view(g) is None  # grown
    assert_answers_as_the_library(g, ks[::7] + absent, ks)
    path = str(tmp_path / "grown.nidus")
    g.save(path)
    assert _nidus._inline_view(nidus.open(path, lazy=False)) is None  # read-only
    gone, kept = ks[VIEW_CAPACITY // 2:], ks[: VIEW_CAPACITY // 2]
    for k in gone:  # removes
        g.remove(k)
    assert_answers_as_the_library(g, ks[::7] + absent, kept)
    # the same removes by `nidus del`, which runs the compaction they start to the end before it saves
    run("del", path, input=b"\n".join(k.encode() for k in gone) + b"\n", check_rc=0)
    compacted = nidus.open(path, writable=True, lazy=False)
    assert compacted.stats()["sub_filters"] == 1
    assert _nidus._inline_view(compacted) == view
    fast = assert_answers_as_the_library(compacted, kept[::3] + absent, kept)
    assert cli_check(path, [k.encode() for k in kept[::3] + absent]) == [int(x) for x in fast]


def readers_see_deferred_adds(f, tmp_path):
    """One-key adds to an empty f, each followed by a reader of another kind (in, len, count, a pickle, copies,
    bytes, stats, repr, contains_many, update, a bytes key, a saved file): every reader sees the add before it."""
    f.add("a key of twenty bytes")
    assert "a key of twenty bytes" in f
    f.add("x1")
    assert len(f) == 2
    f.add("x2")
    assert f.count("x2") == 1
    f.add("x3")
    assert pickle.loads(pickle.dumps(f)).count("x3") == 1
    f.add("x4")
    assert copy.copy(f).count("x4") == 1 and copy.deepcopy(f).count("x4") == 1
    f.add("x5")
    assert nidus.from_bytes(f.to_bytes()).count("x5") == 1
    f.add("x6")
    assert f.stats()["items"] == 7
    f.add("x7")
    assert "items=8" in repr(f)
    f.add("x9")
    assert f.contains_many(["x9"]) == [True]
    f.add("x10")
    f.update(["x11"])
    assert len(f) == 11
    f.add("x12")
    assert b"x12" in f and f.count(b"x12") == 1
    f.add("x13")
    f.save(str(tmp_path / "f.nidus"))
    assert "x13" in nidus.open(str(tmp_path / "f.nidus"))


def test_every_reader_sees_a_deferred_add(tmp_path):
    f = nidus.CuckooFilter(100000, 0.001)
    readers_see_deferred_adds(f, tmp_path)
    f.add("x8")
    f.remove("x8")
    assert "x8" not in f and len(f) == 13


def adds_inside_batched_calls(f):
    """Adds made by the iterable a batched call (update, contains_many) is reading, between two of its chunks: the
    call sees each of them in order, and the filter holds every key."""
    def keys():
        for i in range(50):
            f.add("inner %d" % i)  # queued while update is between two chunks
            yield "outer %d" % i
    f.update(keys())
    assert len(f) == 100
    found = f.contains_many("inner %d" % i for i in range(50) if f.add("again %d" % i) is None)
    assert found == [True] * 50 and len(f) == 150


def test_adds_made_by_an_iterable_inside_a_batched_call(tmp_path):
    f = nidus.CuckooFilter(100000, 0.001)
    adds_inside_batched_calls(f)
    f.add("last")
    f.save(str(tmp_path / "f.nidus"))
    g = nidus.open(str(tmp_path / "f.nidus"))
    assert "last" in g and len(g) == 151


def fill_and_grow(full, grows):
    """Adds "k0", "k1", ... one by one to `full`, which may not grow, until one raises nidus.FilterFull from its
    own call, and 20,000 keys one by one to `grows`, which grows: every key added is in its filter, and `grows`
    has more than one sub-filter. Returns the keys each took."""
    added = []
    with pytest.raises(nidus.FilterFull):
        for i in range(100000):
            k = "k%d" % i
            full.add(k)
            added.append(k)
    assert all(k in full for k in added)
    ks = ["g%d" % i for i in range(20000)]
    for k in ks:
        grows.add(k)
    assert all(k in grows for k in ks)
    assert grows.stats()["sub_filters"] > 1
    return added, ks


def test_a_full_filter_raises_from_the_add_that_failed():
    # never grows: its adds are never deferred; grows (expansion=1): deferred adds apply through growth
    f, g = nidus.CuckooFilter(100, expansion=0), nidus.CuckooFilter(1000)
    added, ks = fill_and_grow(f, g)
    assert len(f) == len(added) and len(g) == len(ks)


def add_from_threads(f):
    """Four threads each add 20,000 keys to f one by one (deferred adds), looking some up as they go: every key
    is found by its own thread and, after all have joined, by contains_many. Returns the four groups of keys."""
    import threading
    groups = [["t%d-%d" % (t, i) for i in range(20000)] for t in range(4)]
    missing = []

    def go(ks):
        for i, k in enumerate(ks):
            f.add(k)
            if i % 101 == 0 and ks[i // 2] not in f:
                missing.append(ks[i // 2])
        missing.extend(k for k in ks if k not in f)
    threads = [threading.Thread(target=go, args=(g,)) for g in groups]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not missing
    assert all(all(f.contains_many(g)) for g in groups)
    return groups


def test_deferred_adds_under_threads():
    f = nidus.CuckooFilter(200000, 0.001)
    add_from_threads(f)
    assert len(f) == 80000


def test_every_reader_sees_a_deferred_bloom_add(tmp_path):
    f = nidus.BloomFilter(100000, 0.001)
    readers_see_deferred_adds(f, tmp_path)
    f.add("x8")
    assert f.add_new("x8") is False and f.add_new("x8b") is True and len(f) == 15


def test_bloom_adds_made_by_an_iterable_inside_a_batched_call():
    f = nidus.BloomFilter(100000, 0.001)
    adds_inside_batched_calls(f)
    g = nidus.BloomFilter(100000, 0.001)  # the same keys added at once as bytes: the same bits
    g.update(("%s %d" % (w, i)).encode() for w in ("inner", "outer", "again") for i in range(50))
    assert f.to_bytes() == g.to_bytes()


@pytest.mark.parametrize("layout", ["blocked", "compact"])
def test_a_full_bloom_filter_raises_from_the_add_that_failed(layout):
    # adds that may fill it run at once; grows: adds that may grow it run at once, the rest are queued
    f, g = nidus.BloomFilter(100, expansion=0, layout=layout), nidus.BloomFilter(1000)
    added, ks = fill_and_grow(f, g)
    assert len(f) == 100 and len(added) >= 100
    h = nidus.BloomFilter(1000)
    for k in ks:
        h.add(k.encode())
    assert g.to_bytes() == h.to_bytes()


def test_deferred_bloom_adds_under_threads():
    f = nidus.BloomFilter(200000, 0.001)
    groups = add_from_threads(f)
    g = nidus.BloomFilter(200000, 0.001)
    for grp in groups:
        g.update(grp)
    assert f.to_bytes() == g.to_bytes()


# ---- random calls: str keys on one filter, their bytes on another (the portable path, applied at once)
# Each call takes (a, b, key, rng, pool) and gives the two answers (an error's name for a nidus error).
def _update(a, b, k, rng, pool):
    ks = rng.sample(pool, 50)
    return outcome(a.update, ks), outcome(b.update, [q.encode() for q in ks])


def _contains_many(a, b, k, rng, pool):
    ks = rng.sample(pool, 50)
    return a.contains_many(ks), b.contains_many([q.encode() for q in ks])


CALLS = {
    "add": lambda a, b, k, rng, pool: (outcome(a.add, k), outcome(b.add, k.encode())),
    "add_new": lambda a, b, k, rng, pool: (outcome(a.add_new, k), outcome(b.add_new, k.encode())),
    "in": lambda a, b, k, rng, pool: (k in a, k.encode() in b),
    "count": lambda a, b, k, rng, pool: (a.count(k), b.count(k.encode())),
    "discard": lambda a, b, k, rng, pool: (a.discard(k), b.discard(k.encode())),
    "update": _update,
    "contains_many": _contains_many,
    "len": lambda a, b, k, rng, pool: (len(a), len(b)),
    "to_bytes": lambda a, b, k, rng, pool: (a.to_bytes(), b.to_bytes()),
}
# Each kind's calls and their shares of the steps (the rest of the steps make no call); "reload" replaces the
# str-keyed filter by its pickle or its copy.
KIND_CALLS = {
    "cuckoo": [("add", 0.6), ("in", 0.15), ("count", 0.05), ("discard", 0.05), ("update", 0.01),
               ("contains_many", 0.01), ("len", 0.01), ("to_bytes", 0.001), ("reload", 0.001)],
    "bloom": [("add", 0.6), ("add_new", 0.1), ("in", 0.1), ("count", 0.05), ("update", 0.01),
              ("contains_many", 0.01), ("len", 0.01), ("to_bytes", 0.001), ("reload", 0.001)],
}
RANDOM_CALL_FILTERS = {
    "cuckoo": ("cuckoo", lambda: nidus.CuckooFilter(20000, 0.001)),
    "cuckoo-bits-view": ("cuckoo", lambda: nidus.CuckooFilter(VIEW_CAPACITY, 0.001, bucket_size=4)),
    "cuckoo-grows": ("cuckoo", lambda: nidus.CuckooFilter(5000, 0.01, expansion=2)),
    "cuckoo-b2": ("cuckoo", lambda: nidus.CuckooFilter(20000, 0.01, bucket_size=2, fingerprint_bits=12)),
    "cuckoo-full": ("cuckoo", lambda: nidus.CuckooFilter(1000, 0.01, expansion=0)),
    "cuckoo-semi": ("cuckoo", lambda: nidus.CuckooFilter(20000, 0.001, bucket_size=4, semi_sort=True)),
    "bloom": ("bloom", lambda: nidus.BloomFilter(20000, 0.001)),
    "bloom-grows": ("bloom", lambda: nidus.BloomFilter(2000, 0.01)),
    "bloom-full": ("bloom", lambda: nidus.BloomFilter(5000, 0.01, expansion=0)),
    "bloom-compact": ("bloom", lambda: nidus.BloomFilter(5000, 0.01, layout="compact")),
}


@pytest.mark.parametrize("name", RANDOM_CALL_FILTERS)
def test_random_calls_against_the_portable_path(name, rng):
    """Random adds (deferred), lookups, counts, removes or add_new, batched calls, lengths, encodings, copies and
    pickles: str keys on one filter, their bytes on another; every answer, error and the final bytes the same."""
    kind, make = RANDOM_CALL_FILTERS[name]
    a, b = make(), make()
    pool = ["k%d-%s" % (i, "x" * rng.randrange(30)) for i in range(10000)]
    bounds, total = [], 0.0
    for call, share in KIND_CALLS[kind]:
        total += share
        bounds.append((total, call))
    for step in range(40000):
        op = rng.random()
        k = rng.choice(pool)
        call = next((c for bound, c in bounds if op < bound), None)
        if call is None:
            continue
        if call == "reload":
            a = pickle.loads(pickle.dumps(a)) if rng.random() < 0.5 else a.copy()
            continue
        x, y = CALLS[call](a, b, k, rng, pool)
        assert x == y, (step, call, k, x, y)
    assert a.to_bytes() == b.to_bytes()

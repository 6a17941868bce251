# SPDX-License-Identifier: BSD-3-Clause
"""CF.MERGE and BF.MERGE destkey numkeys sourcekey [sourcekey ...]: the union, every item of every source
present afterwards (no false negatives), cuckoo counts and Bloom cards adding up; an existing destkey is one
of the sources; the exact errors, after which nothing changed; max-filter-memory; replicas, RDB and AOF ending
byte-identical; keys loaded from RedisBloom; Redis Cluster's one-slot rule from the key specs.

Every test runs twice: with merges built within the command (the default for these small keys), and with
merge-inline-bytes 0, every merge built on a thread (test_merge_threads.py tests what is particular to that)."""
import os
import struct
import time

import pytest

import conftest
from resp import Error, Raw, scandump

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "redisbloom")


@pytest.fixture(params=["inline", "thread"])
def merge_args(request):
    return () if request.param == "inline" else ("merge-inline-bytes", "0")


@pytest.fixture
def server(tmp_path, merge_args):
    s = conftest.Server(tmp_path / "server", module_args=merge_args)
    yield s
    s.kill()


@pytest.fixture
def make_server(tmp_path, merge_args):
    made = []

    def make(name, extra=(), module_args=()):
        s = conftest.Server(tmp_path / name, extra, tuple(module_args) + tuple(merge_args))
        made.append(s)
        return s

    yield make
    for s in made:
        s.kill()


def items(prefix, n, start=0):
    return ["%s%d" % (prefix, i) for i in range(start, start + n)]


def insert(c, kind, key, its):
    for i in range(0, len(its), 1000):
        if kind == "CF":
            reply = c("CF.INSERT", key, "NOCREATE", "ITEMS", *its[i:i + 1000])
            assert -1 not in reply, key
        else:
            c("BF.MADD", key, *its[i:i + 1000])


def mexists(c, kind, key, its):
    out = []
    for i in range(0, len(its), 1000):
        out += c(kind + ".MEXISTS", key, *its[i:i + 1000])
    return out


def positives(c, kind, key, probes):
    """The probes `key` answers 1 for: after a merge into another key, that one must answer 1 for all of them."""
    return [p for p, e in zip(probes, mexists(c, kind, key, probes)) if e == 1]


def dumps(c, *keys):
    return [c("DUMP", k) for k in keys]


def field(info, name):
    return info[info.index(name) + 1]


# ---- the union ----

def test_cf_merge_creates_destkey_with_every_item_and_count(c):
    # sub-filter k of a source goes into sub-filter k of destkey (a fingerprint cannot move to another) when the
    # union fits there, as here; else it is added beside it (the grown cases below)
    assert c("CF.RESERVE", "a", 10000, "EXPANSION", 2) == "OK"
    assert c("CF.RESERVE", "b", 10000, "EXPANSION", 2) == "OK"
    a, b, both = items("a", 3000), items("b", 500), items("s", 100)
    insert(c, "CF", "a", a + both + ["dup"] * 3)
    insert(c, "CF", "b", b + both + ["dup"] * 2)
    before = dumps(c, "a", "b")
    assert c("CF.MERGE", "d", 2, "a", "b") == "OK"
    assert dumps(c, "a", "b") == before  # sources untouched
    assert mexists(c, "CF", "d", a + b + both) == [1] * (len(a) + len(b) + len(both))
    assert c("CF.COUNT", "d", "dup") == 5
    assert c("CF.COUNT", "d", "s7") == 2
    ia, ib, idst = c("CF.INFO", "a"), c("CF.INFO", "b"), c("CF.INFO", "d")
    assert field(idst, "Number of items inserted") == field(ia, "Number of items inserted") + \
        field(ib, "Number of items inserted")
    assert field(idst, "Number of filters") == field(ia, "Number of filters")
    # every copy removes again, exactly
    for _ in range(5):
        assert c("CF.DEL", "d", "dup") == 1
    assert c("CF.DEL", "d", "dup") == 0
    assert c("CF.COUNT", "d", "dup") == 0
    assert c("CF.EXISTS", "d", "a0") == 1


def test_cf_merge_takes_the_sub_filters_only_the_source_grew(c):
    assert c("CF.RESERVE", "grown", 500, "EXPANSION", 2) == "OK"
    assert c("CF.RESERVE", "e", 500, "EXPANSION", 2) == "OK"
    g = items("g", 2500)
    insert(c, "CF", "grown", g)
    filters = field(c("CF.INFO", "grown"), "Number of filters")
    assert filters >= 3
    assert field(c("CF.INFO", "e"), "Number of filters") == 1
    assert c("CF.MERGE", "e", 1, "grown") == "OK"
    assert field(c("CF.INFO", "e"), "Number of filters") == filters
    assert mexists(c, "CF", "e", g) == [1] * len(g)
    # the first sub-filters are full now: the source's that find no room are added beside them
    assert c("CF.MERGE", "e", 1, "grown") == "OK"
    assert field(c("CF.INFO", "e"), "Number of filters") > filters
    assert field(c("CF.INFO", "e"), "Number of items inserted") == 2 * len(g)
    assert c("CF.COUNT", "e", "g7") == 2


def test_cf_merge_of_two_grown_keys(c):
    for key in ("g1", "g2"):
        assert c("CF.RESERVE", key, 500, "EXPANSION", 2) == "OK"
    a, b = items("a", 3000), items("b", 2500)
    insert(c, "CF", "g1", a)
    insert(c, "CF", "g2", b + a[:100])
    n1, n2 = (field(c("CF.INFO", k), "Number of filters") for k in ("g1", "g2"))
    assert n1 >= 3 and n2 >= 3
    assert c("CF.MERGE", "g3", 2, "g1", "g2") == "OK"
    assert max(n1, n2) < field(c("CF.INFO", "g3"), "Number of filters") <= n1 + n2
    assert field(c("CF.INFO", "g3"), "Number of items inserted") == 5600
    assert mexists(c, "CF", "g3", a + b) == [1] * 5500
    assert [c("CF.COUNT", "g3", x) >= 2 for x in a[:100]] == [True] * 100
    for x in a[:100]:
        assert c("CF.DEL", "g3", x) == 1
    # it grows on, saves and loads as it is
    insert(c, "CF", "g3", items("c", 8000))
    digest = c("DEBUG", "DIGEST-VALUE", "g3")
    assert c("DEBUG", "RELOAD") == "OK"
    assert c("DEBUG", "DIGEST-VALUE", "g3") == digest
    assert mexists(c, "CF", "g3", a + b + items("c", 8000)) == [1] * 13500


def test_bf_merge_card_is_the_sum_of_the_cards(c):
    assert c("BF.RESERVE", "a", "0.01", 100) == "OK"
    assert c("BF.RESERVE", "b", "0.01", 100) == "OK"
    a, b, both = items("a", 700), items("b", 150), items("s", 50)
    insert(c, "BF", "a", a + both)
    insert(c, "BF", "b", b + both)
    before = dumps(c, "a", "b")
    assert c("BF.MERGE", "d", 2, "a", "b") == "OK"
    assert dumps(c, "a", "b") == before
    assert mexists(c, "BF", "d", a + b + both) == [1] * (len(a) + len(b) + len(both))
    card = c("BF.CARD", "d")
    assert card == c("BF.CARD", "a") + c("BF.CARD", "b")  # an upper bound: the 50 shared ones count twice
    assert c("BF.INFO", "d", "FILTERS") == c("BF.INFO", "a", "FILTERS")
    assert c("DEBUG", "RELOAD") == "OK"
    assert c("BF.CARD", "d") == card


def test_bf_merged_layer_counts_past_its_capacity_and_grows_on_the_next_add(c):
    assert c("BF.RESERVE", "a", "0.01", 100) == "OK"
    assert c("BF.RESERVE", "b", "0.01", 100) == "OK"
    insert(c, "BF", "a", items("a", 80))
    insert(c, "BF", "b", items("b", 90))
    card = c("BF.CARD", "a") + c("BF.CARD", "b")
    assert card > 100
    assert c("BF.MERGE", "a", 1, "b") == "OK"
    assert c("BF.CARD", "a") == card
    assert c("BF.INFO", "a", "FILTERS") == [1]
    assert c("DEBUG", "RELOAD") == "OK"  # a count past the capacity saves and loads
    assert c("BF.CARD", "a") == card
    new = next(x for x in items("new", 1000) if c("BF.EXISTS", "a", x) == 0)
    assert c("BF.ADD", "a", new) == 1
    assert c("BF.INFO", "a", "FILTERS") == [2]
    assert c("BF.CARD", "a") == card + 1
    assert mexists(c, "BF", "a", items("a", 80) + items("b", 90)) == [1] * 170


def test_existing_destkey_is_one_of_the_sources(c):
    for kind in ("CF", "BF"):
        d, s, t = kind + "d", kind + "s", kind + "t"
        for key in (d, s, t):
            assert c(kind + ".RESERVE", key, *((1000,) if kind == "CF" else ("0.01", 1000))) == "OK"
        insert(c, kind, d, items("d", 200))
        insert(c, kind, s, items("s", 200))
        insert(c, kind, t, items("t", 200))
        # destkey merged with itself alone: already the union, nothing changes
        before = dumps(c, d)
        assert c(kind + ".MERGE", d, 1, d) == "OK"
        assert dumps(c, d) == before
        # naming destkey among the sources adds it once, not twice
        assert c(kind + ".MERGE", d, 2, d, s) == "OK"
        assert c(kind + ".MERGE", d, 1, t) == "OK"
        assert mexists(c, kind, d, items("d", 200) + items("s", 200) + items("t", 200)) == [1] * 600
        if kind == "CF":
            assert [c("CF.COUNT", d, x) for x in ("d5", "s5", "t5")] == [1, 1, 1]
            assert field(c("CF.INFO", d), "Number of items inserted") == 600
        else:
            assert c("BF.CARD", d) == c("BF.CARD", s) + c("BF.CARD", t) + 200
    # a source named twice counts twice (cuckoo counts add)
    assert c("CF.MERGE", "twice", 2, "CFs", "CFs") == "OK"
    assert c("CF.COUNT", "twice", "s1") == 2


# ---- errors: exact, and nothing changes ----

def setup_keys(c):
    c("CF.RESERVE", "cf", 1000)
    c("CF.ADD", "cf", "x")
    c("CF.RESERVE", "cf2", 1000)
    c("CF.ADD", "cf2", "y")
    c("BF.RESERVE", "bf", "0.01", 1000)
    c("BF.ADD", "bf", "x")
    c("BF.RESERVE", "bf2", "0.01", 1000)
    c("BF.ADD", "bf2", "y")
    c("SET", "str", "v")


ARITY = "ERR wrong number of arguments for '%s' command"
NUMKEYS = "ERR numkeys must be a positive integer"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.mark.parametrize("kind", ["CF", "BF"])
def test_errors_are_exact_and_change_nothing(c, kind):
    setup_keys(c)
    own, own2, other = (("cf", "cf2", "bf") if kind == "CF" else ("bf", "bf2", "cf"))
    cmd = kind + ".MERGE"
    cases = [
        ((own, 1), ARITY % cmd.lower()),
        ((own,), ARITY % cmd.lower()),
        ((own, "x", own2), NUMKEYS),
        ((own, 0, own2), NUMKEYS),
        ((own, -1, own2), NUMKEYS),
        ((own, "1.5", own2), NUMKEYS),
        ((own, 2, own2), "ERR numkeys (2) does not match the number of sourcekeys (1)"),
        ((own, 1, own2, own2), "ERR numkeys (1) does not match the number of sourcekeys (2)"),
        ((own, 1, "missing"), "ERR not found"),
        ((own, 2, own2, "missing"), "ERR not found"),
        (("new", 1, "new"), "ERR not found"),  # a missing destkey is no source
        (("new", 2, own2, "new"), "ERR not found"),
        ((own, 1, "str"), WRONGTYPE),
        ((own, 1, other), WRONGTYPE),
        ((own, 2, own2, other), WRONGTYPE),
        (("str", 1, own), WRONGTYPE),
        ((other, 1, own), WRONGTYPE),
        (("new", 2, own2, "str"), WRONGTYPE),
    ]
    keys = ["cf", "cf2", "bf", "bf2", "str"]
    before = dumps(c, *keys)
    for args, error in cases:
        assert c(cmd, *args) == Error(error), args
        assert dumps(c, *keys) == before, args
        assert c("EXISTS", "new") == 0, args


@pytest.mark.parametrize("kind", ["CF", "BF"])
def test_keys_still_loading_are_refused(c, kind):
    """A key whose LOADCHUNK copy is unfinished answers as empty: merging it (or into it) would lose items."""
    c(kind + ".RESERVE", "src", *((1000,) if kind == "CF" else ("0.01", 1000)))
    insert(c, kind, "src", items("s", 500))
    c(kind + ".RESERVE", "other", *((1000,) if kind == "CF" else ("0.01", 1000)))
    it, data = c(kind + ".SCANDUMP", "src", 0)
    assert c(kind + ".LOADCHUNK", "half", it, data) == "OK"
    loading = Error("ERR filter is still loading (%s.LOADCHUNK): send the remaining chunks, or DEL the key" % kind)
    before = dumps(c, "half", "src", "other")
    assert c(kind + ".MERGE", "new", 1, "half") == loading
    assert c(kind + ".MERGE", "other", 2, "src", "half") == loading
    assert c(kind + ".MERGE", "half", 1, "src") == loading
    assert dumps(c, "half", "src", "other") == before
    assert c("EXISTS", "new") == 0


def test_incompatible_sources_name_what_differs(c):
    c("CF.RESERVE", "base", 1000)
    c("CF.ADD", "base", "x")
    variants = {"b4": (1000, "BUCKETSIZE", 4), "fp": (1000, "FINGERPRINT", 16), "cap": (5000,),
                "exp": (1000, "EXPANSION", 2)}
    for key, args in variants.items():
        assert c("CF.RESERVE", key, *args) == "OK"
    info = {k: c("CF.INFO", k) for k in ["base", *variants]}
    why = {
        "b4": "bucket size 4, not 2",
        "fp": "fingerprint bits 16, not %d" % field(info["base"], "Fingerprint bits"),
        "cap": "capacity: a first sub-filter of %d buckets, not %d" % (
            field(info["cap"], "Number of buckets"), field(info["base"], "Number of buckets")),
        "exp": "expansion 2, not 1",
    }
    before = dumps(c, "base", *variants)
    for key in variants:
        assert c("CF.MERGE", "base", 1, key) == Error("ERR incompatible sourcekey 1: " + why[key])
        # into a new destkey: compared with the first source; the position says which source
        assert c("CF.MERGE", "new", 3, "base", "base", key) == Error("ERR incompatible sourcekey 3: " + why[key])
    assert dumps(c, "base", *variants) == before
    assert c("EXISTS", "new") == 0

    c("BF.RESERVE", "bbase", "0.01", 100)
    c("BF.ADD", "bbase", "x")
    # the source's value first, then the destination's (or the first source's)
    bvariants = {
        "berr": (("0.001", 100), "error rate 0.001, not 0.01", "error rate 0.01, not 0.001"),
        "bcap": (("0.01", 200), "capacity 200, not 100", "capacity 100, not 200"),
        "bexp": (("0.01", 100, "EXPANSION", 4), "expansion 4, not 2", "expansion 2, not 4"),
        "bns": (("0.01", 100, "NONSCALING"), "expansion 0, not 2", "expansion 2, not 0"),
    }
    for key, (args, _, _) in bvariants.items():
        assert c("BF.RESERVE", key, *args) == "OK"
    before = dumps(c, "bbase", *bvariants)
    for key, (_, why, reverse) in bvariants.items():
        assert c("BF.MERGE", "bbase", 1, key) == Error("ERR incompatible sourcekey 1: " + why)
        assert c("BF.MERGE", "bnew", 2, key, "bbase") == Error("ERR incompatible sourcekey 2: " + reverse)
    assert dumps(c, "bbase", *bvariants) == before
    assert c("EXISTS", "bnew") == 0


def fill_until_full(c, key, prefix):
    """Adds distinct items until the (non-growing) filter refuses one; returns those it took."""
    taken = []
    for i in range(0, 100000, 100):
        batch = items(prefix, 100, i)
        reply = c("CF.INSERT", key, "NOCREATE", "ITEMS", *batch)
        taken += [x for x, r in zip(batch, reply) if r == 1]
        if -1 in reply:
            return taken
    raise AssertionError("never full")


def test_cuckoo_merge_that_does_not_fit_is_refused_whole(c):
    for key in ("full1", "full2", "empty"):
        assert c("CF.RESERVE", key, 200, "EXPANSION", 0) == "OK"
    fill_until_full(c, "full1", "f1-")
    fill_until_full(c, "full2", "f2-")
    full = "ERR filter is full: a sub-filter of destkey has no room for the items of sourcekey %d in the same " \
           "sub-filter"
    before = dumps(c, "full1", "full2", "empty")
    assert c("CF.MERGE", "full1", 1, "full2") == Error(full % 1)  # in place
    assert c("CF.MERGE", "new", 2, "full1", "full2") == Error(full % 2)
    # the first source merges, the second does not: destkey stays as it was, not half merged
    assert c("CF.MERGE", "empty", 2, "full1", "full2") == Error(full % 2)
    assert dumps(c, "full1", "full2", "empty") == before
    assert c("EXISTS", "new") == 0
    assert c("CF.MERGE", "empty", 1, "full1") == "OK"


def test_max_filter_memory_is_checked_before_anything_changes(c):
    assert c("CF.RESERVE", "big", 200000) == "OK"
    assert c("CF.RESERVE", "big2", 200000) == "OK"
    assert c("BF.RESERVE", "bbig", "0.001", 200000) == "OK"
    assert c("BF.RESERVE", "bbig2", "0.001", 200000) == "OK"
    c("CF.ADD", "big2", "x")
    c("BF.ADD", "bbig2", "x")
    before = dumps(c, "big", "big2", "bbig", "bbig2")
    assert c("CONFIG", "SET", "nidus.max-filter-memory", 65536) == "OK"
    too_big = Error("ERR filter would be larger than the module's max_filter_memory")
    assert c("CF.MERGE", "big", 1, "big2") == too_big  # in place
    assert c("CF.MERGE", "new", 2, "big", "big2") == too_big
    assert c("BF.MERGE", "bbig", 1, "bbig2") == too_big
    assert c("BF.MERGE", "new", 1, "bbig2") == too_big
    assert dumps(c, "big", "big2", "bbig", "bbig2") == before
    assert c("EXISTS", "new") == 0
    assert c("CONFIG", "SET", "nidus.max-filter-memory", 1 << 31) == "OK"
    assert c("CF.MERGE", "big", 1, "big2") == "OK"
    assert c("CF.EXISTS", "big", "x") == 1
    # two grown keys each within the limit whose merge, with sibling sub-filters, would not be: refused in place
    for key in ("g1", "g2"):
        assert c("CF.RESERVE", key, 500, "EXPANSION", 2) == "OK"
        insert(c, "CF", key, items(key, 2500))
    sizes = [field(c("CF.INFO", key), "Size") for key in ("g1", "g2")]
    before = dumps(c, "g1", "g2")
    assert c("CONFIG", "SET", "nidus.max-filter-memory", max(sizes) + 64) == "OK"
    assert c("CF.MERGE", "g1", 1, "g2") == too_big
    assert c("CF.MERGE", "g3", 2, "g1", "g2") == too_big
    assert dumps(c, "g1", "g2") == before and c("EXISTS", "g3") == 0
    assert c("CONFIG", "SET", "nidus.max-filter-memory", 1 << 31) == "OK"
    assert c("CF.MERGE", "g1", 1, "g2") == "OK"
    assert field(c("CF.INFO", "g1"), "Size") > max(sizes) + 64


# ---- replication, RDB, AOF ----

def build_merges(m, before_merging=lambda: None):
    for key in ("ca", "cb", "ce", "cf", "cg", "ch"):
        m("CF.RESERVE", key, 20000, "EXPANSION", 2)
    insert(m, "CF", "ca", items("a", 2000) + ["dup"] * 2)
    insert(m, "CF", "cb", items("b", 700) + ["dup"])
    for key in ("ce", "cf", "cg", "ch"):
        insert(m, "CF", key, items(key, 300))
    for key in ("ba", "bb", "be", "bf", "bg", "bh"):
        m("BF.RESERVE", key, "0.01", 100)
    insert(m, "BF", "ba", items("a", 900))
    insert(m, "BF", "bb", items("b", 300))
    for key in ("be", "bf", "bg", "bh"):
        insert(m, "BF", key, items(key, 200))
    # keys loaded from RedisBloom
    for key in ("rc1", "rc2"):
        m("RESTORE", key, 0, payload("cf_empty"))
    insert(m, "CF", "rc1", items("x", 12))
    insert(m, "CF", "rc2", items("y", 12))
    for key in ("rb1", "rb2"):
        m("RESTORE", key, 0, payload("bf_scale"))
    insert(m, "BF", "rb1", items("x", 900))
    insert(m, "BF", "rb2", items("y", 300))
    # grown apart: sibling sub-filters
    for key in ("cs1", "cs2"):
        m("CF.RESERVE", key, 500, "EXPANSION", 2)
        insert(m, "CF", key, items(key, 2500))
    before_merging()
    assert m("CF.MERGE", "csd", 2, "cs1", "cs2") == "OK"
    assert m("CF.MERGE", "rcd", 2, "rc1", "rc2") == "OK"
    assert m("BF.MERGE", "rb1", 1, "rb2") == "OK"
    for kind in ("c", "b"):
        cmd = "CF.MERGE" if kind == "c" else "BF.MERGE"
        assert m(cmd, kind + "d", 2, kind + "a", kind + "b") == "OK"  # created
        assert m(cmd, kind + "b", 1, kind + "e") == "OK"  # in place
        assert m(cmd, kind + "f", 3, kind + "f", kind + "g", kind + "h") == "OK"  # on a copy


MERGED = ["cb", "cd", "cf", "bb", "bd", "bf", "rcd", "rb1", "csd"]


def test_replica_rdb_and_aof_end_byte_identical(make_server):
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0", "--appendonly", "yes"))
    replica = make_server("replica")
    m, r = Raw(master.port), Raw(replica.port)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    replica.wait_replica_link()
    # a replica's own max-filter-memory does not refuse what the master merged (lowered once the sources are
    # there: the replicated CF.RESERVE would be held to it)
    build_merges(m, lambda: (m("WAIT", 1, 5000), r("CONFIG", "SET", "nidus.max-filter-memory", 4096)))
    assert m("WAIT", 1, 5000) == 1
    digests = m("DEBUG", "DIGEST-VALUE", *MERGED)
    assert None not in digests and len(set(digests)) == len(digests)
    assert r("DEBUG", "DIGEST-VALUE", *MERGED) == digests
    assert r("CF.COUNT", "cd", "dup") == m("CF.COUNT", "cd", "dup") == 3
    assert m("DEBUG", "RELOAD") == "OK"
    assert m("DEBUG", "DIGEST-VALUE", *MERGED) == digests
    # the AOF as written (the merge commands), then rewritten (LOADCHUNK streams): both replay to the same bytes
    master.stop(nosave=True)
    master.start()
    m = Raw(master.port)
    assert m("DEBUG", "DIGEST-VALUE", *MERGED) == digests
    assert m("BGREWRITEAOF").startswith("Background")
    master.wait_aof_rewrite()
    master.stop(nosave=True)
    master.start()
    m = Raw(master.port)
    assert m("DEBUG", "DIGEST-VALUE", *MERGED) == digests
    assert mexists(m, "CF", "cd", items("a", 2000) + items("b", 700)) == [1] * 2700
    assert mexists(m, "BF", "bd", items("a", 900) + items("b", 300)) == [1] * 1200
    assert mexists(m, "CF", "cf", items("cf", 300) + items("cg", 300) + items("ch", 300)) == [1] * 900
    assert mexists(m, "CF", "csd", items("cs1", 2500) + items("cs2", 2500)) == [1] * 5000


# ---- keys loaded from RedisBloom ----

def payload(key):
    with open(os.path.join(FIX, "dump", key + ".bin"), "rb") as f:
        return f.read()


def test_redisbloom_keys_merge_with_their_own_kind(c):
    probes = items("p", 3000)
    # cuckoo: two copies of one RedisBloom filter (64 slots), each given other items. A sub-filter's
    # fingerprints go into the same one or an older one, so its RedisBloom tables must have room for both.
    for key in ("rb1", "rb2", "rbe"):
        assert c("RESTORE", key, 0, payload("cf_empty")) == "OK"
    insert(c, "CF", "rb1", items("x", 12) + ["dup"])
    insert(c, "CF", "rb2", items("y", 12) + ["dup"] * 2)
    want = set(positives(c, "CF", "rb1", probes + items("x", 12)) +
               positives(c, "CF", "rb2", probes + items("y", 12)))
    before = dumps(c, "rb1", "rb2")
    assert c("CF.MERGE", "rbd", 2, "rb1", "rb2") == "OK"
    assert dumps(c, "rb1", "rb2") == before
    assert c("TYPE", "rbd") == "MBbloomCF"
    assert mexists(c, "CF", "rbd", sorted(want)) == [1] * len(want)
    assert c("CF.COUNT", "rbd", "dup") == 3
    assert field(c("CF.INFO", "rbd"), "Number of items inserted") == 13 + 14
    assert c("CF.DEL", "rbd", "dup") == 1
    assert c("CF.COUNT", "rbd", "dup") == 2
    # a key grown past its RedisBloom tables into an empty one: both parts come along
    insert(c, "CF", "rb1", items("z", 200))
    assert field(c("CF.INFO", "rb1"), "Number of filters") > 1
    want = positives(c, "CF", "rb1", probes + items("z", 200))
    assert c("CF.MERGE", "rbe", 1, "rb1") == "OK"
    assert mexists(c, "CF", "rbe", want) == [1] * len(want)
    assert c("CF.INFO", "rbe") == c("CF.INFO", "rb1")

    # Bloom: grown past RedisBloom's layers on both sides
    for key in ("rbb1", "rbb2"):
        assert c("RESTORE", key, 0, payload("bf_scale")) == "OK"
    insert(c, "BF", "rbb1", items("x", 900))
    insert(c, "BF", "rbb2", items("y", 900))
    want = set(positives(c, "BF", "rbb1", probes + items("x", 900)) +
               positives(c, "BF", "rbb2", probes + items("y", 900)))
    card = c("BF.CARD", "rbb1") + c("BF.CARD", "rbb2")
    assert c("BF.MERGE", "rbb1", 1, "rbb2") == "OK"
    assert c("TYPE", "rbb1") == "MBbloom--"
    assert mexists(c, "BF", "rbb1", sorted(want)) == [1] * len(want)
    assert c("BF.CARD", "rbb1") == card

    digests = c("DEBUG", "DIGEST-VALUE", "rbd", "rbe", "rbb1")
    assert c("DEBUG", "RELOAD") == "OK"
    assert c("DEBUG", "DIGEST-VALUE", "rbd", "rbe", "rbb1") == digests
    assert mexists(c, "BF", "rbb1", sorted(want)) == [1] * len(want)


def test_redisbloom_merge_gives_the_copied_sub_filters_their_scandump_positions(c):
    """A RedisBloom key merged with one of more sub-filters (layers) takes copies of those, and its SCANDUMP gives
    them where the source's does (each array's first position is kept with it, not found by a walk): the two
    streams are equal, and the merged key's loads into a key that streams out the same again."""
    # cuckoo headers: items, buckets, deletes, sub-filters, bucket size, max iterations, expansion; sub-filters
    # of 4, 8 and 16 buckets of 2 slots, every slot filled in the source
    def cf_header(ntables, n):
        return struct.pack("<QQQQHHH", n, 4, 0, ntables, 2, 20, 2)

    # Bloom: items, layers, options, growth, then a layer (bytes, bits, items, error, bpe, hashes, entries, n2)
    # of 8 << i bytes each, one item in each of the source's
    def bf_header(nlayers, per_layer):
        layers = b"".join(struct.pack("<QQQddIQB", 8 << i, 64 << i, per_layer, 0.01, 9.585, 7, 6 << i, 6 + i)
                          for i in range(nlayers))
        return struct.pack("<QIII", per_layer * nlayers, nlayers, 0, 2) + layers

    cases = (("CF", cf_header(1, 0), cf_header(3, 56), [8, 16, 32]),
             ("BF", bf_header(1, 0), bf_header(3, 1), [8, 16, 32]))
    for kind, dst_header, src_header, sizes in cases:
        assert c(kind + ".LOADCHUNK", "dst", 1, dst_header) == "OK"
        assert c(kind + ".LOADCHUNK", "src", 1, src_header) == "OK"
        pos = 1
        for i, n in enumerate(sizes):
            pos += n
            assert c(kind + ".LOADCHUNK", "src", pos, bytes(range(i * 64 + 1, i * 64 + 1 + n))) == "OK"
        assert c(kind + ".MERGE", "dst", 2, "dst", "src") == "OK"
        chunks = scandump(c, kind, "dst")
        assert [it for it, _ in chunks] == [1, 9, 25, 57]
        assert chunks == scandump(c, kind, "src")
        for it, data in chunks:
            assert c(kind + ".LOADCHUNK", "copy", it, data) == "OK"
        assert scandump(c, kind, "copy") == chunks
        assert c("DEL", "dst", "src", "copy") == 3


def test_redisbloom_keys_refuse_other_formats_and_parameters(c):
    assert c("RESTORE", "rbcf", 0, payload("cf_dups")) == "OK"
    assert c("RESTORE", "rbb4", 0, payload("cf_b4")) == "OK"
    assert c("RESTORE", "rbauto", 0, payload("cf_auto")) == "OK"
    assert c("RESTORE", "rbauto2", 0, payload("cf_auto")) == "OK"
    assert c("RESTORE", "rbbf", 0, payload("bf_scale")) == "OK"
    assert c("RESTORE", "rbbf32", 0, payload("bf_v3")) == "OK"
    c("CF.RESERVE", "ncf", 1000)
    c("BF.RESERVE", "nbf", "0.01", 100)
    keys = ["rbcf", "rbb4", "rbauto", "rbauto2", "rbbf", "rbbf32", "ncf", "nbf"]
    before = dumps(c, *keys)
    cases = [
        (("CF.MERGE", "rbcf", 1, "ncf"), "ERR incompatible sourcekey 1: nidus format, not RedisBloom"),
        (("CF.MERGE", "ncf", 1, "rbcf"), "ERR incompatible sourcekey 1: RedisBloom format, not nidus"),
        (("CF.MERGE", "new", 2, "rbcf", "ncf"), "ERR incompatible sourcekey 2: nidus format, not RedisBloom"),
        (("BF.MERGE", "nbf", 1, "rbbf"), "ERR incompatible sourcekey 1: RedisBloom format, not nidus"),
        (("CF.MERGE", "rbcf", 1, "rbb4"), "ERR incompatible sourcekey 1: bucket size 4, not 2"),
        (("BF.MERGE", "rbbf", 1, "rbbf32"), "ERR incompatible sourcekey 1: 32-bit hashing, not 64-bit"),
        # 599 items in 1024 slots: a second copy does not fit in the one sub-filter both have
        (("CF.MERGE", "rbauto", 1, "rbauto2"),
         "ERR filter is full: a sub-filter of destkey has no room for the items of sourcekey 1 in the same "
         "sub-filter"),
    ]
    for args, error in cases:
        assert c(*args) == Error(error), args
    assert dumps(c, *keys) == before
    assert c("EXISTS", "new") == 0


# ---- Redis Cluster ----

def test_cluster_takes_keys_of_one_slot_only(make_server):
    node = make_server("cluster", extra=("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
    c = Raw(node.port)
    assert c("CLUSTER", "ADDSLOTSRANGE", 0, 16383) == "OK"
    deadline = time.time() + 20
    while b"cluster_state:ok" not in c("CLUSTER", "INFO") and time.time() < deadline:
        time.sleep(0.05)
    for kind in ("CF", "BF"):
        c(kind + ".ADD", "{t}a", "x")
        c(kind + ".ADD", "{t}b", "y")
        c(kind + ".ADD", "{u}c", "z")
        assert c(kind + ".MERGE", "{t}d", 2, "{t}a", "{t}b") == "OK"
        assert c(kind + ".MEXISTS", "{t}d", "x", "y") == [1, 1]
        crossslot = Error("CROSSSLOT Keys in request don't hash to the same slot")
        assert c(kind + ".MERGE", "{t}e", 2, "{t}a", "{u}c") == crossslot
        assert c(kind + ".MERGE", "{u}e", 1, "{t}a") == crossslot
        c("DEL", "{t}a", "{t}b", "{t}d")
        c("DEL", "{u}c")
    assert c("EXISTS", "{t}e") == 0
    assert c("EXISTS", "{u}e") == 0

# SPDX-License-Identifier: BSD-3-Clause
"""The module's limit policy: max_filter_memory refuses a *write* before anything changes, and a load
(RDB, DEBUG RELOAD, RESTORE, LOADCHUNK) accepts whatever a write could have produced. Each case below once
saved fine and then failed to load (DEBUG RELOAD emptied the database)."""
import pytest

import rb_fixtures
from resp import Error, Raw, scandump

LIMIT = 1 << 16
TOO_BIG = Error("ERR filter would be larger than the module's max_filter_memory")
FIXTURES = rb_fixtures.Fixtures()


@pytest.fixture
def c(make_server):
    s = make_server("limited", module_args=("max_filter_memory", str(LIMIT)))
    return Raw(s.port)


def largest(c, accepts, low, high):
    """The largest n in [low, high] that accepts(n) takes (monotone)."""
    while low < high:
        mid = (low + high + 1) // 2
        if accepts(mid):
            low = mid
        else:
            high = mid - 1
    return low


def reserve_ok(c, *args):
    key = args[1]
    c("DEL", key)
    return c(*args) == "OK"


def reload_keeps(c, checks):
    before = {k: c(*cmd) for k, cmd in checks.items()}
    assert c("DEBUG", "RELOAD") == "OK"
    assert {k: c(*cmd) for k, cmd in checks.items()} == before
    for key in {cmd[1] for cmd in checks.values()}:
        assert c("RESTORE", key + ":r", 0, c("DUMP", key)) == "OK"


def test_bloom_sized_at_the_limit_reloads(c):
    """Creation measures the blocks; the encoding adds its header on top, which the load once counted."""
    n = largest(c, lambda n: reserve_ok(c, "BF.RESERVE", "b", "0.01", n, "NONSCALING"), 1, 1 << 20)
    assert reserve_ok(c, "BF.RESERVE", "b", "0.01", n, "NONSCALING")
    assert c("BF.RESERVE", "b2", "0.01", n + 1, "NONSCALING") == TOO_BIG
    c("BF.MADD", "b", *range(100))
    reload_keeps(c, {"info": ("BF.INFO", "b"), "has": ("BF.MEXISTS", "b", *range(100))})


def test_cuckoo_with_one_iteration_at_the_limit_reloads(c):
    """MAXITERATIONS 1: an 8-byte kick log, so the table alone nearly fills the limit."""
    n = largest(c, lambda n: reserve_ok(c, "CF.RESERVE", "m", n, "MAXITERATIONS", 1), 4, 1 << 20)
    assert reserve_ok(c, "CF.RESERVE", "m", n, "MAXITERATIONS", 1)
    c("CF.INSERT", "m", "ITEMS", *range(100))
    reload_keeps(c, {"info": ("CF.INFO", "m"), "has": ("CF.MEXISTS", "m", *range(100))})


def test_overflow_copies_past_the_limit_reload(c):
    """Copies beyond what a key's buckets hold go to a side map that grows without asking (refusing a
    duplicate would break counting); the filter then holds more than the limit, and must still load."""
    n = largest(c, lambda n: reserve_ok(c, "CF.RESERVE", "ov", n, "BUCKETSIZE", 1, "MAXITERATIONS", 1), 4, 1 << 20)
    assert reserve_ok(c, "CF.RESERVE", "ov", n, "BUCKETSIZE", 1, "MAXITERATIONS", 1, "EXPANSION", 0)
    keys = ["k%d" % i for i in range(1500)]
    for _ in range(3):  # two copies fill a key's pair of one-slot buckets, the third overflows
        assert c("CF.INSERT", "ov", "ITEMS", *keys) == [1] * len(keys)
    assert c("MEMORY", "USAGE", "ov") > LIMIT
    reload_keeps(c, {"info": ("CF.INFO", "ov"), "counts": ("CF.COUNT", "ov", "k7")})
    assert c("CF.COUNT", "ov", "k7") >= 3


@pytest.mark.parametrize("kind", ["CF", "BF"])
def test_growth_up_to_the_limit_reloads(c, kind):
    if kind == "CF":
        assert c("CF.RESERVE", "g", 100, "EXPANSION", 2) == "OK"
    else:
        assert c("BF.RESERVE", "g", "0.001", 100, "EXPANSION", 2) == "OK"
    added = []
    for i in range(200000):
        reply = c(kind + ".ADD", "g", "x%d" % i)
        if reply not in (0, 1):  # BF.ADD: 0 when a false positive says it is there already
            assert reply == TOO_BIG  # refused before anything changed
            break
        added.append("x%d" % i)
    else:
        raise AssertionError("never reached the limit")
    reload_keeps(c, {"info": (kind + ".INFO", "g"), "has": (kind + ".MEXISTS", "g", *added[::50])})
    assert c(kind + ".MEXISTS", "g", *added) == [1] * len(added)


def test_loadchunk_obeys_the_limit_writes_obey(make_server, c):
    """A filter copied in from a server without the limit: refused if a write here could not have made it
    (its slots pass the limit: refused at the header chunk); else it grows here only within the limit, so it
    reloads. MAXITERATIONS costs no memory (tables keep no kick log), so 65535 of them load."""
    big = Raw(make_server("unlimited").port)
    big("CF.RESERVE", "kicks", 1000, "MAXITERATIONS", 65535)
    big("CF.ADD", "kicks", "a")
    chunks = scandump(big, "CF", "kicks")
    assert sum(len(d) for _, d in chunks) < 8192
    for it, data in chunks:
        assert c("CF.LOADCHUNK", "kicks", it, data) == "OK"
    assert c("CF.EXISTS", "kicks", "a") == 1
    big("CF.RESERVE", "large", 200000)
    big("CF.ADD", "large", "a")
    assert c("CF.LOADCHUNK", "large", *scandump(big, "CF", "large")[0]) == TOO_BIG
    assert c("EXISTS", "large") == 0
    big("CF.RESERVE", "g", 1000, "EXPANSION", 1)
    big("CF.ADD", "g", "a")
    for it, data in scandump(big, "CF", "g"):
        assert c("CF.LOADCHUNK", "g", it, data) == "OK"
    added = []
    for i in range(200000):
        reply = c("CF.ADD", "g", "x%d" % i)
        if reply != 1:
            assert reply == TOO_BIG
            break
        added.append("x%d" % i)
    else:
        raise AssertionError("grew past the limit")
    reload_keeps(c, {"info": ("CF.INFO", "g"), "has": ("CF.MEXISTS", "g", *added[::50])})


def test_lowering_the_limit_never_refuses_the_servers_own_data(make_server):
    """CONFIG SET can lower max-filter-memory under filters that exist: new writes and what clients send
    (RESTORE, LOADCHUNK) obey the new limit, but DEBUG RELOAD, a restart and a replica keep everything."""
    s = make_server("lowered", extra=("--appendonly", "yes"))
    c = Raw(s.port)
    c("CF.RESERVE", "cf", 200000)
    c("BF.RESERVE", "bf", "0.001", 200000)
    c("CF.INSERT", "cf", "ITEMS", *range(1000))
    c("BF.MADD", "bf", *range(1000))
    payload = c("DUMP", "cf")
    assert c("CONFIG", "SET", "nidus.max-filter-memory", LIMIT) == "OK"
    assert c("CF.RESERVE", "new", 200000) == TOO_BIG
    assert isinstance(c("RESTORE", "cf2", 0, payload), Error)
    assert c("DEBUG", "RELOAD") == "OK"
    assert c("DBSIZE") == 2
    replica = make_server("replica", extra=("--replicaof", "127.0.0.1", str(s.port)))
    replica.wait_replica_link()
    assert Raw(replica.port)("CF.MEXISTS", "cf", *range(1000)) == [1] * 1000
    assert c("BGREWRITEAOF").startswith("Background")
    s.wait_aof_rewrite()
    s.stop(nosave=True)
    s.module_args = ["max_filter_memory", str(LIMIT)]
    s.start()
    c = Raw(s.port)
    assert c("CF.MEXISTS", "cf", *range(1000)) == [1] * 1000
    assert c("BF.MEXISTS", "bf", *range(1000)) == [1] * 1000



def test_loaded_filters_keep_the_master_bound_on_replicas_and_in_the_aof(make_server):
    """A filter made under a larger max-filter-memory (nidus's, and RedisBloom's grown past its own tables),
    brought to a master by LOADCHUNK or RESTORE, takes the master's limit as its bound on growth there. A replica
    (which on its own loads LOADCHUNK unlimited, RESTORE under its own limit) and an AOF replay (unlimited)
    hold the master's bound too: the same bytes, and the same refusals after a failover."""
    big = Raw(make_server("big", module_args=("max-filter-memory", str(1 << 40))).port)
    assert big("CF.RESERVE", "c", 1000, "EXPANSION", 1) == "OK"
    assert big("BF.RESERVE", "b", "0.01", 1000) == "OK"
    big("CF.INSERT", "c", "ITEMS", *range(500))
    big("BF.MADD", "b", *range(500))
    assert big("RESTORE", "rc", 0, FIXTURES.payload("cf_b1")) == "OK"
    assert big("RESTORE", "rb", 0, FIXTURES.payload("bf_scale")) == "OK"
    big("CF.INSERT", "rc", "ITEMS", *["g%d" % i for i in range(3000)])  # a growth part of nidus's
    big("BF.MADD", "rb", *["g%d" % i for i in range(6000)])
    master = make_server("master", extra=("--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                                          "--repl-diskless-sync-delay", "0"),
                         module_args=("max-filter-memory", str(LIMIT)))
    m = Raw(master.port)
    replica = make_server("replica", extra=("--replicaof", "127.0.0.1", str(master.port)))
    r = Raw(replica.port)
    replica.wait_replica_link()
    keys = []
    for kind, key in (("CF", "c"), ("BF", "b"), ("CF", "rc"), ("BF", "rb")):
        for it, data in scandump(big, kind, key):
            assert m(kind + ".LOADCHUNK", key + "-lc", it, data) == "OK"
        assert m("RESTORE", key + "-rs", 0, big("DUMP", key)) == "OK"
        keys += [(kind, key + "-lc"), (kind, key + "-rs")]
    assert m("WAIT", 1, 5000) == 1
    digest = [m("DEBUG", "DIGEST-VALUE", k) for _, k in keys]
    assert [r("DEBUG", "DIGEST-VALUE", k) for _, k in keys] == digest
    assert m("DEBUG", "RELOAD") == "OK"
    assert [m("DEBUG", "DIGEST-VALUE", k) for _, k in keys] == digest
    master.stop(nosave=True)
    master.module_args = ["max-filter-memory", str(1 << 40)]
    master.start()  # replays the AOF (no RDB preamble) under a larger limit
    m = Raw(master.port)
    assert [m("DEBUG", "DIGEST-VALUE", k) for _, k in keys] == digest
    assert r("REPLICAOF", "NO", "ONE") == "OK"  # a failover: each grows as the first master let it
    for kind, k in keys:
        for i in range(400):
            items = ["x%d-%d" % (i, j) for j in range(200)]
            cmd = ("CF.INSERT", k, "ITEMS", *items) if kind == "CF" else ("BF.MADD", k, *items)
            replies = m(*cmd)
            assert r(*cmd) == replies, k
            if TOO_BIG in replies or -1 in replies:
                break
        else:
            raise AssertionError("%s grew past the first master's limit" % k)
    assert [r("DEBUG", "DIGEST-VALUE", k) for _, k in keys] == [m("DEBUG", "DIGEST-VALUE", k) for _, k in keys]


def test_redisbloom_growth_loads_alike_by_loadchunk_and_restore(make_server, c):
    """A key loaded from RedisBloom's data and grown under a larger max-filter-memory, brought here by LOADCHUNK
    and by RESTORE: its growth part gets the room the limit leaves beside the RedisBloom part, as growth here
    would give it, either way. The two copies are the same value and refuse the same adds."""
    big = Raw(make_server("big", module_args=("max-filter-memory", str(1 << 40))).port)
    keys = []
    for name, kind, n in (("cf_b1", "CF", 3000), ("bf_scale", "BF", 6000)):
        assert big("RESTORE", name, 0, FIXTURES.payload(name)) == "OK"
        items = ["g%d" % i for i in range(n)]
        big(*(("CF.INSERT", name, "ITEMS") if kind == "CF" else ("BF.MADD", name)), *items)
        for it, data in scandump(big, kind, name):
            assert c(kind + ".LOADCHUNK", name + "-lc", it, data) == "OK"
        assert c("RESTORE", name + "-rs", 0, big("DUMP", name)) == "OK"
        assert c("DEBUG", "DIGEST-VALUE", name + "-lc") == c("DEBUG", "DIGEST-VALUE", name + "-rs"), name
        keys.append((kind, name))
    for kind, name in keys:
        for i in range(400):
            items = ["x%d-%d" % (i, j) for j in range(200)]
            replies = [c(*(("CF.INSERT", k, "ITEMS") if kind == "CF" else ("BF.MADD", k)), *items)
                       for k in (name + "-lc", name + "-rs")]
            assert replies[0] == replies[1], name
            if TOO_BIG in replies[0] or -1 in replies[0]:
                break
        else:
            raise AssertionError("%s grew past the limit" % name)
        assert c("DEBUG", "DIGEST-VALUE", name + "-lc") == c("DEBUG", "DIGEST-VALUE", name + "-rs"), name

# SPDX-License-Identifier: BSD-3-Clause
"""Keys loaded from RedisBloom's data grow into a nidus filter beside RedisBloom's tables (the growth part). Its
parameters come from the configuration of the master that grew it (max-capacity, max-filter-memory, and for
cuckoo filters cf-max-expansions and cf-error-rate): a replica and an AOF replay build the same growth part and
refuse the same adds whatever their own configuration says."""
import os

import rb_fixtures
from resp import Error, Raw, aof_commands

FIXTURES = rb_fixtures.Fixtures()
TOO_BIG = Error("ERR filter would be larger than the module's max_filter_memory")
OTHER = ("cf-max-expansions", "1", "cf-error-rate", "0.2", "max-capacity", "64", "max-filter-memory", str(1 << 40))
GROWN = ("cf_b1", "cf_b2", "cf_b4", "cf_auto", "bf_scale", "bf_exp3", "bf_auto")
REFUSED = ("cf_b4", "bf_exp3")  # RedisBloom parts above 4096 bytes: no room for growth under that limit


def grow(m, kind, key, rounds, size):
    """Adds batches of new items to key on m; every reply, stopping after the first batch with a refusal. CAPACITY
    (ignored for a key that exists) must not make a replica with a lower max-capacity refuse the write."""
    replies = []
    for i in range(rounds):
        items = ["g%d-%d" % (i, j) for j in range(size)]
        got = m(kind.upper() + ".INSERT", key, "CAPACITY", 1000, "ITEMS", *items)  # 1000: above OTHER's max-capacity
        replies.append(got)
        if refused(got):
            break
    return replies


def refused(replies):
    """CF.INSERT answers -1 for an item with no room, BF.INSERT the error that ends its reply."""
    return -1 in replies or TOO_BIG in replies


def digests(c, keys):
    return [c("DEBUG", "DIGEST-VALUE", k) for k in keys]


def test_growth_follows_the_master_configuration(make_server):
    master = make_server("master", extra=("--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                                          "--repl-diskless-sync-delay", "0"))
    m = Raw(master.port)
    replica = make_server("replica", extra=("--replicaof", "127.0.0.1", str(master.port)), module_args=OTHER)
    r = Raw(replica.port)
    replica.wait_replica_link()
    keys = []
    for name in GROWN:
        assert m("RESTORE", name, 0, FIXTURES.payload(name)) == "OK"
        keys.append(name)
    for name in REFUSED:
        assert m("RESTORE", name + ":full", 0, FIXTURES.payload(name)) == "OK"
    for name in GROWN:
        replies = grow(m, FIXTURES.expected[name]["kind"], name, 4, 500)
        assert not any(refused(batch) for batch in replies), name
    # the master's limit below the RedisBloom part: the growth part is refused on the master, and so everywhere
    assert m("CONFIG", "SET", "nidus.max-filter-memory", 4096) == "OK"
    for name in REFUSED:
        kind = FIXTURES.expected[name]["kind"]
        replies = grow(m, kind, name + ":full", 20, 500)
        assert refused(replies[-1]), name
        keys.append(name + ":full")
    assert m("WAIT", 1, 5000) == 1
    digest = digests(m, keys)
    assert digests(r, keys) == digest
    assert [r("CF.INFO" if k.startswith("cf") else "BF.INFO", k) for k in keys] == \
        [m("CF.INFO" if k.startswith("cf") else "BF.INFO", k) for k in keys]
    master.stop(nosave=True)
    master.module_args = list(OTHER)
    master.start()  # replays the AOF (no RDB preamble) under another configuration
    m = Raw(master.port)
    assert digests(m, keys) == digest


def resp_encode(cmd):
    return b"*%d\r\n" % len(cmd) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in cmd)


def test_an_aof_without_growth_settings_replays_under_this_configuration(make_server):
    """An AOF written before growth settings were replicated has the writes alone: they replay, and grow the
    keys under the configuration of the server that replays them. The announcement itself is not a client's."""
    s = make_server("old", extra=("--appendonly", "yes", "--aof-use-rdb-preamble", "no"))
    m = Raw(s.port)
    assert isinstance(m("CF.AT", "cf_b1", 0, "GROW", 1000, 1 << 20, 4, "0.01"), Error)
    for name in ("cf_b1", "bf_scale"):
        assert m("RESTORE", name, 0, FIXTURES.payload(name)) == "OK"
        assert not refused(grow(m, FIXTURES.expected[name]["kind"], name, 3, 500)[-1])
    keys = ("cf_b1", "bf_scale")
    digest = digests(m, keys)
    s.stop(nosave=True)
    aof = os.path.join(s.dir, "appendonlydir")
    dropped = 0
    for f in os.listdir(aof):
        if f.endswith(".incr.aof"):
            with open(os.path.join(aof, f), "rb") as fh:
                cmds = [args for _, _, args in aof_commands(fh.read())]
            kept = [c for c in cmds if not (c[0].upper() in (b"CF.AT", b"BF.AT") and c[3].upper() == b"GROW")]
            dropped += len(cmds) - len(kept)
            with open(os.path.join(aof, f), "wb") as fh:
                fh.write(b"".join(resp_encode(c) for c in kept))
    assert dropped == 2  # one a key
    s.start()
    assert digests(Raw(s.port), keys) == digest
    s.stop(nosave=True)
    s.module_args = list(OTHER)
    s.start()  # the writes alone grow under this configuration
    assert digests(Raw(s.port), keys) != digest

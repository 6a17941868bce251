# SPDX-License-Identifier: BSD-3-Clause
"""Windowed keys (CF.RESERVE / BF.RESERVE ... WINDOW ms, and WINDOW on the INSERTs): the grammar and its
errors, expiry at the master's clock, live copies only for CF.COUNT / CF.DEL / CF.ADDNX, Bloom renewals, the
write's time carried through replication, the AOF (without an RDB preamble), RDB, DEBUG RELOAD, DUMP/RESTORE and
SCANDUMP/LOADCHUNK, and keys that grow past their capacity (EXPANSION) through all of these."""
import time

from conftest import wait_for
from resp import Error, Raw, scandump

MAX_TICKS = 1 << 48
# Keys whose DEBUG DIGEST-VALUE two copies compare take the longest window: the timer's sweep step at an epoch
# turn (every W / 5 on the absolute grid) would change one copy's bytes before the other's.
STILL = MAX_TICKS
KEYS = ["k%d" % i for i in range(200)]


def info(c, kind, key):
    reply = c(kind + ".INFO", key)
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}


def test_grammar_and_errors(server):
    c = Raw(server.port)
    assert c("CF.RESERVE", "cw", 1000, "BUCKETSIZE", 4, "MAXITERATIONS", 50, "EXPANSION", 1, "WINDOW", 60000) == "OK"
    assert c("BF.RESERVE", "bw", "0.001", 1000, "WINDOW", 60000) == "OK"
    assert c("BF.RESERVE", "bw2", "0.01", 1000, "NONSCALING", "WINDOW", 1) == "OK"
    assert c("BF.RESERVE", "bw3", "0.01", 1000, "EXPANSION", 2, "WINDOW", MAX_TICKS) == "OK"
    assert c("TYPE", "cw") == "nidus--CW" and c("TYPE", "bw") == "nidus--BW"
    cf_range = Error("WINDOW: value must be in the range [1, %d] (milliseconds)" % MAX_TICKS)
    bf_range = Error("ERR window must be in the range [1, %d] (milliseconds)" % MAX_TICKS)
    arity = Error("ERR wrong number of arguments for 'cf.reserve' command")
    for bad, cf_error, bf_error, insert_error in [
            ("0", cf_range, bf_range, "Bad window"), ("-5", cf_range, bf_range, "Bad window"),
            (str(MAX_TICKS + 1), cf_range, bf_range, "Bad window"),
            ("abc", Error("Couldn't parse WINDOW"), Error("ERR bad window"), "Bad window"),
            ("1.5", Error("Couldn't parse WINDOW"), Error("ERR bad window"), "Bad window")]:
        assert c("CF.RESERVE", "x", 1000, "WINDOW", bad) == cf_error, bad
        assert c("CF.INSERT", "x", "WINDOW", bad, "ITEMS", "a") == cf_error, bad
        assert c("CF.INSERTNX", "x", "WINDOW", bad, "ITEMS", "a") == cf_error, bad
        assert c("BF.RESERVE", "x", "0.01", 1000, "WINDOW", bad) == bf_error, bad
        assert c("BF.INSERT", "x", "WINDOW", bad, "ITEMS", "a") == Error(insert_error), bad
    assert c("CF.RESERVE", "x", 1000, "WINDOW") == arity
    assert c("BF.RESERVE", "x", "0.01", 1000, "WINDOW") == Error("ERR no window")
    assert c("CF.INSERT", "x", "WINDOW") == Error("ERR wrong number of arguments for 'cf.insert' command")
    assert c("CF.RESERVE", "x", 1000, "SEMISORT", "BUCKETSIZE", 4, "WINDOW", 100) == \
        Error("ERR SEMISORT and WINDOW cannot be used together")
    assert c("CF.RESERVE", "x", 1000, "FINGERPRINT", 30, "WINDOW", 100) == \
        Error("ERR FINGERPRINT must be an integer between 4 and 29 with WINDOW")
    assert c("CF.RESERVE", "x", 1 << 31, "WINDOW", 100) == \
        Error("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]")
    assert c("EXISTS", "x") == 0  # no bad value created anything
    # the existing key's kind and family decide
    assert c("CF.RESERVE", "cw", 10, "WINDOW", 5) == Error("ERR item exists")
    assert c("BF.RESERVE", "bw", "0.01", 10, "WINDOW", 5) == Error("ERR item exists")
    wrongtype = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert c("CF.RESERVE", "bw", 10, "WINDOW", 5) == wrongtype
    for cmd in (("BF.ADD", "cw", "a"), ("BF.EXISTS", "cw", "a"), ("BF.INFO", "cw"), ("CF.ADD", "bw", "a"),
                ("CF.EXISTS", "bw", "a"), ("CF.COUNT", "bw", "a"), ("CF.DEL", "bw", "a"), ("CF.INFO", "bw"),
                ("BF.CARD", "cw")):
        assert c(*cmd) == wrongtype, cmd
    assert c("CF.INSERT", "missing", "NOCREATE", "WINDOW", 100, "ITEMS", "a") == Error("ERR not found")
    assert c("BF.INSERT", "missing", "NOCREATE", "WINDOW", 100, "ITEMS", "a") == Error("ERR not found")
    # WINDOW applies to the filter an INSERT creates; an existing key keeps its own
    assert c("CF.INSERT", "cw", "WINDOW", 5, "ITEMS", "a") == [1]
    assert info(c, "CF", "cw")["Window"] == 60000
    assert c("CF.INSERT", "ci", "CAPACITY", 500, "WINDOW", 1000, "ITEMS", "a", "b") == [1, 1]
    assert c("CF.INSERTNX", "cn", "WINDOW", 1000, "ITEMS", "a", "a") == [1, 0]
    assert c("BF.INSERT", "bi", "CAPACITY", 500, "ERROR", "0.001", "WINDOW", 1000, "ITEMS", "a", "a") == [1, 0]
    assert c("TYPE", "ci") == "nidus--CW" and c("TYPE", "cn") == "nidus--CW" and c("TYPE", "bi") == "nidus--BW"
    # only a master's stream and the AOF send the time-carrying forms
    assert c("CF.AT", "cw", 0, "CF.ADD", "a") == \
        Error("ERR CF.AT is sent by a master to its replicas and the AOF, not by clients")
    assert c("BF.AT", "bw", 0, "SWEEP", 10) == \
        Error("ERR BF.AT is sent by a master to its replicas and the AOF, not by clients")


def test_every_command_answers(server):
    c = Raw(server.port)
    assert c("CF.RESERVE", "cw", 1000, "WINDOW", 60000) == "OK"
    assert c("CF.ADD", "cw", "a") == 1 and c("CF.ADD", "cw", "a") == 1
    assert c("CF.ADDNX", "cw", "a") == 0 and c("CF.ADDNX", "cw", "b") == 1
    assert c("CF.EXISTS", "cw", "a") == 1 and c("CF.EXISTS", "cw", "zz") == 0
    assert c("CF.MEXISTS", "cw", "a", "b", "zz") == [1, 1, 0]
    assert c("CF.COUNT", "cw", "a") == 2 and c("CF.COUNT", "cw", "zz") == 0
    assert c("CF.DEL", "cw", "a") == 1 and c("CF.COUNT", "cw", "a") == 1
    assert c("CF.DEL", "cw", "zz") == 0
    assert c("CF.COMPACT", "cw") == "OK"
    i = info(c, "CF", "cw")
    plain = Raw(server.port)
    plain("CF.RESERVE", "plain", 1000)
    # RedisBloom's fields and ours in the same order as any cuckoo filter's, then the window's
    assert list(i)[:14] == list(info(plain, "CF", "plain"))
    assert list(i)[14:] == ["Window", "Epoch", "Entries"]
    assert i["Number of items inserted"] == 2 and i["Window"] == 60000 and i["Epoch"] == 12000
    assert i["Capacity"] == 1000 and i["Number of filters"] == 1
    assert c("CF.DEBUG", "cw").startswith(b"bktsize:2 ")
    assert c("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", 60000) == "OK"
    assert c("BF.ADD", "bw", "x") == 1 and c("BF.ADD", "bw", "x") == 0
    assert c("BF.MADD", "bw", "x", "y", "z") == [0, 1, 1]
    assert c("BF.INSERT", "bw", "ITEMS", "y", "w") == [0, 1]
    assert c("BF.EXISTS", "bw", "x") == 1 and c("BF.EXISTS", "bw", "nope") == 0
    assert c("BF.MEXISTS", "bw", "x", "w", "nope") == [1, 1, 0]
    assert c("BF.CARD", "bw") == 4
    b = info(c, "BF", "bw")
    assert list(b) == ["Capacity", "Size", "Number of filters", "Number of items inserted", "Expansion rate",
                       "Window"]
    assert b["Capacity"] == 1000 and b["Number of items inserted"] == 4 and b["Expansion rate"] == 2
    assert b["Window"] == 60000
    assert c("BF.INFO", "bw", "ITEMS") == [4] and c("BF.INFO", "bw", "WINDOW") == [60000]
    assert c("BF.INFO", "bw", "NOPE") == Error("Invalid information value")
    assert len(c("BF.DEBUG", "bw")) == 2
    r3 = Raw(server.port, resp3=True)
    assert r3("BF.INFO", "bw")["Window"] == 60000 and r3("CF.INFO", "cw")["Window"] == 60000
    assert r3("CF.EXISTS", "cw", "a") is True and r3("BF.ADD", "bw", "v") is True
    assert r3("BF.INFO", "bw", "WINDOW") == {"Window": 60000}


def added_at(c, *cmd):
    """Runs a write; the server ran it between the two times returned (milliseconds of this machine's clock, the
    server's clock too)."""
    t0 = time.time() * 1000
    reply = c(*cmd)
    return reply, t0, time.time() * 1000


def test_expiry_precision(server):
    """At W = 200 ms: present through [t, t + W] at every lookup, absent from t + 1.25 W on."""
    c = Raw(server.port)
    window = 200
    c("CF.RESERVE", "cw", 1000, "WINDOW", window)
    c("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", window)
    firsts = []
    for _ in range(5):
        c("CF.INSERT", "cw", "ITEMS", *KEYS)  # older items keep the table busy: they expire meanwhile
        reply, t0, t1 = added_at(c, "CF.INSERT", "cw", "ITEMS", "fresh")
        assert reply == [1]
        _, b0, b1 = added_at(c, "BF.ADD", "bw", "fresh")
        first_absent = None
        while True:
            s0 = time.time() * 1000
            cf, bf = c("CF.EXISTS", "cw", "fresh"), c("BF.EXISTS", "bw", "fresh")
            s1 = time.time() * 1000
            if cf == 0 and first_absent is None:
                first_absent = s0 - t0
            if s1 <= t0 + window:
                assert cf == 1, "absent %.1f ms after its add, inside the window" % (s1 - t0)
            if s1 <= b0 + window:
                assert bf == 1, "absent %.1f ms after its add, inside the window" % (s1 - b0)
            # each item against its own add: the Bloom add ran after the cuckoo one, later still on a busy machine
            if s0 >= t1 + 1.25 * window:
                assert cf == 0, "present %.1f ms after its add" % (s0 - t1)
            if s0 >= b1 + 1.25 * window:
                assert bf == 0, "present %.1f ms after its add" % (s0 - b1)
            if s0 >= max(t1, b1) + 1.25 * window:
                break
            time.sleep(0.002)
        assert first_absent is not None
        firsts.append(first_absent)
        assert c("CF.COUNT", "cw", "fresh") == 0 and c("CF.DEL", "cw", "fresh") == 0
        assert c("CF.ADDNX", "cw", "fresh") == 1  # an expired copy is no obstacle
        assert c("CF.DEL", "cw", "fresh") == 1
    print("W = %d ms: first absent %s ms after the add (bound: %d to %d)" %
          (window, ", ".join("%.0f" % f for f in firsts), window, 1.25 * window))


def test_live_copies_and_renewals(server):
    """W = 1 s: copies counted, deleted and blocking ADDNX while live only; a Bloom add renews a live item. Each
    check is asserted for the times it is certain at (a busy machine may run it later than planned)."""
    c = Raw(server.port)
    window = 1000
    c("CF.RESERVE", "cw", 1000, "WINDOW", window)
    c("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", window)
    _, t0, _ = added_at(c, "CF.ADD", "cw", "a")
    c("CF.ADD", "cw", "a")
    _, b0, _ = added_at(c, "BF.ADD", "bw", "x")
    assert c("CF.COUNT", "cw", "a") == 2 and c("CF.ADDNX", "cw", "a") == 0
    time.sleep(max(0, (b0 + 600) / 1000 - time.time()))
    renewed, r0, r1 = added_at(c, "BF.ADD", "bw", "x")
    if r1 <= b0 + window:
        assert renewed == 0  # live: renewed, not added
    _, n0, _ = added_at(c, "CF.ADD", "cw", "b")
    time.sleep(max(0, (t0 + 1300) / 1000 - time.time()))
    # past 1.25 W after the first adds: those copies are gone; the renewed Bloom item and b are younger than W
    s0 = time.time() * 1000
    assert c("CF.COUNT", "cw", "a") == 0 and c("CF.DEL", "cw", "a") == 0
    both = c("CF.EXISTS", "cw", "b"), c("BF.EXISTS", "bw", "x"), c("BF.CARD", "bw")
    if time.time() * 1000 <= min(n0, r0) + window:
        assert both == (1, 1, 1)
    assert s0 >= t0 + 1250
    assert c("CF.ADDNX", "cw", "a") == 1 and c("CF.COUNT", "cw", "a") == 1
    assert wait_for(lambda: c("BF.EXISTS", "bw", "x") == 0, 3)
    assert c("BF.CARD", "bw") == 0 and c("BF.ADD", "bw", "x") == 1


def digests(c, keys):
    return [c("DEBUG", "DIGEST-VALUE", k) for k in keys]


def test_replica_answers_as_its_master(make_server):
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0"))
    m = Raw(master.port)
    m("CF.RESERVE", "long", 1000, "WINDOW", 600000)
    m("CF.INSERT", "long", "ITEMS", *KEYS[:100])
    m("BF.RESERVE", "blong", "0.01", 1000, "WINDOW", 600000)
    m("BF.MADD", "blong", *KEYS[:100])
    replica = make_server("replica")
    r = Raw(replica.port)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    replica.wait_replica_link()
    m("CF.INSERT", "long", "ITEMS", *KEYS[100:])
    m("CF.DEL", "long", "k1")
    m("CF.ADDNX", "long", "k2")
    m("BF.INSERT", "blong", "ITEMS", *KEYS)
    m("CF.INSERT", "made", "WINDOW", 600000, "ITEMS", "p", "q")
    m("CF.RESERVE", "short", 1000, "WINDOW", 300)
    m("CF.INSERT", "short", "ITEMS", *KEYS)
    m("BF.RESERVE", "bshort", "0.01", 1000, "WINDOW", 300)
    m("BF.MADD", "bshort", *KEYS)
    for it, data in scandump(m, "CF", "long"):
        assert m("CF.LOADCHUNK", "loaded", it, data) == "OK"
    assert m("CF.MERGE", "merged", 2, "long", "loaded") == "OK"
    # a key SWAPDB moves to another database is swept there
    m2 = Raw(master.port)
    m2("SELECT", 2)
    m2("CF.INSERT", "swapped", "WINDOW", 300, "ITEMS", *KEYS)
    assert m("SWAPDB", 2, 3) == "OK"
    r3 = Raw(replica.port)
    r3("SELECT", 3)
    assert m("WAIT", 1, 5000) == 1
    for kind, key in (("CF", "long"), ("CF", "made"), ("CF", "loaded"), ("CF", "merged"), ("BF", "blong")):
        assert r(kind + ".MEXISTS", key, *KEYS) == m(kind + ".MEXISTS", key, *KEYS), key
        assert r(kind + ".INFO", key) == m(kind + ".INFO", key), key
    assert r("CF.COUNT", "long", "k2") == m("CF.COUNT", "long", "k2") == 1
    # the short windows expire on the master by its clock, on the replica by the master's sweep steps
    assert wait_for(lambda: m("CF.MEXISTS", "short", *KEYS) == [0] * len(KEYS), 3)
    assert wait_for(lambda: r("CF.MEXISTS", "short", *KEYS) == [0] * len(KEYS), 3)
    assert wait_for(lambda: r("BF.MEXISTS", "bshort", *KEYS) == [0] * len(KEYS), 3)
    assert r("BF.CARD", "bshort") == m("BF.CARD", "bshort") == 0
    assert wait_for(lambda: r3("CF.MEXISTS", "swapped", *KEYS) == [0] * len(KEYS), 3)
    # byte for byte: every sweep the master took reached the replica
    keys = ("long", "made", "loaded", "merged", "blong", "short", "bshort")
    assert wait_for(lambda: m("WAIT", 1, 1000) == 1 and digests(r, keys) == digests(m, keys), 5)
    assert r("DEBUG", "DIGEST") == m("DEBUG", "DIGEST")


def test_debug_reload_rdb_restart_dump_restore(server):
    c = Raw(server.port)
    c("CF.RESERVE", "cw", 1000, "WINDOW", STILL)
    c("CF.INSERT", "cw", "ITEMS", *KEYS)
    c("CF.ADD", "cw", "dup")
    c("CF.ADD", "cw", "dup")
    c("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", STILL)
    c("BF.MADD", "bw", *KEYS)
    c("CF.RESERVE", "big", 3000000, "WINDOW", STILL)  # an encoding of more than 4 MiB
    c("CF.INSERT", "big", "ITEMS", *KEYS)

    def snapshot():
        return (c("CF.MEXISTS", "cw", *KEYS), c("BF.MEXISTS", "bw", *KEYS), c("CF.COUNT", "cw", "dup"),
                c("CF.INFO", "cw"), c("BF.INFO", "bw"), digests(c, ("cw", "bw", "big")),
                c("CF.MEXISTS", "big", *KEYS))

    before = snapshot()
    assert before[0] == [1] * len(KEYS) and before[2] == 2 and before[6] == [1] * len(KEYS)
    assert info(c, "CF", "big")["Size"] > 4 << 20
    assert c("DEBUG", "RELOAD") == "OK"
    assert snapshot() == before
    assert c("SAVE") == "OK"
    server.stop(nosave=True)
    server.start()
    c = Raw(server.port)
    assert snapshot() == before
    for key in ("cw", "bw"):
        payload = c("DUMP", key)
        assert c("RESTORE", key + "2", 0, payload) == "OK"
        assert c("DEBUG", "DIGEST-VALUE", key + "2") == c("DEBUG", "DIGEST-VALUE", key)
        assert c("TYPE", key + "2") == c("TYPE", key)
        # corrupt payloads are refused, whichever byte is hit
        body = bytearray(payload)
        for pos in (3, len(body) // 2, len(body) - 12):
            bad = bytearray(body)
            bad[pos] ^= 0x20
            assert isinstance(c("RESTORE", key + "bad", 0, bytes(bad)), Error), pos
        assert c("EXISTS", key + "bad") == 0
    assert c("CF.MEXISTS", "cw2", *KEYS) == before[0]
    assert c("BF.MEXISTS", "bw2", *KEYS) == before[1]
    assert c("COPY", "cw", "cw3") == 1 and c("CF.MEXISTS", "cw3", *KEYS) == before[0]


def test_scandump_loadchunk_round_trip(server):
    c = Raw(server.port)
    c("CF.RESERVE", "cw", 1000, "WINDOW", STILL)
    c("CF.INSERT", "cw", "ITEMS", *KEYS)
    c("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", STILL)
    c("BF.MADD", "bw", *KEYS)
    c("CF.RESERVE", "big", 3000000, "WINDOW", STILL)
    c("CF.INSERT", "big", "ITEMS", *KEYS)
    for kind, key in (("CF", "cw"), ("BF", "bw"), ("CF", "big")):
        chunks = scandump(c, kind, key)
        assert chunks
        for it, data in chunks:
            assert c(kind + ".LOADCHUNK", key + "-copy", it, data) == "OK"
        assert c("TYPE", key + "-copy") == c("TYPE", key)
        assert c(kind + ".MEXISTS", key + "-copy", *KEYS) == [1] * len(KEYS)
        assert c(kind + ".INFO", key + "-copy") == c(kind + ".INFO", key)
        assert c("DEBUG", "DIGEST-VALUE", key + "-copy") == c("DEBUG", "DIGEST-VALUE", key)
        # a header for a key that exists, or a damaged one, creates nothing
        it, data = chunks[0]
        assert isinstance(c(kind + ".LOADCHUNK", key + "-copy", it, data), Error)
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 1
        assert isinstance(c(kind + ".LOADCHUNK", key + "-bad", it, bytes(bad)), Error)
        assert c("EXISTS", key + "-bad") == 0


def test_aof_without_preamble_brings_no_expired_item_back(make_server):
    s = make_server("aof", extra=("--appendonly", "yes", "--aof-use-rdb-preamble", "no"))
    c = Raw(s.port)
    c("CF.RESERVE", "cw", 1000, "WINDOW", 300)
    c("CF.INSERT", "cw", "ITEMS", *KEYS)
    c("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", 300)
    c("BF.MADD", "bw", *KEYS)
    c("CF.INSERT", "kept", "WINDOW", STILL, "ITEMS", *KEYS)
    c("BF.INSERT", "bkept", "CAPACITY", 1000, "WINDOW", STILL, "ITEMS", *KEYS)
    c("CF.DEL", "kept", "k0")
    # stopped at once: the AOF holds the adds with their time, not a sweep
    s.stop(nosave=True)
    time.sleep(0.5)  # the short window's items expire while the server is down
    s.start()
    c = Raw(s.port)
    assert c("CF.MEXISTS", "cw", *KEYS) == [0] * len(KEYS)
    assert c("BF.MEXISTS", "bw", *KEYS) == [0] * len(KEYS)
    assert c("BF.CARD", "bw") == 0 and info(c, "CF", "cw")["Number of items inserted"] == 0
    assert c("CF.MEXISTS", "kept", *KEYS) == [0] + [1] * (len(KEYS) - 1)
    assert c("BF.MEXISTS", "bkept", *KEYS) == [1] * len(KEYS)
    # and after a rewrite (LOADCHUNK commands of the filters as they are) too
    c("CF.INSERT", "cw", "ITEMS", "late")
    assert c("BGREWRITEAOF").startswith("Background")
    s.wait_aof_rewrite()
    before = digests(c, ("kept", "bkept"))
    s.stop(nosave=True)
    time.sleep(0.5)
    s.start()
    c = Raw(s.port)
    assert c("CF.EXISTS", "cw", "late") == 0
    assert c("CF.MEXISTS", "kept", *KEYS) == [0] + [1] * (len(KEYS) - 1)
    assert digests(c, ("kept", "bkept")) == before


def test_merge_of_like_windows(server):
    c = Raw(server.port)
    for key, items in (("a", KEYS[:100]), ("b", KEYS[100:])):
        c("CF.RESERVE", key, 1000, "WINDOW", 60000)
        c("CF.INSERT", key, "ITEMS", *items)
        c("BF.RESERVE", "b" + key, "0.01", 1000, "WINDOW", 60000)
        c("BF.MADD", "b" + key, *items)
    c("CF.ADD", "b", "k5")
    assert c("CF.MERGE", "a", 1, "b") == "OK"
    assert c("CF.MEXISTS", "a", *KEYS) == [1] * len(KEYS)
    assert c("CF.COUNT", "a", "k5") == 2  # copies add, each with its own age
    assert c("CF.MERGE", "new", 2, "a", "b") == "OK"  # created like the first source
    assert c("TYPE", "new") == "nidus--CW" and info(c, "CF", "new")["Window"] == 60000
    assert c("CF.MEXISTS", "new", *KEYS) == [1] * len(KEYS)
    assert c("BF.MERGE", "bnew", 2, "ba", "bb") == "OK"
    assert c("BF.MEXISTS", "bnew", *KEYS) == [1] * len(KEYS) and c("TYPE", "bnew") == "nidus--BW"
    # unlike windows, and a windowed filter with a plain one, are refused; nothing changes
    c("CF.RESERVE", "short", 1000, "WINDOW", 1000)
    c("CF.RESERVE", "plain", 1000)
    before = c("DEBUG", "DIGEST-VALUE", "a")
    reply = c("CF.MERGE", "a", 1, "short")
    assert isinstance(reply, Error) and reply.startswith("ERR incompatible sourcekey 1: "), reply
    both = Error("ERR a windowed filter and one without a window do not merge")
    assert c("CF.MERGE", "a", 1, "plain") == both and c("CF.MERGE", "plain", 1, "a") == both
    assert c("CF.MERGE", "x", 2, "a", "plain") == both and c("BF.MERGE", "ba", 1, "a") == \
        Error("WRONGTYPE Operation against a key holding the wrong kind of value")
    assert c("DEBUG", "DIGEST-VALUE", "a") == before and c("EXISTS", "x") == 0


def grown_keys(c, window=STILL):
    """Windowed keys past their capacity in one window: grown by EXPANSION (CF's default 1, given 2 or 4; BF's
    default 2), and ones that may not grow (EXPANSION 0, NONSCALING)."""
    assert c("CF.RESERVE", "cg", 100, "MAXITERATIONS", 50, "EXPANSION", 2, "WINDOW", window) == "OK"
    assert c("CF.INSERT", "cg", "ITEMS", *KEYS) == [1] * len(KEYS)
    assert c("CF.ADD", "cg", "k0") == 1  # a second copy, in a grown table
    assert c("CF.INSERT", "cgi", "CAPACITY", 50, "EXPANSION", 4, "WINDOW", window, "ITEMS", *KEYS) == [1] * len(KEYS)
    nx = c("CF.INSERTNX", "cgn", "CAPACITY", 50, "WINDOW", window, "ITEMS", *KEYS)
    assert set(nx) <= {0, 1} and nx.count(0) <= 5  # never full; 0 only for a false positive
    assert c("CF.MEXISTS", "cgn", *KEYS) == [1] * len(KEYS)
    assert c("BF.RESERVE", "bg", "0.001", 100, "WINDOW", window) == "OK"
    assert c("BF.MADD", "bg", *KEYS) == [1] * len(KEYS)
    bi = c("BF.INSERT", "bgi", "CAPACITY", 50, "EXPANSION", 3, "WINDOW", window, "ITEMS", *KEYS)
    assert set(bi) <= {0, 1} and bi.count(0) <= 5  # never full; 0 only for a false positive
    assert c("BF.MEXISTS", "bgi", *KEYS) == [1] * len(KEYS)
    return ("cg", "cgi", "cgn", "bg", "bgi")


def answers(c):
    return [c(kind + ".MEXISTS", key, *KEYS) for kind, key in
            (("CF", "cg"), ("CF", "cgi"), ("CF", "cgn"), ("BF", "bg"), ("BF", "bgi"))] + \
        [c("CF.COUNT", "cg", "k0"), c("CF.INFO", "cg"), c("BF.INFO", "bg"), c("CF.INFO", "cgi"), c("BF.INFO", "bgi")]


def test_growth_and_full(server):
    c = Raw(server.port)
    grown_keys(c)
    assert c("CF.MEXISTS", "cg", *KEYS) == [1] * len(KEYS) and c("CF.COUNT", "cg", "k0") == 2
    i = info(c, "CF", "cg")
    assert i["Number of filters"] == 2 and i["Expansion rate"] == 2 and i["Max iterations"] == 50
    assert i["Capacity"] == 100 + 200 and i["Number of items inserted"] == len(KEYS) + 1
    gi = info(c, "CF", "cgi")
    assert gi["Number of filters"] == 2 and gi["Expansion rate"] == 4 and gi["Capacity"] == 50 + 200
    gn = info(c, "CF", "cgn")  # RedisBloom's defaults: expansion 1, 20 iterations
    assert gn["Expansion rate"] == 1 and gn["Max iterations"] == 20 and gn["Number of filters"] >= 3
    assert "filters:2 max_iterations:50 expansion:2 " in c("CF.DEBUG", "cg").decode()
    b = info(c, "BF", "bg")
    assert b["Expansion rate"] == 2 and b["Number of filters"] == 2 and b["Capacity"] == 100 + 200
    assert b["Number of items inserted"] == len(KEYS)
    assert c("BF.INFO", "bg", "FILTERS") == [2] and c("BF.INFO", "bg", "EXPANSION") == [2]
    assert info(c, "BF", "bgi")["Expansion rate"] == 3
    assert c("BF.MEXISTS", "bg", *KEYS) == [1] * len(KEYS) and c("BF.CARD", "bg") == len(KEYS)
    # a renewal of an item in a grown table, and a delete of the oldest copy
    assert c("BF.ADD", "bg", "k150") == 0 and c("BF.CARD", "bg") == len(KEYS)
    assert c("CF.DEL", "cg", "k0") == 1 and c("CF.COUNT", "cg", "k0") == 1
    # EXPANSION 0 and NONSCALING keep "filter is full"
    assert c("CF.RESERVE", "cf0", 100, "EXPANSION", 0, "WINDOW", STILL) == "OK"
    replies = c("CF.INSERT", "cf0", "ITEMS", *KEYS)
    assert -1 in replies and set(replies) == {1, -1}
    assert c("CF.ADD", "cf0", "more") == Error("Filter is full")
    assert info(c, "CF", "cf0")["Number of filters"] == 1 and info(c, "CF", "cf0")["Expansion rate"] == 0
    for args in (("NONSCALING",), ("EXPANSION", 0)):
        c("DEL", "bf0")
        assert c("BF.RESERVE", "bf0", "0.01", 100, *args, "WINDOW", STILL) == "OK"
        replies = c("BF.MADD", "bf0", *KEYS)
        assert Error("ERR non scaling filter is full") in replies, args
        b0 = info(c, "BF", "bf0")
        assert b0["Expansion rate"] is None and b0["Number of filters"] == 1
    # bad expansions create nothing
    assert c("CF.INSERT", "x", "EXPANSION", 32769, "WINDOW", 100, "ITEMS", "a") == \
        Error("EXPANSION: value must be in the range [0, 32768]")
    assert c("CF.INSERT", "x", "EXPANSION", "abc", "WINDOW", 100, "ITEMS", "a") == Error("Couldn't parse EXPANSION")
    assert c("CF.RESERVE", "x", 100, "EXPANSION", -1, "WINDOW", 100) == \
        Error("EXPANSION: value must be in the range [0, 32768]")
    assert c("BF.RESERVE", "x", "0.01", 100, "EXPANSION", 40000, "WINDOW", 100) == \
        Error("ERR expansion must be in the range [0, 32768]")
    assert c("BF.INSERT", "x", "EXPANSION", -2, "WINDOW", 100, "ITEMS", "a") == Error("Bad expansion")
    assert c("EXISTS", "x") == 0


def test_grown_keys_shrink_after_expiry(server):
    c = Raw(server.port)
    assert c("CF.RESERVE", "s", 50, "EXPANSION", 2, "WINDOW", 300) == "OK"
    assert c("CF.INSERT", "s", "ITEMS", *KEYS) == [1] * len(KEYS)
    assert c("BF.RESERVE", "bs", "0.001", 50, "WINDOW", 300) == "OK"
    assert -1 not in c("BF.MADD", "bs", *KEYS) and c("BF.MEXISTS", "bs", *KEYS) == [1] * len(KEYS)
    assert info(c, "CF", "s")["Number of filters"] >= 2 and info(c, "BF", "bs")["Number of filters"] >= 2
    # once every item of the burst has expired, the grown tables go (at the next write or sweep step)
    assert wait_for(lambda: info(c, "CF", "s")["Number of filters"] == 1 and
                    info(c, "BF", "bs")["Number of filters"] == 1, 5)
    assert c("CF.MEXISTS", "s", *KEYS) == [0] * len(KEYS)
    assert c("CF.ADD", "s", "new") == 1 and info(c, "CF", "s")["Number of filters"] == 1


def test_grown_keys_reload_restart_dump_scandump(server):
    c = Raw(server.port)
    keys = grown_keys(c)
    before = answers(c)
    digest = digests(c, keys)
    assert c("DEBUG", "RELOAD") == "OK"
    assert answers(c) == before and digests(c, keys) == digest
    assert c("SAVE") == "OK"
    server.stop(nosave=True)
    server.start()
    c = Raw(server.port)
    assert answers(c) == before and digests(c, keys) == digest
    for key in keys:
        payload = c("DUMP", key)
        assert c("RESTORE", key + "-r", 0, payload) == "OK"
        assert c("DEBUG", "DIGEST-VALUE", key + "-r") == c("DEBUG", "DIGEST-VALUE", key)
        bad = bytearray(payload)
        bad[len(bad) // 2] ^= 0x20
        assert isinstance(c("RESTORE", key + "-bad", 0, bytes(bad)), Error)
        kind = "BF" if key.startswith("b") else "CF"
        chunks = scandump(c, kind, key)
        for it, data in chunks:
            assert c(kind + ".LOADCHUNK", key + "-c", it, data) == "OK"
        assert c("DEBUG", "DIGEST-VALUE", key + "-c") == c("DEBUG", "DIGEST-VALUE", key)
        assert c(kind + ".INFO", key + "-c") == c(kind + ".INFO", key)
        assert c(kind + ".MEXISTS", key + "-c", *KEYS) == [1] * len(KEYS)
    assert c("EXISTS", "cg-bad") == 0
    # merges of grown like windows: every item of both
    assert c("CF.MERGE", "cg-m", 2, "cg", "cg-r") == "OK"
    assert c("CF.MEXISTS", "cg-m", *KEYS) == [1] * len(KEYS) and c("CF.COUNT", "cg-m", "k0") == 4


def test_grown_keys_replica_and_aof(make_server):
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0", "--appendonly", "yes",
                                          "--aof-use-rdb-preamble", "no"))
    m = Raw(master.port)
    m("CF.RESERVE", "early", 50, "EXPANSION", 2, "WINDOW", STILL)
    m("CF.INSERT", "early", "ITEMS", *KEYS)
    replica = make_server("replica")
    r = Raw(replica.port)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    replica.wait_replica_link()
    keys = grown_keys(m) + ("early",)
    m("CF.RESERVE", "short", 50, "EXPANSION", 2, "WINDOW", 300)
    m("CF.INSERT", "short", "ITEMS", *KEYS)
    assert m("WAIT", 1, 5000) == 1
    assert answers(r) == answers(m)
    assert r("CF.INFO", "early") == m("CF.INFO", "early") and info(r, "CF", "early")["Number of filters"] >= 2
    assert digests(r, keys) == digests(m, keys)
    # the short key's grown tables go on the replica by the master's sweep steps
    assert wait_for(lambda: info(m, "CF", "short")["Number of filters"] == 1, 5)
    assert wait_for(lambda: m("WAIT", 1, 1000) == 1 and info(r, "CF", "short")["Number of filters"] == 1 and
                    digests(r, ("short",)) == digests(m, ("short",)), 5)
    # the AOF (CF.AT / BF.AT with the master's times, no RDB preamble) replays the same growth
    before, digest = answers(m), digests(m, keys)
    master.stop(nosave=True)
    master.start()
    m = Raw(master.port)
    assert answers(m) == before and digests(m, keys) == digest


TOO_BIG = Error("ERR filter would be larger than the module's max_filter_memory")
BOUND = 65536  # max-filter-memory of the bounded master


def burst(c, kind, key, batch=1000, most=60):
    """Adds i0, i1, ... in batches until one batch meets a refusal, then one batch more; returns the items
    accepted (each replied 1; a Bloom add's 0 would be a false positive, counted too) and the replies."""
    accepted, refused, n = [], [], 0
    for _ in range(most):
        items = ["i%d" % (n + i) for i in range(batch)]
        n += batch
        if kind == "CF":
            replies = c("CF.INSERT", key, "ITEMS", *items)
        else:
            replies = c("BF.MADD", key, *items)
        accepted += [i for i, x in zip(items, replies) if x in (0, 1)]
        refused += [x for x in replies if x not in (0, 1)]
        if refused and len(refused) > batch // 2 or kind == "BF" and refused:
            break
    return accepted, refused


def first_error(c, kind, key, prefix, most=500):
    """The first error among single adds of new items (an add may still find room beside refused ones)."""
    for i in range(most):
        reply = c(kind + ".ADD", key, "%s%d" % (prefix, i))
        if isinstance(reply, Error):
            return reply
    return None


def bounded_keys(m):
    """Windowed keys made on a master with max-filter-memory BOUND, each given a burst past what the bound lets
    it grow to: EXPANSION 32768 (refused at its first growth), the defaults of CF (1) and BF (2) unspoken, and
    keys the INSERTs make. Returns the keys and their accepted items."""
    assert m("CF.RESERVE", "c32k", 1000, "EXPANSION", 32768, "WINDOW", STILL) == "OK"
    assert m("CF.RESERVE", "cdef", 1000, "WINDOW", STILL) == "OK"
    assert m("BF.RESERVE", "bdef", "0.01", 1000, "WINDOW", STILL) == "OK"
    assert m("CF.INSERT", "cins", "CAPACITY", 1000, "WINDOW", STILL, "ITEMS", "first") == [1]
    assert m("BF.INSERT", "bins", "CAPACITY", 1000, "WINDOW", STILL, "ITEMS", "first") == [1]
    kept = {}
    for kind, key in (("CF", "c32k"), ("CF", "cdef"), ("BF", "bdef"), ("CF", "cins"), ("BF", "bins")):
        accepted, refused = burst(m, kind, key)
        assert refused and set(refused) <= ({-1} if kind == "CF" else {TOO_BIG}), (key, set(refused))
        kept[key] = accepted
    return kept


def test_growth_is_bounded_by_max_filter_memory(make_server):
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0", "--appendonly", "yes",
                                          "--aof-use-rdb-preamble", "no"),
                         module_args=("max-filter-memory", str(BOUND)))
    m = Raw(master.port)
    # the replica's own configuration differs in every default a creation resolves
    other = ("max-filter-memory", str(1 << 30), "cf-expansion-factor", "4", "bf-expansion-factor", "8")
    replica = make_server("replica", module_args=other)
    r = Raw(replica.port)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    replica.wait_replica_link()
    kept = bounded_keys(m)
    keys = tuple(kept)
    c32k = info(m, "CF", "c32k")
    assert c32k["Number of filters"] == 1 and c32k["Expansion rate"] == 32768 and c32k["Size"] < BOUND
    assert m("CF.ADD", "c32k", "more") == TOO_BIG
    for kind, key in (("CF", "cdef"), ("BF", "bdef"), ("CF", "cins"), ("BF", "bins")):
        i = info(m, kind, key)
        # grown up to the bound, not past it (but for a stash's overflow map, which grows unasked)
        assert i["Number of filters"] >= 3 and BOUND // 2 < i["Size"] <= BOUND + 1024, (key, i)
        assert m(kind + ".MEXISTS", key, *kept[key]) == [1] * len(kept[key]), key
    assert info(m, "CF", "cdef")["Expansion rate"] == 1 and info(m, "BF", "bdef")["Expansion rate"] == 2
    assert first_error(m, "CF", "cdef", "more") == first_error(m, "BF", "bdef", "more") == TOO_BIG
    # the replica made the master's filters and refused what it refused: byte for byte
    assert m("WAIT", 1, 5000) == 1
    assert digests(r, keys) == digests(m, keys)
    for kind, key in (("CF", "c32k"), ("CF", "cdef"), ("BF", "bdef"), ("CF", "cins"), ("BF", "bins")):
        assert r(kind + ".INFO", key) == m(kind + ".INFO", key), key
        assert r(kind + ".MEXISTS", key, *kept[key]) == [1] * len(kept[key]), key
    # the AOF (no RDB preamble) replayed under another configuration makes the same filters, still bounded
    before = {k: digests(m, (k,)) for k in keys}
    master.stop(nosave=True)
    master.module_args = list(other)
    master.start()
    m = Raw(master.port)
    for kind, key in (("CF", "c32k"), ("CF", "cdef"), ("BF", "bdef"), ("CF", "cins"), ("BF", "bins")):
        assert digests(m, (key,)) == before[key], key
        assert m(kind + ".MEXISTS", key, *kept[key]) == [1] * len(kept[key]), key
    assert first_error(m, "CF", "c32k", "after") == first_error(m, "BF", "bdef", "after") == TOO_BIG


def test_loaded_keys_take_the_master_bound(make_server):
    """A windowed key made where max-filter-memory is larger, brought to a bounded master by LOADCHUNK or
    RESTORE, grows there within the master's bound; its replica (which loads LOADCHUNK unlimited, RESTORE under
    its own config) and an AOF replay hold the master's bound too: the same refusals, the same bytes."""
    big = make_server("big")
    b = Raw(big.port)
    assert b("CF.RESERVE", "c", 1000, "EXPANSION", 2, "WINDOW", STILL) == "OK"
    assert b("BF.RESERVE", "b", "0.01", 1000, "WINDOW", STILL) == "OK"
    b("CF.INSERT", "c", "ITEMS", *KEYS)
    b("BF.MADD", "b", *KEYS)
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0", "--appendonly", "yes",
                                          "--aof-use-rdb-preamble", "no"),
                         module_args=("max-filter-memory", str(BOUND)))
    m = Raw(master.port)
    other = ("max-filter-memory", str(1 << 30))
    replica = make_server("replica", module_args=other)
    r = Raw(replica.port)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    replica.wait_replica_link()
    for kind, key in (("CF", "c"), ("BF", "b")):
        for it, data in scandump(b, kind, key):
            assert m(kind + ".LOADCHUNK", key + "-lc", it, data) == "OK"
        assert m("RESTORE", key + "-rs", 0, b("DUMP", key)) == "OK"
    keys = ("c-lc", "c-rs", "b-lc", "b-rs")
    kept = {}
    for key in keys:
        kind = "BF" if key.startswith("b") else "CF"
        accepted, refused = burst(m, kind, key)
        assert refused and set(refused) <= ({-1} if kind == "CF" else {TOO_BIG}), (key, set(refused))
        assert info(m, kind, key)["Size"] <= BOUND + 1024, key
        kept[key] = accepted
    assert m("WAIT", 1, 5000) == 1
    assert digests(r, keys) == digests(m, keys)
    before = digests(m, keys)
    master.stop(nosave=True)
    master.module_args = list(other)
    master.start()
    m = Raw(master.port)
    assert digests(m, keys) == before
    for key in keys:
        kind = "BF" if key.startswith("b") else "CF"
        assert m(kind + ".MEXISTS", key, *kept[key]) == [1] * len(kept[key]), key

# SPDX-License-Identifier: BSD-3-Clause
"""Persistence: DEBUG RELOAD, RDB restarts, AOF rewrite restarts, DUMP/RESTORE, COPY, MEMORY USAGE,
DEBUG DIGEST, and hostile RESTORE payloads."""
import random

import redis

from resp import Error, Raw

KEYS = ["k%d" % i for i in range(3000)]


def fill(c):
    c("CF.RESERVE", "cf", 500, "EXPANSION", 2)  # small: it grows into several sub-filters
    c("CF.INSERT", "cf", "ITEMS", *KEYS)
    for _ in range(20):
        c("CF.ADD", "cf", "dup")
    c("CF.DEL", "cf", "k0")
    c("CF.RESERVE", "semi", 5000, "BUCKETSIZE", 4, "FINGERPRINT", 13, "SEMISORT")
    c("CF.INSERT", "semi", "ITEMS", *KEYS[:1000])
    c("BF.RESERVE", "bf", "0.001", 500)
    c("BF.MADD", "bf", *KEYS)
    c("BF.RESERVE", "ns", "0.01", 100, "NONSCALING")


def snapshot(c):
    """Everything a user can observe of the filters."""
    return {
        "cf": c("CF.INFO", "cf"), "semi": c("CF.INFO", "semi"), "bf": c("BF.INFO", "bf"), "ns": c("BF.INFO", "ns"),
        "cf_exists": c("CF.MEXISTS", "cf", *KEYS), "semi_exists": c("CF.MEXISTS", "semi", *KEYS),
        "bf_exists": c("BF.MEXISTS", "bf", *KEYS), "dup": c("CF.COUNT", "cf", "dup"),
        "digest": c("DEBUG", "DIGEST"),
    }


def test_debug_reload_keeps_everything(server):
    c = Raw(server.port)
    fill(c)
    before = snapshot(c)
    assert before["cf_exists"][1:] == [1] * (len(KEYS) - 1)
    assert c("DEBUG", "RELOAD") == "OK"
    assert snapshot(c) == before


def test_restart_from_rdb(make_server):
    s = make_server("rdb")
    c = Raw(s.port)
    fill(c)
    before = snapshot(c)
    assert c("SAVE") == "OK"
    s.stop(nosave=True)
    s.start()
    assert snapshot(Raw(s.port)) == before


def test_restart_from_rewritten_aof(make_server):
    s = make_server("aof", extra=("--appendonly", "yes"))
    c = Raw(s.port)
    fill(c)
    before = snapshot(c)
    assert c("BGREWRITEAOF").startswith("Background")
    r = s.client()
    for _ in range(200):
        if r.info("persistence")["aof_rewrite_in_progress"] == 0 and r.info("persistence")["aof_rewrite_scheduled"] == 0:
            break
        import time
        time.sleep(0.05)
    c("CF.ADD", "cf", "after-rewrite")  # and one more write on top of the rewritten base
    before["cf_exists"] = c("CF.MEXISTS", "cf", *KEYS)
    s.stop(nosave=True)
    s.extra = ["--appendonly", "yes"]
    s.start()
    c = Raw(s.port)
    after = snapshot(c)
    for k in ("cf_exists", "semi_exists", "bf_exists", "dup", "semi", "bf", "ns"):
        assert after[k] == before[k], k
    assert c("CF.EXISTS", "cf", "after-rewrite") == 1


def test_dump_restore_copy_memory_usage(server):
    c = Raw(server.port)
    fill(c)
    for key in ("cf", "semi", "bf", "ns"):
        payload = c("DUMP", key)
        assert c("RESTORE", key + "2", 0, payload) == "OK"
        assert c("COPY", key, key + "3") == 1
        assert c("MEMORY", "USAGE", key) > 0
    assert c("CF.MEXISTS", "cf2", *KEYS[1:]) == [1] * (len(KEYS) - 1)
    assert c("CF.MEXISTS", "cf3", *KEYS[1:]) == [1] * (len(KEYS) - 1)
    assert c("BF.MEXISTS", "bf2", *KEYS) == [1] * len(KEYS)
    assert c("BF.MEXISTS", "bf3", *KEYS) == [1] * len(KEYS)
    assert c("CF.INFO", "semi2") == c("CF.INFO", "semi")
    # a copy is independent
    c("CF.ADD", "cf3", "only-in-copy")
    assert c("CF.EXISTS", "cf", "only-in-copy") == 0


def test_corrupted_restore_payloads_are_refused(server):
    c = Raw(server.port)
    c("CF.RESERVE", "cf", 2000)
    c("CF.INSERT", "cf", "ITEMS", *KEYS[:500])
    c("BF.MADD", "bf", *KEYS[:500])
    rng = random.Random(7)
    for key in ("cf", "bf"):
        payload = c("DUMP", key)
        for trial in range(300):
            bad = bytearray(payload)
            # damage the module's bytes, then fix nothing: RESTORE checks the DUMP CRC first, so also try
            # payloads whose CRC we recompute the way Redis does
            pos = rng.randrange(len(bad))
            bad[pos] ^= 1 << rng.randrange(8)
            reply = c("RESTORE", "victim%d" % trial, 0, bytes(bad))
            assert isinstance(reply, Error) or reply == "OK"
        assert c("PING") == "PONG"
    # truncated payloads
    payload = c("DUMP", "cf")
    for cut in range(0, len(payload), max(1, len(payload) // 50)):
        assert isinstance(c("RESTORE", "t%d" % cut, 0, payload[:cut]), Error)
    assert c("PING") == "PONG"


def test_restore_with_skipped_checksum_still_refuses_hostile_bytes(server):
    """With Redis's own DUMP checksum check switched off, only our checks stand between a forged payload and
    the server: every forged filter is refused or, if accepted, works."""
    c = Raw(server.port)
    assert c("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1") == "OK"
    c("CF.RESERVE", "cf", 1000)
    c("CF.INSERT", "cf", "ITEMS", *KEYS[:300])
    c("BF.MADD", "bf", *KEYS[:300])
    rng = random.Random(11)
    refused = 0
    for key in ("cf", "bf"):
        payload = c("DUMP", key)
        for trial in range(300):
            bad = bytearray(payload)
            for _ in range(rng.randrange(1, 4)):
                bad[rng.randrange(len(bad) - 10)] = rng.randrange(256)
            reply = c("RESTORE", "v%s%d" % (key, trial), 0, bytes(bad))
            assert isinstance(reply, Error) or reply == "OK"
            refused += isinstance(reply, Error)
            if reply == "OK":  # an accepted payload is a working filter
                c("CF.EXISTS" if key == "cf" else "BF.EXISTS", "v%s%d" % (key, trial), "k1")
    assert refused > 100
    assert "nidus: refused a filter" in server.log()  # the forgeries did reach our loader
    assert c("PING") == "PONG"

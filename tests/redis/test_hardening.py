# SPDX-License-Identifier: BSD-3-Clause
"""Hardening: memory pressure, SIGKILL with an fsync-always AOF, and limits on RESTORE."""
import os
import random
import threading
import time

import redis

from resp import Error, Raw

KILLS = int(os.environ.get("NIDUS_CRASH_KILLS", "30"))


def test_maxmemory_refuses_writes_and_keeps_reads(make_server):
    s = make_server("oom", extra=("--maxmemory", "4mb", "--maxmemory-policy", "noeviction"))
    c = Raw(s.port)
    c("CF.ADD", "cf", "first")
    c("BF.ADD", "bf", "first")
    refused = None
    for i in range(2000):
        reply = c("BF.RESERVE", "big%d" % i, "0.001", 20000)
        if isinstance(reply, Error):
            refused = reply
            break
    assert refused is not None and refused.startswith("OOM")
    for cmd in (("CF.ADD", "cf", "x"), ("CF.RESERVE", "new", 1000), ("BF.ADD", "bf", "x"), ("BF.INSERT", "b2", "ITEMS", "a"),
                ("CF.INSERT", "c2", "ITEMS", "a")):
        assert c(*cmd).startswith("OOM"), cmd
    assert c("CF.EXISTS", "cf", "first") == 1
    assert c("BF.EXISTS", "bf", "first") == 1
    assert c("CF.INFO", "cf")[0] == "Size"
    assert s.alive()


def test_sigkill_with_fsync_always_loses_nothing_acknowledged(make_server):
    s = make_server("crash", extra=("--appendonly", "yes", "--appendfsync", "always"))
    Raw(s.port)("CF.RESERVE", "cf", 200000, "FINGERPRINT", 32, "EXPANSION", 2)
    rng = random.Random(2024)
    added_cf, added_bf, deleted = set(), set(), set()
    cycle = 0
    # KILLS kills, and more (up to 4 times as many) while a loaded machine has not yet given enough work
    while cycle < KILLS or ((len(added_cf) <= 100 or len(deleted) <= 50) and cycle < 4 * KILLS):
        cycle += 1
        c = Raw(s.port)
        stop = threading.Event()

        def killer():
            time.sleep(rng.uniform(0.02, 0.25))
            s.kill()
            stop.set()

        t = threading.Thread(target=killer)
        t.start()
        i = 0
        in_flight = None  # a delete whose reply the kill may have cut off: its key's fate is unknown
        try:
            while not stop.is_set():
                key = "c%d-%d" % (cycle, i)
                op = i % 4
                if op in (0, 2):
                    if c("CF.ADD", "cf", key) == 1:
                        added_cf.add(key)
                elif op == 1:
                    if c("BF.ADD", "bf", key) == 1:
                        added_bf.add(key)
                else:
                    victim = "c%d-%d" % (cycle, i - 3)  # the first of the two CF.ADDs of this round
                    if victim in added_cf:
                        in_flight = victim
                        if c("CF.DEL", "cf", victim) == 1:
                            added_cf.discard(victim)
                            deleted.add(victim)
                        in_flight = None
                i += 1
        except (ConnectionError, OSError):
            if in_flight:
                added_cf.discard(in_flight)
        t.join()
        s.extra = ["--appendonly", "yes", "--appendfsync", "always"]
        s.start()
    c = Raw(s.port)
    cf_keys, bf_keys, del_keys = sorted(added_cf), sorted(added_bf), sorted(deleted)
    assert len(cf_keys) > 100 and len(del_keys) > 50
    for chunk in range(0, len(cf_keys), 500):
        assert c("CF.MEXISTS", "cf", *cf_keys[chunk:chunk + 500]) == [1] * len(cf_keys[chunk:chunk + 500])
    for chunk in range(0, len(bf_keys), 500):
        assert c("BF.MEXISTS", "bf", *bf_keys[chunk:chunk + 500]) == [1] * len(bf_keys[chunk:chunk + 500])
    # 32-bit fingerprints: a removed key's count is 0 (a collision would need 1 in 2^32)
    for key in del_keys:
        assert c("CF.COUNT", "cf", key) == 0


def test_restore_beyond_the_memory_limit_is_refused(make_server):
    big = make_server("big")
    b = Raw(big.port)
    b("CF.RESERVE", "cf", 1 << 21)
    b("BF.RESERVE", "bf", "0.001", 1 << 21)
    small = make_server("small", module_args=("max_filter_memory", str(1 << 20)))
    c = Raw(small.port)
    for key in ("cf", "bf"):
        payload = b("DUMP", key)
        reply = c("RESTORE", key, 0, payload)
        assert isinstance(reply, Error) and "Bad data format" in reply
        assert c("EXISTS", key) == 0
    assert "nidus: refused a filter" in small.log()
    assert small.alive()

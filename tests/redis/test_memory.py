# SPDX-License-Identifier: BSD-3-Clause
"""Bytes per key of small filters (issue 14.3), as the server counts them (used_memory), against RedisBloom's, and
MEMORY USAGE true to what a key holds.

The ceilings are RedisBloom's bytes per key beyond what a key holding a one-byte string costs, measured on the same
redis-server 7.0.15 with /work/peers/rb/redisbloom.so (RedisBloom b28c2945 built for Redis 7.0) by
`bench/small-keys-redis --sweep` on 2026-11-23 (nidus at the commit that added this file; docs/BENCHMARKS.md has
the run). Configurations where nidus is still above RedisBloom are marked xfail (strict: the mark must go when
they pass), with the gap and its cause."""
import pytest

from resp import Raw

ABOVE_SIZING = ("b=2 tables are sized for the worst case over 100,000 seeds (issue 14.2: a reservation must hold in "
                "its first table), 236 slots of 9 bits for 100 items where RedisBloom takes 128 of 8")
ABOVE_BITS = ("the default 1 %% error takes 10-bit fingerprints at BUCKETSIZE 4 (RedisBloom: 8 bits, a %s bound)")

CASES = [
    # (command, keys, RedisBloom's bytes per key beyond a string key, xfail reason or None); as many keys as the
    # bench measured with (fewer make the per-key figure noisier: the same filters measured 75 B/key at 2,000)
    (("CF.RESERVE", 4), 20000, 72, None),
    (("CF.RESERVE", 100), 20000, 192, ABOVE_SIZING),
    (("CF.RESERVE", 10, "BUCKETSIZE", 4), 20000, 72, ABOVE_BITS % "3.1 %"),
    (("CF.RESERVE", 100, "BUCKETSIZE", 4), 20000, 192, ABOVE_BITS % "3.1 %"),
    (("CF.RESERVE", 10000, "BUCKETSIZE", 4), 5000, 16448, None),
    # BF rows: RedisBloom's figures from the BF sweep of 2026-11-23 22:50 (capacities 1-10000 at 0.1, 0.01, 0.001;
    # docs/BENCHMARKS.md "Bloom bytes per key"), with the rows where nidus's 112-byte struct was above it
    (("BF.RESERVE", "0.01", 1), 10000, 104, None),
    (("BF.RESERVE", "0.01", 10), 10000, 112, None),
    (("BF.RESERVE", "0.01", 50), 10000, 176, None),
    (("BF.RESERVE", "0.01", 100), 10000, 258, None),
    (("BF.RESERVE", "0.01", 500), 10000, 864, None),
    (("BF.RESERVE", "0.01", 1000), 10000, 1632, None),
    (("BF.RESERVE", "0.1", 100), 10000, 176, None),
    (("BF.RESERVE", "0.001", 1000), 10000, 2144, None),
]


NOISE = 4  # bytes per key


def used_memory(c):
    return int(c("INFO", "memory").decode().split("used_memory:")[1].split()[0])


def per_key(c, make, n):
    c("FLUSHALL")
    before = used_memory(c)
    for start in range(0, n, 100):
        for i in range(start, min(n, start + 100)):
            c.send(*make(i))
        for i in range(start, min(n, start + 100)):
            assert c.read() == "OK"
    return (used_memory(c) - before) / n


def case_id(case):
    return " ".join(map(str, case[0]))


@pytest.mark.parametrize("cmd,n,redisbloom,above", [
    pytest.param(*case, marks=[pytest.mark.xfail(strict=True, reason=case[3])] if case[3] else [])
    for case in CASES], ids=[case_id(c) for c in CASES])
def test_bytes_per_key_and_memory_usage(server, cmd, n, redisbloom, above):
    c = Raw(server.port)
    bytes_per_key = per_key(c, lambda i: (cmd[0], "k%d" % i, *cmd[1:]), n)
    usage = c("MEMORY", "USAGE", "k1")
    # what the server pays for a key holding a small string (dict entry, object, name, the dict's own growth)
    string_key = per_key(c, lambda i: ("SET", "k%d" % i, "v"), n)
    string_usage = c("MEMORY", "USAGE", "k1")
    filter_bytes, filter_usage = bytes_per_key - string_key, usage - string_usage
    print("%s: %.0f B/key (%.0f beyond a string key; RedisBloom %d), MEMORY USAGE %d (%d beyond)" %
          (case_id((cmd,)), bytes_per_key, filter_bytes, redisbloom, usage, filter_usage))
    # MEMORY USAGE may miss the allocator's rounding of the filter's few allocations, nothing more
    assert 0.75 * filter_bytes <= filter_usage <= filter_bytes + 16
    # + NOISE: the server's own buffers move used_memory a little between two readings, spread over the keys
    # (RedisBloom's BF.RESERVE k 0.01 100 measured 256 and 258 in two runs; both are one 256-byte allocation)
    assert filter_bytes <= redisbloom + NOISE


@pytest.mark.parametrize("cmd", [("CF.RESERVE", 100), ("BF.RESERVE", "0.01", 100)], ids=["CF", "BF"])
def test_reload_keeps_bytes_per_key(server, cmd):
    """A small filter loaded from RDB (DEBUG RELOAD) or a RESTORE costs what the one it came from did: the loaders
    hand back the packed form (a loaded copy in the full form would cost the 704 bytes of before)."""
    c = Raw(server.port)
    n = 20000
    per_key(c, lambda i: (cmd[0], "k%d" % i, *cmd[1:]), n)
    before = used_memory(c)
    assert c("DEBUG", "RELOAD") == "OK"
    after = used_memory(c)
    usage = c("MEMORY", "USAGE", "k1")
    print("%s: %d bytes before DEBUG RELOAD, %d after; MEMORY USAGE %d" % (cmd[0], before, after, usage))
    # DEBUG RELOAD itself moves used_memory by up to ~30 KB here; a full-form copy would add 384 B/key (CF),
    # a separate allocation for the bits 64 (BF)
    assert abs(after - before) / n <= 16
    assert c("RESTORE", "copy", 0, c("DUMP", "k1")) == "OK"
    assert c("MEMORY", "USAGE", "copy") == usage

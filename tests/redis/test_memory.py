# SPDX-License-Identifier: BSD-3-Clause
"""Bytes per key of small filters (issue 14.3), as the server counts them (used_memory), and MEMORY USAGE true
to what a key holds. RedisBloom's figures on the same redis-server 7.0.15 (docs/BENCHMARKS.md): CF.RESERVE k 100
279 B/key, CF.RESERVE k 4 157, BF.RESERVE k 0.01 100 344. The ceilings below are where nidus stands (the goal is
RedisBloom's figures, reached as the library's small-table bytes come down); they catch any regression."""
import pytest

from resp import Raw

CASES = [
    # (command, keys, ceiling: bytes per key beyond what a key holding a one-byte string costs)
    (("CF.RESERVE", 100), 2000, 940),
    (("CF.RESERVE", 4), 2000, 800),
    (("BF.RESERVE", "0.01", 100), 1000, 580),
]


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


@pytest.mark.parametrize("cmd,n,ceiling", CASES, ids=[" ".join(map(str, c[0])) for c in CASES])
def test_bytes_per_key_and_memory_usage(server, cmd, n, ceiling):
    c = Raw(server.port)
    bytes_per_key = per_key(c, lambda i: (cmd[0], "k%d" % i, *cmd[1:]), n)
    usage = c("MEMORY", "USAGE", "k1")
    # what the server pays for a key holding a small string (dict entry, object, name, the dict's own growth)
    string_key = per_key(c, lambda i: ("SET", "k%d" % i, "v"), n)
    string_usage = c("MEMORY", "USAGE", "k1")
    filter_bytes, filter_usage = bytes_per_key - string_key, usage - string_usage
    print("%s: %.0f B/key (%.0f beyond a string key), MEMORY USAGE %d (%d beyond)" %
          (" ".join(map(str, cmd)), bytes_per_key, filter_bytes, usage, filter_usage))
    assert filter_bytes <= ceiling
    # MEMORY USAGE may miss the allocator's rounding of the filter's few allocations, nothing more
    assert 0.75 * filter_bytes <= filter_usage <= filter_bytes + 16

# SPDX-License-Identifier: BSD-3-Clause
"""Replies RedisBloom's own flow tests check (test_cuckoo.py, test_overall.py, test_resp3.py), guarded here so CI
needs no network: CF.DEBUG/BF.DEBUG shapes, BF EXPANSION 0, RESP3 reply types, SCANDUMP positions."""
import re

import pytest

from resp import Error, Raw, scandump


@pytest.fixture
def c3(server):
    raw = Raw(server.port, resp3=True)
    yield raw
    raw.close()


def test_cf_debug(c):
    assert c("CF.RESERVE", "a", 10, "MAXITERATIONS", 10) == "OK"
    line = c("CF.DEBUG", "a").decode()
    m = re.fullmatch(r"bktsize:2 buckets:(\d+) items:0 deletes:0 filters:1 max_iterations:10 expansion:1", line)
    assert m and int(m.group(1)) >= 5  # 10 items in buckets of 2
    c("CF.RESERVE", "b", 1000, "BUCKETSIZE", 4, "MAXITERATIONS", 500, "EXPANSION", 4)
    c("CF.INSERT", "b", "ITEMS", *range(3000))
    c("CF.DEL", "b", 7)
    m = re.fullmatch(r"bktsize:4 buckets:\d+ items:(\d+) deletes:1 filters:(\d+) max_iterations:500 expansion:4",
                     c("CF.DEBUG", "b").decode())
    assert m and int(m.group(1)) == 2999 and int(m.group(2)) >= 2
    assert c("CF.DEBUG") == Error("ERR wrong number of arguments for 'cf.debug' command")
    assert c("CF.DEBUG", "noexist") == Error("ERR not found")
    c("BF.ADD", "bf", "x")
    assert c("CF.DEBUG", "bf").startswith("WRONGTYPE")


def test_bf_debug(c):
    c("BF.RESERVE", "bf", "0.01", 100, "EXPANSION", 2)
    c("BF.MADD", "bf", *range(400))
    lines = [x.decode() for x in c("BF.DEBUG", "bf")]
    assert lines[0] == "size:%d" % c("BF.CARD", "bf")
    assert len(lines) == 1 + c("BF.INFO", "bf", "FILTERS")[0]
    capacities = []
    for line in lines[1:]:
        m = re.fullmatch(r"bytes:(\d+) bits:(\d+) hashes:(\d+) hashwidth:64 capacity:(\d+) size:(\d+) ratio:([0-9.e-]+)",
                         line)
        assert m, line
        assert int(m.group(2)) == 8 * int(m.group(1)) and int(m.group(3)) >= 1 and float(m.group(6)) < 0.01
        capacities.append(int(m.group(4)))
    assert capacities[:3] == [100, 200, 400]
    assert c("BF.DEBUG") == Error("ERR wrong number of arguments for 'bf.debug' command")
    assert c("BF.DEBUG", "missing") == Error("ERR not found")


def test_bf_expansion_0_is_nonscaling(c):
    assert c("BF.RESERVE", "r", "0.01", 3, "EXPANSION", 0) == "OK"
    assert c("BF.INFO", "r", "EXPANSION") == [None]
    assert c("BF.RESERVE", "rn", "0.01", 3, "EXPANSION", 0, "NONSCALING") == "OK"
    assert c("BF.INSERT", "i", "CAPACITY", 3, "EXPANSION", 0, "ITEMS", "a") == [1]
    for key in ("r", "i"):
        replies = c("BF.MADD", key, *["k%d" % n for n in range(20)])
        assert replies[-1] == Error("ERR non scaling filter is full")
        assert c("BF.INFO", key, "FILTERS") == [1]


def test_cf_expansion_0_is_full_at_its_slots(c):
    """RedisBloom's test_expansion_0: a nonscaling CF.RESERVE a 4 (two buckets of two) takes four items and
    refuses the fifth and sixth. A two-bucket table has no stash: the stash would let it take 4 more."""
    assert c("CF.RESERVE", "a", 4, "EXPANSION", 0) == "OK"
    for item in "1234":
        assert c("CF.ADD", "a", item) == 1
    assert c("CF.INSERT", "a", "ITEMS", 5, 6) == [-1, -1]
    assert c("CF.ADD", "a", 7) == Error("Filter is full")


def test_scandump_negative_position(c):
    c("CF.ADD", "cf", "a")
    assert c("CF.SCANDUMP", "cf", -1) == Error("Invalid position")
    assert c("CF.SCANDUMP", "missing", -1) == Error("Invalid position")


def test_resp3_insert_replies(c3):
    c3("CF.RESERVE", "a", 4, "BUCKETSIZE", 2, "EXPANSION", 0)
    assert c3("CF.ADD", "a", "1") is True
    assert c3("CF.ADDNX", "a", "1") is False
    assert c3("CF.INSERTNX", "a", "ITEMS", "1", "2") == [0, 1]
    assert c3("CF.INSERT", "a", "ITEMS", "3") == [True]
    items = [str(n) for n in range(4, 60)]
    full = c3("CF.INSERT", "a", "ITEMS", *items)
    assert full[-1] is False and all(x in (True, False) for x in full)
    assert c3("CF.INSERTNX", "a", "ITEMS", *items)[-1] == -1
    assert c3("CF.ADD", "a", "new-one") == Error("Filter is full")


def test_resp2_full_insert_replies_minus_one(c):
    c("CF.RESERVE", "a", 4, "EXPANSION", 0)
    replies = c("CF.INSERT", "a", "ITEMS", *range(60))
    assert replies[-1] == -1 and set(replies) <= {1, -1}
    assert c("CF.INSERTNX", "a", "ITEMS", *range(100, 160))[-1] == -1


def test_resp3_bf_info_one_field_is_a_map(c3, c):
    c3("BF.RESERVE", "b", "0.01", 100)
    assert c3("BF.INFO", "b", "CAPACITY") == {"Capacity": 100}
    assert c3("BF.INFO", "b", "ITEMS") == {"Number of items inserted": 0}
    assert c3("BF.INFO", "b", "FILTERS") == {"Number of filters": 1}
    assert c3("BF.INFO", "b", "EXPANSION") == {"Expansion rate": 2}
    assert set(c3("BF.INFO", "b", "SIZE")) == {"Size"}
    assert c("BF.INFO", "b", "CAPACITY") == [100]


def test_chunk_commands_at_the_edges(c):
    """SCANDUMP and LOADCHUNK outside a copy's path reply as RedisBloom 8.6.2 does (compared side by side on
    redis-server 8.6.3; RedisBloom's code is the same on Redis 7): its Bloom stream ends with an empty string,
    BF.SCANDUMP looks the key up before its iterator, a data chunk for a missing key is "not found", and a
    header or iterator 0 for an existing Bloom key is bad data. Our chunks for a complete filter stay refused."""
    assert c("BF.RESERVE", "bf", "0.01", 10) == "OK" and c("BF.ADD", "bf", "a") == 1
    assert c("CF.RESERVE", "cf", 10) == "OK" and c("CF.ADD", "cf", "a") == 1
    chunks = scandump(c, "BF", "bf")
    assert c("BF.SCANDUMP", "bf", chunks[-1][0]) == [0, b""]
    assert c("BF.SCANDUMP", "bf", 1000) == [0, b""] and c("BF.SCANDUMP", "bf", -1) == [0, b""]
    assert c("CF.SCANDUMP", "cf", 1000) == [0, None]
    assert c("BF.SCANDUMP", "nokey", "abc") == Error("ERR not found")
    assert c("BF.SCANDUMP", "bf", "abc") == Error("Second argument must be numeric")
    assert c("CF.SCANDUMP", "nokey", "abc") == Error("Invalid position")
    c("SET", "str", "v")
    assert c("BF.SCANDUMP", "str", "abc").startswith("WRONGTYPE")
    for kind in ("BF", "CF"):
        for it in (5, -1):
            assert c(kind + ".LOADCHUNK", "nokey", it, "x") == Error("ERR not found"), (kind, it)
        assert c(kind + ".LOADCHUNK", "str", 5, "x").startswith("WRONGTYPE")
    assert c("BF.LOADCHUNK", "nokey", 0, "x") == Error("ERR not found")
    assert c("CF.LOADCHUNK", "nokey", 0, "x") == Error("Invalid position")
    assert c("BF.LOADCHUNK", "bf", 1, chunks[0][1]) == Error("ERR received bad data")
    assert c("CF.LOADCHUNK", "cf", 1, "x") == Error("ERR item exists")
    assert c("BF.LOADCHUNK", "bf", 0, "x") == Error("ERR received bad data")
    assert c("BF.LOADCHUNK", "bf", -3, "x") == Error("ERR received bad data")
    assert c("CF.LOADCHUNK", "cf", -3, "x") == Error("Couldn't load chunk!")
    assert c("BF.LOADCHUNK", "bf", "abc", "x") == Error("ERR Second argument must be numeric")
    assert c("BF.LOADCHUNK", "bf", 7, "x") == Error("ERR received bad data")  # RedisBloom: OK, bytes overwritten
    assert c("BF.EXISTS", "bf", "a") == 1

# SPDX-License-Identifier: BSD-3-Clause
"""CF.* commands: replies and errors as RedisBloom gives them, and our extensions."""
import pytest

from resp import Error, Raw, scandump


def test_reserve_and_its_errors(c):
    assert c("CF.RESERVE", "cf", 1000) == "OK"
    assert c("CF.RESERVE", "cf", 1000) == Error("ERR item exists")
    assert c("SET", "str", "v") == "OK"
    assert c("CF.RESERVE", "str", 1000).startswith("WRONGTYPE")
    assert c("CF.RESERVE", "x") == Error("ERR wrong number of arguments for 'cf.reserve' command")
    assert c("CF.RESERVE", "x", "abc") == Error("Bad capacity")
    cap_range = Error("Capacity must be in the range [2 * BUCKETSIZE, 1073741824]")
    assert c("CF.RESERVE", "x", 3) == cap_range
    assert c("CF.RESERVE", "x", 7, "BUCKETSIZE", 4) == cap_range
    assert c("CF.RESERVE", "x", 2 ** 30 + 1) == cap_range
    assert c("CF.RESERVE", "x", 100, "BUCKETSIZE", 4, "MAXITERATIONS") == \
        Error("ERR wrong number of arguments for 'cf.reserve' command")
    # RedisBloom's texts: "Couldn't parse NAME" for a non-integer, the range for one out of it
    for name, low, high in (("BUCKETSIZE", 1, 255), ("MAXITERATIONS", 1, 65535), ("EXPANSION", 0, 32768)):
        assert c("CF.RESERVE", "x", 1000, name, "string") == Error("Couldn't parse " + name)
        for bad in (low - 1, high + 1):
            assert c("CF.RESERVE", "x", 1000, name, bad) == \
                Error("%s: value must be in the range [%d, %d]" % (name, low, high))
    assert c("CF.INSERT", "x", "CAPACITY", 3, "ITEMS", "a") == \
        Error("Capacity must be in the range [cf-bucket-size * 2, 1073741824]")
    assert c("CF.INSERT", "x", "CAPACITY", "y", "ITEMS", "a") == Error("Bad capacity")
    assert c("EXISTS", "x") == 0
    assert c("CF.RESERVE", "x", 1000, "COLOUR", "red") == Error("Unknown argument received")
    assert c("CF.RESERVE", "x", 1000, "ERROR", "1.5") == Error("ERR (0 < error rate range < 1)")
    assert c("CF.RESERVE", "x", 1000, "FINGERPRINT", "3") == Error("ERR FINGERPRINT must be an integer between 4 and 32")
    assert c("CF.RESERVE", "x", 1000, "ERROR", "0.01", "FINGERPRINT", "8") == \
        Error("ERR ERROR and FINGERPRINT cannot be used together")
    assert c("CF.RESERVE", "x", 1000, "BUCKETSIZE", 2, "SEMISORT") == \
        Error("ERR SEMISORT needs BUCKETSIZE 4 and FINGERPRINT 5..32")
    assert c("EXISTS", "x") == 0  # nothing was created by the refused calls


def info(c, key):
    reply = c("CF.INFO", key)
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}, [reply[i] for i in range(0, len(reply), 2)]


def test_info_bits_per_item_at_capacity_and_load(c):
    """Bits per item is the cost at capacity, not memory over the few items present."""
    assert c("CF.RESERVE", "cf", 1000, "BUCKETSIZE", 4) == "OK"
    c("CF.INSERT", "cf", "ITEMS", "a", "b", "c", "d")
    fields = info(c, "cf")[0]
    assert 1000 <= fields["Capacity"] <= 1100
    bits = float(fields["Bits per item"])
    assert bits == pytest.approx(fields["Size"] * 8 / fields["Capacity"])
    assert bits < 20  # it was 4134 (memory / 4 items)
    slots = fields["Number of buckets"] * 4
    assert float(fields["Load"]) == pytest.approx(4 / slots)
    c("CF.INSERT", "cf", "ITEMS", *range(900))
    fields = info(c, "cf")[0]
    assert float(fields["Bits per item"]) == pytest.approx(bits, rel=0.01)  # the same filter, the same cost
    assert float(fields["Load"]) == pytest.approx(904 / slots, rel=0.01)


def test_info_fields_in_redisbloom_order_then_ours(c):
    assert c("CF.RESERVE", "cf", 10000, "BUCKETSIZE", 4, "MAXITERATIONS", 30, "EXPANSION", 2) == "OK"
    c("CF.ADD", "cf", "a")
    fields, order = info(c, "cf")
    assert order == ["Size", "Number of buckets", "Number of filters", "Number of items inserted",
                     "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations",
                     "Fingerprint bits", "Error rate bound", "Capacity", "Bits per item", "Load", "Compacting"]
    assert fields["Compacting"] == 0
    assert fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == 1
    assert fields["Bucket size"] == 4
    assert fields["Expansion rate"] == 2
    assert fields["Max iterations"] == 30
    assert fields["Fingerprint bits"] == 10  # the smallest f meeting the default 1 % at b = 4
    assert float(fields["Error rate bound"]) <= 0.01
    # bucket sizes other than 1, 2, 4, 8 are rounded up, and INFO says what is used
    assert c("CF.RESERVE", "b3", 1000, "BUCKETSIZE", 3) == "OK"
    assert info(c, "b3")[0]["Bucket size"] == 4
    assert c("CF.RESERVE", "b200", 1000, "BUCKETSIZE", 200) == "OK"
    assert info(c, "b200")[0]["Bucket size"] == 8
    assert c("CF.RESERVE", "fp", 1000, "FINGERPRINT", 16, "BUCKETSIZE", 4, "SEMISORT") == "OK"
    assert info(c, "fp")[0]["Fingerprint bits"] == 16
    assert c("CF.INFO", "missing") == Error("ERR not found")
    assert c("CF.INFO") == Error("ERR wrong number of arguments for 'cf.info' command")


def test_add_addnx_exists_mexists_count_del(c):
    assert c("CF.ADD", "cf", "a") == 1  # creates the filter
    assert c("CF.ADD", "cf", "a") == 1  # duplicates are allowed
    assert c("CF.ADDNX", "cf", "a") == 0
    assert c("CF.ADDNX", "cf", "b") == 1
    assert c("CF.COUNT", "cf", "a") == 2
    assert c("CF.EXISTS", "cf", "a") == 1
    assert c("CF.EXISTS", "cf", "zz") == 0
    assert c("CF.MEXISTS", "cf", "a", "zz", "b") == [1, 0, 1]
    assert c("CF.EXISTS", "nokey", "a") == 0
    assert c("CF.MEXISTS", "nokey", "a", "b") == [0, 0]
    assert c("CF.COUNT", "nokey", "a") == 0
    assert c("CF.DEL", "cf", "a") == 1
    assert c("CF.DEL", "cf", "a") == 1
    assert c("CF.DEL", "cf", "a") == 0
    assert c("CF.DEL", "nokey", "a") == Error("Not found")
    assert c("CF.ADD", "cf") == Error("ERR wrong number of arguments for 'cf.add' command")
    assert c("CF.EXISTS", "cf") == Error("ERR wrong number of arguments for 'cf.exists' command")
    assert c("CF.MEXISTS", "cf") == Error("ERR wrong number of arguments for 'cf.mexists' command")
    c("SET", "str", "v")
    for cmd in (("CF.ADD", "str", "a"), ("CF.EXISTS", "str", "a"), ("CF.DEL", "str", "a"),
                ("CF.INFO", "str"), ("CF.COUNT", "str", "a"), ("CF.MEXISTS", "str", "a")):
        assert c(*cmd).startswith("WRONGTYPE")
    fields, _ = info(c, "cf")
    assert fields["Number of items inserted"] == 1
    assert fields["Number of items deleted"] == 2


def test_insert_and_insertnx(c):
    assert c("CF.INSERT", "cf", "ITEMS", "a", "b", "a") == [1, 1, 1]
    assert c("CF.INSERTNX", "cf", "ITEMS", "a", "c") == [0, 1]
    assert c("CF.INSERT", "new", "CAPACITY", 5000, "ITEMS", "x") == [1]
    assert c("CF.INSERT", "nope", "NOCREATE", "ITEMS", "x") == Error("ERR not found")
    assert c("CF.INSERT", "cf", "CAPACITY", "abc", "ITEMS", "x") == Error("Bad capacity")
    assert c("CF.INSERT", "cf", "CAPACITY", 3, "ITEMS", "x") == \
        Error("Capacity must be in the range [cf-bucket-size * 2, 1073741824]")
    assert c("CF.INSERT", "cf", "BOGUS", "ITEMS", "x") == Error("Unknown argument received")
    assert c("CF.INSERT", "cf", "ITEMS") == Error("ERR wrong number of arguments for 'cf.insert' command")
    assert c("CF.INSERT", "cf", "CAPACITY") == Error("ERR wrong number of arguments for 'cf.insert' command")
    assert c("EXISTS", "nope") == 0


def test_full_filter(c):
    assert c("CF.RESERVE", "full", 4, "BUCKETSIZE", 1, "EXPANSION", 0, "MAXITERATIONS", 5) == "OK"
    replies = [c("CF.ADD", "full", "k%d" % i) for i in range(200)]
    assert Error("Filter is full") in replies
    n = replies.index(Error("Filter is full"))
    assert all(r == 1 for r in replies[:n])
    assert -1 in c("CF.INSERT", "full", "ITEMS", *["m%d" % i for i in range(50)])
    # nothing added was lost
    for i in range(n):
        assert c("CF.EXISTS", "full", "k%d" % i) == 1


def test_growth_and_maximum_expansions(make_server):
    s = make_server("grow", module_args=("cf_max_expansions", "3"))
    c = Raw(s.port)
    assert c("CF.RESERVE", "g", 100, "EXPANSION", 1) == "OK"
    replies = [c("CF.ADD", "g", "k%d" % i) for i in range(2000)]
    assert Error("Maximum expansions reached") in replies
    fields, _ = info(c, "g")
    assert fields["Number of filters"] == 3
    # the bound stays under twice the first table's, however the filter grew
    assert float(fields["Error rate bound"]) <= 0.02
    assert c("CF.COMPACT", "g") == "OK"
    assert c("CF.COMPACT", "nokey") == Error("Cuckoo filter was not found")


def test_duplicates_are_counted_not_grown(c):
    assert c("CF.RESERVE", "dup", 100) == "OK"
    for _ in range(500):
        assert c("CF.ADD", "dup", "same") == 1
    assert c("CF.COUNT", "dup", "same") == 500
    assert info(c, "dup")[0]["Number of filters"] == 1


def test_scandump_loadchunk_round_trip(c):
    c("CF.RESERVE", "src", 50000, "EXPANSION", 2)
    c("CF.INSERT", "src", "ITEMS", *["k%d" % i for i in range(3000)])
    chunks = scandump(c, "CF", "src")
    assert chunks[0][0] == 1 and len(chunks) >= 2
    for it, data in chunks:
        assert c("CF.LOADCHUNK", "dst", it, data) == "OK"
    assert c("CF.MEXISTS", "dst", *["k%d" % i for i in range(0, 3000, 7)]) == [1] * len(range(0, 3000, 7))
    assert info(c, "dst")[0] == info(c, "src")[0]
    # an empty filter dumps nothing, as in RedisBloom
    c("CF.RESERVE", "empty", 100)
    assert c("CF.SCANDUMP", "empty", 0) == [0, None]
    assert c("CF.SCANDUMP", "nokey", 0) == Error("ERR not found")
    assert c("CF.SCANDUMP", "src", "x") == Error("Invalid position")
    assert c("CF.LOADCHUNK", "dst2", "x", "data") == Error("Invalid position")
    assert c("CF.LOADCHUNK", "dst2", 0, "data") == Error("Invalid position")
    assert c("CF.LOADCHUNK", "src", 1, chunks[0][1]) == Error("ERR item exists")
    assert c("CF.LOADCHUNK", "dst2", 1, b"not a header") == Error("Invalid header")
    damaged = bytearray(chunks[0][1])
    damaged[0:9] = bytes(9)  # header-sized, contents refused (RedisBloom's test_scandump_invalid_header)
    assert c("CF.LOADCHUNK", "dst2", 1, bytes(damaged)) == Error("Couldn't create filter!")
    assert c("EXISTS", "dst2") == 0
    # out of order, and damaged: refused
    assert c("CF.LOADCHUNK", "dst3", 1, chunks[0][1]) == "OK"
    if len(chunks) > 2:
        assert c("CF.LOADCHUNK", "dst3", chunks[2][0], chunks[2][1]) == Error("Couldn't load chunk!")
    bad = bytearray(chunks[1][1])
    bad[len(bad) // 2] ^= 1
    assert c("CF.LOADCHUNK", "dst3", chunks[1][0], bytes(bad)) == Error("Couldn't load chunk!")
    assert c("CF.EXISTS", "dst3", "k1") == 0  # still loading: no answers from half a filter


def test_resp3_booleans(server):
    c = Raw(server.port, resp3=True)
    assert c("CF.ADD", "cf", "a") is True
    assert c("CF.ADDNX", "cf", "a") is False
    assert c("CF.EXISTS", "cf", "a") is True
    assert c("CF.MEXISTS", "cf", "a", "b") == [True, False]
    assert c("CF.DEL", "cf", "a") is True
    assert c("CF.COUNT", "cf", "a") == 0
    fields = c("CF.INFO", "cf")
    assert isinstance(fields, dict) and fields["Bucket size"] == 2


def test_redis_py_cf_client(r):
    cf = r.cf()
    assert cf.create("py", 1000)
    assert cf.add("py", "a") == 1
    assert cf.addnx("py", "a") == 0
    assert cf.exists("py", "a") == 1
    assert cf.insert("py", ["b", "c"]) == [1, 1]
    assert cf.count("py", "b") == 1
    assert cf.delete("py", "b") == 1
    i = cf.info("py")
    assert i.bucketSize == 2 and i.insertedNum == 2 and i.deletedNum == 1 and i.filterNum == 1

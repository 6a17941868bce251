# SPDX-License-Identifier: BSD-3-Clause
"""BF.* commands: replies and errors as RedisBloom gives them."""

from resp import Error, Raw, scandump


def bf_info(c, key):
    reply = c("BF.INFO", key)
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}, [reply[i] for i in range(0, len(reply), 2)]


def test_reserve_and_its_errors(c):
    assert c("BF.RESERVE", "bf", "0.01", 1000) == "OK"
    assert c("BF.RESERVE", "bf", "0.01", 1000) == Error("ERR item exists")
    assert c("BF.RESERVE", "bf") == Error("ERR wrong number of arguments for 'bf.reserve' command")
    assert c("BF.RESERVE", "x", "abc", 100) == Error("ERR bad error rate")
    assert c("BF.RESERVE", "x", "1", 100) == Error("ERR error rate must be in the range (0.000000, 1.000000)")
    assert c("BF.RESERVE", "x", "0", 100) == Error("ERR error rate must be in the range (0.000000, 1.000000)")
    assert c("BF.RESERVE", "x", "0.01", "abc") == Error("ERR bad capacity")
    assert c("BF.RESERVE", "x", "0.01", 0) == Error("ERR capacity must be in the range [1, 1073741824]")
    assert c("BF.RESERVE", "x", "0.01", 100, "EXPANSION") == Error("ERR no expansion")
    assert c("BF.RESERVE", "x", "0.01", 100, "EXPANSION", "q") == Error("ERR bad expansion")
    assert c("BF.RESERVE", "x", "0.01", 100, "NONSCALING", "EXPANSION", 2) == Error("Nonscaling filters cannot expand")
    assert c("BF.RESERVE", "x", "0.01", 2 ** 40) == Error("ERR capacity must be in the range [1, 1073741824]")
    for bad in (-1, 32769):
        assert c("BF.RESERVE", "x", "0.1", 1, "EXPANSION", bad) == Error("ERR expansion must be in the range [0, 32768]")
    c("SET", "str", "v")
    assert c("BF.RESERVE", "str", "0.01", 100).startswith("WRONGTYPE")
    assert c("EXISTS", "x") == 0


def test_add_madd_exists_mexists_card(c):
    assert c("BF.ADD", "bf", "a") == 1
    assert c("BF.ADD", "bf", "a") == 0
    assert c("BF.MADD", "bf", "a", "b", "c") == [0, 1, 1]
    assert c("BF.EXISTS", "bf", "b") == 1
    assert c("BF.EXISTS", "bf", "zz") == 0
    assert c("BF.MEXISTS", "bf", "a", "zz") == [1, 0]
    assert c("BF.EXISTS", "nokey", "a") == 0
    assert c("BF.MEXISTS", "nokey", "a") == [0]
    assert c("BF.CARD", "bf") == 3
    assert c("BF.CARD", "nokey") == 0
    assert c("BF.ADD", "bf") == Error("ERR wrong number of arguments for 'bf.add' command")
    assert c("BF.MADD", "bf") == Error("ERR wrong number of arguments for 'bf.madd' command")
    c("SET", "str", "v")
    for cmd in (("BF.ADD", "str", "a"), ("BF.EXISTS", "str", "a"), ("BF.CARD", "str"), ("BF.INFO", "str")):
        assert c(*cmd).startswith("WRONGTYPE")


def test_info(c):
    c("BF.RESERVE", "bf", "0.01", 1000, "EXPANSION", 4)
    c("BF.MADD", "bf", "a", "b")
    fields, order = bf_info(c, "bf")
    assert order == ["Capacity", "Size", "Number of filters", "Number of items inserted", "Expansion rate"]
    assert fields["Capacity"] == 1000 and fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == 2 and fields["Expansion rate"] == 4
    assert c("BF.INFO", "bf", "CAPACITY") == [1000]
    assert c("BF.INFO", "bf", "items") == [2]
    assert c("BF.INFO", "bf", "FILTERS") == [1]
    assert c("BF.INFO", "bf", "EXPANSION") == [4]
    assert c("BF.INFO", "bf", "SIZE")[0] > 1000
    assert c("BF.INFO", "bf", "colour") == Error("Invalid information value")
    assert c("BF.INFO", "nokey") == Error("ERR not found")
    c("BF.RESERVE", "ns", "0.01", 100, "NONSCALING")
    assert c("BF.INFO", "ns", "EXPANSION") == [None]


def test_insert(c):
    assert c("BF.INSERT", "bf", "CAPACITY", 500, "ERROR", "0.001", "ITEMS", "a", "b", "a") == [1, 1, 0]
    assert c("BF.INFO", "bf", "CAPACITY") == [500]
    assert c("BF.INSERT", "nope", "NOCREATE", "ITEMS", "a") == Error("ERR not found")
    assert c("BF.INSERT", "bf", "ERROR", "x", "ITEMS", "a") == Error("Bad error rate")
    assert c("BF.INSERT", "bf", "CAPACITY", "x", "ITEMS", "a") == Error("Bad capacity")
    assert c("BF.INSERT", "bf", "EXPANSION", "x", "ITEMS", "a") == Error("Bad expansion")
    assert c("BF.INSERT", "new", "ERROR", "2", "ITEMS", "a") == Error("Bad error rate")
    assert c("BF.INSERT", "new", "ERROR", "x", "ITEMS", "a") == Error("Bad error rate")
    assert c("BF.INSERT", "new", "CAPACITY", 0, "ITEMS", "a") == Error("Bad capacity")
    assert c("BF.INSERT", "new", "EXPANSION", -1, "ITEMS", "a") == Error("Bad expansion")
    assert c("BF.INSERT", "new", "EXPANSION", "x", "ITEMS", "a") == Error("Bad expansion")
    assert c("BF.INSERT", "bf", "WHAT", "ITEMS", "a") == Error("Unknown argument received")
    assert c("BF.INSERT", "bf", "ITEMS") == Error("ERR wrong number of arguments for 'bf.insert' command")
    assert c("BF.INSERT", "ns", "NONSCALING", "CAPACITY", 10, "ITEMS", *["k%d" % i for i in range(30)])[-1] == \
        Error("ERR non scaling filter is full")


def test_nonscaling_full_and_scaling_growth(c):
    c("BF.RESERVE", "ns", "0.01", 50, "NONSCALING")
    replies = [c("BF.ADD", "ns", "k%d" % i) for i in range(80)]
    assert Error("ERR non scaling filter is full") in replies
    assert c("BF.CARD", "ns") == 50
    c("BF.RESERVE", "sc", "0.01", 50, "EXPANSION", 2)
    for i in range(400):
        c("BF.ADD", "sc", "k%d" % i)
    assert c("BF.INFO", "sc", "FILTERS")[0] >= 3
    assert c("BF.MEXISTS", "sc", *["k%d" % i for i in range(400)]) == [1] * 400


def test_scandump_loadchunk(c):
    c("BF.RESERVE", "src", "0.001", 20000)
    c("BF.MADD", "src", *["k%d" % i for i in range(2000)])
    chunks = scandump(c, "BF", "src")
    for it, data in chunks:
        assert c("BF.LOADCHUNK", "dst", it, data) == "OK"
    assert c("BF.CARD", "dst") == 2000
    assert c("BF.MEXISTS", "dst", *["k%d" % i for i in range(2000)]) == [1] * 2000
    assert c("BF.SCANDUMP", "src", "x") == Error("Second argument must be numeric")
    assert c("BF.LOADCHUNK", "z", "x", "d") == Error("ERR Second argument must be numeric")
    assert c("BF.LOADCHUNK", "z", 1, b"junk") == Error("ERR received bad data")
    assert c("BF.SCANDUMP", "nokey", 0) == Error("ERR not found")


def test_resp3_booleans(server):
    c = Raw(server.port, resp3=True)
    assert c("BF.ADD", "bf", "a") is True
    assert c("BF.ADD", "bf", "a") is False
    assert c("BF.MADD", "bf", "a", "b") == [False, True]
    assert c("BF.EXISTS", "bf", "a") is True
    assert c("BF.MEXISTS", "bf", "a", "zz") == [True, False]
    assert c("BF.CARD", "bf") == 2
    assert isinstance(c("BF.INFO", "bf"), dict)


def test_redis_py_bf_client(r):
    bf = r.bf()
    assert bf.create("py", 0.01, 1000)
    assert bf.add("py", "a") == 1
    assert bf.madd("py", "a", "b") == [0, 1]
    assert bf.exists("py", "b") == 1
    assert bf.mexists("py", "a", "zz") == [1, 0]
    i = bf.info("py")
    assert i.capacity == 1000 and i.insertedNum == 2 and i.filterNum == 1

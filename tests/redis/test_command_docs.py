# SPDX-License-Identifier: BSD-3-Clause
"""COMMAND DOCS and COMMAND INFO of every CF./BF. command: the texts, argument trees, arity, flags and key specs
RedisBloom declares (what its tests/flow/test_docs_help.py checks), and what the server does with them: arity
checked before the module runs, key specs that let a read-only ACL user read and not write."""
import pytest

from conftest import SERVER_KIND
from resp import Error, Raw

WRITE = {"write", "denyoom", "module"}
READ = {"readonly", "fast", "module"}


def arg(name, type_, token=None, flags=(), sub=None):
    return {"name": name, "type": type_, "token": token, "flags": set(flags), "sub": sub}


KEY = arg("key", "key")
ITEM = arg("item", "string")
ITEMS = arg("item", "string", flags=["multiple"])


def option(name, token, type_):
    return arg(name, "block", token, ["optional"], [arg(name, type_)])


ADD_COST = "O(k + i), where k is the number of sub-filters and i is maxIterations"
INSERT_COST = "O(n * (k + i)), where n is the number of items, k is the number of sub-filters and i is maxIterations"
LOOKUP_COST = "O(k), where k is the number of sub-filters"
BF_ONE = "O(k), where k is the number of hash functions used by the last sub-filter"
BF_MANY = "O(k * n), where k is the number of hash functions and n is the number of items"
BF_INSERT = "Adds one or more items to a Bloom Filter. A filter will be created if it does not exist"
CF_INSERT_ARGS = [KEY, arg("capacity", "block", flags=["optional"],
                           sub=[arg("capacity", "pure-token", "CAPACITY"), arg("capacity", "integer")]),
                  arg("nocreate", "pure-token", "NOCREATE", ["optional"]),
                  option("expansion", "EXPANSION", "integer"), option("window", "WINDOW", "integer"),
                  arg("items", "pure-token", "ITEMS"), ITEMS]
SCANDUMP = ("Begins an incremental save of the bloom filter", "O(n), where n is the capacity", "1.0.0", 3,
            ["dont_cache"], READ, "RO", [KEY, arg("iterator", "integer")])
LOADCHUNK = ("Restores a filter previously saved using SCANDUMP", "O(n), where n is the capacity", "1.0.0", 4, [],
             WRITE, "RW", [KEY, arg("iterator", "integer"), arg("data", "string")])

# nidus's own: a windowed write with its master's time, as masters replicate and log them
AT_ARGS = [KEY, arg("milliseconds", "integer"), arg("command", "string"),
           arg("arg", "string", flags=["optional", "multiple"])]

MERGE_ARGS = [arg("destkey", "key"), arg("numkeys", "integer"), arg("sourcekey", "key", flags=["multiple"])]
MERGE_COST = "O(n), where n is the total size of the filters"

# name: summary, complexity, since, arity, tips, command flags, key-spec access, arguments
EXPECTED = {
    "cf.reserve": ("Creates a new Cuckoo Filter", "O(1)", "1.0.0", -3, [], WRITE, "RW",
                   [KEY, arg("capacity", "integer"), option("bucketsize", "BUCKETSIZE", "integer"),
                    option("maxiterations", "MAXITERATIONS", "integer"),
                    option("expansion", "EXPANSION", "integer"), option("window", "WINDOW", "integer")]),
    "cf.at": ("Replays a master's write to a Cuckoo Filter: a windowed one's at its time, a load's limit or a growth's "
              "settings, a merge's start and end (sent by masters and the AOF only)",
              INSERT_COST, "1.0.0", -5, [], {"write", "module"}, "RW", AT_ARGS),
    "cf.add": ("Adds an item to a Cuckoo Filter", ADD_COST, "1.0.0", 3, [], WRITE, "RW", [KEY, ITEM]),
    "cf.addnx": ("Adds an item to a Cuckoo Filter if the item did not exist previously.", ADD_COST, "1.0.0", 3, [],
                 WRITE, "RW", [KEY, ITEM]),
    "cf.insert": ("Adds one or more items to a Cuckoo Filter. A filter will be created if it does not exist",
                  INSERT_COST, "1.0.0", -4, [], WRITE, "RW", CF_INSERT_ARGS),
    "cf.insertnx": ("Adds one or more items to a Cuckoo Filter if the items did not exist previously. A filter "
                    "will be created if it does not exist", INSERT_COST, "1.0.0", -4, [], WRITE, "RW",
                    CF_INSERT_ARGS),
    "cf.exists": ("Checks whether one or more items exist in a Cuckoo Filter", LOOKUP_COST, "1.0.0", 3, [], READ,
                  "RO", [KEY, ITEM]),
    "cf.mexists": ("Checks whether one or more items exist in a Cuckoo Filter",
                   "O(k * n), where k is the number of sub-filters and n is the number of items", "1.0.0", -3, [],
                   READ, "RO", [KEY, ITEMS]),
    "cf.count": ("Return the number of times an item might be in a Cuckoo Filter", LOOKUP_COST, "1.0.0", 3, [],
                 READ, "RO", [KEY, ITEM]),
    "cf.del": ("Deletes an item from a Cuckoo Filter", LOOKUP_COST, "1.0.0", 3, [], {"write", "fast", "module"},
               "RW", [KEY, ITEM]),
    # RedisBloom leaves CF.COMPACT undocumented and flags it readonly; ours writes and replicates
    "cf.compact": ("Moves items of newer sub-filters into older ones and frees the emptied ones",
                   "O(1): one bounded step; the writes to the filter and a timer take the rest in bounded steps",
                   "1.0.0", 2, [], {"write", "module"}, "RW", [KEY]),
    # nidus's own: how a master replicates the steps of a compaction
    "cf.compactstep": ("Takes one step of a Cuckoo Filter's compaction from the given cursor, as a master "
                       "replicates its steps", "O(b), where b is the budget", "1.0.0", 5, [], {"write", "module"},
                       "RW", [KEY, arg("table", "integer"), arg("bucket", "integer"), arg("budget", "integer")]),
    "cf.merge": ("Merges Cuckoo Filters into the destination, which is created like the first source if it does "
                 "not exist", MERGE_COST, "1.0.0", -4, [], WRITE | {"movablekeys"}, "RW", MERGE_ARGS),
    "cf.scandump": SCANDUMP,
    "cf.loadchunk": LOADCHUNK,
    "cf.info": ("Returns information about a Cuckoo Filter", "O(1)", "1.0.0", 2, ["dont_cache"], READ, "RO",
                [KEY]),
    "cf.debug": ("Returns internal debug information about a Cuckoo Filter", "O(1)", "1.0.0", 2, ["dont_cache"],
                 READ, "RO", [KEY]),
    "bf.reserve": ("Creates a new Bloom Filter", "O(1)", "1.0.0", -4, [], WRITE, "RW",
                   [KEY, arg("error_rate", "double"), arg("capacity", "integer"),
                    option("expansion", "EXPANSION", "integer"),
                    arg("nonscaling", "pure-token", "NONSCALING", ["optional"]),
                    option("window", "WINDOW", "integer")]),
    "bf.at": ("Replays a master's write to a Bloom Filter: a windowed one's at its time, a load's limit or a growth's "
              "settings, a merge's start and end (sent by masters and the AOF only)",
              BF_MANY, "1.0.0", -5, [], {"write", "module"}, "RW", AT_ARGS),
    "bf.add": ("Adds an item to a Bloom Filter", BF_ONE, "1.0.0", 3, [], WRITE, "RW", [KEY, ITEM]),
    "bf.madd": (BF_INSERT, BF_MANY, "1.0.0", -3, [], WRITE, "RW", [KEY, ITEMS]),
    "bf.insert": (BF_INSERT, BF_MANY, "1.0.0", -4, [], WRITE, "RW",
                  [KEY, option("capacity", "CAPACITY", "integer"), option("error", "ERROR", "double"),
                   option("expansion", "EXPANSION", "integer"),
                   arg("nocreate", "pure-token", "NOCREATE", ["optional"]),
                   arg("nonscaling", "pure-token", "NONSCALING", ["optional"]),
                   option("window", "WINDOW", "integer"), arg("items", "pure-token", "ITEMS"), ITEMS]),
    "bf.exists": ("Checks whether an item exists in a Bloom Filter", BF_ONE, "1.0.0", 3, [], READ, "RO",
                  [KEY, ITEM]),
    "bf.mexists": ("Checks whether one or more items exist in a Bloom Filter", BF_MANY, "1.0.0", -3, [], READ,
                   "RO", [KEY, ITEMS]),
    "bf.info": ("Returns information about a Bloom Filter", "O(1)", "1.0.0", -2, ["dont_cache"], READ, "RO",
                [KEY, arg("single_value", "oneof", flags=["optional"],
                          sub=[arg(n.lower(), "pure-token", n)
                               for n in ("CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION", "WINDOW")])]),
    "bf.card": ("Returns the cardinality of a Bloom filter", "O(1)", "2.4.4", 2, [], READ, "RO", [KEY]),
    "bf.merge": ("Merges Bloom Filters into the destination, which is created like the first source if it does "
                 "not exist", MERGE_COST, "1.0.0", -4, [], WRITE | {"movablekeys"}, "RW", MERGE_ARGS),
    "bf.scandump": SCANDUMP,
    "bf.loadchunk": LOADCHUNK,
    "bf.debug": ("Returns internal debug information about a Bloom Filter",
                 "O(n), where n is the number of sub-filters", "1.0.0", 2, ["dont_cache"], READ, "RO", [KEY]),
}


def text(v):
    return v.decode() if isinstance(v, bytes) else v


def pairs(flat):
    return {text(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)}


def parse_args(reply):
    out = []
    keys = 0
    for a in reply:
        d = pairs(a)
        sub = d.get("arguments")
        out.append(arg(text(d["name"]), text(d["type"]), text(d.get("token")),
                       [text(f) for f in d.get("flags", [])], parse_args(sub) if sub is not None else None))
        if out[-1]["type"] == "key":  # the merges' sourcekey is the second key spec's
            assert d["key_spec_index"] == keys
            keys += 1
    return out


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    from conftest import Server
    s = Server(tmp_path_factory.mktemp("docs"))
    yield Raw(s.port)
    s.kill()


def registered(c):
    return sorted(text(n) for n in c("COMMAND", "LIST", "FILTERBY", "MODULE", "nidus"))


def test_every_command_is_documented(conn):
    names = registered(conn)
    assert names == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_command_docs(conn, name):
    summary, complexity, since, _, _, _, _, args = EXPECTED[name]
    reply = conn("COMMAND", "DOCS", name)
    assert text(reply[0]) == name
    docs = pairs(reply[1])
    assert text(docs["summary"]) == summary
    assert text(docs["complexity"]) == complexity
    assert text(docs["since"]) == since
    assert text(docs["group"]) == "module"
    assert text(docs["module"]) == "nidus"
    assert parse_args(docs["arguments"]) == args


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_command_info(conn, name):
    _, _, _, arity, tips, flags, access, _ = EXPECTED[name]
    (info,) = conn("COMMAND", "INFO", name)
    assert text(info[0]) == name
    assert info[1] == arity
    assert {text(f) for f in info[2]} == flags
    assert info[3:6] == [1, 1, 1]
    assert [text(t) for t in info[7]] == tips
    spec = pairs(info[8][0])
    assert [text(f) for f in spec["flags"]] == [access]
    assert pairs(spec["begin_search"])["type"] == b"index"
    assert pairs(pairs(spec["begin_search"])["spec"]) == {"index": 1}
    assert pairs(pairs(spec["find_keys"])["spec"]) == {"lastkey": 0, "keystep": 1, "limit": 0}
    if not name.endswith(".merge"):
        assert len(info[8]) == 1
        return
    # the sourcekeys: read-only, as many as numkeys (the argument after destkey) says, from the one after it
    spec = pairs(info[8][1])
    assert [text(f) for f in spec["flags"]] == ["RO"]
    assert pairs(pairs(spec["begin_search"])["spec"]) == {"index": 2}
    assert text(pairs(spec["find_keys"])["type"]) == "keynum"
    assert pairs(pairs(spec["find_keys"])["spec"]) == {"keynumidx": 0, "firstkey": 1, "keystep": 1}


def test_arity_is_checked_by_the_server(conn):
    for name, (_, _, _, arity, _, _, _, _) in EXPECTED.items():
        few = ["k"] * ((arity if arity > 0 else -arity) - 2)
        assert conn(name, *few) == Error("ERR wrong number of arguments for '%s' command" % name), name
        if arity > 0:
            assert conn(name, *(["k"] * arity)) == Error("ERR wrong number of arguments for '%s' command" % name)
    assert conn("COMMAND", "GETKEYS", "CF.ADD", "k1", "x") == [b"k1"]
    assert conn("COMMAND", "GETKEYS", "BF.INSERT", "k2", "ITEMS", "x", "y") == [b"k2"]
    # the merges: destkey and every sourcekey, not numkeys
    assert conn("COMMAND", "GETKEYS", "CF.MERGE", "d", 3, "s1", "s2", "s3") == [b"d", b"s1", b"s2", b"s3"]
    assert conn("COMMAND", "GETKEYS", "BF.MERGE", "d", 1, "d") == [b"d", b"d"]


def test_key_specs_route_acl_key_patterns(conn):
    """A user allowed keys "mine*" runs every command on such keys and none on others: the key specs point at the
    key argument. (RedisBloom's specs carry RO / RW only, no ACCESS / INSERT / UPDATE, so %R~ and %W~ patterns
    grant these commands alike; we keep its flags.)"""
    assert conn("ACL", "SETUSER", "mine", "on", "nopass", "~mine*", "+@all") == "OK"
    c = Raw(conn.sock.getpeername()[1])
    try:
        assert c("AUTH", "mine", "x") == "OK"
        assert c("CF.ADD", "mine-cf", "a") == 1
        assert c("CF.EXISTS", "mine-cf", "a") == 1
        assert c("BF.ADD", "mine-bf", "a") == 1
        assert c("BF.EXISTS", "mine-bf", "a") == 1
        assert c("CF.MERGE", "mine-cf2", 1, "mine-cf") == "OK"
        assert c("BF.MERGE", "mine-bf2", 2, "mine-bf", "mine-bf") == "OK"
        for cmd in (["CF.ADD", "other", "b"], ["CF.EXISTS", "other", "a"], ["CF.SCANDUMP", "other", 0],
                    ["BF.RESERVE", "other", "0.01", 10], ["BF.INFO", "other"], ["CF.COMPACT", "other"],
                    ["CF.MERGE", "other", 1, "mine-cf"], ["CF.MERGE", "mine-cf3", 2, "mine-cf", "other"],
                    ["BF.MERGE", "mine-bf3", 1, "other"]):
            reply = c(*cmd)
            assert isinstance(reply, Error) and reply.startswith("NOPERM"), (cmd, reply)
    finally:
        c.close()
    assert conn("EXISTS", "other", "mine-cf3", "mine-bf3") == 0


def test_acl_categories_where_the_server_has_them(conn):
    """Redis >= 7.4 and Valkey >= 8.0 (RedisModule_AddACLCategory): RedisBloom's categories "bloom" and "cuckoo".
    Valkey reports redis_version 7.2.4 whatever its own version: its valkey_version decides there."""
    fields = dict(line.split(":", 1) for line in conn("INFO", "server").decode().splitlines() if ":" in line)
    valkey = fields.get("server_name") == "valkey"
    version = fields["valkey_version"] if valkey else fields["redis_version"]
    if tuple(int(x) for x in version.split(".")[:2]) < ((8, 0) if valkey else (7, 4)):
        assert b"bloom" not in conn("ACL", "CAT")
        pytest.skip("ACL categories from modules need Redis 7.4 or Valkey 8.0")
    names = registered(conn)
    for name in names:
        (info,) = conn("COMMAND", "INFO", name)
        assert ("@cuckoo" if name.startswith("cf.") else "@bloom") in [text(c) for c in info[6]], name
    # what the categories are for: a user given one of them runs its commands and not the other's
    assert conn("ACL", "SETUSER", "cuckoo-only", "on", "nopass", "+@cuckoo", "~*") == "OK"
    c = Raw(conn.sock.getpeername()[1])
    try:
        assert c("AUTH", "cuckoo-only", "x") == "OK"
        assert c("CF.EXISTS", "acl-cf", "a") == 0
        reply = c("BF.EXISTS", "acl-bf", "a")
        assert isinstance(reply, Error) and reply.startswith("NOPERM"), reply
    finally:
        c.close()
    if SERVER_KIND == "valkey":
        return  # Valkey 8's ACL CAT <category> lists no module command at all (acl.c skips CMD_MODULE)
    assert sorted(text(n) for n in conn("ACL", "CAT", "cuckoo")) == [n for n in names if n.startswith("cf.")]
    assert sorted(text(n) for n in conn("ACL", "CAT", "bloom")) == [n for n in names if n.startswith("bf.")]
    assert "bf.exists" in [text(n) for n in conn("ACL", "CAT", "read")]

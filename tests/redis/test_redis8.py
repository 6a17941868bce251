# SPDX-License-Identifier: BSD-3-Clause
"""On Redis 8 nidus.so answers as RedisBloom 8.6.2 (the version Redis 8.6 bundles) answers there, compared side by
side on redis-server 8.6.3; every reply below is RedisBloom's:

- its eight configs by their unprefixed names, with its defaults, ranges, caps and CONFIG SET errors;
- its ACL categories: @bloom and @cuckoo, and @read/@write/@fast per command as it registers them;
- RESP3: booleans for the EXISTS family, maps for the INFO commands, nulls where it sends them.

Where nidus departs on purpose (CF.COMPACT a write, read-only key specs for SCANDUMP, documented DEBUG commands,
its own three configs as nidus.<name>) the test says so; docs/DIFFERENCES.md lists why. The whole file needs
Redis 8 (Redis 7 and Valkey prefix every module config and know no unprefixed names): elsewhere it skips."""
import pytest

from conftest import REDIS8, SERVER_LABEL
from resp import Error, Raw, Set

pytestmark = pytest.mark.skipif(not REDIS8, reason="RedisBloom's Redis 8 names and categories: %s is not Redis 8"
                                % SERVER_LABEL)

REDISBLOOM_CONFIGS = {
    "bf-error-rate": "0.01", "bf-initial-size": "100", "bf-expansion-factor": "2", "cf-bucket-size": "2",
    "cf-initial-size": "1024", "cf-max-iterations": "20", "cf-expansion-factor": "1", "cf-max-expansions": "32",
}
NIDUS_CONFIGS = {"nidus.cf-error-rate": "0.01", "nidus.max-capacity": "1073741824",
                 "nidus.max-filter-memory": "2147483648", "nidus.cf-compact-interval": "10",
                 "nidus.merge-inline-bytes": "65536"}


def config_get(c, pattern):
    reply = c("CONFIG", "GET", pattern)
    return {reply[i].decode(): reply[i + 1].decode() for i in range(0, len(reply), 2)}


def failed(name, why):
    return Error("ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (name, why))


def test_config_names_and_defaults(c):
    assert {**config_get(c, "bf-*"), **config_get(c, "cf-*")} == REDISBLOOM_CONFIGS
    assert config_get(c, "nidus.*") == NIDUS_CONFIGS
    for name in REDISBLOOM_CONFIGS:  # no prefixed twin
        assert config_get(c, "nidus." + name) == {}, name


# (name, value, RedisBloom's reply, what CONFIG GET shows afterwards); run in this order on one server.
CONFIG_SETS = [
    ("bf-error-rate", "0.5", "OK", "0.25"),  # capped at 0.25, as RedisBloom shows it
    ("bf-error-rate", "1e-3", "OK", "1e-3"),  # the text given is kept
    ("bf-error-rate", ".05", "OK", ".05"),
    ("bf-error-rate", "0", "range (0.000000, 1.000000)", ".05"),
    ("bf-error-rate", "1", "range (0.000000, 1.000000)", ".05"),
    ("bf-error-rate", "inf", "range (0.000000, 1.000000)", ".05"),
    ("bf-error-rate", "abc", "invalid", ".05"),
    ("bf-error-rate", "nan", "invalid", ".05"),
    ("bf-initial-size", "0", "range [1, 1073741824]", "100"),
    ("bf-initial-size", "1073741825", "range [1, 1073741824]", "100"),
    ("bf-initial-size", "1.5", "invalid", "100"),
    ("bf-initial-size", "+8", "invalid", "100"),
    ("bf-initial-size", "007", "invalid", "100"),
    ("bf-initial-size", "1073741824", "OK", "1073741824"),
    ("bf-expansion-factor", "0", "OK", "0"),
    ("bf-expansion-factor", "32769", "range [0, 32768]", "0"),
    ("cf-bucket-size", "0", "range [1, 255]", "2"),
    ("cf-bucket-size", "256", "range [1, 255]", "2"),
    ("cf-initial-size", "3", "range [4, 1073741824]", "1024"),  # at least 2 buckets: 2 * bucket size
    ("cf-bucket-size", "255", "OK", "255"),
    ("cf-initial-size", "509", "range [510, 1073741824]", "1024"),
    ("cf-initial-size", "510", "OK", "510"),
    ("cf-bucket-size", "3", "OK", "3"),
    ("cf-initial-size", "6", "OK", "6"),
    ("cf-bucket-size", "4", "range [1, 3]", "3"),  # at most half the initial size
    ("cf-initial-size", "1073741825", "range [6, 1073741824]", "6"),
    ("cf-max-iterations", "0", "range [1, 65535]", "20"),
    ("cf-max-iterations", "65535", "OK", "65535"),
    ("cf-expansion-factor", "32769", "range [0, 32768]", "1"),
    ("cf-max-expansions", "0", "range [1, 65536]", "32"),
    ("cf-max-expansions", "65536", "OK", "65536"),
    ("cf-max-expansions", "65537", "range [1, 65536]", "65536"),
]


def test_config_set_replies_as_redisbloom(c):
    for name, value, want, after in CONFIG_SETS:
        reply = c("CONFIG", "SET", name, value)
        if want == "OK":
            assert reply == "OK", (name, value, reply)
        elif want == "invalid":
            assert reply == failed(name, "Invalid value for `%s`" % name), (name, value)
        else:
            assert reply == failed(name, "Value for `%s` must be in the range %s" % (name, want.split(" ", 1)[1])), \
                (name, value, reply)
        assert config_get(c, name) == {name: after}, (name, value)


def test_config_set_applies_to_new_filters(c):
    assert c("CONFIG", "SET", "bf-initial-size", "300", "bf-expansion-factor", "4") == "OK"
    assert c("CONFIG", "SET", "cf-bucket-size", "4", "cf-max-iterations", "30", "cf-expansion-factor", "2") == "OK"
    assert c("BF.ADD", "bf", "x") == 1
    info = c("BF.INFO", "bf")
    assert (info[1], info[9]) == (300, 4)  # Capacity, Expansion rate
    assert c("CF.ADD", "cf", "x") == 1
    info = dict(zip(c("CF.INFO", "cf")[::2], c("CF.INFO", "cf")[1::2]))
    assert (info["Bucket size"], info["Max iterations"], info["Expansion rate"]) == (4, 30, 2)


BLOOM = ["bf.add", "bf.at", "bf.card", "bf.debug", "bf.exists", "bf.info", "bf.insert", "bf.loadchunk", "bf.madd",
         "bf.merge", "bf.mexists", "bf.reserve", "bf.scandump"]
CUCKOO = ["cf.add", "cf.addnx", "cf.at", "cf.compact", "cf.compactstep", "cf.count", "cf.debug", "cf.del", "cf.exists",
          "cf.info", "cf.insert", "cf.insertnx", "cf.loadchunk", "cf.merge", "cf.mexists", "cf.reserve",
          "cf.scandump"]

# RedisBloom's categories of each command beside @bloom / @cuckoo. CF.COMPACT: RedisBloom says @read, ours
# rewrites the filter (@write); CF.MERGE / BF.MERGE, CF.COMPACTSTEP (a bounded compaction step) and CF.AT / BF.AT
# (a windowed write at its master's time) are ours.
CATEGORIES = {
    "bf.reserve": ["write", "fast"], "bf.add": ["write"], "bf.madd": ["write"], "bf.insert": ["write"],
    "bf.exists": ["read"], "bf.mexists": ["read"], "bf.info": ["read", "fast"], "bf.card": ["read", "fast"],
    "bf.debug": ["read"], "bf.scandump": ["read"], "bf.loadchunk": ["write"], "bf.merge": ["write"],
    "cf.reserve": ["write", "fast"], "cf.add": ["write"], "cf.addnx": ["write"], "cf.insert": ["write"],
    "cf.insertnx": ["write"], "cf.exists": ["read"], "cf.mexists": ["read"], "cf.count": ["read"],
    "cf.del": ["write"], "cf.compact": ["write"], "cf.scandump": ["read"], "cf.loadchunk": ["write"],
    "cf.info": ["read", "fast"], "cf.debug": ["read"], "cf.merge": ["write"], "cf.compactstep": ["write"],
    "cf.at": ["write"], "bf.at": ["write"],
}


def test_acl_categories_bloom_and_cuckoo(c):
    assert {"bloom", "cuckoo"} <= {x.decode() for x in c("ACL", "CAT")}
    assert sorted(x.decode() for x in c("ACL", "CAT", "bloom")) == BLOOM
    assert sorted(x.decode() for x in c("ACL", "CAT", "cuckoo")) == CUCKOO
    for cat in ("read", "write", "fast"):
        ours = sorted(x.decode() for x in c("ACL", "CAT", cat) if x[:3] in (b"bf.", b"cf."))
        assert ours == sorted(n for n, cats in CATEGORIES.items() if cat in cats), cat
    assert [x for x in c("ACL", "CAT", "slow") if x[:3] in (b"bf.", b"cf.")] == []


def test_command_info_categories_every_command(c):
    for name, cats in CATEGORIES.items():
        info = c("COMMAND", "INFO", name)[0]
        family = "@bloom" if name.startswith("bf.") else "@cuckoo"
        assert sorted(info[6]) == sorted(["@" + x for x in cats] + [family]), name


def test_acl_user_limited_to_bloom(server):
    """A user given +@bloom runs every Bloom command and no cuckoo one, as with RedisBloom."""
    c = Raw(server.port)
    assert c("ACL", "SETUSER", "b", "on", ">pw", "~*", "+@bloom") == "OK"
    u = Raw(server.port)
    assert u("AUTH", "b", "pw") == "OK"
    assert u("BF.ADD", "bf", "x") == 1
    assert u("CF.ADD", "cf", "x") == Error("NOPERM User b has no permissions to run the 'cf.add' command")


def test_resp3_reply_types(server):
    """Each command's RESP3 reply as RedisBloom 8.6.2 sends it (layout-dependent numbers left out)."""
    c = Raw(server.port, resp3=True)
    assert c("CF.RESERVE", "cf", 1000) == "OK"
    assert c("CF.ADD", "cf", "a") is True
    assert c("CF.ADDNX", "cf", "a") is False
    assert c("CF.INSERT", "cf", "ITEMS", "c", "d") == [True, True]
    assert c("CF.INSERTNX", "cf", "ITEMS", "c", "e") == [False, True]
    assert c("CF.EXISTS", "cf", "a") is True and c("CF.EXISTS", "cf", "zz") is False
    assert c("CF.MEXISTS", "cf", "a", "zz") == [True, False]
    assert c("CF.COUNT", "cf", "a") == 1
    assert c("CF.DEL", "cf", "a") is True and c("CF.DEL", "cf", "a") is False
    assert c("CF.EXISTS", "nokey", "a") is False and c("CF.MEXISTS", "nokey", "a") == [False]
    info = c("CF.INFO", "cf")
    assert isinstance(info, dict) and list(info)[:8] == [
        "Size", "Number of buckets", "Number of filters", "Number of items inserted", "Number of items deleted",
        "Bucket size", "Expansion rate", "Max iterations"]
    assert c("BF.RESERVE", "bf", "0.01", 1000) == "OK"
    assert c("BF.ADD", "bf", "a") is True and c("BF.ADD", "bf", "a") is False
    assert c("BF.MADD", "bf", "a", "b") == [False, True]
    assert c("BF.INSERT", "bf", "ITEMS", "b", "c") == [False, True]
    assert c("BF.EXISTS", "bf", "a") is True and c("BF.MEXISTS", "bf", "a", "zz") == [True, False]
    assert c("BF.EXISTS", "nokey", "a") is False
    assert c("BF.CARD", "bf") == 3 and c("BF.CARD", "nokey") == 0
    info = c("BF.INFO", "bf")
    assert list(info) == ["Capacity", "Size", "Number of filters", "Number of items inserted", "Expansion rate"]
    assert (info["Capacity"], info["Number of items inserted"], info["Expansion rate"]) == (1000, 3, 2)
    assert c("BF.INFO", "bf", "CAPACITY") == {"Capacity": 1000}
    assert c("BF.INFO", "bf", "ITEMS") == {"Number of items inserted": 3}
    assert c("BF.INSERT", "nb", "NONSCALING", "ITEMS", "a") == [True]
    assert c("BF.INFO", "nb", "EXPANSION") == {"Expansion rate": None}
    assert c("CF.SCANDUMP", "empty", 0) == Error("ERR not found")
    assert c("CF.RESERVE", "empty", 64) == "OK"
    assert c("CF.SCANDUMP", "empty", 0) == [0, None]
    assert isinstance(c("COMMAND", "INFO", "cf.add")[0][2], Set)

# SPDX-License-Identifier: BSD-3-Clause
"""RedisBloom 8.6.2's own data, made on Redis 8 (fixtures/redisbloom/v8.6.2/redis-8.6.3 and .../redis-8.0.6, by
make_fixtures.py --native-only): its RDB file, DUMP payloads and SCANDUMP chunk streams load into nidus.so and
every item answers as it did in RedisBloom, and RedisBloom's later writes give its replies.

An RDB file and a DUMP payload carry the RDB version of the server that wrote them (13 from Redis 8.6, 12 from
Redis 8.0): a server that reads no such version (Redis 7.0 reads up to 10, Redis 8.0 up to 12; Valkey 9 reads
Redis's 12 to 79 only with rdb-version-check relaxed, tested here too) refuses them before any module sees them, so
those tests skip there, with the reason. The chunks carry no RDB version: they load on every server."""
import os
import shutil

import pytest
import redis

import conftest
import rb_fixtures

SETS = {name: rb_fixtures.Fixtures(os.path.join(rb_fixtures.HERE, "v8.6.2", name))
        for name in sorted(os.listdir(os.path.join(rb_fixtures.HERE, "v8.6.2")))}
KEYS = [(s, k) for s in sorted(SETS) for k in sorted(SETS[s].expected)]
# The chunks carry no RDB version: redis-8.0.6's were byte for byte redis-8.6.3's, and only these are kept.
CHUNKED = [s for s in sorted(SETS) if os.path.isdir(os.path.join(SETS[s].path, "scandump"))]
SCENARIOS = [(s, k) for s in CHUNKED for k in sorted(SETS[s].scenarios)]


def _server_rdb_version():
    """The RDB version the server under test writes (the newest it reads), from the footer of a DUMP."""
    d = os.path.join(os.environ.get("TMPDIR", "/tmp"), "nidus-rdbver-%d" % os.getpid())
    s = conftest.Server(d)
    try:
        r = s.client()
        r.set("probe", "x")
        return int.from_bytes(r.dump("probe")[-10:-8], "little")
    finally:
        s.kill()
        shutil.rmtree(d, ignore_errors=True)


_RDB = []


def unreadable(fixtures):
    """Why the server under test refuses this set's RDB file and DUMP payloads, or None when it reads them."""
    if not _RDB:
        _RDB.append(_server_rdb_version())
    ours, theirs = _RDB[0], fixtures.rdb_version
    if ours < theirs:
        return "this server writes RDB %d and refuses RDB %d (\"Can't handle RDB format version %d\")" % (
            ours, theirs, theirs)
    if conftest.SERVER_KIND == "valkey" and 12 <= theirs <= 79:
        return "valkey-server (RDB %d) refuses Redis's RDB %d (a foreign version) under rdb-version-check " \
               "strict" % (ours, theirs)
    return None


def skip_unreadable(fixtures):
    reason = unreadable(fixtures)
    if reason:
        print("skipped: " + reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One server for the RESTORE and LOADCHUNK cases (each starts from an empty keyspace)."""
    s = conftest.Server(tmp_path_factory.mktemp("redisbloom8"))
    yield s
    s.kill()


@pytest.fixture
def r(shared):
    client = shared.client()
    client.flushall()
    return client


@pytest.mark.parametrize("name", sorted(SETS))
def test_rdb_of_redisbloom8_loads_and_answers_exactly(tmp_path, name):
    fx = SETS[name]
    skip_unreadable(fx)
    d = tmp_path / "rb"
    os.makedirs(d)
    shutil.copy(os.path.join(fx.path, "dump.rdb"), d / "dump.rdb")
    s = conftest.Server(d)
    try:
        r = s.client()
        assert r.dbsize() == len(fx.expected)
        for key in sorted(fx.expected):
            e = fx.expected[key]
            assert r.type(key) == (b"MBbloomCF" if e["kind"] == "cf" else b"MBbloom--")
            fx.assert_exact(r, key)
            want, got = e["info"], fx.info(r, key)
            fields = ["Number of buckets", "Number of filters", "Number of items inserted",
                      "Number of items deleted", "Bucket size", "Expansion rate", "Max iterations"] \
                if e["kind"] == "cf" else ["Capacity", "Number of filters", "Number of items inserted",
                                           "Expansion rate"]
            assert {f: got[f] for f in fields} == {f: want[f] for f in fields}, key
            debug = r.execute_command(e["kind"].upper() + ".DEBUG", key)
            assert (debug.decode() if isinstance(debug, bytes) else [x.decode() for x in debug]) == e["debug"], key
            if e["kind"] == "bf":
                assert r.execute_command("BF.CARD", key) == want["Number of items inserted"]
    finally:
        s.kill()


@pytest.mark.parametrize("name,key", KEYS)
def test_restore_of_redisbloom8_dump_payload(r, name, key):
    fx = SETS[name]
    skip_unreadable(fx)
    r.restore(key, 0, fx.payload(key))
    fx.assert_exact(r, key)


@pytest.mark.parametrize("name", sorted(SETS))
def test_redisbloom8_dump_payload_refused_where_its_rdb_version_is_unknown(r, name):
    """Where the server reads no RDB of this version, RESTORE refuses the payload before the module sees it."""
    fx = SETS[name]
    if not unreadable(fx):
        pytest.skip("this server reads RDB %d" % fx.rdb_version)
    with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
        r.restore("k", 0, fx.payload("bf_scale"))
    assert r.exists("k") == 0


@pytest.mark.parametrize("name,key", [(s, k) for s, k in KEYS if k != "cf_empty" and s in CHUNKED])
def test_loadchunk_of_redisbloom8_scandump(r, name, key):
    """On every server: chunks carry no RDB version. SCANDUMP gives RedisBloom's stream back, byte for byte."""
    fx = SETS[name]
    chunks = fx.load_chunks(r, key)
    fx.assert_exact(r, key)
    assert rb_fixtures.scandump(r, fx.expected[key]["kind"], key) == chunks


@pytest.mark.parametrize("name,key", SCENARIOS)
def test_writes_on_redisbloom8_data_reply_and_answer_as_redisbloom(r, name, key):
    """The commands RedisBloom 8.6.2 ran on the key after its snapshot (loaded here from its chunks) give its
    replies one by one, then its answers for every probe, its counts and its INFO."""
    SETS[name].load_chunks(r, key)
    SETS[name].assert_scenario(r, key)


RELAXED = conftest.SERVER_KIND == "valkey" and conftest.SERVER_VERSION >= (9, 0, 0)
NOT_RELAXED = "rdb-version-check is Valkey 9's: %s" % conftest.SERVER_LABEL


@pytest.mark.skipif(not RELAXED, reason=NOT_RELAXED)
@pytest.mark.parametrize("name", sorted(SETS))
def test_valkey9_relaxed_loads_redisbloom8_rdb_and_dump_payloads(tmp_path, name):
    """Valkey 9 reads Redis 8's RDB (and DUMP payloads) under rdb-version-check relaxed when it holds no type
    Valkey lacks: RedisBloom's keys load into nidus.so and every probe answers as in RedisBloom."""
    fx = SETS[name]
    d = tmp_path / "rb"
    os.makedirs(d)
    shutil.copy(os.path.join(fx.path, "dump.rdb"), d / "dump.rdb")
    s = conftest.Server(d, extra=["--rdb-version-check", "relaxed"])
    try:
        r = s.client()
        assert r.dbsize() == len(fx.expected)
        for key in sorted(fx.expected):
            fx.assert_exact(r, key)
        r.flushall()
        for key in sorted(fx.expected):
            r.restore(key, 0, fx.payload(key))
            fx.assert_exact(r, key)
        r.config_set("rdb-version-check", "strict")
        with pytest.raises(redis.ResponseError, match="DUMP payload version or checksum are wrong"):
            r.restore("again", 0, fx.payload("cf_b4"))
    finally:
        s.kill()

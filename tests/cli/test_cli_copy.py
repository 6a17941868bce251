# SPDX-License-Identifier: BSD-3-Clause
"""nidus copy: filter keys from one server to another through SCANDUMP / LOADCHUNK. The source runs on
NIDUS_COPY_SOURCE_SERVER (default Debian's redis-server 7.0.15), the target on NIDUS_SERVER (CTest: redis-server,
and Valkey as valkey.cli_copy), each with nidus.so; RedisBloom's own keys come from the committed fixtures
(RESTOREd into the source: types MBbloomCF / MBbloom--). Which keys (every filter type, others skipped and
counted, MATCH, named KEYs), all or nothing per key (nothing left behind, no temporary key), existing keys
refused unless --replace, a key written during its copy copied again or reported, 3-master clusters on either
side, the summary line and the exit codes."""
import json
import os
import re
import subprocess

import pytest
import redis

from cli_util import NIDUS, run, run_on_terminal
from server_util import CLUSTER_NODE, REDISBLOOM_FIXTURES, build, create_cluster, keys, servers, wait_for

SOURCE_SERVER = os.environ.get("NIDUS_COPY_SOURCE_SERVER") or (
    "/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else servers.SERVER)
TARGET_SERVER = servers.SERVER
SUMMARY = re.compile(rb"^copied (\d+) keys? \(([\d,]+) items?, [\d.]+ (?:kB|MB)\) in [\d.]+ s(.*)\n\Z")

with open(os.path.join(REDISBLOOM_FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)["keys"]


@pytest.fixture
def make(tmp_path):
    made = []

    def start(name, binary, extra=(), module_args=()):
        s = servers.Server(tmp_path / name, extra, module_args, binary=binary)
        made.append(s)
        return s

    yield start
    for s in made:
        s.kill()


@pytest.fixture
def source(make):
    return make("source", SOURCE_SERVER)


@pytest.fixture
def target(make):
    return make("target", TARGET_SERVER)


def url(s):
    return "redis://127.0.0.1:%d" % s.port


def copy(src, dst, *args, rc=0):
    p = run("copy", "--from", url(src) if not isinstance(src, str) else src,
            "--to", url(dst) if not isinstance(dst, str) else dst, *args, check_rc=rc)
    return p


def summary(p):
    """(keys copied, items, the rest of the line) of a copy's one line on stdout."""
    m = SUMMARY.match(p.stdout)
    assert m, p.stdout
    return int(m.group(1)), int(m.group(2).replace(b",", b"")), m.group(3).decode()


def insert(c, kind, key, items, batch=2000):
    """Adds items to key (CF.INSERT / BF.INSERT in batches, pipelined)."""
    pipe = c.pipeline(transaction=False)
    cmd = "CF.INSERT" if kind == "cuckoo" else "BF.INSERT"
    for i in range(0, len(items), batch):
        pipe.execute_command(cmd, key, "ITEMS", *items[i:i + batch])
    pipe.execute()


def exists(c, kind, key, items, batch=2000):
    cmd = "CF.MEXISTS" if kind == "cuckoo" else "BF.MEXISTS"
    pipe = c.pipeline(transaction=False)
    for i in range(0, len(items), batch):
        pipe.execute_command(cmd, key, *items[i:i + batch])
    return [int(x) for part in pipe.execute() for x in part]


def info(c, command, key):
    """CF.INFO / BF.INFO as a dict, floats as numbers (servers print them with different digits)."""
    reply = c.execute_command(command, key)
    return {k: round(float(v), 9) if isinstance(v, bytes) else v for k, v in zip(reply[::2], reply[1::2])}


def info_items(c, kind, key):
    """CF.INFO's / BF.INFO's "Number of items inserted" (a Bloom filter's add of a false positive adds none)."""
    reply = c.execute_command("CF.INFO" if kind == "cuckoo" else "BF.INFO", key)
    return dict(zip(reply[::2], reply[1::2]))[b"Number of items inserted"]


def digest(c, key):
    return c.execute_command("DEBUG", "DIGEST-VALUE", key)[0]


def leftovers(c):
    """Temporary keys of a push or copy still on the server."""
    return [k for k in c.scan_iter(match="*nidus-push-*", count=1000)]


def filters(c):
    """The source's filter keys: a grown cuckoo filter, a scalable Bloom filter grown past its first layer,
    one of each not grown, and empty ones; with the items of each."""
    made = {}
    c.execute_command("CF.RESERVE", "cf:grown", 1000)
    made["cf:grown"] = ("cuckoo", keys(5000, "g"))
    c.execute_command("CF.RESERVE", "cf:plain", 10000, "BUCKETSIZE", 4)
    made["cf:plain"] = ("cuckoo", keys(3000, "p"))
    c.execute_command("BF.RESERVE", "bf:grown", 0.01, 500)
    made["bf:grown"] = ("bloom", keys(4000, "b"))
    c.execute_command("BF.RESERVE", "bf:plain", 0.001, 10000)
    made["bf:plain"] = ("bloom", keys(2000, "q"))
    for key, (kind, items) in made.items():
        insert(c, kind, key, items)
    c.execute_command("CF.RESERVE", "cf:empty", 100, "BUCKETSIZE", 4, "EXPANSION", 2)
    c.execute_command("BF.RESERVE", "bf:empty", 0.05, 100)
    made["cf:empty"] = ("cuckoo", [])
    made["bf:empty"] = ("bloom", [])
    return made


def others(c):
    c.set("string", "x")
    c.rpush("list", "a", "b")
    c.hset("hash", "f", "v")


# ---- which keys ----

def test_every_filter_key_is_copied_other_types_skipped_and_counted(source, target):
    s, t = source.client(), target.client()
    made = filters(s)
    others(s)
    p = copy(source, target)
    n, items, rest = summary(p)
    assert (n, rest) == (6, "; skipped 3 keys of other types") and p.stderr == b""
    assert items == sum(info_items(s, kind, key) for key, (kind, _) in made.items())
    assert sorted(t.keys()) == sorted(k.encode() for k in made)
    for key, (kind, its) in made.items():
        assert exists(t, kind, key, its) == [1] * len(its), key
        assert t.type(key) == s.type(key)
        if its:  # the same filter, byte for byte (an empty cuckoo filter is made anew: same parameters)
            assert digest(t, key) == digest(s, key), key
    for name, command in (("cf:empty", "CF.INFO"), ("bf:empty", "BF.INFO")):
        assert info(t, command, name) == info(s, command, name)
    assert leftovers(t) == []


def test_match_takes_only_the_keys_it_matches(source, target):
    s, t = source.client(), target.client()
    filters(s)
    others(s)
    p = copy(source, target, "--match", "cf:*")
    assert summary(p)[0] == 3 and summary(p)[2] == ""
    assert sorted(t.keys()) == [b"cf:empty", b"cf:grown", b"cf:plain"]
    p = copy(source, target, "--match=*r*", rc=1)  # cf:grown (there already), bf:grown, string
    assert summary(p)[0] == 1 and summary(p)[2] == "; skipped 1 key of other types; 1 key exists (use --replace)"
    assert sorted(t.keys()) == [b"bf:grown", b"cf:empty", b"cf:grown", b"cf:plain"]


def test_named_keys_missing_or_of_another_type_fail_the_copy(source, target):
    s, t = source.client(), target.client()
    filters(s)
    others(s)
    p = copy(source, target, "cf:grown", "nokey", "string", "bf:plain", rc=1)
    assert summary(p)[0] == 2 and summary(p)[2] == "; skipped 1 key of other types; 1 key not found"
    assert p.stderr.decode() == (
        "nidus copy: %s: nokey: no such key\n"
        "nidus copy: %s: string: holds a string, not a cuckoo or Bloom filter\n" % (url(source), url(source)))
    assert sorted(t.keys()) == [b"bf:plain", b"cf:grown"]


def test_a_key_keeps_its_time_to_live(source, target):
    s, t = source.client(), target.client()
    insert(s, "cuckoo", "short", keys(100))
    insert(s, "bloom", "long", keys(100))
    insert(s, "cuckoo", "forever", keys(100))
    s.pexpire("short", 300000)
    s.expire("long", 86400)
    copy(source, target)
    assert 290000 <= t.pttl("short") <= 300000
    assert 86000 <= t.ttl("long") <= 86400
    assert t.ttl("forever") == -1
    run("copy", "--from", url(source), "--to", url(target), "--replace", "short", check_rc=0)
    assert 280000 <= t.pttl("short") <= 300000


# ---- existing keys ----

def test_an_existing_key_is_refused_and_left_unchanged_unless_replace(source, target):
    s, t = source.client(), target.client()
    made = filters(s)
    t.execute_command("CF.RESERVE", "cf:grown", 50)
    t.execute_command("CF.ADD", "cf:grown", "theirs")
    t.set("bf:plain", "a string")
    before = {k: t.dump(k) for k in ("cf:grown", "bf:plain")}
    p = copy(source, target, rc=1)
    assert summary(p)[0] == 4 and summary(p)[2] == "; 2 keys exist (use --replace)"
    assert sorted(p.stderr.decode().splitlines()) == [
        "nidus copy: %s: %s: already exists (--replace replaces it)" % (url(target), k) for k in ("bf:plain", "cf:grown")]
    assert {k: t.dump(k) for k in before} == before
    p = copy(source, target, "--replace")
    assert summary(p)[0] == 6 and summary(p)[2] == "" and p.stderr == b""
    for key in ("cf:grown", "bf:plain"):
        kind, its = made[key]
        assert exists(t, kind, key, its) == [1] * len(its)
        assert digest(t, key) == digest(s, key)
    assert t.execute_command("CF.EXISTS", "cf:grown", "theirs") == 0
    assert leftovers(t) == []


def test_a_key_the_target_refuses_is_not_left_behind(source, make):
    s = source.client()
    made = filters(s)
    small = make("small", TARGET_SERVER, module_args=("max-filter-memory", "4096"))
    p = copy(source, small, "cf:grown", "bf:empty", rc=1)
    assert summary(p)[0] == 1 and summary(p)[2] == "; 1 key failed"
    assert re.fullmatch(r"nidus copy: %s: cf:grown: the server refused it: .*\n" % re.escape(url(small)),
                        p.stderr.decode()), p.stderr
    assert small.client().keys() == [b"bf:empty"]
    assert made


# ---- writes during the copy ----

def blocked_client(c):
    """True once a client of c waits (paused) for its command to run."""
    for line in c.execute_command("CLIENT", "LIST").decode().splitlines():
        flags = re.search(r" flags=(\S+)", line)
        if flags and "b" in flags.group(1):
            return True
    return False


@pytest.mark.parametrize("kind", ["cuckoo", "bloom"])
def test_a_key_written_during_its_copy_is_copied_again(source, target, kind):
    """The target is paused for writes, so the copy's first pass waits on its chunks (a few are sent ahead, the
    key has many: 30-40 MB in 4 MB chunks) while its WATCH on the source is set: a write then makes that pass's
    EXEC fail, and the second pass takes the key with the write."""
    s, t = source.client(), target.client()
    key, its = "w", keys(20000)
    if kind == "cuckoo":
        s.execute_command("CF.RESERVE", key, 30000000)
    else:
        s.execute_command("BF.RESERVE", key, 0.001, 20000000)
    insert(s, kind, key, its)
    t.execute_command("CLIENT", "PAUSE", 20000, "WRITE")
    p = subprocess.Popen([NIDUS, "copy", "--from", url(source), "--to", url(target), key],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: blocked_client(t))
        s.execute_command("CF.ADD" if kind == "cuckoo" else "BF.ADD", key, "written-meanwhile")
    finally:
        t.execute_command("CLIENT", "UNPAUSE")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and err == b"", err
    n, items, rest = summary(subprocess.CompletedProcess([], 0, out, err))
    assert (n, items, rest) == (1, info_items(s, kind, key), "; 1 key copied again after a write")
    assert exists(t, kind, key, its + [b"written-meanwhile"]) == [1] * 20001
    assert digest(t, key) == digest(s, key)
    assert leftovers(t) == []


def test_a_key_written_throughout_is_reported_and_not_copied(source, target):
    """redis-benchmark adds new items to the key without pause (pipelined, its own process): every pass sees a
    write, and after 3 the key is reported, the target left without it."""
    s, t = source.client(), target.client()
    s.execute_command("BF.RESERVE", "busy", 0.01, 1000000)
    insert(s, "bloom", "busy", keys(100000))
    insert(s, "bloom", "calm", keys(1000))
    writer = subprocess.Popen(["redis-benchmark", "-p", str(source.port), "-c", "2", "-P", "16", "-l", "-q",
                               "-r", "1000000000", "BF.ADD", "busy", "__rand_int__"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        start = info_items(s, "bloom", "busy")
        assert wait_for(lambda: info_items(s, "bloom", "busy") > start + 1000)
        p = copy(source, target, rc=1)
    finally:
        writer.kill()
        writer.wait()
    assert summary(p)[0] == 1 and summary(p)[2] == "; 1 key written to during each of 3 copies, not copied", p.stderr
    assert p.stderr.decode() == ("nidus copy: %s: busy: written to during each of 3 copies: not copied (copy it "
                                 "again later)\n" % url(source))
    assert t.keys() == [b"calm"]


# ---- RedisBloom's data, and big keys from one server to another ----

def test_redisbloom_keys_keep_their_answers(source, target):
    """RedisBloom's keys (its DUMP payloads RESTOREd into nidus: every encoding it wrote) arrive with RedisBloom's
    type and answer every item as RedisBloom did; its empty cuckoo filter (no chunk) is made anew, empty."""
    s, t = source.client(), target.client()
    for name in EXPECTED:
        with open(os.path.join(REDISBLOOM_FIXTURES, "dump", name + ".bin"), "rb") as f:
            s.restore(name, 0, f.read())
    p = copy(source, target)
    assert summary(p)[0] == len(EXPECTED) and summary(p)[2] == ""
    for name, e in EXPECTED.items():
        kind = "cuckoo" if e["kind"] == "cf" else "bloom"
        items = [("%s%d" % (e["prefix"], i)).encode() for i in range(e["n"])]
        assert "".join(map(str, exists(t, kind, name, items))) == e["exists"], name
        if name != "cf_empty":
            assert t.type(name) == s.type(name)
            assert digest(t, name) == digest(s, name), name


def test_big_keys_every_item_answers(source, target):
    """CF and BF keys of 50k+ items each, grown and not, across servers (the CI form of moving a Redis 8 +
    RedisBloom keyspace: RedisBloom's keys above, nidus's here)."""
    s, t = source.client(), target.client()
    made = {"cf:big": ("cuckoo", keys(60000, "c"), ["CF.RESERVE", "cf:big", 100000]),
            "cf:bigrown": ("cuckoo", keys(60000, "d"), ["CF.RESERVE", "cf:bigrown", 8000]),
            "bf:big": ("bloom", keys(60000, "e"), ["BF.RESERVE", "bf:big", 0.01, 100000]),
            "bf:bigrown": ("bloom", keys(60000, "f"), ["BF.RESERVE", "bf:bigrown", 0.01, 5000])}
    for key, (kind, its, reserve) in made.items():
        s.execute_command(*reserve)
        insert(s, kind, key, its)
    assert s.execute_command("CF.INFO", "cf:bigrown")[5] > 1
    p = copy(source, target)
    assert summary(p)[:2] == (4, sum(info_items(s, kind, key) for key, (kind, _, _) in made.items()))
    for key, (kind, its, _) in made.items():
        assert exists(t, kind, key, its) == [1] * len(its), key
        assert digest(t, key) == digest(s, key)


def test_a_pushed_file_copies_as_it_is(source, target, tmp_path):
    """A key pushed from a file and copied: pulled from either server, the same file."""
    path = build(tmp_path, "f.nf", keys(10000), "--capacity", "2000")
    run("push", path, "k", "--url", url(source), check_rc=0)
    copy(source, target)
    run("pull", "k", str(tmp_path / "there.nf"), "--url", url(source), check_rc=0)
    run("pull", "k", str(tmp_path / "back.nf"), "--url", url(target), check_rc=0)
    assert open(tmp_path / "there.nf", "rb").read() == open(tmp_path / "back.nf", "rb").read()


# ---- clusters ----

def cluster(make, name, binary):
    return create_cluster([make("%s%d" % (name, i), binary, extra=CLUSTER_NODE) for i in range(3)])


def cluster_client(nodes):
    return redis.cluster.RedisCluster(host="127.0.0.1", port=nodes[0].port)


def fill_cluster_or_not(nodes_or_server, n):
    """n cuckoo and n Bloom keys of 200 items each, spread over the slots, and 3 strings."""
    c = cluster_client(nodes_or_server) if isinstance(nodes_or_server, list) else nodes_or_server.client()
    for i in range(n):
        c.execute_command("CF.INSERT", "c%d" % i, "ITEMS", *keys(200, "c%d:" % i))
        c.execute_command("BF.INSERT", "b%d" % i, "ITEMS", *keys(200, "b%d:" % i))
    for i in range(3):
        c.set("s%d" % i, "x")
    return c


def check_copied(c, n):
    for i in range(n):
        assert c.execute_command("CF.MEXISTS", "c%d" % i, *keys(200, "c%d:" % i)) == [1] * 200
        assert c.execute_command("BF.MEXISTS", "b%d" % i, *keys(200, "b%d:" % i)) == [1] * 200


@pytest.mark.parametrize("shape", ["cluster-to-cluster", "cluster-to-one", "one-to-cluster"])
def test_clusters_on_either_side(make, shape):
    src = cluster(make, "src", SOURCE_SERVER) if shape != "one-to-cluster" else make("src", SOURCE_SERVER)
    dst = cluster(make, "dst", TARGET_SERVER) if shape != "cluster-to-one" else make("dst", TARGET_SERVER)
    fill_cluster_or_not(src, 20)
    first = src[0] if isinstance(src, list) else src
    p = copy(first, dst[1] if isinstance(dst, list) else dst)  # any node will do
    assert summary(p)[0] == 40 and summary(p)[2] == "; skipped 3 keys of other types"
    if isinstance(dst, list):
        c = cluster_client(dst)
        assert sum(n.client().dbsize() for n in dst) == 40
        for n in dst:  # every key on the master of its slot
            for k in n.client().keys():
                assert n.client().execute_command("CLUSTER", "KEYSLOT", k) in owned_slots(n)
    else:
        c = dst.client()
        assert c.dbsize() == 40
    check_copied(c, 20)


def owned_slots(node):
    me = node.client().execute_command("CLUSTER", "MYID")
    out = set()
    for first, last, master, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
        if master[2] == me:
            out.update(range(first, last + 1))
    return out


# ---- usage ----

@pytest.mark.parametrize("args,line", [
    ((), "--from URL is required (the server to copy from)"),
    (("--from", "redis://127.0.0.1:1"), "--to URL is required (the server to copy to)"),
    (("--from", "redis://h", "--to", "redis://h", "--bogus"), "unknown option: --bogus"),
    (("--from", "redis://h", "--to", "redis://h", "--match", "a*", "k"),
     "--match and KEY arguments exclude each other"),
])
def test_usage_errors_exit_2_in_one_line(args, line):
    p = run("copy", *args, check_rc=2)
    assert p.stderr.decode() == "nidus copy: %s (see 'nidus help copy')\n" % line and p.stdout == b""


def test_a_server_that_cannot_be_reached_exits_2(target):
    p = run("copy", "--from", "redis://127.0.0.1:1", "--to", url(target), check_rc=2)
    assert p.stderr.startswith(b"nidus copy: redis://127.0.0.1:1: cannot connect: ") and p.stdout == b""


def test_a_target_without_nidus_is_refused(source, tmp_path):
    sock, log = str(tmp_path / "s.sock"), str(tmp_path / "plain.log")
    # launch (tests/redis/conftest.py) returns once the server answers PING on its port, by when its socket
    # accepts too
    plain, _ = servers.launch(lambda port: [TARGET_SERVER, "--port", str(port), "--unixsocket", sock, "--save", "",
                                            "--logfile", log], log)
    try:
        p = run("copy", "--from", url(source), "--to", "unix://%s" % sock, check_rc=2)
        assert p.stderr.decode().endswith("the server does not have the nidus module loaded (loadmodule nidus.so)\n")
    finally:
        plain.kill()
        plain.wait()


# ---- what the source cannot give, and the terminal ----

def test_a_key_still_loading_its_chunks_is_reported_and_the_rest_copied(source, target):
    """A key whose LOADCHUNK stream stopped half-way (its SCANDUMP is refused) fails alone: exit 1, one line
    with the server's reply, nothing of it on the target."""
    s, t = source.client(), target.client()
    s.execute_command("CF.RESERVE", "whole", 100000)
    insert(s, "cuckoo", "whole", keys(50000))
    it, header = s.execute_command("CF.SCANDUMP", "whole", 0)
    s.execute_command("CF.LOADCHUNK", "half", it, header)
    p = copy(source, target, rc=1)
    assert summary(p)[:3] == (1, 50000, "; 1 key failed")
    reply = None
    try:
        s.execute_command("CF.SCANDUMP", "half", 0)
    except redis.exceptions.ResponseError as e:
        reply = str(e)
    assert p.stderr.decode() in ("nidus copy: %s: half: CF.SCANDUMP: %s%s\n" % (url(source), e, reply)
                                 for e in ("", "ERR "))  # redis-py drops an ERR prefix
    assert t.keys() == [b"whole"] and leftovers(t) == []


def test_progress_on_a_terminal_then_one_line(source, target):
    """On a terminal, a progress line on stderr while keys are copied, erased at the end; the summary goes to
    stdout (discarded here)."""
    s = source.client()
    pipe = s.pipeline(transaction=False)
    for i in range(3000):
        pipe.execute_command("CF.ADD", "k%d" % i, "x")
    pipe.execute()
    rc, seen = run_on_terminal("copy", "--from", url(source), "--to", url(target))
    assert rc == 0
    assert re.search(rb"\rcopying \[#*\s*\] +\d+\.\d%  \d+ items", seen), seen[-300:]
    assert seen.endswith(b"\r" + b" " * 100 + b"\r")
    assert target.client().dbsize() == 3000


def test_windowed_keys_keep_their_window_and_ages(source, target):
    """Windowed keys (CF.RESERVE / BF.RESERVE ... WINDOW) travel as their chunks: the same type, window, answers
    and bytes on the target (ages are epochs of the absolute millisecond grid), an empty one too."""
    s = source.client()
    window = 1 << 48  # no epoch turns during the test: the sweep would change the source's bytes
    s.execute_command("CF.RESERVE", "cw", 1000, "WINDOW", window)
    s.execute_command("CF.INSERT", "cw", "ITEMS", *["a%d" % i for i in range(300)])
    s.execute_command("BF.RESERVE", "bw", "0.01", 1000, "WINDOW", window)
    s.execute_command("BF.MADD", "bw", *["b%d" % i for i in range(300)])
    s.execute_command("CF.RESERVE", "empty", 100, "WINDOW", 60000)
    copy(source, target)
    t = target.client()
    for key in ("cw", "bw", "empty"):
        assert t.type(key) == s.type(key), key
        assert t.execute_command("DEBUG", "DIGEST-VALUE", key) == s.execute_command("DEBUG", "DIGEST-VALUE", key)
    assert t.execute_command("CF.MEXISTS", "cw", *["a%d" % i for i in range(300)]) == [1] * 300
    assert t.execute_command("BF.MEXISTS", "bw", *["b%d" % i for i in range(300)]) == [1] * 300
    info = t.execute_command("CF.INFO", "empty")
    assert info[info.index(b"Window") + 1] == 60000

# SPDX-License-Identifier: BSD-3-Clause
"""nidus push and nidus pull against real servers with the module (tests/redis/conftest.py's Server; the
server binary is NIDUS_SERVER's, else redis-server): round trips that answer every item as the source does,
refusals, the unix socket, passwords, servers that cannot be reached or lack the module, no temporary key left
behind, temporary keys in KEY's hash slot (a cluster-mode server refuses a RENAME across slots), and windowed
files and keys both ways."""
import json
import os
import random
import time

import pytest
import redis

from cli_util import run
from server_util import answers_file, answers_key, build, keys, servers, url


@pytest.fixture
def server(tmp_path):
    s = servers.Server(tmp_path / "server")
    yield s
    s.stop()


@pytest.mark.parametrize("kind,opts,grown", [
    ("cuckoo", ("--capacity", "20000"), False),
    ("cuckoo", ("--capacity", "1000"), True),           # grows to several sub-filters
    ("cuckoo", ("--capacity", "20000", "--semi-sort", "--bucket-size", "4"), False),
    ("bloom", ("--type", "bloom", "--capacity", "20000"), False),
    ("bloom", ("--type", "bloom", "--capacity", "1000"), True),
])
def test_round_trip_answers_every_item_as_the_file(server, tmp_path, kind, opts, grown):
    seed = random.randrange(1 << 30)
    print("seed", seed)
    added = keys(15000)
    probes = added + keys(15000, "absent-%d-" % seed)
    path = build(tmp_path, "src.nf", added, *opts)
    info = run("info", path, "--json", check_rc=0).stdout
    assert (json.loads(info)["sub_filters"].__len__() > 1) == grown
    want = answers_file(path, probes)
    assert all(want[:len(added)])                      # no false negatives in the file itself
    run("push", path, "f", "--url", url(server), check_rc=0)
    c = server.client()
    assert c.type("f") == (b"nidus--CF" if kind == "cuckoo" else b"nidus--BF")
    assert answers_key(c, kind, "f", probes) == want
    assert c.dbsize() == 1                             # no temporary key left
    out = str(tmp_path / "back.nf")
    run("pull", "f", out, "--url", url(server), check_rc=0)
    assert run("verify", out, check_rc=0).stdout == out.encode() + b": ok\n"
    assert answers_file(out, probes) == want


def test_grown_cuckoo_counts_survive(server, tmp_path):
    path = build(tmp_path, "g.nf", keys(3000) + keys(3000), "--capacity", "500")
    run("push", path, "g", "--url", url(server), check_rc=0)
    c = server.client()
    assert c.execute_command("CF.COUNT", "g", "k7") >= 2
    assert c.execute_command("CF.INFO", "g")[c.execute_command("CF.INFO", "g").index(b"Number of filters") + 1] > 1
    out = str(tmp_path / "g2.nf")
    run("pull", "g", out, "--url", url(server), check_rc=0)
    assert int(run("count", out, "k7", check_rc=0).stdout) >= 2


def test_counting_bloom_is_refused(server, tmp_path):
    path = build(tmp_path, "cb.nf", keys(100), "--type", "counting-bloom", "--capacity", "1000")
    p = run("push", path, "cb", "--url", url(server), check_rc=2)
    assert p.stderr == ("nidus push: %s: a counting Bloom filter: the module holds cuckoo (CF) and Bloom (BF) "
                        "filters only\n" % path).encode()
    assert server.client().dbsize() == 0


def test_existing_key_and_file_need_force(server, tmp_path):
    a = build(tmp_path, "a.nf", keys(100, "a"), "--capacity", "1000")
    b = build(tmp_path, "b.nf", keys(100, "b"), "--capacity", "1000")
    c = server.client()
    run("push", a, "f", "--url", url(server), check_rc=0)
    p = run("push", b, "f", "--url", url(server), check_rc=2)
    assert p.stderr == ("nidus push: %s: f: already exists (--force replaces it)\n" % url(server)).encode()
    assert c.execute_command("CF.EXISTS", "f", "a1") == 1 and c.execute_command("CF.EXISTS", "f", "b1") == 0
    run("push", b, "f", "--url", url(server), "--force", check_rc=0)
    assert c.execute_command("CF.EXISTS", "f", "b1") == 1 and c.execute_command("CF.EXISTS", "f", "a1") == 0
    c.set("s", "a string")
    run("push", a, "s", "--url", url(server), check_rc=2)
    assert c.get("s") == b"a string"
    run("push", a, "s", "--url", url(server), "--force", check_rc=0)
    assert c.type("s") == b"nidus--CF"
    assert c.dbsize() == 2
    p = run("pull", "f", a, "--url", url(server), check_rc=2)
    assert p.stderr == ("nidus: %s: already exists (--force replaces it)\n" % a).encode()
    assert answers_file(a, [b"a1", b"b1"]) == [1, 0]
    run("pull", "f", a, "--url", url(server), "--force", check_rc=0)
    assert answers_file(a, [b"a1", b"b1"]) == [0, 1]


def test_pull_refuses_missing_and_other_keys(server, tmp_path):
    c = server.client()
    out = str(tmp_path / "o.nf")
    p = run("pull", "nope", out, "--url", url(server), check_rc=2)
    assert p.stderr == ("nidus pull: %s: nope: no such key\n" % url(server)).encode()
    c.set("s", "x")
    p = run("pull", "s", out, "--url", url(server), check_rc=2)
    assert p.stderr == ("nidus pull: %s: s: holds a string, not a cuckoo, Bloom or windowed filter\n" % url(server)).encode()
    assert not os.path.exists(out)


def test_unix_socket_and_database(tmp_path):
    sock = str(tmp_path / "s.sock")
    s = servers.Server(tmp_path / "server", extra=["--unixsocket", sock, "--unixsocketperm", "700"])
    try:
        path = build(tmp_path, "a.nf", keys(500), "--capacity", "1000")
        run("push", path, "f", "--url", "unix://%s?db=3" % sock, check_rc=0)
        assert s.client(db=3).type("f") == b"nidus--CF"
        assert s.client(db=0).dbsize() == 0
        out = str(tmp_path / "b.nf")
        run("pull", "f", out, "--url", "unix://%s?db=3" % sock, check_rc=0)
        assert answers_file(out, keys(500)) == [1] * 500
        p = run("pull", "f", out, "--url", "unix://%s" % sock, "--force", check_rc=2)  # db 0: not there
        assert b"f: no such key" in p.stderr
    finally:
        s.stop()


def test_password(tmp_path):
    s = servers.Server(tmp_path / "server")
    s.client().config_set("requirepass", "s3cret")  # after the start: Server's start-up check has no password
    try:
        path = build(tmp_path, "a.nf", keys(100), "--capacity", "1000")
        good = "redis://:s3cret@127.0.0.1:%d/2" % s.port
        run("push", path, "f", "--url", good, check_rc=0)
        assert s.client(password="s3cret", db=2).type("f") == b"nidus--CF"
        run("pull", "f", str(tmp_path / "b.nf"), check_rc=0, env={**os.environ, "REDIS_URL": good})
        shown = "redis://:***@127.0.0.1:%d" % s.port
        p = run("push", path, "g", "--url", "redis://:wrong@127.0.0.1:%d" % s.port, check_rc=2)
        assert p.stderr.startswith(("nidus push: %s: the server refused the password (" % shown).encode())
        assert b"wrong" not in p.stderr
        p = run("push", path, "g", "--url", "redis://default:wrong@127.0.0.1:%d" % s.port, check_rc=2)
        assert b"refused the password" in p.stderr and b"wrong" not in p.stderr
        p = run("pull", "f", str(tmp_path / "c.nf"), "--url", "redis://127.0.0.1:%d" % s.port, check_rc=2)
        assert p.stderr == ("nidus pull: redis://127.0.0.1:%d: the server needs a password "
                            "(redis://[USER]:PASSWORD@HOST...)\n" % s.port).encode()
        assert s.client(password="s3cret", db=2).dbsize() == 1
        # a user of the ACL, with its password percent-escaped in the URL
        s.client(password="s3cret").execute_command("ACL", "SETUSER", "app", "on", ">p@ss:1", "~*", "+@all")
        run("push", path, "h", "--url", "redis://app:p%%40ss%%3A1@127.0.0.1:%d/2" % s.port, check_rc=0)
        assert s.client(password="s3cret", db=2).dbsize() == 2
    finally:
        s.client(password="s3cret").config_set("requirepass", "")
        s.stop()


def test_unreachable_server_named_without_password(tmp_path):
    path = build(tmp_path, "a.nf", keys(10), "--capacity", "100")
    port = servers.free_port()
    p = run("push", path, "f", "--url", "redis://bob:hunter2@127.0.0.1:%d/1" % port, check_rc=2)
    assert p.stderr.startswith(("nidus push: redis://bob:***@127.0.0.1:%d/1: cannot connect: " % port).encode())
    assert b"hunter2" not in p.stderr and p.stderr.count(b"\n") == 1
    p = run("pull", "f", str(tmp_path / "x.nf"), check_rc=2,
            env={**os.environ, "REDIS_URL": "unix://%s/none.sock" % tmp_path})
    assert p.stderr.startswith(("nidus pull: unix://%s/none.sock: cannot connect: " % tmp_path).encode())
    p = run("push", path, "f", "--url", "http://x", check_rc=2)
    assert b"not a server URL" in p.stderr


def test_server_without_the_module(tmp_path):
    saved = servers.MODULE
    s = servers.Server.__new__(servers.Server)
    # the same server binary, no module
    s.dir = str(tmp_path / "bare")
    os.makedirs(s.dir)
    proc, port = servers.launch(lambda port: [servers.SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir",
                                              s.dir, "--save", "", "--logfile", "redis.log"],
                                os.path.join(s.dir, "redis.log"))
    try:
        path = build(tmp_path, "a.nf", keys(10), "--capacity", "100")
        for args in (("push", path, "f"), ("pull", "f", str(tmp_path / "b.nf"))):
            p = run(*args, "--url", "redis://127.0.0.1:%d" % port, check_rc=2)
            assert p.stderr == ("nidus %s: redis://127.0.0.1:%d: the server does not have the nidus module loaded "
                                "(loadmodule nidus.so)\n" % (args[0], port)).encode()
    finally:
        proc.kill()
        proc.wait()
        assert servers.MODULE == saved


def test_refused_push_leaves_no_temporary_key(tmp_path):
    s = servers.Server(tmp_path / "server", module_args=["max-filter-memory", "65536"])
    try:
        c = s.client()
        path = build(tmp_path, "big.nf", keys(200000), "--capacity", "200000")
        p = run("push", path, "f", "--url", url(s), check_rc=2)
        assert p.stderr == ("nidus push: %s: the server refused it: ERR filter would be larger than the module's "
                            "max_filter_memory\n" % path).encode()
        assert c.dbsize() == 0
        # an old key stays as it was when the new one is refused
        small = build(tmp_path, "small.nf", keys(100), "--capacity", "1000")
        run("push", small, "f", "--url", url(s), check_rc=0)
        run("push", path, "f", "--url", url(s), "--force", check_rc=2)
        assert c.keys("*") == [b"f"] and c.execute_command("CF.EXISTS", "f", "k1") == 1
    finally:
        s.stop()


def test_temporary_key_is_in_the_key_slot(tmp_path):
    s = servers.Server(tmp_path / "server", extra=["--cluster-enabled", "yes", "--cluster-config-file",
                                                   str(tmp_path / "nodes.conf")])
    try:
        c = s.client()
        c.execute_command("CLUSTER", "ADDSLOTS", *range(16384))
        deadline = time.time() + 10
        while c.execute_command("CLUSTER", "INFO").find(b"cluster_state:ok") < 0 and time.time() < deadline:
            time.sleep(0.05)
        # what the test rests on: a name with a suffix is in another slot, and RENAME refuses that
        assert c.execute_command("CLUSTER", "KEYSLOT", "plain") != c.execute_command("CLUSTER", "KEYSLOT", "plain.t")
        c.set("plain.t", "x")
        with pytest.raises(redis.exceptions.ResponseError, match="CROSSSLOT"):
            c.rename("plain.t", "plain")
        c.delete("plain.t")
        path = build(tmp_path, "a.nf", keys(100), "--capacity", "1000")
        # no tag, a tag, a '}' without a tag, an empty tag, a '{' alone, the empty key
        for key in ("plain", "{user1}:seen", "a}b", "{}x", "x{y", "}{", ""):
            run("push", path, key, "--url", url(s), check_rc=0)
            assert c.execute_command("CF.EXISTS", key, "k1") == 1, key
        assert c.dbsize() == 7
    finally:
        s.stop()


@pytest.mark.skipif(not os.environ.get("NIDUS_PUSH_PULL_TIMING"),
                    reason="timing only by hand: NIDUS_PUSH_PULL_TIMING=N (keys) prints push and pull times")
def test_timing_by_hand(server, tmp_path):
    n = int(os.environ["NIDUS_PUSH_PULL_TIMING"])
    src = tmp_path / "keys"
    with open(src, "w") as f:
        f.writelines("%d\n" % i for i in range(n))
    for kind in ("cuckoo", "bloom"):
        path = str(tmp_path / (kind + ".nf"))
        run("build", path, "--from", str(src), "--type", kind, check_rc=0)
        t = time.time()
        run("push", path, kind, "--url", url(server), check_rc=0)
        pushed = time.time() - t
        t = time.time()
        run("pull", kind, path + ".back", "--url", url(server), check_rc=0)
        pulled = time.time() - t
        print("%s %d keys, %d bytes: push %.2f s, pull %.2f s" % (kind, n, os.path.getsize(path), pushed, pulled))


@pytest.mark.parametrize("kind,reserve", [
    ("cuckoo", ["CF.RESERVE", "src", 1000, "BUCKETSIZE", 2, "EXPANSION", 2]),
    ("cuckoo", ["CF.RESERVE", "src", 100000]),
    ("bloom", ["BF.RESERVE", "src", 0.001, 1000, "EXPANSION", 4]),
    ("bloom", ["BF.RESERVE", "src", 0.01, 20000, "NONSCALING"]),
])
def test_keys_made_by_the_module_pull_and_push_back(server, tmp_path, kind, reserve):
    c = server.client()
    c.execute_command(*reserve)
    added = keys(8000)
    add = "CF.ADD" if kind == "cuckoo" else "BF.ADD"
    pipe = c.pipeline(transaction=False)
    for item in added:
        pipe.execute_command(add, "src", item)
    pipe.execute()
    probes = added + keys(8000, "absent")
    want = answers_key(c, kind, "src", probes)
    out = str(tmp_path / "src.nf")
    run("pull", "src", out, "--url", url(server), check_rc=0)
    run("verify", out, check_rc=0)
    assert answers_file(out, probes) == want
    run("push", out, "copy", "--url", url(server), check_rc=0)
    assert answers_key(c, kind, "copy", probes) == want
    assert sorted(c.keys("*")) == [b"copy", b"src"]


def test_windowed_file_round_trip(server, tmp_path):
    """A windowed file (added at the clock) pushes into a windowed CF key that answers every item as the file, and
    pulls back into a file that answers the same; a windowed key made by the module (CF or BF) pulls too, and its
    file pushes back as a windowed CF key."""
    added = keys(5000)
    probes = added + keys(5000, "absent")
    path = build(tmp_path, "w.nf", added, "--window", "1h", "--capacity", "10000")
    want = answers_file(path, probes)
    assert all(want[:len(added)])
    run("push", path, "w", "--url", url(server), check_rc=0)
    c = server.client()
    assert c.type("w") == b"nidus--CW"
    assert answers_key(c, "cuckoo", "w", probes) == want
    assert c.dbsize() == 1
    out = str(tmp_path / "back.nf")
    run("pull", "w", out, "--url", url(server), check_rc=0)
    run("verify", out, check_rc=0)
    assert json.loads(run("info", out, "--json", check_rc=0).stdout)["parameters"]["window_ms"] == 3600000
    assert answers_file(out, probes) == want
    for kind, reserve in (("cuckoo", ["CF.RESERVE", "cw", 10000, "WINDOW", 3600000]),
                          ("bloom", ["BF.RESERVE", "bw", 0.01, 10000, "WINDOW", 3600000])):
        key = reserve[1]
        c.execute_command(*reserve)
        pipe = c.pipeline(transaction=False)
        for item in added:
            pipe.execute_command("CF.ADD" if kind == "cuckoo" else "BF.ADD", key, item)
        pipe.execute()
        want = answers_key(c, kind, key, probes)
        out = str(tmp_path / (key + ".nf"))
        run("pull", key, out, "--url", url(server), check_rc=0)
        assert answers_file(out, probes) == want
        run("push", out, key + "-copy", "--url", url(server), check_rc=0)
        assert c.type(key + "-copy") == b"nidus--CW"
        assert answers_key(c, "cuckoo", key + "-copy", probes) == want

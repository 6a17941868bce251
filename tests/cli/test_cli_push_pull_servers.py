# SPDX-License-Identifier: BSD-3-Clause
"""nidus push and nidus pull against server set-ups beyond one plain server (NIDUS_SERVER's binary, else
redis-server): keys loaded from RedisBloom's data (refused by pull: no nidus file holds RedisBloom's hashing),
a three-master Redis Cluster (MOVED and ASK followed, with the same credentials, a bounded number of times),
and ACL users (one without MODULE LIST or COMMAND still finds the module; one without the filter commands is
told the ACL refuses them; one limited to a key pattern pushes under it)."""
import json
import os
import subprocess

import pytest
import redis

from cli_util import NIDUS, run
from server_util import (CLUSTER_NODE, REDISBLOOM_FIXTURES, answers_file, answers_key, build, create_cluster, keys,
                         servers, url, wait_for)


@pytest.fixture
def server(tmp_path):
    s = servers.Server(tmp_path / "server")
    yield s
    s.stop()


# ---- keys loaded from RedisBloom's data ----

with open(os.path.join(REDISBLOOM_FIXTURES, "expected.json")) as _f:
    _EXPECTED = json.load(_f)["keys"]


def redisbloom_items(key):
    e = _EXPECTED[key]
    return [("%s%d" % (e["prefix"], i)).encode() for i in range(e["n"])]


@pytest.mark.parametrize("key,kind,name", [("cf_b4", "cuckoo", "cuckoo filter"), ("cf_b1", "cuckoo", "cuckoo filter"),
                                           ("bf_scale", "bloom", "Bloom filter"), ("bf_v0", "bloom", "Bloom filter")])
def test_pull_of_a_redisbloom_key_is_refused_in_one_line(server, tmp_path, key, kind, name):
    c = server.client()
    with open(os.path.join(REDISBLOOM_FIXTURES, "dump", key + ".bin"), "rb") as f:
        c.restore(key, 0, f.read())
    assert c.type(key) == (b"MBbloomCF" if kind == "cuckoo" else b"MBbloom--")
    items = redisbloom_items(key)
    # the key answers as RedisBloom did: what no nidus file could repeat without RedisBloom's hashing
    assert "".join(map(str, answers_key(c, kind, key, items))) == _EXPECTED[key]["exists"]
    out = str(tmp_path / "rb.nf")
    want = ("nidus pull: %s: %s: a %s loaded from RedisBloom's data: a nidus file cannot hold it (RedisBloom's "
            "hashing); build the file from the items instead\n" % (url(server), key, name)).encode()
    p = run("pull", key, out, "--url", url(server), check_rc=2)
    assert p.stderr == want and p.stdout == b""
    assert not os.path.exists(out)
    # --force over an existing file: refused the same way, the file as it was
    old = build(tmp_path, "old.nf", keys(10), "--capacity", "100")
    before = open(old, "rb").read()
    assert run("pull", key, old, "--url", url(server), "--force", check_rc=2).stderr == want
    assert open(old, "rb").read() == before
    # push needs --force to replace such a key, and then the key is the file's
    run("push", old, key, "--url", url(server), check_rc=2)
    run("push", old, key, "--url", url(server), "--force", check_rc=0)
    assert c.type(key) == b"nidus--CF" and answers_key(c, "cuckoo", key, keys(10)) == [1] * 10


# ---- Redis Cluster ----

@pytest.fixture
def cluster(make_server):
    """Three masters with the module."""
    return create_cluster([make_server("node%d" % i, extra=CLUSTER_NODE) for i in range(3)])


@pytest.fixture
def make_server(tmp_path):
    made = []

    def make(name, extra=()):
        s = servers.Server(tmp_path / name, extra)
        made.append(s)
        return s

    yield make
    for s in made:
        s.kill()


def slot_of(node, key):
    return node.client().execute_command("CLUSTER", "KEYSLOT", key)


def owner(nodes, key, view=None):
    """The node serving key's slot, as view (else the first node) sees it."""
    view = view or nodes[0]
    slot = slot_of(view, key)
    for first, last, master, *_ in view.client().execute_command("CLUSTER", "SLOTS"):
        if first <= slot <= last:
            return next(n for n in nodes if n.port == master[1])
    raise AssertionError("slot %d not served" % slot)


def key_on(nodes, node, prefix):
    """A key name starting with prefix whose slot node serves."""
    return next(k for k in ("%s%d" % (prefix, i) for i in range(1000)) if owner(nodes, k) is node)


def total_keys(nodes):
    return sum(n.client().dbsize() for n in nodes)


def test_cluster_push_and_pull_follow_moved_to_every_node(cluster, tmp_path):
    entry = cluster[0]  # every URL names this node; two thirds of the keys live elsewhere
    items, absent = keys(3000), keys(3000, "absent")
    files = {"cuckoo": build(tmp_path, "c.nf", items, "--capacity", "1000"),  # grown: several sub-filters
             "bloom": build(tmp_path, "b.nf", items, "--type", "bloom", "--capacity", "5000")}
    pushed = []
    for node in cluster:
        for kind, path in files.items():
            for key in (key_on(cluster, node, kind + ":"), "{%s}:%s" % (key_on(cluster, node, "user"), kind)):
                run("push", path, key, "--url", url(entry), check_rc=0)
                assert owner(cluster, key).client().type(key) == (b"nidus--CF" if kind == "cuckoo" else b"nidus--BF")
                assert answers_key(owner(cluster, key).client(), kind, key, items + absent) == \
                    answers_file(path, items + absent)
                out = str(tmp_path / ("back-%d.nf" % len(pushed)))
                run("pull", key, out, "--url", url(entry), check_rc=0)
                run("verify", out, check_rc=0)
                assert answers_file(out, items + absent) == answers_file(path, items + absent)
                pushed.append(key)
    assert total_keys(cluster) == len(pushed)  # no temporary key left on any node
    # an existing key is refused on the node that holds it, named as that node
    key = key_on(cluster, cluster[2], "cuckoo:")
    p = run("push", files["cuckoo"], key, "--url", url(entry), check_rc=2)
    assert p.stderr == ("nidus push: %s: %s: already exists (--force replaces it)\n" % (url(cluster[2]), key)).encode()


def test_cluster_redirects_keep_the_credentials(cluster, tmp_path):
    for n in cluster:
        n.client().execute_command("ACL", "SETUSER", "app", "on", ">s3cret", "~*", "+@all")
    cluster[0].client().execute_command("ACL", "SETUSER", "solo", "on", ">only-here", "~*", "+@all")
    path = build(tmp_path, "a.nf", keys(200), "--capacity", "1000")
    key = key_on(cluster, cluster[1], "k")
    run("push", path, key, "--url", "redis://app:s3cret@127.0.0.1:%d" % cluster[0].port, check_rc=0)
    run("pull", key, str(tmp_path / "b.nf"), "--url", "redis://app:s3cret@127.0.0.1:%d" % cluster[2].port,
        check_rc=0)
    assert answers_file(str(tmp_path / "b.nf"), keys(200)) == [1] * 200
    # a user the node redirected to does not know: refused there, named as that node, the password hidden
    p = run("pull", key, str(tmp_path / "c.nf"), "--url", "redis://solo:only-here@127.0.0.1:%d" % cluster[0].port,
            check_rc=2)
    assert p.stderr.startswith(("nidus pull: redis://solo:***@127.0.0.1:%d: the server refused the password ("
                                % cluster[1].port).encode())
    assert b"only-here" not in p.stderr and p.stderr.count(b"\n") == 1


def test_cluster_slot_moved_during_a_push_starts_it_again_on_the_new_node(cluster, tmp_path):
    """src (the URL's node) answers TYPE, then holds the chunks (CLIENT PAUSE WRITE) while the empty slot is given
    to dst: the chunks are answered MOVED when the pause ends, and the push starts again on dst."""
    src, dst = cluster[1], cluster[2]
    key = key_on(cluster, src, "moving")
    slot = slot_of(src, key)
    items = keys(20000)
    path = build(tmp_path, "a.nf", items, "--capacity", "20000")
    src.client().execute_command("CLIENT", "PAUSE", 10000, "WRITE")
    push = subprocess.Popen([NIDUS, "push", path, key, "--url", url(src)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: any(b"cmd=cf.loadchunk" in line or b"cmd=pexpire" in line
                                    for line in src.client().execute_command("CLIENT", "LIST").split(b"\n")), 10)
        # dst takes the slot with a new config epoch (it was importing it), which src learns over the cluster
        # bus (a SETSLOT sent to src could wait for the pause: Valkey replicates it)
        dst.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src.client().cluster("myid"))
        dst.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst.client().cluster("myid"))
        assert wait_for(lambda: owner([src, dst], key, view=src) is dst)
        src.client().execute_command("CLIENT", "UNPAUSE")
        out, err = push.communicate(timeout=60)
    finally:
        if push.poll() is None:
            push.kill()
    assert push.returncode == 0, err
    assert owner(cluster, key) is dst
    assert answers_key(dst.client(), "cuckoo", key, items) == [1] * len(items)
    assert total_keys(cluster) == 1  # no temporary key on either node


def migrate(src, dst, slot):
    """Marks slot as moving from src to dst (not finished)."""
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src.client().cluster("myid"))
    src.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.client().cluster("myid"))


def asking(node, *command):
    pipe = node.client().pipeline(transaction=False)  # one connection: ASKING holds for the next command
    pipe.execute_command("ASKING")
    pipe.execute_command(*command)
    return pipe.execute()[1]


def test_cluster_ask_during_a_slot_migration(cluster, tmp_path):
    entry = cluster[0]
    src, dst = cluster[1], cluster[2]
    tag = key_on(cluster, src, "mig")
    new, old = "{%s}new" % tag, "{%s}old" % tag
    slot = slot_of(entry, new)
    a = build(tmp_path, "a.nf", keys(500, "a"), "--capacity", "1000")
    b = build(tmp_path, "b.nf", keys(500, "b"), "--capacity", "1000")
    run("push", a, old, "--url", url(entry), check_rc=0)  # on src before the migration

    def in_slot():
        return [n.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) for n in (src, dst)]

    migrate(src, dst, slot)
    refusal = "nidus push: %s: %s: its slot is migrating to 127.0.0.1:%d, where the push's rename cannot run " \
              "until the migration is done; try again then\n"
    # a new key: src sends it to dst (ASK), where a rename onto a missing key is TRYAGAIN until the slot moves
    p = run("push", a, new, "--url", url(entry), check_rc=2)
    assert p.stderr == (refusal % (url(dst), new, dst.port)).encode()
    # a key still on src: its temporary key would be born on dst
    p = run("push", b, old, "--url", url(entry), "--force", check_rc=2)
    assert p.stderr == (refusal % (url(src), old, dst.port)).encode()
    assert in_slot() == [1, 0]  # nothing left behind
    run("pull", old, str(tmp_path / "1.nf"), "--url", url(entry), check_rc=0)  # MOVED to src, which has it
    assert answers_file(str(tmp_path / "1.nf"), keys(500, "a")) == [1] * 500
    # moved to dst: pulled through ASK, and replaced there (both keys of the rename on dst)
    src.client().execute_command("MIGRATE", "127.0.0.1", dst.port, old, 0, 5000)
    assert in_slot() == [0, 1]
    run("pull", old, str(tmp_path / "2.nf"), "--url", url(entry), check_rc=0)
    assert answers_file(str(tmp_path / "2.nf"), keys(500, "a")) == [1] * 500
    run("push", b, old, "--url", url(entry), "--force", check_rc=0)
    assert asking(dst, "CF.EXISTS", old, "b7") == 1 and asking(dst, "CF.EXISTS", old, "a7") == 0
    assert in_slot() == [0, 1]
    # dst forgets the import while src still migrates: src says ASK, dst says MOVED back, without end
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
    for args in (("push", a, new), ("pull", old, str(tmp_path / "x.nf"))):
        p = run(*args, "--url", url(entry), check_rc=2)
        line = p.stderr.decode()
        assert line.startswith("nidus %s: redis://127.0.0.1:" % args[0]) and line.count("\n") == 1, line
        last = "(ASK %d 127.0.0.1:%d)" % (slot, dst.port), "(MOVED %d 127.0.0.1:%d)" % (slot, src.port)
        assert any(line.endswith(": still redirected after 5 redirects %s: the cluster's nodes disagree about the "
                                 "slot; try again\n" % x) for x in last), line
    assert not os.path.exists(str(tmp_path / "x.nf"))
    # counted where dst imports the slot again: Redis 8.6 counts no key of a slot its node neither owns nor
    # imports (COUNTKEYSINSLOT answers 0 there), where Redis 7 and Valkey count what the node holds
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src.client().cluster("myid"))
    assert in_slot() == [0, 1]


# ---- ACL users ----

def acl_user(port, name, *rules):
    """The URL of a new ACL user of the server on port, with the rules given."""
    redis.Redis(port=port).execute_command("ACL", "SETUSER", name, "reset", "on", ">pw-" + name, "~*", "&*", *rules)
    return "redis://%s:pw-%s@127.0.0.1:%d" % (name, name, port)


@pytest.mark.parametrize("rules", [("+@all", "-module"), ("+@all", "-module", "-command")])
def test_acl_user_without_module_list_pushes_and_pulls(server, tmp_path, rules):
    user = acl_user(server.port, "ops", *rules)
    for kind, opts in (("cuckoo", ()), ("bloom", ("--type", "bloom"))):
        path = build(tmp_path, kind + ".nf", keys(1000), "--capacity", "2000", *opts)
        run("push", path, kind, "--url", user, check_rc=0)
        out = str(tmp_path / (kind + ".back.nf"))
        run("pull", kind, out, "--url", user, check_rc=0)
        assert answers_file(out, keys(1000) + keys(1000, "x")) == answers_file(path, keys(1000) + keys(1000, "x"))
    assert server.client().dbsize() == 2


def test_acl_user_with_a_key_pattern_pushes_and_pulls(server, tmp_path):
    """The temporary key starts with KEY, so the pattern that allows KEY allows it too."""
    user = acl_user(server.port, "app", "resetkeys", "~app:*", "+@all")
    path = build(tmp_path, "a.nf", keys(300), "--capacity", "1000")
    for key in ("app:plain", "app:{user1}:seen", "app:a}b", "app:"):
        run("push", path, key, "--url", user, check_rc=0)
        run("push", path, key, "--url", user, "--force", check_rc=0)
        out = str(tmp_path / "back.nf")
        run("pull", key, out, "--url", user, "--force", check_rc=0)
        assert answers_file(out, keys(300)) == [1] * 300
    assert sorted(server.client().keys("*")) == [b"app:", b"app:a}b", b"app:plain", b"app:{user1}:seen"]
    p = run("push", path, "other", "--url", user, check_rc=2)
    line = p.stderr.decode()
    assert line.startswith("nidus push: redis://app:***@127.0.0.1:%d: the server's ACL does not let this user run "
                           "TYPE (NOPERM " % server.port) and line.count("\n") == 1, line


@pytest.mark.parametrize("rules", [("+@all",), ("+@all", "-module", "-command")])
def test_acl_user_without_the_filter_commands_is_told_so(server, tmp_path, rules):
    user = acl_user(server.port, "app", *rules, "-cf.loadchunk", "-cf.scandump", "-bf.loadchunk", "-bf.scandump")
    shown = "redis://app:***@127.0.0.1:%d" % server.port
    c = server.client()
    for kind, opts, prefix in (("cuckoo", (), "CF"), ("bloom", ("--type", "bloom"), "BF")):
        path = build(tmp_path, kind + ".nf", keys(100), "--capacity", "1000", *opts)
        for args, command in ((("push", path, kind), "LOADCHUNK"), (("pull", "ready-" + kind, path + ".back"),
                                                                     "SCANDUMP")):
            if args[0] == "pull":
                run("push", path, "ready-" + kind, "--url", url(server), check_rc=0)  # as the default user
            p = run(*args, "--url", user, check_rc=2)
            line = p.stderr.decode()
            assert line.startswith("nidus %s: %s: the server's ACL does not let this user run %s.%s (NOPERM "
                                   % (args[0], shown, prefix, command)), line
            assert line.endswith(")\n") and line.count("\n") == 1 and "pw-app" not in line, line
            assert "module" not in line, line
        assert not os.path.exists(path + ".back")
    assert sorted(c.keys("*")) == [b"ready-bloom", b"ready-cuckoo"]  # no temporary key left


def test_acl_user_on_a_server_without_the_module(tmp_path):
    """Only an unknown command says the module is missing, also when MODULE LIST and COMMAND are refused."""
    d = str(tmp_path / "bare")
    os.makedirs(d)
    proc, port = servers.launch(lambda port: [servers.SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", d,
                                              "--save", "", "--logfile", "redis.log"], os.path.join(d, "redis.log"))
    try:
        user = acl_user(port, "ops", "+@all", "-module", "-command")
        path = build(tmp_path, "a.nf", keys(10), "--capacity", "100")
        p = run("push", path, "f", "--url", user, check_rc=2)
        assert p.stderr == ("nidus push: redis://ops:***@127.0.0.1:%d: the server does not have the nidus module "
                            "loaded (loadmodule nidus.so)\n" % port).encode()
    finally:
        proc.kill()
        proc.wait()

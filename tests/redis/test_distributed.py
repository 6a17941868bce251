# SPDX-License-Identifier: BSD-3-Clause
"""Replication and Redis Cluster: the engine's own machinery carries our writes."""
import subprocess

import redis
from redis.cluster import RedisCluster

from conftest import wait_for
from resp import Raw, scandump
from test_compaction import wait_compacted

KEYS = ["k%d" % i for i in range(2000)]


def test_replica_ends_identical(make_server):
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0"))
    m = Raw(master.port)
    # data before the replica attaches travels in the RDB; data after it, as commands
    m("CF.RESERVE", "cf", 300, "EXPANSION", 2)
    m("CF.INSERT", "cf", "ITEMS", *KEYS[:1000])
    m("BF.MADD", "bf", *KEYS[:1000])
    replica = make_server("replica")
    r = Raw(replica.port)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    assert wait_for(lambda: replica.client().info("replication").get("master_link_status") == "up")
    m("CF.INSERT", "cf", "ITEMS", *KEYS[1000:])
    m("CF.DEL", "cf", "k5")
    m("CF.COMPACT", "cf")
    m("BF.MADD", "bf", *KEYS[1000:])
    m("CF.RESERVE", "other", 1000)
    m("CF.ADDNX", "other", "x")
    # a filter moved in by SCANDUMP / LOADCHUNK on the master reaches the replica too
    for it, data in scandump(m, "CF", "cf"):
        assert m("CF.LOADCHUNK", "loaded", it, data) == "OK"
    # CF.COMPACT returns with the work going on in steps on the master's timer, each replicated as it is taken:
    # the two are compared once the master has taken its last step and the replica has it
    for key in ("cf", "other", "loaded"):
        wait_compacted(m, key)
    assert m("WAIT", 1, 5000) == 1
    for key in ("cf", "bf", "other", "loaded"):
        kind = "BF" if key == "bf" else "CF"
        assert r(kind + ".INFO", key) == m(kind + ".INFO", key), key
    assert r("CF.MEXISTS", "loaded", *KEYS) == m("CF.MEXISTS", "cf", *KEYS)
    assert r("BF.MEXISTS", "bf", *KEYS) == [1] * len(KEYS)
    assert r("DEBUG", "DIGEST") == m("DEBUG", "DIGEST")


def test_three_node_cluster_spreads_filters_and_migrates_a_slot(make_server):
    nodes = [make_server("node%d" % i, extra=("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                               "--cluster-node-timeout", "2000")) for i in range(3)]
    addrs = ["127.0.0.1:%d" % n.port for n in nodes]
    subprocess.run(["redis-cli", "--cluster", "create", *addrs, "--cluster-yes"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    assert wait_for(lambda: all(n.client().cluster("info")["cluster_state"] == "ok" for n in nodes))
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    names = ["filter:%d" % i for i in range(60)]
    for i, name in enumerate(names):
        if i % 2:
            assert rc.execute_command("CF.ADD", name, "item-%d" % i) == 1
        else:
            assert rc.execute_command("BF.ADD", name, "item-%d" % i) == 1
    for i, name in enumerate(names):
        assert rc.execute_command("CF.EXISTS" if i % 2 else "BF.EXISTS", name, "item-%d" % i) == 1
    # every node holds some of them
    assert all(n.client().dbsize() > 0 for n in nodes)

    # migrate the slot of one filter to another node with MIGRATE
    name = names[1]
    slot = rc.keyslot(name)
    src = next(n for n in nodes if n.client().cluster("countkeysinslot", slot) > 0)
    dst = next(n for n in nodes if n is not src)
    src_id = src.client().cluster("myid")
    dst_id = dst.client().cluster("myid")
    s, d = src.client(), dst.client()
    d.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    s.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    for key in s.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100):
        s.execute_command("MIGRATE", "127.0.0.1", dst.port, key, 0, 5000)
    for n in nodes:
        n.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    assert d.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) >= 1
    assert s.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
    rc2 = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    assert rc2.execute_command("CF.EXISTS", name, "item-1") == 1
    assert rc2.execute_command("CF.ADD", name, "after-move") == 1
    assert rc2.execute_command("CF.COUNT", name, "after-move") == 1

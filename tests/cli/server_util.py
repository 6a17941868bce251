# SPDX-License-Identifier: BSD-3-Clause
"""Shared by the push, pull and copy tests: tests/redis/conftest.py's servers (the binary is NIDUS_SERVER's, else
redis-server), URLs, item lists, and what a file and a key answer for them."""
import importlib.util
import os
import subprocess
import sys

from cli_util import run

_HERE = os.path.dirname(os.path.abspath(__file__))
_REDIS_TESTS = os.path.join(_HERE, "..", "redis")
_spec = importlib.util.spec_from_file_location("redis_servers", os.path.join(_REDIS_TESTS, "conftest.py"))
sys.path.insert(0, _REDIS_TESTS)  # conftest imports resp.py beside it
servers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(servers)
REDISBLOOM_FIXTURES = os.path.join(_REDIS_TESTS, "fixtures", "redisbloom")


def url(s, db=None):
    return "redis://127.0.0.1:%d%s" % (s.port, "" if db is None else "/%d" % db)


def keys(n, prefix="k"):
    return [("%s%d" % (prefix, i)).encode() for i in range(n)]


def answers_file(path, items):
    out = run("check", path, input=b"\n".join(items) + b"\n", check_rc=0).stdout.split()
    return [int(x) for x in out]


def answers_key(client, kind, key, items):
    cmd = "CF.EXISTS" if kind == "cuckoo" else "BF.EXISTS"
    pipe = client.pipeline(transaction=False)
    for item in items:
        pipe.execute_command(cmd, key, item)
    return [int(x) for x in pipe.execute()]


def build(tmp_path, name, items, *opts):
    path = str(tmp_path / name)
    run("build", path, "--from", "-", *opts, input=b"\n".join(items) + b"\n", check_rc=0)
    return path


wait_for = servers.wait_for  # True once predicate() is, False if not within timeout seconds


# The options that make a server a cluster node (create_cluster joins three of them).
CLUSTER_NODE = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")


def create_cluster(nodes):
    """Three masters with the module, slots split by redis-cli --cluster create (as tests/redis's cluster test
    makes them); returns nodes once every one says the cluster is ok."""
    subprocess.run(["redis-cli", "--cluster", "create", *["127.0.0.1:%d" % n.port for n in nodes],
                    "--cluster-yes"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    assert wait_for(lambda: all(n.client().cluster("info")["cluster_state"] == "ok" for n in nodes))
    return nodes

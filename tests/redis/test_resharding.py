# SPDX-License-Identifier: BSD-3-Clause
"""Resharding a three-master cluster whose moving slots hold filters of every kind (grown cuckoo, scaled Bloom, a
merge with sibling sub-filters, RedisBloom's format restored from its DUMP payloads, a key of each format
mid-LOADCHUNK) while a client writes to those slots throughout: Valkey 9's atomic slot migration (CLUSTER
MIGRATESLOTS), a cancelled one (CLUSTER CANCELSLOTMIGRATIONS), and classic resharding (SETSLOT IMPORTING /
MIGRATING, MIGRATE key by key, SETSLOT NODE, as valkey-cli and redis-cli --cluster reshard do). Afterwards every
acknowledged write answers on the slots' owner, untouched keys' DEBUG DIGEST-VALUE is the same, and the node
that gave the slots up holds none of their keys."""
import subprocess
import threading
import time

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import SERVER_KIND, SERVER_LABEL, SERVER_VERSION, config_name, wait_for
from rb_fixtures import Fixtures, scandump

RB = Fixtures()  # RedisBloom's own data (fixtures/redisbloom)
ATOMIC = SERVER_KIND == "valkey" and SERVER_VERSION >= (9, 0, 0)
needs_atomic = pytest.mark.skipif(not ATOMIC, reason="CLUSTER MIGRATESLOTS is Valkey 9.0's atomic slot migration; "
                                  "this server is " + SERVER_LABEL)


def items(prefix, n):
    return ["%s%d" % (prefix, i) for i in range(n)]


def filters(c, key):
    reply = c.execute_command("CF.INFO", key)
    return dict(zip(reply[::2], reply[1::2]))[b"Number of filters"]


@pytest.fixture
def cluster(make_server):
    nodes = [make_server("node%d" % i, extra=("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                               "--cluster-node-timeout", "5000")) for i in range(3)]
    subprocess.run(["redis-cli", "--cluster", "create", *["127.0.0.1:%d" % n.port for n in nodes],
                    "--cluster-yes"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    assert wait_for(lambda: all(n.client().cluster("info")["cluster_state"] == "ok" for n in nodes)), "cluster ok"
    return nodes


def owner(node, slot):
    """The port of the node that `node` believes serves `slot`."""
    for start, end, primary, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return primary[1]
    return None


class Slots:
    """Two hash tags whose slots the first node serves, and the keys filled into them."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.src, self.dst = nodes[0], nodes[1]
        c = self.src.client()
        self.tags, self.slots = [], []
        for i in range(10000):
            slot = c.execute_command("CLUSTER", "KEYSLOT", "{t%d}" % i)
            if owner(self.src, slot) == self.src.port and slot not in self.slots:
                self.tags.append("t%d" % i)
                self.slots.append(slot)
                if len(self.tags) == 2:
                    break
        self.untouched = []  # keys no client writes to during the move
        self.halves = {}  # key: (kind, chunks still to send)
        self.sets = {}  # key: (kind, items that answer 1)

    def fill(self):
        c = self.src.client()
        for tag in self.tags:
            def k(name, tag=tag):
                return "{%s}%s" % (tag, name)
            c.execute_command("CF.RESERVE", k("cf_grown"), 200, "EXPANSION", 2)
            c.execute_command("CF.INSERT", k("cf_grown"), "ITEMS", *items("g", 2000))
            c.execute_command("BF.RESERVE", k("bf_scaled"), "0.01", 100)
            c.execute_command("BF.MADD", k("bf_scaled"), *items("b", 1500))
            for name, prefix in (("m1", "x"), ("m2", "y")):
                c.execute_command("CF.RESERVE", k(name), 200, "EXPANSION", 2)
                c.execute_command("CF.INSERT", k(name), "ITEMS", *items(prefix, 1500))
            assert c.execute_command("CF.MERGE", k("cf_merged"), 2, k("m1"), k("m2")) == b"OK"
            assert filters(c, k("cf_merged")) > max(filters(c, k("m1")), filters(c, k("m2")))  # with siblings
            for name in ("cf_b1", "bf_scale"):
                assert c.restore(k("rb_" + name), 0, RB.payload(name)) == b"OK"
            # mid-LOADCHUNK: a copy of ours and one of RedisBloom's, each given its first chunks only
            ours = scandump(c, "CF", k("cf_grown"))
            theirs = RB.read_chunks("cf_b1")
            assert len(ours) >= 2 and len(theirs) >= 3
            for key, chunks, sent in ((k("cf_half"), ours, 1), (k("rb_half"), theirs, 2)):
                for it, data in chunks[:sent]:
                    assert c.execute_command("CF.LOADCHUNK", key, it, data) == b"OK"
                self.halves[key] = ("CF", chunks[sent:])
            self.sets[k("cf_grown")] = ("CF", items("g", 2000))
            self.sets[k("bf_scaled")] = ("BF", items("b", 1500))
            self.sets[k("cf_merged")] = ("CF", items("x", 1500) + items("y", 1500))
            self.untouched += [k(n) for n in ("bf_scaled", "m1", "m2", "cf_merged", "rb_cf_b1", "rb_bf_scale",
                                              "cf_half", "rb_half")]
        self.digests = self.digest(self.src)

    def digest(self, node):
        return dict(zip(self.untouched, node.client().execute_command("DEBUG", "DIGEST-VALUE", *self.untouched)))

    def written(self):
        """The keys the writer writes: a grown key that exists, and one each kind that the writes create."""
        return [("CF", "{%s}cf_grown" % t) for t in self.tags] + [("CF", "{%s}cf_new" % t) for t in self.tags] + \
            [("BF", "{%s}bf_new" % t) for t in self.tags]


class Writer(threading.Thread):
    """Adds items to the moving slots' keys through a cluster client until stopped; keeps each acknowledged one."""

    def __init__(self, node, targets):
        super().__init__(daemon=True)
        self.rc = RedisCluster(host="127.0.0.1", port=node.port)
        self.targets = targets
        self.stop_event = threading.Event()
        self.acked = []
        self.errors = []

    def run(self):
        i = 0
        while not self.stop_event.is_set():
            kind, key = self.targets[i % len(self.targets)]
            item = "w%d" % i
            i += 1
            try:
                self.rc.execute_command(kind + ".ADD", key, item)
                self.acked.append((kind, key, item))
            except redis.exceptions.RedisError as e:  # not acknowledged: may or may not have landed
                self.errors.append(repr(e))
            time.sleep(0.001)

    def acked_so_far(self):
        return len(self.acked)

    def stop(self):
        self.stop_event.set()
        self.join(30)
        assert not self.is_alive()


def assert_answers(node, slots, writer):
    """Every acknowledged write and every item added before answers on `node`; the untouched keys are unchanged;
    the halves complete with their remaining chunks there and answer as the key they copy."""
    c = node.client()
    pipe = c.pipeline(transaction=False)
    for kind, key, item in writer.acked:
        pipe.execute_command(kind + ".EXISTS", key, item)
    missing = [a for a, r in zip(writer.acked, pipe.execute()) if r != 1]
    assert missing == [], "%d of %d acknowledged writes missing, e.g. %s" % (len(missing), len(writer.acked),
                                                                             missing[:5])
    for key, (kind, its) in slots.sets.items():
        assert c.execute_command(kind + ".MEXISTS", key, *its) == [1] * len(its), key
    assert slots.digest(node) == slots.digests
    for key, (kind, chunks) in slots.halves.items():
        for it, data in chunks:
            assert c.execute_command(kind + ".LOADCHUNK", key, it, data) == b"OK", key
    for tag in slots.tags:
        half = "{%s}cf_half" % tag
        assert c.execute_command("CF.MEXISTS", half, *items("g", 2000)) == [1] * 2000
        assert c.execute_command("CF.INFO", "{%s}rb_half" % tag)[1] == c.execute_command(
            "CF.INFO", "{%s}rb_cf_b1" % tag)[1]  # the size: RedisBloom's whole filter


def migrations(node):
    """CLUSTER GETSLOTMIGRATIONS as a list of {field: value}."""
    out = []
    for entry in node.client().execute_command("CLUSTER", "GETSLOTMIGRATIONS"):
        fields = dict(zip(entry[::2], entry[1::2])) if isinstance(entry, list) else entry
        out.append({k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
                    for k, v in fields.items()})
    return out


def finished(node):
    jobs = migrations(node)
    return jobs and all(j["state"] in ("success", "failed", "cancelled") for j in jobs)


def filled_and_writing(cluster, save_delay_us=0):
    """The slots filled on the first node, whose snapshots then take save_delay_us a key (rdb-key-save-delay),
    and a writer on the third node that has had 200 writes acknowledged."""
    slots = Slots(cluster)
    slots.fill()
    slots.src.client().config_set("rdb-key-save-delay", save_delay_us)
    writer = Writer(slots.nodes[2], slots.written())
    writer.start()
    assert wait_for(lambda: writer.acked_so_far() >= 200), "writes before the move"
    return slots, writer


def migrate_slots(src, dst, slot_list, outcome, cancel_after):
    """CLUSTER MIGRATESLOTS of slot_list from src to dst, cancelled after `cancel_after` seconds unless None;
    waits for the job to end in `outcome` ("success", "cancelled")."""
    ranges = [x for s in slot_list for x in (s, s)]
    dst_id = dst.client().execute_command("CLUSTER", "MYID")
    assert src.client().execute_command("CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", *ranges, "NODE", dst_id) == b"OK"
    if cancel_after is not None:
        time.sleep(cancel_after)
        assert src.client().execute_command("CLUSTER", "CANCELSLOTMIGRATIONS") == b"OK"
    assert wait_for(lambda: finished(src), 120), "the migration to end"
    assert [j["state"] for j in migrations(src)] == [outcome], migrations(src)


@needs_atomic
def test_migrateslots_moves_every_kind_of_key_under_writes(cluster):
    # the snapshot (in a child process) takes a while, so that writes go on during it and after it
    slots, writer = filled_and_writing(cluster, 20000)
    src, dst = slots.src, slots.dst
    before = writer.acked_so_far()
    migrate_slots(src, dst, slots.slots, "success", cancel_after=None)
    during = writer.acked_so_far() - before
    assert wait_for(lambda: all(owner(n, s) == dst.port for n in cluster for s in slots.slots)), "the new owner"
    assert wait_for(lambda: writer.acked_so_far() >= before + during + 200), "writes after the move"
    writer.stop()
    print("%d writes acknowledged (%d during the migration), %d refused or redirected past retry: %s" %
          (len(writer.acked), during, len(writer.errors), sorted(set(writer.errors))[:3]))
    assert during > 0
    assert wait_for(lambda: src.client().dbsize() == 0), "the source's keys to go"
    assert_answers(dst, slots, writer)


@needs_atomic
def test_migrateslots_target_takes_keys_beyond_its_max_filter_memory(cluster):
    """The migration's snapshot arrives as LOADCHUNK commands: the target takes every key the source holds, as a
    replica takes its master's, whatever its own max-filter-memory (which still holds for what clients send)."""
    slots = Slots(cluster)
    src, dst = slots.src, slots.dst
    c = src.client()
    big, rb = "{%s}big" % slots.tags[0], "{%s}rb" % slots.tags[0]
    c.execute_command("CF.RESERVE", big, 1000, "EXPANSION", 2)
    c.execute_command("CF.INSERT", big, "ITEMS", *items("i", 20000))
    assert c.restore(rb, 0, RB.payload("cf_b4")) == b"OK"
    assert c.memory_usage(big) > 16384 and c.memory_usage(rb) > 4096
    digests = c.execute_command("DEBUG", "DIGEST-VALUE", big, rb)
    dst.client().config_set(config_name("max-filter-memory"), 4096)
    mine = next("{d%d}copy" % i for i in range(10000)
                if owner(dst, c.execute_command("CLUSTER", "KEYSLOT", "{d%d}" % i)) == dst.port)
    with pytest.raises(redis.exceptions.ResponseError, match="max_filter_memory"):
        for it, data in scandump(c, "CF", big):
            dst.client().execute_command("CF.LOADCHUNK", mine, it, data)
    migrate_slots(src, dst, slots.slots[:1], "success", cancel_after=None)
    assert dst.client().execute_command("DEBUG", "DIGEST-VALUE", big, rb) == digests
    assert dst.client().execute_command("CF.MEXISTS", big, *items("i", 20000)) == [1] * 20000


@needs_atomic
def test_cancelled_migrateslots_leaves_the_source_whole(cluster):
    # a slow snapshot (0.3 s a key, ~30 keys), cancelled while it runs
    slots, writer = filled_and_writing(cluster, 300000)
    src, dst = slots.src, slots.dst
    migrate_slots(src, dst, slots.slots, "cancelled", cancel_after=1.5)
    src.client().config_set("rdb-key-save-delay", 0)
    acked = writer.acked_so_far()
    assert wait_for(lambda: writer.acked_so_far() >= acked + 200), "writes after the cancellation"
    writer.stop()
    assert all(owner(n, s) == src.port for n in cluster for s in slots.slots)
    assert wait_for(lambda: dst.client().dbsize() == 0), "the target to drop what it had imported"
    assert_answers(src, slots, writer)


def test_classic_resharding_moves_every_kind_of_key_under_writes(cluster):
    """SETSLOT IMPORTING / MIGRATING, MIGRATE of ten keys at a time (GETKEYSINSLOT), SETSLOT NODE on every node:
    valkey-cli / redis-cli --cluster reshard's steps. Writes meanwhile follow ASK to the target for moved keys."""
    slots, writer = filled_and_writing(cluster)
    src, dst = slots.src, slots.dst
    s, d = src.client(), dst.client()
    src_id, dst_id = s.execute_command("CLUSTER", "MYID"), d.execute_command("CLUSTER", "MYID")
    for slot in slots.slots:
        d.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
        s.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
        while True:
            keys = s.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10)
            if not keys:
                break
            assert s.execute_command("MIGRATE", "127.0.0.1", dst.port, "", 0, 10000, "KEYS", *keys) == b"OK"
            time.sleep(0.05)  # writes go on between the batches
        for node in (dst, src, *[n for n in cluster if n not in (src, dst)]):
            node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    assert wait_for(lambda: all(owner(n, sl) == dst.port for n in cluster for sl in slots.slots)), "the new owner"
    acked = writer.acked_so_far()
    assert wait_for(lambda: writer.acked_so_far() >= acked + 200), "writes after the move"
    writer.stop()
    assert src.client().dbsize() == 0
    assert_answers(dst, slots, writer)

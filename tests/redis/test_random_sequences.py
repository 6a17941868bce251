# SPDX-License-Identifier: BSD-3-Clause
"""Random CF/BF command sequences against a model of what the server acknowledged; after every batch the
dataset goes through DEBUG RELOAD, DUMP/RESTORE of every key, a restart from the AOF and a restart from an RDB
copy, and every acknowledged item must still be there (and the server alive). Some keys are windowed: most with
windows far longer than the run (items behave as a plain key's), and keys sw0-sw2 with windows of 1.5 to 4 s,
whose items must answer present until W after the add was sent (the server's add came no earlier), while the
master's timer sweeps them and replicates its sweeps. A replica follows the master
throughout: after every batch, while compactions may still be running in steps (the master's timer steps them
and replicates each step), every key's DEBUG DIGEST-VALUE on the replica equals the master's at the same
replication offset. Merges (CF.MERGE / BF.MERGE) of keys of one kind run too: most are refused (the keys' parameters
differ), the others add the sources' items to destkey in the model; in the "threads" configuration every merge is
built on a thread (merge-inline-bytes 0), replicated as its start and end.

Seeded: NIDUS_SEQ_SEED=<seed> replays a run (the seed is printed). NIDUS_SEQ_BATCHES (default 3) and
NIDUS_SEQ_COMMANDS (default 200 a batch) set the budget; the nightly long mode is e.g. NIDUS_SEQ_BATCHES=200.
Servers take their ports as every Redis test does (conftest.launch, NIDUS_TEST_PORTS)."""
import os
import random
import shutil
import time

import pytest

from conftest import MODULE, SERVER, launch
from resp import Error, Raw, scandump

BATCHES = int(os.environ.get("NIDUS_SEQ_BATCHES", "3"))
COMMANDS = int(os.environ.get("NIDUS_SEQ_COMMANDS", "200"))


class Redis:
    """A server with the module on a private port, in its own directory."""

    def __init__(self, workdir, module_args, appendonly):
        self.dir = str(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.module_args = list(module_args)
        self.appendonly = appendonly
        self.proc = None
        self.start()

    def start(self):
        def command(port):
            return [SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", self.dir, "--save", "",
                    "--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "always",
                    "--enable-debug-command", "local", "--logfile", "redis.log",
                    "--loadmodule", os.path.abspath(MODULE), *self.module_args]
        try:
            self.proc, self.port = launch(command, os.path.join(self.dir, "redis.log"), timeout=15)
        except RuntimeError as e:
            raise AssertionError(str(e))
        self.c = Raw(self.port)

    def log(self):
        try:
            with open(os.path.join(self.dir, "redis.log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def shutdown_nosave(self):
        try:
            self.c("SHUTDOWN", "NOSAVE")
        except (ConnectionError, OSError):
            pass
        self.proc.wait(20)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def ok(reply):
    return not isinstance(reply, Error)


class Model:
    """What the server acknowledged: per key its type and the items that must be present (with counts; for the
    short-window kind "sw", the time each item's latest add was sent, and the key's window in `windows`)."""

    def __init__(self, rng):
        self.rng = rng
        self.keys = {}  # name -> ("cf" | "bf", {item: copies}) or ("sw", {item: time the latest add was sent})
        self.windows = {}  # short-window key -> (its window in seconds, "CF" or "BF")

    def items(self, name):
        return self.keys[name][1]

    def acked(self, name, kind, item, n=1):
        self.keys.setdefault(name, (kind, {}))
        d = self.items(name)
        d[item] = d.get(item, 0) + n


class Driver:
    def __init__(self, c, rng, model, partial_chunks):
        self.c, self.rng, self.m, self.partial = c, rng, model, partial_chunks
        self.log = []  # the commands of the current batch, for the failure report
        self.universe = {}  # key -> how many distinct items its commands draw from
        self.merges = {"OK": 0, "refused": 0}

    def call(self, *args):
        self.log.append(args)
        reply = self.c(*args)
        assert not (isinstance(reply, Error) and "crash" in reply.lower()), reply
        return reply

    def item(self, name):
        return "i%d" % self.rng.randrange(0, self.universe.get(name, 50))

    def cf_key(self):
        return "cf%d" % self.rng.randrange(6)

    def bf_key(self):
        return "bf%d" % self.rng.randrange(5)

    def long_window(self):
        """WINDOW of a long window (items outlive the run) on a quarter of the keys made."""
        return ["WINDOW", self.rng.choice([3600000, 86400000])] if self.rng.random() < 0.25 else []

    def cf_reserve(self):
        r, k = self.rng, self.cf_key()
        args = ["CF.RESERVE", k, r.choice([1, 2, 4, 8, 16, 50, 100, 1000, 20000, 10 ** 6])] + self.long_window()
        if r.random() < 0.6:
            args += ["BUCKETSIZE", r.choice([1, 2, 3, 4, 8])]
        if r.random() < 0.6:
            args += ["MAXITERATIONS", r.choice([1, 1, 2, 20, 500, 65535, 65535])]
        if r.random() < 0.6:
            args += ["EXPANSION", r.choice([0, 1, 2, 4])]
        if r.random() < 0.3:
            args += ["FINGERPRINT", r.randrange(4, 30 if "WINDOW" in args else 33)]
        elif r.random() < 0.3:
            args += ["ERROR", r.choice(["0.1", "0.01", "0.0001"])]
        reply = self.call(*args)
        if reply == "OK":
            self.m.keys[k] = ("cf", {})
            self.universe[k] = r.choice([3, 20, 200, 2000])

    def cf_add(self):
        r, k = self.rng, self.cf_key()
        if k in self.m.keys and self.m.keys[k][0] != "cf":
            return
        cmd = r.choice(["CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX"])
        if cmd in ("CF.ADD", "CF.ADDNX"):
            items = [self.item(k)]
            reply = [self.call(cmd, k, items[0])]
        else:
            items = [self.item(k) for _ in range(r.randrange(1, 30))]
            args = [cmd, k]
            if r.random() < 0.3:
                args += ["CAPACITY", r.choice([10, 100, 5000])]
            if r.random() < 0.2:
                args += ["NOCREATE"]
            reply = self.call(*args, *self.long_window(), "ITEMS", *items)
            if not isinstance(reply, list):
                reply = [reply]
        for item, rep in zip(items, reply):
            if rep == 1:
                self.m.acked(k, "cf", item)
                self.universe.setdefault(k, 50)

    def cf_del(self):
        k = self.cf_key()
        if k not in self.m.keys or self.m.keys[k][0] != "cf":
            return
        present = [i for i, n in self.m.items(k).items() if n > 0]
        if not present:
            return
        item = self.rng.choice(present)
        assert self.call("CF.DEL", k, item) == 1, (k, item)
        self.m.items(k)[item] -= 1

    def cf_compact(self):
        k = self.cf_key()
        if k in self.m.keys and self.m.keys[k][0] == "cf":
            assert self.call("CF.COMPACT", k) == "OK"

    def bf_reserve(self):
        r, k = self.rng, self.bf_key()
        args = ["BF.RESERVE", k, r.choice(["0.1", "0.01", "0.001", "0.00001"]),
                r.choice([1, 10, 100, 1000, 10 ** 5, 10 ** 6])] + self.long_window()
        if r.random() < 0.3:
            args += ["NONSCALING"]
        elif r.random() < 0.5:
            args += ["EXPANSION", r.choice([1, 2, 4])]
        if self.call(*args) == "OK":
            self.m.keys[k] = ("bf", {})
            self.universe[k] = r.choice([20, 300, 3000])

    def bf_add(self):
        r, k = self.rng, self.bf_key()
        if k in self.m.keys and self.m.keys[k][0] != "bf":
            return
        cmd = r.choice(["BF.ADD", "BF.MADD", "BF.INSERT"])
        if cmd == "BF.ADD":
            items = [self.item(k)]
            reply = [self.call(cmd, k, items[0])]
        else:
            items = [self.item(k) for _ in range(r.randrange(1, 40))]
            args = [cmd, k] if cmd == "BF.MADD" else [cmd, k, "CAPACITY", r.choice([5, 100, 10000]),
                                                      *self.long_window(), "ITEMS"]
            reply = self.call(*args, *items)
            if not isinstance(reply, list):
                reply = [reply]
        for item, rep in zip(items, reply):
            if rep in (0, 1):
                self.m.acked(k, "bf", item)

    def sw_add(self):
        """A short-window key: made by CF.RESERVE or BF.RESERVE ... WINDOW, then given adds (no deletes or counts:
        a copy may expire between two commands)."""
        r, k = self.rng, "sw%d" % self.rng.randrange(3)
        if k not in self.m.keys:
            w = r.choice([1500, 2500, 4000])
            kind = r.choice(["CF", "BF"])
            args = ["CF.RESERVE", k, 2000] if kind == "CF" else ["BF.RESERVE", k, "0.01", 2000]
            if self.call(*args, "WINDOW", w) == "OK":
                self.m.keys[k] = ("sw", {})
                self.m.windows[k] = (w / 1000.0, kind)
                self.universe[k] = r.choice([20, 300])
            return
        kind = self.m.windows[k][1]
        items = [self.item(k) for _ in range(r.randrange(1, 10))]
        sent = time.time()
        reply = self.call(kind + ".INSERT", k, "NOCREATE", "ITEMS", *items)
        assert isinstance(reply, list), (k, reply)
        for item, rep in zip(items, reply):
            if rep in (0, 1):
                self.m.items(k)[item] = sent

    def copy_by_chunks(self):
        """SCANDUMP a key and LOADCHUNK it into a new one: whole, or (partial) cut off after some chunks."""
        names = [k for k in self.m.keys if not k.startswith("half")]
        if not names:
            return
        src = self.rng.choice(names)
        kind, src_items = self.m.keys[src][0], dict(self.m.items(src))
        if kind == "sw":
            return  # copies of short windows: test_window.py
        first = self.c(kind.upper() + ".SCANDUMP", src, 0)
        assert isinstance(first, list), (src, first)
        chunks = scandump(self.c, kind.upper(), src)
        cut = self.partial and self.rng.random() < 0.5
        dst = ("half%d" if cut else "copy%d") % self.rng.randrange(4)
        if dst == src:
            return
        self.call("DEL", dst)
        self.m.keys.pop(dst, None)
        if not chunks:  # an empty filter dumps nothing (as RedisBloom's)
            return
        upto = self.rng.randrange(1, len(chunks)) if cut and len(chunks) > 1 else len(chunks)
        if cut and len(chunks) == 1:
            upto = 1
        for it, data in chunks[:upto]:
            reply = self.call(kind.upper() + ".LOADCHUNK", dst, it, data)
            if not ok(reply):  # e.g. over max_filter_memory: nothing acknowledged
                self.call("DEL", dst)
                return
        if cut and upto < len(chunks):
            self.m.keys[dst] = (kind, {})  # a key exists; nothing in it was acknowledged
        else:
            self.m.keys[dst] = (kind, src_items)
            self.universe[dst] = self.universe.get(src, 50)

    def merge(self):
        """CF.MERGE or BF.MERGE of one or two keys of the model into an existing key or a new one; what it
        acknowledges: destkey (an existing one counted once) plus every source named, counts adding."""
        r = self.rng
        kind = r.choice(["cf", "bf"])
        names = sorted(k for k, (kk, _) in self.m.keys.items() if kk == kind and not k.startswith("half"))
        if not names:
            return
        fresh = "%sm%d" % (kind, r.randrange(3))
        dest = r.choice(names + [fresh]) if fresh not in self.m.keys else r.choice(names)
        srcs = [r.choice(names) for _ in range(r.randrange(1, 3))]
        exists = dest in self.m.keys
        if exists and self.m.keys[dest][0] != kind:
            return
        reply = self.call(kind.upper() + ".MERGE", dest, len(srcs), *srcs)
        self.merges["OK" if reply == "OK" else "refused"] += 1
        if reply != "OK":
            return
        union = dict(self.m.items(dest)) if exists else {}
        for src in srcs:
            if exists and src == dest:
                continue  # destkey is a source already
            for item, n in self.m.items(src).items():
                union[item] = union.get(item, 0) + n
        self.m.keys[dest] = (kind, union)
        self.universe[dest] = max(self.universe.get(k, 50) for k in srcs)

    def delete_key(self):
        if self.m.keys:
            k = self.rng.choice(sorted(self.m.keys))
            assert self.call("DEL", k) == 1
            del self.m.keys[k]
            self.m.windows.pop(k, None)

    def step(self):
        r = self.rng.random()
        if r < 0.07:
            self.cf_reserve()
        elif r < 0.40:
            self.cf_add()
        elif r < 0.52:
            self.cf_del()
        elif r < 0.55:
            self.cf_compact()
        elif r < 0.60:
            self.bf_reserve()
        elif r < 0.88:
            self.bf_add()
        elif r < 0.93:
            self.copy_by_chunks()
        elif r < 0.955:
            self.sw_add()
        elif r < 0.97:
            self.merge()
        else:
            self.delete_key()


def verify(c, model, where):
    """Every key of the model exists with its type, and every acknowledged item is present (a short window's,
    while W has not passed since its add was sent)."""
    assert c("PING") == "PONG", where
    assert c("DBSIZE") == len(model.keys), (where, c("KEYS", "*"), sorted(model.keys))
    for name, (kind, items) in sorted(model.keys.items()):
        assert c("TYPE", name) in ("nidus--CF", "nidus--BF", "nidus--CW", "nidus--BW"), (where, name)
        if kind == "sw":
            verify_short_window(c, name, items, *model.windows[name], where)
            continue
        present = sorted(i for i, n in items.items() if n > 0)
        if not present:
            continue
        reply = c(kind.upper() + ".MEXISTS", name, *present)
        missing = [i for i, r in zip(present, reply) if r != 1]
        assert not missing, (where, name, missing[:10], reply if not isinstance(reply, list) else None)
        if kind == "cf":
            for i in present[:20]:
                n = c("CF.COUNT", name, i)
                assert n >= items[i], (where, name, i, n, items[i])


def verify_short_window(c, name, items, window, kind, where):
    assert c("TYPE", name) == "nidus--%sW" % kind[0], (where, name)
    command = kind + ".MEXISTS"
    candidates = sorted(items)
    if not candidates:
        return
    reply = c(command, name, *candidates)
    answered = time.time()  # the server looked them up no later than this
    assert isinstance(reply, list), (where, name, reply)
    missing = [i for i, r in zip(candidates, reply) if r != 1 and answered < items[i] + window]
    assert not missing, (where, name, "expired early", missing[:10])


def snapshot(c, names):
    """(replication offset, digests of `names`) taken atomically."""
    reply = c("MULTI")
    assert reply == "OK", reply
    assert c("INFO", "replication") == "QUEUED"
    assert c("DEBUG", "DIGEST-VALUE", *names) == "QUEUED"
    info, digests = c("EXEC")
    fields = dict(line.split(":", 1) for line in info.decode().splitlines() if ":" in line)
    offset = int(fields.get("master_repl_offset") if fields.get("role") == "master" else fields["slave_repl_offset"])
    return offset, digests


def compare_with_replica(master, replica, model, where):
    """Every key's digest on the replica equals the master's at the same offset (the master's timer may step a
    compaction meanwhile: then the offsets differ, and the comparison is taken again)."""
    names = sorted(model.keys)
    if not names:
        return
    for _ in range(200):
        offset, digests = snapshot(master.c, names)
        deadline = time.time() + 30
        while True:
            r_offset, r_digests = snapshot(replica.c, names)
            if r_offset >= offset:
                break
            assert time.time() < deadline, (where, "replica behind", r_offset, offset)
            time.sleep(0.01)
        if r_offset == offset:
            differ = [n for n, a, b in zip(names, digests, r_digests) if a != b]
            assert not differ, (where, "replica differs", differ)
            return
    raise AssertionError((where, "the master never stood still long enough to compare"))


def follow(replica, master):
    assert replica.c("REPLICAOF", "127.0.0.1", master.port) == "OK"
    deadline = time.time() + 30
    while b"master_link_status:up" not in replica.c("INFO", "replication"):
        assert time.time() < deadline, replica.log()
        time.sleep(0.05)


def persistence_cycle(srv, model, tmp_path, rng, batch):
    c = srv.c
    verify(c, model, "batch %d" % batch)
    assert c("DEBUG", "RELOAD") == "OK", srv.log()
    verify(c, model, "after DEBUG RELOAD")
    for name in sorted(model.keys):
        payload = c("DUMP", name)
        assert payload is not None, name
        assert c("RESTORE", name, 0, payload, "REPLACE") == "OK", name
    verify(c, model, "after DUMP/RESTORE")
    # restart from the AOF (sometimes rewritten first, so it starts with an RDB preamble)
    if rng.random() < 0.5:
        assert ok(c("BGREWRITEAOF"))
        deadline = time.time() + 60
        while b"aof_rewrite_in_progress:1" in c("INFO", "persistence") or \
                b"aof_rewrite_scheduled:1" in c("INFO", "persistence"):
            assert time.time() < deadline
            time.sleep(0.05)
    srv.shutdown_nosave()
    srv.start()
    verify(srv.c, model, "after an AOF restart")
    # restart from an RDB: SAVE, and start a second server on a copy of dump.rdb
    assert srv.c("SAVE") == "OK"
    rdb_dir = tmp_path / ("rdb%d" % batch)
    os.makedirs(rdb_dir)
    shutil.copy(os.path.join(srv.dir, "dump.rdb"), rdb_dir / "dump.rdb")
    other = Redis(rdb_dir, srv.module_args, appendonly=False)
    try:
        verify(other.c, model, "after an RDB restart")
    finally:
        other.kill()


CONFIGS = {
    "defaults": [],
    # small limits: creation, growth and LOADCHUNK meet them
    "limits": ["max_capacity", "5000", "max_filter_memory", "60000", "cf_max_expansions", "4"],
    # every merge on a thread
    "threads": ["merge-inline-bytes", "0"],
}


def run(tmp_path, config, partial_chunks):
    seed = int(os.environ.get("NIDUS_SEQ_SEED", random.randrange(1 << 32)))
    print("NIDUS_SEQ_SEED=%d (config %s, partial chunks %s)" % (seed, config, partial_chunks))
    rng = random.Random(seed)
    srv = Redis(tmp_path / "main", CONFIGS[config], appendonly=True)
    replica = Redis(tmp_path / "replica", CONFIGS[config], appendonly=False)
    try:
        follow(replica, srv)
        model = Model(rng)
        d = Driver(srv.c, rng, model, partial_chunks)
        for batch in range(BATCHES):
            d.c = srv.c
            d.log = []
            for _ in range(COMMANDS):
                d.step()
            assert srv.proc.poll() is None, srv.log()
            compare_with_replica(srv, replica, model, "batch %d" % batch)
            persistence_cycle(srv, model, tmp_path, rng, batch)
            follow(replica, srv)  # the master restarted (maybe on another port)
            compare_with_replica(srv, replica, model, "after the persistence cycle of batch %d" % batch)
            d.c = srv.c
        types = [srv.c("TYPE", name) for name in sorted(model.keys)]
        print("keys at the end by type:", {t: types.count(t) for t in sorted(set(types))})
        print("merges:", d.merges)
        steps = replica.c("INFO", "commandstats").decode()
        print("compaction steps and windowed writes the replica applied:",
              [line for line in steps.splitlines() if "compactstep" in line or ".at:" in line])
    except AssertionError:
        print("seed %d; the last batch's commands:" % seed)
        for cmd in d.log[-40:]:
            print("  ", " ".join(str(a)[:40] for a in cmd))
        raise
    finally:
        srv.kill()
        replica.kill()


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_random_sequences_survive_every_reload(tmp_path, config):
    run(tmp_path, config, partial_chunks=False)


@pytest.mark.parametrize("config", ["defaults", "limits"])
def test_random_sequences_with_half_loaded_keys(tmp_path, config):
    """Copies cut off after some LOADCHUNKs leave keys that must survive every reload too."""
    run(tmp_path, config, partial_chunks=True)

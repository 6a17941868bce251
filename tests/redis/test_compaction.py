# SPDX-License-Identifier: BSD-3-Clause
"""Cuckoo compaction in bounded steps: no command stalls the server, and every copy follows the steps.

The sequence of the report (CF.RESERVE with BUCKETSIZE 2, adds by pipelined CF.INSERT until the filter has grown
to about seven sub-filters, 30 % of the items deleted by pipelined CF.DEL, then CF.COMPACT), scaled to 1M adds,
with the SLOWLOG on: no CF command may pass 20 ms (the automatic compaction inside CF.DEL took 483-610 ms at 8M
before it ran in steps), CF.COMPACT returns at once, and the compaction, carried on by the timer, keeps every
live item. Then a master, two replicas (one synced mid-compaction), an RDB saved mid-compaction and an AOF
replayed mid-compaction must all hold the same bytes (DEBUG DIGEST-VALUE). bench/compaction-latency runs the
sequence at 8M and beyond, beside RedisBloom."""
import os
import shutil
import time

from conftest import Server
from resp import Error, Raw


def pipelined(c, commands, window=256):
    """Sends `commands` keeping at most `window` replies outstanding; returns the replies."""
    replies = []
    for start in range(0, len(commands), window):
        part = commands[start:start + window]
        for cmd in part:
            c.send(*cmd)
        replies += [c.read() for _ in part]
    return replies


def info(c, key):
    reply = c("CF.INFO", key)
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}


def wait_compacted(c, key, timeout=50):
    deadline = time.time() + timeout
    while info(c, key)["Compacting"]:
        assert time.time() < deadline, "the compaction did not end"
        time.sleep(0.05)


def slow_commands(c):
    """The SLOWLOG's entries of module commands: (command, microseconds)."""
    out = []
    for entry in c("SLOWLOG", "GET", 1024):
        name = entry[3][0].decode().lower()
        if name.startswith(("cf.", "bf.")):
            out.append((name, entry[2]))
    return out


def latency_bound_us(noise_us):
    """20 ms, as the report asks. The SLOWLOG measures wall time, though: on a machine with more runnable
    processes than cores, a command of a hundred microseconds is now and then descheduled for tens of
    milliseconds (a step's CPU time stays under 0.4 ms here while its wall time reached 136 ms at a load of 18
    on 2 cores). There the bound is the larger of twice the slowest CF.INSERT of 100 items (no compaction work:
    the noise, measured in the same run) and 25 ms per runnable process per core. The stall this guards
    against, an all-at-once compaction inside CF.DEL, took 240-400 ms at this size (1M items) on that machine."""
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load <= cpus:
        return 20000
    return int(max(20000, 2 * noise_us, 25000 * load / cpus))


def test_no_command_stalls_and_the_compaction_keeps_every_item(tmp_path):
    s = Server(tmp_path / "stall")
    try:
        c = Raw(s.port)
        assert c("CONFIG", "SET", "slowlog-log-slower-than", 10000) == "OK"  # microseconds
        assert c("CONFIG", "SET", "slowlog-max-len", 1024) == "OK"
        n, per = 1_000_000, 100
        assert c("CF.RESERVE", "c", n // 8, "BUCKETSIZE", 2) == "OK"
        assert c("SLOWLOG", "RESET") == "OK"
        inserts = [["CF.INSERT", "c", "ITEMS", *("k%d" % i for i in range(b, b + per))] for b in range(0, n, per)]
        for reply in pipelined(c, inserts, window=64):
            assert reply == [1] * per
        grown = info(c, "c")
        assert grown["Number of filters"] >= 6
        noise = max([us for _, us in slow_commands(c)], default=0)
        bound = latency_bound_us(noise)
        print("slowest CF.INSERT of %d items: %d us; load %.1f on %d cores; bound %d us" %
              (per, noise, os.getloadavg()[0], os.cpu_count(), bound))
        assert c("SLOWLOG", "RESET") == "OK"
        deleted = [i for i in range(n) if i % 10 < 3]
        assert all(r == 1 for r in pipelined(c, [("CF.DEL", "c", "k%d" % i) for i in deleted], window=1024))
        start = time.time()
        assert c("CF.COMPACT", "c") == "OK"
        took = time.time() - start
        slow = slow_commands(c)
        print("CF commands over 10 ms:", sorted(slow, key=lambda e: -e[1])[:10])
        assert all(us < bound for _, us in slow), slow  # CF.DEL and CF.COMPACT
        assert all(us < max(50000, bound) for name, us in slow if name == "cf.compact"), slow
        assert took < 5, took  # the client's view: at once (the machine may be busy: a loose bound)
        assert info(c, "c")["Compacting"] == 1  # returned with the work still to do
        wait_compacted(c, "c")
        after = info(c, "c")
        assert after["Number of items inserted"] == n - len(deleted)
        assert after["Number of items deleted"] == 0
        for b in range(0, n, 1000):
            live = ["k%d" % i for i in range(b, b + 1000) if i % 10 >= 3]
            assert c("CF.MEXISTS", "c", *live) == [1] * len(live), b
        slow = slow_commands(c)
        assert all(us < bound for _, us in slow), slow
    finally:
        s.kill()


def replica_of(tmp_path, name, master, module_args):
    r = Server(tmp_path / name, module_args=module_args)
    assert Raw(r.port)("REPLICAOF", "127.0.0.1", master.port) == "OK"
    r.wait_replica_link()
    return r


def synced(master, *replicas):
    """Waits until every replica has processed the master's whole stream."""
    m = master.client()
    offset = m.info("replication")["master_repl_offset"]
    deadline = time.time() + 30
    for r in replicas:
        while r.client().info("replication").get("slave_repl_offset", -1) < offset:
            assert time.time() < deadline, "replica behind"
            time.sleep(0.02)


def digest(server, key):
    return Raw(server.port)("DEBUG", "DIGEST-VALUE", key)


def test_replicas_rdb_and_aof_follow_the_steps(tmp_path):
    # the timer off at first: steps come only with writes, so every copy can be compared mid-compaction
    args = ["cf-compact-interval", "0"]
    master = Server(tmp_path / "master", extra=["--appendonly", "yes", "--appendfsync", "always"], module_args=args)
    servers = [master]
    try:
        c = Raw(master.port)
        r1 = replica_of(tmp_path, "r1", master, args)
        servers.append(r1)
        assert c("CF.RESERVE", "k", 20000, "BUCKETSIZE", 2) == "OK"
        items = ["i%d" % i for i in range(300000)]
        for b in range(0, len(items), 500):
            assert c("CF.INSERT", "k", "ITEMS", *items[b:b + 500]) == [1] * 500
        assert info(c, "k")["Number of filters"] >= 8
        doomed = items[::3]
        first, second = 27300, 29300  # past 10 % of the items: a compaction starts, and the deletes step it
        assert pipelined(c, [("CF.DEL", "k", i) for i in doomed[:first]]) == [1] * first
        assert info(c, "k")["Compacting"] == 1
        # an RDB saved mid-compaction loads with the same bytes and every item
        assert c("SAVE") == "OK"
        os.makedirs(tmp_path / "fromrdb")
        shutil.copy(tmp_path / "master" / "dump.rdb", tmp_path / "fromrdb" / "dump.rdb")
        saved = digest(master, "k")
        fromrdb = Server(tmp_path / "fromrdb", module_args=args)
        servers.append(fromrdb)
        assert digest(fromrdb, "k") == saved
        # a replica synced mid-compaction (it gets no cursor), then more steps: every copy the same
        r2 = replica_of(tmp_path, "r2", master, args)
        servers.append(r2)
        assert c("BGREWRITEAOF")  # the AOF starts again from the filter's bytes, mid-compaction
        master.wait_aof_rewrite()
        assert pipelined(c, [("CF.DEL", "k", i) for i in doomed[first:second]]) == [1] * (second - first)
        assert c("CF.COMPACT", "k") == "OK"
        assert c("CF.ADD", "k", "new") == 1
        synced(master, r1, r2)
        now = digest(master, "k")
        assert digest(r1, "k") == digest(r2, "k") == now
        # the AOF (rewritten mid-compaction, then the steps) replays to the same bytes
        assert c("DEBUG", "LOADAOF") == "OK"
        assert digest(master, "k") == now
        # the timer on: it finishes the compaction, and the replicas follow its steps
        assert c("CONFIG", "SET", "nidus.cf-compact-interval", 5) == "OK"
        assert c("CF.DEL", "k", doomed[second]) == 1  # a write: the key is stepped and timed again
        wait_compacted(c, "k")
        synced(master, r1, r2)
        final = digest(master, "k")
        assert digest(r1, "k") == digest(r2, "k") == final
        assert info(Raw(r1.port), "k")["Compacting"] == 0
        assert c("DEBUG", "LOADAOF") == "OK"
        assert digest(master, "k") == final
        deleted = set(doomed[:second + 1])
        live = [i for i in items if i not in deleted] + ["new"]
        for b in range(0, len(live), 1000):
            part = live[b:b + 1000]
            assert c("CF.MEXISTS", "k", *part) == [1] * len(part)
            assert Raw(r2.port)("CF.MEXISTS", "k", *part) == [1] * len(part)
    finally:
        for s in servers:
            s.kill()


def test_compactstep_checks_its_arguments(tmp_path):
    s = Server(tmp_path / "args")
    try:
        c = Raw(s.port)
        assert c("CF.COMPACTSTEP", "none", 1, 0, 10) == Error("Cuckoo filter was not found")
        assert c("CF.RESERVE", "k", 100, "BUCKETSIZE", 2) == "OK"
        assert c("CF.COMPACTSTEP", "k", 1, 0, 10) == Error("ERR bad compaction step")  # one table: no cursor
        assert c("CF.COMPACTSTEP", "k", "x", 0, 10) == Error("ERR bad compaction step")
        assert c("CF.COMPACTSTEP", "k", 0, 0, -1) == Error("ERR bad compaction step")
        assert c("CF.COMPACTSTEP", "k", 0, 0, 0) == "OK"  # table 0: begin (one table: resets the removes)
        assert c("SET", "str", "x") == "OK"
        assert c("CF.COMPACTSTEP", "str", 0, 0, 0).startswith("WRONGTYPE")
        assert c("CF.COMPACTSTEP", "k", 0, 0) == Error("ERR wrong number of arguments for 'cf.compactstep' command")
    finally:
        s.kill()


def test_a_restart_mid_compaction_finishes_it(tmp_path):
    """A master stopped mid-compaction (killed after its AOF, or shut down after a SAVE) restarts with every item,
    and with no write at all its timer finishes the compaction: the RDB holds no cursor, the filter's count of
    removes says one is owed, and it starts over from the newest table (the bytes change: fingerprints move). Its
    replica, which kept the old cursor, follows the new steps to the same bytes."""
    for persistence in ("rdb", "aof"):
        args = ["cf-compact-interval", "0"]  # no timer: the compaction stops where the deletes left it
        extra = ["--appendonly", "yes", "--appendfsync", "always"] if persistence == "aof" else []
        master = Server(tmp_path / persistence / "master", extra=extra, module_args=args)
        servers = [master]
        try:
            c = Raw(master.port)
            replica = replica_of(tmp_path / persistence, "replica", master, args)
            servers.append(replica)
            assert c("CF.RESERVE", "k", 20000, "BUCKETSIZE", 2) == "OK"
            items = ["i%d" % i for i in range(300000)]
            for b in range(0, len(items), 500):
                assert c("CF.INSERT", "k", "ITEMS", *items[b:b + 500]) == [1] * 500
            doomed = items[::3][:27300]  # past 10 % of the items: a compaction starts, and the deletes step it
            assert pipelined(c, [("CF.DEL", "k", i) for i in doomed]) == [1] * len(doomed)
            assert info(c, "k")["Compacting"] == 1
            synced(master, replica)
            before = digest(master, "k")
            assert digest(replica, "k") == before
            assert info(Raw(replica.port), "k")["Compacting"] == 1
            if persistence == "rdb":
                assert c("SAVE") == "OK"
                master.stop(nosave=True)
            else:
                master.kill()
            master.module_args = []  # the timer on, as by default
            master.start()
            c = Raw(master.port)
            deleted = set(doomed)
            live = [i for i in items if i not in deleted]
            for b in range(0, len(live), 1000):  # nothing lost, while the timer's steps run
                part = live[b:b + 1000]
                assert c("CF.MEXISTS", "k", *part) == [1] * len(part)
            wait_compacted(c, "k")  # no write: the timer alone
            replica.wait_replica_link()
            synced(master, replica)
            after = digest(master, "k")
            assert after != before
            assert digest(replica, "k") == after
            rc = Raw(replica.port)
            assert info(rc, "k")["Compacting"] == 0
            assert info(rc, "k")["Number of filters"] == info(c, "k")["Number of filters"]
            assert c("DEBUG", "RELOAD") == "OK"
            assert digest(master, "k") == after
            for b in range(0, len(live), 1000):
                part = live[b:b + 1000]
                assert c("CF.MEXISTS", "k", *part) == [1] * len(part)
                assert rc("CF.MEXISTS", "k", *part) == [1] * len(part)
        finally:
            for s in servers:
                s.kill()

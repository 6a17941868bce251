# SPDX-License-Identifier: BSD-3-Clause
"""CF.MERGE and BF.MERGE of inputs past merge-inline-bytes, built on a thread (test_merge.py runs every merge
test both ways; this file tests what is particular to the thread):
- a large merge holds the server for no command: with slowlog-log-slower-than 0 around it, no SLOWLOG entry
  (the merge's own included) passes 20 ms; it replies OK, every item of both inputs is in destkey, and the union
  is byte-identical (DEBUG DIGEST-VALUE) to the one built within the command;
- while it runs the merge's client is blocked; the module's writes to a source or to destkey wait (blocked) and
  then run, after the union is set; reads of destkey answer at once; inside MULTI/EXEC or a script such a write
  ends the merge first, also where the source's value was moved to another database (MOVE, SWAPDB); a write
  waiting for a merge runs before a merge waiting after it on its key starts; CLIENT UNBLOCK answers a waiting
  client and the merge completes;
- a source or destkey deleted, expired, renamed or overwritten mid-merge, or FLUSHALL: the client gets "merge
  not done", destkey is as it was, the pinned values are freed at the end; two merges into one destkey both
  complete; a merge whose client disconnected completes;
- replicas and the AOF (as written, without the MERGE BEGIN, rewritten, or a full sync or rewrite taken
  mid-merge) end with destkey's bytes, also after an aborted merge and one a MULTI ended, and in another
  database; a replica promoted mid-merge sets the union itself, and a master killed mid-merge after restarting
  from its AOF; CF.AT and BF.AT are refused from clients.

The large keys are filled once per file (by Lua scripts, on a server of their own), kept as DUMP payloads, and
RESTOREd into each test's server."""
import os
import select

import pytest

import conftest
from resp import Error, Raw, aof_commands

SLOW_US = 20000  # the bound on every SLOWLOG entry around a threaded merge (20 ms)
CHANGED = Error("ERR merge not done: destkey or a sourcekey was changed (deleted, renamed or overwritten) while "
                "it ran")
UNBLOCKED = Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
INLINE = conftest.config_name("merge-inline-bytes")
NEVER_INLINE = 10 ** 15  # merge-inline-bytes past any input: every merge is built within its command

# Items prefix0..prefix(n-1) added to KEYS[1] by ARGV[1] (CF.INSERT NOCREATE or BF.MADD), 1000 a call;
# returns how many CF.INSERT could not add (-1).
FILL = """
local key, cmd, p = KEYS[1], ARGV[1], ARGV[2]
local n, failed = tonumber(ARGV[3]), 0
for i = 0, n - 1, 1000 do
  local t = {}
  for j = i, math.min(n, i + 1000) - 1 do t[#t + 1] = p .. j end
  if cmd == 'CF.INSERT' then
    for _, v in ipairs(redis.call(cmd, key, 'NOCREATE', 'ITEMS', unpack(t))) do
      if v ~= 1 then failed = failed + 1 end
    end
  else
    redis.call(cmd, key, unpack(t))
  end
end
return failed
"""

# How many of the items prefix0, prefix(step), prefix(2 step)... below prefix(n) KEYS[1] does not hold (ARGV[1]:
# CF.MEXISTS or BF.MEXISTS).
MISSING = """
local key, cmd, p = KEYS[1], ARGV[1], ARGV[2]
local n, step, missing = tonumber(ARGV[3]), tonumber(ARGV[4]), 0
for i = 0, n - 1, 1000 * step do
  local t = {}
  for j = i, math.min(n, i + 1000 * step) - 1, step do t[#t + 1] = p .. j end
  for _, v in ipairs(redis.call(cmd, key, unpack(t))) do
    if v ~= 1 then missing = missing + 1 end
  end
end
return missing
"""

# The large keys: CF.RESERVE 2000000 BUCKETSIZE 2 (2.7 MB each) with 1M items, whose union fits one table (a
# merge of the two adds 1M fingerprints: 0.13 s on Redis 7.0 here, where 20 ms is the bound, and long enough for
# the clients to be seen waiting), a third of the same shape with 100k; Bloom filters of 20M at 1 % (27 MB,
# whose union, an OR, takes 38 ms within the command on Redis 7.0 here) with 200k items, and of 2M (2.4 MB) with
# 50k for the replication tests; windowed cuckoo filters (a window no test reaches) of 200k with 100k items.
# name: (reserve, fill command, item prefix, items)
KEYS = {
    "A": (("CF.RESERVE", "A", 2000000, "BUCKETSIZE", 2), "CF.INSERT", "a", 1000000),
    "B": (("CF.RESERVE", "B", 2000000, "BUCKETSIZE", 2), "CF.INSERT", "b", 1000000),
    "C": (("CF.RESERVE", "C", 2000000, "BUCKETSIZE", 2), "CF.INSERT", "c", 100000),
    "BA": (("BF.RESERVE", "BA", "0.01", 20000000), "BF.MADD", "ba", 200000),
    "BB": (("BF.RESERVE", "BB", "0.01", 20000000), "BF.MADD", "bb", 200000),
    "SA": (("BF.RESERVE", "SA", "0.01", 2000000), "BF.MADD", "sa", 50000),
    "SB": (("BF.RESERVE", "SB", "0.01", 2000000), "BF.MADD", "sb", 50000),
    "WA": (("CF.RESERVE", "WA", 200000, "WINDOW", 1 << 48), "CF.INSERT", "wa", 100000),
    "WB": (("CF.RESERVE", "WB", 200000, "WINDOW", 1 << 48), "CF.INSERT", "wb", 100000),
}


@pytest.fixture(scope="module")
def payloads(tmp_path_factory):
    s = conftest.Server(tmp_path_factory.mktemp("fill"))
    try:
        c = Raw(s.port)
        out = {}
        for name, (reserve, cmd, prefix, n) in KEYS.items():
            assert c(*reserve) == "OK"
            assert c("EVAL", FILL, 1, name, cmd, prefix, n) == 0
            out[name] = c("DUMP", name)
        c.close()
        return out
    finally:
        s.kill()


@pytest.fixture
def server(tmp_path):
    s = conftest.Server(tmp_path / "server")
    yield s
    s.kill()


@pytest.fixture
def conns(server):
    """raw(): a new raw connection to the server, closed at the end."""
    made = []

    def raw():
        made.append(Raw(server.port))
        return made[-1]

    yield raw
    for m in made:
        m.close()


def restore(c, payloads, *names, as_=None):
    for i, name in enumerate(names):
        assert c("RESTORE", as_[i] if as_ else name, 0, payloads[name]) == "OK"


def missing(c, key, *names, step=1):
    """How many items of the large keys `names` key does not hold (of every step-th one)."""
    kind = "BF" if KEYS[names[0]][1] == "BF.MADD" else "CF"
    return sum(c("EVAL", MISSING, 1, key, kind + ".MEXISTS", KEYS[n][2], KEYS[n][3], step) for n in names)


def inserted(c, key):
    info = c("CF.INFO", key)
    return info[info.index("Number of items inserted") + 1]


def replied(c):
    """Whether a reply (or the close) waits on raw connection c."""
    return bool(c.buf) or bool(select.select([c.sock], [], [], 0)[0])


def client_id(c):
    return c("CLIENT", "ID")


def blocked(ctl):
    """The ids of the blocked clients (CLIENT LIST flags b)."""
    out = set()
    for line in ctl("CLIENT", "LIST").decode().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split(" ") if "=" in kv)
        if "b" in f["flags"]:
            out.add(int(f["id"]))
    return out


def wait_blocked(ctl, ids, merging):
    """Waits until exactly the clients `ids` are blocked; fails at once if the merge on `merging` replied first
    (its keys too small for this machine: then nothing here would have waited for it)."""
    def check():
        assert not replied(merging), "the merge ended before the clients %s were seen blocked" % sorted(ids)
        return blocked(ctl) == set(ids)
    assert conftest.wait_for(check), (blocked(ctl), ids)


def digest(c, key):
    return c("DEBUG", "DIGEST-VALUE", key)[0]


def inline_union(c, payloads, cmd, names):
    """The digest of the merge of copies of the large keys `names` into a new key, built within the command."""
    copies = ["copy-" + n for n in names]
    restore(c, payloads, *names, as_=copies)
    assert c("CONFIG", "SET", INLINE, NEVER_INLINE) == "OK"
    assert c(cmd, "inline-union", len(copies), *copies) == "OK"
    assert c("CONFIG", "SET", INLINE, 65536) == "OK"
    d = digest(c, "inline-union")
    assert c("DEL", "inline-union", *copies) == len(copies) + 1
    return d


def over_bound(entries):
    """The SLOWLOG entries past the bound."""
    return [e for e in entries if e[0] > SLOW_US]


def slowlog_around(c, run):
    """run() with every command logged: returns its result and the SLOWLOG entries [(micros, args)]."""
    assert c("CONFIG", "SET", "slowlog-log-slower-than", 0) == "OK"
    assert c("CONFIG", "SET", "slowlog-max-len", 10000) == "OK"
    assert c("SLOWLOG", "RESET") == "OK"
    try:
        out = run()
    finally:
        assert c("CONFIG", "SET", "slowlog-log-slower-than", 10000) == "OK"
    entries = c("SLOWLOG", "GET", 10000)
    return out, [(e[2], [a.decode(errors="replace") for a in e[3]]) for e in entries]


# ---- a large merge holds the server for no command, and builds the same union ----

@pytest.mark.parametrize("kind", ["CF", "BF"])
def test_large_merge_logs_no_command_past_20ms_and_builds_the_inline_union(server, conns, payloads, kind):
    c = conns()
    a, b = ("A", "B") if kind == "CF" else ("BA", "BB")
    restore(c, payloads, a, b)
    cmd = kind + ".MERGE"
    reply, entries = slowlog_around(c, lambda: c(cmd, "d", 2, a, b))
    assert reply == "OK"
    merges = [e for e in entries if e[1][0].upper() == cmd]
    assert len(merges) == 1, entries
    assert over_bound(entries) == []
    assert missing(c, "d", a, b) == 0
    assert digest(c, "d") == inline_union(c, payloads, cmd, [a, b])
    assert c("DUMP", a) == payloads[a] and c("DUMP", b) == payloads[b]  # sources untouched


# ---- while it runs ----

def start_merge(conns, *args):
    """Sends a merge on a connection of its own and waits until its client is blocked: (connection, control)."""
    m, ctl = conns(), conns()
    mid = client_id(m)
    m.send(*args)
    wait_blocked(ctl, {mid}, m)
    return m, ctl, mid


def merging_a_and_b(conns, payloads):
    """A and B restored, the digest of their union built inline, and their merge into d running on a thread:
    (connection, digest, the merge's connection, control connection, the merge's client id)."""
    c = conns()
    restore(c, payloads, "A", "B")
    want = inline_union(c, payloads, "CF.MERGE", ["A", "B"])
    return (c, want) + start_merge(conns, "CF.MERGE", "d", 2, "A", "B")


def test_writes_to_its_keys_wait_and_reads_answer_at_once(server, conns, payloads):
    c = conns()
    restore(c, payloads, "A", "B")
    assert c("CF.RESERVE", "d", 2000000, "BUCKETSIZE", 2) == "OK"
    assert c("CF.ADD", "d", "old") == 1
    m, ctl, mid = start_merge(conns, "CF.MERGE", "d", 2, "A", "B")
    w1, w2 = conns(), conns()
    ids = {mid, client_id(w1), client_id(w2)}
    w1.send("CF.ADD", "A", "new-in-source")
    w2.send("CF.ADD", "d", "new-in-dest")
    wait_blocked(ctl, ids, m)
    # reads of destkey and of a source answer while the three wait, from destkey as it was
    assert c("CF.EXISTS", "d", "old") == 1
    assert c("CF.EXISTS", "A", "a7") == 1
    assert c("CF.COUNT", "d", "old") == 1
    assert c("PING") == "PONG"
    assert blocked(ctl) == ids
    assert m.read() == "OK"
    assert w1.read() == 1
    assert w2.read() == 1
    assert missing(c, "d", "A", "B", step=7) == 0
    assert c("CF.EXISTS", "d", "old") == 1
    assert c("CF.EXISTS", "d", "new-in-dest") == 1
    assert c("CF.EXISTS", "A", "new-in-source") == 1
    assert inserted(c, "d") == 2000002  # old, A's, B's, new-in-dest (not A's new one)
    assert inserted(c, "A") == 1000001


def test_a_write_in_multi_ends_the_merge_first(server, conns, payloads):
    c, want, m, ctl, mid = merging_a_and_b(conns, payloads)
    assert c("MULTI") == "OK"
    assert c("CF.ADD", "A", "in-multi") == "QUEUED"
    assert c("CF.EXISTS", "d", "a1") == "QUEUED"
    assert c("EXEC") == [1, 1]  # destkey held the union when the CF.EXISTS ran, within the EXEC
    assert digest(c, "d") == want
    assert c("CF.EXISTS", "A", "in-multi") == 1
    assert m.read() == "OK"
    assert c("DUMP", "B") == payloads["B"]


def test_a_write_in_a_script_ends_the_merge_first(server, conns, payloads):
    c, want, m, ctl, mid = merging_a_and_b(conns, payloads)
    # destkey holds the union when the script's CF.ADD returns
    script = "return {redis.call('CF.ADD', KEYS[1], 'in-script'), redis.call('CF.EXISTS', KEYS[2], 'b1')}"
    assert c("EVAL", script, 2, "B", "d") == [1, 1]
    assert mid not in blocked(ctl)
    assert digest(c, "d") == want
    assert m.read() == "OK"
    assert c("CF.EXISTS", "B", "in-script") == 1


@pytest.mark.parametrize("move", ["MOVE", "SWAPDB"])
def test_a_write_in_multi_to_a_source_in_another_db_ends_the_merge_first(server, conns, payloads, move):
    # the source's value, pinned, is in database 1 now: a write to it there cannot wait, and must not change it
    # while the thread reads it
    c = conns()
    restore(c, payloads, "A", "B")
    m, ctl, mid = start_merge(conns, "CF.MERGE", "d", 2, "A", "B")
    assert (c("MOVE", "B", 1) if move == "MOVE" else c("SWAPDB", 0, 1)) == (1 if move == "MOVE" else "OK")
    assert c("MULTI") == "OK"
    assert c("SELECT", 1) == "QUEUED"
    assert c("CF.ADD", "B", "in-multi") == "QUEUED"
    assert c("EXEC") == ["OK", 1]
    assert mid not in blocked(ctl)  # ended within the EXEC
    assert m.read() == CHANGED
    assert c("CF.EXISTS", "B", "in-multi") == 1
    assert c("SELECT", 0 if move == "MOVE" else 1) == "OK"
    assert c("DUMP", "A") == payloads["A"]
    assert c("SELECT", 0) == "OK"
    assert c("EXISTS", "d") == 0


def test_client_unblock_answers_a_waiting_client_and_the_merge_completes(server, conns, payloads):
    c, want, m, ctl, mid = merging_a_and_b(conns, payloads)
    w = conns()
    wid = client_id(w)
    w.send("CF.ADD", "B", "never-waited-for")
    wait_blocked(ctl, {mid, wid}, m)
    assert c("CLIENT", "UNBLOCK", wid) == 1
    assert w.read() == UNBLOCKED
    assert w("PING") == "PONG"
    assert c("CLIENT", "UNBLOCK", mid) == 1
    assert m.read() == UNBLOCKED
    assert conftest.wait_for(lambda: c("EXISTS", "d") == 1)
    assert digest(c, "d") == want
    assert c("DUMP", "A") == payloads["A"]


# ---- keys changed under it ----

# each changes B (a source) or d (destkey) while the merge of A and B into d runs
CHANGES = {
    "DEL": lambda c, payloads: c("DEL", "B") == 1,
    "expiry": lambda c, payloads: c("PEXPIRE", "B", 1) == 1,
    "RENAME": lambda c, payloads: c("RENAME", "B", "B2") == "OK",
    "SET": lambda c, payloads: c("SET", "B", "a string") == "OK",
    # the same bytes in a new value: still not the value the merge read
    "RESTORE REPLACE": lambda c, payloads: c("RESTORE", "B", 0, payloads["B"], "REPLACE") == "OK",
    "expiry of destkey": lambda c, payloads: c("PEXPIRE", "d", 1) == 1,
}


def test_a_source_or_destkey_changed_mid_merge_leaves_destkey_as_it_was(server, conns, payloads):
    c = conns()
    for name, change in CHANGES.items():
        assert c("FLUSHALL") == "OK"
        restore(c, payloads, "A", "B")
        assert c("CF.RESERVE", "d", 2000000, "BUCKETSIZE", 2) == "OK"
        assert c("CF.ADD", "d", "old") == 1
        before = digest(c, "d")
        m, ctl, mid = start_merge(conns, "CF.MERGE", "d", 2, "A", "B")
        assert change(c, payloads), name
        assert m.read() == CHANGED, name
        if name == "expiry of destkey":
            assert c("EXISTS", "d") == 0
        else:
            assert digest(c, "d") == before, name
        assert c("DUMP", "A") == payloads["A"], name
    # a new merge of what is left runs
    assert c("CF.MERGE", "d", 1, "A") == "OK"
    assert missing(c, "d", "A", step=7) == 0
    assert inserted(c, "d") == 1000000


def test_flushall_mid_merge_answers_the_error_and_frees_the_pinned_values(server, conns, payloads):
    c = conns()
    base = server.client().info("memory")["used_memory"]
    for round_ in range(2):  # the second round with lazy FLUSHALL: the values go to the lazy-free thread
        restore(c, payloads, "A", "B", "BA", "BB")
        m, ctl, mid = start_merge(conns, "CF.MERGE", "d", 2, "A", "B")
        bm = conns()
        bid = client_id(bm)
        bm.send("BF.MERGE", "bd", 2, "BA", "BB")
        assert conftest.wait_for(lambda: replied(bm) or bid in blocked(ctl))
        assert c("FLUSHALL", *(["ASYNC"] if round_ else [])) == "OK"
        assert m.read() == CHANGED
        # the Bloom merge may have ended before the FLUSHALL (its union is an OR): then it is gone with it
        assert bm.read() in ("OK", CHANGED)
        assert c("DBSIZE") == 0
        assert server.alive()
    # 16 MB of keys were pinned twice; all of it is freed once the merges ended (lazily in the second round)
    assert conftest.wait_for(lambda: server.client().info("memory")["used_memory"] < base + 2 ** 20), \
        (base, server.client().info("memory")["used_memory"])


# ---- more than one merge ----

def test_two_merges_into_one_destkey_back_to_back(server, conns, payloads):
    c = conns()
    restore(c, payloads, "A", "B", "C")
    # what the two give built within their commands, one after the other
    restore(c, payloads, "A", "B", "C", as_=["A2", "B2", "C2"])
    assert c("CONFIG", "SET", INLINE, NEVER_INLINE) == "OK"
    assert c("CF.MERGE", "d2", 2, "A2", "B2") == "OK"
    assert c("CF.MERGE", "d2", 1, "C2") == "OK"
    assert c("CONFIG", "SET", INLINE, 65536) == "OK"
    want = digest(c, "d2")
    m1, m2, ctl = conns(), conns(), conns()
    id1, id2 = client_id(m1), client_id(m2)

    def run():
        m1.send("CF.MERGE", "d", 2, "A", "B")
        # the second is sent once the first is seen blocked: it waits for the first, then runs on a thread
        assert conftest.wait_for(lambda: replied(m1) or id1 in blocked(ctl))
        m2.send("CF.MERGE", "d", 1, "C")
        assert conftest.wait_for(lambda: replied(m1) or id2 in blocked(ctl))
        return m1.read(), m2.read()
    replies, entries = slowlog_around(c, run)
    assert replies == ("OK", "OK")
    assert len([e for e in entries if e[1][0].upper() == "CF.MERGE"]) == 2, entries
    assert over_bound(entries) == []
    assert digest(c, "d") == want
    assert missing(c, "d", "A", "B", "C", step=7) == 0
    assert inserted(c, "d") == 2100000


def test_a_merge_whose_client_disconnected_completes(server, conns, payloads):
    c, want, m, ctl, mid = merging_a_and_b(conns, payloads)
    w = conns()  # a write waiting for it, whose client goes too
    wid = client_id(w)
    w.send("CF.ADD", "A", "never-run")
    wait_blocked(ctl, {mid, wid}, m)
    w.close()
    m.close()
    assert conftest.wait_for(lambda: c("EXISTS", "d") == 1)
    assert digest(c, "d") == want
    assert server.alive()


# ---- replication and the AOF ----

def test_at_forms_are_refused_from_clients(server, conns):
    c = conns()
    assert c("CF.RESERVE", "s", 1000) == "OK"
    assert c("BF.RESERVE", "bs", "0.01", 1000) == "OK"
    for phase in ("BEGIN", "END"):
        assert c("CF.AT", "d", 0, "MERGE", phase, 1, "s") == \
            Error("ERR CF.AT is sent by a master to its replicas and the AOF, not by clients")
        assert c("BF.AT", "bd", 0, "MERGE", phase, 1, "bs") == \
            Error("ERR BF.AT is sent by a master to its replicas and the AOF, not by clients")
    assert c("CF.AT", "d", 0, "MERGE", "ABORT") == \
        Error("ERR CF.AT is sent by a master to its replicas and the AOF, not by clients")
    assert c("EXISTS", "d", "bd") == 0


def drop_merge_begin(server):
    """Removes the MERGE BEGIN commands from the server's AOF (incremental files): how many it removed."""
    aof = os.path.join(server.dir, "appendonlydir")
    manifest = [f for f in os.listdir(aof) if f.endswith(".manifest")]
    assert len(manifest) == 1, os.listdir(aof)
    with open(os.path.join(aof, manifest[0])) as f:
        files = [dict(zip(line.split()[::2], line.split()[1::2])) for line in f]  # file NAME seq N type i ...
    incr = [f["file"] for f in files if f.get("type") == "i"]
    dropped = 0
    for name in incr:
        path = os.path.join(aof, name)
        with open(path, "rb") as f:
            data = f.read()
        kept = b""
        for start, end, args in aof_commands(data):
            if args[0].upper() in (b"CF.AT", b"BF.AT") and [a.upper() for a in args[3:5]] == [b"MERGE", b"BEGIN"]:
                dropped += 1
            else:
                kept += data[start:end]
        with open(path, "wb") as f:
            f.write(kept)
    return dropped


def master_and_replica(make_server, master_extra=(), replica_extra=(), attach=True):
    """A master and a replica (attached and in sync unless attach is False), and a connection to each."""
    master = make_server("master", extra=("--repl-diskless-sync-delay", "0") + tuple(master_extra))
    replica = make_server("replica", extra=replica_extra)
    m, r = Raw(master.port), Raw(replica.port)
    if attach:
        assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
        replica.wait_replica_link()
    return master, replica, m, r


def test_replica_and_aof_end_with_the_masters_union(make_server, payloads):
    master, replica, m, r = master_and_replica(make_server, ("--appendonly", "yes"))
    restore(m, payloads, "A", "B", "SA", "SB", "WA", "WB")
    merging, wmerging = Raw(master.port), Raw(master.port)
    merging.send("CF.MERGE", "d", 2, "A", "B")
    wmerging.send("CF.MERGE", "wd", 2, "WA", "WB")
    assert m("BF.MERGE", "bd", 2, "SA", "SB") == "OK"
    assert merging.read() == "OK"
    assert wmerging.read() == "OK"
    assert m("WAIT", 1, 10000) == 1
    want = m("DEBUG", "DIGEST-VALUE", "d", "bd", "wd")
    assert None not in want
    assert r("DEBUG", "DIGEST-VALUE", "d", "bd", "wd") == want
    assert inserted(r, "d") == 2000000
    assert inserted(r, "wd") == 200000
    assert missing(r, "wd", "WA", "WB", step=3) == 0
    replica.kill()
    # the AOF as written: MERGE BEGIN starts the merge on a thread, END sets it
    master.restart()
    m = Raw(master.port)
    assert m("DEBUG", "DIGEST-VALUE", "d", "bd", "wd") == want
    # without the BEGIN the END builds the union within the command
    master.stop()
    assert drop_merge_begin(master) == 3
    master.start()
    m = Raw(master.port)
    assert m("DEBUG", "DIGEST-VALUE", "d", "bd", "wd") == want
    # rewritten
    assert m("BGREWRITEAOF").startswith("Background")
    master.wait_aof_rewrite()
    master.restart()
    m = Raw(master.port)
    assert m("DEBUG", "DIGEST-VALUE", "d", "bd", "wd") == want
    assert missing(m, "d", "A", "B", step=7) == 0


def sync_full(server):
    return server.client().info("stats")["sync_full"]


def test_full_sync_and_aof_rewrite_taken_mid_merge(make_server, payloads):
    # the replica's snapshot and the rewritten AOF hold the keys before the union, and their stream no MERGE
    # BEGIN: the END builds the union within the command
    master, replica, m, r = master_and_replica(make_server, ("--appendonly", "yes"), attach=False)
    restore(m, payloads, "A", "B")
    m1, ctl = Raw(master.port), Raw(master.port)
    id1 = client_id(m1)
    m1.send("CF.MERGE", "d", 2, "A", "B")
    wait_blocked(ctl, {id1}, m1)
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"

    def synced():
        assert not replied(m1), "the merge ended before the replica's full sync began"
        return sync_full(master) == 1
    assert conftest.wait_for(synced)
    assert id1 in blocked(ctl)  # the snapshot was taken before the union was set
    assert m1.read() == "OK"
    replica.wait_replica_link()
    # the full sync's child gone (its exit is reaped a little after the sync): the rewrite below starts at once
    assert conftest.wait_for(lambda: master.client().info("persistence")["rdb_bgsave_in_progress"] == 0)
    m2 = Raw(master.port)
    id2 = client_id(m2)
    m2.send("CF.MERGE", "e", 2, "B", "A")
    wait_blocked(ctl, {id2}, m2)
    assert m("BGREWRITEAOF") == "Background append only file rewriting started"
    assert id2 in blocked(ctl)  # the rewrite's child was made before the union was set
    assert m2.read() == "OK"
    assert m("WAIT", 1, 10000) == 1
    want = m("DEBUG", "DIGEST-VALUE", "d", "e")
    assert None not in want
    assert r("DEBUG", "DIGEST-VALUE", "d", "e") == want
    assert inserted(r, "d") == inserted(r, "e") == 2000000
    replica.kill()
    master.wait_aof_rewrite()
    master.restart()
    m = Raw(master.port)
    assert m("DEBUG", "DIGEST-VALUE", "d", "e") == want


def test_replica_follows_an_aborted_merge_and_one_ended_by_multi(make_server, payloads):
    master, replica, m, r = master_and_replica(make_server)
    restore(m, payloads, "A", "B", "C")
    ctl = Raw(master.port)
    # aborted: a source deleted while it runs
    m1 = Raw(master.port)
    id1 = client_id(m1)
    m1.send("CF.MERGE", "d", 2, "A", "B")
    wait_blocked(ctl, {id1}, m1)
    assert m("DEL", "B") == 1
    assert m1.read() == CHANGED
    # ended by a write in MULTI: the END goes before the write in the stream
    m2 = Raw(master.port)
    id2 = client_id(m2)
    m2.send("CF.MERGE", "e", 2, "A", "C")
    wait_blocked(ctl, {id2}, m2)
    assert m("MULTI") == "OK"
    assert m("CF.ADD", "C", "in-multi") == "QUEUED"
    assert m("CF.ADD", "e", "in-multi-e") == "QUEUED"
    assert m("EXEC") == [1, 1]
    assert m2.read() == "OK"
    assert m("WAIT", 1, 10000) == 1
    assert r("EXISTS", "d", "B") == 0
    want = m("DEBUG", "DIGEST-VALUE", "A", "C", "e")
    assert r("DEBUG", "DIGEST-VALUE", "A", "C", "e") == want
    assert inserted(r, "e") == 1100001
    assert r("CF.EXISTS", "e", "in-multi-e") == 1
    # the replica holds nothing pinned: its writes to the keys run at once
    assert r("CONFIG", "SET", "replica-read-only", "no") == "OK"
    assert r("CF.ADD", "A", "on-replica") == 1
    assert r("CF.ADD", "e", "on-replica") == 1



def test_a_write_and_a_merge_waiting_for_one_merge(server, conns, payloads):
    # when the first merge ends, the write waiting for it runs before the merge that waited after it starts on
    # a key of the write: the write must not end that merge within its command, waiting for its thread
    c = conns()
    restore(c, payloads, "A", "B", "C")
    m1, ctl = conns(), conns()
    w, m2 = conns(), conns()
    id1, wid, id2 = client_id(m1), client_id(w), client_id(m2)

    def run():
        m1.send("CF.MERGE", "d", 2, "A", "B")
        wait_blocked(ctl, {id1}, m1)
        w.send("CF.ADD", "A", "between")
        wait_blocked(ctl, {id1, wid}, m1)
        m2.send("CF.MERGE", "e", 2, "C", "A")
        wait_blocked(ctl, {id1, wid, id2}, m1)
        return m1.read(), w.read(), m2.read()
    replies, entries = slowlog_around(c, run)
    assert replies == ("OK", 1, "OK")
    assert over_bound(entries) == []
    assert inserted(c, "d") == 2000000
    assert inserted(c, "A") == 1000001
    assert inserted(c, "e") == 1100001  # the merge read A after the write


def test_merges_and_waiting_writes_in_another_database(make_server, payloads):
    # the waiting write reruns, the waiting merge starts and both replicate in the database they were sent in
    master, replica, m, r = master_and_replica(make_server)
    m1, w, m2, ctl = (Raw(master.port) for _ in range(4))
    for c in (m, r, m1, w, m2):
        assert c("SELECT", 3) == "OK"
    restore(m, payloads, "A", "B", "C")
    ids = [client_id(c) for c in (m1, w, m2)]
    m1.send("CF.MERGE", "d", 2, "A", "B")
    wait_blocked(ctl, ids[:1], m1)
    w.send("CF.ADD", "d", "waited")
    m2.send("CF.MERGE", "d", 1, "C")
    wait_blocked(ctl, ids, m1)
    assert (m1.read(), w.read(), m2.read()) == ("OK", 1, "OK")
    assert m("WAIT", 1, 10000) == 1
    assert inserted(m, "d") == 2100001
    want = m("DEBUG", "DIGEST-VALUE", "d")
    assert r("DEBUG", "DIGEST-VALUE", "d") == want
    assert r("CF.EXISTS", "d", "waited") == 1
    assert ctl("DBSIZE") == 0  # database 0
    assert Raw(replica.port)("DBSIZE") == 0


def test_replica_promoted_mid_merge_sets_the_union_itself(make_server, payloads):
    master, replica, m, r = master_and_replica(make_server, replica_extra=("--replica-read-only", "no"))
    restore(m, payloads, "A", "B")
    assert m("WAIT", 1, 10000) == 1
    m1, ctl = Raw(master.port), Raw(master.port)
    id1 = client_id(m1)
    m1.send("CF.MERGE", "d", 2, "A", "B")
    wait_blocked(ctl, {id1}, m1)
    assert ctl("WAIT", 1, 10000) == 1  # the replica has the MERGE BEGIN
    # the replica's merge holds A: a write of a client there waits
    w, rctl = Raw(replica.port), Raw(replica.port)
    wid = client_id(w)
    w.send("CF.ADD", "A", "on-replica")
    wait_blocked(rctl, {wid}, w)
    assert r("REPLICAOF", "NO", "ONE") == "OK"
    assert w.read() == 1
    assert m1.read() == "OK"
    assert r("DEBUG", "DIGEST-VALUE", "d") == m("DEBUG", "DIGEST-VALUE", "d")
    assert inserted(r, "d") == 2000000
    assert inserted(r, "A") == 1000001


def test_a_master_killed_mid_merge_completes_it_from_its_aof(make_server, payloads):
    # the AOF ends at the MERGE BEGIN (appendfsync always: written before the server does anything else); the
    # restarted server builds the merge on a thread and, a master, sets it as its own
    master = make_server("master", extra=("--appendonly", "yes", "--appendfsync", "always"))
    m = Raw(master.port)
    restore(m, payloads, "A", "B")
    want = inline_union(m, payloads, "CF.MERGE", ["A", "B"])
    m1, ctl = Raw(master.port), Raw(master.port)
    id1 = client_id(m1)
    m1.send("CF.MERGE", "d", 2, "A", "B")
    wait_blocked(ctl, {id1}, m1)
    master.kill()
    master.start()
    m = Raw(master.port)
    assert conftest.wait_for(lambda: m("EXISTS", "d") == 1)
    assert digest(m, "d") == want
    master.restart()  # and its AOF has the END now
    assert digest(Raw(master.port), "d") == want

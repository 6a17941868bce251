# SPDX-License-Identifier: BSD-3-Clause
"""repl-diskless-load swapdb: the module declares that it handles a replica loading a full sync while it serves
reads (HANDLE_REPL_ASYNC_LOAD), so such a replica answers reads of its old data during the sync, from the old
dataset, and the new one replaces it whole when the load ends. Without the declaration the server would not load
diskless at all ("modules that are not aware of async replication"). Run on each server of the suite."""
import signal

from conftest import wait_for
from resp import Raw

OLD = ["old%d" % i for i in range(500)]
NEW = ["new%d" % i for i in range(500)]


def test_replica_answers_reads_during_a_full_sync(make_server):
    """A full sync from the same master (its backlog overrun while the replica was stopped): the only case where a
    server loads asynchronously, the old dataset being an earlier state of the same one."""
    master = make_server("master", extra=("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                                          "--repl-backlog-size", "16384"))
    replica = make_server("replica", extra=("--repl-diskless-load", "swapdb"))
    m, r = Raw(master.port), Raw(replica.port)
    # a big filter among them (a 4M-capacity cuckoo filter, several MB: the replica serves reads in the middle of
    # loading it) and many small ones to make the load take a while
    m("CF.RESERVE", "big", 4000000)
    m("CF.INSERT", "big", "ITEMS", *OLD)
    m("BF.RESERVE", "bf", "0.01", 100)
    m("BF.MADD", "bf", *OLD)
    m("CF.RESERVE", "grown", 100, "EXPANSION", 2)
    m("CF.INSERT", "grown", "ITEMS", *OLD)
    m("CF.ADD", "gone", "x")
    assert r("REPLICAOF", "127.0.0.1", master.port) == "OK"
    replica.wait_replica_link()
    assert r("CF.MEXISTS", "big", *OLD) == [1] * len(OLD)
    # the next load: 20 ms a key (~4 s for its 200 keys), the replica serving clients every KB it reads
    assert r("CONFIG", "SET", "key-load-delay", 20000) == "OK"
    assert r("CONFIG", "SET", "loading-process-events-interval-bytes", 1024) == "OK"
    replica.proc.send_signal(signal.SIGSTOP)
    try:
        m("CLIENT", "KILL", "TYPE", "replica")  # what follows goes to the backlog only
        m("DEL", "gone")
        m("CF.INSERT", "big", "ITEMS", *NEW)
        m("CF.INSERT", "grown", "ITEMS", *NEW)
        m("BF.MADD", "bf", *NEW)
        for i in range(195):
            m("CF.ADD", "small%d" % i, NEW[i])
        m("SET", "filler", "x" * 100000)  # past the backlog: the replica cannot continue where it stopped
    finally:
        replica.proc.send_signal(signal.SIGCONT)
    assert wait_for(lambda: b"async_loading:1" in r("INFO", "persistence")), "the async load to start"
    reads = 0
    while True:
        i = reads % len(OLD)
        answers = [r("CF.MEXISTS", "big", *OLD[:50]), r("CF.EXISTS", "big", NEW[i]), r("BF.EXISTS", "bf", OLD[i]),
                   r("CF.EXISTS", "grown", OLD[i]), r("CF.EXISTS", "gone", "x"), r("EXISTS", "small0")]
        if b"async_loading:1" not in r("INFO", "persistence"):
            break  # the new dataset may have answered some of them
        # the old dataset answered, whole, as before the sync (a false positive of NEW[i] would be one every run)
        assert answers == [[1] * 50, 0, 1, 1, 1, 0], (i, answers)
        reads += 1
    assert r("CONFIG", "SET", "key-load-delay", 0) == "OK"
    print("%d rounds of reads answered during the load" % reads)
    assert reads >= 3  # several rounds in the ~4 s load (8 to 20 measured, fewer when the machine is busy)
    replica.wait_replica_link()
    # then the new dataset, whole
    assert r("DBSIZE") == 199
    assert r("CF.MEXISTS", "big", *OLD, *NEW) == [1] * (len(OLD) + len(NEW))
    assert r("CF.MEXISTS", "grown", *OLD, *NEW) == [1] * (len(OLD) + len(NEW))
    assert r("BF.MEXISTS", "bf", *OLD, *NEW) == [1] * (len(OLD) + len(NEW))
    assert r("EXISTS", "gone") == 0
    assert r("DEBUG", "DIGEST") == m("DEBUG", "DIGEST")

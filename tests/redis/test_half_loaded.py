# SPDX-License-Identifier: BSD-3-Clause
"""A key left half-loaded by an interrupted SCANDUMP/LOADCHUNK copy (after the header chunk only, or after some
of several data chunks) is never lost: DEBUG RELOAD, DUMP/RESTORE, COPY, a restart from RDB, a restart from a
rewritten AOF and a replica all keep it in the same state, and the copy then completes on every one of them
into the source filter. Meanwhile it refuses writes and SCANDUMP with an error that says what to do."""
import pytest

from resp import Error, Raw, scandump

ITEMS = ["item%d" % i for i in range(20000)]
SAMPLE = ITEMS[::97]


def make_source(c, kind):
    """A filter of three data chunks or more (chunks carry at most 4 MiB)."""
    if kind == "CF":
        assert c("CF.RESERVE", "src", 7000000, "BUCKETSIZE", 4) == "OK"
        c("CF.INSERT", "src", "ITEMS", *ITEMS)
    else:
        assert c("BF.RESERVE", "src", "0.0001", 5000000) == "OK"
        c("BF.MADD", "src", *ITEMS)
    chunks = scandump(c, kind, "src")
    assert len(chunks) >= 4, "header and at least three data chunks"
    return chunks


def exists(c, kind, key):
    return c(kind + ".MEXISTS", key, *SAMPLE)


def assert_half_loaded(c, kind, key):
    """The key is there, answers no item yet, refuses writes and SCANDUMP."""
    assert c("EXISTS", key) == 1
    assert exists(c, kind, key) == [0] * len(SAMPLE)
    msg = "ERR filter is still loading (%s.LOADCHUNK): send the remaining chunks, or DEL the key" % kind
    assert c(kind + ".ADD", key, "new") == Error(msg)
    assert c(kind + ".SCANDUMP", key, 0) == Error(msg)


def finish(c, kind, key, chunks, sent):
    for it, data in chunks[sent:]:
        assert c(kind + ".LOADCHUNK", key, it, data) == "OK"
    assert exists(c, kind, key) == [1] * len(SAMPLE)
    assert c("DEBUG", "DIGEST-VALUE", key) == c("DEBUG", "DIGEST-VALUE", "src")
    assert c(kind + ".ADD", key, "new") == 1


@pytest.mark.parametrize("kind", ["CF", "BF"])
@pytest.mark.parametrize("sent", [1, 3], ids=["header-only", "two-of-several-data-chunks"])
def test_every_persistence_path_keeps_a_half_loaded_key(make_server, kind, sent):
    s = make_server("s", extra=("--appendonly", "yes"))
    c = Raw(s.port)
    chunks = make_source(c, kind)
    for it, data in chunks[:sent]:
        assert c(kind + ".LOADCHUNK", "dst", it, data) == "OK"
    assert_half_loaded(c, kind, "dst")
    digest = c("DEBUG", "DIGEST-VALUE", "dst")

    assert c("DEBUG", "RELOAD") == "OK"
    assert c("DBSIZE") == 2
    assert_half_loaded(c, kind, "dst")
    assert c("DEBUG", "DIGEST-VALUE", "dst") == digest

    assert c("RESTORE", "restored", 0, c("DUMP", "dst")) == "OK"
    assert c("COPY", "dst", "copied") == 1
    for key in ("restored", "copied"):
        assert_half_loaded(c, kind, key)
        assert c("DEBUG", "DIGEST-VALUE", key) == digest
    assert c("MEMORY", "USAGE", "dst") > 0

    # restart from the rewritten AOF, then from an RDB file
    assert c("BGREWRITEAOF").startswith("Background")
    s.wait_aof_rewrite()
    s.stop(nosave=True)
    s.start()
    c = Raw(s.port)
    assert c("DBSIZE") == 4
    assert c("DEBUG", "DIGEST-VALUE", "dst") == digest
    assert c("SAVE") == "OK"
    s.stop(nosave=True)
    s.extra = ["--appendonly", "no"]
    s.start()
    c = Raw(s.port)
    assert c("DBSIZE") == 4
    for key in ("dst", "restored", "copied"):
        assert_half_loaded(c, kind, key)
        assert c("DEBUG", "DIGEST-VALUE", key) == digest
        finish(c, kind, key, chunks, sent)  # the copy continues where it stopped
    assert c("DEL", "dst") == 1


@pytest.mark.parametrize("kind", ["CF", "BF"])
@pytest.mark.parametrize("sent", [1, 3], ids=["header-only", "two-of-several-data-chunks"])
def test_a_replica_keeps_a_half_loaded_key_and_follows_the_rest(make_server, kind, sent):
    master = make_server("master")
    c = Raw(master.port)
    chunks = make_source(c, kind)
    for it, data in chunks[:sent]:
        assert c(kind + ".LOADCHUNK", "dst", it, data) == "OK"
    replica = make_server("replica", extra=("--replicaof", "127.0.0.1", str(master.port)))
    rc = Raw(replica.port)
    replica.wait_replica_link()  # the full sync carries the half-loaded key in the RDB
    assert rc("DEBUG", "DIGEST-VALUE", "dst") == c("DEBUG", "DIGEST-VALUE", "dst")
    finish(c, kind, "dst", chunks, sent)
    assert c("WAIT", 1, 10000) == 1
    assert rc("DEBUG", "DIGEST-VALUE", "dst") == c("DEBUG", "DIGEST-VALUE", "dst")
    assert exists(rc, kind, "dst") == [1] * len(SAMPLE)


def test_a_damaged_chunk_is_refused_and_the_copy_continues(server):
    c = Raw(server.port)
    c("CF.RESERVE", "src", 1000)
    c("CF.ADD", "src", "a")
    chunks = scandump(c, "CF", "src")
    assert len(chunks) == 2
    assert c("CF.LOADCHUNK", "dst", *chunks[0]) == "OK"
    bad = bytearray(chunks[1][1])
    bad[len(bad) // 2] ^= 1  # the chunk's own checksum catches this: refused, nothing changes
    assert c("CF.LOADCHUNK", "dst", chunks[1][0], bytes(bad)) == Error("Couldn't load chunk!")
    assert c("EXISTS", "dst") == 1
    assert c("CF.LOADCHUNK", "dst", *chunks[1]) == "OK"
    assert c("CF.EXISTS", "dst", "a") == 1

# SPDX-License-Identifier: BSD-3-Clause
"""SCANDUMP's running checksum: the chunk that carries a large filter's checksum takes it from a checksum kept
from chunk to chunk (O(1)) when every chunk before it was read in order with no write between, and hashes the
filter whole otherwise. The bytes are the same either way, and LOADCHUNK takes them. INFO nidus counts which way
each checksum chunk went (nidus_checksums_summed, nidus_checksums_hashed). Keys of each of the four types, each
past one data chunk (4 MiB)."""
import pytest
import redis

from conftest import Server, wait_for

DAY = 86400000  # a window no sweep step falls inside during a test

KINDS = {
    "cf": ("CF", ["CF.RESERVE", "k", 8000000]),
    "bf": ("BF", ["BF.RESERVE", "k", 0.01, 6000000]),
    "cw": ("CF", ["CF.RESERVE", "k", 5000000, "WINDOW", DAY]),
    "bw": ("BF", ["BF.RESERVE", "k", 0.01, 6000000, "WINDOW", DAY]),
}


def make(r, kind, key="k"):
    family, reserve = KINDS[kind]
    assert r.execute_command(reserve[0], key, *reserve[2:])
    r.execute_command(family + ".INSERT", key, "ITEMS", *["item%d" % i for i in range(5000)])
    return family


def counts(r):
    info = r.info("nidus")
    return info["nidus_checksums_summed"], info["nidus_checksums_hashed"]


def chunk(r, family, key, cursor):
    nxt, data = r.execute_command(family + ".SCANDUMP", key, cursor)
    return int(nxt), data


def in_order(r, family, key="k", cursor=0):
    """Every chunk from `cursor` (the header's, 0) on: [(cursor, next, data)], the empty reply past the last one
    excluded."""
    out = []
    while True:
        nxt, data = chunk(r, family, key, cursor)
        if nxt == 0:
            return out
        out.append((cursor, nxt, data))
        cursor = nxt


def load(r, family, chunks, key):
    for _, nxt, data in chunks:
        r.execute_command(family + ".LOADCHUNK", key, nxt, data)


def delta(before, after):
    return after[0] - before[0], after[1] - before[1]


@pytest.fixture(params=sorted(KINDS))
def kind(request):
    return request.param


def test_in_order_is_summed_and_loads(r, kind):
    family = make(r, kind)
    before = counts(r)
    chunks = in_order(r, family)
    assert len(chunks) >= 3  # a header and at least two data chunks
    summed, hashed = delta(before, counts(r))
    assert summed >= 1 and hashed == 0
    load(r, family, chunks, "copy")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "k") == r.execute_command("DEBUG", "DIGEST-VALUE", "copy")
    # the key unchanged: any order now reads the checksum from the complete sum, the same bytes
    before = counts(r)
    again = [(c, *chunk(r, family, "k", c)) for c, _, _ in reversed(chunks)]
    assert list(reversed(again)) == chunks
    summed, hashed = delta(before, counts(r))
    assert summed >= 1 and hashed == 0


def test_out_of_order_hashes_whole_and_gives_the_same_bytes(r, kind):
    family = make(r, kind)
    n = len(in_order(r, family))  # the sum is complete after this ...
    r.execute_command(family + ".INSERT", "k", "ITEMS", "one more")  # ... and forgotten by this write
    before = counts(r)
    backwards = [(c, *chunk(r, family, "k", c)) for c in reversed(range(n))]
    summed, hashed = delta(before, counts(r))
    assert summed == 0 and hashed >= 1  # the checksum chunk came first: nothing summed yet
    before = counts(r)
    forwards = in_order(r, family)
    assert forwards == list(reversed(backwards))
    summed, hashed = delta(before, counts(r))
    assert summed >= 1 and hashed == 0
    # after another write, chunk 1 skipped: hashed whole, the same bytes
    r.execute_command(family + ".INSERT", "k", "ITEMS", "another")
    before = counts(r)
    skipped = [(c, *chunk(r, family, "k", c)) for c in range(n) if c != 1]
    summed, hashed = delta(before, counts(r))
    assert summed == 0 and hashed >= 1
    reference = in_order(r, family)
    assert skipped == [x for x in reference if x[0] != 1]
    load(r, family, reference, "copy")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "k") == r.execute_command("DEBUG", "DIGEST-VALUE", "copy")


def test_write_between_chunks_is_hashed_and_the_torn_copy_refused(r, kind):
    family = make(r, kind)
    first = [(c, *chunk(r, family, "k", c)) for c in (0, 1)]
    r.execute_command(family + ".INSERT", "k", "ITEMS", "written between")
    before = counts(r)
    rest = in_order(r, family, cursor=2)
    summed, hashed = delta(before, counts(r))
    assert summed == 0 and hashed >= 1  # the write forgot the sum: no checksum vouches for the torn copy
    fresh = in_order(r, family)
    assert rest == fresh[2:]  # the chunks read after the write are the filter's as it is now
    with pytest.raises(redis.ResponseError):
        load(r, family, first + rest, "torn")
    # refused as it landed (a chunk of another filter, or the whole checksum): the key never became a filter
    assert not r.exists("torn") or r.execute_command(family + ".EXISTS", "torn", "item0") == 0
    if r.exists("torn"):
        with pytest.raises(redis.ResponseError, match="still loading"):
            r.execute_command(family + ".ADD", "torn", "x")
    load(r, family, fresh, "copy")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "k") == r.execute_command("DEBUG", "DIGEST-VALUE", "copy")


def test_interleaved_clients_share_the_sum(server, kind):
    a, b = server.client(), server.client()
    family = make(a, kind)
    before = counts(a)
    cursor, got_a, got_b = 0, [], []
    while True:  # both read in order, a chunk each in turn
        na, da = chunk(a, family, "k", cursor)
        nb, db = chunk(b, family, "k", cursor)
        if na == 0:
            break
        got_a.append((cursor, na, da))
        got_b.append((cursor, nb, db))
        cursor = na
    assert got_a == got_b
    summed, hashed = delta(before, counts(a))
    assert summed >= 2 and hashed == 0


def test_a_key_freed_and_made_again_forgets_the_sum(r, kind):
    """UNLINK frees the filter on the server's background thread (it is past 1 MiB); an identical filter made
    again may take its address: the sum begun on the old one must not serve the new one."""
    family = make(r, kind, "ref")
    n = len(in_order(r, family, "ref"))
    make(r, kind)
    first = [(c, *chunk(r, family, "k", c)) for c in (0, 1)]
    r.unlink("k")
    wait_for(lambda: int(r.info("memory")["lazyfree_pending_objects"]) == 0)
    make(r, kind)
    before = counts(r)
    rest = [(c, *chunk(r, family, "k", c)) for c in range(2, n)]
    summed, hashed = delta(before, counts(r))
    assert summed == 0 and hashed >= 1
    if kind in ("cf", "bf"):  # an identical filter: the same bytes (a windowed one holds its adds' times)
        assert first + rest == in_order(r, family)


def test_restart_between_chunks(tmp_path, kind):
    s = Server(tmp_path / "s", extra=("--appendonly", "yes"))
    try:
        r = s.client()
        family = make(r, kind)
        first = [(c, *chunk(r, family, "k", c)) for c in (0, 1)]
        s.restart()  # from its AOF: the same filter, no sum
        r = s.client()
        before = counts(r)
        rest = in_order(r, family, cursor=2)
        summed, hashed = delta(before, counts(r))
        assert summed == 0 and hashed >= 1
        assert first + rest == in_order(r, family)
        load(r, family, first + rest, "copy")
        assert r.execute_command("DEBUG", "DIGEST-VALUE", "k") == r.execute_command("DEBUG", "DIGEST-VALUE", "copy")
    finally:
        s.kill()

# SPDX-License-Identifier: BSD-3-Clause
"""Lazy free: the types' free_effort makes the server free a large filter on its background thread (UNLINK,
FLUSHALL ASYNC, lazyfree-lazy-user-del) and a small one at once, as it does its own large values. The server
counts what its background thread freed in INFO memory's lazyfreed_objects (every server tested has it)."""
import math
import time

import pytest

import rb_payload as P

# Bytes that make a value's free effort pass the server's LAZYFREE_THRESHOLD (64) several times over: one unit of
# effort a 16 KiB (redis/types.h, MOD_FREE_EFFORT_BYTES), so 4 MiB is 256.
LARGE = 4 << 20


def memory(r):
    return r.info("memory")


def freed(r):
    return int(memory(r)["lazyfreed_objects"])


def wait_freed(r, before, n=1):
    for _ in range(200):
        if freed(r) >= before + n and int(memory(r)["lazyfree_pending_objects"]) == 0:
            return
        time.sleep(0.02)
    raise AssertionError("the background thread freed %d objects, expected %d" % (freed(r) - before, n))


def rb_cf_payload(buckets):
    """A RedisBloom cuckoo filter (encoding 4): one empty sub-filter of `buckets` buckets of 2."""
    return P.build("MBbloomCF", 4, [P.U(1), P.U(buckets), P.U(0), P.U(0), P.U(2), P.U(20), P.U(1),
                                    P.U(buckets), P.S(b"\0" * (2 * buckets))])


def rb_bf_payload(nbytes):
    """A RedisBloom Bloom filter (encoding 4): one empty layer of `nbytes` bytes at 1 % (NOROUND, FORCE64)."""
    bpe = -math.log(0.01) / math.log(2) ** 2
    hashes = math.ceil(math.log(2) * bpe)
    entries = int(nbytes * 8 / bpe)
    return P.build("MBbloom--", 4, [P.U(0), P.U(1), P.U(1 | 4), P.U(2), P.U(entries), P.D(0.01), P.U(hashes),
                                    P.D(bpe), P.U(nbytes * 8), P.U(0), P.S(b"\0" * nbytes), P.U(0)])


def make(r, kind, key, large):
    """A key of one of the four types the module registers, `large` (past the lazy-free threshold) or small."""
    if kind == "cf":
        r.execute_command("CF.RESERVE", key, LARGE if large else 100)
        r.execute_command("CF.ADD", key, "x")
    elif kind == "bf":
        r.execute_command("BF.RESERVE", key, 0.01, LARGE if large else 100)
        r.execute_command("BF.ADD", key, "x")
    elif kind == "rb_cf":
        r.restore(key, 0, rb_cf_payload(LARGE // 2 if large else 64))
    else:
        r.restore(key, 0, rb_bf_payload(LARGE if large else 64))


KINDS = ["cf", "bf", "rb_cf", "rb_bf"]


@pytest.mark.parametrize("kind", KINDS)
def test_unlink_frees_a_large_filter_in_the_background(r, kind):
    make(r, kind, "small", large=False)
    make(r, kind, "big", large=True)
    assert int(r.memory_usage("big")) > LARGE
    before = freed(r)
    assert r.unlink("small") == 1
    assert freed(r) == before, "a small filter is freed at once, not queued"
    used = int(memory(r)["used_memory"])
    assert r.unlink("big") == 1
    wait_freed(r, before)
    assert int(memory(r)["used_memory"]) < used - LARGE // 2, "the large filter's memory came back"


@pytest.mark.parametrize("kind", ["cf", "bf"])
def test_lazyfree_lazy_user_del_frees_large_filters_in_the_background(r, kind):
    r.config_set("lazyfree-lazy-user-del", "yes")
    make(r, kind, "big", large=True)
    make(r, kind, "small", large=False)
    before = freed(r)
    assert r.delete("small") == 1
    assert freed(r) == before
    assert r.delete("big") == 1
    wait_freed(r, before)


def test_flushall_async_frees_filters_in_the_background(r):
    for kind in KINDS:
        make(r, kind, kind, large=True)
    used = int(memory(r)["used_memory"])
    before = freed(r)
    assert r.flushall(asynchronous=True)
    assert r.dbsize() == 0
    wait_freed(r, before, len(KINDS))
    assert int(memory(r)["used_memory"]) < used - 3 * LARGE


def test_a_large_filter_overwritten_is_freed_in_the_background(r):
    """lazyfree-lazy-server-del: a value the server drops itself (RESTORE ... REPLACE over it) goes the same way."""
    r.config_set("lazyfree-lazy-server-del", "yes")
    make(r, "cf", "big", large=True)
    make(r, "cf", "other", large=False)
    small = r.dump("other")
    before = freed(r)
    r.restore("big", 0, small, replace=True)
    wait_freed(r, before)
    assert int(r.memory_usage("big")) < 4096 and r.execute_command("CF.EXISTS", "big", "x") == 1

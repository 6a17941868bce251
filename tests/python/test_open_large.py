# SPDX-License-Identifier: BSD-3-Clause
"""nidus.open maps a file without reading it: a 200M-capacity file (hundreds of MB) opens in under 50 ms with
resident memory growing by under 20 MB, answers lookups by reading only the blocks they touch, and a damaged
block is caught when first read (nidus.CorruptFile), never answered from."""
import os
import time

import pytest

import nidus
from cli_util import BLOCK, run
from conftest import statm_resident_bytes

MB = 1 << 20


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A cuckoo filter file of capacity 200M made by the CLI (its memory is not this process's), a few keys in."""
    path = str(tmp_path_factory.mktemp("big") / "big.nidus")
    run("create", path, "--capacity", "200000000", check_rc=0)
    run("add", path, "alpha", "beta", "gamma", check_rc=0)
    yield path
    os.unlink(path)


def test_200m_file_opens_in_under_50ms_and_20mb(big):
    size = os.path.getsize(big)
    assert size > 200 * MB
    before = statm_resident_bytes()
    t = time.perf_counter()
    f = nidus.open(big)
    took = time.perf_counter() - t
    grew = statm_resident_bytes() - before
    print("file %d MB: open %.2f ms, resident +%.2f MB" % (size // MB, took * 1e3, grew / MB))
    assert took < 0.050
    assert grew < 20 * MB
    # lookups read the blocks they touch, not the file
    assert "alpha" in f and "beta" in f and "gamma" in f
    assert sum(f.contains_many(["absent-%d" % i for i in range(300)])) <= 10
    s = f.stats()
    assert s["capacity"] >= 200000000 and s["items"] == 3
    assert s["blocks_checked"] < size // BLOCK // 2
    grew = statm_resident_bytes() - before
    print("after 303 lookups: resident +%.2f MB, %d blocks checked" % (grew / MB, s["blocks_checked"]))
    assert grew < 60 * MB


def test_writable_open_is_lazy_too(big):
    before = statm_resident_bytes()
    t = time.perf_counter()
    f = nidus.open(big, writable=True)
    took = time.perf_counter() - t
    assert took < 0.050 and statm_resident_bytes() - before < 20 * MB
    f.add("delta")
    assert "delta" in f and "alpha" in f


def damage(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x40]))


def test_damaged_block_raises_corrupt_file_when_read(tmp_path):
    f = nidus.CuckooFilter(2000000)
    ks = ["k%d" % i for i in range(100000)]
    f.update(ks)
    path = str(tmp_path / "f.nidus")
    f.save(path)
    blocks = os.path.getsize(path) // BLOCK
    assert blocks >= 10
    damage(path, 5 * BLOCK + 100)
    with pytest.raises(nidus.CorruptFile):
        nidus.from_bytes(open(path, "rb").read())
    g = nidus.open(path)  # lazy: block 5 is not read yet
    with pytest.raises(nidus.CorruptFile):
        g.contains_many(ks)  # touches every block
    with pytest.raises(nidus.CorruptFile):
        "k1" in g  # and the object stays refused
    with pytest.raises(nidus.CorruptFile):
        g.save(str(tmp_path / "copy.nidus"))
    # one-key calls find it too
    h = nidus.open(path, writable=True)
    with pytest.raises(nidus.CorruptFile):
        for k in ks:
            if k not in h:
                raise AssertionError("a false negative from an unchecked block")
    run("verify", path, check_rc=2)


def test_damaged_header_fails_the_open(tmp_path):
    f = nidus.BloomFilter(3000000)
    path = str(tmp_path / "f.nidus")
    f.save(path)
    damage(path, 20)
    with pytest.raises(nidus.CorruptFile):
        nidus.open(path)
    f.save(path)
    damage(path, os.path.getsize(path) - 50)  # the block table / footer
    with pytest.raises(nidus.CorruptFile):
        nidus.open(path)


def test_many_open_files(tmp_path):
    f = nidus.CuckooFilter(500000)
    f.update(["k%d" % i for i in range(1000)])
    path = str(tmp_path / "f.nidus")
    f.save(path)
    maps = [nidus.open(path) for _ in range(300)]  # past the lazily checked slots: checked whole at open
    assert all("k5" in m for m in maps)
    del maps
    assert "k7" in nidus.open(path)

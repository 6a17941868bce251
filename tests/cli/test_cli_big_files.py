# SPDX-License-Identifier: BSD-3-Clause
"""Files of many blocks (format version 2): check/count/info read and verify only the blocks they touch, a
damaged block is reported before any answer it could falsify, `verify` checks everything, and version 1 files
are still read. Timings and memory on a 1 GB file: docs/BENCHMARKS.md."""
import json
import os
import shutil
import subprocess

import pytest

from cli_util import NIDUS, FIXTURES, BLOCK, FOOTER, run


def layout(path):
    data = open(path, "rb").read()
    assert data[:5] == b"NIDUS" and data[5] == 8  # framed files: 2, 4 since Bloom layer layouts, 6 since cuckoo range placement, 8 since cuckoo stash entries
    footer = data[-FOOTER:]
    assert footer[:8] == b"NIDUSBLK"
    body = int.from_bytes(footer[16:24], "little")
    blocks = int.from_bytes(footer[24:32], "little")
    return body, blocks


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    keys = d / "keys.txt"
    keys.write_bytes(b"".join(b"key-%d\n" % i for i in range(100000)))
    f = str(d / "big.nidus")
    run("build", f, "--from", keys, "--capacity", 10000000, "--force", check_rc=0)  # ~13 MB, ~200 blocks
    return f, str(keys)


def damaged(src, dst, offsets):
    shutil.copy(src, dst)
    with open(dst, "r+b") as out:
        for at in offsets:
            out.seek(at)
            b = out.read(1)
            out.seek(at)
            out.write(bytes([b[0] ^ 0x10]))


def test_many_blocks_answer_and_verify(big):
    f, keys = big
    body, blocks = layout(f)
    assert blocks == (body + BLOCK - 1) // BLOCK and blocks > 100
    assert run("check", f, "key-0", "key-99999", "absent").stdout.splitlines()[:2] == [b"1", b"1"]
    assert run("count", f, "key-5", check_rc=0).stdout == b"1\n"
    info = json.loads(run("info", f, "--json", check_rc=0).stdout)
    assert info["items"] == 100000 and info["memory_bytes"] > body // 2
    assert run("verify", f, check_rc=0).stdout == f.encode() + b": ok\n"
    p = subprocess.run([NIDUS, "check", f], stdin=open(keys, "rb"), capture_output=True)
    assert p.returncode == 0 and p.stdout == b"1\n" * 100000


def test_a_damaged_block_is_reported_before_a_wrong_answer(big, tmp_path):
    f, keys = big
    body, blocks = layout(f)
    bad = str(tmp_path / "bad.nidus")
    damaged(f, bad, [BLOCK * (blocks // 2) + 1234])
    # every key: some key's bucket is in that block, so the command stops with exit 2 and prints no answer
    p = subprocess.run([NIDUS, "check", bad], stdin=open(keys, "rb"), capture_output=True)
    assert p.returncode == 2 and p.stdout == b""
    k = blocks // 2
    where = "block %d of %d (bytes %d-%d) does not match its checksum" % (k, blocks, k * BLOCK, (k + 1) * BLOCK - 1)
    assert p.stderr == ("nidus: %s: corrupt: %s\n" % (bad, where)).encode()
    assert run("verify", bad, check_rc=2).stderr == (
        "nidus: %s: corrupt: %s (damaged blocks: 1 of %d)\n" % (bad, where, blocks)).encode()
    # a few keys: either their blocks are intact and the answers right, or the command fails
    for i in range(0, 100000, 9973):
        p = run("check", bad, "key-%d" % i)
        assert (p.returncode, p.stdout) in ((0, b"1\n"), (2, b"")), p
    # every middle block damaged: no key can be answered
    damaged(f, bad, [BLOCK * k + 7 for k in range(1, blocks - 1)])
    for i in range(0, 100000, 9973):
        assert run("check", bad, "key-%d" % i, check_rc=2).stdout == b""
        assert run("count", bad, "key-%d" % i, check_rc=2).stdout == b""
    # the header, the block table, the footer
    for at in (3, 30, body + 5, os.path.getsize(f) - 1):
        damaged(f, bad, [at])
        for cmd in (["check", bad, "key-1"], ["info", bad], ["verify", bad], ["add", bad, "x"]):
            assert run(*cmd).returncode == 2


def test_version_1_files_are_read_and_rewritten_as_version_2(tmp_path):
    for kind in ("cuckoo", "bloom", "counting-bloom", "cuckoo-semisort-grown"):
        src = os.path.join(FIXTURES, "v1-%s.nidus" % kind)
        assert open(src, "rb").read()[5] == 1
        keys = b"".join(b"key-%d\n" % i for i in range(1, 501))
        assert run("check", src, input=keys, check_rc=0).stdout == b"1\n" * 500
        assert run("verify", src, check_rc=0).stdout.endswith(b": ok\n")
        assert json.loads(run("info", src, "--json", check_rc=0).stdout)["items"] == 500
        f = str(tmp_path / ("%s.nidus" % kind))
        shutil.copy(src, f)
        run("add", f, "new-key", check_rc=0)
        assert open(f, "rb").read()[5] == 8  # the framed version this build writes
        assert run("check", f, input=keys + b"new-key\n", check_rc=0).stdout == b"1\n" * 501


def changed_blocks(a, b):
    x, y = open(a, "rb").read(), open(b, "rb").read()
    assert len(x) == len(y)
    return {i // BLOCK for i in range(0, len(x), 64) if x[i:i + 64] != y[i:i + 64]}


def test_add_and_del_patch_only_the_blocks_they_touch(big, tmp_path):
    src, keys = big
    f = str(tmp_path / "f.nidus")
    shutil.copy(src, f)
    os.chmod(f, 0o640)
    body, blocks = layout(f)
    run("add", f, "new-1", "new-2", "new-3", check_rc=0)
    touched = changed_blocks(src, f)
    # the header block, at most two buckets' blocks a key (no kicks at this load), the block table's blocks
    assert 0 in touched and len(touched) <= 1 + 6 + 2, touched
    assert os.stat(f).st_mode & 0o777 == 0o640
    assert run("verify", f, check_rc=0).stdout.endswith(b": ok\n")
    assert run("check", f, "new-1", "new-2", "new-3", "key-0").stdout == b"1\n1\n1\n1\n"
    assert json.loads(run("info", f, "--json").stdout)["items"] == 100003
    run("del", f, "new-2", "key-0", check_rc=0)
    assert run("check", f, "new-1", "new-2", "key-1").stdout == b"1\n0\n1\n"
    assert run("verify", f, check_rc=0).returncode == 0
    p = subprocess.run([NIDUS, "check", f], stdin=open(keys, "rb"), capture_output=True)
    assert p.stdout.count(b"1\n") >= 99999  # key-0 deleted, every other key still there
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


def test_a_write_that_grows_the_filter_writes_it_whole(tmp_path):
    f = str(tmp_path / "grow.nidus")
    lines = [b"g-%d\n" % i for i in range(200000)]
    keys = b"".join(lines)
    run("create", f, "--capacity", 200000, "--fingerprint-bits", 8, "--expansion", 2, check_rc=0)
    assert layout(f)[1] >= 3
    run("add", f, input=b"".join(lines[:100000]), check_rc=0)  # in place
    run("add", f, input=b"".join(lines[100000:] + lines[:100000]), check_rc=0)  # grows: a new sub-filter
    info = json.loads(run("info", f, "--json").stdout)
    assert len(info["sub_filters"]) >= 2 and info["items"] == 300000
    assert run("verify", f, check_rc=0).returncode == 0
    assert run("check", f, input=keys, check_rc=0).stdout == b"1\n" * 200000


def test_kill_9_during_an_in_place_add_leaves_the_old_or_the_new_file(big, tmp_path):
    src, _ = big
    f = str(tmp_path / "k.nidus")
    shutil.copy(src, f)
    old = open(f, "rb").read()
    import random
    import signal
    import time
    rng = random.Random(16)
    for attempt in range(12):
        p = subprocess.Popen([NIDUS, "add", f, "kill-%d" % attempt], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.03))
        p.send_signal(signal.SIGKILL)
        p.wait()
        now = open(f, "rb").read()
        assert run("verify", f).returncode == 0
        if now != old:  # the add finished: the new file is whole, with the key
            assert run("check", f, "kill-%d" % attempt).stdout == b"1\n"
            old = now
        for n in os.listdir(tmp_path):
            if ".tmp-" in n:
                os.unlink(os.path.join(tmp_path, n))


@pytest.mark.parametrize("kind", ["bloom", "counting-bloom"])
def test_bloom_kinds_are_patched_in_place_too(tmp_path, kind):
    f = str(tmp_path / "b.nidus")
    capacity = 300000 if kind == "counting-bloom" else 3000000  # compact Bloom: k blocks a key, so more blocks
    run("create", f, "--type", kind, "--capacity", capacity, "--error", "0.001", check_rc=0)
    assert layout(f)[1] >= 3
    before = str(tmp_path / "before.nidus")
    shutil.copy(f, before)
    run("add", f, "x", "y", check_rc=0)
    body, blocks = layout(f)
    # header, the blocks a key touches (one; k for the default compact Bloom layout), the block table
    per_key = 1 if kind == "counting-bloom" else json.loads(run("info", f, "--json").stdout)["parameters"]["hashes"]
    assert len(changed_blocks(before, f)) <= 1 + 2 * per_key + 2 < layout(f)[1]
    assert run("check", f, "x", "y", "z").stdout == b"1\n1\n0\n"
    assert json.loads(run("info", f, "--json").stdout)["items"] == 2
    if kind == "counting-bloom":
        run("del", f, "x", check_rc=0)
        assert run("check", f, "x", "y").stdout == b"0\n1\n"
    assert run("verify", f, check_rc=0).returncode == 0

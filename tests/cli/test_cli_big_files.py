"""Files of many blocks (format version 2): check/count/info read and verify only the blocks they touch, a
damaged block is reported before any answer it could falsify, `verify` checks everything, and version 1 files
are still read (issue 16 "Big files"). Timings and memory on a 1 GB file: docs/BENCHMARKS.md."""
import json
import os
import shutil
import subprocess

import pytest

NIDUS = os.environ.get("NIDUS_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "nidus"))
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
BLOCK = 65536
FOOTER = 40


def run(*args, input=None, check_rc=None):
    p = subprocess.run([NIDUS, *map(str, args)], input=input, capture_output=True, timeout=300)
    if check_rc is not None:
        assert p.returncode == check_rc, (p.returncode, p.stdout, p.stderr)
    return p


def layout(path):
    data = open(path, "rb").read()
    assert data[:5] == b"NIDUS" and data[5] == 2
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
    assert p.stderr == ("nidus: %s: corrupt: a block fails its checksum\n" % bad).encode()
    assert run("verify", bad, check_rc=2).stderr.count(b"\n") == 1
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
        assert open(f, "rb").read()[5] == 2
        assert run("check", f, input=keys + b"new-key\n", check_rc=0).stdout == b"1\n" * 501

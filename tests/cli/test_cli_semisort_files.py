# SPDX-License-Identifier: BSD-3-Clause
"""Semi-sorted filter files are lazily verified like plain ones: check/count/info/add
read only the blocks they touch (no scan of the ranks on open; plain files are held to the same), a damaged block is still reported before an
answer, and a file whose slots hold garbage under valid checksums (ranks no bucket encodes to) gives answers,
possibly wrong, but no crash, in every command; `verify` still refuses it. Figures on a 1 GB file:
docs/BENCHMARKS.md."""
import ctypes
import json
import os
import random
import shutil
import subprocess
import tempfile

import pytest

from cli_util import NIDUS, FOOTER, run, le

KEYS = 100000

_xxh = ctypes.CDLL("libxxhash.so.0")
_xxh.XXH3_64bits.restype = ctypes.c_uint64
_xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def xxh3(b):
    return _xxh.XXH3_64bits(bytes(b), len(b))


def layout(data):
    """(body bytes, blocks, block bytes, where the slots of the one table begin) of a version 2 file."""
    footer = data[-FOOTER:]
    assert footer[:8] == b"NIDUSBLK"
    prefix = 20 + le(data[16:20])
    return le(footer[16:24]), le(footer[24:32]), le(footer[8:12]), prefix


def resign(data):
    """Recomputes every block checksum and the header checksum: the file a forger would write."""
    body, blocks, block, prefix = layout(data)
    for k in range(blocks):
        data[body + 8 * k:body + 8 * k + 8] = xxh3(data[k * block:min((k + 1) * block, body)]).to_bytes(8, "little")
    head = bytes(data[:prefix]) + bytes(data[body:body + 8 * blocks + FOOTER - 8])
    data[-8:] = xxh3(head).to_bytes(8, "little")


def run_rss(*args):
    """(exit status, stdout, max resident KB) of one command. GNU time forks it: a child forked by this Python
    process would count the parent's pages in its peak (fork copies the mapping, exec keeps the high mark)."""
    with tempfile.NamedTemporaryFile() as rss:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, NIDUS, *map(str, args)],
                           capture_output=True, timeout=300)
        return p.returncode, p.stdout, int(open(rss.name).read().split()[-1])


def build_pair(d, keys, *options):
    """A ~34 MB file of KEYS keys and a small one of the same shape."""
    big, small = str(d / "big.nidus"), str(d / "small.nidus")
    run("build", big, "--from", keys, "--capacity", 30000000, *options, check_rc=0)  # ~520 blocks
    run("build", small, "--from", keys, "--capacity", KEYS, *options, check_rc=0)
    info = json.loads(run("info", big, "--json", check_rc=0).stdout)
    assert info["parameters"]["semi_sort"] is bool(options) and len(info["sub_filters"]) == 1
    return big, small


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    k = tmp_path_factory.mktemp("keys") / "keys.txt"
    k.write_bytes(b"".join(b"key-%d\n" % i for i in range(KEYS)))
    return str(k)


@pytest.fixture(scope="module", params=["semi-sorted", "plain"])
def kinds(request, tmp_path_factory, keys):
    options = ["--semi-sort"] if request.param == "semi-sorted" else []
    return build_pair(tmp_path_factory.mktemp(request.param), keys, *options)


@pytest.fixture(scope="module")
def files(tmp_path_factory, keys):
    return (*build_pair(tmp_path_factory.mktemp("ss"), keys, "--semi-sort"), keys)


def test_reads_and_writes_touch_only_a_few_blocks(kinds, tmp_path):
    big, small = kinds
    size = os.path.getsize(big)
    assert size > 30 << 20
    # Resident memory beside the same command on a small file of the same kind: validating the ranks on open
    # would read every page of the mapping (the whole 34 MB); a few touched blocks are well under 8 MB.
    for cmd in (["check", "key-1", "key-77", "key-99999", "nope"], ["count", "key-5"], ["info"]):
        rc, out, rss = run_rss(cmd[0], big, *cmd[1:])
        rc0, out0, rss0 = run_rss(cmd[0], small, *cmd[1:])
        assert rc == rc0 == 0, (cmd, rc, rc0)
        assert rss - rss0 < 8 << 10, (cmd, rss, rss0)
    assert run("check", big, "key-1", "key-77", "key-99999").stdout == b"1\n1\n1\n"
    f, s = str(tmp_path / "f.nidus"), str(tmp_path / "s.nidus")
    shutil.copy(big, f)
    shutil.copy(small, s)
    rc, _, rss = run_rss("add", f, "new-1", "new-2", "new-3")
    rc0, _, rss0 = run_rss("add", s, "new-1", "new-2", "new-3")
    assert rc == rc0 == 0 and rss - rss0 < 8 << 10, (rss, rss0)
    assert run("check", f, "new-1", "new-2", "new-3", "key-0").stdout == b"1\n1\n1\n1\n"
    assert run("verify", f, check_rc=0).stdout.endswith(b": ok\n")


def test_a_damaged_block_is_reported_before_a_wrong_answer(files, tmp_path):
    big, _, keys = files
    data = bytearray(open(big, "rb").read())
    body, blocks, block, _ = layout(data)
    bad = str(tmp_path / "bad.nidus")
    data[block * (blocks // 2) + 1234] ^= 0x10
    open(bad, "wb").write(data)
    # every key: some key's bucket is in that block, so the command stops with exit 2 before any answer
    p = subprocess.run([NIDUS, "check", bad], stdin=open(keys, "rb"), capture_output=True)
    assert p.returncode == 2 and p.stdout == b"", (p.returncode, p.stderr)
    k = blocks // 2
    where = "block %d of %d (bytes %d-%d) does not match its checksum" % (k, blocks, k * block, (k + 1) * block - 1)
    assert p.stderr == ("nidus: %s: corrupt: %s\n" % (bad, where)).encode()
    assert run("verify", bad, check_rc=2).stderr == (
        "nidus: %s: corrupt: %s (damaged blocks: 1 of %d)\n" % (bad, where, blocks)).encode()
    # a few keys: right answers from intact blocks, or the command fails
    for i in range(0, KEYS, 997):
        for cmd in ("check", "count"):
            p = run(cmd, bad, "key-%d" % i)
            assert (p.returncode, p.stdout) in ((0, b"1\n"), (2, b"")), p
    # every middle block damaged: no key can be answered, nor added
    for k in range(1, blocks - 1):
        data[block * k + 7] ^= 0x10
    open(bad, "wb").write(data)
    for i in range(0, KEYS, 9973):
        for cmd in ("check", "count", "add"):
            assert run(cmd, bad, "key-%d" % i, check_rc=2).stdout == b""


def test_garbage_ranks_under_valid_checksums_crash_nothing(files, tmp_path):
    big, _, keys = files
    data = bytearray(open(big, "rb").read())
    body, blocks, block, prefix = layout(data)
    assert prefix < block
    # one middle block all ones (every rank 4095, which no bucket encodes to), another random bytes
    rng = random.Random(1616)
    a, b = blocks // 3, 2 * blocks // 3
    data[a * block:(a + 1) * block] = b"\xff" * block
    data[b * block:(b + 1) * block] = bytes(rng.getrandbits(8) for _ in range(block))
    resign(data)
    f = str(tmp_path / "forged.nidus")
    open(f, "wb").write(data)
    p = run("verify", f, check_rc=2)  # the full validation sees the ranks
    assert p.stderr.decode() == (
        "nidus: %s: corrupt: the encoded fields (bytes 20-%d) hold a parameter, counter or table entry out of range "
        "(the checksums match: written wrong)\n" % (f, body - 1))
    # lookups of every key (some probe the forged blocks): answers, exit 0; keys elsewhere are still found
    p = subprocess.run([NIDUS, "check", f], stdin=open(keys, "rb"), capture_output=True)
    assert p.returncode == 0 and p.stderr == b"", (p.returncode, p.stderr[-2000:])
    lines = p.stdout.splitlines()
    assert len(lines) == KEYS and set(lines) <= {b"0", b"1"} and lines.count(b"1") > KEYS * 0.95
    # a key answered 0 lost its fingerprint to a forged bucket: those and a sample of the others, counted
    lost = [i for i, line in enumerate(lines) if line == b"0"]
    assert lost
    for i in lost[:40] + list(range(0, KEYS, 4999)):
        assert run("count", f, "key-%d" % i, check_rc=0).stdout.strip().isdigit()
    assert run("info", f, check_rc=0).stdout
    # writes over the forged buckets: every added key is then found, and deleted again
    new = b"".join(b"new-%d\n" % i for i in range(3000))
    run("add", f, input=new, check_rc=0)
    assert run("check", f, input=new, check_rc=0).stdout == b"1\n" * 3000
    run("del", f, input=new, check_rc=0)
    p = run("check", f, input=new, check_rc=0)
    assert p.stdout.count(b"0\n") > 2900  # false positives aside, they are gone
    run("add", f, "x", "y", "z", check_rc=0)
    assert run("check", f, "x", "y", "z", check_rc=0).stdout == b"1\n1\n1\n"
    assert run("verify", f, check_rc=2).returncode == 2

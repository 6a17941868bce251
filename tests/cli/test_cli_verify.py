# SPDX-License-Identifier: BSD-3-Clause
"""`nidus verify` names the check that failed and where: the block and its bytes, or the header or footer field;
the other commands name the same when a file they open is damaged."""
import os
import subprocess

import pytest

from cli_util import NIDUS, FIXTURES, BLOCK, FOOTER, run, le


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    """A cuckoo filter file of several blocks, with its keys."""
    d = tmp_path_factory.mktemp("verify")
    keys = d / "keys.txt"
    keys.write_bytes(b"".join(b"key-%d\n" % i for i in range(100000)))
    f = str(d / "multi.nidus")
    run("build", f, "--from", keys, "--capacity", 300000, check_rc=0)
    data = open(f, "rb").read()
    blocks = le(data[-FOOTER + 24:-FOOTER + 32])
    assert blocks >= 5 and le(data[-FOOTER + 8:-FOOTER + 12]) == BLOCK
    return f, str(keys), data


def damaged(tmp_path, data, *offsets, name="bad.nidus"):
    bad = bytearray(data)
    for at in offsets:
        bad[at] ^= 0x10
    path = str(tmp_path / name)
    open(path, "wb").write(bad)
    return path


def test_a_damaged_block_is_named_with_its_bytes(multi, tmp_path):
    f, keys, data = multi
    blocks = le(data[-FOOTER + 24:-FOOTER + 32])
    assert run("verify", f, check_rc=0).stdout == f.encode() + b": ok\n"
    bad = damaged(tmp_path, data, 3 * BLOCK + 1000)
    where = "block 3 of %d (bytes 196608-262143) does not match its checksum" % blocks
    assert run("verify", bad, check_rc=2).stderr.decode() == (
        "nidus: %s: corrupt: %s (damaged blocks: 1 of %d)\n" % (bad, where, blocks))
    # check, reading every key, stops at the block with the same words
    p = subprocess.run([NIDUS, "check", bad], stdin=open(keys, "rb"), capture_output=True)
    assert p.returncode == 2 and p.stdout == b"" and p.stderr.decode() == "nidus: %s: corrupt: %s\n" % (bad, where)
    # two blocks: the first is named, both are counted
    bad = damaged(tmp_path, data, 4 * BLOCK + 7, 3 * BLOCK + 1000)
    assert run("verify", bad, check_rc=2).stderr.decode() == (
        "nidus: %s: corrupt: %s (damaged blocks: 2 of %d)\n" % (bad, where, blocks))
    # the last block, shorter than the others
    body = le(data[-FOOTER + 16:-FOOTER + 24])
    bad = damaged(tmp_path, data, body - 1)
    assert run("verify", bad, check_rc=2).stderr.decode() == (
        "nidus: %s: corrupt: block %d of %d (bytes %d-%d) does not match its checksum (damaged blocks: 1 of %d)\n"
        % (bad, blocks - 1, blocks, (blocks - 1) * BLOCK, body - 1, blocks))


def test_header_and_footer_fields_are_named(multi, tmp_path):
    f, _, data = multi
    n = len(data)
    body = le(data[-FOOTER + 16:-FOOTER + 24])
    prefix = 20 + le(data[16:20])
    footer = n - FOOTER
    expected = {
        0: 'the magic (bytes 0-4) is not "NIDUS": not a nidus filter, or damaged',
        6: "corrupt: the kind (byte 6) is not a kind of filter",
        7: "corrupt: the flags (byte 7) are not 0",
        9: "corrupt: the total length (bytes 8-15) does not match the footer's body length",
        prefix - 1: "corrupt: the header (bytes 0-%d) fails the header checksum and block 0's checksum (or block 0's "
                    "entry in the block table is damaged)" % (prefix - 1),
        body + 8: "corrupt: the block table or footer (bytes %d-%d) does not match the header checksum" % (body, n - 1),
        footer: 'corrupt: the footer magic (bytes %d-%d) is not "NIDUSBLK" (truncated or extended?)'
                % (footer, footer + 7),
        footer + 9: "corrupt: the footer block size (bytes %d-%d) is not a power of two from 4096 to 2^24"
                    % (footer + 8, footer + 11),
        footer + 12: "corrupt: the footer reserved field (bytes %d-%d) is not 0" % (footer + 12, footer + 15),
        footer + 16: "corrupt: the footer body length (bytes %d-%d) does not match the block count and the file's "
                     "length" % (footer + 16, footer + 23),
        footer + 24: "corrupt: the footer block count (bytes %d-%d) does not match the body length"
                     % (footer + 24, footer + 31),
        n - 1: "corrupt: the block table or footer (bytes %d-%d) does not match the header checksum" % (body, n - 1),
    }
    for at, line in expected.items():
        bad = damaged(tmp_path, data, at)
        assert run("verify", bad, check_rc=2).stderr.decode() == "nidus: %s: %s\n" % (bad, line), at
        # a command that opens the file says the same
        assert run("info", bad, check_rc=2).stderr.decode() == "nidus: %s: %s\n" % (bad, line), at
    bad = damaged(tmp_path, data, 5)  # version 8 -> 24
    assert run("verify", bad, check_rc=2).stderr.decode() == (
        "nidus: %s: written by another version of the format: the format version (byte 5) is 24, this build reads "
        "1 to 12\n" % bad)


def test_truncated_empty_and_foreign_files(multi, tmp_path):
    _, _, data = multi
    bad = str(tmp_path / "cut.nidus")
    for cut, line in ((len(data) // 2, 'the footer magic (bytes %d-%d) is not "NIDUSBLK" (truncated or extended?)'
                       % (len(data) // 2 - FOOTER, len(data) // 2 - FOOTER + 7)),
                      (10, "the file (10 bytes) is shorter than a header (truncated, or not a nidus filter)"),
                      (0, "the file (0 bytes) is empty")):
        open(bad, "wb").write(data[:cut])
        assert run("verify", bad, check_rc=2).stderr.decode() == "nidus: %s: corrupt: %s\n" % (bad, line)
    text = str(tmp_path / "text.txt")
    open(text, "w").write("hello, not a filter\n")
    for cmd in (["verify", text], ["check", text, "a"], ["add", text, "a"]):
        assert run(*cmd, check_rc=2).stderr.decode() == (
            'nidus: %s: the magic (bytes 0-4) is not "NIDUS": not a nidus filter, or damaged\n' % text)


def test_whole_encoding_files(tmp_path):
    data = open(os.path.join(FIXTURES, "v1-cuckoo.nidus"), "rb").read()
    assert data[5] == 1
    n = len(data)
    bad = damaged(tmp_path, data, n // 2)
    assert run("verify", bad, check_rc=2).stderr.decode() == (
        "nidus: %s: corrupt: the whole-file checksum (bytes %d-%d) does not match the bytes before it\n"
        % (bad, n - 8, n - 1))
    open(bad, "wb").write(data[:-5])
    assert run("verify", bad, check_rc=2).stderr.decode() == (
        "nidus: %s: corrupt: the total length (bytes 8-15) does not match the file's length (truncated?)\n" % bad)

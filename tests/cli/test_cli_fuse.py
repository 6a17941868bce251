# SPDX-License-Identifier: BSD-3-Clause
"""nidus build --type fuse: static filters built from a file of keys, read by check, count, info and verify, and
refused (one line, exit 2, the file untouched) by every command that would change them."""
import json
import os
import subprocess

import pytest

from cli_util import NIDUS, BLOCK, FOOTER, run, run_on_terminal, le

KEYS = 200000
ABSENT = 100000


def write_keys(path, keys, end=b"\n"):
    with open(path, "wb") as out:
        out.write(b"".join(k + end for k in keys))
    return str(path)


def info(path):
    return json.loads(run("info", path, "--json", check_rc=0).stdout)


def check_file(path, keys_path):
    """The answers of `check` for every line of keys_path, as a list of b"1"/b"0"."""
    p = subprocess.run([NIDUS, "check", path], stdin=open(keys_path, "rb"), capture_output=True, timeout=300)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    return p.stdout.split()


def untouched(path):
    """What a refused write must leave as it was: the bytes, the modification time, the inode."""
    st = os.stat(path)
    return open(path, "rb").read(), st.st_mtime_ns, st.st_ino


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuse")
    present = write_keys(d / "keys.txt", [b"key-%d" % i for i in range(KEYS)])
    absent = write_keys(d / "absent.txt", [b"absent-%d" % i for i in range(ABSENT)])
    return present, absent


@pytest.fixture(scope="module")
def fuse8(keys, tmp_path_factory):
    f = str(tmp_path_factory.mktemp("fuse8") / "f.nidus")
    run("build", f, "--from", keys[0], "--type", "fuse", check_rc=0)
    return f


@pytest.mark.parametrize("opts, bits", [([], 8), (["--fingerprint-bits", "16"], 16), (["--error", "0.001"], 16),
                                        (["--error", "0.01"], 8), (["--error", "0.001", "--fingerprint-bits", "16"], 16),
                                        (["--error", "0.01", "--fingerprint-bits", "16"], 16)])
def test_every_key_is_found_and_absent_keys_stay_within_the_bound(keys, tmp_path, opts, bits):
    f = str(tmp_path / "f.nidus")
    p = run("build", f, "--from", keys[0], "--type", "fuse", *opts, check_rc=0)
    assert p.stdout == b"" and p.stderr == b""  # no progress line off a terminal
    assert check_file(f, keys[0]) == [b"1"] * KEYS  # no false negatives
    bound = 2.0 ** -bits
    positives = check_file(f, keys[1]).count(b"1")
    # the keys are fixed (no seed): 4 standard deviations of a binomial at the bound, plus one
    assert positives <= ABSENT * bound + 4 * (ABSENT * bound) ** 0.5 + 1, (positives, bits)
    i = info(f)
    assert i["kind"] == "fuse" and i["parameters"] == {"fingerprint_bits": bits}
    assert i["items"] == i["capacity"] == i["details"]["keys"] == KEYS and i["load"] == 1.0
    assert i["error_bound"] == i["sub_filters"][0]["error_bound"] == pytest.approx(bound, rel=1e-5)
    slots = i["details"]["slots"]
    assert i["details"]["bits_per_key"] == i["bits_per_item"] == round(slots * bits / KEYS, 4)
    assert KEYS < slots < 1.2 * KEYS and slots * bits // 8 < i["memory_bytes"] < slots * bits // 8 + 4096
    assert os.path.getsize(f) < slots * bits // 8 + 4096  # the file is the slots and a few headers
    run("verify", f, check_rc=0)


def test_info_has_the_shape_of_every_kind(fuse8):
    i = info(fuse8)
    types = {"file": str, "kind": str, "capacity": int, "items": int, "memory_bytes": int, "bits_per_item": float,
             "load": float, "error_bound": float, "parameters": dict, "details": dict, "sub_filters": list}
    assert set(i) == set(types) and all(isinstance(i[k], t) for k, t in types.items())
    assert set(i["details"]) == {"keys", "slots", "bits_per_key"}
    sub, = i["sub_filters"]
    assert sub == {"capacity": KEYS, "items": KEYS, "memory_bytes": i["memory_bytes"], "load": 1.0,
                   "error_bound": 2.0 ** -8}
    text = run("info", fuse8, check_rc=0).stdout.decode()
    assert "kind:           fuse filter\n" in text and "keys:           %d " % KEYS in text
    assert "fingerprints:   8 bits, in %d slots\n" % i["details"]["slots"] in text
    assert "error bound:    0.00390625\n" in text and "%.2f bits per key" % i["bits_per_item"] in text


def test_check_and_count_take_arguments_and_stdin(fuse8):
    assert run("check", fuse8, "key-0", "key-199999", "", check_rc=0).stdout == b"1\n1\n0\n"
    assert run("check", fuse8, input=b"key-5\r\nkey-6", check_rc=0).stdout == b"1\n1\n"
    assert run("count", fuse8, "key-7", check_rc=0).stdout == b"1\n"
    assert run("count", fuse8, "", check_rc=0).stdout == b"0\n"


def test_duplicates_count_once_and_keys_are_read_as_for_every_kind(tmp_path):
    # duplicates, CRLF, an empty key, a NUL byte, and a last line without LF
    keys = [b"dup"] * 1000 + [b"crlf\r", b"", b"nul\x00byte", b"a b"] + [b"k%d" % i for i in range(5000)]
    src = tmp_path / "keys.txt"
    src.write_bytes(b"\n".join(keys) + b"\nlast")
    f = str(tmp_path / "f.nidus")
    run("build", f, "--from", src, "--type", "fuse", check_rc=0)
    assert info(f)["items"] == 1 + 4 + 5000 + 1
    assert run("check", f, "dup", "crlf", "", "a b", "k4999", "last", check_rc=0).stdout == b"1\n" * 6
    assert run("check", f, input=b"nul\x00byte\n", check_rc=0).stdout == b"1\n"
    # the same keys from stdin give the same file
    g = str(tmp_path / "g.nidus")
    run("build", g, "--from", "-", "--type", "fuse", input=src.read_bytes(), check_rc=0)
    assert open(f, "rb").read() == open(g, "rb").read()


def test_keys_from_a_fifo_are_read_once(tmp_path):
    import threading
    fifo = str(tmp_path / "keys.fifo")
    os.mkfifo(fifo)
    keys = b"".join(b"f%d\n" % i for i in range(30000))
    writer = threading.Thread(target=lambda: open(fifo, "wb").write(keys))
    writer.start()
    f = str(tmp_path / "f.nidus")
    run("build", f, "--from", fifo, "--type", "fuse", check_rc=0)
    writer.join()
    assert info(f)["items"] == 30000
    assert run("check", f, input=keys, check_rc=0).stdout == b"1\n" * 30000


def test_an_empty_set_builds_a_filter_that_answers_absent(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    f = str(tmp_path / "f.nidus")
    run("build", f, "--from", empty, "--type", "fuse", "--fingerprint-bits", "16", check_rc=0)
    i = info(f)
    assert (i["items"], i["capacity"], i["error_bound"], i["load"], i["details"]["slots"]) == (0, 0, 0.0, 0.0, 0)
    assert run("check", f, "a", "", check_rc=0).stdout == b"0\n0\n"
    assert run("verify", f, check_rc=0).stdout == f.encode() + b": ok\n"
    run("build", f, "--from", "-", "--type", "fuse", "--force", input=b"", check_rc=0)
    assert info(f)["items"] == 0


def test_the_file_is_replaced_only_with_force_and_keeps_its_mode(keys, tmp_path):
    f = str(tmp_path / "f.nidus")
    run("create", f, "--capacity", 10, check_rc=0)
    before = untouched(f)
    p = run("build", f, "--from", keys[1], "--type", "fuse", check_rc=2)
    assert p.stderr == ("nidus: %s: already exists (--force replaces it)\n" % f).encode()
    assert untouched(f) == before
    os.chmod(f, 0o640)
    run("build", f, "--from", keys[1], "--type", "fuse", "--force", check_rc=0)
    assert info(f)["kind"] == "fuse" and os.stat(f).st_mode & 0o777 == 0o640
    p = run("build", str(tmp_path), "--from", keys[1], "--type", "fuse", "--force", check_rc=2)
    assert p.stderr == ("nidus: %s: is a directory, not a filter file (refusing to replace it)\n" % tmp_path).encode()
    p = run("build", f, "--from", str(tmp_path), "--type", "fuse", "--force", check_rc=2)
    assert p.stderr == ("nidus: %s: the input (--from) is a directory, not a file of keys\n" % tmp_path).encode()


BUILD_REFUSALS = [
    (["--capacity", "10"], "nidus build: --capacity does not apply to a fuse filter: it is sized for the keys it is "
                           "built from, and every key goes in (see 'nidus help build')"),
    (["--expansion", "0"], "nidus build: --expansion does not apply"),
    (["--bucket-size", "4"], "nidus build: --bucket-size does not apply"),
    (["--semi-sort"], "nidus build: --semi-sort does not apply"),
    (["--max-kicks", "9"], "nidus build: --max-kicks does not apply"),
    (["--keep-going"], "nidus build: --keep-going does not apply"),
    (["--fingerprint-bits", "12"], "nidus build: --fingerprint-bits must be 8 or 16 for a fuse filter: 12 "
                                   "(see 'nidus help build')"),
    (["--fingerprint-bits", "32"], "nidus build: --fingerprint-bits must be 8 or 16 for a fuse filter: 32 "),
    (["--error", "0.00001"], "nidus build: --error must be at least 2^-16 (0.0000153) for a fuse filter: its "
                             "fingerprints are 8 or 16 bits (see 'nidus help build')"),
    (["--error", "0.001", "--fingerprint-bits", "8"],
     "nidus build: --fingerprint-bits 8 gives a fuse filter an error of 2^-8 (0.00391), above --error 0.001 "
     "(see 'nidus help build')"),
    (["--fingerprint-bits", "16", "--error", "0.00001"], "nidus build: --error must be at least 2^-16"),
]


@pytest.mark.parametrize("opts, message", BUILD_REFUSALS)
def test_options_that_do_not_apply_are_refused_in_one_line(keys, tmp_path, opts, message):
    f = str(tmp_path / "f.nidus")
    p = run("build", f, "--from", keys[1], "--type", "fuse", *opts, check_rc=2)
    assert p.stderr.startswith(message.encode()) and p.stderr.count(b"\n") == 1, p.stderr
    assert not os.path.exists(f)


def test_create_refuses_the_static_kind(tmp_path):
    f = str(tmp_path / "f.nidus")
    for extra in ([], ["--capacity", "100"]):
        p = run("create", f, "--type", "fuse", *extra, check_rc=2)
        assert p.stderr == (b"nidus create: a fuse filter is static: it is built from its keys, not created empty "
                            b"(nidus build FILE --from KEYS --type fuse)\n")
    assert not os.path.exists(f)


@pytest.mark.parametrize("cmd, stdin", [(["add", "new-key"], None), (["add"], b"new-key\n"), (["del", "key-1"], None),
                                        (["del", "--keep-going"], b"key-1\n"), (["add"], b"")])
def test_add_and_del_refuse_a_static_filter_and_leave_it_untouched(fuse8, cmd, stdin):
    before = untouched(fuse8)
    p = run(cmd[0], fuse8, *cmd[1:], input=stdin, check_rc=2)
    assert p.stderr == ("nidus: %s: a fuse filter is static: rebuild it with nidus build --type fuse\n"
                        % fuse8).encode()
    assert p.stdout == b"" and untouched(fuse8) == before


def test_merge_refuses_a_static_filter_as_dest_or_src(fuse8, tmp_path):
    cuckoo = str(tmp_path / "c.nidus")
    run("create", cuckoo, "--capacity", 1000, check_rc=0)
    run("add", cuckoo, "x", check_rc=0)
    missing = str(tmp_path / "new.nidus")
    line = "nidus: %s: a fuse filter is static: it cannot be merged: build one from all the keys with nidus build " \
           "--type fuse\n" % fuse8
    before = untouched(fuse8), untouched(cuckoo)
    for args in ([cuckoo, fuse8], [fuse8, cuckoo], [fuse8, fuse8], [missing, fuse8], [missing, cuckoo, fuse8]):
        p = run("merge", *args, check_rc=2)
        assert p.stderr == line.encode(), args
        assert (untouched(fuse8), untouched(cuckoo)) == before and not os.path.exists(missing)


def test_push_refuses_a_static_filter_before_connecting(fuse8):
    # port 1: nothing listens there, so a refusal after connecting would read "cannot connect"
    p = run("push", fuse8, "k", "--url", "redis://127.0.0.1:1", check_rc=2)
    assert p.stderr == ("nidus push: %s: a fuse filter: the module holds cuckoo (CF) and Bloom (BF) filters only\n"
                        % fuse8).encode()


def test_verify_and_check_find_a_flipped_byte(fuse8, keys, tmp_path):
    data = open(fuse8, "rb").read()
    blocks = le(data[-FOOTER + 24:-FOOTER + 32])
    assert blocks >= 3 and le(data[-FOOTER + 8:-FOOTER + 12]) == BLOCK
    bad = bytearray(data)
    bad[BLOCK + 1234] ^= 0x01
    path = str(tmp_path / "bad.nidus")
    open(path, "wb").write(bad)
    where = "block 1 of %d (bytes %d-%d) does not match its checksum" % (blocks, BLOCK, 2 * BLOCK - 1)
    p = run("verify", path, check_rc=2)
    assert p.stdout == b"" and p.stderr.decode() == "nidus: %s: corrupt: %s (damaged blocks: 1 of %d)\n" % (
        path, where, blocks)
    # check reads the block when a key leads to it, and stops with the same words
    p = subprocess.run([NIDUS, "check", path], stdin=open(keys[0], "rb"), capture_output=True, timeout=300)
    assert p.returncode == 2 and p.stdout == b"" and p.stderr.decode() == "nidus: %s: corrupt: %s\n" % (path, where)
    # a flipped byte in the footer
    bad = bytearray(data)
    bad[-FOOTER + 25] ^= 0x01
    open(path, "wb").write(bad)
    p = run("verify", path, check_rc=2)
    assert p.stderr.startswith(("nidus: %s: corrupt: " % path).encode()) and p.stderr.count(b"\n") == 1


def test_build_shows_progress_on_a_terminal(keys, tmp_path):
    f = str(tmp_path / "f.nidus")
    rc, seen = run_on_terminal("build", f, "--from", keys[0], "--type", "fuse")
    assert rc == 0
    assert b"reading keys done: %d items" % KEYS in seen and b"building done: %d items" % KEYS in seen
    assert b"M/s" in seen

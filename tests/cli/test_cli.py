# SPDX-License-Identifier: BSD-3-Clause
"""The nidus command-line tool: every command and option, stdin, errors and exit codes, damaged files,
interrupted writes, and a 1M-key round trip."""
import json
import os
import random
import signal
import subprocess
import time

import pytest

from cli_util import NIDUS, run, run_on_terminal


@pytest.fixture
def f(tmp_path):
    return str(tmp_path / "filter.nidus")


def test_help_and_version():
    p = run("--help", check_rc=0)
    for cmd in ("create", "add", "check", "del", "count", "info", "build"):
        assert b"nidus " + cmd.encode() in p.stdout
        assert run(cmd, "--help", check_rc=0).stdout.startswith(b"nidus " + cmd.encode())
    assert run("--version", check_rc=0).stdout.startswith(b"nidus 0.")
    assert run(check_rc=2).stderr
    p = run("frobnicate", check_rc=2)
    assert b"unknown command 'frobnicate'" in p.stderr


@pytest.mark.parametrize("kind", ["cuckoo", "bloom", "counting-bloom"])
def test_create_add_check_count_info_for_every_kind(f, kind):
    run("create", f, "--type", kind, "--capacity", 1000, "--error", "0.001", check_rc=0)
    run("add", f, "apple", "pear", check_rc=0)
    run("add", f, input=b"plum\r\nfig\n\xff\x00bin\n", check_rc=0)  # stdin, CRLF, binary bytes
    p = run("check", f, "apple", "kiwi", "plum", "fig", check_rc=0)
    assert p.stdout == b"1\n0\n1\n1\n"
    assert run("check", f, input=b"\xff\x00bin\npear\nnope\n", check_rc=0).stdout == b"1\n1\n0\n"
    assert run("count", f, "apple", check_rc=0).stdout == b"1\n"
    info = json.loads(run("info", f, "--json", check_rc=0).stdout)
    assert info["kind"] == kind and info["items"] == 5
    for field in ("parameters", "memory_bytes", "bits_per_item", "load", "error_bound", "sub_filters"):
        assert field in info
    text = run("info", f, check_rc=0).stdout.decode()
    assert kind in text and "items:" in text and "error bound:" in text


def test_create_options(tmp_path):
    f = str(tmp_path / "c.nidus")
    run("create", f, "--capacity", 5000, "--fingerprint-bits", 13, "--bucket-size", 4, "--semi-sort",
        "--expansion", 2, "--max-kicks", 100, check_rc=0)
    info = json.loads(run("info", f, "--json").stdout)
    assert info["parameters"] == {"bucket_size": 4, "fingerprint_bits": 13, "semi_sort": True, "max_kicks": 100,
                                  "expansion": 2, "max_tables": 32}
    run("create", f, "--capacity", 10, check_rc=2)  # exists
    run("create", f, "--capacity=10", "--force", check_rc=0)  # --opt=value works too
    assert json.loads(run("info", f, "--json").stdout)["items"] == 0
    b = str(tmp_path / "b.nidus")
    run("create", b, "--type", "bloom", "--capacity", 100, "--expansion", 0, check_rc=0)
    assert json.loads(run("info", b, "--json").stdout)["parameters"]["expansion"] == 0


@pytest.mark.parametrize("args, message", [
    (["--capacity", "0"], b"--capacity must be a positive integer"),
    (["--capacity", "x"], b"--capacity must be a positive integer"),
    ([], b"--capacity is required"),
    (["--capacity", "10", "--error", "2"], b"--error must be a number between 0 and 1"),
    (["--capacity", "10", "--fingerprint-bits", "40"], b"--fingerprint-bits must be an integer from 4 to 32"),
    (["--capacity", "10", "--bucket-size", "3"], b"--bucket-size must be 1, 2, 4 or 8"),
    (["--capacity", "10", "--expansion", "-1"], b"--expansion must be an integer from 0 to 32768"),
    (["--capacity", "10", "--max-kicks", "0"], b"--max-kicks must be an integer from 1 to 65535"),
    (["--capacity", "10", "--type", "hash"], b"--type must be cuckoo, bloom, counting-bloom or fuse"),
    (["--capacity", "10", "--error", "0.01", "--fingerprint-bits", "8"], b"exclude each other"),
    (["--capacity", "10", "--type", "bloom", "--bucket-size", "4"], b"are for cuckoo filters"),
    (["--capacity", "10", "--semi-sort", "--bucket-size", "2"], b"--semi-sort needs --bucket-size 4"),
    (["--capacity", "10", "--type", "counting-bloom", "--expansion", "2"], b"does not grow"),
    (["--capacity", "10", "--colour", "red"], b"unknown option"),
])
def test_create_usage_errors(f, args, message):
    p = run("create", f, *args, check_rc=2)
    assert message in p.stderr and p.stderr.count(b"\n") == 1
    assert not os.path.exists(f)


def test_del_and_exit_codes(f):
    run("create", f, "--capacity", 100, check_rc=0)
    run("add", f, "a", "a", "b", check_rc=0)
    assert run("count", f, "a").stdout == b"2\n"
    run("del", f, "a", check_rc=0)
    p = run("del", f, "a", "zzz", check_rc=1)  # zzz was never there: nothing is removed
    assert b"zzz" in p.stderr and f.encode() in p.stderr
    assert run("check", f, "a", "b").stdout == b"1\n1\n"
    run("del", f, "a", "zzz", "--keep-going", check_rc=1)
    assert run("check", f, "a", "b").stdout == b"0\n1\n"
    run("del", f, input=b"b\n", check_rc=0)
    assert run("check", f, "b").stdout == b"0\n"
    bl = f + ".bloom"
    run("create", bl, "--type", "bloom", "--capacity", 100, check_rc=0)
    assert b"cannot delete" in run("del", bl, "x", check_rc=2).stderr
    run("count", f, check_rc=2)
    run("info", f, "extra", check_rc=2)
    run("check", check_rc=2)


def test_full_filter_exit_1_keeps_what_fitted_with_keep_going(f):
    run("create", f, "--capacity", 50, "--max-kicks", 10, "--expansion", 0, check_rc=0)
    keys = "".join("k%d\n" % i for i in range(500)).encode()
    p = run("add", f, input=keys, check_rc=1)
    assert b"the filter is full" in p.stderr and json.loads(run("info", f, "--json").stdout)["items"] == 0
    p = run("add", f, "--keep-going", input=keys, check_rc=1)
    assert b"the filter is full" in p.stderr
    added = json.loads(run("info", f, "--json").stdout)["items"]
    assert 50 <= added < 500
    answers = run("check", f, input=keys).stdout.split()
    assert answers.count(b"1") >= added  # everything added is found (no false negative)


def test_missing_foreign_and_damaged_files(tmp_path, f):
    missing = str(tmp_path / "missing.nidus")
    p = run("check", missing, "a", check_rc=2)
    assert p.stderr == ("nidus: %s: No such file or directory\n" % missing).encode()
    text = str(tmp_path / "text.txt")
    open(text, "w").write("hello, not a filter\n" * 10)
    for cmd in (["check", text, "a"], ["add", text, "a"], ["info", text], ["count", text, "a"], ["del", text, "a"]):
        p = run(*cmd, check_rc=2)
        assert b"not a nidus filter" in p.stderr and text.encode() in p.stderr
    run("create", f, "--capacity", 2000, check_rc=0)
    run("add", f, input=b"".join(b"k%d\n" % i for i in range(1000)), check_rc=0)
    good = open(f, "rb").read()
    damaged = str(tmp_path / "damaged.nidus")
    rng = random.Random(5)
    offsets = sorted(set(list(range(0, 200)) + [rng.randrange(len(good)) for _ in range(200)] +
                         list(range(len(good) - 40, len(good)))))
    for at in offsets:
        bad = bytearray(good)
        bad[at] ^= 0x5A
        open(damaged, "wb").write(bad)
        for cmd in (["check", damaged, "k1"], ["info", damaged]):
            p = run(*cmd)
            assert p.returncode == 2 and p.stderr.count(b"\n") == 1, (at, p.stderr)
    for cut in (0, 1, 10, 30, len(good) // 2, len(good) - 1):
        open(damaged, "wb").write(good[:cut])
        assert run("check", damaged, "k1").returncode == 2


def test_interrupted_writes_leave_the_old_file(tmp_path, f):
    run("create", f, "--capacity", 3000000, check_rc=0)
    run("add", f, "precious", check_rc=0)
    before = open(f, "rb").read()
    keys = str(tmp_path / "keys.txt")
    with open(keys, "w") as out:
        for i in range(3000000):
            out.write("k%d\n" % i)
    marker = "precious"  # a key the file on disk holds
    for delay in (0.05, 0.2, 0.5):
        p = subprocess.Popen([NIDUS, "build", f, "--from", keys, "--capacity", "3000000", "--force"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        if open(f, "rb").read() != before:  # the build finished before the kill: the new file is whole
            assert run("check", f, "k1", "k2999999").stdout == b"1\n1\n"
            marker = "k1"
            break
        assert run("check", f, "precious", check_rc=0).stdout == b"1\n"
    # add, killed while adding from a pipe: the file is either the old one or (if it got to the end) the new
    before = open(f, "rb").read()
    p = subprocess.Popen([NIDUS, "add", f], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    p.stdin.write(b"".join(b"x%d\n" % i for i in range(100000)))
    p.stdin.flush()
    time.sleep(0.2)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert run("check", f, marker, check_rc=0).stdout == b"1\n"  # readable, and nothing it held is lost
    leftovers = [n for n in os.listdir(tmp_path) if ".tmp-" in n]
    for n in leftovers:  # a killed writer may leave its temporary file, never a damaged filter
        os.unlink(os.path.join(tmp_path, n))


def test_build_and_check_a_million_keys(tmp_path, f):
    keys = str(tmp_path / "keys.txt")
    with open(keys, "w") as out:
        for i in range(1000000):
            out.write("key-%d\n" % i)
    run("build", f, "--from", keys, "--capacity", 1000000, "--error", "0.001", check_rc=0)
    p = subprocess.run([NIDUS, "check", f], stdin=open(keys, "rb"), capture_output=True, timeout=300)
    assert p.returncode == 0
    assert p.stdout == b"1\n" * 1000000  # no false negatives
    absent = "".join("other-%d\n" % i for i in range(200000)).encode()
    answers = run("check", f, input=absent, check_rc=0).stdout
    rate = answers.count(b"1") / 200000
    assert rate <= 0.001 + 3 * (0.001 / 200000) ** 0.5
    assert json.loads(run("info", f, "--json").stdout)["items"] == 1000000
    # no progress output when stderr is not a terminal
    assert run("build", f, "--from", keys, "--capacity", 1000000, "--force").stderr == b""
    assert b"--from KEYS is required" in run("build", f, "--capacity", 10, "--force", check_rc=2).stderr
    assert b"No such file" in run("build", f, "--from", str(tmp_path / "nope"), "--capacity", 10,
                                  "--force", check_rc=2).stderr


def test_build_shows_progress_on_a_terminal(tmp_path, f):
    keys = str(tmp_path / "keys.txt")
    with open(keys, "w") as out:
        for i in range(2000000):
            out.write("key-%d\n" % i)
    rc, seen = run_on_terminal("build", f, "--from", keys, "--capacity", "2000000")
    assert rc == 0
    assert b"building done: 2000000 items" in seen
    assert b"M/s" in seen

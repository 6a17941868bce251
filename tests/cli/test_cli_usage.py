# SPDX-License-Identifier: BSD-3-Clause
"""The command line as documented: version, help of every command, build sizing itself, errors that name the
right file, and `info --json` of one shape for every kind."""
import json
import os

import pytest

from cli_util import run


COMMANDS = ("create", "add", "check", "del", "count", "info", "verify", "build")


def test_version_short_and_long():
    for flag in ("-V", "--version"):
        assert run(flag, check_rc=0).stdout.startswith(b"nidus 0.")


def test_help_command_equals_command_help_and_explains_every_option():
    general = run("help", check_rc=0).stdout
    for cmd in COMMANDS:
        assert b"nidus " + cmd.encode() in general
        text = run("help", cmd, check_rc=0).stdout
        assert text == run(cmd, "--help", check_rc=0).stdout == run(cmd, "-h", check_rc=0).stdout
        assert text.startswith(b"nidus " + cmd.encode())
        # every option named in the synopsis is explained on a line of its own
        synopsis = text.split(b"\n\n")[0]
        for word in synopsis.replace(b"[", b" ").replace(b"]", b" ").replace(b"|", b" ").split():
            if word.startswith(b"--") and word != b"--json" or word == b"--json" and cmd == "info":
                assert b"\n  " + word in text, (cmd, word)
    for cmd in ("add", "check", "del", "build"):  # how keys are read
        text = run("help", cmd).stdout
        assert b"CR" in text and b"empty line is the empty key" in text
    assert b"unknown command" in run("help", "frobnicate", check_rc=2).stderr


def test_build_without_capacity_counts_the_keys(tmp_path):
    keys = str(tmp_path / "keys.txt")
    with open(keys, "wb") as out:
        out.write(b"".join(b"key-%d\n" % i for i in range(49999)) + b"last-without-newline")
    f = str(tmp_path / "f.nidus")
    run("build", f, "--from", keys, "--error", "0.001", check_rc=0)
    info = json.loads(run("info", f, "--json").stdout)
    assert info["items"] == 50000 and 50000 <= info["capacity"] < 60000
    assert run("check", f, "key-0", "key-49998", "last-without-newline").stdout == b"1\n1\n1\n"
    p = run("build", f, "--from", "-", "--force", input=b"a\n", check_rc=2)
    assert b"--capacity is required when the keys come from stdin" in p.stderr
    empty = str(tmp_path / "empty.txt")
    open(empty, "w").close()
    run("build", f, "--from", empty, "--force", check_rc=0)


def test_errors_name_the_right_file(tmp_path):
    f = str(tmp_path / "f.nidus")
    p = run("build", f, "--from", str(tmp_path), "--capacity", 10, check_rc=2)
    assert p.stderr == ("nidus: %s: the input (--from) is a directory, not a file of keys\n" % tmp_path).encode()
    assert not os.path.exists(f)
    missing = str(tmp_path / "nope.txt")
    p = run("build", f, "--from", missing, check_rc=2)
    assert missing.encode() in p.stderr and b"No such file" in p.stderr


@pytest.mark.parametrize("kind", ["cuckoo", "bloom", "counting-bloom"])
def test_info_json_has_one_shape_for_every_kind(tmp_path, kind):
    f = str(tmp_path / "f.nidus")
    extra = ["--expansion", 2] if kind != "counting-bloom" else []
    run("create", f, "--type", kind, "--capacity", 100, *extra, check_rc=0)
    run("add", f, input=b"".join(b"k%d\n" % i for i in range(150 if kind != "counting-bloom" else 50)))
    info = json.loads(run("info", f, "--json", check_rc=0).stdout)
    types = {"file": str, "kind": str, "capacity": int, "items": int, "memory_bytes": int, "bits_per_item": float,
             "load": float, "error_bound": float, "parameters": dict, "details": dict, "sub_filters": list}
    assert set(info) == set(types)
    for k, t in types.items():
        assert isinstance(info[k], t), (k, info[k])
    # every sub-filter has the same five fields, and its kind's own after them (a cuckoo table's shape and level,
    # a Bloom layer's hashes)
    own = {"cuckoo": {"buckets", "fingerprint_bits", "level"}, "bloom": {"hashes"}}.get(kind, set())
    assert info["sub_filters"] and all(
        set(s) == {"capacity", "items", "memory_bytes", "load", "error_bound"} | own and
        all(isinstance(s[k], int) for k in own) and
        all(isinstance(s[k], int) for k in ("capacity", "items", "memory_bytes")) and
        all(isinstance(s[k], float) for k in ("load", "error_bound")) for s in info["sub_filters"])
    assert info["capacity"] == sum(s["capacity"] for s in info["sub_filters"])
    assert info["items"] == sum(s["items"] for s in info["sub_filters"])
    if kind == "bloom":
        assert len(info["sub_filters"]) == 2  # grown past its capacity

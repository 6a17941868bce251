# SPDX-License-Identifier: BSD-3-Clause
"""nidus merge DEST SRC [SRC ...]: every kind, DEST created or merged in place, DEST among the sources, and every
error leaving DEST byte for byte as it was, with one line naming the SRC and what differs."""
import json
import os

import pytest

from cli_util import run

KINDS = ["cuckoo", "bloom", "counting-bloom"]


def make(path, kind, keys, *opts):
    run("create", path, "--type", kind, "--capacity", 1000, *opts, check_rc=0)
    if keys:
        run("add", path, input="".join(k + "\n" for k in keys).encode(), check_rc=0)
    return path


def checks(path, keys):
    out = run("check", path, input="".join(k + "\n" for k in keys).encode(), check_rc=0).stdout
    return out.split()


@pytest.mark.parametrize("kind", KINDS)
def test_merge_creates_dest_from_sources(tmp_path, kind):
    a = make(str(tmp_path / "a"), kind, [f"a{i}" for i in range(300)])
    b = make(str(tmp_path / "b"), kind, [f"b{i}" for i in range(300)] + ["a1"])
    c = make(str(tmp_path / "c"), kind, [f"c{i}" for i in range(100)])
    dest = str(tmp_path / "dest")
    run("merge", dest, a, b, c, check_rc=0)
    keys = [f"a{i}" for i in range(300)] + [f"b{i}" for i in range(300)] + [f"c{i}" for i in range(100)]
    assert checks(dest, keys) == [b"1"] * len(keys)
    run("verify", dest, check_rc=0)
    if kind != "bloom":
        assert run("count", dest, "a1", check_rc=0).stdout == b"2\n"
        run("del", dest, "a1", "a1", "b7", check_rc=0)  # removes stay exact
        assert run("count", dest, "a1", check_rc=0).stdout == b"0\n"
    # the sources are untouched
    assert checks(a, ["a0"]) == [b"1"] and checks(a, ["b0"]) == [b"0"]


@pytest.mark.parametrize("kind", KINDS)
def test_merge_in_place_and_into_itself(tmp_path, kind):
    dest = make(str(tmp_path / "dest"), kind, ["x", "y"])
    src = make(str(tmp_path / "src"), kind, ["z"])
    os.chmod(dest, 0o640)
    run("merge", dest, src, check_rc=0)
    assert checks(dest, ["x", "y", "z"]) == [b"1"] * 3
    assert os.stat(dest).st_mode & 0o777 == 0o640  # replaced, mode kept
    # DEST among the SRCs counts once, as in CF.MERGE: its items are not added to themselves
    run("merge", dest, dest, check_rc=0)
    run("merge", dest, src, os.path.join(str(tmp_path), ".", "dest"), check_rc=0)
    assert checks(dest, ["x", "y", "z"]) == [b"1"] * 3
    if kind != "bloom":
        assert run("count", dest, "x", check_rc=0).stdout == b"1\n"
        assert run("count", dest, "z", check_rc=0).stdout == b"2\n"


@pytest.mark.parametrize("kind,opts,message", [
    ("cuckoo", ["--bucket-size", "2"], b"bucket size 2, not 4"),
    ("cuckoo", ["--fingerprint-bits", "16"], b"fingerprint bits 16"),
    ("cuckoo", ["--expansion", "2"], b"expansion 2, not 1"),
    ("cuckoo", ["--capacity", "5000"], b"capacity"),
    ("bloom", ["--error", "0.001"], b"error rate 0.001, not 0.01"),
    ("bloom", ["--expansion", "4"], b"expansion 4, not 2"),
    ("bloom", ["--capacity", "5000"], b"capacity 5000, not 1000"),
    ("counting-bloom", ["--error", "0.001"], b"error rate 0.001, not 0.01"),
])
def test_incompatible_source_leaves_dest_unchanged(tmp_path, kind, opts, message):
    dest = make(str(tmp_path / "dest"), kind, ["x"], "--bucket-size", "4") if kind == "cuckoo" else \
        make(str(tmp_path / "dest"), kind, ["x"])
    good = make(str(tmp_path / "good"), kind, ["g"], "--bucket-size", "4") if kind == "cuckoo" else \
        make(str(tmp_path / "good"), kind, ["g"])
    bad = str(tmp_path / "bad")
    base = ["--bucket-size", "4"] if kind == "cuckoo" and "--bucket-size" not in opts else []
    run("create", bad, "--type", kind, "--capacity", 1000, *base, *opts, "--force", check_rc=0)
    before = open(dest, "rb").read()
    p = run("merge", dest, good, bad, check_rc=2)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(b"nidus: " + bad.encode() + b": incompatible with ")
    assert message in lines[0]
    assert open(dest, "rb").read() == before  # the good source was not merged either


def test_other_kind_missing_source_and_usage(tmp_path):
    dest = make(str(tmp_path / "dest"), "cuckoo", ["x"])
    bloom = make(str(tmp_path / "bloom"), "bloom", ["y"])
    before = open(dest, "rb").read()
    p = run("merge", dest, bloom, check_rc=2)
    assert b"kind bloom, not cuckoo" in p.stderr
    p = run("merge", dest, str(tmp_path / "missing"), check_rc=2)
    assert b"missing: No such file or directory" in p.stderr
    assert open(dest, "rb").read() == before
    run("merge", dest, check_rc=2)
    missing_dest = str(tmp_path / "new")
    run("merge", missing_dest, str(tmp_path / "missing"), check_rc=2)
    assert not os.path.exists(missing_dest)


def test_full_destination_is_refused(tmp_path):
    dest = make(str(tmp_path / "dest"), "cuckoo", [f"d{i}" for i in range(900)], "--expansion", "0")
    src = make(str(tmp_path / "src"), "cuckoo", [f"s{i}" for i in range(900)], "--expansion", "0")
    before = open(dest, "rb").read()
    p = run("merge", dest, src, check_rc=2)
    assert b"cannot merge into" in p.stderr and len(p.stderr.splitlines()) == 1
    assert open(dest, "rb").read() == before


@pytest.mark.parametrize("expansion", ["1", "2"])
def test_two_grown_files_merge(tmp_path, expansion):
    # both grew past their first table, which is full: what does not fit is added beside it (a sibling table)
    a_keys, b_keys = [f"a{i}" for i in range(4000)], [f"b{i}" for i in range(3000)] + ["a1"]
    a = make(str(tmp_path / "a"), "cuckoo", a_keys, "--expansion", expansion)
    b = make(str(tmp_path / "b"), "cuckoo", b_keys, "--expansion", expansion)
    assert open(a, "rb").read()[5] == 8  # no siblings: the format the previous release reads
    dest = str(tmp_path / "dest")
    run("merge", dest, a, b, check_rc=0)
    assert open(dest, "rb").read()[5] == 10  # siblings: the format version that has them
    run("verify", dest, check_rc=0)
    assert b", level 0 (a sibling)" in run("info", dest, check_rc=0).stdout
    subs = json.loads(run("info", dest, "--json", check_rc=0).stdout)["sub_filters"]
    levels = [s["level"] for s in subs]
    assert levels[:2] == [0, 0] and levels == sorted(levels) and len(levels) > len(set(levels))
    for x in subs:  # a sibling has its level's shape
        first = subs[levels.index(x["level"])]
        assert (x["buckets"], x["fingerprint_bits"]) == (first["buckets"], first["fingerprint_bits"])
    assert checks(dest, a_keys + b_keys) == [b"1"] * len(a_keys + b_keys)
    assert run("count", dest, "a1", check_rc=0).stdout == b"2\n"
    run("merge", dest, a, check_rc=0)  # and once more, in place
    assert run("count", dest, "a1", check_rc=0).stdout == b"3\n"
    run("verify", dest, check_rc=0)


def test_help_lists_merge():
    assert b"nidus merge DEST SRC [SRC ...]" in run("--help", check_rc=0).stdout
    assert run("merge", "--help", check_rc=0).stdout.startswith(b"nidus merge DEST SRC")

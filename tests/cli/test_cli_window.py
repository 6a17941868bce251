# SPDX-License-Identifier: BSD-3-Clause
"""nidus create/build --window: windowed cuckoo filter files. add, check, count, del and info at --now (or the
clock); keys present through their window and absent from 1.2 windows on; bad windows refused with one line and
exit 2, nothing created; verify, merge of like windows (unlike ones refused, DEST untouched). push, pull and copy
of windowed files and keys: test_cli_push_pull.py, test_cli_copy.py."""
import json
import os
import time

import pytest

from cli_util import run

T0 = 1700000000000  # ms since the epoch
W = 60000  # --window 1m


def info(path, now=None):
    args = ["info", path, "--json"] + (["--now", now] if now is not None else [])
    return json.loads(run(*args, check_rc=0).stdout)


def check(path, now, *keys):
    return run("check", path, "--now", now, *keys, check_rc=0).stdout.split()


@pytest.mark.parametrize("text,ms", [("500ms", 500), ("30s", 30000), ("15m", 900000), ("24h", 86400000),
                                     ("7d", 604800000), ("281474976710656ms", 2**48)])
def test_windows_in_every_unit(tmp_path, text, ms):
    f = str(tmp_path / "w.nidus")
    run("create", f, "--window", text, "--capacity", 1000, check_rc=0)
    i = info(f, T0)
    assert i["kind"] == "window" and i["parameters"]["window_ms"] == ms and i["capacity"] == 1000
    text_info = run("info", f, "--now", T0, check_rc=0).stdout.decode()
    assert "window:" in text_info and f"({ms} ms;" in text_info


@pytest.mark.parametrize("bad,says", [("0", "must be positive"), ("0s", "must be positive"),
                                      ("-5s", "must be positive"), ("junk", "a whole number and a unit"),
                                      ("10", "a whole number and a unit"), ("1.5s", "a whole number and a unit"),
                                      ("5x", "a whole number and a unit"), ("", "a whole number and a unit"),
                                      ("281474976710657ms", "longer than the longest window"),
                                      ("99999999999999999999d", "longer than the longest window")])
def test_bad_windows_are_refused(tmp_path, bad, says):
    f = tmp_path / "w.nidus"
    p = run("create", f, "--window", bad, "--capacity", 10, check_rc=2)
    assert says in p.stderr.decode() and p.stderr.count(b"\n") == 1
    assert not f.exists()


@pytest.mark.parametrize("args,says", [(["--type", "bloom"], "--type must be cuckoo"),
                                       (["--semi-sort"], "not semi-sorted"),
                                       (["--fingerprint-bits", "30"], "4 to 29")])
def test_options_a_window_does_not_take(tmp_path, args, says):
    f = tmp_path / "w.nidus"
    p = run("create", f, "--window", "1h", "--capacity", 10, *args, check_rc=2)
    assert says in p.stderr.decode()
    assert not f.exists()


def test_keys_live_through_their_window_and_expire(tmp_path):
    f = str(tmp_path / "w.nidus")
    run("create", f, "--window", "1m", "--capacity", 1000, check_rc=0)
    keys = [f"k{i}" for i in range(200)]
    run("add", f, "--now", T0, *keys, check_rc=0)
    run("add", f, "--now", T0 + W // 2, "late", check_rc=0)
    assert check(f, T0, *keys) == [b"1"] * 200
    assert check(f, T0 + W, *keys) == [b"1"] * 200  # the whole window, its last millisecond included
    gone = check(f, T0 + 6 * (W // 5), *keys)  # from t + 6 epochs of W/5 on: absent (collisions aside)
    assert gone.count(b"1") <= 3
    assert check(f, T0 + 6 * (W // 5), "late") == [b"1"]
    assert run("count", f, "--now", T0 + 1, "k7", check_rc=0).stdout == b"1\n"
    run("add", f, "--now", T0 + 2, "k7", check_rc=0)
    assert run("count", f, "--now", T0 + 3, "k7", check_rc=0).stdout == b"2\n"
    assert run("count", f, "--now", T0 + 2 * W, "k7", check_rc=0).stdout == b"0\n"
    run("del", f, "--now", T0 + 4, "k7", check_rc=0)
    assert run("count", f, "--now", T0 + 5, "k7", check_rc=0).stdout == b"1\n"
    # an expired key is not deletable: exit 1, the file as it was
    before = open(f, "rb").read()
    run("del", f, "--now", T0 + 2 * W, "k8", check_rc=1)
    assert open(f, "rb").read() == before
    assert info(f, T0 + 10)["items"] == 201 - 1 + 1  # 200 keys, "late", k7's second copy less the one deleted
    assert info(f, T0 + 3 * W)["items"] == 0
    run("verify", f, check_rc=0)


def test_without_now_the_clock_is_used(tmp_path):
    f = str(tmp_path / "w.nidus")
    run("create", f, "--window", "1h", "--capacity", 100, check_rc=0)
    run("add", f, "fresh", check_rc=0)
    assert run("check", f, "fresh", check_rc=0).stdout == b"1\n"
    now = int(time.time() * 1000)
    assert check(f, now + 3600000 // 2, "fresh") == [b"1"]
    assert check(f, now + 2 * 3600000, "fresh") == [b"0"]
    run("add", f, "--now", T0, "old", check_rc=0)  # a time before the latest write reads as the latest
    assert run("check", f, "old", check_rc=0).stdout == b"1\n"


def test_build_with_a_window(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_bytes(b"".join(b"b%d\n" % i for i in range(5000)))
    f = str(tmp_path / "b.nidus")
    run("build", f, "--window", "24h", "--from", keys, "--now", T0, check_rc=0)
    i = info(f, T0)
    assert i["items"] == 5000 and i["capacity"] == 5000 and i["parameters"]["window_ms"] == 86400000
    assert check(f, T0 + 86400000, "b0", "b4999") == [b"1", b"1"]
    assert check(f, T0 + 2 * 86400000, "b0", "b4999") == [b"0", b"0"]
    # a full windowed filter: past its room the add fails, all or nothing
    small = str(tmp_path / "s.nidus")
    p = run("build", small, "--window", "1h", "--capacity", 100, "--from", keys, "--now", T0)
    assert p.returncode == 1 and not os.path.exists(small)


def test_merge_like_windows_and_refuse_others(tmp_path):
    a, b, c = (str(tmp_path / n) for n in ("a.nidus", "b.nidus", "c.nidus"))
    for f in (a, b):
        run("create", f, "--window", "1m", "--capacity", 1000, check_rc=0)
    run("add", a, "--now", T0, "old", check_rc=0)
    run("add", b, "--now", T0 + W // 2, "new", check_rc=0)
    run("merge", c, a, b, check_rc=0)
    assert check(c, T0 + W, "old", "new") == [b"1", b"1"]
    assert check(c, T0 + 6 * (W // 5) + 1, "old", "new") == [b"0", b"1"]  # each key kept its own age
    other = str(tmp_path / "other.nidus")
    run("create", other, "--window", "2m", "--capacity", 1000, check_rc=0)
    before = open(c, "rb").read()
    p = run("merge", c, other, check_rc=2)
    assert b"window 120000, not 60000" in p.stderr
    assert open(c, "rb").read() == before
    cuckoo = str(tmp_path / "cuckoo.nidus")
    run("create", cuckoo, "--capacity", 1000, check_rc=0)
    run("merge", c, cuckoo, check_rc=2)
    assert open(c, "rb").read() == before


def test_now_is_checked(tmp_path):
    f = str(tmp_path / "w.nidus")
    run("create", f, "--window", "1m", "--capacity", 10, check_rc=0)
    for bad in ("-1", "soon", "1.5", ""):
        p = run("check", f, "--now", bad, "k", check_rc=2)
        assert b"--now must be milliseconds" in p.stderr
    run("create", str(tmp_path / "x.nidus"), "--window", "1m", "--capacity", 10, "--now", T0, check_rc=2)


def test_a_window_that_grows(tmp_path):
    f = str(tmp_path / "g.nidus")
    keys = [f"k{i}" for i in range(1000)]
    run("create", f, "--window", "1h", "--capacity", 100, "--expansion", 2, check_rc=0)
    run("add", f, "--now", T0, *keys, check_rc=0)  # ten times the capacity in one window: grown, not full
    assert check(f, T0 + 3600000, *keys) == [b"1"] * 1000
    text = run("info", f, "--now", T0, check_rc=0).stdout.decode()
    assert "expansion 2\n" in text and "tables:         4 (3 grown" in text and "  #3: capacity 800," in text
    js = json.loads(run("info", f, "--json", "--now", T0, check_rc=0).stdout)
    assert js["parameters"]["expansion"] == 2 and js["details"]["tables"] == 4 and len(js["sub_filters"]) == 4
    assert js["capacity"] == 100 + 200 + 400 + 800
    assert run("verify", f, check_rc=0).returncode == 0
    # after the window every grown table goes at the next write
    run("add", f, "--now", T0 + 2 * 3600000, "late", check_rc=0)
    assert json.loads(run("info", f, "--json", "--now", T0 + 2 * 3600000, check_rc=0).stdout)["details"]["tables"] == 1
    # expansion 0 (the default): full
    z = str(tmp_path / "z.nidus")
    run("create", z, "--window", "1h", "--capacity", 100, check_rc=0)
    assert run("add", z, "--now", T0, *keys, check_rc=1).returncode == 1
    assert "expansion 0" in run("info", z, "--now", T0, check_rc=0).stdout.decode()


def test_a_window_bounded_in_memory(tmp_path):
    f = str(tmp_path / "m.nidus")
    run("create", f, "--window", "1h", "--capacity", 100, "--expansion", 2, "--max-memory", 5000, check_rc=0)
    i = info(f, T0)
    assert i["parameters"]["max_memory"] == 5000 and i["parameters"]["expansion"] == 2
    assert "expansion 2, max memory 5000 bytes\n" in run("info", f, "--now", T0, check_rc=0).stdout.decode()
    keys = [f"k{i}" for i in range(500)]
    run("add", f, "--now", T0, *keys, check_rc=0)  # grows within the bound
    i = info(f, T0)
    assert i["details"]["tables"] == 3 and i["parameters"]["max_memory"] == 5000  # kept through add's save
    # a fourth table (capacity 800) would pass the bound: the add fails, the file byte for byte as it was
    more = [f"m{i}" for i in range(2000)]
    before = open(f, "rb").read()
    p = run("add", f, "--now", T0, *more, check_rc=1)
    assert b"growing would pass the filter's memory bound" in p.stderr and p.stderr.count(b"\n") == 2
    assert open(f, "rb").read() == before
    # --keep-going: the keys that fit go into the three tables, and no key added before is lost
    p = run("add", f, "--keep-going", "--now", T0, *more, check_rc=1)
    failed = int(p.stderr.split(b": ")[2].split(b" of ")[0])
    assert 0 < failed < 2000
    i = info(f, T0)
    assert i["details"]["tables"] == 3 and i["parameters"]["max_memory"] == 5000
    assert check(f, T0 + 3600000, *keys) == [b"1"] * 500
    assert check(f, T0 + 3600000, *more).count(b"1") >= 2000 - failed
    run("verify", f, check_rc=0)
    # unbounded, the same adds grow past three tables
    u = str(tmp_path / "u.nidus")
    run("create", u, "--window", "1h", "--capacity", 100, "--expansion", 2, check_rc=0)
    run("add", u, "--now", T0, *keys, *more, check_rc=0)
    assert info(u, T0)["details"]["tables"] > 3 and info(u, T0)["parameters"]["max_memory"] == 0
    # once the burst has expired the grown tables go, and the filter takes keys again under the same bound
    later = T0 + 2 * 3600000
    run("add", f, "--now", later, *keys, check_rc=0)
    i = info(f, later)
    assert i["details"]["tables"] == 3 and i["parameters"]["max_memory"] == 5000
    # merging past the bound: exit 2, DEST untouched
    run("add", u, "--now", later, *more, check_rc=0)
    before = open(f, "rb").read()
    p = run("merge", f, u, check_rc=2)
    assert b"memory bound" in p.stderr and p.stderr.count(b"\n") == 1
    assert open(f, "rb").read() == before


def test_build_with_a_memory_bound(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_bytes(b"".join(b"b%d\n" % i for i in range(2000)))
    f = tmp_path / "b.nidus"
    args = ("build", f, "--window", "1h", "--capacity", 100, "--expansion", 2, "--from", keys, "--now", T0)
    p = run(*args, "--max-memory", 5000, check_rc=1)
    assert b"memory bound" in p.stderr and not f.exists()
    run(*args, "--max-memory", 5000, "--keep-going", check_rc=1)
    assert info(f, T0)["parameters"]["max_memory"] == 5000 and info(f, T0)["details"]["tables"] == 3
    run(*args, "--max-memory", 50000, "--force", check_rc=0)
    assert info(f, T0)["items"] == 2000 and info(f, T0)["parameters"]["max_memory"] == 50000


@pytest.mark.parametrize("args,says", [
    (["--expansion", 2, "--max-memory", "-1"], "--max-memory must be a whole number of bytes"),
    (["--expansion", 2, "--max-memory", "1.5"], "--max-memory must be a whole number of bytes"),
    (["--expansion", 2, "--max-memory", "10k"], "--max-memory must be a whole number of bytes"),
    (["--expansion", 2, "--max-memory", ""], "--max-memory must be a whole number of bytes"),
    (["--expansion", 2, "--max-memory", "18446744073709551616"], "--max-memory must be a whole number of bytes"),
    (["--max-memory", 5000], "give --expansion E above 0 too"),
    (["--expansion", 0, "--max-memory", 5000], "give --expansion E above 0 too"),
    (["--expansion", 2, "--max-memory", 100], "--max-memory 100 is below the 930 bytes it takes when created"),
])
def test_bad_memory_bounds_are_refused(tmp_path, args, says):
    f = tmp_path / "w.nidus"
    p = run("create", f, "--window", "1h", "--capacity", 100, *args, check_rc=2)
    assert says in p.stderr.decode() and p.stderr.count(b"\n") == 1
    assert not f.exists()


def test_a_memory_bound_is_for_windows(tmp_path):
    f = tmp_path / "f.nidus"
    for kind in ("cuckoo", "bloom", "counting-bloom"):
        p = run("create", f, "--type", kind, "--capacity", 100, "--max-memory", 5000, check_rc=2)
        assert b"--max-memory bounds a windowed filter's growth" in p.stderr and p.stderr.count(b"\n") == 1
    p = run("build", f, "--type", "fuse", "--from", os.devnull, "--max-memory", 5000, check_rc=2)
    assert b"--max-memory does not apply to a fuse filter" in p.stderr
    assert not f.exists()
    # the least bound creation takes is what the new filter holds
    run("create", f, "--window", "1h", "--capacity", 100, "--expansion", 2, "--max-memory", 930, check_rc=0)
    assert info(f, T0)["memory_bytes"] == 930

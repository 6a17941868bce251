# SPDX-License-Identifier: BSD-3-Clause
"""Filters made by the CLI grow by default as the Redis module's do; `add`, `del` and `build` are all or nothing
(exit 1, the file byte for byte as it was) unless --keep-going, and report failed keys in two lines."""
import json
import os
import re
import shutil

import pytest

from cli_util import run

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
FULL = "the filter is full and does not grow (expansion 0)"


def info(path):
    return json.loads(run("info", path, "--json", check_rc=0).stdout)


def lines(prefix, n, start=0):
    return b"".join(b"%s-%d\n" % (prefix.encode(), i) for i in range(start, start + n))


def module_default(name):
    """The initial value of one of the module's settings, from its table in redis/config.c."""
    text = open(os.path.join(SOURCE, "redis", "config.c")).read()
    m = re.search(r'UINT\("%s", [^,]+, \w+, "(\d+)"' % re.escape(name), text)
    assert m, name
    return int(m.group(1))


def test_the_defaults_are_the_modules(tmp_path):
    c, b = str(tmp_path / "c.nidus"), str(tmp_path / "b.nidus")
    run("create", c, "--capacity", 100, check_rc=0)
    run("build", b, "--type", "bloom", "--from", "-", "--capacity", 100, input=b"a\n", check_rc=0)
    params = info(c)["parameters"]
    assert params["expansion"] == module_default("cf-expansion-factor") == 1
    assert params["max_tables"] == module_default("cf-max-expansions") == 32
    assert info(b)["parameters"]["expansion"] == module_default("bf-expansion-factor") == 2


@pytest.mark.parametrize("kind", ["cuckoo", "bloom"])
def test_a_built_filter_takes_ten_times_its_capacity(tmp_path, kind):
    keys = tmp_path / "keys.txt"
    keys.write_bytes(lines("k", 2000))
    f = str(tmp_path / "f.nidus")
    run("build", f, "--type", kind, "--from", keys, check_rc=0)  # sized for the 2,000 lines
    capacity = info(f)["capacity"]
    assert len(info(f)["sub_filters"]) == 1 and capacity < 2600
    more = lines("more", 10 * capacity)
    p = run("add", f, input=more, check_rc=0)
    assert p.stderr == b""
    grown = info(f)
    assert len(grown["sub_filters"]) > 1
    # (a Bloom filter counts the keys it found new: a false positive is not an item)
    assert grown["items"] == 2000 + 10 * capacity if kind == "cuckoo" else grown["items"] > 0.99 * 11 * capacity
    assert run("check", f, input=keys.read_bytes() + more, check_rc=0).stdout == b"1\n" * (2000 + 10 * capacity)
    assert run("verify", f, check_rc=0).returncode == 0


def test_a_counting_bloom_filter_does_not_grow_and_never_fills(tmp_path):
    f = str(tmp_path / "f.nidus")
    p = run("create", f, "--type", "counting-bloom", "--capacity", 100, "--expansion", 1, check_rc=2)
    assert p.stderr == (b"nidus create: a counting-bloom filter does not grow: --expansion must be 0 or left out "
                        b"(see 'nidus help create')\n")
    run("create", f, "--type", "counting-bloom", "--capacity", 100, "--expansion", 0, check_rc=0)
    run("add", f, input=lines("k", 1000), check_rc=0)  # ten times its capacity: no failure, a higher error
    assert info(f)["items"] == 1000 and len(info(f)["sub_filters"]) == 1
    assert run("check", f, input=lines("k", 1000)).stdout == b"1\n" * 1000


def test_expansion_0_fills_then_add_fails_leaving_the_file_byte_for_byte(tmp_path):
    f = str(tmp_path / "f.nidus")
    run("create", f, "--type", "bloom", "--capacity", 10, "--expansion", 0, check_rc=0)
    run("add", f, input=lines("k", 6), check_rc=0)
    before = open(f, "rb").read()
    mtime = os.stat(f).st_mtime_ns
    p = run("add", f, input=lines("k", 9, start=6), check_rc=1)  # 4 fit, 5 do not
    assert p.stderr.decode().splitlines() == [
        "nidus: %s: 5 of 9 keys could not be added; the first, key 5 (k-10): %s" % (f, FULL),
        "nidus: %s: left unchanged (--keep-going adds the keys that fit)" % f]
    assert open(f, "rb").read() == before and os.stat(f).st_mtime_ns == mtime
    assert run("check", f, "k-6").stdout == b"0\n"  # the keys that would have fitted were not added either
    # one failure, keys as arguments
    p = run("add", f, "k-6", "k-7", "k-8", "k-9", "k-10", check_rc=1)
    assert p.stderr.decode().splitlines()[0] == (
        "nidus: %s: 1 of 5 keys could not be added; the first, key 5 (k-10): %s" % (f, FULL))
    assert open(f, "rb").read() == before
    p = run("add", f, "--keep-going", input=lines("k", 9, start=6) + b"last\n", check_rc=1)
    assert p.stderr.decode().splitlines() == [
        "nidus: %s: 6 of 10 keys could not be added; the first, key 5 (k-10): %s" % (f, FULL),
        "nidus: %s: the other 4 keys were added" % f]
    assert info(f)["items"] == 10
    assert run("check", f, input=lines("k", 10)).stdout == b"1\n" * 10
    run("add", f, "k-0", check_rc=0)  # already there: nothing to add, nothing fails


def test_cuckoo_expansion_0_all_or_nothing_and_keep_going(tmp_path):
    f = str(tmp_path / "f.nidus")
    keys = tmp_path / "keys.txt"
    keys.write_bytes(lines("k", 1000))
    run("build", f, "--from", keys, "--expansion", 0, check_rc=0)
    before = open(f, "rb").read()
    more = lines("more", 5000)  # thousands fail: the summary stays two lines
    p = run("add", f, input=more, check_rc=1)
    err = p.stderr.decode().splitlines()
    assert len(err) == 2, err
    m = re.fullmatch(r"nidus: (.*): (\d+) of 5000 keys could not be added; the first, key (\d+) \(more-(\d+)\): "
                     + re.escape(FULL), err[0])
    assert m and m.group(1) == f and int(m.group(3)) == int(m.group(4)) + 1, err
    failed = int(m.group(2))
    assert 3000 < failed < 5000
    assert err[1] == "nidus: %s: left unchanged (--keep-going adds the keys that fit)" % f
    assert open(f, "rb").read() == before
    p = run("add", f, "--keep-going", input=more, check_rc=1)
    err = p.stderr.decode().splitlines()
    assert err[0].startswith("nidus: %s: %d of 5000 keys could not be added; the first, key %s " % (
        f, failed, m.group(3)))
    assert err[1] == "nidus: %s: the other %d keys were added" % (f, 5000 - failed)
    assert info(f)["items"] == 1000 + 5000 - failed
    answers = run("check", f, input=keys.read_bytes() + more).stdout.split()
    assert answers[:1000] == [b"1"] * 1000 and answers.count(b"1") >= 1000 + 5000 - failed


def test_a_failed_key_is_shown_printable_and_short(tmp_path):
    f = str(tmp_path / "f.nidus")
    run("create", f, "--type", "bloom", "--capacity", 1, "--expansion", 0, check_rc=0)
    run("add", f, "first", check_rc=0)
    long_key = b"\x01tab\there\\" + b"x" * 100
    p = run("add", f, input=long_key + b"\n", check_rc=1)
    shown = "\\x01tab\\x09here\\x5c" + "x" * 50 + "..."  # the first 60 bytes
    assert p.stderr.decode().splitlines()[0] == (
        "nidus: %s: 1 of 1 key could not be added; the first, key 1 (%s): %s" % (f, shown, FULL))


def test_del_is_all_or_nothing(tmp_path):
    f = str(tmp_path / "f.nidus")
    run("create", f, "--capacity", 100, check_rc=0)
    run("add", f, "a", "b", "c", check_rc=0)
    before = open(f, "rb").read()
    p = run("del", f, "a", "absent", "b", "gone", check_rc=1)
    assert p.stderr.decode().splitlines() == [
        "nidus: %s: 2 of 4 keys were not in the filter; the first, key 2 (absent)" % f,
        "nidus: %s: left unchanged (--keep-going removes the keys that are there)" % f]
    assert open(f, "rb").read() == before
    p = run("del", f, "a", "absent", "--keep-going", check_rc=1)
    assert p.stderr.decode().splitlines() == [
        "nidus: %s: 1 of 2 keys was not in the filter; the first, key 2 (absent)" % f,
        "nidus: %s: the other key was removed" % f]
    assert run("check", f, "a", "b", "c").stdout == b"0\n1\n1\n"
    p = run("del", f, "absent", "--keep-going", check_rc=1)
    assert p.stderr.decode().splitlines()[1] == "nidus: %s: no key was removed" % f
    run("del", f, "b", "c", check_rc=0)
    assert info(f)["items"] == 0


def test_build_is_all_or_nothing(tmp_path):
    f = str(tmp_path / "f.nidus")
    keys = lines("k", 20)
    p = run("build", f, "--type", "bloom", "--from", "-", "--capacity", 15, "--expansion", 0, input=keys, check_rc=1)
    assert p.stderr.decode().splitlines() == [
        "nidus: %s: 5 of 20 keys could not be added; the first, key 16 (k-15): %s" % (f, FULL),
        "nidus: %s: not written (--keep-going writes the keys that fit)" % f]
    assert not os.path.exists(f)
    run("create", f, "--capacity", 10, check_rc=0)
    before = open(f, "rb").read()
    run("build", f, "--type", "bloom", "--from", "-", "--capacity", 15, "--expansion", 0, "--force", input=keys,
        check_rc=1)
    assert open(f, "rb").read() == before  # --force replaces a file only with a whole new filter
    p = run("build", f, "--type", "bloom", "--from", "-", "--capacity", 15, "--expansion", 0, "--force",
            "--keep-going", input=keys, check_rc=1)
    assert p.stderr.decode().splitlines()[1] == "nidus: %s: the other 15 keys were added" % f
    assert info(f)["items"] == 15 and info(f)["kind"] == "bloom"


def test_keep_going_is_only_for_commands_that_write_keys(tmp_path):
    f = str(tmp_path / "f.nidus")
    p = run("create", f, "--capacity", 10, "--keep-going", check_rc=2)
    assert b"unknown option" in p.stderr
    run("create", f, "--capacity", 10, check_rc=0)
    for cmd in (["check", f, "a"], ["info", f], ["verify", f], ["count", f, "a"]):
        assert b"unknown option" in run(*cmd, "--keep-going", check_rc=2).stderr


@pytest.mark.parametrize("kind", ["cuckoo", "bloom"])
def test_in_place_writes_all_or_nothing_and_growth(tmp_path, kind):
    """Files of 3 blocks and more are patched in place: a failed add leaves them whole, a grown filter is written
    whole (its layout changed), and either way every key is found."""
    f = str(tmp_path / "f.nidus")
    capacity = 200000 if kind == "cuckoo" else 400000
    run("create", f, "--type", kind, "--capacity", capacity, "--expansion", 0, check_rc=0)
    assert os.path.getsize(f) > 3 * 65536
    keys = lines("k", capacity)
    run("add", f, "--keep-going", input=keys)  # a cuckoo table may refuse a few near its capacity
    before = open(f, "rb").read()
    p = run("add", f, input=lines("over", capacity // 4), check_rc=1)
    assert len(p.stderr.splitlines()) == 2 and open(f, "rb").read() == before
    # the same file made growable: the default expansion
    g = str(tmp_path / "g.nidus")
    run("create", g, "--type", kind, "--capacity", capacity, check_rc=0)
    run("add", g, input=keys, check_rc=0)
    more = lines("more", capacity)
    run("add", g, input=more, check_rc=0)  # in place, then grown: written whole
    grown = info(g)
    assert len(grown["sub_filters"]) >= 2
    assert grown["items"] == 2 * capacity if kind == "cuckoo" else 0.99 * 2 * capacity < grown["items"] <= 2 * capacity
    assert run("verify", g, check_rc=0).returncode == 0
    assert run("check", g, input=keys + more).stdout == b"1\n" * (2 * capacity)
    shutil.copy(g, f)
    run("add", f, "one-more", check_rc=0)  # a grown file is patched in place again
    assert run("check", f, "one-more", "k-0").stdout == b"1\n1\n"

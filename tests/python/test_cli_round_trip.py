# SPDX-License-Identifier: BSD-3-Clause
"""One format everywhere: files made by `nidus build` open in Python and answer as `nidus check` does; filters
saved from Python pass `nidus verify`, answer the same through `nidus check` and `nidus count`, and push to a
server with the module, whose CF.EXISTS / BF.EXISTS answer the same again."""
import json

import pytest

import nidus
from cli_util import run
from server_util import answers_file, answers_key, servers, url


def keys(n, prefix="k"):
    return [("%s%d" % (prefix, i)).encode() for i in range(n)]


ADDED = keys(6000) + ["ünïcode-%d" % i for i in range(100)]  # str keys go as UTF-8, as the CLI reads bytes
ABSENT = keys(6000, "absent")
LINES = [k.encode() if isinstance(k, str) else k for k in ADDED]
PROBES = LINES + ABSENT


def cli_build(tmp_path, name, *opts):
    path = str(tmp_path / name)
    run("build", path, "--from", "-", *opts, input=b"\n".join(LINES) + b"\n", check_rc=0)
    return path


@pytest.mark.parametrize("opts,cls", [
    (("--capacity", "8000"), nidus.CuckooFilter),
    (("--capacity", "500"), nidus.CuckooFilter),  # grown: several sub-filters
    (("--capacity", "8000", "--semi-sort", "--bucket-size", "4", "--error", "0.001"), nidus.CuckooFilter),
    (("--type", "bloom", "--capacity", "8000"), nidus.BloomFilter),
    (("--type", "bloom", "--capacity", "500"), nidus.BloomFilter),
    (("--type", "counting-bloom", "--capacity", "8000", "--expansion", "0"), nidus.CountingBloomFilter),
    (("--type", "fuse",), nidus.FuseFilter),
    (("--type", "fuse", "--fingerprint-bits", "16"), nidus.FuseFilter),
])
def test_cli_file_opens_in_python_and_answers_the_same(tmp_path, opts, cls):
    path = cli_build(tmp_path, "cli.nidus", *opts)
    want = answers_file(path, PROBES)
    assert all(want[:len(LINES)])
    with open(path, "rb") as f:
        data = f.read()
    for g in (nidus.open(path), nidus.open(path, writable=True), nidus.from_bytes(data),
              nidus.from_bytes(data, writable=True)):
        assert type(g) is cls
        assert [int(x) for x in g.contains_many(PROBES)] == want
        assert [int(k in g) for k in ADDED] == want[:len(ADDED)]
    info = json.loads(run("info", path, "--json", check_rc=0).stdout)
    assert len(nidus.open(path)) == info["items"]


def python_filters():
    c = nidus.CuckooFilter(8000, 0.001)
    grown = nidus.CuckooFilter(500, 0.01)
    semi = nidus.CuckooFilter(8000, bucket_size=4, semi_sort=True)
    b = nidus.BloomFilter(8000, 0.01)
    compact = nidus.BloomFilter(500, 0.01, layout="compact")
    counting = nidus.CountingBloomFilter(8000, 0.01)
    out = {"cuckoo": c, "cuckoo-grown": grown, "cuckoo-semi": semi, "bloom": b, "bloom-compact-grown": compact,
           "counting-bloom": counting}
    for f in out.values():
        f.update(ADDED)
    c.add(ADDED[0])  # a duplicate: counted twice
    out["fuse"] = nidus.FuseFilter.build(ADDED)
    return out


@pytest.mark.parametrize("name", ["cuckoo", "cuckoo-grown", "cuckoo-semi", "bloom", "bloom-compact-grown",
                                  "counting-bloom", "fuse"])
def test_python_file_passes_verify_and_answers_the_same(tmp_path, name):
    f = python_filters()[name]
    path = str(tmp_path / (name + ".nidus"))
    f.save(path)
    run("verify", path, check_rc=0)
    assert answers_file(path, PROBES) == [int(x) for x in f.contains_many(PROBES)]
    info = json.loads(run("info", path, "--json", check_rc=0).stdout)
    assert info["items"] == len(f)
    got = run("count", path, ADDED[0].decode(), check_rc=0).stdout.split()
    assert int(got[-1]) == f.count(ADDED[0])


def test_python_writes_in_place_and_the_cli_reads_it(tmp_path):
    path = cli_build(tmp_path, "f.nidus", "--capacity", "20000")
    g = nidus.open(path, writable=True)
    g.update(keys(3000, "more"))
    g.remove(LINES[0])
    g.save()
    run("verify", path, check_rc=0)
    assert answers_file(path, keys(3000, "more")) == [1] * 3000
    assert answers_file(path, PROBES) == [int(x) for x in g.contains_many(PROBES)]
    # and the CLI's writes come back to Python
    run("add", path, "from-the-cli", check_rc=0)
    assert "from-the-cli" in nidus.open(path)


@pytest.fixture
def server(tmp_path):
    s = servers.Server(tmp_path / "server")
    yield s
    s.stop()


@pytest.mark.parametrize("name,cmd", [("cuckoo", "CF.EXISTS"), ("cuckoo-grown", "CF.EXISTS"),
                                      ("bloom", "BF.EXISTS"), ("bloom-compact-grown", "BF.EXISTS")])
def test_python_file_pushes_to_a_server(server, tmp_path, name, cmd):
    f = python_filters()[name]
    path = str(tmp_path / "p.nidus")
    f.save(path)
    run("push", path, "key", "--url", url(server), check_rc=0)
    kind = "cuckoo" if cmd.startswith("CF") else "bloom"
    assert answers_key(server.client(), kind, "key", PROBES) == [int(x) for x in f.contains_many(PROBES)]
    # and back: pulled into a file, opened in Python
    run("pull", "key", str(tmp_path / "back.nidus"), "--url", url(server), check_rc=0)
    back = nidus.open(tmp_path / "back.nidus")
    assert back.contains_many(PROBES) == f.contains_many(PROBES)


T0 = 1_700_000_000_000  # ms
W = 60_000


def window_answers(path, now):
    out = run("check", path, "--now", str(now), input=b"\n".join(PROBES) + b"\n", check_rc=0).stdout.split()
    return [int(x) for x in out]


def test_windowed_files_go_both_ways(tmp_path):
    """A windowed file from `nidus build --window` opens in Python and answers as `nidus check --now` does, inside
    the window and after it; one saved from Python passes `nidus verify` and answers the same through the CLI."""
    path = cli_build(tmp_path, "w.nidus", "--window", "1m", "--capacity", "8000", "--now", str(T0))
    for now in (T0, T0 + W, T0 + 2 * W):
        want = window_answers(path, now)
        g = nidus.open(path)
        assert type(g) is nidus.WindowedCuckooFilter
        assert [int(x) for x in g.contains_many(PROBES, now=now)] == want
        if now <= T0 + W:  # inside the window: every key
            assert all(want[:len(LINES)])
    f = nidus.WindowedCuckooFilter(8000, W, 0.01)
    f.update(ADDED, now=T0)
    out = str(tmp_path / "p.nidus")
    f.save(out)
    run("verify", out, check_rc=0)
    for now in (T0, T0 + W, T0 + 2 * W):
        assert window_answers(out, now) == [int(x) for x in f.contains_many(PROBES, now=now)]

# SPDX-License-Identifier: BSD-3-Clause
"""One set of RedisBloom's own data (fixtures/redisbloom, made by its make_fixtures.py): the expected answers,
the DUMP payloads and SCANDUMP chunk streams, and the checks that a server answers every probe as RedisBloom
did."""
import json
import os
import struct

import redis

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "redisbloom")


class Fixtures:
    def __init__(self, path=HERE):
        self.path = path
        with open(os.path.join(path, "expected.json")) as f:
            data = json.load(f)
        self.expected, self.scenarios = data["keys"], data["scenarios"]
        self.rdb_version = data.get("rdb_version", 10)  # the Redis 7.0 set predates the field
        self.cf_keys = sorted(k for k, v in self.expected.items() if v["kind"] == "cf")
        self.bf_keys = sorted(k for k, v in self.expected.items() if v["kind"] == "bf")

    def items(self, key, n=None):
        e = self.expected[key]
        return ["%s%d" % (e["prefix"], i) for i in range(e["n"] if n is None else n)]

    def exists_string(self, r, key, name=None):
        e = self.expected[key]
        got = []
        its = self.items(key)
        for i in range(0, len(its), 1000):
            got += r.execute_command(e["kind"].upper() + ".MEXISTS", name or key, *its[i:i + 1000])
        return "".join(str(int(x)) for x in got)

    def counts(self, r, key, name=None):
        pipe = r.pipeline(transaction=False)
        for it in self.items(key):
            pipe.execute_command("CF.COUNT", name or key, it)
        return pipe.execute()

    def assert_exact(self, r, key, name=None):
        """Every probe answers as RedisBloom answered it: EXISTS, and CF.COUNT for cuckoo filters."""
        e = self.expected[key]
        got = self.exists_string(r, key, name)
        diff = [i for i, (a, b) in enumerate(zip(got, e["exists"])) if a != b]
        assert not diff, "%s (as %s): %d answers differ from RedisBloom's, first at item %d" % (
            key, name or key, len(diff), diff[0])
        if e["kind"] == "cf":
            got = self.counts(r, key, name)
            diff = [i for i, (a, b) in enumerate(zip(got, e["count"])) if a != b]
            assert not diff, "%s: %d counts differ, first at item %d" % (key, len(diff), diff[0])

    def info(self, r, key):
        reply = r.execute_command(self.expected[key]["kind"].upper() + ".INFO", key)
        return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}

    def read_chunks(self, key):
        with open(os.path.join(self.path, "scandump", key + ".chunks"), "rb") as f:
            data = f.read()
        out, pos = [], 0
        while pos < len(data):
            it, n = struct.unpack("<QI", data[pos:pos + 12])
            out.append((it, data[pos + 12:pos + 12 + n]))
            pos += 12 + n
        return out

    def load_chunks(self, r, key):
        """LOADCHUNKs the key's recorded chunk stream into r (each must answer OK); returns the chunks."""
        kind = self.expected[key]["kind"].upper()
        chunks = self.read_chunks(key)
        for it, data in chunks:
            assert r.execute_command(kind + ".LOADCHUNK", key, it, data) == b"OK"
        return chunks

    def assert_scenario(self, r, key):
        """Runs the commands RedisBloom ran on the key after its snapshot (r holds the key as the snapshot had
        it): RedisBloom's replies one by one, then its answers for every probe, its counts and its INFO."""
        sc, kind = self.scenarios[key], self.expected[key]["kind"].upper()
        replies = []
        for cmd, item in sc["ops"]:
            try:
                replies.append(r.execute_command(cmd, key, item))
            except redis.ResponseError as e:
                replies.append("error: %s" % e)
        diff = [i for i, (a, b) in enumerate(zip(replies, sc["replies"])) if a != b]
        assert not diff, "%s: %d replies differ, first: %s -> %r, RedisBloom %r" % (
            key, len(diff), sc["ops"][diff[0]], replies[diff[0]], sc["replies"][diff[0]])
        probes = self.items(key) + sc["probes"]
        got = "".join(str(int(x)) for x in r.execute_command(kind + ".MEXISTS", key, *probes))
        assert got == sc["exists"]
        if kind == "CF":
            pipe = r.pipeline(transaction=False)
            for p in probes:
                pipe.execute_command("CF.COUNT", key, p)
            assert pipe.execute() == sc["count"]
        want = {k: v for k, v in sc["info"].items() if k != "Size"}
        assert {k: v for k, v in self.info(r, key).items() if k != "Size"} == want

    def payload(self, key):
        with open(os.path.join(self.path, "dump", key + ".bin"), "rb") as f:
            return f.read()


def scandump(r, kind, key):
    """Every (iterator, chunk) pair of KIND.SCANDUMP key, through redis-py."""
    chunks, it = [], 0
    while True:
        it, data = r.execute_command(kind.upper() + ".SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))

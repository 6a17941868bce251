#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of fuzz_rb_rdb and fuzz_rb_chunks from RedisBloom's own data
(tests/redis/fixtures/redisbloom): DUMP payloads become the loader's token stream (fuzz_rb_rdb.c), SCANDUMP
streams are already fuzz_rb_chunks's format. With a port of a running redis-server with nidus.so, also seeds
of our encoding (512) and of streams with a growth part, from keys grown there. Run by hand after a format
change:   /usr/bin/python3 fuzz/make_rb_corpus.py [PORT]"""
import glob
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "tests", "redis", "fixtures", "redisbloom")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "redis"))
import rb_payload as P  # noqa: E402


def tokens(payload):
    name, encver, ops, _ = P.parse(payload)
    kind = 0 if name == "MBbloomCF" else 1
    out = bytearray([((5 if encver == 512 else encver) << 1) | kind])
    for op, v in ops:
        if op == P.OP_UINT:
            out += struct.pack("<Q", v)
        elif op == P.OP_DOUBLE:
            out += struct.pack("<d", v)
        else:
            out += struct.pack("<I", len(v)) + v
    return bytes(out)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for path in sorted(glob.glob(os.path.join(FIX, "dump", "*.bin"))):
        key = os.path.basename(path)[:-4]
        with open(path, "rb") as f:
            write("rb_rdb", key, tokens(f.read()))
        with open(os.path.join(FIX, "scandump", key + ".chunks"), "rb") as f:
            write("rb_chunks", key, bytes([0 if key.startswith("cf") else 1]) + f.read())
    if len(sys.argv) > 1:
        import redis
        r = redis.Redis(port=int(sys.argv[1]))
        for key, cmd in (("cf_b1", "CF"), ("bf_scale", "BF")):
            with open(os.path.join(FIX, "dump", key + ".bin"), "rb") as f:
                r.restore("grown", 0, f.read(), replace=True)
            if cmd == "CF":
                r.execute_command("CF.INSERT", "grown", "ITEMS", *["g%d" % i for i in range(2000)])
            else:
                r.execute_command("BF.MADD", "grown", *["g%d" % i for i in range(2000)])
            write("rb_rdb", key + "_grown", tokens(r.dump("grown")))
            stream, it = bytearray([0 if cmd == "CF" else 1]), 0
            while True:
                it, data = r.execute_command(cmd + ".SCANDUMP", "grown", it)
                if it == 0:
                    break
                stream += struct.pack("<QI", it, len(data)) + data
            write("rb_chunks", key + "_grown", bytes(stream))
            r.delete("grown")


if __name__ == "__main__":
    main()

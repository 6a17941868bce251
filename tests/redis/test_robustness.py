# SPDX-License-Identifier: BSD-3-Clause
"""No argument or byte string crashes or hangs the server."""
import random

from resp import Error, Raw, scandump

COMMANDS = ["CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX", "CF.EXISTS", "CF.MEXISTS", "CF.DEL",
            "CF.COUNT", "CF.COMPACT", "CF.INFO", "CF.SCANDUMP", "CF.LOADCHUNK", "BF.RESERVE", "BF.ADD", "BF.MADD",
            "BF.INSERT", "BF.EXISTS", "BF.MEXISTS", "BF.INFO", "BF.CARD", "BF.SCANDUMP", "BF.LOADCHUNK"]
WORDS = ["ITEMS", "CAPACITY", "ERROR", "EXPANSION", "NOCREATE", "NONSCALING", "BUCKETSIZE", "MAXITERATIONS",
         "FINGERPRINT", "SEMISORT", "0", "1", "-1", "2", "4", "255", "256", "65535", "65536", "32768", "1e308",
         "nan", "inf", "-inf", "0.5", "1.0", "9223372036854775807", "-9223372036854775808",
         "18446744073709551616", "", "\x00", "k", "cf", "bf"]


def test_random_malformed_commands(server):
    c = Raw(server.port)
    rng = random.Random(1234)
    c("CF.ADD", "cf", "x")
    c("BF.ADD", "bf", "x")
    for _ in range(4000):
        args = [rng.choice(COMMANDS), rng.choice(["cf", "bf", "k", "new%d" % rng.randrange(50)])]
        for _ in range(rng.randrange(0, 7)):
            if rng.random() < 0.8:
                args.append(rng.choice(WORDS))
            else:
                args.append(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))))
        c(*args)
    assert c("PING") == "PONG"
    assert server.alive()


def test_corrupted_loadchunk_chunks(server):
    c = Raw(server.port)
    c("CF.RESERVE", "src", 20000, "EXPANSION", 2)
    c("CF.INSERT", "src", "ITEMS", *["k%d" % i for i in range(3000)])
    c("BF.MADD", "bsrc", *["k%d" % i for i in range(3000)])
    rng = random.Random(99)
    for kind, src in (("CF", "src"), ("BF", "bsrc")):
        chunks = scandump(c, kind, src)
        for trial in range(200):
            dst = "dst%s%d" % (kind, trial)
            for it, data in chunks:
                bad = bytearray(data)
                if rng.random() < 0.5 and bad:
                    for _ in range(rng.randrange(1, 5)):
                        bad[rng.randrange(len(bad))] = rng.randrange(256)
                if rng.random() < 0.1:
                    bad = bad[:rng.randrange(len(bad) + 1)]
                reply = c(kind + ".LOADCHUNK", dst, it, bytes(bad))
                if isinstance(reply, Error):
                    break
            c(kind + ".EXISTS", dst, "k1")
            c(kind + ".INFO", dst)
    assert c("PING") == "PONG"
    assert server.alive()


def test_limits_refuse_oversized_filters_before_allocating(make_server):
    s = make_server("limits", module_args=("max_filter_memory", str(1 << 20), "max_capacity", str(1 << 24)))
    c = Raw(s.port)
    assert c("CF.RESERVE", "big", 1 << 23) == Error("ERR filter would be larger than the module's max_filter_memory")
    assert c("BF.RESERVE", "big", "0.0001", 1 << 23) == \
        Error("ERR filter would be larger than the module's max_filter_memory")
    assert c("CF.RESERVE", "huge", 1 << 25) == Error("Capacity must be in the range [2 * BUCKETSIZE, 16777216]")
    assert c("EXISTS", "big") == 0
    # a LOADCHUNK header from a larger server is refused here
    big = make_server("big-source")
    b = Raw(big.port)
    b("CF.RESERVE", "src", 1 << 21)
    b("CF.ADD", "src", "x")
    it, header = b("CF.SCANDUMP", "src", 0)
    assert c("CF.LOADCHUNK", "dst", it, header) == \
        Error("ERR filter would be larger than the module's max_filter_memory")
    assert c("EXISTS", "dst") == 0
    assert s.alive()


def test_module_arguments_are_checked(tmp_path):
    import subprocess

    from conftest import MODULE, SERVER
    for bad in (["error_rate", "2"], ["cf_max_expansions", "0"], ["max_filter_memory", "1"], ["initial_size"],
                ["unknown_option", "1"]):
        proc = subprocess.run([SERVER, "--port", "0", "--loadmodule", MODULE, *bad], capture_output=True,
                              text=True, timeout=20)
        assert proc.returncode != 0

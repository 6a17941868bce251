# SPDX-License-Identifier: BSD-3-Clause
"""Load arguments in every spelling (RedisBloom's today, its older ones, nidus's own), refusal of unknown ones,
and the module configs: CONFIG GET / SET with RedisBloom's ranges and messages, and their effect on the filters
created afterwards. On Redis 7 and on Valkey module configs carry the module's prefix ("nidus.bf-error-rate"); on
Redis 8 RedisBloom's settings go by RedisBloom's names ("bf-error-rate"): conftest.config_name."""
import os
import subprocess

from conftest import BIND_FAILURE, MODULE, SERVER, config_name, free_port, launch
from resp import Error, Raw

DEFAULTS = {
    "bf-error-rate": "0.01", "bf-initial-size": "100", "bf-expansion-factor": "2", "cf-bucket-size": "2",
    "cf-initial-size": "1024", "cf-max-iterations": "20", "cf-expansion-factor": "1", "cf-max-expansions": "32",
    "cf-error-rate": "0.01", "max-capacity": "1073741824", "max-filter-memory": "2147483648",
    "cf-compact-interval": "10", "merge-inline-bytes": "65536",
}


def get(c, name):
    reply = c("CONFIG", "GET", config_name(name))
    assert len(reply) == 2, (name, reply)
    return reply[1].decode()


def configs(c):
    """Every setting's value, by the setting's name (test_server_load checks that no other config is ours)."""
    return {name: get(c, name) for name in DEFAULTS}


def info(c, kind, key):
    reply = c(kind + ".INFO", key)
    return {reply[i].decode() if isinstance(reply[i], bytes) else reply[i]: reply[i + 1]
            for i in range(0, len(reply), 2)}


def refused_load(tmp_path, *args):
    """Starts the server with the module and `args`; returns its log after it refused to start. Redis binds its
    port before loading modules: a port taken meanwhile fails it for that reason, and it is tried again."""
    log = os.path.join(str(tmp_path), "refused.log")
    for _ in range(8):
        if os.path.exists(log):
            os.remove(log)
        proc = subprocess.run([SERVER, "--port", str(free_port()), "--bind", "127.0.0.1", "--save", "",
                               "--logfile", log, "--loadmodule", MODULE, *args], capture_output=True, text=True,
                              timeout=20)
        assert proc.returncode != 0, args
        with open(log) as f:
            text = f.read()
        if not BIND_FAILURE.search(text):
            return text
    raise AssertionError("no free port in 8 attempts")


def test_defaults(server):
    assert configs(Raw(server.port)) == DEFAULTS


def test_todays_load_arguments(make_server):
    args = {"bf-error-rate": "0.02", "bf-initial-size": "200", "bf-expansion-factor": "3", "cf-bucket-size": "4",
            "cf-initial-size": "2048", "cf-max-iterations": "30", "cf-expansion-factor": "2",
            "cf-max-expansions": "64", "cf-error-rate": "0.001", "max-capacity": "1000000",
            "max-filter-memory": "1048576", "cf-compact-interval": "0", "merge-inline-bytes": "0"}
    s = make_server("today", module_args=[x for kv in args.items() for x in kv])
    c = Raw(s.port)
    assert configs(c) == args
    assert c("CF.ADD", "cf", "x") == 1
    fields = info(c, "CF", "cf")
    assert (fields["Bucket size"], fields["Max iterations"], fields["Expansion rate"]) == (4, 30, 2)
    assert fields["Number of buckets"] * 4 >= 2048
    assert c("BF.ADD", "bf", "x") == 1
    assert info(c, "BF", "bf")["Capacity"] == 200
    assert info(c, "BF", "bf")["Expansion rate"] == 3
    assert c("BF.RESERVE", "same", "0.02", 200, "EXPANSION", 3) == "OK"
    assert info(c, "BF", "same")["Size"] == info(c, "BF", "bf")["Size"]


def test_older_load_arguments(make_server):
    """RedisBloom's older spellings and nidus's own, in any case."""
    s = make_server("older", module_args=["ERROR_RATE", "0.02", "INITIAL_SIZE", "200", "CF_MAX_EXPANSIONS", "3",
                                          "cf_initial_size", "512", "Cf_Error_Rate", "0.001", "max_capacity",
                                          "1000000", "MAX_FILTER_MEMORY", "1048576"])
    c = Raw(s.port)
    got = configs(c)
    assert {k: got[k] for k in ("bf-error-rate", "bf-initial-size", "cf-max-expansions", "cf-initial-size",
                                "cf-error-rate", "max-capacity", "max-filter-memory")} == {
        "bf-error-rate": "0.02", "bf-initial-size": "200", "cf-max-expansions": "3", "cf-initial-size": "512",
        "cf-error-rate": "0.001", "max-capacity": "1000000", "max-filter-memory": "1048576"}
    assert c("CF.RESERVE", "toobig", 2000000) == Error("Capacity must be in the range [2 * BUCKETSIZE, 1000000]")


def test_redisbloom_load_arguments_match_config_set(make_server):
    """What RedisBloom's test_config_module_load checks: load arguments and CONFIG SET give the same values."""
    loaded = Raw(make_server("loaded", module_args=["bf-error-rate", "0.02", "bf-initial-size", "200",
                                                    "cf-max-expansions", "3"]).port)
    legacy = Raw(make_server("legacy", module_args=["ERROR_RATE", "0.02", "INITIAL_SIZE", "200",
                                                    "CF_MAX_EXPANSIONS", "3"]).port)
    live = Raw(make_server("live").port)
    for name, value in (("bf-error-rate", "0.02"), ("bf-initial-size", "200"), ("cf-max-expansions", "3")):
        assert live("CONFIG", "SET", config_name(name), value) == "OK"
    for name in ("bf-error-rate", "bf-initial-size", "cf-max-expansions"):
        assert get(loaded, name) == get(legacy, name) == get(live, name)


def test_cf_max_expansions_takes_redisbloom_range(make_server, tmp_path):
    c = Raw(make_server("wide", module_args=["CF_MAX_EXPANSIONS", "65536"]).port)
    assert get(c, "cf-max-expansions") == "65536"
    # a filter holds at most 64 sub-filters: the setting above that grows as far as 64 does
    assert c("CF.RESERVE", "g", 4, "BUCKETSIZE", 1, "EXPANSION", 1) == "OK"
    for i in range(10000):
        reply = c("CF.ADD", "g", "k%d" % i)
        if reply != 1:
            break
    assert reply == Error("Maximum expansions reached")
    assert info(c, "CF", "g")["Number of filters"] == 64
    for bad in ("0", "65537", "x"):
        log = refused_load(tmp_path, "cf-max-expansions", bad)
        assert "cf-max-expansions" in log, bad


def test_one_empty_argument_is_none(make_server):
    """Packaging tools (RedisBloom's ramp-packer check) load the module with one empty argument."""
    assert configs(Raw(make_server("empty", module_args=[""]).port)) == DEFAULTS


def test_unknown_and_bad_arguments_are_named(tmp_path):
    log = refused_load(tmp_path, "bf-error-rate", "0.01", "bogus-option", "1")
    assert "unrecognized module argument 'bogus-option'" in log
    log = refused_load(tmp_path, "ERROR_RATE", "1.5")
    assert "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)" in log
    log = refused_load(tmp_path, "bf-initial-size", "many")
    assert "Invalid value for `bf-initial-size`" in log
    log = refused_load(tmp_path, "cf-bucket-size")
    assert "come in pairs" in log


def test_config_set_ranges_and_messages(server):
    c = Raw(server.port)
    bad = {"bf-error-rate": ["0", "1", "-0.5", "x"], "bf-initial-size": ["0", str(2 ** 30 + 1)],
           "bf-expansion-factor": ["-1", "32769"], "cf-bucket-size": ["0", "256"],
           "cf-initial-size": ["3", str(2 ** 30 + 1)], "cf-max-iterations": ["0", "65536"],
           "cf-expansion-factor": ["-1", "32769"], "cf-max-expansions": ["0", "65537"],
           "cf-error-rate": ["0", "1"], "max-capacity": ["3"], "max-filter-memory": ["4095"],
           "cf-compact-interval": ["-1", "60001"], "merge-inline-bytes": ["-1", "x"]}
    for name, values in bad.items():
        for v in values:
            reply = c("CONFIG", "SET", config_name(name), v)
            assert isinstance(reply, Error), (name, v)
            assert ("Value for `%s` must be in the range" % name) in reply or \
                ("Invalid value for `%s`" % name) in reply, reply
    assert configs(c) == DEFAULTS
    good = {"bf-error-rate": "0.2", "bf-initial-size": str(2 ** 30), "bf-expansion-factor": "0",
            "cf-bucket-size": "255", "cf-initial-size": str(2 ** 30), "cf-max-iterations": "65535",
            "cf-expansion-factor": "32768", "cf-max-expansions": "65536"}
    for name, v in good.items():
        assert c("CONFIG", "SET", config_name(name), v) == "OK", name
        assert get(c, name) == v


def test_bf_error_rate_is_capped_like_redisbloom(server):
    c = Raw(server.port)
    assert c("CONFIG", "SET", config_name("bf-error-rate"), "0.5") == "OK"
    assert get(c, "bf-error-rate") == "0.25"
    assert c("BF.ADD", "capped", "x") == 1
    assert c("BF.RESERVE", "quarter", "0.25", 100) == "OK"
    assert info(c, "BF", "capped")["Size"] == info(c, "BF", "quarter")["Size"]


def test_bucket_size_and_initial_size_bound_each_other(server):
    """RedisBloom: cf-initial-size >= 2 * cf-bucket-size, checked against the other's current value."""
    c = Raw(server.port)
    assert c("CONFIG", "SET", config_name("cf-initial-size"), "6") == "OK"
    assert "must be in the range [1, 3]" in c("CONFIG", "SET", config_name("cf-bucket-size"), "4")
    assert c("CONFIG", "SET", config_name("cf-bucket-size"), "3") == "OK"
    assert "must be in the range [6, 1073741824]" in c("CONFIG", "SET", config_name("cf-initial-size"), "5")


def test_config_set_changes_new_filters_only(server):
    c = Raw(server.port)
    assert c("CF.ADD", "before", "x") == 1
    assert c("BF.ADD", "bf-before", "x") == 1
    cf_before, bf_before = info(c, "CF", "before"), info(c, "BF", "bf-before")
    for name, v in (("cf-bucket-size", "4"), ("cf-max-iterations", "50"), ("cf-expansion-factor", "2"),
                    ("cf-initial-size", "4096"), ("bf-error-rate", "0.001"), ("bf-initial-size", "500"),
                    ("bf-expansion-factor", "4")):
        assert c("CONFIG", "SET", config_name(name), v) == "OK"
    assert c("CF.ADD", "after", "x") == 1
    fields = info(c, "CF", "after")
    assert (fields["Bucket size"], fields["Max iterations"], fields["Expansion rate"]) == (4, 50, 2)
    assert fields["Number of buckets"] * 4 >= 4096
    assert c("CF.INSERT", "inserted", "ITEMS", "x") == [1]
    assert info(c, "CF", "inserted")["Bucket size"] == 4
    assert c("CF.RESERVE", "reserved", 1000) == "OK"
    assert info(c, "CF", "reserved")["Max iterations"] == 50
    assert c("BF.ADD", "bf-after", "x") == 1
    assert info(c, "BF", "bf-after")["Capacity"] == 500
    assert info(c, "BF", "bf-after")["Expansion rate"] == 4
    assert c("BF.RESERVE", "bf-same", "0.001", 500, "EXPANSION", 4) == "OK"
    assert info(c, "BF", "bf-same")["Size"] == info(c, "BF", "bf-after")["Size"]
    assert c("BF.RESERVE", "bf-reserved", "0.01", 10) == "OK"
    assert info(c, "BF", "bf-reserved")["Expansion rate"] == 4
    # the filters made before keep what they were made with
    assert info(c, "CF", "before") == cf_before
    assert info(c, "BF", "bf-before") == bf_before


def test_bf_expansion_factor_zero_makes_new_filters_nonscaling(server):
    c = Raw(server.port)
    assert c("CONFIG", "SET", config_name("bf-expansion-factor"), "0") == "OK"
    assert c("CONFIG", "SET", config_name("bf-initial-size"), "10") == "OK"
    replies = [c("BF.ADD", "fixed", "k%d" % i) for i in range(40)]
    assert replies.count(1) >= 9  # a false positive may answer 0 for a new item
    assert replies[-1] == Error("ERR non scaling filter is full")
    replies = c("BF.INSERT", "inserted", "ITEMS", *["k%d" % i for i in range(40)])
    assert replies.count(1) >= 9
    assert replies[-1] == Error("ERR non scaling filter is full")
    assert info(c, "BF", "inserted")["Number of filters"] == 1
    assert info(c, "BF", "fixed")["Number of filters"] == 1


def test_config_file_sets_module_configs(tmp_path):
    """A configuration file (as MODULE LOADEX ... CONFIG) sets them too, over the load arguments."""
    conf = tmp_path / "nidus.conf"
    log = tmp_path / "server.log"

    def command(port):
        conf.write_text("port %d\nbind 127.0.0.1\nsave \"\"\ndir %s\nlogfile %s\n"
                        "loadmodule %s bf-initial-size 200\n%s 300\n%s 40\n"
                        % (port, tmp_path, log, os.path.abspath(MODULE), config_name("bf-initial-size"),
                           config_name("cf-max-iterations")))
        return [SERVER, str(conf)]

    proc, port = launch(command, str(log))
    try:
        c = Raw(port)
        assert get(c, "bf-initial-size") == "300"
        assert get(c, "cf-max-iterations") == "40"
        assert c("CF.ADD", "k", "x") == 1
        assert info(c, "CF", "k")["Max iterations"] == 40
    finally:
        proc.kill()
        proc.wait()

# SPDX-License-Identifier: BSD-3-Clause
"""What loading the module does to the server it loads into, on each server the suite runs on: no warning in
the server's log, and the module configs it registers, by their exact CONFIG names."""
import os
import re

from conftest import BIND_FAILURE, MODULE, SERVER, config_name, launch
from resp import Raw

SETTINGS = ["bf-error-rate", "bf-initial-size", "bf-expansion-factor", "cf-bucket-size", "cf-initial-size",
            "cf-max-iterations", "cf-expansion-factor", "cf-max-expansions", "cf-error-rate", "max-capacity",
            "max-filter-memory", "cf-compact-interval", "merge-inline-bytes"]

# The config names each server gets (conftest.config_name): Redis 7 and Valkey take every setting as
# nidus.<name> (Valkey refuses Redis 8's unprefixed flag, which RedisBloom's names would need); Redis 8 takes
# RedisBloom's eight by their own names and nidus's own (nidus.cf-error-rate, nidus.max-capacity, ...).
EXPECTED_NAMES = sorted(config_name(s) for s in SETTINGS)

# A log line: "pid:role date time.ms L message", L being the level: '#' warning, '*' notice, '-' verbose.
LINE = re.compile(r"^\d+:[A-Z] \d+ \w+ \d+ [\d:.]+ ([#*.-]) (.*)$")


def messages(log):
    """(level, message) of each line of a server log."""
    return [m.groups() for m in map(LINE.match, log.splitlines()) if m]


def warnings(log):
    """The warning-level messages of a server log, digits blanked (pids, ports, times differ between runs),
    but for those of a start that found its port taken (launch() then started it again on another)."""
    return {re.sub(r"\d+", "N", text) for level, text in messages(log)
            if level == "#" and not BIND_FAILURE.search(text)}


def start_and_log(tmp_path, name, module):
    """Starts a server with or without the module, stops it, and returns its whole log."""
    d = tmp_path / name
    os.makedirs(d)
    log = str(d / "server.log")

    def command(port):
        args = [SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(d), "--save", "",
                "--logfile", log]
        return args + (["--loadmodule", os.path.abspath(MODULE)] if module else [])

    proc, port = launch(command, log)
    try:
        assert Raw(port)("PING") == "PONG"
    finally:
        proc.kill()
        proc.wait()
    with open(log) as f:
        return f.read()


def test_module_load_logs_no_warning(tmp_path):
    """The warnings of a server started with the module are those of the same server started without it (the
    server's own: memory overcommit and the like). Valkey logs its "Legacy Redis Module ... found" as a notice."""
    without = start_and_log(tmp_path, "without", module=False)
    with_module = start_and_log(tmp_path, "with", module=True)
    # the lines are read: the load is there, as a notice, and so are the module's own lines
    assert [t for level, t in messages(with_module) if level == "*" and t.startswith("Module 'nidus' loaded")]
    assert [t for level, t in messages(with_module) if level == "*" and t.startswith("<nidus>")]
    assert warnings(with_module) - warnings(without) == set(), with_module


def test_config_names_per_server(server):
    c = Raw(server.port)
    reply = c("CONFIG", "GET", "*")
    names = {reply[i].decode() for i in range(0, len(reply), 2)}
    ours = sorted(n for n in names if any(n == s or n.endswith("." + s) for s in SETTINGS))
    assert ours == EXPECTED_NAMES
    for s in SETTINGS:  # and no setting answers by another name
        if config_name(s) != s:
            assert c("CONFIG", "GET", s) == [], s
        if config_name(s) != "nidus." + s:
            assert c("CONFIG", "GET", "nidus." + s) == [], s


def test_module_load_at_runtime_logs_no_warning(tmp_path):
    """MODULE LOAD into a running server without the module: loaded, with no warning added to the log."""
    d = tmp_path / "runtime"
    os.makedirs(d)
    log = str(d / "server.log")

    def command(port):
        return [SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(d), "--save", "",
                "--logfile", log, "--enable-module-command", "local"]

    proc, port = launch(command, log)
    try:
        c = Raw(port)
        before = os.path.getsize(log)
        assert c("MODULE", "LOAD", os.path.abspath(MODULE)) == "OK"
        with open(log) as f:
            f.seek(before)
            added = f.read()
        assert [t for level, t in messages(added) if level == "*" and t.startswith("Module 'nidus' loaded")]
        assert warnings(added) == set(), added
        names = [n.encode() for n in EXPECTED_NAMES]
        assert sorted(x for n in names for x in c("CONFIG", "GET", n)[::2]) == names
    finally:
        proc.kill()
        proc.wait()

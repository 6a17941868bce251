# SPDX-License-Identifier: BSD-3-Clause
"""Shared by the Redis tests: real server processes with nidus.so loaded, each on its own free port.

The server is redis-server, or the binary NIDUS_SERVER names (CTest runs every file once on each server of
NIDUS_TEST_SERVERS: Redis 7.0, 8.0 and 8.6, Valkey 8.0 and 9.1). SERVER_KIND says which ("redis" or "valkey"),
SERVER_VERSION its version as a tuple of ints (Valkey's own, not the redis_version it reports), SERVER_LABEL both
("valkey 9.1.2") for skip reasons, and REDIS8 whether it is Redis 8 or later (RedisBloom's config names)."""
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest
import redis

from resp import Raw

MODULE = os.environ.get(
    "NIDUS_MODULE", os.path.join(os.path.dirname(__file__), "..", "..", "build", "nidus.so"))
SERVER = os.environ.get("NIDUS_SERVER") or shutil.which("redis-server") or "/usr/bin/redis-server"


def _kind_and_version():
    """From `SERVER --version`: "Redis server v=7.0.15 sha=..." or "Valkey server v=9.1.2 ..."."""
    out = subprocess.run([SERVER, "--version"], capture_output=True, text=True, timeout=20).stdout
    kind = "valkey" if out.lower().startswith("valkey") else "redis"
    m = re.search(r"\bv=(\d+)\.(\d+)\.(\d+)", out)
    if not m:
        raise RuntimeError("%s --version names no version: %r" % (SERVER, out))
    return kind, tuple(int(x) for x in m.groups())


SERVER_KIND, SERVER_VERSION = _kind_and_version()
SERVER_LABEL = "%s %s" % (SERVER_KIND, ".".join(map(str, SERVER_VERSION)))
REDIS8 = SERVER_KIND == "redis" and SERVER_VERSION >= (8, 0, 0)

# The module's settings that are RedisBloom's too: on Redis 8 they are configs by RedisBloom's own names, as
# RedisBloom registers them there ("bf-error-rate"); nidus's own, and every setting on Redis 7 and Valkey, are
# "nidus.<name>".
REDISBLOOM_SETTINGS = ("bf-error-rate", "bf-initial-size", "bf-expansion-factor", "cf-bucket-size",
                       "cf-initial-size", "cf-max-iterations", "cf-expansion-factor", "cf-max-expansions")


def config_name(setting):
    """The CONFIG name of a module setting on this server."""
    return setting if REDIS8 and setting in REDISBLOOM_SETTINGS else "nidus." + setting


def port_free(port):
    for p in (port, port + 10000):  # cluster mode also takes port + 10000
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                return False
    return True


def free_port():
    """A port in 20000..45000 (outside the ephemeral range; cluster mode needs port + 10000 too), or in
    NIDUS_TEST_PORTS=LOW-HIGH when that is set (to share a machine without colliding). Free when judged, not
    reserved: launch() starts again elsewhere when another process takes it first."""
    low, high = map(int, os.environ.get("NIDUS_TEST_PORTS", "20000-45000").split("-"))
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(low, high + 1)
        if port_free(port):
            return port
    raise RuntimeError("no free port")


# What the server logs when its port (or, in cluster mode, its bus port + 10000) is taken.
BIND_FAILURE = re.compile(r"Failed listening on port|Could not create server TCP listening socket|"
                          r"Address already in use")
LAUNCH_ATTEMPTS = 8


def read_from(path, offset):
    try:
        with open(path, errors="replace") as f:
            f.seek(offset)
            return f.read()
    except OSError:
        return ""


def launch(command, logfile, port=None, timeout=10):
    """Starts a server and waits until it answers PING as itself (INFO's process_id): command(port) gives its
    argv. A port taken between free_port() and the server's bind is not a failure: the server is started
    again on another free port. Returns (process, port); RuntimeError with the log's new lines otherwise."""
    for _ in range(LAUNCH_ATTEMPTS):
        port = port if port is not None else free_port()
        offset = os.path.getsize(logfile) if os.path.exists(logfile) else 0
        proc = subprocess.Popen(command(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if _answers(proc, port, time.time() + timeout):
            return proc, port
        if proc.poll() is None:
            proc.kill()
            proc.wait()
            raise RuntimeError("server did not start:\n" + read_from(logfile, offset)[-4000:])
        log = read_from(logfile, offset)
        if not BIND_FAILURE.search(log):
            raise RuntimeError("server exited:\n" + log[-4000:])
        port = None  # taken meanwhile: another one
    raise RuntimeError("no port could be bound in %d attempts" % LAUNCH_ATTEMPTS)


def _answers(proc, port, deadline):
    """True once the server `proc` answers on `port`; False when it exits or the deadline passes. A server
    that answers with another process id is another's on a port ours could not bind: ours will exit."""
    # a short timeout: what holds a taken port may accept and never answer (the loop asks again meanwhile)
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    try:
        while time.time() < deadline and proc.poll() is None:
            try:
                if client.ping() and client.info("server")["process_id"] == proc.pid:
                    return True
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError):
                pass  # not listening yet, or still loading its data (BusyLoadingError)
            time.sleep(0.05)
        return False
    finally:
        client.close()


def wait_for(predicate, timeout=20):
    """True once predicate() is, False if it is not within timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


class Server:
    """One server with the module, in its own directory; binary: another server than SERVER (the module
    nidus.so, unless module names another)."""

    def __init__(self, workdir, extra=(), module_args=(), binary=None, module=None):
        self.binary = binary or SERVER
        self.module = module or MODULE
        self.dir = str(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.extra = list(extra)
        self.module_args = list(module_args)
        self.port = free_port()
        self.proc = None
        self.start()

    def start(self):
        """Starts the server on self.port, or on another free port if that one is taken by then."""
        def command(port):
            return [self.binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", self.dir, "--save", "",
                    "--appendonly", "no", "--enable-debug-command", "local", "--logfile", "redis.log",
                    "--loadmodule", os.path.abspath(self.module), *self.module_args, *self.extra]
        self.proc, self.port = launch(command, os.path.join(self.dir, "redis.log"), self.port)

    def log(self):
        try:
            with open(os.path.join(self.dir, "redis.log")) as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=30, **kw)

    def alive(self):
        return self.proc.poll() is None and self.client().ping()

    def stop(self, nosave=True):
        if self.proc and self.proc.poll() is None:
            try:
                self.client().shutdown(nosave=nosave, save=not nosave)
            except redis.exceptions.ConnectionError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def wait_aof_rewrite(self):
        r = self.client()
        for _ in range(400):
            p = r.info("persistence")
            if p["aof_rewrite_in_progress"] == 0 and p["aof_rewrite_scheduled"] == 0:
                return
            time.sleep(0.05)
        raise AssertionError("AOF rewrite did not finish")

    def wait_replica_link(self):
        for _ in range(400):
            if self.client().info("replication").get("master_link_status") == "up":
                return
            time.sleep(0.05)
        raise AssertionError("replica link did not come up")

    def restart(self):
        self.stop(nosave=True)
        self.start()  # on the same port when it is still free


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "server")
    yield s
    s.kill()


@pytest.fixture
def r(server):
    return server.client()


@pytest.fixture
def c(server):
    """A raw RESP connection to the server: replies exactly as sent (resp.Raw), for exact-reply tests."""
    raw = Raw(server.port)
    yield raw
    raw.close()


@pytest.fixture
def make_server(tmp_path):
    """Starts more servers (replicas, restarts with other options); all are killed at the end."""
    made = []

    def make(name, extra=(), module_args=()):
        s = Server(tmp_path / name, extra, module_args)
        made.append(s)
        return s

    yield make
    for s in made:
        s.kill()

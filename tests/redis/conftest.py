# SPDX-License-Identifier: BSD-3-Clause
"""Shared by the Redis tests: real redis-server processes with nidus.so loaded, each on its own free port."""
import os
import random
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
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


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
    NIDUS_TEST_PORTS=LOW-HIGH when that is set (to share a machine without colliding)."""
    low, high = map(int, os.environ.get("NIDUS_TEST_PORTS", "20000-45000").split("-"))
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(low, high + 1)
        if port_free(port):
            return port
    raise RuntimeError("no free port")


class Server:
    """One redis-server with the module, in its own directory."""

    def __init__(self, workdir, extra=(), module_args=()):
        self.dir = str(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.extra = list(extra)
        self.module_args = list(module_args)
        self.port = free_port()
        self.proc = None
        self.start()

    def start(self):
        args = [REDIS_SERVER, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", self.dir,
                "--save", "", "--appendonly", "no", "--enable-debug-command", "local",
                "--logfile", "redis.log", "--loadmodule", os.path.abspath(MODULE), *self.module_args,
                *self.extra]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                if self.client().ping():
                    return
            except redis.exceptions.BusyLoadingError:
                pass
            except redis.exceptions.ConnectionError:
                if self.proc.poll() is not None:
                    raise RuntimeError("redis-server exited:\n" + self.log())
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start:\n" + self.log())

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
        self.port = free_port() if not port_free(self.port) else self.port
        self.start()


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

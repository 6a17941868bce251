# SPDX-License-Identifier: BSD-3-Clause
"""The harness's own promise: a server whose port is taken between free_port() and its bind (by another
process on a shared machine) is started again on another port, never failing the test nor answering for
another server. Held here with ports taken on purpose: a listening socket, a running server, a cluster bus port."""
import os
import socket

from conftest import SERVER, Server, free_port, launch
from resp import Raw


def taken_port():
    """A port held by a listening socket of ours (the caller closes it)."""
    s = socket.socket()
    s.bind(("127.0.0.1", free_port()))
    s.listen(1)
    return s


def test_a_taken_port_moves_the_server(tmp_path):
    holder = taken_port()
    try:
        port = holder.getsockname()[1]
        s = Server(tmp_path / "moved")
        s.stop()
        s.port = port  # as if free_port() had judged it free just before the other process took it
        s.start()
        assert s.port != port
        assert s.alive() and s.client().info("server")["process_id"] == s.proc.pid
        s.kill()
    finally:
        holder.close()


def test_another_server_on_the_port_is_not_taken_for_ours(tmp_path, make_server):
    other = make_server("other")
    d = tmp_path / "ours"
    os.makedirs(d)
    log = str(d / "server.log")

    def command(port):
        return [SERVER, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(d), "--save", "",
                "--logfile", log]

    proc, port = launch(command, log, other.port)
    try:
        assert port != other.port
        assert Raw(port)("INFO", "server").decode().count("process_id:%d\r" % proc.pid) == 1
    finally:
        proc.kill()
        proc.wait()


def test_a_taken_cluster_bus_port_moves_the_node(tmp_path):
    """Cluster mode binds port + 10000 as well (test_distributed.py's nodes)."""
    bus = taken_port()
    try:
        port = bus.getsockname()[1] - 10000
        d = tmp_path / "node"
        os.makedirs(d)
        log = str(d / "server.log")

        def command(p):
            return [SERVER, "--bind", "127.0.0.1", "--port", str(p), "--dir", str(d), "--save", "",
                    "--logfile", log, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]

        proc, got = launch(command, log, port)
        try:
            assert got != port
            assert b"cluster_state" in Raw(got)("CLUSTER", "INFO")
        finally:
            proc.kill()
            proc.wait()
    finally:
        bus.close()

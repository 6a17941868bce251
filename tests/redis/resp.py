# SPDX-License-Identifier: BSD-3-Clause
"""A minimal RESP2/RESP3 client for exact replies: errors keep their full text ("-ERR item exists"), booleans
stay booleans. redis-py strips "ERR " and has no RESP3 in Debian's version."""
import socket


class Raw:
    def __init__(self, port, resp3=False):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buf = b""
        if resp3:
            self("HELLO", "3")

    def close(self):
        self.sock.close()

    def send(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def __call__(self, *args):
        self.send(*args)
        return self.read()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return Error(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if kind == b"~":
            return Set(self.read() for _ in range(int(rest)))
        if kind == b"=":
            return Verbatim(self._exact(int(rest)))
        if kind == b"%":
            n = int(rest)
            return {_key(self.read()): self.read() for _ in range(n)}
        if kind == b"#":
            return rest == b"t"
        if kind == b"_":
            return None
        if kind == b",":
            return float(rest)
        raise ValueError("unknown reply %r" % line)


def _key(k):
    return k.decode() if isinstance(k, bytes) else k


class Error(str):
    """An error reply, with its whole text."""


class Set(list):
    """A RESP3 set reply, its members in the order the server sent them."""


class Verbatim(bytes):
    """A RESP3 verbatim string reply, with its format prefix ("txt:")."""


def scandump(c, kind, key):
    """Every (iterator, chunk) pair KIND.SCANDUMP gives for key, as a client that will LOADCHUNK them."""
    chunks, it = [], 0
    while True:
        it, data = c(kind + ".SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def aof_commands(data):
    """The commands of an AOF file (RESP arrays of bulk strings), each as (start, end, [args]): its bytes
    data[start:end] and its arguments."""
    out, pos = [], 0
    while pos < len(data):
        start = pos
        assert data[pos:pos + 1] == b"*", data[pos:pos + 40]
        end = data.index(b"\r\n", pos)
        n, pos, args = int(data[pos + 1:end]), end + 2, []
        for _ in range(n):
            end = data.index(b"\r\n", pos)
            length = int(data[pos + 1:end])
            args.append(data[end + 2:end + 2 + length])
            pos = end + 2 + length + 2
        out.append((start, pos, args))
    return out

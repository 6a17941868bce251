# SPDX-License-Identifier: BSD-3-Clause
"""Shared by the CLI tests: the binary under test, the fixtures, the file format's constants, and one way to run
a command (or two: on a terminal)."""
import os
import subprocess

NIDUS = os.environ.get("NIDUS_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "nidus"))
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
BLOCK = 65536  # bytes of a checksummed block of a filter file
FOOTER = 40  # bytes of a framed file's footer


def run(*args, input=None, check_rc=None, **kw):
    """The completed `nidus ARGS...` (stdout and stderr captured as bytes); with check_rc, its exit status must be
    that."""
    p = subprocess.run([NIDUS, *map(str, args)], input=input, capture_output=True, timeout=300, **kw)
    if check_rc is not None:
        assert p.returncode == check_rc, (p.returncode, p.stdout, p.stderr[-2000:])
    return p


def run_on_terminal(*args):
    """`nidus ARGS...` with its stderr on a pseudo-terminal (stdout discarded): its exit status and all it wrote
    there, as bytes."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([NIDUS, *map(str, args)], stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    rc = p.wait()
    os.close(master)
    return rc, seen


def le(b):
    """The little-endian integer in the bytes `b`."""
    return int.from_bytes(b, "little")

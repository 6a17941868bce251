# SPDX-License-Identifier: BSD-3-Clause
"""Writing filter files as careful Unix tools do: modes, owners, symbolic links, non-regular files, and a key
source that fails."""
import os
import resource
import stat
import subprocess

import pytest

from cli_util import NIDUS, run


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_get_0666_less_the_umask(tmp_path, mask, expected):
    f = str(tmp_path / "f.nidus")
    old = os.umask(mask)
    try:
        run("create", f, "--capacity", 100, check_rc=0)
        b = str(tmp_path / "b.nidus")
        run("build", b, "--from", "-", "--capacity", 10, input=b"a\n", check_rc=0)
    finally:
        os.umask(old)
    assert mode(f) == expected and mode(b) == expected


def test_rewrites_keep_mode_and_owner(tmp_path):
    f = str(tmp_path / "f.nidus")
    run("create", f, "--capacity", 100, check_rc=0)
    for m in (0o644, 0o640, 0o604, 0o600):
        os.chmod(f, m)
        run("add", f, "k%o" % m, check_rc=0)
        assert mode(f) == m
        run("del", f, "k%o" % m, check_rc=0)
        assert mode(f) == m
    if os.geteuid() == 0:  # root may keep another user's ownership
        os.chown(f, 1234, 4321)
        run("add", f, "owned", check_rc=0)
        st = os.stat(f)
        assert (st.st_uid, st.st_gid) == (1234, 4321)
    run("create", f, "--capacity", 10, "--force", check_rc=0)  # --force over a file also keeps its mode
    assert mode(f) == 0o600


def test_writes_through_a_symlink_replace_its_target(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    real = str(d / "real.nidus")
    run("create", real, "--capacity", 100, check_rc=0)
    link = str(tmp_path / "link.nidus")
    os.symlink("data/real.nidus", link)  # relative to the link's directory
    chain = str(tmp_path / "chain.nidus")
    os.symlink(link, chain)
    run("add", chain, "apple", check_rc=0)
    assert os.path.islink(link) and os.path.islink(chain)
    assert run("check", real, "apple").stdout == b"1\n"
    run("create", link, "--capacity", 100, "--force", check_rc=0)
    assert os.path.islink(link) and run("check", real, "apple").stdout == b"0\n"
    dangling = str(tmp_path / "dangling.nidus")
    os.symlink("data/new.nidus", dangling)
    run("create", dangling, "--capacity", 10, check_rc=0)
    assert os.path.islink(dangling) and os.path.isfile(str(d / "new.nidus"))
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]
    loop = str(tmp_path / "loop")
    os.symlink(loop, loop)
    assert run("create", loop, "--capacity", 10, "--force", check_rc=2).stderr


def test_devices_fifos_and_directories_are_refused(tmp_path):
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    for target, what in ((fifo, b"a fifo"), (str(tmp_path), b"a directory"), ("/dev/null", b"a character device")):
        for cmd in (["create", target, "--capacity", 10, "--force"],
                    ["build", target, "--from", "-", "--capacity", 10, "--force"]):
            p = run(*cmd, input=b"a\n", check_rc=2)
            assert what in p.stderr and b"refusing to replace it" in p.stderr, p.stderr
        for cmd in (["add", target, "k"], ["check", target, "k"], ["info", target]):
            p = run(*cmd, check_rc=2)
            assert what in p.stderr and p.stderr.count(b"\n") == 1, p.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    link = str(tmp_path / "to-null")
    os.symlink("/dev/null", link)
    assert b"a character device" in run("create", link, "--capacity", 10, "--force", check_rc=2).stderr


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/full"), reason="needs root and /dev/full")
def test_create_over_dev_full_as_root_keeps_the_device():
    p = run("create", "/dev/full", "--capacity", 10, "--force", check_rc=2)
    assert b"/dev/full: is a character device" in p.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_key_line_too_long_for_memory_fails_and_leaves_the_file(tmp_path):
    """(ulimit -v; k1, a line longer than memory allows, k2) | nidus add f must exit 2, f unchanged."""
    f = str(tmp_path / "f.nidus")
    run("create", f, "--capacity", 100, check_rc=0)
    before = open(f, "rb").read()
    limit = 256 << 20

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.Popen([NIDUS, "add", f], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=cap)
    try:
        p.stdin.write(b"k1\n")
        block = b"x" * (1 << 20)
        for _ in range(400):  # 400 MB without a newline: more than the address space allowed
            p.stdin.write(block)
        p.stdin.write(b"\nk2\n")
        p.stdin.close()
    except BrokenPipeError:
        pass
    err = p.stderr.read()
    assert p.wait() == 2, err
    assert b"stdin: reading keys: Cannot allocate memory" in err and f.encode() in err
    assert open(f, "rb").read() == before


def test_info_into_a_full_disk_exits_2(tmp_path):
    f = str(tmp_path / "f.nidus")
    run("create", f, "--capacity", 100, check_rc=0)
    for cmd in (["info", f], ["info", f, "--json"], ["check", f, "a"], ["count", f, "a"], ["help"], ["--version"]):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([NIDUS, *cmd], stdout=full, stderr=subprocess.PIPE)
        assert p.returncode == 2 and b"No space left on device" in p.stderr, (cmd, p.stderr)

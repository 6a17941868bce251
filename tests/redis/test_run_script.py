# SPDX-License-Identifier: BSD-3-Clause
"""scripts/run-redis (what scripts/run starts) keeps a user's filters as a server keeps its data: stopped with
Ctrl-C (SIGINT) or SIGTERM, or killed a few seconds after a write, then started again, it answers as before.
Run on each server of the suite (SERVER names the binary), with NIDUS_MODULE's module."""
import os
import signal
import time

import pytest

from conftest import MODULE, SERVER, SERVER_KIND, SERVER_VERSION, launch
from resp import Raw

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "run-redis")
KEYS = ["k%d" % i for i in range(2000)]


class RunScript:
    """scripts/run-redis on one port, its data in `data` (NIDUS_DATA_DIR) or, when that is None, in the
    script's default directory under XDG_DATA_HOME=`home`."""

    def __init__(self, tmp_path, data):
        self.tmp = str(tmp_path)
        self.data = data
        self.port = None
        self.proc = None

    def start(self):
        log = os.path.join(self.tmp, "server.log")
        env = ["SERVER=" + SERVER, "NIDUS_MODULE=" + os.path.abspath(MODULE), "XDG_DATA_HOME=" + self.tmp]
        if self.data:
            env.append("NIDUS_DATA_DIR=" + self.data)

        def command(port):
            # env and the script exec the server: one process id throughout, as launch() checks
            return ["env", *env, "PORT=%d" % port, SCRIPT, "--logfile", log]
        self.proc, self.port = launch(command, log, self.port, timeout=30)
        return Raw(self.port)

    def stop(self, sig):
        self.proc.send_signal(sig)
        self.proc.wait(30)


def fill(c, keys):
    c("CF.RESERVE", "cf", 500, "EXPANSION", 2)  # grows into several sub-filters
    c("CF.INSERT", "cf", "ITEMS", *keys)
    c("CF.DEL", "cf", keys[0])
    c("BF.RESERVE", "bf", "0.001", 300)  # scales into several layers
    c("BF.MADD", "bf", *keys)


def snapshot(c, keys):
    return {"cf": c("CF.INFO", "cf"), "bf": c("BF.INFO", "bf"), "cf_exists": c("CF.MEXISTS", "cf", *keys),
            "bf_exists": c("BF.MEXISTS", "bf", *keys), "dbsize": c("DBSIZE")}


@pytest.fixture
def run(tmp_path):
    made = RunScript(tmp_path, str(tmp_path / "data"))
    yield made
    if made.proc and made.proc.poll() is None:
        made.proc.kill()
        made.proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_filters_survive_a_stop_and_a_restart(run, sig):
    c = run.start()
    fill(c, KEYS)
    before = snapshot(c, KEYS)
    assert before["cf_exists"] == [0] + [1] * (len(KEYS) - 1) and before["bf_exists"] == [1] * len(KEYS)
    c.close()
    run.stop(sig)
    assert run.proc.returncode == 0
    assert os.path.exists(os.path.join(run.data, "dump.rdb"))  # the snapshot saved on the way out
    c = run.start()
    assert snapshot(c, KEYS) == before
    # and again: writes after the first restart go to the same files
    c("CF.ADD", "cf", "after")
    c("BF.ADD", "bf", "after")
    c.close()
    run.stop(sig)
    c = run.start()
    assert c("CF.EXISTS", "cf", "after") == 1 and c("BF.EXISTS", "bf", "after") == 1
    assert c("CF.MEXISTS", "cf", *KEYS[1:]) == [1] * (len(KEYS) - 1)


def test_writes_survive_a_kill(run):
    """Killed (SIGKILL: no shutdown save) after a write, the append-only file still has it. Appendfsync
    everysec writes the file before replying but may hold a write back up to 2 s while an fsync runs: 3 s."""
    c = run.start()
    fill(c, KEYS)
    before = snapshot(c, KEYS)
    c.close()
    time.sleep(3)
    run.stop(signal.SIGKILL)
    c = run.start()
    assert snapshot(c, KEYS) == before


def test_default_data_dir_is_per_server_and_port(tmp_path):
    """Without NIDUS_DATA_DIR the data go to XDG_DATA_HOME/nidus/KIND-VERSION-PORT: one a server, since an
    older server cannot read a newer one's RDB file."""
    run = RunScript(tmp_path, None)
    try:
        c = run.start()
        c("CF.ADD", "cf", "x")
        c.close()
        run.stop(signal.SIGTERM)
        data = os.path.join(str(tmp_path), "nidus", "%s-%s-%d" % (SERVER_KIND, ".".join(map(str, SERVER_VERSION)),
                                                                   run.port))
        assert os.path.exists(os.path.join(data, "dump.rdb")), os.listdir(os.path.join(str(tmp_path), "nidus"))
        c = run.start()
        assert c("CF.EXISTS", "cf", "x") == 1
    finally:
        if run.proc and run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()

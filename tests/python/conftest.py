# SPDX-License-Identifier: BSD-3-Clause
"""The Python package's tests: run with the interpreter of a venv that has the package installed (CTest's
python.install makes one in the build tree). The CLI and server helpers of tests/cli are shared: NIDUS_CLI names
the `nidus` binary of the same build, NIDUS_MODULE and NIDUS_SERVER the module and the server for push."""
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))


@pytest.fixture
def rng():
    seed = random.randrange(1 << 30)
    print("seed", seed)
    return random.Random(seed)


def statm_resident_bytes():
    """This process's resident memory, from /proc/self/statm."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs a subset of the Python package's tests under valgrind (memcheck, PYTHONMALLOC=malloc so that every
object is a malloc block), and fails on any error or definite leak with a frame in the extension (nidus._nidus:
its own code and the library compiled into it). The interpreter's own reports (it keeps some memory to the end
on purpose) are counted but not failed on.

usage: valgrind_check.py PYTHON [pytest arguments...]"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SUPPRESSIONS = "/usr/lib/valgrind/python3.supp"


def frames(error):
    for frame in error.iter("frame"):
        yield frame.findtext("obj", ""), frame.findtext("fn", ""), frame.findtext("file", ""), frame.findtext("line", "")


def main():
    python, args = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "memcheck.xml")
        cmd = ["valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
               "--errors-for-leak-kinds=definite", "--xml=yes", "--xml-file=" + xml, "--num-callers=30"]
        if os.path.exists(SUPPRESSIONS):
            cmd.append("--suppressions=" + SUPPRESSIONS)
        cmd += [python, "-X", "faulthandler=0", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                "no:faulthandler", *args]
        env = dict(os.environ, PYTHONMALLOC="malloc")
        print(" ".join(cmd), flush=True)
        rc = subprocess.call(cmd, env=env)
        root = ET.parse(xml).getroot()
    ours, theirs = [], 0
    for error in root.iter("error"):
        kind = error.findtext("kind", "")
        if kind.startswith("Leak_") and kind != "Leak_DefinitelyLost":
            continue
        fs = list(frames(error))
        if any("_nidus" in obj for obj, _, _, _ in fs):
            what = error.findtext("what") or error.findtext("xwhat/text") or ""
            ours.append((kind, what, fs))
        else:
            theirs += 1
    for kind, what, fs in ours:
        print("EXTENSION %s: %s" % (kind, what))
        for obj, fn, file, line in fs[:15]:
            print("    %s %s:%s (%s)" % (fn, file, line, os.path.basename(obj)))
    print("valgrind: %d error(s) or definite leak(s) in the extension, %d elsewhere (the interpreter's); "
          "pytest exit %d" % (len(ours), theirs, rc))
    return 1 if ours or rc != 0 else 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: BSD-3-Clause
"""Builds nidus._nidus from the library's own sources (../src, ../include) and the extension (src/).

The list of library sources is read from ../CMakeLists.txt (NIDUS_SOURCES), so the two builds cannot drift
apart. The generated tables that CMake makes at build time (src/gen/*.c: programs that print C source) are made
the same way here: each generator is compiled and run, and its output compiled into the extension. The one
outside dependency is xxhash.h (Debian: libxxhash-dev), used header-only as the library uses it.
"""
import os
import re
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
# The nidus source tree: this folder's parent, or NIDUS_SOURCE_DIR for a copy of this folder built elsewhere (the
# tests install from a scratch copy so that the build leaves nothing in the source tree).
ROOT = os.path.abspath(os.environ.get("NIDUS_SOURCE_DIR") or os.path.dirname(HERE))


def library_sources():
    """The NIDUS_SOURCES of ../CMakeLists.txt: (sources in the tree, generated file names)."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"set\(NIDUS_SOURCES\s+(.*?)\)", text, re.S)
    if not m:
        raise RuntimeError("CMakeLists.txt: no set(NIDUS_SOURCES ...)")
    tree, generated = [], []
    for item in m.group(1).split():
        if item.startswith("${CMAKE_CURRENT_BINARY_DIR}/"):
            generated.append(item.split("/", 1)[1])
        else:
            tree.append(os.path.join(ROOT, item))
    return tree, generated


TREE_SOURCES, GENERATED = library_sources()
# The library's private headers are included by file name: its source folders (common, cuckoo, ...).
PRIVATE_DIRS = sorted({os.path.dirname(s) for s in TREE_SOURCES})
# Each generated file comes from the generator of the same name in src/gen.
GENERATORS = {name: os.path.join(ROOT, "src", "gen", name) for name in GENERATED}


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = min(2, os.cpu_count() or 1)

    def build_extensions(self):
        gen_dir = os.path.join(os.path.abspath(self.build_temp), "gen")
        os.makedirs(gen_dir, exist_ok=True)
        made = []
        for name, source in GENERATORS.items():
            objects = self.compiler.compile([source], output_dir=gen_dir, extra_preargs=["-std=c11"])
            exe = os.path.join(gen_dir, "gen_" + os.path.splitext(name)[0])
            self.compiler.link_executable(objects, exe, libraries=["m"])
            out = os.path.join(gen_dir, name)
            with open(out + ".tmp", "wb") as f:
                subprocess.run([exe], stdout=f, check=True)
            os.replace(out + ".tmp", out)
            made.append(out)
        for ext in self.extensions:
            # Absolute paths outside this folder, given here: setup() itself takes only relative ones.
            ext.sources = ext.sources + TREE_SOURCES + made
            ext.include_dirs = ext.include_dirs + [os.path.join(ROOT, "include")] + PRIVATE_DIRS
        super().build_extensions()


ext = Extension(
    "nidus._nidus",
    sources=["src/module.c", "src/guard.c"],
    define_macros=[("NIDUS_BUILDING", None)],
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
    libraries=["m"],
)

setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt})

# SPDX-License-Identifier: BSD-3-Clause
"""The documents a reader meets: README.md, CHANGELOG.md and docs/*.md.

- every relative link resolves to a file or folder inside the repository;
- they speak of the software and its versions, not of how it was made (no "session 6", "issue 14.2",
  "helpers");
- every C block of the README compiles and runs against the library as built (NIDUS_BUILD_DIR).
"""
import glob
import os
import re
import subprocess
import tempfile

import pytest

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CHANGELOG.md"),
        *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PROCESS_WORDS = re.compile(r"\bsessions?\s+\d|\bissues?\s+#?\d|\bhelpers?\b", re.IGNORECASE)


def doc_id(path):
    return os.path.relpath(path, ROOT)


def without_code(text):
    """The text outside fenced code blocks: links are only links there."""
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("path", DOCS, ids=doc_id)
def test_relative_links_resolve_inside_the_repository(path):
    bad = []
    for target in LINK.findall(without_code(open(path, encoding="utf-8").read())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        resolved = os.path.realpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
        if not (resolved == ROOT or resolved.startswith(ROOT + os.sep)) or not os.path.exists(resolved):
            bad.append(target)
    assert not bad, f"{doc_id(path)}: links that do not resolve inside the repository: {bad}"


@pytest.mark.parametrize("path", DOCS, ids=doc_id)
def test_documents_speak_of_the_software(path):
    found = [f"{n}: {line.strip()[:100]}" for n, line in enumerate(open(path, encoding="utf-8"), 1)
             if PROCESS_WORDS.search(line)]
    assert not found, f"{doc_id(path)} speaks of how it was made:\n" + "\n".join(found)


def readme_c_blocks():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    return re.findall(r"^```c\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_readme_has_a_c_example():
    assert readme_c_blocks(), "README.md has no ```c block"


@pytest.mark.parametrize("index", range(len(readme_c_blocks())))
def test_readme_c_example_compiles_and_runs(index, tmp_path):
    build = os.environ.get("NIDUS_BUILD_DIR")
    if not build:
        pytest.skip("NIDUS_BUILD_DIR is not set (CTest sets it)")
    src = tmp_path / "example.c"
    src.write_text(readme_c_blocks()[index])
    exe = tmp_path / "example"
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{ROOT}/include", str(src),
                         f"-L{build}", "-lnidus", f"-Wl,-rpath,{build}", "-o", str(exe)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr

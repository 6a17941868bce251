# SPDX-License-Identifier: BSD-3-Clause
"""The documents a reader meets: README.md, CHANGELOG.md and docs/*.md.

- every relative link resolves to a file or folder inside the repository;
- they speak of the software and its versions, not of how it was made (no "session 6", "issue 14.2",
  "helpers", commit hashes);
- every C block of the README compiles and runs against the library as built (NIDUS_BUILD_DIR);
- every function, macro and other snake_case name docs/ARCHITECTURE.md gives in backticks exists in the code
  (outside comments), so the map cannot trace calls that are gone;
- no comment in src/, include/, redis/ or cli/ cites an issue, a session or a commit: a comment says why the
  code is as it is, in terms of the software.
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
# A commit of this repository: 7 to 40 lowercase hex digits with a letter and a digit, not inside a longer word
# or a 0x constant. RedisBloom's own commit is how its version is named where the documents compare with it.
COMMIT = re.compile(r"(?<!\w)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?!\w)")
OTHER_PROJECTS_COMMITS = {"b28c2945"}  # RedisBloom's, as docs/DIFFERENCES.md and docs/MIGRATING.md name it


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
             if PROCESS_WORDS.search(line) or set(COMMIT.findall(line)) - OTHER_PROJECTS_COMMITS]
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


# ---- the code the documents describe ----

CODE_DIRS = ["src", "include", "redis", "cli"]  # the software's own code: its comments are checked
NAME_DIRS = CODE_DIRS + ["tests", "fuzz", "bench", "examples"]  # where a name the map gives may live


def split_c(text):
    """(code, comments) of C source: the code with every comment blanked (string and character literals kept
    whole, so a "/*" inside one opens nothing), and the comments' texts in order."""
    code, comments, i, n = [], [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            comments.append(text[i:end])
            code.append(" ")
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append(text[i:end])
            i = end
        elif text[i] in "\"'":
            j = i + 1
            while j < n and text[j] != text[i] and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(text[i:j + 1])
            i = j + 1
        else:
            code.append(text[i])
            i += 1
    return "".join(code), comments


def c_files(dirs):
    for d in dirs:
        yield from sorted(glob.glob(os.path.join(ROOT, d, "**", "*.[ch]"), recursive=True))


def code_names():
    """Every identifier the code spells outside comments (C files, and the CMake files' targets), the two copies
    of every per-instruction-set function, and the names of the files themselves (fuzz_decode, from
    fuzz/fuzz_decode.c)."""
    names = set()
    for path in c_files(NAME_DIRS):
        names.add(os.path.splitext(os.path.basename(path))[0])
        code = split_c(open(path, encoding="utf-8", errors="replace").read())[0]
        names.update(re.findall(r"[A-Za-z_]\w*", code))
        # a kernel defined once per instruction set (src/common/isa_impl.h): NIDUS_ISA_FN(f) is f_base and f_v3
        for f in re.findall(r"NIDUS_ISA_FN\((\w+)\)", code):
            names.update((f + "_base", f + "_v3"))
    for path in glob.glob(os.path.join(ROOT, "**", "CMakeLists.txt"), recursive=True) + \
            glob.glob(os.path.join(ROOT, "cmake", "*.cmake")):
        if "/build" not in os.path.relpath(path, ROOT).join("//"):
            text = re.sub(r"#.*", "", open(path, encoding="utf-8").read())
            names.update(re.findall(r"[A-Za-z_]\w*", text))
    return names


SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
MACRO = re.compile(r"NIDUS_[A-Z0-9_]+")


def named_in(markdown):
    """The names a document gives in backticks that the code must have: `f(...)` or `f()` (a function), a
    snake_case name (a function, field or target) or a NIDUS_ macro. Families written with a leading underscore
    (`_save_file`) and spans that are not one name (`CF.RESERVE`, `a.b`) are not names."""
    found = set()
    for span in re.findall(r"`([^`\n]+)`", without_code(markdown)):
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*(\(.*\))?", span.strip())
        if not m or m.group(1).startswith("_"):
            continue
        name = m.group(1)
        if m.group(2) is not None or SNAKE.fullmatch(name) or MACRO.fullmatch(name):
            found.add(name)
    return found


def test_architecture_names_only_what_exists():
    doc = open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
    missing = sorted(named_in(doc) - code_names())
    assert not missing, f"docs/ARCHITECTURE.md names what the code does not have: {missing}"


# An issue ("issue 14", "Issue #3"), a session, or a commit: 7 to 40 lowercase hex digits with a letter and a
# digit among them, not part of a longer word or a 0x constant.
PROVENANCE = re.compile(r"(?i:\bissues?\s+#?\d|\bsessions?\b)|"
                        r"(?<!\w)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?!\w)")


def provenance_in(text):
    """The comments of C source `text` that cite an issue, a session or a commit, each with its first match."""
    found = []
    for comment in split_c(text)[1]:
        m = PROVENANCE.search(comment)
        if m:
            found.append(f"{m.group(0)!r} in {comment.strip()[:90]!r}")
    return found


def test_code_comments_say_why_not_how_it_was_made():
    bad = []
    for path in c_files(CODE_DIRS):
        bad += [f"{doc_id(path)}: {f}" for f in provenance_in(open(path, encoding="utf-8", errors="replace").read())]
    assert not bad, "comments that cite an issue, a session or a commit:\n" + "\n".join(bad)


def test_the_provenance_check_finds_what_it_should():
    planted = ('/* refitted when the stash grew (765bc58) */ int a;\n'
               '// see issue 14.3 for the figures\n'
               '/* as the last Session measured */\n')
    assert len(provenance_in(planted)) == 3
    innocent = ('const char *s = "issue 5 /* 765bc58 */"; /* the offset 0x9E3779B1, a 64-bit seed 1234567 */\n'
                '/* XXH3-64 per 64 KiB block; deadbeef has no digit; 12345678 no letter */\n')
    assert provenance_in(innocent) == []


def test_the_name_check_reads_names_and_code():
    assert named_in("`nidus_cuckoo_add(f, k)`, `add_key_rest_*`, `_save_file`, `CF.RESERVE`, `NIDUS_OK`, "
                    "`plain()` and `merge_shape`") == {"nidus_cuckoo_add", "NIDUS_OK", "plain", "merge_shape"}
    code, comments = split_c('int f(void) { return g("h /* i */"); } /* j() */ // k\n')
    assert re.findall(r"\b[a-z]\b", code) == ["f", "g", "h", "i"] and len(comments) == 2

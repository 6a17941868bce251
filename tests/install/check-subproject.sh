#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check-subproject.sh SOURCE_DIR SCRATCH_DIR
# Configures a parent project that uses add_subdirectory(nidus): nidus's tests, fuzzing and benchmarks must be
# off, its paths must resolve from its own directory, and a program linked to nidus::nidus must build and run.
set -euo pipefail
src=$1
scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake -S "$here/subproject" -B "$scratch" -DNIDUS_SOURCE_DIR="$src" >/dev/null
targets=$(cmake --build "$scratch" --target help)
for t in test_cuckoo nidus_bench replay_decode nidus_demo; do
  if grep -qw "$t" <<<"$targets"; then echo "subproject: target $t is built by default"; exit 1; fi
done
[ ! -f "$scratch/CTestTestfile.cmake" ] || ! grep -q 'add_test' "$scratch/nidus/CTestTestfile.cmake" 2>/dev/null
cmake --build "$scratch" --target parent_consumer -j2 >/dev/null
"$scratch/parent_consumer"
echo "subproject: add_subdirectory(nidus) built and ran a nidus::nidus consumer, no tests or benchmarks"

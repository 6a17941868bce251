#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: install.sh SOURCE_DIR SCRATCH_DIR
# Installs the Python package as a user does, offline: a fresh venv over Debian's Python (its setuptools, wheel
# and pytest), then `pip install --no-build-isolation --no-index` of a copy of SOURCE_DIR/python in SCRATCH_DIR
# (so that the build leaves nothing in the source tree; NIDUS_SOURCE_DIR points setup.py at the library).
set -euo pipefail
src=$(cd "$1" && pwd)
mkdir -p "$2"
scratch=$(cd "$2" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
cp -r "$src/python" "$scratch/pkg"
rm -rf "$scratch/pkg/build" "$scratch/pkg"/*.egg-info
/usr/bin/python3 -m venv --system-site-packages "$scratch/venv"
NIDUS_SOURCE_DIR="$src" "$scratch/venv/bin/pip" install -q --no-build-isolation --no-index "$scratch/pkg"
cd "$scratch"
"$scratch/venv/bin/python" -c 'import nidus; print("nidus", nidus.__version__, "installed:", nidus.__file__)'

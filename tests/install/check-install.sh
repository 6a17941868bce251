#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check-install.sh BUILD_DIR SCRATCH_DIR
# Installs BUILD_DIR into SCRATCH_DIR/prefix, then builds and runs the consumer program against the installed
# files only: with pkg-config (shared and static) and with CMake's find_package(nidus) (both targets).
set -euo pipefail
build=$1
scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name nidus.pc -printf '%h\n' | head -n1)/..
libdir=$(cd "$libdir" && pwd)

export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c11 -Wall -Werror "$here/consumer/main.c" $(pkg-config --cflags --libs nidus) -Wl,-rpath,"$libdir" \
  -o "$scratch/pc_shared"
"$scratch/pc_shared"
cc -std=c11 -Wall -Werror "$here/consumer/main.c" $(pkg-config --cflags nidus) "$libdir/libnidus.a" \
  $(pkg-config --static --libs-only-l nidus | sed 's/-lnidus//') -o "$scratch/pc_static"
"$scratch/pc_static"

cmake -S "$here/consumer" -B "$scratch/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/cmake" >/dev/null
"$scratch/cmake/consumer_static"
LD_LIBRARY_PATH=$libdir "$scratch/cmake/consumer_shared"
LD_LIBRARY_PATH=$libdir "$scratch/cmake/consumer_default"
# nidus::nidus is the shared library, as -lnidus
ldd "$scratch/cmake/consumer_default" | grep 'libnidus\.so' >/dev/null || { echo "nidus::nidus is not the shared library"; exit 1; }

# The module, the CLI's man page and bash completion, the license
for f in "$libdir/nidus/nidus.so" "$prefix/bin/nidus" "$prefix/share/man/man1/nidus.1" \
         "$prefix/share/bash-completion/completions/nidus" "$prefix/share/doc/nidus/LICENSE"; do
  [ -f "$f" ] || { echo "install: $f is missing"; exit 1; }
done
man -l "$prefix/share/man/man1/nidus.1" 2>&1 | grep 'nidus - cuckoo and Bloom filters in files' >/dev/null
bash -c "source '$prefix/share/bash-completion/completions/nidus' && COMP_WORDS=(nidus cr) COMP_CWORD=1 && _nidus && [ \"\${COMPREPLY[*]}\" = create ]"
echo "install: pkg-config and find_package consumers built and ran; module, man page, completion installed"

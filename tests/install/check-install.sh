#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# usage: check-install.sh BUILD_DIR SCRATCH_DIR
# Installs BUILD_DIR into SCRATCH_DIR/prefix, then builds and runs the consumer program against the installed
# files only: with pkg-config (shared and static) and with CMake's find_package(nidus) (both targets). Then runs
# the installed CLI, and starts redis-server (NIDUS_REDIS_SERVER, default redis-server) on the installed module.
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
# The opt-in inline path from the installed headers alone (no xxhash.h), with and without AVX2 in the target
cc -std=c11 -Wall -Werror -DNIDUS_INLINE "$here/consumer/main.c" $(pkg-config --cflags nidus) "$libdir/libnidus.a" \
  $(pkg-config --static --libs-only-l nidus | sed 's/-lnidus//') -o "$scratch/pc_inline"
"$scratch/pc_inline"
if [ "$(uname -m)" = x86_64 ]; then
  cc -std=c11 -Wall -Werror -DNIDUS_INLINE -mavx2 -c "$here/consumer/main.c" $(pkg-config --cflags nidus) \
    -o "$scratch/pc_inline_avx2.o"
fi

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
[ -x "$libdir/nidus/nidus.so" ] || { echo "install: $libdir/nidus/nidus.so is not executable (redis-server refuses it)"; exit 1; }
man -l "$prefix/share/man/man1/nidus.1" 2>&1 | grep 'nidus - cuckoo, Bloom and fuse filters in files' >/dev/null
bash -c "source '$prefix/share/bash-completion/completions/nidus' && COMP_WORDS=(nidus cr) COMP_CWORD=1 && _nidus && [ \"\${COMPREPLY[*]}\" = create ]"

# The installed CLI, from the prefix, on a filter in the scratch directory
cli=$prefix/bin/nidus
"$cli" --version | grep '^nidus ' >/dev/null
"$cli" create "$scratch/cli.nidus" --capacity 100 >/dev/null
"$cli" add "$scratch/cli.nidus" apple pear
[ "$("$cli" check "$scratch/cli.nidus" apple plum)" = "$(printf '1\n0')" ] || { echo "install: the installed nidus CLI answered wrongly"; exit 1; }
"$cli" verify "$scratch/cli.nidus" >/dev/null

# The CLI uses the public API only: its sources compile against the installed headers alone and link against the
# installed shared library, which exports nothing else (and hiredis, for push and pull). The copy built so
# answers as the installed one.
cc -std=c11 -Wall -Wextra -Werror "$here"/../../cli/*.c -I"$prefix/include" -L"$libdir" -lnidus -lm \
  $(pkg-config --cflags --libs hiredis) -Wl,-rpath,"$libdir" -o "$scratch/cli_public"
"$scratch/cli_public" add "$scratch/cli.nidus" plum
[ "$("$scratch/cli_public" check "$scratch/cli.nidus" apple plum fig)" = "$(printf '1\n1\n0')" ] ||
  { echo "install: the CLI built on the installed library answered wrongly"; exit 1; }
"$cli" verify "$scratch/cli.nidus" >/dev/null

# The installed module, loaded by a real server: a free loopback port (another one when the bind loses a race),
# a data directory of its own, no persistence.
server=${NIDUS_REDIS_SERVER:-redis-server}
redis_dir=$scratch/redis
mkdir -p "$redis_dir"
server_pid=
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
trap stop_server EXIT
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# (with a timeout: until our server has bound the port, whoever holds it may accept and never answer)
ask() { timeout 5 redis-cli -h 127.0.0.1 -p "$port" "$@"; }
for attempt in 1 2 3 4 5; do
  port=$(free_port)
  log=$redis_dir/server-$attempt.log
  "$server" --port "$port" --bind 127.0.0.1 --dir "$redis_dir" --save '' --appendonly no \
    --loadmodule "$libdir/nidus/nidus.so" >"$log" 2>&1 &
  server_pid=$!
  up=
  for _ in $(seq 100); do
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    if [ "$(ask PING 2>/dev/null)" = PONG ]; then up=1; break; fi
    sleep 0.1
  done
  [ -n "$up" ] && break
  stop_server
  if grep -q 'Address already in use' "$log"; then continue; fi  # the port was taken after it was judged free
  echo "install: $server did not start on the installed module:"; cat "$log"; exit 1
done
[ -n "$up" ] || { echo "install: $server found no free port in 5 attempts"; exit 1; }
[ "$(ask CF.ADD k apple)" = 1 ] && [ "$(ask CF.EXISTS k apple)" = 1 ] && [ "$(ask CF.EXISTS k plum)" = 0 ] ||
  { echo "install: CF.ADD/CF.EXISTS on the installed module answered wrongly"; exit 1; }
ask SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$server_pid" 2>/dev/null || true
server_pid=
echo "install: pkg-config and find_package consumers built and ran; module, man page, completion installed;" \
  "the installed CLI ran, and one built from cli/ on the installed headers and shared library; $server loaded the installed module (port $port)"

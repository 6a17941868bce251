#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Builds ./sidebyside (or $SBS_BIN). Every input comes from the environment (defaults are relative paths):
#   NIDUS_SRC    nidus checkout (its include/)                       default: nidus
#   NIDUS_BUILD  nidus Release build dir holding libnidus.a           default: $NIDUS_SRC/build-release
#   PAPER_DIR    efficient/cuckoofilter export (its src/)             default: peers/cuckoofilter
#   FF_DIR       FastFilter/fastfilter_cpp export (its src/)          default: peers/fastfilter_cpp
#   NIDUS_SIDE_CFLAGS  more flags for the nidus side only, e.g. -DNIDUS_INLINE (the inline lookups)
# Each translation unit gets the flags of the code it measures:
#   nidus side:  nidus's CMake Release flags, -O3 -DNDEBUG (no -march)
#   paper side:  its benchmarks/Makefile, -O3 -DNDEBUG -march=core-avx2 -fno-strict-aliasing -std=c++11
#   ff side:     its benchmarks/Makefile, -O3 -DNDEBUG -std=c++17 -march=native -fno-strict-aliasing
#   driver:      -O2 (it only times and prints)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
NIDUS_SRC=${NIDUS_SRC:-nidus}
NIDUS_BUILD=${NIDUS_BUILD:-$NIDUS_SRC/build-release}
PAPER_DIR=${PAPER_DIR:-peers/cuckoofilter}
FF_DIR=${FF_DIR:-peers/fastfilter_cpp}
OBJ=${SBS_OBJ:-sbs-obj}
BIN=${SBS_BIN:-sidebyside}
CC=${CC:-cc}
CXX=${CXX:-g++}
mkdir -p "$OBJ"
for f in "$NIDUS_SRC/include/nidus/cuckoo.h" "$NIDUS_BUILD/libnidus.a" "$PAPER_DIR/src/cuckoofilter.h" \
         "$FF_DIR/src/cuckoo/cuckoofilter_stable.h"; do
  [ -e "$f" ] || { echo "missing $f (set NIDUS_SRC / NIDUS_BUILD / PAPER_DIR / FF_DIR)" >&2; exit 1; }
done
# nidus's internal headers (when this checkout has them) add the "-base" entries: the baseline kernels.
internal=""
if [ -f "$NIDUS_SRC/src/common/isa_impl.h" ]; then # the library's folders by concern
  internal="-DSBS_NIDUS_INTERNAL -I$NIDUS_SRC/src/common -I$NIDUS_SRC/src/cuckoo"
elif [ -f "$NIDUS_SRC/src/isa_impl.h" ]; then # older checkouts: one flat src/
  internal="-DSBS_NIDUS_INTERNAL -I$NIDUS_SRC/src"
fi
$CC -O3 -DNDEBUG -std=c11 -Wall -Wextra ${NIDUS_SIDE_CFLAGS:-} -I"$NIDUS_SRC/include" $internal -I"$here" -c "$here/nidus_side.c" -o "$OBJ/nidus_side.o"
$CXX -O3 -DNDEBUG -march=core-avx2 -fno-strict-aliasing -std=c++11 -w -I"$PAPER_DIR/src" -I"$here" \
  -c "$here/peer_paper.cc" -o "$OBJ/peer_paper.o"
$CXX -O3 -DNDEBUG -std=c++17 -march=native -fno-strict-aliasing -w -I"$FF_DIR/src" -I"$FF_DIR/src/cuckoo" \
  -I"$FF_DIR/src/bloom" -I"$FF_DIR/src/xorfilter" -I"$here" -c "$here/peer_ff.cc" -o "$OBJ/peer_ff.o"
$CXX -O2 -std=c++17 -Wall -I"$here" -c "$here/main.cc" -o "$OBJ/main.o"
$CXX -o "$BIN" "$OBJ/main.o" "$OBJ/nidus_side.o" "$OBJ/peer_paper.o" "$OBJ/peer_ff.o" "$NIDUS_BUILD/libnidus.a" -lm
echo "built $BIN"

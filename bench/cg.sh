#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# usage: bench/cg.sh BUILD_DIR: instructions per cuckoo operation (callgrind counts nidus_bench_probe_cost's
# measured loop only), plain b=4 and b=2 at f=12 (whole-byte buckets) and f=13 (buckets read at a bit offset)
B=$1; N=${N:-200000}; M=${M:-20000}
for bf in "4 12" "4 13" "2 12" "2 13"; do
  for op in ${OPS:-key hash many_key many_hash add add_hash}; do
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null --collect-atstart=no --toggle-collect=measured \
      $B/bench/nidus_bench_probe_cost $bf $N $op $M 2>&1)
    ir=$(echo "$out" | sed -n 's/.*Collected : *\([0-9,]*\).*/\1/p' | tr -d ,)
    echo "b/f=$bf $op ir/op=$(echo "scale=1; $ir / $M" | bc) $(echo "$out" | grep hits=)"
  done
done

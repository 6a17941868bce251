#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# usage: bench/window_cg.sh BUILD_DIR [CAPACITY [ERROR [LOOKUPS]]]
# Instructions per operation, windowed against plain cuckoo filters side by side (callgrind over one run of
# nidus_bench_window on each set of keys: each loop function's inclusive count divided by its operations).
B=$1; N=${2:-1000000}; E=${3:-0.01}; M=${4:-$( [ "$N" -lt 200000 ] && echo "$N" || echo 200000 )}
for set in present absent; do
  f=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$f" "$B/bench/nidus_bench_window" "$N" "$E" $set "$M" >/dev/null 2>&1
  callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null |
    awk -v n="$N" -v m="$M" -v set="$set" '
      /window_side.c:(plain|window)_[a-z_]+/ && !/=>/ {
        fn = $0; sub(/.*window_side.c:/, "", fn); sub(/[ .].*/, "", fn); c = $1; gsub(",", "", c);
        if (seen[fn]++) next;
        ops = fn ~ /_fill$/ ? n : m; printf "%-8s %-18s %7.1f\n", set, fn, c / ops }' | sort -k2
  rm -f "$f"
done

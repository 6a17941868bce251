#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The nidus Python package against a Python set, side by side in one run: rbloom's benchmark shape.

N str keys (default 10M), each added, then each looked up:
  per call:  for k in keys: f.add(k)        then   for k in keys: k in f
  batched:   f.update(keys)                 then   f.contains_many(keys)
The set runs the per-call loops (s.add(k), k in s); every ratio is against the set's per-call time.

Each structure runs its loops alone, as in rbloom's benchmark (a filter that fits in the cache keeps it), the
order of the structures rotating from run to run. The machine is shared with other work, whose load changes by
the second, so the times are CPU time of this process (time.process_time: what the loops cost, not how long
they waited for a core; the batched calls' GIL-free work runs in this thread too), and each figure is the best of
--reps runs. Wall-clock totals are printed beside them.

usage: bench.py [--n N] [--reps R] [--json]
"""
import gc
import json
import sys
import time

import nidus
from benchkeys import options, str_keys


def structures(n):
    """name -> (constructor, batched?)"""
    return {
        "set": (set, False),
        "bloom 1%": (lambda: nidus.BloomFilter(n, 0.01), False),
        "bloom 1% batched": (lambda: nidus.BloomFilter(n, 0.01), True),
        # the package's default shape for 0.1 %: b=2, f=12 (docs/PYTHON.md, "Speed")
        "cuckoo 0.1%": (lambda: nidus.CuckooFilter(n, 0.001), False),
        "cuckoo 0.1% batched": (lambda: nidus.CuckooFilter(n, 0.001), True),
        # the CLI's and the library's shape for 0.1 %: b=4, f=13, 13.6 bits a key (buckets at a bit offset)
        "cuckoo 0.1% b=4 f=13": (lambda: nidus.CuckooFilter(n, 0.001, bucket_size=4, fingerprint_bits=13), False),
        "cuckoo 0.1% b=4 f=13 batched": (lambda: nidus.CuckooFilter(n, 0.001, bucket_size=4, fingerprint_bits=13),
                                         True),
        # b=2, f=12: the same bound (0.098 %) in 14.1 bits a key (whole-byte buckets)
        "cuckoo 0.1% b=2 f=12": (lambda: nidus.CuckooFilter(n, 0.001, bucket_size=2, fingerprint_bits=12), False),
        "cuckoo 0.1% b=2 f=12 batched": (lambda: nidus.CuckooFilter(n, 0.001, bucket_size=2, fingerprint_bits=12),
                                         True),
    }


def clocks():
    return time.process_time(), time.perf_counter()


def run_loops(obj, batched, keys):
    """(add CPU s, lookup CPU s, total wall s) of one structure's two loops."""
    c0, w0 = clocks()
    if batched:
        obj.update(keys)
    else:
        add = obj.add
        for k in keys:
            add(k)
    c1, _ = clocks()
    if batched:
        missing = len(keys) - sum(obj.contains_many(keys))
    else:
        missing = 0
        for k in keys:
            if k not in obj:
                missing += 1
    c2, w2 = clocks()
    assert missing == 0, "a false negative"
    return c1 - c0, c2 - c1, w2 - w0


def main():
    a = options(json=True)
    keys = str_keys(a.n)
    kinds = structures(a.n)
    names = list(kinds)
    best = {name: [float("inf")] * 3 for name in names}
    for rep in range(a.reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            make, batched = kinds[name]
            obj = make()
            gc.collect()
            t = run_loops(obj, batched, keys)
            del obj
            best[name] = [min(x, y) for x, y in zip(best[name], t)]
    base = sum(best["set"][:2])
    rows = [{"structure": name, "add_cpu_s": round(add, 3), "lookup_cpu_s": round(look, 3),
             "total_cpu_s": round(add + look, 3), "ratio_to_set": round((add + look) / base, 3),
             "total_wall_s": round(wall, 3)}
            for name, (add, look, wall) in best.items()]
    if a.json:
        json.dump({"n": a.n, "python": sys.version.split()[0], "reps": a.reps, "rows": rows}, sys.stdout, indent=1)
        print()
        return
    print(f"{a.n:,} str keys, Python {sys.version.split()[0]}, best of {a.reps}; CPU seconds (wall beside)")
    print(f"{'':30} {'add':>7} {'lookup':>7} {'total':>7} {'x set':>6} {'wall':>7}")
    for r in rows:
        print(f"{r['structure']:30} {r['add_cpu_s']:7.3f} {r['lookup_cpu_s']:7.3f} {r['total_cpu_s']:7.3f} "
              f"{r['ratio_to_set']:6.3f} {r['total_wall_s']:7.3f}")


if __name__ == "__main__":
    main()

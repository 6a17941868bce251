#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What batched cuckoo adds cost as the filter fills, side by side in one run: N str keys (as bench.py makes
them) added with update() and looked up with contains_many(), CPU ns a key, best of --reps runs:
  b=4 f=13 sized for N (95.5 % full at the end), the same shape with twice the capacity (48 %), the first 90 % of
  the keys alone into the filter sized for N (what the last tenth costs is the difference), b=2 f=12 and
  semi-sorted b=4 f=13 (the other shapes of the same 0.1 % bound).

usage: fill.py [--n N] [--reps R]
"""
import gc
import os
import time

import nidus
from benchkeys import options, str_keys


def main():
    a = options()
    n = a.n
    keys = str_keys(n)
    shapes = {
        "b=4 f=13, capacity N": (lambda: nidus.CuckooFilter(n, 0.001, bucket_size=4, fingerprint_bits=13), n),
        "b=4 f=13, capacity 2N": (lambda: nidus.CuckooFilter(2 * n, 0.001, bucket_size=4, fingerprint_bits=13), n),
        "b=4 f=13, capacity N, 90 % of N": (
            lambda: nidus.CuckooFilter(n, 0.001, bucket_size=4, fingerprint_bits=13), n * 9 // 10),
        "b=2 f=12, capacity N": (lambda: nidus.CuckooFilter(n, 0.001, bucket_size=2, fingerprint_bits=12), n),
        "semi b=4 f=13, capacity N": (
            lambda: nidus.CuckooFilter(n, 0.001, bucket_size=4, fingerprint_bits=13, semi_sort=True), n),
    }
    best, load = {}, {}
    for _ in range(a.reps):
        for name, (make, m) in shapes.items():
            f, ks = make(), keys[:m]
            gc.collect()
            c0 = time.process_time()
            f.update(ks)
            c1 = time.process_time()
            found = sum(f.contains_many(ks))
            c2 = time.process_time()
            assert found == m, "a false negative"
            load[name] = f.stats()["load"]
            t = ((c1 - c0) / m * 1e9, (c2 - c1) / m * 1e9)
            best[name] = tuple(min(x, y) for x, y in zip(best.get(name, t), t))
            del f
    print(f"{n:,} str keys, best of {a.reps}; CPU ns a key; load average {os.getloadavg()[0]:.1f}")
    for name, (add, look) in best.items():
        print(f"{name:34} load {load[name]:.3f}  update {add:6.1f}  contains_many {look:6.1f}")


if __name__ == "__main__":
    main()

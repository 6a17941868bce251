#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One-key cuckoo lookups from Python, one shape beside another in one process: N str keys (as bench.py's), each
shape's filter filled by update(keys), then `k in f` for every key, timed alone (CPU time), best of --reps; the
order of the shapes is the same every round. Prints ns a lookup and the inline view the one-key calls read.

usage: lookups.py [--n N] [--reps R]
"""
import gc
import time

import nidus
from benchkeys import options, str_keys
from nidus import _nidus


def look(f, keys):
    t0 = time.process_time()
    missing = 0
    for k in keys:
        if k not in f:
            missing += 1
    t = time.process_time() - t0
    assert missing == 0, "a false negative"
    return t


def main():
    a = options()
    n = a.n
    keys = str_keys(n)
    shapes = {
        "b=4 f=13 (0.1 %)": lambda: nidus.CuckooFilter(n, 0.001, bucket_size=4, fingerprint_bits=13),
        "b=2 f=12 (0.1 %)": lambda: nidus.CuckooFilter(n, 0.001, bucket_size=2, fingerprint_bits=12),
        "b=4 f=12 (0.2 %)": lambda: nidus.CuckooFilter(n, 0.002, bucket_size=4, fingerprint_bits=12),
        "b=2 f=13 (0.05 %)": lambda: nidus.CuckooFilter(n, 0.001, bucket_size=2, fingerprint_bits=13),
    }
    best, view = {}, {}
    for _ in range(a.reps):
        for name, make in shapes.items():
            f = make()
            f.update(keys)
            view[name] = _nidus._inline_view(f)
            gc.collect()
            best[name] = min(best.get(name, float("inf")), look(f, keys))
            del f
    print(f"{n:,} str keys, best of {a.reps}, CPU time")
    for name in shapes:
        print(f"{name:20} {best[name] / n * 1e9:7.1f} ns a lookup   view: {view[name]}")


if __name__ == "__main__":
    main()

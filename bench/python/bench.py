#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The nidus Python package against a Python set, side by side in one run: rbloom's benchmark shape.

N str keys (default 10M), each added, then each looked up, timed per loop:
  per call:  for k in keys: f.add(k)        then   for k in keys: k in f
  batched:   f.update(keys)                 then   f.contains_many(keys)
The set runs the same loops (s.add(k), k in s; s.update(keys), [k in s for k in keys] has no batched form, so
the batched ratio is taken against the set's per-call time, as rbloom's own comparison does with a set).
Each figure is the best of --reps runs; ratios are filter time / set time from the same run.

usage: bench.py [--n N] [--reps R] [--json]
"""
import argparse
import gc
import json
import random
import sys
import time

import nidus


def best(fn, reps):
    times = []
    for _ in range(reps):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def per_call(make, keys):
    """Time of `for k in keys: f.add(k)` plus `for k in keys: k in f` on a fresh object."""
    f = make()
    add = f.add
    t0 = time.perf_counter()
    for k in keys:
        add(k)
    t1 = time.perf_counter()
    missing = 0
    for k in keys:
        if k not in f:
            missing += 1
    t2 = time.perf_counter()
    assert missing == 0, "a false negative"
    return t1 - t0, t2 - t1


def batched(make, keys):
    f = make()
    t0 = time.perf_counter()
    f.update(keys)
    t1 = time.perf_counter()
    answers = f.contains_many(keys)
    t2 = time.perf_counter()
    assert all(answers), "a false negative"
    return t1 - t0, t2 - t1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rng = random.Random(1)
    keys = [str(rng.getrandbits(64)) for _ in range(a.n)]
    n = a.n
    cases = {
        "set": lambda: set(),
        "bloom 1%": lambda: nidus.BloomFilter(n, 0.01),
        "cuckoo 0.1%": lambda: nidus.CuckooFilter(n, 0.001),
    }
    results = {}
    for rep in range(a.reps):
        for name, make in cases.items():
            for shape, fn in (("per-call", per_call), ("batched", batched)):
                if name == "set" and shape == "batched":
                    continue
                gc.collect()
                add, look = fn(make, keys)
                r = results.setdefault((name, shape), [float("inf"), float("inf")])
                r[0], r[1] = min(r[0], add), min(r[1], look)
    set_total = sum(results[("set", "per-call")])
    rows = []
    for (name, shape), (add, look) in results.items():
        rows.append({"filter": name, "shape": shape, "add_s": round(add, 3), "lookup_s": round(look, 3),
                     "total_s": round(add + look, 3), "ratio_to_set": round((add + look) / set_total, 3)})
    if a.json:
        json.dump({"n": n, "python": sys.version.split()[0], "rows": rows}, sys.stdout, indent=1)
        print()
        return
    print(f"{n:,} str keys, Python {sys.version.split()[0]}, best of {a.reps}")
    print(f"{'':14} {'shape':9} {'add s':>7} {'lookup s':>9} {'total s':>8} {'x set':>6}")
    for r in rows:
        print(f"{r['filter']:14} {r['shape']:9} {r['add_s']:7.3f} {r['lookup_s']:9.3f} {r['total_s']:8.3f} "
              f"{r['ratio_to_set']:6.3f}")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: BSD-3-Clause
"""What the Python benchmarks of this folder share: their --n and --reps options, and their keys."""
import argparse
import random


def options(json=False):
    """The parsed options: --n (keys, 10M by default), --reps (runs, best of; 3), and --json where asked."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=3)
    if json:
        ap.add_argument("--json", action="store_true")
    return ap.parse_args()


def str_keys(n):
    """N str keys, the same in every run: decimal strings of random 64-bit numbers (19-20 bytes)."""
    rng = random.Random(1)
    return [str(rng.getrandbits(64)) for _ in range(n)]

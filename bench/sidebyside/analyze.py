#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Summarises sidebyside TSV output (library) and run_redis.sh output (module) as markdown tables.

usage: analyze.py lib FILE.tsv [FILE.tsv ...]      medians, min-max, per-repetition ratios nidus/peer
       analyze.py redis DIR                         redis-results.tsv + redis-memory.tsv in DIR

Rates: *_Mps are per second of the measuring thread's CPU time; with --wall the *_wMps columns (per second
of wall time) are used instead. A ratio is nidus / peer computed within one repetition (same N, same rep),
so > 1 means nidus is faster; the table gives the median ratio and its min-max over repetitions."""
import collections
import statistics
import sys

PAIRS = [  # (nidus config, peer name)
    ("c12", "paper-c12"), ("c12", "ff-c12"), ("c12", "ff-bfuse8"), ("c12", "ff-bbloom"),
    ("ss13", "paper-ss13"), ("c8", "paper-c8"), ("bbloom", "ff-bbloom"), ("bloom-compact", "ff-bbloom"),
    ("fuse8", "ff-bfuse8"), ("fuse16", "ff-bfuse16"),
]
NIDUS_NAME = {"bbloom": "bloom-blocked"}  # nidus rows are named nidus-<config or this>-<mode>
MODES = ["key", "hash", "bhash", "bkey", "key-base", "bkey-base"]


def med(v):
    return statistics.median(v) if v else float("nan")


def fmt(v, nd=2):
    if v != v:
        return "—"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.{nd}f}"


def rng(v, nd=2):
    return f"{fmt(min(v), nd)}–{fmt(max(v), nd)}" if v else "—"


def read_lib(files):
    rows = []
    for fn in files:
        with open(fn) as f:
            header = None
            for line in f:
                if line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if parts[0] == "N":
                    header = parts
                    continue
                r = dict(zip(header, parts))
                for k in list(r):
                    if k not in ("name", "config", "mode"):
                        r[k] = float(r[k])
                r["_file"] = fn
                rows.append(r)
    return rows


def lib(files, wall=False):
    rows = read_lib(files)
    sfx = "_wMps" if wall else "_Mps"
    by = collections.defaultdict(list)
    for r in rows:
        by[(int(r["N"]), r["name"])].append(r)
    sizes = sorted({k[0] for k in by})
    print(f"rates: M ops/s per {'wall' if wall else 'thread-CPU'} second; median (min–max) over repetitions\n")
    for n in sizes:
        names = [k[1] for k in by if k[0] == n]
        order = sorted(names, key=lambda s: (not s.startswith("paper"), not s.startswith("ff"), s))
        print(f"### N = {n:,}\n")
        print("| filter | reps | add M/s | lookup present M/s | lookup absent M/s | FPR % | bits/item | failed adds | load1 |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name in order:
            rs = by[(n, name)]
            add = [r["add" + sfx] for r in rs]
            pos = [r["pos" + sfx] for r in rs]
            neg = [r["neg" + sfx] for r in rs]
            fpr = [100 * r["fpr"] for r in rs]
            bits = [r["bits_per_item"] for r in rs]
            fail = [r["add_failed"] for r in rs]
            load = [r["load1"] for r in rs]
            kind = int(rs[0]["add_kind"])
            addtxt = f"{fmt(med(add))} ({rng(add)})"
            if kind == 2:
                addtxt += " [static build]"
            elif kind == 3:
                addtxt += " [per-item add_hash]"
            print(f"| {name} | {len(rs)} | {addtxt} | {fmt(med(pos))} ({rng(pos)}) | {fmt(med(neg))} ({rng(neg)}) | "
                  f"{med(fpr):.3f} ({min(fpr):.3f}–{max(fpr):.3f}) | {med(bits):.2f} | {int(max(fail))} | "
                  f"{min(load):.1f}–{max(load):.1f} |")
        print()
        # ratios
        print(f"Ratios nidus / peer at N = {n:,} (per repetition; median (min–max)); > 1: nidus faster\n")
        print("| nidus | peer | add | lookup present | lookup absent |")
        print("|---|---|---|---|---|")
        for conf, peer in PAIRS:
            if (n, peer) not in by:
                continue
            peer_by_rep = {int(r["rep"]): r for r in by[(n, peer)]}
            for mode in MODES:
                nm = f"nidus-{NIDUS_NAME.get(conf, conf)}-{mode}"
                if (n, nm) not in by:
                    continue
                ratios = {"add": [], "pos": [], "neg": []}
                for r in by[(n, nm)]:
                    p = peer_by_rep.get(int(r["rep"]))
                    if not p:
                        continue
                    for m in ratios:
                        ratios[m].append(r[m + sfx] / p[m + sfx])
                if not ratios["pos"]:
                    continue
                addtxt = f"{fmt(med(ratios['add']))} ({rng(ratios['add'])})"
                if int(by[(n, nm)][0]["add_kind"]) == 3:
                    addtxt += " [per-item add]"
                print(f"| {nm} | {peer} | {addtxt} | {fmt(med(ratios['pos']))} ({rng(ratios['pos'])}) | "
                      f"{fmt(med(ratios['neg']))} ({rng(ratios['neg'])}) |")
        print()
    # scale table for nidus c12
    print("### Scale: nidus b=4 f=12, ns per operation (median over repetitions; from the same runs)\n")
    print("| mode | N | add ns | present ns | absent ns | add growth vs 1M | present growth | absent growth |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in MODES:
        base = None
        for n in sizes:
            rs = by.get((n, f"nidus-c12-{mode}"))
            if not rs:
                continue
            a = 1e3 / med([r["add" + sfx] for r in rs])
            p = 1e3 / med([r["pos" + sfx] for r in rs])
            q = 1e3 / med([r["neg" + sfx] for r in rs])
            if base is None:
                base = (a, p, q)
            print(f"| {mode} | {n:,} | {a:.1f} | {p:.1f} | {q:.1f} | {a / base[0]:.2f}x | {p / base[1]:.2f}x | "
                  f"{q / base[2]:.2f}x |")
    for peer in ("paper-c12", "ff-c12"):
        base = None
        for n in sizes:
            rs = by.get((n, peer))
            if not rs:
                continue
            a = 1e3 / med([r["add" + sfx] for r in rs])
            p = 1e3 / med([r["pos" + sfx] for r in rs])
            q = 1e3 / med([r["neg" + sfx] for r in rs])
            if base is None:
                base = (a, p, q)
            print(f"| {peer} | {n:,} | {a:.1f} | {p:.1f} | {q:.1f} | {a / base[0]:.2f}x | {p / base[1]:.2f}x | "
                  f"{q / base[2]:.2f}x |")
    print()


def redis(d):
    res = collections.defaultdict(list)
    with open(f"{d}/redis-results.tsv") as f:
        hdr = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(hdr, line.rstrip("\n").split("\t")))
            res[(r["bench"], int(r["pipeline"]), r["module"])].append(r)
    benches = []
    for (b, p, m) in res:
        if (b, p) not in benches:
            benches.append((b, p))
    print("| command | -P | RedisBloom req/s | nidus req/s | nidus / RedisBloom per round | rounds | load1 |")
    print("|---|---|---|---|---|---|---|")
    for b, p in benches:
        rb = {int(r["round"]): float(r["rps"]) for r in res.get((b, p, "redisbloom"), []) if r["rps"]}
        ni = {int(r["round"]): float(r["rps"]) for r in res.get((b, p, "nidus"), []) if r["rps"]}
        loads = [float(r["load1"]) for m in ("redisbloom", "nidus") for r in res.get((b, p, m), [])]
        ratios = [ni[k] / rb[k] for k in ni if k in rb]
        rbv, niv = list(rb.values()), list(ni.values())
        print(f"| {b} | {p} | {med(rbv):,.0f} ({min(rbv):,.0f}–{max(rbv):,.0f}) | {med(niv):,.0f} "
              f"({min(niv):,.0f}–{max(niv):,.0f}) | {med(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) | "
              f"{len(ratios)} | {min(loads):.1f}–{max(loads):.1f} |")
    print()
    with open(f"{d}/redis-memory.tsv") as f:
        hdr = f.readline().rstrip("\n").split("\t")
        mem = [dict(zip(hdr, l.rstrip("\n").split("\t"))) for l in f]
    print("| round | module | used_memory empty | after RESERVE | at end | MEMORY USAGE cf | cf32 | bf | RSS end | "
          "filters cf/cf32/bf |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in mem:
        print(f"| {m['round']} | {m['module']} | {int(m['used_memory_empty']):,} | {int(m['used_memory_reserved']):,} | "
              f"{int(m['used_memory_end']):,} | {int(m['memusage_cf']):,} | {int(m.get('memusage_cf32') or 0):,} | "
              f"{int(m['memusage_bf']):,} | {int(m['server_rss_end']):,} | {m.get('cf_filters')}/"
              f"{m.get('cf32_filters')}/{m.get('bf_filters')} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    wall = "--wall" in args
    args = [a for a in args if a != "--wall"]
    if not args:
        print(__doc__)
        sys.exit(2)
    if args[0] == "lib":
        lib(args[1:], wall)
    elif args[0] == "redis":
        redis(args[1])

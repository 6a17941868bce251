/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed against plain cuckoo filters, side by side in one process on the same keys, at the same capacity and
 * error rate: memory, adds, and lookups (single by hash, single by 8-byte key, batched by hash, batched by key;
 * present and absent keys). Each repetition builds both filters afresh (the order alternating), timing their
 * fills, then times every lookup loop on one filter and then the other (the order alternating too); the report
 * gives medians and ranges of the repetitions. The windowed filter is filled as a stream at its capacity:
 * CAPACITY keys over one window, then looked up at the window's end.
 *
 * usage: nidus_bench_window [CAPACITY [ERROR [REPS [LOOKUPS]]]] (defaults 1000000, 0.01, 7, min(CAPACITY, 1M)).
 * With REPS "present" or "absent", one repetition runs each loop once on that set of keys, for callgrind
 * (bench/window_cg.sh reads each loop function's instructions). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "nidus/cuckoo.h"
#include "nidus/hash.h"
#include "nidus/window.h"

#define NOINLINE __attribute__((noinline))
#define WINDOW_MS UINT64_C(3600000)
#define T0 UINT64_C(1800000000000)

enum { OP_HASH, OP_KEY, OP_MANY_HASH, OP_MANY_KEY, OPS };
static const char *const op_name[OPS] = {"by hash", "by key", "batched by hash", "batched by key"};

/* The fills and lookup loops, one function each so that callgrind counts them apart. */
static NOINLINE int plain_fill(nidus_cuckoo *cf, const uint64_t *k, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (nidus_cuckoo_add_hash(cf, k[i]))
            return 1;
    return 0;
}

static NOINLINE int window_fill(nidus_window *wf, const uint64_t *k, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (nidus_window_add_hash(wf, k[i], T0 + i * WINDOW_MS / n))
            return 1;
    return 0;
}

static NOINLINE uint64_t plain_hash(const nidus_cuckoo *cf, const uint64_t *k, uint64_t n)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++)
        hits += nidus_cuckoo_contains_hash(cf, k[i]);
    return hits;
}

static NOINLINE uint64_t window_hash(const nidus_window *wf, const uint64_t *k, uint64_t n, uint64_t now)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++)
        hits += nidus_window_contains_hash(wf, k[i], now);
    return hits;
}

static NOINLINE uint64_t plain_key(const nidus_cuckoo *cf, const void *const *kp, uint64_t n)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++)
        hits += nidus_cuckoo_contains(cf, kp[i], 8);
    return hits;
}

static NOINLINE uint64_t window_key(const nidus_window *wf, const void *const *kp, uint64_t n, uint64_t now)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++)
        hits += nidus_window_contains(wf, kp[i], 8, now);
    return hits;
}

static NOINLINE void plain_many_hash(const nidus_cuckoo *cf, const uint64_t *k, uint64_t n, bool *out)
{
    nidus_cuckoo_contains_many_hash(cf, k, n, out);
}

static NOINLINE void window_many_hash(const nidus_window *wf, const uint64_t *k, uint64_t n, uint64_t now, bool *out)
{
    nidus_window_contains_many_hash(wf, k, n, now, out);
}

static NOINLINE void plain_many_key(const nidus_cuckoo *cf, const void *const *kp, const size_t *lens, uint64_t n,
                                    bool *out)
{
    nidus_cuckoo_contains_many(cf, kp, lens, n, out);
}

static NOINLINE void window_many_key(const nidus_window *wf, const void *const *kp, const size_t *lens, uint64_t n,
                                     uint64_t now, bool *out)
{
    nidus_window_contains_many(wf, kp, lens, n, now, out);
}

typedef struct lookups {
    const uint64_t *keys; /* the set's keys (present or absent) */
    const void *const *kp;
    const size_t *lens;
    uint64_t n;
    bool *out;
} lookups;

/* One lookup loop of one side; returns the hits (so nothing is optimised away). */
static uint64_t run(const nidus_cuckoo *cf, const nidus_window *wf, int side, int op, const lookups *q, uint64_t now)
{
    uint64_t hits = 0;
    switch (op) {
    case OP_HASH: return side ? window_hash(wf, q->keys, q->n, now) : plain_hash(cf, q->keys, q->n);
    case OP_KEY: return side ? window_key(wf, q->kp, q->n, now) : plain_key(cf, q->kp, q->n);
    case OP_MANY_HASH:
        if (side)
            window_many_hash(wf, q->keys, q->n, now, q->out);
        else
            plain_many_hash(cf, q->keys, q->n, q->out);
        break;
    default:
        if (side)
            window_many_key(wf, q->kp, q->lens, q->n, now, q->out);
        else
            plain_many_key(cf, q->kp, q->lens, q->n, q->out);
    }
    for (uint64_t i = 0; i < q->n; i++)
        hits += q->out[i];
    return hits;
}

static void range(double *v, unsigned n, double *med, double *lo, double *hi)
{
    *med = bench_median(v, n); /* sorts v */
    *lo = v[0];
    *hi = v[n - 1];
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    double error = argc > 2 ? atof(argv[2]) : 0.01;
    int cg_set = argc > 3 ? (!strcmp(argv[3], "present") ? 0 : !strcmp(argv[3], "absent") ? 1 : -1) : -1;
    unsigned reps = cg_set >= 0 ? 1 : argc > 3 ? (unsigned)atoi(argv[3]) : 7;
    uint64_t m = argc > 4 ? strtoull(argv[4], NULL, 10) : n < 1000000 ? n : 1000000;
    if (n < 1 || reps < 1 || m < 1 || m > n)
        return fprintf(stderr, "usage: nidus_bench_window [CAPACITY [ERROR [REPS|present|absent [LOOKUPS]]]]\n"), 2;
    uint64_t *keys = malloc(2 * n * sizeof *keys), *raw = malloc(2 * n * sizeof *raw), s = 42;
    const void **kp = malloc(2 * m * sizeof *kp);
    size_t *lens = malloc(m * sizeof *lens);
    bool *out = malloc(m * sizeof *out);
    double *t = calloc((size_t)2 * (1 + 2 * OPS) * reps, sizeof *t); /* [side][slot][rep]: fill, then op x set */
    if (!keys || !raw || !kp || !lens || !out || !t)
        return 1;
    for (uint64_t i = 0; i < 2 * n; i++) { /* 8-byte keys, and the hash both filters (seed 0) take of each */
        uint64_t key = bench_splitmix(&s);
        keys[i] = nidus_hash(&key, 8, 0);
        raw[i] = key;
    }
    /* the lookups: m present keys spread over the stream (every stretch of the window), m absent ones; their
     * hashes (qk) for lookups by hash, the keys themselves (kp) for lookups by key */
    uint64_t *qk = malloc(2 * m * sizeof *qk);
    if (!qk)
        return 1;
    for (uint64_t i = 0; i < m; i++) {
        qk[i] = keys[i * (n / m)];
        qk[m + i] = keys[n + i];
        kp[i] = &raw[i * (n / m)];
        kp[m + i] = &raw[n + i];
        lens[i] = 8;
    }
    lookups sets[2] = {{qk, kp, lens, m, out}, {qk + m, kp + m, lens, m, out}};
    uint64_t now = T0 + WINDOW_MS, hits = 0;
    unsigned slots = 1 + 2 * OPS;
    nidus_cuckoo *cf = NULL;
    nidus_window *wf = NULL;
    for (unsigned r = 0; r < reps; r++) {
        nidus_cuckoo_free(cf);
        nidus_window_free(wf);
        nidus_cuckoo_params cp = {.capacity = n, .error_rate = error};
        nidus_window_params wp = {.capacity = n, .error_rate = error, .window = WINDOW_MS};
        if (nidus_cuckoo_new(&cp, &cf) || nidus_window_new(&wp, &wf))
            return 1;
        for (int k = 0; k < 2; k++) {
            int side = (int)((r + (unsigned)k) % 2);
            double a = bench_now();
            if (side ? window_fill(wf, keys, n) : plain_fill(cf, keys, n))
                return fprintf(stderr, "%s fill failed\n", side ? "windowed" : "plain"), 1;
            t[(side * slots) * reps + r] = (bench_now() - a) * 1e9 / (double)n;
        }
        for (int op = 0; op < OPS; op++)
            for (int set = 0; set < 2; set++) {
                if (cg_set >= 0 && set != cg_set)
                    continue;
                for (int k = 0; k < 2; k++) {
                    int side = (int)((r + (unsigned)k + (unsigned)op) % 2);
                    double a = bench_now();
                    hits += run(cf, wf, side, op, &sets[set], now);
                    t[(side * slots + 1 + 2 * op + set) * reps + r] = (bench_now() - a) * 1e9 / (double)m;
                }
            }
    }
    nidus_cuckoo_stats cs;
    nidus_window_stats ws;
    nidus_cuckoo_get_stats(cf, &cs);
    nidus_window_get_stats(wf, now, &ws);
    uint64_t fp_c = 0, fp_w = 0;
    for (uint64_t i = n; i < 2 * n; i++) {
        fp_c += nidus_cuckoo_contains_hash(cf, keys[i]);
        fp_w += nidus_window_contains_hash(wf, keys[i], now);
    }
    printf("capacity %llu, error %g, %u repetitions, %llu lookups a loop (%llu hits)\n", (unsigned long long)n, error,
           reps, (unsigned long long)m, (unsigned long long)hits);
    printf("plain:    %.2f bits/item (b=%u f=%u), FPR %.5f\n", cs.memory_bytes * 8.0 / (double)n, cs.bucket_size,
           cs.fingerprint_bits, (double)fp_c / (double)n);
    printf("windowed: %.2f bits/item (b=%u f=%u+3), FPR %.5f; memory ratio %.3f\n", ws.memory_bytes * 8.0 / (double)n,
           ws.bucket_size, ws.fingerprint_bits, (double)fp_w / (double)n,
           (double)ws.memory_bytes / (double)cs.memory_bytes);
    printf("ns an operation, median [min-max]     plain                   windowed                ratio\n");
    for (unsigned slot = 0; slot < slots; slot++) {
        if (cg_set >= 0)
            break;
        double pm, pl, ph, wm, wl, wh;
        range(&t[slot * reps], reps, &pm, &pl, &ph);
        range(&t[(slots + slot) * reps], reps, &wm, &wl, &wh);
        char what[64];
        if (slot == 0)
            snprintf(what, sizeof what, "add by hash (fill)");
        else
            snprintf(what, sizeof what, "%s, %s", op_name[(slot - 1) / 2], (slot - 1) % 2 ? "absent" : "present");
        printf("%-36s %6.1f [%6.1f-%6.1f]   %6.1f [%6.1f-%6.1f]   %.3f\n", what, pm, pl, ph, wm, wl, wh, wm / pm);
    }
    nidus_cuckoo_free(cf);
    nidus_window_free(wf);
    free(keys);
    free(raw);
    free(qk);
    free(kp);
    free(lens);
    free(out);
    free(t);
    return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed against plain cuckoo filters, side by side in one process on the same keys: memory at the same
 * capacity and error rate, and single lookups by hash (present and absent keys), medians of alternating
 * repetitions. usage: nidus_bench_window [CAPACITY [ERROR [REPS]]] (defaults 1000000, 0.01, 7). The windowed
 * filter is filled as a stream at its capacity: CAPACITY keys over one window, then looked up within it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "nidus/cuckoo.h"
#include "nidus/window.h"

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    double error = argc > 2 ? atof(argv[2]) : 0.01;
    unsigned reps = argc > 3 ? (unsigned)atoi(argv[3]) : 7;
    uint64_t *keys = malloc(2 * n * sizeof *keys), s = 42;
    if (!keys)
        return 1;
    for (uint64_t i = 0; i < 2 * n; i++)
        keys[i] = bench_splitmix(&s);
    nidus_cuckoo_params cp = {.capacity = n, .error_rate = error};
    nidus_window_params wp = {.capacity = n, .error_rate = error, .window = 3600000};
    nidus_cuckoo *cf;
    nidus_window *wf;
    if (nidus_cuckoo_new(&cp, &cf) || nidus_window_new(&wp, &wf))
        return 1;
    uint64_t t0 = 1800000000000ull;
    for (uint64_t i = 0; i < n; i++) {
        if (nidus_cuckoo_add_hash(cf, keys[i]) || nidus_window_add_hash(wf, keys[i], t0 + i * 3600000 / n))
            return fprintf(stderr, "add %llu failed\n", (unsigned long long)i), 1;
    }
    uint64_t now = t0 + 3600000;
    nidus_cuckoo_stats cs;
    nidus_window_stats ws;
    nidus_cuckoo_get_stats(cf, &cs);
    nidus_window_get_stats(wf, now, &ws);
    double *tc = malloc(2 * reps * sizeof *tc), *tw = tc + reps, *rc = malloc(2 * reps * sizeof *rc), *rw = rc + reps;
    uint64_t hits = 0;
    for (unsigned r = 0; r < reps; r++) {
        for (unsigned side = 0; side < 2; side++) {
            double a = bench_now();
            for (uint64_t i = 0; i < n; i++)
                hits += side ? nidus_window_contains_hash(wf, keys[i], now) : nidus_cuckoo_contains_hash(cf, keys[i]);
            double b = bench_now();
            for (uint64_t i = n; i < 2 * n; i++)
                hits += side ? nidus_window_contains_hash(wf, keys[i], now) : nidus_cuckoo_contains_hash(cf, keys[i]);
            double c = bench_now();
            (side ? tw : tc)[r] = (b - a) * 1e9 / (double)n;
            (side ? rw : rc)[r] = (c - b) * 1e9 / (double)n;
        }
    }
    uint64_t fp_c = 0, fp_w = 0;
    for (uint64_t i = n; i < 2 * n; i++) {
        fp_c += nidus_cuckoo_contains_hash(cf, keys[i]);
        fp_w += nidus_window_contains_hash(wf, keys[i], now);
    }
    double pc = bench_median(tc, reps), pw = bench_median(tw, reps), ac = bench_median(rc, reps),
           aw = bench_median(rw, reps);
    printf("capacity %llu, error %g (%llu hits)\n", (unsigned long long)n, error, (unsigned long long)hits);
    printf("plain:    %.2f bits/item (b=%u f=%u), FPR %.5f, lookup present %.1f ns, absent %.1f ns\n",
           cs.memory_bytes * 8.0 / (double)n, cs.bucket_size, cs.fingerprint_bits, (double)fp_c / (double)n, pc, ac);
    printf("windowed: %.2f bits/item (b=%u f=%u+3), FPR %.5f, lookup present %.1f ns, absent %.1f ns\n",
           ws.memory_bytes * 8.0 / (double)n, ws.bucket_size, ws.fingerprint_bits, (double)fp_w / (double)n, pw, aw);
    printf("ratios windowed/plain: memory %.3f, lookup present %.3f, absent %.3f\n",
           (double)ws.memory_bytes / (double)cs.memory_bytes, pw / pc, aw / ac);
    nidus_cuckoo_free(cf);
    nidus_window_free(wf);
    free(keys);
    free(tc);
    free(rc);
    return 0;
}

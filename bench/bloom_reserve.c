/* SPDX-License-Identifier: BSD-3-Clause */
/* How long creating a Bloom filter takes (BF.RESERVE's library work, and every growth step's sizing): µs per
 * nidus_bloom_new + nidus_bloom_free at small capacities, and µs per layer sizing at any capacity and error
 * (sizing is what used to cost milliseconds; the allocation after it is the C library's). Prints a table; the
 * Redis side, beside RedisBloom's, is bench/bf-reserve-redis.
 * usage: nidus_bench_reserve [REPEATS]   (default 10000) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bloom_filter.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long repeats = argc > 1 ? atol(argv[1]) : 10000;
    if (repeats < 1)
        return 2;
    const double errors[] = {0.1, 0.01, 1e-3, 1e-6, 1e-9, 1e-20, 1e-300};
    const uint64_t caps[] = {100, 1000000, UINT64_C(1000000000)};
    const char *layouts[] = {"compact", "blocked"};
    printf("# sizing one layer (nidus_bloom_layer_size), us per call, %ld calls each\n", repeats);
    printf("%-8s %12s %8s %10s %6s %14s\n", "layout", "capacity", "error", "us", "k", "bytes");
    volatile uint64_t sink = 0;
    for (unsigned lay = 0; lay < 2; lay++)
        for (size_t c = 0; c < sizeof caps / sizeof *caps; c++)
            for (size_t e = 0; e < sizeof errors / sizeof *errors; e++) {
                nidus_bloom_layer l;
                unsigned layer = lay ? NIDUS_LAYER_SPLIT : NIDUS_LAYER_PLAIN;
                double t0 = now();
                for (long r = 0; r < repeats; r++) {
                    if (nidus_bloom_layer_size(&l, caps[c] + (uint64_t)(r & 1), errors[e], layer, false))
                        break;
                    sink += l.size;
                }
                double us = (now() - t0) * 1e6 / (double)repeats;
                nidus_status st = nidus_bloom_layer_size(&l, caps[c], errors[e], layer, false);
                printf("%-8s %12llu %8.0e %10.4f %6u %14llu%s\n", layouts[lay], (unsigned long long)caps[c],
                       errors[e], us, l.k, (unsigned long long)(st ? 0 : nidus_bloom_layer_bytes(&l)),
                       st ? " (too large)" : "");
            }
    printf("\n# nidus_bloom_new + nidus_bloom_free (BF.RESERVE k 0.01 100 and friends), us per pair\n");
    printf("%-8s %12s %8s %10s\n", "layout", "capacity", "error", "us");
    const uint64_t small[] = {100, 10000};
    for (unsigned lay = 0; lay < 2; lay++)
        for (size_t c = 0; c < 2; c++)
            for (size_t e = 0; e < 3; e++) {
                nidus_bloom_params p = {.capacity = small[c], .error_rate = errors[e], .expansion = 2,
                                        .layout = lay};
                double t0 = now();
                for (long r = 0; r < repeats; r++) {
                    nidus_bloom *bf;
                    if (nidus_bloom_new(&p, &bf))
                        return 1;
                    nidus_bloom_free(bf);
                }
                printf("%-8s %12llu %8.0e %10.4f\n", layouts[lay], (unsigned long long)small[c], errors[e],
                       (now() - t0) * 1e6 / (double)repeats);
            }
    return sink == 42; /* keeps the sizing loop */
}

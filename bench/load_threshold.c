/* SPDX-License-Identifier: BSD-3-Clause */
/* Measures the load a cuckoo table reaches before its first failed add, for a given bucket size, fingerprint
 * width, placement reach and kick budget. Used to choose the placement reach and the design loads.
 * usage: nidus_bench_load BUCKETS B F REACH_LOG2 MAX_KICKS RUNS [SEED] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "table_fill.h"

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s BUCKETS B F REACH_LOG2 MAX_KICKS RUNS [SEED]\n", argv[0]);
        return 2;
    }
    nidus_table_shape shape = {
        .buckets = strtoull(argv[1], NULL, 10),
        .bucket_size = (unsigned)atoi(argv[2]),
        .fp_bits = (unsigned)atoi(argv[3]),
        .reach_log2 = (unsigned)atoi(argv[4]),
    };
    shape.offset_bits = shape.fp_bits;
    unsigned kicks = (unsigned)atoi(argv[5]), runs = (unsigned)atoi(argv[6]);
    uint64_t seed = argc > 7 ? strtoull(argv[7], NULL, 10) : 1;
    nidus_allocator a;
    nidus_alloc_resolve(NULL, &a);
    double sum = 0, lo = 1;
    for (unsigned r = 0; r < runs; r++) {
        nidus_table t;
        if (nidus_table_init(&t, &shape, kicks, &a)) {
            fprintf(stderr, "bad shape\n");
            return 2;
        }
        uint64_t s = seed * 1000003 + r;
        bench_fill_table(&t, &a, &s, 0);
        double load = (double)t.occupied / (double)(shape.buckets * shape.bucket_size);
        sum += load;
        lo = load < lo ? load : lo;
        nidus_table_release(&t, &a);
    }
    printf("buckets=%" PRIu64 " b=%u f=%u reach=2^%u kicks=%u: mean load %.4f, min %.4f over %u runs\n",
           shape.buckets, shape.bucket_size, shape.fp_bits, shape.reach_log2, kicks, sum / runs, lo, runs);
    return 0;
}

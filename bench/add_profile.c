/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the time of filling a cuckoo filter goes: a filter of capacity N (b=4, f=12 or
 * semi-sorted f=13, MAXITERATIONS 500 as the side-by-side harness makes it) takes N keys through
 * nidus_cuckoo_add, and the fill is reported in 20 slices: load reached, ns per add, and (counted in a
 * separate, untimed fill of the same keys) the share of adds that found a free slot in one of their two
 * buckets, the rest taking the search.
 *
 *   nidus_bench_add_profile [N] [c12|ss13] [time|count|fill] [CAPACITY]
 * `fill` only fills (for callgrind: instructions per add = total / N); CAPACITY (default N) larger than N
 * measures adds at low load only. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "cuckoo_filter.h"
#include "cuckoo_table_impl.h"
#include "nidus/nidus.h"

#define SLICES 20

/* Thread CPU time: steadier than the wall clock on a shared machine (as the side-by-side harness). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t capacity;

static nidus_cuckoo *make(uint64_t n, bool semi)
{
    if (capacity > n)
        n = capacity;
    nidus_cuckoo_params p = {0};
    p.capacity = n;
    p.fingerprint_bits = semi ? 13 : 12;
    p.bucket_size = 4;
    p.semi_sort = semi;
    p.seed = 42;
    nidus_cuckoo *cf = NULL;
    if (nidus_cuckoo_new(&p, &cf)) {
        fprintf(stderr, "nidus_cuckoo_new failed\n");
        exit(1);
    }
    return cf;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    bool semi = argc > 2 && strcmp(argv[2], "ss13") == 0;
    const char *mode = argc > 3 ? argv[3] : "time";
    capacity = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
    uint64_t *keys = malloc(n * sizeof *keys), s = 1;
    for (uint64_t k = 0; k < n; k++)
        keys[k] = bench_splitmix(&s);
    if (strcmp(mode, "fill") == 0) {
        nidus_cuckoo *cf = make(n, semi);
        uint64_t bad = 0;
        for (uint64_t k = 0; k < n; k++)
            bad += nidus_cuckoo_add(cf, &keys[k], 8) != NIDUS_OK;
        printf("failed %llu load %.4f\n", (unsigned long long)bad,
               (double)cf->tables[0].occupied / (double)(cf->tables[0].shape.buckets * 4));
        nidus_cuckoo_free(cf);
        free(keys);
        return 0;
    }
    double t0 = cpu_now();
    nidus_cuckoo *cf = make(n, semi);
    double made = cpu_now() - t0, slice_ns[SLICES], load[SLICES];
    uint64_t fast[SLICES] = {0}, bad = 0;
    const nidus_table *t = &cf->tables[0];
    uint64_t slots = t->shape.buckets * 4;
    for (unsigned sl = 0; sl < SLICES; sl++) {
        uint64_t lo = n * sl / SLICES, hi = n * (sl + 1) / SLICES;
        double a = cpu_now();
        for (uint64_t k = lo; k < hi; k++)
            bad += nidus_cuckoo_add(cf, &keys[k], 8) != NIDUS_OK;
        slice_ns[sl] = (cpu_now() - a) * 1e9 / (double)(hi - lo);
        load[sl] = (double)t->occupied / (double)slots;
    }
    if (strcmp(mode, "count") == 0) {
        nidus_cuckoo_free(cf);
        cf = make(n, semi);
        t = &cf->tables[0];
        for (unsigned sl = 0; sl < SLICES; sl++) {
            uint64_t lo = n * sl / SLICES, hi = n * (sl + 1) / SLICES;
            for (uint64_t k = lo; k < hi; k++) {
                uint64_t h = nidus_cuckoo_hash(cf, &keys[k], 8), i, j;
                uint32_t fp;
                nidus_table_locate(t, h, &i, &fp);
                j = nidus_table_alt(t, i, fp);
                uint32_t a[4], b[4];
                nidus_table_read_bucket(t, i, a);
                nidus_table_read_bucket(t, j, b);
                bool free_slot = false;
                for (unsigned x = 0; x < 4; x++)
                    free_slot |= a[x] == 0 || b[x] == 0;
                fast[sl] += free_slot;
                nidus_cuckoo_add(cf, &keys[k], 8);
            }
        }
    }
    printf("N %llu %s construct %.1f ms, failed %llu, final load %.4f\n", (unsigned long long)n,
           semi ? "ss13" : "c12", made * 1e3, (unsigned long long)bad, load[SLICES - 1]);
    double total = made * 1e9;
    for (unsigned sl = 0; sl < SLICES; sl++) {
        uint64_t cnt = n * (sl + 1) / SLICES - n * sl / SLICES;
        total += slice_ns[sl] * (double)cnt;
        printf("slice %2u load %.3f  %6.1f ns/add", sl, load[sl], slice_ns[sl]);
        if (strcmp(mode, "count") == 0)
            printf("  free-slot %.4f", (double)fast[sl] / (double)cnt);
        printf("\n");
    }
    printf("mean %.1f ns/add (construct included)\n", total / (double)n);
    nidus_cuckoo_free(cf);
    free(keys);
    return 0;
}

/* How full a cuckoo table gets before its first failed add, per bucket size and MAXITERATIONS (max_kicks), over
 * many seeds, and whether filters sized by nidus_cuckoo_plan_params hold their capacity every time. The
 * numbers behind the design loads in src/params.c (docs/DESIGN-NOTES.md, "Sizing").
 *
 * usage: nidus_bench_cuckoo_load load SLOTS RUNS [F]       worst and mean load at the first failure, every (b, kicks)
 *        nidus_bench_cuckoo_load hold N RUNS B KICKS       filters of capacity N: how many of RUNS seeds fail to
 *                                                      take N distinct keys in their first table
 *        nidus_bench_cuckoo_load need N RUNS B KICKS [STASH]  the fewest slots (even buckets) a table needs to hold N keys
 *                                                   (with STASH: all but at most STASH of them, the rest in a stash)
 *                                                      in every one of RUNS seeds (the small-table margin) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuckoo_filter.h"
#include "table_fill.h"
#include "params.h"

static const unsigned kicks_list[] = {1, 2, 5, 10, 20, 50, 100, 500};

/* Load at the first failed add of one table of `buckets` buckets, keys from `seed`. */
static double first_failure(uint64_t buckets, unsigned b, unsigned f, unsigned kicks, uint64_t seed)
{
    nidus_table_shape shape = {.buckets = buckets, .bucket_size = b, .fp_bits = f, .offset_bits = f,
                               .reach_log2 = 16};
    nidus_allocator a;
    nidus_alloc_resolve(NULL, &a);
    nidus_table t;
    if (nidus_table_init(&t, &shape, kicks, &a))
        return -1;
    uint64_t s = seed;
    bench_fill_table(&t, &a, &s, 0);
    double load = (double)t.occupied / (double)(buckets * b);
    nidus_table_release(&t, &a);
    return load;
}

static int run_load(uint64_t slots, unsigned runs, unsigned f)
{
    printf("slots=%" PRIu64 " f=%u runs=%u: worst / mean load at the first failed add\n", slots, f, runs);
    printf("b\\kicks");
    for (size_t k = 0; k < sizeof kicks_list / sizeof *kicks_list; k++)
        printf("\t%u", kicks_list[k]);
    printf("\n");
    for (unsigned b = 1; b <= 8; b *= 2) {
        uint64_t buckets = (slots / b + 1) & ~UINT64_C(1);
        printf("%u", b);
        for (size_t k = 0; k < sizeof kicks_list / sizeof *kicks_list; k++) {
            double lo = 1, sum = 0;
            for (unsigned r = 0; r < runs; r++) {
                double l = first_failure(buckets, b, f, kicks_list[k], UINT64_C(1000003) * (r + 1));
                sum += l;
                lo = l < lo ? l : lo;
            }
            printf("\t%.4f/%.4f", lo, sum / runs);
        }
        printf("\n");
        fflush(stdout);
    }
    return 0;
}

static int run_hold(uint64_t n, unsigned runs, unsigned b, unsigned kicks)
{
    unsigned failed = 0;
    nidus_cuckoo_plan plan = {0};
    for (unsigned r = 0; r < runs; r++) {
        nidus_cuckoo_params p = {.capacity = n, .bucket_size = b, .max_kicks = kicks, .expansion = 1,
                                 .seed = r};
        nidus_cuckoo *cf;
        if (nidus_cuckoo_new(&p, &cf) || nidus_cuckoo_plan_params(&p, &plan))
            return 2;
        uint64_t s = UINT64_C(7777777) * (r + 1);
        for (uint64_t k = 0; k < n; k++) {
            uint64_t key = bench_splitmix(&s);
            if (nidus_cuckoo_add(cf, &key, sizeof key))
                break;
        }
        nidus_cuckoo_stats st;
        nidus_cuckoo_get_stats(cf, &st);
        if (st.tables > 1) {
            failed++;
            printf("  seed %u grew at item %" PRIu64 "\n", r, st.items);
        }
        nidus_cuckoo_free(cf);
    }
    printf("N=%" PRIu64 " b=%u kicks=%u slots=%" PRIu64 " (load %.4f): %u of %u runs grew\n", n, b, kicks,
           plan.slots, (double)n / (double)plan.slots, failed, runs);
    return failed != 0;
}

/* Does a table of `buckets` buckets take n keys from every one of `runs` seeds, all but at most `stash` of them
 * (the adds that fail are skipped: they would wait in a stash)? */
static bool holds(uint64_t n, unsigned runs, unsigned b, unsigned kicks, uint64_t buckets, unsigned stash)
{
    nidus_table_shape shape = {.buckets = buckets, .bucket_size = b, .fp_bits = 12, .offset_bits = 12,
                               .reach_log2 = 16};
    nidus_allocator a;
    nidus_alloc_resolve(NULL, &a);
    for (unsigned r = 0; r < runs; r++) {
        nidus_table t;
        if (nidus_table_init(&t, &shape, kicks, &a))
            return false;
        uint64_t s = UINT64_C(7777777) * (r + 1), k = 0;
        unsigned failed = 0;
        while (k < n && failed <= stash) {
            uint64_t added = bench_fill_table(&t, &a, &s, n - k);
            k += added;
            if (k < n) { /* the key that failed was consumed from the stream: count it as stashed */
                failed++;
                k++;
            }
        }
        nidus_table_release(&t, &a);
        if (failed > stash)
            return false;
    }
    return true;
}

static int run_need(uint64_t n, unsigned runs, unsigned b, unsigned kicks, unsigned stash)
{
    uint64_t lo = (n / b + 1) & ~UINT64_C(1), hi = lo < 2 ? 2 : lo; /* buckets: lo fails or is the minimum */
    while (!holds(n, runs, b, kicks, hi, stash))
        hi *= 2;
    while (hi - lo > 2) { /* even bucket counts only */
        uint64_t mid = (lo + (hi - lo) / 2) & ~UINT64_C(1);
        if (mid <= lo)
            mid = lo + 2;
        if (holds(n, runs, b, kicks, mid, stash))
            hi = mid;
        else
            lo = mid;
    }
    printf("N=%" PRIu64 " b=%u kicks=%u stash=%u: %" PRIu64 " slots hold it in all %u runs (load %.4f, extra over "
           "N/L %.1f)\n", n, b, kicks, stash, hi * b, runs, (double)n / (double)(hi * b),
           (double)(hi * b) - (double)n / nidus_cuckoo_design_load(b, 12, kicks));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "load"))
        return run_load(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]),
                        argc > 4 ? (unsigned)atoi(argv[4]) : 12);
    if (argc >= 6 && !strcmp(argv[1], "hold"))
        return run_hold(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
                        (unsigned)atoi(argv[5]));
    if (argc >= 6 && !strcmp(argv[1], "need"))
        return run_need(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
                        (unsigned)atoi(argv[5]), argc > 6 ? (unsigned)atoi(argv[6]) : 0);
    fprintf(stderr, "usage: %s load SLOTS RUNS [F] | hold N RUNS B KICKS | need N RUNS B KICKS [STASH]\n", argv[0]);
    return 2;
}

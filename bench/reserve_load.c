/* How full a cuckoo table gets before its first failed add, per bucket size and MAXITERATIONS (max_kicks), over
 * many seeds, and whether filters sized by nidus_cuckoo_plan_params hold their capacity every time. The
 * numbers behind the design loads in src/cuckoo/params.c (docs/DESIGN-NOTES.md, "Sizing").
 *
 * usage: nidus_bench_cuckoo_load load SLOTS RUNS [F]       worst and mean load at the first failure, every (b, kicks)
 *        nidus_bench_cuckoo_load hold N RUNS B KICKS       filters of capacity N: how many of RUNS seeds fail to
 *                                                      take N distinct keys in their first table
 *        nidus_bench_cuckoo_load need N RUNS B KICKS [STASH [F]]  the fewest slots (even buckets) a table of
 *                                                      F-bit fingerprints (12 unless given) needs to hold N keys
 *                                                      (with STASH: all but at most STASH of them, the rest in a
 *                                                      stash) in every one of RUNS seeds (the small-table margin)
 *        nidus_bench_cuckoo_load fails N RUNS B KICKS STASH F SLOTS  how many of RUNS seeds a table of SLOTS slots
 *                                                      does not hold N keys in (more than STASH adds fail)
 *        nidus_bench_cuckoo_load check LO HI RUNS B KICKS F STASH  whether the tables params.c sizes for capacities
 *                                                      LO..HI hold them in every one of RUNS seeds */
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

/* Fills a table of `buckets` buckets with n keys of seed r until more than `stash` of them wait in a stash;
 * returns how many do (at most stash + 1). The table keeps its own stash (NIDUS_TABLE_STASH entries, the items
 * it could not place) and counts them here; past it, a failed add is skipped as if a larger stash held it, so
 * `stash` is the whole stash modelled, whatever NIDUS_TABLE_STASH is. (Until this counted the table's own
 * entries, STASH 4 measured a stash of 4 + 4.) */
static unsigned skipped_adds(uint64_t n, unsigned r, unsigned b, unsigned kicks, uint64_t buckets, unsigned stash,
                             unsigned f, const nidus_allocator *a)
{
    nidus_table_shape shape = {.buckets = buckets, .bucket_size = b, .fp_bits = f, .offset_bits = f,
                               .reach_log2 = 16};
    nidus_table t;
    if (nidus_table_init(&t, &shape, kicks, a))
        return stash + 1;
    uint64_t s = UINT64_C(7777777) * (r + 1), k = 0;
    unsigned failed = 0;
    while (k < n && failed + nidus_table_stash_entries(&t) <= stash) {
        k += bench_fill_table(&t, a, &s, n - k);
        if (k < n) { /* the key that failed was consumed from the stream: count it as stashed */
            failed++;
            k++;
        }
    }
    uint64_t stashed = failed + nidus_table_stash_entries(&t);
    nidus_table_release(&t, a);
    return stashed > stash ? stash + 1 : (unsigned)stashed;
}

/* Does a table of `buckets` buckets take n keys from every one of `runs` seeds, all but at most `stash` of them?
 * With `stashed`, also counts the seeds whose fill skipped at least one add (a filter that pays for stash
 * entries once full). */
static bool holds(uint64_t n, unsigned runs, unsigned b, unsigned kicks, uint64_t buckets, unsigned stash,
                  unsigned f, unsigned *stashed)
{
    nidus_allocator a;
    nidus_alloc_resolve(NULL, &a);
    for (unsigned r = 0; r < runs; r++) {
        unsigned failed = skipped_adds(n, r, b, kicks, buckets, stash, f, &a);
        if (failed > stash)
            return false;
        if (stashed && failed)
            (*stashed)++;
    }
    return true;
}

/* How many of `runs` seeds a table of `slots` slots (rounded up to even buckets) fails: more than `stash` adds
 * of the n keys found no slot. */
static int run_fails(uint64_t n, unsigned runs, unsigned b, unsigned kicks, unsigned stash, unsigned f,
                     uint64_t slots)
{
    nidus_allocator a;
    nidus_alloc_resolve(NULL, &a);
    uint64_t buckets = (slots + b - 1) / b;
    buckets += buckets & 1;
    unsigned failed = 0;
    for (unsigned r = 0; r < runs; r++)
        failed += skipped_adds(n, r, b, kicks, buckets, stash, f, &a) > stash;
    printf("N=%" PRIu64 " b=%u kicks=%u stash=%u f=%u slots=%" PRIu64 ": %u of %u runs did not hold it\n", n, b,
           kicks, stash, f, buckets * b, failed, runs);
    return 0;
}

static int run_need(uint64_t n, unsigned runs, unsigned b, unsigned kicks, unsigned stash, unsigned f)
{
    uint64_t lo = (n / b + 1) & ~UINT64_C(1), hi = lo < 2 ? 2 : lo; /* buckets: lo fails or is the minimum */
    while (!holds(n, runs, b, kicks, hi, stash, f, NULL))
        hi *= 2;
    while (hi - lo > 2) { /* even bucket counts only */
        uint64_t mid = (lo + (hi - lo) / 2) & ~UINT64_C(1);
        if (mid <= lo)
            mid = lo + 2;
        if (holds(n, runs, b, kicks, mid, stash, f, NULL))
            hi = mid;
        else
            lo = mid;
    }
    unsigned stashed = 0;
    if (stash)
        (void)holds(n, runs, b, kicks, hi, stash, f, &stashed);
    printf("N=%" PRIu64 " b=%u kicks=%u stash=%u f=%u: %" PRIu64 " slots hold it in all %u runs (load %.4f, extra "
           "over N/L %.1f; %u runs used the stash)\n", n, b, kicks, stash, f, hi * b, runs,
           (double)n / (double)(hi * b), (double)(hi * b) - (double)n / nidus_cuckoo_design_load(b, f, kicks),
           stashed);
    return 0;
}

/* params.c against the model: for every capacity from lo to hi (then steps of a fiftieth above 300), the table
 * nidus_cuckoo_plan_params sizes for (b, kicks, f) must hold the capacity in every one of RUNS seeds with at
 * most `stash` adds waiting in the stash. Prints the capacities that do not, and how many were checked. */
static int run_check(uint64_t lo, uint64_t hi, unsigned runs, unsigned b, unsigned kicks, unsigned f,
                     unsigned stash)
{
    unsigned checked = 0, bad = 0;
    for (uint64_t n = lo; n <= hi; n += n < 300 ? 1 : n / 50) {
        nidus_cuckoo_params p = {.capacity = n, .bucket_size = b, .max_kicks = kicks, .fingerprint_bits = f};
        nidus_cuckoo_plan plan;
        if (nidus_cuckoo_plan_params(&p, &plan))
            return 2;
        checked++;
        if (!holds(n, runs, b, kicks, plan.buckets, stash, f, NULL)) {
            bad++;
            printf("  N=%" PRIu64 " slots=%" PRIu64 " does not hold\n", n, plan.slots);
        }
    }
    printf("check b=%u kicks=%u f=%u stash=%u N=%" PRIu64 "..%" PRIu64 ": %u of %u capacities fail in %u runs\n", b,
           kicks, f, stash, lo, hi, bad, checked, runs);
    return bad != 0;
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
                        (unsigned)atoi(argv[5]), argc > 6 ? (unsigned)atoi(argv[6]) : 0,
                        argc > 7 ? (unsigned)atoi(argv[7]) : 12);
    if (argc >= 9 && !strcmp(argv[1], "fails"))
        return run_fails(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]),
                         (unsigned)atoi(argv[5]), (unsigned)atoi(argv[6]), (unsigned)atoi(argv[7]),
                         strtoull(argv[8], NULL, 10));
    if (argc >= 9 && !strcmp(argv[1], "check"))
        return run_check(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10), (unsigned)atoi(argv[4]),
                         (unsigned)atoi(argv[5]), (unsigned)atoi(argv[6]), (unsigned)atoi(argv[7]),
                         (unsigned)atoi(argv[8]));
    fprintf(stderr, "usage: %s load SLOTS RUNS [F] | hold N RUNS B KICKS | need N RUNS B KICKS [STASH [F]] | "
            "fails N RUNS B KICKS STASH F SLOTS | check LO HI RUNS B KICKS F STASH\n", argv[0]);
    return 2;
}

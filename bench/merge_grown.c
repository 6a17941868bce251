/* SPDX-License-Identifier: BSD-3-Clause */
/* What merging two grown cuckoo filters costs (sibling tables): two filters of N distinct keys each, built from a
 * first table of CAPACITY (expansion 2, error ERROR), merged; prints the merge's time, the tables before and
 * after, bits per item, and the false-positive rate measured over PROBES absent keys beside the merged filter's
 * error bound and the sum of the two sources' bounds.
 *   usage: nidus_bench_merge [N [CAPACITY [ERROR [PROBES]]]]   (defaults 1000000 100000 0.01 10000000) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include <nidus/nidus.h>

#include "bench_util.h"

static nidus_cuckoo *build(const nidus_cuckoo_params *p, uint64_t seed, uint64_t n)
{
    nidus_cuckoo *cf;
    if (nidus_cuckoo_new(p, &cf))
        exit(2);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t key = bench_splitmix(&seed);
        if (nidus_cuckoo_add(cf, &key, sizeof key))
            exit(3);
    }
    return cf;
}

static void show(const char *name, const nidus_cuckoo *cf)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    printf("%-7s tables %2u  items %9llu  memory %10llu B  %.2f bits/item  error bound %.5f\n", name, s.tables,
           (unsigned long long)s.items, (unsigned long long)s.memory_bytes,
           (double)s.memory_bytes * 8.0 / (double)s.items, s.error_bound);
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    uint64_t cap = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000;
    double error = argc > 3 ? strtod(argv[3], NULL) : 0.01;
    uint64_t probes = argc > 4 ? strtoull(argv[4], NULL, 10) : 10000000;
    nidus_cuckoo_params p = {.capacity = cap, .error_rate = error, .expansion = 2, .seed = 1};
    nidus_cuckoo *a = build(&p, 11, n), *b = build(&p, 22, n);
    nidus_cuckoo_stats sa, sb, sm;
    nidus_cuckoo_get_stats(a, &sa);
    nidus_cuckoo_get_stats(b, &sb);
    show("a", a);
    show("b", b);
    double t0 = bench_now();
    nidus_status st = nidus_cuckoo_merge(a, b);
    double t1 = bench_now();
    if (st) {
        fprintf(stderr, "merge: %s\n", nidus_strerror(st));
        return 1;
    }
    show("merged", a);
    nidus_cuckoo_get_stats(a, &sm);
    uint64_t seed = 33, hits = 0;
    for (uint64_t k = 0; k < probes; k++) {
        uint64_t key = bench_splitmix(&seed);
        hits += nidus_cuckoo_contains(a, &key, sizeof key);
    }
    printf("merge %.3f s; false positives %llu of %llu: %.5f (bound %.5f; the sources' %.5f + %.5f = %.5f)\n",
           t1 - t0, (unsigned long long)hits, (unsigned long long)probes, (double)hits / (double)probes,
           sm.error_bound, sa.error_bound, sb.error_bound, sa.error_bound + sb.error_bound);
    nidus_cuckoo_free(a);
    nidus_cuckoo_free(b);
    return 0;
}

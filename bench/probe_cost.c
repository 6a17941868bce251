/* SPDX-License-Identifier: BSD-3-Clause */
/* Instructions per cuckoo operation for callgrind: builds a filter of N keys (b, f plain), then runs one
 * operation M times (half present, half absent keys; adds of new keys at low load) in `measured`, which
 * bench/cg.sh has callgrind count alone (--toggle-collect=measured): instructions per operation = total / M.
 *   nidus_bench_probe_cost B F N OP M     OP: key | hash | many_key | many_hash | add | add_hash */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in bench_util.h */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "nidus/nidus.h"

/* The measured loop (callgrind --toggle-collect=measured). */
static __attribute__((noinline)) uint64_t measured(nidus_cuckoo *cf, const char *op, const uint64_t *fresh,
                                                   const uint64_t *q, const uint64_t *hq, const void **kp,
                                                   const size_t *lens, bool *out, uint64_t m)
{
    uint64_t hits = 0;
    if (!strcmp(op, "key"))
        for (uint64_t k = 0; k < m; k++)
            hits += nidus_cuckoo_contains(cf, &q[k], 8);
    else if (!strcmp(op, "hash"))
        for (uint64_t k = 0; k < m; k++)
            hits += nidus_cuckoo_contains_hash(cf, hq[k]);
    else if (!strcmp(op, "many_key")) {
        nidus_cuckoo_contains_many(cf, (const void *const *)kp, lens, m, out);
        for (uint64_t k = 0; k < m; k++)
            hits += out[k];
    } else if (!strcmp(op, "many_hash")) {
        nidus_cuckoo_contains_many_hash(cf, hq, m, out);
        for (uint64_t k = 0; k < m; k++)
            hits += out[k];
    } else if (!strcmp(op, "add"))
        for (uint64_t k = 0; k < m; k++)
            hits += nidus_cuckoo_add(cf, &fresh[k], 8) == NIDUS_OK;
    else if (!strcmp(op, "add_hash"))
        for (uint64_t k = 0; k < m; k++)
            hits += nidus_cuckoo_add_hash(cf, nidus_cuckoo_hash(cf, &fresh[k], 8)) == NIDUS_OK;
    return hits;
}

int main(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    unsigned b = (unsigned)atoi(argv[1]), f = (unsigned)atoi(argv[2]);
    uint64_t n = strtoull(argv[3], NULL, 10), m = strtoull(argv[5], NULL, 10);
    const char *op = argv[4];
    nidus_cuckoo_params p = {0};
    p.capacity = !strncmp(op, "add", 3) ? 4 * (n + m) : n; /* adds measured at low load: free slots */
    p.fingerprint_bits = f;
    p.bucket_size = b;
    p.seed = 42;
    nidus_cuckoo *cf = NULL;
    if (nidus_cuckoo_new(&p, &cf))
        return 1;
    uint64_t s = 1, *keys = malloc((n + m + 1) * sizeof *keys);
    for (uint64_t k = 0; k < n + m; k++)
        keys[k] = bench_splitmix(&s);
    for (uint64_t k = 0; k < n; k++)
        if (nidus_cuckoo_add(cf, &keys[k], 8))
            return 3;
    /* half present, half absent keys */
    uint64_t *q = malloc((m + 1) * sizeof *q);
    const void **kp = malloc((m + 1) * sizeof *kp);
    size_t *lens = malloc((m + 1) * sizeof *lens);
    bool *out = malloc(m + 1);
    for (uint64_t k = 0; k < m; k++) {
        q[k] = (k & 1) ? keys[(k * 7919) % n] : keys[n + k];
        kp[k] = &q[k];
        lens[k] = 8;
    }
    uint64_t *hq = malloc((m + 1) * sizeof *hq);
    for (uint64_t k = 0; k < m; k++)
        hq[k] = nidus_cuckoo_hash(cf, &q[k], 8);
    uint64_t hits = measured(cf, op, keys + n, q, hq, kp, lens, out, m);
    printf("%s b=%u f=%u n=%llu m=%llu hits=%llu\n", op, b, f, (unsigned long long)n, (unsigned long long)m,
           (unsigned long long)hits);
    nidus_cuckoo_free(cf);
    return 0;
}

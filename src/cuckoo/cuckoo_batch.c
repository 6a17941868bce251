/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched cuckoo filter calls, the general way: hash ahead, prefetch ahead, then probe.
 *
 * A lookup is two dependent-free memory reads; one at a time, each waits for its own cache misses. Here the
 * buckets of key k + AHEAD are requested while key k is probed, so up to 2 * AHEAD misses are in flight.
 * AHEAD = 16 keeps 32 lines in flight, above what one core can track, and the ring fits in registers' reach.
 *
 * cuckoo_dispatch.c chooses: a one-table filter of a common shape (t->fast) goes by blocks instead
 * (cuckoo_kernels_impl.h), a filter still loading answers false, every other full filter comes here. */
#include "cuckoo_filter.h"
#include "cuckoo_table_impl.h"

#define AHEAD 16u

typedef struct pending {
    uint64_t i, j;
    uint32_t fp;
} pending;

static inline void stage(const nidus_table *t, uint64_t hash, pending *p)
{
    if (t->kernel != NIDUS_FAST_NONE) { /* a table with a kernel: its placement needs no test of the shape */
        p->fp = nidus_table_fast_locate(t, hash, &p->i, &p->j);
    } else {
        nidus_table_locate(t, hash, &p->i, &p->fp);
        p->j = nidus_table_alt(t, p->i, p->fp);
    }
    nidus_table_prefetch(t, p->i);
    nidus_table_prefetch(t, p->j);
}

/* Probes table t for every key; with `only_missing`, only for keys whose out[] is still false (later tables of
 * a grown filter), and those are the only ones staged and prefetched. */
static void probe_table(const nidus_table *t, const uint64_t *hashes, size_t n, bool *out, bool only_missing)
{
    pending ring[AHEAD];
    size_t idx[AHEAD];
    size_t k = 0, staged = 0, done = 0;
    while (done < staged || k < n) {
        while (staged - done < AHEAD && k < n) {
            if (!only_missing || !out[k]) {
                stage(t, hashes[k], &ring[staged % AHEAD]);
                idx[staged % AHEAD] = k;
                staged++;
            }
            k++;
        }
        if (done < staged) {
            const pending *p = &ring[done % AHEAD];
            out[idx[done % AHEAD]] = nidus_table_contains(t, p->i, p->j, p->fp);
            done++;
        }
    }
}

void nidus_full_contains_many_hash(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n, bool *out)
{
    for (unsigned t = 0; t < cf->ntables; t++)
        probe_table(&cf->tables[t], hashes, n, out, t > 0);
}


/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched cuckoo filter calls: hash ahead, prefetch ahead, then probe.
 *
 * A lookup is two dependent-free memory reads; one at a time, each waits for its own cache misses. Here the
 * buckets of key k + AHEAD are requested while key k is probed, so up to 2 * AHEAD misses are in flight.
 * AHEAD = 16 keeps 32 lines in flight, above what one core can track, and the ring fits in registers' reach.
 *
 * A one-table filter of a common shape (t->fast) goes by blocks instead (cuckoo_kernels_impl.h). */
#include "cuckoo_dispatch.h"
#include "cuckoo_kernels.h"

#define AHEAD 16u
#define HASH_BLOCK 64u

/* A one-table filter whose table has a fast kernel (its dispatch byte says so): the block path above. */
static inline const nidus_table *fast_table(const nidus_cuckoo *cf)
{
    return nidus_cuckoo_dispatch_byte(cf) >= NIDUS_DISPATCH_PLAIN ? cf->tables : NULL;
}

static inline bool fast_v3(const nidus_cuckoo *cf) { return nidus_cuckoo_dispatch_byte(cf) & 1; }

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
    const nidus_table *fast = fast_table(cf);
    if (fast) {
#if NIDUS_HAVE_ISA_V3
        if (fast_v3(cf)) {
            nidus_kernel_many_hash_v3(cf, hashes, n, out);
            return;
        }
#endif
        nidus_kernel_many_hash_base(cf, hashes, n, out);
        return;
    }
    if (cf->loader) {
        for (size_t k = 0; k < n; k++)
            out[k] = false;
        return;
    }
    for (unsigned t = 0; t < cf->ntables; t++)
        probe_table(&cf->tables[t], hashes, n, out, t > 0);
}

/* One add, by the kernel the filter's dispatch byte names (it may change with any add that took the slow path). */
static inline nidus_status add_one(nidus_cuckoo *cf, uint64_t hash)
{
    switch (nidus_cuckoo_dispatch_byte(cf)) {
    case NIDUS_DISPATCH_PLAIN:
    case NIDUS_DISPATCH_PLAIN_INLINE:
        return nidus_kernel_add_plain_hash_base(cf, hash);
    case NIDUS_DISPATCH_SEMI:
    case NIDUS_DISPATCH_SEMI_INLINE:
        return nidus_kernel_add_semi_hash_base(cf, hash);
#if NIDUS_HAVE_ISA_V3
    case NIDUS_DISPATCH_PLAIN_V3:
    case NIDUS_DISPATCH_PLAIN_INLINE_V3:
        return nidus_kernel_add_plain_hash_v3(cf, hash);
    case NIDUS_DISPATCH_SEMI_V3:
    case NIDUS_DISPATCH_SEMI_INLINE_V3:
        return nidus_kernel_add_semi_hash_v3(cf, hash);
#endif
    }
    return nidus_full_add_hash(cf, hash);
}

/* Adds go one by one (free slots in every table, kicks, growth: the same results as single calls); the batch
 * only prefetches the newest table's buckets of the keys ahead. */
nidus_status nidus_full_add_many_hash(nidus_cuckoo *cf, const uint64_t *hashes, size_t n, size_t *added)
{
    size_t done = 0;
    nidus_status st = nidus_cuckoo_writable(cf) ? NIDUS_OK : NIDUS_ERR_READ_ONLY;
    pending p;
    for (size_t k = 0; k < AHEAD && k < n && !st; k++)
        stage(&cf->tables[cf->ntables - 1], hashes[k], &p);
    for (; done < n && !st; done++) {
        if (done + AHEAD < n)
            stage(&cf->tables[cf->ntables - 1], hashes[done + AHEAD], &p);
        if ((st = add_one(cf, hashes[done])))
            break;
    }
    if (added)
        *added = done;
    return st;
}

/* The key variant hashes a block at a time into a local array and hands it to the hash variant. */
void nidus_full_contains_many_key(const nidus_cuckoo *cf, const void *const *keys, const size_t *lens, size_t n,
                                  bool *out)
{
    const nidus_table *fast = fast_table(cf);
    if (fast) {
#if NIDUS_HAVE_ISA_V3
        if (fast_v3(cf)) {
            nidus_kernel_many_key_v3(cf, keys, lens, n, out);
            return;
        }
#endif
        nidus_kernel_many_key_base(cf, keys, lens, n, out);
        return;
    }
    uint64_t hashes[HASH_BLOCK];
    for (size_t base = 0; base < n; base += HASH_BLOCK) {
        size_t m = n - base < HASH_BLOCK ? n - base : HASH_BLOCK;
        for (size_t k = 0; k < m; k++)
            hashes[k] = nidus_hash_bytes(keys[base + k], lens[base + k], cf->seed);
        nidus_full_contains_many_hash(cf, hashes, m, out + base);
    }
}

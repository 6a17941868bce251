/* Batched cuckoo filter calls: hash ahead, prefetch ahead, then probe.
 *
 * A lookup is two dependent-free memory reads; one at a time, each waits for its own cache misses. Here the
 * buckets of key k + AHEAD are requested while key k is probed, so up to 2 * AHEAD misses are in flight.
 * AHEAD = 16 keeps 32 lines in flight, above what one core can track, and the ring fits in registers' reach. */
#include "cuckoo_filter.h"
#include "cuckoo_table_impl.h"

#define AHEAD 16u
#define HASH_BLOCK 64u

typedef struct pending {
    uint64_t i, j;
    uint32_t fp;
} pending;

static inline void stage(const nidus_table *t, uint64_t hash, pending *p)
{
    nidus_table_locate(t, hash, &p->i, &p->fp);
    p->j = nidus_table_alt(t, p->i, p->fp);
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

void nidus_cuckoo_contains_many_hash(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n, bool *out)
{
    if (cf->loader) {
        for (size_t k = 0; k < n; k++)
            out[k] = false;
        return;
    }
    for (unsigned t = 0; t < cf->ntables; t++)
        probe_table(&cf->tables[t], hashes, n, out, t > 0);
}

/* Adds go through nidus_cuckoo_add_hash one by one (free slots in every table, kicks, growth: the same
 * results as single calls); the batch only prefetches the newest table's buckets of the keys ahead. */
nidus_status nidus_cuckoo_add_many_hash(nidus_cuckoo *cf, const uint64_t *hashes, size_t n, size_t *added)
{
    size_t done = 0;
    nidus_status st = nidus_cuckoo_writable(cf) ? NIDUS_OK : NIDUS_ERR_READ_ONLY;
    pending p;
    for (size_t k = 0; k < AHEAD && k < n && !st; k++)
        stage(&cf->tables[cf->ntables - 1], hashes[k], &p);
    for (; done < n && !st; done++) {
        if (done + AHEAD < n)
            stage(&cf->tables[cf->ntables - 1], hashes[done + AHEAD], &p);
        if ((st = nidus_cuckoo_add_hash(cf, hashes[done])))
            break;
    }
    if (added)
        *added = done;
    return st;
}

/* The key variants hash a block at a time into a local array and hand it to the hash variants. */
void nidus_cuckoo_contains_many(const nidus_cuckoo *cf, const void *const *keys, const size_t *lens, size_t n,
                                bool *out)
{
    uint64_t hashes[HASH_BLOCK];
    for (size_t base = 0; base < n; base += HASH_BLOCK) {
        size_t m = n - base < HASH_BLOCK ? n - base : HASH_BLOCK;
        for (size_t k = 0; k < m; k++)
            hashes[k] = nidus_hash_bytes(keys[base + k], lens[base + k], cf->seed);
        nidus_cuckoo_contains_many_hash(cf, hashes, m, out + base);
    }
}

nidus_status nidus_cuckoo_add_many(nidus_cuckoo *cf, const void *const *keys, const size_t *lens, size_t n,
                                   size_t *added)
{
    uint64_t hashes[HASH_BLOCK];
    size_t total = 0;
    nidus_status st = NIDUS_OK;
    for (size_t base = 0; base < n && !st; base += HASH_BLOCK) {
        size_t m = n - base < HASH_BLOCK ? n - base : HASH_BLOCK, block_added = 0;
        for (size_t k = 0; k < m; k++)
            hashes[k] = nidus_hash_bytes(keys[base + k], lens[base + k], cf->seed);
        st = nidus_cuckoo_add_many_hash(cf, hashes, m, &block_added);
        total += block_added;
    }
    if (added)
        *added = total;
    return st;
}

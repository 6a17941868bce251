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

void nidus_cuckoo_contains_many_hash(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n, bool *out)
{
    const nidus_table *t = &cf->table;
    pending ring[AHEAD];
    size_t k = 0;
    for (; k < n && k < AHEAD; k++)
        stage(t, hashes[k], &ring[k]);
    for (size_t done = 0; done < n; done++) {
        const pending *p = &ring[done % AHEAD];
        out[done] = nidus_table_contains(t, p->i, p->j, p->fp);
        if (k < n) {
            stage(t, hashes[k], &ring[k % AHEAD]);
            k++;
        }
    }
}

nidus_status nidus_cuckoo_add_many_hash(nidus_cuckoo *cf, const uint64_t *hashes, size_t n, size_t *added)
{
    nidus_table *t = &cf->table;
    pending ring[AHEAD];
    size_t k = 0, done = 0;
    nidus_status st = NIDUS_OK;
    for (; k < n && k < AHEAD; k++)
        stage(t, hashes[k], &ring[k]);
    for (; done < n; done++) {
        const pending *p = &ring[done % AHEAD];
        st = nidus_table_add(t, &cf->alloc, p->i, p->fp);
        if (st)
            break;
        if (k < n) {
            stage(t, hashes[k], &ring[k % AHEAD]);
            k++;
        }
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

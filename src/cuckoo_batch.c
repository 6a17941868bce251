/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched cuckoo filter calls: hash ahead, prefetch ahead, then probe.
 *
 * A lookup is two dependent-free memory reads; one at a time, each waits for its own cache misses. Here the
 * buckets of key k + AHEAD are requested while key k is probed, so up to 2 * AHEAD misses are in flight.
 * AHEAD = 16 keeps 32 lines in flight, above what one core can track, and the ring fits in registers' reach.
 *
 * A one-table filter of a common shape (t->fast) goes by blocks of FAST_BLOCK keys instead: hash, locate and
 * prefetch the whole block, then probe it. Two plain loops, no ring to index, and by the time the first key
 * is probed its lines have had the whole block's staging to arrive. */
#include "cuckoo_dispatch.h"

#define AHEAD 16u
#define HASH_BLOCK 64u
#define FAST_BLOCK 32u

/* The cache lines a one-word bucket read touches (8 bytes from the bucket's first byte). */
static inline void prefetch_word(const nidus_table *t, uint64_t i)
{
    const uint8_t *p = t->data + i * t->bucket_bytes;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 7);
}

/* Probes a block of at most FAST_BLOCK located keys (fp[k] in buckets i[k], j[k]) of a t->fast table. */
static inline void probe_fast_block(const nidus_table *t, const uint64_t *i, const uint64_t *j, const uint32_t *fp,
                                    size_t m, bool *out)
{
    if (t->fast == NIDUS_FAST_PLAIN)
        for (size_t k = 0; k < m; k++)
            out[k] = nidus_table_plain_probe(t, i[k], j[k], fp[k]);
    else
        for (size_t k = 0; k < m; k++)
            out[k] = nidus_table_semi_probe(t, i[k], j[k], fp[k]);
}

static inline __attribute__((always_inline)) void contains_fast_hashes(const nidus_table *t, const uint64_t *hashes,
                                                                      size_t n, bool *out)
{
    uint64_t i[FAST_BLOCK], j[FAST_BLOCK];
    uint32_t fp[FAST_BLOCK];
    for (size_t base = 0; base < n; base += FAST_BLOCK) {
        size_t m = n - base < FAST_BLOCK ? n - base : FAST_BLOCK;
        for (size_t k = 0; k < m; k++) {
            fp[k] = nidus_table_fast_locate(t, hashes[base + k], &i[k], &j[k]);
            prefetch_word(t, i[k]);
            prefetch_word(t, j[k]);
        }
        probe_fast_block(t, i, j, fp, m, out + base);
    }
}

static inline __attribute__((always_inline)) void contains_fast_keys(const nidus_cuckoo *cf, const nidus_table *t,
                                                                    const void *const *keys, const size_t *lens,
                                                                    size_t n, bool *out)
{
    uint64_t i[FAST_BLOCK], j[FAST_BLOCK];
    uint32_t fp[FAST_BLOCK];
    for (size_t base = 0; base < n; base += FAST_BLOCK) {
        size_t m = n - base < FAST_BLOCK ? n - base : FAST_BLOCK;
        for (size_t k = 0; k < m; k++) {
            const void *key = keys[base + k];
            size_t len = lens[base + k];
            uint64_t h = len == 8 ? nidus_hash8(key, cf->hash8_flip) : nidus_hash_bytes(key, len, cf->seed);
            fp[k] = nidus_table_fast_locate(t, h, &i[k], &j[k]);
            prefetch_word(t, i[k]);
            prefetch_word(t, j[k]);
        }
        probe_fast_block(t, i, j, fp, m, out + base);
    }
}

/* Both, compiled once per instruction set (isa_impl.h); the table's isa picks. */
static void fast_hashes_base(const nidus_table *t, const uint64_t *hashes, size_t n, bool *out)
{
    contains_fast_hashes(t, hashes, n, out);
}
static void fast_keys_base(const nidus_cuckoo *cf, const nidus_table *t, const void *const *keys, const size_t *lens,
                           size_t n, bool *out)
{
    contains_fast_keys(cf, t, keys, lens, n, out);
}
#if NIDUS_HAVE_ISA_V3
static NIDUS_TARGET_V3 void fast_hashes_v3(const nidus_table *t, const uint64_t *hashes, size_t n, bool *out)
{
    contains_fast_hashes(t, hashes, n, out);
}
static NIDUS_TARGET_V3 void fast_keys_v3(const nidus_cuckoo *cf, const nidus_table *t, const void *const *keys,
                                         const size_t *lens, size_t n, bool *out)
{
    contains_fast_keys(cf, t, keys, lens, n, out);
}
#else
#define fast_hashes_v3 fast_hashes_base
#define fast_keys_v3 fast_keys_base
#endif

/* A one-table filter whose table has a fast kernel (its dispatch byte says so): the block path above. */
static inline const nidus_table *fast_table(const nidus_cuckoo *cf)
{
    return cf->dispatch >= NIDUS_DISPATCH_PLAIN ? cf->tables : NULL;
}

static inline bool fast_v3(const nidus_cuckoo *cf) { return cf->dispatch & 1; }

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

void nidus_full_contains_many_hash(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n, bool *out)
{
    const nidus_table *fast = fast_table(cf);
    if (fast) {
        (fast_v3(cf) ? fast_hashes_v3 : fast_hashes_base)(fast, hashes, n, out);
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

/* Adds go through nidus_full_add_hash one by one (free slots in every table, kicks, growth: the same
 * results as single calls); the batch only prefetches the newest table's buckets of the keys ahead. */
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
        if ((st = nidus_full_add_hash(cf, hashes[done])))
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
        (fast_v3(cf) ? fast_keys_v3 : fast_keys_base)(cf, fast, keys, lens, n, out);
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

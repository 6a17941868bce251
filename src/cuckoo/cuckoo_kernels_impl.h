/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the cuckoo kernels (cuckoo_kernels.h) as a template, compiled once per instruction set.
 *
 * cuckoo_kernels.c includes this file once per copy, with NIDUS_ISA set to the copy's suffix (base, v3) and
 * NIDUS_ISA_TARGET to its function attribute (isa_impl.h): every function below the shared part is defined
 * under the name NIDUS_ISA_FN(name), so one source gives every copy, with no wrapper written by hand. The
 * shared part (always-inline helpers) is compiled into each copy where it is inlined.
 *
 * A single add or lookup at 10M items is bound by how many fit in the core's window while their buckets are
 * read, so every instruction counts: the v3 copy shifts by a table's field without the shift-count register
 * and makes fewer moves. Batched lookups of a one-table filter with a fast kernel go by blocks of
 * NIDUS_KERNEL_BLOCK keys: hash, locate and prefetch the whole block, then probe it. Two plain loops, no ring
 * to index, and by the time the first key is probed its lines have had the whole block's staging to arrive. */
#ifndef NIDUS_SRC_CUCKOO_KERNELS_SHARED
#define NIDUS_SRC_CUCKOO_KERNELS_SHARED

#include "cuckoo_add_impl.h"
#include "cuckoo_kernels.h"

#define NIDUS_KERNEL_BLOCK 32u

/* Any filter: every table from the oldest (none while loading); one table asks its kernel, then its map. */
static inline __attribute__((always_inline)) bool contains_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    if (cf->loader)
        return false;
    if (cf->ntables == 1)
        return nidus_table_lookup(cf->tables, hash);
    for (unsigned k = 0; k < cf->ntables; k++)
        if (nidus_table_lookup(&cf->tables[k], hash))
            return true;
    return false;
}

static inline __attribute__((always_inline)) uint64_t count_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t n = 0;
    if (cf->loader)
        return 0;
    for (unsigned k = 0; k < cf->ntables; k++) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&cf->tables[k], hash, &i, &fp);
        n += nidus_table_count_pair(&cf->tables[k], i, fp);
    }
    return n;
}

/* XXH3 of a short key; an 8-byte key (the common case: integers, hashes) with the seed's part precomputed. */
static inline __attribute__((always_inline)) uint64_t hash_short(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return len == 8 ? nidus_hash8(key, cf->hash8_flip) : nidus_hash_short(key, len, cf->seed);
}

/* The put of a one-table filter's fast kernel (`fast`: t->fast, a constant at every call). */
static inline __attribute__((always_inline)) bool put_fast(nidus_table *t, uint64_t i, uint64_t j, uint32_t fp,
                                                           unsigned fast)
{
    return fast == NIDUS_FAST_SEMI    ? nidus_table_semi_put_pair(t, i, j, fp)
           : fast == NIDUS_FAST_PLAIN ? nidus_table_word_put_pair(t, i, j, fp)
                                      : nidus_table_bits_put_pair(t, i, j, fp, true);
}

/* The add of a one-table filter with a fast kernel: both buckets read with one load each, the item put into the
 * emptier one with one store; both full (or a duplicate that fills its pair) is a tail call to the slow path.
 * `fast` (NIDUS_FAST_*) is a constant at every call, so each caller compiles one kernel. */
static inline __attribute__((always_inline)) nidus_status add_one_word(nidus_cuckoo *cf, uint64_t hash, unsigned fast)
{
    nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
    if (!put_fast(t, i, j, fp, fast))
        return nidus_full_add_slow(cf, hash);
    t->occupied++;
    return NIDUS_OK;
}

static inline __attribute__((always_inline)) bool probe_fast(const nidus_table *t, uint64_t i, uint64_t j,
                                                             uint32_t fp, unsigned fast)
{
    return fast == NIDUS_FAST_PLAIN   ? nidus_table_plain_probe(t, i, j, fp)
           : fast == NIDUS_FAST_SEMI ? nidus_table_semi_probe(t, i, j, fp)
                                     : nidus_table_bits_probe(t, i, j, fp);
}

/* Batched lookups in a t->fast table, a block at a time: hash (`by_key`: keys[] and lens[], else hashes[]) and
 * locate the block's keys and prefetch their buckets, then probe them. `fast` (t->fast) and `by_key` are
 * constants at every call, so each compiles one loop without a test of the shape. */
static inline __attribute__((always_inline)) void contains_blocks(const nidus_cuckoo *cf, const nidus_table *t,
                                                                 unsigned fast, bool by_key, const uint64_t *hashes,
                                                                 const void *const *keys, const size_t *lens,
                                                                 size_t n, bool *out)
{
    uint64_t i[NIDUS_KERNEL_BLOCK], j[NIDUS_KERNEL_BLOCK];
    uint32_t fp[NIDUS_KERNEL_BLOCK];
    for (size_t base = 0; base < n; base += NIDUS_KERNEL_BLOCK) {
        size_t m = n - base < NIDUS_KERNEL_BLOCK ? n - base : NIDUS_KERNEL_BLOCK;
        for (size_t k = 0; k < m; k++) {
            uint64_t h;
            if (!by_key) {
                h = hashes[base + k];
            } else {
                const void *key = keys[base + k];
                size_t len = lens[base + k];
                h = len == 8 ? nidus_hash8(key, cf->hash8_flip) : nidus_hash_bytes(key, len, cf->seed);
            }
            fp[k] = nidus_table_fast_locate(t, h, &i[k], &j[k]);
            nidus_table_prefetch_word(t, i[k], fast);
            nidus_table_prefetch_word(t, j[k], fast);
        }
        for (size_t k = 0; k < m; k++)
            out[base + k] = probe_fast(t, i[k], j[k], fp[k], fast);
    }
}

static inline __attribute__((always_inline)) void contains_fast(const nidus_cuckoo *cf, bool by_key,
                                                               const uint64_t *hashes, const void *const *keys,
                                                               const size_t *lens, size_t n, bool *out)
{
    const nidus_table *t = cf->tables;
    if (t->fast == NIDUS_FAST_PLAIN)
        contains_blocks(cf, t, NIDUS_FAST_PLAIN, by_key, hashes, keys, lens, n, out);
    else if (t->fast == NIDUS_FAST_PLAIN_BITS)
        contains_blocks(cf, t, NIDUS_FAST_PLAIN_BITS, by_key, hashes, keys, lens, n, out);
    else
        contains_blocks(cf, t, NIDUS_FAST_SEMI, by_key, hashes, keys, lens, n, out);
}

/* Batched adds of a writable one-table filter with a fast kernel, a block at a time: locate the block's keys and
 * prefetch their buckets, then put each as add_one_word does (the slow path when both buckets are full). Stops
 * after a slow path that changed the dispatch byte (a stash entry, growth: the kernel no longer serves the
 * filter) or failed; returns how many adds it made, *st the failure's status. */
static inline __attribute__((always_inline)) size_t add_blocks(nidus_cuckoo *cf, unsigned fast,
                                                              const uint64_t *hashes, size_t n, nidus_status *st)
{
    nidus_table *t = cf->tables;
    unsigned char byte = *(const unsigned char *)cf;
    uint64_t i[NIDUS_KERNEL_BLOCK], j[NIDUS_KERNEL_BLOCK];
    uint32_t fp[NIDUS_KERNEL_BLOCK];
    *st = NIDUS_OK;
    for (size_t base = 0; base < n; base += NIDUS_KERNEL_BLOCK) {
        size_t m = n - base < NIDUS_KERNEL_BLOCK ? n - base : NIDUS_KERNEL_BLOCK;
        for (size_t k = 0; k < m; k++) {
            fp[k] = nidus_table_fast_locate(t, hashes[base + k], &i[k], &j[k]);
            nidus_table_prefetch_word(t, i[k], fast);
            nidus_table_prefetch_word(t, j[k], fast);
        }
        for (size_t k = 0; k < m; k++) {
            if (put_fast(t, i[k], j[k], fp[k], fast)) {
                t->occupied++;
                continue;
            }
            *st = nidus_full_add_slow(cf, hashes[base + k]);
            if (*st)
                return base + k;
            if (*(const unsigned char *)cf != byte)
                return base + k + 1;
        }
    }
    return n;
}

#endif /* the shared part */

#if !defined(NIDUS_ISA) || !defined(NIDUS_ISA_TARGET)
#error "define NIDUS_ISA and NIDUS_ISA_TARGET before including cuckoo_kernels_impl.h"
#endif

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_plain_key)(const nidus_cuckoo *cf, const void *key, size_t len)
{
    const nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash_short(cf, key, len), &i, &j);
    return nidus_table_plain_probe(t, i, j, fp);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_semi_key)(const nidus_cuckoo *cf, const void *key, size_t len)
{
    const nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash_short(cf, key, len), &i, &j);
    return nidus_table_semi_probe(t, i, j, fp);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_bits_key)(const nidus_cuckoo *cf, const void *key, size_t len)
{
    const nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash_short(cf, key, len), &i, &j);
    return nidus_table_bits_probe(t, i, j, fp);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_bits_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    const nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
    return nidus_table_bits_probe(t, i, j, fp);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_plain_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    const nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
    return nidus_table_plain_probe(t, i, j, fp);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_semi_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    const nidus_table *t = cf->tables;
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
    return nidus_table_semi_probe(t, i, j, fp);
}

/* Lookups of the filters the inline path serves read the published view (cuckoo_filter.h) with the inline
 * header's own code, compiled here per copy: one load less than through the table struct, and no test for
 * offsets that need reducing (those filters have none). */
NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_view_plain_key)(const nidus_cuckoo *cf, const void *key, size_t len)
{
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(cf);
    return nidus_cuckoo_view_plain_contains(v, len == 8 ? nidus_hash8(key, v->hash8_flip)
                                                        : nidus_hash_short(key, len, v->seed));
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_view_semi_key)(const nidus_cuckoo *cf, const void *key, size_t len)
{
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(cf);
    return nidus_cuckoo_view_semi_contains(v, len == 8 ? nidus_hash8(key, v->hash8_flip)
                                                       : nidus_hash_short(key, len, v->seed));
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_view_plain_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    return nidus_cuckoo_view_plain_contains(nidus_cuckoo_view_of(cf), hash);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_view_semi_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    return nidus_cuckoo_view_semi_contains(nidus_cuckoo_view_of(cf), hash);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_kernel_add_plain_key)(nidus_cuckoo *cf, const void *key, size_t len)
{
    return add_one_word(cf, hash_short(cf, key, len), NIDUS_FAST_PLAIN);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_kernel_add_semi_key)(nidus_cuckoo *cf, const void *key, size_t len)
{
    return add_one_word(cf, hash_short(cf, key, len), NIDUS_FAST_SEMI);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_kernel_add_bits_key)(nidus_cuckoo *cf, const void *key, size_t len)
{
    return add_one_word(cf, hash_short(cf, key, len), NIDUS_FAST_PLAIN_BITS);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_kernel_add_plain_hash)(nidus_cuckoo *cf, uint64_t hash)
{
    return add_one_word(cf, hash, NIDUS_FAST_PLAIN);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_kernel_add_semi_hash)(nidus_cuckoo *cf, uint64_t hash)
{
    return add_one_word(cf, hash, NIDUS_FAST_SEMI);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_kernel_add_bits_hash)(nidus_cuckoo *cf, uint64_t hash)
{
    return add_one_word(cf, hash, NIDUS_FAST_PLAIN_BITS);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_kernel_contains_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    return contains_hash(cf, hash);
}

NIDUS_ISA_TARGET uint64_t NIDUS_ISA_FN(nidus_kernel_count_hash)(const nidus_cuckoo *cf, uint64_t hash)
{
    return count_hash(cf, hash);
}

NIDUS_ISA_TARGET void NIDUS_ISA_FN(nidus_kernel_many_hash)(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n,
                                                           bool *out)
{
    contains_fast(cf, false, hashes, NULL, NULL, n, out);
}

NIDUS_ISA_TARGET void NIDUS_ISA_FN(nidus_kernel_many_key)(const nidus_cuckoo *cf, const void *const *keys,
                                                          const size_t *lens, size_t n, bool *out)
{
    contains_fast(cf, true, NULL, keys, lens, n, out);
}

NIDUS_ISA_TARGET size_t NIDUS_ISA_FN(nidus_kernel_add_many_hash)(nidus_cuckoo *cf, const uint64_t *hashes, size_t n,
                                                                 nidus_status *st)
{
    unsigned fast = cf->tables->fast;
    if (fast == NIDUS_FAST_PLAIN)
        return add_blocks(cf, NIDUS_FAST_PLAIN, hashes, n, st);
    if (fast == NIDUS_FAST_PLAIN_BITS)
        return add_blocks(cf, NIDUS_FAST_PLAIN_BITS, hashes, n, st);
    return add_blocks(cf, NIDUS_FAST_SEMI, hashes, n, st);
}

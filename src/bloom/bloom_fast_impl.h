/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the Bloom entry points' fast case — one split layer of k = 8, not loading (the LOOKUP / ADD dispatch
 * states) — written once and compiled once per instruction set: bloom.c instantiates it with the portable split
 * probes, bloom_simd.c with the AVX2 ones inside x86-64-v3 functions (isa_impl.h). The probe is a constant
 * function pointer argument of an always-inline function, so each copy inlines its own probe. The state was
 * chosen when the filter last changed (nidus_bloom_refresh_dispatch) and picked this copy, so nothing here tests
 * it again; everything else is a call out of line, so the fast case needs no stack frame: per lookup it is the
 * hash, a multiply for the block and the probe. By key, 8-byte keys take XXH3's 4-8 byte path with the seed's
 * part precomputed (hash8_flip), other keys of 4 to 16 bytes its short paths inline (the 0-3 byte path is a
 * call, which would cost every key a stack frame). */
#ifndef NIDUS_SRC_BLOOM_FAST_IMPL_H
#define NIDUS_SRC_BLOOM_FAST_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "hash_impl.h"

/* The probes of the fast case: k = 8 (the LOOKUP state is only chosen for it), one round of split_round. */
typedef bool (*nidus_split_has_fn)(const uint8_t *block, uint64_t x);
typedef bool (*nidus_split_set_fn)(uint8_t *block, uint64_t x);

#define NIDUS_BLOOM_INLINE static inline __attribute__((always_inline))

/* The block of the first layer that a hash probes (layer 0's hash is the key's own). */
NIDUS_BLOOM_INLINE uint8_t *nidus_bloom_fast_block(const nidus_bloom *bf, uint64_t hash)
{
    return bf->first.data + nidus_reduce(hash, bf->first.size) * NIDUS_BLOCK_BYTES;
}

/* The hash of a key the fast case takes (4 to 16 bytes) into *hash; false for the others. */
NIDUS_BLOOM_INLINE bool nidus_bloom_fast_key_hash(const nidus_bloom *bf, const void *key, size_t len, uint64_t *hash)
{
    if (len == 8)
        *hash = nidus_hash8(key, bf->hash8_flip);
    else if (len - 4 <= 12)
        *hash = nidus_hash_short(key, len, nidus_bloom_seed(bf));
    else
        return false;
    return true;
}

NIDUS_BLOOM_INLINE bool nidus_bloom_fast_contains_hash(const nidus_bloom *bf, uint64_t hash, nidus_split_has_fn has)
{
    return has(nidus_bloom_fast_block(bf, hash), hash);
}

NIDUS_BLOOM_INLINE bool nidus_bloom_fast_contains_key(const nidus_bloom *bf, const void *key, size_t len,
                                                      nidus_split_has_fn has)
{
    uint64_t hash;
    if (nidus_bloom_fast_key_hash(bf, key, len, &hash))
        return has(nidus_bloom_fast_block(bf, hash), hash);
    return nidus_bloom_contains_key_any(bf, key, len);
}

/* Sets the key's bits; only a key with a bit unset is new (counted, *added). */
NIDUS_BLOOM_INLINE nidus_status nidus_bloom_fast_set(nidus_bloom *bf, uint64_t hash, bool *added,
                                                     nidus_split_set_fn set)
{
    bool fresh = set(nidus_bloom_fast_block(bf, hash), hash);
    bf->first.items += fresh;
    if (added)
        *added = fresh;
    return NIDUS_OK;
}

/* Adds (the ADD state): while the layer has room; a full one is the general path's (growth, NIDUS_ERR_FULL). */
NIDUS_BLOOM_INLINE nidus_status nidus_bloom_fast_add_hash(nidus_bloom *bf, uint64_t hash, bool *added,
                                                          nidus_split_set_fn set)
{
    if (bf->first.items < bf->first.capacity)
        return nidus_bloom_fast_set(bf, hash, added, set);
    return nidus_bloom_add_any(bf, hash, added);
}

NIDUS_BLOOM_INLINE nidus_status nidus_bloom_fast_add_key(nidus_bloom *bf, const void *key, size_t len, bool *added,
                                                         nidus_split_set_fn set)
{
    uint64_t hash;
    if (bf->first.items < bf->first.capacity && nidus_bloom_fast_key_hash(bf, key, len, &hash))
        return nidus_bloom_fast_set(bf, hash, added, set);
    return nidus_bloom_add_key_any(bf, key, len, added);
}

/* Batched calls: the blocks of the keys NIDUS_BLOOM_AHEAD places on are requested while this one is probed. */
#define NIDUS_BLOOM_AHEAD 16u

NIDUS_BLOOM_INLINE void nidus_bloom_fast_contains_many(const nidus_bloom *bf, const uint64_t *hashes, size_t n,
                                                       bool *out, nidus_split_has_fn has)
{
    for (size_t k = 0; k < n && k < NIDUS_BLOOM_AHEAD; k++)
        __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k]));
    for (size_t k = 0; k < n; k++) {
        if (k + NIDUS_BLOOM_AHEAD < n)
            __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k + NIDUS_BLOOM_AHEAD]));
        out[k] = has(nidus_bloom_fast_block(bf, hashes[k]), hashes[k]);
    }
}

/* Adds hashes[0..n) in order while the layer has room (the ADD state); returns how many it added. */
NIDUS_BLOOM_INLINE size_t nidus_bloom_fast_add_many(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh,
                                                    nidus_split_set_fn set)
{
    uint64_t items = bf->first.items, capacity = bf->first.capacity;
    for (size_t k = 0; k < n && k < NIDUS_BLOOM_AHEAD; k++)
        __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k]), 1);
    size_t k = 0;
    for (; k < n && items < capacity; k++) {
        if (k + NIDUS_BLOOM_AHEAD < n)
            __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k + NIDUS_BLOOM_AHEAD]), 1);
        bool f = set(nidus_bloom_fast_block(bf, hashes[k]), hashes[k]);
        items += f;
        if (fresh)
            fresh[k] = f;
    }
    bf->first.items = items;
    return k;
}

#endif

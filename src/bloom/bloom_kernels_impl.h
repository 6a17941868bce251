/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the Bloom kernels (bloom_kernels.h) as a template, compiled once per instruction set.
 *
 * bloom_kernels.c includes this file once per copy through isa_each.h, with NIDUS_ISA set to the copy's suffix
 * (base, v3), NIDUS_ISA_TARGET to its function attribute (isa_impl.h) and NIDUS_ISA_IS_V3 to whether its split
 * probes use AVX2: every function below the shared part is defined under the name NIDUS_ISA_FN(name), so one source
 * gives every copy, with no wrapper written by hand, as the cuckoo kernels (cuckoo_kernels_impl.h) do.
 *
 * The fast case is one split layer of k = 8, not loading (the LOOKUP / ADD dispatch states). The state was
 * chosen when the filter last changed (nidus_bloom_refresh_dispatch) and picked this copy, so nothing here tests
 * it again; everything else is a call out of line, so the fast case needs no stack frame: per lookup it is the
 * hash, a multiply for the block and the probe. By key, 8-byte keys take XXH3's 4-8 byte path with the seed's
 * part precomputed (hash8_flip), other keys of 4 to 16 bytes its short paths inline (the 0-3 byte path is a
 * call, which would cost every key a stack frame). The k = 8 probe with AVX2 is the inline header's
 * (nidus/inline_bloom.h), the portable one bloom_block_impl.h's; other k take a probe out of line. */
#ifndef NIDUS_SRC_BLOOM_KERNELS_SHARED
#define NIDUS_SRC_BLOOM_KERNELS_SHARED

#include "bloom_block_impl.h"
#include "bloom_filter.h"
#include "bloom_kernels.h"
#include "hash_impl.h"

#define NIDUS_BLOOM_INLINE static inline __attribute__((always_inline))

/* Batched calls: the blocks of the keys NIDUS_BLOOM_AHEAD places on are requested while this one is probed. */
#define NIDUS_BLOOM_AHEAD 16u

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

/* The block of a blocked layer that a hash probes. */
static inline uint64_t nidus_bloom_layer_block(const nidus_bloom_layer *l, unsigned i, uint64_t hash)
{
    return l->layout == NIDUS_LAYER_SPLIT ? nidus_reduce(nidus_layer_hash(hash, i), l->size)
                                          : nidus_probe_of(hash, i, l->size).block;
}

#if NIDUS_HAVE_ISA_V3
/* The masks of round r in words [0, lanes): the inline header's masks of the round's value, the other words
 * cleared. */
static inline NIDUS_INLINE_BLOOM_AVX2 void nidus_bloom_round_masks(uint64_t x, unsigned r, unsigned lanes,
                                                                   __m256i *lo, __m256i *hi)
{
    nidus_inline_bloom_masks_of(nidus_split_round(x, r), lo, hi);
    if (lanes < 8) {
        __m256i n = _mm256_set1_epi64x(lanes);
        *lo = _mm256_and_si256(*lo, _mm256_cmpgt_epi64(n, _mm256_setr_epi64x(0, 1, 2, 3)));
        *hi = _mm256_and_si256(*hi, _mm256_cmpgt_epi64(n, _mm256_setr_epi64x(4, 5, 6, 7)));
    }
}

/* Any k with AVX2, out of line (the general path): its loop keeps vectors on the stack. */
static __attribute__((noinline)) NIDUS_INLINE_BLOOM_AVX2 bool nidus_bloom_split_has_rounds(const uint8_t *block,
                                                                                            uint64_t x, unsigned k)
{
    __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)block);
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(block + 32));
    __m256i missing = _mm256_setzero_si256();
    for (unsigned r = 0; r * 8 < k; r++) {
        __m256i lo, hi;
        nidus_bloom_round_masks(x, r, k - r * 8, &lo, &hi);
        missing = _mm256_or_si256(missing, _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi)));
    }
    return _mm256_testz_si256(missing, missing);
}

static __attribute__((noinline)) NIDUS_INLINE_BLOOM_AVX2 bool nidus_bloom_split_set_rounds(uint8_t *block,
                                                                                            uint64_t x, unsigned k)
{
    __m256i set0 = _mm256_setzero_si256(), set1 = _mm256_setzero_si256();
    for (unsigned r = 0; r * 8 < k; r++) {
        __m256i lo, hi;
        nidus_bloom_round_masks(x, r, k - r * 8, &lo, &hi);
        set0 = _mm256_or_si256(set0, lo);
        set1 = _mm256_or_si256(set1, hi);
    }
    return nidus_inline_bloom_set_masks(block, set0, set1);
}
#endif

/* The portable probes for any k, out of line: the general path's common path stays a few instructions. */
static __attribute__((noinline)) bool nidus_bloom_split_has_portable(const uint8_t *block, uint64_t x, unsigned k)
{
    return nidus_split_has(block, x, k);
}

static __attribute__((noinline)) bool nidus_bloom_split_set_portable(uint8_t *block, uint64_t x, unsigned k)
{
    return nidus_split_set(block, x, k);
}

#endif /* the shared part */

#if !defined(NIDUS_ISA) || !defined(NIDUS_ISA_TARGET) || !defined(NIDUS_ISA_IS_V3)
#error "include bloom_kernels_impl.h through isa_each.h (NIDUS_ISA, NIDUS_ISA_TARGET, NIDUS_ISA_IS_V3)"
#endif

/* This copy's split probes: k = 8 inlined, any k out of line. */
#undef NIDUS_BLOOM_HAS8
#undef NIDUS_BLOOM_SET8
#undef NIDUS_BLOOM_HAS_K
#undef NIDUS_BLOOM_SET_K
#if NIDUS_ISA_IS_V3
#define NIDUS_BLOOM_HAS8(block, x) nidus_inline_bloom_probe(block, x)
#define NIDUS_BLOOM_SET8(block, x) nidus_inline_bloom_set(block, x)
#define NIDUS_BLOOM_HAS_K(block, x, k)                                                                         \
    ((k) == NIDUS_SPLIT_FAST_K ? nidus_inline_bloom_probe(block, x) : nidus_bloom_split_has_rounds(block, x, k))
#define NIDUS_BLOOM_SET_K(block, x, k)                                                                         \
    ((k) == NIDUS_SPLIT_FAST_K ? nidus_inline_bloom_set(block, x) : nidus_bloom_split_set_rounds(block, x, k))
#else
#define NIDUS_BLOOM_HAS8(block, x) nidus_split_has(block, x, NIDUS_SPLIT_FAST_K)
#define NIDUS_BLOOM_SET8(block, x) nidus_split_set(block, x, NIDUS_SPLIT_FAST_K)
#define NIDUS_BLOOM_HAS_K(block, x, k) nidus_bloom_split_has_portable(block, x, k)
#define NIDUS_BLOOM_SET_K(block, x, k) nidus_bloom_split_set_portable(block, x, k)
#endif

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_bloom_split_has)(const uint8_t *block, uint64_t x, unsigned k)
{
    return NIDUS_BLOOM_HAS_K(block, x, k);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_bloom_split_set)(uint8_t *block, uint64_t x, unsigned k)
{
    return NIDUS_BLOOM_SET_K(block, x, k);
}

/* ---- the general path */

NIDUS_ISA_TARGET static bool NIDUS_ISA_FN(layer_has)(const nidus_bloom_layer *l, unsigned i, uint64_t hash)
{
    uint64_t x = nidus_layer_hash(hash, i);
    switch (l->layout) {
    case NIDUS_LAYER_SPLIT:
        return NIDUS_BLOOM_HAS_K(l->data + nidus_reduce(x, l->size) * NIDUS_BLOCK_BYTES, x, l->k);
    case NIDUS_LAYER_PLAIN:
        NIDUS_FOR_EACH_PLAIN_BIT(x, l->size, l->k, {
            if (!nidus_plain_get(l->data, bit))
                return false;
        });
        return true;
    default: {
        nidus_probe p = nidus_probe_of(hash, i, l->size);
        uint64_t mask[8];
        nidus_bloom_mask(&p, l->k, mask);
        return nidus_bloom_block_has(l->data + p.block * NIDUS_BLOCK_BYTES, mask);
    }
    }
}

/* Sets the key's probes in the layer; returns whether any was unset. Inlined into each add path (a call in the
 * one-layer add cost it 16 more instructions a key, callgrind). */
NIDUS_ISA_TARGET static inline __attribute__((always_inline)) bool NIDUS_ISA_FN(layer_set)(nidus_bloom_layer *l,
                                                                                           unsigned i, uint64_t hash)
{
    uint64_t x = nidus_layer_hash(hash, i);
    switch (l->layout) {
    case NIDUS_LAYER_SPLIT:
        return NIDUS_BLOOM_SET_K(l->data + nidus_reduce(x, l->size) * NIDUS_BLOCK_BYTES, x, l->k);
    case NIDUS_LAYER_PLAIN: {
        bool fresh = false;
        NIDUS_FOR_EACH_PLAIN_BIT(x, l->size, l->k, fresh |= nidus_plain_set(l->data, bit));
        return fresh;
    }
    default: {
        nidus_probe p = nidus_probe_of(hash, i, l->size);
        uint64_t mask[8];
        nidus_bloom_mask(&p, l->k, mask);
        return nidus_bloom_block_set(l->data + p.block * NIDUS_BLOCK_BYTES, mask);
    }
    }
}

/* A filter with `more`: loading, grown or mapped (apart, so that the one-layer case needs no stack frame). */
NIDUS_ISA_TARGET __attribute__((noinline)) static bool NIDUS_ISA_FN(contains_layers)(const nidus_bloom *bf,
                                                                                     uint64_t hash)
{
    if (bf->more->loader)
        return false;
    if (NIDUS_ISA_FN(layer_has)(&bf->first, 0, hash))
        return true;
    const nidus_bloom_layer *rest = bf->more->layers;
    for (unsigned i = 1; i < bf->nlayers; i++)
        if (NIDUS_ISA_FN(layer_has)(&rest[i - 1], i, hash))
            return true;
    return false;
}

NIDUS_ISA_TARGET __attribute__((noinline)) bool NIDUS_ISA_FN(nidus_bloom_kernel_contains_any)(const nidus_bloom *bf,
                                                                                              uint64_t hash)
{
    if (!bf->more) /* one layer, not loading: a compact filter's every lookup */
        return NIDUS_ISA_FN(layer_has)(&bf->first, 0, hash);
    return NIDUS_ISA_FN(contains_layers)(bf, hash);
}

NIDUS_ISA_TARGET __attribute__((noinline)) bool
NIDUS_ISA_FN(nidus_bloom_kernel_contains_key_any)(const nidus_bloom *bf, const void *key, size_t len)
{
    return NIDUS_ISA_FN(nidus_bloom_kernel_contains_any)(bf, nidus_bloom_hash(bf, key, len));
}

/* Adds to the newest layer `l` (number `last`), growing first when it is full and the key is not in it. */
NIDUS_ISA_TARGET static inline nidus_status NIDUS_ISA_FN(add_to_newest)(nidus_bloom *bf, nidus_bloom_layer *l,
                                                                        unsigned last, uint64_t hash, bool *added)
{
    if (l->items >= l->capacity) {
        if (NIDUS_ISA_FN(layer_has)(l, last, hash))
            return NIDUS_OK;
        nidus_status st = nidus_bloom_grow(bf);
        if (st)
            return st;
        last = bf->nlayers - 1u;
        l = nidus_bloom_layer_at(bf, last);
    }
    /* setting the newest layer's probes tells whether the key was there: any bit that was unset */
    if (NIDUS_ISA_FN(layer_set)(l, last, hash)) {
        l->items++;
        if (added)
            *added = true;
    }
    return NIDUS_OK;
}

/* A filter with `more`: loading, grown or mapped. */
NIDUS_ISA_TARGET __attribute__((noinline)) static nidus_status NIDUS_ISA_FN(add_layers)(nidus_bloom *bf, uint64_t hash,
                                                                                        bool *added)
{
    if (bf->more->loader)
        return NIDUS_ERR_READ_ONLY;
    unsigned last = bf->nlayers - 1u;
    if (last == 0) /* not reached: a one-layer filter with `more` is loading or a (read-only) view */
        return NIDUS_ISA_FN(add_to_newest)(bf, &bf->first, 0, hash, added);
    if (NIDUS_ISA_FN(layer_has)(&bf->first, 0, hash))
        return NIDUS_OK;
    nidus_bloom_layer *rest = bf->more->layers;
    for (unsigned i = 1; i < last; i++)
        if (NIDUS_ISA_FN(layer_has)(&rest[i - 1], i, hash))
            return NIDUS_OK;
    return NIDUS_ISA_FN(add_to_newest)(bf, &rest[last - 1], last, hash, added);
}

/* A filter without `more`: one layer, not loading (a compact filter's every add). */
NIDUS_ISA_TARGET __attribute__((noinline)) static nidus_status NIDUS_ISA_FN(add_first)(nidus_bloom *bf, uint64_t hash,
                                                                                       bool *added)
{
    return NIDUS_ISA_FN(add_to_newest)(bf, &bf->first, 0, hash, added);
}

/* Two tail calls, no stack frame: each case saves only the registers it uses. */
NIDUS_ISA_TARGET __attribute__((noinline)) nidus_status NIDUS_ISA_FN(nidus_bloom_kernel_add_any)(nidus_bloom *bf,
                                                                                                 uint64_t hash,
                                                                                                 bool *added)
{
    if (added)
        *added = false;
    if (bf->read_only)
        return NIDUS_ERR_READ_ONLY;
    return bf->more ? NIDUS_ISA_FN(add_layers)(bf, hash, added) : NIDUS_ISA_FN(add_first)(bf, hash, added);
}

NIDUS_ISA_TARGET __attribute__((noinline)) nidus_status
NIDUS_ISA_FN(nidus_bloom_kernel_add_key_any)(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    return NIDUS_ISA_FN(nidus_bloom_kernel_add_any)(bf, nidus_bloom_hash(bf, key, len), added);
}

NIDUS_ISA_TARGET void NIDUS_ISA_FN(nidus_bloom_kernel_contains_many_any)(const nidus_bloom *bf, const uint64_t *hashes,
                                                                         size_t n, bool *out)
{
    for (size_t k = 0; k < n; k++)
        out[k] = false;
    if (nidus_bloom_loader(bf))
        return;
    for (unsigned i = 0; i < bf->nlayers; i++) {
        const nidus_bloom_layer *l = nidus_bloom_layer_at(bf, i);
        if (l->layout == NIDUS_LAYER_PLAIN) { /* k lines a key: its own probes overlap already */
            for (size_t k = 0; k < n; k++)
                out[k] = out[k] || NIDUS_ISA_FN(layer_has)(l, i, hashes[k]);
            continue;
        }
        /* the blocks of the keys AHEAD places on are requested while this one is checked */
        for (size_t k = 0; k < n && k < NIDUS_BLOOM_AHEAD; k++)
            nidus_block_prefetch(l->data, nidus_bloom_layer_block(l, i, hashes[k]));
        for (size_t k = 0; k < n; k++) {
            if (k + NIDUS_BLOOM_AHEAD < n)
                nidus_block_prefetch(l->data, nidus_bloom_layer_block(l, i, hashes[k + NIDUS_BLOOM_AHEAD]));
            out[k] = out[k] || NIDUS_ISA_FN(layer_has)(l, i, hashes[k]);
        }
    }
}

/* ---- the fast case: one split layer of k = 8, not loading */

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_bloom_kernel_contains_hash)(const nidus_bloom *bf, uint64_t hash)
{
    return NIDUS_BLOOM_HAS8(nidus_bloom_fast_block(bf, hash), hash);
}

NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_bloom_kernel_contains_key)(const nidus_bloom *bf, const void *key, size_t len)
{
    uint64_t hash;
    if (nidus_bloom_fast_key_hash(bf, key, len, &hash))
        return NIDUS_BLOOM_HAS8(nidus_bloom_fast_block(bf, hash), hash);
    return NIDUS_ISA_FN(nidus_bloom_kernel_contains_key_any)(bf, key, len);
}

/* Sets the key's bits; only a key with a bit unset is new (counted, *added). */
NIDUS_ISA_TARGET static inline __attribute__((always_inline)) nidus_status NIDUS_ISA_FN(fast_set)(nidus_bloom *bf,
                                                                                                 uint64_t hash,
                                                                                                 bool *added)
{
    bool fresh = NIDUS_BLOOM_SET8(nidus_bloom_fast_block(bf, hash), hash);
    bf->first.items += fresh;
    if (added)
        *added = fresh;
    return NIDUS_OK;
}

/* Adds (the ADD state): while the layer has room; a full one is the general path's (growth, NIDUS_ERR_FULL). */
NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_bloom_kernel_add_hash)(nidus_bloom *bf, uint64_t hash, bool *added)
{
    if (bf->first.items < bf->first.capacity)
        return NIDUS_ISA_FN(fast_set)(bf, hash, added);
    return NIDUS_ISA_FN(nidus_bloom_kernel_add_any)(bf, hash, added);
}

NIDUS_ISA_TARGET nidus_status NIDUS_ISA_FN(nidus_bloom_kernel_add_key)(nidus_bloom *bf, const void *key, size_t len,
                                                                       bool *added)
{
    uint64_t hash;
    if (bf->first.items < bf->first.capacity && nidus_bloom_fast_key_hash(bf, key, len, &hash))
        return NIDUS_ISA_FN(fast_set)(bf, hash, added);
    return NIDUS_ISA_FN(nidus_bloom_kernel_add_key_any)(bf, key, len, added);
}

NIDUS_ISA_TARGET __attribute__((noinline)) void NIDUS_ISA_FN(nidus_bloom_kernel_contains_many)(const nidus_bloom *bf,
                                                                                               const uint64_t *hashes,
                                                                                               size_t n, bool *out)
{
    for (size_t k = 0; k < n && k < NIDUS_BLOOM_AHEAD; k++)
        __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k]));
    for (size_t k = 0; k < n; k++) {
        if (k + NIDUS_BLOOM_AHEAD < n)
            __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k + NIDUS_BLOOM_AHEAD]));
        out[k] = NIDUS_BLOOM_HAS8(nidus_bloom_fast_block(bf, hashes[k]), hashes[k]);
    }
}

/* Adds hashes[0..n) in order while the layer has room (the ADD state); returns how many it added. */
NIDUS_ISA_TARGET __attribute__((noinline)) size_t NIDUS_ISA_FN(nidus_bloom_kernel_add_many)(nidus_bloom *bf,
                                                                                            const uint64_t *hashes,
                                                                                            size_t n, bool *fresh)
{
    uint64_t items = bf->first.items, capacity = bf->first.capacity;
    for (size_t k = 0; k < n && k < NIDUS_BLOOM_AHEAD; k++)
        __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k]), 1);
    size_t k = 0;
    for (; k < n && items < capacity; k++) {
        if (k + NIDUS_BLOOM_AHEAD < n)
            __builtin_prefetch(nidus_bloom_fast_block(bf, hashes[k + NIDUS_BLOOM_AHEAD]), 1);
        bool f = NIDUS_BLOOM_SET8(nidus_bloom_fast_block(bf, hashes[k]), hashes[k]);
        items += f;
        if (fresh)
            fresh[k] = f;
    }
    bf->first.items = items;
    return k;
}

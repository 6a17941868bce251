/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the inline path of the scalable Bloom filter (nidus/inline.h; opt in with NIDUS_INLINE).
 *
 * A nidus_bloom begins with a published view, nidus_inline_bloom_view. Its tag says which of its fields hold and
 * what inline code may do with them; the library rewrites it whenever the filter's state changes (creation,
 * growth, clearing, decoding, mapping, the last chunk of a load). Inline code compares the tag once and
 * calls the library for any value it does not know, so a program built against this header stays correct
 * against any later library, whose filters it then serves through calls.
 *
 * Tag version 1 (NIDUS_INLINE_BLOOM_TAG_LOOKUP / _ADD) promises: the filter is one layer of `blocks` 64-byte
 * split blocks at `data`, 8 bits a key, not loading; a key's hash is XXH3-64 with the filter's seed, kept as
 * hash8_flip = nidus_inline_hash8_flip(seed); its block is the high 64 bits of hash * blocks; with v = hash *
 * 0x9E3779B97F4A7C15, bit (v >> (16 + 6w)) & 63 of the block's little-endian 64-bit word w (w = 0..7) is
 * set. _ADD also promises the filter is writable: an add of a key to a layer with items < capacity sets the
 * bits and counts the key in `items` when a bit was unset. nidus.h includes this header only under NIDUS_INLINE,
 * which also turns the four calls at the end into the inline ones; the library includes it for the view. */
#ifndef NIDUS_INLINE_BLOOM_H
#define NIDUS_INLINE_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bloom.h"
#include "inline_hash.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tag values of view version 1; NIDUS_INLINE_BLOOM_TAG_PRIVATE is the library's own bit, which checks ignore. */
#define NIDUS_INLINE_BLOOM_TAG_LOOKUP UINT32_C(0x4E420101) /* lookups inline; adds through the library */
#define NIDUS_INLINE_BLOOM_TAG_ADD UINT32_C(0x4E420103)    /* lookups and adds inline */
#define NIDUS_INLINE_BLOOM_TAG_PRIVATE UINT32_C(0x4)

#if defined(__GNUC__) || defined(__clang__)
/* The view is read (and counted in) by the caller's code and written by the library's through its own struct:
 * may_alias keeps the two correct even when they meet in one compilation (LTO). */
#define NIDUS_INLINE_BLOOM_MAY_ALIAS __attribute__((may_alias))
#define NIDUS_INLINE_BLOOM_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define NIDUS_INLINE_BLOOM_MAY_ALIAS
#define NIDUS_INLINE_BLOOM_LIKELY(x) (x)
#endif

/* The first 48 bytes of every nidus_bloom (version 1). Fields other than the tag mean something only under a
 * tag that says so; the private ones are the library's. */
typedef struct NIDUS_INLINE_BLOOM_MAY_ALIAS nidus_inline_bloom_view {
    uint32_t tag;
    uint32_t private_state;
    uint64_t hash8_flip; /* nidus_inline_hash8_flip(seed): the filter's seed */
    uint64_t blocks;     /* 64-byte blocks at data */
    uint64_t capacity;   /* keys the layer holds; inline adds only below it */
    uint64_t items;      /* keys added that set a bit (inline adds count here too) */
    uint8_t *data;
} nidus_inline_bloom_view;

/* The view of a filter (a cast: the view is the filter's first bytes). */
static inline const nidus_inline_bloom_view *nidus_inline_bloom_view_of(const nidus_bloom *filter)
{
    return (const nidus_inline_bloom_view *)(const void *)filter;
}

/* Whether inline code may look up in / add to the filter: one compare of its tag. */
static inline bool nidus_inline_bloom_can_look_up(const nidus_inline_bloom_view *v)
{
    return (v->tag & ~(NIDUS_INLINE_BLOOM_TAG_ADD ^ NIDUS_INLINE_BLOOM_TAG_LOOKUP ^ NIDUS_INLINE_BLOOM_TAG_PRIVATE)) ==
           NIDUS_INLINE_BLOOM_TAG_LOOKUP;
}

static inline bool nidus_inline_bloom_can_add(const nidus_inline_bloom_view *v)
{
    return (v->tag & ~NIDUS_INLINE_BLOOM_TAG_PRIVATE) == NIDUS_INLINE_BLOOM_TAG_ADD;
}

/* The high 64 bits of a * b. */
static inline uint64_t nidus_inline_bloom_mulhi64(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 nidus_inline_bloom_u128;
    return (uint64_t)(((nidus_inline_bloom_u128)a * b) >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t cross = ((al * bl) >> 32) + (uint32_t)(ah * bl) + al * bh;
    return ah * bh + ((ah * bl) >> 32) + (cross >> 32);
#endif
}

static inline void nidus_inline_bloom_store64(void *p, uint64_t v)
{
    v = NIDUS_INLINE_LE64(v);
    memcpy(p, &v, sizeof v);
}

/* The block a hash probes. */
static inline uint8_t *nidus_inline_bloom_block(const nidus_inline_bloom_view *v, uint64_t hash)
{
    return v->data + nidus_inline_bloom_mulhi64(hash, v->blocks) * 64u;
}

/* How the caller's code tests and sets a key's eight bits. With AVX2 in the caller's target (-mavx2, -march=...)
 * as the library's x86-64-v3 copy does it; on x86-64 without it, not at all: the scalar code below costs the
 * caller more than a call into the library's AVX2 copy (2.5-3x the time at 1M keys, eight loads against
 * two), so the calls stay the library's unless NIDUS_INLINE_BLOOM_PORTABLE asks for it; elsewhere (the library
 * has only the portable copy) the scalar code. */
#if defined(__AVX2__)
#define NIDUS_INLINE_BLOOM_PROBES 2 /* AVX2 */
#elif !defined(__x86_64__) || defined(NIDUS_INLINE_BLOOM_PORTABLE)
#define NIDUS_INLINE_BLOOM_PROBES 1 /* portable */
#else
#define NIDUS_INLINE_BLOOM_PROBES 0 /* library calls */
#endif

/* The AVX2 probes are the caller's when its target has AVX2. The library, built for its target's baseline,
 * compiles these same functions into its x86-64-v3 copy of the Bloom kernels: it defines
 * NIDUS_INLINE_BLOOM_AVX2 as its AVX2 target attribute before including this header. */
#if NIDUS_INLINE_BLOOM_PROBES == 2 && !defined(NIDUS_INLINE_BLOOM_AVX2)
#define NIDUS_INLINE_BLOOM_AVX2
#endif

#ifdef NIDUS_INLINE_BLOOM_AVX2
#include <immintrin.h>

/* The key's bit in each of a block's eight words as two 4-word masks, from v (hash * C for the eight bits the
 * view promises): field w of v is bits [16 + 6w, 22 + 6w), moved to the top by a left shift and down by 58. */
static inline NIDUS_INLINE_BLOOM_AVX2 void nidus_inline_bloom_masks_of(uint64_t v, __m256i *lo, __m256i *hi)
{
    const __m256i one = _mm256_set1_epi64x(1);
    __m256i vv = _mm256_set1_epi64x((long long)v);
    *lo = _mm256_sllv_epi64(one, _mm256_srli_epi64(_mm256_sllv_epi64(vv, _mm256_setr_epi64x(42, 36, 30, 24)), 58));
    *hi = _mm256_sllv_epi64(one, _mm256_srli_epi64(_mm256_sllv_epi64(vv, _mm256_setr_epi64x(18, 12, 6, 0)), 58));
}

static inline NIDUS_INLINE_BLOOM_AVX2 void nidus_inline_bloom_masks(uint64_t hash, __m256i *lo, __m256i *hi)
{
    nidus_inline_bloom_masks_of(hash * UINT64_C(0x9E3779B97F4A7C15), lo, hi);
}

/* A lookup needs no masks: each word shifted right by its field, the low bits of the eight results all set. */
static inline NIDUS_INLINE_BLOOM_AVX2 bool nidus_inline_bloom_probe(const uint8_t *block, uint64_t hash)
{
    __m256i v = _mm256_set1_epi64x((long long)(hash * UINT64_C(0x9E3779B97F4A7C15))), six = _mm256_set1_epi64x(63);
    __m256i c0 = _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(16, 22, 28, 34)), six);
    __m256i c1 = _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(40, 46, 52, 58)), six);
    __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)block);
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(block + 32));
    __m256i low = _mm256_and_si256(_mm256_srlv_epi64(b0, c0), _mm256_srlv_epi64(b1, c1));
    return _mm256_testc_si256(low, _mm256_set1_epi64x(1));
}

/* Sets the bits of masks lo, hi in the block; returns whether one was unset. */
static inline NIDUS_INLINE_BLOOM_AVX2 bool nidus_inline_bloom_set_masks(uint8_t *block, __m256i lo, __m256i hi)
{
    __m256i b0 = _mm256_loadu_si256((const __m256i *)(void *)block);
    __m256i b1 = _mm256_loadu_si256((const __m256i *)(void *)(block + 32));
    __m256i missing = _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi));
    _mm256_storeu_si256((__m256i *)(void *)block, _mm256_or_si256(b0, lo));
    _mm256_storeu_si256((__m256i *)(void *)(block + 32), _mm256_or_si256(b1, hi));
    return !_mm256_testz_si256(missing, missing);
}

static inline NIDUS_INLINE_BLOOM_AVX2 bool nidus_inline_bloom_set(uint8_t *block, uint64_t hash)
{
    __m256i lo, hi;
    nidus_inline_bloom_masks(hash, &lo, &hi);
    return nidus_inline_bloom_set_masks(block, lo, hi);
}
#elif NIDUS_INLINE_BLOOM_PROBES == 1
/* Whether every bit of the key is set: each word shifted right by its bit, the lowest bits ANDed. */
static inline bool nidus_inline_bloom_probe(const uint8_t *block, uint64_t hash)
{
    uint64_t bits = (hash * UINT64_C(0x9E3779B97F4A7C15)) >> 16, all = ~UINT64_C(0);
    for (unsigned w = 0; w < 8; w++, bits >>= 6)
        all &= nidus_inline_read64(block + 8 * w) >> (bits & 63);
    return all & 1;
}

/* Sets the key's bits; returns whether one was unset. */
static inline bool nidus_inline_bloom_set(uint8_t *block, uint64_t hash)
{
    uint64_t bits = (hash * UINT64_C(0x9E3779B97F4A7C15)) >> 16, missing = 0;
    for (unsigned w = 0; w < 8; w++, bits >>= 6) {
        uint64_t word = nidus_inline_read64(block + 8 * w), bit = UINT64_C(1) << (bits & 63);
        missing |= bit & ~word;
        nidus_inline_bloom_store64(block + 8 * w, word | bit);
    }
    return missing != 0;
}
#endif

/* The seed whose nidus_inline_hash8_flip is `flip`: the flip keeps the seed's low half and xors the high half with
 * the low half byte-swapped, so the same step undoes it. */
static inline uint64_t nidus_inline_bloom_seed_of_flip(uint64_t flip)
{
    uint64_t s = (NIDUS_INLINE_SECRET64_8 ^ NIDUS_INLINE_SECRET64_16) - flip;
    return s ^ ((uint64_t)nidus_inline_bswap32((uint32_t)s) << 32);
}

/* The key's hash as the filter's calls take it (8-byte keys straight from the per-seed constant). */
static inline uint64_t nidus_inline_bloom_key_hash(const nidus_inline_bloom_view *v, const void *key, size_t len)
{
    if (len == 8)
        return nidus_inline_hash8(key, v->hash8_flip);
    return nidus_inline_hash(key, len, nidus_inline_bloom_seed_of_flip(v->hash8_flip));
}

#if NIDUS_INLINE_BLOOM_PROBES
static inline bool nidus_inline_bloom_add_hashed(nidus_inline_bloom_view *v, uint64_t hash, bool *added)
{
    bool fresh = nidus_inline_bloom_set(nidus_inline_bloom_block(v, hash), hash);
    v->items += fresh;
    if (added)
        *added = fresh;
    return fresh;
}

/* nidus_bloom_contains_hash, nidus_bloom_contains, nidus_bloom_add_hash and nidus_bloom_add with the same
 * answers and effects: inline where the tag allows (one compare; adds also need room in the layer), else the
 * library's call. */
static inline bool nidus_inline_bloom_contains_hash(const nidus_bloom *filter, uint64_t hash)
{
    const nidus_inline_bloom_view *v = nidus_inline_bloom_view_of(filter);
    if (NIDUS_INLINE_BLOOM_LIKELY(nidus_inline_bloom_can_look_up(v)))
        return nidus_inline_bloom_probe(nidus_inline_bloom_block(v, hash), hash);
    return (nidus_bloom_contains_hash)(filter, hash);
}

static inline bool nidus_inline_bloom_contains(const nidus_bloom *filter, const void *key, size_t len)
{
    const nidus_inline_bloom_view *v = nidus_inline_bloom_view_of(filter);
    if (NIDUS_INLINE_BLOOM_LIKELY(nidus_inline_bloom_can_look_up(v))) {
        uint64_t hash = nidus_inline_bloom_key_hash(v, key, len);
        return nidus_inline_bloom_probe(nidus_inline_bloom_block(v, hash), hash);
    }
    return (nidus_bloom_contains)(filter, key, len);
}

static inline nidus_status nidus_inline_bloom_add_hash(nidus_bloom *filter, uint64_t hash, bool *added)
{
    nidus_inline_bloom_view *v = (nidus_inline_bloom_view *)(void *)filter;
    if (NIDUS_INLINE_BLOOM_LIKELY(nidus_inline_bloom_can_add(v) && v->items < v->capacity)) {
        nidus_inline_bloom_add_hashed(v, hash, added);
        return NIDUS_OK;
    }
    return (nidus_bloom_add_hash)(filter, hash, added);
}

static inline nidus_status nidus_inline_bloom_add(nidus_bloom *filter, const void *key, size_t len, bool *added)
{
    nidus_inline_bloom_view *v = (nidus_inline_bloom_view *)(void *)filter;
    if (NIDUS_INLINE_BLOOM_LIKELY(nidus_inline_bloom_can_add(v) && v->items < v->capacity)) {
        nidus_inline_bloom_add_hashed(v, nidus_inline_bloom_key_hash(v, key, len), added);
        return NIDUS_OK;
    }
    return (nidus_bloom_add)(filter, key, len, added);
}

#else
/* x86-64 without AVX2 in the caller: the library's calls (its AVX2 copy where the CPU has it). */
static inline bool nidus_inline_bloom_contains_hash(const nidus_bloom *filter, uint64_t hash)
{
    return (nidus_bloom_contains_hash)(filter, hash);
}

static inline bool nidus_inline_bloom_contains(const nidus_bloom *filter, const void *key, size_t len)
{
    return (nidus_bloom_contains)(filter, key, len);
}

static inline nidus_status nidus_inline_bloom_add_hash(nidus_bloom *filter, uint64_t hash, bool *added)
{
    return (nidus_bloom_add_hash)(filter, hash, added);
}

static inline nidus_status nidus_inline_bloom_add(nidus_bloom *filter, const void *key, size_t len, bool *added)
{
    return (nidus_bloom_add)(filter, key, len, added);
}
#endif

#ifdef __cplusplus
}
#endif

/* Under NIDUS_INLINE the four calls above are the inline ones (the library's stay reachable as
 * (nidus_bloom_add)(...) and through their addresses). */
#ifdef NIDUS_INLINE
#define nidus_bloom_contains_hash(filter, hash) nidus_inline_bloom_contains_hash(filter, hash)
#define nidus_bloom_contains(filter, key, len) nidus_inline_bloom_contains(filter, key, len)
#define nidus_bloom_add_hash(filter, hash, added) nidus_inline_bloom_add_hash(filter, hash, added)
#define nidus_bloom_add(filter, key, len, added) nidus_inline_bloom_add(filter, key, len, added)
#endif

#endif

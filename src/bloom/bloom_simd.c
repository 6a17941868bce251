/* SPDX-License-Identifier: BSD-3-Clause */
/* Split-block probes with AVX2 (see bloom_simd.h): a round's eight bits are one 256-bit shift of the round's
 * value by eight field offsets, then one shift of 1 by the fields, against the block's two 256-bit halves; and the
 * entry points' common case (bloom_fast_impl.h) compiled for x86-64-v3 around them. */
#include "bloom_simd.h"

#if NIDUS_HAVE_ISA_V3
#include <immintrin.h>

#include "bloom_block_impl.h"
#include "bloom_fast_impl.h"
#include "bloom_filter.h"

/* The masks of round r, words 0-3 and 4-7, in words [0, lanes). */
__attribute__((target("avx2"))) static inline void round_masks(uint64_t x, unsigned r, unsigned lanes, __m256i *lo,
                                                                __m256i *hi)
{
    /* field w, bits [16 + 6w, 22 + 6w) of v, moved to the top and down: no mask needed */
    const __m256i one = _mm256_set1_epi64x(1);
    __m256i v = _mm256_set1_epi64x((long long)nidus_split_round(x, r));
    __m256i a = _mm256_srli_epi64(_mm256_sllv_epi64(v, _mm256_setr_epi64x(42, 36, 30, 24)), 58);
    __m256i b = _mm256_srli_epi64(_mm256_sllv_epi64(v, _mm256_setr_epi64x(18, 12, 6, 0)), 58);
    *lo = _mm256_sllv_epi64(one, a);
    *hi = _mm256_sllv_epi64(one, b);
    if (lanes < 8) {
        __m256i n = _mm256_set1_epi64x(lanes);
        *lo = _mm256_and_si256(*lo, _mm256_cmpgt_epi64(n, _mm256_setr_epi64x(0, 1, 2, 3)));
        *hi = _mm256_and_si256(*hi, _mm256_cmpgt_epi64(n, _mm256_setr_epi64x(4, 5, 6, 7)));
    }
}

/* Any k, out of line (the general path): its loop keeps vectors on the stack. */
__attribute__((target("avx2"), noinline)) static bool split_has_rounds(const uint8_t *block, uint64_t x, unsigned k)
{
    __m256i b0 = _mm256_loadu_si256((const __m256i *)block), b1 = _mm256_loadu_si256((const __m256i *)(block + 32));
    __m256i missing = _mm256_setzero_si256();
    for (unsigned r = 0; r * 8 < k; r++) {
        __m256i lo, hi;
        round_masks(x, r, k - r * 8, &lo, &hi);
        missing = _mm256_or_si256(missing, _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi)));
    }
    return _mm256_testz_si256(missing, missing);
}

__attribute__((target("avx2"), noinline)) static bool split_set_rounds(uint8_t *block, uint64_t x, unsigned k)
{
    __m256i b0 = _mm256_loadu_si256((const __m256i *)block), b1 = _mm256_loadu_si256((const __m256i *)(block + 32));
    __m256i set0 = _mm256_setzero_si256(), set1 = _mm256_setzero_si256();
    for (unsigned r = 0; r * 8 < k; r++) {
        __m256i lo, hi;
        round_masks(x, r, k - r * 8, &lo, &hi);
        set0 = _mm256_or_si256(set0, lo);
        set1 = _mm256_or_si256(set1, hi);
    }
    __m256i missing = _mm256_or_si256(_mm256_andnot_si256(b0, set0), _mm256_andnot_si256(b1, set1));
    _mm256_storeu_si256((__m256i *)block, _mm256_or_si256(b0, set0));
    _mm256_storeu_si256((__m256i *)(block + 32), _mm256_or_si256(b1, set1));
    return !_mm256_testz_si256(missing, missing);
}

/* k = 8 (what sizing picks from 1 down to about 1e-3): one round, every lane, one 64-byte line. A lookup needs no
 * masks: each word is shifted right by its field (bits 16 + 6w of the round's value, moved down and cut to 6
 * bits) and the low bits of the eight results must all be set: eight vector operations where the masks take ten. */
__attribute__((target("avx2"))) static inline bool split_has8(const uint8_t *block, uint64_t x)
{
    __m256i v = _mm256_set1_epi64x((long long)nidus_split_round(x, 0)), six = _mm256_set1_epi64x(63);
    __m256i c0 = _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(16, 22, 28, 34)), six);
    __m256i c1 = _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(40, 46, 52, 58)), six);
    __m256i b0 = _mm256_loadu_si256((const __m256i *)block), b1 = _mm256_loadu_si256((const __m256i *)(block + 32));
    __m256i low = _mm256_and_si256(_mm256_srlv_epi64(b0, c0), _mm256_srlv_epi64(b1, c1));
    return _mm256_testc_si256(low, _mm256_set1_epi64x(1));
}

/* Sets the bits; returns whether any was unset. */
__attribute__((target("avx2"))) static inline bool split_set8(uint8_t *block, uint64_t x)
{
    __m256i lo, hi;
    round_masks(x, 0, 8, &lo, &hi);
    __m256i b0 = _mm256_loadu_si256((const __m256i *)block), b1 = _mm256_loadu_si256((const __m256i *)(block + 32));
    __m256i missing = _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi));
    _mm256_storeu_si256((__m256i *)block, _mm256_or_si256(b0, lo));
    _mm256_storeu_si256((__m256i *)(block + 32), _mm256_or_si256(b1, hi));
    return !_mm256_testz_si256(missing, missing);
}

__attribute__((target("avx2"))) bool nidus_split_has_avx2(const uint8_t *block, uint64_t x, unsigned k)
{
    return k == 8 ? split_has8(block, x) : split_has_rounds(block, x, k);
}

__attribute__((target("avx2"))) bool nidus_split_set_avx2(uint8_t *block, uint64_t x, unsigned k)
{
    return k == 8 ? split_set8(block, x) : split_set_rounds(block, x, k);
}

/* The entry points for filters that chose this copy: the common case inlined with the AVX2 probes (and XXH3's
 * short-key path compiled with BMI2), the rest out of line as in bloom.c. */
NIDUS_TARGET_V3 bool nidus_bloom_contains_hash_v3(const nidus_bloom *bf, uint64_t hash)
{
    return nidus_bloom_fast_contains_hash(bf, hash, split_has8);
}

NIDUS_TARGET_V3 bool nidus_bloom_contains_key_v3(const nidus_bloom *bf, const void *key, size_t len)
{
    return nidus_bloom_fast_contains_key(bf, key, len, split_has8);
}

NIDUS_TARGET_V3 nidus_status nidus_bloom_add_hash_v3(nidus_bloom *bf, uint64_t hash, bool *added)
{
    return nidus_bloom_fast_add_hash(bf, hash, added, split_set8);
}

NIDUS_TARGET_V3 nidus_status nidus_bloom_add_key_v3(nidus_bloom *bf, const void *key, size_t len, bool *added)
{
    return nidus_bloom_fast_add_key(bf, key, len, added, split_set8);
}

NIDUS_TARGET_V3 void nidus_bloom_contains_many_v3(const nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *out)
{
    nidus_bloom_fast_contains_many(bf, hashes, n, out, split_has8);
}

NIDUS_TARGET_V3 size_t nidus_bloom_add_many_v3(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh)
{
    return nidus_bloom_fast_add_many(bf, hashes, n, fresh, split_set8);
}
#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Split-block probes with AVX2 (see bloom_simd.h): a round's eight bits are one 256-bit shift of the round's
 * value by eight field offsets, then one shift of 1 by the fields, against the block's two 256-bit halves. */
#include "bloom_simd.h"

#if NIDUS_HAVE_AVX2_PATH
#include <immintrin.h>

#include "bloom_block_impl.h"
#include "bloom_filter.h"

bool nidus_cpu_avx2(void) { return __builtin_cpu_supports("avx2"); }

/* The masks of round r, words 0-3 and 4-7, in words [0, lanes). */
__attribute__((target("avx2"))) static inline void round_masks(uint64_t x, unsigned r, unsigned lanes, __m256i *lo,
                                                                __m256i *hi)
{
    const __m256i m63 = _mm256_set1_epi64x(63), one = _mm256_set1_epi64x(1);
    __m256i v = _mm256_set1_epi64x((long long)nidus_split_round(x, r));
    __m256i a = _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(16, 22, 28, 34)), m63);
    __m256i b = _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(40, 46, 52, 58)), m63);
    *lo = _mm256_sllv_epi64(one, a);
    *hi = _mm256_sllv_epi64(one, b);
    if (lanes < 8) {
        __m256i n = _mm256_set1_epi64x(lanes);
        *lo = _mm256_and_si256(*lo, _mm256_cmpgt_epi64(n, _mm256_setr_epi64x(0, 1, 2, 3)));
        *hi = _mm256_and_si256(*hi, _mm256_cmpgt_epi64(n, _mm256_setr_epi64x(4, 5, 6, 7)));
    }
}

__attribute__((target("avx2"))) static inline bool split_has(const uint8_t *block, uint64_t x, unsigned k)
{
    __m256i b0 = _mm256_loadu_si256((const __m256i *)block), b1 = _mm256_loadu_si256((const __m256i *)(block + 32));
    if (k == 8) { /* the usual k (0.1 % to 3 %), on its own: one round, every lane */
        __m256i lo, hi;
        round_masks(x, 0, 8, &lo, &hi);
        __m256i missing = _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi));
        return _mm256_testz_si256(missing, missing);
    }
    __m256i missing = _mm256_setzero_si256();
    for (unsigned r = 0; r * 8 < k; r++) {
        __m256i lo, hi;
        round_masks(x, r, k - r * 8, &lo, &hi);
        missing = _mm256_or_si256(missing, _mm256_or_si256(_mm256_andnot_si256(b0, lo), _mm256_andnot_si256(b1, hi)));
    }
    return _mm256_testz_si256(missing, missing);
}

__attribute__((target("avx2"))) static inline bool split_set(uint8_t *block, uint64_t x, unsigned k)
{
    __m256i b0 = _mm256_loadu_si256((const __m256i *)block), b1 = _mm256_loadu_si256((const __m256i *)(block + 32));
    __m256i set0 = _mm256_setzero_si256(), set1 = _mm256_setzero_si256();
    if (k == 8) /* as in split_has */
        round_masks(x, 0, 8, &set0, &set1);
    else
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
__attribute__((target("avx2"))) bool nidus_split_has_avx2(const uint8_t *block, uint64_t x, unsigned k)
{
    return split_has(block, x, k);
}

__attribute__((target("avx2"))) bool nidus_split_set_avx2(uint8_t *block, uint64_t x, unsigned k)
{
    return split_set(block, x, k);
}

/* The common case of nidus_bloom_contains_hash and _add_hash in one function each (bloom.c has the rest). */
__attribute__((target("avx2"))) bool nidus_bloom_contains_hash_avx2(const nidus_bloom *bf, uint64_t hash)
{
    const nidus_bloom_layer *l = bf->layers;
    if (bf->nlayers == 1 && l->layout == NIDUS_LAYER_SPLIT && !bf->loader)
        return split_has(l->data + nidus_reduce(hash, l->size) * NIDUS_BLOCK_BYTES, hash, l->k);
    return nidus_bloom_contains_any(bf, hash);
}

__attribute__((target("avx2"))) nidus_status nidus_bloom_add_hash_avx2(nidus_bloom *bf, uint64_t hash, bool *added)
{
    nidus_bloom_layer *l = bf->layers;
    if (bf->nlayers == 1 && l->layout == NIDUS_LAYER_SPLIT && l->items < l->capacity && !bf->read_only &&
        !bf->loader) {
        bool fresh = split_set(l->data + nidus_reduce(hash, l->size) * NIDUS_BLOCK_BYTES, hash, l->k);
        l->items += fresh;
        if (added)
            *added = fresh;
        return NIDUS_OK;
    }
    return nidus_bloom_add_any(bf, hash, added);
}
#endif

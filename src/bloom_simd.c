/* Split-block probes with AVX2 (see bloom_simd.h): a round's eight bits are one 256-bit shift of the round's
 * value by eight field offsets, then one shift of 1 by the fields, against the block's two 256-bit halves. */
#include "bloom_simd.h"

#if NIDUS_HAVE_AVX2_PATH
#include <immintrin.h>

#include "bloom_block_impl.h"

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

__attribute__((target("avx2"))) bool nidus_split_has_avx2(const uint8_t *block, uint64_t x, unsigned k)
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

__attribute__((target("avx2"))) bool nidus_split_set_avx2(uint8_t *block, uint64_t x, unsigned k)
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
#endif

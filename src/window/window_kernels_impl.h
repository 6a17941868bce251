/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the windowed filter's lookup kernels (window_kernels.h) as a template, compiled once per instruction
 * set (window_kernels.c includes it through isa_each.h, as cuckoo_kernels.c does).
 *
 * A lookup is the plain cuckoo filter's placement (nidus_table_fast_locate_fp: the fingerprint of f bits) and
 * bucket reads (nidus_table_fast_word: one 64-bit load each), then one test of both words side by side: each
 * field's age is turned into a "dead" bit inside its own fingerprint bits (window_filter.h: nidus_window_lanes),
 * ORed into the fingerprint bits compared with fp's, and Mycroft's zero test over the fields finds a field whose
 * fingerprint matched with a live age. No branch on a match, no per-slot loop, no division, and the cost does
 * not depend on W. */
#ifndef NIDUS_SRC_WINDOW_KERNELS_SHARED
#define NIDUS_SRC_WINDOW_KERNELS_SHARED

#include "hash_impl.h"
#include "swar_impl.h"
#include "window_kernels.h"

#define NIDUS_WKERNEL_BLOCK 32u

/* The age test, per field of a one-word bucket: the ages are shifted down to each field's low 3 bits, where
 * (7 - age) + age_base7 (latest mod 8 + 1), mod 8, is the age relative to the latest write, and adding
 * age_dead[d] (2 + d epochs past latest) carries into bit 3 exactly when the age is dead. No sum passes 15, so no
 * field carries into the next. Bit 3 lies inside the field's fingerprint bits (f >= 4): ORed into the
 * fingerprint bits compared with fp's, it makes a dead field nonzero, and Mycroft's zero test finds a field
 * whose fingerprint matched with a live age. Where the CPU has no SSE2 (or NIDUS_WINDOW_SCALAR is defined, to test
 * that form on x86-64), each word is tested alone in the same steps (nidus_window_live_in). */
#if defined(__SSE2__) && !defined(NIDUS_WINDOW_SCALAR)
#include <emmintrin.h>
#if NIDUS_HAVE_ISA_V3
#include <smmintrin.h>
#endif

static inline __attribute__((always_inline)) __m128i nidus_window_lane_pair(const uint64_t pair[2])
{
    return _mm_loadu_si128((const __m128i *)(const void *)pair);
}

/* Both one-word buckets at once, wi ^ pat in the low lane and wj ^ pat in the high (`pat`: fp in every field's
 * fingerprint bits, so the ages are as stored): Mycroft's borrows, whose top bit of a field is set where fp
 * matched with a live age (dead constants `dead`), or perhaps above such a field; the caller masks the top bits. */
static inline __attribute__((always_inline)) __m128i nidus_window_live_pair(const nidus_window_lanes *l,
                                                                           uint64_t xi, uint64_t xj,
                                                                           const uint64_t dead[2])
{
    __m128i v = _mm_set_epi64x((long long)xj, (long long)xi);
    __m128i age_not = _mm_andnot_si128(_mm_srl_epi64(v, nidus_window_lane_pair(l->shift)),
                                       nidus_window_lane_pair(l->age_low)); /* 7 - age */
    __m128i rel = _mm_and_si128(_mm_add_epi64(age_not, nidus_window_lane_pair(l->age_base7)),
                                nidus_window_lane_pair(l->age_low));
    __m128i dead_bits = _mm_and_si128(_mm_add_epi64(rel, nidus_window_lane_pair(dead)),
                                      nidus_window_lane_pair(l->age_carry));
    __m128i x = _mm_or_si128(_mm_and_si128(v, nidus_window_lane_pair(l->fp_fields)), dead_bits);
    return _mm_andnot_si128(x, _mm_sub_epi64(x, nidus_window_lane_pair(l->ones)));
}
#else
/* One one-word bucket, xored with fp's pattern: as nidus_window_live_pair's lanes, the top bits masked. */
static inline __attribute__((always_inline)) uint64_t nidus_window_live_in(const nidus_window_lanes *l, uint64_t x,
                                                                           uint64_t dead)
{
    uint64_t rel = ((~x >> l->shift[0] & l->age_low[0]) + l->age_base7[0]) & l->age_low[0];
    x = (x & l->fp_fields[0]) | ((rel + dead) & l->age_carry[0]);
    return (x - l->ones[0]) & ~x & l->high[0];
}
#endif

/* The dead constants of a lookup at `now`, a time the kernels serve (nidus_window_kernel_serves). */
static inline __attribute__((always_inline)) const uint64_t *nidus_window_dead_at(const nidus_window *w,
                                                                                 uint64_t now)
{
    return w->lanes.age_dead[now >= w->kernel_d1_from];
}

/* The key's hash (nidus_hash with the filter's seed): an 8-byte key with the seed's part precomputed. */
static inline __attribute__((always_inline)) uint64_t nidus_window_key_hash(const nidus_window *w, const void *key,
                                                                            size_t len)
{
    return len == 8 ? nidus_hash8(key, w->hash8_flip) : nidus_hash_bytes(key, len, w->seed);
}

/* The single lookups of one kernel, by hash and by 8-byte key, in the copy being compiled. */
#define NIDUS_WKERNEL_DEFINE(name, fast, may_wrap)                                                             \
    NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_wkernel_##name##_hash)(const nidus_window *w, uint64_t hash,        \
                                                                    uint64_t now)                              \
    {                                                                                                          \
        return NIDUS_ISA_FN(nidus_wkernel_lookup)(w, hash, now, fast, may_wrap);                               \
    }                                                                                                          \
    NIDUS_ISA_TARGET bool NIDUS_ISA_FN(nidus_wkernel_##name##_key8)(const nidus_window *w, const void *key,     \
                                                                    uint64_t now)                              \
    {                                                                                                          \
        return NIDUS_ISA_FN(nidus_wkernel_lookup)(w, nidus_hash8(key, w->hash8_flip), now, fast, may_wrap);     \
    }

#endif /* the shared part */

#if !defined(NIDUS_ISA) || !defined(NIDUS_ISA_TARGET)
#error "define NIDUS_ISA and NIDUS_ISA_TARGET before including window_kernels_impl.h"
#endif

/* Whether fingerprint fp has a live copy in bucket i or j of a filter the kernel `fast` serves (NIDUS_FAST_PLAIN:
 * whole-byte words, NIDUS_FAST_PLAIN_BITS: at a bit offset; a constant at every call), at the time whose dead
 * constants are `dead` (nidus_window_dead_at). Both words are tested whole, side by side in one vector where the
 * CPU has one, without a branch on whether a fingerprint matched: each field's dead bit is ORed into its
 * fingerprint bits compared with fp's, and Mycroft's zero test finds a field that matched with a live age
 * (nidus_window_live_pair). A present key and an absent one take the same instructions, so a mixed stream
 * mispredicts nothing, and the age test is a fixed handful of operations (no per-slot loop, no division,
 * nothing that grows with W). Mycroft's test can also flag a field above a zero one, never without one, so the
 * answer is exact as a yes/no for each word. */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) bool NIDUS_ISA_FN(nidus_wkernel_probe)(
    const nidus_window *w, uint64_t i, uint64_t j, uint32_t fp, const uint64_t dead[2], unsigned fast)
{
    const nidus_table *t = &w->table;
    uint64_t wi = nidus_table_fast_word(t, i, fast), wj = nidus_table_fast_word(t, j, fast);
    const nidus_window_lanes *l = &w->lanes;
    uint64_t pat = fp * l->ones[0];
#if defined(__SSE2__) && !defined(NIDUS_WINDOW_SCALAR)
    __m128i live = nidus_window_live_pair(l, wi ^ pat, wj ^ pat, dead);
#if NIDUS_ISA_IS_V3
    return !_mm_testz_si128(live, nidus_window_lane_pair(l->high));
#else
    live = _mm_and_si128(live, nidus_window_lane_pair(l->high));
    return _mm_cvtsi128_si64(_mm_or_si128(live, _mm_unpackhi_epi64(live, live))) != 0;
#endif
#else
    return (nidus_window_live_in(l, wi ^ pat, dead[0]) | nidus_window_live_in(l, wj ^ pat, dead[0])) != 0;
#endif
}

/* A lookup in a table whose overflow map is not empty (stash entries, duplicates beyond a pair's share): the two
 * buckets as every lookup reads them, then, on a miss, the map (its signature first). Out of line, so that the
 * common lookup pays one test of the signature for it. */
static NIDUS_ISA_TARGET __attribute__((noinline)) bool NIDUS_ISA_FN(nidus_wkernel_lookup_overflow)(
    const nidus_window *w, uint64_t hash, uint64_t now, unsigned fast, bool may_wrap)
{
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate_fp(&w->table, hash, w->fp_mask, may_wrap, &i, &j);
    return NIDUS_ISA_FN(nidus_wkernel_probe)(w, i, j, fp, nidus_window_dead_at(w, now), fast) ||
           nidus_window_overflow_live(w, i, j, fp, now);
}

/* One lookup by hash with kernel `fast` (a constant at every call; `may_wrap` too: false for a table not smaller
 * than the reach, whose offsets need no reducing). */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) bool NIDUS_ISA_FN(nidus_wkernel_lookup)(
    const nidus_window *w, uint64_t hash, uint64_t now, unsigned fast, bool may_wrap)
{
    if (__builtin_expect(!nidus_window_kernel_serves(w, now), 0))
        return nidus_window_contains_general(w, hash, now);
    if (__builtin_expect(w->table.overflow_sig != 0, 0))
        return NIDUS_ISA_FN(nidus_wkernel_lookup_overflow)(w, hash, now, fast, may_wrap);
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate_fp(&w->table, hash, w->fp_mask, may_wrap, &i, &j);
    return NIDUS_ISA_FN(nidus_wkernel_probe)(w, i, j, fp, nidus_window_dead_at(w, now), fast);
}

/* Batched lookups a block at a time: hash (`by_key`: keys[] and lens[], else hashes[]), locate and prefetch the
 * block's buckets, then probe them, and (`overflow`: the table's overflow map is not empty) ask the map for the
 * misses. `fast`, `by_key` and `overflow` are constants where the caller calls it, and so is `may_wrap` (for the
 * kernels' copies, not the loop, to differ): the loop without the map has no call in it to spill its registers
 * around. The caller checked that the kernel serves `now` (nidus_window_kernel_serves). */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) void NIDUS_ISA_FN(nidus_wkernel_blocks)(
    const nidus_window *w, unsigned fast, bool may_wrap, bool by_key, bool overflow, const uint64_t *hashes,
    const void *const *keys, const size_t *lens, size_t n, uint64_t now, bool *out)
{
    const nidus_table *t = &w->table;
    uint64_t i[NIDUS_WKERNEL_BLOCK], j[NIDUS_WKERNEL_BLOCK];
    uint32_t fp[NIDUS_WKERNEL_BLOCK];
    const uint64_t *dead = nidus_window_dead_at(w, now);
    for (size_t base = 0; base < n; base += NIDUS_WKERNEL_BLOCK) {
        size_t m = n - base < NIDUS_WKERNEL_BLOCK ? n - base : NIDUS_WKERNEL_BLOCK;
        for (size_t k = 0; k < m; k++) {
            uint64_t h = by_key ? nidus_window_key_hash(w, keys[base + k], lens[base + k]) : hashes[base + k];
            fp[k] = nidus_table_fast_locate_fp(t, h, w->fp_mask, may_wrap, &i[k], &j[k]);
            nidus_table_prefetch_word(t, i[k], fast);
            nidus_table_prefetch_word(t, j[k], fast);
        }
        for (size_t k = 0; k < m; k++) {
            bool hit = NIDUS_ISA_FN(nidus_wkernel_probe)(w, i[k], j[k], fp[k], dead, fast);
            if (overflow && !hit)
                hit = nidus_window_overflow_live(w, i[k], j[k], fp[k], now);
            out[base + k] = hit;
        }
    }
}


NIDUS_WKERNEL_DEFINE(word, NIDUS_FAST_PLAIN, true)
NIDUS_WKERNEL_DEFINE(bits, NIDUS_FAST_PLAIN_BITS, true)
NIDUS_WKERNEL_DEFINE(word_nw, NIDUS_FAST_PLAIN, false)
NIDUS_WKERNEL_DEFINE(bits_nw, NIDUS_FAST_PLAIN_BITS, false)

/* Batched lookups by the filter's kernel, `may_wrap` and `overflow` constants at every call. */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) void NIDUS_ISA_FN(nidus_wkernel_many_of)(
    const nidus_window *w, bool may_wrap, bool overflow, const uint64_t *hashes, const void *const *keys,
    const size_t *lens, size_t n, uint64_t now, bool *out)
{
    bool bits = (w->kernel & NIDUS_WKERNEL_BITS) != 0;
    if (hashes && bits)
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN_BITS, may_wrap, false, overflow, hashes, NULL, NULL, n,
                                           now, out);
    else if (hashes)
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN, may_wrap, false, overflow, hashes, NULL, NULL, n, now,
                                           out);
    else if (bits)
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN_BITS, may_wrap, true, overflow, NULL, keys, lens, n,
                                           now, out);
    else
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN, may_wrap, true, overflow, NULL, keys, lens, n, now,
                                           out);
}

NIDUS_ISA_TARGET void NIDUS_ISA_FN(nidus_wkernel_many)(const nidus_window *w, const uint64_t *hashes,
                                                       const void *const *keys, const size_t *lens, size_t n,
                                                       uint64_t now, bool *out)
{
    bool nowrap = (w->kernel & NIDUS_WKERNEL_NOWRAP) != 0, overflow = w->table.overflow_sig != 0;
    if (nowrap && !overflow)
        NIDUS_ISA_FN(nidus_wkernel_many_of)(w, false, false, hashes, keys, lens, n, now, out);
    else if (!overflow)
        NIDUS_ISA_FN(nidus_wkernel_many_of)(w, true, false, hashes, keys, lens, n, now, out);
    else if (nowrap)
        NIDUS_ISA_FN(nidus_wkernel_many_of)(w, false, true, hashes, keys, lens, n, now, out);
    else
        NIDUS_ISA_FN(nidus_wkernel_many_of)(w, true, true, hashes, keys, lens, n, now, out);
}

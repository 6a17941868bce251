/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the windowed filter's lookup kernels (window_kernels.h) as a template, compiled once per instruction
 * set (window_kernels.c includes it with NIDUS_ISA and NIDUS_ISA_TARGET set, as cuckoo_kernels_impl.h is).
 *
 * A lookup is the plain cuckoo filter's: placement by nidus_table_fast_locate_fp (the fingerprint of f bits),
 * both buckets read with one 64-bit load each (nidus_table_fast_word), and Mycroft's test over the fingerprint
 * bits of every field (nidus_swar_any_zero, read at the fingerprints' top bits). Only when a fingerprint matched are the ages looked
 * at, without a loop or a branch: each field's age is turned into a "dead" bit inside its own fingerprint bits
 * (window_filter.h: age_base, age_dead), ORed in, and the zero test asked again, so a field passes only when its
 * fingerprint matches and its age is live. No division, no per-slot loop, and the cost does not depend on W. */
#ifndef NIDUS_SRC_WINDOW_KERNELS_SHARED
#define NIDUS_SRC_WINDOW_KERNELS_SHARED

#include "hash_impl.h"
#include "swar_impl.h"
#include "window_kernels.h"

#define NIDUS_WKERNEL_BLOCK 32u

/* Bit 3 of each field of one-word bucket `word` set when the field's age is dead (`dead`: w->age_dead[d]). The
 * ages are shifted down to each field's low 3 bits; (age_base - age) & 7 is the age relative to the latest write
 * (age_base holds latest mod 8 + 8 in each field, so no field borrows), and adding 2 + d carries into bit 3
 * exactly when it is 6 - d or more. Bit 3 lies inside the field's fingerprint bits (f >= 4). */
static inline __attribute__((always_inline)) uint64_t nidus_window_dead_fields(const nidus_window *w, uint64_t word,
                                                                               uint64_t dead)
{
    uint64_t rel = (w->age_base - ((word >> w->f) & w->age_low)) & w->age_low;
    return (rel + dead) & w->age_carry;
}

/* Nonzero when a field of one-word bucket `word` holds the fingerprint repeated in `pat` with a live age (`dead`:
 * w->age_dead[d]): the fingerprint bits compared with the dead bits ORed in, and Mycroft's zero test. */
static inline __attribute__((always_inline)) uint64_t nidus_window_live_in(const nidus_window *w, uint64_t word,
                                                                           uint64_t pat, uint64_t dead)
{
    const nidus_swar *s = &w->table.chunk_swar[0];
    uint64_t x = ((word ^ pat) & w->fp_fields) | nidus_window_dead_fields(w, word, dead);
    return nidus_swar_any_zero(s, x) & s->high;
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

/* Fingerprints matched in both wi and wj (rare: a collision, or copies in both buckets): whether one is live. */
static NIDUS_ISA_TARGET __attribute__((noinline)) bool NIDUS_ISA_FN(nidus_wkernel_both)(const nidus_window *w,
                                                                                      uint64_t wi, uint64_t wj,
                                                                                      uint64_t pat, uint64_t now)
{
    uint64_t dead = w->age_dead[now >= w->mask_until];
    return (nidus_window_live_in(w, wi, pat, dead) | nidus_window_live_in(w, wj, pat, dead)) != 0;
}

/* A fingerprint matched in `word` (one bucket's): whether a match is live. Out of line, so that the probe (an
 * absent key, usually) keeps to the registers a call may use. */
static NIDUS_ISA_TARGET __attribute__((noinline)) bool NIDUS_ISA_FN(nidus_wkernel_hit)(const nidus_window *w,
                                                                                     uint64_t word, uint64_t pat,
                                                                                     uint64_t now)
{
    return nidus_window_live_in(w, word, pat, w->age_dead[now >= w->mask_until]) != 0;
}

/* Whether fingerprint fp has a live copy at `now` in bucket i or j of a filter the kernel `fast` serves
 * (NIDUS_FAST_PLAIN: whole-byte words, NIDUS_FAST_PLAIN_BITS: at a bit offset; a constant at every call) at a
 * time it serves (nidus_window_kernel_serves). Mycroft's test over each word, its borrow run through each
 * field's low f bits and read at their top bit (fp_high), so the ages need no masking off: a field whose
 * fingerprint bits equal fp's sets its bit f - 1; one that does not sets it only when a borrow came from a lower
 * field, which itself matched, so the answer is exact as a yes/no for each word. On a match the ages of the
 * matching word, chosen by a select (not a branch on which bucket), are tested; matches in both words test
 * both. */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) bool NIDUS_ISA_FN(nidus_wkernel_probe)(
    const nidus_window *w, uint64_t i, uint64_t j, uint32_t fp, uint64_t now, unsigned fast)
{
    const nidus_table *t = &w->table;
    uint64_t wi = nidus_table_fast_word(t, i, fast), wj = nidus_table_fast_word(t, j, fast);
    const nidus_swar *s = &t->chunk_swar[0];
    uint64_t pat = fp * s->ones, high = w->fp_high;
    uint64_t hi = nidus_swar_any_zero(s, wi ^ pat) & high, hj = nidus_swar_any_zero(s, wj ^ pat) & high;
    if (!(hi | hj))
        return false;
    /* both nonzero, as one test (the marks lie below bit 63): a branch on hi or hj alone would be a coin flip for
     * a present key, and its mispredictions cost more than the whole age test */
    if (__builtin_expect(!(((hi - 1) | (hj - 1)) >> 63), 0))
        return NIDUS_ISA_FN(nidus_wkernel_both)(w, wi, wj, pat, now);
    return NIDUS_ISA_FN(nidus_wkernel_hit)(w, hi ? wi : wj, pat, now);
}

/* One lookup by hash with kernel `fast` (a constant at every call; `may_wrap` too: false for a table not smaller
 * than the reach, whose offsets need no reducing). */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) bool NIDUS_ISA_FN(nidus_wkernel_lookup)(
    const nidus_window *w, uint64_t hash, uint64_t now, unsigned fast, bool may_wrap)
{
    if (__builtin_expect(!nidus_window_kernel_serves(w, now), 0))
        return nidus_window_contains_general(w, hash, now);
    uint64_t i, j;
    uint32_t fp = nidus_table_fast_locate_fp(&w->table, hash, w->fp_mask, may_wrap, &i, &j);
    return NIDUS_ISA_FN(nidus_wkernel_probe)(w, i, j, fp, now, fast);
}

/* Batched lookups a block at a time: hash (`by_key`: keys[] and lens[], else hashes[]), locate and prefetch the
 * block's buckets, then probe them. `fast` and `by_key` are constants where the caller calls it, and so is
 * `may_wrap` (for the kernels' copies, not the loop, to differ); the caller checked that the kernel serves `now`
 * (nidus_window_kernel_serves). */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) void NIDUS_ISA_FN(nidus_wkernel_blocks)(
    const nidus_window *w, unsigned fast, bool may_wrap, bool by_key, const uint64_t *hashes,
    const void *const *keys, const size_t *lens, size_t n, uint64_t now, bool *out)
{
    const nidus_table *t = &w->table;
    uint64_t i[NIDUS_WKERNEL_BLOCK], j[NIDUS_WKERNEL_BLOCK];
    uint32_t fp[NIDUS_WKERNEL_BLOCK];
    for (size_t base = 0; base < n; base += NIDUS_WKERNEL_BLOCK) {
        size_t m = n - base < NIDUS_WKERNEL_BLOCK ? n - base : NIDUS_WKERNEL_BLOCK;
        for (size_t k = 0; k < m; k++) {
            uint64_t h = by_key ? nidus_window_key_hash(w, keys[base + k], lens[base + k]) : hashes[base + k];
            fp[k] = nidus_table_fast_locate_fp(t, h, w->fp_mask, may_wrap, &i[k], &j[k]);
            nidus_table_prefetch_word(t, i[k], fast);
            nidus_table_prefetch_word(t, j[k], fast);
        }
        for (size_t k = 0; k < m; k++)
            out[base + k] = NIDUS_ISA_FN(nidus_wkernel_probe)(w, i[k], j[k], fp[k], now, fast);
    }
}


NIDUS_WKERNEL_DEFINE(word, NIDUS_FAST_PLAIN, true)
NIDUS_WKERNEL_DEFINE(bits, NIDUS_FAST_PLAIN_BITS, true)
NIDUS_WKERNEL_DEFINE(word_nw, NIDUS_FAST_PLAIN, false)
NIDUS_WKERNEL_DEFINE(bits_nw, NIDUS_FAST_PLAIN_BITS, false)

/* Batched lookups by the filter's kernel, `may_wrap` a constant at every call. */
static NIDUS_ISA_TARGET inline __attribute__((always_inline)) void NIDUS_ISA_FN(nidus_wkernel_many_of)(
    const nidus_window *w, bool may_wrap, const uint64_t *hashes, const void *const *keys, const size_t *lens,
    size_t n, uint64_t now, bool *out)
{
    bool bits = (w->kernel & NIDUS_WKERNEL_BITS) != 0;
    if (hashes && bits)
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN_BITS, may_wrap, false, hashes, NULL, NULL, n, now, out);
    else if (hashes)
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN, may_wrap, false, hashes, NULL, NULL, n, now, out);
    else if (bits)
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN_BITS, may_wrap, true, NULL, keys, lens, n, now, out);
    else
        NIDUS_ISA_FN(nidus_wkernel_blocks)(w, NIDUS_FAST_PLAIN, may_wrap, true, NULL, keys, lens, n, now, out);
}

NIDUS_ISA_TARGET void NIDUS_ISA_FN(nidus_wkernel_many)(const nidus_window *w, const uint64_t *hashes,
                                                       const void *const *keys, const size_t *lens, size_t n,
                                                       uint64_t now, bool *out)
{
    if (w->kernel & NIDUS_WKERNEL_NOWRAP)
        NIDUS_ISA_FN(nidus_wkernel_many_of)(w, false, hashes, keys, lens, n, now, out);
    else
        NIDUS_ISA_FN(nidus_wkernel_many_of)(w, true, hashes, keys, lens, n, now, out);
}

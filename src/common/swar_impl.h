/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: SWAR (SIMD within a register) matching of fingerprint fields packed in a 64-bit word.
 *
 * A word holds up to 64/f fields of f bits. To find the fields equal to x, XOR the word with x repeated in every
 * field; the fields that became zero are the matches. The zero test is the exact form (Mycroft's borrow trick
 * with the carry kept inside each field): it never reports a field next to a match, so popcount counts copies.
 * Bits above the last field are ignored, so a word may carry the neighbouring bucket's bits there. */
#ifndef NIDUS_SRC_SWAR_IMPL_H
#define NIDUS_SRC_SWAR_IMPL_H

#include <stdint.h>

/* Masks for `fields` fields of `width` bits: `ones` has the lowest bit of each field, `high` the highest,
 * `low` every bit but the highest. */
typedef struct nidus_swar {
    uint64_t ones, high, low;
} nidus_swar;

static inline nidus_swar nidus_swar_make(unsigned width, unsigned fields)
{
    nidus_swar s = {0, 0, 0};
    for (unsigned i = 0; i < fields; i++) {
        s.ones |= UINT64_C(1) << (i * width);
        s.high |= UINT64_C(1) << (i * width + width - 1);
    }
    s.low = (s.ones * ((UINT64_C(1) << (width - 1)) - 1)) & ~s.high; /* width-1 low bits per field */
    if (width == 1)
        s.low = 0;
    return s;
}

/* The `high` bit of every field of `word` that is zero. Exact: (word & low) + low sets a field's high bit iff
 * one of its low bits is set, and cannot carry into the next field. */
static inline uint64_t nidus_swar_zero_fields(const nidus_swar *s, uint64_t word)
{
    uint64_t t = (word & s->low) + s->low;
    return ~(t | word | s->low) & s->high;
}

/* Nonzero iff some field of `word` is zero (Mycroft's test, 3 operations where nidus_swar_zero_fields takes 4).
 * Exact as a yes/no: with no zero field, subtracting 1 from each borrows nowhere and no field's high bit is
 * set in (f - 1) & ~f; else the lowest zero field becomes all ones. Only which bits are set above a zero field
 * can be wrong (a borrow), so it cannot count matches; bits above the last field are masked off by `high`. */
static inline uint64_t nidus_swar_any_zero(const nidus_swar *s, uint64_t word)
{
    return (word - s->ones) & ~word;
}

/* The `high` bit of every field of `word` equal to `value`. */
static inline uint64_t nidus_swar_match(const nidus_swar *s, uint64_t word, uint64_t value)
{
    return nidus_swar_zero_fields(s, word ^ (value * s->ones));
}

#endif

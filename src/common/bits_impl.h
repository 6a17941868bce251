/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: reading and writing bit fields packed back to back in a little-endian byte array.
 *
 * Field k of width w occupies bits [k*w, (k+1)*w) of the array, bit 0 being the lowest bit of byte 0, on every
 * host; this is also the on-disk layout, so tables are saved and loaded without conversion. Arrays carry
 * NIDUS_BITS_SLACK zero bytes past their last field so a read may always load 8 bytes (and one more) at the
 * field's first byte without a bounds branch. */
#ifndef NIDUS_SRC_BITS_IMPL_H
#define NIDUS_SRC_BITS_IMPL_H

#include <stdint.h>
#include <string.h>

#define NIDUS_BITS_SLACK 16u

static inline uint64_t nidus_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline void nidus_store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, sizeof v);
}

static inline uint64_t nidus_low_mask(unsigned n) { return n >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1; }

/* The n bits (1..64) starting at bit `pos`. One unaligned load, plus one byte when the field reaches past the
 * 8 loaded bytes (only possible when n > 57). */
static inline uint64_t nidus_bits_read(const uint8_t *a, uint64_t pos, unsigned n)
{
    const uint8_t *p = a + (pos >> 3);
    unsigned shift = (unsigned)(pos & 7);
    uint64_t v = nidus_load_le64(p) >> shift;
    if (shift + n > 64)
        v |= (uint64_t)p[8] << (64 - shift);
    return v & nidus_low_mask(n);
}

/* Overwrites the n bits (1..64) at bit `pos` with the low n bits of `value`. */
static inline void nidus_bits_write(uint8_t *a, uint64_t pos, unsigned n, uint64_t value)
{
    uint8_t *p = a + (pos >> 3);
    unsigned shift = (unsigned)(pos & 7);
    uint64_t mask = nidus_low_mask(n);
    value &= mask;
    uint64_t w = nidus_load_le64(p);
    w = (w & ~(mask << shift)) | (value << shift);
    nidus_store_le64(p, w);
    if (shift + n > 64) {
        unsigned spill = shift + n - 64; /* bits that land in byte p[8] */
        uint8_t hi_mask = (uint8_t)((1u << spill) - 1);
        p[8] = (uint8_t)((p[8] & ~hi_mask) | (uint8_t)(value >> (64 - shift)));
    }
}

#endif

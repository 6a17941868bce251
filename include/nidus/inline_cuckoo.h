/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — inline lookups and adds of the common cuckoo filter shapes, for the opt-in inline path (nidus/inline.h).
 *
 * With NIDUS_INLINE defined before nidus/nidus.h, nidus_cuckoo_contains, _contains_hash, _add and _add_hash are
 * the static inline functions below (adds: see NIDUS_INLINE_ADDS and NIDUS_INLINE_SEMI_ADDS): for a filter in a
 * state they serve, the lookup or add is compiled into the caller's loop; for any other filter, and for keys longer than 16 bytes, they call the library function of the
 * same name. A filter publishes what they read in the first bytes of its handle (struct nidus_cuckoo_view, a
 * separate name from the function nidus_cuckoo_view, which views an encoding), whose first
 * word is a tag for the view's layout version and the filter's state. The library writes a tag this header knows
 * only while the filter is one writable table of a fast kernel (plain buckets of one 64-bit word, b=4 f=12 and
 * the other whole-byte shapes; other plain buckets of at most 57 bits, read at a bit offset, such as b=4 f=13;
 * or semi-sorted f=13), at least 2^16 buckets (about 250,000 items at b=4), with an empty overflow map; every
 * other state (packed, grown, with a stash, a read-only view, loading, older formats) has a tag no header knows.
 * Every call here compares the tag (up to three times) and calls the library for any other value: a program
 * built against this header stays
 * correct against a later library, whose other layouts carry other tags. The answers and the bytes written are
 * the library's own: the same hash (nidus/inline_hash.h), placement and bucket encoding. */
#ifndef NIDUS_INLINE_CUCKOO_H
#define NIDUS_INLINE_CUCKOO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cuckoo.h"
#include "inline_hash.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layout version 1 of the view: the first 104 bytes of a cuckoo handle (on 64-bit targets). */
struct nidus_cuckoo_view {
    uint32_t tag;            /* NIDUS_CUCKOO_TAG_*; anything else: call the library */
    uint8_t fp_bits;         /* f */
    uint8_t bucket_size;     /* b (4 when semi-sorted) */
    uint8_t bucket_bytes;    /* bytes of one bucket: bucket i starts at data + i * bucket_bytes (0: see TAG_BITS) */
    uint8_t offset_shift;    /* the alternate bucket's offset is (fp * 0x9E3779B1 mod 2^32) >> offset_shift, odd */
    const void *reserved0;   /* the library's */
    uint64_t seed;           /* the hash seed */
    uint64_t hash8_flip;     /* nidus_inline_hash8_flip(seed) */
    uint8_t *data;           /* the buckets, 8 readable bytes past each one's start */
    uint64_t buckets;        /* m: a hash h's first bucket is the high half of h * m */
    uint64_t xor_limit;      /* below it the alternate bucket is i XOR offset; from it the parity rule */
    uint64_t *occupied;      /* the count of stored fingerprints an add increments */
    uint64_t ones;           /* SWAR: the lowest bit of each field (b fields of f bits; semi: four of f - 4) */
    uint64_t high;           /* the highest bit of each field */
    const uint16_t *semi_unrank;    /* semi-sorted: rank (12 bits) -> four sorted nibbles, 4 bits each */
    const uint16_t *semi_rank_part; /* [4][16]: the rank of nibble n at sorted position k is entry k * 16 + n */
    uint32_t fp_mask;        /* 2^f - 1 */
    uint32_t reserved1;      /* the library's */
};

/* The tag of a state and layout version. Byte 0 of the handle is the state, the other three the version, on
 * either byte order. The states' low bit is the compiled copy the library chose for the CPU: it does not matter
 * here, so a tag is compared with that bit set (NIDUS_CUCKOO_TAG_ANY_COPY). */
#define NIDUS_CUCKOO_VIEW_VERSION 1u
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NIDUS_CUCKOO_TAG(state, version) (((uint32_t)(state) << 24) | ((uint32_t)(version) | UINT32_C(0x4E4300)))
#else
#define NIDUS_CUCKOO_TAG(state, version) ((uint32_t)(state) | (((uint32_t)(version) | UINT32_C(0x4E4300)) << 8))
#endif
#define NIDUS_CUCKOO_TAG_ANY_COPY (NIDUS_CUCKOO_TAG(1u, 0u) ^ NIDUS_CUCKOO_TAG(0u, 0u))
/* One writable table, plain one-word buckets / semi-sorted one-word buckets, as described above. */
#define NIDUS_CUCKOO_TAG_PLAIN NIDUS_CUCKOO_TAG(17u, NIDUS_CUCKOO_VIEW_VERSION)
#define NIDUS_CUCKOO_TAG_SEMI NIDUS_CUCKOO_TAG(19u, NIDUS_CUCKOO_VIEW_VERSION)
/* One writable table of plain buckets of b * f bits (at most 57, not whole bytes), back to back from bit 0 of
 * data: bucket i starts at bit i * b * f (nidus_inline_cuckoo_bits_word); bucket_bytes is 0. */
#define NIDUS_CUCKOO_TAG_BITS NIDUS_CUCKOO_TAG(25u, NIDUS_CUCKOO_VIEW_VERSION)

static inline const struct nidus_cuckoo_view *nidus_cuckoo_view_of(const nidus_cuckoo *filter)
{
    return (const struct nidus_cuckoo_view *)(const void *)filter;
}

/* The filter's tag with the copy's bit set: compare with NIDUS_CUCKOO_TAG_PLAIN or _SEMI. */
static inline uint32_t nidus_cuckoo_view_state(const struct nidus_cuckoo_view *v)
{
    return v->tag | NIDUS_CUCKOO_TAG_ANY_COPY;
}

static inline uint64_t nidus_inline_mulhi64(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 nidus_inline_u128_;
    return (uint64_t)(((nidus_inline_u128_)a * b) >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, hl = ah * bl, lh = al * bh, hh = ah * bh;
    uint64_t cross = (ll >> 32) + (uint32_t)hl + lh;
    return hh + (hl >> 32) + (cross >> 32);
#endif
}

static inline void nidus_inline_write64(void *p, uint64_t v)
{
    v = NIDUS_INLINE_LE64(v);
    memcpy(p, &v, sizeof v);
}

static inline unsigned nidus_inline_ctz64(uint64_t x) /* x != 0 */
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(x);
#else
    unsigned n = 0;
    while (!(x & 1)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

/* The placement rules, written once here: the library's tables take them from this header too
 * (src/cuckoo/cuckoo_table_impl.h includes it).
 * A fingerprint is the low bits of its source under `mask`, with 0 (which marks an empty slot) read as 1. Taking
 * low bits makes a shorter fingerprint the truncation of a longer one (0 -> 1 commutes with truncation), which
 * lets compaction move items between tables of different f; the price is that the value 1 is twice as likely
 * as the others, which the error bound accounts for. */
static inline uint32_t nidus_inline_cuckoo_fingerprint(uint32_t source, uint32_t mask)
{
    uint32_t fp = source & mask;
    return fp | (uint32_t)(fp == 0);
}

/* The alternate bucket's odd offset from a fingerprint's offset bits o (not 0: read 0 as 1 first), below
 * 2^(32 - shift): the high bits of (o * 0x9E3779B1) mod 2^32, shift = 32 - reach_log2. */
static inline uint64_t nidus_inline_cuckoo_offset(uint32_t o, unsigned shift)
{
    return ((uint64_t)(uint32_t)(o * UINT32_C(0x9E3779B1)) >> shift) | 1;
}

/* A hash's fingerprint and two buckets (the library's range placement for a first table). */
static inline uint32_t nidus_cuckoo_view_locate(const struct nidus_cuckoo_view *v, uint64_t hash, uint64_t *i, uint64_t *j)
{
    uint32_t fp = nidus_inline_cuckoo_fingerprint((uint32_t)hash, v->fp_mask);
    uint64_t a = nidus_inline_mulhi64(hash, v->buckets), l = v->xor_limit;
    uint64_t r = nidus_inline_cuckoo_offset(fp, v->offset_shift);
    *i = a;
    if (a < l) {
        *j = a ^ r;
    } else { /* the last block: +r from an even position, -r from an odd one, modulo its size */
        uint64_t m = v->buckets - l, x = a - l, y = x + ((x & 1) ? m - r : r);
        *j = l + (y >= m ? y - m : y);
    }
    return fp;
}

static inline uint64_t nidus_cuckoo_view_word(const struct nidus_cuckoo_view *v, uint64_t i)
{
    return nidus_inline_read64(v->data + i * v->bucket_bytes);
}

/* Bucket i of plain buckets of `bucket_bits` bits (at most 57) stored back to back from bit 0 of `data`: the 64
 * bits from its first bit, with one load (the bucket, then bits of the next, which SWAR matching ignores). The
 * library's tables read such buckets with this function too (src/cuckoo/cuckoo_table_impl.h). */
static inline uint64_t nidus_inline_cuckoo_bits_word(const uint8_t *data, uint64_t i, unsigned bucket_bits)
{
    uint64_t pos = i * bucket_bits;
    return nidus_inline_read64(data + (pos >> 3)) >> (pos & 7);
}

/* TAG_BITS: bucket i's word (b * f bits a bucket). */
static inline uint64_t nidus_cuckoo_view_bits_word(const struct nidus_cuckoo_view *v, uint64_t i)
{
    return nidus_inline_cuckoo_bits_word(v->data, i, (unsigned)v->bucket_size * v->fp_bits);
}

/* The high bit of every field of w that is zero (exact). */
static inline uint64_t nidus_cuckoo_view_zero_fields(const struct nidus_cuckoo_view *v, uint64_t w)
{
    uint64_t low = v->high - v->ones;
    return ~(((w & low) + low) | w | low) & v->high;
}

/* True when fp is a field of plain bucket word wi or wj (the bits past the bucket ignored). */
static inline bool nidus_cuckoo_view_pair_has(const struct nidus_cuckoo_view *v, uint64_t wi, uint64_t wj, uint32_t fp)
{
    uint64_t pattern = fp * v->ones;
    wi ^= pattern;
    wj ^= pattern;
    return ((((wi - v->ones) & ~wi) | ((wj - v->ones) & ~wj)) & v->high) != 0;
}

static inline bool nidus_cuckoo_view_plain_contains(const struct nidus_cuckoo_view *v, uint64_t hash)
{
    uint64_t i, j;
    uint32_t fp = nidus_cuckoo_view_locate(v, hash, &i, &j);
    return nidus_cuckoo_view_pair_has(v, nidus_cuckoo_view_word(v, i), nidus_cuckoo_view_word(v, j), fp);
}

static inline bool nidus_cuckoo_view_bits_contains(const struct nidus_cuckoo_view *v, uint64_t hash)
{
    uint64_t i, j;
    uint32_t fp = nidus_cuckoo_view_locate(v, hash, &i, &j);
    return nidus_cuckoo_view_pair_has(v, nidus_cuckoo_view_bits_word(v, i), nidus_cuckoo_view_bits_word(v, j), fp);
}

/* Semi-sorted: the slots of bucket word `raw` whose high part matched (high_hits) and whose low nibble is fp's. */
static inline unsigned nidus_cuckoo_view_semi_hits(const struct nidus_cuckoo_view *v, uint64_t raw, uint64_t high_hits,
                                                   uint32_t fp)
{
    unsigned hb = v->fp_bits - 4u;
    uint64_t z = v->semi_unrank[raw & 4095u] ^ ((fp & 15u) * UINT64_C(0x1111));
    uint64_t zero = ~(((z & 0x7777) + 0x7777) | z | 0x7777) & 0x8888;
    uint64_t nib = (((zero >> 3) * 0x1248) >> 12) & 15;
    uint64_t h = high_hits >> (hb - 1u);
    uint64_t slots = (h & 1) | ((h >> (hb - 1u)) & 2) | ((h >> (2u * hb - 2u)) & 4) | ((h >> (3u * hb - 3u)) & 8);
    return (unsigned)(nib & slots);
}

static inline bool nidus_cuckoo_view_semi_contains(const struct nidus_cuckoo_view *v, uint64_t hash)
{
    uint64_t i, j;
    uint32_t fp = nidus_cuckoo_view_locate(v, hash, &i, &j);
    uint64_t ri = nidus_cuckoo_view_word(v, i), rj = nidus_cuckoo_view_word(v, j);
    uint64_t pattern = (fp >> 4) * v->ones;
    uint64_t hi = nidus_cuckoo_view_zero_fields(v, (ri >> 12) ^ pattern);
    uint64_t hj = nidus_cuckoo_view_zero_fields(v, (rj >> 12) ^ pattern);
    if (!(hi | hj)) /* an absent key, nearly always */
        return false;
    return (hi && nidus_cuckoo_view_semi_hits(v, ri, hi, fp)) || (hj && nidus_cuckoo_view_semi_hits(v, rj, hj, fp));
}

/* Adds: the item goes into the emptier bucket of its pair (the first on a tie), in the slot the library's add
 * would choose; false when both are full (then the library's add makes room, counts a duplicate, or grows). */

/* Free slots of a plain bucket word, given its zero fields z: summed into the top field by one multiply. */
static inline unsigned nidus_cuckoo_view_free(const struct nidus_cuckoo_view *v, uint64_t z)
{
    unsigned f = v->fp_bits, top = (v->bucket_size - 1u) * f;
    return (unsigned)((((z >> (f - 1u)) * v->ones) >> top) & 15u);
}

static inline bool nidus_cuckoo_view_plain_put(const struct nidus_cuckoo_view *v, uint64_t hash)
{
    uint64_t i, j;
    uint32_t fp = nidus_cuckoo_view_locate(v, hash, &i, &j);
    uint8_t *pi = v->data + i * v->bucket_bytes, *pj = v->data + j * v->bucket_bytes;
    uint64_t wi = nidus_inline_read64(pi), wj = nidus_inline_read64(pj);
    uint64_t zi = nidus_cuckoo_view_zero_fields(v, wi), zj = nidus_cuckoo_view_zero_fields(v, wj);
    if (!(zi | zj))
        return false;
    bool to_j = nidus_cuckoo_view_free(v, zj) > nidus_cuckoo_view_free(v, zi);
    uint64_t w = to_j ? wj : wi, z = to_j ? zj : zi;
    nidus_inline_write64(to_j ? pj : pi, w | ((uint64_t)fp << (nidus_inline_ctz64(z) - (v->fp_bits - 1u))));
    ++*v->occupied;
    return true;
}

/* TAG_BITS: as nidus_cuckoo_view_plain_put, the fingerprint ORed into the 8 bytes from its slot's first byte (its
 * bit offset there plus f is at most 7 + 32); the bytes past it are written back unchanged, inside the table's
 * slack. */
static inline bool nidus_cuckoo_view_bits_put(const struct nidus_cuckoo_view *v, uint64_t hash)
{
    uint64_t i, j;
    uint32_t fp = nidus_cuckoo_view_locate(v, hash, &i, &j);
    unsigned bits = (unsigned)v->bucket_size * v->fp_bits;
    uint64_t wi = nidus_inline_cuckoo_bits_word(v->data, i, bits), wj = nidus_inline_cuckoo_bits_word(v->data, j, bits);
    uint64_t zi = nidus_cuckoo_view_zero_fields(v, wi), zj = nidus_cuckoo_view_zero_fields(v, wj);
    if (!(zi | zj))
        return false;
    bool to_j = nidus_cuckoo_view_free(v, zj) > nidus_cuckoo_view_free(v, zi);
    uint64_t pos = (to_j ? j : i) * bits + nidus_inline_ctz64(to_j ? zj : zi) - (v->fp_bits - 1u);
    uint8_t *p = v->data + (pos >> 3);
    nidus_inline_write64(p, nidus_inline_read64(p) | ((uint64_t)fp << (pos & 7)));
    ++*v->occupied;
    return true;
}

/* Semi-sorted: a bucket's four sort keys (low nibble, then high part; empty slots are 0 and sort first). */
static inline void nidus_cuckoo_view_semi_keys(const struct nidus_cuckoo_view *v, uint64_t w, uint32_t k[4])
{
    unsigned hb = v->fp_bits - 4u;
    uint32_t hmask = (uint32_t)((UINT64_C(1) << hb) - 1u);
    uint64_t high = w >> 12;
    unsigned nib = v->semi_unrank[w & 4095u];
    for (unsigned s = 0; s < 4; s++)
        k[s] = (((nib >> (4u * s)) & 15u) << 28) | ((uint32_t)(high >> (s * hb)) & hmask);
}

static inline bool nidus_cuckoo_view_semi_put(const struct nidus_cuckoo_view *v, uint64_t hash)
{
    uint64_t i, j;
    uint32_t fp = nidus_cuckoo_view_locate(v, hash, &i, &j);
    uint8_t *pi = v->data + i * v->bucket_bytes, *pj = v->data + j * v->bucket_bytes;
    uint64_t wi = nidus_inline_read64(pi), wj = nidus_inline_read64(pj);
    uint32_t ki[4], kj[4];
    nidus_cuckoo_view_semi_keys(v, wi, ki);
    nidus_cuckoo_view_semi_keys(v, wj, kj);
    unsigned fi = (unsigned)(ki[0] == 0) + (ki[1] == 0) + (ki[2] == 0) + (ki[3] == 0);
    unsigned fj = (unsigned)(kj[0] == 0) + (kj[1] == 0) + (kj[2] == 0) + (kj[3] == 0);
    if (!(fi | fj))
        return false;
    bool to_j = fj > fi;
    uint64_t w = to_j ? wj : wi;
    uint32_t *k = to_j ? kj : ki;
    k[0] = ((fp & 15u) << 28) | (fp >> 4); /* the first slot is free: the new key moves up past the others */
    for (unsigned s = 1; s < 4; s++) {
        uint32_t lo = k[s - 1] < k[s] ? k[s - 1] : k[s], hi = k[s - 1] < k[s] ? k[s] : k[s - 1];
        k[s - 1] = lo;
        k[s] = hi;
    }
    unsigned hb = v->fp_bits - 4u, bits = 4u * v->fp_bits - 4u;
    uint32_t hmask = (uint32_t)((UINT64_C(1) << hb) - 1u);
    const uint16_t *rp = v->semi_rank_part;
    uint64_t enc = (uint64_t)rp[k[0] >> 28] + rp[16 + (k[1] >> 28)] + rp[32 + (k[2] >> 28)] + rp[48 + (k[3] >> 28)];
    for (unsigned s = 0; s < 4; s++)
        enc |= (uint64_t)(k[s] & hmask) << (12u + s * hb);
    nidus_inline_write64(to_j ? pj : pi, (w & ~((UINT64_C(1) << bits) - 1u)) | enc);
    ++*v->occupied;
    return true;
}

/* ---- the calls. Each compares the tag once; any state it does not know goes to the library. */

static inline bool nidus_cuckoo_inline_contains_hash(const nidus_cuckoo *filter, uint64_t hash)
{
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(filter);
    uint32_t state = nidus_cuckoo_view_state(v);
    if (state == NIDUS_CUCKOO_TAG_PLAIN)
        return nidus_cuckoo_view_plain_contains(v, hash);
    if (state == NIDUS_CUCKOO_TAG_SEMI)
        return nidus_cuckoo_view_semi_contains(v, hash);
    if (state == NIDUS_CUCKOO_TAG_BITS)
        return nidus_cuckoo_view_bits_contains(v, hash);
    return (nidus_cuckoo_contains_hash)(filter, hash);
}

/* The key's hash as the library computes it, for keys of up to 16 bytes. */
static inline uint64_t nidus_cuckoo_view_hash(const struct nidus_cuckoo_view *v, const void *key, size_t len)
{
    return len == 8 ? nidus_inline_hash8(key, v->hash8_flip) : nidus_inline_hash_short(key, len, v->seed);
}

static inline bool nidus_cuckoo_inline_contains(const nidus_cuckoo *filter, const void *key, size_t len)
{
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(filter);
    uint32_t state = nidus_cuckoo_view_state(v);
    if (state == NIDUS_CUCKOO_TAG_PLAIN && len <= 16)
        return nidus_cuckoo_view_plain_contains(v, nidus_cuckoo_view_hash(v, key, len));
    if (state == NIDUS_CUCKOO_TAG_SEMI && len <= 16)
        return nidus_cuckoo_view_semi_contains(v, nidus_cuckoo_view_hash(v, key, len));
    if (state == NIDUS_CUCKOO_TAG_BITS && len <= 16)
        return nidus_cuckoo_view_bits_contains(v, nidus_cuckoo_view_hash(v, key, len));
    return (nidus_cuckoo_contains)(filter, key, len);
}

/* Adds inline, or through the library: NIDUS_INLINE_ADDS 1 or 0 chooses; by default inline where the compiler
 * targets BMI2 (x86-64-v3 and later: -march=x86-64-v3, -march=native) or a CPU other than x86-64. The add's
 * bucket arithmetic is variable shifts and a count of trailing zeros, which baseline x86-64 code does in more,
 * slower instructions than the library's own copy for the CPU (isa_impl.h): there, measured side by side, the
 * library's add was faster (c12 by key 7 %). Semi-sorted adds stay the library's unless NIDUS_INLINE_SEMI_ADDS
 * is 1: decoding, sorting and encoding two buckets in the caller measured slower than the library's add even
 * in a caller compiled for x86-64-v3 (10M: 0.72 against 0.95 of the paper's rate). */
#ifndef NIDUS_INLINE_ADDS
#if !defined(__x86_64__) || defined(__BMI2__)
#define NIDUS_INLINE_ADDS 1
#else
#define NIDUS_INLINE_ADDS 0
#endif
#endif
#ifndef NIDUS_INLINE_SEMI_ADDS
#define NIDUS_INLINE_SEMI_ADDS 0
#endif

static inline nidus_status nidus_cuckoo_inline_add_hash(nidus_cuckoo *filter, uint64_t hash)
{
#if NIDUS_INLINE_ADDS
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(filter);
    uint32_t state = nidus_cuckoo_view_state(v);
    if (state == NIDUS_CUCKOO_TAG_PLAIN && nidus_cuckoo_view_plain_put(v, hash))
        return NIDUS_OK;
    if (state == NIDUS_CUCKOO_TAG_BITS && nidus_cuckoo_view_bits_put(v, hash))
        return NIDUS_OK;
#if NIDUS_INLINE_SEMI_ADDS
    if (state == NIDUS_CUCKOO_TAG_SEMI && nidus_cuckoo_view_semi_put(v, hash))
        return NIDUS_OK;
#endif
#endif
    return (nidus_cuckoo_add_hash)(filter, hash);
}

static inline nidus_status nidus_cuckoo_inline_add(nidus_cuckoo *filter, const void *key, size_t len)
{
#if NIDUS_INLINE_ADDS
    const struct nidus_cuckoo_view *v = nidus_cuckoo_view_of(filter);
    uint32_t state = nidus_cuckoo_view_state(v);
    if (state == NIDUS_CUCKOO_TAG_PLAIN && len <= 16) {
        uint64_t hash = nidus_cuckoo_view_hash(v, key, len);
        return nidus_cuckoo_view_plain_put(v, hash) ? NIDUS_OK : (nidus_cuckoo_add_hash)(filter, hash);
    }
    if (state == NIDUS_CUCKOO_TAG_BITS && len <= 16) {
        uint64_t hash = nidus_cuckoo_view_hash(v, key, len);
        return nidus_cuckoo_view_bits_put(v, hash) ? NIDUS_OK : (nidus_cuckoo_add_hash)(filter, hash);
    }
#if NIDUS_INLINE_SEMI_ADDS
    if (state == NIDUS_CUCKOO_TAG_SEMI && len <= 16) {
        uint64_t hash = nidus_cuckoo_view_hash(v, key, len);
        return nidus_cuckoo_view_semi_put(v, hash) ? NIDUS_OK : (nidus_cuckoo_add_hash)(filter, hash);
    }
#endif
#endif
    return (nidus_cuckoo_add)(filter, key, len);
}

/* The public names, inline from here on (a parenthesised name, `(nidus_cuckoo_contains)(...)`, is the library's).
 * Only under NIDUS_INLINE: the library itself reads the view's type from this header. */
#ifdef NIDUS_INLINE
#define nidus_cuckoo_contains(filter, key, len) nidus_cuckoo_inline_contains((filter), (key), (len))
#define nidus_cuckoo_contains_hash(filter, hash) nidus_cuckoo_inline_contains_hash((filter), (hash))
#define nidus_cuckoo_add(filter, key, len) nidus_cuckoo_inline_add((filter), (key), (len))
#define nidus_cuckoo_add_hash(filter, hash) nidus_cuckoo_inline_add_hash((filter), (hash))
#endif

#ifdef __cplusplus
}
#endif

#endif

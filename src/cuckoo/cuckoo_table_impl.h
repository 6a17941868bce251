/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the hot paths of a cuckoo table, inline so that lookups compile to straight-line code.
 *
 * Placement (range placement, format version 5 on). A key's 64-bit hash h gives
 *     primary bucket  i = floor(h * m / 2^64)          (one multiply, the high half; m = buckets)
 *     fingerprint     fp = the low f bits of h, 0 read as 1
 * and the alternate bucket of bucket i for fingerprint fp is, in the filter's first table (m0 buckets), with r an
 * odd offset below B = 2^reach_log2 hashed from the fingerprint's low offset_bits:
 *     alt(i) = i XOR r                                  for i < L (L: nidus_range_xor_limit, a multiple of B)
 *     alt(i) = L + ((i - L) + r  (mod m0 - L))          for i >= L, i - L even
 *     alt(i) = L + ((i - L) - r  (mod m0 - L))          for i >= L, i - L odd.
 * Below L the table is whole B-aligned blocks and the XOR keeps a key's two buckets in its block (one instruction
 * on the lookup's critical path); the last block, merged with what is left over past the last whole one so that
 * it holds at least B buckets when the table does, takes the parity rule, which needs only an even size (an odd
 * r flips parity, so alt is an involution without fixed points there too). A table of a multiple of B buckets
 * (every size from 1M items up the sizing gives here) has no such block: L = m0. Bucket and fingerprint come
 * from opposite ends of h, so neither waits for the other and they are independent (the bucket depends on h's
 * low 32 bits only through a carry while m <= 2^32).
 *
 * A grown table has m = m0 * stride buckets (stride = expansion^k). Its bucket i is read as the digit pair
 * (a, d) = (i / stride, i mod stride), and alt moves only the high digit: alt(i) = alt0(a) * stride + d. Since
 * floor(floor(x * q) / q) = floor(x), the primary bucket in a table q times smaller is floor(i / q), and with
 * alt acting on the high digit alone the pair reduces with it: that is what lets compaction move fingerprints
 * between tables exactly. (The high digit of the primary bucket is floor(h * m0 / 2^64) itself.)
 *
 * Mod placement (format versions 1-4, kept for the filters they hold: shape.mod_placement): the primary bucket
 * is h mod m (exact, by a multiply, fastmod_impl.h), the fingerprint the low f bits of a murmur3-finalised h,
 * and alt the same parity rule over the whole table, which commutes with reduction modulo a divisor of m. */
#ifndef NIDUS_SRC_CUCKOO_TABLE_IMPL_H
#define NIDUS_SRC_CUCKOO_TABLE_IMPL_H

#include "bits_impl.h"
#include "cuckoo_table.h"
#include "hash_impl.h"
#include "isa_impl.h"
#include "nidus/inline_cuckoo.h"
#include "semisort.h"

/* The primary bucket of hash h among m under range placement: floor(h * m / 2^64). */
static inline uint64_t nidus_range_reduce(uint64_t h, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)h * m) >> 64);
}

/* Where a hash lives in table t. */
static inline void nidus_table_locate(const nidus_table *t, uint64_t hash, uint64_t *bucket, uint32_t *fp)
{
    if (t->shape.mod_placement) {
        *bucket = nidus_fastmod_reduce(&t->bucket_mod, hash);
        *fp = nidus_inline_cuckoo_fingerprint(nidus_fingerprint_source_mod(hash), t->fp_mask);
    } else {
        *bucket = nidus_range_reduce(hash, t->shape.buckets);
        *fp = nidus_inline_cuckoo_fingerprint((uint32_t)hash, t->fp_mask);
    }
}

/* The offset comes from the fingerprint's low offset_bits, with 0 read as 1 just as a fingerprint of 0 is
 * stored as 1: then a table with longer fingerprints, whose fp truncates to this one's, offsets identically,
 * which is what compaction needs (see nidus_inline_cuckoo_fingerprint). Reduced modulo bucket_mod's divisor (the first
 * table's buckets, or this table's under mod placement) when that is below the reach. */
static inline uint64_t nidus_table_offset(const nidus_table *t, uint32_t fp)
{
    uint32_t o = fp & t->offset_mask;
    uint64_t r = nidus_inline_cuckoo_offset(o | (uint32_t)(o == 0), 32u - t->shape.reach_log2);
    if (r >= t->bucket_mod.d) /* only tables smaller than the reach */
        r = nidus_fastmod_reduce(&t->bucket_mod, r);
    return r;
}

/* i's parity is a coin flip per key, so this is written for conditional moves, not branches: i - r (mod m)
 * is i + (m - r) (mod m), and with i < m, 0 < r < m one conditional subtract finishes either case. */
static inline uint64_t nidus_table_alt_by(uint64_t i, uint64_t r, uint64_t m)
{
    uint64_t j = i + ((i & 1) ? m - r : r);
    return j >= m ? j - m : j;
}

/* Range placement: where alt stops being a XOR in a first table of m0 buckets with offsets below 2^reach: m0
 * when it is whole blocks of 2^reach, else the start of its last whole block (0 below two blocks). */
static inline uint64_t nidus_range_xor_limit(uint64_t m0, unsigned reach)
{
    uint64_t blocks = m0 >> reach;
    if (m0 == blocks << reach)
        return m0;
    return blocks >= 2 ? (blocks - 1) << reach : 0;
}

/* Range placement's alt in the first table's size m0 (see the top of this file). */
static inline uint64_t nidus_range_alt0(const nidus_table *t, uint64_t a, uint64_t r, uint64_t m0)
{
    uint64_t l = t->xor_limit;
    if (__builtin_expect(a < l, 1))
        return a ^ r;
    return l + nidus_table_alt_by(a - l, r, m0 - l);
}

static inline uint64_t nidus_table_alt(const nidus_table *t, uint64_t i, uint32_t fp)
{
    uint64_t r = nidus_table_offset(t, fp), stride = t->shape.stride;
    if (t->shape.mod_placement)
        return nidus_table_alt_by(i, r, t->shape.buckets);
    if (stride == 1) /* every first table */
        return nidus_range_alt0(t, i, r, t->shape.buckets);
    uint64_t a = i / stride; /* the high digit; a grown table, off the fast paths */
    return i - a * stride + nidus_range_alt0(t, a, r, t->bucket_mod.d) * stride;
}

/* Up to 64 bits at bit `pos`, without masking off the bits above n: SWAR matching ignores them. The 9th byte
 * is always loaded (the slack makes it readable), shifted out when the field fits in the first eight. */
static inline uint64_t nidus_table_read_raw(const uint8_t *data, uint64_t pos)
{
    const uint8_t *p = data + (pos >> 3);
    unsigned shift = (unsigned)(pos & 7);
    return (nidus_load_le64(p) >> shift) | (((uint64_t)p[8] << 1) << (63 - shift));
}

/* How lookups read buckets, chosen once per table (nidus_table_plan_probe). Buckets of whole bytes that fit in
 * one 64-bit load (b=4 f=12 and semi-sorted f=13 are 48 bits) are read with one load at i * bucket_bytes:
 * no shift, no 9th byte, no loop over chunks. Other plain buckets of at most 64 bits (b=4 f=13: 52) are one
 * chunk, read as one word at bit i * bucket_bits (nidus_table_read_raw) and matched with the same SWAR. */
enum {
    NIDUS_PROBE_GENERAL = 0,   /* nidus_table_read_raw, chunk by chunk */
    NIDUS_PROBE_PLAIN_WORD,    /* plain, bucket_bits a multiple of 8 and <= 64 */
    NIDUS_PROBE_SEMI_WORD,     /* semi-sorted, bucket_bits a multiple of 8 and <= 64 */
    NIDUS_PROBE_PLAIN_BITS,    /* plain, bucket_bits <= 64 but not a multiple of 8 */
};

/* Which lookup kernel a table takes (see nidus_table_lookup, and the filter-level kernels of cuckoo_kernels.h that
 * the dispatch byte chooses: NIDUS_DISPATCH_PLAIN, _SEMI and _BITS). */
enum { NIDUS_FAST_NONE = 0, NIDUS_FAST_PLAIN, NIDUS_FAST_SEMI, NIDUS_FAST_PLAIN_BITS, NIDUS_FAST_PLAIN_WIDE_BITS };

/* Plain buckets of up to this many bits lie, from any bit offset, within the 8 bytes from their first byte:
 * NIDUS_FAST_PLAIN_BITS reads them with one load (nidus_table_short_bits_word). Wider ones (b=4 f=15, b=2
 * f=29..31) need the 9th byte: NIDUS_FAST_PLAIN_WIDE_BITS, a kernel of nidus_table_lookup's only. */
#define NIDUS_SHORT_BITS_MAX 57u

/* The lookup kernel a table's shape allows (t->kernel). */
static inline unsigned char nidus_table_plan_kernel(const nidus_table *t)
{
    bool direct = t->offset_mask == t->fp_mask && !t->shape.mod_placement && t->shape.stride == 1;
    if (!direct)
        return NIDUS_FAST_NONE;
    return t->probe == NIDUS_PROBE_PLAIN_WORD   ? NIDUS_FAST_PLAIN
           : t->probe == NIDUS_PROBE_SEMI_WORD  ? NIDUS_FAST_SEMI
           : t->probe != NIDUS_PROBE_PLAIN_BITS ? NIDUS_FAST_NONE
           : t->bucket_bits <= NIDUS_SHORT_BITS_MAX ? NIDUS_FAST_PLAIN_BITS
                                                    : NIDUS_FAST_PLAIN_WIDE_BITS;
}

/* t->fast: the kernel, but NIDUS_FAST_NONE while the overflow map is not empty. The filter-level leaf kernels
 * (cuckoo.c, cuckoo_batch.c) never read the map, and a stash entry's copy is found only there; a table with a map
 * is looked up through nidus_table_lookup, which asks it after a miss (nidus_table_overflow_changed). */
static inline unsigned char nidus_table_plan_fast(const nidus_table *t)
{
    return t->overflow.used ? NIDUS_FAST_NONE : t->kernel;
}

static inline void nidus_table_plan_probe(nidus_table *t)
{
    bool word = t->bucket_bits % 8 == 0 && t->bucket_bits <= 64;
    t->bucket_bytes = word ? t->bucket_bits / 8 : 0;
    t->probe = word                 ? (t->shape.semi_sort ? NIDUS_PROBE_SEMI_WORD : NIDUS_PROBE_PLAIN_WORD)
               : t->shape.semi_sort || t->bucket_bits > 64 ? NIDUS_PROBE_GENERAL
                                                           : NIDUS_PROBE_PLAIN_BITS;
    t->offset_shift = 32 - t->shape.reach_log2;
    t->offset_wraps = (t->bucket_mod.d >> t->shape.reach_log2) == 0;
    t->isa = nidus_isa_detect();
    t->kernel = nidus_table_plan_kernel(t);
    t->fast = nidus_table_plan_fast(t);
}

/* The 64 bits at the start of bucket i of a *_WORD table (the bits past the bucket belong to the next one). */
static inline uint64_t nidus_table_word(const nidus_table *t, uint64_t i)
{
    return nidus_load_le64(t->data + i * t->bucket_bytes);
}

/* The 64 bits at the start of bucket i of a NIDUS_PROBE_PLAIN_BITS table (the bits past the bucket are the
 * next one's). */
static inline uint64_t nidus_table_bits_word(const nidus_table *t, uint64_t i)
{
    return nidus_table_read_raw(t->data, i * t->bucket_bits);
}

/* The bits from the start of bucket i of a NIDUS_PROBE_PLAIN_BITS table of at most NIDUS_SHORT_BITS_MAX bits a
 * bucket: the whole bucket, then 64 - shift - bucket_bits bits of the next one (SWAR matching ignores them). */
static inline uint64_t nidus_table_short_bits_word(const nidus_table *t, uint64_t i)
{
    return nidus_inline_cuckoo_bits_word(t->data, i, t->bucket_bits);
}

/* The 64 bits at the start of bucket i, for any table whose bucket fits in 64 bits. */
static inline uint64_t nidus_table_bucket_raw(const nidus_table *t, uint64_t i)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD || t->probe == NIDUS_PROBE_SEMI_WORD)
        return nidus_table_word(t, i);
    return nidus_table_read_raw(t->data, i * t->bucket_bits);
}

/* Plain buckets: OR of the match masks of every chunk (nonzero iff fp is in bucket i). */
static inline uint64_t nidus_table_plain_match(const nidus_table *t, uint64_t i, uint32_t fp)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD)
        return nidus_swar_match(&t->chunk_swar[0], nidus_table_word(t, i), fp);
    if (t->probe == NIDUS_PROBE_PLAIN_BITS)
        return nidus_swar_match(&t->chunk_swar[0], nidus_table_bits_word(t, i), fp);
    uint64_t pos = i * t->bucket_bits, hit = 0;
    for (unsigned c = 0; c < t->chunks; c++) {
        uint64_t w = nidus_table_read_raw(t->data, pos);
        hit |= nidus_swar_match(&t->chunk_swar[c], w, fp);
        pos += t->chunk_bits[c];
    }
    return hit;
}

static inline unsigned nidus_table_plain_count(const nidus_table *t, uint64_t i, uint32_t fp)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD)
        return (unsigned)__builtin_popcountll(nidus_swar_match(&t->chunk_swar[0], nidus_table_word(t, i), fp));
    if (t->probe == NIDUS_PROBE_PLAIN_BITS)
        return (unsigned)__builtin_popcountll(nidus_swar_match(&t->chunk_swar[0], nidus_table_bits_word(t, i), fp));
    uint64_t pos = i * t->bucket_bits;
    unsigned n = 0;
    for (unsigned c = 0; c < t->chunks; c++) {
        uint64_t w = nidus_table_read_raw(t->data, pos);
        n += (unsigned)__builtin_popcountll(nidus_swar_match(&t->chunk_swar[c], w, fp));
        pos += t->chunk_bits[c];
    }
    return n;
}

/* Semi-sorted buckets, decoded into their four fingerprints in canonical order. */
static inline void nidus_table_semi_decode(const nidus_table *t, uint64_t i, uint32_t fp[4])
{
    uint64_t pos = i * t->bucket_bits;
    unsigned hb = t->shape.fp_bits - 4;
    unsigned nibbles = nidus_semisort_nibbles(nidus_table_read_raw(t->data, pos));
    pos += NIDUS_SEMISORT_RANK_BITS;
    for (unsigned s = 0; s < 4; s++) {
        uint32_t high = (uint32_t)(nidus_table_read_raw(t->data, pos) & nidus_low_mask(hb));
        fp[s] = (high << 4) | ((nibbles >> (4 * s)) & 15);
        pos += hb;
    }
}

/* The four match bits of a semi-sorted bucket's high parts (SWAR high bits at s*hb + hb - 1) as a 4-bit slot
 * mask. One multiply: with M = sum of 2^(t(hb-1)), bit s*hb lands at 3hb-3+s when t = 3-s, and no two terms
 * share a position once hb >= 4, so nothing carries. Narrower high parts (f < 8) take four shifts. */
static inline uint64_t nidus_table_semi_slots(const nidus_table *t, uint64_t high_hits)
{
    unsigned hb = t->shape.fp_bits - 4;
    uint64_t h = high_hits >> (hb - 1);
    if (t->semi_gather)
        return ((h * t->semi_gather) >> (3 * hb - 3)) & 15;
    return (h & 1) | ((h >> (hb - 1)) & 2) | ((h >> (2 * hb - 2)) & 4) | ((h >> (3 * hb - 3)) & 8);
}

/* The slots of a semi-sorted bucket (`raw`: rank, then high parts) holding fp, one bit per slot, given the
 * SWAR matches of its high parts: fp's low nibble is compared with the four sorted nibbles the rank stands for
 * (exact zero-nibble test, then bits 4s gathered to 12..15 by one multiply: 4s + 3k, k = 4 - s, never collide),
 * and intersected with the high-part matches. */
static inline uint64_t nidus_table_semi_hits(const nidus_table *t, uint64_t raw, uint64_t high_hits, uint32_t fp)
{
    uint64_t z = nidus_semisort_nibbles(raw) ^ ((fp & 15) * UINT64_C(0x1111));
    uint64_t zero = ~(((z & 0x7777) + 0x7777) | z | 0x7777) & 0x8888; /* bit 4s+3: nibble s equal */
    uint64_t nib_slots = (((zero >> 3) * 0x1248) >> 12) & 15;
    return nib_slots & nidus_table_semi_slots(t, high_hits);
}

/* Copies of fp in semi-sorted bucket i. For f <= 17 the bucket is at most 64 bits: one read gives the rank
 * and the four high parts, which sit side by side and are matched with SWAR first. Only when some high part
 * matches (for an absent key, probability about 4 / 2^(f-4)) is the rank table consulted for the nibbles. */
static inline unsigned nidus_table_semi_count(const nidus_table *t, uint64_t i, uint32_t fp)
{
    if (t->bucket_bits > 64) {
        uint32_t have[4];
        nidus_table_semi_decode(t, i, have);
        return (unsigned)(have[0] == fp) + (have[1] == fp) + (have[2] == fp) + (have[3] == fp);
    }
    uint64_t raw = nidus_table_bucket_raw(t, i);
    uint64_t high_hits = nidus_swar_match(&t->semi_swar, raw >> NIDUS_SEMISORT_RANK_BITS, fp >> 4);
    if (!high_hits)
        return 0;
    return (unsigned)__builtin_popcountll(nidus_table_semi_hits(t, raw, high_hits, fp));
}

/* A semi-sorted bucket has a free slot iff its first fingerprint is 0: empty slots sort first. */
static inline bool nidus_table_semi_has_free(const nidus_table *t, uint64_t i)
{
    uint64_t raw = nidus_table_read_raw(t->data, i * t->bucket_bits);
    return (nidus_semisort_nibbles(raw) & 15) == 0 &&
           ((raw >> NIDUS_SEMISORT_RANK_BITS) & nidus_low_mask(t->shape.fp_bits - 4)) == 0;
}

/* Copies of fp in bucket i. */
static inline unsigned nidus_table_bucket_count(const nidus_table *t, uint64_t i, uint32_t fp)
{
    return t->shape.semi_sort ? nidus_table_semi_count(t, i, fp) : nidus_table_plain_count(t, i, fp);
}

/* Semi-sorted lookup in both buckets: the high parts of both are matched first, so an absent key (the common
 * case for a filter) is rejected after one well-predicted branch, without touching the rank table. A present
 * key then costs two rank-table reads and two short branch-free nibble tests. */
static inline bool nidus_table_semi_contains(const nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    if (t->bucket_bits > 64)
        return nidus_table_semi_count(t, i, fp) + nidus_table_semi_count(t, j, fp) != 0;
    uint64_t ri = nidus_table_bucket_raw(t, i);
    uint64_t rj = nidus_table_bucket_raw(t, j);
    uint64_t hi = nidus_swar_match(&t->semi_swar, ri >> NIDUS_SEMISORT_RANK_BITS, fp >> 4);
    uint64_t hj = nidus_swar_match(&t->semi_swar, rj >> NIDUS_SEMISORT_RANK_BITS, fp >> 4);
    if (!(hi | hj))
        return false;
    return (nidus_table_semi_hits(t, ri, hi, fp) | nidus_table_semi_hits(t, rj, hj, fp)) != 0;
}

/* True when fp is in a slot of bucket i or of its alternate j. */
static inline bool nidus_table_slots_contain(const nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    if (t->probe == NIDUS_PROBE_PLAIN_WORD) {
        uint64_t pattern = fp * t->chunk_swar[0].ones;
        return (nidus_swar_zero_fields(&t->chunk_swar[0], nidus_table_word(t, i) ^ pattern) |
                nidus_swar_zero_fields(&t->chunk_swar[0], nidus_table_word(t, j) ^ pattern)) != 0;
    }
    if (t->probe == NIDUS_PROBE_PLAIN_BITS) {
        uint64_t pattern = fp * t->chunk_swar[0].ones;
        return (nidus_swar_zero_fields(&t->chunk_swar[0], nidus_table_bits_word(t, i) ^ pattern) |
                nidus_swar_zero_fields(&t->chunk_swar[0], nidus_table_bits_word(t, j) ^ pattern)) != 0;
    }
    if (t->shape.semi_sort)
        return nidus_table_semi_contains(t, i, j, fp);
    return (nidus_table_plain_match(t, i, fp) | nidus_table_plain_match(t, j, fp)) != 0;
}

/* The bit of t->overflow_sig for the overflow entry of (lower bucket of the pair, fp). */
static inline uint32_t nidus_overflow_sig_bit(uint64_t lower, uint32_t fp)
{
    return UINT32_C(1) << ((lower ^ fp) & 31);
}

/* True when fp may be in the pair (i, j): in its slots, or counted in the overflow map (a stash entry of an item
 * the add's search could not place has no copy in the slots; cuckoo_table.c). Out of line: only a table with a
 * nonempty map whose signature has the pair's bit gets here on a miss. */
static __attribute__((noinline, unused)) bool nidus_table_overflow_has(const nidus_table *t, uint64_t i, uint64_t j,
                                                                       uint32_t fp)
{
    return nidus_overflow_get(&t->overflow, i < j ? i : j, fp) != 0;
}

/* The overflow map's answer for fp in the pair (i, j), its signature asked first (a clear bit: certainly not). */
static inline bool nidus_table_overflow_may_have(const nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    uint32_t sig = t->overflow_sig; /* 0 (an empty map, the common case) costs a test, not the bit's arithmetic */
    return sig && (sig & nidus_overflow_sig_bit(i < j ? i : j, fp)) && nidus_table_overflow_has(t, i, j, fp);
}

static inline bool nidus_table_contains(const nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    if (nidus_table_slots_contain(t, i, j, fp))
        return true;
    return nidus_table_overflow_may_have(t, i, j, fp);
}

/* ---- lookups of a hash in one table.
 * The common tables (t->fast: one-word buckets, offsets drawn from the whole fingerprint, as in every first
 * table) have kernels with no test of the table's shape but one predicted branch. */

/* Bucket, alternate and fingerprint of a hash in a t->fast table (range placement, stride 1), the fingerprint the
 * hash's bits under fp_mask (t->fp_mask; a windowed table's slots hold more bits than that: its ages); `may_wrap`
 * false (a constant) for a caller that knows the table is not smaller than the reach (!t->offset_wraps). The bucket
 * (one multiply, high half) and the fingerprint (a mask) come from opposite ends of the hash, and the offset's
 * multiply waits only for the mask: three short chains side by side. */
static inline __attribute__((always_inline)) uint32_t nidus_table_fast_locate_fp(const nidus_table *t,
                                                                                 uint64_t hash, uint32_t fp_mask,
                                                                                 bool may_wrap, uint64_t *i,
                                                                                 uint64_t *j)
{
    uint32_t fp = nidus_inline_cuckoo_fingerprint((uint32_t)hash, fp_mask);
    *i = nidus_range_reduce(hash, t->shape.buckets);
    uint64_t r = nidus_inline_cuckoo_offset(fp, t->offset_shift);
    if (may_wrap && t->offset_wraps) /* a table smaller than the reach: a per-table constant, so a predicted branch */
        r = nidus_fastmod_reduce(&t->bucket_mod, r);
    *j = nidus_range_alt0(t, *i, r, t->shape.buckets);
    return fp;
}

static inline __attribute__((always_inline)) uint32_t nidus_table_fast_locate(const nidus_table *t, uint64_t hash,
                                                                              uint64_t *i, uint64_t *j)
{
    return nidus_table_fast_locate_fp(t, hash, t->fp_mask, true, i, j);
}

/* True when fp is in plain one-chunk bucket word wi or wj (the bits past the bucket ignored). */
static inline __attribute__((always_inline)) bool nidus_table_pair_has(const nidus_table *t, uint64_t wi, uint64_t wj,
                                                                       uint32_t fp)
{
    const nidus_swar *s = &t->chunk_swar[0];
    uint64_t pattern = fp * s->ones;
    return ((nidus_swar_any_zero(s, wi ^ pattern) | nidus_swar_any_zero(s, wj ^ pattern)) & s->high) != 0;
}

static inline __attribute__((always_inline)) bool nidus_table_plain_probe(const nidus_table *t, uint64_t i,
                                                                          uint64_t j, uint32_t fp)
{
    return nidus_table_pair_has(t, nidus_table_word(t, i), nidus_table_word(t, j), fp);
}

/* nidus_table_plain_probe for a NIDUS_FAST_PLAIN_BITS table: each bucket read as one word at its bit offset. */
static inline __attribute__((always_inline)) bool nidus_table_bits_probe(const nidus_table *t, uint64_t i,
                                                                         uint64_t j, uint32_t fp)
{
    return nidus_table_pair_has(t, nidus_table_short_bits_word(t, i), nidus_table_short_bits_word(t, j), fp);
}

/* The 64 bits from the start of bucket i of a table read by kernel `fast` (a constant at every call): a whole-byte
 * word (NIDUS_FAST_PLAIN, _SEMI) or a word at a bit offset (NIDUS_FAST_PLAIN_BITS). */
static inline __attribute__((always_inline)) uint64_t nidus_table_fast_word(const nidus_table *t, uint64_t i,
                                                                            unsigned fast)
{
    return fast == NIDUS_FAST_PLAIN_BITS ? nidus_table_short_bits_word(t, i) : nidus_table_word(t, i);
}

/* The cache lines nidus_table_fast_word touches: the 8 bytes from the bucket's first byte. */
static inline __attribute__((always_inline)) void nidus_table_prefetch_word(const nidus_table *t, uint64_t i,
                                                                           unsigned fast)
{
    const uint8_t *p = fast == NIDUS_FAST_PLAIN_BITS ? t->data + ((i * t->bucket_bits) >> 3)
                                                     : t->data + i * t->bucket_bytes;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 7);
}

/* The SWAR matches of fp's high part against the four high parts of semi-sorted bucket word `raw`. */
static inline uint64_t nidus_table_semi_high_hits(const nidus_table *t, uint64_t raw, uint32_t fp)
{
    return nidus_swar_zero_fields(&t->semi_swar, (raw >> NIDUS_SEMISORT_RANK_BITS) ^ ((fp >> 4) * t->semi_swar.ones));
}

/* Semi-sorted, second stage: some high part matched in bucket word ri or rj; compare the low nibbles, only in
 * a bucket whose high parts matched (a present key: usually one of the two), bucket i first. Out of
 * line and given only the two words (the matches are recomputed): an absent key rarely gets here, and the
 * inlined first stage then needs no stack frame and reaches this by a tail call. */
static __attribute__((noinline, unused)) bool nidus_table_semi_nibbles(const nidus_table *t, uint64_t ri, uint64_t rj,
                                                                       uint32_t fp)
{
    uint64_t hi = nidus_table_semi_high_hits(t, ri, fp);
    if (hi && nidus_table_semi_hits(t, ri, hi, fp))
        return true;
    uint64_t hj = nidus_table_semi_high_hits(t, rj, fp);
    return hj && nidus_table_semi_hits(t, rj, hj, fp);
}

static inline __attribute__((always_inline)) bool nidus_table_semi_probe(const nidus_table *t, uint64_t i,
                                                                         uint64_t j, uint32_t fp)
{
    uint64_t ri = nidus_table_word(t, i), rj = nidus_table_word(t, j);
    uint64_t pattern = (fp >> 4) * t->semi_swar.ones;
    uint64_t hi = nidus_swar_zero_fields(&t->semi_swar, (ri >> NIDUS_SEMISORT_RANK_BITS) ^ pattern);
    uint64_t hj = nidus_swar_zero_fields(&t->semi_swar, (rj >> NIDUS_SEMISORT_RANK_BITS) ^ pattern);
    if (!(hi | hj))
        return false;
    return nidus_table_semi_nibbles(t, ri, rj, fp);
}

/* A lookup in one table of any filter: its kernel, then (on a miss, in a table whose overflow map is not empty)
 * the map, where a stash entry's copy is. */
static inline __attribute__((always_inline)) bool nidus_table_lookup(const nidus_table *t, uint64_t hash)
{
    uint64_t i, j;
    if (t->kernel == NIDUS_FAST_PLAIN) {
        uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
        return nidus_table_plain_probe(t, i, j, fp) || nidus_table_overflow_may_have(t, i, j, fp);
    }
    if (t->kernel == NIDUS_FAST_SEMI) {
        uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
        return nidus_table_semi_probe(t, i, j, fp) || nidus_table_overflow_may_have(t, i, j, fp);
    }
    if (t->kernel == NIDUS_FAST_PLAIN_BITS) {
        uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
        return nidus_table_bits_probe(t, i, j, fp) || nidus_table_overflow_may_have(t, i, j, fp);
    }
    if (t->kernel == NIDUS_FAST_PLAIN_WIDE_BITS) {
        uint32_t fp = nidus_table_fast_locate(t, hash, &i, &j);
        return nidus_table_pair_has(t, nidus_table_bits_word(t, i), nidus_table_bits_word(t, j), fp) ||
               nidus_table_overflow_may_have(t, i, j, fp);
    }
    uint32_t fp;
    nidus_table_locate(t, hash, &i, &fp);
    return nidus_table_contains(t, i, nidus_table_alt(t, i, fp), fp);
}

/* Copies of fp in the pair of bucket i, overflow included (nidus_table_count, inline for the count path). */
static inline uint64_t nidus_table_count_pair(const nidus_table *t, uint64_t i, uint32_t fp)
{
    uint64_t j = nidus_table_alt(t, i, fp);
    uint64_t n = nidus_table_bucket_count(t, i, fp) + nidus_table_bucket_count(t, j, fp);
    if (t->overflow_sig & nidus_overflow_sig_bit(i < j ? i : j, fp)) /* duplicates beyond the pair's share, or a */
        n += nidus_overflow_get(&t->overflow, i < j ? i : j, fp);        /* stash entry (no copy in the slots) */
    return n;
}

/* ---- adds: a free slot in a bucket that is one word (NIDUS_PROBE_PLAIN_WORD) */

/* Puts fp into the lowest free slot of plain one-word bucket i (the slot the general path would choose, so
 * the bytes are the same either way); false when the bucket is full. The 8-byte store rewrites the bytes of
 * the next bucket that the load read, unchanged; the slack keeps it inside the table. */
static inline bool nidus_table_word_put(nidus_table *t, uint64_t i, uint32_t fp)
{
    uint8_t *p = t->data + i * t->bucket_bytes;
    uint64_t w = nidus_load_le64(p);
    uint64_t free_high = nidus_swar_zero_fields(&t->chunk_swar[0], w);
    if (!free_high)
        return false;
    unsigned shift = (unsigned)__builtin_ctzll(free_high) - (t->shape.fp_bits - 1u);
    nidus_store_le64(p, w | ((uint64_t)fp << shift));
    return true;
}

/* Asks for the cache line(s) of bucket i ahead of a probe: the first byte and the last one a read touches. */
static inline void nidus_table_prefetch(const nidus_table *t, uint64_t i)
{
    const uint8_t *p = t->data + ((i * t->bucket_bits) >> 3);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 8 + (t->bucket_bits > 64 ? t->bucket_bits / 8 : 0));
}

#endif

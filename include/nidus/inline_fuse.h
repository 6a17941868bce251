/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — the inline path of the binary fuse filter (nidus/inline.h; opt in with NIDUS_INLINE).
 *
 * A nidus_fuse begins with a published view, nidus_inline_fuse_view, written once when the filter is built or
 * decoded (a fuse filter never changes afterwards). Tag version 2 (NIDUS_INLINE_FUSE_TAG_8 / _16) promises: the
 * filter holds at least one key in slots of 8 / 16 bits (16-bit ones little-endian) at `slots`; a key's hash is
 * XXH3-64 with `seed`; h = fmix64(hash + construction_seed) (murmur3's finaliser) picks the slots
 *     p0 = mulhi(h, segment_count_length), p1 = (p0 + L) ^ ((h >> 18) & (L - 1)), p2 = (p0 + 2L) ^ (h & (L - 1))
 * with L - 1 = segment_mask, and the key may be present when the xor of the three slots equals the low bits of
 * h ^ (h >> 32). L is a power of two and the xor changes only bits below it, so p1 = (p0 ^ x1) + L: slot p1 is
 * entry p0 ^ x1 of `slots1` (slot L) and p2 entry p0 ^ x2 of `slots2` (slot 2L), which saves the two additions
 * and keeps a lookup at 33 instructions where the caller's loop holds the view in registers. Any other tag (an
 * empty filter, another version) is served by the library's call. nidus.h includes
 * this header only under NIDUS_INLINE, which also turns the two lookups at the end into the inline ones; the
 * library includes it for the view. */
#ifndef NIDUS_INLINE_FUSE_H
#define NIDUS_INLINE_FUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuse.h"
#include "inline_hash.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIDUS_INLINE_FUSE_TAG_8 UINT32_C(0x4E460208)  /* version 2, 8-bit slots */
#define NIDUS_INLINE_FUSE_TAG_16 UINT32_C(0x4E460210) /* version 2, 16-bit slots */

#if defined(__GNUC__) || defined(__clang__)
#define NIDUS_INLINE_FUSE_MAY_ALIAS __attribute__((may_alias))
#define NIDUS_INLINE_FUSE_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define NIDUS_INLINE_FUSE_MAY_ALIAS
#define NIDUS_INLINE_FUSE_LIKELY(x) (x)
#endif

/* The first 64 bytes of every nidus_fuse (version 2); the fields mean something only under a version 2 tag. */
typedef struct NIDUS_INLINE_FUSE_MAY_ALIAS nidus_inline_fuse_view {
    uint32_t tag;
    uint32_t reserved;
    uint64_t seed;                 /* the key hash's seed */
    uint64_t construction_seed;
    uint64_t segment_count_length; /* segments a first slot may fall in, times L */
    uint64_t segment_mask;         /* L - 1 */
    const uint8_t *slots;          /* slot 0 */
    const uint8_t *slots1;         /* slot L */
    const uint8_t *slots2;         /* slot 2L */
} nidus_inline_fuse_view;

static inline uint64_t nidus_inline_fuse_mulhi64(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 nidus_inline_fuse_u128;
    return (uint64_t)(((nidus_inline_fuse_u128)a * b) >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t cross = ((al * bl) >> 32) + (uint32_t)(ah * bl) + al * bh;
    return ah * bh + ((ah * bl) >> 32) + (cross >> 32);
#endif
}

/* The mixed hash of a key's hash; p0, and the entries x1, x2 of slots1, slots2 (nidus_inline_fuse_view). */
static inline uint64_t nidus_inline_fuse_slots(const nidus_inline_fuse_view *v, uint64_t hash, uint64_t p[3])
{
    uint64_t h = hash + v->construction_seed;
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    uint64_t p0 = nidus_inline_fuse_mulhi64(h, v->segment_count_length);
    p[0] = p0;
    p[1] = p0 ^ ((h >> 18) & v->segment_mask);
    p[2] = p0 ^ (h & v->segment_mask);
    return h;
}

static inline uint16_t nidus_inline_fuse_load16(const uint8_t *slots, uint64_t i)
{
    uint16_t x;
    memcpy(&x, slots + 2 * i, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = (uint16_t)(x >> 8 | x << 8);
#endif
    return x;
}

/* Whether hash passes the filter whose view v has tag NIDUS_INLINE_FUSE_TAG_8. */
static inline bool nidus_inline_fuse_probe8(const nidus_inline_fuse_view *v, uint64_t hash)
{
    uint64_t p[3], h = nidus_inline_fuse_slots(v, hash, p);
    return (uint8_t)(h ^ (h >> 32) ^ v->slots[p[0]] ^ v->slots1[p[1]] ^ v->slots2[p[2]]) == 0;
}

/* The same for NIDUS_INLINE_FUSE_TAG_16 (little-endian slots). */
static inline bool nidus_inline_fuse_probe16(const nidus_inline_fuse_view *v, uint64_t hash)
{
    uint64_t p[3], h = nidus_inline_fuse_slots(v, hash, p);
    return (uint16_t)(h ^ (h >> 32) ^ nidus_inline_fuse_load16(v->slots, p[0]) ^
                      nidus_inline_fuse_load16(v->slots1, p[1]) ^ nidus_inline_fuse_load16(v->slots2, p[2])) == 0;
}

/* nidus_fuse_contains_hash and nidus_fuse_contains with the same answers: inline under a tag this header
 * knows, else the library's call. */
/* The view is copied whole before the tag is looked at: loads on every path, which a caller's compiler can then
 * keep in registers across a loop of lookups. One compare for 8-bit slots, two for 16-bit ones (or use the
 * width's own entry below). */
static inline bool nidus_inline_fuse_contains_hash(const nidus_fuse *filter, uint64_t hash)
{
    nidus_inline_fuse_view v = *(const nidus_inline_fuse_view *)(const void *)filter;
    if (NIDUS_INLINE_FUSE_LIKELY(v.tag == NIDUS_INLINE_FUSE_TAG_8))
        return nidus_inline_fuse_probe8(&v, hash);
    if (NIDUS_INLINE_FUSE_LIKELY(v.tag == NIDUS_INLINE_FUSE_TAG_16))
        return nidus_inline_fuse_probe16(&v, hash);
    return (nidus_fuse_contains_hash)(filter, hash);
}

static inline bool nidus_inline_fuse_contains(const nidus_fuse *filter, const void *key, size_t len)
{
    nidus_inline_fuse_view v = *(const nidus_inline_fuse_view *)(const void *)filter;
    if (NIDUS_INLINE_FUSE_LIKELY(v.tag == NIDUS_INLINE_FUSE_TAG_8))
        return nidus_inline_fuse_probe8(&v, nidus_inline_hash(key, len, v.seed));
    if (NIDUS_INLINE_FUSE_LIKELY(v.tag == NIDUS_INLINE_FUSE_TAG_16))
        return nidus_inline_fuse_probe16(&v, nidus_inline_hash(key, len, v.seed));
    return (nidus_fuse_contains)(filter, key, len);
}

/* nidus_fuse_contains_hash for a caller that knows its filters' width, as a header-only peer's caller picks
 * binary_fuse8_contain or binary_fuse16_contain: one compare, whatever the compiler makes of a loop; any other
 * filter (the other width, empty, another tag) still gets the library's answer. */
static inline bool nidus_inline_fuse8_contains_hash(const nidus_fuse *filter, uint64_t hash)
{
    nidus_inline_fuse_view v = *(const nidus_inline_fuse_view *)(const void *)filter;
    if (NIDUS_INLINE_FUSE_LIKELY(v.tag == NIDUS_INLINE_FUSE_TAG_8))
        return nidus_inline_fuse_probe8(&v, hash);
    return (nidus_fuse_contains_hash)(filter, hash);
}

static inline bool nidus_inline_fuse16_contains_hash(const nidus_fuse *filter, uint64_t hash)
{
    nidus_inline_fuse_view v = *(const nidus_inline_fuse_view *)(const void *)filter;
    if (NIDUS_INLINE_FUSE_LIKELY(v.tag == NIDUS_INLINE_FUSE_TAG_16))
        return nidus_inline_fuse_probe16(&v, hash);
    return (nidus_fuse_contains_hash)(filter, hash);
}

#ifdef __cplusplus
}
#endif

/* Under NIDUS_INLINE the two lookups are the inline ones (the library's stay reachable as
 * (nidus_fuse_contains)(...) and through their addresses). */
#ifdef NIDUS_INLINE
#define nidus_fuse_contains_hash(filter, hash) nidus_inline_fuse_contains_hash(filter, hash)
#define nidus_fuse_contains(filter, key, len) nidus_inline_fuse_contains(filter, key, len)
#endif

#endif

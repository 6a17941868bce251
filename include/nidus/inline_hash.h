/* SPDX-License-Identifier: BSD-3-Clause */
/* nidus — XXH3-64 for keys of up to 16 bytes as inline code, for the opt-in inline path (nidus/inline.h).
 *
 * Written from the XXH3 specification (xxHash's doc/xxhash_spec.md, "small inputs"): the four short-key cases
 * (0, 1-3, 4-8, 9-16 bytes) with the words of XXH3's default secret they read. It returns exactly what
 * nidus_hash returns, which longer keys call. It needs nothing but this library's headers. */
#ifndef NIDUS_INLINE_HASH_H
#define NIDUS_INLINE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hash.h"

#ifdef __cplusplus
extern "C" {
#endif

/* XXH3's multipliers. */
#define NIDUS_INLINE_PRIME64_1 UINT64_C(0x9E3779B185EBCA87)
#define NIDUS_INLINE_PRIME64_2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define NIDUS_INLINE_PRIME64_3 UINT64_C(0x165667B19E3779F9)
#define NIDUS_INLINE_PRIME_MX1 UINT64_C(0x165667919E3779F9)
#define NIDUS_INLINE_PRIME_MX2 UINT64_C(0x9FB21C651E98DF25)

/* Little-endian words of XXH3's default secret, named by their byte offset: bytes 0-7 read as two 32-bit words,
 * bytes 8-71 as 64-bit words. The short-key cases use only these. */
#define NIDUS_INLINE_SECRET32_0 UINT32_C(0x396CFEB8)
#define NIDUS_INLINE_SECRET32_4 UINT32_C(0xBE4BA423)
#define NIDUS_INLINE_SECRET64_0 UINT64_C(0xBE4BA423396CFEB8)
#define NIDUS_INLINE_SECRET64_8 UINT64_C(0x1CAD21F72C81017C)
#define NIDUS_INLINE_SECRET64_16 UINT64_C(0xDB979083E96DD4DE)
#define NIDUS_INLINE_SECRET64_24 UINT64_C(0x1F67B3B7A4A44072)
#define NIDUS_INLINE_SECRET64_32 UINT64_C(0x78E5C0CC4EE679CB)
#define NIDUS_INLINE_SECRET64_40 UINT64_C(0x2172FFCC7DD05A82)
#define NIDUS_INLINE_SECRET64_48 UINT64_C(0x8E2443F7744608B8)
#define NIDUS_INLINE_SECRET64_56 UINT64_C(0x4C263A81E69035E0)
#define NIDUS_INLINE_SECRET64_64 UINT64_C(0xCB00C391BB52283C)

static inline uint32_t nidus_inline_bswap32(uint32_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap32(x);
#else
    return (x >> 24) | ((x >> 8) & 0xFF00u) | ((x << 8) & 0xFF0000u) | (x << 24);
#endif
}

static inline uint64_t nidus_inline_bswap64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(x);
#else
    return ((uint64_t)nidus_inline_bswap32((uint32_t)x) << 32) | nidus_inline_bswap32((uint32_t)(x >> 32));
#endif
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NIDUS_INLINE_LE32(x) nidus_inline_bswap32(x)
#define NIDUS_INLINE_LE64(x) nidus_inline_bswap64(x)
#else
#define NIDUS_INLINE_LE32(x) (x)
#define NIDUS_INLINE_LE64(x) (x)
#endif

/* Unaligned little-endian reads (memcpy compiles to one load). */
static inline uint32_t nidus_inline_read32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return NIDUS_INLINE_LE32(v);
}

static inline uint64_t nidus_inline_read64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return NIDUS_INLINE_LE64(v);
}

static inline uint64_t nidus_inline_rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

/* The 128-bit product of a and b, its two halves xored. */
static inline uint64_t nidus_inline_mul128_fold64(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 nidus_inline_u128; /* __extension__: quiet under -pedantic */
    nidus_inline_u128 p = (nidus_inline_u128)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, hl = ah * bl, lh = al * bh, hh = ah * bh;
    uint64_t cross = (ll >> 32) + (uint32_t)hl + lh;
    uint64_t hi = hh + (hl >> 32) + (cross >> 32);
    uint64_t lo = (cross << 32) | (uint32_t)ll;
    return lo ^ hi;
#endif
}

/* The spec's avalanche() (9-16 bytes) and avalanche_XXH64() (0-3 bytes). */
static inline uint64_t nidus_inline_avalanche(uint64_t x)
{
    x ^= x >> 37;
    x *= NIDUS_INLINE_PRIME_MX1;
    return x ^ (x >> 32);
}

static inline uint64_t nidus_inline_avalanche_xxh64(uint64_t x)
{
    x ^= x >> 33;
    x *= NIDUS_INLINE_PRIME64_2;
    x ^= x >> 29;
    x *= NIDUS_INLINE_PRIME64_3;
    return x ^ (x >> 32);
}

/* The final mix of the 4-8 byte case, on the combined input word already keyed. */
static inline uint64_t nidus_inline_mix4to8(uint64_t v, size_t len)
{
    v ^= nidus_inline_rotl64(v, 49) ^ nidus_inline_rotl64(v, 24);
    v *= NIDUS_INLINE_PRIME_MX2;
    v ^= (v >> 35) + (uint64_t)len;
    v *= NIDUS_INLINE_PRIME_MX2;
    return v ^ (v >> 28);
}

/* XXH3-64 of a key of 0 to 16 bytes, seeded. */
static inline uint64_t nidus_inline_hash_short(const void *key, size_t len, uint64_t seed)
{
    const uint8_t *p = (const uint8_t *)key;
    if (len > 8) {
        uint64_t lo = (NIDUS_INLINE_SECRET64_24 ^ NIDUS_INLINE_SECRET64_32) + seed;
        uint64_t hi = (NIDUS_INLINE_SECRET64_40 ^ NIDUS_INLINE_SECRET64_48) - seed;
        lo ^= nidus_inline_read64(p);
        hi ^= nidus_inline_read64(p + len - 8);
        uint64_t v = (uint64_t)len + nidus_inline_bswap64(lo) + hi + nidus_inline_mul128_fold64(lo, hi);
        return nidus_inline_avalanche(v);
    }
    if (len >= 4) {
        uint64_t s = seed ^ ((uint64_t)nidus_inline_bswap32((uint32_t)seed) << 32);
        uint64_t combined = (uint64_t)nidus_inline_read32(p + len - 4) | ((uint64_t)nidus_inline_read32(p) << 32);
        return nidus_inline_mix4to8(((NIDUS_INLINE_SECRET64_8 ^ NIDUS_INLINE_SECRET64_16) - s) ^ combined, len);
    }
    if (len > 0) {
        uint32_t combined = (uint32_t)p[len - 1] | ((uint32_t)len << 8) | ((uint32_t)p[0] << 16) |
                            ((uint32_t)p[len >> 1] << 24);
        uint64_t v = ((uint64_t)(NIDUS_INLINE_SECRET32_0 ^ NIDUS_INLINE_SECRET32_4) + seed) ^ combined;
        return nidus_inline_avalanche_xxh64(v);
    }
    return nidus_inline_avalanche_xxh64(seed ^ NIDUS_INLINE_SECRET64_56 ^ NIDUS_INLINE_SECRET64_64);
}

/* XXH3-64 of a key of 17 to 32 bytes, seeded: the spec's 17-128 byte case at its first step, two 16-byte mixes
 * (the first and the last 16 bytes, overlapping below 32) with the secret's first 32 bytes. */
static inline uint64_t nidus_inline_hash_mid(const void *key, size_t len, uint64_t seed)
{
    const uint8_t *p = (const uint8_t *)key, *q = p + len - 16;
    uint64_t acc = (uint64_t)len * NIDUS_INLINE_PRIME64_1;
    acc += nidus_inline_mul128_fold64(nidus_inline_read64(p) ^ (NIDUS_INLINE_SECRET64_0 + seed),
                                      nidus_inline_read64(p + 8) ^ (NIDUS_INLINE_SECRET64_8 - seed));
    acc += nidus_inline_mul128_fold64(nidus_inline_read64(q) ^ (NIDUS_INLINE_SECRET64_16 + seed),
                                      nidus_inline_read64(q + 8) ^ (NIDUS_INLINE_SECRET64_24 - seed));
    return nidus_inline_avalanche(acc);
}

/* XXH3-64 of the key, seeded: nidus_hash's answer. Keys of up to 16 bytes are hashed here, longer ones by the
 * library. */
static inline uint64_t nidus_inline_hash(const void *key, size_t len, uint64_t seed)
{
    if (len <= 16)
        return nidus_inline_hash_short(key, len, seed);
    return nidus_hash(key, len, seed);
}

/* The part of an 8-byte key's hash that depends only on the seed, computed once per seed for nidus_inline_hash8. */
static inline uint64_t nidus_inline_hash8_flip(uint64_t seed)
{
    uint64_t s = seed ^ ((uint64_t)nidus_inline_bswap32((uint32_t)seed) << 32);
    return (NIDUS_INLINE_SECRET64_8 ^ NIDUS_INLINE_SECRET64_16) - s;
}

/* XXH3-64 of the 8 bytes at `key` with the seed whose nidus_inline_hash8_flip is `flip`. The 4-8 byte case's two
 * 32-bit reads, last half high and first half low swapped into one word, are one 64-bit read rotated by 32. */
static inline uint64_t nidus_inline_hash8(const void *key, uint64_t flip)
{
    return nidus_inline_mix4to8(nidus_inline_rotl64(nidus_inline_read64(key), 32) ^ flip, 8);
}

#ifdef __cplusplus
}
#endif

#endif

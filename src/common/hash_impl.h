/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: key hashing and what is derived from the one 64-bit hash of a key.
 *
 * A cuckoo table takes its bucket from the hash's high end and its fingerprint from its low end
 * (cuckoo_table_impl.h); tables of format versions 1-4 took `hash mod buckets` and a murmur3 remix. */
#ifndef NIDUS_SRC_HASH_IMPL_H
#define NIDUS_SRC_HASH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Keys longer than 16 bytes: XXH3's longer paths, kept out of line so that they do not cost the short-key
 * callers (lookups by key) a stack frame. */
static __attribute__((noinline, unused)) uint64_t nidus_hash_long(const void *key, size_t len, uint64_t seed)
{
    return XXH3_64bits_withSeed(key, len, seed);
}

/* XXH3-64 of a key of at most 16 bytes, seeded: the branch of XXH3_64bits_withSeed for short keys, which
 * xxhash.h defines always-inline (the public function is too large for the compiler to inline where it is
 * used twice). The unit tests check that both agree on every length up to 16. */
static inline uint64_t nidus_hash_short(const void *key, size_t len, uint64_t seed)
{
    return XXH3_len_0to16_64b((const xxh_u8 *)key, len, XXH3_kSecret, seed);
}

/* The part of XXH3-64 of an 8-byte key that depends only on the seed (XXH3_len_4to8_64b's bitflip), so that a
 * filter computes it once (nidus_hash8). */
static inline uint64_t nidus_hash8_flip(uint64_t seed)
{
    seed ^= (uint64_t)XXH_swap32((uint32_t)seed) << 32;
    return (XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)) - seed;
}

/* The seed whose nidus_hash8_flip is `flip` (the flip keeps the seed's low half and xors its high half with the
 * low half byte-swapped, so it is undone the same way). */
static inline uint64_t nidus_hash8_flip_seed(uint64_t flip)
{
    uint64_t s = (XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)) - flip;
    return s ^ (uint64_t)XXH_swap32((uint32_t)s) << 32;
}

/* XXH3-64 of the 8 bytes at `key` with the seed whose nidus_hash8_flip is `flip`: XXH3_len_4to8_64b for
 * len = 8, whose two 32-bit reads (low half, high half) swapped into one word are a rotation of one 64-bit
 * read. The unit tests check it against XXH3_64bits_withSeed. */
static inline uint64_t nidus_hash8(const void *key, uint64_t flip)
{
    uint64_t w = XXH_readLE64(key);
    return XXH3_rrmxmx(((w >> 32) | (w << 32)) ^ flip, 8);
}

/* XXH3-64 of the key, seeded. Keys up to 16 bytes are hashed inline (about 30 instructions for 8 bytes). */
static inline uint64_t nidus_hash_bytes(const void *key, size_t len, uint64_t seed)
{
    if (len <= 16)
        return nidus_hash_short(key, len, seed);
    return nidus_hash_long(key, len, seed);
}

/* murmur3's 64-bit finaliser: a bijection whose every output bit depends on every input bit. Everything
 * derived from a key's one hash besides its bucket (fingerprints, Bloom probes) goes through it. */
static inline uint64_t nidus_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

/* 32 fingerprint bits under mod placement (format versions 1-4), independent of the bucket `hash mod m` taken
 * from the same hash. Range placement takes the hash's own low bits (cuckoo_table_impl.h). */
static inline uint32_t nidus_fingerprint_source_mod(uint64_t hash) { return (uint32_t)(nidus_mix64(hash) >> 32); }

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's item hashes, for filters loaded from RedisBloom's data: the answers stay RedisBloom's only if
 * the same bits are probed. Both are Austin Appleby's public-domain MurmurHash2 family, written here from the
 * published algorithm; reads are little-endian (the byte order RedisBloom's x86/ARM builds wrote). */
#ifndef NIDUS_REDIS_RB_HASH_H
#define NIDUS_REDIS_RB_HASH_H

#include <stddef.h>
#include <stdint.h>

/* MurmurHash64A (64-bit). RedisBloom's cuckoo filters hash with seed 0; its Bloom filters with
 * RB_BLOOM_SEED64 then the first hash as the seed of the second. */
uint64_t rb_murmur64a(const void *key, size_t len, uint64_t seed);

/* MurmurHash2 (32-bit): RedisBloom's Bloom filters without the FORCE64 option (seed RB_BLOOM_SEED32). */
uint32_t rb_murmur2(const void *key, size_t len, uint32_t seed);

#define RB_BLOOM_SEED64 UINT64_C(0xc6a4a7935bd1e995)
#define RB_BLOOM_SEED32 UINT32_C(0x9747b28c)

#endif

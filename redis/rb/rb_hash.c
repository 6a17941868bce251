/* SPDX-License-Identifier: BSD-3-Clause */
/* MurmurHash64A and MurmurHash2 as RedisBloom calls them (see rb_hash.h). The length enters the hash as
 * RedisBloom's `int len` does: item lengths are below 2^31 (Redis strings are at most 512 MB). */
#include "rb_hash.h"

static uint64_t load64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t load32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

uint64_t rb_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
    const unsigned char *p = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    for (size_t n = len / 8; n; n--, p += 8) {
        uint64_t k = load64(p) * m;
        k ^= k >> 47;
        h ^= k * m;
        h *= m;
    }
    size_t tail = len & 7;
    if (tail) {
        uint64_t t = 0;
        for (size_t i = tail; i > 0; i--)
            t = t << 8 | p[i - 1];
        h ^= t;
        h *= m;
    }
    h ^= h >> 47;
    h *= m;
    h ^= h >> 47;
    return h;
}

uint32_t rb_murmur2(const void *key, size_t len, uint32_t seed)
{
    const uint32_t m = 0x5bd1e995;
    const unsigned char *p = key;
    uint32_t h = seed ^ (uint32_t)len;
    for (size_t n = len / 4; n; n--, p += 4) {
        uint32_t k = load32(p) * m;
        k ^= k >> 24;
        h = h * m ^ k * m;
    }
    size_t tail = len & 3;
    if (tail) {
        uint32_t t = 0;
        for (size_t i = tail; i > 0; i--)
            t = t << 8 | p[i - 1];
        h = (h ^ t) * m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return h;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The inline header's hash (nidus/inline_hash.h, written from the XXH3 specification) against xxHash's own
 * XXH3_64bits_withSeed: every length 0..48 (17..32 by nidus_inline_hash_mid too), many seeds, byte
 * patterns random and extreme, keys at every alignment. */
#include "test_util.h"

#include <nidus/inline_hash.h>

#define XXH_INLINE_ALL /* the reference, as the library links it: header-only */
#include <xxhash.h>

static void check_key(const uint8_t *key, size_t len, uint64_t seed)
{
    uint64_t want = XXH3_64bits_withSeed(key, len, seed);
    assert_int_equal(nidus_inline_hash(key, len, seed), want);
    assert_int_equal(nidus_hash(key, len, seed), want);
    if (len <= 16)
        assert_int_equal(nidus_inline_hash_short(key, len, seed), want);
    if (len >= 17 && len <= 32)
        assert_int_equal(nidus_inline_hash_mid(key, len, seed), want);
    if (len == 8)
        assert_int_equal(nidus_inline_hash8(key, nidus_inline_hash8_flip(seed)), want);
}

/* Seeds that exercise the seed's arithmetic: zero, all ones, one half set, carries across the 32-bit halves. */
static const uint64_t edge_seeds[] = {0, 1, UINT64_MAX, UINT64_C(0xFFFFFFFF), UINT64_C(0xFFFFFFFF00000000),
                                      UINT64_C(0x8000000000000000), UINT64_C(0x80000000), UINT64_C(0x0123456789ABCDEF)};

static void test_random_keys_and_seeds(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 11;
    uint8_t buf[48 + 8];
    for (int t = 0; t < 20000; t++) {
        for (size_t k = 0; k < sizeof buf; k++)
            buf[k] = (uint8_t)test_splitmix(&rng);
        uint64_t seed = t % 4 ? test_splitmix(&rng) : edge_seeds[(t / 4) % (sizeof edge_seeds / sizeof edge_seeds[0])];
        const uint8_t *key = buf + t % 8; /* every alignment */
        for (size_t len = 0; len <= 48; len++)
            check_key(key, len, seed);
    }
}

/* Bytes all 0x00, all 0xFF, and one byte set in a field of zeros at every position: extremes a random key
 * rarely reaches (carries, the middle byte of 1-3, the overlap of first and last words). */
static void test_extreme_patterns(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 12;
    uint8_t key[16];
    for (int s = 0; s < 64; s++) {
        uint64_t seed = s < 8 ? edge_seeds[s] : test_splitmix(&rng);
        for (size_t len = 0; len <= 16; len++) {
            memset(key, 0x00, sizeof key);
            check_key(key, len, seed);
            memset(key, 0xFF, sizeof key);
            check_key(key, len, seed);
            for (size_t pos = 0; pos < len; pos++) {
                memset(key, 0x00, sizeof key);
                key[pos] = (uint8_t)(0x80 >> (pos % 8));
                check_key(key, len, seed);
                memset(key, 0xFF, sizeof key);
                key[pos] = 0x7F;
                check_key(key, len, seed);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_keys_and_seeds),
        cmocka_unit_test(test_extreme_patterns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Bit packing, SWAR matching, fast modulo, semi-sort coding and the overflow map: the pieces the table trusts. */
#include "test_util.h"

#include "alloc.h"
#include "bits_impl.h"
#include "fastmod_impl.h"
#include "hash_impl.h"
#include "overflow.h"
#include "semisort.h"
#include "swar_impl.h"

static void test_bits_write_then_read_every_width_and_offset(void **state)
{
    (void)state;
    uint8_t buf[64 + NIDUS_BITS_SLACK];
    uint64_t rng = test_seed();
    for (unsigned n = 1; n <= 64; n++) {
        for (unsigned pos = 0; pos < 200; pos++) {
            memset(buf, 0xA5, sizeof buf);
            uint8_t before[sizeof buf];
            memcpy(before, buf, sizeof buf);
            uint64_t v = test_splitmix(&rng) & nidus_low_mask(n);
            nidus_bits_write(buf, pos, n, v);
            assert_int_equal(nidus_bits_read(buf, pos, n), v);
            /* every bit outside [pos, pos+n) is untouched */
            for (unsigned bit = 0; bit < 8 * sizeof buf; bit++) {
                if (bit >= pos && bit < pos + n)
                    continue;
                assert_int_equal((buf[bit / 8] >> (bit % 8)) & 1, (before[bit / 8] >> (bit % 8)) & 1);
            }
        }
    }
}

static void test_bits_layout_is_little_endian(void **state)
{
    (void)state;
    uint8_t buf[8 + NIDUS_BITS_SLACK] = {0};
    nidus_bits_write(buf, 4, 12, 0xABC);
    assert_int_equal(buf[0], 0xC0);
    assert_int_equal(buf[1], 0xAB);
}

static void test_swar_match_finds_exactly_the_equal_fields(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 1;
    for (unsigned w = 2; w <= 32; w++) {
        for (unsigned fields = 1; fields * w <= 64 && fields <= 8; fields++) {
            nidus_swar s = nidus_swar_make(w, fields);
            for (int trial = 0; trial < 2000; trial++) {
                uint64_t word = 0, vals[8];
                uint64_t mask = nidus_low_mask(w);
                uint64_t x = test_splitmix(&rng) & mask;
                for (unsigned k = 0; k < fields; k++) {
                    uint64_t r = test_splitmix(&rng);
                    vals[k] = (r & 3) == 0 ? x : (r >> 8) & mask; /* plenty of matches and near misses */
                    word |= vals[k] << (k * w);
                }
                if (fields * w < 64)
                    word |= test_splitmix(&rng) << (fields * w); /* garbage above the fields is ignored */
                uint64_t got = nidus_swar_match(&s, word, x), want = 0;
                for (unsigned k = 0; k < fields; k++)
                    if (vals[k] == x)
                        want |= UINT64_C(1) << (k * w + w - 1);
                assert_int_equal(got, want);
            }
        }
    }
}

/* The inline short-key hash is XXH3_64bits_withSeed for every length up to 16, and nidus_hash_bytes is too
 * for longer keys; so is the 8-byte hash with the seed's part precomputed (nidus_hash8). */
static void test_short_key_hash_is_xxh3(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 3;
    uint8_t key[64];
    for (int t = 0; t < 2000; t++) {
        for (size_t k = 0; k < sizeof key; k++)
            key[k] = (uint8_t)test_splitmix(&rng);
        uint64_t seed = t % 3 ? test_splitmix(&rng) : (uint64_t)t;
        for (size_t len = 0; len <= sizeof key; len++) {
            uint64_t want = XXH3_64bits_withSeed(key + t % 7, len > 57 ? 57 : len, seed);
            assert_int_equal(nidus_hash_bytes(key + t % 7, len > 57 ? 57 : len, seed), want);
            if (len <= 16)
                assert_int_equal(nidus_hash_short(key + t % 7, len, seed), want);
            if (len == 8)
                assert_int_equal(nidus_hash8(key + t % 7, nidus_hash8_flip(seed)), want);
        }
    }
}

static void test_fastmod_equals_division(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 2;
    const uint64_t divisors[] = {2, 3, 4, 5, 7, 6, 1000, 999983, 1u << 20, 0xFFFFFFFFu, UINT64_C(0x100000001),
                                 UINT64_C(0x40000002), UINT64_MAX, UINT64_MAX - 1, UINT64_C(1) << 63,
                                 UINT64_C(0x8000000000000001), UINT64_C(3) << 62};
    for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++) {
        nidus_fastmod m = nidus_fastmod_make(divisors[k]);
        for (int t = 0; t < 100000; t++) {
            uint64_t a = test_splitmix(&rng) >> (t % 64);
            assert_int_equal(nidus_fastmod_reduce(&m, a), a % divisors[k]);
        }
        assert_int_equal(nidus_fastmod_reduce(&m, UINT64_MAX), UINT64_MAX % divisors[k]);
        assert_int_equal(nidus_fastmod_reduce(&m, 0), 0);
    }
    uint64_t rng2 = rng;
    for (int t = 0; t < 100000; t++) {
        uint64_t d = test_splitmix(&rng2) >> (t % 63);
        d += d < 2 ? 2 : 0; /* nidus_fastmod takes divisors from 2 */
        nidus_fastmod m = nidus_fastmod_make(d);
        uint64_t a = test_splitmix(&rng2);
        assert_int_equal(nidus_fastmod_reduce(&m, a), a % d);
    }
}

/* Every one of the 65,536 nibble quadruples: sorting and ranking it, then unranking the rank, gives back the
 * same sorted quadruple, and the ranks cover 0..3875 exactly. */
static void test_semisort_every_quadruple_round_trips(void **state)
{
    (void)state;
    static unsigned char seen[NIDUS_SEMISORT_CODES];
    memset(seen, 0, sizeof seen);
    for (uint32_t q = 0; q < 65536; q++) {
        uint32_t fp[4] = {q & 15, (q >> 4) & 15, (q >> 8) & 15, (q >> 12) & 15};
        nidus_semisort_sort4(fp);
        assert_true(fp[0] <= fp[1] && fp[1] <= fp[2] && fp[2] <= fp[3]);
        unsigned rank = nidus_semisort_rank(fp);
        assert_true(rank < NIDUS_SEMISORT_CODES);
        seen[rank] = 1;
        unsigned packed = nidus_semisort_unrank[rank];
        for (unsigned k = 0; k < 4; k++)
            assert_int_equal((packed >> (4 * k)) & 15, fp[k]);
    }
    for (unsigned r = 0; r < NIDUS_SEMISORT_CODES; r++)
        assert_true(seen[r]);
}

static void test_semisort_order_is_canonical(void **state)
{
    (void)state;
    uint32_t a[4] = {0x35, 0x15, 0x21, 0}, b[4] = {0x15, 0, 0x21, 0x35};
    nidus_semisort_sort4(a);
    nidus_semisort_sort4(b);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(a[0], 0);
    assert_int_equal(a[1], 0x21); /* nibble 1 before nibble 5 */
    assert_int_equal(a[2], 0x15);
    assert_int_equal(a[3], 0x35);
}

static void test_overflow_counts_per_pair_and_fingerprint(void **state)
{
    (void)state;
    nidus_allocator a;
    nidus_alloc_resolve(NULL, &a);
    nidus_overflow ov = {0};
    for (uint64_t b = 0; b < 200; b++)
        for (uint64_t n = 0; n <= b % 5; n++)
            assert_int_equal(nidus_overflow_add(&ov, &a, b * 7919, (uint32_t)(b % 3 + 1)), NIDUS_OK);
    for (uint64_t b = 0; b < 200; b++) {
        assert_int_equal(nidus_overflow_get(&ov, b * 7919, (uint32_t)(b % 3 + 1)), b % 5 + 1);
        assert_int_equal(nidus_overflow_get(&ov, b * 7919, (uint32_t)(b % 3 + 2)), 0);
    }
    /* take everything back in another order: backward-shift deletion must keep every probe chain intact */
    for (uint64_t b = 200; b-- > 0;) {
        for (uint64_t n = 0; n <= b % 5; n++)
            assert_true(nidus_overflow_take(&ov, b * 7919, (uint32_t)(b % 3 + 1)));
        assert_false(nidus_overflow_take(&ov, b * 7919, (uint32_t)(b % 3 + 1)));
        for (uint64_t c = 0; c < b; c++)
            assert_int_equal(nidus_overflow_get(&ov, c * 7919, (uint32_t)(c % 3 + 1)), c % 5 + 1);
    }
    assert_int_equal(ov.used, 0);
    assert_int_equal(ov.total, 0);
    nidus_overflow_release(&ov, &a);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bits_write_then_read_every_width_and_offset),
        cmocka_unit_test(test_bits_layout_is_little_endian),
        cmocka_unit_test(test_swar_match_finds_exactly_the_equal_fields),
        cmocka_unit_test(test_fastmod_equals_division),
        cmocka_unit_test(test_short_key_hash_is_xxh3),
        cmocka_unit_test(test_semisort_every_quadruple_round_trips),
        cmocka_unit_test(test_semisort_order_is_canonical),
        cmocka_unit_test(test_overflow_counts_per_pair_and_fingerprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The internal cuckoo table: placement, atomic failure, and very large tables. */
#include "test_util.h"

#include "alloc.h"
#include "cuckoo_table_impl.h"
#include "params.h"

static nidus_allocator libc;

static nidus_table make(uint64_t buckets, unsigned b, unsigned f, bool semi, unsigned reach, unsigned kicks)
{
    nidus_table_shape shape = {buckets, b, f, f, reach, semi};
    nidus_table t;
    assert_int_equal(nidus_table_init(&t, &shape, kicks, &libc), NIDUS_OK);
    return t;
}

/* alt() is an involution without fixed points for even bucket counts of every kind, with offsets below the
 * reach, and it reduces consistently to any even divisor of the bucket count. */
static void test_alternate_bucket_is_an_involution_for_any_even_size(void **state)
{
    (void)state;
    const uint64_t sizes[] = {2, 4, 6, 10, 1000, 999984, 600002, 131072, UINT64_C(1) << 33};
    const unsigned reaches[] = {1, 4, 16, 32};
    uint64_t rng = test_seed();
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (size_t r = 0; r < 4; r++) {
            nidus_table_shape shape = {sizes[k], 4, 12, 12, reaches[r], false};
            nidus_table t = {0};
            t.shape = shape;
            t.bucket_mod = nidus_fastmod_make(shape.buckets);
            t.offset_mask = 0xfff;
            for (int n = 0; n < 20000; n++) {
                uint64_t i = test_splitmix(&rng) % shape.buckets;
                uint32_t fp = (uint32_t)(test_splitmix(&rng) & 0xfff) | 1;
                uint64_t j = nidus_table_alt(&t, i, fp);
                assert_true(j < shape.buckets);
                assert_true(j != i);
                assert_int_equal(nidus_table_alt(&t, j, fp), i);
                uint64_t dist = i > j ? i - j : j - i;
                if (dist > shape.buckets / 2)
                    dist = shape.buckets - dist;
                assert_true(dist < (UINT64_C(1) << reaches[r]));
                /* reduction: the pair in a table of m/2 buckets (m/2 even) is the pair reduced mod m/2 */
                if (shape.buckets % 4 == 0) {
                    nidus_table half = t;
                    half.shape.buckets = shape.buckets / 2;
                    half.bucket_mod = nidus_fastmod_make(half.shape.buckets);
                    assert_int_equal(nidus_table_alt(&half, i % half.shape.buckets, fp), j % half.shape.buckets);
                }
            }
        }
    }
}

/* The lookup kernels of the common table shapes (one-load buckets, offsets from the whole fingerprint) give
 * the same answer as the general path (read bit by bit, chunk by chunk) and as the count, for present and
 * absent hashes, in tables larger and smaller than the reach (where the offset wraps). */
static void test_lookup_kernels_agree_with_the_general_path(void **state)
{
    (void)state;
    struct {
        unsigned b, f;
        bool semi;
    } shapes[] = {{4, 12, false}, {4, 13, true}, {4, 9, true}, {4, 17, true}, {2, 16, false}, {8, 8, false},
                  {4, 13, false}, {2, 12, false}, {1, 8, false}, {4, 16, false}, {8, 12, false}};
    const uint64_t sizes[] = {1000, (UINT64_C(1) << 17) + 2};
    uint64_t rng = test_seed() + 7;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (size_t z = 0; z < 2; z++) {
            nidus_table t = make(sizes[z], shapes[s].b, shapes[s].f, shapes[s].semi, 16, 500);
            uint64_t slots = sizes[z] * shapes[s].b, added = 0;
            uint64_t *keys = test_malloc(slots * sizeof *keys);
            for (uint64_t n = 0; n < slots * 9 / 10; n++) {
                uint64_t h = test_splitmix(&rng), i;
                uint32_t fp;
                nidus_table_locate(&t, h, &i, &fp);
                if (nidus_table_add(&t, &libc, i, fp) == NIDUS_OK)
                    keys[added++] = h;
            }
            nidus_table general = t;
            general.fast = NIDUS_FAST_NONE;
            general.probe = NIDUS_PROBE_GENERAL;
            for (uint64_t n = 0; n < added + 100000; n++) {
                uint64_t h = n < added ? keys[n] : test_splitmix(&rng), i;
                uint32_t fp;
                nidus_table_locate(&t, h, &i, &fp);
                bool fast = nidus_table_lookup(&t, h);
                assert_int_equal(fast, nidus_table_lookup(&general, h));
                assert_int_equal(fast, nidus_table_count(&general, i, fp) > 0);
                if (n < added)
                    assert_true(fast);
            }
            test_free(keys);
            nidus_table_release(&t, &libc);
        }
    }
}

/* Fill small tables until an add fails, for every bucket size and both encodings: the failed add must leave
 * every byte of the table as it was, and every fingerprint added before must still be found. */
static void test_failed_add_leaves_table_bit_for_bit_unchanged(void **state)
{
    (void)state;
    const struct { unsigned b, f; bool semi; } configs[] = {
        {1, 8, false}, {2, 12, false}, {4, 12, false}, {8, 16, false}, {4, 13, true}, {4, 9, true}, {8, 32, false}};
    uint64_t rng = test_seed() + 11;
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        nidus_table t = make(64, configs[c].b, configs[c].f, configs[c].semi, 16, 50);
        uint64_t hashes[1024];
        size_t n = 0;
        int failures = 0;
        uint8_t *snapshot = malloc((size_t)nidus_table_bytes(&t));
        while (failures < 20 && n < 1024) {
            uint64_t h = test_splitmix(&rng), i;
            uint32_t fp;
            nidus_table_locate(&t, h, &i, &fp);
            memcpy(snapshot, t.data, (size_t)nidus_table_bytes(&t));
            uint64_t occupied = t.occupied;
            nidus_status st = nidus_table_add(&t, &libc, i, fp);
            if (st == NIDUS_OK) {
                hashes[n++] = h;
                continue;
            }
            assert_int_equal(st, NIDUS_ERR_FULL);
            failures++;
            assert_memory_equal(snapshot, t.data, (size_t)nidus_table_bytes(&t));
            assert_int_equal(occupied, t.occupied);
            for (size_t k = 0; k < n; k++) {
                nidus_table_locate(&t, hashes[k], &i, &fp);
                assert_true(nidus_table_contains(&t, i, nidus_table_alt(&t, i, fp), fp));
            }
        }
        assert_int_equal(failures, 20);
        free(snapshot);
        nidus_table_release(&t, &libc);
    }
}

/* A table of more than 2^32 slots: indexes and bit positions past 32 bits work. The table is allocated zeroed
 * and only a few of its pages are ever touched. */
static void test_table_beyond_two_to_the_32_slots(void **state)
{
    (void)state;
    uint64_t buckets = (UINT64_C(1) << 30) + 1000; /* 4 * buckets > 2^32 slots, 2 GiB of 4-bit fields */
    nidus_table t = make(buckets, 4, 4, false, 16, 500);
    uint64_t rng = test_seed() + 5, hashes[4000];
    unsigned high = 0;
    for (int k = 0; k < 4000; k++) {
        uint64_t i;
        uint32_t fp;
        /* every other key is steered into the last 1000 buckets, whose slots are numbered past 2^32 */
        hashes[k] = test_splitmix(&rng);
        if (k % 2)
            hashes[k] = (hashes[k] >> 40) * buckets + (buckets - 1 - hashes[k] % 1000);
        nidus_table_locate(&t, hashes[k], &i, &fp);
        high += i * 4 >= (UINT64_C(1) << 32);
        assert_int_equal(nidus_table_add(&t, &libc, i, fp), NIDUS_OK);
    }
    assert_true(high > 0);
    for (int k = 0; k < 4000; k++) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&t, hashes[k], &i, &fp);
        assert_true(nidus_table_contains(&t, i, nidus_table_alt(&t, i, fp), fp));
        assert_true(nidus_table_remove(&t, i, fp));
    }
    assert_int_equal(t.occupied, 0);
    nidus_table_release(&t, &libc);
}

static int setup(void **state)
{
    (void)state;
    nidus_alloc_resolve(NULL, &libc);
    return 0;
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alternate_bucket_is_an_involution_for_any_even_size),
        cmocka_unit_test(test_failed_add_leaves_table_bit_for_bit_unchanged),
        cmocka_unit_test(test_lookup_kernels_agree_with_the_general_path),
        cmocka_unit_test(test_table_beyond_two_to_the_32_slots),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The internal cuckoo table: placement, atomic failure, and very large tables. */
#include "test_util.h"

#include "alloc.h"
#include "cuckoo_table_impl.h"
#include "params.h"

static nidus_allocator libc;

static nidus_table make(uint64_t buckets, unsigned b, unsigned f, bool semi, unsigned reach, unsigned kicks)
{
    nidus_table_shape shape = {.buckets = buckets, .bucket_size = b, .fp_bits = f, .offset_bits = f,
                               .reach_log2 = reach, .semi_sort = semi};
    nidus_table t;
    assert_int_equal(nidus_table_init(&t, &shape, kicks, &libc), NIDUS_OK);
    return t;
}

/* The placement fields of a table of m buckets (stride under range placement), without its memory. */
static nidus_table placement_only(uint64_t m, uint64_t stride, unsigned reach, bool mod)
{
    nidus_table t = {0};
    t.shape = (nidus_table_shape){.buckets = m, .bucket_size = 4, .fp_bits = 12, .offset_bits = 12,
                                  .reach_log2 = reach, .mod_placement = mod, .stride = mod ? 1 : stride};
    t.bucket_mod = nidus_fastmod_make(mod ? m : m / stride);
    t.fp_mask = t.offset_mask = 0xfff;
    if (!mod)
        t.xor_limit = nidus_range_xor_limit(m / stride, reach);
    return t;
}

/* alt() is an involution without fixed points for even bucket counts of every kind, with offsets below the
 * reach, under both placements. Mod placement: the pair reduces modulo any even divisor of the bucket count.
 * Range placement: both buckets in one 2^reach-aligned block below xor_limit, both at or past it otherwise; a
 * grown table (stride s) moves only the high digit i / s, and both the primary bucket
 * floor(h m / 2^64) and the pair reduce by floor division to every table whose stride divides s — what
 * compaction relies on. */
static void test_alternate_bucket_is_an_involution_for_any_even_size(void **state)
{
    (void)state;
    const uint64_t sizes[] = {2, 4, 6, 10, 1000, 999984, 600002, 131072, 3 * 65536 + 2, UINT64_C(1) << 33};
    const uint64_t strides[] = {1, 2, 3, 8, 12};
    const unsigned reaches[] = {1, 4, 16, 32};
    uint64_t rng = test_seed();
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (size_t r = 0; r < 4; r++) {
            nidus_table t = placement_only(sizes[k], 1, reaches[r], true);
            for (int n = 0; n < 20000; n++) {
                uint64_t i = test_splitmix(&rng) % sizes[k];
                uint32_t fp = (uint32_t)(test_splitmix(&rng) & 0xfff) | 1;
                uint64_t j = nidus_table_alt(&t, i, fp);
                assert_true(j < sizes[k]);
                assert_true(j != i);
                assert_int_equal(nidus_table_alt(&t, j, fp), i);
                uint64_t dist = i > j ? i - j : j - i;
                if (dist > sizes[k] / 2)
                    dist = sizes[k] - dist;
                assert_true(dist < (UINT64_C(1) << reaches[r]));
                /* reduction: the pair in a table of m/2 buckets (m/2 even) is the pair reduced mod m/2 */
                if (sizes[k] % 4 == 0) {
                    nidus_table half = placement_only(sizes[k] / 2, 1, reaches[r], true);
                    assert_int_equal(nidus_table_alt(&half, i % (sizes[k] / 2), fp), j % (sizes[k] / 2));
                }
            }
            for (size_t s = 0; s < sizeof strides / sizeof strides[0]; s++) {
                uint64_t m0 = sizes[k], stride = strides[s], m = m0 * stride;
                if (m0 > (UINT64_C(1) << 33) / stride)
                    continue;
                nidus_table g = placement_only(m, stride, reaches[r], false);
                for (int n = 0; n < 5000; n++) {
                    uint64_t h = test_splitmix(&rng);
                    uint64_t i;
                    uint32_t fp;
                    nidus_table_locate(&g, h, &i, &fp);
                    assert_int_equal(fp, (uint32_t)(h & 0xfff) | (uint32_t)((h & 0xfff) == 0));
                    uint64_t j = nidus_table_alt(&g, i, fp);
                    assert_true(i < m && j < m && j != i);
                    assert_int_equal(nidus_table_alt(&g, j, fp), i);
                    assert_int_equal(i % stride, j % stride); /* only the high digit moves */
                    uint64_t a = i / stride, b = j / stride, l = g.xor_limit;
                    if (a < l)
                        assert_true(b < l && a >> reaches[r] == b >> reaches[r]);
                    else
                        assert_true(b >= l && (l == 0 || m0 - l < (UINT64_C(2) << reaches[r])));
                    assert_int_equal(a, nidus_range_reduce(h, m0)); /* the high digit of the primary bucket */
                    /* every older table, stride / q: primary and pair by floor division */
                    for (uint64_t q = 1; q <= stride; q++) {
                        if (stride % q)
                            continue;
                        nidus_table older = placement_only(m / q, stride / q, reaches[r], false);
                        uint64_t io;
                        uint32_t fo;
                        nidus_table_locate(&older, h, &io, &fo);
                        assert_int_equal(io, i / q);
                        assert_int_equal(nidus_table_alt(&older, i / q, fp), j / q);
                    }
                }
            }
        }
    }
}

/* Adds random hashes for nine tenths of t's slots; the ones added go to keys[], their number returned. */
static uint64_t fill_nine_tenths(nidus_table *t, uint64_t *keys, uint64_t *rng)
{
    uint64_t slots = t->shape.buckets * t->shape.bucket_size, added = 0;
    for (uint64_t n = 0; n < slots * 9 / 10; n++) {
        uint64_t h = test_splitmix(rng), i;
        uint32_t fp;
        nidus_table_locate(t, h, &i, &fp);
        if (nidus_table_add(t, &libc, i, fp) == NIDUS_OK)
            keys[added++] = h;
    }
    return added;
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
            uint64_t *keys = test_malloc(sizes[z] * shapes[s].b * sizeof *keys);
            uint64_t added = fill_nine_tenths(&t, keys, &rng);
            nidus_table general = t;
            general.fast = general.kernel = NIDUS_FAST_NONE;
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

/* Every plain shape of b in {2, 4, 8}, f in 5..32 (the one-word buckets, the buckets of at most 64 bits that are
 * not whole bytes, read at their bit offset, and the wider ones): lookups, counts and the batch path agree with
 * the general path, in tables larger and smaller than the reach, with and without an overflow entry. */
static void test_every_plain_shape_agrees_with_the_general_path(void **state)
{
    (void)state;
    const unsigned sizes[] = {1000, 50}; /* reach 2^8: 1000 buckets have a partial last block, 50 wrap */
    uint64_t rng = test_seed() + 8;
    for (unsigned b = 2; b <= 8; b *= 2) {
        for (unsigned f = 5; f <= 32; f++) {
            for (size_t z = 0; z < 2; z++) {
                nidus_table t = make(sizes[z], b, f, false, 8, 500);
                if (b * f <= 64)
                    assert_int_not_equal(t.probe, NIDUS_PROBE_GENERAL);
                uint64_t *keys = test_malloc(sizes[z] * b * sizeof *keys);
                uint64_t added = fill_nine_tenths(&t, keys, &rng);
                nidus_table general = t;
                general.fast = general.kernel = NIDUS_FAST_NONE;
                general.probe = NIDUS_PROBE_GENERAL;
                general.bucket_bytes = 0;
                for (uint64_t n = 0; n < added + 4000; n++) {
                    uint64_t h = n < added ? keys[n] : test_splitmix(&rng), i;
                    uint32_t fp;
                    nidus_table_locate(&t, h, &i, &fp);
                    bool fast = nidus_table_lookup(&t, h);
                    assert_int_equal(fast, nidus_table_lookup(&general, h));
                    assert_int_equal(nidus_table_count(&t, i, fp), nidus_table_count(&general, i, fp));
                    assert_int_equal(fast, nidus_table_count(&general, i, fp) > 0);
                    if (n < added)
                        assert_true(fast);
                }
                test_free(keys);
                nidus_table_release(&t, &libc);
            }
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
        /* every other key is steered into the last ~1000 buckets, whose slots are numbered past 2^32: a hash
         * 2^64 - d with d < 2^44 lands at floor(h * buckets / 2^64) >= buckets - 1 - 2^44 * 2^30 / 2^64, about buckets - 1025 */
        hashes[k] = test_splitmix(&rng);
        if (k % 2)
            hashes[k] = ~(hashes[k] >> 20);
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
        cmocka_unit_test(test_every_plain_shape_agrees_with_the_general_path),
        cmocka_unit_test(test_table_beyond_two_to_the_32_slots),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The add kernels of one-word buckets (cuckoo_add_impl.h, the inline add of cuckoo.c, the word paths of the
 * search) against the general path (bit-level reads and writes, chunk by chunk): the same sequence of adds,
 * duplicate adds and removes gives the same statuses and the same bytes, every operation, up to and past the
 * first failed add; and a failed add changes no byte. */
#include "test_util.h"

#include "alloc.h"
#include "cuckoo_add_impl.h"
#include "cuckoo_dispatch.h"
#include "cuckoo_filter.h"
#include "cuckoo_packed.h"

static nidus_allocator libc;

typedef struct add_config {
    unsigned b, f;
    bool semi;
} add_config;

/* Every one-word shape the kernels take: b*f (or 4f-4) a multiple of 8, at most 64. */
static const add_config word_configs[] = {{4, 12, false}, {4, 13, true}, {4, 16, false}, {8, 8, false},
                                          {2, 16, false}, {2, 32, false}, {1, 8, false}, {4, 9, true},
                                          {4, 17, true},  {8, 4, false}, {4, 5, true},   {4, 7, true}};

/* The same table read and written through the general path only. */
static nidus_table general_copy(const nidus_table *t)
{
    nidus_table g = *t;
    g.probe = NIDUS_PROBE_GENERAL;
    g.fast = g.kernel = NIDUS_FAST_NONE;
    g.bucket_bytes = 0;
    g.data = malloc((size_t)nidus_table_bytes(t));
    memcpy(g.data, t->data, (size_t)nidus_table_bytes(t));
    g.overflow = (nidus_overflow){0};
    return g;
}

static void assert_same_table(const nidus_table *a, const nidus_table *b)
{
    assert_memory_equal(a->data, b->data, (size_t)nidus_table_bytes(a));
    assert_int_equal(a->occupied, b->occupied);
    assert_int_equal(a->overflow.total, b->overflow.total);
}

/* word_configs, then every plain bucket of at most 64 bits that is not whole bytes (b in {2, 4, 8}, f in 5..32),
 * which the same kernels read as one word at its bit offset (NIDUS_PROBE_PLAIN_BITS). */
static size_t all_configs(add_config *out)
{
    size_t n = 0;
    for (size_t c = 0; c < sizeof word_configs / sizeof word_configs[0]; c++)
        out[n++] = word_configs[c];
    for (unsigned b = 2; b <= 8; b *= 2)
        for (unsigned f = 5; f <= 32; f++)
            if (b * f <= 64 && b * f % 8 != 0)
                out[n++] = (add_config){b, f, false};
    return n;
}

static void test_word_kernels_write_what_the_general_path_writes(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 21;
    const unsigned kicks[] = {1, 2, 20, 500};
    add_config configs[128];
    size_t nconfigs = all_configs(configs);
    for (size_t c = 0; c < nconfigs; c++) {
        for (size_t k = 0; k < 4; k++) {
            const add_config *cfg = &configs[c];
            nidus_table_shape shape = {128, (uint8_t)cfg->b, (uint8_t)cfg->f, (uint8_t)cfg->f, 16, cfg->semi, false, 0, 1};
            nidus_table t;
            assert_int_equal(nidus_table_init(&t, &shape, kicks[k], &libc), NIDUS_OK);
            assert_int_not_equal(t.probe, NIDUS_PROBE_GENERAL);
            nidus_table g = general_copy(&t);
            uint64_t hashes[4096];
            size_t n = 0;
            int failures = 0;
            uint8_t *snapshot = malloc((size_t)nidus_table_bytes(&t));
            for (int op = 0; op < 4000 && failures < 30; op++) {
                uint64_t r = test_splitmix(&rng), h, i;
                uint32_t fp;
                /* mostly new keys, some copies of keys added before (duplicates), some removes */
                bool remove = n && r % 8 == 0;
                h = n && r % 8 < 3 ? hashes[(r >> 8) % n] : test_splitmix(&rng);
                nidus_table_locate(&t, h, &i, &fp);
                if (remove) {
                    assert_int_equal(nidus_table_remove(&t, i, fp), nidus_table_remove(&g, i, fp));
                } else {
                    memcpy(snapshot, t.data, (size_t)nidus_table_bytes(&t));
                    uint64_t occupied = t.occupied, items = nidus_table_items(&t);
                    nidus_status st = nidus_table_add(&t, &libc, i, fp);
                    assert_int_equal(st, nidus_table_add(&g, &libc, i, fp));
                    if (st == NIDUS_OK) {
                        if (n < 4096)
                            hashes[n++] = h;
                        assert_int_equal(nidus_table_items(&t), items + 1);
                    } else {
                        assert_int_equal(st, NIDUS_ERR_FULL);
                        failures++;
                        assert_memory_equal(snapshot, t.data, (size_t)nidus_table_bytes(&t));
                        assert_int_equal(occupied, t.occupied);
                    }
                }
                assert_same_table(&t, &g);
            }
            assert_true(failures > 0); /* the table was filled past its first failure */
            free(snapshot);
            free(g.data);
            nidus_overflow_release(&g.overflow, &libc);
            nidus_table_release(&t, &libc);
        }
    }
}

/* nidus_table_place_free (growth's and compaction's put) and the inline word kernels choose the same bucket
 * as the general path: the one with more free slots, the primary one on a tie. */
static void test_put_takes_the_emptier_bucket(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 22;
    add_config configs[128];
    size_t nconfigs = all_configs(configs);
    for (size_t c = 0; c < nconfigs; c++) {
        const add_config *cfg = &configs[c];
        nidus_table_shape shape = {1024, (uint8_t)cfg->b, (uint8_t)cfg->f, (uint8_t)cfg->f, 16, cfg->semi, false, 0, 1};
        nidus_table t;
        assert_int_equal(nidus_table_init(&t, &shape, 20, &libc), NIDUS_OK);
        for (int op = 0; op < 3000; op++) {
            uint64_t h = test_splitmix(&rng), i;
            uint32_t fp;
            nidus_table_locate(&t, h, &i, &fp);
            uint64_t j = nidus_table_alt(&t, i, fp);
            unsigned fi = nidus_table_bucket_count(&t, i, 0), fj = nidus_table_bucket_count(&t, j, 0);
            unsigned ci = nidus_table_bucket_count(&t, i, fp), cj = nidus_table_bucket_count(&t, j, fp);
            bool put = nidus_table_place_free(&t, i, fp);
            assert_int_equal(put, fi + fj > 0);
            if (!put)
                continue;
            bool to_j = fj > fi;
            assert_int_equal(nidus_table_bucket_count(&t, to_j ? j : i, fp), (to_j ? cj : ci) + 1);
            assert_int_equal(nidus_table_bucket_count(&t, to_j ? j : i, 0), (to_j ? fj : fi) - 1);
        }
        nidus_table_release(&t, &libc);
    }
}

static nidus_cuckoo *filter(unsigned f, bool semi, unsigned kicks)
{
    nidus_cuckoo_params p = {0};
    p.capacity = 2000;
    p.fingerprint_bits = f;
    p.bucket_size = 4;
    p.semi_sort = semi;
    p.max_kicks = kicks;
    p.seed = 7;
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

/* The filter's inline add (nidus_cuckoo_add, _add_hash, _add_many on a one-table filter of one-word buckets,
 * both compiled copies of them) against the same filter forced onto the general path: same statuses, same
 * bytes, same counts, past the first failure (no growth), and a failed add changes nothing. */
static void test_filter_add_kernels_agree_with_the_general_path(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 23;
    const add_config configs[] = {{4, 12, false}, {4, 13, true}, {4, 16, false}};
    for (size_t c = 0; c < 6; c++) {
        nidus_cuckoo *fast = filter(configs[c % 3].f, configs[c % 3].semi, 20);
        nidus_cuckoo *slow = filter(configs[c % 3].f, configs[c % 3].semi, 20);
        /* the full filters behind the handles (a small filter's handle may be packed or forward) */
        nidus_cuckoo *ff = nidus_cuckoo_unpack(fast), *sf = nidus_cuckoo_unpack(slow);
        assert_non_null(ff);
        assert_non_null(sf);
        assert_int_not_equal(ff->tables[0].fast, NIDUS_FAST_NONE);
        if (c >= 3) /* the baseline copy of the kernels, where this CPU chose the x86-64-v3 one */
            ff->tables[0].isa = NIDUS_ISA_BASE;
        sf->tables[0].probe = NIDUS_PROBE_GENERAL;
        sf->tables[0].fast = NIDUS_FAST_NONE;
        sf->tables[0].bucket_bytes = 0;
        nidus_cuckoo_redispatch(ff); /* the cached kernel choice follows the forced one */
        nidus_cuckoo_redispatch(sf);
        const nidus_table *t = &ff->tables[0];
        size_t bytes = (size_t)nidus_table_bytes(t);
        uint8_t *snapshot = malloc(bytes);
        uint64_t keys[3000];
        unsigned failures = 0;
        for (unsigned n = 0; n < 3000; n++) {
            uint64_t r = test_splitmix(&rng);
            keys[n] = n && r % 10 == 0 ? keys[(r >> 8) % n] : test_splitmix(&rng); /* some duplicates */
            memcpy(snapshot, t->data, bytes);
            uint64_t before = t->occupied;
            nidus_status st;
            if (n % 3 == 0) {
                st = nidus_cuckoo_add(fast, &keys[n], sizeof keys[n]);
            } else if (n % 3 == 1) {
                st = nidus_cuckoo_add_hash(fast, nidus_cuckoo_hash(fast, &keys[n], sizeof keys[n]));
            } else {
                const void *key = &keys[n];
                size_t len = sizeof keys[n], added = 0;
                st = nidus_cuckoo_add_many(fast, &key, &len, 1, &added);
                assert_int_equal(added, st == NIDUS_OK);
            }
            assert_int_equal(st, nidus_cuckoo_add(slow, &keys[n], sizeof keys[n]));
            if (st != NIDUS_OK) {
                assert_int_equal(st, NIDUS_ERR_FULL);
                failures++;
                assert_memory_equal(snapshot, t->data, bytes);
                assert_int_equal(before, t->occupied);
            }
            assert_same_table(&ff->tables[0], &sf->tables[0]);
            assert_int_equal(nidus_cuckoo_count(fast, &keys[n], 8), nidus_cuckoo_count(slow, &keys[n], 8));
        }
        assert_true(failures > 0);
        free(snapshot);
        nidus_cuckoo_free(fast);
        nidus_cuckoo_free(slow);
    }
}

int main(void)
{
    nidus_alloc_resolve(NULL, &libc);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_word_kernels_write_what_the_general_path_writes),
        cmocka_unit_test(test_put_takes_the_emptier_bucket),
        cmocka_unit_test(test_filter_add_kernels_agree_with_the_general_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Batched calls answer exactly as one-at-a-time calls do. */
#include "test_util.h"

#include "cuckoo_dispatch.h"
#include "isa_impl.h"

static nidus_cuckoo *make(uint64_t capacity, unsigned b, unsigned f, bool semi)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .fingerprint_bits = f, .semi_sort = semi,
                             .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

/* Keys "<ns>:0" .. "<ns>:n-1" as the pointer and length arrays the `_many` calls take. */
static void fill_keys(char (*storage)[24], const void **keys, size_t *lens, size_t n, const char *ns)
{
    for (size_t k = 0; k < n; k++) {
        lens[k] = test_key(storage[k], sizeof storage[k], ns, (uint64_t)k);
        keys[k] = storage[k];
    }
}

static const struct { unsigned b, f; bool semi; } configs[] = {
    {1, 8, false}, {2, 8, false}, {4, 12, false}, {4, 16, false}, {8, 12, false}, {8, 32, false},
    {4, 9, true}, {4, 13, true}, {4, 17, true}, {4, 24, true}, {4, 13, false}, {2, 13, false}, {4, 15, false}};

static void test_contains_many_equals_single_lookups(void **state)
{
    (void)state;
    uint64_t rng = test_seed();
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        nidus_cuckoo *cf = make(20000, configs[c].b, configs[c].f, configs[c].semi);
        static uint64_t present[20000], mix[50000];
        uint64_t stored = 0; /* b = 1 may fill before its capacity (see docs/DESIGN-NOTES.md) */
        while (stored < 20000 && nidus_cuckoo_add_hash(cf, present[stored] = test_splitmix(&rng)) == NIDUS_OK)
            stored++;
        assert_true(stored > 10000);
        for (int k = 0; k < 50000; k++) /* a random mix of present and absent keys, odd lengths of batch */
            mix[k] = (test_splitmix(&rng) & 1) ? present[test_splitmix(&rng) % stored] : test_splitmix(&rng);
        static bool out[50000];
        const size_t lengths[] = {0, 1, 15, 16, 17, 33, 50000};
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            memset(out, 0xff, sizeof out);
            nidus_cuckoo_contains_many_hash(cf, mix, lengths[l], out);
            for (size_t k = 0; k < lengths[l]; k++)
                assert_int_equal(out[k], nidus_cuckoo_contains_hash(cf, mix[k]));
        }
        nidus_cuckoo_free(cf);
    }
}

static void test_contains_many_by_key_equals_single_lookups(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(1000, 4, 12, false);
    char storage[3000][24];
    const void *keys[3000];
    size_t lens[3000];
    fill_keys(storage, keys, lens, 3000, "key");
    for (int k = 0; k < 3000; k += 3)
        assert_int_equal(nidus_cuckoo_add(cf, keys[k], lens[k]), NIDUS_OK);
    bool out[3000];
    nidus_cuckoo_contains_many(cf, keys, lens, 3000, out);
    for (int k = 0; k < 3000; k++) {
        assert_int_equal(out[k], nidus_cuckoo_contains(cf, keys[k], lens[k]));
        if (k % 3 == 0)
            assert_true(out[k]);
    }
    nidus_cuckoo_free(cf);
}

/* Every compiled copy of the lookup kernels (isa_impl.h: baseline, and x86-64-v3 where this CPU has it) gives
 * the same answers, single and batched, by key and by hash, counts included, on one-table and grown filters,
 * for keys of every length up to 40 bytes (the short-key hash inline, longer ones out of line). */
static void test_every_instruction_set_copy_answers_alike(void **state)
{
    (void)state;
    enum { N = 6000 };
    static char storage[N][48];
    static const void *keys[N];
    static size_t lens[N];
    static bool want[N], want_hash[N], got[N];
    static uint64_t hashes[N], counts[N];
    uint64_t rng = test_seed() + 11;
    for (size_t k = 0; k < N; k++) {
        lens[k] = k % 41;
        for (size_t b = 0; b < lens[k]; b++)
            storage[k][b] = (char)test_splitmix(&rng);
        keys[k] = storage[k];
        hashes[k] = test_splitmix(&rng);
    }
    unsigned isas[2] = {NIDUS_ISA_BASE, nidus_isa_detect()};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        for (int grown = 0; grown < 2; grown++) {
            nidus_cuckoo_params p = {.capacity = grown ? 500 : 12000, .bucket_size = configs[c].b,
                                     .fingerprint_bits = configs[c].f, .semi_sort = configs[c].semi,
                                     .expansion = grown ? 2 : 0, .seed = test_seed()};
            nidus_cuckoo *cf = NULL;
            assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
            static bool in_key[N], in_hash[N]; /* b = 1 may refuse adds before its capacity */
            for (size_t k = 0; k < N; k++) {
                in_key[k] = k < N / 2 && nidus_cuckoo_add(cf, keys[k], lens[k]) == NIDUS_OK;
                in_hash[k] = k < N / 2 && nidus_cuckoo_add_hash(cf, hashes[k]) == NIDUS_OK;
            }
            nidus_cuckoo *full = nidus_cuckoo_unpack(cf); /* a forward now: its tables stay as set below */
            assert_non_null(full);
            if (grown ? full->ntables < 2 && configs[c].f < 32 : full->ntables != 1) /* f = 32 cannot grow */
                fail_msg("config %zu grown %d: %u tables", c, grown, full->ntables);
            for (size_t v = 0; v < 2; v++) {
                for (unsigned t = 0; t < full->ntables; t++)
                    full->tables[t].isa = (unsigned char)isas[v];
                nidus_cuckoo_redispatch(full); /* the cached kernel choice follows the forced copy */
                for (size_t k = 0; k < N; k++) {
                    bool one = nidus_cuckoo_contains(cf, keys[k], lens[k]);
                    bool one_hash = nidus_cuckoo_contains_hash(cf, hashes[k]);
                    uint64_t count = nidus_cuckoo_count(cf, keys[k], lens[k]);
                    if (v == 0) {
                        want[k] = one;
                        want_hash[k] = one_hash;
                        counts[k] = count;
                    }
                    assert_int_equal(one, want[k]);
                    assert_int_equal(one_hash, want_hash[k]);
                    assert_int_equal(count, counts[k]);
                    assert_int_equal(count > 0, one);
                    assert_true(one || !in_key[k]);
                    assert_true(one_hash || !in_hash[k]);
                }
                nidus_cuckoo_contains_many(cf, keys, lens, N, got);
                assert_memory_equal(got, want, sizeof want);
                nidus_cuckoo_contains_many_hash(cf, hashes, N, got);
                assert_memory_equal(got, want_hash, sizeof want_hash);
            }
            nidus_cuckoo_free(cf);
        }
    }
}

/* add_many makes the very same table as adding one by one (same seed, same moves), and on a full filter
 * stops at the first key that does not fit, reporting how many went in. */
static void test_add_many_equals_sequential_adds(void **state)
{
    (void)state;
    uint64_t rng = test_seed() + 1;
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        nidus_cuckoo *one = make(5000, configs[c].b, configs[c].f, configs[c].semi);
        nidus_cuckoo *many = make(5000, configs[c].b, configs[c].f, configs[c].semi);
        static uint64_t hashes[20000];
        for (int k = 0; k < 20000; k++)
            hashes[k] = test_splitmix(&rng);
        size_t sequential = 0;
        while (sequential < 20000 && nidus_cuckoo_add_hash(one, hashes[sequential]) == NIDUS_OK)
            sequential++;
        size_t added = 12345;
        nidus_status st = nidus_cuckoo_add_many_hash(many, hashes, 20000, &added);
        assert_int_equal(st, sequential < 20000 ? NIDUS_ERR_FULL : NIDUS_OK);
        assert_int_equal(added, sequential);
        nidus_cuckoo_thawed tw1, tw2;
        const nidus_cuckoo *f1 = nidus_cuckoo_inspect(one, &tw1), *f2 = nidus_cuckoo_inspect(many, &tw2);
        assert_memory_equal(f1->tables[0].data, f2->tables[0].data, (size_t)nidus_table_bytes(&f1->tables[0]));
        nidus_cuckoo_free(one);
        nidus_cuckoo_free(many);
    }
}

static void test_add_many_by_key(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(1000, 0, 0, false);
    char storage[200][24];
    const void *keys[200];
    size_t lens[200], added = 0;
    fill_keys(storage, keys, lens, 200, "k");
    assert_int_equal(nidus_cuckoo_add_many(cf, keys, lens, 200, &added), NIDUS_OK);
    assert_int_equal(added, 200);
    for (int k = 0; k < 200; k++)
        assert_true(nidus_cuckoo_count(cf, keys[k], lens[k]) >= 1); /* more only through a collision */
    assert_int_equal(nidus_cuckoo_add_many(cf, keys, lens, 0, NULL), NIDUS_OK);
    nidus_cuckoo_free(cf);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contains_many_equals_single_lookups),
        cmocka_unit_test(test_contains_many_by_key_equals_single_lookups),
        cmocka_unit_test(test_every_instruction_set_copy_answers_alike),
        cmocka_unit_test(test_add_many_equals_sequential_adds),
        cmocka_unit_test(test_add_many_by_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

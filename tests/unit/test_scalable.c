/* SPDX-License-Identifier: BSD-3-Clause */
/* The scalable cuckoo filter: growth, its limits, the error bound across growth, compaction. */
#include "test_util.h"

#include <nidus/nidus.h>

static nidus_cuckoo *make(const nidus_cuckoo_params *p)
{
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(p, &cf), NIDUS_OK);
    return cf;
}

static nidus_cuckoo_stats stats(const nidus_cuckoo *cf)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    return s;
}

static uint64_t key_hash(const nidus_cuckoo *cf, const char *ns, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, ns, i);
    return nidus_cuckoo_hash(cf, buf, n);
}

/* ---- model-based: add / add_unique / remove / count / compact across growth, against an exact multiset ---- */

#define POOL 3000

static void check_model(const nidus_cuckoo *cf, const uint64_t *hash, const uint32_t *model, uint64_t total)
{
    for (int k = 0; k < POOL; k++)
        if (model[k]) {
            assert_true(nidus_cuckoo_contains_hash(cf, hash[k])); /* never a false negative */
            assert_true(nidus_cuckoo_count_hash(cf, hash[k]) >= model[k]);
        }
    assert_int_equal(stats(cf).items, total);
}

static void run_model(unsigned b, unsigned f, bool semi, unsigned expansion, uint64_t seed)
{
    nidus_cuckoo_params p = {.capacity = 60, .bucket_size = b, .fingerprint_bits = f, .semi_sort = semi,
                             .max_kicks = 50, .expansion = expansion, .max_tables = 40, .seed = seed};
    nidus_cuckoo *cf = make(&p);
    static uint64_t hash[POOL];
    static uint32_t model[POOL];
    memset(model, 0, sizeof model);
    uint64_t rng = seed, total = 0;
    unsigned most_tables = 1;
    for (int k = 0; k < POOL; k++)
        hash[k] = key_hash(cf, "scalable", (uint64_t)k);
    for (int step = 0; step < 12000; step++) {
        uint64_t r = test_splitmix(&rng);
        /* the pool in use widens over time, so the filter grows; a few keys repeat often */
        int k = (int)(r % (uint64_t)(1 + step / 4));
        if (k >= POOL || (r >> 58) == 0)
            k = (int)(r % 5);
        unsigned op = (unsigned)((r >> 32) % 16);
        if (op < 7) {
            nidus_status st = nidus_cuckoo_add_hash(cf, hash[k]);
            assert_true(st == NIDUS_OK || st == NIDUS_ERR_LIMIT_TABLES);
            if (st == NIDUS_OK)
                model[k]++, total++;
        } else if (op < 9) {
            bool added, present = nidus_cuckoo_contains_hash(cf, hash[k]);
            nidus_status st = nidus_cuckoo_add_unique_hash(cf, hash[k], &added);
            assert_true(st == NIDUS_OK || st == NIDUS_ERR_LIMIT_TABLES);
            assert_true(added == (st == NIDUS_OK && !present));
            if (added)
                model[k]++, total++;
        } else if (op < 14) {
            if (model[k]) { /* only present keys: an absent one may take a colliding key's copy */
                assert_int_equal(nidus_cuckoo_remove_hash(cf, hash[k]), NIDUS_OK);
                model[k]--, total--;
            }
        } else if (op == 14 && step % 40 == 0) {
            assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
            assert_int_equal(stats(cf).items_deleted, 0);
        } else {
            assert_true(nidus_cuckoo_count_hash(cf, hash[k]) >= model[k]);
        }
        nidus_cuckoo_stats s = stats(cf);
        most_tables = s.tables > most_tables ? s.tables : most_tables;
        assert_true(s.error_bound <= 2.0 * s.target_error);
        if (step % 500 == 0)
            check_model(cf, hash, model, total);
    }
    check_model(cf, hash, model, total);
    assert_true(most_tables >= 3); /* the test did exercise growth */
    for (int k = 0; k < POOL; k++)
        while (model[k]--)
            assert_int_equal(nidus_cuckoo_remove_hash(cf, hash[k]), NIDUS_OK);
    assert_int_equal(stats(cf).items, 0);
    nidus_cuckoo_compact(cf, NULL);
    assert_int_equal(stats(cf).tables, 1);
    nidus_cuckoo_free(cf);
}

static void test_model_across_growth(void **state)
{
    (void)state;
    static const unsigned configs[][4] = {{2, 8, 0, 1}, {4, 8, 0, 2}, {4, 12, 1, 1}, {4, 9, 1, 2}, {8, 10, 0, 1},
                                          {2, 16, 0, 2}, {4, 5, 1, 1}, {1, 12, 0, 2}};
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
        run_model(configs[c][0], configs[c][1], configs[c][2], configs[c][3], test_seed() + c);
}

/* ---- the error bound across growth ---- */

static void test_error_after_ten_expansions_within_twice_target(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 1000, .error_rate = 0.01, .expansion = 2, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    uint64_t n = 0;
    while (stats(cf).tables < 11) {
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "grow", n)), NIDUS_OK);
        n++;
    }
    /* fill the eleventh table too: the bound is for full tables */
    for (uint64_t stop = n * 2; n < stop && stats(cf).tables == 11; n++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "grow", n)), NIDUS_OK);
    nidus_cuckoo_stats s = stats(cf);
    assert_true(s.target_error <= 0.01);
    assert_true(s.error_bound <= 2.0 * s.target_error);
    for (uint64_t k = 0; k < n; k += 7)
        assert_true(nidus_cuckoo_contains_hash(cf, key_hash(cf, "grow", k)));
    const uint64_t trials = 400000;
    uint64_t fp = 0;
    for (uint64_t k = 0; k < trials; k++)
        fp += nidus_cuckoo_contains_hash(cf, key_hash(cf, "absent", k));
    double rate = (double)fp / (double)trials;
    printf("# %u tables, %" PRIu64 " items: measured error %.5f, bound %.5f, target %.5f\n", s.tables, s.items,
           rate, s.error_bound, s.target_error);
    assert_true(rate <= test_rate_ceiling(2.0 * s.target_error, (double)trials));
    assert_true(rate <= test_rate_ceiling(s.error_bound, (double)trials));
    nidus_cuckoo_free(cf);
}

/* Each new table gets more fingerprint bits, never fewer, and sizes multiply by the expansion. */
static void test_tables_grow_by_expansion_with_longer_fingerprints(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 500, .bucket_size = 4, .fingerprint_bits = 8, .expansion = 3,
                             .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    for (uint64_t n = 0; stats(cf).tables < 4; n++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "g", n)), NIDUS_OK);
    nidus_cuckoo_table_stats prev, t;
    assert_int_equal(nidus_cuckoo_get_table_stats(cf, 0, &prev), NIDUS_OK);
    assert_int_equal(prev.fingerprint_bits, 8);
    for (unsigned k = 1; k < 4; k++) {
        assert_int_equal(nidus_cuckoo_get_table_stats(cf, k, &t), NIDUS_OK);
        assert_int_equal(t.buckets, prev.buckets * 3);
        assert_true(t.fingerprint_bits > prev.fingerprint_bits);
        prev = t;
    }
    assert_int_equal(nidus_cuckoo_get_table_stats(cf, 4, &t), NIDUS_ERR_INVALID_ARGUMENT);
    nidus_cuckoo_free(cf);
}

/* ---- limits: each failure leaves the filter as it was ---- */

static uint64_t fill_until_failure(nidus_cuckoo *cf, const char *ns, nidus_status *st)
{
    uint64_t n = 0;
    while ((*st = nidus_cuckoo_add_hash(cf, key_hash(cf, ns, n))) == NIDUS_OK)
        n++;
    return n;
}

/* After a failed add: exactly the n added items, all present. */
static void check_nothing_lost(nidus_cuckoo *cf, const char *ns, uint64_t n, unsigned tables)
{
    nidus_cuckoo_stats s = stats(cf);
    assert_int_equal(s.items, n);
    assert_int_equal(s.tables, tables);
    for (uint64_t k = 0; k < n; k++)
        assert_true(nidus_cuckoo_contains_hash(cf, key_hash(cf, ns, k)));
}

static void test_expansion_zero_fails_full(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 300, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    nidus_status st;
    uint64_t n = fill_until_failure(cf, "e0", &st);
    assert_int_equal(st, NIDUS_ERR_FULL);
    assert_true(n >= 300);
    check_nothing_lost(cf, "e0", n, 1);
    nidus_cuckoo_free(cf);
}

static void test_max_tables_is_enforced(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 100, .expansion = 1, .max_tables = 3, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    nidus_status st;
    uint64_t n = fill_until_failure(cf, "mt", &st);
    assert_int_equal(st, NIDUS_ERR_LIMIT_TABLES);
    check_nothing_lost(cf, "mt", n, 3);
    nidus_cuckoo_free(cf);
}

static void test_max_memory_is_enforced(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 1000, .expansion = 2, .max_memory = 40000, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    nidus_status st;
    uint64_t n = fill_until_failure(cf, "mm", &st);
    assert_int_equal(st, NIDUS_ERR_LIMIT_MEMORY);
    unsigned tables = stats(cf).tables;
    assert_true(tables >= 2);
    assert_true(stats(cf).memory_bytes <= 40000 + 4096); /* the tables within the limit; the handle beside */
    check_nothing_lost(cf, "mm", n, tables);
    nidus_cuckoo_free(cf);
    /* a first table larger than the limit is refused at creation */
    p.capacity = 100000;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_ERR_LIMIT_MEMORY);
}

/* The filter's own encoding decodes, and re-encodes to the same bytes. */
static void assert_encoding_decodes(const nidus_cuckoo *cf)
{
    size_t n = (size_t)nidus_cuckoo_encoded_size(cf);
    uint8_t *a = malloc(n), *b = malloc(n);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(nidus_cuckoo_encode(cf, a, n, NULL), NIDUS_OK);
    nidus_cuckoo *copy = NULL;
    assert_int_equal(nidus_cuckoo_decode(a, n, NULL, &copy), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_encode(copy, b, n, NULL), NIDUS_OK);
    assert_memory_equal(a, b, n);
    nidus_cuckoo_free(copy);
    free(a);
    free(b);
}

/* Duplicate copies of one key fill its bucket pair and spill into the overflow map, whose memory
 * pushes the tables past max_memory; growth then computed max_memory - held, wrapped, and grew without limit,
 * and the decoder refused the filter's own encoding. Growth must now refuse, and every state must load. */
static void overflow_past_limit_then_fill(const nidus_cuckoo_params *p)
{
    nidus_cuckoo *cf = make(p);
    for (int k = 0; k < 17; k++) /* 16 copies fill both buckets of b = 8; the 17th overflows */
        assert_int_equal(nidus_cuckoo_add(cf, "k", 1), NIDUS_OK);
    assert_int_equal(stats(cf).overflow_items, 1);
    nidus_cuckoo_table_stats t;
    assert_int_equal(nidus_cuckoo_get_table_stats(cf, 0, &t), NIDUS_OK);
    assert_true(t.memory_bytes > p->max_memory); /* the reproduction's precondition: the map passed the limit */
    assert_encoding_decodes(cf);
    nidus_status st = NIDUS_OK;
    uint64_t n = 0;
    for (; n < 100000 && !st; n++) {
        st = nidus_cuckoo_add_hash(cf, key_hash(cf, "ov", n));
        assert_encoding_decodes(cf);
    }
    assert_int_equal(st, NIDUS_ERR_LIMIT_MEMORY);
    assert_int_equal(stats(cf).tables, 1); /* no room for a second table once the map passed the limit */
    assert_int_equal(nidus_cuckoo_count(cf, "k", 1), 17);
    nidus_cuckoo_free(cf);
}

static void test_overflow_past_max_memory_stops_growth(void **state)
{
    (void)state;
    /* The configuration (capacity 48, b=8, f=8, max_memory 947, max_kicks 90) relied on a 720-byte kick
     * log; tables have none now, so the same state is derived from the table's size, whatever a table costs. */
    nidus_cuckoo_params p = {.capacity = 48, .bucket_size = 8, .fingerprint_bits = 8, .expansion = 1};
    nidus_cuckoo *probe = make(&p);
    nidus_cuckoo_table_stats t;
    assert_int_equal(nidus_cuckoo_get_table_stats(probe, 0, &t), NIDUS_OK);
    nidus_cuckoo_free(probe);
    p.max_memory = t.memory_bytes + 8; /* less than the overflow map's first allocation */
    overflow_past_limit_then_fill(&p);
}

static void test_growth_parameters_are_checked(void **state)
{
    (void)state;
    nidus_cuckoo *cf = NULL;
    nidus_cuckoo_params p = {.capacity = 100, .expansion = NIDUS_CUCKOO_MAX_EXPANSION + 1};
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_ERR_INVALID_ARGUMENT);
    p.expansion = 1;
    p.max_tables = NIDUS_CUCKOO_MAX_TABLES + 1;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_ERR_INVALID_ARGUMENT);
    assert_null(cf);
}

/* Fingerprints run out: from f = 30, table 1 needs 32 bits to keep within its budget (bound(0) * 0.39) and
 * table 2 would need 33, so growth stops at two tables. */
static void test_growth_stops_when_bits_run_out(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 50, .bucket_size = 4, .fingerprint_bits = 30, .expansion = 1,
                             .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    nidus_status st;
    uint64_t n = fill_until_failure(cf, "bits", &st);
    assert_int_equal(st, NIDUS_ERR_LIMIT_TABLES);
    check_nothing_lost(cf, "bits", n, 2);
    nidus_cuckoo_free(cf);
}

/* ---- duplicates do not grow the filter ---- */

static void test_duplicates_are_counted_not_grown(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 100, .expansion = 1, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    uint64_t h = key_hash(cf, "dup", 1);
    for (int k = 0; k < 5000; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, h), NIDUS_OK);
    assert_int_equal(stats(cf).tables, 1);
    assert_int_equal(nidus_cuckoo_count_hash(cf, h), 5000);
    nidus_cuckoo_free(cf);
}

/* ---- compaction ---- */

static void test_compaction_frees_tables_and_keeps_items(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 200, .bucket_size = 4, .expansion = 2, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    uint64_t n = 0;
    while (stats(cf).tables < 4)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "c", n++)), NIDUS_OK);
    /* remove two thirds; automatic compaction may run on the way */
    for (uint64_t k = 0; k < n; k++)
        if (k % 3)
            assert_int_equal(nidus_cuckoo_remove_hash(cf, key_hash(cf, "c", k)), NIDUS_OK);
    unsigned freed = 0;
    assert_int_equal(nidus_cuckoo_compact(cf, &freed), NIDUS_OK);
    nidus_cuckoo_stats s = stats(cf);
    assert_true(s.tables < 4);
    assert_int_equal(s.items_deleted, 0);
    assert_int_equal(s.items, (n + 2) / 3);
    for (uint64_t k = 0; k < n; k += 3)
        assert_true(nidus_cuckoo_contains_hash(cf, key_hash(cf, "c", k)));
    /* and it keeps working: adds, removes */
    for (uint64_t k = n; k < n + 500; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "c", k)), NIDUS_OK);
    for (uint64_t k = 0; k < n; k += 3)
        assert_int_equal(nidus_cuckoo_remove_hash(cf, key_hash(cf, "c", k)), NIDUS_OK);
    nidus_cuckoo_free(cf);
}

static void test_deletes_trigger_compaction(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 200, .expansion = 1, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    uint64_t n = 0;
    while (stats(cf).tables < 3)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "auto", n++)), NIDUS_OK);
    /* the newest table holds few items; once removes pass a tenth of the items, a remove starts a compaction,
     * which steps of bounded work carry on (here 64 buckets after each remove) into the slots the removes freed
     * (each needs one in its own bucket pair, so it may take a few rounds) */
    uint64_t k = 0;
    bool started = false;
    for (; k < n / 2 && stats(cf).tables == 3; k++) {
        uint64_t before = stats(cf).items_deleted;
        assert_int_equal(nidus_cuckoo_remove_hash(cf, key_hash(cf, "auto", k)), NIDUS_OK);
        if (!started && nidus_cuckoo_compacting(cf, NULL)) { /* started by this remove, at its threshold */
            started = true;
            assert_true((double)(before + 1) > 0.10 * (double)stats(cf).items);
            assert_true((double)before <= 0.10 * (double)(stats(cf).items + 1));
        }
        assert_int_equal(nidus_cuckoo_compact_step(cf, 64, NULL), NIDUS_OK);
    }
    assert_true(started);
    assert_true(stats(cf).tables < 3);
    assert_true(stats(cf).items_deleted < k);
    for (uint64_t j = k; j < n; j++)
        assert_true(nidus_cuckoo_contains_hash(cf, key_hash(cf, "auto", j)));
    nidus_cuckoo_free(cf);
}

static void test_clear_drops_grown_tables(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 100, .expansion = 2, .seed = test_seed()};
    nidus_cuckoo *cf = make(&p);
    for (uint64_t n = 0; stats(cf).tables < 3; n++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "clr", n)), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_clear(cf), NIDUS_OK);
    nidus_cuckoo_stats s = stats(cf);
    assert_int_equal(s.tables, 1);
    assert_int_equal(s.items, 0);
    assert_false(nidus_cuckoo_contains_hash(cf, key_hash(cf, "clr", 0)));
    nidus_cuckoo_free(cf);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_across_growth),
        cmocka_unit_test(test_error_after_ten_expansions_within_twice_target),
        cmocka_unit_test(test_tables_grow_by_expansion_with_longer_fingerprints),
        cmocka_unit_test(test_expansion_zero_fails_full),
        cmocka_unit_test(test_max_tables_is_enforced),
        cmocka_unit_test(test_max_memory_is_enforced),
        cmocka_unit_test(test_overflow_past_max_memory_stops_growth),
        cmocka_unit_test(test_growth_parameters_are_checked),
        cmocka_unit_test(test_growth_stops_when_bits_run_out),
        cmocka_unit_test(test_duplicates_are_counted_not_grown),
        cmocka_unit_test(test_compaction_frees_tables_and_keeps_items),
        cmocka_unit_test(test_deletes_trigger_compaction),
        cmocka_unit_test(test_clear_drops_grown_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

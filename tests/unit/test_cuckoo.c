/* SPDX-License-Identifier: BSD-3-Clause */
/* The public cuckoo filter, tested as a user sees it. */
#include <inttypes.h>

#include "test_util.h"

#include <nidus/nidus.h>

static nidus_cuckoo *make(uint64_t capacity, unsigned b, unsigned f, bool semi, unsigned kicks)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .fingerprint_bits = f, .semi_sort = semi,
                             .max_kicks = kicks, .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

static uint64_t key_hash(const nidus_cuckoo *cf, const char *ns, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, ns, i);
    return nidus_cuckoo_hash(cf, buf, n);
}

/* ---- model-based: random add / add_unique / remove / count against an exact multiset ---- */

#define POOL 400

static void check_model(const nidus_cuckoo *cf, const uint64_t *hash, const uint32_t *model)
{
    for (int k = 0; k < POOL; k++) {
        if (model[k]) {
            assert_true(nidus_cuckoo_contains_hash(cf, hash[k])); /* never a false negative */
            assert_true(nidus_cuckoo_count_hash(cf, hash[k]) >= model[k]);
        }
    }
}

static void run_model(unsigned b, unsigned f, bool semi, uint64_t seed)
{
    nidus_cuckoo *cf = make(150, b, f, semi, 100);
    uint64_t hash[POOL], rng = seed;
    uint32_t model[POOL] = {0};
    uint64_t total = 0;
    for (int k = 0; k < POOL; k++)
        hash[k] = key_hash(cf, "model", (uint64_t)k);
    for (int step = 0; step < 3000; step++) {
        uint64_t r = test_splitmix(&rng);
        int k = (int)(r % POOL);
        if (r >> 60 < 4 && k % 7 == 0)
            k = (int)(r % 8); /* a few keys are added many times: duplicates and overflow */
        switch ((r >> 32) % 5) {
        case 0:
        case 1: {
            nidus_status st = nidus_cuckoo_add_hash(cf, hash[k]);
            assert_true(st == NIDUS_OK || st == NIDUS_ERR_FULL);
            if (st == NIDUS_OK) {
                model[k]++;
                total++;
            }
            break;
        }
        case 2: {
            bool added;
            bool present = nidus_cuckoo_contains_hash(cf, hash[k]);
            nidus_status st = nidus_cuckoo_add_unique_hash(cf, hash[k], &added);
            assert_true(st == NIDUS_OK || st == NIDUS_ERR_FULL);
            assert_true(added == (st == NIDUS_OK && !present));
            if (added) {
                model[k]++;
                total++;
            }
            break;
        }
        case 3: /* only keys that are present: removing an absent key may take a colliding key's copy */
            if (model[k]) {
                assert_int_equal(nidus_cuckoo_remove_hash(cf, hash[k]), NIDUS_OK);
                model[k]--;
                total--;
            }
            break;
        default:
            assert_true(nidus_cuckoo_count_hash(cf, hash[k]) >= model[k]);
        }
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(cf, &s);
        assert_int_equal(s.items, total);
        if (step % 50 == 0)
            check_model(cf, hash, model);
    }
    check_model(cf, hash, model);
    /* empty it through the API: everything comes out, and the filter is then empty */
    for (int k = 0; k < POOL; k++)
        while (model[k]--)
            assert_int_equal(nidus_cuckoo_remove_hash(cf, hash[k]), NIDUS_OK);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_int_equal(s.items, 0);
    assert_int_equal(s.load, 0.0);
    nidus_cuckoo_free(cf);
}

static void test_model_every_bucket_size_and_width(void **state)
{
    (void)state;
    const unsigned sizes[] = {1, 2, 4, 8}, widths[] = {4, 7, 8, 12, 13, 16, 21, 32};
    uint64_t seed = test_seed();
    for (int bi = 0; bi < 4; bi++)
        for (int fi = 0; fi < 8; fi++)
            for (int rep = 0; rep < 3; rep++)
                run_model(sizes[bi], widths[fi], false, seed + (uint64_t)(bi * 100 + fi * 10 + rep));
}

static void test_model_semi_sorted(void **state)
{
    (void)state;
    const unsigned widths[] = {5, 7, 8, 12, 13, 16, 21, 32};
    uint64_t seed = test_seed() + 7;
    for (int fi = 0; fi < 8; fi++)
        for (int rep = 0; rep < 3; rep++)
            run_model(4, widths[fi], true, seed + (uint64_t)(fi * 10 + rep));
}

/* ---- error rate ---- */

/* ---- remove after add vs add_unique ---- */

/* Adds keys 0..899 (plain add or add_unique) to a filter of short fingerprints, removes keys 0..449, and
 * returns how many of keys 450..899 are no longer found. */
static unsigned lost_after_removing_half(bool unique, uint64_t seed)
{
    nidus_cuckoo_params p = {.capacity = 1000, .bucket_size = 4, .fingerprint_bits = 6, .seed = seed};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    uint64_t hash[900];
    bool added[900];
    for (int k = 0; k < 900; k++) {
        hash[k] = key_hash(cf, "half", (uint64_t)k);
        added[k] = true;
        if (unique)
            assert_int_equal(nidus_cuckoo_add_unique_hash(cf, hash[k], &added[k]), NIDUS_OK);
        else
            assert_int_equal(nidus_cuckoo_add_hash(cf, hash[k]), NIDUS_OK);
    }
    /* The caller believes every key is in (add_unique returned OK) and removes the first half. */
    for (int k = 0; k < 450; k++)
        nidus_cuckoo_remove_hash(cf, hash[k]);
    unsigned lost = 0;
    for (int k = 450; k < 900; k++)
        lost += !nidus_cuckoo_contains_hash(cf, hash[k]);
    nidus_cuckoo_free(cf);
    return lost;
}

static void test_plain_add_then_remove_keeps_every_other_key(void **state)
{
    (void)state;
    for (uint64_t r = 0; r < 20; r++)
        assert_int_equal(lost_after_removing_half(false, test_seed() + r), 0);
}

/* Why the header warns: a false positive skips add_unique, and removing that key then takes another key's
 * fingerprint. Over 20 seeds the loss is certain to show (6-bit fingerprints: ~4 % false positives). */
static void test_add_unique_then_remove_loses_other_keys(void **state)
{
    (void)state;
    unsigned lost = 0;
    for (uint64_t r = 0; r < 20; r++)
        lost += lost_after_removing_half(true, test_seed() + r);
    printf("# add_unique + remove: %u of 20 x 450 other keys lost\n", lost);
    assert_true(lost > 0);
}

static void measure_error(unsigned f, bool semi)
{
    nidus_cuckoo *cf = make(300000, 4, f, semi, 500);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    uint64_t target = (uint64_t)ceil(0.95 * (double)s.slots), rng = test_seed() + f;
    for (uint64_t k = 0; k < target; k++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, test_splitmix(&rng)), NIDUS_OK);
    nidus_cuckoo_get_stats(cf, &s);
    assert_int_equal(s.items, target);
    /* a few items may sit in the overflow map rather than in slots: distinct keys whose 8-bit fingerprints
     * agree count as duplicates once b of them fill a bucket pair */
    assert_true(s.load >= 0.949);
    const double trials = (double)test_trials(2000000);
    uint64_t hits = 0, probe = test_seed() ^ UINT64_C(0x5555555555555555);
    for (uint64_t k = 0; k < (uint64_t)trials; k++)
        hits += nidus_cuckoo_contains(cf, &probe, sizeof probe) + (probe++ * 0); /* absent: other key space */
    double rate = (double)hits / trials;
    printf("# f=%u semi=%d load %.4f: false positives %.5f%%, bound %.5f%%\n", f, semi, s.load, 100 * rate,
           100 * s.error_bound);
    assert_true(rate <= test_rate_ceiling(s.error_bound, trials));
    nidus_cuckoo_free(cf);
}

static void test_false_positive_rate_within_bound_at_95_percent_load(void **state)
{
    (void)state;
    measure_error(8, false);
    measure_error(12, false);
    measure_error(16, false);
    measure_error(12, true);
}

/* ---- duplicates ---- */

static void test_ten_thousand_duplicates_are_counted_not_kicked(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        nidus_cuckoo *cf = make(1000, b, 12, false, 500);
        for (int k = 0; k < 500; k++) /* other keys around it, so its buckets also hold strangers */
            assert_int_equal(nidus_cuckoo_add(cf, &k, sizeof k), NIDUS_OK);
        /* a key none of the others answers for (a false positive of "dup" would count one copy more, in
         * about 0.5 % of seeds at b = 8) */
        char dup[16] = "dup";
        for (int d = 0; nidus_cuckoo_contains(cf, dup, 3); d++)
            snprintf(dup, sizeof dup, "d%02d", d);
        for (int n = 0; n < 10000; n++)
            assert_int_equal(nidus_cuckoo_add(cf, dup, 3), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_count(cf, dup, 3), 10000);
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(cf, &s);
        assert_true(s.overflow_items >= 10000 - 2 * b);
        assert_true(s.memory_bytes < 64 * 1024); /* counted, not stored: bytes, not a growing table */
        for (int n = 0; n < 10000; n++)
            assert_int_equal(nidus_cuckoo_remove(cf, dup, 3), NIDUS_OK);
        assert_false(nidus_cuckoo_contains(cf, dup, 3));
        assert_int_equal(nidus_cuckoo_remove(cf, dup, 3), NIDUS_ERR_NOT_FOUND);
        for (int k = 0; k < 500; k++)
            assert_true(nidus_cuckoo_contains(cf, &k, sizeof k));
        nidus_cuckoo_free(cf);
    }
}

/* ---- atomic failure and reachable load ---- */

static void test_failed_add_keeps_every_item(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        nidus_cuckoo *cf = make(2000, b, 12, false, 500);
        uint64_t rng = test_seed() + b, added[8000];
        size_t n = 0;
        nidus_status st;
        while ((st = nidus_cuckoo_add_hash(cf, added[n] = test_splitmix(&rng))) == NIDUS_OK)
            n++;
        assert_int_equal(st, NIDUS_ERR_FULL);
        nidus_cuckoo_stats before, after;
        nidus_cuckoo_get_stats(cf, &before);
        assert_int_equal(before.items, n);
        for (int extra = 0; extra < 50; extra++) /* more failures, each with its own walk */
            nidus_cuckoo_add_hash(cf, test_splitmix(&rng) | 1);
        nidus_cuckoo_get_stats(cf, &after);
        for (size_t k = 0; k < n; k++)
            assert_true(nidus_cuckoo_contains_hash(cf, added[k]));
        assert_true(after.items >= n);
        nidus_cuckoo_free(cf);
    }
}

/* The load at the first failed add, with 500 kicks, on tables of about a million slots. */
static void test_load_before_first_failure(void **state)
{
    (void)state;
    const struct { unsigned b; double floor; } want[] = {{2, 0.84}, {4, 0.95}, {8, 0.98}};
    for (int c = 0; c < 3; c++) {
        nidus_cuckoo *cf = make(1000000, want[c].b, 12, false, 500);
        uint64_t rng = test_seed() + 99 + (uint64_t)c;
        while (nidus_cuckoo_add_hash(cf, test_splitmix(&rng)) == NIDUS_OK) {
        }
        nidus_cuckoo_stats s;
        nidus_cuckoo_get_stats(cf, &s);
        printf("# b=%u: first failure at load %.4f\n", want[c].b, s.load);
        assert_true(s.load >= want[c].floor);
        nidus_cuckoo_free(cf);
    }
}

/* ---- sizes ---- */

static void test_any_capacity_holds_its_items_without_power_of_two_waste(void **state)
{
    (void)state;
    const uint64_t capacities[] = {1, 2, 3, 17, 60, 1000, 600000, 999983};
    for (unsigned b = 2; b <= 8; b *= 2) {
        for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
            uint64_t cap = capacities[c];
            nidus_cuckoo *cf = make(cap, b, 12, false, 0);
            for (uint64_t k = 0; k < cap; k++)
                assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, "cap", k)), NIDUS_OK);
            for (uint64_t k = 0; k < cap; k++)
                assert_true(nidus_cuckoo_contains_hash(cf, key_hash(cf, "cap", k)));
            nidus_cuckoo_stats s;
            nidus_cuckoo_get_stats(cf, &s);
            assert_int_equal(s.buckets % 2, 0);
            if (cap >= 100000) { /* memory within a few percent of capacity * f / load */
                double ideal = (double)cap * 12.0 / (b == 2 ? 0.84 : b == 4 ? 0.95 : 0.98) / 8.0;
                assert_true((double)s.memory_bytes < 1.03 * ideal);
            }
            nidus_cuckoo_free(cf);
        }
    }
}

/* A reservation holds: a filter of capacity N takes N distinct keys in its first table, at every bucket size
 * and every max_kicks (the module's MAXITERATIONS), small N included, where the load reached varies most.
 * The table is sized for the load the add's search reaches with that many moves (src/cuckoo/params.c). */
static void test_reserved_capacity_holds_in_the_first_table(void **state)
{
    (void)state;
    const uint64_t capacities[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 33, 60, 100, 257, 1000, 4099};
    const unsigned kicks[] = {1, 2, 3, 5, 20, 500};
    uint64_t rng = test_seed() + 14;
    for (unsigned b = 1; b <= 8; b *= 2)
        for (size_t k = 0; k < sizeof kicks / sizeof *kicks; k++)
            for (size_t c = 0; c < sizeof capacities / sizeof *capacities; c++)
                for (int run = 0; run < 8; run++) {
                    nidus_cuckoo_params p = {.capacity = capacities[c], .bucket_size = b, .max_kicks = kicks[k],
                                             .expansion = 2, .seed = test_splitmix(&rng)};
                    nidus_cuckoo *cf = NULL;
                    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
                    uint64_t base = test_splitmix(&rng);
                    for (uint64_t i = 0; i < capacities[c]; i++) {
                        uint64_t key = base + i; /* distinct */
                        assert_int_equal(nidus_cuckoo_add(cf, &key, sizeof key), NIDUS_OK);
                    }
                    nidus_cuckoo_stats s;
                    nidus_cuckoo_get_stats(cf, &s);
                    if (s.tables != 1)
                        printf("# b=%u max_kicks=%u capacity %" PRIu64 " grew (load %.3f)\n", b, kicks[k],
                               capacities[c], s.load);
                    assert_int_equal(s.tables, 1);
                    assert_int_equal(s.items, capacities[c]);
                    nidus_cuckoo_free(cf);
                }
}

/* Short fingerprints with a table size whose hashed offsets collapse onto few distances (166 buckets at f = 6:
 * 9 distances): the sizing steps past such sizes, so these reservations hold too. With 332 slots (the size the
 * formula gives these capacities) about 1 % of seeds grew. With the sizing stepping past them, 1 table in about
 * 3 million grew (f = 6, capacity 250, 336 slots: 1 of 400,000 seeds; none of 50,000 seeds at each of the 40
 * cases here): so one of these 2,400 tables may grow, as a rare seed does; 2 would mean the sizing regressed
 * (about 1 % of tables grew before). */
static void test_reservations_hold_with_short_fingerprints(void **state)
{
    (void)state;
    const uint64_t capacities[] = {174, 175, 188, 189, 227, 228, 229, 250, 251, 252};
    const unsigned bits[] = {4, 5, 6, 7};
    uint64_t rng = test_seed() + 15;
    unsigned grew = 0;
    for (size_t f = 0; f < sizeof bits / sizeof *bits; f++)
        for (size_t c = 0; c < sizeof capacities / sizeof *capacities; c++) {
            nidus_cuckoo_params p = {.capacity = capacities[c], .bucket_size = 2, .max_kicks = 20,
                                     .fingerprint_bits = bits[f], .expansion = 2};
            for (int run = 0; run < 60; run++) {
                p.seed = test_splitmix(&rng);
                nidus_cuckoo *cf = NULL;
                assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
                uint64_t base = test_splitmix(&rng);
                for (uint64_t i = 0; i < capacities[c]; i++) {
                    uint64_t key = base + i;
                    assert_int_equal(nidus_cuckoo_add(cf, &key, sizeof key), NIDUS_OK);
                }
                nidus_cuckoo_stats s;
                nidus_cuckoo_get_stats(cf, &s);
                if (s.tables != 1) {
                    printf("# f=%u capacity %" PRIu64 " grew (%" PRIu64 " slots)\n", bits[f], capacities[c],
                           s.slots);
                    grew++;
                }
                nidus_cuckoo_free(cf);
            }
        }
    assert_in_range(grew, 0, 1);
}

/* The capacity a filter reports is what its table was sized for: at least what was asked, and a table sized for
 * the reported capacity has the same buckets (nidus_cuckoo_capacity_of inverts the sizing of src/cuckoo/params.c). */
static void test_reported_capacity_inverts_the_sizing(void **state)
{
    (void)state;
    const unsigned kicks[] = {1, 2, 3, 5, 10, 20, 500};
    for (unsigned b = 1; b <= 8; b *= 2)
        for (size_t k = 0; k < sizeof kicks / sizeof *kicks; k++)
            for (uint64_t cap = 1; cap <= 200000; cap += cap < 64 ? 1 : cap / 7) {
                nidus_cuckoo_params p = {.capacity = cap, .bucket_size = b, .max_kicks = kicks[k]};
                nidus_cuckoo *cf = NULL;
                assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
                nidus_cuckoo_stats s;
                nidus_cuckoo_get_stats(cf, &s);
                nidus_cuckoo_free(cf);
                if (s.capacity < cap)
                    printf("# b=%u max_kicks=%u capacity %" PRIu64 " reported %" PRIu64 "\n", b, kicks[k], cap,
                           s.capacity);
                assert_true(s.capacity >= cap);
                nidus_cuckoo_plan plan;
                p.capacity = s.capacity;
                assert_int_equal(nidus_cuckoo_plan_params(&p, &plan), NIDUS_OK);
                assert_int_equal(plan.buckets, s.buckets);
            }
}

static void test_plan_reports_choice_and_cost(void **state)
{
    (void)state;
    nidus_cuckoo_plan plan;
    nidus_cuckoo_params p = {.capacity = 1000000, .error_rate = 0.01};
    assert_int_equal(nidus_cuckoo_plan_params(&p, &plan), NIDUS_OK);
    assert_int_equal(plan.bucket_size, 4);
    assert_true(plan.error_bound <= 0.01);
    assert_true(plan.bits_per_item > plan.fingerprint_bits && plan.bits_per_item < plan.fingerprint_bits / 0.93);
    for (double e = 0.3; e > 1e-8; e /= 3) {
        p.error_rate = e;
        assert_int_equal(nidus_cuckoo_plan_params(&p, &plan), NIDUS_OK);
        assert_true(plan.error_bound <= e);
        assert_true(plan.buckets % 2 == 0 && plan.slots == plan.buckets * plan.bucket_size);
    }
    p = (nidus_cuckoo_params){.capacity = 1000, .fingerprint_bits = 10, .bucket_size = 8};
    assert_int_equal(nidus_cuckoo_plan_params(&p, &plan), NIDUS_OK);
    assert_int_equal(plan.bucket_size, 8);
    assert_int_equal(plan.fingerprint_bits, 10);
    p = (nidus_cuckoo_params){.capacity = 1000, .fingerprint_bits = 13, .semi_sort = true};
    assert_int_equal(nidus_cuckoo_plan_params(&p, &plan), NIDUS_OK);
    assert_int_equal(plan.bucket_size, 4);
    assert_int_equal(plan.table_bytes, (plan.buckets * (4 * 13 - 4) + 7) / 8);
}

static void test_invalid_parameters_are_refused(void **state)
{
    (void)state;
    const nidus_cuckoo_params bad[] = {
        {.capacity = 0},
        {.capacity = 10, .bucket_size = 3},
        {.capacity = 10, .bucket_size = 16},
        {.capacity = 10, .fingerprint_bits = 3},
        {.capacity = 10, .fingerprint_bits = 33},
        {.capacity = 10, .error_rate = 1.0},
        {.capacity = 10, .error_rate = -0.1},
        {.capacity = 10, .error_rate = NAN},
        {.capacity = 10, .error_rate = 1e-15}, /* needs more than 32 bits */
        {.capacity = 10, .max_kicks = 65536},
        {.capacity = 10, .semi_sort = true, .bucket_size = 2},
        {.capacity = 10, .semi_sort = true, .fingerprint_bits = 4},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        nidus_cuckoo *cf = (nidus_cuckoo *)&cf;
        assert_int_equal(nidus_cuckoo_new(&bad[k], &cf), NIDUS_ERR_INVALID_ARGUMENT);
        assert_ptr_equal(cf, (nidus_cuckoo *)&cf); /* untouched on failure */
    }
    nidus_cuckoo *cf;
    nidus_cuckoo_params huge = {.capacity = UINT64_MAX, .fingerprint_bits = 32};
    assert_int_equal(nidus_cuckoo_new(&huge, &cf), NIDUS_ERR_TOO_LARGE);
    nidus_cuckoo_params big = {.capacity = UINT64_C(1) << 50, .fingerprint_bits = 32};
    nidus_status st = nidus_cuckoo_new(&big, &cf);
    assert_true(st == NIDUS_ERR_TOO_LARGE || st == NIDUS_ERR_NO_MEMORY);
    assert_int_equal(nidus_cuckoo_new(NULL, &cf), NIDUS_ERR_INVALID_ARGUMENT);
    nidus_cuckoo_free(NULL);
    assert_string_equal(nidus_strerror(NIDUS_ERR_FULL), "filter is full");
    assert_string_equal(nidus_strerror((nidus_status)999), "unknown status");
}

static void test_clear_empties_and_keeps_working(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(1000, 4, 12, true, 0);
    for (int k = 0; k < 1000; k++)
        assert_int_equal(nidus_cuckoo_add(cf, &k, sizeof k), NIDUS_OK);
    for (int n = 0; n < 100; n++)
        assert_int_equal(nidus_cuckoo_add(cf, "x", 1), NIDUS_OK);
    nidus_cuckoo_clear(cf);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_int_equal(s.items, 0);
    assert_int_equal(nidus_cuckoo_count(cf, "x", 1), 0);
    int present = 0;
    for (int k = 0; k < 1000; k++)
        present += nidus_cuckoo_contains(cf, &k, sizeof k);
    assert_int_equal(present, 0);
    for (int k = 0; k < 1000; k++)
        assert_int_equal(nidus_cuckoo_add(cf, &k, sizeof k), NIDUS_OK);
    nidus_cuckoo_free(cf);
}

/* The allocator hook receives every allocation and every release. */
typedef struct { long live, calls; } counting;
static void *c_malloc(void *ctx, size_t n) { ((counting *)ctx)->live++, ((counting *)ctx)->calls++; return malloc(n); }
static void *c_calloc(void *ctx, size_t n, size_t m) { ((counting *)ctx)->live++, ((counting *)ctx)->calls++; return calloc(n, m); }
static void *c_realloc(void *ctx, void *p, size_t n) { ((counting *)ctx)->calls++; return realloc(p, n); }
static void c_free(void *ctx, void *p) { ((counting *)ctx)->live--; free(p); }

static void test_allocator_hook_sees_all_memory(void **state)
{
    (void)state;
    counting ctx = {0, 0};
    nidus_allocator hook = {c_malloc, c_calloc, c_realloc, c_free, &ctx};
    nidus_cuckoo_params p = {.capacity = 100, .allocator = &hook};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    for (int n = 0; n < 1000; n++)
        nidus_cuckoo_add(cf, "same", 4); /* grows the overflow map */
    assert_true(ctx.calls >= 3);
    nidus_cuckoo_free(cf);
    assert_int_equal(ctx.live, 0);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_every_bucket_size_and_width),
        cmocka_unit_test(test_model_semi_sorted),
        cmocka_unit_test(test_plain_add_then_remove_keeps_every_other_key),
        cmocka_unit_test(test_add_unique_then_remove_loses_other_keys),
        cmocka_unit_test(test_false_positive_rate_within_bound_at_95_percent_load),
        cmocka_unit_test(test_ten_thousand_duplicates_are_counted_not_kicked),
        cmocka_unit_test(test_failed_add_keeps_every_item),
        cmocka_unit_test(test_load_before_first_failure),
        cmocka_unit_test(test_any_capacity_holds_its_items_without_power_of_two_waste),
        cmocka_unit_test(test_plan_reports_choice_and_cost),
        cmocka_unit_test(test_reserved_capacity_holds_in_the_first_table),
        cmocka_unit_test(test_reservations_hold_with_short_fingerprints),
        cmocka_unit_test(test_reported_capacity_inverts_the_sizing),
        cmocka_unit_test(test_invalid_parameters_are_refused),
        cmocka_unit_test(test_clear_empties_and_keeps_working),
        cmocka_unit_test(test_allocator_hook_sees_all_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

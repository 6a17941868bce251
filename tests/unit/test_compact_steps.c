/* SPDX-License-Identifier: BSD-3-Clause */
/* Stepped compaction (nidus_cuckoo_compact_begin / _step / _resume): steps of any budget with no write between
 * them leave the bytes the all-at-once compaction leaves; interrupted at any step, the filter is an ordinary one
 * (every live item found, counts exact, encodings valid, a decoded copy resumed ends where the original ends);
 * writes between steps keep the multiset; steps allocate nothing, so they succeed with every allocation failing. */
#define _POSIX_C_SOURCE 200809L
#include "failing_alloc.h"
#include "scratch_dir.h"
#include "test_util.h"

#include <nidus/nidus.h>

static nidus_cuckoo_stats stats(const nidus_cuckoo *cf)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    return s;
}

static uint64_t key_hash(const nidus_cuckoo *cf, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, "cs", i ^ test_seed() << 24);
    return nidus_cuckoo_hash(cf, buf, n);
}

typedef struct enc {
    uint8_t *p;
    size_t n;
} enc;

static enc encode(const nidus_cuckoo *cf)
{
    long armed = g_fail.fail_at;
    arm(0);
    enc e;
    e.n = (size_t)nidus_cuckoo_encoded_size(cf);
    e.p = malloc(e.n);
    size_t w = 0;
    assert_int_equal(nidus_cuckoo_encode(cf, e.p, e.n, &w), NIDUS_OK);
    assert_int_equal(w, e.n);
    g_fail.fail_at = armed;
    return e;
}

static void assert_same(const nidus_cuckoo *a, const nidus_cuckoo *b)
{
    enc x = encode(a), y = encode(b);
    assert_int_equal(x.n, y.n);
    assert_memory_equal(x.p, y.p, x.n);
    free(x.p);
    free(y.p);
}

static nidus_cuckoo *copy_of(const nidus_cuckoo *cf)
{
    enc e = encode(cf);
    nidus_cuckoo *c = NULL;
    assert_int_equal(nidus_cuckoo_decode(e.p, e.n, &g_hook, &c), NIDUS_OK);
    free(e.p);
    return c;
}

/* A grown filter (b = 2, expansion 1, several tables) holding keys [0, n), then one copy of every key but each third
 * removed (past the 10 % that starts a compaction: the caller decides whether it runs). `live` gets each key's
 * copies. */
#define KEYS 6000
static uint8_t live[KEYS];

static nidus_cuckoo *grown_then_thinned(unsigned expansion)
{
    nidus_cuckoo_params p = {.capacity = 600, .bucket_size = 2, .expansion = expansion, .seed = test_seed(),
                             .allocator = &g_hook};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    memset(live, 0, sizeof live);
    for (uint64_t k = 0; k < KEYS; k++) {
        assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, k)), NIDUS_OK);
        live[k]++;
        if (k % 7 == 0) { /* a duplicate now and then */
            assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, k)), NIDUS_OK);
            live[k]++;
        }
    }
    assert_true(stats(cf).tables >= 4);
    for (uint64_t k = 0; k < KEYS; k++) {
        if (k % 3 == 0)
            continue;
        assert_int_equal(nidus_cuckoo_remove_hash(cf, key_hash(cf, k)), NIDUS_OK);
        live[k]--;
    }
    return cf;
}

/* Every live key found with at least its copies, and the items add up: nothing lost, nothing counted twice. */
static void assert_holds_live(const nidus_cuckoo *cf)
{
    uint64_t total = 0;
    for (uint64_t k = 0; k < KEYS; k++) {
        total += live[k];
        if (live[k]) {
            assert_true(nidus_cuckoo_contains_hash(cf, key_hash(cf, k)));
            assert_true(nidus_cuckoo_count_hash(cf, key_hash(cf, k)) >= live[k]);
        }
    }
    assert_int_equal(stats(cf).items, total);
}

static void test_steps_of_any_budget_equal_all_at_once(void **state)
{
    (void)state;
    static const uint64_t budgets[] = {1, 2, 7, 64, 1000, UINT64_MAX};
    for (unsigned e = 1; e <= 2; e++) {
        nidus_cuckoo *cf = grown_then_thinned(e);
        assert_true(nidus_cuckoo_compacting(cf, NULL)); /* the removes passed 10 % */
        nidus_cuckoo *whole = copy_of(cf);
        assert_false(nidus_cuckoo_compacting(whole, NULL)); /* an encoding carries no cursor */
        unsigned freed = 0;
        assert_int_equal(nidus_cuckoo_compact(whole, &freed), NIDUS_OK);
        if (e == 1) /* equal tables: the newer ones empty into the older (doubling ones may keep theirs) */
            assert_true(freed > 0);
        assert_int_equal(stats(whole).items_deleted, 0);
        for (unsigned b = 0; b < sizeof budgets / sizeof *budgets; b++) {
            nidus_cuckoo *c = copy_of(cf);
            assert_int_equal(nidus_cuckoo_compact_begin(c), NIDUS_OK);
            nidus_cuckoo_compaction at;
            assert_true(nidus_cuckoo_compacting(c, &at));
            assert_int_equal(at.table, stats(c).tables - 1);
            assert_int_equal(at.bucket, 0);
            bool done = false;
            uint64_t steps = 0;
            while (!done) {
                assert_int_equal(nidus_cuckoo_compact_step(c, budgets[b], &done), NIDUS_OK);
                steps++;
                if (!done) {
                    assert_true(nidus_cuckoo_compacting(c, &at));
                    assert_true(at.table >= 1);
                }
            }
            assert_false(nidus_cuckoo_compacting(c, &at));
            assert_int_equal(at.table, 0);
            if (budgets[b] == 1)
                assert_true(steps > 100);
            assert_same(c, whole);
            assert_holds_live(c);
            /* a step with nothing running is done at once and changes nothing */
            assert_int_equal(nidus_cuckoo_compact_step(c, 5, &done), NIDUS_OK);
            assert_true(done);
            assert_same(c, whole);
            nidus_cuckoo_free(c);
        }
        nidus_cuckoo_free(whole);
        nidus_cuckoo_free(cf);
    }
    assert_int_equal(g_fail.live, 0);
}

/* Stopped after every step: the filter as it stands is an ordinary filter (every live key, exact items), its
 * encoding decodes into one with no compaction running, and that copy resumed at the cursor ends with the bytes
 * the original ends with. Also through a file. */
static void test_interrupted_at_every_step_then_resumed(void **state)
{
    (void)state;
    char path[96];
    path_of(path, sizeof path, "mid.cf");
    nidus_cuckoo *cf = grown_then_thinned(1);
    nidus_cuckoo *whole = copy_of(cf);
    assert_int_equal(nidus_cuckoo_compact(whole, NULL), NIDUS_OK);
    bool done = false;
    for (unsigned step = 0; !done; step++) {
        assert_int_equal(nidus_cuckoo_compact_step(cf, 97, &done), NIDUS_OK);
        assert_holds_live(cf);
        if (done || step % 4)
            continue;
        nidus_cuckoo_compaction at;
        assert_true(nidus_cuckoo_compacting(cf, &at));
        nidus_cuckoo *c = NULL;
        if (step % 8) {
            c = copy_of(cf);
        } else {
            assert_int_equal(nidus_cuckoo_save_file(cf, path), NIDUS_OK);
            assert_int_equal(nidus_cuckoo_load_file(path, &g_hook, &c), NIDUS_OK);
        }
        assert_false(nidus_cuckoo_compacting(c, NULL));
        assert_same(c, cf);
        assert_holds_live(c);
        assert_int_equal(nidus_cuckoo_compact_resume(c, &at), NIDUS_OK);
        bool cdone = false;
        while (!cdone)
            assert_int_equal(nidus_cuckoo_compact_step(c, 1000, &cdone), NIDUS_OK);
        assert_same(c, whole);
        nidus_cuckoo_free(c);
    }
    assert_same(cf, whole);
    nidus_cuckoo_free(whole);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_fail.live, 0);
}

/* Adds, duplicate adds and removes between steps (growth too): every live key stays found, items exact; the
 * compaction still ends, and an all-at-once compaction after it has less or nothing left to free. */
static void test_writes_between_steps_keep_the_multiset(void **state)
{
    (void)state;
    uint64_t rng = test_seed() ^ 0x5eed;
    nidus_cuckoo *cf = grown_then_thinned(1);
    unsigned rounds = 0;
    for (bool done = false; !done; rounds++) {
        for (unsigned w = 0; w < 8; w++) {
            uint64_t k = test_splitmix(&rng) % KEYS;
            if (live[k] && test_splitmix(&rng) % 2) {
                assert_int_equal(nidus_cuckoo_remove_hash(cf, key_hash(cf, k)), NIDUS_OK);
                live[k]--;
            } else if (live[k] < 200) {
                assert_int_equal(nidus_cuckoo_add_hash(cf, key_hash(cf, k)), NIDUS_OK);
                live[k]++;
            }
        }
        assert_int_equal(nidus_cuckoo_compact_step(cf, 31, &done), NIDUS_OK);
        if (rounds % 16 == 0)
            assert_holds_live(cf);
    }
    assert_holds_live(cf);
    assert_int_equal(stats(cf).items_deleted, 0);
    nidus_cuckoo_free(cf);
}

/* Steps, begin and resume allocate nothing: with every allocation failing they still run to the end. A decode
 * mid-compaction fails cleanly at each of its allocations. */
static void test_every_allocation_failing(void **state)
{
    (void)state;
    nidus_cuckoo *cf = grown_then_thinned(1);
    nidus_cuckoo *whole = copy_of(cf);
    assert_int_equal(nidus_cuckoo_compact(whole, NULL), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_compact_step(cf, 500, NULL), NIDUS_OK);
    enc mid = encode(cf);
    long injected = 0;
    for (long n = 1;; n++) {
        arm(n);
        nidus_cuckoo *c = NULL;
        nidus_status st = nidus_cuckoo_decode(mid.p, mid.n, &g_hook, &c);
        arm(0);
        if (st == NIDUS_OK) {
            nidus_cuckoo_free(c);
            break;
        }
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
        assert_null(c);
        injected++;
    }
    assert_true(injected > 0);
    free(mid.p);
    bool done = false;
    g_fail.injected = 0;
    arm(1);
    g_fail.fail_at = 1; /* every call from here fails: keep it failing */
    while (!done) {
        g_fail.calls = 0;
        assert_int_equal(nidus_cuckoo_compact_step(cf, 300, &done), NIDUS_OK);
    }
    arm(0);
    assert_int_equal(g_fail.injected, 0); /* nothing asked */
    assert_same(cf, whole);
    nidus_cuckoo_free(whole);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_fail.live, 0);
}

static void test_views_packed_and_bad_cursors(void **state)
{
    (void)state;
    nidus_cuckoo *cf = grown_then_thinned(1);
    unsigned tables = stats(cf).tables;
    nidus_cuckoo_compaction at;
    assert_true(nidus_cuckoo_compacting(cf, &at));
    /* out of range: nothing changes */
    nidus_cuckoo_compaction bad[] = {{0, 0}, {tables, 0}, {tables + 7, 0}, {1, UINT64_MAX}};
    for (unsigned b = 0; b < 4; b++) {
        assert_int_equal(nidus_cuckoo_compact_resume(cf, &bad[b]), NIDUS_ERR_INVALID_ARGUMENT);
        nidus_cuckoo_compaction now;
        assert_true(nidus_cuckoo_compacting(cf, &now));
        assert_int_equal(now.table, at.table);
        assert_int_equal(now.bucket, at.bucket);
    }
    assert_int_equal(nidus_cuckoo_compact_resume(cf, NULL), NIDUS_ERR_INVALID_ARGUMENT);
    /* a view refuses every write of a compaction */
    enc e = encode(cf);
    nidus_cuckoo *view = NULL;
    assert_int_equal(nidus_cuckoo_view(e.p, e.n, NULL, &view), NIDUS_OK);
    bool done = false;
    assert_int_equal(nidus_cuckoo_compact_begin(view), NIDUS_ERR_READ_ONLY);
    assert_int_equal(nidus_cuckoo_compact_step(view, 10, &done), NIDUS_ERR_READ_ONLY);
    assert_int_equal(nidus_cuckoo_compact_resume(view, &at), NIDUS_ERR_READ_ONLY);
    assert_false(nidus_cuckoo_compacting(view, NULL));
    nidus_cuckoo_free(view);
    free(e.p);
    /* clear ends a running compaction */
    assert_int_equal(nidus_cuckoo_clear(cf), NIDUS_OK);
    assert_false(nidus_cuckoo_compacting(cf, NULL));
    nidus_cuckoo_free(cf);
    /* a small (packed) filter: one table, nothing to step; begin resets the count of removes */
    nidus_cuckoo_params p = {.capacity = 50, .seed = test_seed()};
    nidus_cuckoo *small = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &small), NIDUS_OK);
    for (uint64_t k = 0; k < 20; k++)
        assert_int_equal(nidus_cuckoo_add_hash(small, key_hash(small, k)), NIDUS_OK);
    for (uint64_t k = 0; k < 10; k++)
        assert_int_equal(nidus_cuckoo_remove_hash(small, key_hash(small, k)), NIDUS_OK);
    assert_false(nidus_cuckoo_compacting(small, &at));
    assert_int_equal(stats(small).items_deleted, 10);
    assert_int_equal(nidus_cuckoo_compact_begin(small), NIDUS_OK);
    assert_int_equal(stats(small).items_deleted, 0);
    assert_false(nidus_cuckoo_compacting(small, NULL));
    done = false;
    assert_int_equal(nidus_cuckoo_compact_step(small, 10, &done), NIDUS_OK);
    assert_true(done);
    nidus_cuckoo_compaction one = {1, 0};
    assert_int_equal(nidus_cuckoo_compact_resume(small, &one), NIDUS_ERR_INVALID_ARGUMENT);
    nidus_cuckoo_free(small);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_of_any_budget_equal_all_at_once),
        cmocka_unit_test_setup_teardown(test_interrupted_at_every_step_then_resumed, make_dir, remove_dir),
        cmocka_unit_test(test_writes_between_steps_keep_the_multiset),
        cmocka_unit_test(test_every_allocation_failing),
        cmocka_unit_test(test_views_packed_and_bad_cursors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

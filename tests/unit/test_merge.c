/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging filters: nidus_cuckoo_merge, nidus_bloom_merge, nidus_counting_bloom_merge, nidus_filter_merge.
 * After a merge every key of either filter is present, counts add (cuckoo exactly: every copy removes again;
 * counting Bloom saturating), and every failure (incompatible parameters, full, limits, each allocation in turn)
 * leaves the destination byte for byte as it was (its encoding) and leaks nothing (the hook counts blocks). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#include "failing_alloc.h"
#include "filter_test_util.h"

/* ---- encodings, to compare a filter with itself before and after */

/* A fresh temporary file's name, in `path` (of "/tmp/nidus-merge-XXXXXX"). */
static void temp_path(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
}

/* `f` saved to a file and loaded back whole: the same bytes (the caller frees the copy). */
static nidus_filter *save_and_reload(const nidus_filter *f)
{
    char path[] = "/tmp/nidus-merge-XXXXXX";
    temp_path(path);
    assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
    nidus_filter *back = NULL;
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, &g_hook, NULL, &back), NIDUS_OK);
    unlink(path);
    bytes want = filter_bytes(f);
    assert_same_bytes(back, want);
    free(want.p);
    return back;
}

/* ---- keys: namespace "d" for the destination's, "s" for the source's; the first `shared` of "s" also in dst */

static void assert_has_keys(const nidus_filter *f, const char *ns, uint64_t from, uint64_t n)
{
    char k[32];
    for (uint64_t i = from; i < from + n; i++)
        assert_true(nidus_filter_contains(f, k, key(k, ns, i)));
}

static nidus_filter *cuckoo_filter(uint64_t capacity, unsigned expansion, unsigned b, bool semi, uint64_t seed)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .semi_sort = semi, .fingerprint_bits = 12,
                             .expansion = expansion, .seed = seed, .allocator = &g_hook};
    nidus_filter_params fp = {.kind = NIDUS_KIND_CUCKOO, .capacity = capacity, .allocator = &g_hook,
                              .kind_params = &p};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&fp, &f), NIDUS_OK);
    return f;
}

static unsigned cuckoo_tables(nidus_filter *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(nidus_filter_cuckoo(f), &s);
    return s.tables;
}

static uint64_t cuckoo_items(nidus_filter *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(nidus_filter_cuckoo(f), &s);
    return s.items;
}

/* Every key's count is at least what was added (dst's `times`, plus src's for the shared ones), and removing
 * exactly that many copies of each succeeds and leaves the filter empty. Fillers "fd" / "fs" from `rd` / `rs`
 * to `fd` / `fs` are there once each. */
typedef struct cuckoo_spec {
    uint64_t cap;
    unsigned expansion, b;
    bool semi;
    uint64_t nd, ns, shared; /* dst's "d" keys, src's "s" keys, the first `shared` of which dst has too */
    unsigned td, ts;         /* copies of each */
    uint64_t fd, fs;         /* fillers added first (so a filter grows), 9 % of them removed again */
} cuckoo_spec;

static void assert_cuckoo_exact(nidus_filter *f, const cuckoo_spec *c)
{
    char k[32];
    uint64_t rd = c->fd * 9 / 100, rs = c->fs * 9 / 100;
    for (uint64_t i = 0; i < c->nd; i++)
        assert_true(nidus_filter_count(f, k, key(k, "d", i)) >= c->td);
    for (uint64_t i = 0; i < c->ns; i++)
        assert_true(nidus_filter_count(f, k, key(k, "s", i)) >= c->ts + (i < c->shared ? c->td : 0));
    assert_int_equal(cuckoo_items(f), (c->nd + c->shared) * c->td + c->ns * c->ts + (c->fd - rd) + (c->fs - rs));
    for (uint64_t i = 0; i < c->nd; i++)
        for (unsigned t = 0; t < c->td; t++)
            assert_int_equal(nidus_filter_remove(f, k, key(k, "d", i)), NIDUS_OK);
    for (uint64_t i = 0; i < c->ns; i++)
        for (unsigned t = 0; t < c->ts + (i < c->shared ? c->td : 0); t++)
            assert_int_equal(nidus_filter_remove(f, k, key(k, "s", i)), NIDUS_OK);
    for (uint64_t i = rd; i < c->fd; i++)
        assert_int_equal(nidus_filter_remove(f, k, key(k, "fd", i)), NIDUS_OK);
    for (uint64_t i = rs; i < c->fs; i++)
        assert_int_equal(nidus_filter_remove(f, k, key(k, "fs", i)), NIDUS_OK);
    assert_int_equal(cuckoo_items(f), 0);
}

static void remove_keys(nidus_filter *f, const char *ns, uint64_t n)
{
    char k[32];
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(nidus_filter_remove(f, k, key(k, ns, i)), NIDUS_OK);
}

static void cuckoo_case(cuckoo_spec c)
{
    long live = g_fail.live;
    nidus_filter *dst = cuckoo_filter(c.cap, c.expansion, c.b, c.semi, test_seed());
    nidus_filter *src = cuckoo_filter(c.cap, c.expansion, c.b, c.semi, test_seed());
    add_keys(dst, "fd", 0, c.fd, 1);
    add_keys(src, "fs", 0, c.fs, 1);
    add_keys(dst, "d", 0, c.nd, c.td);
    add_keys(dst, "s", 0, c.shared, c.td);
    add_keys(src, "s", 0, c.ns, c.ts);
    remove_keys(dst, "fd", c.fd * 9 / 100); /* room in the first table, fewer than compaction's 10 % */
    remove_keys(src, "fs", c.fs * 9 / 100);
    unsigned td = cuckoo_tables(dst), ts = cuckoo_tables(src);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_int_equal(cuckoo_tables(dst), td > ts ? td : ts);
    assert_has_keys(dst, "d", 0, c.nd);
    assert_has_keys(dst, "s", 0, c.ns);
    assert_has_keys(dst, "fd", c.fd * 9 / 100, c.fd - c.fd * 9 / 100);
    assert_has_keys(dst, "fs", c.fs * 9 / 100, c.fs - c.fs * 9 / 100);
    /* the merged filter saves and loads as it is */
    nidus_filter *back = save_and_reload(dst);
    assert_cuckoo_exact(back, &c);
    nidus_filter_free(back);
    assert_cuckoo_exact(dst, &c);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

static void test_cuckoo_merge_sets(void **state)
{
    (void)state;
    /* disjoint, then overlapping, one table each */
    cuckoo_case((cuckoo_spec){.cap = 4096, .expansion = 2, .b = 4, .nd = 1000, .ns = 1200, .td = 1, .ts = 1});
    cuckoo_case((cuckoo_spec){.cap = 4096, .expansion = 2, .b = 4, .nd = 1000, .ns = 1200, .shared = 300, .td = 1,
                              .ts = 1});
    /* semi-sorted, src's keys twice; b = 2 */
    cuckoo_case((cuckoo_spec){.cap = 4096, .expansion = 2, .b = 4, .semi = true, .nd = 900, .ns = 1000, .shared = 200,
                              .td = 1, .ts = 2});
    cuckoo_case((cuckoo_spec){.cap = 4096, .expansion = 2, .b = 2, .nd = 500, .ns = 600, .shared = 100, .td = 1,
                              .ts = 1});
    /* small: packed handles, without and with duplicates past the pair's share */
    cuckoo_case((cuckoo_spec){.cap = 60, .b = 4, .nd = 10, .ns = 12, .shared = 4, .td = 1, .ts = 1});
    cuckoo_case((cuckoo_spec){.cap = 200, .expansion = 2, .b = 4, .nd = 3, .ns = 4, .shared = 2, .td = 12,
                              .ts = 10});
    /* many duplicates: overflow counts add */
    cuckoo_case((cuckoo_spec){.cap = 4096, .expansion = 2, .b = 4, .nd = 20, .ns = 20, .shared = 10, .td = 3,
                              .ts = 500});
}

static void test_cuckoo_merge_grown(void **state)
{
    (void)state;
    /* src grown, dst not: dst grows as src did */
    cuckoo_case((cuckoo_spec){.cap = 1024, .expansion = 2, .b = 4, .nd = 40, .ns = 20, .shared = 5, .td = 1, .ts = 1,
                              .fs = 3000});
    /* dst grown, src not */
    cuckoo_case((cuckoo_spec){.cap = 1024, .expansion = 2, .b = 4, .nd = 20, .ns = 40, .shared = 5, .td = 1, .ts = 1,
                              .fd = 3000});
    /* packed dst, grown src */
    cuckoo_case((cuckoo_spec){.cap = 60, .expansion = 2, .b = 4, .nd = 3, .ns = 3, .shared = 2, .td = 1, .ts = 1,
                              .fs = 400});
}

/* Both grown: their first tables are nearly full, and a fingerprint cannot move to a table of longer ones, so
 * src's tables that find no room become sibling tables of their levels (test_merge_siblings.c has the rest). */
static void test_cuckoo_merge_both_grown(void **state)
{
    (void)state;
    nidus_filter *dst = cuckoo_filter(256, 2, 4, false, test_seed()), *src = cuckoo_filter(256, 2, 4, false, test_seed());
    add_keys(dst, "d", 0, 1000, 1);
    add_keys(src, "s", 0, 600, 1);
    unsigned td = cuckoo_tables(dst), ts = cuckoo_tables(src);
    assert_true(td > ts && ts > 1);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_true(cuckoo_tables(dst) > td);
    assert_has_keys(dst, "d", 0, 1000);
    assert_has_keys(dst, "s", 0, 600);
    assert_int_equal(cuckoo_items(dst), 1600);
    nidus_filter *back = save_and_reload(dst);
    assert_has_keys(back, "s", 0, 600);
    nidus_filter_free(back);
    nidus_filter_free(dst);
    nidus_filter_free(src);
}

/* A filter merged into itself holds every copy twice. */
static void test_cuckoo_merge_self(void **state)
{
    (void)state;
    nidus_filter *f = cuckoo_filter(2048, 2, 4, false, test_seed());
    add_keys(f, "d", 0, 300, 1);
    add_keys(f, "s", 0, 3, 20);
    assert_int_equal(nidus_filter_merge(f, f), NIDUS_OK);
    cuckoo_spec c = {.nd = 300, .ns = 3, .td = 2, .ts = 40};
    assert_cuckoo_exact(f, &c);
    nidus_filter_free(f);
}

/* ---- fixed seeds and keys ("ns:i", whatever NIDUS_TEST_SEED is): cases found by search, the same every run */

static void add_fixed(nidus_filter *f, const char *ns, uint64_t n, unsigned times)
{
    char k[32];
    for (uint64_t i = 0; i < n; i++)
        for (unsigned t = 0; t < times; t++)
            assert_int_equal(nidus_filter_add(f, k, test_key(k, 32, ns, i)), NIDUS_OK);
}

/* Each of the n keys counts at least `times` (all of them together exactly n * times, with `others` more in
 * the filter), and removing `times` copies of each succeeds. */
static void assert_fixed_then_remove(nidus_filter *f, const char *ns, uint64_t n, unsigned times, uint64_t others)
{
    char k[32];
    assert_int_equal(cuckoo_items(f), n * times + others);
    for (uint64_t i = 0; i < n; i++) {
        assert_true(nidus_filter_count(f, k, test_key(k, 32, ns, i)) >= times);
        for (unsigned t = 0; t < times; t++)
            assert_int_equal(nidus_filter_remove(f, k, test_key(k, 32, ns, i)), NIDUS_OK);
    }
    assert_int_equal(cuckoo_items(f), others);
}

/* Duplicated keys whose one-by-one adds fit the first table merge into it too. Re-adding the source bucket by
 * bucket let a key fill both buckets of its pair (as an add into an empty pair does) before another key had its
 * share of a bucket they share; that key then needed a stash entry, and the duplicates' overflow entries had
 * used the stash up: NIDUS_ERR_FULL (NIDUS_TEST_SEED=1795802246 in test_cuckoo_merge_sets). */
static void test_cuckoo_merge_duplicates_share(void **state)
{
    (void)state;
    /* 9 keys twice, merged into itself: FULL before (the smallest case found over capacities 16-1024) */
    nidus_filter *f = cuckoo_filter(16, 2, 4, false, 54);
    add_fixed(f, "k", 9, 2);
    assert_int_equal(nidus_filter_merge(f, f), NIDUS_OK);
    assert_int_equal(cuckoo_tables(f), 1);
    assert_fixed_then_remove(f, "k", 9, 4, 0);
    nidus_filter_free(f);
    /* disjoint keys: dst 6 keys 5 times, src 6 others 3 times (FULL before) */
    nidus_filter *dst = cuckoo_filter(32, 2, 4, false, 108), *src = cuckoo_filter(32, 2, 4, false, 108);
    add_fixed(dst, "k", 6, 5);
    add_fixed(src, "s", 6, 3);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_int_equal(cuckoo_tables(dst), 1);
    nidus_filter *back = save_and_reload(dst);
    assert_fixed_then_remove(back, "k", 6, 5, 18);
    assert_fixed_then_remove(back, "s", 6, 3, 0);
    nidus_filter_free(back);
    nidus_filter_free(dst);
    nidus_filter_free(src);
}

/* The merged filter depends on the filters' contents, not on where their overflow maps keep entries: a source
 * and its reloaded copy (entries placed in another order) merge into empty filters to the same bytes. Before,
 * src's entries were re-added in map order and the first took the free slots (3 keys 9 times: bytes differed). */
static void test_cuckoo_merge_layout_independent(void **state)
{
    (void)state;
    nidus_filter *src = cuckoo_filter(16, 2, 4, false, 169);
    add_fixed(src, "s", 3, 9);
    nidus_filter *src2 = save_and_reload(src);
    nidus_filter *a = cuckoo_filter(16, 2, 4, false, 169), *b = cuckoo_filter(16, 2, 4, false, 169);
    assert_int_equal(nidus_filter_merge(a, src), NIDUS_OK);
    assert_int_equal(nidus_filter_merge(b, src2), NIDUS_OK);
    bytes want = filter_bytes(a);
    assert_same_bytes(b, want);
    free(want.p);
    assert_fixed_then_remove(a, "s", 3, 9, 0);
    nidus_filter_free(a);
    nidus_filter_free(b);
    nidus_filter_free(src);
    nidus_filter_free(src2);
}

/* Each parameter that places keys differently makes filters incompatible; dst stays byte-identical. */
static void test_cuckoo_merge_incompatible(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_cuckoo_params base = {.capacity = 1000, .bucket_size = 4, .fingerprint_bits = 12, .expansion = 2,
                                .seed = 7, .allocator = &g_hook};
    nidus_cuckoo_params other[6];
    for (unsigned i = 0; i < 6; i++)
        other[i] = base;
    other[0].seed = 8;
    other[1].bucket_size = 2;
    other[2].fingerprint_bits = 13;
    other[3].semi_sort = true;
    other[4].capacity = 5000;
    other[5].expansion = 4;
    nidus_filter_params fp = {.kind = NIDUS_KIND_CUCKOO, .capacity = 1, .allocator = &g_hook, .kind_params = &base};
    nidus_filter *dst = NULL;
    assert_int_equal(nidus_filter_new(&fp, &dst), NIDUS_OK);
    add_keys(dst, "d", 0, 100, 1);
    bytes before = filter_bytes(dst);
    for (unsigned i = 0; i < 6; i++) {
        nidus_filter *src = NULL;
        fp.kind_params = &other[i];
        assert_int_equal(nidus_filter_new(&fp, &src), NIDUS_OK);
        add_keys(src, "s", 0, 100, 1);
        assert_int_equal(nidus_filter_merge(dst, src), NIDUS_ERR_INCOMPATIBLE);
        assert_same_bytes(dst, before);
        nidus_filter_free(src);
    }
    /* limits are the destination's own: max_kicks and max_memory may differ */
    nidus_cuckoo_params limits = base;
    limits.max_kicks = 20;
    limits.max_memory = 1u << 30;
    nidus_filter *src = NULL;
    fp.kind_params = &limits;
    assert_int_equal(nidus_filter_new(&fp, &src), NIDUS_OK);
    add_keys(src, "s", 0, 100, 1);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_has_keys(dst, "s", 0, 100);
    assert_has_keys(dst, "d", 0, 100);
    nidus_filter_free(src);
    /* another kind */
    nidus_filter_params bp = {.kind = NIDUS_KIND_BLOOM, .capacity = 100, .allocator = &g_hook};
    assert_int_equal(nidus_filter_new(&bp, &src), NIDUS_OK);
    free(before.p);
    before = filter_bytes(dst);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_ERR_INCOMPATIBLE);
    assert_same_bytes(dst, before);
    nidus_filter_free(src);
    free(before.p);
    nidus_filter_free(dst);
    assert_int_equal(g_fail.live, live);
}

/* Full tables of a filter that never grows, max_tables and max_memory fail the merge and leave dst as it was. */
static void test_cuckoo_merge_limits(void **state)
{
    (void)state;
    long live = g_fail.live;
    /* two non-growing filters over half full with different keys: no room for both */
    nidus_filter *dst = cuckoo_filter(1000, 0, 4, false, test_seed()), *src = cuckoo_filter(1000, 0, 4, false, test_seed());
    add_keys(dst, "d", 0, 700, 1);
    add_keys(src, "s", 0, 700, 1);
    bytes before = filter_bytes(dst);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_ERR_FULL);
    assert_same_bytes(dst, before);
    free(before.p);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    /* src grew to more tables than dst may have, or than its memory limit holds */
    nidus_cuckoo_params p = {.capacity = 500, .bucket_size = 4, .fingerprint_bits = 12, .expansion = 2,
                             .seed = test_seed(), .allocator = &g_hook};
    nidus_filter_params fp = {.kind = NIDUS_KIND_CUCKOO, .capacity = 1, .allocator = &g_hook, .kind_params = &p};
    assert_int_equal(nidus_filter_new(&fp, &src), NIDUS_OK);
    add_keys(src, "s", 0, 2500, 1);
    assert_true(cuckoo_tables(src) >= 3);
    nidus_cuckoo_stats s0;
    nidus_cuckoo_get_stats(nidus_filter_cuckoo(src), &s0);
    for (unsigned which = 0; which < 2; which++) {
        nidus_cuckoo_params q = p;
        if (which == 0)
            q.max_tables = 2;
        else
            q.max_memory = s0.memory_bytes / 2;
        fp.kind_params = &q;
        assert_int_equal(nidus_filter_new(&fp, &dst), NIDUS_OK);
        add_keys(dst, "d", 0, 10, 1);
        before = filter_bytes(dst);
        assert_int_equal(nidus_filter_merge(dst, src), which == 0 ? NIDUS_ERR_LIMIT_TABLES : NIDUS_ERR_LIMIT_MEMORY);
        assert_same_bytes(dst, before);
        free(before.p);
        nidus_filter_free(dst);
    }
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* Every allocation of a merge failing in turn: NIDUS_ERR_NO_MEMORY, dst unchanged, nothing leaked. */
static void every_failure(nidus_filter *dst, const nidus_filter *src)
{
    bytes before = filter_bytes(dst);
    long live = g_fail.live;
    long n = 1;
    for (;; n++) {
        arm(n);
        nidus_status st = nidus_filter_merge(dst, src);
        arm(0);
        if (st == NIDUS_OK)
            break;
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
        assert_int_equal(g_fail.live, live);
        assert_same_bytes(dst, before);
        assert_true(n < 100000);
    }
    assert_true(n > 1); /* the merge allocated, so failures were tried */
    free(before.p);
}

static void test_merge_allocation_failures(void **state)
{
    (void)state;
    long live = g_fail.live;
    /* cuckoo: packed dst, full dst; src grown */
    const uint64_t caps[] = {60, 1024};
    for (unsigned c = 0; c < 2; c++) {
        nidus_filter *dst = cuckoo_filter(caps[c], 2, 4, false, test_seed());
        nidus_filter *src = cuckoo_filter(caps[c], 2, 4, false, test_seed());
        add_keys(dst, "d", 0, 3, 1);
        add_keys(dst, "s", 0, 1, 30);
        add_keys(src, "f", 0, caps[c] * 5, 1);
        add_keys(src, "s", 0, 2, 1);
        remove_keys(src, "f", caps[c] * 5 * 9 / 100); /* room in its first table */
        every_failure(dst, src);
        assert_has_keys(dst, "d", 0, 3);
        assert_has_keys(dst, "s", 0, 2);
        assert_has_keys(dst, "f", caps[c] * 5 * 9 / 100, caps[c] * 5 - caps[c] * 5 * 9 / 100);
        nidus_filter_free(dst);
        nidus_filter_free(src);
    }
    /* Bloom: src has layers dst takes */
    nidus_bloom_params bp = {.capacity = 100, .error_rate = 0.01, .expansion = 2, .seed = test_seed(),
                             .allocator = &g_hook};
    nidus_filter_params fp = {.kind = NIDUS_KIND_BLOOM, .capacity = 1, .allocator = &g_hook, .kind_params = &bp};
    nidus_filter *dst = NULL, *src = NULL;
    assert_int_equal(nidus_filter_new(&fp, &dst), NIDUS_OK);
    assert_int_equal(nidus_filter_new(&fp, &src), NIDUS_OK);
    add_keys(dst, "d", 0, 150, 1);
    add_keys(src, "s", 0, 1000, 1);
    every_failure(dst, src);
    assert_has_keys(dst, "d", 0, 150);
    assert_has_keys(dst, "s", 0, 1000);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* ---- Bloom */

static nidus_filter *bloom_filter(const nidus_bloom_params *p)
{
    nidus_filter_params fp = {.kind = NIDUS_KIND_BLOOM, .capacity = 1, .allocator = &g_hook, .kind_params = p};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&fp, &f), NIDUS_OK);
    return f;
}

static void bloom_case(unsigned layout, uint64_t nd, uint64_t ns, uint64_t shared)
{
    long live = g_fail.live;
    nidus_bloom_params p = {.capacity = 300, .error_rate = 0.01, .expansion = 2, .seed = test_seed(),
                            .layout = layout, .allocator = &g_hook};
    nidus_filter *dst = bloom_filter(&p), *src = bloom_filter(&p);
    add_keys(dst, "d", 0, nd, 1);
    add_keys(dst, "s", 0, shared, 1);
    add_keys(src, "s", 0, ns, 1);
    nidus_bloom_stats sd, ss, sm;
    nidus_bloom_get_stats(nidus_filter_bloom(dst), &sd);
    nidus_bloom_get_stats(nidus_filter_bloom(src), &ss);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    nidus_bloom_get_stats(nidus_filter_bloom(dst), &sm);
    assert_int_equal(sm.items, sd.items + ss.items); /* the counts add, past a layer's capacity if so */
    assert_int_equal(sm.layers, sd.layers > ss.layers ? sd.layers : ss.layers);
    assert_has_keys(dst, "d", 0, nd);
    assert_has_keys(dst, "s", 0, ns);
    nidus_filter *back = save_and_reload(dst);
    assert_has_keys(back, "d", 0, nd);
    assert_has_keys(back, "s", 0, ns);
    /* adds go on after the merge (into the newest layer, or a new one) */
    add_keys(back, "x", 0, 500, 1);
    assert_has_keys(back, "x", 0, 500);
    nidus_filter_free(back);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

static void test_bloom_merge_sets(void **state)
{
    (void)state;
    for (unsigned layout = 0; layout < 2; layout++) {
        bloom_case(layout, 100, 120, 0);    /* one layer each, disjoint */
        bloom_case(layout, 100, 120, 50);   /* overlapping */
        bloom_case(layout, 50, 3000, 20);   /* src grown further: dst takes its layers */
        bloom_case(layout, 3000, 50, 20);   /* dst grown further */
        bloom_case(layout, 1000, 2000, 500); /* both grown */
    }
}

static void test_bloom_merge_self(void **state)
{
    (void)state;
    nidus_bloom_params p = {.capacity = 100, .error_rate = 0.01, .expansion = 2, .seed = test_seed(),
                            .allocator = &g_hook};
    nidus_filter *f = bloom_filter(&p);
    add_keys(f, "d", 0, 500, 1);
    bytes before = filter_bytes(f);
    nidus_bloom_stats s0, s1;
    nidus_bloom_get_stats(nidus_filter_bloom(f), &s0);
    assert_int_equal(nidus_filter_merge(f, f), NIDUS_OK);
    nidus_bloom_get_stats(nidus_filter_bloom(f), &s1);
    assert_int_equal(s1.items, 2 * s0.items); /* every layer's count doubled */
    assert_int_equal(s1.layers, s0.layers);
    assert_has_keys(f, "d", 0, 500);
    bytes after = filter_bytes(f);
    assert_int_equal(after.n, before.n); /* the same bits: only the counts changed */
    free(before.p);
    free(after.p);
    nidus_filter_free(f);
}

/* A merged layer counts past its capacity: the count saves and loads, and the next add grows a new layer as a
 * full layer's would. */
static void test_bloom_merge_counts_past_capacity(void **state)
{
    (void)state;
    for (unsigned layout = 0; layout < 2; layout++) {
        nidus_bloom_params p = {.capacity = 100, .error_rate = 0.01, .expansion = 2, .seed = test_seed(),
                                .layout = layout, .allocator = &g_hook};
        nidus_filter *dst = bloom_filter(&p), *src = bloom_filter(&p);
        add_keys(dst, "d", 0, 80, 1);
        add_keys(src, "s", 0, 90, 1);
        nidus_bloom_stats sd, ss, sm;
        nidus_bloom_get_stats(nidus_filter_bloom(dst), &sd);
        nidus_bloom_get_stats(nidus_filter_bloom(src), &ss);
        assert_int_equal(sd.layers, 1);
        assert_int_equal(ss.layers, 1);
        assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
        nidus_bloom_get_stats(nidus_filter_bloom(dst), &sm);
        assert_int_equal(sm.items, sd.items + ss.items);
        assert_true(sm.items > 100);
        assert_int_equal(sm.layers, 1);
        nidus_filter *back = save_and_reload(dst);
        nidus_bloom_stats sb;
        nidus_bloom_get_stats(nidus_filter_bloom(back), &sb);
        assert_int_equal(sb.items, sm.items);
        assert_has_keys(back, "d", 0, 80);
        assert_has_keys(back, "s", 0, 90);
        /* the first key the full layer does not hold (one it holds by a false positive is not added) */
        bool added = false;
        char key[16];
        for (unsigned i = 0; !added && i < 1000; i++) {
            int n = snprintf(key, sizeof key, "new%u", i);
            assert_int_equal(nidus_bloom_add(nidus_filter_bloom(back), key, (size_t)n, &added), NIDUS_OK);
        }
        assert_true(added);
        nidus_bloom_get_stats(nidus_filter_bloom(back), &sb);
        assert_int_equal(sb.layers, 2); /* the layer at its capacity grew */
        assert_int_equal(sb.items, sm.items + 1);
        nidus_filter_free(back);
        nidus_filter_free(dst);
        nidus_filter_free(src);
    }
}

static void test_bloom_merge_incompatible_and_limits(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_bloom_params base = {.capacity = 200, .error_rate = 0.01, .expansion = 2, .seed = 7,
                               .allocator = &g_hook};
    nidus_bloom_params other[5];
    for (unsigned i = 0; i < 5; i++)
        other[i] = base;
    other[0].seed = 8;
    other[1].error_rate = 0.001;
    other[2].capacity = 300;
    other[3].expansion = 4;
    other[4].layout = NIDUS_BLOOM_LAYOUT_BLOCKED;
    nidus_filter *dst = bloom_filter(&base);
    add_keys(dst, "d", 0, 100, 1);
    bytes before = filter_bytes(dst);
    for (unsigned i = 0; i < 5; i++) {
        nidus_filter *src = bloom_filter(&other[i]);
        add_keys(src, "s", 0, 100, 1);
        assert_int_equal(nidus_filter_merge(dst, src), NIDUS_ERR_INCOMPATIBLE);
        assert_same_bytes(dst, before);
        nidus_filter_free(src);
    }
    nidus_filter_free(dst);
    free(before.p);
    /* a grown src against dst's max_layers and max_memory */
    nidus_filter *src = bloom_filter(&base);
    add_keys(src, "s", 0, 3000, 1);
    nidus_bloom_stats ss;
    nidus_bloom_get_stats(nidus_filter_bloom(src), &ss);
    assert_true(ss.layers >= 4);
    for (unsigned which = 0; which < 2; which++) {
        nidus_bloom_params q = base;
        if (which == 0)
            q.max_layers = 2;
        else
            q.max_memory = ss.memory_bytes / 2;
        dst = bloom_filter(&q);
        add_keys(dst, "d", 0, 100, 1);
        before = filter_bytes(dst);
        assert_int_equal(nidus_filter_merge(dst, src), which == 0 ? NIDUS_ERR_LIMIT_TABLES : NIDUS_ERR_LIMIT_MEMORY);
        assert_same_bytes(dst, before);
        free(before.p);
        nidus_filter_free(dst);
    }
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* ---- counting Bloom */

static nidus_filter *counting_filter(uint64_t capacity, double error, uint64_t seed)
{
    nidus_counting_bloom_params p = {.capacity = capacity, .error_rate = error, .seed = seed, .allocator = &g_hook};
    nidus_filter_params fp = {.kind = NIDUS_KIND_COUNTING_BLOOM, .capacity = 1, .allocator = &g_hook,
                              .kind_params = &p};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&fp, &f), NIDUS_OK);
    return f;
}

static void test_counting_merge(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_filter *dst = counting_filter(2000, 0.01, test_seed()), *src = counting_filter(2000, 0.01, test_seed());
    add_keys(dst, "d", 0, 500, 1);
    add_keys(dst, "s", 0, 100, 1);
    add_keys(src, "s", 0, 600, 1);
    add_keys(dst, "hot", 0, 1, 9);
    add_keys(src, "hot", 0, 1, 9);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_has_keys(dst, "d", 0, 500);
    assert_has_keys(dst, "s", 0, 600);
    char k[32];
    assert_int_equal(nidus_filter_count(dst, k, key(k, "hot", 0)), 15); /* 9 + 9, saturated */
    for (uint64_t i = 0; i < 100; i++)
        assert_true(nidus_filter_count(dst, k, key(k, "s", i)) >= 2);
    /* removes of what either filter held: the other keys stay */
    char k2[32];
    for (uint64_t i = 0; i < 600; i++)
        assert_int_equal(nidus_filter_remove(dst, k2, key(k2, "s", i)), NIDUS_OK);
    assert_has_keys(dst, "d", 0, 500);
    assert_has_keys(dst, "s", 0, 100); /* added to both: one copy left */
    nidus_counting_bloom_stats cs;
    nidus_counting_bloom_get_stats(nidus_filter_counting_bloom(dst), &cs);
    assert_int_equal(cs.items, 500 + 100 + 18);
    /* into itself: every counter doubles */
    nidus_filter *self = counting_filter(100, 0.01, test_seed());
    add_keys(self, "d", 0, 10, 3);
    assert_int_equal(nidus_filter_merge(self, self), NIDUS_OK);
    for (uint64_t i = 0; i < 10; i++)
        assert_true(nidus_filter_count(self, k, key(k, "d", i)) >= 6);
    nidus_filter_free(self);
    /* incompatible: seed, error, capacity */
    bytes before = filter_bytes(dst);
    nidus_filter *other[3] = {counting_filter(2000, 0.01, test_seed() + 1), counting_filter(2000, 0.001, test_seed()),
                              counting_filter(3000, 0.01, test_seed())};
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(nidus_filter_merge(dst, other[i]), NIDUS_ERR_INCOMPATIBLE);
        assert_same_bytes(dst, before);
        nidus_filter_free(other[i]);
    }
    free(before.p);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* A destination opened writable in place (its tables in a private mapping of the file) merges and saves the same
 * bytes as one loaded whole: the merge writes into the borrowed tables, and the save patches what changed. */
static void in_place_case(nidus_filter *dst, nidus_filter *src)
{
    char path[] = "/tmp/nidus-merge-XXXXXX";
    temp_path(path);
    assert_int_equal(nidus_filter_save_file(dst, path), NIDUS_OK);
    nidus_filter *mapped = NULL;
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, &g_hook, NULL, &mapped), NIDUS_OK);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_int_equal(nidus_filter_merge(mapped, src), NIDUS_OK);
    bytes want = filter_bytes(dst);
    assert_same_bytes(mapped, want);
    assert_int_equal(nidus_filter_save_file(mapped, path), NIDUS_OK);
    nidus_filter_free(mapped);
    nidus_filter *back = NULL;
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, &g_hook, NULL, &back), NIDUS_OK);
    unlink(path);
    assert_same_bytes(back, want);
    free(want.p);
    nidus_filter_free(back);
}

static void test_merge_into_writable_mapping(void **state)
{
    (void)state;
    long live = g_fail.live;
    for (unsigned grown = 0; grown < 2; grown++) {
        nidus_filter *dst = cuckoo_filter(4096, 2, 4, false, test_seed()), *src = cuckoo_filter(4096, 2, 4, false, test_seed());
        add_keys(dst, "d", 0, grown ? 200 : 1000, 1);
        add_keys(src, "f", 0, grown ? 6000 : 0, 1);
        remove_keys(src, "f", grown ? 540 : 0);
        add_keys(src, "s", 0, grown ? 100 : 1000, 1);
        add_keys(src, "d", 0, 5, 9); /* duplicates: new overflow entries */
        in_place_case(dst, src);
        nidus_filter_free(dst);
        nidus_filter_free(src);
        nidus_bloom_params p = {.capacity = 1000, .error_rate = 0.01, .expansion = 2, .seed = test_seed(),
                                .allocator = &g_hook};
        dst = bloom_filter(&p);
        src = bloom_filter(&p);
        add_keys(dst, "d", 0, 500, 1);
        add_keys(src, "s", 0, grown ? 5000 : 400, 1);
        in_place_case(dst, src);
        nidus_filter_free(dst);
        nidus_filter_free(src);
    }
    nidus_filter *dst = counting_filter(1000, 0.01, test_seed()), *src = counting_filter(1000, 0.01, test_seed());
    add_keys(dst, "d", 0, 500, 1);
    add_keys(src, "s", 0, 400, 2);
    in_place_case(dst, src);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* ---- the difference text: each parameter's words, "" for filters that merge */

/* dst and src differ in `want` (merge refuses them) or not at all ("": the merge succeeds); frees src. */
static void assert_difference(nidus_filter *dst, nidus_filter *src, const char *want)
{
    char why[160];
    memset(why, 'x', sizeof why);
    size_t n = nidus_filter_merge_difference(dst, src, why, sizeof why);
    assert_string_equal(why, want);
    assert_int_equal(n, strlen(want));
    assert_int_equal(nidus_filter_merge_difference(dst, src, NULL, 0), n); /* the length alone, as snprintf */
    if (n > 4) { /* truncated like snprintf: the first 4 characters and the full length */
        char small[5];
        assert_int_equal(nidus_filter_merge_difference(dst, src, small, sizeof small), n);
        assert_memory_equal(small, want, 4);
        assert_int_equal(small[4], '\0');
    }
    add_keys(src, "s", 0, 50, 1);
    assert_int_equal(nidus_filter_merge(dst, src), n ? NIDUS_ERR_INCOMPATIBLE : NIDUS_OK);
    nidus_filter_free(src);
}

static void test_merge_difference(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_cuckoo_params cb = {.capacity = 1000, .bucket_size = 4, .fingerprint_bits = 12, .expansion = 1, .seed = 7,
                              .allocator = &g_hook};
    nidus_filter *dst = cuckoo_with(&cb);
    add_keys(dst, "d", 0, 50, 1);
    nidus_cuckoo_params c = cb;
    assert_difference(dst, cuckoo_with(&c), "");
    c.seed = 8;
    assert_difference(dst, cuckoo_with(&c), "another hash seed");
    c = cb, c.bucket_size = 2;
    assert_difference(dst, cuckoo_with(&c), "bucket size 2, not 4");
    c = cb, c.fingerprint_bits = 16;
    assert_difference(dst, cuckoo_with(&c), "fingerprint bits 16, not 12");
    c = cb, c.semi_sort = true;
    assert_difference(dst, cuckoo_with(&c), "semi-sorting on, not off");
    c = cb, c.capacity = 4000;
    nidus_filter *src = cuckoo_with(&c);
    nidus_cuckoo_stats x, y;
    nidus_cuckoo_get_stats(nidus_filter_cuckoo(dst), &x);
    nidus_cuckoo_get_stats(nidus_filter_cuckoo(src), &y);
    assert_true(y.buckets > x.buckets);
    char want[100];
    snprintf(want, sizeof want, "capacity: a first sub-filter of %llu buckets, not %llu",
             (unsigned long long)y.buckets, (unsigned long long)x.buckets);
    assert_difference(dst, src, want);
    c = cb, c.expansion = 2;
    assert_difference(dst, cuckoo_with(&c), "expansion 2, not 1");
    nidus_bloom_params bb = {.capacity = 100, .error_rate = 0.01, .expansion = 1, .seed = 7, .allocator = &g_hook};
    assert_difference(dst, bloom_filter(&bb), "kind bloom, not cuckoo");
    nidus_filter_free(dst);

    dst = bloom_filter(&bb);
    add_keys(dst, "d", 0, 50, 1);
    nidus_bloom_params b = bb;
    assert_difference(dst, bloom_filter(&b), "");
    b.seed = 8;
    assert_difference(dst, bloom_filter(&b), "another hash seed");
    b = bb, b.error_rate = 0.001;
    assert_difference(dst, bloom_filter(&b), "error rate 0.001, not 0.01");
    b = bb, b.capacity = 200;
    assert_difference(dst, bloom_filter(&b), "capacity 200, not 100");
    b = bb, b.expansion = 2;
    assert_difference(dst, bloom_filter(&b), "expansion 2, not 1");
    b = bb, b.layout = NIDUS_BLOOM_LAYOUT_BLOCKED;
    assert_difference(dst, bloom_filter(&b), "layout blocked, not compact");
    assert_difference(dst, counting_filter(100, 0.01, 7), "kind counting-bloom, not bloom");
    nidus_filter_free(dst);

    dst = counting_filter(100, 0.01, 7);
    assert_difference(dst, counting_filter(100, 0.01, 7), "");
    assert_difference(dst, counting_filter(100, 0.01, 8), "another hash seed");
    assert_difference(dst, counting_filter(100, 0.001, 7), "error rate 0.001, not 0.01");
    assert_difference(dst, counting_filter(200, 0.01, 7), "capacity 200, not 100");
    nidus_filter_free(dst);
    assert_int_equal(g_fail.live, live);
}

static void test_strerror(void **state)
{
    (void)state;
    assert_string_equal(nidus_strerror(NIDUS_ERR_INCOMPATIBLE),
                        "filters are incompatible (created with different parameters)");
    assert_int_equal(NIDUS_ERR_INCOMPATIBLE, NIDUS_ERR_NOT_REGULAR + 1);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_cuckoo_merge_sets),
        cmocka_unit_test(test_cuckoo_merge_grown),
        cmocka_unit_test(test_cuckoo_merge_both_grown),
        cmocka_unit_test(test_cuckoo_merge_self),
        cmocka_unit_test(test_cuckoo_merge_duplicates_share),
        cmocka_unit_test(test_cuckoo_merge_layout_independent),
        cmocka_unit_test(test_cuckoo_merge_incompatible),
        cmocka_unit_test(test_cuckoo_merge_limits),
        cmocka_unit_test(test_merge_allocation_failures),
        cmocka_unit_test(test_bloom_merge_sets),
        cmocka_unit_test(test_bloom_merge_self),
        cmocka_unit_test(test_bloom_merge_counts_past_capacity),
        cmocka_unit_test(test_bloom_merge_incompatible_and_limits),
        cmocka_unit_test(test_counting_merge),
        cmocka_unit_test(test_merge_into_writable_mapping),
        cmocka_unit_test(test_merge_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

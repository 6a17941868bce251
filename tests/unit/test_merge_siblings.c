/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging grown cuckoo filters: sibling tables. Both filters' older tables are full, so a source table that finds no
 * room in the destination's tables of its level is added beside them as a sibling of that level. Every key of both
 * is then present, counts add, removes stay exact, the filter saves, loads and maps to the same bytes (format
 * version 9/10, and 7/8 byte for byte as before for a filter without siblings), grows and compacts on; limits and
 * each allocation failing in turn leave the destination as it was; forged level fields are refused. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#include "codec.h"
#include "failing_alloc.h"
#include "filter_test_util.h"

static void remove_keys(nidus_filter *f, const char *ns, uint64_t from, uint64_t to, unsigned times)
{
    char k[32];
    for (uint64_t i = from; i < to; i++)
        for (unsigned t = 0; t < times; t++)
            assert_int_equal(nidus_filter_remove(f, k, key(k, ns, i)), NIDUS_OK);
}

static void assert_counts(const nidus_filter *f, const char *ns, uint64_t from, uint64_t to, unsigned times)
{
    char k[32];
    for (uint64_t i = from; i < to; i++)
        assert_true(nidus_filter_count(f, k, key(k, ns, i)) >= times);
}

static nidus_cuckoo_params params(uint64_t capacity)
{
    return (nidus_cuckoo_params){.capacity = capacity, .bucket_size = 4, .fingerprint_bits = 12, .expansion = 2,
                                 .seed = test_seed(), .allocator = &g_hook};
}

static nidus_cuckoo_stats stats(const nidus_filter *f)
{
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(nidus_filter_cuckoo((nidus_filter *)f), &s);
    return s;
}

/* Levels start at 0 and step by at most 1; the error bound is the sum of the tables' (capped at 1). Returns how
 * many tables are siblings (share the level of the table before). */
static unsigned check_levels(const nidus_filter *f)
{
    const nidus_cuckoo *cf = nidus_filter_cuckoo((nidus_filter *)f);
    nidus_cuckoo_stats s = stats(f);
    double sum = 0;
    unsigned siblings = 0, prev = 0;
    for (unsigned k = 0; k < s.tables; k++) {
        nidus_cuckoo_table_stats t;
        assert_int_equal(nidus_cuckoo_get_table_stats(cf, k, &t), NIDUS_OK);
        if (k == 0)
            assert_int_equal(t.level, 0);
        else
            assert_true(t.level == prev || t.level == prev + 1);
        siblings += k > 0 && t.level == prev;
        prev = t.level;
        sum += t.error_bound;
    }
    assert_float_equal(s.error_bound, sum < 1.0 ? sum : 1.0, 1e-12);
    return siblings;
}

/* `f` saved and opened again, loaded and mapped: the same bytes, the same answers for `ns`'s first n keys. */
static void assert_saves(const nidus_filter *f, const char *ns, uint64_t n)
{
    char path[] = "/tmp/nidus-siblings-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
    bytes want = filter_bytes(f);
    assert_int_equal(want.p[5], check_levels(f) ? NIDUS_FORMAT_VERSION_SIBLINGS : NIDUS_FORMAT_VERSION);
    const nidus_filter_open_mode modes[] = {NIDUS_FILTER_LOAD, NIDUS_FILTER_MAP, NIDUS_FILTER_MAP_WRITABLE};
    for (unsigned m = 0; m < 3; m++) {
        nidus_filter *back = NULL;
        assert_int_equal(nidus_filter_open(path, modes[m], &g_hook, NULL, &back), NIDUS_OK);
        assert_same_bytes(back, want);
        assert_counts(back, ns, 0, n, 1);
        nidus_filter_free(back);
    }
    unlink(path);
    free(want.p);
}

/* Two filters grown apart (several tables each, the older ones full), then a third: every key of each is present,
 * counts add, and removing exactly what was added empties the filter. */
static void test_both_grown(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_cuckoo_params p = params(256);
    nidus_filter *dst = cuckoo_with(&p), *src = cuckoo_with(&p), *third = cuckoo_with(&p);
    add_keys(dst, "d", 0, 2000, 1);
    add_keys(src, "s", 0, 1500, 1);
    add_keys(src, "d", 0, 100, 1); /* shared with dst */
    add_keys(src, "x", 0, 3, 12);  /* duplicates past the pair's share: overflow entries */
    add_keys(third, "t", 0, 1800, 1);
    nidus_cuckoo_stats sd = stats(dst), ss = stats(src), st3 = stats(third);
    assert_true(sd.tables >= 3 && ss.tables >= 3 && st3.tables >= 3);
    assert_int_equal(check_levels(dst), 0);

    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    nidus_cuckoo_stats m = stats(dst);
    assert_true(m.tables > (sd.tables > ss.tables ? sd.tables : ss.tables) && m.tables <= sd.tables + ss.tables);
    assert_true(check_levels(dst) >= 1);
    assert_true(m.error_bound > 2 * m.target_error); /* a sibling adds its level's bound */
    assert_int_equal(m.items, sd.items + ss.items);
    assert_counts(dst, "d", 0, 100, 2);
    assert_counts(dst, "d", 100, 2000, 1);
    assert_counts(dst, "s", 0, 1500, 1);
    assert_counts(dst, "x", 0, 3, 12);
    assert_saves(dst, "d", 2000);

    assert_int_equal(nidus_filter_merge(dst, third), NIDUS_OK);
    assert_int_equal(stats(dst).items, sd.items + ss.items + st3.items);
    assert_counts(dst, "t", 0, 1800, 1);
    assert_counts(dst, "s", 0, 1500, 1);
    assert_saves(dst, "t", 1800);

    /* growth after siblings: the next level after the newest table's */
    unsigned top = 0;
    nidus_cuckoo_table_stats t;
    assert_int_equal(nidus_cuckoo_get_table_stats(nidus_filter_cuckoo(dst), stats(dst).tables - 1, &t), NIDUS_OK);
    top = t.level;
    unsigned before = stats(dst).tables;
    add_keys(dst, "g", 0, 8000, 1);
    assert_true(stats(dst).tables > before);
    assert_int_equal(nidus_cuckoo_get_table_stats(nidus_filter_cuckoo(dst), stats(dst).tables - 1, &t), NIDUS_OK);
    assert_true(t.level > top);
    check_levels(dst);
    assert_saves(dst, "g", 8000);

    /* removes (compacting by themselves past 10 %), then an explicit compaction: levels stay consistent */
    remove_keys(dst, "g", 0, 8000, 1);
    remove_keys(dst, "t", 0, 1800, 1);
    assert_int_equal(nidus_cuckoo_compact(nidus_filter_cuckoo(dst), NULL), NIDUS_OK);
    check_levels(dst);
    assert_counts(dst, "s", 0, 1500, 1);
    assert_counts(dst, "d", 0, 2000, 1);
    assert_saves(dst, "s", 1500);
    remove_keys(dst, "d", 0, 100, 2);
    remove_keys(dst, "d", 100, 2000, 1);
    remove_keys(dst, "s", 0, 1500, 1);
    remove_keys(dst, "x", 0, 3, 12);
    assert_int_equal(stats(dst).items, 0);
    assert_int_equal(nidus_cuckoo_compact(nidus_filter_cuckoo(dst), NULL), NIDUS_OK);
    assert_int_equal(stats(dst).tables, 1);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    nidus_filter_free(third);
    assert_int_equal(g_fail.live, live);
}

/* A filter merged into itself, grown: every copy twice, through siblings. */
static void test_self_grown(void **state)
{
    (void)state;
    nidus_cuckoo_params p = params(256);
    nidus_filter *f = cuckoo_with(&p);
    add_keys(f, "d", 0, 1500, 1);
    uint64_t items = stats(f).items;
    assert_int_equal(nidus_filter_merge(f, f), NIDUS_OK);
    assert_int_equal(stats(f).items, 2 * items);
    assert_true(check_levels(f) >= 1);
    assert_counts(f, "d", 0, 1500, 2);
    remove_keys(f, "d", 0, 1500, 2);
    assert_int_equal(stats(f).items, 0);
    nidus_filter_free(f);
}

/* max_tables and max_memory refuse a sibling (its cost counted before it is allocated): dst as it was. A filter
 * that never grows gets no sibling either: NIDUS_ERR_FULL. */
static void test_limits(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_cuckoo_params p = params(256);
    nidus_filter *src = cuckoo_with(&p);
    add_keys(src, "s", 0, 1000, 1);
    nidus_filter *probe = cuckoo_with(&p);
    add_keys(probe, "d", 0, 1000, 1);
    nidus_cuckoo_stats ps = stats(probe);
    uint64_t tables_memory = 0;
    for (unsigned k = 0; k < ps.tables; k++) {
        nidus_cuckoo_table_stats t;
        assert_int_equal(nidus_cuckoo_get_table_stats(nidus_filter_cuckoo(probe), k, &t), NIDUS_OK);
        tables_memory += t.memory_bytes;
    }
    nidus_filter_free(probe);
    for (unsigned which = 0; which < 2; which++) {
        nidus_cuckoo_params q = p;
        if (which == 0)
            q.max_tables = ps.tables;
        else
            q.max_memory = tables_memory + 64; /* less than any table */
        nidus_filter *dst = cuckoo_with(&q);
        add_keys(dst, "d", 0, 1000, 1);
        assert_int_equal(stats(dst).tables, ps.tables);
        bytes before = filter_bytes(dst);
        assert_int_equal(nidus_filter_merge(dst, src), which == 0 ? NIDUS_ERR_LIMIT_TABLES : NIDUS_ERR_LIMIT_MEMORY);
        assert_same_bytes(dst, before);
        free(before.p);
        nidus_filter_free(dst);
    }
    nidus_cuckoo_params fixed = p;
    fixed.expansion = 0;
    fixed.capacity = 1000;
    nidus_filter *a = cuckoo_with(&fixed), *b = cuckoo_with(&fixed);
    add_keys(a, "d", 0, 700, 1);
    add_keys(b, "s", 0, 700, 1);
    bytes before = filter_bytes(a);
    assert_int_equal(nidus_filter_merge(a, b), NIDUS_ERR_FULL);
    assert_same_bytes(a, before);
    free(before.p);
    nidus_filter_free(a);
    nidus_filter_free(b);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* Every allocation of a merge that adds siblings failing in turn: NIDUS_ERR_NO_MEMORY, dst unchanged, nothing
 * leaked; then it succeeds. Small (packed) and larger first tables. */
static void test_allocation_failures(void **state)
{
    (void)state;
    const uint64_t caps[] = {60, 256};
    for (unsigned c = 0; c < 2; c++) {
        nidus_cuckoo_params p = params(caps[c]);
        nidus_filter *dst = cuckoo_with(&p), *src = cuckoo_with(&p);
        add_keys(dst, "d", 0, caps[c] * 5, 1);
        add_keys(src, "s", 0, caps[c] * 4, 1);
        add_keys(src, "x", 0, 2, 9);
        unsigned tables = stats(dst).tables;
        bytes before = filter_bytes(dst);
        long live = g_fail.live, n = 1;
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
        assert_true(n > 1);
        free(before.p);
        assert_true(stats(dst).tables > tables);
        assert_true(check_levels(dst) >= 1);
        assert_counts(dst, "d", 0, caps[c] * 5, 1);
        assert_counts(dst, "s", 0, caps[c] * 4, 1);
        assert_counts(dst, "x", 0, 2, 9);
        nidus_filter_free(dst);
        nidus_filter_free(src);
    }
}

/* A destination opened writable in place (its tables in a private mapping of the file) gets siblings: tables of
 * other sizes take the positions of mapped ones, and the save writes the file anew; it holds the same bytes as
 * the same merge into a filter loaded whole. */
static void test_into_writable_mapping(void **state)
{
    (void)state;
    long live = g_fail.live;
    nidus_cuckoo_params p = params(256);
    nidus_filter *dst = cuckoo_with(&p), *src = cuckoo_with(&p);
    add_keys(dst, "d", 0, 1500, 1);
    add_keys(src, "s", 0, 1200, 1);
    add_keys(src, "d", 0, 4, 9);
    char path[] = "/tmp/nidus-siblings-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(nidus_filter_save_file(dst, path), NIDUS_OK);
    nidus_filter *mapped = NULL, *back = NULL;
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, &g_hook, NULL, &mapped), NIDUS_OK);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    assert_int_equal(nidus_filter_merge(mapped, src), NIDUS_OK);
    assert_true(check_levels(dst) >= 1);
    bytes want = filter_bytes(dst);
    assert_same_bytes(mapped, want);
    assert_counts(mapped, "s", 0, 1200, 1);
    assert_int_equal(nidus_filter_save_file(mapped, path), NIDUS_OK);
    nidus_filter_free(mapped);
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, &g_hook, NULL, &back), NIDUS_OK);
    unlink(path);
    assert_same_bytes(back, want);
    free(want.p);
    nidus_filter_free(back);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    assert_int_equal(g_fail.live, live);
}

/* ---- the encoding */

/* A grown filter without siblings is written as before levels existed: the fixture was saved by the library of
 * the release before (format 8), from these same calls. */
static void test_without_siblings_unchanged(void **state)
{
    (void)state;
    nidus_cuckoo_params p = {.capacity = 500, .bucket_size = 4, .fingerprint_bits = 12, .expansion = 2, .seed = 42};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    char k[32];
    for (unsigned i = 0; i < 3000; i++)
        assert_int_equal(nidus_cuckoo_add(cf, k, (size_t)snprintf(k, sizeof k, "k%u", i)), NIDUS_OK);
    for (unsigned i = 0; i < 200; i++)
        assert_int_equal(nidus_cuckoo_remove(cf, k, (size_t)snprintf(k, sizeof k, "k%u", i)), NIDUS_OK);
    for (unsigned i = 0; i < 20; i++)
        assert_int_equal(nidus_cuckoo_add(cf, "dup", 3), NIDUS_OK);
    char path[] = "/tmp/nidus-siblings-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(nidus_cuckoo_save_file(cf, path), NIDUS_OK);
    FILE *a = fopen(path, "rb"), *b = fopen(NIDUS_FIXTURES_DIR "/v8-cuckoo-grown.nidus", "rb");
    assert_non_null(a);
    assert_non_null(b);
    static uint8_t x[1 << 16], y[1 << 16];
    size_t na = fread(x, 1, sizeof x, a), nb = fread(y, 1, sizeof y, b);
    fclose(a);
    fclose(b);
    unlink(path);
    assert_int_equal(na, nb);
    assert_true(na < sizeof x);
    assert_memory_equal(x, y, na);
    assert_int_equal(x[5], NIDUS_FILE_FORMAT_VERSION);
    nidus_cuckoo_free(cf);
}

static void reseal(uint8_t *buf, size_t len)
{
    uint64_t h = nidus_codec_hash(buf, len - 8);
    for (int k = 0; k < 8; k++)
        buf[len - 8 + k] = (uint8_t)(h >> (8 * k));
}

static nidus_status decode_forged(const bytes *orig, size_t at, uint8_t value)
{
    uint8_t *buf = malloc(orig->n);
    memcpy(buf, orig->p, orig->n);
    buf[at] = value;
    reseal(buf, orig->n);
    nidus_cuckoo *back = NULL, *view = NULL;
    nidus_status st = nidus_cuckoo_decode(buf, orig->n, NULL, &back);
    assert_int_equal(nidus_cuckoo_view(buf, orig->n, NULL, &view), st);
    nidus_cuckoo_free(back);
    nidus_cuckoo_free(view);
    free(buf);
    return st;
}

/* The level byte of each table (position - level) and the version byte, forged with a valid checksum. */
static void test_forged_levels(void **state)
{
    (void)state;
    nidus_cuckoo_params p = params(256);
    nidus_filter *dst = cuckoo_with(&p), *src = cuckoo_with(&p);
    add_keys(dst, "d", 0, 1500, 1);
    add_keys(src, "s", 0, 1500, 1);
    bytes plain = filter_bytes(dst);
    assert_int_equal(nidus_filter_merge(dst, src), NIDUS_OK);
    bytes sib = filter_bytes(dst);
    unsigned n = stats(dst).tables;
    const size_t tables = 20 + 40, below = 25; /* prefix, fixed meta; the byte after a table's f */
    assert_int_equal(sib.p[5], NIDUS_FORMAT_VERSION_SIBLINGS);
    assert_int_equal(plain.p[5], NIDUS_FORMAT_VERSION);
    assert_int_equal(decode_forged(&sib, 0, 'N'), NIDUS_OK); /* the forger's baseline */
    assert_int_equal(decode_forged(&sib, 5, NIDUS_FORMAT_VERSION), NIDUS_ERR_CORRUPT);  /* levels in a 7 */
    assert_int_equal(decode_forged(&plain, 5, NIDUS_FORMAT_VERSION_SIBLINGS), NIDUS_ERR_CORRUPT); /* 9, none */
    assert_int_equal(decode_forged(&plain, tables + 32 + below, 1), NIDUS_ERR_CORRUPT); /* a level in a 7 */
    assert_int_equal(decode_forged(&sib, tables + below, 1), NIDUS_ERR_CORRUPT); /* table 0 below level 0 */
    for (unsigned k = 1; k < n; k++) {
        uint8_t b = sib.p[tables + 32 * k + below];
        assert_int_equal(decode_forged(&sib, tables + 32 * k + below, (uint8_t)(k + 1)), NIDUS_ERR_CORRUPT);
        /* one level more (a step of 2, or a table off its level's budget) or one less (a sibling of another
         * shape, or a level before the one before) */
        if (b > 0)
            assert_int_equal(decode_forged(&sib, tables + 32 * k + below, (uint8_t)(b - 1)), NIDUS_ERR_CORRUPT);
        assert_int_equal(decode_forged(&sib, tables + 32 * k + below, (uint8_t)(b + 1)), NIDUS_ERR_CORRUPT);
        assert_int_equal(decode_forged(&sib, tables + 32 * k + below + 1, 1), NIDUS_ERR_CORRUPT); /* padding */
    }
    free(plain.p);
    free(sib.p);
    nidus_filter_free(dst);
    nidus_filter_free(src);
    /* Bloom filters are never written as 9: their decoder takes it as a version it does not know */
    nidus_bloom_params bp = {.capacity = 100, .error_rate = 0.01};
    nidus_bloom *bf = NULL, *back = NULL;
    assert_int_equal(nidus_bloom_new(&bp, &bf), NIDUS_OK);
    uint8_t buf[4096];
    size_t n_bytes;
    assert_int_equal(nidus_bloom_encode(bf, buf, sizeof buf, &n_bytes), NIDUS_OK);
    assert_int_equal(buf[5], NIDUS_FORMAT_VERSION);
    buf[5] = NIDUS_FORMAT_VERSION_SIBLINGS;
    reseal(buf, n_bytes);
    assert_int_equal(nidus_bloom_decode(buf, n_bytes, NULL, &back), NIDUS_ERR_VERSION);
    buf[5] = NIDUS_FORMAT_VERSION;
    reseal(buf, n_bytes);
    assert_int_equal(nidus_bloom_decode(buf, n_bytes, NULL, &back), NIDUS_OK);
    nidus_bloom_free(back);
    nidus_bloom_free(bf);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_grown),
        cmocka_unit_test(test_self_grown),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_into_writable_mapping),
        cmocka_unit_test(test_without_siblings_unchanged),
        cmocka_unit_test(test_forged_levels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

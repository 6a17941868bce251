/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed filters as a kind of nidus_filter, through the public API only: every state (never written, half,
 * full, with stash and duplicate entries, after a silence, large enough for several chunks) encoded, saved,
 * opened in each mode, written in a writable mapping and saved by patching, dumped and loaded by chunks one at a
 * time (half-loaded included), verified; merges of like windows keep each copy's age, unlike ones are refused
 * and leave dst as it was; stats at the handle's time; relocation of every block. */
#define _GNU_SOURCE /* malloc_usable_size */
#include <stdbool.h>
#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <nidus/nidus.h>
#include <nidus/verify.h>

#include "test_util.h"
#include "scratch_dir.h"
#include "filter_chunks_util.h"

enum { W = 60000 }; /* a minute of milliseconds: epochs of 12 s */
static const uint64_t T0 = UINT64_C(1700000000000);

static nidus_filter *make(uint64_t capacity, uint64_t window)
{
    nidus_filter_params p = {.kind = NIDUS_KIND_WINDOW, .capacity = capacity, .error_rate = 0.001,
                             .window = window};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_OK);
    return f;
}

static nidus_filter *make_growing(uint64_t capacity, uint64_t window, unsigned expansion)
{
    nidus_filter_params p = {.kind = NIDUS_KIND_WINDOW, .capacity = capacity, .error_rate = 0.001,
                             .window = window, .expansion = expansion};
    nidus_filter *f = NULL;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_OK);
    return f;
}

static unsigned tables_of(nidus_filter *f)
{
    nidus_filter_stats s;
    nidus_filter_get_stats(f, &s);
    return s.sub_filters;
}

static void add_at(nidus_filter *f, const char *ns, uint64_t from, uint64_t to, uint64_t now)
{
    char key[64];
    nidus_filter_set_time(f, now);
    for (uint64_t i = from; i < to; i++)
        assert_int_equal(nidus_filter_add(f, key, test_key(key, sizeof key, ns, i)), NIDUS_OK);
}

/* Every key of [from, to) present (present) or absent but for collisions (at most `slack` of them) at `now`. */
static void assert_keys(nidus_filter *f, const char *ns, uint64_t from, uint64_t to, uint64_t now, bool present)
{
    char key[64];
    uint64_t seen = 0;
    nidus_filter_set_time(f, now);
    for (uint64_t i = from; i < to; i++) {
        size_t len = test_key(key, sizeof key, ns, i);
        bool in = nidus_filter_contains(f, key, len);
        assert_true(in == nidus_filter_contains_hash(f, nidus_filter_hash(f, key, len)));
        assert_true(in == (nidus_filter_count(f, key, len) > 0));
        if (present)
            assert_true(in);
        seen += in;
    }
    if (!present)
        assert_true(seen <= (to - from) / 100 + 2); /* at 0.1 %: collisions only */
}

static bool same_file(const char *a, const char *b)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    return system(cmd) == 0;
}

static void assert_half_loaded(nidus_filter *f)
{
    assert_true(nidus_filter_loading(f));
    assert_int_equal(nidus_filter_kind(f), NIDUS_KIND_WINDOW);
    assert_false(nidus_filter_contains_hash(f, 1));
    assert_int_equal(nidus_filter_add(f, "x", 1), NIDUS_ERR_READ_ONLY);
    assert_true(nidus_filter_is_read_only(f));
}

/* f's chunks one at a time into a new filter (the chunks of the half-loaded one into a third), then both the
 * same encoding as f. */
static void check_chunks(const nidus_filter *f)
{
    chunk_list c;
    dump_all(f, &c);
    assert_true(c.n >= 2);
    nidus_filter *l = NULL, *h = NULL;
    assert_int_equal(nidus_filter_load_chunk(&l, NIDUS_KIND_WINDOW, c.data[1], c.len[1], 0, NULL),
                     NIDUS_ERR_SEQUENCE);
    assert_int_equal(nidus_filter_load_chunk(&l, NIDUS_KIND_WINDOW, c.data[0], c.len[0], 16, NULL),
                     NIDUS_ERR_LIMIT_MEMORY);
    assert_null(l);
    for (unsigned i = 0; i < c.n; i++) {
        if (i == c.n - 1) {
            assert_half_loaded(l);
            chunk_list half;
            dump_all(l, &half);
            for (unsigned j = 0; j < half.n; j++)
                assert_int_equal(nidus_filter_load_chunk(&h, NIDUS_KIND_WINDOW, half.data[j], half.len[j], 0, NULL),
                                 NIDUS_OK);
            assert_half_loaded(h);
            free_chunks(&half);
            assert_int_equal(nidus_filter_load_chunk(&h, NIDUS_KIND_WINDOW, c.data[i], c.len[i], 0, NULL), NIDUS_OK);
        }
        assert_int_equal(nidus_filter_load_chunk(&l, NIDUS_KIND_WINDOW, c.data[i], c.len[i], 0, NULL), NIDUS_OK);
    }
    assert_false(nidus_filter_loading(l));
    assert_false(nidus_filter_loading(h));
    assert_same_encoding(f, l);
    assert_same_encoding(f, h);
    nidus_filter_free(h);
    nidus_filter_free(l);
    free_chunks(&c);
}

/* f saved, then opened in every mode: the same encoding; the file verifies. */
static void check_files(const nidus_filter *f)
{
    char path[128];
    path_of(path, sizeof path, "w.nidus");
    assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
    nidus_file_report r;
    assert_int_equal(nidus_file_verify(path, NULL, &r), NIDUS_OK);
    assert_int_equal(r.kind, NIDUS_KIND_WINDOW);
    const nidus_filter_open_mode modes[] = {NIDUS_FILTER_LOAD, NIDUS_FILTER_MAP, NIDUS_FILTER_MAP_WRITABLE};
    for (unsigned m = 0; m < 3; m++) {
        nidus_filter *o = NULL;
        assert_int_equal(nidus_filter_open(path, modes[m], NULL, NULL, &o), NIDUS_OK);
        assert_int_equal(nidus_filter_kind(o), NIDUS_KIND_WINDOW);
        assert_true(nidus_filter_is_read_only(o) == (modes[m] == NIDUS_FILTER_MAP));
        if (modes[m] == NIDUS_FILTER_MAP)
            assert_int_equal(nidus_filter_add(o, "x", 1), NIDUS_ERR_READ_ONLY);
        assert_same_encoding(f, o);
        nidus_filter_free(o);
    }
    size_t n;
    uint8_t *e = encoding_of(f, &n);
    nidus_filter *d = NULL;
    assert_int_equal(nidus_filter_view(e, n, NULL, &d), NIDUS_OK);
    assert_same_encoding(f, d);
    nidus_filter_free(d);
    assert_int_equal(nidus_filter_decode(e, n, NULL, &d), NIDUS_OK);
    assert_same_encoding(f, d);
    nidus_filter_free(d);
    free(e);
}

static void check_everything(const nidus_filter *f)
{
    check_files(f);
    check_chunks(f);
}

static void test_every_state_through_files_and_chunks(void **state)
{
    (void)state;
    nidus_filter *f = make(20000, W);
    check_everything(f); /* never written */

    add_at(f, "a", 0, 5000, T0); /* half */
    check_everything(f);
    assert_keys(f, "a", 0, 5000, T0 + W, true);

    for (int i = 0; i < 40; i++) /* duplicates past a pair's slots: the overflow map */
        add_at(f, "dup", 0, 1, T0 + 1000);
    nidus_filter_set_time(f, T0 + 2000);
    assert_int_equal(nidus_filter_count(f, "dup:0", 5), 40);
    check_everything(f);

    /* full: adds until no room, within one window */
    nidus_status st = NIDUS_OK;
    char key[64];
    nidus_filter_set_time(f, T0 + 3000);
    uint64_t i = 0;
    for (; st == NIDUS_OK; i++)
        st = nidus_filter_add(f, key, test_key(key, sizeof key, "full", i));
    assert_int_equal(st, NIDUS_ERR_FULL);
    assert_true(i + 5000 > 20000); /* at least the capacity: 20,000 in one window */
    check_everything(f);
    assert_keys(f, "a", 0, 5000, T0 + W, true);

    /* after a silence: every item expired, nothing written since */
    nidus_filter_set_time(f, T0 + 3 * W);
    nidus_filter_stats s;
    nidus_filter_get_stats(f, &s);
    assert_int_equal(s.items, 0);
    assert_int_equal(s.window, W);
    check_everything(f);
    assert_keys(f, "a", 0, 5000, T0 + 3 * W, false);
    add_at(f, "late", 0, 100, T0 + 3 * W); /* the first write after it clears the table */
    nidus_filter_get_stats(f, &s);
    assert_int_equal(s.items, 100);
    check_everything(f);
    nidus_filter_free(f);

    /* large: a table of several 4 MiB chunks */
    f = make(3000000, W);
    add_at(f, "big", 0, 3000, T0);
    check_everything(f);
    nidus_filter_free(f);
}

/* A filter that grows (expansion 2) through every state: with its expansion but one table, half, grown to two and
 * three tables (duplicates on the side in a grown table too), shrunk back by expiry, full at its limit of tables,
 * each through files (every open mode), views, decodes and chunks one at a time (half-loaded included). */
static void test_grown_states_through_files_and_chunks(void **state)
{
    (void)state;
    nidus_filter *f = make_growing(2000, W, 2);
    check_everything(f); /* never written: one table, written as a growing filter */
    size_t n;
    uint8_t *e = encoding_of(f, &n);
    assert_int_equal(e[5], NIDUS_FORMAT_VERSION_WINDOW_GROWN);
    free(e);
    add_at(f, "a", 0, 1000, T0); /* half */
    assert_int_equal(tables_of(f), 1);
    check_everything(f);

    add_at(f, "b", 0, 3000, T0 + 1000); /* past the first table: a second of 4,000 */
    assert_int_equal(tables_of(f), 2);
    for (int i = 0; i < 40; i++) /* duplicates past a pair's slots, in the table adds go to */
        add_at(f, "dup", 0, 1, T0 + 1500);
    check_everything(f);
    assert_keys(f, "a", 0, 1000, T0 + W, true);
    assert_keys(f, "b", 0, 3000, T0 + 1000 + W, true);
    nidus_filter_set_time(f, T0 + 2000);
    assert_int_equal(nidus_filter_count(f, "dup:0", 5), 40);

    add_at(f, "c", 0, 6000, T0 + 2000); /* and a third of 8,000 */
    assert_int_equal(tables_of(f), 3);
    check_everything(f);
    assert_keys(f, "a", 0, 1000, T0 + W, true);
    assert_keys(f, "c", 0, 6000, T0 + 2000 + W, true);
    nidus_filter_stats s;
    nidus_filter_get_stats(f, &s);
    assert_int_equal(s.capacity, 2000 + 4000 + 8000);
    assert_true(s.error_bound <= 2 * 0.001 * 1.0001); /* the tables' bounds sum to at most twice the first's */
    e = encoding_of(f, &n);
    assert_int_equal(e[5], NIDUS_FORMAT_VERSION_WINDOW_GROWN);
    free(e);

    /* an add after the burst has expired: every grown table released, and read back so */
    assert_keys(f, "c", 0, 6000, T0 + 2000 + 2 * W, false);
    add_at(f, "late", 0, 100, T0 + 2000 + 2 * W);
    assert_int_equal(tables_of(f), 1);
    check_everything(f);
    assert_keys(f, "late", 0, 100, T0 + 2000 + 3 * W - 1, true);
    nidus_filter_free(f);

    /* at the limit of tables: expansion 1, 32 tables, then NIDUS_ERR_LIMIT_TABLES and nothing else changes */
    f = make_growing(50, W, 1);
    char key[64];
    nidus_status st = NIDUS_OK;
    nidus_filter_set_time(f, T0);
    uint64_t i = 0;
    for (; st == NIDUS_OK; i++)
        st = nidus_filter_add(f, key, test_key(key, sizeof key, "lim", i));
    assert_int_equal(st, NIDUS_ERR_LIMIT_TABLES);
    assert_int_equal(tables_of(f), NIDUS_WINDOW_MAX_TABLES);
    assert_true(i > 32 * 50);
    check_everything(f);
    assert_keys(f, "lim", 0, i - 1, T0 + W, true);
    nidus_filter_free(f);
}

/* A file mapped writable, written and saved, is byte for byte what a whole save of the same filter writes,
 * whether the overflow map kept its size (patched in place) or not (written whole). */
static void test_a_writable_mapping_saves_as_a_whole_save(void **state)
{
    (void)state;
    char path[128], whole[128];
    path_of(path, sizeof path, "m.nidus");
    path_of(whole, sizeof whole, "whole.nidus");
    nidus_filter *f = make(200000, W);
    add_at(f, "a", 0, 10000, T0);
    assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
    for (int round = 0; round < 3; round++) {
        nidus_filter *o = NULL;
        assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_MAP_WRITABLE, NULL, NULL, &o), NIDUS_OK);
        if (round < 2)
            add_at(o, "r", (uint64_t)round * 100, (uint64_t)round * 100 + 100, T0 + 1000 * (uint64_t)round);
        else
            for (int i = 0; i < 30; i++) /* the overflow map grows: the layout moves */
                add_at(o, "dup", 0, 1, T0 + 5000);
        assert_int_equal(nidus_filter_save_file(o, path), NIDUS_OK);
        assert_int_equal(nidus_filter_save_file(o, whole), NIDUS_OK);
        nidus_filter_free(o);
        nidus_filter *w = NULL;
        assert_int_equal(nidus_filter_open(whole, NIDUS_FILTER_LOAD, NULL, NULL, &w), NIDUS_OK);
        assert_int_equal(nidus_filter_save_file(w, whole), NIDUS_OK);
        nidus_filter_free(w);
        assert_true(same_file(path, whole));
    }
    nidus_filter *o = NULL;
    assert_int_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, NULL, NULL, &o), NIDUS_OK);
    assert_keys(o, "a", 0, 10000, T0 + W, true);
    assert_keys(o, "r", 0, 200, T0 + W, true);
    nidus_filter_set_time(o, T0 + 6000);
    assert_int_equal(nidus_filter_count(o, "dup:0", 5), 30);
    nidus_filter_free(o);
    nidus_filter_free(f);
}

static void test_damaged_window_files_are_refused(void **state)
{
    (void)state;
    char path[128];
    path_of(path, sizeof path, "d.nidus");
    nidus_filter *f = make(1000, W);
    add_at(f, "a", 0, 500, T0);
    assert_int_equal(nidus_filter_save_file(f, path), NIDUS_OK);
    nidus_filter_free(f);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    static uint8_t orig[1 << 16], buf[1 << 16];
    size_t n = fread(orig, 1, sizeof orig, in);
    fclose(in);
    assert_true(n > 0 && n < sizeof orig);
    unsigned seed = (unsigned)time(NULL);
    printf("seed %u\n", seed);
    srand(seed);
    for (int k = 0; k < 300; k++) { /* one bit flipped anywhere: refused by every open and by verify */
        memcpy(buf, orig, n);
        buf[(size_t)rand() % n] ^= (uint8_t)(1u << (rand() % 8));
        FILE *out = fopen(path, "wb");
        assert_non_null(out);
        assert_int_equal(fwrite(buf, 1, n, out), n);
        assert_int_equal(fclose(out), 0);
        nidus_filter *o = NULL;
        assert_int_not_equal(nidus_filter_open(path, NIDUS_FILTER_LOAD, NULL, NULL, &o), NIDUS_OK);
        assert_int_not_equal(nidus_filter_open(path, NIDUS_FILTER_MAP, NULL, NULL, &o), NIDUS_OK);
        assert_int_not_equal(nidus_file_verify(path, NULL, NULL), NIDUS_OK);
        assert_null(o);
    }
}

/* Grown windows merge table by table (each copy into dst's table of its level, or a new sibling of that level
 * when those have no room): every key of both answers through its window; a different expansion is refused. */
static void test_grown_windows_merge(void **state)
{
    (void)state;
    nidus_filter *a = make_growing(1000, W, 2), *b = make_growing(1000, W, 2), *x = make_growing(1000, W, 4);
    add_at(a, "a", 0, 500, T0);
    add_at(b, "b", 0, 3000, T0 + 100); /* b grows to two tables, a has one */
    assert_int_equal(tables_of(b), 2);
    assert_int_equal(nidus_filter_merge(a, b), NIDUS_OK);
    assert_int_equal(tables_of(a), 3); /* a's first, a sibling of it for what of b's first did not fit, b's second */
    assert_keys(a, "a", 0, 500, T0 + W, true);
    assert_keys(a, "b", 0, 3000, T0 + 100 + W, true);
    assert_keys(a, "b", 0, 3000, T0 + 100 + 2 * W, false);
    check_chunks(a);
    char why[128];
    assert_int_equal(nidus_filter_merge(a, x), NIDUS_ERR_INCOMPATIBLE);
    nidus_filter_merge_difference(a, x, why, sizeof why);
    assert_string_equal(why, "expansion 4, not 2");
    nidus_filter_free(a);
    nidus_filter_free(b);
    nidus_filter_free(x);
}

/* Merges keep each copy's age: keys of both answer through their own windows, expired ones do not come back. */
static void test_like_windows_merge_and_unlike_are_refused(void **state)
{
    (void)state;
    nidus_filter *a = make(20000, W), *b = make(20000, W);
    add_at(a, "old", 0, 2000, T0);
    add_at(b, "new", 0, 2000, T0 + W / 2);
    add_at(b, "both", 0, 100, T0 + W / 2);
    add_at(a, "both", 0, 100, T0 + 10);
    assert_int_equal(nidus_filter_merge(a, b), NIDUS_OK);
    assert_keys(a, "old", 0, 2000, T0 + W, true);
    assert_keys(a, "new", 0, 2000, T0 + W + W / 2, true);
    nidus_filter_set_time(a, T0 + 20);
    assert_int_equal(nidus_filter_count(a, "both:1", 6), 2); /* a reader behind the merge reads at its time */
    nidus_filter_set_time(a, T0 + 10 + 6 * (W / 5)); /* a's copy gone from t + 6g on */
    assert_int_equal(nidus_filter_count(a, "both:1", 6), 1); /* a's copy expired, b's lives */
    assert_keys(a, "old", 0, 2000, T0 + 2 * W, false); /* expired: a's own adds only */
    assert_keys(a, "new", 0, 2000, T0 + W + W / 2, true);
    assert_keys(a, "new", 0, 2000, T0 + 3 * W, false);

    /* a merge the other way gives the same answers */
    nidus_filter *c = make(20000, W);
    add_at(c, "old", 0, 2000, T0);
    add_at(c, "both", 0, 100, T0 + 10);
    nidus_filter *d = make(20000, W);
    add_at(d, "new", 0, 2000, T0 + W / 2);
    add_at(d, "both", 0, 100, T0 + W / 2);
    assert_int_equal(nidus_filter_merge(d, c), NIDUS_OK);
    assert_keys(d, "old", 0, 2000, T0 + W, true);
    nidus_filter_set_time(d, T0 + W / 2);
    assert_int_equal(nidus_filter_count(d, "both:7", 6), 2);

    /* unlike windows, shapes, kinds: refused, dst unchanged */
    nidus_filter *e = make(20000, 2 * W), *g = make(40000, W);
    char why[128];
    size_t n;
    uint8_t *before = encoding_of(a, &n);
    assert_int_equal(nidus_filter_merge(a, e), NIDUS_ERR_INCOMPATIBLE);
    assert_true(nidus_filter_merge_difference(a, e, why, sizeof why) > 0);
    assert_string_equal(why, "window 120000, not 60000");
    assert_int_equal(nidus_filter_merge(a, g), NIDUS_ERR_INCOMPATIBLE);
    assert_true(nidus_filter_merge_difference(a, g, why, sizeof why) > 0);
    nidus_filter_params cp = {.kind = NIDUS_KIND_CUCKOO, .capacity = 1000};
    nidus_filter *cu = NULL;
    assert_int_equal(nidus_filter_new(&cp, &cu), NIDUS_OK);
    assert_int_equal(nidus_filter_merge(a, cu), NIDUS_ERR_INCOMPATIBLE);
    nidus_filter_merge_difference(a, cu, why, sizeof why);
    assert_string_equal(why, "kind cuckoo, not window");
    assert_int_equal(nidus_filter_merge_difference(a, b, why, sizeof why), 0);

    /* a union that does not fit: NIDUS_ERR_FULL, dst unchanged */
    nidus_filter *s1 = make(100, W), *s2 = make(100, W);
    add_at(s2, "x", 0, 100, T0);
    nidus_status st = NIDUS_OK;
    char key[64];
    nidus_filter_set_time(s1, T0);
    for (uint64_t i = 0; st == NIDUS_OK; i++)
        st = nidus_filter_add(s1, key, test_key(key, sizeof key, "fill", i));
    size_t n1;
    uint8_t *s1_before = encoding_of(s1, &n1);
    assert_int_equal(nidus_filter_merge(s1, s2), NIDUS_ERR_FULL);
    size_t n2;
    uint8_t *s1_after = encoding_of(s1, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(s1_before, s1_after, n1);

    size_t m;
    uint8_t *after = encoding_of(a, &m);
    assert_int_equal(n, m);
    assert_memory_equal(before, after, n);
    free(before);
    free(after);
    free(s1_before);
    free(s1_after);
    nidus_filter_free(s1);
    nidus_filter_free(s2);
    nidus_filter_free(cu);
    nidus_filter_free(e);
    nidus_filter_free(g);
    nidus_filter_free(a);
    nidus_filter_free(b);
    nidus_filter_free(c);
    nidus_filter_free(d);
}

static void test_parameters_and_stats(void **state)
{
    (void)state;
    nidus_filter *f = NULL;
    nidus_filter_params p = {.kind = NIDUS_KIND_WINDOW, .capacity = 1000};
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT); /* no window */
    p.window = NIDUS_WINDOW_MAX_TICKS + 1;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    p.window = W, p.expansion = NIDUS_WINDOW_MAX_EXPANSION + 1;
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    p.kind = NIDUS_KIND_CUCKOO, p.expansion = 0; /* a window on another kind */
    assert_int_equal(nidus_filter_new(&p, &f), NIDUS_ERR_INVALID_ARGUMENT);
    assert_null(f);
    assert_string_equal(nidus_kind_name(NIDUS_KIND_WINDOW), "window");

    f = make(1000, W);
    assert_non_null(nidus_filter_window(f));
    assert_null(nidus_filter_cuckoo(f));
    assert_int_equal(nidus_filter_time(f), 0);
    add_at(f, "a", 0, 300, T0);
    assert_int_equal(nidus_filter_time(f), T0);
    nidus_filter_stats s;
    nidus_filter_get_stats(f, &s);
    assert_int_equal(s.kind, NIDUS_KIND_WINDOW);
    assert_int_equal(s.items, 300);
    assert_int_equal(s.capacity, 1000);
    assert_int_equal(s.window, W);
    assert_int_equal(s.sub_filters, 1);
    assert_true(s.error_bound > 0 && s.error_bound <= 0.001 * 1.0001);
    nidus_window_stats ws;
    nidus_window_get_stats(nidus_filter_window(f), T0, &ws);
    assert_int_equal(ws.memory_bytes, s.memory_bytes);
    nidus_filter_set_time(f, T0 + 2 * W); /* expired */
    nidus_filter_get_stats(f, &s);
    assert_int_equal(s.items, 0);
    assert_false(nidus_filter_contains(f, "a:1", 3));
    nidus_filter_set_time(f, 0); /* 0: read at the latest write's time */
    assert_true(nidus_filter_contains(f, "a:1", 3));
    nidus_filter_set_time(f, T0 + 10);
    assert_int_equal(nidus_filter_remove(f, "a:1", 3), NIDUS_OK);
    assert_int_equal(nidus_filter_remove(f, "a:1", 3), NIDUS_ERR_NOT_FOUND);
    nidus_filter_params q = {.kind = NIDUS_KIND_CUCKOO, .capacity = 100};
    nidus_filter *c = NULL;
    assert_int_equal(nidus_filter_new(&q, &c), NIDUS_OK);
    nidus_filter_get_stats(c, &s);
    assert_int_equal(s.window, 0);
    nidus_filter_free(c);
    nidus_filter_free(f);
}

/* A mover that copies every block it is offered (the libc allocator's, as the filter's) and frees the old one,
 * pausing after each: the defragmenter's contract. */
static void *move_block(void *ctx, void *block)
{
    (*(unsigned *)ctx)++;
    size_t n = malloc_usable_size(block);
    void *to = malloc(n);
    memcpy(to, block, n);
    free(block);
    return to;
}
static bool stop_each(void *ctx) { (void)ctx; return true; }

static void test_relocation_moves_every_block(void **state)
{
    (void)state;
    nidus_filter *f = make(5000, W);
    add_at(f, "a", 0, 2000, T0);
    for (int i = 0; i < 20; i++)
        add_at(f, "dup", 0, 1, T0 + 1);
    size_t n;
    uint8_t *before = encoding_of(f, &n);
    unsigned moved = 0;
    nidus_mover m = {move_block, stop_each, &moved};
    uint64_t cursor = 0;
    unsigned steps = 0;
    while (!nidus_filter_relocate(f, &m, &cursor))
        steps++;
    assert_int_equal(moved, 3); /* the struct, the slots, the overflow entries */
    assert_int_equal(steps, 3);
    assert_int_equal(cursor, 0);
    uint8_t *after = encoding_of(f, &n);
    assert_memory_equal(before, after, n);
    assert_keys(f, "a", 0, 2000, T0 + W, true);
    free(before);
    free(after);
    nidus_filter_free(f);
}

/* A grown filter's blocks: the struct, the grown tables' array, the first table's slots and overflow entries,
 * then each grown table's struct, slots and overflow entries. */
static void test_relocation_of_a_grown_filter(void **state)
{
    (void)state;
    nidus_filter *f = make_growing(1000, W, 2);
    add_at(f, "a", 0, 3000, T0);
    for (int i = 0; i < 20; i++)
        add_at(f, "dup", 0, 1, T0 + 1);
    assert_int_equal(tables_of(f), 2);
    size_t n;
    uint8_t *before = encoding_of(f, &n);
    unsigned moved = 0;
    nidus_mover m = {move_block, stop_each, &moved};
    uint64_t cursor = 0;
    while (!nidus_filter_relocate(f, &m, &cursor))
        ;
    assert_true(moved >= 2 + 1 + 2); /* the structs, the array and the slots at least (overflow maps if held) */
    uint8_t *after = encoding_of(f, &n);
    assert_memory_equal(before, after, n);
    assert_keys(f, "a", 0, 3000, T0 + W, true);
    free(before);
    free(after);
    nidus_filter_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parameters_and_stats),
        cmocka_unit_test_setup_teardown(test_every_state_through_files_and_chunks, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_writable_mapping_saves_as_a_whole_save, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_damaged_window_files_are_refused, make_dir, remove_dir),
        cmocka_unit_test(test_like_windows_merge_and_unlike_are_refused),
        cmocka_unit_test(test_relocation_moves_every_block),
        cmocka_unit_test_setup_teardown(test_grown_states_through_files_and_chunks, make_dir, remove_dir),
        cmocka_unit_test(test_grown_windows_merge),
        cmocka_unit_test(test_relocation_of_a_grown_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

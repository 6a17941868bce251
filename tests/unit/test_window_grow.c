/* SPDX-License-Identifier: BSD-3-Clause */
/* Windowed cuckoo filters that grow (expansion > 0): a table of capacity * expansion^k when no table has room,
 * every key present through its window in whichever table holds it; counts, removes (the oldest live copy) and
 * renewals across tables; grown tables released once nothing in them lives; full at expansion 0 and at the
 * limits; the grown encoding's every field checked (forged metas with a valid checksum refused), and the
 * encoding of a filter that never grows unchanged. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failing_alloc.h"
#include "nidus/window.h"
#include "cuckoo_filter.h"
#include "params.h"
#include "window_filter.h"

/* Offsets in a grown encoding: the prefix (20 bytes), the first table's meta (81), then the growth fields. */
enum { EXPANSION_AT = 20 + 81, MAX_MEMORY_AT = EXPANSION_AT + 4, NGROWN_AT = MAX_MEMORY_AT + 8,
       GROWN_AT = NGROWN_AT + 1 };
enum { LEVEL_AT = GROWN_AT, CAPACITY_AT = GROWN_AT + 1, BUCKETS_AT = GROWN_AT + 9, F_AT = GROWN_AT + 17,
       WRITTEN_AT = GROWN_AT + 18, TICK_AT = GROWN_AT + 27, GROWN_META = 63 };

static nidus_window *make_bounded(uint64_t capacity, uint64_t window, unsigned expansion, uint64_t max_memory)
{
    nidus_window_params p = {.capacity = capacity, .window = window, .fingerprint_bits = 20, .bucket_size = 4,
                             .expansion = expansion, .max_memory = max_memory};
    nidus_window *w = NULL;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_OK);
    return w;
}

static nidus_window *make_growing(uint64_t capacity, uint64_t window, unsigned expansion)
{
    return make_bounded(capacity, window, expansion, 0);
}

static void key_of(uint64_t n, char *buf) { snprintf(buf, 24, "k%llu", (unsigned long long)n); }

static unsigned tables(const nidus_window *w)
{
    nidus_window_stats s;
    nidus_window_get_stats(w, 0, &s);
    return s.tables;
}

/* Adds keys [from, to) at `now`, every add succeeding. */
static void add_keys(nidus_window *w, uint64_t from, uint64_t to, uint64_t now)
{
    char k[24];
    for (uint64_t i = from; i < to; i++) {
        key_of(i, k);
        assert_int_equal(nidus_window_add(w, k, strlen(k), now), NIDUS_OK);
    }
}

static void assert_present(const nidus_window *w, uint64_t from, uint64_t to, uint64_t now)
{
    char k[24];
    for (uint64_t i = from; i < to; i++) {
        key_of(i, k);
        if (!nidus_window_contains(w, k, strlen(k), now) || !nidus_window_count(w, k, strlen(k), now))
            fail_msg("key %llu absent at %llu", (unsigned long long)i, (unsigned long long)now);
    }
}

static uint64_t present_count(const nidus_window *w, uint64_t from, uint64_t to, uint64_t now)
{
    char k[24];
    uint64_t n = 0;
    for (uint64_t i = from; i < to; i++) {
        key_of(i, k);
        n += nidus_window_contains(w, k, strlen(k), now);
    }
    return n;
}

static uint8_t *encode(const nidus_window *w, size_t *n)
{
    *n = (size_t)nidus_window_encoded_size(w);
    uint8_t *buf = malloc(*n);
    assert_non_null(buf);
    assert_int_equal(nidus_window_encode(w, buf, *n, NULL), NIDUS_OK);
    return buf;
}

/* Two filters encode to the same bytes. */
static void assert_same_encoding(const nidus_window *x, const nidus_window *y)
{
    size_t n, m;
    uint8_t *a = encode(x, &n), *b = encode(y, &m);
    assert_int_equal(n, m);
    assert_memory_equal(a, b, n);
    free(a);
    free(b);
}

/* The encoding decodes and re-encodes to the same bytes. */
static void assert_round_trip(const nidus_window *w)
{
    size_t n;
    uint8_t *a = encode(w, &n);
    nidus_window *c = NULL;
    assert_int_equal(nidus_window_decode(a, n, NULL, &c), NIDUS_OK);
    assert_same_encoding(w, c);
    free(a);
    nidus_window_free(c);
}

/* A stream past one table's room within a window grows; every key answers through [t, t + W], and from t + 6g on
 * as an absent key does; the error bound stays within twice the first table's. Expansion 0: NIDUS_ERR_FULL. */
static void test_growth(void **state)
{
    (void)state;
    uint64_t W = 1000; /* g = 200 */
    nidus_window *w = make_growing(100, W, 2), *fixed = make_growing(100, W, 0);
    add_keys(w, 0, 1000, 50);
    assert_int_equal(tables(w), 4); /* 120 + 240 + 480 + 960 entries of room */
    assert_present(w, 0, 1000, 50);
    assert_present(w, 0, 1000, 50 + W);
    assert_true(present_count(w, 0, 1000, 1200) <= 2); /* epoch 0 + 6: expired, collisions only */
    nidus_window_stats s;
    nidus_window_get_stats(w, 50, &s);
    assert_int_equal(s.live, 1000);
    assert_int_equal(s.expansion, 2);
    assert_int_equal(s.total_capacity, 100 + 200 + 400 + 800);
    assert_true(s.error_bound <= 2 * nidus_cuckoo_error_bound(4, 20) * 1.0001);
    assert_true(s.total_slots > s.slots);
    assert_round_trip(w);

    char k[24];
    nidus_status st = NIDUS_OK;
    uint64_t i = 0;
    for (; st == NIDUS_OK; i++) {
        key_of(i, k);
        st = nidus_window_add(fixed, k, strlen(k), 50);
    }
    assert_int_equal(st, NIDUS_ERR_FULL);
    assert_true(i > 100 && i < 200);
    assert_int_equal(tables(fixed), 1);
    size_t n;
    uint8_t *e = encode(fixed, &n);
    assert_int_equal(e[5], NIDUS_FORMAT_VERSION); /* a filter that never grows: the encoding it always had */
    free(e);
    nidus_window_free(fixed);
    nidus_window_free(w);
}

/* Counts sum every table's live copies; a remove takes the oldest live copy whichever table holds it; a renewal
 * moves a copy's age in its own table. */
static void test_copies_across_tables(void **state)
{
    (void)state;
    uint64_t W = 1000; /* g = 200 */
    nidus_window *w = make_growing(100, W, 1);
    assert_int_equal(nidus_window_add(w, "a", 1, 0), NIDUS_OK); /* in the first table, epoch 0 */
    add_keys(w, 0, 200, 10); /* the first table full: a second */
    assert_int_equal(tables(w), 2);
    assert_int_equal(nidus_window_add(w, "a", 1, 500), NIDUS_OK); /* the first table at its size: the second */
    assert_int_equal(nidus_window_count(w, "a", 1, 600), 2);
    assert_int_equal(nidus_window_remove(w, "a", 1, 600), NIDUS_OK); /* the copy of epoch 0 */
    assert_int_equal(nidus_window_count(w, "a", 1, 600), 1);
    assert_int_equal(nidus_window_count(w, "a", 1, 1300), 1); /* epoch 0's would have expired: 500's lives */
    assert_true(nidus_window_contains(w, "a", 1, 1500));
    assert_false(nidus_window_contains(w, "a", 1, 1600)); /* epoch 2 + 6 */
    assert_round_trip(w);

    bool added = false;
    assert_int_equal(nidus_window_add_unique(w, "u", 1, 700, &added), NIDUS_OK);
    assert_true(added);
    assert_int_equal(nidus_window_add_unique(w, "u", 1, 1100, &added), NIDUS_OK);
    assert_false(added); /* renewed to epoch 5 */
    assert_int_equal(nidus_window_count(w, "u", 1, 1100), 1);
    assert_true(nidus_window_contains(w, "u", 1, 2100));
    assert_false(nidus_window_contains(w, "u", 1, 2200));
    nidus_window_free(w);
}

/* A burst grows the filter; a stream well under capacity afterwards goes back to the first table (it holds fewer
 * live items than it is sized for once the burst's have expired), so the grown tables drain and are released:
 * at the first write at which one holds no live item. No key of the stream is ever missed. */
static void test_grown_tables_are_released(void **state)
{
    (void)state;
    uint64_t W = 1000, g = 200;
    nidus_window *w = make_growing(100, W, 2);
    add_keys(w, 0, 500, 0); /* the burst, epoch 0 */
    assert_true(tables(w) >= 3);
    uint64_t key = 1000000, released_at = 0;
    for (uint64_t now = 20; now <= 5 * W; now += 20) { /* 50 keys a window: half the capacity */
        add_keys(w, key, key + 1, now);
        key++;
        uint64_t from = key > 50 + 1000000 ? key - 50 : 1000000;
        assert_present(w, from, key, now); /* every key of the last window */
        if (!released_at && tables(w) == 1)
            released_at = now;
    }
    assert_int_equal(tables(w), 1);
    /* the burst's items expire at epoch 6; stream items that went to grown tables before then, at epoch 12 */
    assert_true(released_at > 0 && released_at <= 12 * g + 20);
    printf("grown tables released at %llu (W %llu)\n", (unsigned long long)released_at, (unsigned long long)W);

    /* a silence past every item: the next write releases every grown table at once */
    add_keys(w, 0, 500, 10 * W);
    assert_true(tables(w) >= 3);
    assert_int_equal(nidus_window_add(w, "z", 1, 20 * W), NIDUS_OK);
    assert_int_equal(tables(w), 1);
    /* removes: a grown table emptied by removes goes at once */
    add_keys(w, 0, 200, 30 * W);
    assert_int_equal(tables(w), 2);
    char k[24];
    for (uint64_t i = 0; i < 200; i++) {
        key_of(i, k);
        assert_int_equal(nidus_window_remove(w, k, strlen(k), 30 * W), NIDUS_OK);
    }
    assert_int_equal(tables(w), 1);
    /* advance steps release them too */
    add_keys(w, 0, 200, 40 * W);
    assert_int_equal(tables(w), 2);
    bool done = false;
    assert_int_equal(nidus_window_advance(w, 40 * W + 7 * g, 1000000, &done), NIDUS_OK);
    assert_true(done);
    assert_int_equal(tables(w), 1);
    nidus_window_free(w);
}

/* The limits: NIDUS_WINDOW_MAX_TABLES tables, no more fingerprint bits than 29, the address space. */
static void test_limits(void **state)
{
    (void)state;
    nidus_window_params p = {.capacity = 20, .window = 1000, .fingerprint_bits = 12, .bucket_size = 4,
                             .expansion = 1};
    nidus_window *w = NULL;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_OK);
    char k[24];
    nidus_status st = NIDUS_OK;
    for (uint64_t i = 0; st == NIDUS_OK; i++) {
        key_of(i, k);
        st = nidus_window_add(w, k, strlen(k), 0);
    }
    assert_int_equal(st, NIDUS_ERR_LIMIT_TABLES);
    assert_int_equal(tables(w), NIDUS_WINDOW_MAX_TABLES);
    assert_round_trip(w);
    nidus_window_free(w);

    p = (nidus_window_params){.capacity = 20, .window = 1000, .fingerprint_bits = 29, .bucket_size = 4,
                              .expansion = 2};
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_OK);
    st = NIDUS_OK;
    for (uint64_t i = 0; st == NIDUS_OK; i++) {
        key_of(i, k);
        st = nidus_window_add(w, k, strlen(k), 0);
    }
    assert_int_equal(st, NIDUS_ERR_LIMIT_TABLES); /* a second table would need 30 bits */
    assert_int_equal(tables(w), 1);
    nidus_window_free(w);

    p = (nidus_window_params){.capacity = UINT64_C(1) << 40, .window = 1000, .expansion = NIDUS_WINDOW_MAX_EXPANSION};
    nidus_window_base base = {.capacity = p.capacity, .window = 1000, .buckets = 1u << 20, .bucket_size = 4,
                              .f = 10, .max_kicks = 500, .expansion = NIDUS_WINDOW_MAX_EXPANSION};
    uint64_t cap;
    nidus_table_shape shape;
    assert_int_equal(nidus_window_level_shape(&base, 2, &cap, &shape), NIDUS_ERR_TOO_LARGE);
    p.expansion = NIDUS_WINDOW_MAX_EXPANSION + 1;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_INVALID_ARGUMENT);
}

/* max_memory bounds growth: an add whose new table would take the tables' slots and maps past it fails with
 * NIDUS_ERR_LIMIT_MEMORY before anything is allocated, and every live key still answers; the bound travels with
 * the filter (encoding 11, chunks), a chunk load under a smaller max_bytes lowers it, and a filter that never
 * grows keeps none (its encoding is version 7's, unchanged). Creation past it: NIDUS_ERR_LIMIT_MEMORY. */
static void test_memory_bound(void **state)
{
    (void)state;
    nidus_window *probe = make_growing(100, 1000, 2);
    add_keys(probe, 0, 1000, 50);
    assert_int_equal(tables(probe), 4);
    /* room for the first three tables (structs, slots, some maps), not the fourth's slots */
    uint64_t three = 2 * sizeof(nidus_window *);
    for (unsigned k = 0; k < 3; k++)
        three += sizeof(nidus_window) + nidus_cuckoo_table_cost(&nidus_window_table_at(probe, k)->table.shape);
    uint64_t fourth = nidus_cuckoo_table_cost(&nidus_window_table_at(probe, 3)->table.shape);
    uint64_t bound = three + fourth / 2; /* the maps take a few hundred bytes */
    nidus_window_free(probe);

    failing fa = {0};
    nidus_allocator hook = {f_malloc, f_calloc, f_realloc, f_free, &fa};
    nidus_window_params p = {.capacity = 100, .window = 1000, .fingerprint_bits = 20, .bucket_size = 4,
                             .expansion = 2, .max_memory = bound, .allocator = &hook};
    nidus_window *w = NULL;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_OK);
    char k[24];
    nidus_status st = NIDUS_OK;
    uint64_t added = 0;
    for (; added < 1000 && (st = (key_of(added, k), nidus_window_add(w, k, strlen(k), 50))) == NIDUS_OK; added++)
        ;
    assert_int_equal(st, NIDUS_ERR_LIMIT_MEMORY);
    assert_int_equal(tables(w), 3);
    assert_true(added > 120 + 240 && added < 1000);
    assert_true(nidus_window_held(w) <= bound);
    nidus_window_stats s, t;
    nidus_window_get_stats(w, 50, &s);
    assert_int_equal(s.max_memory, bound);
    long live = fa.live;
    for (unsigned i = 0; i < 20; i++) { /* refused again and again: nothing allocated, nothing lost */
        key_of(5000 + i, k);
        assert_int_equal(nidus_window_add(w, k, strlen(k), 60), NIDUS_ERR_LIMIT_MEMORY);
        bool fresh = true;
        assert_int_equal(nidus_window_add_unique(w, k, strlen(k), 60, &fresh), NIDUS_ERR_LIMIT_MEMORY);
    }
    assert_int_equal(fa.live, live);
    nidus_window_get_stats(w, 60, &t);
    assert_int_equal(t.memory_bytes, s.memory_bytes);
    assert_int_equal(t.live, added);
    assert_present(w, 0, added, 60);
    assert_present(w, 0, added, 50 + 1000);
    /* the bound is in the encoding, and round trips */
    size_t n;
    uint8_t *e = encode(w, &n);
    uint64_t stored = 0;
    for (unsigned i = 0; i < 8; i++)
        stored |= (uint64_t)e[MAX_MEMORY_AT + i] << (8 * i);
    assert_int_equal(stored, bound);
    assert_round_trip(w);
    nidus_window *d = NULL;
    assert_int_equal(nidus_window_decode(e, n, NULL, &d), NIDUS_OK);
    key_of(6000, k);
    assert_int_equal(nidus_window_add(d, k, strlen(k), 60), NIDUS_ERR_LIMIT_MEMORY); /* the decoded one too */
    nidus_window_free(d);
    /* expired, the grown tables go and the room comes back */
    add_keys(w, 10000, 10050, 5000);
    assert_int_equal(tables(w), 1);
    free(e);
    nidus_window_free(w);

    /* chunks under a smaller max_bytes: refused when the slots pass it, else loaded with the bound lowered */
    w = make_bounded(100, 1000, 2, 0);
    add_keys(w, 0, 300, 50);
    assert_int_equal(tables(w), 2);
    uint64_t slots = 0; /* the measure: the tables' slots */
    for (unsigned t = 0; t < 2; t++)
        slots += nidus_cuckoo_table_cost(&nidus_window_table_at(w, t)->table.shape);
    size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD, len;
    uint8_t *chunk = malloc(cap);
    assert_non_null(chunk);
    uint64_t next;
    assert_int_equal(nidus_window_dump_chunk(w, 0, chunk, cap, &len, &next), NIDUS_OK);
    nidus_window *l = NULL;
    assert_int_equal(nidus_window_load_chunk(&l, chunk, len, slots - 1, NULL), NIDUS_ERR_LIMIT_MEMORY);
    assert_null(l);
    assert_int_equal(nidus_window_load_chunk(&l, chunk, len, slots + 100, NULL), NIDUS_OK);
    for (uint64_t c = next; c; c = next) {
        assert_int_equal(nidus_window_dump_chunk(w, c, chunk, cap, &len, &next), NIDUS_OK);
        if (len)
            assert_int_equal(nidus_window_load_chunk(&l, chunk, len, 0, NULL), NIDUS_OK);
    }
    assert_false(nidus_window_loading(l));
    nidus_window_get_stats(l, 50, &s);
    assert_int_equal(s.max_memory, slots + 100);
    assert_present(l, 0, 300, 50);
    st = NIDUS_OK;
    for (uint64_t i = 300; i < 2000 && st == NIDUS_OK; i++) {
        key_of(i, k);
        st = nidus_window_add(l, k, strlen(k), 50);
    }
    assert_int_equal(st, NIDUS_ERR_LIMIT_MEMORY);
    assert_int_equal(tables(l), 2); /* no room for a third table's slots */
    /* a bound set afterwards: never below the tables' slots (it must load again); then it bounds growth */
    assert_int_equal(nidus_window_set_max_memory(l, slots - 1), NIDUS_ERR_INVALID_ARGUMENT);
    nidus_window_get_stats(l, 50, &s);
    assert_int_equal(s.max_memory, slots + 100);
    assert_int_equal(nidus_window_set_max_memory(l, 0), NIDUS_OK);
    assert_int_equal(nidus_window_add(l, k, strlen(k), 50), NIDUS_OK); /* unbounded: it grows */
    assert_int_equal(tables(l), 3);
    assert_int_equal(nidus_window_set_max_memory(l, nidus_window_held(l)), NIDUS_OK);
    assert_round_trip(l);
    free(chunk);
    nidus_window_free(l);
    nidus_window_free(w);

    /* creation past the bound; a filter that never grows keeps no bound and encodes as before */
    p = (nidus_window_params){.capacity = 100000, .window = 1000, .expansion = 2, .max_memory = 4096};
    w = NULL;
    assert_int_equal(nidus_window_new(&p, &w), NIDUS_ERR_LIMIT_MEMORY);
    assert_null(w);
    w = make_bounded(100, 1000, 0, 1u << 20);
    nidus_window_get_stats(w, 0, &s);
    assert_int_equal(s.max_memory, 0);
    assert_int_equal(nidus_window_set_max_memory(w, 1u << 20), NIDUS_OK); /* kept by none that never grows */
    nidus_window_get_stats(w, 0, &s);
    assert_int_equal(s.max_memory, 0);
    e = encode(w, &n);
    assert_int_equal(e[5], NIDUS_FORMAT_VERSION);
    nidus_window *plain = make_growing(100, 1000, 0);
    assert_same_encoding(w, plain);
    free(e);
    nidus_window_free(plain);
    nidus_window_free(w);
}

/* Merging src into dst fails with `expect`, and dst encodes to the same bytes as before. */
static void assert_merge_refused(nidus_window *dst, const nidus_window *src, nidus_status expect)
{
    size_t n, m;
    uint8_t *before = encode(dst, &n);
    assert_int_equal(nidus_window_merge(dst, src), expect);
    uint8_t *after = encode(dst, &m);
    assert_int_equal(n, m);
    assert_memory_equal(before, after, n);
    free(before);
    free(after);
}

/* A merge that would need a new table past dst's max_memory fails with NIDUS_ERR_LIMIT_MEMORY and leaves dst
 * as it was; under a bound that has room, it succeeds. */
static void test_merge_bound(void **state)
{
    (void)state;
    nidus_window *src = make_growing(100, 1000, 2);
    add_keys(src, 0, 400, 50); /* two tables: a level-1 one */
    assert_int_equal(tables(src), 2);
    nidus_window *probe = make_growing(100, 1000, 2);
    uint64_t first = nidus_window_held(probe);
    nidus_window_free(probe);
    nidus_window *dst = make_bounded(100, 1000, 2, first + 64);
    add_keys(dst, 100000, 100010, 40);
    assert_merge_refused(dst, src, NIDUS_ERR_LIMIT_MEMORY);
    assert_present(dst, 100000, 100010, 60);
    nidus_window *roomy = make_bounded(100, 1000, 2, 1u << 20);
    add_keys(roomy, 100000, 100010, 40);
    assert_int_equal(nidus_window_merge(roomy, src), NIDUS_OK);
    assert_present(roomy, 0, 400, 60);
    assert_true(nidus_window_held(roomy) <= 1u << 20);
    assert_round_trip(roomy);
    nidus_window_free(roomy);
    nidus_window_free(dst);
    nidus_window_free(src);
}

/* Rewrites the checksum of a forged encoding. */
static void reseal(uint8_t *buf, size_t n)
{
    uint64_t sum = nidus_codec_checksum(buf, n - 8, NULL, 0);
    for (unsigned i = 0; i < 8; i++)
        buf[n - 8 + i] = (uint8_t)(sum >> (8 * i));
}

static nidus_status decode_forged(const uint8_t *orig, size_t n, size_t at, uint8_t value)
{
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    memcpy(buf, orig, n);
    buf[at] = value;
    reseal(buf, n);
    nidus_window *w = NULL;
    nidus_status st = nidus_window_decode(buf, n, NULL, &w);
    if (st == NIDUS_OK)
        nidus_window_free(w);
    else
        assert_null(w);
    free(buf);
    return st;
}

static void test_grown_encoding_is_checked(void **state)
{
    (void)state;
    nidus_window *w = make_growing(100, 1000, 2);
    add_keys(w, 0, 800, 50);
    for (unsigned i = 0; i < 30; i++)
        assert_int_equal(nidus_window_add(w, "dup", 3, 60), NIDUS_OK);
    assert_int_equal(tables(w), 3);
    size_t n;
    uint8_t *e = encode(w, &n);
    assert_int_equal(e[5], NIDUS_FORMAT_VERSION_WINDOW_GROWN);
    assert_int_equal(e[NGROWN_AT], 2);
    assert_int_equal(e[LEVEL_AT], 1);
    assert_int_equal(e[LEVEL_AT + GROWN_META], 2);
    assert_round_trip(w);
    assert_int_equal(decode_forged(e, n, 5, NIDUS_FORMAT_VERSION_WINDOW_GROWN), NIDUS_OK); /* the reseal itself */

    /* each field against what a filter could have written */
    assert_int_equal(decode_forged(e, n, 5, NIDUS_FORMAT_VERSION_SIBLINGS), NIDUS_ERR_VERSION);
    assert_int_equal(decode_forged(e, n, 5, NIDUS_FORMAT_VERSION), NIDUS_ERR_CORRUPT); /* meta too long for 7 */
    assert_int_equal(decode_forged(e, n, 5, 13), NIDUS_ERR_VERSION);
    assert_int_equal(decode_forged(e, n, EXPANSION_AT, 0), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, EXPANSION_AT, 3), NIDUS_ERR_CORRUPT); /* the tables' sizes then differ */
    assert_int_equal(decode_forged(e, n, EXPANSION_AT + 2, 1), NIDUS_ERR_CORRUPT); /* 65,538 */
    assert_int_equal(decode_forged(e, n, MAX_MEMORY_AT, 1), NIDUS_ERR_CORRUPT); /* a bound below its tables */
    assert_int_equal(decode_forged(e, n, MAX_MEMORY_AT + 7, 1), NIDUS_OK);      /* 2^56: above them */
    assert_int_equal(decode_forged(e, n, NGROWN_AT, 1), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, NGROWN_AT, 3), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, NGROWN_AT, 40), NIDUS_ERR_CORRUPT); /* past the limit of tables */
    assert_int_equal(decode_forged(e, n, NGROWN_AT, 255), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, LEVEL_AT, 3), NIDUS_ERR_CORRUPT);       /* levels out of order */
    assert_int_equal(decode_forged(e, n, LEVEL_AT + GROWN_META, 1), NIDUS_ERR_CORRUPT); /* a sibling's shape */
    assert_int_equal(decode_forged(e, n, LEVEL_AT, 0), NIDUS_ERR_CORRUPT);       /* level 0's shape differs */
    assert_int_equal(decode_forged(e, n, CAPACITY_AT, e[CAPACITY_AT] + 1), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, CAPACITY_AT + 7, 0x80), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, BUCKETS_AT, e[BUCKETS_AT] + 2), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, BUCKETS_AT + 6, 0x40), NIDUS_ERR_CORRUPT); /* before any allocation */
    assert_int_equal(decode_forged(e, n, F_AT, e[F_AT] + 1), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, F_AT, 40), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, WRITTEN_AT, 0), NIDUS_ERR_CORRUPT);
    assert_int_equal(decode_forged(e, n, TICK_AT, e[TICK_AT] + 1), NIDUS_ERR_CORRUPT); /* clocks move together */

    /* a filter that may grow but has not: its first table's capacity 2^24 above what its buckets were made for
     * (growth would multiply it) */
    nidus_window *one = make_growing(100, 1000, 2);
    add_keys(one, 0, 10, 50);
    size_t on;
    uint8_t *oe = encode(one, &on);
    assert_int_equal(oe[NGROWN_AT], 0);
    assert_int_equal(decode_forged(oe, on, 5, oe[5]), NIDUS_OK); /* the reseal itself */
    assert_int_equal(decode_forged(oe, on, 20 + 3, (uint8_t)(oe[20 + 3] + 1)), NIDUS_ERR_CORRUPT);
    free(oe);
    nidus_window_free(one);

    /* truncated anywhere, single bits flipped anywhere: refused */
    uint64_t seed = test_seed();
    srand((unsigned)seed);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    for (unsigned trial = 0; trial < 2000; trial++) {
        memcpy(b, e, n);
        size_t at = (size_t)rand() % n;
        b[at] ^= (uint8_t)(1u << (rand() % 8));
        nidus_window *d = NULL;
        if (nidus_window_decode(b, n, NULL, &d) == NIDUS_OK)
            fail_msg("seed %llu: a flipped bit at %zu decoded", (unsigned long long)seed, at);
        size_t cut = (size_t)rand() % n;
        assert_int_not_equal(nidus_window_decode(e, cut, NULL, &d), NIDUS_OK);
        assert_null(d);
    }
    free(b);
    free(e);
    nidus_window_free(w);
}

static uint64_t get_u64_at(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The encoding with its last overflow entry's count (the 8 bytes before the checksum) set to `count`. */
static nidus_status decode_with_last_count(const uint8_t *orig, size_t n, uint64_t count, nidus_window **out)
{
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    memcpy(buf, orig, n);
    for (unsigned i = 0; i < 8; i++)
        buf[n - 16 + i] = (uint8_t)(count >> (8 * i));
    reseal(buf, n);
    *out = NULL;
    nidus_status st = nidus_window_decode(buf, n, NULL, out);
    free(buf);
    return st;
}

static uint64_t entries_of(const nidus_window *w)
{
    nidus_window_stats s;
    nidus_window_get_stats(w, 0, &s);
    return s.entries;
}

/* A filter holds at most 2^63 - 1 entries in all its tables, duplicates counted: a decoder refuses more, though
 * each table's count fits (their sum could wrap), and a merge that would pass it fails with NIDUS_ERR_TOO_LARGE,
 * leaving dst as it was. At the bound the filter saves and loads, and its stats and counts add up. */
static void test_entries_bound(void **state)
{
    (void)state;
    const uint64_t max = UINT64_MAX / 2;
    nidus_window *w = make_growing(100, 1000, 2);
    for (unsigned i = 0; i < 30; i++) /* 4 copies in the pair's slots, 26 in the overflow map */
        assert_int_equal(nidus_window_add(w, "dup", 3, 60), NIDUS_OK);
    add_keys(w, 0, 400, 60); /* a second table, which takes the next duplicates */
    assert_int_equal(tables(w), 2);
    for (unsigned i = 0; i < 30; i++)
        assert_int_equal(nidus_window_add(w, "twin", 4, 60), NIDUS_OK);
    assert_int_equal(tables(w), 2);
    size_t n;
    uint8_t *e = encode(w, &n);
    assert_int_equal(get_u64_at(e + n - 16), 26); /* the second table's map: "twin" alone */
    uint64_t others = entries_of(w) - 26;

    nidus_window *d = NULL;
    assert_int_equal(decode_with_last_count(e, n, max - others, &d), NIDUS_OK); /* 2^63 - 1 in all */
    assert_int_equal(entries_of(d), max);
    assert_int_equal(nidus_window_count(d, "twin", 4, 60), max - others + 4);
    assert_round_trip(d);
    nidus_window_free(d);
    assert_int_equal(decode_with_last_count(e, n, max - others + 1, &d), NIDUS_ERR_CORRUPT);
    assert_null(d);
    /* each table's count fits in 64 bits, the sum does not: it once wrapped to a small number */
    assert_int_equal(decode_with_last_count(e, n, UINT64_MAX - 30, &d), NIDUS_ERR_CORRUPT);
    assert_null(d);

    /* merges: half the bound twice fits, a third time does not */
    nidus_window *half = NULL;
    assert_int_equal(decode_with_last_count(e, n, max / 2 - others, &half), NIDUS_OK);
    nidus_window *dst = make_growing(100, 1000, 2);
    assert_int_equal(nidus_window_merge(dst, half), NIDUS_OK);
    assert_int_equal(nidus_window_merge(dst, half), NIDUS_OK);
    uint64_t held = entries_of(dst);
    assert_true(held <= max && held > max - 2 * others);
    assert_merge_refused(dst, half, NIDUS_ERR_TOO_LARGE);
    assert_round_trip(dst);
    nidus_window_stats s;
    nidus_window_get_stats(dst, 60, &s);
    assert_int_equal(s.live, s.entries);
    nidus_window_free(dst);
    nidus_window_free(half);
    free(e);
    nidus_window_free(w);
}

/* Chunks of a grown filter one at a time: half-loaded it answers nothing and refuses writes; loaded, it is the
 * same filter. A header whose tables pass max_bytes is refused before anything is allocated for them. */
static void test_grown_chunks(void **state)
{
    (void)state;
    nidus_window *w = make_growing(500000, 60000, 2); /* tables of 1.8 and 3.9 MB: chunks across both */
    add_keys(w, 0, 1500000, 1000);
    assert_int_equal(tables(w), 2);
    size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD;
    uint8_t *chunk = malloc(cap);
    assert_non_null(chunk);
    nidus_window *l = NULL;
    uint64_t cursor = 0, next = 0;
    unsigned chunks = 0;
    do {
        size_t len;
        assert_int_equal(nidus_window_dump_chunk(w, cursor, chunk, cap, &len, &next), NIDUS_OK);
        if (!len)
            break;
        if (cursor == 0)
            assert_int_equal(nidus_window_load_chunk(&l, chunk, len, 1000, NULL), NIDUS_ERR_LIMIT_MEMORY);
        if (l) {
            assert_true(nidus_window_loading(l));
            assert_false(nidus_window_contains(l, "k1", 2, 1000));
            assert_int_equal(nidus_window_count(l, "k1", 2, 1000), 0);
            assert_int_equal(nidus_window_add(l, "x", 1, 1000), NIDUS_ERR_READ_ONLY);
        }
        assert_int_equal(nidus_window_load_chunk(&l, chunk, len, 0, NULL), NIDUS_OK);
        chunks++;
        cursor = next;
    } while (next);
    assert_true(chunks >= 3);
    assert_false(nidus_window_loading(l));
    assert_same_encoding(w, l);
    assert_present(l, 0, 1500000, 1000 + 60000);
    free(chunk);
    nidus_window_free(l);
    nidus_window_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_copies_across_tables),
        cmocka_unit_test(test_grown_tables_are_released),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_merge_bound),
        cmocka_unit_test(test_grown_encoding_is_checked),
        cmocka_unit_test(test_grown_chunks),
        cmocka_unit_test(test_entries_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

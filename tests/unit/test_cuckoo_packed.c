/* SPDX-License-Identifier: BSD-3-Clause */
/* Small cuckoo filters kept packed (issue 14.3): one allocation, the same answers as the full form, every
 * state saved and loaded, the handle moving to a full filter and back as its contents require. White box: the
 * form of a handle is read from cuckoo_packed.h. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "cuckoo_packed.h"
#include <nidus/nidus.h>

/* An allocator that counts live blocks and can be told to fail. */
typedef struct counting {
    long live;
    long fail_after; /* -1: never; else the number of allocations still allowed */
} counting;

static bool allow(counting *c)
{
    if (c->fail_after == 0)
        return false;
    if (c->fail_after > 0)
        c->fail_after--;
    c->live++;
    return true;
}
static void *c_malloc(void *ctx, size_t n) { return allow(ctx) ? malloc(n) : NULL; }
static void *c_calloc(void *ctx, size_t n, size_t m) { return allow(ctx) ? calloc(n, m) : NULL; }
static void *c_realloc(void *ctx, void *p, size_t n)
{
    counting *c = ctx;
    if (c->fail_after == 0)
        return NULL;
    if (!p)
        c->live++;
    return realloc(p, n);
}
static void c_free(void *ctx, void *p)
{
    if (p)
        ((counting *)ctx)->live--;
    free(p);
}

static counting g_count = {0, -1};
static const nidus_allocator g_hook = {c_malloc, c_calloc, c_realloc, c_free, &g_count};

static nidus_cuckoo *make(uint64_t capacity, unsigned b, unsigned expansion)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .error_rate = 0.01, .max_kicks = 20,
                             .expansion = expansion, .seed = test_seed(), .allocator = &g_hook};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

static uint64_t hash_of(const nidus_cuckoo *cf, uint64_t i)
{
    char buf[48];
    size_t n = test_key(buf, sizeof buf, "packed", i);
    return nidus_cuckoo_hash(cf, buf, n);
}

/* The encoding of any handle (packed ones encode as their full form). */
static uint8_t *encode(const nidus_cuckoo *cf, size_t *n)
{
    size_t cap = (size_t)nidus_cuckoo_encoded_size(cf);
    uint8_t *buf = malloc(cap);
    assert_non_null(buf);
    assert_int_equal(nidus_cuckoo_encode(cf, buf, cap, n), NIDUS_OK);
    return buf;
}

/* Two handles hold the same filter: their encodings are equal byte for byte. */
static void assert_same_encoding(const nidus_cuckoo *a, const nidus_cuckoo *b)
{
    size_t n1, n2;
    uint8_t *e1 = encode(a, &n1), *e2 = encode(b, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(e1, e2, n1);
    free(e1);
    free(e2);
}

/* A small reservation is one allocation: its stats count the header and the slots, nothing else. */
static void test_small_filter_is_one_allocation(void **state)
{
    (void)state;
    unsigned sizes[] = {1, 2, 4, 8};
    for (size_t s = 0; s < 4; s++) {
        long live = g_count.live;
        nidus_cuckoo *cf = make(100, sizes[s], 0);
        assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
        assert_int_equal(g_count.live - live, 1);
        nidus_cuckoo_stats st;
        nidus_cuckoo_get_stats(cf, &st);
        nidus_cuckoo_table_stats ts;
        assert_int_equal(nidus_cuckoo_get_table_stats(cf, 0, &ts), NIDUS_OK);
        /* the table's figure is its full form's (slots + 16 slack bytes: what max_memory measures) */
        assert_int_equal(st.memory_bytes, sizeof(nidus_cuckoo_packed) + ts.memory_bytes - NIDUS_BITS_SLACK);
        nidus_cuckoo_free(cf);
        assert_int_equal(g_count.live, live);
    }
    /* past NIDUS_CUCKOO_PACKED_MAX_BYTES of slots, the full form */
    nidus_cuckoo *big = make(100000, 4, 0);
    assert_int_equal(nidus_cuckoo_form(big), NIDUS_FORM_FULL);
    nidus_cuckoo_free(big);
}

/* Packed and full filters given the same adds and removes answer alike and encode to the same bytes. */
static void test_packed_matches_full(void **state)
{
    (void)state;
    for (unsigned b = 1; b <= 8; b *= 2) {
        nidus_cuckoo *packed = make(200, b, 0);
        nidus_cuckoo *handle = make(200, b, 0);
        nidus_cuckoo *full = nidus_cuckoo_unpack(handle); /* called directly: never packed again */
        assert_non_null(full);
        assert_int_equal(nidus_cuckoo_form(handle), NIDUS_FORM_FORWARD);
        assert_int_equal(nidus_cuckoo_form(full), NIDUS_FORM_FULL);
        uint64_t seed = test_seed() ^ b;
        for (int step = 0; step < 3000; step++) {
            uint64_t i = test_splitmix(&seed) % 300, h = hash_of(packed, i);
            nidus_status a, c;
            if (test_splitmix(&seed) % 3) {
                a = nidus_cuckoo_add_hash(packed, h);
                c = nidus_cuckoo_add_hash(full, h);
            } else {
                a = nidus_cuckoo_remove_hash(packed, h);
                c = nidus_cuckoo_remove_hash(full, h);
            }
            assert_int_equal(a, c);
            assert_int_equal(nidus_cuckoo_count_hash(packed, h), nidus_cuckoo_count_hash(full, h));
        }
        for (uint64_t i = 0; i < 400; i++) {
            uint64_t h = hash_of(packed, i);
            assert_int_equal(nidus_cuckoo_contains_hash(packed, h), nidus_cuckoo_contains_hash(full, h));
        }
        assert_same_encoding(packed, full);
        nidus_cuckoo_free(packed);
        nidus_cuckoo_free(handle);
    }
}

/* Duplicates past a key's two buckets need an overflow map: the handle forwards to a full filter, counts
 * stay exact, and once the removes empty the map it is packed again. Save and load at each stage. */
static void test_overflow_forwards_and_returns(void **state)
{
    (void)state;
    long live = g_count.live;
    nidus_cuckoo *cf = make(50, 2, 0);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
    for (int k = 0; k < 10; k++)
        assert_int_equal(nidus_cuckoo_add(cf, "dup", 3), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
    assert_int_equal(nidus_cuckoo_count(cf, "dup", 3), 10);
    size_t n;
    uint8_t *enc = encode(cf, &n);
    nidus_cuckoo *copy = NULL;
    assert_int_equal(nidus_cuckoo_decode(enc, n, &g_hook, &copy), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(copy), NIDUS_FORM_FORWARD); /* the form follows from the contents */
    assert_int_equal(nidus_cuckoo_count(copy, "dup", 3), 10);
    nidus_cuckoo_stats s1, s2;
    nidus_cuckoo_get_stats(cf, &s1);
    nidus_cuckoo_get_stats(copy, &s2);
    assert_int_equal(s1.memory_bytes, s2.memory_bytes);
    nidus_cuckoo_free(copy);
    free(enc);
    for (int k = 0; k < 6; k++)
        assert_int_equal(nidus_cuckoo_remove(cf, "dup", 3), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED); /* 4 copies left: all in the slots */
    assert_int_equal(nidus_cuckoo_count(cf, "dup", 3), 4);
    enc = encode(cf, &n);
    assert_int_equal(nidus_cuckoo_decode(enc, n, &g_hook, &copy), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(copy), NIDUS_FORM_PACKED);
    assert_int_equal(nidus_cuckoo_count(copy, "dup", 3), 4);
    nidus_cuckoo_stats st;
    nidus_cuckoo_get_stats(copy, &st);
    assert_int_equal(st.items_deleted, 6);
    nidus_cuckoo_free(copy);
    free(enc);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_count.live, live);
}

/* Growth forwards to a full filter with two tables; nothing is lost; a clear packs it again. */
static void test_growth_forwards_and_clear_packs(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(20, 2, 2);
    uint64_t n = 0;
    while (n < 500 && nidus_cuckoo_add_hash(cf, hash_of(cf, n)) == NIDUS_OK)
        n++;
    assert_int_equal(n, 500);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_FORWARD);
    nidus_cuckoo_stats st;
    nidus_cuckoo_get_stats(cf, &st);
    assert_true(st.tables > 1);
    for (uint64_t i = 0; i < n; i++)
        assert_true(nidus_cuckoo_contains_hash(cf, hash_of(cf, i)));
    /* a reloaded copy has the same form and the same figures (replicas and DEBUG RELOAD report alike) */
    size_t len;
    uint8_t *enc = encode(cf, &len);
    nidus_cuckoo *copy = NULL;
    assert_int_equal(nidus_cuckoo_decode(enc, len, &g_hook, &copy), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(copy), NIDUS_FORM_FORWARD);
    nidus_cuckoo_stats s2;
    nidus_cuckoo_get_stats(copy, &s2);
    assert_int_equal(st.memory_bytes, s2.memory_bytes);
    for (uint64_t i = 0; i < n; i++)
        assert_true(nidus_cuckoo_contains_hash(copy, hash_of(cf, i)));
    nidus_cuckoo_free(copy);
    free(enc);
    assert_int_equal(nidus_cuckoo_clear(cf), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
    assert_int_equal(nidus_cuckoo_add_hash(cf, hash_of(cf, 7)), NIDUS_OK);
    assert_true(nidus_cuckoo_contains_hash(cf, hash_of(cf, 7)));
    nidus_cuckoo_free(cf);
}

/* A filter that never grows stays packed when full: a failed add changes no byte, even when it needed the
 * full form to search (and that form could not be allocated). */
static void test_failed_add_changes_nothing(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(30, 2, 0);
    uint64_t i = 0;
    size_t n0, n1;
    for (;; i++) {
        uint8_t *before = encode(cf, &n0);
        nidus_status st = nidus_cuckoo_add_hash(cf, hash_of(cf, 1000 + i));
        if (st == NIDUS_OK) {
            free(before);
            continue;
        }
        assert_int_equal(st, NIDUS_ERR_FULL);
        assert_int_equal(nidus_cuckoo_form(cf), NIDUS_FORM_PACKED);
        uint8_t *after = encode(cf, &n1);
        assert_int_equal(n0, n1);
        assert_memory_equal(before, after, n0);
        free(after);
        /* the same add with no memory for the full form: refused, nothing changed */
        g_count.fail_after = 0;
        assert_int_equal(nidus_cuckoo_add_hash(cf, hash_of(cf, 1000 + i)), NIDUS_ERR_NO_MEMORY);
        g_count.fail_after = -1;
        after = encode(cf, &n1);
        assert_memory_equal(before, after, n0);
        free(after);
        free(before);
        break;
    }
    assert_true(i >= 30); /* the reservation held */
    for (uint64_t k = 0; k < i; k++)
        assert_true(nidus_cuckoo_contains_hash(cf, hash_of(cf, 1000 + k)));
    nidus_cuckoo_free(cf);
}

/* Chunks: a packed filter dumps as the full one does, and the loader hands back a packed copy at the end. */
static void test_chunks_round_trip(void **state)
{
    (void)state;
    nidus_cuckoo *cf = make(100, 4, 1);
    for (uint64_t i = 0; i < 80; i++)
        assert_int_equal(nidus_cuckoo_add_hash(cf, hash_of(cf, i)), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_remove_hash(cf, hash_of(cf, 3)), NIDUS_OK);
    nidus_cuckoo *copy = NULL;
    uint8_t *chunk = malloc(NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD);
    assert_non_null(chunk);
    uint64_t cursor = 0;
    for (;;) {
        size_t len;
        uint64_t next;
        assert_int_equal(nidus_cuckoo_dump_chunk(cf, cursor, chunk, NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD,
                                                 &len, &next), NIDUS_OK);
        if (len == 0)
            break;
        assert_int_equal(nidus_cuckoo_load_chunk(&copy, chunk, len, 0, &g_hook), NIDUS_OK);
        cursor = next;
    }
    free(chunk);
    assert_false(nidus_cuckoo_loading(copy));
    assert_int_equal(nidus_cuckoo_form(copy), NIDUS_FORM_PACKED);
    assert_same_encoding(cf, copy);
    nidus_cuckoo_free(copy);
    nidus_cuckoo_free(cf);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_filter_is_one_allocation),
        cmocka_unit_test(test_packed_matches_full),
        cmocka_unit_test(test_overflow_forwards_and_returns),
        cmocka_unit_test(test_growth_forwards_and_clear_packs),
        cmocka_unit_test(test_failed_add_changes_nothing),
        cmocka_unit_test(test_chunks_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

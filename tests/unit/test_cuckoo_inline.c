/* SPDX-License-Identifier: BSD-3-Clause */
/* The opt-in inline path (nidus/inline_cuckoo.h), compiled here with NIDUS_INLINE: in every form and state of a
 * filter — the large one-table filters it serves (plain b=4 f=12 and b=2 f=16, plain at a bit offset b=4 f=13 and
 * b=2 f=13, semi-sorted f=13), and the ones it
 * hands to the library (packed, mid-sized, grown, stashed, full, a read-only view, loading, an older format) —
 * its lookups answer as the library's, and its adds leave the filter byte for byte as the library's adds do
 * (the same statuses too, where the table fills and growth or the stash take over), with no false negative. */
#define NIDUS_INLINE 1
#define NIDUS_INLINE_ADDS 1      /* the inline adds too, whatever the target */
#define NIDUS_INLINE_SEMI_ADDS 1 /* semi-sorted ones included */

#include "test_util.h"

#include <stdlib.h>

#include <nidus/nidus.h>

#include "cuckoo_test_util.h"

/* The served states, by the tag the header compares (with the copy's bit set). */
static bool served(const nidus_cuckoo *cf)
{
    uint32_t s = nidus_cuckoo_view_state(nidus_cuckoo_view_of(cf));
    return s == NIDUS_CUCKOO_TAG_PLAIN || s == NIDUS_CUCKOO_TAG_SEMI || s == NIDUS_CUCKOO_TAG_BITS;
}

static uint64_t *keys_of(size_t n, uint64_t seed)
{
    uint64_t *k = malloc(n * sizeof *k);
    assert_non_null(k);
    for (size_t i = 0; i < n; i++)
        k[i] = test_splitmix(&seed);
    return k;
}

/* Inline and library lookups agree on `n` keys (8 bytes, by hash, and every length 0..20 on a sample), and with
 * counts, which read the tables without the view; the first `present` of them must be found. */
static void assert_same_answers(const nidus_cuckoo *cf, const uint64_t *keys, size_t n, size_t present)
{
    for (size_t k = 0; k < n; k++) {
        bool in = nidus_cuckoo_contains(cf, &keys[k], 8);
        if (in != (nidus_cuckoo_contains)(cf, &keys[k], 8))
            fail_msg("key %zu: inline %d, library %d", k, in, !in);
        if (k < present && !in)
            fail_msg("key %zu of %zu present keys missing", k, present);
        if (in != (nidus_cuckoo_count(cf, &keys[k], 8) > 0)) /* counts go through the table code, not the view */
            fail_msg("key %zu: lookup %d, count %d", k, in, !in);
        uint64_t h = nidus_cuckoo_hash(cf, &keys[k], 8) ^ (k & 1 ? 0 : keys[k]); /* half of them any hash */
        assert_int_equal(nidus_cuckoo_contains_hash(cf, h), (nidus_cuckoo_contains_hash)(cf, h));
        if (k % 64 == 0) {
            uint8_t buf[20];
            memcpy(buf, &keys[k], 8);
            memcpy(buf + 8, &keys[(k + 1) % n], 8);
            memcpy(buf + 16, &keys[(k + 2) % n], 4);
            for (size_t len = 0; len <= sizeof buf; len++)
                assert_int_equal(nidus_cuckoo_contains(cf, buf, len), (nidus_cuckoo_contains)(cf, buf, len));
        }
    }
}

static nidus_cuckoo *make(uint64_t capacity, unsigned b, unsigned f, bool semi, unsigned expansion, uint64_t seed)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = b, .fingerprint_bits = f, .semi_sort = semi,
                             .expansion = expansion, .max_kicks = 50, .seed = seed};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

/* Two filters of one configuration, one given keys through the inline path (by key and by hash, alternately),
 * one through the library: the same statuses, then the same bytes and the same answers, past the capacity (with
 * growth: a grown filter; without: a stash, then NIDUS_ERR_FULL). `want_served`: the inline path must have
 * served the empty filter (else the test would compare the library with itself). */
static void check_config(uint64_t capacity, unsigned b, unsigned f, bool semi, unsigned expansion, bool want_served)
{
    uint64_t seed = test_seed();
    size_t n = (size_t)(capacity + capacity / 4), absent = 20000;
    uint64_t *keys = keys_of(n + absent, seed ^ 0x5eed);
    nidus_cuckoo *in = make(capacity, b, f, semi, expansion, seed), *lib = make(capacity, b, f, semi, expansion, seed);
    assert_int_equal(served(in), want_served);
    size_t added = 0, served_adds = 0;
    for (size_t k = 0; k < n; k++) {
        served_adds += served(in);
        nidus_status si, sl;
        if (k % 2) {
            si = nidus_cuckoo_add(in, &keys[k], 8);
            sl = (nidus_cuckoo_add)(lib, &keys[k], 8);
        } else {
            uint64_t h = (nidus_cuckoo_hash)(in, &keys[k], 8);
            si = nidus_cuckoo_add_hash(in, h);
            sl = (nidus_cuckoo_add_hash)(lib, h);
        }
        if (si != sl)
            fail_msg("add %zu: inline %d, library %d", k, (int)si, (int)sl);
        if (si != NIDUS_OK)
            break;
        added = k + 1;
        if (k % 4096 == 0)
            test_assert_same_cuckoo_encoding(in, lib);
    }
    assert_true(!want_served || served_adds > capacity / 2);
    test_assert_same_cuckoo_encoding(in, lib);
    /* every key added is found; keys past `added` are absent ones (or were refused) */
    assert_same_answers(in, keys, n + absent, added);
    /* duplicates: the same key many times goes to the side table through the library, counted exactly */
    for (int c = 0; c < 12; c++) {
        nidus_status si = nidus_cuckoo_add(in, &keys[0], 8), sl = (nidus_cuckoo_add)(lib, &keys[0], 8);
        assert_int_equal(si, sl);
    }
    test_assert_same_cuckoo_encoding(in, lib);
    assert_int_equal(nidus_cuckoo_count(in, &keys[0], 8), nidus_cuckoo_count(lib, &keys[0], 8));
    /* removes through the library, then inline lookups again */
    for (size_t k = 0; k < added; k += 3)
        assert_int_equal(nidus_cuckoo_remove(in, &keys[k], 8), nidus_cuckoo_remove(lib, &keys[k], 8));
    test_assert_same_cuckoo_encoding(in, lib);
    assert_same_answers(in, keys, n + absent, 0);
    nidus_cuckoo_free(in);
    nidus_cuckoo_free(lib);
    free(keys);
}

static void test_served_plain_and_semi_sorted(void **state)
{
    (void)state;
    check_config(300000, 4, 12, false, 0, true); /* fills up: stash, then full */
    check_config(300000, 4, 13, true, 0, true);
    check_config(150000, 2, 16, false, 0, true);
    check_config(300000, 4, 13, false, 0, true); /* buckets of 52 bits, read at a bit offset */
    check_config(150000, 2, 13, false, 0, true);
}

static void test_growth_through_the_inline_adds(void **state)
{
    (void)state;
    check_config(280000, 4, 12, false, 2, true);
    check_config(280000, 4, 13, true, 1, true);
    check_config(280000, 4, 13, false, 2, true);
}

static void test_library_states(void **state)
{
    (void)state;
    check_config(100, 4, 12, false, 0, false);   /* packed */
    check_config(600, 2, 0, false, 4, false);    /* packed, grows into a forward */
    check_config(20000, 4, 12, false, 0, false); /* below 2^16 buckets: offsets reduced, the library's */
    check_config(20000, 4, 13, true, 2, false);
    check_config(20000, 4, 13, false, 0, false); /* at a bit offset, offsets reduced */
    check_config(50000, 4, 10, false, 0, false); /* buckets of 40 bits: a word, but not 12-bit fields */
}

/* A read-only view, a filter still loading and a filter from format version 4 answer through the library; the
 * inline add on the view is refused as the library refuses it. */
static void test_views_loading_and_old_formats(void **state)
{
    (void)state;
    size_t n = 250000, absent = 50000;
    uint64_t *keys = keys_of(n + absent, test_seed());
    nidus_cuckoo *cf = make(n, 4, 12, false, 0, 7);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(nidus_cuckoo_add(cf, &keys[k], 8), NIDUS_OK);
    assert_true(served(cf));
    size_t len;
    uint8_t *enc = test_cuckoo_encode(cf, &len);
    nidus_cuckoo *v = NULL;
    assert_int_equal(nidus_cuckoo_view(enc, len, NULL, &v), NIDUS_OK);
    assert_false(served(v));
    assert_same_answers(v, keys, n + absent, n);
    assert_int_equal(nidus_cuckoo_add(v, &keys[0], 8), NIDUS_ERR_READ_ONLY);
    assert_int_equal(nidus_cuckoo_add_hash(v, 1), NIDUS_ERR_READ_ONLY);
    nidus_cuckoo_free(v);

    nidus_cuckoo *copy = NULL;
    uint8_t *chunk = malloc(NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD);
    assert_non_null(chunk);
    for (uint64_t cursor = 0;;) {
        size_t clen;
        uint64_t next;
        assert_int_equal(nidus_cuckoo_dump_chunk(cf, cursor, chunk, NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD,
                                                 &clen, &next), NIDUS_OK);
        if (clen == 0)
            break;
        if (copy) { /* loading: nothing answers, nothing is added */
            assert_false(served(copy));
            assert_same_answers(copy, keys, 2000, 0);
            assert_false(nidus_cuckoo_contains(copy, &keys[0], 8));
            assert_int_equal(nidus_cuckoo_add(copy, &keys[0], 8), NIDUS_ERR_READ_ONLY);
        }
        assert_int_equal(nidus_cuckoo_load_chunk(&copy, chunk, clen, 0, NULL), NIDUS_OK);
        cursor = next;
    }
    assert_true(served(copy));
    assert_same_answers(copy, keys, n + absent, n);
    nidus_cuckoo_free(copy);
    free(chunk);
    free(enc);
    nidus_cuckoo_free(cf);

    nidus_cuckoo *old = NULL;
    assert_int_equal(nidus_cuckoo_load_file(NIDUS_FIXTURES_DIR "/v4-cuckoo.nidus", NULL, &old), NIDUS_OK);
    assert_false(served(old));
    assert_same_answers(old, keys, n + absent, 0);
    for (size_t k = 0; k < 100; k++) /* adds under the old placement: found afterwards */
        if (nidus_cuckoo_add(old, &keys[k], 8) == NIDUS_OK)
            assert_true((nidus_cuckoo_contains)(old, &keys[k], 8));
    nidus_cuckoo_free(old);
    free(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_served_plain_and_semi_sorted),
        cmocka_unit_test(test_growth_through_the_inline_adds),
        cmocka_unit_test(test_library_states),
        cmocka_unit_test(test_views_loading_and_old_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The dispatch byte (cuckoo_dispatch.h): in every state a filter passes through — new, grown, compacted, cleared,
 * stashed and drained, viewed, loading and loaded, packed and forward, small and large — the byte cached in it
 * (and, in the states the inline path serves, its whole published view) is what its state calls for, and the
 * filter answers for every key it holds. */
#include "test_util.h"

#include <stdlib.h>

#include <nidus/nidus.h>

#include "cuckoo_dispatch.h"

/* The kind a byte names, without the copy (isa_impl.h) the CPU chose. */
static unsigned kind(const nidus_cuckoo *h)
{
    unsigned d = *(const unsigned char *)h;
    return d == NIDUS_DISPATCH_GENERAL_V3 ? NIDUS_DISPATCH_GENERAL : d >= NIDUS_DISPATCH_ONE ? d & ~1u : d;
}

static void assert_state(const nidus_cuckoo *cf, unsigned want, const uint64_t *keys, size_t n)
{
    assert_true(nidus_cuckoo_dispatch_fresh(cf));
    assert_int_equal(kind(cf), want);
    for (size_t k = 0; k < n; k++)
        if (!nidus_cuckoo_contains(cf, &keys[k], sizeof keys[k]))
            fail_msg("key %zu of %zu missing (dispatch %u)", k, n, kind(cf));
}

static nidus_cuckoo *make(uint64_t capacity, unsigned f, bool semi, unsigned expansion)
{
    nidus_cuckoo_params p = {.capacity = capacity, .bucket_size = 4, .fingerprint_bits = f, .semi_sort = semi,
                             .expansion = expansion, .max_kicks = 20, .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    return cf;
}

static uint64_t *keys_of(size_t n)
{
    uint64_t *k = malloc(n * sizeof *k), s = test_seed();
    assert_non_null(k);
    for (size_t i = 0; i < n; i++)
        k[i] = test_splitmix(&s);
    return k;
}

static void test_growth_compaction_and_clear_redispatch(void **state)
{
    (void)state;
    for (int semi = 0; semi < 2; semi++) {
        unsigned fast = semi ? NIDUS_DISPATCH_SEMI : NIDUS_DISPATCH_PLAIN;
        size_t cap = 20000, n = 3 * cap;
        uint64_t *keys = keys_of(n);
        nidus_cuckoo *cf = make(cap, semi ? 13 : 12, semi, 2);
        assert_state(cf, fast, NULL, 0);
        size_t k = 0;
        nidus_cuckoo_stats s;
        do {
            assert_int_equal(nidus_cuckoo_add(cf, &keys[k], 8), NIDUS_OK);
            k++;
            nidus_cuckoo_get_stats(cf, &s);
        } while (s.tables == 1);
        assert_state(cf, NIDUS_DISPATCH_GENERAL, keys, k); /* the first table alone would miss the last key */
        for (; k < n; k++)
            assert_int_equal(nidus_cuckoo_add_hash(cf, nidus_cuckoo_hash(cf, &keys[k], 8)), NIDUS_OK);
        assert_state(cf, NIDUS_DISPATCH_GENERAL, keys, n);
        /* removes past a tenth of the items compact on the way; the newer tables empty out and go */
        for (size_t r = cap / 2; r < n; r++) {
            assert_int_equal(nidus_cuckoo_remove(cf, &keys[r], 8), NIDUS_OK);
            assert_true(nidus_cuckoo_dispatch_fresh(cf));
        }
        assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
        nidus_cuckoo_get_stats(cf, &s);
        assert_int_equal(s.tables, 1);
        assert_true(nidus_cuckoo_dispatch_fresh(cf));
        assert_true(kind(cf) == fast || kind(cf) == NIDUS_DISPATCH_ONE);
        assert_state(cf, kind(cf), keys, cap / 2);
        assert_int_equal(nidus_cuckoo_clear(cf), NIDUS_OK);
        assert_state(cf, fast, NULL, 0);
        nidus_cuckoo_free(cf);
        free(keys);
    }
}

/* A table that never grows, filled until an add fails, holds stash entries: the kernels that skip the overflow map
 * must not serve it. Removing every key drains the stash and brings the kernel back. */
static void test_stash_entries_switch_the_kernel_off_and_on(void **state)
{
    (void)state;
    size_t n = 20000;
    uint64_t *keys = keys_of(n);
    nidus_cuckoo *cf = make(4000, 12, false, 0);
    assert_state(cf, NIDUS_DISPATCH_PLAIN, NULL, 0);
    size_t k = 0;
    while (k < n && nidus_cuckoo_add(cf, &keys[k], 8) == NIDUS_OK)
        k++;
    assert_true(k < n);
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    assert_true(s.overflow_items > 0);
    assert_state(cf, NIDUS_DISPATCH_ONE, keys, k);
    bool back = false;
    for (size_t r = 0; r < k; r++) {
        assert_int_equal(nidus_cuckoo_remove(cf, &keys[r], 8), NIDUS_OK);
        assert_true(nidus_cuckoo_dispatch_fresh(cf));
        nidus_cuckoo_get_stats(cf, &s);
        back |= s.overflow_items == 0 && kind(cf) == NIDUS_DISPATCH_PLAIN;
    }
    assert_true(back);
    assert_state(cf, NIDUS_DISPATCH_PLAIN, NULL, 0);
    nidus_cuckoo_free(cf);
    free(keys);
}

/* Views take the read-only kernels; a chunk load is loading until its last chunk; small filters are packed, and
 * a forward's full filter keeps its own byte. */
static void test_views_loads_and_packed_forms(void **state)
{
    (void)state;
    size_t n = 30000;
    uint64_t *keys = keys_of(n);
    nidus_cuckoo *cf = make(n, 13, true, 0);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(nidus_cuckoo_add(cf, &keys[k], 8), NIDUS_OK);
    size_t len = (size_t)nidus_cuckoo_encoded_size(cf), written;
    uint8_t *buf = malloc(len);
    assert_int_equal(nidus_cuckoo_encode(cf, buf, len, &written), NIDUS_OK);
    nidus_cuckoo *v = NULL;
    assert_int_equal(nidus_cuckoo_view(buf, len, NULL, &v), NIDUS_OK);
    assert_state(v, NIDUS_DISPATCH_SEMI_RO, keys, n);
    assert_int_equal(nidus_cuckoo_add(v, &keys[0], 8), NIDUS_ERR_READ_ONLY);
    nidus_cuckoo_free(v);

    nidus_cuckoo *copy = NULL;
    uint8_t *chunk = malloc(NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD);
    for (uint64_t cursor = 0;;) {
        size_t clen;
        uint64_t next;
        assert_int_equal(nidus_cuckoo_dump_chunk(cf, cursor, chunk, NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD,
                                                 &clen, &next), NIDUS_OK);
        if (clen == 0)
            break;
        if (copy)
            assert_state(copy, NIDUS_DISPATCH_LOADING, NULL, 0);
        assert_int_equal(nidus_cuckoo_load_chunk(&copy, chunk, clen, 0, NULL), NIDUS_OK);
        cursor = next;
    }
    assert_state(copy, NIDUS_DISPATCH_SEMI, keys, n);
    nidus_cuckoo_free(copy);
    nidus_cuckoo_free(cf);
    free(chunk);
    free(buf);

    nidus_cuckoo *small = make(100, 12, false, 1);
    assert_state(small, NIDUS_DISPATCH_PACKED, NULL, 0);
    for (size_t k = 0; k < 90; k++)
        assert_int_equal(nidus_cuckoo_add(small, &keys[k], 8), NIDUS_OK);
    assert_state(small, NIDUS_DISPATCH_PACKED, keys, 90);
    nidus_cuckoo *full = nidus_cuckoo_unpack(small);
    assert_non_null(full);
    assert_state(small, NIDUS_DISPATCH_FORWARD, keys, 90);
    assert_state(full, NIDUS_DISPATCH_PLAIN, keys, 90);
    for (size_t k = 90; k < 1000; k++) /* grows: a forward to a grown filter */
        assert_int_equal(nidus_cuckoo_add(small, &keys[k], 8), NIDUS_OK);
    assert_state(small, NIDUS_DISPATCH_FORWARD, keys, 1000);
    nidus_cuckoo_free(small);
    free(keys);
}

/* A table of 2^16 buckets or more takes the states the inline path serves (its view's tag is one the header knows,
 * and every field of the view is fresh); a stash, growth and compaction move it out and back. */
static void test_inline_states_and_their_view(void **state)
{
    (void)state;
    size_t cap = 300000, n = 2 * cap;
    uint64_t *keys = keys_of(n);
    for (int semi = 0; semi < 2; semi++) {
        unsigned fast = semi ? NIDUS_DISPATCH_SEMI_INLINE : NIDUS_DISPATCH_PLAIN_INLINE;
        nidus_cuckoo *cf = make(cap, semi ? 13 : 12, semi, 0);
        assert_state(cf, fast, NULL, 0);
        size_t k = 0;
        while (k < n && nidus_cuckoo_add(cf, &keys[k], 8) == NIDUS_OK)
            k++;
        assert_true(k < n);
        assert_state(cf, NIDUS_DISPATCH_ONE, keys, k); /* full: stash entries */
        for (size_t r = 0; r < k; r++)
            assert_int_equal(nidus_cuckoo_remove(cf, &keys[r], 8), NIDUS_OK);
        assert_state(cf, fast, NULL, 0);
        nidus_cuckoo_free(cf);
        cf = make(cap, semi ? 13 : 12, semi, 2);
        for (k = 0; k < n; k++)
            assert_int_equal(nidus_cuckoo_add(cf, &keys[k], 8), NIDUS_OK);
        assert_state(cf, NIDUS_DISPATCH_GENERAL, keys, n);
        for (k = cap / 2; k < n; k++)
            assert_int_equal(nidus_cuckoo_remove(cf, &keys[k], 8), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_compact(cf, NULL), NIDUS_OK);
        assert_state(cf, fast, keys, cap / 2);
        nidus_cuckoo_free(cf);
    }
    free(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growth_compaction_and_clear_redispatch),
        cmocka_unit_test(test_stash_entries_switch_the_kernel_off_and_on),
        cmocka_unit_test(test_views_loads_and_packed_forms),
        cmocka_unit_test(test_inline_states_and_their_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The dispatch byte (cuckoo_dispatch.h): in every state a filter passes through — new, grown, compacted, cleared,
 * stashed and drained, viewed, loading and loaded, packed and forward, small and large — the byte cached in it
 * (and, in the states the inline path serves, its whole published view) is what its state calls for, and the
 * filter answers for every key it holds. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp (scratch_dir.h) */
#include "test_util.h"

#include <stdlib.h>

#include <nidus/nidus.h>

#include "cuckoo_dispatch.h"
#include "scratch_dir.h"

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
    /* plain one-word buckets (f=12), semi-sorted (f=13), plain buckets at a bit offset (f=13: 52 bits) */
    static const struct { unsigned f; bool semi; unsigned fast; } forms[] = {
        {12, false, NIDUS_DISPATCH_PLAIN_INLINE}, {13, true, NIDUS_DISPATCH_SEMI_INLINE},
        {13, false, NIDUS_DISPATCH_BITS_INLINE}};
    for (size_t c = 0; c < sizeof forms / sizeof forms[0]; c++) {
        bool semi = forms[c].semi;
        unsigned fast = forms[c].fast, f = forms[c].f;
        nidus_cuckoo *cf = make(cap, f, semi, 0);
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
        cf = make(cap, f, semi, 2);
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


/* The encoding of a filter, malloc'd; its length in *len. */
static uint8_t *encoding_of(const nidus_cuckoo *cf, size_t *len)
{
    *len = (size_t)nidus_cuckoo_encoded_size(cf);
    uint8_t *buf = malloc(*len);
    size_t written = 0;
    assert_non_null(buf);
    assert_int_equal(nidus_cuckoo_encode(cf, buf, *len, &written), NIDUS_OK);
    assert_int_equal(written, *len);
    return buf;
}

/* Every key answers present by key and by hash, one at a time and batched (no false negatives). */
static void assert_holds(const nidus_cuckoo *cf, const uint64_t *keys, size_t n)
{
    const void **kp = malloc(n * sizeof *kp);
    size_t *lens = malloc(n * sizeof *lens);
    uint64_t *hashes = malloc(n * sizeof *hashes);
    bool *out = malloc(n);
    assert_true(kp && lens && hashes && out);
    for (size_t k = 0; k < n; k++) {
        kp[k] = &keys[k];
        lens[k] = sizeof keys[k];
        hashes[k] = nidus_cuckoo_hash(cf, &keys[k], sizeof keys[k]);
        if (!nidus_cuckoo_contains(cf, &keys[k], sizeof keys[k]) || !nidus_cuckoo_contains_hash(cf, hashes[k]))
            fail_msg("key %zu of %zu missing (dispatch %u)", k, n, kind(cf));
    }
    memset(out, 0, n);
    nidus_cuckoo_contains_many(cf, kp, lens, n, out);
    for (size_t k = 0; k < n; k++)
        assert_true(out[k]);
    memset(out, 0, n);
    nidus_cuckoo_contains_many_hash(cf, hashes, n, out);
    for (size_t k = 0; k < n; k++)
        assert_true(out[k]);
    free(kp);
    free(lens);
    free(hashes);
    free(out);
}

/* Plain buckets read at a bit offset (b=4 f=13, b=2 f=13, ...) take the NIDUS_DISPATCH_BITS kernels: the same
 * statuses and bytes as the general path after the same adds (by key, by hash and batched), up to and past the
 * first failed add of a table that never grows; the same answers; and the same state again after encode/decode, a
 * view (the read-only kernels), a file saved and loaded, and a file mapped. Buckets too wide for one load from
 * their first byte (b=4 f=15, 60 bits) keep the one-table kernel. */
static void test_bit_offset_buckets_take_their_kernels(void **state)
{
    (void)state;
    static const struct { unsigned b, f; } shapes[] = {{4, 13}, {2, 13}, {2, 19}, {2, 27}, {4, 11}, {4, 7}, {4, 15}};
    size_t cap = 20000, n = 2 * cap;
    uint64_t *keys = keys_of(n);
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        unsigned b = shapes[c].b, f = shapes[c].f;
        bool fast = b * f <= NIDUS_SHORT_BITS_MAX;
        unsigned want = fast ? NIDUS_DISPATCH_BITS : NIDUS_DISPATCH_ONE;
        nidus_cuckoo_params p = {.capacity = cap, .bucket_size = b, .fingerprint_bits = f, .expansion = 0,
                                 .seed = test_seed()};
        nidus_cuckoo *cf = NULL, *general = NULL, *batched = NULL;
        assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_new(&p, &general), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_new(&p, &batched), NIDUS_OK);
        assert_state(cf, want, NULL, 0);
        size_t k = 0;
        int failures = 0;
        for (; k < n && failures < 20; k++) {
            nidus_status st, sg;
            *(unsigned char *)general = NIDUS_DISPATCH_GENERAL; /* the general path, whatever the last add set */
            if (k % 2) {
                st = nidus_cuckoo_add(cf, &keys[k], 8);
                sg = nidus_cuckoo_add(general, &keys[k], 8);
            } else {
                uint64_t h = nidus_cuckoo_hash(cf, &keys[k], 8);
                st = nidus_cuckoo_add_hash(cf, h);
                sg = nidus_cuckoo_add_hash(general, h);
            }
            assert_int_equal(st, sg);
            failures += st != NIDUS_OK;
            nidus_cuckoo_stats s;
            nidus_cuckoo_get_stats(cf, &s);
            assert_true(nidus_cuckoo_dispatch_fresh(cf));
            assert_int_equal(kind(cf), s.overflow_items ? NIDUS_DISPATCH_ONE : want); /* a stash: the map too */
        }
        assert_true(failures > 0); /* filled past its first failed add */
        nidus_cuckoo_redispatch(general);
        size_t la, lg;
        uint8_t *ea = encoding_of(cf, &la), *eg = encoding_of(general, &lg);
        assert_int_equal(la, lg);
        assert_memory_equal(ea, eg, la);
        free(eg);

        /* batched adds of the keys that went in before the first failure: the same bytes as one by one */
        nidus_cuckoo *one = NULL;
        assert_int_equal(nidus_cuckoo_new(&p, &one), NIDUS_OK);
        uint64_t *hashes = malloc(n * sizeof *hashes);
        size_t added = 0;
        for (size_t i = 0; i < cap; i++) {
            hashes[i] = nidus_cuckoo_hash(cf, &keys[i], 8);
            assert_int_equal(nidus_cuckoo_add_hash(one, hashes[i]), NIDUS_OK);
        }
        assert_int_equal(nidus_cuckoo_add_many_hash(batched, hashes, cap, &added), NIDUS_OK);
        assert_int_equal(added, cap);
        size_t lb, lo;
        uint8_t *eb = encoding_of(batched, &lb), *eo = encoding_of(one, &lo);
        assert_int_equal(lb, lo);
        assert_memory_equal(eb, eo, lb);
        assert_state(batched, want, keys, cap);
        assert_holds(batched, keys, cap);
        free(eb);
        free(eo);
        free(hashes);
        nidus_cuckoo_free(one);

        /* the first `cap` keys in the filter filled past its first failure (its stash: the one-table kernel) */
        assert_holds(cf, keys, cap);
        nidus_cuckoo *copy = NULL, *view = NULL, *loaded = NULL, *mapped = NULL;
        assert_int_equal(nidus_cuckoo_decode(ea, la, NULL, &copy), NIDUS_OK);
        assert_int_equal(kind(copy), kind(cf));
        assert_holds(copy, keys, cap);
        nidus_cuckoo_free(copy);
        nidus_cuckoo_free(cf);

        size_t lbat;
        uint8_t *ebat = encoding_of(batched, &lbat);
        assert_int_equal(nidus_cuckoo_view(ebat, lbat, NULL, &view), NIDUS_OK);
        assert_state(view, fast ? NIDUS_DISPATCH_BITS_RO : NIDUS_DISPATCH_ONE, keys, cap);
        assert_holds(view, keys, cap);
        assert_int_equal(nidus_cuckoo_add(view, &keys[0], 8), NIDUS_ERR_READ_ONLY);
        nidus_cuckoo_free(view);
        char path[128];
        path_of(path, sizeof path, "bits.nidus");
        assert_int_equal(nidus_cuckoo_save_file(batched, path), NIDUS_OK);
        assert_int_equal(nidus_cuckoo_load_file(path, NULL, &loaded), NIDUS_OK);
        assert_state(loaded, want, keys, cap);
        assert_holds(loaded, keys, cap);
        assert_int_equal(nidus_cuckoo_map_file(path, NULL, &mapped), NIDUS_OK);
        assert_state(mapped, fast ? NIDUS_DISPATCH_BITS_RO : NIDUS_DISPATCH_ONE, keys, cap);
        assert_holds(mapped, keys, cap);
        size_t ll;
        uint8_t *el = encoding_of(loaded, &ll);
        assert_int_equal(ll, lbat);
        assert_memory_equal(el, ebat, ll);
        free(el);
        free(ebat);
        free(ea);
        nidus_cuckoo_free(loaded);
        nidus_cuckoo_free(mapped);
        nidus_cuckoo_free(batched);
        nidus_cuckoo_free(general);
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
        cmocka_unit_test_setup_teardown(test_bit_offset_buckets_take_their_kernels, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocation failures: every public call that allocates is run with its n-th allocation failing, for every n
 * until it succeeds. Each failure must return a status, leave the object as it was (byte for byte, as its
 * encoding shows) and usable, and leak nothing (the hook counts live blocks). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <unistd.h>

#include <nidus/nidus.h>

#include "failing_alloc.h"

/* The object's bytes, allocated outside the hook. */
static uint8_t *cuckoo_bytes(const nidus_cuckoo *cf, size_t *len)
{
    arm(0);
    size_t size = (size_t)nidus_cuckoo_encoded_size(cf);
    uint8_t *buf = malloc(size);
    assert_int_equal(nidus_cuckoo_encode(cf, buf, size, len), NIDUS_OK);
    return buf;
}

static void assert_cuckoo_unchanged(const nidus_cuckoo *cf, const uint8_t *before, size_t len)
{
    size_t now_len;
    uint8_t *now = cuckoo_bytes(cf, &now_len);
    assert_int_equal(now_len, len);
    assert_memory_equal(now, before, len);
    free(now);
}

/* Runs `op` with failures at 1, 2, ... until it succeeds; between tries the filter must be unchanged. */
#define EVERY_FAILURE(cf, op)                                                                                  \
    do {                                                                                                       \
        size_t len_;                                                                                           \
        uint8_t *before_ = cuckoo_bytes(cf, &len_);                                                            \
        long live_ = g_fail.live;                                                                              \
        for (long n_ = 1;; n_++) {                                                                             \
            arm(n_);                                                                                           \
            nidus_status st_ = (op);                                                                           \
            arm(0);                                                                                            \
            if (st_ == NIDUS_OK)                                                                               \
                break;                                                                                         \
            assert_int_equal(st_, NIDUS_ERR_NO_MEMORY);                                                        \
            assert_int_equal(g_fail.live, live_);                                                              \
            assert_cuckoo_unchanged(cf, before_, len_);                                                        \
            assert_true(n_ < 1000);                                                                            \
        }                                                                                                      \
        free(before_);                                                                                         \
    } while (0)

static uint64_t h(uint64_t i) { uint64_t s = i * 7919 + test_seed(); return test_splitmix(&s); }

static void test_cuckoo_new_fails_cleanly(void **state)
{
    (void)state;
    long live = g_fail.live;
    for (long n = 1;; n++) {
        nidus_cuckoo_params p = {.capacity = 1000, .expansion = 2, .allocator = &g_hook};
        nidus_cuckoo *cf = NULL;
        arm(n);
        nidus_status st = nidus_cuckoo_new(&p, &cf);
        arm(0);
        if (st == NIDUS_OK) {
            nidus_cuckoo_free(cf);
            break;
        }
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
        assert_null(cf);
        assert_int_equal(g_fail.live, live);
    }
    assert_int_equal(g_fail.live, live);
}

static void test_growth_and_overflow_fail_cleanly(void **state)
{
    (void)state;
    long live = g_fail.live, injected = g_fail.injected;
    nidus_cuckoo_params p = {.capacity = 200, .expansion = 2, .allocator = &g_hook, .seed = test_seed()};
    nidus_cuckoo *cf = NULL;
    assert_int_equal(nidus_cuckoo_new(&p, &cf), NIDUS_OK);
    uint64_t k = 0;
    /* every add until the filter has grown twice, each under every failure */
    for (nidus_cuckoo_stats s; nidus_cuckoo_get_stats(cf, &s), s.tables < 3; k++)
        EVERY_FAILURE(cf, nidus_cuckoo_add_hash(cf, h(k)));
    /* duplicates: the overflow map grows */
    for (int d = 0; d < 40; d++)
        EVERY_FAILURE(cf, nidus_cuckoo_add_hash(cf, h(0)));
    for (uint64_t j = 0; j < k; j++)
        assert_true(nidus_cuckoo_contains_hash(cf, h(j)));
    assert_true(nidus_cuckoo_count_hash(cf, h(0)) >= 41); /* more only through a colliding fingerprint */
    /* encode allocates for the overflow entries */
    size_t size = (size_t)nidus_cuckoo_encoded_size(cf), len;
    uint8_t *buf = malloc(size);
    EVERY_FAILURE(cf, nidus_cuckoo_encode(cf, buf, size, &len));
    /* decoding and viewing it */
    long live_with_cf = g_fail.live;
    for (long n = 1;; n++) {
        nidus_cuckoo *back = NULL, *view = NULL;
        arm(n);
        nidus_status st = nidus_cuckoo_decode(buf, len, &g_hook, &back);
        nidus_status sv = st ? st : nidus_cuckoo_view(buf, len, &g_hook, &view);
        arm(0);
        if (st)
            assert_null(back);
        nidus_cuckoo_free(back);
        nidus_cuckoo_free(view);
        assert_int_equal(g_fail.live, live_with_cf);
        if (st == NIDUS_OK && sv == NIDUS_OK)
            break;
        assert_true(st == NIDUS_ERR_NO_MEMORY || sv == NIDUS_ERR_NO_MEMORY);
    }
    /* chunks: dump (allocates) and load */
    static uint8_t chunk[NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    size_t clen[8];
    uint8_t *chunks[8];
    uint64_t cursor = 0, next;
    int nchunks = 0;
    for (;;) {
        size_t cl;
        EVERY_FAILURE(cf, nidus_cuckoo_dump_chunk(cf, cursor, chunk, sizeof chunk, &cl, &next));
        if (!cl)
            break;
        chunks[nchunks] = malloc(cl);
        memcpy(chunks[nchunks], chunk, cl);
        clen[nchunks++] = cl;
        cursor = next;
    }
    for (long n = 1;; n++) {
        nidus_cuckoo *loaded = NULL;
        nidus_status st = NIDUS_OK;
        arm(n);
        for (int c = 0; c < nchunks && !st; c++)
            st = nidus_cuckoo_load_chunk(&loaded, chunks[c], clen[c], 0, &g_hook);
        arm(0);
        nidus_cuckoo_free(loaded);
        if (st == NIDUS_OK)
            break;
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
    }
    for (int c = 0; c < nchunks; c++)
        free(chunks[c]);
    /* saving to a file allocates the encoding */
    char path[] = "/tmp/nidus-alloc-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    EVERY_FAILURE(cf, nidus_cuckoo_save_file(cf, path));
    unlink(path);
    free(buf);
    nidus_cuckoo_free(cf);
    assert_int_equal(g_fail.live, live); /* nothing leaked, whatever failed */
    printf("# %ld allocation failures injected\n", g_fail.injected - injected);
    assert_true(g_fail.injected - injected > 30);
}

static void test_bloom_kinds_fail_cleanly(void **state)
{
    (void)state;
    long live = g_fail.live;
    for (long n = 1;; n++) {
        nidus_bloom_params p = {.capacity = 100, .error_rate = 0.01, .expansion = 2, .allocator = &g_hook};
        nidus_bloom *bf = NULL;
        arm(n);
        nidus_status st = nidus_bloom_new(&p, &bf);
        arm(0);
        if (st) {
            assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
            assert_int_equal(g_fail.live, live);
            continue;
        }
        /* adds that grow the filter, each under every failure: nothing added is lost */
        uint64_t added = 0;
        for (uint64_t k = 0; k < 700; k++) {
            for (long m = 1;; m++) {
                bool was_new;
                arm(m);
                nidus_status sa = nidus_bloom_add_hash(bf, h(k), &was_new);
                arm(0);
                if (sa == NIDUS_OK) {
                    added += was_new;
                    break;
                }
                assert_int_equal(sa, NIDUS_ERR_NO_MEMORY);
                for (uint64_t j = 0; j < k; j += 17)
                    assert_true(nidus_bloom_contains_hash(bf, h(j)));
            }
        }
        nidus_bloom_stats s;
        nidus_bloom_get_stats(bf, &s);
        assert_true(s.layers >= 3);
        assert_int_equal(s.items, added);
        nidus_bloom_free(bf);
        break;
    }
    for (long n = 1;; n++) {
        nidus_counting_bloom_params p = {.capacity = 100, .error_rate = 0.01, .allocator = &g_hook};
        nidus_counting_bloom *cb = NULL;
        arm(n);
        nidus_status st = nidus_counting_bloom_new(&p, &cb);
        arm(0);
        if (st == NIDUS_OK) {
            nidus_counting_bloom_free(cb);
            break;
        }
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
    }
    assert_int_equal(g_fail.live, live);
}

/* Decoding, chunk loading and saving of the Bloom kinds under every failure: a status, no leak. */
static void test_bloom_codecs_fail_cleanly(void **state)
{
    (void)state;
    long live = g_fail.live, injected = g_fail.injected;
    nidus_bloom_params bp = {.capacity = 100, .error_rate = 0.01, .expansion = 2, .allocator = &g_hook};
    nidus_bloom *bf;
    assert_int_equal(nidus_bloom_new(&bp, &bf), NIDUS_OK);
    for (uint64_t k = 0; k < 400; k++)
        assert_int_equal(nidus_bloom_add_hash(bf, h(k), NULL), NIDUS_OK);
    nidus_counting_bloom_params cp = {.capacity = 100, .error_rate = 0.01, .allocator = &g_hook};
    nidus_counting_bloom *cb;
    assert_int_equal(nidus_counting_bloom_new(&cp, &cb), NIDUS_OK);
    for (uint64_t k = 0; k < 100; k++)
        assert_int_equal(nidus_counting_bloom_add_hash(cb, h(k)), NIDUS_OK);
    size_t blen = (size_t)nidus_bloom_encoded_size(bf), clen = (size_t)nidus_counting_bloom_encoded_size(cb);
    uint8_t *bbuf = malloc(blen), *cbuf = malloc(clen);
    assert_int_equal(nidus_bloom_encode(bf, bbuf, blen, &blen), NIDUS_OK);
    assert_int_equal(nidus_counting_bloom_encode(cb, cbuf, clen, &clen), NIDUS_OK);
    static uint8_t chunk[NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD];
    size_t hlen, dlen;
    uint64_t next;
    assert_int_equal(nidus_bloom_dump_chunk(bf, 0, chunk, sizeof chunk, &hlen, &next), NIDUS_OK);
    uint8_t *header = malloc(hlen);
    memcpy(header, chunk, hlen);
    assert_int_equal(nidus_bloom_dump_chunk(bf, 1, chunk, sizeof chunk, &dlen, &next), NIDUS_OK);
    long base = g_fail.live;
    for (long n = 1;; n++) {
        nidus_bloom *b2 = NULL, *view = NULL, *loaded = NULL;
        nidus_counting_bloom *c2 = NULL;
        arm(n);
        nidus_status st = nidus_bloom_decode(bbuf, blen, &g_hook, &b2);
        if (!st)
            st = nidus_bloom_view(bbuf, blen, &g_hook, &view);
        if (!st)
            st = nidus_counting_bloom_decode(cbuf, clen, &g_hook, &c2);
        if (!st)
            st = nidus_bloom_load_chunk(&loaded, header, hlen, 0, &g_hook);
        if (!st)
            st = nidus_bloom_load_chunk(&loaded, chunk, dlen, 0, &g_hook);
        arm(0);
        nidus_bloom_free(b2);
        nidus_bloom_free(view);
        nidus_bloom_free(loaded);
        nidus_counting_bloom_free(c2);
        assert_int_equal(g_fail.live, base);
        if (st == NIDUS_OK)
            break;
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
    }
    char path[] = "/tmp/nidus-alloc-bloom-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    for (long n = 1;; n++) {
        arm(n);
        nidus_status st = nidus_bloom_save_file(bf, path);
        if (!st)
            st = nidus_counting_bloom_save_file(cb, path);
        arm(0);
        assert_int_equal(g_fail.live, base);
        if (st == NIDUS_OK)
            break;
        assert_int_equal(st, NIDUS_ERR_NO_MEMORY);
    }
    unlink(path);
    free(header);
    free(bbuf);
    free(cbuf);
    nidus_bloom_free(bf);
    nidus_counting_bloom_free(cb);
    assert_int_equal(g_fail.live, live);
    assert_true(g_fail.injected - injected >= 8);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuckoo_new_fails_cleanly),
        cmocka_unit_test(test_growth_and_overflow_fail_cleanly),
        cmocka_unit_test(test_bloom_kinds_fail_cleanly),
        cmocka_unit_test(test_bloom_codecs_fail_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

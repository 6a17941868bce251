/* SPDX-License-Identifier: BSD-3-Clause */
/* A cuckoo filter loaded chunk by chunk checks each chunk's buckets as it lands, not all of them at the last chunk
 * (which would make the last LOADCHUNK of a large filter as slow as checking the whole filter): a chunk whose
 * buckets are invalid, framed with a valid chunk checksum, is refused at once, and the load refuses every chunk
 * after it; the same stream unchanged loads to the same encoding. The whole checksum is kept running as the
 * chunks land (each hashes its own bytes), so the last chunk checks it without reading the filter: through an
 * allocator whose blocks are never 64-byte aligned (the running state needs that alignment), a data byte
 * changed under a valid chunk checksum is still refused at the last chunk, and a load dumped half-way and
 * replayed into a new filter completes. White box: chunks are reframed with nidus_chunk_frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "codec.h"
#include <nidus/nidus.h>

#define CAP (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD)

typedef struct chunks {
    uint8_t *buf[8];
    size_t len[8];
    unsigned n;
} chunks;

/* An allocator whose blocks start 16 bytes past a 64-byte boundary: never aligned as XXH3's state asks. */
static void *skew_malloc(void *ctx, size_t n)
{
    (void)ctx;
    uint8_t *p = aligned_alloc(64, (n + 16 + 63) / 64 * 64);
    return p ? p + 16 : NULL;
}
static void *skew_calloc(void *ctx, size_t n, size_t m)
{
    if (m && n > SIZE_MAX / m)
        return NULL;
    void *p = skew_malloc(ctx, n * m);
    if (p)
        memset(p, 0, n * m);
    return p;
}
static void skew_free(void *ctx, void *p)
{
    (void)ctx;
    if (p)
        free((uint8_t *)p - 16);
}
static void *skew_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
    return NULL; /* not used by chunked loads */
}
static const nidus_allocator skew = {skew_malloc, skew_calloc, skew_realloc, skew_free, NULL};

/* One kind's chunk calls, so that the checks below run on cuckoo, Bloom and counting Bloom filters. */
typedef struct kind_calls {
    nidus_status (*dump)(const void *f, uint64_t cursor, void *buf, size_t cap, size_t *len, uint64_t *next);
    nidus_status (*load)(void **f, const void *chunk, size_t len);
    bool (*loading)(const void *f);
    uint64_t (*size)(const void *f);
    nidus_status (*encode)(const void *f, void *buf, size_t cap, size_t *len);
    void (*destroy)(void *f);
} kind_calls;

#define KIND_CALLS(T, P)                                                                                        \
    static nidus_status P##_d(const void *f, uint64_t c, void *b, size_t cap, size_t *l, uint64_t *n)           \
    {                                                                                                          \
        return P##_dump_chunk((const T *)f, c, b, cap, l, n);                                                  \
    }                                                                                                          \
    static nidus_status P##_l(void **f, const void *chunk, size_t len)                                          \
    {                                                                                                          \
        T *t = *f;                                                                                             \
        nidus_status st = P##_load_chunk(&t, chunk, len, 0, &skew);                                             \
        *f = t;                                                                                                \
        return st;                                                                                             \
    }                                                                                                          \
    static bool P##_ing(const void *f) { return P##_loading((const T *)f); }                                    \
    static uint64_t P##_s(const void *f) { return P##_encoded_size((const T *)f); }                             \
    static nidus_status P##_e(const void *f, void *b, size_t cap, size_t *l) { return P##_encode((const T *)f, b, cap, l); } \
    static void P##_f(void *f) { P##_free((T *)f); }                                                            \
    static const kind_calls P##_calls = {P##_d, P##_l, P##_ing, P##_s, P##_e, P##_f};

KIND_CALLS(nidus_cuckoo, nidus_cuckoo)
KIND_CALLS(nidus_bloom, nidus_bloom)
KIND_CALLS(nidus_counting_bloom, nidus_counting_bloom)

/* Every chunk of `f` (dump_chunk from cursor 0 to the end). */
static chunks dump_all(const kind_calls *k, const void *f)
{
    chunks c = {.n = 0};
    uint64_t cursor = 0, next;
    for (;;) {
        assert_true(c.n < 8);
        c.buf[c.n] = malloc(CAP);
        assert_int_equal(k->dump(f, cursor, c.buf[c.n], CAP, &c.len[c.n], &next), NIDUS_OK);
        if (!c.len[c.n]) {
            free(c.buf[c.n]);
            return c;
        }
        c.n++;
        cursor = next;
    }
}

/* Chunk `chunk` (of `len` bytes) with its payload changed by `change`, reframed under a valid chunk checksum. */
static uint8_t *reframed(const uint8_t *chunk, size_t len, void (*change)(uint8_t *payload, uint32_t n))
{
    uint32_t seq, n;
    uint64_t token;
    const uint8_t *payload;
    assert_int_equal(nidus_chunk_parse(chunk, len, &seq, &token, &payload, &n), NIDUS_OK);
    uint8_t *bad = malloc(n), *framed = malloc(CAP);
    memcpy(bad, payload, n);
    change(bad, n);
    nidus_chunk_frame(framed, seq, token, bad, n);
    free(bad);
    return framed;
}

/* An empty semi-sorted filter of three data chunks and more (semi-sorted buckets have invalid encodings). */
static chunks dump_semi(nidus_cuckoo **out)
{
    nidus_cuckoo_params p = {.capacity = 12000000, .bucket_size = 4, .semi_sort = true, .fingerprint_bits = 9,
                             .seed = test_seed()};
    assert_int_equal(nidus_cuckoo_new(&p, out), NIDUS_OK);
    chunks c = dump_all(&nidus_cuckoo_calls, *out);
    assert_true(c.n >= 4); /* the header and three data chunks */
    return c;
}

static void free_chunks(chunks *c)
{
    for (unsigned i = 0; i < c->n; i++)
        free(c->buf[i]);
}

static void assert_same_encoding(const kind_calls *k, const void *a, const void *b)
{
    size_t na = (size_t)k->size(a), nb = (size_t)k->size(b), la, lb;
    assert_int_equal(na, nb);
    uint8_t *ea = malloc(na), *eb = malloc(nb);
    assert_int_equal(k->encode(a, ea, na, &la), NIDUS_OK);
    assert_int_equal(k->encode(b, eb, nb, &lb), NIDUS_OK);
    assert_memory_equal(ea, eb, la);
    free(ea);
    free(eb);
}

/* Buckets all ones: ranks past the last valid one. */
static void ones(uint8_t *payload, uint32_t n) { memset(payload + n / 2, 0xFF, 4096); }

static void test_a_bad_chunk_is_refused_when_it_lands(void **state)
{
    (void)state;
    nidus_cuckoo *src;
    chunks c = dump_semi(&src);
    /* chunk 1's buckets all ones, under a valid chunk checksum */
    uint8_t *framed = reframed(c.buf[1], c.len[1], ones);
    nidus_cuckoo *f = NULL;
    assert_int_equal(nidus_cuckoo_load_chunk(&f, c.buf[0], c.len[0], 0, NULL), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_load_chunk(&f, framed, c.len[1], 0, NULL), NIDUS_ERR_CORRUPT);
    for (unsigned i = 2; i < c.n; i++)
        assert_int_not_equal(nidus_cuckoo_load_chunk(&f, c.buf[i], c.len[i], 0, NULL), NIDUS_OK);
    assert_true(nidus_cuckoo_loading(f));
    nidus_cuckoo_free(f);

    /* unchanged, the stream loads to the same bytes */
    f = NULL;
    for (unsigned i = 0; i < c.n; i++)
        assert_int_equal(nidus_cuckoo_load_chunk(&f, c.buf[i], c.len[i], 0, NULL), NIDUS_OK);
    assert_false(nidus_cuckoo_loading(f));
    assert_same_encoding(&nidus_cuckoo_calls, src, f);
    nidus_cuckoo_free(f);
    nidus_cuckoo_free(src);
    free_chunks(&c);
    free(framed);
}

static void flip_last(uint8_t *payload, uint32_t n) { payload[n - 1] ^= 0x01; }

static void check_running_checksum(const kind_calls *k, const void *src)
{
    chunks c = dump_all(k, src);
    assert_true(c.n >= 3); /* the header and at least two data chunks */

    /* the stream loads whole, its state held in a block the allocator did not align */
    void *f = NULL;
    for (unsigned i = 0; i < c.n; i++) {
        assert_true(i == 0 || k->loading(f));
        assert_int_equal(k->load(&f, c.buf[i], c.len[i]), NIDUS_OK);
    }
    assert_false(k->loading(f));
    assert_same_encoding(k, src, f);
    k->destroy(f);

    /* half-way, its own chunks replayed into a new filter carry the load on: the running state is rebuilt */
    f = NULL;
    unsigned half = c.n / 2;
    for (unsigned i = 0; i < half; i++)
        assert_int_equal(k->load(&f, c.buf[i], c.len[i]), NIDUS_OK);
    chunks mid = dump_all(k, f);
    assert_int_equal(mid.n, half);
    void *g = NULL;
    for (unsigned i = 0; i < mid.n; i++)
        assert_int_equal(k->load(&g, mid.buf[i], mid.len[i]), NIDUS_OK);
    for (unsigned i = half; i < c.n; i++)
        assert_int_equal(k->load(&g, c.buf[i], c.len[i]), NIDUS_OK);
    assert_false(k->loading(g));
    assert_same_encoding(k, src, g);
    k->destroy(g);
    k->destroy(f);
    free_chunks(&mid);

    /* the last byte of data chunk 1 changed, reframed with a valid chunk checksum: the last chunk refuses the whole */
    uint8_t *framed = reframed(c.buf[1], c.len[1], flip_last);
    f = NULL;
    nidus_status st = NIDUS_OK;
    for (unsigned i = 0; i < c.n && st == NIDUS_OK; i++)
        st = k->load(&f, i == 1 ? framed : c.buf[i], c.len[i]);
    assert_int_equal(st, NIDUS_ERR_CORRUPT);
    assert_true(k->loading(f));
    k->destroy(f);
    free(framed);
    free_chunks(&c);
}

static void test_the_running_checksum(void **state)
{
    (void)state;
    uint64_t seed = test_seed();
    char key[32];

    nidus_cuckoo_params cp = {.capacity = 8000000, .bucket_size = 4, .fingerprint_bits = 12, .seed = seed};
    nidus_cuckoo *cf;
    assert_int_equal(nidus_cuckoo_new(&cp, &cf), NIDUS_OK);
    for (uint64_t i = 0; i < 20000; i++)
        assert_int_equal(nidus_cuckoo_add(cf, key, test_key(key, sizeof key, "c", i)), NIDUS_OK);
    check_running_checksum(&nidus_cuckoo_calls, cf);
    nidus_cuckoo_free(cf);

    nidus_bloom_params bp = {.capacity = 6000000, .error_rate = 0.01, .expansion = 2, .seed = seed};
    nidus_bloom *bf;
    assert_int_equal(nidus_bloom_new(&bp, &bf), NIDUS_OK);
    for (uint64_t i = 0; i < 20000; i++)
        assert_int_equal(nidus_bloom_add(bf, key, test_key(key, sizeof key, "b", i), NULL), NIDUS_OK);
    check_running_checksum(&nidus_bloom_calls, bf);
    nidus_bloom_free(bf);

    nidus_counting_bloom_params kp = {.capacity = 2000000, .error_rate = 0.01, .seed = seed};
    nidus_counting_bloom *cb;
    assert_int_equal(nidus_counting_bloom_new(&kp, &cb), NIDUS_OK);
    for (uint64_t i = 0; i < 20000; i++)
        assert_int_equal(nidus_counting_bloom_add(cb, key, test_key(key, sizeof key, "k", i)), NIDUS_OK);
    check_running_checksum(&nidus_counting_bloom_calls, cb);
    nidus_counting_bloom_free(cb);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_bad_chunk_is_refused_when_it_lands),
        cmocka_unit_test(test_the_running_checksum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

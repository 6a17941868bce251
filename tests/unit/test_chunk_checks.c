/* SPDX-License-Identifier: BSD-3-Clause */
/* A cuckoo filter loaded chunk by chunk checks each chunk's buckets as it lands, not all of them at the last chunk
 * (which would make the last LOADCHUNK of a large filter as slow as checking the whole filter): a chunk whose
 * buckets are invalid, framed with a valid chunk checksum, is refused at once, and the load refuses every chunk
 * after it; the same stream unchanged loads to the same encoding. White box: chunks are reframed with
 * nidus_chunk_frame. */
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

/* An empty semi-sorted filter of three data chunks and more (semi-sorted buckets have invalid encodings). */
static chunks dump_semi(nidus_cuckoo **out)
{
    nidus_cuckoo_params p = {.capacity = 12000000, .bucket_size = 4, .semi_sort = true, .fingerprint_bits = 9,
                             .seed = test_seed()};
    assert_int_equal(nidus_cuckoo_new(&p, out), NIDUS_OK);
    chunks c = {.n = 0};
    uint64_t cursor = 0, next;
    for (;;) {
        assert_true(c.n < 8);
        c.buf[c.n] = malloc(CAP);
        assert_int_equal(nidus_cuckoo_dump_chunk(*out, cursor, c.buf[c.n], CAP, &c.len[c.n], &next), NIDUS_OK);
        if (!c.len[c.n]) {
            free(c.buf[c.n]);
            break;
        }
        c.n++;
        cursor = next;
    }
    assert_true(c.n >= 4); /* the header and three data chunks */
    return c;
}

static void test_a_bad_chunk_is_refused_when_it_lands(void **state)
{
    (void)state;
    nidus_cuckoo *src;
    chunks c = dump_semi(&src);
    /* chunk 1's buckets all ones: ranks past the last valid one, under a valid chunk checksum */
    uint32_t seq, n;
    uint64_t token;
    const uint8_t *payload;
    assert_int_equal(nidus_chunk_parse(c.buf[1], c.len[1], &seq, &token, &payload, &n), NIDUS_OK);
    uint8_t *bad = malloc(n), *framed = malloc(CAP);
    memcpy(bad, payload, n);
    memset(bad + n / 2, 0xFF, 4096);
    nidus_chunk_frame(framed, seq, token, bad, n);
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
    size_t a = (size_t)nidus_cuckoo_encoded_size(src), b = (size_t)nidus_cuckoo_encoded_size(f), la, lb;
    assert_int_equal(a, b);
    uint8_t *ea = malloc(a), *eb = malloc(b);
    assert_int_equal(nidus_cuckoo_encode(src, ea, a, &la), NIDUS_OK);
    assert_int_equal(nidus_cuckoo_encode(f, eb, b, &lb), NIDUS_OK);
    assert_memory_equal(ea, eb, la);
    free(ea);
    free(eb);
    nidus_cuckoo_free(f);
    nidus_cuckoo_free(src);
    for (unsigned i = 0; i < c.n; i++)
        free(c.buf[i]);
    free(bad);
    free(framed);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_bad_chunk_is_refused_when_it_lands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Dumps with a running checksum (nidus_dump_sum): the same chunks as without, byte for byte, in order, out of
 * order, repeated, after a reset, across filters; the checksum taken from the sum only when it covers every byte
 * before it, wherever the checksum falls among the chunks. */
#include "filter_chunks_util.h"
#include "test_util.h"

#include "codec.h"

#define P ((uint64_t)NIDUS_CHUNK_PAYLOAD_MAX)
#define CAP (NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD)

/* Chunk `cursor` of the synthetic encoding (prefix, one or two segments) through nidus_codec_dump_chunk. */
typedef struct synthetic {
    uint8_t prefix[40];
    nidus_segment segs[2];
    unsigned count;
} synthetic;

static size_t chunk_of(const synthetic *e, uint64_t cursor, nidus_dump_sum *sum, uint8_t *buf, uint64_t *next)
{
    size_t len = 0;
    assert_int_equal(nidus_codec_dump_chunk(e->prefix, sizeof e->prefix, e->segs, e->count, cursor, buf, CAP, &len,
                                            next, sum),
                     NIDUS_OK);
    return len;
}

/* Every chunk without a sum: the reference. */
static unsigned reference(const synthetic *e, uint8_t **chunks, size_t *lens)
{
    uint64_t cursor = 0, next;
    unsigned n = 0;
    for (;;) {
        chunks[n] = malloc(CAP);
        lens[n] = chunk_of(e, cursor, NULL, chunks[n], &next);
        if (!lens[n]) {
            free(chunks[n]);
            return n;
        }
        cursor = next;
        n++;
    }
}

static void assert_chunk(const synthetic *e, uint64_t cursor, nidus_dump_sum *sum, uint8_t *const *chunks,
                         const size_t *lens)
{
    uint8_t *buf = malloc(CAP);
    uint64_t next;
    size_t len = chunk_of(e, cursor, sum, buf, &next);
    assert_int_equal(len, lens[cursor]);
    assert_memory_equal(buf, chunks[cursor], len);
    free(buf);
}

/* Encodings whose checksum falls in every place: inside the last data chunk, alone in a chunk of its own, split
 * between two chunks (1 to 7 bytes in the first), in the only data chunk, after two segments. */
static void test_every_place_of_the_checksum(void **state)
{
    (void)state;
    static const uint64_t bodies[] = {0, 100, P - 8, P - 3, P, 2 * P - 8, 2 * P - 1, 2 * P - 5, 2 * P, 2 * P + 17};
    uint64_t seed = test_seed();
    uint8_t *data = malloc(2 * P + 17);
    for (uint64_t i = 0; i < 2 * P + 17; i++)
        data[i] = (uint8_t)((i * 2654435761u + seed) >> 11);
    for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++) {
        synthetic e = {{0}, {{data, bodies[b] / 3}, {data + bodies[b] / 3, bodies[b] - bodies[b] / 3}}, 2};
        for (size_t i = 0; i < sizeof e.prefix; i++)
            e.prefix[i] = (uint8_t)(i + b);
        uint8_t *chunks[8];
        size_t lens[8];
        unsigned n = reference(&e, chunks, lens);
        unsigned carrying = bodies[b] % P > P - 8 ? 2 : 1; /* chunks holding checksum bytes */
        nidus_dump_sum *sum = nidus_dump_sum_new(NULL);
        assert_non_null(sum);
        uint64_t digests, wholes;
        for (unsigned c = 0; c < n; c++) /* in order: the sum's digest */
            assert_chunk(&e, c, sum, chunks, lens);
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_int_equal(digests, carrying);
        assert_int_equal(wholes, 0);
        for (unsigned c = n; c-- > 0;) /* backwards, the sum complete: still its digest */
            assert_chunk(&e, c, sum, chunks, lens);
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_int_equal(digests, 2 * carrying);
        nidus_dump_sum_reset(sum); /* a reset sum, then the chunks backwards: the whole hash */
        for (unsigned c = n; c-- > 0;)
            assert_chunk(&e, c, sum, chunks, lens);
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_int_equal(wholes, carrying);
        nidus_dump_sum_reset(sum); /* a chunk skipped: the whole hash */
        uint64_t digests_before = digests, wholes_before = wholes;
        for (unsigned c = 0; c < n; c++)
            if (c != 1 || n < 3)
                assert_chunk(&e, c, sum, chunks, lens);
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_int_equal(digests, n < 3 ? digests_before + carrying : digests_before);
        assert_true(n < 3 ? wholes == wholes_before : wholes > wholes_before);
        nidus_dump_sum_reset(sum); /* each chunk twice, and the header again half-way: in order still */
        for (unsigned c = 0; c < n; c++) {
            assert_chunk(&e, c, sum, chunks, lens);
            assert_chunk(&e, c, sum, chunks, lens);
            if (c == n / 2)
                assert_chunk(&e, 0, sum, chunks, lens);
        }
        uint64_t digests_then = digests;
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_int_equal(digests, digests_then + 2 * carrying);
        /* the same sum on another encoding (another prefix): begun again at its header, never its digest before */
        synthetic other = e;
        other.prefix[0] ^= 1;
        uint8_t *ochunks[8];
        size_t olens[8];
        unsigned on = reference(&other, ochunks, olens);
        assert_int_equal(on, n);
        for (unsigned c = 1; c < on; c++) /* no header chunk of its own: the whole hash */
            assert_chunk(&other, c, sum, ochunks, olens);
        for (unsigned c = 0; c < on; c++)
            assert_chunk(&other, c, sum, ochunks, olens);
        for (unsigned c = 0; c < on; c++) {
            free(ochunks[c]);
            free(chunks[c]);
        }
        nidus_dump_sum_free(sum);
    }
    free(data);
}

/* Dumps f in order through `sum`, each chunk compared with `ref`'s; into `*copy` too unless `copy` is NULL. */
static void dump_through(nidus_filter *f, nidus_dump_sum *sum, const chunk_list *ref, nidus_filter **copy)
{
    uint8_t *buf = malloc(CAP);
    for (unsigned c = 0; c < ref->n; c++) {
        size_t len;
        uint64_t next;
        assert_int_equal(nidus_filter_dump_chunk_sum(f, c, sum, buf, CAP, &len, &next), NIDUS_OK);
        assert_int_equal(len, ref->len[c]);
        assert_memory_equal(buf, ref->data[c], len);
        if (copy)
            assert_int_equal(nidus_filter_load_chunk(copy, nidus_filter_kind(f), buf, len, 0, NULL), NIDUS_OK);
    }
    free(buf);
}

/* Every kind through nidus_filter_dump_chunk_sum, filters of several data chunks: the chunks of
 * nidus_filter_dump_chunk, and they load. */
static void test_filters_of_every_kind(void **state)
{
    (void)state;
    nidus_filter_params params[] = {
        {.kind = NIDUS_KIND_CUCKOO, .capacity = 6000000},
        {.kind = NIDUS_KIND_BLOOM, .capacity = 5000000, .error_rate = 0.01},
        {.kind = NIDUS_KIND_COUNTING_BLOOM, .capacity = 200000, .error_rate = 0.01},
        {.kind = NIDUS_KIND_WINDOW, .capacity = 5000000, .window = 60000},
    };
    for (size_t k = 0; k < sizeof params / sizeof params[0]; k++) {
        nidus_filter *f = NULL;
        assert_int_equal(nidus_filter_new(&params[k], &f), NIDUS_OK);
        for (unsigned i = 0; i < 20000; i++)
            assert_int_equal(nidus_filter_add(f, &i, sizeof i), NIDUS_OK);
        chunk_list ref;
        dump_all(f, &ref);
        assert_true(params[k].kind == NIDUS_KIND_COUNTING_BLOOM || ref.n > 2); /* several data chunks */
        nidus_dump_sum *sum = nidus_dump_sum_new(NULL);
        nidus_filter *copy = NULL;
        dump_through(f, sum, &ref, &copy);
        dump_through(f, sum, &ref, NULL); /* again: the sum complete */
        uint64_t digests, wholes;
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_true(digests >= 2);
        assert_int_equal(wholes, 0);
        assert_false(nidus_filter_loading(copy));
        assert_same_encoding(f, copy);
        /* a write, the sum reset as the contract asks: the new chunks, and the checksum by the sum again */
        unsigned more = 1u << 30;
        assert_int_equal(nidus_filter_add(f, &more, sizeof more), NIDUS_OK);
        nidus_dump_sum_reset(sum);
        chunk_list after;
        dump_all(f, &after);
        dump_through(f, sum, &after, NULL);
        nidus_dump_sum_counts(sum, &digests, &wholes);
        assert_int_equal(wholes, 0);
        free_chunks(&after);
        free_chunks(&ref);
        nidus_dump_sum_free(sum);
        nidus_filter_free(copy);
        nidus_filter_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_place_of_the_checksum),
        cmocka_unit_test(test_filters_of_every_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

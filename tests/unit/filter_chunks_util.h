/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the unit tests of nidus_filter's encodings and chunks (test_filter.c, test_window_filter.c): a
 * filter's whole encoding, two filters' encodings compared, and every chunk of a filter dumped into a list. */
#ifndef NIDUS_FILTER_CHUNKS_UTIL_H
#define NIDUS_FILTER_CHUNKS_UTIL_H

#include <nidus/nidus.h>

#include "test_util.h"

/* The filter's whole encoding (the caller frees it), its length in *n. */
static inline uint8_t *encoding_of(const nidus_filter *f, size_t *n)
{
    *n = (size_t)nidus_filter_encoded_size(f);
    uint8_t *buf = malloc(*n);
    size_t written = 0;
    assert_int_equal(nidus_filter_encode(f, buf, *n, &written), NIDUS_OK);
    assert_int_equal(written, *n);
    return buf;
}

static inline void assert_same_encoding(const nidus_filter *a, const nidus_filter *b)
{
    size_t na, nb;
    uint8_t *ea = encoding_of(a, &na), *eb = encoding_of(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(ea, eb, na);
    free(ea);
    free(eb);
}

#define MAX_CHUNKS 16
typedef struct chunk_list {
    uint8_t *data[MAX_CHUNKS];
    size_t len[MAX_CHUNKS];
    unsigned n;
} chunk_list;

/* Every chunk of f, from cursor 0 until the empty one past the last (whose next cursor is 0). */
static inline void dump_all(const nidus_filter *f, chunk_list *c)
{
    const size_t cap = NIDUS_CHUNK_PAYLOAD_MAX + NIDUS_CHUNK_OVERHEAD;
    uint64_t cursor = 0, next = 0;
    c->n = 0;
    for (;;) {
        assert_true(c->n < MAX_CHUNKS);
        c->data[c->n] = malloc(cap);
        assert_int_equal(nidus_filter_dump_chunk(f, cursor, c->data[c->n], cap, &c->len[c->n], &next), NIDUS_OK);
        if (!c->len[c->n]) {
            assert_int_equal(next, 0);
            free(c->data[c->n]);
            return;
        }
        c->n++;
        cursor = next;
    }
}

static inline void free_chunks(chunk_list *c)
{
    for (unsigned k = 0; k < c->n; k++)
        free(c->data[k]);
    c->n = 0;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: LOADCHUNK of RedisBloom's SCANDUMP stream (and ours after it, for keys that grew). Input: one
 * byte (bit 0: cuckoo or Bloom), then chunks as SCANDUMP's pairs: u64 LE position, u32 LE length, bytes (the
 * fixtures' .chunks format). Whatever loads is probed, and its own chunk stream must load into a second value
 * that streams out the same. */
#include <stdint.h>
#include <stdio.h>

#include "rb/rb_bf.h"
#include "rb/rb_cf.h"
#include "module_stubs.h"
#include "rb/rb_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_BYTES (UINT64_C(1) << 20) /* larger headers are refused: keeps each run fast */

static uint64_t le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static void free_value(bool cuckoo, rb_value *v)
{
    if (v)
        (cuckoo ? rb_cf_value_free : rb_bf_value_free)(v);
}

/* A buffer of at least `n` bytes, kept between runs: a 4 MiB allocation per run would dominate the time. */
static uint8_t *scratch(uint8_t **buf, size_t *cap, size_t n)
{
    if (*cap < n) {
        free(*buf);
        *buf = malloc(n);
        *cap = n;
    }
    return *buf;
}

/* Streams `v` out into a new value; aborts when the copy does not stream out the same chunks. */
static void check_stream(const rb_kind *k, bool cuckoo, const rb_value *v)
{
    static uint8_t *b1, *b2;
    static size_t c1, c2;
    size_t cap = rb_chunk_buffer_size(k, v), len, len2;
    uint8_t *buf = scratch(&b1, &c1, cap), *buf2 = NULL;
    const uint8_t *chunk, *chunk2;
    rb_value *copy = NULL;
    uint64_t iter = 0, next, next2;
    while (rb_value_chunk(k, v, iter, buf, cap, &chunk, &len, &next, NULL)) {
        if (rb_value_load_chunk(k, &copy, iter ? next : 1, chunk, len, 0) != NIDUS_OK)
            abort();
        iter = next;
    }
    size_t cap2 = rb_chunk_buffer_size(k, copy);
    buf2 = scratch(&b2, &c2, cap2);
    for (iter = 0; rb_value_chunk(k, v, iter, buf, cap, &chunk, &len, &next, NULL); iter = next) {
        if (!rb_value_chunk(k, copy, iter, buf2, cap2, &chunk2, &len2, &next2, NULL) || len != len2 || next != next2 ||
            memcmp(chunk, chunk2, len))
            abort();
    }
    free_value(cuckoo, copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    module_stubs_setup();
    if (size < 1)
        return 0;
    bool cuckoo = !(data[0] & 1);
    const rb_kind *k = cuckoo ? &rb_cf_kind : &rb_bf_kind;
    rb_value *v = NULL;
    size_t pos = 1;
    while (size - pos >= 12) {
        uint64_t iter = le(data + pos, 8);
        size_t len = (size_t)le(data + pos + 8, 4);
        pos += 12;
        if (len > size - pos)
            break;
        if (iter == 0 || (iter == 1) != (v == NULL)) /* as the command refuses them */
            break;
        if (rb_value_load_chunk(k, &v, iter, data + pos, len, FUZZ_MAX_BYTES) != NIDUS_OK && !v)
            break;
        pos += len;
    }
    if (!v)
        return 0;
    for (size_t i = 1; i + 8 <= size && i < 256; i += 8) {
        if (cuckoo)
            rb_cf_count(v->rb, rb_cf_hash(data + i, 8));
        else
            rb_bf_contains(v->rb, rb_bf_hash_of(v->rb, data + i, 8));
    }
    check_stream(k, cuckoo, v);
    free_value(cuckoo, v);
    if (getenv("NIDUS_FUZZ_VERBOSE"))
        fprintf(stderr, "loaded a RedisBloom %s filter from chunks\n", cuckoo ? "cuckoo" : "Bloom");
    return 0;
}

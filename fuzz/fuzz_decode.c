/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the whole-filter decoders of every kind, copying and in place, and the kind-generic ones
 * (nidus_filter_decode, _view: the kind read from the prefix), the binary fuse filter's among them. Whatever
 * the bytes, decoding returns a status; what it accepts must re-encode to the same bytes and answer lookups. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#include <nidus/nidus.h>

#include "fuzz_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void exercise(nidus_cuckoo *cf, const uint8_t *data, size_t size)
{
    for (uint64_t k = 0; k < 64; k++) {
        uint64_t h = k * UINT64_C(0x9E3779B97F4A7C15);
        (void)nidus_cuckoo_contains_hash(cf, h);
        (void)nidus_cuckoo_count_hash(cf, h);
    }
    nidus_cuckoo_stats s;
    nidus_cuckoo_get_stats(cf, &s);
    uint64_t n = nidus_cuckoo_encoded_size(cf);
    if (n != size)
        abort();
    uint8_t *again = malloc(size);
    size_t len;
    /* an accepted encoding is canonical (but for the checksum, which fuzz builds do not check, and the version
     * of an older format, which re-encodes in the current one) */
    if (!again || nidus_cuckoo_encode(cf, again, size, &len) || len != size ||
        ((data[5] == NIDUS_FORMAT_VERSION || data[5] == NIDUS_FORMAT_VERSION_SIBLINGS) &&
         memcmp(again, data, size - 8)))
        abort();
    free(again);
}

/* Canonical re-encoding, but for the checksum, which fuzz builds do not check; an older format version's
 * encoding re-encodes in the current one, of the same length. */
#define SAME_ENCODING(PREFIX, f, data, size)                                                                   \
    do {                                                                                                       \
        uint8_t *again_ = malloc(size);                                                                        \
        size_t len_;                                                                                           \
        if (PREFIX##_encoded_size(f) != (size) || !again_ || PREFIX##_encode(f, again_, size, &len_) ||      \
            len_ != (size) || (data[5] == NIDUS_FORMAT_VERSION && memcmp(again_, data, (size) - 8)))           \
            abort();                                                                                           \
        free(again_);                                                                                          \
    } while (0)

static void bloom_kinds(const uint8_t *data, size_t size)
{
    nidus_bloom *bf = NULL;
    if (nidus_bloom_decode(data, size, NULL, &bf) == NIDUS_OK) {
        SAME_ENCODING(nidus_bloom, bf, data, size);
        for (uint64_t k = 0; k < 64; k++)
            (void)nidus_bloom_add_hash(bf, k * UINT64_C(0x9E3779B97F4A7C15), NULL);
        nidus_bloom_stats s;
        nidus_bloom_get_stats(bf, &s);
        nidus_bloom_free(bf);
    }
    bf = NULL;
    if (nidus_bloom_view(data, size, NULL, &bf) == NIDUS_OK) {
        (void)nidus_bloom_contains_hash(bf, 1);
        nidus_bloom_free(bf);
    }
    nidus_counting_bloom *cb = NULL;
    if (nidus_counting_bloom_decode(data, size, NULL, &cb) == NIDUS_OK) {
        SAME_ENCODING(nidus_counting_bloom, cb, data, size);
        for (uint64_t k = 0; k < 64; k++) {
            (void)nidus_counting_bloom_add_hash(cb, k);
            (void)nidus_counting_bloom_remove_hash(cb, k + 1);
        }
        nidus_counting_bloom_stats s;
        nidus_counting_bloom_get_stats(cb, &s);
        nidus_counting_bloom_free(cb);
    }
    cb = NULL;
    if (nidus_counting_bloom_view(data, size, NULL, &cb) == NIDUS_OK) {
        (void)nidus_counting_bloom_count_hash(cb, 1);
        nidus_counting_bloom_free(cb);
    }
}

/* The binary fuse filter: what is accepted re-encodes to the same bytes, and its batched lookups answer as its
 * single ones, copied or viewed, whatever the slots hold (a forged shape would read outside them). */
static void fuse_kind(const uint8_t *data, size_t size)
{
    for (int view = 0; view < 2; view++) {
        nidus_fuse *f = NULL;
        if ((view ? nidus_fuse_view : nidus_fuse_decode)(data, size, NULL, &f) != NIDUS_OK)
            continue;
        SAME_ENCODING(nidus_fuse, f, data, size);
        uint64_t h[64];
        bool out[64];
        for (uint64_t k = 0; k < 64; k++)
            h[k] = k * UINT64_C(0x9E3779B97F4A7C15);
        nidus_fuse_contains_many_hash(f, h, 64, out);
        for (uint64_t k = 0; k < 64; k++)
            if (out[k] != nidus_fuse_contains_hash(f, h[k]))
                abort();
        nidus_fuse_stats s;
        nidus_fuse_get_stats(f, &s);
        if (s.read_only != (view == 1))
            abort();
        nidus_fuse_free(f);
    }
}

/* The generic handle takes what the kind's decoder takes, no more: the same status, the same bytes again. */
static void generic(const uint8_t *data, size_t size)
{
    nidus_kind kind;
    nidus_filter *f = NULL;
    const nidus_allocator *a = &fuzz_capped_allocator;
    nidus_status st = nidus_filter_decode(data, size, a, &f), typed = NIDUS_ERR_CORRUPT;
    if (!nidus_codec_peek(data, size, &kind)) {
        void *t = NULL;
        if (kind == NIDUS_KIND_CUCKOO && !(typed = nidus_cuckoo_decode(data, size, a, (nidus_cuckoo **)&t)))
            nidus_cuckoo_free(t);
        else if (kind == NIDUS_KIND_BLOOM && !(typed = nidus_bloom_decode(data, size, a, (nidus_bloom **)&t)))
            nidus_bloom_free(t);
        else if (kind == NIDUS_KIND_COUNTING_BLOOM &&
                 !(typed = nidus_counting_bloom_decode(data, size, a, (nidus_counting_bloom **)&t)))
            nidus_counting_bloom_free(t);
        else if (kind == NIDUS_KIND_FUSE && !(typed = nidus_fuse_decode(data, size, a, (nidus_fuse **)&t)))
            nidus_fuse_free(t);
        else if (kind == NIDUS_KIND_WINDOW && !(typed = nidus_window_decode(data, size, a, (nidus_window **)&t)))
            nidus_window_free(t);
    }
    if ((st == NIDUS_OK) != (typed == NIDUS_OK))
        abort();
    if (st == NIDUS_OK) {
        if (nidus_filter_kind(f) != kind)
            abort();
        SAME_ENCODING(nidus_filter, f, data, size);
        nidus_filter_stats s;
        nidus_filter_get_stats(f, &s);
        bool found[4];
        uint64_t h[4] = {1, 2, 3, 4};
        nidus_filter_contains_many_hash(f, h, 4, found);
        if (s.memory_bytes < (1u << 20))
            for (uint64_t k = 0; k < 4; k++)
                if (!nidus_filter_add_hash(f, h[k]) && !nidus_filter_contains_hash(f, h[k]))
                    abort(); /* an added key is found */
        nidus_filter_free(f);
    }
    f = NULL;
    if (nidus_filter_view(data, size, NULL, &f) == NIDUS_OK) {
        /* a static kind refuses every write, viewed or not */
        nidus_status want = nidus_filter_kind(f) == NIDUS_KIND_FUSE ? NIDUS_ERR_UNSUPPORTED : NIDUS_ERR_READ_ONLY;
        if (!nidus_filter_is_read_only(f) || nidus_filter_add_hash(f, 1) != want)
            abort();
        (void)nidus_filter_count_hash(f, 1);
        nidus_filter_free(f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bloom_kinds(data, size);
    fuse_kind(data, size);
    generic(data, size);
    nidus_kind kind;
    (void)nidus_codec_peek(data, size, &kind);
    nidus_cuckoo *cf = NULL;
    if (nidus_cuckoo_decode(data, size, &fuzz_capped_allocator, &cf) == NIDUS_OK) {
        exercise(cf, data, size);
        /* a decoded filter is writable (two adds: a full table may walk max_kicks steps each) */
        for (uint64_t k = 0; k < 2; k++)
            (void)nidus_cuckoo_add_hash(cf, k * UINT64_C(0xD6E8FEB86659FD93));
        (void)nidus_cuckoo_remove_hash(cf, 0);
        nidus_cuckoo_free(cf);
    }
    cf = NULL;
    if (nidus_cuckoo_view(data, size, NULL, &cf) == NIDUS_OK) {
        exercise(cf, data, size);
        nidus_cuckoo_free(cf);
    }
    return 0;
}

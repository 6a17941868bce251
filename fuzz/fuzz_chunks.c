/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: the chunk loaders (LOADCHUNK) of every kind. The input is a sequence of chunks, each preceded by
 * its length as a little-endian u32; they are loaded in order into one filter of each kind that chunks (cuckoo,
 * Bloom, counting Bloom, windowed), as a client would send them. */
#include <stdint.h>
#include <stdlib.h>

#include <nidus/nidus.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nidus_cuckoo *cf = NULL;
    nidus_bloom *bf = NULL;
    nidus_counting_bloom *cb = NULL;
    nidus_window *w = NULL;
    size_t at = 0;
    while (size - at >= 4) {
        uint32_t len = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 | (uint32_t)data[at + 2] << 16 |
                       (uint32_t)data[at + 3] << 24;
        at += 4;
        if (len > size - at)
            len = (uint32_t)(size - at);
        /* 64 MiB: the limit a server would set, so a forged header cannot ask for more */
        (void)nidus_cuckoo_load_chunk(&cf, data + at, len, UINT64_C(64) << 20, NULL);
        (void)nidus_bloom_load_chunk(&bf, data + at, len, UINT64_C(64) << 20, NULL);
        (void)nidus_counting_bloom_load_chunk(&cb, data + at, len, UINT64_C(64) << 20, NULL);
        (void)nidus_window_load_chunk(&w, data + at, len, UINT64_C(64) << 20, NULL);
        at += len;
    }
    if (cf) {
        if (!nidus_cuckoo_loading(cf)) {
            for (uint64_t k = 0; k < 64; k++)
                (void)nidus_cuckoo_contains_hash(cf, k * UINT64_C(0x9E3779B97F4A7C15));
            if (nidus_cuckoo_add_hash(cf, 42) == NIDUS_ERR_READ_ONLY)
                abort(); /* a completely loaded filter is writable */
        }
        nidus_cuckoo_free(cf);
    }
    if (bf && !nidus_bloom_loading(bf) && nidus_bloom_add_hash(bf, 42, NULL) == NIDUS_ERR_READ_ONLY)
        abort();
    if (cb && !nidus_counting_bloom_loading(cb) && nidus_counting_bloom_add_hash(cb, 42) == NIDUS_ERR_READ_ONLY)
        abort();
    if (w && !nidus_window_loading(w)) {
        for (uint64_t k = 0; k < 64; k++)
            (void)nidus_window_count_hash(w, k * UINT64_C(0x9E3779B97F4A7C15), k << 20);
        if (nidus_window_add_hash(w, 42, 1) == NIDUS_ERR_READ_ONLY)
            abort();
    }
    nidus_bloom_free(bf);
    nidus_counting_bloom_free(cb);
    nidus_window_free(w);
    return 0;
}

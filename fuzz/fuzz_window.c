/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: windowed filters' decoder (nidus_window_decode). Whatever the bytes, decoding returns a status;
 * what it accepts must re-encode to the same bytes (but for the checksum, which fuzz builds do not check),
 * answer lookups and counts at times before, at and after its clock, take adds, refreshes, removes and sweep
 * steps, and then encode to bytes that decode again and re-encode identically. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nidus/nidus.h>

#include "fuzz_alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encodes w; when `expect` is given, the bytes must equal it but for the checksum. Returns the encoding. */
static uint8_t *encode_checked(const nidus_window *w, const uint8_t *expect, size_t size, size_t *len)
{
    uint64_t n = nidus_window_encoded_size(w);
    uint8_t *out = malloc(n ? (size_t)n : 1);
    if (!out || nidus_window_encode(w, out, (size_t)n, NULL) != NIDUS_OK)
        abort();
    if (expect && (n != size || memcmp(out, expect, size - 8)))
        abort();
    *len = (size_t)n;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nidus_window *w = NULL;
    if (nidus_window_decode(data, size, &fuzz_capped_allocator, &w) != NIDUS_OK)
        return 0;
    size_t len;
    free(encode_checked(w, data, size, &len));
    nidus_window_stats s;
    nidus_window_get_stats(w, 0, &s);
    uint64_t base = s.latest_write, g = s.epoch_ticks;
    const uint64_t at[] = {0, base, base + g, base + 5 * g, base + 7 * g, UINT64_MAX / 2};
    for (unsigned t = 0; t < sizeof at / sizeof at[0]; t++) {
        nidus_window_get_stats(w, at[t], &s);
        if (s.live > s.entries)
            abort();
        for (uint64_t k = 0; k < 32; k++) {
            uint64_t h = k * UINT64_C(0x9E3779B97F4A7C15);
            (void)nidus_window_contains_hash(w, h, at[t]);
            uint8_t key[8];
            memcpy(key, &h, sizeof key);
            if (nidus_window_contains(w, key, sizeof key, at[t]) != (nidus_window_count(w, key, sizeof key, at[t]) > 0))
                abort(); /* contains and count of one key agree */
        }
    }
    /* writes at the filter's time and a little after: each added copy is found at once */
    for (uint64_t k = 0; k < 24; k++) {
        uint64_t now = base + k * (g / 4 + 1);
        uint8_t key[8];
        memcpy(key, &k, sizeof key);
        if (nidus_window_add(w, key, sizeof key, now) == NIDUS_OK && !nidus_window_contains(w, key, sizeof key, now))
            abort();
        bool added;
        (void)nidus_window_add_unique(w, key, 4, now, &added);
        if (k % 3 == 0)
            (void)nidus_window_remove(w, key, sizeof key, now);
        bool done;
        (void)nidus_window_advance(w, now, k, &done);
    }
    /* what the writes left saves and loads again */
    uint8_t *enc = encode_checked(w, NULL, 0, &len);
    nidus_window *again = NULL;
    if (nidus_window_decode(enc, len, NULL, &again) != NIDUS_OK)
        abort();
    free(encode_checked(again, enc, len, &len));
    nidus_window_free(again);
    free(enc);
    nidus_window_free(w);
    return 0;
}

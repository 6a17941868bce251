/* SPDX-License-Identifier: BSD-3-Clause */
/* Binary fuse filter lookups (one at a time and batched with prefetching), stats and freeing. Building is in
 * fuse_build.c, encodings and files in fuse_codec.c. */
#include "alloc.h"
#include "fuse_filter.h"

/* Batched lookups: keys a run, whose slots are all prefetched before the first is read. */
#define FUSE_RUN 32u

uint64_t nidus_fuse_hash(const nidus_fuse_params *params, const void *key, size_t len)
{
    return nidus_hash_bytes(key, len, params ? params->seed : 0);
}

void nidus_fuse_free(nidus_fuse *f)
{
    if (!f)
        return;
    const nidus_allocator *a = f->alloc;
    if (!f->read_only)
        nidus_free(a, (void *)(uintptr_t)f->slots);
    nidus_mapping_release(f->mapping, a);
    nidus_free(a, f);
}

/* One compare on the library's copy of the view for 8-bit slots, two for 16-bit ones, and the inline header's
 * probe over that copy: its fields sit in one cache line, and the probe addresses the second and third slots
 * from slots1 and slots2 without adding the segment lengths. */
bool nidus_fuse_contains_hash(const nidus_fuse *f, uint64_t hash)
{
    const nidus_inline_fuse_view *v = &f->lookup;
    if (v->tag == NIDUS_INLINE_FUSE_TAG_8)
        return nidus_inline_fuse_probe8(v, hash);
    if (v->tag == NIDUS_INLINE_FUSE_TAG_16)
        return nidus_inline_fuse_probe16(v, hash);
    return false; /* empty */
}

bool nidus_fuse_contains(const nidus_fuse *f, const void *key, size_t len)
{
    return nidus_fuse_contains_hash(f, nidus_hash_bytes(key, len, f->seed));
}

/* The batched lookup for one width, in runs of FUSE_RUN keys: the three slots of every key of a run are computed
 * and prefetched first, then the run is answered, by which time the first of its slots have arrived. */
static inline void many(const nidus_fuse *f, const uint64_t *hashes, size_t n, bool *out, unsigned bits)
{
    uint64_t p0[FUSE_RUN], p1[FUSE_RUN], p2[FUSE_RUN];
    uint32_t fps[FUSE_RUN];
    const uint8_t *s = f->slots;
    const unsigned width = bits / 8;
    const uint64_t cseed = f->construction_seed, mask = f->segment_mask, length = f->shape.segment_length;
    const uint64_t span = f->shape.segment_count_length;
    for (size_t base = 0; base < n; base += FUSE_RUN) {
        size_t m = n - base < FUSE_RUN ? n - base : FUSE_RUN;
        for (size_t k = 0; k < m; k++) {
            uint64_t h = nidus_fuse_mix(hashes[base + k], cseed);
            uint64_t a = nidus_fuse_mulhi(h, span);
            p0[k] = a;
            p1[k] = (a + length) ^ ((h >> 18) & mask);
            p2[k] = (a + 2 * length) ^ (h & mask);
            fps[k] = nidus_fuse_fingerprint(h);
            __builtin_prefetch(s + p0[k] * width);
            __builtin_prefetch(s + p1[k] * width);
            __builtin_prefetch(s + p2[k] * width);
        }
        for (size_t k = 0; k < m; k++) {
            if (bits == 8)
                out[base + k] = (uint8_t)(fps[k] ^ s[p0[k]] ^ s[p1[k]] ^ s[p2[k]]) == 0;
            else
                out[base + k] = (uint16_t)(fps[k] ^ nidus_fuse_load16(s, p0[k]) ^ nidus_fuse_load16(s, p1[k]) ^
                                           nidus_fuse_load16(s, p2[k])) == 0;
        }
    }
}

void nidus_fuse_contains_many_hash(const nidus_fuse *f, const uint64_t *hashes, size_t n, bool *out)
{
    if (f->keys == 0) {
        for (size_t k = 0; k < n; k++)
            out[k] = false;
        return;
    }
    if (f->bits == 8)
        many(f, hashes, n, out, 8);
    else
        many(f, hashes, n, out, 16);
}

void nidus_fuse_contains_many(const nidus_fuse *f, const void *const *keys, const size_t *lens, size_t n,
                              bool *out)
{
    /* hashed in runs, so the batched lookup prefetches over each run */
    uint64_t run[256];
    for (size_t k = 0; k < n; k += 256) {
        size_t m = n - k < 256 ? n - k : 256;
        for (size_t i = 0; i < m; i++)
            run[i] = nidus_hash_bytes(keys[k + i], lens[k + i], f->seed);
        nidus_fuse_contains_many_hash(f, run, m, out + k);
    }
}

void nidus_fuse_get_stats(const nidus_fuse *f, nidus_fuse_stats *s)
{
    uint64_t bytes = nidus_fuse_slot_bytes(f);
    *s = (nidus_fuse_stats){
        .keys = f->keys,
        .slots = f->shape.slots,
        .memory_bytes = bytes + sizeof *f + (f->mapping ? sizeof *f->mapping : 0),
        .bits_per_item = f->keys ? (double)bytes * 8.0 / (double)f->keys : 0.0,
        .error_bound = f->keys ? 1.0 / (double)(UINT32_C(1) << f->bits) : 0.0,
        .seed = f->seed,
        .construction_seed = f->construction_seed,
        .fingerprint_bits = f->bits,
        .read_only = f->read_only,
    };
}

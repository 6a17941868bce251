/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the binary fuse filter (nidus/fuse.h): its shape, and the lookup every caller inlines.
 *
 * The array of fingerprint slots is cut into segments of L = segment_length slots (a power of two); a key's
 * mixed hash h picks a start p0 in the first segment_count segments, and the key's three slots are p0, then in
 * the next segment and the one after it, each moved inside its segment by bits of h:
 *     p0 = mulhi(h, segment_count * L),  p1 = (p0 + L) ^ ((h >> 18) & (L - 1)),  p2 = (p0 + 2L) ^ (h & (L - 1))
 * so p2 < (segment_count + 2) * L = slots whatever h is. The xor of the three slots is the key's fingerprint,
 * the low bits of h ^ (h >> 32). The mixed hash is nidus_mix64(hash + construction seed): a construction that
 * fails is retried with another construction seed over the same key hashes. */
#ifndef NIDUS_SRC_FUSE_FILTER_H
#define NIDUS_SRC_FUSE_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "file_io.h"
#include "hash_impl.h"
#include "nidus/fuse.h"
#include "nidus/inline_fuse.h"

#define NIDUS_FUSE_MAX_SEGMENT_BITS 18u /* L at most 2^18 */

/* The sizes a filter's slots are laid out by; the file stores them (a reader never recomputes them with
 * floating point, which could differ between machines by an ulp). */
typedef struct nidus_fuse_shape {
    uint64_t segment_length;       /* L, a power of two in [1, 2^18] (1 only for an empty filter) */
    uint64_t segment_count;        /* segments a start may fall in; 0 only for an empty filter */
    uint64_t segment_count_length; /* segment_count * L */
    uint64_t slots;                /* (segment_count + 2) * L, or 0 for an empty filter */
} nidus_fuse_shape;

struct nidus_fuse {
    nidus_inline_fuse_view view;   /* first: what NIDUS_INLINE callers read (nidus_fuse_publish) */
    nidus_inline_fuse_view lookup; /* the library's own copy, which its lookups read: one cache line, and never
                                      what a caller may have written over the published one */
    const nidus_allocator *alloc;
    nidus_mapping *mapping; /* map_file: the file the slots are in */
    const uint8_t *slots;   /* fingerprints, 1 or 2 bytes each (little-endian); owned unless read_only */
    uint64_t keys;          /* distinct hashes built from */
    uint64_t seed;          /* key hash seed */
    uint64_t construction_seed;
    uint64_t segment_mask;  /* L - 1 */
    nidus_fuse_shape shape;
    unsigned bits;          /* 8 or 16 */
    bool read_only;         /* slots borrowed from a buffer or mapping */
};

static inline uint64_t nidus_fuse_mix(uint64_t hash, uint64_t construction_seed)
{
    return nidus_mix64(hash + construction_seed);
}

static inline uint64_t nidus_fuse_mulhi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* The three slots of mixed hash h. */
static inline void nidus_fuse_slots(const nidus_fuse_shape *s, uint64_t mask, uint64_t h, uint64_t p[3])
{
    uint64_t p0 = nidus_fuse_mulhi(h, s->segment_count_length);
    p[0] = p0;
    p[1] = (p0 + s->segment_length) ^ ((h >> 18) & mask);
    p[2] = (p0 + 2 * s->segment_length) ^ (h & mask);
}

static inline uint32_t nidus_fuse_fingerprint(uint64_t h) { return (uint32_t)(h ^ (h >> 32)); }

static inline uint16_t nidus_fuse_load16(const uint8_t *slots, uint64_t i)
{
    uint16_t v;
    memcpy(&v, slots + 2 * i, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap16(v);
#endif
    return v;
}

static inline void nidus_fuse_store16(uint8_t *slots, uint64_t i, uint16_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap16(v);
#endif
    memcpy(slots + 2 * i, &v, sizeof v);
}

/* Whether mixed hash h passes, for a non-empty filter of 8- or 16-bit slots (`bits` a constant where inlined). */
static inline bool nidus_fuse_match(const nidus_fuse *f, uint64_t h, unsigned bits)
{
    uint64_t p[3];
    nidus_fuse_slots(&f->shape, f->segment_mask, h, p);
    uint32_t fp = nidus_fuse_fingerprint(h);
    if (bits == 8)
        return (uint8_t)(fp ^ f->slots[p[0]] ^ f->slots[p[1]] ^ f->slots[p[2]]) == 0;
    return (uint16_t)(fp ^ nidus_fuse_load16(f->slots, p[0]) ^ nidus_fuse_load16(f->slots, p[1]) ^
                      nidus_fuse_load16(f->slots, p[2])) == 0;
}

/* The shape for n distinct keys (n <= NIDUS_FUSE_MAX_KEYS). */
void nidus_fuse_shape_for(uint64_t n, nidus_fuse_shape *out);

/* Whether a shape read from a file is one whose lookups stay inside `slots` (any n of keys it claims). */
bool nidus_fuse_shape_ok(const nidus_fuse_shape *s, uint64_t keys);

/* Writes the published view and the library's copy from the filter's fields, once they are final (built,
 * decoded). An empty filter's tag is 0, which every lookup answers "absent" from. */
static inline void nidus_fuse_publish(nidus_fuse *f)
{
    uint64_t width = f->bits / 8, length = f->shape.segment_length;
    bool empty = f->keys == 0;
    f->view = (nidus_inline_fuse_view){
        .tag = empty ? 0 : f->bits == 8 ? NIDUS_INLINE_FUSE_TAG_8 : NIDUS_INLINE_FUSE_TAG_16,
        .seed = f->seed,
        .construction_seed = f->construction_seed,
        .segment_count_length = f->shape.segment_count_length,
        .segment_mask = length - 1,
        .slots = f->slots,
        .slots1 = empty ? f->slots : f->slots + length * width,
        .slots2 = empty ? f->slots : f->slots + 2 * length * width,
    };
    f->lookup = f->view;
}

/* nidus_fuse_build_hash, with the shape `forced` instead of the sizing's when not NULL (the unit tests force one
 * too small to peel, to see the build give up); `*tries` (may be NULL) gets the construction seeds tried. */
nidus_status nidus_fuse_build_shaped(const nidus_fuse_params *params, const uint64_t *hashes, size_t n,
                                     const nidus_fuse_shape *forced, unsigned *tries, nidus_fuse **out);

/* A filter struct around no slots yet; NULL when out of memory. */
nidus_fuse *nidus_fuse_alloc_struct(const nidus_allocator *alloc);

/* Bytes of the slot array. */
static inline uint64_t nidus_fuse_slot_bytes(const nidus_fuse *f) { return f->shape.slots * (f->bits / 8); }

/* codec: decode in any mode (codec.h), for filter_file.c and file_verify.c. */
nidus_status nidus_fuse_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                    nidus_decode_target target, nidus_decode_mode mode, nidus_fuse **out);
nidus_status nidus_fuse_map_file_lazy(const char *path, const nidus_allocator *allocator,
                                      nidus_file_prepare_fn prepare, void *ctx, nidus_fuse **out);

#endif

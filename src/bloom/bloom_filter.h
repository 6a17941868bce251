/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the objects behind nidus_bloom and nidus_counting_bloom. */
#ifndef NIDUS_SRC_BLOOM_FILTER_H
#define NIDUS_SRC_BLOOM_FILTER_H

#include "codec.h"
#include "file_io.h"
#include "hash_impl.h"
#include "isa_impl.h"
#include "nidus/bloom.h"

/* How a layer places a key's probes (stored per layer; src/bloom_block_impl.h has the placements). */
enum {
    NIDUS_LAYER_LEGACY = 0, /* format 1's blocks: k slots drawn from 512 bits (read, add; never made anew) */
    NIDUS_LAYER_PLAIN = 1,  /* one array of bits, k probes anywhere (RedisBloom's layout and size) */
    NIDUS_LAYER_SPLIT = 2,  /* 64-byte blocks, bit i of a key in word i % 8: one cache line a key */
    NIDUS_LAYER_COUNTING = 0 /* the counting filter's one layer: 128 counters a block, k slots drawn */
};

/* One layer: `size` 64-byte blocks (blocked) or bits (plain), built to hold `capacity` keys. Its design error is
 * not stored: a scalable filter's layer i has nidus_bloom_layer_error(error_rate, expansion, i) (the decoder
 * refuses any other), a counting filter keeps its own. 40 bytes on 64-bit builds. */
typedef struct nidus_bloom_layer {
    uint64_t size;
    uint64_t capacity;
    uint64_t items; /* keys added to this layer (new ones only) */
    uint8_t *data;  /* 64-byte aligned when blocked and owned */
    uint16_t k;
    uint8_t layout;
    uint8_t offset; /* data - the allocation behind it */
    bool owned;     /* false when data is borrowed from a view or lives in the filter's own allocation */
} nidus_bloom_layer;

struct nidus_mapping;

/* What only some filters need, behind one pointer (NULL until needed): the chunk loader while a chunked load is
 * under way, the mapped file of a view made by map_file, and the layers after the first once the filter has
 * grown. Its allocation is always these 16 bytes and nlayers - 1 layers (growth, decoding and clearing keep it
 * so): 56 bytes with two layers, where RedisBloom's links are 128. */
struct nidus_bloom_more {
    nidus_chunk_loader *loader;
    struct nidus_mapping *mapping;
    nidus_bloom_layer layers[]; /* layers 1 .. nlayers - 1 */
};

/* The dispatch state, in the low bits of the filter's tag (nidus_bloom_refresh_dispatch): which kernel every call
 * takes (bloom_kernels.h). LOOKUP: one split layer of k = 8, not loading; ADD: that and writable (adds still
 * check the layer's room); V3: the x86-64-v3 copy (isa_impl.h). Each entry point in bloom.c is one switch on it,
 * the only code that reads it. With the view version above it, the tag is what nidus/inline_bloom.h reads: the
 * LOOKUP and LOOKUP|ADD states (either copy) are its two tags, every other state a tag it does not know. */
enum { NIDUS_BLOOM_STATE_LOOKUP = 1, NIDUS_BLOOM_STATE_ADD = 2, NIDUS_BLOOM_STATE_V3 = 4, NIDUS_BLOOM_STATES = 8 };
#define NIDUS_BLOOM_TAG_V1 UINT32_C(0x4E420100) /* view version 1; the state in the low 3 bits */

/* Every small filter pays for this struct (88 bytes on x86-64; RedisBloom's pieces are 32 + 64 a filter). With a
 * plain first layer (the default) its bits follow the struct in the same allocation when that costs no more than
 * two allocations would (nidus_bloom_alloc_struct): BF.RESERVE k 0.01 100 is one allocation of 232 bytes (a
 * 256-byte size class). Its first 48 bytes are the published view (nidus/inline_bloom.h, offsets asserted in
 * bloom.c): the tag, hash8_flip, and the first layer's size, capacity, items and data; the entry points' common
 * case reads only those. To stay at 88 bytes the seed is kept as hash8_flip (nidus_bloom_seed inverts it), the
 * instruction set as a bit of the tag, and the small fields as bit-fields. */
struct nidus_bloom {
    uint32_t tag;        /* NIDUS_BLOOM_TAG_V1 | state (nidus_bloom_refresh_dispatch); STATE_V3 also when general */
    uint16_t expansion;  /* 0: never grows; at most NIDUS_BLOOM_MAX_EXPANSION */
    unsigned nlayers : 7;    /* 1..NIDUS_BLOOM_MAX_LAYERS */
    unsigned max_layers : 7;
    unsigned layout : 1;     /* nidus_bloom_layout: what growth makes */
    unsigned read_only : 1;
    uint64_t hash8_flip; /* nidus_hash8_flip(seed): the seed */
    nidus_bloom_layer first; /* layer 0 */
    const nidus_allocator *alloc; /* the caller's hook (it must outlive the filter) or the libc one */
    double error_rate;
    uint64_t max_memory;
    struct nidus_bloom_more *more; /* NULL: one layer (`first`), not loading, not mapped */
};

static inline uint64_t nidus_bloom_seed(const nidus_bloom *bf) { return nidus_hash8_flip_seed(bf->hash8_flip); }

/* The filter's dispatch state (NIDUS_BLOOM_STATE_* bits). */
static inline unsigned nidus_bloom_state(const nidus_bloom *bf) { return bf->tag & (NIDUS_BLOOM_STATES - 1u); }

/* Layer i (< nlayers) of the filter: `first`, then more->layers. */
static inline nidus_bloom_layer *nidus_bloom_layer_at(const nidus_bloom *bf, unsigned i)
{
    return i ? &bf->more->layers[i - 1] : (nidus_bloom_layer *)(uintptr_t)&bf->first;
}

/* The chunk loader of a filter still loading, else NULL. */
static inline nidus_chunk_loader *nidus_bloom_loader(const nidus_bloom *bf)
{
    return bf->more ? bf->more->loader : NULL;
}

/* bf->more, made (zeroed) if absent; with `room` > 0, reallocated to hold that many layers after the first (the
 * ones it holds are kept), for a filter about to have room + 1 layers. NULL when out of memory, bf unchanged. */
struct nidus_bloom_more *nidus_bloom_more(nidus_bloom *bf, unsigned room);

/* Where a view's mapping is kept (nidus_bloom_more), for file_io.h's map_file; NULL when out of memory. */
struct nidus_mapping **nidus_bloom_mapping_slot(nidus_bloom *bf);

/* Sets the filter's tag to the dispatch state its state calls for (keeping its instruction set): called
 * wherever nlayers, the loader, read_only or first.k change. The one place the state is decided. */
void nidus_bloom_refresh_dispatch(nidus_bloom *bf);

/* Whether the filter's tag is what nidus_bloom_refresh_dispatch would write now (tests and the property checker). */
bool nidus_bloom_dispatch_is_current(const nidus_bloom *bf);

struct nidus_counting_bloom {
    const nidus_allocator *alloc; /* the caller's hook (it must outlive the filter) or the libc one */
    uint64_t seed;
    uint64_t items;
    double error;            /* its layer's design error */
    nidus_bloom_layer layer; /* its capacity, k and blocks of 128 counters */
    struct nidus_mapping *mapping;
    nidus_chunk_loader *loader;
    bool read_only;
};

/* The design error of layer i of a filter with target `error`: error / 2^(i+1), or all of it when the
 * filter never grows. */
double nidus_bloom_layer_error(double error, unsigned expansion, unsigned i);

/* Sizes layer `l` (no memory yet) for `capacity` keys at `error` in `layout` (NIDUS_LAYER_SPLIT falls back to
 * plain below what split blocks reach); `counting` sizes counting blocks instead. */
nidus_status nidus_bloom_layer_size(nidus_bloom_layer *l, uint64_t capacity, double error, unsigned layout,
                                    bool counting);

/* The bytes of the layer's blocks or bits; what its allocation holds (alignment slack included), which is what
 * max_memory limits; and that allocation's size when the layer owns it, else 0. */
uint64_t nidus_bloom_layer_bytes(const nidus_bloom_layer *l);
uint64_t nidus_bloom_layer_budget(const nidus_bloom_layer *l);
uint64_t nidus_bloom_layer_memory(const nidus_bloom_layer *l);

/* A zeroed filter struct with `first` as its one layer. When `with_bits`, the layer is plain (no alignment) and
 * one allocation for both costs no more than two would (allocator size classes, as jemalloc's: Redis's), its
 * zeroed bits follow the struct (owned false: freed with it); otherwise first.data is NULL, for
 * nidus_bloom_layer_alloc or a view. NULL when out of memory. */
nidus_bloom *nidus_bloom_alloc_struct(const nidus_allocator *a, const nidus_bloom_layer *first, bool with_bits);

/* Gives a sized layer zeroed memory (NIDUS_ERR_TOO_LARGE, NIDUS_ERR_NO_MEMORY), or frees it. */
nidus_status nidus_bloom_layer_alloc(nidus_bloom_layer *l, const nidus_allocator *a);
void nidus_bloom_layer_release(nidus_bloom_layer *l, const nidus_allocator *a);

/* Adds a layer for growth, if expansion, max_layers and max_memory allow (NIDUS_ERR_FULL, NIDUS_ERR_LIMIT_TABLES,
 * NIDUS_ERR_LIMIT_MEMORY, NIDUS_ERR_TOO_LARGE, NIDUS_ERR_NO_MEMORY; the filter unchanged), and redispatches. */
nidus_status nidus_bloom_grow(nidus_bloom *bf);

/* Decode (copy, view or borrow) a whole encoding or a file body, as `target` and `mode` say (codec.h). */
nidus_status nidus_bloom_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                     nidus_decode_target target, nidus_decode_mode mode, nidus_bloom **out);
nidus_status nidus_counting_bloom_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                              nidus_decode_target target, nidus_decode_mode mode,
                                              nidus_counting_bloom **out);

/* nidus_bloom_map_file and nidus_counting_bloom_map_file with the blocks' checks left to `prepare` (file_io.h:
 * NIDUS_DEFINE_FILE_FUNCTIONS). */
nidus_status nidus_bloom_map_file_lazy(const char *path, const nidus_allocator *allocator,
                                       nidus_file_prepare_fn prepare, void *ctx, nidus_bloom **out);
nidus_status nidus_counting_bloom_map_file_lazy(const char *path, const nidus_allocator *allocator,
                                                nidus_file_prepare_fn prepare, void *ctx,
                                                nidus_counting_bloom **out);

/* As nidus_cuckoo_rewrite_body (cuckoo_filter.h): the prefix of a borrowed filter, in place; UNSUPPORTED when a
 * layer was added. */
nidus_status nidus_bloom_rewrite_body(const nidus_bloom *bf, uint8_t *body, size_t len);
nidus_status nidus_counting_bloom_rewrite_body(const nidus_counting_bloom *cb, uint8_t *body, size_t len);

#endif

/* Internal: the objects behind nidus_bloom and nidus_counting_bloom. */
#ifndef NIDUS_SRC_BLOOM_FILTER_H
#define NIDUS_SRC_BLOOM_FILTER_H

#include "codec.h"
#include "nidus/bloom.h"

/* One layer: `blocks` 64-byte blocks built to hold `capacity` keys at `error`. */
typedef struct nidus_bloom_layer {
    uint64_t blocks;
    uint64_t capacity;
    uint64_t items; /* keys added to this layer (new ones only) */
    double error;
    unsigned k;
    uint8_t *data;  /* blocks * 64 bytes, 64-byte aligned when owned */
    void *raw;      /* the allocation behind data; NULL when data is borrowed from a view */
} nidus_bloom_layer;

struct nidus_bloom {
    nidus_allocator alloc;
    uint64_t seed;
    double error_rate;
    unsigned expansion; /* 0: never grows */
    unsigned max_layers;
    uint64_t max_memory;
    unsigned nlayers;
    nidus_bloom_layer *layers;
    bool read_only;
    void *mapping;
    size_t mapping_bytes;
    nidus_chunk_loader *loader;
};

struct nidus_counting_bloom {
    nidus_allocator alloc;
    uint64_t seed;
    uint64_t items;
    nidus_bloom_layer layer; /* its capacity, error, k and blocks of 128 counters */
    bool read_only;
    void *mapping;
    size_t mapping_bytes;
    nidus_chunk_loader *loader;
};

/* The design error of layer i of a filter with target `error`: error / 2^(i+1), or all of it when the
 * filter never grows. */
double nidus_bloom_layer_error(double error, unsigned expansion, unsigned i);

/* Sizes and allocates a zeroed layer. `slots` is 512 (bits) or 128 (counters). */
nidus_status nidus_bloom_layer_init(nidus_bloom_layer *l, const nidus_allocator *a, uint64_t capacity,
                                    double error, unsigned slots);
void nidus_bloom_layer_release(nidus_bloom_layer *l, const nidus_allocator *a);

/* The layer's block memory through the allocator, alignment slack included. */
uint64_t nidus_bloom_layer_memory(const nidus_bloom_layer *l);

void nidus_chunk_loader_release(nidus_chunk_loader **l, const nidus_allocator *a);

/* Decode (copy, view or borrow) a whole encoding or a file body, as `target` and `mode` say (codec.h). */
nidus_status nidus_bloom_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                     nidus_decode_target target, nidus_decode_mode mode, nidus_bloom **out);
nidus_status nidus_counting_bloom_decode_mode(const void *buf, size_t len, const nidus_allocator *allocator,
                                              nidus_decode_target target, nidus_decode_mode mode,
                                              nidus_counting_bloom **out);

/* As nidus_cuckoo_rewrite_body (cuckoo_filter.h): the prefix of a borrowed filter, in place; UNSUPPORTED when a
 * layer was added. */
nidus_status nidus_bloom_rewrite_body(const nidus_bloom *bf, uint8_t *body, size_t len);
nidus_status nidus_counting_bloom_rewrite_body(const nidus_counting_bloom *cb, uint8_t *body, size_t len);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The RedisBloom part of a Bloom filter loaded from RedisBloom's data: its layers as RedisBloom laid them out,
 * probed as RedisBloom probes them so that every item it held answers as it did. An item's two hashes (a, b)
 * are MurmurHash64A (option FORCE64) or 32-bit MurmurHash2 (older filters); probe i of a layer tests bit
 * (a + i*b) mod m, m = 2^n2 (power-of-two layers) or the layer's bit count (NOROUND layers, n2 = 0). */
#ifndef NIDUS_REDIS_RB_BF_H
#define NIDUS_REDIS_RB_BF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nidus/status.h>

#define RB_BF_NOROUND 1u
#define RB_BF_ENTS_IS_BITS 2u
#define RB_BF_FORCE64 4u
#define RB_BF_NO_SCALING 8u

typedef struct rb_bf_layer {
    uint64_t entries;    /* capacity */
    uint64_t items;      /* adds that set a bit */
    uint64_t bits, bytes;
    uint64_t start;      /* the bytes of the layers before it: where its SCANDUMP positions begin */
    double error, bpe;
    uint32_t hashes;
    uint8_t n2;
    uint8_t *data;
} rb_bf_layer;

typedef struct rb_bf {
    uint64_t items; /* sum over the layers (BF.CARD) */
    uint32_t options, growth, nlayers;
    rb_bf_layer *layers;
} rb_bf;

typedef struct rb_bf_hash {
    uint64_t a, b;
} rb_bf_hash;

/* RedisBloom's SCANDUMP header: u64 items, u32 layers, options, growth, then per layer u64 bytes, bits,
 * items, f64 error, bpe, u32 hashes, u64 entries, u8 n2 (packed, little-endian). */
#define RB_BF_HEADER_FIXED 20
#define RB_BF_HEADER_LINK 53

rb_bf_hash rb_bf_hash_of(const rb_bf *bf, const void *item, size_t len);

/* True when every probe of some layer is set. */
bool rb_bf_contains(const rb_bf *bf, rb_bf_hash h);

/* Sets the item's bits in the newest layer; true when one was unset (then the layer's and the filter's item
 * counts grow, as RedisBloom counts). The caller checks that the layer has room. */
bool rb_bf_add(rb_bf *bf, rb_bf_hash h);

/* RedisBloom's checks of one layer (its bloom_validate_integrity), a bound on the probe count that no real
 * filter reaches, and a capacity its bits can hold at its error rate (twice what RedisBloom sizes at most).
 * False when any fails. */
bool rb_bf_layer_valid(const rb_bf_layer *l);

/* ORs src's layers into dst's of the same index (dst takes copies of the layers only src has); the counts add,
 * past a layer's capacity if so (then the next add grows). The caller checks that both have the same options
 * and shared layers of the same shape. NIDUS_ERR_TOO_LARGE, dst unchanged, when the count would wrap. */
nidus_status rb_bf_merge(rb_bf *dst, const rb_bf *src);

rb_bf *rb_bf_shell(uint32_t nlayers);
void rb_bf_free(rb_bf *bf);

/* Bytes held (struct, layer array, layers), and the layers' bytes alone (SCANDUMP positions 1 .. this cover
 * them); both O(1), from the newest layer's start. */
uint64_t rb_bf_memory(const rb_bf *bf);
uint64_t rb_bf_layer_bytes(const rb_bf *bf);

/* The header chunk (rb_bf_header_size bytes, written to `out`), and a zeroed filter from one:
 * NIDUS_ERR_CORRUPT, NIDUS_ERR_LIMIT_MEMORY past max_bytes (checked before allocating). */
size_t rb_bf_header_size(const rb_bf *bf);
void rb_bf_header(const rb_bf *bf, uint8_t *out);
nidus_status rb_bf_from_header(const void *buf, size_t len, uint64_t max_bytes, rb_bf **out);

/* Layer `i`'s bits, their size in bytes and start (an rb_array_fn, rb_chunk.h). */
uint8_t *rb_bf_array(const void *f, unsigned i, uint64_t *size, uint64_t *start);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the 64-byte blocks of the Bloom family, and where a key's probes fall in them and in plain layers.
 *
 * Legacy blocks (format 1) and counting blocks: a key's hash picks one block per layer (multiply-shift: no consistency between sizes is needed here, unlike
 * the cuckoo table) and k slots inside it, each from its own log2(S) bits of a remixed hash (S: the slots of a
 * block, 512 bits or 128 four-bit counters). Not double hashing (a + i*b mod S): in a space this small, keys
 * whose progressions share a step overlap in k-1 slots, and the measured error came out 5 % (bits) to 30 %
 * (counters) above the model. Independent slots match it. Blocks are stored as little-endian bytes, the
 * same on every host and on disk. */
#ifndef NIDUS_SRC_BLOOM_BLOCK_IMPL_H
#define NIDUS_SRC_BLOOM_BLOCK_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "bits_impl.h"
#include "hash_impl.h"

#define NIDUS_BLOCK_BYTES 64u
#define NIDUS_BLOCK_BITS 512u
#define NIDUS_BLOCK_COUNTERS 128u

/* Where a hash probes layer `layer` of `blocks` blocks: the block, and the bits its slots are drawn from. */
typedef struct nidus_probe {
    uint64_t block;
    uint64_t bits;
} nidus_probe;

static inline nidus_probe nidus_probe_of(uint64_t hash, unsigned layer, uint64_t blocks)
{
    uint64_t x = layer ? nidus_mix64(hash ^ (layer * UINT64_C(0x9E3779B97F4A7C15))) : hash;
    nidus_probe p = {(uint64_t)(((unsigned __int128)x * blocks) >> 64), nidus_mix64(x ^ UINT64_C(0xa0761d6478bd642f))};
    return p;
}

/* Calls BODY with `slot` set to each of the k slots (log2_slots bits each; a fresh remix every 64 bits). */
#define NIDUS_FOR_EACH_SLOT(p, k, log2_slots, BODY)                                                            \
    do {                                                                                                       \
        uint64_t bits_ = (p)->bits, round_ = 0;                                                                \
        unsigned left_ = 64 / (log2_slots);                                                                    \
        for (unsigned i_ = 0; i_ < (k); i_++) {                                                                \
            if (!left_) { /* from the probe's bits, not what is left of them: all 64 are used up */            \
                bits_ = nidus_mix64((p)->bits + ++round_ * UINT64_C(0x9E3779B97F4A7C15));                      \
                left_ = 64 / (log2_slots);                                                                     \
            }                                                                                                  \
            unsigned slot = (unsigned)(bits_ & ((1u << (log2_slots)) - 1));                                   \
            bits_ >>= (log2_slots);                                                                            \
            left_--;                                                                                           \
            BODY;                                                                                              \
        }                                                                                                      \
    } while (0)

/* The k bits of a Bloom probe as a 512-bit mask. */
static inline void nidus_bloom_mask(const nidus_probe *p, unsigned k, uint64_t mask[8])
{
    for (unsigned w = 0; w < 8; w++)
        mask[w] = 0;
    NIDUS_FOR_EACH_SLOT(p, k, 9, mask[slot >> 6] |= UINT64_C(1) << (slot & 63));
}

/* True when every bit of the mask is set in the block. */
static inline bool nidus_bloom_block_has(const uint8_t *block, const uint64_t mask[8])
{
    uint64_t missing = 0;
    for (unsigned w = 0; w < 8; w++)
        missing |= mask[w] & ~nidus_load_le64(block + 8 * w);
    return missing == 0;
}

/* Sets the mask's bits; returns whether any was unset (the key was new). */
static inline bool nidus_bloom_block_set(uint8_t *block, const uint64_t mask[8])
{
    uint64_t missing = 0;
    for (unsigned w = 0; w < 8; w++) {
        uint64_t v = nidus_load_le64(block + 8 * w);
        missing |= mask[w] & ~v;
        nidus_store_le64(block + 8 * w, v | mask[w]);
    }
    return missing != 0;
}

/* Counter `slot` (0..127) of a counting block. */
static inline unsigned nidus_counter_get(const uint8_t *block, unsigned slot)
{
    return (block[slot >> 1] >> ((slot & 1) * 4)) & 15u;
}

static inline void nidus_counter_set(uint8_t *block, unsigned slot, unsigned v)
{
    unsigned shift = (slot & 1) * 4;
    block[slot >> 1] = (uint8_t)((block[slot >> 1] & ~(15u << shift)) | (v << shift));
}

static inline void nidus_block_prefetch(const uint8_t *data, uint64_t block)
{
    __builtin_prefetch(data + block * NIDUS_BLOCK_BYTES);
}

/* ---- split blocks (NIDUS_LAYER_SPLIT) ----
 * The block is multiply-shift of the layer's hash, as above. Bit i of a key (k <= 24) lies in word i % 8 of
 * the block's eight 64-bit words, at 6 bits of v_r = x * C_r for round r = i / 8: word w takes bits
 * [16 + 6w, 22 + 6w) of v_r. The high bits of a product depend on all of x, also on the low bits that the
 * block index (taken from x's high bits) leaves free, so the bits are independent of the block. Fixed words
 * make the probe a few shifts and one compare of 8 lanes, with no data-dependent branch; the sizing tables model
 * the pattern (each word a small Bloom filter of its own). */
#define NIDUS_SPLIT_K_MAX 24u
#define NIDUS_SPLIT_FAST_K 8u /* the k of one whole round, which sizing picks from 1 down to about 1e-3 */

static inline uint64_t nidus_split_round(uint64_t x, unsigned r)
{
    static const uint64_t mul[3] = {UINT64_C(0x9E3779B97F4A7C15), UINT64_C(0xC2B2AE3D27D4EB4F),
                                    UINT64_C(0x165667B19E3779F9)};
    return x * mul[r];
}

/* The layer's hash: the key's for layer 0, a remix for the others so their placements are independent. */
static inline uint64_t nidus_layer_hash(uint64_t hash, unsigned layer)
{
    return layer ? nidus_mix64(hash ^ (layer * UINT64_C(0x9E3779B97F4A7C15))) : hash;
}

static inline uint64_t nidus_reduce(uint64_t x, uint64_t n) { return (uint64_t)(((unsigned __int128)x * n) >> 64); }

/* The bits of round r in words [0, lanes) as 8 word masks (0 in the other words). */
static inline void nidus_split_mask(uint64_t x, unsigned r, unsigned lanes, uint64_t mask[8])
{
    uint64_t v = nidus_split_round(x, r);
    for (unsigned w = 0; w < 8; w++)
        mask[w] = w < lanes ? UINT64_C(1) << ((v >> (16 + 6 * w)) & 63) : 0;
}

/* True when every bit of the key's k is set in the block. */
static inline bool nidus_split_has(const uint8_t *block, uint64_t x, unsigned k)
{
    uint64_t missing = 0;
    unsigned r = 0;
    for (; k >= 8; k -= 8, r++) { /* whole rounds: no lane to leave out */
        uint64_t v = nidus_split_round(x, r);
        for (unsigned w = 0; w < 8; w++)
            missing |= (UINT64_C(1) << ((v >> (16 + 6 * w)) & 63)) & ~nidus_load_le64(block + 8 * w);
    }
    if (k) {
        uint64_t mask[8];
        nidus_split_mask(x, r, k, mask);
        for (unsigned w = 0; w < 8; w++)
            missing |= mask[w] & ~nidus_load_le64(block + 8 * w);
    }
    return missing == 0;
}

/* Sets the key's bits; returns whether any was unset. */
static inline bool nidus_split_set(uint8_t *block, uint64_t x, unsigned k)
{
    uint64_t missing = 0;
    for (unsigned r = 0; r * 8 < k; r++) {
        uint64_t mask[8];
        nidus_split_mask(x, r, k - r * 8, mask);
        for (unsigned w = 0; w < 8; w++) {
            uint64_t v = nidus_load_le64(block + 8 * w);
            missing |= mask[w] & ~v;
            nidus_store_le64(block + 8 * w, v | mask[w]);
        }
    }
    return missing != 0;
}

/* ---- plain layers (NIDUS_LAYER_PLAIN) ----
 * m bits; probe i of a key is multiply-shift of mix64(x + (i+1) * golden), x the layer's hash: k independent
 * draws, as the model assumes. (Double hashing, a + i*b mod m, measured 6 % above the model at 0.01 %.) Bits
 * are little-endian in 64-bit words. Calls BODY with `bit` set to each probe. */
#define NIDUS_FOR_EACH_PLAIN_BIT(x, m, k, BODY)                                                               \
    do {                                                                                                       \
        uint64_t s_ = (x);                                                                                     \
        for (unsigned i_ = 0; i_ < (k); i_++) {                                                                \
            s_ += UINT64_C(0x9E3779B97F4A7C15);                                                                \
            uint64_t bit = nidus_reduce(nidus_mix64(s_), (m));                                                 \
            BODY;                                                                                              \
        }                                                                                                      \
    } while (0)

static inline bool nidus_plain_get(const uint8_t *bits, uint64_t bit)
{
    return (nidus_load_le64(bits + (bit >> 6) * 8) >> (bit & 63)) & 1;
}

/* Sets the bit; returns whether it was unset. */
static inline bool nidus_plain_set(uint8_t *bits, uint64_t bit)
{
    uint8_t *p = bits + (bit >> 6) * 8;
    uint64_t v = nidus_load_le64(p), b = UINT64_C(1) << (bit & 63);
    nidus_store_le64(p, v | b);
    return !(v & b);
}

#endif

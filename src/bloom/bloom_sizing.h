/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: sizing Bloom layers so the error measured at capacity meets the target, in constant time. */
#ifndef NIDUS_SRC_BLOOM_SIZING_H
#define NIDUS_SRC_BLOOM_SIZING_H

#include <stdint.h>

#include "nidus/status.h"

/* Blocks above this are refused as too large (2^40 blocks = 64 TiB); plain layers likewise stop at 2^49 bits. */
#define NIDUS_BLOCKS_MAX (UINT64_C(1) << 40)
#define NIDUS_PLAIN_BITS_MAX (UINT64_C(1) << 49)
#define NIDUS_PLAIN_K_MAX 65535u

/* One point of a blocked sizing table: at most `keys_per_block` keys a block, k slots a key. */
typedef struct nidus_sizing_entry {
    double keys_per_block;
    unsigned char k;
} nidus_sizing_entry;

/* Generated at build time by src/gen/bloom_sizing_tables.c: entry g is for the target error 10^(-g/32). */
#define NIDUS_SIZING_STEPS 32
extern const nidus_sizing_entry nidus_split_sizing[257];     /* down to 1e-8 */
extern const nidus_sizing_entry nidus_counting_sizing[481];  /* down to 1e-15 */

/* The plain layer RedisBloom would size for n keys at `error` (its bits, rounded up to 64-bit words), with the
 * integer k that errs least in those bits: never more bits than RedisBloom's, never a higher model error.
 * NIDUS_ERR_TOO_LARGE past NIDUS_PLAIN_BITS_MAX. */
nidus_status nidus_plain_size(uint64_t n, double error, uint64_t *bits, unsigned *k);

/* The fewest split blocks (512 bits, src/bloom_block_impl.h) and their k for n keys at error <= target.
 * NIDUS_ERR_UNSUPPORTED below the table's floor (1e-8), NIDUS_ERR_TOO_LARGE past NIDUS_BLOCKS_MAX. */
nidus_status nidus_split_size(uint64_t n, double target, uint64_t *blocks, unsigned *k);

/* The same for counting blocks (128 counters). NIDUS_ERR_TOO_LARGE below 1e-15 or past NIDUS_BLOCKS_MAX. */
nidus_status nidus_counting_size(uint64_t n, double target, uint64_t *blocks, unsigned *k);

#endif

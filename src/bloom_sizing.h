/* Internal: sizing blocked filters so the error measured at capacity meets the target. */
#ifndef NIDUS_SRC_BLOOM_SIZING_H
#define NIDUS_SRC_BLOOM_SIZING_H

#include <stdint.h>

#include "nidus/status.h"

/* Blocks above this are refused as too large (2^40 blocks = 64 TiB). */
#define NIDUS_BLOCKS_MAX (UINT64_C(1) << 40)

/* The expected false-positive rate of n keys in `blocks` blocks of `slots` slots, k distinct slots a key. */
double nidus_blocked_fpr(double n, double blocks, unsigned slots, unsigned k);

/* The fewest blocks, and the k that achieves it, for n keys at error <= target. NIDUS_ERR_TOO_LARGE when it
 * needs more than NIDUS_BLOCKS_MAX blocks. */
nidus_status nidus_blocked_size(uint64_t n, double target, unsigned slots, uint64_t *blocks, unsigned *k);

#endif

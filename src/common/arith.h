/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: 64-bit arithmetic that cannot wrap, for counts and sizes summed from untrusted parts. */
#ifndef NIDUS_SRC_ARITH_H
#define NIDUS_SRC_ARITH_H

#include <stdint.h>

/* a + b, or UINT64_MAX when the sum does not fit: a sum that saturates is then refused against its limit, or
 * reported as "at least this much". */
static inline uint64_t nidus_add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

#endif

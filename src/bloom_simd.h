/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: split-block probes with AVX2, chosen at run time (per filter, from the CPU it was made or loaded
 * on) where the CPU has it; the portable versions are in bloom_block_impl.h and answer the same. */
#ifndef NIDUS_SRC_BLOOM_SIMD_H
#define NIDUS_SRC_BLOOM_SIMD_H

#include <stdbool.h>
#include <stdint.h>

#include "nidus/bloom.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NIDUS_HAVE_AVX2_PATH 1

/* Whether this CPU runs the AVX2 versions. */
bool nidus_cpu_avx2(void);

/* nidus_split_has / nidus_split_set (bloom_block_impl.h) with AVX2: only call where nidus_cpu_avx2(). */
bool nidus_split_has_avx2(const uint8_t *block, uint64_t x, unsigned k);
bool nidus_split_set_avx2(uint8_t *block, uint64_t x, unsigned k);

/* nidus_bloom_contains_hash / _add_hash for filters that found AVX2 (their `simd`). */
bool nidus_bloom_contains_hash_avx2(const nidus_bloom *bf, uint64_t hash);
nidus_status nidus_bloom_add_hash_avx2(nidus_bloom *bf, uint64_t hash, bool *added);
#else
#define NIDUS_HAVE_AVX2_PATH 0
static inline bool nidus_cpu_avx2(void) { return false; }
#endif

#endif

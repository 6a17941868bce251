/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: split-block probes with AVX2, and the Bloom entry points compiled for x86-64-v3 around them, chosen
 * at run time per filter (its dispatch state, from the CPU it was made or loaded on; isa_impl.h) where the CPU has them. The
 * portable probes are in bloom_block_impl.h and answer the same. */
#ifndef NIDUS_SRC_BLOOM_SIMD_H
#define NIDUS_SRC_BLOOM_SIMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa_impl.h"
#include "nidus/bloom.h"

#if NIDUS_HAVE_ISA_V3
/* nidus_split_has / nidus_split_set (bloom_block_impl.h) with AVX2: only call where nidus_isa_detect() found v3. */
bool nidus_split_has_avx2(const uint8_t *block, uint64_t x, unsigned k);
bool nidus_split_set_avx2(uint8_t *block, uint64_t x, unsigned k);

/* The fast case of nidus_bloom_contains_hash, _contains (the LOOKUP state), _add_hash and _add (ADD) in the v3 copy
 * (NIDUS_BLOOM_STATE_V3); the entry points' dispatch tables call them for those states only. */
bool nidus_bloom_contains_hash_v3(const nidus_bloom *bf, uint64_t hash);
bool nidus_bloom_contains_key_v3(const nidus_bloom *bf, const void *key, size_t len);
nidus_status nidus_bloom_add_hash_v3(nidus_bloom *bf, uint64_t hash, bool *added);
nidus_status nidus_bloom_add_key_v3(nidus_bloom *bf, const void *key, size_t len, bool *added);
/* The batched fast cases (bloom_fast_impl.h): the caller has checked nothing; the second returns how many it added. */
void nidus_bloom_contains_many_v3(const nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *out);
size_t nidus_bloom_add_many_v3(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh);
#endif

#endif

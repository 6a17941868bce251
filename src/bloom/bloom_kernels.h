/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the scalable Bloom filter's lookups and adds, one copy per instruction set (isa_impl.h), all from one
 * template (bloom_kernels_impl.h): `_base` for any CPU of the target, `_v3` for x86-64-v3 (its split probes with
 * AVX2). bloom.c's entry points reach them by the filter's dispatch state (bloom_filter.h), one switch each.
 *   contains_hash, contains_key, add_hash, add_key, contains_many, add_many: the fast case, one split layer of
 *     k = 8 not loading (the LOOKUP state; adds the ADD state). By key only keys of 4 to 16 bytes; anything else
 *     (another key, a full layer) is a tail call to the same copy's general path. add_many returns how many of
 *     the hashes it added (it stops at a full layer).
 *   contains_any, contains_key_any, add_any, add_key_any, contains_many_any: the general path, any filter
 *     (loading, grown, plain or legacy layers, read-only).
 *   split_has, split_set: a split block's probes for any k (tests compare the copies). */
#ifndef NIDUS_SRC_BLOOM_KERNELS_H
#define NIDUS_SRC_BLOOM_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa_impl.h"
#include "nidus/bloom.h"

#define NIDUS_BLOOM_KERNEL_DECLS(ISA)                                                                          \
    bool nidus_bloom_kernel_contains_hash_##ISA(const nidus_bloom *bf, uint64_t hash);                          \
    bool nidus_bloom_kernel_contains_key_##ISA(const nidus_bloom *bf, const void *key, size_t len);             \
    nidus_status nidus_bloom_kernel_add_hash_##ISA(nidus_bloom *bf, uint64_t hash, bool *added);                \
    nidus_status nidus_bloom_kernel_add_key_##ISA(nidus_bloom *bf, const void *key, size_t len, bool *added);   \
    void nidus_bloom_kernel_contains_many_##ISA(const nidus_bloom *bf, const uint64_t *hashes, size_t n,        \
                                                bool *out);                                                     \
    size_t nidus_bloom_kernel_add_many_##ISA(nidus_bloom *bf, const uint64_t *hashes, size_t n, bool *fresh);   \
    bool nidus_bloom_kernel_contains_any_##ISA(const nidus_bloom *bf, uint64_t hash);                           \
    bool nidus_bloom_kernel_contains_key_any_##ISA(const nidus_bloom *bf, const void *key, size_t len);         \
    nidus_status nidus_bloom_kernel_add_any_##ISA(nidus_bloom *bf, uint64_t hash, bool *added);                 \
    nidus_status nidus_bloom_kernel_add_key_any_##ISA(nidus_bloom *bf, const void *key, size_t len,             \
                                                      bool *added);                                             \
    void nidus_bloom_kernel_contains_many_any_##ISA(const nidus_bloom *bf, const uint64_t *hashes, size_t n,    \
                                                    bool *out);                                                 \
    bool nidus_bloom_split_has_##ISA(const uint8_t *block, uint64_t x, unsigned k);                            \
    bool nidus_bloom_split_set_##ISA(uint8_t *block, uint64_t x, unsigned k);

NIDUS_BLOOM_KERNEL_DECLS(base)
#if NIDUS_HAVE_ISA_V3
NIDUS_BLOOM_KERNEL_DECLS(v3)
#endif

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the full form's per-kernel calls, one copy per instruction set (isa_impl.h), all from one template
 * (cuckoo_kernels_impl.h): `_base` for any CPU of the target, `_v3` for x86-64-v3. cuckoo_dispatch.c reaches them by the dispatch byte (cuckoo_dispatch.h),
 * with a tail call, so that neither it nor they need a stack frame on the common path.
 *   plain_* / semi_* / bits_*: a one-table filter whose table takes that fast kernel (t->fast: NIDUS_FAST_PLAIN,
 *     _SEMI, _PLAIN_BITS) and whose overflow map is
 *     empty; by key only for keys of at most 16 bytes (XXH3's short path inlined). Adds only on writable ones:
 *     both buckets full is a tail call to nidus_full_add_slow.
 *   view_*: lookups of the filters the inline path serves (NIDUS_DISPATCH_*_INLINE), through the published view.
 *   contains_hash / count_hash: any full filter (the general paths).
 *   many_hash / many_key: batched lookups of a filter that takes plain_*, semi_* or bits_*.
 *   add_many_hash: batched adds of a writable one of those, until a slow path changes its dispatch byte (returns
 *     how many it added; the caller goes on one by one). */
#ifndef NIDUS_SRC_CUCKOO_KERNELS_H
#define NIDUS_SRC_CUCKOO_KERNELS_H

#include "cuckoo_filter.h"
#include "isa_impl.h"

#define NIDUS_CUCKOO_KERNEL_DECLS(ISA)                                                                         \
    bool nidus_kernel_plain_key_##ISA(const nidus_cuckoo *cf, const void *key, size_t len);                    \
    bool nidus_kernel_semi_key_##ISA(const nidus_cuckoo *cf, const void *key, size_t len);                     \
    bool nidus_kernel_plain_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                                 \
    bool nidus_kernel_semi_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                                  \
    bool nidus_kernel_bits_key_##ISA(const nidus_cuckoo *cf, const void *key, size_t len);                     \
    bool nidus_kernel_bits_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                                  \
    bool nidus_kernel_view_plain_key_##ISA(const nidus_cuckoo *cf, const void *key, size_t len);               \
    bool nidus_kernel_view_semi_key_##ISA(const nidus_cuckoo *cf, const void *key, size_t len);                \
    bool nidus_kernel_view_plain_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                            \
    bool nidus_kernel_view_semi_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                             \
    nidus_status nidus_kernel_add_plain_key_##ISA(nidus_cuckoo *cf, const void *key, size_t len);              \
    nidus_status nidus_kernel_add_semi_key_##ISA(nidus_cuckoo *cf, const void *key, size_t len);               \
    nidus_status nidus_kernel_add_plain_hash_##ISA(nidus_cuckoo *cf, uint64_t hash);                           \
    nidus_status nidus_kernel_add_semi_hash_##ISA(nidus_cuckoo *cf, uint64_t hash);                            \
    nidus_status nidus_kernel_add_bits_key_##ISA(nidus_cuckoo *cf, const void *key, size_t len);               \
    nidus_status nidus_kernel_add_bits_hash_##ISA(nidus_cuckoo *cf, uint64_t hash);                            \
    bool nidus_kernel_contains_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                              \
    uint64_t nidus_kernel_count_hash_##ISA(const nidus_cuckoo *cf, uint64_t hash);                            \
    void nidus_kernel_many_hash_##ISA(const nidus_cuckoo *cf, const uint64_t *hashes, size_t n, bool *out);    \
    void nidus_kernel_many_key_##ISA(const nidus_cuckoo *cf, const void *const *keys, const size_t *lens,       \
                                     size_t n, bool *out);                                                    \
    size_t nidus_kernel_add_many_hash_##ISA(nidus_cuckoo *cf, const uint64_t *hashes, size_t n, nidus_status *st);

NIDUS_CUCKOO_KERNEL_DECLS(base)
#if NIDUS_HAVE_ISA_V3
NIDUS_CUCKOO_KERNEL_DECLS(v3)
#endif

/* Every bucket pair of the key in every table is full (or the fast kernel found its pair full): make room in
 * the newest table, or grow; then redispatch. Shared by every copy. */
nidus_status nidus_full_add_slow(nidus_cuckoo *cf, uint64_t hash);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the windowed filter's lookup kernels, one copy per instruction set (isa_impl.h) from one template
 * (window_kernels_impl.h), as the cuckoo kernels are. A filter's `kernel` byte (nidus_window_plan_kernel, set at
 * making) names the kernel its lookups take and the copy:
 *   word_* / bits_* (by hash, by 8-byte key; _nw for tables past the offsets' reach): a table of one-word buckets, read with one 64-bit load each at i * bucket_bytes (whole-byte
 *     buckets: b=4 f=13 + 3) or at bit i * bucket_bits (at most NIDUS_SHORT_BITS_MAX bits: b=4 f=10 + 3);
 *   many: batched lookups of either, by blocks (hash, locate and prefetch a block, then probe it).
 * Every kernel answers exactly as nidus_window_contains_general, which serves what the kernels do not
 * (nidus_window_kernel_serves): a time without the precomputed shortcut (2 epochs or more after the latest
 * tick a write or sweep step saw). In a table whose overflow map is not empty (stash entries, duplicates beyond
 * a pair's share), a key the two buckets do not hold is looked for in the map too, out of line
 * (nidus_window_overflow_live). */
#ifndef NIDUS_SRC_WINDOW_KERNELS_H
#define NIDUS_SRC_WINDOW_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuckoo_table_impl.h"
#include "isa_impl.h"
#include "window_filter.h"

/* Values of nidus_window.kernel: WORD or BITS, | NOWRAP for a table not smaller than the reach (its offsets need
 * no reducing: nidus_table.offset_wraps false), | NIDUS_ISA_V3 for the x86-64-v3 copy. */
enum { NIDUS_WKERNEL_GENERAL = 0, NIDUS_WKERNEL_WORD = 2, NIDUS_WKERNEL_BITS = 4, NIDUS_WKERNEL_NOWRAP = 8 };

/* The kernel a filter's table calls for (its shape and the CPU's copy; the table's state is read by the kernels). */
static inline uint8_t nidus_window_plan_kernel(const nidus_window *w)
{
    const nidus_table *t = &w->table;
    unsigned k = t->probe == NIDUS_PROBE_PLAIN_WORD                                         ? NIDUS_WKERNEL_WORD
                 : t->probe == NIDUS_PROBE_PLAIN_BITS && t->bucket_bits <= NIDUS_SHORT_BITS_MAX ? NIDUS_WKERNEL_BITS
                                                                                            : NIDUS_WKERNEL_GENERAL;
    if (k && !t->offset_wraps)
        k |= NIDUS_WKERNEL_NOWRAP;
    return (uint8_t)(k && t->isa == NIDUS_ISA_V3 ? k | NIDUS_ISA_V3 : k);
}

/* Whether the kernels answer a lookup at `now`: within the epoch of the latest tick a write or sweep step saw,
 * or the next (the dead-age constants age_dead[0], [1] are set: nidus_window_clock_changed). */
static inline bool nidus_window_kernel_serves(const nidus_window *w, uint64_t now)
{
    return now < w->kernel_until;
}

#define NIDUS_WKERNEL_DECL_ONE(name, ISA)                                                                       \
    bool nidus_wkernel_##name##_hash_##ISA(const nidus_window *w, uint64_t hash, uint64_t now);                 \
    bool nidus_wkernel_##name##_key8_##ISA(const nidus_window *w, const void *key, uint64_t now);

#define NIDUS_WINDOW_KERNEL_DECLS(ISA)                                                                          \
    NIDUS_WKERNEL_DECL_ONE(word, ISA)                                                                           \
    NIDUS_WKERNEL_DECL_ONE(bits, ISA)                                                                           \
    NIDUS_WKERNEL_DECL_ONE(word_nw, ISA)                                                                        \
    NIDUS_WKERNEL_DECL_ONE(bits_nw, ISA)                                                                        \
    void nidus_wkernel_many_##ISA(const nidus_window *w, const uint64_t *hashes, const void *const *keys,       \
                                  const size_t *lens, size_t n, uint64_t now, bool *out);

NIDUS_WINDOW_KERNEL_DECLS(base)
#if NIDUS_HAVE_ISA_V3
NIDUS_WINDOW_KERNEL_DECLS(v3)
#endif

/* `return`s the kernel's answer of operation `op` (hash, key8: an 8-byte key) with the arguments that follow, for a filter a
 * kernel serves (kernel byte k); does nothing for any other. Tests, not a switch: the common kernels (tables past
 * the reach, bits then words) are found with a compare each, without a jump table's indirect jump. */
#define NIDUS_WKERNEL_CASES(k, op, ISA, V3, ...)                                                                \
    if ((k) == (NIDUS_WKERNEL_BITS | NIDUS_WKERNEL_NOWRAP | (V3)))                                              \
        return nidus_wkernel_bits_nw_##op##_##ISA(__VA_ARGS__);                                                \
    if ((k) == (NIDUS_WKERNEL_WORD | NIDUS_WKERNEL_NOWRAP | (V3)))                                              \
        return nidus_wkernel_word_nw_##op##_##ISA(__VA_ARGS__);                                                \
    if ((k) == (NIDUS_WKERNEL_BITS | (V3)))                                                                     \
        return nidus_wkernel_bits_##op##_##ISA(__VA_ARGS__);                                                   \
    if ((k) == (NIDUS_WKERNEL_WORD | (V3)))                                                                     \
        return nidus_wkernel_word_##op##_##ISA(__VA_ARGS__);
#if NIDUS_HAVE_ISA_V3
#define NIDUS_WKERNEL_DISPATCH(k, op, ...)                                                                      \
    NIDUS_WKERNEL_CASES(k, op, v3, NIDUS_ISA_V3, __VA_ARGS__)                                                  \
    NIDUS_WKERNEL_CASES(k, op, base, 0, __VA_ARGS__)
#else
#define NIDUS_WKERNEL_DISPATCH(k, op, ...) NIDUS_WKERNEL_CASES(k, op, base, 0, __VA_ARGS__)
#endif

/* window.c: the lookup of any windowed filter at any time (two buckets of any shape, the overflow map). */
bool nidus_window_contains_general(const nidus_window *w, uint64_t hash, uint64_t now);
/* window.c: whether the overflow map holds a live copy at `now` of fp in the pair (i, j). */
bool nidus_window_overflow_live(const nidus_window *w, uint64_t i, uint64_t j, uint32_t fp, uint64_t now);

#endif

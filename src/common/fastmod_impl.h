/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: exact 64-bit modulo by a run-time constant without a hardware divide.
 *
 * Granlund and Montgomery, "Division by invariant integers using multiplication" (PLDI 1994), figure 4.1:
 * with l = ceil(log2 d) and m' = floor(2^64 (2^l - d) / d) + 1 (which fits in 64 bits),
 *     t = mulhi(m', a),   floor(a / d) = (t + ((a - t) >> 1)) >> (l - 1)     for every 64-bit a,
 * and a mod d = a - floor(a / d) * d. Two multiplies (one of them a 64x64 -> high 64) and four simple
 * operations, no branch; the 128-bit form this replaces (Lemire's fastmod with a 128-bit magic) took four.
 * The result is the exact remainder either way, so placement and compaction are unchanged. */
#ifndef NIDUS_SRC_FASTMOD_IMPL_H
#define NIDUS_SRC_FASTMOD_IMPL_H

#include <stdint.h>

typedef struct nidus_fastmod {
    uint64_t magic; /* m' above */
    uint64_t d;
    unsigned shift; /* l - 1 */
} nidus_fastmod;

/* d must be at least 2 (table sizes are). */
static inline nidus_fastmod nidus_fastmod_make(uint64_t d)
{
    nidus_fastmod m;
    unsigned l = 64 - (unsigned)__builtin_clzll(d - 1); /* ceil(log2 d), 1..64 */
    unsigned __int128 gap = ((unsigned __int128)1 << l) - d; /* 2^l - d < d */
    m.magic = (uint64_t)((gap << 64) / d) + 1;
    m.d = d;
    m.shift = l - 1;
    return m;
}

static inline uint64_t nidus_fastmod_div(const nidus_fastmod *m, uint64_t a)
{
    uint64_t t = (uint64_t)(((unsigned __int128)m->magic * a) >> 64);
    return (t + ((a - t) >> 1)) >> m->shift;
}

static inline uint64_t nidus_fastmod_reduce(const nidus_fastmod *m, uint64_t a)
{
    return a - nidus_fastmod_div(m, a) * m->d;
}

#endif

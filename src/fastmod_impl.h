/* Internal: exact 64-bit modulo by a run-time constant without a hardware divide (Lemire, Kaser & Kurz,
 * "Faster remainder by direct computation", 2019). Three multiplies instead of a ~40-cycle `div`. */
#ifndef NIDUS_SRC_FASTMOD_IMPL_H
#define NIDUS_SRC_FASTMOD_IMPL_H

#include <stdint.h>

typedef struct nidus_fastmod {
    unsigned __int128 magic; /* ceil(2^128 / d) */
    uint64_t d;
} nidus_fastmod;

/* d must be at least 1. */
static inline nidus_fastmod nidus_fastmod_make(uint64_t d)
{
    nidus_fastmod m;
    m.magic = ~(unsigned __int128)0 / d + 1;
    m.d = d;
    return m;
}

/* The fractional part of a/d as a 128-bit fixed-point number, times d, keeping the integer part. */
static inline uint64_t nidus_fastmod_reduce(const nidus_fastmod *m, uint64_t a)
{
    unsigned __int128 frac = m->magic * a;
    unsigned __int128 lo = (unsigned __int128)(uint64_t)frac * m->d;
    unsigned __int128 hi = (unsigned __int128)(uint64_t)(frac >> 64) * m->d;
    return (uint64_t)((hi + (lo >> 64)) >> 64);
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Sizing Bloom layers without a search: a closed form for plain layers, a table read for blocked ones (the
 * tables and the model behind them: src/gen/bloom_sizing_tables.c). Every call costs well under a
 * microsecond, so BF.RESERVE and every growth step are cheap. */
#include <math.h>

#include "bloom_sizing.h"

/* A plain Bloom filter's expected error with m bits, n keys and k probes: (1 - e^(-kn/m))^k. */
static double plain_fpr(double m, double n, unsigned k) { return exp(k * log1p(-exp(-(double)k * n / m))); }

nidus_status nidus_plain_size(uint64_t n, double error, uint64_t *bits, unsigned *k)
{
    /* RedisBloom's bits: n * ln(1/e) / ln(2)^2, truncated, then rounded up to whole 64-bit words */
    double per_key = -log(error) / 0.480453013918201; /* ln(2)^2, as RedisBloom rounds it */
    double raw = (double)n * per_key;
    if (!(raw < (double)NIDUS_PLAIN_BITS_MAX))
        return NIDUS_ERR_TOO_LARGE;
    uint64_t m = (uint64_t)raw;
    m = m ? (m + 63) / 64 * 64 : 64;
    /* the best k is one of the two integers around ln 2 * m / n */
    double ideal = 0.6931471805599453 * (double)m / (double)n;
    unsigned lo = ideal < 1.0 ? 1u : ideal >= NIDUS_PLAIN_K_MAX ? NIDUS_PLAIN_K_MAX : (unsigned)ideal;
    unsigned hi = lo < NIDUS_PLAIN_K_MAX ? lo + 1 : lo;
    *k = plain_fpr((double)m, (double)n, hi) < plain_fpr((double)m, (double)n, lo) ? hi : lo;
    *bits = m;
    return NIDUS_OK;
}

/* Entry g of a table holds the target 10^(-g/STEPS): the first at or below `target` is g = ceil(-STEPS log10). */
static nidus_status table_size(const nidus_sizing_entry *t, unsigned count, uint64_t n, double target,
                               uint64_t *blocks, unsigned *k)
{
    double g = ceil(-NIDUS_SIZING_STEPS * log10(target));
    if (!(g < (double)count))
        return NIDUS_ERR_UNSUPPORTED;
    const nidus_sizing_entry *e = &t[g > 0 ? (unsigned)g : 0];
    double b = ceil((double)n / e->keys_per_block);
    if (!(b <= (double)NIDUS_BLOCKS_MAX))
        return NIDUS_ERR_TOO_LARGE;
    *blocks = b < 1.0 ? 1 : (uint64_t)b;
    *k = e->k;
    return NIDUS_OK;
}

nidus_status nidus_split_size(uint64_t n, double target, uint64_t *blocks, unsigned *k)
{
    return table_size(nidus_split_sizing, sizeof nidus_split_sizing / sizeof *nidus_split_sizing, n, target,
                      blocks, k);
}

nidus_status nidus_counting_size(uint64_t n, double target, uint64_t *blocks, unsigned *k)
{
    nidus_status st = table_size(nidus_counting_sizing, sizeof nidus_counting_sizing / sizeof *nidus_counting_sizing,
                                 n, target, blocks, k);
    return st == NIDUS_ERR_UNSUPPORTED ? NIDUS_ERR_TOO_LARGE : st;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: semi-sorted bucket encoding (b = 4), from Fan et al., "Cuckoo Filter: Practically Better Than
 * Bloom", section 5.2.
 *
 * The four fingerprints of a bucket are kept sorted by their low nibble; the sorted nibble quadruple is stored as
 * its 12-bit rank among the 3876 possible ones, followed by the four (f-4)-bit high parts in the same order.
 * A bucket costs 4f-4 bits instead of 4f: one bit per item saved at the same error rate. Empty slots are
 * fingerprint 0 and sort first. */
#ifndef NIDUS_SRC_SEMISORT_H
#define NIDUS_SRC_SEMISORT_H

#include <stdint.h>

#define NIDUS_SEMISORT_CODES 3876u
#define NIDUS_SEMISORT_RANK_BITS 12u
/* Entries of the unrank table: every value of the rank field, not only the codes (see nidus_semisort_nibbles). */
#define NIDUS_SEMISORT_RANKS (1u << NIDUS_SEMISORT_RANK_BITS)

/* rank_part[k][n]: the binomial C(n+k, k+1) contributed by nibble n at sorted position k. */
extern const uint16_t nidus_semisort_rank_part[4][16];
/* unrank[rank]: the sorted nibbles, n0 in bits 0-3 ... n3 in bits 12-15; ranks 3876..4095 (encoded by no
 * bucket) give 0xffff. 8 KiB. */
extern const uint16_t nidus_semisort_unrank[NIDUS_SEMISORT_RANKS];

/* The four sorted nibbles of a semi-sorted bucket whose bits start at the low bits of `raw` (the rank field
 * first). Memory-safe for any bits: a bucket read from a file whose slots were not validated (a lazily verified
 * file, codec.h NIDUS_DECODE_BODY_TRUSTED) may hold a rank no bucket encodes to; it decodes as a full bucket
 * of nibbles 15, and any write re-encodes the bucket with a real rank. */
static inline unsigned nidus_semisort_nibbles(uint64_t raw)
{
    return nidus_semisort_unrank[raw & (NIDUS_SEMISORT_RANKS - 1)];
}

/* Sorts four fingerprints by (low nibble, then high part): the canonical order, so equal buckets encode to
 * equal bits. A fixed five-compare network. */
static inline void nidus_semisort_sort4(uint32_t fp[4])
{
#define NIDUS_KEY_(x) (((x) << 28) | ((x) >> 4))
#define NIDUS_CSWAP_(a, b)                                                                                     \
    do {                                                                                                       \
        uint32_t ka = NIDUS_KEY_(fp[a]), kb = NIDUS_KEY_(fp[b]);                                               \
        if (ka > kb) {                                                                                         \
            uint32_t t_ = fp[a];                                                                               \
            fp[a] = fp[b];                                                                                     \
            fp[b] = t_;                                                                                        \
        }                                                                                                      \
    } while (0)
    NIDUS_CSWAP_(0, 1);
    NIDUS_CSWAP_(2, 3);
    NIDUS_CSWAP_(0, 2);
    NIDUS_CSWAP_(1, 3);
    NIDUS_CSWAP_(1, 2);
#undef NIDUS_CSWAP_
#undef NIDUS_KEY_
}

/* The rank of the low nibbles of four fingerprints already in canonical order. */
static inline unsigned nidus_semisort_rank(const uint32_t fp[4])
{
    return nidus_semisort_rank_part[0][fp[0] & 15] + nidus_semisort_rank_part[1][fp[1] & 15] +
           nidus_semisort_rank_part[2][fp[2] & 15] + nidus_semisort_rank_part[3][fp[3] & 15];
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the add kernels of tables whose buckets are one word (NIDUS_PROBE_PLAIN_WORD: b=4 f=12 and the other
 * whole-byte shapes up to 64 bits; NIDUS_PROBE_PLAIN_BITS: the other plain buckets up to 64 bits, b=4 f=13 and
 * b=2 f=13..31, read at a bit offset; NIDUS_PROBE_SEMI_WORD: semi-sorted b=4 f=13), inline so that an add that
 * finds a free slot compiles to straight-line code in nidus_cuckoo_add.
 *
 * Which bucket takes the item: the one with more free slots, the primary one on a tie (see DESIGN-NOTES,
 * "Adds"). Each kernel writes the same bytes as the general path (nidus_table_add in cuckoo_table.c): the
 * lowest free slot of a plain bucket, the canonical encoding of a semi-sorted one; tests/unit/test_cuckoo_add.c
 * compares them. */
#ifndef NIDUS_SRC_CUCKOO_ADD_IMPL_H
#define NIDUS_SRC_CUCKOO_ADD_IMPL_H

#include "cuckoo_table_impl.h"

/* Free slots of a plain one-word bucket, given its zero-field mask z (nidus_swar_zero_fields): the mask's high
 * bits moved to the bottom of each field and summed into the top field by one multiply (at most 8 <= 2^f - 1,
 * so no field carries into the next). */
static inline unsigned nidus_table_word_free(const nidus_table *t, uint64_t z)
{
    unsigned f = t->shape.fp_bits, top = (t->shape.bucket_size - 1u) * f;
    return (unsigned)((((z >> (f - 1u)) * t->chunk_swar[0].ones) >> top) & 15u);
}

/* Plain one-word buckets i and j of fp: puts fp into the lowest free slot of the one with more free slots (i on
 * a tie); false when both are full. The 8-byte store rewrites the bytes of the next bucket that the load read,
 * unchanged; the slack keeps it inside the table. */
static inline bool nidus_table_word_put_pair(nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    uint8_t *pi = t->data + i * t->bucket_bytes, *pj = t->data + j * t->bucket_bytes;
    uint64_t wi = nidus_load_le64(pi), wj = nidus_load_le64(pj);
    uint64_t zi = nidus_swar_zero_fields(&t->chunk_swar[0], wi), zj = nidus_swar_zero_fields(&t->chunk_swar[0], wj);
    if (!(zi | zj))
        return false;
    bool to_j = nidus_table_word_free(t, zj) > nidus_table_word_free(t, zi);
    uint8_t *p = to_j ? pj : pi;
    uint64_t w = to_j ? wj : wi, z = to_j ? zj : zi;
    unsigned shift = (unsigned)__builtin_ctzll(z) - (t->shape.fp_bits - 1u);
    nidus_store_le64(p, w | ((uint64_t)fp << shift));
    return true;
}

/* Plain buckets of a NIDUS_PROBE_PLAIN_BITS table (at most 64 bits, not whole bytes): as
 * nidus_table_word_put_pair, each bucket read as one word at its bit offset (`short_word`: the table takes
 * NIDUS_FAST_PLAIN_BITS, whose buckets need no 9th byte; a constant at each call). The chosen slot is empty, so
 * fp is ORed into the 64 bits at its byte (its bit offset there plus f is at most 7 + 32); the bytes past it are
 * rewritten unchanged, inside the table's slack as every bit-level write is. */
static inline __attribute__((always_inline)) bool nidus_table_bits_put_pair(nidus_table *t, uint64_t i, uint64_t j,
                                                                            uint32_t fp, bool short_word)
{
    uint64_t wi = short_word ? nidus_table_short_bits_word(t, i) : nidus_table_bits_word(t, i);
    uint64_t wj = short_word ? nidus_table_short_bits_word(t, j) : nidus_table_bits_word(t, j);
    uint64_t zi = nidus_swar_zero_fields(&t->chunk_swar[0], wi), zj = nidus_swar_zero_fields(&t->chunk_swar[0], wj);
    if (!(zi | zj))
        return false;
    bool to_j = nidus_table_word_free(t, zj) > nidus_table_word_free(t, zi);
    uint64_t pos = (to_j ? j : i) * t->bucket_bits + (unsigned)__builtin_ctzll(to_j ? zj : zi) -
                   (t->shape.fp_bits - 1u);
    uint8_t *p = t->data + (pos >> 3);
    nidus_store_le64(p, nidus_load_le64(p) | ((uint64_t)fp << (pos & 7)));
    return true;
}

/* Semi-sorted one-word buckets: the four sort keys of word w, (low nibble, high part) as nidus_semisort_sort4
 * orders them, with the free slots (key 0) first. */
static inline void nidus_table_semi_word_keys(const nidus_table *t, uint64_t w, uint32_t k[4])
{
    unsigned hb = t->shape.fp_bits - 4u;
    uint32_t hmask = (uint32_t)nidus_low_mask(hb);
    uint64_t high = w >> NIDUS_SEMISORT_RANK_BITS;
    unsigned nib = nidus_semisort_nibbles(w);
    for (unsigned s = 0; s < 4; s++)
        k[s] = (((nib >> (4 * s)) & 15u) << 28) | ((uint32_t)(high >> (s * hb)) & hmask);
}

/* The bucket bits (rank, then high parts) of four sort keys in canonical order. */
static inline uint64_t nidus_table_semi_word_encode(const nidus_table *t, const uint32_t k[4])
{
    unsigned hb = t->shape.fp_bits - 4u;
    uint32_t hmask = (uint32_t)nidus_low_mask(hb);
    uint64_t enc = (uint64_t)nidus_semisort_rank_part[0][k[0] >> 28] + nidus_semisort_rank_part[1][k[1] >> 28] +
                   nidus_semisort_rank_part[2][k[2] >> 28] + nidus_semisort_rank_part[3][k[3] >> 28];
    for (unsigned s = 0; s < 4; s++)
        enc |= (uint64_t)(k[s] & hmask) << (NIDUS_SEMISORT_RANK_BITS + s * hb);
    return enc;
}

/* Puts the fingerprint of sort key `key` into the first (free) slot of keys k and moves it up past the others,
 * which are sorted already: three compare-and-swaps rather than a sort. */
static inline void nidus_table_semi_word_insert(uint32_t k[4], uint32_t key)
{
    k[0] = key;
    for (unsigned s = 1; s < 4; s++) {
        uint32_t lo = k[s - 1] < k[s] ? k[s - 1] : k[s], hi = k[s - 1] < k[s] ? k[s] : k[s - 1];
        k[s - 1] = lo;
        k[s] = hi;
    }
}

/* Sorts four sort keys by value (nidus_semisort_sort4's network, on keys rather than fingerprints). */
static inline void nidus_table_semi_keys_sort(uint32_t k[4])
{
    static const unsigned char pairs[5][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {1, 2}};
    for (unsigned c = 0; c < 5; c++) {
        uint32_t a = k[pairs[c][0]], b = k[pairs[c][1]];
        k[pairs[c][0]] = a < b ? a : b;
        k[pairs[c][1]] = a < b ? b : a;
    }
}

/* Semi-sorted one-word buckets i and j of fp: as nidus_table_word_put_pair. Both are decoded into sort keys
 * (free slots are the zero keys, first); the new key takes the chosen bucket's first slot and moves up. */
static inline bool nidus_table_semi_put_pair(nidus_table *t, uint64_t i, uint64_t j, uint32_t fp)
{
    uint8_t *pi = t->data + i * t->bucket_bytes, *pj = t->data + j * t->bucket_bytes;
    uint64_t wi = nidus_load_le64(pi), wj = nidus_load_le64(pj);
    uint32_t ki[4], kj[4];
    nidus_table_semi_word_keys(t, wi, ki);
    nidus_table_semi_word_keys(t, wj, kj);
    unsigned fi = (unsigned)(ki[0] == 0) + (ki[1] == 0) + (ki[2] == 0) + (ki[3] == 0);
    unsigned fj = (unsigned)(kj[0] == 0) + (kj[1] == 0) + (kj[2] == 0) + (kj[3] == 0);
    if (!(fi | fj))
        return false;
    bool to_j = fj > fi;
    uint8_t *p = to_j ? pj : pi;
    uint64_t w = to_j ? wj : wi;
    uint32_t *k = to_j ? kj : ki;
    nidus_table_semi_word_insert(k, ((fp & 15u) << 28) | (fp >> 4));
    nidus_store_le64(p, (w & ~nidus_low_mask(t->bucket_bits)) | nidus_table_semi_word_encode(t, k));
    return true;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: one fixed-size cuckoo table of bit-packed fingerprints.
 *
 * The table knows buckets and fingerprints, not keys: callers derive (bucket, fingerprint) from a key's hash
 * with nidus_table_locate, so a filter made of several tables hashes once. */
#ifndef NIDUS_SRC_CUCKOO_TABLE_H
#define NIDUS_SRC_CUCKOO_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "arith.h"
#include "bits_impl.h"
#include "fastmod_impl.h"
#include "nidus/alloc.h"
#include "nidus/status.h"
#include "overflow.h"
#include "swar_impl.h"

#define NIDUS_TABLE_MAX_CHUNKS 4u

/* Buckets one add's search may reach (a bound on its stack frame and its time, whatever max_kicks is). */
#ifndef NIDUS_TABLE_SEARCH_NODES
#define NIDUS_TABLE_SEARCH_NODES 1024u
#endif

/* Overflow entries an add may hold for items its search could not place (the stash): up to this many entries in a
 * table's overflow map (duplicate entries included), and only then NIDUS_ERR_FULL. A few items that wait beside a
 * full bucket pair let a small table run to a higher load before its first failure (b=2, f=9, 20
 * kicks: 100 items need 160 slots without a stash, 140 with 4 entries, 124 with 8, each in every one of 100,000
 * seeds; `nidus_bench_cuckoo_load need 100 100000 2 20 STASH 9`). 8, not more: a packed filter keeps up to 8
 * entries in an 80-byte side block (cuckoo_packed.h). */
#define NIDUS_TABLE_STASH 8u

/* Shape of a table: everything that decides where a fingerprint goes, and so must be saved with it. */
typedef struct nidus_table_shape {
    uint64_t buckets;      /* even, >= 2 */
    uint8_t bucket_size;   /* 1, 2, 4 or 8 */
    uint8_t fp_bits;       /* 4..32 (5..32 when semi-sorted) */
    uint8_t offset_bits;   /* low fingerprint bits that choose the alternate bucket's offset, <= fp_bits */
    uint8_t reach_log2;    /* the alternate bucket lies less than 2^reach_log2 buckets away, 1..32 */
    bool semi_sort;        /* bucket_size 4 only */
    bool mod_placement;    /* the placement of format versions 1-4 (cuckoo_table_impl.h): filters loaded from them */
    /* Which step of the filter's growth made this shape (0: the first table's): not a placement input, but what
     * merges match tables by. Tables of one level (siblings, made by merges) share their shape. */
    uint8_t level;
    /* Range placement: buckets / the filter's first table's buckets (growth multiplies it by the expansion);
     * 0 is read as 1. Unused by mod placement. */
    uint64_t stride;
} nidus_table_shape;

/* Every filter holds one of these per table, so it is kept small: 256 bytes on x86-64, the narrow fields packed
 * together, and no kick log: nothing moves until an add's search has found a path, so giving up undoes nothing. */
typedef struct nidus_table {
    nidus_table_shape shape;
    uint8_t *data;           /* buckets * bucket_bits bits, then NIDUS_BITS_SLACK zero bytes: nidus_table_bytes */
    nidus_fastmod bucket_mod;
    uint16_t bucket_bits;    /* b*f, or 4f-4 when semi-sorted: at most 256 */
    uint16_t slot_of_bit;    /* ceil(2^16 / f): (bit * slot_of_bit) >> 16 == bit / f for bit < 64 */
    uint32_t fp_mask;
    uint32_t offset_mask;
    /* A bit per (pair, fingerprint) the overflow map may hold (nidus_overflow_sig_bit), all of them while the map
     * holds more than 16 entries, none while it is empty: a lookup that misses the slots asks the map only when
     * its bit is set. A full first table of a grown filter keeps its stash, and most of its misses stop here. */
    uint32_t overflow_sig;
    /* SWAR view of a plain bucket: `chunks` words of up to `fields_per_chunk` fields each. */
    uint8_t chunks;
    uint8_t fields_per_chunk;
    uint8_t chunk_bits[NIDUS_TABLE_MAX_CHUNKS];
    uint16_t max_kicks;      /* the most fingerprints one add may move (NIDUS_CUCKOO_MAX_KICKS fits) */
    nidus_swar chunk_swar[NIDUS_TABLE_MAX_CHUNKS];
    nidus_swar semi_swar;    /* the four (f-4)-bit high parts of a semi-sorted bucket */
    uint64_t semi_gather;    /* multiplier gathering their match bits into a slot mask; 0 when f < 8 */
    uint64_t occupied;       /* fingerprints in slots */
    nidus_overflow overflow; /* duplicate copies beyond their bucket pair */
    uint8_t bucket_bytes;    /* bucket_bits / 8 when buckets are whole bytes (NIDUS_PROBE_*_WORD), <= 8 */
    uint8_t offset_shift;    /* 32 - reach_log2 */
    unsigned char probe;     /* how lookups read a bucket: NIDUS_PROBE_* in cuckoo_table_impl.h */
    unsigned char fast;      /* NIDUS_FAST_*: the filter-level kernel, `kernel` while the overflow map is empty */
    bool offset_wraps;       /* buckets < 2^reach_log2: an offset may need reducing modulo buckets */
    unsigned char isa;       /* NIDUS_ISA_*: which compiled copy of the lookup kernels (isa_impl.h) */
    bool borrowed;           /* data belongs to someone else (a mapped file): read-only, never freed */
    unsigned char kernel;    /* NIDUS_FAST_*: the lookup kernel the shape allows (cuckoo_table_impl.h) */
    uint64_t xor_limit;      /* range placement: alt is a XOR below this high digit (nidus_range_xor_limit) */
} nidus_table;

_Static_assert(sizeof(void *) != 8 || sizeof(nidus_table) == 256, "nidus_table stays 256 bytes on 64-bit targets");

/* Checks a shape; NIDUS_ERR_INVALID_ARGUMENT or NIDUS_ERR_TOO_LARGE when it cannot be built. */
nidus_status nidus_table_check_shape(const nidus_table_shape *shape);

/* Bytes of fingerprint storage a shape needs (without slack). */
uint64_t nidus_table_shape_bytes(const nidus_table_shape *shape);

/* Builds an empty table. On failure `t` holds nothing to release. */
nidus_status nidus_table_init(nidus_table *t, const nidus_table_shape *shape, unsigned max_kicks,
                              const nidus_allocator *a);

/* Builds a read-only table over `data` (nidus_table_data_bytes(shape) bytes, slack included), which must
 * outlive it. Allocates nothing; check the contents with nidus_table_validate before probing. */
nidus_status nidus_table_init_borrowed(nidus_table *t, const nidus_table_shape *shape, const uint8_t *data);

/* Makes a borrowed table writable in place (its owner's memory is writable: a private file mapping): sets the
 * moves an add may make to `max_kicks` (1..65535). Allocates nothing; its data is still never freed. */
nidus_status nidus_table_borrow_writable(nidus_table *t, unsigned max_kicks, const nidus_allocator *a);

void nidus_table_release(nidus_table *t, const nidus_allocator *a);

/* Bytes of `data` a table of this shape holds: the fingerprints, then NIDUS_BITS_SLACK zero bytes. */
uint64_t nidus_table_data_bytes(const nidus_table_shape *shape);

/* Checks untrusted table contents: every semi-sorted rank in range and every bucket in canonical order,
 * the bits past the last bucket zero, every overflow entry where only an add could have put it. Recomputes
 * `occupied`. NIDUS_ERR_CORRUPT when anything is off. */
nidus_status nidus_table_validate(nidus_table *t);

/* nidus_table_validate in two parts, for contents that arrive in pieces: buckets [from, to) (their occupied slots
 * added to *occupied), and the rest once every bucket is in (the bits past the last bucket, the slack, the
 * overflow map). Neither sets `occupied`. */
nidus_status nidus_table_validate_buckets(const nidus_table *t, uint64_t from, uint64_t to, uint64_t *occupied);
nidus_status nidus_table_validate_rest(const nidus_table *t);

/* The overflow part of nidus_table_validate alone: every entry in range, and either a duplicate (its fingerprint
 * has at least bucket_size copies in its pair's slots) or a stash entry (both buckets of its pair full). */
nidus_status nidus_table_validate_overflow(const nidus_table *t);

/* Puts fp into bucket i or its alternate, whichever has more free slots (i on a tie), without kicking; false
 * when both are full. */
bool nidus_table_place_free(nidus_table *t, uint64_t i, uint32_t fp);

/* The fingerprints of bucket i (0 for an empty slot), bucket_size of them. */
void nidus_table_read_bucket(const nidus_table *t, uint64_t i, uint32_t *fps);

/* Removes one copy of fp from bucket i itself (not its alternate, not the overflow); false when absent. Stash
 * entries stay as they are: call nidus_table_stash_refill(t, i) afterwards to keep their pairs full. */
bool nidus_table_take(nidus_table *t, uint64_t i, uint32_t fp);

/* Overflow entries that are stash entries: fewer than bucket_size copies of their fingerprint in their pair's
 * slots (the others count duplicates beyond the pair's share). Scans the map. */
uint64_t nidus_table_stash_entries(const nidus_table *t);

/* Re-derives what depends on the overflow map: which lookup kernel the table takes (t->fast: the kernels that skip
 * the map serve only tables whose map is empty) and t->overflow_sig. Every change of t->overflow calls it
 * afterwards (a lookup trusts the signature: an entry missing from it would be a false negative). */
void nidus_table_overflow_changed(nidus_table *t);

/* Copies of fp in the overflow map for the pair of bucket i. */
uint64_t nidus_table_overflow_count(const nidus_table *t, uint64_t i, uint32_t fp);

/* Adds fingerprint fp (nonzero, < 2^fp_bits) whose primary bucket is i. When both buckets are full and the search
 * finds no way to free a slot, the copy waits in the overflow map (a stash entry, for a pair whose two buckets are
 * full) if the map then holds at most NIDUS_TABLE_STASH entries and the table has more than two buckets (a
 * two-bucket table holds its 2b items without one). NIDUS_ERR_FULL leaves the table as it was;
 * NIDUS_ERR_NO_MEMORY only when the overflow map could not grow. */
nidus_status nidus_table_add(nidus_table *t, const nidus_allocator *a, uint64_t i, uint32_t fp);

/* nidus_table_add for a caller that already found both buckets of fp full (nidus_table_place_free): counts
 * the copy on the side or moves other fingerprints out of the way, as nidus_table_add would. */
nidus_status nidus_table_add_full(nidus_table *t, const nidus_allocator *a, uint64_t i, uint32_t fp);

/* Bucket x has just lost a copy: moves one stash entry whose pair holds x into the freed slot, if there is one, so
 * that every stash entry's pair stays full (nidus_table_remove does it itself). */
void nidus_table_stash_refill(nidus_table *t, uint64_t x);

/* Removes one copy (from the overflow map first); false when there is none. When it frees a slot, a stash entry
 * whose pair holds that bucket moves into it, so that a stash entry's pair stays full. */
bool nidus_table_remove(nidus_table *t, uint64_t i, uint32_t fp);

/* Copies of fp in the pair of bucket i, overflow included. */
uint64_t nidus_table_count(const nidus_table *t, uint64_t i, uint32_t fp);

void nidus_table_clear(nidus_table *t);

/* Bytes held through the allocator, the table's own struct excluded. */
uint64_t nidus_table_memory(const nidus_table *t);

/* Bytes of t->data: nidus_table_data_bytes of its shape. */
static inline uint64_t nidus_table_bytes(const nidus_table *t)
{
    return (t->shape.buckets * t->bucket_bits + 7) / 8 + NIDUS_BITS_SLACK;
}

/* The most items a filter's tables may hold in all, copies counted (cuckoo and windowed filters): decoders refuse
 * more and merges stop short of it, so that every sum of counts over a filter's tables fits in 64 bits, and adds,
 * a copy at a time, never reach a counter's end. */
#define NIDUS_TABLE_MAX_ITEMS (UINT64_MAX / 2)

/* Items stored: fingerprints in slots plus overflow copies (UINT64_MAX when that does not fit). */
static inline uint64_t nidus_table_items(const nidus_table *t)
{
    return nidus_add_sat(t->occupied, t->overflow.total);
}

#endif

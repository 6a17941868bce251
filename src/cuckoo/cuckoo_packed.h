/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the packed form of a small cuckoo filter, so that a small filter costs no more than RedisBloom's.
 *
 * A full filter is a struct nidus_cuckoo (184 bytes on x86-64), a table struct (256: shape, the lookup kernels' derived
 * constants, overflow map) and the slots with 16 bytes of slack, in three allocations. For one small table that is most
 * of its memory: CF.RESERVE k 4 holds 5 bytes of fingerprints in 461 (184 + 256 + 5 + 16 of slack) before the allocator
 * rounds them. Those structs are a cache of what a 40-byte header says, so a small filter is kept as that header with
 * its slots packed after it, in one allocation. Lookups read the packed slots directly (cuckoo_packed.c: the placement
 * computed from the header, buckets matched a word at a time); every other call rebuilds the full form on the stack (a
 * struct, a table struct and a copy of the slots with their slack: at most NIDUS_CUCKOO_PACKED_MAX_BYTES), runs the
 * full form's code on it and, when it wrote, copies the slots and counters back. Up to NIDUS_CUCKOO_SIDE_ENTRIES
 * overflow entries (duplicate copies beyond a full bucket pair, items the kick search could not place) live in a side
 * block of 48 bytes (up to 5 entries) or 80 (up to 9), allocated only while there are any; the header's max_memory
 * moves into it and its pointer takes that field's place, so the handle without entries is no larger. Whatever the
 * packed form cannot hold (a second table, more overflow entries or a count past 2^16, a remove counter past 2^32)
 * turns the handle into a forward to a full filter, so the ordinary code keeps doing all the work. The forward keeps
 * that filter's first table's slots (and their slack) in the handle's own memory, where the packed slots were: a filter
 * that outgrew the packed form pays the 24-byte forward header, not a second copy of its first table. The form follows
 * from the contents alone (packed when they fit, forward when the first table is small, full otherwise), so a reloaded
 * or replicated filter has the same form and the same memory figures as its source.
 *
 * A handle's first byte tells the forms apart: struct nidus_cuckoo starts with its dispatch byte, never
 * NIDUS_FORM_PACKED or NIDUS_FORM_FORWARD (cuckoo_dispatch.h).
 * Every form keeps its allocator pointer at offset 8, so code that only needs the allocator may read it there. */
#ifndef NIDUS_SRC_CUCKOO_PACKED_H
#define NIDUS_SRC_CUCKOO_PACKED_H

#include <stddef.h>

#include "cuckoo_filter.h"

/* Slot bytes a packed filter may hold (the stack copy each call makes): b=2 at 1 % holds up to 1,483 items
 * (nidus_cuckoo_plan_params: 2,048 table bytes at capacity 1,483). */
#define NIDUS_CUCKOO_PACKED_MAX_BYTES 2048u

enum { NIDUS_FORM_FULL = 0, NIDUS_FORM_PACKED = 1, NIDUS_FORM_FORWARD = 2 };

/* The overflow map of a packed filter's stack copy: what overflow.c grows to for NIDUS_CUCKOO_SIDE_ENTRIES
 * entries (a power of two, at least twice the entries). */
#define NIDUS_CUCKOO_SIDE_MAP 32u

/* Overflow entries a packed filter holds (a full stash and one duplicate entry): more, or a count past 16 bits,
 * make it a forward. Up to NIDUS_CUCKOO_SIDE_SMALL entries take a 48-byte block, more an 80-byte one (allocator
 * size classes): most filters that have entries at all have one or two. */
#define NIDUS_CUCKOO_SIDE_ENTRIES 9u
#define NIDUS_CUCKOO_SIDE_SMALL 5u

/* nidus_cuckoo_packed.layout: log2 of the bucket size (bits 0-1), the shape's booleans, and the number of side
 * entries (bits 4-7): one byte, so that the header fits 40 bytes. */
enum { NIDUS_PACKED_SEMI_SORT = 4, NIDUS_PACKED_MOD_PLACEMENT = 8, NIDUS_PACKED_SIDE_SHIFT = 4 };

/* One overflow entry of a packed filter, as the overflow map keys and counts it, in 8 bytes. Buckets fit 16 bits
 * (a packable shape has at most 2048 slot bytes of >= 4-bit buckets); a count past 16 bits makes the filter a
 * forward (only a key added more than 65,535 times beyond its bucket pair's share has one). */
typedef struct nidus_cuckoo_side_entry {
    uint32_t fingerprint;
    uint16_t bucket; /* the lower bucket of the pair */
    uint16_t count;
} nidus_cuckoo_side_entry;

/* A packed filter's overflow entries (the first side_entries) and the max_memory whose place in the header
 * their pointer takes. Its size follows from the number of entries (nidus_cuckoo_side_bytes), so a reloaded
 * filter's memory is its source's: a remove that leaves NIDUS_CUCKOO_SIDE_SMALL entries or fewer in a large
 * block moves them to a small one. */
typedef struct nidus_cuckoo_side {
    uint64_t max_memory;
    nidus_cuckoo_side_entry entry[];
} nidus_cuckoo_side;

/* The bytes of a side block for `entries` entries (1 to NIDUS_CUCKOO_SIDE_ENTRIES): 48 or 80. */
static inline size_t nidus_cuckoo_side_bytes(unsigned entries)
{
    return entries <= NIDUS_CUCKOO_SIDE_SMALL ? 48u : 80u;
}

/* 40 bytes: with 48, CF.RESERVE k 50, k 10 BUCKETSIZE 4 and k 100 BUCKETSIZE 4 took one allocator size class
 * more than RedisBloom's keys. What a packable shape has no room for is not stored: its offset bits are its
 * fingerprint bits and its reach is NIDUS_REACH_LOG2 (nidus_cuckoo_packable_shape), and its buckets and
 * occupied slots fit 16 bits (at most 2048 slot bytes of >= 4-bit slots: 4096 slots). */
typedef struct nidus_cuckoo_packed {
    uint8_t form;       /* NIDUS_FORM_PACKED */
    uint8_t layout;     /* NIDUS_PACKED_*: bucket size, semi-sorting, mod placement (format versions 1-4), side */
    uint8_t fp_bits;
    uint8_t max_tables;
    uint16_t buckets;
    uint16_t occupied;
    const nidus_allocator *alloc;
    uint64_t seed;
    union {
        uint64_t max_memory;     /* while there are no side entries */
        nidus_cuckoo_side *side; /* while there are (it holds max_memory) */
    };
    uint32_t deleted;
    uint16_t max_kicks;
    uint16_t expansion;
    uint8_t slots[]; /* nidus_table_shape_bytes of the shape: no slack */
} nidus_cuckoo_packed;

#if defined(__x86_64__)
/* The sizes the comment at the top compares the packed form with. */
_Static_assert(sizeof(struct nidus_cuckoo) == 184 && sizeof(nidus_table) == 256,
               "the full form's structs are as large as the packed form's reason says");
#endif
_Static_assert(sizeof(nidus_cuckoo_packed) == 40, "the packed header stays 40 bytes (docs/BENCHMARKS.md's small-filter figures)");
_Static_assert(sizeof(nidus_cuckoo_side) + NIDUS_CUCKOO_SIDE_SMALL * sizeof(nidus_cuckoo_side_entry) == 48 &&
                   sizeof(nidus_cuckoo_side) + NIDUS_CUCKOO_SIDE_ENTRIES * sizeof(nidus_cuckoo_side_entry) == 80,
               "side blocks of 5 and 9 entries fill 48 and 80 bytes");
_Static_assert(NIDUS_CUCKOO_SIDE_ENTRIES > NIDUS_TABLE_STASH, "a packed filter holds a full stash");
_Static_assert(NIDUS_CUCKOO_SIDE_MAP >= 2 * NIDUS_CUCKOO_SIDE_ENTRIES && NIDUS_CUCKOO_SIDE_MAP < 4 * NIDUS_CUCKOO_SIDE_ENTRIES,
               "the stack copy's map is the one overflow.c makes for a full side block");
_Static_assert(NIDUS_CUCKOO_PACKED_MAX_BYTES * 8u / 4u <= UINT16_MAX,
               "a packed table's buckets and slots fit the header's and the side's 16 bits");
_Static_assert(NIDUS_CUCKOO_SIDE_ENTRIES < 16, "side entries fit four bits of the layout byte");

/* Side entries of a packed handle (0: no side block). */
static inline unsigned nidus_cuckoo_packed_side_entries(const nidus_cuckoo_packed *p)
{
    return (unsigned)p->layout >> NIDUS_PACKED_SIDE_SHIFT;
}

/* What a packed handle becomes when its filter outgrows the form: the allocation stays (the caller holds it). */
typedef struct nidus_cuckoo_forward {
    uint8_t form; /* NIDUS_FORM_FORWARD */
    const nidus_allocator *alloc;
    nidus_cuckoo *full; /* its tables[0].data is `data` (borrowed: the full filter's release leaves it) */
    uint8_t data[];     /* the first table's slots, then NIDUS_BITS_SLACK zero bytes */
} nidus_cuckoo_forward;

_Static_assert(offsetof(nidus_cuckoo_packed, alloc) == 8 && offsetof(nidus_cuckoo_forward, alloc) == 8 &&
                   offsetof(struct nidus_cuckoo, alloc) == 8 && offsetof(struct nidus_cuckoo, tag) == 0,
               "every form keeps its allocator at offset 8");
_Static_assert(offsetof(nidus_cuckoo_forward, data) + NIDUS_BITS_SLACK <= offsetof(nidus_cuckoo_packed, slots),
               "a packed handle can hold a forward and its first table with the table's slack");

/* A packed filter rebuilt as a full one (on the caller's stack): what each call on a packed handle runs on. */
typedef struct nidus_cuckoo_thawed {
    nidus_cuckoo cf;
    nidus_table t;
    /* t's overflow map when the filter has side entries: the capacity overflow.c gives as many entries
     * (nidus_overflow_capacity_for, at most 32 for 9), so the full form's figures are the same, and a map that
     * never grows (stack copies only take entries away) */
    nidus_overflow_entry map[NIDUS_CUCKOO_SIDE_MAP];
    _Alignas(8) uint8_t data[NIDUS_CUCKOO_PACKED_MAX_BYTES + NIDUS_BITS_SLACK];
} nidus_cuckoo_thawed;

/* True when a new filter of this shape is made packed. */
bool nidus_cuckoo_packable_shape(const nidus_table_shape *shape);

/* A new empty packed filter (its shape packable). NIDUS_ERR_NO_MEMORY. */
nidus_status nidus_cuckoo_packed_new(const nidus_allocator *a, const nidus_table_shape *shape, uint64_t seed,
                                     unsigned max_kicks, unsigned expansion, unsigned max_tables, uint64_t max_memory,
                                     nidus_cuckoo **out);

/* Replaces *f, a full filter (its dispatch byte none of the handle forms'), by a packed handle when its first table is small: packed when everything fits,
 * else a forward holding the first table's slots (the rest stays where it is). Leaves it as it is otherwise, or
 * when the allocation fails (as correct, only larger). */
void nidus_cuckoo_pack(nidus_cuckoo **f);

/* The packed form's and the forward's calls that change the handle's form, or build the full struct. Each
 * takes a handle of its own form only; cuckoo_dispatch.c, which tells the forms apart, chooses among them.
 *   nidus_packed_inspect: the packed filter rebuilt in `w`, for reading.
 *   nidus_packed_unpack: makes the packed handle a forward to a full form of its filter and returns that full
 *     filter (NULL when out of memory: nothing changed).
 *   nidus_packed_replace, nidus_forward_replace, nidus_full_replace: put `full` (a full filter that owns all its
 *     memory, with the first-table shape of h's filter) in place of the filter behind handle h and free the old
 *     one; h stays the caller's handle. They allocate nothing (a packed result that cannot get its side block
 *     stays a forward): for a write built aside (merge). */
const nidus_cuckoo *nidus_packed_inspect(const nidus_cuckoo *h, nidus_cuckoo_thawed *w);
nidus_cuckoo *nidus_packed_unpack(nidus_cuckoo *h);
void nidus_packed_replace(nidus_cuckoo *h, nidus_cuckoo *full);
void nidus_forward_replace(nidus_cuckoo *h, nidus_cuckoo *full);
void nidus_full_replace(nidus_cuckoo *h, nidus_cuckoo *full);

/* The packed form's calls (a handle whose first byte is NIDUS_FORM_PACKED) and the forward's writes and stats
 * (NIDUS_FORM_FORWARD; its reads are its full filter's). cuckoo_dispatch.c chooses them; they reach the full
 * form only through its internal calls (cuckoo_filter.h), never the public API. */
void nidus_packed_free(nidus_cuckoo *h);
nidus_status nidus_packed_add_hash(nidus_cuckoo *h, uint64_t hash);
nidus_status nidus_packed_add_key(nidus_cuckoo *h, const void *key, size_t len);
nidus_status nidus_packed_add_unique_hash(nidus_cuckoo *h, uint64_t hash, bool *added);
bool nidus_packed_contains_hash(const nidus_cuckoo *h, uint64_t hash);
bool nidus_packed_contains_key(const nidus_cuckoo *h, const void *key, size_t len);
void nidus_packed_contains_many_hash(const nidus_cuckoo *h, const uint64_t *hashes, size_t n, bool *out);
uint64_t nidus_packed_count_hash(const nidus_cuckoo *h, uint64_t hash);
nidus_status nidus_packed_remove_hash(nidus_cuckoo *h, uint64_t hash);
nidus_status nidus_packed_clear(nidus_cuckoo *h);
nidus_status nidus_packed_compact(nidus_cuckoo *h, unsigned *freed);
void nidus_packed_get_stats(const nidus_cuckoo *h, nidus_cuckoo_stats *s);
nidus_status nidus_packed_get_table_stats(const nidus_cuckoo *h, unsigned index, nidus_cuckoo_table_stats *s);
uint64_t nidus_packed_encoded_size(const nidus_cuckoo *h);
nidus_status nidus_packed_encode(const nidus_cuckoo *h, void *buf, size_t cap, size_t *written);
nidus_status nidus_packed_dump_chunk(const nidus_cuckoo *h, uint64_t cursor, void *buf, size_t cap, size_t *len,
                                     uint64_t *next, nidus_dump_sum *sum);

void nidus_forward_free(nidus_cuckoo *h);
nidus_status nidus_forward_add_hash(nidus_cuckoo *h, uint64_t hash);
nidus_status nidus_forward_add_key(nidus_cuckoo *h, const void *key, size_t len);
nidus_status nidus_forward_remove_hash(nidus_cuckoo *h, uint64_t hash);
nidus_status nidus_forward_clear(nidus_cuckoo *h);
nidus_status nidus_forward_compact(nidus_cuckoo *h, unsigned *freed);
nidus_status nidus_forward_compact_begin(nidus_cuckoo *h);
nidus_status nidus_forward_compact_step(nidus_cuckoo *h, uint64_t budget, bool *done);
void nidus_forward_get_stats(const nidus_cuckoo *h, nidus_cuckoo_stats *s);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The RedisBloom part of a cuckoo filter loaded from RedisBloom's data (RDB, DUMP, SCANDUMP): its tables as
 * RedisBloom laid them out, read and written with RedisBloom's hashing and placement so that every item it
 * held answers as it did. 8-bit fingerprints hash % 255 + 1 (0 marks an empty slot), bucket h % buckets and
 * the alternate (h ^ fp * 0x5bd1e995) % buckets, sub-filters oldest first. Pure functions over the module
 * allocator; the growth part beside it is nidus's (rb_types.c). */
#ifndef NIDUS_REDIS_RB_CF_H
#define NIDUS_REDIS_RB_CF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nidus/status.h>

typedef struct rb_cf_table {
    uint64_t buckets;
    uint8_t *slots; /* buckets * bucket_size fingerprints, 0 = empty */
    uint64_t start; /* the slots of the sub-filters before it: where its SCANDUMP positions begin */
} rb_cf_table;

typedef struct rb_cf {
    uint64_t items, deletes; /* RedisBloom's counters, kept up to date */
    uint64_t buckets;        /* buckets of the first sub-filter */
    uint16_t bucket_size, max_iterations, expansion, ntables;
    rb_cf_table *tables;
} rb_cf;

/* RedisBloom's SCANDUMP header chunk (packed, little-endian): items, buckets, deletes, sub-filters (u64 each),
 * bucket size, max iterations, expansion (u16 each). */
#define RB_CF_HEADER_SIZE 38

/* The item's 64-bit hash (MurmurHash64A, seed 0). */
uint64_t rb_cf_hash(const void *item, size_t len);

/* A filter with `ntables` zeroed sub-filters sized from `buckets` (sub-filter i: buckets * expansion^i), as a
 * RedisBloom header describes it, after RedisBloom's checks of the header; NIDUS_ERR_CORRUPT when they fail,
 * NIDUS_ERR_LIMIT_MEMORY past `max_bytes` (checked before allocating), NIDUS_ERR_NO_MEMORY. */
nidus_status rb_cf_new(const rb_cf *params, uint64_t max_bytes, rb_cf **out);

/* An empty shell with `ntables` table slots and no tables (the RDB loader fills them); NULL without memory. */
rb_cf *rb_cf_shell(uint16_t ntables);
void rb_cf_free(rb_cf *cf);

/* Bytes held (struct, table array, tables); O(1). */
uint64_t rb_cf_memory(const rb_cf *cf);

/* Lookups by hash, as RedisBloom answers them. */
bool rb_cf_contains(const rb_cf *cf, uint64_t hash);
uint64_t rb_cf_count(const rb_cf *cf, uint64_t hash);

/* Removes one copy (newest sub-filter first); true when one was found. Counters follow RedisBloom's, and so
 * does its compaction once deletes pass 10 % of the items. */
bool rb_cf_remove(rb_cf *cf, uint64_t hash);

/* RedisBloom's compaction: newest sub-filter first, fingerprints move to free slots of older sub-filters, an
 * emptied newest sub-filter is freed; without `all` it stops at the first sub-filter that cannot be emptied.
 * Resets the delete count. Answers do not change. */
void rb_cf_compact(rb_cf *cf, bool all);

/* Adds with RedisBloom's placement: a free slot in either bucket, newest sub-filter first; then, when `kick`,
 * up to max_iterations relocations in the newest sub-filter, undone when they find no room. False: no room
 * (nothing changed). */
bool rb_cf_add(rb_cf *cf, uint64_t hash, bool kick);

/* Adds src's fingerprints to dst sub-filter by sub-filter (dst takes copies of the sub-filters only src has):
 * each into a free slot of its bucket pair in the same sub-filter or an older one its bucket index still
 * places, else by relocations in the same one; the counters add. The caller checks
 * that both have the same bucket size, first sub-filter and expansion. NIDUS_ERR_FULL when a sub-filter has no
 * room: dst is then partly merged, so merge into a copy. */
nidus_status rb_cf_merge(rb_cf *dst, const rb_cf *src);

/* The header chunk of the filter (RB_CF_HEADER_SIZE bytes into `out`), and a filter from one. */
void rb_cf_header(const rb_cf *cf, uint8_t out[RB_CF_HEADER_SIZE]);
nidus_status rb_cf_from_header(const void *buf, size_t len, uint64_t max_bytes, rb_cf **out);

/* Total table bytes: the SCANDUMP positions 1 .. this cover them. O(1), from the newest sub-filter's start. */
uint64_t rb_cf_table_bytes(const rb_cf *cf);

/* Sub-filter `i`'s slots, their size and start (an rb_array_fn for the SCANDUMP positions of rb_chunk.h). */
uint8_t *rb_cf_array(const void *f, unsigned i, uint64_t *size, uint64_t *start);

#endif

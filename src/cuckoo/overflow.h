/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: the overflow map of a cuckoo table: duplicates beyond their bucket pair's share, and the stash.
 *
 * A key added more times than its two buckets can hold copies of would start a kick storm that cannot succeed:
 * every kicked copy lands back in the other bucket of the same pair. Instead, once a key's fingerprint fills
 * its share of a full bucket pair, further copies are counted here, keyed by (lower bucket of the pair,
 * fingerprint). A small open-addressing map: a thousand duplicates cost one entry. The same map holds the table's stash
 * (cuckoo_table.h, NIDUS_TABLE_STASH): items the add's search could not place, waiting beside their full pair. */
#ifndef NIDUS_SRC_OVERFLOW_H
#define NIDUS_SRC_OVERFLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "nidus/alloc.h"
#include "nidus/status.h"

typedef struct nidus_overflow_entry {
    uint64_t bucket; /* the lower-numbered bucket of the pair */
    uint64_t count;  /* 0 marks an empty entry */
    uint32_t fingerprint;
} nidus_overflow_entry;

typedef struct nidus_overflow {
    nidus_overflow_entry *entries; /* NULL until the first duplicate overflows */
    uint32_t capacity;             /* a power of two, or 0 (2^31 entries would be 48 GiB: never reached) */
    uint32_t used;                 /* entries with a nonzero count */
    uint64_t total;                /* sum of the counts */
} nidus_overflow;

/* Counts one more copy. NIDUS_ERR_NO_MEMORY (nothing changed) when the map had to grow and could not. */
nidus_status nidus_overflow_add(nidus_overflow *ov, const nidus_allocator *a, uint64_t bucket, uint32_t fp);

/* Sets the count of (bucket, fp), adding or removing the entry as needed; used by decoders. */
nidus_status nidus_overflow_set(nidus_overflow *ov, const nidus_allocator *a, uint64_t bucket, uint32_t fp,
                                uint64_t count);

/* The number of copies counted for (bucket, fp). */
uint64_t nidus_overflow_get(const nidus_overflow *ov, uint64_t bucket, uint32_t fp);

/* Takes one copy away; false when there was none. Never allocates. */
bool nidus_overflow_take(nidus_overflow *ov, uint64_t bucket, uint32_t fp);

/* Forgets every count; keeps the memory. */
void nidus_overflow_clear(nidus_overflow *ov);

void nidus_overflow_release(nidus_overflow *ov, const nidus_allocator *a);

/* The capacity of a map that `entries` adds to an empty map left it with (0, then 8, doubled while it is less
 * than twice the entries): what a decoded table's map holds, and what packed filters rebuild. */
uint32_t nidus_overflow_capacity_for(uint32_t entries);

/* Bytes held through the allocator. */
uint64_t nidus_overflow_memory(const nidus_overflow *ov);

#endif

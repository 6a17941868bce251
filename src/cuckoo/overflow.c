/* SPDX-License-Identifier: BSD-3-Clause */
#include "overflow.h"

#include <string.h>

#include "alloc.h"

static uint64_t entry_slot(const nidus_overflow *ov, uint64_t bucket, uint32_t fp)
{
    uint64_t h = bucket * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)fp * UINT64_C(0xC2B2AE3D27D4EB4F);
    h ^= h >> 29;
    return h & (ov->capacity - 1);
}

/* Index of the entry for (bucket, fp), or of the empty entry where it would go. The map is never full (load
 * stays at most 1/2), so the probe ends. */
static uint64_t find(const nidus_overflow *ov, uint64_t bucket, uint32_t fp)
{
    uint64_t i = entry_slot(ov, bucket, fp);
    for (;;) {
        const nidus_overflow_entry *e = &ov->entries[i];
        if (e->count == 0 || (e->bucket == bucket && e->fingerprint == fp))
            return i;
        i = (i + 1) & (ov->capacity - 1);
    }
}

static nidus_status grow(nidus_overflow *ov, const nidus_allocator *a)
{
    if (ov->capacity > UINT32_MAX / 2)
        return NIDUS_ERR_NO_MEMORY; /* 2^31 entries (48 GiB): the 32-bit capacity stops here */
    uint32_t capacity = ov->capacity ? ov->capacity * 2 : 8;
    nidus_overflow_entry *entries = nidus_calloc(a, (size_t)capacity, sizeof *entries);
    if (!entries)
        return NIDUS_ERR_NO_MEMORY;
    nidus_overflow bigger = {entries, capacity, 0, 0};
    for (uint64_t i = 0; i < ov->capacity; i++) {
        const nidus_overflow_entry *e = &ov->entries[i];
        if (e->count)
            bigger.entries[find(&bigger, e->bucket, e->fingerprint)] = *e;
    }
    bigger.used = ov->used;
    bigger.total = ov->total;
    nidus_free(a, ov->entries);
    *ov = bigger;
    return NIDUS_OK;
}

static void erase(nidus_overflow *ov, uint64_t i);

nidus_status nidus_overflow_set(nidus_overflow *ov, const nidus_allocator *a, uint64_t bucket, uint32_t fp,
                                uint64_t count)
{
    uint64_t have = nidus_overflow_get(ov, bucket, fp);
    if (count == have)
        return NIDUS_OK;
    if (have == 0 && 2 * ((uint64_t)ov->used + 1) > ov->capacity) {
        nidus_status st = grow(ov, a);
        if (st)
            return st;
    }
    if (count == 0) { /* the entry goes at once, whatever its count (a take a copy would loop that often) */
        uint64_t i = find(ov, bucket, fp);
        ov->total -= ov->entries[i].count;
        ov->used--;
        ov->entries[i].count = 0;
        erase(ov, i);
        return NIDUS_OK;
    }
    nidus_overflow_entry *e = &ov->entries[find(ov, bucket, fp)];
    if (e->count == 0) {
        e->bucket = bucket;
        e->fingerprint = fp;
        ov->used++;
    }
    ov->total = ov->total - e->count + count;
    e->count = count;
    return NIDUS_OK;
}

nidus_status nidus_overflow_add(nidus_overflow *ov, const nidus_allocator *a, uint64_t bucket, uint32_t fp)
{
    return nidus_overflow_set(ov, a, bucket, fp, nidus_overflow_get(ov, bucket, fp) + 1);
}

uint64_t nidus_overflow_get(const nidus_overflow *ov, uint64_t bucket, uint32_t fp)
{
    if (ov->used == 0)
        return 0;
    return ov->entries[find(ov, bucket, fp)].count;
}

/* Deletion by backward shift keeps every probe sequence unbroken without tombstones: after emptying entry i,
 * each later entry of the cluster moves back into the hole unless its home lies cyclically in (i, j]. */
static void erase(nidus_overflow *ov, uint64_t i)
{
    uint64_t mask = ov->capacity - 1;
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        nidus_overflow_entry *e = &ov->entries[j];
        if (e->count == 0)
            break;
        uint64_t home = entry_slot(ov, e->bucket, e->fingerprint);
        bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            ov->entries[i] = *e;
            i = j;
        }
    }
    memset(&ov->entries[i], 0, sizeof ov->entries[i]);
}

bool nidus_overflow_take(nidus_overflow *ov, uint64_t bucket, uint32_t fp)
{
    if (ov->used == 0)
        return false;
    uint64_t i = find(ov, bucket, fp);
    nidus_overflow_entry *e = &ov->entries[i];
    if (e->count == 0)
        return false;
    ov->total--;
    if (--e->count == 0) {
        ov->used--;
        erase(ov, i);
    }
    return true;
}

void nidus_overflow_clear(nidus_overflow *ov)
{
    if (ov->entries)
        memset(ov->entries, 0, (size_t)ov->capacity * sizeof *ov->entries);
    ov->used = 0;
    ov->total = 0;
}

void nidus_overflow_release(nidus_overflow *ov, const nidus_allocator *a)
{
    nidus_free(a, ov->entries);
    *ov = (nidus_overflow){NULL, 0, 0, 0};
}

uint32_t nidus_overflow_capacity_for(uint32_t entries)
{
    uint64_t capacity = entries ? 8 : 0;
    while (capacity < 2 * (uint64_t)entries)
        capacity *= 2;
    return capacity > UINT32_MAX ? UINT32_MAX : (uint32_t)capacity;
}

uint64_t nidus_overflow_memory(const nidus_overflow *ov) { return (uint64_t)ov->capacity * sizeof(nidus_overflow_entry); }

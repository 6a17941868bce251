/* SPDX-License-Identifier: BSD-3-Clause */
/* RedisBloom's cuckoo layout and placement: see rb_cf.h. */
#include <string.h>

#include "module_api.h"
#include "rb_cf.h"
#include "rb_chunk.h"
#include "rb_hash.h"

#define RB_CF_MAX_BUCKETS ((UINT64_C(1) << 56) - 1) /* RedisBloom keeps bucket counts in 56 bits */
#define RB_CF_ALT_MIX UINT64_C(0x5bd1e995)

typedef struct probe {
    uint64_t h1, h2;
    uint8_t fp;
} probe;

uint64_t rb_cf_hash(const void *item, size_t len) { return rb_murmur64a(item, len, 0); }

static probe probe_of(uint64_t hash)
{
    uint8_t fp = (uint8_t)(hash % 255 + 1);
    return (probe){hash, hash ^ (uint64_t)fp * RB_CF_ALT_MIX, fp};
}

/* The first slot of the bucket `h` falls in. RedisBloom computes this offset in 32 bits; so do we, so that
 * the same slots answer even in a table past 4 GiB. */
static uint8_t *bucket_of(const rb_cf *cf, const rb_cf_table *t, uint64_t h)
{
    return t->slots + (uint32_t)((h % t->buckets) * cf->bucket_size);
}

static unsigned count_in(const uint8_t *b, unsigned n, uint8_t fp)
{
    unsigned c = 0;
    for (unsigned i = 0; i < n; i++)
        c += b[i] == fp;
    return c;
}

static uint8_t *find_in(uint8_t *b, unsigned n, uint8_t fp)
{
    for (unsigned i = 0; i < n; i++)
        if (b[i] == fp)
            return b + i;
    return NULL;
}

bool rb_cf_contains(const rb_cf *cf, uint64_t hash)
{
    probe p = probe_of(hash);
    for (unsigned t = 0; t < cf->ntables; t++)
        if (find_in(bucket_of(cf, &cf->tables[t], p.h1), cf->bucket_size, p.fp) ||
            find_in(bucket_of(cf, &cf->tables[t], p.h2), cf->bucket_size, p.fp))
            return true;
    return false;
}

uint64_t rb_cf_count(const rb_cf *cf, uint64_t hash)
{
    probe p = probe_of(hash);
    uint64_t c = 0;
    for (unsigned t = 0; t < cf->ntables; t++)
        c += count_in(bucket_of(cf, &cf->tables[t], p.h1), cf->bucket_size, p.fp) +
             count_in(bucket_of(cf, &cf->tables[t], p.h2), cf->bucket_size, p.fp);
    return c;
}

/* A free slot for probe p in either of its buckets of table t; NULL when both are full. */
static uint8_t *free_slot(const rb_cf *cf, const rb_cf_table *t, probe p)
{
    uint8_t *slot = find_in(bucket_of(cf, t, p.h1), cf->bucket_size, 0);
    return slot ? slot : find_in(bucket_of(cf, t, p.h2), cf->bucket_size, 0);
}

/* Moves every fingerprint of sub-filter t it can into a free slot of an older one, as RedisBloom does: the
 * bucket index stands in for the hash (older sub-filters' bucket counts divide it when growth is by powers of
 * two, as RedisBloom's is). Frees the sub-filter when it empties and is the newest. True when nothing was
 * left behind. */
static bool empty_into_older(rb_cf *cf, unsigned t)
{
    rb_cf_table *tab = &cf->tables[t];
    bool all = true;
    for (uint64_t b = 0; b < tab->buckets; b++)
        for (unsigned s = 0; s < cf->bucket_size; s++) {
            uint8_t *slot = tab->slots + b * cf->bucket_size + s;
            if (!*slot)
                continue;
            probe p = {b, b ^ (uint64_t)*slot * RB_CF_ALT_MIX, *slot};
            uint8_t *to = NULL;
            for (unsigned older = 0; older < t && !to; older++)
                to = free_slot(cf, &cf->tables[older], p);
            if (to) {
                *to = *slot;
                *slot = 0;
            } else {
                all = false;
            }
        }
    if (all && t + 1u == cf->ntables) {
        RedisModule_Free(tab->slots);
        tab->slots = NULL;
        cf->ntables--;
    }
    return all;
}

void rb_cf_compact(rb_cf *cf, bool all)
{
    for (unsigned t = cf->ntables; t-- > 1;)
        if (!empty_into_older(cf, t) && !all)
            break;
    cf->deletes = 0;
}

bool rb_cf_remove(rb_cf *cf, uint64_t hash)
{
    probe p = probe_of(hash);
    for (unsigned t = cf->ntables; t-- > 0;) {
        uint8_t *slot = find_in(bucket_of(cf, &cf->tables[t], p.h1), cf->bucket_size, p.fp);
        if (!slot)
            slot = find_in(bucket_of(cf, &cf->tables[t], p.h2), cf->bucket_size, p.fp);
        if (slot) {
            *slot = 0;
            cf->items--;
            cf->deletes++;
            if (cf->ntables > 1 && (double)cf->deletes > (double)cf->items * 0.10)
                rb_cf_compact(cf, false);
            return true;
        }
    }
    return false;
}

/* Relocations in sub-filter `t`, from bucket i, the way RedisBloom walks them: swap with the slot `victim` of
 * the bucket, move to the evicted fingerprint's other bucket, take a free slot there or go on with the next
 * victim slot. When max_iterations pass without room, the same walk backwards restores every slot. */
static bool kick_in(const rb_cf *cf, rb_cf_table *t, uint64_t i, uint8_t fp)
{
    unsigned b = cf->bucket_size, victim = 0;
    for (unsigned n = 0; n < cf->max_iterations; n++) {
        uint8_t *slot = t->slots + i * b + victim, evicted = *slot;
        *slot = fp;
        fp = evicted;
        i = (i ^ (uint64_t)fp * RB_CF_ALT_MIX) % t->buckets;
        uint8_t *free_slot = find_in(t->slots + i * b, b, 0);
        if (free_slot) {
            *free_slot = fp;
            return true;
        }
        victim = (victim + 1) % b;
    }
    for (unsigned n = 0; n < cf->max_iterations; n++) {
        victim = (victim + b - 1) % b;
        i = (i ^ (uint64_t)fp * RB_CF_ALT_MIX) % t->buckets;
        uint8_t *slot = t->slots + i * b + victim, evicted = *slot;
        *slot = fp;
        fp = evicted;
    }
    return false;
}

static bool kick_add(rb_cf *cf, probe p)
{
    rb_cf_table *t = &cf->tables[cf->ntables - 1];
    return kick_in(cf, t, p.h1 % t->buckets, p.fp);
}

bool rb_cf_add(rb_cf *cf, uint64_t hash, bool kick)
{
    probe p = probe_of(hash);
    for (unsigned t = cf->ntables; t-- > 0;) {
        uint8_t *slot = free_slot(cf, &cf->tables[t], p);
        if (slot) {
            *slot = p.fp;
            cf->items++;
            return true;
        }
    }
    if (!kick || !kick_add(cf, p))
        return false;
    cf->items++;
    return true;
}

/* Puts fingerprint fp, found in bucket i of a sub-filter as large as dst's sub-filter t, into dst: a free slot
 * of its bucket pair in sub-filter t, else in an older one whose bucket count divides t's (the bucket index
 * stands in for the hash, as in compaction: bucket counts are powers of two), else by relocations in t. */
static bool place(rb_cf *cf, unsigned t, uint64_t i, uint8_t fp)
{
    probe p = {i, i ^ (uint64_t)fp * RB_CF_ALT_MIX, fp};
    for (unsigned u = t + 1; u-- > 0;) {
        uint8_t *slot = cf->tables[t].buckets % cf->tables[u].buckets ? NULL : free_slot(cf, &cf->tables[u], p);
        if (slot) {
            *slot = fp;
            return true;
        }
    }
    return kick_in(cf, &cf->tables[t], i, fp);
}

nidus_status rb_cf_merge(rb_cf *dst, const rb_cf *src)
{
    unsigned shared = dst->ntables < src->ntables ? dst->ntables : src->ntables;
    if (src->ntables > dst->ntables) { /* dst takes copies of the sub-filters only src has */
        dst->tables = RedisModule_Realloc(dst->tables, src->ntables * sizeof *dst->tables);
        uint64_t start = rb_cf_table_bytes(dst); /* each copy starts after dst's sub-filters before it */
        for (unsigned t = dst->ntables; t < src->ntables; t++) {
            uint64_t bytes = src->tables[t].buckets * src->bucket_size;
            dst->tables[t] = (rb_cf_table){src->tables[t].buckets, RedisModule_Alloc((size_t)bytes), start};
            memcpy(dst->tables[t].slots, src->tables[t].slots, (size_t)bytes);
            start += bytes;
        }
        dst->ntables = src->ntables;
    }
    for (unsigned t = 0; t < shared; t++) {
        const rb_cf_table *from = &src->tables[t];
        for (uint64_t i = 0; i < from->buckets; i++)
            for (unsigned s = 0; s < src->bucket_size; s++) {
                uint8_t fp = from->slots[i * src->bucket_size + s];
                if (fp && !place(dst, t, i, fp))
                    return NIDUS_ERR_FULL;
            }
    }
    dst->items = dst->items > UINT64_MAX - src->items ? UINT64_MAX : dst->items + src->items;
    dst->deletes = dst->deletes > UINT64_MAX - src->deletes ? UINT64_MAX : dst->deletes + src->deletes;
    return NIDUS_OK;
}

rb_cf *rb_cf_shell(uint16_t ntables)
{
    rb_cf *cf = RedisModule_Calloc(1, sizeof *cf);
    cf->tables = RedisModule_Calloc(ntables ? ntables : 1, sizeof *cf->tables);
    cf->ntables = ntables;
    return cf;
}

void rb_cf_free(rb_cf *cf)
{
    if (!cf)
        return;
    for (unsigned t = 0; t < cf->ntables; t++)
        RedisModule_Free(cf->tables[t].slots);
    RedisModule_Free(cf->tables);
    RedisModule_Free(cf);
}

uint64_t rb_cf_table_bytes(const rb_cf *cf)
{
    if (!cf->ntables)
        return 0;
    const rb_cf_table *last = &cf->tables[cf->ntables - 1];
    return last->start + last->buckets * cf->bucket_size;
}

uint64_t rb_cf_memory(const rb_cf *cf)
{
    return sizeof *cf + cf->ntables * sizeof *cf->tables + rb_cf_table_bytes(cf);
}

static bool power_of_two(uint64_t n) { return n && !(n & (n - 1)); }

nidus_status rb_cf_new(const rb_cf *params, uint64_t max_bytes, rb_cf **out)
{
    const rb_cf *h = params;
    /* RedisBloom's header checks: its configuration ranges, one sub-filter without expansion, a power-of-two
     * bucket count in 56 bits */
    if (h->bucket_size < 1 || h->bucket_size > 255 || h->ntables < 1 || h->max_iterations < 1 ||
        h->expansion > 32768 || (h->expansion == 0 && h->ntables > 1) || !power_of_two(h->buckets) ||
        h->buckets > RB_CF_MAX_BUCKETS)
        return NIDUS_ERR_CORRUPT;
    /* every size and the total, checked against the limit before anything is allocated */
    uint64_t total = 0, buckets = h->buckets;
    for (unsigned t = 0; t < h->ntables; t++) {
        if (t && h->expansion > 1) {
            if (buckets > RB_CF_MAX_BUCKETS / h->expansion)
                return NIDUS_ERR_CORRUPT;
            buckets *= h->expansion;
        }
        uint64_t bytes = buckets * h->bucket_size;
        if (bytes > max_bytes - total)
            return NIDUS_ERR_LIMIT_MEMORY;
        total += bytes;
    }
    rb_cf *cf = rb_cf_shell(h->ntables);
    cf->items = h->items;
    cf->deletes = h->deletes;
    cf->buckets = h->buckets;
    cf->bucket_size = h->bucket_size;
    cf->max_iterations = h->max_iterations;
    cf->expansion = h->expansion;
    buckets = h->buckets;
    total = 0;
    for (unsigned t = 0; t < h->ntables; t++) {
        if (t && h->expansion > 1)
            buckets *= h->expansion;
        cf->tables[t] = (rb_cf_table){buckets, RedisModule_Calloc((size_t)(buckets * h->bucket_size), 1), total};
        total += buckets * h->bucket_size;
    }
    *out = cf;
    return NIDUS_OK;
}

void rb_cf_header(const rb_cf *cf, uint8_t out[RB_CF_HEADER_SIZE])
{
    rb_put_le(out, cf->items, 8);
    rb_put_le(out + 8, cf->buckets, 8);
    rb_put_le(out + 16, cf->deletes, 8);
    rb_put_le(out + 24, cf->ntables, 8);
    rb_put_le(out + 32, cf->bucket_size, 2);
    rb_put_le(out + 34, cf->max_iterations, 2);
    rb_put_le(out + 36, cf->expansion, 2);
}

nidus_status rb_cf_from_header(const void *buf, size_t len, uint64_t max_bytes, rb_cf **out)
{
    if (len != RB_CF_HEADER_SIZE)
        return NIDUS_ERR_CORRUPT;
    const uint8_t *p = buf;
    /* RedisBloom keeps the sub-filter count in 16 bits, the bucket count in 56 */
    rb_cf h = {.items = rb_get_le(p, 8), .buckets = rb_get_le(p + 8, 8), .deletes = rb_get_le(p + 16, 8),
               .ntables = (uint16_t)rb_get_le(p + 24, 8), .bucket_size = (uint16_t)rb_get_le(p + 32, 2),
               .max_iterations = (uint16_t)rb_get_le(p + 34, 2), .expansion = (uint16_t)rb_get_le(p + 36, 2)};
    return rb_cf_new(&h, max_bytes, out);
}

uint8_t *rb_cf_array(const void *f, unsigned i, uint64_t *size, uint64_t *start)
{
    const rb_cf *cf = f;
    if (i >= cf->ntables)
        return NULL;
    *size = cf->tables[i].buckets * cf->bucket_size;
    *start = cf->tables[i].start;
    return cf->tables[i].slots;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging one cuckoo filter into another: built aside on a copy of the destination, swapped in on success.
 *
 * Filters made with the same parameters place a key alike in tables of the same index: the same seed gives the
 * same hash, and the same first shape and expansion give every later table the same shape. So a fingerprint in
 * bucket i of the source's table k is the fingerprint its key would have in the destination's table k, at the
 * same bucket pair: re-adding it there (nidus_table_add, which kicks and counts duplicates as an add does)
 * leaves counts and removes exactly as if the key had been added to the destination. A fingerprint cannot move
 * to a newer table (it lacks the bits that table's fingerprints need), so a source table that does not fit in
 * the destination's table of the same index fails the merge with NIDUS_ERR_FULL. */
#include <string.h>

#include "alloc.h"
#include "cuckoo_dispatch.h"

static bool same_table_shape(const nidus_table_shape *a, const nidus_table_shape *b)
{
    return a->buckets == b->buckets && a->bucket_size == b->bucket_size && a->fp_bits == b->fp_bits &&
           a->offset_bits == b->offset_bits && a->reach_log2 == b->reach_log2 && a->semi_sort == b->semi_sort &&
           a->mod_placement == b->mod_placement && (a->stride ? a->stride : 1) == (b->stride ? b->stride : 1);
}

static nidus_status compatible(const nidus_cuckoo *a, const nidus_cuckoo *b)
{
    nidus_cuckoo_thawed wa, wb;
    const nidus_cuckoo *x = nidus_cuckoo_inspect(a, &wa), *y = nidus_cuckoo_inspect(b, &wb);
    if (x->seed != y->seed || x->expansion != y->expansion || !same_table_shape(&x->base, &y->base))
        return NIDUS_ERR_INCOMPATIBLE;
    for (unsigned k = 0; k < x->ntables && k < y->ntables; k++)
        if (!same_table_shape(&x->tables[k].shape, &y->tables[k].shape))
            return NIDUS_ERR_INCOMPATIBLE;
    return NIDUS_OK;
}

/* A full filter that owns all its memory, with the contents of `cf` (a full struct, maybe a thawed packed one
 * or one whose first table lives in a forward handle). NULL when out of memory. */
static nidus_cuckoo *clone_full(const nidus_cuckoo *cf)
{
    const nidus_allocator *a = cf->alloc;
    nidus_cuckoo *c = nidus_calloc(a, 1, sizeof *c);
    nidus_table *tables = c ? nidus_calloc(a, cf->ntables, sizeof *tables) : NULL;
    if (!tables) {
        nidus_free(a, c);
        return NULL;
    }
    *c = *cf;
    c->tag = NIDUS_DISPATCH_GENERAL; /* always correct until the redispatch below */
    c->tables = tables;
    c->ntables = 0;
    c->mapping = NULL;
    c->loader = NULL;
    c->read_only = false;
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *s = &cf->tables[k];
        nidus_table *t = &tables[k];
        if (nidus_table_init(t, &s->shape, cf->max_kicks, a))
            goto fail;
        c->ntables++;
        memcpy(t->data, s->data, (size_t)nidus_table_bytes(s));
        t->occupied = s->occupied;
        for (uint32_t e = 0; e < s->overflow.capacity; e++) {
            const nidus_overflow_entry *en = &s->overflow.entries[e];
            if (en->count && nidus_overflow_set(&t->overflow, a, en->bucket, en->fingerprint, en->count))
                goto fail;
        }
        nidus_table_overflow_changed(t);
    }
    nidus_cuckoo_redispatch(c);
    return c;
fail:
    nidus_full_free(c);
    return NULL;
}

/* Adds `count` copies of fp at the pair of bucket i to table t. Copies of a fingerprint that already fills its
 * share of the pair's slots go to the overflow map at once, as adds would put them there one by one. */
static nidus_status add_copies(nidus_table *t, const nidus_allocator *a, uint64_t i, uint32_t fp, uint64_t count)
{
    for (uint64_t c = 0; c < count; c++) {
        uint64_t j = nidus_table_alt(t, i, fp), lo = i < j ? i : j;
        uint64_t over = nidus_table_overflow_count(t, lo, fp);
        if (over && nidus_table_count(t, i, fp) - over >= t->shape.bucket_size) {
            uint64_t rest = count - c;
            if (rest > UINT64_MAX - over || rest > UINT64_MAX - t->overflow.total)
                return NIDUS_ERR_TOO_LARGE;
            nidus_status st = nidus_overflow_set(&t->overflow, a, lo, fp, over + rest);
            nidus_table_overflow_changed(t);
            return st;
        }
        nidus_status st = nidus_table_add(t, a, i, fp);
        if (st)
            return st;
    }
    return NIDUS_OK;
}

/* Adds every fingerprint of table s (slots and overflow entries) to table t of the same shape. */
static nidus_status merge_table(nidus_table *t, const nidus_table *s, const nidus_allocator *a)
{
    uint32_t fps[8];
    for (uint64_t i = 0; i < s->shape.buckets; i++) {
        nidus_table_read_bucket(s, i, fps);
        for (unsigned k = 0; k < s->shape.bucket_size; k++) {
            if (!fps[k])
                continue;
            nidus_status st = nidus_table_add(t, a, i, fps[k]);
            if (st)
                return st;
        }
    }
    for (uint32_t e = 0; e < s->overflow.capacity; e++) {
        const nidus_overflow_entry *en = &s->overflow.entries[e];
        if (!en->count)
            continue;
        nidus_status st = add_copies(t, a, en->bucket, en->fingerprint, en->count);
        if (st)
            return st;
    }
    return NIDUS_OK;
}

nidus_status nidus_cuckoo_merge(nidus_cuckoo *dst, const nidus_cuckoo *src)
{
    if (!dst || !src)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_cuckoo_thawed wd, ws;
    const nidus_cuckoo *d = nidus_cuckoo_inspect(dst, &wd), *s = nidus_cuckoo_inspect(src, &ws);
    if (!nidus_cuckoo_writable(d))
        return NIDUS_ERR_READ_ONLY;
    if (s->loader)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_status st = compatible(dst, src);
    if (st)
        return st;
    if (s->ntables > d->max_tables)
        return NIDUS_ERR_LIMIT_TABLES;
    nidus_cuckoo *c = clone_full(d);
    if (!c)
        return NIDUS_ERR_NO_MEMORY;
    while (c->ntables < s->ntables && !st) /* the tables src has and dst lacks, as growth makes them */
        st = nidus_cuckoo_grow(c);
    for (unsigned k = 0; k < s->ntables && !st; k++) {
        if (!same_table_shape(&c->tables[k].shape, &s->tables[k].shape))
            st = NIDUS_ERR_INCOMPATIBLE; /* a table grown after a compaction may have more bits */
        else
            st = merge_table(&c->tables[k], &s->tables[k], c->alloc);
    }
    if (st) {
        nidus_full_free(c);
        return st;
    }
    nidus_cuckoo_redispatch(c);
    nidus_cuckoo_replace(dst, c);
    return NIDUS_OK;
}

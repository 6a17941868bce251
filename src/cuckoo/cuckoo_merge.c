/* SPDX-License-Identifier: BSD-3-Clause */
/* Merging one cuckoo filter into another: built aside on a copy of the destination, swapped in on success.
 *
 * Filters made with the same parameters place a key alike in tables of the same level: the same seed gives the
 * same hash, and the same first shape and expansion give every level the same shape. So a fingerprint in bucket
 * i of a source table of level l is the fingerprint its key would have in any destination table of level l, at
 * the same bucket pair: re-adding it there (nidus_table_add, which kicks and counts duplicates as an add does)
 * leaves counts and removes exactly as if the key had been added to the destination. A fingerprint cannot move
 * to a newer level (it lacks the bits that level's fingerprints need), so a source table that no destination
 * table of its level holds is copied whole beside them, as a sibling of that level: exact by construction, at
 * the cost of its memory and its error bound (cuckoo_filter.h).
 *
 * The source's copies go in by (pair, fingerprint) group, in two passes of adds: first each group up to its share
 * of the pair (bucket_size copies in the slots, or a stash entry), then the copies beyond it. An add lets a key
 * fill all 2b slots of a pair with room, so adding the source's copies bucket by bucket would let a duplicated key
 * take slots another group needs for its share; that group would then need a stash entry, and duplicates'
 * overflow entries count against the stash: NIDUS_ERR_FULL in a nearly empty table, where adding the same keys
 * one by one fits. Beyond its share a copy takes a free slot of its pair or joins the overflow map and never
 * needs a search, so the second pass cannot run out of room. The groups come in an order the tables' contents
 * fix (bucket scan in slot order, then the groups with no slot copy sorted), never the order in which a map
 * keeps its entries, so equal filters merge to equal bytes however their maps are laid out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cuckoo_dispatch.h" /* nidus_cuckoo_redispatch */

static bool same_table_shape(const nidus_table_shape *a, const nidus_table_shape *b)
{
    return a->buckets == b->buckets && a->bucket_size == b->bucket_size && a->fp_bits == b->fp_bits &&
           a->offset_bits == b->offset_bits && a->reach_log2 == b->reach_log2 && a->semi_sort == b->semi_sort &&
           a->mod_placement == b->mod_placement && (a->stride ? a->stride : 1) == (b->stride ? b->stride : 1);
}

/* The tables of `level` in cf: positions [*first, *end), empty when cf has no such level. */
static void level_range(const nidus_cuckoo *cf, unsigned level, unsigned *first, unsigned *end)
{
    unsigned k = 0;
    while (k < cf->ntables && cf->tables[k].shape.level < level)
        k++;
    *first = k;
    while (k < cf->ntables && cf->tables[k].shape.level == level)
        k++;
    *end = k;
}

static unsigned top_level(const nidus_cuckoo *cf) { return cf->tables[cf->ntables - 1].shape.level; }

/* Same seed, expansion and first shape, and every level both have of the same shape. */
static nidus_status compatible(const nidus_cuckoo *x, const nidus_cuckoo *y)
{
    if (x->seed != y->seed || x->expansion != y->expansion || !same_table_shape(&x->base, &y->base))
        return NIDUS_ERR_INCOMPATIBLE;
    for (unsigned k = 0; k < y->ntables; k++) {
        unsigned first, end;
        level_range(x, y->tables[k].shape.level, &first, &end);
        if (first < end && !same_table_shape(&x->tables[first].shape, &y->tables[k].shape))
            return NIDUS_ERR_INCOMPATIBLE;
    }
    return NIDUS_OK;
}

/* A writable copy of table s in t (same shape, slots and overflow entries); on failure t holds nothing. */
static nidus_status copy_table(nidus_table *t, const nidus_table *s, unsigned max_kicks, const nidus_allocator *a)
{
    nidus_status st = nidus_table_init(t, &s->shape, max_kicks, a);
    if (st)
        return st;
    memcpy(t->data, s->data, (size_t)nidus_table_bytes(s));
    t->occupied = s->occupied;
    for (uint32_t e = 0; e < s->overflow.capacity && !st; e++) {
        const nidus_overflow_entry *en = &s->overflow.entries[e];
        if (en->count)
            st = nidus_overflow_set(&t->overflow, a, en->bucket, en->fingerprint, en->count);
    }
    if (st) {
        nidus_table_release(t, a);
        return st;
    }
    nidus_table_overflow_changed(t);
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
        if (copy_table(&tables[k], &cf->tables[k], cf->max_kicks, a))
            goto fail;
        c->ntables++;
    }
    nidus_cuckoo_redispatch(c);
    return c;
fail:
    nidus_full_free(c);
    return NULL;
}

/* One table's merge: c (a scratch copy of a destination table of s's level) takes the copies of s; d is the table
 * c was copied from, unchanged (NULL: c started empty). */
typedef struct table_merge {
    nidus_table *c;
    const nidus_table *s, *d;
    const nidus_allocator *a;
    bool beyond_share; /* the second pass */
    bool deferred;     /* the first pass left copies beyond a share for the second */
} table_merge;

/* Joins `rest` more copies of fp to its entry for the pair lo, as that many adds would when the pair is full and
 * the entry exists (a search that failed fails again: nothing in the slots changed). */
static nidus_status join_overflow(nidus_table *t, const nidus_allocator *a, uint64_t lo, uint32_t fp, uint64_t rest)
{
    uint64_t over = nidus_table_overflow_count(t, lo, fp);
    if (rest > UINT64_MAX - over || rest > UINT64_MAX - t->overflow.total)
        return NIDUS_ERR_TOO_LARGE;
    nidus_status st = nidus_overflow_set(&t->overflow, a, lo, fp, over + rest);
    nidus_table_overflow_changed(t);
    return st;
}

/* Adds the source's `from_s` copies of fp in the pair of bucket lo to m->c: in the first pass while fp has fewer
 * than bucket_size copies in the pair's slots and no stash entry, in the second the copies the first left. Each
 * group comes once a pass, so in the first m->c still holds the destination's copies of it (kicks move copies,
 * never count them), and all of the source's are to add. */
static nidus_status merge_group(table_merge *m, uint64_t lo, uint32_t fp, uint64_t from_s)
{
    nidus_table *t = m->c;
    uint64_t hi = nidus_table_alt(t, lo, fp), rest = from_s;
    unsigned b = t->shape.bucket_size;
    unsigned slots = nidus_table_bucket_count(t, lo, fp) + nidus_table_bucket_count(t, hi, fp);
    if (m->beyond_share) {
        if (slots < b) /* never deferred: all its copies went in */
            return NIDUS_OK;
        uint64_t from_d = m->d ? nidus_table_count(m->d, lo, fp) : 0;
        if (rest > UINT64_MAX - from_d)
            return NIDUS_ERR_TOO_LARGE;
        rest = from_d + rest - nidus_table_count(t, lo, fp); /* what the first pass deferred */
        for (; rest; rest--) /* as adds of a key that fills its share: a free slot, else the overflow map */
            if (!nidus_table_place_free(t, lo, fp))
                return join_overflow(t, m->a, lo, fp, rest);
        return NIDUS_OK;
    }
    for (; rest; rest--, slots++) {
        if (slots >= b) {
            m->deferred = true;
            return NIDUS_OK;
        }
        uint64_t over = nidus_table_overflow_count(t, lo, fp);
        nidus_status st = nidus_table_add(t, m->a, lo, fp);
        if (st)
            return st;
        if (nidus_table_overflow_count(t, lo, fp) > over) /* the copy went to the stash: so do the others */
            return rest > 1 ? join_overflow(t, m->a, lo, fp, rest - 1) : NIDUS_OK;
    }
    return NIDUS_OK;
}

static int entry_order(const void *pa, const void *pb)
{
    const nidus_overflow_entry *a = pa, *b = pb;
    if (a->bucket != b->bucket)
        return a->bucket < b->bucket ? -1 : 1;
    return (a->fingerprint > b->fingerprint) - (a->fingerprint < b->fingerprint);
}

/* Is the overflow entry en of table s the only place its (pair, fingerprint) has copies? */
static bool no_slot_copy(const nidus_table *s, const nidus_overflow_entry *en)
{
    uint64_t lo = en->bucket, hi = nidus_table_alt(s, lo, en->fingerprint);
    return !nidus_table_bucket_count(s, lo, en->fingerprint) && !nidus_table_bucket_count(s, hi, en->fingerprint);
}

/* The groups of s met in none of its slots (stash entries whose pair holds no copy), sorted by (bucket,
 * fingerprint), in *out (NULL when there are none; the caller frees it). */
static nidus_status slotless_groups(const nidus_table *s, const nidus_allocator *a, nidus_overflow_entry **out,
                                    uint64_t *n)
{
    *out = NULL;
    *n = 0;
    const nidus_overflow *ov = &s->overflow;
    uint64_t count = 0;
    for (uint64_t e = 0; ov->used && e < ov->capacity; e++)
        count += ov->entries[e].count && no_slot_copy(s, &ov->entries[e]);
    if (!count)
        return NIDUS_OK;
    nidus_overflow_entry *list = nidus_calloc(a, (size_t)count, sizeof *list);
    if (!list)
        return NIDUS_ERR_NO_MEMORY;
    for (uint64_t e = 0; e < ov->capacity; e++)
        if (ov->entries[e].count && no_slot_copy(s, &ov->entries[e]))
            list[(*n)++] = ov->entries[e];
    qsort(list, (size_t)*n, sizeof *list, entry_order);
    *out = list;
    return NIDUS_OK;
}

/* One pass over every group of s: by bucket, each group at the first bucket holding it (in slot order, which is
 * part of the table's contents), then the slotless ones. */
static nidus_status merge_pass(table_merge *m, const nidus_overflow_entry *slotless, uint64_t nslotless)
{
    const nidus_table *s = m->s;
    unsigned b = s->shape.bucket_size;
    uint32_t fps[8];
    for (uint64_t i = 0; i < s->shape.buckets; i++) {
        nidus_table_read_bucket(s, i, fps);
        for (unsigned k = 0; k < b; k++) {
            uint32_t fp = fps[k];
            unsigned here = 0;
            bool first = true; /* a fingerprint's copies in bucket i are met at its first slot */
            for (unsigned x = 0; x < b; x++)
                if (fps[x] == fp) {
                    first &= x >= k;
                    here++;
                }
            if (!fp || !first)
                continue;
            uint64_t j = nidus_table_alt(s, i, fp), lo = i < j ? i : j;
            unsigned there = nidus_table_bucket_count(s, j, fp);
            if (j < i && there)
                continue; /* met at bucket j */
            uint64_t over = nidus_table_overflow_count(s, lo, fp);
            if (over > UINT64_MAX - 2u * b) /* plus the copies in the pair's slots */
                return NIDUS_ERR_TOO_LARGE;
            uint64_t from_s = here + there + over;
            nidus_status st = merge_group(m, lo, fp, from_s);
            if (st)
                return st;
        }
    }
    for (uint64_t e = 0; e < nslotless; e++) {
        nidus_status st = merge_group(m, slotless[e].bucket, slotless[e].fingerprint, slotless[e].count);
        if (st)
            return st;
    }
    return NIDUS_OK;
}

/* Adds every fingerprint of table s (slots and overflow entries) to table c of the same shape; d is the table c
 * was copied from, unchanged (NULL when c started empty). */
static nidus_status merge_table(nidus_table *c, const nidus_table *s, const nidus_table *d, const nidus_allocator *a)
{
    nidus_overflow_entry *slotless;
    uint64_t nslotless;
    nidus_status st = slotless_groups(s, a, &slotless, &nslotless);
    if (st)
        return st;
    table_merge m = {c, s, d, a, false, false};
    st = merge_pass(&m, slotless, nslotless);
    if (!st && m.deferred) {
        m.beyond_share = true;
        st = merge_pass(&m, slotless, nslotless);
    }
    nidus_free(a, slotless);
    return st;
}

/* Table s as a new sibling at position `at` of c (after the last table of its level), if max_tables and
 * max_memory allow it: its cost is counted as growth counts a new table's, before anything is allocated. */
static nidus_status add_sibling(nidus_cuckoo *c, unsigned at, const nidus_table *s)
{
    if (c->ntables >= c->max_tables)
        return NIDUS_ERR_LIMIT_TABLES;
    if (!nidus_cuckoo_fits(c->max_memory, nidus_cuckoo_tables_memory(c), nidus_cuckoo_table_cost(&s->shape)))
        return NIDUS_ERR_LIMIT_MEMORY;
    nidus_table copy;
    nidus_status st = copy_table(&copy, s, c->max_kicks, c->alloc);
    if (st)
        return st;
    nidus_table *tables = nidus_realloc(c->alloc, c->tables, ((size_t)c->ntables + 1) * sizeof *tables);
    if (!tables) {
        nidus_table_release(&copy, c->alloc);
        return NIDUS_ERR_NO_MEMORY;
    }
    c->tables = tables;
    memmove(&tables[at + 1], &tables[at], (size_t)(c->ntables - at) * sizeof *tables);
    tables[at] = copy;
    c->ntables++;
    return NIDUS_OK;
}

/* Merges table s into the first table of its level in c that holds all of it (each tried on a scratch copy, so a
 * table that fills up midway is left as it was; an empty one simply becomes a copy), else adds s as a sibling.
 * Every table is tried, however full: copies beyond a pair's share need no slot (duplicates join the overflow
 * map), so free slots do not say whether s fits, and a full table fails its first add that finds no room. */
static nidus_status merge_into_level(nidus_cuckoo *c, const nidus_table *s)
{
    unsigned first, end;
    level_range(c, s->shape.level, &first, &end);
    for (unsigned k = first; k < end; k++) {
        nidus_table *t = &c->tables[k], scratch;
        bool empty = nidus_table_items(t) == 0;
        nidus_status st = copy_table(&scratch, empty ? s : t, c->max_kicks, c->alloc);
        if (st)
            return st;
        if (!empty && (st = merge_table(&scratch, s, t, c->alloc))) { /* t: what scratch was copied from */
            nidus_table_release(&scratch, c->alloc);
            if (st != NIDUS_ERR_FULL)
                return st;
            continue;
        }
        nidus_table_release(t, c->alloc);
        *t = scratch;
        return NIDUS_OK;
    }
    if (c->expansion == 0) /* a filter that never grows gets no more tables */
        return NIDUS_ERR_FULL;
    return add_sibling(c, end, s);
}

nidus_status nidus_full_merge(const nidus_cuckoo *d, const nidus_cuckoo *s, nidus_cuckoo **out)
{
    if (!nidus_cuckoo_writable(d))
        return NIDUS_ERR_READ_ONLY;
    if (s->loader)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_status st = compatible(d, s);
    if (st)
        return st;
    if (top_level(s) >= d->max_tables)
        return NIDUS_ERR_LIMIT_TABLES;
    nidus_cuckoo *c = clone_full(d);
    if (!c)
        return NIDUS_ERR_NO_MEMORY;
    while (top_level(c) < top_level(s) && !st) /* the levels src has and dst lacks, as growth makes them */
        st = nidus_cuckoo_grow(c);
    for (unsigned k = 0; k < s->ntables && !st; k++) {
        unsigned first, end;
        level_range(c, s->tables[k].shape.level, &first, &end);
        if (!same_table_shape(&c->tables[first].shape, &s->tables[k].shape))
            st = NIDUS_ERR_INCOMPATIBLE; /* a level grown after a compaction may have more bits */
        else
            st = merge_into_level(c, &s->tables[k]);
    }
    if (!st && nidus_cuckoo_items(c) > NIDUS_TABLE_MAX_ITEMS)
        st = NIDUS_ERR_TOO_LARGE; /* the union would not load again */
    if (st) {
        nidus_full_free(c);
        return st;
    }
    nidus_cuckoo_redispatch(c);
    *out = c;
    return NIDUS_OK;
}

size_t nidus_full_merge_difference(const nidus_cuckoo *d, const nidus_cuckoo *s, char *buf, size_t cap)
{
    nidus_cuckoo_stats x, y;
    nidus_full_get_stats(d, &x);
    nidus_full_get_stats(s, &y);
    int n = 0;
    if (d->seed != s->seed)
        n = snprintf(buf, cap, "another hash seed");
    else if (x.bucket_size != y.bucket_size)
        n = snprintf(buf, cap, "bucket size %u, not %u", y.bucket_size, x.bucket_size);
    else if (x.fingerprint_bits != y.fingerprint_bits)
        n = snprintf(buf, cap, "fingerprint bits %u, not %u", y.fingerprint_bits, x.fingerprint_bits);
    else if (x.semi_sort != y.semi_sort)
        n = snprintf(buf, cap, "semi-sorting %s, not %s", y.semi_sort ? "on" : "off", x.semi_sort ? "on" : "off");
    else if (x.buckets != y.buckets)
        n = snprintf(buf, cap, "capacity: a first sub-filter of %llu buckets, not %llu", (unsigned long long)y.buckets,
                     (unsigned long long)x.buckets);
    else if (x.expansion != y.expansion)
        n = snprintf(buf, cap, "expansion %u, not %u", y.expansion, x.expansion);
    else if (compatible(d, s)) /* the stats match, the tables' shapes do not */
        n = snprintf(buf, cap, "placement (written by another format version) or sub-filters of other shapes");
    else if (cap)
        buf[0] = '\0';
    return n > 0 ? (size_t)n : 0;
}

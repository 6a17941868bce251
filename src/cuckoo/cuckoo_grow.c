/* SPDX-License-Identifier: BSD-3-Clause */
/* Growth and compaction of a cuckoo filter: the shape of each new table, and moving fingerprints back down. */
#include <math.h>

#include "alloc.h"
#include "cuckoo_dispatch.h"
#include "params.h"

/* Table 0 keeps its own bound; table k >= 1 gets bound(0) * c / (k+1)^2 with c = 1 / (pi^2/6 - 1), so the
 * tables after the first add at most c * (pi^2/6 - 1) = 1 times bound(0), whatever their number. A quadratic
 * budget costs 2 log2(k+1) + 1 extra bits at table k, fewer than a geometric one (k extra bits) from the
 * fifth table on, and the tables late in the list are the large ones. */
double nidus_cuckoo_table_budget(double base_bound, unsigned k)
{
    if (k == 0)
        return base_bound;
    const double c = 1.0 / (1.6449340668482264 - 1.0); /* pi^2/6 = sum of 1/n^2 */
    return base_bound * c / ((double)(k + 1) * (double)(k + 1));
}

nidus_status nidus_cuckoo_next_shape(const nidus_cuckoo *cf, unsigned level, nidus_table_shape *out)
{
    const nidus_table_shape *newest = &cf->tables[cf->ntables - 1].shape;
    nidus_table_shape s = cf->base;
    unsigned b = s.bucket_size;
    if (level > UINT8_MAX)
        return NIDUS_ERR_LIMIT_TABLES;
    double budget = nidus_cuckoo_table_budget(nidus_cuckoo_error_bound(b, cf->base.fp_bits), level);
    /* Never fewer bits than the newest table: after a compaction frees tables, the level is lower than the
     * newest table's once was, and its budget alone could give fewer bits. Compaction moves fingerprints only
     * into tables with no more bits than they have (a truncation), so fewer bits here would strand them. */
    unsigned f = newest->fp_bits > cf->base.fp_bits ? newest->fp_bits : cf->base.fp_bits;
    while (f <= NIDUS_CUCKOO_MAX_FINGERPRINT_BITS && nidus_cuckoo_error_bound(b, f) > budget)
        f++;
    if (f > NIDUS_CUCKOO_MAX_FINGERPRINT_BITS)
        return NIDUS_ERR_LIMIT_TABLES;
    if (newest->buckets > UINT64_MAX / cf->expansion)
        return NIDUS_ERR_TOO_LARGE;
    s.buckets = newest->buckets * cf->expansion;
    s.stride = s.buckets / cf->base.buckets; /* the first table's size divides every later one's */
    s.fp_bits = f;
    s.level = (uint8_t)level;
    *out = s;
    return nidus_table_check_shape(&s);
}

uint64_t nidus_cuckoo_table_cost(const nidus_table_shape *shape)
{
    return nidus_table_data_bytes(shape);
}

bool nidus_cuckoo_fits(uint64_t max_memory, uint64_t held, uint64_t need)
{
    return max_memory == 0 || (held <= max_memory && need <= max_memory - held);
}

nidus_status nidus_cuckoo_grow(nidus_cuckoo *cf)
{
    if (cf->ntables >= cf->max_tables)
        return NIDUS_ERR_LIMIT_TABLES;
    nidus_table_shape shape;
    /* the level after the newest table's: its siblings (merges make them) do not count as steps of growth */
    nidus_status st = nidus_cuckoo_next_shape(cf, cf->tables[cf->ntables - 1].shape.level + 1u, &shape);
    if (st)
        return st;
    uint64_t need = nidus_cuckoo_table_cost(&shape);
    if (!nidus_cuckoo_fits(cf->max_memory, nidus_cuckoo_tables_memory(cf), need))
        return NIDUS_ERR_LIMIT_MEMORY;
    nidus_table *tables = nidus_realloc(cf->alloc, cf->tables, (cf->ntables + 1) * sizeof *tables);
    if (!tables)
        return NIDUS_ERR_NO_MEMORY;
    cf->tables = tables;
    st = nidus_table_init(&tables[cf->ntables], &shape, cf->max_kicks, cf->alloc);
    if (st)
        return st;
    cf->ntables++;
    nidus_cuckoo_redispatch(cf);
    return NIDUS_OK;
}

/* Moves what it can of bucket i of table k into free slots of tables 0..k-1. A fingerprint in bucket i of table
 * k reduces to bucket floor(i / (m_k / m_j)) of table j under range placement (i mod m_j under mod placement;
 * m_j divides m_k, and the pair of buckets reduces with it: cuckoo_table_impl.h) and to its low f_j bits (0
 * read as 1, as nidus_inline_cuckoo_fingerprint does). Copies of a (pair, fingerprint) with overflow copies stay:
 * a duplicate's overflow count is only meaningful beside at least bucket_size copies in the slots. A slot freed
 * takes back a stash entry of its bucket (so stash entries move down as their pairs make room; the entries
 * themselves stay in their table, which is then not freed). Each fingerprint moves in one step (placed, then
 * taken): at no point is it in neither table, and a count sees it once. Returns the bucket pairs it tried. */
static uint64_t compact_bucket(nidus_cuckoo *cf, unsigned k, uint64_t i)
{
    uint64_t tries = 0;
    nidus_table *t = &cf->tables[k];
    uint32_t fps[8];
    nidus_table_read_bucket(t, i, fps);
    for (unsigned s = 0; s < t->shape.bucket_size; s++) {
        uint32_t fp = fps[s];
        if (!fp || nidus_table_overflow_count(t, i, fp))
            continue;
        for (unsigned j = 0; j < k; j++) {
            nidus_table *older = &cf->tables[j];
            /* Only a truncation is exact: an older table with more bits (a filter grown again after a
             * compaction by code before that was prevented) cannot rebuild the bits this one lacks. */
            if (older->shape.fp_bits > t->shape.fp_bits)
                continue;
            uint64_t to = t->shape.mod_placement ? nidus_fastmod_reduce(&older->bucket_mod, i)
                                                 : i / (t->shape.buckets / older->shape.buckets);
            tries++;
            if (nidus_table_place_free(older, to, nidus_inline_cuckoo_fingerprint(fp, older->fp_mask))) {
                nidus_table_take(t, i, fp);
                nidus_table_stash_refill(t, i); /* a stash entry's pair stays full */
                break;
            }
        }
    }
    return tries;
}

/* Frees the tables left empty; the first stays, as the filter's base. A freed table that was the only one of its
 * level takes that step out of the growth: the levels after it close up (each one less), so levels stay 0, 1,
 * ... with siblings repeating one, and a filter without siblings keeps level == position. Ends the compaction. */
static void compact_finish(nidus_cuckoo *cf, unsigned *freed)
{
    unsigned kept = 1, dropped = 0;
    for (unsigned k = 1; k < cf->ntables; k++) {
        nidus_table *t = &cf->tables[k];
        unsigned level = t->shape.level - dropped;
        if (nidus_table_items(t) == 0) {
            bool alone = cf->tables[kept - 1].shape.level != level &&
                         (k + 1 == cf->ntables || cf->tables[k + 1].shape.level != t->shape.level);
            nidus_table_release(t, cf->alloc);
            dropped += alone;
            if (freed)
                ++*freed;
        } else {
            t->shape.level = (uint8_t)level;
            cf->tables[kept++] = *t;
        }
    }
    cf->ntables = kept;
    cf->deleted = 0;
    cf->compact_table = 0;
    cf->compact_bucket = 0;
    nidus_cuckoo_redispatch(cf); /* fewer tables, and stash entries may have moved into freed slots */
}

/* Spends at most `budget` units of work from the cursor, from the newest table down to table 1, bucket 0 up;
 * past table 1 the compaction ends. A unit is a bucket read, a table passed (or left once it holds nothing),
 * or a fingerprint's try at a bucket pair of an older table (the random access that costs); the last bucket
 * may take the budget past its end, by at most bucket_size * (tables - 1) tries. The order is the all-at-once
 * compaction's, so the same steps with no write between them leave the same bytes. */
static bool compact_advance(nidus_cuckoo *cf, uint64_t budget, unsigned *freed)
{
    unsigned k = cf->compact_table;
    uint64_t i = cf->compact_bucket;
    if (k >= cf->ntables) { /* tables went (a clear resets the cursor; nothing else drops them): start over */
        k = cf->ntables - 1u;
        i = 0;
    }
    while (budget && k >= 1) {
        nidus_table *t = &cf->tables[k];
        uint64_t cost = 1;
        if (i >= t->shape.buckets || !t->occupied) {
            k--;
            i = 0;
        } else {
            cost += compact_bucket(cf, k, i++);
        }
        budget = budget > cost ? budget - cost : 0;
    }
    cf->compact_table = (uint8_t)k;
    cf->compact_bucket = i;
    if (k >= 1)
        return false;
    compact_finish(cf, freed);
    return true;
}

nidus_status nidus_full_compact(nidus_cuckoo *cf, unsigned *freed)
{
    if (freed)
        *freed = 0;
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    cf->compact_table = (uint8_t)(cf->ntables - 1u);
    cf->compact_bucket = 0;
    compact_advance(cf, UINT64_MAX, freed);
    return NIDUS_OK;
}

nidus_status nidus_full_compact_begin(nidus_cuckoo *cf)
{
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    if (cf->compact_table)
        return NIDUS_OK;
    if (cf->ntables == 1) { /* nothing to move: what a compaction would do is reset the count of removes */
        cf->deleted = 0;
        return NIDUS_OK;
    }
    cf->compact_table = (uint8_t)(cf->ntables - 1u);
    cf->compact_bucket = 0;
    return NIDUS_OK;
}

nidus_status nidus_full_compact_step(nidus_cuckoo *cf, uint64_t budget, bool *done)
{
    *done = true;
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    if (cf->compact_table)
        *done = compact_advance(cf, budget, NULL);
    return NIDUS_OK;
}

nidus_status nidus_full_compact_resume(nidus_cuckoo *cf, const nidus_cuckoo_compaction *at)
{
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    if (at->table == 0 || at->table >= cf->ntables || at->bucket > cf->tables[at->table].shape.buckets)
        return NIDUS_ERR_INVALID_ARGUMENT;
    cf->compact_table = (uint8_t)at->table;
    cf->compact_bucket = at->bucket;
    return NIDUS_OK;
}

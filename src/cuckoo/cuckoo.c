/* SPDX-License-Identifier: BSD-3-Clause */
/* The full form of a cuckoo filter (cuckoo_filter.h): creation, then hashing once and the tables from the newest
 * to the oldest; its kernels per instruction set (cuckoo_kernels.h). cuckoo_dispatch.c chooses among them. */
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "cuckoo_dispatch.h"
#include "cuckoo_kernels.h"
#include "file_io.h"
#include "params.h"
#include "semisort.h"

nidus_status nidus_cuckoo_check_limits(unsigned expansion, unsigned max_tables, unsigned max_kicks)
{
    if (expansion > NIDUS_CUCKOO_MAX_EXPANSION || max_tables < 1 || max_tables > NIDUS_CUCKOO_MAX_TABLES ||
        max_kicks < 1 || max_kicks > NIDUS_CUCKOO_MAX_KICKS)
        return NIDUS_ERR_INVALID_ARGUMENT;
    return NIDUS_OK;
}

/* What the filter's state calls for: its tag and, from table 0, the rest of the published view (the allocator,
 * seed and hash8_flip, which never change, are left out). */
static void fresh_view(const nidus_cuckoo *cf, struct nidus_cuckoo_view *v)
{
    memset(v, 0, sizeof *v);
    v->tag = NIDUS_CUCKOO_TAG(nidus_cuckoo_derive_dispatch(cf), NIDUS_CUCKOO_VIEW_VERSION);
    if (!cf->tables || !cf->ntables)
        return;
    nidus_table *t = &cf->tables[0];
    const nidus_swar *sw = t->shape.semi_sort ? &t->semi_swar : &t->chunk_swar[0];
    v->fp_bits = t->shape.fp_bits;
    v->bucket_size = t->shape.bucket_size;
    v->bucket_bytes = t->bucket_bytes;
    v->offset_shift = t->offset_shift;
    v->data = t->data;
    v->buckets = t->shape.buckets;
    v->xor_limit = t->xor_limit;
    v->occupied = &t->occupied;
    v->ones = sw->ones;
    v->high = sw->high;
    v->semi_unrank = nidus_semisort_unrank;
    v->semi_rank_part = &nidus_semisort_rank_part[0][0];
    v->fp_mask = t->fp_mask;
}

void nidus_cuckoo_redispatch(nidus_cuckoo *cf)
{
    struct nidus_cuckoo_view v;
    fresh_view(cf, &v);
    cf->tag = v.tag;
    cf->view_fp_bits = v.fp_bits;
    cf->view_bucket_size = v.bucket_size;
    cf->view_bucket_bytes = v.bucket_bytes;
    cf->view_offset_shift = v.offset_shift;
    cf->view_data = v.data;
    cf->view_buckets = v.buckets;
    cf->view_xor_limit = v.xor_limit;
    cf->view_occupied = v.occupied;
    cf->view_ones = v.ones;
    cf->view_high = v.high;
    cf->view_semi_unrank = v.semi_unrank;
    cf->view_semi_rank_part = v.semi_rank_part;
    cf->view_fp_mask = v.fp_mask;
}

bool nidus_full_dispatch_fresh(const nidus_cuckoo *h)
{
    struct nidus_cuckoo_view v;
    fresh_view(h, &v);
    const struct nidus_cuckoo_view *now = nidus_cuckoo_view_of(h);
    if (now->tag != v.tag)
        return false;
    uint32_t state = nidus_cuckoo_view_state(&v);
    if (state != NIDUS_CUCKOO_TAG_PLAIN && state != NIDUS_CUCKOO_TAG_SEMI && state != NIDUS_CUCKOO_TAG_BITS)
        return true; /* the inline path reads nothing else */
    if (state == NIDUS_CUCKOO_TAG_BITS && (unsigned)v.bucket_size * v.fp_bits != h->tables[0].bucket_bits)
        return false; /* its buckets are b * f bits */
    return now->fp_bits == v.fp_bits && now->bucket_size == v.bucket_size && now->bucket_bytes == v.bucket_bytes &&
           now->offset_shift == v.offset_shift && now->seed == h->seed &&
           now->hash8_flip == nidus_hash8_flip(h->seed) && now->data == v.data && now->buckets == v.buckets &&
           now->xor_limit == v.xor_limit && now->occupied == v.occupied && now->ones == v.ones &&
           now->high == v.high && now->semi_unrank == v.semi_unrank && now->semi_rank_part == v.semi_rank_part &&
           now->fp_mask == v.fp_mask;
}

nidus_status nidus_cuckoo_new(const nidus_cuckoo_params *params, nidus_cuckoo **out)
{
    if (!params || !out)
        return NIDUS_ERR_INVALID_ARGUMENT;
    nidus_cuckoo_plan plan;
    nidus_table_shape shape;
    unsigned max_kicks;
    nidus_status st = nidus_cuckoo_resolve(params, &plan, &shape, &max_kicks);
    if (st)
        return st;
    unsigned max_tables = params->max_tables ? params->max_tables : NIDUS_CUCKOO_DEFAULT_MAX_TABLES;
    st = nidus_cuckoo_check_limits(params->expansion, max_tables, max_kicks);
    if (st)
        return st;
    if (!nidus_cuckoo_fits(params->max_memory, 0, nidus_cuckoo_table_cost(&shape)))
        return NIDUS_ERR_LIMIT_MEMORY;
    const nidus_allocator *alloc = nidus_alloc_pick(params->allocator);
    if (nidus_cuckoo_packable_shape(&shape))
        return nidus_cuckoo_packed_new(alloc, &shape, params->seed, max_kicks, params->expansion, max_tables,
                                       params->max_memory, out);
    nidus_cuckoo *cf = nidus_calloc(alloc, 1, sizeof *cf);
    if (!cf)
        return NIDUS_ERR_NO_MEMORY;
    *cf = (nidus_cuckoo){
        .alloc = alloc,
        .seed = params->seed,
        .hash8_flip = nidus_hash8_flip(params->seed),
        .base = shape,
        .max_kicks = max_kicks,
        .expansion = params->expansion,
        .max_tables = max_tables,
        .max_memory = params->max_memory,
    };
    cf->tables = nidus_malloc(alloc, sizeof *cf->tables);
    st = cf->tables ? nidus_table_init(&cf->tables[0], &shape, max_kicks, alloc)
                    : NIDUS_ERR_NO_MEMORY;
    if (st) {
        nidus_free(alloc, cf->tables);
        nidus_free(alloc, cf);
        return st;
    }
    cf->ntables = 1;
    nidus_cuckoo_redispatch(cf);
    *out = cf;
    return NIDUS_OK;
}

void nidus_full_free(nidus_cuckoo *cf)
{
    const nidus_allocator *alloc = cf->alloc;
    for (unsigned k = 0; k < cf->ntables; k++)
        nidus_table_release(&cf->tables[k], alloc);
    nidus_free(alloc, cf->tables);
    nidus_cuckoo_loader_free(cf);
    nidus_mapping_release(cf->mapping, alloc);
    nidus_free(alloc, cf);
}

/* Every bucket pair of the key is full: make room in the newest table, or grow. Out of line, so that the common
 * add needs no stack frame for it. The overflow map may gain an entry, or the filter a table: redispatch. */
__attribute__((noinline)) nidus_status nidus_full_add_slow(nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t i;
    uint32_t fp;
    nidus_table *newest = &cf->tables[cf->ntables - 1];
    nidus_table_locate(newest, hash, &i, &fp);
    nidus_status st = nidus_table_add_full(newest, cf->alloc, i, fp);
    if (st == NIDUS_ERR_FULL && cf->expansion != 0 && !(st = nidus_cuckoo_grow(cf))) {
        newest = &cf->tables[cf->ntables - 1];
        nidus_table_locate(newest, hash, &i, &fp);
        st = nidus_table_add(newest, cf->alloc, i, fp); /* an empty table: a free slot */
    }
    nidus_cuckoo_redispatch(cf);
    return st;
}

/* Any filter: a free slot in any table, from the newest, else nidus_full_add_slow. */
nidus_status nidus_full_add_hash(nidus_cuckoo *cf, uint64_t hash)
{
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    for (unsigned k = cf->ntables; k-- > 0;) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&cf->tables[k], hash, &i, &fp);
        if (nidus_table_place_free(&cf->tables[k], i, fp))
            return NIDUS_OK;
    }
    return nidus_full_add_slow(cf, hash);
}

nidus_status nidus_full_add_key(nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_full_add_hash(cf, nidus_hash_bytes(key, len, cf->seed));
}

nidus_status nidus_full_add_unique_hash(nidus_cuckoo *cf, uint64_t hash, bool *added)
{
    *added = false;
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    if (nidus_full_contains_hash(cf, hash))
        return NIDUS_OK;
    nidus_status st = nidus_full_add_hash(cf, hash);
    *added = st == NIDUS_OK;
    return st;
}

bool nidus_full_contains_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    return nidus_kernel_contains_hash_base(cf, hash);
}

uint64_t nidus_full_count_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    return nidus_kernel_count_hash_base(cf, hash);
}

uint64_t nidus_cuckoo_items(const nidus_cuckoo *cf)
{
    uint64_t n = 0;
    for (unsigned k = 0; k < cf->ntables; k++)
        n = nidus_add_sat(n, nidus_table_items(&cf->tables[k]));
    return n;
}

/* A remove may take an overflow entry or move a stash entry into the freed slot: redispatch. */
nidus_status nidus_full_remove_hash(nidus_cuckoo *cf, uint64_t hash)
{
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    for (unsigned k = cf->ntables; k-- > 0;) {
        uint64_t i;
        uint32_t fp;
        nidus_table_locate(&cf->tables[k], hash, &i, &fp);
        if (nidus_table_remove(&cf->tables[k], i, fp)) {
            cf->deleted++;
            /* As RedisBloom: once removes pass a tenth of the items, try to give back whole tables. The
             * compaction only starts here; nidus_cuckoo_compact_step advances it (bounded work a call). */
            if (cf->ntables > 1 && !cf->compact_table && (double)cf->deleted > 0.10 * (double)nidus_cuckoo_items(cf))
                (void)nidus_full_compact_begin(cf); /* writable: checked above */
            nidus_cuckoo_redispatch(cf);
            return NIDUS_OK;
        }
    }
    return NIDUS_ERR_NOT_FOUND;
}

nidus_status nidus_full_clear(nidus_cuckoo *cf)
{
    if (!nidus_cuckoo_writable(cf))
        return NIDUS_ERR_READ_ONLY;
    while (cf->ntables > 1)
        nidus_table_release(&cf->tables[--cf->ntables], cf->alloc);
    nidus_table_clear(&cf->tables[0]);
    cf->deleted = 0;
    cf->compact_table = 0; /* no compaction left to run */
    cf->compact_bucket = 0;
    nidus_cuckoo_redispatch(cf);
    return NIDUS_OK;
}

uint64_t nidus_cuckoo_tables_memory(const nidus_cuckoo *cf)
{
    uint64_t n = 0;
    for (unsigned k = 0; k < cf->ntables; k++)
        n += nidus_table_memory(&cf->tables[k]);
    return n;
}

void nidus_full_get_stats(const nidus_cuckoo *cf, nidus_cuckoo_stats *s)
{
    const nidus_table *t0 = &cf->tables[0];
    uint64_t items = 0, overflow = 0, occupied = 0, slots = 0;
    double bound = 0.0;
    for (unsigned k = 0; k < cf->ntables; k++) {
        const nidus_table *t = &cf->tables[k];
        items += nidus_table_items(t);
        overflow += t->overflow.total;
        occupied += t->occupied;
        slots += t->shape.buckets * t->shape.bucket_size;
        bound += nidus_cuckoo_error_bound(t->shape.bucket_size, t->shape.fp_bits);
    }
    uint64_t memory = sizeof *cf + cf->ntables * sizeof *cf->tables + nidus_cuckoo_tables_memory(cf);
    uint64_t capacity = 0; /* what each table was sized to hold */
    for (unsigned k = 0; k < cf->ntables; k++)
        capacity += nidus_cuckoo_capacity_of(&cf->tables[k].shape, cf->max_kicks);
    *s = (nidus_cuckoo_stats){
        .items = items,
        .overflow_items = overflow,
        .buckets = t0->shape.buckets,
        .slots = t0->shape.buckets * t0->shape.bucket_size,
        .bucket_size = t0->shape.bucket_size,
        .fingerprint_bits = t0->shape.fp_bits,
        .max_kicks = cf->max_kicks,
        .semi_sort = t0->shape.semi_sort,
        .load = (double)occupied / (double)slots,
        .memory_bytes = memory,
        .capacity = capacity,
        .bits_per_item = (double)memory * 8.0 / (double)(capacity ? capacity : 1),
        .error_bound = bound < 1.0 ? bound : 1.0,
        .target_error = nidus_cuckoo_error_bound(cf->base.bucket_size, cf->base.fp_bits),
        .tables = cf->ntables,
        .expansion = cf->expansion,
        .max_tables = cf->max_tables,
        .max_memory = cf->max_memory,
        .total_slots = slots,
        .items_deleted = cf->deleted,
    };
}

nidus_status nidus_full_get_table_stats(const nidus_cuckoo *cf, unsigned index, nidus_cuckoo_table_stats *s)
{
    if (index >= cf->ntables || !s)
        return NIDUS_ERR_INVALID_ARGUMENT;
    const nidus_table *t = &cf->tables[index];
    *s = (nidus_cuckoo_table_stats){
        .buckets = t->shape.buckets,
        .items = nidus_table_items(t),
        .fingerprint_bits = t->shape.fp_bits,
        .load = (double)t->occupied / (double)(t->shape.buckets * t->shape.bucket_size),
        .error_bound = nidus_cuckoo_error_bound(t->shape.bucket_size, t->shape.fp_bits),
        .memory_bytes = nidus_table_memory(t),
        .level = t->shape.level,
    };
    return NIDUS_OK;
}

/* The public cuckoo filter: a key-hashing face over one cuckoo table. */
#include "alloc.h"
#include "cuckoo_table_impl.h"
#include "cuckoo_filter.h"
#include "params.h"

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
    nidus_allocator alloc;
    nidus_alloc_resolve(params->allocator, &alloc);
    nidus_cuckoo *cf = nidus_malloc(&alloc, sizeof *cf);
    if (!cf)
        return NIDUS_ERR_NO_MEMORY;
    cf->alloc = alloc;
    cf->seed = params->seed;
    st = nidus_table_init(&cf->table, &shape, max_kicks, params->seed, &cf->alloc);
    if (st) {
        nidus_free(&alloc, cf);
        return st;
    }
    *out = cf;
    return NIDUS_OK;
}

void nidus_cuckoo_free(nidus_cuckoo *cf)
{
    if (!cf)
        return;
    nidus_allocator alloc = cf->alloc;
    nidus_table_release(&cf->table, &alloc);
    nidus_free(&alloc, cf);
}

uint64_t nidus_cuckoo_hash(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_hash_bytes(key, len, cf->seed);
}

nidus_status nidus_cuckoo_add_hash(nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t i;
    uint32_t fp;
    nidus_table_locate(&cf->table, hash, &i, &fp);
    return nidus_table_add(&cf->table, &cf->alloc, i, fp);
}

nidus_status nidus_cuckoo_add(nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_add_hash(cf, nidus_cuckoo_hash(cf, key, len));
}

nidus_status nidus_cuckoo_add_unique_hash(nidus_cuckoo *cf, uint64_t hash, bool *added)
{
    bool dummy;
    if (!added)
        added = &dummy;
    *added = false;
    if (nidus_cuckoo_contains_hash(cf, hash))
        return NIDUS_OK;
    nidus_status st = nidus_cuckoo_add_hash(cf, hash);
    *added = st == NIDUS_OK;
    return st;
}

nidus_status nidus_cuckoo_add_unique(nidus_cuckoo *cf, const void *key, size_t len, bool *added)
{
    return nidus_cuckoo_add_unique_hash(cf, nidus_cuckoo_hash(cf, key, len), added);
}

bool nidus_cuckoo_contains_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t i;
    uint32_t fp;
    nidus_table_locate(&cf->table, hash, &i, &fp);
    return nidus_table_contains(&cf->table, i, nidus_table_alt(&cf->table, i, fp), fp);
}

bool nidus_cuckoo_contains(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_contains_hash(cf, nidus_cuckoo_hash(cf, key, len));
}

nidus_status nidus_cuckoo_remove_hash(nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t i;
    uint32_t fp;
    nidus_table_locate(&cf->table, hash, &i, &fp);
    return nidus_table_remove(&cf->table, i, fp) ? NIDUS_OK : NIDUS_ERR_NOT_FOUND;
}

nidus_status nidus_cuckoo_remove(nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_remove_hash(cf, nidus_cuckoo_hash(cf, key, len));
}

uint64_t nidus_cuckoo_count_hash(const nidus_cuckoo *cf, uint64_t hash)
{
    uint64_t i;
    uint32_t fp;
    nidus_table_locate(&cf->table, hash, &i, &fp);
    return nidus_table_count(&cf->table, i, fp);
}

uint64_t nidus_cuckoo_count(const nidus_cuckoo *cf, const void *key, size_t len)
{
    return nidus_cuckoo_count_hash(cf, nidus_cuckoo_hash(cf, key, len));
}

void nidus_cuckoo_clear(nidus_cuckoo *cf) { nidus_table_clear(&cf->table); }

void nidus_cuckoo_get_stats(const nidus_cuckoo *cf, nidus_cuckoo_stats *s)
{
    const nidus_table *t = &cf->table;
    uint64_t items = nidus_table_items(t);
    uint64_t memory = sizeof *cf + nidus_table_memory(t);
    *s = (nidus_cuckoo_stats){
        .items = items,
        .overflow_items = t->overflow.total,
        .buckets = t->shape.buckets,
        .slots = t->shape.buckets * t->shape.bucket_size,
        .bucket_size = t->shape.bucket_size,
        .fingerprint_bits = t->shape.fp_bits,
        .max_kicks = t->max_kicks,
        .semi_sort = t->shape.semi_sort,
        .load = (double)t->occupied / (double)(t->shape.buckets * t->shape.bucket_size),
        .memory_bytes = memory,
        .bits_per_item = items ? (double)memory * 8.0 / (double)items : 0.0,
        .error_bound = nidus_cuckoo_error_bound(t->shape.bucket_size, t->shape.fp_bits),
    };
}
